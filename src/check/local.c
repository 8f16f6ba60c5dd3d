/* local.c: hlo-check --local.  When a rewrite changes a few places of a big
 * module, check each place on its own, at its real shapes, instead of the
 * whole module (which may need far more memory than the machine has).
 *
 * 1. Value numbers.  Every instruction of both modules gets a number that
 *    is equal exactly when the two compute the same thing the same way:
 *    the same opcode, shape (with layout), attributes that change values
 *    (ir_print_semantic_attrs: all but names of called computations,
 *    control edges and metadata), the numbers of its operands in order and
 *    of the computations it calls.  A parameter is numbered by its position
 *    and shape (so the parameters of a computation pair correspond), a
 *    constant by its literal (an elided one is like no other), a
 *    computation by its parameters and root.
 *    The numbering is exact (keys are compared as text; only constants
 *    over 4 kB are keyed by a 128-bit hash of their bytes), and
 *    ops whose value is not a function of their operands (rng, infeed,
 *    recv) are never numbered alike.  In a pair of computations (the two
 *    entries, to start), an instruction whose number appears in both is
 *    shared: its value is the same in both modules, on every rank.
 * 2. Correspondence.  From the two roots downwards, a pair of instructions
 *    that is not shared but has the same opcode, shape, attributes, operand
 *    shapes and called computations is matched, and its operands are paired
 *    in turn; a pair that differs in any of these is an output pair: the
 *    rewrite claims their values equal, and a region must show it.  A
 *    matched pair whose called computations differ (a while loop whose
 *    body the rewrite changed) is analysed again as a computation pair of
 *    its own, with corresponding parameters.
 * 3. Regions.  An output pair's region is, on each side, its ancestors up to
 *    the shared instructions, which become the region's inputs; regions
 *    that overlap are merged.  Shared inputs that depend on no parameter
 *    (constants, iota, partition-id, replica-id and what is computed from
 *    them: index arithmetic) are kept inside the region, so that it keeps
 *    their values and constraints; the others become parameters.  In a loop
 *    body, a counter (a state element that starts at a constant, goes up by
 *    one and is compared with a constant bound) counts as such a leaf too:
 *    the index arithmetic on it stays inside, and the counter becomes a
 *    parameter drawn from the values the loop gives it (hlocheck_range).
 * Soundness: if every region's two sides agree on every input, every
 * output pair is equal, so every matched pair is (same op on equal
 * operands), so the roots are: the modules are equivalent.  A region that
 * differs on free inputs may not differ on the values the module gives it:
 * hlo-check says so and, when the whole pair fits, runs it to decide. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Value numbers                                                        */

typedef struct Numbering {
    Arena *arena;
    IrNameMap *keys;        /* key text -> number + 1 */
    int next;
    const IrModule *m[2];
    int *vn[2];             /* [side][instruction id] */
    int *cvn[2];            /* [side][computation id] */
    int *ids[2];            /* [side][computation id]: max over the module, for sizing */
} Numbering;

static int number_of(Numbering *nb, StrBuf *key)
{
    void *v = ir_namemap_get(nb->keys, key->s, key->len);
    if (v)
        return (int)(intptr_t)v - 1;
    char *k = xmust(arena_strndup(nb->arena, key->s, key->len));
    ir_namemap_put(nb->keys, k, (void *)(intptr_t)(nb->next + 1));
    return nb->next++;
}

/* Values that are not a function of the operands: never alike. */
static bool is_unrepeatable(IrOpcode op)
{
    return op == IR_OP_RNG || op == IR_OP_RNG_GET_AND_UPDATE_STATE || op == IR_OP_INFEED || op == IR_OP_RECV ||
           op == IR_OP_RECV_DONE;
}

/* A constant by its values: printed when small; a big one (the text of a
 * 100 MB constant would be a GB) by its size and two independent 64-bit
 * hashes of its bytes (a chance of about 2^-128 that two differ unseen).
 * An elided one ({...}, values unknown) is never like another. */
static void literal_key(const Numbering *nb, const IrInstr *in, StrBuf *key)
{
    const IrLiteral *lit = in->info->literal;
    int64_t bytes = ir_shape_byte_size(in->shape);
    if (!lit || lit->elided) {
        strbuf_printf(key, "|elided %d", nb->next);
    } else if (bytes <= 4096 || in->shape->type == IR_TYPE_TUPLE || !lit->data) {
        strbuf_putc(key, '|');
        ir_print_literal(key, lit);
    } else {
        strbuf_printf(key, "|%lld bytes %016llx %016llx", (long long)bytes,
                      (unsigned long long)check_hash_bytes(0x6c69740000000001ULL, lit->data, (size_t)bytes),
                      (unsigned long long)check_hash_bytes(0x9e3779b97f4a7c15ULL, lit->data, (size_t)bytes));
    }
}

/* Everything that decides an instruction's value but its operands: opcode,
 * shape, the attributes that matter, the computations it calls. */
static void op_key(const Numbering *nb, int side, const IrInstr *in, StrBuf *key)
{
    key->len = 0;
    if (key->s)
        key->s[0] = 0;
    strbuf_printf(key, "%s/%d/%d%d|", ir_opcode_name(in->op), (int)in->info->async_wrapped,
                  in->info->async_is_done, in->info->async_is_update);
    ir_shape_print(key, in->shape, true);
    if (in->op == IR_OP_PARAMETER) {
        strbuf_printf(key, "|param %lld", (long long)in->info->parameter_number);
    } else if (in->op == IR_OP_CONSTANT) {
        literal_key(nb, in, key);
    } else if (is_unrepeatable(in->op)) {
        strbuf_printf(key, "|unrepeatable %d", nb->next);
    }
    ir_print_semantic_attrs(key, in);
    IrComputation *callees[64];
    int n = ir_instr_called(in, callees, 64);
    strbuf_puts(key, "|calls");
    for (int k = 0; k < n && k < 64; k++)
        strbuf_printf(key, " %d", nb->cvn[side][callees[k]->id]);
}

