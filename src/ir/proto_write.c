/* proto_write.c: a module as XLA's HloModuleProto, the file the Neuron
 * compiler takes (model.hlo_module.pb).
 *
 * The writer is the reader's inverse (proto.c): each field proto.c turns
 * into text is filled here from the IR, by the same field numbers
 * (hlo.proto).  Attributes the IR keeps as raw text (sharding, metadata,
 * frontend_attributes, custom-call options, the module header's layout
 * and aliasing) are read here with a small scanner of their own grammar.
 * Nothing with a meaning is dropped: an attribute the proto has no field
 * for, or whose text does not read as its field's value, is an error
 * naming the instruction.  Only proto.c and this file see protobuf-c.
 *
 * Everything the proto points at lives in one arena, freed at the end. */
#include "ir.h"

#include "hlo.pb-c.h"
#include "proto_enums.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Writer {
    Arena *a;
    const IrModule *m;
    const IrInstr *at;          /* the instruction being written, for errors */
    const char *attr;           /* the attribute being read, for errors */
    StrBuf *note;
    Error *err;
    bool failed;
    IrNameMap *names;           /* instruction names taken in the module */
    IrNameMap *computation_names;   /* computation names taken, the wrapped ones included */
    int64_t next_instr_id, next_computation_id;     /* for what the writer makes */
    Xla__HloComputationProto **wrapped;     /* computations made for short async forms, not yet placed */
    size_t n_wrapped;
    int renamed;                /* how many instructions took a new name */
} Writer;

static IrLoc where(const Writer *w)
{
    if (w->at)
        return w->at->info->loc;
    return (IrLoc){ w->m->file, 0, 0 };
}

static bool w_fail(Writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool w_fail(Writer *w, const char *fmt, ...)
{
    if (w->failed)
        return false;
    w->failed = true;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (w->at)
        return error_set(w->err, ERR_UNSUPPORTED, where(w), "%%%s: cannot be written as an HloModuleProto: %s",
                         w->at->name, msg);
    return error_set(w->err, ERR_UNSUPPORTED, where(w), "cannot be written as an HloModuleProto: %s", msg);
}

static void note_item(Writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_item(Writer *w, const char *fmt, ...)
{
    if (!w->note)
        return;
    char item[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(item, sizeof item, fmt, ap);
    va_end(ap);
    if (w->note->len && strstr(w->note->s, item))
        return;
    if (w->note->len)
        strbuf_puts(w->note, "; ");
    strbuf_puts(w->note, item);
}

/* Zeroed arena memory; the writer stops (out of memory) when it runs out. */
static void *w_alloc(Writer *w, size_t n, size_t size)
{
    void *p = arena_alloc_array(w->a, n ? n : 1, size);
    if (!p && !w->failed) {
        w->failed = true;
        error_nomem(w->err, where(w));
    }
    return p;
}

#define W_NEW(w, T) w_new_##T(w)
#define DEFINE_NEW(T, INIT)                                  \
    static T *w_new_##T(Writer *w)                           \
    {                                                        \
        T *p = w_alloc(w, 1, sizeof *p);                     \
        if (p) {                                             \
            static const T init = INIT;                      \
            *p = init;                                       \
        }                                                    \
        return p;                                            \
    }
DEFINE_NEW(Xla__ShapeProto, XLA__SHAPE_PROTO__INIT)
DEFINE_NEW(Xla__LayoutProto, XLA__LAYOUT_PROTO__INIT)
DEFINE_NEW(Xla__TileProto, XLA__TILE_PROTO__INIT)
DEFINE_NEW(Xla__ProgramShapeProto, XLA__PROGRAM_SHAPE_PROTO__INIT)
DEFINE_NEW(Xla__OpMetadata, XLA__OP_METADATA__INIT)
DEFINE_NEW(Xla__LiteralProto, XLA__LITERAL_PROTO__INIT)
DEFINE_NEW(Xla__WindowDimension, XLA__WINDOW_DIMENSION__INIT)
DEFINE_NEW(Xla__Window, XLA__WINDOW__INIT)
DEFINE_NEW(Xla__GatherDimensionNumbers, XLA__GATHER_DIMENSION_NUMBERS__INIT)
DEFINE_NEW(Xla__ScatterDimensionNumbers, XLA__SCATTER_DIMENSION_NUMBERS__INIT)
DEFINE_NEW(Xla__ConvolutionDimensionNumbers, XLA__CONVOLUTION_DIMENSION_NUMBERS__INIT)
DEFINE_NEW(Xla__DotDimensionNumbers, XLA__DOT_DIMENSION_NUMBERS__INIT)
DEFINE_NEW(Xla__PaddingConfig__PaddingConfigDimension, XLA__PADDING_CONFIG__PADDING_CONFIG_DIMENSION__INIT)
DEFINE_NEW(Xla__PaddingConfig, XLA__PADDING_CONFIG__INIT)
DEFINE_NEW(Xla__OpSharding, XLA__OP_SHARDING__INIT)
DEFINE_NEW(Xla__ReplicaGroup, XLA__REPLICA_GROUP__INIT)
DEFINE_NEW(Xla__IotaReplicaGroupListProto, XLA__IOTA_REPLICA_GROUP_LIST_PROTO__INIT)
DEFINE_NEW(Xla__SourceTarget, XLA__SOURCE_TARGET__INIT)
DEFINE_NEW(Xla__PrecisionConfig, XLA__PRECISION_CONFIG__INIT)
DEFINE_NEW(Xla__FrontendAttributes__Entry, XLA__FRONTEND_ATTRIBUTES__ENTRY__INIT)
DEFINE_NEW(Xla__FrontendAttributes, XLA__FRONTEND_ATTRIBUTES__INIT)
DEFINE_NEW(Xla__TriangularSolveOptions, XLA__TRIANGULAR_SOLVE_OPTIONS__INIT)
DEFINE_NEW(Xla__CholeskyOptions, XLA__CHOLESKY_OPTIONS__INIT)
DEFINE_NEW(Xla__ParameterReplication, XLA__PARAMETER_REPLICATION__INIT)
DEFINE_NEW(Xla__OutputOperandAliasing, XLA__OUTPUT_OPERAND_ALIASING__INIT)
DEFINE_NEW(Xla__ResultAccuracy, XLA__RESULT_ACCURACY__INIT)
DEFINE_NEW(Xla__HloInstructionProto__SliceDimensions, XLA__HLO_INSTRUCTION_PROTO__SLICE_DIMENSIONS__INIT)
DEFINE_NEW(Xla__HloInstructionProto, XLA__HLO_INSTRUCTION_PROTO__INIT)
DEFINE_NEW(Xla__HloComputationProto, XLA__HLO_COMPUTATION_PROTO__INIT)
DEFINE_NEW(Xla__HloScheduleProto__InstructionSequence, XLA__HLO_SCHEDULE_PROTO__INSTRUCTION_SEQUENCE__INIT)
DEFINE_NEW(Xla__HloScheduleProto__SequencesEntry, XLA__HLO_SCHEDULE_PROTO__SEQUENCES_ENTRY__INIT)
DEFINE_NEW(Xla__HloScheduleProto, XLA__HLO_SCHEDULE_PROTO__INIT)
DEFINE_NEW(Xla__HloInputOutputAliasProto__AliasEntryProto, XLA__HLO_INPUT_OUTPUT_ALIAS_PROTO__ALIAS_ENTRY_PROTO__INIT)
DEFINE_NEW(Xla__HloInputOutputAliasProto, XLA__HLO_INPUT_OUTPUT_ALIAS_PROTO__INIT)
DEFINE_NEW(Xla__HloBufferDonorProto__BufferDonorEntryProto, XLA__HLO_BUFFER_DONOR_PROTO__BUFFER_DONOR_ENTRY_PROTO__INIT)
DEFINE_NEW(Xla__HloBufferDonorProto, XLA__HLO_BUFFER_DONOR_PROTO__INIT)
DEFINE_NEW(Xla__DeviceAssignmentProto__ComputationDevice, XLA__DEVICE_ASSIGNMENT_PROTO__COMPUTATION_DEVICE__INIT)
DEFINE_NEW(Xla__DeviceAssignmentProto, XLA__DEVICE_ASSIGNMENT_PROTO__INIT)
DEFINE_NEW(Xla__StackFrameIndexProto__FileLocation, XLA__STACK_FRAME_INDEX_PROTO__FILE_LOCATION__INIT)
DEFINE_NEW(Xla__StackFrameIndexProto__StackFrame, XLA__STACK_FRAME_INDEX_PROTO__STACK_FRAME__INIT)
DEFINE_NEW(Xla__StackFrameIndexProto, XLA__STACK_FRAME_INDEX_PROTO__INIT)
DEFINE_NEW(Xla__HloModuleProto, XLA__HLO_MODULE_PROTO__INIT)
#undef DEFINE_NEW

/* A growable array of pointers or values in the arena: ARR_PUSH(w, arr, n, v). */
static bool grow(Writer *w, void **arr, size_t n, size_t size)
{
    if (n != 0 && (n & (n - 1)) != 0)
        return true;                /* room left: capacities are powers of two */
    void *bigger = w_alloc(w, n ? 2 * n : 1, size);
    if (!bigger)
        return false;
    if (n)
        memcpy(bigger, *arr, n * size);
    *arr = bigger;
    return true;
}
#define ARR_PUSH(w, arr, n, v)                                                  \
    do {                                                                        \
        if (grow((w), (void **)&(arr), (n), sizeof *(arr)))                     \
            (arr)[(n)++] = (v);                                                 \
    } while (0)

static int64_t *copy_ints(Writer *w, const int64_t *v, size_t n)
{
    int64_t *c = w_alloc(w, n, sizeof *c);
    if (c && n)
        memcpy(c, v, n * sizeof *c);
    return c;
}

/* --- the scanner for attribute text ------------------------------------ */

typedef struct Scan {
    Writer *w;
    const char *p;
} Scan;

static void sc_space(Scan *s)
{
    while (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')
        s->p++;
}

static bool sc_peek(Scan *s, char c)
{
    sc_space(s);
    return *s->p == c;
}

static bool sc_eat(Scan *s, char c)
{
    if (!sc_peek(s, c))
        return false;
    s->p++;
    return true;
}

static bool sc_bad(Scan *s, const char *what)
{
    return w_fail(s->w, "%s: expected %s at '%.30s'", s->w->attr, what, s->p);
}

static bool sc_want(Scan *s, char c)
{
    if (sc_eat(s, c))
        return true;
    char what[8] = { '\'', c, '\'', 0 };
    return sc_bad(s, what);
}

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
}

/* A bare word (letters, digits, _ . -) into buf; false when there is none. */
static bool sc_word(Scan *s, char *buf, size_t cap)
{
    sc_space(s);
    size_t n = 0;
    while (word_char(s->p[n]))
        n++;
    if (n == 0 || n >= cap)
        return false;
    memcpy(buf, s->p, n);
    buf[n] = 0;
    s->p += n;
    return true;
}

static bool sc_int(Scan *s, int64_t *v)
{
    sc_space(s);
    char *end;
    errno = 0;
    long long x = strtoll(s->p, &end, 10);
    if (end == s->p || errno)
        return sc_bad(s, "an integer");
    *v = x;
    s->p = end;
    return true;
}

static bool sc_bool(Scan *s, bool *v)
{
    char word[8];
    if (sc_word(s, word, sizeof word) && (strcmp(word, "true") == 0 || strcmp(word, "false") == 0)) {
        *v = word[0] == 't';
        return true;
    }
    return sc_bad(s, "true or false");
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The bytes of text between quotes (escapes as written, absl::CUnescape's
 * rules), NUL-terminated in the arena; *len without the NUL. */
static char *unescape(Writer *w, const char *q, size_t n, size_t *len)
{
    char *out = w_alloc(w, n + 1, 1);
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = q[i];
        if (c != '\\' || i + 1 == n) {
            out[k++] = c;
            continue;
        }
        c = q[++i];
        switch (c) {
        case 'n': out[k++] = '\n'; break;
        case 'r': out[k++] = '\r'; break;
        case 't': out[k++] = '\t'; break;
        case 'a': out[k++] = '\a'; break;
        case 'b': out[k++] = '\b'; break;
        case 'f': out[k++] = '\f'; break;
        case 'v': out[k++] = '\v'; break;
        case 'x': {
            int v = 0, d = 0;
            while (i + 1 < n && d < 2 && hexval(q[i + 1]) >= 0)
                v = v * 16 + hexval(q[++i]), d++;
            out[k++] = (char)v;
            break;
        }
        default:
            if (c >= '0' && c <= '7') {
                int v = c - '0', d = 1;
                while (i + 1 < n && d < 3 && q[i + 1] >= '0' && q[i + 1] <= '7')
                    v = v * 8 + (q[++i] - '0'), d++;
                out[k++] = (char)v;
            } else {
                out[k++] = c;       /* \" \' \\ \? */
            }
        }
    }
    out[k] = 0;
    *len = k;
    return out;
}

/* Is s[0..n) UTF-8, as protobuf wants every string field (XLA's reader
 * refuses a proto whose string is not)? */
static bool is_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t k = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : 4;
        if (k == 4 || (k == 1 && c < 0xc2) || i + k >= n + (k == 0))
            return false;
        uint32_t v = k ? c & (0x3f >> k) : c;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80)
                return false;
            v = v << 6 | (s[i + j] & 0x3f);
        }
        if ((k == 2 && (v < 0x800 || (v >= 0xd800 && v < 0xe000))) || (k == 3 && (v < 0x10000 || v > 0x10ffff)))
            return false;
        i += k + 1;
    }
    return true;
}

