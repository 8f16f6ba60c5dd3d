/* test_parse.c: every parser construct of hlo-reference.md, read into the IR
 * and checked field by field; errors checked for code and file:line:col. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static IrModule *parse_ok(const char *text)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
    if (!m)
        error_print(&err, stderr);
    assert_non_null(m);
    return m;
}

static Error parse_err(const char *text)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
    assert_null(m);
    return err;
}

static IrInstr *find(IrComputation *c, const char *name)
{
    for (int i = 0; i < c->n_instrs; i++)
        if (strcmp(c->instrs[i]->name, name) == 0)
            return c->instrs[i];
    fail_msg("no instruction %s", name);
    return NULL;
}

static void test_parse_short_and_long_styles_agree(void **state)
{
    (void)state;
    IrModule *a = parse_ok("HloModule m\nENTRY e {\n  x = f32[4]{0} parameter(0)\n"
                           "  ROOT y = f32[4]{0} negate(x)\n}\n");
    IrModule *b = parse_ok("HloModule m\n\nENTRY %e (x: f32[4]) -> f32[4] {\n"
                           "  %x = f32[4]{0} parameter(0)\n"
                           "  ROOT %y = f32[4]{0} negate(f32[4]{0} %x)\n}\n");
    IrInstr *ya = a->entry->root, *yb = b->entry->root;
    assert_string_equal(ya->name, "y");
    assert_string_equal(yb->name, "y");
    assert_int_equal(ya->op, IR_OP_NEGATE);
    assert_ptr_equal(yb->operands[0], b->entry->params[0]);
    assert_true(b->entry->has_signature);
    assert_false(a->entry->has_signature);
    ir_module_free(a);
    ir_module_free(b);
}

static void test_parse_comments_anywhere(void **state)
{
    (void)state;
    IrModule *m = parse_ok("// FileCheck line\nHloModule m /* c */\n"
                           "ENTRY e { // trailing\n  p = f32[2] /*x*/ parameter(0)\n"
                           "  ROOT t = (f32[2], f32[2]) tuple(p, /*index=1*/ p)\n}\n");
    assert_int_equal(m->entry->root->n_operands, 2);
    ir_module_free(m);
}

static void test_parse_header_attributes(void **state)
{
    (void)state;
    IrModule *m = parse_ok(
        "HloModule jit_step, is_scheduled=true, entry_computation_layout={(f32[8,4]{1,0})->f32[8,4]{1,0}}, "
        "replica_count=2, num_partitions=4, frontend_attributes={a=\"b\"}\n"
        "ENTRY e {\n  ROOT p = f32[8,4]{1,0} parameter(0)\n}\n");
    assert_string_equal(m->name, "jit_step");
    assert_true(m->is_scheduled);
    assert_true(m->replica_count.present);
    assert_int_equal(m->replica_count.v, 2);
    assert_int_equal(m->num_partitions.v, 4);
    assert_int_equal(m->n_header_attrs, 2);
    assert_string_equal(m->header_attrs[0].name, "entry_computation_layout");
    assert_string_equal(m->header_attrs[0].value, "{(f32[8,4]{1,0})->f32[8,4]{1,0}}");
    assert_string_equal(m->header_attrs[1].value, "{a=\"b\"}");
    ir_module_free(m);
}

static void test_parse_headerless_module_takes_entry_name(void **state)
{
    (void)state;
    IrModule *m = parse_ok("add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                           "  ROOT s = f32[] add(a, b)\n}\n"
                           "main {\n  ROOT c = f32[] constant(1)\n}\n");
    assert_string_equal(m->name, "module_main");
    assert_string_equal(m->entry->name, "main");   /* no ENTRY: the last one */
    assert_true(m->entry->is_entry);
    ir_module_free(m);
}

