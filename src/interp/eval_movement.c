/* eval_movement.c: the data-movement ops (hlo-reference.md 5.6): reshape,
 * bitcast, transpose, broadcast, slice, dynamic-slice, dynamic-update-slice,
 * concatenate, pad, reverse, iota.
 *
 * Every op here moves whole elements without looking at their values, so
 * the kernels are keyed by element size (1, 2, 4, 8 or 16 bytes), never by
 * type.  Most ops are described as a Walk: the result's dimensions with a
 * byte stride into the destination and one into the source.  walk_copy
 * drops size-1 dimensions, merges dimensions that are contiguous in both,
 * and then copies with memcpy runs, a cache-blocked tile (transposes) or a
 * strided row.  Results that would equal the operand's bytes alias it.
 *
 * Threads (parallel.h): a walk is split over one of its dimensions into
 * contiguous ranges, each copied by the same leaf kernel; broadcast and pad
 * split over the result's first dimension, concatenate over the dims before
 * its own (or each operand's copy, when there are none).  Every
 * element is moved, never computed, so any split gives the same bytes. */
#include "eval.h"
#include "parallel.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Kernels, one set per element size                                    */

/* Transposes move TILE_FOR(K) x TILE_FOR(K) elements at a time, a block
 * that stays in L1 on both sides. */
#define TILE_FOR(K) ((K) <= 4 ? 64 : 256 / (K))

/* micro_K: one 16-byte square of M = 16/K elements per side,
 * d[a*da + b*K] = s[a*K + b*sb] for a, b < M.  With SSE2 the square is
 * transposed in registers: log2(M) rounds that interleave row i with row
 * i + M/2 (bit moves only, so any element type is safe). */
/* clang-format off */
#if defined(__SSE2__)
#include <emmintrin.h>
/* The arrays must become registers: unroll every loop of a micro kernel. */
#if defined(__GNUC__)
#define UNROLL _Pragma("GCC unroll 16")
#else
#define UNROLL
#endif
#define DEFINE_MICRO(K, LO, HI)                                                         \
    static void micro_##K(char *d, int64_t da, const char *s, int64_t sb)               \
    {                                                                                   \
        enum { M = 16 / K };                                                            \
        __m128i r[M], t[M];                                                             \
        UNROLL for (int b = 0; b < M; b++)                                              \
            r[b] = _mm_loadu_si128((const __m128i *)(const void *)(s + b * sb));        \
        UNROLL for (int round = 1; round < M; round *= 2) {                             \
            UNROLL for (int i = 0; i < M / 2; i++) {                                    \
                t[2 * i] = LO(r[i], r[i + M / 2]);                                      \
                t[2 * i + 1] = HI(r[i], r[i + M / 2]);                                  \
            }                                                                           \
            UNROLL for (int i = 0; i < M; i++)                                          \
                r[i] = t[i];                                                            \
        }                                                                               \
        UNROLL for (int a = 0; a < M; a++)                                              \
            _mm_storeu_si128((__m128i *)(void *)(d + a * da), r[a]);                    \
    }
DEFINE_MICRO(1, _mm_unpacklo_epi8, _mm_unpackhi_epi8)
DEFINE_MICRO(2, _mm_unpacklo_epi16, _mm_unpackhi_epi16)
DEFINE_MICRO(4, _mm_unpacklo_epi32, _mm_unpackhi_epi32)
DEFINE_MICRO(8, _mm_unpacklo_epi64, _mm_unpackhi_epi64)
#else
#define DEFINE_MICRO(K)                                                                 \
    static void micro_##K(char *d, int64_t da, const char *s, int64_t sb)               \
    {                                                                                   \
        for (int a = 0; a < 16 / K; a++)                                                \
            for (int b = 0; b < 16 / K; b++)                                            \
                memcpy(d + a * da + b * K, s + a * K + b * sb, K);                      \
    }
DEFINE_MICRO(1)
DEFINE_MICRO(2)
DEFINE_MICRO(4)
DEFINE_MICRO(8)
#endif

static void micro_16(char *d, int64_t da, const char *s, int64_t sb)
{
    (void)da, (void)sb;
    memcpy(d, s, 16);
}

/* Loads and stores go through fixed-size memcpy: the compiler turns them
 * into plain moves, and widened elements (walk_widen) need not be aligned. */
#define DEFINE_KERNELS(K)                                                               \
    static void fill_##K(char *d, const char *elem, int64_t n)                          \
    {                                                                                   \
        char v[K];                                                                      \
        memcpy(v, elem, K);                                                             \
        if (memcmp(v, v + 1, K - 1) == 0) {                                             \
            memset(d, v[0], (size_t)n * K);                                             \
            return;                                                                     \
        }                                                                               \
        for (int64_t i = 0; i < n; i++)                                                 \
            memcpy(d + i * K, v, K);                                                    \
    }                                                                                   \
    static void row_##K(char *d, int64_t ds, const char *s, int64_t ss, int64_t n)      \
    {                                                                                   \
        for (int64_t i = 0; i < n; i++)                                                 \
            memcpy(d + i * ds, s + i * ss, K);                                          \
    }                                                                                   \
    /* One tile: micro squares, then the ragged right and bottom edges. */              \
    static void block_##K(char *d, int64_t da, const char *s, int64_t sb, int64_t na,   \
                          int64_t nb)                                                   \
    {                                                                                   \
        enum { M = 16 / K };                                                            \
        int64_t i = 0;                                                                  \
        for (; i + M <= na; i += M) {                                                   \
            int64_t j = 0;                                                              \
            for (; j + M <= nb; j += M)                                                 \
                micro_##K(d + i * da + j * K, da, s + i * K + j * sb, sb);              \
            for (int a = 0; a < M; a++)                                                 \
                row_##K(d + (i + a) * da + j * K, K, s + (i + a) * K + j * sb, sb, nb - j); \
        }                                                                               \
        for (; i < na; i++)                                                             \
            row_##K(d + i * da, K, s + i * K, sb, nb);                                  \
    }                                                                                   \
    /* d[i*da + j*K] = s[i*K + j*sb] for i < na, j < nb.  Tiles go along the    \
     * source's rows (j outer): a band of t source rows is read once, left to    \
     * right, while the tiles' destination rows are written t elements at a      \
     * time (measured on f32[4096,4096]: 14 ms this way, 21 the other). */      \
    static void tile_##K(char *d, int64_t da, const char *s, int64_t sb, int64_t na,    \
                         int64_t nb)                                                    \
    {                                                                                   \
        const int64_t t = TILE_FOR(K);                                                  \
        for (int64_t j = 0; j < nb; j += t)                                             \
            for (int64_t i = 0; i < na; i += t)                                         \
                block_##K(d + i * da + j * K, da, s + i * K + j * sb, sb,               \
                          na - i < t ? na - i : t, nb - j < t ? nb - j : t);            \
    }                                                                                   \
    /* Row i of d (nb elements) repeats element i of s, for i < na. */                  \
    static void spread_##K(char *d, const char *s, int64_t ss, int64_t na, int64_t nb)  \
    {                                                                                   \
        for (int64_t i = 0; i < na; i++) {                                              \
            char v[K], *row = d + i * nb * K;                                           \
            memcpy(v, s + i * ss, K);                                                   \
            for (int64_t j = 0; j < nb; j++)                                            \
                memcpy(row + j * K, v, K);                                              \
        }                                                                               \
    }

