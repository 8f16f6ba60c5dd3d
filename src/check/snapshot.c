/* snapshot.c: replaying an HloSnapshot, the module XLA ran with the
 * arguments of one execution and the result it gave (XLA's
 * --xla_dump_hlo_snapshots).  The arguments become the parameters; the
 * recorded result is held to the tolerance table (tolerance.c), output by
 * output: what another implementation of XLA's semantics may differ by. */
#include "check.h"
#include "check_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

bool check_snapshot_params(const IrSnapshot *s, const IrModule *m, Value **params, Error *err)
{
    const IrComputation *entry = m->entry;
    IrLoc at = { m->file, 0, 0 };
    if (!s)
        return error_set(err, ERR_MISMATCH, at, "not an HloSnapshot: it records no arguments");
    if (s->n_arguments != entry->n_params)
        return error_set(err, ERR_MISMATCH, at, "the snapshot records %d argument(s); the entry computation %s "
                         "takes %d", s->n_arguments, entry->name, entry->n_params);
    for (int p = 0; p < entry->n_params; p++) {
        const IrShape *want = entry->params[p]->shape, *got = s->arguments[p]->shape;
        if (!ir_shape_equal(want, got)) {
            char a[160];
            snprintf(a, sizeof a, "%s", ir_shape_str(got));
            error_set(err, ERR_MISMATCH, at, "arguments[%d] is %s; parameter %d (%%%s) is %s", p, a, p,
                      entry->params[p]->name, ir_shape_str(want));
        } else if ((params[p] = value_from_literal(s->arguments[p], want, err)) != NULL) {
            continue;
        }
        for (int k = 0; k < p; k++)
            value_release(params[k]);
        return false;
    }
    return true;
}

/* i as an index of dims: [2,0,1]. */
static void put_index(StrBuf *b, int64_t i, const IrShape *s)
{
    int64_t idx[IR_MAX_RANK];
    for (int d = s->rank - 1; d >= 0; d--) {
        idx[d] = s->dims[d] ? i % s->dims[d] : 0;
        i = s->dims[d] ? i / s->dims[d] : 0;
    }
    strbuf_putc(b, '[');
    for (int d = 0; d < s->rank; d++)
        strbuf_printf(b, "%s%" PRId64, d ? "," : "", idx[d]);
    strbuf_putc(b, ']');
}

static void put_element(StrBuf *b, const Value *v, int64_t i)
{
    char buf[96];
    IrElemType t = v->shape->type;
    const char *p = (const char *)v->data + (size_t)i * (size_t)ir_type_storage_bytes(t);
    if (ir_type_is_complex(t)) {
        IrElemType part = t == IR_TYPE_C64 ? IR_TYPE_F32 : IR_TYPE_F64;
        size_t half = (size_t)ir_type_storage_bytes(part);
        ir_elem_format(part, p, true, buf, sizeof buf);
        strbuf_printf(b, "(%s, ", buf);
        ir_elem_format(part, p + half, true, buf, sizeof buf);
        strbuf_printf(b, "%s)", buf);
        return;
    }
    ir_elem_format(t, p, true, buf, sizeof buf);
    strbuf_puts(b, buf);
}

/* Can XLA have recorded a result of shape rec for a root of shape decl?
 * The same shape, but that XLA records a dimension of dynamic size at its
 * runtime size. */
static bool recorded_fits(const IrShape *rec, const IrShape *decl)
{
    if (rec->type != decl->type)
        return false;
    if (rec->type == IR_TYPE_TUPLE) {
        if (rec->n_elements != decl->n_elements)
            return false;
        for (int i = 0; i < rec->n_elements; i++)
            if (!recorded_fits(rec->elements[i], decl->elements[i]))
                return false;
        return true;
    }
    if (rec->rank != decl->rank)
        return false;
    for (int d = 0; d < rec->rank; d++) {
        bool dynamic = decl->dim_kind && decl->dim_kind[d] != IR_DIM_STATIC;
        if (dynamic ? rec->dims[d] > decl->dims[d] : rec->dims[d] != decl->dims[d])
            return false;
    }
    return true;
}

