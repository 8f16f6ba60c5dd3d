/* interp_test_util.h: shared by the interpreter's cmocka tests.  Parses an
 * HLO module, runs its entry on given parameter arrays, hands back the
 * result.  Include after cmocka.h. */
#ifndef INTERP_TEST_UTIL_H
#define INTERP_TEST_UTIL_H

#include <string.h>

#include "interp.h"

typedef struct TestRun {
    IrModule *m;
    Interp *it;
    Value *result;
    Error err;
} TestRun;

/* Parses text (must verify) and runs it on params: params[i] points at the
 * row-major data of entry parameter i, in its declared shape and type.
 * Returns false with run->err set when parsing or running fails. */
static inline bool test_run(TestRun *run, const char *text, const void *const *params)
{
    memset(run, 0, sizeof *run);
    run->m = ir_parse_module(text, strlen(text), "test.hlo", &run->err);
    if (!run->m)
        return false;
    if (!ir_verify_module(run->m, &run->err))
        return false;
    run->it = interp_new(run->m, NULL, &run->err);
    if (!run->it)
        return false;
    const IrComputation *entry = run->m->entry;
    Value *args[64];
    for (int i = 0; i < entry->n_params && i < 64; i++) {
        args[i] = value_new_array(entry->params[i]->shape, &run->err);
        memcpy(args[i]->data, params[i], value_bytes(args[i]));
    }
    return interp_run(run->it, args, entry->n_params, &run->result, &run->err);
}

/* The same, asserting success. */
static inline Value *test_run_ok(TestRun *run, const char *text, const void *const *params)
{
    if (!test_run(run, text, params)) {
        error_print(&run->err, stderr);
        fail_msg("module failed: %s", run->err.msg);
    }
    return run->result;
}

static inline void test_run_free(TestRun *run)
{
    value_release(run->result);
    interp_free(run->it);
    ir_module_free(run->m);
    memset(run, 0, sizeof *run);
}

static inline uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Bitwise equality of an f32 result with want (so -0 and NaN payloads count). */
static inline void assert_f32_array(const Value *v, const float *want, int64_t n)
{
    assert_int_equal(value_elements(v), n);
    const float *got = v->data;
    for (int64_t i = 0; i < n; i++)
        if (f32_bits(got[i]) != f32_bits(want[i]))
            fail_msg("element %lld: got %.9g (0x%08x), want %.9g (0x%08x)", (long long)i, (double)got[i],
                     (unsigned)f32_bits(got[i]), (double)want[i], (unsigned)f32_bits(want[i]));
}

static inline void assert_s32_array(const Value *v, const int32_t *want, int64_t n)
{
    assert_int_equal(value_elements(v), n);
    const int32_t *got = v->data;
    for (int64_t i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("element %lld: got %d, want %d", (long long)i, got[i], want[i]);
}

#endif /* INTERP_TEST_UTIL_H */
