/* local_values.c: steps 1 and 2 of hlo-check --local: which instructions
 * of the two modules compute the same value, and the output pairs, which
 * compute it differently and the rewrite claims equal (local_regions.c does
 * step 3, the regions, and says why the modules are equivalent when every
 * region is).  hlo-check --local: when a rewrite changes a few places of a
 * big module, check each place on its own, at its real shapes, instead of
 * the whole module (which may need far more memory than the machine has).
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
 *    its own, with corresponding parameters. */
#include "check_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Value numbers                                                        */

static int number_of(CheckNumbering *nb, StrBuf *key)
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
static void literal_key(const CheckNumbering *nb, const IrInstr *in, StrBuf *key)
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
static void op_key(const CheckNumbering *nb, int side, const IrInstr *in, StrBuf *key)
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

static void number_instr(CheckNumbering *nb, int side, const IrInstr *in, StrBuf *key)
{
    op_key(nb, side, in, key);
    strbuf_puts(key, "|ops");
    for (int k = 0; k < in->n_operands; k++)
        strbuf_printf(key, " %d", nb->vn[side][in->operands[k]->id]);
    nb->vn[side][in->id] = number_of(nb, key);
}

void check_number_module(CheckNumbering *nb, int side, StrBuf *key)
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

static bool int_constant(const IrInstr *x, int64_t *v)
{
    if (x->op != IR_OP_CONSTANT || x->shape->rank != 0 || !ir_type_is_int(x->shape->type) || !x->info->literal ||
        !x->info->literal->data)
        return false;
    *v = ir_elem_get_i64(x->shape->type, x->info->literal->data);
    return true;
}

bool check_gte_of_param(const IrInstr *x, const IrComputation *c, int64_t *index)
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
static void loop_counters(const IrInstr *w, CheckCompPair *pair)
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
    if (!check_gte_of_param(l, cond, &j) || !int_constant(r, &bound) || (dir != IR_CMP_LT && dir != IR_CMP_LE) ||
        j < 0 || j >= init->n_operands || j >= next->n_operands || !int_constant(init->operands[j], &start))
        return;
    const IrInstr *inc = next->operands[j];
    int64_t k;
    bool step = inc->op == IR_OP_ADD &&
                ((check_gte_of_param(inc->operands[0], body, &k) && int_constant(inc->operands[1], &one)) ||
                 (check_gte_of_param(inc->operands[1], body, &k) && int_constant(inc->operands[0], &one)));
    int64_t hi = dir == IR_CMP_LE ? bound + 1 : bound;
    if (step && k == j && one == 1 && hi > start && pair->n_counters < MAX_COUNTERS) {
        pair->counter[pair->n_counters] = (int)j;
        pair->lo[pair->n_counters] = start;
        pair->hi[pair->n_counters++] = hi;
    }
}

/* The counters both loops have alike. */
static void shared_counters(const IrInstr *wb, const IrInstr *wa, CheckCompPair *pair)
{
    CheckCompPair b = { .n_counters = 0 }, a = { .n_counters = 0 };
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

bool check_shared(const CheckAnalysis *an, const IrInstr *x, int side)
{
    int v = an->nb->vn[side][x->id];
    return an->by_vn[0][v] && an->by_vn[1][v];
}

static bool seen_pair(CheckAnalysis *an, const IrInstr *b, const IrInstr *a)
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
static bool alike(CheckAnalysis *an, const IrInstr *b, const IrInstr *a, StrBuf *kb, StrBuf *ka)
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
                CheckCompPair pair = { { cb[k], ca[k] }, 0, { 0 }, { 0 }, { 0 } };
                if (b->op == IR_OP_WHILE && cb[k] == b->info->comps[IR_COMP_BODY])
                    shared_counters(b, a, &pair);
                an->nested[an->n_nested++] = pair;
            }
        }
    return true;
}

static void add_out(CheckAnalysis *an, const IrInstr *b, const IrInstr *a)
{
    if (an->n_outs == an->cap_outs) {
        an->cap_outs = an->cap_outs ? 2 * an->cap_outs : 16;
        an->outs = xrealloc(an->outs, (size_t)an->cap_outs * sizeof *an->outs);
    }
    an->outs[an->n_outs++] = (CheckValuePair){ { b, a } };
}

/* b and a compute the same value (once every region upstream is shown
 * equal): both are known by one number, which a region reading either of
 * them takes as one input. */
static void match(CheckAnalysis *an, const IrInstr *b, const IrInstr *a)
{
    int kb = an->key[0][b->id], ka = an->key[1][a->id];
    if (kb && ka)
        return;
    int k = kb ? kb : ka ? ka : ++an->n_keys;
    if (!check_shared(an, b, 0))
        an->key[0][b->id] = k;
    if (!check_shared(an, a, 1))
        an->key[1][a->id] = k;
}

void check_correspond(CheckAnalysis *an)
{
    StrBuf kb, ka;
    strbuf_init(&kb);
    strbuf_init(&ka);
    size_t n = 0, cap = 64;
    CheckValuePair *stack = xmalloc(cap * sizeof *stack);
    stack[n++] = (CheckValuePair){ { an->c[0]->root, an->c[1]->root } };
    while (n > 0) {
        CheckValuePair p = stack[--n];
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
            stack[n++] = (CheckValuePair){ { b->operands[k], a->operands[k] } };
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
bool check_propagate(CheckAnalysis *an)
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

void check_analysis_init(CheckAnalysis *an, CheckNumbering *nb, const CheckCompPair *pair)
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
                counter = check_gte_of_param(x, c, &j) && j == an->pair->counter[k];
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
            if (check_shared(an, x, s))
                an->key[s][x->id] = nb->vn[s][x->id] + 1;
        }
    an->n_keys = an->n_vn;
}

/* After the correspondence: the instruction of each side each key names. */
void check_index_keys(CheckAnalysis *an)
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

void check_analysis_free(CheckAnalysis *an)
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
