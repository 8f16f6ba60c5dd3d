/* bench_kernels.c: single-process benchmarks of the parser and of the
 * interpreter's kernels, each against a limit measured in the same run.
 *
 *     bench_kernels proto SMALL LARGE  read each as an HloModuleProto vs as text
 *     bench_kernels parse FILE    parse, verify and print FILE (a big generated
 *                                 module); limit: 100 MB in 10 s
 *     bench_kernels memory        elementwise and data-movement kernels on
 *                                 16M-element arrays vs memcpy of the same bytes
 *     bench_kernels dot           dot vs raw cblas_sgemm on the same shapes, and a
 *                                 3x3 convolution vs one sgemm over its im2col matrix
 *     bench_kernels conv          that convolution alone
 *     bench_kernels threads N     the big kernels at 1 thread and at N threads
 *                                 (interp_set_threads), each against memcpy
 *                                 or sgemm run with the same threads, and
 *                                 the speed-up beside memcpy's own
 *
 * A kernel is timed as the interpreter runs it for a user: a one-instruction
 * module is parsed, verified and prepared once (interp_new), its inputs are
 * drawn once (check_random_input), and interp_run is timed, one warm-up and
 * then the best of several runs, alternating with the limit's runs so that
 * both see the same machine.  Each run allocates its own result, as
 * every run of the interpreter does.  memcpy is timed on buffers that are
 * already paged in. */
#include "check.h"
#include "interp.h"
#include "parallel.h"

#include "bench.h"

#include <cblas.h>
#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>

/* OpenBLAS's own, as eval_dot.c uses them; declared here in case cblas.h is netlib's. */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

#define MIB ((size_t)1 << 20)

/* ------------------------------------------------------------------ */
/* A one-instruction module, ready to run                              */

typedef struct Kernel {
    IrModule *m;
    Interp *it;
    Value *params[4];
    int n_params;
} Kernel;

static bool kernel_new(Kernel *k, const char *text)
{
    Error err = { .code = ERR_OK };
    memset(k, 0, sizeof *k);
    k->m = ir_parse_module(text, strlen(text), "bench", &err);
    if (!k->m || !ir_verify_module(k->m, &err)) {
        error_print(&err, stderr);
        return false;
    }
    InterpOptions io = { .device = { 0, 1, 1, 1 } };
    k->it = interp_new(k->m, &io, &err);
    k->n_params = k->m->entry->n_params;
    if (k->it)
        for (int p = 0; p < k->n_params && p < 4; p++)
            if (!(k->params[p] = check_random_input(k->m, p, 0, 1, CHECK_DIST_UNIFORM, &err)))
                break;
    if (err.code != ERR_OK) {
        error_print(&err, stderr);
        return false;
    }
    return true;
}

static void kernel_free(Kernel *k)
{
    for (int p = 0; p < k->n_params && p < 4; p++)
        value_release(k->params[p]);
    interp_free(k->it);
    ir_module_free(k->m);
}

/* One run: seconds, or -1 on error. */
static double kernel_once(Kernel *k)
{
    Error err = { .code = ERR_OK };
    Value *result = NULL;
    for (int p = 0; p < k->n_params; p++)
        value_retain(k->params[p]);     /* interp_run takes one reference each */
    double t0 = bench_now();
    bool ok = interp_run(k->it, k->params, k->n_params, &result, &err);
    value_release(result);
    double t = bench_now() - t0;
    if (!ok) {
        error_print(&err, stderr);
        return -1;
    }
    return t;
}

/* ------------------------------------------------------------------ */
/* parse                                                                */

static int bench_parse(const char *path)
{
    size_t len = 0;
    char *text = bench_read_file(path, &len);
    if (!text)
        return 1;
    double mb = (double)len / 1e6;
    Error err = { .code = ERR_OK };
    double t0 = bench_now();
    IrModule *m = ir_parse_module(text, len, path, &err);
    double t_parse = bench_now() - t0;
    if (!m) {
        error_print(&err, stderr);
        free(text);
        return 1;
    }
    t0 = bench_now();
    bool ok = ir_verify_module(m, &err);
    double t_verify = bench_now() - t0;
    if (!ok)
        error_print(&err, stderr);
    StrBuf b;
    strbuf_init(&b);
    t0 = bench_now();
    ir_print_module(&b, m);
    double t_print = bench_now() - t0;
    long n_instrs = 0;
    for (int c = 0; c < m->n_computations; c++)
        n_instrs += m->computations[c]->n_instrs;

    /* The budget: a 100 MB dump in seconds, not minutes; 10 s for 100 MB. */
    double limit = 10.0 * mb / 100.0;
    char ours[128], lim[64], name[128];
    snprintf(lim, sizeof lim, "%.2f s (100 MB in 10 s)", limit);
    snprintf(name, sizeof name, "parse %.0f MB module (%ld instructions)", mb, n_instrs);
    snprintf(ours, sizeof ours, "%.2f s (%.1f MB/s)", t_parse, mb / t_parse);
    bench_line(name, ours, lim, t_parse / limit, "<=", 1.0);
    snprintf(name, sizeof name, "verify %.0f MB module", mb);
    snprintf(ours, sizeof ours, "%.2f s (%.1f MB/s)", t_verify, mb / t_verify);
    bench_line(name, ours, lim, t_verify / limit, NULL, 0);
    snprintf(name, sizeof name, "print %.0f MB module", mb);
    snprintf(ours, sizeof ours, "%.2f s (%.1f MB/s, %.0f MB out)", t_print, mb / t_print, (double)b.len / 1e6);
    bench_line(name, ours, lim, t_print / limit, NULL, 0);
    strbuf_free(&b);
    ir_module_free(m);
    free(text);
    return 0;
}