static void number_instr(Numbering *nb, int side, const IrInstr *in, StrBuf *key)
{
    op_key(nb, side, in, key);
    strbuf_puts(key, "|ops");
    for (int k = 0; k < in->n_operands; k++)
        strbuf_printf(key, " %d", nb->vn[side][in->operands[k]->id]);
    nb->vn[side][in->id] = number_of(nb, key);
}

static void number_module(Numbering *nb, int side, StrBuf *key)
{
    const IrModule *m = nb->m[side];
    nb->vn[side] = xcalloc((size_t)m->next_instr_id + 1, sizeof(int));
    nb->cvn[side] = xcalloc((size_t)ir_module_max_computation_id(m) + 1, sizeof(int));
    for (int c = 0; c < m->n_computations; c++) {       /* callees come first */
        const IrComputation *comp = m->computations[c];
        for (int i = 0; i < comp->n_instrs; i++)
            number_instr(nb, side, comp->instrs[i], key);
        key->len = 0;
        strbuf_puts(key, "computation|");
        for (int p = 0; p < comp->n_params; p++) {
            ir_shape_print(key, comp->params[p]->shape, true);
            strbuf_putc(key, ',');
        }
        strbuf_printf(key, "|root %d", nb->vn[side][comp->root->id]);
        nb->cvn[side][comp->id] = number_of(nb, key);
    }
}

/* ------------------------------------------------------------------ */
/* One computation pair: shared values, correspondence, output pairs    */

typedef struct Pair { const IrInstr *x[2]; } Pair;

/* A pair of computations to analyse; for loop bodies, the state elements
 * that are counters and the values the loop gives them, [lo, hi). */
enum { MAX_COUNTERS = 8 };
typedef struct CompPair {
    const IrComputation *c[2];
    int n_counters;
    int counter[MAX_COUNTERS];
    int64_t lo[MAX_COUNTERS], hi[MAX_COUNTERS];
} CompPair;

static bool int_constant(const IrInstr *x, int64_t *v)
{
    if (x->op != IR_OP_CONSTANT || x->shape->rank != 0 || !ir_type_is_int(x->shape->type) || !x->info->literal ||
        !x->info->literal->data)
        return false;
    *v = ir_elem_get_i64(x->shape->type, x->info->literal->data);
    return true;
}

static bool gte_of_param(const IrInstr *x, const IrComputation *c, int64_t *index)
{
    if (x->op != IR_OP_GET_TUPLE_ELEMENT || x->operands[0]->op != IR_OP_PARAMETER || c->n_params != 1 ||
        x->operands[0] != c->params[0])
        return false;
    *index = x->ints[IR_INT_INDEX].v;
    return true;
}

/* The counters of a while loop: state element j starting at a constant,
 * the body adding 1 to it, the condition comparing it LT (or LE) with a
 * constant.  Fills the pair's counters with [start, bound). */
static void loop_counters(const IrInstr *w, CompPair *pair)
{
    const IrComputation *body = w->info->comps[IR_COMP_BODY], *cond = w->info->comps[IR_COMP_CONDITION];
    const IrInstr *init = w->operands[0], *next = body ? body->root : NULL, *test = cond ? cond->root : NULL;
    if (!body || !cond || init->op != IR_OP_TUPLE || next->op != IR_OP_TUPLE || test->op != IR_OP_COMPARE)
        return;
    int64_t j, bound, start, one;
    const IrInstr *l = test->operands[0], *r = test->operands[1];
    IrCompareDir dir = test->info->direction;
    if (int_constant(l, &bound) && (dir == IR_CMP_GT || dir == IR_CMP_GE)) {     /* n > i */
        const IrInstr *t = l;
        l = r;
        r = t;
        dir = dir == IR_CMP_GT ? IR_CMP_LT : IR_CMP_LE;
    }
    if (!gte_of_param(l, cond, &j) || !int_constant(r, &bound) || (dir != IR_CMP_LT && dir != IR_CMP_LE) ||
        j < 0 || j >= init->n_operands || j >= next->n_operands || !int_constant(init->operands[j], &start))
        return;
    const IrInstr *inc = next->operands[j];
    int64_t k;
    bool step = inc->op == IR_OP_ADD &&
                ((gte_of_param(inc->operands[0], body, &k) && int_constant(inc->operands[1], &one)) ||
                 (gte_of_param(inc->operands[1], body, &k) && int_constant(inc->operands[0], &one)));
    int64_t hi = dir == IR_CMP_LE ? bound + 1 : bound;
    if (step && k == j && one == 1 && hi > start && pair->n_counters < MAX_COUNTERS) {
        pair->counter[pair->n_counters] = (int)j;
        pair->lo[pair->n_counters] = start;
        pair->hi[pair->n_counters++] = hi;
    }
}

/* The counters both loops have alike. */
static void shared_counters(const IrInstr *wb, const IrInstr *wa, CompPair *pair)
{
    CompPair b = { .n_counters = 0 }, a = { .n_counters = 0 };
    loop_counters(wb, &b);
    loop_counters(wa, &a);
    for (int i = 0; i < b.n_counters; i++)
        for (int k = 0; k < a.n_counters; k++)
            if (b.counter[i] == a.counter[k] && b.lo[i] == a.lo[k] && b.hi[i] == a.hi[k]) {
                pair->counter[pair->n_counters] = b.counter[i];
                pair->lo[pair->n_counters] = b.lo[i];
                pair->hi[pair->n_counters++] = b.hi[i];
            }
}

typedef struct Analysis {
    Numbering *nb;
    const IrComputation *c[2];
    const CompPair *pair;       /* its loop counters, when a loop body */
    int n_vn;
    const IrInstr **by_vn[2];   /* [side][vn]: an instruction of c[side] with that number */
    bool *param_free[2];        /* [side][instr id]: depends on no parameter of c[side], or only on
                                   loop counters (which enter a region as ranged inputs) */
    bool *counter[2];           /* [side][instr id]: a loop counter (get-tuple-element of the state) */
    int *key[2];                /* [side][instr id]: 1 + the number a region input is known by: its value
                                   number when shared, else one given to a matched pair; 0: none */
    int n_keys;                 /* value numbers, then the matched pairs' numbers */
    const IrInstr **by_key[2];  /* [side][key]: an instruction known by it */
    Pair *outs;                 /* output pairs */
    int n_outs, cap_outs;
    CompPair *nested;           /* computation pairs to analyse in turn */
    int n_nested, cap_nested;
    uint64_t *seen;             /* open-addressed set of visited pairs (b id << 32 | a id) + 1 */
    size_t seen_cap, n_seen;
} Analysis;

