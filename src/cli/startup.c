/* startup.c: the start-up agreement of startup.h. */
#include "startup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)      /* FNV-1a, 64 bits */
        h = (h ^ s[i]) * 0x100000001b3ull;
    return h;
}

#define SEED 0xcbf29ce484222325ull

uint64_t startup_hash_file(const char *path)
{
    if (!path || strcmp(path, "-") == 0)
        return 0;
    /* A pipe (`hlo-run <(zcat m.hlo.gz)`) or a device can be read only
     * once, and the module is read from it next: hashed by its name. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return mix(SEED ^ 1, path, strlen(path));
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    uint64_t h = SEED;
    char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        h = mix(h, buf, n);
    fclose(f);
    return h;
}

static bool in_list(const char *name, size_t n, const char *const *list)
{
    for (int i = 0; list && list[i]; i++)
        if (strlen(list[i]) == n && strncmp(name, list[i], n) == 0)
            return true;
    return false;
}

/* The table's flag named by word (up to any '='), or NULL. */
static const CliFlag *find_flag(const char *word, size_t n, const CliFlag *flags, int n_flags)
{
    for (int i = 0; i < n_flags; i++)
        if (strlen(flags[i].name) == n && strncmp(word, flags[i].name, n) == 0)
            return &flags[i];
    return NULL;
}

uint64_t startup_hash_flags(int argc, char **argv, const CliFlag *flags, int n_flags, const char *const *outputs)
{
    uint64_t h = SEED;
    for (int i = 1; i < argc; i++) {
        const char *w = argv[i];
        if (w[0] != '-' || strcmp(w, "-") == 0)
            continue;                   /* a file: hashed by its contents */
        if (strcmp(w, "--") == 0)
            break;
        const char *eq = strchr(w, '=');
        size_t n = eq ? (size_t)(eq - w) : strlen(w);
        const CliFlag *f = find_flag(w, n, flags, n_flags);
        bool value_next = f && f->kind != CLI_SWITCH && !eq && i + 1 < argc;
        if (!in_list(w, n, outputs)) {
            h = mix(h, w, strlen(w) + 1);
            if (value_next)
                h = mix(h, argv[i + 1], strlen(argv[i + 1]) + 1);
        }
        i += value_next;
    }
    return h;
}

uint64_t startup_hash_inputs(const char *dir, int rank)
{
    uint64_t h = SEED;
    for (int p = 0; dir && p < 100000; p++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/param%d.rank%d.npy", dir, p, rank);
        int64_t size = stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
        h = mix(h, &size, sizeof size);
        if (size < 0)
            break;
    }
    return h;
}

/* "0-3,6" into buf: the ranks whose value is v. */
static void ranks_with(const uint64_t *all, int world, int n, int k, uint64_t v, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (int r = 0; r < world; r++) {
        if (all[(size_t)r * (size_t)n + (size_t)k] != v)
            continue;
        int e = r;
        while (e + 1 < world && all[(size_t)(e + 1) * (size_t)n + (size_t)k] == v)
            e++;
        if (len < size)
            len += (size_t)snprintf(buf + len, size - len, "%s%d", len ? "," : "", r);
        if (e > r && len < size)
            len += (size_t)snprintf(buf + len, size - len, "-%d", e);
        r = e;
    }
}

bool startup_agree(Coll *c, const StartupItem *items, int n, char *msg, size_t msg_n)
{
    int world = coll_world(c);
    uint64_t mine[STARTUP_MAX_ITEMS];
    if (n > STARTUP_MAX_ITEMS)
        n = STARTUP_MAX_ITEMS;
    for (int k = 0; k < n; k++)
        mine[k] = items[k].hash;
    uint64_t *all = xmalloc((size_t)world * (size_t)n * sizeof *all);
    coll_allgather_u64(c, mine, n, all);
    bool ok = true;
    for (int k = 0; k < n && ok; k++) {
        uint64_t first = all[k];
        int other = -1;
        for (int r = 1; r < world && other < 0; r++)
            if (all[(size_t)r * (size_t)n + (size_t)k] != first)
                other = r;
        if (other < 0)
            continue;
        char a[256], b[256];
        ranks_with(all, world, n, k, first, a, sizeof a);
        ranks_with(all, world, n, k, all[(size_t)other * (size_t)n + (size_t)k], b, sizeof b);
        snprintf(msg, msg_n, "the ranks were started with different %s: ranks %s have one, ranks %s another%s; "
                 "every rank must be given the same", items[k].what, a, b,
                 world > 2 ? " (and maybe more)" : "");
        ok = false;
    }
    free(all);
    return ok;
}

bool startup_agree_job(Coll *c, const char *const *modules, int n_modules, const char *inputs_dir, int argc,
                       char **argv, const CliFlag *flags, int n_flags, const char *const *outputs, char *msg,
                       size_t msg_n)
{
    uint64_t files = 0;
    for (int i = 0; i < n_modules; i++)
        files = files * 31 ^ startup_hash_file(modules[i]);
    StartupItem items[] = {
        { "module files (by content)", files },
        { "flags", startup_hash_flags(argc, argv, flags, n_flags, outputs) },
        { "--inputs files (how many DIR/param<p>.rank<r>.npy, and their sizes)",
          startup_hash_inputs(inputs_dir, coll_rank(c)) },
    };
    return startup_agree(c, items, 3, msg, msg_n);
}

bool startup_outputs_ok(Coll *c, const char *const *inputs, int n_inputs, const char *const *outs,
                        const char *const *out_flags, int n_outs, char *msg, size_t msg_n)
{
    for (int k = 0; k < n_outs; k++)
        for (int i = 0; i < n_inputs; i++)
            if (cli_same_file(inputs[i], outs[k])) {
                snprintf(msg, msg_n, "%s %s is an input module: refusing to write over it", out_flags[k], outs[k]);
                return false;
            }
    /* Rank 0 writes the files: it alone tries, and tells the others. */
    int64_t writable = 1;
    msg[0] = 0;
    for (int k = 0; k < n_outs && coll_rank(c) == 0 && writable; k++)
        writable = cli_can_create(outs[k], msg, msg_n);
    coll_bcast(c, &writable, sizeof writable, 0);
    return writable != 0;
}
