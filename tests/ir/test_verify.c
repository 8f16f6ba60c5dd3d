/* test_verify.c: the verifier (src/ir/verify.c, and its collective rules in
 * src/ir/verify_collectives.c).  Each test parses a small module and expects
 * either a clean verify or one ERR_SHAPE error whose message contains a
 * given text, at the offending instruction's line:col.  The last tests walk
 * every module of the shared corpora. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir.h"

/* Line 1 the header, line 2 blank: the next line is 3. */
#define HEAD "HloModule m\n\n"
/* A scalar adder on lines 3-7 (after HEAD), blank line 8: the next line is 9. */
#define ADD "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n"
/* HEAD, then an entry computation on line 3 whose body starts on line 4. */
#define ENTRY_ONLY(body) HEAD "ENTRY e {\n" body "}\n"
/* HEAD ADD, then an entry on line 9 whose body starts on line 10. */
#define WITH_ADD(body) HEAD ADD "ENTRY e {\n" body "}\n"

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

static IrModule *parse_text(const char *text)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
    if (!m) {
        error_print(&err, stderr);
        fail_msg("the test module does not parse");
    }
    return m;
}

static void expect_module_ok(IrModule *m)
{
    Error err = { 0 };
    bool ok = ir_verify_module(m, &err);
    if (!ok)
        error_print(&err, stderr);
    ir_module_free(m);
    assert_true(ok);
}

static void expect_ok(const char *text)
{
    expect_module_ok(parse_text(text));
}

/* Verifying m fails with code, a message containing part, at line:col. */
static void expect_module_error_code(IrModule *m, ErrCode code, const char *part, int line, int col)
{
    Error err = { 0 };
    bool ok = ir_verify_module(m, &err);
    ir_module_free(m);
    if (ok)
        fail_msg("verified cleanly; expected an error containing \"%s\"", part);
    if (err.code != code || !strstr(err.msg, part) || err.loc.line != line || err.loc.col != col)
        fail_msg("got code %d at %d:%d \"%s\"\nwant code %d at %d:%d containing \"%s\"", (int)err.code,
                 err.loc.line, err.loc.col, err.msg, (int)code, line, col, part);
}

static void expect_module_error(IrModule *m, const char *part, int line, int col)
{
    expect_module_error_code(m, ERR_SHAPE, part, line, col);
}

static void expect_error(const char *text, const char *part, int line, int col)
{
    expect_module_error(parse_text(text), part, line, col);
}

