/* verify_collectives.c: the verifier's rules for collective instructions
 * (hlo-reference.md section 6), which checker_for() and ir_verify_instr()
 * in verify.c dispatch to: replica groups that partition the participants
 * and source-target pairs (verify_collective_attrs); the shapes of
 * all-gather, reduce-scatter, all-reduce, all-to-all, ragged-all-to-all,
 * collective-permute and the -start forms of all-gather, all-reduce and
 * collective-permute; the reducers' types; send, recv, send-done and
 * recv-done with their channel_id and source-target pairs.
 *
 * Collective shape rules need the group size (section 6.3).  Real dumps often
 * leave replica_count / num_partitions out of the header, so when the size
 * cannot be known the check falls back to what is certain (a divisor of the
 * size) instead of rejecting a valid module.  Like XLA's verifier, a group
 * size of 1 is treated as "nothing to check". */
#include "verify_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The opcode whose attributes the instruction carries: the wrapped op for a
 * sugared -start, else the instruction's own. */
static IrOpcode op_of(const IrInstr *in)
{
    return in->op == IR_OP_ASYNC_START && verify_is_sugared_async(in) ? in->info->async_wrapped : in->op;
}

/* ------------------------------------------------------------------ */
/* Collectives: group modes and sizes (hlo-reference.md section 6.3)    */

typedef enum GroupMode {
    MODE_CROSS_REPLICA, MODE_CROSS_PARTITION, MODE_CROSS_REPLICA_AND_PARTITION, MODE_FLATTENED_ID, MODE_INVALID
} GroupMode;

enum {
    COLL_GROUPS = 1,        /* has replica_groups */
    COLL_UNIFORM = 2,       /* all groups must have the same size */
    COLL_PAIRS = 4,         /* has source_target_pairs */
    COLL_GLOBAL_FLAG = 8,   /* has the use_global_device_ids flag */
    COLL_PARTIAL = 16,      /* groups may leave devices out (they get zeros) */
};

static const unsigned char coll_traits[IR_OP_COUNT] = {
    [IR_OP_ALL_GATHER] = COLL_GROUPS | COLL_UNIFORM | COLL_GLOBAL_FLAG,
    [IR_OP_ALL_GATHER_START] = COLL_GROUPS | COLL_UNIFORM | COLL_GLOBAL_FLAG,
    [IR_OP_REDUCE_SCATTER] = COLL_GROUPS | COLL_UNIFORM | COLL_GLOBAL_FLAG,
    [IR_OP_ALL_REDUCE] = COLL_GROUPS | COLL_GLOBAL_FLAG,
    [IR_OP_ALL_REDUCE_START] = COLL_GROUPS | COLL_GLOBAL_FLAG,
    [IR_OP_ALL_TO_ALL] = COLL_GROUPS | COLL_UNIFORM,
    [IR_OP_RAGGED_ALL_TO_ALL] = COLL_GROUPS | COLL_UNIFORM,
    [IR_OP_COLLECTIVE_BROADCAST] = COLL_GROUPS | COLL_PARTIAL,
    [IR_OP_COLLECTIVE_PERMUTE] = COLL_PAIRS,
    [IR_OP_COLLECTIVE_PERMUTE_START] = COLL_PAIRS,
};

static GroupMode group_mode(const IrInstr *in, IrOpcode op)
{
    bool channel = in->ints[IR_INT_CHANNEL_ID].present;
    bool global = in->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS];
    if (!(coll_traits[op] & COLL_GLOBAL_FLAG))
        return channel ? MODE_CROSS_PARTITION : MODE_CROSS_REPLICA;
    if (!channel)
        return global ? MODE_INVALID : MODE_CROSS_REPLICA;
    return global ? MODE_FLATTENED_ID : MODE_CROSS_REPLICA_AND_PARTITION;
}

static const IrModule *module_of(const IrInstr *in)
{
    return in->parent ? in->parent->module : NULL;
}

/* How many ids the groups must cover, from the header; -1 when the header
 * does not say.  Like XLA, a count of 1 is "not set" and checks nothing. */
