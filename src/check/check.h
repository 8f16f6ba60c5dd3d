/* check.h: the equivalence checker's public API, and the seeded inputs it
 * shares with hlo-run.  What src/check/'s files give only each other is in
 * check_internal.h, shrink_internal.h and prove_internal.h. */
#ifndef CHECK_H
#define CHECK_H

#include "interp.h"

/* ------------------------------------------------------------------ */
/* random_inputs.c: seeded, per-rank, per-parameter input streams       */

typedef enum CheckDist {
    CHECK_DIST_UNIFORM,     /* floats in [-1, 1); hlo-run's default */
    CHECK_DIST_NORMAL,      /* standard normal */
    CHECK_DIST_WIDE,        /* magnitudes spread over many binades, random sign */
    CHECK_DIST_SPECIAL,     /* NaN, +-inf, -0, subnormals, max/min finite, ties mixed in */
    /* The kinds that reach boundaries (random_inputs.c says how each is drawn): */
    CHECK_DIST_COPIES,      /* every parameter of one element type holds the same values */
    CHECK_DIST_PAIRS,       /* parameters of one type share a value per element, or its negation, or not */
    CHECK_DIST_EDGES,       /* mostly special values: NaN and -0 one element in eight each */
    CHECK_DIST_SMALL,       /* small integers, halves, powers of two; integer bit widths */
    CHECK_DIST_EXTREME,     /* integer limits and their neighbours; floats over the whole range, +-inf */
    CHECK_DIST_MIXED        /* hlo-check's default: trial t draws kind check_trial_dist(MIXED, t) */
} CheckDist;

bool check_dist_from_name(const char *name, CheckDist *dist);
const char *check_dist_name(CheckDist dist);

/* The value of entry parameter `param` for device `rank`: drawn from the
 * stream keyed by (seed, rank, param), the same bits on any machine.
 * Integers are uniform over a small range, pred is a fair coin; a parameter
 * used as a dynamic-slice / dynamic-update-slice index lands in range half the
 * time and needs clamping the other half. */
Value *check_random_input(const IrModule *m, int param, int rank, uint64_t seed, CheckDist dist,
                          Error *err);
/* The range [*lo, *hi) a scalar integer parameter is drawn from when it
 * carries frontend_attributes={hlocheck_range="lo,hi"}; false without. */
#define CHECK_RANGE_ATTR "hlocheck_range"
bool check_param_range(const IrInstr *param, int64_t *lo, int64_t *hi);
/* All entry parameters; out has m->entry->n_params slots. */
bool check_random_inputs(const IrModule *m, int rank, uint64_t seed, CheckDist dist, Value **out,
                         Error *err);

/* ------------------------------------------------------------------ */
/* opaque.c: custom calls the interpreter cannot run, and elided constants */

/* 64-bit hash of n bytes, continuing from h (the same on any machine). */
uint64_t check_hash_bytes(uint64_t h, const void *p, size_t n);
/* The InterpOpaqueFn of hlo-check (and hlo-run --opaque-custom-calls): the
 * outputs of a custom call are a uniform draw (floats in [-1, 1), small
 * integers, fair pred) from the stream keyed by a hash of its target, its
 * backend_config and every operand's shape and bytes.  Two modules that
 * make the same call on the same operands get the same outputs; different
 * operand values give unrelated ones. */
bool check_opaque_custom_call(const IrInstr *instr, Value *const *args, int n_args, Value **out, Error *err);
/* Gives every elided constant ({...}) of m values drawn from the stream
 * keyed by a hash of (seed, its name), so that two modules holding the same
 * constant get the same values (--fill-elided).  Returns how many were
 * filled (and, when any, a one-line note naming them), -1 on error. */
int check_fill_elided_constants(IrModule *m, uint64_t seed, char *note, size_t note_size, Error *err);

/* ------------------------------------------------------------------ */
/* digest.c: outputs compared by block hashes, when both do not fit      */

typedef struct CheckDigest CheckDigest;
/* The block hashes of n array leaves (NaNs canonical, as exact comparison
 * takes any NaN for any NaN). */
CheckDigest *check_digest_new(Value *const *leaves, int n);
/* The first block of leaves (the other module's, same shapes) whose hash
 * differs: its leaf, first element and element count; false when none. */
bool check_digest_first_mismatch(const CheckDigest *d, Value *const *leaves, int n, int *leaf, int64_t *first,
                                 int64_t *count);
void check_digest_free(CheckDigest *d);

