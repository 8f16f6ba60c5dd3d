/* round_trip.h: the check fuzz_parse.c and fuzz_proto.c share.  A module
 * that verifies must print, parse back and print the same text (the round
 * trip every tool relies on); anything else aborts, which libFuzzer keeps
 * as a finding.  Frees m. */
#ifndef HLOCHECK_FUZZ_ROUND_TRIP_H
#define HLOCHECK_FUZZ_ROUND_TRIP_H

#include "ir.h"

#include <stdlib.h>
#include <string.h>

static void fuzz_round_trip(IrModule *m)
{
    Error err = { 0 };
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
}

#endif
