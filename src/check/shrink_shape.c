/* shrink_shape.c: --shrink's shape cut.  A shrunk pair that is not purely
 * element-wise still computes whole arrays where one output element
 * differs.  From that element each module is walked backwards, users
 * before operands, to the box of every instruction's value the element
 * depends on (a box that covers it where the exact set is not one: a
 * gather's shards, a reshape that mixes rows).  Both modules are then
 * rebuilt so every instruction computes its box alone: parameters take the
 * box of their inputs (the union over both modules: they share inputs),
 * constants are cut, slices, broadcasts, transposes, reshapes,
 * concatenates, reductions and collectives get the smaller shapes, a
 * slice goes in front of an operand that holds more than its user reads
 * and behind an instruction that computes more than its users need (an
 * all-gather's other shards, or any op the cut does not know, which keeps
 * its whole operands).  The value each rebuilt instruction holds is its
 * old value on its box, so the root is the failing element; the caller
 * still checks the cut pair again and keeps it only when it differs. */
#include "check.h"
#include "shrink_internal.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_RESHAPE_ENUM = 1 << 16 };   /* elements enumerated to cover a reshape's box */

typedef struct Box { int64_t lo[IR_MAX_RANK], hi[IR_MAX_RANK]; } Box;     /* [lo, hi) per dimension */

/* What one instruction computes after the cut, and what it reads. */
typedef struct Plan {
    bool needed;                /* the failing element depends on part of its value */
    bool whole;                 /* rebuilt as it was: whole operands, whole result */
    Box need;                   /* that part, in the old value's indices */
    int64_t out[IR_MAX_RANK];   /* the rebuilt instruction's dims */
    int64_t sel[IR_MAX_RANK];   /* where need starts in the rebuilt value */
    Box *req;                   /* n_operands: the box each operand must hold */
    bool *dropped;              /* n_operands: not read any more (concatenate) */
} Plan;

/* ---- Boxes */

static void box_whole(Box *b, const IrShape *s)
{
    for (int d = 0; d < s->rank; d++) {
        b->lo[d] = 0;
        b->hi[d] = s->dims[d];
    }
}

static bool box_equal(const Box *a, const Box *b, int rank)
{
    for (int d = 0; d < rank; d++)
        if (a->lo[d] != b->lo[d] || a->hi[d] != b->hi[d])
            return false;
    return true;
}

static void box_cover(Box *into, const Box *b, int rank)
{
    for (int d = 0; d < rank; d++) {
        if (b->lo[d] < into->lo[d])
            into->lo[d] = b->lo[d];
        if (b->hi[d] > into->hi[d])
            into->hi[d] = b->hi[d];
    }
}

static int64_t box_elements(const Box *b, int rank)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= b->hi[d] - b->lo[d];
    return n;
}

/* Copies box b of src (dims src_dims, row-major) to dst, densely. */
static void copy_box(const char *src, const int64_t *src_dims, int rank, const Box *b, size_t es, char *dst)
{
    int64_t idx[IR_MAX_RANK];
    int64_t n = box_elements(b, rank);
    for (int d = 0; d < rank; d++)
        idx[d] = b->lo[d];
    for (int64_t k = 0; k < n; k++) {
        int64_t flat = 0;
        for (int d = 0; d < rank; d++)
            flat = flat * src_dims[d] + idx[d];
        memcpy(dst + (size_t)k * es, src + (size_t)flat * es, es);
        for (int d = rank - 1; d >= 0 && ++idx[d] == b->hi[d]; d--)
            idx[d] = b->lo[d];
    }
}

/* ---- What each op reads for a box of its result */

static bool elementwise_rule(const IrModule *m, const IrInstr *x, Plan *q)
{
    (void)m;
    const Plan *p = q;
    if (!(ir_op_info[x->op].flags & OPF_ELEMENTWISE) || x->op == IR_OP_STOCHASTIC_CONVERT)
        return false;
    for (int k = 0; k < x->n_operands; k++) {
        const IrShape *o = x->operands[k]->shape;
        if (o->rank != 0 && !ir_shape_equal_dims(o, x->shape))
            return false;
        if (o->rank != 0)
            q->req[k] = p->need;
    }
    return true;
}

static bool transpose_rule(const IrModule *m, const IrInstr *x, Plan *q)
{
    (void)m;
    const Plan *p = q;
    const IrIntList *perm = &x->lists[IR_LIST_DIMENSIONS];
    for (int i = 0; i < perm->n; i++) {
        q->req[0].lo[perm->v[i]] = p->need.lo[i];
        q->req[0].hi[perm->v[i]] = p->need.hi[i];
    }
    return true;
}