/* A string for a string field: refused unless UTF-8. */
static char *utf8_or_fail(Writer *w, char *t, size_t len)
{
    if (t && !is_utf8((const unsigned char *)t, len)) {
        w_fail(w, "%s: the string \"%.40s\" is not UTF-8, which a proto's string field must be", w->attr, t);
        return NULL;
    }
    return t;
}

static char *sc_bytes(Scan *s, size_t *len);

/* A quoted string, unescaped, for a string field. */
static char *sc_string(Scan *s, size_t *len)
{
    size_t n;
    char *t = sc_bytes(s, &n);
    if (len)
        *len = n;
    return utf8_or_fail(s->w, t, n);
}

/* A quoted string, unescaped, for a bytes field. */
static char *sc_bytes(Scan *s, size_t *len)
{
    sc_space(s);
    char quote = *s->p;
    if (quote != '"' && quote != '\'') {
        sc_bad(s, "a quoted string");
        return NULL;
    }
    const char *q = s->p + 1;
    size_t n = 0;
    while (q[n] && q[n] != quote)
        n += q[n] == '\\' && q[n + 1] ? 2 : 1;
    if (!q[n]) {
        sc_bad(s, "a closing quote");
        return NULL;
    }
    s->p = q + n + 1;
    size_t dummy;
    return unescape(s->w, q, n, len ? len : &dummy);
}

/* A quoted string or a bare word. */
static char *sc_value(Scan *s)
{
    if (sc_peek(s, '"') || sc_peek(s, '\''))
        return sc_string(s, NULL);
    char buf[256];
    if (!sc_word(s, buf, sizeof buf)) {
        sc_bad(s, "a value");
        return NULL;
    }
    return arena_strdup(s->w->a, buf);
}

/* Skips one value of any shape: a string, a word, or a balanced {...}. */
static bool sc_skip_value(Scan *s)
{
    sc_space(s);
    if (*s->p == '"' || *s->p == '\'')
        return sc_bytes(s, NULL) != NULL;
    if (*s->p == '{' || *s->p == '(' || *s->p == '[') {
        int depth = 0;
        do {
            if (*s->p == '"' || *s->p == '\'') {
                if (!sc_bytes(s, NULL))
                    return false;
                continue;
            }
            if (!*s->p)
                return sc_bad(s, "a closing bracket");
            depth += (*s->p == '{' || *s->p == '(' || *s->p == '[') - (*s->p == '}' || *s->p == ')' || *s->p == ']');
            s->p++;
        } while (depth > 0);
        return true;
    }
    char buf[256];
    return sc_word(s, buf, sizeof buf) || sc_bad(s, "a value");
}

static bool sc_end(Scan *s)
{
    sc_space(s);
    return *s->p == 0 || sc_bad(s, "the end of the value");
}

/* {1,2,3} into a fresh array. */
static bool sc_int_list(Scan *s, int64_t **v, size_t *n, char open, char close)
{
    *v = NULL;
    *n = 0;
    if (!sc_want(s, open))
        return false;
    if (sc_eat(s, close))
        return true;
    do {
        int64_t x;
        if (!sc_int(s, &x))
            return false;
        ARR_PUSH(s->w, *v, *n, x);
    } while (sc_eat(s, ','));
    return sc_want(s, close);
}

static int name_index(const char *const *names, size_t n, const char *word)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] && strcmp(names[i], word) == 0)
            return (int)i;
    return -1;
}
#define NAME_INDEX(table, word) name_index(table, sizeof table / sizeof table[0], word)

/* --- shapes and literals ------------------------------------------------ */

static int32_t primitive_of(IrElemType t) { return proto_type_from_ir(t); }

/* The text after ':' in a layout: T(8,128)(2,1) L(n) E(n) S(n) M(n), as
 * proto.c writes them.  Anything else (sparse D(...), index and pointer
 * types #(...) *(...), split configs) has no field here: refused. */
static bool layout_tail(Writer *w, Xla__LayoutProto *l, const char *tail)
{
    Scan s = { w, tail };
    w->attr = "layout";
    while (!sc_peek(&s, 0)) {
        char c = *s.p++;
        if (c == 'T') {
            while (sc_peek(&s, '(')) {
                s.p++;
                Xla__TileProto *t = W_NEW(w, Xla__TileProto);
                if (!t)
                    return false;
                do {
                    int64_t d;
                    if (sc_eat(&s, '*'))
                        d = INT64_MIN;   /* XLA's combined dimension */
                    else if (!sc_int(&s, &d))
                        return false;
                    ARR_PUSH(w, t->dimensions, t->n_dimensions, d);
                } while (sc_eat(&s, ','));
                if (!sc_want(&s, ')'))
                    return false;
                ARR_PUSH(w, l->tiles, l->n_tiles, t);
            }
            continue;
        }
        int64_t *slot = c == 'L' ? &l->tail_padding_alignment_in_elements
                        : c == 'E' ? &l->element_size_in_bits
                        : c == 'S' ? &l->memory_space
                        : c == 'M' ? &l->dynamic_shape_metadata_prefix_bytes : NULL;
        if (!slot)
            return w_fail(w, "layout: '%c(...)' in {...:%s} has no field hlocheck writes", c, tail);
        if (!sc_want(&s, '(') || !sc_int(&s, slot) || !sc_want(&s, ')'))
            return false;
    }
    return true;
}

static Xla__ShapeProto *w_shape(Writer *w, const IrShape *s)
{
    Xla__ShapeProto *p = W_NEW(w, Xla__ShapeProto);
    if (!p)
        return NULL;
    if (s->type == IR_TYPE_TUPLE) {
        p->element_type = s->is_buffer ? 34 : 13;
        p->n_tuple_shapes = (size_t)s->n_elements;
        p->tuple_shapes = w_alloc(w, p->n_tuple_shapes, sizeof *p->tuple_shapes);
        for (int i = 0; i < s->n_elements && p->tuple_shapes; i++)
            if (!(p->tuple_shapes[i] = w_shape(w, s->elements[i])))
                return NULL;
        return p->tuple_shapes ? p : NULL;
    }
    p->element_type = primitive_of(s->type);
    if (s->type == IR_TYPE_TOKEN || s->type == IR_TYPE_OPAQUE)
        return p;
    p->n_dimensions = (size_t)s->rank;
    p->dimensions = copy_ints(w, s->dims, p->n_dimensions);
    if (!p->dimensions)
        return NULL;
    if (s->dim_kind) {
        p->n_is_dynamic_dimension = p->n_dimensions;
        p->is_dynamic_dimension = w_alloc(w, p->n_dimensions, sizeof *p->is_dynamic_dimension);
        if (!p->is_dynamic_dimension)
            return NULL;
        for (int i = 0; i < s->rank; i++) {
            p->is_dynamic_dimension[i] = s->dim_kind[i] != IR_DIM_STATIC;
            if (s->dim_kind[i] == IR_DIM_UNBOUNDED)
                p->dimensions[i] = INT64_MIN;
        }
    }
    /* Every array shape XLA reads has a layout; one the text left out is
     * the default (major to minor), as XLA's parser makes it. */
    Xla__LayoutProto *l = W_NEW(w, Xla__LayoutProto);
    if (!l)
        return NULL;
    l->n_minor_to_major = (size_t)s->rank;
    l->minor_to_major = w_alloc(w, l->n_minor_to_major, sizeof *l->minor_to_major);
    if (!l->minor_to_major)
        return NULL;
    bool given = s->has_layout;
    for (int i = 0; i < s->rank; i++)
        l->minor_to_major[i] = given ? s->minor_to_major[i] : s->rank - 1 - i;
    if (given && s->layout_tail && !layout_tail(w, l, s->layout_tail))
        return NULL;
    p->layout = l;
    return p;
}

/* A shape given as attribute text, parsed by the parser's own grammar. */
static Xla__ShapeProto *w_shape_text(Writer *w, Scan *s)
{
    sc_space(s);
    Error e = { 0 };
    size_t used = 0;
    IrShape *shape = ir_parse_shape_text(w->a, s->p, strlen(s->p), &used, &e);
    if (!shape) {
        w_fail(w, "%s: %s", w->attr, e.msg);
        return NULL;
    }
    s->p += used;
    return w_shape(w, shape);
}

static bool put_bytes(Writer *w, ProtobufCBinaryData *b, const void *data, size_t n)
{
    b->len = n;
    b->data = w_alloc(w, n, 1);
    if (b->data && n)
        memcpy(b->data, data, n);
    return b->data != NULL;
}

/* 16-bit values as XLA writes them: little-endian. */
static bool put_u16(Writer *w, ProtobufCBinaryData *b, const uint16_t *v, size_t n)
{
    b->len = 2 * n;
    b->data = w_alloc(w, 2 * n, 1);
    if (!b->data)
        return false;
    for (size_t i = 0; i < n; i++) {
        b->data[2 * i] = (uint8_t)(v[i] & 0xff);
        b->data[2 * i + 1] = (uint8_t)(v[i] >> 8);
    }
    return true;
}

