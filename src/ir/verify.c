/* verify.c: checks that a module is well formed before anything runs on it.
 *
 * Structure: an entry computation, unique names, operands and control
 * predecessors defined earlier in the same computation, parameters numbered
 * 0..n-1 once each, a root, called computations that take what the caller
 * passes, no call cycles, entry parameters that agree with the header's
 * entry_computation_layout.
 * Shapes: every instruction's result against its operands and attributes, by
 * the rules of hlo-reference.md sections 3, 5 and 6, and replica groups that
 * partition the participants.  The collectives' rules (section 6: replica
 * groups, source-target pairs, their shapes) are in verify_collectives.c. */
#include "ir.h"
#include "verify_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef bool CheckFn(const IrInstr *in, const IrShape *out, Error *err);

/* ------------------------------------------------------------------ */
/* Messages                                                             */

#define TEXT_BYTES 200

/* Shape text for messages.  Four rotating buffers, so one message can show
 * several shapes (ir_shape_str itself has only one). */
const char *verify_shape_text(const IrShape *s)
{
    static char bufs[4][TEXT_BYTES];
    static int next;
    char *b = bufs[next];
    next = (next + 1) % 4;
    snprintf(b, TEXT_BYTES, "%s", s ? ir_shape_str(s) : "<no shape>");
    return b;
}

/* "{1,0}" for a list attribute; two rotating buffers. */
const char *verify_list_text(const IrIntList *l)
{
    static char bufs[2][TEXT_BYTES];
    static int next;
    char *b = bufs[next];
    next = (next + 1) % 2;
    size_t n = (size_t)snprintf(b, TEXT_BYTES, "{");
    for (int i = 0; i < l->n && n < TEXT_BYTES; i++)
        n += (size_t)snprintf(b + n, TEXT_BYTES - n, "%s%lld", i ? "," : "", (long long)l->v[i]);
    if (n < TEXT_BYTES)
        snprintf(b + n, TEXT_BYTES - n, "}");
    return b;
}

static bool is_async_op(IrOpcode op)
{
    return op == IR_OP_ASYNC_START || op == IR_OP_ASYNC_UPDATE || op == IR_OP_ASYNC_DONE;
}

/* reduce-scatter-start and friends: an async op that names the op it wraps
 * instead of calling a computation. */
bool verify_is_sugared_async(const IrInstr *in)
{
    return is_async_op(in->op) && in->info->async_wrapped < IR_OP_COUNT && !is_async_op(in->info->async_wrapped);
}

static const char *opname(const IrInstr *in)
{
    static char buf[96];
    if (!verify_is_sugared_async(in))
        return ir_opcode_name(in->op);
    const char *suffix = in->op == IR_OP_ASYNC_START ? "-start"
                       : in->op == IR_OP_ASYNC_UPDATE ? "-update" : "-done";
    snprintf(buf, sizeof buf, "%s%s", ir_opcode_name(in->info->async_wrapped), suffix);
    return buf;
}

