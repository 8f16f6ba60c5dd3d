/* gen_shape.c: sites of #92 and #97 (not written yet: no sites). */
#include "gen.h"

void fuzz_gen_ag_reshape(FuzzGen *g) { (void)g; }
void fuzz_gen_ag_dynamic_slice(FuzzGen *g) { (void)g; }
