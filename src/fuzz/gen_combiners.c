/* gen_combiners.c: sites of the three combiners (spec/passes.md 2): #77
 * all-gather, #78 reduce-scatter, #79 all-reduce.  One call places a
 * cluster of collectives of the pass's opcode in one computation, each a
 * site of its own: most share one key, the others differ from it in one
 * field of the key or in what the engine checks besides (a dependence on
 * an earlier member, a control edge, constrain_layout), with collectives
 * the pass must leave alone among them (another opcode, already variadic).
 * The first call draws the module's combiner flags.  Which members are
 * combined with which is the model's to say (model.c), once every site of
 * the module is built. */
#include "gen.h"

#include <stdio.h>
#include <string.h>

#define MAX_MEMBERS 5

typedef enum Variation {
    VAR_SAME,           /* the cluster's key */
    VAR_FORM,           /* the same groups printed in another form ({}: its explicit list, another key) */
    VAR_DIM,            /* another gather / scatter dimension */
    VAR_TYPE,           /* another element type */
    VAR_GROUPS,         /* groups and mode drawn afresh */
    VAR_REDUCER,        /* another trivial reducer, or the same op made non-trivial */
    VAR_CHANNEL,        /* channel_id presence flipped: cross-replica <-> cross-replica-and-partition */
    VAR_CONTROL,        /* a control predecessor: no key, for it and for a member that is the predecessor */
    VAR_CHAIN,          /* its operand depends on an earlier member */
    VAR_CONSTRAIN,      /* constrain_layout=true: gates the whole pass off */
    VAR_GLOBAL,         /* one partition: use_global_device_ids flipped, the same ids (flattened <-> by replica) */
    VAR_CUT,            /* AR: the same ids in the same order, cut into groups of other sizes (uneven) */
    VARIATIONS
} Variation;

static const char *const variation_names[] = {
    "same key", "same groups in another form", "another dimension", "another type", "other groups",
    "another reducer", "channel_id presence flipped", "control predecessor", "depends on a member",
    "constrain_layout=true", "use_global_device_ids flipped", "the same ids cut unevenly",
};
static const int variation_weights[] = { 31, 10, 10, 6, 6, 7, 6, 6, 10, 1, 4, 3 };

typedef struct Member {
    Variation var;
    IrElemType type;
    GenColl c;
    int dim;                    /* AG / RS */
    const char *reducer;        /* AR / RS: the reducer's op */
    FuzzReducerForm form;       /* ... and the computation's form */
    bool trivial, constrain;    /* trivial: fuzz_reducer_form_trivial(form) */
    bool tangle;                /* one of plan_tangle's four or plan_chain's five */
    int after;                  /* the earlier member its operand depends on, -1 */
    int after2;                 /* a second one (plan_diamond), -1 */
    bool through;               /* ... through a collective of another opcode */
    int ctrl;                   /* its control predecessor: -1 none, -2 a fresh instruction, else a member */
    bool twice;                 /* plan_big_middle's middle one: the shared shape with dim 0 doubled */
} Member;

typedef struct Cluster {
    FuzzGen *g;
    int number;
    bool shared;                /* every member takes shape (plan_big_middle) */
    FuzzShape shape;
    FuzzSite *site[MAX_MEMBERS + 1];
    int result[MAX_MEMBERS + 1];    /* by site */
    int n_sites;
    int outs[4 * MAX_MEMBERS];      /* its root-tuple outputs: members, control predecessors, extras */
    int n_outs;
} Cluster;

static const char *opcode_text(int number)
{
    return number == 77 ? "all-gather" : number == 78 ? "reduce-scatter" : "all-reduce";
}

/* ---- The module's flags */

/* Drawn on the first call; a byte limit "at a boundary" is set once the
 * first cluster is built (bytes_at_boundary), and stays the default when
 * that cluster has no two members of its key. */
static bool draw_flags(FuzzGen *g)
{
    FuzzRng *r = g->rng;
    PassOptions *o = g->opt;
    int k = fuzz_below(r, 100);
    bool boundary = k >= 75;
    if (k >= 40 && k < 48)
        o->combine_threshold_bytes = 0;
    else if (k >= 48 && k < 55)
        o->combine_threshold_bytes = -1 - fuzz_below(r, 1 << 20);
    else if (k >= 55 && k < 75)
        o->combine_threshold_bytes = 1 + fuzz_below(r, 2048);
    k = fuzz_below(r, 100);
    if (k >= 45 && k < 52)
        o->combine_threshold_count = 0;
    else if (k >= 52 && k < 58)
        o->combine_threshold_count = -1 - fuzz_below(r, 300);
    else if (k >= 58)
        o->combine_threshold_count = 1 + (k - 58) / 14;     /* 1, 2, 3 */
    o->combine_by_dim = fuzz_chance(r, 50);
    o->neuron_fsdp = fuzz_chance(r, 30);
    return boundary;
}

