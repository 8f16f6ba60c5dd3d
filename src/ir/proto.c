/* proto.c: HLO modules in XLA's binary forms: HloModuleProto (what the
 * Neuron compiler takes, *.hlo_module.pb), HloProto (*.hlo.pb dumps) and
 * HloSnapshot (*.snapshot.pb, a module with the arguments and result of one
 * execution).  The only file of src/ir/ that sees protobuf-c.
 *
 * Reading goes in three steps:
 *  1. check_wire walks the bytes by the schema (protobuf-c's descriptors of
 *     src/ir/hlo.proto) before anything is unpacked: truncation, wrong wire
 *     types, bad lengths and nesting deeper than MAX_DEPTH are refused there
 *     with the field path (computations[3].instructions[17].shape...), where
 *     protobuf-c would give no place, and would recurse without bound on a
 *     nesting bomb.  Fields the schema does not declare are tallied for the
 *     "not carried" note.
 *  2. protobuf-c unpacks the skeleton (the message without the
 *     computations' instructions); the instructions are indexed off the
 *     wire and unpacked one at a time as they are written (section 2 says
 *     why).
 *  3. The module is built through parse.c's builder (ir_build.h), one
 *     computation and instruction at a time: names, order and operands as
 *     the proto gives them; each distinct shape, each literal and the
 *     attributes that carry syntax of their own (windows, shardings,
 *     iota groups...) as HLO text in the grammar parse.c reads, so that
 *     both forms have one reading of them.  The plain values (typed lists
 *     and integers, called computations, explicit replica groups, slices,
 *     metadata) are given as values (Direct): they are most of a module,
 *     and reading a proto must not cost more than reading its text
 *     (make bench).  Every instruction and computation keeps the field
 *     path it came from as its location, so an error of the parser, or
 *     later of the verifier, names the proto field
 *     (computations[3].instructions[17] (%add.5): ...) and not a line of
 *     text the user never saw.
 * The formats written follow XLA's own printer wherever parse.c keeps an
 * attribute as text (sharding, metadata, backend_config, ...), so that a
 * module read from XLA's proto prints as the same module read from XLA's
 * text (scripts/xla/xla_syntax.py checks it on every corpus module). */
#include "ir.h"
#include "ir_build.h"

#include "hlo.pb-c.h"
#include "proto_enums.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEPTH = 96 };

/* ------------------------------------------------------------------ */
/* Field paths                                                          */

typedef struct Path {
    char s[MAX_DEPTH * 24 + 256];   /* room for the deepest path allowed */
    size_t len;
} Path;

static size_t path_push(Path *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static size_t path_push(Path *p, const char *fmt, ...)
{
    size_t at = p->len;
    if (p->len < sizeof p->s - 1) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(p->s + p->len, sizeof p->s - p->len, fmt, ap);
        va_end(ap);
        if (n > 0)
            p->len = p->len + (size_t)n < sizeof p->s ? p->len + (size_t)n : sizeof p->s - 1;
    }
    return at;
}

/* The same as path_push(p, "%s%s", sep, name) and path_push(p, "[%u]", i),
 * without printf: check_message takes one step per field of a proto of
 * millions of fields. */
static size_t path_add(Path *p, const char *sep, const char *name)
{
    size_t at = p->len, a = strlen(sep), b = strlen(name);
    if (p->len + a + b < sizeof p->s) {
        memcpy(p->s + p->len, sep, a);
        memcpy(p->s + p->len + a, name, b);
        p->len += a + b;
        p->s[p->len] = 0;
    }
    return at;
}

static void path_index(Path *p, unsigned i)
{
    char buf[16];
    int n = 0;
    buf[n++] = ']';
    do {
        buf[n++] = (char)('0' + i % 10);
        i /= 10;
    } while (i);
    buf[n++] = '[';
    if (p->len + (size_t)n < sizeof p->s) {
        for (int k = n - 1; k >= 0; k--)
            p->s[p->len++] = buf[k];
        p->s[p->len] = 0;
    }
}

static void path_pop(Path *p, size_t at)
{
    p->len = at;
    p->s[at] = 0;
}

/* ------------------------------------------------------------------ */
/* 1. The wire check                                                    */

/* Fields present in the bytes that hlo.proto does not declare: counted
 * per (message, field number) for the note. */
typedef struct Unknown {
    const char *message;
    uint32_t field;
    long count;
} Unknown;

/* One field on the way down to the one being checked: the path is
 * written only when a check fails (a proto of millions of fields would
 * otherwise write millions of paths). */
typedef struct Frame {
    const char *name;
    unsigned index;
    bool indexed;                  /* a repeated field's element: name[index] */
} Frame;

typedef struct Wire {
    const char *file;
    Error *err;
    Path path;                     /* written from frames when a check fails */
    Frame frames[MAX_DEPTH + 2];
    int n_frames;
    Unknown unknown[48];
    int n_unknown;
    bool failed_at_top;            /* before any field of the message was read whole */
} Wire;

/* An error placed at a field path: "file: path (%name): error: msg", the
 * path in the place a text error gives line and column.  A path too long
 * to read (a nesting bomb's) keeps its start and end. */
static bool fail_at(Error *err, const char *file, const char *path, const char *name, const char *msg)
{
    char where[sizeof err->file];   /* what error_set keeps of it */
    size_t n = strlen(path);
    if (n > 200)
        snprintf(where, sizeof where, "%s: %.100s...(%zu characters)...%s", file, path, n - 150, path + n - 50);
    else
        snprintf(where, sizeof where, "%s%s%s", file, n ? ": " : "", path);
    if (name) {
        size_t w = strlen(where);
        snprintf(where + w, sizeof where - w, " (%%%s)", name);
    }
    return error_set(err, ERR_SYNTAX, (IrLoc){ where, 0, 0 }, "%s", msg);
}

static bool wire_fail(Wire *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool wire_fail(Wire *w, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    path_pop(&w->path, 0);
    for (int i = 0; i < w->n_frames; i++) {
        path_add(&w->path, i ? "." : "", w->frames[i].name);
        if (w->frames[i].indexed)
            path_index(&w->path, w->frames[i].index);
    }
    w->failed_at_top = w->n_frames == 0;
    return fail_at(w->err, w->file, w->path.s, NULL, msg);
}

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*p >= end)
            return false;
        uint8_t b = *(*p)++;
        if (shift == 63 && b > 1)
            return false;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

static void note_unknown(Wire *w, const ProtobufCMessageDescriptor *d, uint32_t field)
{
    for (int i = 0; i < w->n_unknown; i++)
        if (w->unknown[i].message == d->short_name && w->unknown[i].field == field) {
            w->unknown[i].count++;
            return;
        }
    if (w->n_unknown < (int)(sizeof w->unknown / sizeof w->unknown[0]))
        w->unknown[w->n_unknown++] = (Unknown){ d->short_name, field, 1 };
}

/* The wire type a field of this type is written with (not packed). */
static int wire_type_of(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_BOOL: case PROTOBUF_C_TYPE_ENUM:
        return 0;
    case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_DOUBLE:
        return 1;
    case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_FLOAT:
        return 5;
    case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_BYTES: case PROTOBUF_C_TYPE_MESSAGE:
        return 2;
    }
    return -1;
}

static const char *const wire_type_name[8] = {
    "varint", "64-bit", "length-delimited", "group start", "group end", "32-bit", "wire type 6", "wire type 7"
};

static bool check_message(Wire *w, const uint8_t *p, const uint8_t *end, const ProtobufCMessageDescriptor *d,
                          int depth)
{
    if (depth > MAX_DEPTH)
        return wire_fail(w, "messages nested more than %d deep", MAX_DEPTH);
    unsigned seen[128];                 /* occurrences so far, by field index: the [i] of a path */
    memset(seen, 0, (d->n_fields < 128 ? d->n_fields : 128) * sizeof seen[0]);
    while (p < end) {
        uint64_t tag;
        if (!read_varint(&p, end, &tag))
            return wire_fail(w, "a %s ends inside a field tag (truncated or not a proto)", d->short_name);
        uint64_t number = tag >> 3;
        int wt = (int)(tag & 7);
        if (number == 0 || number > 536870911u)
            return wire_fail(w, "field number %" PRIu64 " in a %s (not a proto, or corrupt)", number, d->short_name);
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, (unsigned)number);
        size_t idx = f ? (size_t)(f - d->fields) : 0;
        w->n_frames = depth;
        if (f) {
            bool indexed = f->label == PROTOBUF_C_LABEL_REPEATED && !(wt == 2 && f->type != PROTOBUF_C_TYPE_MESSAGE &&
                                                                     f->type != PROTOBUF_C_TYPE_STRING &&
                                                                     f->type != PROTOBUF_C_TYPE_BYTES);
            w->frames[depth] = (Frame){ f->name, idx < 128 ? seen[idx] : 0, indexed };
            w->n_frames = depth + 1;
        }
        if (f && idx < 128)
            seen[idx]++;
        const uint8_t *value = p;
        uint64_t len = 0;
        switch (wt) {
        case 0:
            if (!read_varint(&p, end, &len))
                return wire_fail(w, "a varint runs past the end of its message (truncated)");
            break;
        case 1:
            if (end - p < 8)
                return wire_fail(w, "a 64-bit value runs past the end of its message (truncated)");
            p += 8;
            break;
        case 5:
            if (end - p < 4)
                return wire_fail(w, "a 32-bit value runs past the end of its message (truncated)");
            p += 4;
            break;
        case 2:
            if (!read_varint(&p, end, &len))
                return wire_fail(w, "a length runs past the end of its message (truncated)");
            if (len > (uint64_t)(end - p))
                return wire_fail(w, "length %" PRIu64 " runs past the end of its message (%zu bytes left: truncated)",
                                 len, (size_t)(end - p));
            value = p;
            p += len;
            break;
        default:
            return wire_fail(w, "%s fields are not used by XLA's protos (not a proto, or corrupt)",
                             wire_type_name[wt]);
        }
        if (!f) {
            if (!(wt == 2 && len == 0))     /* an empty message or string carries nothing */
                note_unknown(w, d, (uint32_t)number);
            continue;
        }
        int want = wire_type_of(f->type);
        bool packed = wt == 2 && want != 2 && f->label == PROTOBUF_C_LABEL_REPEATED;
        if (wt != want && !packed)
            return wire_fail(w, "written as %s, but the field is %s", wire_type_name[wt], wire_type_name[want]);
        if (packed) {
            /* A packed run must hold whole values. */
            const uint8_t *q = value, *qend = value + len;
            while (q < qend) {
                uint64_t v;
                if (want == 0 && !read_varint(&q, qend, &v))
                    return wire_fail(w, "a packed varint runs past the end of its run (truncated)");
                if (want == 1)
                    q = (qend - q >= 8) ? q + 8 : qend + 1;
                if (want == 5)
                    q = (qend - q >= 4) ? q + 4 : qend + 1;
                if (q > qend)
                    return wire_fail(w, "a packed run of %" PRIu64 " bytes does not hold whole %s values", len,
                                     wire_type_name[want]);
            }
        }
        if (f->type == PROTOBUF_C_TYPE_MESSAGE &&
            !check_message(w, value, value + len, (const ProtobufCMessageDescriptor *)f->descriptor, depth + 1))
            return false;
    }
    w->n_frames = depth;
    return true;
}


/* Names for the fields of XLA's schema that hlo.proto leaves out.  Quiet
 * ones say nothing about what the module computes (profiles, statistics,
 * provenance, scheduling hints) and XLA writes some of them on every
 * instruction, so the note leaves them out; the rest are named in it. */
static const struct {
    const char *message;
    uint32_t field;
    const char *name;
    bool quiet;
} not_carried_names[] = {
    { "HloProto", 3, "buffer_assignment", false },
    { "HloModuleProto", 10, "cross_program_prefetches", true },
    { "HloModuleProto", 11, "is_dynamic", false },
    { "HloModuleProto", 12, "spmd_output_sharding", false },
    { "HloModuleProto", 13, "profile_info", true },
    { "HloModuleProto", 14, "spmd_parameters_shardings", false },
    { "HloModuleProto", 16, "use_auto_spmd_partitioning", false },
    { "HloModuleProto", 20, "original_value_recovery_table", true },
    { "HloModuleProto", 21, "device_type", false },
    { "HloModuleProto", 22, "payloads", false },
    { "HloModuleProto", 23, "pjrt_id", true },
    { "HloInstructionProto", 73, "is_cross_program_prefetch", true },
    { "HloInstructionProto", 75, "padding_type", false },
    { "HloInstructionProto", 80, "cross_program_prefetch_index", true },
    { "HloInstructionProto", 82, "statistics_viz", true },
    { "HloInstructionProto", 88, "original_value", true },
    { "HloInstructionProto", 94, "is_reverse", false },
    { "HloInstructionProto", 95, "num_carries", false },
    { "HloInstructionProto", 96, "is_associative", false },
    { "HloInstructionProto", 97, "conv_kind", false },
    { "HloInstructionProto", 99, "backend_config_payload", false },
    { "OpSharding", 14, "named_sharding", false },
    { "LayoutProto", 10, "physical_shape", false },
    { "LayoutProto", 11, "index_primitive_type", false },
    { "LayoutProto", 12, "pointer_primitive_type", false },
    { "LayoutProto", 13, "dim_unique", false },
    { "LayoutProto", 14, "dim_ordered", false },
    { "LayoutProto", 17, "split_configs", false },
    { "LiteralProto", 34, "dynamic_sizes", false },
    { "OpMetadata", 5, "profile_type", true },
    { "OpMetadata", 8, "size_of_generated_code_in_bytes", true },
    { "OpMetadata", 9, "size_of_memory_working_set_in_bytes", true },
    { "OpMetadata", 10, "profile_info", true },
    { "OpMetadata", 20, "metadata_payload", true },
};

static void unknown_note(const Wire *w, StrBuf *b)
{
    for (int i = 0; i < w->n_unknown; i++) {
        const Unknown *u = &w->unknown[i];
        const char *name = NULL;
        bool quiet = false;
        for (size_t k = 0; k < sizeof not_carried_names / sizeof not_carried_names[0]; k++)
            if (u->field == not_carried_names[k].field && strcmp(u->message, not_carried_names[k].message) == 0) {
                name = not_carried_names[k].name;
                quiet = not_carried_names[k].quiet;
            }
        if (quiet)
            continue;
        strbuf_printf(b, "%s%s.", b->len ? ", " : "", u->message);
        if (name)
            strbuf_printf(b, "%s", name);
        else
            strbuf_printf(b, "field %u", u->field);
        if (u->count > 1)
            strbuf_printf(b, " (x%ld)", u->count);
    }
}

/* ------------------------------------------------------------------ */
/* 2. The skeleton and the instructions' index                          */

/* protobuf-c gives every unpacked instruction all of HloInstructionProto's
 * fields (about 1.3 KB with its shape and metadata): a 76 MB module of
 * 540k instructions would unpack into 700 MB.  So only the skeleton is
 * unpacked whole (the module's bytes with each computation's instructions
 * left out: the computations' own fields, the schedule, a snapshot's
 * arguments), each instruction is unpacked alone when it is written and
 * freed after, and what writing one instruction needs of the others
 * (ids, names, operand ids, the element type of a shape) is read off
 * their bytes into a small index. */
typedef struct Lite {
    const uint8_t *bytes;              /* the instruction's message */
    size_t len;
    int64_t id, parameter_number;
    const char *name, *opcode;         /* "" when absent */
    int32_t elem_type;                 /* its shape's element_type */
    bool has_shape;
    const uint8_t *shape;              /* the shape's bytes, when given once (else NULL) */
    size_t shape_len;
    const uint8_t *shape_field;        /* where the shape's field starts (its tag) */
    int64_t *edges;                    /* operand ids, then control predecessor ids */
    uint32_t n_operands, n_control;
} Lite;

typedef struct CompLites {
    Lite *v;
    size_t n, cap;
} CompLites;

