/* prove.c: hlo-check --prove.  Both modules run on every rank on the same
 * inputs as trial 0, each array element carrying beside its value a 128-bit
 * hash of the expression that computed it (prove_run.c, prove_ops.c): the
 * leaves are the entry parameters' elements per rank, constants by value;
 * every op hashes what decides its bits, in the order the interpreter
 * combines them.  Why equal output hashes prove equal outputs:
 *   - each rule hashes everything the interpreter's result element is a
 *     function of (the op, its attributes and types, the operand hashes, and
 *     for reductions and dot the order and shapes that fix the summation),
 *     so by induction two elements with equal hashes hold equal bits, unless
 *     two different expressions collided (the report bounds that chance by
 *     H^2 / 2^128 for H hashes made: 127 hashed bits, and the pairs);
 *   - the decisions the run takes from values (trip counts, branches,
 *     dynamic indices, rng draws) are those of this run: when one depends on
 *     an input (its hash is tainted), the proof holds for the inputs that make
 *     the same decisions, and says so.
 * Ops with no rule of their own are hashed over all their operands and the
 * element position (sound, never proving more than "same op, same
 * operands").  Ops the proof does not model (send/recv, infeed, ragged
 * all-to-all, all-reduce groups of unequal sizes) are refused up front. */
#include "prove_internal.h"
#include "coll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPLAIN_DEPTH 6
_Static_assert(sizeof(PNode) % sizeof(uint64_t) == 0, "nodes travel as 64-bit words");
#define EXPLAIN_TABLE_LOG2 18

bool check_prove_unsupported(const IrModule *m, int replicas, int partitions, char *why, size_t n)
{
    for (int c = 0; c < m->n_computations; c++) {
        const IrComputation *comp = m->computations[c];
        for (int i = 0; i < comp->n_instrs; i++) {
            const IrInstr *in = comp->instrs[i];
            IrOpcode op = in->op == IR_OP_ASYNC_START && in->info->async_wrapped != IR_OP_COUNT
                              ? in->info->async_wrapped : in->op;
            /* Runtime sizes come from values and decide which elements
             * count; the hashes do not follow them (set-dimension-size's
             * size is no recorded decision), so a proof could hide a
             * difference past a size: not modelled. */
            if (ir_shape_is_dynamic(in->shape)) {
                snprintf(why, n, "%s is of dynamic size (%s): runtime sizes are not modelled by the proof", in->name,
                         ir_shape_str(in->shape));
                return true;
            }
            switch ((int)op) {
            case IR_OP_SEND: case IR_OP_RECV: case IR_OP_SEND_DONE: case IR_OP_RECV_DONE:
            case IR_OP_RAGGED_ALL_TO_ALL: case IR_OP_INFEED: case IR_OP_OUTFEED:
                snprintf(why, n, "%s (%s) is not modelled by the proof", in->name, ir_opcode_name(op));
                return true;
            case IR_OP_ALL_REDUCE: case IR_OP_ALL_REDUCE_START: case IR_OP_REDUCE_SCATTER:
                if (coll_uniform_group_size(in, replicas, partitions) < 1) {
                    snprintf(why, n, "%s: its replica groups are not all of one size", in->name);
                    return true;
                }
                break;
            default:
                break;
            }
        }
    }
    return false;
}

static void to_hash_type(IrShape *s)
{
    if (s->type == IR_TYPE_TUPLE) {
        for (int i = 0; i < s->n_elements; i++)
            to_hash_type(s->elements[i]);
    } else if (ir_shape_is_array(s)) {
        s->type = IR_TYPE_C128;
    }
}

/* The estimate of m's hashes alone: m's with every element 16 bytes. */
static void hash_need(const IrModule *m, InterpMemory *mem)
{
    Error err = { 0 };
    IrModule *h = ir_module_copy(m, &err);
    if (!h) {
        mem->peak = mem->outputs = INT64_MAX / 8;
        return;
    }
    for (int c = 0; c < h->n_computations; c++)
        for (int i = 0; i < h->computations[c]->n_instrs; i++)
            to_hash_type(h->computations[c]->instrs[i]->shape);
    interp_estimate_memory(h, mem);
    ir_module_free(h);
}

