/* build.c: the module under construction, and its text.
 *
 * Instructions are recorded with their operands (ids), so the text is
 * written once at the end and the combiners' model can walk the same graph
 * the pass will (fuzz_comp_post_order, fuzz_reaches).  A site's inputs and
 * outputs are wired through its placement: in the entry they are
 * parameters and root-tuple elements; in a while body they travel in the
 * loop state (s32 counter, inputs..., outputs...), the outputs starting as
 * zeros; in a conditional the taken branch computes them from a tuple of
 * the inputs and the other branch gives zeros. */
#include "fuzz_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

uint64_t fuzz_u64(FuzzRng *r)
{
    FuzzTape *t = r->tape;
    if (t && t->pos < t->n)
        return t->v[t->pos++];
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    if (t) {
        fuzz_tape_push(t, z);
        t->pos = t->n;
    }
    return z;
}

void fuzz_tape_push(FuzzTape *t, uint64_t v)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->v = xrealloc(t->v, (size_t)t->cap * sizeof *t->v);
    }
    t->v[t->n++] = v;
}

int fuzz_below(FuzzRng *r, int n)
{
    return n <= 1 ? 0 : (int)(fuzz_u64(r) % (uint64_t)n);
}

bool fuzz_chance(FuzzRng *r, int percent)
{
    return fuzz_below(r, 100) < percent;
}

void fuzz_shuffle(FuzzRng *r, int *out, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = fuzz_below(r, i + 1), t = out[i];
        out[i] = out[j];
        out[j] = t;
    }
}

FuzzShape fuzz_shape(IrElemType t, int rank, const int64_t *dims)
{
    FuzzShape s = { .type = t, .rank = rank };
    for (int i = 0; i < rank; i++)
        s.dims[i] = dims[i];
    return s;
}

int64_t fuzz_shape_elems(const FuzzShape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= s->dims[i];
    return n;
}

int64_t fuzz_shape_bytes(const FuzzShape *s)
{
    return s->unbounded ? -1 : fuzz_shape_elems(s) * ir_type_storage_bytes(s->type);
}

