/* print.c: canonical HLO text for modules, computations, instructions and
 * literals (§9 of hlo-reference.md), and the atomic module writer.
 *
 * The output is read back identically by our parser and by XLA's, so
 * print(parse(print(parse(x)))) == print(parse(x)) for every module.  Style:
 * `%` sigils on names, operands without shapes, result shapes with layouts,
 * literals in XLA's one-line form, attributes in the order documented at
 * print_attrs(). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* fileno, fsync, getpid */
#endif
#include "ir.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- Small pieces */

static void put_i64(StrBuf *b, int64_t v)
{
    strbuf_printf(b, "%lld", (long long)v);
}

/* {1,0}: XLA's list style, no spaces. */
static void put_i64_list(StrBuf *b, const int64_t *v, int n)
{
    strbuf_putc(b, '{');
    for (int i = 0; i < n; i++) {
        if (i > 0)
            strbuf_putc(b, ',');
        put_i64(b, v[i]);
    }
    strbuf_putc(b, '}');
}

/* dims joined by sep, as in 2x2 or 1,0. */
static void put_i64_joined(StrBuf *b, const int64_t *v, int n, char sep)
{
    for (int i = 0; i < n; i++) {
        if (i > 0)
            strbuf_putc(b, sep);
        put_i64(b, v[i]);
    }
}

static void put_name(StrBuf *b, const char *name)
{
    strbuf_putc(b, '%');
    strbuf_puts(b, name);
}

/* The text of a quoted word between its quotes.  The parser keeps a string's
 * escapes as written, so an escape sequence is copied through unchanged; only
 * what cannot stand raw inside quotes is escaped (absl::CEscape style: a bare
 * " as \", newline, tab and CR by name, other control bytes as octal).  This
 * keeps parsed text stable and makes text set by a pass printable. */
static void put_quoted_text(StrBuf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\\' && p[1]) {
            strbuf_putn(b, (const char *)p, 2);
            p++;
            continue;
        }
        switch (*p) {
        case '\n': strbuf_puts(b, "\\n"); break;
        case '\r': strbuf_puts(b, "\\r"); break;
        case '\t': strbuf_puts(b, "\\t"); break;
        case '"':  strbuf_puts(b, "\\\""); break;
        case '\\': strbuf_puts(b, "\\\\"); break;   /* a lone trailing backslash */
        default:
            if (*p < 0x20 || *p == 0x7f)
                strbuf_printf(b, "\\%03o", *p);
            else
                strbuf_putc(b, (char)*p);
        }
    }
}

/* ---- Replica groups: {{0,1},{2,3}}, {} or [G,S]<=[dims]T(perm). */

static void print_explicit_groups(StrBuf *b, const IrReplicaGroups *g)
{
    strbuf_putc(b, '{');
    for (int i = 0; i < g->n_groups; i++) {
        if (i > 0)
            strbuf_putc(b, ',');
        put_i64_list(b, g->groups[i], g->group_sizes[i]);
    }
    strbuf_putc(b, '}');
}

static void print_iota_groups(StrBuf *b, const IrReplicaGroups *g)
{
    strbuf_printf(b, "[%lld,%lld]<=[", (long long)g->iota_groups, (long long)g->iota_size);
    put_i64_joined(b, g->iota_dims, g->n_iota_dims, ',');
    strbuf_putc(b, ']');
    if (g->iota_perm) {
        strbuf_puts(b, "T(");
        put_i64_joined(b, g->iota_perm, g->n_iota_dims, ',');
        strbuf_putc(b, ')');
    }
}

/* IR_GROUPS_NONE prints {} (all participants), like an empty explicit list. */
void ir_print_replica_groups(StrBuf *b, const IrReplicaGroups *g)
{
    switch (g->form) {
    case IR_GROUPS_NONE:
        strbuf_puts(b, "{}");
        return;
    case IR_GROUPS_EXPLICIT:
        print_explicit_groups(b, g);
        return;
    case IR_GROUPS_IOTA:
        print_iota_groups(b, g);
        return;
    case IR_GROUPS_MESH:
        strbuf_puts(b, g->mesh_text);
        return;
    }
}