static int64_t participant_count(const IrModule *m, GroupMode mode)
{
    if (!m)
        return -1;
    IrOptInt r = m->replica_count, p = m->num_partitions;
    int64_t count = -1;
    switch (mode) {
    case MODE_CROSS_REPLICA:
    case MODE_CROSS_REPLICA_AND_PARTITION:
        count = r.present ? r.v : -1;
        break;
    case MODE_CROSS_PARTITION:
        count = p.present ? p.v : -1;
        break;
    case MODE_FLATTENED_ID:
        count = r.present || p.present ? (r.present ? r.v : 1) * (p.present ? p.v : 1) : -1;
        break;
    case MODE_INVALID:
        break;
    }
    return count > 1 ? count : -1;
}

/* Size of every group, or -1 when there are none or they differ. */
static int64_t uniform_group_size(const IrReplicaGroups *g)
{
    if (g->n_groups == 0)
        return -1;
    for (int i = 1; i < g->n_groups; i++)
        if (g->group_sizes[i] != g->group_sizes[0])
            return -1;
    return g->group_sizes[0];
}

typedef struct GroupSize {
    int64_t exact;      /* participants per group; -1 unknown */
    int64_t factor;     /* a known divisor of the size (>= 1) */
} GroupSize;

static GroupSize group_size(const IrModule *m, const IrInstr *in, IrOpcode op)
{
    GroupSize gs = { -1, 1 };
    IrOptInt r = m ? m->replica_count : (IrOptInt){ false, 0 };
    IrOptInt p = m ? m->num_partitions : (IrOptInt){ false, 0 };
    const IrReplicaGroups *g = &in->info->replica_groups;
    int64_t size = uniform_group_size(g);
    switch (group_mode(in, op)) {
    case MODE_CROSS_REPLICA:
        gs.exact = g->n_groups ? size : r.present ? r.v : -1;
        break;
    case MODE_CROSS_PARTITION:
        gs.exact = g->n_groups ? size : p.present ? p.v : -1;
        break;
    case MODE_CROSS_REPLICA_AND_PARTITION: {
        int64_t replicas = g->n_groups ? size : r.present ? r.v : -1;
        if (replicas > 0 && p.present)
            gs.exact = replicas * p.v;
        else if (replicas > 0)
            gs.factor = replicas;       /* times an unknown partition count */
        break;
    }
    case MODE_FLATTENED_ID:
        gs.exact = g->n_groups ? size : -1;
        break;
    case MODE_INVALID:
        break;
    }
    if (gs.exact > 0)
        gs.factor = gs.exact;
    return gs;
}

int64_t ir_collective_group_size(const IrModule *m, const IrInstr *instr)
{
    IrOpcode op = op_of(instr);
    if (!(coll_traits[op] & COLL_GROUPS))
        return -1;
    return group_size(m, instr, op).exact;
}

/* Ids of groups that may leave devices out: below count when it is known,
 * else up to the largest id named (capped: such a module names ids no
 * device count reaches). */
static int64_t partial_id_limit(const IrReplicaGroups *g, int64_t count)
{
    if (count > 0)
        return count;
    int64_t max = 0;
    for (int i = 0; i < g->n_groups; i++)
        for (int j = 0; j < g->group_sizes[i]; j++)
            if (g->groups[i][j] >= max)
                max = g->groups[i][j] + 1;
    return max < ((int64_t)1 << 24) ? max : (int64_t)1 << 24;
}

/* Ids are 0..total-1, each once, and cover count participants if known;
 * with partial, ids are below count (if known), each at most once. */
static bool check_group_ids(const IrInstr *in, const IrReplicaGroups *g, int64_t total, int64_t count,
                            bool partial, Error *err)
{
    int64_t n = partial ? partial_id_limit(g, count) : total;
    bool *seen = xmalloc_try((size_t)(n > 0 ? n : 1));
    if (!seen)
        return verify_out_of_memory(in->info->loc, err);
    memset(seen, 0, (size_t)(n > 0 ? n : 1));
    bool ok = true;
    for (int i = 0; ok && i < g->n_groups; i++)
        for (int j = 0; ok && j < g->group_sizes[i]; j++) {
            long long id = (long long)g->groups[i][j];
            if (id < 0 || (count > 0 && id >= count) || (partial && id >= n))
                ok = verify_fail(in, err, "replica_groups id %lld out of range for %lld participants", id,
                                 (long long)(count > 0 ? count : n));
            else if (id >= total && !partial)
                ok = verify_fail(in, err, "replica_groups must name ids 0..%lld once each, found id %lld",
                                 (long long)total - 1, id);
            else if (seen[id])
                ok = verify_fail(in, err, "replica_groups name id %lld twice", id);
            else
                seen[id] = true;
        }
    free(seen);
    if (ok && count > 0 && total != count && !partial)
        return verify_fail(in, err, "replica_groups cover %lld ids but there are %lld participants", (long long)total,
                           (long long)count);
    return ok;
}

