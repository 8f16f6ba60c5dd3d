/* prove_run.c: one module's run for --prove, concrete and symbolic in
 * lockstep.  Every instruction is evaluated twice on this rank: by the
 * interpreter on the values (the concrete run, which takes every
 * data-dependent decision) and on the hashes of its operands by the rules
 * of prove_ops.c.  Data movement runs the interpreter's own kernels on the
 * shadows (c128 elements), so hashes move exactly as values do.  Control
 * flow follows the concrete values: a loop's trip count, a conditional's
 * branch, dynamic-slice and gather indices.  A decision made on a value that
 * depends on an entry parameter (its hash is tainted) is counted: the proof
 * then holds for the inputs that make the same decisions. */
#include "prove_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- Shadow shapes, by the address of the shape they shadow */

typedef struct ShadowMap {
    const IrShape **keys;
    IrShape **vals;
    size_t cap, n;
} ShadowMap;

static size_t slot_of(const void *p, size_t cap)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 17;
    x *= 0x9e3779b97f4a7c15ull;
    return (size_t)(x >> 20) & (cap - 1);
}

const IrShape *prove_shadow(ProveRun *r, const IrShape *s)
{
    ShadowMap *m = r->shadows;
    if (!m) {
        m = r->shadows = xcalloc(1, sizeof *m);
        m->cap = 256;
        m->keys = xcalloc(m->cap, sizeof *m->keys);
        m->vals = xcalloc(m->cap, sizeof *m->vals);
    }
    if (2 * (m->n + 1) > m->cap) {
        ShadowMap g = { xcalloc(2 * m->cap, sizeof *g.keys), xcalloc(2 * m->cap, sizeof *g.vals), 2 * m->cap, m->n };
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                size_t j = slot_of(m->keys[i], g.cap);
                while (g.keys[j])
                    j = (j + 1) & (g.cap - 1);
                g.keys[j] = m->keys[i];
                g.vals[j] = m->vals[i];
            }
        free(m->keys);
        free(m->vals);
        *m = g;
    }
    size_t j = slot_of(s, m->cap);
    while (m->keys[j] && m->keys[j] != s)
        j = (j + 1) & (m->cap - 1);
    if (!m->keys[j]) {
        m->keys[j] = s;
        m->vals[j] = ph_shadow_shape(s);
        m->n++;
    }
    return m->vals[j];
}

static void shadows_free(ProveRun *r)
{
    ShadowMap *m = r->shadows;
    if (!m)
        return;
    for (size_t i = 0; i < m->cap; i++)
        ph_shadow_free(m->vals[i]);
    free(m->keys);
    free(m->vals);
    free(m);
    r->shadows = NULL;
}

typedef struct LikeCtx { ProveRun *r; const Value *v; } LikeCtx;

static Value *like_element(void *ctx, int i, const IrShape *element, Error *err)
{
    (void)element;
    LikeCtx *c = ctx;
    return prove_new_like(c->r, c->v->elements[i], err);
}

Value *prove_new_like(ProveRun *r, const Value *v, Error *err)
{
    const IrShape *s = prove_shadow(r, v->shape);
    if (v->shape->type == IR_TYPE_TUPLE) {
        LikeCtx c = { r, v };
        return value_build_tuple(s, like_element, &c, err);
    }
    if (v->shape->type == IR_TYPE_TOKEN || v->shape->type == IR_TYPE_OPAQUE)
        return value_new_zeroed(s, err);
    return value_new_array(s, err);
}

/* ---- Decisions */

static bool any_tainted(const Value *h)
{
    if (h->shape->type == IR_TYPE_TUPLE) {
        for (int i = 0; i < h->n_elements; i++)
            if (any_tainted(h->elements[i]))
                return true;
        return false;
    }
    if (h->shape->type != IR_TYPE_C128)
        return false;
    const PHash *e = ph_data(h);
    int64_t n = value_elements(h);
    for (int64_t i = 0; i < n; i++)
        if (ph_tainted(e[i]))
            return true;
    return false;
}