static IrInstr *find_instr(const IrModule *m, const char *comp, const char *name)
{
    IrComputation *c = ir_module_find_computation(m, comp);
    assert_non_null(c);
    for (int i = 0; i < c->n_instrs; i++)
        if (strcmp(c->instrs[i]->name, name) == 0)
            return c->instrs[i];
    fail_msg("no instruction %s in %s", name, comp);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Valid modules                                                        */

static void test_verify_accepts_elementwise_ops(void **state)
{
    (void)state;
    expect_ok(ENTRY_ONLY(
        "  a = f32[4] parameter(0)\n"
        "  b = f32[4] parameter(1)\n"
        "  c = c64[4] parameter(2)\n"
        "  i = s32[4] parameter(3)\n"
        "  s = f32[] parameter(4)\n"
        "  n = f32[4] negate(a)\n"
        "  x = f32[4] exponential(n)\n"
        "  m = f32[4] multiply(x, b)\n"
        "  lt = pred[4] compare(m, b), direction=LT\n"
        "  sel = f32[4] select(lt, a, b)\n"
        "  ps = pred[] compare(s, s), direction=EQ\n"
        "  sel2 = f32[4] select(ps, a, b)\n"
        "  cl = f32[4] clamp(s, sel, s)\n"
        "  cv = bf16[4] convert(cl)\n"
        "  fin = pred[4] is-finite(a)\n"
        "  ab = f32[4] abs(c)\n"
        "  re = f32[4] real(c)\n"
        "  cx = c64[4] complex(re, ab)\n"
        "  sh = s32[4] shift-left(i, i)\n"
        "  nt = s32[4] not(sh)\n"
        "  pc = s32[4] popcnt(nt)\n"
        "  bc = f16[4,2] bitcast-convert(a)\n"
        "  bw = f32[4] bitcast-convert(bc)\n"
        "  cp = (f32[4], s32[4]) tuple(bw, pc)\n"
        "  ROOT out = (f32[4], s32[4]) copy(cp)\n"));
}

static void test_verify_accepts_data_movement(void **state)
{
    (void)state;
    expect_ok(ENTRY_ONLY(
        "  a = f32[2,3] parameter(0)\n"
        "  v = f32[4] parameter(1)\n"
        "  i = s32[] parameter(2)\n"
        "  iv = s32[2] parameter(3)\n"
        "  z = f32[] constant(0)\n"
        "  t = f32[3,2] transpose(a), dimensions={1,0}\n"
        "  r = f32[6] reshape(t)\n"
        "  bt = s32[3,2] bitcast(t)\n"
        "  b = f32[5,4] broadcast(v), dimensions={1}\n"
        "  bs = f32[2,2] broadcast(z), dimensions={}\n"
        "  sl = f32[2] slice(r), slice={[1:6:3]}\n"
        "  ds = f32[1,2] dynamic-slice(a, i, i), dynamic_slice_sizes={1,2}\n"
        "  dv = f32[1,2] dynamic-slice(a, iv), dynamic_slice_sizes={1,2}\n"
        "  du = f32[2,3] dynamic-update-slice(a, ds, i, i)\n"
        "  cc = f32[4,3] concatenate(a, du), dimensions={0}\n"
        "  pd = f32[9] pad(v, z), padding=-1_3_1\n"
        "  io = s32[4,5] iota(), iota_dimension=1\n"
        "  rv = f32[4,3] reverse(cc), dimensions={0,1}\n"
        "  ROOT out = (f32[2], f32[1,2], f32[9], s32[4,5], f32[4,3], f32[5,4], s32[3,2], f32[2,2]) "
        "tuple(sl, dv, pd, io, rv, b, bt, bs)\n"));
}

static void test_verify_accepts_reduce_dot_sort(void **state)
{
    (void)state;
    expect_ok(HEAD
        "add2 {\n  a0 = f32[] parameter(0)\n  a1 = s32[] parameter(1)\n"
        "  b0 = f32[] parameter(2)\n  b1 = s32[] parameter(3)\n"
        "  s0 = f32[] add(a0, b0)\n  s1 = s32[] add(a1, b1)\n  ROOT t = (f32[], s32[]) tuple(s0, s1)\n}\n\n"
        "less {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
        "  ROOT lt = pred[] compare(x, y), direction=LT\n}\n\n"
        "ENTRY e {\n"
        "  a = f32[4,5] parameter(0)\n"
        "  k = s32[4,5] parameter(1)\n"
        "  l = f32[7,2,3] parameter(2)\n"
        "  r = f32[7,3,6] parameter(3)\n"
        "  z = f32[] constant(0)\n"
        "  zi = s32[] constant(0)\n"
        "  red = (f32[4], s32[4]) reduce(a, k, z, zi), dimensions={1}, to_apply=add2\n"
        "  d = f32[7,2,6] dot(l, r), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
        "rhs_batch_dims={0}, rhs_contracting_dims={1}\n"
        "  srt = f32[4,5] sort(a), dimensions={1}, to_apply=less\n"
        "  ROOT out = ((f32[4], s32[4]), f32[7,2,6], f32[4,5]) tuple(red, d, srt)\n"
        "}\n");
}

#define COND_BODY \
    "cond {\n  c = s32[] parameter(0)\n  three = s32[] constant(3)\n" \
    "  ROOT lt = pred[] compare(c, three), direction=LT\n}\n\n" \
    "body {\n  b = s32[] parameter(0)\n  one = s32[] constant(1)\n  ROOT n = s32[] add(b, one)\n}\n\n"

static void test_verify_accepts_control_flow(void **state)
{
    (void)state;
    expect_ok(HEAD ADD COND_BODY
        "neg {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n\n"
        "ENTRY e {\n"
        "  i = s32[] constant(0)\n"
        "  w = s32[] while(i), condition=cond, body=body\n"
        "  f = f32[] constant(2)\n"
        "  t = pred[] constant(true)\n"
        "  c1 = f32[] conditional(t, f, f), true_computation=neg, false_computation=neg\n"
        "  c2 = f32[] conditional(w, f, f, f), branch_computations={neg, neg, neg}\n"
        "  cl = f32[] call(c1, c2), to_apply=add\n"
        "  fu = f32[] fusion(cl, f), kind=kLoop, calls=add\n"
        "  ROOT out = (s32[], f32[]) tuple(w, fu)\n"
        "}\n");
}

static void test_verify_accepts_collectives(void **state)
{
    (void)state;
    expect_ok(WITH_ADD(
        "  p = f32[2,4] parameter(0)\n"
        "  q = s32[8] parameter(1)\n"
        "  s = f32[] parameter(2)\n"
        "  ag = f32[8,4] all-gather(p), replica_groups={{0,1,2,3}}, dimensions={0}\n"
        "  agv = (f32[8,4], s32[32], f32[]) all-gather(p, q, s), replica_groups={{0,1,2,3}}, dimensions={0}\n"
        "  rs = f32[2,4] reduce-scatter(ag), replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=add\n"
        "  ar = (f32[8,4], f32[]) all-reduce(ag, s), replica_groups={{0,1},{2,3}}, to_apply=add\n"
        "  ags = (f32[2,4], f32[4,4]) all-gather-start(p), replica_groups={{0,1},{2,3}}, dimensions={0}\n"
        "  agd = f32[4,4] all-gather-done(ags)\n"
        "  ars = f32[2,4] all-reduce-start(p), replica_groups={}, to_apply=add\n"
        "  ard = f32[2,4] all-reduce-done(ars)\n"
        "  cp = f32[2,4] collective-permute(p), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}\n"
        "  a2a = f32[2,4] all-to-all(p), replica_groups={{0,1}}, dimensions={1}\n"
        "  any = f32[6,4] all-gather(p), replica_groups={}, dimensions={0}\n"
        "  ROOT out = (f32[2,4], f32[4,4], f32[2,4], f32[2,4], f32[2,4], f32[6,4]) "
        "tuple(rs, agd, ard, cp, a2a, any)\n"));
}

static void test_verify_accepts_partitioned_collectives(void **state)
{
    (void)state;
    /* flattened ids from an iota group; cross-replica-and-partition x P */
    expect_ok("HloModule m, num_partitions=4\n\n" ADD "ENTRY e {\n"
              "  p = f32[2] parameter(0)\n"
              "  ag = f32[8] all-gather(p), channel_id=1, replica_groups=[1,4]<=[4], dimensions={0}, "
              "use_global_device_ids=true\n"
              "  ag2 = f32[8] all-gather(p), channel_id=2, replica_groups={{0}}, dimensions={0}\n"
              "  rs = f32[2] reduce-scatter(ag2), channel_id=3, replica_groups={}, dimensions={0}, to_apply=add\n"
              "  ROOT out = (f32[8], f32[2]) tuple(ag, rs)\n"
              "}\n");
}

static void test_verify_accepts_unknown_partition_count_multiple(void **state)
{
    (void)state;
    /* channel_id without use_global_device_ids and no num_partitions:
     * the size is |G| x P with P unknown, so any multiple of 2 is fine. */
    expect_ok(ENTRY_ONLY(
        "  p = f32[2] parameter(0)\n"
        "  a = f32[4] all-gather(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}\n"
        "  b = f32[8] all-gather(p), channel_id=2, replica_groups={{0,1}}, dimensions={0}\n"
        "  ROOT out = (f32[4], f32[8]) tuple(a, b)\n"));
}

static void test_verify_accepts_sugared_async_and_copy_start(void **state)
{
    (void)state;
    expect_ok(WITH_ADD(
        "  p = f32[8] parameter(0)\n"
        "  rss = ((f32[8]), f32[2]) reduce-scatter-start(p), replica_groups={{0,1,2,3}}, dimensions={0}, "
        "to_apply=add\n"
        "  rsd = f32[2] reduce-scatter-done(rss)\n"
        "  cs = (f32[8], f32[8], u32[]) copy-start(p)\n"
        "  cd = f32[8] copy-done(cs)\n"
        "  ROOT out = (f32[2], f32[8]) tuple(rsd, cd)\n"));
}

static void test_verify_accepts_matching_entry_layout(void **state)
{
    (void)state;
    expect_ok("HloModule m, entry_computation_layout={(f32[2,3]{1,0}, /*index=1*/s32[])->(f32[2,3]{0,1}, s32[])}\n\n"
              "ENTRY e {\n"
              "  a = f32[2,3]{1,0} parameter(0)\n"
              "  b = s32[] parameter(1)\n"
              "  ROOT t = (f32[2,3]{0,1}, s32[]) tuple(a, b)\n"
              "}\n");
}

static void test_verify_instr_checks_one_instruction(void **state)
{
    (void)state;
    IrModule *m = parse_text(ENTRY_ONLY("  p = f32[4] parameter(0)\n  ROOT n = f32[5] negate(p)\n"));
    Error err = { 0 };
    assert_true(ir_verify_instr(find_instr(m, "e", "p"), &err));
    assert_false(ir_verify_instr(find_instr(m, "e", "n"), &err));
    assert_int_equal(err.code, ERR_SHAPE);
    assert_string_equal(err.loc.file, "t.hlo");
    ir_module_free(m);
}

static void test_collective_group_size_follows_the_mode(void **state)
{
    (void)state;
    IrModule *m = parse_text("HloModule m, replica_count=2, num_partitions=4\n\n" ADD "ENTRY e {\n"
                             "  p = f32[2] parameter(0)\n"
                             "  cr = f32[4] all-gather(p), replica_groups={}, dimensions={0}\n"
                             "  crp = f32[8] all-gather(p), channel_id=1, replica_groups={}, dimensions={0}\n"
                             "  crp2 = f32[8] all-gather(p), channel_id=2, replica_groups={{0},{1}}, dimensions={0}\n"
                             "  fl = f32[6] all-gather(p), channel_id=3, replica_groups={{0,1,2},{3,4,5},{6,7,0}}, "
                             "dimensions={0}, use_global_device_ids=true\n"
                             "  ROOT out = (f32[4], f32[8]) tuple(cr, crp)\n"
                             "}\n");
    assert_int_equal(ir_collective_group_size(m, find_instr(m, "e", "cr")), 2);
    assert_int_equal(ir_collective_group_size(m, find_instr(m, "e", "crp")), 8);
    assert_int_equal(ir_collective_group_size(m, find_instr(m, "e", "crp2")), 4);
    assert_int_equal(ir_collective_group_size(m, find_instr(m, "e", "fl")), 3);
    assert_int_equal(ir_collective_group_size(m, find_instr(m, "e", "p")), -1);
    ir_module_free(m);
    m = parse_text(ENTRY_ONLY("  p = f32[2] parameter(0)\n"
                              "  ROOT a = f32[4] all-gather(p), replica_groups={}, dimensions={0}\n"));
    assert_int_equal(ir_collective_group_size(m, find_instr(m, "e", "a")), -1);
    ir_module_free(m);
}

/* ------------------------------------------------------------------ */
/* Elementwise violations                                               */

static void test_verify_rejects_unary_result_dims(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  p = f32[4] parameter(0)\n  ROOT n = f32[5] negate(p)\n"),
                 "negate: result f32[5] does not match operand f32[4]", 5, 8);
}

/* XLA's verifier validates a sharding against its instruction's shape:
 * a tuple sharding names one sharding per leaf (the combiners build one
 * from their members'); a single sharding on a tuple is spread by the
 * parser and is fine. */
