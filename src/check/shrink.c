/* shrink.c: --shrink.  From a pair that differs, the smallest pair that
 * still differs in the same way, with the inputs that show it.
 *
 * The interpreter is deterministic, so no search is needed: an instruction
 * both modules compute with bitwise the same value on every rank can be
 * replaced in both by a parameter fed that value without changing either
 * module's outputs.  One probed run of each module records every candidate's
 * value; one walk from the output, nearest first, picks the replacements
 * (everything behind a replaced instruction goes with it); what is left is
 * the failing output and the instructions whose values differ, or that
 * feed them without a shared equal value. */
#include "check.h"
#include "coll.h"
#include "check_internal.h"
#include "shrink_internal.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_CONSTANT_ELEMENTS = 16 };   /* larger equal values stay parameters */
#define MAX_PROBE_BYTES ((size_t)1 << 30)

/* ---- Module editing on private copies */

/* The instruction computing flattened result leaf *leaf of x, found through
 * tuple instructions; NULL when a leaf comes from something else. */
static IrInstr *leaf_instr(IrInstr *x, int *leaf)
{
    if (x->shape->type != IR_TYPE_TUPLE)
        return (*leaf)-- == 0 ? x : NULL;
    if (x->op != IR_OP_TUPLE)
        return NULL;
    for (int k = 0; k < x->n_operands && *leaf >= 0; k++) {
        IrInstr *found = leaf_instr(x->operands[k], leaf);
        if (found || *leaf < 0)
            return found;
    }
    return NULL;
}

/* Makes output `leaf` the only result of m; false when it cannot be singled
 * out (m unchanged). */
static bool keep_output(IrModule *m, int leaf)
{
    IrInstr *x = leaf_instr(m->entry->root, &leaf);
    if (!x)
        return false;
    m->entry->root = x;
    ir_module_drop_entry_layout(m);
    return true;
}

/* x replaced by a parameter numbered `number` (or, with as_constant, a
 * constant holding v) that takes its name. */
static void replace_by_value(IrModule *m, IrInstr *x, int number, const Value *v, bool as_constant)
{
    IrComputation *e = m->entry;
    IrInstr *p = xmust(ir_instr_new(m, as_constant ? IR_OP_CONSTANT : IR_OP_PARAMETER, "hlocheck.shrink", x->shape,
                                    0, NULL));
    if (as_constant) {
        IrLiteral *lit = xmust(arena_alloc(m->arena, sizeof *lit));
        void *data = xmust(arena_alloc(m->arena, value_bytes(v)));
        memcpy(data, v->data, value_bytes(v));
        *lit = (IrLiteral){ .shape = x->shape, .data = data };
        p->info->literal = lit;
    } else {
        p->info->parameter_number = number;
    }
    int first = 0;      /* after the parameters, so they read in number order */
    while (first < e->n_instrs && e->instrs[first]->op == IR_OP_PARAMETER)
        first++;
    if (first < e->n_instrs)
        ir_computation_insert_before(e, e->instrs[first], p);
    else
        ir_computation_append(e, p);
    ir_replace_all_uses(e, x, p);
    ir_computation_remove(e, x);
    p->name = x->name;
}

/* The entry's parameters in number order (after numbers changed). */
static void renumber_params(IrModule *m)
{
    IrComputation *e = m->entry;
    int n = 0;
    for (int i = 0; i < e->n_instrs; i++)
        n += e->instrs[i]->op == IR_OP_PARAMETER;
    e->params = xmust(arena_alloc(m->arena, ((size_t)n + 1) * sizeof *e->params));
    e->n_params = n;
    for (int i = 0; i < e->n_instrs; i++)
        if (e->instrs[i]->op == IR_OP_PARAMETER && e->instrs[i]->info->parameter_number < n)
            e->params[e->instrs[i]->info->parameter_number] = e->instrs[i];
}

static bool is_used(const IrModule *m, const IrInstr *x)
{
    return x->n_users > 0 || m->entry->root == x;
}

/* Removes the parameters neither module uses from both (same numbering in
 * both), and their inputs; returns how many went. */