int64_t check_prove_need(const IrModule *before, const IrModule *after, int replicas, int partitions)
{
    /* The two run one after the other; before's output hashes wait while
     * after runs. */
    int64_t peak[2], outputs[2] = { 0, 0 }, gather = 0;
    for (int k = 0; k < 2; k++) {
        const IrModule *m = k ? after : before;
        InterpMemory mem, hashes;
        interp_estimate_memory(m, &mem);
        hash_need(m, &hashes);
        peak[k] = mem.peak + hashes.peak;
        outputs[k] = mem.outputs + hashes.outputs;
        for (int c = 0; c < m->n_computations; c++)
            for (int i = 0; i < m->computations[c]->n_instrs; i++) {
                const IrInstr *in = m->computations[c]->instrs[i];
                bool folds = in->op == IR_OP_ALL_REDUCE || in->op == IR_OP_ALL_REDUCE_START ||
                             in->op == IR_OP_REDUCE_SCATTER ||
                             (in->op == IR_OP_ASYNC_START && in->info->async_wrapped == IR_OP_REDUCE_SCATTER);
                if (folds) {    /* every member's hashes of the operands, gathered (and a copy) */
                    int64_t elements = 0;
                    for (int j = 0; j < in->n_operands; j++)
                        elements += ir_shape_elements(in->operands[j]->shape);
                    int n = coll_group_size(in, replicas, partitions);
                    int64_t g = elements * (n > 0 ? n : 1) * 16 * 2;
                    gather = g > gather ? g : gather;
                }
            }
    }
    int64_t need = peak[0] > peak[1] + outputs[0] ? peak[0] : peak[1] + outputs[0];
    return need + gather;
}

/* ---- One side */

typedef struct Side {
    ProveRun run;
    PVal out;
    Value **leaves;         /* the output's hash leaves */
    int n_leaves;
} Side;

static bool side_run(Side *s, Coll *c, const IrModule *m, const InterpOptions *io, Value *const *inputs, int n,
                     bool record, Error *err)
{
    memset(s, 0, sizeof *s);
    s->run.m = m;
    s->run.c = c;
    s->run.dev = io->device;
    s->run.it = interp_new(m, io, err);
    if (!s->run.it)
        return false;
    if (record)
        s->run.record = ptable_new(EXPLAIN_TABLE_LOG2);
    if (!prove_run_entry(&s->run, inputs, n, &s->out, err))
        return false;
    s->n_leaves = value_leaves(s->out.h, NULL, 0);
    s->leaves = xcalloc((size_t)s->n_leaves, sizeof *s->leaves);
    value_leaves(s->out.h, s->leaves, s->n_leaves);
    return true;
}

static void side_free(Side *s)
{
    value_release(s->out.v);
    value_release(s->out.h);
    free(s->leaves);
    ptable_free(s->run.record);
    prove_run_free(&s->run);
    interp_free(s->run.it);
    memset(s, 0, sizeof *s);
}

/* The first output element whose hashes differ on this rank: false when none. */
static bool first_difference(const Side *b, const Side *a, int *leaf, int64_t *index, int64_t *count)
{
    bool found = false;
    *count = 0;
    for (int l = 0; l < b->n_leaves && l < a->n_leaves; l++) {
        if (b->leaves[l]->shape->type != IR_TYPE_C128 || a->leaves[l]->shape->type != IR_TYPE_C128)
            continue;
        const PHash *x = ph_data(b->leaves[l]), *y = ph_data(a->leaves[l]);
        int64_t n = value_elements(b->leaves[l]);
        if (n != value_elements(a->leaves[l])) {
            (*count)++;
            if (!found) {
                found = true;
                *leaf = l;
                *index = 0;
            }
            continue;
        }
        for (int64_t i = 0; i < n; i++)
            if (!ph_eq(x[i], y[i])) {
                (*count)++;
                if (!found) {
                    found = true;
                    *leaf = l;
                    *index = i;
                }
            }
    }
    return found;
}