static void test_verify_counts_a_tuple_shardings_elements(void **state)
{
    (void)state;
    expect_ok(ENTRY_ONLY("  p = f32[4] parameter(0)\n  i = (f32[4], f32[4]) tuple(p, p)\n  e = () tuple()\n"
                         "  ROOT t = (f32[4], (f32[4], f32[4]), ()) tuple(p, i, e), "
                         "sharding={{replicated}, {maximal device=0}, {replicated}, {replicated}}\n"));
    expect_ok(ENTRY_ONLY("  p = f32[4] parameter(0)\n"
                         "  ROOT t = (f32[4], f32[4]) tuple(p, p), sharding={replicated}\n"));
    expect_error(ENTRY_ONLY("  p = f32[4] parameter(0)\n"
                            "  ROOT t = (f32[4], f32[4], f32[4]) tuple(p, p, p), sharding={{replicated}, "
                            "{devices=[2]0,1 metadata={op_name=\"a,b}\"}}}\n"),
                 "its tuple sharding has 2 elements; its shape (f32[4], f32[4], f32[4]) has 3 leaves", 5, 8);
    expect_error(ENTRY_ONLY("  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p), sharding={{replicated}}\n"),
                 "a tuple sharding of 1 elements on f32[4], which is not a tuple", 5, 8);
}

static void test_verify_rejects_binary_dims_mismatch(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  b = f32[5] parameter(1)\n  ROOT s = f32[4] add(a, b)\n"),
                 "add: operands f32[4] and f32[5] have different dimensions", 6, 8);
}

static void test_verify_rejects_binary_type_mismatch(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  b = s32[4] parameter(1)\n  ROOT s = f32[4] multiply(a, b)\n"),
                 "multiply: operands f32[4] and s32[4] have different element types", 6, 8);
}

static void test_verify_rejects_compare_without_pred_result(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  ROOT c = f32[4] compare(a, a), direction=LT\n"),
                 "compare: result f32[4] must have element type pred", 5, 8);
}

static void test_verify_rejects_is_finite_on_integers(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = s32[4] parameter(0)\n  ROOT f = pred[4] is-finite(a)\n"),
                 "is-finite: operand s32[4] must have a floating-point element type", 5, 8);
}

static void test_verify_rejects_abs_of_complex_keeping_complex(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = c64[2] parameter(0)\n  ROOT r = c64[2] abs(a)\n"),
                 "abs: result c64[2] must have element type f32", 5, 8);
}

static void test_verify_rejects_select_predicate_dims(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  p = pred[3] parameter(0)\n  a = f32[4] parameter(1)\n  ROOT s = f32[4] select(p, a, a)\n"),
                 "select: predicate pred[3] must be a scalar or match f32[4]", 6, 8);
}

static void test_verify_rejects_clamp_bound_dims(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  lo = f32[3] parameter(0)\n  x = f32[4] parameter(1)\n  ROOT c = f32[4] clamp(lo, x, x)\n"),
                 "clamp: bound f32[3] must be a scalar or match f32[4]", 6, 8);
}

static void test_verify_rejects_wrong_operand_count(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  ROOT s = f32[4] add(a, a, a)\n"),
                 "add: expects 2 operands, got 3", 5, 8);
}

/* Negative padding beyond a convolution's input leaves no window: an
 * output dimension of 0, as XLA's StridedBound gives and XLA runs it (it
 * was refused); a result that claims windows there is refused. */
static void test_verify_conv_negative_padded_size_is_empty(void **state)
{
    (void)state;
    expect_ok(ENTRY_ONLY("  x = f32[1,5,5,2] parameter(0)\n  k = f32[3,3,2,4] parameter(1)\n"
                         "  ROOT c = f32[1,3,0,4] convolution(x, k), window={size=3x3 pad=0_0x-3_-3}, "
                         "dim_labels=b01f_01io->b01f\n"));
    expect_error(ENTRY_ONLY("  x = f32[1,5,5,2] parameter(0)\n  k = f32[3,3,2,4] parameter(1)\n"
                            "  ROOT c = f32[1,3,1,4] convolution(x, k), window={size=3x3 pad=0_0x-3_-3}, "
                            "dim_labels=b01f_01io->b01f\n"),
                 "must have dimensions [1,3,0,4]", 6, 8);
}

static void test_verify_rejects_bitcast_convert_dims(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  ROOT b = f16[4] bitcast-convert(a)\n"),
                 "bitcast-convert: f32[4] and f16[4] must differ only by a minor dimension of size 2", 5, 8);
}

/* ------------------------------------------------------------------ */
/* Data movement violations                                             */

static void test_verify_rejects_broadcast_dimension_count(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  ROOT b = f32[4,5] broadcast(a), dimensions={0,1}\n"),
                 "broadcast: dimensions={0,1} must name one result dimension for each of the 1 of f32[4]", 5, 8);
}

static void test_verify_rejects_broadcast_dimension_out_of_range(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  ROOT b = f32[5,4] broadcast(a), dimensions={2}\n"),
                 "broadcast: dimensions={2} out of range for f32[5,4]", 5, 8);
}

static void test_verify_rejects_broadcast_size_change(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  ROOT b = f32[3,5] broadcast(a), dimensions={0}\n"),
                 "broadcast: operand f32[4] dimension 0 has size 4 but result f32[3,5] dimension 0 has 3", 5, 8);
}

static void test_verify_rejects_transpose_repeated_dimension(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[2,3] parameter(0)\n  ROOT t = f32[2,3] transpose(a), dimensions={0,0}\n"),
                 "transpose: dimensions={0,0} names dimension 0 twice", 5, 8);
}

static void test_verify_rejects_transpose_result(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[2,3] parameter(0)\n  ROOT t = f32[2,3] transpose(a), dimensions={1,0}\n"),
                 "transpose: result f32[2,3] is not f32[2,3] permuted by dimensions={1,0}", 5, 8);
}

static void test_verify_rejects_reshape_element_count(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[2,3] parameter(0)\n  ROOT r = f32[7] reshape(a)\n"),
                 "reshape: result f32[7] has 7 elements, operand f32[2,3] has 6", 5, 8);
}

static void test_verify_rejects_bitcast_byte_size(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[2,3] parameter(0)\n  ROOT r = s8[7] bitcast(a)\n"),
                 "bitcast: result s8[7] has 7 bytes, operand f32[2,3] has 24", 5, 8);
}

static void test_verify_rejects_slice_out_of_range(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  ROOT s = f32[5] slice(a), slice={[0:5]}\n"),
                 "slice: slice [0:5] out of range for dimension 0 of f32[4]", 5, 8);
}

static void test_verify_rejects_slice_result_dims(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  ROOT s = f32[3] slice(a), slice={[0:4:2]}\n"),
                 "slice: result f32[3] dimension 0 must be 2", 5, 8);
}

static void test_verify_rejects_dynamic_slice_index_count(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4,4] parameter(0)\n  i = s32[] parameter(1)\n"
                            "  ROOT d = f32[2,2] dynamic-slice(a, i), dynamic_slice_sizes={2,2}\n"),
                 "dynamic-slice: expects 2 start indices for rank 2, got 1", 6, 8);
}

static void test_verify_rejects_dynamic_slice_sizes_too_big(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4,4] parameter(0)\n  i = s32[] parameter(1)\n"
                            "  ROOT d = f32[5,2] dynamic-slice(a, i, i), dynamic_slice_sizes={5,2}\n"),
                 "dynamic-slice: dynamic_slice_sizes={5,2} exceeds f32[4,4] in dimension 0", 6, 8);
}

static void test_verify_rejects_dynamic_slice_float_index(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  i = f32[] parameter(1)\n"
                            "  ROOT d = f32[2] dynamic-slice(a, i), dynamic_slice_sizes={2}\n"),
                 "dynamic-slice: start index f32[] must be an integer scalar", 6, 8);
}

static void test_verify_rejects_dynamic_update_slice_too_big(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  u = f32[5] parameter(1)\n  i = s32[] parameter(2)\n"
                            "  ROOT d = f32[4] dynamic-update-slice(a, u, i)\n"),
                 "dynamic-update-slice: update f32[5] does not fit in f32[4]", 7, 8);
}

