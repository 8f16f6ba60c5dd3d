/* test_print.c: the printer and the shape helpers on modules built by hand
 * with the module.c API (no parser involved). */
#include "ir.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* ---- Helpers */

static IrShape *shape_of(IrModule *m, IrElemType t, int rank, const int64_t *dims, bool layout)
{
    IrShape *s = ir_shape_new_array(m->arena, t, rank, dims);
    if (layout && rank > 0) {
        s->has_layout = true;
        s->minor_to_major = ARENA_ARRAY(m->arena, int64_t, (size_t)rank);
        for (int i = 0; i < rank; i++)
            s->minor_to_major[i] = rank - 1 - i;
    }
    return s;
}

static IrShape *vec(IrModule *m, IrElemType t, int64_t n)
{
    return shape_of(m, t, 1, &n, true);
}

static IrShape *scalar(IrModule *m, IrElemType t)
{
    return shape_of(m, t, 0, NULL, false);
}

/* Prints with fn into a static buffer and frees the StrBuf. */
static const char *shape_text(const IrShape *s, bool layout)
{
    static char out[1024];
    StrBuf b;
    strbuf_init(&b);
    ir_shape_print(&b, s, layout);
    snprintf(out, sizeof out, "%s", b.s ? b.s : "");
    strbuf_free(&b);
    return out;
}

static const char *literal_text(const IrLiteral *lit)
{
    static char out[1024];
    StrBuf b;
    strbuf_init(&b);
    ir_print_literal(&b, lit);
    snprintf(out, sizeof out, "%s", b.s ? b.s : "");
    strbuf_free(&b);
    return out;
}

static const char *instr_text(const IrInstr *instr)
{
    static char out[2048];
    StrBuf b;
    strbuf_init(&b);
    ir_print_instr(&b, instr);
    snprintf(out, sizeof out, "%s", b.s ? b.s : "");
    strbuf_free(&b);
    return out;
}

static IrLiteral *s32_literal(IrModule *m, IrShape *shape, const int32_t *v, size_t n)
{
    IrLiteral *lit = ARENA_NEW(m->arena, IrLiteral);
    lit->shape = shape;
    if (n > 0) {
        lit->data = arena_alloc(m->arena, n * sizeof *v);
        memcpy(lit->data, v, n * sizeof *v);
    }
    return lit;
}

static IrInstr *param(IrModule *m, IrComputation *c, const char *name, IrShape *s, int k)
{
    IrInstr *p = ir_instr_new(m, IR_OP_PARAMETER, name, s, 0, NULL);
    p->info->parameter_number = k;
    ir_computation_append(c, p);
    return p;
}

static void set_list(IrModule *m, IrInstr *instr, IrListAttr k, int n, const int64_t *v)
{
    int64_t *copy = ARENA_ARRAY(m->arena, int64_t, (size_t)(n > 0 ? n : 1));
    if (n > 0)
        memcpy(copy, v, (size_t)n * sizeof *v);
    ir_instr_set_list(m, instr, k, (IrIntList){ true, n, copy });
}

/* ---- Shapes */

static void test_shape_prints_layout_only_when_asked(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("t");
    IrShape *s = shape_of(m, IR_TYPE_F32, 2, (int64_t[]){8, 4}, true);
    assert_string_equal(shape_text(s, true), "f32[8,4]{1,0}");
    assert_string_equal(shape_text(s, false), "f32[8,4]");
    assert_string_equal(ir_shape_str(s), "f32[8,4]{1,0}");
    ir_module_free(m);
}

static void test_shape_scalar_layout_printed_only_with_tail(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("t");
    IrShape *s = scalar(m, IR_TYPE_F32);
    s->has_layout = true;
    assert_string_equal(shape_text(s, true), "f32[]");
    s->layout_tail = "T(128)";
    assert_string_equal(shape_text(s, true), "f32[]{:T(128)}");
    IrShape *t = shape_of(m, IR_TYPE_BF16, 2, (int64_t[]){8, 128}, true);
    t->layout_tail = "T(8,128)(2,1)S(1)";
    assert_string_equal(shape_text(t, true), "bf16[8,128]{1,0:T(8,128)(2,1)S(1)}");
    ir_module_free(m);
}