/* The byte limit at the running total of the first `take` same-key members
 * in the order the pass meets them (their output order), or one byte under
 * it: the inclusive rule decides whether the last of them joins.  Or at one
 * member's own size, or a byte under: whether a member as big as the limit
 * joins a group at all. */
static void bytes_at_boundary(Cluster *cl, const Member *m, const int *order, int n)
{
    int plain[MAX_MEMBERS], n_plain = 0;
    for (int i = 0; i < n; i++)
        if (m[order[i]].var == VAR_SAME)
            plain[n_plain++] = order[i];
    if (n_plain < 2)
        return;
    FuzzRng *r = cl->g->rng;
    if (fuzz_chance(r, 25)) {           /* one member's own size, or a byte under: it cannot join any group */
        /* a middle one when there is one: the members around it then show
         * whether it opened a group of its own (at the limit) or was passed by */
        int pick = n_plain >= 3 ? plain[1 + fuzz_below(r, n_plain - 2)] : plain[fuzz_below(r, n_plain)];
        cl->g->opt->combine_threshold_bytes = cl->site[pick]->coll.bytes - (fuzz_chance(r, 50) ? 1 : 0);
        return;
    }
    int take = 2 + fuzz_below(r, n_plain - 1);
    int64_t total = 0;
    for (int i = 0; i < take; i++)
        total += cl->site[plain[i]]->coll.bytes;
    cl->g->opt->combine_threshold_bytes = total - (fuzz_chance(r, 30) ? 1 : 0);
}

/* ---- Groups and modes */

/* c's groups and mode with a fresh channel_id (every collective its own). */
static void render_attrs(FuzzGen *g, GenColl *c)
{
    char m[96];
    c->channel = c->groups.mode == FUZZ_CROSS_REPLICA ? 0 : fuzz_channel(g->b);
    fuzz_mode_attrs(c->groups.mode, c->channel, m, sizeof m);
    snprintf(c->attrs, sizeof c->attrs, ", replica_groups=%s%s", c->groups.text, m);
}

static void set_mode(FuzzGen *g, GenColl *c, FuzzGroupMode mode)
{
    c->groups.mode = mode;
    c->size = fuzz_group_size(&c->groups, fuzz_build_partitions(g->b));
    render_attrs(g, c);
}

/* The same groups printed in another form, so that the key must compare
 * them expanded: iota or mesh as its explicit list, an explicit list of
 * rows or columns as iota.  {} becomes the explicit list of every id,
 * which is another key (an empty list is its own value). */
static void other_form(FuzzGen *g, GenColl *c)
{
    FuzzGroups *gr = &c->groups;
    int n = gr->n_groups * gr->size;
    bool rows = true, cols = true;
    for (int i = 0; i < n; i++) {
        rows &= gr->ids[i] == i;
        cols &= gr->ids[i] == (i % gr->size) * gr->n_groups + i / gr->size;
    }
    if (gr->empty) {
        size_t k = (size_t)snprintf(gr->text, sizeof gr->text, "{{");
        for (int i = 0; i < n && k < sizeof gr->text; i++)
            k += (size_t)snprintf(gr->text + k, sizeof gr->text - k, "%s%d", i ? "," : "", i);
        if (k < sizeof gr->text)
            snprintf(gr->text + k, sizeof gr->text - k, "}}");
        snprintf(gr->canon, sizeof gr->canon, "%s", gr->text);
        gr->empty = false;
        snprintf(gr->form, sizeof gr->form, "explicit");
    } else if (strcmp(gr->form, "explicit") != 0) {
        snprintf(gr->text, sizeof gr->text, "%s", gr->canon);
        snprintf(gr->form, sizeof gr->form, "explicit");
    } else if (rows) {
        snprintf(gr->text, sizeof gr->text, "[%d,%d]<=[%d]", gr->n_groups, gr->size, n);
        snprintf(gr->form, sizeof gr->form, "iota");
    } else if (cols) {
        snprintf(gr->text, sizeof gr->text, "[%d,%d]<=[%d,%d]T(1,0)", gr->n_groups, gr->size, gr->size,
                 gr->n_groups);
        snprintf(gr->form, sizeof gr->form, "iota");
    }
    render_attrs(g, c);
}