/* ------------------------------------------------------------------ */
/* proto: reading a module as an HloModuleProto vs as text               */

/* Seconds to read the bytes of a file already in memory as a module (best
 * of 2), and the module's instruction count. */
static double read_seconds(const char *bytes, size_t len, const char *name, bool proto, long *n_instrs)
{
    double best = 1e30;
    for (int rep = 0; rep < 2; rep++) {
        Error err = { .code = ERR_OK };
        double t0 = bench_now();
        IrModule *m = proto ? ir_parse_proto(bytes, len, name, &err) : ir_parse_module(bytes, len, name, &err);
        double t = bench_now() - t0;
        if (!m) {
            error_print(&err, stderr);
            return -1;
        }
        *n_instrs = 0;
        for (int c = 0; c < m->n_computations; c++)
            *n_instrs += m->computations[c]->n_instrs;
        ir_module_free(m);
        best = t < best ? t : best;
    }
    return best;
}

/* bench_kernels proto SMALL.hlo LARGE.hlo: each module written as a proto
 * (ir_proto_write), then read from memory as that proto and as its text;
 * the proto's read against the text's (target <= 1), and how the proto's
 * read grows from the small module to the large one against their sizes
 * (linear: target <= 1.2). */
static int bench_proto(const char *small, const char *large)
{
    double t_proto[2] = { 0 }, mb[2] = { 0 };
    const char *paths[2] = { small, large };
    for (int k = 0; k < 2; k++) {
        size_t len = 0;
        char *text = bench_read_file(paths[k], &len);
        if (!text)
            return 1;
        Error err = { .code = ERR_OK };
        IrModule *m = ir_parse_module(text, len, paths[k], &err);
        StrBuf pb;
        strbuf_init(&pb);
        double t0 = bench_now();
        bool ok = m && ir_proto_write(&pb, m, NULL, &err);
        double t_write = bench_now() - t0;
        ir_module_free(m);
        if (!ok) {
            error_print(&err, stderr);
            return 1;
        }
        long n = 0;
        double t_text = read_seconds(text, len, paths[k], false, &n);
        t_proto[k] = read_seconds(pb.s, pb.len, paths[k], true, &n);
        if (t_text < 0 || t_proto[k] < 0)
            return 1;
        mb[k] = (double)pb.len / 1e6;
        char name[160], ours[96], lim[96];
        snprintf(name, sizeof name, "read a %.0f MB HloModuleProto (%.0f MB of text, %ld instructions)", mb[k],
                 (double)len / 1e6, n);
        snprintf(ours, sizeof ours, "%.2f s", t_proto[k]);
        snprintf(lim, sizeof lim, "%.2f s (the same module read as text)", t_text);
        bench_line(name, ours, lim, t_proto[k] / t_text, "<=", 1.0);
        snprintf(name, sizeof name, "write a %.0f MB HloModuleProto", mb[k]);
        snprintf(ours, sizeof ours, "%.2f s", t_write);
        bench_line(name, ours, lim, t_write / t_text, NULL, 0);
        strbuf_free(&pb);
        free(text);
    }
    char name[160], ours[96], lim[96];
    snprintf(name, sizeof name, "proto read time, %.0f MB -> %.0f MB", mb[0], mb[1]);
    snprintf(ours, sizeof ours, "x%.2f", t_proto[1] / t_proto[0]);
    snprintf(lim, sizeof lim, "x%.2f (the sizes' ratio)", mb[1] / mb[0]);
    bench_line(name, ours, lim, (t_proto[1] / t_proto[0]) / (mb[1] / mb[0]), "<=", 1.2);
    return 0;
}

