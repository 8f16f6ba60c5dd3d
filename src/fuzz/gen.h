/* gen.h: helpers the site generators (gen_*.c) share. */
#ifndef FUZZ_GEN_H
#define FUZZ_GEN_H

#include "fuzz.h"

#include <stddef.h>

/* A collective's groups and mode, drawn for the module's devices. */
typedef struct GenColl {
    FuzzGroups groups;
    int size;                   /* participants per group (what a gather multiplies by) */
    int channel;                /* 0: none */
    char attrs[800];            /* ", replica_groups=...[, channel_id=N][, use_global_device_ids=true]" */
} GenColl;

/* A new site of pass `number` (NULL when the module is full), begun in a
 * random placement (s->place), a loop running once or twice. */
FuzzSite *gen_begin_site(FuzzGen *g, int number);
/* A random mode, a random group size dividing the mode's id count, a random form. */
void gen_draw_coll(FuzzGen *g, GenColl *c);
/* "flattened-id groups iota (2 x 4)", for recipe lines. */
void gen_coll_text(const GenColl *c, char *buf, size_t n);
/* x as a bounded dynamic value: set-dimension-size(x, its own size) along
 * dim, so the type says <= while the value stays whole (an interpreter
 * runs every op on it, hlo-reference's padded form needing no padding). */
int gen_bounded(FuzzGen *g, int x, int dim);
/* An input of shape s with dim unbounded (?): the module cannot be run,
 * so it is marked g->unrunnable and hlo-fuzz reads its sites alone. */
int gen_unbounded_input(FuzzGen *g, FuzzShape s, int dim);
/* all-gather(x) along dim with c's groups. */
int gen_all_gather(FuzzGen *g, int x, int dim, const GenColl *c);
/* A shape of rank in [min_rank, max_rank], dims in [lo, hi]. */
FuzzShape gen_draw_shape(FuzzRng *r, IrElemType t, int min_rank, int max_rank, int lo, int hi);
/* Ends the site begun with fuzz_site_begin: result (the instruction the
 * pass matches) and n_extra other values become outputs; fills s->comp,
 * s->out, s->instr. */
void gen_finish(FuzzGen *g, FuzzSite *s, int result, int n_extra, const int *extra);

#endif /* FUZZ_GEN_H */