static bool broadcast_rule(const IrModule *m, const IrInstr *x, Plan *q)
{
    (void)m;
    const Plan *p = q;
    const IrIntList *dims = &x->lists[IR_LIST_DIMENSIONS];
    for (int j = 0; j < dims->n; j++) {
        q->req[0].lo[j] = p->need.lo[dims->v[j]];
        q->req[0].hi[j] = p->need.hi[dims->v[j]];
    }
    return true;
}

static bool slice_rule(const IrModule *m, const IrInstr *x, Plan *q)
{
    (void)m;
    const Plan *p = q;
    if (x->info->n_slice != x->shape->rank)
        return false;
    for (int d = 0; d < x->shape->rank; d++) {
        const IrSliceDim *s = &x->info->slice[d];
        q->req[0].lo[d] = s->start + p->need.lo[d] * s->stride;
        q->req[0].hi[d] = s->start + (p->need.hi[d] - 1) * s->stride + 1;
    }
    return true;
}

/* The operand box covering need's elements; exact (the reshape of that box
 * is need) when it holds no more elements than need. */
static bool reshape_rule(const IrModule *m, const IrInstr *x, Plan *q)
{
    (void)m;
    const Plan *p = q;
    const IrShape *o = x->operands[0]->shape, *s = x->shape;
    int64_t n = box_elements(&p->need, s->rank), idx[IR_MAX_RANK];
    if (n > MAX_RESHAPE_ENUM)
        return false;
    Box *r = &q->req[0];
    for (int d = 0; d < o->rank; d++) {
        r->lo[d] = o->dims[d];
        r->hi[d] = 0;
    }
    for (int d = 0; d < s->rank; d++)
        idx[d] = p->need.lo[d];
    for (int64_t k = 0; k < n; k++) {
        int64_t flat = 0;
        for (int d = 0; d < s->rank; d++)
            flat = flat * s->dims[d] + idx[d];
        for (int d = o->rank - 1; d >= 0; d--) {
            int64_t i = flat % o->dims[d];
            flat /= o->dims[d];
            r->lo[d] = i < r->lo[d] ? i : r->lo[d];
            r->hi[d] = i + 1 > r->hi[d] ? i + 1 : r->hi[d];
        }
        for (int d = s->rank - 1; d >= 0 && ++idx[d] == p->need.hi[d]; d--)
            idx[d] = p->need.lo[d];
    }
    return box_elements(r, o->rank) == n;
}

/* Operands that overlap need along the concatenated dimension keep their
 * part of it; the others are dropped. */
static bool concatenate_rule(const IrModule *m, const IrInstr *x, Plan *q)
{
    (void)m;
    const Plan *p = q;
    int64_t d = x->lists[IR_LIST_DIMENSIONS].v[0], at = 0;
    for (int k = 0; k < x->n_operands; k++) {
        int64_t len = x->operands[k]->shape->dims[d];
        int64_t lo = p->need.lo[d] > at ? p->need.lo[d] : at;
        int64_t hi = p->need.hi[d] < at + len ? p->need.hi[d] : at + len;
        q->req[k] = p->need;
        q->req[k].lo[d] = lo - at;
        q->req[k].hi[d] = hi - at;
        q->dropped[k] = lo >= hi;
        at += len;
    }
    return true;
}

/* Within one shard, that shard's part of every rank's operand (the result
 * then holds it for every rank: need is one of them); else whole shards. */
static bool all_gather_rule(const IrModule *m, const IrInstr *x, Plan *q)
{
    const Plan *p = q;
    int64_t n = ir_collective_group_size(m, x);
    if (n <= 0 || x->n_operands != 1)
        return false;
    int64_t d = x->lists[IR_LIST_DIMENSIONS].v[0], s = x->operands[0]->shape->dims[d];
    int64_t lo = p->need.lo[d], hi = p->need.hi[d], shard = lo / s;
    q->req[0] = p->need;
    if (shard == (hi - 1) / s) {
        q->req[0].lo[d] = lo - shard * s;
        q->req[0].hi[d] = hi - shard * s;
        q->out[d] = n * (hi - lo);
        q->sel[d] = shard * (hi - lo);
    } else {
        q->req[0].lo[d] = 0;
        q->req[0].hi[d] = s;
        q->out[d] = n * s;
        q->sel[d] = lo;
    }
    return true;
}