DEFINE_KERNELS(1)
DEFINE_KERNELS(2)
DEFINE_KERNELS(4)
DEFINE_KERNELS(8)
DEFINE_KERNELS(16)

typedef struct Kernels {
    void (*fill)(char *d, const char *elem, int64_t n);
    void (*row)(char *d, int64_t ds, const char *s, int64_t ss, int64_t n);
    void (*tile)(char *d, int64_t da, const char *s, int64_t sb, int64_t na, int64_t nb);
    void (*spread)(char *d, const char *s, int64_t ss, int64_t na, int64_t nb);
} Kernels;

#define KERNELS(K) { fill_##K, row_##K, tile_##K, spread_##K }
static const Kernels kernels_by_size[5] = {
    KERNELS(1), KERNELS(2), KERNELS(4), KERNELS(8), KERNELS(16)
};
/* clang-format on */

/* 4- and 2-byte transposes with AVX2 where the CPU has it (simd.c): squares
 * of 32-byte rows in 256-bit registers, 8 x 8 floats or 16 x 16 halves.
 * Measured on [4096,4096]: f32 8-9 ms against 13 for the SSE2 squares,
 * bf16 5.3 against 8.4 (memcpy of the same bytes: 5.5 ms, 2.6 ms). */
#ifdef INTERP_HAVE_AVX2
#include "simd.h"

/* d[a*da + b*4] = s[a*4 + b*sb] for a, b < 8. */
__attribute__((target("avx2"))) static inline void micro_4_avx2(char *d, int64_t da, const char *s, int64_t sb)
{
    __m256 r[8];
    UNROLL for (int b = 0; b < 8; b++)
        r[b] = _mm256_loadu_ps((const float *)(const void *)(s + b * sb));
    simd_transpose8_ps(r);
    UNROLL for (int a = 0; a < 8; a++)
        _mm256_storeu_ps((float *)(void *)(d + a * da), r[a]);
}

/* Three rounds interleaving row i with row i + 4, 16 bits at a time (the
 * SSE2 micro_2 network): in each 128-bit lane an 8 x 8 transpose. */
__attribute__((target("avx2"))) static inline void transpose8_lanes_16(__m256i *r)
{
    __m256i t[8];
    UNROLL for (int round = 1; round < 8; round *= 2) {
        UNROLL for (int i = 0; i < 4; i++) {
            t[2 * i] = _mm256_unpacklo_epi16(r[i], r[i + 4]);
            t[2 * i + 1] = _mm256_unpackhi_epi16(r[i], r[i + 4]);
        }
        UNROLL for (int i = 0; i < 8; i++)
            r[i] = t[i];
    }
}

/* d[a*da + b*2] = s[a*2 + b*sb] for a, b < 16: rows 0-7 and 8-15 are
 * transposed lane by lane, giving the four 8 x 8 quarters, which the
 * stores put back together. */
__attribute__((target("avx2"))) static inline void micro_2_avx2(char *d, int64_t da, const char *s, int64_t sb)
{
    __m256i x[8], y[8];
    UNROLL for (int b = 0; b < 8; b++) {
        x[b] = _mm256_loadu_si256((const __m256i *)(const void *)(s + b * sb));
        y[b] = _mm256_loadu_si256((const __m256i *)(const void *)(s + (b + 8) * sb));
    }
    transpose8_lanes_16(x);
    transpose8_lanes_16(y);
    UNROLL for (int a = 0; a < 8; a++) {
        _mm256_storeu_si256((__m256i *)(void *)(d + a * da), _mm256_permute2x128_si256(x[a], y[a], 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(d + (a + 8) * da), _mm256_permute2x128_si256(x[a], y[a], 0x31));
    }
}

/* As tile_K: bands of 256 source rows, tiles two squares wide; the ragged
 * edges of a tile go to block_K. */
#define DEFINE_AVX2_TILE(K, M)                                                                   \
    __attribute__((target("avx2"))) static void tile_##K##_avx2(char *d, int64_t da, const char *s, \
                                                              int64_t sb, int64_t na, int64_t nb) \
    {                                                                                            \
        enum { BAND = 256, WIDTH = 2 * M };                                                      \
        for (int64_t j0 = 0; j0 < nb; j0 += BAND)                                                \
            for (int64_t i0 = 0; i0 < na; i0 += WIDTH) {                                         \
                int64_t ti = na - i0 < WIDTH ? na - i0 : WIDTH, tj = nb - j0 < BAND ? nb - j0 : BAND; \
                int64_t tim = ti - ti % M, tjm = tj - tj % M;                                    \
                char *dt = d + i0 * da + j0 * K;                                                 \
                const char *st = s + i0 * K + j0 * sb;                                           \
                for (int64_t i = 0; i < tim; i += M)                                             \
                    for (int64_t j = 0; j < tjm; j += M)                                         \
                        micro_##K##_avx2(dt + i * da + j * K, da, st + i * K + j * sb, sb);      \
                if (tjm < tj)                                                                    \
                    block_##K(dt + tjm * K, da, st + tjm * sb, sb, tim, tj - tjm);               \
                if (tim < ti)                                                                    \
                    block_##K(dt + tim * da, da, st + tim * K, sb, ti - tim, tj);                \
            }                                                                                    \
    }
DEFINE_AVX2_TILE(4, 8)
DEFINE_AVX2_TILE(2, 16)

/* Large 4-byte transposes (a destination of STREAM_MIN_BYTES or more, rows
 * a multiple of 64 bytes apart) go by bands of 16 source rows: each
 * destination row then receives 64 contiguous bytes, one whole cache line,
 * which is stored around the caches (non-temporal: no read for ownership,
 * a third of the tiled kernel's memory traffic), and the 16 source rows are
 * read front to back, prefetched 32 elements ahead.  f32[4096,4096]: about
 * 7 ms against 11 for the tiles, memcpy of the same bytes 4 (noisy 2-core
 * machine).  The columns before the first 64-byte-aligned line of the
 * destination and the last ragged band go to the tiles. */
#define STREAM_MIN_BYTES ((int64_t)16 << 20)
#define STREAM_BAND 16
#define STREAM_PREFETCH 32          /* elements ahead in each source row */

__attribute__((target("avx2"))) static void stream_band_4(char *d, int64_t da, const char *s, int64_t sb,
                                                         int64_t na)
{
    int64_t i = 0;
    for (; i + 8 <= na; i += 8) {
        __m256 r[8], q[8];
        if ((i & 15) == 0)
            for (int b = 0; b < STREAM_BAND; b++)
                _mm_prefetch(s + b * sb + (i + STREAM_PREFETCH) * 4, _MM_HINT_T0);
        UNROLL for (int b = 0; b < 8; b++) {
            r[b] = _mm256_loadu_ps((const float *)(const void *)(s + b * sb + i * 4));
            q[b] = _mm256_loadu_ps((const float *)(const void *)(s + (b + 8) * sb + i * 4));
        }
        simd_transpose8_ps(r);
        simd_transpose8_ps(q);
        UNROLL for (int a = 0; a < 8; a++) {
            float *line = (float *)(void *)(d + (i + a) * da);
            _mm256_stream_ps(line, r[a]);
            _mm256_stream_ps(line + 8, q[a]);
        }
    }
    if (i < na)
        block_4(d + i * da, da, s + i * 4, sb, na - i, STREAM_BAND);
}