static int drop_unused_params(IrModule *b, IrModule *a, Value **inputs, int *n_inputs)
{
    ir_computation_build_users(b->entry);
    ir_computation_build_users(a->entry);
    if (b->nomem || a->nomem)
        xmust(NULL);        /* out of memory: without users lists every parameter would look unused */
    int n = b->entry->n_params, kept = 0, dropped = 0;
    for (int p = 0; p < n; p++) {
        IrInstr *pb = b->entry->params[p], *pa = a->entry->params[p];
        if (is_used(b, pb) || is_used(a, pa)) {
            pb->info->parameter_number = pa->info->parameter_number = kept;
            inputs[kept++] = inputs[p];
            continue;
        }
        ir_computation_remove(b->entry, pb);
        ir_computation_remove(a->entry, pa);
        value_release(inputs[p]);
        dropped++;
    }
    *n_inputs = kept;
    renumber_params(b);
    renumber_params(a);
    return dropped;
}

/* Drops the computations nothing reachable from the entry calls. */
static void mark_called(const IrComputation *c, bool *reached)
{
    if (reached[c->id])
        return;
    reached[c->id] = true;
    for (int i = 0; i < c->n_instrs; i++) {
        IrComputation *called[64];
        int n = ir_instr_called(c->instrs[i], called, 64);
        for (int k = 0; k < n && k < 64; k++)
            mark_called(called[k], reached);
    }
}

static void drop_uncalled(IrModule *m)
{
    bool *reached = xcalloc((size_t)m->next_computation_id + 1, sizeof *reached);
    mark_called(m->entry, reached);
    int kept = 0;
    for (int i = 0; i < m->n_computations; i++)
        if (reached[m->computations[i]->id])
            m->computations[kept++] = m->computations[i];
    m->n_computations = kept;
    free(reached);
}

static void remove_dead(IrModule *m)
{
    ir_module_remove_dead(m);
    drop_uncalled(m);
}

/* ---- Which instructions may go */

typedef struct Candidates {
    int n;
    const char **names;     /* entry instructions of both modules with the same name and shape */
    bool *equal;            /* same bits in both, on every rank */
    bool *uniform;          /* and the same on every rank (small values only) */
    Value **values;         /* this rank's value, its shape in probed */
    IrModule *probed;       /* before with the probes */
} Candidates;

static void find_candidates(const IrModule *b, const IrModule *a, Candidates *cs)
{
    const IrComputation *e = b->entry;
    cs->names = xcalloc((size_t)e->n_instrs + 1, sizeof *cs->names);
    size_t bytes = 0;
    for (int i = 0; i < e->n_instrs; i++) {
        const IrInstr *x = e->instrs[i];
        if (x == e->root || x->op == IR_OP_PARAMETER || x->op == IR_OP_CONSTANT || !ir_shape_is_array(x->shape))
            continue;
        const IrInstr *y = ir_computation_find(a->entry, x->name);
        if (!y || y == a->entry->root || y->op == IR_OP_PARAMETER || !ir_shape_equal(x->shape, y->shape))
            continue;
        bytes += (size_t)ir_shape_elements(x->shape) * (size_t)ir_type_info[x->shape->type].storage_bytes;
        if (bytes > MAX_PROBE_BYTES)
            break;
        cs->names[cs->n++] = x->name;
    }
    cs->equal = xcalloc((size_t)cs->n + 1, sizeof *cs->equal);
    cs->uniform = xcalloc((size_t)cs->n + 1, sizeof *cs->uniform);
    cs->values = xcalloc((size_t)cs->n + 1, sizeof *cs->values);
}

static void candidates_free(Candidates *cs)
{
    for (int k = 0; k < cs->n; k++)
        value_release(cs->values[k]);
    free(cs->names);
    free(cs->equal);
    free(cs->uniform);
    free(cs->values);
    ir_module_free(cs->probed);
}

static int64_t hash_bytes(const void *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
    return (int64_t)(h >> 1);
}

/* m probed at every candidate, run on inputs; *out the result tuple
 * (root, candidates...), whose shapes live in *probed (the caller frees it). */
static bool run_probed(const IrModule *m, const Candidates *cs, const InterpOptions *io, Value **inputs, int n,
                       IrModule **probed, Value **out, Error *err)
{
    IrModule *p = *probed = check_probe_module(m, cs->names, cs->n, err);
    Interp *it = p ? interp_new(p, io, err) : NULL;
    bool ok = it != NULL;
    if (ok) {
        for (int i = 0; i < n; i++)
            value_retain(inputs[i]);
        ok = interp_run(it, inputs, n, out, err);
    }
    interp_free(it);
    return ok;
}

