/* shape.c: array and tuple shapes with layouts: queries, construction in an
 * arena, and the HLO text of a shape.
 *
 * A buffer shape b(...) is a wrapper whose elements[0] is the wrapped shape;
 * the size queries and equality look through it. */
#include "ir.h"

#include <string.h>

bool ir_shape_is_tuple(const IrShape *s)
{
    return s->type == IR_TYPE_TUPLE && !s->is_buffer;
}

bool ir_shape_is_array(const IrShape *s)
{
    IrElemType t = s->type;
    return !s->is_buffer && t != IR_TYPE_TUPLE && t != IR_TYPE_TOKEN && t != IR_TYPE_OPAQUE
        && t != IR_TYPE_INVALID && t != IR_TYPE_COUNT;
}

bool ir_shape_is_dynamic(const IrShape *s)
{
    if (ir_shape_is_tuple(s)) {
        for (int i = 0; i < s->n_elements; i++)
            if (ir_shape_is_dynamic(s->elements[i]))
                return true;
        return false;
    }
    for (int d = 0; ir_shape_is_array(s) && s->dim_kind && d < s->rank; d++)
        if (s->dim_kind[d] != IR_DIM_STATIC)
            return true;
    return false;
}

/* The wrapped shape of b(...), or s itself. */
static const IrShape *unwrap_buffer(const IrShape *s)
{
    while (s->is_buffer && s->n_elements > 0)
        s = s->elements[0];
    return s;
}

/* Product of the dims; -1 if a dimension is unbounded (?), saturates at
 * INT64_MAX.  Bounded dims (<=N) count as their bound N. */
int64_t ir_shape_elements(const IrShape *s)
{
    s = unwrap_buffer(s);
    if (!ir_shape_is_array(s))
        return 0;
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) {
        int64_t d = s->dims[i];
        if (d < 0)
            return -1;
        if (d != 0 && n > INT64_MAX / d)
            n = INT64_MAX;
        else
            n *= d;
    }
    return n;
}

/* Sum over leaves of elements x storage bytes; -1 if any leaf has an
 * unbounded dimension. */
int64_t ir_shape_byte_size(const IrShape *s)
{
    s = unwrap_buffer(s);
    if (s->type == IR_TYPE_TUPLE) {
        int64_t total = 0;
        for (int i = 0; i < s->n_elements; i++) {
            int64_t b = ir_shape_byte_size(s->elements[i]);
            if (b < 0)
                return -1;
            total = b > INT64_MAX - total ? INT64_MAX : total + b;
        }
        return total;
    }
    int64_t n = ir_shape_elements(s);
    if (n <= 0)
        return n;
    int64_t bytes = ir_type_storage_bytes(s->type);
    return n > INT64_MAX / bytes ? INT64_MAX : n * bytes;
}

