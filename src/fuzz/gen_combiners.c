/* gen_combiners.c: sites of the combiners (not written yet: no sites). */
#include "gen.h"

void fuzz_gen_combiner(FuzzGen *g, int number) { (void)g; (void)number; }