/* The same ids in the same order cut into groups of other sizes, most
 * often uneven ones (all-reduce allows them, hlo-reference 6.2): another
 * key, though a hash that reads only the ids in order cannot tell it from
 * the base's cut. */
static void uneven_cut(FuzzGen *g, GenColl *c)
{
    FuzzGroups *gr = &c->groups;
    int n = gr->n_groups * gr->size, size[FUZZ_MAX_DEVICES], k = 0;
    if (gr->n_groups >= 2 && gr->size >= 2 && fuzz_chance(g->rng, 60)) {
        /* as many groups as the base, one id moved to the next group:
         * a hash that counts the groups cannot tell either */
        int at = fuzz_below(g->rng, gr->n_groups - 1);
        for (k = 0; k < gr->n_groups; k++)
            size[k] = gr->size + (k == at + 1) - (k == at);
    } else {
        for (int left = n; left > 0; left -= size[k++])
            size[k] = 1 + fuzz_below(g->rng, left);
    }
    bool same = true;                   /* the base's own cut: move the boundary */
    for (int i = 0; i < k; i++)
        same &= size[i] == gr->size;
    if (same && k >= 2) {
        k--;
        size[k - 1] += size[k];
    } else if (same) {
        size[0] = n - 1;
        size[k++] = 1;
    }
    size_t w = (size_t)snprintf(gr->text, sizeof gr->text, "{");
    for (int i = 0, at = 0; i < k && w < sizeof gr->text; at += size[i++]) {
        w += (size_t)snprintf(gr->text + w, sizeof gr->text - w, "%s{", i ? "," : "");
        for (int j = 0; j < size[i] && w < sizeof gr->text; j++)
            w += (size_t)snprintf(gr->text + w, sizeof gr->text - w, "%s%d", j ? "," : "", gr->ids[at + j]);
        if (w < sizeof gr->text)
            w += (size_t)snprintf(gr->text + w, sizeof gr->text - w, "}");
    }
    if (w < sizeof gr->text)
        snprintf(gr->text + w, sizeof gr->text - w, "}");
    snprintf(gr->canon, sizeof gr->canon, "%s", gr->text);
    snprintf(gr->form, sizeof gr->form, "uneven");
    gr->empty = false;
    render_attrs(g, c);
}

/* ---- Reducers */

static bool reducer_takes(const char *op, IrElemType t)
{
    bool logic = !strcmp(op, "and") || !strcmp(op, "or");
    if (t == IR_TYPE_PRED)
        return logic;
    return !logic || !ir_type_is_float(t);
}

static const char *draw_reducer(FuzzRng *r, IrElemType t)
{
    static const char *const ops[] = { "add", "multiply", "maximum", "minimum", "and", "or" };
    const char *op;
    do
        op = ops[fuzz_below(r, 6)];
    while (!reducer_takes(op, t));
    return op;
}

/* ---- Members */

static Variation draw_variation(FuzzRng *r)
{
    int k = fuzz_below(r, 100);
    for (int v = 0; v < VARIATIONS; v++) {
        if (k < variation_weights[v])
            return (Variation)v;
        k -= variation_weights[v];
    }
    return VAR_SAME;
}

static Member draw_base(FuzzGen *g, int number)
{
    FuzzRng *r = g->rng;
    Member m = { .var = VAR_SAME, .type = fuzz_draw_type(r, false), .dim = fuzz_below(r, 4), .after = -1, .after2 = -1,
                 .ctrl = -1, .trivial = true };
    gen_draw_coll(g, &m.c);
    m.reducer = draw_reducer(r, m.type);
    m.form = fuzz_chance(r, 10) ? FUZZ_RED_SWAPPED : FUZZ_RED_TRIVIAL;
    /* Now and then the whole cluster shares one reducer that is not
     * trivial: members alike in all else, none with a key. */
    if (number != 77 && fuzz_chance(r, 8)) {
        m.form = (FuzzReducerForm)(FUZZ_RED_COPY + fuzz_below(r, FUZZ_RED_FORMS - FUZZ_RED_COPY));
        m.trivial = false;
    }
    return m;
}