static void test_verify_rejects_concatenate_other_dims(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[2,3] parameter(0)\n  b = f32[2,4] parameter(1)\n"
                            "  ROOT c = f32[4,3] concatenate(a, b), dimensions={0}\n"),
                 "concatenate: operand f32[2,4] does not match f32[2,3] outside dimension 0", 6, 8);
}

static void test_verify_rejects_concatenate_sum(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[2,3] parameter(0)\n  b = f32[3,3] parameter(1)\n"
                            "  ROOT c = f32[4,3] concatenate(a, b), dimensions={0}\n"),
                 "concatenate: result f32[4,3] must be f32[2,3] with dimension 0 of size 5", 6, 8);
}

static void test_verify_rejects_pad_result(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                            "  ROOT p = f32[9] pad(a, z), padding=1_2_1\n"),
                 "pad: result f32[9] dimension 0 must be 10", 6, 8);
}

static void test_verify_rejects_pad_value_not_scalar(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  z = f32[1] parameter(1)\n"
                            "  ROOT p = f32[7] pad(a, z), padding=1_2\n"),
                 "pad: padding value f32[1] must be a scalar", 6, 8);
}

static void test_verify_rejects_iota_dimension(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  ROOT i = s32[4,5] iota(), iota_dimension=2\n"),
                 "iota: iota_dimension=2 out of range for s32[4,5]", 4, 8);
}

static void test_verify_rejects_reverse_dimension(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  ROOT r = f32[4] reverse(a), dimensions={1}\n"),
                 "reverse: dimensions={1} out of range for f32[4]", 5, 8);
}

static void test_verify_rejects_get_tuple_element_index(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  t = (f32[4], s32[]) parameter(0)\n  ROOT g = f32[4] get-tuple-element(t), index=2\n"),
                 "get-tuple-element: index=2 out of range for (f32[4], s32[])", 5, 8);
}

static void test_verify_rejects_get_tuple_element_shape(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  t = (f32[4], s32[]) parameter(0)\n  ROOT g = f32[4] get-tuple-element(t), index=1\n"),
                 "get-tuple-element: result f32[4] does not match element 1 of (f32[4], s32[])", 5, 8);
}

static void test_verify_rejects_tuple_shape(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  ROOT t = (f32[4], s32[]) tuple(a, a)\n"),
                 "tuple: result element 1 s32[] does not match operand f32[4]", 5, 8);
}

static void test_verify_rejects_get_dimension_size_dimension(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4] parameter(0)\n  ROOT n = s32[] get-dimension-size(a), dimensions={1}\n"),
                 "get-dimension-size: dimensions={1} out of range for f32[4]", 5, 8);
}

static void test_verify_rejects_gather_offset_dims(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[4,5] parameter(0)\n  i = s32[2,1] parameter(1)\n"
                            "  ROOT g = f32[2,5] gather(a, i), offset_dims={2}, collapsed_slice_dims={0}, "
                            "start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}\n"),
                 "gather: offset_dims={2} out of range for f32[2,5]", 6, 8);
}

/* ------------------------------------------------------------------ */
/* Reductions and dot                                                   */

static void test_verify_rejects_reduce_init_not_scalar(void **state)
{
    (void)state;
    expect_error(WITH_ADD("  a = f32[4,5] parameter(0)\n  z = f32[1] parameter(1)\n"
                          "  ROOT r = f32[4] reduce(a, z), dimensions={1}, to_apply=add\n"),
                 "reduce: init value f32[1] must be a scalar", 12, 8);
}

static void test_verify_rejects_reduce_result_dims(void **state)
{
    (void)state;
    expect_error(WITH_ADD("  a = f32[4,5] parameter(0)\n  z = f32[] constant(0)\n"
                          "  ROOT r = f32[5] reduce(a, z), dimensions={1}, to_apply=add\n"),
                 "reduce: result f32[5] must be f32[4,5] without dimensions={1}, of type f32", 12, 8);
}

static void test_verify_rejects_reduce_to_apply_arity(void **state)
{
    (void)state;
    expect_error(WITH_ADD("  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  z = f32[] constant(0)\n"
                          "  ROOT r = (f32[], f32[]) reduce(a, b, z, z), dimensions={0}, to_apply=add\n"),
                 "reduce: to_apply=add takes 2 parameters, expected 4", 13, 8);
}

static void test_verify_rejects_sort_comparator_arity(void **state)
{
    (void)state;
    expect_error(WITH_ADD("  a = f32[4] parameter(0)\n"
                          "  ROOT s = (f32[4], f32[4]) sort(a, a), dimensions={0}, to_apply=add\n"),
                 "sort: to_apply=add takes 2 parameters, expected 4", 11, 8);
}

static void test_verify_rejects_dot_contracting_sizes(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[2,3] parameter(0)\n  b = f32[4,5] parameter(1)\n"
                            "  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"),
                 "dot: contracting dimension 1 of f32[2,3] (3) and 0 of f32[4,5] (4) differ", 6, 8);
}

static void test_verify_rejects_dot_result_order(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[2,3] parameter(0)\n  b = f32[3,5] parameter(1)\n"
                            "  ROOT d = f32[5,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"),
                 "dot: result f32[5,2] does not match f32[2,3] x f32[3,5]", 6, 8);
}

static void test_verify_rejects_dot_batch_count(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  a = f32[2,3,4] parameter(0)\n  b = f32[2,4,5] parameter(1)\n"
                            "  ROOT d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
                            "rhs_contracting_dims={1}\n"),
                 "dot: lhs_batch_dims={0} and rhs_batch_dims={} differ in length", 6, 8);
}

/* ------------------------------------------------------------------ */
/* Collectives                                                          */

static void test_verify_rejects_all_gather_dimension_out_of_range(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  p = f32[8,4] parameter(0)\n"
                            "  ROOT ag = f32[8,4] all-gather(p), replica_groups={}, dimensions={3}\n"),
                 "all-gather: dimensions={3} out of range for f32[8,4]", 5, 8);
}

static void test_verify_rejects_all_gather_two_dimensions(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  p = f32[8,4] parameter(0)\n"
                            "  ROOT ag = f32[8,4] all-gather(p), replica_groups={}, dimensions={0,1}\n"),
                 "all-gather: dimensions={0,1} must name exactly one dimension", 5, 8);
}

static void test_verify_rejects_all_gather_size(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  p = f32[2,4] parameter(0)\n"
                            "  ROOT ag = f32[6,4] all-gather(p), replica_groups={{0,1,2,3}}, dimensions={0}\n"),
                 "all-gather: dimension 0 of result f32[6,4] must be that of operand f32[2,4] multiplied by "
                 "the group size 4", 5, 8);
}

static void test_verify_rejects_all_gather_other_dimension(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  p = f32[2,4] parameter(0)\n"
                            "  ROOT ag = f32[8,5] all-gather(p), replica_groups={{0,1,2,3}}, dimensions={0}\n"),
                 "all-gather: result f32[8,5] does not match operand f32[2,4] outside dimension 0", 5, 8);
}

static void test_verify_rejects_variadic_all_gather_without_tuple(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  p = f32[2,4] parameter(0)\n"
                            "  ROOT ag = f32[4,4] all-gather(p, p), replica_groups={{0,1}}, dimensions={0}\n"),
                 "all-gather: result f32[4,4] must be a tuple of 2 shapes, one per operand", 5, 8);
}

static void test_verify_rejects_all_gather_partition_multiple(void **state)
{
    (void)state;
    /* channel_id, no use_global_device_ids, P known: size = |G| x P = 4 */
    expect_error("HloModule m, num_partitions=2\n\nENTRY e {\n  p = f32[2] parameter(0)\n"
                 "  ROOT ag = f32[4] all-gather(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}\n}\n",
                 "dimension 0 of result f32[4] must be that of operand f32[2] multiplied by the group size 4", 5, 8);
}

