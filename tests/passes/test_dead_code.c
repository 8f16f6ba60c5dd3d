/* test_dead_code.c: the pipeline's dead-code removal (src/passes/
 * pipeline.c) and what it relies on: a pass marked leaves_no_dead_code in
 * passes.def (the combiners), run on a module without dead code, leaves
 * none, so the pipeline skips its whole-module sweep after it.
 *
 * Every shipped module (corpus/, the golden tests under tests/passes/, and
 * ../shared/peer-corpus/ when it is beside the clone) is cleared of dead
 * code, then each such pass runs on a copy with the default options, with
 * combine-by-dim off and with --neuron-fsdp; a whole-module removal
 * afterwards must find nothing, and the copy must verify. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir.h"
#include "pass.h"

typedef struct Tally {
    int modules, runs, changed;
} Tally;

static void run_on_copy(const IrModule *m, const char *path, const Pass *p, const PassOptions *opt,
                        const char *how, Tally *t)
{
    Error err = { 0 };
    IrModule *copy = ir_module_copy(m, &err);
    assert_non_null(copy);
    PassStats stats = { 0 };
    PassResult r = p->run(copy, opt, &stats, &err);
    t->runs++;
    if (r == PASS_CHANGED) {
        t->changed++;
        int left = ir_module_remove_dead(copy);
        if (left != 0)
            fail_msg("%s: %s (%s) left %d dead instructions", path, p->name, how, left);
        if (!ir_verify_module(copy, &err))
            fail_msg("%s: %s (%s) made a module that does not verify: %s", path, p->name, how, err.msg);
    }
    ir_module_free(copy);
}

static void check_module(const char *path, Tally *t)
{
    Error err = { 0 };
    IrModule *m = ir_parse_file(path, &err);
    if (!m || !ir_verify_module(m, &err)) {     /* the corpus keeps a few invalid ones */
        ir_module_free(m);
        return;
    }
    ir_module_remove_dead(m);
    t->modules++;
    const Pass *passes;
    int n = pass_registry(&passes);
    for (int i = 0; i < n; i++) {
        if (!passes[i].leaves_no_dead_code)
            continue;
        PassOptions opt;
        pass_options_default(&opt);
        run_on_copy(m, path, &passes[i], &opt, "defaults", t);
        opt.combine_by_dim = false;
        run_on_copy(m, path, &passes[i], &opt, "combine-by-dim off", t);
        pass_options_default(&opt);
        opt.neuron_fsdp = true;
        run_on_copy(m, path, &passes[i], &opt, "neuron-fsdp", t);
    }
    ir_module_free(m);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Every *.hlo under dir, in name order (so a failure repeats the same way). */
static void walk(const char *dir, Tally *t)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    if (n < 0)
        return;
    for (int i = 0; i < n; i++) {
        char path[1024];
        const char *name = names[i]->d_name;
        struct stat st;
        if (name[0] != '.' && snprintf(path, sizeof path, "%s/%s", dir, name) < (int)sizeof path &&
            stat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                walk(path, t);
            else if (ends_with(name, ".hlo"))
                check_module(path, t);
        }
        free(names[i]);
    }
    free(names);
}

static void combiners_leave_no_dead_code_on_the_corpus(void **state)
{
    (void)state;
    Tally t = { 0 };
    walk("corpus", &t);
    walk("tests/passes", &t);
    print_message("%d modules, %d pass runs, %d changed a module\n", t.modules, t.runs, t.changed);
    assert_true(t.modules > 100);   /* the walk found the shipped modules */
    assert_true(t.changed > 100);   /* and the golden cases combined */
}

static void combiners_leave_no_dead_code_on_the_peer_corpus(void **state)
{
    (void)state;
    struct stat st;
    if (stat("../shared/peer-corpus", &st) != 0) {
        print_message("skip: ../shared/peer-corpus not found next to the repo\n");
        skip();
    }
    Tally t = { 0 };
    walk("../shared/peer-corpus", &t);
    print_message("%d modules, %d pass runs, %d changed a module\n", t.modules, t.runs, t.changed);
    assert_true(t.modules > 0);
}

static IrModule *parse_text(const char *text)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
    if (!m)
        error_print(&err, stderr);
    assert_non_null(m);
    assert_true(ir_verify_module(m, &err));
    return m;
}

static bool has(const IrComputation *c, const char *name)
{
    for (int i = 0; i < c->n_instrs; i++)
        if (strcmp(c->instrs[i]->name, name) == 0)
            return true;
    return false;
}

static void run(IrModule *m, const char *passes)
{
    Error err = { 0 };
    const Pass *list[64];
    int n = 0;
    assert_true(pass_parse_list(passes, list, &n, &err));
    PassOptions opt;
    pass_options_default(&opt);
    bool changed = false;
    assert_true(pass_run_pipeline(m, list, n, &opt, NULL, &changed, &err));
    assert_true(changed);
}

/* Dead code the input came with goes when the first pass that changes the
 * module is a combiner (whose own rewrite leaves none). */
static void dead_code_of_the_input_goes_after_a_combiner(void **state)
{
    (void)state;
    IrModule *m = parse_text("HloModule m, replica_count=2\n"
                             "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
                             "ENTRY e {\n"
                             "  p = f32[4] parameter(0)\n"
                             "  q = f32[4] parameter(1)\n"
                             "  unused = f32[4] negate(p)\n"
                             "  x = f32[4] all-reduce(p), replica_groups={}, to_apply=sum\n"
                             "  y = f32[4] all-reduce(q), replica_groups={}, to_apply=sum\n"
                             "  ROOT t = (f32[4], f32[4]) tuple(x, y)\n"
                             "}\n");
    run(m, "all-reduce-combiner");
    assert_false(has(m->entry, "unused"));
    assert_int_equal(ir_module_remove_dead(m), 0);
    ir_module_free(m);
}

/* A flip leaves the instructions it replaced: the whole module is swept
 * after it even when a combiner before it left the module without dead
 * code. */
static void a_flip_after_a_combiner_is_swept_after(void **state)
{
    (void)state;
    IrModule *m = parse_text("HloModule m, replica_count=2\n"
                             "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
                             "ENTRY e {\n"
                             "  p = f32[4] parameter(0)\n"
                             "  q = bf16[4] parameter(1)\n"
                             "  x = f32[4] all-reduce(p), replica_groups={}, to_apply=sum\n"
                             "  y = f32[4] all-reduce(p), replica_groups={}, to_apply=sum\n"
                             "  g = bf16[8] all-gather(q), replica_groups={{0,1}}, dimensions={0}\n"
                             "  c = f32[8] convert(g)\n"
                             "  ROOT t = (f32[4], f32[4], f32[8]) tuple(x, y, c)\n"
                             "}\n");
    run(m, "all-reduce-combiner,flip-ag-convert");
    assert_false(has(m->entry, "g"));       /* the flipped gather is gone */
    assert_int_equal(ir_module_remove_dead(m), 0);
    int reduces = 0;
    for (int i = 0; i < m->entry->n_instrs; i++)
        reduces += m->entry->instrs[i]->op == IR_OP_ALL_REDUCE;
    assert_int_equal(reduces, 1);           /* the two combined */
    ir_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(combiners_leave_no_dead_code_on_the_corpus),
        cmocka_unit_test(combiners_leave_no_dead_code_on_the_peer_corpus),
        cmocka_unit_test(dead_code_of_the_input_goes_after_a_combiner),
        cmocka_unit_test(a_flip_after_a_combiner_is_swept_after),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
