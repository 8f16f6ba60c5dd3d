/* eval_reduce.c: reduce, reduce-window and map, and the helpers eval_sort.c
 * shares (eval.h).
 *
 * The reference order, which we promise to the bit:
 * - reduce: for each output element acc = init, then acc = f(acc, x) over the
 *   reduced elements in row-major order of the reduced dims (ascending dims).
 * - reduce-window: the same over the window positions in row-major order of
 *   the window.  Positions that land in the padding or between the elements
 *   of a dilated base are skipped, not folded with init (XLA's evaluator does
 *   this), so a non-identity init enters each output exactly once.
 *
 * Fast paths give the same bits as the slow ones because every output
 * element still sees the same left fold, in the same order:
 * - reduce with one input and a reducer interp_trivial_reducer() recognises.
 *   The input is seen with size-1 dims dropped and neighbouring kept or
 *   reduced dims merged (ReduceGeom), then:
 *   . last dim kept: per reduced position, interp_binary_kernel() folds the
 *     slice into a block of outputs at once (acc_block = acc_block op slice),
 *     the slice gathered into scratch when the outputs are not contiguous;
 *   . last dim reduced (each output's elements contiguous): typed loops fold
 *     each row front to back for f32/f64 (add, multiply, and maximum/minimum
 *     exactly as the kernel defines them) and the integer types, eight rows
 *     interleaved for float add/multiply; other types (bf16, f16, f8, pred)
 *     transpose chunks of a block of rows into scratch and call the kernel
 *     once per position, and a lone long row with an op the kernel makes
 *     exactly associative (maximum, minimum, and, or, integer add/multiply)
 *     is folded as contiguous segments whose results are then folded in order.
 *   Block-wide kernel calls never run in place (the kernel would copy through
 *   a temporary): the accumulator ping-pongs between two buffers.
 * - reduce-window (one input, trivial reducer, no base dilation): per window
 *   position, the kernel runs over each row of the box of outputs whose input
 *   position is valid; trailing dims the window leaves alone (size 1, stride
 *   1, no padding) are part of the row.
 * - map whose computation is one binary op on two parameters: one kernel call.
 * Everything else calls the computation per element through
 * eval_call_scalar(): slow, but any computation works.
 *
 * Threads (parallel.h): the fast reduce is split over its output elements,
 * never over the reduced elements, so every output still sees the same
 * left fold at any thread count (each chunk has its own scratch).  The slow
 * paths call back into the interpreter and stay on one thread. */
#include "eval.h"
#include "narrow_float.h"
#include "parallel.h"
#include "simd.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ELEM_BYTES 16   /* c128 */
#define BLOCK_RUN 16384     /* outputs per block when the slice is contiguous */
#define BLOCK_GATHER 256    /* outputs per block when it must be gathered */
#define MIN_RUN 32          /* shorter contiguous runs are gathered */
#define ROWS_BLOCK 128      /* outputs per block when each folds a contiguous row */
#define ROWS_CHUNK 32       /* row elements transposed into scratch at a time */
#define DIRECT_MAX 8        /* kernel types: blocks shorter than this fold each row on its own */

/* ------------------------------------------------------------------ */
/* Shared helpers                                                       */

size_t eval_elem_bytes(const Value *v)
{
    return (size_t)ir_type_storage_bytes(v->shape->type);
}

/* Element types whose values we can move as bytes and hand to a computation. */
static bool type_ok(IrElemType t)
{
    return t > IR_TYPE_INVALID && t < IR_TYPE_TOKEN;
}

/* Element types the fast paths hand to interp_binary_kernel. */
static bool kernel_type_ok(IrElemType t)
{
    return type_ok(t) && !ir_type_is_complex(t);
}

bool eval_need_array(const IrInstr *instr, const Value *v, const char *what, Error *err)
{
    if (v->shape->type == IR_TYPE_TUPLE || v->shape->rank > IR_MAX_RANK || !type_ok(v->shape->type))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "%s: %s %s is not supported",
                         ir_opcode_name(instr->op), what, ir_shape_str(v->shape));
    return true;
}

bool eval_same_dims(const IrShape *a, const IrShape *b)
{
    if (a->rank != b->rank)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d])
            return false;
    return true;
}

void *eval_scratch_alloc(int64_t n, size_t size, const IrInstr *instr, Error *err)
{
    if (n < 0 || (size && (uint64_t)n > SIZE_MAX / size)) {
        error_set(err, ERR_NOMEM, instr->info->loc, "%s: scratch too large", ir_opcode_name(instr->op));
        return NULL;
    }
    size_t bytes = (size_t)n * size;
    void *p = xmalloc_try(bytes ? bytes : 1);
    if (!p)
        error_set(err, ERR_NOMEM, instr->info->loc, "%s: out of memory for %zu bytes of scratch",
                  ir_opcode_name(instr->op), bytes);
    return p;
}

/* Result i of an op with n results: the shape itself, or tuple element i. */
static const IrShape *part_shape(const IrInstr *instr, int n, int i)
{
    const IrShape *s = instr->shape;
    if (n == 1 && s->type != IR_TYPE_TUPLE)
        return s;
    return s->type == IR_TYPE_TUPLE && s->n_elements == n ? s->elements[i] : NULL;
}

/* Allocates the n result arrays: part i must be an array of type types[i]
 * with dims (rank, dims). */
bool eval_new_parts(const IrInstr *instr, int n, int rank, const int64_t *dims, const IrElemType *types,
                    Value **parts, Error *err)
{
    for (int i = 0; i < n; i++) {
        const IrShape *s = part_shape(instr, n, i);
        bool ok = s && s->type == types[i] && s->rank == rank;
        for (int d = 0; ok && d < rank; d++)
            ok = s->dims[d] == dims[d];
        if (!ok)
            return error_set(err, ERR_SHAPE, instr->info->loc, "%s: result %s does not fit its operands",
                             ir_opcode_name(instr->op), ir_shape_str(instr->shape));
    }
    for (int i = 0; i < n; i++)
        if (!(parts[i] = value_new_array(part_shape(instr, n, i), err))) {
            for (int k = 0; k < i; k++)
                value_release(parts[k]);
            return false;
        }
    return true;
}

/* Hands the parts over as the result (an array, or a tuple of n), or
 * releases them when !ok. */
bool eval_finish_parts(const IrInstr *instr, int n, Value **parts, bool ok, Value **out, Error *err)
{
    if (!ok) {
        for (int i = 0; i < n; i++)
            value_release(parts[i]);
        return false;
    }
    if (instr->shape->type != IR_TYPE_TUPLE) {
        *out = parts[0];
        return true;
    }
    *out = value_new_tuple(instr->shape, n, parts, err);
    return *out != NULL;
}

/* Steps idx to the next index of dims in row-major order, keeping
 * *off == sum idx[d] * strides[d]. */
static void step_index(int rank, const int64_t *dims, const int64_t *strides, int64_t *idx, int64_t *off)
{
    for (int d = rank - 1; d >= 0; d--) {
        if (++idx[d] < dims[d]) {
            *off += strides[d];
            return;
        }
        *off -= (dims[d] - 1) * strides[d];
        idx[d] = 0;
    }
}

/* idx = the row-major index of element pos of dims, *off its offset. */
static void start_index(int rank, const int64_t *dims, const int64_t *strides, int64_t pos, int64_t *idx,
                        int64_t *off)
{
    *off = 0;
    for (int d = rank - 1; d >= 0; d--) {
        idx[d] = pos % dims[d];
        pos /= dims[d];
        *off += idx[d] * strides[d];
    }
}

static void next_index(int rank, const int64_t *dims, int64_t *idx)
{
    for (int d = rank - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return;
        idx[d] = 0;
    }
}