/* Records each candidate's value and whether it is the same in both
 * modules on every rank (and the same on every rank). */
static bool measure(Coll *c, const IrModule *b, const IrModule *a, const CheckOptions *opt, Value **inputs, int n,
                    Candidates *cs, Error *err)
{
    InterpDevice dev;
    char note[256];
    if (!coll_setup_devices(c, b, opt->replicas, opt->partitions, &dev, note, sizeof note, err))
        return false;
    InterpOptions io = { .device = dev, .comm = coll_comm(c),
                         .opaque = opt->opaque_custom_calls ? check_opaque_custom_call : NULL };
    Value *vb = NULL, *va = NULL;
    IrModule *pa = NULL;
    bool ok = run_probed(b, cs, &io, inputs, n, &cs->probed, &vb, err) &&
              run_probed(a, cs, &io, inputs, n, &pa, &va, err);
    int64_t *flags = xcalloc(3 * (size_t)cs->n + 1, sizeof *flags);
    for (int k = 0; ok && k < cs->n; k++) {
        const Value *x = vb->elements[k + 1], *y = va->elements[k + 1];
        size_t bytes = value_bytes(x);
        flags[k] = bytes == value_bytes(y) && memcmp(x->data, y->data, bytes) == 0;
        flags[cs->n + k] = flags[2 * cs->n + k] =
            ir_shape_elements(x->shape) <= MAX_CONSTANT_ELEMENTS ? hash_bytes(x->data, bytes) : -1;
        cs->values[k] = value_retain(vb->elements[k + 1]);
    }
    if (ok && !coll_all_ok(c, true))
        ok = false;
    if (ok) {
        /* equal: min over ranks; uniform: the hash's min and max agree. */
        coll_allreduce_i64(c, flags, 2 * cs->n, COLL_MIN);
        coll_allreduce_i64(c, flags + 2 * cs->n, cs->n, COLL_MAX);
        for (int k = 0; k < cs->n; k++) {
            cs->equal[k] = flags[k] == 1;
            cs->uniform[k] = flags[cs->n + k] >= 0 && flags[cs->n + k] == flags[2 * cs->n + k];
        }
    } else if (!ok) {
        coll_all_ok(c, false);
    }
    free(flags);
    value_release(vb);
    value_release(va);
    ir_module_free(pa);
    return ok;
}

/* A name -> candidate index lookup over a module's entry (-1: none). */
static int *candidate_index(const IrModule *m, const Candidates *cs)
{
    IrNameMap *map = ir_namemap_new(m->arena);
    for (int k = 0; k < cs->n; k++)
        ir_namemap_put(map, cs->names[k], (void *)(intptr_t)(k + 1));
    int *index = xcalloc((size_t)m->entry->n_instrs + 1, sizeof *index);
    for (int i = 0; i < m->entry->n_instrs; i++) {
        const char *name = m->entry->instrs[i]->name;
        index[i] = (int)(intptr_t)ir_namemap_get(map, name, strlen(name)) - 1;
    }
    return index;
}

/* Walks m's entry from the root backwards (users before their operands):
 * an equal candidate still reached is chosen and the walk stops there. */
static void choose(const IrModule *m, const Candidates *cs, bool *chosen)
{
    const IrComputation *e = m->entry;
    int *index = candidate_index(m, cs);
    int *pos = xcalloc((size_t)m->next_instr_id + 1, sizeof *pos);
    bool *live = xcalloc((size_t)e->n_instrs + 1, sizeof *live);
    for (int i = 0; i < e->n_instrs; i++) {
        pos[e->instrs[i]->id] = i;
        if (e->instrs[i] == e->root)
            live[i] = true;
    }
    for (int i = e->n_instrs - 1; i >= 0; i--) {
        const IrInstr *x = e->instrs[i];
        int k = index[i];
        if (!live[i] || (k >= 0 && (chosen[k] || cs->equal[k]))) {
            if (live[i] && k >= 0)
                chosen[k] = true;
            continue;
        }
        for (int j = 0; j < x->n_operands; j++)
            if (x->operands[j]->parent == e)
                live[pos[x->operands[j]->id]] = true;
        for (int j = 0; j < x->n_control_predecessors; j++)
            if (x->control_predecessors[j]->parent == e)
                live[pos[x->control_predecessors[j]->id]] = true;
    }
    free(index);
    free(pos);
    free(live);
}

