/* groups.c: replica groups in each printed form (explicit, empty, iota,
 * mesh) and group mode, and who takes part with whom
 * (hlo-reference.md 6.2-6.3), worked out here rather than asked of the
 * parser, so that a generator knows the groups it wrote. */
#include "fuzz.h"

#include <stdio.h>
#include <string.h>

int fuzz_divisor(FuzzRng *r, int n)
{
    int d[64], k = 0;
    for (int i = 1; i <= n && k < 64; i++)
        if (n % i == 0)
            d[k++] = i;
    return d[fuzz_below(r, k)];
}

static void print_explicit(FuzzGroups *g)
{
    size_t k = 0, n = sizeof g->canon;
    k += (size_t)snprintf(g->canon + k, n - k, "{");
    for (int i = 0; i < g->n_groups && k < n; i++) {
        k += (size_t)snprintf(g->canon + k, n - k, "%s{", i ? "," : "");
        for (int j = 0; j < g->size && k < n; j++)
            k += (size_t)snprintf(g->canon + k, n - k, "%s%d", j ? "," : "", g->ids[i * g->size + j]);
        if (k < n)
            k += (size_t)snprintf(g->canon + k, n - k, "}");
    }
    if (k < n)
        snprintf(g->canon + k, n - k, "}");
}

void fuzz_draw_groups(FuzzRng *r, FuzzGroupMode mode, int replicas, int partitions, int size, FuzzGroups *g)
{
    memset(g, 0, sizeof *g);
    int n = mode == FUZZ_FLATTENED ? replicas * partitions : replicas;
    if (size < 1 || n % size != 0 || n > FUZZ_MAX_DEVICES)
        size = n;
    g->mode = mode;
    g->size = size;
    g->n_groups = n / size;
    int form = fuzz_below(r, 4);
    if (form == 1 && (size != n || mode == FUZZ_FLATTENED))
        form = 0;
    if (form == 3 && (size < 2 || n / size < 2))     /* a mesh axis of one device is refused */
        form = 2;
    bool strided = fuzz_chance(r, 50) && size > 1 && size < n;
    switch (form) {
    case 1:                             /* {}: every id of the mode, in order */
        for (int i = 0; i < n; i++)
            g->ids[i] = i;
        g->empty = true;
        snprintf(g->text, sizeof g->text, "{}");
        snprintf(g->form, sizeof g->form, "empty");
        snprintf(g->canon, sizeof g->canon, "{}");
        return;
    case 2:                             /* iota: rows of size, or columns */
    case 3:                             /* mesh: the same two cuts of a 2-d mesh */
        for (int gi = 0; gi < g->n_groups; gi++)
            for (int j = 0; j < size; j++)
                g->ids[gi * size + j] = strided ? j * g->n_groups + gi : gi * size + j;
        if (form == 2 && strided)
            snprintf(g->text, sizeof g->text, "[%d,%d]<=[%d,%d]T(1,0)", g->n_groups, size, size, g->n_groups);
        else if (form == 2)
            snprintf(g->text, sizeof g->text, "[%d,%d]<=[%d]", g->n_groups, size, n);
        else if (strided)
            snprintf(g->text, sizeof g->text, "mesh['x'=%d,'y'=%d]{'x'}", size, g->n_groups);
        else
            snprintf(g->text, sizeof g->text, "mesh['x'=%d,'y'=%d]{'y'}", g->n_groups, size);
        snprintf(g->form, sizeof g->form, form == 2 ? "iota" : "mesh");
        break;
    default: {                          /* explicit, in a random order */
        int perm[FUZZ_MAX_DEVICES];
        fuzz_shuffle(r, perm, n);
        bool sorted = fuzz_chance(r, 40);
        for (int i = 0; i < n; i++)
            g->ids[i] = sorted ? i : perm[i];
        snprintf(g->form, sizeof g->form, "explicit");
        print_explicit(g);
        snprintf(g->text, sizeof g->text, "%s", g->canon);
        return;
    }
    }
    print_explicit(g);
}

int fuzz_group_size(const FuzzGroups *g, int partitions)
{
    return g->mode == FUZZ_CROSS_REPLICA_PARTITION ? g->size * partitions : g->size;
}

int fuzz_participants(const FuzzGroups *g, int replicas, int partitions, int device, int *out)
{
    (void)replicas;
    int r = device / partitions, p = device % partitions;
    int key = g->mode == FUZZ_FLATTENED ? device : r;
    for (int gi = 0; gi < g->n_groups; gi++) {
        const int *ids = &g->ids[gi * g->size];
        bool in = false;
        for (int j = 0; j < g->size; j++)
            in |= ids[j] == key;
        if (!in)
            continue;
        int n = 0;
        for (int j = 0; j < g->size; j++) {
            if (g->mode == FUZZ_FLATTENED)
                out[n++] = ids[j];
            else if (g->mode == FUZZ_CROSS_REPLICA)
                out[n++] = ids[j] * partitions + p;
            else
                for (int q = 0; q < partitions; q++)
                    out[n++] = ids[j] * partitions + q;
        }
        return n;
    }
    return 0;
}

void fuzz_mode_attrs(FuzzGroupMode mode, int channel, char *buf, size_t n)
{
    switch (mode) {
    case FUZZ_CROSS_REPLICA:
        snprintf(buf, n, "%s", "");
        break;
    case FUZZ_CROSS_REPLICA_PARTITION:
        snprintf(buf, n, ", channel_id=%d", channel);
        break;
    case FUZZ_FLATTENED:
    case FUZZ_GROUP_MODES:
        snprintf(buf, n, ", channel_id=%d, use_global_device_ids=true", channel);
        break;
    }
}
