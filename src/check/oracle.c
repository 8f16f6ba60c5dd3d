/* oracle.c: the f64 oracle.  A copy of the module in which every floating
 * element type is f64, so that every rounding the original does in a narrow
 * type happens (far more finely) in f64 instead.  Converts between float
 * types become identities; integer and pred semantics are unchanged;
 * collectives fold in f64.  Both modules of a check are judged against it. */
#include "check.h"
#include "check_internal.h"

#include <stdlib.h>
#include <string.h>

static bool widens(IrElemType t)
{
    return ir_type_is_float(t);
}

static IrShape *widen_shape(Arena *a, const IrShape *s)
{
    IrShape *w = ARENA_NEW(a, IrShape);
    *w = *s;
    if (s->type == IR_TYPE_TUPLE) {
        w->elements = ARENA_ARRAY(a, IrShape *, (size_t)(s->n_elements ? s->n_elements : 1));
        for (int i = 0; i < s->n_elements; i++)
            w->elements[i] = widen_shape(a, s->elements[i]);
    } else if (widens(s->type)) {
        w->type = IR_TYPE_F64;
    }
    return w;
}

static IrLiteral *widen_literal(Arena *a, const IrLiteral *lit, const IrShape *wide)
{
    IrLiteral *w = ARENA_NEW(a, IrLiteral);
    *w = *lit;
    w->shape = wide;
    if (lit->elided)
        return w;
    if (wide->type == IR_TYPE_TUPLE) {
        w->elements = ARENA_ARRAY(a, IrLiteral *, (size_t)(lit->n_elements ? lit->n_elements : 1));
        for (int i = 0; i < lit->n_elements; i++)
            w->elements[i] = widen_literal(a, lit->elements[i], wide->elements[i]);
        return w;
    }
    if (!widens(lit->shape->type) || !lit->data)
        return w;
    int64_t n = ir_shape_elements(lit->shape);
    size_t es = (size_t)ir_type_storage_bytes(lit->shape->type);
    double *d = ARENA_ARRAY(a, double, (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++)
        d[i] = ir_elem_get_f64(lit->shape->type, (const char *)lit->data + (size_t)i * es);
    w->data = d;
    return w;
}

/* Ops whose meaning is tied to a float format's bits. */
static bool has_no_wide_meaning(const IrInstr *instr)
{
    if (instr->op == IR_OP_REDUCE_PRECISION)
        return true;
    if (instr->op != IR_OP_BITCAST_CONVERT)
        return false;
    return widens(instr->shape->type) || widens(instr->operands[0]->shape->type);
}

static bool widen_computation(IrModule *m, IrComputation *comp, Error *err)
{
    for (int i = 0; i < comp->n_instrs; i++) {
        IrInstr *instr = comp->instrs[i];
        if (has_no_wide_meaning(instr))
            return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                             "the f64 oracle cannot run %s %s: it depends on a float format's bits",
                             ir_opcode_name(instr->op), instr->name);
    }
    for (int i = 0; i < comp->n_instrs; i++) {
        IrInstr *instr = comp->instrs[i];
        const IrShape *narrow = instr->shape;
        instr->shape = widen_shape(m->arena, narrow);
        if (instr->info->literal)
            instr->info->literal = widen_literal(m->arena, instr->info->literal, instr->shape);
    }
    return true;
}

IrModule *check_widen_module(const IrModule *m, Error *err)
{
    IrModule *w = ir_module_copy(m, err);
    if (!w)
        return NULL;
    ir_module_drop_entry_layout(w);     /* it names the narrow types */
    for (int i = 0; i < w->n_computations; i++)
        if (!widen_computation(w, w->computations[i], err)) {
            ir_module_free(w);
            return NULL;
        }
    return w;
}

static Value *widen_element(void *ctx, int i, const IrShape *element, Error *err)
{
    return check_widen_value(((const Value *)ctx)->elements[i], element, err);
}

Value *check_widen_value(const Value *v, const IrShape *s, Error *err)
{
    if (s->type == IR_TYPE_TUPLE)
        return value_build_tuple(s, widen_element, (void *)v, err);
    Value *w = value_new_array(s, err);
    if (!w)
        return NULL;
    IrElemType t = v->shape->type;
    if (!widens(t) || s->type != IR_TYPE_F64) {
        memcpy(w->data, v->data, value_bytes(v));
        return w;
    }
    double *d = check_values_f64(v);
    memcpy(w->data, d, value_bytes(w));
    free(d);
    return w;
}
