/* ir.h: the in-memory HLO module, its parser, printer and verifier.
 * This header is the whole public API of src/ir/.  The IR structs are
 * transparent because passes walk them; the arena is opaque. */
#ifndef IR_H
#define IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------ */
/* error.c: one error struct that carries file:line:col                */

typedef struct IrLoc {
    const char *file;   /* NULL or "" when not from a file */
    int line, col;      /* 1-based; line 0: not from text */
} IrLoc;

typedef enum ErrCode {
    ERR_OK,
    ERR_SYNTAX,       /* the text does not follow the grammar */
    ERR_SHAPE,        /* verifier: shapes, attributes, structure */
    ERR_UNSUPPORTED,  /* valid HLO we cannot run */
    ERR_MPI,          /* only set inside src/collectives/ */
    ERR_NOMEM,
    ERR_MISMATCH,     /* two modules or inputs do not fit each other */
    ERR_IO,           /* a file could not be read or written */
    ERR_INTERNAL      /* a bug: exit code 3 */
} ErrCode;

typedef struct Error {
    ErrCode code;
    IrLoc loc;              /* loc.file may point into a module freed since: print uses file */
    char file[256];         /* a copy of loc.file, made when the error is set */
    char msg[512];
} Error;

/* Keeps the first error; always returns false so callers can
 * `return error_set(err, ...)`.  err may be NULL. */
