/* sites.c: where a rewrite changed the type a reduction accumulates in, read
 * from the two modules (not assumed from the pass list), and probes that
 * expose those values as extra outputs so their accuracy can be measured.
 *
 * A reduction leaf is operand i of an all-reduce or reduce-scatter (variadic
 * ones, as the combiners make them, have several).  A site is a leaf of
 * `after` whose operand, followed down through convert / transpose / reshape,
 * is an instruction x that a leaf of `before` reduces directly, with a
 * different element type: flip-reduce-convert-add turns convert(R(x)) into
 * R'(convert(x)); the transpose flip with a convert does the same under a
 * transpose.  A site may sit in any computation: real programs accumulate
 * gradients in a while body, where #102's get-tuple-element(parameter) is
 * the loop's carried accumulator. */
#include "check.h"
#include "check_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct Leaf {
    const IrInstr *r;       /* the reduction */
    int i;                  /* operand index */
} Leaf;

static bool is_reduction(const IrInstr *instr)
{
    return instr->op == IR_OP_ALL_REDUCE || instr->op == IR_OP_REDUCE_SCATTER;
}

static bool is_layout_or_type_op(const IrInstr *instr)
{
    return (instr->op == IR_OP_CONVERT || instr->op == IR_OP_TRANSPOSE || instr->op == IR_OP_RESHAPE) &&
           instr->n_operands == 1;
}

static const IrShape *leaf_shape(Leaf l)
{
    return l.r->shape->type == IR_TYPE_TUPLE ? l.r->shape->elements[l.i] : l.r->shape;
}

static void leaf_name(Leaf l, char *out, size_t n)
{
    if (l.r->n_operands > 1)
        snprintf(out, n, "%s[%d]", l.r->name, l.i);
    else
        snprintf(out, n, "%s", l.r->name);
}

/* The leaf of before, in the computation named as after's (passes keep
 * computation names; instruction names are unique only within one), that
 * reduces the instruction named operand_name. */
static bool find_before_leaf(const IrModule *m, const char *comp_name, const char *operand_name, Leaf *out)
{
    const IrComputation *comp = ir_module_find_computation(m, comp_name);
    for (int i = 0; comp && i < comp->n_instrs; i++) {
        const IrInstr *r = comp->instrs[i];
        for (int k = 0; is_reduction(r) && k < r->n_operands; k++)
            if (strcmp(r->operands[k]->name, operand_name) == 0) {
                *out = (Leaf){ r, k };
                return true;
            }
    }
    return false;
}

/* ---- Probes: the instruction whose value is the leaf's result */

static const IrInstr *leaf_value(const IrComputation *comp, Leaf l)
{
    if (l.r->shape->type != IR_TYPE_TUPLE)
        return l.r;
    for (int i = 0; i < comp->n_instrs; i++) {
        const IrInstr *u = comp->instrs[i];
        if (u->op == IR_OP_GET_TUPLE_ELEMENT && u->operands[0] == l.r && u->ints[IR_INT_INDEX].v == l.i)
            return u;
    }
    return NULL;
}

/* From v up through single convert/transpose/reshape users to shape want. */
static const IrInstr *climb_to(const IrComputation *comp, const IrInstr *v, const IrShape *want)
{
    while (v && !ir_shape_equal(v->shape, want)) {
        const IrInstr *next = NULL;
        for (int i = 0; i < comp->n_instrs && !next; i++)
            if (is_layout_or_type_op(comp->instrs[i]) && comp->instrs[i]->operands[0] == v)
                next = comp->instrs[i];
        v = next;
    }
    return v;
}

/* The probes of a site: the values of the two leaves in the computations
 * that hold them (the entry, or a loop body whose every execution is then
 * measured), before's climbed to after's shape through its converts. */
static void set_probes(CheckSite *s, Leaf lb, Leaf la)
{
    const IrComputation *cb = lb.r->parent, *ca = la.r->parent;
    const IrInstr *va = leaf_value(ca, la);
    const IrInstr *vb = va ? climb_to(cb, leaf_value(cb, lb), va->shape) : NULL;
    if (!va || !vb)
        return;
    snprintf(s->after_probe, sizeof s->after_probe, "%s", va->name);
    snprintf(s->before_probe, sizeof s->before_probe, "%s", vb->name);
}

static IrOpcode trivial_op(const IrComputation *comp);