static void decide(ProveRun *r, const IrInstr *instr, const Value *h, const char *what)
{
    r->choices++;
    if (!any_tainted(h))
        return;
    if (r->decisions++ == 0)
        snprintf(r->first_decision, sizeof r->first_decision, "%s of %s", what, instr->name);
}

/* ---- Instructions */

static void pval_release(PVal *p)
{
    value_release(p->v);
    value_release(p->h);
    p->v = p->h = NULL;
}

static bool run_comp(ProveRun *r, const IrComputation *c, PVal *const *args, int n_args, PVal *out, Error *err);
static bool eval_one(ProveRun *r, const IrInstr *instr, PVal *const *ops, PVal *out, Error *err);

/* The interpreter's kernel of instr run on the shadows: operand k is the
 * hash value when hashed[k], else the concrete one (indices). */
static bool on_shadows(ProveRun *r, const IrInstr *instr, PVal *const *ops, unsigned hashed, Value **h, Error *err)
{
    IrInstr copy = *instr;
    copy.shape = (IrShape *)prove_shadow(r, instr->shape);
    Value *stack[8] = { 0 }, **args = instr->n_operands <= 8 ? stack : xcalloc((size_t)instr->n_operands, sizeof *args);
    for (int k = 0; k < instr->n_operands; k++)
        args[k] = (k >= 32 || (hashed >> k) & 1) ? ops[k]->h : ops[k]->v;
    bool ok = interp_eval_instr(r->it, &copy, args, h, err);
    if (args != stack)
        free(args);
    return ok;
}

#define ALL_HASHED 0xffffffffu

static bool custom_call_hash(ProveRun *r, const IrInstr *instr, PVal *const *ops, const PVal *res, Value **h,
                             Error *err)
{
    const char *target = instr->info->words[IR_WORD_CUSTOM_CALL_TARGET];
    if (target && interp_custom_call_is_identity(target)) {
        *h = value_retain(ops[0]->h);
        return true;
    }
    /* A target the interpreter computes (TopK, SliceToDynamic, ...): a
     * function of its operands like any op, but no opaque one. */
    if (target && interp_custom_call_known(target))
        return prove_generic(r, instr, ops, res, h, err);
    /* An uninterpreted function: every output element hashes the target,
     * the backend_config (both in the signature), its position and all
     * operand hashes. */
    bool seen = false;
    for (int i = 0; i < r->n_opaque && !seen; i++)
        seen = strcmp(r->opaque[i], target ? target : "") == 0;
    if (!seen && r->n_opaque < (int)(sizeof r->opaque / sizeof r->opaque[0]))
        r->opaque[r->n_opaque++] = target ? target : "";
    return prove_generic(r, instr, ops, res, h, err);
}