static void test_shape_dynamic_dims(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("t");
    IrShape *s = shape_of(m, IR_TYPE_S32, 3, (int64_t[]){8, 4, -1}, false);
    s->dim_kind = arena_alloc(m->arena, 3);
    s->dim_kind[0] = IR_DIM_BOUNDED;
    s->dim_kind[2] = IR_DIM_UNBOUNDED;
    assert_string_equal(shape_text(s, true), "s32[<=8,4,?]");
    assert_int_equal(ir_shape_elements(s), -1);
    ir_module_free(m);
}

static void test_shape_tuples_tokens_buffers(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("t");
    IrShape *inner = ir_shape_new_tuple(m->arena, 2,
                                        (IrShape *[]){vec(m, IR_TYPE_F32, 2), scalar(m, IR_TYPE_S32)});
    IrShape *empty = ir_shape_new_tuple(m->arena, 0, NULL);
    IrShape *tok = scalar(m, IR_TYPE_TOKEN);
    IrShape *outer = ir_shape_new_tuple(m->arena, 3, (IrShape *[]){inner, empty, tok});
    assert_string_equal(shape_text(outer, true), "((f32[2]{0}, s32[]), (), token[])");
    IrShape *buf = ir_shape_new_tuple(m->arena, 1, (IrShape *[]){vec(m, IR_TYPE_F32, 4)});
    buf->is_buffer = true;
    assert_string_equal(shape_text(buf, true), "b(f32[4]{0})");
    assert_false(ir_shape_is_tuple(buf));
    assert_int_equal(ir_shape_byte_size(buf), 16);
    ir_module_free(m);
}

static void test_shape_str_truncates(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("t");
    IrShape *leaves[64];
    for (int i = 0; i < 64; i++)
        leaves[i] = vec(m, IR_TYPE_F32, 1000 + i);
    IrShape *t = ir_shape_new_tuple(m->arena, 64, leaves);
    const char *s = ir_shape_str(t);
    assert_true(strlen(s) < 256);
    assert_string_equal(s + strlen(s) - 3, "...");
    ir_module_free(m);
}

static void test_shape_sizes_equality_and_copies(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("t");
    IrShape *a = shape_of(m, IR_TYPE_F32, 2, (int64_t[]){8, 4}, true);
    IrShape *b = shape_of(m, IR_TYPE_F32, 2, (int64_t[]){8, 4}, false);
    IrShape *t = ir_shape_new_tuple(m->arena, 2, (IrShape *[]){a, vec(m, IR_TYPE_BF16, 3)});
    assert_int_equal(ir_shape_elements(a), 32);
    assert_int_equal(ir_shape_byte_size(a), 128);
    assert_int_equal(ir_shape_byte_size(t), 128 + 6);
    assert_int_equal(ir_shape_elements(t), 0);
    assert_true(ir_shape_equal(a, b));
    assert_false(ir_shape_equal(a, t));
    IrShape *c = ir_shape_clone(m->arena, t);
    assert_true(c != t && c->elements[0] != a);
    assert_true(ir_shape_equal(c, t));
    assert_string_equal(shape_text(c, true), "(f32[8,4]{1,0}, bf16[3]{0})");
    IrShape *d = ir_shape_with_type(m->arena, t, IR_TYPE_S8);
    assert_string_equal(shape_text(d, true), "(s8[8,4]{1,0}, s8[3]{0})");
    assert_string_equal(shape_text(t, true), "(f32[8,4]{1,0}, bf16[3]{0})");
    assert_true(ir_shape_equal_dims(a, d->elements[0]));
    assert_false(ir_shape_equal(a, d->elements[0]));
    ir_module_free(m);
}

/* ---- Literals */

