/* fail.c: the rank-failure protocol of fail.h. */
#include "fail.h"

#include <stdio.h>
#include <string.h>

typedef struct Failure {
    char line[1024];        /* the message as error_print writes it */
    int64_t code;           /* exit status */
} Failure;

static void describe(const Error *err, Failure *out)
{
    memset(out, 0, sizeof *out);
    if (!err || err->code == ERR_OK) {
        snprintf(out->line, sizeof out->line, "internal error: a step failed without saying why\n");
        out->code = 3;
        return;
    }
    FILE *f = fmemopen(out->line, sizeof out->line - 1, "w");
    if (f) {
        error_print(err, f);
        fclose(f);
    }
    out->line[sizeof out->line - 1] = '\0';
    out->code = error_exit_code(err);
}

/* "rank R: <line>", "rank R on HOST: <line>" once the job spans hosts. */
static void say_rank(const Coll *c, int rank, const char *line)
{
    char who[COLL_HOST_NAME + 32];
    coll_rank_name(c, rank, who, sizeof who);
    fprintf(stderr, "%s: %s", who, line);
}

/* Called on every rank once all know that some failed.  The lowest failing
 * rank's message is compared with the others': when every rank failed with
 * it, rank 0 says it once; otherwise each failing rank says its own. */
static int report(Coll *c, bool ok, const Error *err)
{
    int rank = coll_rank(c), world = coll_world(c);
    Failure mine = { .code = 0 }, first;
    if (!ok)
        describe(err, &mine);
    int64_t lowest = ok ? world : rank;
    coll_allreduce_i64(c, &lowest, 1, COLL_MIN);
    first = mine;
    coll_bcast(c, &first, sizeof first, (int)lowest);
    int64_t differs = ok || strcmp(mine.line, first.line) != 0;
    coll_allreduce_i64(c, &differs, 1, COLL_SUM);
    if (differs == 0 && rank == 0)
        fputs(first.line, stderr);
    else if (differs != 0 && !ok)
        say_rank(c, rank, mine.line);
    return (int)first.code;
}

int fail_settle(Coll *c, bool ok, const Error *err)
{
    if (coll_all_ok(c, ok))
        return 0;
    return report(c, ok, err);
}

int fail_settle_run(Coll *c, bool ok, const Error *err)
{
    bool agreed = true;
    bool all = coll_agree(c, ok, COLL_AGREE_SECONDS, &agreed);
    if (!agreed) {
        Failure mine;
        describe(err, &mine);
        say_rank(c, coll_rank(c), mine.line);
        coll_abort(c, (int)mine.code);
    }
    return all ? 0 : report(c, ok, err);
}

void fail_unless(Coll *c, bool ok, const Error *err)
{
    int code = fail_settle(c, ok, err);
    if (code)
        coll_finish(c, code);
}

void fail_unless_run(Coll *c, bool ok, const Error *err)
{
    int code = fail_settle_run(c, ok, err);
    if (code)
        coll_finish(c, code);
}

void fail_all(Coll *c, const Error *err)
{
    if (coll_rank(c) == 0)
        error_print(err, stderr);
    coll_finish(c, error_exit_code(err));
}

void fail_usage(Coll *c, const char *tool, const char *msg)
{
    if (coll_rank(c) == 0)
        fprintf(stderr, "%s: %s\n", tool, msg);
    coll_finish(c, 2);
}
