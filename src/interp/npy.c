/* npy.c: numpy .npy files, the input and output format of hlo-run.
 *
 * Format (numpy's NEP 1): the magic "\x93NUMPY", a major and minor version
 * byte, the header length (2 bytes little-endian in version 1, 4 bytes in
 * versions 2 and 3), then the header: a Python dict literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * padded with spaces and a final '\n' so the data starts at a multiple of 64;
 * then the elements, row-major.  We write version 1.0 (2.0 when the header
 * does not fit 65535 bytes) and read 1.0, 2.0 and 3.0.
 *
 * dtypes: pred |b1, s8..s64 |i1 <i2 <i4 <i8, u8..u64 |u1 <u2 <u4 <u8, f16 <f2,
 * f32 <f4, f64 <f8, c64 <c8, c128 <c16; the sub-byte integers as |i1 / |u1.
 * numpy has no bf16 or f8 types: they are written as <f4 (which holds them
 * exactly) and read from <f4 (rounded to nearest even) or from their raw
 * bits, <u2 / |V2 for bf16, |u1 / |V1 for the 8-bit and 4-bit floats.
 *
 * Errors name the file: ERR_IO when it cannot be opened, read or written
 * or is truncated; ERR_SYNTAX when it is not an .npy file or its header is
 * malformed; ERR_MISMATCH when its dtype, shape, byte order or order does not
 * fit the parameter.  Every length read from the file is checked before use. */
#include "interp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPY_PREFIX_V1 10            /* magic, version, 2-byte header length */
#define NPY_PREFIX_V2 12            /* magic, version, 4-byte header length */
#define NPY_ALIGN 64                /* the data starts at a multiple of this */
#define NPY_MAX_HEADER (1u << 20)   /* longer headers are rejected, not read */
#define NPY_CHUNK 4096              /* elements converted per step */

static const char npy_magic[6] = { '\x93', 'N', 'U', 'M', 'P', 'Y' };

/* The dtype each element type is written as. */
static const char *const write_descr[IR_TYPE_COUNT] = {
    [IR_TYPE_PRED] = "|b1",
    [IR_TYPE_S1] = "|i1", [IR_TYPE_S2] = "|i1", [IR_TYPE_S4] = "|i1", [IR_TYPE_S8] = "|i1",
    [IR_TYPE_S16] = "<i2", [IR_TYPE_S32] = "<i4", [IR_TYPE_S64] = "<i8",
    [IR_TYPE_U1] = "|u1", [IR_TYPE_U2] = "|u1", [IR_TYPE_U4] = "|u1", [IR_TYPE_U8] = "|u1",
    [IR_TYPE_U16] = "<u2", [IR_TYPE_U32] = "<u4", [IR_TYPE_U64] = "<u8",
    [IR_TYPE_F16] = "<f2", [IR_TYPE_BF16] = "<f4", [IR_TYPE_F32] = "<f4", [IR_TYPE_F64] = "<f8",
    [IR_TYPE_F8E5M2] = "<f4", [IR_TYPE_F8E4M3] = "<f4", [IR_TYPE_F8E4M3FN] = "<f4",
    [IR_TYPE_F8E4M3B11FNUZ] = "<f4", [IR_TYPE_F8E3M4] = "<f4", [IR_TYPE_F8E5M2FNUZ] = "<f4",
    [IR_TYPE_F8E4M3FNUZ] = "<f4", [IR_TYPE_F8E8M0FNU] = "<f4", [IR_TYPE_F4E2M1FN] = "<f4",
    [IR_TYPE_C64] = "<c8", [IR_TYPE_C128] = "<c16",
};

/* bf16 and the 8- and 4-bit floats: the types numpy lacks. */
static bool is_narrow_float(IrElemType t)
{
    return ir_type_is_float(t) && t != IR_TYPE_F16 && ir_type_storage_bytes(t) < 4;
}

