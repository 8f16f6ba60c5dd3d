/* combine.c: the one combining engine of spec/passes.md section 2, shared by
 * the all-gather (#77), reduce-scatter (#78) and all-reduce (#79) combiners.
 *
 * Grouping.  Walk a computation in post order (pass_post_order).  Every
 * instruction the combiner gives a key joins the open group of that key,
 * after the group is closed (combined and reset) when (a) the instruction
 * depends on a member, (b) the group holds max_count members, or (c) the
 * group's bytes plus the instruction's would exceed max_bytes.  At the end
 * every open group closes; groups of two or more are combined.
 *
 * The reachability guard.  Each group's members become one instruction, so
 * the guard asks whether the instruction depends on the group in the graph
 * where every group, open or closed, is already contracted to one node.  In
 * a graph without cross-group tangles that is plain reachability; where two
 * groups of different keys depend on each other's members it is what keeps
 * the result acyclic (plain reachability would let both combine into a
 * cycle).  A "bucket" is one group between two closes.  Walking in post
 * order, every instruction records the set of OPEN buckets it depends on,
 * computed from its operands' sets (a member contributes its bucket); a
 * closed bucket in a set is replaced by the open buckets it depended on
 * (cached, recomputed only after another close).  Each bucket records the
 * buckets its members depended on, so a query is a search over the open
 * buckets only: one per key at most.  No walk of the instruction graph, and
 * the work per instruction is bounded by the number of open groups.
 *
 * Rewrite.  A group becomes one variadic collective of its members'
 * operands (group order), tuple-shaped, with the first member's attributes
 * (channel_id, replica groups, to_apply, flags, metadata; constrain_layout
 * false; sharding the tuple of the members'), then one get-tuple-element
 * per member, named like the member it replaces and carrying its metadata.
 * With a dimension (all-gather, reduce-scatter), a member on another
 * dimension d gets its operand transposed so d and the chosen dimension
 * swap, and its element transposed back.  Placement: the new instructions
 * take the slot of the group's last member (in the computation's order);
 * an instruction before that slot that uses an earlier member moves down
 * after it, keeping the relative order of everything else, so a schedule
 * (is_scheduled=true) stays a valid schedule.
 *
 * Needs: a verified module.  Keeps: verifier clean; no new channel ids;
 * members are removed here (the pipeline's dead-code removal is not needed). */
#include "combine.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Keys                                                                 */

bool combine_key_equal(const CombineKey *a, const CombineKey *b)
{
    return a->op == b->op && a->type == b->type && a->domain == b->domain &&
           a->flag0 == b->flag0 && a->flag1 == b->flag1 && a->has_dim == b->has_dim &&
           a->dim == b->dim && a->has_channel_flag == b->has_channel_flag &&
           a->channel == b->channel && strcmp(a->tag, b->tag) == 0 &&
           ir_replica_groups_equal(a->groups, b->groups);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 1099511628211ull;
}

static uint64_t key_hash(const CombineKey *k)
{
    uint64_t h = 1469598103934665603ull;
    h = mix(h, (uint64_t)k->op);
    h = mix(h, (uint64_t)k->type);
    h = mix(h, (uint64_t)k->domain);
    h = mix(h, (uint64_t)(k->flag0 | k->flag1 << 1 | k->has_dim << 2 | k->has_channel_flag << 3 |
                          k->channel << 4));
    h = mix(h, (uint64_t)k->dim);
    for (const char *s = k->tag; *s; s++)
        h = mix(h, (unsigned char)*s);
    h = mix(h, (uint64_t)k->groups->n_groups);
    for (int g = 0; g < k->groups->n_groups; g++)
        for (int i = 0; i < k->groups->group_sizes[g]; i++)
            h = mix(h, (uint64_t)k->groups->groups[g][i]);
    return h;
}

static bool is_reducer_op(IrOpcode op)
{
    return op == IR_OP_ADD || op == IR_OP_MULTIPLY || op == IR_OP_MAXIMUM || op == IR_OP_MINIMUM ||
           op == IR_OP_AND || op == IR_OP_OR;
}

IrOpcode combine_trivial_reducer(const IrComputation *comp)
{
    if (!comp || comp->n_params != 2 || comp->n_instrs != 3 || !comp->root)
        return IR_OP_COUNT;
    const IrInstr *root = comp->root;
    if (!is_reducer_op(root->op) || root->n_operands != 2 || !ir_shape_is_array(root->shape) ||
        root->shape->rank != 0)
        return IR_OP_COUNT;
    const IrInstr *a = root->operands[0], *b = root->operands[1];
    bool params = a->op == IR_OP_PARAMETER && b->op == IR_OP_PARAMETER && a != b;
    bool scalars = params && a->shape->rank == 0 && b->shape->rank == 0 &&
                   a->shape->type == root->shape->type && b->shape->type == root->shape->type;
    return scalars ? root->op : IR_OP_COUNT;
}

/* (reducer opcode, reducer type, domain, has channel_id,
 * use_global_device_ids, replica groups): hlo-reference.md 7.2. */
bool combine_base_key(const IrInstr *instr, CombineKey *out)
{
    const IrComputation *reducer = instr->info->comps[IR_COMP_TO_APPLY];
    IrOpcode op = combine_trivial_reducer(reducer);
    if (op == IR_OP_COUNT)
        return false;
    *out = (CombineKey){
        .op = op,
        .type = reducer->root->shape->type,
        .domain = 0,
        .flag0 = instr->ints[IR_INT_CHANNEL_ID].present,
        .flag1 = instr->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS],
        .groups = &instr->info->replica_groups,
    };
    return true;
}

