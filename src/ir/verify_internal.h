/* verify_internal.h: private to src/ir/.  What verify.c and
 * verify_collectives.c give each other: the verifier's helpers, and the
 * collective rules that verify.c's dispatch calls.  Being link symbols of
 * libhlocheck.a, they all carry the verify_ prefix (STYLE.md section 2). */
#ifndef IR_VERIFY_INTERNAL_H
#define IR_VERIFY_INTERNAL_H

#include "ir.h"

/* ---- verify.c: messages, shape helpers, called computations, async starts */

/* Shape text for messages (four rotating buffers). */
const char *verify_shape_text(const IrShape *s);
/* "{1,0}" for a list attribute (two rotating buffers). */
const char *verify_list_text(const IrIntList *l);
/* reduce-scatter-start and friends: an async op that names the op it wraps. */
bool verify_is_sugared_async(const IrInstr *in);
/* "<opcode>: <message>" at the instruction's name (ERR_SHAPE); false. */
bool verify_fail(const IrInstr *in, Error *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* ERR_NOMEM at loc; false. */
bool verify_out_of_memory(IrLoc loc, Error *err);
/* Two dims agree (an unbounded dim, -1, matches anything). */
bool verify_dim_eq(int64_t a, int64_t b);
/* The shape a buffer holds (s itself when it is not a buffer). */
const IrShape *verify_unbuffer(const IrShape *s);
/* Compatible shapes: layouts and the bounded/static distinction ignored. */
bool verify_same_shape(const IrShape *a, const IrShape *b);
/* An array of rank 0. */
bool verify_is_scalar(const IrShape *s);
/* A dimension that is dynamic (bounded or unbounded). */
bool verify_has_dynamic_dim(const IrShape *s);
/* The shape of operand i. */
const IrShape *verify_operand_shape(const IrInstr *in, int i);
/* s is an array, or "<what> <shape> must be an array". */
bool verify_need_array(const IrInstr *in, const IrShape *s, const char *what, Error *err);
/* a and b have the same element type, or an error saying so. */
bool verify_need_same_type(const IrInstr *in, const IrShape *a, const IrShape *b, Error *err);
/* dimensions={d}: exactly one entry, in range for s. */
bool verify_single_dim(const IrInstr *in, const IrShape *s, int64_t *d, Error *err);
/* Result i of an op with n results (the shape, or element i of a tuple of n). */
const IrShape *verify_result_part(const IrInstr *in, const IrShape *out, int n, int i, Error *err);
/* s is the one operand's shape, or the tuple of all of them. */
bool verify_operands_match(const IrInstr *in, const IrShape *s);
/* A computation attribute that takes n parameters (scalars if asked). */
bool verify_callee_arity(const IrInstr *in, IrCompAttr which, int n, bool scalars, Error *err);
/* The result is the operand's shape, or the tuple of the operands' shapes. */
bool verify_same_as_operands(const IrInstr *in, const IrShape *out, Error *err);
/* The tuple of an x-start, checked to have at least two elements; NULL if not. */
const IrShape *verify_start_tuple(const IrInstr *in, const IrShape *s, Error *err);
/* s past any spaces and tabs. */
const char *verify_skip_blanks(const char *s);

/* ---- verify_collectives.c: the collective rules, for checker_for() and ir_verify_instr() */

/* replica_groups or source_target_pairs, by the opcode's coll_traits[] row. */
bool verify_collective_attrs(const IrInstr *in, Error *err);
/* all-gather: dimension d of the result is the operand's times the group size. */
bool verify_all_gather(const IrInstr *in, const IrShape *out, Error *err);
/* all-gather-start: (operands, results). */
bool verify_all_gather_start(const IrInstr *in, const IrShape *out, Error *err);
/* reduce-scatter: the reducer, and dimension d divided by the group size. */
bool verify_reduce_scatter(const IrInstr *in, const IrShape *out, Error *err);
/* all-reduce and all-reduce-start: the reducer, and the operands' shapes. */
bool verify_all_reduce(const IrInstr *in, const IrShape *out, Error *err);
/* all-to-all: same shapes; a split dimension must divide by the group size. */
bool verify_all_to_all(const IrInstr *in, const IrShape *out, Error *err);
/* collective-permute: the one-operand form keeps the shape. */
bool verify_collective_permute(const IrInstr *in, const IrShape *out, Error *err);
/* collective-permute-start: two copies of the operand first. */
bool verify_collective_permute_start(const IrInstr *in, const IrShape *out, Error *err);
/* send(data, token) -> (data, u32[], token[]), with its channel_id and pairs. */
bool verify_send(const IrInstr *in, const IrShape *out, Error *err);
/* recv(token) -> (data, u32[], token[]), with its channel_id and pairs. */
bool verify_recv(const IrInstr *in, const IrShape *out, Error *err);
/* send-done(send) -> token[]; recv-done(recv) -> (data, token[]). */
bool verify_p2p_done(const IrInstr *in, const IrShape *out, Error *err);
/* ragged-all-to-all(input, output, four offset and size arrays). */
bool verify_ragged_all_to_all(const IrInstr *in, const IrShape *out, Error *err);

#endif /* IR_VERIFY_INTERNAL_H */