static void test_literal_scalars_and_vectors(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("t");
    IrLiteral *one = s32_literal(m, scalar(m, IR_TYPE_S32), (int32_t[]){-7}, 1);
    assert_string_equal(literal_text(one), "-7");
    IrLiteral *v = s32_literal(m, vec(m, IR_TYPE_S32, 3), (int32_t[]){1, 2, 3}, 3);
    assert_string_equal(literal_text(v), "{1, 2, 3}");
    IrLiteral *none = s32_literal(m, vec(m, IR_TYPE_S32, 0), NULL, 0);
    assert_string_equal(literal_text(none), "{}");
    ir_module_free(m);
}

static void test_literal_pred_scalar_words_array_digits(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("t");
    IrLiteral *s = ARENA_NEW(m->arena, IrLiteral);
    s->shape = scalar(m, IR_TYPE_PRED);
    s->data = arena_alloc(m->arena, 1);
    ((unsigned char *)s->data)[0] = 1;
    assert_string_equal(literal_text(s), "true");
    IrLiteral *a = ARENA_NEW(m->arena, IrLiteral);
    a->shape = vec(m, IR_TYPE_PRED, 3);
    a->data = arena_alloc(m->arena, 3);
    memcpy(a->data, (unsigned char[]){1, 0, 1}, 3);
    assert_string_equal(literal_text(a), "{1, 0, 1}");
    ir_module_free(m);
}

static void test_literal_rank2_spacing(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("t");
    int32_t v[] = {1, 2, 3, 4};
    IrShape *s22 = shape_of(m, IR_TYPE_S32, 2, (int64_t[]){2, 2}, true);
    assert_string_equal(literal_text(s32_literal(m, s22, v, 4)), "{ { 1, 2 }, { 3, 4 } }");
    IrShape *s21 = shape_of(m, IR_TYPE_S32, 2, (int64_t[]){2, 1}, true);
    assert_string_equal(literal_text(s32_literal(m, s21, v, 2)), "{ {1}, {2} }");
    IrShape *s20 = shape_of(m, IR_TYPE_S32, 2, (int64_t[]){2, 0}, true);
    assert_string_equal(literal_text(s32_literal(m, s20, v, 0)), "{ {}, {} }");
    IrShape *s03 = shape_of(m, IR_TYPE_S32, 2, (int64_t[]){0, 3}, true);
    assert_string_equal(literal_text(s32_literal(m, s03, v, 0)), "{  }");
    IrShape *s122 = shape_of(m, IR_TYPE_S32, 3, (int64_t[]){1, 2, 2}, true);
    assert_string_equal(literal_text(s32_literal(m, s122, v, 4)), "{ { { 1, 2 }, { 3, 4 } } }");
    ir_module_free(m);
}

static void test_literal_rank4_has_index_comments(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("t");
    int32_t v[] = {1, 2, 3, 4};
    IrShape *s = shape_of(m, IR_TYPE_S32, 4, (int64_t[]){2, 1, 1, 2}, true);
    assert_string_equal(literal_text(s32_literal(m, s, v, 4)),
                        "{ { /*i0=0*/ { /*i1=0*/ { 1, 2 } } }, { /*i0=1*/ { /*i1=0*/ { 3, 4 } } } }");
    ir_module_free(m);
}

static void test_literal_elided_tuple_token(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("t");
    IrLiteral *big = s32_literal(m, vec(m, IR_TYPE_S32, 100), NULL, 0);
    big->elided = true;
    assert_string_equal(literal_text(big), "{...}");
    IrLiteral *a = s32_literal(m, scalar(m, IR_TYPE_S32), (int32_t[]){1}, 1);
    IrLiteral *b = s32_literal(m, vec(m, IR_TYPE_S32, 2), (int32_t[]){2, 3}, 2);
    IrLiteral *tok = ARENA_NEW(m->arena, IrLiteral);
    tok->shape = scalar(m, IR_TYPE_TOKEN);
    IrLiteral *t = ARENA_NEW(m->arena, IrLiteral);
    t->shape = ir_shape_new_tuple(m->arena, 3, (IrShape *[]){(IrShape *)a->shape, (IrShape *)b->shape,
                                                            (IrShape *)tok->shape});
    t->n_elements = 3;
    t->elements = (IrLiteral *[]){a, b, tok};
    assert_string_equal(literal_text(t), "( 1, {2, 3}, token )");
    ir_module_free(m);
}

