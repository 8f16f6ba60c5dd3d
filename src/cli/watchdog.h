/* watchdog.h: --timeout S of hlo-run and hlo-check.  Every rank arms its
 * own timer at start-up; when it fires the rank says which instruction it
 * was in (a while loop that never ends, a collective a peer never joins)
 * and exits 3, and mpirun ends the rest of the job. */
#ifndef WATCHDOG_H
#define WATCHDOG_H

/* Arms the timer: after `seconds` (> 0) of wall time the process prints
 * "<tool>: <who>: --timeout <seconds> s passed, in instruction ..." and
 * exits 3; who names the rank ("rank 2", or "rank 2 on HOST" across
 * hosts: coll_rank_name). */
void watchdog_start(const char *tool, const char *who, double seconds);
/* The same timer around MPI start-up: MPI_Init waiting for a launcher or a
 * peer that is gone (a stalled daemon, a network probe that hangs) would
 * hold the tool, and the job, forever.  After HLOCHECK_MPI_INIT_TIMEOUT
 * seconds (default 120; start-up takes 0.03 s alone, well under a second
 * under mpirun) "<tool>: error: MPI start-up (MPI_Init) did not finish
 * ..." and exit 3.  watchdog_stop disarms either. */
void watchdog_start_mpi_init(const char *tool);
void watchdog_stop(void);

#endif /* WATCHDOG_H */