static bool shared(const Analysis *an, const IrInstr *x, int side)
{
    int v = an->nb->vn[side][x->id];
    return an->by_vn[0][v] && an->by_vn[1][v];
}

static bool seen_pair(Analysis *an, const IrInstr *b, const IrInstr *a)
{
    if (an->n_seen * 2 >= an->seen_cap) {
        size_t cap = an->seen_cap ? 2 * an->seen_cap : 1024;
        uint64_t *t = xcalloc(cap, sizeof *t);
        for (size_t i = 0; i < an->seen_cap; i++)
            if (an->seen[i]) {
                size_t h = (size_t)((an->seen[i] * 0x9E3779B97F4A7C15ULL) >> 20) & (cap - 1);
                while (t[h])
                    h = (h + 1) & (cap - 1);
                t[h] = an->seen[i];
            }
        free(an->seen);
        an->seen = t;
        an->seen_cap = cap;
    }
    uint64_t k = (((uint64_t)(uint32_t)b->id << 32) | (uint32_t)a->id) + 1;
    size_t h = (size_t)((k * 0x9E3779B97F4A7C15ULL) >> 20) & (an->seen_cap - 1);
    while (an->seen[h]) {
        if (an->seen[h] == k)
            return true;
        h = (h + 1) & (an->seen_cap - 1);
    }
    an->seen[h] = k;
    an->n_seen++;
    return false;
}

/* Loops, calls and branches whose bodies differ are analysed as pairs of
 * their own; a reducer or comparator that differs is part of a region. */
static bool calls_structure(IrOpcode op)
{
    return op == IR_OP_WHILE || op == IR_OP_CALL || op == IR_OP_CONDITIONAL || op == IR_OP_FUSION ||
           op == IR_OP_ASYNC_START;
}

/* Same op, shape, attributes, operand shapes, and called computations
 * that are the same or (structure ops) have the same signatures. */
static bool alike(Analysis *an, const IrInstr *b, const IrInstr *a, StrBuf *kb, StrBuf *ka)
{
    if (b->op != a->op || b->n_operands != a->n_operands || b->info->async_wrapped != a->info->async_wrapped ||
        !ir_shape_equal(b->shape, a->shape) || is_unrepeatable(b->op) || b->op == IR_OP_PARAMETER ||
        b->op == IR_OP_CONSTANT)
        return false;
    for (int k = 0; k < b->n_operands; k++)
        if (!ir_shape_equal(b->operands[k]->shape, a->operands[k]->shape))
            return false;
    kb->len = ka->len = 0;
    ir_shape_print(kb, b->shape, true);
    ir_shape_print(ka, a->shape, true);
    ir_print_semantic_attrs(kb, b);
    ir_print_semantic_attrs(ka, a);
    if (kb->len != ka->len || memcmp(kb->s, ka->s, kb->len) != 0)
        return false;
    IrComputation *cb[64], *ca[64];
    int nb_ = ir_instr_called(b, cb, 64), na_ = ir_instr_called(a, ca, 64);
    if (nb_ != na_ || nb_ > 64)
        return false;
    for (int k = 0; k < nb_; k++) {
        if (an->nb->cvn[0][cb[k]->id] == an->nb->cvn[1][ca[k]->id])
            continue;
        if (!calls_structure(b->op) || cb[k]->n_params != ca[k]->n_params ||
            !ir_shape_equal(cb[k]->root->shape, ca[k]->root->shape))
            return false;
        for (int p = 0; p < cb[k]->n_params; p++)
            if (!ir_shape_equal(cb[k]->params[p]->shape, ca[k]->params[p]->shape))
                return false;
    }
    for (int k = 0; k < nb_; k++)
        if (an->nb->cvn[0][cb[k]->id] != an->nb->cvn[1][ca[k]->id]) {
            if (an->n_nested == an->cap_nested) {
                an->cap_nested = an->cap_nested ? 2 * an->cap_nested : 8;
                an->nested = xrealloc(an->nested, (size_t)an->cap_nested * sizeof *an->nested);
            }
            bool dup = false;
            for (int j = 0; j < an->n_nested && !dup; j++)
                dup = an->nested[j].c[0] == cb[k] && an->nested[j].c[1] == ca[k];
            if (!dup) {
                CompPair pair = { { cb[k], ca[k] }, 0, { 0 }, { 0 }, { 0 } };
                if (b->op == IR_OP_WHILE && cb[k] == b->info->comps[IR_COMP_BODY])
                    shared_counters(b, a, &pair);
                an->nested[an->n_nested++] = pair;
            }
        }
    return true;
}

static void add_out(Analysis *an, const IrInstr *b, const IrInstr *a)
{
    if (an->n_outs == an->cap_outs) {
        an->cap_outs = an->cap_outs ? 2 * an->cap_outs : 16;
        an->outs = xrealloc(an->outs, (size_t)an->cap_outs * sizeof *an->outs);
    }
    an->outs[an->n_outs++] = (Pair){ { b, a } };
}

/* b and a compute the same value (once every region upstream is shown
 * equal): both are known by one number, which a region reading either of
 * them takes as one input. */
static void match(Analysis *an, const IrInstr *b, const IrInstr *a)
{
    int kb = an->key[0][b->id], ka = an->key[1][a->id];
    if (kb && ka)
        return;
    int k = kb ? kb : ka ? ka : ++an->n_keys;
    if (!shared(an, b, 0))
        an->key[0][b->id] = k;
    if (!shared(an, a, 1))
        an->key[1][a->id] = k;
}

