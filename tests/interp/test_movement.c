/* test_movement.c: the data-movement evaluators (src/interp/eval_movement.c)
 * run through the interpreter on small HLO modules.  Expected values are
 * written out by hand, or computed element by element with the index
 * formula of hlo-reference.md 5.6 (never with the kernels under test). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "eval.h"
#include "interp_test_util.h"

/* ---- Helpers */

/* Runs a one-parameter module and returns its array result. */
static Value *run1(TestRun *r, const char *text, const void *p0)
{
    const void *params[] = {p0};
    return test_run_ok(r, text, params);
}

static void expect_s32(const Value *v, const int32_t *want, int64_t n)
{
    assert_int_equal(value_elements(v), n);
    const int32_t *got = v->data;
    for (int64_t i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("element %lld: got %d, want %d", (long long)i, got[i], want[i]);
}

static void expect_f32(const Value *v, const float *want, int64_t n)
{
    assert_int_equal(value_elements(v), n);
    assert_memory_equal(v->data, want, (size_t)n * sizeof *want);
}

/* "f32[2,3]" */
static void shape_text(char *buf, size_t n, const char *type, int rank, const int64_t *dims)
{
    int k = snprintf(buf, n, "%s[", type);
    for (int i = 0; i < rank; i++)
        k += snprintf(buf + k, n - (size_t)k, "%s%lld", i ? "," : "", (long long)dims[i]);
    snprintf(buf + k, n - (size_t)k, "]");
}

/* "{1,0,2}" */
static void list_text(char *buf, size_t n, int count, const int64_t *v)
{
    int k = snprintf(buf, n, "{");
    for (int i = 0; i < count; i++)
        k += snprintf(buf + k, n - (size_t)k, "%s%lld", i ? "," : "", (long long)v[i]);
    snprintf(buf + k, n - (size_t)k, "}");
}

static int64_t product(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    return n;
}

/* Row-major linear index -> multi-index. */
static void unravel(int64_t linear, int rank, const int64_t *dims, int64_t *idx)
{
    for (int d = rank - 1; d >= 0; d--) {
        idx[d] = dims[d] ? linear % dims[d] : 0;
        linear = dims[d] ? linear / dims[d] : 0;
    }
}

static int64_t ravel(int rank, const int64_t *dims, const int64_t *idx)
{
    int64_t linear = 0;
    for (int d = 0; d < rank; d++)
        linear = linear * dims[d] + idx[d];
    return linear;
}

/* Pseudo-random bytes: every element of a test array differs from its neighbours. */
static unsigned char *random_bytes(size_t n, uint32_t seed)
{
    unsigned char *b = malloc(n ? n : 1);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        b[i] = (unsigned char)(x >> 16);
    }
    return b;
}

static void expect_owner(const Value *v, bool aliased)
{
    if (aliased)
        assert_non_null(v->owner);
    else
        assert_null(v->owner);
}

/* ---- reshape and bitcast */

static void test_reshape_aliases_operand_bytes(void **state)
{
    (void)state;
    TestRun r;
    int32_t in[6] = {0, 1, 2, 3, 4, 5};
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = s32[2,3] parameter(0)\n"
                    "  ROOT r = s32[3,1,2] reshape(p)\n}\n",
                    in);
    expect_owner(v, true);
    assert_int_equal(v->shape->rank, 3);
    expect_s32(v, in, 6);
    test_run_free(&r);
}

static void test_reshape_scalar_to_ones(void **state)
{
    (void)state;
    TestRun r;
    float in = 2.5f;
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n"
                    "  ROOT r = f32[1,1] reshape(p)\n}\n",
                    &in);
    expect_f32(v, &in, 1);
    expect_owner(v, true);
    test_run_free(&r);
}

static void test_bitcast_default_layouts_alias(void **state)
{
    (void)state;
    TestRun r;
    float in[6] = {0, 1, 2, 3, 4, 5};
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = f32[2,3]{1,0} parameter(0)\n"
                    "  ROOT r = f32[3,2]{1,0} bitcast(p)\n}\n",
                    in);
    expect_owner(v, true);
    expect_f32(v, in, 6);
    test_run_free(&r);
    /* A layout that only moves a size-1 dim is still row-major. */
    v = run1(&r,
             "HloModule m\nENTRY e {\n  p = f32[1,6]{0,1} parameter(0)\n"
             "  ROOT r = f32[6] bitcast(p)\n}\n",
             in);
    expect_owner(v, true);
    expect_f32(v, in, 6);
    test_run_free(&r);
}

/* Operand [[0,1,2],[3,4,5]] row-major: physical bytes 0 1 2 3 4 5.  Read
 * as f32[3,2]{0,1} (column-major): r[i][j] = phys[j*3 + i], so r is the
 * transpose [[0,3],[1,4],[2,5]]. */
static void test_bitcast_column_major_result_is_transpose(void **state)
{
    (void)state;
    TestRun r;
    float in[6] = {0, 1, 2, 3, 4, 5}, want[6] = {0, 3, 1, 4, 2, 5};
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = f32[2,3]{1,0} parameter(0)\n"
                    "  ROOT r = f32[3,2]{0,1} bitcast(p)\n}\n",
                    in);
    expect_f32(v, want, 6);
    test_run_free(&r);
}

/* Operand f32[2,3]{0,1}: physical order a00 a10 a01 a11 a02 a12 = 0 3 1 4 2 5. */
static void test_bitcast_column_major_operand_linearises(void **state)
{
    (void)state;
    TestRun r;
    float in[6] = {0, 1, 2, 3, 4, 5}, want[6] = {0, 3, 1, 4, 2, 5};
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = f32[2,3]{0,1} parameter(0)\n"
                    "  ROOT r = f32[6]{0} bitcast(p)\n}\n",
                    in);
    expect_f32(v, want, 6);
    test_run_free(&r);
}

/* Physical 0 3 1 4 2 5 read as f32[3,2]{0,1}: r[i][j] = phys[j*3 + i]:
 * r00=0 r10=3 r20=1 r01=4 r11=2 r21=5, row-major 0 4 3 2 1 5. */
static void test_bitcast_both_layouts_non_default(void **state)
{
    (void)state;
    TestRun r;
    float in[6] = {0, 1, 2, 3, 4, 5}, want[6] = {0, 4, 3, 2, 1, 5};
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = f32[2,3]{0,1} parameter(0)\n"
                    "  ROOT r = f32[3,2]{0,1} bitcast(p)\n}\n",
                    in);
    expect_f32(v, want, 6);
    test_run_free(&r);
}