/* ------------------------------------------------------------------ */
/* tolerance.c: the XLA reference's tolerance table, for another          */
/* implementation's output (a snapshot's recorded result)                 */

/* Loosest last: an output takes the loosest class of its cone. */
typedef enum CheckTolClass {
    CHECK_TOL_EXACT, CHECK_TOL_CONTRACTION, CHECK_TOL_TRANSCENDENTAL, CHECK_TOL_COMPLEX, CHECK_TOL_ACCUMULATION,
    CHECK_TOL_BATCH_NORM, CHECK_TOL_COMPLEX_POWER, CHECK_TOL_UNSPECIFIED, CHECK_TOL_COUNT
} CheckTolClass;

typedef struct CheckLeafTolerance {
    CheckTolClass cls;
    IrElemType measure_type;    /* whose ulp: the narrowest of the leaf's type and the cone's accumulation types */
} CheckLeafTolerance;


typedef struct CheckLeafDistance {
    bool shape_differs;         /* another type or other dimensions */
    double worst;               /* the largest distance measured, in the class's unit */
    int64_t first;              /* the first element beyond the tolerance, -1 when none */
    int64_t n_bad;              /* how many elements are */
} CheckLeafDistance;

/* ------------------------------------------------------------------ */
/* snapshot.c: replaying an HloSnapshot (m->snapshot)                    */

/* Snapshot s's recorded arguments as m's entry parameters (n_params
 * values); ERR_MISMATCH naming the argument when one does not fit. */
bool check_snapshot_params(const IrSnapshot *s, const IrModule *m, Value **params, Error *err);
/* result (this run's) against the recorded one, leaf by leaf under the
 * tolerance table: one line per output into report, each starting
 * "hlo-run: snapshot: " then who ("rank 1: " or "").  Returns how many
 * outputs differ, -1 (err) when there is nothing to compare with. */
int check_snapshot_compare(const IrModule *m, const Value *result, const char *who, StrBuf *report, Error *err);

/* given_inputs.c: --inputs DIR|F0.snapshot.pb[,F1...] */

/* This rank's values for m's entry parameters: DIR/param<p>.rank<rank>.npy,
 * or, for a file or a comma-separated list, the arguments the rank-th
 * HloSnapshot recorded (one per rank: world of them).  *out (freed with
 * check_given_free, also after a failure) holds *n_out values. */
bool check_given_inputs(const char *spec, int rank, int world, const IrModule *m, Value ***out, int *n_out,
                        Error *err);
void check_given_free(Value **given, int n);

/* ------------------------------------------------------------------ */
/* compare.c: element comparisons and accuracy against an oracle        */

typedef enum CheckCompare { CHECK_EXACT, CHECK_TOL, CHECK_ULP, CHECK_AUTO } CheckCompare;

typedef struct CheckTolerance {
    CheckCompare mode;      /* EXACT, TOL or ULP (AUTO is resolved before comparing) */
    double atol, rtol;      /* TOL: |a - b| <= atol + rtol * |b| */
    double ulp;             /* ULP: at most this many units in the last place apart */
} CheckTolerance;

/* Units in the last place between two elements of float type t, counting
 * representable values between them (+0 and -0 are the same point); 0 when
 * both are NaN, infinity when only one is. */
double check_ulp_distance(IrElemType t, const void *a, const void *b);
/* The spacing of type t's values at magnitude |x| (its ulp there). */
double check_ulp_of(IrElemType t, double x);
/* Do two elements of type t agree under tol?  Exact is bitwise, except that
 * two NaNs are equal. */
bool check_elements_agree(IrElemType t, const void *a, const void *b, const CheckTolerance *tol);
/* Index of the first element where arrays a and b (same shape) disagree; -1
 * when they agree everywhere.  Values of dynamic size disagree where an
 * element is within the runtime sizes of one only; padding is ignored. */
int64_t check_first_difference(const Value *a, const Value *b, const CheckTolerance *tol);
/* Whether element i (row-major in its bounded shape) of array v is within
 * its runtime sizes (always, for a value without sizes). */
bool check_within_sizes(const Value *v, int64_t i);


/* Error of values of type t against an f64 oracle, accumulated. */
typedef struct CheckAccuracy {
    int64_t n;
    double max_abs, sum_abs;
    double max_rel;
    double max_ulp, sum_ulp;    /* in ulps of the value's own type at the oracle's magnitude */
    int64_t nonfinite;          /* value non-finite where the oracle is not, or the reverse */
    /* check_judge_add only: the error summed over the elements where the
     * oracle and both sides are finite.  A side's sum_abs leaves out its
     * own misses, so where only before missed (f16 overflowed, f32 did
     * not), after's sum holds an element before's does not.  The verdict
     * keeps sum_abs (conservative); the report and hlo-fuzz's judgement of
     * a widening rewrite read these sums, which cover the same elements. */
    bool paired;
    double sum_abs_paired;
} CheckAccuracy;