bool ir_shape_equal_dims(const IrShape *a, const IrShape *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

bool ir_shape_same_dim_kinds(const IrShape *a, const IrShape *b)
{
    for (int i = 0; i < a->rank && i < b->rank; i++) {
        IrDimKind ka = a->dim_kind ? (IrDimKind)a->dim_kind[i] : IR_DIM_STATIC;
        IrDimKind kb = b->dim_kind ? (IrDimKind)b->dim_kind[i] : IR_DIM_STATIC;
        if (ka != kb)
            return false;
    }
    return true;
}

bool ir_shape_equal(const IrShape *a, const IrShape *b)
{
    if (a->type != b->type || a->is_buffer != b->is_buffer)
        return false;
    if (a->type != IR_TYPE_TUPLE && !a->is_buffer)
        return ir_shape_equal_dims(a, b);
    if (a->n_elements != b->n_elements)
        return false;
    for (int i = 0; i < a->n_elements; i++)
        if (!ir_shape_equal(a->elements[i], b->elements[i]))
            return false;
    return true;
}

/* ---- Construction.  Every function returns NULL when the arena is out of
 * memory (only possible under injected allocation failure). */

static int64_t *copy_i64(Arena *a, const int64_t *v, int n)
{
    if (n <= 0 || !v)
        return NULL;
    int64_t *out = ARENA_ARRAY(a, int64_t, (size_t)n);
    if (out)
        memcpy(out, v, (size_t)n * sizeof *out);
    return out;
}

IrShape *ir_shape_new_array(Arena *a, IrElemType t, int rank, const int64_t *dims)
{
    IrShape *s = ARENA_NEW(a, IrShape);
    if (!s)
        return NULL;
    s->type = t;
    s->rank = rank;
    if (rank > 0) {
        s->dims = ARENA_ARRAY(a, int64_t, (size_t)rank);
        if (!s->dims)
            return NULL;
        if (dims)
            memcpy(s->dims, dims, (size_t)rank * sizeof *s->dims);
    }
    return s;
}

IrShape *ir_shape_new_tuple(Arena *a, int n, IrShape *const *elements)
{
    IrShape *s = ARENA_NEW(a, IrShape);
    if (!s)
        return NULL;
    s->type = IR_TYPE_TUPLE;
    s->n_elements = n;
    if (n > 0) {
        s->elements = ARENA_ARRAY(a, IrShape *, (size_t)n);
        if (!s->elements)
            return NULL;
        memcpy(s->elements, elements, (size_t)n * sizeof *s->elements);
    }
    return s;
}

/* Copies the array part (dims, dim kinds, layout) of src into dst. */
static bool clone_array_part(Arena *a, IrShape *dst, const IrShape *src)
{
    int n = src->rank;
    if (n > 0) {
        if (!(dst->dims = copy_i64(a, src->dims, n)))
            return false;
        if (src->dim_kind) {
            if (!(dst->dim_kind = arena_alloc(a, (size_t)n)))
                return false;
            memcpy(dst->dim_kind, src->dim_kind, (size_t)n);
        }
        if (src->has_layout && !(dst->minor_to_major = copy_i64(a, src->minor_to_major, n)))
            return false;
    }
    if (src->layout_tail && !(dst->layout_tail = arena_strdup(a, src->layout_tail)))
        return false;
    return true;
}

IrShape *ir_shape_clone(Arena *a, const IrShape *s)
{
    IrShape *c = ARENA_NEW(a, IrShape);
    if (!c)
        return NULL;
    *c = *s;
    c->dims = NULL;
    c->dim_kind = NULL;
    c->minor_to_major = NULL;
    c->layout_tail = NULL;
    c->elements = NULL;
    if (!clone_array_part(a, c, s))
        return NULL;
    if (s->n_elements > 0) {
        c->elements = ARENA_ARRAY(a, IrShape *, (size_t)s->n_elements);
        if (!c->elements)
            return NULL;
        for (int i = 0; i < s->n_elements; i++)
            if (!(c->elements[i] = ir_shape_clone(a, s->elements[i])))
                return NULL;
    }
    return c;
}

/* Sets the element type of every array leaf. */
static void set_leaf_types(IrShape *s, IrElemType t)
{
    if (s->type == IR_TYPE_TUPLE || s->is_buffer) {
        for (int i = 0; i < s->n_elements; i++)
            set_leaf_types(s->elements[i], t);
        return;
    }
    if (ir_shape_is_array(s))
        s->type = t;
}

/* For a tuple (or buffer), every array leaf gets the new type. */
IrShape *ir_shape_with_type(Arena *a, const IrShape *s, IrElemType t)
{
    IrShape *c = ir_shape_clone(a, s);
    if (c)
        set_leaf_types(c, t);
    return c;
}

/* ---- Printing: f32[8,<=4,?]{2,1,0:T(8,128)}, (f32[2]{0}, s32[]), b(...). */

static void print_dims(StrBuf *b, const IrShape *s)
{
    strbuf_putc(b, '[');
    for (int i = 0; i < s->rank; i++) {
        IrDimKind kind = s->dim_kind ? (IrDimKind)s->dim_kind[i] : IR_DIM_STATIC;
        if (i > 0)
            strbuf_putc(b, ',');
        switch (kind) {
        case IR_DIM_STATIC:
            strbuf_printf(b, "%lld", (long long)s->dims[i]);
            break;
        case IR_DIM_BOUNDED:
            strbuf_printf(b, "<=%lld", (long long)s->dims[i]);
            break;
        case IR_DIM_UNBOUNDED:
            strbuf_putc(b, '?');
            break;
        }
    }
    strbuf_putc(b, ']');
}

/* XLA never prints a scalar's empty layout {}, but does print a scalar
 * layout that carries a tail: f32[]{:T(128)}. */
static void print_layout(StrBuf *b, const IrShape *s)
{
    if (!s->has_layout || (s->rank == 0 && !s->layout_tail))
        return;
    strbuf_putc(b, '{');
    for (int i = 0; i < s->rank; i++) {
        if (i > 0)
            strbuf_putc(b, ',');
        strbuf_printf(b, "%lld", (long long)s->minor_to_major[i]);
    }
    if (s->layout_tail) {
        strbuf_putc(b, ':');
        strbuf_puts(b, s->layout_tail);
    }
    strbuf_putc(b, '}');
}

static void print_elements(StrBuf *b, const IrShape *s, bool with_layout)
{
    for (int i = 0; i < s->n_elements; i++) {
        if (i > 0)
            strbuf_puts(b, ", ");
        ir_shape_print(b, s->elements[i], with_layout);
    }
}

void ir_shape_print(StrBuf *b, const IrShape *s, bool with_layout)
{
    if (s->is_buffer) {
        strbuf_puts(b, "b(");
        print_elements(b, s, with_layout);
        strbuf_putc(b, ')');
        return;
    }
    if (s->type == IR_TYPE_TUPLE) {
        strbuf_putc(b, '(');
        print_elements(b, s, with_layout);
        strbuf_putc(b, ')');
        return;
    }
    if (s->type == IR_TYPE_TOKEN || s->type == IR_TYPE_OPAQUE) {
        strbuf_puts(b, s->type == IR_TYPE_TOKEN ? "token[]" : "opaque[]");
        return;
    }
    strbuf_puts(b, ir_type_name(s->type));
    print_dims(b, s);
    if (with_layout)
        print_layout(b, s);
}

/* With layout, truncated to the buffer with "..." at the end (or where
 * memory ran out). */
const char *ir_shape_str(const IrShape *s)
{
    static char buf[256];
    StrBuf b;
    strbuf_init_may_fail(&b);
    ir_shape_print(&b, s, true);
    size_t n = b.len;
    if (n >= sizeof buf) {
        n = sizeof buf - 1;
        memcpy(b.s + n - 3, "...", 3);
    }
    memcpy(buf, b.s ? b.s : "", n);
    buf[n] = 0;
    strbuf_free(&b);
    return buf;
}