/* dst[j] = src[offs[j]] for n elements of es bytes. */
void eval_gather_elems(void *dst, const void *src, const int64_t *offs, int64_t n, size_t es)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    switch (es) {
    case 1: for (int64_t j = 0; j < n; j++) d[j] = s[offs[j]]; break;
    case 2: for (int64_t j = 0; j < n; j++) memcpy(d + 2 * j, s + 2 * offs[j], 2); break;
    case 4: for (int64_t j = 0; j < n; j++) memcpy(d + 4 * j, s + 4 * offs[j], 4); break;
    case 8: for (int64_t j = 0; j < n; j++) memcpy(d + 8 * j, s + 8 * offs[j], 8); break;
    default: for (int64_t j = 0; j < n; j++) memcpy(d + es * (size_t)j, s + es * (size_t)offs[j], es); break;
    }
}

/* n copies of the es-byte value at v. */
static void fill_elems(void *dst, const void *v, int64_t n, size_t es)
{
    unsigned char *d = dst;
    if (n <= 0)
        return;
    memcpy(d, v, es);
    for (size_t have = es, total = (size_t)n * es; have < total; have *= 2)
        memcpy(d + have, d, have < total - have ? have : total - have);
}

bool eval_scalar_call(ScalarCall *c, Error *err)
{
    return eval_call_scalar(c->it, c->comp, c->types, c->args, c->n_args, c->results, c->n_results, err);
}

/* The computation attribute, with the parameter count callers rely on. */
const IrComputation *eval_callee(const IrInstr *instr, IrCompAttr which, int n_params, Error *err)
{
    const IrComputation *c = instr->info->comps[which];
    if (!c || c->n_params != n_params) {
        error_set(err, ERR_SHAPE, instr->info->loc, "%s: %s must take %d parameters", ir_opcode_name(instr->op),
                  ir_comp_attr_name[which], n_params);
        return NULL;
    }
    return c;
}

/* The op of a trivial reducer usable on elements of type t as
 * acc = op(acc, x), or IR_OP_COUNT.  interp_trivial_reducer() also accepts
 * op(x, acc); for float maximum/minimum that is another function (of two
 * NaNs the first operand's is kept), so it is not trivial here. */
static IrOpcode trivial_op(const IrComputation *c, IrElemType t)
{
    IrOpcode op = interp_trivial_reducer(c);
    if (op == IR_OP_COUNT || !kernel_type_ok(t) || c->root->shape->type != t)
        return IR_OP_COUNT;
    bool swapped = c->root->operands[0]->info->parameter_number != 0;
    bool order_matters = ir_type_is_float(t) && (op == IR_OP_MAXIMUM || op == IR_OP_MINIMUM);
    return swapped && order_matters ? IR_OP_COUNT : op;
}

/* ------------------------------------------------------------------ */
/* reduce                                                               */

/* The input seen with its size-1 dims dropped and neighbouring dims of the
 * same kind (kept or reduced) merged: the row-major order of the kept and
 * of the reduced elements is unchanged, and the last dim tells whether
 * outputs (run) or each output's reduced elements (inner) are contiguous. */
typedef struct ReduceGeom {
    int n_kept, n_red;
    int64_t kept_dims[IR_MAX_RANK], kept_strides[IR_MAX_RANK];  /* strides in the input */
    int64_t red_dims[IR_MAX_RANK], red_strides[IR_MAX_RANK];
    int64_t n_out;          /* product of the kept dims */
    int64_t n_red_elems;    /* product of the reduced dims */
    int64_t run;            /* last dim kept: its size (contiguous outputs); else 1 */
    int64_t inner;          /* last dim reduced: its size (contiguous reduced elements); else 0 */
} ReduceGeom;

/* Appends dim (size, stride) to a list, merging it into the previous entry. */
static void geom_push(int64_t *dims, int64_t *strides, int *n, bool merge, int64_t size, int64_t stride)
{
    if (merge) {
        dims[*n - 1] *= size;
        strides[*n - 1] = stride;
        return;
    }
    dims[*n] = size;
    strides[(*n)++] = stride;
}

static bool reduce_geom(const IrInstr *instr, const IrShape *x, ReduceGeom *g, Error *err)
{
    const IrIntList *dl = &instr->lists[IR_LIST_DIMENSIONS];
    bool red[IR_MAX_RANK] = { false };
    int64_t strides[IR_MAX_RANK];
    memset(g, 0, sizeof *g);
    for (int i = 0; i < dl->n; i++) {
        if (dl->v[i] < 0 || dl->v[i] >= x->rank || red[dl->v[i]])
            return error_set(err, ERR_SHAPE, instr->info->loc, "reduce: bad dimensions= for %s", ir_shape_str(x));
        red[dl->v[i]] = true;
    }
    eval_strides(x, strides);
    g->n_out = g->n_red_elems = g->run = 1;
    int prev = -1;          /* kind of the previous dim pushed: 0 kept, 1 reduced */
    for (int d = 0; d < x->rank; d++) {
        if (x->dims[d] == 1)
            continue;
        if (red[d])
            geom_push(g->red_dims, g->red_strides, &g->n_red, prev == 1, x->dims[d], strides[d]);
        else
            geom_push(g->kept_dims, g->kept_strides, &g->n_kept, prev == 0, x->dims[d], strides[d]);
        *(red[d] ? &g->n_red_elems : &g->n_out) *= x->dims[d];
        prev = red[d];
    }
    if (prev == 0)
        g->run = g->kept_dims[g->n_kept - 1];
    if (prev == 1)
        g->inner = g->red_dims[g->n_red - 1];
    return true;
}

static bool check_reduce_operands(const IrInstr *instr, Value *const *args, Error *err)
{
    int n = instr->n_operands / 2;
    if (instr->n_operands % 2 || n < 1 || n > MAX_VARIADIC)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "%s with %d operands is not supported",
                         ir_opcode_name(instr->op), instr->n_operands);
    for (int k = 0; k < n; k++) {
        if (!eval_need_array(instr, args[k], "input", err) || !eval_need_array(instr, args[n + k], "init", err))
            return false;
        if (!eval_same_dims(args[k]->shape, args[0]->shape) || args[n + k]->shape->rank != 0)
            return error_set(err, ERR_SHAPE, instr->info->loc, "%s: inputs must share dims and inits be scalars",
                             ir_opcode_name(instr->op));
    }
    return eval_callee(instr, IR_COMP_TO_APPLY, 2 * n, err) != NULL;
}

/* The call (acc_0..acc_{n-1}, x_0..x_{n-1}) -> acc with accumulators acc. */
static void reducer_call(ScalarCall *c, Interp *it, const IrInstr *instr, int n, Value *const *args,
                         unsigned char (*acc)[MAX_ELEM_BYTES])
{
    memset(c, 0, sizeof *c);
    c->it = it;
    c->comp = instr->info->comps[IR_COMP_TO_APPLY];
    c->n_args = 2 * n;
    c->n_results = n;
    for (int k = 0; k < n; k++) {
        c->types[k] = args[n + k]->shape->type;
        c->types[n + k] = args[k]->shape->type;
        c->args[k] = acc[k];
        c->results[k] = acc[k];
    }
}

/* Folds the reduced elements of the output whose kept offset is koff. */
static bool fold_reduced_slow(ScalarCall *c, const ReduceGeom *g, int n, Value *const *args, int64_t koff,
                              Error *err)
{
    int64_t ridx[IR_MAX_RANK] = { 0 }, roff = 0;
    for (int64_t r = 0; r < g->n_red_elems; r++) {
        for (int k = 0; k < n; k++)
            c->args[n + k] = (const unsigned char *)args[k]->data + (size_t)(koff + roff) * eval_elem_bytes(args[k]);
        if (!eval_scalar_call(c, err))
            return false;
        step_index(g->n_red, g->red_dims, g->red_strides, ridx, &roff);
    }
    return true;
}

static bool reduce_slow(Interp *it, const IrInstr *instr, const ReduceGeom *g, int n, Value *const *args,
                        Value **parts, Error *err)
{
    unsigned char acc[MAX_VARIADIC][MAX_ELEM_BYTES];
    ScalarCall c;
    reducer_call(&c, it, instr, n, args, acc);
    int64_t kidx[IR_MAX_RANK] = { 0 }, koff = 0;
    for (int64_t m = 0; m < g->n_out; m++) {
        for (int k = 0; k < n; k++)
            memcpy(acc[k], args[n + k]->data, eval_elem_bytes(args[n + k]));
        if (!fold_reduced_slow(&c, g, n, args, koff, err))
            return false;
        for (int k = 0; k < n; k++)
            memcpy((unsigned char *)parts[k]->data + (size_t)m * eval_elem_bytes(parts[k]), acc[k], eval_elem_bytes(parts[k]));
        step_index(g->n_kept, g->kept_dims, g->kept_strides, kidx, &koff);
    }
    return true;
}