/* The hashes of instr's result, whose value res->v is already computed. */
static bool hash_instr(ProveRun *r, const IrInstr *instr, PVal *const *ops, const PVal *res, Value **h, Error *err)
{
    switch ((int)instr->op) {
    case IR_OP_CONSTANT: case IR_OP_IOTA: case IR_OP_REPLICA_ID: case IR_OP_PARTITION_ID:
        return (*h = prove_by_value(r, res->v, PK_CONST, false, err)) != NULL;
    case IR_OP_RNG: case IR_OP_RNG_GET_AND_UPDATE_STATE:
        r->choices++;
        if (r->decisions++ == 0)
            snprintf(r->first_decision, sizeof r->first_decision, "the draws of %s", instr->name);
        return (*h = prove_by_value(r, res->v, PK_RNG, true, err)) != NULL;
    case IR_OP_REDUCE:
        if (instr->n_operands % 2 == 0 && ir_shape_is_array(instr->operands[0]->shape))
            return prove_reduce(r, instr, ops, h, err);
        return prove_generic(r, instr, ops, res, h, err);
    case IR_OP_DOT:
        return prove_dot(r, instr, ops, h, err);
    case IR_OP_RESHAPE: case IR_OP_BITCAST: case IR_OP_TRANSPOSE: case IR_OP_BROADCAST: case IR_OP_SLICE:
    case IR_OP_CONCATENATE: case IR_OP_PAD: case IR_OP_REVERSE:
    case IR_OP_ALL_GATHER: case IR_OP_ALL_GATHER_START: case IR_OP_ALL_TO_ALL:
    case IR_OP_ALL_GATHER_DONE: case IR_OP_ALL_REDUCE_DONE: case IR_OP_COLLECTIVE_PERMUTE_DONE:
    case IR_OP_ASYNC_DONE:
        return on_shadows(r, instr, ops, ALL_HASHED, h, err);
    case IR_OP_COLLECTIVE_PERMUTE: case IR_OP_COLLECTIVE_PERMUTE_START: case IR_OP_COLLECTIVE_BROADCAST:
        if (!on_shadows(r, instr, ops, ALL_HASHED, h, err))
            return false;
        prove_fix_zero_hashes(r, *h, res->v);
        return true;
    case IR_OP_DYNAMIC_SLICE:
        decide(r, instr, ops[instr->n_operands > 1 ? 1 : 0]->h, "the start indices");
        for (int k = 2; k < instr->n_operands; k++)
            decide(r, instr, ops[k]->h, "the start indices");
        return on_shadows(r, instr, ops, 1u, h, err);
    case IR_OP_DYNAMIC_UPDATE_SLICE:
        for (int k = 2; k < instr->n_operands; k++)
            decide(r, instr, ops[k]->h, "the start indices");
        return on_shadows(r, instr, ops, 3u, h, err);
    case IR_OP_GATHER:
        decide(r, instr, ops[1]->h, "the indices");
        return on_shadows(r, instr, ops, 1u, h, err);
    case IR_OP_ALL_REDUCE: case IR_OP_ALL_REDUCE_START: case IR_OP_REDUCE_SCATTER:
        return prove_all_reduce(r, instr, ops, res, h, err);
    case IR_OP_TUPLE: {
        Value **el = xcalloc((size_t)(instr->n_operands ? instr->n_operands : 1), sizeof *el);
        for (int k = 0; k < instr->n_operands; k++)
            el[k] = value_retain(ops[k]->h);
        *h = value_new_tuple(prove_shadow(r, instr->shape), instr->n_operands, el, err);
        free(el);
        return *h != NULL;
    }
    case IR_OP_GET_TUPLE_ELEMENT:
        *h = value_retain(ops[0]->h->elements[instr->ints[IR_INT_INDEX].v]);
        return true;
    case IR_OP_COPY: case IR_OP_OPT_BARRIER: case IR_OP_ADD_DEPENDENCY: case IR_OP_DOMAIN:
    case IR_OP_ASYNC_UPDATE: case IR_OP_COPY_START: case IR_OP_COPY_DONE:
        *h = value_retain(ops[0]->h);
        return true;
    case IR_OP_AFTER_ALL:
        return (*h = prove_new_like(r, res->v, err)) != NULL;
    case IR_OP_CUSTOM_CALL:
        return custom_call_hash(r, instr, ops, res, h, err);
    case IR_OP_SEND: case IR_OP_RECV: case IR_OP_SEND_DONE: case IR_OP_RECV_DONE: case IR_OP_RAGGED_ALL_TO_ALL:
    case IR_OP_INFEED: case IR_OP_OUTFEED:
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "--prove: %s is not modelled",
                         ir_opcode_name(instr->op));
    default:
        if (prove_is_elementwise(instr))
            return prove_elementwise(r, instr, ops, h, err);
        return prove_generic(r, instr, ops, res, h, err);
    }
}