/* XLA's way of changing a layout before a bitcast: a transpose laid out
 * {0,1}, copied to {1,0}, then bitcast.  The copy's value is the same
 * logical array; the bitcast must read it under the copy's declared {1,0}
 * (a row-major reshape here), not under the layout the transpose's value
 * came with (which would undo the transpose: 0 1 2 3 4 5). */
static void test_bitcast_reads_its_operands_declared_layout(void **state)
{
    (void)state;
    TestRun r;
    float in[6] = {0, 1, 2, 3, 4, 5}, want[6] = {0, 3, 1, 4, 2, 5};
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = f32[2,3]{1,0} parameter(0)\n"
                    "  t = f32[3,2]{0,1} transpose(p), dimensions={1,0}\n"
                    "  c = f32[3,2]{1,0} copy(t)\n"
                    "  ROOT r = f32[6]{0} bitcast(c)\n}\n",
                    in);
    expect_f32(v, want, 6);
    test_run_free(&r);
}

/* Physical position of a logical index under minor_to_major m2m. */
static int64_t physical_index(int rank, const int64_t *dims, const int64_t *m2m, const int64_t *idx)
{
    int64_t pos = 0, scale = 1;
    for (int k = 0; k < rank; k++) {
        pos += idx[m2m[k]] * scale;
        scale *= dims[m2m[k]];
    }
    return pos;
}

/* bitcast between s32[2,3,4]{0,2,1} and s32[4,6,1] under result layout m2m. */
static void check_bitcast_3d(const int64_t *sm, const char *layout)
{
    const int64_t xd[3] = {2, 3, 4}, xm[3] = {0, 2, 1}, sd[3] = {4, 6, 1};
    int32_t in[24], phys[24], want[24];
    for (int i = 0; i < 24; i++)
        in[i] = 100 + i;
    for (int64_t i = 0, idx[3]; i < 24; i++) {
        unravel(i, 3, xd, idx);
        phys[physical_index(3, xd, xm, idx)] = in[i];
    }
    for (int64_t i = 0, idx[3]; i < 24; i++) {
        unravel(i, 3, sd, idx);
        want[i] = phys[physical_index(3, sd, sm, idx)];
    }
    char text[256];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  p = s32[2,3,4]{0,2,1} parameter(0)\n"
             "  ROOT r = s32[4,6,1]%s bitcast(p)\n}\n",
             layout);
    TestRun r;
    expect_s32(run1(&r, text, in), want, 24);
    test_run_free(&r);
}

static void test_bitcast_3d_layouts_against_formula(void **state)
{
    (void)state;
    const int64_t row_major_like[3] = {1, 2, 0}, column_major[3] = {0, 1, 2};
    check_bitcast_3d(row_major_like, "{1,2,0}");
    check_bitcast_3d(column_major, "{0,1,2}");
}

/* Column-major f32[2,2] bits read as u32[4]: 1.0f = 0x3f800000 etc. */
static void test_bitcast_changes_element_type(void **state)
{
    (void)state;
    TestRun r;
    float in[4] = {1, 2, 3, 4};
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = f32[2,2]{0,1} parameter(0)\n"
                    "  ROOT r = u32[4]{0} bitcast(p)\n}\n",
                    in);
    const uint32_t want[4] = {0x3f800000u, 0x40400000u, 0x40000000u, 0x40800000u};
    assert_memory_equal(v->data, want, sizeof want);
    test_run_free(&r);
}

/* s4 is stored one element per byte: a bitcast that packs nibbles is refused. */
static void test_bitcast_sub_byte_packing_is_unsupported(void **state)
{
    (void)state;
    TestRun r;
    uint8_t in[8] = {0};
    const void *params[] = {in};
    assert_false(test_run(&r,
                          "HloModule m\nENTRY e {\n  p = s4[8] parameter(0)\n"
                          "  ROOT r = s8[4] bitcast(p)\n}\n",
                          params));
    assert_int_equal(r.err.code, ERR_UNSUPPORTED);
    assert_int_equal(r.err.loc.line, 4);
    test_run_free(&r);
}

/* ---- transpose */

static void test_transpose_2d_by_hand(void **state)
{
    (void)state;
    TestRun r;
    int32_t in[6] = {0, 1, 2, 3, 4, 5}, want[6] = {0, 3, 1, 4, 2, 5};
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = s32[2,3] parameter(0)\n"
                    "  ROOT r = s32[3,2] transpose(p), dimensions={1,0}\n}\n",
                    in);
    expect_s32(v, want, 6);
    expect_owner(v, false);
    test_run_free(&r);
}

/* transpose(x) against out[i] = in[j] with j[p[i]] = i[i], bytewise. */
static void check_transpose(const char *type, int esize, int rank, const int64_t *xd,
                            const int64_t *perm)
{
    int64_t sd[IR_MAX_RANK], n = product(rank, xd);
    for (int i = 0; i < rank; i++)
        sd[i] = xd[perm[i]];
    char xs[64], ss[64], ps[64], text[512];
    shape_text(xs, sizeof xs, type, rank, xd);
    shape_text(ss, sizeof ss, type, rank, sd);
    list_text(ps, sizeof ps, rank, perm);
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  p = %s parameter(0)\n"
             "  ROOT r = %s transpose(p), dimensions=%s\n}\n",
             xs, ss, ps);
    unsigned char *in = random_bytes((size_t)(n * esize), (uint32_t)n);
    TestRun r;
    Value *v = run1(&r, text, in);
    const unsigned char *got = v->data;
    for (int64_t i = 0, idx[IR_MAX_RANK], j[IR_MAX_RANK]; i < n; i++) {
        unravel(i, rank, sd, idx);
        for (int k = 0; k < rank; k++)
            j[perm[k]] = idx[k];
        if (memcmp(got + i * esize, in + ravel(rank, xd, j) * esize, (size_t)esize) != 0)
            fail_msg("%s: element %lld differs", text, (long long)i);
    }
    free(in);
    test_run_free(&r);
}

static void test_transpose_2d_3d_all_permutations(void **state)
{
    (void)state;
    const int64_t d2[2] = {37, 70}, p2[2] = {1, 0};
    check_transpose("f32", 4, 2, d2, p2);
    check_transpose("u8", 1, 2, d2, p2);
    check_transpose("bf16", 2, 2, d2, p2);
    check_transpose("f64", 8, 2, d2, p2);
    check_transpose("c128", 16, 2, d2, p2);
    const int64_t d3[3] = {5, 34, 33};
    const int64_t perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int i = 0; i < 6; i++) {
        check_transpose("s32", 4, 3, d3, perms[i]);
        check_transpose("s8", 1, 3, d3, perms[i]);
        check_transpose("c64", 8, 3, d3, perms[i]);
    }
}

