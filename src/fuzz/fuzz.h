/* fuzz.h: hlo-fuzz, generated modules that hunt for bugs in the passes.
 *
 * A module is built from a recipe of sites.  A site is one instance of a
 * pass's pattern, or a near miss of it, written with drawn shapes, types,
 * groups and flags; its generator says, from the rules of spec/passes.md
 * and without asking src/passes/, what the pass must make of it in each
 * mode: leave it, rewrite it exactly, rewrite it with another accumulation
 * type, or rewrite it into a known unsoundness.  fuzz_run_one() then runs
 * the pass, reads what became of every site, checks the rewritten module
 * against the original with the checker, and reports every disagreement
 * as a finding.
 *
 * build.c   the module under construction (computations, instructions,
 *           while bodies and conditional branches around a site) and its text
 * groups.c  replica groups in every form and group mode
 * gen_*.c   the sites of each pass, with their expectations
 * model.c   the combiners' grouping, from the spec's engine
 * child.c   the passes in a child process (a crash or a hang is a finding)
 * run.c     one module: pass, per-site reading, check, findings
 */
#ifndef FUZZ_H
#define FUZZ_H

#include "check.h"
#include "pass.h"

/* ------------------------------------------------------------------ */
/* Random draws (splitmix64: the same stream on every rank and machine)  */

/* A stream's draws on tape: with a tape, fuzz_u64 replays its values in
 * order and past its end draws afresh and records what it drew.  A module
 * drawn with tapes can so be drawn again, or again with a few draws
 * changed (hlo-fuzz --guided mutates the recipes that reach new code in the
 * passes).  A generator still decides every expectation from the values it
 * got, wherever they came from. */
typedef struct FuzzTape {
    uint64_t *v;
    int n, cap, pos;
} FuzzTape;
typedef struct FuzzRng {
    uint64_t s;
    FuzzTape *tape;                 /* NULL: the splitmix64 stream alone */
} FuzzRng;
uint64_t fuzz_u64(FuzzRng *r);
void fuzz_tape_push(FuzzTape *t, uint64_t v);      /* appends a draw */
int fuzz_below(FuzzRng *r, int n);                 /* uniform in [0, n), n >= 1 */
bool fuzz_chance(FuzzRng *r, int percent);
/* A random permutation of 0..n-1 into out. */
void fuzz_shuffle(FuzzRng *r, int *out, int n);

/* ------------------------------------------------------------------ */
/* Shapes                                                              */

#define FUZZ_MAX_RANK 6
typedef struct FuzzShape {
    IrElemType type;
    int rank;
    int64_t dims[FUZZ_MAX_RANK];
    unsigned bounded;               /* bit i: dim i is bounded dynamic, printed <=dims[i] */
    unsigned unbounded;             /* bit i: dim i is unbounded, printed ? (dims[i] unused) */
} FuzzShape;

FuzzShape fuzz_shape(IrElemType t, int rank, const int64_t *dims);
int64_t fuzz_shape_elems(const FuzzShape *s);
/* -1 with an unbounded dim: no size. */
int64_t fuzz_shape_bytes(const FuzzShape *s);
/* "f32[4,8]" (or "f32[<=4,8]") into buf. */
const char *fuzz_shape_text(const FuzzShape *s, char *buf, size_t n);

/* ------------------------------------------------------------------ */
/* Replica groups                                                       */

typedef enum FuzzGroupMode {
    FUZZ_CROSS_REPLICA,             /* no channel_id: replica ids */
    FUZZ_CROSS_REPLICA_PARTITION,   /* channel_id, use_global_device_ids=false: replica ids, x P */
    FUZZ_FLATTENED,                 /* channel_id, use_global_device_ids=true: flattened ids */
    FUZZ_GROUP_MODES
} FuzzGroupMode;