static bool check_replica_groups(const IrInstr *in, IrOpcode op, Error *err)
{
    GroupMode mode = group_mode(in, op);
    const IrReplicaGroups *g = &in->info->replica_groups;
    if (mode == MODE_INVALID)
        return verify_fail(in, err, "use_global_device_ids=true requires a channel_id");
    if (g->n_groups == 0 && mode == MODE_FLATTENED_ID)
        return verify_fail(in, err, "replica_groups must not be empty with use_global_device_ids=true");
    int64_t total = 0;
    for (int i = 0; i < g->n_groups; i++) {
        if (g->group_sizes[i] <= 0)
            return verify_fail(in, err, "replica group %d is empty", i);
        if ((coll_traits[op] & COLL_UNIFORM) && g->group_sizes[i] != g->group_sizes[0])
            return verify_fail(in, err, "replica groups must have the same size: group %d has %d ids, group 0 has %d",
                               i, g->group_sizes[i], g->group_sizes[0]);
        total += g->group_sizes[i];
    }
    if (total == 0)
        return true;
    return check_group_ids(in, g, total, participant_count(module_of(in), mode), coll_traits[op] & COLL_PARTIAL,
                           err);
}

/* Marks id in seen (n entries); false if it is out of range or repeated. */
static bool mark_pair_id(const IrInstr *in, bool *seen, int64_t n, int64_t id, const char *attr, const char *what,
                         Error *err)
{
    if (id < 0 || id >= n)
        return verify_fail(in, err, "%s %s %lld out of range for %lld participants", attr, what, (long long)id,
                           (long long)n);
    if (seen[id])
        return verify_fail(in, err, "%s name %s %lld twice", attr, what, (long long)id);
    seen[id] = true;
    return true;
}

/* Each device sends at most once and receives at most once, to and from
 * ids below count (when the header gives it). */
static bool check_pair_list(const IrInstr *in, const char *attr, int64_t count, const int64_t (*pairs)[2], int n_pairs,
                            Error *err)
{
    int64_t n = count, limit = (int64_t)1 << 24;
    for (int i = 0; count < 0 && i < n_pairs; i++)
        for (int k = 0; k < 2; k++)
            if (pairs[i][k] >= n)
                n = pairs[i][k] + 1;
    if (n > limit)
        n = limit;
    bool *seen = xmalloc_try(2 * (size_t)(n > 0 ? n : 1));
    if (!seen)
        return verify_out_of_memory(in->info->loc, err);
    memset(seen, 0, 2 * (size_t)(n > 0 ? n : 1));
    bool ok = true;
    for (int i = 0; ok && i < n_pairs; i++)
        ok = mark_pair_id(in, seen, n, pairs[i][0], attr, "source", err) &&
             mark_pair_id(in, seen + n, n, pairs[i][1], attr, "target", err);
    free(seen);
    return ok;
}

static bool check_source_target_pairs(const IrInstr *in, IrOpcode op, Error *err)
{
    return check_pair_list(in, "source_target_pairs", participant_count(module_of(in), group_mode(in, op)),
                           (const int64_t (*)[2])in->info->source_target_pairs, in->info->n_source_target_pairs, err);
}

bool verify_collective_attrs(const IrInstr *in, Error *err)
{
    IrOpcode op = op_of(in);
    if (coll_traits[op] & COLL_GROUPS)
        return check_replica_groups(in, op, err);
    if (coll_traits[op] & COLL_PAIRS)
        return check_source_target_pairs(in, op, err);
    return true;
}

/* ------------------------------------------------------------------ */
/* Collectives: shapes                                                  */

/* all-gather multiplies dimension d by the group size, reduce-scatter
 * divides it: big = small x size.  With the size unknown, big must still be
 * a multiple of small by a multiple of the known factor. */