/* Does variation v apply to member k of a cluster of pass `number`? */
static bool applies(FuzzGen *g, int number, const Member *base, Variation v, int k)
{
    switch (v) {
    case VAR_DIM: return number != 79;
    case VAR_REDUCER: return number != 77;
    case VAR_CHANNEL:
        return base->c.groups.mode != FUZZ_FLATTENED && (number != 77 || fuzz_build_partitions(g->b) == 1);
    case VAR_CHAIN: return k > 0;
    case VAR_GLOBAL:                    /* with one partition both modes name the same devices */
        return fuzz_build_partitions(g->b) == 1 && !base->c.groups.empty &&
               base->c.groups.mode != FUZZ_CROSS_REPLICA;
    case VAR_CUT: return number == 79 && base->c.groups.n_groups * base->c.groups.size >= 2;
    case VAR_SAME: case VAR_FORM: case VAR_TYPE: case VAR_GROUPS: case VAR_CONTROL: case VAR_CONSTRAIN:
    case VARIATIONS: return true;
    }
    return true;
}

/* Member k of the cluster: the base with variation v (one that does not
 * apply here leaves the base's key). */
static Member vary(FuzzGen *g, int number, const Member *base, Variation v, int k)
{
    FuzzRng *r = g->rng;
    Member m = *base;
    m.var = applies(g, number, base, v, k) ? v : VAR_SAME;
    render_attrs(g, &m.c);
    switch (m.var) {
    case VAR_FORM:
        other_form(g, &m.c);
        break;
    case VAR_DIM:
        m.dim = (base->dim + 1 + fuzz_below(r, 3)) % 4;
        break;
    case VAR_TYPE:
        for (int tries = 0; tries < 8 && m.type == base->type; tries++)
            m.type = fuzz_draw_type(r, false);
        if (!reducer_takes(m.reducer, m.type))
            m.reducer = draw_reducer(r, m.type);
        break;
    case VAR_GROUPS:
        gen_draw_coll(g, &m.c);
        break;
    case VAR_REDUCER:
        if (fuzz_chance(r, 50)) {           /* the same op in a form that is not trivial */
            m.form = (FuzzReducerForm)(FUZZ_RED_COPY + fuzz_below(r, FUZZ_RED_FORMS - FUZZ_RED_COPY));
            m.trivial = false;
        } else
            m.reducer = draw_reducer(r, m.type);
        break;
    case VAR_CHANNEL:
        set_mode(g, &m.c, m.c.groups.mode == FUZZ_CROSS_REPLICA ? FUZZ_CROSS_REPLICA_PARTITION : FUZZ_CROSS_REPLICA);
        break;
    case VAR_CONTROL:
        m.ctrl = k > 0 && fuzz_chance(r, 40) ? fuzz_below(r, k) : -2;
        break;
    case VAR_CHAIN:
        m.after = fuzz_below(r, k);
        m.through = fuzz_chance(r, 35);
        break;
    case VAR_CONSTRAIN:
        m.constrain = true;
        break;
    case VAR_GLOBAL:
        set_mode(g, &m.c, m.c.groups.mode == FUZZ_FLATTENED ? FUZZ_CROSS_REPLICA_PARTITION : FUZZ_FLATTENED);
        break;
    case VAR_CUT:
        uneven_cut(g, &m.c);
        break;
    case VAR_SAME:
    case VARIATIONS:
        break;
    }
    return m;
}

/* A collective of another opcode than the pass's on x (no key; its
 * constrain_layout gates nothing). */
static int other_collective(Cluster *cl, int x)
{
    FuzzGen *g = cl->g;
    GenColl c;
    gen_draw_coll(g, &c);
    FuzzShape s = fuzz_value_shape(g->b, x);
    const char *pin = fuzz_chance(g->rng, 20) ? ", constrain_layout=true" : "";
    char a[1000];
    if (cl->number == 79) {
        s.dims[0] *= c.size;
        snprintf(a, sizeof a, "%s, dimensions={0}%s", c.attrs, pin);
        return fuzz_op1(g->b, s, "all-gather", x, a);
    }
    snprintf(a, sizeof a, "%s, to_apply=%%%s%s", c.attrs,
             fuzz_reducer(g->b, s.type, s.type == IR_TYPE_PRED ? "or" : "maximum", true), pin);
    return fuzz_op1(g->b, s, "all-reduce", x, a);
}

/* x made to depend on v: x + broadcast(one element of v), the element
 * passing through a collective of another opcode when `through`. */