static bool comp_fail(const IrComputation *c, Error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "<opcode>: <message>" at the instruction's name. */
bool verify_fail(const IrInstr *in, Error *err, const char *fmt, ...)
{
    char msg[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return error_set(err, ERR_SHAPE, in->info->loc, "%s: %.*s", opname(in), 440, msg);
}

/* "computation <name>: <message>" at the computation's name. */
static bool comp_fail(const IrComputation *c, Error *err, const char *fmt, ...)
{
    char msg[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return error_set(err, ERR_SHAPE, c->loc, "computation %.*s: %.*s", 60, c->name, 400, msg);
}

bool verify_out_of_memory(IrLoc loc, Error *err)
{
    return error_set(err, ERR_NOMEM, loc, "out of memory in the verifier");
}

/* ------------------------------------------------------------------ */
/* Shape helpers.  Unbounded dims (-1) match anything; layouts and the
 * bounded/static distinction are ignored, as XLA's compatibility check does. */

bool verify_dim_eq(int64_t a, int64_t b)
{
    return a < 0 || b < 0 || a == b;
}

static bool same_dims(const IrShape *a, const IrShape *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (!verify_dim_eq(a->dims[i], b->dims[i]))
            return false;
    return true;
}

const IrShape *verify_unbuffer(const IrShape *s)
{
    while (s->is_buffer && s->n_elements > 0)
        s = s->elements[0];
    return s;
}

bool verify_same_shape(const IrShape *a, const IrShape *b)
{
    a = verify_unbuffer(a);
    b = verify_unbuffer(b);
    if (a->type != b->type)
        return false;
    if (a->type == IR_TYPE_TUPLE) {
        if (a->n_elements != b->n_elements)
            return false;
        for (int i = 0; i < a->n_elements; i++)
            if (!verify_same_shape(a->elements[i], b->elements[i]))
                return false;
        return true;
    }
    return !ir_shape_is_array(a) || same_dims(a, b);
}

bool verify_is_scalar(const IrShape *s)
{
    return ir_shape_is_array(s) && s->rank == 0;
}

bool verify_has_dynamic_dim(const IrShape *s)
{
    for (int i = 0; i < s->rank; i++)
        if (s->dims[i] < 0 || (s->dim_kind && s->dim_kind[i] != IR_DIM_STATIC))
            return true;
    return false;
}

static bool has_unbounded_dim(const IrShape *s)
{
    for (int i = 0; i < s->rank; i++)
        if (s->dims[i] < 0)
            return true;
    return false;
}

const IrShape *verify_operand_shape(const IrInstr *in, int i)
{
    return in->operands[i]->shape;
}

static bool is_listed(const IrIntList *l, int64_t v)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == v)
            return true;
    return false;
}

bool verify_need_array(const IrInstr *in, const IrShape *s, const char *what, Error *err)
{
    if (ir_shape_is_array(s))
        return true;
    return verify_fail(in, err, "%s %s must be an array", what, verify_shape_text(s));
}

bool verify_need_same_type(const IrInstr *in, const IrShape *a, const IrShape *b, Error *err)
{
    if (a->type == b->type)
        return true;
    return verify_fail(in, err, "element type of %s differs from %s", verify_shape_text(a), verify_shape_text(b));
}

/* Every entry of a list attribute names a dimension of s, none twice. */
static bool check_dim_list(const IrInstr *in, IrListAttr which, const IrShape *s, Error *err)
{
    const IrIntList *l = &in->lists[which];
    for (int i = 0; i < l->n; i++) {
        if (l->v[i] < 0 || l->v[i] >= s->rank)
            return verify_fail(in, err, "%s=%s out of range for %s", ir_list_attr_name[which], verify_list_text(l),
                               verify_shape_text(s));
        for (int j = 0; j < i; j++)
            if (l->v[j] == l->v[i])
                return verify_fail(in, err, "%s=%s names dimension %lld twice", ir_list_attr_name[which],
                                   verify_list_text(l), (long long)l->v[i]);
    }
    return true;
}

/* dimensions={d}: exactly one entry, in range for s. */
bool verify_single_dim(const IrInstr *in, const IrShape *s, int64_t *d, Error *err)
{
    const IrIntList *l = &in->lists[IR_LIST_DIMENSIONS];
    *d = 0;
    if (l->n != 1)
        return verify_fail(in, err, "dimensions=%s must name exactly one dimension", verify_list_text(l));
    *d = l->v[0];
    return check_dim_list(in, IR_LIST_DIMENSIONS, s, err);
}

/* Result i of an op with n results: the shape itself when n == 1, else
 * element i of a tuple of n.  NULL (after reporting) otherwise. */
const IrShape *verify_result_part(const IrInstr *in, const IrShape *out, int n, int i, Error *err)
{
    if (n == 1 && !ir_shape_is_tuple(out))
        return out;
    if (ir_shape_is_tuple(out) && out->n_elements == n)
        return out->elements[i];
    verify_fail(in, err, "result %s must be a tuple of %d shapes, one per operand", verify_shape_text(out), n);
    return NULL;
}

/* The shape matches the operands: the one operand's shape, or a tuple of
 * all of them. */
bool verify_operands_match(const IrInstr *in, const IrShape *s)
{
    int n = in->n_operands;
    if (n == 1 && verify_same_shape(s, verify_operand_shape(in, 0)))
        return true;
    if (!ir_shape_is_tuple(s) || s->n_elements != n)
        return false;
    for (int i = 0; i < n; i++)
        if (!verify_same_shape(s->elements[i], verify_operand_shape(in, i)))
            return false;
    return true;
}

/* ------------------------------------------------------------------ */
/* Called computations                                                  */

/* c takes n_args parameters shaped like operands first.., and returns
 * result (not checked when result is NULL). */
static bool check_callee_comp(const IrInstr *in, const IrComputation *c, const char *attr, int first,
                              int n_args, const IrShape *result, Error *err)
{
    if (c->n_params != n_args)
        return verify_fail(in, err, "%s=%s takes %d parameters, expected %d", attr, c->name, c->n_params, n_args);
    for (int k = 0; k < n_args && first + k < in->n_operands; k++) {
        const IrInstr *param = c->params ? c->params[k] : NULL;
        const IrShape *arg = verify_operand_shape(in, first + k);
        if (param && !verify_same_shape(param->shape, arg))
            return verify_fail(in, err, "parameter %d of %s is %s but operand %d is %s", k, c->name,
                               verify_shape_text(param->shape), first + k, verify_shape_text(arg));
    }
    if (result && c->root && !verify_same_shape(c->root->shape, result))
        return verify_fail(in, err, "%s=%s returns %s, expected %s", attr, c->name, verify_shape_text(c->root->shape),
                           verify_shape_text(result));
    return true;
}

static bool check_callee(const IrInstr *in, IrCompAttr which, int first, int n_args, const IrShape *result,
                         Error *err)
{
    const IrComputation *c = in->info->comps[which];
    if (!c)
        return verify_fail(in, err, "missing %s", ir_comp_attr_name[which]);
    return check_callee_comp(in, c, ir_comp_attr_name[which], first, n_args, result, err);
}

/* A computation attribute that takes n parameters (shapes not compared). */
bool verify_callee_arity(const IrInstr *in, IrCompAttr which, int n, bool scalars, Error *err)
{
    const IrComputation *c = in->info->comps[which];
    const char *attr = ir_comp_attr_name[which];
    if (!c)
        return verify_fail(in, err, "missing %s", attr);
    if (c->n_params != n)
        return verify_fail(in, err, "%s=%s takes %d parameters, expected %d", attr, c->name, c->n_params, n);
    for (int k = 0; scalars && c->params && k < n; k++)
        if (c->params[k] && !verify_is_scalar(c->params[k]->shape))
            return verify_fail(in, err, "%s=%s parameter %d is %s, expected a scalar", attr, c->name, k,
                               verify_shape_text(c->params[k]->shape));
    return true;
}

/* ------------------------------------------------------------------ */
/* Element type classes of the elementwise ops (XLA's shape inference)  */

typedef enum TypeClass {
    TC_ANY, TC_FLOAT, TC_FLOAT_OR_COMPLEX, TC_INT, TC_PRED_OR_INT, TC_F32_OR_F64
} TypeClass;

static const char *const type_class_name[] = {
    [TC_ANY] = "any", [TC_FLOAT] = "floating-point", [TC_FLOAT_OR_COMPLEX] = "floating-point or complex",
    [TC_INT] = "integer", [TC_PRED_OR_INT] = "pred or integer", [TC_F32_OR_F64] = "f32 or f64",
};

static const unsigned char operand_class[IR_OP_COUNT] = {
    [IR_OP_EXP] = TC_FLOAT_OR_COMPLEX,   [IR_OP_EXPM1] = TC_FLOAT_OR_COMPLEX,
    [IR_OP_LOG] = TC_FLOAT_OR_COMPLEX,   [IR_OP_LOG1P] = TC_FLOAT_OR_COMPLEX,
    [IR_OP_SQRT] = TC_FLOAT_OR_COMPLEX,  [IR_OP_RSQRT] = TC_FLOAT_OR_COMPLEX,
    [IR_OP_CBRT] = TC_FLOAT_OR_COMPLEX,  [IR_OP_TANH] = TC_FLOAT_OR_COMPLEX,
    [IR_OP_LOGISTIC] = TC_FLOAT_OR_COMPLEX,
    [IR_OP_SIN] = TC_FLOAT_OR_COMPLEX,   [IR_OP_COS] = TC_FLOAT_OR_COMPLEX,
    [IR_OP_TAN] = TC_FLOAT_OR_COMPLEX,   [IR_OP_ACOS] = TC_FLOAT_OR_COMPLEX,
    [IR_OP_ACOSH] = TC_FLOAT_OR_COMPLEX, [IR_OP_ASIN] = TC_FLOAT_OR_COMPLEX,
    [IR_OP_ASINH] = TC_FLOAT_OR_COMPLEX, [IR_OP_ATANH] = TC_FLOAT_OR_COMPLEX,
    [IR_OP_COSH] = TC_FLOAT_OR_COMPLEX,  [IR_OP_SINH] = TC_FLOAT_OR_COMPLEX,
    [IR_OP_ERF] = TC_FLOAT_OR_COMPLEX,   [IR_OP_ATAN2] = TC_FLOAT_OR_COMPLEX,
    [IR_OP_FLOOR] = TC_FLOAT, [IR_OP_CEIL] = TC_FLOAT, [IR_OP_ROUND_AFZ] = TC_FLOAT,
    [IR_OP_ROUND_EVEN] = TC_FLOAT, [IR_OP_IS_FINITE] = TC_FLOAT, [IR_OP_REDUCE_PRECISION] = TC_FLOAT,
    [IR_OP_POPCNT] = TC_INT, [IR_OP_CLZ] = TC_INT,
    [IR_OP_SHIFT_LEFT] = TC_INT, [IR_OP_SHIFT_RIGHT_ARITH] = TC_INT, [IR_OP_SHIFT_RIGHT_LOGICAL] = TC_INT,
    [IR_OP_NOT] = TC_PRED_OR_INT, [IR_OP_AND] = TC_PRED_OR_INT, [IR_OP_OR] = TC_PRED_OR_INT,
    [IR_OP_XOR] = TC_PRED_OR_INT,
    [IR_OP_COMPLEX] = TC_F32_OR_F64,
};

static bool type_in_class(IrElemType t, TypeClass c)
{
    switch (c) {
    case TC_ANY:
        return true;
    case TC_FLOAT:
        return ir_type_is_float(t);
    case TC_FLOAT_OR_COMPLEX:
        return ir_type_is_float(t) || ir_type_is_complex(t);
    case TC_INT:
        return ir_type_is_int(t);
    case TC_PRED_OR_INT:
        return t == IR_TYPE_PRED || ir_type_is_int(t);
    case TC_F32_OR_F64:
        return t == IR_TYPE_F32 || t == IR_TYPE_F64;
    }
    return false;
}

/* Every operand of an elementwise op is an array of the op's type class. */
static bool need_elementwise_operands(const IrInstr *in, Error *err)
{
    TypeClass c = (TypeClass)operand_class[in->op];
    for (int i = 0; i < in->n_operands; i++) {
        const IrShape *x = verify_operand_shape(in, i);
        if (!verify_need_array(in, x, "operand", err))
            return false;
        if (!type_in_class(x->type, c))
            return verify_fail(in, err, "operand %s must have a %s element type", verify_shape_text(x),
                               type_class_name[c]);
    }
    return true;
}

/* out has x's dims and (unless want is INVALID) element type want. */
static bool check_ew_result(const IrInstr *in, const IrShape *out, const IrShape *x, IrElemType want, Error *err)
{
    if (!ir_shape_is_array(out) || !same_dims(out, x))
        return verify_fail(in, err, "result %s does not match operand %s", verify_shape_text(out),
                           verify_shape_text(x));
    if (want != IR_TYPE_INVALID && out->type != want)
        return verify_fail(in, err, "result %s must have element type %s", verify_shape_text(out), ir_type_name(want));
    return true;
}

/* ------------------------------------------------------------------ */
/* Elementwise ops                                                      */

static IrElemType complex_part_type(IrElemType t)
{
    return t == IR_TYPE_C128 ? IR_TYPE_F64 : IR_TYPE_F32;
}

static IrElemType unary_result_type(IrOpcode op, IrElemType t)
{
    if (op == IR_OP_IS_FINITE)
        return IR_TYPE_PRED;
    if ((op == IR_OP_ABS || op == IR_OP_REAL || op == IR_OP_IMAG) && ir_type_is_complex(t))
        return complex_part_type(t);
    if (op == IR_OP_CONVERT)
        return IR_TYPE_INVALID;     /* any type */
    return t;
}

static bool check_unary(const IrInstr *in, const IrShape *out, Error *err)
{
    if (!need_elementwise_operands(in, err))
        return false;
    const IrShape *x = verify_operand_shape(in, 0);
    return check_ew_result(in, out, x, unary_result_type(in->op, x->type), err);
}

static IrElemType binary_result_type(IrOpcode op, IrElemType t)
{
    if (op == IR_OP_COMPARE)
        return IR_TYPE_PRED;
    if (op == IR_OP_COMPLEX)
        return t == IR_TYPE_F64 ? IR_TYPE_C128 : IR_TYPE_C64;
    return t;
}

static bool check_binary(const IrInstr *in, const IrShape *out, Error *err)
{
    if (!need_elementwise_operands(in, err))
        return false;
    const IrShape *a = verify_operand_shape(in, 0), *b = verify_operand_shape(in, 1);
    if (!same_dims(a, b))
        return verify_fail(in, err, "operands %s and %s have different dimensions", verify_shape_text(a),
                           verify_shape_text(b));
    if (a->type != b->type)
        return verify_fail(in, err, "operands %s and %s have different element types", verify_shape_text(a),
                           verify_shape_text(b));
    if (in->op == IR_OP_COMPARE && in->info->direction == IR_CMP_NONE)
        return verify_fail(in, err, "missing direction");
    return check_ew_result(in, out, a, binary_result_type(in->op, a->type), err);
}

/* stochastic-convert(x, random): x floating-point, random unsigned of x's
 * width and dims (XLA's InferStochasticConvertShape); result any type. */
static bool check_stochastic_convert(const IrInstr *in, const IrShape *out, Error *err)
{
    if (!need_elementwise_operands(in, err))
        return false;
    const IrShape *x = verify_operand_shape(in, 0), *r = verify_operand_shape(in, 1);
    if (!ir_type_is_float(x->type))
        return verify_fail(in, err, "operand %s must have a floating-point element type", verify_shape_text(x));
    if (!ir_type_is_unsigned_int(r->type) || ir_type_info[r->type].bits != ir_type_info[x->type].bits)
        return verify_fail(in, err, "random bits %s must be unsigned integers as wide as operand %s",
                           verify_shape_text(r), verify_shape_text(x));
    if (!same_dims(x, r))
        return verify_fail(in, err, "random bits %s do not match operand %s", verify_shape_text(r),
                           verify_shape_text(x));
    return check_ew_result(in, out, x, IR_TYPE_INVALID, err);
}

/* select(pred, on_true, on_false): pred matches or is a scalar. */
static bool check_select(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *p = verify_operand_shape(in, 0), *t = verify_operand_shape(in, 1), *f = verify_operand_shape(in, 2);
    if (!ir_shape_is_array(p) || p->type != IR_TYPE_PRED)
        return verify_fail(in, err, "predicate %s must be a pred array", verify_shape_text(p));
    if (!verify_same_shape(t, f))
        return verify_fail(in, err, "on_true %s and on_false %s differ", verify_shape_text(t), verify_shape_text(f));
    if (p->rank != 0 && (!ir_shape_is_array(t) || !same_dims(p, t)))
        return verify_fail(in, err, "predicate %s must be a scalar or match %s", verify_shape_text(p),
                           verify_shape_text(t));
    if (!verify_same_shape(out, t))
        return verify_fail(in, err, "result %s does not match operands %s", verify_shape_text(out),
                           verify_shape_text(t));
    return true;
}

/* clamp(lo, x, hi): lo and hi are scalars or match x. */
static bool check_clamp(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *x = verify_operand_shape(in, 1);
    for (int i = 0; i < 3; i++) {
        const IrShape *s = verify_operand_shape(in, i);
        if (!verify_need_array(in, s, "operand", err) || !verify_need_same_type(in, s, x, err))
            return false;
        if (i != 1 && s->rank != 0 && !same_dims(s, x))
            return verify_fail(in, err, "bound %s must be a scalar or match %s", verify_shape_text(s),
                               verify_shape_text(x));
    }
    return check_ew_result(in, out, x, x->type, err);
}

/* Same bit width: same dims.  Narrower result: a new minor dim of size
 * in_bits/out_bits.  Wider: the operand's minor dim of that size goes. */
static bool check_bitcast_convert(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *x = verify_operand_shape(in, 0);
    if (!verify_need_array(in, x, "operand", err) || !verify_need_array(in, out, "result", err))
        return false;
    int ib = ir_type_info[x->type].bits, ob = ir_type_info[out->type].bits;
    if (ib <= 0 || ob <= 0)
        return true;
    if (ib == ob) {
        if (!same_dims(x, out))
            return verify_fail(in, err, "result %s must have the dimensions of %s", verify_shape_text(out),
                               verify_shape_text(x));
        return true;
    }
    const IrShape *wide = ib > ob ? x : out, *narrow = ib > ob ? out : x;
    int ratio = ib > ob ? ib / ob : ob / ib;
    bool ok = narrow->rank == wide->rank + 1 && verify_dim_eq(narrow->dims[wide->rank], ratio);
    for (int i = 0; ok && i < wide->rank; i++)
        ok = verify_dim_eq(narrow->dims[i], wide->dims[i]);
    if (!ok)
        return verify_fail(in, err, "%s and %s must differ only by a minor dimension of size %d", verify_shape_text(x),
                           verify_shape_text(out), ratio);
    return true;
}

/* ------------------------------------------------------------------ */
/* Data movement                                                        */

static bool check_reshape(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *x = verify_operand_shape(in, 0);
    if (!verify_need_array(in, x, "operand", err) || !verify_need_array(in, out, "result", err) ||
        !verify_need_same_type(in, out, x, err))
        return false;
    /* XLA's rule (HloInstruction::CreateReshape): unless the operand has an
     * unbounded dim, the result's extents, bounds for <= dims, multiply to
     * the operand's, so a result has no unbounded dim either. */
    if (has_unbounded_dim(x))
        return true;
    if (has_unbounded_dim(out))
        return verify_fail(in, err, "result %s has an unbounded dimension, operand %s has none",
                           verify_shape_text(out), verify_shape_text(x));
    if (ir_shape_elements(x) != ir_shape_elements(out))
        return verify_fail(in, err, "result %s has %lld elements, operand %s has %lld", verify_shape_text(out),
                           (long long)ir_shape_elements(out), verify_shape_text(x), (long long)ir_shape_elements(x));
    return true;
}

static int64_t bit_size(const IrShape *s)
{
    return ir_shape_elements(s) * ir_type_info[s->type].bits;
}

/* bitcast reinterprets the buffer: the byte sizes agree (by storage or by
 * logical bits, so sub-byte types are not rejected either way). */
static bool check_bitcast(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *x = verify_operand_shape(in, 0);
    if (!ir_shape_is_array(x) || !ir_shape_is_array(out) || verify_has_dynamic_dim(x) || verify_has_dynamic_dim(out))
        return true;
    if (ir_shape_byte_size(x) == ir_shape_byte_size(out) || bit_size(x) == bit_size(out))
        return true;
    return verify_fail(in, err, "result %s has %lld bytes, operand %s has %lld", verify_shape_text(out),
                       (long long)ir_shape_byte_size(out), verify_shape_text(x), (long long)ir_shape_byte_size(x));
}

/* result dim i = operand dim p[i]. */
static bool check_transpose(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *x = verify_operand_shape(in, 0);
    const IrIntList *p = &in->lists[IR_LIST_DIMENSIONS];
    if (!verify_need_array(in, x, "operand", err) || !verify_need_array(in, out, "result", err))
        return false;
    if (p->n != x->rank)
        return verify_fail(in, err, "dimensions=%s must be a permutation of the %d dimensions of %s",
                           verify_list_text(p), x->rank, verify_shape_text(x));
    if (!check_dim_list(in, IR_LIST_DIMENSIONS, x, err) || !verify_need_same_type(in, out, x, err))
        return false;
    bool ok = out->rank == x->rank;
    for (int i = 0; ok && i < x->rank; i++)
        ok = verify_dim_eq(out->dims[i], x->dims[p->v[i]]);
    if (!ok)
        return verify_fail(in, err, "result %s is not %s permuted by dimensions=%s", verify_shape_text(out),
                           verify_shape_text(x), verify_list_text(p));
    return true;
}

/* operand dim k becomes result dim d[k], with the same size. */
static bool check_broadcast(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *x = verify_operand_shape(in, 0);
    const IrIntList *d = &in->lists[IR_LIST_DIMENSIONS];
    if (!verify_need_array(in, x, "operand", err) || !verify_need_array(in, out, "result", err) ||
        !verify_need_same_type(in, out, x, err))
        return false;
    if (d->n != x->rank)
        return verify_fail(in, err, "dimensions=%s must name one result dimension for each of the %d of %s",
                           verify_list_text(d), x->rank, verify_shape_text(x));
    if (!check_dim_list(in, IR_LIST_DIMENSIONS, out, err))
        return false;
    for (int k = 0; k < x->rank; k++)
        if (!verify_dim_eq(x->dims[k], out->dims[d->v[k]]))
            return verify_fail(in, err, "operand %s dimension %d has size %lld but result %s dimension %lld has %lld",
                               verify_shape_text(x), k, (long long)x->dims[k], verify_shape_text(out),
                               (long long)d->v[k], (long long)out->dims[d->v[k]]);
    return true;
}

static bool check_slice_dim(const IrInstr *in, const IrShape *x, const IrShape *out, int d, Error *err)
{
    IrSliceDim s = in->info->slice[d];
    if (s.stride < 1)
        return verify_fail(in, err, "slice stride %lld in dimension %d must be positive", (long long)s.stride, d);
    if (s.start < 0 || s.start > s.limit || (x->dims[d] >= 0 && s.limit > x->dims[d]))
        return verify_fail(in, err, "slice [%lld:%lld] out of range for dimension %d of %s", (long long)s.start,
                           (long long)s.limit, d, verify_shape_text(x));
    int64_t want = (s.limit - s.start + s.stride - 1) / s.stride;
    if (!verify_dim_eq(out->dims[d], want))
        return verify_fail(in, err, "result %s dimension %d must be %lld", verify_shape_text(out), d, (long long)want);
    return true;
}

static bool check_slice(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *x = verify_operand_shape(in, 0);
    if (!verify_need_array(in, x, "operand", err) || !verify_need_array(in, out, "result", err) ||
        !verify_need_same_type(in, out, x, err))
        return false;
    if (in->info->n_slice < 0)
        return verify_fail(in, err, "missing slice");
    if (in->info->n_slice != x->rank)
        return verify_fail(in, err, "slice has %d ranges, %s has %d dimensions", in->info->n_slice,
                           verify_shape_text(x), x->rank);
    if (out->rank != x->rank)
        return verify_fail(in, err, "result %s must have the rank of %s", verify_shape_text(out), verify_shape_text(x));
    for (int d = 0; d < x->rank; d++)
        if (!check_slice_dim(in, x, out, d, err))
            return false;
    return true;
}

static bool is_int_array(const IrShape *s)
{
    return ir_shape_is_array(s) && ir_type_is_int(s->type);
}

/* Start indices from operand first on: one integer scalar per dimension of
 * a rank-`rank` array, or (legacy) a single integer vector of that length. */
static bool check_start_indices(const IrInstr *in, int first, int rank, Error *err)
{
    int n = in->n_operands - first;
    if (n == 1 && rank != 1) {
        const IrShape *v = verify_operand_shape(in, first);
        if (is_int_array(v) && v->rank == 1 && verify_dim_eq(v->dims[0], rank))
            return true;
    }
    if (n != rank)
        return verify_fail(in, err, "expects %d start indices for rank %d, got %d", rank, rank, n);
    for (int i = first; i < in->n_operands; i++) {
        const IrShape *s = verify_operand_shape(in, i);
        if (!is_int_array(s) || (s->rank != 0 && !(n == 1 && s->rank == 1)))
            return verify_fail(in, err, "start index %s must be an integer scalar", verify_shape_text(s));
    }
    return true;
}

static bool check_dynamic_slice(const IrInstr *in, const IrShape *out, Error *err)
{
    if (in->n_operands < 1)
        return verify_fail(in, err, "expects an operand and start indices");
    const IrShape *x = verify_operand_shape(in, 0);
    const IrIntList *sizes = &in->lists[IR_LIST_DYNAMIC_SLICE_SIZES];
    if (!verify_need_array(in, x, "operand", err) || !verify_need_array(in, out, "result", err) ||
        !check_start_indices(in, 1, x->rank, err) || !verify_need_same_type(in, out, x, err))
        return false;
    if (sizes->n != x->rank)
        return verify_fail(in, err, "dynamic_slice_sizes=%s must have %d entries for %s", verify_list_text(sizes),
                           x->rank, verify_shape_text(x));
    for (int d = 0; d < x->rank; d++)
        if (sizes->v[d] < 0 || (x->dims[d] >= 0 && sizes->v[d] > x->dims[d]))
            return verify_fail(in, err, "dynamic_slice_sizes=%s exceeds %s in dimension %d", verify_list_text(sizes),
                               verify_shape_text(x), d);
    bool ok = out->rank == x->rank;
    for (int d = 0; ok && d < x->rank; d++)
        ok = verify_dim_eq(out->dims[d], sizes->v[d]);
    if (!ok)
        return verify_fail(in, err, "result %s does not match dynamic_slice_sizes=%s", verify_shape_text(out),
                           verify_list_text(sizes));
    return true;
}

static bool check_dynamic_update_slice(const IrInstr *in, const IrShape *out, Error *err)
{
    if (in->n_operands < 2)
        return verify_fail(in, err, "expects an operand, an update and start indices");
    const IrShape *x = verify_operand_shape(in, 0), *u = verify_operand_shape(in, 1);
    if (!verify_need_array(in, x, "operand", err) || !verify_need_array(in, u, "update", err) ||
        !verify_need_same_type(in, u, x, err) || !check_start_indices(in, 2, x->rank, err))
        return false;
    bool fits = u->rank == x->rank;
    for (int d = 0; fits && d < x->rank; d++)
        fits = u->dims[d] < 0 || x->dims[d] < 0 || u->dims[d] <= x->dims[d];
    if (!fits)
        return verify_fail(in, err, "update %s does not fit in %s", verify_shape_text(u), verify_shape_text(x));
    if (!verify_same_shape(out, x))
        return verify_fail(in, err, "result %s does not match operand %s", verify_shape_text(out),
                           verify_shape_text(x));
    return true;
}

/* Operand i of a concatenate agrees with operand 0 outside dimension d. */
static bool check_concat_operand(const IrInstr *in, const IrShape *x0, int i, int64_t d, Error *err)
{
    const IrShape *x = verify_operand_shape(in, i);
    if (!verify_need_array(in, x, "operand", err) || !verify_need_same_type(in, x, x0, err))
        return false;
    bool ok = x->rank == x0->rank;
    for (int k = 0; ok && k < x->rank; k++)
        ok = k == d || verify_dim_eq(x->dims[k], x0->dims[k]);
    if (!ok)
        return verify_fail(in, err, "operand %s does not match %s outside dimension %lld", verify_shape_text(x),
                           verify_shape_text(x0), (long long)d);
    return true;
}

static bool check_concatenate(const IrInstr *in, const IrShape *out, Error *err)
{
    if (in->n_operands < 1)
        return verify_fail(in, err, "expects at least one operand");
    const IrShape *x0 = verify_operand_shape(in, 0);
    int64_t d = 0, sum = 0;
    if (!verify_need_array(in, x0, "operand", err) || !verify_need_array(in, out, "result", err) ||
        !verify_single_dim(in, x0, &d, err))
        return false;
    for (int i = 0; i < in->n_operands; i++) {
        if (!check_concat_operand(in, x0, i, d, err))
            return false;
        int64_t n = verify_operand_shape(in, i)->dims[d];
        sum = sum < 0 || n < 0 ? -1 : sum + n;
    }
    bool ok = out->rank == x0->rank && out->type == x0->type;
    for (int k = 0; ok && k < out->rank; k++)
        ok = verify_dim_eq(out->dims[k], k == d ? sum : x0->dims[k]);
    if (!ok)
        return verify_fail(in, err, "result %s must be %s with dimension %lld of size %lld", verify_shape_text(out),
                           verify_shape_text(x0), (long long)d, (long long)sum);
    return true;
}

/* Result dim = lo + hi + n + max(n-1, 0) * interior. */
static bool check_pad(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *x = verify_operand_shape(in, 0), *v = verify_operand_shape(in, 1);
    if (!verify_need_array(in, x, "operand", err) || !verify_need_array(in, out, "result", err) ||
        !verify_need_same_type(in, out, x, err) || !verify_need_same_type(in, v, x, err))
        return false;
    if (v->rank != 0)
        return verify_fail(in, err, "padding value %s must be a scalar", verify_shape_text(v));
    if (!in->info->has_padding || in->info->n_padding != x->rank)
        return verify_fail(in, err, "padding must have one entry for each of the %d dimensions of %s", x->rank,
                           verify_shape_text(x));
    if (out->rank != x->rank)
        return verify_fail(in, err, "result %s must have the rank of %s", verify_shape_text(out), verify_shape_text(x));
    for (int d = 0; d < x->rank; d++) {
        IrPadDim p = in->info->padding[d];
        int64_t n = x->dims[d];
        if (p.interior < 0)
            return verify_fail(in, err, "interior padding %lld in dimension %d is negative", (long long)p.interior, d);
        if (n < 0)
            continue;
        int64_t want, inner;
        if (__builtin_mul_overflow(n > 0 ? n - 1 : 0, p.interior, &inner) || __builtin_add_overflow(inner, n, &want) ||
            __builtin_add_overflow(want, p.lo, &want) || __builtin_add_overflow(want, p.hi, &want))
            return verify_fail(in, err, "padding of dimension %d of %s overflows 64 bits", d, verify_shape_text(x));
        if (want < 0)
            return verify_fail(in, err, "padding makes dimension %d of %s negative", d, verify_shape_text(x));
        if (!verify_dim_eq(out->dims[d], want))
            return verify_fail(in, err, "result %s dimension %d must be %lld", verify_shape_text(out), d,
                               (long long)want);
    }
    return true;
}

static bool check_iota(const IrInstr *in, const IrShape *out, Error *err)
{
    IrOptInt d = in->ints[IR_INT_IOTA_DIMENSION];
    if (!verify_need_array(in, out, "result", err))
        return false;
    if (!d.present)
        return verify_fail(in, err, "missing iota_dimension");
    if (d.v < 0 || d.v >= out->rank)
        return verify_fail(in, err, "iota_dimension=%lld out of range for %s", (long long)d.v, verify_shape_text(out));
    return true;
}

static bool check_reverse(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *x = verify_operand_shape(in, 0);
    if (!verify_need_array(in, x, "operand", err) || !check_dim_list(in, IR_LIST_DIMENSIONS, x, err))
        return false;
    if (!verify_same_shape(out, x))
        return verify_fail(in, err, "result %s does not match operand %s", verify_shape_text(out),
                           verify_shape_text(x));
    return true;
}

/* index_vector_dim may equal the rank (an implicit trailing 1). */
static bool check_index_vector_dim(const IrInstr *in, const IrShape *indices, Error *err)
{
    IrOptInt d = in->ints[IR_INT_INDEX_VECTOR_DIM];
    if (d.present && (d.v < 0 || d.v > indices->rank))
        return verify_fail(in, err, "index_vector_dim=%lld out of range for %s", (long long)d.v,
                           verify_shape_text(indices));
    return true;
}

/* gather: attribute dimensions in range; the full shape rule is not checked. */
static bool check_gather(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *x = verify_operand_shape(in, 0), *idx = verify_operand_shape(in, 1);
    if (!verify_need_array(in, x, "operand", err) || !verify_need_array(in, idx, "start indices", err) ||
        !verify_need_array(in, out, "result", err))
        return false;
    const IrIntList *sizes = &in->lists[IR_LIST_SLICE_SIZES];
    if (sizes->present && sizes->n != x->rank)
        return verify_fail(in, err, "slice_sizes=%s must have %d entries for %s", verify_list_text(sizes), x->rank,
                           verify_shape_text(x));
    return check_dim_list(in, IR_LIST_OFFSET_DIMS, out, err) &&
           check_dim_list(in, IR_LIST_COLLAPSED_SLICE_DIMS, x, err) &&
           check_dim_list(in, IR_LIST_START_INDEX_MAP, x, err) &&
           check_dim_list(in, IR_LIST_OPERAND_BATCHING_DIMS, x, err) &&
           check_dim_list(in, IR_LIST_START_INDICES_BATCHING_DIMS, idx, err) &&
           check_index_vector_dim(in, idx, err);
}

/* scatter(operands..., indices, updates...): dims in range, to_apply arity. */
static bool check_scatter(const IrInstr *in, const IrShape *out, Error *err)
{
    int n = in->n_operands;
    if (n < 3 || n % 2 == 0)
        return verify_fail(in, err, "expects operands, indices and as many updates, got %d operands", n);
    int k = (n - 1) / 2;
    const IrShape *x = verify_operand_shape(in, 0), *idx = verify_operand_shape(in, k);
    const IrShape *upd = verify_operand_shape(in, k + 1);
    if (!verify_need_array(in, x, "operand", err) || !verify_need_array(in, idx, "scatter indices", err) ||
        !verify_need_array(in, upd, "updates", err))
        return false;
    if (k == 1 && !verify_same_shape(out, x))
        return verify_fail(in, err, "result %s does not match operand %s", verify_shape_text(out),
                           verify_shape_text(x));
    return check_dim_list(in, IR_LIST_UPDATE_WINDOW_DIMS, upd, err) &&
           check_dim_list(in, IR_LIST_INSERTED_WINDOW_DIMS, x, err) &&
           check_dim_list(in, IR_LIST_SCATTER_DIMS_TO_OPERAND_DIMS, x, err) &&
           check_dim_list(in, IR_LIST_INPUT_BATCHING_DIMS, x, err) &&
           check_dim_list(in, IR_LIST_SCATTER_INDICES_BATCHING_DIMS, idx, err) &&
           check_index_vector_dim(in, idx, err) && verify_callee_arity(in, IR_COMP_TO_APPLY, 2 * k, false, err);
}

static bool is_s32_scalar(const IrShape *s)
{
    return verify_is_scalar(s) && s->type == IR_TYPE_S32;
}

/* get-dimension-size(x), dimensions={d} -> s32[] (InferGetDimensionSizeShape). */
static bool check_get_dimension_size(const IrInstr *in, const IrShape *out, Error *err)
{
    int64_t d = 0;
    const IrShape *x = verify_operand_shape(in, 0);
    if (!verify_need_array(in, x, "operand", err) || !verify_single_dim(in, x, &d, err))
        return false;
    if (!is_s32_scalar(out))
        return verify_fail(in, err, "result %s must be s32[]", verify_shape_text(out));
    if (x->dims[d] > INT32_MAX)
        return verify_fail(in, err, "dimension %lld of %s does not fit in s32", (long long)d, verify_shape_text(x));
    return true;
}

/* set-dimension-size(x, s32[] size), dimensions={d}: x's shape. */
static bool check_set_dimension_size(const IrInstr *in, const IrShape *out, Error *err)
{
    int64_t d = 0;
    const IrShape *x = verify_operand_shape(in, 0), *n = verify_operand_shape(in, 1);
    if (!verify_need_array(in, x, "operand", err) || !verify_single_dim(in, x, &d, err))
        return false;
    if (!is_s32_scalar(n))
        return verify_fail(in, err, "size %s must be s32[]", verify_shape_text(n));
    if (!ir_shape_is_array(out) || out->type != x->type || !same_dims(out, x))
        return verify_fail(in, err, "result %s does not match operand %s", verify_shape_text(out),
                           verify_shape_text(x));
    return true;
}

/* dynamic-reshape(x, s32[] size...): one size per result dimension, x's
 * element type and element count, bounded dims counted at their bound
 * (XLA's verifier). */
static bool check_dynamic_reshape(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *x = verify_operand_shape(in, 0);
    if (!verify_need_array(in, x, "operand", err) || !verify_need_array(in, out, "result", err) ||
        !verify_need_same_type(in, out, x, err))
        return false;
    if (in->n_operands != out->rank + 1)
        return verify_fail(in, err, "result %s needs %d sizes, got %d", verify_shape_text(out), out->rank,
                           in->n_operands - 1);
    for (int i = 1; i < in->n_operands; i++)
        if (!is_s32_scalar(verify_operand_shape(in, i)))
            return verify_fail(in, err, "size %d is %s, not s32[]", i - 1,
                               verify_shape_text(verify_operand_shape(in, i)));
    if (!has_unbounded_dim(x) && !has_unbounded_dim(out) && ir_shape_elements(x) != ir_shape_elements(out))
        return verify_fail(in, err, "result %s does not have the %lld elements of operand %s", verify_shape_text(out),
                           (long long)ir_shape_elements(x), verify_shape_text(x));
    return true;
}

/* ------------------------------------------------------------------ */
/* Random numbers                                                       */

/* rng(a, b), distribution=rng_uniform|rng_normal: scalars of the result's
 * type; uniform over floats, integers and pred, normal over floats
 * (XLA's ShapeVerifier::HandleRng). */
static bool check_rng(const IrInstr *in, const IrShape *out, Error *err)
{
    if (in->n_operands != 2)
        return verify_fail(in, err, "expects 2 operands (a, b), got %d", in->n_operands);
    const char *dist = in->info->words[IR_WORD_DISTRIBUTION];
    if (!dist)
        return verify_fail(in, err, "missing distribution");
    bool normal = strcmp(dist, "rng_normal") == 0;
    if (!normal && strcmp(dist, "rng_uniform") != 0)
        return verify_fail(in, err, "distribution=%s must be rng_uniform or rng_normal", dist);
    if (!verify_need_array(in, out, "result", err))
        return false;
    for (int i = 0; i < 2; i++)
        if (!verify_is_scalar(verify_operand_shape(in, i)) || verify_operand_shape(in, i)->type != out->type)
            return verify_fail(in, err, "operand %s must be a scalar of the result's type %s",
                               verify_shape_text(verify_operand_shape(in, i)), ir_type_name(out->type));
    IrElemType t = out->type;
    if (normal && !ir_type_is_float(t))
        return verify_fail(in, err, "rng_normal needs a floating-point type, not %s", ir_type_name(t));
    if (!normal && !ir_type_is_float(t) && !ir_type_is_int(t) && t != IR_TYPE_PRED)
        return verify_fail(in, err, "rng_uniform needs a floating-point, integer or pred type, not %s",
                           ir_type_name(t));
    return true;
}

/* rng-bit-generator(state), algorithm=rng_default|rng_three_fry|rng_philox
 * -> (new state, bits): a u64[2] state for three fry, u64[2] or u64[3] for
 * philox (what XLA's RngBitGeneratorExpander can run), the new state
 * shaped like it, bits of an integer or float type.  XLA's verifier lets a
 * non-tuple result through; so does this one (it cannot run). */
static bool check_rng_bit_generator(const IrInstr *in, const IrShape *out, Error *err)
{
    const char *alg = ir_raw_attr_get(in, "algorithm");
    if (!alg)
        return verify_fail(in, err, "missing algorithm");
    bool three_fry = strcmp(alg, "rng_three_fry") == 0;
    if (!three_fry && strcmp(alg, "rng_philox") != 0 && strcmp(alg, "rng_default") != 0)
        return verify_fail(in, err, "algorithm=%s must be rng_default, rng_three_fry or rng_philox", alg);
    const IrShape *st = verify_operand_shape(in, 0);
    bool ok = ir_shape_is_array(st) && st->type == IR_TYPE_U64 && st->rank == 1 && !verify_has_dynamic_dim(st) &&
              (st->dims[0] == 2 || (!three_fry && st->dims[0] == 3));
    if (!ok)
        return verify_fail(in, err, "state %s must be u64[2]%s", verify_shape_text(st),
                           three_fry ? " for rng_three_fry" : " or u64[3]");
    if (!ir_shape_is_tuple(out))
        return true;
    if (out->n_elements != 2)
        return verify_fail(in, err, "result %s must be a tuple (new state, bits)", verify_shape_text(out));
    if (!verify_same_shape(out->elements[0], st))
        return verify_fail(in, err, "new state %s does not match state %s", verify_shape_text(out->elements[0]),
                           verify_shape_text(st));
    const IrShape *bits = out->elements[1];
    if (!ir_shape_is_array(bits) || (!ir_type_is_int(bits->type) && !ir_type_is_float(bits->type)))
        return verify_fail(in, err, "bits %s must be an integer or floating-point array", verify_shape_text(bits));
    return true;
}

/* rng-get-and-update-state, delta=N -> u64[2]. */
static bool check_rng_get_and_update_state(const IrInstr *in, const IrShape *out, Error *err)
{
    const char *delta = ir_raw_attr_get(in, "delta");
    char *end = NULL;
    if (!delta)
        return verify_fail(in, err, "missing delta");
    (void)strtoll(delta, &end, 10);
    if (end == delta || *end)
        return verify_fail(in, err, "delta=%s must be an integer", delta);
    if (!ir_shape_is_array(out) || out->type != IR_TYPE_U64 || out->rank != 1 || out->dims[0] != 2)
        return verify_fail(in, err, "result %s must be u64[2]", verify_shape_text(out));
    return true;
}

/* ------------------------------------------------------------------ */
/* Reductions, dot, sort                                                */

/* Result i of reduce: input dims without the reduced ones, init's type. */
static bool check_reduce_result(const IrInstr *in, const IrShape *res, const IrShape *x, const IrShape *init,
                                Error *err)
{
    const IrIntList *red = &in->lists[IR_LIST_DIMENSIONS];
    bool ok = ir_shape_is_array(res) && res->rank == x->rank - red->n && res->type == init->type;
    for (int d = 0, j = 0; ok && d < x->rank; d++)
        if (!is_listed(red, d))
            ok = verify_dim_eq(res->dims[j++], x->dims[d]);
    if (!ok)
        return verify_fail(in, err, "result %s must be %s without dimensions=%s, of type %s", verify_shape_text(res),
                           verify_shape_text(x), verify_list_text(red), ir_type_name(init->type));
    return true;
}

static bool check_reduce(const IrInstr *in, const IrShape *out, Error *err)
{
    int n = in->n_operands;
    if (n < 2 || n % 2)
        return verify_fail(in, err, "expects inputs then as many init values, got %d operands", n);
    int k = n / 2;
    const IrShape *x = verify_operand_shape(in, 0);
    if (!verify_need_array(in, x, "input", err) || !verify_callee_arity(in, IR_COMP_TO_APPLY, 2 * k, false, err) ||
        !check_dim_list(in, IR_LIST_DIMENSIONS, x, err))
        return false;
    for (int i = 0; i < k; i++) {
        const IrShape *xi = verify_operand_shape(in, i), *init = verify_operand_shape(in, k + i);
        if (!verify_need_array(in, xi, "input", err))
            return false;
        if (!same_dims(xi, x))
            return verify_fail(in, err, "input %s does not match input %s", verify_shape_text(xi),
                               verify_shape_text(x));
        if (!verify_is_scalar(init))
            return verify_fail(in, err, "init value %s must be a scalar", verify_shape_text(init));
        const IrShape *res = verify_result_part(in, out, k, i, err);
        if (!res || !check_reduce_result(in, res, xi, init, err))
            return false;
    }
    return true;
}

static bool check_reduce_window(const IrInstr *in, const IrShape *out, Error *err)
{
    (void)out;
    int n = in->n_operands;
    if (n < 2 || n % 2)
        return verify_fail(in, err, "expects inputs then as many init values, got %d operands", n);
    const IrShape *x = verify_operand_shape(in, 0);
    if (!verify_need_array(in, x, "input", err))
        return false;
    if (in->info->has_window && in->info->n_window != x->rank)
        return verify_fail(in, err, "window has %d dimensions, %s has %d", in->info->n_window, verify_shape_text(x),
                           x->rank);
    return verify_callee_arity(in, IR_COMP_TO_APPLY, n, false, err);
}

/* A computation attribute taking two scalars of type t and returning a
 * scalar of type ret. */
static bool check_scalar_binary_callee(const IrInstr *in, IrCompAttr which, IrElemType t, IrElemType ret,
                                       Error *err)
{
    if (!verify_callee_arity(in, which, 2, true, err))
        return false;
    const IrComputation *c = in->info->comps[which];
    const char *attr = ir_comp_attr_name[which];
    for (int k = 0; c->params && k < 2; k++)
        if (c->params[k] && c->params[k]->shape->type != t)
            return verify_fail(in, err, "%s=%s parameter %d is %s, expected %s[]", attr, c->name, k,
                               verify_shape_text(c->params[k]->shape), ir_type_name(t));
    if (c->root && (!verify_is_scalar(c->root->shape) || c->root->shape->type != ret))
        return verify_fail(in, err, "%s=%s returns %s, expected %s[]", attr, c->name, verify_shape_text(c->root->shape),
                           ir_type_name(ret));
    return true;
}

/* Windows that fit the padded, dilated base along one dim (-1: unknown). */
static int64_t window_out_dim(int64_t in, const IrWindowDim *w)
{
    if (in < 0 || (in > 0 && in - 1 > (INT64_MAX / 4) / w->lhs_dilate))
        return -1;
    int64_t base = in == 0 ? 0 : (in - 1) * w->lhs_dilate + 1;
    int64_t padded = base + w->pad_lo + w->pad_hi;
    int64_t span = (w->size - 1) * w->rhs_dilate + 1;
    return padded < span ? 0 : (padded - span) / w->stride + 1;
}

/* "t[d0,d1,...]" into buf (TEXT_BYTES). */
static const char *dims_text(char *buf, IrElemType t, int rank, const int64_t *dims)
{
    size_t n = (size_t)snprintf(buf, TEXT_BYTES, "%s[", t == IR_TYPE_INVALID ? "" : ir_type_name(t));
    for (int d = 0; d < rank && n < TEXT_BYTES; d++)
        n += (size_t)snprintf(buf + n, TEXT_BYTES - n, "%s%lld", d ? "," : "", (long long)dims[d]);
    if (n < TEXT_BYTES)
        snprintf(buf + n, TEXT_BYTES - n, "]");
    return buf;
}

/* The window has one valid dimension per dimension of x. */
static bool check_window(const IrInstr *in, const IrShape *x, Error *err)
{
    const IrInstrInfo *info = in->info;
    if (x->rank > 0 && !info->has_window)
        return verify_fail(in, err, "missing window for %s", verify_shape_text(x));
    if (info->n_window != x->rank)
        return verify_fail(in, err, "window has %d dimensions, %s has %d", info->n_window, verify_shape_text(x),
                           x->rank);
    for (int d = 0; d < x->rank; d++) {
        const IrWindowDim *w = &info->window[d];
        const int64_t lim = INT32_MAX;
        if (w->size < 1 || w->stride < 1 || w->lhs_dilate < 1 || w->rhs_dilate < 1 || w->size > lim ||
            w->stride > lim || w->lhs_dilate > lim || w->rhs_dilate > lim || w->pad_lo < -lim || w->pad_lo > lim ||
            w->pad_hi < -lim || w->pad_hi > lim)
            return verify_fail(in, err, "window dimension %d must have size, stride and dilations in [1, 2^31) "
                               "and padding within 2^31", d);
    }
    return true;
}

/* select-and-scatter(operand, source, init): source has the shape of the
 * windows over operand, init is a scalar of operand's type, select is
 * (T, T) -> pred, scatter (T, T) -> T; the result is operand's shape. */
static bool check_select_and_scatter(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *x = verify_operand_shape(in, 0), *src = verify_operand_shape(in, 1);
    const IrShape *init = verify_operand_shape(in, 2);
    if (!verify_need_array(in, x, "operand", err) || !verify_need_array(in, src, "source", err) ||
        !check_window(in, x, err))
        return false;
    int64_t want[IR_MAX_RANK];
    bool ok = src->type == x->type && src->rank == x->rank;
    for (int d = 0; d < x->rank && d < IR_MAX_RANK; d++) {
        want[d] = window_out_dim(x->dims[d], &in->info->window[d]);
        ok = ok && verify_dim_eq(src->dims[d], want[d]);
    }
    char buf[TEXT_BYTES];
    if (!ok)
        return verify_fail(in, err, "source %s must be %s, one element per window over %s", verify_shape_text(src),
                           dims_text(buf, x->type, x->rank < IR_MAX_RANK ? x->rank : IR_MAX_RANK, want),
                           verify_shape_text(x));
    if (!verify_is_scalar(init) || init->type != x->type)
        return verify_fail(in, err, "init value %s must be %s[]", verify_shape_text(init), ir_type_name(x->type));
    if (!verify_same_shape(out, x))
        return verify_fail(in, err, "result %s does not match operand %s", verify_shape_text(out),
                           verify_shape_text(x));
    return check_scalar_binary_callee(in, IR_COMP_SELECT, x->type, IR_TYPE_PRED, err) &&
           check_scalar_binary_callee(in, IR_COMP_SCATTER, x->type, x->type, err);
}

/* Checks lhs dim a against rhs dim b for one batch or contracting pair. */
static bool check_dot_pair(const IrInstr *in, const IrShape *l, int64_t a, const IrShape *r, int64_t b,
                           const char *what, Error *err)
{
    if (verify_dim_eq(l->dims[a], r->dims[b]))
        return true;
    return verify_fail(in, err, "%s dimension %lld of %s (%lld) and %lld of %s (%lld) differ", what, (long long)a,
                       verify_shape_text(l), (long long)l->dims[a], (long long)b, verify_shape_text(r),
                       (long long)r->dims[b]);
}

static bool check_dot_dims(const IrInstr *in, const IrShape *l, const IrShape *r, Error *err)
{
    const IrIntList *lb = &in->lists[IR_LIST_LHS_BATCH_DIMS], *lc = &in->lists[IR_LIST_LHS_CONTRACTING_DIMS];
    const IrIntList *rb = &in->lists[IR_LIST_RHS_BATCH_DIMS], *rc = &in->lists[IR_LIST_RHS_CONTRACTING_DIMS];
    if (lb->n != rb->n)
        return verify_fail(in, err, "lhs_batch_dims=%s and rhs_batch_dims=%s differ in length", verify_list_text(lb),
                           verify_list_text(rb));
    if (lc->n != rc->n)
        return verify_fail(in, err, "lhs_contracting_dims=%s and rhs_contracting_dims=%s differ in length",
                           verify_list_text(lc), verify_list_text(rc));
    if (!check_dim_list(in, IR_LIST_LHS_BATCH_DIMS, l, err) || !check_dim_list(in, IR_LIST_LHS_CONTRACTING_DIMS, l, err) ||
        !check_dim_list(in, IR_LIST_RHS_BATCH_DIMS, r, err) || !check_dim_list(in, IR_LIST_RHS_CONTRACTING_DIMS, r, err))
        return false;
    for (int i = 0; i < lb->n; i++)
        if (is_listed(lc, lb->v[i]) || is_listed(rc, rb->v[i]))
            return verify_fail(in, err, "batch dimension %lld is also a contracting dimension", (long long)lb->v[i]);
    for (int i = 0; i < lb->n; i++)
        if (!check_dot_pair(in, l, lb->v[i], r, rb->v[i], "batch", err))
            return false;
    for (int i = 0; i < lc->n; i++)
        if (!check_dot_pair(in, l, lc->v[i], r, rc->v[i], "contracting", err))
            return false;
    return true;
}

/* The next result dim must be want; *j counts result dims checked so far. */
static bool dot_result_dim_ok(const IrShape *out, int *j, int64_t want)
{
    int k = (*j)++;
    return k < out->rank && verify_dim_eq(out->dims[k], want);
}

/* Result dims: batch (lhs order), lhs free (ascending), rhs free (ascending). */
static bool check_dot(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *l = verify_operand_shape(in, 0), *r = verify_operand_shape(in, 1);
    if (!verify_need_array(in, l, "lhs", err) || !verify_need_array(in, r, "rhs", err) ||
        !verify_need_array(in, out, "result", err) || !check_dot_dims(in, l, r, err))
        return false;
    const IrIntList *lb = &in->lists[IR_LIST_LHS_BATCH_DIMS], *lc = &in->lists[IR_LIST_LHS_CONTRACTING_DIMS];
    const IrIntList *rb = &in->lists[IR_LIST_RHS_BATCH_DIMS], *rc = &in->lists[IR_LIST_RHS_CONTRACTING_DIMS];
    int j = 0;
    bool ok = true;
    for (int i = 0; ok && i < lb->n; i++)
        ok = dot_result_dim_ok(out, &j, l->dims[lb->v[i]]);
    for (int d = 0; ok && d < l->rank; d++)
        if (!is_listed(lb, d) && !is_listed(lc, d))
            ok = dot_result_dim_ok(out, &j, l->dims[d]);
    for (int d = 0; ok && d < r->rank; d++)
        if (!is_listed(rb, d) && !is_listed(rc, d))
            ok = dot_result_dim_ok(out, &j, r->dims[d]);
    if (!ok || j != out->rank)
        return verify_fail(in, err, "result %s does not match %s x %s (batch, lhs free, rhs free dimensions)",
                           verify_shape_text(out), verify_shape_text(l), verify_shape_text(r));
    return true;
}

/* ---- Convolution: XLA's InferConvolveShape */

/* feature_group_count / batch_group_count: absent means 1, else positive. */
static bool conv_group_count(const IrInstr *in, IrIntAttr which, int64_t *v, Error *err)
{
    IrOptInt a = in->ints[which];
    *v = a.present ? a.v : 1;
    if (*v >= 1)
        return true;
    return verify_fail(in, err, "%s=%lld must be positive", ir_int_attr_name[which], (long long)a.v);
}

/* *out = a + b; false if that overflows. */
static bool add_ok(int64_t a, int64_t b, int64_t *out)
{
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        return false;
    *out = a + b;
    return true;
}

/* XLA's DilatedBound: n elements with dilation - 1 holes between them. */
static bool dilated_ok(int64_t n, int64_t dilation, int64_t *out)
{
    if (n > 1 && n - 1 > (INT64_MAX - 1) / dilation)
        return false;
    *out = n == 0 ? 0 : (n - 1) * dilation + 1;
    return true;
}

/* Output size of spatial dimension k over an input of n (XLA's
 * StridedBound of the padded, dilated input and the dilated window). */
static bool conv_window_dim(const IrInstr *in, int k, int64_t n, int64_t *out, Error *err)
{
    const IrWindowDim *w = &in->info->window[k];
    if (w->size < 1 || w->stride < 1 || w->lhs_dilate < 1 || w->rhs_dilate < 1)
        return verify_fail(in, err,
                           "window dimension %d: size, stride and dilations must be positive (size=%lld stride=%lld "
                           "lhs_dilate=%lld rhs_dilate=%lld)", k, (long long)w->size, (long long)w->stride,
                           (long long)w->lhs_dilate, (long long)w->rhs_dilate);
    int64_t base, window, padded;
    if (!dilated_ok(n, w->lhs_dilate, &base) || !dilated_ok(w->size, w->rhs_dilate, &window) ||
        !add_ok(w->pad_lo, base, &padded) || !add_ok(padded, w->pad_hi, &padded))
        return verify_fail(in, err, "window dimension %d: the padded, dilated size overflows", k);
    /* A negative padded size (negative padding beyond the input) gives no
     * window, as XLA's StridedBound does: XLA accepts and runs it. */
    *out = padded < window ? 0 : (padded - window) / w->stride + 1;
    return true;
}

/* Operand and result ranks, and the window, fit the spatial count of dim_labels. */
static bool check_conv_ranks(const IrInstr *in, const IrShape *l, const IrShape *r, const IrShape *out,
                             const IrConvDims *d, Error *err)
{
    const IrShape *s[3] = { l, r, out };
    static const char *const what[3] = { "lhs", "rhs", "result" };
    for (int i = 0; i < 3; i++)
        if (s[i]->rank != d->n_spatial + 2)
            return verify_fail(in, err, "%s %s must have rank %d: dim_labels name %d spatial dimensions", what[i],
                               verify_shape_text(s[i]), d->n_spatial + 2, d->n_spatial);
    if (!in->info->has_window && d->n_spatial > 0)
        return verify_fail(in, err, "window= is missing: dim_labels name %d spatial dimensions", d->n_spatial);
    if (in->info->n_window != d->n_spatial)
        return verify_fail(in, err, "window has %d dimension%s, dim_labels name %d spatial dimensions",
                           in->info->n_window, in->info->n_window == 1 ? "" : "s", d->n_spatial);
    return true;
}

/* Operand and result element types: real or complex throughout, and an
 * integer convolution's result no narrower than its operands (XLA's
 * MaybeUpcast of the preferred element type). */
static bool check_conv_types(const IrInstr *in, const IrShape *l, const IrShape *r, const IrShape *out, Error *err)
{
    bool cl = ir_type_is_complex(l->type), cr = ir_type_is_complex(r->type), co = ir_type_is_complex(out->type);
    if (cl != cr || cl != co)
        return verify_fail(in, err, "element types %s x %s -> %s mix complex and real", ir_type_name(l->type),
                           ir_type_name(r->type), ir_type_name(out->type));
    int bits = ir_type_info[l->type].bits > ir_type_info[r->type].bits ? ir_type_info[l->type].bits
                                                                         : ir_type_info[r->type].bits;
    if (!ir_type_is_float(l->type) && !ir_type_is_float(r->type) && !cl && ir_type_info[out->type].bits < bits)
        return verify_fail(in, err, "result type %s is narrower than the operands %s x %s", ir_type_name(out->type),
                           ir_type_name(l->type), ir_type_name(r->type));
    return true;
}

/* Features: input = kernel input x feature_group_count; the kernel's output
 * features and the input batch split evenly into the groups. */
static bool check_conv_groups(const IrInstr *in, const IrShape *l, const IrShape *r, const IrConvDims *d,
                              int64_t fgc, int64_t bgc, Error *err)
{
    int64_t c = l->dims[d->input_feature], ki = r->dims[d->kernel_input_feature];
    int64_t ko = r->dims[d->kernel_output_feature], nb = l->dims[d->input_batch];
    if (c >= 0 && ki >= 0 && (c % fgc != 0 || c / fgc != ki))
        return verify_fail(in, err, "input feature dimension %lld of %s (%lld) must be feature_group_count=%lld x the "
                           "kernel input feature dimension %lld of %s (%lld)", (long long)d->input_feature,
                           verify_shape_text(l), (long long)c, (long long)fgc, (long long)d->kernel_input_feature,
                           verify_shape_text(r), (long long)ki);
    if (ko >= 0 && (ko % fgc != 0 || ko % bgc != 0))
        return verify_fail(in, err, "kernel output feature dimension %lld of %s (%lld) must be divisible by "
                           "feature_group_count=%lld and batch_group_count=%lld", (long long)d->kernel_output_feature,
                           verify_shape_text(r), (long long)ko, (long long)fgc, (long long)bgc);
    if (nb >= 0 && nb % bgc != 0)
        return verify_fail(in, err,
                           "input batch dimension %lld of %s (%lld) must be divisible by batch_group_count=%lld",
                           (long long)d->input_batch, verify_shape_text(l), (long long)nb, (long long)bgc);
    return true;
}

/* The result dims: input batch / batch_group_count, the kernel's output
 * features, and each spatial size through the window. */
static bool check_conv_result(const IrInstr *in, const IrShape *l, const IrShape *r, const IrShape *out,
                              const IrConvDims *d, int64_t bgc, Error *err)
{
    int64_t want[IR_MAX_RANK];
    int64_t nb = l->dims[d->input_batch];
    want[d->output_batch] = nb < 0 ? -1 : nb / bgc;
    want[d->output_feature] = r->dims[d->kernel_output_feature];
    for (int k = 0; k < d->n_spatial; k++) {
        int64_t ks = r->dims[d->kernel_spatial[k]], n = l->dims[d->input_spatial[k]];
        if (ks >= 0 && ks != in->info->window[k].size)
            return verify_fail(in, err,
                               "window size %lld of spatial dimension %d differs from the kernel's (dimension %lld "
                               "of %s)", (long long)in->info->window[k].size, k, (long long)d->kernel_spatial[k],
                               verify_shape_text(r));
        want[d->output_spatial[k]] = -1;
        if (n >= 0 && !conv_window_dim(in, k, n, &want[d->output_spatial[k]], err))
            return false;
    }
    char buf[TEXT_BYTES];
    for (int i = 0; i < out->rank; i++)
        if (!verify_dim_eq(out->dims[i], want[i]))
            return verify_fail(in, err,
                               "result %s must have dimensions %s (input batch / batch_group_count, kernel output "
                               "features, the window over the input)", verify_shape_text(out),
                               dims_text(buf, IR_TYPE_INVALID, out->rank, want));
    return true;
}

static bool check_convolution(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *l = verify_operand_shape(in, 0), *r = verify_operand_shape(in, 1);
    const IrConvDims *d = in->info->conv_dims;
    int64_t fgc, bgc;
    if (!verify_need_array(in, l, "lhs", err) || !verify_need_array(in, r, "rhs", err) ||
        !verify_need_array(in, out, "result", err))
        return false;
    if (!d)
        return verify_fail(in, err, "dim_labels= is missing");
    if (!conv_group_count(in, IR_INT_FEATURE_GROUP_COUNT, &fgc, err) ||
        !conv_group_count(in, IR_INT_BATCH_GROUP_COUNT, &bgc, err))
        return false;
    if (fgc > 1 && bgc > 1)
        return verify_fail(in, err, "feature_group_count=%lld and batch_group_count=%lld cannot both exceed 1",
                           (long long)fgc, (long long)bgc);
    return check_conv_ranks(in, l, r, out, d, err) && check_conv_types(in, l, r, out, err) &&
           check_conv_groups(in, l, r, d, fgc, bgc, err) && check_conv_result(in, l, r, out, d, bgc, err);
}

static bool check_sort(const IrInstr *in, const IrShape *out, Error *err)
{
    int64_t d = 0;
    int n = in->n_operands;
    if (n < 1)
        return verify_fail(in, err, "expects at least one operand");
    const IrShape *x = verify_operand_shape(in, 0);
    if (!verify_need_array(in, x, "operand", err) || !verify_single_dim(in, x, &d, err))
        return false;
    for (int i = 1; i < n; i++)
        if (!ir_shape_is_array(verify_operand_shape(in, i)) || !same_dims(verify_operand_shape(in, i), x))
            return verify_fail(in, err, "operand %s does not match %s", verify_shape_text(verify_operand_shape(in, i)),
                               verify_shape_text(x));
    if (!verify_operands_match(in, out))
        return verify_fail(in, err, "result %s does not match the operands", verify_shape_text(out));
    return verify_callee_arity(in, IR_COMP_TO_APPLY, 2 * n, true, err);
}

static bool check_map(const IrInstr *in, const IrShape *out, Error *err)
{
    if (in->n_operands < 1)
        return verify_fail(in, err, "expects at least one operand");
    const IrShape *x = verify_operand_shape(in, 0);
    if (!verify_need_array(in, x, "operand", err) || !verify_need_array(in, out, "result", err))
        return false;
    if (!same_dims(out, x))
        return verify_fail(in, err, "result %s does not match operand %s", verify_shape_text(out),
                           verify_shape_text(x));
    return verify_callee_arity(in, IR_COMP_TO_APPLY, in->n_operands, true, err);
}

/* ------------------------------------------------------------------ */
/* Linear algebra and FFT (XLA's shape inference)                       */

/* A raw true/false attribute (cholesky's lower, triangular-solve's
 * left_side, lower, unit_diagonal); absent means false. */
static bool check_raw_bool(const IrInstr *in, const char *name, Error *err)
{
    const char *v = ir_raw_attr_get(in, name);
    if (!v || strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
        return true;
    return verify_fail(in, err, "%s=%s must be true or false", name, v);
}

/* a is a batch of square matrices of a floating-point or complex type. */
static bool need_square_matrices(const IrInstr *in, const IrShape *a, const char *what, Error *err)
{
    if (!verify_need_array(in, a, what, err))
        return false;
    if (!ir_type_is_float(a->type) && !ir_type_is_complex(a->type))
        return verify_fail(in, err, "%s %s must have a floating-point or complex element type", what,
                           verify_shape_text(a));
    if (a->rank < 2)
        return verify_fail(in, err, "%s %s must have at least 2 dimensions", what, verify_shape_text(a));
    if (!verify_dim_eq(a->dims[a->rank - 2], a->dims[a->rank - 1]))
        return verify_fail(in, err, "%s %s must be square in its last two dimensions", what, verify_shape_text(a));
    return true;
}

static bool check_cholesky(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *a = verify_operand_shape(in, 0);
    if (!need_square_matrices(in, a, "operand", err) || !check_raw_bool(in, "lower", err))
        return false;
    if (!verify_same_shape(out, a))
        return verify_fail(in, err, "result %s does not match operand %s", verify_shape_text(out),
                           verify_shape_text(a));
    return true;
}

static bool check_transpose_a(const IrInstr *in, Error *err)
{
    const char *v = ir_raw_attr_get(in, "transpose_a");
    if (!v)
        return verify_fail(in, err, "missing transpose_a (NO_TRANSPOSE, TRANSPOSE or ADJOINT)");
    if (strcmp(v, "NO_TRANSPOSE") != 0 && strcmp(v, "TRANSPOSE") != 0 && strcmp(v, "ADJOINT") != 0)
        return verify_fail(in, err, "transpose_a=%s must be NO_TRANSPOSE, TRANSPOSE or ADJOINT", v);
    return true;
}

/* b's batch dims are a's; a's order is b's second-last (left_side) or last dim. */
static bool check_solve_dims(const IrInstr *in, const IrShape *a, const IrShape *b, Error *err)
{
    if (b->rank != a->rank)
        return verify_fail(in, err, "b %s must have as many dimensions as a %s", verify_shape_text(b),
                           verify_shape_text(a));
    for (int d = 0; d < a->rank - 2; d++)
        if (!verify_dim_eq(a->dims[d], b->dims[d]))
            return verify_fail(in, err, "batch dimensions of a %s and b %s differ", verify_shape_text(a),
                               verify_shape_text(b));
    const char *v = ir_raw_attr_get(in, "left_side");
    bool left = v && strcmp(v, "true") == 0;
    int shared = b->rank - (left ? 2 : 1);
    if (!verify_dim_eq(a->dims[a->rank - 1], b->dims[shared]))
        return verify_fail(in, err, "dimension %d of b %s must equal the order of a %s (left_side=%s)", shared,
                           verify_shape_text(b), verify_shape_text(a), left ? "true" : "false");
    return true;
}

static bool check_triangular_solve(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *a = verify_operand_shape(in, 0), *b = verify_operand_shape(in, 1);
    if (!need_square_matrices(in, a, "a", err) || !verify_need_array(in, b, "b", err) ||
        !verify_need_same_type(in, a, b, err))
        return false;
    if (!check_raw_bool(in, "left_side", err) || !check_raw_bool(in, "lower", err) ||
        !check_raw_bool(in, "unit_diagonal", err) || !check_transpose_a(in, err) ||
        !check_solve_dims(in, a, b, err))
        return false;
    if (!verify_same_shape(out, b))
        return verify_fail(in, err, "result %s does not match b %s", verify_shape_text(out), verify_shape_text(b));
    return true;
}

typedef enum FftKind { FFT_C2C, FFT_R2C, FFT_C2R } FftKind;

/* fft_type: FFT and IFFT are complex to complex, RFFT real to complex,
 * IRFFT complex to real.  false (reported) for anything else. */
static bool fft_kind(const IrInstr *in, FftKind *k, Error *err)
{
    const char *t = in->info->words[IR_WORD_FFT_TYPE];
    if (!t)
        return verify_fail(in, err, "missing fft_type (FFT, IFFT, RFFT or IRFFT)");
    if (strcmp(t, "FFT") == 0 || strcmp(t, "IFFT") == 0)
        *k = FFT_C2C;
    else if (strcmp(t, "RFFT") == 0)
        *k = FFT_R2C;
    else if (strcmp(t, "IRFFT") == 0)
        *k = FFT_C2R;
    else
        return verify_fail(in, err, "fft_type=%s must be FFT, IFFT, RFFT or IRFFT", t);
    return true;
}

/* The element types fft_type asks for: complex in and out of one width
 * (FFT, IFFT), f32/f64 to c64/c128 (RFFT), c64/c128 to f32/f64 (IRFFT). */
static bool check_fft_types(const IrInstr *in, FftKind k, const IrShape *x, const IrShape *out, Error *err)
{
    bool real_in = x->type == IR_TYPE_F32 || x->type == IR_TYPE_F64;
    if (k == FFT_R2C ? !real_in : !ir_type_is_complex(x->type))
        return verify_fail(in, err, "operand %s must be %s for fft_type=%s", verify_shape_text(x),
                           k == FFT_R2C ? "f32 or f64" : "complex", in->info->words[IR_WORD_FFT_TYPE]);
    bool wide = x->type == IR_TYPE_F64 || x->type == IR_TYPE_C128;
    IrElemType want = k == FFT_C2C ? x->type
                    : k == FFT_R2C ? (wide ? IR_TYPE_C128 : IR_TYPE_C64) : (wide ? IR_TYPE_F64 : IR_TYPE_F32);
    if (out->type != want)
        return verify_fail(in, err, "result %s must have element type %s", verify_shape_text(out), ir_type_name(want));
    return true;
}

/* The length of the halved (last) dimension for a transform length n:
 * n/2+1, but a zero length keeps its zero. */
static int64_t fft_half(int64_t n)
{
    return n ? n / 2 + 1 : 0;
}

/* The transformed dims are the last fft_length entries of the operand and
 * the result: for RFFT and IRFFT equal to fft_length, but for the last one,
 * which is n/2+1 on the complex side.  FFT and IFFT keep the operand's
 * shape, whose transformed dims may differ from fft_length (XLA's shape
 * inference does not compare them, and its evaluator cuts or pads with
 * zeros, as eval_fft.c does).  IRFFT with n = 0 takes an operand dim of 0
 * or 1, as XLA does. */
static bool check_fft_dims(const IrInstr *in, FftKind k, const IrShape *x, const IrShape *out, Error *err)
{
    const IrIntList *len = &in->lists[IR_LIST_FFT_LENGTH];
    int first = x->rank - len->n;
    if (out->rank != x->rank)
        return verify_fail(in, err, "result %s must have as many dimensions as operand %s", verify_shape_text(out),
                           verify_shape_text(x));
    for (int d = 0; d < x->rank; d++) {
        int64_t n = d < first || k == FFT_C2C ? x->dims[d] : len->v[d - first];
        bool last = d == x->rank - 1 && d >= first;
        int64_t want_in = last && k == FFT_C2R ? fft_half(n) : n;
        int64_t want_out = last && k == FFT_R2C ? fft_half(n) : n;
        bool in_ok = verify_dim_eq(x->dims[d], want_in) || (last && k == FFT_C2R && n == 0 && x->dims[d] == 1);
        if (!in_ok)
            return verify_fail(in, err, "operand %s does not match fft_length=%s: dimension %d must be %lld",
                               verify_shape_text(x), verify_list_text(len), d, (long long)want_in);
        if (!verify_dim_eq(out->dims[d], want_out))
            return verify_fail(in, err,
                               "result %s does not match operand %s and fft_length=%s: dimension %d must be %lld",
                               verify_shape_text(out), verify_shape_text(x), verify_list_text(len), d,
                               (long long)want_out);
    }
    return true;
}

static bool check_fft(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *x = verify_operand_shape(in, 0);
    const IrIntList *len = &in->lists[IR_LIST_FFT_LENGTH];
    FftKind k = FFT_C2C;
    if (!verify_need_array(in, x, "operand", err) || !verify_need_array(in, out, "result", err) ||
        !fft_kind(in, &k, err))
        return false;
    if (len->n < 1 || len->n > 3)
        return verify_fail(in, err, "fft_length=%s must have 1 to 3 entries", verify_list_text(len));
    if (x->rank < len->n)
        return verify_fail(in, err, "operand %s has fewer dimensions than fft_length=%s", verify_shape_text(x),
                           verify_list_text(len));
    for (int i = 0; i < len->n; i++)
        if (len->v[i] < 0)
            return verify_fail(in, err, "fft_length=%s has a negative entry", verify_list_text(len));
    return check_fft_types(in, k, x, out, err) && check_fft_dims(in, k, x, out, err);
}

/* ------------------------------------------------------------------ */
/* Batch norm, topk                                                     */

/* feature_index= names a dimension of x and epsilon= is a float; *features
 * gets the size of the feature dimension. */
static bool check_batch_norm_attrs(const IrInstr *in, const IrShape *x, int64_t *features, Error *err)
{
    IrOptInt fi = in->ints[IR_INT_FEATURE_INDEX];
    if (!verify_need_array(in, x, "operand", err))
        return false;
    if (!ir_type_is_float(x->type) || x->rank < 1)
        return verify_fail(in, err, "operand %s must be a floating-point array of rank >= 1", verify_shape_text(x));
    if (!fi.present)
        return verify_fail(in, err, "missing feature_index");
    if (fi.v < 0 || fi.v >= x->rank)
        return verify_fail(in, err, "feature_index=%lld out of range for %s", (long long)fi.v, verify_shape_text(x));
    const char *eps = ir_raw_attr_get(in, "epsilon");
    char *end = NULL;
    if (!eps)
        return verify_fail(in, err, "missing epsilon");
    (void)strtod(eps, &end);
    if (end == eps || *end != '\0')
        return verify_fail(in, err, "epsilon=%s is not a float", eps);
    *features = x->dims[fi.v];
    return true;
}

/* Operand k is a vector over the features of x. */
static bool check_feature_operand(const IrInstr *in, int k, const char *what, const IrShape *x, int64_t features,
                                  Error *err)
{
    const IrShape *s = verify_operand_shape(in, k);
    if (ir_shape_is_array(s) && s->type == x->type && s->rank == 1 && verify_dim_eq(s->dims[0], features))
        return true;
    return verify_fail(in, err, "%s %s must be %s[%lld], the feature dimension of %s", what, verify_shape_text(s),
                       ir_type_name(x->type), (long long)features, verify_shape_text(x));
}

/* A tuple (x's shape, [features], [features]) of x's type. */
static bool check_batch_norm_tuple(const IrInstr *in, const IrShape *out, const IrShape *x, int64_t features,
                                   Error *err)
{
    bool ok = ir_shape_is_tuple(out) && out->n_elements == 3 && verify_same_shape(out->elements[0], x);
    for (int i = 1; ok && i < 3; i++) {
        const IrShape *e = out->elements[i];
        ok = ir_shape_is_array(e) && e->type == x->type && e->rank == 1 && verify_dim_eq(e->dims[0], features);
    }
    if (!ok)
        return verify_fail(in, err, "result %s must be (%s, %s[%lld], %s[%lld])", verify_shape_text(out),
                           verify_shape_text(x), ir_type_name(x->type), (long long)features, ir_type_name(x->type),
                           (long long)features);
    return true;
}

/* training(operand, scale, offset) -> (output, batch_mean, batch_var);
 * inference(operand, scale, offset, mean, variance) -> output;
 * grad(operand, scale, mean, variance, grad_output)
 *   -> (grad_operand, grad_scale, grad_offset). */
static bool check_batch_norm(const IrInstr *in, const IrShape *out, Error *err)
{
    static const char *const training[] = { "scale", "offset" };
    static const char *const inference[] = { "scale", "offset", "mean", "variance" };
    static const char *const grad[] = { "scale", "mean", "variance" };
    const IrShape *x = verify_operand_shape(in, 0);
    int64_t features = 0;
    if (!check_batch_norm_attrs(in, x, &features, err))
        return false;
    bool is_inference = in->op == IR_OP_BATCH_NORM_INFERENCE, is_grad = in->op == IR_OP_BATCH_NORM_GRAD;
    const char *const *names = is_inference ? inference : is_grad ? grad : training;
    int n = is_inference ? 4 : is_grad ? 3 : 2;
    for (int k = 0; k < n; k++)
        if (!check_feature_operand(in, k + 1, names[k], x, features, err))
            return false;
    if (is_grad && !verify_same_shape(verify_operand_shape(in, 4), x))
        return verify_fail(in, err, "grad_output %s does not match operand %s",
                           verify_shape_text(verify_operand_shape(in, 4)), verify_shape_text(x));
    if (!is_inference)
        return check_batch_norm_tuple(in, out, x, features, err);
    if (!verify_same_shape(out, x))
        return verify_fail(in, err, "result %s does not match operand %s", verify_shape_text(out),
                           verify_shape_text(x));
    return true;
}

/* topk(x), k=K: (x with its last dim K, s32 of those dims), 0 <= K <= last dim. */
static bool check_topk(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *x = verify_operand_shape(in, 0);
    IrOptInt k = in->ints[IR_INT_K];
    if (!verify_need_array(in, x, "operand", err))
        return false;
    if (x->rank < 1)
        return verify_fail(in, err, "operand %s must have rank >= 1", verify_shape_text(x));
    if (!k.present)
        return verify_fail(in, err, "missing k");
    int64_t last = x->dims[x->rank - 1];
    if (k.v < 0 || (last >= 0 && k.v > last))
        return verify_fail(in, err, "k=%lld out of range for %s", (long long)k.v, verify_shape_text(x));
    bool ok = ir_shape_is_tuple(out) && out->n_elements == 2;
    for (int i = 0; ok && i < 2; i++) {
        const IrShape *e = out->elements[i];
        ok = ir_shape_is_array(e) && e->type == (i ? IR_TYPE_S32 : x->type) && e->rank == x->rank &&
             verify_dim_eq(e->dims[x->rank - 1], k.v);
        for (int d = 0; ok && d < x->rank - 1; d++)
            ok = verify_dim_eq(e->dims[d], x->dims[d]);
    }
    if (!ok) {
        int64_t dims[IR_MAX_RANK];
        char v[TEXT_BYTES], i[TEXT_BYTES];
        memcpy(dims, x->dims, sizeof dims[0] * (size_t)x->rank);
        dims[x->rank - 1] = k.v;
        return verify_fail(in, err, "result %s must be (%s, %s)", verify_shape_text(out),
                           dims_text(v, x->type, x->rank, dims), dims_text(i, IR_TYPE_S32, x->rank, dims));
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Values, tuples, control flow                                         */

static bool check_nothing(const IrInstr *in, const IrShape *out, Error *err)
{
    (void)in;
    (void)out;
    (void)err;
    return true;
}

static bool check_parameter(const IrInstr *in, const IrShape *out, Error *err)
{
    (void)out;
    const IrComputation *c = in->parent;
    int64_t k = in->info->parameter_number;
    if (k < 0 || (c && k >= c->n_params))
        return verify_fail(in, err, "parameter(%lld) out of range: computation %s has %d parameters", (long long)k,
                           c ? c->name : "?", c ? c->n_params : 0);
    return true;
}

bool verify_same_as_operands(const IrInstr *in, const IrShape *out, Error *err)
{
    if (in->n_operands < 1)
        return verify_fail(in, err, "expects at least one operand");
    if (verify_operands_match(in, out))
        return true;
    if (in->n_operands == 1)
        return verify_fail(in, err, "result %s does not match operand %s", verify_shape_text(out),
                           verify_shape_text(verify_operand_shape(in, 0)));
    return verify_fail(in, err, "result %s must be the tuple of the %d operand shapes", verify_shape_text(out),
                       in->n_operands);
}

static bool check_tuple(const IrInstr *in, const IrShape *out, Error *err)
{
    if (!ir_shape_is_tuple(out) || out->n_elements != in->n_operands)
        return verify_fail(in, err, "result %s must be a tuple of %d elements", verify_shape_text(out), in->n_operands);
    for (int i = 0; i < in->n_operands; i++)
        if (!verify_same_shape(out->elements[i], verify_operand_shape(in, i)))
            return verify_fail(in, err, "result element %d %s does not match operand %s", i,
                               verify_shape_text(out->elements[i]), verify_shape_text(verify_operand_shape(in, i)));
    return true;
}

static bool check_get_tuple_element(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *t = verify_unbuffer(verify_operand_shape(in, 0));
    IrOptInt index = in->ints[IR_INT_INDEX];
    if (t->type != IR_TYPE_TUPLE)
        return verify_fail(in, err, "operand %s is not a tuple", verify_shape_text(t));
    if (!index.present)
        return verify_fail(in, err, "missing index");
    if (index.v < 0 || index.v >= t->n_elements)
        return verify_fail(in, err, "index=%lld out of range for %s", (long long)index.v, verify_shape_text(t));
    if (!verify_same_shape(out, t->elements[index.v]))
        return verify_fail(in, err, "result %s does not match element %lld of %s", verify_shape_text(out),
                           (long long)index.v, verify_shape_text(t));
    return true;
}

static bool check_call(const IrInstr *in, const IrShape *out, Error *err)
{
    return check_callee(in, IR_COMP_TO_APPLY, 0, in->n_operands, out, err);
}

static bool check_fusion(const IrInstr *in, const IrShape *out, Error *err)
{
    return check_callee(in, IR_COMP_CALLS, 0, in->n_operands, out, err);
}

static bool check_while(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *init = verify_operand_shape(in, 0);
    if (!verify_same_shape(out, init))
        return verify_fail(in, err, "result %s does not match init %s", verify_shape_text(out),
                           verify_shape_text(init));
    if (!check_callee(in, IR_COMP_BODY, 0, 1, out, err) || !check_callee(in, IR_COMP_CONDITION, 0, 1, NULL, err))
        return false;
    const IrInstr *root = in->info->comps[IR_COMP_CONDITION]->root;
    if (root && !(verify_is_scalar(root->shape) && root->shape->type == IR_TYPE_PRED))
        return verify_fail(in, err, "condition=%s must return pred[], returns %s",
                           in->info->comps[IR_COMP_CONDITION]->name, verify_shape_text(root->shape));
    return true;
}

static bool check_conditional_branches(const IrInstr *in, const IrShape *out, Error *err)
{
    if (in->info->n_branches < 1)
        return verify_fail(in, err, "missing branch_computations");
    if (in->n_operands != 1 + in->info->n_branches)
        return verify_fail(in, err, "expects %d operands for %d branches, got %d", 1 + in->info->n_branches,
                           in->info->n_branches, in->n_operands);
    for (int b = 0; b < in->info->n_branches; b++)
        if (!check_callee_comp(in, in->info->branches[b], "branch_computations", 1 + b, 1, out, err))
            return false;
    return true;
}

/* conditional(pred[] p, t, f) with true/false computations, or
 * conditional(s32[] i, args...) with branch_computations. */
static bool check_conditional(const IrInstr *in, const IrShape *out, Error *err)
{
    if (in->n_operands < 1)
        return verify_fail(in, err, "expects a branch index");
    const IrShape *idx = verify_operand_shape(in, 0);
    if (verify_is_scalar(idx) && idx->type == IR_TYPE_S32)
        return check_conditional_branches(in, out, err);
    if (!verify_is_scalar(idx) || idx->type != IR_TYPE_PRED)
        return verify_fail(in, err, "branch index %s must be pred[] or s32[]", verify_shape_text(idx));
    if (in->n_operands != 3)
        return verify_fail(in, err, "expects 3 operands with a pred[] index, got %d", in->n_operands);
    return check_callee(in, IR_COMP_TRUE_COMPUTATION, 1, 1, out, err) &&
           check_callee(in, IR_COMP_FALSE_COMPUTATION, 2, 1, out, err);
}

static bool check_after_all(const IrInstr *in, const IrShape *out, Error *err)
{
    if (out->type != IR_TYPE_TOKEN)
        return verify_fail(in, err, "result %s must be token[]", verify_shape_text(out));
    for (int i = 0; i < in->n_operands; i++)
        if (verify_operand_shape(in, i)->type != IR_TYPE_TOKEN)
            return verify_fail(in, err, "operand %s must be token[]", verify_shape_text(verify_operand_shape(in, i)));
    return true;
}

static bool check_add_dependency(const IrInstr *in, const IrShape *out, Error *err)
{
    if (verify_operand_shape(in, 1)->type != IR_TYPE_TOKEN)
        return verify_fail(in, err, "operand %s must be token[]", verify_shape_text(verify_operand_shape(in, 1)));
    if (!verify_same_shape(out, verify_operand_shape(in, 0)))
        return verify_fail(in, err, "result %s does not match operand %s", verify_shape_text(out),
                           verify_shape_text(verify_operand_shape(in, 0)));
    return true;
}

static bool check_device_id(const IrInstr *in, const IrShape *out, Error *err)
{
    if (!verify_is_scalar(out) || out->type != IR_TYPE_U32)
        return verify_fail(in, err, "result %s must be u32[]", verify_shape_text(out));
    return true;
}

/* The start's tuple, checked to have at least two elements. */
const IrShape *verify_start_tuple(const IrInstr *in, const IrShape *s, Error *err)
{
    s = verify_unbuffer(s);
    if (s->type == IR_TYPE_TUPLE && s->n_elements >= 2)
        return s;
    verify_fail(in, err, "%s must be a tuple of at least 2 elements (operands, result, ...)", verify_shape_text(s));
    return NULL;
}

/* x-done(start): the result part, element 1 of the start's tuple. */
static bool check_done(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *t = verify_start_tuple(in, verify_operand_shape(in, 0), err);
    if (!t)
        return false;
    if (!verify_same_shape(out, t->elements[1]))
        return verify_fail(in, err, "result %s does not match %s, element 1 of the start", verify_shape_text(out),
                           verify_shape_text(t->elements[1]));
    return true;
}

/* copy-start = (destination, source, context); copy-done yields element 0. */
static bool check_copy_start(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *t = verify_start_tuple(in, out, err), *x = verify_operand_shape(in, 0);
    if (!t)
        return false;
    if (!verify_same_shape(t->elements[0], x) || !verify_same_shape(t->elements[1], x))
        return verify_fail(in, err, "result %s must start with two copies of %s", verify_shape_text(out),
                           verify_shape_text(x));
    return true;
}

static bool check_copy_done(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *t = verify_start_tuple(in, verify_operand_shape(in, 0), err);
    if (!t)
        return false;
    if (!verify_same_shape(out, t->elements[0]))
        return verify_fail(in, err, "result %s does not match %s, element 0 of the copy-start", verify_shape_text(out),
                           verify_shape_text(t->elements[0]));
    return true;
}

/* Element 0 of an async-start is the tuple of its operand shapes. */
static bool check_async_operands(const IrInstr *in, const IrShape *t, Error *err)
{
    const IrShape *ops = verify_unbuffer(t->elements[0]);
    bool ok = ops->type == IR_TYPE_TUPLE && ops->n_elements == in->n_operands;
    for (int i = 0; ok && i < in->n_operands; i++)
        ok = verify_same_shape(ops->elements[i], verify_operand_shape(in, i));
    if (!ok)
        return verify_fail(in, err, "element 0 %s of the result must be the tuple of the operand shapes",
                           verify_shape_text(ops));
    return true;
}

static CheckFn *checker_for(IrOpcode op);
static bool check_arity(const IrInstr *in, IrOpcode op, Error *err);

/* async-start: ((operands), result, context...).  The long form calls a
 * computation; the sugared form (reduce-scatter-start) checks the result
 * part by the wrapped op's own rule. */
static bool check_async_start(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *t = verify_start_tuple(in, out, err);
    if (!t || !check_async_operands(in, t, err))
        return false;
    if (!verify_is_sugared_async(in))
        return check_callee(in, IR_COMP_CALLS, 0, in->n_operands, t->elements[1], err);
    return check_arity(in, in->info->async_wrapped, err) && checker_for(in->info->async_wrapped)(in, t->elements[1], err);
}

/* ------------------------------------------------------------------ */
/* Dispatch                                                             */

/* One checker per group of opcodes.  No default: -Wswitch-enum flags an
 * opcode added to opcodes.def without a rule here. */
static CheckFn *checker_for(IrOpcode op)
{
    switch (op) {
    case IR_OP_ABS: case IR_OP_NEGATE: case IR_OP_SIGN: case IR_OP_NOT: case IR_OP_EXP:
    case IR_OP_EXPM1: case IR_OP_LOG: case IR_OP_LOG1P: case IR_OP_SQRT: case IR_OP_RSQRT:
    case IR_OP_CBRT: case IR_OP_TANH: case IR_OP_LOGISTIC: case IR_OP_SIN: case IR_OP_COS:
    case IR_OP_TAN: case IR_OP_ACOS: case IR_OP_ACOSH: case IR_OP_ASIN: case IR_OP_ASINH:
    case IR_OP_ATANH: case IR_OP_COSH: case IR_OP_SINH: case IR_OP_FLOOR: case IR_OP_CEIL:
    case IR_OP_ROUND_AFZ: case IR_OP_ROUND_EVEN: case IR_OP_IS_FINITE: case IR_OP_POPCNT:
    case IR_OP_CLZ: case IR_OP_REAL: case IR_OP_IMAG: case IR_OP_ERF: case IR_OP_CONVERT:
    case IR_OP_REDUCE_PRECISION:
        return check_unary;
    case IR_OP_ADD: case IR_OP_SUBTRACT: case IR_OP_MULTIPLY: case IR_OP_DIVIDE: case IR_OP_REMAINDER:
    case IR_OP_MAXIMUM: case IR_OP_MINIMUM: case IR_OP_POWER: case IR_OP_AND: case IR_OP_OR:
    case IR_OP_XOR: case IR_OP_SHIFT_LEFT: case IR_OP_SHIFT_RIGHT_ARITH: case IR_OP_SHIFT_RIGHT_LOGICAL:
    case IR_OP_ATAN2: case IR_OP_COMPLEX: case IR_OP_COMPARE:
        return check_binary;
    case IR_OP_STOCHASTIC_CONVERT: return check_stochastic_convert;
    case IR_OP_BITCAST_CONVERT: return check_bitcast_convert;
    case IR_OP_SELECT: return check_select;
    case IR_OP_CLAMP: return check_clamp;
    case IR_OP_COPY: case IR_OP_OPT_BARRIER: case IR_OP_DOMAIN: case IR_OP_ALL_REDUCE_DONE:
    case IR_OP_COLLECTIVE_BROADCAST: case IR_OP_ASYNC_UPDATE:
        return verify_same_as_operands;
    case IR_OP_RESHAPE: return check_reshape;
    case IR_OP_BITCAST: return check_bitcast;
    case IR_OP_TRANSPOSE: return check_transpose;
    case IR_OP_BROADCAST: return check_broadcast;
    case IR_OP_SLICE: return check_slice;
    case IR_OP_DYNAMIC_SLICE: return check_dynamic_slice;
    case IR_OP_DYNAMIC_UPDATE_SLICE: return check_dynamic_update_slice;
    case IR_OP_CONCATENATE: return check_concatenate;
    case IR_OP_PAD: return check_pad;
    case IR_OP_IOTA: return check_iota;
    case IR_OP_REVERSE: return check_reverse;
    case IR_OP_GATHER: return check_gather;
    case IR_OP_SCATTER: return check_scatter;
    case IR_OP_GET_DIMENSION_SIZE: return check_get_dimension_size;
    case IR_OP_SET_DIMENSION_SIZE: return check_set_dimension_size;
    case IR_OP_REDUCE: return check_reduce;
    case IR_OP_REDUCE_WINDOW: return check_reduce_window;
    case IR_OP_SELECT_AND_SCATTER: return check_select_and_scatter;
    case IR_OP_DOT: return check_dot;
    case IR_OP_SORT: return check_sort;
    case IR_OP_MAP: return check_map;
    case IR_OP_PARAMETER: return check_parameter;
    case IR_OP_TUPLE: return check_tuple;
    case IR_OP_GET_TUPLE_ELEMENT: return check_get_tuple_element;
    case IR_OP_CALL: return check_call;
    case IR_OP_FUSION: return check_fusion;
    case IR_OP_WHILE: return check_while;
    case IR_OP_CONDITIONAL: return check_conditional;
    case IR_OP_AFTER_ALL: return check_after_all;
    case IR_OP_ADD_DEPENDENCY: return check_add_dependency;
    case IR_OP_COPY_START: return check_copy_start;
    case IR_OP_COPY_DONE: return check_copy_done;
    case IR_OP_ASYNC_START: return check_async_start;
    case IR_OP_ASYNC_DONE: case IR_OP_ALL_GATHER_DONE: case IR_OP_COLLECTIVE_PERMUTE_DONE:
        return check_done;
    case IR_OP_REPLICA_ID: case IR_OP_PARTITION_ID: return check_device_id;
    case IR_OP_ALL_GATHER: return verify_all_gather;
    case IR_OP_ALL_GATHER_START: return verify_all_gather_start;
    case IR_OP_ALL_REDUCE: case IR_OP_ALL_REDUCE_START: return verify_all_reduce;
    case IR_OP_REDUCE_SCATTER: return verify_reduce_scatter;
    case IR_OP_ALL_TO_ALL: return verify_all_to_all;
    case IR_OP_COLLECTIVE_PERMUTE: return verify_collective_permute;
    case IR_OP_COLLECTIVE_PERMUTE_START: return verify_collective_permute_start;
    /* Operand counts only (so far).  One family a line, apart, so that
     * each can get its rule on its own. */
    case IR_OP_CONVOLUTION:
        return check_convolution;
    /* batch norm */
    case IR_OP_BATCH_NORM_TRAINING: case IR_OP_BATCH_NORM_INFERENCE: case IR_OP_BATCH_NORM_GRAD:
        return check_batch_norm;
    /* linear algebra */
    case IR_OP_TRIANGULAR_SOLVE: return check_triangular_solve;
    case IR_OP_CHOLESKY: return check_cholesky;
    /* fft */
    case IR_OP_FFT:
        return check_fft;
    /* topk */
    case IR_OP_TOPK:
        return check_topk;
    /* random numbers, dynamic shapes */
    case IR_OP_RNG: return check_rng;
    case IR_OP_RNG_BIT_GENERATOR: return check_rng_bit_generator;
    case IR_OP_RNG_GET_AND_UPDATE_STATE: return check_rng_get_and_update_state;
    case IR_OP_DYNAMIC_RESHAPE: return check_dynamic_reshape;
    /* point to point and ragged collectives */
    case IR_OP_RAGGED_ALL_TO_ALL: return verify_ragged_all_to_all;
    case IR_OP_SEND: return verify_send;
    case IR_OP_RECV: return verify_recv;
    case IR_OP_SEND_DONE: case IR_OP_RECV_DONE: return verify_p2p_done;
    /* the rest */
    case IR_OP_CONSTANT: case IR_OP_CUSTOM_CALL: case IR_OP_INFEED:
    case IR_OP_OUTFEED: case IR_OP_COUNT:
        return check_nothing;
    }
    return check_nothing;
}

static bool check_arity(const IrInstr *in, IrOpcode op, Error *err)
{
    int want = ir_op_info[op].arity;
    if (want < 0 || in->n_operands == want)
        return true;
    return verify_fail(in, err, "expects %d operand%s, got %d", want, want == 1 ? "" : "s", in->n_operands);
}

/* The leaves of a shape as XLA's ShapeTree counts them: every array (or
 * token) and every empty tuple. */
static long shape_leaves(const IrShape *s)
{
    s = verify_unbuffer(s);
    if (s->type != IR_TYPE_TUPLE || s->n_elements == 0)
        return 1;
    long n = 0;
    for (int i = 0; i < s->n_elements; i++)
        n += shape_leaves(s->elements[i]);
    return n;
}

const char *verify_skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* A tuple sharding ({{replicated}, {maximal device=0}}) names one sharding
 * per leaf of a tuple shape, as XLA's verifier requires
 * (HloSharding::Validate); a single sharding on a tuple applies to every
 * leaf (XLA's parser spreads it), so only tuple shardings are counted
 * here.  The text is the parser's balanced braces. */
static bool check_sharding(const IrInstr *in, Error *err)
{
    const char *v = ir_raw_attr_get(in, "sharding");
    if (!v)
        return true;
    const char *s = verify_skip_blanks(v);
    if (*s != '{' || *verify_skip_blanks(s + 1) != '{')
        return true;
    long n = 1;
    int depth = 0;
    for (const char *q = s; *q; q++) {
        if (*q == '"') {            /* a quoted string (a metadata name) may hold braces */
            for (q++; *q && *q != '"'; q++)
                q += q[0] == '\\' && q[1];
            if (!*q)
                break;
        } else if (*q == '{') {
            depth++;
        } else if (*q == '}') {
            depth--;
        } else if (*q == ',' && depth == 1) {
            n++;
        }
    }
    const IrShape *shape = verify_unbuffer(in->shape);
    if (shape->type != IR_TYPE_TUPLE)
        return verify_fail(in, err, "a tuple sharding of %ld elements on %s, which is not a tuple", n,
                           ir_shape_str(in->shape));
    long leaves = shape_leaves(shape);
    if (n != leaves)
        return verify_fail(in, err, "its tuple sharding has %ld elements; its shape %s has %ld leaves", n,
                           ir_shape_str(in->shape), leaves);
    return true;
}

bool ir_verify_instr(const IrInstr *instr, Error *err)
{
    if (instr->op >= IR_OP_COUNT)
        return error_set(err, ERR_SHAPE, instr->info->loc, "%s: unknown opcode %d", instr->name, (int)instr->op);
    if (!instr->shape)
        return verify_fail(instr, err, "%s has no shape", instr->name);
    for (int i = 0; i < instr->n_operands; i++)
        if (!instr->operands[i] || !instr->operands[i]->shape)
            return verify_fail(instr, err, "operand %d is missing", i);
    return check_arity(instr, instr->op, err) && checker_for(instr->op)(instr, instr->shape, err) &&
           verify_collective_attrs(instr, err) && check_sharding(instr, err);
}

/* ------------------------------------------------------------------ */
/* Structure: names, definitions before uses, parameters, root          */

/* A set of strings (open addressing); memory from xmalloc_try. */
typedef struct NameSet {
    const char **slots;
    size_t mask;
} NameSet;

static bool nameset_init(NameSet *s, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 1)
        cap *= 2;
    s->slots = xmalloc_try(cap * sizeof *s->slots);
    s->mask = cap - 1;
    if (s->slots)
        memset(s->slots, 0, cap * sizeof *s->slots);
    return s->slots != NULL;
}

/* false if name was already in the set. */
static bool nameset_add(NameSet *s, const char *name)
{
    size_t h = 14695981039346656037u;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211u;
    size_t i = h & s->mask;
    for (; s->slots[i]; i = (i + 1) & s->mask)
        if (strcmp(s->slots[i], name) == 0)
            return false;
    s->slots[i] = name;
    return true;
}

/* Which instruction has been seen, in which computation, by id: an operand
 * is defined before use when its slot already names it and this computation. */
typedef struct Slot {
    const IrInstr *instr;
    const IrComputation *comp;
} Slot;

typedef struct Walk {
    Slot *slots;
    int64_t n;
} Walk;

static bool walk_init(Walk *w, const IrModule *m, Error *err)
{
    int64_t n = m->next_instr_id;
    for (int c = 0; c < m->n_computations; c++)
        for (int i = 0; i < m->computations[c]->n_instrs; i++)
            if (m->computations[c]->instrs[i]->id >= n)
                n = m->computations[c]->instrs[i]->id + 1;
    w->n = n;
    w->slots = xmalloc_try((size_t)(n > 0 ? n : 1) * sizeof *w->slots);
    if (!w->slots)
        return verify_out_of_memory((IrLoc){ m->file, 0, 0 }, err);
    memset(w->slots, 0, (size_t)(n > 0 ? n : 1) * sizeof *w->slots);
    return true;
}

static bool walk_defined(const Walk *w, const IrComputation *c, const IrInstr *x)
{
    return x && x->id >= 0 && x->id < w->n && w->slots[x->id].instr == x && w->slots[x->id].comp == c;
}

static bool check_instr_names(const IrComputation *c, Error *err)
{
    NameSet set;
    if (!nameset_init(&set, (size_t)c->n_instrs))
        return verify_out_of_memory(c->loc, err);
    bool ok = true;
    for (int i = 0; ok && i < c->n_instrs; i++) {
        const IrInstr *in = c->instrs[i];
        if (!in->dead && !nameset_add(&set, in->name))
            ok = verify_fail(in, err, "instruction name %s is used twice in computation %s", in->name, c->name);
    }
    free(set.slots);
    return ok;
}

/* x (an operand or control predecessor of in) is defined earlier in c. */
static bool check_defined(const Walk *w, const IrComputation *c, const IrInstr *in, const IrInstr *x,
                          const char *what, Error *err)
{
    if (walk_defined(w, c, x))
        return true;
    if (!x)
        return verify_fail(in, err, "%s is missing", what);
    if (x->parent && x->parent != c)
        return verify_fail(in, err, "%s %s belongs to computation %s, not %s", what, x->name, x->parent->name, c->name);
    if (x->dead)
        return verify_fail(in, err, "%s %s was removed", what, x->name);
    return verify_fail(in, err, "%s %s is used before its definition", what, x->name);
}

/* Records in as seen in c; its id must be its own. */
static bool walk_mark(Walk *w, const IrComputation *c, const IrInstr *in, Error *err)
{
    if (in->id < 0 || in->id >= w->n)
        return error_set(err, ERR_INTERNAL, in->info->loc, "%s: instruction %s has a bad id %d", opname(in), in->name,
                         in->id);
    Slot *s = &w->slots[in->id];
    if (s->instr == in)
        return verify_fail(in, err, "instruction %s is listed twice", in->name);
    if (s->instr)
        return error_set(err, ERR_INTERNAL, in->info->loc, "%s: instructions %s and %s share id %d", opname(in),
                         in->name, s->instr->name, in->id);
    s->instr = in;
    s->comp = c;
    return true;
}

static bool check_uses(Walk *w, const IrComputation *c, Error *err)
{
    for (int i = 0; i < c->n_instrs; i++) {
        const IrInstr *in = c->instrs[i];
        if (in->dead)
            continue;
        if (in->parent != c)
            return verify_fail(in, err, "instruction %s is listed in computation %s but belongs to %s", in->name,
                               c->name, in->parent ? in->parent->name : "none");
        for (int k = 0; k < in->n_operands; k++)
            if (!check_defined(w, c, in, in->operands[k], "operand", err))
                return false;
        for (int k = 0; k < in->n_control_predecessors; k++)
            if (!check_defined(w, c, in, in->control_predecessors[k], "control predecessor", err))
                return false;
        if (!walk_mark(w, c, in, err))
            return false;
    }
    return true;
}

/* parameter(k) for k in 0..n_params-1, each exactly once, at params[k]. */
static bool check_params(const IrComputation *c, Error *err)
{
    int count = 0;
    if (c->n_params > 0 && !c->params)
        return comp_fail(c, err, "has %d parameters but no parameter table", c->n_params);
    for (int i = 0; i < c->n_instrs; i++) {
        const IrInstr *in = c->instrs[i];
        if (in->dead || in->op != IR_OP_PARAMETER)
            continue;
        int64_t k = in->info->parameter_number;
        if (k < 0 || k >= c->n_params)
            return verify_fail(in, err, "parameter(%lld) out of range: computation %s has %d parameters", (long long)k,
                               c->name, c->n_params);
        if (c->params[k] != in)
            return verify_fail(in, err, "parameter(%lld) appears more than once in computation %s", (long long)k,
                               c->name);
        count++;
    }
    for (int k = 0; count != c->n_params && k < c->n_params; k++) {
        const IrInstr *p = c->params[k];
        if (!p || p->dead || p->op != IR_OP_PARAMETER || p->info->parameter_number != k || p->parent != c)
            return comp_fail(c, err, "parameter(%d) is missing", k);
    }
    if (count != c->n_params)
        return comp_fail(c, err, "has %d parameter instructions but %d parameters", count, c->n_params);
    return true;
}

static bool check_structure(Walk *w, const IrComputation *c, Error *err)
{
    if (c->n_instrs == 0)
        return comp_fail(c, err, "has no instructions");
    if (!check_uses(w, c, err) || !check_instr_names(c, err) || !check_params(c, err))
        return false;
    if (!c->root)
        return comp_fail(c, err, "has no root");
    if (!walk_defined(w, c, c->root))
        return comp_fail(c, err, "root %s is not one of its instructions", c->root->name);
    return true;
}

/* ------------------------------------------------------------------ */
/* Module: entry, computation names, call graph, entry layout           */

static bool check_computation_names(const IrModule *m, Error *err)
{
    NameSet set;
    if (!nameset_init(&set, (size_t)m->n_computations))
        return verify_out_of_memory((IrLoc){ m->file, 0, 0 }, err);
    bool ok = true;
    for (int i = 0; ok && i < m->n_computations; i++)
        if (!nameset_add(&set, m->computations[i]->name))
            ok = comp_fail(m->computations[i], err, "the name is used by another computation");
    free(set.slots);
    return ok;
}

/* The module's computations sorted by address, to find a callee's position
 * without trusting IrComputation.id; and a DFS color per position. */
typedef struct CompRef {
    const IrComputation *comp;
    int pos;                    /* index in module->computations */
} CompRef;

typedef struct CallGraph {
    const IrModule *m;
    CompRef *sorted;
    unsigned char *color;       /* WHITE, GRAY (on the DFS stack), BLACK */
    int *height;                /* BLACK: the longest chain of calls from it, itself included */
    int depth;                  /* GRAY computations, the one being visited included */
} CallGraph;

/* The interpreter, the passes and the proof walk a call by recursion, as
 * this check does: a deeper chain would overflow their stacks. */
enum { MAX_CALL_DEPTH = 256 };

enum { WHITE, GRAY, BLACK };

static int compare_comp_refs(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const CompRef *)a)->comp, y = (uintptr_t)((const CompRef *)b)->comp;
    return (x > y) - (x < y);
}

/* Position of c in the module, or -1. */
static int comp_position(const CallGraph *g, const IrComputation *c)
{
    CompRef key = { c, -1 };
    const CompRef *r = bsearch(&key, g->sorted, (size_t)g->m->n_computations, sizeof key, compare_comp_refs);
    return r ? r->pos : -1;
}

static bool visit_calls(CallGraph *g, int pos, Error *err);

/* Callee c of in: in the module, and not already on the DFS stack. */
static bool visit_callee(CallGraph *g, const IrInstr *in, const IrComputation *c, Error *err)
{
    int j = c ? comp_position(g, c) : -1;
    if (j < 0)
        return verify_fail(in, err, "calls computation %s, which is not in the module", c ? c->name : "(null)");
    if (g->color[j] == GRAY)
        return verify_fail(in, err, "calls computation %s, which is already being called (a call cycle)", c->name);
    bool deep = g->color[j] == WHITE ? g->depth >= MAX_CALL_DEPTH : g->depth + g->height[j] > MAX_CALL_DEPTH;
    if (!deep && g->color[j] == WHITE) {
        if (!visit_calls(g, j, err))
            return false;
        deep = g->depth + g->height[j] > MAX_CALL_DEPTH;
    }
    if (deep)
        return verify_fail(in, err, "calls computation %s: computations call each other more than %d deep", c->name,
                           MAX_CALL_DEPTH);
    return true;
}

static bool visit_calls(CallGraph *g, int pos, Error *err)
{
    const IrComputation *c = g->m->computations[pos];
    g->color[pos] = GRAY;
    g->depth++;
    int below = 0;
    for (int i = 0; i < c->n_instrs; i++) {
        const IrInstr *in = c->instrs[i];
        if (in->dead)
            continue;
        for (int k = 0; k < IR_COMP_COUNT + in->info->n_branches; k++) {
            const IrComputation *callee = k < IR_COMP_COUNT ? in->info->comps[k] : in->info->branches[k - IR_COMP_COUNT];
            if (k < IR_COMP_COUNT && !callee)
                continue;
            if (!visit_callee(g, in, callee, err))
                return false;
            int j = comp_position(g, callee);
            below = g->height[j] > below ? g->height[j] : below;
        }
    }
    g->depth--;
    g->height[pos] = below + 1;
    g->color[pos] = BLACK;
    return true;
}

/* Every callee is in the module, no computation calls itself, and no chain
 * of calls is deeper than MAX_CALL_DEPTH. */
static bool check_call_graph(const IrModule *m, Error *err)
{
    size_t n = (size_t)m->n_computations;
    CallGraph g = { m, xmalloc_try((n + 1) * sizeof(CompRef)), xmalloc_try(n + 1), xmalloc_try((n + 1) * sizeof(int)), 0 };
    bool ok = g.sorted && g.color && g.height;
    if (!ok)
        verify_out_of_memory((IrLoc){ m->file, 0, 0 }, err);
    for (size_t i = 0; ok && i < n; i++) {
        g.sorted[i] = (CompRef){ m->computations[i], (int)i };
        g.color[i] = WHITE;
    }
    if (ok)
        qsort(g.sorted, n, sizeof *g.sorted, compare_comp_refs);
    for (size_t i = 0; ok && i < n; i++)
        if (g.color[i] == WHITE)
            ok = visit_calls(&g, (int)i, err);
    free(g.sorted);
    free(g.color);
    free(g.height);
    return ok;
}

/* Appends s[0..n) without whitespace, comments and {...} groups (layouts). */
static void put_bare(StrBuf *b, const char *s, size_t n)
{
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
            const char *end = strstr(s + i + 2, "*/");
            i = end && (size_t)(end - s) + 1 < n ? (size_t)(end - s) + 1 : n;
        } else if (s[i] == '{')
            depth++;
        else if (s[i] == '}')
            depth -= depth > 0;
        else if (depth == 0 && !isspace((unsigned char)s[i]))
            strbuf_putc(b, s[i]);
    }
}

