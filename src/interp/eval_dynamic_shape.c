/* eval_dynamic_shape.c: get-dimension-size, set-dimension-size,
 * dynamic-reshape: XLA's bounded dynamic shapes in its padded form.
 *
 * A value always holds its bounded shape (f32[<=8] is 8 elements); the
 * runtime size of each dimension travels beside the data in Value.sizes,
 * which is NULL when every dimension is full.  Elements past a size are
 * padding:
 *   set-dimension-size  changes only the size, never the data (as XLA's
 *                       evaluator, and compiled XLA, where the op moves no
 *                       bytes): its padding is the operand's elements there.
 *   dynamic-reshape     writes zeros (all bits 0) into its padding.
 * A value that no set-dimension-size or dynamic-reshape made is full: an
 * entry parameter with a bounded dimension holds all of its elements (the
 * inputs are whole arrays), and so does every result computed from full
 * operands.  The ops that compute with elements (everything but the three
 * here and those that pass values through) refuse an operand that is not
 * full, with ERR_UNSUPPORTED: they would read padding as data, where XLA
 * (its DynamicPadder) masks it.  Results are printed and compared in the
 * padded form. */
#include "eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The runtime size of dimension d of v. */
static int64_t size_of(const Value *v, int d)
{
    return v->sizes ? v->sizes[d] : v->shape->dims[d];
}

/* Ops that read no elements of a not-full operand, or hand the value on
 * (tuples, calls, loops: the callee's ops are checked in turn). */
bool eval_dynamic_passes_sizes(IrOpcode op)
{
    switch ((int)op) {
    case IR_OP_GET_DIMENSION_SIZE: case IR_OP_SET_DIMENSION_SIZE: case IR_OP_DYNAMIC_RESHAPE:
    case IR_OP_TUPLE: case IR_OP_GET_TUPLE_ELEMENT: case IR_OP_COPY: case IR_OP_OPT_BARRIER:
    case IR_OP_CALL: case IR_OP_FUSION: case IR_OP_WHILE: case IR_OP_CONDITIONAL: case IR_OP_DOMAIN:
    case IR_OP_ADD_DEPENDENCY: case IR_OP_COPY_START: case IR_OP_COPY_DONE: case IR_OP_CUSTOM_CALL:
    case IR_OP_ASYNC_START: case IR_OP_ASYNC_UPDATE: case IR_OP_ASYNC_DONE: case IR_OP_AFTER_ALL:
        return true;
    default:
        return false;
    }
}

bool eval_dynamic_operands_ok(const IrInstr *instr, Value *const *args, Error *err)
{
    if (eval_dynamic_passes_sizes(instr->op))
        return true;
    for (int k = 0; k < instr->n_operands; k++) {
        const Value *v = args[k];
        if (!v || !v->sizes)
            continue;
        int d = 0;
        while (d < v->shape->rank - 1 && v->sizes[d] == v->shape->dims[d])
            d++;
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "unsupported op: %s on operand %d of dynamic size (dimension %d holds %lld of %s): its "
                         "runtime sizes are not modelled for this op",
                         ir_opcode_name(instr->op), k, d, (long long)v->sizes[d], ir_shape_str(v->shape));
    }
    return true;
}

/* The dimension of dimensions={d}, checked against s. */
static bool the_dimension(const IrInstr *instr, const IrShape *s, int *d, Error *err)
{
    const IrIntList *l = &instr->lists[IR_LIST_DIMENSIONS];
    if (!ir_shape_is_array(s) || l->n != 1 || l->v[0] < 0 || l->v[0] >= s->rank)
        return error_set(err, ERR_SHAPE, instr->info->loc, "%s: dimensions= must name one dimension of %s",
                         ir_opcode_name(instr->op), ir_shape_str(s));
    *d = (int)l->v[0];
    return true;
}

