/* eval_topk.c: topk(x), k=K, largest=L -> (values, s32 indices).
 *
 * XLA defines topk by its TopkDecomposer: a stable sort of each row of the
 * last dimension (the dims before it are batch dims) by the comparator XLA
 * builds for it, GtTotalOrder when largest (LtTotalOrder otherwise), which
 * compares the values alone; then the first K values and their positions.
 * So, in both directions:
 *  - floats are ordered totally, -NaN < -inf < ... < -0 < +0 < ... < +inf <
 *    +NaN (NaNs of one sign by payload): largest=true puts a +NaN first and
 *    a -NaN last, largest=false the other way round, and -0 and +0 differ;
 *  - equal values (for floats, the same bits) come out lower index first.
 * Integers and pred are ordered by value.
 *
 * Every pair (value, index) differs from every other, so the K best are
 * unique and any selection gives them: we keep them in a heap of K whose
 * root is the worst kept so far (O(n log K) per row), then pop it in order.
 * largest: an absent one reads as true, as XLA's parser reads it (XLA and
 * hlocheck always print it).
 * Element types: pred, the 8- to 64-bit integers, f16, bf16, f32, f64. */
#include "eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Entry {
    int64_t key;            /* ordered like the value */
    int64_t idx;
} Entry;

/* a comes before b in the output. */
static bool before(bool largest, const Entry *a, const Entry *b)
{
    if (a->key != b->key)
        return largest ? a->key > b->key : a->key < b->key;
    return a->idx < b->idx;
}

/* ------------------------------------------------------------------ */
/* Keys                                                                 */

static bool key_type_ok(IrElemType t)
{
    switch ((int)t) {
    case IR_TYPE_PRED: case IR_TYPE_S8: case IR_TYPE_S16: case IR_TYPE_S32: case IR_TYPE_S64:
    case IR_TYPE_U8: case IR_TYPE_U16: case IR_TYPE_U32: case IR_TYPE_U64:
    case IR_TYPE_F16: case IR_TYPE_BF16: case IR_TYPE_F32: case IR_TYPE_F64:
        return true;
    default:
        return false;
    }
}

/* Sign-magnitude float bits (sign extended to 64) as an ordered integer. */
static int64_t float_key(int64_t s, int bits)
{
    int64_t mag = (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
    return s < 0 ? s ^ mag : s;
}

/* keys[j] for the n elements of one row. */
static void row_keys(IrElemType t, const void *row, int64_t n, Entry *e)
{
    for (int64_t j = 0; j < n; j++)
        e[j].idx = j;
    switch ((int)t) {
    case IR_TYPE_S8: for (int64_t j = 0; j < n; j++) e[j].key = ((const int8_t *)row)[j]; break;
    case IR_TYPE_S16: for (int64_t j = 0; j < n; j++) e[j].key = ((const int16_t *)row)[j]; break;
    case IR_TYPE_S32: for (int64_t j = 0; j < n; j++) e[j].key = ((const int32_t *)row)[j]; break;
    case IR_TYPE_S64: for (int64_t j = 0; j < n; j++) e[j].key = ((const int64_t *)row)[j]; break;
    case IR_TYPE_U16: for (int64_t j = 0; j < n; j++) e[j].key = ((const uint16_t *)row)[j]; break;
    case IR_TYPE_U32: for (int64_t j = 0; j < n; j++) e[j].key = ((const uint32_t *)row)[j]; break;
    case IR_TYPE_U64:       /* flipping the top bit keeps the order in int64 */
        for (int64_t j = 0; j < n; j++)
            e[j].key = (int64_t)(((const uint64_t *)row)[j] ^ (UINT64_C(1) << 63));
        break;
    case IR_TYPE_F16: case IR_TYPE_BF16:
        for (int64_t j = 0; j < n; j++) e[j].key = float_key(((const int16_t *)row)[j], 16);
        break;
    case IR_TYPE_F32: for (int64_t j = 0; j < n; j++) e[j].key = float_key(((const int32_t *)row)[j], 32); break;
    case IR_TYPE_F64: for (int64_t j = 0; j < n; j++) e[j].key = float_key(((const int64_t *)row)[j], 64); break;
    default: for (int64_t j = 0; j < n; j++) e[j].key = ((const uint8_t *)row)[j]; break;   /* pred, u8 */
    }
}

/* ------------------------------------------------------------------ */
/* The heap: h[0] is the worst entry kept (every parent is worse than its
 * children).                                                           */

static void sift_down(bool largest, Entry *h, int64_t n, int64_t i)
{
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && before(largest, &h[c], &h[c + 1]))
            c++;                                    /* the worse child */
        if (!before(largest, &h[i], &h[c]))
            return;
        Entry tmp = h[i];
        h[i] = h[c];
        h[c] = tmp;
        i = c;
    }
}

/* The k best of e[0..n) into e[0..k), best first.  e is overwritten. */
static void top_k(bool largest, Entry *e, int64_t n, int64_t k)
{
    if (k == 0)
        return;
    for (int64_t i = k / 2 - 1; i >= 0; i--)
        sift_down(largest, e, k, i);
    for (int64_t j = k; j < n; j++)
        if (before(largest, &e[j], &e[0])) {
            e[0] = e[j];
            sift_down(largest, e, k, 0);
        }
    for (int64_t m = k - 1; m > 0; m--) {           /* the worst goes last */
        Entry tmp = e[0];
        e[0] = e[m];
        e[m] = tmp;
        sift_down(largest, e, m, 0);
    }
}