static void test_parse_iota_replica_groups(void **state)
{
    (void)state;
    IrModule *m = parse_ok(
        "HloModule m, num_partitions=8\n%add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
        " ROOT s = f32[] add(a, b) }\n"
        "ENTRY e {\n  p = f32[8] parameter(0)\n"
        "  r1 = f32[8] all-reduce(p), channel_id=1, replica_groups=[2,4]<=[8], use_global_device_ids=true, to_apply=%add\n"
        "  r2 = f32[8] all-reduce(p), channel_id=2, replica_groups=[4,2]<=[2,4]T(1,0), use_global_device_ids=true, to_apply=%add\n"
        "  ROOT r3 = f32[8] all-reduce(p), channel_id=3, replica_groups=[2,4]<=[2,2,2]T(0,2,1), use_global_device_ids=true, to_apply=%add\n}\n");
    IrReplicaGroups *g1 = &find(m->entry, "r1")->info->replica_groups;
    assert_int_equal(g1->form, IR_GROUPS_IOTA);
    assert_int_equal(g1->n_groups, 2);
    assert_int_equal(g1->groups[1][0], 4);
    assert_null(g1->iota_perm);
    IrReplicaGroups *g2 = &find(m->entry, "r2")->info->replica_groups;
    int64_t want2[4][2] = { { 0, 4 }, { 1, 5 }, { 2, 6 }, { 3, 7 } };
    for (int g = 0; g < 4; g++)
        for (int i = 0; i < 2; i++)
            assert_int_equal(g2->groups[g][i], want2[g][i]);
    IrReplicaGroups *g3 = &find(m->entry, "r3")->info->replica_groups;
    int64_t want3[2][4] = { { 0, 2, 1, 3 }, { 4, 6, 5, 7 } };
    for (int g = 0; g < 2; g++)
        for (int i = 0; i < 4; i++)
            assert_int_equal(g3->groups[g][i], want3[g][i]);
    assert_ptr_equal(find(m->entry, "r3")->info->comps[IR_COMP_TO_APPLY], m->computations[0]);
    assert_true(find(m->entry, "r1")->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS]);
    assert_int_equal(find(m->entry, "r2")->ints[IR_INT_CHANNEL_ID].v, 2);
    assert_int_equal(m->max_channel_id, 3);
    ir_module_free(m);
}

/* Mesh-form groups expand as XLA's MeshAxesReplicaGroupList does; each
 * case is checked against the groups worked out by hand (comments). */
static void assert_groups(const IrReplicaGroups *g, int n, int size, const int64_t *want)
{
    assert_int_equal(g->n_groups, n);
    for (int k = 0; k < n; k++) {
        assert_int_equal(g->group_sizes[k], size);
        for (int i = 0; i < size; i++)
            assert_int_equal(g->groups[k][i], want[k * size + i]);
    }
}

static IrReplicaGroups *mesh_groups(IrModule **m, const char *groups)
{
    char text[512];
    snprintf(text, sizeof text,
             "HloModule m, replica_count=8\n%%add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
             " ROOT s = f32[] add(a, b) }\n"
             "ENTRY e {\n  p#0 = f32[8] parameter(0)\n"
             "  ROOT r = f32[8] all-reduce(p#0), replica_groups=%s, to_apply=%%add\n}\n", groups);
    *m = parse_ok(text);
    IrInstr *r = (*m)->entry->root;
    assert_int_equal(r->info->replica_groups.form, IR_GROUPS_MESH);
    assert_string_equal(r->operands[0]->name, "p#0");
    return &r->info->replica_groups;
}

