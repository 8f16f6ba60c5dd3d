/* parallel.c: the pool of parallel.h.
 *
 * The calling thread is chunk 0; worker w (1-based) runs chunk w.  A job is
 * published under the pool's mutex with a new generation number and the
 * workers are woken by one broadcast; each worker that has a chunk runs it
 * outside the lock and counts itself done under the lock, and the last one
 * wakes the caller.  The job's fields change only while no worker has a
 * chunk left to run, so a worker always reads the job of the generation it
 * saw.  A second thread calling parallel_for while a job runs (none does
 * today) runs its job inline instead of waiting. */
#include "parallel.h"

#include "eval.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Pool {
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    pthread_t workers[PARALLEL_MAX_THREADS];
    int n_workers;              /* started; grows, never shrinks until exit */
    uint64_t generation;        /* of the job below */
    bool stop;
    ParallelFn fn;
    void *ctx;
    int64_t n, quantum;
    int chunks;
    int pending;                /* workers with a chunk still running */
} Pool;

static Pool pool = { .mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
                     .done = PTHREAD_COND_INITIALIZER };
static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;     /* held by the thread running a job */
static _Thread_local bool in_job;                            /* this thread runs a chunk now */
static int n_threads;                                        /* 0: not set yet */
static int64_t min_bytes = -1;                               /* per thread; -1: not read yet */

/* The tools set the count at start-up, before drawing inputs: OpenBLAS is
 * pinned to one thread then too (the pool splits products itself), so its
 * idle workers stop taking a core from the start (eval_dot.c). */
void interp_set_threads(int n)
{
    n_threads = n < 1 ? 1 : n > PARALLEL_MAX_THREADS ? PARALLEL_MAX_THREADS : n;
    eval_blas_single_thread();
}

/* Unless a tool set it, HLOCHECK_THREADS (for programs without a --threads
 * flag, such as the unit tests), else 1. */
int interp_threads(void)
{
    if (n_threads == 0) {
        const char *e = getenv("HLOCHECK_THREADS");
        interp_set_threads(e ? atoi(e) : 1);
    }
    return n_threads;
}

static int64_t par_min_bytes(void)
{
    if (min_bytes < 0) {
        const char *e = getenv("HLOCHECK_PAR_MIN");
        char *end;
        long long v = e ? strtoll(e, &end, 10) : -1;
        min_bytes = e && *e && !*end && v >= 1 ? (int64_t)v : PARALLEL_MIN_BYTES;
    }
    return min_bytes;
}

int parallel_chunks(int64_t n, int64_t bytes_per_item)
{
    if (in_job || n < 2 || interp_threads() <= 1)
        return 1;
    if (bytes_per_item < 1)
        bytes_per_item = 1;
    int64_t per = par_min_bytes();
    int64_t t = n > INT64_MAX / bytes_per_item ? n_threads : n * bytes_per_item / per;
    if (t > n_threads)
        t = n_threads;
    if (t > n)
        t = n;
    return t < 1 ? 1 : (int)t;
}

/* Chunk c of the current job: [*begin, *end), possibly empty. */
static void chunk_range(int64_t n, int64_t quantum, int chunks, int c, int64_t *begin, int64_t *end)
{
    int64_t units = (n + quantum - 1) / quantum;
    *begin = units * c / chunks * quantum;
    *end = units * (c + 1) / chunks * quantum;
    if (*begin > n)
        *begin = n;
    if (*end > n)
        *end = n;
}

static void run_chunk(ParallelFn fn, void *ctx, int64_t n, int64_t quantum, int chunks, int c)
{
    int64_t b, e;
    chunk_range(n, quantum, chunks, c, &b, &e);
    if (b < e) {
        in_job = true;
        fn(ctx, b, e);
        in_job = false;
    }
}