#define FUZZ_MAX_DEVICES 64
typedef struct FuzzGroups {
    FuzzGroupMode mode;
    int n_groups, size;             /* size: ids per group as listed */
    int ids[FUZZ_MAX_DEVICES];      /* group g is ids[g*size .. (g+1)*size) */
    bool empty;                     /* printed as {} (one group of every id) */
    char text[600];                 /* as printed after replica_groups= */
    char canon[600];                /* the expanded list (or "{}"): equal iff the groups are equal */
    char form[16];                  /* explicit, empty, iota, mesh; uneven (gen_combiners.c, n_groups and size stale) */
} FuzzGroups;

/* Groups of mode over the module's devices, with `size` ids per group
 * (size must divide the id count: R for the replica modes, R*P for
 * flattened), in a random order and a random printed form. */
void fuzz_draw_groups(FuzzRng *r, FuzzGroupMode mode, int replicas, int partitions, int size, FuzzGroups *g);
/* A random divisor of n. */
int fuzz_divisor(FuzzRng *r, int n);
/* The participants of a collective on device d = r*P + p, in rank order
 * (hlo-reference.md 6.3), as flattened ids into out; returns the count. */
int fuzz_participants(const FuzzGroups *g, int replicas, int partitions, int device, int *out);
/* Devices per participant list: size, or size * P for cross-replica-and-partition. */
int fuzz_group_size(const FuzzGroups *g, int partitions);
/* The attribute text of the mode: channel_id (when the mode needs one)
 * and use_global_device_ids, e.g. ", channel_id=3, use_global_device_ids=true". */
void fuzz_mode_attrs(FuzzGroupMode mode, int channel, char *buf, size_t n);

/* ------------------------------------------------------------------ */
/* The module under construction (build.c)                             */

/* FUZZ_IN_FUSION: a computation a fusion calls, which no pass visits
 * (spec/passes.md 1: passes run over non-fusion computations). */
typedef enum FuzzPlace { FUZZ_IN_ENTRY, FUZZ_IN_WHILE, FUZZ_IN_CONDITIONAL, FUZZ_IN_FUSION, FUZZ_PLACES } FuzzPlace;
const char *fuzz_place_name(FuzzPlace p);

typedef enum FuzzExpect {
    FUZZ_KEEP,          /* the pass must leave the site as it is */
    FUZZ_EXACT,         /* rewritten, bitwise the same function */
    FUZZ_WIDER,         /* rewritten, reduces in a wider float type: at least as accurate */
    FUZZ_NARROWER,      /* rewritten, reduces in another type: any accuracy */
    FUZZ_UNSOUND,       /* rewritten into a known unsoundness of the seed's rule */
    FUZZ_EXPECTS
} FuzzExpect;
const char *fuzz_expect_name(FuzzExpect e);

/* What the site's collective is, for the combiners' model. */
typedef struct FuzzColl {
    IrOpcode op;
    IrElemType type;
    int dim;                        /* gather / scatter dim; -1 for all-reduce */
    bool channel, global, constrain;
    const char *reducer;            /* trivial binary op name, or NULL (non-trivial / none) */
    char groups[600];               /* FuzzGroups.canon */
    int64_t bytes;
    int rank;
} FuzzColl;

#define FUZZ_MAX_SITES 80      /* a huge module's (run.c); most hold 1 to 14 */
typedef struct FuzzSite {
    int pass;                       /* the number of the pass it aims at */
    char what[640];                 /* the recipe line */
    FuzzExpect expect[2];           /* by PassMode */
    bool must_differ[2];            /* FUZZ_UNSOUND: differs at this world, so it must be refuted */
    FuzzPlace place;
    int comp;                       /* the computation holding its result */
    int out;                        /* the result's operand index in that computation's root tuple */
    int instr;                      /* the result instruction */
    bool is_coll;                   /* combiner member: coll describes it */
    bool unread;                    /* nothing reads its result (a dead member): grouped by the model, not read back */
    FuzzColl coll;
    int group[2];                   /* combiners, by mode: sites with the same group are combined together;
                                       -1: left alone */
    int group_dim[2];               /* AG/RS combiners: the dimension the combined op must take; -1 none */
} FuzzSite;