/* Every rank's whole operand along the scattered dimension. */
static bool reduce_scatter_rule(const IrModule *m, const IrInstr *x, Plan *q)
{
    (void)m;
    const Plan *p = q;
    if (x->n_operands != 1)
        return false;
    int64_t d = x->lists[IR_LIST_DIMENSIONS].v[0];
    q->req[0] = p->need;
    q->req[0].lo[d] = 0;
    q->req[0].hi[d] = x->operands[0]->shape->dims[d];
    q->out[d] = x->shape->dims[d];
    q->sel[d] = p->need.lo[d];
    return true;
}

/* Dimensions sliced whole (offset clamped to 0) cut like an element-wise
 * op; the others keep the whole operand, the offset being a run-time value. */
static bool dynamic_slice_rule(const IrModule *m, const IrInstr *x, Plan *q)
{
    (void)m;
    const Plan *p = q;
    const IrShape *o = x->operands[0]->shape;
    for (int d = 0; d < o->rank; d++) {
        bool whole = x->shape->dims[d] == o->dims[d];
        q->req[0].lo[d] = whole ? p->need.lo[d] : 0;
        q->req[0].hi[d] = whole ? p->need.hi[d] : o->dims[d];
        q->out[d] = whole ? p->need.hi[d] - p->need.lo[d] : x->shape->dims[d];
        q->sel[d] = whole ? 0 : p->need.lo[d];
    }
    return true;
}

static bool reduce_rule(const IrModule *m, const IrInstr *x, Plan *q)
{
    (void)m;
    const Plan *p = q;
    if (x->n_operands != 2)
        return false;
    const IrIntList *dims = &x->lists[IR_LIST_DIMENSIONS];
    const IrShape *o = x->operands[0]->shape;
    int kept = 0;
    for (int d = 0; d < o->rank; d++) {
        bool reduced = false;
        for (int j = 0; j < dims->n; j++)
            reduced |= dims->v[j] == d;
        q->req[0].lo[d] = reduced ? 0 : p->need.lo[kept];
        q->req[0].hi[d] = reduced ? o->dims[d] : p->need.hi[kept];
        kept += !reduced;
    }
    return true;
}

/* Parameters, iota, and constants whose values the text holds; an elided
 * constant stays whole (--fill-elided draws its values by its shape, so a
 * cut one would hold other values). */
static bool source_rule(const IrModule *m, const IrInstr *x, Plan *q)
{
    (void)m;
    (void)q;
    const IrLiteral *lit = x->op == IR_OP_CONSTANT ? x->info->literal : NULL;
    return x->op != IR_OP_CONSTANT || (lit && !lit->elided && lit->data);
}

static bool all_reduce_rule(const IrModule *m, const IrInstr *x, Plan *q)
{
    (void)m;
    q->req[0] = q->need;
    return x->n_operands == 1;
}

/* How each op reads a box of its result: fills q->req (and q->out, q->sel
 * where it computes more than q->need); false when it is rebuilt whole.
 * Ops not listed: element-wise_rule. */
typedef bool (*Rule)(const IrModule *m, const IrInstr *x, Plan *q);
static const Rule rules[IR_OP_COUNT] = {
    [IR_OP_PARAMETER] = source_rule,
    [IR_OP_CONSTANT] = source_rule,
    [IR_OP_TRANSPOSE] = transpose_rule,
    [IR_OP_BROADCAST] = broadcast_rule,
    [IR_OP_SLICE] = slice_rule,
    [IR_OP_RESHAPE] = reshape_rule,
    [IR_OP_CONCATENATE] = concatenate_rule,
    [IR_OP_ALL_GATHER] = all_gather_rule,
    [IR_OP_REDUCE_SCATTER] = reduce_scatter_rule,
    [IR_OP_ALL_REDUCE] = all_reduce_rule,
    [IR_OP_DYNAMIC_SLICE] = dynamic_slice_rule,
    [IR_OP_REDUCE] = reduce_rule,
};

static bool op_rule(const IrModule *m, const IrInstr *x, Plan *q)
{
    for (int d = 0; d < x->shape->rank; d++) {
        q->out[d] = q->need.hi[d] - q->need.lo[d];
        q->sel[d] = 0;
    }
    Rule rule = rules[x->op] ? rules[x->op] : elementwise_rule;
    return rule(m, x, q);
}

/* ---- Planning: the boxes, from the root backwards */