/* ---- Explaining a difference */

typedef struct Explain {
    Coll *c;
    bool me;                /* this rank explains */
    const IrModule *m;      /* names the parameter leaves */
    const PTable *tables[2];
    PNode *fetched;         /* nodes other ranks made */
    int n_fetched, cap_fetched;
    PHash *missing;         /* asked for and found nowhere */
    int n_missing, cap_missing;
    PHash *want;            /* this round's questions */
    int n_want;
} Explain;

/* Parameter leaf `leaf` of m's entry: its instruction and shape. */
static bool param_leaf(const IrModule *m, int leaf, const char **name, const IrShape **shape, int *element)
{
    int k = 0;
    for (int p = 0; p < m->entry->n_params; p++) {
        const IrInstr *in = m->entry->params[p];
        const IrShape *s = in->shape;
        if (s->type != IR_TYPE_TUPLE) {
            if (s->type == IR_TYPE_TOKEN || s->type == IR_TYPE_OPAQUE)
                continue;
            if (k++ == leaf) {
                *name = in->name;
                *shape = s;
                *element = -1;
                return true;
            }
            continue;
        }
        for (int e = 0; e < s->n_elements; e++) {      /* one level of tuple, as entry parameters have */
            const IrShape *es = s->elements[e];
            if (es->type == IR_TYPE_TUPLE || es->type == IR_TYPE_TOKEN)
                continue;
            if (k++ == leaf) {
                *name = in->name;
                *shape = es;
                *element = e;
                return true;
            }
        }
    }
    return false;
}

static void put_index(StrBuf *b, const IrShape *s, int64_t index)
{
    int64_t idx[IR_MAX_RANK];
    for (int d = s->rank - 1; d >= 0; d--) {
        int64_t n = s->dims[d] > 0 ? s->dims[d] : 1;
        idx[d] = index % n;
        index /= n;
    }
    strbuf_putc(b, '[');
    for (int d = 0; d < s->rank; d++)
        strbuf_printf(b, "%s%lld", d ? "," : "", (long long)idx[d]);
    strbuf_putc(b, ']');
}

static const PNode *find_node(const Explain *x, PHash key)
{
    for (int t = 0; t < 2; t++) {
        const PNode *n = x->tables[t] ? ptable_get(x->tables[t], key) : NULL;
        if (n)
            return n;
    }
    for (int i = 0; i < x->n_fetched; i++)
        if (ph_eq(x->fetched[i].key, key))
            return &x->fetched[i];
    return NULL;
}

static bool is_missing(const Explain *x, PHash key)
{
    for (int i = 0; i < x->n_missing; i++)
        if (ph_eq(x->missing[i], key))
            return true;
    return false;
}

static void want(Explain *x, PHash key)
{
    for (int i = 0; i < x->n_want; i++)
        if (ph_eq(x->want[i], key))
            return;
    if (x->n_want < 64)
        x->want[x->n_want++] = key;
}

static const char *kind_name(int kind)
{
    switch (kind) {
    case PK_GENERIC: return "op";
    case PK_DOT: return "dot";
    case PK_ROW: return "row";
    case PK_APPLY: return "apply";
    case PK_RNG: return "rng";
    default: return kind >= 0 && kind < IR_OP_COUNT ? ir_opcode_name((IrOpcode)kind) : "?";
    }
}

