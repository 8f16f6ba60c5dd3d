/* custom_call.c: the custom-call targets the interpreter knows.  Every one
 * here is an identity on values (one operand, same shape); any other target
 * is reported as unsupported, never skipped. */
#include "interp.h"

#include <string.h>

static const char *const identity_targets[] = {
    /* Neuron: marks weights for a static-ring transfer; values unchanged. */
    "AwsNeuronTransferWithStaticRing",
};

bool interp_custom_call_known(const char *target)
{
    for (size_t i = 0; i < sizeof identity_targets / sizeof identity_targets[0]; i++)
        if (strcmp(target, identity_targets[i]) == 0)
            return true;
    return false;
}