static void correspond(Analysis *an)
{
    StrBuf kb, ka;
    strbuf_init(&kb);
    strbuf_init(&ka);
    size_t n = 0, cap = 64;
    Pair *stack = xmalloc(cap * sizeof *stack);
    stack[n++] = (Pair){ { an->c[0]->root, an->c[1]->root } };
    while (n > 0) {
        Pair p = stack[--n];
        const IrInstr *b = p.x[0], *a = p.x[1];
        int known = an->key[0][b->id];
        if ((known && known == an->key[1][a->id]) || seen_pair(an, b, a))
            continue;       /* known equal */
        if (!alike(an, b, a, &kb, &ka)) {
            add_out(an, b, a);
            continue;
        }
        match(an, b, a);
        for (int k = 0; k < b->n_operands; k++) {
            if (n == cap) {
                cap *= 2;
                stack = xrealloc(stack, cap * sizeof *stack);
            }
            stack[n++] = (Pair){ { b->operands[k], a->operands[k] } };
        }
    }
    free(stack);
    strbuf_free(&kb);
    strbuf_free(&ka);
}

/* Top-down: an instruction of the after side whose op key equals one of
 * the before side's and whose operands are known by the same keys, one by
 * one, computes the same value; both become known by one key.  One pass in
 * schedule order carries matches downstream; returns whether any was new. */
static bool propagate(Analysis *an)
{
    const IrComputation *cb = an->c[0], *ca = an->c[1];
    Arena *arena = arena_new(1 << 16);
    IrNameMap *groups = ir_namemap_new(arena);     /* op key -> list of before instructions */
    typedef struct Cand { const IrInstr *x; struct Cand *next; } Cand;
    StrBuf k;
    strbuf_init(&k);
    for (int i = 0; i < cb->n_instrs; i++) {
        const IrInstr *x = cb->instrs[i];
        if (x->op == IR_OP_PARAMETER || x->op == IR_OP_CONSTANT || is_unrepeatable(x->op) || x->n_operands == 0)
            continue;
        op_key(an->nb, 0, x, &k);
        Cand *c = xmust(arena_alloc(arena, sizeof *c));
        char *name = xmust(arena_strndup(arena, k.s, k.len));
        c->x = x;
        c->next = ir_namemap_get(groups, k.s, k.len);
        ir_namemap_set(groups, name, c);
    }
    bool changed = false;
    for (int i = 0; i < ca->n_instrs; i++) {
        const IrInstr *y = ca->instrs[i];
        if (an->key[1][y->id] || y->op == IR_OP_PARAMETER || y->op == IR_OP_CONSTANT || is_unrepeatable(y->op) ||
            y->n_operands == 0)
            continue;
        op_key(an->nb, 1, y, &k);
        for (const Cand *c = ir_namemap_get(groups, k.s, k.len); c; c = c->next) {
            const IrInstr *x = c->x;
            bool same = x->n_operands == y->n_operands;
            for (int j = 0; j < x->n_operands && same; j++) {
                int kx = an->key[0][x->operands[j]->id];
                same = kx && kx == an->key[1][y->operands[j]->id];
            }
            if (same) {
                match(an, x, y);
                changed = true;
                break;
            }
        }
    }
    strbuf_free(&k);
    arena_free(arena);
    return changed;
}

static void analysis_init(Analysis *an, Numbering *nb, const CompPair *pair)
{
    const IrComputation *cb = pair->c[0], *ca = pair->c[1];
    memset(an, 0, sizeof *an);
    an->nb = nb;
    an->pair = pair;
    an->c[0] = cb;
    an->c[1] = ca;
    an->n_vn = nb->next;
    for (int s = 0; s < 2; s++) {
        const IrComputation *c = an->c[s];
        an->by_vn[s] = xcalloc((size_t)an->n_vn + 1, sizeof *an->by_vn[s]);
        an->param_free[s] = xcalloc((size_t)nb->m[s]->next_instr_id + 1, sizeof(bool));
        an->counter[s] = xcalloc((size_t)nb->m[s]->next_instr_id + 1, sizeof(bool));
        for (int i = 0; i < c->n_instrs; i++) {
            const IrInstr *x = c->instrs[i];
            int v = nb->vn[s][x->id];
            if (!an->by_vn[s][v])
                an->by_vn[s][v] = x;
            int64_t j;
            bool counter = false;
            for (int k = 0; an->pair && k < an->pair->n_counters && !counter; k++)
                counter = gte_of_param(x, c, &j) && j == an->pair->counter[k];
            an->counter[s][x->id] = counter;
            bool free_ = counter || (x->op != IR_OP_PARAMETER && !is_unrepeatable(x->op));
            for (int k = 0; k < x->n_operands && free_ && !counter; k++)
                free_ = an->param_free[s][x->operands[k]->id];
            an->param_free[s][x->id] = free_;
        }
        an->key[s] = xcalloc((size_t)nb->m[s]->next_instr_id + 1, sizeof(int));
    }
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < an->c[s]->n_instrs; i++) {
            const IrInstr *x = an->c[s]->instrs[i];
            if (shared(an, x, s))
                an->key[s][x->id] = nb->vn[s][x->id] + 1;
        }
    an->n_keys = an->n_vn;
}

/* After the correspondence: the instruction of each side each key names. */
static void index_keys(Analysis *an)
{
    for (int s = 0; s < 2; s++) {
        an->by_key[s] = xcalloc((size_t)an->n_keys + 1, sizeof *an->by_key[s]);
        for (int i = 0; i < an->c[s]->n_instrs; i++) {
            const IrInstr *x = an->c[s]->instrs[i];
            int k = an->key[s][x->id];
            if (k && !an->by_key[s][k - 1])
                an->by_key[s][k - 1] = x;
        }
    }
}

static void analysis_free(Analysis *an)
{
    for (int s = 0; s < 2; s++) {
        free(an->by_vn[s]);
        free(an->param_free[s]);
        free(an->counter[s]);
        free(an->key[s]);
        free(an->by_key[s]);
    }
    free(an->outs);
    free(an->nested);
    free(an->seen);
}

/* ------------------------------------------------------------------ */
/* Regions                                                              */

