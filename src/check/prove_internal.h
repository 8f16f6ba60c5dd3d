/* prove_internal.h: private to src/check/prove*.c, the symbolic run behind
 * hlo-check --prove (prove.c says what it proves and why it is sound).
 *
 * Every array element of a run carries, beside its value, a 128-bit hash of
 * the expression that computed it (PHash).  Hash arrays are Values too: the
 * "shadow" of an array of shape T[dims] is a c128[dims] array (16 bytes per
 * element), so that the interpreter's own data-movement kernels and
 * collectives move hashes exactly as they move values. */
#ifndef PROVE_INTERNAL_H
#define PROVE_INTERNAL_H

#include "check.h"

#include <stdint.h>

typedef struct PHash {
    uint64_t lo, hi;        /* hi bit 0: the expression reads an entry parameter or an rng (taint) */
} PHash;

#define PH_TAINT 1ull

static inline bool ph_eq(PHash a, PHash b)
{
    return a.lo == b.lo && a.hi == b.hi;
}

static inline bool ph_tainted(PHash h)
{
    return (h.hi & PH_TAINT) != 0;
}

/* ---- prove_hash.c: mixing, leaves, shadows, fingerprints */

/* Node kinds besides opcodes (IrOpcode values below IR_OP_COUNT are ops). */
enum {
    PK_PARAM = 1000,        /* entry parameter leaf */
    PK_CONST,               /* a constant, iota or device id element, by value */
    PK_RNG,                 /* an rng draw of the concrete run, by value */
    PK_GENERIC,             /* an op hashed over all its operands and the element position */
    PK_DOT,                 /* one dot output: its lhs row and rhs column */
    PK_ROW,                 /* a dot operand's row or column, in order */
    PK_APPLY                /* a reducer that is not element-wise, applied */
};

/* Absorbs 64-bit words into a 128-bit state. */
typedef struct PMix {
    uint64_t a, b;
    uint64_t taint;
} PMix;

void pmix_init(PMix *m, uint64_t tag);
void pmix_u64(PMix *m, uint64_t x);
void pmix_hash(PMix *m, PHash h);       /* also ORs its taint in */
void pmix_bytes(PMix *m, const void *p, size_t n);
PHash pmix_done(const PMix *m);
/* Hashes finished by this process so far (for the collision bound). */
int64_t ph_hashes_made(void);

/* Leaves.  A parameter leaf is decodable from its hash alone (any rank can
 * name x[rank 1][0,3]) when it fits the packing; else it is hashed.
 * leaf: the array leaf of the entry parameters, counted across them. */
PHash ph_param(int leaf, int rank, int64_t index);
bool ph_param_decode(PHash h, int *leaf, int *rank, int64_t *index);
/* An element of type t by value (at most 16 bytes); constant leaves of at
 * most 8 bytes decode back to their bits. */
PHash ph_const(IrElemType t, const void *bits, bool taint);
bool ph_const_decode(PHash h, IrElemType *t, uint64_t *bits);

/* The shadow shape of s: every array leaf c128 with the same dims (layout
 * kept); tokens stay.  Freed with ph_shadow_free. */
IrShape *ph_shadow_shape(const IrShape *s);
void ph_shadow_free(IrShape *s);

/* A structural fingerprint of a computation: its instructions' opcodes,
 * shapes, semantic attributes, operand positions, literals and called
 * computations (recursively); names do not count. */
uint64_t ph_computation_fingerprint(const IrComputation *c);
/* The same of one instruction, without its operands: opcode, shape,
 * semantic attributes, literal, called computations. */
uint64_t ph_instr_signature(const IrInstr *instr);
/* What an element-wise op's elements hash besides their operands: opcode,
 * element type and semantic attributes (not the dims). */
uint64_t ph_elementwise_signature(const IrInstr *instr);

/* ---- prove_hash.c, its node table: what a hash stands for, to explain a difference */

typedef struct PNode {
    PHash key;
    int32_t kind;           /* IrOpcode or PK_* */
    int32_t n_kids;         /* children recorded (at most 3); -1: more, not recorded */
    PHash kid[3];
    int64_t at;             /* PK_GENERIC / PK_DOT: the element position */
    int32_t op;             /* the opcode of the instruction that computed it */
    char instr[44];         /* its name */
} PNode;

typedef struct PTable PTable;   /* direct-mapped: a newer node evicts an older one */
PTable *ptable_new(int log2_slots);
void ptable_free(PTable *t);
void ptable_put(PTable *t, const PNode *n);
const PNode *ptable_get(const PTable *t, PHash key);

/* ---- prove_run.c: the concrete and symbolic run of one module */