/* ---- Literals, in the one-line form of XLA's PrintWithoutShapeOneline:
 *   rank 1          {1, 2, 3}
 *   rank >= 2       { { 1, 2 }, { 3, 4 } }   innermost of size <= 1: { {1}, {2} }
 *   rank > 3        every brace that is neither outermost nor innermost
 *                   carries a comment "/ *iK=V* /" (without the inner spaces)
 *                   naming the index V of its parent dimension K
 *   scalars bare (pred as true/false), pred arrays as 0/1, tuples ( a, b ). */

typedef struct LitWalk {
    const IrShape *shape;
    const unsigned char *data;
    size_t elem_bytes;
    int64_t next;                   /* row-major index of the next element */
    int64_t index[IR_MAX_RANK];     /* current position in each dimension */
} LitWalk;

static int64_t lit_dim_size(const LitWalk *w, int depth)
{
    int64_t n = w->shape->dims[depth];
    return n < 0 ? 0 : n;
}

static void lit_element(StrBuf *b, LitWalk *w)
{
    char buf[160];
    const void *p = w->data + (size_t)w->next * w->elem_bytes;
    ir_elem_format(w->shape->type, p, w->shape->rank == 0, buf, sizeof buf);
    strbuf_puts(b, buf);
    w->next++;
}

static void lit_open(StrBuf *b, const LitWalk *w, int depth)
{
    int rank = w->shape->rank;
    int64_t n = lit_dim_size(w, depth);
    strbuf_putc(b, '{');
    if (rank == 1)
        return;
    if (depth == rank - 1) {
        if (n > 1)
            strbuf_putc(b, ' ');
        return;
    }
    if (rank > 3 && depth > 0) {
        strbuf_printf(b, " /*i%d=%lld*/", depth - 1, (long long)w->index[depth - 1]);
        if (n > 0)
            strbuf_putc(b, ' ');
        return;
    }
    strbuf_putc(b, ' ');
}

static void lit_close(StrBuf *b, const LitWalk *w, int depth)
{
    int rank = w->shape->rank;
    if (rank > 1 && (depth < rank - 1 || lit_dim_size(w, depth) > 1))
        strbuf_putc(b, ' ');
    strbuf_putc(b, '}');
}

static void lit_dims(StrBuf *b, LitWalk *w, int depth)
{
    if (depth == w->shape->rank) {
        lit_element(b, w);
        return;
    }
    int64_t n = lit_dim_size(w, depth);
    lit_open(b, w, depth);
    for (int64_t i = 0; i < n; i++) {
        w->index[depth] = i;
        lit_dims(b, w, depth + 1);
        if (i < n - 1)
            strbuf_puts(b, ", ");
    }
    lit_close(b, w, depth);
}

static void print_array_literal(StrBuf *b, const IrLiteral *lit, const IrShape *shape)
{
    bool no_values = !lit->data && ir_shape_elements(shape) > 0;
    if (no_values || shape->rank > IR_MAX_RANK) {
        strbuf_puts(b, "{...}");    /* nothing we can print: treat as elided */
        return;
    }
    LitWalk w = {
        .shape = shape,
        .data = lit->data,
        .elem_bytes = (size_t)ir_type_storage_bytes(shape->type),
    };
    lit_dims(b, &w, 0);
}

static void print_tuple_literal(StrBuf *b, const IrLiteral *lit)
{
    strbuf_puts(b, "( ");
    for (int i = 0; i < lit->n_elements; i++) {
        if (i > 0)
            strbuf_puts(b, ", ");
        ir_print_literal(b, lit->elements[i]);
    }
    strbuf_puts(b, " )");
}

void ir_print_literal(StrBuf *b, const IrLiteral *lit)
{
    const IrShape *shape = lit ? lit->shape : NULL;
    if (!shape || lit->elided) {
        strbuf_puts(b, "{...}");
        return;
    }
    if (shape->type == IR_TYPE_TUPLE)
        print_tuple_literal(b, lit);
    else if (shape->type == IR_TYPE_TOKEN)
        strbuf_puts(b, "token");
    else
        print_array_literal(b, lit, shape);
}

