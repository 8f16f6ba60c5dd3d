/* coll_report.c: what every rank has to say, said once by rank 0: text
 * in rank order (hlo-run's results), and --time's tables, each figure the
 * slowest rank's; and what rank 0 alone hears (standard input), told to
 * every rank. */
#include "coll.h"
#include "parallel.h"

#include <inttypes.h>
#include <stdlib.h>

void coll_print_in_rank_order(Coll *c, const char *text, size_t len, FILE *out)
{
    /* Rank r sends its text to all (a broadcast, the one way coll.h
     * offers) and rank 0 writes it. */
    int rank = coll_rank(c), world = coll_world(c);
    if (rank == 0)
        fwrite(text ? text : "", 1, len, out);
    for (int r = 1; r < world; r++) {
        int64_t n = r == rank ? (int64_t)len : 0;
        coll_bcast(c, &n, sizeof n, r);
        char *buf = r == rank ? (char *)text : xmalloc((size_t)n + 1);
        coll_bcast(c, buf, (size_t)n, r);
        if (rank == 0)
            fwrite(buf, 1, (size_t)n, out);
        if (r != rank)
            free(buf);
    }
    fflush(out);
}

static void print_opcode_times(Coll *c, const Interp *it, FILE *out)
{
    InterpTiming t = *interp_timing(it);
    coll_allreduce_f64(c, t.seconds, IR_OP_COUNT, COLL_MAX);
    if (coll_rank(c) != 0)
        return;
    double total = 0;
    for (int op = 0; op < IR_OP_COUNT; op++)
        total += t.seconds[op];
    fprintf(out, "time per instruction kind (seconds: the slowest of %d ranks, %d thread%s each on rank 0):\n",
           coll_world(c), interp_threads(), interp_threads() == 1 ? "" : "s");
    fprintf(out, "  %-28s %10s %12s %7s\n", "instruction", "count", "seconds", "share");
    for (int done = 0; done < IR_OP_COUNT; done++) {
        int best = -1;      /* the next slowest not yet printed */
        for (int op = 0; op < IR_OP_COUNT; op++)
            if (t.count[op] > 0 && (best < 0 || t.seconds[op] > t.seconds[best]))
                best = op;
        if (best < 0)
            break;
        fprintf(out, "  %-28s %10ld %12.6f %6.1f%%\n", ir_opcode_name((IrOpcode)best), t.count[best],
               t.seconds[best], total > 0 ? 100.0 * t.seconds[best] / total : 0.0);
        t.count[best] = 0;
    }
}

/* nccl-tests: bytes is the whole buffer (for reduce-scatter the operand, n
 * times the result), algbw = bytes / time, busbw = algbw x factor. */
static double bus_factor(IrOpcode op, int n, int64_t *bytes)
{
    double fraction = n > 0 ? (double)(n - 1) / n : 0;
    switch ((int)op) {
    case IR_OP_ALL_REDUCE: case IR_OP_ALL_REDUCE_START: case IR_OP_ALL_REDUCE_DONE:
        return 2 * fraction;
    case IR_OP_REDUCE_SCATTER:
        *bytes *= n;
        return fraction;
    case IR_OP_ALL_GATHER: case IR_OP_ALL_GATHER_START: case IR_OP_ALL_GATHER_DONE: case IR_OP_ALL_TO_ALL:
        return fraction;
    default:
        return 1;
    }
}

static void print_collective_times(Coll *c, FILE *out)
{
    const CollStat *st;
    int n = coll_stats(c, &st);
    int64_t range[2] = { n, -n };
    coll_allreduce_i64(c, range, 2, COLL_MIN);
    bool same = range[0] == -range[1];     /* every rank ran the same collectives */
    double *secs = xcalloc((size_t)(n ? n : 1), sizeof *secs);
    for (int i = 0; i < n; i++)
        secs[i] = st[i].seconds;
    if (same && n > 0)
        coll_allreduce_f64(c, secs, n, COLL_MAX);
    if (coll_rank(c) == 0 && n > 0) {
        fprintf(out, "collectives (seconds: the slowest of %d ranks%s; bandwidths in GB/s, nccl-tests busbw):\n",
               coll_world(c), same ? "" : ", here rank 0 alone");
        fprintf(out, "  %-24s %-20s %5s %14s %6s %12s %10s %10s\n", "name", "op", "group", "bytes", "calls",
               "seconds", "algbw", "busbw");
    }
    for (int i = 0; i < n && coll_rank(c) == 0; i++) {
        const char *op = ir_opcode_name(st[i].op);
        int64_t bytes = st[i].bytes;
        double factor = bus_factor(st[i].op, st[i].group_size, &bytes);
        double algbw = secs[i] > 0 ? (double)bytes * (double)st[i].calls / secs[i] / 1e9 : 0;
        fprintf(out, "  %-24s %-20s %5d %14" PRId64 " %6ld %12.6f %10.3f %10.3f\n", st[i].name, op,
               st[i].group_size, bytes, st[i].calls, secs[i], algbw, algbw * factor);
    }
    free(secs);
}

void coll_print_times(Coll *c, const Interp *it, FILE *out)
{
    print_opcode_times(c, it, out);
    print_collective_times(c, out);
}

char *coll_read_stdin(Coll *c, size_t *len_out, Error *err)
{
    int64_t len = 0;
    char *text = NULL;
    if (coll_rank(c) == 0) {
        size_t cap = 1 << 16, n = 0, got;
        text = xmalloc(cap);
        while ((got = fread(text + n, 1, cap - n, stdin)) > 0)
            if ((n += got) == cap)
                text = xrealloc(text, cap *= 2);
        len = ferror(stdin) ? -1 : (int64_t)n;
    }
    coll_bcast(c, &len, sizeof len, 0);
    if (len < 0) {
        free(text);
        error_set(err, ERR_IO, (IrLoc){ "-", 0, 0 }, "cannot read standard input");
        return NULL;
    }
    if (coll_rank(c) != 0)
        text = xmalloc((size_t)len + 1);
    coll_bcast(c, text, (size_t)len, 0);
    *len_out = (size_t)len;
    return text;
}
