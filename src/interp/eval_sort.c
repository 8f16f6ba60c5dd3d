/* eval_sort.c: sort, on eval_reduce.c's helpers (eval.h).
 *
 * The reference order, which we promise to the bit: a stable bottom-up
 * merge sort; a merge takes the right element only when
 * comparator(right, left) is true.  Stable whatever is_stable says.
 *
 * The fast path gives the same bits as the slow one: a sort whose
 * comparator is compare(p0, p1) LT or GT has its keys extracted once per
 * line and compared inline by the same merge sort.  Every other comparator
 * is called per comparison through eval_call_scalar(): slow, but any
 * computation works.  Sort runs on one thread. */
#include "eval.h"

#include <stdlib.h>
#include <string.h>

/* dst[j * stride] = src[j] for n elements of es bytes. */
static void scatter_strided(void *dst, int64_t stride, const void *src, int64_t n, size_t es)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    switch (es) {
    case 1: for (int64_t j = 0; j < n; j++) d[j * stride] = s[j]; break;
    case 2: for (int64_t j = 0; j < n; j++) memcpy(d + 2 * j * stride, s + 2 * j, 2); break;
    case 4: for (int64_t j = 0; j < n; j++) memcpy(d + 4 * j * stride, s + 4 * j, 4); break;
    case 8: for (int64_t j = 0; j < n; j++) memcpy(d + 8 * j * stride, s + 8 * j, 8); break;
    default: for (int64_t j = 0; j < n; j++) memcpy(d + es * (size_t)(j * stride), s + es * (size_t)j, es); break;
    }
}

/* Bottom-up stable merge sort of the index permutation perm[0..n) with
 * LESS(ctx, a, b) meaning "element a sorts before element b".  Every sort
 * here, fast or slow, is this one algorithm, so they agree to the bit even
 * for comparators that are not strict weak orders (NaN under FLOAT). */
#define DEFINE_MERGE_SORT(NAME, CTX, LESS)                                                 \
    static void NAME(CTX ctx, int64_t *perm, int64_t *tmp, int64_t n)                     \
    {                                                                                      \
        int64_t *src = perm, *dst = tmp;                                                   \
        for (int64_t width = 1; width < n; width *= 2) {                                   \
            for (int64_t lo = 0; lo < n; lo += 2 * width) {                                \
                int64_t mid = lo + width < n ? lo + width : n;                             \
                int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;                      \
                int64_t i = lo, j = mid, k = lo;                                           \
                while (i < mid && j < hi)                                                  \
                    dst[k++] = LESS(ctx, src[j], src[i]) ? src[j++] : src[i++];            \
                while (i < mid)                                                            \
                    dst[k++] = src[i++];                                                   \
                while (j < hi)                                                             \
                    dst[k++] = src[j++];                                                   \
            }                                                                              \
            int64_t *swap = src;                                                           \
            src = dst;                                                                     \
            dst = swap;                                                                    \
        }                                                                                  \
        if (src != perm)                                                                   \
            memcpy(perm, src, (size_t)n * sizeof *perm);                                   \
    }

/* One key per element of a line, in the form its comparison needs. */
typedef union SortKey {
    int64_t i;      /* signed ints; floats under TOTALORDER */
    uint64_t u;     /* unsigned ints, pred */
    double d;       /* floats under FLOAT: IEEE comparisons, NaN unordered */
} SortKey;

#define LESS_I_LT(k, a, b) ((k)[a].i < (k)[b].i)
#define LESS_I_GT(k, a, b) ((k)[a].i > (k)[b].i)
#define LESS_U_LT(k, a, b) ((k)[a].u < (k)[b].u)
#define LESS_U_GT(k, a, b) ((k)[a].u > (k)[b].u)
#define LESS_D_LT(k, a, b) ((k)[a].d < (k)[b].d)
#define LESS_D_GT(k, a, b) ((k)[a].d > (k)[b].d)
DEFINE_MERGE_SORT(sort_i_lt, const SortKey *, LESS_I_LT)
DEFINE_MERGE_SORT(sort_i_gt, const SortKey *, LESS_I_GT)
DEFINE_MERGE_SORT(sort_u_lt, const SortKey *, LESS_U_LT)
DEFINE_MERGE_SORT(sort_u_gt, const SortKey *, LESS_U_GT)
DEFINE_MERGE_SORT(sort_d_lt, const SortKey *, LESS_D_LT)
DEFINE_MERGE_SORT(sort_d_gt, const SortKey *, LESS_D_GT)

