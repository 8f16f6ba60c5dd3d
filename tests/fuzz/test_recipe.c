/* test_recipe.c: a module's draws on tape (recipe.c) and the guide that
 * keeps and mutates them (guided.c): a recorded recipe draws the module
 * again, a mutated one another that still verifies, the file form reads
 * back, and the guide keeps exactly the recipes whose module reached a new
 * block. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fuzz_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *print_module(FuzzConfig *cfg, const char *pass, long index)
{
    cfg->n_passes = 1;
    cfg->passes[0] = pass_find(pass);
    assert_non_null(cfg->passes[0]);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    Error err = { 0 };
    bool ok = fuzz_print_module(cfg, 4, index, 0, f, &err);
    fclose(f);
    if (!ok)
        fprintf(stderr, "%s\n", err.msg);
    assert_true(ok);
    return text;
}

static void verifies(const char *text)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "fuzz", &err);
    if (!m || !ir_verify_module(m, &err))
        fail_msg("%s\n%s", err.msg, text);
    ir_module_free(m);
}

/* Drawn with an empty recipe, a module is the one seed and index give, and
 * its draws are recorded; drawn again from them, the same module, and
 * from their copy too. */
static void a_recorded_recipe_draws_the_module_again(void **state)
{
    (void)state;
    static const char *const passes[] = { "flip-ag-binary", "flip-reduce-convert-add", "all-reduce-combiner" };
    for (size_t p = 0; p < sizeof passes / sizeof passes[0]; p++) {
        FuzzConfig plain = { .modes = { true, true }, .seed = 5, .trials = 1 };
        char *want = print_module(&plain, passes[p], 7);
        FuzzRecipe r = { 0 }, copy = { 0 };
        FuzzConfig taped = plain;
        taped.recipe = &r;
        char *first = print_module(&taped, passes[p], 7);
        assert_string_equal(first, want);
        assert_true(fuzz_recipe_draws(&r) > 3);
        long draws = fuzz_recipe_draws(&r);
        char *again = print_module(&taped, passes[p], 7);
        assert_string_equal(again, want);
        assert_int_equal(fuzz_recipe_draws(&r), draws);     /* replayed, nothing drawn afresh */
        fuzz_recipe_copy(&copy, &r);
        taped.recipe = &copy;
        char *copied = print_module(&taped, passes[p], 7);
        assert_string_equal(copied, want);
        free(want);
        free(first);
        free(again);
        free(copied);
        fuzz_recipe_free(&r);
        fuzz_recipe_free(&copy);
    }
}

/* Mutated recipes draw other modules, each still valid HLO (the
 * generators decide from whatever values they get). */
static void mutated_recipes_draw_other_valid_modules(void **state)
{
    (void)state;
    FuzzConfig cfg = { .modes = { true, true }, .seed = 3, .trials = 1 };
    FuzzRecipe base = { 0 };
    cfg.recipe = &base;
    char *orig = print_module(&cfg, "flip-ag-reshape", 2);
    FuzzRng g = { 99, NULL };
    int differ = 0;
    for (int i = 0; i < 40; i++) {
        FuzzRecipe m = { 0 };
        fuzz_recipe_copy(&m, &base);
        assert_true(fuzz_recipe_mutate(&m, &g));
        cfg.recipe = &m;
        char *text = print_module(&cfg, "flip-ag-reshape", 2);
        verifies(text);
        differ += strcmp(text, orig) != 0;
        free(text);
        fuzz_recipe_free(&m);
    }
    assert_true(differ >= 20);
    FuzzRecipe empty = { 0 };
    assert_false(fuzz_recipe_mutate(&empty, &g));
    free(orig);
    fuzz_recipe_free(&base);
}

/* The file form reads back as the same draws; a bad line is refused with
 * its place. */
