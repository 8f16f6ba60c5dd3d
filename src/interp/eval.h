/* eval.h: private to src/interp/.  What the eval_*.c files give interp.c.
 *
 * Every evaluator has the same contract: args are the instruction's operand
 * values (borrowed), *out receives a new reference to the result, whose shape
 * is instr->shape.  Errors name instr->loc.  Kernels work on whole arrays:
 * one call per instruction, a tight loop per element type inside. */
#ifndef INTERP_EVAL_H
#define INTERP_EVAL_H

#include "interp.h"

#include <math.h>

/* Float maximum and minimum as StableHLO defines them (IEEE 754-2019
 * maximum/minimum) and XLA:CPU computes them: a NaN operand wins, the lhs's
 * first; otherwise +0 counts as greater than -0, so two zeros give +0
 * (maximum) or -0 (minimum) in either order.  a and b are evaluated more
 * than once. */
#define IEEE_MAX(a, b) \
    ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) < (b) ? (b) : (b) < (a) ? (a) : signbit(a) ? (b) : (a))
#define IEEE_MIN(a, b) \
    ((a) != (a) ? (a) : (b) != (b) ? (b) : (b) < (a) ? (b) : (a) < (b) ? (a) : signbit(a) ? (a) : (b))

typedef bool (*EvalFn)(Interp *it, const IrInstr *instr, Value *const *args, Value **out,
                       Error *err);