typedef struct Grouping {
    int *owner[2];          /* [side][instr id]: output pair + 1 whose region holds it */
    int *parent;            /* union-find over output pairs */
} Grouping;

static int find_root(int *parent, int x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

/* Marks the region of output pair p on side s: x and its ancestors up to
 * the instructions known in both modules (shared, or matched with one of
 * the other side); meeting another pair's region merges the two. */
static void claim(Analysis *an, Grouping *g, int s, int p, const IrInstr *x)
{
    if (x->op == IR_OP_PARAMETER)
        return;     /* a parameter is never computed in a region: it enters as an input (collect_side) */
    size_t n = 0, cap = 64;
    const IrInstr **stack = xmalloc(cap * sizeof *stack);
    stack[n++] = x;
    while (n > 0) {
        const IrInstr *y = stack[--n];
        if (y != x && an->key[s][y->id])
            continue;       /* known in both modules: an input */
        int o = g->owner[s][y->id];
        if (o) {
            int r1 = find_root(g->parent, o - 1), r2 = find_root(g->parent, p);
            if (r1 != r2)
                g->parent[r1] = r2;
            continue;
        }
        g->owner[s][y->id] = p + 1;
        for (int k = 0; k < y->n_operands; k++) {
            if (n == cap) {
                cap *= 2;
                stack = xrealloc(stack, cap * sizeof *stack);
            }
            stack[n++] = y->operands[k];
        }
    }
    free(stack);
}

/* The region's instructions of side s in schedule order: its own, and the
 * parameter-free shared ones they read; its inputs (the other known values
 * it reads) by key, sorted. */
typedef struct Side {
    const IrInstr **members;
    int n_members;
    int *inputs;            /* value numbers */
    int n_inputs;
} Side;

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void add_input(Side *out, int v)
{
    for (int j = 0; j < out->n_inputs; j++)
        if (out->inputs[j] == v)
            return;
    out->inputs[out->n_inputs++] = v;
}

/* outs[0..n_outs): the region's output pairs; one whose side-s value is a
 * parameter (of the computation, so known in both modules) reads it as an
 * input, like any operand from outside. */
static void collect_side(Analysis *an, Grouping *g, int s, int root, const Pair *outs, int n_outs, Side *out)
{
    const IrComputation *c = an->c[s];
    char *in_region = xcalloc((size_t)an->nb->m[s]->next_instr_id + 1, 1);
    for (int i = 0; i < c->n_instrs; i++) {
        const IrInstr *x = c->instrs[i];
        int o = g->owner[s][x->id];
        if (o && find_root(g->parent, o - 1) == root)
            in_region[x->id] = 1;
    }
    /* Parameter-free shared operands come in, with everything they read. */
    for (int i = c->n_instrs - 1; i >= 0; i--) {
        const IrInstr *x = c->instrs[i];
        if (!in_region[x->id])
            continue;
        for (int k = 0; k < x->n_operands; k++) {
            const IrInstr *y = x->operands[k];
            if (shared(an, y, s) && an->param_free[s][y->id] && !an->counter[s][y->id])
                in_region[y->id] = 2;
        }
    }
    out->members = xcalloc((size_t)c->n_instrs + 1, sizeof *out->members);
    out->inputs = xcalloc((size_t)c->n_instrs + (size_t)n_outs + 1, sizeof *out->inputs);
    out->n_members = out->n_inputs = 0;
    for (int j = 0; j < n_outs; j++)
        if (!in_region[outs[j].x[s]->id])
            add_input(out, an->key[s][outs[j].x[s]->id] - 1);
    for (int i = 0; i < c->n_instrs; i++) {
        const IrInstr *x = c->instrs[i];
        if (!in_region[x->id])
            continue;
        out->members[out->n_members++] = x;
        for (int k = 0; k < x->n_operands; k++) {
            const IrInstr *y = x->operands[k];
            if (in_region[y->id])
                continue;
            add_input(out, an->key[s][y->id] - 1);
        }
    }
    qsort(out->inputs, (size_t)out->n_inputs, sizeof *out->inputs, cmp_int);
    free(in_region);
}

/* ------------------------------------------------------------------ */
/* A region as a pair of modules                                        */

/* Computations reachable from c through the instructions left in it. */
static void keep_reachable(IrModule *m, IrComputation *entry)
{
    int n = m->n_computations;
    char *reach = xcalloc((size_t)ir_module_max_computation_id(m) + 1, 1);
    IrComputation **work = xcalloc((size_t)n + 1, sizeof *work);
    int n_work = 0;
    reach[entry->id] = 1;
    work[n_work++] = entry;
    while (n_work > 0) {
        IrComputation *c = work[--n_work];
        for (int i = 0; i < c->n_instrs; i++) {
            IrComputation *callees[64];
            int k = ir_instr_called(c->instrs[i], callees, 64);
            for (int j = 0; j < k && j < 64; j++)
                if (!reach[callees[j]->id]) {
                    reach[callees[j]->id] = 1;
                    work[n_work++] = callees[j];
                }
        }
    }
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (reach[m->computations[i]->id])
            m->computations[kept++] = m->computations[i];
    m->n_computations = kept;
    free(reach);
    free(work);
}

/* Side s of region r as a module of its own: a copy of the module in which
 * the pair's computation becomes the entry, with the region's inputs
 * (those of both sides, by value number) as its parameters and the
 * output pairs' side-s values as its tuple root; nothing else is left. */
static IrModule *region_module(const Analysis *an, int s, const Side *side, const int *inputs, int n_inputs,
                               const Pair *outs, int n_outs, Error *err)
{
    IrModule *m = ir_module_copy(an->nb->m[s], err);
    if (!m)
        return NULL;
    IrComputation *c = ir_module_find_computation(m, an->c[s]->name);
    const IrComputation *orig = an->c[s];
    if (!c || c->n_instrs != orig->n_instrs) {
        ir_module_free(m);
        error_set(err, ERR_INTERNAL, orig->loc, "--local: computation %s did not copy", orig->name);
        return NULL;
    }
    /* The copy lists the instructions in the same order: position i of the
     * copy is position i of the original. */
    int *vn_of = xcalloc((size_t)m->next_instr_id + 1, sizeof *vn_of);
    char *keep = xcalloc((size_t)m->next_instr_id + 1, 1);
    for (int i = 0; i < c->n_instrs; i++)
        vn_of[c->instrs[i]->id] = an->key[s][orig->instrs[i]->id] - 1;
    for (int i = 0, j = 0; i < orig->n_instrs && j < side->n_members; i++)
        if (orig->instrs[i] == side->members[j]) {
            keep[c->instrs[i]->id] = 1;
            j++;
        }
    IrInstr **params = xcalloc((size_t)n_inputs + 1, sizeof *params);
    for (int k = 0; k < n_inputs; k++) {
        const IrInstr *like = an->by_key[s][inputs[k]];
        char base[64];
        snprintf(base, sizeof base, "local.input.%d", k);
        params[k] = xmust(ir_instr_new(m, IR_OP_PARAMETER, ir_unique_name(c, base),
                                       ir_shape_clone(m->arena, like->shape), 0, NULL));
        params[k]->info->parameter_number = k;
        params[k]->parent = c;
        /* A loop counter takes the values its loop gives it. */
        int64_t j;
        for (int q = 0; an->pair && q < an->pair->n_counters; q++)
            if (an->counter[s][like->id] && gte_of_param(like, orig, &j) && j == an->pair->counter[q]) {
                char range[96];
                snprintf(range, sizeof range, "{%s=\"%lld,%lld\"}", CHECK_RANGE_ATTR, (long long)an->pair->lo[q],
                         (long long)an->pair->hi[q]);
                ir_raw_attr_set(m, params[k], "frontend_attributes", range);
            }
    }
    /* Members read inputs through the parameters. */
    IrInstr **outputs = xcalloc((size_t)n_outs + 1, sizeof *outputs);
    IrShape **out_shapes = xcalloc((size_t)n_outs + 1, sizeof *out_shapes);
    int total = n_inputs + 1;
    for (int i = 0; i < c->n_instrs && total > 0; i++) {
        IrInstr *x = c->instrs[i];
        if (!keep[x->id])
            continue;
        total++;
        for (int k = 0; k < x->n_operands; k++) {
            if (keep[x->operands[k]->id])
                continue;
            int v = vn_of[x->operands[k]->id];
            const int *at = bsearch(&v, inputs, (size_t)n_inputs, sizeof *inputs, cmp_int);
            if (!at) {      /* cannot happen: every operand outside the region is an input */
                total = -1;
                break;
            }
            x->operands[k] = params[at - inputs];
        }
        int kept = 0;
        for (int k = 0; k < x->n_control_predecessors; k++)
            if (keep[x->control_predecessors[k]->id])
                x->control_predecessors[kept++] = x->control_predecessors[k];
        x->n_control_predecessors = kept;
        for (int j = 0; j < n_outs; j++)
            if (strcmp(x->name, outs[j].x[s]->name) == 0) {
                outputs[j] = x;
                out_shapes[j] = x->shape;
            }
    }
    /* An output that is not computed in the region (a parameter) is the
     * input it enters as. */
    for (int j = 0; j < n_outs && total > 0; j++) {
        if (outputs[j])
            continue;
        int v = an->key[s][outs[j].x[s]->id] - 1;
        const int *at = v >= 0 ? bsearch(&v, inputs, (size_t)n_inputs, sizeof *inputs, cmp_int) : NULL;
        if (at) {
            outputs[j] = params[at - inputs];
            out_shapes[j] = outputs[j]->shape;
        }
    }
    IrInstr **instrs = total > 0 ? ARENA_ARRAY(m->arena, IrInstr *, (size_t)total) : NULL;
    IrInstr **pslots = ARENA_ARRAY(m->arena, IrInstr *, (size_t)n_inputs + 1);
    IrShape *root_shape = ir_shape_new_tuple(m->arena, n_outs, out_shapes);
    IrInstr *root = instrs && pslots && root_shape
                        ? xmust(ir_instr_new(m, IR_OP_TUPLE, ir_unique_name(c, "local.outputs"), root_shape, n_outs, outputs))
                        : NULL;
    bool ok = root != NULL && total > 0;
    for (int j = 0; j < n_outs && ok; j++)
        ok = outputs[j] != NULL;
    if (ok) {
        int n = 0;
        for (int k = 0; k < n_inputs; k++)
            instrs[n++] = pslots[k] = params[k];
        for (int i = 0; i < c->n_instrs; i++) {
            if (keep[c->instrs[i]->id])
                instrs[n++] = c->instrs[i];
            else
                c->instrs[i]->dead = true;
        }
        root->parent = c;
        instrs[n++] = root;
        c->instrs = instrs;
        c->n_instrs = c->cap_instrs = n;
        c->params = pslots;
        c->n_params = n_inputs;
        c->root = root;
        c->root_marked = true;
        c->has_signature = true;
        for (int i = 0; i < m->n_computations; i++)
            m->computations[i]->is_entry = false;
        c->is_entry = true;
        m->entry = c;
        keep_reachable(m, c);
        ir_module_drop_entry_layout(m);
        Error verr = { 0 };
        if (!ir_verify_module(m, &verr))
            ok = error_set(err, ERR_INTERNAL, verr.loc, "--local: a region of %s does not verify: %s",
                           orig->name, verr.msg);
    } else {
        error_set(err, ERR_INTERNAL, orig->loc, "--local: cannot build a region of %s", orig->name);
    }
    free(vn_of);
    free(keep);
    free(params);
    free(outputs);
    free(out_shapes);
    if (!ok) {
        ir_module_free(m);
        return NULL;
    }
    return m;
}

/* ------------------------------------------------------------------ */
/* All regions of a pair                                                */

/* "a, b, c (+4)": up to three names of the side's region, collectives first. */
static void describe_side(const Side *side, char *out, size_t n)
{
    size_t len = 0;
    int shown = 0;
    out[0] = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < side->n_members && shown < 3; i++) {
            const IrInstr *x = side->members[i];
            bool coll = (ir_op_info[x->op].flags & OPF_COLLECTIVE) != 0;
            if ((pass == 0) != coll || x->op == IR_OP_PARAMETER)
                continue;
            len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s%s", shown ? ", " : "", x->name);
            shown++;
        }
    if (side->n_members > shown && len < n)
        snprintf(out + len, n - len, " (+%d)", side->n_members - shown);
}