/* ---- Instructions */

/* Async opcodes.  For IR_OP_ASYNC_START / _UPDATE / _DONE, async_wrapped says
 * which spelling the text used:
 *   - a real wrapped opcode (REDUCE_SCATTER, ALL_TO_ALL, CUSTOM_CALL, ...):
 *     the sugared form, printed <wrapped name>-start / -update / -done
 *     according to op;
 *   - IR_OP_ASYNC_START (the parser's marker for the generic long form), any
 *     other async opcode, or an out-of-range value: async-start /
 *     async-update / async-done.
 * Every other opcode prints ir_op_info[op].name. */
static const char *async_suffix(IrOpcode op)
{
    return op == IR_OP_ASYNC_START ? "-start" : op == IR_OP_ASYNC_UPDATE ? "-update" : "-done";
}

static bool is_async_op(IrOpcode op)
{
    return op == IR_OP_ASYNC_START || op == IR_OP_ASYNC_UPDATE || op == IR_OP_ASYNC_DONE;
}

static void print_opcode(StrBuf *b, const IrInstr *instr)
{
    IrOpcode wrapped = instr->info->async_wrapped;
    bool sugared = is_async_op(instr->op) && (unsigned)wrapped < IR_OP_COUNT && !is_async_op(wrapped);
    if (!sugared) {
        strbuf_puts(b, ir_op_info[instr->op].name);
        return;
    }
    strbuf_puts(b, ir_op_info[wrapped].name);
    strbuf_puts(b, async_suffix(instr->op));
}

static void print_operands(StrBuf *b, const IrInstr *instr)
{
    strbuf_putc(b, '(');
    if (instr->op == IR_OP_PARAMETER) {
        put_i64(b, instr->info->parameter_number);
    } else if (instr->op == IR_OP_CONSTANT) {
        ir_print_literal(b, instr->info->literal);
    } else {
        for (int i = 0; i < instr->n_operands; i++) {
            if (i > 0)
                strbuf_puts(b, ", ");
            put_name(b, instr->operands[i]->name);
        }
    }
    strbuf_putc(b, ')');
}

/* ---- Attributes.  Each prints ", name=value" or nothing. */

static void attr_begin(StrBuf *b, const char *name)
{
    strbuf_puts(b, ", ");
    strbuf_puts(b, name);
    strbuf_putc(b, '=');
}

static void print_int_attr(StrBuf *b, const IrInstr *instr, IrIntAttr k)
{
    if (!instr->ints[k].present)
        return;
    attr_begin(b, ir_int_attr_name[k]);
    put_i64(b, instr->ints[k].v);
}

static void print_bool_attr(StrBuf *b, const IrInstr *instr, IrBoolAttr k)
{
    if (instr->info->bools[k])
        strbuf_printf(b, ", %s=true", ir_bool_attr_name[k]);
}

/* channel_id, replica_groups, constrain_layout: the collective prefix. */
static void print_collective_attrs(StrBuf *b, const IrInstr *instr)
{
    print_int_attr(b, instr, IR_INT_CHANNEL_ID);
    if (instr->info->replica_groups.form != IR_GROUPS_NONE) {
        attr_begin(b, "replica_groups");
        ir_print_replica_groups(b, &instr->info->replica_groups);
    }
    print_bool_attr(b, instr, IR_BOOL_CONSTRAIN_LAYOUT);
}

static void print_list_attrs(StrBuf *b, const IrInstr *instr)
{
    for (int k = 0; k < IR_LIST_COUNT; k++) {
        const IrIntList *l = &instr->lists[k];
        if (!l->present)
            continue;
        attr_begin(b, ir_list_attr_name[k]);
        put_i64_list(b, l->v, l->n);
    }
}

