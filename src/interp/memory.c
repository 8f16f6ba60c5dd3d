/* memory.c: the bytes one device needs to run a module, estimated before
 * anything runs, so that a module too big for the machine is refused with
 * the figure instead of being killed by the kernel half way.
 *
 * The estimate follows what interp.c does: instructions run in order, each
 * result is a new buffer except for the ops that alias their operands
 * (parameter, get-tuple-element, tuple, reshape, copy and the other
 * identities), and a buffer is freed after the last use of every value that
 * aliases it.  At each instruction the need is
 *     live buffers + its result + its kernel's scratch + its callees' need,
 * where the scratch is what the kernels allocate besides the result
 * (collectives: their send and receive buffers; dot and convolution: the
 * operands gathered into contiguous, widened copies; sort: the permuted
 * copies), and a callee's need is its own peak on top of the caller's live
 * buffers (a while loop also holds one more copy of its state).  It is an
 * estimate meant to err high: scratch is counted at its largest, and the
 * allocator's own overhead is not modelled.  Parameters of a computation
 * belong to its caller; the entry's are the run's inputs. */
#include "interp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The peak of one computation on top of its caller's buffers. */
typedef struct Frame {
    int64_t peak;           /* excluding the computation's parameters */
    const IrInstr *at;      /* running at the peak */
    const IrInstr *largest; /* the largest buffer live at the peak */
    int64_t largest_bytes;
} Frame;

typedef struct Estimator {
    const IrModule *m;
    Frame *frames;          /* by computation id */
    bool *done, *busy;      /* memo, and recursion guard */
    int *pos;               /* instruction id -> position in its computation */
} Estimator;

static int64_t bytes_of(const IrShape *s)
{
    int64_t b = ir_shape_byte_size(s);
    return b > 0 ? b : 0;
}

/* Ops whose result shares its operands' buffers (interp.c). */
static bool aliases(const IrInstr *in)
{
    switch ((int)in->op) {
    case IR_OP_PARAMETER: case IR_OP_GET_TUPLE_ELEMENT: case IR_OP_TUPLE: case IR_OP_RESHAPE: case IR_OP_COPY:
    case IR_OP_OPT_BARRIER: case IR_OP_ADD_DEPENDENCY: case IR_OP_DOMAIN: case IR_OP_ASYNC_UPDATE:
    case IR_OP_COPY_START: case IR_OP_COPY_DONE: case IR_OP_ALL_GATHER_DONE: case IR_OP_ALL_REDUCE_DONE:
    case IR_OP_COLLECTIVE_PERMUTE_DONE: case IR_OP_ASYNC_DONE: case IR_OP_AFTER_ALL:
        return true;
    case IR_OP_CUSTOM_CALL: {
        const char *t = in->info->words[IR_WORD_CUSTOM_CALL_TARGET];
        return t && interp_custom_call_is_identity(t);
    }
    default:
        return false;
    }
}

static int64_t operand_bytes(const IrInstr *in)
{
    int64_t b = 0;
    for (int i = 0; i < in->n_operands; i++)
        b += bytes_of(in->operands[i]->shape);
    return b;
}

/* What a kernel allocates besides its result, at most. */
/* fft's work array, one batch item of complex doubles at fft_length (which
 * FFT and IFFT may make larger than the operand), and its tables: at most
 * three lines of Bluestein's 2n-1 < m <= 4n per dim.  Saturates. */
static int64_t fft_work_bytes(const IrInstr *in)
{
    const IrIntList *len = &in->lists[IR_LIST_FFT_LENGTH];
    int64_t elems = 1, tables = 0, cap = INT64_MAX / 64;
    for (int i = 0; i < len->n; i++) {
        int64_t n = len->v[i] > 0 ? len->v[i] : 0;
        elems = n && elems > cap / n ? cap : elems * n;
        tables += n < cap / 12 ? 12 * n : cap / 12;
    }
    return 16 * (elems < cap - tables ? elems + tables : cap);
}

static int64_t scratch_of(const IrInstr *in)
{
    int64_t out = bytes_of(in->shape), ops = operand_bytes(in);
    switch ((int)in->op) {
    case IR_OP_ALL_REDUCE: case IR_OP_ALL_REDUCE_START:
        /* send, gathered and received copies of one round (all_reduce.c) */
        return 3 * (ops < ((int64_t)64 << 20) ? ops : ((int64_t)64 << 20));
    case IR_OP_ALL_GATHER: case IR_OP_ALL_GATHER_START: case IR_OP_REDUCE_SCATTER: case IR_OP_ALL_TO_ALL:
    case IR_OP_RAGGED_ALL_TO_ALL: case IR_OP_COLLECTIVE_BROADCAST:
        return ops + out;               /* packed send and receive buffers */
    case IR_OP_COLLECTIVE_PERMUTE: case IR_OP_COLLECTIVE_PERMUTE_START: case IR_OP_SEND: case IR_OP_RECV:
        return ops;
    case IR_OP_DOT: case IR_OP_CONVOLUTION:
        return 2 * ops + 2 * out;       /* gathered, widened operands; an f32 result for narrow types */
    case IR_OP_SORT: case IR_OP_TOPK:
        return ops + ops / 2;           /* permuted copies and the index array */
    case IR_OP_REDUCE: case IR_OP_REDUCE_WINDOW: case IR_OP_SELECT_AND_SCATTER:
        return 2 * out;                 /* accumulators in a wider type */
    case IR_OP_FFT:
        return 2 * (ops + out) + fft_work_bytes(in);
    case IR_OP_CHOLESKY: case IR_OP_TRIANGULAR_SOLVE: case IR_OP_BATCH_NORM_TRAINING:
    case IR_OP_BATCH_NORM_GRAD: case IR_OP_BATCH_NORM_INFERENCE:
        return 2 * (ops + out);         /* work arrays in the compute type */
    case IR_OP_TRANSPOSE: case IR_OP_GATHER: case IR_OP_SCATTER: case IR_OP_CONCATENATE: case IR_OP_PAD:
    case IR_OP_CONVERT: case IR_OP_BITCAST:
        return 0;
    default:
        return 0;
    }
}