static void test_verify_rejects_all_gather_unknown_partitions_bad_multiple(void **state)
{
    (void)state;
    /* P unknown: the size is still a multiple of |G| = 2, and 3 is not. */
    expect_error(ENTRY_ONLY("  p = f32[2] parameter(0)\n"
                            "  ROOT ag = f32[6] all-gather(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}\n"),
                 "dimension 0 of result f32[6] must be that of operand f32[2] multiplied by a multiple of 2", 5, 8);
}

static void test_verify_rejects_reduce_scatter_size(void **state)
{
    (void)state;
    expect_error(WITH_ADD("  p = f32[8,4] parameter(0)\n"
                          "  ROOT rs = f32[4,4] reduce-scatter(p), replica_groups={{0,1,2,3}}, dimensions={0}, "
                          "to_apply=add\n"),
                 "reduce-scatter: dimension 0 of result f32[4,4] must be that of operand f32[8,4] divided by the "
                 "group size 4", 11, 8);
}

static void test_verify_rejects_reduce_scatter_indivisible(void **state)
{
    (void)state;
    expect_error(WITH_ADD("  p = f32[6] parameter(0)\n"
                          "  ROOT rs = f32[4] reduce-scatter(p), replica_groups={}, dimensions={0}, to_apply=add\n"),
                 "reduce-scatter: dimension 0 of result f32[4] must be that of operand f32[6] divided by a whole "
                 "number", 11, 8);
}

static void test_verify_rejects_reduce_scatter_array_reducer(void **state)
{
    (void)state;
    expect_error(HEAD "vadd {\n  x = f32[2] parameter(0)\n  y = f32[2] parameter(1)\n"
                 "  ROOT s = f32[2] add(x, y)\n}\n\n"
                 "ENTRY e {\n  p = f32[8] parameter(0)\n"
                 "  ROOT rs = f32[2] reduce-scatter(p), replica_groups={}, dimensions={0}, to_apply=vadd\n}\n",
                 "reduce-scatter: to_apply=vadd parameter 0 is f32[2], expected a scalar", 11, 8);
}

/* A scalar may ride along a variadic reduce-scatter or all-gather (Neuron's
 * dumps have them); alone it has no dimension to scatter or gather, as
 * XLA's shape inference says (the combiners and #104 met such a scalar). */
static void test_verify_takes_a_scalar_only_beside_other_operands(void **state)
{
    (void)state;
    expect_ok(WITH_ADD("  p = f32[8] parameter(0)\n  q = f32[] parameter(1)\n"
                       "  ROOT rs = (f32[4], f32[]) reduce-scatter(p, q), replica_groups={{0,1}}, dimensions={0}, "
                       "to_apply=add\n"));
    expect_error(WITH_ADD("  q = f32[] parameter(0)\n"
                          "  ROOT rs = f32[] reduce-scatter(q), replica_groups={{0,1}}, dimensions={0}, to_apply=add\n"),
                 "reduce-scatter: dimensions={0} out of range for f32[]", 11, 8);
    expect_error(ENTRY_ONLY("  q = f32[] parameter(0)\n"
                            "  ROOT ag = f32[] all-gather(q), replica_groups={{0,1}}, dimensions={1}\n"),
                 "all-gather: dimensions={1} out of range for f32[]", 5, 8);
}

/* One operand, one array: XLA's shape inference gives no 1-tuple (the
 * combiners met one: a candidate no key could describe). */
static void test_verify_refuses_a_one_tuple_of_one_operand(void **state)
{
    (void)state;
    expect_error(WITH_ADD("  p = f32[4] parameter(0)\n"
                          "  ROOT ar = (f32[4]) all-reduce(p), replica_groups={}, to_apply=add\n"),
                 "all-reduce: one operand f32[4] gives an array result, not the tuple (f32[4])", 11, 8);
    expect_error(ENTRY_ONLY("  p = f32[4] parameter(0)\n"
                            "  ROOT ag = (f32[8]) all-gather(p), replica_groups={{0,1}}, dimensions={0}\n"),
                 "all-gather: one operand f32[4] gives an array result, not the tuple (f32[8])", 5, 8);
}

static void test_verify_rejects_all_reduce_result(void **state)
{
    (void)state;
    expect_error(WITH_ADD("  p = f32[8] parameter(0)\n"
                          "  ROOT ar = f32[4] all-reduce(p), replica_groups={}, to_apply=add\n"),
                 "all-reduce: result f32[4] does not match operand f32[8]", 11, 8);
}

static void test_verify_rejects_all_reduce_reducer_arity(void **state)
{
    (void)state;
    expect_error(HEAD "neg {\n  x = f32[] parameter(0)\n  ROOT n = f32[] negate(x)\n}\n\n"
                 "ENTRY e {\n  p = f32[8] parameter(0)\n"
                 "  ROOT ar = f32[8] all-reduce(p), replica_groups={}, to_apply=neg\n}\n",
                 "all-reduce: to_apply=neg takes 1 parameters, expected 2", 10, 8);
}

static void test_verify_rejects_all_gather_start_result(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  p = f32[2] parameter(0)\n"
                            "  ags = (f32[2], f32[6]) all-gather-start(p), replica_groups={{0,1}}, dimensions={0}\n"
                            "  ROOT agd = f32[6] all-gather-done(ags)\n"),
                 "all-gather-start: dimension 0 of result f32[6] must be that of operand f32[2] multiplied by the "
                 "group size 2", 5, 3);
}

static void test_verify_rejects_all_gather_done_result(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  p = f32[2] parameter(0)\n"
                            "  ags = (f32[2], f32[4]) all-gather-start(p), replica_groups={{0,1}}, dimensions={0}\n"
                            "  ROOT agd = f32[2] all-gather-done(ags)\n"),
                 "all-gather-done: result f32[2] does not match f32[4], element 1 of the start", 6, 8);
}

static void test_verify_rejects_sugared_async_result_part(void **state)
{
    (void)state;
    expect_error(WITH_ADD("  p = f32[8] parameter(0)\n"
                          "  rss = ((f32[8]), f32[3]) reduce-scatter-start(p), replica_groups={{0,1,2,3}}, "
                          "dimensions={0}, to_apply=add\n"
                          "  ROOT rsd = f32[3] reduce-scatter-done(rss)\n"),
                 "reduce-scatter-start: dimension 0 of result f32[3] must be that of operand f32[8] divided by "
                 "the group size 4", 11, 3);
}

static void test_verify_rejects_all_to_all_indivisible(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  p = f32[4] parameter(0)\n"
                            "  ROOT a = f32[4] all-to-all(p), replica_groups={{0,1,2}}, dimensions={0}\n"),
                 "all-to-all: dimension 0 of f32[4] is not divisible by the group size 3", 5, 8);
}

static void test_verify_rejects_collective_permute_duplicate_target(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  p = f32[4] parameter(0)\n"
                            "  ROOT c = f32[4] collective-permute(p), source_target_pairs={{0,1},{2,1}}\n"),
                 "collective-permute: source_target_pairs name target 1 twice", 5, 8);
}

/* ------------------------------------------------------------------ */
/* Replica groups                                                       */

static void test_verify_rejects_repeated_replica_id(void **state)
{
    (void)state;
    expect_error(WITH_ADD("  p = f32[8] parameter(0)\n"
                          "  ROOT ar = f32[8] all-reduce(p), replica_groups={{0,1},{1,2}}, to_apply=add\n"),
                 "all-reduce: replica_groups name id 1 twice", 11, 8);
}

static void test_verify_rejects_uneven_all_gather_groups(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  p = f32[2] parameter(0)\n"
                            "  ROOT ag = f32[6] all-gather(p), replica_groups={{0,1,2},{3}}, dimensions={0}\n"),
                 "all-gather: replica groups must have the same size: group 1 has 1 ids, group 0 has 3", 5, 8);
}