static void print_other_ints(StrBuf *b, const IrInstr *instr)
{
    for (int k = 0; k < IR_INT_COUNT; k++)
        if (k != IR_INT_CHANNEL_ID && k != IR_INT_FEATURE_GROUP_COUNT && k != IR_INT_BATCH_GROUP_COUNT)
            print_int_attr(b, instr, (IrIntAttr)k);
}

/* One part of dim_labels: a at its dimension, b at its, digit k at spatial[k]. */
static void put_conv_labels(StrBuf *b, char a, int64_t da, char bl, int64_t db, const int64_t *spatial, int n)
{
    char s[IR_MAX_RANK + 3];
    for (int i = 0; i < n + 2; i++)
        s[i] = '?';
    s[da] = a;
    s[db] = bl;
    for (int k = 0; k < n; k++)
        s[spatial[k]] = (char)('0' + k);
    s[n + 2] = 0;
    strbuf_puts(b, s);
}

/* dim_labels=b01f_01io->b01f, then feature_group_count and
 * batch_group_count: the order of XLA's printer. */
static void print_conv_attrs(StrBuf *b, const IrInstr *instr)
{
    const IrConvDims *d = instr->info->conv_dims;
    if (d) {
        attr_begin(b, "dim_labels");
        put_conv_labels(b, 'b', d->input_batch, 'f', d->input_feature, d->input_spatial, d->n_spatial);
        strbuf_putc(b, '_');
        put_conv_labels(b, 'i', d->kernel_input_feature, 'o', d->kernel_output_feature, d->kernel_spatial,
                        d->n_spatial);
        strbuf_puts(b, "->");
        put_conv_labels(b, 'b', d->output_batch, 'f', d->output_feature, d->output_spatial, d->n_spatial);
    }
    print_int_attr(b, instr, IR_INT_FEATURE_GROUP_COUNT);
    print_int_attr(b, instr, IR_INT_BATCH_GROUP_COUNT);
}

static void print_other_bools(StrBuf *b, const IrInstr *instr)
{
    for (int k = 0; k < IR_BOOL_COUNT; k++)
        if (k == IR_BOOL_LARGEST && instr->op == IR_OP_TOPK)     /* true when absent: say which */
            strbuf_printf(b, ", largest=%s", instr->info->bools[k] ? "true" : "false");
        else if (k != IR_BOOL_CONSTRAIN_LAYOUT && k != IR_BOOL_USE_GLOBAL_DEVICE_IDS)
            print_bool_attr(b, instr, (IrBoolAttr)k);
}

static const char *compare_dir_name(IrCompareDir d)
{
    switch (d) {
    case IR_CMP_NONE: return NULL;
    case IR_CMP_EQ: return "EQ";
    case IR_CMP_NE: return "NE";
    case IR_CMP_LT: return "LT";
    case IR_CMP_LE: return "LE";
    case IR_CMP_GT: return "GT";
    case IR_CMP_GE: return "GE";
    }
    return NULL;
}

static const char *compare_type_name(IrCompareType t)
{
    switch (t) {
    case IR_CMPT_DEFAULT: return NULL;
    case IR_CMPT_FLOAT: return "FLOAT";
    case IR_CMPT_TOTALORDER: return "TOTALORDER";
    case IR_CMPT_SIGNED: return "SIGNED";
    case IR_CMPT_UNSIGNED: return "UNSIGNED";
    }
    return NULL;
}

static void print_compare_attrs(StrBuf *b, const IrInstr *instr)
{
    const char *dir = compare_dir_name(instr->info->direction);
    const char *type = compare_type_name(instr->info->compare_type);
    if (dir)
        strbuf_printf(b, ", direction=%s", dir);
    if (type)
        strbuf_printf(b, ", type=%s", type);
}

/* source_target_pairs={{0,1},{1,2}} */
static void print_source_target_pairs(StrBuf *b, const IrInstr *instr)
{
    if (!instr->info->has_source_target_pairs)
        return;
    attr_begin(b, "source_target_pairs");
    strbuf_putc(b, '{');
    for (int i = 0; i < instr->info->n_source_target_pairs; i++) {
        if (i > 0)
            strbuf_putc(b, ',');
        put_i64_list(b, instr->info->source_target_pairs[i], 2);
    }
    strbuf_putc(b, '}');
}

