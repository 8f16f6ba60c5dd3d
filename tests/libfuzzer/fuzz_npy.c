/* fuzz_npy.c: libFuzzer target (make fuzz).  Any bytes as a .npy file,
 * read as a few parameter shapes: an error or a value, never a crash or a
 * read past the data. */
#include "interp.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const shapes[] = { "f32[4]", "bf16[2,3]", "s8[]", "pred[3]", "f64[2,2,2]", "u16[0]" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/fuzz-npy-%ld.npy", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        char text[160];
        snprintf(text, sizeof text, "HloModule m\nENTRY e {\n  ROOT p = %s parameter(0)\n}\n", shapes[k]);
        Error err = { 0 };
        IrModule *m = ir_parse_module(text, strlen(text), "shape", &err);
        if (!m)
            abort();
        bool rounded = false;
        Value *v = npy_read(path, m->entry->params[0]->shape, &rounded, &err);
        value_release(v);
        ir_module_free(m);
    }
    remove(path);
    return 0;
}
