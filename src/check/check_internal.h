/* check_internal.h: private to src/check/, what its files give each other
 * beyond check.h, the API the tools, the tests and hlo-fuzz use.  By the
 * file that defines each. */
#ifndef CHECK_INTERNAL_H
#define CHECK_INTERNAL_H

#include "check.h"

/* ---- random_inputs.c: the trials' kinds and the raw streams */
/* The kind trial t draws: dist itself, or for CHECK_DIST_MIXED the t-th of
 * uniform, copies, edges, pairs, small, extreme, wide, special (cyclic). */
CheckDist check_trial_dist(CheckDist dist, int trial);
/* "uniform, copies, ...": the kinds trials 0..n-1 draw (at most 8 named). */
void check_trial_dists_text(CheckDist dist, int n, char *out, size_t size);
/* A value of shape s drawn as above from the stream whose key is given
 * (the s[i] = sm(key + i*G) step on): opaque custom calls and elided
 * constants. */
Value *check_random_value(uint64_t key, const IrShape *s, CheckDist dist, Error *err);

/* ---- tolerance.c: the classes and one leaf against its tolerance */
const char *check_tol_class_name(CheckTolClass c);       /* "transcendental" */
const char *check_tol_class_measure(CheckTolClass c);    /* "ulp", "scaled ulp", ... */
double check_tol_class_tolerance(CheckTolClass c);
/* The class of each leaf of the entry's result, in leaf order (at most max
 * filled); returns how many leaves there are. */
int check_output_tolerances(const IrModule *m, CheckLeafTolerance *out, int max);
/* Does got (hlo-run's) lie within t's tolerance of want (the other
 * implementation's)?  d says how far and where. */
bool check_leaf_within(const CheckLeafTolerance *t, const Value *got, const Value *want, CheckLeafDistance *d);

/* ---- compare.c: values as doubles, accuracies merged */
/* The elements of an array value as doubles (exact for every float type);
 * malloc'd, the caller frees it.  One type dispatch per array, not per
 * element. */
double *check_values_f64(const Value *v);
/* Merges b into a (sums and maxima). */
void check_accuracy_merge(CheckAccuracy *a, const CheckAccuracy *b);
/* Row-major element index of shape s as "[i,j,...]". */
void check_where_text(const IrShape *s, int64_t index, char *out, size_t n);

/* ---- oracle.c: one value widened */
/* v converted to f64 where its type is a float (exactly), as shape s. */
Value *check_widen_value(const Value *v, const IrShape *s, Error *err);

/* ---- check.c: the seed of one trial */
uint64_t check_trial_seed(uint64_t seed, int trial);

/* ---- sites.c: the probes of accumulation sites */
/* m with its root replaced by tuple(root, probes...): the values of the named
 * entry instructions become extra outputs.  NULL with err when a name is not
 * in the entry computation. */
IrModule *check_probe_module(const IrModule *m, const char *const *names, int n, Error *err);
/* Adds to p (after's copy), beside each measured site's reduction R' in
 * R''s own computation, two instructions that nothing reads: R' redone in
 * f64 on the same values, and the same reduction of their absolute values
 * (sum|x_i| for the bound); their names go into the site's exact_probe and
 * abs_sum_probe, for the interpreter's observer (check.c). */
bool check_add_exact_probes(IrModule *p, CheckSite *sites, int n_sites, Error *err);
/* The instruction named name in the site's computation of m, or NULL. */
IrInstr *check_site_instr(const IrModule *m, const CheckSite *site, const char *name);

/* ---- local_values.c: --local's value numbers and the correspondence of a computation pair */
/* The value numbers of both modules' instructions and computations. */
typedef struct CheckNumbering {
    Arena *arena;
    IrNameMap *keys;        /* key text -> number + 1 */
    int next;
    const IrModule *m[2];
    int *vn[2];             /* [side][instruction id] */
    int *cvn[2];            /* [side][computation id] */
    int *ids[2];            /* [side][computation id]: max over the module, for sizing */
} CheckNumbering;

/* An instruction of each side: before's, after's. */
typedef struct CheckValuePair { const IrInstr *x[2]; } CheckValuePair;

/* A pair of computations to analyse; for loop bodies, the state elements
 * that are counters and the values the loop gives them, [lo, hi). */