static int depend(Cluster *cl, int x, int v, bool through)
{
    FuzzBuild *b = cl->g->b;
    FuzzShape vs = fuzz_value_shape(b, v), xs = fuzz_value_shape(b, x), ones = vs, wide = xs;
    ones.bounded = wide.bounded = 0;    /* a slice and a broadcast give static shapes */
    char a[160];
    size_t k = (size_t)snprintf(a, sizeof a, ", slice={");
    for (int i = 0; i < vs.rank; i++) {
        ones.dims[i] = 1;
        k += (size_t)snprintf(a + k, sizeof a - k, "%s[0:1]", i ? "," : "");
    }
    snprintf(a + k, sizeof a - k, "}");
    int e = fuzz_op1(b, ones, "slice", v, a);
    FuzzShape one = fuzz_shape(vs.type, 1, (int64_t[]){ 1 });
    e = fuzz_op1(b, one, "reshape", e, "");
    if (through) {
        e = other_collective(cl, e);
        if (fuzz_value_shape(b, e).dims[0] != 1)
            e = fuzz_op1(b, one, "slice", e, ", slice={[0:1]}");
    }
    FuzzShape scalar = fuzz_shape(xs.type, 0, NULL);
    if (vs.type != xs.type) {
        one.type = xs.type;
        e = fuzz_op1(b, one, "convert", e, "");
    }
    e = fuzz_op1(b, scalar, "reshape", e, "");
    e = fuzz_op1(b, wide, "broadcast", e, ", dimensions={}");
    return fuzz_op2(b, xs, xs.type == IR_TYPE_PRED ? "or" : "add", x, e, "");
}

/* out from in along m's dimension: gathered by #77, scattered by #78 (in
 * then holds the scattered extent), the same for #79. */
static void gather_shapes(int number, const Member *m, FuzzShape *in, FuzzShape *out)
{
    *out = *in;
    if (number == 77)
        out->dims[m->dim] *= m->c.size;
    else if (number == 78)
        in->dims[m->dim] *= m->c.size;
}

/* Operand and result shapes of a collective of the pass along dim: rank
 * 1-4 (at least dim + 1), dims 1-4 before gathering or after scattering. */
static void draw_shapes(FuzzGen *g, int number, const Member *m, FuzzShape *in, FuzzShape *out)
{
    int lo = number == 79 ? 1 : m->dim + 1;
    *in = gen_draw_shape(g->rng, m->type, lo, 4, 1, 4);
    gather_shapes(number, m, in, out);
}

/* The cluster's shared shape for m (dim 0 doubled for the middle one). */
static void shared_shapes(const Cluster *cl, const Member *m, FuzzShape *in, FuzzShape *out)
{
    *in = cl->shape;
    in->type = m->type;
    if (m->twice)
        in->dims[0] *= 2;
    gather_shapes(cl->number, m, in, out);
}

static void member_attrs(FuzzGen *g, int number, const Member *m, char *a, size_t n)
{
    size_t k = (size_t)snprintf(a, n, "%s", m->c.attrs);
    if (number != 79)
        k += (size_t)snprintf(a + k, n - k, ", dimensions={%d}", m->dim);
    if (number != 77)
        k += (size_t)snprintf(a + k, n - k, ", to_apply=%%%s", fuzz_reducer_in_form(g->b, m->type, m->reducer, m->form));
    if (m->constrain)
        snprintf(a + k, n - k, ", constrain_layout=true");
}

static void describe(Cluster *cl, FuzzSite *s, const Member *m, const FuzzShape *in, const FuzzShape *out, int k,
                     int n, FuzzPlace place)
{
    char ct[160], is[64], os[64], extra[96] = "";
    gen_coll_text(&m->c, ct, sizeof ct);
    if (m->after >= 0 && m->after2 >= 0)
        snprintf(extra, sizeof extra, " (members %d and %d)", m->after, m->after2);
    else if (m->after >= 0)
        snprintf(extra, sizeof extra, " (member %d%s)", m->after, m->through ? ", through another collective" : "");
    else if (m->ctrl >= 0)
        snprintf(extra, sizeof extra, " (member %d)", m->ctrl);
    char red[96] = "";
    if (cl->number != 79)
        snprintf(red, sizeof red, " dim %d", m->dim);
    if (cl->number != 77)
        snprintf(red + strlen(red), sizeof red - strlen(red), " %s%s%s%s", m->reducer, m->trivial ? "" : " (non-trivial: ",
                 m->trivial ? "" : fuzz_reducer_form_name(m->form), m->trivial ? "" : ")");
    snprintf(s->what, sizeof s->what, "#%d %s %s -> %s%s, %s, member %d of %d in %s: %s%s%s", cl->number,
             opcode_text(cl->number), fuzz_shape_text(in, is, sizeof is), fuzz_shape_text(out, os, sizeof os), red, ct,
             k, n, fuzz_place_name(place), m->tangle ? "tangle of keys, " : "", variation_names[m->var], extra);
}

static void add_output(Cluster *cl, int v)
{
    if (cl->n_outs < (int)(sizeof cl->outs / sizeof cl->outs[0]))
        cl->outs[cl->n_outs++] = v;
}