const char *fuzz_shape_text(const FuzzShape *s, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "%s[", ir_type_name(s->type));
    for (int i = 0; i < s->rank && k < n; i++)
        k += s->unbounded >> i & 1 ? (size_t)snprintf(buf + k, n - k, "%s?", i ? "," : "")
                                   : (size_t)snprintf(buf + k, n - k, "%s%s%lld", i ? "," : "",
                                                      s->bounded >> i & 1 ? "<=" : "", (long long)s->dims[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
    return buf;
}

const char *fuzz_place_name(FuzzPlace p)
{
    static const char *const names[] = { "entry", "while body", "conditional branch", "fusion" };
    return p < FUZZ_PLACES ? names[p] : "?";
}

const char *fuzz_expect_name(FuzzExpect e)
{
    static const char *const names[] = { "kept", "exact", "wider", "narrower", "unsound" };
    return e < FUZZ_EXPECTS ? names[e] : "?";
}

/* ------------------------------------------------------------------ */

static int new_comp(FuzzBuild *b, BCompKind kind, const char *name)
{
    if (b->n_comps == b->cap_comps) {
        b->cap_comps = b->cap_comps ? 2 * b->cap_comps : 16;
        b->comps = xrealloc(b->comps, (size_t)b->cap_comps * sizeof *b->comps);
    }
    BComp *c = &b->comps[b->n_comps];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->root = -1;
    snprintf(c->name, sizeof c->name, "%s", name);
    return b->n_comps++;
}

static int new_instr(FuzzBuild *b, int comp, const char *shape_text, FuzzShape s, const char *op, int n,
                     const int *ops, const char *attrs)
{
    if (b->n_instrs == b->cap_instrs) {
        b->cap_instrs = b->cap_instrs ? 2 * b->cap_instrs : 64;
        b->instrs = xrealloc(b->instrs, (size_t)b->cap_instrs * sizeof *b->instrs);
    }
    int id = b->n_instrs++;
    BInstr *x = &b->instrs[id];
    memset(x, 0, sizeof *x);
    x->comp = comp;
    x->shape = s;
    x->shape_text = xstrdup(shape_text);
    snprintf(x->op, sizeof x->op, "%s", op);
    x->n_ops = n > FUZZ_MAX_OPERANDS ? FUZZ_MAX_OPERANDS : n;
    x->ops = x->n_ops ? xmalloc((size_t)x->n_ops * sizeof *x->ops) : NULL;
    for (int i = 0; i < x->n_ops; i++)
        x->ops[i] = ops[i];
    x->attrs = xstrdup(attrs ? attrs : "");
    x->ctrl = -1;
    return id;
}

static int array_instr(FuzzBuild *b, int comp, FuzzShape s, const char *op, int n, const int *ops,
                       const char *attrs)
{
    char st[160];
    return new_instr(b, comp, fuzz_shape_text(&s, st, sizeof st), s, op, n, ops, attrs);
}

FuzzBuild *fuzz_build_new(int replicas, int partitions, const char *name)
{
    FuzzBuild *b = xcalloc(1, sizeof *b);
    b->replicas = replicas;
    b->partitions = partitions;
    snprintf(b->name, sizeof b->name, "%s", name);
    b->entry = new_comp(b, BCOMP_ENTRY, "main");
    b->site_comp = -1;
    return b;
}

void fuzz_build_free(FuzzBuild *b)
{
    if (!b)
        return;
    for (int i = 0; i < b->n_instrs; i++) {
        free(b->instrs[i].shape_text);
        free(b->instrs[i].attrs);
        free(b->instrs[i].ops);
    }
    for (int i = 0; i < b->n_comps; i++)
        free(b->comps[i].text);
    free(b->instrs);
    free(b->comps);
    free(b->entry_outputs);
    free(b);
}

int fuzz_build_replicas(const FuzzBuild *b) { return b->replicas; }
int fuzz_build_partitions(const FuzzBuild *b) { return b->partitions; }
int fuzz_channel(FuzzBuild *b) { return ++b->channels; }
const char *fuzz_comp_name(const FuzzBuild *b, int comp) { return b->comps[comp].name; }
FuzzShape fuzz_value_shape(const FuzzBuild *b, int v) { return b->instrs[v].shape; }

/* ------------------------------------------------------------------ */
/* Sites                                                               */

static int entry_param(FuzzBuild *b, const char *shape_text, FuzzShape s, const char *attrs)
{
    char a[32];
    snprintf(a, sizeof a, "%d", b->n_entry_params);
    int id = new_instr(b, b->entry, shape_text, s, "parameter", 0, NULL, attrs);
    b->instrs[id].param = b->n_entry_params++;
    b->instrs[id].is_param = true;
    (void)a;
    return id;
}

void fuzz_site_begin(FuzzBuild *b, FuzzPlace place, int trips)
{
    b->place = place;
    b->trips = trips < 1 ? 1 : trips;
    b->n_in = 0;
    b->n_site++;
    char name[40];
    FuzzShape none = { .type = IR_TYPE_TUPLE };
    switch (place) {
    case FUZZ_IN_WHILE:
        snprintf(name, sizeof name, "body.%d", b->n_site);
        b->site_comp = new_comp(b, BCOMP_BODY, name);
        b->state = new_instr(b, b->site_comp, "()", none, "parameter", 0, NULL, "");
        b->instrs[b->state].is_param = true;
        b->counter = new_instr(b, b->site_comp, "s32[]", fuzz_shape(IR_TYPE_S32, 0, NULL), "get-tuple-element", 1,
                               &b->state, ", index=0");
        break;
    case FUZZ_IN_CONDITIONAL:
    case FUZZ_IN_FUSION:
        snprintf(name, sizeof name, "%s.%d", place == FUZZ_IN_FUSION ? "fused" : "branch", b->n_site);
        b->site_comp = new_comp(b, BCOMP_BRANCH, name);
        b->state = new_instr(b, b->site_comp, "()", none, "parameter", 0, NULL, "");
        b->instrs[b->state].is_param = true;
        break;
    case FUZZ_IN_ENTRY:
    case FUZZ_PLACES:
        b->site_comp = b->entry;
        break;
    }
}

FuzzPlace fuzz_site_place(const FuzzBuild *b)
{
    return b->place;
}

int fuzz_input(FuzzBuild *b, FuzzShape s)
{
    if (s.bounded)                      /* the checker draws whole arrays: gen_bounded makes <= dims */
        b->failed = true;
    char st[160];
    fuzz_shape_text(&s, st, sizeof st);
    if (b->place == FUZZ_IN_ENTRY)
        return entry_param(b, st, s, "");
    if (b->n_in == FUZZ_MAX_INPUTS)
        b->failed = true;
    int j = b->n_in < FUZZ_MAX_INPUTS ? b->n_in++ : FUZZ_MAX_INPUTS - 1;
    b->in_entry[j] = entry_param(b, st, s, "");
    char a[32];
    snprintf(a, sizeof a, ", index=%d", j + (b->place == FUZZ_IN_WHILE));
    b->in_site[j] = new_instr(b, b->site_comp, st, s, "get-tuple-element", 1, &b->state, a);
    return b->in_site[j];
}

int fuzz_input_gte(FuzzBuild *b, FuzzShape s)
{
    if (b->place != FUZZ_IN_ENTRY)
        return fuzz_input(b, s);
    char st[160], tt[170];
    fuzz_shape_text(&s, st, sizeof st);
    snprintf(tt, sizeof tt, "(%s)", st);
    int p = entry_param(b, tt, (FuzzShape){ .type = IR_TYPE_TUPLE }, "");
    return new_instr(b, b->entry, st, s, "get-tuple-element", 1, &p, ", index=0");
}

int fuzz_input_index(FuzzBuild *b, int lo, int hi)
{
    char a[96];
    snprintf(a, sizeof a, ", frontend_attributes={%s=\"%d,%d\"}", CHECK_RANGE_ATTR, lo, hi);
    int p = entry_param(b, "s32[]", fuzz_shape(IR_TYPE_S32, 0, NULL), a);
    if (b->place == FUZZ_IN_ENTRY)
        return p;
    /* Through the loop state / branch tuple like any input. */
    if (b->n_in == FUZZ_MAX_INPUTS)
        b->failed = true;
    int j = b->n_in < FUZZ_MAX_INPUTS ? b->n_in++ : FUZZ_MAX_INPUTS - 1;
    b->in_entry[j] = p;
    snprintf(a, sizeof a, ", index=%d", j + (b->place == FUZZ_IN_WHILE));
    b->in_site[j] = new_instr(b, b->site_comp, "s32[]", fuzz_shape(IR_TYPE_S32, 0, NULL), "get-tuple-element", 1,
                              &b->state, a);
    return b->in_site[j];
}

int fuzz_op(FuzzBuild *b, FuzzShape s, const char *op, int n, const int *operands, const char *attrs)
{
    return array_instr(b, b->site_comp, s, op, n, operands, attrs);
}

int fuzz_op1(FuzzBuild *b, FuzzShape s, const char *op, int x, const char *attrs)
{
    return fuzz_op(b, s, op, 1, &x, attrs);
}

int fuzz_op2(FuzzBuild *b, FuzzShape s, const char *op, int x, int y, const char *attrs)
{
    int ops[2] = { x, y };
    return fuzz_op(b, s, op, 2, ops, attrs);
}

int fuzz_op_tuple(FuzzBuild *b, int n_shapes, const FuzzShape *shapes, const char *op, int n, const int *operands,
                  const char *attrs)
{
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_putc(&sb, '(');
    for (int i = 0; i < n_shapes; i++) {
        char st[160];
        strbuf_printf(&sb, "%s%s", i ? ", " : "", fuzz_shape_text(&shapes[i], st, sizeof st));
    }
    strbuf_putc(&sb, ')');
    int v = new_instr(b, b->site_comp, sb.s, (FuzzShape){ .type = IR_TYPE_TUPLE }, op, n, operands, attrs);
    strbuf_free(&sb);
    return v;
}

static int constant_in(FuzzBuild *b, int comp, IrElemType t, const char *literal)
{
    char op[80];
    snprintf(op, sizeof op, "constant(%s)", literal);
    return array_instr(b, comp, fuzz_shape(t, 0, NULL), op, 0, NULL, "");
}

int fuzz_constant(FuzzBuild *b, IrElemType t, const char *literal)
{
    return constant_in(b, b->site_comp, t, literal);
}

void fuzz_control(FuzzBuild *b, int v, int pred)
{
    b->instrs[v].ctrl = pred;
}

static const char *const reducer_form_names[FUZZ_RED_FORMS] = {
    "trivial", "swapped", "copy", "same-param", "constant", "extra", "two-ops", "guarded", "other-op",
    "call", "tuple", "array-constant",
};

const char *fuzz_reducer_form_name(FuzzReducerForm f)
{
    return f >= 0 && f < FUZZ_RED_FORMS ? reducer_form_names[f] : "?";
}

bool fuzz_reducer_form_trivial(FuzzReducerForm f)
{
    return f == FUZZ_RED_TRIVIAL || f == FUZZ_RED_SWAPPED;
}

FuzzReducerForm fuzz_draw_reducer_form(FuzzRng *r)
{
    if (fuzz_chance(r, 80))
        return fuzz_chance(r, 12) ? FUZZ_RED_SWAPPED : FUZZ_RED_TRIVIAL;
    return (FuzzReducerForm)(FUZZ_RED_COPY + fuzz_below(r, FUZZ_RED_OTHER_OP - FUZZ_RED_COPY));
}

FuzzReducerForm fuzz_draw_unretypable_form(FuzzRng *r)
{
    return (FuzzReducerForm)(FUZZ_RED_CALL + fuzz_below(r, FUZZ_RED_FORMS - FUZZ_RED_CALL));
}

bool fuzz_reducer_form_retypable(FuzzReducerForm f)
{
    return f < FUZZ_RED_CALL;
}

static const char *reducer_named(FuzzBuild *b, const char *name, IrElemType t, const char *op,
                                 FuzzReducerForm form);

const char *fuzz_reducer_in_form(FuzzBuild *b, IrElemType t, const char *op, FuzzReducerForm form)
{
    char name[64];
    snprintf(name, sizeof name, "red.%s.%s%s%s", ir_type_name(t), op, form == FUZZ_RED_TRIVIAL ? "" : ".",
             form == FUZZ_RED_TRIVIAL ? "" : fuzz_reducer_form_name(form));
    for (int i = 0; i < b->n_comps; i++)
        if (b->comps[i].kind == BCOMP_TEXT && strcmp(b->comps[i].name, name) == 0)
            return b->comps[i].name;
    return reducer_named(b, name, t, op, form);
}

const char *fuzz_reducer_own(FuzzBuild *b, IrElemType t, const char *op, FuzzReducerForm form)
{
    char name[64];
    snprintf(name, sizeof name, "red.%s.%s%s%s.own%d", ir_type_name(t), op, form == FUZZ_RED_TRIVIAL ? "" : ".",
             form == FUZZ_RED_TRIVIAL ? "" : fuzz_reducer_form_name(form), b->n_comps);
    return reducer_named(b, name, t, op, form);
}

static const char *reducer_named(FuzzBuild *b, const char *name, IrElemType t, const char *op,
                                 FuzzReducerForm form)
{
    /* the callee first: a computation is defined before its callers (its
     * name copied: new_comp may move the computations it lives in) */
    char callee[64] = "";
    if (form == FUZZ_RED_CALL)
        snprintf(callee, sizeof callee, "%s", fuzz_reducer_in_form(b, t, op, FUZZ_RED_TRIVIAL));
    int c = new_comp(b, BCOMP_TEXT, name);
    const char *tn = ir_type_name(t);
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_printf(&sb, "%%%s {\n  %%a = %s[] parameter(0)\n  %%b = %s[] parameter(1)\n", name, tn, tn);
    switch (form) {
    case FUZZ_RED_TRIVIAL: case FUZZ_RED_FORMS:
        strbuf_printf(&sb, "  ROOT %%r = %s[] %s(%%a, %%b)\n}\n", tn, op);
        break;
    case FUZZ_RED_SWAPPED:
        strbuf_printf(&sb, "  ROOT %%r = %s[] %s(%%b, %%a)\n}\n", tn, op);
        break;
    case FUZZ_RED_COPY:
        strbuf_printf(&sb, "  %%o = %s[] %s(%%a, %%b)\n  ROOT %%r = %s[] copy(%%o)\n}\n", tn, op, tn);
        break;
    case FUZZ_RED_SAME_PARAM:
        strbuf_printf(&sb, "  ROOT %%r = %s[] %s(%%a, %%a)\n}\n", tn, op);
        break;
    case FUZZ_RED_CONSTANT:
        strbuf_printf(&sb, "  %%c = %s[] constant(%s)\n  ROOT %%r = %s[] %s(%%a, %%c)\n}\n", tn,
                      t == IR_TYPE_PRED ? "true" : ir_type_is_float(t) ? "0.5" : "1", tn, op);
        break;
    case FUZZ_RED_EXTRA: {
        bool neg = ir_type_is_float(t) || ir_type_is_signed_int(t);
        strbuf_printf(&sb, "  %%n = %s[] %s(%%b)\n  ROOT %%r = %s[] %s(%%a, %%n)\n}\n", tn, neg ? "negate" : "copy",
                      tn, op);
        break;
    }
    case FUZZ_RED_TWO_OPS:
        strbuf_printf(&sb, "  %%t = %s[] %s(%%a, %%b)\n  ROOT %%r = %s[] %s(%%t, %%b)\n}\n", tn, op, tn, op);
        break;
    case FUZZ_RED_GUARDED:
        strbuf_printf(&sb,
                      "  %%o = %s[] %s(%%a, %%b)\n  %%p = pred[] compare(%%o, %%o), direction=EQ\n"
                      "  %%t = pred[] constant(true)\n  %%q = pred[] and(%%p, %%t)\n"
                      "  ROOT %%r = %s[] select(%%q, %%o, %%a)\n}\n",
                      tn, op, tn);
        break;
    case FUZZ_RED_OTHER_OP:
        strbuf_printf(&sb, "  ROOT %%r = %s[] %s(%%a, %%b)\n}\n", tn, t == IR_TYPE_PRED ? "xor" : "subtract");
        break;
    case FUZZ_RED_CALL:
        strbuf_printf(&sb, "  ROOT %%r = %s[] call(%%a, %%b), to_apply=%%%s\n}\n", tn, callee);
        break;
    case FUZZ_RED_TUPLE:
        strbuf_printf(&sb,
                      "  %%t = (%s[], %s[]) tuple(%%a, %%b)\n  %%x = %s[] get-tuple-element(%%t), index=0\n"
                      "  %%y = %s[] get-tuple-element(%%t), index=1\n  ROOT %%r = %s[] %s(%%x, %%y)\n}\n",
                      tn, tn, tn, tn, tn, op);
        break;
    case FUZZ_RED_ARRAY_CONSTANT: {
        const char *v = t == IR_TYPE_PRED ? "true" : ir_type_is_float(t) ? "0.5" : "1";
        strbuf_printf(&sb,
                      "  %%c = %s[2] constant({%s, %s})\n  %%o = %s[] %s(%%a, %%b)\n"
                      "  %%s = %s[1] slice(%%c), slice={[0:1]}\n  %%k = %s[] reshape(%%s)\n"
                      "  ROOT %%r = %s[] %s(%%o, %%k)\n}\n",
                      tn, v, v, tn, op, tn, tn, tn, op);
        break;
    }
    }
    b->comps[c].text = sb.s;
    return b->comps[c].name;
}

void fuzz_unused_computation(FuzzBuild *b, const char *name, IrElemType t)
{
    for (int i = 0; i < b->n_comps; i++)
        if (strcmp(b->comps[i].name, name) == 0)
            return;
    int c = new_comp(b, BCOMP_TEXT, name);
    const char *tn = ir_type_name(t);
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_printf(&sb, "%%%s {\n  %%a = %s[] parameter(0)\n  %%b = %s[] parameter(1)\n  ROOT %%r = %s[] add(%%a, %%b)\n}\n",
                  name, tn, tn, tn);
    b->comps[c].text = sb.s;
}

const char *fuzz_reducer(FuzzBuild *b, IrElemType t, const char *op, bool trivial)
{
    return fuzz_reducer_in_form(b, t, op, trivial ? FUZZ_RED_TRIVIAL : FUZZ_RED_COPY);
}

static int zeros(FuzzBuild *b, int comp, FuzzShape s)
{
    int z = constant_in(b, comp, s.type, s.type == IR_TYPE_PRED ? "false" : "0");
    return array_instr(b, comp, s, "broadcast", 1, &z, ", dimensions={}");
}

static void tuple_text(FuzzBuild *b, const int *vals, int n, StrBuf *sb, const char *first)
{
    strbuf_putc(sb, '(');
    if (first)
        strbuf_puts(sb, first);
    for (int i = 0; i < n; i++)
        strbuf_printf(sb, "%s%s", i || first ? ", " : "", b->instrs[vals[i]].shape_text);
    strbuf_putc(sb, ')');
}

static void add_entry_output(FuzzBuild *b, int v)
{
    if (b->n_entry_outputs == b->cap_entry_outputs) {
        b->cap_entry_outputs = b->cap_entry_outputs ? 2 * b->cap_entry_outputs : 16;
        b->entry_outputs = xrealloc(b->entry_outputs, (size_t)b->cap_entry_outputs * sizeof *b->entry_outputs);
    }
    b->entry_outputs[b->n_entry_outputs++] = v;
}

static int tuple_instr(FuzzBuild *b, int comp, const int *vals, int n, const char *first_text, int first)
{
    StrBuf sb;
    strbuf_init(&sb);
    tuple_text(b, vals, n, &sb, first_text);
    int ops[FUZZ_MAX_OPERANDS];
    int k = 0;
    if (first >= 0)
        ops[k++] = first;
    for (int i = 0; i < n && k < FUZZ_MAX_OPERANDS; i++)
        ops[k++] = vals[i];
    if (n + (first >= 0) > FUZZ_MAX_OPERANDS)
        b->failed = true;
    int t = new_instr(b, comp, sb.s, (FuzzShape){ .type = IR_TYPE_TUPLE }, "tuple", k, ops, "");
    strbuf_free(&sb);
    return t;
}

static void end_while(FuzzBuild *b, int n, const int *outputs, int *out_pos)
{
    int body = b->site_comp;
    char name[40], a[200];
    int one = constant_in(b, body, IR_TYPE_S32, "1");
    int next = new_instr(b, body, "s32[]", fuzz_shape(IR_TYPE_S32, 0, NULL), "add", 2, (int[]){ b->counter, one }, "");
    int vals[FUZZ_MAX_OPERANDS];
    int k = 0;
    for (int i = 0; i < b->n_in; i++)
        vals[k++] = b->in_site[i];
    for (int i = 0; i < n && k < FUZZ_MAX_OPERANDS - 1; i++) {
        out_pos[i] = 1 + k;
        vals[k++] = outputs[i];
    }
    int root = tuple_instr(b, body, vals, k, "s32[]", next);
    b->comps[body].root = root;
    const char *state = b->instrs[root].shape_text;
    free(b->instrs[b->state].shape_text);
    b->instrs[b->state].shape_text = xstrdup(state);

    snprintf(name, sizeof name, "cond.%d", b->n_site);
    int cond = new_comp(b, BCOMP_COND, name);
    int q = new_instr(b, cond, state, (FuzzShape){ .type = IR_TYPE_TUPLE }, "parameter", 0, NULL, "");
    b->instrs[q].is_param = true;
    int ctr = new_instr(b, cond, "s32[]", fuzz_shape(IR_TYPE_S32, 0, NULL), "get-tuple-element", 1, &q, ", index=0");
    snprintf(a, sizeof a, "%d", b->trips);
    int lim = constant_in(b, cond, IR_TYPE_S32, a);
    b->comps[cond].root = new_instr(b, cond, "pred[]", fuzz_shape(IR_TYPE_PRED, 0, NULL), "compare", 2,
                                    (int[]){ ctr, lim }, ", direction=LT");

    int e = b->entry;
    int init_vals[FUZZ_MAX_OPERANDS];
    int m = 0;
    for (int i = 0; i < b->n_in; i++)
        init_vals[m++] = b->in_entry[i];
    for (int i = 0; i < n && m < FUZZ_MAX_OPERANDS - 1; i++)
        init_vals[m++] = zeros(b, e, b->instrs[outputs[i]].shape);
    int z = constant_in(b, e, IR_TYPE_S32, "0");
    int init = tuple_instr(b, e, init_vals, m, "s32[]", z);
    snprintf(a, sizeof a, ", condition=%%%s, body=%%%s", b->comps[cond].name, b->comps[body].name);
    int w = new_instr(b, e, state, (FuzzShape){ .type = IR_TYPE_TUPLE }, "while", 1, &init, a);
    for (int i = 0; i < n; i++) {
        snprintf(a, sizeof a, ", index=%d", out_pos[i]);
        add_entry_output(b, array_instr(b, e, b->instrs[outputs[i]].shape, "get-tuple-element", 1, &w, a));
    }
}

/* Closes the site's computation called with its inputs as one tuple (a
 * branch, a fusion's): its root the tuple of the outputs, its parameter
 * the tuple of the inputs (whose shape is written to args); the root. */
static int close_callee(FuzzBuild *b, int n, const int *outputs, int *out_pos, StrBuf *args)
{
    int comp = b->site_comp;
    int root = tuple_instr(b, comp, outputs, n, NULL, -1);
    b->comps[comp].root = root;
    for (int i = 0; i < n; i++)
        out_pos[i] = i;
    tuple_text(b, b->in_site, b->n_in, args, NULL);
    free(b->instrs[b->state].shape_text);
    b->instrs[b->state].shape_text = xstrdup(args->s);
    return root;
}

/* The entry's outputs: element i of call's tuple for outputs[i]. */
static void outputs_of(FuzzBuild *b, int call, int n, const int *outputs)
{
    char a[32];
    for (int i = 0; i < n; i++) {
        snprintf(a, sizeof a, ", index=%d", i);
        add_entry_output(b, array_instr(b, b->entry, b->instrs[outputs[i]].shape, "get-tuple-element", 1, &call, a));
    }
}

static void end_conditional(FuzzBuild *b, int n, const int *outputs, int *out_pos)
{
    int branch = b->site_comp;
    char name[40], a[240];
    StrBuf args;
    strbuf_init(&args);
    int root = close_callee(b, n, outputs, out_pos, &args);

    snprintf(name, sizeof name, "skip.%d", b->n_site);
    int skip = new_comp(b, BCOMP_BRANCH, name);
    int q = new_instr(b, skip, args.s, (FuzzShape){ .type = IR_TYPE_TUPLE }, "parameter", 0, NULL, "");
    b->instrs[q].is_param = true;
    int zs[FUZZ_MAX_OPERANDS];
    for (int i = 0; i < n; i++)
        zs[i] = zeros(b, skip, b->instrs[outputs[i]].shape);
    b->comps[skip].root = tuple_instr(b, skip, zs, n, NULL, -1);

    int e = b->entry;
    int arg = tuple_instr(b, e, b->in_entry, b->n_in, NULL, -1);
    int pred = constant_in(b, e, IR_TYPE_PRED, "true");
    snprintf(a, sizeof a, ", true_computation=%%%s, false_computation=%%%s", b->comps[branch].name,
             b->comps[skip].name);
    int c = new_instr(b, e, b->instrs[root].shape_text, (FuzzShape){ .type = IR_TYPE_TUPLE }, "conditional", 3,
                      (int[]){ pred, arg, arg }, a);
    outputs_of(b, c, n, outputs);
    strbuf_free(&args);
}

/* The site's computation called by a fusion of the entry: its inputs in
 * one tuple, its outputs the fusion's. */
static void end_fusion(FuzzBuild *b, int n, const int *outputs, int *out_pos)
{
    char a[240];
    StrBuf args;
    strbuf_init(&args);
    int root = close_callee(b, n, outputs, out_pos, &args);
    strbuf_free(&args);
    int arg = tuple_instr(b, b->entry, b->in_entry, b->n_in, NULL, -1);
    snprintf(a, sizeof a, ", kind=kLoop, calls=%%%s", b->comps[b->site_comp].name);
    int f = new_instr(b, b->entry, b->instrs[root].shape_text, (FuzzShape){ .type = IR_TYPE_TUPLE }, "fusion", 1,
                      &arg, a);
    outputs_of(b, f, n, outputs);
}

void fuzz_site_end(FuzzBuild *b, int n, const int *outputs, int *comp, int *out_pos)
{
    *comp = b->site_comp;
    if (b->place == FUZZ_IN_WHILE) {
        end_while(b, n, outputs, out_pos);
    } else if (b->place == FUZZ_IN_CONDITIONAL) {
        end_conditional(b, n, outputs, out_pos);
    } else if (b->place == FUZZ_IN_FUSION) {
        end_fusion(b, n, outputs, out_pos);
    } else {
        for (int i = 0; i < n; i++) {
            out_pos[i] = b->n_entry_outputs;
            add_entry_output(b, outputs[i]);
        }
    }
    b->place = FUZZ_IN_ENTRY;
    b->site_comp = b->entry;
}

/* ------------------------------------------------------------------ */
/* The graph, for the combiners' model                                  */

int fuzz_comp_root(FuzzBuild *b, int comp)
{
    BComp *c = &b->comps[comp];
    if (c->kind == BCOMP_ENTRY && c->root < 0)
        c->root = b->bare_root && b->n_entry_outputs == 1
                      ? b->entry_outputs[0]
                      : tuple_instr(b, b->entry, b->entry_outputs, b->n_entry_outputs, NULL, -1);
    return c->root;
}

void fuzz_build_omit_partitions(FuzzBuild *b, bool omit)
{
    b->omit_partitions = omit && b->partitions == 1;
}

void fuzz_add_attr(FuzzBuild *b, int v, const char *text)
{
    BInstr *x = &b->instrs[v];
    size_t n = strlen(x->attrs), k = strlen(text);
    x->attrs = xrealloc(x->attrs, n + k + 1);
    memcpy(x->attrs + n, text, k + 1);
}

void fuzz_build_layouts(FuzzBuild *b, bool layouts)
{
    b->layouts = layouts;
}

void fuzz_set_layout(FuzzBuild *b, int v, const int *minor_to_major, int rank, const char *tail)
{
    BInstr *x = &b->instrs[v];
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_puts(&sb, x->shape_text);
    strbuf_putc(&sb, '{');
    for (int i = 0; i < rank; i++)
        strbuf_printf(&sb, "%s%d", i ? "," : "", minor_to_major[i]);
    if (tail)
        strbuf_printf(&sb, ":%s", tail);
    strbuf_putc(&sb, '}');
    free(x->shape_text);
    x->shape_text = sb.s;
}

/* A shape's text (an array, or a tuple of them) with the default layout
 * after every array of rank 1 or more that has none. */
static void put_with_layouts(StrBuf *sb, const char *text)
{
    for (const char *p = text; *p; p++) {
        strbuf_putc(sb, *p);
        if (*p != '[')
            continue;
        int rank = 0;
        const char *q = p + 1;
        for (; *q && *q != ']'; q++)
            rank += *q == ',';
        if (q > p + 1)
            rank++;
        strbuf_putn(sb, p + 1, (size_t)(q - p - 1));
        if (!*q)
            return;
        strbuf_putc(sb, ']');
        p = q;
        if (rank > 0 && p[1] != '{') {
            strbuf_putc(sb, '{');
            for (int i = rank - 1; i >= 0; i--)
                strbuf_printf(sb, "%d%s", i, i ? "," : "");
            strbuf_putc(sb, '}');
        }
    }
}

void fuzz_build_scheduled(FuzzBuild *b, bool scheduled)
{
    b->scheduled = scheduled;
}

int fuzz_comp_text_order(FuzzBuild *b, int comp, int *out)
{
    int root = fuzz_comp_root(b, comp), n = 0;
    for (int v = 0; v < b->n_instrs; v++)
        if (b->instrs[v].comp == comp && v != root)
            out[n++] = v;
    out[n++] = root;
    return n;
}

void fuzz_build_bare_root(FuzzBuild *b, bool bare)
{
    b->bare_root = bare;
}

static void post_visit(const FuzzBuild *b, int v, bool *seen, int *out, int *n)
{
    if (seen[v])
        return;
    seen[v] = true;
    const BInstr *x = &b->instrs[v];
    if (x->ctrl >= 0)
        post_visit(b, x->ctrl, seen, out, n);
    for (int i = 0; i < x->n_ops; i++)
        post_visit(b, x->ops[i], seen, out, n);
    out[(*n)++] = v;
}

int fuzz_comp_post_order(FuzzBuild *b, int comp, int *out)
{
    fuzz_comp_root(b, comp);
    bool *seen = xcalloc((size_t)b->n_instrs, sizeof *seen);
    bool *used = xcalloc((size_t)b->n_instrs, sizeof *used);
    for (int v = 0; v < b->n_instrs; v++) {
        const BInstr *x = &b->instrs[v];
        if (x->comp != comp)
            continue;
        if (x->ctrl >= 0)
            used[x->ctrl] = true;
        for (int i = 0; i < x->n_ops; i++)
            used[x->ops[i]] = true;
    }
    int n = 0;
    for (int v = 0; v < b->n_instrs; v++)
        if (b->instrs[v].comp == comp && !used[v])
            post_visit(b, v, seen, out, &n);
    free(seen);
    free(used);
    return n;
}

bool fuzz_reaches(const FuzzBuild *b, int from, int to)
{
    if (from == to)
        return true;
    const BInstr *x = &b->instrs[from];
    if (x->ctrl >= 0 && fuzz_reaches(b, x->ctrl, to))
        return true;
    for (int i = 0; i < x->n_ops; i++)
        if (fuzz_reaches(b, x->ops[i], to))
            return true;
    return false;
}

int fuzz_instr_comp(const FuzzBuild *b, int v) { return b->instrs[v].comp; }
int fuzz_entry_outputs(const FuzzBuild *b) { return b->n_entry_outputs; }
bool fuzz_comp_is_while_part(const FuzzBuild *b, int comp)
{
    return b->comps[comp].kind == BCOMP_BODY || b->comps[comp].kind == BCOMP_COND;
}

/* ------------------------------------------------------------------ */
/* Text                                                                */

static void print_instr(const FuzzBuild *b, int v, bool root, StrBuf *sb)
{
    const BInstr *x = &b->instrs[v];
    strbuf_printf(sb, "  %s%%v%d = ", root ? "ROOT " : "", v);
    if (b->layouts)
        put_with_layouts(sb, x->shape_text);
    else
        strbuf_puts(sb, x->shape_text);
    strbuf_putc(sb, ' ');
    if (x->is_param && b->comps[x->comp].kind == BCOMP_ENTRY)
        strbuf_printf(sb, "parameter(%d)", x->param);
    else if (x->is_param)
        strbuf_puts(sb, "parameter(0)");
    else {
        strbuf_printf(sb, "%s", x->op);
        if (!strchr(x->op, '(')) {
            strbuf_putc(sb, '(');
            for (int i = 0; i < x->n_ops; i++)
                strbuf_printf(sb, "%s%%v%d", i ? ", " : "", x->ops[i]);
            strbuf_putc(sb, ')');
        }
    }
    strbuf_puts(sb, x->attrs);
    if (x->ctrl >= 0)
        strbuf_printf(sb, ", control-predecessors={%%v%d}", x->ctrl);
    strbuf_putc(sb, '\n');
}

static void print_comp(FuzzBuild *b, int comp, StrBuf *sb)
{
    BComp *c = &b->comps[comp];
    if (c->kind == BCOMP_TEXT) {
        strbuf_printf(sb, "%s\n", c->text);
        return;
    }
    int *order = xmalloc(((size_t)b->n_instrs + 1) * sizeof *order);
    int n = fuzz_comp_text_order(b, comp, order);
    strbuf_printf(sb, "%s%%%s {\n", c->kind == BCOMP_ENTRY ? "ENTRY " : "", c->name);
    for (int i = 0; i < n; i++)
        print_instr(b, order[i], i == n - 1, sb);
    free(order);
    strbuf_puts(sb, "}\n\n");
}

char *fuzz_build_text(FuzzBuild *b)
{
    if (b->failed)
        return NULL;
    fuzz_comp_root(b, b->entry);
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_printf(&sb, "HloModule %s%s, replica_count=%d", b->name, b->scheduled ? ", is_scheduled=true" : "",
                  b->replicas);
    if (!b->omit_partitions)
        strbuf_printf(&sb, ", num_partitions=%d", b->partitions);
    strbuf_puts(&sb, "\n\n");
    for (int k = 0; k < BCOMP_KINDS; k++)       /* callees before callers */
        for (int c = 0; c < b->n_comps; c++)
            if ((int)b->comps[c].kind == k)
                print_comp(b, c, &sb);
    return sb.s;
}