typedef enum KeyKind { KEY_NONE, KEY_SIGNED, KEY_UNSIGNED, KEY_FLOAT, KEY_TOTAL } KeyKind;

/* Which key a compare of type ct on elements of type t sorts by. */
static KeyKind key_kind(IrElemType t, IrCompareType ct)
{
    switch ((int)t) {
    case IR_TYPE_F16: case IR_TYPE_BF16: case IR_TYPE_F32: case IR_TYPE_F64:
        return ct == IR_CMPT_TOTALORDER ? KEY_TOTAL : ct == IR_CMPT_DEFAULT || ct == IR_CMPT_FLOAT ? KEY_FLOAT : KEY_NONE;
    case IR_TYPE_S8: case IR_TYPE_S16: case IR_TYPE_S32: case IR_TYPE_S64:
        return ct == IR_CMPT_DEFAULT || ct == IR_CMPT_SIGNED ? KEY_SIGNED : KEY_NONE;
    case IR_TYPE_PRED: case IR_TYPE_U8: case IR_TYPE_U16: case IR_TYPE_U32: case IR_TYPE_U64:
        return ct == IR_CMPT_DEFAULT || ct == IR_CMPT_UNSIGNED ? KEY_UNSIGNED : KEY_NONE;
    default:
        return KEY_NONE;
    }
}

typedef struct SortFast {
    KeyKind kind;
    bool greater;           /* the comparator is "a > b" */
} SortFast;

/* A comparator `ROOT compare(p0, p1), direction=LT|GT` (or with p1, p0) on
 * operand 0's elements. */
static bool sort_fast_plan(const IrComputation *c, IrElemType t, SortFast *f)
{
    const IrInstr *root = c->root;
    if (root->op != IR_OP_COMPARE || root->n_operands != 2 ||
        (root->info->direction != IR_CMP_LT && root->info->direction != IR_CMP_GT))
        return false;
    const IrInstr *a = root->operands[0], *b = root->operands[1];
    if (a->op != IR_OP_PARAMETER || b->op != IR_OP_PARAMETER || a->shape->type != t || b->shape->type != t)
        return false;
    bool swapped = a->info->parameter_number == 1 && b->info->parameter_number == 0;
    if (!swapped && !(a->info->parameter_number == 0 && b->info->parameter_number == 1))
        return false;
    f->kind = key_kind(t, root->info->compare_type);
    f->greater = (root->info->direction == IR_CMP_GT) != swapped;
    return f->kind != KEY_NONE;
}

static uint64_t load_bits(const unsigned char *p, size_t es)
{
    uint8_t b8;
    uint16_t b16;
    uint32_t b32;
    uint64_t b64;
    switch (es) {
    case 1: memcpy(&b8, p, 1); return b8;
    case 2: memcpy(&b16, p, 2); return b16;
    case 4: memcpy(&b32, p, 4); return b32;
    default: memcpy(&b64, p, 8); return b64;
    }
}

/* TOTALORDER: sign-magnitude bits to a signed integer of the same order
 * (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN). */
static int64_t total_order_key(uint64_t u, int bits)
{
    uint64_t sign = u >> (bits - 1) & 1;
    int64_t mag = (int64_t)(u & ((UINT64_C(1) << (bits - 1)) - 1));
    return sign ? -mag - 1 : mag;
}

static int64_t sign_extend(uint64_t u, int bits)
{
    if (bits == 64) {
        int64_t s;
        memcpy(&s, &u, sizeof s);
        return s;
    }
    int64_t m = INT64_C(1) << (bits - 1);
    return ((int64_t)u ^ m) - m;
}

static void extract_keys(KeyKind kind, IrElemType t, const unsigned char *p, int64_t stride, int64_t n,
                         SortKey *keys)
{
    size_t es = (size_t)ir_type_storage_bytes(t);
    int bits = (int)es * 8;
    for (int64_t j = 0; j < n; j++, p += (size_t)stride * es) {
        uint64_t u = load_bits(p, es);
        if (kind == KEY_SIGNED)
            keys[j].i = sign_extend(u, bits);
        else if (kind == KEY_UNSIGNED)
            keys[j].u = u;
        else if (kind == KEY_TOTAL)
            keys[j].i = total_order_key(u, bits);
        else
            keys[j].d = ir_elem_get_f64(t, p);
    }
}