static void test_parse_mesh_replica_groups(void **state)
{
    (void)state;
    IrModule *m;
    /* minor axis b: rows of the 2x4 mesh */
    assert_groups(mesh_groups(&m, "mesh['a'=2,'b'=4]{'b'}"), 2, 4, (int64_t[]){ 0, 1, 2, 3, 4, 5, 6, 7 });
    ir_module_free(m);
    /* major axis a: columns */
    assert_groups(mesh_groups(&m, "mesh[a=2,b=4] {a}"), 4, 2, (int64_t[]){ 0, 4, 1, 5, 2, 6, 3, 7 });
    ir_module_free(m);
    /* both axes: one group of all */
    assert_groups(mesh_groups(&m, "mesh[\"a\"=2,\"b\"=4]{\"a\",\"b\"}"), 1, 8,
                  (int64_t[]){ 0, 1, 2, 3, 4, 5, 6, 7 });
    ir_module_free(m);
    /* a:(1)2 is the major factor of 8 = 2x4: {i, i+4} */
    assert_groups(mesh_groups(&m, "mesh[a=8]{a:(1)2}"), 4, 2, (int64_t[]){ 0, 4, 1, 5, 2, 6, 3, 7 });
    ir_module_free(m);
    /* a:(2)2 is the middle factor of 8 = 2x2x2: {i, i+2} within each half */
    assert_groups(mesh_groups(&m, "mesh[a=8]{a:(2)2}"), 4, 2, (int64_t[]){ 0, 2, 1, 3, 4, 6, 5, 7 });
    ir_module_free(m);
    /* the major and the minor factor of 8 = 2x2x2 together */
    assert_groups(mesh_groups(&m, "mesh[a=8]{a:(1)2,a:(4)2}"), 2, 4, (int64_t[]){ 0, 1, 4, 5, 2, 3, 6, 7 });
    ir_module_free(m);
    /* an explicit device order */
    assert_groups(mesh_groups(&m, "mesh[a=2,b=4], device_ids=(7,6,5,4,3,2,1,0) {b}"), 2, 4,
                  (int64_t[]){ 7, 6, 5, 4, 3, 2, 1, 0 });
    /* printed back as written */
    StrBuf b;
    strbuf_init(&b);
    ir_print_instr(&b, m->entry->root);
    assert_non_null(strstr(b.s, "replica_groups=mesh[a=2,b=4], device_ids=(7,6,5,4,3,2,1,0) {b}, to_apply=%add"));
    assert_non_null(strstr(b.s, "all-reduce(%p#0)"));
    strbuf_free(&b);
    ir_module_free(m);
}

static void test_parse_rejects_bad_mesh_groups(void **state)
{
    (void)state;
    const char *bad[][2] = {
        { "mesh[a=2,b=4]{c}", "'c' is not an axis of the mesh" },
        { "mesh[a=2,a=4]{a}", "named twice" },
        { "mesh[a=8]{a:(1)3}", "does not fit axis" },
        { "mesh[a=8]{a,a:(1)2}", "listed twice" },
        { "mesh[a=4], device_ids=(0,1,1,2) {a}", "each of the 4 devices once" },
        { "mesh[a=4]", "expected '{'" },
        { "mesh[a=1]{a}", "groups of one device" },
        { "mesh[a=8]{a:(1)4,a:(2)2}", "overlap" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "HloModule m\n%%add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                 " ROOT s = f32[] add(a, b) }\n"
                 "ENTRY e {\n  p = f32[8] parameter(0)\n"
                 "  ROOT r = f32[8] all-reduce(p), replica_groups=%s, to_apply=%%add\n}\n", bad[i][0]);
        Error err = parse_err(text);
        if (!strstr(err.msg, bad[i][1]))
            fail_msg("%s: got \"%s\", want \"%s\"", bad[i][0], err.msg, bad[i][1]);
        assert_int_equal(err.loc.line, 7);
    }
}