static void test_transpose_4d_permutations(void **state)
{
    (void)state;
    const int64_t d4[4] = {3, 4, 5, 6}, small[4] = {2, 1, 3, 2}, wide[4] = {2, 40, 3, 2};
    const int64_t perms[6][4] = {{3, 2, 1, 0}, {0, 2, 1, 3}, {1, 0, 3, 2},
                                 {2, 3, 0, 1}, {0, 3, 1, 2}, {3, 0, 2, 1}};
    for (int i = 0; i < 6; i++) {
        check_transpose("f32", 4, 4, d4, perms[i]);
        check_transpose("f16", 2, 4, small, perms[i]);
        check_transpose("s64", 8, 4, wide, perms[i]);
        check_transpose("u8", 1, 4, wide, perms[i]);
    }
}

/* Sizes past one 64-element tile, and small minor dims that become wider elements. */
static void test_transpose_tile_edges_and_wide_elements(void **state)
{
    (void)state;
    const int64_t big[2] = {130, 67}, p2[2] = {1, 0};
    check_transpose("u8", 1, 2, big, p2);
    check_transpose("f32", 4, 2, big, p2);
    check_transpose("f64", 8, 2, big, p2);
    const int64_t pairs[3] = {40, 33, 2}, quads[3] = {64, 3, 4}, p3[3] = {1, 0, 2};
    check_transpose("f32", 4, 3, pairs, p3);
    check_transpose("u8", 1, 3, quads, p3);
    check_transpose("c64", 8, 3, pairs, p3);
    const int64_t p3b[3] = {2, 1, 0};
    check_transpose("s16", 2, 3, quads, p3b);
    /* 4- and 2-byte elements past one band of 256 source rows, with ragged
     * tiles (the AVX2 kernels where the CPU has it, else the SSE2 ones),
     * and a batch of them. */
    const int64_t band[2] = {531, 300}, band_t[2] = {300, 531}, exact[2] = {256, 512};
    check_transpose("f32", 4, 2, band, p2);
    check_transpose("s32", 4, 2, band_t, p2);
    check_transpose("u32", 4, 2, exact, p2);
    check_transpose("bf16", 2, 2, band, p2);
    check_transpose("s16", 2, 2, band_t, p2);
    check_transpose("f16", 2, 2, exact, p2);
    const int64_t batch[3] = {3, 41, 270}, pb[3] = {0, 2, 1};
    check_transpose("f32", 4, 3, batch, pb);
    check_transpose("bf16", 2, 3, batch, pb);
}

static void test_transpose_identity_and_size1_dims_alias(void **state)
{
    (void)state;
    TestRun r;
    int32_t in[6] = {0, 1, 2, 3, 4, 5};
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = s32[2,3] parameter(0)\n"
                    "  ROOT r = s32[2,3] transpose(p), dimensions={0,1}\n}\n",
                    in);
    expect_owner(v, true);
    expect_s32(v, in, 6);
    test_run_free(&r);
    v = run1(&r,
             "HloModule m\nENTRY e {\n  p = s32[1,6,1] parameter(0)\n"
             "  ROOT r = s32[1,1,6] transpose(p), dimensions={2,0,1}\n}\n",
             in);
    expect_owner(v, true);
    expect_s32(v, in, 6);
    test_run_free(&r);
}

/* ---- broadcast */

static void test_broadcast_scalar_fills(void **state)
{
    (void)state;
    TestRun r;
    float in = -1.5f, want[6] = {-1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f};
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n"
                    "  ROOT r = f32[2,3] broadcast(p), dimensions={}\n}\n",
                    &in);
    expect_f32(v, want, 6);
    test_run_free(&r);
}

static void test_broadcast_into_middle_dim(void **state)
{
    (void)state;
    TestRun r;
    int32_t in[3] = {7, 8, 9};
    int32_t want[12] = {7, 7, 8, 8, 9, 9, 7, 7, 8, 8, 9, 9};
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = s32[3] parameter(0)\n"
                    "  ROOT r = s32[2,3,2] broadcast(p), dimensions={1}\n}\n",
                    in);
    expect_s32(v, want, 12);
    test_run_free(&r);
}

/* broadcast(x) against out[idx] = in[idx[d0], idx[d1], ...]. */
static void check_broadcast(const char *type, int esize, int xr, const int64_t *xd, int sr,
                            const int64_t *sd, const int64_t *dims)
{
    int64_t n = product(sr, sd);
    char xs[64], ss[64], ds[64], text[512];
    shape_text(xs, sizeof xs, type, xr, xd);
    shape_text(ss, sizeof ss, type, sr, sd);
    list_text(ds, sizeof ds, xr, dims);
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  p = %s parameter(0)\n"
             "  ROOT r = %s broadcast(p), dimensions=%s\n}\n",
             xs, ss, ds);
    unsigned char *in = random_bytes((size_t)(product(xr, xd) * esize), 99);
    TestRun r;
    Value *v = run1(&r, text, in);
    const unsigned char *got = v->data;
    for (int64_t i = 0, idx[IR_MAX_RANK], j[IR_MAX_RANK]; i < n; i++) {
        unravel(i, sr, sd, idx);
        for (int k = 0; k < xr; k++)
            j[k] = idx[dims[k]];
        if (memcmp(got + i * esize, in + ravel(xr, xd, j) * esize, (size_t)esize) != 0)
            fail_msg("%s: element %lld differs", text, (long long)i);
    }
    free(in);
    test_run_free(&r);
}

static void test_broadcast_against_formula(void **state)
{
    (void)state;
    const int64_t x1[1] = {5}, s1[3] = {4, 5, 3}, d1[1] = {1};
    check_broadcast("f32", 4, 1, x1, 3, s1, d1);
    check_broadcast("bf16", 2, 1, x1, 3, s1, d1);
    const int64_t s2[2] = {5, 7}, d2[1] = {0}; /* minor broadcast: rows spread */
    check_broadcast("f64", 8, 1, x1, 2, s2, d2);
    check_broadcast("c128", 16, 1, x1, 2, s2, d2);
    const int64_t x3[2] = {2, 4}, s3[4] = {2, 3, 4, 5}, d3[2] = {0, 2};
    check_broadcast("s8", 1, 2, x3, 4, s3, d3);
    check_broadcast("s32", 4, 2, x3, 4, s3, d3);
    const int64_t x4[2] = {3, 4}, s4[3] = {6, 3, 4},
                  d4[2] = {1, 2}; /* contiguous rows replicated */
    check_broadcast("u16", 2, 2, x4, 3, s4, d4);
    const int64_t x5[2] = {3, 4}, s5[3] = {4, 2, 3}, d5[2] = {2, 0}; /* dims out of order */
    check_broadcast("f32", 4, 2, x5, 3, s5, d5);
    const int64_t x6[2] = {1, 4}, s6[3] = {1, 2, 4}, d6[2] = {0, 2}; /* size-1 dims */
    check_broadcast("f32", 4, 2, x6, 3, s6, d6);
}

