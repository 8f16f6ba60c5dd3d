/* value.c: run-time values, reference counted so aliases never copy. */
#include "interp.h"

#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/* Big arrays come and go once per instruction.  glibc hands out blocks above
 * 32 MiB as fresh mappings and unmaps them on free, so every result would
 * page-fault its whole size again; keeping them in the heap lets the next
 * array reuse the pages.  Process-wide, set once by interp_new(). */
void value_tune_allocator(void)
{
#ifdef __GLIBC__
    static bool done;
    if (done)
        return;
    done = true;
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

static Value *value_alloc(const IrShape *s, Error *err)
{
    Value *v = xmalloc_try(sizeof *v);
    if (!v) {
        error_set(err, ERR_NOMEM, (IrLoc){ 0 }, "out of memory");
        return NULL;
    }
    memset(v, 0, sizeof *v);
    v->shape = s;
    v->refs = 1;
    return v;
}

int value_leaves(Value *v, Value **out, int max)
{
    if (v->shape->type != IR_TYPE_TUPLE) {
        if (max > 0)
            out[0] = v;
        return 1;
    }
    int n = 0;
    for (int i = 0; i < v->n_elements; i++)
        n += value_leaves(v->elements[i], out ? out + (n < max ? n : max) : NULL, max > n ? max - n : 0);
    return n;
}

int64_t value_elements(const Value *v)
{
    return ir_shape_elements(v->shape);
}

size_t value_bytes(const Value *v)
{
    return (size_t)value_elements(v) * (size_t)ir_type_storage_bytes(v->shape->type);
}

Value *value_new_array(const IrShape *s, Error *err)
{
    Value *v = value_alloc(s, err);
    if (!v)
        return NULL;
    int64_t n = value_elements(v), eb = ir_type_storage_bytes(s->type);
    if (n < 0 || (eb > 0 && (uint64_t)n > SIZE_MAX / (uint64_t)eb)) {     /* value_bytes would wrap */
        free(v);
        error_set(err, ERR_NOMEM, (IrLoc){ 0 }, "%s is too large to allocate", ir_shape_str(s));
        return NULL;
    }
    size_t bytes = value_bytes(v);
    v->data = xmalloc_try(bytes ? bytes : 1);
    if (!v->data) {
        free(v);
        error_set(err, ERR_NOMEM, (IrLoc){ 0 }, "out of memory allocating %zu bytes for %s", bytes,
                  ir_shape_str(s));
        return NULL;
    }
    return v;
}

Value *value_new_zeroed(const IrShape *s, Error *err)
{
    Value *v = value_new_array(s, err);
    if (v)
        memset(v->data, 0, value_bytes(v));
    return v;
}

Value *value_new_tuple(const IrShape *s, int n, Value **elements, Error *err)
{
    Value *v = value_alloc(s, err);
    if (!v)
        goto fail;
    v->n_elements = n;
    v->elements = xmalloc_try((size_t)(n ? n : 1) * sizeof *v->elements);
    if (!v->elements) {
        free(v);
        error_set(err, ERR_NOMEM, (IrLoc){ 0 }, "out of memory");
        goto fail;
    }
    if (n)
        memcpy(v->elements, elements, (size_t)n * sizeof *elements);
    return v;
fail:
    for (int i = 0; i < n; i++)
        value_release(elements[i]);
    return NULL;
}

Value *value_alias(const IrShape *s, Value *base, Error *err)
{
    Value *v = value_alloc(s, err);
    if (!v)
        return NULL;
    Value *root = base->owner ? base->owner : base;
    v->data = base->data;
    v->owner = value_retain(root);
    return v;
}

Value *value_retain(Value *v)
{
    if (v)
        v->refs++;
    return v;
}

void value_release(Value *v)
{
    if (!v || --v->refs > 0)
        return;
    if (v->shape && v->shape->type == IR_TYPE_TUPLE) {
        for (int i = 0; i < v->n_elements; i++)
            value_release(v->elements[i]);
        free(v->elements);
    } else if (v->owner) {
        value_release(v->owner);
    } else {
        free(v->data);
    }
    free(v->sizes);
    free(v);
}

Value *value_build_tuple(const IrShape *s, ValueElementFn make, void *ctx, Error *err)
{
    Value **el = xmalloc_try((size_t)(s->n_elements ? s->n_elements : 1) * sizeof *el);
    if (!el) {
        error_set(err, ERR_NOMEM, (IrLoc){ 0 }, "out of memory");
        return NULL;
    }
    for (int i = 0; i < s->n_elements; i++)
        if (!(el[i] = make(ctx, i, s->elements[i], err))) {
            for (int k = 0; k < i; k++)
                value_release(el[k]);
            free(el);
            return NULL;
        }
    Value *t = value_new_tuple(s, s->n_elements, el, err);
    free(el);
    return t;
}

static Value *copy_element(void *ctx, int i, const IrShape *element, Error *err)
{
    (void)element;
    return value_copy(((const Value *)ctx)->elements[i], err);
}

Value *value_copy(const Value *v, Error *err)
{
    if (v->shape->type == IR_TYPE_TUPLE)
        return value_build_tuple(v->shape, copy_element, (void *)v, err);
    Value *c = value_new_array(v->shape, err);
    if (c)
        memcpy(c->data, v->data, value_bytes(v));
    if (c && v->sizes) {
        size_t bytes = (size_t)v->shape->rank * sizeof *v->sizes;
        if (!(c->sizes = xmalloc_try(bytes ? bytes : 1))) {
            value_release(c);
            error_set(err, ERR_NOMEM, (IrLoc){ 0 }, "out of memory");
            return NULL;
        }
        memcpy(c->sizes, v->sizes, bytes);
    }
    return c;
}

bool value_bits_equal(const Value *a, const Value *b)
{
    if ((a->shape->type == IR_TYPE_TUPLE) != (b->shape->type == IR_TYPE_TUPLE))
        return false;
    if (a->shape->type == IR_TYPE_TUPLE) {
        if (a->n_elements != b->n_elements)
            return false;
        for (int i = 0; i < a->n_elements; i++)
            if (!value_bits_equal(a->elements[i], b->elements[i]))
                return false;
        return true;
    }
    if (a->shape->type != b->shape->type || value_bytes(a) != value_bytes(b))
        return false;
    if ((a->sizes || b->sizes) && (!a->sizes || !b->sizes || a->shape->rank != b->shape->rank ||
                                   memcmp(a->sizes, b->sizes, (size_t)a->shape->rank * sizeof *a->sizes) != 0))
        return false;
    return memcmp(a->data, b->data, value_bytes(a)) == 0;
}

void value_copy_box(void *dst_data, const int64_t *dst_dims, const void *src_data, const int64_t *src_dims,
                    const int64_t *box, int rank, size_t elem_bytes)
{
    char *dst = dst_data;
    const char *src = src_data;
    if (rank == 0) {
        memcpy(dst, src, elem_bytes);
        return;
    }
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= box[d];
    if (n == 0)
        return;
    int64_t idx[IR_MAX_RANK] = { 0 }, rows = n / box[rank - 1];
    for (int64_t r = 0; r < rows; r++) {
        int64_t so = 0, doff = 0;
        for (int d = 0; d < rank - 1; d++) {
            so = so * src_dims[d] + idx[d];
            doff = doff * dst_dims[d] + idx[d];
        }
        so *= src_dims[rank - 1];
        doff *= dst_dims[rank - 1];
        memcpy(dst + (size_t)doff * elem_bytes, src + (size_t)so * elem_bytes, (size_t)box[rank - 1] * elem_bytes);
        for (int d = rank - 2; d >= 0; d--) {
            if (++idx[d] < box[d])
                break;
            idx[d] = 0;
        }
    }
}

Value *value_box_copy(Arena *a, Value *v, const int64_t *box, Error *err)
{
    const IrShape *s = v->shape;
    if (!box)
        box = v->sizes ? v->sizes : s->dims;
    bool same = true;
    for (int d = 0; same && d < s->rank; d++)
        same = box[d] == s->dims[d] && (!s->dim_kind || s->dim_kind[d] == IR_DIM_STATIC);
    if (same)
        return value_retain(v);
    IrShape *rs = ir_shape_new_array(a, s->type, s->rank, box);
    if (!rs) {
        error_set(err, ERR_NOMEM, (IrLoc){ 0 }, "out of memory");
        return NULL;
    }
    Value *c = value_new_array(rs, err);
    if (c)
        value_copy_box(c->data, rs->dims, v->data, s->dims, box, s->rank, (size_t)ir_type_storage_bytes(s->type));
    return c;
}

static Value *literal_element(void *ctx, int i, const IrShape *element, Error *err)
{
    const IrLiteral *lit = ctx;
    return value_from_literal(lit->elements[i], element, err);
}

Value *value_from_literal(const IrLiteral *lit, const IrShape *s, Error *err)
{
    if (lit->elided) {
        error_set(err, ERR_UNSUPPORTED, (IrLoc){ 0 }, "a literal's values are elided ({...}): unknown");
        return NULL;
    }
    if (s->type == IR_TYPE_TUPLE)
        return value_build_tuple(s, literal_element, (void *)lit, err);
    Value *v = value_new_array(s, err);
    if (v && lit->data)
        memcpy(v->data, lit->data, value_bytes(v));
    else if (v)
        memset(v->data, 0, value_bytes(v));
    return v;
}