static void test_parse_convolution_attributes(void **state)
{
    (void)state;
    IrModule *m = parse_ok(
        "HloModule m\nENTRY e {\n  x = f32[8,3,9,9] parameter(0)\n  k = f32[3,3,3,16] parameter(1)\n"
        "  ROOT c = f32[8,16,5,5] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1 rhs_reversal=0x1}, "
        "dim_labels=bf01_01io->bf01, feature_group_count=1, batch_group_count=1\n}\n");
    IrInstr *c = m->entry->root;
    const IrConvDims *d = c->info->conv_dims;
    assert_non_null(d);
    assert_int_equal(d->n_spatial, 2);
    assert_int_equal(d->input_batch, 0);
    assert_int_equal(d->input_feature, 1);
    assert_int_equal(d->input_spatial[0], 2);
    assert_int_equal(d->input_spatial[1], 3);
    assert_int_equal(d->kernel_spatial[0], 0);
    assert_int_equal(d->kernel_input_feature, 2);
    assert_int_equal(d->kernel_output_feature, 3);
    assert_int_equal(d->output_feature, 1);
    assert_int_equal(c->info->n_window, 2);
    assert_int_equal(c->info->window[1].stride, 2);
    assert_true(c->info->window[1].reversal);
    assert_false(c->info->window[0].reversal);
    assert_int_equal(c->ints[IR_INT_FEATURE_GROUP_COUNT].v, 1);
    StrBuf b;
    strbuf_init(&b);
    ir_print_instr(&b, c);
    assert_non_null(strstr(b.s, ", window={size=3x3 stride=2x2 pad=1_1x1_1 rhs_reversal=0x1}, "
                                "dim_labels=bf01_01io->bf01, feature_group_count=1, batch_group_count=1"));
    strbuf_free(&b);
    ir_module_free(m);
    /* spatial digits out of order, kernel dims permuted */
    m = parse_ok("HloModule m\nENTRY e {\n  x = f32[1,5,5,2] parameter(0)\n  k = f32[2,3,3,4] parameter(1)\n"
                 "  ROOT c = f32[1,3,4,3] convolution(x, k), window={size=3x3}, dim_labels=b10f_o10i->b1f0\n}\n");
    d = m->entry->root->info->conv_dims;
    assert_int_equal(d->input_spatial[0], 2);
    assert_int_equal(d->input_spatial[1], 1);
    assert_int_equal(d->kernel_output_feature, 0);
    assert_int_equal(d->kernel_input_feature, 3);
    assert_int_equal(d->output_spatial[0], 3);
    assert_int_equal(d->output_feature, 2);
    ir_module_free(m);
    const char *bad[] = { "b01f_01io->b0f", "b01f_01io", "b00f_01io->b01f", "b01f_01xo->b01f", "b01f->b01f" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[400];
        snprintf(text, sizeof text,
                 "HloModule m\nENTRY e {\n  x = f32[1,5,5,2] parameter(0)\n  k = f32[3,3,2,4] parameter(1)\n"
                 "  ROOT c = f32[1,3,3,4] convolution(x, k), window={size=3x3}, dim_labels=%s\n}\n", bad[i]);
        Error err = parse_err(text);
        if (!strstr(err.msg, "malformed dim_labels"))
            fail_msg("%s: got \"%s\"", bad[i], err.msg);
    }
}

static void test_parse_explicit_and_empty_groups(void **state)
{
    (void)state;
    IrModule *m = parse_ok(
        "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
        "  a = f32[4] all-gather(p), replica_groups={{1,0},{3,2}}, dimensions={0}\n"
        "  ROOT b = f32[8] all-gather(p), replica_groups={}, dimensions={0}\n}\n");
    IrReplicaGroups *a = &find(m->entry, "a")->info->replica_groups;
    assert_int_equal(a->form, IR_GROUPS_EXPLICIT);
    assert_int_equal(a->n_groups, 2);
    assert_int_equal(a->groups[0][0], 1);
    assert_int_equal(a->groups[1][1], 2);
    IrReplicaGroups *b = &find(m->entry, "b")->info->replica_groups;
    assert_int_equal(b->form, IR_GROUPS_EXPLICIT);
    assert_int_equal(b->n_groups, 0);
    assert_int_equal(find(m->entry, "b")->lists[IR_LIST_DIMENSIONS].v[0], 0);
    ir_module_free(m);
}

static void test_parse_tuple_shapes(void **state)
{
    (void)state;
    IrModule *m = parse_ok(
        "HloModule m\nENTRY e {\n  p = (f32[2,3]{0,1:T(8,128)S(1)}, (s32[], pred[<=4,?]), ()) parameter(0)\n"
        "  ROOT g = (s32[], pred[<=4,?]) get-tuple-element(p), index=1\n}\n");
    IrShape *s = m->entry->params[0]->shape;
    assert_int_equal(s->type, IR_TYPE_TUPLE);
    assert_int_equal(s->n_elements, 3);
    IrShape *a = s->elements[0];
    assert_int_equal(a->type, IR_TYPE_F32);
    assert_int_equal(a->rank, 2);
    assert_true(a->has_layout);
    assert_int_equal(a->minor_to_major[0], 0);
    assert_string_equal(a->layout_tail, "T(8,128)S(1)");
    IrShape *pr = s->elements[1]->elements[1];
    assert_int_equal(pr->dim_kind[0], IR_DIM_BOUNDED);
    assert_int_equal(pr->dims[0], 4);
    assert_int_equal(pr->dim_kind[1], IR_DIM_UNBOUNDED);
    assert_int_equal(s->elements[2]->n_elements, 0);
    assert_int_equal(m->entry->root->ints[IR_INT_INDEX].v, 1);
    ir_module_free(m);
}