static void test_broadcast_same_bytes_aliases(void **state)
{
    (void)state;
    TestRun r;
    int32_t in[3] = {1, 2, 3};
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = s32[3] parameter(0)\n"
                    "  ROOT r = s32[1,3,1] broadcast(p), dimensions={1}\n}\n",
                    in);
    expect_owner(v, true);
    expect_s32(v, in, 3);
    test_run_free(&r);
}

/* ---- slice */

/* a[i][j] = 6i + j on f32[5,6]; rows 1,3 and columns 0,3. */
static void test_slice_with_strides(void **state)
{
    (void)state;
    TestRun r;
    float in[30], want[4] = {6, 9, 18, 21};
    for (int i = 0; i < 30; i++)
        in[i] = (float)i;
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = f32[5,6] parameter(0)\n"
                    "  ROOT r = f32[2,2] slice(p), slice={[1:5:2], [0:6:3]}\n}\n",
                    in);
    expect_f32(v, want, 4);
    test_run_free(&r);
}

static void test_slice_contiguous_rows_and_columns(void **state)
{
    (void)state;
    TestRun r;
    float in[30], want[8] = {7, 8, 9, 10, 13, 14, 15, 16};
    for (int i = 0; i < 30; i++)
        in[i] = (float)i;
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = f32[5,6] parameter(0)\n"
                    "  ROOT r = f32[2,4] slice(p), slice={[1:3], [1:5]}\n}\n",
                    in);
    expect_f32(v, want, 8);
    test_run_free(&r);
    v = run1(&r,
             "HloModule m\nENTRY e {\n  p = f32[5,6] parameter(0)\n"
             "  ROOT r = f32[5,6] slice(p), slice={[0:5], [0:6]}\n}\n",
             in);
    expect_owner(v, true);
    expect_f32(v, in, 30);
    test_run_free(&r);
}

static void test_slice_3d_against_formula(void **state)
{
    (void)state;
    const int64_t xd[3] = {7, 9, 40};
    const IrSliceDim sl[3] = {{1, 7, 3}, {0, 9, 1}, {5, 38, 2}};
    int64_t sd[3];
    for (int d = 0; d < 3; d++)
        sd[d] = (sl[d].limit - sl[d].start + sl[d].stride - 1) / sl[d].stride;
    char xs[64], ss[64], text[512];
    shape_text(xs, sizeof xs, "s16", 3, xd);
    shape_text(ss, sizeof ss, "s16", 3, sd);
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  p = %s parameter(0)\n"
             "  ROOT r = %s slice(p), slice={[1:7:3], [0:9], [5:38:2]}\n}\n",
             xs, ss);
    unsigned char *in = random_bytes((size_t)product(3, xd) * 2, 5);
    TestRun r;
    Value *v = run1(&r, text, in);
    const unsigned char *got = v->data;
    for (int64_t i = 0, idx[3]; i < product(3, sd); i++) {
        unravel(i, 3, sd, idx);
        for (int d = 0; d < 3; d++)
            idx[d] = sl[d].start + idx[d] * sl[d].stride;
        assert_memory_equal(got + i * 2, in + ravel(3, xd, idx) * 2, 2);
    }
    free(in);
    test_run_free(&r);
}

/* f32[9,4], rows 0,2,4,6,8 and columns 1..2: two-float runs at odd offsets. */
static void test_slice_short_runs(void **state)
{
    (void)state;
    TestRun r;
    float in[36], want[10];
    for (int i = 0; i < 36; i++)
        in[i] = (float)i;
    for (int i = 0; i < 5; i++)
        want[2 * i] = (float)(8 * i + 1), want[2 * i + 1] = (float)(8 * i + 2);
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = f32[9,4] parameter(0)\n"
                    "  ROOT r = f32[5,2] slice(p), slice={[0:9:2], [1:3]}\n}\n",
                    in);
    expect_f32(v, want, 10);
    test_run_free(&r);
}

/* ---- dynamic-slice */

static const char *const ds_s32 =
    "HloModule m\nENTRY e {\n  p = s32[4,5] parameter(0)\n  i = s32[] parameter(1)\n"
    "  j = s32[] parameter(2)\n"
    "  ROOT r = s32[2,3] dynamic-slice(p, i, j), dynamic_slice_sizes={2,3}\n}\n";

/* a = 0..19 as s32[4,5]; the window rows start..start+1, cols start..start+2. */
static void run_ds_s32(int32_t i, int32_t j, const int32_t *want)
{
    int32_t in[20];
    for (int k = 0; k < 20; k++)
        in[k] = k;
    const void *params[] = {in, &i, &j};
    TestRun r;
    Value *v = test_run_ok(&r, ds_s32, params);
    expect_s32(v, want, 6);
    test_run_free(&r);
}

static void test_dynamic_slice_s32_in_range_and_clamped(void **state)
{
    (void)state;
    const int32_t in_range[6] = {6, 7, 8, 11, 12, 13};
    const int32_t negative[6] = {1, 2, 3, 6, 7, 8};      /* (-3, 1) -> (0, 1) */
    const int32_t too_big[6] = {12, 13, 14, 17, 18, 19}; /* (10, 10) -> (2, 2) */
    run_ds_s32(1, 1, in_range);
    run_ds_s32(-3, 1, negative);
    run_ds_s32(10, 10, too_big);
    run_ds_s32(INT32_MIN, INT32_MAX, (const int32_t[6]){2, 3, 4, 7, 8, 9});
}