/* The term of key to depth, into b; unknown nodes go to x->want. */
static void term(Explain *x, PHash key, int depth, StrBuf *b)
{
    int leaf, rank;
    int64_t index;
    IrElemType t;
    uint64_t bits;
    if (ph_param_decode(key, &leaf, &rank, &index)) {
        const char *name = "param";
        const IrShape *s = NULL;
        int element = -1;
        if (param_leaf(x->m, leaf, &name, &s, &element)) {
            strbuf_puts(b, name);
            if (element >= 0)
                strbuf_printf(b, "{%d}", element);
            strbuf_printf(b, "[rank %d]", rank);
            put_index(b, s, index);
        } else {
            strbuf_printf(b, "leaf%d[rank %d][%lld]", leaf, rank, (long long)index);
        }
        return;
    }
    if (ph_const_decode(key, &t, &bits)) {
        char v[64];
        ir_elem_format(t, &bits, true, v, sizeof v);
        strbuf_printf(b, "%s %s", ir_type_name(t), v);
        return;
    }
    const PNode *n = find_node(x, key);
    if (!n) {
        if (!is_missing(x, key))
            want(x, key);
        strbuf_puts(b, "?");
        return;
    }
    if (n->kind == PK_GENERIC || n->kind == PK_DOT || n->kind == PK_RNG || n->kind == PK_ROW) {
        const char *op = n->op >= 0 && n->op < IR_OP_COUNT ? ir_opcode_name((IrOpcode)n->op) : kind_name(n->kind);
        strbuf_printf(b, "%s(%%%s)[%lld]", op, n->instr, (long long)n->at);
        return;
    }
    strbuf_puts(b, kind_name(n->kind));
    if (depth <= 0) {
        strbuf_puts(b, "(...)");
        return;
    }
    strbuf_putc(b, '(');
    for (int k = 0; k < n->n_kids; k++) {
        if (k)
            strbuf_puts(b, ", ");
        term(x, n->kid[k], depth - 1, b);
    }
    strbuf_putc(b, ')');
}

/* Rounds of: the explaining rank names the nodes it lacks, every rank
 * answers with those it made.  Every rank calls it. */
static void fetch_round(Explain *x, int explainer, bool *more)
{
    int64_t n = x->me ? x->n_want : 0;
    coll_bcast(x->c, &n, sizeof n, explainer);
    *more = n > 0;
    if (!n)
        return;
    PHash keys[64];
    if (x->me)
        memcpy(keys, x->want, (size_t)n * sizeof *keys);
    coll_bcast(x->c, keys, (size_t)n * sizeof *keys, explainer);
    int world = coll_world(x->c);
    size_t words = sizeof(PNode) / sizeof(uint64_t);
    uint64_t *mine = xcalloc((size_t)n * words, sizeof *mine);
    uint64_t *all = xcalloc((size_t)n * words * (size_t)world, sizeof *all);
    for (int64_t i = 0; i < n; i++) {
        const PNode *f = NULL;
        for (int t = 0; t < 2 && !f; t++)
            f = x->tables[t] ? ptable_get(x->tables[t], keys[i]) : NULL;
        if (f)
            memcpy(mine + (size_t)i * words, f, sizeof *f);
    }
    coll_allgather_u64(x->c, mine, (int)((size_t)n * words), all);
    if (x->me)
        for (int64_t i = 0; i < n; i++) {
            const PNode *got = NULL;
            for (int rk = 0; rk < world && !got; rk++) {
                const PNode *p = (const PNode *)(all + ((size_t)rk * (size_t)n + (size_t)i) * words);
                if (p->kind)
                    got = p;
            }
            if (got) {
                if (x->n_fetched == x->cap_fetched) {
                    x->cap_fetched = x->cap_fetched ? 2 * x->cap_fetched : 64;
                    x->fetched = xrealloc(x->fetched, (size_t)x->cap_fetched * sizeof *x->fetched);
                }
                x->fetched[x->n_fetched++] = *got;
            } else {
                if (x->n_missing == x->cap_missing) {
                    x->cap_missing = x->cap_missing ? 2 * x->cap_missing : 64;
                    x->missing = xrealloc(x->missing, (size_t)x->cap_missing * sizeof *x->missing);
                }
                x->missing[x->n_missing++] = keys[i];
            }
        }
    free(mine);
    free(all);
}

/* The instruction that made node n, or the leaf key itself: a
 * parameter or constant that data movement brought there. */