bool error_set(Error *err, ErrCode code, IrLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Moves an error that has no place yet to loc (keeping its message). */
void error_set_loc(Error *err, IrLoc loc);
/* "file:line:col: error: msg\n" (the location part only when known). */
void error_print(const Error *err, FILE *out);
/* The process exit code for an error: 2 for bad input, 3 for internal. */
int error_exit_code(const Error *err);
/* ERR_NOMEM, "out of memory", at loc; returns false. */
bool error_nomem(Error *err, IrLoc loc);

/* ------------------------------------------------------------------ */
/* arena.c: all raw allocation goes through here                       */

void *xmalloc(size_t n);                 /* never returns NULL: ends the program with a message */
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* p, or the one-line out-of-memory exit 3 when it is NULL: for code with
 * no error path that calls the module editors, which return NULL then. */
void *xmust(void *p);
/* Test hook: the nth allocation from now fails (0 disables); the x*_try
 * calls then return NULL, the others end the program (exit 3).  Parsing,
 * verifying, printing, copying, the passes and interp_new / interp_run
 * (but not yet every eval_*.c kernel) use only the _try calls and report
 * ERR_NOMEM (tests/interp/test_alloc_fail.c). */
void xmalloc_fail_after(long n);
bool xmalloc_fail_pending(void);         /* armed, and that allocation not reached yet */
void *xmalloc_try(size_t n);             /* NULL on failure or injected failure */
void *xcalloc_try(size_t n, size_t size);            /* zeroed; NULL also if n*size overflows */
void *xrealloc_try(void *p, size_t n);   /* NULL (p untouched) on failure */
/* *p resized to n elements of size; false (*p untouched) on failure. */
bool xgrow_try(void **p, size_t n, size_t size);

typedef struct Arena Arena;              /* opaque */
Arena *arena_new(size_t chunk_bytes);
void  *arena_alloc(Arena *a, size_t bytes);                   /* zeroed, max_align_t aligned; NULL on OOM */
void  *arena_alloc_array(Arena *a, size_t n, size_t size);    /* NULL if n*size overflows */
void  *arena_alloc_line(Arena *a, size_t bytes);              /* as arena_alloc, 64-byte (cache line) aligned */
char  *arena_strdup(Arena *a, const char *s);
char  *arena_strndup(Arena *a, const char *s, size_t n);
void   arena_reset(Arena *a);
/* Empties the arena but keeps its largest chunk, for an arena filled and
 * emptied again and again (one message at a time). */
void   arena_rewind(Arena *a);
void   arena_free(Arena *a);
size_t arena_bytes_used(const Arena *a);
#define ARENA_NEW(a, T)       ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n)  ((T *)arena_alloc_array((a), (n), sizeof(T)))

/* A growable string, heap-backed.  Out of memory, a buffer from
 * strbuf_init ends the program; one from strbuf_init_may_fail sets nomem
 * and ignores later appends (strbuf_check turns that into ERR_NOMEM). */
typedef struct StrBuf {
    char *s;
    size_t len, cap;
    bool may_fail;
    bool nomem;             /* an append failed: the text is incomplete */
} StrBuf;
void strbuf_init(StrBuf *b);
void strbuf_init_may_fail(StrBuf *b);
void strbuf_free(StrBuf *b);             /* keeps may_fail: the buffer can be used again */
bool strbuf_check(const StrBuf *b, Error *err);
void strbuf_putc(StrBuf *b, char c);
void strbuf_puts(StrBuf *b, const char *s);
void strbuf_putn(StrBuf *b, const char *s, size_t n);
void strbuf_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------------ */
/* dtype.c: element types, their sizes and float conversions           */

typedef enum IrElemType {
    IR_TYPE_INVALID,
    IR_TYPE_PRED,
    IR_TYPE_S1, IR_TYPE_S2, IR_TYPE_S4, IR_TYPE_S8, IR_TYPE_S16, IR_TYPE_S32, IR_TYPE_S64,
    IR_TYPE_U1, IR_TYPE_U2, IR_TYPE_U4, IR_TYPE_U8, IR_TYPE_U16, IR_TYPE_U32, IR_TYPE_U64,
    IR_TYPE_F16, IR_TYPE_BF16, IR_TYPE_F32, IR_TYPE_F64,
    IR_TYPE_F8E5M2, IR_TYPE_F8E4M3, IR_TYPE_F8E4M3FN, IR_TYPE_F8E4M3B11FNUZ,
    IR_TYPE_F8E3M4, IR_TYPE_F8E5M2FNUZ, IR_TYPE_F8E4M3FNUZ, IR_TYPE_F8E8M0FNU,
    IR_TYPE_F4E2M1FN,
    IR_TYPE_C64, IR_TYPE_C128,
    IR_TYPE_TOKEN,
    IR_TYPE_OPAQUE,
    IR_TYPE_TUPLE,       /* only as IrShape.type of a tuple shape */
    IR_TYPE_COUNT
} IrElemType;

typedef enum IrTypeKind {
    IR_KIND_NONE, IR_KIND_PRED, IR_KIND_SINT, IR_KIND_UINT, IR_KIND_FLOAT, IR_KIND_COMPLEX
} IrTypeKind;

typedef struct IrTypeInfo {
    const char *name;     /* HLO spelling: "bf16" */
    IrTypeKind kind;
    int bits;             /* logical width: 16 for bf16, 8 for pred (stored as a byte) */
    int storage_bytes;    /* bytes per element in our buffers (sub-byte types use 1) */
    /* floats only (0 otherwise): */
    int exponent_bits, mantissa_bits;  /* explicit mantissa bits */
    int bias;
    bool has_inf;         /* false for the fn / fnuz / e8m0 families */
    bool has_sign;        /* false for f8e8m0fnu */
    bool nan_is_neg_zero; /* fnuz: NaN is the 0x80 pattern, no -0 */
    bool nan_only_all_ones; /* fn: NaN only when exponent and mantissa are all ones */
} IrTypeInfo;

extern const IrTypeInfo ir_type_info[IR_TYPE_COUNT];

IrElemType ir_type_from_name(const char *s, size_t len);   /* IR_TYPE_INVALID if not a type word */
const char *ir_type_name(IrElemType t);
int  ir_type_storage_bytes(IrElemType t);
bool ir_type_is_float(IrElemType t);
bool ir_type_is_int(IrElemType t);          /* signed or unsigned, not pred */
bool ir_type_is_signed_int(IrElemType t);
bool ir_type_is_unsigned_int(IrElemType t);
bool ir_type_is_complex(IrElemType t);

/* Conversions between the narrow float formats and f32/f64.  All narrowing
 * conversions round to nearest, ties to even, from the given value directly
 * (no double rounding).  Overflow gives inf where the type has one, NaN where
 * it has none (ml_dtypes' non-saturating behaviour, which XLA uses); NaN stays
 * NaN (sign kept where the format has one). */
float    ir_bf16_to_f32(uint16_t h);
uint16_t ir_f32_to_bf16(float f);
uint16_t ir_f64_to_bf16(double d);
float    ir_f16_to_f32(uint16_t h);
uint16_t ir_f32_to_f16(float f);
uint16_t ir_f64_to_f16(double d);
/* Any of the 8-bit (and f4) formats, selected by type. */
double   ir_f8_to_f64(IrElemType t, uint8_t bits);
uint8_t  ir_f64_to_f8(IrElemType t, double d);

/* Read one element of a float or integer type as double / write one from a
 * double (rounded to nearest even for floats, truncated toward zero and
 * saturated for integers, NaN to 0, != 0 for pred). */
double ir_elem_get_f64(IrElemType t, const void *p);
void   ir_elem_set_f64(IrElemType t, void *p, double v);
/* Integer element as int64 / uint64 bit pattern (sign-extended for signed). */
int64_t ir_elem_get_i64(IrElemType t, const void *p);
/* An integer element read as an index: its value, a u64 above INT64_MAX
 * saturated to INT64_MAX (past every dimension either way, so it clamps to
 * the top or is out of range, as the unsigned value does). */
int64_t ir_elem_get_index(IrElemType t, const void *p);
void    ir_elem_set_i64(IrElemType t, void *p, int64_t v);    /* wraps modulo 2^bits */

/* Format one element the way XLA's printer does (§4 of hlo-reference.md):
 * shortest of %.{6,9}g for f32, %.{15,17}g for f64, and for the narrow
 * floats the shortest %.Ng that reads back to the same bits, "inf" "-inf" "nan" "-nan" "nan(0x..)", "true"/"false" for
 * pred when pred_words, else 0/1.  Returns the length written (< n). */
int ir_elem_format(IrElemType t, const void *p, bool pred_words, char *buf, size_t n);

/* ------------------------------------------------------------------ */
/* shape.c: array and tuple shapes with layouts                         */

#define IR_MAX_RANK 16
#define IR_MAX_DEVICES (1 << 24)   /* replicas x partitions, and the devices a replica group may name */

typedef enum IrDimKind { IR_DIM_STATIC, IR_DIM_BOUNDED, IR_DIM_UNBOUNDED } IrDimKind;

/* A shape may be shared by several instructions (the shapes the parser
 * infers, the proto reader's repeated ones): change a copy
 * (ir_shape_clone), never a shape in place. */
typedef struct IrShape IrShape;
struct IrShape {
    IrElemType type;            /* IR_TYPE_TUPLE for tuples */
    int rank;                   /* arrays only */
    int64_t *dims;              /* rank entries; the bound for <=N, -1 for ? */
    uint8_t *dim_kind;          /* rank entries of IrDimKind, or NULL when all static */
    bool has_layout;            /* a {..} layout was given */
    int64_t *minor_to_major;    /* rank entries when has_layout */
    const char *layout_tail;    /* text after ':' inside the layout braces, or NULL */
    int n_elements;             /* tuples only */
    IrShape **elements;         /* tuples only */
    bool is_buffer;             /* b(...) wrapper (newest XLA) around elements[0] */
};

bool    ir_shape_is_tuple(const IrShape *s);
bool    ir_shape_is_array(const IrShape *s);      /* not tuple, token or opaque */
/* Some array dimension (of s or, for a tuple, of a leaf) is bounded
 * dynamic (f32[<=8]). */
bool    ir_shape_is_dynamic(const IrShape *s);
int64_t ir_shape_elements(const IrShape *s);      /* product of dims (arrays); 0 for tuples */
int64_t ir_shape_byte_size(const IrShape *s);     /* sum over tuple leaves of elements x storage bytes */
/* Equal type and dims (and tuple structure); layouts ignored. */
bool    ir_shape_equal(const IrShape *a, const IrShape *b);
bool    ir_shape_equal_dims(const IrShape *a, const IrShape *b);     /* arrays: dims only */
/* Arrays of one rank: every dimension of the same kind (static, <=, ?). */
bool    ir_shape_same_dim_kinds(const IrShape *a, const IrShape *b);
IrShape *ir_shape_new_array(Arena *a, IrElemType t, int rank, const int64_t *dims);
IrShape *ir_shape_new_tuple(Arena *a, int n, IrShape *const *elements);
IrShape *ir_shape_clone(Arena *a, const IrShape *s);
/* Same shape with another element type (layout kept). */
IrShape *ir_shape_with_type(Arena *a, const IrShape *s, IrElemType t);
/* Appends the HLO text of the shape, with layouts when with_layout. */
void     ir_shape_print(StrBuf *b, const IrShape *s, bool with_layout);
/* Same into a static buffer; for error messages.  Not reentrant. */
const char *ir_shape_str(const IrShape *s);

/* ------------------------------------------------------------------ */
/* Literals                                                             */

typedef struct IrLiteral IrLiteral;
struct IrLiteral {
    const IrShape *shape;       /* the instruction's shape */
    bool elided;                /* written {...}: values unknown */
    void *data;                 /* arrays: row-major, storage_bytes per element */
    int n_elements;             /* tuples only */
    IrLiteral **elements;       /* tuples only */
};

/* ------------------------------------------------------------------ */
/* Instructions                                                         */

typedef enum IrOpFlags {
    OPF_ELEMENTWISE = 1 << 0,
    OPF_COMMUTATIVE = 1 << 1,
    OPF_COLLECTIVE  = 1 << 2,
    OPF_TO_APPLY    = 1 << 3,
    OPF_SIDE_EFFECT = 1 << 4,   /* never removed as dead code */
} IrOpFlags;

typedef enum IrOpcode {
#define HLO_OP(E, c, text, arity, flags) IR_OP_##E,
#include "opcodes.def"
#undef HLO_OP
    IR_OP_COUNT
} IrOpcode;

typedef struct IrOpInfo {
    const char *name;       /* HLO spelling */
    int arity;              /* -1: variadic */
    unsigned flags;         /* IrOpFlags */
} IrOpInfo;
extern const IrOpInfo ir_op_info[IR_OP_COUNT];

/* Exact spelling to opcode; IR_OP_COUNT if none. */
IrOpcode ir_opcode_from_name(const char *s, size_t len);
const char *ir_opcode_name(IrOpcode op);

typedef enum IrListAttr {
#define IR_ATTR_LIST(E, name) IR_LIST_##E,
#include "attrs.def"
#undef IR_ATTR_LIST
    IR_LIST_COUNT
} IrListAttr;
typedef enum IrIntAttr {
#define IR_ATTR_INT(E, name) IR_INT_##E,
#include "attrs.def"
#undef IR_ATTR_INT
    IR_INT_COUNT
} IrIntAttr;
typedef enum IrBoolAttr {
#define IR_ATTR_BOOL(E, name) IR_BOOL_##E,
#include "attrs.def"
#undef IR_ATTR_BOOL
    IR_BOOL_COUNT
} IrBoolAttr;
typedef enum IrCompAttr {
#define IR_ATTR_COMP(E, name) IR_COMP_##E,
#include "attrs.def"
#undef IR_ATTR_COMP
    IR_COMP_COUNT
} IrCompAttr;
typedef enum IrWordAttr {
#define IR_ATTR_WORD(E, name, quoted) IR_WORD_##E,
#include "attrs.def"
#undef IR_ATTR_WORD
    IR_WORD_COUNT
} IrWordAttr;

extern const char *const ir_list_attr_name[IR_LIST_COUNT];
extern const char *const ir_int_attr_name[IR_INT_COUNT];
extern const char *const ir_bool_attr_name[IR_BOOL_COUNT];
extern const char *const ir_comp_attr_name[IR_COMP_COUNT];
extern const char *const ir_word_attr_name[IR_WORD_COUNT];
extern const bool ir_word_attr_quoted[IR_WORD_COUNT];

typedef struct IrIntList {
    bool present;
    int n;
    int64_t *v;
} IrIntList;

typedef struct IrOptInt {
    bool present;
    int64_t v;
} IrOptInt;
extern const IrIntList ir_no_lists[IR_LIST_COUNT];    /* all absent, read-only */
extern const IrOptInt ir_no_ints[IR_INT_COUNT];

typedef struct IrSliceDim { int64_t start, limit, stride; } IrSliceDim;
typedef struct IrPadDim { int64_t lo, hi, interior; } IrPadDim;
typedef struct IrWindowDim {
    int64_t size, stride, pad_lo, pad_hi, lhs_dilate, rhs_dilate;
    bool reversal;
} IrWindowDim;

/* A convolution's dim_labels=b01f_01io->b01f: which dimension of the input
 * (lhs), kernel (rhs) and output holds batch / feature and each spatial
 * dimension (spatial[k] is the dimension labelled with digit k). */
typedef struct IrConvDims {
    int n_spatial;
    int64_t input_batch, input_feature, input_spatial[IR_MAX_RANK];
    int64_t kernel_input_feature, kernel_output_feature, kernel_spatial[IR_MAX_RANK];
    int64_t output_batch, output_feature, output_spatial[IR_MAX_RANK];
} IrConvDims;

typedef enum IrCompareDir {
    IR_CMP_NONE, IR_CMP_EQ, IR_CMP_NE, IR_CMP_LT, IR_CMP_LE, IR_CMP_GT, IR_CMP_GE
} IrCompareDir;
typedef enum IrCompareType {
    IR_CMPT_DEFAULT, IR_CMPT_FLOAT, IR_CMPT_TOTALORDER, IR_CMPT_SIGNED, IR_CMPT_UNSIGNED
} IrCompareType;

/* Replica groups as written, and always expanded.  The iota form is kept so
 * the printer can write it back as given. */
typedef enum IrGroupsForm { IR_GROUPS_NONE, IR_GROUPS_EXPLICIT, IR_GROUPS_IOTA, IR_GROUPS_MESH } IrGroupsForm;

/* One axis of a mesh-form group list: a whole mesh axis (size 0) or the
 * sub-axis :(pre_size)size of it. */
typedef struct IrMeshAxisRef { int axis; int64_t pre_size, size; } IrMeshAxisRef;
typedef struct IrReplicaGroups {
    IrGroupsForm form;          /* NONE: attribute absent */
    int n_groups;               /* 0 for {} (all participants) */
    int *group_sizes;           /* n_groups entries */
    int64_t **groups;           /* groups[g][i]: the ids, in the order listed */
    /* IOTA only: [iota_groups, iota_size] <= [reshape dims] T(perm) */
    int64_t iota_groups, iota_size;
    int n_iota_dims;
    int64_t *iota_dims;
    int64_t *iota_perm;         /* NULL when no T(...) was written */
    /* MESH only (XLA's MeshAxesReplicaGroupList):
     * mesh[a=2,b=4]{b} or mesh[a=2,b=4], device_ids=(...) {a:(1)2}. */
    const char *mesh_text;      /* as written, one line: printed back verbatim */
    int n_mesh_axes;
    int64_t *mesh_axis_sizes;
    int64_t *mesh_device_ids;   /* NULL: the iota 0..n-1 */
    int n_mesh_refs;
    IrMeshAxisRef *mesh_refs;   /* the axes that make up each group, as listed */
} IrReplicaGroups;

typedef struct IrRawAttr {
    const char *name;           /* "metadata", "sharding", ... */
    const char *value;          /* the value's text as written, one line */
} IrRawAttr;

typedef struct IrComputation IrComputation;
typedef struct IrInstr IrInstr;
enum { IR_INLINE_OPERANDS = 4 };

/* What an instruction carries besides its place in the graph: its text
 * location and attributes.  Kept apart from IrInstr (IrInstr.info) so that
 * the instructions themselves are two cache lines each, which is what the
 * passes' speed on modules of 100k instructions depends on. */
typedef struct IrInstrInfo {
    IrLoc loc;                  /* of the instruction's name in the text */

    /* Opcode-specific values. */
    int64_t parameter_number;   /* parameter(N) */
    IrLiteral *literal;         /* constant(...) */
    IrOpcode async_wrapped;     /* sugared async ops: reduce-scatter-start wraps REDUCE_SCATTER */
    bool async_is_done;         /* with async_wrapped: the -done half (else -start) */
    bool async_is_update;       /* with async_wrapped: the -update form */

    /* Typed attributes (see attrs.def; lists and ints are in IrInstr). */
    bool bools[IR_BOOL_COUNT];
    IrComputation *comps[IR_COMP_COUNT];
    const char *words[IR_WORD_COUNT];   /* NULL when absent */

    /* Structured attributes. */
    int n_slice;  IrSliceDim *slice;         /* slice={[0:2], [1:5:2]}; n_slice = -1 absent */
    bool has_padding; int n_padding; IrPadDim *padding;    /* pad: padding=0_1x2_3_1 */
    bool has_window;  int n_window;  IrWindowDim *window;  /* window={size=2x2 ...} */
    IrConvDims *conv_dims;      /* dim_labels=b01f_01io->b01f; NULL when absent */
    IrReplicaGroups replica_groups;
    bool has_source_target_pairs;
    int n_source_target_pairs;
    int64_t (*source_target_pairs)[2];
    IrCompareDir direction;
    IrCompareType compare_type;
    int n_branches; IrComputation **branches;       /* branch_computations={a, b} */

    IrRawAttr *raw_attrs;       /* unmodelled attributes, in source order */
    int n_raw_attrs;
} IrInstrInfo;

struct IrInstr {
    /* The fields every graph walk reads fill the first 64-byte cache line.
     * Instructions are allocated line-aligned, one after the other in an
     * arena of their own (IrModule.instr_arena), and are two lines long:
     * on modules of 100k instructions the passes are bound by memory. */
    _Alignas(64) IrOpcode op;
    int id;                     /* unique in the module; dense, for side tables */
    IrInstr **operands;
    int n_operands;
    int n_users;
    IrInstr **users;            /* filled by ir_computation_build_users(); stale after edits until rebuilt */
    IrInstr **control_predecessors;
    int n_control_predecessors;
    bool dead;                  /* removed from its computation */
    IrComputation *parent;
    IrShape *shape;

    /* operands points here when there are at most IR_INLINE_OPERANDS (set
     * by the parser and ir_instr_new). */
    IrInstr *inline_operands[IR_INLINE_OPERANDS];
    const char *name;           /* without the % sigil */
    IrInstrInfo *info;          /* never NULL */
    /* Typed list and int attributes, IR_LIST_COUNT / IR_INT_COUNT entries;
     * most instructions set none, so until one is set they point at the
     * read-only ir_no_lists / ir_no_ints (a write through them faults at
     * once): set with ir_instr_set_list / ir_instr_set_int. */
    IrIntList *lists;
    IrOptInt *ints;
};

struct IrComputation {
    const char *name;
    IrInstr **instrs;           /* in order (the schedule when the module is scheduled) */
    int n_instrs, cap_instrs;
    IrInstr *root;
    IrInstr **params;           /* params[k] is parameter(k); n_params entries */
    int n_params;
    bool is_entry;
    bool root_marked;           /* the text had ROOT (else the last instruction is the root) */
    bool has_signature;         /* the text had (p: shape, ...) -> shape */
    const char *execution_thread;   /* raw text of , execution_thread="..." or NULL */
    IrLoc loc;
    struct IrModule *module;
    int id;                     /* unique in the module */
    struct IrNameMap *names;    /* instruction names taken (values: not to be read); built on demand */
    struct IrNameMap *name_suffixes;    /* ir_unique_name: next suffix per base */
};

/* What an HloSnapshot recorded besides its module: the arguments of one
 * execution on one device and its result, each literal with its own shape. */
typedef struct IrSnapshot {
    int n_arguments;
    IrLiteral **arguments;
    IrLiteral *result;          /* NULL when none was recorded */
    const char *platform;       /* execution_platform; "" when not given */
} IrSnapshot;

typedef struct IrModule {
    Arena *arena;               /* owns everything below but the instructions */
    Arena *instr_arena;         /* the IrInstr structs themselves */
    const char *name;
    const char *file;           /* for locations; "-" for stdin */
    IrComputation **computations;   /* callees before callers, as printed */
    int n_computations, cap_computations;
    IrComputation *entry;
    IrOptInt replica_count;     /* absent: not in the header */
    IrOptInt num_partitions;
    bool is_scheduled;
    IrRawAttr *header_attrs;    /* other header attributes, in source order */
    int n_header_attrs;
    const char *stack_frames;   /* FileNames ... StackFrames section, verbatim, or NULL */
    int next_instr_id;
    int next_computation_id;
    int64_t max_channel_id;     /* largest channel_id seen; kept by ir_set_channel_id */
    bool nomem;                 /* an edit ran out of memory: the module is incomplete */
    const char *source_kind;    /* read from a proto: "HloModuleProto", "HloProto", "HloSnapshot"; NULL for text */
    const char *source_note;    /* read from a proto: what it held that the module does not carry, or NULL */
    const IrSnapshot *snapshot; /* read from an HloSnapshot: its arguments and result; else NULL */
} IrModule;

/* ------------------------------------------------------------------ */
/* module.c: building and editing                                       */

IrModule *ir_module_new(const char *name);    /* NULL when out of memory */
void ir_module_free(IrModule *m);
/* The editing functions below have no error path: out of memory, they set
 * m->nomem and leave out what they could not allocate (ir_instr_new and
 * ir_unique_name return NULL; the others do nothing with a NULL
 * instruction).  After a series of edits this turns m->nomem into
 * ERR_NOMEM (false); a module it fails on is only fit to be freed. */
bool ir_module_check_memory(const IrModule *m, Error *err);
/* p, for an allocation made while editing m: NULL sets m->nomem. */
void *ir_module_noted(IrModule *m, void *p);
/* A copy of old (n_old elements) in a new arena block of n_new; NULL on OOM. */
void *ir_grow_array(Arena *a, void *old, size_t n_old, size_t n_new, size_t size);
IrComputation *ir_computation_new(IrModule *m, const char *name);
/* Inserts comp at position pos (0 = first) of m->computations. */
void ir_module_insert_computation(IrModule *m, IrComputation *comp, int pos);
IrComputation *ir_module_find_computation(const IrModule *m, const char *name);
/* The largest computation id of m (0 when it has none): side tables by id. */
int ir_module_max_computation_id(const IrModule *m);
/* A fresh instruction of op with shape, not yet in any computation. */
IrInstr *ir_instr_new(IrModule *m, IrOpcode op, const char *name, IrShape *shape,
                      int n_operands, IrInstr *const *operands);
/* Sets a typed list / int attribute (the list's values are not copied). */
void ir_instr_set_list(IrModule *m, IrInstr *instr, IrListAttr k, IrIntList v);
void ir_instr_set_int(IrModule *m, IrInstr *instr, IrIntAttr k, int64_t v);
/* Copies every attribute (typed and raw) of src onto dst; operands untouched. */
void ir_instr_copy_attrs(IrModule *m, IrInstr *dst, const IrInstr *src);
/* Appends instr at the end / inserts it before `before` in comp.  A
 * parameter also takes its slot in comp->params. */
void ir_computation_append(IrComputation *comp, IrInstr *instr);
void ir_computation_insert_before(IrComputation *comp, IrInstr *before, IrInstr *instr);
/* Redirects every use of from (operands, control predecessors, root) to to. */
void ir_replace_all_uses(IrComputation *comp, IrInstr *from, IrInstr *to);
/* Drops instrs with no users that are not root, parameters or side-effecting;
 * repeats until nothing changes.  Returns the number removed, -1 (none
 * removed, m->nomem set) when out of memory. */
int  ir_remove_dead(IrComputation *comp);
/* ir_remove_dead on every computation.  Ids stay as they are (holes where
 * removed instructions were): ir_module_compact renumbers. */
int  ir_module_remove_dead(IrModule *m);
/* The instruction of comp named name (no sigil), or NULL. */
IrInstr *ir_computation_find(const IrComputation *comp, const char *name);
/* Drops the header's entry_computation_layout, which names the entry's
 * signature: for copies whose parameters or result are about to change. */
void ir_module_drop_entry_layout(IrModule *m);
/* How many ids lie between the smallest (*lo) and the largest id of comp's
 * instructions: a side table for one computation indexed by id - *lo is
 * that long, whatever the module's size. */
int ir_computation_id_span(const IrComputation *comp, int *lo);
/* Removes one instruction (which must have no users) from its computation. */
void ir_computation_remove(IrComputation *comp, IrInstr *instr);
void ir_computation_build_users(IrComputation *comp);
/* A name not used in comp: base, base.1, base.2 ... */
const char *ir_unique_name(IrComputation *comp, const char *base);
/* Raw attribute helpers. */
const char *ir_raw_attr_get(const IrInstr *instr, const char *name);   /* NULL if absent */
void ir_raw_attr_set(IrModule *m, IrInstr *instr, const char *name, const char *value);
void ir_set_channel_id(IrModule *m, IrInstr *instr, int64_t id);      /* id < 0 removes */
int64_t ir_fresh_channel_id(const IrModule *m);                        /* max + 1 */
/* Expands iota and mesh replica groups into explicit lists (fills
 * groups/group_sizes); an invalid mesh or iota form is ERR_SYNTAX at loc. */
bool ir_replica_groups_expand(Arena *a, IrReplicaGroups *g, IrLoc loc, Error *err);
bool ir_replica_groups_equal(const IrReplicaGroups *a, const IrReplicaGroups *b);  /* after expansion */
/* The callees of an instruction: every IrComputation it references. */
int ir_instr_called(const IrInstr *instr, IrComputation **out, int max);
static inline bool ir_op_is(const IrInstr *i, IrOpcode op) { return i && i->op == op; }

/* A string -> pointer hash map allocated in an arena (names are not copied). */
typedef struct IrNameMap IrNameMap;
IrNameMap *ir_namemap_new(Arena *a);
void *ir_namemap_get(const IrNameMap *map, const char *name, size_t len);
bool  ir_namemap_put(IrNameMap *map, const char *name, void *value);  /* false: already there (value kept) */
void  ir_namemap_set(IrNameMap *map, const char *name, void *value);  /* insert or overwrite */
/* Replaces every entry's value by f(key, value). */
void  ir_namemap_remap(IrNameMap *map, void *(*f)(const char *key, void *value));

/* ------------------------------------------------------------------ */
/* compact.c: renumbering, after many instructions were removed         */

/* Moves the live instructions (those in a computation), in
 * computation and instruction order, into a fresh instruction arena,
 * numbers them 0, 1, ... in that order (next_instr_id becomes their count:
 * side tables indexed by id have no holes, and operands, defined just
 * before their users, get nearby ids), and frees the old arena with
 * every removed instruction in it.  Every operand, control predecessor,
 * root and parameter of a computation must be live (as after
 * ir_remove_dead); users lists are cleared.  Pointers to instructions held
 * outside the module dangle afterwards: call it only when nothing holds
 * them.  False, the module unchanged, when out of memory. */
bool ir_module_compact(IrModule *m);

/* ------------------------------------------------------------------ */
/* parse.c                                                              */

/* Parses HLO text.  filename is used for error locations.  On failure returns
 * NULL and fills err with the location of the first problem (ERR_SYNTAX, or
 * ERR_NOMEM under injected allocation failure). */
IrModule *ir_parse_module(const char *text, size_t len, const char *filename, Error *err);
/* Reads path ("-" for stdin) and parses it: HLO text, or one of XLA's
 * binary forms (proto.c), told apart by content. */
IrModule *ir_parse_file(const char *path, Error *err);
/* One shape at the start of text (layout included) into a; *used is how
 * many bytes it took.  NULL and ERR_SYNTAX when text does not start with one. */
IrShape *ir_parse_shape_text(Arena *a, const char *text, size_t len, size_t *used, Error *err);

/* ------------------------------------------------------------------ */
/* proto.c: XLA's binary forms of a module                              */

typedef enum IrProtoKind { IR_PROTO_NONE, IR_PROTO_MODULE, IR_PROTO_HLO, IR_PROTO_SNAPSHOT } IrProtoKind;
/* "HloModuleProto", "HloProto", "HloSnapshot" ("HLO text" for NONE). */
const char *ir_proto_kind_name(IrProtoKind k);
/* Do the first bytes read as text (HloModule first, or no control bytes
 * but tab, CR, LF, or a NUL first, which no proto starts with)?  Every
 * proto hlocheck reads has a control byte within its first few bytes. */
bool ir_bytes_are_text(const void *data, size_t len);
/* Reads an HloModuleProto, HloProto or HloSnapshot (tried in that order;
 * the first that holds a module is taken, m->source_kind says which).
 * Errors name the proto field path, under filename.  m->source_note lists
 * what the proto held that the module does not carry. */
IrModule *ir_parse_proto(const void *data, size_t len, const char *filename, Error *err);
/* Text or proto by content, as ir_parse_file tells them apart. */
IrModule *ir_parse_bytes(const void *data, size_t len, const char *filename, Error *err);
/* When m was read from a proto, writes "tool: note: path: read as an
 * HloModuleProto" to f, followed by "; not carried: ..." when the proto
 * held what m does not carry; for text, nothing. */
void ir_note_source(const IrModule *m, const char *tool, const char *path, FILE *f);

/* ------------------------------------------------------------------ */
/* proto_write.c: a module as XLA's HloModuleProto                      */

/* Appends m, serialized as an HloModuleProto, to b.  Every attribute with
 * a meaning goes into its proto field; one the proto has no field for, or
 * that does not read as its field's value, is ERR_UNSUPPORTED naming the
 * instruction (an unsound proto is worse than none).  What the proto
 * cannot hold and that does not change what the module computes (module
 * config options such as allow_spmd_sharding_propagation_to_output,
 * unknown metadata keys), and instructions renamed because XLA wants
 * names unique in a proto's module (text only in a computation), are
 * told in note, "; "-separated, when note is not NULL. */
bool ir_proto_write(StrBuf *b, const IrModule *m, StrBuf *note, Error *err);

typedef enum IrFormat { IR_FORMAT_TEXT, IR_FORMAT_PROTO } IrFormat;
/* What a file name asks for: a proto for *.pb, text otherwise. */
IrFormat ir_format_of_path(const char *path);

/* ------------------------------------------------------------------ */
/* print.c                                                              */

/* Canonical HLO text: read back identically by this parser and XLA's.
 * Into a buffer from strbuf_init_may_fail, out of memory leaves the text
 * incomplete and b->nomem set (strbuf_check). */
void ir_print_module(StrBuf *b, const IrModule *m);
void ir_print_computation(StrBuf *b, const IrComputation *comp);
void ir_print_instr(StrBuf *b, const IrInstr *instr);
void ir_print_literal(StrBuf *b, const IrLiteral *lit);
void ir_print_replica_groups(StrBuf *b, const IrReplicaGroups *g);
/* The attributes that can change what an instruction computes, as
 * ", name=value" items: all but the called computations (their names say
 * nothing of what they compute), control-predecessors and metadata. */
void ir_print_semantic_attrs(StrBuf *b, const IrInstr *instr);
/* Do the two modules print to the same text? */
bool ir_module_text_equal(const IrModule *a, const IrModule *b);
/* Writes the module to path atomically (temp file in the same directory, then
 * rename); "-" or NULL writes to stdout. */
bool ir_write_module_file(const IrModule *m, const char *path, Error *err);
/* The same in either format; a proto's note (see ir_proto_write) goes to
 * note when it is not NULL. */
bool ir_write_module_file_as(const IrModule *m, const char *path, IrFormat fmt, StrBuf *note, Error *err);
/* A deep copy of m, through its text (so exactly what a user gets from the
 * printed module); NULL with err on failure. */
IrModule *ir_module_copy(const IrModule *m, Error *err);
/* files.c: mkdir -p dir (an error naming the part that cannot be made). */
bool ir_make_dirs(const char *dir, Error *err);
/* A file written beside its target (<path>.tmp.<pid>) and renamed over it
 * once complete and synced: readers, and an interrupted run, see the old
 * file whole or the new one whole, never half of one.  Every file the
 * tools write goes through it. */
typedef struct IrAtomicFile {
    FILE *f;                    /* write here */
    const char *path;           /* borrowed: must outlive the file */
    char *tmp;
} IrAtomicFile;
/* Opens the temporary for writing; false with ERR_IO naming path. */
bool ir_atomic_open(IrAtomicFile *a, const char *path, Error *err);
/* Ends the file: when ok (the caller's writes went well) and the stream
 * shows no error, flushes, syncs and renames it over path; otherwise, or
 * when any of that fails, removes the temporary and returns false with
 * ERR_IO naming path (an error err holds already is kept). */
bool ir_atomic_close(IrAtomicFile *a, bool ok, Error *err);

/* ------------------------------------------------------------------ */
/* graph.c                                                              */

/* Modules drawn as a Graphviz DOT graph: each side a module, each
 * computation drawn a cluster, an instruction a node (name, opcode, shape;
 * collectives as 3-D boxes), an operand an edge.  style->mark(instr, side)
 * gives an instruction's class: 0 drawn faded (unchanged), k > 0 filled
 * with colour k (ir_graph_class_color), named class_names[k - 1] in the
 * legend (the classes drawn).  Drawn: on each side the computations holding a marked
 * instruction (the entry when none does), cut to the marked instructions
 * and those within radius operand or user steps (radius < 0: all), at
 * most max_nodes (0: 300) per computation, the rest counted in a note. */
typedef struct IrGraphSide {
    const IrModule *m;
    const char *title;
} IrGraphSide;
typedef struct IrGraphStyle {
    int (*mark)(const IrInstr *in, int side, void *ctx);
    const char *(*note)(const IrInstr *in, int side, void *ctx);   /* an extra label line, or NULL */
    void *ctx;
    const char *const *class_names;
    int n_classes;
    int radius, max_nodes;
} IrGraphStyle;
bool ir_graph_write_dot(FILE *out, const IrGraphSide *sides, int n_sides, const IrGraphStyle *style);
const char *ir_graph_class_color(int k);
/* The pieces, for other pictures (a checked pair, src/check/): */
/* s with DOT's string escapes (a newline becomes a line break), into out
 * (truncated to n). */
void ir_graph_escape(const char *s, char *out, size_t n);
/* One instruction as a DOT node named id: name, opcode and shape, note's
 * lines under them, attrs (DOT attributes: fill, border) added. */
void ir_graph_node(FILE *out, const char *id, const IrInstr *in, const char *note, const char *attrs);
/* Which instructions of comp to draw: the marked ones (mark[i] != 0 for
 * comp->instrs[i]) and those within radius operand or user steps of one
 * (all when radius < 0, or when none is marked), at most max_nodes, nearest
 * first; draw[i] set for each, returns how many. */
int ir_graph_pick(const IrComputation *comp, const int *mark, int radius, int max_nodes, bool *draw);
/* Draws dot_path into out_path with Graphviz's dot, in the format of
 * out_path's suffix (svg, png, pdf); false with why when dot is missing
 * (saying how to install it) or fails. */
bool ir_graph_render(const char *dot_path, const char *out_path, char *why, size_t why_n);
/* Where a picture's DOT goes: path itself when it ends in .dot, else
 * beside it (x.svg: x.dot). */
void ir_graph_dot_path(const char *path, char *out, size_t n);
/* Writes the DOT that write(f, ctx) gives to ir_graph_dot_path(path) (a
 * whole file or nothing) and, unless that is path, draws it into path with
 * ir_graph_render.  False with err when the DOT cannot be written; when
 * Graphviz cannot draw it, true with why in note (else note[0] = 0). */
bool ir_graph_save(const char *path, bool (*write)(FILE *f, void *ctx), void *ctx, char *note, size_t note_n,
                   Error *err);

/* ------------------------------------------------------------------ */
/* verify.c                                                             */

/* Checks every instruction's shape against its operands and attributes,
 * operand counts and types, dimensions in range, unique names, operands
 * defined before use, replica groups that partition the participants. */
bool ir_verify_module(const IrModule *m, Error *err);
bool ir_verify_instr(const IrInstr *instr, Error *err);

/* ------------------------------------------------------------------ */
/* verify_collectives.c                                                 */

/* Group size of a collective as the verifier counts it (for shape rules):
 * |group| (x num_partitions in cross-replica-and-partition mode).  Uses the
 * module header; -1 when it cannot be known statically. */
int64_t ir_collective_group_size(const IrModule *m, const IrInstr *instr);
/* send / recv: the {source, target} pairs of
 * frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2}}"}
 * (quoted or not).  Stores up to max of them and returns how many there
 * are; -1 when the attribute is absent, -2 when it is malformed. */
int ir_send_recv_pairs(const IrInstr *instr, int64_t (*pairs)[2], int max);

#endif /* IR_H */