static bool eval_async_start(ProveRun *r, const IrInstr *instr, PVal *const *ops, PVal *out, Error *err)
{
    PVal res = { 0 };
    bool ok;
    if (instr->info->async_wrapped == IR_OP_ASYNC_START) {
        const IrComputation *callee = instr->info->comps[IR_COMP_CALLS];
        if (!callee)
            return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "unsupported op: async-start without calls=");
        ok = run_comp(r, callee, ops, instr->n_operands, &res, err);
    } else {
        IrInstr wrapped;
        IrInstrInfo info;
        interp_async_wrapped_op(instr, &wrapped, &info);
        ok = eval_one(r, &wrapped, ops, &res, err);
    }
    if (!ok)
        return false;
    Value **v = xcalloc((size_t)instr->n_operands + 1, sizeof *v), **h = xcalloc((size_t)instr->n_operands + 1, sizeof *h);
    for (int k = 0; k < instr->n_operands; k++) {
        v[k] = ops[k]->v;
        h[k] = ops[k]->h;
    }
    /* The same tuple of hashes: the instruction seen with its shadow shape. */
    IrInstr shadow = *instr;
    shadow.shape = (IrShape *)prove_shadow(r, instr->shape);
    bool made = interp_wrap_start(instr, v, value_retain(res.v), &out->v, err) &&
                interp_wrap_start(&shadow, h, value_retain(res.h), &out->h, err);
    if (made)
        prove_fix_zero_hashes(r, out->h, out->v);
    free(v);
    free(h);
    pval_release(&res);
    if (!made) {
        pval_release(out);
        return false;
    }
    return true;
}

static bool eval_while(ProveRun *r, const IrInstr *instr, PVal *const *ops, PVal *out, Error *err)
{
    PVal state = { value_retain(ops[0]->v), value_retain(ops[0]->h) };
    for (;;) {
        PVal cond = { 0 }, *arg = &state;
        if (!run_comp(r, instr->info->comps[IR_COMP_CONDITION], &arg, 1, &cond, err))
            goto fail;
        bool go_on = ir_elem_get_i64(cond.v->shape->type, cond.v->data) != 0;
        decide(r, instr, cond.h, "the trip count");
        pval_release(&cond);
        if (!go_on)
            break;
        PVal next = { 0 };
        if (!run_comp(r, instr->info->comps[IR_COMP_BODY], &arg, 1, &next, err))
            goto fail;
        pval_release(&state);
        state = next;
    }
    *out = state;
    return true;
fail:
    pval_release(&state);
    return false;
}

static bool eval_conditional(ProveRun *r, const IrInstr *instr, PVal *const *ops, PVal *out, Error *err)
{
    const IrComputation *branch;
    const Value *sel = ops[0]->v;
    int64_t index = ir_elem_get_i64(sel->shape->type, sel->data);
    if (sel->shape->type == IR_TYPE_PRED) {
        branch = index ? instr->info->comps[IR_COMP_TRUE_COMPUTATION] : instr->info->comps[IR_COMP_FALSE_COMPUTATION];
        index = index ? 0 : 1;
    } else {
        if (index < 0 || index >= instr->info->n_branches)
            index = instr->info->n_branches - 1;
        branch = instr->info->branches[index];
    }
    decide(r, instr, ops[0]->h, "the branch");
    return run_comp(r, branch, &ops[1 + index], 1, out, err);
}

static bool eval_one(ProveRun *r, const IrInstr *instr, PVal *const *ops, PVal *out, Error *err)
{
    switch ((int)instr->op) {
    case IR_OP_WHILE:
        return eval_while(r, instr, ops, out, err);
    case IR_OP_CONDITIONAL:
        return eval_conditional(r, instr, ops, out, err);
    case IR_OP_CALL:
        return run_comp(r, instr->info->comps[IR_COMP_TO_APPLY], ops, instr->n_operands, out, err);
    case IR_OP_FUSION:
        return run_comp(r, instr->info->comps[IR_COMP_CALLS], ops, instr->n_operands, out, err);
    case IR_OP_ASYNC_START:
        return eval_async_start(r, instr, ops, out, err);
    default:
        break;
    }
    Value *stack[8] = { 0 }, **args = instr->n_operands <= 8 ? stack : xcalloc((size_t)instr->n_operands, sizeof *args);
    for (int k = 0; k < instr->n_operands; k++)
        args[k] = ops[k]->v;
    bool ok = interp_eval_instr(r->it, instr, args, &out->v, err);
    if (args != stack)
        free(args);
    const IrInstr *outer = r->current;
    r->current = instr;
    ok = ok && hash_instr(r, instr, ops, out, &out->h, err);
    r->current = outer;
    if (!ok)
        pval_release(out);
    return ok;
}

