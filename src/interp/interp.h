/* interp.h: the reference interpreter's public API.
 *
 * A Value is a run-time array (row-major, dense, ir_type_storage_bytes per
 * element, whatever the layout in its shape says) or a tuple of Values.
 * Values are reference counted so that parameters, reshapes, bitcasts of
 * contiguous buffers and get-tuple-element never copy. */
#ifndef INTERP_H
#define INTERP_H

#include "ir.h"

/* ------------------------------------------------------------------ */
/* value.c                                                              */

typedef struct Value Value;
struct Value {
    const IrShape *shape;   /* array or tuple; points into a module or the value's own arena copy */
    int refs;
    void *data;             /* arrays: row-major elements */
    Value *owner;           /* non-NULL: data belongs to owner (an alias); else to this value */
    int n_elements;         /* tuples */
    Value **elements;       /* tuples: each element holds one reference */
    int64_t *sizes;         /* arrays: the runtime size of every dimension (owned), set by
                             * set-dimension-size and dynamic-reshape when some dimension
                             * holds fewer elements than its bound; NULL: every dimension
                             * is full.  The data keeps the bounded shape; the elements
                             * past a size are padding. */
};

/* A new array of shape s with uninitialised data; NULL (and ERR_NOMEM) when
 * the allocation fails.  s must outlive the value. */
Value *value_new_array(const IrShape *s, Error *err);
/* Same, zero-filled. */
Value *value_new_zeroed(const IrShape *s, Error *err);
/* A tuple taking over one reference to each element. */
Value *value_new_tuple(const IrShape *s, int n, Value **elements, Error *err);
/* The bytes of base seen with another shape of the same byte size (reshape). */
Value *value_alias(const IrShape *s, Value *base, Error *err);
Value *value_retain(Value *v);
void   value_release(Value *v);          /* NULL is fine */
int64_t value_elements(const Value *v);  /* arrays */
/* The leaves of v (itself unless a tuple; else its elements' leaves, in
 * order): the first max of them into out (NULL when max is 0); returns how
 * many there are. */
int value_leaves(Value *v, Value **out, int max);
size_t  value_bytes(const Value *v);     /* arrays: elements x storage bytes */
/* A tuple of shape s whose element i is make(ctx, i, s->elements[i], err);
 * when one fails, those made so far are released and NULL is returned. */
typedef Value *(*ValueElementFn)(void *ctx, int i, const IrShape *element, Error *err);
Value *value_build_tuple(const IrShape *s, ValueElementFn make, void *ctx, Error *err);
/* A deep copy (fresh buffers). */
Value *value_copy(const Value *v, Error *err);
/* The values of literal lit as a value of shape s (lit's own shape or one
 * with the same dims and types); ERR_UNSUPPORTED for an elided literal. */
Value *value_from_literal(const IrLiteral *lit, const IrShape *s, Error *err);
/* Copies the box dims box[] (row-major, from the origin) of the array
 * src_data (dims src_dims) into dst_data (dims dst_dims); the box fits
 * both. */
void value_copy_box(void *dst_data, const int64_t *dst_dims, const void *src_data, const int64_t *src_dims,
                    const int64_t *box, int rank, size_t elem_bytes);
/* The box box[] of the array v (NULL: its runtime sizes) as an array of
 * that shape, every dimension static; its shape lives in a.  v itself
 * (one more reference) when that is v's own static shape. */
Value *value_box_copy(Arena *a, Value *v, const int64_t *box, Error *err);
/* Keeps large freed arrays for reuse instead of returning them to the
 * system (glibc); interp_new() calls it. */
void value_tune_allocator(void);
/* Bitwise equality of two values of equal shape (tuples element-wise), and
 * equal runtime sizes. */
bool value_bits_equal(const Value *a, const Value *b);

/* ------------------------------------------------------------------ */
/* Collectives hook: src/collectives/ implements it over MPI; without one,
 * the interpreter runs a single device (world size 1).                 */

typedef struct Interp Interp;