/* ------------------------------------------------------------------ */
/* memory: elementwise and data movement vs memcpy                      */

static char *copy_src, *copy_dst;
static volatile char sink;
static size_t copy_cap;

/* Best of reps memcpy of n bytes between paged-in buffers: seconds. */
static double memcpy_best(size_t n, int reps)
{
    double best = 1e30;
    memcpy(copy_dst, copy_src, n);
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        memcpy(copy_dst, copy_src, n);
        double t = bench_now() - t0;
        if (t < best)
            best = t;
    }
    return best;
}

/* memcpy into a buffer freshly taken from malloc (not yet paged in), as a
 * kernel's result is: what first touching the pages costs. */
static double memcpy_fresh_best(size_t n, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        char *dst = malloc(n);
        double t0 = bench_now();
        memcpy(dst, copy_src, n);
        double t = bench_now() - t0;
        sink += dst[n / 2];     /* keeps the copy from being optimised away */
        free(dst);
        if (t < best)
            best = t;
    }
    return best;
}

typedef struct MemCase {
    const char *name;
    const char *text;
    double traffic;         /* bytes read + bytes written by the kernel */
    bool informative;       /* no target */
    double target;          /* the ratio to reach, when not 0.7 */
} MemCase;

#define N16M "16777216"
#define ELEMENTWISE(T, OP)                                                                   \
    "HloModule k\nENTRY e {\n  a = " T "[" N16M "] parameter(0)\n  b = " T "[" N16M          \
    "] parameter(1)\n  ROOT c = " T "[" N16M "] " OP "(a, b)\n}\n"

#define CONVERT_F32_BF16 \
    "HloModule k\nENTRY e {\n  a = f32[" N16M "] parameter(0)\n  ROOT c = bf16[" N16M "] convert(a)\n}\n"
#define TRANSPOSE_4096                                      \
    "HloModule k\nENTRY e {\n  a = f32[4096,4096] parameter(0)\n" \
    "  ROOT c = f32[4096,4096] transpose(a), dimensions={1,0}\n}\n"
#define REDUCE_SUM_4096                                                                           \
    "HloModule k\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n" \
    "ENTRY e {\n  a = f32[4096,4096] parameter(0)\n  z = f32[] constant(0)\n"                    \
    "  ROOT c = f32[4096] reduce(a, z), dimensions={1}, to_apply=add\n}\n"

static const MemCase mem_cases[] = {
    { "elementwise f32 add [16M]", ELEMENTWISE("f32", "add"), 3.0 * 64 * MIB, false, 0 },
    { "elementwise f32 multiply [16M]", ELEMENTWISE("f32", "multiply"), 3.0 * 64 * MIB, false, 0 },
    { "elementwise bf16 add [16M]", ELEMENTWISE("bf16", "add"), 3.0 * 32 * MIB, false, 0 },
    { "convert f32->bf16 [16M]", CONVERT_F32_BF16, 96.0 * MIB, false, 0 },
    { "convert bf16->f32 [16M]",
      "HloModule k\nENTRY e {\n  a = bf16[" N16M "] parameter(0)\n  ROOT c = f32[" N16M "] convert(a)\n}\n",
      96.0 * MIB, false, 0 },
    { "transpose f32[4096,4096] {1,0}", TRANSPOSE_4096, 128.0 * MIB, false, 0 },
    { "slice f32[4096,4096] -> columns [1024:3072]",
      "HloModule k\nENTRY e {\n  a = f32[4096,4096] parameter(0)\n"
      "  ROOT c = f32[4096,2048] slice(a), slice={[0:4096], [1024:3072]}\n}\n",
      64.0 * MIB, false, 0 },
    { "slice f32[4096,4096] -> rows [1024:3072]",
      "HloModule k\nENTRY e {\n  a = f32[4096,4096] parameter(0)\n"
      "  ROOT c = f32[2048,4096] slice(a), slice={[1024:3072], [0:4096]}\n}\n",
      64.0 * MIB, false, 0 },
    { "concatenate 2 x f32[4096,2048] along dim 1",
      "HloModule k\nENTRY e {\n  a = f32[4096,2048] parameter(0)\n  b = f32[4096,2048] parameter(1)\n"
      "  ROOT c = f32[4096,4096] concatenate(a, b), dimensions={1}\n}\n",
      128.0 * MIB, false, 0 },
    { "reduce-sum f32[4096,4096] over dim 1", REDUCE_SUM_4096, 64.0 * MIB, false, 0.8 },
    { "reduce-sum f32[4096,4096] over dim 0 (strided)",
      "HloModule k\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
      "ENTRY e {\n  a = f32[4096,4096] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT c = f32[4096] reduce(a, z), dimensions={0}, to_apply=add\n}\n",
      64.0 * MIB, false, 0 },
    { "reduce-sum bf16[4096,4096] over dim 1 in f32 (convert, then reduce) (info)",
      "HloModule k\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
      "ENTRY e {\n  a = bf16[4096,4096] parameter(0)\n  w = f32[4096,4096] convert(a)\n  z = f32[] constant(0)\n"
      "  ROOT c = f32[4096] reduce(w, z), dimensions={1}, to_apply=add\n}\n",
      32.0 * MIB, true, 0 },
    { "broadcast f32[4096] -> f32[4096,4096] (info)",
      "HloModule k\nENTRY e {\n  a = f32[4096] parameter(0)\n"
      "  ROOT c = f32[4096,4096] broadcast(a), dimensions={1}\n}\n",
      64.0 * MIB, true, 0 },
};

