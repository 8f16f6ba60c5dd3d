/* test_npy.c: numpy .npy reading and writing (src/interp/npy.c).  Files live
 * in a fresh mkdtemp directory per test.  Hand-made files follow numpy's
 * format description (NEP 1) byte by byte; scripts/test_hlo_run.sh also
 * cross-checks written files with numpy itself when it is installed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "interp.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Fixture: a temporary directory and an arena for shapes               */

typedef struct Fixture {
    char dir[64];
    Arena *arena;
} Fixture;

static int setup(void **state)
{
    Fixture *fx = calloc(1, sizeof *fx);
    snprintf(fx->dir, sizeof fx->dir, "/tmp/test_npy.XXXXXX");
    if (!mkdtemp(fx->dir))
        return -1;
    fx->arena = arena_new(1 << 16);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    Fixture *fx = *state;
    DIR *d = opendir(fx->dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[512];
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", fx->dir, e->d_name);
        remove(path);
    }
    if (d)
        closedir(d);
    rmdir(fx->dir);
    arena_free(fx->arena);
    free(fx);
    return 0;
}

static const char *path_in(const Fixture *fx, const char *name)
{
    static char path[4][256];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", fx->dir, name);
    return p;
}

static IrShape *shape(Fixture *fx, IrElemType t, int rank, const int64_t *dims)
{
    return ir_shape_new_array(fx->arena, t, rank, dims);
}

static Value *new_value(const IrShape *s)
{
    Error err = { .code = ERR_OK };
    Value *v = value_new_zeroed(s, &err);
    assert_non_null(v);
    return v;
}

static void set_f64(Value *v, int64_t i, double x)
{
    IrElemType t = v->shape->type;
    ir_elem_set_f64(t, (char *)v->data + i * ir_type_storage_bytes(t), x);
}

static double get_f64(const Value *v, int64_t i)
{
    IrElemType t = v->shape->type;
    return ir_elem_get_f64(t, (const char *)v->data + i * ir_type_storage_bytes(t));
}

static void write_ok(const char *path, const Value *v)
{
    Error err = { .code = ERR_OK };
    if (!npy_write(path, v, &err))
        fail_msg("npy_write %s: %s", path, err.msg);
}

static Value *read_ok(const char *path, const IrShape *s, bool *rounded)
{
    Error err = { .code = ERR_OK };
    Value *v = npy_read(path, s, rounded, &err);
    if (!v)
        fail_msg("npy_read %s: %s", path, err.msg);
    return v;
}