/* recipe.c: a module's recipe as draws: tape 0 the module's own stream,
 * tape 1 + k site k's. */
#define FUZZ_STREAMS (1 + FUZZ_MAX_SITES)
typedef struct FuzzRecipe {
    FuzzTape t[FUZZ_STREAMS];
} FuzzRecipe;
void fuzz_recipe_free(FuzzRecipe *r);
/* dst (freed first) becomes a copy of src's recorded draws. */
void fuzz_recipe_copy(FuzzRecipe *dst, const FuzzRecipe *src);
/* Changes 1 to 4 recorded draws, chosen with g: a value drawn afresh, or
 * one moved by a small step (the next choice of the same question), or a
 * stream cut short (the rest drawn afresh).  False when nothing is
 * recorded. */
bool fuzz_recipe_mutate(FuzzRecipe *r, FuzzRng *g);
long fuzz_recipe_draws(const FuzzRecipe *r);
/* One line per stream with draws: "stream K: V V ..." (hexadecimal). */
void fuzz_recipe_write(const FuzzRecipe *r, StrBuf *out);
/* Reads what fuzz_recipe_write wrote; false with the line in err. */
bool fuzz_recipe_read(FuzzRecipe *r, const char *text, const char *file, Error *err);
/* fuzz_recipe_read of a file. */
bool fuzz_recipe_load(FuzzRecipe *r, const char *path, Error *err);

/* build.c again: the module under construction. */
typedef struct FuzzBuild FuzzBuild;

/* A module of replicas x partitions devices. */
FuzzBuild *fuzz_build_new(int replicas, int partitions, const char *name);
void fuzz_build_free(FuzzBuild *b);
int fuzz_build_replicas(const FuzzBuild *b);
int fuzz_build_partitions(const FuzzBuild *b);
/* The next channel id (1, 2, ...). */
int fuzz_channel(FuzzBuild *b);

/* Starts a site placed in the entry computation, a while body (run `trips`
 * times) or the true branch of a conditional (taken).  Instructions made
 * until fuzz_site_end() go there. */
void fuzz_site_begin(FuzzBuild *b, FuzzPlace place, int trips);
FuzzPlace fuzz_site_place(const FuzzBuild *b);
/* An input of the site: an entry parameter, or, in a loop body or branch,
 * an element of its parameter tuple (a get-tuple-element of a parameter). */
int fuzz_input(FuzzBuild *b, FuzzShape s);
/* An input that is a get-tuple-element of a parameter wherever the site
 * is (in the entry, of a one-element tuple parameter). */
int fuzz_input_gte(FuzzBuild *b, FuzzShape s);
/* An entry parameter scalar s32 with hlocheck_range=[lo,hi) (site in the entry only). */
int fuzz_input_index(FuzzBuild *b, int lo, int hi);
/* An instruction: %vN = shape op(operands), attrs.  attrs may be "" or
 * start with ", ". Returns its id. */
int fuzz_op(FuzzBuild *b, FuzzShape s, const char *op, int n, const int *operands, const char *attrs);
int fuzz_op1(FuzzBuild *b, FuzzShape s, const char *op, int x, const char *attrs);
int fuzz_op2(FuzzBuild *b, FuzzShape s, const char *op, int x, int y, const char *attrs);
/* The same with a tuple result of the n_shapes shapes (a variadic collective). */
int fuzz_op_tuple(FuzzBuild *b, int n_shapes, const FuzzShape *shapes, const char *op, int n, const int *operands,
                  const char *attrs);