/* reuse: malloc keeps freed memory mapped (no mmap per big buffer, no
 * trimming), so a result buffer is memory a previous run already touched;
 * the lines are then informative (they separate the allocator's cost from
 * the kernels').  only: run the cases whose name contains it (with reps
 * raised, for a profiler). */
static int bench_memory(bool reuse, const char *only, int reps)
{
    if (reuse) {
        mallopt(M_MMAP_MAX, 0);
        mallopt(M_TRIM_THRESHOLD, INT_MAX);
        mallopt(M_TOP_PAD, 64 << 20);
    }
    copy_cap = 96 * MIB;
    copy_src = malloc(copy_cap);
    copy_dst = malloc(copy_cap);
    if (!copy_src || !copy_dst) {
        fprintf(stderr, "bench: out of memory\n");
        return 1;
    }
    memset(copy_src, 1, copy_cap);     /* page both in */
    memset(copy_dst, 2, copy_cap);

    double t_paged = memcpy_best(64 * MIB, reps), t_fresh = memcpy_fresh_best(64 * MIB, reps);
    char ours[128], lim[128], name[160];
    snprintf(ours, sizeof ours, "%.2f GB/s", 2.0 * 64 * MIB / t_fresh / 1e9);
    snprintf(lim, sizeof lim, "%.2f GB/s (memcpy into paged-in memory)", 2.0 * 64 * MIB / t_paged / 1e9);
    snprintf(name, sizeof name, "memcpy 64 MiB into a buffer just taken from malloc%s (info)",
             reuse ? ", malloc reusing memory" : "");
    if (!only)
        bench_line(name, ours, lim, t_paged / t_fresh, NULL, 0);

    int failed = 0;
    for (size_t i = 0; i < sizeof mem_cases / sizeof mem_cases[0]; i++) {
        const MemCase *c = &mem_cases[i];
        if (only && !strstr(c->name, only))
            continue;
        Kernel k;
        if (!kernel_new(&k, c->text)) {
            printf("%s: skipped (could not prepare the module)\n", c->name);
            failed++;
            continue;
        }
        /* Kernel and memcpy alternate, so both see the same machine (other
         * jobs on the cores come and go); a memcpy of n bytes moves 2n. */
        size_t n = (size_t)(c->traffic / 2), chunk = n < copy_cap ? n : copy_cap;
        double t = kernel_once(&k), limit_t = 1e30;   /* warm-up */
        memcpy_best(chunk, 1);
        for (int r = 0; r < reps && t >= 0; r++) {
            double tk = kernel_once(&k), tm = memcpy_best(chunk, 1) * ((double)n / (double)chunk);
            t = tk < 0 ? tk : r == 0 || tk < t ? tk : t;
            limit_t = tm < limit_t ? tm : limit_t;
        }
        kernel_free(&k);
        if (t < 0) {
            printf("%s: skipped (the run failed)\n", c->name);
            failed++;
            continue;
        }
        double ours_bw = c->traffic / t / 1e9, limit_bw = c->traffic / limit_t / 1e9;
        snprintf(ours, sizeof ours, "%.2f GB/s (%.1f ms)", ours_bw, t * 1e3);
        snprintf(lim, sizeof lim, "%.2f GB/s (memcpy of the same %.0f MiB traffic)", limit_bw, c->traffic / MIB);
        snprintf(name, sizeof name, "%s%s", c->name, reuse ? " [malloc reusing memory, info]" : "");
        bench_line(name, ours, lim, ours_bw / limit_bw, c->informative || reuse ? NULL : ">=",
                   c->target > 0 ? c->target : 0.7);
    }
    free(copy_src);
    free(copy_dst);
    return failed ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* dot vs raw cblas_sgemm                                              */

typedef struct DotCase {
    const char *name;
    const char *text;
    int batch, m, n, k;
    bool trans_a;           /* lhs contracts its dim 0: C = A^T B */
    bool informative;
    int reps;
} DotCase;

#define DOT2(T, M, K, N, LC)                                                                      \
    "HloModule k\nENTRY e {\n  a = " T "[" #M "," #K "] parameter(0)\n  b = " T "[" #K "," #N     \
    "] parameter(1)\n  ROOT c = f32[" #M "," #N "] dot(a, b), lhs_contracting_dims={" #LC         \
    "}, rhs_contracting_dims={0}\n}\n"

static const DotCase dot_cases[] = {
    { "dot f32 512x512x512", DOT2("f32", 512, 512, 512, 1), 1, 512, 512, 512, false, false, 10 },
    { "dot f32 1024x1024x1024", DOT2("f32", 1024, 1024, 1024, 1), 1, 1024, 1024, 1024, false, false, 5 },
    { "dot f32 batch 32 x 256x256x256",
      "HloModule k\nENTRY e {\n  a = f32[32,256,256] parameter(0)\n  b = f32[32,256,256] parameter(1)\n"
      "  ROOT c = f32[32,256,256] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
      "rhs_batch_dims={0}, rhs_contracting_dims={1}\n}\n",
      32, 256, 256, 256, false, false, 5 },
    { "dot f32 1024^3, lhs contracting dim 0 (A^T B)", DOT2("f32", 1024, 1024, 1024, 0), 1, 1024, 1024, 1024,
      true, false, 5 },
    { "dot f32 2048x2048x2048", DOT2("f32", 2048, 2048, 2048, 1), 1, 2048, 2048, 2048, false, false, 3 },
    { "dot f32 4096x4096x4096", DOT2("f32", 4096, 4096, 4096, 1), 1, 4096, 4096, 4096, false, false, 2 },
    { "dot f32 1024x4096x4096 (M x N x K: cut into columns)", DOT2("f32", 1024, 4096, 4096, 1), 1, 1024, 4096, 4096,
      false, false, 3 },
    { "dot f32 4008x4x4096, lhs contracting dim 0 (a real dump's skinny weight gradient)",
      "HloModule k\nENTRY e {\n  a = f32[4096,4008] parameter(0)\n  b = f32[4096,4] parameter(1)\n"
      "  ROOT c = f32[4008,4] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n",
      1, 4008, 4, 4096, true, false, 20 },
    { "dot bf16 operands 1024^3 -> f32 vs f32 sgemm (info)",
      "HloModule k\nENTRY e {\n  a = bf16[1024,1024] parameter(0)\n  b = bf16[1024,1024] parameter(1)\n"
      "  ROOT c = f32[1024,1024] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
      1, 1024, 1024, 1024, false, true, 5 },
};

/* One raw sgemm (per batch) on the same shapes: seconds. */
static double sgemm_once(const DotCase *c, const float *a, const float *b, float *out)
{
    size_t sa = (size_t)c->m * (size_t)c->k, sb = (size_t)c->k * (size_t)c->n, sc = (size_t)c->m * (size_t)c->n;
    double t0 = bench_now();
    for (int i = 0; i < c->batch; i++)
        cblas_sgemm(CblasRowMajor, c->trans_a ? CblasTrans : CblasNoTrans, CblasNoTrans, c->m, c->n, c->k, 1.0f,
                    a + i * sa, c->trans_a ? c->m : c->k, b + i * sb, c->n, 0.0f, out + i * sc, c->n);
    return bench_now() - t0;
}

/* The best of reps after a warm-up. */
static double sgemm_best(const DotCase *c, const float *a, const float *b, float *out, int reps)
{
    double best = 1e30;
    sgemm_once(c, a, b, out);
    for (int r = 0; r < reps; r++) {
        double t = sgemm_once(c, a, b, out);
        best = t < best ? t : best;
    }
    return best;
}

static float *random_floats(size_t n)
{
    float *p = malloc(n * sizeof *p);
    uint32_t s = 12345;
    for (size_t i = 0; p && i < n; i++) {
        s = s * 1664525u + 1013904223u;
        p[i] = (float)(s >> 8) / 8388608.0f - 1.0f;
    }
    return p;
}

static int bench_conv(void);

static int bench_dot(void)
{
    size_t most = 0;        /* the largest operand or result of any case */
    for (size_t i = 0; i < sizeof dot_cases / sizeof dot_cases[0]; i++) {
        const DotCase *c = &dot_cases[i];
        size_t sizes[] = { (size_t)c->m * (size_t)c->k, (size_t)c->k * (size_t)c->n, (size_t)c->m * (size_t)c->n };
        for (int s = 0; s < 3; s++)
            most = (size_t)c->batch * sizes[s] > most ? (size_t)c->batch * sizes[s] : most;
    }
    float *a = random_floats(most), *b = random_floats(most), *out = random_floats(most);
    if (!a || !b || !out) {
        fprintf(stderr, "bench: out of memory\n");
        return 1;
    }
    char ours[128], lim[160];

    /* OpenBLAS at its default thread count, before the interpreter sets it
     * to one thread (eval_dot.c: one rank per core). */
    int default_threads = openblas_get_num_threads();
    const DotCase *big = &dot_cases[1];
    double t_default = sgemm_best(big, a, b, out, 5);
    openblas_set_num_threads(1);
    double t_one = sgemm_best(big, a, b, out, 5);
    double flops = 2.0 * big->m * big->n * big->k;
    snprintf(ours, sizeof ours, "%.1f GFLOP/s (raw sgemm, 1 thread)", flops / t_one / 1e9);
    snprintf(lim, sizeof lim, "%.1f GFLOP/s (raw sgemm, OpenBLAS default %d threads)", flops / t_default / 1e9,
             default_threads);
    bench_line("sgemm 1024^3 at 1 thread vs default threads (info: the interpreter runs BLAS on 1 thread)",
               ours, lim, t_default / t_one, NULL, 0);

    int failed = 0;
    for (size_t i = 0; i < sizeof dot_cases / sizeof dot_cases[0]; i++) {
        const DotCase *c = &dot_cases[i];
        Kernel k;
        if (!kernel_new(&k, c->text)) {
            printf("%s: skipped (could not prepare the module)\n", c->name);
            failed++;
            continue;
        }
        /* The raw call reads the interpreter's own f32 inputs where it has them. */
        const float *ra = k.params[0]->shape->type == IR_TYPE_F32 ? k.params[0]->data : a;
        const float *rb = k.params[1]->shape->type == IR_TYPE_F32 ? k.params[1]->data : b;
        /* Ours and raw alternate after a warm-up each, so both see the same machine. */
        double t = kernel_once(&k), t_raw = 1e30;
        openblas_set_num_threads(1);
        sgemm_once(c, ra, rb, out);
        for (int r = 0; r < c->reps && t >= 0; r++) {
            double tk = kernel_once(&k), tr = sgemm_once(c, ra, rb, out);
            t = tk < 0 ? tk : r == 0 || tk < t ? tk : t;
            t_raw = tr < t_raw ? tr : t_raw;
        }
        kernel_free(&k);
        if (t < 0) {
            printf("%s: skipped (the run failed)\n", c->name);
            failed++;
            continue;
        }
        double f = 2.0 * c->batch * c->m * c->n * c->k;
        snprintf(ours, sizeof ours, "%.1f GFLOP/s (%.2f ms)", f / t / 1e9, t * 1e3);
        snprintf(lim, sizeof lim, "%.1f GFLOP/s (raw cblas_sgemm%s, 1 thread)", f / t_raw / 1e9,
                 c->batch > 1 ? " per batch" : c->trans_a ? " TransA" : "");
        bench_line(c->name, ours, lim, t_raw / t, c->informative ? NULL : ">=", 0.97);
    }
    free(a);
    free(b);
    free(out);
    failed += bench_conv();
    return failed ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* convolution vs one sgemm over a ready im2col matrix                  */

enum { CONV_B = 8, CONV_HW = 56, CONV_C = 64, CONV_O = 64, CONV_REPS = 5 };

static const char conv_text[] =
    "HloModule k\nENTRY e {\n  x = f32[8,56,56,64] parameter(0)\n  k = f32[3,3,64,64] parameter(1)\n"
    "  ROOT c = f32[8,56,56,64] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}\n";

/* The im2col matrix of the NHWC input for a 3x3 window, stride 1, pad 1:
 * row (b, y, x), column (dy, dx, c), zeros where the window leaves the image. */
static void conv_im2col(const float *in, float *a)
{
    for (int b = 0; b < CONV_B; b++)
        for (int y = 0; y < CONV_HW; y++)
            for (int x = 0; x < CONV_HW; x++)
                for (int dy = 0; dy < 3; dy++)
                    for (int dx = 0; dx < 3; dx++, a += CONV_C) {
                        int sy = y + dy - 1, sx = x + dx - 1;
                        if (sy < 0 || sy >= CONV_HW || sx < 0 || sx >= CONV_HW)
                            memset(a, 0, CONV_C * sizeof *a);
                        else
                            memcpy(a, in + (((size_t)b * CONV_HW + sy) * CONV_HW + sx) * CONV_C, CONV_C * sizeof *a);
                    }
}

/* The same arithmetic as one sgemm: [B*H*W, 9C] x [9C, O] (the HWIO kernel
 * is that matrix already). */
static double conv_sgemm_once(const float *a, const float *kernel, float *out)
{
    int m = CONV_B * CONV_HW * CONV_HW, k = 9 * CONV_C;
    double t0 = bench_now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, CONV_O, k, 1.0f, a, k, kernel, CONV_O, 0.0f, out,
                CONV_O);
    return bench_now() - t0;
}

static int bench_conv(void)
{
    const char *name = "convolution f32 3x3 pad 1 [8,56,56,64] NHWC x [3,3,64,64] HWIO";
    size_t rows = (size_t)CONV_B * CONV_HW * CONV_HW;
    Kernel k;
    if (!kernel_new(&k, conv_text)) {
        printf("%s: skipped (could not prepare the module)\n", name);
        return 1;
    }
    float *a = malloc(rows * 9 * CONV_C * sizeof *a), *out = malloc(rows * CONV_O * sizeof *out);
    if (!a || !out) {
        printf("%s: skipped (out of memory)\n", name);
        free(a);
        free(out);
        kernel_free(&k);
        return 1;
    }
    conv_im2col(k.params[0]->data, a);      /* outside the timing */
    double t = kernel_once(&k), t_raw = 1e30;
    openblas_set_num_threads(1);
    conv_sgemm_once(a, k.params[1]->data, out);
    for (int r = 0; r < CONV_REPS && t >= 0; r++) {
        double tk = kernel_once(&k), tr = conv_sgemm_once(a, k.params[1]->data, out);
        t = tk < 0 ? tk : r == 0 || tk < t ? tk : t;
        t_raw = tr < t_raw ? tr : t_raw;
    }
    free(a);
    free(out);
    kernel_free(&k);
    if (t < 0) {
        printf("%s: skipped (the run failed)\n", name);
        return 1;
    }
    double f = 2.0 * (double)rows * 9 * CONV_C * CONV_O;
    char ours[128], lim[160];
    snprintf(ours, sizeof ours, "%.1f GFLOP/s (%.2f ms)", f / t / 1e9, t * 1e3);
    snprintf(lim, sizeof lim, "%.1f GFLOP/s (one raw cblas_sgemm over a ready im2col matrix, 1 thread)",
             f / t_raw / 1e9);
    bench_line(name, ours, lim, t_raw / t, ">=", 0.5);
    bench_note("ours gathers the im2col rows in chunks and multiplies each; the limit's gather is not timed");
    return 0;
}

/* ------------------------------------------------------------------ */
/* threads: 1 thread vs N threads                                       */

typedef struct ThreadCase {
    const char *name;
    const char *text;
    double work;            /* bytes of traffic, or flops for a dot */
    bool dot;               /* limit: sgemm 1024^3 (else memcpy of work/2 bytes) */
    bool ratio_info;        /* the ratio to the limit has no target (as in the memory section) */
} ThreadCase;

/* Best of reps memcpy of n bytes on the pool at its current count. */
static double parallel_memcpy_best(size_t n, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        parallel_memcpy(copy_dst, copy_src, (int64_t)n);
        double t = bench_now() - t0;
        best = t < best ? t : best;
    }
    return best;
}