/* The array inputs as values of m's parameter shapes (the recorded ones
 * have their shapes in modules about to go). */
static bool rebind_inputs(const IrModule *m, Value **in, int n, Error *err)
{
    for (int p = 0; p < n; p++) {
        const IrShape *s = m->entry->params[p]->shape;
        if (s->type == IR_TYPE_TUPLE)
            continue;
        Value *v = value_new_array(s, err);
        if (!v)
            return false;
        memcpy(v->data, in[p]->data, value_bytes(v));
        value_release(in[p]);
        in[p] = v;
    }
    return true;
}

/* ---- Smaller shapes */

static bool dims_equal(const IrShape *a, const IrShape *b)
{
    return ir_shape_is_array(a) && ir_shape_is_array(b) && ir_shape_equal_dims(a, b);
}

/* Every entry instruction is element-wise over arrays of dims d (or a
 * scalar), and nothing else is called but all-reduce's reducer. */
static bool elementwise_over(const IrModule *m, const IrShape *d)
{
    const IrComputation *e = m->entry;
    for (int i = 0; i < e->n_instrs; i++) {
        const IrInstr *x = e->instrs[i];
        bool full = dims_equal(x->shape, d), scalar = ir_shape_is_array(x->shape) && x->shape->rank == 0;
        if (!full && !scalar)
            return false;
        if (x->op == IR_OP_PARAMETER || x->op == IR_OP_CONSTANT)
            continue;
        if (x->op == IR_OP_BROADCAST) {
            if (x->operands[0]->shape->rank != 0)
                return false;
            continue;
        }
        if (x->op == IR_OP_ALL_REDUCE) {    /* element i of the result: element i of each rank's */
            if (x->n_operands != 1)
                return false;
            continue;
        }
        if (!(ir_op_info[x->op].flags & OPF_ELEMENTWISE) || x->op == IR_OP_STOCHASTIC_CONVERT)
            return false;
        for (int k = 0; k < x->n_operands; k++)
            if (!dims_equal(x->operands[k]->shape, d) && x->operands[k]->shape->rank != 0)
                return false;
    }
    return e->root->shape->rank > 0;
}

/* x (of dims d) as a scalar holding its element index. */
static void cut_to_element(IrModule *m, IrInstr *x, int64_t index)
{
    IrShape *scalar = xmust(ir_shape_new_array(m->arena, x->shape->type, 0, NULL));
    if (x->op == IR_OP_CONSTANT && x->info->literal && x->info->literal->data) {
        size_t es = (size_t)ir_type_storage_bytes(x->shape->type);
        IrLiteral *lit = xmust(arena_alloc(m->arena, sizeof *lit));
        void *data = xmust(arena_alloc(m->arena, es));
        memcpy(data, (const char *)x->info->literal->data + (size_t)index * es, es);
        *lit = (IrLiteral){ .shape = scalar, .data = data };
        x->info->literal = lit;
    }
    x->shape = scalar;
}

/* A copy of m with every array of dims d cut to its element index. */
static IrModule *cut_module(const IrModule *m, const IrShape *d, int64_t index, Error *err)
{
    IrModule *c = ir_module_copy(m, err);
    if (!c)
        return NULL;
    IrComputation *e = c->entry;
    for (int i = 0; i < e->n_instrs; i++)
        if (dims_equal(e->instrs[i]->shape, d))
            cut_to_element(c, e->instrs[i], index);
    for (int i = 0; i < e->n_instrs; i++) {     /* a broadcast of a scalar to a scalar is its operand */
        IrInstr *x = e->instrs[i];
        if (x->op == IR_OP_BROADCAST && x->shape->rank == 0 && x != e->root)
            ir_replace_all_uses(e, x, x->operands[0]);
    }
    remove_dead(c);
    return check_shrink_fresh(c, err);
}

IrModule *check_shrink_fresh(IrModule *m, Error *err)
{
    IrModule *fresh = ir_module_copy(m, err);
    ir_module_free(m);
    if (fresh && !ir_verify_module(fresh, err)) {
        ir_module_free(fresh);
        return NULL;
    }
    return fresh;
}

