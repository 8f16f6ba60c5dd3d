/* eval_convert.c: the element-wise evaluators that change the element
 * type or its precision: convert, bitcast-convert and reduce-precision.
 * They run on eval_elementwise.c's machinery (eval.h): blocks of BLOCK
 * elements, the narrow-float codecs (Narrow) and the split over threads in
 * contiguous element ranges (ElemJob), which gives the same bits at any
 * thread count.
 *
 * Semantics follow XLA's HLO evaluator (hlo_evaluator_typed_visitor.h) and
 * ../shared/spec/hlo-reference.md section 5:
 *  - convert: float -> int truncates, saturates, NaN -> 0; -> pred is != 0;
 *    f64 -> narrow floats rounds once (dtype.c); int -> narrow floats goes
 *    through f32 first, as Eigen's and ml_dtypes' integer constructors do
 *    (static_cast<float>), which can round twice for |x| > 2^24.
 *  - c64/c128: convert between them and from real types; complex to real
 *    is ERR_UNSUPPORTED.
 *
 * Results are fresh arrays, except that bitcast-convert aliases its
 * operand's buffer. */
#include "eval.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* convert                                                              */

/* Whole arrays (convert between f32 and a narrow type needs no blocks). */
static void narrow_decode_all(IrElemType t, const void *in, float *restrict out, int64_t n)
{
    Narrow c;
    eval_narrow_init(&c, t);
    eval_narrow_decode(&c, in, out, n);
}

static void narrow_encode_all(IrElemType t, const float *restrict in, void *out, int64_t n)
{
    Narrow c;
    eval_narrow_init(&c, t);
    eval_narrow_encode(&c, in, out, n);
}

/* A block of source values in a type that holds them exactly: doubles for
 * float sources (also as floats when the source fits f32), int64 for
 * integers and pred (u64 as its bit pattern). */
typedef struct Wide {
    bool is_float;
    bool fits_f32;          /* is_float: the values are exact floats in f */
    bool is_u64;            /* !is_float: i holds uint64 bit patterns */
    double d[BLOCK];
    float f[BLOCK];
    int64_t i[BLOCK];
} Wide;

#define LOAD_INTS(T) \
    do { const T *restrict p = src; VLOOP(m, w->i[i] = (int64_t)p[i]); } while (0)

static void load_ints(IrElemType t, const void *src, Wide *w, int64_t m)
{
    switch ((int)eval_compute_type(t)) {
    case IR_TYPE_PRED: LOAD_INTS(uint8_t); VLOOP(m, w->i[i] = w->i[i] != 0); break;
    case IR_TYPE_S8: LOAD_INTS(int8_t); break;
    case IR_TYPE_S16: LOAD_INTS(int16_t); break;
    case IR_TYPE_S32: LOAD_INTS(int32_t); break;
    case IR_TYPE_S64: LOAD_INTS(int64_t); break;
    case IR_TYPE_U8: LOAD_INTS(uint8_t); break;
    case IR_TYPE_U16: LOAD_INTS(uint16_t); break;
    case IR_TYPE_U32: LOAD_INTS(uint32_t); break;
    case IR_TYPE_U64: LOAD_INTS(uint64_t); break;
    }
}

static void load_block(IrElemType t, const Narrow *c, const void *src, Wide *w, int64_t m)
{
    w->is_float = ir_type_is_float(t);
    w->fits_f32 = w->is_float && t != IR_TYPE_F64;
    w->is_u64 = t == IR_TYPE_U64;
    if (t == IR_TYPE_F64) {
        memcpy(w->d, src, (size_t)m * sizeof(double));
    } else if (w->is_float) {
        if (t == IR_TYPE_F32)
            memcpy(w->f, src, (size_t)m * sizeof(float));
        else
            eval_narrow_decode(c, src, w->f, m);
        VLOOP(m, w->d[i] = w->f[i]);
    } else {
        load_ints(t, src, w, m);
    }
}

/* Saturating float -> int (XLA's convert): NaN -> 0, then the range ends. */
#define DEFINE_FROM_DOUBLE(P, T, MIN, MAX, LO, HI)                                      \
    static inline T P##_from_double(double v)                                           \
    {                                                                                   \
        return v != v ? 0 : v >= (HI) ? (MAX) : v <= (LO) ? (MIN) : (T)v;               \
    }