/* A side that computes nothing (its outputs are parameters) by the names
 * of its outputs: "(p, q)". */
static void describe_inputs(const Pair *outs, int n_outs, int s, char *out, size_t n)
{
    if (out[0])
        return;
    size_t len = (size_t)snprintf(out, n, "(");
    for (int j = 0; j < n_outs && j < 3 && len < n; j++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", j ? ", " : "", outs[j].x[s]->name);
    if (len < n)
        snprintf(out + len, n - len, "%s)", n_outs > 3 ? ", ..." : "");
}

/* What decides whether one replica group can stand for all: every
 * collective of both sides on the same groups, all of one size, and no
 * device id read. */
static void classify(CheckRegion *r)
{
    const IrReplicaGroups *first = NULL;
    int first_mode = 0;
    r->group_size = 0;
    bool same = true;
    for (int s = 0; s < 2; s++) {
        const IrModule *m = s ? r->after : r->before;
        for (int c = 0; c < m->n_computations; c++)
            for (int i = 0; i < m->computations[c]->n_instrs; i++) {
                const IrInstr *x = m->computations[c]->instrs[i];
                if (x->op == IR_OP_REPLICA_ID || x->op == IR_OP_PARTITION_ID)
                    r->device_ids = true;
                if (x->op == IR_OP_SEND || x->op == IR_OP_RECV || x->op == IR_OP_SEND_DONE || x->op == IR_OP_RECV_DONE)
                    r->point_to_point = true;
                if (!(ir_op_info[x->op].flags & OPF_COLLECTIVE))
                    continue;
                const IrReplicaGroups *g = &x->info->replica_groups;
                int mode = 2 * x->ints[IR_INT_CHANNEL_ID].present + x->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS];
                if (!first) {
                    first = g;
                    first_mode = mode;
                } else if (!ir_replica_groups_equal(first, g) || mode != first_mode) {
                    same = false;
                }
                for (int k = 0; k < g->n_groups; k++)
                    if (g->group_sizes[k] != g->group_sizes[0])
                        same = false;
                if (g->n_groups == 0)
                    same = false;       /* {}: every device */
            }
    }
    /* The groups must name devices themselves (flattened ids, or replicas
     * of a module of one partition, or partitions of one replica) and
     * cover every device: then each group is one independent copy. */
    const IrModule *m = r->before;
    int64_t R = m->replica_count.present ? m->replica_count.v : 1, P = m->num_partitions.present ? m->num_partitions.v : 1;
    bool ids_are_devices = (first_mode & 1) || (first_mode == 0 && P == 1) || (first_mode == 2 && R == 1);
    int devices = check_module_devices(m, 0);
    if (first && same && !r->device_ids && first->n_groups > 0 && ids_are_devices &&
        (int64_t)first->n_groups * first->group_sizes[0] == devices)
        r->group_size = first->group_sizes[0];
}

