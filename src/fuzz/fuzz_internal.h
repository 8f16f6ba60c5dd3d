/* fuzz_internal.h: what the files of src/fuzz/ share beyond fuzz.h: the
 * builder's records, and the graph queries the combiners' model makes. */
#ifndef FUZZ_INTERNAL_H
#define FUZZ_INTERNAL_H

#include "fuzz.h"


#define FUZZ_MAX_OPERANDS 512    /* a tuple's: a large module's root holds every site's outputs */
#define FUZZ_MAX_INPUTS 24

typedef enum BCompKind {            /* also the order computations are printed in */
    BCOMP_TEXT,                     /* a reducer, written as text */
    BCOMP_BODY, BCOMP_COND, BCOMP_BRANCH,
    BCOMP_ENTRY,
    BCOMP_KINDS
} BCompKind;

typedef struct BInstr {
    int comp;
    FuzzShape shape;                /* type IR_TYPE_TUPLE for tuples (shape_text says which) */
    char *shape_text;
    char op[96];                    /* opcode, or "constant(...)" */
    int n_ops;
    int *ops;                       /* n_ops entries (heap) */
    char *attrs;
    int ctrl;                       /* control predecessor, -1 */
    bool is_param;
    int param;                      /* entry parameter number */
} BInstr;

typedef struct BComp {
    BCompKind kind;
    char name[64];
    char *text;                     /* BCOMP_TEXT */
    int root;
} BComp;

struct FuzzBuild {
    int replicas, partitions;
    char name[64];
    BInstr *instrs;
    int n_instrs, cap_instrs;
    BComp *comps;
    int n_comps, cap_comps;
    int entry;
    int n_entry_params;
    int *entry_outputs;
    int n_entry_outputs, cap_entry_outputs;
    int channels;
    bool failed;                    /* a limit was passed: no text */
    bool bare_root;                 /* one entry output: it is the root itself, no tuple */
    bool scheduled;                 /* is_scheduled=true: each computation's text order is its schedule */
    bool layouts;                   /* every array shape written with its (default) layout */
    bool omit_partitions;           /* no num_partitions in the header */
    /* the site being built */
    FuzzPlace place;
    int trips, n_site;
    int site_comp, state, counter;
    int n_in;
    int in_entry[FUZZ_MAX_INPUTS], in_site[FUZZ_MAX_INPUTS];
};

/* The root of comp (the entry's root tuple is made on first request). */
int fuzz_comp_root(FuzzBuild *b, int comp);
/* comp's instructions in the spec's post order (hlo-reference.md 7.3:
 * every instruction without users in order, a DFS through the control
 * predecessor, then the operands in order); out holds n_instrs ids. */
int fuzz_comp_post_order(FuzzBuild *b, int comp, int *out);
/* Does `from` depend on `to` (through operands or control edges)? */
bool fuzz_reaches(const FuzzBuild *b, int from, int to);
int fuzz_instr_comp(const FuzzBuild *b, int v);
int fuzz_entry_outputs(const FuzzBuild *b);
bool fuzz_comp_is_while_part(const FuzzBuild *b, int comp);

/* child.c: the passes run in a child process (a crash or hang is a finding) */
typedef enum PassStatus { RUN_CHANGED, RUN_UNCHANGED, RUN_FAILED, RUN_CRASHED, RUN_HUNG } PassStatus;

typedef struct PassRun {
    PassStatus status;
    char *text;                     /* the module the pass left (also when invalid) */
    size_t len;
    char *msg;                      /* RUN_FAILED, RUN_CRASHED: what went wrong */
    long fired;
} PassRun;

/* Rank 0 runs passes[0..n) on m in a child with a deadline of timeout
 * seconds; every rank gets the outcome (out->text and out->msg malloc'd). */
void fuzz_run_pass(Coll *c, const IrModule *m, const Pass *const *passes, int n, const PassOptions *opt,
                   double timeout, PassRun *out);

#endif /* FUZZ_INTERNAL_H */