static void *worker_main(void *arg)
{
    int id = (int)(intptr_t)arg;
    uint64_t seen = 0;
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        while (!pool.stop && (pool.generation == seen || id >= pool.chunks)) {
            seen = pool.generation;
            pthread_cond_wait(&pool.wake, &pool.mu);
        }
        if (pool.stop)
            break;
        seen = pool.generation;
        ParallelFn fn = pool.fn;
        void *ctx = pool.ctx;
        int64_t n = pool.n, quantum = pool.quantum;
        int chunks = pool.chunks;
        pthread_mutex_unlock(&pool.mu);
        run_chunk(fn, ctx, n, quantum, chunks, id);
        pthread_mutex_lock(&pool.mu);
        if (--pool.pending == 0)
            pthread_cond_signal(&pool.done);
    }
    pthread_mutex_unlock(&pool.mu);
    return NULL;
}

/* At exit: the workers leave their loop and are joined, so no thread
 * outlives the process's own teardown. */
static void pool_stop(void)
{
    pthread_mutex_lock(&pool.mu);
    pool.stop = true;
    pthread_cond_broadcast(&pool.wake);
    int n = pool.n_workers;
    pthread_mutex_unlock(&pool.mu);
    for (int i = 0; i < n; i++)
        pthread_join(pool.workers[i], NULL);
}

/* A child of fork() has none of the workers: it starts with an empty pool
 * (hlo-fuzz runs passes in children), its locks as new. */
static void pool_forget_after_fork(void)
{
    pool.n_workers = 0;
    pool.pending = 0;
    pool.chunks = 0;        /* a worker started here must not take the parent's last job for a new one */
    pthread_mutex_init(&pool.mu, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done, NULL);
    pthread_mutex_init(&busy, NULL);
}

/* Starts workers until workers 1 .. want-1 exist (the caller holds busy,
 * not pool.mu); returns how many threads a job may use, the caller's
 * included. */
static int pool_grow(int want)
{
    static bool registered;
    if (!registered) {
        registered = true;
        atexit(pool_stop);
        pthread_atfork(NULL, NULL, pool_forget_after_fork);
    }
    while (pool.n_workers < want - 1) {
        int id = pool.n_workers + 1;
        if (pthread_create(&pool.workers[pool.n_workers], NULL, worker_main, (void *)(intptr_t)id) != 0)
            break;
        pthread_mutex_lock(&pool.mu);
        pool.n_workers++;
        pthread_mutex_unlock(&pool.mu);
    }
    return pool.n_workers + 1;
}

void parallel_for(int64_t n, int64_t bytes_per_item, int64_t quantum, ParallelFn fn, void *ctx)
{
    if (n <= 0)
        return;
    if (quantum < 1)
        quantum = 1;
    int chunks = parallel_chunks(n, bytes_per_item);
    int64_t units = (n + quantum - 1) / quantum;
    if (chunks > units)
        chunks = (int)units;
    if (chunks <= 1 || pthread_mutex_trylock(&busy) != 0) {
        fn(ctx, 0, n);
        return;
    }
    if (pool_grow(chunks) < chunks) {          /* no threads to be had: the same split, inline */
        for (int c = 0; c < chunks; c++)
            run_chunk(fn, ctx, n, quantum, chunks, c);
        pthread_mutex_unlock(&busy);
        return;
    }
    pthread_mutex_lock(&pool.mu);
    pool.fn = fn;
    pool.ctx = ctx;
    pool.n = n;
    pool.quantum = quantum;
    pool.chunks = chunks;
    pool.pending = chunks - 1;
    pool.generation++;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    run_chunk(fn, ctx, n, quantum, chunks, 0);
    pthread_mutex_lock(&pool.mu);
    while (pool.pending > 0)
        pthread_cond_wait(&pool.done, &pool.mu);
    pthread_mutex_unlock(&pool.mu);
    pthread_mutex_unlock(&busy);
}

typedef struct CopyJob {
    char *dst;
    const char *src;
} CopyJob;

static void copy_chunk(void *ctx, int64_t begin, int64_t end)
{
    CopyJob *j = ctx;
    memcpy(j->dst + begin, j->src + begin, (size_t)(end - begin));
}

void parallel_memcpy(void *dst, const void *src, int64_t bytes)
{
    CopyJob j = { dst, src };
    parallel_for(bytes, 2, 4096, copy_chunk, &j);
}