/* Adds the error of v (array of a float or integer type) against oracle (the
 * same dims, f64). */
void check_accuracy_add(CheckAccuracy *acc, const Value *v, const Value *oracle);
/* before and after against the oracle, element by element: which is closer. */
typedef struct CheckDuel { int64_t better, equal, worse; } CheckDuel;
void check_duel_add(CheckDuel *duel, const Value *before, const Value *after, const Value *oracle);
/* The three above for both sides at once, each value converted once. */
void check_judge_add(CheckAccuracy *acc_before, CheckAccuracy *acc_after, CheckDuel *duel, const Value *before,
                     const Value *after, const Value *oracle);
/* The mean error over the elements both sides got finite when paired,
 * else over every element the side got finite. */
double check_judged_mean(const CheckAccuracy *a);

/* ------------------------------------------------------------------ */
/* oracle.c: the same function with every floating type widened to f64   */

/* A copy of m in which every float element type (shapes, literals, called
 * computations) is f64: converts between float types become identities,
 * integer and pred semantics are unchanged, collectives fold in f64.
 * bitcast-convert and reduce-precision of floats have no f64 meaning:
 * ERR_UNSUPPORTED naming the instruction. */
IrModule *check_widen_module(const IrModule *m, Error *err);

/* ------------------------------------------------------------------ */
/* check.c: both modules on the same inputs, every rank, every output    */

typedef struct Coll Coll;   /* src/collectives/coll.h */

typedef struct CheckOptions {
    int trials;                 /* --trials, default 8 */
    uint64_t seed;              /* --seed, default 0: trial t draws with check_trial_seed(seed, t) */
    CheckDist dist;             /* --dist, default uniform */
    CheckTolerance tol;         /* --compare (default auto), --atol, --rtol, --ulp */
    int oracle;                 /* -1: auto (on when precision changes), 0 off, 1 on */
    int replicas, partitions;   /* overrides; 0: from the module header */
    const char *save_dir;       /* --save-counterexample DIR, or NULL */
    Value *const *inputs;       /* non-NULL: this rank's inputs for every trial (--inputs DIR, a shrunk */
    int n_inputs;               /*   pair), borrowed, instead of drawn from --seed */
    bool progress;              /* trials done / total on stderr */
    bool opaque_custom_calls;   /* unknown custom-call targets run as check_opaque_custom_call (default) */
    int64_t max_memory;         /* bytes one rank may need (estimated before running); 0: no limit */
    const char *max_memory_why; /* where the limit comes from, for the message */
    bool prove;                 /* --prove: also run both modules on hashes (prove.c) */
} CheckOptions;

void check_options_default(CheckOptions *opt);
/* The rule of a verdict by accuracy, for one output or site: after's mean
 * absolute error against the oracle is no larger than before's (to a
 * relative 1e-9) and it has no more non-finite misses. */
bool check_no_less_accurate(const CheckAccuracy *before, const CheckAccuracy *after);


typedef struct CheckDifference {
    bool found;
    int trial, rank, output;
    uint64_t seed;              /* the trial's input seed */
    CheckDist dist;             /* the kind its inputs were drawn from (check_trial_dist) */
    int64_t index;              /* row-major element index */
    char where[96];             /* the index as [i,j,...] */
    char before[48], after[48]; /* the two values as HLO literals */
} CheckDifference;

typedef struct CheckOutput {
    char shape[160];
    CheckAccuracy before, after;    /* against the oracle, over all trials and ranks */
    CheckDuel duel;
    bool by_sites;              /* its mean error grew, but by chance alone: the sites decide (the verdict) */
} CheckOutput;

/* The rule for an output: check_no_less_accurate; or, when sites_decide
 * (every site measured and no less accurate), no more of its elements got
 * farther from the oracle than nearer beyond chance (a sign test: worse -
 * better <= 3 sqrt(worse + better)).  A more precise sum feeding outputs
 * whose error comes mostly from elsewhere (a bf16 forward and backward
 * pass, parameters rounded to bf16 after an update) moves them by rounding
 * noise that raises or lowers their mean error by chance; the sites,
 * measured against their exact sums, are where the rewrite's effect is. */
