/* test_threads.c: the pool (src/interp/parallel.c) and the promise that a
 * kernel gives the same bits at any thread count.
 *
 * HLOCHECK_PAR_MIN=1 is set before anything runs, so even these small
 * arrays split across the threads.  Inputs are each module's seeded random
 * ones (check_random_inputs).  The dot cases are the ones that depend
 * on how OpenBLAS orders a sum: products cut into eval_dot.c's fixed tiles
 * of C, the tiles shared by the threads; batches of tiles. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "check.h"
#include "interp.h"
#include "parallel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* This process's thread count, from /proc (-1 when unreadable). */
static int os_threads(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

/* text's entry run at `threads` on its seeded random inputs; NULL on failure. */
static Value *run_at(const IrModule *m, int threads)
{
    Error err = { .code = ERR_OK };
    Value *params[8] = { 0 }, *result = NULL;
    Interp *it = interp_new(m, NULL, &err);
    bool ok = it && m->entry->n_params <= 8 && check_random_inputs(m, 0, 42, CHECK_DIST_UNIFORM, params, &err);
    interp_set_threads(threads);
    ok = ok && interp_run(it, params, m->entry->n_params, &result, &err);
    interp_set_threads(1);
    interp_free(it);
    if (!ok)
        error_print(&err, stderr);
    return ok ? result : NULL;
}

/* text at 2 and 3 threads must give the bits it gives at 1. */
static void assert_same_at_every_count(const char *text)
{
    Error err = { .code = ERR_OK };
    IrModule *m = ir_parse_module(text, strlen(text), "test.hlo", &err);
    if (!m || !ir_verify_module(m, &err))
        fail_msg("bad module: %s", err.msg);
    Value *one = run_at(m, 1);
    assert_non_null(one);
    for (int t = 2; t <= 3; t++) {
        Value *other = run_at(m, t);
        assert_non_null(other);
        if (!value_bits_equal(one, other))
            fail_msg("%d threads differ from 1 for:\n%s", t, text);
        value_release(other);
    }
    value_release(one);
    ir_module_free(m);
}

#define ADD_1M                                                                                   \
    "HloModule m\nENTRY e {\n  a = f32[1048576] parameter(0)\n  b = f32[1048576] parameter(1)\n" \
    "  ROOT c = f32[1048576] add(a, b)\n}\n"

/* Runs first: no earlier test may have started the pool. */
static void test_one_thread_starts_no_thread_and_two_start_one(void **state)
{
    (void)state;
    Error err = { .code = ERR_OK };
    IrModule *m = ir_parse_module(ADD_1M, strlen(ADD_1M), "test.hlo", &err);
    assert_non_null(m);
    /* Setting a count ends OpenBLAS's own idle workers where its build
     * has them (eval_dot.c): the process never gains a thread by it. */
    int loaded = os_threads();
    interp_set_threads(1);
    int before = os_threads();
    assert_true(before <= loaded);
    value_release(run_at(m, 1));
    assert_int_equal(os_threads(), before);
    value_release(run_at(m, 2));
    assert_int_equal(os_threads(), before + 1);
    ir_module_free(m);
}

static void count_items(void *ctx, int64_t begin, int64_t end)
{
    __atomic_add_fetch((int64_t *)ctx, end - begin, __ATOMIC_RELAXED);
}

/* A child of fork() has none of the parent's workers: a split job there
 * must still finish (it used to wait for workers that do not exist). */
static void test_a_forked_child_splits_without_the_parents_workers(void **state)
{
    (void)state;
    interp_set_threads(2);
    int64_t done = 0;
    parallel_for(1 << 20, 1 << 10, 1, count_items, &done);   /* starts the pool */
    assert_int_equal(done, 1 << 20);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10);          /* a hang ends the child by SIGALRM */
        int64_t in_child = 0;
        parallel_for(1 << 20, 1 << 10, 1, count_items, &in_child);
        _exit(in_child == 1 << 20 ? 0 : 1);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    interp_set_threads(1);
}

typedef struct Cover {
    int *hits;              /* per index */
    char *ends;             /* 1 where a chunk ends */
} Cover;

static void cover(void *ctx, int64_t begin, int64_t end)
{
    Cover *c = ctx;
    for (int64_t i = begin; i < end; i++)
        c->hits[i]++;
    c->ends[end] = 1;
}