typedef struct Cut {
    IrModule *m;
    Plan *plans;                /* by position in the entry before the rebuild */
    int n_plans;
    int *pos;                   /* instruction id -> position */
} Cut;

static void plan_whole(const IrInstr *x, Plan *q)
{
    q->whole = true;
    box_whole(&q->need, x->shape);
    for (int d = 0; d < x->shape->rank; d++) {
        q->out[d] = x->shape->dims[d];
        q->sel[d] = 0;
    }
    for (int k = 0; k < x->n_operands; k++) {
        box_whole(&q->req[k], x->operands[k]->shape);
        q->dropped[k] = false;
    }
}

/* Asks operand o for box r: the union with what others asked. */
static void ask(Cut *c, const IrInstr *o, const Box *r)
{
    Plan *q = &c->plans[c->pos[o->id]];
    if (!q->needed)
        q->need = *r;
    else
        box_cover(&q->need, r, o->shape->rank);
    q->needed = true;
}

static void plan_instr(Cut *c, int i)
{
    IrInstr *x = c->m->entry->instrs[i];
    Plan *q = &c->plans[i];
    for (int k = 0; k < x->n_operands; k++)
        box_whole(&q->req[k], x->operands[k]->shape);
    if (!op_rule(c->m, x, q))
        plan_whole(x, q);
    for (int k = 0; k < x->n_operands; k++)
        if (!q->dropped[k])
            ask(c, x->operands[k], &q->req[k]);
}

/* False when some entry instruction is not an array, or calls outside the
 * entry's reach (nothing to cut there). */
static bool cut_new(IrModule *m, int64_t index, Cut *c)
{
    IrComputation *e = m->entry;
    for (int i = 0; i < e->n_instrs; i++)
        if (!ir_shape_is_array(e->instrs[i]->shape) || e->instrs[i]->shape->dim_kind)
            return false;
    c->m = m;
    c->n_plans = e->n_instrs;
    c->plans = xcalloc((size_t)e->n_instrs + 1, sizeof *c->plans);
    c->pos = xcalloc((size_t)m->next_instr_id + 1, sizeof *c->pos);
    for (int i = 0; i < e->n_instrs; i++) {
        IrInstr *x = e->instrs[i];
        c->pos[x->id] = i;
        c->plans[i].req = xcalloc((size_t)x->n_operands + 1, sizeof *c->plans[i].req);
        c->plans[i].dropped = xcalloc((size_t)x->n_operands + 1, sizeof *c->plans[i].dropped);
    }
    const IrShape *rs = e->root->shape;
    Box *root = &c->plans[c->pos[e->root->id]].need;
    for (int d = rs->rank - 1; d >= 0; d--) {
        root->lo[d] = index % rs->dims[d];
        root->hi[d] = root->lo[d] + 1;
        index /= rs->dims[d];
    }
    c->plans[c->pos[e->root->id]].needed = true;
    for (int i = e->n_instrs - 1; i >= 0; i--)
        if (c->plans[i].needed)
            plan_instr(c, i);
    return true;
}

static void cut_free(Cut *c)
{
    for (int i = 0; i < c->n_plans; i++) {
        free(c->plans[i].req);
        free(c->plans[i].dropped);
    }
    free(c->plans);
    free(c->pos);
}

/* ---- Rebuilding */

static IrInstr *new_slice(IrModule *m, IrInstr *operand, const int64_t *start, const int64_t *size)
{
    int rank = operand->shape->rank;
    IrShape *s = xmust(ir_shape_new_array(m->arena, operand->shape->type, rank, size));
    IrInstr *x = xmust(ir_instr_new(m, IR_OP_SLICE, ir_unique_name(m->entry, "slice"), s, 1, &operand));
    x->info->n_slice = rank;
    x->info->slice = xmust(arena_alloc(m->arena, ((size_t)rank + 1) * sizeof *x->info->slice));
    for (int d = 0; d < rank; d++)
        x->info->slice[d] = (IrSliceDim){ start[d], start[d] + size[d], 1 };
    return x;
}

/* o (holding box have of its old value) cut to box want, by a slice put in
 * front of user; o itself when they are the same box. */
static IrInstr *fit(IrModule *m, IrInstr *user, IrInstr *o, const Box *have, const Box *want)
{
    int rank = o->shape->rank;
    if (box_equal(have, want, rank))
        return o;
    int64_t start[IR_MAX_RANK], size[IR_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        start[d] = want->lo[d] - have->lo[d];
        size[d] = want->hi[d] - want->lo[d];
    }
    IrInstr *s = new_slice(m, o, start, size);
    ir_computation_insert_before(m->entry, user, s);
    return s;
}