bool check_shrink_to_element(CheckShrink *s, int64_t index, Error *err)
{
    const IrShape *d = s->before->entry->root->shape;
    if (!elementwise_over(s->before, d) || !elementwise_over(s->after, d) ||
        !dims_equal(d, s->after->entry->root->shape) || index < 0 || index >= ir_shape_elements(d))
        return false;
    for (int p = 0; p < s->n_inputs; p++)
        if (!dims_equal(s->inputs[p]->shape, d) && s->inputs[p]->shape->rank != 0)
            return false;
    IrModule *b = cut_module(s->before, d, index, err), *a = b ? cut_module(s->after, d, index, err) : NULL;
    Value **in = xcalloc((size_t)s->n_inputs + 1, sizeof *in);
    bool ok = a != NULL;
    for (int p = 0; ok && p < s->n_inputs; p++) {
        const Value *v = s->inputs[p];
        const IrShape *ps = b->entry->params[p]->shape;
        ok = (in[p] = value_new_array(ps, err)) != NULL;
        size_t es = (size_t)ir_type_storage_bytes(ps->type);
        if (ok)
            memcpy(in[p]->data, (const char *)v->data + (v->shape->rank == 0 ? 0 : (size_t)index * es), es);
    }
    if (!ok) {
        for (int p = 0; p < s->n_inputs; p++)
            value_release(in[p]);
        free(in);
        ir_module_free(b);
        ir_module_free(a);
        return false;
    }
    check_shrink_install(s, b, a, in);
    return true;
}

void check_shrink_install(CheckShrink *s, IrModule *before, IrModule *after, Value **inputs)
{
    for (int p = 0; p < s->n_inputs; p++)
        value_release(s->inputs[p]);
    free(s->inputs);
    s->inputs = inputs;
    ir_module_free(s->before);
    ir_module_free(s->after);
    s->before = before;
    s->after = after;
    s->instrs[0][1] = before->entry->n_instrs;
    s->instrs[1][1] = after->entry->n_instrs;
}

/* ---- Fewer ranks */

bool check_rank_free(const IrModule *m)
{
    for (int c = 0; c < m->n_computations; c++)
        for (int i = 0; i < m->computations[c]->n_instrs; i++) {
            IrOpcode op = m->computations[c]->instrs[i]->op;
            if ((ir_op_info[op].flags & OPF_COLLECTIVE) || op == IR_OP_REPLICA_ID || op == IR_OP_PARTITION_ID ||
                op == IR_OP_ASYNC_START || op == IR_OP_ASYNC_UPDATE || op == IR_OP_ASYNC_DONE ||
                op == IR_OP_CUSTOM_CALL || op == IR_OP_SEND || op == IR_OP_RECV)
                return false;
        }
    return true;
}

static bool run_alone(const IrModule *m, Value *const *inputs, int n, Value **out, Error *err)
{
    InterpOptions io = { .device = { 0, 1, 1, 1 }, .comm = NULL };
    Interp *it = interp_new(m, &io, err);
    bool ok = it != NULL;
    if (ok) {
        for (int i = 0; i < n; i++)
            value_retain(inputs[i]);
        ok = interp_run(it, (Value **)inputs, n, out, err);
    }
    interp_free(it);
    return ok;
}

bool check_differs_alone(const IrModule *before, const IrModule *after, Value *const *inputs, int n,
                         bool *differs, Error *err)
{
    Value *vb = NULL, *va = NULL;
    bool ok = run_alone(before, inputs, n, &vb, err) && run_alone(after, inputs, n, &va, err);
    if (ok)
        *differs = !value_bits_equal(vb, va);
    value_release(vb);
    value_release(va);
    return ok;
}

/* ---- The whole shrink */

static bool failing_inputs(const IrModule *m, Coll *c, const CheckOptions *opt, const CheckReport *rep,
                           Value **in, Error *err)
{
    int n = m->entry->n_params;
    if (opt->inputs) {
        for (int i = 0; i < n; i++)
            in[i] = value_retain(opt->inputs[i]);
        return true;
    }
    return check_random_inputs(m, coll_rank(c), rep->diff.seed, rep->diff.dist, in, err);
}