int check_snapshot_compare(const IrModule *m, const Value *result, const char *who, StrBuf *report, Error *err)
{
    const IrSnapshot *s = m->snapshot;
    IrLoc at = { m->file, 0, 0 };
    if (!s || !s->result) {
        error_set(err, ERR_MISMATCH, at, "the snapshot records no result to compare with");
        return -1;
    }
    if (!recorded_fits(s->result->shape, m->entry->root->shape)) {
        char a[160];
        snprintf(a, sizeof a, "%s", ir_shape_str(s->result->shape));
        error_set(err, ERR_MISMATCH, at, "the recorded result is %s; the entry computation returns %s", a,
                  ir_shape_str(m->entry->root->shape));
        return -1;
    }
    Value *recorded = value_from_literal(s->result, s->result->shape, err);
    if (!recorded)
        return -1;
    int n = value_leaves((Value *)result, NULL, 0);
    Value **got = xcalloc((size_t)(n ? n : 1), sizeof *got), **want = xcalloc((size_t)(n ? n : 1), sizeof *want);
    CheckLeafTolerance *tol = xcalloc((size_t)(n ? n : 1), sizeof *tol);
    Value **packed = xcalloc((size_t)(n ? n : 1), sizeof *packed);
    Arena *shapes = xmust(arena_new(1024));
    value_leaves((Value *)result, got, n);
    value_leaves(recorded, want, n);
    check_output_tolerances(m, tol, n);
    int differ = 0;
    /* An output of dynamic size is compared at its runtime shape, as XLA
     * records it: the padding is no part of it. */
    for (int i = 0; i < n; i++)
        if (got[i]->sizes && ir_shape_is_array(got[i]->shape)) {
            if (!(packed[i] = value_box_copy(shapes, (Value *)got[i], NULL, err))) {
                differ = -1;
                goto out;
            }
            got[i] = packed[i];
        }
    for (int i = 0; i < n; i++) {
        CheckLeafDistance d;
        bool ok = check_leaf_within(&tol[i], got[i], want[i], &d);
        CheckTolClass c = tol[i].cls;
        strbuf_printf(report, "hlo-run: snapshot: %sout%d %s: ", who, i, ir_shape_str(got[i]->shape));
        if (c == CHECK_TOL_UNSPECIFIED) {
            strbuf_puts(report, "not compared (rng: its values are each implementation's own)\n");
            continue;
        }
        strbuf_printf(report, "%s %s (%s", ok ? "within" : "DIFFERS beyond", check_tol_class_name(c),
                      check_tol_class_measure(c));
        if (c != CHECK_TOL_EXACT)
            strbuf_printf(report, " %g in %s", check_tol_class_tolerance(c), ir_type_name(tol[i].measure_type));
        if (c != CHECK_TOL_EXACT && d.worst < 1e300)
            strbuf_printf(report, "; largest %g", d.worst);
        strbuf_puts(report, ")");
        if (!ok) {
            differ++;
            if (d.shape_differs) {
                strbuf_printf(report, ": recorded %s", ir_shape_str(want[i]->shape));
            } else {
                strbuf_printf(report, ": %" PRId64 " of %" PRId64 " elements, first ", d.n_bad,
                              value_elements(got[i]));
                put_index(report, d.first, got[i]->shape);
                strbuf_puts(report, ": ");
                put_element(report, got[i], d.first);
                strbuf_puts(report, " here, ");
                put_element(report, want[i], d.first);
                strbuf_puts(report, " recorded");
            }
        }
        strbuf_putc(report, '\n');
    }
out:
    for (int i = 0; i < n; i++)
        value_release(packed[i]);
    free(packed);
    arena_free(shapes);
    free(got);
    free(want);
    free(tol);
    value_release(recorded);
    return differ;
}