static void cut_literal(IrModule *m, IrInstr *x, const Box *b, const IrShape *s)
{
    IrLiteral *old = x->info->literal;
    if (!old || old->elided || !old->data)
        return;
    size_t es = (size_t)ir_type_storage_bytes(s->type);
    IrLiteral *lit = xmust(arena_alloc(m->arena, sizeof *lit));
    void *data = xmust(arena_alloc(m->arena, (size_t)ir_shape_elements(s) * es + 1));
    copy_box(old->data, x->shape->dims, x->shape->rank, b, es, data);
    *lit = (IrLiteral){ .shape = s, .data = data };
    x->info->literal = lit;
}

/* x given its rebuilt shape and the attributes that go with it. */
static void reshape_instr(IrModule *m, IrInstr *x, const Plan *q)
{
    int rank = x->shape->rank;
    IrShape *s = xmust(ir_shape_new_array(m->arena, x->shape->type, rank, q->out));
    if (x->op == IR_OP_CONSTANT)
        cut_literal(m, x, &q->need, s);
    if (x->op == IR_OP_SLICE)
        for (int d = 0; d < rank; d++) {
            IrSliceDim *sd = &x->info->slice[d];
            *sd = (IrSliceDim){ 0, q->req[0].hi[d] - q->req[0].lo[d], sd->stride };
        }
    if (x->op == IR_OP_DYNAMIC_SLICE) {
        int64_t *sizes = xmust(arena_alloc(m->arena, ((size_t)rank + 1) * sizeof *sizes));
        memcpy(sizes, q->out, (size_t)rank * sizeof *sizes);
        ir_instr_set_list(m, x, IR_LIST_DYNAMIC_SLICE_SIZES, (IrIntList){ true, rank, sizes });
    }
    int kept = 0;
    for (int k = 0; k < x->n_operands; k++)
        if (!q->dropped[k])
            x->operands[kept++] = x->operands[k];
    x->n_operands = kept;
    x->shape = s;
}

/* The instruction holding x's need: x, or a slice of it put after x. */
static IrInstr *select_need(IrModule *m, IrInstr *x, IrInstr *next, const Plan *q)
{
    int rank = x->shape->rank;
    bool all = true;
    int64_t size[IR_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        size[d] = q->need.hi[d] - q->need.lo[d];
        all &= q->sel[d] == 0 && size[d] == q->out[d];
    }
    if (all)
        return x;
    IrInstr *s = new_slice(m, x, q->sel, size);
    if (next)
        ir_computation_insert_before(m->entry, next, s);
    else
        ir_computation_append(m->entry, s);
    return s;
}

/* Rebuilds c->m as planned.  Operands are read through cur[] (the
 * instruction now holding each old one's need). */
static void rebuild(Cut *c)
{
    IrComputation *e = c->m->entry;
    int n = e->n_instrs;
    IrInstr **old = xcalloc((size_t)n + 1, sizeof *old), **cur = xcalloc((size_t)n + 1, sizeof *cur);
    memcpy(old, e->instrs, (size_t)n * sizeof *old);
    for (int i = 0; i < n; i++) {
        IrInstr *x = old[i];
        Plan *q = &c->plans[i];
        if (!q->needed)
            continue;
        for (int k = 0; k < x->n_operands; k++) {
            int j = c->pos[x->operands[k]->id];
            if (!q->dropped[k])
                x->operands[k] = fit(c->m, x, cur[j], &c->plans[j].need, &q->req[k]);
        }
        if (!q->whole)
            reshape_instr(c->m, x, q);
        cur[i] = select_need(c->m, x, i + 1 < n ? old[i + 1] : NULL, q);
    }
    e->root = cur[c->pos[e->root->id]];
    free(old);
    free(cur);
}

/* ---- The cut */

/* Elements the planned instructions compute, against the whole module's. */
static void count_elements(const Cut *c, int64_t *planned, int64_t *whole)
{
    const IrComputation *e = c->m->entry;
    for (int i = 0; i < e->n_instrs; i++) {
        const Plan *q = &c->plans[i];
        if (!q->needed)
            continue;
        int64_t n = 1;
        for (int d = 0; d < e->instrs[i]->shape->rank; d++)
            n *= q->out[d];
        *planned += n;
        *whole += ir_shape_elements(e->instrs[i]->shape);
    }
}

