/* model.c: the combiners' engine, from the spec (not written yet). */
#include "fuzz_internal.h"

void fuzz_model_combiner(FuzzGen *g, int number, const PassOptions *opt) { (void)g; (void)number; (void)opt; }