/* ---- Replica groups */

static const char *groups_text(const IrReplicaGroups *g)
{
    static char out[256];
    StrBuf b;
    strbuf_init(&b);
    ir_print_replica_groups(&b, g);
    snprintf(out, sizeof out, "%s", b.s);
    strbuf_free(&b);
    return out;
}

static void test_replica_groups_forms(void **state)
{
    (void)state;
    IrReplicaGroups g = {.form = IR_GROUPS_EXPLICIT};
    assert_string_equal(groups_text(&g), "{}");
    int64_t g0[] = {0, 2}, g1[] = {1, 3};
    g.n_groups = 3;
    g.group_sizes = (int[]){2, 2, 0};
    g.groups = (int64_t *[]){g0, g1, NULL};
    assert_string_equal(groups_text(&g), "{{0,2},{1,3},{}}");
    IrReplicaGroups iota = {.form = IR_GROUPS_IOTA, .iota_groups = 2, .iota_size = 4,
                            .n_iota_dims = 1, .iota_dims = (int64_t[]){8}};
    assert_string_equal(groups_text(&iota), "[2,4]<=[8]");
    iota.n_iota_dims = 2;
    iota.iota_dims = (int64_t[]){4, 2};
    iota.iota_perm = (int64_t[]){1, 0};
    assert_string_equal(groups_text(&iota), "[2,4]<=[4,2]T(1,0)");
}

/* ---- Instructions */

static void test_instr_collective_attribute_order(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("t");
    IrComputation *add = ir_computation_new(m, "add");
    IrComputation *c = ir_computation_new(m, "main");
    IrInstr *x = param(m, c, "x", vec(m, IR_TYPE_F32, 2), 0);
    IrInstr *ag = ir_instr_new(m, IR_OP_ALL_GATHER, "ag", vec(m, IR_TYPE_F32, 8), 1, &x);
    ir_computation_append(c, ag);
    ir_instr_set_int(m, ag, IR_INT_CHANNEL_ID, 3);
    ag->info->replica_groups = (IrReplicaGroups){.form = IR_GROUPS_IOTA, .iota_groups = 2, .iota_size = 4,
                                           .n_iota_dims = 1, .iota_dims = (int64_t[]){8}};
    ag->info->bools[IR_BOOL_CONSTRAIN_LAYOUT] = true;
    ag->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS] = true;
    set_list(m, ag, IR_LIST_DIMENSIONS, 1, (int64_t[]){0});
    ag->info->comps[IR_COMP_TO_APPLY] = add;
    ag->n_control_predecessors = 1;
    ag->control_predecessors = (IrInstr *[]){x};
    ag->info->raw_attrs = (IrRawAttr[]){{"sharding", "{replicated}"}, {"metadata", "{op_name=\"a\"}"}};
    ag->info->n_raw_attrs = 2;
    assert_string_equal(instr_text(ag),
                        "%ag = f32[8]{0} all-gather(%x), channel_id=3, replica_groups=[2,4]<=[8], "
                        "constrain_layout=true, dimensions={0}, use_global_device_ids=true, "
                        "to_apply=%add, control-predecessors={%x}, sharding={replicated}, "
                        "metadata={op_name=\"a\"}");
    ir_module_free(m);
}

