/* bench.h: what the benchmark programs share: a clock, the report line, and
 * reading a file.  Every measurement prints one line
 *
 *     name: ours X, limit Y, ratio R (target T)
 *
 * where the limit was measured in the same run (memcpy, raw OpenBLAS, raw
 * MPI) or is a fixed budget, and T is the design target ("none" for lines
 * that only inform).  scripts/bench.sh reads the lines back for its summary.
 * Nothing here asserts: a benchmark reports, and exits 0 unless it crashes. */
#ifndef BENCH_H
#define BENCH_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* cmp is ">=" or "<=" (ratio against target), or NULL for an informative
 * line.  ours and limit are already formatted with their units. */
static inline void bench_line(const char *name, const char *ours, const char *limit, double ratio,
                              const char *cmp, double target)
{
    if (cmp)
        printf("%s: ours %s, limit %s, ratio %.3f (target %s %.2f)\n", name, ours, limit, ratio, cmp, target);
    else
        printf("%s: ours %s, limit %s, ratio %.3f (target none)\n", name, ours, limit, ratio);
    fflush(stdout);
}

/* A note under the measurements (what was run, why a ratio is what it is). */
static inline void bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void bench_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("  note: ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    fflush(stdout);
}

/* The whole file, NUL-terminated; NULL (with a message) when unreadable. */
static inline char *bench_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "bench: cannot open %s\n", path);
        return NULL;
    }
    size_t cap = 1 << 20, n = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0)
        if ((n += got) == cap) {
            char *more = realloc(buf, 2 * cap + 1);
            if (!more) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = more;
            cap *= 2;
        }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "bench: out of memory reading %s\n", path);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

#endif /* BENCH_H */