static Xla__LiteralProto *w_literal(Writer *w, const IrLiteral *lit, const IrShape *s)
{
    Xla__LiteralProto *l = W_NEW(w, Xla__LiteralProto);
    if (!l || !(l->shape = w_shape(w, s)))
        return NULL;
    if (s->type == IR_TYPE_TUPLE) {
        if (lit->n_elements != s->n_elements)
            return w_fail(w, "a tuple constant with %d elements for %d shapes", lit->n_elements, s->n_elements),
                   NULL;
        l->n_tuple_literals = (size_t)s->n_elements;
        l->tuple_literals = w_alloc(w, l->n_tuple_literals, sizeof *l->tuple_literals);
        for (int i = 0; i < s->n_elements && l->tuple_literals; i++)
            if (!(l->tuple_literals[i] = w_literal(w, lit->elements[i], s->elements[i])))
                return NULL;
        return l->tuple_literals ? l : NULL;
    }
    if (lit->elided)
        return w_fail(w, "the constant's values are elided ({...}): there are none to write (hlo-opt "
                         "--fill-elided gives them values)"), NULL;
    size_t n = (size_t)ir_shape_elements(s);
    const void *d = lit->data;
    bool ok = true;
#define REP(F, T)                                                              \
    l->n_##F = n;                                                              \
    l->F = w_alloc(w, n, sizeof *l->F);                                        \
    ok = l->F != NULL;                                                         \
    for (size_t i = 0; ok && i < n; i++)                                       \
        l->F[i] = ((const T *)d)[i];
    switch (s->type) {
    case IR_TYPE_PRED: REP(preds, uint8_t) break;
    case IR_TYPE_S32: REP(s32s, int32_t) break;
    case IR_TYPE_U32: REP(u32s, uint32_t) break;
    case IR_TYPE_S64: REP(s64s, int64_t) break;
    case IR_TYPE_U64: REP(u64s, uint64_t) break;
    case IR_TYPE_F32: REP(f32s, float) break;
    case IR_TYPE_F64: REP(f64s, double) break;
    case IR_TYPE_C64: n *= 2; REP(c64s, float) break;
    case IR_TYPE_C128: n *= 2; REP(c128s, double) break;
    case IR_TYPE_S8: ok = put_bytes(w, &l->s8s, d, n); break;
    case IR_TYPE_U8: ok = put_bytes(w, &l->u8s, d, n); break;
    /* Sub-byte types: one element per byte, as XLA's literal holds them. */
    case IR_TYPE_S4: ok = put_bytes(w, &l->s4s, d, n); break;
    case IR_TYPE_S2: ok = put_bytes(w, &l->s2s, d, n); break;
    case IR_TYPE_S1: ok = put_bytes(w, &l->s1s, d, n); break;
    case IR_TYPE_U4: ok = put_bytes(w, &l->u4s, d, n); break;
    case IR_TYPE_U2: ok = put_bytes(w, &l->u2s, d, n); break;
    case IR_TYPE_U1: ok = put_bytes(w, &l->u1s, d, n); break;
    case IR_TYPE_S16: ok = put_u16(w, &l->s16s, d, n); break;
    case IR_TYPE_U16: ok = put_u16(w, &l->u16s, d, n); break;
    case IR_TYPE_F16: ok = put_u16(w, &l->f16s, d, n); break;
    case IR_TYPE_BF16: ok = put_u16(w, &l->bf16s, d, n); break;
    case IR_TYPE_F8E5M2: ok = put_bytes(w, &l->f8e5m2s, d, n); break;
    case IR_TYPE_F8E4M3: ok = put_bytes(w, &l->f8e4m3s, d, n); break;
    case IR_TYPE_F8E4M3FN: ok = put_bytes(w, &l->f8e4m3fns, d, n); break;
    case IR_TYPE_F8E4M3B11FNUZ: ok = put_bytes(w, &l->f8e4m3b11fnuzs, d, n); break;
    case IR_TYPE_F8E3M4: ok = put_bytes(w, &l->f8e3m4s, d, n); break;
    case IR_TYPE_F8E5M2FNUZ: ok = put_bytes(w, &l->f8e5m2fnuzs, d, n); break;
    case IR_TYPE_F8E4M3FNUZ: ok = put_bytes(w, &l->f8e4m3fnuzs, d, n); break;
    case IR_TYPE_F8E8M0FNU: ok = put_bytes(w, &l->f8e8m0fnus, d, n); break;
    case IR_TYPE_F4E2M1FN: ok = put_bytes(w, &l->f4e2m1fns, d, n); break;
    case IR_TYPE_TOKEN: case IR_TYPE_OPAQUE: case IR_TYPE_TUPLE: case IR_TYPE_INVALID: case IR_TYPE_COUNT:
        return w_fail(w, "a constant of %s", ir_type_name(s->type)), NULL;
    }
#undef REP
    return ok ? l : NULL;
}

/* --- metadata, sharding, frontend attributes ----------------------------- */

/* {op_type="..." op_name="..." source_line=3 ...}: the fields OpMetadata
 * has; other keys (profile information) have no meaning and are noted. */
static Xla__OpMetadata *w_metadata(Writer *w, Scan *s)
{
    Xla__OpMetadata *md = W_NEW(w, Xla__OpMetadata);
    if (!md || !sc_want(s, '{'))
        return NULL;
    while (!sc_eat(s, '}')) {
        char key[64];
        if (!sc_word(s, key, sizeof key) || !sc_want(s, '=')) {
            sc_bad(s, "a metadata field");
            return NULL;
        }
        char **str = strcmp(key, "op_type") == 0 ? &md->op_type
                     : strcmp(key, "op_name") == 0 ? &md->op_name
                     : strcmp(key, "source_file") == 0 ? &md->source_file
                     : strcmp(key, "deduplicated_name") == 0 ? &md->deduplicated_name
                     : strcmp(key, "scheduling_name") == 0 ? &md->scheduling_name : NULL;
        int32_t *num = strcmp(key, "source_line") == 0 ? &md->source_line
                       : strcmp(key, "source_end_line") == 0 ? &md->source_end_line
                       : strcmp(key, "source_column") == 0 ? &md->source_column
                       : strcmp(key, "source_end_column") == 0 ? &md->source_end_column
                       : strcmp(key, "stack_frame_id") == 0 ? &md->stack_frame_id : NULL;
        if (str) {
            if (!(*str = sc_string(s, NULL)))
                return NULL;
        } else if (num) {
            int64_t v;
            if (!sc_int(s, &v))
                return NULL;
            *num = (int32_t)v;
        } else {
            note_item(w, "not carried: metadata %s", key);
            if (!sc_skip_value(s))
                return NULL;
        }
        sc_eat(s, ',');
    }
    return md;
}

static const char *const sharding_types[] = { "replicated", "maximal", NULL, "other", "manual", "unknown",
                                              "unreduced" };

/* <=[2,64]T(1,0): iota reshape dimensions and permutation (identity when
 * no T is written; XLA wants one entry per reshape dimension). */
static bool sc_iota(Scan *s, int64_t **dims, size_t *n_dims, int32_t **perm, size_t *n_perm)
{
    int64_t *p64;
    size_t n64;
    if (!sc_int_list(s, dims, n_dims, '[', ']'))
        return false;
    if (sc_eat(s, 'T')) {
        if (!sc_int_list(s, &p64, &n64, '(', ')'))
            return false;
        if (n64 != *n_dims)
            return w_fail(s->w, "%s: T(...) has %zu entries for %zu reshape dimensions", s->w->attr, n64, *n_dims);
    } else {
        n64 = *n_dims;
        p64 = w_alloc(s->w, n64, sizeof *p64);
        for (size_t i = 0; p64 && i < n64; i++)
            p64[i] = (int64_t)i;
    }
    *perm = w_alloc(s->w, n64, sizeof **perm);
    if (!*perm || !p64)
        return false;
    for (size_t i = 0; i < n64; i++)
        (*perm)[i] = (int32_t)p64[i];
    *n_perm = n64;
    return true;
}

/* An HloSharding as its ToString writes it (proto.c's emit_sharding). */
static Xla__OpSharding *w_sharding(Writer *w, Scan *s, int depth)
{
    Xla__OpSharding *o = W_NEW(w, Xla__OpSharding);
    if (!o || !sc_want(s, '{'))
        return NULL;
    if (depth > 32) {
        w_fail(w, "%s: tuple shardings nested more than 32 deep", w->attr);
        return NULL;
    }
    if (sc_peek(s, '{') || sc_peek(s, '}')) {
        o->type = 2;                                /* TUPLE */
        if (sc_eat(s, '}'))
            return o;
        do {
            Xla__OpSharding *e = w_sharding(w, s, depth + 1);
            if (!e)
                return NULL;
            ARR_PUSH(w, o->tuple_shardings, o->n_tuple_shardings, e);
        } while (sc_eat(s, ','));
        return sc_want(s, '}') ? o : NULL;
    }
    char word[64];
    if (!sc_word(s, word, sizeof word)) {
        sc_bad(s, "a sharding");
        return NULL;
    }
    int t = NAME_INDEX(sharding_types, word);
    if (strcmp(word, "devices") == 0) {
        o->type = 3;                                /* OTHER */
        if (!sc_want(s, '=') || !sc_int_list(s, &o->tile_assignment_dimensions, &o->n_tile_assignment_dimensions,
                                             '[', ']'))
            return NULL;
        if (sc_eat(s, '<')) {
            if (!sc_want(s, '=') ||
                !sc_iota(s, &o->iota_reshape_dims, &o->n_iota_reshape_dims, &o->iota_transpose_perm,
                         &o->n_iota_transpose_perm))
                return NULL;
        } else {
            do {
                int64_t d;
                if (!sc_int(s, &d))
                    return NULL;
                ARR_PUSH(w, o->tile_assignment_devices, o->n_tile_assignment_devices, d);
            } while (sc_eat(s, ','));
        }
    } else if (t == 1) {
        o->type = 1;
        int64_t d;
        char dev[16];
        if (!sc_word(s, dev, sizeof dev) || strcmp(dev, "device") || !sc_want(s, '=') || !sc_int(s, &d)) {
            sc_bad(s, "device=N");
            return NULL;
        }
        ARR_PUSH(w, o->tile_assignment_devices, o->n_tile_assignment_devices, d);
    } else if (t >= 0 && t != 3) {
        o->type = t;
    } else {
        w_fail(w, "%s: '%s' is not a sharding hlocheck writes", w->attr, word);
        return NULL;
    }
    /* Then in any order: last_tile_dim_replicate, last_tile_dims={...},
     * shard_as N / shard_like N, metadata=... */
    while (!sc_eat(s, '}')) {
        if (!sc_word(s, word, sizeof word)) {
            sc_bad(s, "a sharding option or '}'");
            return NULL;
        }
        if (strcmp(word, "last_tile_dim_replicate") == 0) {
            o->replicate_on_last_tile_dim = true;
        } else if (strcmp(word, "last_tile_dims") == 0) {
            if (!sc_want(s, '=') || !sc_want(s, '{'))
                return NULL;
            do {
                char kind[32];
                int k;
                if (!sc_word(s, kind, sizeof kind) || (k = NAME_INDEX(sharding_types, kind)) < 0) {
                    sc_bad(s, "a sharding type");
                    return NULL;
                }
                ARR_PUSH(w, o->last_tile_dims, o->n_last_tile_dims, k);
            } while (sc_eat(s, ','));
            if (!sc_want(s, '}'))
                return NULL;
        } else if (strcmp(word, "shard_as") == 0 || strcmp(word, "shard_like") == 0) {
            o->is_shard_group = true;
            o->shard_group_type = word[6] == 'l' ? 1 : 0;
            if (!sc_int(s, &o->shard_group_id))
                return NULL;
        } else if (strcmp(word, "metadata") == 0) {
            if (!sc_want(s, '='))
                return NULL;
            bool many = false;
            const char *save = s->p;
            if (sc_eat(s, '{')) {
                many = sc_peek(s, '{');
                s->p = save;
            }
            if (many)
                sc_want(s, '{');
            do {
                Xla__OpMetadata *md = w_metadata(w, s);
                if (!md)
                    return NULL;
                ARR_PUSH(w, o->metadata, o->n_metadata, md);
            } while (many && sc_eat(s, ','));
            if (many && !sc_want(s, '}'))
                return NULL;
        } else {
            w_fail(w, "%s: '%s' is not a sharding option hlocheck writes", w->attr, word);
            return NULL;
        }
    }
    return o;
}

