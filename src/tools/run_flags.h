/* run_flags.h: the flags hlo-run and hlo-check share for running real
 * programs.  A tool's options struct T holds `bool fill_elided`,
 * `int64_t max_memory` (0: the default, physical memory / ranks on the
 * node), `double timeout` (0: none) and `int64_t threads` (0: the default,
 * startup_threads()).  --threads changes no result, so the tools leave it
 * out of the start-up agreement (RUN_FLAGS_NO_AGREEMENT). */
#ifndef RUN_FLAGS_H
#define RUN_FLAGS_H

#include <stddef.h>

#include "cli.h"

#define RUN_CLI_FLAGS(T)                                                                                    \
    {"--fill-elided", CLI_SWITCH, offsetof(T, fill_elided), "", "off (an error)",                           \
     "give each elided constant ({...}) seeded values keyed by its name and --seed (the same in both modules " \
     "of a check)"},                                                                                          \
    {"--max-memory", CLI_BYTES, offsetof(T, max_memory), "=SIZE", "physical memory / ranks on this node",      \
     "refuse (exit 2) before running when a rank's estimated need exceeds SIZE (2.5GB, 300MB, 8GiB)"},      \
    {"--timeout", CLI_DOUBLE, offsetof(T, timeout), "=S", "none",                                             \
     "end the job after S seconds, exit 3, each rank saying which instruction it was in"},                  \
    {"--threads", CLI_INT, offsetof(T, threads), "=N",                                                      \
     "cores on this node / ranks on this node, at most the cores this rank may run on",                      \
     "threads per rank for the kernels (element-wise, data movement, reductions, dot, collective folds); "     \
     "results are bitwise the same at any count (mpirun binds each rank to one core unless --bind-to none)"}

/* Flags of RUN_CLI_FLAGS that change no result: ranks may differ in them. */
#define RUN_FLAGS_NO_AGREEMENT "--threads"

#endif /* RUN_FLAGS_H */
