/* check.h: the equivalence checker's public API, and the seeded inputs it
 * shares with hlo-run. */
#ifndef CHECK_H
#define CHECK_H

#include "interp.h"

/* ------------------------------------------------------------------ */
/* random_inputs.c: seeded, per-rank, per-parameter input streams       */

typedef enum CheckDist {
    CHECK_DIST_UNIFORM,     /* floats in [-1, 1); the default */
    CHECK_DIST_NORMAL,      /* standard normal */
    CHECK_DIST_WIDE,        /* magnitudes spread over many binades, random sign */
    CHECK_DIST_SPECIAL      /* NaN, +-inf, -0, subnormals, max/min finite, ties mixed in */
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
/* All entry parameters; out has m->entry->n_params slots. */
bool check_random_inputs(const IrModule *m, int rank, uint64_t seed, CheckDist dist, Value **out,
                         Error *err);

#endif /* CHECK_H */
