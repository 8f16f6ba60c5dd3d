/* fold.c: acc = to_apply(acc, x) elementwise, the step of every reduction.
 * Trivial reducers (one add/multiply/maximum/minimum/and/or of the two
 * parameters) take the interpreter's vectorised kernel.  Any other to_apply
 * made of element-wise ops is rewritten once into the same computation over
 * arrays (scalars become [n], constants are broadcast) and run by the
 * interpreter over whole blocks; only a reducer with other ops falls back to
 * one call per element.  All round to the element type after every step, so
 * the fold order alone fixes the bits.  The first two split each step over
 * the rank's threads by element (parallel.h), which keeps every element's
 * fold order; the per-element calls stay on one thread. */
#include "coll_internal.h"
#include "parallel.h"

#include <stdlib.h>
#include <string.h>

static const IrComputation *reducer(const IrInstr *instr)
{
    return instr->info->comps[IR_COMP_TO_APPLY];
}

static bool fold_general(Interp *it, const IrInstr *instr, IrElemType t, void *acc, const void *x,
                         int64_t n, Error *err)
{
    const IrComputation *comp = reducer(instr);
    if (comp->n_params != 2 || comp->params[0]->shape->type != t || comp->params[1]->shape->type != t ||
        comp->params[0]->shape->rank != 0)
        return error_set(err, ERR_SHAPE, instr->info->loc, "%s: to_apply=%s does not take two %s scalars",
                         ir_opcode_name(instr->op), comp->name, ir_type_name(t));
    Value *a = value_new_array(comp->params[0]->shape, err);
    Value *b = a ? value_new_array(comp->params[1]->shape, err) : NULL;
    size_t es = (size_t)ir_type_storage_bytes(t);
    bool ok = b != NULL;
    for (int64_t i = 0; i < n && ok; i++) {
        memcpy(a->data, (char *)acc + i * es, es);
        memcpy(b->data, (const char *)x + i * es, es);
        Value *args[2] = { a, b }, *r = NULL;
        ok = interp_call(it, comp, args, 2, &r, err);
        if (ok)
            memcpy((char *)acc + i * es, r->data, es);
        value_release(r);
    }
    value_release(a);
    value_release(b);
    return ok;
}

/* ---- The reducer over blocks */

/* Cached by the text of the block module, never by the computation's
 * address: a long-lived process (hlo-fuzz, hlo-check --shrink / --local)
 * frees modules and can get a new reducer at a freed one's address, which
 * must not find the old one's fold (hlo-fuzz found "multiply" folding as
 * "maximum" so). */
typedef struct BlockReducer {
    char *text;             /* the block module; NULL: the reducer is not element-wise */
    IrModule *m;
    Interp *it;
} BlockReducer;

#define N_CACHED 16
static BlockReducer cache[N_CACHED];
static int cache_next;

/* One instruction of the scalar reducer as the same op over [n]. */
static bool block_instr(StrBuf *b, const IrInstr *instr, int64_t n)
{
    const IrShape *s = instr->shape;
    if (s->type == IR_TYPE_TUPLE || s->rank != 0)
        return false;
    const char *type = ir_type_name(s->type), *root = instr->parent->root == instr ? "ROOT " : "";
    if (instr->op == IR_OP_PARAMETER) {
        strbuf_printf(b, "  %s%%%s = %s[%lld] parameter(%lld)\n", root, instr->name, type, (long long)n,
                      (long long)instr->info->parameter_number);
        return true;
    }
    if (instr->op == IR_OP_CONSTANT) {
        strbuf_printf(b, "  %%%s.scalar = %s[] constant(", instr->name, type);
        ir_print_literal(b, instr->info->literal);
        strbuf_printf(b, ")\n  %s%%%s = %s[%lld] broadcast(%%%s.scalar), dimensions={}\n", root, instr->name, type,
                      (long long)n, instr->name);
        return true;
    }
    if (!(ir_op_info[instr->op].flags & OPF_ELEMENTWISE))
        return false;
    StrBuf line, shape;
    strbuf_init(&line);
    strbuf_init(&shape);
    ir_print_instr(&line, instr);
    ir_shape_print(&shape, s, true);
    const char *eq = strstr(line.s, " = ");
    bool ok = eq && strncmp(eq + 3, shape.s, shape.len) == 0;
    if (ok) {
        strbuf_putn(b, "  ", 2);
        strbuf_putn(b, line.s, (size_t)(eq + 3 - line.s));
        strbuf_printf(b, "%s[%lld]%s\n", type, (long long)n, eq + 3 + shape.len);
    }
    strbuf_free(&line);
    strbuf_free(&shape);
    return ok;
}

