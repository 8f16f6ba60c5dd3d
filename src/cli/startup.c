/* startup.c: the start-up agreement of startup.h. */
#include "startup.h"
#include "watchdog.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

Coll *startup_coll_init(const char *tool, int *argc, char ***argv)
{
    watchdog_start_mpi_init(tool);
    Coll *c = coll_init(argc, argv);
    watchdog_stop();
    return c;
}

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

/* DIR/param<p>.rank<rank>.npy from p = 0 up to the first missing one (a
 * stat: a FIFO is not opened, which would block): how many there are,
 * and a hash of their sizes into *hash. */
static int64_t inputs_walk(const char *dir, int rank, uint64_t *hash)
{
    uint64_t h = SEED;
    int p = 0;
    for (; dir && p < 100000; p++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/param%d.rank%d.npy", dir, p, rank);
        int64_t size = stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
        h = mix(h, &size, sizeof size);
        if (size < 0)
            break;
    }
    *hash = h;
    return p;
}

uint64_t startup_hash_inputs(const char *dir, int rank)
{
    uint64_t h;
    inputs_walk(dir, rank, &h);
    return h;
}

/* "ranks 0-3,6" (or "rank 2") into buf: the ranks whose value is v; " (on
 * h1, h2)" after them, their hosts, when the job spans more than one.
 * Returns how many ranks. */
static int ranks_with(const Coll *c, const uint64_t *all, int world, int n, int k, uint64_t v, char *buf,
                      size_t size)
{
    int count = 0;
    for (int r = 0; r < world; r++)
        count += all[(size_t)r * (size_t)n + (size_t)k] == v;
    size_t len = (size_t)snprintf(buf, size, "%s ", count == 1 ? "rank" : "ranks");
    size_t head = len;
    for (int r = 0; r < world; r++) {
        if (all[(size_t)r * (size_t)n + (size_t)k] != v)
            continue;
        int e = r;
        while (e + 1 < world && all[(size_t)(e + 1) * (size_t)n + (size_t)k] == v)
            e++;
        if (len < size)
            len += (size_t)snprintf(buf + len, size - len, "%s%d", len > head ? "," : "", r);
        if (e > r && len < size)
            len += (size_t)snprintf(buf + len, size - len, "-%d", e);
        r = e;
    }
    if (coll_hosts(c) < 2)
        return count;
    int named = 0;
    for (int r = 0; r < world && len < size; r++) {
        if (all[(size_t)r * (size_t)n + (size_t)k] != v)
            continue;
        bool seen = false;      /* hosts in rank order, each once */
        for (int q = 0; q < r && !seen; q++)
            seen = all[(size_t)q * (size_t)n + (size_t)k] == v && strcmp(coll_host(c, q), coll_host(c, r)) == 0;
        if (seen)
            continue;
        if (named == 4) {
            len += (size_t)snprintf(buf + len, size - len, ", ...");
            break;
        }
        len += (size_t)snprintf(buf + len, size - len, "%s%s", named ? ", " : " (on ", coll_host(c, r));
        named++;
    }
    if (named && len < size)
        snprintf(buf + len, size - len, ")");
    return count;
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
        uint64_t second = all[(size_t)other * (size_t)n + (size_t)k];
        char a[320], b[320];
        int na = ranks_with(c, all, world, n, k, first, a, sizeof a);
        ranks_with(c, all, world, n, k, second, b, sizeof b);
        if (items[k].path && (first == 0 || second == 0))
            snprintf(msg, msg_n, "%s cannot read %s, which %s can: each rank reads it on its own host, so every "
                     "host must hold it (a shared file system, or a copy on each)", first == 0 ? a : b,
                     items[k].path, first == 0 ? b : a);
        else
            snprintf(msg, msg_n, "the ranks were started with different %s: %s %s one, %s another%s; every "
                     "rank must be given the same", items[k].what, a, na == 1 ? "has" : "have", b,
                     world > 2 ? " (and maybe more)" : "");
        ok = false;
    }
    free(all);
    return ok;
}

/* Collective: false, with msg naming the ranks (and hosts) that lack
 * --inputs files other ranks have, and the first such file. */
static bool inputs_everywhere(Coll *c, const char *dir, char *msg, size_t msg_n)
{
    int world = coll_world(c), rank = coll_rank(c);
    uint64_t hash;
    int64_t have = inputs_walk(dir, rank, &hash), most = have;
    coll_allreduce_i64(c, &most, 1, COLL_MAX);
    uint64_t lacks = have < most, *all = xmalloc((size_t)world * sizeof *all);
    coll_allgather_u64(c, &lacks, 1, all);
    int64_t lowest = lacks ? rank : world, first_missing = have;
    coll_allreduce_i64(c, &lowest, 1, COLL_MIN);
    bool ok = lowest == world;
    if (!ok) {
        coll_bcast(c, &first_missing, sizeof first_missing, (int)lowest);
        char who[320];
        ranks_with(c, all, world, 1, 0, 1, who, sizeof who);
        snprintf(msg, msg_n, "--inputs %s: %s cannot read %s/param%" PRId64 ".rank%d.npy (and maybe more) while "
                 "other ranks read %" PRId64 " files each: each rank reads its own files from DIR on its own host, "
                 "so every host must hold its ranks' files (a shared file system, or a copy on each)", dir, who, dir,
                 first_missing, (int)lowest, most);
    }
    free(all);
    return ok;
}

bool startup_agree_job(Coll *c, const char *const *modules, int n_modules, const char *inputs_dir, int argc,
                       char **argv, const CliFlag *flags, int n_flags, const char *const *outputs, char *msg,
                       size_t msg_n)
{
    uint64_t files = 0;
    bool unreadable = false;
    char names[1024] = "";      /* the module files, for a rank that cannot read one */
    size_t len = 0;
    for (int i = 0; i < n_modules; i++) {
        uint64_t h = startup_hash_file(modules[i]);
        files = files * 31 ^ h;
        unreadable |= h == 0 && modules[i] && strcmp(modules[i], "-") != 0;
        if (modules[i] && len < sizeof names)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? " or " : "", modules[i]);
    }
    if (unreadable)
        files = 0;
    StartupItem items[] = {
        { "module files (by content)", files, names },
        { "flags", startup_hash_flags(argc, argv, flags, n_flags, outputs), NULL },
        { "--inputs files (how many DIR/param<p>.rank<r>.npy, and their sizes)",
          startup_hash_inputs(inputs_dir, coll_rank(c)), NULL },
    };
    /* Module and flags first; then files some ranks lack, said as such
     * (their hosts and the first file), before their sizes are compared. */
    if (!startup_agree(c, items, 2, msg, msg_n))
        return false;
    if (inputs_dir && !inputs_everywhere(c, inputs_dir, msg, msg_n))
        return false;
    return startup_agree(c, items + 2, 1, msg, msg_n);
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
