/* sites.c: where a rewrite changed the type a reduction accumulates in, read
 * from the two modules (not assumed from the pass list), and probes that
 * expose those values as extra outputs so their accuracy can be measured.
 *
 * A site is an all-reduce or reduce-scatter R' of `after` whose operand,
 * followed down through convert / transpose / reshape, is an instruction x
 * that some reduction R of `before` reduces directly, with R's element type
 * different from R''s: flip-reduce-convert-add turns convert(R(x)) into
 * R'(convert(x)); the transpose flip with a convert does the same under a
 * transpose. */
#include "check.h"

#include <stdlib.h>
#include <string.h>

static bool is_reduction(const IrInstr *instr)
{
    return (instr->op == IR_OP_ALL_REDUCE || instr->op == IR_OP_REDUCE_SCATTER) && instr->n_operands == 1 &&
           instr->shape->type != IR_TYPE_TUPLE;
}

static bool is_layout_or_type_op(const IrInstr *instr)
{
    return instr->op == IR_OP_CONVERT || instr->op == IR_OP_TRANSPOSE || instr->op == IR_OP_RESHAPE;
}

/* Down through convert/transpose/reshape from R''s operand. */
static const IrInstr *source_of(const IrInstr *r)
{
    const IrInstr *x = r->operands[0];
    while (is_layout_or_type_op(x) && x->n_operands == 1)
        x = x->operands[0];
    return x;
}

static const IrInstr *reduction_of(const IrModule *m, const char *operand_name)
{
    for (int c = 0; c < m->n_computations; c++) {
        const IrComputation *comp = m->computations[c];
        for (int i = 0; i < comp->n_instrs; i++) {
            const IrInstr *instr = comp->instrs[i];
            if (is_reduction(instr) && strcmp(instr->operands[0]->name, operand_name) == 0)
                return instr;
        }
    }
    return NULL;
}

static void add_site(CheckSite **sites, int *n, const IrInstr *r, const IrInstr *r2, const IrModule *after)
{
    *sites = xrealloc(*sites, (size_t)(*n + 1) * sizeof **sites);
    CheckSite *s = &(*sites)[(*n)++];
    memset(s, 0, sizeof *s);
    snprintf(s->before_name, sizeof s->before_name, "%s", r->name);
    snprintf(s->after_name, sizeof s->after_name, "%s", r2->name);
    s->op = r2->op;
    s->before_type = r->shape->type;
    s->after_type = r2->shape->type;
    s->value_type = r2->shape->type;
    s->group_size = (int)ir_collective_group_size(after, r2);
}

int check_find_sites(const IrModule *before, const IrModule *after, CheckSite **sites)
{
    int n = 0;
    *sites = NULL;
    for (int c = 0; c < after->n_computations; c++) {
        const IrComputation *comp = after->computations[c];
        for (int i = 0; i < comp->n_instrs; i++) {
            const IrInstr *r2 = comp->instrs[i];
            if (!is_reduction(r2))
                continue;
            const IrInstr *x = source_of(r2);
            const IrInstr *r = x == r2->operands[0] ? NULL : reduction_of(before, x->name);
            if (r && r->shape->type != r2->shape->type)
                add_site(sites, &n, r, r2, after);
        }
    }
    return n;
}

/* ---- Probes */

static IrInstr *entry_instr(const IrModule *m, const char *name)
{
    const IrComputation *e = m->entry;
    for (int i = 0; i < e->n_instrs; i++)
        if (strcmp(e->instrs[i]->name, name) == 0)
            return e->instrs[i];
    return NULL;
}

IrModule *check_probe_module(const IrModule *m, const char *const *names, int n, Error *err)
{
    StrBuf text;
    strbuf_init(&text);
    ir_print_module(&text, m);
    IrModule *p = ir_parse_module(text.s, text.len, m->file, err);
    strbuf_free(&text);
    if (!p || n == 0)
        return p;
    IrComputation *e = p->entry;
    IrInstr **ops = xcalloc((size_t)n + 1, sizeof *ops);
    IrShape **shapes = xcalloc((size_t)n + 1, sizeof *shapes);
    ops[0] = e->root;
    for (int k = 0; k < n; k++)
        if (!(ops[k + 1] = entry_instr(p, names[k]))) {
            error_set(err, ERR_INTERNAL, e->loc, "probe: no instruction %s in the entry computation", names[k]);
            free(ops);
            free(shapes);
            ir_module_free(p);
            return NULL;
        }
    for (int k = 0; k <= n; k++)
        shapes[k] = ops[k]->shape;
    IrShape *s = ir_shape_new_tuple(p->arena, n + 1, shapes);
    IrInstr *t = ir_instr_new(p, IR_OP_TUPLE, ir_unique_name(e, "hlocheck.probes"), s, n + 1, ops);
    ir_computation_append(e, t);
    e->root = t;
    free(ops);
    free(shapes);
    return p;
}