/* u32 0xffffffff reads as 4294967295 (clamped high); s64 -2^40 clamps to 0. */
static void test_dynamic_slice_u32_and_s64_indices(void **state)
{
    (void)state;
    int32_t in[20];
    for (int k = 0; k < 20; k++)
        in[k] = k;
    uint32_t i = 0xffffffffu;
    int64_t j = -((int64_t)1 << 40);
    const void *params[] = {in, &i, &j};
    TestRun r;
    Value *v = test_run_ok(
        &r,
        "HloModule m\nENTRY e {\n  p = s32[4,5] parameter(0)\n  i = u32[] parameter(1)\n"
        "  j = s64[] parameter(2)\n"
        "  ROOT r = s32[2,3] dynamic-slice(p, i, j), dynamic_slice_sizes={2,3}\n}\n",
        params);
    const int32_t want[6] = {10, 11, 12, 15, 16, 17};
    expect_s32(v, want, 6);
    test_run_free(&r);
    uint32_t i2 = 1;
    int64_t j2 = 7;
    const void *params2[] = {in, &i2, &j2};
    v = test_run_ok(
        &r,
        "HloModule m\nENTRY e {\n  p = s32[4,5] parameter(0)\n  i = u32[] parameter(1)\n"
        "  j = s64[] parameter(2)\n"
        "  ROOT r = s32[2,3] dynamic-slice(p, i, j), dynamic_slice_sizes={2,3}\n}\n",
        params2);
    const int32_t want2[6] = {7, 8, 9, 12, 13, 14};
    expect_s32(v, want2, 6);
    test_run_free(&r);
}

static void test_dynamic_slice_legacy_index_vector(void **state)
{
    (void)state;
    int32_t in[20], idx[2] = {3, -1};
    for (int k = 0; k < 20; k++)
        in[k] = k;
    const void *params[] = {in, idx};
    TestRun r;
    Value *v = test_run_ok(
        &r,
        "HloModule m\nENTRY e {\n  p = s32[4,5] parameter(0)\n  i = s32[2] parameter(1)\n"
        "  ROOT r = s32[2,3] dynamic-slice(p, i), dynamic_slice_sizes={2,3}\n}\n",
        params);
    const int32_t want[6] = {10, 11, 12, 15, 16, 17}; /* (3, -1) -> (2, 0) */
    expect_s32(v, want, 6);
    test_run_free(&r);
}

static void test_dynamic_slice_full_window_aliases(void **state)
{
    (void)state;
    int32_t in[4] = {1, 2, 3, 4}, i = 5;
    const void *params[] = {in, &i};
    TestRun r;
    Value *v =
        test_run_ok(&r,
                    "HloModule m\nENTRY e {\n  p = s32[4] parameter(0)\n  i = s32[] parameter(1)\n"
                    "  ROOT r = s32[4] dynamic-slice(p, i), dynamic_slice_sizes={4}\n}\n",
                    params);
    expect_owner(v, true);
    expect_s32(v, in, 4);
    test_run_free(&r);
}

/* ---- dynamic-update-slice */

/* The window (3, -1) clamps to (2, 0) for a 2x2 update into s32[4,5]; the
 * operand, returned alongside, must be unchanged. */
static void test_dynamic_update_slice_clamps_and_copies(void **state)
{
    (void)state;
    int32_t in[20], upd[4] = {100, 101, 102, 103}, i = 3, j = -1;
    for (int k = 0; k < 20; k++)
        in[k] = k;
    const void *params[] = {in, upd, &i, &j};
    TestRun r;
    Value *v = test_run_ok(
        &r,
        "HloModule m\nENTRY e {\n  p = s32[4,5] parameter(0)\n  u = s32[2,2] parameter(1)\n"
        "  i = s32[] parameter(2)\n  j = s32[] parameter(3)\n"
        "  d = s32[4,5] dynamic-update-slice(p, u, i, j)\n"
        "  ROOT t = (s32[4,5], s32[4,5]) tuple(d, p)\n}\n",
        params);
    int32_t want[20];
    memcpy(want, in, sizeof want);
    want[10] = 100, want[11] = 101, want[15] = 102, want[16] = 103;
    expect_s32(v->elements[0], want, 20);
    expect_s32(v->elements[1], in, 20);
    test_run_free(&r);
}

static void test_dynamic_update_slice_u64_index_and_middle(void **state)
{
    (void)state;
    int32_t in[20] = {0}, upd[3] = {7, 8, 9};
    uint64_t i = 1, j = 2;
    const void *params[] = {in, upd, &i, &j};
    TestRun r;
    Value *v = test_run_ok(
        &r,
        "HloModule m\nENTRY e {\n  p = s32[4,5] parameter(0)\n  u = s32[1,3] parameter(1)\n"
        "  i = u64[] parameter(2)\n  j = u64[] parameter(3)\n"
        "  ROOT d = s32[4,5] dynamic-update-slice(p, u, i, j)\n}\n",
        params);
    int32_t want[20] = {0};
    want[7] = 7, want[8] = 8, want[9] = 9;
    expect_s32(v, want, 20);
    test_run_free(&r);
}

static void test_dynamic_update_slice_legacy_index_vector(void **state)
{
    (void)state;
    int32_t in[6] = {0, 1, 2, 3, 4, 5}, upd[2] = {-1, -2}, idx[2] = {-5, 9};
    const void *params[] = {in, upd, idx};
    TestRun r;
    Value *v = test_run_ok(&r,
                           "HloModule m\nENTRY e {\n  p = s32[2,3] parameter(0)\n"
                           "  u = s32[1,2] parameter(1)\n  i = s32[2] parameter(2)\n"
                           "  ROOT d = s32[2,3] dynamic-update-slice(p, u, i)\n}\n",
                           params);
    const int32_t want[6] = {0, -1, -2, 3, 4, 5}; /* (-5, 9) -> (0, 1) */
    expect_s32(v, want, 6);
    test_run_free(&r);
}

/* ---- concatenate */