static int64_t dim_of(const IrInstr *instr)
{
    const IrIntList *d = &instr->lists[IR_LIST_DIMENSIONS];
    return d->n > 0 ? d->v[0] : 0;
}

int64_t combine_most_frequent_dim(IrInstr *const *group, int n)
{
    int64_t count[IR_MAX_RANK] = { 0 };
    int min_rank = IR_MAX_RANK, best = 0;
    for (int i = 0; i < n; i++) {
        int64_t d = dim_of(group[i]);
        if (d >= 0 && d < IR_MAX_RANK)
            count[d]++;
        if (group[i]->shape->rank < min_rank)
            min_rank = group[i]->shape->rank;
    }
    for (int d = 1; d < IR_MAX_RANK; d++)
        if (count[d] > count[best])
            best = d;
    return best < min_rank ? best : 0;
}

/* ------------------------------------------------------------------ */
/* Small containers                                                     */

/* An allocation of the combiner run under way failed (combiners run one at
 * a time): what needed it was left out, and combine_run fails with
 * ERR_NOMEM instead of rewriting. */
static bool short_of_memory;

/* p; NULL notes that the run is short of memory. */
static void *got(void *p)
{
    short_of_memory |= p == NULL;
    return p;
}

/* *v (of elements of size) resized to cap elements, *n_cap set; false,
 * both untouched, when out of memory. */
static bool grow(void **v, int *n_cap, int cap, size_t size)
{
    if (!got(xgrow_try(v, (size_t)cap, size) ? v : NULL))
        return false;
    *n_cap = cap;
    return true;
}

typedef struct IntVec {
    int *v;
    int n, cap;
} IntVec;

static void ivec_push(IntVec *a, int x)
{
    if (a->n == a->cap && !grow((void **)&a->v, &a->cap, a->cap ? 2 * a->cap : 8, sizeof *a->v))
        return;
    a->v[a->n++] = x;
}

/* Instruction id -> two ints, for the instructions of one computation.
 * Ids are module-wide but a computation's are mostly one run (the parser
 * numbers them in order, compaction renumbers them), so the values
 * are two plain arrays indexed by id - base when the ids span at most a
 * few times their number: small, and neighbours in the graph stay
 * neighbours in memory.  A sparse span (a small computation after many
 * rewrites elsewhere) falls back to open addressing. */
typedef struct IdSlot {
    int id;                 /* -1: empty */
    int a, b;
} IdSlot;
typedef struct IdMap {
    int base, span;         /* dense: a[id - base], b[id - base] for base <= id < base + span */
    int *a, *b;             /*   a: INT_MIN when id is not in the map */
    IdSlot *slots;          /* hashed (span 0) */
    size_t mask;
} IdMap;

/* For n ids between lo and hi; false when out of memory (the map can
 * still be freed). */
static bool idmap_alloc(IdMap *map, int lo, int hi, int n)
{
    *map = (IdMap){ 0 };
    if ((int64_t)hi - lo + 1 <= 4 * (int64_t)n + 64) {
        map->base = lo;
        map->span = hi - lo + 1;
        map->a = got(xmalloc_try(((size_t)map->span + 1) * sizeof *map->a));
        map->b = got(xmalloc_try(((size_t)map->span + 1) * sizeof *map->b));
        for (int i = 0; map->a && i < map->span; i++)
            map->a[i] = INT_MIN;
        return map->a && map->b;
    }
    size_t cap = 16;
    while (cap < 2 * (size_t)n + 2)
        cap *= 2;
    map->mask = cap - 1;
    if (!(map->slots = got(xmalloc_try(cap * sizeof *map->slots))))
        return false;
    for (size_t i = 0; i < cap; i++)
        map->slots[i].id = -1;
    return true;
}

static void idmap_free(IdMap *map)
{
    free(map->a);
    free(map->b);
    free(map->slots);
}

static IdSlot *hashed_slot(const IdMap *map, int id)
{
    size_t i = ((size_t)id * 2654435761u) & map->mask;
    while (map->slots[i].id != -1 && map->slots[i].id != id)
        i = (i + 1) & map->mask;
    return &map->slots[i];
}

/* id must be one of the instructions the map was made for. */
static void idmap_put(IdMap *map, int id, int a, int b)
{
    if (map->span > 0) {
        map->a[id - map->base] = a;
        map->b[id - map->base] = b;
    } else {
        *hashed_slot(map, id) = (IdSlot){ id, a, b };
    }
}

static void idmap_set_a(IdMap *map, int id, int a)
{
    if (map->span > 0)
        map->a[id - map->base] = a;
    else
        hashed_slot(map, id)->a = a;
}

/* Whether id is in the map; its values into *a, *b (either may be NULL). */
static bool idmap_get(const IdMap *map, int id, int *a, int *b)
{
    int va, vb;
    if (map->span > 0) {
        if (id < map->base || id - map->base >= map->span || map->a[id - map->base] == INT_MIN)
            return false;
        va = map->a[id - map->base];
        vb = map->b[id - map->base];
    } else {
        const IdSlot *s = hashed_slot(map, id);
        if (s->id != id)
            return false;
        va = s->a;
        vb = s->b;
    }
    if (a)
        *a = va;
    if (b)
        *b = vb;
    return true;
}

/* ------------------------------------------------------------------ */
/* Engine state                                                         */

typedef struct Bucket {
    int group;              /* index into Engine.groups */
    bool open;
    int n_members;
    int64_t bytes;          /* sum of the members' result bytes */
    int first, last;        /* post-order positions of the members, linked by member_next */
    IntVec dep;             /* buckets the members depend on (open when added) */
    long flat_at;           /* closed buckets: n_closed when dep was last flattened */
} Bucket;