int check_module_devices(const IrModule *m, int world)
{
    if (m->replica_count.present || m->num_partitions.present)
        return (int)((m->replica_count.present ? m->replica_count.v : 1) *
                     (m->num_partitions.present ? m->num_partitions.v : 1));
    int64_t max = -1;
    for (int c = 0; c < m->n_computations; c++)
        for (int i = 0; i < m->computations[c]->n_instrs; i++) {
            const IrReplicaGroups *g = &m->computations[c]->instrs[i]->info->replica_groups;
            for (int k = 0; k < g->n_groups; k++)
                for (int j = 0; j < g->group_sizes[k]; j++)
                    if (g->groups[k][j] > max)
                        max = g->groups[k][j];
        }
    return max >= 0 ? (int)max + 1 : world;
}

typedef struct Finder {
    Numbering nb;
    CompPair *queue;
    int n_queue, cap_queue;
    CheckRegion *regions;
    int n_regions, cap_regions;
} Finder;

static bool find_in_pair(Finder *f, const CompPair *pair, Error *err)
{
    const IrComputation *cb = pair->c[0], *ca = pair->c[1];
    Analysis an;
    analysis_init(&an, &f->nb, pair);
    /* One walk from the roots finds every output pair (a second walk would
     * skip the pairs the first one matched, and lose the output pairs
     * behind them); matches from the leaves down then only decide where
     * the regions stop, repeated while they find more. */
    correspond(&an);
    for (int round = 0; round < 64 && propagate(&an); round++)
        ;
    index_keys(&an);
    Grouping g = { { xcalloc((size_t)f->nb.m[0]->next_instr_id + 1, sizeof(int)),
                     xcalloc((size_t)f->nb.m[1]->next_instr_id + 1, sizeof(int)) },
                   xcalloc((size_t)an.n_outs + 1, sizeof(int)) };
    for (int p = 0; p < an.n_outs; p++)
        g.parent[p] = p;
    for (int p = 0; p < an.n_outs; p++)
        for (int s = 0; s < 2; s++)
            claim(&an, &g, s, p, an.outs[p].x[s]);
    bool ok = true;
    Pair *outs = xcalloc((size_t)an.n_outs + 1, sizeof *outs);
    for (int root = 0; root < an.n_outs && ok; root++) {
        if (find_root(g.parent, root) != root)
            continue;
        int n_outs = 0;
        for (int p = 0; p < an.n_outs; p++)
            if (find_root(g.parent, p) == root)
                outs[n_outs++] = an.outs[p];
        Side side[2];
        for (int s = 0; s < 2; s++)
            collect_side(&an, &g, s, root, outs, n_outs, &side[s]);
        int *inputs = xcalloc((size_t)(side[0].n_inputs + side[1].n_inputs) + 1, sizeof *inputs), n_inputs = 0;
        for (int s = 0; s < 2; s++)
            for (int k = 0; k < side[s].n_inputs; k++) {
                bool dup = false;
                for (int j = 0; j < n_inputs && !dup; j++)
                    dup = inputs[j] == side[s].inputs[k];
                if (!dup)
                    inputs[n_inputs++] = side[s].inputs[k];
            }
        qsort(inputs, (size_t)n_inputs, sizeof *inputs, cmp_int);
        if (f->n_regions == f->cap_regions) {
            f->cap_regions = f->cap_regions ? 2 * f->cap_regions : 8;
            f->regions = xrealloc(f->regions, (size_t)f->cap_regions * sizeof *f->regions);
        }
        CheckRegion *r = &f->regions[f->n_regions];
        memset(r, 0, sizeof *r);
        r->before = region_module(&an, 0, &side[0], inputs, n_inputs, outs, n_outs, err);
        r->after = r->before ? region_module(&an, 1, &side[1], inputs, n_inputs, outs, n_outs, err) : NULL;
        ok = r->after != NULL;
        if (ok) {
            snprintf(r->where, sizeof r->where, "%s", cb->name);
            if (strcmp(cb->name, ca->name) != 0)
                snprintf(r->where, sizeof r->where, "%s / %s", cb->name, ca->name);
            char db[200], da[200];
            describe_side(&side[0], db, sizeof db);
            describe_side(&side[1], da, sizeof da);
            describe_inputs(outs, n_outs, 0, db, sizeof db);
            describe_inputs(outs, n_outs, 1, da, sizeof da);
            snprintf(r->what, sizeof r->what, "%s -> %s", db, da);
            r->instrs[0] = side[0].n_members;
            r->instrs[1] = side[1].n_members;
            r->n_inputs = n_inputs;
            r->n_outputs = n_outs;
            classify(r);
            f->n_regions++;
        } else {
            ir_module_free(r->before);
        }
        for (int s = 0; s < 2; s++) {
            free(side[s].members);
            free(side[s].inputs);
        }
        free(inputs);
    }
    for (int k = 0; k < an.n_nested && ok; k++) {
        bool dup = false;
        for (int j = 0; j < f->n_queue && !dup; j++)
            dup = f->queue[j].c[0] == an.nested[k].c[0] && f->queue[j].c[1] == an.nested[k].c[1];
        if (dup)
            continue;
        if (f->n_queue == f->cap_queue) {
            f->cap_queue = f->cap_queue ? 2 * f->cap_queue : 8;
            f->queue = xrealloc(f->queue, (size_t)f->cap_queue * sizeof *f->queue);
        }
        f->queue[f->n_queue++] = an.nested[k];
    }
    free(outs);
    free(g.owner[0]);
    free(g.owner[1]);
    free(g.parent);
    analysis_free(&an);
    return ok;
}