bool check_output_no_less_accurate(const CheckOutput *o, bool sites_decide);

/* A reduction whose accumulation type the rewrite changed (#102, #104 with a
 * convert), found by reading both modules. */
typedef struct CheckSite {
    char before_name[96], after_name[96];   /* the reductions; "name[i]" for operand i of a variadic one */
    char before_probe[96], after_probe[96]; /* the instructions holding the accumulated value in the
                                               wide type (in the entry or a computation it calls),
                                               "" when there is none */
    char exact_probe[96], abs_sum_probe[96];    /* after's: the reduction redone in f64, and of |x| */
    char comp[96];              /* the computation holding it, in both modules (instruction names
                                   are unique only within a computation) */
    char after_reduction[96];   /* R' itself, and which of its operands this is */
    int after_operand;
    IrOpcode op;
    IrElemType before_type, after_type;
    int group_size;
    bool measured;              /* its values were observed, at every execution of the reduction */
    bool unmatched;             /* the two modules ran it a different number of times: not measured */
    int64_t executions;         /* of R', over trials and ranks */
    IrElemType value_type;      /* the wide type both values are compared in */
    /* Error of both values against the exact reduction of the same inputs
     * (the reduction redone in f64 on the values R' reduces), in ulps of
     * value_type; and as a fraction of the sequential-sum bound
     * gamma(n-1) * sum|x_i| in each side's accumulation type. */
    CheckAccuracy before, after;
    double before_bound, after_bound;   /* max over elements of error / bound */
} CheckSite;

/* What hlo-check --prove adds to a report (filled by prove.c). */
typedef enum CheckProofStatus {
    CHECK_PROOF_OFF,            /* not asked for */
    CHECK_PROOF_PROVED,         /* every output element's hash equal on every rank */
    CHECK_PROOF_REFUTED,        /* hashes differ and a trial found a bitwise difference */
    CHECK_PROOF_NOT_PROVED,     /* hashes differ (or the proof could not run) and no trial found one */
    CHECK_PROOF_NOT_EXACT       /* a precision-changing rewrite: judged by accuracy */
} CheckProofStatus;

typedef struct CheckProof {
    CheckProofStatus status;
    bool unconditional;         /* no decision depended on an entry parameter */
    int64_t decisions;          /* data-dependent decisions taken from the concrete run (max over ranks) */
    char first_decision[160];   /* the first of them */
    char why[240];              /* NOT PROVED / NOT EXACT: why */
    int64_t hashes;             /* hashes made, both modules, all ranks */
    double collision_log2;      /* log2 of the bound on the chance that two expressions collided */
    int n_opaque;               /* custom-call targets hashed as uninterpreted functions */
    char opaque[8][64];
    /* The first output element whose hashes differ (lowest rank, output, index). */
    bool differs;
    int64_t n_differ;           /* elements that differ, all ranks */
    int rank, output;
    int64_t index;
    char where[96];
    char before_expr[640], after_expr[640];
    char before_at[200], after_at[200];   /* where the two first diverge */
    double seconds;
} CheckProof;

typedef struct CheckReport {
    int world, replicas, partitions, trials_run;
    CheckDist dist;             /* the inputs' kind as run: opt->dist, or uniform for a pair judged by accuracy */
    bool inputs_given;          /* opt->inputs: no seed drew them */
    bool precision_changing;    /* some reduction's accumulation type changed */
    bool by_accuracy;           /* judged against the oracle instead of bitwise */
    bool by_digest;             /* before's outputs kept as block digests to fit --max-memory (digest.c) */
    bool oracle;
    CheckCompare mode;          /* as resolved */
    CheckDifference diff;       /* the first difference (lowest trial, then rank) */
    int n_outputs;
    CheckOutput *outputs;
    int n_sites;
    CheckSite *sites;
    bool accuracy_ok;
    bool equivalent;            /* the verdict: exit 0 when true, 1 when false */
    int n_opaque;               /* custom-call targets run as opaque functions (both modules) */
    const char *opaque[16];     /* the first 16 of them; point into the modules */
    CheckProof proof;           /* --prove */
} CheckReport;

/* Runs before and after on the same seeded inputs on this rank for
 * opt->trials trials and fills rep on every rank (agreed across ranks).
 * Input errors (signatures differ, world size) are ERR_MISMATCH. */
bool check_modules(Coll *c, const IrModule *before, const IrModule *after, const CheckOptions *opt,
                   CheckReport *rep, Error *err);
void check_report_free(CheckReport *rep);

/* ------------------------------------------------------------------ */
/* per_pass.c: which pass breaks equivalence (--per-pass)               */

