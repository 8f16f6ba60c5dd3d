/* compact.c: moving a module's live instructions together.
 *
 * Passes leave the instructions they replace in the instruction arena and
 * put new ones at its end, far from their neighbours in the instruction
 * order.  On modules bigger than the caches every later pass then reads
 * the instructions it walks in order from pages scattered over the arena
 * (measured on the 100k-instruction pipeline benchmark: the reduce-scatter
 * and all-reduce combiners ran 2x slower on the rewritten module than on a
 * fresh parse of it).  Compaction copies the live instructions, in
 * computation and instruction order, into a fresh arena, numbers them in
 * that order and frees the old arena with every removed instruction in it. */
#include "ir.h"

#include <string.h>

/* While compacting, the old copy of a moved instruction points at the new
 * one through users (stale after edits anyway), marked by n_users. */
enum { MOVED_MARK = -1 };

static IrInstr *moved(const IrInstr *old)
{
    return old->n_users == MOVED_MARK ? (IrInstr *)old->users : NULL;
}

/* The name map only says which names are taken (its values are not read
 * after parsing, see IrComputation.names): every entry, a removed
 * instruction's too, becomes a plain reservation, as ir_unique_name's are,
 * without reading the instructions it named. */
static void *reservation(const char *key, void *value)
{
    (void)value;
    return (void *)key;
}

/* Puts back what the first phase overwrote in the first n old instructions
 * (in module order) when the new arena ran out of memory. */
static void undo(IrModule *m, long n)
{
    for (int c = 0; c < m->n_computations && n > 0; c++)
        for (int i = 0; i < m->computations[c]->n_instrs && n > 0; i++, n--) {
            IrInstr *old = m->computations[c]->instrs[i], *copy = moved(old);
            old->users = copy->users;
            old->n_users = copy->n_users;
        }
}

bool ir_module_compact(IrModule *m)
{
    Arena *to = arena_new(2u << 20);
    if (!to)
        return false;
    long n_moved = 0;
    for (int c = 0; c < m->n_computations; c++) {
        IrComputation *comp = m->computations[c];
        for (int i = 0; i < comp->n_instrs; i++) {
            IrInstr *old = comp->instrs[i], *copy = arena_alloc_line(to, sizeof *copy);
            if (!copy) {
                undo(m, n_moved);
                arena_free(to);
                return false;
            }
            memcpy(copy, old, sizeof *copy);
            if (old->operands == old->inline_operands)
                copy->operands = copy->inline_operands;
            old->users = (IrInstr **)copy;
            old->n_users = MOVED_MARK;
            n_moved++;
        }
    }
    /* Nothing can fail from here on. */
    int id = 0;
    for (int c = 0; c < m->n_computations; c++) {
        IrComputation *comp = m->computations[c];
        for (int i = 0; i < comp->n_instrs; i++) {
            IrInstr *x = moved(comp->instrs[i]);
            for (int k = 0; k < x->n_operands; k++)
                x->operands[k] = moved(x->operands[k]);
            for (int k = 0; k < x->n_control_predecessors; k++)
                x->control_predecessors[k] = moved(x->control_predecessors[k]);
            x->users = NULL;    /* they named old copies */
            x->n_users = 0;
            x->id = id++;
            comp->instrs[i] = x;
        }
        if (comp->root)
            comp->root = moved(comp->root);
        for (int k = 0; k < comp->n_params; k++)
            if (comp->params[k])
                comp->params[k] = moved(comp->params[k]);
        if (comp->names)
            ir_namemap_remap(comp->names, reservation);
    }
    m->next_instr_id = id;
    arena_free(m->instr_arena);
    m->instr_arena = to;
    return true;
}