/* Out of memory, b->nomem is set. */
static void put_bare_shape(StrBuf *b, const IrShape *s)
{
    StrBuf t;
    strbuf_init_may_fail(&t);
    ir_shape_print(&t, s, false);
    put_bare(b, t.s ? t.s : "", t.len);
    b->nomem |= t.nomem;
    strbuf_free(&t);
}

static const char *header_attr(const IrModule *m, const char *name)
{
    for (int i = 0; i < m->n_header_attrs; i++)
        if (strcmp(m->header_attrs[i].name, name) == 0)
            return m->header_attrs[i].value;
    return NULL;
}

/* Splits bare "(a,b)->r" text at depth-1 commas.  Returns the number of
 * parameters (-1 if malformed); the offsets of the first max pieces, with
 * the result after the parameters, go to starts / ends. */
static int split_layout(const char *s, size_t *starts, size_t *ends, int max)
{
    int depth = 0, n = 0;
    size_t i, len = strlen(s), start = 1;
    if (len == 0 || s[0] != '(')
        return -1;
    for (i = 0; i < len; i++) {
        char ch = s[i];
        depth += (ch == '(' || ch == '[') - (ch == ')' || ch == ']');
        bool cut = (depth == 1 && ch == ',') || (depth == 0 && ch == ')');
        if (cut && i > start && n++ < max) {
            starts[n - 1] = start;
            ends[n - 1] = i;
        }
        if (cut)
            start = i + 1;
        if (depth == 0 && ch == ')')
            break;
    }
    if (i + 2 >= len || s[i + 1] != '-' || s[i + 2] != '>')
        return -1;
    if (n < max) {
        starts[n] = i + 3;
        ends[n] = len;
    }
    return n;
}