/* One kernel at `threads`: its time and its limit's (best of reps, the two
 * alternating).  OpenBLAS runs the raw sgemm at `threads` and goes back to
 * one thread for the interpreter (eval_dot.c splits by rows itself). */
static bool thread_case_run(Kernel *k, const ThreadCase *c, int threads, int reps, const float *a,
                            const float *b, float *out, double *t_ours, double *t_limit)
{
    const DotCase *big = &dot_cases[1];
    size_t n = (size_t)(c->work / 2), chunk = n < copy_cap ? n : copy_cap;
    interp_set_threads(threads);
    *t_ours = *t_limit = 1e30;
    for (int r = 0; r <= reps; r++) {           /* r == 0: warm-up */
        openblas_set_num_threads(1);
        double tk = kernel_once(k), tl;
        if (tk < 0)
            return false;
        if (c->dot) {
            openblas_set_num_threads(threads);
            tl = sgemm_once(big, a, b, out);
        } else {
            tl = parallel_memcpy_best(chunk, 1) * ((double)n / (double)chunk);
        }
        if (r > 0) {
            *t_ours = tk < *t_ours ? tk : *t_ours;
            *t_limit = tl < *t_limit ? tl : *t_limit;
        }
    }
    openblas_set_num_threads(1);
    return true;
}