/* slice={[0:2], [1:5:2]}: strides for every dim only if one is not 1. */
static void print_slice(StrBuf *b, const IrInstr *instr)
{
    if (instr->info->n_slice < 0)
        return;
    bool strides = false;
    for (int i = 0; i < instr->info->n_slice; i++)
        strides |= instr->info->slice[i].stride != 1;
    attr_begin(b, "slice");
    strbuf_putc(b, '{');
    for (int i = 0; i < instr->info->n_slice; i++) {
        const IrSliceDim *d = &instr->info->slice[i];
        strbuf_printf(b, "%s[%lld:%lld", i > 0 ? ", " : "", (long long)d->start, (long long)d->limit);
        if (strides)
            strbuf_printf(b, ":%lld", (long long)d->stride);
        strbuf_putc(b, ']');
    }
    strbuf_putc(b, '}');
}

/* padding=lo_hi[_interior]x...: interiors for every dim only if one is
 * non-zero.  A rank-0 pad has no text XLA could read back, so it is omitted. */
static void print_padding(StrBuf *b, const IrInstr *instr)
{
    if (!instr->info->has_padding || instr->info->n_padding <= 0)
        return;
    bool interior = false;
    for (int i = 0; i < instr->info->n_padding; i++)
        interior |= instr->info->padding[i].interior != 0;
    attr_begin(b, "padding");
    for (int i = 0; i < instr->info->n_padding; i++) {
        const IrPadDim *d = &instr->info->padding[i];
        strbuf_printf(b, "%s%lld_%lld", i > 0 ? "x" : "", (long long)d->lo, (long long)d->hi);
        if (interior)
            strbuf_printf(b, "_%lld", (long long)d->interior);
    }
}

/* ---- window={size=2x2 stride=1x1 pad=0_0x0_0 lhs_dilate=1x1 rhs_dilate=1x1
 * rhs_reversal=0x1}: like XLA's window_util::ToString, each field after
 * size only when some dimension differs from its default. */

typedef enum WindowField {
    WF_SIZE, WF_STRIDE, WF_PAD, WF_LHS_DILATE, WF_RHS_DILATE, WF_REVERSAL, WF_COUNT
} WindowField;

static const char *const window_field_name[WF_COUNT] = {
    "size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal",
};

static bool window_dim_is_default(const IrWindowDim *d, WindowField f)
{
    switch (f) {
    case WF_SIZE: return false;
    case WF_STRIDE: return d->stride == 1;
    case WF_PAD: return d->pad_lo == 0 && d->pad_hi == 0;
    case WF_LHS_DILATE: return d->lhs_dilate == 1;
    case WF_RHS_DILATE: return d->rhs_dilate == 1;
    case WF_REVERSAL: return !d->reversal;
    case WF_COUNT: break;
    }
    return true;
}

static void put_window_dim(StrBuf *b, const IrWindowDim *d, WindowField f)
{
    switch (f) {
    case WF_SIZE: put_i64(b, d->size); return;
    case WF_STRIDE: put_i64(b, d->stride); return;
    case WF_PAD: strbuf_printf(b, "%lld_%lld", (long long)d->pad_lo, (long long)d->pad_hi); return;
    case WF_LHS_DILATE: put_i64(b, d->lhs_dilate); return;
    case WF_RHS_DILATE: put_i64(b, d->rhs_dilate); return;
    case WF_REVERSAL: strbuf_putc(b, d->reversal ? '1' : '0'); return;
    case WF_COUNT: return;
    }
}

static bool window_field_needed(const IrInstr *instr, WindowField f)
{
    for (int i = 0; i < instr->info->n_window; i++)
        if (!window_dim_is_default(&instr->info->window[i], f))
            return true;
    return false;
}

