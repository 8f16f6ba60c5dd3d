/* interp.c: runs computations.  Walks a computation's instructions in order
 * (the verifier guarantees operands come first), dispatches each to its
 * whole-array evaluator, and releases every value right after its last use.
 * Control flow, tuples, constants, device ids and the collective hook live
 * here; the array kernels live in eval_*.c. */
#include "eval.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Per computation: where each value dies. */
typedef struct Plan {
    int n;
    int *last_use;          /* position of the last reader; n for the root */
    int max_operands;
} Plan;

struct Interp {
    const IrModule *m;
    InterpOptions opt;
    InterpTiming timing;
    int *pos;               /* instruction id -> position in its computation */
    Plan **plans;           /* by computation id */
    int n_plans;
    uint64_t rng_calls;     /* eval_rng_next_call */
    /* Without a comm: what this device sent itself (a {0,0} send/recv
     * pair), oldest first, until a recv-done takes it. */
    Value **loopback;
    int64_t *loopback_channel;
    int n_loopback, cap_loopback;
};

bool eval_unsupported(const IrInstr *instr, Error *err)
{
    return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "unsupported op: %s",
                     ir_opcode_name(instr->op));
}

/* ---- Plans */

/* NULL when out of memory. */
static Plan *build_plan(Interp *it, const IrComputation *c)
{
    Plan *plan = xcalloc_try(1, sizeof *plan);
    int *last_use = xcalloc_try((size_t)(c->n_instrs ? c->n_instrs : 1), sizeof(int));
    if (!plan || !last_use) {
        free(plan);
        free(last_use);
        return NULL;
    }
    plan->n = c->n_instrs;
    plan->last_use = last_use;
    for (int i = 0; i < c->n_instrs; i++) {
        it->pos[c->instrs[i]->id] = i;
        plan->last_use[i] = i;      /* unused values die at once */
    }
    for (int i = 0; i < c->n_instrs; i++) {
        const IrInstr *instr = c->instrs[i];
        for (int k = 0; k < instr->n_operands; k++) {
            int p = it->pos[instr->operands[k]->id];
            if (plan->last_use[p] < i)
                plan->last_use[p] = i;
        }
        if (instr->n_operands > plan->max_operands)
            plan->max_operands = instr->n_operands;
    }
    for (int i = 0; i < c->n_instrs; i++)
        if (c->instrs[i] == c->root)
            plan->last_use[i] = c->n_instrs;
    return plan;
}

Interp *interp_new(const IrModule *m, const InterpOptions *opt, Error *err)
{
    value_tune_allocator();
    eval_blas_single_thread();
    Interp *it = xcalloc_try(1, sizeof *it);
    if (!it) {
        error_nomem(err, (IrLoc){ m->file, 0, 0 });
        return NULL;
    }
    it->m = m;
    if (opt)
        it->opt = *opt;
    if (it->opt.device.world <= 0)
        it->opt.device = (InterpDevice){ 0, 1, 1, 1 };
    it->pos = xcalloc_try((size_t)(m->next_instr_id ? m->next_instr_id : 1), sizeof(int));
    it->n_plans = ir_module_max_computation_id(m) + 1;
    it->plans = xcalloc_try((size_t)it->n_plans, sizeof *it->plans);
    bool ok = it->pos && it->plans;
    for (int i = 0; ok && i < m->n_computations; i++)
        ok = (it->plans[m->computations[i]->id] = build_plan(it, m->computations[i])) != NULL;
    if (!ok) {
        interp_free(it);
        error_nomem(err, (IrLoc){ m->file, 0, 0 });
        return NULL;
    }
    return it;
}

void interp_free(Interp *it)
{
    if (!it)
        return;
    for (int i = 0; it->plans && i < it->n_plans; i++)
        if (it->plans[i]) {
            free(it->plans[i]->last_use);
            free(it->plans[i]);
        }
    free(it->plans);
    free(it->pos);
    for (int i = 0; i < it->n_loopback; i++)
        value_release(it->loopback[i]);
    free(it->loopback);
    free(it->loopback_channel);
    free(it);
}

const InterpDevice *interp_device(const Interp *it)
{
    return &it->opt.device;
}

const IrModule *interp_module(const Interp *it)
{
    return it->m;
}

const InterpTiming *interp_timing(const Interp *it)
{
    return &it->timing;
}