DEFINE_FROM_DOUBLE(s8, int8_t, INT8_MIN, INT8_MAX, -0x1p7, 0x1p7)
DEFINE_FROM_DOUBLE(s16, int16_t, INT16_MIN, INT16_MAX, -0x1p15, 0x1p15)
DEFINE_FROM_DOUBLE(s32, int32_t, INT32_MIN, INT32_MAX, -0x1p31, 0x1p31)
DEFINE_FROM_DOUBLE(s64, int64_t, INT64_MIN, INT64_MAX, -0x1p63, 0x1p63)
DEFINE_FROM_DOUBLE(u8, uint8_t, 0, UINT8_MAX, 0.0, 0x1p8)
DEFINE_FROM_DOUBLE(u16, uint16_t, 0, UINT16_MAX, 0.0, 0x1p16)
DEFINE_FROM_DOUBLE(u32, uint32_t, 0, UINT32_MAX, 0.0, 0x1p32)
DEFINE_FROM_DOUBLE(u64, uint64_t, 0, UINT64_MAX, 0.0, 0x1p64)

/* From a float block into an integer type: saturating; into an int block:
 * wrapping (the low bits of the two's complement value). */
#define STORE_SAT(P, T) \
    do { T *restrict p = dst; VLOOP(m, p[i] = P##_from_double(w->d[i])); } while (0)
#define STORE_WRAP(T) \
    do { T *restrict p = dst; VLOOP(m, p[i] = (T)w->i[i]); } while (0)
#define STORE_INT(P, T) \
    do { if (w->is_float) STORE_SAT(P, T); else STORE_WRAP(T); } while (0)

static void store_ints(IrElemType t, const Wide *w, void *dst, int64_t m)
{
    switch ((int)t) {
    case IR_TYPE_S8: STORE_INT(s8, int8_t); break;
    case IR_TYPE_S16: STORE_INT(s16, int16_t); break;
    case IR_TYPE_S32: STORE_INT(s32, int32_t); break;
    case IR_TYPE_S64: STORE_INT(s64, int64_t); break;
    case IR_TYPE_U8: STORE_INT(u8, uint8_t); break;
    case IR_TYPE_U16: STORE_INT(u16, uint16_t); break;
    case IR_TYPE_U32: STORE_INT(u32, uint32_t); break;
    case IR_TYPE_U64: STORE_INT(u64, uint64_t); break;
    default:                        /* sub-byte: the dtype helpers saturate / wrap */
        for (int64_t i = 0; i < m; i++) {
            if (w->is_float)
                ir_elem_set_f64(t, eval_at_mut(dst, i, 1), w->d[i]);
            else
                ir_elem_set_i64(t, eval_at_mut(dst, i, 1), w->i[i]);
        }
    }
}

/* Integers to f32 round once in C; to the narrow floats they go through f32
 * (Eigen and ml_dtypes construct those from static_cast<float>(x)). */
static void ints_to_f32(const Wide *w, float *restrict f, int64_t m)
{
    if (w->is_u64)
        VLOOP(m, f[i] = (float)(uint64_t)w->i[i]);
    else
        VLOOP(m, f[i] = (float)w->i[i]);
}

static void ints_to_f64(const Wide *w, double *restrict d, int64_t m)
{
    if (w->is_u64)
        VLOOP(m, d[i] = (double)(uint64_t)w->i[i]);
    else
        VLOOP(m, d[i] = (double)w->i[i]);
}

/* Into a float type: f32/f64 by C conversion (nearest even); narrow types
 * from values that are exact floats through the fast encoders, from f64
 * through dtype.c, which rounds once. */
static void store_floats(IrElemType t, const Narrow *c, Wide *w, void *dst, int64_t m)
{
    if (t == IR_TYPE_F64) {
        if (w->is_float)
            memcpy(dst, w->d, (size_t)m * sizeof(double));
        else
            ints_to_f64(w, dst, m);
        return;
    }
    if (!w->is_float)
        ints_to_f32(w, w->f, m);
    if (w->is_float && !w->fits_f32) {
        if (t == IR_TYPE_F32) {
            float *restrict p = dst;
            VLOOP(m, p[i] = (float)w->d[i]);
        } else {
            for (int64_t i = 0; i < m; i++)
                ir_elem_set_f64(t, eval_at_mut(dst, i, c->bytes), w->d[i]);
        }
        return;
    }
    if (t == IR_TYPE_F32)
        memcpy(dst, w->f, (size_t)m * sizeof(float));
    else
        eval_narrow_encode(c, w->f, dst, m);
}

static void store_block(IrElemType t, const Narrow *c, Wide *w, void *dst, int64_t m)
{
    if (t == IR_TYPE_PRED) {
        uint8_t *restrict p = dst;
        if (w->is_float)
            VLOOP(m, p[i] = w->d[i] != 0);      /* NaN != 0: true */
        else
            VLOOP(m, p[i] = w->i[i] != 0);
    } else if (ir_type_is_float(t)) {
        store_floats(t, c, w, dst, m);
    } else {
        store_ints(t, w, dst, m);
    }
}

/* Real (non-complex) numeric types, block by block. */
static void convert_real(IrElemType from, IrElemType to, const void *src, void *dst, int64_t n)
{
    /* 28 KiB: off the stack, and not from the heap either, since a chunk of
     * a split convert has no way to report an allocation failing (one
     * buffer per thread, none in use twice: conversions do not nest). */
    static _Thread_local Wide w_of_thread;
    Wide *w = &w_of_thread;
    Narrow cf, ct;
    if (eval_is_narrow_float(from))
        eval_narrow_init(&cf, from);
    if (eval_is_narrow_float(to))
        eval_narrow_init(&ct, to);
    int fb = ir_type_storage_bytes(from), tb = ir_type_storage_bytes(to);
    for (int64_t off = 0; off < n; off += BLOCK) {
        int64_t m = eval_min_i64(BLOCK, n - off);
        load_block(from, &cf, eval_at(src, off, fb), w, m);
        store_block(to, &ct, w, eval_at_mut(dst, off, tb), m);
    }
}

/* Real -> complex: the values converted to the part type into the front
 * of dst, then spread from the back (element i moves from i to 2i, never
 * over an element not yet moved), imaginary parts 0. */
static void convert_to_complex(IrElemType from, IrElemType to, const void *src, void *dst, int64_t n)
{
    IrElemType part = eval_complex_part(to);
    int pb = ir_type_storage_bytes(part);
    char *o = dst;
    convert_real(from, part, src, dst, n);
    for (int64_t i = n - 1; i >= 0; i--) {
        memmove(o + 2 * i * pb, o + i * pb, (size_t)pb);
        memset(o + (2 * i + 1) * pb, 0, (size_t)pb);
    }
}

static bool convert_run(const ElemJob *j, char *dst, const char *const *srcs, int64_t n, Error *err)
{
    const IrInstr *instr = j->instr;
    IrElemType from = j->from, to = j->to;
    const void *src = srcs[0];
    bool from_c = ir_type_is_complex(from), to_c = ir_type_is_complex(to);
    bool from_ok = from == IR_TYPE_PRED || ir_type_is_int(from) || ir_type_is_float(from) || from_c;
    bool to_ok = to == IR_TYPE_PRED || ir_type_is_int(to) || ir_type_is_float(to) || to_c;
    if (!from_ok || !to_ok || (from_c && !to_c))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "unsupported op: convert from %s to %s",
                         ir_type_name(from), ir_type_name(to));
    if (from == to)
        memcpy(dst, src, (size_t)(n * ir_type_storage_bytes(to)));
    else if (from_c)                    /* c64 <-> c128: the parts as 2n reals */
        convert_real(eval_complex_part(from), eval_complex_part(to), src, dst, 2 * n);
    else if (to_c)
        convert_to_complex(from, to, src, dst, n);
    else if (to == IR_TYPE_F32 && eval_is_narrow_float(from))
        narrow_decode_all(from, src, (float *)dst, n);
    else if (from == IR_TYPE_F32 && eval_is_narrow_float(to))
        narrow_encode_all(to, src, dst, n);
    else
        convert_real(from, to, src, dst, n);
    return true;
}

bool eval_convert(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    int64_t n = ir_shape_elements(instr->shape);
    if (!eval_need_elements(instr, args[0], 0, n, err))
        return false;
    ElemJob j = eval_elem_job(convert_run, instr, args, 1);
    return eval_elem_eval(&j, n, out, err);
}

/* ------------------------------------------------------------------ */
/* bitcast-convert                                                      */

/* The bytes stay (little-endian host, as XLA's reference); only the shape
 * changes, so the result aliases the operand.  Two exceptions copy: a pred
 * result is normalised to 0/1, and sub-byte ints (kept sign- or
 * zero-extended in a byte) are re-extended for the other signedness. */
bool eval_bitcast_convert(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    IrElemType from = args[0]->shape->type, to = instr->shape->type;
    if (!ir_shape_is_array(args[0]->shape) || !ir_shape_is_array(instr->shape))
        return eval_unsupported_type(instr, from, err);
    int64_t n = ir_shape_elements(instr->shape);
    bool sub_byte = eval_is_sub_byte_int(from) || eval_is_sub_byte_int(to);
    if (sub_byte && ir_type_info[from].bits != ir_type_info[to].bits)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "unsupported op: bitcast-convert from %s to %s", ir_type_name(from), ir_type_name(to));
    if ((size_t)ir_shape_byte_size(instr->shape) != value_bytes(args[0]))
        return error_set(err, ERR_SHAPE, instr->info->loc, "bitcast-convert: %zu bytes in, %lld out",
                         value_bytes(args[0]), (long long)ir_shape_byte_size(instr->shape));
    if (!sub_byte && to != IR_TYPE_PRED) {
        *out = value_alias(instr->shape, args[0], err);
        return *out != NULL;
    }
    Value *v = value_new_array(instr->shape, err);
    if (!v)
        return false;
    memcpy(v->data, args[0]->data, value_bytes(v));
    eval_normalize_ints(to, v->data, n);
    *out = v;
    return true;
}

