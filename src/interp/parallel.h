/* parallel.h: threads inside one rank.  A process-wide thread count (1
 * unless a tool sets it) and a "parallel for" over [0, n) in contiguous
 * chunks, run by a small persistent pool of pthreads.
 *
 * Same bits at any thread count: a kernel may only split work whose pieces
 * write disjoint outputs and compute each output exactly as the whole
 * kernel would (element-wise ops, copies, reductions split over their
 * output elements).  The split itself is a pure function of n, the thread
 * count and the grain, so a run is reproducible at a given count, and a
 * kernel that obeys the rule gives the same bits at every count.
 *
 * The pool starts on the first job that is worth splitting; a process that
 * never raises the count above 1 never starts a thread.  Jobs run inline when
 * the work is small (below HLOCHECK_PAR_MIN bytes per thread, default
 * PARALLEL_MIN_BYTES), when the count is 1, and inside a job (no nesting). */
#ifndef INTERP_PARALLEL_H
#define INTERP_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

/* Work below this many bytes per thread stays on one thread.  Measured on
 * the 2-core bench machine: an empty two-chunk job costs ~5 us (waking a
 * worker and waiting for it), which a kernel moving DRAM-resident data at
 * ~20 GB/s per core earns back from ~100 KiB per thread; compute-bound
 * kernels (narrow floats, converts) earn it back sooner, copies of data
 * already in cache only from a few MiB.  256 KiB sits between. */
#define PARALLEL_MIN_BYTES ((int64_t)256 << 10)

/* The count kernels may use from now on (n < 1 means 1; at most
 * PARALLEL_MAX_THREADS); until a program sets it, HLOCHECK_THREADS in the
 * environment or 1.  Also OpenBLAS's count for calls outside the
 * pool: eval_dot.c keeps OpenBLAS itself on one thread (its own threading
 * is not bitwise reproducible across counts) and splits in the pool. */
#define PARALLEL_MAX_THREADS 256
void interp_set_threads(int n);
int interp_threads(void);

/* fn(ctx, begin, end) over contiguous chunks covering [0, n), their ends
 * multiples of `quantum` (>= 1) except the last; at most one chunk per
 * thread.  bytes_per_item estimates
 * the memory traffic of one item, which decides how many threads the job
 * is worth.  Returns when every chunk is done; the calling thread runs one. */
typedef void (*ParallelFn)(void *ctx, int64_t begin, int64_t end);
void parallel_for(int64_t n, int64_t bytes_per_item, int64_t quantum, ParallelFn fn, void *ctx);

/* How many chunks parallel_for(n, bytes_per_item, ...) would use: 1 means
 * it runs inline.  For kernels that choose between two ways to split. */
int parallel_chunks(int64_t n, int64_t bytes_per_item);

/* memcpy split over the pool (a copy is the same at any split). */
void parallel_memcpy(void *dst, const void *src, int64_t bytes);

#endif /* INTERP_PARALLEL_H */