typedef struct Pass Pass;               /* src/passes/pass.h */
typedef struct PassOptions PassOptions;

/* A copy of before rewritten by passes[0..n) and verified (an invalid result
 * is ERR_INTERNAL: a pass bug). */
IrModule *check_rewrite(const IrModule *before, const Pass *const *passes, int n, const PassOptions *po,
                        bool *changed, Error *err);

typedef struct CheckPassStep {
    const Pass *pass;           /* the last pass of this prefix */
    bool checked;               /* false: the prefix changed nothing more */
    bool equivalent;
    CheckReport report;         /* when checked */
} CheckPassStep;

typedef struct CheckPerPass {
    CheckPassStep *steps;       /* one per prefix tried, in order */
    int n_steps;
    int broken;                 /* the step whose pass breaks equivalence; -1 none */
    IrModule *after;            /* that prefix's module */
} CheckPerPass;

/* Checks before against it rewritten by passes[0..k) for k = 1..n, until
 * one is not equivalent.  Collective on c. */
bool check_per_pass(Coll *c, const IrModule *before, const Pass *const *passes, int n, const PassOptions *po,
                    const CheckOptions *co, CheckPerPass *out, Error *err);
void check_per_pass_free(CheckPerPass *p);
/* --per-pass: "after #N pass  equivalent|NOT EQUIVALENT", and the closing
 * line naming the first pass that breaks equivalence. */
void check_print_pass_step(FILE *out, const CheckPassStep *s);
void check_print_per_pass_verdict(FILE *out, const CheckPerPass *pp, const char *passes);

/* ------------------------------------------------------------------ */
/* prove.c: equivalence for all inputs (hlo-check --prove)              */


/* ------------------------------------------------------------------ */
/* memory.c: what a run needs against what the machine has             */

/* check.c: the estimated need of one rank checking before against after
 * (and the f64 oracle when given): the inputs, before's outputs held
 * while after runs, both while the oracle runs on its widened inputs. */
void check_pair_need(const IrModule *before, const IrModule *after, const IrModule *oracle, InterpMemory *out);
/* The same when before's outputs are kept as a digest only (a bitwise
 * comparison that does not fit otherwise does that, digest.c): the larger
 * of the two modules' own needs. */
void check_pair_lean_need(const IrModule *before, const IrModule *after, InterpMemory *out);
/* memory.c: the default --max-memory: this node's physical memory over the
 * ranks running on it, with the reason in why ("24.6 GB physical / 4 ranks"). */
int64_t check_default_max_memory(Coll *c, char *why, size_t n);
/* False, with ERR_UNSUPPORTED located at the instruction where the need
 * peaks, when need (what) exceeds limit; a message with the figures. */
bool check_memory_fits(const char *what, const InterpMemory *need, int64_t limit, const char *why, Error *err);

/* ------------------------------------------------------------------ */
/* local_regions.c: the regions where two modules differ (--local)     */

typedef struct CheckRegion {
    IrModule *before, *after;   /* the region's two sides as modules: its inputs their parameters */
    char where[200];            /* the computation (pair) it lies in */
    char what[420];             /* "a, b (+3) -> c (+2)": some instructions of each side */
    int instrs[2];              /* its instructions on each side */
    int n_inputs, n_outputs;
    bool device_ids;            /* reads replica-id or partition-id */
    bool point_to_point;        /* holds send / recv, which cannot be cut out of a module */
    int group_size;             /* > 0: every collective of both sides on the same groups of this
                                   size, and no device id read: one group stands for all */
    /* Where it lies in the two modules it was found in (instruction ids of
     * those modules, valid while they live): the computation on each side,
     * the instructions it computes itself (not the shared ones it reads),
     * and its outputs, n_outputs pairs in the order of its modules' root
     * tuple (outputs[0][j] the value before gives, outputs[1][j] after's). */
    const IrComputation *comp[2];
    int *members[2], n_members[2];
    int *outputs[2];
} CheckRegion;

/* The regions where after differs from before (local_values.c and
 * local_regions.c say how they are found, local_regions.c why the pair is
 * equivalent when every region is); *n_out of them into *out, to free with
 * check_regions_free. */
bool check_find_regions(const IrModule *before, const IrModule *after, CheckRegion **out, int *n_out, Error *err);
void check_regions_free(CheckRegion *r, int n);
/* The regions, and for every instruction of after outside them the one of
 * before that computes the same value (shared, or matched): what a picture
 * of the pair draws once. */