static void thread_lines(const ThreadCase *c, int threads, const double *t_ours, const double *t_limit)
{
    const char *unit = c->dot ? "GFLOP/s" : "GB/s", *lim_name = c->dot ? "raw sgemm" : "memcpy";
    char name[192], ours[128], lim[160];
    for (int i = 0; i < 2; i++) {
        int th = i ? threads : 1;
        snprintf(name, sizeof name, "%s at %d thread%s", c->name, th, th == 1 ? "" : "s");
        snprintf(ours, sizeof ours, "%.2f %s (%.1f ms)", c->work / t_ours[i] / 1e9, unit, t_ours[i] * 1e3);
        snprintf(lim, sizeof lim, "%.2f %s (%s, %d thread%s)", c->work / t_limit[i] / 1e9, unit, lim_name, th,
                 th == 1 ? "" : "s");
        bench_line(name, ours, lim, t_limit[i] / t_ours[i], i && !c->ratio_info ? ">=" : NULL, c->dot ? 0.95 : 0.7);
    }
    double gain = t_ours[0] / t_ours[1], limit_gain = t_limit[0] / t_limit[1];
    /* Memory-bound kernels are held to 1.5x only where memcpy itself gains that much. */
    bool held = c->dot || limit_gain >= 1.5;
    snprintf(name, sizeof name, "%s, speed-up %d vs 1 thread", c->name, threads);
    snprintf(ours, sizeof ours, "%.2fx", gain);
    snprintf(lim, sizeof lim, "%.2fx (%s's own gain)", limit_gain, lim_name);
    bench_line(name, ours, lim, gain, held ? ">=" : NULL, c->dot ? 1.7 : 1.5);
}