/* A scalar constant of type t (literal text, e.g. "3"). */
int fuzz_constant(FuzzBuild *b, IrElemType t, const char *literal);
/* v also made to wait for `pred` (control-predecessors={pred}). */
void fuzz_control(FuzzBuild *b, int v, int pred);
/* The forms a reduction computation of op over T takes.  Trivial (spec
 * section 2: one binary op over its two scalar parameters): op(a, b) and
 * op(b, a).  The others are not, and all but COPY still have op at the
 * root: what a matcher that reads only the root would take for trivial. */
typedef enum FuzzReducerForm {
    FUZZ_RED_TRIVIAL,       /* ROOT op(a, b) */
    FUZZ_RED_SWAPPED,       /* ROOT op(b, a) */
    FUZZ_RED_COPY,          /* o = op(a, b); ROOT copy(o) */
    FUZZ_RED_SAME_PARAM,    /* ROOT op(a, a) */
    FUZZ_RED_CONSTANT,      /* c = constant; ROOT op(a, c) */
    FUZZ_RED_EXTRA,         /* n = negate(b) (copy(b) for unsigned and pred); ROOT op(a, n) */
    FUZZ_RED_TWO_OPS,       /* t = op(a, b); ROOT op(t, b) */
    FUZZ_RED_GUARDED,       /* o = op(a, b); ROOT select(and(compare(o, o, EQ), true), o, a): op unless NaN;
                             * its pred instructions and constant keep their type when the reducer is retyped */
    FUZZ_RED_OTHER_OP,      /* ROOT subtract(a, b) (xor for pred): a binary op outside the six; combiners only */
    /* Forms #102 and #104 cannot retype (an instruction other than a
     * parameter, a scalar constant or an element-wise op): declined. */
    FUZZ_RED_CALL,          /* ROOT call(a, b), to_apply=<the trivial form> */
    FUZZ_RED_TUPLE,         /* t = tuple(a, b); ROOT op(get-tuple-element(t) 0, get-tuple-element(t) 1) */
    FUZZ_RED_ARRAY_CONSTANT,/* c = T[2] constant; o = op(a, b); ROOT op(o, reshape(slice(c))) */
    FUZZ_RED_FORMS
} FuzzReducerForm;
const char *fuzz_reducer_form_name(FuzzReducerForm f);
bool fuzz_reducer_form_trivial(FuzzReducerForm f);
/* A form: trivial 80% of the time (op(b, a) in one of eight), else one of
 * the six others with op in them (not FUZZ_RED_OTHER_OP). */
FuzzReducerForm fuzz_draw_reducer_form(FuzzRng *r);
/* One of the forms #102 and #104 cannot retype, FUZZ_RED_CALL and after. */
FuzzReducerForm fuzz_draw_unretypable_form(FuzzRng *r);
bool fuzz_reducer_form_retypable(FuzzReducerForm f);
/* The reduction computation of op over t in that form (made once per
 * module and form); returns its name. */
const char *fuzz_reducer_in_form(FuzzBuild *b, IrElemType t, const char *op, FuzzReducerForm form);
/* The same computation, but a copy of its own (a new name each call). */
const char *fuzz_reducer_own(FuzzBuild *b, IrElemType t, const char *op, FuzzReducerForm form);
/* A computation named name that nothing calls (add over t), unless the
 * module has one of that name: a name a pass's new computation must step
 * around (the reducer a flip retypes to T becomes "<reducer>.T"). */
void fuzz_unused_computation(FuzzBuild *b, const char *name, IrElemType t);
/* fuzz_reducer_in_form with FUZZ_RED_TRIVIAL, or FUZZ_RED_COPY when not trivial. */
const char *fuzz_reducer(FuzzBuild *b, IrElemType t, const char *op, bool trivial);
FuzzShape fuzz_value_shape(const FuzzBuild *b, int v);
/* Ends the site: outputs become results of its computation's root tuple
 * (and of the entry root, through the loop or conditional).  out_pos[k]
 * gets output k's position in that root; *comp its computation. */