static void test_instr_slice_pad_window(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("t");
    IrComputation *c = ir_computation_new(m, "main");
    IrInstr *x = param(m, c, "x", shape_of(m, IR_TYPE_F32, 2, (int64_t[]){4, 8}, true), 0);
    IrInstr *sl = ir_instr_new(m, IR_OP_SLICE, "s", shape_of(m, IR_TYPE_F32, 2, (int64_t[]){2, 2}, true), 1, &x);
    sl->info->n_slice = 2;
    sl->info->slice = (IrSliceDim[]){{0, 2, 1}, {1, 5, 1}};
    assert_string_equal(instr_text(sl), "%s = f32[2,2]{1,0} slice(%x), slice={[0:2], [1:5]}");
    sl->info->slice[1].stride = 2;
    assert_string_equal(instr_text(sl), "%s = f32[2,2]{1,0} slice(%x), slice={[0:2:1], [1:5:2]}");
    sl->info->n_slice = 0;
    assert_string_equal(instr_text(sl), "%s = f32[2,2]{1,0} slice(%x), slice={}");

    IrInstr *pad = ir_instr_new(m, IR_OP_PAD, "p", vec(m, IR_TYPE_F32, 4), 1, &x);
    pad->info->has_padding = true;
    pad->info->n_padding = 2;
    pad->info->padding = (IrPadDim[]){{0, 1, 0}, {-2, 2, 0}};
    assert_string_equal(instr_text(pad), "%p = f32[4]{0} pad(%x), padding=0_1x-2_2");
    pad->info->padding[0].interior = 1;
    assert_string_equal(instr_text(pad), "%p = f32[4]{0} pad(%x), padding=0_1_1x-2_2_0");

    IrInstr *rw = ir_instr_new(m, IR_OP_REDUCE_WINDOW, "r", vec(m, IR_TYPE_F32, 4), 1, &x);
    rw->info->has_window = true;
    rw->info->n_window = 2;
    rw->info->window = (IrWindowDim[]){{2, 1, 0, 0, 1, 1, false}, {3, 1, 0, 0, 1, 1, false}};
    assert_string_equal(instr_text(rw), "%r = f32[4]{0} reduce-window(%x), window={size=2x3}");
    rw->info->window[1] = (IrWindowDim){3, 2, 1, 1, 1, 2, true};
    assert_string_equal(instr_text(rw), "%r = f32[4]{0} reduce-window(%x), window={size=2x3 "
                                        "stride=1x2 pad=0_0x1_1 rhs_dilate=1x2 rhs_reversal=0x1}");
    rw->info->n_window = 0;
    assert_string_equal(instr_text(rw), "%r = f32[4]{0} reduce-window(%x), window={}");
    ir_module_free(m);
}

static void test_instr_compare_words_and_escapes(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("t");
    IrComputation *c = ir_computation_new(m, "main");
    IrInstr *x = param(m, c, "x", vec(m, IR_TYPE_F32, 4), 0);
    IrInstr *cmp = ir_instr_new(m, IR_OP_COMPARE, "c", vec(m, IR_TYPE_PRED, 4), 2, (IrInstr *[]){x, x});
    cmp->info->direction = IR_CMP_LT;
    cmp->info->compare_type = IR_CMPT_TOTALORDER;
    assert_string_equal(instr_text(cmp), "%c = pred[4]{0} compare(%x, %x), direction=LT, type=TOTALORDER");
    IrInstr *cc = ir_instr_new(m, IR_OP_CUSTOM_CALL, "cc", scalar(m, IR_TYPE_F32), 1, &x);
    /* Words hold the text between the quotes with its escapes as written. */
    cc->info->words[IR_WORD_CUSTOM_CALL_TARGET] = "x\\\"y\\n\\001";
    assert_string_equal(instr_text(cc), "%cc = f32[] custom-call(%x), custom_call_target=\"x\\\"y\\n\\001\"");
    /* Raw characters a pass might set are escaped; a trailing backslash too. */
    cc->info->words[IR_WORD_CUSTOM_CALL_TARGET] = "a\"b\n\x01\\";
    assert_string_equal(instr_text(cc), "%cc = f32[] custom-call(%x), custom_call_target=\"a\\\"b\\n\\001\\\\\"");
    IrInstr *f = ir_instr_new(m, IR_OP_FUSION, "f", scalar(m, IR_TYPE_F32), 1, &x);
    f->info->words[IR_WORD_FUSION_KIND] = "kLoop";
    f->info->comps[IR_COMP_CALLS] = c;
    assert_string_equal(instr_text(f), "%f = f32[] fusion(%x), kind=kLoop, calls=%main");
    ir_module_free(m);
}