static bool host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* Reverses the bytes of each of n items of size bytes (big-endian hosts). */
static void swap_items(void *data, size_t n, int size)
{
    unsigned char *p = data;
    for (size_t i = 0; i < n; i++, p += size)
        for (int a = 0, b = size - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* The unit a byte swap works on: complex numbers swap each part. */
static int swap_unit(IrElemType t)
{
    return ir_type_is_complex(t) ? ir_type_storage_bytes(t) / 2 : ir_type_storage_bytes(t);
}

static void to_little_endian(void *data, size_t bytes, int unit)
{
    if (unit > 1 && !host_is_little_endian())
        swap_items(data, bytes / (size_t)unit, unit);
}

/* The shape without its layout, for messages. */
static const char *shape_text(const IrShape *s, char *buf, size_t n)
{
    StrBuf b;
    strbuf_init(&b);
    ir_shape_print(&b, s, false);
    snprintf(buf, n, "%s", b.s ? b.s : "");
    strbuf_free(&b);
    return buf;
}

/* ------------------------------------------------------------------ */
/* Header parsing: a small reader for the dict literal numpy writes     */

typedef struct NpyHeader {
    char descr[32];             /* as written: "<f4" */
    char byteorder;             /* '<', '>', '|' or '=' */
    char kind;                  /* 'b', 'i', 'u', 'f', 'c', 'V', ... */
    int itemsize;               /* bytes */
    bool fortran_order;
    int rank;                   /* -1: more dims than IR_MAX_RANK */
    int64_t dims[IR_MAX_RANK];
} NpyHeader;

typedef struct Cursor {
    const char *p;
    const char *why;            /* the first problem found */
} Cursor;

static bool fail(Cursor *c, const char *why)
{
    if (!c->why)
        c->why = why;
    return false;
}

static void skip_space(Cursor *c)
{
    while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')
        c->p++;
}

static bool eat(Cursor *c, char ch)
{
    skip_space(c);
    if (*c->p != ch)
        return false;
    c->p++;
    return true;
}

/* A '...' or "..." string without escapes into out (cap bytes). */
static bool parse_quoted(Cursor *c, char *out, size_t cap)
{
    skip_space(c);
    char q = *c->p;
    if (q != '\'' && q != '"')
        return fail(c, "expected a quoted string");
    const char *start = ++c->p;
    while (*c->p && *c->p != q && *c->p != '\\')
        c->p++;
    if (*c->p != q)
        return fail(c, "unterminated or escaped string");
    size_t n = (size_t)(c->p - start);
    c->p++;
    if (n >= cap)
        return fail(c, "string too long");
    memcpy(out, start, n);
    out[n] = '\0';
    return true;
}

static bool parse_bool(Cursor *c, bool *out)
{
    skip_space(c);
    if (strncmp(c->p, "True", 4) == 0) {
        c->p += 4;
        *out = true;
        return true;
    }
    if (strncmp(c->p, "False", 5) == 0) {
        c->p += 5;
        *out = false;
        return true;
    }
    return fail(c, "expected True or False");
}

static bool parse_dim(Cursor *c, int64_t *out)
{
    skip_space(c);
    if (*c->p < '0' || *c->p > '9')
        return fail(c, "expected a dimension size");
    int64_t v = 0;
    for (; *c->p >= '0' && *c->p <= '9'; c->p++) {
        if (v > (INT64_MAX - 9) / 10)
            return fail(c, "dimension size too large");
        v = v * 10 + (*c->p - '0');
    }
    if (*c->p == 'L')       /* Python 2's long suffix */
        c->p++;
    *out = v;
    return true;
}

/* (), (N,), (N, M, ...) with an optional trailing comma. */
static bool parse_shape(Cursor *c, NpyHeader *h)
{
    if (!eat(c, '('))
        return fail(c, "shape: expected '('");
    h->rank = 0;
    if (eat(c, ')'))
        return true;
    for (;;) {
        int64_t d;
        if (!parse_dim(c, &d))
            return false;
        if (h->rank >= 0 && h->rank < IR_MAX_RANK)
            h->dims[h->rank++] = d;
        else
            h->rank = -1;
        if (eat(c, ')'))
            return true;
        if (!eat(c, ','))
            return fail(c, "shape: expected ',' or ')'");
        if (eat(c, ')'))
            return true;
    }
}

/* "<f4" -> byte order, kind, item size. */
static bool split_descr(Cursor *c, NpyHeader *h)
{
    const char *d = h->descr;
    h->byteorder = '|';
    if (*d == '<' || *d == '>' || *d == '|' || *d == '=')
        h->byteorder = *d++;
    bool letter = (*d >= 'a' && *d <= 'z') || (*d >= 'A' && *d <= 'Z');
    if (!letter)
        return fail(c, "descr: expected a type letter");
    h->kind = *d++;
    int size = 0;
    for (; *d >= '0' && *d <= '9' && size < 1000000; d++)
        size = size * 10 + (*d - '0');
    if (*d || size <= 0)
        return fail(c, "descr: expected a type letter and a size, as in '<f4'");
    h->itemsize = size;
    return true;
}

static bool parse_entry(Cursor *c, NpyHeader *h, unsigned *seen)
{
    char key[32];
    if (!parse_quoted(c, key, sizeof key) || !eat(c, ':'))
        return fail(c, "expected 'key': value");
    if (strcmp(key, "descr") == 0 && !(*seen & 1)) {
        *seen |= 1;
        skip_space(c);
        if (*c->p == '[')
            return fail(c, "structured dtypes are not supported");
        return parse_quoted(c, h->descr, sizeof h->descr) && split_descr(c, h);
    }
    if (strcmp(key, "fortran_order") == 0 && !(*seen & 2)) {
        *seen |= 2;
        return parse_bool(c, &h->fortran_order);
    }
    if (strcmp(key, "shape") == 0 && !(*seen & 4)) {
        *seen |= 4;
        return parse_shape(c, h);
    }
    return fail(c, "unknown or repeated key");
}

/* The whole header text; NULL when fine, else what is wrong. */
static const char *parse_header(const char *text, NpyHeader *h)
{
    Cursor c = { .p = text };
    unsigned seen = 0;
    memset(h, 0, sizeof *h);
    if (!eat(&c, '{'))
        return "expected '{'";
    while (!eat(&c, '}')) {
        if (!parse_entry(&c, h, &seen))
            return c.why;
        if (eat(&c, ','))
            continue;
        skip_space(&c);
        if (*c.p != '}')
            return "expected ',' or '}'";
    }
    skip_space(&c);
    if (*c.p)
        return "text after the closing '}'";
    if (seen != 7)
        return "missing one of 'descr', 'fortran_order', 'shape'";
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Reading                                                              */

typedef enum ReadMode {
    READ_RAW,           /* the file's bytes are our elements */
    READ_PRED,          /* |b1: nonzero bytes become 1 */
    READ_SMALL_INT,     /* |i1 / |u1 into s1..s4 / u1..u4: range checked */
    READ_F32_ROUND      /* <f4 into bf16 / f8: rounded to nearest even */
} ReadMode;

typedef struct NpyFile {
    const char *path;
    FILE *f;
    NpyHeader h;
} NpyFile;

static bool io_error(const char *path, Error *err, const char *what)
{
    return error_set(err, ERR_IO, (IrLoc){ path, 0, 0 }, "%s: %s", what, strerror(errno));
}

static uint32_t le_u32(const unsigned char *b, int n)
{
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

/* Reads the prefix and the header; f is left at the first data byte. */
static bool read_header(NpyFile *nf, Error *err)
{
    IrLoc loc = { nf->path, 0, 0 };
    unsigned char pre[NPY_PREFIX_V2];
    if (fread(pre, 1, NPY_PREFIX_V1, nf->f) != NPY_PREFIX_V1 || memcmp(pre, npy_magic, 6) != 0)
        return error_set(err, ferror(nf->f) ? ERR_IO : ERR_SYNTAX, loc,
                         "not a .npy file (no \\x93NUMPY magic at the start)");
    int major = pre[6], minor = pre[7];
    if (major < 1 || major > 3)
        return error_set(err, ERR_SYNTAX, loc, "unsupported .npy format version %d.%d (1.0, 2.0 and 3.0 are read)",
                         major, minor);
    int len_bytes = major == 1 ? 2 : 4;
    if (len_bytes == 4 && fread(pre + NPY_PREFIX_V1, 1, 2, nf->f) != 2)
        return error_set(err, ERR_IO, loc, "truncated .npy header");
    uint32_t hlen = le_u32(pre + 8, len_bytes);
    if (hlen > NPY_MAX_HEADER)
        return error_set(err, ERR_SYNTAX, loc, ".npy header of %u bytes is too long (at most %u)", hlen,
                         NPY_MAX_HEADER);
    char *text = xmalloc(hlen + 1);
    bool ok = fread(text, 1, hlen, nf->f) == hlen;
    text[hlen] = '\0';
    const char *why = !ok ? NULL : strlen(text) != hlen ? "NUL byte in the header" : parse_header(text, &nf->h);
    free(text);
    if (!ok)
        return error_set(err, ERR_IO, loc, "truncated .npy header (%u bytes announced)", hlen);
    if (why)
        return error_set(err, ERR_SYNTAX, loc, "malformed .npy header: %s", why);
    return true;
}

/* What dtypes fit t, for messages. */
static const char *expected_descr(IrElemType t, char *buf, size_t n)
{
    if (t == IR_TYPE_BF16)
        snprintf(buf, n, "<f4, or <u2 raw bits");
    else if (is_narrow_float(t))
        snprintf(buf, n, "<f4, or |u1 raw bits");
    else
        snprintf(buf, n, "%s", write_descr[t] ? write_descr[t] : "nothing: no .npy form");
    return buf;
}

/* How the file's dtype maps onto type t; false when it does not fit. */
static bool choose_mode(const NpyHeader *h, IrElemType t, ReadMode *mode)
{
    const char *want = write_descr[t];
    int storage = ir_type_storage_bytes(t);
    if (!want)
        return false;
    if (is_narrow_float(t)) {
        bool raw = (h->kind == 'u' || h->kind == 'V') && h->itemsize == storage;
        *mode = raw ? READ_RAW : READ_F32_ROUND;
        return raw || (h->kind == 'f' && h->itemsize == 4);
    }
    if (h->kind != want[1] || h->itemsize != atoi(want + 2))
        return false;
    bool small_int = ir_type_is_int(t) && ir_type_info[t].bits < 8;
    *mode = t == IR_TYPE_PRED ? READ_PRED : small_int ? READ_SMALL_INT : READ_RAW;
    return true;
}

static bool check_byte_order(const NpyFile *nf, Error *err)
{
    char o = nf->h.byteorder;
    bool little = o == '<' || (o == '=' && host_is_little_endian());
    if (nf->h.itemsize == 1 || o == '|' || little)
        return true;
    return error_set(err, ERR_MISMATCH, (IrLoc){ nf->path, 0, 0 },
                     "dtype %s is big-endian: only little-endian files are read (save arr.astype('<%c%d'))",
                     nf->h.descr, nf->h.kind, nf->h.itemsize);
}

static void shape_tuple_text(const NpyHeader *h, char *buf, size_t n)
{
    size_t used = (size_t)snprintf(buf, n, "(");
    for (int d = 0; d < h->rank && used < n; d++)
        used += (size_t)snprintf(buf + used, n - used, "%s%lld", d ? ", " : "", (long long)h->dims[d]);
    if (used < n)
        snprintf(buf + used, n - used, h->rank == 1 ? ",)" : ")");
}

static bool check_fits(const NpyFile *nf, const IrShape *s, ReadMode *mode, Error *err)
{
    IrLoc loc = { nf->path, 0, 0 };
    const NpyHeader *h = &nf->h;
    char st[256], want[64];
    if (!choose_mode(h, s->type, mode))
        return error_set(err, ERR_MISMATCH, loc, "dtype %s does not fit parameter of type %s (expected %s)",
                         h->descr, shape_text(s, st, sizeof st), expected_descr(s->type, want, sizeof want));
    if (!check_byte_order(nf, err))
        return false;
    if (h->fortran_order)
        return error_set(err, ERR_MISMATCH, loc,
                         "fortran_order is True: only C order is read (save np.ascontiguousarray(arr))");
    bool same = h->rank == s->rank;
    for (int d = 0; same && d < s->rank; d++)
        same = h->dims[d] == s->dims[d];
    if (!same) {
        char got[IR_MAX_RANK * 22 + 8];
        if (h->rank < 0)
            snprintf(got, sizeof got, "with more than %d dimensions", IR_MAX_RANK);
        else
            shape_tuple_text(h, got, sizeof got);
        return error_set(err, ERR_MISMATCH, loc, "shape %s does not fit parameter of type %s", got,
                         shape_text(s, st, sizeof st));
    }
    return true;
}

/* Reads exactly n more bytes of the total data bytes; *done counts them. */
static bool read_data(NpyFile *nf, void *buf, size_t n, size_t total, size_t *done, Error *err)
{
    size_t got = fread(buf, 1, n, nf->f);
    *done += got;
    if (got == n)
        return true;
    if (ferror(nf->f))
        return io_error(nf->path, err, "read failed");
    return error_set(err, ERR_IO, (IrLoc){ nf->path, 0, 0 },
                     "truncated .npy file: %zu data bytes expected, %zu found", total, *done);
}

/* f32 values rounded into a narrow float, a chunk at a time. */
static bool read_rounded(NpyFile *nf, Value *v, size_t total, bool *rounded, Error *err)
{
    IrElemType t = v->shape->type;
    int storage = ir_type_storage_bytes(t);
    size_t n = (size_t)value_elements(v), done = 0;
    float *chunk = xmalloc(NPY_CHUNK * sizeof *chunk);
    bool ok = true;
    for (size_t i = 0; ok && i < n; i += NPY_CHUNK) {
        size_t k = n - i < NPY_CHUNK ? n - i : NPY_CHUNK;
        ok = read_data(nf, chunk, k * 4, total, &done, err);
        if (!ok)
            break;
        to_little_endian(chunk, k * 4, 4);
        for (size_t j = 0; j < k; j++) {
            void *dst = (char *)v->data + (i + j) * (size_t)storage;
            ir_elem_set_f64(t, dst, chunk[j]);
            double back = ir_elem_get_f64(t, dst);
            bool both_nan = back != back && chunk[j] != chunk[j];
            if (back != (double)chunk[j] && !both_nan && rounded)
                *rounded = true;
        }
    }
    free(chunk);
    return ok;
}

/* |i1 / |u1 into a sub-byte integer type: every value must fit. */
static bool check_small_ints(const NpyFile *nf, const Value *v, Error *err)
{
    IrElemType t = v->shape->type;
    int bits = ir_type_info[t].bits;
    bool is_signed = ir_type_is_signed_int(t);
    int lo = is_signed ? -(1 << (bits - 1)) : 0, hi = is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
    int64_t n = value_elements(v);
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *p = (const unsigned char *)v->data + i;
        int x = is_signed ? (int)(signed char)*p : (int)*p;
        if (x < lo || x > hi)
            return error_set(err, ERR_MISMATCH, (IrLoc){ nf->path, 0, 0 },
                             "element %lld is %d, outside the range of %s", (long long)i, x, ir_type_name(t));
    }
    return true;
}

static bool read_elements(NpyFile *nf, Value *v, ReadMode mode, bool *rounded, Error *err)
{
    size_t n = (size_t)value_elements(v), done = 0;
    size_t total = n * (size_t)nf->h.itemsize;
    if (mode == READ_F32_ROUND) {
        if (!read_rounded(nf, v, total, rounded, err))
            return false;
    } else {
        if (!read_data(nf, v->data, total, total, &done, err))
            return false;
        to_little_endian(v->data, total, swap_unit(v->shape->type));
    }
    if (mode == READ_PRED)
        for (size_t i = 0; i < n; i++)
            ((unsigned char *)v->data)[i] = ((unsigned char *)v->data)[i] != 0;
    if (mode == READ_SMALL_INT && !check_small_ints(nf, v, err))
        return false;
    if (fgetc(nf->f) != EOF)
        return error_set(err, ERR_SYNTAX, (IrLoc){ nf->path, 0, 0 },
                         "more data than the header's shape holds (%zu bytes expected)", total);
    return true;
}

/* path opened for reading when it is a regular file.  Opened without
 * blocking first: a FIFO named as an input would otherwise wait forever
 * for a writer, and a directory or device has no size to agree on. */
static FILE *open_regular(const char *path, Error *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        io_error(path, err, "cannot open");
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        io_error(path, err, "cannot open");
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        error_set(err, ERR_IO, (IrLoc){ path, 0, 0 }, "not a regular file (a %s): inputs are .npy files",
                  S_ISDIR(st.st_mode) ? "directory" : S_ISFIFO(st.st_mode) ? "pipe" : "device or socket");
        return NULL;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        io_error(path, err, "cannot open");
    }
    return f;
}

Value *npy_read(const char *path, const IrShape *s, bool *rounded, Error *err)
{
    IrLoc loc = { path, 0, 0 };
    if (rounded)
        *rounded = false;
    if (!ir_shape_is_array(s)) {
        error_set(err, ERR_UNSUPPORTED, loc, "a .npy file holds one array; the parameter is %s", ir_shape_str(s));
        return NULL;
    }
    NpyFile nf = { .path = path, .f = open_regular(path, err) };
    if (!nf.f)
        return NULL;
    Value *v = NULL;
    ReadMode mode;
    if (read_header(&nf, err) && check_fits(&nf, s, &mode, err)) {
        v = value_new_array(s, err);
        if (v && !read_elements(&nf, v, mode, rounded, err)) {
            value_release(v);
            v = NULL;
        }
    }
    fclose(nf.f);
    return v;
}

/* ------------------------------------------------------------------ */
/* Writing                                                              */

/* The full header (prefix, dict, padding, '\n') into b; its length is a
 * multiple of NPY_ALIGN. */
static void build_header(StrBuf *b, const char *descr, const IrShape *s)
{
    StrBuf dict;
    strbuf_init(&dict);
    strbuf_printf(&dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int d = 0; d < s->rank; d++)
        strbuf_printf(&dict, "%s%lld", d ? ", " : "", (long long)s->dims[d]);
    strbuf_puts(&dict, s->rank == 1 ? ",), }" : "), }");
    size_t prefix = NPY_PREFIX_V1;
    size_t hlen = (dict.len + 1 + prefix + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN - prefix;
    if (hlen > 65535) {
        prefix = NPY_PREFIX_V2;
        hlen = (dict.len + 1 + prefix + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN - prefix;
    }
    strbuf_putn(b, npy_magic, 6);
    strbuf_putc(b, (char)(prefix == NPY_PREFIX_V1 ? 1 : 2));
    strbuf_putc(b, 0);
    for (size_t i = 0; i < prefix - 8; i++)
        strbuf_putc(b, (char)(unsigned char)(hlen >> (8 * i)));
    strbuf_putn(b, dict.s, dict.len);
    for (size_t i = dict.len + 1; i < hlen; i++)
        strbuf_putc(b, ' ');
    strbuf_putc(b, '\n');
    strbuf_free(&dict);
}

/* Narrow floats widened to f32, a chunk at a time. */
static bool write_widened(FILE *f, const Value *v)
{
    IrElemType t = v->shape->type;
    int storage = ir_type_storage_bytes(t);
    size_t n = (size_t)value_elements(v);
    float *chunk = xmalloc(NPY_CHUNK * sizeof *chunk);
    bool ok = true;
    for (size_t i = 0; ok && i < n; i += NPY_CHUNK) {
        size_t k = n - i < NPY_CHUNK ? n - i : NPY_CHUNK;
        for (size_t j = 0; j < k; j++)
            chunk[j] = (float)ir_elem_get_f64(t, (const char *)v->data + (i + j) * (size_t)storage);
        to_little_endian(chunk, k * 4, 4);
        ok = fwrite(chunk, 4, k, f) == k;
    }
    free(chunk);
    return ok;
}

/* Our bytes as they are (swapped on big-endian hosts). */
static bool write_raw(FILE *f, const Value *v)
{
    size_t bytes = value_bytes(v);
    int unit = swap_unit(v->shape->type);
    if (unit <= 1 || host_is_little_endian())
        return fwrite(v->data, 1, bytes, f) == bytes;
    unsigned char *copy = xmalloc(bytes ? bytes : 1);
    memcpy(copy, v->data, bytes);
    to_little_endian(copy, bytes, unit);
    bool ok = fwrite(copy, 1, bytes, f) == bytes;
    free(copy);
    return ok;
}

static bool write_array(const char *path, const Value *v, Error *err);

/* A value of dynamic size is written at its runtime shape: the padding
 * past its sizes is no part of it. */
bool npy_write(const char *path, const Value *v, Error *err)
{
    if (!v->sizes || !ir_shape_is_array(v->shape))
        return write_array(path, v, err);
    Arena *a = arena_new(1024);
    Value *c = value_box_copy(a, (Value *)v, NULL, err);
    bool ok = c && write_array(path, c, err);
    value_release(c);
    arena_free(a);
    return ok;
}

static bool write_array(const char *path, const Value *v, Error *err)
{
    IrLoc loc = { path, 0, 0 };
    const IrShape *s = v->shape;
    if (!ir_shape_is_array(s) || !write_descr[s->type])
        return error_set(err, ERR_UNSUPPORTED, loc, "a value of shape %s has no .npy form", ir_shape_str(s));
    IrAtomicFile a;
    if (!ir_atomic_open(&a, path, err))
        return false;
    StrBuf header;
    strbuf_init(&header);
    build_header(&header, write_descr[s->type], s);
    errno = 0;
    bool ok = fwrite(header.s, 1, header.len, a.f) == header.len;
    strbuf_free(&header);
    ok = ok && (is_narrow_float(s->type) ? write_widened(a.f, v) : write_raw(a.f, v));
    return ir_atomic_close(&a, ok, err);
}

/* ---- Parameters as files (tuples leaf by leaf) */

/* Error locations point at the path, so it must outlive the call: a small
 * ring of buffers. */
static char *param_path(const char *dir, int param, int leaf, int rank)
{
    static char ring[4][4096];
    static int next;
    char *p = ring[next++ % 4];
    if (leaf < 0)
        snprintf(p, sizeof ring[0], "%s/param%d.rank%d.npy", dir, param, rank);
    else
        snprintf(p, sizeof ring[0], "%s/param%d.%d.rank%d.npy", dir, param, leaf, rank);
    return p;
}

typedef struct LeafReader {
    const char *dir;
    int param, rank;
    int *leaf;
    bool *rounded;
} LeafReader;

static Value *read_leaves(const char *dir, int param, int rank, const IrShape *s, int *leaf, bool *rounded,
                          Error *err);

static Value *read_element(void *ctx, int i, const IrShape *element, Error *err)
{
    LeafReader *r = ctx;
    (void)i;
    return read_leaves(r->dir, r->param, r->rank, element, r->leaf, r->rounded, err);
}

static Value *read_leaves(const char *dir, int param, int rank, const IrShape *s, int *leaf, bool *rounded,
                          Error *err)
{
    if (s->type == IR_TYPE_TOKEN)
        return value_new_array(s, err);
    if (s->type != IR_TYPE_TUPLE) {
        bool r = false;
        Value *v = npy_read(param_path(dir, param, (*leaf)++, rank), s, &r, err);
        *rounded |= r;
        return v;
    }
    LeafReader r = { dir, param, rank, leaf, rounded };
    return value_build_tuple(s, read_element, &r, err);
}

Value *npy_read_param(const char *dir, int param, int rank, const IrShape *s, bool *rounded, Error *err)
{
    int leaf = 0;
    *rounded = false;
    if (s->type != IR_TYPE_TUPLE) {
        if (s->type == IR_TYPE_TOKEN)
            return value_new_array(s, err);
        return npy_read(param_path(dir, param, -1, rank), s, rounded, err);
    }
    return read_leaves(dir, param, rank, s, &leaf, rounded, err);
}

static bool write_leaves(const char *dir, int param, int rank, const Value *v, int *leaf, Error *err)
{
    if (v->shape->type == IR_TYPE_TOKEN)
        return true;
    if (v->shape->type != IR_TYPE_TUPLE)
        return npy_write(param_path(dir, param, (*leaf)++, rank), v, err);
    for (int i = 0; i < v->n_elements; i++)
        if (!write_leaves(dir, param, rank, v->elements[i], leaf, err))
            return false;
    return true;
}

bool npy_write_param(const char *dir, int param, int rank, const Value *v, Error *err)
{
    int leaf = 0;
    if (v->shape->type == IR_TYPE_TOKEN)
        return true;
    if (v->shape->type != IR_TYPE_TUPLE)
        return npy_write(param_path(dir, param, -1, rank), v, err);
    return write_leaves(dir, param, rank, v, &leaf, err);
}