/* eval_elementwise.c */
bool eval_unary(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_binary(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_compare(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_select(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_clamp(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);

/* eval_elementwise.c: its machinery, shared with eval_convert.c. */

/* Elements per block for the narrow-float and conversion paths: small
 * enough that a few float blocks stay in L1 (4 KiB each). */
#define BLOCK 1024
/* Inner trip count of VLOOP: a multiple of every vector width. */
#define VLEN 16

/* Runs STMT (which uses the index i) for i in [0, n): full blocks of VLEN
 * with a constant trip count, then the tail. */
#define VLOOP(n, STMT)                                                        \
    do {                                                                      \
        int64_t vl_base_ = 0;                                                 \
        for (; vl_base_ + VLEN <= (n); vl_base_ += VLEN)                      \
            for (int vl_k_ = 0; vl_k_ < VLEN; vl_k_++) {                      \
                int64_t i = vl_base_ + vl_k_;                                 \
                STMT;                                                         \
            }                                                                 \
        for (int64_t i = vl_base_; i < (n); i++) {                            \
            STMT;                                                             \
        }                                                                     \
    } while (0)

/* One element-wise kernel call over n elements: run(job, dst, src, n, err)
 * with dst and src[k] advanced to the chunk.  A source with src_bytes 0 is
 * a scalar every chunk reads whole (clamp's bounds). */
typedef struct ElemJob ElemJob;
typedef bool (*ElemRun)(const ElemJob *j, char *dst, const char *const *src, int64_t n, Error *err);
struct ElemJob {
    ElemRun run;
    const IrInstr *instr;   /* NULL for the collectives' kernel */
    IrOpcode op;
    IrElemType from, to;    /* operand 0's and the result's element types */
    char *dst;
    int dst_bytes;
    const char *src[3];
    IrElemType types[3];    /* of each source */
    int src_bytes[3];
    int n_src;
    bool scalar[3];         /* clamp: bound k is one element */
};

/* Inline: they run inside the per-block and per-element loops of several
 * files, where a call each time would cost more than the work. */
/* The smaller of a and b. */
static inline int64_t eval_min_i64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* The address of element index of an array at base, bytes per element. */
static inline const void *eval_at(const void *base, int64_t index, int bytes)
{
    return (const char *)base + index * bytes;
}

static inline void *eval_at_mut(void *base, int64_t index, int bytes)
{
    return (char *)base + index * bytes;
}

/* A narrow float type's codec.  The 1-byte formats decode through a table
 * of all 256 patterns (exact in f32) and encode through dtype.c, so every
 * 8- and 4-bit format works with the same code. */
typedef struct Narrow {
    IrElemType type;
    int bytes;              /* storage bytes per element: 2 or 1 */
    float table[256];       /* 1-byte formats: the value of each pattern */
} Narrow;

/* "unsupported op: OP on TYPE" at instr (ERR_UNSUPPORTED). */
bool eval_unsupported_type(const IrInstr *instr, IrElemType t, Error *err);
/* Operand k is an array of n elements, else ERR_SHAPE. */
bool eval_need_elements(const IrInstr *instr, const Value *v, int k, int64_t n, Error *err);
/* A float type other than f32 and f64 (computed in f32, through Narrow). */
bool eval_is_narrow_float(IrElemType t);
/* s1..s4, u1..u4: one byte each, kept sign- or zero-extended. */
bool eval_is_sub_byte_int(IrElemType t);
/* The real type of a complex type's parts: f32 for c64, f64 for c128. */
IrElemType eval_complex_part(IrElemType t);
/* The type whose loops serve t: the 8-bit ones for sub-byte ints. */
IrElemType eval_compute_type(IrElemType t);
/* pred back to 0/1; s1..s4 sign-extended and u1..u4 masked to their width. */
void eval_normalize_ints(IrElemType t, void *data, int64_t n);
/* The codec of the narrow float type t; n elements of it to f32, and from
 * f32 rounded once to it. */
void eval_narrow_init(Narrow *c, IrElemType t);
void eval_narrow_decode(const Narrow *c, const void *in, float *restrict out, int64_t n);
void eval_narrow_encode(const Narrow *c, const float *restrict in, void *out, int64_t n);
/* A job over instr's operands args[0 .. n_src-1] into a result of instr's
 * shape, and that result: a new array filled by the job over its n
 * elements, split over the threads (false, nothing made, on failure). */
ElemJob eval_elem_job(ElemRun run, const IrInstr *instr, Value *const *args, int n_src);
bool eval_elem_eval(ElemJob *j, int64_t n, Value **out, Error *err);

/* eval_convert.c: convert, bitcast-convert, reduce-precision */
bool eval_convert(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_bitcast_convert(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_reduce_precision(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);

/* eval_movement.c */
bool eval_reshape(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_bitcast(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_transpose(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_broadcast(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_slice(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_dynamic_slice(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_dynamic_update_slice(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_concatenate(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_pad(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_reverse(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_iota(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);

/* eval_reduce.c */
bool eval_reduce(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_reduce_window(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_map(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);

/* eval_reduce.c: its helpers, shared with eval_sort.c. */

#define MAX_VARIADIC 8      /* eval_call_scalar takes at most 16 arguments */

/* One scalar call of a computation: argument types and pointers. */
typedef struct ScalarCall {
    Interp *it;
    const IrComputation *comp;
    int n_args, n_results;
    IrElemType types[2 * MAX_VARIADIC];
    const void *args[2 * MAX_VARIADIC];
    void *results[MAX_VARIADIC];
} ScalarCall;

/* eval_call_scalar() with c's computation, arguments and results. */
bool eval_scalar_call(ScalarCall *c, Error *err);
/* The computation attribute which of instr, if it takes n_params
 * parameters (else ERR_SHAPE, NULL). */
const IrComputation *eval_callee(const IrInstr *instr, IrCompAttr which, int n_params, Error *err);
/* Storage bytes of one element of v. */
size_t eval_elem_bytes(const Value *v);
/* v is an array of an element type the ops can move (else ERR_UNSUPPORTED
 * naming what it is: "operand", ...). */
bool eval_need_array(const IrInstr *instr, const Value *v, const char *what, Error *err);
/* a and b have the same rank and dims. */
bool eval_same_dims(const IrShape *a, const IrShape *b);
/* n * size bytes from xmalloc_try, or NULL with ERR_NOMEM at instr. */
void *eval_scratch_alloc(int64_t n, size_t size, const IrInstr *instr, Error *err);
/* The n result arrays of instr, part i of type types[i] with dims (rank,
 * dims), else ERR_SHAPE; and the result made of them (an array, or a tuple
 * of n), or the parts released when !ok. */
bool eval_new_parts(const IrInstr *instr, int n, int rank, const int64_t *dims, const IrElemType *types,
                    Value **parts, Error *err);
bool eval_finish_parts(const IrInstr *instr, int n, Value **parts, bool ok, Value **out, Error *err);
/* dst[j] = src[offs[j]] for n elements of es bytes. */
void eval_gather_elems(void *dst, const void *src, const int64_t *offs, int64_t n, size_t es);

/* eval_sort.c */
bool eval_sort(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);

/* eval_dot.c: the only file that includes cblas.h */
void eval_blas_single_thread(void);     /* OpenBLAS on one thread, its own workers ended */
bool eval_dot(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);

/* Dot's arithmetic, for kernels that come down to matrix products
 * (convolution): lhs x rhs elements summed into instr's result type exactly
 * as dot sums them (eval_dot.c's header).  Operand elements are loaded into
 * "compute" elements (elem_bytes each; all-zero bytes are a compute zero),
 * multiplied by BLAS or the exact integer loops, and the sums stored to the
 * result type.  M, N, K and the leading dimensions (in elements) must be at
 * most INT_MAX, as BLAS takes int. */
typedef struct EvalMatmul {
    IrElemType result;
    int compute;            /* eval_dot.c's Compute */
    int elem_bytes;         /* of one compute element */
    bool direct;            /* compute elements are the result's own bits */
} EvalMatmul;
/* ERR_UNSUPPORTED for types dot cannot multiply either. */
bool eval_matmul_init(EvalMatmul *mm, const IrInstr *instr, IrElemType lhs, IrElemType rhs, Error *err);
/* n elements of type from, stride elements apart -> n contiguous compute elements. */
void eval_matmul_load(const EvalMatmul *mm, IrElemType from, void *dst, const void *src, int64_t n, int64_t stride);
/* C (M x N) = A (M x K) x B (K x N), all row-major compute elements, rows
 * lda, ldb, ldc elements apart. */
void eval_matmul_gemm(const EvalMatmul *mm, int64_t M, int64_t N, int64_t K, const void *a, int64_t lda,
                      const void *b, int64_t ldb, void *c, int64_t ldc);
/* n contiguous compute elements -> result elements stride elements apart. */
void eval_matmul_store(const EvalMatmul *mm, void *dst, int64_t stride, const void *src, int64_t n);
/* 4 or 8 when the compute elements are f32 or f64, else 0. */
int eval_matmul_real_float_bytes(const EvalMatmul *mm);

/* eval_gather.c */
bool eval_gather(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_scatter(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);

/* eval_convolution.c */
bool eval_convolution(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);

/* eval_batch_norm.c */
bool eval_batch_norm_training(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_batch_norm_inference(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_batch_norm_grad(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);

/* eval_linalg.c: cholesky and triangular-solve */
bool eval_cholesky(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_triangular_solve(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);

/* eval_fft.c */
bool eval_fft(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);

/* eval_select_and_scatter.c */
bool eval_select_and_scatter(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);

/* custom_call.c: the targets of interp_custom_call_known, by name. */
bool eval_known_custom_call(const IrInstr *instr, Value *const *args, Value **out, Error *err);

/* eval_topk.c */
bool eval_topk(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_topk_custom_call(const IrInstr *instr, Value *const *args, Value **out, Error *err);

/* eval_rng.c: rng, rng-bit-generator, rng-get-and-update-state, stochastic-convert */
bool eval_rng(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_rng_bit_generator(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_rng_get_and_update_state(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_stochastic_convert(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);

/* eval_dynamic_shape.c: get-/set-dimension-size, dynamic-reshape */
bool eval_get_dimension_size(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_set_dimension_size(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_dynamic_reshape(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
/* The custom calls of XLA's DynamicPadder: SliceToDynamic(data, sizes...)
 * and PadToStatic(x) -> (data, sizes...). */
bool eval_slice_to_dynamic(const IrInstr *instr, Value *const *args, Value **out, Error *err);
bool eval_pad_to_static(const IrInstr *instr, Value *const *args, Value **out, Error *err);
/* False (ERR_UNSUPPORTED) when an op without an array evaluator (the
 * structural ones) would compute with an operand whose runtime size is below
 * its bound (Value.sizes) and does not just pass it on. */
bool eval_dynamic_operands_ok(const IrInstr *instr, Value *const *args, Error *err);
/* The ops that read no elements of such an operand, or hand it on as it is
 * (tuples, calls, loops, the dimension-size ops). */
bool eval_dynamic_passes_sizes(IrOpcode op);

/* dynamic.c: fn (instr's evaluator) on operands some of which hold fewer
 * elements than their bounds, as XLA's dynamic padder defines the op: on the
 * arrays of the runtime shapes, the result embedded in its bounded shape
 * with its runtime sizes.  Without such an operand, just fn. */
bool eval_dynamic(Interp *it, const IrInstr *instr, EvalFn fn, Value *const *args, Value **out, Error *err);
/* The collectives eval_dynamic runs (on the bounded buffers, carrying the
 * operands' sizes). */
bool eval_dynamic_collective(IrOpcode op);

/* simd.c: whether the kernels with AVX2 versions use them (the CPU has it
 * and HLOCHECK_SIMD=sse2 is not set).  Decided once per process. */
bool interp_use_avx2(void);
/* The same for AVX-512 F/BW/VL (HLOCHECK_SIMD=avx2 or sse2 turns it off). */
bool interp_use_avx512(void);
#if defined(__GNUC__) && defined(__x86_64__)
#define INTERP_HAVE_AVX2 1     /* the AVX2 versions are compiled in */
#endif

/* Row-major strides of a shape, in elements (strides[rank-1] == 1). */
static inline void eval_strides(const IrShape *s, int64_t *strides)
{
    int64_t acc = 1;
    for (int d = s->rank - 1; d >= 0; d--) {
        strides[d] = acc;
        acc *= s->dims[d];
    }
}

/* The next row-major index of an array of dims (rank of them), in place. */
static inline void eval_next_index(int rank, const int64_t *dims, int64_t *idx)
{
    for (int d = rank - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return;
        idx[d] = 0;
    }
}

/* interp.c: calls a scalar computation element by element: the slow path for reducers
 * and comparators that are not trivial.  args[k] points at one element of
 * type arg_types[k]; the result element(s) are written to results[k]. */
bool eval_call_scalar(Interp *it, const IrComputation *comp, const IrElemType *arg_types,
                      const void *const *args, int n_args, void *const *results, int n_results,
                      Error *err);

/* interp.c: "unsupported op: NAME" at the instruction (ERR_UNSUPPORTED). */
bool eval_unsupported(const IrInstr *instr, Error *err);
/* interp.c: the seed of the rng ops (InterpOptions.rng_seed) and a counter
 * that grows by one at every call, so that each execution of an rng op (in a
 * loop, say) draws a fresh stream, the same on every run (the counter
 * restarts at 0 in every interp_run). */
uint64_t eval_rng_seed(const Interp *it);
uint64_t eval_rng_next_call(Interp *it);

#endif /* INTERP_EVAL_H */