/* ------------------------------------------------------------------ */
/* The op                                                               */

/* The result (T[batch..., k], s32[batch..., k]) for x and k. */
static bool result_ok(const IrInstr *instr, const IrShape *x, int64_t k)
{
    const IrShape *s = instr->shape;
    if (s->type != IR_TYPE_TUPLE || s->n_elements != 2)
        return false;
    for (int i = 0; i < 2; i++) {
        const IrShape *e = s->elements[i];
        if (e->type != (i ? IR_TYPE_S32 : x->type) || e->rank != x->rank || e->dims[x->rank - 1] != k)
            return false;
        for (int d = 0; d < x->rank - 1; d++)
            if (e->dims[d] != x->dims[d])
                return false;
    }
    return true;
}

/* The checks of topk (and of the custom call TopK) on operand x, with k. */
static bool topk_check(const IrInstr *instr, const char *what, const Value *x, int64_t k, Error *err)
{
    const IrShape *s = x->shape;
    if (instr->n_operands != 1 || s->type == IR_TYPE_TUPLE || s->rank < 1)
        return error_set(err, ERR_SHAPE, instr->info->loc, "%s: expects one array operand of rank >= 1", what);
    if (!key_type_ok(s->type))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "%s: element type %s is not supported", what,
                         ir_type_name(s->type));
    if (x->sizes)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "unsupported op: %s of an operand of dynamic size (%s): it would rank the padding", what,
                         ir_shape_str(s));
    int64_t n = s->dims[s->rank - 1];
    if (k < 0 || k > n)
        return error_set(err, ERR_SHAPE, instr->info->loc, "%s: k must be in [0, %lld]", what, (long long)n);
    if (n > INT32_MAX)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "%s: %lld elements per row overflow s32 indices",
                         what, (long long)n);
    if (!result_ok(instr, s, k)) {
        char xs[160];      /* ir_shape_str's buffer holds one shape at a time */
        snprintf(xs, sizeof xs, "%s", ir_shape_str(s));
        return error_set(err, ERR_SHAPE, instr->info->loc, "%s: result %s does not fit %s and k=%lld", what,
                         ir_shape_str(instr->shape), xs, (long long)k);
    }
    return true;
}

/* The k best of each row of x, largest or smallest first. */
static bool topk_rows(const IrInstr *instr, const Value *x, int64_t k, bool largest, Value **out, Error *err)
{
    const IrShape *s = x->shape;
    int64_t n = s->dims[s->rank - 1], rows = n ? value_elements(x) / n : 0;   /* k == 0 when n == 0 */
    Value *parts[2] = { value_new_array(instr->shape->elements[0], err), NULL };
    parts[1] = parts[0] ? value_new_array(instr->shape->elements[1], err) : NULL;
    Entry *e = parts[1] ? xmalloc_try((size_t)(n ? n : 1) * sizeof *e) : NULL;
    if (!e) {
        value_release(parts[0]);
        value_release(parts[1]);
        return parts[1] ? error_set(err, ERR_NOMEM, instr->info->loc, "topk: out of memory") : false;
    }
    size_t es = (size_t)ir_type_storage_bytes(s->type);
    const unsigned char *xd = x->data;
    unsigned char *vals = parts[0]->data;
    int32_t *idx = parts[1]->data;
    for (int64_t r = 0; r < rows && k > 0; r++) {
        const unsigned char *row = xd + (size_t)(r * n) * es;
        row_keys(s->type, row, n, e);
        top_k(largest, e, n, k);
        for (int64_t j = 0; j < k; j++) {
            memcpy(vals + (size_t)(r * k + j) * es, row + (size_t)e[j].idx * es, es);
            idx[r * k + j] = (int32_t)e[j].idx;
        }
    }
    free(e);
    *out = value_new_tuple(instr->shape, 2, parts, err);
    return *out != NULL;
}

bool eval_topk(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    if (!instr->ints[IR_INT_K].present)
        return error_set(err, ERR_SHAPE, instr->info->loc, "topk: needs k=");
    int64_t k = instr->ints[IR_INT_K].v;
    return topk_check(instr, "topk", args[0], k, err) &&
           topk_rows(instr, args[0], k, instr->info->bools[IR_BOOL_LARGEST], out, err);
}

/* custom-call(x), custom_call_target="TopK" -> (T[..., k], s32[..., k]):
 * XLA's CPU lowering of topk with largest=true (its TopkRewriter); k is the
 * result's last dimension.  The same order as the op: XLA's runtime ranks
 * the float bits as ordered integers, larger first, lower index first on a
 * tie. */
bool eval_topk_custom_call(const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    const IrShape *s = instr->shape;
    if (s->type != IR_TYPE_TUPLE || s->n_elements != 2 || !ir_shape_is_array(s->elements[0]) ||
        s->elements[0]->rank < 1)
        return error_set(err, ERR_SHAPE, instr->info->loc,
                         "custom-call TopK: the result must be (values, indices), not %s", ir_shape_str(s));
    int64_t k = s->elements[0]->dims[s->elements[0]->rank - 1];
    return topk_check(instr, "custom-call TopK", args[0], k, err) && topk_rows(instr, args[0], k, true, out, err);
}
