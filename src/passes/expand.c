/* expand.c: the match-and-expand driver of the flip passes (the seeds'
 * OpExpanderPass::Run) and the helpers their rewrites share: new
 * instructions named and placed before the one they replace, collective
 * attributes, shapes, the sound-mode type test, and reducers retyped to a
 * wider element type (#102, #104 with a convert). */
#include "expand.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Out of memory, the builders' helpers set m->nomem (as module.c's
 * editing functions do) and return NULL; the driver checks after each
 * build, the pipeline after each pass. */

/* ---- The driver
 *
 * A sweep edits the computation without rescanning it, so that a pass over
 * n instructions with k rewrites costs O(n + k), not O(n * k):
 *  - a replaced instruction is forwarded to its replacement, and every
 *    instruction's operands are forwarded when the sweep reaches it (post
 *    order reaches operands first, so what a matcher sees below an
 *    instruction is exactly what immediate replacement would show); one pass
 *    at the end forwards whatever is left;
 *  - new instructions wait in a list with the instruction they go before,
 *    and one pass at the end merges them into the instruction order. */

struct ExpandSweep {
    IrInstr **forward;          /* by instruction id: the replacement, or NULL */
    int n_forward;
    IrInstr **pending;          /* new instructions, in creation order ... */
    IrInstr **anchor;           /* ... each to go right before its anchor */
    int n_pending, cap_pending;
};

/* The sweep under way, for expand_new (the builders' helper, which takes no
 * context); passes run one at a time. */
static ExpandSweep *current_sweep;

static IrInstr *forwarded(const ExpandSweep *sw, IrInstr *instr)
{
    while (instr->id < sw->n_forward && sw->forward[instr->id])
        instr = sw->forward[instr->id];
    return instr;
}

/* Writes only what changes: an unchanged instruction's lines stay clean. */
static void forward_operands(const ExpandSweep *sw, IrInstr *instr)
{
    if (sw->n_forward == 0)
        return;
    for (int k = 0; k < instr->n_operands; k++) {
        IrInstr *to = forwarded(sw, instr->operands[k]);
        if (to != instr->operands[k])
            instr->operands[k] = to;
    }
    for (int k = 0; k < instr->n_control_predecessors; k++) {
        IrInstr *to = forwarded(sw, instr->control_predecessors[k]);
        if (to != instr->control_predecessors[k])
            instr->control_predecessors[k] = to;
    }
}

static bool set_forward(ExpandSweep *sw, IrInstr *from, IrInstr *to)
{
    if (from->id >= sw->n_forward) {
        int n = 2 * from->id + 16;
        if (!xgrow_try((void **)&sw->forward, (size_t)n, sizeof *sw->forward))
            return false;
        memset(sw->forward + sw->n_forward, 0, (size_t)(n - sw->n_forward) * sizeof *sw->forward);
        sw->n_forward = n;
    }
    sw->forward[from->id] = to;
    return true;
}

/* The new order: each instruction preceded by the new ones anchored to it.
 * Out of memory, comp stays as it is and m->nomem is set. */
static void merge_pending(IrComputation *comp, ExpandSweep *sw)
{
    if (sw->n_pending == 0)
        return;
    int total = comp->n_instrs + sw->n_pending, out = 0;
    IrInstr **order = ir_grow_array(comp->module->arena, NULL, 0, (size_t)total, sizeof *order);
    int lo, span = ir_computation_id_span(comp, &lo);      /* anchors are in comp */
    int *first = xcalloc_try((size_t)span + 1, sizeof *first);
    int *next = xcalloc_try((size_t)sw->n_pending, sizeof *next);
    if (!ir_module_noted(comp->module, order && first && next ? order : NULL)) {
        free(first);
        free(next);
        return;
    }
    for (int i = sw->n_pending - 1; i >= 0; i--) {       /* per anchor, a list in creation order */
        next[i] = first[sw->anchor[i]->id - lo];
        first[sw->anchor[i]->id - lo] = i + 1;
    }
    for (int i = 0; i < comp->n_instrs; i++) {
        for (int p = first[comp->instrs[i]->id - lo]; p; p = next[p - 1])
            order[out++] = sw->pending[p - 1];
        order[out++] = comp->instrs[i];
    }
    comp->instrs = order;
    comp->n_instrs = comp->cap_instrs = out;
    free(first);
    free(next);
}

/* The sweep forwarded every instruction's operands when it reached it, in
 * post order, after everything they use: only the new instructions (made
 * from operands forwarded already, but to be sure) and the root are left.
 * No second pass over the whole computation. */
