/* test_gather.c: gather and scatter (src/interp/eval_gather.c).  Expected
 * values are worked out by hand from XLA's dimension-number semantics; the
 * comment on each case shows the derivation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "interp_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

/* [[1,2,3],[4,5,6],[7,8,9]] */
static const float X33[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };

/* A gather of f32[3,3] by s32[idx_dims] into f32[out_dims] with attrs. */
static void check_gather(const char *idx_dims, const int32_t *idx, const char *out_dims, const char *attrs,
                         const float *want, int64_t n)
{
    char text[2048];
    snprintf(text, sizeof text,
             "HloModule m\n\nENTRY e {\n  p = f32[3,3] parameter(0)\n  i = s32[%s] parameter(1)\n"
             "  ROOT g = f32[%s] gather(p, i), %s\n}\n",
             idx_dims, out_dims, attrs);
    const void *params[] = { X33, idx };
    TestRun run;
    Value *v = test_run_ok(&run, text, params);
    assert_f32_array(v, want, n);
    test_run_free(&run);
}

#define COMP_ADD_F32                                                           \
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"             \
    "  ROOT r = f32[] add(a, b)\n}\n\n"
/* The same add, written so it is not a trivial reducer (slow path). */
#define COMP_ADD_F32_SLOW                                                      \
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"             \
    "  wa = f64[] convert(a)\n  na = f32[] convert(wa)\n"                     \
    "  ROOT r = f32[] add(na, b)\n}\n\n"
#define COMP_ASSIGN_F32                                                        \
    "add {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\n\n"

/* A scatter into f32[op_dims] (operand op) with s32[idx_dims] indices and
 * f32[upd_dims] updates, combiner comp (named add). */
static void scatter_module(char *buf, size_t n, const char *comp, const char *op_dims, const char *idx_dims,
                           const char *upd_dims, const char *attrs)
{
    snprintf(buf, n,
             "HloModule m\n\n%s"
             "ENTRY e {\n  p = f32[%s] parameter(0)\n  i = s32[%s] parameter(1)\n  u = f32[%s] parameter(2)\n"
             "  ROOT s = f32[%s] scatter(p, i, u), %s, to_apply=add\n}\n",
             comp, op_dims, idx_dims, upd_dims, op_dims, attrs);
}

static void check_scatter(const char *comp, const char *op_dims, const float *op, const char *idx_dims,
                          const int32_t *idx, const char *upd_dims, const float *upd, const char *attrs,
                          const float *want, int64_t n)
{
    char text[2048];
    scatter_module(text, sizeof text, comp, op_dims, idx_dims, upd_dims, attrs);
    const void *params[] = { op, idx, upd };
    TestRun run;
    Value *v = test_run_ok(&run, text, params);
    assert_f32_array(v, want, n);
    test_run_free(&run);
}

/* ------------------------------------------------------------------ */
/* gather                                                               */

#define ROWS "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}"

/* XLA's doc example: gathering rows 0 and 2 of a matrix. */
static void test_gather_rows(void **state)
{
    (void)state;
    static const int32_t idx[] = { 0, 2 };
    static const float want[] = { 1, 2, 3, 7, 8, 9 };
    check_gather("2", idx, "2,3", ROWS, want, 6);
}

/* Columns 0 and 2: the slice is strided in the operand. */
static void test_gather_columns(void **state)
{
    (void)state;
    static const int32_t idx[] = { 0, 2 };
    static const float want[] = { 1, 3, 4, 6, 7, 9 };    /* out[r][b] = x[r][idx[b]] */
    check_gather("2", idx, "3,2",
                 "offset_dims={0}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, "
                 "slice_sizes={3,1}",
                 want, 6);
}

/* Batch dim after the offset dim: out[j][b] = x[idx[b]][j]; rows 2, 0. */
static void test_gather_offset_dims_before_batch(void **state)
{
    (void)state;
    static const int32_t idx[] = { 2, 0 };
    static const float want[] = { 7, 1, 8, 2, 9, 3 };
    check_gather("2", idx, "3,2",
                 "offset_dims={0}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
                 "slice_sizes={1,3}",
                 want, 6);
}

/* Two batch dims (indices s32[2,2], index_vector_dim=2: a trailing 1):
 * rows {{2,0},{1,1}}.  With offset_dims={2} the row is last:
 * out[a][b][j] = x[idx[a][b]][j]; with offset_dims={1} it sits between
 * the batch dims: out[a][j][b] = x[idx[a][b]][j]. */