uint64_t eval_rng_seed(const Interp *it)
{
    return it->opt.rng_seed;
}

uint64_t eval_rng_next_call(Interp *it)
{
    return it->rng_calls++;
}

void interp_set_rng_seed(Interp *it, uint64_t seed)
{
    it->opt.rng_seed = seed;
}

/* ---- Constants and device ids */

static Value *literal_value(const IrLiteral *lit, const IrShape *s, const IrInstr *instr, Error *err)
{
    if (lit->elided) {
        error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                  "constant %s is elided ({...}) in the text: its values are unknown "
                  "(--fill-elided gives it seeded values)", instr->name);
        return NULL;
    }
    return value_from_literal(lit, s, err);
}

static Value *scalar_u32(const IrShape *s, uint32_t x, Error *err)
{
    Value *v = value_new_array(s, err);
    if (v)
        ir_elem_set_i64(s->type, v->data, x);
    return v;
}

/* ---- Calls and control flow */

static bool run_computation(Interp *it, const IrComputation *c, Value *const *args, int n_args,
                            Value **result, Error *err);

bool interp_call(Interp *it, const IrComputation *comp, Value *const *args, int n_args,
                 Value **result, Error *err)
{
    return run_computation(it, comp, args, n_args, result, err);
}

static bool scalar_is_true(const Value *v)
{
    return ir_elem_get_i64(v->shape->type, v->data) != 0;
}

static bool eval_while(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    Value *state = value_retain(args[0]);
    for (;;) {
        Value *cond = NULL;
        if (!run_computation(it, instr->info->comps[IR_COMP_CONDITION], &state, 1, &cond, err))
            goto fail;
        bool go_on = scalar_is_true(cond);
        value_release(cond);
        if (!go_on)
            break;
        Value *next = NULL;
        if (!run_computation(it, instr->info->comps[IR_COMP_BODY], &state, 1, &next, err))
            goto fail;
        value_release(state);
        state = next;
    }
    *out = state;
    return true;
fail:
    value_release(state);
    return false;
}

static bool eval_conditional(Interp *it, const IrInstr *instr, Value *const *args, Value **out,
                             Error *err)
{
    const IrComputation *branch;
    int64_t index = ir_elem_get_i64(args[0]->shape->type, args[0]->data);
    if (args[0]->shape->type == IR_TYPE_PRED) {
        branch = index ? instr->info->comps[IR_COMP_TRUE_COMPUTATION] : instr->info->comps[IR_COMP_FALSE_COMPUTATION];
        index = index ? 0 : 1;
    } else {
        /* Out of range runs the last branch. */
        if (index < 0 || index >= instr->info->n_branches)
            index = instr->info->n_branches - 1;
        branch = instr->info->branches[index];
    }
    return run_computation(it, branch, &args[1 + index], 1, out, err);
}

/* *out = the tuple of shape s holding args[0 .. n) (retained). */
static bool tuple_of_args(const IrInstr *instr, const IrShape *s, Value *const *args, int n,
                          Value **out, Error *err)
{
    Value **el = xcalloc_try((size_t)(n ? n : 1), sizeof *el);
    if (!el)
        return error_nomem(err, instr->info->loc);
    for (int i = 0; i < n; i++)
        el[i] = value_retain(args[i]);
    *out = value_new_tuple(s, n, el, err);
    free(el);
    return *out != NULL;
}

static bool eval_tuple(const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    return tuple_of_args(instr, instr->shape, args, instr->n_operands, out, err);
}

static bool eval_custom_call(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    const char *target = instr->info->words[IR_WORD_CUSTOM_CALL_TARGET];
    if ((!target || !interp_custom_call_known(target)) && it->opt.opaque)
        return it->opt.opaque(instr, args, instr->n_operands, out, err);
    return eval_known_custom_call(instr, args, out, err);
}

/* ---- Collectives: through the hook, or on a single device */

static bool shapes_match_operands(const IrInstr *instr, const IrShape *result)
{
    if (instr->n_operands == 1)
        return ir_shape_equal(result, instr->operands[0]->shape);
    if (result->type != IR_TYPE_TUPLE || result->n_elements != instr->n_operands)
        return false;
    for (int i = 0; i < instr->n_operands; i++)
        if (!ir_shape_equal(result->elements[i], instr->operands[i]->shape))
            return false;
    return true;
}