static void sort_keys(const SortFast *f, const SortKey *keys, int64_t *perm, int64_t *tmp, int64_t n)
{
    switch (f->kind) {
    case KEY_SIGNED: case KEY_TOTAL:
        (f->greater ? sort_i_gt : sort_i_lt)(keys, perm, tmp, n);
        break;
    case KEY_UNSIGNED:
        (f->greater ? sort_u_gt : sort_u_lt)(keys, perm, tmp, n);
        break;
    case KEY_FLOAT:
        (f->greater ? sort_d_gt : sort_d_lt)(keys, perm, tmp, n);
        break;
    case KEY_NONE:
        break;
    }
}

/* The slow comparator: comparator(a0, b0, a1, b1, ...) per comparison. */
typedef struct SlowLess {
    ScalarCall call;
    int n_ops;
    const unsigned char *data[MAX_VARIADIC];
    size_t es[MAX_VARIADIC];
    int64_t base, stride;       /* the line, in elements */
    Error *err;
    bool failed;                /* the comparator failed: answer false from then on */
} SlowLess;

static bool slow_less(SlowLess *s, int64_t a, int64_t b)
{
    unsigned char r = 0;
    if (s->failed)
        return false;
    for (int k = 0; k < s->n_ops; k++) {
        s->call.args[2 * k] = s->data[k] + (size_t)(s->base + a * s->stride) * s->es[k];
        s->call.args[2 * k + 1] = s->data[k] + (size_t)(s->base + b * s->stride) * s->es[k];
    }
    s->call.results[0] = &r;
    if (!eval_scalar_call(&s->call, s->err))
        s->failed = true;
    return r != 0;
}

#define LESS_SLOW(s, a, b) slow_less((s), (a), (b))
DEFINE_MERGE_SORT(sort_slow, SlowLess *, LESS_SLOW)

typedef struct SortGeom {
    int64_t outer, n, inner;    /* the operand as [outer, n, inner], sorting along n */
} SortGeom;

typedef struct SortWork {
    int64_t *perm, *tmp, *offs;
    SortKey *keys;              /* fast path only */
    unsigned char *line;        /* one line of the widest operand */
} SortWork;

static bool check_sort_operands(const IrInstr *instr, Value *const *args, SortGeom *g, Error *err)
{
    int n = instr->n_operands;
    const IrIntList *dl = &instr->lists[IR_LIST_DIMENSIONS];
    if (n < 1 || n > MAX_VARIADIC)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "sort with %d operands is not supported", n);
    for (int k = 0; k < n; k++) {
        if (!eval_need_array(instr, args[k], "operand", err))
            return false;
        if (!eval_same_dims(args[k]->shape, args[0]->shape))
            return error_set(err, ERR_SHAPE, instr->info->loc, "sort: operands must share dims");
    }
    const IrShape *x = args[0]->shape;
    if (dl->n != 1 || dl->v[0] < 0 || dl->v[0] >= x->rank)
        return error_set(err, ERR_SHAPE, instr->info->loc, "sort: dimensions= must name one dimension of %s",
                         ir_shape_str(x));
    g->outer = g->n = g->inner = 1;
    for (int d = 0; d < x->rank; d++)
        *(d < dl->v[0] ? &g->outer : d > dl->v[0] ? &g->inner : &g->n) *= x->dims[d];
    const IrComputation *c = eval_callee(instr, IR_COMP_TO_APPLY, 2 * n, err);
    if (c && (c->root->shape->type != IR_TYPE_PRED || c->root->shape->rank != 0))
        return error_set(err, ERR_SHAPE, instr->info->loc, "sort: the comparator must return pred[]");
    return c != NULL;
}