static void test_instr_async_spellings(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("t");
    IrComputation *c = ir_computation_new(m, "main");
    IrInstr *x = param(m, c, "x", vec(m, IR_TYPE_F32, 4), 0);
    IrInstr *s = ir_instr_new(m, IR_OP_ASYNC_START, "s", vec(m, IR_TYPE_F32, 4), 1, &x);
    assert_string_equal(instr_text(s), "%s = f32[4]{0} async-start(%x)");
    s->info->async_wrapped = IR_OP_ASYNC_START;
    assert_string_equal(instr_text(s), "%s = f32[4]{0} async-start(%x)");
    s->info->async_wrapped = IR_OP_REDUCE_SCATTER;
    assert_string_equal(instr_text(s), "%s = f32[4]{0} reduce-scatter-start(%x)");
    IrInstr *u = ir_instr_new(m, IR_OP_ASYNC_UPDATE, "u", vec(m, IR_TYPE_F32, 4), 1, &s);
    u->info->async_wrapped = IR_OP_ALL_TO_ALL;
    assert_string_equal(instr_text(u), "%u = f32[4]{0} all-to-all-update(%s)");
    IrInstr *d = ir_instr_new(m, IR_OP_ASYNC_DONE, "d", vec(m, IR_TYPE_F32, 4), 1, &u);
    d->info->async_wrapped = IR_OP_CUSTOM_CALL;
    assert_string_equal(instr_text(d), "%d = f32[4]{0} custom-call-done(%u)");
    ir_module_free(m);
}

/* ---- Modules */

static IrModule *small_module(void)
{
    IrModule *m = ir_module_new("jit_f");
    IrComputation *add = ir_computation_new(m, "add");
    IrInstr *a = param(m, add, "a", scalar(m, IR_TYPE_F32), 0);
    IrInstr *b = param(m, add, "b", scalar(m, IR_TYPE_F32), 1);
    IrInstr *sum = ir_instr_new(m, IR_OP_ADD, "sum", scalar(m, IR_TYPE_F32), 2, (IrInstr *[]){a, b});
    ir_computation_append(add, sum);
    add->root = sum;
    add->params = ARENA_ARRAY(m->arena, IrInstr *, 2);
    add->params[0] = a;
    add->params[1] = b;
    add->n_params = 2;
    ir_module_insert_computation(m, add, -1);

    IrComputation *entry = ir_computation_new(m, "main");
    IrInstr *x = param(m, entry, "x", vec(m, IR_TYPE_F32, 8), 0);
    IrInstr *dead = ir_instr_new(m, IR_OP_NEGATE, "gone", vec(m, IR_TYPE_F32, 8), 1, &x);
    dead->dead = true;
    ir_computation_append(entry, dead);
    IrInstr *ar = ir_instr_new(m, IR_OP_ALL_REDUCE, "ar", vec(m, IR_TYPE_F32, 8), 1, &x);
    ar->info->replica_groups.form = IR_GROUPS_EXPLICIT;
    ar->info->comps[IR_COMP_TO_APPLY] = add;
    ir_computation_append(entry, ar);
    entry->root = ar;
    entry->params = ARENA_ARRAY(m->arena, IrInstr *, 1);
    entry->params[0] = x;
    entry->n_params = 1;
    entry->is_entry = true;
    m->entry = entry;
    ir_module_insert_computation(m, entry, -1);
    return m;
}

static const char small_module_text[] =
    "HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[8]{0})->f32[8]{0}}, "
    "replica_count=1, num_partitions=4\n"
    "\n"
    "%add (a: f32[], b: f32[]) -> f32[] {\n"
    "  %a = f32[] parameter(0)\n"
    "  %b = f32[] parameter(1)\n"
    "  ROOT %sum = f32[] add(%a, %b)\n"
    "}\n"
    "\n"
    "ENTRY %main (x: f32[8]{0}) -> f32[8]{0} {\n"
    "  %x = f32[8]{0} parameter(0)\n"
    "  ROOT %ar = f32[8]{0} all-reduce(%x), replica_groups={}, to_apply=%add\n"
    "}, execution_thread=\"main\"\n";