static void test_verify_rejects_replica_id_out_of_range(void **state)
{
    (void)state;
    expect_error("HloModule m, replica_count=4\n\n" ADD "ENTRY e {\n  p = f32[8] parameter(0)\n"
                 "  ROOT ar = f32[8] all-reduce(p), replica_groups={{0,1},{2,5}}, to_apply=add\n}\n",
                 "all-reduce: replica_groups id 5 out of range for 4 participants", 11, 8);
}

static void test_verify_rejects_groups_not_covering_replicas(void **state)
{
    (void)state;
    expect_error("HloModule m, replica_count=8\n\n" ADD "ENTRY e {\n  p = f32[8] parameter(0)\n"
                 "  ROOT ar = f32[8] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add\n}\n",
                 "all-reduce: replica_groups cover 4 ids but there are 8 participants", 11, 8);
}

static void test_verify_rejects_replica_ids_with_a_gap(void **state)
{
    (void)state;
    expect_error(WITH_ADD("  p = f32[8] parameter(0)\n"
                          "  ROOT ar = f32[8] all-reduce(p), replica_groups={{0,2}}, to_apply=add\n"),
                 "all-reduce: replica_groups must name ids 0..1 once each, found id 2", 11, 8);
}

static void test_verify_rejects_global_ids_without_channel(void **state)
{
    (void)state;
    expect_error(WITH_ADD("  p = f32[8] parameter(0)\n"
                          "  ROOT ar = f32[8] all-reduce(p), replica_groups={{0,1}}, use_global_device_ids=true, "
                          "to_apply=add\n"),
                 "all-reduce: use_global_device_ids=true requires a channel_id", 11, 8);
}

static void test_verify_rejects_empty_groups_with_global_ids(void **state)
{
    (void)state;
    expect_error(WITH_ADD("  p = f32[8] parameter(0)\n"
                          "  ROOT ar = f32[8] all-reduce(p), channel_id=1, replica_groups={}, "
                          "use_global_device_ids=true, to_apply=add\n"),
                 "all-reduce: replica_groups must not be empty with use_global_device_ids=true", 11, 8);
}

/* ------------------------------------------------------------------ */
/* Control flow and calls                                               */

static void test_verify_rejects_while_body_arity(void **state)
{
    (void)state;
    expect_error(HEAD COND_BODY
                 "body2 {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  ROOT n = s32[] add(x, y)\n}\n\n"
                 "ENTRY e {\n  i = s32[] constant(0)\n"
                 "  ROOT w = s32[] while(i), condition=cond, body=body2\n}\n",
                 "while: body=body2 takes 2 parameters, expected 1", 23, 8);
}

static void test_verify_rejects_while_condition_not_pred(void **state)
{
    (void)state;
    expect_error(HEAD COND_BODY
                 "ENTRY e {\n  i = s32[] constant(0)\n"
                 "  ROOT w = s32[] while(i), condition=body, body=body\n}\n",
                 "while: condition=body must return pred[], returns s32[]", 17, 8);
}

static void test_verify_rejects_while_result_mismatch(void **state)
{
    (void)state;
    expect_error(HEAD COND_BODY
                 "ENTRY e {\n  i = s32[] constant(0)\n"
                 "  ROOT w = s32[2] while(i), condition=cond, body=body\n}\n",
                 "while: result s32[2] does not match init s32[]", 17, 8);
}

static void test_verify_rejects_while_body_result(void **state)
{
    (void)state;
    expect_error(HEAD COND_BODY
                 "wide {\n  x = s32[] parameter(0)\n  ROOT b = s32[2] broadcast(x), dimensions={}\n}\n\n"
                 "ENTRY e {\n  i = s32[] constant(0)\n"
                 "  ROOT w = s32[] while(i), condition=cond, body=wide\n}\n",
                 "while: body=wide returns s32[2], expected s32[]", 22, 8);
}

static void test_verify_rejects_conditional_branch_arity(void **state)
{
    (void)state;
    expect_error(HEAD ADD "neg {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n\n"
                 "ENTRY e {\n  i = s32[] constant(0)\n  f = f32[] constant(1)\n"
                 "  ROOT c = f32[] conditional(i, f, f), branch_computations={neg, add}\n}\n",
                 "conditional: branch_computations=add takes 2 parameters, expected 1", 17, 8);
}

static void test_verify_rejects_conditional_index_type(void **state)
{
    (void)state;
    expect_error(HEAD "neg {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n\n"
                 "ENTRY e {\n  i = f32[] constant(0)\n"
                 "  ROOT c = f32[] conditional(i, i), branch_computations={neg}\n}\n",
                 "conditional: branch index f32[] must be pred[] or s32[]", 10, 8);
}

static void test_verify_rejects_call_arity(void **state)
{
    (void)state;
    expect_error(WITH_ADD("  a = f32[] parameter(0)\n  ROOT c = f32[] call(a), to_apply=add\n"),
                 "call: to_apply=add takes 2 parameters, expected 1", 11, 8);
}

static void test_verify_rejects_call_operand_shape(void **state)
{
    (void)state;
    expect_error(WITH_ADD("  a = f32[4] parameter(0)\n  ROOT c = f32[] call(a, a), to_apply=add\n"),
                 "call: parameter 0 of add is f32[] but operand 0 is f32[4]", 11, 8);
}

static void test_verify_rejects_fusion_result(void **state)
{
    (void)state;
    expect_error(WITH_ADD("  a = f32[] parameter(0)\n  ROOT f = s32[] fusion(a, a), kind=kLoop, calls=add\n"),
                 "fusion: calls=add returns f32[], expected s32[]", 11, 8);
}

/* ------------------------------------------------------------------ */
/* Structure                                                            */

static void test_verify_rejects_use_before_definition(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  p = f32[4] parameter(0)\n  n = f32[4] negate(q)\n  q = f32[4] negate(p)\n"
                            "  ROOT r = f32[4] add(n, q)\n"),
                 "negate: operand q is used before its definition", 5, 3);
}

static void test_verify_rejects_control_predecessor_after_use(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  p = f32[4] parameter(0)\n  n = f32[4] negate(p), control-predecessors={q}\n"
                            "  q = f32[4] negate(p)\n  ROOT r = f32[4] add(n, q)\n"),
                 "negate: control predecessor q is used before its definition", 5, 3);
}

static void test_verify_rejects_operand_from_another_computation(void **state)
{
    (void)state;
    IrModule *m = parse_text(WITH_ADD("  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n"));
    find_instr(m, "e", "n")->operands[0] = find_instr(m, "add", "x");
    expect_module_error(m, "negate: operand x belongs to computation add, not e", 11, 8);
}

static void test_verify_rejects_removed_operand(void **state)
{
    (void)state;
    IrModule *m = parse_text(ENTRY_ONLY("  a = f32[] parameter(0)\n  b = f32[] negate(a)\n  ROOT n = f32[] negate(b)\n"));
    find_instr(m, "e", "b")->dead = true;
    expect_module_error(m, "negate: operand b was removed", 6, 8);
}

static void test_verify_rejects_duplicate_instruction_names(void **state)
{
    (void)state;
    IrModule *m = parse_text(ENTRY_ONLY("  a = f32[] parameter(0)\n  b = f32[] negate(a)\n  ROOT n = f32[] negate(b)\n"));
    find_instr(m, "e", "b")->name = "a";
    expect_module_error(m, "negate: instruction name a is used twice in computation e", 5, 3);
}

static void test_verify_rejects_duplicate_computation_names(void **state)
{
    (void)state;
    IrModule *m = parse_text(HEAD ADD "mul {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                             "  ROOT s = f32[] multiply(x, y)\n}\n\n"
                             "ENTRY e {\n  a = f32[] parameter(0)\n  ROOT c = f32[] call(a, a), to_apply=mul\n}\n");
    ir_module_find_computation(m, "mul")->name = "add";
    expect_module_error(m, "computation add: the name is used by another computation", 9, 1);
}

static void test_verify_rejects_missing_parameter(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  p = f32[4] parameter(1)\n  ROOT n = f32[4] negate(p)\n"),
                 "computation e: parameter(0) is missing", 3, 7);
}