static void print_window(StrBuf *b, const IrInstr *instr)
{
    if (!instr->info->has_window)
        return;
    attr_begin(b, "window");
    strbuf_putc(b, '{');
    bool first = true;
    for (int f = 0; f < WF_COUNT; f++) {
        if (!window_field_needed(instr, (WindowField)f))
            continue;
        strbuf_printf(b, "%s%s=", first ? "" : " ", window_field_name[f]);
        first = false;
        for (int i = 0; i < instr->info->n_window; i++) {
            if (i > 0)
                strbuf_putc(b, 'x');
            put_window_dim(b, &instr->info->window[i], (WindowField)f);
        }
    }
    strbuf_putc(b, '}');
}

/* ---- Words, computations, control edges, raw attributes */

static void print_word_attrs(StrBuf *b, const IrInstr *instr)
{
    for (int k = 0; k < IR_WORD_COUNT; k++) {
        const char *w = instr->info->words[k];
        if (!w)
            continue;
        attr_begin(b, ir_word_attr_name[k]);
        if (!ir_word_attr_quoted[k]) {
            strbuf_puts(b, w);
            continue;
        }
        strbuf_putc(b, '"');
        put_quoted_text(b, w);
        strbuf_putc(b, '"');
    }
}

static void print_comp_attrs(StrBuf *b, const IrInstr *instr)
{
    for (int k = 0; k < IR_COMP_COUNT; k++) {
        if (!instr->info->comps[k])
            continue;
        attr_begin(b, ir_comp_attr_name[k]);
        put_name(b, instr->info->comps[k]->name);
    }
}

static void print_branches(StrBuf *b, const IrInstr *instr)
{
    if (instr->info->n_branches <= 0)
        return;
    attr_begin(b, "branch_computations");
    strbuf_putc(b, '{');
    for (int i = 0; i < instr->info->n_branches; i++) {
        if (i > 0)
            strbuf_puts(b, ", ");
        put_name(b, instr->info->branches[i]->name);
    }
    strbuf_putc(b, '}');
}

static void print_control_predecessors(StrBuf *b, const IrInstr *instr)
{
    if (instr->n_control_predecessors <= 0)
        return;
    attr_begin(b, "control-predecessors");
    strbuf_putc(b, '{');
    for (int i = 0; i < instr->n_control_predecessors; i++) {
        if (i > 0)
            strbuf_puts(b, ", ");
        put_name(b, instr->control_predecessors[i]->name);
    }
    strbuf_putc(b, '}');
}

static void print_raw_attrs(StrBuf *b, const IrRawAttr *attrs, int n)
{
    for (int i = 0; i < n; i++) {
        attr_begin(b, attrs[i].name);
        strbuf_puts(b, attrs[i].value);
    }
}

/* The attributes that say what the op computes, in the printed order. */
static void print_op_attrs(StrBuf *b, const IrInstr *instr)
{
    print_collective_attrs(b, instr);
    print_list_attrs(b, instr);
    print_bool_attr(b, instr, IR_BOOL_USE_GLOBAL_DEVICE_IDS);
    print_other_ints(b, instr);
    print_other_bools(b, instr);
    print_compare_attrs(b, instr);
    print_source_target_pairs(b, instr);
    print_slice(b, instr);
    print_padding(b, instr);
    print_window(b, instr);
    print_conv_attrs(b, instr);
    print_word_attrs(b, instr);
}

void ir_print_semantic_attrs(StrBuf *b, const IrInstr *instr)
{
    print_op_attrs(b, instr);
    for (int i = 0; i < instr->info->n_raw_attrs; i++)
        if (strcmp(instr->info->raw_attrs[i].name, "metadata") != 0)
            print_raw_attrs(b, &instr->info->raw_attrs[i], 1);
}

/* The printed order: channel_id, replica_groups, constrain_layout, the int
 * lists (attrs.def order), use_global_device_ids, the other ints, the other
 * true bools, direction, type, source_target_pairs, slice, padding, window,
 * dim_labels, feature_group_count, batch_group_count, words, computations,
 * branch_computations, control-predecessors, then the raw attributes in
 * source order. */
