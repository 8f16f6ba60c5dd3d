/* prove_ops.c: how --prove hashes the array ops that compute.
 *
 * - Element-wise ops: each element hashes (opcode, result type, semantic
 *   attributes, operand hashes in order).  Operands are put in a canonical
 *   order only for the ops prove_commutes() names, where the interpreter's
 *   result is bitwise the same both ways (tests/check/test_prove.c checks
 *   it over special values).
 * - reduce: acc = init, then acc = f(acc, x) over the reduced elements in
 *   row-major order of the reduced dims: the reference order eval_reduce.c
 *   promises to the bit, its fast paths included.  f is hashed as the
 *   element-wise ops of the reducer, so reduce(add) of x and y hashes like
 *   add(add(init, x), y); a reducer with other ops is one opaque
 *   application (its fingerprint and arguments).
 * - dot: each output element hashes the dot's signature (shapes, dimension
 *   numbers, types), its position and the ordered hashes of its lhs row
 *   and rhs column.  BLAS's summation order may depend on the shapes and
 *   the position, never on other elements, so equal hashes give equal bits;
 *   a dot of other shapes never hashes alike, even where it would compute
 *   the same sums.
 * - Anything else (convolution, fft, sort, scatter, reduce-window, ...):
 *   prove_generic, the signature, the element position and a digest of every
 *   operand element: true for any deterministic op, equal only for the same
 *   op on the same operands. */
#include "prove_internal.h"

#include <stdlib.h>
#include <string.h>

void prove_note(ProveRun *r, PHash h, int kind, const PHash *kids, int n_kids, int64_t at)
{
    if (!r->record)
        return;
    PNode n = { .key = h, .kind = kind, .n_kids = n_kids > 3 ? -1 : n_kids, .at = at };
    for (int k = 0; k < n_kids && k < 3; k++)
        n.kid[k] = kids[k];
    if (r->current) {
        snprintf(n.instr, sizeof n.instr, "%s", r->current->name);
        n.op = (int32_t)r->current->op;
    }
    ptable_put(r->record, &n);
}

/* ---- Element-wise */

bool prove_is_elementwise(const IrInstr *instr)
{
    /* bitcast-convert is element-wise only between types of one size. */
    bool bitcast = instr->op == IR_OP_BITCAST_CONVERT && instr->n_operands == 1 &&
                   instr->operands[0]->shape->rank == instr->shape->rank;
    if (instr->op == IR_OP_COPY || (!(ir_op_info[instr->op].flags & OPF_ELEMENTWISE) && !bitcast))
        return false;
    if (!ir_shape_is_array(instr->shape))
        return false;
    for (int k = 0; k < instr->n_operands; k++)
        if (!ir_shape_is_array(instr->operands[k]->shape))
            return false;
    return true;
}

bool prove_commutes(IrOpcode op, IrElemType t, IrCompareDir dir)
{
    bool integral = ir_type_is_int(t) || t == IR_TYPE_PRED;
    switch ((int)op) {
    case IR_OP_ADD: case IR_OP_MULTIPLY: case IR_OP_AND: case IR_OP_OR: case IR_OP_XOR:
    case IR_OP_MAXIMUM: case IR_OP_MINIMUM:
        return integral;
    case IR_OP_COMPARE:         /* a pred result: no NaN payload to tell the orders apart */
        return (dir == IR_CMP_EQ || dir == IR_CMP_NE) && !ir_type_is_complex(t);
    default:
        return false;
    }
}

/* What every element of instr's result hashes besides its operands. */
static uint64_t elementwise_signature(ProveRun *r, const IrInstr *instr)
{
    (void)r;
    return ph_elementwise_signature(instr);
}