static int bench_threads(int threads)
{
    static const ThreadCase cases[] = {
        { "add f32 [16M]", ELEMENTWISE("f32", "add"), 3.0 * 64 * MIB, false, false },
        { "add bf16 [16M]", ELEMENTWISE("bf16", "add"), 3.0 * 32 * MIB, false, false },
        { "convert f32->bf16 [16M]", CONVERT_F32_BF16, 96.0 * MIB, false, false },
        { "transpose f32[4096,4096]", TRANSPOSE_4096, 128.0 * MIB, false, false },
        { "reduce-sum f32[4096,4096] over dim 1", REDUCE_SUM_4096, 64.0 * MIB, false, true },
        { "dot f32 1024x1024x1024", DOT2("f32", 1024, 1024, 1024, 1), 2.0 * 1024 * 1024 * 1024, true, false },
    };
    copy_cap = 96 * MIB;
    copy_src = malloc(copy_cap);
    copy_dst = malloc(copy_cap);
    float *a = random_floats((size_t)1 << 20), *b = random_floats((size_t)1 << 20), *out = random_floats((size_t)1 << 20);
    if (!copy_src || !copy_dst || !a || !b || !out) {
        fprintf(stderr, "bench: out of memory\n");
        return 1;
    }
    memset(copy_src, 1, copy_cap);
    memset(copy_dst, 2, copy_cap);
    int failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const ThreadCase *c = &cases[i];
        Kernel k;
        double t_ours[2], t_limit[2];
        bool ok = kernel_new(&k, c->text);
        ok = ok && thread_case_run(&k, c, 1, 5, a, b, out, &t_ours[0], &t_limit[0]) &&
             thread_case_run(&k, c, threads, 5, a, b, out, &t_ours[1], &t_limit[1]);
        if (ok)
            thread_lines(c, threads, t_ours, t_limit);
        else
            printf("%s: skipped (the module could not be prepared or run)\n", c->name);
        failed += !ok;
        if (k.m)
            kernel_free(&k);
    }
    interp_set_threads(1);
    free(copy_src);
    free(copy_dst);
    free(a);
    free(b);
    free(out);
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "parse") == 0)
        return bench_parse(argv[2]);
    if (argc == 4 && strcmp(argv[1], "proto") == 0)
        return bench_proto(argv[2], argv[3]);
    if (argc >= 2 && strcmp(argv[1], "memory") == 0) {
        bool reuse = false;
        const char *only = NULL;
        int reps = 5;
        for (int i = 2; i < argc; i++) {
            if (strcmp(argv[i], "--reuse") == 0)
                reuse = true;
            else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
                only = argv[++i];
            else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
                reps = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 5;
        }
        return bench_memory(reuse, only, reps);
    }
    if (argc == 2 && strcmp(argv[1], "dot") == 0)
        return bench_dot();
    if (argc == 2 && strcmp(argv[1], "conv") == 0)
        return bench_conv();
    if (argc == 3 && strcmp(argv[1], "threads") == 0 && atoi(argv[2]) >= 1)
        return bench_threads(atoi(argv[2]));
    fprintf(stderr, "usage: bench_kernels parse FILE | proto SMALL LARGE | memory [--reuse] [--only NAME] [--reps N] | dot | conv"
            " | threads N\n");
    return 2;
}