static bool run_comp(ProveRun *r, const IrComputation *c, PVal *const *args, int n_args, PVal *out, Error *err)
{
    int n = c->n_instrs;
    int *pos = xcalloc((size_t)c->module->next_instr_id + 1, sizeof *pos);
    int *last = xcalloc((size_t)(n ? n : 1), sizeof *last);
    for (int i = 0; i < n; i++) {
        pos[c->instrs[i]->id] = i;
        last[i] = i;
    }
    int max_ops = 1;
    for (int i = 0; i < n; i++) {
        const IrInstr *in = c->instrs[i];
        for (int k = 0; k < in->n_operands; k++)
            last[pos[in->operands[k]->id]] = i;
        if (in->n_operands > max_ops)
            max_ops = in->n_operands;
    }
    int root = pos[c->root->id];
    last[root] = n;
    PVal *vals = xcalloc((size_t)(n ? n : 1), sizeof *vals);
    PVal **ops = xcalloc((size_t)max_ops, sizeof *ops);
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        const IrInstr *in = c->instrs[i];
        for (int k = 0; k < in->n_operands; k++)
            ops[k] = &vals[pos[in->operands[k]->id]];
        if (in->op == IR_OP_PARAMETER) {
            int p = (int)in->info->parameter_number;
            if (p >= n_args)
                ok = error_set(err, ERR_MISMATCH, in->info->loc, "parameter(%d) was not given", p);
            else
                vals[i] = (PVal){ value_retain(args[p]->v), value_retain(args[p]->h) };
        } else {
            ok = eval_one(r, in, ops, &vals[i], err);
        }
        for (int k = 0; k < in->n_operands && ok; k++) {
            int p = pos[in->operands[k]->id];
            if (last[p] == i)
                pval_release(&vals[p]);
        }
        if (ok && last[i] == i)
            pval_release(&vals[i]);
    }
    if (ok)
        *out = (PVal){ value_retain(vals[root].v), value_retain(vals[root].h) };
    for (int i = 0; i < n; i++)
        pval_release(&vals[i]);
    free(vals);
    free(ops);
    free(pos);
    free(last);
    return ok;
}

/* ---- The entry */

typedef struct LeafCtx { ProveRun *r; const Value *v; int *leaf; } LeafCtx;

static Value *param_hashes(ProveRun *r, const Value *v, int *leaf, Error *err);

static Value *param_element(void *ctx, int i, const IrShape *element, Error *err)
{
    (void)element;
    LeafCtx *c = ctx;
    return param_hashes(c->r, c->v->elements[i], c->leaf, err);
}

static Value *param_hashes(ProveRun *r, const Value *v, int *leaf, Error *err)
{
    if (v->shape->type == IR_TYPE_TUPLE) {
        LeafCtx c = { r, v, leaf };
        return value_build_tuple(prove_shadow(r, v->shape), param_element, &c, err);
    }
    Value *h = prove_new_like(r, v, err);
    if (!h || v->shape->type == IR_TYPE_TOKEN || v->shape->type == IR_TYPE_OPAQUE)
        return h;
    PHash *e = ph_data(h);
    int64_t n = value_elements(h);
    for (int64_t i = 0; i < n; i++)
        e[i] = ph_param(*leaf, r->dev.rank, i);
    (*leaf)++;
    return h;
}

bool prove_run_entry(ProveRun *r, Value *const *inputs, int n, PVal *out, Error *err)
{
    PVal *args = xcalloc((size_t)(n ? n : 1), sizeof *args);
    PVal **argp = xcalloc((size_t)(n ? n : 1), sizeof *argp);
    int leaf = 0;
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        args[i].v = value_retain(inputs[i]);
        ok = (args[i].h = param_hashes(r, inputs[i], &leaf, err)) != NULL;
        argp[i] = &args[i];
    }
    ok = ok && run_comp(r, r->m->entry, argp, n, out, err);
    for (int i = 0; i < n; i++)
        pval_release(&args[i]);
    free(args);
    free(argp);
    return ok;
}

void prove_run_free(ProveRun *r)
{
    shadows_free(r);
}