/* {key="value",key2=word}: a map. */
static Xla__FrontendAttributes *w_frontend_attributes(Writer *w, Scan *s)
{
    Xla__FrontendAttributes *fa = W_NEW(w, Xla__FrontendAttributes);
    if (!fa || !sc_want(s, '{'))
        return NULL;
    if (sc_eat(s, '}'))
        return fa;
    do {
        Xla__FrontendAttributes__Entry *e = W_NEW(w, Xla__FrontendAttributes__Entry);
        char key[256];
        if (!e)
            return NULL;
        if (sc_peek(s, '"')) {
            if (!(e->key = sc_string(s, NULL)))
                return NULL;
        } else if (sc_word(s, key, sizeof key)) {
            e->key = arena_strdup(w->a, key);
        } else {
            sc_bad(s, "an attribute name");
            return NULL;
        }
        if (!sc_want(s, '=') || !(e->value = sc_value(s)))
            return NULL;
        ARR_PUSH(w, fa->map, fa->n_map, e);
    } while (sc_eat(s, ','));
    return sc_want(s, '}') ? fa : NULL;
}

/* --- instructions ------------------------------------------------------- */

static const char *const direction_names[] = { "", "EQ", "NE", "LT", "LE", "GT", "GE" };
static const char *const compare_type_names[] = { "", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED" };

/* A bare enum word, as its value. */
static bool sc_enum(Scan *s, const ProtoEnum *e, int32_t *v)
{
    char word[64];
    int k;
    if (!sc_word(s, word, sizeof word) || (k = proto_enum_value(e, word)) < 0)
        return sc_bad(s, "a value XLA defines");
    *v = k;
    return true;
}
#define SC_ENUM(s, e, v) sc_enum(s, &(e), v)

/* {0,1} as a shape index. */
static bool sc_shape_index(Scan *s, int64_t **v, size_t *n)
{
    return sc_int_list(s, v, n, '{', '}');
}

static int64_t comp_id(const IrComputation *c)
{
    return c->id;
}

static IrComputation *find_comp(Writer *w, const char *name)
{
    IrComputation *c = ir_module_find_computation(w->m, name);
    if (!c)
        w_fail(w, "%s: no computation %%%s", w->attr, name);
    return c;
}

/* {%a, %b}: computations by name. */
static bool sc_comp_list(Writer *w, Scan *s, Xla__HloInstructionProto *p)
{
    if (!sc_want(s, '{'))
        return false;
    if (sc_eat(s, '}'))
        return true;
    do {
        char name[256];
        sc_eat(s, '%');
        if (!sc_word(s, name, sizeof name))
            return sc_bad(s, "a computation name");
        IrComputation *c = find_comp(w, name);
        if (!c)
            return false;
        ARR_PUSH(w, p->called_computation_ids, p->n_called_computation_ids, comp_id(c));
    } while (sc_eat(s, ','));
    return sc_want(s, '}');
}

/* The attributes the IR keeps as text, each into its field. */
static bool w_raw_attr(Writer *w, Xla__HloInstructionProto *p, const IrInstr *in, const IrRawAttr *r)
{
    Scan sc = { w, r->value }, *s = &sc;
    const char *n = r->name;
    w->attr = n;
    bool b;
    size_t len;
    if (strcmp(n, "metadata") == 0) {
        Xla__OpMetadata *md = w_metadata(w, s);
        if (!md || !sc_end(s))
            return false;
        /* Only unknown keys: nothing to write, as the reader prints no
         * metadata for an empty message (writing it would not hold still). */
        bool empty = !(md->op_type && md->op_type[0]) && !(md->op_name && md->op_name[0]) &&
                     !(md->source_file && md->source_file[0]) && !(md->deduplicated_name && md->deduplicated_name[0]) &&
                     !(md->scheduling_name && md->scheduling_name[0]) && !md->source_line && !md->source_end_line &&
                     !md->source_column && !md->source_end_column && !md->stack_frame_id;
        p->metadata = empty ? NULL : md;
        return true;
    }
    if (strcmp(n, "sharding") == 0)
        return (p->sharding = w_sharding(w, s, 0)) && sc_end(s);
    if (strcmp(n, "frontend_attributes") == 0)
        return (p->frontend_attributes = w_frontend_attributes(w, s)) && sc_end(s);
    if (strcmp(n, "backend_config") == 0) {
        sc_space(s);
        if (*s->p == '"' || *s->p == '\'') {
            char *t = sc_bytes(s, &len);
            return t && put_bytes(w, &p->backend_config, t, len) && sc_end(s);
        }
        return put_bytes(w, &p->backend_config, s->p, strlen(s->p));      /* {...} as written */
    }
    if (strcmp(n, "infeed_config") == 0 || strcmp(n, "outfeed_config") == 0) {
        char *t = sc_bytes(s, &len);
        return t && put_bytes(w, n[0] == 'i' ? &p->infeed_config : &p->outfeed_config, t, len) && sc_end(s);
    }
    if (strcmp(n, "outfeed_shape") == 0)
        return (p->outfeed_shape = w_shape_text(w, s)) && sc_end(s);
    if (strcmp(n, "async_execution_thread") == 0)
        return (p->async_execution_thread = sc_string(s, NULL)) && sc_end(s);
    if (strcmp(n, "called_computations") == 0)
        return sc_comp_list(w, s, p) && sc_end(s);
    if (strcmp(n, "operand_precision") == 0) {
        if (!p->precision_config && !(p->precision_config = W_NEW(w, Xla__PrecisionConfig)))
            return false;
        if (!sc_want(s, '{'))
            return false;
        if (!sc_eat(s, '}')) {
            do {
                int32_t k;
                if (!SC_ENUM(s, proto_precision, &k))
                    return false;
                ARR_PUSH(w, p->precision_config->operand_precision, p->precision_config->n_operand_precision, k);
            } while (sc_eat(s, ','));
            if (!sc_want(s, '}'))
                return false;
        }
        return sc_end(s);
    }
    if (strcmp(n, "algorithm") == 0) {
        if (in->op == IR_OP_RNG_BIT_GENERATOR)
            return SC_ENUM(s, proto_rng_algorithm, &p->rng_algorithm) && sc_end(s);
        if (!p->precision_config && !(p->precision_config = W_NEW(w, Xla__PrecisionConfig)))
            return false;
        return SC_ENUM(s, proto_dot_algorithm, &p->precision_config->algorithm) && sc_end(s);
    }
    if (strcmp(n, "epsilon") == 0) {
        sc_space(s);
        char *end;
        double d = strtod(s->p, &end);
        if (end == s->p)
            return sc_bad(s, "a number");
        s->p = end;
        p->epsilon = (float)d;
        return sc_end(s);
    }
    if (strcmp(n, "left_side") == 0 || strcmp(n, "unit_diagonal") == 0 || strcmp(n, "transpose_a") == 0 ||
        (strcmp(n, "lower") == 0 && in->op == IR_OP_TRIANGULAR_SOLVE)) {
        if (!p->triangular_solve_options &&
            !(p->triangular_solve_options = W_NEW(w, Xla__TriangularSolveOptions)))
            return false;
        Xla__TriangularSolveOptions *o = p->triangular_solve_options;
        if (n[0] == 't')
            return SC_ENUM(s, proto_transpose, &o->transpose_a) && sc_end(s);
        if (!sc_bool(s, &b))
            return false;
        *(n[0] == 'l' && n[1] == 'e' ? &o->left_side : n[0] == 'u' ? &o->unit_diagonal : &o->lower) = b;
        return sc_end(s);
    }
    if (strcmp(n, "lower") == 0) {
        if (!(p->cholesky_options = W_NEW(w, Xla__CholeskyOptions)) || !sc_bool(s, &b))
            return false;
        p->cholesky_options->lower = b;
        return sc_end(s);
    }
    if (strcmp(n, "custom_call_has_side_effect") == 0 || strcmp(n, "is_host_transfer") == 0 ||
        strcmp(n, "is_composite") == 0) {
        if (!sc_bool(s, &b))
            return false;
        *(n[0] == 'c' ? &p->custom_call_has_side_effect : n[3] == 'h' ? &p->is_host_transfer : &p->is_composite) = b;
        return sc_end(s);
    }
    if (strcmp(n, "schedule") == 0)
        return SC_ENUM(s, proto_schedule, &p->custom_call_schedule) && sc_end(s);
    if (strcmp(n, "api_version") == 0)
        return SC_ENUM(s, proto_api_version, &p->custom_call_api_version) && sc_end(s);
    if (strcmp(n, "delta") == 0)
        return sc_int(s, &p->delta) && sc_end(s);
    if (strcmp(n, "result_accuracy") == 0) {
        char mode[32];
        if (!sc_want(s, '{') || !sc_word(s, mode, sizeof mode) || strcmp(mode, "mode") || !sc_want(s, '=') ||
            !sc_word(s, mode, sizeof mode) || strcmp(mode, "highest") || !sc_want(s, '}'))
            return w_fail(w, "result_accuracy: only {mode=highest} is written");
        if (!(p->result_accuracy = W_NEW(w, Xla__ResultAccuracy)))
            return false;
        p->result_accuracy->specs_case = XLA__RESULT_ACCURACY__SPECS_MODE;
        p->result_accuracy->mode = 1;
        return sc_end(s);
    }
    if (strcmp(n, "parameter_replication") == 0) {
        Xla__ParameterReplication *r2 = W_NEW(w, Xla__ParameterReplication);
        if (!r2 || !sc_want(s, '{'))
            return false;
        if (!sc_eat(s, '}')) {
            do {
                if (!sc_bool(s, &b))
                    return false;
                ARR_PUSH(w, r2->replicated_at_leaf_buffers, r2->n_replicated_at_leaf_buffers, b);
            } while (sc_eat(s, ','));
            if (!sc_want(s, '}'))
                return false;
        }
        p->parameter_replication = r2;
        return sc_end(s);
    }
    if (strcmp(n, "output_to_operand_aliasing") == 0) {
        if (!sc_want(s, '{'))
            return false;
        if (!sc_eat(s, '}')) {
            do {
                Xla__OutputOperandAliasing *a = W_NEW(w, Xla__OutputOperandAliasing);
                if (!a || !sc_shape_index(s, &a->output_shape_index, &a->n_output_shape_index) ||
                    !sc_want(s, ':') || !sc_want(s, '(') || !sc_int(s, &a->operand_index) || !sc_want(s, ',') ||
                    !sc_shape_index(s, &a->operand_shape_index, &a->n_operand_shape_index) || !sc_want(s, ')'))
                    return false;
                ARR_PUSH(w, p->output_operand_aliasing, p->n_output_operand_aliasing, a);
            } while (sc_eat(s, ','));
            if (!sc_want(s, '}'))
                return false;
        }
        return sc_end(s);
    }
    if (strcmp(n, "operand_layout_constraints") == 0) {
        p->constrain_layout = true;         /* how XLA marks a custom-call's operand layouts */
        if (!sc_want(s, '{'))
            return false;
        if (!sc_eat(s, '}')) {
            do {
                Xla__ShapeProto *sh = w_shape_text(w, s);
                if (!sh)
                    return false;
                ARR_PUSH(w, p->operand_shapes_with_layout, p->n_operand_shapes_with_layout, sh);
            } while (sc_eat(s, ','));
            if (!sc_want(s, '}'))
                return false;
        }
        return sc_end(s);
    }
    if (strcmp(n, "domain") == 0 && in->op == IR_OP_DOMAIN) {
        /* domain={kind="sharding", entry={...}, exit={...}}: XLA keeps the
         * text's exit= in domain_entry_sharding and entry= in
         * domain_exit_sharding (proto.c reads them the same way). */
        if (!sc_want(s, '{'))
            return false;
        do {
            char key[16];
            if (!sc_word(s, key, sizeof key) || !sc_want(s, '='))
                return sc_bad(s, "kind=, entry= or exit=");
            if (strcmp(key, "kind") == 0) {
                char *kind = sc_value(s);
                if (!kind)
                    return false;
                if (strcmp(kind, "sharding") != 0)
                    return w_fail(w, "domain: kind \"%s\": XLA serializes only sharding domains", kind);
            } else if (strcmp(key, "entry") == 0) {
                if (!(p->domain_exit_sharding = w_sharding(w, s, 0)))
                    return false;
            } else if (strcmp(key, "exit") == 0) {
                if (!(p->domain_entry_sharding = w_sharding(w, s, 0)))
                    return false;
            } else {
                return w_fail(w, "domain: unknown field %s", key);
            }
        } while (sc_eat(s, ','));
        return sc_want(s, '}') && sc_end(s);
    }
    return w_fail(w, "the attribute %s=%.60s has no HloInstructionProto field hlocheck writes", n, r->value);
}

static Xla__ReplicaGroup *w_group(Writer *w, const int64_t *ids, int n)
{
    Xla__ReplicaGroup *g = W_NEW(w, Xla__ReplicaGroup);
    if (!g)
        return NULL;
    g->n_replica_ids = (size_t)n;
    g->replica_ids = copy_ints(w, ids, (size_t)n);
    return g->replica_ids ? g : NULL;
}

static bool w_replica_groups(Writer *w, Xla__HloInstructionProto *p, const IrReplicaGroups *g)
{
    if (g->form == IR_GROUPS_NONE)
        return true;
    if (g->form == IR_GROUPS_MESH)
        return w_fail(w, "replica groups given as mesh axes are not written (hlocheck does not read them from "
                         "a proto either)");
    if (g->form == IR_GROUPS_IOTA) {
        /* iota_collective_device_list (field 92), as jaxlib's XLA reads it. */
        Xla__IotaReplicaGroupListProto *io = W_NEW(w, Xla__IotaReplicaGroupListProto);
        if (!io)
            return false;
        io->num_replica_groups = g->iota_groups;
        io->num_devices_per_group = g->iota_size;
        io->n_iota_reshape_dims = (size_t)g->n_iota_dims;
        io->iota_reshape_dims = copy_ints(w, g->iota_dims, io->n_iota_reshape_dims);
        io->n_iota_transpose_perm = io->n_iota_reshape_dims;
        io->iota_transpose_perm = w_alloc(w, io->n_iota_transpose_perm, sizeof *io->iota_transpose_perm);
        if (!io->iota_reshape_dims || !io->iota_transpose_perm)
            return false;
        for (int i = 0; i < g->n_iota_dims; i++)
            io->iota_transpose_perm[i] = (int32_t)(g->iota_perm ? g->iota_perm[i] : i);
        p->iota_collective_device_list = io;
        return true;
    }
    p->n_replica_groups = (size_t)g->n_groups;
    p->replica_groups = w_alloc(w, p->n_replica_groups, sizeof *p->replica_groups);
    if (!p->replica_groups)
        return false;
    for (int i = 0; i < g->n_groups; i++)
        if (!(p->replica_groups[i] = w_group(w, g->groups[i], g->group_sizes[i])))
            return false;
    return true;
}

static const IrIntList *list_of(const IrInstr *in, IrListAttr k)
{
    return in->lists[k].present ? &in->lists[k] : NULL;
}

/* A list attribute into a repeated field (empty when absent). */
static bool put_list(Writer *w, const IrInstr *in, IrListAttr k, int64_t **v, size_t *n)
{
    const IrIntList *l = list_of(in, k);
    *n = l ? (size_t)l->n : 0;
    *v = copy_ints(w, l ? l->v : NULL, *n);
    return *v != NULL;
}

static bool any_list(const IrInstr *in, const IrListAttr *ks, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (list_of(in, ks[i]))
            return true;
    return false;
}

static bool w_dimension_numbers(Writer *w, Xla__HloInstructionProto *p, const IrInstr *in)
{
    static const IrListAttr dot[] = { IR_LIST_LHS_BATCH_DIMS, IR_LIST_LHS_CONTRACTING_DIMS, IR_LIST_RHS_BATCH_DIMS,
                                      IR_LIST_RHS_CONTRACTING_DIMS };
    if (any_list(in, dot, 4)) {
        Xla__DotDimensionNumbers *d = W_NEW(w, Xla__DotDimensionNumbers);
        if (!d || !put_list(w, in, IR_LIST_LHS_BATCH_DIMS, &d->lhs_batch_dimensions, &d->n_lhs_batch_dimensions) ||
            !put_list(w, in, IR_LIST_LHS_CONTRACTING_DIMS, &d->lhs_contracting_dimensions,
                      &d->n_lhs_contracting_dimensions) ||
            !put_list(w, in, IR_LIST_RHS_BATCH_DIMS, &d->rhs_batch_dimensions, &d->n_rhs_batch_dimensions) ||
            !put_list(w, in, IR_LIST_RHS_CONTRACTING_DIMS, &d->rhs_contracting_dimensions,
                      &d->n_rhs_contracting_dimensions))
            return false;
        p->dot_dimension_numbers = d;
    }
    if (in->op == IR_OP_GATHER) {
        Xla__GatherDimensionNumbers *g = W_NEW(w, Xla__GatherDimensionNumbers);
        if (!g || !put_list(w, in, IR_LIST_OFFSET_DIMS, &g->offset_dims, &g->n_offset_dims) ||
            !put_list(w, in, IR_LIST_COLLAPSED_SLICE_DIMS, &g->collapsed_slice_dims, &g->n_collapsed_slice_dims) ||
            !put_list(w, in, IR_LIST_START_INDEX_MAP, &g->start_index_map, &g->n_start_index_map) ||
            !put_list(w, in, IR_LIST_OPERAND_BATCHING_DIMS, &g->operand_batching_dims, &g->n_operand_batching_dims) ||
            !put_list(w, in, IR_LIST_START_INDICES_BATCHING_DIMS, &g->start_indices_batching_dims,
                      &g->n_start_indices_batching_dims) ||
            !put_list(w, in, IR_LIST_SLICE_SIZES, &p->gather_slice_sizes, &p->n_gather_slice_sizes))
            return false;
        g->index_vector_dim = in->ints[IR_INT_INDEX_VECTOR_DIM].v;
        p->gather_dimension_numbers = g;
    }
    if (in->op == IR_OP_SCATTER) {
        Xla__ScatterDimensionNumbers *s = W_NEW(w, Xla__ScatterDimensionNumbers);
        if (!s ||
            !put_list(w, in, IR_LIST_UPDATE_WINDOW_DIMS, &s->update_window_dims, &s->n_update_window_dims) ||
            !put_list(w, in, IR_LIST_INSERTED_WINDOW_DIMS, &s->inserted_window_dims, &s->n_inserted_window_dims) ||
            !put_list(w, in, IR_LIST_SCATTER_DIMS_TO_OPERAND_DIMS, &s->scatter_dims_to_operand_dims,
                      &s->n_scatter_dims_to_operand_dims) ||
            !put_list(w, in, IR_LIST_INPUT_BATCHING_DIMS, &s->input_batching_dims, &s->n_input_batching_dims) ||
            !put_list(w, in, IR_LIST_SCATTER_INDICES_BATCHING_DIMS, &s->scatter_indices_batching_dims,
                      &s->n_scatter_indices_batching_dims))
            return false;
        s->index_vector_dim = in->ints[IR_INT_INDEX_VECTOR_DIM].v;
        p->scatter_dimension_numbers = s;
    }
    return true;
}

static bool w_window_and_conv(Writer *w, Xla__HloInstructionProto *p, const IrInstr *in)
{
    const IrInstrInfo *f = in->info;
    if (in->op == IR_OP_CONVOLUTION && !(f->has_window && f->n_window > 0)) {
        /* A convolution with no spatial dimensions: XLA wants the (empty) window. */
        if (!(p->window = W_NEW(w, Xla__Window)))
            return false;
    }
    if (f->has_window && f->n_window > 0) {
        Xla__Window *win = W_NEW(w, Xla__Window);
        if (!win)
            return false;
        win->n_dimensions = (size_t)f->n_window;
        win->dimensions = w_alloc(w, win->n_dimensions, sizeof *win->dimensions);
        if (!win->dimensions)
            return false;
        for (int i = 0; i < f->n_window; i++) {
            Xla__WindowDimension *d = W_NEW(w, Xla__WindowDimension);
            if (!d)
                return false;
            const IrWindowDim *x = &f->window[i];
            d->size = x->size;
            d->stride = x->stride;
            d->padding_low = x->pad_lo;
            d->padding_high = x->pad_hi;
            d->window_dilation = x->rhs_dilate;
            d->base_dilation = x->lhs_dilate;
            d->window_reversal = x->reversal;
            win->dimensions[i] = d;
        }
        p->window = win;
    }
    if (f->conv_dims) {
        const IrConvDims *c = f->conv_dims;
        Xla__ConvolutionDimensionNumbers *d = W_NEW(w, Xla__ConvolutionDimensionNumbers);
        if (!d)
            return false;
        size_t ns = (size_t)c->n_spatial;
        d->input_batch_dimension = c->input_batch;
        d->input_feature_dimension = c->input_feature;
        d->kernel_input_feature_dimension = c->kernel_input_feature;
        d->kernel_output_feature_dimension = c->kernel_output_feature;
        d->output_batch_dimension = c->output_batch;
        d->output_feature_dimension = c->output_feature;
        d->n_input_spatial_dimensions = d->n_kernel_spatial_dimensions = d->n_output_spatial_dimensions = ns;
        d->input_spatial_dimensions = copy_ints(w, c->input_spatial, ns);
        d->kernel_spatial_dimensions = copy_ints(w, c->kernel_spatial, ns);
        d->output_spatial_dimensions = copy_ints(w, c->output_spatial, ns);
        if (!d->input_spatial_dimensions || !d->kernel_spatial_dimensions || !d->output_spatial_dimensions)
            return false;
        p->convolution_dimension_numbers = d;
    }
    return true;
}

static bool w_structured(Writer *w, Xla__HloInstructionProto *p, const IrInstr *in)
{
    const IrInstrInfo *f = in->info;
    if (f->n_slice > 0) {
        p->n_slice_dimensions = (size_t)f->n_slice;
        p->slice_dimensions = w_alloc(w, p->n_slice_dimensions, sizeof *p->slice_dimensions);
        for (int i = 0; p->slice_dimensions && i < f->n_slice; i++) {
            Xla__HloInstructionProto__SliceDimensions *d = W_NEW(w, Xla__HloInstructionProto__SliceDimensions);
            if (!d)
                return false;
            d->start = f->slice[i].start;
            d->limit = f->slice[i].limit;
            d->stride = f->slice[i].stride;
            p->slice_dimensions[i] = d;
        }
        if (!p->slice_dimensions)
            return false;
    }
    if (f->has_padding) {
        Xla__PaddingConfig *pc = W_NEW(w, Xla__PaddingConfig);
        if (!pc)
            return false;
        pc->n_dimensions = (size_t)f->n_padding;
        pc->dimensions = w_alloc(w, pc->n_dimensions, sizeof *pc->dimensions);
        for (int i = 0; pc->dimensions && i < f->n_padding; i++) {
            Xla__PaddingConfig__PaddingConfigDimension *d = W_NEW(w, Xla__PaddingConfig__PaddingConfigDimension);
            if (!d)
                return false;
            d->edge_padding_low = f->padding[i].lo;
            d->edge_padding_high = f->padding[i].hi;
            d->interior_padding = f->padding[i].interior;
            pc->dimensions[i] = d;
        }
        if (!pc->dimensions)
            return false;
        p->padding_config = pc;
    }
    if (!w_window_and_conv(w, p, in) || !w_replica_groups(w, p, &f->replica_groups))
        return false;
    if (f->has_source_target_pairs) {
        p->n_source_target_pairs = (size_t)f->n_source_target_pairs;
        p->source_target_pairs = w_alloc(w, p->n_source_target_pairs, sizeof *p->source_target_pairs);
        for (int i = 0; p->source_target_pairs && i < f->n_source_target_pairs; i++) {
            Xla__SourceTarget *st = W_NEW(w, Xla__SourceTarget);
            if (!st)
                return false;
            st->source = f->source_target_pairs[i][0];
            st->target = f->source_target_pairs[i][1];
            p->source_target_pairs[i] = st;
        }
        if (!p->source_target_pairs)
            return false;
    }
    if (f->direction != IR_CMP_NONE) {
        p->comparison_direction = (char *)direction_names[f->direction];
        IrCompareType t = f->compare_type;
        if (t == IR_CMPT_DEFAULT && in->n_operands > 0) {
            /* XLA always writes the type: the default of the operand type. */
            IrElemType et = in->operands[0]->shape->type;
            t = ir_type_is_float(et) || ir_type_is_complex(et) ? IR_CMPT_FLOAT
                : ir_type_is_signed_int(et) ? IR_CMPT_SIGNED : IR_CMPT_UNSIGNED;
        }
        if (t != IR_CMPT_DEFAULT)
            p->comparison_type = (char *)compare_type_names[t];
    }
    return true;
}

/* called_computation_ids in the order XLA keeps them for each opcode
 * (proto.c's emit_called reads them in this order). */
static bool w_called(Writer *w, Xla__HloInstructionProto *p, const IrInstr *in)
{
    IrComputation *const *c = in->info->comps;
    IrComputation *order[IR_COMP_COUNT];
    size_t n = 0;
    static const IrCompAttr fixed[] = { IR_COMP_BODY, IR_COMP_CONDITION, IR_COMP_TRUE_COMPUTATION,
                                        IR_COMP_FALSE_COMPUTATION, IR_COMP_SELECT, IR_COMP_SCATTER,
                                        IR_COMP_TO_APPLY, IR_COMP_CALLS };
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        if (c[fixed[k]])
            order[n++] = c[fixed[k]];
    for (size_t k = 0; k < n; k++)
        ARR_PUSH(w, p->called_computation_ids, p->n_called_computation_ids, comp_id(order[k]));
    for (int k = 0; k < in->info->n_branches; k++)
        ARR_PUSH(w, p->called_computation_ids, p->n_called_computation_ids, comp_id(in->info->branches[k]));
    return !w->failed;
}

/* Instruction names are unique within a computation in text, but XLA
 * wants them unique in the module of a proto: a name taken by an earlier
 * computation becomes name.1, name.2, ... (the first one free). */
static char *unique_name(Writer *w, const char *name)
{
    char *taken = (char *)name;
    if (ir_namemap_get(w->names, name, strlen(name))) {
        size_t n = strlen(name) + 24;
        taken = w_alloc(w, n, 1);
        for (long k = 1; taken; k++) {
            snprintf(taken, n, "%s.%ld", name, k);
            if (!ir_namemap_get(w->names, taken, strlen(taken)))
                break;
        }
        w->renamed++;
    }
    if (taken && !ir_namemap_put(w->names, taken, taken) && !w->failed) {
        w->failed = true;
        error_nomem(w->err, where(w));
    }
    return w->failed ? NULL : taken;
}

/* An instruction's name, opcode, id, shape, operands and control
 * predecessors (in's), without its attributes. */
static Xla__HloInstructionProto *w_head(Writer *w, const IrInstr *in, const char *name, const char *opcode,
                                        int64_t id, const IrShape *shape)
{
    w->at = in;
    w->attr = "";
    Xla__HloInstructionProto *p = W_NEW(w, Xla__HloInstructionProto);
    if (!p)
        return NULL;
    p->name = unique_name(w, name);
    p->opcode = (char *)opcode;
    p->id = id;
    if (!p->name || !(p->shape = w_shape(w, shape)))
        return NULL;
    p->n_operand_ids = (size_t)in->n_operands;
    p->operand_ids = w_alloc(w, p->n_operand_ids, sizeof *p->operand_ids);
    p->n_control_predecessor_ids = (size_t)in->n_control_predecessors;
    p->control_predecessor_ids = w_alloc(w, p->n_control_predecessor_ids, sizeof *p->control_predecessor_ids);
    if (!p->operand_ids || !p->control_predecessor_ids)
        return NULL;
    for (int k = 0; k < in->n_operands; k++)
        p->operand_ids[k] = in->operands[k]->id;
    for (int k = 0; k < in->n_control_predecessors; k++)
        p->control_predecessor_ids[k] = in->control_predecessors[k]->id;
    return p;
}

/* Every attribute of in into p. */
static bool w_attrs(Writer *w, Xla__HloInstructionProto *p, const IrInstr *in)
{
    const IrInstrInfo *f = in->info;
    if (in->op == IR_OP_PARAMETER)
        p->parameter_number = f->parameter_number;
    if (in->op == IR_OP_CONSTANT && !(p->literal = w_literal(w, f->literal, in->shape)))
        return false;

    /* Typed attributes. */
    if (!put_list(w, in, IR_LIST_DIMENSIONS, &p->dimensions, &p->n_dimensions) ||
        !put_list(w, in, IR_LIST_DYNAMIC_SLICE_SIZES, &p->dynamic_slice_sizes, &p->n_dynamic_slice_sizes) ||
        !put_list(w, in, IR_LIST_FFT_LENGTH, &p->fft_length, &p->n_fft_length) ||
        !w_dimension_numbers(w, p, in))
        return false;
    const IrOptInt *iv = in->ints;
    if (iv[IR_INT_IOTA_DIMENSION].present) {
        if (!(p->dimensions = copy_ints(w, &iv[IR_INT_IOTA_DIMENSION].v, 1)))
            return false;
        p->n_dimensions = 1;
    }
    if (iv[IR_INT_CHANNEL_ID].present) {
        /* A proto's 0 is no channel id at all (XLA reads it so), and a
         * collective with a channel id spans other devices than one without. */
        if (iv[IR_INT_CHANNEL_ID].v <= 0)
            return w_fail(w, "channel_id=%" PRId64 ": a proto has no form for it (XLA reads 0 as no channel id, "
                             "which changes the devices a collective spans)", iv[IR_INT_CHANNEL_ID].v);
        p->channel_id = iv[IR_INT_CHANNEL_ID].v;
    }
    p->tuple_index = iv[IR_INT_INDEX].v;
    p->exponent_bits = (int32_t)iv[IR_INT_EXPONENT_BITS].v;
    p->mantissa_bits = (int32_t)iv[IR_INT_MANTISSA_BITS].v;
    p->k = iv[IR_INT_K].v;
    p->feature_index = iv[IR_INT_FEATURE_INDEX].v;
    if (in->op == IR_OP_CUSTOM_CALL)
        p->custom_call_api_version = 1;     /* API_VERSION_ORIGINAL unless api_version= says otherwise */
    if (in->op == IR_OP_CONVOLUTION) {
        p->feature_group_count = iv[IR_INT_FEATURE_GROUP_COUNT].present ? iv[IR_INT_FEATURE_GROUP_COUNT].v : 1;
        p->batch_group_count = iv[IR_INT_BATCH_GROUP_COUNT].present ? iv[IR_INT_BATCH_GROUP_COUNT].v : 1;
    }
    p->constrain_layout = f->bools[IR_BOOL_CONSTRAIN_LAYOUT];
    p->use_global_device_ids = f->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS];
    p->indices_are_sorted = f->bools[IR_BOOL_INDICES_ARE_SORTED];
    p->unique_indices = f->bools[IR_BOOL_UNIQUE_INDICES];
    p->is_stable = f->bools[IR_BOOL_IS_STABLE];
    p->largest = f->bools[IR_BOOL_LARGEST];
    w->attr = "kind";
    if (f->words[IR_WORD_FUSION_KIND])
        p->fusion_kind = (char *)f->words[IR_WORD_FUSION_KIND];
    if (f->words[IR_WORD_CUSTOM_CALL_TARGET]) {
        const char *t = f->words[IR_WORD_CUSTOM_CALL_TARGET];
        size_t len = 0;
        w->attr = "custom_call_target";
        if (!(p->custom_call_target = utf8_or_fail(w, unescape(w, t, strlen(t), &len), len)))
            return false;
    }
    w->attr = "distribution";
    if (f->words[IR_WORD_DISTRIBUTION]) {
        Scan s = { w, f->words[IR_WORD_DISTRIBUTION] };
        if (!SC_ENUM(&s, proto_distribution, &p->distribution))
            return false;
    }
    w->attr = "fft_type";
    if (f->words[IR_WORD_FFT_TYPE]) {
        Scan s = { w, f->words[IR_WORD_FFT_TYPE] };
        if (!SC_ENUM(&s, proto_fft_type, &p->fft_type))
            return false;
    }
    if (!w_structured(w, p, in) || !w_called(w, p, in))
        return false;
    for (int k = 0; k < f->n_raw_attrs; k++)
        if (!w_raw_attr(w, p, in, &f->raw_attrs[k]))
            return false;
    return true;
}