static void test_verify_rejects_repeated_parameter(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  p = f32[4] parameter(0)\n  q = f32[4] parameter(0)\n  ROOT s = f32[4] add(p, q)\n"),
                 "parameter: parameter(0) appears more than once in computation e", 5, 3);
}

static void test_verify_rejects_call_cycle(void **state)
{
    (void)state;
    IrModule *m = parse_text(WITH_ADD("  a = f32[] parameter(0)\n  ROOT c = f32[] call(a, a), to_apply=add\n"));
    find_instr(m, "add", "s")->info->comps[IR_COMP_TO_APPLY] = ir_module_find_computation(m, "e");
    expect_module_error(m, "call: calls computation add, which is already being called (a call cycle)", 11, 8);
}

static void test_verify_rejects_missing_entry(void **state)
{
    (void)state;
    IrModule *m = parse_text(ENTRY_ONLY("  ROOT p = f32[4] parameter(0)\n"));
    m->entry = NULL;
    expect_module_error(m, "module m has no entry computation", 0, 0);
}

static void test_verify_rejects_root_outside_computation(void **state)
{
    (void)state;
    IrModule *m = parse_text(WITH_ADD("  ROOT a = f32[] parameter(0)\n"));
    ir_module_find_computation(m, "e")->root = find_instr(m, "add", "s");
    expect_module_error(m, "computation e: root s is not one of its instructions", 9, 7);
}

static void test_verify_rejects_instruction_listed_twice(void **state)
{
    (void)state;
    IrModule *m = parse_text(ENTRY_ONLY("  a = f32[] parameter(0)\n  b = f32[] negate(a)\n  ROOT n = f32[] negate(b)\n"));
    IrComputation *e = ir_module_find_computation(m, "e");
    e->instrs[2] = e->instrs[1];
    expect_module_error(m, "negate: instruction b is listed twice", 5, 3);
}

static void test_verify_rejects_entry_layout_parameter(void **state)
{
    (void)state;
    expect_error("HloModule m, entry_computation_layout={(f32[4]{0}, s32[])->f32[4]{0}}\n\n"
                 "ENTRY e {\n  a = f32[4] parameter(0)\n  b = s32[2] parameter(1)\n  ROOT n = f32[4] negate(a)\n}\n",
                 "parameter: shape s32[2] differs from entry_computation_layout parameter 1 (s32[])", 5, 3);
}

static void test_verify_rejects_entry_layout_result(void **state)
{
    (void)state;
    expect_error("HloModule m, entry_computation_layout={(f32[4]{0})->f32[5]{0}}\n\n"
                 "ENTRY e {\n  a = f32[4] parameter(0)\n  ROOT n = f32[4] negate(a)\n}\n",
                 "negate: root shape f32[4] differs from the entry_computation_layout result f32[5]", 5, 8);
}

static void test_verify_rejects_entry_layout_parameter_count(void **state)
{
    (void)state;
    expect_error("HloModule m, entry_computation_layout={(f32[4]{0}, s32[])->f32[4]{0}}\n\n"
                 "ENTRY e {\n  a = f32[4] parameter(0)\n  ROOT n = f32[4] negate(a)\n}\n",
                 "computation e: entry_computation_layout has 2 parameters, the entry computation 1", 3, 7);
}

/* Appends parameter(k) of shape s to c and records it in c->params (the
 * module.c API leaves the parameter table to the caller). */
static IrInstr *add_parameter(IrModule *m, IrComputation *c, const char *name, IrShape *s, int k)
{
    IrInstr *p = ir_instr_new(m, IR_OP_PARAMETER, name, s, 0, NULL);
    p->info->parameter_number = k;
    ir_computation_append(c, p);
    if (k >= c->n_params) {
        IrInstr **params = ARENA_ARRAY(m->arena, IrInstr *, (size_t)k + 1);
        for (int i = 0; i < c->n_params; i++)
            params[i] = c->params[i];
        c->params = params;
        c->n_params = k + 1;
    }
    c->params[k] = p;
    return p;
}

/* What a pass does: computations made before either is inserted, so their
 * ids do not say where they are. */
static void test_verify_accepts_module_built_with_the_api(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("built");
    IrShape *f = ir_shape_new_array(m->arena, IR_TYPE_F32, 0, NULL);
    IrComputation *add = ir_computation_new(m, "add"), *e = ir_computation_new(m, "main");
    IrInstr *x = add_parameter(m, add, "x", f, 0), *y = add_parameter(m, add, "y", f, 1);
    IrInstr *s = ir_instr_new(m, IR_OP_ADD, "s", f, 2, (IrInstr *[]){ x, y });
    ir_computation_append(add, s);
    add->root = s;
    IrInstr *p = add_parameter(m, e, "p", f, 0);
    IrInstr *call = ir_instr_new(m, IR_OP_CALL, "c", f, 2, (IrInstr *[]){ p, p });
    call->info->comps[IR_COMP_TO_APPLY] = add;
    ir_computation_append(e, call);
    e->root = call;
    e->is_entry = true;
    ir_module_insert_computation(m, e, 0);
    ir_module_insert_computation(m, add, 0);
    m->entry = e;
    expect_module_ok(m);
}

static void test_verify_reports_column_of_sigil(void **state)
{
    (void)state;
    expect_error(ENTRY_ONLY("  %p = f32[4] parameter(0)\n  ROOT %n = f32[5] negate(f32[4] %p)\n"),
                 "negate: result f32[5]", 5, 8);
}

/* ------------------------------------------------------------------ */
/* The shared corpora: every module parses and verifies                 */

/* Real dumps that are not complete modules, with the reason.  The test
 * expects them to fail to parse; if one starts parsing, update the list. */
static const char *const known_broken[][2] = {
    { "neuron_nxd_linear_pp4_tp8_32dev.hlo",
      "an excerpt: uses %multiply.42, %constant.5, %p8.72 and %AddComputation.48, which it never defines" },
};

static const char *known_broken_reason(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof known_broken / sizeof known_broken[0]; i++)
        if (strcmp(base, known_broken[i][0]) == 0)
            return known_broken[i][1];
    return NULL;
}

typedef struct CorpusStats { int files, failed; } CorpusStats;

static void check_corpus_file(const char *path, CorpusStats *st)
{
    Error err = { 0 };
    const char *broken = known_broken_reason(path);
    IrModule *m = ir_parse_file(path, &err);
    st->files++;
    if (broken) {
        if (m) {
            fprintf(stderr, "%s now parses; drop it from known_broken (%s)\n", path, broken);
            st->failed++;
            ir_module_free(m);
        } else {
            fprintf(stderr, "skipped %s: %s\n", path, broken);
        }
        return;
    }
    if (m && ir_verify_module(m, &err)) {
        ir_module_free(m);
        return;
    }
    fprintf(stderr, "%s: ", m ? "verify" : "parse");
    error_print(&err, stderr);
    st->failed++;
    ir_module_free(m);
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void walk_corpus(const char *dir, CorpusStats *st)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode))
            walk_corpus(path, st);
        else if (has_suffix(e->d_name, ".hlo"))
            check_corpus_file(path, st);
    }
    closedir(d);
}

static void check_corpus_dir(const char *dir)
{
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        print_message("skipping %s: not found (run from the repository root)\n", dir);
        skip();
    }
    CorpusStats st = { 0, 0 };
    walk_corpus(dir, &st);
    print_message("%s: %d modules, %d failed\n", dir, st.files, st.failed);
    assert_true(st.files > 0);
    assert_int_equal(st.failed, 0);
}

static void test_verify_accepts_peer_corpus(void **state)
{
    (void)state;
    check_corpus_dir("../shared/peer-corpus");
}