static void test_parse_literals_with_specials(void **state)
{
    (void)state;
    IrModule *m = parse_ok(
        "HloModule m\nENTRY e {\n"
        "  a = f32[6] constant({1, -2.5, inf, -inf, nan, 1e-05})\n"
        "  b = f32[2,2] constant({ { 1, 2 }, { 3, 4 } })\n"
        "  c = pred[3] constant({1, 0, 1})\n"
        "  d = pred[] constant(true)\n"
        "  e2 = s8[2] constant({-128, 127})\n"
        "  f = u64[] constant(18446744073709551615)\n"
        "  g = f32[] constant(-0)\n"
        "  h = bf16[] constant(nan(0x1))\n"
        "  i = f32[0,3] constant({})\n"
        "  j = f32[100] constant({...})\n"
        "  k = (f32[], s32[2]) constant((1.5, {3, 4}))\n"
        "  ROOT t = () tuple()\n}\n");
    IrComputation *c = m->entry;
    float *a = find(c, "a")->info->literal->data;
    assert_true(a[0] == 1.0f && a[1] == -2.5f && a[5] == 1e-05f);
    assert_true(isinf(a[2]) && a[2] > 0 && isinf(a[3]) && a[3] < 0 && isnan(a[4]));
    float *b = find(c, "b")->info->literal->data;
    assert_true(b[0] == 1 && b[1] == 2 && b[2] == 3 && b[3] == 4);
    uint8_t *pc = find(c, "c")->info->literal->data;
    assert_true(pc[0] == 1 && pc[1] == 0 && pc[2] == 1);
    assert_int_equal(*(uint8_t *)find(c, "d")->info->literal->data, 1);
    int8_t *e2 = find(c, "e2")->info->literal->data;
    assert_true(e2[0] == -128 && e2[1] == 127);
    assert_true(*(uint64_t *)find(c, "f")->info->literal->data == UINT64_MAX);
    float g = *(float *)find(c, "g")->info->literal->data;
    assert_true(g == 0 && signbit(g));
    uint16_t h = *(uint16_t *)find(c, "h")->info->literal->data;
    assert_int_equal(h & 0x7f80, 0x7f80);
    assert_int_equal(h & 0x7f, 0x1);
    assert_true(find(c, "j")->info->literal->elided);
    IrLiteral *k = find(c, "k")->info->literal;
    assert_int_equal(k->n_elements, 2);
    assert_true(*(float *)k->elements[0]->data == 1.5f);
    assert_int_equal(((int32_t *)k->elements[1]->data)[1], 4);
    ir_module_free(m);
}

static void test_parse_async_forms(void **state)
{
    (void)state;
    IrModule *m = parse_ok(
        "HloModule m\n%add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
        "ENTRY e {\n  x = f32[2,16] parameter(0)\n"
        "  ags = (f32[2,16], f32[8,16]) all-gather-start(x), channel_id=3, replica_groups=[2,4]<=[8], dimensions={0}, use_global_device_ids=true\n"
        "  agd = f32[8,16] all-gather-done(ags)\n"
        "  rss = ((f32[8,16]), f32[2,16]) reduce-scatter-start(agd), replica_groups={}, dimensions={0}, to_apply=%add\n"
        "  ROOT rsd = f32[2,16] reduce-scatter-done(rss)\n}\n");
    IrComputation *c = m->entry;
    assert_int_equal(find(c, "ags")->op, IR_OP_ALL_GATHER_START);
    assert_int_equal(find(c, "agd")->op, IR_OP_ALL_GATHER_DONE);
    IrInstr *rss = find(c, "rss");
    assert_int_equal(rss->op, IR_OP_ASYNC_START);
    assert_int_equal(rss->info->async_wrapped, IR_OP_REDUCE_SCATTER);
    IrInstr *rsd = find(c, "rsd");
    assert_int_equal(rsd->op, IR_OP_ASYNC_DONE);
    assert_int_equal(rsd->info->async_wrapped, IR_OP_REDUCE_SCATTER);
    assert_true(rsd->info->async_is_done);
    ir_module_free(m);
}

