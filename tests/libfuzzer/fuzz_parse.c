/* fuzz_parse.c: libFuzzer target (make fuzz).  Any text: parse; when it
 * parses and verifies, print it and parse the print again, which must
 * succeed and print the same (the round trip every tool relies on).  A
 * crash, a leak or a broken round trip is a finding. */
#include "ir.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module((const char *)data, size, "fuzz", &err);
    if (!m)
        return 0;
    if (ir_verify_module(m, &err)) {
        StrBuf a, b;
        strbuf_init(&a);
        strbuf_init(&b);
        ir_print_module(&a, m);
        Error e2 = { 0 };
        IrModule *again = ir_parse_module(a.s, a.len, "printed", &e2);
        if (!again)
            abort();                    /* printed text that does not parse back */
        ir_print_module(&b, again);
        if (a.len != b.len || memcmp(a.s, b.s, a.len) != 0)
            abort();                    /* print, parse, print is not a fixpoint */
        ir_module_free(again);
        strbuf_free(&a);
        strbuf_free(&b);
    }
    ir_module_free(m);
    return 0;
}