static void finish_sweep(IrComputation *comp, ExpandSweep *sw)
{
    for (int i = 0; i < sw->n_pending; i++)
        forward_operands(sw, sw->pending[i]);
    merge_pending(comp, sw);
    comp->root = forwarded(sw, comp->root);
}

/* Gives rep what the spec says a replacement inherits from the instruction
 * it replaces: metadata, and control predecessors (so ordering edges
 * survive the original's removal); then forwards every use.  False when
 * out of memory. */
static bool splice(ExpandCtx *ctx, IrInstr *old, IrInstr *rep, Error *err)
{
    const char *metadata = ir_raw_attr_get(old, "metadata");
    if (metadata)
        ir_raw_attr_set(ctx->m, rep, "metadata", metadata);
    if (old->n_control_predecessors > 0) {
        rep->control_predecessors = old->control_predecessors;
        rep->n_control_predecessors = old->n_control_predecessors;
        old->control_predecessors = NULL;
        old->n_control_predecessors = 0;
    }
    if (!set_forward(ctx->sweep, old, rep))
        return error_nomem(err, old->info->loc);
    ctx->stats->fired++;
    return ir_module_check_memory(ctx->m, err);
}

static bool sweep(IrComputation *comp, ExpandMatch match, ExpandBuild build, ExpandCtx *ctx, Error *err)
{
    IrInstr **order = xmalloc_try(((size_t)comp->n_instrs + 1) * sizeof *order);
    int n = order ? pass_post_order(comp, order) : -1;
    if (n < 0) {
        free(order);
        return error_nomem(err, comp->loc);
    }
    ExpandSweep sw = { 0 };
    ctx->sweep = current_sweep = &sw;
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        IrInstr *instr = order[i];
        forward_operands(&sw, instr);
        if (instr->dead || !match(instr, ctx))
            continue;
        IrInstr *rep = build(instr, ctx, err);
        /* A builder that ran out of memory may return an incomplete rep. */
        ok = ir_module_check_memory(ctx->m, err) && rep && splice(ctx, instr, rep, err);
    }
    if (!ctx->m->nomem)
        finish_sweep(comp, &sw);
    ctx->sweep = current_sweep = NULL;
    free(sw.forward);
    free(sw.pending);
    free(sw.anchor);
    free(order);
    return ok;
}

PassResult pass_expand(IrModule *m, const PassOptions *opt, PassStats *stats, ExpandMatch match,
                       ExpandBuild build, void *state, Error *err)
{
    PassStats scratch = { 0 };
    ExpandCtx ctx = { m, opt, stats ? stats : &scratch, state, NULL };
    long fired = ctx.stats->fired;
    PassScan scan;
    if (!pass_scan(m, IR_OP_COUNT, &scan, err))
        return PASS_FAILED;
    bool ok = true;
    for (int i = 0; i < scan.n_comps && ok; i++)
        ok = sweep(scan.comps[i], match, build, &ctx, err);
    pass_scan_free(&scan);
    if (!ok)
        return PASS_FAILED;
    return ctx.stats->fired > fired ? PASS_CHANGED : PASS_UNCHANGED;
}

/* ---- Helpers for match */

bool expand_sound(const ExpandCtx *ctx)
{
    return ctx->opt && ctx->opt->mode == PASS_MODE_SOUND;
}

bool expand_decline(ExpandCtx *ctx, const char *reason)
{
    pass_stats_decline(ctx->stats, reason);
    return false;
}

/* Every value of from (at most 16 bits) written to `to` and read back:
 * the same number, a NaN a NaN, zero's sign kept. */
static bool every_value_kept(IrElemType from, IrElemType to)
{
    uint32_t n = 1u << ir_type_info[from].bits;
    for (uint32_t p = 0; p < n; p++) {
        uint16_t wide = (uint16_t)p;
        uint8_t narrow = (uint8_t)p;
        unsigned char out[8];
        double v = ir_elem_get_f64(from, ir_type_storage_bytes(from) == 2 ? (const void *)&wide : &narrow);
        ir_elem_set_f64(to, out, v);
        double w = ir_elem_get_f64(to, out);
        if (isnan(v) ? !isnan(w) : (w != v || signbit(w) != signbit(v)))
            return false;
    }
    return true;
}

/* Compared value by value rather than by the types' exponent and
 * mantissa widths: those miss the bias (f8e4m3fn -> f8e4m3fnuz keeps both
 * widths, yet 448 has no place in the fnuz type, whose largest is 240, and
 * f8e4m3fnuz's smallest subnormal none in f8e4m3fn) and the special values.
 * The answer for a pair is kept (the types are few, the test runs per
 * match); a race computes the same answer twice. */