/* XLA's short async forms (reduce-scatter-start(...), -update, -done)
 * exist only in its text: XLA's parser makes the wrapped computation, and
 * a proto holds that.  The start becomes async-start calling a new
 * computation (async_wrapped: one parameter per operand, the op with the
 * start's attributes at its root, as XLA makes it); -update and -done
 * become async-update and async-done. */
static Xla__HloInstructionProto *w_async_form(Writer *w, const IrInstr *in)
{
    const IrInstrInfo *f = in->info;
    if (f->async_is_done || f->async_is_update) {
        Xla__HloInstructionProto *p = w_head(w, in, in->name, f->async_is_done ? "async-done" : "async-update",
                                             in->id, in->shape);
        for (int k = 0; p && k < f->n_raw_attrs; k++)
            if (!w_raw_attr(w, p, in, &f->raw_attrs[k]))
                return NULL;
        return p;
    }
    const IrShape *s = in->shape;
    if (s->type != IR_TYPE_TUPLE || s->n_elements < 2)
        return w_fail(w, "%s-start has the shape %s, not (operands, result, ...)", ir_opcode_name(f->async_wrapped),
                      ir_shape_str(s)), NULL;
    Xla__HloInstructionProto *start = w_head(w, in, in->name, "async-start", in->id, s);
    Xla__HloComputationProto *c = W_NEW(w, Xla__HloComputationProto);
    Xla__ProgramShapeProto *ps = W_NEW(w, Xla__ProgramShapeProto);
    if (!start || !c || !ps)
        return NULL;
    c->id = w->next_computation_id++;
    char name[48];
    snprintf(name, sizeof name, "async_wrapped");
    for (int k = 1; ir_namemap_get(w->computation_names, name, strlen(name)); k++)
        snprintf(name, sizeof name, "async_wrapped.%d", k);
    c->name = arena_strdup(w->a, name);
    if (!c->name || !ir_namemap_put(w->computation_names, c->name, c))
        return w_fail(w, "out of memory"), NULL;
    for (int k = 0; k < in->n_operands; k++) {
        Xla__HloInstructionProto *param = W_NEW(w, Xla__HloInstructionProto);
        if (!param)
            return NULL;
        param->name = unique_name(w, "async_param");
        param->opcode = "parameter";
        param->parameter_number = k;
        param->id = w->next_instr_id++;
        if (!param->name || !(param->shape = w_shape(w, in->operands[k]->shape)))
            return NULL;
        ARR_PUSH(w, c->instructions, c->n_instructions, param);
        ARR_PUSH(w, ps->parameters, ps->n_parameters, param->shape);
        ARR_PUSH(w, ps->parameter_names, ps->n_parameter_names, param->name);
    }
    Xla__HloInstructionProto *op = w_head(w, in, ir_opcode_name(f->async_wrapped), ir_opcode_name(f->async_wrapped),
                                          w->next_instr_id++, s->elements[1]);
    if (!op || !w_attrs(w, op, in))
        return NULL;
    for (int k = 0; k < in->n_operands; k++)
        op->operand_ids[k] = c->instructions[k]->id;
    op->n_control_predecessor_ids = 0;
    ARR_PUSH(w, c->instructions, c->n_instructions, op);
    c->root_id = op->id;
    ps->result = op->shape;
    c->program_shape = ps;
    ARR_PUSH(w, start->called_computation_ids, start->n_called_computation_ids, c->id);
    ARR_PUSH(w, w->wrapped, w->n_wrapped, c);
    return w->failed ? NULL : start;
}

