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

/* --opaque-custom-calls, one row for both tools, each with its own
 * default: hlo-check true (both modules run the same stand-in, so a check
 * still means something), hlo-run false (a result computed through one
 * would be made up).  T holds `bool opaque_custom_calls`. */
#define OPAQUE_CLI_FLAG(T, default_text)                                                                    \
    {"--opaque-custom-calls", CLI_BOOL, offsetof(T, opaque_custom_calls), "[=true|false]", default_text,       \
     "run a custom call whose target the interpreter does not implement as a deterministic function of its "  \
     "operands (outputs keyed by a hash of target, backend_config and operand bytes); false: unsupported"}

/* The device layout, when the module's header does not give it (T holds
 * int64_t replicas and partitions). */
#define DEVICE_CLI_FLAGS(T)                                                                                 \
    {"--replicas", CLI_INT, offsetof(T, replicas), "=N", "the module's replica_count",                     \
     "number of replicas (replicas x partitions must equal the number of ranks)"},                           \
    {"--partitions", CLI_INT, offsetof(T, partitions), "=N", "the module's num_partitions", "number of partitions"}

/* Flags of RUN_CLI_FLAGS that change no result: ranks may differ in them. */
#define RUN_FLAGS_NO_AGREEMENT "--threads"

#endif /* RUN_FLAGS_H */