static void elementwise_loop(ProveRun *r, const IrInstr *instr, uint64_t sig, PHash *out, PHash *const *ops,
                             const int64_t *op_n, int n_ops, int64_t n)
{
    bool swap = n_ops == 2 && prove_commutes(instr->op, instr->operands[0]->shape->type, instr->info->direction);
    for (int64_t e = 0; e < n; e++) {
        PHash in[4];
        for (int k = 0; k < n_ops && k < 4; k++)
            in[k] = ops[k][op_n[k] == 1 ? 0 : e];
        if (swap && (in[1].lo < in[0].lo || (in[1].lo == in[0].lo && in[1].hi < in[0].hi))) {
            PHash t = in[0];
            in[0] = in[1];
            in[1] = t;
        }
        PMix m;
        pmix_init(&m, sig);
        for (int k = 0; k < n_ops; k++)
            pmix_hash(&m, in[k]);
        out[e] = pmix_done(&m);
        prove_note(r, out[e], (int)instr->op, in, n_ops, e);
    }
}

bool prove_elementwise(ProveRun *r, const IrInstr *instr, PVal *const *args, Value **h, Error *err)
{
    int n_ops = instr->n_operands;
    if (n_ops > 4)
        return error_set(err, ERR_INTERNAL, instr->info->loc, "prove: %s with %d operands", instr->name, n_ops);
    Value *out = value_new_array(prove_shadow(r, instr->shape), err);
    if (!out)
        return false;
    PHash *ops[4];
    int64_t op_n[4];
    for (int k = 0; k < n_ops; k++) {
        ops[k] = ph_data(args[k]->h);
        op_n[k] = value_elements(args[k]->h);
    }
    elementwise_loop(r, instr, elementwise_signature(r, instr), ph_data(out), ops, op_n, n_ops, value_elements(out));
    *h = out;
    return true;
}

/* ---- Reducers */

/* Can comp be hashed instruction by instruction (scalars of element-wise
 * ops, constants, tuples)? */
static bool reducer_is_elementwise(const IrComputation *comp)
{
    for (int i = 0; i < comp->n_instrs; i++) {
        const IrInstr *in = comp->instrs[i];
        bool ok = in->op == IR_OP_PARAMETER || in->op == IR_OP_TUPLE || in->op == IR_OP_GET_TUPLE_ELEMENT ||
                  (in->op == IR_OP_CONSTANT && ir_shape_is_array(in->shape) && ir_shape_elements(in->shape) == 1 &&
                   in->info->literal && !in->info->literal->elided && in->info->literal->data) ||
                  (prove_is_elementwise(in) && in->shape->rank == 0);
        if (!ok || (in->op == IR_OP_PARAMETER && !ir_shape_is_array(in->shape)))
            return false;
    }
    return comp->n_params > 0;
}