typedef struct Skel {
    StrBuf bytes;                      /* the skeleton */
    CompLites *comps;                  /* per computation, in the order unpacked */
    size_t n_comps, cap_comps;
    Arena *arena;                      /* names, opcodes, edges */
    int64_t *ops, *ctl;                /* lite_read's scratch */
    Arena *one;                        /* what load() unpacks one instruction into */
    size_t cap_ops, cap_ctl;
    bool nomem;
} Skel;

static struct {
    uint32_t name, opcode, shape, parameter_number, id, operand_ids, control_ids, element_type;
    uint32_t instructions, computations, hlo_module, hlo;
} fieldno;

static uint32_t field_number(const ProtobufCMessageDescriptor *d, const char *name)
{
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, name);
    return f ? f->id : 0;
}

static void learn_field_numbers(void)
{
    if (fieldno.name)
        return;
    const ProtobufCMessageDescriptor *in = &xla__hlo_instruction_proto__descriptor;
    fieldno.opcode = field_number(in, "opcode");
    fieldno.shape = field_number(in, "shape");
    fieldno.parameter_number = field_number(in, "parameter_number");
    fieldno.id = field_number(in, "id");
    fieldno.operand_ids = field_number(in, "operand_ids");
    fieldno.control_ids = field_number(in, "control_predecessor_ids");
    fieldno.element_type = field_number(&xla__shape_proto__descriptor, "element_type");
    fieldno.instructions = field_number(&xla__hlo_computation_proto__descriptor, "instructions");
    fieldno.computations = field_number(&xla__hlo_module_proto__descriptor, "computations");
    fieldno.hlo_module = field_number(&xla__hlo_proto__descriptor, "hlo_module");
    fieldno.hlo = field_number(&xla__hlo_snapshot__descriptor, "hlo");
    fieldno.name = field_number(in, "name");
}

/* One field of a message whose wire check_message passed: its number,
 * wire type, and value (a varint's in *v; a length-delimited one's bytes
 * in *value, *len); false at the end or on bytes it cannot read. */
static bool next_field(const uint8_t **p, const uint8_t *end, uint32_t *number, int *wt, uint64_t *v,
                       const uint8_t **value, size_t *len)
{
    uint64_t tag;
    if (*p >= end || !read_varint(p, end, &tag))
        return false;
    *number = (uint32_t)(tag >> 3);
    *wt = (int)(tag & 7);
    *value = *p;
    *len = 0;
    switch (*wt) {
    case 0:
        return read_varint(p, end, v);
    case 1:
        if (end - *p < 8)
            return false;
        *p += 8;
        return true;
    case 5:
        if (end - *p < 4)
            return false;
        *p += 4;
        return true;
    case 2:
        if (!read_varint(p, end, v) || *v > (uint64_t)(end - *p))
            return false;
        *value = *p;
        *len = (size_t)*v;
        *p += *len;
        return true;
    default:
        return false;
    }
}

static const char *lite_string(Skel *s, const uint8_t *v, size_t n)
{
    char *c = arena_strndup(s->arena, (const char *)v, n);
    if (!c) {
        s->nomem = true;
        return "";
    }
    return c;                   /* a string with a NUL in it ends there, as protobuf-c reads it */
}

/* Appends the ids of a repeated int64 field (packed or not) to *ids. */
static void lite_ids(Skel *s, int64_t **ids, size_t *n, size_t *cap, int wt, uint64_t v, const uint8_t *value,
                     size_t len)
{
    const uint8_t *q = value, *qend = value + len;
    for (;;) {
        uint64_t x = v;
        if (wt == 2 && (q >= qend || !read_varint(&q, qend, &x)))
            return;
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 8;
            if (!xgrow_try((void **)ids, *cap, sizeof **ids)) {
                s->nomem = true;
                return;
            }
        }
        (*ids)[(*n)++] = (int64_t)x;
        if (wt != 2)
            return;
    }
}

/* An instruction's index entry, read off its bytes.  Later occurrences of
 * a field win and repeated ones append, as protobuf-c unpacks them. */
static void lite_read(Skel *s, Lite *l, const uint8_t *bytes, size_t n)
{
    *l = (Lite){ .bytes = bytes, .len = n, .name = "", .opcode = "" };
    size_t n_ops = 0, n_ctl = 0;
    const uint8_t *p = bytes, *end = bytes + n, *value;
    uint32_t number;
    int wt;
    uint64_t v = 0;
    size_t len;
    const uint8_t *field = p;
    while (next_field(&p, end, &number, &wt, &v, &value, &len)) {
        if (number == fieldno.name && wt == 2)
            l->name = lite_string(s, value, len);
        else if (number == fieldno.opcode && wt == 2)
            l->opcode = lite_string(s, value, len);
        else if (number == fieldno.parameter_number && wt == 0)
            l->parameter_number = (int64_t)v;
        else if (number == fieldno.id && wt == 0)
            l->id = (int64_t)v;
        else if (number == fieldno.operand_ids && (wt == 0 || wt == 2))
            lite_ids(s, &s->ops, &n_ops, &s->cap_ops, wt, v, value, len);
        else if (number == fieldno.control_ids && (wt == 0 || wt == 2))
            lite_ids(s, &s->ctl, &n_ctl, &s->cap_ctl, wt, v, value, len);
        else if (number == fieldno.shape && wt == 2) {
            /* Given twice, protobuf-c merges the two: no one span of bytes is the shape. */
            l->shape = l->has_shape ? NULL : value;
            l->shape_len = len;
            l->shape_field = field;
            l->has_shape = true;
            const uint8_t *q = value, *qend = value + len, *sv;
            uint32_t sn;
            int swt;
            uint64_t x = 0;
            size_t sl;
            while (next_field(&q, qend, &sn, &swt, &x, &sv, &sl))
                if (sn == fieldno.element_type && swt == 0)
                    l->elem_type = (int32_t)x;
        }
        field = p;
    }
    l->n_operands = (uint32_t)n_ops;
    l->n_control = (uint32_t)n_ctl;
    if (n_ops + n_ctl) {
        l->edges = arena_alloc_array(s->arena, n_ops + n_ctl, sizeof *l->edges);
        if (l->edges) {
            if (n_ops)
                memcpy(l->edges, s->ops, n_ops * sizeof *l->edges);
            if (n_ctl)
                memcpy(l->edges + n_ops, s->ctl, n_ctl * sizeof *l->edges);
        } else {
            s->nomem = true;
        }
    }
}