__attribute__((target("avx2"))) static void tile_4_stream(char *d, int64_t da, const char *s, int64_t sb,
                                                         int64_t na, int64_t nb)
{
    if (na * nb * 4 < STREAM_MIN_BYTES || da % 64 != 0 || (uintptr_t)d % 4 != 0) {
        tile_4_avx2(d, da, s, sb, na, nb);
        return;
    }
    int64_t lead = (int64_t)((64 - (uintptr_t)d % 64) % 64) / 4, j = lead;
    tile_4_avx2(d, da, s, sb, na, lead);
    for (; j + STREAM_BAND <= nb; j += STREAM_BAND)
        stream_band_4(d + j * 4, da, s + j * sb, sb, na);
    tile_4_avx2(d + j * 4, da, s + j * sb, sb, na, nb - j);
    _mm_sfence();                   /* the streamed lines are visible before anyone reads them */
}

static const Kernels kernels_4_avx2 = { fill_4, row_4, tile_4_stream, spread_4 };
static const Kernels kernels_2_avx2 = { fill_2, row_2, tile_2_avx2, spread_2 };
#endif

/* The kernels for 2- and 4-byte elements: with AVX2 transposes when in use. */
static const Kernels *kernels_avx2_or(int64_t esize, const Kernels *plain)
{
#ifdef INTERP_HAVE_AVX2
    if (interp_use_avx2())
        return esize == 4 ? &kernels_4_avx2 : &kernels_2_avx2;
#else
    (void)esize;
#endif
    return plain;
}

/* NULL for an element size we have no kernels for. */
static const Kernels *kernels_for(int64_t esize)
{
    switch (esize) {
    case 1:
        return &kernels_by_size[0];
    case 2:
        return kernels_avx2_or(2, &kernels_by_size[1]);
    case 4:
        return kernels_avx2_or(4, &kernels_by_size[2]);
    case 8:
        return &kernels_by_size[3];
    case 16:
        return &kernels_by_size[4];
    default:
        return NULL;
    }
}

#define REPLICATE_BLOCK_BYTES ((int64_t)64 << 10)   /* doubled up to this, then copied in parallel */

typedef struct ReplicateJob {
    char *d;
    int64_t block_bytes, total_bytes;   /* block: the first copies, already in place */
} ReplicateJob;

static void replicate_chunk(void *ctx, int64_t begin, int64_t end)
{
    const ReplicateJob *j = ctx;
    for (int64_t k = begin + 1; k < end + 1; k++) {
        int64_t at = k * j->block_bytes;
        int64_t m = j->total_bytes - at < j->block_bytes ? j->total_bytes - at : j->block_bytes;
        memcpy(j->d + at, j->d, (size_t)m);
    }
}

/* Fills n copies of slab (slab_bytes) after the first, which is in place:
 * doubling copies, so a small slab costs log2(n) calls, until a block of
 * REPLICATE_BLOCK_BYTES; the rest copies that block over the pool. */
static void replicate(char *d, int64_t slab_bytes, int64_t n)
{
    int64_t have = 1;
    while (have < n && have * slab_bytes < REPLICATE_BLOCK_BYTES) {
        int64_t m = have < n - have ? have : n - have;
        memcpy(d + have * slab_bytes, d, (size_t)(m * slab_bytes));
        have += m;
    }
    if (have >= n)
        return;
    ReplicateJob j = { d, have * slab_bytes, n * slab_bytes };
    int64_t blocks = (n + have - 1) / have;
    parallel_for(blocks - 1, 2 * j.block_bytes, 1, replicate_chunk, &j);
}

/* ------------------------------------------------------------------ */
/* Walks: strided n-d copies                                            */

typedef struct Walk {
    int rank;
    int64_t esize; /* bytes per element moved */
    int64_t dims[IR_MAX_RANK];
    int64_t dst[IR_MAX_RANK]; /* byte strides in the destination */
    int64_t src[IR_MAX_RANK]; /* byte strides in the source: < 0 reverses, 0 repeats */
} Walk;

/* Row-major byte strides of dims. */
static void row_major(int rank, const int64_t *dims, int64_t esize, int64_t *strides)
{
    int64_t acc = esize;
    for (int d = rank - 1; d >= 0; d--) {
        strides[d] = acc;
        acc *= dims[d];
    }
}

/* A walk over the dims of s, writing s row-major; src strides left 0. */
static void walk_init(Walk *w, const IrShape *s)
{
    memset(w, 0, sizeof *w);
    w->rank = s->rank;
    w->esize = ir_type_storage_bytes(s->type);
    for (int d = 0; d < s->rank; d++)
        w->dims[d] = s->dims[d];
    row_major(s->rank, s->dims, w->esize, w->dst);
}

/* Drops size-1 dims and merges neighbours that are contiguous in both the
 * source and the destination.  False when the walk moves nothing. */
static bool walk_simplify(Walk *w)
{
    int n = 0;
    for (int d = 0; d < w->rank; d++)
        if (w->dims[d] == 0)
            return false;
    for (int d = 0; d < w->rank; d++) {
        if (w->dims[d] == 1)
            continue;
        if (n > 0 && w->dst[n - 1] == w->dst[d] * w->dims[d] &&
            w->src[n - 1] == w->src[d] * w->dims[d]) {
            w->dims[n - 1] *= w->dims[d];
            w->dst[n - 1] = w->dst[d];
            w->src[n - 1] = w->src[d];
            continue;
        }
        w->dims[n] = w->dims[d];
        w->dst[n] = w->dst[d];
        w->src[n] = w->src[d];
        n++;
    }
    w->rank = n;
    return true;
}

/* After walk_simplify: the destination is the source, byte for byte. */
static bool walk_is_identity(const Walk *w)
{
    return w->rank == 0 || (w->rank == 1 && w->dst[0] == w->esize && w->src[0] == w->esize);
}

/* A minor dim contiguous on both sides and at most 16 bytes long becomes a
 * wider element, so small runs take the tile and row kernels, not memcpy. */
static void walk_widen(Walk *w)
{
    int r = w->rank - 1;
    if (r < 1 || w->dst[r] != w->esize || w->src[r] != w->esize)
        return;
    int64_t run = w->dims[r] * w->esize;
    if (run <= 16 && (run & (run - 1)) == 0) {
        w->esize = run;
        w->rank--;
    }
}

typedef enum LeafKind {
    LEAF_RUN,  /* inner dim contiguous on both sides: memcpy */
    LEAF_TILE, /* inner dim contiguous in dst, dim `a` in src: blocked transpose */
    LEAF_ROW   /* anything else: strided element copies */
} LeafKind;

typedef struct Leaf {
    LeafKind kind;
    int inner, a; /* the dims the kernel covers; a = -1 unless LEAF_TILE */
    const Kernels *k;
} Leaf;