void prove_apply(ProveRun *r, const IrComputation *comp, int k, PHash **acc, PHash *const *x, int64_t n)
{
    IrOpcode trivial = interp_trivial_reducer(comp);
    if (k == 1 && trivial != IR_OP_COUNT) {
        PHash *ops[2] = { acc[0], x[0] };
        int64_t op_n[2] = { n, n };
        elementwise_loop(r, comp->root, elementwise_signature(r, comp->root), acc[0], ops, op_n, 2, n);
        return;
    }
    if (reducer_is_elementwise(comp) && comp->n_params == 2 * k) {
        /* Instruction by instruction over the n elements.  vals[i]: an
         * array of n hashes (scalar instructions), or NULL for a tuple,
         * whose elements are its operands'. */
        PHash **vals = xcalloc((size_t)comp->n_instrs, sizeof *vals);
        bool *own = xcalloc((size_t)comp->n_instrs, sizeof *own);
        int *pos = xcalloc((size_t)comp->module->next_instr_id + 1, sizeof *pos);
        for (int i = 0; i < comp->n_instrs; i++)
            pos[comp->instrs[i]->id] = i;
        for (int i = 0; i < comp->n_instrs; i++) {
            const IrInstr *in = comp->instrs[i];
            if (in->op == IR_OP_PARAMETER) {
                int p = (int)in->info->parameter_number;
                vals[i] = p < k ? acc[p] : x[p - k];
            } else if (in->op == IR_OP_CONSTANT) {
                vals[i] = xcalloc((size_t)n, sizeof **vals);
                own[i] = true;
                PHash c = ph_const(in->shape->type, in->info->literal->data, false);
                for (int64_t e = 0; e < n; e++)
                    vals[i][e] = c;
            } else if (in->op == IR_OP_GET_TUPLE_ELEMENT) {
                const IrInstr *t = in->operands[0];
                vals[i] = t->op == IR_OP_TUPLE ? vals[pos[t->operands[in->ints[IR_INT_INDEX].v]->id]] : NULL;
            } else if (in->op != IR_OP_TUPLE) {
                vals[i] = xcalloc((size_t)n, sizeof **vals);
                own[i] = true;
                PHash *ops[4];
                int64_t op_n[4];
                for (int j = 0; j < in->n_operands && j < 4; j++) {
                    ops[j] = vals[pos[in->operands[j]->id]];
                    op_n[j] = n;
                }
                elementwise_loop(r, in, elementwise_signature(r, in), vals[i], ops, op_n, in->n_operands, n);
            }
        }
        /* The results, copied out before the temporaries go (acc may be an operand). */
        PHash **res = xcalloc((size_t)k, sizeof *res);
        const IrInstr *root = comp->root;
        for (int j = 0; j < k; j++) {
            const IrInstr *src = root->op == IR_OP_TUPLE ? root->operands[j] : root;
            res[j] = xcalloc((size_t)n, sizeof **res);
            PHash *v = vals[pos[src->id]];
            if (v)
                memcpy(res[j], v, (size_t)n * sizeof *v);
        }
        for (int j = 0; j < k; j++) {
            memcpy(acc[j], res[j], (size_t)n * sizeof **res);
            free(res[j]);
        }
        free(res);
        for (int i = 0; i < comp->n_instrs; i++)
            if (own[i])
                free(vals[i]);
        free(vals);
        free(own);
        free(pos);
        return;
    }
    /* Opaque: output j hashes the reducer's fingerprint and every argument. */
    uint64_t fp = ph_computation_fingerprint(comp);
    for (int64_t e = 0; e < n; e++) {
        PHash out[8];
        for (int j = 0; j < k && j < 8; j++) {
            PMix m;
            pmix_init(&m, PK_APPLY);
            pmix_u64(&m, fp);
            pmix_u64(&m, (uint64_t)j);
            for (int a = 0; a < k; a++) {
                pmix_hash(&m, acc[a][e]);
                pmix_hash(&m, x[a][e]);
            }
            out[j] = pmix_done(&m);
        }
        for (int j = 0; j < k && j < 8; j++) {
            PHash kids[2] = { acc[j][e], x[j][e] };
            acc[j][e] = out[j];
            prove_note(r, out[j], PK_APPLY, kids, 2, e);
        }
    }
}

/* ---- reduce */

static void row_major_strides(const IrShape *s, int64_t *strides)
{
    int64_t acc = 1;
    for (int d = s->rank - 1; d >= 0; d--) {
        strides[d] = acc;
        acc *= s->dims[d];
    }
}