static bool check_shard_dim(const IrInstr *in, const IrShape *x, const IrShape *res, int64_t d, GroupSize gs,
                            bool scatter, Error *err)
{
    int64_t big = scatter ? x->dims[d] : res->dims[d], small = scatter ? res->dims[d] : x->dims[d];
    const char *verb = scatter ? "divided" : "multiplied";
    if (big < 0 || small < 0)
        return true;
    if (gs.exact >= 1 && big != small * gs.exact)
        return verify_fail(in, err, "dimension %lld of result %s must be that of operand %s %s by the group size %lld",
                           (long long)d, verify_shape_text(res), verify_shape_text(x), verb, (long long)gs.exact);
    bool ok = small == 0 ? big == 0 : big % small == 0 && (big / small) % gs.factor == 0;
    if (ok)
        return true;
    if (gs.factor == 1)
        return verify_fail(in, err, "dimension %lld of result %s must be that of operand %s %s by a whole number",
                           (long long)d, verify_shape_text(res), verify_shape_text(x), verb);
    return verify_fail(in, err, "dimension %lld of result %s must be that of operand %s %s by a multiple of %lld",
                       (long long)d, verify_shape_text(res), verify_shape_text(x), verb, (long long)gs.factor);
}

/* One operand of all-gather / reduce-scatter against its result. */
static bool check_shard(const IrInstr *in, const IrShape *x, const IrShape *res, int64_t d, GroupSize gs,
                        bool scatter, Error *err)
{
    if (!verify_need_array(in, x, "operand", err) || !verify_need_array(in, res, "result", err) ||
        !verify_need_same_type(in, res, x, err))
        return false;
    if (x->rank == 0 && res->rank == 0 && in->n_operands > 1)
        return true;    /* a scalar riding along a variadic one, as Neuron's dumps do */
    if (d >= x->rank)
        return verify_fail(in, err, "dimensions={%lld} out of range for %s", (long long)d, verify_shape_text(x));
    bool ok = res->rank == x->rank;
    for (int k = 0; ok && k < x->rank; k++)
        ok = k == d || verify_dim_eq(res->dims[k], x->dims[k]);
    if (!ok)
        return verify_fail(in, err, "result %s does not match operand %s outside dimension %lld",
                           verify_shape_text(res), verify_shape_text(x), (long long)d);
    return check_shard_dim(in, x, res, d, gs, scatter, err);
}

/* One array operand gives an array result, as XLA's shape inference has
 * it for all-reduce, all-gather and reduce-scatter: a 1-tuple is refused. */
static bool check_not_one_tuple(const IrInstr *in, const IrShape *out, Error *err)
{
    if (in->n_operands == 1 && ir_shape_is_tuple(out) && ir_shape_is_array(verify_operand_shape(in, 0)))
        return verify_fail(in, err, "one operand %s gives an array result, not the tuple %s",
                           verify_shape_text(verify_operand_shape(in, 0)), verify_shape_text(out));
    return true;
}

static bool check_gather_like(const IrInstr *in, const IrShape *out, bool scatter, Error *err)
{
    const IrIntList *l = &in->lists[IR_LIST_DIMENSIONS];
    int n = in->n_operands;
    if (n < 1)
        return verify_fail(in, err, "expects at least one operand");
    if (l->n != 1)
        return verify_fail(in, err, "dimensions=%s must name exactly one dimension", verify_list_text(l));
    if (l->v[0] < 0)
        return verify_fail(in, err, "dimensions=%s out of range", verify_list_text(l));
    if (!check_not_one_tuple(in, out, err))
        return false;
    GroupSize gs = group_size(module_of(in), in, op_of(in));
    for (int i = 0; i < n; i++) {
        const IrShape *res = verify_result_part(in, out, n, i, err);
        if (!res || !check_shard(in, verify_operand_shape(in, i), res, l->v[0], gs, scatter, err))
            return false;
    }
    return true;
}

bool verify_all_gather(const IrInstr *in, const IrShape *out, Error *err)
{
    return check_gather_like(in, out, false, err);
}