static Leaf walk_leaf(const Walk *w)
{
    int r = w->rank - 1;
    Leaf leaf = {LEAF_ROW, r, -1, kernels_for(w->esize)};
    if (w->dst[r] == w->esize && w->src[r] == w->esize) {
        leaf.kind = LEAF_RUN;
        return leaf;
    }
    for (int a = 0; a < r && w->dst[r] == w->esize; a++)
        if (w->src[a] == w->esize) {
            leaf.kind = LEAF_TILE;
            leaf.a = a;
        }
    return leaf;
}

static void leaf_copy(const Walk *w, const Leaf *leaf, char *d, const char *s)
{
    int i = leaf->inner;
    switch (leaf->kind) {
    case LEAF_RUN:
        memcpy(d, s, (size_t)(w->dims[i] * w->esize));
        return;
    case LEAF_TILE:
        leaf->k->tile(d, w->dst[leaf->a], s, w->src[i], w->dims[leaf->a], w->dims[i]);
        return;
    case LEAF_ROW:
        leaf->k->row(d, w->dst[i], s, w->src[i], w->dims[i]);
        return;
    }
}

/* Runs the leaf kernel at every index of the dims it does not cover. */
static void walk_outer(const Walk *w, const Leaf *leaf, char *dst, const char *src)
{
    int outer[IR_MAX_RANK], n = 0;
    int64_t idx[IR_MAX_RANK] = {0}, od = 0, os = 0;
    for (int d = 0; d < w->rank; d++)
        if (d != leaf->inner && d != leaf->a)
            outer[n++] = d;
    for (;;) {
        leaf_copy(w, leaf, dst + od, src + os);
        int j = n - 1;
        for (; j >= 0; j--) {
            int d = outer[j];
            od += w->dst[d];
            os += w->src[d];
            if (++idx[j] < w->dims[d])
                break;
            od -= w->dst[d] * w->dims[d];
            os -= w->src[d] * w->dims[d];
            idx[j] = 0;
        }
        if (j < 0)
            return;
    }
}

/* A walk split over dim d: each chunk is the walk with dims[d] narrowed. */
typedef struct WalkJob {
    const Walk *w;
    const Leaf *leaf;
    int d;
    char *dst;
    const char *src;
} WalkJob;

static void walk_chunk(void *ctx, int64_t begin, int64_t end)
{
    const WalkJob *j = ctx;
    Walk part = *j->w;
    part.dims[j->d] = end - begin;
    walk_outer(&part, j->leaf, j->dst + begin * part.dst[j->d], j->src + begin * part.src[j->d]);
}

/* The dim to split: the largest one the leaf kernel does not run along
 * (a tile's `a` dim splits in whole tiles), else the leaf's own. */
static int split_dim(const Walk *w, const Leaf *leaf)
{
    int best = leaf->inner;
    for (int d = 0; d < w->rank; d++)
        if (d != leaf->inner && (best == leaf->inner || w->dims[d] > w->dims[best]))
            best = d;
    return best;
}

/* Copies by a walk built with walk_init; w is simplified on the way. */
static void walk_copy(Walk *w, char *dst, const char *src)
{
    if (!walk_simplify(w))
        return;
    if (w->rank == 0) {
        memcpy(dst, src, (size_t)w->esize);
        return;
    }
    walk_widen(w);
    Leaf leaf = walk_leaf(w);
    WalkJob j = { w, &leaf, split_dim(w, &leaf), dst, src };
    int64_t per = 2 * w->esize;             /* bytes moved per index of dim j.d: read and write */
    for (int d = 0; d < w->rank; d++)
        if (d != j.d)
            per *= w->dims[d];
    int64_t quantum = j.d == leaf.a ? TILE_FOR(w->esize) : j.d == leaf.inner ? 4096 / w->esize : 1;
    parallel_for(w->dims[j.d], per, quantum, walk_chunk, &j);
}

/* ------------------------------------------------------------------ */
/* Checks shared by every op                                            */

static bool shape_ok(const IrInstr *instr, const IrShape *s, Error *err)
{
    const char *op = ir_opcode_name(instr->op);
    if (!ir_shape_is_array(s))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "%s: %s is not an array", op,
                         ir_shape_str(s));
    if (s->rank < 0 || s->rank > IR_MAX_RANK)
        return error_set(err, ERR_SHAPE, instr->info->loc, "%s: rank %d out of range", op, s->rank);
    for (int d = 0; d < s->rank; d++)
        if (s->dims[d] < 0 || (s->dim_kind && s->dim_kind[d] != IR_DIM_STATIC))
            return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                             "%s: dynamic shape %s is not supported", op, ir_shape_str(s));
    if (!kernels_for(ir_type_storage_bytes(s->type)))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "%s: element type %s is not supported",
                         op, ir_type_name(s->type));
    return true;
}

/* The result and the first n_args operands are static arrays. */
static bool check_io(const IrInstr *instr, Value *const *args, int n_args, Error *err)
{
    if (instr->n_operands < n_args)
        return error_set(err, ERR_SHAPE, instr->info->loc, "%s: expects %d operands, has %d",
                         ir_opcode_name(instr->op), n_args, instr->n_operands);
    if (!shape_ok(instr, instr->shape, err))
        return false;
    for (int i = 0; i < n_args; i++)
        if (!shape_ok(instr, args[i]->shape, err))
            return false;
    return true;
}

/* Operand and result have the same element size (the same type, verified)
 * and, unless any_rank, the same rank. */
static bool check_fits(const IrInstr *instr, const IrShape *x, bool any_rank, Error *err)
{
    if (ir_type_storage_bytes(x->type) == ir_type_storage_bytes(instr->shape->type) &&
        (any_rank || x->rank == instr->shape->rank))
        return true;
    return error_set(err, ERR_SHAPE, instr->info->loc, "%s: operand %s does not fit result %s",
                     ir_opcode_name(instr->op), ir_shape_str(x), ir_shape_str(instr->shape));
}

static bool shape_error(const IrInstr *instr, const char *what, Error *err)
{
    return error_set(err, ERR_SHAPE, instr->info->loc, "%s: %s", ir_opcode_name(instr->op), what);
}

static size_t shape_bytes(const IrShape *s)
{
    return (size_t)ir_shape_elements(s) * (size_t)ir_type_storage_bytes(s->type);
}

/* The result of instr as an alias of src when walk w (src at byte offset
 * src_off) would copy src unchanged; else a fresh copy by the walk. */
static bool walk_result(const IrInstr *instr, Value *src, int64_t src_off, Walk *w, Value **out,
                        Error *err)
{
    Walk plan = *w;
    bool moves = walk_simplify(&plan);
    if (moves && walk_is_identity(&plan) && src_off == 0 &&
        shape_bytes(instr->shape) == value_bytes(src))
        return (*out = value_alias(instr->shape, src, err)) != NULL;
    Value *v = value_new_array(instr->shape, err);
    if (!v)
        return false;
    if (moves)
        walk_copy(&plan, v->data, (const char *)src->data + src_off);
    *out = v;
    return true;
}

/* ------------------------------------------------------------------ */
/* reshape, bitcast                                                     */

bool eval_reshape(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    if (!check_io(instr, args, 1, err))
        return false;
    if (shape_bytes(instr->shape) != value_bytes(args[0]))
        return shape_error(instr, "operand and result sizes differ", err);
    return (*out = value_alias(instr->shape, args[0], err)) != NULL;
}