static void at_text(Explain *x, const PNode *n, PHash key, char *out, size_t size)
{
    if (n) {
        const char *op = n->op >= 0 && n->op < IR_OP_COUNT ? ir_opcode_name((IrOpcode)n->op) : kind_name(n->kind);
        snprintf(out, size, "%%%s (%s)", n->instr, op);
        return;
    }
    StrBuf b;
    strbuf_init(&b);
    term(x, key, 0, &b);
    snprintf(out, size, "%s (moved there, computed by no op)", b.s ? b.s : "?");
    strbuf_free(&b);
}

/* Where the two terms first part: down both from the roots, into the first
 * operand pair that differs, while the nodes are the same op. */
static void divergence(Explain *x, PHash b, PHash a, char *bat, char *aat, size_t n)
{
    for (int depth = 0; depth < 64; depth++) {
        const PNode *nb = find_node(x, b), *na = find_node(x, a);
        int diff = -1;
        if (nb && na && nb->kind == na->kind && nb->n_kids == na->n_kids && nb->n_kids > 0)
            for (int k = 0; k < nb->n_kids && diff < 0; k++)
                if (!ph_eq(nb->kid[k], na->kid[k]))
                    diff = k;
        if (diff < 0) {
            at_text(x, nb, b, bat, n);
            at_text(x, na, a, aat, n);
            return;
        }
        b = nb->kid[diff];
        a = na->kid[diff];
    }
}

static void explain(Coll *c, Side *sb, Side *sa, int explainer, PHash hb, PHash ha, CheckProof *p)
{
    Explain x = { .c = c, .me = coll_rank(c) == explainer, .m = sb->run.m,
                  .tables = { sb->run.record, sa->run.record } };
    x.want = xcalloc(64, sizeof *x.want);
    StrBuf tb, ta;
    strbuf_init(&tb);
    strbuf_init(&ta);
    for (int round = 0; round <= EXPLAIN_DEPTH + 1; round++) {
        x.n_want = 0;
        tb.len = ta.len = 0;
        if (x.me) {
            term(&x, hb, EXPLAIN_DEPTH, &tb);
            term(&x, ha, EXPLAIN_DEPTH, &ta);
        }
        bool more;
        fetch_round(&x, explainer, &more);
        if (!more)
            break;
    }
    if (x.me) {
        tb.len = ta.len = 0;
        x.n_want = 0;
        term(&x, hb, EXPLAIN_DEPTH, &tb);
        term(&x, ha, EXPLAIN_DEPTH, &ta);
        snprintf(p->before_expr, sizeof p->before_expr, "%s", tb.s ? tb.s : "");
        snprintf(p->after_expr, sizeof p->after_expr, "%s", ta.s ? ta.s : "");
        if (strlen(tb.s ? tb.s : "") >= sizeof p->before_expr)
            strcpy(p->before_expr + sizeof p->before_expr - 4, "...");
        if (strlen(ta.s ? ta.s : "") >= sizeof p->after_expr)
            strcpy(p->after_expr + sizeof p->after_expr - 4, "...");
        divergence(&x, hb, ha, p->before_at, p->after_at, sizeof p->before_at);
    }
    strbuf_free(&tb);
    strbuf_free(&ta);
    free(x.want);
    free(x.fetched);
    free(x.missing);
}

/* ---- The pair */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The output leaf's shape (of before's result) for naming an index. */
static const IrShape *output_leaf_shape(const IrShape *s, int leaf, int *k)
{
    if (s->type != IR_TYPE_TUPLE)
        return (*k)++ == leaf ? s : NULL;
    for (int i = 0; i < s->n_elements; i++) {
        const IrShape *f = output_leaf_shape(s->elements[i], leaf, k);
        if (f)
            return f;
    }
    return NULL;
}