/* Builds member k (sites are made in member order, so a member's
 * earlier siblings are in g->sites when its mode is fixed). */
static void build_member(Cluster *cl, const Member *m, int k, int n, FuzzPlace place)
{
    FuzzGen *g = cl->g;
    FuzzBuild *b = g->b;
    FuzzSite *s = fuzz_new_site(g, cl->number);
    FuzzShape in, out;
    if (cl->shared)
        shared_shapes(cl, m, &in, &out);
    else
        draw_shapes(g, cl->number, m, &in, &out);
    /* The last member, nothing depending on it, now and then of unknown
     * size (an unbounded dim): no key, so no group, and the module is not
     * run.  Else now and then a bounded dynamic dim: the same key and
     * size, its <= kept when it is transposed. */
    bool unknown_size = k == n - 1 && n > 1 && m->after < 0 && place == FUZZ_IN_ENTRY && !cl->shared &&
                        fuzz_chance(g->rng, 2);
    int ud = unknown_size ? fuzz_below(g->rng, in.rank) : 0;
    int x = unknown_size ? gen_unbounded_input(g, in, ud) : fuzz_input(b, in);
    if (unknown_size) {
        in.unbounded |= 1u << ud;
        out.unbounded |= 1u << ud;
    } else if (fuzz_chance(g->rng, 8)) {
        int bd = fuzz_below(g->rng, in.rank);
        x = gen_bounded(g, x, bd);
        in.bounded |= 1u << bd;
        out.bounded |= 1u << bd;
    }
    if (m->after >= 0)
        x = depend(cl, x, cl->result[m->after], m->through);
    if (m->after2 >= 0)
        x = depend(cl, x, cl->result[m->after2], false);
    int pred = m->ctrl >= 0 ? cl->result[m->ctrl] : -1;
    if (m->ctrl == -2) {                /* made first: the text defines it before its use */
        FuzzShape ps = fuzz_shape(IR_TYPE_F32, 1, (int64_t[]){ 2 });
        pred = fuzz_op1(b, ps, "copy", fuzz_input(b, ps), "");
        add_output(cl, pred);
    }
    char a[1200];
    member_attrs(g, cl->number, m, a, sizeof a);
    int v = fuzz_op1(b, out, opcode_text(cl->number), x, a);
    if (pred >= 0)
        fuzz_control(b, v, pred);
    s->place = place;
    s->is_coll = true;
    s->coll = (FuzzColl){ .op = cl->number == 77 ? IR_OP_ALL_GATHER : cl->number == 78 ? IR_OP_REDUCE_SCATTER
                                                                                       : IR_OP_ALL_REDUCE,
                          .type = m->type, .dim = cl->number == 79 ? -1 : m->dim, .channel = m->c.channel != 0,
                          .global = m->c.groups.mode == FUZZ_FLATTENED, .constrain = m->constrain,
                          .reducer = cl->number != 77 && m->trivial ? m->reducer : NULL,
                          .bytes = fuzz_shape_bytes(&out), .rank = out.rank };
    snprintf(s->coll.groups, sizeof s->coll.groups, "%s", m->c.groups.canon);
    describe(cl, s, m, &in, &out, k, n, place);
    cl->site[cl->n_sites] = s;
    cl->result[cl->n_sites++] = v;
}

/* A collective of the pass's opcode with two operands already: no key.
 * Its first element is a site the pass must leave as it is. */
static void build_variadic(Cluster *cl, const Member *base, FuzzPlace place)
{
    FuzzGen *g = cl->g;
    FuzzSite *s = fuzz_new_site(g, cl->number);
    FuzzShape in[2], out[2];
    int x[2];
    for (int i = 0; i < 2; i++) {
        draw_shapes(g, cl->number, base, &in[i], &out[i]);
        x[i] = fuzz_input(g->b, in[i]);
    }
    Member m = *base;
    render_attrs(g, &m.c);
    char a[1200];
    member_attrs(g, cl->number, &m, a, sizeof a);
    int v = fuzz_op_tuple(g->b, 2, out, opcode_text(cl->number), 2, x, a);
    int e0 = fuzz_op1(g->b, out[0], "get-tuple-element", v, ", index=0");
    int e1 = fuzz_op1(g->b, out[1], "get-tuple-element", v, ", index=1");
    char ct[160], st[64];
    gen_coll_text(&m.c, ct, sizeof ct);
    snprintf(s->what, sizeof s->what, "#%d near miss: a variadic %s (element 0: %s), %s, in %s", cl->number,
             opcode_text(cl->number), fuzz_shape_text(&out[0], st, sizeof st), ct, fuzz_place_name(place));
    s->place = place;
    cl->site[cl->n_sites] = s;
    cl->result[cl->n_sites++] = e0;
    add_output(cl, e1);
}