typedef struct InterpDevice {
    int rank;               /* flattened device id r*P + p */
    int world;              /* replica_count x num_partitions */
    int replica_count;      /* R */
    int num_partitions;     /* P */
} InterpDevice;

typedef struct InterpComm {
    void *ctx;
    /* Runs one collective instruction (all-gather, all-reduce, reduce-scatter,
     * all-to-all, ragged-all-to-all, collective-permute, collective-broadcast
     * and their -start forms; send, recv, send-done, recv-done) on this
     * device's args; *out receives the result (for -start forms the value
     * -done will return).  Reductions with a non-trivial to_apply call back
     * interp_call(). */
    bool (*run)(void *ctx, Interp *it, const IrInstr *instr, Value *const *args, int n_args,
                Value **out, Error *err);
} InterpComm;

/* ------------------------------------------------------------------ */
/* Opaque custom calls: a custom call whose target the interpreter does not
 * implement is, with this hook, the hook's deterministic function of its
 * operands (src/check/ gives one); without it, ERR_UNSUPPORTED.         */

typedef bool (*InterpOpaqueFn)(const IrInstr *instr, Value *const *args, int n_args, Value **out,
                               Error *err);

/* ------------------------------------------------------------------ */
/* interp.c                                                             */

typedef struct InterpOptions {
    InterpDevice device;    /* rank 0 of 1 when comm is NULL */
    const InterpComm *comm; /* NULL: single device */
    bool time;              /* collect per-opcode timings */
    uint64_t rng_seed;      /* seeds rng and rng-get-and-update-state (hlo-run --seed); each
                             * interp_run draws the same streams from it */
    InterpOpaqueFn opaque;  /* NULL: unknown custom-call targets are unsupported */
    /* Called with every instruction's value as soon as it is computed, in
     * any computation (a while body's on every iteration, in order), before
     * the interpreter may release it: retain v to keep it.  NULL: none.
     * hlo-check measures the accumulation sites inside loops so. */
    void (*observe)(void *ctx, const IrInstr *instr, Value *v);
    void *observe_ctx;
} InterpOptions;

/* Prepares a verified module for running (schedules, last uses). */
Interp *interp_new(const IrModule *m, const InterpOptions *opt, Error *err);
void interp_free(Interp *it);
/* Replaces opt.rng_seed for the runs that follow (hlo-check: one per trial). */
void interp_set_rng_seed(Interp *it, uint64_t seed);
/* Runs the entry computation.  params holds one reference per parameter
 * (the interpreter takes them); *result receives one reference. */
bool interp_run(Interp *it, Value **params, int n_params, Value **result, Error *err);
/* Runs any computation of the module on args (borrowed references). */
bool interp_call(Interp *it, const IrComputation *comp, Value *const *args, int n_args,
                 Value **result, Error *err);
/* Evaluates one instruction of the module, or a copy of one with another
 * shape and attributes (hlo-check --prove runs data movement on hashes so),
 * on args (borrowed, one per operand) as a run would: control flow runs its
 * computations, collectives go through the hook.  Not for parameters. */
bool interp_eval_instr(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err);
/* The result part of a -start's tuple shape: element 1 for all-gather-start,
 * collective-permute-start and async-start; the whole shape for
 * all-reduce-start. */
const IrShape *interp_start_result_shape(const IrInstr *instr);
/* The op a sugared async -start (reduce-scatter-start, ...) wraps, as a copy
 * of start with its own info: the wrapped opcode, the result part of the
 * shape. */
void interp_async_wrapped_op(const IrInstr *start, IrInstr *wrapped, IrInstrInfo *info);
/* Wraps a -start's result (taking its reference) into instr's declared
 * tuple: (operands, result, zeroed contexts...). */
bool interp_wrap_start(const IrInstr *instr, Value *const *args, Value *result, Value **out, Error *err);
const InterpDevice *interp_device(const Interp *it);
const IrModule *interp_module(const Interp *it);

/* Per-opcode timings gathered with opt.time: seconds and count per opcode. */
typedef struct InterpTiming {
    double seconds[IR_OP_COUNT];
    long count[IR_OP_COUNT];
} InterpTiming;
const InterpTiming *interp_timing(const Interp *it);