bool check_shrink(Coll *c, const IrModule *before, const IrModule *after, const CheckOptions *opt,
                  const CheckReport *rep, CheckShrink *out, Error *err)
{
    memset(out, 0, sizeof *out);
    out->instrs[0][0] = before->entry->n_instrs;
    out->instrs[1][0] = after->entry->n_instrs;
    IrModule *b = ir_module_copy(before, err), *a = b ? ir_module_copy(after, err) : NULL;
    int n0 = before->entry->n_params, n_new = 0;
    Value **in = xcalloc((size_t)n0 + 1, sizeof *in);
    Candidates cs = { 0 };
    bool ok = a && failing_inputs(before, c, opt, rep, in, err);
    if (ok && rep->n_outputs > 1 && keep_output(b, rep->diff.output)) {
        if (keep_output(a, rep->diff.output)) {
            out->outputs_dropped = rep->n_outputs - 1;
        } else {        /* cannot single it out in after: keep both whole */
            ir_module_free(b);
            ok = (b = ir_module_copy(before, err)) != NULL;
        }
    }
    if (ok) {
        remove_dead(b);
        remove_dead(a);
        find_candidates(b, a, &cs);
        ok = measure(c, b, a, opt, in, n0, &cs, err);
    }
    bool *chosen = xcalloc((size_t)cs.n + 1, sizeof *chosen);
    if (ok) {
        choose(b, &cs, chosen);
        choose(a, &cs, chosen);
        in = xrealloc(in, ((size_t)n0 + (size_t)cs.n + 1) * sizeof *in);
        for (int k = 0; k < cs.n; k++) {
            if (!chosen[k])
                continue;
            bool as_constant = cs.uniform[k];
            replace_by_value(b, ir_computation_find(b->entry, cs.names[k]), n0 + n_new, cs.values[k], as_constant);
            replace_by_value(a, ir_computation_find(a->entry, cs.names[k]), n0 + n_new, cs.values[k], as_constant);
            if (as_constant) {
                out->to_constants++;
            } else {
                in[n0 + n_new++] = value_retain(cs.values[k]);
                out->to_parameters++;
            }
        }
        renumber_params(b);
        renumber_params(a);
        remove_dead(b);
        remove_dead(a);
        int n_in = n0 + n_new;
        out->parameters_dropped = drop_unused_params(b, a, in, &n_in);
        ir_module_drop_entry_layout(b);
        ir_module_drop_entry_layout(a);
        /* Through the text once more: fresh name maps, the same modules a
         * user gets from the written files. */
        out->before = ir_module_copy(b, err);
        out->after = out->before ? ir_module_copy(a, err) : NULL;
        ok = out->after && ir_verify_module(out->before, err) && ir_verify_module(out->after, err) &&
             rebind_inputs(out->before, in, n_in, err);
        out->inputs = in;
        out->n_inputs = n_in;
        in = NULL;
        if (ok) {
            out->instrs[0][1] = out->before->entry->n_instrs;
            out->instrs[1][1] = out->after->entry->n_instrs;
        }
    }
    if (in)
        for (int i = 0; i < n0; i++)
            value_release(in[i]);
    free(in);
    free(chosen);
    candidates_free(&cs);
    ir_module_free(b);
    ir_module_free(a);
    if (!ok)
        check_shrink_free(out);
    return ok;
}

bool check_shrink_copy(const CheckShrink *s, CheckShrink *copy, Error *err)
{
    *copy = *s;
    copy->before = ir_module_copy(s->before, err);
    copy->after = copy->before ? ir_module_copy(s->after, err) : NULL;
    copy->inputs = xcalloc((size_t)s->n_inputs + 1, sizeof *copy->inputs);
    for (int p = 0; p < s->n_inputs; p++)
        copy->inputs[p] = value_retain(s->inputs[p]);
    if (copy->after && rebind_inputs(copy->before, copy->inputs, copy->n_inputs, err))
        return true;
    check_shrink_free(copy);
    return false;
}

void check_shrink_free(CheckShrink *s)
{
    for (int i = 0; s->inputs && i < s->n_inputs; i++)     /* before the modules: their shapes are there */
        value_release(s->inputs[i]);
    free(s->inputs);
    ir_module_free(s->before);
    ir_module_free(s->after);
    memset(s, 0, sizeof *s);
}
