/* child.c: the passes run in a child process of rank 0, so that a crash
 * or a hang in a pass is a finding and not the end of the run.  The child
 * writes a status byte, the rewrite count, the error message and the
 * module it left (also when invalid: it is evidence) to a pipe; rank 0
 * reads it with a deadline, kills a child that overruns it, and broadcasts
 * the outcome to every rank. */
#include "fuzz_internal.h"
#include "coll.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* make fuzz-coverage builds the passes with gcov counters; a child that
 * ends with _exit would take its counts with it, so it writes them first.
 * (A child killed on its deadline loses them: a hung pass is a finding.) */
#ifdef HLOCHECK_COVERAGE
void __gcov_dump(void);
#define COVERAGE_DUMP() __gcov_dump()
#else
#define COVERAGE_DUMP() ((void)0)
#endif

static void write_all(int fd, const void *p, size_t n)
{
    const char *s = p;
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            COVERAGE_DUMP();
            _exit(4);
        }
        s += w;
        n -= (size_t)w;
    }
}

__attribute__((noreturn)) static void child(int fd, const IrModule *m, const Pass *const *passes, int n,
                                            const PassOptions *opt)
{
    Error err = { 0 };
    IrModule *c = ir_module_copy(m, &err);
    PipelineStats stats;
    bool changed = false;
    char status = 'F';
    StrBuf sb;
    strbuf_init(&sb);
    memset(&stats, 0, sizeof stats);
    if (c && pass_run_pipeline(c, passes, n, opt, &stats, &changed, &err))
        status = changed ? 'C' : 'U';
    if (c)                              /* also when the pass failed: the invalid module is evidence */
        ir_print_module(&sb, c);
    long fired = stats.stats[0].fired;
    int64_t msg_len = status == 'F' ? (int64_t)strlen(err.msg) : 0;
    write_all(fd, &status, 1);
    write_all(fd, &fired, sizeof fired);
    write_all(fd, &msg_len, sizeof msg_len);
    write_all(fd, err.msg, (size_t)msg_len);
    write_all(fd, sb.s ? sb.s : "", sb.len);
    close(fd);
    COVERAGE_DUMP();
    _exit(0);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run_pass_rank0(const IrModule *m, const Pass *const *passes, int n, const PassOptions *opt, double timeout,
                           PassRun *out)
{
    memset(out, 0, sizeof *out);
    int fds[2];
    if (pipe(fds) != 0) {
        out->status = RUN_FAILED;
        out->msg = xstrdup("hlo-fuzz: pipe failed");
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit none = { 0, 0 };  /* a crashing pass leaves no core file behind */
        setrlimit(RLIMIT_CORE, &none);
        close(fds[0]);
        child(fds[1], m, passes, n, opt);
    }
    close(fds[1]);
    StrBuf sb;
    strbuf_init(&sb);
    double deadline = now() + timeout;
    bool hung = false;
    for (;;) {
        int left = (int)((deadline - now()) * 1000);
        if (left <= 0) {
            hung = true;
            break;
        }
        struct pollfd p = { .fd = fds[0], .events = POLLIN };
        int k = poll(&p, 1, left);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            hung = k == 0;
            break;
        }
        char buf[65536];
        ssize_t got = read(fds[0], buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        strbuf_putn(&sb, buf, (size_t)got);
    }
    close(fds[0]);
    if (hung)
        kill(pid, SIGKILL);
    int st = 0;
    waitpid(pid, &st, 0);
    if (hung) {
        out->status = RUN_HUNG;
    } else if (WIFSIGNALED(st) || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
               sb.len < 1 + sizeof(long) + sizeof(int64_t)) {
        out->status = RUN_CRASHED;
        char msg[128];
        snprintf(msg, sizeof msg, "the pass crashed (%s %d)", WIFSIGNALED(st) ? "signal" : "exit status",
                 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        out->msg = xstrdup(msg);
    } else {
        char s = sb.s[0];
        int64_t msg_len;
        memcpy(&out->fired, sb.s + 1, sizeof(long));
        memcpy(&msg_len, sb.s + 1 + sizeof(long), sizeof msg_len);
        out->status = s == 'C' ? RUN_CHANGED : s == 'U' ? RUN_UNCHANGED : RUN_FAILED;
        size_t off = 1 + sizeof(long) + sizeof msg_len;
        if (msg_len < 0 || (size_t)msg_len > sb.len - off)
            msg_len = 0;
        out->msg = xmalloc((size_t)msg_len + 1);
        memcpy(out->msg, sb.s + off, (size_t)msg_len);
        out->msg[msg_len] = 0;
        off += (size_t)msg_len;
        out->len = sb.len - off;
        out->text = xmalloc(out->len + 1);
        memcpy(out->text, sb.s + off, out->len);
        out->text[out->len] = 0;
    }
    strbuf_free(&sb);
}

void fuzz_run_pass(Coll *c, const IrModule *m, const Pass *const *passes, int n, const PassOptions *opt,
                     double timeout, PassRun *out)
{
    memset(out, 0, sizeof *out);
    if (coll_rank(c) == 0)
        run_pass_rank0(m, passes, n, opt, timeout, out);
    int64_t head[4] = { out->status, (int64_t)out->len, out->fired, out->msg ? (int64_t)strlen(out->msg) : 0 };
    coll_bcast(c, head, sizeof head, 0);
    out->status = (PassStatus)head[0];
    out->len = (size_t)head[1];
    out->fired = head[2];
    if (coll_rank(c) != 0 || !out->text) {
        free(out->text);
        out->text = xcalloc(out->len + 1, 1);
    }
    if (coll_rank(c) != 0 || !out->msg) {
        free(out->msg);
        out->msg = xcalloc((size_t)head[3] + 1, 1);
    }
    if (out->len)
        coll_bcast(c, out->text, out->len, 0);
    if (head[3])
        coll_bcast(c, out->msg, (size_t)head[3], 0);
}