static void print_attrs(StrBuf *b, const IrInstr *instr)
{
    print_op_attrs(b, instr);
    print_comp_attrs(b, instr);
    print_branches(b, instr);
    print_control_predecessors(b, instr);
    print_raw_attrs(b, instr->info->raw_attrs, instr->info->n_raw_attrs);
}

/* [ROOT ]%name = shape opcode(operands), attrs -- no indent, no newline. */
void ir_print_instr(StrBuf *b, const IrInstr *instr)
{
    if (instr->parent && instr->parent->root == instr)
        strbuf_puts(b, "ROOT ");
    put_name(b, instr->name);
    strbuf_puts(b, " = ");
    ir_shape_print(b, instr->shape, true);
    strbuf_putc(b, ' ');
    print_opcode(b, instr);
    print_operands(b, instr);
    print_attrs(b, instr);
}

/* ---- Computations and modules */

static bool is_entry(const IrComputation *comp)
{
    return comp->module ? comp->module->entry == comp : comp->is_entry;
}

/* (p0: f32[4]{0}, p1: s32[]) -> f32[4]{0} */
static void print_signature(StrBuf *b, const IrComputation *comp)
{
    strbuf_putc(b, '(');
    bool first = true;
    for (int k = 0; k < comp->n_params; k++) {
        const IrInstr *p = comp->params[k];
        if (!p)
            continue;
        strbuf_printf(b, "%s%s: ", first ? "" : ", ", p->name);
        ir_shape_print(b, p->shape, true);
        first = false;
    }
    strbuf_puts(b, ") -> ");
    if (comp->root)
        ir_shape_print(b, comp->root->shape, true);
    else
        strbuf_puts(b, "()");
}

void ir_print_computation(StrBuf *b, const IrComputation *comp)
{
    if (is_entry(comp))
        strbuf_puts(b, "ENTRY ");
    put_name(b, comp->name);
    strbuf_putc(b, ' ');
    print_signature(b, comp);
    strbuf_puts(b, " {\n");
    for (int i = 0; i < comp->n_instrs; i++) {
        const IrInstr *instr = comp->instrs[i];
        if (instr->dead)
            continue;
        strbuf_puts(b, "  ");
        ir_print_instr(b, instr);
        strbuf_putc(b, '\n');
    }
    strbuf_putc(b, '}');
    if (comp->execution_thread) {
        strbuf_puts(b, ", execution_thread=");
        strbuf_puts(b, comp->execution_thread);
    }
}

static void print_header(StrBuf *b, const IrModule *m)
{
    strbuf_puts(b, "HloModule ");
    strbuf_puts(b, m->name ? m->name : "module");
    if (m->is_scheduled)
        strbuf_puts(b, ", is_scheduled=true");
    print_raw_attrs(b, m->header_attrs, m->n_header_attrs);
    if (m->replica_count.present)
        strbuf_printf(b, ", replica_count=%lld", (long long)m->replica_count.v);
    if (m->num_partitions.present)
        strbuf_printf(b, ", num_partitions=%lld", (long long)m->num_partitions.v);
    strbuf_puts(b, "\n\n");
}

/* The stack-frame tables verbatim, without surrounding blank space. */
static void print_stack_frames(StrBuf *b, const char *text)
{
    while (*text == '\n' || *text == '\r' || *text == ' ' || *text == '\t')
        text++;
    size_t n = strlen(text);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '
                     || text[n - 1] == '\t'))
        n--;
    if (n == 0)
        return;
    strbuf_putn(b, text, n);
    strbuf_puts(b, "\n\n");
}

void ir_print_module(StrBuf *b, const IrModule *m)
{
    print_header(b, m);
    if (m->stack_frames)
        print_stack_frames(b, m->stack_frames);
    for (int i = 0; i < m->n_computations; i++) {
        if (i > 0)
            strbuf_putc(b, '\n');
        ir_print_computation(b, m->computations[i]);
        strbuf_putc(b, '\n');
    }
}

/* ---- Writing a module to a file */

