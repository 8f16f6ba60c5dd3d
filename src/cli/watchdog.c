/* watchdog.c: the timer of watchdog.h.  The handler runs on SIGALRM, maybe
 * inside a blocking MPI call, so it uses only write(2) and _exit(2): the
 * message is put together from strings that already exist (the current
 * instruction's name and opcode name, kept by the interpreter). */
#include "watchdog.h"

#include "interp.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static char prefix[320];
static bool plain;          /* the message is prefix alone (MPI start-up: no instruction yet) */
static char line[1024];
static size_t len;

/* Appends to line: one write(2) at the end, so that mpirun, ending the
 * other ranks when the first exits, cannot cut a message in half. */
static void put(const char *s)
{
    while (*s && len + 1 < sizeof line)
        line[len++] = *s++;
}

static void put_int(long v)
{
    char buf[24];
    int i = (int)sizeof buf - 1;
    buf[i] = 0;
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0 && i > 0);
    put(buf + i);
}

static void on_alarm(int sig)
{
    (void)sig;
    len = 0;
    put(prefix);
    const IrInstr *x = plain ? NULL : interp_current_instr();
    if (plain) {
    } else if (x) {
        put(", in instruction ");
        put(x->name ? x->name : "?");
        put(" (");
        put(ir_opcode_name(x->op));
        put(")");
        if (x->info && x->info->loc.line > 0) {
            put(" at line ");
            put_int(x->info->loc.line);
        }
    } else {
        put(", not inside an instruction (before the run, or done and waiting for the other ranks)");
    }
    put("\n");
    ssize_t w = write(2, line, len);
    (void)w;
    _exit(3);
}

/* SIGALRM to on_alarm after seconds of wall time (0: disarmed). */
static void arm(double seconds)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = seconds > 0 ? on_alarm : SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval t = { 0 };
    t.it_value.tv_sec = (time_t)seconds;
    t.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
    setitimer(ITIMER_REAL, &t, NULL);
}

void watchdog_start(const char *tool, const char *who, double seconds)
{
    if (!(seconds > 0))
        return;
    snprintf(prefix, sizeof prefix, "%s: %s: --timeout %g s passed", tool, who, seconds);
    plain = false;
    arm(seconds);
}

void watchdog_start_mpi_init(const char *tool)
{
    const char *env = getenv("HLOCHECK_MPI_INIT_TIMEOUT");
    double secs = env && *env ? strtod(env, NULL) : 120;
    if (!(secs > 0))
        secs = 120;
    snprintf(prefix, sizeof prefix, "%s: error: MPI start-up (MPI_Init) did not finish within %g s: the launcher "
             "or a peer rank is not answering (HLOCHECK_MPI_INIT_TIMEOUT sets the limit)", tool, secs);
    plain = true;
    arm(secs);
}

void watchdog_stop(void)
{
    arm(0);
    plain = false;
}
