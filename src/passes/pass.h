/* pass.h: the rewrite passes (spec/passes.md): the registry, the pipeline,
 * the options with the seeds' flag spellings, and the statistics behind
 * hlo-opt --stats. */
#ifndef PASS_H
#define PASS_H

#include "ir.h"

typedef enum PassMode { PASS_MODE_FAITHFUL, PASS_MODE_SOUND } PassMode;

typedef struct PassOptions {
    PassMode mode;                      /* --pass-mode, default faithful */
    int64_t combine_threshold_bytes;    /* --collective-combine-threshold-in-bytes, 1073741824 */
    int64_t combine_threshold_count;    /* --collective-combine-threshold-count, 256 */
    bool combine_by_dim;                /* --collective-combine-by-dim, true */
    bool neuron_fsdp;                   /* --neuron-fsdp, false: AG/RS combiners skip while bodies */
    bool iterate;                       /* --iterate: repeat the pipeline until nothing changes (<= 16) */
    /* Called after each pass that changed the module (its dead code
     * removed), with the pass's index in the list; NULL: none. */
    void (*on_change)(const IrModule *m, int pass_index, void *ctx);
    void *on_change_ctx;
} PassOptions;

void pass_options_default(PassOptions *opt);
/* "sound" -> PASS_MODE_SOUND, anything else -> PASS_MODE_FAITHFUL. */
PassMode pass_mode_from_name(const char *name);

typedef enum PassResult { PASS_UNCHANGED, PASS_CHANGED, PASS_FAILED } PassResult;

/* Why a combiner closed a group (spec 2: reachability, count, bytes, end). */
typedef enum CombineClose {
    CLOSE_REACHABILITY, CLOSE_COUNT, CLOSE_BYTES, CLOSE_END, CLOSE_COUNT_OF
} CombineClose;

#define PASS_MAX_REASONS 8
typedef struct PassStats {
    long fired;                         /* rewrites made (flips) / groups combined (combiners) */
    long groups_formed;                 /* combiners: groups of >= 2 rewritten */
    long singletons;                    /* combiners: groups of one left alone */
    long closed[CLOSE_COUNT_OF];        /* combiners: why each group closed */
    long skipped;                       /* combiners: gate said no (threshold <= 0, constrain_layout) */
    int n_reasons;                      /* flips: matches declined by a sound-mode guard */
    const char *reason[PASS_MAX_REASONS];
    long declined[PASS_MAX_REASONS];
    double seconds;                     /* wall time of the pass and its dead-code removal */
} PassStats;

/* Counts one sound-mode decline under reason (a static string). */
void pass_stats_decline(PassStats *stats, const char *reason);

typedef PassResult (*PassFn)(IrModule *m, const PassOptions *opt, PassStats *stats, Error *err);

typedef struct Pass {
    int number;                         /* the seeds' number: 77 ... 104 */
    const char *name;                   /* registry name, for --passes= */
    const char *alias;
    PassFn run;
    bool precision_changing;
    bool leaves_no_dead_code;           /* see passes.def */
} Pass;

/* Every pass, declared from passes.def. */
#define PASS(num, c, name, alias, prec, clean) \
    PassResult pass_##c(IrModule *m, const PassOptions *opt, PassStats *stats, Error *err);
#include "passes.def"
#undef PASS

/* pipeline.c */
int pass_registry(const Pass **passes);                  /* the registry, default order */
const Pass *pass_find(const char *name);                 /* by name or alias; NULL if none */
/* "default", "none" (or ""), or a comma list of names/aliases.  out holds at
 * most 64 passes.  Unknown names are ERR_MISMATCH naming the pass. */
bool pass_parse_list(const char *spec, const Pass **out, int *n, Error *err);

typedef struct PipelineStats {
    int n;
    const Pass *pass[64];
    PassStats stats[64];
    int rounds;                         /* pipeline repetitions (--iterate) */
} PipelineStats;

/* Runs the passes in order (repeating with opt->iterate); after each pass
 * that changed something the module has no dead code (removed from the
 * whole module unless it had none before and the pass leaves none).  Returns true if any pass changed
 * the module (in *changed) and false on error. */
bool pass_run_pipeline(IrModule *m, const Pass *const *passes, int n, const PassOptions *opt,
                       PipelineStats *stats, bool *changed, Error *err);
void pass_print_stats(FILE *out, const PipelineStats *stats);


/* The instructions of comp in XLA's post order (hlo-reference.md 7.3):
 * for each instruction with no users, in order, a DFS that visits control
 * predecessors, then operands in order; the schedule order if the module is
 * scheduled.  out has comp->n_instrs slots; returns the count, -1 when out
 * of memory. */
int pass_post_order(const IrComputation *comp, IrInstr **out);
/* What a pass needs before it starts, from one scan of the module: the
 * computations it visits (all but fusion bodies, in module order), which
 * are while bodies or conditions, and whether an instruction of opcode op (IR_OP_COUNT:
 * none) has constrain_layout=true. */
typedef struct PassScan {
    IrComputation **comps;
    int n_comps;
    bool *in_while;         /* by computation id */
    bool constrained;
} PassScan;
/* False (ERR_NOMEM, nothing to free) when out of memory. */
bool pass_scan(const IrModule *m, IrOpcode op, PassScan *s, Error *err);
void pass_scan_free(PassScan *s);
/* Removes dead instructions from every computation (and may move and
 * renumber the live ones: see pipeline.c); returns how many, -1 (m->nomem
 * set) when out of memory. */
int pass_remove_dead_code(IrModule *m);

/* provenance.c: which pass made, changed or removed each instruction, for
 * drawing a rewrite (hlo-opt --graph).  An instruction is known by its
 * computation's and its own name; it changed when its opcode, shape,
 * semantic attributes or operands' names did. */
typedef struct PassProvenance PassProvenance;
/* Starts from m as it is before the passes. */
PassProvenance *pass_provenance_new(const IrModule *m);
/* An on_change hook (PassOptions): ctx is the PassProvenance. */
void pass_provenance_record(const IrModule *m, int pass_index, void *ctx);
/* The pass (index + 1) that made or last changed in, an instruction of
 * the module after the passes; 0 when none did. */
int pass_provenance_after(const PassProvenance *p, const IrInstr *in);
/* The pass (index + 1) that removed or first changed in, an instruction
 * of the module before the passes; 0 when it is there unchanged. */
int pass_provenance_before(const PassProvenance *p, const IrInstr *in);
void pass_provenance_free(PassProvenance *p);

/* draw.c: before (and after, unless NULL) drawn side by side into path:
 * DOT when path ends in .dot, else the DOT beside it (x.svg: x.dot) drawn
 * by Graphviz in path's format.  Instructions coloured by the pass of the
 * n passes that made, changed or removed them (prov; NULL: none), cut to
 * radius steps around them.  False with err when the DOT cannot be
 * written; when Graphviz cannot draw it, true with why in note (else
 * note[0] = 0). */
bool pass_draw_rewrite(const IrModule *before, const IrModule *after, const PassProvenance *prov,
                       const Pass *const *passes, int n, const char *path, int radius, char *note, size_t note_n,
                       Error *err);

#endif /* PASS_H */
