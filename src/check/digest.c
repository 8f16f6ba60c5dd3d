/* digest.c: outputs compared by digest, for pairs whose two sets of outputs
 * do not fit in memory at once (GB-sized arrays on many ranks per node).
 *
 * Each array leaf of the first module's result is cut into blocks of
 * DIGEST_BLOCK elements and each block hashed (check_hash_bytes, 64 bits),
 * with every NaN written as one canonical pattern first, since the exact
 * comparison takes any NaN for any NaN; then the result can be freed before
 * the second module runs, and its blocks are hashed the same way and
 * compared.  Two different blocks give the same hash with a chance of about
 * 2^-64 per block: the cost of not holding both.  The first block whose
 * hashes differ is the one the caller examines element by element. */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { DIGEST_BLOCK = 1 << 20 };

struct CheckDigest {
    int n_leaves;
    int64_t *n_blocks;      /* per leaf */
    uint64_t **hash;        /* per leaf, per block */
};

/* The bits of a block with NaNs canonical, into buf (n elements of t). */
static const void *canonical(IrElemType t, const void *src, int64_t n, void *buf)
{
    IrElemType part = t == IR_TYPE_C64 ? IR_TYPE_F32 : t == IR_TYPE_C128 ? IR_TYPE_F64 : t;
    if (!ir_type_is_float(part))
        return src;
    int64_t parts = ir_type_is_complex(t) ? 2 * n : n;
    size_t size = (size_t)ir_type_storage_bytes(part);
    memcpy(buf, src, (size_t)parts * size);
    char *p = buf;
    switch ((int)part) {   /* partial: the rest go through doubles */
    case IR_TYPE_F32:
        for (int64_t i = 0; i < parts; i++) {
            float f;
            memcpy(&f, p + 4 * i, 4);
            if (f != f)
                memcpy(p + 4 * i, &(uint32_t){ 0x7fc00000u }, 4);
        }
        break;
    case IR_TYPE_F64:
        for (int64_t i = 0; i < parts; i++) {
            double d;
            memcpy(&d, p + 8 * i, 8);
            if (d != d)
                memcpy(p + 8 * i, &(uint64_t){ 0x7ff8000000000000ull }, 8);
        }
        break;
    case IR_TYPE_BF16: case IR_TYPE_F16: {
        uint16_t exp = part == IR_TYPE_BF16 ? 0x7f80 : 0x7c00, nan = part == IR_TYPE_BF16 ? 0x7fc0 : 0x7e00;
        for (int64_t i = 0; i < parts; i++) {
            uint16_t h;
            memcpy(&h, p + 2 * i, 2);
            if ((h & exp) == exp && (h & (uint16_t)~(exp | 0x8000)))
                memcpy(p + 2 * i, &nan, 2);
        }
        break;
    }
    default:        /* the 8-bit and 4-bit formats: through doubles, to the type's own NaN */
        for (int64_t i = 0; i < parts; i++)
            if (isnan(ir_elem_get_f64(part, p + (size_t)i * size)))
                ir_elem_set_f64(part, p + (size_t)i * size, NAN);
        break;
    }
    return buf;
}

static uint64_t block_hash(const Value *v, int64_t block, void *buf)
{
    IrElemType t = v->shape->type;
    size_t esize = (size_t)ir_type_storage_bytes(t);
    int64_t n = value_elements(v), lo = block * DIGEST_BLOCK, hi = lo + DIGEST_BLOCK < n ? lo + DIGEST_BLOCK : n;
    const void *bits = canonical(t, (const char *)v->data + (size_t)lo * esize, hi - lo, buf);
    return check_hash_bytes((uint64_t)block, bits, (size_t)(hi - lo) * esize);
}

static int64_t blocks_of(const Value *v)
{
    return ir_shape_is_array(v->shape) ? (value_elements(v) + DIGEST_BLOCK - 1) / DIGEST_BLOCK : 0;
}

CheckDigest *check_digest_new(Value *const *leaves, int n)
{
    CheckDigest *d = xcalloc(1, sizeof *d);
    d->n_leaves = n;
    d->n_blocks = xcalloc((size_t)n + 1, sizeof *d->n_blocks);
    d->hash = xcalloc((size_t)n + 1, sizeof *d->hash);
    void *buf = xmalloc((size_t)DIGEST_BLOCK * 16);
    for (int i = 0; i < n; i++) {
        d->n_blocks[i] = blocks_of(leaves[i]);
        d->hash[i] = xcalloc((size_t)d->n_blocks[i] + 1, sizeof *d->hash[i]);
        for (int64_t b = 0; b < d->n_blocks[i]; b++)
            d->hash[i][b] = block_hash(leaves[i], b, buf);
    }
    free(buf);
    return d;
}

bool check_digest_first_mismatch(const CheckDigest *d, Value *const *leaves, int n, int *leaf, int64_t *first,
                                 int64_t *count)
{
    void *buf = xmalloc((size_t)DIGEST_BLOCK * 16);
    bool found = false;
    for (int i = 0; i < n && i < d->n_leaves && !found; i++) {
        int64_t nb = blocks_of(leaves[i]);
        for (int64_t b = 0; b < nb && b < d->n_blocks[i] && !found; b++)
            if (block_hash(leaves[i], b, buf) != d->hash[i][b]) {
                int64_t e = value_elements(leaves[i]);
                *leaf = i;
                *first = b * DIGEST_BLOCK;
                *count = e - *first < DIGEST_BLOCK ? e - *first : DIGEST_BLOCK;
                found = true;
            }
    }
    free(buf);
    return found;
}

void check_digest_free(CheckDigest *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->n_leaves; i++)
        free(d->hash[i]);
    free(d->hash);
    free(d->n_blocks);
    free(d);
}
