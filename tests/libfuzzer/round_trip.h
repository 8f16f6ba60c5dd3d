/* round_trip.h: the checks fuzz_parse.c and fuzz_proto.c share.  A module
 * that verifies must print, parse back and print the same text (the round
 * trip every tool relies on), and, when the proto writer takes it, its
 * HloModuleProto must read back, verify and write again to the same bytes
 * (the first write makes XLA's defaults explicit, so the text of what is
 * read back may gain them, but a second changes nothing).  Anything else
 * aborts, which libFuzzer keeps as a finding.  Frees m. */
#ifndef HLOCHECK_FUZZ_ROUND_TRIP_H
#define HLOCHECK_FUZZ_ROUND_TRIP_H

#include "ir.h"

#include <stdlib.h>
#include <string.h>

static bool same_bytes(const StrBuf *a, const StrBuf *b)
{
    return a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
}

/* Written, read and written again: the same bytes. */
static void fuzz_proto_round_trip(const IrModule *m)
{
    StrBuf pb1, pb2;
    strbuf_init(&pb1);
    strbuf_init(&pb2);
    Error err = { 0 };
    if (ir_proto_write(&pb1, m, NULL, &err)) {
        IrModule *back = ir_parse_proto(pb1.s, pb1.len, "written.pb", &err);
        if (!back)
            abort();                    /* a proto we wrote that we cannot read */
        if (!ir_verify_module(back, &err) || !ir_proto_write(&pb2, back, NULL, &err) || !same_bytes(&pb1, &pb2))
            abort();                    /* written, read, written: not a fixpoint */
        ir_module_free(back);
    } else if (err.code != ERR_UNSUPPORTED) {
        abort();                        /* the writer fails only on what a proto cannot hold */
    }
    strbuf_free(&pb1);
    strbuf_free(&pb2);
}

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
        fuzz_proto_round_trip(m);
        ir_module_free(again);
        strbuf_free(&a);
        strbuf_free(&b);
    }
    ir_module_free(m);
}

#endif