static bool write_stdout(const StrBuf *text, Error *err)
{
    size_t n = text->len;
    if ((n > 0 && fwrite(text->s, 1, n, stdout) != n) || fflush(stdout) != 0)
        return error_set(err, ERR_IO, (IrLoc){"-", 0, 0}, "cannot write to stdout: %s",
                         strerror(errno));
    return true;
}

static bool write_atomic(const StrBuf *text, const char *path, Error *err)
{
    IrAtomicFile a;
    if (!ir_atomic_open(&a, path, err))
        return false;
    errno = 0;
    return ir_atomic_close(&a, text->len == 0 || fwrite(text->s, 1, text->len, a.f) == text->len, err);
}

bool ir_write_module_file(const IrModule *m, const char *path, Error *err)
{
    return ir_write_module_file_as(m, path, IR_FORMAT_TEXT, NULL, err);
}

bool ir_write_module_file_as(const IrModule *m, const char *path, IrFormat fmt, StrBuf *note, Error *err)
{
    StrBuf text;
    strbuf_init_may_fail(&text);
    if (fmt == IR_FORMAT_PROTO) {
        if (!ir_proto_write(&text, m, note, err)) {
            strbuf_free(&text);
            return false;
        }
    } else {
        ir_print_module(&text, m);
    }
    bool to_stdout = !path || strcmp(path, "-") == 0;
    bool ok = strbuf_check(&text, err) &&
              (to_stdout ? write_stdout(&text, err) : write_atomic(&text, path, err));
    strbuf_free(&text);
    return ok;
}

/* loc takes from's place; a file name of its own (a proto's field path,
 * "file: computations[3].instructions[17]") is copied into c's arena, since
 * m may be freed first. */
static void keep_loc(IrModule *c, const IrModule *m, IrLoc *loc, IrLoc from)
{
    loc->line = from.line;
    loc->col = from.col;
    if (from.file && m->file && strcmp(from.file, m->file) != 0) {
        const char *f = arena_strdup(c->arena, from.file);
        if (f)
            loc->file = f;
    }
}

/* The copy is parsed from printed text, so its locations would name lines
 * of that text, not of the file the user gave: each computation and
 * instruction takes its original's line and column instead (line 0 for
 * what a pass made).  The copy prints computations and instructions in the
 * same order, which the names confirm. */
static void keep_locations(IrModule *c, const IrModule *m)
{
    c->source_kind = m->source_kind;
    if (m->source_note)
        c->source_note = arena_strdup(c->arena, m->source_note);
    if (c->n_computations != m->n_computations)
        return;
    for (int k = 0; k < m->n_computations; k++) {
        IrComputation *cc = c->computations[k];
        const IrComputation *mc = m->computations[k];
        if (cc->n_instrs != mc->n_instrs || strcmp(cc->name, mc->name) != 0)
            continue;
        keep_loc(c, m, &cc->loc, mc->loc);
        for (int i = 0; i < mc->n_instrs; i++) {
            IrInstr *ci = cc->instrs[i];
            const IrInstr *mi = mc->instrs[i];
            if (strcmp(ci->name, mi->name) == 0) {
                keep_loc(c, m, &ci->info->loc, mi->info->loc);
            }
        }
    }
}

IrModule *ir_module_copy(const IrModule *m, Error *err)
{
    StrBuf text;
    strbuf_init_may_fail(&text);
    ir_print_module(&text, m);
    IrModule *c = strbuf_check(&text, err) ? ir_parse_module(text.s, text.len, m->file, err) : NULL;
    strbuf_free(&text);
    if (c)
        keep_locations(c, m);
    return c;
}

bool ir_module_text_equal(const IrModule *a, const IrModule *b)
{
    StrBuf ta, tb;
    strbuf_init(&ta);
    strbuf_init(&tb);
    ir_print_module(&ta, a);
    ir_print_module(&tb, b);
    bool same = ta.len == tb.len && (ta.len == 0 || memcmp(ta.s, tb.s, ta.len) == 0);
    strbuf_free(&ta);
    strbuf_free(&tb);
    return same;
}