static void test_gather_two_batch_dims(void **state)
{
    (void)state;
    static const int32_t idx[] = { 2, 0, 1, 1 };
    static const float want_last[] = { 7, 8, 9, 1, 2, 3, 4, 5, 6, 4, 5, 6 };
    static const float want_mid[] = { 7, 1, 8, 2, 9, 3, 4, 4, 5, 5, 6, 6 };
    check_gather("2,2", idx, "2,2,3",
                 "offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, "
                 "slice_sizes={1,3}",
                 want_last, 12);
    check_gather("2,2", idx, "2,3,2",
                 "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, "
                 "slice_sizes={1,3}",
                 want_mid, 12);
}

/* Starts are clamped so the slice fits: rows -1 and 5 read rows 0 and 2;
 * a 2x2 slice at (2,2) reads from (1,1), at (-3,1) from (0,1). */
static void test_gather_clamps_start_indices(void **state)
{
    (void)state;
    static const int32_t rows[] = { -1, 5 };
    static const float want_rows[] = { 1, 2, 3, 7, 8, 9 };
    check_gather("2", rows, "2,3", ROWS, want_rows, 6);
    static const int32_t starts[] = { 2, 2, -3, 1 };
    static const float want_blocks[] = { 5, 6, 8, 9, 2, 3, 5, 6 };
    check_gather("2,2", starts, "2,2,2",
                 "offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, "
                 "slice_sizes={2,2}",
                 want_blocks, 8);
}

/* index_vector_dim=0: column j of the indices is one vector.
 * [[0,2],[1,0]] -> (0,1), (2,0) -> x[0][1], x[2][0] = 2, 7.  With
 * start_index_map={1,0} the same vectors mean (col, row): x[1][0], x[0][2]. */
static void test_gather_index_vector_dim_and_start_map(void **state)
{
    (void)state;
    static const int32_t idx[] = { 0, 2, 1, 0 };
    static const float want[] = { 2, 7 }, want_swapped[] = { 4, 3 };
    check_gather("2,2", idx, "2",
                 "offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=0, "
                 "slice_sizes={1,1}",
                 want, 2);
    check_gather("2,2", idx, "2",
                 "offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={1,0}, index_vector_dim=0, "
                 "slice_sizes={1,1}",
                 want_swapped, 2);
}

/* Batching dims: batch b reads x[b][idx[b]]; idx {2, 0} -> x[0][2], x[1][0]
 * = 3, 4 (operand rows 0 and 1 of X33). */
static void test_gather_batching_dims(void **state)
{
    (void)state;
    static const int32_t idx[] = { 2, 0 };
    static const char *text =
        "HloModule m\n\nENTRY e {\n  p = f32[2,3] parameter(0)\n  i = s32[2] parameter(1)\n"
        "  ROOT g = f32[2] gather(p, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, "
        "operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1}\n}\n";
    const void *params[] = { X33, idx };
    TestRun run;
    Value *v = test_run_ok(&run, text, params);
    static const float want[] = { 3, 4 };
    assert_f32_array(v, want, 2);
    test_run_free(&run);
}

static void test_gather_bad_slice_sizes_is_an_error(void **state)
{
    (void)state;
    static const int32_t idx[] = { 0, 1 };
    static const char *text =
        "HloModule m\n\nENTRY e {\n  p = f32[3,3] parameter(0)\n  i = s32[2] parameter(1)\n"
        "  ROOT g = f32[2,4] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
        "index_vector_dim=1, slice_sizes={1,4}\n}\n";
    const void *params[] = { X33, idx };
    TestRun run;
    assert_false(test_run(&run, text, params));
    assert_int_equal(run.err.code, ERR_SHAPE);
    test_run_free(&run);
}

/* ------------------------------------------------------------------ */
/* scatter                                                              */

#define SCATTER_ROWS "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1"

static const float ONES33[] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };

/* Rows 0, 2, 0 += [1,2,3], [4,5,6], [7,8,9]: row 0 = 1 + [1,2,3] + [7,8,9]
 * = [9,11,13], row 1 untouched, row 2 = [5,6,7]. */
static void test_scatter_add_duplicate_indices(void **state)
{
    (void)state;
    static const int32_t idx[] = { 0, 2, 0 };
    static const float want[] = { 9, 11, 13, 1, 1, 1, 5, 6, 7 };
    check_scatter(COMP_ADD_F32, "3,3", ONES33, "3", idx, "3,3", X33, SCATTER_ROWS, want, 9);
    check_scatter(COMP_ADD_F32_SLOW, "3,3", ONES33, "3", idx, "3,3", X33, SCATTER_ROWS, want, 9);
}