static Xla__HloInstructionProto *w_instr(Writer *w, const IrInstr *in)
{
    IrOpcode wrapped = in->info->async_wrapped;
    if (wrapped != IR_OP_COUNT && wrapped != IR_OP_ASYNC_START)
        return w_async_form(w, in);
    Xla__HloInstructionProto *p = w_head(w, in, in->name, ir_opcode_name(in->op), in->id, in->shape);
    return p && w_attrs(w, p, in) ? p : NULL;
}

/* --- computations and the module ------------------------------------------ */

/* The program shape of c; parameter names as written in cp (which may
 * have renamed them). */
static Xla__ProgramShapeProto *w_signature(Writer *w, const IrComputation *c, const Xla__HloComputationProto *cp)
{
    Xla__ProgramShapeProto *ps = W_NEW(w, Xla__ProgramShapeProto);
    if (!ps)
        return NULL;
    ps->n_parameters = ps->n_parameter_names = (size_t)c->n_params;
    ps->parameters = w_alloc(w, ps->n_parameters, sizeof *ps->parameters);
    ps->parameter_names = w_alloc(w, ps->n_parameters, sizeof *ps->parameter_names);
    if (!ps->parameters || !ps->parameter_names)
        return NULL;
    for (int k = 0; k < c->n_params; k++) {
        if (!c->params[k])
            return w_fail(w, "computation %s has no parameter(%d)", c->name, k), NULL;
        ps->parameter_names[k] = (char *)c->params[k]->name;
        for (size_t i = 0; i < cp->n_instructions; i++)
            if (cp->instructions[i]->id == c->params[k]->id)
                ps->parameter_names[k] = cp->instructions[i]->name;
        if (!(ps->parameters[k] = w_shape(w, c->params[k]->shape)))
            return NULL;
    }
    if (!c->root || !(ps->result = w_shape(w, c->root->shape)))
        return NULL;
    return ps;
}