/* The dims of s from major to minor in its physical layout (the reverse of
 * minor_to_major; row-major when s has no layout). */
static bool physical_order(const IrInstr *instr, const IrShape *s, int *order, Error *err)
{
    bool seen[IR_MAX_RANK] = {false};
    for (int i = 0; i < s->rank; i++) {
        int64_t d = s->has_layout ? s->minor_to_major[s->rank - 1 - i] : i;
        if (d < 0 || d >= s->rank || seen[d])
            return error_set(err, ERR_SHAPE, instr->info->loc,
                             "bitcast: layout of %s is not a permutation", ir_shape_str(s));
        seen[d] = true;
        order[i] = (int)d;
    }
    return true;
}

/* The order keeps every dim larger than 1 in row-major order, so the
 * physical bytes are the row-major bytes. */
static bool order_is_row_major(const IrShape *s, const int *order)
{
    int last = -1;
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[order[i]] == 1)
            continue;
        if (order[i] < last)
            return false;
        last = order[i];
    }
    return true;
}

/* phys = x's elements in physical order (a transpose of the row-major data). */
static void to_physical(const IrShape *x, const int *order, const char *data, char *phys)
{
    Walk w;
    int64_t st[IR_MAX_RANK];
    walk_init(&w, x);
    row_major(x->rank, x->dims, w.esize, st);
    for (int i = 0; i < x->rank; i++) {
        w.dims[i] = x->dims[order[i]];
        w.src[i] = st[order[i]];
    }
    row_major(x->rank, w.dims, w.esize, w.dst);
    walk_copy(&w, phys, data);
}

/* data = s's row-major elements read from its physical layout in phys. */
static void from_physical(const IrShape *s, const int *order, const char *phys, char *data)
{
    Walk w;
    walk_init(&w, s);
    int64_t acc = w.esize;
    for (int i = s->rank - 1; i >= 0; i--) {
        w.src[order[i]] = acc;
        acc *= s->dims[order[i]];
    }
    walk_copy(&w, data, phys);
}

/* Both layouts are non-trivial: through a scratch buffer in physical order. */
static bool bitcast_via_scratch(const IrInstr *instr, const IrShape *x, const int *ox,
                                const char *data, const int *os, Value *v, Error *err)
{
    char *phys = xmalloc_try(value_bytes(v) ? value_bytes(v) : 1);
    if (!phys)
        return error_set(err, ERR_NOMEM, instr->info->loc, "out of memory in bitcast");
    to_physical(x, ox, data, phys);
    from_physical(instr->shape, os, phys, v->data);
    free(phys);
    return true;
}

/* A no-op on the physical buffer: linearise the operand by its layout and
 * read the bytes back as the result under the result's layout.  The
 * operand's layout is the one its instruction declares, not the one on the
 * value's shape: a copy (or a parameter, a get-tuple-element) hands on its
 * operand's value, row-major whatever layout it came with, and a copy is
 * exactly how XLA changes a layout before a bitcast. */
bool eval_bitcast(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    const IrShape *x = instr->n_operands == 1 ? instr->operands[0]->shape : args[0]->shape, *s = instr->shape;
    if (x->type != args[0]->shape->type || x->rank != args[0]->shape->rank ||
        (x->rank > 0 && memcmp(x->dims, args[0]->shape->dims, (size_t)x->rank * sizeof *x->dims) != 0))
        x = args[0]->shape;
    int ox[IR_MAX_RANK], os[IR_MAX_RANK];
    if (!check_io(instr, args, 1, err) || !physical_order(instr, x, ox, err) ||
        !physical_order(instr, s, os, err))
        return false;
    if (shape_bytes(s) != value_bytes(args[0]))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "bitcast: %s and %s differ in storage size", ir_shape_str(x),
                         ir_shape_str(s));
    bool x_plain = order_is_row_major(x, ox), s_plain = order_is_row_major(s, os);
    if (x_plain && s_plain)
        return (*out = value_alias(s, args[0], err)) != NULL;
    Value *v = value_new_array(s, err);
    if (!v)
        return false;
    bool ok = true;
    if (s_plain)
        to_physical(x, ox, args[0]->data, v->data);
    else if (x_plain)
        from_physical(s, os, args[0]->data, v->data);
    else
        ok = bitcast_via_scratch(instr, x, ox, args[0]->data, os, v, err);
    if (!ok)
        value_release(v);
    *out = ok ? v : NULL;
    return ok;
}

/* ------------------------------------------------------------------ */
/* transpose, reverse, slice                                            */

bool eval_transpose(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    const IrShape *x = args[0]->shape, *s = instr->shape;
    const IrIntList *p = &instr->lists[IR_LIST_DIMENSIONS];
    if (!check_io(instr, args, 1, err) || !check_fits(instr, x, false, err))
        return false;
    if (p->n != x->rank)
        return shape_error(instr, "dimensions must list every operand dimension", err);
    Walk w;
    int64_t st[IR_MAX_RANK];
    walk_init(&w, s);
    row_major(x->rank, x->dims, w.esize, st);
    for (int i = 0; i < s->rank; i++) {
        if (p->v[i] < 0 || p->v[i] >= x->rank || x->dims[p->v[i]] != s->dims[i])
            return shape_error(instr, "result is not the operand permuted by dimensions", err);
        w.src[i] = st[p->v[i]];
    }
    return walk_result(instr, args[0], 0, &w, out, err);
}

bool eval_reverse(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    const IrShape *x = args[0]->shape;
    const IrIntList *dims = &instr->lists[IR_LIST_DIMENSIONS];
    if (!check_io(instr, args, 1, err) || !check_fits(instr, x, false, err))
        return false;
    if (!ir_shape_equal_dims(x, instr->shape))
        return shape_error(instr, "result and operand dimensions differ", err);
    Walk w;
    walk_init(&w, instr->shape);
    memcpy(w.src, w.dst, sizeof w.src);
    int64_t off = 0;
    for (int i = 0; i < dims->n; i++) {
        int64_t d = dims->v[i];
        if (d < 0 || d >= x->rank)
            return shape_error(instr, "dimensions out of range", err);
        if (w.src[d] > 0 && x->dims[d] > 0) {
            off += (x->dims[d] - 1) * w.src[d];
            w.src[d] = -w.src[d];
        }
    }
    return walk_result(instr, args[0], off, &w, out, err);
}

/* One slice range against operand dim n and result dim r. */
static bool slice_dim_ok(IrSliceDim sl, int64_t n, int64_t r)
{
    if (sl.stride < 1 || sl.start < 0 || sl.start > sl.limit || sl.limit > n)
        return false;
    return r == (sl.limit - sl.start + sl.stride - 1) / sl.stride;
}

bool eval_slice(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    const IrShape *x = args[0]->shape, *s = instr->shape;
    if (!check_io(instr, args, 1, err) || !check_fits(instr, x, false, err))
        return false;
    if (instr->info->n_slice != x->rank)
        return shape_error(instr, "slice must have one range per dimension", err);
    Walk w;
    int64_t st[IR_MAX_RANK], off = 0;
    walk_init(&w, s);
    row_major(x->rank, x->dims, w.esize, st);
    for (int d = 0; d < x->rank; d++) {
        IrSliceDim sl = instr->info->slice[d];
        if (!slice_dim_ok(sl, x->dims[d], s->dims[d]))
            return shape_error(instr, "slice range does not fit the operand and result", err);
        off += sl.start * st[d];
        w.src[d] = st[d] * sl.stride;
    }
    return walk_result(instr, args[0], off, &w, out, err);
}