static void test_concatenate_dim0_three_operands(void **state)
{
    (void)state;
    int32_t a[2] = {1, 2}, b[4] = {3, 4, 5, 6}, c[2] = {7, 8};
    const void *params[] = {a, b, c};
    TestRun r;
    Value *v = test_run_ok(
        &r,
        "HloModule m\nENTRY e {\n  a = s32[1,2] parameter(0)\n  b = s32[2,2] parameter(1)\n"
        "  c = s32[1,2] parameter(2)\n"
        "  ROOT r = s32[4,2] concatenate(a, b, c), dimensions={0}\n}\n",
        params);
    const int32_t want[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    expect_s32(v, want, 8);
    test_run_free(&r);
}

static void test_concatenate_minor_dim_three_operands(void **state)
{
    (void)state;
    int32_t a[2] = {1, 2}, b[4] = {3, 4, 5, 6}, c[6] = {7, 8, 9, 10, 11, 12};
    const void *params[] = {a, b, c};
    TestRun r;
    Value *v = test_run_ok(
        &r,
        "HloModule m\nENTRY e {\n  a = s32[2,1] parameter(0)\n  b = s32[2,2] parameter(1)\n"
        "  c = s32[2,3] parameter(2)\n"
        "  ROOT r = s32[2,6] concatenate(a, b, c), dimensions={1}\n}\n",
        params);
    const int32_t want[12] = {1, 3, 4, 7, 8, 9, 2, 5, 6, 10, 11, 12};
    expect_s32(v, want, 12);
    test_run_free(&r);
}

static void test_concatenate_middle_dim_with_empty_operand(void **state)
{
    (void)state;
    uint8_t a[4] = {1, 2, 3, 4}, b[1] = {0}, c[2] = {5, 6};
    const void *params[] = {a, b, c};
    TestRun r;
    Value *v = test_run_ok(
        &r,
        "HloModule m\nENTRY e {\n  a = u8[2,1,2] parameter(0)\n  b = u8[2,0,2] parameter(1)\n"
        "  c = u8[1,2] parameter(2)\n"
        "  x = u8[2,1,2] broadcast(c), dimensions={1,2}\n"
        "  ROOT r = u8[2,2,2] concatenate(a, b, x), dimensions={1}\n}\n",
        params);
    const uint8_t want[8] = {1, 2, 5, 6, 3, 4, 5, 6};
    assert_memory_equal(v->data, want, 8);
    test_run_free(&r);
}

/* ---- pad */

static const char *const pad_module_fmt =
    "HloModule m\nENTRY e {\n  p = %s parameter(0)\n  v = %s[] parameter(1)\n"
    "  ROOT r = %s pad(p, v), padding=%s\n}\n";

static Value *run_pad(TestRun *r, const char *in_shape, const char *type, const char *out_shape,
                      const char *padding, const void *in, const void *value)
{
    char text[512];
    snprintf(text, sizeof text, pad_module_fmt, in_shape, type, out_shape, padding);
    const void *params[] = {in, value};
    return test_run_ok(r, text, params);
}

static void test_pad_negative_lo_crops(void **state)
{
    (void)state;
    TestRun r;
    float in[5] = {0, 1, 2, 3, 4}, pv = 9, want[4] = {2, 3, 4, 9};
    expect_f32(run_pad(&r, "f32[5]", "f32", "f32[4]", "-2_1", in, &pv), want, 4);
    test_run_free(&r);
    float want2[3] = {9, 0, 1}; /* lo 1, hi -3 */
    expect_f32(run_pad(&r, "f32[5]", "f32", "f32[3]", "1_-3", in, &pv), want2, 3);
    test_run_free(&r);
}

/* f32[2,3] a = [[1,2,3],[4,5,6]], padding 1_0_1 x 0_-1_1:
 * dim 0: 1 + 0 + 2 + 1 = 4, rows land at 1 and 3;
 * dim 1: 0 - 1 + 3 + 2 = 4, columns land at 0, 2 (4 is cropped). */
static void test_pad_interior_2d_by_hand(void **state)
{
    (void)state;
    TestRun r;
    float in[6] = {1, 2, 3, 4, 5, 6}, pv = 0.5f;
    float want[16] = {0.5f, 0.5f, 0.5f, 0.5f, 1, 0.5f, 2, 0.5f,
                      0.5f, 0.5f, 0.5f, 0.5f, 4, 0.5f, 5, 0.5f};
    expect_f32(run_pad(&r, "f32[2,3]", "f32", "f32[4,4]", "1_0_1x0_-1_1", in, &pv), want, 16);
    test_run_free(&r);
}

/* f32[4] padding -1_-1_1: positions -1, 1, 3, 5 of 5 keep elements 1 and 2. */
static void test_pad_negative_with_interior(void **state)
{
    (void)state;
    TestRun r;
    float in[4] = {10, 11, 12, 13}, pv = -1, want[5] = {-1, 11, -1, 12, -1};
    expect_f32(run_pad(&r, "f32[4]", "f32", "f32[5]", "-1_-1_1", in, &pv), want, 5);
    test_run_free(&r);
}

/* pad against: out position lo + i*(interior+1) holds in[i], else the value. */
static void test_pad_3d_against_formula(void **state)
{
    (void)state;
    const int64_t xd[3] = {3, 4, 37};
    const IrPadDim pd[3] = {{2, -1, 1}, {-1, 3, 0}, {1, -2, 2}};
    int64_t sd[3];
    for (int d = 0; d < 3; d++)
        sd[d] = pd[d].lo + pd[d].hi + xd[d] + (xd[d] - 1) * pd[d].interior;
    char xs[64], ss[64];
    shape_text(xs, sizeof xs, "u16", 3, xd);
    shape_text(ss, sizeof ss, "u16", 3, sd);
    uint16_t *in = (uint16_t *)random_bytes((size_t)product(3, xd) * 2, 3), pv = 0xabcd;
    int64_t n = product(3, sd);
    uint16_t *want = malloc((size_t)n * 2);
    for (int64_t i = 0; i < n; i++)
        want[i] = pv;
    for (int64_t i = 0, idx[3], at[3]; i < product(3, xd); i++) {
        unravel(i, 3, xd, idx);
        bool inside = true;
        for (int d = 0; d < 3; d++) {
            at[d] = pd[d].lo + idx[d] * (pd[d].interior + 1);
            inside = inside && at[d] >= 0 && at[d] < sd[d];
        }
        if (inside)
            want[ravel(3, sd, at)] = in[i];
    }
    TestRun r;
    Value *v = run_pad(&r, xs, "u16", ss, "2_-1_1x-1_3_0x1_-2_2", in, &pv);
    assert_int_equal(value_elements(v), n);
    assert_memory_equal(v->data, want, (size_t)n * 2);
    test_run_free(&r);
    free(in);
    free(want);
}

static void test_pad_zero_padding_aliases(void **state)
{
    (void)state;
    TestRun r;
    float in[2] = {1, 2}, pv = 0;
    Value *v = run_pad(&r, "f32[2]", "f32", "f32[2]", "0_0", in, &pv);
    expect_owner(v, true);
    expect_f32(v, in, 2);
    test_run_free(&r);
}

/* ---- reverse */

static void test_reverse_by_hand(void **state)
{
    (void)state;
    TestRun r;
    int32_t in[6] = {0, 1, 2, 3, 4, 5};
    const int32_t minor[6] = {2, 1, 0, 5, 4, 3}, both[6] = {5, 4, 3, 2, 1, 0},
                  major[6] = {3, 4, 5, 0, 1, 2};
    expect_s32(run1(&r,
                    "HloModule m\nENTRY e {\n  p = s32[2,3] parameter(0)\n"
                    "  ROOT r = s32[2,3] reverse(p), dimensions={1}\n}\n",
                    in),
               minor, 6);
    test_run_free(&r);
    expect_s32(run1(&r,
                    "HloModule m\nENTRY e {\n  p = s32[2,3] parameter(0)\n"
                    "  ROOT r = s32[2,3] reverse(p), dimensions={0,1}\n}\n",
                    in),
               both, 6);
    test_run_free(&r);
    expect_s32(run1(&r,
                    "HloModule m\nENTRY e {\n  p = s32[2,3] parameter(0)\n"
                    "  ROOT r = s32[2,3] reverse(p), dimensions={0}\n}\n",
                    in),
               major, 6);
    test_run_free(&r);
    Value *v = run1(&r,
                    "HloModule m\nENTRY e {\n  p = s32[1,6] parameter(0)\n"
                    "  ROOT r = s32[1,6] reverse(p), dimensions={0}\n}\n",
                    in);
    expect_owner(v, true);
    expect_s32(v, in, 6);
    test_run_free(&r);
}

/* ---- iota */

static void test_iota_s32_and_f32(void **state)
{
    (void)state;
    TestRun r;
    const int32_t want_s32[6] = {0, 1, 2, 0, 1, 2};
    expect_s32(
        run1(&r, "HloModule m\nENTRY e {\n  ROOT r = s32[2,3] iota(), iota_dimension=1\n}\n", NULL),
        want_s32, 6);
    test_run_free(&r);
    const float want_f32[6] = {0, 0, 1, 1, 2, 2};
    expect_f32(
        run1(&r, "HloModule m\nENTRY e {\n  ROOT r = f32[3,2] iota(), iota_dimension=0\n}\n", NULL),
        want_f32, 6);
    test_run_free(&r);
}

/* bf16: 1.0 = 0x3f80, 2 = 0x4000, 3 = 0x4040; 257 rounds to even 256 =
 * 0x4380 and 259 to 260 = 0x4382 (steps of 2 in [256, 512)). */
static void test_iota_bf16_rounds_to_nearest_even(void **state)
{
    (void)state;
    TestRun r;
    Value *v = run1(
        &r, "HloModule m\nENTRY e {\n  ROOT r = bf16[300] iota(), iota_dimension=0\n}\n", NULL);
    const uint16_t *got = v->data;
    assert_int_equal(got[0], 0x0000);
    assert_int_equal(got[1], 0x3f80);
    assert_int_equal(got[2], 0x4000);
    assert_int_equal(got[3], 0x4040);
    assert_int_equal(got[257], 0x4380);
    assert_int_equal(got[259], 0x4382);
    test_run_free(&r);
}

static void test_iota_s8_wraps_and_pred(void **state)
{
    (void)state;
    TestRun r;
    Value *v = run1(
        &r, "HloModule m\nENTRY e {\n  ROOT r = s8[2,300] iota(), iota_dimension=1\n}\n", NULL);
    const int8_t *s8 = v->data;
    assert_int_equal(s8[127], 127);
    assert_int_equal(s8[200], -56);
    assert_int_equal(s8[300 + 299], 43);
    test_run_free(&r);
    v = run1(&r, "HloModule m\nENTRY e {\n  ROOT r = pred[3] iota(), iota_dimension=0\n}\n", NULL);
    const uint8_t want[3] = {0, 1, 1};
    assert_memory_equal(v->data, want, 3);
    test_run_free(&r);
}

/* ---- empty arrays, rank 0, degenerate dims */

static void test_empty_arrays(void **state)
{
    (void)state;
    static const char *const modules[] = {
        "HloModule m\nENTRY e {\n  p = f32[0,3] parameter(0)\n"
        "  ROOT r = f32[3,0] transpose(p), dimensions={1,0}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[0,3] parameter(0)\n"
        "  ROOT r = f32[0,2] slice(p), slice={[0:0], [1:3]}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[0,3] parameter(0)\n"
        "  ROOT r = f32[0,3] reverse(p), dimensions={0,1}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[0,3] parameter(0)\n"
        "  ROOT r = f32[2,0,3] broadcast(p), dimensions={1,2}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[0,3] parameter(0)\n"
        "  ROOT r = f32[0,6] concatenate(p, p), dimensions={1}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[0,3] parameter(0)\n"
        "  ROOT r = f32[3,0] reshape(p)\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[0,3] parameter(0)\n"
        "  ROOT r = f32[0,1] slice(p), slice={[0:0], [0:3:3]}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[0,3] parameter(0)\n  i = s32[] constant(1)\n"
        "  ROOT r = f32[0,2] dynamic-slice(p, i, i), dynamic_slice_sizes={0,2}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[0,3] parameter(0)\n"
        "  ROOT r = f32[0,3] iota(), iota_dimension=1\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[0,3] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[0,5] pad(p, z), padding=0_0x1_1\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[0,3] parameter(0)\n  i = s32[] constant(1)\n"
        "  ROOT r = f32[0,3] dynamic-update-slice(p, p, i, i)\n}\n",
    };
    float dummy = 0;
    for (size_t i = 0; i < sizeof modules / sizeof *modules; i++) {
        TestRun r;
        Value *v = run1(&r, modules[i], &dummy);
        assert_int_equal(value_elements(v), 0);
        test_run_free(&r);
    }
}

/* An empty operand padded out to a non-empty result is all padding. */
static void test_pad_empty_operand_gives_padding(void **state)
{
    (void)state;
    TestRun r;
    float in = 0, pv = 4, want[6] = {4, 4, 4, 4, 4, 4};
    expect_f32(run_pad(&r, "f32[2,0]", "f32", "f32[2,3]", "0_0_0x2_1_5", &in, &pv), want, 6);
    test_run_free(&r);
}

static void test_rank0_ops(void **state)
{
    (void)state;
    static const char *const modules[] = {
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] transpose(p), "
        "dimensions={}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] broadcast(p), "
        "dimensions={}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] slice(p), "
        "slice={}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] reverse(p), "
        "dimensions={}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n"
        "  ROOT r = f32[] dynamic-slice(p), dynamic_slice_sizes={}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] "
        "dynamic-update-slice(p, p)\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] bitcast(p)\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[1,1]{0,1} "
        "bitcast(p)\n}\n",
    };
    float in = 3.25f;
    for (size_t i = 0; i < sizeof modules / sizeof *modules; i++) {
        TestRun r;
        Value *v = run1(&r, modules[i], &in);
        expect_f32(v, &in, 1);
        test_run_free(&r);
    }
}