/* If comp is `ROOT op(param0, param1)` (in that order) over two scalar
 * parameters of one type with op one of add, multiply, maximum, minimum, and,
 * or: returns op.
 * Otherwise IR_OP_COUNT.  The fast path for reductions. */
IrOpcode interp_trivial_reducer(const IrComputation *comp);

/* ------------------------------------------------------------------ */
/* memory.c: what a run needs, before it starts                         */

typedef struct InterpMemory {
    int64_t peak;           /* bytes on one device at the worst point: live buffers, kernel scratch */
    int64_t parameters;     /* the entry parameters' bytes (part of peak) */
    int64_t outputs;        /* the entry result's bytes */
    int64_t constants;      /* literal bytes the module itself holds (not part of peak) */
    const IrInstr *at;      /* the instruction running at the peak (in any computation) */
    const IrInstr *largest; /* the largest buffer live then */
    int64_t largest_bytes;
} InterpMemory;

/* Estimates, from shapes alone, the bytes one device needs to run m's
 * entry computation (memory.c says how; it errs high). */
void interp_estimate_memory(const IrModule *m, InterpMemory *out);
/* "1.5 GB" (decimal units, 3 significant digits) into buf. */
void interp_format_bytes(int64_t bytes, char *buf, size_t n);

/* ------------------------------------------------------------------ */
/* Element-wise kernels shared with the collectives (eval_elementwise.c) */

/* dst[i] = a[i] op b[i] for n elements of type t, rounded to t after the
 * op (narrow floats computed in f32), with HLO semantics for op (add,
 * subtract, multiply, divide, remainder, maximum, minimum, power, and, or,
 * xor, shifts, atan2).  dst may alias a or b. */
bool interp_binary_kernel(IrOpcode op, IrElemType t, void *dst, const void *a, const void *b,
                          int64_t n, Error *err);

/* ------------------------------------------------------------------ */
/* npy.c: numpy .npy files (format version 1.0/2.0, little-endian, C order) */

/* Reads path as a value of shape s (an array shape).  Accepted dtypes: the
 * exact numpy dtype of s's element type; for bf16 and the f8 types f32 (rounded
 * to nearest even; *rounded is set when some value changed) or their raw bits
 * as uint16 / uint8; pred as numpy bool.  A dtype or shape that does not fit
 * is ERR_MISMATCH naming the file. */
Value *npy_read(const char *path, const IrShape *s, bool *rounded, Error *err);
/* Writes an array value (one of dynamic size at its runtime shape); bf16
 * and the f8 types are written as f32 (exact). */
bool npy_write(const char *path, const Value *v, Error *err);
/* A parameter as files: an array parameter p of rank r is
 * DIR/param<p>.rank<r>.npy; a tuple's array leaves are
 * DIR/param<p>.<i>.rank<r>.npy with i counting the leaves in order (tokens
 * have no file).  The reader sets *rounded as npy_read does. */
Value *npy_read_param(const char *dir, int param, int rank, const IrShape *s, bool *rounded, Error *err);
bool npy_write_param(const char *dir, int param, int rank, const Value *v, Error *err);

/* ------------------------------------------------------------------ */
/* custom_call.c: known custom-call targets                             */

/* True when the interpreter computes target: an identity marker, or an
 * XLA-internal target (SliceToDynamic, PadToStatic, TopK). */
bool interp_custom_call_known(const char *target);
/* True when target is an identity marker (its result is its operand). */
bool interp_custom_call_is_identity(const char *target);
/* The distinct custom-call targets of m (every computation) that are not
 * known, in order of first appearance, into out (names point into m; ""
 * for a call without a target); returns how many, at most max. */
int interp_unknown_custom_calls(const IrModule *m, const char **out, int max);

/* interp.c: the instruction this process is evaluating now (the innermost), or NULL:
 * what --timeout names when it fires. */
const IrInstr *interp_current_instr(void);

#endif /* INTERP_H */
