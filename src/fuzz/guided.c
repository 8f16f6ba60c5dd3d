/* guided.c: hlo-fuzz --guided, generation fed by coverage of the passes.
 *
 * Built with GUIDED=1 (make fuzz-guided, in build-guided/), src/passes/ is
 * compiled with -fsanitize-coverage=trace-pc: every basic block of the
 * passes calls __sanitizer_cov_trace_pc, which marks the block's slot in a
 * map shared with the child processes the passes run in (child.c).  After
 * each module rank 0 compares the map with every block reached so far; a
 * module that reached a new one keeps its recipe (its draws, recipe.c),
 * and later modules of that pass are, half the time, a kept recipe
 * with a few draws changed, as coverage-guided fuzzers mutate the inputs
 * that found new ground.  The generators still decide each expectation
 * from the draws they get.  Rank 0's decision is broadcast, so every rank
 * keeps the same recipes and draws the same modules. */
#define _DEFAULT_SOURCE         /* MAP_ANONYMOUS */
#include "fuzz_internal.h"
#include "coll.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { MAP_BITS = 18, MAP_SIZE = 1 << MAP_BITS, MAX_KEPT = 4096 };

static unsigned char *run_map;      /* shared with child processes; NULL until a guide exists */

/* The hook the instrumented passes call; in a build without GUIDED=1
 * nothing calls it. */
void fuzz_cov_mark(uint64_t pc)
{
    if (run_map)
        run_map[(pc * 0x9e3779b97f4a7c15ull) >> (64 - MAP_BITS)] = 1;
}

void __sanitizer_cov_trace_pc(void);
void __sanitizer_cov_trace_pc(void)
{
    fuzz_cov_mark((uint64_t)(uintptr_t)__builtin_return_address(0));
}

bool fuzz_guide_available(void)
{
#ifdef HLOCHECK_GUIDED
    return true;
#else
    return false;
#endif
}

typedef struct Kept {
    FuzzRecipe *v;
    int n, cap;
} Kept;

struct FuzzGuide {
    FuzzRng rng;                    /* which recipe, which draws: the same on every rank */
    unsigned char *seen;            /* every block reached so far (rank 0's) */
    long blocks;
    Kept kept[16];                  /* by config pass */
    int n_passes;
    FuzzRecipe work;                /* the module being run */
    bool feedback;                  /* false: blocks counted, recipes never drawn from */
    long modules, mutated, kept_total;
};

FuzzGuide *fuzz_guide_new(uint64_t seed, int n_passes, bool feedback, Error *err)
{
    if (!run_map) {
        void *p = mmap(NULL, MAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            error_set(err, ERR_NOMEM, (IrLoc){ 0 }, "hlo-fuzz --guided: cannot map the coverage counters");
            return NULL;
        }
        run_map = p;
    }
    FuzzGuide *g = xcalloc(1, sizeof *g);
    g->rng.s = seed ^ 0x6a09e667f3bcc909ull;
    g->seen = xcalloc(MAP_SIZE, 1);
    g->n_passes = n_passes < 16 ? n_passes : 16;
    g->feedback = feedback;
    return g;
}

void fuzz_guide_free(FuzzGuide *g)
{
    if (!g)
        return;
    for (int p = 0; p < g->n_passes; p++) {
        for (int i = 0; i < g->kept[p].n; i++)
            fuzz_recipe_free(&g->kept[p].v[i]);
        free(g->kept[p].v);
    }
    fuzz_recipe_free(&g->work);
    free(g->seen);
    free(g);
}

FuzzRecipe *fuzz_guide_next(FuzzGuide *g, int which)
{
    memset(run_map, 0, MAP_SIZE);
    fuzz_recipe_free(&g->work);
    g->modules++;
    Kept *k = &g->kept[which % g->n_passes];
    if (g->feedback && k->n > 0 && fuzz_below(&g->rng, 2) != 0) {
        fuzz_recipe_copy(&g->work, &k->v[fuzz_below(&g->rng, k->n)]);
        if (fuzz_recipe_mutate(&g->work, &g->rng))
            g->mutated++;
    }
    return &g->work;
}

long fuzz_guide_learn(FuzzGuide *g, Coll *c, int which)
{
    int64_t fresh = 0;
    if (!c || coll_rank(c) == 0)
        for (size_t i = 0; i < MAP_SIZE; i++)
            if (run_map[i] && !g->seen[i]) {
                g->seen[i] = 1;
                fresh++;
            }
    if (c)
        coll_bcast(c, &fresh, sizeof fresh, 0);
    g->blocks += fresh;
    if (fresh > 0) {
        Kept *k = &g->kept[which % g->n_passes];
        FuzzRecipe *slot;
        if (k->n < MAX_KEPT) {
            if (k->n == k->cap) {
                k->cap = k->cap ? 2 * k->cap : 16;
                k->v = xrealloc(k->v, (size_t)k->cap * sizeof *k->v);
            }
            slot = &k->v[k->n++];
            memset(slot, 0, sizeof *slot);
        } else {                    /* full: an earlier one makes room */
            slot = &k->v[fuzz_below(&g->rng, k->n)];
        }
        fuzz_recipe_copy(slot, &g->work);
        g->kept_total++;
    }
    return (long)fresh;
}

void fuzz_guide_stats(const FuzzGuide *g, long *blocks, long *kept, long *mutated)
{
    *blocks = g->blocks;
    *kept = g->kept_total;
    *mutated = g->mutated;
}