static void test_parse_custom_call_keeps_raw_attributes(void **state)
{
    (void)state;
    IrModule *m = parse_ok(
        "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n"
        "  ROOT c = f32[4] custom-call(x), custom_call_target=\"AwsNeuronTransferWithStaticRing\", "
        "api_version=API_VERSION_STATUS_RETURNING, backend_config={\"a\":{\"b\":\"}\"}}, "
        "metadata={op_type=\"x\" op_name=\"a\\\"b\" source_line=7},\n"
        "      sharding={devices=[2,1]0,1}\n}\n");
    IrInstr *c = m->entry->root;
    assert_string_equal(c->info->words[IR_WORD_CUSTOM_CALL_TARGET], "AwsNeuronTransferWithStaticRing");
    assert_int_equal(c->info->n_raw_attrs, 4);
    assert_string_equal(ir_raw_attr_get(c, "api_version"), "API_VERSION_STATUS_RETURNING");
    assert_string_equal(ir_raw_attr_get(c, "backend_config"), "{\"a\":{\"b\":\"}\"}}");
    assert_string_equal(ir_raw_attr_get(c, "metadata"), "{op_type=\"x\" op_name=\"a\\\"b\" source_line=7}");
    assert_string_equal(ir_raw_attr_get(c, "sharding"), "{devices=[2,1]0,1}");
    ir_module_free(m);
}

static void test_parse_multiline_instruction(void **state)
{
    (void)state;
    IrModule *m = parse_ok("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                           "  ag = f32[8] all-gather(p), replica_groups={},\n"
                           "      dimensions={0}\n  ROOT t = (f32[8]) tuple(ag)\n}\n");
    assert_int_equal(find(m->entry, "ag")->lists[IR_LIST_DIMENSIONS].n, 1);
    ir_module_free(m);
}

static void test_parse_structured_attributes(void **state)
{
    (void)state;
    IrModule *m = parse_ok(
        "HloModule m\n%max { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] maximum(a, b) }\n"
        "ENTRY e {\n  p = f32[4,6] parameter(0)\n  z = f32[] constant(0)\n"
        "  s = f32[2,2] slice(p), slice={[0:2], [1:5:2]}\n"
        "  d = f32[5,8] pad(p, z), padding=0_1x-1_1_1\n"
        "  w = f32[3,5] reduce-window(p, z), window={size=2x2 stride=1x1 pad=0_0x0_0}, to_apply=%max\n"
        "  c = pred[4,6] compare(p, p), direction=LT, type=TOTALORDER\n"
        "  cp = f32[4,6] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,0}}\n"
        "  ROOT t = (f32[2,2]) tuple(s), control-predecessors={c, cp}\n}\n");
    IrComputation *c = m->entry;
    IrInstr *s = find(c, "s");
    assert_int_equal(s->info->n_slice, 2);
    assert_int_equal(s->info->slice[1].start, 1);
    assert_int_equal(s->info->slice[1].limit, 5);
    assert_int_equal(s->info->slice[1].stride, 2);
    assert_int_equal(s->info->slice[0].stride, 1);
    IrInstr *d = find(c, "d");
    assert_int_equal(d->info->n_padding, 2);
    assert_int_equal(d->info->padding[1].lo, -1);
    assert_int_equal(d->info->padding[1].interior, 1);
    IrInstr *w = find(c, "w");
    assert_int_equal(w->info->n_window, 2);
    assert_int_equal(w->info->window[0].size, 2);
    assert_int_equal(w->info->window[0].lhs_dilate, 1);
    assert_int_equal(find(c, "c")->info->direction, IR_CMP_LT);
    assert_int_equal(find(c, "c")->info->compare_type, IR_CMPT_TOTALORDER);
    IrInstr *cp = find(c, "cp");
    assert_int_equal(cp->info->n_source_target_pairs, 2);
    assert_int_equal(cp->info->source_target_pairs[0][1], 1);
    IrInstr *t = c->root;
    assert_int_equal(t->n_control_predecessors, 2);
    assert_ptr_equal(t->control_predecessors[1], cp);
    ir_module_free(m);
}