/* Windows reaching outside the operand are skipped whole: rows 3 and -1
 * (only row 0 += [1,2,3]); and in 1-D, a window of 2 at 2 in a dim of 3
 * is skipped while the one at 1 lands: [0, 3, 4]. */
static void test_scatter_skips_out_of_bounds_windows(void **state)
{
    (void)state;
    static const int32_t rows[] = { 0, 3, -1 };
    static const float want_rows[] = { 2, 3, 4, 1, 1, 1, 1, 1, 1 };
    check_scatter(COMP_ADD_F32, "3,3", ONES33, "3", rows, "3,3", X33, SCATTER_ROWS, want_rows, 9);
    check_scatter(COMP_ADD_F32_SLOW, "3,3", ONES33, "3", rows, "3,3", X33, SCATTER_ROWS, want_rows, 9);
    static const float zeros[] = { 0, 0, 0 }, upd[] = { 1, 2, 3, 4 };
    static const int32_t starts[] = { 2, 1 };
    static const float want[] = { 0, 3, 4 };
    const char *attrs = "update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, "
                        "index_vector_dim=1";
    check_scatter(COMP_ADD_F32, "3", zeros, "2,1", starts, "2,2", upd, attrs, want, 3);
    check_scatter(COMP_ASSIGN_F32, "3", zeros, "2,1", starts, "2,2", upd, attrs, want, 3);
}

/* A combiner returning the update overwrites: row 1 gets [1,2,3] then
 * [4,5,6]; the later update wins. */
static void test_scatter_assign_last_update_wins(void **state)
{
    (void)state;
    static const int32_t idx[] = { 1, 1 };
    static const float want[] = { 1, 1, 1, 4, 5, 6, 1, 1, 1 };
    check_scatter(COMP_ASSIGN_F32, "3,3", ONES33, "2", idx, "2,3", X33, SCATTER_ROWS, want, 9);
}

/* Column windows (strided in the operand): col 2 += [10,30,50],
 * col 0 += [20,40,60]. */
static void test_scatter_column_windows(void **state)
{
    (void)state;
    static const int32_t idx[] = { 2, 0 };
    static const float upd[] = { 10, 20, 30, 40, 50, 60 };
    static const float want[] = { 21, 2, 13, 44, 5, 36, 67, 8, 59 };
    const char *attrs = "update_window_dims={0}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, "
                        "index_vector_dim=1";
    check_scatter(COMP_ADD_F32, "3,3", X33, "2", idx, "3,2", upd, attrs, want, 9);
    check_scatter(COMP_ADD_F32_SLOW, "3,3", X33, "2", idx, "3,2", upd, attrs, want, 9);
}

/* Updates are applied in order: 0 + 1e8 + 1 - 1e8 + 1 in f32 is 1 (1e8 + 1
 * rounds back to 1e8). */
static void test_scatter_applies_updates_in_order(void **state)
{
    (void)state;
    static const float zero[] = { 0 }, upd[] = { 1e8f, 1, -1e8f, 1 };
    static const int32_t idx[] = { 0, 0, 0, 0 };
    static const float want[] = { 1 };
    const char *attrs = "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                        "index_vector_dim=1";
    check_scatter(COMP_ADD_F32, "1", zero, "4", idx, "4", upd, attrs, want, 1);
    check_scatter(COMP_ADD_F32_SLOW, "1", zero, "4", idx, "4", upd, attrs, want, 1);
}

/* No scatter positions at all (a batch dimension of 0): the operand comes
 * back unchanged (the window walk divided by that 0: SIGFPE, found by
 * scripts/xla/gen_ops.py). */
static void test_scatter_with_no_positions(void **state)
{
    (void)state;
    static const float op[] = { 1, 2, 3, 4 };
    static const int32_t idx[1] = { 0 };
    static const float upd[1] = { 0 };
    const char *attrs = "update_window_dims={0}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, "
                        "index_vector_dim=1";
    check_scatter(COMP_ADD_F32, "4", op, "0", idx, "2,0", upd, attrs, op, 4);
}

/* The combiner's operand order counts: of two NaNs maximum keeps its lhs's,
 * so maximum(operand, update) keeps the operand's NaN and maximum(update,
 * operand) the update's.  Zeros no longer tell the order: +0 > -0 either
 * way (IEEE maximum). */
