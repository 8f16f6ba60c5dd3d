/* fuzz_proto.c: libFuzzer target (make fuzz).  Any bytes, read as one of
 * XLA's binary forms (HloModuleProto, HloProto, HloSnapshot): a module
 * that reads and verifies must print and parse back to the same print, as
 * a module read from text does.  Seeded with scripts/proto_cases.py's
 * cases.  A crash, a leak, a hang (a nesting bomb, a few bytes asking for
 * gigabytes of text) or a broken round trip is a finding. */
#include "round_trip.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Error err = { 0 };
    IrModule *m = ir_parse_proto(data, size, "fuzz.pb", &err);
    if (m)
        fuzz_round_trip(m);
    return 0;
}
