/* gen_reduce.c: sites of #102 and #104 (not written yet). */
#include "gen.h"

void fuzz_gen_reduce_convert_add(FuzzGen *g) { (void)g; }
void fuzz_gen_rs_transpose(FuzzGen *g) { (void)g; }