static void test_scatter_maximum_operand_order(void **state)
{
    (void)state;
    float zero[1], upd[1];
    memcpy(zero, &(uint32_t){ 0x7fc00001u }, sizeof zero);
    memcpy(upd, &(uint32_t){ 0xffc00002u }, sizeof upd);
    static const int32_t idx[] = { 0 };
    const float *want_lhs = zero, *want_rhs = upd;
    const char *attrs = "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                        "index_vector_dim=1";
    check_scatter("add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] maximum(a, b)\n}\n\n",
                  "1", zero, "1", idx, "1", upd, attrs, want_lhs, 1);
    check_scatter("add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] maximum(b, a)\n}\n\n",
                  "1", zero, "1", idx, "1", upd, attrs, want_rhs, 1);
}

/* Many duplicate and out-of-range indices, varied magnitudes: the kernel
 * and the per-element combiner give the same bits. */
static void test_scatter_fast_and_slow_paths_agree(void **state)
{
    (void)state;
    float op[8 * 4], upd[50 * 4];
    int32_t idx[50];
    uint32_t r = 5;
    for (int i = 0; i < 50 * 4; i++) {
        r = r * 1664525u + 1013904223u;
        upd[i] = ldexpf((float)((int)((r >> 8) % 2001) - 1000), (int)((r >> 20) % 24) - 12);
        if (i < 32)
            op[i] = (float)i;
        if (i < 50)
            idx[i] = (int32_t)((r >> 4) % 11) - 1;     /* -1..9: some windows skipped */
    }
    const void *params[] = { op, idx, upd };
    char fast[2048], slow[2048];
    scatter_module(fast, sizeof fast, COMP_ADD_F32, "8,4", "50", "50,4", SCATTER_ROWS);
    scatter_module(slow, sizeof slow, COMP_ADD_F32_SLOW, "8,4", "50", "50,4", SCATTER_ROWS);
    TestRun a, b;
    Value *va = test_run_ok(&a, fast, params), *vb = test_run_ok(&b, slow, params);
    assert_true(value_bits_equal(va, vb));
    test_run_free(&a);
    test_run_free(&b);
}

/* Two operands, one combiner: (x0, x1, u0, u1) -> (x0 + u0, max(x1, u1)).
 * Both updates hit element 1: x0[1] = 0 + 5 + 7 = 12; x1[1] = max(max(2, 10), 20) = 20. */
static void test_scatter_variadic(void **state)
{
    (void)state;
    static const float x0[] = { 0, 0, 0, 0 }, u0[] = { 5, 7 };
    static const int32_t x1[] = { 1, 2, 3, 4 }, u1[] = { 10, 20 }, idx[] = { 1, 1 };
    static const char *text =
        "HloModule m\n\nf {\n  a0 = f32[] parameter(0)\n  a1 = s32[] parameter(1)\n"
        "  b0 = f32[] parameter(2)\n  b1 = s32[] parameter(3)\n"
        "  s = f32[] add(a0, b0)\n  m = s32[] maximum(a1, b1)\n  ROOT t = (f32[], s32[]) tuple(s, m)\n}\n\n"
        "ENTRY e {\n  p = f32[4] parameter(0)\n  q = s32[4] parameter(1)\n  i = s32[2,1] parameter(2)\n"
        "  u = f32[2] parameter(3)\n  v = s32[2] parameter(4)\n"
        "  ROOT r = (f32[4], s32[4]) scatter(p, q, i, u, v), update_window_dims={}, inserted_window_dims={0}, "
        "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=f\n}\n";
    const void *params[] = { x0, x1, idx, u0, u1 };
    TestRun run;
    Value *v = test_run_ok(&run, text, params);
    static const float want0[] = { 0, 12, 0, 0 };
    static const int32_t want1[] = { 1, 20, 3, 4 };
    assert_int_equal(v->n_elements, 2);
    assert_f32_array(v->elements[0], want0, 4);
    assert_s32_array(v->elements[1], want1, 4);
    test_run_free(&run);
}

#define HUGE_GATHER_FMT                                                                    \
    "HloModule m\n\nENTRY e {\n  p = f32[3,3] parameter(0)\n  i = %s[2] parameter(1)\n"      \
    "  ROOT g = f32[2,3] gather(p, i), " ROWS "\n}\n"
#define HUGE_SCATTER_FMT                                                                   \
    "HloModule m\n\n" COMP_ADD_F32 "ENTRY e {\n  p = f32[3,3] parameter(0)\n  i = %s[2] parameter(1)\n" \
    "  u = f32[2,3] parameter(2)\n"                                                          \
    "  ROOT s = f32[3,3] scatter(p, i, u), " SCATTER_ROWS ", to_apply=add\n}\n"