/* (data, u32[] ctx, token[]) of a send or recv, or recv-done's (data, token[]). */
static bool p2p_tuple(const IrInstr *instr, Value *data, uint32_t ctx, Value **out, Error *err)
{
    const IrShape *s = instr->shape;
    int n = s->n_elements;      /* 3, or 2 for recv-done */
    Value *el[3] = { data, NULL, NULL };
    if (n == 3)
        el[1] = scalar_u32(s->elements[1], ctx, err);
    el[n - 1] = value_new_zeroed(s->elements[n - 1], err);
    if (!el[0] || !el[1] || !el[n - 1]) {
        for (int i = 0; i < n; i++)
            value_release(el[i]);
        return false;
    }
    return (*out = value_new_tuple(s, n, el, err)) != NULL;
}

/* Data this device sent itself on channel, oldest first; NULL if none. */
static Value *loopback_take(Interp *it, int64_t channel)
{
    for (int i = 0; i < it->n_loopback; i++)
        if (it->loopback_channel[i] == channel) {
            Value *v = it->loopback[i];
            memmove(&it->loopback[i], &it->loopback[i + 1], (size_t)(it->n_loopback - i - 1) * sizeof *it->loopback);
            memmove(&it->loopback_channel[i], &it->loopback_channel[i + 1],
                    (size_t)(it->n_loopback - i - 1) * sizeof *it->loopback_channel);
            it->n_loopback--;
            return v;
        }
    return NULL;
}

/* False when out of memory. */
static bool loopback_put(Interp *it, int64_t channel, Value *v)
{
    if (it->n_loopback == it->cap_loopback) {
        int cap = it->cap_loopback ? 2 * it->cap_loopback : 4;
        if (!xgrow_try((void **)&it->loopback, (size_t)cap, sizeof *it->loopback) ||
            !xgrow_try((void **)&it->loopback_channel, (size_t)cap, sizeof(int64_t)))
            return false;
        it->cap_loopback = cap;
    }
    it->loopback[it->n_loopback] = value_retain(v);
    it->loopback_channel[it->n_loopback++] = channel;
    return true;
}

/* send/recv on one device: its only possible pair is {0,0}, the device
 * sending to itself (recv-done takes what the send posted, in order per
 * channel); a recv with no pair gets zeros.  Any other pair needs more
 * devices. */
static bool single_device_p2p(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    const char *name = ir_opcode_name(instr->op), *host = ir_raw_attr_get(instr, "is_host_transfer");
    int64_t channel = instr->ints[IR_INT_CHANNEL_ID].v;
    if (instr->op == IR_OP_SEND_DONE)
        return (*out = value_new_zeroed(instr->shape, err)) != NULL;
    if (instr->op == IR_OP_RECV_DONE) {
        bool self = ir_elem_get_i64(args[0]->elements[1]->shape->type, args[0]->elements[1]->data) != 0;
        Value *data = self ? loopback_take(it, channel) : value_new_zeroed(instr->shape->elements[0], err);
        if (self && !data)
            return error_set(err, ERR_MISMATCH, instr->info->loc,
                             "recv-done: nothing was sent on channel %lld before it (one device runs its send and "
                             "recv in program order)", (long long)channel);
        return p2p_tuple(instr, data, 0, out, err);
    }
    if (host && strcmp(host, "true") == 0)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "%s with is_host_transfer=true (a transfer to the host) is not supported", name);
    int64_t pair[1][2];
    int n = ir_send_recv_pairs(instr, pair, 1);
    if (n < 0)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "%s without a valid frontend_attributes={_xla_send_recv_source_target_pairs=...}", name);
    if (n > 1 || (n == 1 && (pair[0][0] != 0 || pair[0][1] != 0)))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "%s between devices needs more than one device: run under mpirun with the module's "
                         "device count", name);
    if (instr->op == IR_OP_SEND) {
        if (n == 1 && !loopback_put(it, channel, args[0]))
            return error_nomem(err, instr->info->loc);
        return p2p_tuple(instr, value_retain(args[0]), 0, out, err);
    }
    return p2p_tuple(instr, value_new_zeroed(instr->shape->elements[0], err), (uint32_t)n, out, err);
}

/* One device: every group is {self}, so the collectives that keep shapes
 * are identities; anything that changes a shape needs more devices. */