/* Two keys whose members depend on each other's: a1, b1, b2(a1), a2(b1).
 * The spec's plain reachability lets {a1, a2} and {b1, b2} both form,
 * which as two combined ops would be a cycle (combine.c's rule over
 * contracted groups closes {a1} first). */
static int plan_tangle(FuzzGen *g, int number, const Member *base, Member *m)
{
    m[0] = vary(g, number, base, VAR_SAME, 0);
    m[1] = vary(g, number, base, VAR_TYPE, 1);
    m[2] = m[1];
    m[2].var = VAR_CHAIN;
    m[2].after = 0;
    m[3] = m[0];
    m[3].var = VAR_CHAIN;
    m[3].after = 1;
    render_attrs(g, &m[2].c);
    render_attrs(g, &m[3].c);
    for (int k = 0; k < 4; k++)
        m[k].tangle = true;
    return 4;
}

/* Three keys in a chain of dependences: a1, b1(a1), a2(b1), b2(a2),
 * c1(b1).  a2 cannot join {a1} (through b1 it depends on it), so {a1}
 * closes; b2 cannot join {b1} (through a2), so {b1} closes, itself
 * depending on the closed {a1}; c1 then depends on a group that depends
 * on a closed one, which the combined graph must still see through. */
static int plan_chain(FuzzGen *g, int number, const Member *base, Member *m)
{
    plan_tangle(g, number, base, m);    /* a1, b1, b2(a1), a2(b1) */
    Member a = m[0], b = m[1];
    m[1].var = m[2].var = m[3].var = VAR_CHAIN;
    m[1].after = 0;                     /* b1(a1) */
    m[2] = m[3];                        /* a2(b1) */
    m[3] = b;                           /* b2(a2) */
    m[3].var = VAR_CHAIN;
    m[3].after = 2;
    Member c = vary(g, number, base, VAR_TYPE, 4);
    for (int tries = 0; tries < 8 && (c.type == a.type || c.type == b.type); tries++)
        c = vary(g, number, base, VAR_TYPE, 4);
    c.var = VAR_CHAIN;                  /* c1(b1) */
    c.after = 1;
    c.tangle = true;
    m[4] = c;
    for (int k = 1; k < 4; k++)
        render_attrs(g, &m[k].c);
    return 5;
}

/* Three keys in a diamond: a1, c1(a1), b1(a1, c1), c2(b1), b2(c2).  c2
 * cannot join {c1} (through b1 it depends on it), so {c1} closes; b2
 * cannot join {b1} (through c2), so {b1} closes, depending on the open
 * {a1} both directly and through the closed {c1}: what depends on b1
 * later sees {a1} twice when {b1}'s dependences are flattened, once. */
static int plan_diamond(FuzzGen *g, int number, const Member *base, Member *m)
{
    plan_chain(g, number, base, m);     /* keys: m[0] a, m[1] b, m[4] c */
    Member a = m[0], b = m[1], c = m[4];
    m[0] = a;
    m[1] = c;                           /* c1(a1) */
    m[1].after = 0;
    m[2] = b;                           /* b1(a1, c1) */
    m[2].after = 0;
    m[2].after2 = 1;
    m[3] = c;                           /* c2(b1) */
    m[3].after = 2;
    m[4] = b;                           /* b2(c2) */
    m[4].after = 3;
    for (int k = 0; k < 5; k++) {
        m[k].var = k ? VAR_CHAIN : m[k].var;
        m[k].through = false;
        m[k].tangle = true;
        if (k)
            render_attrs(g, &m[k].c);
    }
    return 5;
}

/* Three members of one key in a row, the middle one twice the bytes of
 * each of the others (one shape, its dim 0 doubled), and the byte limit
 * at the middle one's size or a byte under (bytes_at_boundary): at the
 * limit it opens a group of its own, which the other two cannot join, so
 * nothing is combined; a byte under it has no key, and the other two,
 * together its size, cannot be combined either.  What a member exactly as
 * big as the limit does is then in view (spec section 2: only a size
 * above max_bytes is never combined). */
static int plan_big_middle(Cluster *cl, const Member *base, Member *m)
{
    FuzzGen *g = cl->g;
    int lo = cl->number == 79 ? 1 : base->dim + 1;
    cl->shape = gen_draw_shape(g->rng, base->type, lo, 4, 1, 4);
    cl->shared = true;
    for (int k = 0; k < 3; k++) {
        m[k] = vary(g, cl->number, base, VAR_SAME, k);
        m[k].twice = k == 1;
    }
    return 3;
}