/* 1 when text[start, end) is s without layout, 0 when not, -1 when out of
 * memory. */
static int piece_is(const char *text, size_t start, size_t end, const IrShape *s)
{
    StrBuf b;
    strbuf_init_may_fail(&b);
    put_bare_shape(&b, s);
    int same = b.len == end - start && memcmp(b.s ? b.s : "", text + start, b.len) == 0;
    if (b.nomem)
        same = -1;
    strbuf_free(&b);
    return same;
}

/* The entry's parameter and result shapes against the pieces of the
 * header's entry_computation_layout (starts/ends from split_layout). */
static bool check_layout_pieces(const IrComputation *e, const char *bare, const size_t *starts,
                                const size_t *ends, int n, Error *err)
{
    if (n != e->n_params)
        return comp_fail(e, err, "entry_computation_layout has %d parameters, the entry computation %d", n,
                         e->n_params);
    for (int k = 0; k < n; k++) {
        const IrInstr *p = e->params ? e->params[k] : NULL;
        int same = p ? piece_is(bare, starts[k], ends[k], p->shape) : 1;
        if (same < 0)
            return verify_out_of_memory(p->info->loc, err);
        if (!same)
            return verify_fail(p, err, "shape %s differs from entry_computation_layout parameter %d (%.*s)",
                               verify_shape_text(p->shape), k, (int)(ends[k] - starts[k]), bare + starts[k]);
    }
    int same = e->root ? piece_is(bare, starts[n], ends[n], e->root->shape) : 1;
    if (same < 0)
        return verify_out_of_memory(e->loc, err);
    if (!same)
        return verify_fail(e->root, err, "root shape %s differs from the entry_computation_layout result %.*s",
                           verify_shape_text(e->root->shape), (int)(ends[n] - starts[n]), bare + starts[n]);
    return true;
}