static Xla__HloComputationProto *w_computation(Writer *w, const IrComputation *c)
{
    Xla__HloComputationProto *p = W_NEW(w, Xla__HloComputationProto);
    if (!p)
        return NULL;
    p->name = (char *)c->name;
    p->id = comp_id(c);
    if (!c->root)
        return w_fail(w, "computation %s has no root", c->name), NULL;
    p->root_id = c->root->id;
    if (c->execution_thread) {
        Scan s = { w, c->execution_thread };
        w->attr = "execution_thread";
        if (!(p->execution_thread = sc_string(&s, NULL)))
            return NULL;
    }
    for (int i = 0; i < c->n_instrs; i++) {
        if (c->instrs[i]->dead)
            continue;
        Xla__HloInstructionProto *in = w_instr(w, c->instrs[i]);
        if (!in)
            return NULL;
        ARR_PUSH(w, p->instructions, p->n_instructions, in);
    }
    w->at = NULL;
    if (!(p->program_shape = w_signature(w, c, p)))
        return NULL;
    return w->failed ? NULL : p;
}

/* The schedule: each computation but fusion bodies (the wrapped ones of
 * short async forms included, as XLA has them), in instruction order. */
static Xla__HloScheduleProto *w_schedule(Writer *w, Xla__HloModuleProto *mp)
{
    const IrModule *m = w->m;
    int max_id = ir_module_max_computation_id(m);
    char *fused = w_alloc(w, (size_t)max_id + 1, 1);
    Xla__HloScheduleProto *s = W_NEW(w, Xla__HloScheduleProto);
    if (!fused || !s)
        return NULL;
    for (int k = 0; k < m->n_computations; k++)
        for (int i = 0; i < m->computations[k]->n_instrs; i++) {
            const IrInstr *in = m->computations[k]->instrs[i];
            if (in->op == IR_OP_FUSION && in->info->comps[IR_COMP_CALLS])
                fused[in->info->comps[IR_COMP_CALLS]->id] = 1;
        }
    for (size_t k = 0; k < mp->n_computations; k++) {
        const Xla__HloComputationProto *c = mp->computations[k];
        if (c->id <= max_id && fused[c->id])
            continue;
        Xla__HloScheduleProto__SequencesEntry *e = W_NEW(w, Xla__HloScheduleProto__SequencesEntry);
        Xla__HloScheduleProto__InstructionSequence *q = W_NEW(w, Xla__HloScheduleProto__InstructionSequence);
        if (!e || !q)
            return NULL;
        e->key = c->id;
        e->value = q;
        q->n_instruction_ids = c->n_instructions;
        q->instruction_ids = w_alloc(w, q->n_instruction_ids, sizeof *q->instruction_ids);
        if (!q->instruction_ids)
            return NULL;
        for (size_t i = 0; i < q->n_instruction_ids; i++)
            q->instruction_ids[i] = c->instructions[i]->id;
        ARR_PUSH(w, s->sequences, s->n_sequences, e);
    }
    return s;
}

/* entry_computation_layout={(f32[2]{0}, s32[])->f32[2]{0}} */
static Xla__ProgramShapeProto *w_entry_layout(Writer *w, const char *text)
{
    Scan sc = { w, text }, *s = &sc;
    Xla__ProgramShapeProto *ps = W_NEW(w, Xla__ProgramShapeProto);
    if (!ps || !sc_want(s, '{') || !sc_want(s, '('))
        return NULL;
    if (!sc_eat(s, ')')) {
        do {
            Xla__ShapeProto *sh = w_shape_text(w, s);
            if (!sh)
                return NULL;
            ARR_PUSH(w, ps->parameters, ps->n_parameters, sh);
        } while (sc_eat(s, ','));
        if (!sc_want(s, ')'))
            return NULL;
    }
    if (!sc_want(s, '-') || !sc_want(s, '>') || !(ps->result = w_shape_text(w, s)) || !sc_want(s, '}') ||
        !sc_end(s))
        return NULL;
    return ps;
}

/* input_output_alias={ {0}: (0, {}, may-alias), ... } */
static Xla__HloInputOutputAliasProto *w_io_alias(Writer *w, const char *text)
{
    Scan sc = { w, text }, *s = &sc;
    Xla__HloInputOutputAliasProto *io = W_NEW(w, Xla__HloInputOutputAliasProto);
    if (!io || !sc_want(s, '{'))
        return NULL;
    if (sc_eat(s, '}'))
        return io;
    do {
        Xla__HloInputOutputAliasProto__AliasEntryProto *e = W_NEW(w, Xla__HloInputOutputAliasProto__AliasEntryProto);
        if (!e || !sc_shape_index(s, &e->output_shape_index, &e->n_output_shape_index) || !sc_want(s, ':') ||
            !sc_want(s, '(') || !sc_int(s, &e->parameter_number) || !sc_want(s, ',') ||
            !sc_shape_index(s, &e->parameter_shape_index, &e->n_parameter_shape_index))
            return NULL;
        e->kind = 1;                                /* MAY_ALIAS, the text's default */
        if (sc_eat(s, ',')) {
            char kind[16];
            if (!sc_word(s, kind, sizeof kind) || (strcmp(kind, "may-alias") && strcmp(kind, "must-alias"))) {
                sc_bad(s, "may-alias or must-alias");
                return NULL;
            }
            e->kind = kind[1] == 'u' ? 2 : 1;
        }
        if (!sc_want(s, ')'))
            return NULL;
        ARR_PUSH(w, io->entries, io->n_entries, e);
    } while (sc_eat(s, ','));
    return sc_want(s, '}') && sc_end(s) ? io : NULL;
}