void fuzz_site_end(FuzzBuild *b, int n, const int *outputs, int *comp, int *out_pos);
/* With one entry output, make it the entry's root itself (no tuple), so
 * that a rewrite replaces the root. */
void fuzz_build_bare_root(FuzzBuild *b, bool bare);
/* Writes the module as scheduled (is_scheduled=true): every computation's
 * instructions in the order they were made, which is then its schedule
 * (the combiners walk it instead of the post order, hlo-reference.md 7.3). */
void fuzz_build_scheduled(FuzzBuild *b, bool scheduled);
/* Writes every array shape with its layout, the default one (f32[4,8]{1,0}),
 * as real dumps do: the same module, with the passes' layout handling
 * (copied, permuted, compared) in play. */
void fuzz_build_layouts(FuzzBuild *b, bool layouts);
/* Writes the header without num_partitions (which must then be 1). */
void fuzz_build_omit_partitions(FuzzBuild *b, bool omit);
/* Appends text (", name=value") to instruction v's attributes. */
void fuzz_add_attr(FuzzBuild *b, int v, const char *text);
/* Gives array value v the layout of its dimensions minor to major in
 * the order listed (its shape's text gains {m0,m1,...}), with tail (a
 * tiling such as "T(2,128)", written after a ':') unless NULL. */
void fuzz_set_layout(FuzzBuild *b, int v, const int *minor_to_major, int rank, const char *tail);
/* comp's instructions in their text order, the root last (its schedule
 * when scheduled); out holds n_instrs ids. */
int fuzz_comp_text_order(FuzzBuild *b, int comp, int *out);
/* The module text; NULL after a builder error (message in err). */
char *fuzz_build_text(FuzzBuild *b);
/* Name of computation comp (as printed, without %). */
const char *fuzz_comp_name(const FuzzBuild *b, int comp);

/* ------------------------------------------------------------------ */
/* The generators (gen_*.c)                                             */

typedef struct FuzzGen {
    FuzzRng *rng;
    FuzzBuild *b;
    PassOptions *opt;               /* the combiner flags: a generator may draw them */
    int world;
    FuzzSite *sites;                /* append here, at most FUZZ_MAX_SITES */
    int n_sites;
    bool odd_site_taken;            /* a site not exact in some mode is in the module already */
    int reduce_pair;                /* gen_reduce.c: 1 + the type pair the last site drew, 0 none */
    bool huge;                      /* every site in the entry; #102 / #104 each with a reducer of its own */
    bool last;                      /* the generator asks for no more sites in this module */
    bool unrunnable;                /* a site has an unbounded dim: no interpreter can run the module, so
                                       hlo-fuzz checks its sites' structure alone (run.c) */
} FuzzGen;

/* Whether pass `number` has a site generator (every pass of passes.def has). */
bool fuzz_has_generator(int number);
/* Adds one site of pass `number` (one of passes.def's) to g, or a near
 * miss of it.  Every generator fills the site's expectations itself. */
void fuzz_gen_site(FuzzGen *g, int number);
/* Per pass (gen_flips.c, gen_shape.c, gen_reduce.c, gen_combiners.c): one
 * generator for each line of passes.def, fuzz_gen_<c_name>; a pass added
 * there without one does not link. */
#define PASS(num, c, name, alias, prec, clean) void fuzz_gen_##c(FuzzGen *g);
#include "passes.def"
#undef PASS
/* gen_combiners.c: a cluster of the combiner `number` (77, 78, 79). */
void fuzz_gen_combiner(FuzzGen *g, int number);
/* gen_common.c: shared by the generators: a new site record of pass
 * `number`, its expectations KEEP. */
FuzzSite *fuzz_new_site(FuzzGen *g, int number);
/* A random placement for a site (entry most often). */
FuzzPlace fuzz_draw_place(FuzzGen *g);
IrElemType fuzz_draw_type(FuzzRng *r, bool floats_only);