/* The header's entry_computation_layout names the entry's parameter and
 * result shapes (layouts aside).  A form we cannot split is left alone: the
 * parser accepted it. */
static bool check_layout_text(const IrModule *m, const char *bare, Error *err)
{
    size_t max = (size_t)m->entry->n_params + 1;    /* the parameters and the result */
    size_t *starts = xmalloc_try(max * sizeof *starts), *ends = xmalloc_try(max * sizeof *ends);
    bool ok = starts && ends;
    if (!ok)
        verify_out_of_memory(m->entry->loc, err);
    int n = ok ? split_layout(bare, starts, ends, (int)max) : -1;
    if (n >= 0)
        ok = check_layout_pieces(m->entry, bare, starts, ends, n, err);
    free(starts);
    free(ends);
    return ok;
}

static bool check_entry_layout(const IrModule *m, Error *err)
{
    const char *v = header_attr(m, "entry_computation_layout");
    if (!v)
        return true;
    size_t len = strlen(v);
    while (len > 0 && isspace((unsigned char)v[len - 1]))
        len--;
    while (len > 0 && isspace((unsigned char)*v))
        v++, len--;
    if (len >= 2 && v[0] == '{' && v[len - 1] == '}')
        v++, len -= 2;
    StrBuf bare;
    strbuf_init_may_fail(&bare);
    put_bare(&bare, v, len);
    bool ok = bare.nomem ? verify_out_of_memory(m->entry->loc, err)
                         : check_layout_text(m, bare.s ? bare.s : "", err);
    strbuf_free(&bare);
    return ok;
}

