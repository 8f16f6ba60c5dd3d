/* fuzz_parse.c: libFuzzer target (make fuzz).  Any text: parse; when it
 * parses and verifies, print it and parse the print again, which must
 * succeed and print the same (the round trip every tool relies on).  A
 * crash, a leak or a broken round trip is a finding. */
#include "round_trip.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module((const char *)data, size, "fuzz", &err);
    if (m)
        fuzz_round_trip(m);
    return 0;
}