static void test_parse_control_flow_references(void **state)
{
    (void)state;
    IrModule *m = parse_ok(
        "HloModule m\n"
        "cond { p = s32[] parameter(0)\n  z = s32[] constant(3)\n  ROOT lt = pred[] compare(p, z), direction=LT }\n"
        "body { p = s32[] parameter(0)\n  one = s32[] constant(1)\n  ROOT n = s32[] add(p, one) }\n"
        "b0 { ROOT p = s32[] parameter(0) }\n"
        "b1 { p = s32[] parameter(0)\n ROOT q = s32[] negate(p) }\n"
        "ENTRY e {\n  i = s32[] parameter(0)\n"
        "  w = s32[] while(i), condition=cond, body=%body\n"
        "  ROOT c = s32[] conditional(i, w, w), branch_computations={b0, %b1}\n}\n");
    IrComputation *c = m->entry;
    IrInstr *w = find(c, "w");
    assert_string_equal(w->info->comps[IR_COMP_CONDITION]->name, "cond");
    assert_string_equal(w->info->comps[IR_COMP_BODY]->name, "body");
    assert_int_equal(c->root->info->n_branches, 2);
    assert_string_equal(c->root->info->branches[1]->name, "b1");
    ir_module_free(m);
}

static void test_parse_stack_frames_and_execution_thread(void **state)
{
    (void)state;
    IrModule *m = parse_ok(
        "HloModule m\n\nFileNames\n1 \"a.py\"\nFunctionNames\n1 \"f\"\nFileLocations\n"
        "1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=2}\n"
        "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n\n"
        "async_c { ROOT p = f32[] parameter(0) }, execution_thread=\"x\"\n"
        "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
    assert_non_null(m->stack_frames);
    assert_true(strncmp(m->stack_frames, "FileNames", 9) == 0);
    assert_non_null(strstr(m->stack_frames, "parent_frame_id=1}"));
    assert_string_equal(m->computations[0]->execution_thread, "\"x\"");
    ir_module_free(m);
}

static void test_parse_accepts_attribute_without_spaces(void **state)
{
    (void)state;
    IrModule *m = parse_ok("HloModule m\nENTRY e {\n  %x.1=f32[] parameter(0)\n  y = f32[] negate(x.1)\n"
                           "  ROOT z=f32[] negate(y)\n}\n");
    assert_ptr_equal(m->entry->root->operands[0]->operands[0], m->entry->params[0]);
    ir_module_free(m);
}

/* ---- errors carry the exact place */

static void expect_error(const char *text, int line, int col, const char *substr)
{
    Error e = parse_err(text);
    assert_int_equal(e.code, ERR_SYNTAX);
    if (e.loc.line != line || e.loc.col != col || !strstr(e.msg, substr))
        fail_msg("got %d:%d '%s', want %d:%d containing '%s'", e.loc.line, e.loc.col, e.msg, line,
                 col, substr);
    assert_string_equal(e.loc.file, "t.hlo");
}

static void test_parse_reports_column_of_unknown_opcode(void **state)
{
    (void)state;
    expect_error("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT q = f32[] frobnicate(p)\n}\n",
                 4, 18, "unknown opcode 'frobnicate'");
}

static void test_parse_reports_undefined_operand(void **state)
{
    (void)state;
    expect_error("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT q = f32[] add(p, %r)\n}\n",
                 4, 25, "undefined instruction 'r'");
}

static void test_parse_reports_literal_count(void **state)
{
    (void)state;
    expect_error("HloModule m\nENTRY e {\n  ROOT c = f32[3] constant({1, 2})\n}\n", 3, 28,
                 "dimension 0 of f32[3] has 3 elements, literal gives 2");
    expect_error("HloModule m\nENTRY e {\n  ROOT c = s8[] constant(128)\n}\n", 3, 26,
                 "out of range for s8");
    /* XLA prints a scalar in full and its parser refuses an elided one */
    expect_error("HloModule m\nENTRY e {\n  ROOT c = f32[] constant({...})\n}\n", 3, 27,
                 "an elided literal {...} needs an array of rank 1 or more, not f32[]");
}

static void test_parse_reports_unterminated_comment(void **state)
{
    (void)state;
    expect_error("HloModule m\nENTRY e {\n  /* never closed\n  ROOT c = f32[] constant(1)\n}\n", 3, 3,
                 "unterminated");
}

static void test_parse_rejects_nul_byte(void **state)
{
    (void)state;
    const char text[] = "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\0\n}\n";
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, sizeof text - 1, "t.hlo", &err);
    assert_null(m);
    assert_int_equal(err.loc.line, 3);
    assert_int_equal(err.loc.col, 29);
}