bool check_prove_pair(Coll *c, const IrModule *before, const IrModule *after, const InterpOptions *io,
                      Value *const *inputs, int n, CheckProof *p, Error *err)
{
    double t0 = now();
    int64_t h0 = ph_hashes_made();
    Side sb, sa;
    bool ok = side_run(&sb, c, before, io, inputs, n, false, err);
    ok = ok && side_run(&sa, c, after, io, inputs, n, false, err);
    if (!ok) {
        side_free(&sb);
        side_free(&sa);
        return false;
    }
    int leaf = 0;
    int64_t index = 0, count = 0;
    bool differs = first_difference(&sb, &sa, &leaf, &index, &count);
    /* Agreed: the lowest rank with a difference explains it. */
    int rank = coll_rank(c);
    int64_t agree[4] = { differs ? rank : INT32_MAX, sb.run.decisions > sa.run.decisions ? -sb.run.decisions
                                                                                          : -sa.run.decisions,
                         0, 0 };
    coll_allreduce_i64(c, agree, 2, COLL_MIN);
    int64_t sums[2] = { count, ph_hashes_made() - h0 };
    coll_allreduce_i64(c, sums, 2, COLL_SUM);
    p->differs = agree[0] != INT32_MAX;
    p->n_differ = sums[0];
    p->decisions = -agree[1];
    p->unconditional = p->decisions == 0;
    /* Which decision came first: the rank with the most says it. */
    int64_t who[1] = { sb.run.decisions + sa.run.decisions > 0 ? rank : INT32_MAX };
    coll_allreduce_i64(c, who, 1, COLL_MIN);
    if (who[0] != INT32_MAX) {
        char first[160];
        snprintf(first, sizeof first, "%s", sb.run.decisions ? sb.run.first_decision : sa.run.first_decision);
        coll_bcast(c, first, sizeof first, (int)who[0]);
        snprintf(p->first_decision, sizeof p->first_decision, "%s", first);
    }
    p->n_opaque = 0;
    for (int s = 0; s < 2; s++) {
        const ProveRun *r = s ? &sa.run : &sb.run;
        for (int i = 0; i < r->n_opaque && p->n_opaque < 8; i++) {
            bool seen = false;
            for (int k = 0; k < p->n_opaque && !seen; k++)
                seen = strcmp(p->opaque[k], r->opaque[i]) == 0;
            if (!seen)
                snprintf(p->opaque[p->n_opaque++], sizeof p->opaque[0], "%s", r->opaque[i]);
        }
    }
    if (p->differs) {
        int explainer = (int)agree[0];
        int64_t at[2] = { leaf, index };
        coll_bcast(c, at, sizeof at, explainer);
        p->rank = explainer;
        p->output = (int)at[0];
        p->index = at[1];
        int k = 0;
        const IrShape *s = output_leaf_shape(before->entry->root->shape, p->output, &k);
        StrBuf w;
        strbuf_init(&w);
        if (s)
            put_index(&w, s, p->index);
        snprintf(p->where, sizeof p->where, "%s", w.s ? w.s : "");
        strbuf_free(&w);
        /* Run both again recording what every hash stands for. */
        PHash hb = { 0, 0 }, ha = { 0, 0 };
        side_free(&sb);
        side_free(&sa);
        ok = side_run(&sb, c, before, io, inputs, n, true, err) && side_run(&sa, c, after, io, inputs, n, true, err);
        if (ok && rank == explainer && p->output < sb.n_leaves && p->output < sa.n_leaves &&
            sb.leaves[p->output]->shape->type == IR_TYPE_C128) {
            hb = ph_data(sb.leaves[p->output])[p->index];
            ha = ph_data(sa.leaves[p->output])[p->index];
        }
        if (ok)
            explain(c, &sb, &sa, explainer, hb, ha, p);
        coll_bcast(c, p->before_expr, sizeof p->before_expr, explainer);
        coll_bcast(c, p->after_expr, sizeof p->after_expr, explainer);
        coll_bcast(c, p->before_at, sizeof p->before_at, explainer);
        coll_bcast(c, p->after_at, sizeof p->after_at, explainer);
    }
    /* P(some pair of the H hashes collides) <= H^2 / 2^128. */
    p->hashes = sums[1];
    p->collision_log2 = 2 * log2((double)(p->hashes > 1 ? p->hashes : 2)) - 128;
    side_free(&sb);
    side_free(&sa);
    p->seconds = now() - t0;
    return ok;
}