/* A rank-0 pad has no padding attribute in text (the printer omits it);
 * called directly, the evaluator copies the operand. */
static void test_pad_rank0_called_directly(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("m");
    IrShape *s = ir_shape_new_array(m->arena, IR_TYPE_F32, 0, NULL);
    IrInstr *x = ir_instr_new(m, IR_OP_PARAMETER, "x", s, 0, NULL);
    IrInstr *ops[2] = {x, x};
    IrInstr *pad = ir_instr_new(m, IR_OP_PAD, "pad", s, 2, ops);
    Error err = {0};
    Value *a = value_new_array(s, &err), *b = value_new_array(s, &err), *out = NULL;
    *(float *)a->data = 1.5f;
    *(float *)b->data = 0;
    Value *args[2] = {a, b};
    assert_true(eval_pad(NULL, pad, args, &out, &err));
    assert_true(*(float *)out->data == 1.5f);
    value_release(out);
    value_release(a);
    value_release(b);
    ir_module_free(m);
}

static void test_degenerate_dims(void **state)
{
    (void)state;
    TestRun r;
    int32_t in[4] = {1, 2, 3, 4};
    const int32_t want_t[4] = {1, 3, 2, 4};
    expect_s32(run1(&r,
                    "HloModule m\nENTRY e {\n  p = s32[1,2,1,2,1] parameter(0)\n"
                    "  ROOT r = s32[1,2,1,2,1] transpose(p), dimensions={4,3,2,1,0}\n}\n",
                    in),
               want_t, 4);
    test_run_free(&r);
    const int32_t want_s[2] = {2, 4};
    expect_s32(run1(&r,
                    "HloModule m\nENTRY e {\n  p = s32[1,2,1,2] parameter(0)\n"
                    "  ROOT r = s32[1,2,1,1] slice(p), slice={[0:1], [0:2], [0:1], [1:2]}\n}\n",
                    in),
               want_s, 2);
    test_run_free(&r);
    const int32_t want_b[8] = {1, 2, 3, 4, 1, 2, 3, 4};
    expect_s32(run1(&r,
                    "HloModule m\nENTRY e {\n  p = s32[1,4] parameter(0)\n"
                    "  ROOT r = s32[2,1,4] broadcast(p), dimensions={1,2}\n}\n",
                    in),
               want_b, 8);
    test_run_free(&r);
}