/* ------------------------------------------------------------------ */
/* dynamic-slice, dynamic-update-slice                                  */

/* Start index d: element d of a rank-1 vector operand (legacy form) or the
 * scalar operand first + d. */
static const Value *start_operand(Value *const *args, int first, int d, int n_idx, int rank,
                                  int64_t *elem)
{
    if (n_idx == rank) {
        *elem = 0;
        return args[first + d];
    }
    *elem = d;
    return args[first];
}

static bool index_operands_ok(const IrInstr *instr, Value *const *args, int first, int rank,
                              Error *err)
{
    int n_idx = instr->n_operands - first;
    bool vector =
        n_idx == 1 && args[first]->shape->rank == 1 && args[first]->shape->dims[0] == rank;
    if (n_idx != rank && !vector)
        return shape_error(instr, "expects one start index per dimension", err);
    for (int i = first; i < instr->n_operands; i++) {
        const IrShape *s = args[i]->shape;
        if (!ir_shape_is_array(s) || !ir_type_is_int(s->type) ||
            ir_shape_elements(s) < (n_idx == rank ? 1 : rank))
            return shape_error(instr, "start indices must be integers", err);
    }
    return true;
}

/* start[d] = clamp(index d, 0, dims[d] - window[d]) for every dim, each
 * index by its value (a u64 of 2^63 or more clamps to the top, as the
 * unsigned value says; XLA's evaluator reads the bits as signed, XLA:CPU by
 * value: docs/xla-differences.md). */
static bool read_starts(const IrInstr *instr, Value *const *args, int first, const IrShape *x,
                        const int64_t *window, int64_t *start, Error *err)
{
    if (!index_operands_ok(instr, args, first, x->rank, err))
        return false;
    int n_idx = instr->n_operands - first;
    for (int d = 0; d < x->rank; d++) {
        if (window[d] < 0 || window[d] > x->dims[d])
            return shape_error(instr, "window larger than the operand", err);
        int64_t elem;
        const Value *v = start_operand(args, first, d, n_idx, x->rank, &elem);
        IrElemType t = v->shape->type;
        int64_t i = ir_elem_get_index(t, (const char *)v->data + elem * ir_type_storage_bytes(t));
        int64_t hi = x->dims[d] - window[d];
        start[d] = i < 0 ? 0 : i > hi ? hi : i;
    }
    return true;
}

bool eval_dynamic_slice(Interp *it, const IrInstr *instr, Value *const *args, Value **out,
                        Error *err)
{
    (void)it;
    const IrShape *x = args[0]->shape, *s = instr->shape;
    const IrIntList *sizes = &instr->lists[IR_LIST_DYNAMIC_SLICE_SIZES];
    if (!check_io(instr, args, 1, err) || !check_fits(instr, x, false, err))
        return false;
    bool sizes_ok = sizes->n == s->rank;
    for (int d = 0; d < s->rank && sizes_ok; d++)
        sizes_ok = sizes->v[d] == s->dims[d];
    if (!sizes_ok)
        return shape_error(instr, "result does not match dynamic_slice_sizes", err);
    Walk w;
    int64_t st[IR_MAX_RANK], start[IR_MAX_RANK], off = 0;
    if (!read_starts(instr, args, 1, x, s->dims, start, err))
        return false;
    walk_init(&w, s);
    row_major(x->rank, x->dims, w.esize, st);
    for (int d = 0; d < x->rank; d++) {
        off += start[d] * st[d];
        w.src[d] = st[d];
    }
    return walk_result(instr, args[0], off, &w, out, err);
}

/* The operand is copied, never updated in place: a reference count of 1
 * does not say that this is the operand's last use. */
bool eval_dynamic_update_slice(Interp *it, const IrInstr *instr, Value *const *args, Value **out,
                               Error *err)
{
    (void)it;
    const IrShape *x = args[0]->shape, *u = args[1]->shape;
    if (!check_io(instr, args, 2, err) || !check_fits(instr, x, false, err) ||
        !check_fits(instr, u, false, err))
        return false;
    if (!ir_shape_equal_dims(x, instr->shape))
        return shape_error(instr, "result and operand dimensions differ", err);
    int64_t start[IR_MAX_RANK], off = 0;
    if (!read_starts(instr, args, 2, x, u->dims, start, err))
        return false;
    if (ir_shape_equal_dims(u, x))
        return (*out = value_alias(instr->shape, args[1], err)) != NULL;
    Value *v = value_new_array(instr->shape, err);
    if (!v)
        return false;
    parallel_memcpy(v->data, args[0]->data, (int64_t)value_bytes(v));
    Walk w;
    walk_init(&w, u);
    row_major(x->rank, x->dims, w.esize, w.src); /* the result's strides, for now */
    for (int d = 0; d < x->rank; d++)
        off += start[d] * w.src[d];
    memcpy(w.dst, w.src, sizeof w.dst);
    row_major(u->rank, u->dims, w.esize, w.src);
    walk_copy(&w, (char *)v->data + off, args[1]->data);
    *out = v;
    return true;
}

/* ------------------------------------------------------------------ */
/* concatenate                                                          */

/* Operand i matches the result outside dim d; *sum accumulates dim d. */
static bool concat_operand_ok(const IrShape *x, const IrShape *s, int64_t d, int64_t *sum)
{
    if (x->rank != s->rank || ir_type_storage_bytes(x->type) != ir_type_storage_bytes(s->type))
        return false;
    for (int k = 0; k < s->rank; k++)
        if (k != d && x->dims[k] != s->dims[k])
            return false;
    *sum += x->dims[d];
    return true;
}

#define CONCAT_BLOCK_BYTES 65536 /* result bytes written per pass over the operands */