/* Sets v's sizes to sizes (rank entries), or none when all are full. */
static bool set_sizes(const IrInstr *instr, Value *v, const int64_t *sizes, Error *err)
{
    const IrShape *s = v->shape;
    bool full = true;
    for (int d = 0; d < s->rank; d++)
        full = full && sizes[d] == s->dims[d];
    free(v->sizes);
    v->sizes = NULL;
    if (full)
        return true;
    v->sizes = xmalloc_try((size_t)s->rank * sizeof *v->sizes);
    if (!v->sizes)
        return error_set(err, ERR_NOMEM, instr->info->loc, "%s: out of memory", ir_opcode_name(instr->op));
    memcpy(v->sizes, sizes, (size_t)s->rank * sizeof *v->sizes);
    return true;
}

/* get-dimension-size(x), dimensions={d} -> s32[]: x's runtime size. */
bool eval_get_dimension_size(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    int d;
    if (!the_dimension(instr, args[0]->shape, &d, err))
        return false;
    int64_t size = size_of(args[0], d);
    if (size < 0 || size > INT32_MAX || !ir_shape_is_array(instr->shape) || !ir_type_is_int(instr->shape->type) ||
        instr->shape->rank != 0)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "get-dimension-size: dimension %d of %s as %s", d, ir_shape_str(args[0]->shape),
                         ir_shape_str(instr->shape));
    Value *v = value_new_array(instr->shape, err);
    if (!v)
        return false;
    ir_elem_set_i64(instr->shape->type, v->data, size);
    *out = v;
    return true;
}

/* set-dimension-size(x, size), dimensions={d}: x's data with dimension d
 * holding size elements (0 <= size <= the bound). */
bool eval_set_dimension_size(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    const Value *x = args[0], *n = args[1];
    int d;
    if (!the_dimension(instr, x->shape, &d, err))
        return false;
    const IrShape *s = instr->shape;
    if (!ir_shape_is_array(s) || s->rank != x->shape->rank || ir_shape_elements(s) != value_elements(x) ||
        s->type != x->shape->type || !ir_shape_is_array(n->shape) || n->shape->rank != 0 ||
        !ir_type_is_int(n->shape->type))
        return error_set(err, ERR_SHAPE, instr->info->loc, "set-dimension-size: %s and size %s to %s",
                         ir_shape_str(x->shape), ir_shape_str(n->shape), ir_shape_str(s));
    int64_t size = ir_elem_get_i64(n->shape->type, n->data);
    if (size < 0 || size > s->dims[d])
        return error_set(err, ERR_SHAPE, instr->info->loc,
                         "set-dimension-size: size %lld is outside [0, %lld] for dimension %d of %s",
                         (long long)size, (long long)s->dims[d], d, ir_shape_str(s));
    int64_t sizes[IR_MAX_RANK];
    for (int k = 0; k < s->rank; k++)
        sizes[k] = size_of(x, k);
    sizes[d] = size;
    Value *v = value_alias(s, args[0], err);
    if (!v || !set_sizes(instr, v, sizes, err)) {
        value_release(v);
        return false;
    }
    *out = v;
    return true;
}

/* A row-major walk over the first elements of an array: idx counts in the
 * logical dims, off is the element's place under the bounded dims. */
typedef struct Walk {
    int rank;
    const int64_t *logical, *bounds;
    int64_t idx[IR_MAX_RANK];
    int64_t off;
} Walk;

/* Elements left in the current innermost row. */
static int64_t walk_row_left(const Walk *w)
{
    return w->logical[w->rank - 1] - w->idx[w->rank - 1];
}

static void walk_advance(Walk *w, int64_t k)
{
    int last = w->rank - 1;
    w->idx[last] += k;
    w->off += k;
    if (w->idx[last] < w->logical[last])
        return;
    w->idx[last] = 0;
    for (int d = last - 1; d >= 0; d--) {
        if (++w->idx[d] < w->logical[d])
            break;
        w->idx[d] = 0;
    }
    w->off = 0;
    for (int d = 0; d <= last; d++)
        w->off = w->off * w->bounds[d] + w->idx[d];
}

/* Copies the count logical elements of src (sizes ls, bounds lb) in
 * row-major order into dst's logical positions (sizes ds, bounds db), a
 * run of a row at a time. */