typedef struct KeyGroup {
    CombineKey key;
    uint64_t hash;
    int bucket;             /* the open bucket, or -1 */
} KeyGroup;

/* What the engine knows of the instruction at one post-order position, in
 * one place: the dependency walk reads all of it for every operand. */
typedef struct Position {
    int member_of;          /* bucket, or -1 */
    int member_next;        /* next member of the same bucket, or -1 */
    int s_off, s_len;       /* its open-bucket set, a range of pool */
    bool ctrl_succ;         /* some instruction has it as a control predecessor */
} Position;

typedef struct Engine {
    IrComputation *comp;
    const Combiner *c;
    const PassOptions *opt;
    CombineLimits limits;
    PassStats *stats;
    int n;                  /* instructions */
    IrInstr **order;        /* post order */
    IdMap pos;              /* id -> a: post-order position, b: index in comp->instrs */
    Position *at;           /* by post-order position */
    IntVec pool;
    Bucket *buckets;
    int n_buckets, cap_buckets;
    KeyGroup *groups;
    int n_groups, cap_groups;
    int *table;             /* hash table of group indices, -1 empty */
    size_t table_mask;
    long *mark;             /* per bucket: the stamp of the last visit */
    int cap_mark;
    long stamp;
    long n_closed;          /* closes so far: invalidates flattened dep lists */
    IntVec combined;        /* buckets of two or more members, in closing order */
    IntVec deps, queue;     /* scratch */
} Engine;

static int post_pos(const Engine *e, const IrInstr *x)
{
    int p;
    return idmap_get(&e->pos, x->id, &p, NULL) ? p : -1;
}

/* ---- Buckets and their dependency sets */