static void decorate(IrModule *m)
{
    static IrRawAttr header[] = {{"entry_computation_layout", "{(f32[8]{0})->f32[8]{0}}"}};
    m->is_scheduled = true;
    m->header_attrs = header;
    m->n_header_attrs = 1;
    m->replica_count = (IrOptInt){true, 1};
    m->num_partitions = (IrOptInt){true, 4};
    m->entry->execution_thread = "\"main\"";
}

static void test_module_text(void **state)
{
    (void)state;
    IrModule *m = small_module();
    decorate(m);
    StrBuf b;
    strbuf_init(&b);
    ir_print_module(&b, m);
    assert_string_equal(b.s, small_module_text);
    strbuf_free(&b);

    m->stack_frames = "FileNames\n1 \"a.py\"\nStackFrames\n1 {file_location_id=1}\n";
    strbuf_init(&b);
    ir_print_module(&b, m);
    assert_non_null(strstr(b.s, "num_partitions=4\n\nFileNames\n1 \"a.py\"\nStackFrames\n"
                                "1 {file_location_id=1}\n\n%add "));
    strbuf_free(&b);
    ir_module_free(m);
}

/* The printed text reads back through our parser and prints identically. */
static void test_module_text_reads_back(void **state)
{
    (void)state;
    IrModule *m = small_module();
    decorate(m);
    StrBuf a, b;
    strbuf_init(&a);
    strbuf_init(&b);
    ir_print_module(&a, m);
    Error err = {0};
    IrModule *back = ir_parse_module(a.s, a.len, "printed", &err);
    if (!back)
        fail_msg("%s", err.msg);
    ir_print_module(&b, back);
    assert_string_equal(b.s, a.s);
    strbuf_free(&a);
    strbuf_free(&b);
    ir_module_free(back);
    ir_module_free(m);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static void test_write_module_file_atomically(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_print_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/out.hlo", dir);
    IrModule *m = small_module();
    decorate(m);
    Error err = {0};
    assert_true(ir_write_module_file(m, path, &err));
    assert_string_equal(read_all(path), small_module_text);
    assert_true(ir_write_module_file(m, path, &err));   /* replaces an existing file */
    assert_string_equal(read_all(path), small_module_text);
    remove(path);
    rmdir(dir);
    ir_module_free(m);
}

static void test_write_module_file_reports_io_error(void **state)
{
    (void)state;
    IrModule *m = small_module();
    Error err = {0};
    assert_false(ir_write_module_file(m, "/nonexistent-dir/x.hlo", &err));
    assert_int_equal(err.code, ERR_IO);
    assert_string_equal(err.loc.file, "/nonexistent-dir/x.hlo");
    ir_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_prints_layout_only_when_asked),
        cmocka_unit_test(test_shape_scalar_layout_printed_only_with_tail),
        cmocka_unit_test(test_shape_dynamic_dims),
        cmocka_unit_test(test_shape_tuples_tokens_buffers),
        cmocka_unit_test(test_shape_str_truncates),
        cmocka_unit_test(test_shape_sizes_equality_and_copies),
        cmocka_unit_test(test_literal_scalars_and_vectors),
        cmocka_unit_test(test_literal_pred_scalar_words_array_digits),
        cmocka_unit_test(test_literal_rank2_spacing),
        cmocka_unit_test(test_literal_rank4_has_index_comments),
        cmocka_unit_test(test_literal_elided_tuple_token),
        cmocka_unit_test(test_replica_groups_forms),
        cmocka_unit_test(test_instr_collective_attribute_order),
        cmocka_unit_test(test_instr_slice_pad_window),
        cmocka_unit_test(test_instr_compare_words_and_escapes),
        cmocka_unit_test(test_instr_async_spellings),
        cmocka_unit_test(test_module_text),
        cmocka_unit_test(test_module_text_reads_back),
        cmocka_unit_test(test_write_module_file_atomically),
        cmocka_unit_test(test_write_module_file_reports_io_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