/* ------------------------------------------------------------------ */
/* reduce-precision                                                     */

/* XLA's ReducePrecision on the bits of an f32 or f64 (its evaluator runs
 * the narrow types on their f32 value): round the mantissa to m bits,
 * nearest even, letting a carry bump the exponent; then with e exponent
 * bits, exponents above the range become inf and those at or below the
 * smallest normal's become zero (no subnormals); a NaN stays the input NaN
 * ("NaN values are retained", operation_semantics; XLA:CPU keeps it too),
 * even when m is 0 and no NaN is left in the format (XLA's emitter once
 * gave +inf there, which this used to copy). */
#define DEFINE_REDUCE_PRECISION(P, FT, UT, SRC_E, SRC_M)                                \
    static void P##_reduce_precision(FT *restrict o, const FT *restrict a, int64_t n, int e, int m) \
    {                                                                                   \
        const UT one = 1;                                                               \
        UT last = m < SRC_M ? one << (SRC_M - m) : 0;                                   \
        UT bias_base = last ? (last >> 1) - 1 : 0, keep = ~(last - 1);                  \
        UT sign = one << (SRC_E + SRC_M), exp_mask = ((one << SRC_E) - 1) << SRC_M;     \
        UT ebias = (one << (SRC_E - 1)) - 1;                                            \
        UT rbias = e < SRC_E ? (one << (e - 1)) - 1 : 0;                                \
        UT max_exp = (ebias + rbias) << SRC_M, min_exp = (ebias - rbias) << SRC_M;      \
        for (int64_t i = 0; i < n; i++) {                                               \
            UT u;                                                                       \
            memcpy(&u, &a[i], sizeof u);                                                \
            if (last)                                                                   \
                u = (u + bias_base + ((u & last) >> (SRC_M - m))) & keep;               \
            if (e < SRC_E) {                                                            \
                UT x = u & exp_mask;                                                    \
                u = x > max_exp ? (u & sign) | exp_mask : x <= min_exp ? u & sign : u;  \
            }                                                                           \
            FT r;                                                                       \
            memcpy(&r, &u, sizeof r);                                                   \
            o[i] = a[i] != a[i] ? a[i] : r;  /* "NaN values are retained", at any m */   \
        }                                                                               \
    }