/* The reducer as a module over [n] blocks; NULL when it is not element-wise. */
static char *block_text(const IrComputation *comp, int64_t n)
{
    StrBuf b;
    strbuf_init(&b);
    strbuf_puts(&b, "HloModule block_reducer\n\nENTRY %block {\n");
    bool ok = true;
    for (int i = 0; i < comp->n_instrs && ok; i++)
        ok = comp->instrs[i]->dead || block_instr(&b, comp->instrs[i], n);
    strbuf_puts(&b, "}\n");
    if (!ok)
        strbuf_free(&b);
    return ok ? b.s : NULL;
}

static void block_reducer_build(BlockReducer *r)
{
    Error err = { 0 };
    r->m = ir_parse_module(r->text, strlen(r->text), "<reducer over blocks>", &err);
    if (r->m && !ir_verify_module(r->m, &err)) {
        ir_module_free(r->m);
        r->m = NULL;
    }
    r->it = r->m ? interp_new(r->m, NULL, &err) : NULL;
}

static void block_reducer_clear(BlockReducer *r)
{
    interp_free(r->it);
    ir_module_free(r->m);
    free(r->text);
    *r = (BlockReducer){ 0 };
}

/* NULL when the reducer cannot run over blocks. */
static BlockReducer *block_reducer(const IrComputation *comp, int64_t n)
{
    char *text = block_text(comp, n);
    if (!text)
        return NULL;
    for (int i = 0; i < N_CACHED; i++)
        if (cache[i].text && strcmp(cache[i].text, text) == 0) {
            free(text);
            return &cache[i];
        }
    BlockReducer *r = &cache[cache_next++ % N_CACHED];
    block_reducer_clear(r);
    r->text = text;
    block_reducer_build(r);
    return r;
}

void coll_fold_cache_free(void)
{
    for (int i = 0; i < N_CACHED; i++)
        block_reducer_clear(&cache[i]);
}

/* false with err unset: the reducer cannot run over blocks. */
static bool fold_blocks(const IrInstr *instr, IrElemType t, void *acc, const void *x, int64_t n, bool *done,
                        Error *err)
{
    BlockReducer *r = block_reducer(reducer(instr), n);
    *done = false;
    if (!r || !r->it || r->m->entry->root->shape->type != t)
        return true;
    size_t bytes = (size_t)n * (size_t)ir_type_storage_bytes(t);
    Value *a = value_new_array(r->m->entry->params[0]->shape, err);
    Value *b = a ? value_new_array(r->m->entry->params[1]->shape, err) : NULL, *out = NULL;
    if (!b) {
        value_release(a);
        return false;
    }
    parallel_memcpy(a->data, acc, (int64_t)bytes);
    parallel_memcpy(b->data, x, (int64_t)bytes);
    Value *args[2] = { a, b };
    if (!interp_run(r->it, args, 2, &out, err))
        return false;
    parallel_memcpy(acc, out->data, (int64_t)bytes);
    value_release(out);
    *done = true;
    return true;
}

bool coll_fold(Interp *it, const IrInstr *instr, IrElemType t, void *acc, const void *x, int64_t n,
               Error *err)
{
    const IrComputation *comp = reducer(instr);
    if (!comp)
        return error_set(err, ERR_SHAPE, instr->info->loc, "%s has no to_apply", ir_opcode_name(instr->op));
    IrOpcode op = interp_trivial_reducer(comp);
    if (op != IR_OP_COUNT && comp->root->shape->type == t)
        return interp_binary_kernel(op, t, acc, acc, x, n, err);
    bool done = false;
    if (n > 0 && comp->n_params == 2 && !fold_blocks(instr, t, acc, x, n, &done, err))
        return false;
    return done || fold_general(it, instr, t, acc, x, n, err);
}