enum { MAX_COUNTERS = 8 };
typedef struct CheckCompPair {
    const IrComputation *c[2];
    int n_counters;
    int counter[MAX_COUNTERS];
    int64_t lo[MAX_COUNTERS], hi[MAX_COUNTERS];
} CheckCompPair;

/* One computation pair analysed: what both sides compute alike, what
 * corresponds, the output pairs and the nested pairs to analyse in turn. */
typedef struct CheckAnalysis {
    CheckNumbering *nb;
    const IrComputation *c[2];
    const CheckCompPair *pair;       /* its loop counters, when a loop body */
    int n_vn;
    const IrInstr **by_vn[2];   /* [side][vn]: an instruction of c[side] with that number */
    bool *param_free[2];        /* [side][instr id]: depends on no parameter of c[side], or only on
                                   loop counters (which enter a region as ranged inputs) */
    bool *counter[2];           /* [side][instr id]: a loop counter (get-tuple-element of the state) */
    int *key[2];                /* [side][instr id]: 1 + the number a region input is known by: its value
                                   number when shared, else one given to a matched pair; 0: none */
    int n_keys;                 /* value numbers, then the matched pairs' numbers */
    const IrInstr **by_key[2];  /* [side][key]: an instruction known by it */
    CheckValuePair *outs;                 /* output pairs */
    int n_outs, cap_outs;
    CheckCompPair *nested;           /* computation pairs to analyse in turn */
    int n_nested, cap_nested;
    uint64_t *seen;             /* open-addressed set of visited pairs (b id << 32 | a id) + 1 */
    size_t seen_cap, n_seen;
} CheckAnalysis;

/* Numbers every instruction and computation of module nb->m[side], callees
 * first (key: scratch). */
void check_number_module(CheckNumbering *nb, int side, StrBuf *key);
/* Is x get-tuple-element *index of c's one parameter (a loop state element)? */
bool check_gte_of_param(const IrInstr *x, const IrComputation *c, int64_t *index);
/* Does x's value number (x of side's computation) appear in both computations? */
bool check_shared(const CheckAnalysis *an, const IrInstr *x, int side);
/* an for pair: its shared, parameter-free and counter instructions, the
 * shared ones known by their value numbers; check_analysis_free frees it. */
void check_analysis_init(CheckAnalysis *an, CheckNumbering *nb, const CheckCompPair *pair);
/* From the two roots down: matches pairs that are alike, collects the
 * output pairs and the computation pairs to analyse in turn. */
void check_correspond(CheckAnalysis *an);
/* From the leaves down: matches instructions whose op keys and operands'
 * keys agree; whether any match was new. */
bool check_propagate(CheckAnalysis *an);
/* After the correspondence: the instruction of each side each key names. */
void check_index_keys(CheckAnalysis *an);
void check_analysis_free(CheckAnalysis *an);

/* ---- locate.c */
/* The instruction of m whose id is id (any computation), or NULL. */
const IrInstr *check_instr_by_id(const IrModule *m, int id);

/* ---- local_regions.c: the regions */
/* Does the region hold one of the pair's sites (a reduction whose
 * accumulation type the rewrite changed)? */
bool check_region_holds_site(const CheckRegion *r, const CheckSite *sites, int n_sites);

/* ---- report.c: --local's lines, as check_local goes */
/* "hlo-check --local: A vs B: N regions where they differ" */
void check_print_local_head(FILE *out, const char *before_name, const char *after_name, int n);
/* "region i/n in C: what: a -> b instructions, ..." (the line left open) */
void check_print_region_head(FILE *out, const CheckRegion *r, const CheckRegionResult *res);
/* ", <need> per rank x <ranks> ranks" when with_need (the line still open). */
void check_print_region_need(FILE *out, const CheckRegionResult *res, bool with_need);
/* The verdict closing the line, and the region's report when it differs. */
void check_print_region_verdict(FILE *out, const CheckRegionResult *res, const CheckReport *rep);
/* ": NOT RUN: why, and what would run it": for a region too big for its
 * ranks here, the nodes of node_memory bytes it needs and the launch lines
 * that place it on them (mpirun on nodes like this, mpirun with a hostfile,
 * Slurm's srun). */
void check_print_region_not_run(FILE *out, const CheckRegionResult *res, int64_t node_memory);
/* The regions differ or change precision and the whole pair is checked. */
void check_print_local_whole(FILE *out, const CheckLocal *l);

#endif /* CHECK_INTERNAL_H */