/* Both modules' parameters ask for the union of their boxes (shared inputs);
 * one neither reads keeps its whole shape.  True when the pair then
 * computes fewer elements than before. */
static bool share_parameters(Cut *b, Cut *a, int n)
{
    for (int p = 0; p < n; p++) {
        IrInstr *xb = b->m->entry->params[p], *xa = a->m->entry->params[p];
        Plan *qb = &b->plans[b->pos[xb->id]], *qa = &a->plans[a->pos[xa->id]];
        if (qa->needed && qb->needed)
            box_cover(&qb->need, &qa->need, xb->shape->rank);
        else if (qa->needed)
            qb->need = qa->need;
        else if (!qb->needed)
            box_whole(&qb->need, xb->shape);
        qb->needed = qa->needed = true;
        qa->need = qb->need;
        for (int d = 0; d < xb->shape->rank; d++)
            qa->out[d] = qb->out[d] = qb->need.hi[d] - qb->need.lo[d];
    }
    int64_t planned = 0, whole = 0;
    count_elements(b, &planned, &whole);
    count_elements(a, &planned, &whole);
    return planned < whole;
}

/* The inputs cut to the parameters' boxes, as values of fresh's shapes. */
static bool cut_inputs(const CheckShrink *s, const Box *boxes, const IrModule *fresh, Value **in, Error *err)
{
    for (int p = 0; p < s->n_inputs; p++) {
        const Value *v = s->inputs[p];
        const IrShape *ps = fresh->entry->params[p]->shape;
        if (!(in[p] = value_new_array(ps, err)))
            return false;
        copy_box(v->data, v->shape->dims, v->shape->rank, &boxes[p], (size_t)ir_type_storage_bytes(ps->type),
                 in[p]->data);
    }
    return true;
}

/* Plans both modules, rebuilds them and records the parameters' boxes;
 * false when nothing gets smaller. */
static bool plan_and_rebuild(IrModule *mb, IrModule *ma, int64_t index, int n_params, Box *boxes)
{
    Cut b = { 0 }, a = { 0 };
    bool ok = cut_new(mb, index, &b) && cut_new(ma, index, &a) && share_parameters(&b, &a, n_params);
    if (ok) {
        for (int p = 0; p < n_params; p++)
            boxes[p] = b.plans[b.pos[mb->entry->params[p]->id]].need;
        rebuild(&b);
        rebuild(&a);
    }
    cut_free(&b);
    cut_free(&a);
    return ok;
}

/* A rebuilt module through its text, verified (m is freed); NULL when it
 * does not verify. */
static IrModule *finish(IrModule *m, Error *err)
{
    ir_module_remove_dead(m);
    ir_module_drop_entry_layout(m);
    return check_shrink_fresh(m, err);
}

bool check_shrink_to_box(CheckShrink *s, int64_t index, Error *err)
{
    const IrShape *rs = s->before->entry->root->shape;
    if (!ir_shape_is_array(rs) || index < 0 || index >= ir_shape_elements(rs) ||
        !ir_shape_equal(rs, s->after->entry->root->shape) || s->before->entry->n_params != s->n_inputs ||
        s->after->entry->n_params != s->n_inputs)
        return false;
    IrModule *mb = ir_module_copy(s->before, err), *ma = mb ? ir_module_copy(s->after, err) : NULL;
    IrModule *fb = NULL, *fa = NULL;
    Box *boxes = xcalloc((size_t)s->n_inputs + 1, sizeof *boxes);
    Value **in = xcalloc((size_t)s->n_inputs + 1, sizeof *in);
    bool ok = ma && plan_and_rebuild(mb, ma, index, s->n_inputs, boxes);
    if (ok) {
        fb = finish(mb, err);
        fa = finish(ma, err);
        mb = ma = NULL;
        ok = fb && fa && cut_inputs(s, boxes, fb, in, err);
    }
    free(boxes);
    ir_module_free(mb);
    ir_module_free(ma);
    if (ok) {
        check_shrink_install(s, fb, fa, in);
        return true;
    }
    if (err && err->code != ERR_NOMEM)
        *err = (Error){ 0 };    /* a cut that does not verify is a cut not made: the pair stays as it was */
    for (int p = 0; p < s->n_inputs; p++)
        value_release(in[p]);
    free(in);
    ir_module_free(fb);
    ir_module_free(fa);
    return false;
}