static bool single_device_collective(Interp *it, const IrInstr *instr, const IrShape *result,
                                     Value *const *args, Value **out, Error *err)
{
    switch ((int)instr->op) {
    case IR_OP_SEND: case IR_OP_RECV: case IR_OP_SEND_DONE: case IR_OP_RECV_DONE:
        return single_device_p2p(it, instr, args, out, err);
    case IR_OP_RAGGED_ALL_TO_ALL:
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "ragged-all-to-all runs only with the collectives (hlo-run, on one device or under mpirun)");
    default:
        break;
    }
    if (!shapes_match_operands(instr, result))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "%s needs more than one device: run under mpirun with the module's device count",
                         ir_opcode_name(instr->op));
    if (instr->n_operands == 1) {
        *out = value_retain(args[0]);
        return true;
    }
    return tuple_of_args(instr, result, args, instr->n_operands, out, err);
}

static bool run_collective(Interp *it, const IrInstr *instr, const IrShape *result,
                           Value *const *args, Value **out, Error *err)
{
    if (it->opt.comm)
        return it->opt.comm->run(it->opt.comm->ctx, it, instr, args, instr->n_operands, out, err);
    return single_device_collective(it, instr, result, args, out, err);
}

const IrShape *interp_start_result_shape(const IrInstr *instr)
{
    if (instr->op == IR_OP_ALL_REDUCE_START)
        return instr->shape;
    if (instr->shape->type == IR_TYPE_TUPLE && instr->shape->n_elements >= 2)
        return instr->shape->elements[1];
    return instr->shape;
}

static Value *zero_value(const IrShape *s, Error *err);

static Value *zero_element(void *ctx, int i, const IrShape *element, Error *err)
{
    (void)ctx;
    (void)i;
    return zero_value(element, err);
}

/* Zero-filled value of shape s (tuples recursively): async contexts. */
static Value *zero_value(const IrShape *s, Error *err)
{
    if (s->type != IR_TYPE_TUPLE)
        return value_new_zeroed(s, err);
    return value_build_tuple(s, zero_element, NULL, err);
}

void interp_async_wrapped_op(const IrInstr *start, IrInstr *wrapped, IrInstrInfo *info)
{
    *wrapped = *start;          /* the wrapped op, on a copy with its own info */
    *info = *start->info;
    wrapped->info = info;
    wrapped->op = start->info->async_wrapped;
    info->async_wrapped = IR_OP_COUNT;
    wrapped->shape = (IrShape *)interp_start_result_shape(start);
}

bool interp_wrap_start(const IrInstr *instr, Value *const *args, Value *result, Value **out, Error *err)
{
    const IrShape *s = instr->shape;
    if (instr->op == IR_OP_ALL_REDUCE_START || s->type != IR_TYPE_TUPLE || s->n_elements < 2) {
        *out = result;
        return true;
    }
    Value **el = xcalloc_try((size_t)s->n_elements, sizeof *el);
    if (!el) {
        value_release(result);
        return error_nomem(err, instr->info->loc);
    }
    const IrShape *in = s->elements[0];
    if (in->type == IR_TYPE_TUPLE) {
        if (!tuple_of_args(instr, in, args, instr->n_operands, &el[0], err))
            el[0] = NULL;
    } else {
        el[0] = value_retain(args[0]);
    }
    el[1] = result;
    bool ok = el[0] != NULL;
    for (int i = 2; i < s->n_elements && ok; i++)
        ok = (el[i] = zero_value(s->elements[i], err)) != NULL;
    if (!ok) {
        for (int i = 0; i < s->n_elements; i++)
            value_release(el[i]);
        free(el);
        return false;
    }
    *out = value_new_tuple(s, s->n_elements, el, err);
    free(el);
    return *out != NULL;
}

static bool eval_instr(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);

/* A sugared async op (reduce-scatter-start, fusion-start, ...) evaluates the
 * wrapped op with the start's attributes and the result part of its shape. */
static bool eval_async_start(Interp *it, const IrInstr *instr, Value *const *args, Value **out,
                             Error *err)
{
    Value *result = NULL;
    bool ok;
    if (instr->info->async_wrapped == IR_OP_ASYNC_START) {
        const IrComputation *callee = instr->info->comps[IR_COMP_CALLS];
        if (!callee)
            return eval_unsupported(instr, err);
        ok = run_computation(it, callee, args, instr->n_operands, &result, err);
    } else {
        IrInstr wrapped;
        IrInstrInfo info;
        interp_async_wrapped_op(instr, &wrapped, &info);
        ok = eval_instr(it, &wrapped, args, &result, err);
    }
    return ok && interp_wrap_start(instr, args, result, out, err);
}

