/* startup.h: what every rank of an mpirun job must agree on before any
 * work: the module text, the flags that change results, the sizes of its
 * input files.  Ranks started on different files (mpirun -np 2 hlo-run a.hlo
 * : -np 2 hlo-run b.hlo) or with different flags would otherwise run
 * silently when the shapes agree, or fail deep inside a collective. */
#ifndef STARTUP_H
#define STARTUP_H

#include "cli.h"
#include "coll.h"

typedef struct StartupItem {
    char what[160];         /* "the module file", "the flags", ... */
    uint64_t hash;          /* this rank's value */
    const char *path;       /* a file whose hash is 0 where it cannot be read: then the message names the
                             * ranks and hosts that cannot read it; NULL for other items */
} StartupItem;

#define STARTUP_MAX_ITEMS 8

/* coll_init under the MPI start-up watchdog (watchdog.h): every tool
 * starts MPI through it. */
Coll *startup_coll_init(const char *tool, int *argc, char ***argv);

/* A hash of a file's bytes (0 when it cannot be read: then every rank must
 * fail to read it alike); of its name alone when it is not a regular file
 * (a pipe must be left for the parser to read). */
uint64_t startup_hash_file(const char *path);
/* A hash of the flags on the command line and their values (read with
 * the tool's flag table), leaving out the positional words (the files,
 * hashed by content instead) and the flags named in the NULL-ended
 * `outputs`, which say where results go and change none. */
uint64_t startup_hash_flags(int argc, char **argv, const CliFlag *flags, int n_flags, const char *const *outputs);
/* A hash of how many files DIR/param<p>.rank<rank>.npy there are, p from
 * 0, and their sizes. */
uint64_t startup_hash_inputs(const char *dir, int rank);
/* Collective.  True when every rank has the same hash for every item; else
 * false with msg naming what differs and which ranks hold which value. */
bool startup_agree(Coll *c, const StartupItem *items, int n, char *msg, size_t msg_n);
/* Collective: startup_agree on what a tool that runs modules is given: the
 * module files (by content, in order; a module some ranks cannot read is
 * said as such, naming their hosts), the flags (outputs left out, as
 * startup_hash_flags) and the --inputs files (startup_hash_inputs; first,
 * files some ranks lack that others have, naming the ranks, their hosts
 * and the first such file: each rank reads its own on its own host). */
bool startup_agree_job(Coll *c, const char *const *modules, int n_modules, const char *inputs_dir, int argc,
                       char **argv, const CliFlag *flags, int n_flags, const char *const *outputs, char *msg,
                       size_t msg_n);
/* Collective: the outputs outs[k] (given by flag out_flags[k]; NULL when
 * not asked for) are none of the inputs and can be created by rank 0,
 * which writes them; else false on every rank with msg saying why. */
bool startup_outputs_ok(Coll *c, const char *const *inputs, int n_inputs, const char *const *outs,
                        const char *const *out_flags, int n_outs, char *msg, size_t msg_n);

/* threads.c: --threads.  False with a message unless 0 (the default) <=
 * asked <= PARALLEL_MAX_THREADS. */
bool startup_threads_ok(int64_t asked, char *msg, size_t msg_n);
/* Collective.  Sets the interpreter's thread count (parallel.h) to asked,
 * or when it is 0 to the cores of this node divided by the job's ranks on
 * this node (an MPI shared-memory split), at most the cores this rank may
 * run on (mpirun binds a rank to one core unless told --bind-to none), at
 * least 1; returns the count.  When asked is more than the cores some rank
 * may run on, rank 0 prints one note (as tool) naming mpirun's fix. */
int startup_threads(Coll *c, int64_t asked, const char *tool);

#endif /* STARTUP_H */
