/* memory.c (check): the memory a run needs against what the machine has.
 * The estimate itself is src/interp/memory.c's; here the limit and the
 * message that refuses a run before it starts. */
#include "check.h"
#include "coll.h"

#include <stdio.h>

int64_t check_default_max_memory(Coll *c, char *why, size_t n)
{
    int64_t phys = coll_node_memory();
    int ranks = coll_node_ranks(c);
    char pb[32];
    interp_format_bytes(phys, pb, sizeof pb);
    snprintf(why, n, "%s of physical memory / %d rank%s on this node", pb, ranks, ranks == 1 ? "" : "s");
    return phys > 0 ? phys / ranks : 0;
}

bool check_memory_fits(const char *what, const InterpMemory *need, int64_t limit, const char *why, Error *err)
{
    if (limit <= 0 || need->peak <= limit)
        return true;
    char nb[32], lb[32], bb[32];
    interp_format_bytes(need->peak, nb, sizeof nb);
    interp_format_bytes(limit, lb, sizeof lb);
    interp_format_bytes(need->largest_bytes, bb, sizeof bb);
    const IrInstr *at = need->at;
    IrLoc loc = at ? at->info->loc : (IrLoc){ 0 };
    return error_set(err, ERR_UNSUPPORTED, loc,
                     "%s needs an estimated %s per rank, more than --max-memory=%s (%s): the need peaks at %s%s, "
                     "the largest buffer then is %s %s (%s); give more memory per rank (fewer ranks per node, "
                     "or --max-memory), or check only the regions that differ with hlo-check --local",
                     what, nb, lb, why, at ? "instruction " : "", at ? at->name : "the start",
                     need->largest ? need->largest->name : "?",
                     need->largest ? ir_shape_str(need->largest->shape) : "", bb);
}