static void copy_logical(char *dst, const int64_t *ds, const int64_t *db, int dst_rank, const char *src,
                         const int64_t *ls, const int64_t *lb, int src_rank, int64_t count, size_t elem)
{
    static const int64_t one = 1;
    Walk in = { src_rank ? src_rank : 1, src_rank ? ls : &one, src_rank ? lb : &one, { 0 }, 0 };
    Walk out = { dst_rank ? dst_rank : 1, dst_rank ? ds : &one, dst_rank ? db : &one, { 0 }, 0 };
    while (count > 0) {
        int64_t run = walk_row_left(&in) < walk_row_left(&out) ? walk_row_left(&in) : walk_row_left(&out);
        memcpy(dst + (size_t)out.off * elem, src + (size_t)in.off * elem, (size_t)run * elem);
        walk_advance(&in, run);
        walk_advance(&out, run);
        count -= run;
    }
}

/* dynamic-reshape(x, size_0, ..., size_r-1): the logical elements of x, in
 * row-major order, laid out as sizes (each at most its bound, and equal to
 * a static dimension) in the bounded result; zeros in the padding. */
bool eval_dynamic_reshape(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    const IrShape *s = instr->shape, *xs = args[0]->shape;
    if (!ir_shape_is_array(s) || !ir_shape_is_array(xs) || instr->n_operands != s->rank + 1 || s->type != xs->type ||
        ir_shape_elements(s) != ir_shape_elements(xs))
        return error_set(err, ERR_SHAPE, instr->info->loc, "dynamic-reshape: %s with %d sizes to %s",
                         ir_shape_str(xs), instr->n_operands - 1, ir_shape_str(s));
    int64_t sizes[IR_MAX_RANK], xsizes[IR_MAX_RANK], want = 1, have = 1;
    bool same = true;
    for (int d = 0; d < s->rank; d++) {
        const Value *n = args[1 + d];
        if (!ir_shape_is_array(n->shape) || n->shape->rank != 0 || !ir_type_is_int(n->shape->type))
            return error_set(err, ERR_SHAPE, instr->info->loc, "dynamic-reshape: size %d is %s, not an integer scalar",
                             d, ir_shape_str(n->shape));
        sizes[d] = ir_elem_get_i64(n->shape->type, n->data);
        bool is_static = !s->dim_kind || s->dim_kind[d] == IR_DIM_STATIC;
        if (sizes[d] < 0 || sizes[d] > s->dims[d] || (is_static && sizes[d] != s->dims[d]))
            return error_set(err, ERR_SHAPE, instr->info->loc,
                             "dynamic-reshape: size %lld does not fit dimension %d of %s", (long long)sizes[d], d,
                             ir_shape_str(s));
        want *= sizes[d];
        same = same && sizes[d] == s->dims[d];
    }
    for (int d = 0; d < xs->rank; d++)
        have *= xsizes[d] = size_of(args[0], d);
    if (want != have)
        return error_set(err, ERR_SHAPE, instr->info->loc,
                         "dynamic-reshape: the sizes hold %lld elements, the operand %s holds %lld", (long long)want,
                         ir_shape_str(xs), (long long)have);
    if (same && !args[0]->sizes)
        return (*out = value_alias(s, args[0], err)) != NULL;      /* a plain reshape */
    Value *v = value_new_zeroed(s, err);
    if (!v)
        return false;
    copy_logical(v->data, sizes, s->dims, s->rank, args[0]->data, xsizes, xs->dims, xs->rank, have,
                 (size_t)ir_type_storage_bytes(s->type));
    if (!set_sizes(instr, v, sizes, err)) {
        value_release(v);
        return false;
    }
    *out = v;
    return true;
}

/* custom-call(data, size_0, ..., size_{r-1}), custom_call_target=
 * "SliceToDynamic" -> T[<=b_0, ...]: XLA's DynamicPadder marks with it
 * where a static array becomes dynamic (its CPU backend then packs the
 * valid elements).  As a value: data's elements, dimension d holding
 * size_d of them; a static dimension of the result must be given whole. */