static void add_site(CheckSite **sites, int *n, Leaf lb, Leaf la, const IrModule *after)
{
    *sites = xrealloc(*sites, (size_t)(*n + 1) * sizeof **sites);
    CheckSite *s = &(*sites)[(*n)++];
    memset(s, 0, sizeof *s);
    leaf_name(lb, s->before_name, sizeof s->before_name);
    leaf_name(la, s->after_name, sizeof s->after_name);
    snprintf(s->after_reduction, sizeof s->after_reduction, "%s", la.r->name);
    snprintf(s->comp, sizeof s->comp, "%s", la.r->parent->name);
    s->after_operand = la.i;
    s->op = la.r->op;
    s->before_type = leaf_shape(lb)->type;
    s->after_type = leaf_shape(la)->type;
    s->value_type = s->after_type;
    s->group_size = (int)ir_collective_group_size(after, la.r);
    /* Only a plain add/maximum/minimum can be redone exactly in f64. */
    if (trivial_op(la.r->info->comps[IR_COMP_TO_APPLY]) != IR_OP_COUNT)
        set_probes(s, lb, la);
}

static IrOpcode reducer_op(const IrInstr *r)
{
    const IrComputation *c = r->info->comps[IR_COMP_TO_APPLY];
    return c ? c->root->op : IR_OP_COUNT;
}

/* The same reduction of the same number of elements, in another type. */
static bool same_reduction(Leaf lb, Leaf la)
{
    return lb.r->op == la.r->op && reducer_op(lb.r) == reducer_op(la.r) &&
           ir_shape_elements(leaf_shape(lb)) == ir_shape_elements(leaf_shape(la));
}

static void sites_of(const IrModule *before, const IrModule *after, const IrInstr *r2, CheckSite **sites, int *n)
{
    for (int k = 0; k < r2->n_operands; k++) {
        /* Down the chain, the first instruction `before` reduces directly;
         * none when `before` already reduces this very operand (a combiner
         * only regrouped it). */
        const IrInstr *x = r2->operands[k];
        Leaf lb, la = { r2, k };
        bool found = false;
        const char *comp = r2->parent->name;
        if (find_before_leaf(before, comp, x->name, &lb))
            continue;
        while (!found && is_layout_or_type_op(x)) {
            x = x->operands[0];
            found = find_before_leaf(before, comp, x->name, &lb);
        }
        if (found && same_reduction(lb, la) && leaf_shape(lb)->type != leaf_shape(la)->type)
            add_site(sites, n, lb, la, after);
    }
}

int check_find_sites(const IrModule *before, const IrModule *after, CheckSite **sites)
{
    int n = 0;
    *sites = NULL;
    for (int c = 0; c < after->n_computations; c++) {
        const IrComputation *comp = after->computations[c];
        for (int i = 0; i < comp->n_instrs; i++)
            if (is_reduction(comp->instrs[i]))
                sites_of(before, after, comp->instrs[i], sites, &n);
    }
    return n;
}

/* ---- Probe modules */

IrModule *check_probe_module(const IrModule *m, const char *const *names, int n, Error *err)
{
    IrModule *p = ir_module_copy(m, err);
    if (!p || n == 0)
        return p;
    IrComputation *e = p->entry;
    IrInstr **ops = xcalloc((size_t)n + 1, sizeof *ops);
    IrShape **shapes = xcalloc((size_t)n + 1, sizeof *shapes);
    ops[0] = e->root;
    for (int k = 0; k < n; k++)
        if (!(ops[k + 1] = ir_computation_find(p->entry, names[k]))) {
            error_set(err, ERR_INTERNAL, e->loc, "probe: no instruction %s in the entry computation", names[k]);
            free(ops);
            free(shapes);
            ir_module_free(p);
            return NULL;
        }
    for (int k = 0; k <= n; k++)
        shapes[k] = ops[k]->shape;
    IrShape *s = ir_shape_new_tuple(p->arena, n + 1, shapes);
    IrInstr *t = xmust(ir_instr_new(p, IR_OP_TUPLE, ir_unique_name(e, "hlocheck.probes"), s, n + 1, ops));
    ir_computation_append(e, t);
    e->root = t;
    free(ops);
    free(shapes);
    return p;
}

/* ---- Exact probes: the site's reduction redone in f64 */