typedef struct CheckPairMap {
    CheckRegion *regions;
    int n_regions;
    int *before_of;             /* [after instruction id]: 1 + the id of its before instruction, 0: none */
    int *region_of[2];          /* [side][instruction id]: 1 + the region computing it, 0: none */
} CheckPairMap;
bool check_map_pair(const IrModule *before, const IrModule *after, CheckPairMap *map, Error *err);
void check_pair_map_free(CheckPairMap *map);
/* Rewrites a region with group_size > 0 to one group of that many devices
 * (replica_count=G, every collective on {0..G-1} across replicas): each
 * group computes the same function of its members' inputs, so one group's
 * check stands for all of them. */
bool check_region_one_group(CheckRegion *r, Error *err);
/* The devices m runs on: its header's count, else one more than the largest
 * device id its replica groups name (real dumps leave the header out), else
 * world. */
int check_module_devices(const IrModule *m, int world);

/* ------------------------------------------------------------------ */
/* locate.c: the first instruction whose values differ                  */

typedef struct CheckLocated {
    bool found;
    int region, output;         /* the map's region and which of its outputs; output -1: a pair
                                   computed alike outside the regions (region -1), -2: two of the
                                   region's instructions that keep their name and shape */
    int before_id, after_id;    /* the two instructions computing that output */
    int rank;                   /* the lowest rank where they differ */
    int execution;              /* on that rank, the first execution that differs (0: the first; a
                                   loop body's instructions run once per iteration) */
    char where[96];             /* their first differing element, "[i,j]" */
    char before[48], after[48]; /* its two values, as HLO literals */
    bool free_inputs;           /* seen in the region's own check on free inputs (--local), not on
                                   the module's values */
    bool beside_precision;      /* a pair judged by accuracy: bitwise, leaving out what reads a
                                   reduction whose accumulation type changed (it differs by design) */
    bool by_design;             /* ... and nothing else differs: the first difference is where an
                                   accumulation type changed (which accuracy judges) */
} CheckLocated;

/* Runs both modules again on the inputs of rep's first difference (its
 * trial's seed and kind, or opt->inputs) and compares the values the
 * rewrite claims unchanged (map): what after computes alike outside the
 * regions against before's, and each region's outputs that it computes
 * itself.  The first claim that fails, in the order of the map's
 * computations (the entry's first) and before's schedule, under rep's
 * comparison, each of the first 16 executions in turn, is out.  A pair
 * judged less accurate is run on its first trial's inputs and compared
 * bitwise (beside_precision), leaving out what reads a reduction whose
 * accumulation changed and, in a region holding one, claiming instead the
 * instructions that keep their name and shape; when nothing else differs,
 * the first claim that fails with those included (by_design).  out->found
 * is false when
 * every claim holds (or rep has no difference).  Collective on c: false
 * (err) on a rank that failed, every rank told. */
bool check_locate(Coll *c, const IrModule *before, const IrModule *after, const CheckPairMap *map,
                  const CheckOptions *opt, const CheckReport *rep, CheckLocated *out, Error *err);

/* ------------------------------------------------------------------ */
/* local_check.c: each region checked on its own (--local)             */

typedef enum CheckRegionVerdict {
    CHECK_REGION_NOT_RUN = -1,
    CHECK_REGION_DIFFERS = 0,       /* on free inputs */
    CHECK_REGION_EQUIVALENT = 1,
    CHECK_REGION_PRECISION = 2,     /* an accumulation type changed here: judged on the whole pair */
} CheckRegionVerdict;

typedef enum CheckNotRun {
    CHECK_RAN,
    CHECK_NOT_RUN_P2P,              /* holds send / recv */
    CHECK_NOT_RUN_RANKS,            /* needs more ranks than the job has */
    CHECK_NOT_RUN_MEMORY,           /* needs more than the limit per rank */
} CheckNotRun;

/* One region's outcome, as report.c prints it. */
typedef struct CheckRegionResult {
    int index, n;                   /* region index (from 0) of n */
    CheckRegionVerdict verdict;
    CheckNotRun not_run;
    int ranks, devices, world;      /* ranks it runs on, devices it spans, the job's ranks */
    bool one_group;                 /* one group of its devices stands for all */
    InterpMemory need;              /* per rank */
    int64_t limit;                  /* --max-memory per rank (0: none) */
    char limit_why[160];
    double seconds;
    CheckDifference diff;           /* DIFFERS: its first difference, on free inputs (rank 0's) */
} CheckRegionResult;