/* all-gather-start: (operands, results). */
bool verify_all_gather_start(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *t = verify_start_tuple(in, out, err);
    if (!t)
        return false;
    if (!verify_operands_match(in, t->elements[0]))
        return verify_fail(in, err, "element 0 %s of the result must match the operands",
                           verify_shape_text(t->elements[0]));
    return check_gather_like(in, t->elements[1], false, err);
}

/* A collective's reduction computation folds elements of each operand's
 * type: both parameters and the root are scalars of that type.  (A pass
 * that retypes a collective but not its reducer leaves a module that
 * would otherwise run, converting silently, and be blamed on the input.) */
static bool check_reducer_types(const IrInstr *in, Error *err)
{
    const IrComputation *c = in->info->comps[IR_COMP_TO_APPLY];
    if (!c || !c->root)
        return true;
    for (int k = 0; k < in->n_operands; k++) {
        const IrShape *s = verify_operand_shape(in, k);
        if (!ir_shape_is_array(s))
            continue;
        for (int p = 0; p < c->n_params && c->params; p++)
            if (c->params[p] && c->params[p]->shape->type != s->type)
                return verify_fail(in, err,
                                   "to_apply=%s parameter %d is %s, but operand %d is %s: the reduction must take "
                                   "the operand's element type", c->name, p, verify_shape_text(c->params[p]->shape), k,
                                   verify_shape_text(s));
        if (!verify_is_scalar(c->root->shape) || c->root->shape->type != s->type)
            return verify_fail(in, err,
                               "to_apply=%s returns %s, but operand %d is %s: the reduction must return a scalar "
                               "of the operand's element type", c->name, verify_shape_text(c->root->shape), k,
                               verify_shape_text(s));
    }
    return true;
}

bool verify_reduce_scatter(const IrInstr *in, const IrShape *out, Error *err)
{
    return verify_callee_arity(in, IR_COMP_TO_APPLY, 2, true, err) && check_reducer_types(in, err) &&
           check_gather_like(in, out, true, err);
}

bool verify_all_reduce(const IrInstr *in, const IrShape *out, Error *err)
{
    return verify_callee_arity(in, IR_COMP_TO_APPLY, 2, true, err) && check_reducer_types(in, err) &&
           check_not_one_tuple(in, out, err) && verify_same_as_operands(in, out, err);
}

/* all-to-all: same shapes; a split dimension must divide by the group size. */
bool verify_all_to_all(const IrInstr *in, const IrShape *out, Error *err)
{
    if (!verify_same_as_operands(in, out, err))
        return false;
    const IrIntList *l = &in->lists[IR_LIST_DIMENSIONS];
    if (!l->present || in->n_operands != 1 || !ir_shape_is_array(verify_operand_shape(in, 0)))
        return true;
    int64_t d = 0;
    const IrShape *x = verify_operand_shape(in, 0);
    if (!verify_single_dim(in, x, &d, err))
        return false;
    int64_t size = group_size(module_of(in), in, op_of(in)).exact;
    if (size > 1 && x->dims[d] >= 0 && x->dims[d] % size != 0)
        return verify_fail(in, err, "dimension %lld of %s is not divisible by the group size %lld", (long long)d,
                           verify_shape_text(x), (long long)size);
    return true;
}

/* The one-operand form keeps the shape; the 4-operand in-place form is not
 * checked. */
bool verify_collective_permute(const IrInstr *in, const IrShape *out, Error *err)
{
    if (in->n_operands == 4)
        return true;
    return verify_same_as_operands(in, out, err);
}

bool verify_collective_permute_start(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *t = verify_start_tuple(in, out, err);
    if (!t || in->n_operands != 1)
        return t != NULL;
    const IrShape *x = verify_operand_shape(in, 0);
    if (!verify_same_shape(t->elements[0], x) || !verify_same_shape(t->elements[1], x))
        return verify_fail(in, err, "result %s must start with two copies of %s", verify_shape_text(out),
                           verify_shape_text(x));
    return true;
}

/* ------------------------------------------------------------------ */
/* Point to point and ragged collectives                                */

/* The value of key in frontend_attributes text {k1=v1,k2="v2"}: where it
 * starts, or NULL. */
static const char *frontend_value(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
        const char *q = verify_skip_blanks(p + n);
        if (p > text && (p[-1] == '{' || p[-1] == ',' || p[-1] == ' ') && *q == '=')
            return verify_skip_blanks(q + 1);
    }
    return NULL;
}