/* Indices of any integer type, read by their value (as dynamic-slice does):
 * u64 2^64-1 is past every row, as u32 4e9 is.  Gather clamps u32 4e9 and
 * u64 2^64-1 to row 2 and s64 -2^62 to row 0; scatter skips the same
 * windows (row 1 += [1,2,3] only). */
static void test_gather_scatter_huge_indices(void **state)
{
    (void)state;
    static const uint32_t u32_idx[] = { 4000000000u, 1 };
    static const int64_t s64_idx[] = { -(INT64_C(1) << 62), 1 };
    static const uint64_t u64_idx[] = { UINT64_MAX, 1 };
    static const float want_gather[] = { 7, 8, 9, 4, 5, 6 }, want_gather_lo[] = { 1, 2, 3, 4, 5, 6 };
    static const float want_scatter[] = { 1, 1, 1, 5, 6, 7, 1, 1, 1 };
    static const float upd[] = { 9, 9, 9, 4, 5, 6 };
    const char *types[] = { "u32", "s64", "u64" };
    const void *idx[] = { u32_idx, s64_idx, u64_idx };
    for (int k = 0; k < 3; k++) {
        char text[2048];
        TestRun run;
        snprintf(text, sizeof text, HUGE_GATHER_FMT, types[k]);
        const void *gparams[] = { X33, idx[k] };
        assert_f32_array(test_run_ok(&run, text, gparams), k == 1 ? want_gather_lo : want_gather, 6);
        test_run_free(&run);
        snprintf(text, sizeof text, HUGE_SCATTER_FMT, types[k]);
        const void *sparams[] = { ONES33, idx[k], upd };
        assert_f32_array(test_run_ok(&run, text, sparams), want_scatter, 9);
        test_run_free(&run);
    }
}

/* Two scatter dims: indices {{0,2},{0,1}} (index_vector_dim=2) with
 * updates u[a][b] = rows of X33 and then [10,11,12]: row 0 += [1,2,3] and
 * [7,8,9], row 2 += [4,5,6], row 1 += [10,11,12]. */
static void test_scatter_two_scatter_dims(void **state)
{
    (void)state;
    static const int32_t idx[] = { 0, 2, 0, 1 };
    static const float upd[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
    static const float want[] = { 9, 11, 13, 11, 12, 13, 5, 6, 7 };
    const char *attrs = "update_window_dims={2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                        "index_vector_dim=2";
    check_scatter(COMP_ADD_F32, "3,3", ONES33, "2,2", idx, "2,2,3", upd, attrs, want, 9);
    check_scatter(COMP_ADD_F32_SLOW, "3,3", ONES33, "2,2", idx, "2,2,3", upd, attrs, want, 9);
}

/* Batching dims: batch b writes row b at column idx[b]: (0,2) += 5,
 * (1,0) += 7. */
static void test_scatter_batching_dims(void **state)
{
    (void)state;
    static const float zeros[] = { 0, 0, 0, 0, 0, 0 }, upd[] = { 5, 7 };
    static const int32_t idx[] = { 2, 0 };
    static const float want[] = { 0, 0, 5, 7, 0, 0 };
    check_scatter(COMP_ADD_F32, "2,3", zeros, "2", idx, "2", upd,
                  "update_window_dims={}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, "
                  "input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=1",
                  want, 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gather_rows),
        cmocka_unit_test(test_gather_columns),
        cmocka_unit_test(test_gather_offset_dims_before_batch),
        cmocka_unit_test(test_gather_two_batch_dims),
        cmocka_unit_test(test_gather_clamps_start_indices),
        cmocka_unit_test(test_gather_index_vector_dim_and_start_map),
        cmocka_unit_test(test_gather_batching_dims),
        cmocka_unit_test(test_gather_bad_slice_sizes_is_an_error),
        cmocka_unit_test(test_scatter_add_duplicate_indices),
        cmocka_unit_test(test_scatter_skips_out_of_bounds_windows),
        cmocka_unit_test(test_scatter_assign_last_update_wins),
        cmocka_unit_test(test_scatter_column_windows),
        cmocka_unit_test(test_scatter_applies_updates_in_order),
        cmocka_unit_test(test_scatter_with_no_positions),
        cmocka_unit_test(test_scatter_maximum_operand_order),
        cmocka_unit_test(test_scatter_fast_and_slow_paths_agree),
        cmocka_unit_test(test_scatter_variadic),
        cmocka_unit_test(test_scatter_two_scatter_dims),
        cmocka_unit_test(test_scatter_batching_dims),
        cmocka_unit_test(test_gather_scatter_huge_indices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
