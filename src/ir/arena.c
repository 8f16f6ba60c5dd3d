/* arena.c: the one door to malloc, bump arenas, and a growable string.
 * Every allocation in the project passes through xmalloc_try so tests can
 * make the nth one fail (STYLE.md section 8). */
#include "ir.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static long fail_countdown;   /* 0: disabled; else the allocation that fails */

void xmalloc_fail_after(long n)
{
    fail_countdown = n;
}

bool xmalloc_fail_pending(void)
{
    return fail_countdown > 0;
}

/* Counts one allocation; true when it is the one to fail. */
static bool injected_failure(void)
{
    return fail_countdown > 0 && --fail_countdown == 0;
}

void *xmalloc_try(size_t n)
{
    if (injected_failure())
        return NULL;
    return malloc(n ? n : 1);
}

void *xcalloc_try(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = xmalloc_try(n * size);
    return p ? memset(p, 0, n * size) : NULL;
}

void *xrealloc_try(void *p, size_t n)
{
    if (injected_failure())
        return NULL;
    return realloc(p, n ? n : 1);
}

static void out_of_memory(size_t n)
{
    fprintf(stderr, "hlocheck: out of memory allocating %zu bytes\n", n);
    exit(3);
}

void *xmust(void *p)
{
    if (!p) {
        fputs("hlocheck: out of memory\n", stderr);
        exit(3);
    }
    return p;
}

void *xmalloc(size_t n)
{
    void *p = xmalloc_try(n);
    if (!p)
        out_of_memory(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = xcalloc_try(n, size);
    if (!p)
        out_of_memory(size && n > SIZE_MAX / size ? SIZE_MAX : n * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = xrealloc_try(p, n);
    if (!q)
        out_of_memory(n);
    return q;
}

bool xgrow_try(void **p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return false;
    void *q = xrealloc_try(*p, n * size);
    if (!q)
        return false;
    *p = q;
    return true;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

/* ---- Arena: a list of chunks; big requests get a chunk of their own. */

typedef struct Chunk {
    struct Chunk *next;
    size_t size, used;
    _Alignas(max_align_t) unsigned char data[];
} Chunk;

struct Arena {
    Chunk *head;
    size_t chunk_bytes;     /* the next regular chunk's size: doubles up to MAX_CHUNK */
    size_t total;
};

/* Regular chunks double from the size asked for up to this, so that small
 * modules stay small and big ones take few chunks.  (Not transparent huge
 * pages: on this VM first touching 100 MB of them costs 0.9 ms/MB against
 * 0.09 for 10 MB, while 4 KiB pages cost a steady 0.4 ms/MB.) */
#define MAX_CHUNK ((size_t)2 << 20)

#define ALIGN_UP(n) (((n) + _Alignof(max_align_t) - 1) & ~(size_t)(_Alignof(max_align_t) - 1))

Arena *arena_new(size_t chunk_bytes)
{
    Arena *a = xmalloc_try(sizeof *a);
    if (!a)
        return NULL;
    a->head = NULL;
    a->chunk_bytes = chunk_bytes ? chunk_bytes : 64 * 1024;
    a->total = 0;
    return a;
}

static Chunk *chunk_new(size_t size)
{
    Chunk *c = xmalloc_try(sizeof *c + size);
    if (!c)
        return NULL;
    c->size = size;
    c->used = 0;
    c->next = NULL;
    return c;
}

void *arena_alloc(Arena *a, size_t bytes)
{
    bytes = ALIGN_UP(bytes ? bytes : 1);
    Chunk *c = a->head;
    if (!c || c->size - c->used < bytes) {
        size_t size = bytes > a->chunk_bytes / 4 ? bytes : a->chunk_bytes;
        Chunk *n = chunk_new(size);
        if (!n)
            return NULL;
        if (size == a->chunk_bytes && a->chunk_bytes < MAX_CHUNK)
            a->chunk_bytes = 2 * a->chunk_bytes < MAX_CHUNK ? 2 * a->chunk_bytes : MAX_CHUNK;
        if (size == bytes && c) {   /* a big block: keep filling the current chunk */
            n->next = c->next;
            c->next = n;
            c = n;
        } else {
            n->next = c;
            a->head = c = n;
        }
    }
    void *p = c->data + c->used;
    c->used += bytes;
    a->total += bytes;
    memset(p, 0, bytes);
    return p;
}

void *arena_alloc_line(Arena *a, size_t bytes)
{
    enum { LINE = 64 };
    Chunk *c = a->head;
    if (c) {    /* skip to the next boundary in the current chunk if it fits */
        size_t pad = (LINE - (uintptr_t)(c->data + c->used) % LINE) % LINE;
        if (c->size - c->used >= pad + ALIGN_UP(bytes ? bytes : 1)) {
            c->used += pad;
            return arena_alloc(a, bytes);
        }
    }
    /* A new chunk: over-allocate by a line and skip to the boundary. */
    unsigned char *p = arena_alloc(a, bytes + LINE);
    if (!p)
        return NULL;
    return p + ((LINE - (uintptr_t)p % LINE) % LINE);
}

void *arena_alloc_array(Arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    return arena_alloc(a, n * size);
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *arena_strdup(Arena *a, const char *s)
{
    return arena_strndup(a, s, strlen(s));
}

void arena_reset(Arena *a)
{
    Chunk *c = a->head;
    while (c) {
        Chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->total = 0;
}

void arena_rewind(Arena *a)
{
    Chunk *keep = NULL, *c = a->head;
    while (c) {
        Chunk *next = c->next;
        if (!keep || c->size > keep->size) {
            free(keep);
            keep = c;
        } else {
            free(c);
        }
        c = next;
    }
    if (keep) {
        keep->next = NULL;
        keep->used = 0;
    }
    a->head = keep;
    a->total = 0;
}

void arena_free(Arena *a)
{
    if (!a)
        return;
    arena_reset(a);
    free(a);
}

size_t arena_bytes_used(const Arena *a)
{
    return a->total;
}

/* ---- StrBuf */

void strbuf_init(StrBuf *b)
{
    *b = (StrBuf){ 0 };
}

void strbuf_init_may_fail(StrBuf *b)
{
    *b = (StrBuf){ .may_fail = true };
}

void strbuf_free(StrBuf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
    b->nomem = false;
}

bool strbuf_check(const StrBuf *b, Error *err)
{
    return !b->nomem || error_nomem(err, (IrLoc){ 0 });
}

/* False (the text unchanged, b->nomem set) when b may fail and the
 * memory is not there; a buffer that may not fail ends the program. */
static bool strbuf_reserve(StrBuf *b, size_t extra)
{
    if (b->nomem)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *s = b->may_fail ? xrealloc_try(b->s, cap) : xrealloc(b->s, cap);
    if (!s) {
        b->nomem = true;
        return false;
    }
    b->s = s;
    b->cap = cap;
    return true;
}

void strbuf_putn(StrBuf *b, const char *s, size_t n)
{
    if (!strbuf_reserve(b, n))
        return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void strbuf_putc(StrBuf *b, char c)
{
    strbuf_putn(b, &c, 1);
}

void strbuf_puts(StrBuf *b, const char *s)
{
    strbuf_putn(b, s, strlen(s));
}

void strbuf_printf(StrBuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !strbuf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}