/* buffer_donor={ (0, {}), ... } */
static Xla__HloBufferDonorProto *w_buffer_donor(Writer *w, const char *text)
{
    Scan sc = { w, text }, *s = &sc;
    Xla__HloBufferDonorProto *bd = W_NEW(w, Xla__HloBufferDonorProto);
    if (!bd || !sc_want(s, '{'))
        return NULL;
    if (sc_eat(s, '}'))
        return bd;
    do {
        Xla__HloBufferDonorProto__BufferDonorEntryProto *e =
            W_NEW(w, Xla__HloBufferDonorProto__BufferDonorEntryProto);
        if (!e || !sc_want(s, '(') || !sc_int(s, &e->parameter_number) || !sc_want(s, ',') ||
            !sc_shape_index(s, &e->parameter_shape_index, &e->n_parameter_shape_index) || !sc_want(s, ')'))
            return NULL;
        ARR_PUSH(w, bd->entries, bd->n_entries, e);
    } while (sc_eat(s, ','));
    return sc_want(s, '}') && sc_end(s) ? bd : NULL;
}

/* replica_count and num_partitions: a DeviceAssignmentProto, device
 * r * partitions + p for replica r and partition p (XLA's default). */
static Xla__DeviceAssignmentProto *w_devices(Writer *w, int64_t replicas, int64_t partitions)
{
    Xla__DeviceAssignmentProto *d = W_NEW(w, Xla__DeviceAssignmentProto);
    if (!d)
        return NULL;
    d->replica_count = (int32_t)replicas;
    d->computation_count = (int32_t)partitions;
    d->n_computation_devices = (size_t)partitions;
    d->computation_devices = w_alloc(w, (size_t)partitions, sizeof *d->computation_devices);
    if (!d->computation_devices)
        return NULL;
    for (int64_t c = 0; c < partitions; c++) {
        Xla__DeviceAssignmentProto__ComputationDevice *cd = W_NEW(w, Xla__DeviceAssignmentProto__ComputationDevice);
        if (!cd || !(cd->replica_device_ids = w_alloc(w, (size_t)replicas, sizeof *cd->replica_device_ids)))
            return NULL;
        cd->n_replica_device_ids = (size_t)replicas;
        for (int64_t r = 0; r < replicas; r++)
            cd->replica_device_ids[r] = r * partitions + c;
        d->computation_devices[c] = cd;
    }
    return d;
}

/* FileNames / FunctionNames / FileLocations / StackFrames, as proto.c
 * writes them: numbered lines of a string or a {key=int ...} record. */
static Xla__StackFrameIndexProto *w_stack_frames(Writer *w, const char *text)
{
    Xla__StackFrameIndexProto *sf = W_NEW(w, Xla__StackFrameIndexProto);
    Scan sc = { w, text }, *s = &sc;
    w->attr = "stack frames";
    int section = -1;
    static const char *const sections[] = { "FileNames", "FunctionNames", "FileLocations", "StackFrames" };
    while (sf && !sc_peek(s, 0)) {
        char word[64];
        if (sc_word(s, word, sizeof word) && NAME_INDEX(sections, word) >= 0 && !(word[0] >= '0' && word[0] <= '9')) {
            section = NAME_INDEX(sections, word);
            continue;
        }
        if (section < 0 || !(word[0] >= '0' && word[0] <= '9'))
            return sc_bad(s, "a numbered stack-frame line"), NULL;
        if (section < 2) {
            char *str = sc_string(s, NULL);
            if (!str)
                return NULL;
            if (section == 0)
                ARR_PUSH(w, sf->file_names, sf->n_file_names, str);
            else
                ARR_PUSH(w, sf->function_names, sf->n_function_names, str);
            continue;
        }
        Xla__StackFrameIndexProto__FileLocation *fl = section == 2 ? W_NEW(w, Xla__StackFrameIndexProto__FileLocation) : NULL;
        Xla__StackFrameIndexProto__StackFrame *fr = section == 3 ? W_NEW(w, Xla__StackFrameIndexProto__StackFrame) : NULL;
        if (!fl && !fr)
            return NULL;
        if (!sc_want(s, '{'))
            return NULL;
        while (!sc_eat(s, '}')) {
            char key[64];
            int64_t v;
            if (!sc_word(s, key, sizeof key) || !sc_want(s, '=') || !sc_int(s, &v))
                return sc_bad(s, "key=integer"), NULL;
            int32_t *slot = fl ? (strcmp(key, "file_name_id") == 0 ? &fl->file_name_id
                                  : strcmp(key, "function_name_id") == 0 ? &fl->function_name_id
                                  : strcmp(key, "line") == 0 ? &fl->line
                                  : strcmp(key, "end_line") == 0 ? &fl->end_line
                                  : strcmp(key, "column") == 0 ? &fl->column
                                  : strcmp(key, "end_column") == 0 ? &fl->end_column : NULL)
                               : (strcmp(key, "file_location_id") == 0 ? &fr->file_location_id
                                  : strcmp(key, "parent_frame_id") == 0 ? &fr->parent_frame_id : NULL);
            if (slot)
                *slot = (int32_t)v;
            else
                note_item(w, "not carried: stack frame %s", key);
        }
        if (fl)
            ARR_PUSH(w, sf->file_locations, sf->n_file_locations, fl);
        else
            ARR_PUSH(w, sf->stack_frames, sf->n_stack_frames, fr);
    }
    return sf;
}

static bool w_header(Writer *w, Xla__HloModuleProto *mp)
{
    const IrModule *m = w->m;
    for (int k = 0; k < m->n_header_attrs; k++) {
        const IrRawAttr *r = &m->header_attrs[k];
        w->attr = r->name;
        if (strcmp(r->name, "entry_computation_layout") == 0) {
            if (!(mp->host_program_shape = w_entry_layout(w, r->value)))
                return false;
        } else if (strcmp(r->name, "input_output_alias") == 0) {
            if (!(mp->input_output_alias = w_io_alias(w, r->value)))
                return false;
        } else if (strcmp(r->name, "buffer_donor") == 0) {
            if (!(mp->buffer_donor = w_buffer_donor(w, r->value)))
                return false;
        } else if (strcmp(r->name, "frontend_attributes") == 0) {
            Scan s = { w, r->value };
            if (!(mp->frontend_attributes = w_frontend_attributes(w, &s)) || !sc_end(&s))
                return false;
        } else {
            /* Module config options (allow_spmd_sharding_propagation_to_*,
             * ...): an HloModuleProto has no field for them. */
            note_item(w, "not carried: %s (module config, no HloModuleProto field)", r->name);
        }
    }
    const Xla__HloComputationProto *entry = NULL;
    for (size_t k = 0; k < mp->n_computations; k++)
        if (mp->computations[k]->id == mp->entry_computation_id)
            entry = mp->computations[k];
    if (!mp->host_program_shape) {
        /* No entry_computation_layout: the entry's parameters and root,
         * each with its own layout (the default where the text gives none). */
        Xla__ProgramShapeProto *ps = w_signature(w, m->entry, entry);
        if (!ps)
            return false;
        mp->host_program_shape = ps;
    } else {
        /* XLA wants a name for each parameter of a program shape. */
        Xla__ProgramShapeProto *ps = mp->host_program_shape;
        ps->n_parameter_names = ps->n_parameters;
        ps->parameter_names = w_alloc(w, ps->n_parameters, sizeof *ps->parameter_names);
        if (!ps->parameter_names)
            return false;
        for (size_t k = 0; k < ps->n_parameters; k++) {
            bool same = ps->n_parameters == entry->program_shape->n_parameters;
            char name[32];
            snprintf(name, sizeof name, "p%zu", k);
            ps->parameter_names[k] = same ? entry->program_shape->parameter_names[k] : arena_strdup(w->a, name);
            if (!ps->parameter_names[k])
                return false;
        }
    }
    if (m->replica_count.present || m->num_partitions.present) {
        int64_t r = m->replica_count.present ? m->replica_count.v : 1;
        int64_t p = m->num_partitions.present ? m->num_partitions.v : 1;
        if (!(mp->device_assignment = w_devices(w, r, p)))
            return false;
    }
    if (m->stack_frames && !(mp->stack_frame_index = w_stack_frames(w, m->stack_frames)))
        return false;
    return true;
}

bool ir_proto_write(StrBuf *b, const IrModule *m, StrBuf *note, Error *err)
{
    Writer w = { .m = m, .note = note, .err = err };
    if (!m->entry)
        return error_set(err, ERR_UNSUPPORTED, (IrLoc){ m->file, 0, 0 }, "the module has no entry computation");
    if (!(w.a = arena_new(1 << 16)))
        return error_nomem(err, (IrLoc){ m->file, 0, 0 });
    Xla__HloModuleProto *mp = W_NEW(&w, Xla__HloModuleProto);
    w.names = ir_namemap_new(w.a);
    w.computation_names = ir_namemap_new(w.a);
    bool ok = mp != NULL && w.names != NULL && w.computation_names != NULL;
    w.next_computation_id = (int64_t)ir_module_max_computation_id(m) + 1;
    for (int k = 0; ok && k < m->n_computations; k++) {
        const IrComputation *c = m->computations[k];
        ok = ir_namemap_put(w.computation_names, c->name, (void *)c) || ir_namemap_get(w.computation_names, c->name,
                                                                                        strlen(c->name));
        for (int i = 0; i < c->n_instrs; i++)
            if (c->instrs[i]->id >= w.next_instr_id)
                w.next_instr_id = (int64_t)c->instrs[i]->id + 1;
    }
    if (ok) {
        mp->name = (char *)(m->name ? m->name : "module");
        mp->entry_computation_name = (char *)m->entry->name;
        mp->entry_computation_id = comp_id(m->entry);
    }
    /* Callees before callers: the computations made for short async forms
     * go just before the computation that holds them. */
    for (int k = 0; ok && k < m->n_computations; k++) {
        Xla__HloComputationProto *c = w_computation(&w, m->computations[k]);
        ok = c != NULL;
        for (size_t i = 0; ok && i < w.n_wrapped; i++)
            ARR_PUSH(&w, mp->computations, mp->n_computations, w.wrapped[i]);
        w.n_wrapped = 0;
        w.wrapped = NULL;
        if (ok)
            ARR_PUSH(&w, mp->computations, mp->n_computations, c);
    }
    if (!ok && !w.failed && err && err->code == ERR_OK)
        error_nomem(err, (IrLoc){ m->file, 0, 0 });
    ok = ok && w_header(&w, mp);
    if (ok && m->is_scheduled)
        ok = (mp->schedule = w_schedule(&w, mp)) != NULL;
    ok = ok && !w.failed;
    if (ok && w.renamed)
        note_item(&w, "%d instruction%s renamed name.N: %s names repeat across computations, which a proto "
                  "does not allow", w.renamed, w.renamed == 1 ? "" : "s", w.renamed == 1 ? "its" : "their");
    if (ok) {
        size_t n = protobuf_c_message_get_packed_size(&mp->base);
        uint8_t *bytes = xmalloc_try(n ? n : 1);
        if (!bytes) {
            ok = error_nomem(err, (IrLoc){ m->file, 0, 0 });
        } else {
            protobuf_c_message_pack(&mp->base, bytes);
            strbuf_putn(b, (const char *)bytes, n);
            free(bytes);
            ok = strbuf_check(b, err);
        }
    } else if (err && err->code == ERR_OK) {
        error_set(err, ERR_INTERNAL, (IrLoc){ m->file, 0, 0 }, "the proto writer failed without saying why");
    }
    arena_free(w.a);
    return ok;
}

IrFormat ir_format_of_path(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return n >= 3 && strcmp(path + n - 3, ".pb") == 0 ? IR_FORMAT_PROTO : IR_FORMAT_TEXT;
}