/* Leaf i of a value (the value itself when it is an array). */
bool prove_reduce(ProveRun *r, const IrInstr *instr, PVal *const *args, Value **h, Error *err)
{
    int k = instr->n_operands / 2;
    const IrComputation *comp = instr->info->comps[IR_COMP_TO_APPLY];
    const IrIntList *dl = &instr->lists[IR_LIST_DIMENSIONS];
    if (k < 1 || k > 8 || !comp)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "--prove: reduce with %d inputs", k);
    const IrShape *x = args[0]->h->shape;
    bool reduced[IR_MAX_RANK] = { false };
    for (int i = 0; i < dl->n; i++)
        if (dl->v[i] >= 0 && dl->v[i] < x->rank)
            reduced[dl->v[i]] = true;
    int64_t strides[IR_MAX_RANK];
    row_major_strides(x, strides);
    /* Output elements: their kept offset into the input; reduced positions: their offset. */
    int64_t n_out = 1, n_red = 1;
    int64_t kdims[IR_MAX_RANK], rdims[IR_MAX_RANK], kstr[IR_MAX_RANK], rstr[IR_MAX_RANK];
    int nk = 0, nr = 0;
    for (int d = 0; d < x->rank; d++) {
        if (reduced[d]) {
            rdims[nr] = x->dims[d];
            rstr[nr++] = strides[d];
            n_red *= x->dims[d];
        } else {
            kdims[nk] = x->dims[d];
            kstr[nk++] = strides[d];
            n_out *= x->dims[d];
        }
    }
    int64_t *koff = xcalloc((size_t)(n_out ? n_out : 1), sizeof *koff);
    int64_t idx[IR_MAX_RANK] = { 0 };
    for (int64_t o = 0; o < n_out; o++) {
        int64_t off = 0;
        for (int d = 0; d < nk; d++)
            off += idx[d] * kstr[d];
        koff[o] = off;
        for (int d = nk - 1; d >= 0; d--) {
            if (++idx[d] < kdims[d])
                break;
            idx[d] = 0;
        }
    }
    PHash *acc[8], *xs[8];
    Value *parts[8] = { 0 };
    bool ok = true;
    for (int j = 0; j < k && ok; j++) {
        const IrShape *ps = instr->shape->type == IR_TYPE_TUPLE ? instr->shape->elements[j] : instr->shape;
        ok = (parts[j] = value_new_array(prove_shadow(r, ps), err)) != NULL;
        if (ok) {
            acc[j] = ph_data(parts[j]);
            PHash init = ph_data(args[k + j]->h)[0];
            for (int64_t o = 0; o < n_out; o++)
                acc[j][o] = init;
            xs[j] = xcalloc((size_t)(n_out ? n_out : 1), sizeof **xs);
        }
    }
    memset(idx, 0, sizeof idx);
    for (int64_t p = 0; p < n_red && ok && n_out > 0; p++) {
        int64_t roff = 0;
        for (int d = 0; d < nr; d++)
            roff += idx[d] * rstr[d];
        for (int j = 0; j < k; j++) {
            const PHash *in = ph_data(args[j]->h);
            for (int64_t o = 0; o < n_out; o++)
                xs[j][o] = in[koff[o] + roff];
        }
        prove_apply(r, comp, k, acc, xs, n_out);
        for (int d = nr - 1; d >= 0; d--) {
            if (++idx[d] < rdims[d])
                break;
            idx[d] = 0;
        }
    }
    for (int j = 0; j < k; j++)
        if (parts[j])
            free(xs[j]);
    free(koff);
    if (!ok) {
        for (int j = 0; j < k; j++)
            value_release(parts[j]);
        return false;
    }
    if (instr->shape->type != IR_TYPE_TUPLE) {
        *h = parts[0];
        return true;
    }
    return (*h = value_new_tuple(prove_shadow(r, instr->shape), k, parts, err)) != NULL;
}

/* ---- dot */

static bool in_list(const IrIntList *l, int d, int *at)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == d) {
            *at = i;
            return true;
        }
    return false;
}

/* Rows of one operand: for every element, its (batch, free) row index
 * b * F + f; F is the product of the free dims. */
static int64_t *row_index(const IrShape *s, const IrIntList *batch, const IrIntList *contract, int64_t *n_rows,
                          int64_t *n_free)
{
    int64_t bdims[IR_MAX_RANK] = { 0 };
    int64_t free_prod = 1, batch_prod = 1;
    for (int i = 0; i < batch->n; i++)
        bdims[i] = s->dims[batch->v[i]];
    for (int d = 0; d < s->rank; d++) {
        int at;
        if (in_list(batch, d, &at))
            batch_prod *= s->dims[d];
        else if (!in_list(contract, d, &at))
            free_prod *= s->dims[d];
    }
    int64_t n = ir_shape_elements(s);
    int64_t *rows = xcalloc((size_t)(n ? n : 1), sizeof *rows);
    int64_t idx[IR_MAX_RANK] = { 0 };
    for (int64_t e = 0; e < n; e++) {
        int64_t b = 0, f = 0;
        for (int i = 0; i < batch->n; i++)
            b = b * bdims[i] + idx[batch->v[i]];
        for (int d = 0; d < s->rank; d++) {
            int at;
            if (!in_list(batch, d, &at) && !in_list(contract, d, &at))
                f = f * s->dims[d] + idx[d];
        }
        rows[e] = b * free_prod + f;
        for (int d = s->rank - 1; d >= 0; d--) {
            if (++idx[d] < s->dims[d])
                break;
            idx[d] = 0;
        }
    }
    *n_rows = batch_prod * free_prod;
    *n_free = free_prod;
    return rows;
}