void fuzz_gen_combiner(FuzzGen *g, int number)
{
    int room = FUZZ_MAX_SITES - g->n_sites;
    if (room <= 0)
        return;
    FuzzRng *r = g->rng;
    bool boundary = g->n_sites == 0 && draw_flags(g);
    FuzzPlace place = fuzz_draw_place(g);
    fuzz_site_begin(g->b, place, 1 + fuzz_below(r, 2));
    Cluster cl = { .g = g, .number = number };
    Member base = draw_base(g, number), m[MAX_MEMBERS];
    int n;
    bool tangle = room >= 4 && fuzz_chance(r, 5);
    bool big_middle = !tangle && boundary && room >= 3 && fuzz_chance(r, 40);
    /* Two members of one key in the entry, the first read by nothing: the
     * pass combines them all the same, and when the module's only output is
     * the second one, written as the entry's root, the root itself is
     * replaced by an element of the combined op. */
    bool dead_partner = !tangle && !big_middle && place == FUZZ_IN_ENTRY && room >= 2 && fuzz_chance(r, 15);
    if (tangle && room >= 5 && fuzz_chance(r, 40)) {
        n = fuzz_chance(r, 50) ? plan_diamond(g, number, &base, m) : plan_chain(g, number, &base, m);
    } else if (tangle) {
        n = plan_tangle(g, number, &base, m);
    } else if (big_middle) {
        n = plan_big_middle(&cl, &base, m);
    } else if (dead_partner) {
        n = 2;
    } else {
        n = fuzz_chance(r, 10) ? 1 : 2 + fuzz_below(r, MAX_MEMBERS - 1);
        n = n < room ? n : room;
    }
    int order[MAX_MEMBERS];
    for (int k = 0; k < n; k++) {
        if (dead_partner)
            m[k] = vary(g, number, &base, VAR_SAME, k);
        else if (!tangle && !big_middle)
            m[k] = vary(g, number, &base, draw_variation(r), k);
        build_member(&cl, &m[k], k, n, place);
        order[k] = k;
    }
    /* The output order is the order the pass meets independent members in. */
    if (!tangle && !big_middle && !dead_partner && fuzz_chance(r, 30))
        fuzz_shuffle(r, order, n);
    for (int k = dead_partner; k < n; k++)
        add_output(&cl, cl.result[order[k]]);
    if (dead_partner) {
        /* half the time alone in its module, whose root it may then be */
        g->last = g->n_sites == 2 && fuzz_chance(r, 50);
        cl.site[0]->unread = true;
        size_t w = strlen(cl.site[0]->what);
        snprintf(cl.site[0]->what + w, sizeof cl.site[0]->what - w, " (read by nothing)");
    }
    if (!dead_partner && fuzz_chance(r, 20))
        add_output(&cl, other_collective(&cl, fuzz_input(g->b, gen_draw_shape(r, base.type, 1, 3, 1, 4))));
    if (!dead_partner && g->n_sites < FUZZ_MAX_SITES && fuzz_chance(r, 10)) {
        build_variadic(&cl, &base, place);
        add_output(&cl, cl.result[cl.n_sites - 1]);
    }
    int comp, pos[4 * MAX_MEMBERS];
    fuzz_site_end(g->b, cl.n_outs, cl.outs, &comp, pos);
    if (dead_partner) {                 /* in the entry, with no place in its root */
        cl.site[0]->comp = comp;
        cl.site[0]->out = -1;
        cl.site[0]->instr = cl.result[0];
    }
    for (int i = 0; i < cl.n_sites; i++)
        for (int j = 0; j < cl.n_outs; j++)
            if (cl.outs[j] == cl.result[i]) {
                cl.site[i]->comp = comp;
                cl.site[i]->out = pos[j];
                cl.site[i]->instr = cl.result[i];
            }
    if (boundary && big_middle)
        g->opt->combine_threshold_bytes = cl.site[1]->coll.bytes - (fuzz_chance(r, 25) ? 1 : 0);
    else if (boundary)
        bytes_at_boundary(&cl, m, order, n);
}

void fuzz_gen_all_gather_combiner(FuzzGen *g)
{
    fuzz_gen_combiner(g, 77);
}

void fuzz_gen_reduce_scatter_combiner(FuzzGen *g)
{
    fuzz_gen_combiner(g, 78);
}

void fuzz_gen_all_reduce_combiner(FuzzGen *g)
{
    fuzz_gen_combiner(g, 79);
}
