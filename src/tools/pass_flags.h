/* pass_flags.h: the pass flags hlo-opt and hlo-check share, with the seeds'
 * spellings and defaults.  A tool's options struct T holds `PassOptions pass`
 * (defaults from pass_options_default) and `const char *pass_mode`, which
 * pass_mode_from_name turns into pass.mode after parsing. */
#ifndef PASS_FLAGS_H
#define PASS_FLAGS_H

#include <stddef.h>

#include "cli.h"
#include "pass.h"

#define PASS_CLI_FLAGS(T)                                                                                   \
    {"--pass-mode", CLI_CHOICE, offsetof(T, pass_mode), "=faithful|sound", "faithful",                      \
     "faithful: the Neuron compiler's matchers as they are; sound: add the soundness guards"},              \
    {"--iterate", CLI_SWITCH, offsetof(T, pass.iterate), "", "off",                                          \
     "repeat the whole pipeline until nothing changes, at most 16 rounds"},                                  \
    {"--collective-combine-threshold-in-bytes", CLI_INT, offsetof(T, pass.combine_threshold_bytes), "=N",    \
     "1073741824", "combiners: largest combined result in bytes (<= 0: combine nothing)"},                   \
    {"--collective-combine-threshold-count", CLI_INT, offsetof(T, pass.combine_threshold_count), "=N",       \
     "256", "combiners: most instructions combined into one (<= 0: combine nothing)"},                       \
    {"--collective-combine-by-dim", CLI_BOOL, offsetof(T, pass.combine_by_dim), "=true|false", "true",       \
     "combiners: combine only collectives that gather or scatter the same dimension"},                       \
    {"--neuron-fsdp", CLI_BOOL, offsetof(T, pass.neuron_fsdp), "=true|false", "false",                       \
     "all-gather and reduce-scatter combiners skip while-loop bodies"}

#endif /* PASS_FLAGS_H */