/* The ordered hash of every row of an operand. */
static PHash *row_hashes(const Value *h, const IrIntList *batch, const IrIntList *contract, uint64_t sig, int side,
                         int64_t *n_free, int64_t *n_rows)
{
    int64_t *rows = row_index(h->shape, batch, contract, n_rows, n_free);
    PMix *mix = xcalloc((size_t)(*n_rows ? *n_rows : 1), sizeof *mix);
    for (int64_t i = 0; i < *n_rows; i++) {
        pmix_init(&mix[i], PK_ROW);
        pmix_u64(&mix[i], sig + (uint64_t)side);
    }
    const PHash *in = ph_data(h);
    int64_t n = value_elements(h);
    for (int64_t e = 0; e < n; e++)
        pmix_hash(&mix[rows[e]], in[e]);
    PHash *out = xcalloc((size_t)(*n_rows ? *n_rows : 1), sizeof *out);
    for (int64_t i = 0; i < *n_rows; i++)
        out[i] = pmix_done(&mix[i]);
    free(mix);
    free(rows);
    return out;
}

bool prove_dot(ProveRun *r, const IrInstr *instr, PVal *const *args, Value **h, Error *err)
{
    const IrIntList *lb = &instr->lists[IR_LIST_LHS_BATCH_DIMS], *lc = &instr->lists[IR_LIST_LHS_CONTRACTING_DIMS];
    const IrIntList *rb = &instr->lists[IR_LIST_RHS_BATCH_DIMS], *rc = &instr->lists[IR_LIST_RHS_CONTRACTING_DIMS];
    /* The signature: the dot's own and its operands' shapes. */
    PMix sm;
    pmix_init(&sm, PK_DOT);
    pmix_u64(&sm, ph_instr_signature(instr));
    for (int k = 0; k < 2; k++) {
        const IrShape *s = args[k]->v->shape;
        pmix_u64(&sm, (uint64_t)s->type);
        pmix_bytes(&sm, s->dims, (size_t)s->rank * sizeof *s->dims);
    }
    uint64_t sig = pmix_done(&sm).lo;
    int64_t M, N, lrows, rrows;
    PHash *L = row_hashes(args[0]->h, lb, lc, sig, 0, &M, &lrows);
    PHash *R = row_hashes(args[1]->h, rb, rc, sig, 1, &N, &rrows);
    Value *out = value_new_array(prove_shadow(r, instr->shape), err);
    int64_t n = out ? value_elements(out) : 0;
    int64_t B = M > 0 && N > 0 ? n / (M * N) : 0;
    if (out && (B * M != lrows || B * N != rrows)) {
        value_release(out);
        out = NULL;
        error_set(err, ERR_INTERNAL, instr->info->loc, "--prove: dot %s: rows do not match its shape", instr->name);
    }
    if (!out) {
        free(L);
        free(R);
        return false;
    }
    PHash *o = ph_data(out);
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                int64_t e = (b * M + i) * N + j;
                PMix m;
                pmix_init(&m, sig);
                pmix_u64(&m, (uint64_t)e);
                pmix_hash(&m, L[b * M + i]);
                pmix_hash(&m, R[b * N + j]);
                o[e] = pmix_done(&m);
                PHash kids[2] = { L[b * M + i], R[b * N + j] };
                prove_note(r, o[e], PK_DOT, kids, 2, e);
            }
    free(L);
    free(R);
    *h = out;
    return true;
}