static bool sort_work_alloc(const IrInstr *instr, const SortGeom *g, bool fast, size_t max_es, SortWork *w,
                            Error *err)
{
    memset(w, 0, sizeof *w);
    bool ok = (w->perm = eval_scratch_alloc(g->n, sizeof *w->perm, instr, err)) &&
              (w->tmp = eval_scratch_alloc(g->n, sizeof *w->tmp, instr, err)) &&
              (w->offs = eval_scratch_alloc(g->n, sizeof *w->offs, instr, err)) &&
              (w->line = eval_scratch_alloc(g->n, max_es, instr, err));
    return ok && (!fast || (w->keys = eval_scratch_alloc(g->n, sizeof *w->keys, instr, err)));
}

static void sort_work_free(SortWork *w)
{
    free(w->perm);
    free(w->tmp);
    free(w->offs);
    free(w->keys);
    free(w->line);
}

/* Writes every operand's line base permuted by w->perm into the results. */
static void permute_line(const SortGeom *g, int n_ops, Value *const *args, Value **parts, int64_t base,
                         SortWork *w)
{
    for (int64_t j = 0; j < g->n; j++)
        w->offs[j] = base + w->perm[j] * g->inner;
    for (int k = 0; k < n_ops; k++) {
        size_t es = eval_elem_bytes(args[k]);
        unsigned char *dst = (unsigned char *)parts[k]->data + (size_t)base * es;
        if (g->inner == 1) {
            eval_gather_elems(dst, args[k]->data, w->offs, g->n, es);
        } else {
            eval_gather_elems(w->line, args[k]->data, w->offs, g->n, es);
            scatter_strided(dst, g->inner, w->line, g->n, es);
        }
    }
}

static void slow_less_init(SlowLess *s, Interp *it, const IrInstr *instr, Value *const *args, Error *err)
{
    memset(s, 0, sizeof *s);
    s->call.it = it;
    s->call.comp = instr->info->comps[IR_COMP_TO_APPLY];
    s->call.n_args = 2 * instr->n_operands;
    s->call.n_results = 1;
    s->n_ops = instr->n_operands;
    s->err = err;
    for (int k = 0; k < s->n_ops; k++) {
        s->call.types[2 * k] = s->call.types[2 * k + 1] = args[k]->shape->type;
        s->data[k] = args[k]->data;
        s->es[k] = eval_elem_bytes(args[k]);
    }
}

static bool sort_lines(Interp *it, const IrInstr *instr, const SortGeom *g, const SortFast *fast,
                       Value *const *args, Value **parts, SortWork *w, Error *err)
{
    SlowLess s;
    slow_less_init(&s, it, instr, args, err);
    s.stride = g->inner;
    IrElemType t = args[0]->shape->type;
    for (int64_t o = 0; o < g->outer; o++)
        for (int64_t i = 0; i < g->inner; i++) {
            int64_t base = o * g->n * g->inner + i;
            for (int64_t j = 0; j < g->n; j++)
                w->perm[j] = j;
            if (fast) {
                extract_keys(fast->kind, t, (const unsigned char *)args[0]->data + (size_t)base * s.es[0],
                             g->inner, g->n, w->keys);
                sort_keys(fast, w->keys, w->perm, w->tmp, g->n);
            } else {
                s.base = base;
                sort_slow(&s, w->perm, w->tmp, g->n);
                if (s.failed)
                    return false;
            }
            permute_line(g, instr->n_operands, args, parts, base, w);
        }
    return true;
}

bool eval_sort(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    SortGeom g = { 1, 1, 1 };
    if (!check_sort_operands(instr, args, &g, err))
        return false;
    int n = instr->n_operands;
    IrElemType types[MAX_VARIADIC];
    size_t max_es = 1;
    for (int k = 0; k < n; k++) {
        types[k] = args[k]->shape->type;
        max_es = eval_elem_bytes(args[k]) > max_es ? eval_elem_bytes(args[k]) : max_es;
    }
    Value *parts[MAX_VARIADIC] = { 0 };
    if (!eval_new_parts(instr, n, args[0]->shape->rank, args[0]->shape->dims, types, parts, err))
        return false;
    SortFast fast;
    bool is_fast = sort_fast_plan(instr->info->comps[IR_COMP_TO_APPLY], types[0], &fast);
    SortWork w;
    bool ok = sort_work_alloc(instr, &g, is_fast, max_es, &w, err) &&
              sort_lines(it, instr, &g, is_fast ? &fast : NULL, args, parts, &w, err);
    sort_work_free(&w);
    return eval_finish_parts(instr, n, parts, ok, out, err);
}