/* model.c: fills expect[] and group[] of every combiner site of pass
 * `number` in g from the spec's engine, both modes. */
void fuzz_model_combiner(FuzzGen *g, int number, const PassOptions *opt);

/* ------------------------------------------------------------------ */
/* One module (run.c)                                                   */

typedef struct FuzzConfig {
    const Pass *passes[16];         /* the passes aimed at */
    int n_passes;
    bool modes[2];                  /* by PassMode */
    uint64_t seed;
    const char *out_dir;            /* findings go to out_dir/<pass>-<n>/ (NULL: not saved) */
    int trials;                     /* checker trials per module */
    double pass_timeout;            /* seconds a pass may take before it counts as hung */
    FuzzRecipe *recipe;             /* draws replayed and recorded here (NULL: seed and index alone) */
} FuzzConfig;

typedef struct FuzzPassTally {
    long modules, sites, rewrites, findings;
} FuzzPassTally;

typedef struct FuzzNote {
    int pass;                       /* number */
    PassMode mode;
    long index;                     /* the module */
    char kind[48], msg[400], dir[300];
} FuzzNote;

#define FUZZ_MAX_NOTES 256
typedef struct FuzzTally {
    FuzzPassTally pass[16][2];      /* by config pass, by mode */
    long modules, findings;
    long pipeline_modules, pipeline_findings;   /* the sound pipeline of every pass, on exact modules */
    long structure_only;            /* modules no interpreter can run (FuzzGen.unrunnable): sites read, not run */
    int saved;                      /* finding directories written */
    FuzzNote notes[FUZZ_MAX_NOTES]; /* the first findings, for the summary and JSON */
    int n_notes;
} FuzzTally;

void fuzz_tally_note(FuzzTally *t, const Pass *pass, PassMode mode, long index, const char *kind, const char *msg,
                     const char *dir);

/* Generates module number `index` (deterministic in seed and index) aimed
 * at config pass `which`, runs that pass in each configured mode, and
 * checks every site and the module's function; adds to t.  Collective:
 * every rank calls it with the same arguments.  False on an error of the
 * fuzzer itself (err). */
bool fuzz_run_one(Coll *c, const FuzzConfig *cfg, long index, int which, FuzzTally *t, Error *err);

/* ------------------------------------------------------------------ */
/* Coverage feedback (guided.c: hlo-fuzz --guided)                      */

typedef struct FuzzGuide FuzzGuide;
/* Whether this build's passes call the coverage hook (built with GUIDED=1). */
bool fuzz_guide_available(void);
/* feedback false: the blocks are counted (and recipes kept) but every
 * module is drawn afresh, the unguided run to compare with. */
FuzzGuide *fuzz_guide_new(uint64_t seed, int n_passes, bool feedback, Error *err);
void fuzz_guide_free(FuzzGuide *g);
/* The recipe the next module of config pass `which` is drawn with (g owns
 * it; FuzzConfig.recipe points at it): half the time, once the pass
 * has kept recipes, one of them with a few draws changed; else none (the
 * module is drawn afresh and its draws recorded).  Clears the coverage map. */
FuzzRecipe *fuzz_guide_next(FuzzGuide *g, int which);
/* After the module ran: how many blocks of the passes it reached that no
 * module before it did (rank 0's map, broadcast); its recipe is kept when
 * any.  Collective (c NULL: one process, in tests). */
long fuzz_guide_learn(FuzzGuide *g, Coll *c, int which);
void fuzz_guide_stats(const FuzzGuide *g, long *blocks, long *kept, long *mutated);
/* Marks the block at pc as the hook does (tests). */
void fuzz_cov_mark(uint64_t pc);

/* Writes module `index` of config pass `which`, with its recipe as //
 * comments, as it would be generated on `world` devices. */
bool fuzz_print_module(const FuzzConfig *cfg, int world, long index, int which, FILE *out, Error *err);

#endif /* FUZZ_H */
