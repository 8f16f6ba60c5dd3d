/* ir_build.h: a module assembled from parts, for readers of forms other
 * than HLO text (proto.c).  Private to src/ir/.
 *
 * The parser reads the pieces a reader has as text (the module header, and
 * each instruction's shape, opcode, literal and attributes), while the
 * reader gives what it already knows as structure: names, the order of the
 * instructions, and their operands (instr->operands[k], set by the reader
 * after ir_build_instr and before ir_build_end_computation).
 *
 * Errors go to the Error given to ir_build_begin, at a line and column of
 * the snippet being read; the reader moves them to where the snippet came
 * from.  After a failure only ir_build_abandon may be called. */
#ifndef HLOCHECK_IR_BUILD_H
#define HLOCHECK_IR_BUILD_H

#include "ir.h"

typedef struct IrBuilder IrBuilder;

/* A new module with the header (HloModule ... and the stack frame tables)
 * read from text; NULL on error. */
IrBuilder *ir_build_begin(const char *header, size_t len, const char *filename, Error *err);
IrModule *ir_build_module(const IrBuilder *b);
/* A computation to give instructions to; it joins the module at
 * ir_build_end_computation.  execution_thread: NULL, or its text (a
 * quoted string). */
IrComputation *ir_build_computation(IrBuilder *b, const char *name, bool is_entry, const char *execution_thread,
                                    IrLoc loc);
/* A shape read from text, in the module's arena; NULL on error. */
IrShape *ir_build_shape(IrBuilder *b, const char *text, size_t len);
/* Appends an instruction of the given shape read from text = opcode "("
 * [literal or parameter number] ")" attributes (shape NULL: the text
 * starts with it), with n_operands operand slots. */
IrInstr *ir_build_instr(IrBuilder *b, IrComputation *comp, const char *name, IrLoc loc, IrShape *shape,
                        const char *text, size_t len, int n_operands, bool is_root);
/* *slot becomes the computation named name at ir_build_end (a called
 * computation may come later in the module). */
bool ir_build_comp_ref(IrBuilder *b, IrComputation **slot, const char *name);
/* Names checked unique, control predecessors resolved, parameters indexed. */
bool ir_build_end_computation(IrBuilder *b, IrComputation *comp);
/* The module, its computation references resolved; NULL on error (the
 * module is freed). */
IrModule *ir_build_end(IrBuilder *b);
void ir_build_abandon(IrBuilder *b);

#endif