static void test_verify_accepts_real_dumps(void **state)
{
    (void)state;
    check_corpus_dir("../shared/real-dumps");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verify_accepts_elementwise_ops),
        cmocka_unit_test(test_verify_accepts_data_movement),
        cmocka_unit_test(test_verify_accepts_reduce_dot_sort),
        cmocka_unit_test(test_verify_accepts_control_flow),
        cmocka_unit_test(test_verify_accepts_collectives),
        cmocka_unit_test(test_verify_accepts_partitioned_collectives),
        cmocka_unit_test(test_verify_accepts_unknown_partition_count_multiple),
        cmocka_unit_test(test_verify_accepts_sugared_async_and_copy_start),
        cmocka_unit_test(test_verify_accepts_matching_entry_layout),
        cmocka_unit_test(test_verify_instr_checks_one_instruction),
        cmocka_unit_test(test_collective_group_size_follows_the_mode),
        cmocka_unit_test(test_verify_rejects_unary_result_dims),
        cmocka_unit_test(test_verify_counts_a_tuple_shardings_elements),
        cmocka_unit_test(test_verify_takes_a_scalar_only_beside_other_operands),
        cmocka_unit_test(test_verify_refuses_a_one_tuple_of_one_operand),
        cmocka_unit_test(test_verify_rejects_binary_dims_mismatch),
        cmocka_unit_test(test_verify_rejects_binary_type_mismatch),
        cmocka_unit_test(test_verify_rejects_compare_without_pred_result),
        cmocka_unit_test(test_verify_rejects_is_finite_on_integers),
        cmocka_unit_test(test_verify_rejects_abs_of_complex_keeping_complex),
        cmocka_unit_test(test_verify_rejects_select_predicate_dims),
        cmocka_unit_test(test_verify_rejects_clamp_bound_dims),
        cmocka_unit_test(test_verify_rejects_wrong_operand_count),
        cmocka_unit_test(test_verify_conv_negative_padded_size_is_empty),
        cmocka_unit_test(test_verify_rejects_bitcast_convert_dims),
        cmocka_unit_test(test_verify_rejects_broadcast_dimension_count),
        cmocka_unit_test(test_verify_rejects_broadcast_dimension_out_of_range),
        cmocka_unit_test(test_verify_rejects_broadcast_size_change),
        cmocka_unit_test(test_verify_rejects_transpose_repeated_dimension),
        cmocka_unit_test(test_verify_rejects_transpose_result),
        cmocka_unit_test(test_verify_rejects_reshape_element_count),
        cmocka_unit_test(test_verify_rejects_bitcast_byte_size),
        cmocka_unit_test(test_verify_rejects_slice_out_of_range),
        cmocka_unit_test(test_verify_rejects_slice_result_dims),
        cmocka_unit_test(test_verify_rejects_dynamic_slice_index_count),
        cmocka_unit_test(test_verify_rejects_dynamic_slice_sizes_too_big),
        cmocka_unit_test(test_verify_rejects_dynamic_slice_float_index),
        cmocka_unit_test(test_verify_rejects_dynamic_update_slice_too_big),
        cmocka_unit_test(test_verify_rejects_concatenate_other_dims),
        cmocka_unit_test(test_verify_rejects_concatenate_sum),
        cmocka_unit_test(test_verify_rejects_pad_result),
        cmocka_unit_test(test_verify_rejects_pad_value_not_scalar),
        cmocka_unit_test(test_verify_rejects_iota_dimension),
        cmocka_unit_test(test_verify_rejects_reverse_dimension),
        cmocka_unit_test(test_verify_rejects_get_tuple_element_index),
        cmocka_unit_test(test_verify_rejects_get_tuple_element_shape),
        cmocka_unit_test(test_verify_rejects_tuple_shape),
        cmocka_unit_test(test_verify_rejects_get_dimension_size_dimension),
        cmocka_unit_test(test_verify_rejects_gather_offset_dims),
        cmocka_unit_test(test_verify_rejects_reduce_init_not_scalar),
        cmocka_unit_test(test_verify_rejects_reduce_result_dims),
        cmocka_unit_test(test_verify_rejects_reduce_to_apply_arity),
        cmocka_unit_test(test_verify_rejects_sort_comparator_arity),
        cmocka_unit_test(test_verify_rejects_dot_contracting_sizes),
        cmocka_unit_test(test_verify_rejects_dot_result_order),
        cmocka_unit_test(test_verify_rejects_dot_batch_count),
        cmocka_unit_test(test_verify_rejects_all_gather_dimension_out_of_range),
        cmocka_unit_test(test_verify_rejects_all_gather_two_dimensions),
        cmocka_unit_test(test_verify_rejects_all_gather_size),
        cmocka_unit_test(test_verify_rejects_all_gather_other_dimension),
        cmocka_unit_test(test_verify_rejects_variadic_all_gather_without_tuple),
        cmocka_unit_test(test_verify_rejects_all_gather_partition_multiple),
        cmocka_unit_test(test_verify_rejects_all_gather_unknown_partitions_bad_multiple),
        cmocka_unit_test(test_verify_rejects_reduce_scatter_size),
        cmocka_unit_test(test_verify_rejects_reduce_scatter_indivisible),
        cmocka_unit_test(test_verify_rejects_reduce_scatter_array_reducer),
        cmocka_unit_test(test_verify_rejects_all_reduce_result),
        cmocka_unit_test(test_verify_rejects_all_reduce_reducer_arity),
        cmocka_unit_test(test_verify_rejects_all_gather_start_result),
        cmocka_unit_test(test_verify_rejects_all_gather_done_result),
        cmocka_unit_test(test_verify_rejects_sugared_async_result_part),
        cmocka_unit_test(test_verify_rejects_all_to_all_indivisible),
        cmocka_unit_test(test_verify_rejects_collective_permute_duplicate_target),
        cmocka_unit_test(test_verify_rejects_repeated_replica_id),
        cmocka_unit_test(test_verify_rejects_uneven_all_gather_groups),
        cmocka_unit_test(test_verify_rejects_replica_id_out_of_range),
        cmocka_unit_test(test_verify_rejects_groups_not_covering_replicas),
        cmocka_unit_test(test_verify_rejects_replica_ids_with_a_gap),
        cmocka_unit_test(test_verify_rejects_global_ids_without_channel),
        cmocka_unit_test(test_verify_rejects_empty_groups_with_global_ids),
        cmocka_unit_test(test_verify_rejects_while_body_arity),
        cmocka_unit_test(test_verify_rejects_while_condition_not_pred),
        cmocka_unit_test(test_verify_rejects_while_result_mismatch),
        cmocka_unit_test(test_verify_rejects_while_body_result),
        cmocka_unit_test(test_verify_rejects_conditional_branch_arity),
        cmocka_unit_test(test_verify_rejects_conditional_index_type),
        cmocka_unit_test(test_verify_rejects_call_arity),
        cmocka_unit_test(test_verify_rejects_call_operand_shape),
        cmocka_unit_test(test_verify_rejects_fusion_result),
        cmocka_unit_test(test_verify_rejects_use_before_definition),
        cmocka_unit_test(test_verify_rejects_control_predecessor_after_use),
        cmocka_unit_test(test_verify_rejects_operand_from_another_computation),
        cmocka_unit_test(test_verify_rejects_removed_operand),
        cmocka_unit_test(test_verify_rejects_duplicate_instruction_names),
        cmocka_unit_test(test_verify_rejects_duplicate_computation_names),
        cmocka_unit_test(test_verify_rejects_missing_parameter),
        cmocka_unit_test(test_verify_rejects_repeated_parameter),
        cmocka_unit_test(test_verify_rejects_call_cycle),
        cmocka_unit_test(test_verify_rejects_missing_entry),
        cmocka_unit_test(test_verify_rejects_root_outside_computation),
        cmocka_unit_test(test_verify_rejects_instruction_listed_twice),
        cmocka_unit_test(test_verify_rejects_entry_layout_parameter),
        cmocka_unit_test(test_verify_rejects_entry_layout_result),
        cmocka_unit_test(test_verify_rejects_entry_layout_parameter_count),
        cmocka_unit_test(test_verify_accepts_module_built_with_the_api),
        cmocka_unit_test(test_verify_reports_column_of_sigil),
        cmocka_unit_test(test_verify_accepts_peer_corpus),
        cmocka_unit_test(test_verify_accepts_real_dumps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
