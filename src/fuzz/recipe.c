/* recipe.c: a module's draws on tape (fuzz.h, FuzzTape): copied, mutated,
 * written and read back.  A finding of hlo-fuzz --guided names its module
 * by seed, index and this file, since a mutated recipe is no longer what
 * seed and index alone would draw. */
#include "fuzz_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fuzz_recipe_free(FuzzRecipe *r)
{
    for (int k = 0; k < FUZZ_STREAMS; k++)
        free(r->t[k].v);
    memset(r, 0, sizeof *r);
}

void fuzz_recipe_copy(FuzzRecipe *dst, const FuzzRecipe *src)
{
    if (dst == src)
        return;
    fuzz_recipe_free(dst);
    for (int k = 0; k < FUZZ_STREAMS; k++) {
        const FuzzTape *s = &src->t[k];
        if (s->n == 0)
            continue;
        dst->t[k].v = xmalloc((size_t)s->n * sizeof *s->v);
        memcpy(dst->t[k].v, s->v, (size_t)s->n * sizeof *s->v);
        dst->t[k].n = dst->t[k].cap = s->n;
    }
}

long fuzz_recipe_draws(const FuzzRecipe *r)
{
    long n = 0;
    for (int k = 0; k < FUZZ_STREAMS; k++)
        n += r->t[k].n;
    return n;
}

/* A draw, uniform over all recorded draws: (stream, position). */
static bool pick_draw(const FuzzRecipe *r, FuzzRng *g, int *stream, int *pos)
{
    long total = fuzz_recipe_draws(r);
    if (total == 0)
        return false;
    long at = (long)(fuzz_u64(g) % (uint64_t)total);
    for (int k = 0; k < FUZZ_STREAMS; k++) {
        if (at < r->t[k].n) {
            *stream = k;
            *pos = (int)at;
            return true;
        }
        at -= r->t[k].n;
    }
    return false;
}

bool fuzz_recipe_mutate(FuzzRecipe *r, FuzzRng *g)
{
    int n = 1 + fuzz_below(g, 4);
    bool any = false;
    for (int i = 0; i < n; i++) {
        int k, pos;
        if (!pick_draw(r, g, &k, &pos))
            break;
        FuzzTape *t = &r->t[k];
        switch (fuzz_below(g, 8)) {
        case 0:                         /* the rest of the stream drawn afresh */
            t->n = pos;
            break;
        case 1: case 2: case 3:         /* the neighbouring choice: v % n moves by one for any n */
            t->v[pos] += fuzz_chance(g, 50) ? 1 : (uint64_t)-1;
            break;
        default:
            t->v[pos] = fuzz_u64(g);
        }
        any = true;
    }
    return any;
}

void fuzz_recipe_write(const FuzzRecipe *r, StrBuf *out)
{
    strbuf_puts(out, "# hlo-fuzz recipe draws: stream 0 is the module's, stream 1 + k site k's\n");
    for (int k = 0; k < FUZZ_STREAMS; k++) {
        if (r->t[k].n == 0)
            continue;
        strbuf_printf(out, "stream %d:", k);
        for (int i = 0; i < r->t[k].n; i++)
            strbuf_printf(out, " %" PRIx64, r->t[k].v[i]);
        strbuf_putc(out, '\n');
    }
}

bool fuzz_recipe_read(FuzzRecipe *r, const char *text, const char *file, Error *err)
{
    fuzz_recipe_free(r);
    int line = 1;
    for (const char *p = text; *p; line++) {
        const char *end = strchr(p, '\n');
        if (!end)
            end = p + strlen(p);
        if (*p != '#' && end > p) {
            int k = -1, used = 0;
            if (sscanf(p, "stream %d:%n", &k, &used) != 1 || used == 0 || k < 0 || k >= FUZZ_STREAMS ||
                r->t[k].n) {
                fuzz_recipe_free(r);
                return error_set(err, ERR_SYNTAX, (IrLoc){ file, line, 1 },
                                 "expected 'stream K: V ...' with K from 0 to %d, each stream once", FUZZ_STREAMS - 1);
            }
            FuzzTape *t = &r->t[k];
            const char *q = p + used;
            while (q < end) {
                while (q < end && *q == ' ')
                    q++;
                if (q == end)
                    break;
                char *stop;
                errno = 0;
                uint64_t v = strtoull(q, &stop, 16);
                if (stop == q || errno || (stop < end && *stop != ' ') || *q == '-') {
                    fuzz_recipe_free(r);
                    return error_set(err, ERR_SYNTAX, (IrLoc){ file, line, (int)(q - p) + 1 },
                                     "a draw is a hexadecimal number below 2^64");
                }
                fuzz_tape_push(t, v);
                q = stop;
            }
        }
        p = *end ? end + 1 : end;
    }
    return true;
}

bool fuzz_recipe_load(FuzzRecipe *r, const char *path, Error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return error_set(err, ERR_IO, (IrLoc){ path, 0, 0 }, "cannot read: %s", strerror(errno));
    StrBuf sb;
    strbuf_init(&sb);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (sb.len + n > ((size_t)64 << 20)) {
            fclose(f);
            strbuf_free(&sb);
            return error_set(err, ERR_IO, (IrLoc){ path, 0, 0 }, "over 64 MB: not a recipe of draws");
        }
        strbuf_putn(&sb, buf, n);
    }
    bool failed = ferror(f);
    fclose(f);
    if (failed) {
        strbuf_free(&sb);
        return error_set(err, ERR_IO, (IrLoc){ path, 0, 0 }, "read error");
    }
    if (sb.len && memchr(sb.s, 0, sb.len)) {
        strbuf_free(&sb);
        return error_set(err, ERR_SYNTAX, (IrLoc){ path, 0, 0 }, "a NUL byte: not a recipe of draws");
    }
    bool ok = fuzz_recipe_read(r, sb.s ? sb.s : "", path, err);
    strbuf_free(&sb);
    return ok;
}