/* Direct sequential folds: *acc = acc op p[0] op p[1] ... (left to right).
 * Only ops whose result no implementation choice can change. */
#define DEFINE_INT_FOLD(NAME, S, U)                                                        \
    static bool NAME(IrOpcode op, void *acc, const void *src, int64_t n)                   \
    {                                                                                      \
        const U *p = src;                                                                  \
        const S *ps = src;                                                                 \
        U a;                                                                               \
        S sa;                                                                              \
        memcpy(&a, acc, sizeof a);                                                         \
        memcpy(&sa, acc, sizeof sa);                                                       \
        switch ((int)op) {                                                                 \
        case IR_OP_ADD: for (int64_t i = 0; i < n; i++) a = (U)(a + p[i]); break;          \
        case IR_OP_MULTIPLY: for (int64_t i = 0; i < n; i++) a = (U)((uintmax_t)a * p[i]); break; \
        case IR_OP_AND: for (int64_t i = 0; i < n; i++) a &= p[i]; break;                  \
        case IR_OP_OR: for (int64_t i = 0; i < n; i++) a |= p[i]; break;                   \
        case IR_OP_MAXIMUM: for (int64_t i = 0; i < n; i++) sa = ps[i] > sa ? ps[i] : sa;  \
            memcpy(&a, &sa, sizeof a); break;                                              \
        case IR_OP_MINIMUM: for (int64_t i = 0; i < n; i++) sa = ps[i] < sa ? ps[i] : sa;  \
            memcpy(&a, &sa, sizeof a); break;                                              \
        default: return false;                                                             \
        }                                                                                  \
        memcpy(acc, &a, sizeof a);                                                         \
        return true;                                                                       \
    }

DEFINE_INT_FOLD(fold_s8, int8_t, uint8_t)
DEFINE_INT_FOLD(fold_s16, int16_t, uint16_t)
DEFINE_INT_FOLD(fold_s32, int32_t, uint32_t)
DEFINE_INT_FOLD(fold_s64, int64_t, uint64_t)
DEFINE_INT_FOLD(fold_u8, uint8_t, uint8_t)
DEFINE_INT_FOLD(fold_u16, uint16_t, uint16_t)
DEFINE_INT_FOLD(fold_u32, uint32_t, uint32_t)
DEFINE_INT_FOLD(fold_u64, uint64_t, uint64_t)

/* maximum/minimum exactly as interp_binary_kernel defines them for f32 and
 * f64 (eval.h): a NaN operand wins, lhs first; +0 > -0. */
#define FOLD_MAX(a, b) IEEE_MAX(a, b)
#define FOLD_MIN(a, b) IEEE_MIN(a, b)

/* a = a OP p[i] for i < n, for each op of a float fold. */
#define FLOAT_FOLD_LOOPS(op, N, STEP)                                                      \
    switch ((int)(op)) {                                                                   \
    case IR_OP_ADD: for (int64_t i = 0; i < (N); i++) STEP(i, +, ARITH); break;            \
    case IR_OP_MULTIPLY: for (int64_t i = 0; i < (N); i++) STEP(i, *, ARITH); break;       \
    case IR_OP_MAXIMUM: for (int64_t i = 0; i < (N); i++) STEP(i, MAX, SELECT); break;     \
    case IR_OP_MINIMUM: for (int64_t i = 0; i < (N); i++) STEP(i, MIN, SELECT); break;     \
    default: return false;                                                                 \
    }

#define APPLY_ARITH(a, OP, x) ((a) OP (x))
#define APPLY_SELECT(a, OP, x) FOLD_##OP(a, x)
#define ONE_STEP(i, OP, KIND) (a = APPLY_##KIND(a, OP, p[i]))
#define GROUP_STEP(i, OP, KIND)                                                            \
    for (int j = 0; j < FOLD_GROUP; j++)                                                   \
        a[j] = APPLY_##KIND(a[j], OP, p[j][i])

#define DEFINE_FLOAT_FOLD(NAME, T)                                                         \
    static bool NAME(IrOpcode op, void *acc, const void *src, int64_t n)                   \
    {                                                                                      \
        const T *p = src;                                                                  \
        T a;                                                                               \
        memcpy(&a, acc, sizeof a);                                                         \
        FLOAT_FOLD_LOOPS(op, n, ONE_STEP)                                                  \
        memcpy(acc, &a, sizeof a);                                                         \
        return true;                                                                       \
    }

DEFINE_FLOAT_FOLD(fold_f32, float)
DEFINE_FLOAT_FOLD(fold_f64, double)

/* Many outputs at once, SLICE_ROWS reduced offsets a pass: acc[j] =
 * (((acc[j] op x0[j]) op x1[j]) op x2[j]) op x3[j] for j < n, in place, so
 * each output is still its own left fold in the order of the reduced
 * offsets, and the accumulators are read and written once per four rows
 * instead of once per row (interp_binary_kernel would also need a second
 * buffer).  Fewer rows than four: one at a time.  The loops vectorise
 * across outputs.
 *
 * Which NaN an add or multiply of two NaNs returns is the hardware's
 * choice of operand, and a compiler may swap the operands of a vector add.
 * These steps keep the accumulator's NaN (quieted), as the single-output
 * folds above do, whatever the operand order: a + a is a's NaN either
 * way.  (interp_binary_kernel's f32 loop, which strided reduces used
 * before, returns whichever operand gcc put first; the checker counts
 * every NaN alike.) */
#define DEFINE_SLICE_STEPS(P, T)                                                           \
    static inline T P##_slice_add(T a, T b) { return a != a ? a + a : a + b; }            \
    static inline T P##_slice_mul(T a, T b) { return a != a ? a * a : a * b; }            \
    static inline T P##_slice_max(T a, T b) { return FOLD_MAX(a, b); }                     \
    static inline T P##_slice_min(T a, T b) { return FOLD_MIN(a, b); }
DEFINE_SLICE_STEPS(f32, float)
DEFINE_SLICE_STEPS(f64, double)

#define SLICE_ROWS 4
#define SLICE_PASS(T, F)                                                                   \
    do {                                                                                   \
        if (rows == SLICE_ROWS) {                                                          \
            const T *restrict p0 = src[0], *restrict p1 = src[1];                          \
            const T *restrict p2 = src[2], *restrict p3 = src[3];                          \
            VLOOP(n, acc[i] = F(F(F(F(acc[i], p0[i]), p1[i]), p2[i]), p3[i]));             \
        } else {                                                                           \
            for (int r = 0; r < rows; r++) {                                               \
                const T *restrict p = src[r];                                              \
                VLOOP(n, acc[i] = F(acc[i], p[i]));                                        \
            }                                                                              \
        }                                                                                  \
    } while (0)