/* ROOT op(a, b) over two f64 scalars: the f64 twin of a trivial reducer. */
static IrComputation *f64_reducer(IrModule *m, IrOpcode op)
{
    char name[64];
    snprintf(name, sizeof name, "hlocheck.%s.f64", ir_opcode_name(op));
    IrComputation *c = ir_module_find_computation(m, name);
    if (c)
        return c;
    c = xmust(ir_computation_new(m, name));
    IrShape *s = ir_shape_new_array(m->arena, IR_TYPE_F64, 0, NULL);
    IrInstr *a = xmust(ir_instr_new(m, IR_OP_PARAMETER, "a", s, 0, NULL));
    IrInstr *b = xmust(ir_instr_new(m, IR_OP_PARAMETER, "b", s, 0, NULL));
    b->info->parameter_number = 1;
    IrInstr *ops[2] = { a, b };
    ir_computation_append(c, a);
    ir_computation_append(c, b);
    ir_computation_append(c, c->root = xmust(ir_instr_new(m, op, "r", s, 2, ops)));
    ir_module_insert_computation(m, c, 0);
    return c;
}

/* The op of a reducer that is exactly op(p0, p1) over scalars, when it is
 * add, maximum or minimum: what redo_f64's reducer computes.  op(a, a)
 * passed here once (both operands parameters), and its sites were
 * measured against a sum they do not compute. */
static IrOpcode trivial_op(const IrComputation *comp)
{
    IrOpcode op = comp ? interp_trivial_reducer(comp) : IR_OP_COUNT;
    return op == IR_OP_ADD || op == IR_OP_MAXIMUM || op == IR_OP_MINIMUM ? op : IR_OP_COUNT;
}

/* A single-operand copy of reduction r over x (f64), same groups and dims;
 * a fresh channel id where r has one, so the group mode is kept. */
static IrInstr *redo_f64(IrModule *m, IrComputation *e, const IrInstr *r, int k, IrInstr *x, IrComputation *red)
{
    const IrShape *leaf = r->shape->type == IR_TYPE_TUPLE ? r->shape->elements[k] : r->shape;
    IrShape *s = ir_shape_with_type(m->arena, leaf, IR_TYPE_F64);
    IrInstr *n = xmust(ir_instr_new(m, r->op, ir_unique_name(e, "hlocheck.exact"), s, 1, &x));
    ir_instr_copy_attrs(m, n, r);
    n->info->n_raw_attrs = 0;
    n->info->comps[IR_COMP_TO_APPLY] = red;
    if (r->ints[IR_INT_CHANNEL_ID].present)
        ir_set_channel_id(m, n, ir_fresh_channel_id(m));
    ir_computation_append(e, n);
    return n;
}

static IrInstr *unary(IrModule *m, IrComputation *e, IrOpcode op, IrInstr *x, IrElemType t, const char *base)
{
    IrInstr *n = xmust(ir_instr_new(m, op, ir_unique_name(e, base), ir_shape_with_type(m->arena, x->shape, t), 1, &x));
    ir_computation_append(e, n);
    return n;
}

IrInstr *check_site_instr(const IrModule *m, const CheckSite *site, const char *name)
{
    const IrComputation *c = ir_module_find_computation(m, site->comp);
    return c ? ir_computation_find(c, name) : NULL;
}

bool check_add_exact_probes(IrModule *p, CheckSite *sites, int n_sites, Error *err)
{
    for (int s = 0; s < n_sites; s++) {
        if (!sites[s].measured)
            continue;
        IrInstr *r = check_site_instr(p, &sites[s], sites[s].after_reduction);
        IrOpcode op = r ? trivial_op(r->info->comps[IR_COMP_TO_APPLY]) : IR_OP_COUNT;
        if (op == IR_OP_COUNT)
            return error_set(err, ERR_UNSUPPORTED, r ? r->info->loc : p->entry->loc,
                             "site %s: only add/maximum/minimum reductions can be redone exactly", sites[s].after_name);
        /* Beside R', in its own computation: nothing reads them, but the
         * interpreter computes every instruction, each time R' runs. */
        IrComputation *e = r->parent;
        IrComputation *red = f64_reducer(p, op);
        IrInstr *w = unary(p, e, IR_OP_CONVERT, r->operands[sites[s].after_operand], IR_TYPE_F64, "hlocheck.wide");
        IrInstr *a = unary(p, e, IR_OP_ABS, w, IR_TYPE_F64, "hlocheck.abs");
        IrInstr *exact = redo_f64(p, e, r, sites[s].after_operand, w, red);
        IrInstr *abs_sum = redo_f64(p, e, r, sites[s].after_operand, a, f64_reducer(p, IR_OP_ADD));
        snprintf(sites[s].exact_probe, sizeof sites[s].exact_probe, "%s", exact->name);
        snprintf(sites[s].abs_sum_probe, sizeof sites[s].abs_sum_probe, "%s", abs_sum->name);
    }
    return true;
}
