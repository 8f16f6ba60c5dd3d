/* fail.h: how the ranks of a tool's job stop on an error, one protocol for
 * hlo-run and hlo-check.  An error every rank meets alike is said once, by
 * rank 0; one that only some ranks meet is said by each of them, prefixed
 * "rank R: "; a rank that fails while the others may be waiting for it in a
 * collective waits COLL_AGREE_SECONDS for them to answer, then says its
 * error and aborts the job.  Every rank ends with the same exit status: the
 * lowest failing rank's (error_exit_code). */
#ifndef FAIL_H
#define FAIL_H

#include "coll.h"
#include "ir.h"

/* Collective, after a step with no collective inside (parsing, reading
 * inputs, a write on rank 0): 0 when ok on every rank; else the exit status,
 * the error said as above.  err is read on the ranks where ok is false. */
int fail_settle(Coll *c, bool ok, const Error *err);
/* The same after a step with collectives inside, where a failed rank cannot
 * know whether the others are blocked in a collective that waits for it:
 * when they do not all answer within COLL_AGREE_SECONDS, this rank says
 * its error and aborts the job (coll_abort). */
int fail_settle_run(Coll *c, bool ok, const Error *err);
/* fail_settle, then the job ends (coll_finish) with the status when some
 * rank failed. */
void fail_unless(Coll *c, bool ok, const Error *err);
/* fail_settle_run, then the same. */
void fail_unless_run(Coll *c, bool ok, const Error *err);
/* Not collective: an error every rank has met alike, at the same point
 * (each read the same file, parsed the same flags): rank 0 says it and the
 * job ends with its status. */
void fail_all(Coll *c, const Error *err) __attribute__((noreturn));
/* Not collective, alike on every rank: "<tool>: <msg>" on rank 0, exit 2. */
void fail_usage(Coll *c, const char *tool, const char *msg) __attribute__((noreturn));

#endif /* FAIL_H */