#define DEFINE_FLOAT_SLICE_FOLD(NAME, P, T, ATTR)                                          \
    ATTR static void NAME(IrOpcode op, void *restrict acc_, const void *const *src, int rows, int64_t n) \
    {                                                                                      \
        T *restrict acc = acc_;                                                            \
        switch ((int)op) {                                                                 \
        case IR_OP_ADD: SLICE_PASS(T, P##_slice_add); break;                               \
        case IR_OP_MULTIPLY: SLICE_PASS(T, P##_slice_mul); break;                          \
        case IR_OP_MAXIMUM: SLICE_PASS(T, P##_slice_max); break;                           \
        case IR_OP_MINIMUM: SLICE_PASS(T, P##_slice_min); break;                           \
        default: break;     /* slice_fold offers these four ops only */                     \
        }                                                                                  \
    }

/* Built for plain x86-64 and, chosen where the CPU has them (simd.c), for
 * AVX2 and AVX-512: the same C, bit for bit. */
DEFINE_FLOAT_SLICE_FOLD(slice_fold_f32, f32, float, )
DEFINE_FLOAT_SLICE_FOLD(slice_fold_f64, f64, double, )
#ifdef INTERP_HAVE_AVX2
DEFINE_FLOAT_SLICE_FOLD(slice_fold_f32_avx2, f32, float, __attribute__((target("avx2"))))
DEFINE_FLOAT_SLICE_FOLD(slice_fold_f64_avx2, f64, double, __attribute__((target("avx2"))))
DEFINE_FLOAT_SLICE_FOLD(slice_fold_f32_avx512, f32, float, __attribute__((target("avx512f,avx512bw,avx512vl"))))
DEFINE_FLOAT_SLICE_FOLD(slice_fold_f64_avx512, f64, double, __attribute__((target("avx512f,avx512bw,avx512vl"))))
#endif

/* The same for FOLD_GROUP outputs at once (acc[j] folds the row at in +
 * offs[j]): independent chains, so the steps overlap instead of waiting on
 * each other's latency, and every row is read front to back. */
#define FOLD_GROUP 8
#define DEFINE_FLOAT_FOLD_GROUP(NAME, T)                                                   \
    static bool NAME(IrOpcode op, void *acc, const void *in, const int64_t *offs, int64_t n) \
    {                                                                                      \
        T a[FOLD_GROUP];                                                                   \
        const T *p[FOLD_GROUP];                                                            \
        memcpy(a, acc, sizeof a);                                                          \
        for (int j = 0; j < FOLD_GROUP; j++)                                               \
            p[j] = (const T *)in + offs[j];                                                \
        FLOAT_FOLD_LOOPS(op, n, GROUP_STEP)                                                \
        memcpy(acc, a, sizeof a);                                                          \
        return true;                                                                       \
    }

DEFINE_FLOAT_FOLD_GROUP(fold_group_f32, float)
DEFINE_FLOAT_FOLD_GROUP(fold_group_f64, double)

/* The grouped folds with AVX2: the next 8 (f32) or 4 (f64) elements of
 * every row loaded and transposed in registers, so that lane j adds (or
 * multiplies) row j's elements in order: the same left fold per output,
 * every lane at once.  The tail goes one element at a time. */
#ifdef INTERP_HAVE_AVX2
#define AVX2_GROUP_LOOP(OP, VOP)                                                            \
    for (; i + 8 <= n; i += 8) {                                                           \
        __m256 r[8];                                                                       \
        SIMD_UNROLL for (int j = 0; j < 8; j++) r[j] = _mm256_loadu_ps(p[j] + i);          \
        simd_transpose8_ps(r);                                                             \
        SIMD_UNROLL for (int c = 0; c < 8; c++) a = VOP(a, r[c]);                          \
    }                                                                                      \
    _mm256_storeu_ps(s, a);                                                                \
    for (; i < n; i++)                                                                     \
        for (int j = 0; j < 8; j++)                                                        \
            s[j] = s[j] OP p[j][i];

__attribute__((target("avx2"))) static bool fold_group_f32_avx2(IrOpcode op, void *acc, const void *in,
                                                                const int64_t *offs, int64_t n)
{
    const float *p[FOLD_GROUP];
    for (int j = 0; j < FOLD_GROUP; j++)
        p[j] = (const float *)in + offs[j];
    float *s = acc;
    __m256 a = _mm256_loadu_ps(s);
    int64_t i = 0;
    if (op == IR_OP_ADD) {
        AVX2_GROUP_LOOP(+, _mm256_add_ps)
    } else {
        AVX2_GROUP_LOOP(*, _mm256_mul_ps)
    }
    return true;
}

/* Rows 4k .. 4k+3's next 4 elements as 4 columns, lane j row 4k + j. */
__attribute__((target("avx2"))) static inline void transpose4_pd(__m256d *r)
{
    __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
    __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

#define AVX2_GROUP_LOOP_PD(OP, VOP)                                                         \
    for (; i + 4 <= n; i += 4) {                                                           \
        SIMD_UNROLL for (int h = 0; h < 2; h++) {                                          \
            __m256d r[4];                                                                  \
            SIMD_UNROLL for (int j = 0; j < 4; j++) r[j] = _mm256_loadu_pd(p[4 * h + j] + i); \
            transpose4_pd(r);                                                              \
            SIMD_UNROLL for (int c = 0; c < 4; c++) a[h] = VOP(a[h], r[c]);                \
        }                                                                                  \
    }                                                                                      \
    _mm256_storeu_pd(s, a[0]);                                                             \
    _mm256_storeu_pd(s + 4, a[1]);                                                         \
    for (; i < n; i++)                                                                     \
        for (int j = 0; j < 8; j++)                                                        \
            s[j] = s[j] OP p[j][i];

__attribute__((target("avx2"))) static bool fold_group_f64_avx2(IrOpcode op, void *acc, const void *in,
                                                                const int64_t *offs, int64_t n)
{
    const double *p[FOLD_GROUP];
    for (int j = 0; j < FOLD_GROUP; j++)
        p[j] = (const double *)in + offs[j];
    double *s = acc;
    __m256d a[2] = { _mm256_loadu_pd(s), _mm256_loadu_pd(s + 4) };
    int64_t i = 0;
    if (op == IR_OP_ADD) {
        AVX2_GROUP_LOOP_PD(+, _mm256_add_pd)
    } else {
        AVX2_GROUP_LOOP_PD(*, _mm256_mul_pd)
    }
    return true;
}
#endif /* INTERP_HAVE_AVX2 */

/* bf16 and f16 add / multiply: each step is what interp_binary_kernel gives
 * for (acc, x), the f32 op of the two decoded values, the accumulator's NaN
 * kept, rounded once to the narrow type (f32 holds more than twice the
 * narrow significand plus two bits, so rounding twice would change
 * nothing), folded in order without a call per element. */
#define NARROW_FOLD(NAME, DECODE, ENCODE)                                               \
    static bool NAME(IrOpcode op, void *acc, const void *src, int64_t n)                \
    {                                                                                   \
        uint16_t *a = acc;                                                              \
        const uint16_t *x = src;                                                        \
        float s = DECODE(*a);                                                           \
        if (op == IR_OP_ADD)                                                            \
            for (int64_t i = 0; i < n; i++)                                             \
                s = DECODE(ENCODE(lhs_nan_first(s, s + DECODE(x[i]))));                 \
        else                                                                            \
            for (int64_t i = 0; i < n; i++)                                             \
                s = DECODE(ENCODE(lhs_nan_first(s, s * DECODE(x[i]))));                 \
        *a = ENCODE(s);                                                                 \
        return true;                                                                    \
    }
NARROW_FOLD(fold_bf16, bf16_decode, bf16_encode)
NARROW_FOLD(fold_f16, f16_decode, f16_encode)

typedef bool (*GroupFold)(IrOpcode op, void *acc, const void *in, const int64_t *offs, int64_t n);

typedef bool (*DirectFold)(IrOpcode op, void *acc, const void *src, int64_t n);

typedef void (*SliceFold)(IrOpcode op, void *restrict acc, const void *const *src, int rows, int64_t n);

/* The slice fold for (op, t), or NULL when the kernel must do it. */
static SliceFold slice_fold(IrOpcode op, IrElemType t)
{
    if (op != IR_OP_ADD && op != IR_OP_MULTIPLY && op != IR_OP_MAXIMUM && op != IR_OP_MINIMUM)
        return NULL;
#ifdef INTERP_HAVE_AVX2
    if (interp_use_avx512())
        return t == IR_TYPE_F32 ? slice_fold_f32_avx512 : t == IR_TYPE_F64 ? slice_fold_f64_avx512 : NULL;
    if (interp_use_avx2())
        return t == IR_TYPE_F32 ? slice_fold_f32_avx2 : t == IR_TYPE_F64 ? slice_fold_f64_avx2 : NULL;
#endif
    return t == IR_TYPE_F32 ? slice_fold_f32 : t == IR_TYPE_F64 ? slice_fold_f64 : NULL;
}

/* The direct fold for (op, t), or NULL when the kernel must do it.  A fold
 * returned here handles op (its false return never happens). */
static DirectFold direct_fold(IrOpcode op, IrElemType t)
{
    bool arith = op == IR_OP_ADD || op == IR_OP_MULTIPLY;
    bool order = op == IR_OP_MAXIMUM || op == IR_OP_MINIMUM;
    bool logic = op == IR_OP_AND || op == IR_OP_OR;
    switch ((int)t) {
    case IR_TYPE_S8: return fold_s8;
    case IR_TYPE_S16: return fold_s16;
    case IR_TYPE_S32: return fold_s32;
    case IR_TYPE_S64: return fold_s64;
    case IR_TYPE_U8: return fold_u8;
    case IR_TYPE_U16: return fold_u16;
    case IR_TYPE_U32: return fold_u32;
    case IR_TYPE_U64: return fold_u64;
    case IR_TYPE_PRED: return logic || order ? fold_u8 : NULL;
    case IR_TYPE_F32: return arith || order ? fold_f32 : NULL;
    case IR_TYPE_F64: return arith || order ? fold_f64 : NULL;
    case IR_TYPE_BF16: return arith ? fold_bf16 : NULL;
    case IR_TYPE_F16: return arith ? fold_f16 : NULL;
    default: return NULL;
    }
}

/* The grouped fold for (op, t), or NULL.  Only add and multiply gain: a
 * lone maximum/minimum chain is short once its branches are predicted. */
static GroupFold group_fold(IrOpcode op, IrElemType t)
{
    if (op != IR_OP_ADD && op != IR_OP_MULTIPLY)
        return NULL;
#ifdef INTERP_HAVE_AVX2
    if (interp_use_avx2())
        return t == IR_TYPE_F32 ? fold_group_f32_avx2 : t == IR_TYPE_F64 ? fold_group_f64_avx2 : NULL;
#endif
    return t == IR_TYPE_F32 ? fold_group_f32 : t == IR_TYPE_F64 ? fold_group_f64 : NULL;
}

/* Ops for which interp_binary_kernel is exactly associative, so a row may
 * be folded as contiguous segments whose partial results are then folded
 * in order.  maximum/minimum qualify: they pick the leftmost NaN, else the
 * greatest (least) value with +0 above -0, and that pick is associative.  Float add/multiply do not. */
static bool kernel_is_associative(IrOpcode op, IrElemType t)
{
    if (op == IR_OP_MAXIMUM || op == IR_OP_MINIMUM || op == IR_OP_AND || op == IR_OP_OR)
        return true;
    return ir_type_is_int(t) && (op == IR_OP_ADD || op == IR_OP_MULTIPLY);
}

typedef struct FastReduce {
    IrOpcode op;
    IrElemType t;
    size_t es;
    const unsigned char *in;
    DirectFold direct;          /* NULL: not usable */
    bool serial;                /* direct is a narrow fold, one dependent step after another: for many
                                   rows at once the transposed kernel is faster */
    GroupFold group;            /* NULL: not usable */
    SliceFold slice;            /* NULL: not usable */
    bool associative;           /* kernel_is_associative(op, t) */
    int64_t *offs;              /* BLOCK_RUN: input offsets of a block's outputs */
    int64_t *seg_offs;          /* ROWS_BLOCK: segment starts of one row */
    unsigned char *scratch;     /* BLOCK_GATHER or ROWS_BLOCK x ROWS_CHUNK elements */
    unsigned char *partial;     /* ROWS_BLOCK elements: segment results */
    unsigned char *alt;         /* BLOCK_RUN elements: the other accumulator */
} FastReduce;

static bool kernel_step(const FastReduce *f, unsigned char *acc, const unsigned char *x, int64_t n, Error *err)
{
    return interp_binary_kernel(f->op, f->t, acc, acc, x, n, err);
}

/* kernel_step into the other of two buffers (the kernel copies through a
 * temporary when it runs in place): *cur becomes the one holding acc. */
static bool kernel_flip(const FastReduce *f, unsigned char **cur, unsigned char **other, const unsigned char *x,
                        int64_t n, Error *err)
{
    unsigned char *swap = *cur;
    if (!interp_binary_kernel(f->op, f->t, *other, *cur, x, n, err))
        return false;
    *cur = *other;
    *other = swap;
    return true;
}

/* Outputs in the block starting at m0: whole contiguous runs when they are
 * long enough to pass straight to the kernel. */
static int64_t block_len(const ReduceGeom *g, int64_t m0)
{
    int64_t left = g->n_out - m0, cap = g->inner ? ROWS_BLOCK : BLOCK_GATHER;
    if (!g->inner && g->run >= MIN_RUN) {
        int64_t in_run = g->run - m0 % g->run;
        left = left < in_run ? left : in_run;
        cap = BLOCK_RUN;
    }
    return left < cap ? left : cap;
}

static bool offsets_contiguous(const int64_t *offs, int64_t n)
{
    for (int64_t j = 1; j < n; j++)
        if (offs[j] != offs[0] + j)
            return false;
    return true;
}

/* Last dim kept: acc[j] op= x[offs[j] + roff] for every reduced offset roff
 * in row-major order; the slice is contiguous, or gathered into scratch. */
static bool fold_slices(const FastReduce *f, const ReduceGeom *g, unsigned char *acc, int64_t nb, Error *err)
{
    bool contiguous = offsets_contiguous(f->offs, nb);
    int64_t ridx[IR_MAX_RANK] = { 0 }, roff = 0;
    unsigned char *cur = acc, *other = f->alt;
    if (contiguous && f->slice) {       /* SLICE_ROWS reduced offsets a pass, in place */
        const void *src[SLICE_ROWS];
        for (int64_t r = 0; r < g->n_red_elems;) {
            int rows = 0;
            for (; rows < SLICE_ROWS && r < g->n_red_elems; rows++, r++) {
                src[rows] = f->in + (size_t)(roff + f->offs[0]) * f->es;
                step_index(g->n_red, g->red_dims, g->red_strides, ridx, &roff);
            }
            f->slice(f->op, acc, src, rows, nb);
        }
        return true;
    }
    for (int64_t r = 0; r < g->n_red_elems; r++) {
        const unsigned char *src = f->in + (size_t)(roff + f->offs[0]) * f->es;
        if (!contiguous) {
            eval_gather_elems(f->scratch, f->in + (size_t)roff * f->es, f->offs, nb, f->es);
            src = f->scratch;
        }
        if (!kernel_flip(f, &cur, &other, src, nb, err))
            return false;
        step_index(g->n_red, g->red_dims, g->red_strides, ridx, &roff);
    }
    if (cur != acc)
        memcpy(acc, cur, (size_t)nb * f->es);
    return true;
}

/* dst[c * nb + j] = src[offs[j] + c] for c < kc, j < nb: rows to columns. */
static void transpose_rows(void *dst, const unsigned char *src, const int64_t *offs, int64_t nb, int64_t kc,
                           size_t es)
{
    unsigned char *d = dst;
    for (int64_t j = 0; j < nb; j++) {
        const unsigned char *row = src + (size_t)offs[j] * es;
        switch (es) {
        case 1: for (int64_t c = 0; c < kc; c++) d[c * nb + j] = row[c]; break;
        case 2: for (int64_t c = 0; c < kc; c++) memcpy(d + 2 * (c * nb + j), row + 2 * c, 2); break;
        case 4: for (int64_t c = 0; c < kc; c++) memcpy(d + 4 * (c * nb + j), row + 4 * c, 4); break;
        case 8: for (int64_t c = 0; c < kc; c++) memcpy(d + 8 * (c * nb + j), row + 8 * c, 8); break;
        default:
            for (int64_t c = 0; c < kc; c++)
                memcpy(d + es * (size_t)(c * nb + j), row + es * (size_t)c, es);
            break;
        }
    }
}

/* acc[j] op= x[offs[j] + base + c] for c = 0 .. len-1 in order, nb <=
 * ROWS_BLOCK: chunks of the rows are transposed so that each kernel call
 * covers all nb outputs. */
static bool fold_rows_transposed(const FastReduce *f, unsigned char *acc, const int64_t *offs, int64_t base,
                                 int64_t nb, int64_t len, Error *err)
{
    unsigned char *cur = acc, *other = f->alt;
    for (int64_t c0 = 0; c0 < len; c0 += ROWS_CHUNK) {
        int64_t kc = len - c0 < ROWS_CHUNK ? len - c0 : ROWS_CHUNK;
        transpose_rows(f->scratch, f->in + (size_t)(base + c0) * f->es, offs, nb, kc, f->es);
        for (int64_t c = 0; c < kc; c++)
            if (!kernel_flip(f, &cur, &other, f->scratch + (size_t)(c * nb) * f->es, nb, err))
                return false;
    }
    if (cur != acc)
        memcpy(acc, cur, (size_t)nb * f->es);
    return true;
}

/* One output, an associative op: the row as ROWS_BLOCK contiguous segments
 * (each starting from its first element), then acc op= each segment's
 * result in order, then the leftover tail. */
static bool fold_segments(const FastReduce *f, unsigned char *acc, int64_t off, int64_t len, Error *err)
{
    int64_t seg = len / ROWS_BLOCK;
    for (int64_t s = 0; s < ROWS_BLOCK; s++) {
        f->seg_offs[s] = s * seg;
        memcpy(f->partial + (size_t)s * f->es, f->in + (size_t)(off + s * seg) * f->es, f->es);
    }
    if (!fold_rows_transposed(f, f->partial, f->seg_offs, off + 1, ROWS_BLOCK, seg - 1, err))
        return false;
    for (int64_t s = 0; s < ROWS_BLOCK; s++)
        if (!kernel_step(f, acc, f->partial + (size_t)s * f->es, 1, err))
            return false;
    for (int64_t i = ROWS_BLOCK * seg; i < len; i++)
        if (!kernel_step(f, acc, f->in + (size_t)(off + i) * f->es, 1, err))
            return false;
    return true;
}

/* One output: acc op= x[off .. off+len) in order. */
static bool fold_one_row(const FastReduce *f, unsigned char *acc, int64_t off, int64_t len, Error *err)
{
    if (f->direct) {
        return f->direct(f->op, acc, f->in + (size_t)off * f->es, len) ||
               error_set(err, ERR_INTERNAL, (IrLoc){ 0 }, "reduce: no direct fold");
    }
    if (f->associative && len >= 4 * ROWS_BLOCK)
        return fold_segments(f, acc, off, len, err);
    for (int64_t i = 0; i < len; i++)
        if (!kernel_step(f, acc, f->in + (size_t)(off + i) * f->es, 1, err))
            return false;
    return true;
}

/* Last dim reduced: for each position of the other reduced dims (row-major),
 * every output folds its contiguous row of g->inner elements. */
static bool fold_inner(const FastReduce *f, const ReduceGeom *g, unsigned char *acc, int64_t nb, Error *err)
{
    int64_t ridx[IR_MAX_RANK] = { 0 }, roff = 0;
    for (int64_t r = 0; r < g->n_red_elems / g->inner; r++) {
        int64_t j = 0;
        if (f->group)
            for (; j + FOLD_GROUP <= nb; j += FOLD_GROUP) {
                int64_t offs[FOLD_GROUP];
                for (int k = 0; k < FOLD_GROUP; k++)
                    offs[k] = f->offs[j + k] + roff;
                if (!f->group(f->op, acc + (size_t)j * f->es, f->in, offs, g->inner))
                    return error_set(err, ERR_INTERNAL, (IrLoc){ 0 }, "reduce: no grouped fold");
            }
        if ((!f->direct || f->serial) && nb >= DIRECT_MAX) {
            if (!fold_rows_transposed(f, acc, f->offs, roff, nb, g->inner, err))
                return false;
            j = nb;
        }
        for (; j < nb; j++)
            if (!fold_one_row(f, acc + (size_t)j * f->es, f->offs[j] + roff, g->inner, err))
                return false;
        step_index(g->n_red - 1, g->red_dims, g->red_strides, ridx, &roff);
    }
    return true;
}

/* The scratch buffers for blocks of at most `outputs` outputs (a range's
 * count: a small reduce does not pay for BLOCK_RUN). */
static bool fast_reduce_init(FastReduce *f, const IrInstr *instr, IrOpcode op, const Value *x, int64_t outputs,
                             Error *err)
{
    IrElemType t = x->shape->type;
    size_t es = eval_elem_bytes(x);
    int64_t scratch = BLOCK_GATHER > ROWS_BLOCK * ROWS_CHUNK ? BLOCK_GATHER : ROWS_BLOCK * ROWS_CHUNK;
    int64_t run = outputs < BLOCK_RUN ? (outputs > ROWS_BLOCK ? outputs : ROWS_BLOCK) : BLOCK_RUN;
    *f = (FastReduce){ op, t, es, x->data, direct_fold(op, t), t == IR_TYPE_BF16 || t == IR_TYPE_F16,
                       group_fold(op, t), slice_fold(op, t), kernel_is_associative(op, t), NULL, NULL, NULL, NULL,
                       NULL };
    return (f->offs = eval_scratch_alloc(run, sizeof *f->offs, instr, err)) &&
           (f->seg_offs = eval_scratch_alloc(ROWS_BLOCK, sizeof *f->seg_offs, instr, err)) &&
           (f->scratch = eval_scratch_alloc(scratch, es, instr, err)) &&
           (f->partial = eval_scratch_alloc(ROWS_BLOCK, es, instr, err)) &&
           (f->alt = eval_scratch_alloc(run, es, instr, err));
}

static void fast_reduce_free(FastReduce *f)
{
    free(f->offs);
    free(f->seg_offs);
    free(f->scratch);
    free(f->partial);
    free(f->alt);
}

/* Outputs [begin, end) of the fast reduce. */
static bool reduce_fast_range(const IrInstr *instr, IrOpcode op, const ReduceGeom *g, const Value *x,
                              const Value *init, Value *res, int64_t begin, int64_t end, Error *err)
{
    FastReduce f;
    bool ok = fast_reduce_init(&f, instr, op, x, end - begin, err);
    int64_t kidx[IR_MAX_RANK] = { 0 }, koff = 0;
    start_index(g->n_kept, g->kept_dims, g->kept_strides, begin, kidx, &koff);
    for (int64_t m0 = begin, nb = 0; ok && m0 < end; m0 += nb) {
        nb = block_len(g, m0);
        nb = nb < end - m0 ? nb : end - m0;
        for (int64_t j = 0; j < nb; j++) {
            f.offs[j] = koff;
            step_index(g->n_kept, g->kept_dims, g->kept_strides, kidx, &koff);
        }
        unsigned char *acc = (unsigned char *)res->data + (size_t)m0 * f.es;
        fill_elems(acc, init->data, nb, f.es);
        if (g->n_red_elems > 0)
            ok = g->inner ? fold_inner(&f, g, acc, nb, err) : fold_slices(&f, g, acc, nb, err);
    }
    fast_reduce_free(&f);
    return ok;
}

typedef struct ReduceJob {
    const IrInstr *instr;
    IrOpcode op;
    const ReduceGeom *g;
    const Value *x, *init;
    Value *res;
    atomic_flag failed;     /* set by the first chunk that fails, which fills err */
    Error err;
} ReduceJob;

static void reduce_chunk(void *ctx, int64_t begin, int64_t end)
{
    ReduceJob *j = ctx;
    Error err = { .code = ERR_OK };
    if (!reduce_fast_range(j->instr, j->op, j->g, j->x, j->init, j->res, begin, end, &err) &&
        !atomic_flag_test_and_set(&j->failed))
        j->err = err;
}

/* Split over the outputs; each reads its n_red_elems elements. */
static bool reduce_fast(const IrInstr *instr, IrOpcode op, const ReduceGeom *g, const Value *x,
                        const Value *init, Value *res, Error *err)
{
    ReduceJob j = { instr, op, g, x, init, res, ATOMIC_FLAG_INIT, { .code = ERR_OK } };
    int64_t per = (g->n_red_elems + 1) * (int64_t)eval_elem_bytes(x);
    parallel_for(g->n_out, per, 64, reduce_chunk, &j);
    if (j.err.code == ERR_OK)
        return true;
    *err = j.err;
    return false;
}

/* The input's dims without the reduced ones (dimensions= already checked). */
static int reduce_out_dims(const IrInstr *instr, const IrShape *x, int64_t *dims)
{
    const IrIntList *dl = &instr->lists[IR_LIST_DIMENSIONS];
    int rank = 0;
    for (int d = 0; d < x->rank; d++) {
        bool reduced = false;
        for (int i = 0; i < dl->n; i++)
            reduced = reduced || dl->v[i] == d;
        if (!reduced)
            dims[rank++] = x->dims[d];
    }
    return rank;
}

bool eval_reduce(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    ReduceGeom g;
    int n = instr->n_operands / 2;
    if (!check_reduce_operands(instr, args, err) || !reduce_geom(instr, args[0]->shape, &g, err))
        return false;
    IrElemType types[MAX_VARIADIC];
    for (int k = 0; k < n; k++)
        types[k] = args[n + k]->shape->type;
    Value *parts[MAX_VARIADIC] = { 0 };
    int64_t out_dims[IR_MAX_RANK];
    int out_rank = reduce_out_dims(instr, args[0]->shape, out_dims);
    if (!eval_new_parts(instr, n, out_rank, out_dims, types, parts, err))
        return false;
    IrElemType t = args[0]->shape->type;
    IrOpcode op = n == 1 && types[0] == t ? trivial_op(instr->info->comps[IR_COMP_TO_APPLY], t) : IR_OP_COUNT;
    bool ok = op != IR_OP_COUNT ? reduce_fast(instr, op, &g, args[0], args[1], parts[0], err)
                                : reduce_slow(it, instr, &g, n, args, parts, err);
    return eval_finish_parts(instr, n, parts, ok, out, err);
}

/* ------------------------------------------------------------------ */
/* reduce-window                                                        */

typedef struct WindowGeom {
    int rank;
    const IrWindowDim *w;
    int64_t in_dims[IR_MAX_RANK], in_strides[IR_MAX_RANK];
    int64_t out_dims[IR_MAX_RANK], out_strides[IR_MAX_RANK];
    int64_t win_dims[IR_MAX_RANK];
    int64_t n_out, n_win;
    bool base_dilated;      /* some lhs_dilate > 1 */
} WindowGeom;

/* Output size of one dim: windows that fit the padded, dilated base. */
static int64_t window_out_dim(int64_t in, const IrWindowDim *w)
{
    int64_t base = in == 0 ? 0 : (in - 1) * w->lhs_dilate + 1;
    int64_t padded = base + w->pad_lo + w->pad_hi;
    int64_t span = (w->size - 1) * w->rhs_dilate + 1;
    return padded < span ? 0 : (padded - span) / w->stride + 1;
}

static bool window_geom(const IrInstr *instr, const IrShape *x, WindowGeom *g, Error *err)
{
    memset(g, 0, sizeof *g);
    if (instr->info->n_window != x->rank || (x->rank > 0 && !instr->info->has_window))
        return error_set(err, ERR_SHAPE, instr->info->loc, "reduce-window: window must have %d dimensions", x->rank);
    g->rank = x->rank;
    g->w = instr->info->window;
    g->n_out = g->n_win = 1;
    eval_strides(x, g->in_strides);
    for (int d = 0; d < x->rank; d++) {
        const IrWindowDim *w = &instr->info->window[d];
        if (w->size < 1 || w->stride < 1 || w->lhs_dilate < 1 || w->rhs_dilate < 1 || w->reversal)
            return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "reduce-window: window dimension %d is not supported", d);
        g->in_dims[d] = x->dims[d];
        g->out_dims[d] = window_out_dim(x->dims[d], w);
        g->win_dims[d] = w->size;
        g->n_out *= g->out_dims[d];
        g->n_win *= w->size;
        g->base_dilated = g->base_dilated || w->lhs_dilate > 1;
    }
    int64_t acc = 1;
    for (int d = x->rank - 1; d >= 0; d--) {
        g->out_strides[d] = acc;
        acc *= g->out_dims[d];
    }
    return true;
}

/* Input offset of window position wi of output o; false in the padding or
 * between dilated base elements. */
static bool window_offset(const WindowGeom *g, const int64_t *o, const int64_t *wi, int64_t *off)
{
    int64_t acc = 0;
    for (int d = 0; d < g->rank; d++) {
        const IrWindowDim *w = &g->w[d];
        int64_t p = o[d] * w->stride + wi[d] * w->rhs_dilate - w->pad_lo;
        if (p < 0 || p % w->lhs_dilate)
            return false;
        p /= w->lhs_dilate;
        if (p >= g->in_dims[d])
            return false;
        acc += p * g->in_strides[d];
    }
    *off = acc;
    return true;
}

static bool window_fold_slow(ScalarCall *c, const WindowGeom *g, int n, Value *const *args, const int64_t *o,
                             Error *err)
{
    int64_t wi[IR_MAX_RANK] = { 0 }, off = 0;
    for (int64_t k = 0; k < g->n_win; k++, next_index(g->rank, g->win_dims, wi)) {
        if (!window_offset(g, o, wi, &off))
            continue;
        for (int j = 0; j < n; j++)
            c->args[n + j] = (const unsigned char *)args[j]->data + (size_t)off * eval_elem_bytes(args[j]);
        if (!eval_scalar_call(c, err))
            return false;
    }
    return true;
}

static bool reduce_window_slow(Interp *it, const IrInstr *instr, const WindowGeom *g, int n, Value *const *args,
                               Value **parts, Error *err)
{
    unsigned char acc[MAX_VARIADIC][MAX_ELEM_BYTES];
    ScalarCall c;
    reducer_call(&c, it, instr, n, args, acc);
    int64_t o[IR_MAX_RANK] = { 0 };
    for (int64_t m = 0; m < g->n_out; m++, next_index(g->rank, g->out_dims, o)) {
        for (int k = 0; k < n; k++)
            memcpy(acc[k], args[n + k]->data, eval_elem_bytes(args[n + k]));
        if (!window_fold_slow(&c, g, n, args, o, err))
            return false;
        for (int k = 0; k < n; k++)
            memcpy((unsigned char *)parts[k]->data + (size_t)m * eval_elem_bytes(parts[k]), acc[k], eval_elem_bytes(parts[k]));
    }
    return true;
}

/* floor(a / b) for b > 0. */
static int64_t floor_div(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The outputs [lo[d], hi[d]) whose window position wi lands inside the
 * (undilated) base, and c[d] = wi * rhs_dilate - pad_lo; false when none. */
static bool window_box(const WindowGeom *g, const int64_t *wi, int64_t *lo, int64_t *hi, int64_t *c)
{
    for (int d = 0; d < g->rank; d++) {
        const IrWindowDim *w = &g->w[d];
        c[d] = wi[d] * w->rhs_dilate - w->pad_lo;
        lo[d] = -floor_div(c[d], w->stride);                 /* ceil(-c / stride) */
        hi[d] = floor_div(g->in_dims[d] - 1 - c[d], w->stride) + 1;
        lo[d] = lo[d] > 0 ? lo[d] : 0;
        hi[d] = hi[d] < g->out_dims[d] ? hi[d] : g->out_dims[d];
        if (lo[d] >= hi[d])
            return false;
    }
    return true;
}

/* A window dim that maps every output to the same input position. */
static bool is_identity_window_dim(const IrWindowDim *w)
{
    return w->size == 1 && w->stride == 1 && w->pad_lo == 0 && w->pad_hi == 0 && w->lhs_dilate == 1 &&
           w->rhs_dilate == 1;
}

typedef struct FastWindow {
    IrOpcode op;
    IrElemType t;
    size_t es;
    const unsigned char *in;
    unsigned char *acc;
    unsigned char *scratch;     /* one output row */
    int last;                   /* the row dim: the last dim that is not an identity dim (0 if none) */
    int64_t block;              /* elements per row position: product of the dims after last */
} FastWindow;

/* One row of the box: rows positions of f->block elements each, every
 * row position s input positions apart (gathered when s > 1). */
static bool fold_row(const FastWindow *f, const WindowGeom *g, int64_t out_off, int64_t in_off, int64_t len,
                     Error *err)
{
    int64_t s = g->w[f->last].stride, n = len * f->block;
    const unsigned char *src = f->in + (size_t)in_off * f->es;
    if (s != 1) {
        for (int64_t j = 0; j < len; j++)
            memcpy(f->scratch + (size_t)(j * f->block) * f->es, src + (size_t)(j * s * f->block) * f->es,
                   (size_t)f->block * f->es);
        src = f->scratch;
    }
    unsigned char *acc = f->acc + (size_t)out_off * f->es;
    return interp_binary_kernel(f->op, f->t, acc, acc, src, n, err);
}

/* acc op= input over every row of the box, for one window position. */
static bool fold_box(const FastWindow *f, const WindowGeom *g, const int64_t *lo, const int64_t *hi,
                     const int64_t *c, Error *err)
{
    int last = f->last;
    int64_t o[IR_MAX_RANK];
    memcpy(o, lo, sizeof o[0] * (size_t)(last + 1));
    for (;;) {
        int64_t out_off = 0, in_off = 0;
        for (int d = 0; d <= last; d++) {
            out_off += o[d] * g->out_strides[d];
            in_off += (o[d] * g->w[d].stride + c[d]) * g->in_strides[d];
        }
        if (!fold_row(f, g, out_off, in_off, hi[last] - lo[last], err))
            return false;
        int d = last - 1;
        for (; d >= 0 && ++o[d] >= hi[d]; d--)
            o[d] = lo[d];
        if (d < 0)
            return true;
    }
}

static bool reduce_window_fast(const IrInstr *instr, IrOpcode op, const WindowGeom *g, const Value *x,
                               const Value *init, Value *res, Error *err)
{
    FastWindow f = { op, x->shape->type, eval_elem_bytes(x), x->data, res->data, NULL, 0, 1 };
    for (int d = 0; d < g->rank; d++)
        if (!is_identity_window_dim(&g->w[d]))
            f.last = d;
    for (int d = f.last + 1; d < g->rank; d++)
        f.block *= g->out_dims[d];
    f.scratch = eval_scratch_alloc(g->out_dims[f.last] * f.block, f.es, instr, err);
    if (!f.scratch)
        return false;
    fill_elems(res->data, init->data, g->n_out, f.es);
    int64_t wi[IR_MAX_RANK] = { 0 }, lo[IR_MAX_RANK], hi[IR_MAX_RANK], c[IR_MAX_RANK];
    bool ok = true;
    for (int64_t k = 0; ok && g->n_out > 0 && k < g->n_win; k++, next_index(g->rank, g->win_dims, wi))
        if (window_box(g, wi, lo, hi, c))
            ok = fold_box(&f, g, lo, hi, c, err);
    free(f.scratch);
    return ok;
}

bool eval_reduce_window(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    WindowGeom g;
    int n = instr->n_operands / 2;
    if (!check_reduce_operands(instr, args, err) || !window_geom(instr, args[0]->shape, &g, err))
        return false;
    IrElemType types[MAX_VARIADIC];
    for (int k = 0; k < n; k++)
        types[k] = args[n + k]->shape->type;
    Value *parts[MAX_VARIADIC] = { 0 };
    if (!eval_new_parts(instr, n, g.rank, g.out_dims, types, parts, err))
        return false;
    IrElemType t = args[0]->shape->type;
    bool fast_ok = n == 1 && types[0] == t && g.rank > 0 && !g.base_dilated;
    IrOpcode op = fast_ok ? trivial_op(instr->info->comps[IR_COMP_TO_APPLY], t) : IR_OP_COUNT;
    bool ok = op != IR_OP_COUNT ? reduce_window_fast(instr, op, &g, args[0], args[1], parts[0], err)
                                : reduce_window_slow(it, instr, &g, n, args, parts, err);
    return eval_finish_parts(instr, n, parts, ok, out, err);
}

/* ------------------------------------------------------------------ */
/* map                                                                  */

static bool is_kernel_binary(IrOpcode op)
{
    switch ((int)op) {
    case IR_OP_ADD: case IR_OP_SUBTRACT: case IR_OP_MULTIPLY: case IR_OP_DIVIDE: case IR_OP_REMAINDER:
    case IR_OP_MAXIMUM: case IR_OP_MINIMUM: case IR_OP_POWER: case IR_OP_AND: case IR_OP_OR: case IR_OP_XOR:
    case IR_OP_SHIFT_LEFT: case IR_OP_SHIFT_RIGHT_ARITH: case IR_OP_SHIFT_RIGHT_LOGICAL: case IR_OP_ATAN2:
        return true;
    default:
        return false;
    }
}

/* A computation `ROOT op(parameter(a), parameter(b))` on scalars of type t. */
static bool map_binary(const IrComputation *c, IrElemType t, IrOpcode *op, int *a, int *b)
{
    const IrInstr *root = c->root;
    if (!is_kernel_binary(root->op) || root->n_operands != 2 || !kernel_type_ok(t))
        return false;
    for (int k = 0; k < 2; k++) {
        const IrInstr *p = root->operands[k];
        if (p->op != IR_OP_PARAMETER || p->shape->rank != 0 || p->shape->type != t)
            return false;
    }
    *op = root->op;
    *a = (int)root->operands[0]->info->parameter_number;
    *b = (int)root->operands[1]->info->parameter_number;
    return root->shape->rank == 0 && root->shape->type == t;
}

static bool map_slow(Interp *it, const IrComputation *comp, Value *const *args, int n, Value *res, Error *err)
{
    ScalarCall c;
    memset(&c, 0, sizeof c);
    c.it = it;
    c.comp = comp;
    c.n_args = n;
    c.n_results = 1;
    for (int k = 0; k < n; k++)
        c.types[k] = args[k]->shape->type;
    int64_t count = value_elements(res);
    for (int64_t i = 0; i < count; i++) {
        for (int k = 0; k < n; k++)
            c.args[k] = (const unsigned char *)args[k]->data + (size_t)i * eval_elem_bytes(args[k]);
        c.results[0] = (unsigned char *)res->data + (size_t)i * eval_elem_bytes(res);
        if (!eval_scalar_call(&c, err))
            return false;
    }
    return true;
}

bool eval_map(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    int n = instr->n_operands;
    if (n < 1 || n > 2 * MAX_VARIADIC)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "map with %d operands is not supported", n);
    const IrComputation *comp = eval_callee(instr, IR_COMP_TO_APPLY, n, err);
    for (int k = 0; comp && k < n; k++) {
        if (!eval_need_array(instr, args[k], "operand", err))
            return false;
        if (!eval_same_dims(args[k]->shape, instr->shape))
            return error_set(err, ERR_SHAPE, instr->info->loc, "map: operand %s does not match result %s",
                             ir_shape_str(args[k]->shape), ir_shape_str(instr->shape));
    }
    Value *res = comp && type_ok(instr->shape->type) ? value_new_array(instr->shape, err) : NULL;
    if (!res)
        return comp && error_set(err, ERR_UNSUPPORTED, instr->info->loc, "map: result %s is not supported",
                                 ir_shape_str(instr->shape));
    IrElemType t = instr->shape->type;
    IrOpcode op;
    int a, b;
    bool fast = map_binary(comp, t, &op, &a, &b) && args[a]->shape->type == t && args[b]->shape->type == t;
    bool ok = fast ? interp_binary_kernel(op, t, res->data, args[a]->data, args[b]->data, value_elements(res), err)
                   : map_slow(it, comp, args, n, res, err);
    if (!ok) {
        value_release(res);
        return false;
    }
    *out = res;
    return true;
}