static Frame estimate(Estimator *e, const IrComputation *c);

/* The need of the computations an instruction calls, over its caller's
 * live buffers. */
static Frame callee_need(Estimator *e, const IrInstr *in)
{
    Frame best = { 0 };
    IrComputation *callees[64];
    int n = ir_instr_called(in, callees, 64);
    bool loops = in->op == IR_OP_WHILE;
    bool per_element = (ir_op_info[in->op].flags & OPF_TO_APPLY) && in->op != IR_OP_CALL;
    if (per_element)
        return best;                    /* reducers and comparators run on scalars */
    for (int k = 0; k < n && k < 64; k++) {
        Frame f = estimate(e, callees[k]);
        if (loops)
            f.peak += bytes_of(in->shape);      /* the state of the iteration before */
        if (f.peak > best.peak)
            best = f;
    }
    return best;
}

static Frame estimate(Estimator *e, const IrComputation *c)
{
    if (e->done[c->id] || e->busy[c->id])
        return e->frames[c->id];        /* a call cycle (invalid) counts once */
    e->busy[c->id] = true;
    int n = c->n_instrs;
    int64_t *death = xcalloc((size_t)n + 1, sizeof *death);
    int64_t *own = xcalloc((size_t)n + 1, sizeof *own);
    for (int i = 0; i < n; i++) {
        e->pos[c->instrs[i]->id] = i;
        death[i] = i;
    }
    for (int i = 0; i < n; i++) {
        const IrInstr *in = c->instrs[i];
        for (int k = 0; k < in->n_operands; k++) {
            int p = e->pos[in->operands[k]->id];
            if (death[p] < i)
                death[p] = i;
        }
        if (in == c->root)
            death[i] = n;
        own[i] = aliases(in) ? 0 : bytes_of(in->shape);
    }
    /* An alias keeps what it aliases alive as long as itself. */
    for (int i = n - 1; i >= 0; i--) {
        const IrInstr *in = c->instrs[i];
        if (!aliases(in) || in->op == IR_OP_PARAMETER)
            continue;
        for (int k = 0; k < in->n_operands; k++) {
            int p = e->pos[in->operands[k]->id];
            if (death[p] < death[i])
                death[p] = death[i];
        }
    }
    /* Walk the schedule: live rises by each result and falls at deaths. */
    int64_t *dying = xcalloc((size_t)n + 2, sizeof *dying);
    for (int i = 0; i < n; i++)
        dying[death[i] + 1 <= n ? death[i] + 1 : n + 1] += own[i];
    Frame f = { 0 };
    int64_t live = 0;
    int at = -1;
    for (int i = 0; i < n; i++) {
        live -= dying[i];
        const IrInstr *in = c->instrs[i];
        Frame callee = callee_need(e, in);
        int64_t need = live + own[i] + scratch_of(in) + callee.peak;
        if (need > f.peak) {
            f = callee;
            f.peak = need;
            f.at = callee.at ? callee.at : in;
            at = i;
        }
        live += own[i];
    }
    for (int j = 0; j <= at; j++)       /* the largest buffer live at the peak */
        if (own[j] > f.largest_bytes && death[j] >= at) {
            f.largest = c->instrs[j];
            f.largest_bytes = own[j];
        }
    free(death);
    free(own);
    free(dying);
    e->frames[c->id] = f;
    e->done[c->id] = true;
    e->busy[c->id] = false;
    return f;
}

void interp_estimate_memory(const IrModule *m, InterpMemory *out)
{
    memset(out, 0, sizeof *out);
    int n_comps = ir_module_max_computation_id(m) + 1;
    Estimator e = { m, xcalloc((size_t)n_comps, sizeof(Frame)), xcalloc((size_t)n_comps, 1),
                    xcalloc((size_t)n_comps, 1), xcalloc((size_t)m->next_instr_id + 1, sizeof(int)) };
    for (int i = 0; i < m->entry->n_params; i++)
        out->parameters += bytes_of(m->entry->params[i]->shape);
    Frame f = estimate(&e, m->entry);
    out->peak = out->parameters + f.peak;
    out->at = f.at;
    out->largest = f.largest;
    out->largest_bytes = f.largest_bytes;
    for (int i = 0; i < m->entry->n_params; i++)
        if (bytes_of(m->entry->params[i]->shape) > out->largest_bytes) {
            out->largest = m->entry->params[i];
            out->largest_bytes = bytes_of(m->entry->params[i]->shape);
        }
    out->outputs = bytes_of(m->entry->root->shape);
    for (int c = 0; c < m->n_computations; c++)
        for (int i = 0; i < m->computations[c]->n_instrs; i++)
            if (m->computations[c]->instrs[i]->op == IR_OP_CONSTANT)
                out->constants += bytes_of(m->computations[c]->instrs[i]->shape);
    free(e.frames);
    free(e.done);
    free(e.busy);
    free(e.pos);
}

/* "1.5 GB": decimal units, three significant digits. */
void interp_format_bytes(int64_t bytes, char *buf, size_t n)
{
    static const char *const units[] = { "B", "kB", "MB", "GB", "TB", "PB", "EB" };
    double v = (double)bytes;
    int u = 0;
    while (v >= 1000 && u < 6) {
        v /= 1000;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%lld B", (long long)bytes);
    else
        snprintf(buf, n, "%.3g %s", v, units[u]);
}