/* A new stamp for e->mark; false (no stamp) when out of memory. */
static bool next_stamp(Engine *e)
{
    if (e->cap_mark < e->n_buckets) {
        int old = e->cap_mark;
        if (!grow((void **)&e->mark, &e->cap_mark, e->n_buckets * 2 + 8, sizeof *e->mark))
            return false;
        memset(e->mark + old, 0, (size_t)(e->cap_mark - old) * sizeof *e->mark);
    }
    ++e->stamp;
    return true;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The open buckets a closed bucket depended on, recomputed only when some
 * bucket closed since the last time.  Sorted, no repeats. */
static const IntVec *flat_dep(Engine *e, int b)
{
    Bucket *bk = &e->buckets[b];
    if (bk->flat_at == e->n_closed)
        return &bk->dep;
    IntVec flat = { 0 };
    for (int i = 0; i < bk->dep.n; i++) {
        int d = bk->dep.v[i];
        if (e->buckets[d].open) {
            ivec_push(&flat, d);
            continue;
        }
        const IntVec *sub = flat_dep(e, d);
        for (int k = 0; k < sub->n; k++)
            ivec_push(&flat, sub->v[k]);
    }
    if (flat.n > 1)
        qsort(flat.v, (size_t)flat.n, sizeof *flat.v, cmp_int);
    int kept = 0;
    for (int i = 0; i < flat.n; i++)
        if (kept == 0 || flat.v[kept - 1] != flat.v[i])
            flat.v[kept++] = flat.v[i];
    flat.n = kept;
    bk = &e->buckets[b];
    free(bk->dep.v);
    bk->dep = flat;
    bk->flat_at = e->n_closed;
    return &bk->dep;
}

/* Adds bucket b to out (once per stamp); a closed one adds what it depended on. */
static void add_open(Engine *e, int b, IntVec *out)
{
    if (e->mark[b] == e->stamp)
        return;
    e->mark[b] = e->stamp;
    if (e->buckets[b].open) {
        ivec_push(out, b);
        return;
    }
    const IntVec *sub = flat_dep(e, b);
    for (int i = 0; i < sub->n; i++)
        if (e->mark[sub->v[i]] != e->stamp) {
            e->mark[sub->v[i]] = e->stamp;
            ivec_push(out, sub->v[i]);
        }
}

static void add_deps_of(Engine *e, const IrInstr *dep, IntVec *out)
{
    int q = post_pos(e, dep);
    if (q < 0)
        return;
    if (e->at[q].member_of >= 0) {
        add_open(e, e->at[q].member_of, out);
        return;
    }
    for (int i = 0; i < e->at[q].s_len; i++)
        add_open(e, e->pool.v[e->at[q].s_off + i], out);
}

/* e->deps = the open buckets instruction x depends on (operands and
 * control predecessors). */
static void collect_deps(Engine *e, const IrInstr *x)
{
    e->deps.n = 0;
    if (!next_stamp(e))
        return;
    for (int k = 0; k < x->n_operands; k++)
        add_deps_of(e, x->operands[k], &e->deps);
    for (int k = 0; k < x->n_control_predecessors; k++)
        add_deps_of(e, x->control_predecessors[k], &e->deps);
}

static void remember_deps(Engine *e, int p)
{
    e->at[p].s_off = e->pool.n;
    e->at[p].s_len = e->deps.n;
    for (int i = 0; i < e->deps.n; i++)
        ivec_push(&e->pool, e->deps.v[i]);
}

/* Does e->deps reach bucket target through the open buckets' dependencies?
 * The search visits open buckets only, at most one per key. */
static bool reaches(Engine *e, int target)
{
    if (!next_stamp(e))
        return false;
    e->queue.n = 0;
    for (int i = 0; i < e->deps.n; i++)
        add_open(e, e->deps.v[i], &e->queue);
    for (int head = 0; head < e->queue.n; head++) {
        int b = e->queue.v[head];
        if (b == target)
            return true;
        IntVec *dep = &e->buckets[b].dep;
        for (int i = 0; i < dep->n; i++)
            add_open(e, dep->v[i], &e->queue);
    }
    return false;
}

/* ---- Groups */

static bool table_grow(Engine *e)
{
    size_t cap = e->table ? 2 * (e->table_mask + 1) : 16;
    int *table = got(xmalloc_try(cap * sizeof *e->table));
    if (!table)
        return false;
    free(e->table);
    e->table = table;
    for (size_t i = 0; i < cap; i++)
        e->table[i] = -1;
    e->table_mask = cap - 1;
    for (int g = 0; g < e->n_groups; g++) {
        size_t i = e->groups[g].hash & e->table_mask;
        while (e->table[i] >= 0)
            i = (i + 1) & e->table_mask;
        e->table[i] = g;
    }
    return true;
}

/* The group of key, made if new; -1 when out of memory. */
static int find_group(Engine *e, const CombineKey *key)
{
    if ((!e->table || 2 * (size_t)(e->n_groups + 1) > e->table_mask + 1) && !table_grow(e))
        return -1;
    uint64_t h = key_hash(key);
    size_t i = h & e->table_mask;
    for (; e->table[i] >= 0; i = (i + 1) & e->table_mask) {
        KeyGroup *g = &e->groups[e->table[i]];
        if (g->hash == h && combine_key_equal(&g->key, key))
            return e->table[i];
    }
    if (e->n_groups == e->cap_groups &&
        !grow((void **)&e->groups, &e->cap_groups, e->cap_groups ? 2 * e->cap_groups : 8, sizeof *e->groups))
        return -1;
    e->groups[e->n_groups] = (KeyGroup){ *key, h, -1 };
    e->table[i] = e->n_groups;
    return e->n_groups++;
}

/* A new open bucket for group; -1 when out of memory. */
static int new_bucket(Engine *e, int group)
{
    if (e->n_buckets == e->cap_buckets &&
        !grow((void **)&e->buckets, &e->cap_buckets, e->cap_buckets ? 2 * e->cap_buckets : 16,
              sizeof *e->buckets))
        return -1;
    e->buckets[e->n_buckets] = (Bucket){ .group = group, .open = true, .first = -1, .last = -1 };
    e->groups[group].bucket = e->n_buckets;
    return e->n_buckets++;
}

static void close_group(Engine *e, int group, CombineClose why)
{
    int b = e->groups[group].bucket;
    e->groups[group].bucket = -1;
    e->buckets[b].open = false;
    e->n_closed++;
    e->stats->closed[why]++;
    if (e->buckets[b].n_members >= 2)
        ivec_push(&e->combined, b);
    else
        e->stats->singletons++;
}

/* Adds the instruction at post-order position p to bucket b; the bucket
 * now also depends on what the instruction depends on. */
static void join(Engine *e, int b, int p, int64_t bytes)
{
    Bucket *bk = &e->buckets[b];
    e->at[p].member_of = b;
    if (bk->last >= 0)
        e->at[bk->last].member_next = p;
    else
        bk->first = p;
    bk->last = p;
    bk->n_members++;
    bk->bytes += bytes;
    if (!next_stamp(e))
        return;
    for (int i = 0; i < bk->dep.n; i++)
        e->mark[bk->dep.v[i]] = e->stamp;
    IntVec add = { 0 };
    for (int i = 0; i < e->deps.n; i++)
        add_open(e, e->deps.v[i], &add);
    bk = &e->buckets[b];
    for (int i = 0; i < add.n; i++)
        ivec_push(&bk->dep, add.v[i]);
    free(add.v);
}

/* The reason the open bucket of group must close before instr joins, or -1. */
static int close_reason(Engine *e, int b, int64_t bytes)
{
    const Bucket *bk = &e->buckets[b];
    if (reaches(e, b))
        return CLOSE_REACHABILITY;
    if (bk->n_members >= e->limits.max_count)
        return CLOSE_COUNT;
    if (bytes > e->limits.max_bytes - bk->bytes)
        return CLOSE_BYTES;
    return -1;
}

/* Can the instruction take part at all, and with which key and size? */
static bool candidate(const Engine *e, const IrInstr *x, int p, CombineKey *key, int64_t *bytes)
{
    if (x->op != e->c->op || x->n_operands != 1 || !ir_shape_is_array(x->shape) ||
        x->n_control_predecessors > 0 || e->at[p].ctrl_succ)
        return false;
    *key = (CombineKey){ 0 };
    if (!e->c->key(x, e->opt, key))
        return false;
    *bytes = ir_shape_byte_size(x->shape);
    return *bytes >= 0 && *bytes <= e->limits.max_bytes;
}

static void visit(Engine *e, int p)
{
    IrInstr *x = e->order[p];
    CombineKey key;
    int64_t bytes = 0;
    collect_deps(e, x);
    if (!candidate(e, x, p, &key, &bytes)) {
        remember_deps(e, p);
        return;
    }
    int g = find_group(e, &key);
    if (g < 0)
        return;
    int b = e->groups[g].bucket;
    if (b >= 0) {
        int why = close_reason(e, b, bytes);
        if (why >= 0)
            close_group(e, g, (CombineClose)why);
    }
    if (e->groups[g].bucket < 0 && new_bucket(e, g) < 0)
        return;
    join(e, e->groups[g].bucket, p, bytes);
}

/* ------------------------------------------------------------------ */
/* Setting up and tearing down                                          */

static bool has_candidates(const IrComputation *comp, IrOpcode op)
{
    for (int i = 0; i < comp->n_instrs; i++)
        if (comp->instrs[i]->op == op)
            return true;
    return false;
}

/* False when out of memory (engine_free frees what was made). */
static bool engine_init(Engine *e, IrComputation *comp)
{
    int n = comp->n_instrs;
    e->comp = comp;
    e->n = 0;
    e->order = got(xmalloc_try(((size_t)n + 1) * sizeof *e->order));
    int n_post = e->order ? pass_post_order(comp, e->order) : -1;
    int lo, span = ir_computation_id_span(comp, &lo);
    e->at = got(xcalloc_try((size_t)n + 1, sizeof *e->at));
    if (!got(n_post >= 0 ? e : NULL) || !idmap_alloc(&e->pos, lo, lo + span - 1, n) || !e->at)
        return false;
    e->n = n_post;
    /* One pass over the instructions (each is a trip through memory on big
     * modules): the post order is usually the instruction order itself. */
    IntVec with_preds = { 0 };
    for (int i = 0; i < n; i++) {
        const IrInstr *x = comp->instrs[i];
        idmap_put(&e->pos, x->id, i < e->n && e->order[i] == x ? i : -1, i);
        if (x->n_control_predecessors > 0)
            ivec_push(&with_preds, i);
    }
    for (int p = 0; p < e->n; p++)
        if (p >= n || e->order[p] != comp->instrs[p])
            idmap_set_a(&e->pos, e->order[p]->id, p);
    for (int p = 0; p < n; p++)
        e->at[p].member_of = e->at[p].member_next = -1;
    for (int j = 0; j < with_preds.n; j++) {
        const IrInstr *x = comp->instrs[with_preds.v[j]];
        for (int k = 0; k < x->n_control_predecessors; k++) {
            int q = post_pos(e, x->control_predecessors[k]);
            if (q >= 0)
                e->at[q].ctrl_succ = true;
        }
    }
    free(with_preds.v);
    return !short_of_memory;
}

static void engine_free(Engine *e)
{
    for (int b = 0; b < e->n_buckets; b++)
        free(e->buckets[b].dep.v);
    free(e->order);
    idmap_free(&e->pos);
    free(e->at);
    free(e->pool.v);
    free(e->buckets);
    free(e->groups);
    free(e->table);
    free(e->mark);
    free(e->combined.v);
    free(e->deps.v);
    free(e->queue.v);
}

/* ------------------------------------------------------------------ */
/* Rewrite: building one combined collective                           */

typedef struct Rewrite {
    Engine *e;
    IrInstr **repl;         /* post-order position -> the member's replacement */
    IrInstr **block;        /* new instructions of all groups, group after group */
    int n_block, cap_block;
    int n_combined;         /* combined ops made so far: their names' suffix */
    int *block_start;       /* per bucket: its first instruction in block */
    int *block_count;       /* per bucket: how many */
    int *anchor;            /* per bucket: index in comp->instrs of its last member */
} Rewrite;

static void emit(Rewrite *rw, IrInstr *instr)
{
    if (!got(instr))
        return;
    if (rw->n_block == rw->cap_block &&
        !grow((void **)&rw->block, &rw->cap_block, rw->cap_block ? 2 * rw->cap_block : 64, sizeof *rw->block))
        return;
    instr->parent = rw->e->comp;
    rw->block[rw->n_block++] = instr;
}

/* A fresh name from base, reserved in the computation's name map. */
static const char *fresh_name(IrComputation *comp, const char *base)
{
    const char *name = ir_unique_name(comp, base);
    if (name)
        ir_namemap_put(comp->names, name, (void *)name);
    return name;
}

static const char *suffixed(IrComputation *comp, const char *name, const char *suffix)
{
    char buf[300];
    snprintf(buf, sizeof buf, "%.200s.%s", name, suffix);
    return fresh_name(comp, buf);
}

/* shape with dimensions a and b swapped (and its layout, as a bitcast would). */
static IrShape *swapped_shape(IrModule *m, const IrShape *shape, int64_t a, int64_t b)
{
    IrShape *s = ir_module_noted(m, ir_shape_clone(m->arena, shape));
    if (!s)
        return NULL;
    int64_t t = s->dims[a];
    s->dims[a] = s->dims[b];
    s->dims[b] = t;
    if (s->dim_kind) {
        uint8_t k = s->dim_kind[a];
        s->dim_kind[a] = s->dim_kind[b];
        s->dim_kind[b] = k;
    }
    for (int i = 0; s->has_layout && i < s->rank; i++)
        if (s->minor_to_major[i] == a || s->minor_to_major[i] == b)
            s->minor_to_major[i] = s->minor_to_major[i] == a ? b : a;
    return s;
}

static void copy_raw(IrModule *m, IrInstr *dst, const IrInstr *src, const char *name)
{
    const char *v = dst ? ir_raw_attr_get(src, name) : NULL;
    if (v)
        ir_raw_attr_set(m, dst, name, v);
}

/* transpose(x) swapping dimensions a and b, named name. */
static IrInstr *make_swap(Rewrite *rw, IrInstr *x, int64_t a, int64_t b, const char *name)
{
    IrModule *m = rw->e->comp->module;
    IrShape *shape = x ? swapped_shape(m, x->shape, a, b) : NULL;
    IrInstr *t = shape ? ir_instr_new(m, IR_OP_TRANSPOSE, name, shape, 1, &x) : NULL;
    int rank = t ? x->shape->rank : 0;
    int64_t *perm = t ? ir_module_noted(m, ARENA_ARRAY(m->arena, int64_t, (size_t)rank)) : NULL;
    if (!perm)
        return ir_module_noted(m, NULL);
    for (int i = 0; i < rank; i++)
        perm[i] = i == a ? b : i == b ? a : i;
    ir_instr_set_list(m, t, IR_LIST_DIMENSIONS, (IrIntList){ true, rank, perm });
    return t;
}

/* The tuple sharding of the members, when any member has a sharding. */
static void set_tuple_sharding(IrModule *m, IrInstr *combined, IrInstr *const *group, int n)
{
    bool any = false;
    for (int i = 0; i < n; i++)
        any |= ir_raw_attr_get(group[i], "sharding") != NULL;
    if (!any)
        return;
    StrBuf b;
    strbuf_init_may_fail(&b);
    strbuf_putc(&b, '{');
    for (int i = 0; i < n; i++) {
        const char *s = ir_raw_attr_get(group[i], "sharding");
        strbuf_printf(&b, "%s%s", i ? ", " : "", s ? s : "{replicated}");
    }
    strbuf_putc(&b, '}');
    if (ir_module_noted(m, b.nomem ? NULL : b.s))
        ir_raw_attr_set(m, combined, "sharding", b.s);
    strbuf_free(&b);
}

static IrInstr *make_combined(Rewrite *rw, IrInstr *const *group, int n, IrInstr **operands,
                              IrShape **shapes, int64_t dim)
{
    IrComputation *comp = rw->e->comp;
    IrModule *m = comp->module;
    /* Counting ourselves keeps ir_unique_name from probing .1, .2, ... for
     * every group (quadratic with thousands of groups). */
    char base[64];
    int k = rw->n_combined++;
    if (k == 0)
        snprintf(base, sizeof base, "%s.combined", ir_opcode_name(group[0]->op));
    else
        snprintf(base, sizeof base, "%s.combined.%d", ir_opcode_name(group[0]->op), k);
    IrShape *tuple = ir_module_noted(m, ir_shape_new_tuple(m->arena, n, shapes));
    const char *name = tuple ? fresh_name(comp, base) : NULL;
    IrInstr *c = ir_instr_new(m, group[0]->op, name, tuple, n, operands);
    ir_instr_copy_attrs(m, c, group[0]);
    if (!c || m->nomem)
        return NULL;
    c->info->loc = group[0]->info->loc;
    c->info->bools[IR_BOOL_CONSTRAIN_LAYOUT] = false;
    if (dim >= 0)
        c->lists[IR_LIST_DIMENSIONS].v[0] = dim;
    set_tuple_sharding(m, c, group, n);
    return c;
}

/* Element i of combined, transposed back when the member was swapped; the
 * last instruction made replaces the member and takes its name. */
static IrInstr *make_result(Rewrite *rw, IrInstr *combined, int i, IrInstr *member, int64_t d,
                            int64_t dim)
{
    IrComputation *comp = rw->e->comp;
    IrModule *m = comp->module;
    bool swap = dim >= 0 && d != dim;
    const char *gname = swap ? suffixed(comp, member->name, "element") : member->name;
    IrInstr *gte = ir_instr_new(m, IR_OP_GET_TUPLE_ELEMENT, gname, combined->shape->elements[i], 1,
                                &combined);
    if (!gte)
        return NULL;
    ir_instr_set_int(m, gte, IR_INT_INDEX, i);
    gte->info->loc = member->info->loc;
    copy_raw(m, gte, member, "metadata");
    emit(rw, gte);
    if (!swap) {
        copy_raw(m, gte, member, "sharding");
        return gte;
    }
    IrInstr *back = make_swap(rw, gte, d, dim, member->name);
    if (!back)
        return NULL;
    back->info->loc = member->info->loc;
    copy_raw(m, back, member, "metadata");
    copy_raw(m, back, member, "sharding");
    emit(rw, back);
    return back;
}

static void build_group(Rewrite *rw, IrInstr *const *group, int n, const int *positions)
{
    const Combiner *c = rw->e->c;
    IrModule *m = rw->e->comp->module;
    int64_t dim = c->dimension ? c->dimension(group, n) : -1;
    IrInstr **operands = got(xmalloc_try((size_t)n * sizeof *operands));
    IrShape **shapes = got(xmalloc_try((size_t)n * sizeof *shapes));
    for (int i = 0; operands && shapes && i < n; i++) {
        IrInstr *x = group[i];
        int64_t d = dim_of(x);
        operands[i] = x->operands[0];
        shapes[i] = x->shape;
        if (dim < 0 || d == dim)
            continue;
        operands[i] = make_swap(rw, x->operands[0], d, dim, suffixed(rw->e->comp, x->name, "operand"));
        copy_raw(m, operands[i], x, "metadata");
        emit(rw, operands[i]);
        shapes[i] = swapped_shape(m, x->shape, d, dim);
    }
    bool out = short_of_memory || m->nomem;
    IrInstr *combined = out ? NULL : make_combined(rw, group, n, operands, shapes, dim);
    emit(rw, combined);
    for (int i = 0; combined && i < n; i++)
        rw->repl[positions[i]] = make_result(rw, combined, i, group[i], dim_of(group[i]), dim);
    free(operands);
    free(shapes);
}

/* Builds bucket b's new instructions and records where they go. */
static void combine_bucket(Rewrite *rw, int b)
{
    Engine *e = rw->e;
    const Bucket *bk = &e->buckets[b];
    IrInstr **group = got(xmalloc_try((size_t)bk->n_members * sizeof *group));
    int *positions = got(xmalloc_try((size_t)bk->n_members * sizeof *positions));
    int n = 0, anchor = -1;
    if (!group || !positions) {
        free(group);
        free(positions);
        return;
    }
    for (int p = bk->first; p >= 0; p = e->at[p].member_next) {
        group[n] = e->order[p];
        positions[n++] = p;
        int index = 0;
        idmap_get(&e->pos, e->order[p]->id, NULL, &index);
        if (index > anchor)
            anchor = index;
    }
    rw->block_start[b] = rw->n_block;
    build_group(rw, group, n, positions);
    rw->block_count[b] = rw->n_block - rw->block_start[b];
    rw->anchor[b] = anchor;
    e->stats->groups_formed++;
    e->stats->fired++;
    free(group);
    free(positions);
}

/* ------------------------------------------------------------------ */
/* Rewrite: the new instruction order                                  */

/* The new instruction sequence, with what the reordering needs of each
 * instruction recorded as it is placed, so that no later step reads the
 * instructions again (on big modules each read is a trip through memory). */
typedef struct Spliced {
    IrInstr **seq;
    int n;
    int *ids;               /* seq[i]->id */
    int *dep_first;         /* seq[i]'s operands and control predecessors: */
    IntVec dep_ids;         /*   their ids, dep_ids[dep_first[i] .. dep_first[i+1]) */
} Spliced;

/* Points x's uses of combined members at their replacements and records x. */
static void place(Rewrite *rw, Spliced *sp, IrInstr *x)
{
    sp->ids[sp->n] = x->id;
    sp->dep_first[sp->n] = sp->dep_ids.n;
    for (int k = 0; k < x->n_operands; k++) {
        int p = post_pos(rw->e, x->operands[k]);
        if (p >= 0 && rw->repl[p])
            x->operands[k] = rw->repl[p];
        ivec_push(&sp->dep_ids, x->operands[k]->id);
    }
    for (int k = 0; k < x->n_control_predecessors; k++)
        ivec_push(&sp->dep_ids, x->control_predecessors[k]->id);
    sp->seq[sp->n++] = x;
}

/* The computation's instructions with each combined group's block at its
 * anchor and its members left out, every use of a member pointed at its
 * replacement (in the same pass over the instructions).  False, comp
 * untouched, when out of memory for sp (one short of memory for dep_ids
 * has edited comp). */
static bool splice(Rewrite *rw, Spliced *sp)
{
    Engine *e = rw->e;
    IrComputation *comp = e->comp;
    size_t cap = (size_t)comp->n_instrs + (size_t)rw->n_block + 1;
    *sp = (Spliced){ .seq = got(xmalloc_try(cap * sizeof *sp->seq)),
                     .ids = got(xmalloc_try(cap * sizeof *sp->ids)),
                     .dep_first = got(xmalloc_try((cap + 1) * sizeof *sp->dep_first)) };
    if (short_of_memory)
        return false;
    for (int i = 0; i < comp->n_instrs; i++) {
        IrInstr *x = comp->instrs[i];
        int p = post_pos(e, x);
        int b = p >= 0 ? e->at[p].member_of : -1;
        if (b < 0 || !rw->repl[p]) {
            place(rw, sp, x);
            continue;
        }
        x->dead = true;
        if (rw->anchor[b] == i)
            for (int k = 0; k < rw->block_count[b]; k++)
                place(rw, sp, rw->block[rw->block_start[b] + k]);
    }
    sp->dep_first[sp->n] = sp->dep_ids.n;
    int p = post_pos(e, comp->root);
    if (p >= 0 && rw->repl[p])
        comp->root = rw->repl[p];
    return !short_of_memory;
}

static void spliced_free(Spliced *sp)
{
    free(sp->seq);
    free(sp->ids);
    free(sp->dep_first);
    free(sp->dep_ids.v);
}

typedef struct Graph {
    IdMap index;            /* id -> a: index in seq */
    int *start, *users;     /* CSR: users of seq[i] are users[start[i] .. start[i+1]) */
} Graph;

/* The users of every placed instruction among the placed ones, from the
 * recorded ids alone.  They are comp's old instructions and the new ones,
 * numbered after every old id.  False when out of memory (g can still be
 * freed). */
static bool build_graph(Graph *g, const IrComputation *comp, const Spliced *sp)
{
    int n = sp->n, lo;
    ir_computation_id_span(comp, &lo);
    *g = (Graph){ 0 };
    bool ok = idmap_alloc(&g->index, lo, comp->module->next_instr_id - 1, n);
    int *at = got(xmalloc_try(((size_t)sp->dep_ids.n + 1) * sizeof *at)); /* dep_ids by seq index, -1 outside */
    int *count = got(xcalloc_try((size_t)n + 1, sizeof *count));
    g->start = got(xcalloc_try((size_t)n + 2, sizeof *g->start));
    if (!ok || !at || !count || !g->start) {
        free(at);
        free(count);
        return false;
    }
    for (int i = 0; i < n; i++)
        idmap_put(&g->index, sp->ids[i], i, 0);
    for (int k = 0; k < sp->dep_ids.n; k++)
        if (idmap_get(&g->index, sp->dep_ids.v[k], &at[k], NULL))
            count[at[k]]++;
        else
            at[k] = -1;
    for (int i = 0; i < n; i++)
        g->start[i + 1] = g->start[i] + count[i];
    g->users = got(xmalloc_try(((size_t)g->start[n] + 1) * sizeof *g->users));
    if (!g->users) {
        free(at);
        free(count);
        return false;
    }
    memset(count, 0, ((size_t)n + 1) * sizeof *count);
    for (int i = 0; i < n; i++)
        for (int k = sp->dep_first[i]; k < sp->dep_first[i + 1]; k++)
            if (at[k] >= 0)
                g->users[g->start[at[k]] + count[at[k]]++] = i;
    free(at);
    free(count);
    return true;
}

/* Depth-first over users from the last instruction back: an instruction is
 * emitted once all its users are, so the reversed emission is a valid order
 * that leaves an already valid order as it is.  False on a cycle, or when
 * out of memory (short_of_memory set). */
static bool reorder(const IrComputation *comp, const Spliced *sp, IrInstr **out)
{
    IrInstr *const *seq = sp->seq;
    int n = sp->n;
    Graph g;
    bool built = build_graph(&g, comp, sp);
    char *state = got(xcalloc_try((size_t)n + 1, 1));        /* 0 new, 1 on the stack, 2 emitted */
    int *stack = got(xmalloc_try(((size_t)n + 1) * sizeof *stack));
    int *cursor = got(xcalloc_try((size_t)n + 1, sizeof *cursor));
    int n_out = 0;
    bool acyclic = built && state && stack && cursor;
    for (int root = n - 1; acyclic && root >= 0; root--) {
        if (state[root])
            continue;
        int top = 0;
        stack[top++] = root;
        state[root] = 1;
        while (top > 0) {
            int v = stack[top - 1];
            if (g.start[v] + cursor[v] < g.start[v + 1]) {
                int u = g.users[g.start[v] + cursor[v]++];
                acyclic &= state[u] != 1;
                if (state[u] == 0) {
                    state[u] = 1;
                    stack[top++] = u;
                }
                continue;
            }
            state[v] = 2;
            out[n - 1 - n_out++] = seq[v];
            top--;
        }
    }
    free(state);
    free(stack);
    free(cursor);
    idmap_free(&g.index);
    free(g.start);
    free(g.users);
    return acyclic;
}

static bool install(Rewrite *rw, const Spliced *sp, Error *err)
{
    IrComputation *comp = rw->e->comp;
    int n = sp->n;
    IrInstr **order = ARENA_ARRAY(comp->module->arena, IrInstr *, (size_t)n + 1);
    if (!order)
        return error_nomem(err, comp->loc);
    bool acyclic = reorder(comp, sp, order);
    if (short_of_memory)
        return error_nomem(err, comp->loc);
    if (!acyclic)
        return error_set(err, ERR_INTERNAL, comp->loc,
                         "combiner: combining made a cycle in computation %s", comp->name);
    comp->instrs = order;
    comp->n_instrs = n;
    comp->cap_instrs = n + 1;
    return true;
}

static bool rewrite(Engine *e, Error *err)
{
    int nb = e->n_buckets;
    Rewrite rw = { .e = e };
    rw.repl = got(xcalloc_try((size_t)e->n + 1, sizeof *rw.repl));
    rw.block_start = got(xcalloc_try((size_t)nb + 1, sizeof(int)));
    rw.block_count = got(xcalloc_try((size_t)nb + 1, sizeof(int)));
    rw.anchor = got(xcalloc_try((size_t)nb + 1, sizeof(int)));
    for (int i = 0; i < e->combined.n && !short_of_memory; i++)
        combine_bucket(&rw, e->combined.v[i]);
    /* Nothing of comp has changed yet: out of memory, it stays as it is. */
    Spliced sp = { 0 };
    IrModule *m = e->comp->module;
    bool ok = !short_of_memory && !m->nomem && splice(&rw, &sp) && install(&rw, &sp, err);
    if (!ok && (short_of_memory || m->nomem))
        error_nomem(err, e->comp->loc);
    spliced_free(&sp);
    free(rw.repl);
    free(rw.block);
    free(rw.block_start);
    free(rw.block_count);
    free(rw.anchor);
    return ok;
}

/* ------------------------------------------------------------------ */
/* The engine and the driver                                            */

bool combine_run(IrComputation *comp, const Combiner *c, const PassOptions *opt, CombineLimits limits,
                 PassStats *stats, bool *changed, Error *err)
{
    if (!has_candidates(comp, c->op))
        return true;
    PassStats scratch = { 0 };
    Engine e = { .c = c, .opt = opt, .limits = limits, .stats = stats ? stats : &scratch };
    short_of_memory = false;
    if (!engine_init(&e, comp)) {
        engine_free(&e);
        return error_nomem(err, comp->loc);
    }
    for (int p = 0; p < e.n && !short_of_memory; p++)
        visit(&e, p);
    for (int b = 0; b < e.n_buckets; b++)
        if (e.buckets[b].open)
            close_group(&e, e.buckets[b].group, CLOSE_END);
    bool ok = !short_of_memory || error_nomem(err, comp->loc);
    if (ok && e.combined.n > 0) {
        ok = rewrite(&e, err);
        *changed = true;
    }
    engine_free(&e);
    return ok;
}

PassResult combine_pass(IrModule *m, const Combiner *c, const PassOptions *opt, PassStats *stats,
                        Error *err)
{
    PassStats scratch = { 0 };
    stats = stats ? stats : &scratch;
    if (opt->combine_threshold_bytes <= 0 || opt->combine_threshold_count <= 0) {
        stats->skipped++;
        return PASS_UNCHANGED;
    }
    PassScan scan;
    if (!pass_scan(m, c->op, &scan, err))
        return PASS_FAILED;
    if (scan.constrained) {
        pass_scan_free(&scan);
        stats->skipped++;
        return PASS_UNCHANGED;
    }
    CombineLimits limits = { opt->combine_threshold_count, opt->combine_threshold_bytes };
    bool changed = false, ok = true;
    for (int i = 0; ok && i < scan.n_comps; i++) {
        if (c->skips_while_under_fsdp && opt->neuron_fsdp && scan.in_while[scan.comps[i]->id])
            continue;
        ok = combine_run(scan.comps[i], c, opt, limits, stats, &changed, err);
    }
    pass_scan_free(&scan);
    return !ok ? PASS_FAILED : changed ? PASS_CHANGED : PASS_UNCHANGED;
}