bool eval_slice_to_dynamic(const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    const IrShape *s = instr->shape, *x = args[0]->shape;
    char xs[160];          /* ir_shape_str's buffer holds one shape at a time */
    snprintf(xs, sizeof xs, "%s", ir_shape_str(x));
    if (!ir_shape_is_array(s) || !ir_shape_is_array(x) || x->type != s->type || x->rank != s->rank ||
        instr->n_operands != 1 + s->rank || args[0]->sizes)
        return error_set(err, ERR_SHAPE, instr->info->loc,
                         "custom-call SliceToDynamic: wants a full array and one size per dimension of %s, "
                         "got %s and %d sizes", ir_shape_str(s), xs, instr->n_operands - 1);
    int64_t sizes[IR_MAX_RANK];
    for (int d = 0; d < s->rank; d++) {
        const Value *n = args[1 + d];
        if (x->dims[d] != s->dims[d] || !ir_shape_is_array(n->shape) || n->shape->rank != 0 ||
            !ir_type_is_int(n->shape->type))
            return error_set(err, ERR_SHAPE, instr->info->loc,
                             "custom-call SliceToDynamic: dimension %d of data %s and result %s wants a scalar "
                             "integer size", d, xs, ir_shape_str(s));
        sizes[d] = ir_elem_get_i64(n->shape->type, n->data);
        int64_t lo = s->dim_kind && s->dim_kind[d] != IR_DIM_STATIC ? 0 : s->dims[d];
        if (sizes[d] < lo || sizes[d] > s->dims[d])
            return error_set(err, ERR_SHAPE, instr->info->loc,
                             "custom-call SliceToDynamic: size %lld is outside [%lld, %lld] for dimension %d of %s",
                             (long long)sizes[d], (long long)lo, (long long)s->dims[d], d, ir_shape_str(s));
    }
    Value *v = value_alias(s, args[0], err);
    if (!v || !set_sizes(instr, v, sizes, err)) {
        value_release(v);
        return false;
    }
    *out = v;
    return true;
}

/* custom-call(x), custom_call_target="PadToStatic" -> (T[b_0, ...], s32[],
 * ...): the inverse, x's bounded buffer as a static array and its runtime
 * sizes.  The padding holds what the padded form holds (see the top of
 * this file); XLA leaves it unspecified. */
bool eval_pad_to_static(const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    const IrShape *s = instr->shape, *x = args[0]->shape;
    bool ok = instr->n_operands == 1 && ir_shape_is_array(x) && s->type == IR_TYPE_TUPLE &&
              s->n_elements == 1 + x->rank && ir_shape_is_array(s->elements[0]) &&
              s->elements[0]->type == x->type && s->elements[0]->rank == x->rank;
    for (int d = 0; ok && d < x->rank; d++) {
        const IrShape *e = s->elements[1 + d];
        ok = s->elements[0]->dims[d] == x->dims[d] &&
             !(s->elements[0]->dim_kind && s->elements[0]->dim_kind[d] != IR_DIM_STATIC) &&
             ir_shape_is_array(e) && e->rank == 0 && ir_type_is_int(e->type);
    }
    if (!ok) {
        char xs[160];      /* ir_shape_str's buffer holds one shape at a time */
        snprintf(xs, sizeof xs, "%s", ir_shape_str(x));
        return error_set(err, ERR_SHAPE, instr->info->loc,
                         "custom-call PadToStatic: %s to %s: wants (the static array, one size per dimension)", xs,
                         ir_shape_str(s));
    }
    Value *parts[1 + IR_MAX_RANK] = { value_alias(s->elements[0], args[0], err) };
    bool made = parts[0] != NULL;
    for (int d = 0; made && d < x->rank; d++) {
        parts[1 + d] = value_new_array(s->elements[1 + d], err);
        if ((made = parts[1 + d] != NULL))
            ir_elem_set_i64(s->elements[1 + d]->type, parts[1 + d]->data, size_of(args[0], d));
    }
    if (!made) {
        for (int i = 0; i <= x->rank; i++)
            value_release(parts[i]);
        return false;
    }
    *out = value_new_tuple(s, 1 + x->rank, parts, err);
    return *out != NULL;
}