typedef struct ProveRun {
    Interp *it;             /* concrete evaluation (the module's own interpreter) */
    const IrModule *m;
    InterpDevice dev;
    Coll *c;
    PTable *record;         /* non-NULL: record a node for every hash made */
    int64_t decisions;      /* data-dependent decisions taken from the concrete run */
    int64_t choices;        /* all decisions (data-dependent or not) */
    char first_decision[160];   /* the first data-dependent one, for the report */
    const IrInstr *current; /* the instruction being hashed (for nodes) */
    void *shadows;          /* prove_shadow's map */
    bool opaque_calls;      /* unknown custom calls run as opaque functions */
    const char *opaque[16]; /* the targets hashed as uninterpreted functions */
    int n_opaque;
} ProveRun;

/* Both values of one instruction: concrete and its shadow of hashes. */
typedef struct PVal {
    Value *v, *h;
} PVal;

/* The shadow of shape s, made once per run (values point at it). */
const IrShape *prove_shadow(ProveRun *r, const IrShape *s);
/* A new (uninitialised) hash value shaped as v's shadow. */
Value *prove_new_like(ProveRun *r, const Value *v, Error *err);

/* Runs the entry computation on inputs (borrowed) and returns the result
 * and its hashes (one reference each). */
bool prove_run_entry(ProveRun *r, Value *const *inputs, int n, PVal *out, Error *err);
void prove_run_free(ProveRun *r);

/* ---- prove_ops.c: the hashing rules of the array ops */

/* Records the node of hash h made by the current instruction. */
void prove_note(ProveRun *r, PHash h, int kind, const PHash *kids, int n_kids, int64_t at);
/* True when instr is hashed element by element (prove_elementwise). */
bool prove_is_elementwise(const IrInstr *instr);
bool prove_elementwise(ProveRun *r, const IrInstr *instr, PVal *const *args, Value **h, Error *err);
bool prove_reduce(ProveRun *r, const IrInstr *instr, PVal *const *args, Value **h, Error *err);
bool prove_dot(ProveRun *r, const IrInstr *instr, PVal *const *args, Value **h, Error *err);
/* Is op on type t bitwise the same with its two operands swapped? */
bool prove_commutes(IrOpcode op, IrElemType t, IrCompareDir dir);
/* Any other op: each output element hashes the op's signature, its
 * position, and a digest of every operand element (sound for any
 * deterministic op, exact for none). */
bool prove_generic(ProveRun *r, const IrInstr *instr, PVal *const *args, const PVal *result, Value **h,
                   Error *err);
/* Every element of v hashed by value (constants, iota, device ids, rng). */
Value *prove_by_value(ProveRun *r, const Value *v, int kind, bool taint, Error *err);
/* Applies reducer comp to (acc..., x...) element-wise: k accumulators and k
 * new terms, n elements each, acc[j] updated in place. */
void prove_apply(ProveRun *r, const IrComputation *comp, int k, PHash **acc, PHash *const *x, int64_t n);

/* ---- prove_coll.c: all-reduce and reduce-scatter on hashes */

bool prove_all_reduce(ProveRun *r, const IrInstr *instr, PVal *const *args, const PVal *result, Value **h,
                      Error *err);
/* A leaf zeroed by a collective (collective-permute, -broadcast to devices
 * left out) arrives as the all-zero hash; this gives it the hash of a
 * zero of its type.  Walks tuples. */
void prove_fix_zero_hashes(ProveRun *r, Value *h, const Value *v);

static inline PHash *ph_data(const Value *h)
{
    return (PHash *)h->data;
}

/* ---- prove.c: what check.c asks of the proof */
/* Why m cannot be proved (an op the proof does not model), into why; false
 * when it can.  The same on every rank: decided from the text alone. */
bool check_prove_unsupported(const IrModule *m, int replicas, int partitions, char *why, size_t n);
/* What the proof needs on one rank, estimated from shapes (erring high):
 * both modules' values with their hashes beside them (16 bytes an element),
 * and the largest gather of the members' hashes an all-reduce or
 * reduce-scatter folds. */
int64_t check_prove_need(const IrModule *before, const IrModule *after, int replicas, int partitions);
/* Runs before and after on inputs (this rank's, borrowed) with io on hashes
 * and fills the proof's hash verdict (differs, the first difference and its
 * expressions, decisions, collision bound) agreed on every rank; the caller
 * turns it into a status with the sampled verdict.  Collective on c. */
bool check_prove_pair(Coll *c, const IrModule *before, const IrModule *after, const InterpOptions *io,
                      Value *const *inputs, int n, CheckProof *proof, Error *err);

#endif /* PROVE_INTERNAL_H */