typedef struct CheckLocalOptions {
    int region;                     /* > 0: check this region only (1-based) */
    bool max_memory_given;          /* else a region's limit is the default over the ranks it runs on */
    int64_t node_memory;            /* the nodes a region that does not fit is sized for: 0, this one's */
    const char *regions_dir;        /* also write region<N>.before.hlo and .after.hlo there (rank 0) */
    const char *before_name, *after_name;   /* for the report */
    FILE *out;                      /* rank 0 reports each region here as it goes; NULL: quiet */
} CheckLocalOptions;

typedef struct CheckLocal {
    int n_regions, region;
    int equivalent, differ, precision, not_run;     /* regions by verdict */
    InterpMemory whole_need;        /* when some region differs: the whole pair's need */
    bool whole_checked;             /* the whole pair was checked on its own values: whole */
    CheckReport whole;
    int code;                       /* 0 equivalent, 1 different, 2 not checked */
    bool stopped;                   /* some rank failed: returned where it did (false there) */
    CheckRegionResult *results;     /* each region's, n_regions (NOT_RUN where --region left it out) */
} CheckLocal;

/* Checks before against after region by region with co: each region on the
 * ranks it needs, or reported as not run with the reason and what would
 * run it; when a region differs on free inputs or changes an accumulation
 * type, the whole pair on its own values when it fits.  Collective on c:
 * false on a rank that failed, and then every rank returns at the same
 * point (out->stopped) for the caller to settle the failure.  Free with
 * check_local_free. */
bool check_local(Coll *c, const IrModule *before, const IrModule *after, const CheckOptions *co,
                 const CheckLocalOptions *lo, CheckLocal *out, Error *err);
void check_local_free(CheckLocal *l);

/* ------------------------------------------------------------------ */
/* shrink.c: the smallest failing pair (--shrink)                      */

typedef struct CheckShrink {
    IrModule *before, *after;   /* the smallest failing pair found */
    Value **inputs;             /* this rank's inputs for their parameters (one reference each) */
    int n_inputs;
    int instrs[2][2];           /* entry instructions [before/after][whole/shrunk] */
    int outputs_dropped;        /* outputs other than the failing one */
    int to_parameters, to_constants;   /* instructions replaced by their recorded values */
    int parameters_dropped;     /* original parameters no longer used */
} CheckShrink;

/* Shrinks a pair that differs (rep from check_modules with rep->diff.found)
 * on the inputs of the failing trial: keeps only the failing output, then
 * replaces every instruction both modules compute with the same value on
 * every rank, nearest the output first, by a parameter fed that value (a
 * constant when it is the same small value on every rank), so that only
 * the instructions whose values differ remain; drops unused parameters.
 * The outputs are unchanged by construction (the interpreter is
 * deterministic); the caller re-checks the result.  Collective on c. */
bool check_shrink(Coll *c, const IrModule *before, const IrModule *after, const CheckOptions *opt,
                  const CheckReport *rep, CheckShrink *out, Error *err);
void check_shrink_free(CheckShrink *s);
/* Cuts a shrunk pair whose instructions all work element by element (the
 * element-wise ops, broadcasts of scalars, constants, all-reduce) on arrays
 * of the root's dimensions down to scalars: element `index` of every such
 * array, inputs included.  False (s unchanged) when the pair does not allow
 * it; the caller checks the result again. */
bool check_shrink_to_element(CheckShrink *s, int64_t index, Error *err);

/* shrink_loop.c: --shrink from start to finish */
/* A cut of a shrunk pair to what its failing element `index` needs (as
 * check_shrink_to_element and check_shrink_to_box): false with the pair
 * unchanged when it does not apply. */
typedef bool (*CheckShrinkCut)(CheckShrink *s, int64_t index, Error *err);
/* Cuts s with cut at diff's element and keeps the cut only when the cut
 * pair, checked again on its inputs with co, still differs (*cut true,
 * *diff its new first difference); else s is left as it was.  Collective
 * on c. */
bool check_shrink_try_cut(Coll *c, const CheckOptions *co, CheckShrinkCut cut, CheckShrink *s,
                          CheckDifference *diff, bool *cut_kept, Error *err);