bool check_find_regions(const IrModule *before, const IrModule *after, CheckRegion **out, int *n_out, Error *err)
{
    Finder f = { .nb = { .arena = arena_new(1 << 20), .m = { before, after } } };
    f.nb.keys = ir_namemap_new(f.nb.arena);
    StrBuf key;
    strbuf_init(&key);
    number_module(&f.nb, 0, &key);
    number_module(&f.nb, 1, &key);
    strbuf_free(&key);
    f.queue = xcalloc(8, sizeof *f.queue);
    f.cap_queue = 8;
    f.queue[f.n_queue++] = (CompPair){ { before->entry, after->entry }, 0, { 0 }, { 0 }, { 0 } };
    bool ok = true;
    for (int q = 0; q < f.n_queue && ok; q++)
        ok = find_in_pair(&f, &f.queue[q], err);
    free(f.queue);
    for (int s = 0; s < 2; s++) {
        free(f.nb.vn[s]);
        free(f.nb.cvn[s]);
    }
    arena_free(f.nb.arena);
    if (!ok) {
        check_regions_free(f.regions, f.n_regions);
        return false;
    }
    *out = f.regions;
    *n_out = f.n_regions;
    return true;
}

void check_regions_free(CheckRegion *r, int n)
{
    for (int i = 0; i < n; i++) {
        ir_module_free(r[i].before);
        ir_module_free(r[i].after);
    }
    free(r);
}

bool check_region_one_group(CheckRegion *r, Error *err)
{
    int g = r->group_size;
    if (g < 2)
        return error_set(err, ERR_INTERNAL, (IrLoc){ 0 }, "--local: region %s has no group to stand for all", r->what);
    for (int s = 0; s < 2; s++) {
        IrModule *m = s ? r->after : r->before;
        int64_t *ids = ARENA_ARRAY(m->arena, int64_t, (size_t)g);
        int64_t **groups = ARENA_ARRAY(m->arena, int64_t *, 1);
        int *sizes = ARENA_ARRAY(m->arena, int, 1);
        if (!ids || !groups || !sizes)
            return error_set(err, ERR_NOMEM, (IrLoc){ 0 }, "out of memory");
        for (int k = 0; k < g; k++)
            ids[k] = k;
        groups[0] = ids;
        sizes[0] = g;
        m->replica_count = (IrOptInt){ true, g };
        m->num_partitions = (IrOptInt){ false, 0 };
        for (int c = 0; c < m->n_computations; c++)
            for (int i = 0; i < m->computations[c]->n_instrs; i++) {
                IrInstr *x = m->computations[c]->instrs[i];
                if (!(ir_op_info[x->op].flags & OPF_COLLECTIVE))
                    continue;
                /* One group of every device, as replicas: device k plays
                 * the k-th member of each original group. */
                x->info->replica_groups = (IrReplicaGroups){ .form = IR_GROUPS_EXPLICIT, .n_groups = 1,
                                                              .group_sizes = sizes, .groups = groups };
                ir_set_channel_id(m, x, -1);
                x->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS] = false;
            }
        ir_module_drop_entry_layout(m);
        Error verr = { 0 };
        if (!ir_verify_module(m, &verr))
            return error_set(err, ERR_INTERNAL, verr.loc, "--local: region %s on one group does not verify: %s",
                             r->what, verr.msg);
    }
    return true;
}