/* Reading fails with code, naming the file, and the message contains want. */
static void read_fails(const char *path, const IrShape *s, ErrCode code, const char *want)
{
    Error err = { .code = ERR_OK };
    bool rounded = true;
    Value *v = npy_read(path, s, &rounded, &err);
    if (v)
        fail_msg("npy_read %s succeeded; expected an error containing '%s'", path, want);
    if (err.code != code || !strstr(err.msg, want))
        fail_msg("npy_read %s: code %d '%s'; expected code %d containing '%s'", path, (int)err.code,
                 err.msg, (int)code, want);
    assert_string_equal(err.loc.file, path);
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* A hand-made .npy file: version major.0, the dict text padded to 64, data. */
static void make_npy(const char *path, int major, const char *dict, const void *data, size_t n)
{
    unsigned char buf[1024];
    size_t prefix = major == 1 ? 10 : 12, len = strlen(dict);
    size_t hlen = (prefix + len + 1 + 63) / 64 * 64 - prefix;
    assert_true(prefix + hlen + n <= sizeof buf);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    for (size_t i = 0; i < prefix - 8; i++)
        buf[8 + i] = (unsigned char)(hlen >> (8 * i));
    memset(buf + prefix, ' ', hlen);
    memcpy(buf + prefix, dict, len);
    buf[prefix + hlen - 1] = '\n';
    if (n)
        memcpy(buf + prefix + hlen, data, n);
    write_bytes(path, buf, prefix + hlen + n);
}

static size_t read_bytes(const char *path, unsigned char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

/* ------------------------------------------------------------------ */
/* Round trips                                                          */

/* Deterministic element values valid for t (no NaNs, so narrow floats
 * survive the trip through f32 bit for bit). */
static void fill(Value *v)
{
    IrElemType t = v->shape->type;
    int64_t n = value_elements(v);
    for (int64_t i = 0; i < n; i++) {
        if (t == IR_TYPE_PRED)
            ((unsigned char *)v->data)[i] = (unsigned char)(i % 3 == 0);
        else if (ir_type_is_int(t))
            ir_elem_set_i64(t, (char *)v->data + i * ir_type_storage_bytes(t), (i * 7) % 5 - 2 + (int64_t)(i == 1) * 3);
        else if (ir_type_is_complex(t)) {
            set_f64(v, i, 0.25 * (double)i - 1.5);
            int half = ir_type_storage_bytes(t) / 2;
            ir_elem_set_f64(t == IR_TYPE_C64 ? IR_TYPE_F32 : IR_TYPE_F64,
                            (char *)v->data + i * ir_type_storage_bytes(t) + half, -0.5 * (double)i);
        } else
            set_f64(v, i, t == IR_TYPE_F8E8M0FNU ? ldexp(1.0, (int)(i % 9) - 4) : 0.25 * (double)i - 1.5);
    }
}

static void test_round_trip_every_type(void **state)
{
    Fixture *fx = *state;
    static const IrElemType types[] = {
        IR_TYPE_PRED, IR_TYPE_S8, IR_TYPE_S16, IR_TYPE_S32, IR_TYPE_S64, IR_TYPE_U8, IR_TYPE_U16,
        IR_TYPE_U32, IR_TYPE_U64, IR_TYPE_S4, IR_TYPE_U4, IR_TYPE_S2, IR_TYPE_F16, IR_TYPE_BF16,
        IR_TYPE_F32, IR_TYPE_F64, IR_TYPE_F8E5M2, IR_TYPE_F8E4M3, IR_TYPE_F8E4M3FN,
        IR_TYPE_F8E4M3B11FNUZ, IR_TYPE_F8E3M4, IR_TYPE_F8E5M2FNUZ, IR_TYPE_F8E4M3FNUZ,
        IR_TYPE_F8E8M0FNU, IR_TYPE_F4E2M1FN, IR_TYPE_C64, IR_TYPE_C128,
    };
    static const int64_t dims[2] = { 3, 5 };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        IrShape *s = shape(fx, types[k], 2, dims);
        Value *v = new_value(s);
        fill(v);
        const char *path = path_in(fx, "rt.npy");
        write_ok(path, v);
        bool rounded = true;
        Value *back = read_ok(path, s, &rounded);
        if (!value_bits_equal(v, back))
            fail_msg("type %s does not round-trip", ir_type_name(types[k]));
        assert_false(rounded);
        value_release(v);
        value_release(back);
    }
}

static void test_round_trip_scalar_and_empty(void **state)
{
    Fixture *fx = *state;
    IrShape *scalar = shape(fx, IR_TYPE_F64, 0, NULL);
    Value *v = new_value(scalar);
    set_f64(v, 0, -3.25);
    const char *path = path_in(fx, "scalar.npy");
    write_ok(path, v);
    Value *back = read_ok(path, scalar, NULL);
    assert_true(get_f64(back, 0) == -3.25);
    value_release(v);
    value_release(back);

    static const int64_t dims[2] = { 0, 3 };
    IrShape *empty = shape(fx, IR_TYPE_S32, 2, dims);
    v = new_value(empty);
    path = path_in(fx, "empty.npy");
    write_ok(path, v);
    back = read_ok(path, empty, NULL);
    assert_int_equal(value_elements(back), 0);
    value_release(v);
    value_release(back);
}

/* The header is numpy's: version 1.0, dict text, data aligned to 64. */
static void test_written_header_is_numpy_v1(void **state)
{
    Fixture *fx = *state;
    static const struct { int rank; int64_t dims[2]; IrElemType t; const char *text; } cases[] = {
        { 2, { 3, 5 }, IR_TYPE_F32, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 5), }" },
        { 1, { 4, 0 }, IR_TYPE_BF16, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }" },
        { 0, { 0, 0 }, IR_TYPE_PRED, "{'descr': '|b1', 'fortran_order': False, 'shape': (), }" },
        { 1, { 2, 0 }, IR_TYPE_U16, "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }" },
        { 1, { 2, 0 }, IR_TYPE_C128, "{'descr': '<c16', 'fortran_order': False, 'shape': (2,), }" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        Value *v = new_value(shape(fx, cases[k].t, cases[k].rank, cases[k].dims));
        const char *path = path_in(fx, "hdr.npy");
        write_ok(path, v);
        unsigned char buf[512];
        size_t n = read_bytes(path, buf, sizeof buf);
        size_t hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
        size_t elem = cases[k].t == IR_TYPE_BF16 ? 4 : (size_t)ir_type_storage_bytes(cases[k].t);
        assert_memory_equal(buf, "\x93NUMPY\x01\x00", 8);
        assert_int_equal((10 + hlen) % 64, 0);
        assert_int_equal(n, 10 + hlen + (size_t)value_elements(v) * elem);
        assert_int_equal(buf[10 + hlen - 1], '\n');
        assert_memory_equal(buf + 10, cases[k].text, strlen(cases[k].text));
        for (size_t i = 10 + strlen(cases[k].text); i < 10 + hlen - 1; i++)
            assert_int_equal(buf[i], ' ');
        value_release(v);
    }
}

/* ------------------------------------------------------------------ */
/* bf16 and f8: f32 files and raw bits                                  */

static void test_bf16_is_written_as_exact_f32(void **state)
{
    Fixture *fx = *state;
    static const int64_t dims[1] = { 4 };
    Value *v = new_value(shape(fx, IR_TYPE_BF16, 1, dims));
    static const double x[4] = { 1.0078125, -3.0, 0x1p-133, INFINITY };
    for (int i = 0; i < 4; i++)
        set_f64(v, i, x[i]);
    const char *path = path_in(fx, "bf16.npy");
    write_ok(path, v);
    Value *f = read_ok(path, shape(fx, IR_TYPE_F32, 1, dims), NULL);
    for (int i = 0; i < 4; i++)
        assert_true(get_f64(f, i) == x[i]);
    value_release(v);
    value_release(f);
}

static void test_f32_into_bf16_rounds_to_nearest_even_and_says_so(void **state)
{
    Fixture *fx = *state;
    static const int64_t dims[1] = { 4 };
    IrShape *f32 = shape(fx, IR_TYPE_F32, 1, dims), *bf16 = shape(fx, IR_TYPE_BF16, 1, dims);
    Value *v = new_value(f32);
    /* 1 + 2^-8 is a tie: down to 1; 1 + 3*2^-8 a tie: up to 1 + 2^-6 (even). */
    static const double in[4] = { 1.0, 1.0 + 0x1p-8, 1.0 + 3 * 0x1p-8, 0.5 };
    static const uint16_t want[4] = { 0x3f80, 0x3f80, 0x3f82, 0x3f00 };
    for (int i = 0; i < 4; i++)
        set_f64(v, i, in[i]);
    const char *path = path_in(fx, "f32.npy");
    write_ok(path, v);
    bool rounded = false;
    Value *b = read_ok(path, bf16, &rounded);
    assert_true(rounded);
    assert_memory_equal(b->data, want, sizeof want);
    value_release(b);

    set_f64(v, 1, 2.0);     /* now every value is a bf16 */
    set_f64(v, 2, NAN);
    write_ok(path, v);
    b = read_ok(path, bf16, &rounded);
    assert_false(rounded);
    assert_true(isnan(get_f64(b, 2)));
    value_release(b);
    value_release(v);
}

static void test_raw_bits_for_bf16_and_f8(void **state)
{
    Fixture *fx = *state;
    static const int64_t dims[1] = { 3 };
    const char *path = path_in(fx, "raw.npy");
    static const uint16_t bits16[3] = { 0x3f80, 0xc000, 0x7f80 };   /* 1, -2, inf */
    make_npy(path, 1, "{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }", bits16, sizeof bits16);
    bool rounded = true;
    Value *v = read_ok(path, shape(fx, IR_TYPE_BF16, 1, dims), &rounded);
    assert_false(rounded);
    assert_true(get_f64(v, 0) == 1.0 && get_f64(v, 1) == -2.0 && isinf(get_f64(v, 2)));
    value_release(v);

    static const uint8_t bits8[3] = { 0x38, 0xb0, 0x7f };   /* f8e4m3fn: 1, -0.5, NaN */
    make_npy(path, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", bits8, sizeof bits8);
    v = read_ok(path, shape(fx, IR_TYPE_F8E4M3FN, 1, dims), NULL);
    assert_true(get_f64(v, 0) == 1.0 && get_f64(v, 1) == -0.5 && isnan(get_f64(v, 2)));
    value_release(v);

    /* ml_dtypes' bfloat16 saves as raw two-byte voids. */
    make_npy(path, 1, "{'descr': '|V2', 'fortran_order': False, 'shape': (3,), }", bits16, sizeof bits16);
    v = read_ok(path, shape(fx, IR_TYPE_BF16, 1, dims), NULL);
    assert_memory_equal(v->data, bits16, sizeof bits16);
    value_release(v);
}

/* ------------------------------------------------------------------ */
/* Input errors                                                         */

static void test_shape_mismatch_names_the_file(void **state)
{
    Fixture *fx = *state;
    static const int64_t four[1] = { 4 }, two_two[2] = { 2, 2 };
    Value *v = new_value(shape(fx, IR_TYPE_F32, 1, four));
    const char *path = path_in(fx, "param0.rank0.npy");
    write_ok(path, v);
    read_fails(path, shape(fx, IR_TYPE_F32, 2, two_two), ERR_MISMATCH,
               "shape (4,) does not fit parameter of type f32[2,2]");
    read_fails(path, shape(fx, IR_TYPE_F32, 0, NULL), ERR_MISMATCH,
               "shape (4,) does not fit parameter of type f32[]");
    value_release(v);
}

static void test_dtype_mismatch_names_the_file(void **state)
{
    Fixture *fx = *state;
    static const int64_t four[1] = { 4 };
    Value *v = new_value(shape(fx, IR_TYPE_F64, 1, four));
    const char *path = path_in(fx, "f64.npy");
    write_ok(path, v);
    read_fails(path, shape(fx, IR_TYPE_F32, 1, four), ERR_MISMATCH,
               "dtype <f8 does not fit parameter of type f32[4] (expected <f4)");
    read_fails(path, shape(fx, IR_TYPE_BF16, 1, four), ERR_MISMATCH, "expected <f4, or <u2 raw bits");
    read_fails(path, shape(fx, IR_TYPE_S64, 1, four), ERR_MISMATCH, "dtype <f8 does not fit");
    value_release(v);

    static const uint32_t be[1] = { 0 };
    make_npy(path, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", be, sizeof be);
    static const int64_t one[1] = { 1 };
    read_fails(path, shape(fx, IR_TYPE_F32, 1, one), ERR_MISMATCH, "big-endian");
}

static void test_fortran_order_is_an_input_error(void **state)
{
    Fixture *fx = *state;
    static const int64_t dims[2] = { 2, 2 };
    static const float data[4] = { 1, 2, 3, 4 };
    const char *path = path_in(fx, "fortran.npy");
    make_npy(path, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", data, sizeof data);
    read_fails(path, shape(fx, IR_TYPE_F32, 2, dims), ERR_MISMATCH, "fortran_order");
}

static void test_truncated_file_is_an_io_error(void **state)
{
    Fixture *fx = *state;
    static const int64_t dims[1] = { 100 };
    IrShape *s = shape(fx, IR_TYPE_F32, 1, dims);
    Value *v = new_value(s);
    const char *path = path_in(fx, "trunc.npy");
    write_ok(path, v);
    unsigned char buf[1024];
    size_t header = read_bytes(path, buf, sizeof buf) - 400;
    assert_int_equal(header % 64, 0);
    assert_int_equal(truncate(path, (off_t)header + 10), 0);
    read_fails(path, s, ERR_IO, "truncated .npy file: 400 data bytes expected, 10 found");
    IrShape *bf = shape(fx, IR_TYPE_BF16, 1, dims);    /* the rounding path too */
    read_fails(path, bf, ERR_IO, "truncated");
    assert_int_equal(truncate(path, 30), 0);
    read_fails(path, s, ERR_IO, "truncated .npy header");
    value_release(v);
}

static void test_missing_file_is_an_io_error(void **state)
{
    Fixture *fx = *state;
    read_fails(path_in(fx, "nope.npy"), shape(fx, IR_TYPE_F32, 0, NULL), ERR_IO, "cannot open");
}

static void test_pred_and_small_ints(void **state)
{
    Fixture *fx = *state;
    static const int64_t dims[1] = { 3 };
    static const uint8_t bytes[3] = { 0, 2, 1 };
    const char *path = path_in(fx, "pred.npy");
    make_npy(path, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", bytes, 3);
    Value *v = read_ok(path, shape(fx, IR_TYPE_PRED, 1, dims), NULL);
    assert_memory_equal(v->data, "\0\1\1", 3);
    value_release(v);
    static const int8_t s4[3] = { -8, 7, 9 };
    make_npy(path, 1, "{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }", s4, 3);
    read_fails(path, shape(fx, IR_TYPE_S4, 1, dims), ERR_MISMATCH, "element 2 is 9, outside the range of s4");
}

/* Versions 2.0 and 3.0 (4-byte header length), other spellings numpy accepts. */
static void test_reads_v2_v3_and_header_variants(void **state)
{
    Fixture *fx = *state;
    static const int64_t dims[2] = { 1, 2 };
    static const int32_t data[2] = { 5, -6 };
    static const char *const dicts[] = {
        "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 2), }",
        "{\"shape\": (1, 2,), \"descr\": \"<i4\", \"fortran_order\": False}",
        "{ 'fortran_order' : False , 'shape' : ( 1 , 2 ) , 'descr' : '<i4' }",
        "{'descr': '<i4', 'fortran_order': False, 'shape': (1L, 2L)}",
    };
    IrShape *s = shape(fx, IR_TYPE_S32, 2, dims);
    const char *path = path_in(fx, "v.npy");
    for (int major = 1; major <= 3; major++)
        for (size_t k = 0; k < sizeof dicts / sizeof dicts[0]; k++) {
            make_npy(path, major, dicts[k], data, sizeof data);
            Value *v = read_ok(path, s, NULL);
            assert_memory_equal(v->data, data, sizeof data);
            value_release(v);
        }
}

static void test_malformed_headers_are_syntax_errors(void **state)
{
    Fixture *fx = *state;
    static const char *const dicts[] = {
        "",
        "[1, 2]",
        "{'descr': '<f4', 'fortran_order': False}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
        "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,) x}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
        "{'descr': '<', 'fortran_order': False, 'shape': (1,)}",
        "{'descr': 'f', 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<f4x', 'fortran_order': False, 'shape': (1,)}",
        "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} trailing",
        "{'descr': '<f\\x34', 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,",
    };
    static const int64_t dims[1] = { 1 };
    IrShape *s = shape(fx, IR_TYPE_F32, 1, dims);
    static const float one[1] = { 1 };
    const char *path = path_in(fx, "bad.npy");
    for (size_t k = 0; k < sizeof dicts / sizeof dicts[0]; k++) {
        make_npy(path, 1, dicts[k], one, sizeof one);
        read_fails(path, s, ERR_SYNTAX, "malformed .npy header");
    }
    write_bytes(path, "PK\3\4 not npy at all", 20);
    read_fails(path, s, ERR_SYNTAX, "not a .npy file");
    write_bytes(path, "\x93NUMPY\x09\x00\x10\x00{}", 12);
    read_fails(path, s, ERR_SYNTAX, "unsupported .npy format version 9.0");
    write_bytes(path, "\x93NUMPY\x02\x00\xff\xff\xff\x7f{}", 14);
    read_fails(path, s, ERR_SYNTAX, "too long");
    write_bytes(path, "\x93NUMPY\x01\x00\xff\xff{}", 12);
    read_fails(path, s, ERR_IO, "truncated .npy header");
    static const char with_nul[] = "\x93NUMPY\x01\x00\x06\x00{}\0  \n";
    write_bytes(path, with_nul, sizeof with_nul - 1);
    read_fails(path, s, ERR_SYNTAX, "NUL byte");
    make_npy(path, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "\0\0\200?\0", 5);
    read_fails(path, s, ERR_SYNTAX, "more data than the header's shape holds");
}

/* Every truncation and many single-byte corruptions of a valid file either
 * read or fail cleanly (run under ASan to catch overreads). */
static void test_corrupted_files_never_crash(void **state)
{
    Fixture *fx = *state;
    static const int64_t dims[2] = { 2, 3 };
    IrShape *s = shape(fx, IR_TYPE_F32, 2, dims);
    Value *v = new_value(s);
    fill(v);
    const char *path = path_in(fx, "good.npy"), *bad = path_in(fx, "corrupt.npy");
    write_ok(path, v);
    unsigned char good[256], buf[256];
    size_t n = read_bytes(path, good, sizeof good);
    for (size_t len = 0; len < n; len++) {
        write_bytes(bad, good, len);
        Error err = { .code = ERR_OK };
        assert_null(npy_read(bad, s, NULL, &err));
        assert_true(err.code == ERR_IO || err.code == ERR_SYNTAX);
    }
    static const unsigned char junk[] = { 0, '\'', '"', '(', ')', ',', '{', '}', '9', 'L', 0xff, ' ' };
    for (size_t i = 0; i < 64; i++)
        for (size_t j = 0; j < sizeof junk; j++) {
            memcpy(buf, good, n);
            buf[i] = junk[j];
            write_bytes(bad, buf, n);
            Error err = { .code = ERR_OK };
            Value *r = npy_read(bad, s, NULL, &err);
            assert_true(r != NULL || err.code != ERR_OK);
            value_release(r);
        }
    value_release(v);
}

static void test_write_errors(void **state)
{
    Fixture *fx = *state;
    static const int64_t dims[1] = { 2 };
    Value *v = new_value(shape(fx, IR_TYPE_F32, 1, dims));
    Error err = { .code = ERR_OK };
    const char *path = path_in(fx, "no/such/dir.npy");
    assert_false(npy_write(path, v, &err));
    assert_int_equal(err.code, ERR_IO);
    assert_string_equal(err.loc.file, path);
    value_release(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip_every_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_scalar_and_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_written_header_is_numpy_v1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bf16_is_written_as_exact_f32, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f32_into_bf16_rounds_to_nearest_even_and_says_so, setup, teardown),
        cmocka_unit_test_setup_teardown(test_raw_bits_for_bf16_and_f8, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shape_mismatch_names_the_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dtype_mismatch_names_the_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fortran_order_is_an_input_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_file_is_an_io_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file_is_an_io_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pred_and_small_ints, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reads_v2_v3_and_header_variants, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_headers_are_syntax_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupted_files_never_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