/* ir_parse_module takes (text, len), not a C string: every prefix of a
 * module, in a heap block of exactly its length, parses or fails without
 * reading past the end (libFuzzer found `constant(` at the end read one
 * byte too far; under ASan this test sees any such read). */
static void test_parse_reads_no_byte_past_the_text(void **state)
{
    (void)state;
    const char *text =
        "HloModule m, replica_count=1\nENTRY e {\n  a = bf16[3] constant({-inf, nan, -nan(0x1)})\n"
        "  b = c64[] constant((1, -2.5e-3))\n  c = pred[2] constant({true, 0})\n  d = s8[] constant(-128)\n"
        "  e = f32[] constant(inf)\n  ROOT t = (bf16[3], c64[], pred[2], s8[], f32[]) tuple(a, b, c, d, e)\n}\n";
    size_t n = strlen(text);
    for (size_t len = 0; len <= n; len++) {
        char *exact = malloc(len ? len : 1);
        memcpy(exact, text, len);
        Error err = { 0 };
        IrModule *m = ir_parse_module(exact, len, "prefix.hlo", &err);
        assert_true(len == n ? m != NULL : (m == NULL) == (err.code != ERR_OK));
        if (m)
            ir_module_free(m);
        free(exact);
    }
}

static void test_parse_survives_every_allocation_failure(void **state)
{
    (void)state;
    const char *text =
        "HloModule m, entry_computation_layout={(f32[2])->f32[8]}\n%add { a = f32[] parameter(0)\n"
        " b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
        "ENTRY e {\n  p = f32[2] parameter(0)\n  c = f32[2] constant({1, 2})\n  q = f32[2] add(p, c)\n"
        "  ROOT r = f32[8] all-reduce(q), replica_groups=[2,4]<=[8], to_apply=%add, metadata={op_name=\"x\"}\n}\n";
    for (long n = 1;; n++) {
        Error err = { 0 };
        xmalloc_fail_after(n);
        IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
        xmalloc_fail_after(0);
        if (m) {
            ir_module_free(m);
            assert_true(n > 2);
            break;
        }
        assert_int_equal(err.code, ERR_NOMEM);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_short_and_long_styles_agree),
        cmocka_unit_test(test_parse_comments_anywhere),
        cmocka_unit_test(test_parse_header_attributes),
        cmocka_unit_test(test_parse_headerless_module_takes_entry_name),
        cmocka_unit_test(test_parse_iota_replica_groups),
        cmocka_unit_test(test_parse_mesh_replica_groups),
        cmocka_unit_test(test_parse_rejects_bad_mesh_groups),
        cmocka_unit_test(test_parse_convolution_attributes),
        cmocka_unit_test(test_parse_explicit_and_empty_groups),
        cmocka_unit_test(test_parse_tuple_shapes),
        cmocka_unit_test(test_parse_literals_with_specials),
        cmocka_unit_test(test_parse_async_forms),
        cmocka_unit_test(test_parse_custom_call_keeps_raw_attributes),
        cmocka_unit_test(test_parse_multiline_instruction),
        cmocka_unit_test(test_parse_structured_attributes),
        cmocka_unit_test(test_parse_control_flow_references),
        cmocka_unit_test(test_parse_stack_frames_and_execution_thread),
        cmocka_unit_test(test_parse_accepts_attribute_without_spaces),
        cmocka_unit_test(test_parse_reports_column_of_unknown_opcode),
        cmocka_unit_test(test_parse_reports_undefined_operand),
        cmocka_unit_test(test_parse_reports_literal_count),
        cmocka_unit_test(test_parse_reports_unterminated_comment),
        cmocka_unit_test(test_parse_rejects_nul_byte),
        cmocka_unit_test(test_parse_reads_no_byte_past_the_text),
        cmocka_unit_test(test_parse_survives_every_allocation_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