static void test_parallel_for_covers_every_index_once_in_quantum_chunks(void **state)
{
    (void)state;
    enum { N = 1000, Q = 48 };
    for (int t = 1; t <= 3; t++) {
        int hits[N] = { 0 };
        char ends[N + 1] = { 0 };
        Cover c = { hits, ends };
        interp_set_threads(t);
        parallel_for(N, 1 << 20, Q, cover, &c);
        int chunks = 0;
        for (int i = 0; i < N; i++)
            assert_int_equal(hits[i], 1);
        for (int i = 1; i <= N; i++) {
            chunks += ends[i];
            if (ends[i] && i != N)
                assert_int_equal(i % Q, 0);
        }
        assert_int_equal(chunks, t);
    }
    interp_set_threads(1);
}

/* lhs [M,K] (or [K,M] when lhs_k is 0) x rhs [K,N] (or [N,K] when rhs_k
 * is 1) in type T. */
static void check_dot(const char *t, int m, int k, int n, int lhs_k, int rhs_k)
{
    char text[1024];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  a = %s[%d,%d] parameter(0)\n  b = %s[%d,%d] parameter(1)\n"
             "  ROOT c = %s[%d,%d] dot(a, b), lhs_contracting_dims={%d}, rhs_contracting_dims={%d}\n}\n",
             t, lhs_k ? m : k, lhs_k ? k : m, t, rhs_k ? n : k, rhs_k ? k : n, t, m, n, lhs_k, rhs_k);
    assert_same_at_every_count(text);
}

/* The tiles of C (eval_dot.c: the larger of M and N cut in two from 1024,
 * in four from 8192) are shared by the threads: sides below and at the
 * first cut, cut rows and cut columns, four pieces, contractions long
 * enough for OpenBLAS to block them, all four operand layouts, f32 and f64.  Run under each OpenBLAS kernel the
 * library has (scripts/run_unit.sh sets OPENBLAS_CORETYPE in turn). */
static void test_dot_tiles_give_the_same_bits(void **state)
{
    (void)state;
    static const int rows[] = { 1, 47, 1023, 1024, 1100 };
    static const int ks[] = { 7, 777 };
    static const int cols[] = { 5, 1100 };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++)
            for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
                for (int layout = 0; layout < 4; layout++)
                    check_dot((r + layout) % 2 ? "f64" : "f32", rows[r], ks[k], cols[c], layout & 1, layout >> 1);
    for (int layout = 0; layout < 4; layout++) {
        check_dot("f32", 8200, 7, 5, layout & 1, layout >> 1);
        check_dot("f64", 5, 7, 8200, layout & 1, layout >> 1);
    }
}

static void test_batched_dot_split_gives_the_same_bits(void **state)
{
    (void)state;
    static const char text[] =
        "HloModule m\nENTRY e {\n  a = f32[3,2,600,100] parameter(0)\n  b = f32[3,2,100,1030] parameter(1)\n"
        "  ROOT c = f32[3,2,600,1030] dot(a, b), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, "
        "rhs_batch_dims={0,1}, rhs_contracting_dims={2}\n}\n";
    assert_same_at_every_count(text);
}

static void test_reduce_and_movement_split_give_the_same_bits(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
        "ENTRY e {\n  a = f32[300,77] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT c = f32[300] reduce(a, z), dimensions={1}, to_apply=add\n}\n",
        "HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
        "ENTRY e {\n  a = f32[300,77] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT c = f32[77] reduce(a, z), dimensions={0}, to_apply=add\n}\n",
        "HloModule m\nENTRY e {\n  a = f32[300,77] parameter(0)\n"
        "  ROOT c = f32[77,300] transpose(a), dimensions={1,0}\n}\n",
        "HloModule m\nENTRY e {\n  a = f32[300,77] parameter(0)\n  z = f32[] constant(-1)\n"
        "  ROOT c = f32[602,80] pad(a, z), padding=1_2_1x0_3\n}\n",
        "HloModule m\nENTRY e {\n  a = f32[300,77] parameter(0)\n"
        "  ROOT c = bf16[300,77] convert(a)\n}\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        assert_same_at_every_count(texts[i]);
}

int main(void)
{
    setenv("HLOCHECK_PAR_MIN", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_thread_starts_no_thread_and_two_start_one),
        cmocka_unit_test(test_parallel_for_covers_every_index_once_in_quantum_chunks),
        cmocka_unit_test(test_a_forked_child_splits_without_the_parents_workers),
        cmocka_unit_test(test_dot_tiles_give_the_same_bits),
        cmocka_unit_test(test_batched_dot_split_gives_the_same_bits),
        cmocka_unit_test(test_reduce_and_movement_split_give_the_same_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