static bool eval_start_collective(Interp *it, const IrInstr *instr, Value *const *args, Value **out,
                                  Error *err)
{
    Value *result = NULL;
    if (!run_collective(it, instr, interp_start_result_shape(instr), args, &result, err))
        return false;
    return interp_wrap_start(instr, args, result, out, err);
}

/* -done returns the result part of its start's value. */
static bool eval_done(const IrInstr *instr, Value *const *args, Value **out)
{
    const Value *start = args[0];
    if (instr->op == IR_OP_ALL_REDUCE_DONE || start->shape->type != IR_TYPE_TUPLE ||
        start->n_elements < 2 || ir_shape_equal(start->shape, instr->shape)) {
        *out = value_retain(args[0]);
        return true;
    }
    *out = value_retain(start->elements[1]);
    return true;
}

/* ---- Dispatch */

static EvalFn array_evaluator(IrOpcode op)
{
    switch (op) {
    case IR_OP_ABS: case IR_OP_NEGATE: case IR_OP_SIGN: case IR_OP_NOT: case IR_OP_EXP:
    case IR_OP_EXPM1: case IR_OP_LOG: case IR_OP_LOG1P: case IR_OP_SQRT: case IR_OP_RSQRT:
    case IR_OP_CBRT: case IR_OP_TANH: case IR_OP_LOGISTIC: case IR_OP_SIN: case IR_OP_COS:
    case IR_OP_TAN: case IR_OP_ACOS: case IR_OP_ACOSH: case IR_OP_ASIN: case IR_OP_ASINH:
    case IR_OP_ATANH: case IR_OP_COSH: case IR_OP_SINH: case IR_OP_FLOOR: case IR_OP_CEIL:
    case IR_OP_ROUND_AFZ: case IR_OP_ROUND_EVEN: case IR_OP_IS_FINITE: case IR_OP_POPCNT:
    case IR_OP_CLZ: case IR_OP_REAL: case IR_OP_IMAG: case IR_OP_ERF:
        return eval_unary;
    case IR_OP_ADD: case IR_OP_SUBTRACT: case IR_OP_MULTIPLY: case IR_OP_DIVIDE:
    case IR_OP_REMAINDER: case IR_OP_MAXIMUM: case IR_OP_MINIMUM: case IR_OP_POWER:
    case IR_OP_AND: case IR_OP_OR: case IR_OP_XOR: case IR_OP_SHIFT_LEFT:
    case IR_OP_SHIFT_RIGHT_ARITH: case IR_OP_SHIFT_RIGHT_LOGICAL: case IR_OP_ATAN2:
    case IR_OP_COMPLEX:
        return eval_binary;
    case IR_OP_COMPARE: return eval_compare;
    case IR_OP_SELECT: return eval_select;
    case IR_OP_CLAMP: return eval_clamp;
    case IR_OP_CONVERT: return eval_convert;
    case IR_OP_BITCAST_CONVERT: return eval_bitcast_convert;
    case IR_OP_REDUCE_PRECISION: return eval_reduce_precision;
    case IR_OP_RESHAPE: return eval_reshape;
    case IR_OP_BITCAST: return eval_bitcast;
    case IR_OP_TRANSPOSE: return eval_transpose;
    case IR_OP_BROADCAST: return eval_broadcast;
    case IR_OP_SLICE: return eval_slice;
    case IR_OP_DYNAMIC_SLICE: return eval_dynamic_slice;
    case IR_OP_DYNAMIC_UPDATE_SLICE: return eval_dynamic_update_slice;
    case IR_OP_CONCATENATE: return eval_concatenate;
    case IR_OP_PAD: return eval_pad;
    case IR_OP_REVERSE: return eval_reverse;
    case IR_OP_IOTA: return eval_iota;
    case IR_OP_REDUCE: return eval_reduce;
    case IR_OP_REDUCE_WINDOW: return eval_reduce_window;
    case IR_OP_MAP: return eval_map;
    case IR_OP_SORT: return eval_sort;
    case IR_OP_DOT: return eval_dot;
    case IR_OP_GATHER: return eval_gather;
    case IR_OP_SCATTER: return eval_scatter;
    case IR_OP_CONVOLUTION: return eval_convolution;
    case IR_OP_BATCH_NORM_TRAINING: return eval_batch_norm_training;
    case IR_OP_BATCH_NORM_INFERENCE: return eval_batch_norm_inference;
    case IR_OP_BATCH_NORM_GRAD: return eval_batch_norm_grad;
    case IR_OP_CHOLESKY: return eval_cholesky;
    case IR_OP_TRIANGULAR_SOLVE: return eval_triangular_solve;
    case IR_OP_FFT: return eval_fft;
    case IR_OP_SELECT_AND_SCATTER: return eval_select_and_scatter;
    case IR_OP_TOPK: return eval_topk;
    case IR_OP_RNG: return eval_rng;
    case IR_OP_RNG_BIT_GENERATOR: return eval_rng_bit_generator;
    case IR_OP_RNG_GET_AND_UPDATE_STATE: return eval_rng_get_and_update_state;
    case IR_OP_STOCHASTIC_CONVERT: return eval_stochastic_convert;
    case IR_OP_GET_DIMENSION_SIZE: return eval_get_dimension_size;
    case IR_OP_SET_DIMENSION_SIZE: return eval_set_dimension_size;
    case IR_OP_DYNAMIC_RESHAPE: return eval_dynamic_reshape;
    /* Handled in eval_instr, or not supported. */
    case IR_OP_COPY: case IR_OP_PARAMETER: case IR_OP_CONSTANT: case IR_OP_TUPLE:
    case IR_OP_GET_TUPLE_ELEMENT: case IR_OP_CALL: case IR_OP_FUSION: case IR_OP_WHILE:
    case IR_OP_CONDITIONAL: case IR_OP_OPT_BARRIER: case IR_OP_AFTER_ALL:
    case IR_OP_ADD_DEPENDENCY: case IR_OP_DOMAIN: case IR_OP_CUSTOM_CALL: case IR_OP_INFEED:
    case IR_OP_OUTFEED: case IR_OP_COPY_START: case IR_OP_COPY_DONE: case IR_OP_ASYNC_START:
    case IR_OP_ASYNC_UPDATE: case IR_OP_ASYNC_DONE: case IR_OP_REPLICA_ID:
    case IR_OP_PARTITION_ID: case IR_OP_ALL_GATHER: case IR_OP_ALL_GATHER_START:
    case IR_OP_ALL_GATHER_DONE: case IR_OP_ALL_REDUCE: case IR_OP_ALL_REDUCE_START:
    case IR_OP_ALL_REDUCE_DONE: case IR_OP_REDUCE_SCATTER: case IR_OP_ALL_TO_ALL:
    case IR_OP_RAGGED_ALL_TO_ALL: case IR_OP_COLLECTIVE_PERMUTE:
    case IR_OP_COLLECTIVE_PERMUTE_START: case IR_OP_COLLECTIVE_PERMUTE_DONE:
    case IR_OP_COLLECTIVE_BROADCAST: case IR_OP_SEND: case IR_OP_SEND_DONE: case IR_OP_RECV:
    case IR_OP_RECV_DONE: case IR_OP_COUNT:
        return NULL;
    }
    return NULL;
}

