/* fuzz_pipeline.c: libFuzzer target (make fuzz).  Any text that parses and
 * verifies goes through the default pipeline, in faithful and in sound
 * mode; a pass that fails on a valid module, or leaves one the verifier
 * rejects (the pipeline says so with ERR_INTERNAL), is a finding. */
#include "ir.h"
#include "pass.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module((const char *)data, size, "fuzz", &err);
    if (!m)
        return 0;
    if (!ir_verify_module(m, &err)) {
        ir_module_free(m);
        return 0;
    }
    const Pass *passes[64];
    int n = 0;
    if (!pass_parse_list("default", passes, &n, &err))
        abort();
    for (int mode = 0; mode < 2; mode++) {
        Error e2 = { 0 };
        IrModule *c = ir_module_copy(m, &e2);
        if (!c)
            abort();
        PassOptions opt;
        pass_options_default(&opt);
        opt.mode = mode ? PASS_MODE_SOUND : PASS_MODE_FAITHFUL;
        bool changed = false;
        /* Unsupported is an answer; an internal error is a bug. */
        if (!pass_run_pipeline(c, passes, n, &opt, NULL, &changed, &e2) && e2.code == ERR_INTERNAL)
            abort();
        ir_module_free(c);
    }
    ir_module_free(m);
    return 0;
}