static void recipes_write_and_read_back(void **state)
{
    (void)state;
    FuzzConfig cfg = { .modes = { true, true }, .seed = 8, .trials = 1 };
    FuzzRecipe r = { 0 }, back = { 0 };
    cfg.recipe = &r;
    char *want = print_module(&cfg, "all-gather-combiner", 4);
    StrBuf sb;
    strbuf_init(&sb);
    fuzz_recipe_write(&r, &sb);
    Error err = { 0 };
    assert_true(fuzz_recipe_read(&back, sb.s, "draws.txt", &err));
    assert_int_equal(fuzz_recipe_draws(&back), fuzz_recipe_draws(&r));
    for (int k = 0; k < FUZZ_STREAMS; k++) {
        assert_int_equal(back.t[k].n, r.t[k].n);
        if (r.t[k].n)
            assert_memory_equal(back.t[k].v, r.t[k].v, (size_t)r.t[k].n * sizeof *r.t[k].v);
    }
    cfg.recipe = &back;
    char *text = print_module(&cfg, "all-gather-combiner", 4);
    assert_string_equal(text, want);
    static const struct { const char *text; int line, col; } bad[] = {
        { "stream 0: 1 2\nstream 0: 3\n", 2, 1 },          /* a stream twice */
        { "# c\nstream 99: 1\n", 2, 1 },                  /* no such stream */
        { "stream 1: 12 zz\n", 1, 14 },                   /* not hexadecimal */
        { "stream 1: 1ffffffffffffffff\n", 1, 11 },       /* over 2^64 */
        { "draws 1 2\n", 1, 1 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        Error e = { 0 };
        FuzzRecipe x = { 0 };
        assert_false(fuzz_recipe_read(&x, bad[i].text, "draws.txt", &e));
        assert_int_equal(e.code, ERR_SYNTAX);
        assert_int_equal(e.loc.line, bad[i].line);
        assert_int_equal(e.loc.col, bad[i].col);
        assert_int_equal(fuzz_recipe_draws(&x), 0);
    }
    Error e = { 0 };
    assert_false(fuzz_recipe_load(&back, "/nonexistent/draws.txt", &e));
    assert_int_equal(e.code, ERR_IO);
    strbuf_free(&sb);
    free(want);
    free(text);
    fuzz_recipe_free(&r);
    fuzz_recipe_free(&back);
}

/* The guide keeps a recipe exactly when its module reached a block no
 * module before it did, and once it has one, draws most modules of that
 * pass from it, mutated. */
static void the_guide_keeps_what_reached_new_blocks(void **state)
{
    (void)state;
    Error err = { 0 };
    FuzzGuide *g = fuzz_guide_new(1, 2, true, &err);
    assert_non_null(g);
    long blocks, kept, mutated;
    FuzzRecipe *r = fuzz_guide_next(g, 0);
    assert_int_equal(fuzz_recipe_draws(r), 0);          /* nothing kept yet: drawn afresh */
    FuzzRng fake = { 0, &r->t[0] };
    for (int i = 0; i < 5; i++)
        fuzz_u64(&fake);                                /* the module's draws */
    fuzz_cov_mark(0x401000);
    fuzz_cov_mark(0x401010);
    assert_int_equal(fuzz_guide_learn(g, NULL, 0), 2);
    fuzz_guide_stats(g, &blocks, &kept, &mutated);
    assert_int_equal(blocks, 2);
    assert_int_equal(kept, 1);
    int from_kept = 0;
    for (int i = 0; i < 40; i++) {
        r = fuzz_guide_next(g, 0);
        from_kept += fuzz_recipe_draws(r) > 0;
        fuzz_cov_mark(0x401000);                        /* nothing new */
        assert_int_equal(fuzz_guide_learn(g, NULL, 0), 0);
    }
    fuzz_guide_stats(g, &blocks, &kept, &mutated);
    assert_true(mutated >= 20 && mutated < 40);         /* three in four, about */
    assert_true(from_kept <= mutated);                  /* (a mutation may cut every draw) */
    assert_int_equal(kept, 1);
    r = fuzz_guide_next(g, 1);                          /* the other pass has none kept */
    assert_int_equal(fuzz_recipe_draws(r), 0);
    fuzz_cov_mark(0x402000);
    assert_int_equal(fuzz_guide_learn(g, NULL, 1), 1);
    fuzz_guide_stats(g, &blocks, &kept, &mutated);
    assert_int_equal(blocks, 3);
    assert_int_equal(kept, 2);
    fuzz_guide_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_recorded_recipe_draws_the_module_again),
        cmocka_unit_test(mutated_recipes_draw_other_valid_modules),
        cmocka_unit_test(recipes_write_and_read_back),
        cmocka_unit_test(the_guide_keeps_what_reached_new_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