static bool eval_structural(Interp *it, const IrInstr *instr, Value *const *args, Value **out,
                            Error *err)
{
    const InterpDevice *d = &it->opt.device;
    switch ((int)instr->op) {   /* partial: array ops never get here */
    case IR_OP_CONSTANT:
        return (*out = literal_value(instr->info->literal, instr->shape, instr, err)) != NULL;
    case IR_OP_TUPLE:
        return eval_tuple(instr, args, out, err);
    case IR_OP_GET_TUPLE_ELEMENT:
        *out = value_retain(args[0]->elements[instr->ints[IR_INT_INDEX].v]);
        return true;
    case IR_OP_CALL:
        return run_computation(it, instr->info->comps[IR_COMP_TO_APPLY], args, instr->n_operands, out, err);
    case IR_OP_FUSION:
        return run_computation(it, instr->info->comps[IR_COMP_CALLS], args, instr->n_operands, out, err);
    case IR_OP_WHILE:
        return eval_while(it, instr, args, out, err);
    case IR_OP_CONDITIONAL:
        return eval_conditional(it, instr, args, out, err);
    case IR_OP_COPY: case IR_OP_OPT_BARRIER: case IR_OP_ADD_DEPENDENCY: case IR_OP_DOMAIN:
    case IR_OP_ASYNC_UPDATE: case IR_OP_COPY_START: case IR_OP_COPY_DONE:
        *out = value_retain(args[0]);
        return true;
    case IR_OP_AFTER_ALL:
        return (*out = value_new_zeroed(instr->shape, err)) != NULL;
    case IR_OP_REPLICA_ID:
        return (*out = scalar_u32(instr->shape, (uint32_t)(d->rank / d->num_partitions), err)) != NULL;
    case IR_OP_PARTITION_ID:
        return (*out = scalar_u32(instr->shape, (uint32_t)(d->rank % d->num_partitions), err)) != NULL;
    case IR_OP_CUSTOM_CALL:
        return eval_custom_call(it, instr, args, out, err);
    case IR_OP_ALL_GATHER: case IR_OP_ALL_REDUCE: case IR_OP_REDUCE_SCATTER:
    case IR_OP_ALL_TO_ALL: case IR_OP_COLLECTIVE_PERMUTE: case IR_OP_COLLECTIVE_BROADCAST:
    case IR_OP_RAGGED_ALL_TO_ALL: case IR_OP_SEND: case IR_OP_RECV: case IR_OP_SEND_DONE: case IR_OP_RECV_DONE:
        return run_collective(it, instr, instr->shape, args, out, err);
    case IR_OP_ALL_GATHER_START: case IR_OP_ALL_REDUCE_START: case IR_OP_COLLECTIVE_PERMUTE_START:
        return eval_start_collective(it, instr, args, out, err);
    case IR_OP_ASYNC_START:
        return eval_async_start(it, instr, args, out, err);
    case IR_OP_ALL_GATHER_DONE: case IR_OP_ALL_REDUCE_DONE: case IR_OP_COLLECTIVE_PERMUTE_DONE:
    case IR_OP_ASYNC_DONE:
        return eval_done(instr, args, out);
    default:
        return eval_unsupported(instr, err);
    }
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The instruction being evaluated (the innermost, inside called
 * computations), for --timeout to name. */
static const IrInstr *volatile current_instr;

const IrInstr *interp_current_instr(void)
{
    return current_instr;
}

static bool eval_instr(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    EvalFn fn = array_evaluator(instr->op);
    /* The collectives reach eval_dynamic too, which runs them on the
     * bounded buffers of operands of dynamic size. */
    if (!fn && eval_dynamic_collective(instr->op))
        fn = eval_structural;
    if (!fn && !eval_dynamic_operands_ok(instr, args, err))
        return false;
    double t0 = it->opt.time ? now_seconds() : 0;
    const IrInstr *outer = current_instr;
    current_instr = instr;
    bool ok = fn ? eval_dynamic(it, instr, fn, args, out, err) : eval_structural(it, instr, args, out, err);
    current_instr = outer;
    if (it->opt.time) {
        it->timing.seconds[instr->op] += now_seconds() - t0;
        it->timing.count[instr->op]++;
    }
    if (!ok && err && err->loc.line == 0 && err->code != ERR_OK)
        error_set_loc(err, instr->info->loc);     /* kernels without a location: name the instruction */
    return ok;
}

bool interp_eval_instr(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    if (instr->op == IR_OP_PARAMETER)
        return error_set(err, ERR_INTERNAL, instr->info->loc, "interp_eval_instr: a parameter has no evaluator");
    return eval_instr(it, instr, args, out, err);
}

static bool run_computation(Interp *it, const IrComputation *c, Value *const *args, int n_args,
                            Value **result, Error *err)
{
    Plan *plan = c->id < it->n_plans ? it->plans[c->id] : NULL;
    if (!plan || plan->n != c->n_instrs)
        return error_set(err, ERR_INTERNAL, c->loc, "computation %s changed after interp_new", c->name);
    Value **vals = xcalloc_try((size_t)(c->n_instrs ? c->n_instrs : 1), sizeof *vals);
    Value *stack_ops[8];
    Value **ops =
        plan->max_operands <= 8 ? stack_ops : xcalloc_try((size_t)plan->max_operands, sizeof *ops);
    bool ok = (vals && ops) || error_nomem(err, c->loc);
    for (int i = 0; i < c->n_instrs && ok; i++) {
        const IrInstr *instr = c->instrs[i];
        for (int k = 0; k < instr->n_operands; k++)
            ops[k] = vals[it->pos[instr->operands[k]->id]];
        if (instr->op == IR_OP_PARAMETER) {
            if (instr->info->parameter_number >= n_args)
                ok = error_set(err, ERR_MISMATCH, instr->info->loc, "parameter(%lld) was not given",
                               (long long)instr->info->parameter_number);
            else
                vals[i] = value_retain(args[instr->info->parameter_number]);
        } else {
            ok = eval_instr(it, instr, ops, &vals[i], err);
            if (ok && it->opt.observe)
                it->opt.observe(it->opt.observe_ctx, instr, vals[i]);
        }
        for (int k = 0; k < instr->n_operands && ok; k++) {
            int p = it->pos[instr->operands[k]->id];
            if (plan->last_use[p] == i && vals[p]) {
                value_release(vals[p]);
                vals[p] = NULL;
            }
        }
        if (ok && plan->last_use[i] == i) {
            value_release(vals[i]);
            vals[i] = NULL;
        }
    }
    if (ops != stack_ops)
        free(ops);
    int root = it->pos[c->root->id];
    if (ok)
        *result = value_retain(vals[root]);
    for (int i = 0; vals && i < c->n_instrs; i++)
        value_release(vals[i]);
    free(vals);
    return ok;
}

bool interp_run(Interp *it, Value **params, int n_params, Value **result, Error *err)
{
    const IrComputation *entry = it->m->entry;
    bool ok = n_params == entry->n_params ||
              error_set(err, ERR_MISMATCH, entry->loc, "the entry computation takes %d parameters, %d given",
                        entry->n_params, n_params);
    it->rng_calls = 0;      /* every run draws the same streams */
    ok = ok && run_computation(it, entry, params, n_params, result, err);
    for (int i = 0; i < n_params; i++)
        value_release(params[i]);
    return ok;
}

/* ---- Reducer recognition and the scalar slow path */

IrOpcode interp_trivial_reducer(const IrComputation *comp)
{
    const IrInstr *root = comp->root;
    if (comp->n_params != 2 || root->n_operands != 2)
        return IR_OP_COUNT;
    IrOpcode op = root->op;
    if (op != IR_OP_ADD && op != IR_OP_MULTIPLY && op != IR_OP_MAXIMUM && op != IR_OP_MINIMUM &&
        op != IR_OP_AND && op != IR_OP_OR)
        return IR_OP_COUNT;
    /* In order: maximum(p1, p0) resolves NaN and -0/+0 ties the other way. */
    const IrInstr *a = root->operands[0], *b = root->operands[1];
    bool params = a->op == IR_OP_PARAMETER && b->op == IR_OP_PARAMETER && a->info->parameter_number == 0 &&
                  b->info->parameter_number == 1;
    bool scalar = root->shape->rank == 0 && a->shape->rank == 0 && b->shape->rank == 0 &&
                  a->shape->type == root->shape->type && b->shape->type == root->shape->type;
    return params && scalar ? root->op : IR_OP_COUNT;
}

bool eval_call_scalar(Interp *it, const IrComputation *comp, const IrElemType *arg_types,
                      const void *const *args, int n_args, void *const *results, int n_results,
                      Error *err)
{
    Value *vals[16] = { 0 };
    if (n_args > 16 || n_args != comp->n_params)
        return error_set(err, ERR_UNSUPPORTED, comp->loc, "computation %s: %d scalar arguments",
                         comp->name, n_args);
    bool ok = true;
    int made = 0;
    for (; made < n_args && ok; made++) {
        const IrShape *s = comp->params[made]->shape;
        vals[made] = s->type == arg_types[made] ? value_new_array(s, err) : NULL;
        if (!vals[made])
            ok = error_set(err, ERR_INTERNAL, comp->loc, "computation %s: argument %d type", comp->name, made);
        else
            memcpy(vals[made]->data, args[made], (size_t)ir_type_storage_bytes(s->type));
    }
    Value *out = NULL;
    ok = ok && run_computation(it, comp, vals, n_args, &out, err);
    for (int i = 0; i < made; i++)
        value_release(vals[i]);
    if (!ok)
        return false;
    for (int r = 0; r < n_results; r++) {
        const Value *leaf = out->shape->type == IR_TYPE_TUPLE ? out->elements[r] : out;
        memcpy(results[r], leaf->data, (size_t)ir_type_storage_bytes(leaf->shape->type));
    }
    value_release(out);
    return true;
}