typedef struct CheckShrunk {
    CheckShrink s;              /* the pair, its inputs, its counts */
    CheckDifference diff;       /* its first difference, checked again on its inputs */
    char where[96];             /* the whole pair's failing element, before any cut */
    bool element;               /* cut to that element, as scalars */
    bool box;                   /* cut to the boxes that element depends on */
    bool alone;                 /* the failing rank's inputs show it on one device */
    int failing_rank;           /* in the pair's numbering (after a rank cut, its new number) */
    int ranks;                  /* the ranks the pair runs on: the world, or fewer after a
                                 * rank cut (the first ranks then hold the kept ranks' inputs) */
    bool still;                 /* the final pair, checked once more on its inputs, differs */
    bool rechecked;             /* recheck holds that check's report (on the ranks that ran it) */
    CheckReport recheck;
} CheckShrunk;
/* Shrinks a pair that differs (rep with rep->diff.found), checks it again on
 * its own inputs, cuts it to the failing element and to one rank where it
 * can, and checks the result once more (still, recheck).  Collective on c:
 * false on a rank that failed, for the caller to settle at once (fail.h).
 * Free with check_shrunk_free. */
bool check_shrink_pair(Coll *c, const IrModule *before, const IrModule *after, const CheckOptions *co,
                       const CheckReport *rep, CheckShrunk *out, Error *err);
void check_shrunk_free(CheckShrunk *sh);
/* Writes the shrunk pair (rank 0), its inputs (every rank's, or the failing
 * rank's alone as rank 0, the pair's header then saying one device) and
 * command.txt to dir.  Collective on c. */
bool check_shrunk_write(Coll *c, CheckShrunk *sh, const char *dir, const char *compare, Error *err);

/* ------------------------------------------------------------------ */
/* pair_graph.c: the pair drawn (hlo-check --graph)                     */

typedef struct CheckPicture {
    const char *path;           /* .svg, .png, .pdf drawn by Graphviz, or .dot */
    int radius;                 /* instructions within this many steps of a region (-1: all) */
    const char *before_name, *after_name;
    const CheckReport *rep;     /* the pair's check, or NULL (--local without the whole pair) */
    const CheckLocal *local;    /* --local's regions and verdicts, or NULL */
} CheckPicture;

/* Draws before and after into pic->path (rank 0; the DOT beside it, as
 * ir_graph_save): what they compute alike once, each region where they
 * differ boxed with both versions (and --local's verdict), the first
 * instruction whose values differ (check_locate, when rep has a
 * difference; else --local's first differing region) marked with its two
 * values, --prove's expressions in the heading.  Collective on c: false
 * (err) on a rank that failed, every rank told; Graphviz's failure is a
 * note (note[0] = 0 when none), not an error.  *located (when given): the
 * first difference marked, on every rank. */
bool check_draw_pair(Coll *c, const IrModule *before, const IrModule *after, const CheckOptions *co,
                     const CheckPicture *pic, CheckLocated *located, char *note, size_t note_n, Error *err);
/* check_draw_pair for a shrunk pair (sh, from check_shrink_pair and
 * check_shrunk_write), on the ranks it runs on: after a rank cut the
 * first sh->ranks, which hold the kept ranks' inputs; a pair cut to one
 * device runs on rank 0 with the failing rank's inputs.  Collective on c;
 * a failure on a rank of a narrowed job returns there without widening,
 * for the caller to end the job. */
bool check_draw_shrunk(Coll *c, const CheckShrunk *sh, const CheckOptions *co, const CheckPicture *pic,
                       CheckLocated *located, char *note, size_t note_n, Error *err);
/* "before NAME, after NAME (rank R, run K, element [i]: X against Y)":
 * the first difference in words, for the line beside the picture. */
void check_located_text(const IrModule *before, const IrModule *after, const CheckLocated *loc, char *out,
                        size_t n);

/* sites.c: the sites, with their probes filled in where both exist */
int check_find_sites(const IrModule *before, const IrModule *after, CheckSite **sites);

/* report.c */
/* s as a JSON string literal, quotes and control characters escaped. */
void check_json_string(FILE *f, const char *s);
void check_print_report(FILE *out, const CheckReport *rep, const char *before_name, const char *after_name);
/* --local's closing line (after the whole pair's report, when it was
 * checked). */
void check_print_local_verdict(FILE *out, const CheckLocal *l);
/* --shrink: what the cut kept (before the re-check's report), and the
 * closing line: the sizes, the ranks, and where the pair was written. */
void check_print_shrinking(FILE *out, const CheckReport *rep, const CheckShrunk *sh);
void check_print_shrunk(FILE *out, const CheckShrunk *sh, int world, const char *dir);
bool check_write_json(const char *path, const CheckReport *rep, const char *before_name,
                      const char *after_name, Error *err);
bool check_write_junit(const char *path, const CheckReport *rep, const char *before_name,
                       const char *after_name, Error *err);

#endif /* CHECK_H */