/* One {a,b}: stores it and returns the text after it, or NULL. */
static const char *parse_pair(const char *s, int64_t pair[2])
{
    s = verify_skip_blanks(s);
    if (*s++ != '{')
        return NULL;
    for (int k = 0; k < 2; k++) {
        char *end;
        s = verify_skip_blanks(s);
        errno = 0;
        pair[k] = strtoll(s, &end, 10);
        if (end == s || errno)
            return NULL;
        s = verify_skip_blanks(end);
        if (*s++ != (k ? '}' : ','))
            return NULL;
    }
    return s;
}

/* "{{a,b},{c,d}}" or {{a,b},{c,d}}; {} is no pairs. */
static int parse_pair_list(const char *s, int64_t (*pairs)[2], int max)
{
    bool quoted = *s == '"';
    s = verify_skip_blanks(s + quoted);
    if (*s++ != '{')
        return -2;
    int n = 0;
    bool more = *verify_skip_blanks(s) != '}';
    while (more) {
        int64_t pair[2];
        if (!(s = parse_pair(s, pair)))
            return -2;
        if (n < max)
            memcpy(pairs[n], pair, sizeof pair);
        n++;
        s = verify_skip_blanks(s);
        more = *s == ',';
        s += more;
    }
    s = verify_skip_blanks(s);
    if (*s++ != '}')
        return -2;
    s = verify_skip_blanks(s);
    return !quoted || *s == '"' ? n : -2;
}

int ir_send_recv_pairs(const IrInstr *instr, int64_t (*pairs)[2], int max)
{
    const char *text = ir_raw_attr_get(instr, "frontend_attributes");
    const char *v = text ? frontend_value(text, "_xla_send_recv_source_target_pairs") : NULL;
    return v ? parse_pair_list(v, pairs, max) : -1;
}

static bool is_p2p_tuple(const IrShape *s, const IrShape *data)
{
    s = verify_unbuffer(s);
    return s->type == IR_TYPE_TUPLE && s->n_elements == 3 && (!data || verify_same_shape(s->elements[0], data)) &&
           verify_is_scalar(s->elements[1]) && s->elements[1]->type == IR_TYPE_U32 &&
           s->elements[2]->type == IR_TYPE_TOKEN;
}

/* A channel_id, and pairs of ids in range, each source and target once:
 * partition ids with a channel_id above 0, replica ids otherwise (XLA's
 * send/recv thunks). */
static bool check_p2p_pairs(const IrInstr *in, Error *err)
{
    if (!in->ints[IR_INT_CHANNEL_ID].present)
        return verify_fail(in, err, "needs a channel_id");
    int n = ir_send_recv_pairs(in, NULL, 0);
    if (n == -2)
        return verify_fail(in, err, "frontend attribute _xla_send_recv_source_target_pairs must be a list of "
                           "{source,target} pairs");
    if (n <= 0)
        return true;
    int64_t (*pairs)[2] = xmalloc_try((size_t)n * sizeof *pairs);
    if (!pairs)
        return verify_out_of_memory(in->info->loc, err);
    ir_send_recv_pairs(in, pairs, n);
    GroupMode mode = in->ints[IR_INT_CHANNEL_ID].v > 0 ? MODE_CROSS_PARTITION : MODE_CROSS_REPLICA;
    bool ok = check_pair_list(in, "_xla_send_recv_source_target_pairs", participant_count(module_of(in), mode),
                              (const int64_t (*)[2])pairs, n, err);
    free(pairs);
    return ok;
}

/* send(data, token) -> (data, u32[], token[]) */
bool verify_send(const IrInstr *in, const IrShape *out, Error *err)
{
    if (verify_operand_shape(in, 1)->type != IR_TYPE_TOKEN)
        return verify_fail(in, err, "operand 1 %s must be token[]", verify_shape_text(verify_operand_shape(in, 1)));
    if (!is_p2p_tuple(out, verify_operand_shape(in, 0)))
        return verify_fail(in, err, "result %s must be (%s, u32[], token[])", verify_shape_text(out),
                           verify_shape_text(verify_operand_shape(in, 0)));
    return check_p2p_pairs(in, err);
}