bool expand_is_widening_float(IrElemType from, IrElemType to)
{
    static _Atomic signed char known[IR_TYPE_COUNT][IR_TYPE_COUNT];    /* 0 not yet, 1 yes, -1 no */
    if (from == to || !ir_type_is_float(from) || !ir_type_is_float(to))
        return false;
    if (ir_type_info[from].bits > 16)       /* f32 fits only f64; f64 nothing else */
        return from == IR_TYPE_F32 && to == IR_TYPE_F64;
    signed char k = atomic_load(&known[from][to]);
    if (k == 0) {
        k = every_value_kept(from, to) ? 1 : -1;
        atomic_store(&known[from][to], k);
    }
    return k > 0;
}

bool expand_fresh_channel_widens(const IrModule *m, const IrInstr *collective)
{
    return !collective->ints[IR_INT_CHANNEL_ID].present && m->num_partitions.present &&
           m->num_partitions.v > 1;
}

/* What copy_retyped can copy into the wide type: a parameter, a scalar
 * constant with its value, or an element-wise op.  Anything else (a call,
 * a tuple, a slice, an array constant) the pass declines in both modes
 * (docs/fuzz-coverage.md, "Rulings"): the spec retypes "the same reduction
 * computation" and names no way to retype what those hold.  An element-wise
 * op calls nothing, gives an array and takes at most three operands
 * (opcodes.def, check_arity), so copy_retyped's buffer holds them. */
static bool instr_retypable(const IrInstr *instr)
{
    if (instr->op == IR_OP_PARAMETER)
        return true;
    if (instr->op == IR_OP_CONSTANT)
        return instr->shape->rank == 0 && instr->info->literal && instr->info->literal->data;   /* never elided at rank 0 */
    return (ir_op_info[instr->op].flags & OPF_ELEMENTWISE) != 0;
}

bool expand_reducer_retypable(const IrComputation *comp)
{
    if (!comp || comp->n_params != 2 || !comp->root)
        return false;
    for (int i = 0; i < comp->n_instrs; i++)
        if (!comp->instrs[i]->dead && !instr_retypable(comp->instrs[i]))
            return false;
    return true;
}

/* ---- Helpers for build */

/* Outside a sweep the instruction goes in at once; inside one it waits for
 * the sweep's end (see the driver), its name taken already. */
static void place_before(ExpandSweep *sw, IrComputation *comp, IrInstr *before, IrInstr *instr)
{
    if (!sw) {
        ir_computation_insert_before(comp, before, instr);
        return;
    }
    if (sw->n_pending == sw->cap_pending) {
        int cap = sw->cap_pending ? 2 * sw->cap_pending : 16;
        if (!xgrow_try((void **)&sw->pending, (size_t)cap, sizeof *sw->pending) ||
            !xgrow_try((void **)&sw->anchor, (size_t)cap, sizeof *sw->anchor)) {
            ir_module_noted(comp->module, NULL);
            return;
        }
        sw->cap_pending = cap;
    }
    sw->pending[sw->n_pending] = instr;
    sw->anchor[sw->n_pending++] = before;
    instr->parent = comp;
    ir_namemap_put(comp->names, instr->name, instr);
}

IrInstr *expand_new(IrInstr *before, IrOpcode op, IrShape *shape, int n_operands, IrInstr *const *operands)
{
    IrComputation *comp = before->parent;
    bool made = shape != NULL;      /* shape and operands: NULL when out of memory */
    for (int k = 0; k < n_operands; k++)
        made &= operands[k] != NULL;
    if (!ir_module_noted(comp->module, made ? comp : NULL))
        return NULL;
    const char *name = ir_unique_name(comp, ir_opcode_name(op));
    IrInstr *instr = ir_instr_new(comp->module, op, name, shape, n_operands, operands);
    if (!instr)
        return NULL;
    instr->info->loc = before->info->loc;
    place_before(current_sweep, comp, before, instr);
    return instr;
}

void expand_copy_typed_attrs(IrModule *m, IrInstr *dst, const IrInstr *src)
{
    if (!dst)
        return;
    ir_instr_copy_attrs(m, dst, src);
    dst->info->raw_attrs = NULL;
    dst->info->n_raw_attrs = 0;
    dst->info->literal = NULL;
    dst->info->parameter_number = 0;
}

/* ---- Retyped reducers */