DEFINE_REDUCE_PRECISION(f32, float, uint32_t, 8, 23)
DEFINE_REDUCE_PRECISION(f64, double, uint64_t, 11, 52)

static void narrow_reduce_precision(IrElemType t, void *dst, const void *src, int64_t n, int e, int m)
{
    Narrow c;
    eval_narrow_init(&c, t);
    float fi[BLOCK], fo[BLOCK];
    for (int64_t off = 0; off < n; off += BLOCK) {
        int64_t k = eval_min_i64(BLOCK, n - off);
        eval_narrow_decode(&c, eval_at(src, off, c.bytes), fi, k);
        f32_reduce_precision(fo, fi, k, e, m);
        eval_narrow_encode(&c, fo, eval_at_mut(dst, off, c.bytes), k);
    }
}

/* The attributes were checked by eval_reduce_precision. */
static bool reduce_precision_run(const ElemJob *j, char *dst, const char *const *src, int64_t n, Error *err)
{
    (void)err;
    int e = (int)j->instr->ints[IR_INT_EXPONENT_BITS].v, m = (int)j->instr->ints[IR_INT_MANTISSA_BITS].v;
    if (j->from == IR_TYPE_F32)
        f32_reduce_precision((float *)dst, (const float *)src[0], n, e, m);
    else if (j->from == IR_TYPE_F64)
        f64_reduce_precision((double *)dst, (const double *)src[0], n, e, m);
    else
        narrow_reduce_precision(j->from, dst, src[0], n, e, m);
    return true;
}

bool eval_reduce_precision(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    int64_t n = ir_shape_elements(instr->shape);
    IrElemType t = args[0]->shape->type;
    const IrOptInt *e = &instr->ints[IR_INT_EXPONENT_BITS], *m = &instr->ints[IR_INT_MANTISSA_BITS];
    if (!eval_need_elements(instr, args[0], 0, n, err))
        return false;
    if (!ir_type_is_float(t) || instr->shape->type != t)
        return eval_unsupported_type(instr, t, err);
    if (!e->present || !m->present || e->v < 1 || e->v > 64 || m->v < 0 || m->v > 64)
        return error_set(err, ERR_SHAPE, instr->info->loc,
                         "reduce-precision: needs exponent_bits >= 1 and mantissa_bits >= 0");
    ElemJob j = eval_elem_job(reduce_precision_run, instr, args, 1);
    return eval_elem_eval(&j, n, out, err);
}