/* ---- errors */

static void test_dynamic_shape_is_unsupported(void **state)
{
    (void)state;
    IrModule *m = ir_module_new("m");
    int64_t dims[1] = {4};
    IrShape *s = ir_shape_new_array(m->arena, IR_TYPE_F32, 1, dims);
    IrShape *dyn = ir_shape_clone(m->arena, s);
    dyn->dim_kind = arena_alloc(m->arena, 1);
    dyn->dim_kind[0] = IR_DIM_BOUNDED;
    IrInstr *x = ir_instr_new(m, IR_OP_PARAMETER, "x", dyn, 0, NULL);
    IrInstr *rev = ir_instr_new(m, IR_OP_REVERSE, "rev", dyn, 1, &x);
    rev->info->loc.line = 7;
    Error err = {0};
    Value *a = value_new_zeroed(s, &err), *out = NULL;
    Value *args[1] = {a};
    assert_false(eval_reverse(NULL, rev, args, &out, &err));
    assert_int_equal(err.code, ERR_UNSUPPORTED);
    assert_int_equal(err.loc.line, 7);
    assert_null(out);
    value_release(a);
    ir_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reshape_aliases_operand_bytes),
        cmocka_unit_test(test_reshape_scalar_to_ones),
        cmocka_unit_test(test_bitcast_default_layouts_alias),
        cmocka_unit_test(test_bitcast_column_major_result_is_transpose),
        cmocka_unit_test(test_bitcast_column_major_operand_linearises),
        cmocka_unit_test(test_bitcast_both_layouts_non_default),
        cmocka_unit_test(test_bitcast_reads_its_operands_declared_layout),
        cmocka_unit_test(test_bitcast_3d_layouts_against_formula),
        cmocka_unit_test(test_bitcast_changes_element_type),
        cmocka_unit_test(test_bitcast_sub_byte_packing_is_unsupported),
        cmocka_unit_test(test_transpose_2d_by_hand),
        cmocka_unit_test(test_transpose_2d_3d_all_permutations),
        cmocka_unit_test(test_transpose_4d_permutations),
        cmocka_unit_test(test_transpose_tile_edges_and_wide_elements),
        cmocka_unit_test(test_transpose_identity_and_size1_dims_alias),
        cmocka_unit_test(test_broadcast_scalar_fills),
        cmocka_unit_test(test_broadcast_into_middle_dim),
        cmocka_unit_test(test_broadcast_against_formula),
        cmocka_unit_test(test_broadcast_same_bytes_aliases),
        cmocka_unit_test(test_slice_with_strides),
        cmocka_unit_test(test_slice_contiguous_rows_and_columns),
        cmocka_unit_test(test_slice_3d_against_formula),
        cmocka_unit_test(test_slice_short_runs),
        cmocka_unit_test(test_dynamic_slice_s32_in_range_and_clamped),
        cmocka_unit_test(test_dynamic_slice_u32_and_s64_indices),
        cmocka_unit_test(test_dynamic_slice_legacy_index_vector),
        cmocka_unit_test(test_dynamic_slice_full_window_aliases),
        cmocka_unit_test(test_dynamic_update_slice_clamps_and_copies),
        cmocka_unit_test(test_dynamic_update_slice_u64_index_and_middle),
        cmocka_unit_test(test_dynamic_update_slice_legacy_index_vector),
        cmocka_unit_test(test_concatenate_dim0_three_operands),
        cmocka_unit_test(test_concatenate_minor_dim_three_operands),
        cmocka_unit_test(test_concatenate_middle_dim_with_empty_operand),
        cmocka_unit_test(test_pad_negative_lo_crops),
        cmocka_unit_test(test_pad_interior_2d_by_hand),
        cmocka_unit_test(test_pad_negative_with_interior),
        cmocka_unit_test(test_pad_3d_against_formula),
        cmocka_unit_test(test_pad_zero_padding_aliases),
        cmocka_unit_test(test_pad_empty_operand_gives_padding),
        cmocka_unit_test(test_pad_rank0_called_directly),
        cmocka_unit_test(test_reverse_by_hand),
        cmocka_unit_test(test_iota_s32_and_f32),
        cmocka_unit_test(test_iota_bf16_rounds_to_nearest_even),
        cmocka_unit_test(test_iota_s8_wraps_and_pred),
        cmocka_unit_test(test_empty_arrays),
        cmocka_unit_test(test_rank0_ops),
        cmocka_unit_test(test_degenerate_dims),
        cmocka_unit_test(test_dynamic_shape_is_unsupported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