static IrLiteral *retype_literal(IrModule *m, const IrLiteral *lit, IrShape *shape, IrElemType from)
{
    IrLiteral *l = ir_module_noted(m, ARENA_NEW(m->arena, IrLiteral));
    IrElemType to = shape->type;
    if (l)
        l->data = ir_module_noted(m, arena_alloc(m->arena, (size_t)ir_type_storage_bytes(to)));
    if (!l || !l->data)
        return NULL;
    l->shape = shape;
    if (ir_type_is_float(from) || ir_type_is_float(to))
        ir_elem_set_f64(to, l->data, ir_elem_get_f64(from, lit->data));
    else
        ir_elem_set_i64(to, l->data, ir_elem_get_i64(from, lit->data));
    return l;
}

/* The copy of one reducer instruction; operands already copied (by id). */
static IrInstr *copy_retyped(IrComputation *dst, const IrInstr *src, IrInstr **copies, IrElemType from,
                             IrElemType to)
{
    IrModule *m = dst->module;
    IrInstr *ops[8];   /* instr_retypable: element-wise, at most 3 operands */
    for (int k = 0; k < src->n_operands; k++)
        ops[k] = copies[src->operands[k]->id];
    bool retype = src->shape->type == from;
    IrShape *shape = ir_module_noted(m, retype ? ir_shape_with_type(m->arena, src->shape, to)
                                               : ir_shape_clone(m->arena, src->shape));
    if (!shape)
        return NULL;
    char name[256];
    snprintf(name, sizeof name, "%.200s.%s", src->name, ir_type_name(to));
    IrInstr *instr = ir_instr_new(m, src->op, name, shape, src->n_operands, ops);
    if (!instr)
        return NULL;
    ir_instr_copy_attrs(m, instr, src);
    instr->info->loc = src->info->loc;
    if (src->op == IR_OP_CONSTANT && retype)
        instr->info->literal = retype_literal(m, src->info->literal, shape, from);
    ir_computation_append(dst, instr);
    return instr;
}

static const char *unique_computation_name(IrModule *m, const char *base)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%.240s", base);
    for (long k = 1; ir_module_find_computation(m, buf); k++)
        snprintf(buf, sizeof buf, "%.200s.%ld", base, k);
    return ir_module_noted(m, arena_strdup(m->arena, buf));
}

/* The copy, not yet in m->computations; NULL when an instruction of it
 * does not verify with the new type (say `and` over floats). */
static IrComputation *build_retyped(IrModule *m, const IrComputation *comp, IrElemType from, IrElemType to)
{
    char base[256];
    snprintf(base, sizeof base, "%.200s.%s", comp->name, ir_type_name(to));
    const char *name = unique_computation_name(m, base);
    IrComputation *c = name ? ir_module_noted(m, ir_computation_new(m, name)) : NULL;
    IrInstr **copies = xcalloc_try((size_t)m->next_instr_id + 1, sizeof *copies);
    ir_module_noted(m, copies);
    if (!c || !copies) {
        free(copies);
        return NULL;
    }
    bool ok = true;
    for (int i = 0; i < comp->n_instrs && ok; i++) {
        const IrInstr *src = comp->instrs[i];
        if (src->dead)
            continue;
        IrInstr *copy = copy_retyped(c, src, copies, from, to);
        copies[src->id] = copy;
        Error err = { 0 };
        ok = copy && ir_verify_instr(copy, &err);
        if (err.code == ERR_NOMEM)
            ir_module_noted(m, NULL);   /* out of memory is not "does not verify" */
    }
    c->root = copies[comp->root->id];
    free(copies);
    c->root_marked = comp->root_marked;
    c->has_signature = comp->has_signature;
    c->execution_thread = comp->execution_thread;
    return ok && c->root ? c : NULL;
}

static bool params_are(const IrComputation *comp, IrElemType t)
{
    for (int k = 0; k < comp->n_params; k++)
        if (!comp->params[k] || comp->params[k]->shape->type != t || comp->params[k]->shape->rank != 0)
            return false;
    return true;
}

IrComputation *expand_retyped_reducer(IrModule *m, IrComputation *comp, IrElemType from, IrElemType to,
                                      ExpandReducerCache *cache)
{
    for (int i = 0; cache && i < cache->n; i++)
        if (cache->orig[i] == comp && cache->to[i] == to)
            return cache->copy[i];
    IrComputation *copy = NULL;
    if (expand_reducer_retypable(comp) && params_are(comp, from))
        copy = build_retyped(m, comp, from, to);
    if (cache && cache->n < EXPAND_CACHE_MAX) {
        cache->orig[cache->n] = comp;
        cache->to[cache->n] = to;
        cache->copy[cache->n++] = copy;
    }
    return copy;
}

void expand_adopt_computation(IrModule *m, IrComputation *comp)
{
    for (int i = 0; i < m->n_computations; i++)
        if (m->computations[i] == comp)
            return;
    ir_module_insert_computation(m, comp, 0);
}