static bool check_module_shape(const IrModule *m, Error *err)
{
    IrLoc at = { m->file, 0, 0 };
    if (!m->entry)
        return error_set(err, ERR_SHAPE, at, "module %s has no entry computation", m->name ? m->name : "");
    bool listed = false;
    for (int i = 0; i < m->n_computations; i++)
        listed |= m->computations[i] == m->entry;
    if (!listed)
        return error_set(err, ERR_SHAPE, at, "the entry computation %s is not in module %s", m->entry->name,
                         m->name ? m->name : "");
    return check_computation_names(m, err);
}

static bool check_all_instrs(const IrComputation *c, Error *err)
{
    for (int i = 0; i < c->n_instrs; i++)
        if (!c->instrs[i]->dead && !ir_verify_instr(c->instrs[i], err))
            return false;
    return true;
}

bool ir_verify_module(const IrModule *m, Error *err)
{
    Walk w;
    if (!check_module_shape(m, err) || !walk_init(&w, m, err))
        return false;
    bool ok = true;
    for (int i = 0; ok && i < m->n_computations; i++)
        ok = check_structure(&w, m->computations[i], err);
    free(w.slots);
    ok = ok && check_call_graph(m, err);
    for (int i = 0; ok && i < m->n_computations; i++)
        ok = check_all_instrs(m->computations[i], err);
    return ok && check_entry_layout(m, err);
}