static void put_varint(StrBuf *b, uint64_t v)
{
    char buf[10];
    size_t n = 0;
    do {
        buf[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    strbuf_putn(b, buf, n);
}

/* Copies the message's fields to out, leaving out a computation's
 * instructions (indexed instead) and rewriting the messages that hold
 * computations (a snapshot's HloProto, its HloModuleProto, the module's
 * computations) the same way. */
static void skeleton_of(Skel *s, StrBuf *out, const uint8_t *p, const uint8_t *end, const ProtobufCMessageDescriptor *d)
{
    const uint8_t *value;
    uint32_t number;
    int wt;
    uint64_t v;
    size_t len;
    const uint8_t *start = p;
    while (start = p, next_field(&p, end, &number, &wt, &v, &value, &len)) {
        const ProtobufCMessageDescriptor *inner = NULL;
        if (wt == 2 && d == &xla__hlo_snapshot__descriptor && number == fieldno.hlo)
            inner = &xla__hlo_proto__descriptor;
        else if (wt == 2 && d == &xla__hlo_proto__descriptor && number == fieldno.hlo_module)
            inner = &xla__hlo_module_proto__descriptor;
        else if (wt == 2 && d == &xla__hlo_module_proto__descriptor && number == fieldno.computations)
            inner = &xla__hlo_computation_proto__descriptor;
        if (wt == 2 && d == &xla__hlo_computation_proto__descriptor && number == fieldno.instructions) {
            CompLites *c = &s->comps[s->n_comps - 1];
            if (c->n == c->cap) {
                c->cap = c->cap ? 2 * c->cap : 16;
                if (!xgrow_try((void **)&c->v, c->cap, sizeof *c->v)) {
                    s->nomem = true;
                    return;
                }
            }
            lite_read(s, &c->v[c->n++], value, len);
        } else if (inner) {
            if (inner == &xla__hlo_computation_proto__descriptor) {
                if (s->n_comps == s->cap_comps) {
                    s->cap_comps = s->cap_comps ? 2 * s->cap_comps : 16;
                    if (!xgrow_try((void **)&s->comps, s->cap_comps, sizeof *s->comps)) {
                        s->nomem = true;
                        return;
                    }
                }
                s->comps[s->n_comps++] = (CompLites){ 0 };
            }
            StrBuf sub;
            strbuf_init(&sub);
            skeleton_of(s, &sub, value, value + len, inner);
            put_varint(out, (uint64_t)number << 3 | 2);
            put_varint(out, sub.len);
            strbuf_putn(out, sub.s ? sub.s : "", sub.len);
            strbuf_free(&sub);
        } else {
            strbuf_putn(out, (const char *)start, (size_t)(p - start));
        }
    }
}

static void skel_free(Skel *s)
{
    strbuf_free(&s->bytes);
    for (size_t i = 0; i < s->n_comps; i++)
        free(s->comps[i].v);
    free(s->comps);
    free(s->ops);
    free(s->ctl);
    arena_free(s->arena);
    arena_free(s->one);
    *s = (Skel){ 0 };
}

/* The skeleton of bytes read as a message of descriptor d, and the index
 * of their instructions; false when out of memory. */
static bool skeleton(Skel *s, const void *data, size_t len, const ProtobufCMessageDescriptor *d)
{
    skel_free(s);
    learn_field_numbers();
    strbuf_init(&s->bytes);
    if (!(s->arena = arena_new(len / 8 + 4096)) || !(s->one = arena_new(64 * 1024)))
        return false;
    skeleton_of(s, &s->bytes, data, (const uint8_t *)data + len, d);
    return !s->nomem;
}

/* ------------------------------------------------------------------ */
/* 3. The message as a module                                          */

typedef Xla__HloInstructionProto Instr;
typedef Xla__HloComputationProto Comp;


typedef struct IdAt {
    int64_t id;
    int at;
} IdAt;

typedef struct ShapeSlot {
    const uint8_t *bytes;          /* a ShapeProto's, in the bytes being read */
    size_t len;
    IrShape *shape;                /* NULL: the slot is empty */
} ShapeSlot;

typedef struct ShapeCache {
    ShapeSlot *v;
    size_t n, cap;                 /* cap: 0 or a power of two */
} ShapeCache;

/* Attributes emit_attributes gives the built instruction as values rather
 * than as text (give_direct): the typed lists and integers, explicit
 * replica groups and slices, which are most of a module's attributes.
 * The values point into the instruction's unpacked message. */
typedef struct Direct {
    int n_lists, n_ints;
    IrListAttr list_k[IR_LIST_COUNT];
    const int64_t *list_v[IR_LIST_COUNT];
    size_t list_n[IR_LIST_COUNT];
    IrIntAttr int_k[IR_INT_COUNT];
    int64_t int_v[IR_INT_COUNT];
    bool has_groups;
    Xla__ReplicaGroup **groups;
    size_t n_groups;
    Xla__HloInstructionProto__SliceDimensions **slice;
    size_t n_slice;
    bool has_slice;
    int n_comps;
    IrCompAttr comp_k[IR_COMP_COUNT];
    const char *comp_name[IR_COMP_COUNT];
} Direct;

typedef struct Emit {
    const char *file;
    const char *prefix;            /* of every field path: "", "hlo_module." or "hlo.hlo_module." */
    Error *err;
    IrBuilder *b;                  /* the module being read, from the header on */
    StrBuf t;                      /* the header's text, then one instruction's at a time */
    const Xla__HloModuleProto *m;  /* the skeleton: computations without instructions */
    const Skel *sk;                /* the instructions' bytes and index */
    Path path;
    int comp;                      /* the computation being written */
    /* Per computation: id -> instruction index (sorted pairs). */
    const Comp *c;
    const CompLites *lc;           /* c's instructions */
    int64_t *ids;                  /* c's instruction ids, sorted (with dense: ids[0] alone, the base) */
    int *id_at;                    /* the instruction index of ids[k] */
    size_t n_ids;
    int *dense;                    /* when the ids are near dense: the index of ids[0] + k, or -1 */
    size_t n_dense;
    IdAt *comp_ids;                /* the computations' ids, sorted, with their index */
    size_t n_comp_ids;
    /* An instruction's metadata={...} is written here, and the built
     * instruction given it as the raw attribute parse.c would keep of it
     * (give_metadata).  Metadata is most of a real module's text (op_name,
     * source_file on every instruction). */
    StrBuf md;
    size_t md_at, md_len;          /* the current instruction's (md_len 0: none) */
    ShapeCache shapes;
    StrBuf strip;                  /* an instruction's bytes without its shape */
    Direct direct;                 /* the current instruction's */
} Emit;

static bool good_name(const char *s);

/* The name of the instruction a path is in (computations[c].instructions[i]...),
 * or NULL. */
static const char *instr_named(const Skel *sk, const char *path)
{
    const char *p = strstr(path, "computations[");
    long c, i;
    if (!p || !sk || sscanf(p, "computations[%ld].instructions[%ld]", &c, &i) != 2)
        return NULL;
    if (c < 0 || (size_t)c >= sk->n_comps || i < 0 || (size_t)i >= sk->comps[c].n)
        return NULL;
    const char *name = sk->comps[c].v[i].name;
    return good_name(name) && strlen(name) < 100 ? name : NULL;
}

static bool emit_fail(Emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool emit_fail(Emit *e, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fail_at(e->err, e->file, e->path.s, instr_named(e->sk, e->path.s), msg);
}

static void put(Emit *e, const char *s) { strbuf_puts(&e->t, s); }
static void putf(Emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(Emit *e, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof buf) {
        char *big = xmalloc((size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        strbuf_puts(&e->t, big);
        free(big);
    } else {
        strbuf_puts(&e->t, buf);
    }
}

static void newline(Emit *e) { strbuf_putc(&e->t, '\n'); }

/* absl::CEscape, which XLA's printer uses for strings.  Runs of
 * characters that need no escape are copied whole. */
static void escape_into(StrBuf *b, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && (unsigned char)s[j] >= 0x20 && (unsigned char)s[j] < 0x7f && s[j] != '"' && s[j] != '\'' &&
               s[j] != '\\')
            j++;
        strbuf_putn(b, s + i, j - i);
        if (j == n)
            break;
        unsigned char c = (unsigned char)s[j];
        switch (c) {
        case '\n': strbuf_puts(b, "\\n"); break;
        case '\r': strbuf_puts(b, "\\r"); break;
        case '\t': strbuf_puts(b, "\\t"); break;
        case '"': strbuf_puts(b, "\\\""); break;
        case '\'': strbuf_puts(b, "\\'"); break;
        case '\\': strbuf_puts(b, "\\\\"); break;
        default: {
            char oct[5] = { '\\', (char)('0' + (c >> 6)), (char)('0' + ((c >> 3) & 7)), (char)('0' + (c & 7)), 0 };
            strbuf_puts(b, oct);
        }
        }
        i = j + 1;
    }
}

static void put_escaped(Emit *e, const char *s, size_t n) { escape_into(&e->t, s, n); }

static void quoted_into(StrBuf *b, const char *s)
{
    strbuf_putc(b, '"');
    escape_into(b, s, strlen(s));
    strbuf_putc(b, '"');
}

static void put_quoted(Emit *e, const char *s) { quoted_into(&e->t, s); }

/* An integer without printf (shapes, lists and ids are most of a
 * module's text). */
static void int_into(StrBuf *b, int64_t v)
{
    char buf[24];
    int n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        buf[sizeof buf - 1 - n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        buf[sizeof buf - 1 - n++] = '-';
    strbuf_putn(b, buf + sizeof buf - n, (size_t)n);
}

static void put_int(Emit *e, int64_t v) { int_into(&e->t, v); }

static void put_ints(Emit *e, const int64_t *v, size_t n, const char *sep)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            put(e, sep);
        put_int(e, v[i]);
    }
}

static bool emit_fail(Emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A typed list attribute, given as values (Direct). */
static void put_list(Emit *e, IrListAttr k, const int64_t *v, size_t n)
{
    Direct *d = &e->direct;
    d->list_k[d->n_lists] = k;
    d->list_v[d->n_lists] = v;
    d->list_n[d->n_lists++] = n;
}

/* A typed integer attribute, given as a value (Direct); false when the
 * instruction has it already (as its text would say it twice). */
static bool put_int_attr(Emit *e, IrIntAttr k, int64_t v)
{
    Direct *d = &e->direct;
    for (int i = 0; i < d->n_ints; i++)
        if (d->int_k[i] == k)
            return emit_fail(e, "attribute '%s' given twice", ir_int_attr_name[k]);
    d->int_k[d->n_ints] = k;
    d->int_v[d->n_ints++] = v;
    return true;
}

/* HLO names: what parse.c's lexer takes as one name after '%' (a letter
 * or '_' first; '#' as in XLA's %param#0). */
static bool good_name(const char *s)
{
    if (!s || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
        return false;
    for (const char *q = s; *q; q++) {
        char c = *q;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-' || c == '#'))
            return false;
    }
    return true;
}

static IrElemType type_of(int32_t t) { return proto_type_to_ir(t); }

enum { PRIMITIVE_BUFFER = 34 };

static bool emit_shape(Emit *e, const Xla__ShapeProto *s, int depth)
{
    if (!s)
        return emit_fail(e, "no shape");
    if (depth > 32)
        return emit_fail(e, "tuple shapes nested more than 32 deep");
    if (s->element_type == PRIMITIVE_BUFFER) {
        if (s->n_tuple_shapes != 1)
            return emit_fail(e, "a buffer shape holds %zu shapes, not 1", s->n_tuple_shapes);
        put(e, "b(");
        if (!emit_shape(e, s->tuple_shapes[0], depth + 1))
            return false;
        put(e, ")");
        return true;
    }
    IrElemType t = type_of(s->element_type);
    if (t == IR_TYPE_INVALID && (s->element_type == 35 || s->element_type == 36))
        return emit_fail(e, "element_type %s is not supported by hlocheck",
                         s->element_type == 35 ? "F6E3M2FN" : "F6E2M3FN");
    if (t == IR_TYPE_INVALID)
        return emit_fail(e, "element_type %d is not a PrimitiveType hlocheck knows", s->element_type);
    if (t == IR_TYPE_TUPLE) {
        put(e, "(");
        for (size_t i = 0; i < s->n_tuple_shapes; i++) {
            if (i)
                put(e, ", ");
            if (!emit_shape(e, s->tuple_shapes[i], depth + 1))
                return false;
        }
        put(e, ")");
        return true;
    }
    if (s->n_dimensions > IR_MAX_RANK)
        return emit_fail(e, "rank %zu: more than %d dimensions", s->n_dimensions, IR_MAX_RANK);
    if (s->n_is_dynamic_dimension && s->n_is_dynamic_dimension != s->n_dimensions)
        return emit_fail(e, "%zu is_dynamic_dimension entries for %zu dimensions", s->n_is_dynamic_dimension,
                         s->n_dimensions);
    put(e, ir_type_name(t));
    put(e, "[");
    for (size_t i = 0; i < s->n_dimensions; i++) {
        int64_t d = s->dimensions[i];
        bool dyn = s->n_is_dynamic_dimension && s->is_dynamic_dimension[i];
        if (d < 0 && !(dyn && d == INT64_MIN))
            return emit_fail(e, "dimension %zu is %" PRId64, i, d);
        if (i)
            put(e, ",");
        if (dyn && d == INT64_MIN) {
            put(e, "?");
        } else {
            if (dyn)
                put(e, "<=");
            put_int(e, d);
        }
    }
    put(e, "]");
    const Xla__LayoutProto *l = s->layout;
    if (l && s->n_dimensions > 0 && t != IR_TYPE_TOKEN && t != IR_TYPE_OPAQUE) {
        if (l->n_minor_to_major != s->n_dimensions)
            return emit_fail(e, "layout.minor_to_major has %zu entries for %zu dimensions", l->n_minor_to_major,
                             s->n_dimensions);
        for (size_t i = 0; i < l->n_dim_level_types; i++)
            if (l->dim_level_types[i] != 0)
                return emit_fail(e, "layout.dim_level_types[%zu] is %d: sparse arrays are not supported", i,
                                 (int)l->dim_level_types[i]);
        put(e, "{");
        put_ints(e, l->minor_to_major, l->n_minor_to_major, ",");
        bool tail = l->n_tiles || l->tail_padding_alignment_in_elements > 1 || l->element_size_in_bits ||
                    l->memory_space || l->dynamic_shape_metadata_prefix_bytes;
        if (tail) {
            put(e, ":");
            if (l->n_tiles) {
                put(e, "T");
                for (size_t k = 0; k < l->n_tiles; k++) {
                    put(e, "(");
                    for (size_t j = 0; j < l->tiles[k]->n_dimensions; j++) {
                        int64_t v = l->tiles[k]->dimensions[j];
                        if (j)
                            put(e, ",");
                        if (v == INT64_MIN)
                            put(e, "*");    /* XLA's combined dimension */
                        else
                            putf(e, "%" PRId64, v);
                    }
                    put(e, ")");
                }
            }
            if (l->tail_padding_alignment_in_elements > 1)
                putf(e, "L(%" PRId64 ")", l->tail_padding_alignment_in_elements);
            if (l->element_size_in_bits)
                putf(e, "E(%" PRId64 ")", l->element_size_in_bits);
            if (l->memory_space)
                putf(e, "S(%" PRId64 ")", l->memory_space);
            if (l->dynamic_shape_metadata_prefix_bytes)
                putf(e, "M(%" PRId64 ")", l->dynamic_shape_metadata_prefix_bytes);
        }
        put(e, "}");
    }
    return true;
}

/* Element count of an array shape, -1 past 2^40 (no literal is that big). */
static int64_t shape_count(const Xla__ShapeProto *s)
{
    int64_t n = 1;
    bool big = false;
    for (size_t i = 0; i < s->n_dimensions; i++) {
        if (s->dimensions[i] < 0)
            return -1;
        if (s->dimensions[i] == 0)
            return 0;                   /* empty, however large the rest */
        if (n > ((int64_t)1 << 40) / s->dimensions[i])
            big = true;
        else
            n *= s->dimensions[i];
    }
    return big ? -1 : n;
}

static int64_t sext(uint8_t v, int bits)
{
    int64_t x = v & ((1u << bits) - 1);
    return (x & (1 << (bits - 1))) ? x - (1 << bits) : x;
}

/* One element i of literal l (of type t) into dst (the IR's storage). */
static void literal_element(const Xla__LiteralProto *l, IrElemType t, size_t i, void *dst)
{
    const uint8_t *b;
    switch (t) {
    case IR_TYPE_PRED: *(uint8_t *)dst = l->preds[i] ? 1 : 0; break;
    case IR_TYPE_S8: ir_elem_set_i64(t, dst, (int8_t)l->s8s.data[i]); break;
    case IR_TYPE_U8: ir_elem_set_i64(t, dst, l->u8s.data[i]); break;
    case IR_TYPE_S4: ir_elem_set_i64(t, dst, sext(l->s4s.data[i], 4)); break;
    case IR_TYPE_S2: ir_elem_set_i64(t, dst, sext(l->s2s.data[i], 2)); break;
    case IR_TYPE_S1: ir_elem_set_i64(t, dst, sext(l->s1s.data[i], 1)); break;
    case IR_TYPE_U4: ir_elem_set_i64(t, dst, l->u4s.data[i] & 15); break;
    case IR_TYPE_U2: ir_elem_set_i64(t, dst, l->u2s.data[i] & 3); break;
    case IR_TYPE_U1: ir_elem_set_i64(t, dst, l->u1s.data[i] & 1); break;
    case IR_TYPE_S16: b = l->s16s.data + 2 * i; ir_elem_set_i64(t, dst, (int16_t)(b[0] | b[1] << 8)); break;
    case IR_TYPE_U16: b = l->u16s.data + 2 * i; ir_elem_set_i64(t, dst, (uint16_t)(b[0] | b[1] << 8)); break;
    case IR_TYPE_S32: ir_elem_set_i64(t, dst, l->s32s[i]); break;
    case IR_TYPE_U32: ir_elem_set_i64(t, dst, l->u32s[i]); break;
    case IR_TYPE_S64: ir_elem_set_i64(t, dst, l->s64s[i]); break;
    case IR_TYPE_U64: ir_elem_set_i64(t, dst, (int64_t)l->u64s[i]); break;
    case IR_TYPE_F16: b = l->f16s.data + 2 * i; *(uint16_t *)dst = (uint16_t)(b[0] | b[1] << 8); break;
    case IR_TYPE_BF16: b = l->bf16s.data + 2 * i; *(uint16_t *)dst = (uint16_t)(b[0] | b[1] << 8); break;
    case IR_TYPE_F32: memcpy(dst, &l->f32s[i], 4); break;
    case IR_TYPE_F64: memcpy(dst, &l->f64s[i], 8); break;
    case IR_TYPE_C64: memcpy(dst, &l->c64s[2 * i], 8); break;
    case IR_TYPE_C128: memcpy(dst, &l->c128s[2 * i], 16); break;
    case IR_TYPE_F8E5M2: *(uint8_t *)dst = l->f8e5m2s.data[i]; break;
    case IR_TYPE_F8E4M3: *(uint8_t *)dst = l->f8e4m3s.data[i]; break;
    case IR_TYPE_F8E4M3FN: *(uint8_t *)dst = l->f8e4m3fns.data[i]; break;
    case IR_TYPE_F8E4M3B11FNUZ: *(uint8_t *)dst = l->f8e4m3b11fnuzs.data[i]; break;
    case IR_TYPE_F8E3M4: *(uint8_t *)dst = l->f8e3m4s.data[i]; break;
    case IR_TYPE_F8E5M2FNUZ: *(uint8_t *)dst = l->f8e5m2fnuzs.data[i]; break;
    case IR_TYPE_F8E4M3FNUZ: *(uint8_t *)dst = l->f8e4m3fnuzs.data[i]; break;
    case IR_TYPE_F8E8M0FNU: *(uint8_t *)dst = l->f8e8m0fnus.data[i]; break;
    case IR_TYPE_F4E2M1FN: *(uint8_t *)dst = l->f4e2m1fns.data[i] & 15; break;
    case IR_TYPE_INVALID: case IR_TYPE_TOKEN: case IR_TYPE_OPAQUE: case IR_TYPE_TUPLE: case IR_TYPE_COUNT:
        break;
    }
}

/* How many values the literal holds for type t (-1: a type with no field),
 * and the field's name. */
static int64_t literal_values(const Xla__LiteralProto *l, IrElemType t, const char **field)
{
#define BYTES(T, F, per) case T: *field = #F; return (int64_t)(l->F.len / (per));
#define REP(T, F, per) case T: *field = #F; return (int64_t)(l->n_##F / (per));
    switch (t) {
    REP(IR_TYPE_PRED, preds, 1)
    BYTES(IR_TYPE_S8, s8s, 1) BYTES(IR_TYPE_U8, u8s, 1) BYTES(IR_TYPE_S4, s4s, 1) BYTES(IR_TYPE_S2, s2s, 1)
    BYTES(IR_TYPE_S1, s1s, 1) BYTES(IR_TYPE_U4, u4s, 1) BYTES(IR_TYPE_U2, u2s, 1) BYTES(IR_TYPE_U1, u1s, 1)
    BYTES(IR_TYPE_S16, s16s, 2) BYTES(IR_TYPE_U16, u16s, 2) BYTES(IR_TYPE_F16, f16s, 2) BYTES(IR_TYPE_BF16, bf16s, 2)
    REP(IR_TYPE_S32, s32s, 1) REP(IR_TYPE_U32, u32s, 1) REP(IR_TYPE_S64, s64s, 1) REP(IR_TYPE_U64, u64s, 1)
    REP(IR_TYPE_F32, f32s, 1) REP(IR_TYPE_F64, f64s, 1) REP(IR_TYPE_C64, c64s, 2) REP(IR_TYPE_C128, c128s, 2)
    BYTES(IR_TYPE_F8E5M2, f8e5m2s, 1) BYTES(IR_TYPE_F8E4M3, f8e4m3s, 1) BYTES(IR_TYPE_F8E4M3FN, f8e4m3fns, 1)
    BYTES(IR_TYPE_F8E4M3B11FNUZ, f8e4m3b11fnuzs, 1) BYTES(IR_TYPE_F8E3M4, f8e3m4s, 1)
    BYTES(IR_TYPE_F8E5M2FNUZ, f8e5m2fnuzs, 1) BYTES(IR_TYPE_F8E4M3FNUZ, f8e4m3fnuzs, 1)
    BYTES(IR_TYPE_F8E8M0FNU, f8e8m0fnus, 1) BYTES(IR_TYPE_F4E2M1FN, f4e2m1fns, 1)
    case IR_TYPE_INVALID: case IR_TYPE_TOKEN: case IR_TYPE_OPAQUE: case IR_TYPE_TUPLE: case IR_TYPE_COUNT:
        break;
    }
#undef BYTES
#undef REP
    *field = "";
    return -1;
}

/* The values of an array literal, nested by dimension as XLA writes them. */
static void emit_values(Emit *e, const Xla__LiteralProto *l, const Xla__ShapeProto *s, IrElemType t, size_t dim,
                        int64_t *next)
{
    if (dim == s->n_dimensions) {
        unsigned char elem[16] = { 0 };
        char buf[96];
        literal_element(l, t, (size_t)(*next)++, elem);
        ir_elem_format(t, elem, true, buf, sizeof buf);
        put(e, buf);
        return;
    }
    put(e, "{");
    for (int64_t i = 0; i < s->dimensions[dim]; i++) {
        if (i)
            put(e, ", ");
        emit_values(e, l, s, t, dim + 1, next);
    }
    put(e, "}");
}

/* A literal of the given (instruction) shape. */
static bool emit_literal(Emit *e, const Xla__LiteralProto *l, const Xla__ShapeProto *s, int depth)
{
    if (depth > 32)
        return emit_fail(e, "tuple literals nested more than 32 deep");
    IrElemType t = type_of(s->element_type);
    if (t == IR_TYPE_TUPLE) {
        if (l->n_tuple_literals != s->n_tuple_shapes)
            return emit_fail(e, "literal.tuple_literals has %zu elements, the shape %zu", l->n_tuple_literals,
                             s->n_tuple_shapes);
        put(e, "(");
        for (size_t i = 0; i < s->n_tuple_shapes; i++) {
            if (i)
                put(e, ", ");
            size_t at = path_push(&e->path, ".tuple_literals[%zu]", i);
            if (!emit_literal(e, l->tuple_literals[i], s->tuple_shapes[i], depth + 1))
                return false;
            path_pop(&e->path, at);
        }
        put(e, ")");
        return true;
    }
    const char *field;
    int64_t have = literal_values(l, t, &field), want = shape_count(s);
    if (have < 0)
        return emit_fail(e, "a literal of %s is not supported", ir_type_name(t));
    if (want < 0 || have != want)
        return emit_fail(e, "literal.%s holds %" PRId64 " values; the shape holds %" PRId64, field, have, want);
    if (want == 0) {
        /* Text writes an empty array as nested empty lists, one per index
         * of the dimensions before the first 0: a few bytes of proto could
         * ask for gigabytes of text.  A million took libFuzzer's build 14 s
         * from 81 bytes; no real constant holds more than a few. */
        int64_t lists = 1, most = 1 << 16;
        for (size_t i = 0; i < s->n_dimensions && s->dimensions[i] > 0 && lists <= most; i++)
            lists = s->dimensions[i] > most / lists ? most + 1 : lists * s->dimensions[i];
        if (lists > most)
            return emit_fail(e, "a constant with no elements whose text would be over 65536 empty lists "
                                "(dimensions before the first 0 too large)");
    }
    int64_t next = 0;
    emit_values(e, l, s, t, 0, &next);
    return true;
}

static void metadata_into(StrBuf *b, const Xla__OpMetadata *md)
{
    const char *sep = "";
#define STR(f) if (md->f && md->f[0]) { strbuf_puts(b, sep); strbuf_puts(b, #f "="); quoted_into(b, md->f); sep = " "; }
#define NUM(f) if (md->f) { strbuf_puts(b, sep); strbuf_puts(b, #f "="); int_into(b, (int)md->f); sep = " "; }
    STR(op_type) STR(op_name) STR(source_file) NUM(source_line) NUM(source_end_line) NUM(source_column)
    NUM(source_end_column) STR(deduplicated_name) NUM(stack_frame_id) STR(scheduling_name)
#undef STR
#undef NUM
}

static bool metadata_empty(const Xla__OpMetadata *md)
{
    return !md || (!(md->op_type && md->op_type[0]) && !(md->op_name && md->op_name[0]) &&
                   !(md->source_file && md->source_file[0]) && !md->source_line && !md->source_end_line &&
                   !md->source_column && !md->source_end_column && !(md->deduplicated_name && md->deduplicated_name[0]) &&
                   !md->stack_frame_id && !(md->scheduling_name && md->scheduling_name[0]));
}

static const char *sharding_type_name(int32_t t)
{
    switch (t) {
    case 0: return "replicated";
    case 1: return "maximal";
    case 3: return "other";
    case 4: return "manual";
    case 5: return "unknown";
    case 6: return "unreduced";
    default: return NULL;
    }
}

/* The iota form of a device list, as text writes it: "<=[dims]", then
 * "T(perm)" unless the permutation is the identity. */
static void emit_iota(Emit *e, const int64_t *dims, size_t n_dims, const int32_t *perm, size_t n_perm)
{
    put(e, "<=[");
    put_ints(e, dims, n_dims, ",");
    put(e, "]");
    bool identity = true;
    for (size_t i = 0; i < n_perm; i++)
        identity = identity && perm[i] == (int32_t)i;
    if (!identity) {
        put(e, "T(");
        for (size_t i = 0; i < n_perm; i++)
            putf(e, "%s%d", i ? "," : "", (int)perm[i]);
        put(e, ")");
    }
}

/* An OpSharding as XLA's HloSharding::ToString writes it. */
static bool emit_sharding(Emit *e, const Xla__OpSharding *s, int depth)
{
    if (depth > 32)
        return emit_fail(e, "tuple shardings nested more than 32 deep");
    if (s->type == 2) {           /* TUPLE */
        put(e, "{");
        for (size_t i = 0; i < s->n_tuple_shardings; i++) {
            if (i)
                put(e, ", ");
            if (!emit_sharding(e, s->tuple_shardings[i], depth + 1))
                return false;
        }
        put(e, "}");
        return true;
    }
    put(e, "{");
    switch (s->type) {
    case 0: put(e, "replicated"); break;
    case 4: put(e, "manual"); break;
    case 5: put(e, "unknown"); break;
    case 6: put(e, "unreduced"); break;
    case 1:
        if (s->n_tile_assignment_devices != 1)
            return emit_fail(e, "sharding: a maximal sharding with %zu devices", s->n_tile_assignment_devices);
        putf(e, "maximal device=%" PRId64, s->tile_assignment_devices[0]);
        break;
    case 3:
        put(e, "devices=[");
        put_ints(e, s->tile_assignment_dimensions, s->n_tile_assignment_dimensions, ",");
        put(e, "]");
        if (s->n_iota_reshape_dims) {
            emit_iota(e, s->iota_reshape_dims, s->n_iota_reshape_dims, s->iota_transpose_perm,
                      s->n_iota_transpose_perm);
        } else {
            put_ints(e, s->tile_assignment_devices, s->n_tile_assignment_devices, ",");
        }
        if (s->replicate_on_last_tile_dim)
            put(e, " last_tile_dim_replicate");
        if (s->n_last_tile_dims) {
            put(e, " last_tile_dims={");
            for (size_t i = 0; i < s->n_last_tile_dims; i++) {
                const char *n = sharding_type_name(s->last_tile_dims[i]);
                if (!n)
                    return emit_fail(e, "sharding.last_tile_dims[%zu]: type %d", i, (int)s->last_tile_dims[i]);
                putf(e, "%s%s", i ? ", " : "", n);
            }
            put(e, "}");
        }
        break;
    default:
        return emit_fail(e, "sharding.type %d is not an OpSharding type", (int)s->type);
    }
    if (s->is_shard_group)
        putf(e, " %s %" PRId64, s->shard_group_type == 1 ? "shard_like" : "shard_as", s->shard_group_id);
    if (s->n_metadata) {
        put(e, " metadata=");
        if (s->n_metadata > 1)
            put(e, "{");
        for (size_t i = 0; i < s->n_metadata; i++) {
            put(e, i ? ", {" : "{");
            metadata_into(&e->t, s->metadata[i]);
            put(e, "}");
        }
        if (s->n_metadata > 1)
            put(e, "}");
    }
    put(e, "}");
    return true;
}

static int cmp_entry(const void *a, const void *b)
{
    const Xla__FrontendAttributes__Entry *x = *(Xla__FrontendAttributes__Entry *const *)a;
    const Xla__FrontendAttributes__Entry *y = *(Xla__FrontendAttributes__Entry *const *)b;
    return strcmp(x->key, y->key);
}

static void emit_frontend_attributes(Emit *e, const Xla__FrontendAttributes *fa)
{
    Xla__FrontendAttributes__Entry **sorted = xmalloc((fa->n_map + 1) * sizeof *sorted);
    memcpy(sorted, fa->map, fa->n_map * sizeof *sorted);
    qsort(sorted, fa->n_map, sizeof *sorted, cmp_entry);
    put(e, "frontend_attributes={");
    for (size_t i = 0; i < fa->n_map; i++) {
        putf(e, "%s%s=", i ? "," : "", sorted[i]->key);
        put_quoted(e, sorted[i]->value);
    }
    put(e, "}");
    free(sorted);
}

/* --- instruction attributes ------------------------------------------ */

/* (The first characters compared inline: emit_attributes asks this of
 * every instruction some forty times.) */
static bool op_is(const Instr *in, const char *op) { return in->opcode[0] == op[0] && strcmp(in->opcode, op) == 0; }

static bool op_in(const Instr *in, const char *const *ops)
{
    for (; *ops; ops++)
        if (op_is(in, *ops))
            return true;
    return false;
}

/* The instruction index of id in the current computation, -1 if none. */
static int find_id(const Emit *e, int64_t id)
{
    if (e->dense) {
        uint64_t k = (uint64_t)id - (uint64_t)e->ids[0];
        return k < e->n_dense ? e->dense[k] : -1;
    }
    size_t lo = 0, hi = e->n_ids;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (e->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < e->n_ids && e->ids[lo] == id ? e->id_at[lo] : -1;
}

static const Comp *find_comp(const Emit *e, int64_t id)
{
    size_t lo = 0, hi = e->n_comp_ids;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (e->comp_ids[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < e->n_comp_ids && e->comp_ids[lo].id == id ? e->m->computations[e->comp_ids[lo].at] : NULL;
}

static bool emit_comp_ref(Emit *e, const Instr *in, size_t k, const char *attr)
{
    const Comp *c = find_comp(e, in->called_computation_ids[k]);
    if (!c)
        return emit_fail(e, "called_computation_ids[%zu]: no computation %" PRId64, k,
                         in->called_computation_ids[k]);
    if (attr) {
        Direct *d = &e->direct;
        int i = 0;
        while (i < IR_COMP_COUNT && strcmp(ir_comp_attr_name[i], attr) != 0)
            i++;
        if (i == IR_COMP_COUNT) {
            putf(e, ", %s=%%%s", attr, c->name);
        } else {
            d->comp_k[d->n_comps] = (IrCompAttr)i;
            d->comp_name[d->n_comps++] = c->name;
        }
    } else {
        putf(e, "%s%%%s", k ? ", " : "", c->name);
    }
    return true;
}

static bool emit_called(Emit *e, const Instr *in)
{
    size_t n = in->n_called_computation_ids;
    if (n == 0)
        return true;
    if (op_is(in, "while")) {
        if (n != 2)
            return emit_fail(e, "a while calls %zu computations, not 2 (body, condition)", n);
        return emit_comp_ref(e, in, 1, "condition") && emit_comp_ref(e, in, 0, "body");
    }
    if (op_is(in, "select-and-scatter")) {
        if (n != 2)
            return emit_fail(e, "a select-and-scatter calls %zu computations, not 2", n);
        return emit_comp_ref(e, in, 0, "select") && emit_comp_ref(e, in, 1, "scatter");
    }
    if (op_is(in, "conditional")) {
        const Lite *pred = NULL;
        if (in->n_operand_ids > 0) {
            int at = find_id(e, in->operand_ids[0]);
            pred = at >= 0 ? &e->lc->v[at] : NULL;
        }
        if (n == 2 && pred && pred->has_shape && pred->elem_type == 1)
            return emit_comp_ref(e, in, 0, "true_computation") && emit_comp_ref(e, in, 1, "false_computation");
        put(e, ", branch_computations={");
        for (size_t k = 0; k < n; k++)
            if (!emit_comp_ref(e, in, k, NULL))
                return false;
        put(e, "}");
        return true;
    }
    if (op_is(in, "fusion") || op_is(in, "async-start") || op_is(in, "async-update") || op_is(in, "async-done")) {
        if (n != 1)
            return emit_fail(e, "a %s calls %zu computations, not 1", in->opcode, n);
        return emit_comp_ref(e, in, 0, "calls");
    }
    if (op_is(in, "custom-call") && n > 1) {
        put(e, ", called_computations={");
        for (size_t k = 0; k < n; k++)
            if (!emit_comp_ref(e, in, k, NULL))
                return false;
        put(e, "}");
        return true;
    }
    if (n != 1)
        return emit_fail(e, "a %s calls %zu computations, not 1", in->opcode, n);
    return emit_comp_ref(e, in, 0, "to_apply");
}

static const char *const collective_ops[] = {
    "all-reduce", "all-reduce-start", "all-gather", "all-gather-start", "reduce-scatter", "all-to-all",
    "ragged-all-to-all", "collective-broadcast", NULL
};

/* Replica groups come in four places, newest first: an iota list
 * (iota_collective_device_list, field 92; inside collective_device_list in
 * XLA before 2025), explicit groups in collective_device_list, or the
 * original replica_groups field. */
static void emit_replica_groups(Emit *e, const Instr *in)
{
    const Xla__CollectiveDeviceListProto *dl = in->collective_device_list;
    const Xla__IotaReplicaGroupListProto *io = in->iota_collective_device_list;
    if (!io && dl)
        io = dl->iota_replica_group_list;
    if (io) {
        putf(e, ", replica_groups=[%" PRId64 ",%" PRId64 "]", io->num_replica_groups, io->num_devices_per_group);
        emit_iota(e, io->iota_reshape_dims, io->n_iota_reshape_dims, io->iota_transpose_perm,
                  io->n_iota_transpose_perm);
        return;
    }
    e->direct.has_groups = true;
    e->direct.n_groups = dl && dl->n_replica_groups ? dl->n_replica_groups : in->n_replica_groups;
    e->direct.groups = dl && dl->n_replica_groups ? dl->replica_groups : in->replica_groups;
}

static const char *dim_char(int64_t d, const int64_t *spatial, size_t n_spatial, char b, char f, int64_t db,
                            int64_t df, char *out)
{
    if (d == db)
        *out = b;
    else if (d == df)
        *out = f;
    else {
        *out = '?';
        for (size_t k = 0; k < n_spatial && k < 10; k++)
            if (spatial[k] == d)
                *out = (char)('0' + k);
    }
    return out;
}

static bool emit_labels(Emit *e, size_t rank, const int64_t *spatial, size_t n_spatial, char b, char f, int64_t db,
                        int64_t df)
{
    for (size_t d = 0; d < rank; d++) {
        char c;
        dim_char((int64_t)d, spatial, n_spatial, b, f, db, df, &c);
        if (c == '?')
            return emit_fail(e, "convolution_dimension_numbers: dimension %zu has no role", d);
        strbuf_putc(&e->t, c);
    }
    return true;
}

static bool emit_conv_dims(Emit *e, const Xla__ConvolutionDimensionNumbers *c)
{
    size_t ns = c->n_input_spatial_dimensions;
    if (ns > 10 || c->n_kernel_spatial_dimensions != ns || c->n_output_spatial_dimensions != ns)
        return emit_fail(e, "convolution_dimension_numbers: %zu, %zu and %zu spatial dimensions",
                         c->n_input_spatial_dimensions, c->n_kernel_spatial_dimensions,
                         c->n_output_spatial_dimensions);
    put(e, ", dim_labels=");
    return emit_labels(e, ns + 2, c->input_spatial_dimensions, ns, 'b', 'f', c->input_batch_dimension,
                       c->input_feature_dimension) &&
           (put(e, "_"), true) &&
           emit_labels(e, ns + 2, c->kernel_spatial_dimensions, ns, 'i', 'o', c->kernel_input_feature_dimension,
                       c->kernel_output_feature_dimension) &&
           (put(e, "->"), true) &&
           emit_labels(e, ns + 2, c->output_spatial_dimensions, ns, 'b', 'f', c->output_batch_dimension,
                       c->output_feature_dimension);
}

static void emit_window(Emit *e, const Xla__Window *w)
{
    size_t n = w->n_dimensions;
    if (n == 0)
        return;
    bool stride = false, pad = false, lhs = false, rhs = false, rev = false;
    for (size_t i = 0; i < n; i++) {
        const Xla__WindowDimension *d = w->dimensions[i];
        stride |= d->stride != 1;
        pad |= d->padding_low != 0 || d->padding_high != 0;
        lhs |= d->base_dilation != 1;
        rhs |= d->window_dilation != 1;
        rev |= d->window_reversal;
    }
    put(e, ", window={size=");
    for (size_t i = 0; i < n; i++)
        putf(e, "%s%" PRId64, i ? "x" : "", w->dimensions[i]->size);
    if (stride) {
        put(e, " stride=");
        for (size_t i = 0; i < n; i++)
            putf(e, "%s%" PRId64, i ? "x" : "", w->dimensions[i]->stride);
    }
    if (pad) {
        put(e, " pad=");
        for (size_t i = 0; i < n; i++)
            putf(e, "%s%" PRId64 "_%" PRId64, i ? "x" : "", w->dimensions[i]->padding_low,
                 w->dimensions[i]->padding_high);
    }
    if (lhs) {
        put(e, " lhs_dilate=");
        for (size_t i = 0; i < n; i++)
            putf(e, "%s%" PRId64, i ? "x" : "", w->dimensions[i]->base_dilation);
    }
    if (rhs) {
        put(e, " rhs_dilate=");
        for (size_t i = 0; i < n; i++)
            putf(e, "%s%" PRId64, i ? "x" : "", w->dimensions[i]->window_dilation);
    }
    if (rev) {
        put(e, " rhs_reversal=");
        for (size_t i = 0; i < n; i++)
            putf(e, "%s%d", i ? "x" : "", w->dimensions[i]->window_reversal ? 1 : 0);
    }
    put(e, "}");
}

#define NAMED(e, v) proto_enum_name(&(e), (v))

static bool enum_word(Emit *e, const char *attr, const char *word, int v)
{
    if (!word)
        return emit_fail(e, "%s: value %d is not one XLA defines", attr, v);
    putf(e, ", %s=%s", attr, word);
    return true;
}

/* Default comparison type for an operand element type (XLA prints type=
 * only when it differs). */
static const char *default_compare_type(IrElemType t)
{
    if (ir_type_is_float(t) || ir_type_is_complex(t))
        return "FLOAT";
    if (ir_type_is_signed_int(t))
        return "SIGNED";
    return "UNSIGNED";
}

static void emit_shape_index(Emit *e, const int64_t *v, size_t n)
{
    put(e, "{");
    put_ints(e, v, n, ",");
    put(e, "}");
}

/* Fields hlo.proto declares only to find them: each changes what the
 * module computes, and hlocheck carries none of them. */
static bool refuse_unsupported(Emit *e, const Instr *in)
{
    static const struct {
        size_t offset;
        const char *field, *what;
    } fields[] = {
        { offsetof(Instr, dot_sparsity), "dot_sparsity", "sparse dot operands" },
        { offsetof(Instr, ragged_dot_dimension_numbers), "ragged_dot_dimension_numbers", "ragged-dot" },
        { offsetof(Instr, mesh_axes_replica_group_list), "mesh_axes_replica_group_list",
          "replica groups given as mesh axes" },
        { offsetof(Instr, sparsity_config), "sparsity_config", "sparse operands" },
    };
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        const ProtobufCBinaryData *b = (const ProtobufCBinaryData *)((const char *)in + fields[k].offset);
        if (b->len)
            return emit_fail(e, "%s is set: %s are not supported by hlocheck", fields[k].field, fields[k].what);
    }
    return true;
}

static bool emit_attributes(Emit *e, const Instr *in)
{
    if (!refuse_unsupported(e, in))
        return false;
    static const char *const dims_ops[] = {
        "broadcast", "transpose", "reduce", "reverse", "concatenate", "sort", "map", "all-gather", "all-gather-start",
        "reduce-scatter", "get-dimension-size", "set-dimension-size", NULL
    };
    if (op_in(in, dims_ops) || (op_is(in, "all-to-all") && in->n_dimensions))
        put_list(e, IR_LIST_DIMENSIONS, in->dimensions, in->n_dimensions);
    if (op_is(in, "iota")) {
        if (in->n_dimensions != 1)
            return emit_fail(e, "an iota has %zu dimensions (its iota_dimension), not 1", in->n_dimensions);
        put_int_attr(e, IR_INT_IOTA_DIMENSION, in->dimensions[0]);
    }
    if (op_is(in, "get-tuple-element"))
        put_int_attr(e, IR_INT_INDEX, in->tuple_index);
    if (in->channel_id > 0)
        put_int_attr(e, IR_INT_CHANNEL_ID, in->channel_id);
    if (op_in(in, collective_ops))
        emit_replica_groups(e, in);
    if (in->n_source_target_pairs) {
        put(e, ", source_target_pairs={");
        for (size_t i = 0; i < in->n_source_target_pairs; i++)
            putf(e, "%s{%" PRId64 ",%" PRId64 "}", i ? "," : "", in->source_target_pairs[i]->source,
                 in->source_target_pairs[i]->target);
        put(e, "}");
    }
    if (in->use_global_device_ids)
        put(e, ", use_global_device_ids=true");
    if (in->constrain_layout && !op_is(in, "custom-call"))
        put(e, ", constrain_layout=true");
    if (op_is(in, "slice")) {
        e->direct.has_slice = true;
        e->direct.slice = in->slice_dimensions;
        e->direct.n_slice = in->n_slice_dimensions;
    }
    if (op_is(in, "dynamic-slice"))
        put_list(e, IR_LIST_DYNAMIC_SLICE_SIZES, in->dynamic_slice_sizes, in->n_dynamic_slice_sizes);
    if (in->padding_config && op_is(in, "pad")) {
        put(e, ", padding=");
        for (size_t i = 0; i < in->padding_config->n_dimensions; i++) {
            const Xla__PaddingConfig__PaddingConfigDimension *d = in->padding_config->dimensions[i];
            putf(e, "%s%" PRId64 "_%" PRId64, i ? "x" : "", d->edge_padding_low, d->edge_padding_high);
            if (d->interior_padding)
                putf(e, "_%" PRId64, d->interior_padding);
        }
    }
    if (in->window)
        emit_window(e, in->window);
    if (in->convolution_dimension_numbers && !emit_conv_dims(e, in->convolution_dimension_numbers))
        return false;
    if (in->feature_group_count > 1)
        put_int_attr(e, IR_INT_FEATURE_GROUP_COUNT, in->feature_group_count);
    if (in->batch_group_count > 1)
        put_int_attr(e, IR_INT_BATCH_GROUP_COUNT, in->batch_group_count);
    if (in->dot_dimension_numbers) {
        const Xla__DotDimensionNumbers *d = in->dot_dimension_numbers;
        if (d->n_lhs_batch_dimensions)
            put_list(e, IR_LIST_LHS_BATCH_DIMS, d->lhs_batch_dimensions, d->n_lhs_batch_dimensions);
        put_list(e, IR_LIST_LHS_CONTRACTING_DIMS, d->lhs_contracting_dimensions, d->n_lhs_contracting_dimensions);
        if (d->n_rhs_batch_dimensions)
            put_list(e, IR_LIST_RHS_BATCH_DIMS, d->rhs_batch_dimensions, d->n_rhs_batch_dimensions);
        put_list(e, IR_LIST_RHS_CONTRACTING_DIMS, d->rhs_contracting_dimensions, d->n_rhs_contracting_dimensions);
    }
    if (in->gather_dimension_numbers) {
        const Xla__GatherDimensionNumbers *g = in->gather_dimension_numbers;
        put_list(e, IR_LIST_OFFSET_DIMS, g->offset_dims, g->n_offset_dims);
        put_list(e, IR_LIST_COLLAPSED_SLICE_DIMS, g->collapsed_slice_dims, g->n_collapsed_slice_dims);
        put_list(e, IR_LIST_START_INDEX_MAP, g->start_index_map, g->n_start_index_map);
        if (g->n_operand_batching_dims)
            put_list(e, IR_LIST_OPERAND_BATCHING_DIMS, g->operand_batching_dims, g->n_operand_batching_dims);
        if (g->n_start_indices_batching_dims)
            put_list(e, IR_LIST_START_INDICES_BATCHING_DIMS, g->start_indices_batching_dims,
                     g->n_start_indices_batching_dims);
        put_int_attr(e, IR_INT_INDEX_VECTOR_DIM, g->index_vector_dim);
        put_list(e, IR_LIST_SLICE_SIZES, in->gather_slice_sizes, in->n_gather_slice_sizes);
    }
    if (in->scatter_dimension_numbers) {
        const Xla__ScatterDimensionNumbers *s = in->scatter_dimension_numbers;
        put_list(e, IR_LIST_UPDATE_WINDOW_DIMS, s->update_window_dims, s->n_update_window_dims);
        put_list(e, IR_LIST_INSERTED_WINDOW_DIMS, s->inserted_window_dims, s->n_inserted_window_dims);
        put_list(e, IR_LIST_SCATTER_DIMS_TO_OPERAND_DIMS, s->scatter_dims_to_operand_dims, s->n_scatter_dims_to_operand_dims);
        if (s->n_input_batching_dims)
            put_list(e, IR_LIST_INPUT_BATCHING_DIMS, s->input_batching_dims, s->n_input_batching_dims);
        if (s->n_scatter_indices_batching_dims)
            put_list(e, IR_LIST_SCATTER_INDICES_BATCHING_DIMS, s->scatter_indices_batching_dims,
                     s->n_scatter_indices_batching_dims);
        if (!put_int_attr(e, IR_INT_INDEX_VECTOR_DIM, s->index_vector_dim))
            return false;
    }
    if (in->indices_are_sorted)
        put(e, ", indices_are_sorted=true");
    if (in->unique_indices)
        put(e, ", unique_indices=true");
    if (in->comparison_direction && in->comparison_direction[0]) {
        if (!good_name(in->comparison_direction))
            return emit_fail(e, "comparison_direction '%s'", in->comparison_direction);
        putf(e, ", direction=%s", in->comparison_direction);
        if (in->comparison_type && in->comparison_type[0]) {
            IrElemType ot = IR_TYPE_INVALID;
            if (in->n_operand_ids) {
                int at = find_id(e, in->operand_ids[0]);
                if (at >= 0 && e->lc->v[at].has_shape)
                    ot = type_of(e->lc->v[at].elem_type);
            }
            if (!good_name(in->comparison_type))
                return emit_fail(e, "comparison_type '%s'", in->comparison_type);
            if (ot == IR_TYPE_INVALID || strcmp(in->comparison_type, default_compare_type(ot)) != 0)
                putf(e, ", type=%s", in->comparison_type);
        }
    }
    if (op_is(in, "reduce-precision")) {
        put_int_attr(e, IR_INT_EXPONENT_BITS, in->exponent_bits);
        put_int_attr(e, IR_INT_MANTISSA_BITS, in->mantissa_bits);
    }
    if (op_is(in, "rng") && !enum_word(e, "distribution", NAMED(proto_distribution, in->distribution),
                                       in->distribution))
        return false;
    if (op_is(in, "rng-bit-generator") &&
        !enum_word(e, "algorithm", NAMED(proto_rng_algorithm, in->rng_algorithm), in->rng_algorithm))
        return false;
    if (op_is(in, "fft")) {
        if (!enum_word(e, "fft_type", NAMED(proto_fft_type, in->fft_type), in->fft_type))
            return false;
        put_list(e, IR_LIST_FFT_LENGTH, in->fft_length, in->n_fft_length);
    }
    if (op_is(in, "batch-norm-training") || op_is(in, "batch-norm-inference") || op_is(in, "batch-norm-grad"))
        putf(e, ", epsilon=%g, feature_index=%" PRId64, (double)in->epsilon, in->feature_index);
    if (op_is(in, "topk"))
        putf(e, ", k=%" PRId64 ", largest=%s", in->k, in->largest ? "true" : "false");
    if (op_is(in, "rng-get-and-update-state"))
        putf(e, ", delta=%" PRId64, in->delta);
    if (in->is_stable)
        put(e, ", is_stable=true");
    if (in->is_host_transfer)
        put(e, ", is_host_transfer=true");
    if (in->fusion_kind && in->fusion_kind[0]) {
        if (!good_name(in->fusion_kind))
            return emit_fail(e, "fusion_kind '%s'", in->fusion_kind);
        putf(e, ", kind=%s", in->fusion_kind);
    }
    if (in->precision_config) {
        const Xla__PrecisionConfig *p = in->precision_config;
        bool any = false;
        for (size_t i = 0; i < p->n_operand_precision; i++)
            any |= p->operand_precision[i] != 0;
        if (any) {
            put(e, ", operand_precision={");
            for (size_t i = 0; i < p->n_operand_precision; i++) {
                const char *w = NAMED(proto_precision, p->operand_precision[i]);
                if (!w)
                    return emit_fail(e, "precision_config.operand_precision[%zu]: %d", i,
                                     (int)p->operand_precision[i]);
                putf(e, "%s%s", i ? "," : "", w);
            }
            put(e, "}");
        }
        if (p->algorithm && !enum_word(e, "algorithm", NAMED(proto_dot_algorithm, p->algorithm), p->algorithm))
            return false;
    }
    if (in->triangular_solve_options) {
        const Xla__TriangularSolveOptions *o = in->triangular_solve_options;
        putf(e, ", left_side=%s, lower=%s, unit_diagonal=%s", o->left_side ? "true" : "false",
             o->lower ? "true" : "false", o->unit_diagonal ? "true" : "false");
        if (!enum_word(e, "transpose_a", NAMED(proto_transpose, o->transpose_a), o->transpose_a))
            return false;
    }
    if (in->cholesky_options)
        putf(e, ", lower=%s", in->cholesky_options->lower ? "true" : "false");
    if (in->parameter_replication && in->parameter_replication->n_replicated_at_leaf_buffers) {
        put(e, ", parameter_replication={");
        for (size_t i = 0; i < in->parameter_replication->n_replicated_at_leaf_buffers; i++)
            putf(e, "%s%s", i ? "," : "", in->parameter_replication->replicated_at_leaf_buffers[i] ? "true" : "false");
        put(e, "}");
    }
    if (op_is(in, "custom-call")) {
        put(e, ", custom_call_target=");
        put_quoted(e, in->custom_call_target ? in->custom_call_target : "");
        /* XLA's order: the target, the operand layouts, then the options. */
        if (in->constrain_layout) {
            put(e, ", operand_layout_constraints={");
            for (size_t i = 0; i < in->n_operand_shapes_with_layout; i++) {
                if (i)
                    put(e, ", ");
                if (!emit_shape(e, in->operand_shapes_with_layout[i], 0))
                    return false;
            }
            put(e, "}");
        }
        if (in->custom_call_has_side_effect)
            put(e, ", custom_call_has_side_effect=true");
        if (in->n_output_operand_aliasing) {
            put(e, ", output_to_operand_aliasing={");
            for (size_t i = 0; i < in->n_output_operand_aliasing; i++) {
                const Xla__OutputOperandAliasing *a = in->output_operand_aliasing[i];
                if (i)
                    put(e, ", ");
                emit_shape_index(e, a->output_shape_index, a->n_output_shape_index);
                putf(e, ": (%" PRId64 ", ", a->operand_index);
                emit_shape_index(e, a->operand_shape_index, a->n_operand_shape_index);
                put(e, ")");
            }
            put(e, "}");
        }
        if (in->custom_call_schedule &&
            !enum_word(e, "schedule", NAMED(proto_schedule, in->custom_call_schedule), in->custom_call_schedule))
            return false;
        /* XLA's text default is API_VERSION_ORIGINAL (1); a proto's 0 is
         * API_VERSION_UNSPECIFIED, which XLA prints. */
        if (in->custom_call_api_version != 1 &&
            !enum_word(e, "api_version", NAMED(proto_api_version, in->custom_call_api_version),
                       in->custom_call_api_version))
            return false;
    }
    if (in->infeed_config.len) {
        put(e, ", infeed_config=\"");
        put_escaped(e, (const char *)in->infeed_config.data, in->infeed_config.len);
        put(e, "\"");
    }
    if (in->outfeed_config.len) {
        put(e, ", outfeed_config=\"");
        put_escaped(e, (const char *)in->outfeed_config.data, in->outfeed_config.len);
        put(e, "\"");
    }
    if (in->outfeed_shape && op_is(in, "outfeed")) {
        put(e, ", outfeed_shape=");
        if (!emit_shape(e, in->outfeed_shape, 0))
            return false;
    }
    if (in->async_execution_thread && in->async_execution_thread[0] && strcmp(in->async_execution_thread, "main")) {
        put(e, ", async_execution_thread=");
        put_quoted(e, in->async_execution_thread);
    }
    if (in->is_composite)
        put(e, ", is_composite=true");
    if (!emit_called(e, in))
        return false;
    if (in->n_control_predecessor_ids) {
        put(e, ", control-predecessors={");
        for (size_t k = 0; k < in->n_control_predecessor_ids; k++) {
            int at = find_id(e, in->control_predecessor_ids[k]);
            if (at < 0)
                return emit_fail(e, "control_predecessor_ids[%zu]: no instruction %" PRId64 " in computation %s", k,
                                 in->control_predecessor_ids[k], e->c->name);
            putf(e, "%s%%%s", k ? ", " : "", e->lc->v[at].name);
        }
        put(e, "}");
    }
    if (op_is(in, "domain")) {
        /* The only domain XLA serializes is a sharding domain.  XLA writes
         * the operand side's sharding (the text's exit=) as
         * domain_entry_sharding and the user side's (entry=) as
         * domain_exit_sharding, and reads them back the same way. */
        if (!in->domain_entry_sharding || !in->domain_exit_sharding)
            return emit_fail(e, "a domain without domain_entry_sharding and domain_exit_sharding");
        put(e, ", domain={kind=\"sharding\", entry=");
        if (!emit_sharding(e, in->domain_exit_sharding, 0))
            return false;
        put(e, ", exit=");
        if (!emit_sharding(e, in->domain_entry_sharding, 0))
            return false;
        put(e, "}");
    }
    if (in->sharding) {
        put(e, ", sharding=");
        if (!emit_sharding(e, in->sharding, 0))
            return false;
    }
    if (in->frontend_attributes && in->frontend_attributes->n_map) {
        put(e, ", ");
        emit_frontend_attributes(e, in->frontend_attributes);
    }
    if (in->result_accuracy && in->result_accuracy->specs_case == XLA__RESULT_ACCURACY__SPECS_MODE &&
        in->result_accuracy->mode == 1)
        put(e, ", result_accuracy={mode=highest}");
    if (!metadata_empty(in->metadata)) {
        e->md_at = e->md.len;
        strbuf_putc(&e->md, '{');
        metadata_into(&e->md, in->metadata);
        strbuf_putc(&e->md, '}');
        e->md_len = e->md.len - e->md_at;
    }
    if (in->backend_config.len) {
        const char *s = (const char *)in->backend_config.data;
        size_t n = in->backend_config.len;
        bool braced = s[0] == '{' && s[n - 1] == '}' && memchr(s, '\n', n) == NULL && memchr(s, 0, n) == NULL;
        put(e, ", backend_config=");
        if (braced) {
            strbuf_putn(&e->t, s, n);
        } else {
            put(e, "\"");
            put_escaped(e, s, n);
            put(e, "\"");
        }
    }
    return true;
}

/* Moves an error the parser found in the header's text (the only text
 * the builder reads whole: the module line and the stack frames) to the
 * module's field path. */
static void relocate_header(const Emit *e, Error *err)
{
    if (err->loc.line < 1)
        return;
    char path[300];
    snprintf(path, sizeof path, "%s", e->prefix);
    if (path[0])
        path[strlen(path) - 1] = 0;     /* "hlo_module." names the module */
    char msg[sizeof err->msg];
    memcpy(msg, err->msg, sizeof msg);
    Error moved = { 0 };
    fail_at(&moved, e->file, path, NULL, msg);
    moved.code = err->code;
    *err = moved;
}

/* The instruction's metadata, as text, among its raw attributes where its
 * text would have put it: last, or before a backend_config (the last
 * attribute emit_attributes writes). */
static bool give_metadata(IrModule *mod, IrInstr *ins, const char *text, size_t n)
{
    IrInstrInfo *info = ins->info;
    IrRawAttr *raw = arena_alloc_array(mod->arena, (size_t)info->n_raw_attrs + 1, sizeof *raw);
    const char *value = arena_strndup(mod->arena, text, n);
    if (!raw || !value)
        return false;
    int k = info->n_raw_attrs;
    if (k && info->raw_attrs)
        memcpy(raw, info->raw_attrs, (size_t)k * sizeof *raw);
    raw[k] = (IrRawAttr){ "metadata", value };
    if (k && strcmp(raw[k - 1].name, "backend_config") == 0) {
        IrRawAttr t = raw[k - 1];
        raw[k - 1] = raw[k];
        raw[k] = t;
    }
    info->raw_attrs = raw;
    info->n_raw_attrs = k + 1;
    return true;
}

/* --- computations ---------------------------------------------------- */


static int cmp_id_at(const void *a, const void *b)
{
    int64_t x = ((const IdAt *)a)->id, y = ((const IdAt *)b)->id;
    return x < y ? -1 : x > y;
}

/* The order the instructions are written in: the schedule's when the
 * module has one for this computation, else the proto's, put in
 * dependency order (operands and control predecessors first) when it is
 * not already.  order[k] is an instruction index. */
static bool instruction_order(Emit *e, const Xla__HloScheduleProto__InstructionSequence *seq, int *order)
{
    const Comp *c = e->c;
    size_t n = e->lc->n;
    if (seq) {
        if (seq->n_instruction_ids != n)
            return emit_fail(e, "the schedule lists %zu instructions; the computation has %zu",
                             seq->n_instruction_ids, n);
        char *used = xcalloc(n ? n : 1, 1);
        for (size_t k = 0; k < n; k++) {
            int at = find_id(e, seq->instruction_ids[k]);
            if (at < 0 || used[at]) {
                free(used);
                return emit_fail(e, "schedule: instruction %" PRId64 " is %s", seq->instruction_ids[k],
                                 at < 0 ? "not in the computation" : "listed twice");
            }
            used[at] = 1;
            order[k] = at;
        }
        free(used);
        return true;
    }
    /* Depth-first, operands in order, from each instruction in proto order:
     * the proto's own order when it is already a dependency order.  state:
     * 0 new, 1 on the stack, 2 written. */
    char *state = xcalloc(n ? n : 1, 1);
    int *stack = xmalloc((n + 1) * sizeof *stack);
    size_t *next_edge = xcalloc(n ? n : 1, sizeof *next_edge);
    size_t written = 0;
    bool ok = true;
    for (size_t s0 = 0; s0 < n && ok; s0++) {
        if (state[s0])
            continue;
        size_t top = 0;
        stack[top++] = (int)s0;
        state[s0] = 1;
        while (top && ok) {
            int i = stack[top - 1];
            const Lite *in = &e->lc->v[i];
            size_t n_edges = (size_t)in->n_operands + in->n_control;
            if (next_edge[i] < n_edges) {
                size_t k = next_edge[i]++;
                int64_t id = in->edges[k];
                int j = find_id(e, id);
                if (j < 0) {
                    size_t at = path_push(&e->path, ".instructions[%d]", i);
                    if (k < in->n_operands)
                        emit_fail(e, "operand_ids[%zu]: no instruction %" PRId64 " in computation %s", k, id, c->name);
                    else
                        emit_fail(e, "control_predecessor_ids[%zu]: no instruction %" PRId64 " in computation %s",
                                  k - in->n_operands, id, c->name);
                    path_pop(&e->path, at);
                    ok = false;
                } else if (state[j] == 1) {
                    size_t at = path_push(&e->path, ".instructions[%d]", i);
                    emit_fail(e, "operand %%%s (id %" PRId64 ") depends on this instruction: the operands form a "
                              "cycle", e->lc->v[j].name, id);
                    path_pop(&e->path, at);
                    ok = false;
                } else if (state[j] == 0) {
                    state[j] = 1;
                    stack[top++] = j;
                }
            } else {
                state[i] = 2;
                order[written++] = i;
                top--;
            }
        }
    }
    free(state);
    free(stack);
    free(next_edge);
    return ok;
}

static bool emit_nomem(Emit *e);
static bool builder_fail(Emit *e);

/* Shapes read once per distinct ShapeProto: a module of 100k
 * instructions has a few hundred.  Keyed by the shape's bytes; the
 * instructions given the same bytes share one IrShape (which the IR
 * allows: no one changes a shape in place). */
static uint64_t bytes_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211u;
    return h;
}

/* The slot of bytes in the cache: theirs, or the empty one they go in. */
static ShapeSlot *shape_slot(ShapeCache *c, const uint8_t *p, size_t n)
{
    size_t mask = c->cap - 1, i = (size_t)bytes_hash(p, n) & mask;
    while (c->v[i].shape && !(c->v[i].len == n && memcmp(c->v[i].bytes, p, n) == 0))
        i = (i + 1) & mask;
    return &c->v[i];
}

static bool shape_remember(ShapeCache *c, const uint8_t *p, size_t n, IrShape *shape)
{
    if (2 * (c->n + 1) > c->cap) {
        ShapeCache g = { xcalloc_try(c->cap ? 2 * c->cap : 256, sizeof *g.v), 0, c->cap ? 2 * c->cap : 256 };
        if (!g.v)
            return false;
        for (size_t i = 0; i < c->cap; i++)
            if (c->v[i].shape)
                *shape_slot(&g, c->v[i].bytes, c->v[i].len) = c->v[i];
        g.n = c->n;
        free(c->v);
        *c = g;
    }
    *shape_slot(c, p, n) = (ShapeSlot){ p, n, shape };
    c->n++;
    return true;
}

/* Instruction l's shape if an earlier instruction had the same bytes, else NULL. */
static IrShape *cached_shape(Emit *e, const Lite *l)
{
    return l->shape && e->shapes.cap ? shape_slot(&e->shapes, l->shape, l->shape_len)->shape : NULL;
}

/* Instruction l's shape, not cached: written and read (then remembered);
 * NULL on error. */
static IrShape *shape_of(Emit *e, const Lite *l, const Instr *in)
{
    size_t mark = e->t.len, at = path_push(&e->path, ".shape");
    bool ok = emit_shape(e, in->shape, 0);
    path_pop(&e->path, at);
    if (!ok)
        return NULL;
    IrShape *shape = ir_build_shape(e->b, e->t.s + mark, e->t.len - mark);
    e->t.len = mark;
    if (!shape)
        return builder_fail(e), NULL;
    if (l->shape && !shape_remember(&e->shapes, l->shape, l->shape_len, shape))
        return emit_nomem(e), NULL;
    return shape;
}

/* The instruction as the snippet ir_build_instr reads: opcode "("
 * [literal or parameter number] ")" attributes, and its shape (*shape,
 * unless the caller has it already).  Its name and operands go to the
 * builder as they are. */
static bool emit_instruction(Emit *e, const Lite *l, const Instr *in, IrShape **shape)
{
    if (!good_name(in->name))
        return emit_fail(e, "name '%s' is not an HLO instruction name", in->name ? in->name : "");
    if (!in->opcode || !in->opcode[0])
        return emit_fail(e, "no opcode");
    for (const char *q = in->opcode; *q; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '-'))
            return emit_fail(e, "opcode '%s' is not an HLO opcode", in->opcode);
    if (!*shape && !(*shape = shape_of(e, l, in)))
        return false;
    put(e, in->opcode);
    put(e, "(");
    if (op_is(in, "parameter")) {
        putf(e, "%" PRId64 ")", in->parameter_number);
    } else if (op_is(in, "constant")) {
        if (!in->literal)
            return emit_fail(e, "a constant without a literal");
        size_t at = path_push(&e->path, ".literal");
        if (!emit_literal(e, in->literal, in->shape, 0))
            return false;
        path_pop(&e->path, at);
        put(e, ")");
    } else {
        for (size_t k = 0; k < in->n_operand_ids; k++)
            if (find_id(e, in->operand_ids[k]) < 0)
                return emit_fail(e, "operand_ids[%zu]: no instruction %" PRId64 " in computation %s", k,
                                 in->operand_ids[k], e->c->name);
        put(e, ")");
    }
    return emit_attributes(e, in);
}

static void *arena_alloc_cb(void *a, size_t n);
static void arena_free_cb(void *a, void *p);

/* Instruction l unpacked alone, or NULL when out of memory.  One at a
 * time: the next load takes its place.  Into an arena emptied each time,
 * which keeps the memory in the cache and frees the message at once
 * (protobuf-c's own free walks every field of it). */
static Instr *load(const Emit *e, const Lite *l)
{
    arena_rewind(e->sk->one);
    ProtobufCAllocator alloc = { arena_alloc_cb, arena_free_cb, e->sk->one };
    return (Instr *)protobuf_c_message_unpack(&xla__hlo_instruction_proto__descriptor, &alloc, l->len, l->bytes);
}

/* Instruction l unpacked without its shape, which the cache has: the
 * shape is a third of what protobuf-c unpacks of an instruction. */
static Instr *load_without_shape(Emit *e, const Lite *l)
{
    size_t before = (size_t)(l->shape_field - l->bytes), after = (size_t)(l->shape + l->shape_len - l->bytes);
    e->strip.len = 0;
    strbuf_putn(&e->strip, (const char *)l->bytes, before);
    strbuf_putn(&e->strip, (const char *)l->bytes + after, l->len - after);
    arena_rewind(e->sk->one);
    ProtobufCAllocator alloc = { arena_alloc_cb, arena_free_cb, e->sk->one };
    return (Instr *)protobuf_c_message_unpack(&xla__hlo_instruction_proto__descriptor, &alloc, e->strip.len,
                                              (const uint8_t *)e->strip.s);
}

static bool emit_nomem(Emit *e)
{
    return error_set(e->err, ERR_NOMEM, (IrLoc){ e->file, 0, 0 }, "out of memory");
}

/* The shape of instruction l, unpacked for it. */
static bool emit_shape_of(Emit *e, const Lite *l)
{
    Instr *in = load(e, l);
    return in ? emit_shape(e, in->shape, 0) : emit_nomem(e);
}

static bool is_parameter(const Lite *l) { return strcmp(l->opcode, "parameter") == 0; }

/* Each parameter number once, from 0 to the count less one (XLA's
 * signature lists them by number). */
static bool check_parameter_numbers(Emit *e)
{
    const CompLites *lc = e->lc;
    size_t n = 0;
    for (size_t i = 0; i < lc->n; i++)
        n += is_parameter(&lc->v[i]);
    char *taken = xcalloc(n ? n : 1, 1);
    for (size_t i = 0; i < lc->n; i++) {
        const Lite *in = &lc->v[i];
        if (!is_parameter(in))
            continue;
        if (in->parameter_number < 0 || (size_t)in->parameter_number >= n || taken[in->parameter_number]) {
            size_t at = path_push(&e->path, ".instructions[%zu].parameter_number", i);
            emit_fail(e, "parameter number %" PRId64 " is %s (the computation has %zu parameters)",
                      in->parameter_number, in->parameter_number >= 0 && (size_t)in->parameter_number < n
                                                ? "given twice" : "out of range", n);
            path_pop(&e->path, at);
            free(taken);
            return false;
        }
        taken[in->parameter_number] = 1;
    }
    free(taken);
    return true;
}

/* e's id -> instruction index for the instructions lc (e->ids sorted,
 * e->id_at; or e->dense when the ids are near dense, as they most often
 * are: numbered from 0 or 1 on); false, with the error, when two share an
 * id.  The error names the smallest such id, at its second instruction. */
static bool index_ids(Emit *e, const CompLites *lc)
{
    size_t n = lc->n;
    free(e->ids);
    free(e->id_at);
    free(e->dense);
    e->ids = NULL;
    e->id_at = NULL;
    e->dense = NULL;
    e->n_ids = n;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        lo = lc->v[i].id < lo ? lc->v[i].id : lo;
        hi = lc->v[i].id > hi ? lc->v[i].id : hi;
    }
    uint64_t span = (uint64_t)hi - (uint64_t)lo;    /* + 1, which could wrap */
    int dup = -1, first = -1;
    if (span < 4 * (uint64_t)n) {
        span++;
        e->dense = xmalloc((size_t)span * sizeof *e->dense);
        e->n_dense = (size_t)span;
        e->ids = xmalloc(sizeof *e->ids);
        e->ids[0] = lo;             /* the table's base */
        for (size_t k = 0; k < span; k++)
            e->dense[k] = -1;
        for (size_t i = 0; i < n; i++) {
            int *slot = &e->dense[(uint64_t)lc->v[i].id - (uint64_t)lo];
            if (*slot < 0)
                *slot = (int)i;
            else if (dup < 0 || lc->v[i].id < lc->v[dup].id)
                dup = (int)i, first = *slot;
        }
    } else {
        IdAt *pairs = xmalloc(n * sizeof *pairs);
        for (size_t i = 0; i < n; i++)
            pairs[i] = (IdAt){ lc->v[i].id, (int)i };
        qsort(pairs, n, sizeof *pairs, cmp_id_at);
        e->ids = xmalloc(n * sizeof *e->ids);
        e->id_at = xmalloc(n * sizeof *e->id_at);
        for (size_t i = 0; i < n; i++) {
            e->ids[i] = pairs[i].id;
            e->id_at[i] = pairs[i].at;
            if (i && dup < 0 && pairs[i].id == pairs[i - 1].id)
                dup = pairs[i].at, first = pairs[i - 1].at;
        }
        free(pairs);
    }
    if (dup < 0)
        return true;
    size_t at = path_push(&e->path, ".instructions[%d].id", dup);
    emit_fail(e, "id %" PRId64 " is also the id of instructions[%d]", lc->v[dup].id, first);
    path_pop(&e->path, at);
    return false;
}

/* The Direct attributes of the instruction just built, copied into the
 * module's arena; false when out of memory. */
static bool give_direct(const Direct *d, IrBuilder *b, IrInstr *ins)
{
    IrModule *m = ir_build_module(b);
    for (int i = 0; i < d->n_comps; i++)
        if (!ir_build_comp_ref(b, &ins->info->comps[d->comp_k[i]], d->comp_name[i]))
            return false;
    for (int i = 0; i < d->n_lists; i++) {
        int64_t *v = NULL;
        if (d->list_n[i] && !(v = arena_alloc_array(m->arena, d->list_n[i], sizeof *v)))
            return false;
        if (d->list_n[i])
            memcpy(v, d->list_v[i], d->list_n[i] * sizeof *v);
        ir_instr_set_list(m, ins, d->list_k[i], (IrIntList){ true, (int)d->list_n[i], v });
        if (ins->lists == ir_no_lists)
            return false;
    }
    for (int i = 0; i < d->n_ints; i++) {
        ir_instr_set_int(m, ins, d->int_k[i], d->int_v[i]);
        if (ins->ints == ir_no_ints)
            return false;
    }
    if (ins->ints[IR_INT_CHANNEL_ID].present && ins->ints[IR_INT_CHANNEL_ID].v > m->max_channel_id)
        m->max_channel_id = ins->ints[IR_INT_CHANNEL_ID].v;
    if (d->has_groups) {
        IrReplicaGroups *g = &ins->info->replica_groups;
        size_t n = d->n_groups;
        *g = (IrReplicaGroups){ .form = IR_GROUPS_EXPLICIT, .n_groups = (int)n };
        if (n && (!(g->groups = arena_alloc_array(m->arena, n, sizeof *g->groups)) ||
                  !(g->group_sizes = arena_alloc_array(m->arena, n, sizeof *g->group_sizes))))
            return false;
        for (size_t k = 0; k < n; k++) {
            size_t len = d->groups[k]->n_replica_ids;
            g->group_sizes[k] = (int)len;
            if (len && !(g->groups[k] = arena_alloc_array(m->arena, len, sizeof *g->groups[k])))
                return false;
            if (len)
                memcpy(g->groups[k], d->groups[k]->replica_ids, len * sizeof *g->groups[k]);
        }
    }
    if (d->has_slice) {
        ins->info->n_slice = (int)d->n_slice;
        if (d->n_slice && !(ins->info->slice = arena_alloc_array(m->arena, d->n_slice, sizeof *ins->info->slice)))
            return false;
        for (size_t k = 0; k < d->n_slice; k++)
            ins->info->slice[k] = (IrSliceDim){ d->slice[k]->start, d->slice[k]->limit, d->slice[k]->stride };
    }
    return true;
}

/* "file: computations[C].instructions[I]" in the module's arena: an
 * instruction's location, the place the verifier's and the tools' messages
 * name.  head is "file: computations[C].instructions[", written once per
 * computation (a module of 500k instructions takes 500k of these). */
static const char *instr_loc(Arena *a, const char *head, size_t n_head, int idx)
{
    char digits[12];
    size_t nd = 0;
    unsigned v = (unsigned)idx;
    do {
        digits[nd++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    char *s = arena_alloc(a, n_head + nd + 2);
    if (!s)
        return NULL;
    memcpy(s, head, n_head);
    for (size_t d = 0; d < nd; d++)
        s[n_head + d] = digits[nd - 1 - d];
    s[n_head + nd] = ']';
    s[n_head + nd + 1] = 0;
    return s;
}

/* An error of the builder at a line of the snippet just read, moved to
 * the field path being read (e->path), with the instruction's name. */
static bool builder_fail(Emit *e)
{
    if (!e->err || e->err->code == ERR_OK)
        return emit_nomem(e);
    char msg[sizeof e->err->msg];
    memcpy(msg, e->err->msg, sizeof msg);
    ErrCode code = e->err->code;
    *e->err = (Error){ 0 };
    fail_at(e->err, e->file, e->path.s, instr_named(e->sk, e->path.s), msg);
    e->err->code = code;
    return false;
}

/* An error of ir_build_end_computation, at an instruction's location (or
 * the computation's), moved to that field path with the name. */
static bool end_fail(Emit *e, IrInstr **built)
{
    if (!e->err || e->err->code == ERR_OK)
        return emit_nomem(e);
    for (size_t i = 0; i < e->lc->n; i++)
        if (built[i] && built[i]->info->loc.file && strcmp(e->err->file, built[i]->info->loc.file) == 0) {
            size_t at = path_push(&e->path, ".instructions[%zu]", i);
            builder_fail(e);
            path_pop(&e->path, at);
            return false;
        }
    return builder_fail(e);
}

static bool emit_computation(Emit *e, const Comp *c, const CompLites *lc, bool is_entry,
                             const Xla__HloScheduleProto__InstructionSequence *seq)
{
    e->c = c;
    e->lc = lc;
    size_t n = lc->n;
    if (!good_name(c->name))
        return emit_fail(e, "name '%s' is not an HLO computation name", c->name ? c->name : "");
    if (n == 0)
        return emit_fail(e, "computation %s has no instructions", c->name);
    if (!index_ids(e, lc))
        return false;
    int root = find_id(e, c->root_id);
    if (root < 0)
        return emit_fail(e, "root_id %" PRId64 " is not an instruction of computation %s", c->root_id, c->name);
    int *order = xmalloc(n * sizeof *order);
    bool ok = instruction_order(e, seq, order) && check_parameter_numbers(e);
    Arena *arena = ir_build_module(e->b)->arena;
    char head[640];
    int nh = snprintf(head, sizeof head - 16, "%s: %scomputations[%d]", e->file, e->prefix, e->comp);
    size_t n_head = nh < 0 ? 0 : (size_t)nh < sizeof head - 16 ? (size_t)nh : sizeof head - 17;
    const char *comp_loc = ok ? arena_strndup(arena, head, n_head) : NULL;
    IrComputation *comp = NULL;
    if (ok && !comp_loc)
        ok = emit_nomem(e);
    if (ok) {
        bool threaded = c->execution_thread && c->execution_thread[0] && strcmp(c->execution_thread, "main");
        e->t.len = 0;
        if (threaded)
            put_quoted(e, c->execution_thread);
        comp = ir_build_computation(e->b, c->name, is_entry, threaded ? e->t.s : NULL, (IrLoc){ comp_loc, 0, 0 });
        ok = comp ? true : builder_fail(e);
    }
    memcpy(head + n_head, ".instructions[", 15);
    n_head += 14;
    IrInstr **built = ok ? xcalloc(n, sizeof *built) : NULL;
    for (size_t k = 0; k < n && ok; k++) {
        int i = order[k];
        size_t at = path_add(&e->path, ".", "instructions");
        path_index(&e->path, (unsigned)i);
        const Lite *l = &lc->v[i];
        IrShape *shape = cached_shape(e, l);
        bool strip = shape && strcmp(l->opcode, "constant") != 0;   /* a constant's literal is read by its shape */
        Instr *in = strip ? load_without_shape(e, l) : load(e, l);
        e->t.len = 0;
        e->md_len = 0;
        e->direct = (Direct){ 0 };
        ok = in ? emit_instruction(e, &lc->v[i], in, &shape) : emit_nomem(e);
        const char *loc = ok ? instr_loc(arena, head, n_head, i) : NULL;
        if (ok && !loc)
            ok = emit_nomem(e);
        if (ok) {
            built[i] = ir_build_instr(e->b, comp, in->name, (IrLoc){ loc, 0, 0 }, shape, e->t.s, e->t.len,
                                      (int)in->n_operand_ids, i == root);
            ok = built[i] ? true : builder_fail(e);
        }
        if (ok && e->md_len && !give_metadata(ir_build_module(e->b), built[i], e->md.s + e->md_at, e->md_len))
            ok = emit_nomem(e);
        if (ok && !give_direct(&e->direct, e->b, built[i]))
            ok = emit_nomem(e);
        e->md.len = 0;
        path_pop(&e->path, at);
    }
    free(order);
    /* The operands, now that every instruction is built (a schedule may
     * list an instruction before an operand's). */
    for (size_t i = 0; i < n && ok; i++)
        if (built[i]->op != IR_OP_PARAMETER && built[i]->op != IR_OP_CONSTANT)
            for (uint32_t k = 0; k < lc->v[i].n_operands && (int)k < built[i]->n_operands; k++)
                built[i]->operands[k] = built[find_id(e, lc->v[i].edges[k])];
    if (ok && !ir_build_end_computation(e->b, comp))
        ok = end_fail(e, built);
    free(built);
    return ok;
}

/* --- the module header -------------------------------------------------- */

static const Comp *entry_of(const Xla__HloModuleProto *m)
{
    for (size_t i = 0; i < m->n_computations; i++)
        if (m->computations[i]->id == m->entry_computation_id && m->entry_computation_id != 0)
            return m->computations[i];
    for (size_t i = 0; i < m->n_computations; i++)
        if (m->entry_computation_name && strcmp(m->computations[i]->name, m->entry_computation_name) == 0)
            return m->computations[i];
    /* id 0 is a valid computation id too. */
    for (size_t i = 0; i < m->n_computations; i++)
        if (m->computations[i]->id == m->entry_computation_id)
            return m->computations[i];
    return NULL;
}

static bool emit_header(Emit *e, const Comp *entry)
{
    const Xla__HloModuleProto *m = e->m;
    if (!good_name(m->name))
        return emit_fail(e, "name '%s' is not an HLO module name", m->name ? m->name : "");
    putf(e, "HloModule %s", m->name);
    if (m->schedule && m->schedule->n_sequences)
        put(e, ", is_scheduled=true");
    if (m->input_output_alias && m->input_output_alias->n_entries) {
        put(e, ", input_output_alias={ ");
        for (size_t i = 0; i < m->input_output_alias->n_entries; i++) {
            const Xla__HloInputOutputAliasProto__AliasEntryProto *a = m->input_output_alias->entries[i];
            if (i)
                put(e, ", ");
            emit_shape_index(e, a->output_shape_index, a->n_output_shape_index);
            putf(e, ": (%" PRId64 ", ", a->parameter_number);
            emit_shape_index(e, a->parameter_shape_index, a->n_parameter_shape_index);
            put(e, a->kind == 2 ? ", must-alias)" : ", may-alias)");
        }
        put(e, " }");
    }
    if (m->buffer_donor && m->buffer_donor->n_entries) {
        put(e, ", buffer_donor={ ");
        for (size_t i = 0; i < m->buffer_donor->n_entries; i++) {
            const Xla__HloBufferDonorProto__BufferDonorEntryProto *d = m->buffer_donor->entries[i];
            putf(e, "%s(%" PRId64 ", ", i ? ", " : "", d->parameter_number);
            emit_shape_index(e, d->parameter_shape_index, d->n_parameter_shape_index);
            put(e, ")");
        }
        put(e, " }");
    }
    size_t ci = 0;                  /* the entry's index, for paths */
    while (ci < m->n_computations && m->computations[ci] != entry)
        ci++;
    /* The entry's layout: the host program shape when given, else the
     * entry's parameters and root (what XLA derives). */
    const Xla__ProgramShapeProto *ps = m->host_program_shape;
    put(e, ", entry_computation_layout={(");
    if (ps && (ps->n_parameters || ps->result)) {
        size_t at = path_push(&e->path, "host_program_shape");
        for (size_t i = 0; i < ps->n_parameters; i++) {
            if (i)
                put(e, ", ");
            if (!emit_shape(e, ps->parameters[i], 0))
                return false;
        }
        put(e, ")->");
        if (!emit_shape(e, ps->result, 0))
            return false;
        path_pop(&e->path, at);
    } else {
        const CompLites *lc = &e->sk->comps[ci];
        size_t n = 0;
        for (size_t i = 0; i < lc->n; i++)
            n += is_parameter(&lc->v[i]);
        for (size_t k = 0; k < n; k++)
            for (size_t i = 0; i < lc->n; i++)
                if (is_parameter(&lc->v[i]) && lc->v[i].parameter_number == (int64_t)k) {
                    if (k)
                        put(e, ", ");
                    size_t at = path_push(&e->path, "computations[%zu].instructions[%zu].shape", ci, i);
                    if (!emit_shape_of(e, &lc->v[i]))
                        return false;
                    path_pop(&e->path, at);
                }
        put(e, ")->");
        size_t ri = lc->n;
        for (size_t i = 0; i < lc->n; i++)
            if (lc->v[i].id == entry->root_id)
                ri = i;
        if (ri == lc->n)
            return emit_fail(e, "the entry's root_id %" PRId64 " is not one of its instructions", entry->root_id);
        size_t at = path_push(&e->path, "computations[%zu].instructions[%zu].shape", ci, ri);
        if (!emit_shape_of(e, &lc->v[ri]))
            return false;
        path_pop(&e->path, at);
    }
    put(e, "}");
    const Xla__DeviceAssignmentProto *da = m->device_assignment;
    /* A device assignment fixes the device count, one replica included. */
    if (da && da->replica_count >= 1)
        putf(e, ", replica_count=%d", (int)da->replica_count);
    if (da && da->computation_count > 1)
        putf(e, ", num_partitions=%d", (int)da->computation_count);
    if (m->frontend_attributes && m->frontend_attributes->n_map) {
        put(e, ", ");
        emit_frontend_attributes(e, m->frontend_attributes);
    }
    newline(e);
    newline(e);
    return true;
}

/* FileNames / FunctionNames / FileLocations / StackFrames, as XLA prints
 * the stack frame index after the computations. */
static void emit_stack_frames(Emit *e, const Xla__StackFrameIndexProto *s)
{
    if (!s || (!s->n_file_names && !s->n_function_names && !s->n_file_locations && !s->n_stack_frames))
        return;
    put(e, "FileNames");
    newline(e);
    for (size_t i = 0; i < s->n_file_names; i++) {
        putf(e, "%zu ", i + 1);
        put_quoted(e, s->file_names[i]);
        newline(e);
    }
    newline(e);
    put(e, "FunctionNames");
    newline(e);
    for (size_t i = 0; i < s->n_function_names; i++) {
        putf(e, "%zu ", i + 1);
        put_quoted(e, s->function_names[i]);
        newline(e);
    }
    newline(e);
    put(e, "FileLocations");
    newline(e);
    for (size_t i = 0; i < s->n_file_locations; i++) {
        const Xla__StackFrameIndexProto__FileLocation *l = s->file_locations[i];
        putf(e, "%zu {file_name_id=%d function_name_id=%d line=%d", i + 1, (int)l->file_name_id,
             (int)l->function_name_id, (int)l->line);
        if (l->end_line)
            putf(e, " end_line=%d", (int)l->end_line);
        putf(e, " column=%d", (int)l->column);
        if (l->end_column)
            putf(e, " end_column=%d", (int)l->end_column);
        put(e, "}");
        newline(e);
    }
    newline(e);
    put(e, "StackFrames");
    newline(e);
    for (size_t i = 0; i < s->n_stack_frames; i++) {
        putf(e, "%zu {file_location_id=%d parent_frame_id=%d}", i + 1, (int)s->stack_frames[i]->file_location_id,
             (int)s->stack_frames[i]->parent_frame_id);
        newline(e);
    }
    newline(e);
}

/* The module read into e->b: the header as text, then each computation
 * (after the computations' ids are checked). */
static bool emit_module(Emit *e)
{
    const Xla__HloModuleProto *m = e->m;
    if (m->n_computations == 0)
        return emit_fail(e, "the module has no computations");
    if (e->sk->n_comps != m->n_computations)     /* a module message given twice, merged by protobuf-c */
        return emit_fail(e, "%zu computations in the bytes, %zu in the module protobuf-c reads from them",
                         e->sk->n_comps, m->n_computations);
    const Comp *entry = entry_of(m);
    if (!entry)
        return emit_fail(e, "no computation has the entry_computation_id %" PRId64 " or the name '%s'",
                         m->entry_computation_id, m->entry_computation_name ? m->entry_computation_name : "");
    if (!emit_header(e, entry))
        return false;
    emit_stack_frames(e, m->stack_frame_index);     /* where the parser reads them: after the header */
    /* The builder's errors go to e->err, at the snippet it reads: the
     * header's here, each instruction's in emit_computation. */
    if (!(e->b = ir_build_begin(e->t.s, e->t.len, e->file, e->err))) {
        relocate_header(e, e->err);
        return false;
    }
    for (size_t i = 0; i < m->n_computations; i++) {
        const Comp *c = m->computations[i];
        for (size_t j = 0; j < i; j++)
            if (m->computations[j]->id == c->id) {
                size_t at = path_push(&e->path, "computations[%zu].id", i);
                emit_fail(e, "id %" PRId64 " is also the id of computations[%zu]", c->id, j);
                path_pop(&e->path, at);
                return false;
            }
    }
    e->comp_ids = xmalloc(m->n_computations * sizeof *e->comp_ids);
    for (size_t i = 0; i < m->n_computations; i++)
        e->comp_ids[i] = (IdAt){ m->computations[i]->id, (int)i };
    qsort(e->comp_ids, m->n_computations, sizeof *e->comp_ids, cmp_id_at);
    e->n_comp_ids = m->n_computations;
    for (size_t i = 0; i < m->n_computations; i++) {
        const Comp *c = m->computations[i];
        const Xla__HloScheduleProto__InstructionSequence *seq = NULL;
        if (m->schedule)
            for (size_t k = 0; k < m->schedule->n_sequences; k++)
                if (m->schedule->sequences[k]->key == c->id)
                    seq = m->schedule->sequences[k]->value;
        e->comp = (int)i;
        size_t at = path_push(&e->path, "computations[%zu]", i);
        if (!emit_computation(e, c, &e->sk->comps[i], c == entry, seq))
            return false;
        path_pop(&e->path, at);
    }
    return true;
}

/* --- a snapshot's arguments and result ---------------------------------- */

/* A LiteralProto with its own shape as an IR literal in m's arena: the
 * shape through the parser (its text, as emit_shape writes it), the
 * values as emit_literal reads them. */
static IrLiteral *snapshot_literal(Emit *e, IrModule *m, const Xla__LiteralProto *l, const Xla__ShapeProto *s,
                                   int depth)
{
    if (depth > 32)
        return emit_fail(e, "tuple literals nested more than 32 deep"), NULL;
    if (!s)
        return emit_fail(e, "a literal without a shape"), NULL;
    size_t mark = e->t.len;
    if (!emit_shape(e, s, 0))
        return NULL;
    Error perr = { 0 };
    size_t used = 0;
    IrShape *shape = ir_parse_shape_text(m->arena, e->t.s + mark, e->t.len - mark, &used, &perr);
    e->t.len = mark;
    e->t.s[mark] = 0;
    IrLiteral *lit = arena_alloc(m->arena, sizeof *lit);
    if (!shape || !lit)
        return emit_fail(e, "its shape: %s", perr.msg[0] ? perr.msg : "out of memory"), NULL;
    lit->shape = shape;
    if (shape->type == IR_TYPE_TUPLE) {
        if (l->n_tuple_literals != s->n_tuple_shapes)
            return emit_fail(e, "tuple_literals has %zu elements, the shape %zu", l->n_tuple_literals,
                             s->n_tuple_shapes), NULL;
        lit->n_elements = (int)l->n_tuple_literals;
        lit->elements = arena_alloc_array(m->arena, l->n_tuple_literals ? l->n_tuple_literals : 1,
                                          sizeof *lit->elements);
        if (!lit->elements)
            return emit_fail(e, "out of memory"), NULL;
        for (size_t i = 0; i < l->n_tuple_literals; i++) {
            size_t at = path_push(&e->path, ".tuple_literals[%zu]", i);
            if (!(lit->elements[i] = snapshot_literal(e, m, l->tuple_literals[i], s->tuple_shapes[i], depth + 1)))
                return NULL;
            path_pop(&e->path, at);
        }
        return lit;
    }
    if (shape->dim_kind)
        return emit_fail(e, "a recorded value of dynamic shape %s is not replayed", ir_shape_str(shape)), NULL;
    const char *field;
    int64_t have = literal_values(l, shape->type, &field), want = shape_count(s);
    if (have < 0)
        return emit_fail(e, "a literal of %s is not supported", ir_type_name(shape->type)), NULL;
    if (want < 0 || have != want)
        return emit_fail(e, "%s holds %" PRId64 " values; the shape holds %" PRId64, field, have, want), NULL;
    size_t bytes = (size_t)want * (size_t)ir_type_storage_bytes(shape->type);
    lit->data = arena_alloc(m->arena, bytes ? bytes : 1);
    if (!lit->data)
        return emit_fail(e, "out of memory for %" PRId64 " values", want), NULL;
    for (int64_t i = 0; i < want; i++)
        literal_element(l, shape->type, (size_t)i,
                        (char *)lit->data + (size_t)i * (size_t)ir_type_storage_bytes(shape->type));
    return lit;
}

/* m->snapshot from the snapshot's arguments and result. */
static bool read_snapshot(Emit *e, IrModule *m, const Xla__HloSnapshot *s)
{
    IrSnapshot *snap = arena_alloc(m->arena, sizeof *snap);
    if (!snap)
        return emit_fail(e, "out of memory");
    snap->n_arguments = (int)s->n_arguments;
    snap->arguments = arena_alloc_array(m->arena, s->n_arguments ? s->n_arguments : 1, sizeof *snap->arguments);
    snap->platform = arena_strdup(m->arena, s->execution_platform ? s->execution_platform : "");
    if (!snap->arguments || !snap->platform)
        return emit_fail(e, "out of memory");
    for (size_t k = 0; k < s->n_arguments; k++) {
        path_pop(&e->path, 0);
        path_push(&e->path, "arguments[%zu]", k);
        if (!(snap->arguments[k] = snapshot_literal(e, m, s->arguments[k], s->arguments[k]->shape, 0)))
            return false;
    }
    if (s->result) {
        path_pop(&e->path, 0);
        path_push(&e->path, "result");
        if (!(snap->result = snapshot_literal(e, m, s->result, s->result->shape, 0)))
            return false;
    }
    m->snapshot = snap;
    return true;
}

/* ------------------------------------------------------------------ */
/* Reading                                                              */

const char *ir_proto_kind_name(IrProtoKind k)
{
    switch (k) {
    case IR_PROTO_MODULE: return "HloModuleProto";
    case IR_PROTO_HLO: return "HloProto";
    case IR_PROTO_SNAPSHOT: return "HloSnapshot";
    case IR_PROTO_NONE: break;
    }
    return "HLO text";
}

bool ir_bytes_are_text(const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t n = len < 4096 ? len : 4096, i = 0;
    /* A module's text starts with HloModule, which no proto can (0x48 would
     * be field 9 as a varint, which none of the three messages has); a
     * control byte later in it (a NUL in a string) is the parser's to
     * report. */
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
        i++;
    if (n - i >= 9 && memcmp(p + i, "HloModule", 9) == 0)
        return true;
    if (n && p[0] == 0)
        return true;                    /* no proto starts with 0: the parser names the NUL */
    for (i = 0; i < n; i++)
        if ((p[i] < 0x20 && p[i] != '\n' && p[i] != '\r' && p[i] != '\t') || p[i] == 0x7f)
            return false;
    return true;
}

/* The module message of each kind, NULL when the kind's message does not
 * hold one. */
static const Xla__HloModuleProto *module_of(IrProtoKind k, const ProtobufCMessage *msg)
{
    switch (k) {
    case IR_PROTO_MODULE: return (const Xla__HloModuleProto *)msg;
    case IR_PROTO_HLO: return ((const Xla__HloProto *)msg)->hlo_module;
    case IR_PROTO_SNAPSHOT: {
        const Xla__HloSnapshot *s = (const Xla__HloSnapshot *)msg;
        return s->hlo ? s->hlo->hlo_module : NULL;
    }
    case IR_PROTO_NONE: break;
    }
    return NULL;
}

static const ProtobufCMessageDescriptor *descriptor_of(IrProtoKind k)
{
    switch (k) {
    case IR_PROTO_MODULE: return &xla__hlo_module_proto__descriptor;
    case IR_PROTO_HLO: return &xla__hlo_proto__descriptor;
    case IR_PROTO_SNAPSHOT: return &xla__hlo_snapshot__descriptor;
    case IR_PROTO_NONE: break;
    }
    return NULL;
}

/* A module message that could be a module: it has computations, each
 * with instructions that have an opcode and a shape.  Bytes of another
 * kind read as this kind fail it (test_proto.c tries each kind on each). */
static bool plausible(const Xla__HloModuleProto *m, const Skel *sk)
{
    if (!m || m->n_computations == 0 || sk->n_comps != m->n_computations)
        return false;
    for (size_t i = 0; i < sk->n_comps; i++) {
        const CompLites *c = &sk->comps[i];
        if (c->n == 0)
            return false;
        for (size_t j = 0; j < c->n; j++)
            if (!c->v[j].opcode[0] || !c->v[j].has_shape)
                return false;
    }
    return true;
}

/* err->msg becomes "prefix: msg" (cut to fit). */
static void prefix_message(Error *err, const char *prefix)
{
    char old[sizeof err->msg];
    memcpy(old, err->msg, sizeof old);
    size_t n = strlen(prefix), cap = sizeof err->msg - 1;
    n = n < cap ? n : cap;
    memcpy(err->msg, prefix, n);
    size_t rest = strlen(old);
    if (n + 2 < cap) {
        memcpy(err->msg + n, ": ", 2);
        n += 2;
        rest = rest < cap - n ? rest : cap - n;
        memcpy(err->msg + n, old, rest);
        n += rest;
    }
    err->msg[n] = 0;
}

static const char *path_prefix(IrProtoKind k)
{
    return k == IR_PROTO_SNAPSHOT ? "hlo.hlo_module." : k == IR_PROTO_HLO ? "hlo_module." : "";
}

/* protobuf-c's allocations for one unpack, from an arena freed whole: a
 * module of 100 MB unpacks into millions of small messages, and malloc and
 * free of each were a tenth of the reading time. */
static void *arena_alloc_cb(void *a, size_t n)
{
    return arena_alloc(a, n ? n : 1);
}

static void arena_free_cb(void *a, void *p)
{
    (void)a;
    (void)p;
}

/* The bytes unpacked by protobuf-c as a message of kind k into a new arena
 * (*arena, freed first), or NULL. */
static ProtobufCMessage *unpack(IrProtoKind k, const void *data, size_t len, Arena **arena)
{
    arena_free(*arena);
    *arena = arena_new(len / 2 + 4096);
    ProtobufCAllocator alloc = { arena_alloc_cb, arena_free_cb, *arena };
    return *arena ? protobuf_c_message_unpack(descriptor_of(k), &alloc, len, data) : NULL;
}

IrModule *ir_parse_proto(const void *data, size_t len, const char *filename, Error *err)
{
    const char *file = filename && filename[0] ? filename : "<input>";
    /* Content decides; the file's name only says which kind is tried first,
     * and so whose error is reported when none fits: XLA names its dumps
     * *.hlo_module.pb, *.hlo.pb and *.snapshot.pb. */
    IrProtoKind kinds[] = { IR_PROTO_MODULE, IR_PROTO_HLO, IR_PROTO_SNAPSHOT };
    size_t fl = strlen(file);
    bool snapshot_name = fl >= 12 && strcmp(file + fl - 12, ".snapshot.pb") == 0;
    bool hlo_name = fl >= 7 && strcmp(file + fl - 7, ".hlo.pb") == 0;
    if (snapshot_name || hlo_name) {
        kinds[0] = snapshot_name ? IR_PROTO_SNAPSHOT : IR_PROTO_HLO;
        kinds[snapshot_name ? 2 : 1] = IR_PROTO_MODULE;
    }
    Error first = { 0 };
    bool first_at_top = false;
    IrProtoKind kind = IR_PROTO_NONE;
    ProtobufCMessage *msg = NULL;
    Arena *unpacked = NULL;     /* what protobuf-c unpacks the skeleton into */
    Skel sk = { 0 };
    Wire wire = { 0 };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && !msg; i++) {
        Error here = { 0 };
        wire = (Wire){ .file = file, .err = &here };
        path_push(&wire.path, "%s", "");
        if (!check_message(&wire, data, (const uint8_t *)data + len, descriptor_of(kinds[i]), 0)) {
            if (i == 0) {
                first = here;
                first_at_top = wire.failed_at_top;
            }
            continue;
        }
        if (!skeleton(&sk, data, len, descriptor_of(kinds[i]))) {
            skel_free(&sk);
            arena_free(unpacked);
            error_set(err, ERR_NOMEM, (IrLoc){ file, 0, 0 }, "out of memory");
            return NULL;
        }
        ProtobufCMessage *got = unpack(kinds[i], sk.bytes.s ? sk.bytes.s : "", sk.bytes.len, &unpacked);
        if (!got) {
            if (i == 0)
                error_set(&first, ERR_SYNTAX, (IrLoc){ file, 0, 0 }, "protobuf-c could not unpack it as a %s",
                          ir_proto_kind_name(kinds[i]));
            continue;
        }
        if (!plausible(module_of(kinds[i], got), &sk)) {
            if (i == 0 && first.code == ERR_OK)
                error_set(&first, ERR_SYNTAX, (IrLoc){ file, 0, 0 },
                          "not an HLO module: read as an %s it has no computation with instructions",
                          ir_proto_kind_name(kinds[i]));
            continue;
        }
        msg = got;
        kind = kinds[i];
    }
    if (!msg) {
        /* Report what reading it as the first kind said.  An error at the
         * top level (no field of it read whole) says the bytes are no
         * proto at all. */
        if (err && err->code == ERR_OK) {
            *err = first;
            if (err->code == ERR_OK)
                error_set(err, ERR_SYNTAX, (IrLoc){ file, 0, 0 }, "neither HLO text nor an HLO proto");
            else if (first_at_top)
                prefix_message(err, "neither HLO text nor an HloModuleProto, HloProto or HloSnapshot");
        }
        arena_free(unpacked);
        skel_free(&sk);
        return NULL;
    }
    const Xla__HloModuleProto *m = module_of(kind, msg);
    Error local = { 0 };
    Emit e = { .file = file, .prefix = path_prefix(kind), .err = err ? err : &local, .m = m, .sk = &sk };
    strbuf_init(&e.t);
    strbuf_init(&e.md);
    strbuf_init(&e.strip);
    strbuf_putn(&e.t, "", 0);
    path_push(&e.path, "%s", e.prefix);
    IrModule *mod = NULL;
    if (emit_module(&e)) {
        mod = ir_build_end(e.b);
        e.b = NULL;
        if (!mod && e.err->code == ERR_OK)
            emit_nomem(&e);
    }
    ir_build_abandon(e.b);
    if (mod && kind == IR_PROTO_SNAPSHOT && !read_snapshot(&e, mod, (const Xla__HloSnapshot *)msg)) {
        ir_module_free(mod);
        mod = NULL;
    }
    if (mod) {
        StrBuf note;
        strbuf_init(&note);
        unknown_note(&wire, &note);
        mod->source_kind = ir_proto_kind_name(kind);
        mod->source_note = note.len ? arena_strdup(mod->arena, note.s) : NULL;
        strbuf_free(&note);
    }
    strbuf_free(&e.t);
    strbuf_free(&e.md);
    strbuf_free(&e.strip);
    free(e.shapes.v);
    free(e.dense);
    free(e.comp_ids);
    free(e.ids);
    free(e.id_at);
    arena_free(unpacked);
    skel_free(&sk);
    return mod;
}

IrModule *ir_parse_bytes(const void *data, size_t len, const char *filename, Error *err)
{
    return ir_bytes_are_text(data, len < 4096 ? len : 4096) ? ir_parse_module(data, len, filename, err)
                                                            : ir_parse_proto(data, len, filename, err);
}

void ir_note_source(const IrModule *m, const char *tool, const char *path, FILE *f)
{
    if (m && m->source_kind)
        fprintf(f, "%s: note: %s: read as an %s%s%s\n", tool, path, m->source_kind,
                m->source_note ? "; not carried: " : "", m->source_note ? m->source_note : "");
}