/* ---- Everything else */

static bool is_data(const Value *leaf)
{
    return leaf->shape->type != IR_TYPE_TOKEN && leaf->shape->type != IR_TYPE_OPAQUE;
}

bool prove_generic(ProveRun *r, const IrInstr *instr, PVal *const *args, const PVal *result, Value **h,
                   Error *err)
{
    PMix d;
    pmix_init(&d, PK_GENERIC);
    pmix_u64(&d, ph_instr_signature(instr));
    for (int k = 0; k < instr->n_operands; k++) {
        int nl = value_leaves(args[k]->h, NULL, 0);
        Value **hl = xcalloc((size_t)nl, sizeof *hl), **vl = xcalloc((size_t)nl, sizeof *vl);
        value_leaves(args[k]->h, hl, nl);
        value_leaves(args[k]->v, vl, nl);
        for (int l = 0; l < nl; l++) {
            const IrShape *s = vl[l]->shape;
            pmix_u64(&d, (uint64_t)s->type);
            pmix_bytes(&d, s->dims, (size_t)s->rank * sizeof *s->dims);
            if (vl[l]->sizes)
                pmix_bytes(&d, vl[l]->sizes, (size_t)s->rank * sizeof *vl[l]->sizes);
            if (!is_data(hl[l]))
                continue;
            const PHash *e = ph_data(hl[l]);
            int64_t n = value_elements(hl[l]);
            for (int64_t i = 0; i < n; i++)
                pmix_hash(&d, e[i]);
        }
        free(hl);
        free(vl);
    }
    PHash digest = pmix_done(&d);
    Value *out = prove_new_like(r, result->v, err);
    if (!out)
        return false;
    int nl = value_leaves(out, NULL, 0);
    Value **ol = xcalloc((size_t)nl, sizeof *ol);
    value_leaves(out, ol, nl);
    for (int l = 0; l < nl; l++) {
        if (!is_data(ol[l]))
            continue;
        PHash *e = ph_data(ol[l]);
        int64_t n = value_elements(ol[l]);
        for (int64_t i = 0; i < n; i++) {
            PMix m;
            pmix_init(&m, digest.lo);
            pmix_hash(&m, digest);
            pmix_u64(&m, (uint64_t)l);
            pmix_u64(&m, (uint64_t)i);
            e[i] = pmix_done(&m);
            prove_note(r, e[i], PK_GENERIC, NULL, 0, i);
        }
    }
    free(ol);
    *h = out;
    return true;
}

Value *prove_by_value(ProveRun *r, const Value *v, int kind, bool taint, Error *err)
{
    Value *out = prove_new_like(r, v, err);
    if (!out)
        return NULL;
    int nl = value_leaves(out, NULL, 0);
    Value **ol = xcalloc((size_t)nl, sizeof *ol), **vl = xcalloc((size_t)nl, sizeof *vl);
    value_leaves(out, ol, nl);
    value_leaves((Value *)v, vl, nl);
    for (int l = 0; l < nl; l++) {
        if (!is_data(ol[l]))
            continue;
        IrElemType t = vl[l]->shape->type;
        size_t es = (size_t)ir_type_storage_bytes(t);
        PHash *e = ph_data(ol[l]);
        const unsigned char *src = vl[l]->data;
        int64_t n = value_elements(ol[l]);
        for (int64_t i = 0; i < n; i++) {
            if (kind == PK_CONST) {
                e[i] = ph_const(t, src + (size_t)i * es, taint);
            } else {
                PMix m;
                pmix_init(&m, (uint64_t)kind);
                pmix_u64(&m, (uint64_t)t);
                pmix_bytes(&m, src + (size_t)i * es, es);
                m.taint = taint ? PH_TAINT : 0;
                e[i] = pmix_done(&m);
                prove_note(r, e[i], kind, NULL, 0, i);
            }
        }
    }
    free(ol);
    free(vl);
    return out;
}