/* n rows of `bytes` each; a row of 1, 2, 4, 8 or 16 bytes is one fixed-size move. */
static void copy_rows(char *d, int64_t ds, const char *s, int64_t ss, int64_t n, int64_t bytes)
{
    const Kernels *k = kernels_for(bytes);
    if (k) {
        k->row(d, ds, s, ss, n);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        memcpy(d + i * ds, s + i * ss, (size_t)bytes);
}

typedef struct ConcatJob {
    const IrInstr *instr;
    Value *const *args;
    int64_t d;
    int64_t inner;          /* bytes per index of d */
    char *dst;
} ConcatJob;

/* For each index in [begin, end) of the dims before d, the operands' slabs
 * in turn; a block of such indices at a time, so the result stays in cache
 * across operands. */
static void concat_range(void *ctx, int64_t begin, int64_t end)
{
    const ConcatJob *j = ctx;
    int64_t row = j->instr->shape->dims[j->d] * j->inner; /* result bytes per outer index */
    int64_t block = row >= CONCAT_BLOCK_BYTES ? 1 : CONCAT_BLOCK_BYTES / row;
    for (int64_t o = begin; o < end; o += block) {
        int64_t n = end - o < block ? end - o : block, at = 0;
        for (int i = 0; i < j->instr->n_operands; i++) {
            int64_t chunk = j->args[i]->shape->dims[j->d] * j->inner;
            if (chunk > 0)
                copy_rows(j->dst + o * row + at, row, (const char *)j->args[i]->data + o * chunk, chunk, n,
                          chunk);
            at += chunk;
        }
    }
}

/* Split over the dims before d; with none (or too few to split), each
 * operand is one copy, itself split. */
static void concat_copy(const IrInstr *instr, Value *const *args, int64_t d, char *dst)
{
    const IrShape *s = instr->shape;
    ConcatJob j = { instr, args, d, ir_type_storage_bytes(s->type), dst };
    int64_t outer = 1;
    for (int k = 0; k < d; k++)
        outer *= s->dims[k];
    for (int k = (int)d + 1; k < s->rank; k++)
        j.inner *= s->dims[k];
    int64_t row = s->dims[d] * j.inner;
    if (outer > 1 && parallel_chunks(outer, 2 * row) >= parallel_chunks(outer * row, 2)) {
        parallel_for(outer, 2 * row, 1, concat_range, &j);
        return;
    }
    for (int64_t o = 0; o < outer; o++) {
        int64_t at = 0;
        for (int i = 0; i < instr->n_operands; i++) {
            int64_t chunk = args[i]->shape->dims[d] * j.inner;
            parallel_memcpy(dst + o * row + at, (const char *)args[i]->data + o * chunk, chunk);
            at += chunk;
        }
    }
}

bool eval_concatenate(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    const IrShape *s = instr->shape;
    const IrIntList *dims = &instr->lists[IR_LIST_DIMENSIONS];
    int64_t d = dims->n == 1 ? dims->v[0] : -1, sum = 0;
    if (!check_io(instr, args, instr->n_operands, err))
        return false;
    if (instr->n_operands < 1 || d < 0 || d >= s->rank)
        return shape_error(instr, "expects operands and one dimension in range", err);
    for (int i = 0; i < instr->n_operands; i++)
        if (!concat_operand_ok(args[i]->shape, s, d, &sum))
            return shape_error(instr, "operands do not fit the result", err);
    if (sum != s->dims[d])
        return shape_error(instr, "operand sizes do not add up to the result", err);
    Value *v = value_new_array(s, err);
    if (!v)
        return false;
    if (ir_shape_elements(s) > 0)
        concat_copy(instr, args, d, v->data);
    *out = v;
    return true;
}

/* ------------------------------------------------------------------ */
/* pad                                                                  */

typedef struct PadDim {
    int64_t out;   /* result size */
    int64_t first; /* result index of the first operand element kept */
    int64_t count; /* operand elements kept (after cropping) */
    int64_t step;  /* interior + 1 */
    int64_t skip;  /* operand elements cropped at the low end */
} PadDim;

typedef struct Pad {
    int rank;
    int64_t esize;
    PadDim dim[IR_MAX_RANK];
    int64_t dst[IR_MAX_RANK], src[IR_MAX_RANK]; /* byte strides */
    const char *value;                          /* the padding element */
    const Kernels *k;
} Pad;

/* Element i of the operand lands at lo + i*step; keep those in [0, out). */
static PadDim pad_dim_plan(IrPadDim p, int64_t n, int64_t out)
{
    PadDim x = {out, 0, 0, p.interior + 1, 0};
    int64_t lo_i = p.lo >= 0 ? 0 : (-p.lo + x.step - 1) / x.step;
    if (out - 1 - p.lo < 0 || lo_i >= n)
        return x;
    int64_t hi_i = (out - 1 - p.lo) / x.step;
    hi_i = hi_i < n - 1 ? hi_i : n - 1;
    if (hi_i < lo_i)
        return x;
    x.skip = lo_i;
    x.first = p.lo + lo_i * x.step;
    x.count = hi_i - lo_i + 1;
    return x;
}

/* The kept elements of the innermost dim, from dst (their first slot) on. */
static void pad_row(const Pad *p, const PadDim *x, char *dst, const char *src)
{
    if (x->step == 1) {
        memcpy(dst, src, (size_t)(x->count * p->esize));
        return;
    }
    p->k->fill(dst, p->value, (x->count - 1) * x->step + 1);
    p->k->row(dst, x->step * p->esize, src, p->esize, x->count);
}

/* Writes the slab of result dims d.. at dst from the operand slab at src. */
static void pad_fill_dims(const Pad *p, int d, char *dst, const char *src)
{
    const PadDim *x = &p->dim[d];
    int64_t slab = p->dst[d] / p->esize; /* elements per index of dim d */
    if (x->count == 0) {
        p->k->fill(dst, p->value, x->out * slab);
        return;
    }
    int64_t last = x->first + (x->count - 1) * x->step;
    p->k->fill(dst, p->value, x->first * slab);
    p->k->fill(dst + (last + 1) * p->dst[d], p->value, (x->out - last - 1) * slab);
    if (d == p->rank - 1) {
        pad_row(p, x, dst + x->first * p->dst[d], src);
        return;
    }
    for (int64_t i = 0; i < x->count; i++) {
        char *at = dst + (x->first + i * x->step) * p->dst[d];
        pad_fill_dims(p, d + 1, at, src + i * p->src[d]);
        if (i + 1 < x->count)
            p->k->fill(at + p->dst[d], p->value, (x->step - 1) * slab);
    }
}

static bool padding_is_zero(const IrInstr *instr)
{
    for (int d = 0; d < instr->info->n_padding; d++)
        if (instr->info->padding[d].lo || instr->info->padding[d].hi || instr->info->padding[d].interior)
            return false;
    return true;
}

/* Fills p from the instruction; *src_off is the first kept operand element. */
static bool pad_plan(const IrInstr *instr, const IrShape *x, const Value *value, Pad *p,
                     int64_t *src_off, Error *err)
{
    const IrShape *s = instr->shape;
    bool listed =
        instr->info->has_padding ? instr->info->n_padding == x->rank : x->rank == 0; /* rank 0 prints none */
    if (!listed || ir_shape_elements(value->shape) != 1)
        return shape_error(instr, "padding must have one entry per dimension and a scalar value",
                           err);
    memset(p, 0, sizeof *p);
    p->rank = s->rank;
    p->esize = ir_type_storage_bytes(s->type);
    p->value = value->data;
    p->k = kernels_for(p->esize);
    row_major(s->rank, s->dims, p->esize, p->dst);
    row_major(x->rank, x->dims, p->esize, p->src);
    *src_off = 0;
    for (int d = 0; d < s->rank; d++) {
        IrPadDim pd = instr->info->padding[d];
        if (pd.interior < 0)
            return shape_error(instr, "negative interior padding", err);
        p->dim[d] = pad_dim_plan(pd, x->dims[d], s->dims[d]);
        *src_off += p->dim[d].skip * p->src[d];
    }
    return true;
}

/* pad and broadcast split over the result's dim 0: a plan (Pad, Walk)
 * and where the whole result and operand start. */
typedef struct DimJob {
    const void *plan;
    char *dst;
    const char *src;
} DimJob;

/* Result indices [begin, end) of dim 0, each a kept operand slab (laid out
 * by pad_fill_dims) or padding: the bytes pad_fill_dims(p, 0, ...) writes. */
static void pad_rows(void *ctx, int64_t begin, int64_t end)
{
    const DimJob *j = ctx;
    const Pad *p = j->plan;
    const PadDim *x = &p->dim[0];
    for (int64_t r = begin; r < end; r++) {
        int64_t k = r - x->first;
        char *at = j->dst + r * p->dst[0];
        if (k >= 0 && k % x->step == 0 && k / x->step < x->count)
            pad_fill_dims(p, 1, at, j->src + k / x->step * p->src[0]);
        else
            p->k->fill(at, p->value, p->dst[0] / p->esize);
    }
}

bool eval_pad(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    const IrShape *x = args[0]->shape;
    if (!check_io(instr, args, 2, err) || !check_fits(instr, x, false, err))
        return false;
    if (ir_type_storage_bytes(args[1]->shape->type) != ir_type_storage_bytes(x->type))
        return shape_error(instr, "padding value type differs from the operand", err);
    Pad p;
    int64_t off = 0;
    if (!pad_plan(instr, x, args[1], &p, &off, err))
        return false;
    if (padding_is_zero(instr) && ir_shape_equal_dims(x, instr->shape))
        return (*out = value_alias(instr->shape, args[0], err)) != NULL;
    Value *v = value_new_array(instr->shape, err);
    if (!v)
        return false;
    if (p.rank == 0)
        memcpy(v->data, args[0]->data, (size_t)p.esize);
    else if (ir_shape_elements(instr->shape) > 0 && p.rank == 1)
        pad_fill_dims(&p, 0, v->data, (const char *)args[0]->data + off);
    else if (ir_shape_elements(instr->shape) > 0)
        parallel_for(p.dim[0].out, 2 * p.dst[0], 1, pad_rows,
                     &(DimJob){ &p, v->data, (const char *)args[0]->data + off });
    *out = v;
    return true;
}

/* ------------------------------------------------------------------ */
/* broadcast                                                            */

/* Writes result dims d.. at dst: a broadcast dim (src stride 0) is written
 * once and then replicated; the leaf dims use the fill/run/row kernels. */
static void broadcast_dims(const Walk *w, const Kernels *k, int d, char *dst, const char *src)
{
    int r = w->rank - 1;
    if (d == r - 1 && w->src[r] == 0 && w->src[d] != 0) {
        k->spread(dst, src, w->src[d], w->dims[d], w->dims[r]);
    } else if (d == r) {
        if (w->src[r] == 0)
            k->fill(dst, src, w->dims[r]);
        else if (w->src[r] == w->esize)
            memcpy(dst, src, (size_t)(w->dims[r] * w->esize));
        else
            k->row(dst, w->esize, src, w->src[r], w->dims[r]);
    } else if (w->src[d] == 0) {
        broadcast_dims(w, k, d + 1, dst, src);
        replicate(dst, w->dst[d], w->dims[d]);
    } else {
        for (int64_t i = 0; i < w->dims[d]; i++)
            broadcast_dims(w, k, d + 1, dst + i * w->dst[d], src + i * w->src[d]);
    }
}

/* Indices [begin, end) of result dim 0: the walk narrowed to them. */
static void broadcast_range(void *ctx, int64_t begin, int64_t end)
{
    const DimJob *j = ctx;
    Walk part = *(const Walk *)j->plan;
    part.dims[0] = end - begin;
    broadcast_dims(&part, kernels_for(part.esize), 0, j->dst + begin * part.dst[0], j->src + begin * part.src[0]);
}

/* Operand dim k becomes result dim dimensions[k]; the other result dims
 * get source stride 0.  A size-1 operand dim may stretch (permissive). */
static bool broadcast_walk(const IrInstr *instr, const IrShape *x, Walk *w, Error *err)
{
    const IrIntList *dims = &instr->lists[IR_LIST_DIMENSIONS];
    const IrShape *s = instr->shape;
    int64_t st[IR_MAX_RANK];
    if (dims->n != x->rank)
        return shape_error(instr, "dimensions must name a result dimension per operand dimension",
                           err);
    walk_init(w, s);
    row_major(x->rank, x->dims, w->esize, st);
    for (int k = 0; k < x->rank; k++) {
        int64_t j = dims->v[k];
        if (j < 0 || j >= s->rank || (x->dims[k] != s->dims[j] && x->dims[k] != 1))
            return shape_error(instr, "operand dimension does not match its result dimension", err);
        if (x->dims[k] != 1)
            w->src[j] = st[k];
    }
    return true;
}

bool eval_broadcast(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    const IrShape *x = args[0]->shape;
    Walk w;
    if (!check_io(instr, args, 1, err) || !check_fits(instr, x, true, err) ||
        !broadcast_walk(instr, x, &w, err))
        return false;
    bool moves = walk_simplify(&w);
    if (moves && walk_is_identity(&w) && shape_bytes(instr->shape) == value_bytes(args[0]))
        return (*out = value_alias(instr->shape, args[0], err)) != NULL;
    Value *v = value_new_array(instr->shape, err);
    if (!v)
        return false;
    if (moves && w.rank == 0)
        memcpy(v->data, args[0]->data, (size_t)w.esize);
    else if (moves)
        parallel_for(w.dims[0], 2 * w.dst[0], 1, broadcast_range, &(DimJob){ &w, v->data, args[0]->data });
    *out = v;
    return true;
}

/* ------------------------------------------------------------------ */
/* iota                                                                 */

/* Value i in the element type: integers wrap, floats round to nearest. */
static void iota_element(IrElemType t, int64_t i, char *elem)
{
    if (ir_type_is_int(t) || t == IR_TYPE_PRED)
        ir_elem_set_i64(t, elem, i);
    else
        ir_elem_set_f64(t, elem, (double)i);
}

/* For each value i of dim d, fill its block of `inner` elements (the dims
 * after d); then replicate that slab over the dims before d. */
static void iota_fill(const IrShape *s, int64_t d, char *dst)
{
    int64_t esize = ir_type_storage_bytes(s->type), outer = 1, inner = 1;
    for (int k = 0; k < d; k++)
        outer *= s->dims[k];
    for (int k = (int)d + 1; k < s->rank; k++)
        inner *= s->dims[k];
    const Kernels *kern = kernels_for(esize);
    char elem[16];
    for (int64_t i = 0; i < s->dims[d]; i++) {
        iota_element(s->type, i, elem);
        kern->fill(dst + i * inner * esize, elem, inner);
    }
    replicate(dst, s->dims[d] * inner * esize, outer);
}

bool eval_iota(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    const IrShape *s = instr->shape;
    int64_t d = instr->ints[IR_INT_IOTA_DIMENSION].v;
    if (!check_io(instr, args, 0, err))
        return false;
    if (!ir_type_is_int(s->type) && !ir_type_is_float(s->type) && !ir_type_is_complex(s->type) &&
        s->type != IR_TYPE_PRED)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "iota: element type %s",
                         ir_type_name(s->type));
    if (d < 0 || d >= s->rank)
        return shape_error(instr, "iota_dimension out of range", err);
    Value *v = value_new_array(s, err);
    if (!v)
        return false;
    if (ir_shape_elements(s) > 0)
        iota_fill(s, d, v->data);
    *out = v;
    return true;
}