/* recv(token) -> (data, u32[], token[]) */
bool verify_recv(const IrInstr *in, const IrShape *out, Error *err)
{
    if (verify_operand_shape(in, 0)->type != IR_TYPE_TOKEN)
        return verify_fail(in, err, "operand %s must be token[]", verify_shape_text(verify_operand_shape(in, 0)));
    if (!is_p2p_tuple(out, NULL))
        return verify_fail(in, err, "result %s must be (data, u32[], token[])", verify_shape_text(out));
    return check_p2p_pairs(in, err);
}

/* send-done(send) -> token[]; recv-done(recv) -> (data, token[]) */
bool verify_p2p_done(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *t = verify_unbuffer(verify_operand_shape(in, 0));
    bool send = in->op == IR_OP_SEND_DONE;
    if (!is_p2p_tuple(t, NULL))
        return verify_fail(in, err, "operand %s must be a %s's (data, u32[], token[])", verify_shape_text(t),
                           send ? "send" : "recv");
    const IrShape *o = verify_unbuffer(out);
    if (send && o->type != IR_TYPE_TOKEN)
        return verify_fail(in, err, "result %s must be token[]", verify_shape_text(out));
    if (!send &&
        !(o->type == IR_TYPE_TUPLE && o->n_elements == 2 && verify_same_shape(o->elements[0], t->elements[0]) &&
          o->elements[1]->type == IR_TYPE_TOKEN))
        return verify_fail(in, err, "result %s must be (%s, token[])", verify_shape_text(out),
                           verify_shape_text(t->elements[0]));
    return true;
}

/* input and output: arrays of one type and rank whose rows (all but
 * dimension 0) match; the result is the output's shape. */
static bool check_ragged_data(const IrInstr *in, const IrShape *out, Error *err)
{
    const IrShape *x = verify_operand_shape(in, 0), *y = verify_operand_shape(in, 1);
    if (!verify_need_array(in, x, "input", err) || !verify_need_array(in, y, "output", err) ||
        !verify_need_same_type(in, y, x, err))
        return false;
    bool ok = x->rank >= 1 && x->rank == y->rank;
    for (int d = 1; ok && d < x->rank; d++)
        ok = verify_dim_eq(x->dims[d], y->dims[d]);
    if (!ok)
        return verify_fail(in, err, "input %s and output %s must have the same rows (all dimensions but 0)",
                           verify_shape_text(x), verify_shape_text(y));
    if (!verify_same_shape(out, y))
        return verify_fail(in, err, "result %s must be the shape of the output %s", verify_shape_text(out),
                           verify_shape_text(y));
    return true;
}

/* ragged-all-to-all(input, output, input_offsets, send_sizes,
 * output_offsets, recv_sizes): four integer arrays of one shape, rank 1 or
 * 2, whose entries split evenly among the group. */
bool verify_ragged_all_to_all(const IrInstr *in, const IrShape *out, Error *err)
{
    static const char *const names[4] = { "input_offsets", "send_sizes", "output_offsets", "recv_sizes" };
    if (in->n_operands != 6)
        return verify_fail(in, err, "expects 6 operands (input, output, input_offsets, send_sizes, output_offsets, "
                           "recv_sizes), got %d", in->n_operands);
    if (!check_ragged_data(in, out, err))
        return false;
    const IrShape *m0 = verify_operand_shape(in, 2);
    for (int i = 0; i < 4; i++) {
        const IrShape *s = verify_operand_shape(in, 2 + i);
        if (!ir_shape_is_array(s) || !ir_type_is_int(s->type) || (s->rank != 1 && s->rank != 2))
            return verify_fail(in, err, "%s %s must be an integer array of rank 1 or 2", names[i],
                               verify_shape_text(s));
        if (!verify_same_shape(s, m0))
            return verify_fail(in, err, "%s %s must have the shape of input_offsets %s", names[i], verify_shape_text(s),
                               verify_shape_text(m0));
    }
    int64_t size = group_size(module_of(in), in, op_of(in)).exact, e = ir_shape_elements(m0);
    if (size > 1 && !verify_has_dynamic_dim(m0) && e % size != 0)
        return verify_fail(in, err, "the %lld offsets and sizes per operand do not split among the group size %lld",
                           (long long)e, (long long)size);
    return true;
}
