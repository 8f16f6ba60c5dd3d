/* prove_hash.c: the hashes of --prove.  A 128-bit state absorbs 64-bit
 * words in two lanes with different multipliers and shifts, finished by
 * murmur3's fmix64 on each lane with the other folded in; the low bit of the
 * high word is not hashed but carries the taint (does the expression read an
 * entry parameter or an rng draw).  The rest is the node table that
 * explains a difference, and the fingerprints of computations and
 * instructions. */
#include "prove_internal.h"

#include <stdlib.h>
#include <string.h>

static int64_t hashes_made;     /* by this process: the collision bound counts them */

static uint64_t fmix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void pmix_init(PMix *m, uint64_t tag)
{
    m->a = fmix(tag ^ 0x243f6a8885a308d3ull);
    m->b = fmix(tag + 0x13198a2e03707344ull);
    m->taint = 0;
}

void pmix_u64(PMix *m, uint64_t x)
{
    m->a = rotl((m->a ^ x) * 0x9e3779b97f4a7c15ull, 29);
    m->b = rotl((m->b + rotl(x, 17)) * 0xc2b2ae3d27d4eb4full, 31) ^ m->a;
}

void pmix_hash(PMix *m, PHash h)
{
    pmix_u64(m, h.lo);
    pmix_u64(m, h.hi);
    m->taint |= h.hi & PH_TAINT;
}

void pmix_bytes(PMix *m, const void *p, size_t n)
{
    const unsigned char *c = p;
    pmix_u64(m, n);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, c, 8);
        pmix_u64(m, w);
        c += 8;
        n -= 8;
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, c, n);
        pmix_u64(m, w);
    }
}

int64_t ph_hashes_made(void)
{
    return hashes_made;
}

PHash pmix_done(const PMix *m)
{
    hashes_made++;
    uint64_t a = fmix(m->a + rotl(m->b, 23)), b = fmix(m->b ^ a);
    return (PHash){ a, (b & ~PH_TAINT) | m->taint };
}

/* ---- Leaves */

#define PARAM_SALT 0x5bd1e9955bd1e995ull
#define CONST_SALT 0x27d4eb2f165667c5ull
#define LEAF_BITS 8
#define RANK_BITS 10
#define INDEX_BITS 46

static uint64_t param_hi(uint64_t lo)
{
    return (fmix(lo ^ PARAM_SALT) & ~PH_TAINT) | PH_TAINT;
}

PHash ph_param(int leaf, int rank, int64_t index)
{
    hashes_made++;
    if (leaf < (1 << LEAF_BITS) && rank < (1 << RANK_BITS) && index < ((int64_t)1 << INDEX_BITS)) {
        uint64_t lo = (uint64_t)leaf << (RANK_BITS + INDEX_BITS) | (uint64_t)rank << INDEX_BITS | (uint64_t)index;
        return (PHash){ lo, param_hi(lo) };
    }
    PMix m;
    pmix_init(&m, PK_PARAM);
    pmix_u64(&m, (uint64_t)leaf);
    pmix_u64(&m, (uint64_t)rank);
    pmix_u64(&m, (uint64_t)index);
    m.taint = PH_TAINT;
    return pmix_done(&m);
}

bool ph_param_decode(PHash h, int *leaf, int *rank, int64_t *index)
{
    if (h.hi != param_hi(h.lo))
        return false;
    *leaf = (int)(h.lo >> (RANK_BITS + INDEX_BITS));
    *rank = (int)((h.lo >> INDEX_BITS) & ((1u << RANK_BITS) - 1));
    *index = (int64_t)(h.lo & (((uint64_t)1 << INDEX_BITS) - 1));
    return true;
}

static uint64_t const_hi(IrElemType t, uint64_t lo, bool taint)
{
    return (fmix(lo ^ fmix(CONST_SALT + (uint64_t)t)) & ~PH_TAINT) | (taint ? PH_TAINT : 0);
}

PHash ph_const(IrElemType t, const void *bits, bool taint)
{
    int bytes = ir_type_storage_bytes(t);
    hashes_made++;
    if (bytes <= 8) {
        uint64_t lo = 0;
        memcpy(&lo, bits, (size_t)bytes);
        return (PHash){ lo, const_hi(t, lo, taint) };
    }
    PMix m;
    pmix_init(&m, PK_CONST);
    pmix_u64(&m, (uint64_t)t);
    pmix_bytes(&m, bits, (size_t)bytes);
    m.taint = taint ? PH_TAINT : 0;
    return pmix_done(&m);
}

bool ph_const_decode(PHash h, IrElemType *t, uint64_t *bits)
{
    for (int k = IR_TYPE_PRED; k < IR_TYPE_TOKEN; k++)
        if (ir_type_storage_bytes((IrElemType)k) <= 8 &&
            ((h.hi | PH_TAINT) == (const_hi((IrElemType)k, h.lo, true)))) {
            *t = (IrElemType)k;
            *bits = h.lo;
            return true;
        }
    return false;
}

/* ---- Shadow shapes */

IrShape *ph_shadow_shape(const IrShape *s)
{
    IrShape *h = xcalloc(1, sizeof *h);
    *h = *s;
    if (s->type == IR_TYPE_TUPLE) {
        h->elements = xcalloc((size_t)(s->n_elements ? s->n_elements : 1), sizeof *h->elements);
        for (int i = 0; i < s->n_elements; i++)
            h->elements[i] = ph_shadow_shape(s->elements[i]);
    } else if (s->type != IR_TYPE_TOKEN && s->type != IR_TYPE_OPAQUE) {
        h->type = IR_TYPE_C128;
    }
    return h;
}

void ph_shadow_free(IrShape *s)
{
    if (!s)
        return;
    if (s->type == IR_TYPE_TUPLE) {
        for (int i = 0; i < s->n_elements; i++)
            ph_shadow_free(s->elements[i]);
        free(s->elements);
    }
    free(s);
}

/* ---- Fingerprints */

static void mix_text(PMix *m, StrBuf *b)
{
    pmix_bytes(m, b->s ? b->s : "", b->len);
    b->len = 0;
    if (b->s)
        b->s[0] = 0;
}

static uint64_t fingerprint_depth(const IrComputation *c, int depth);

static void mix_signature(PMix *m, const IrInstr *instr, StrBuf *b, int depth)
{
    pmix_u64(m, (uint64_t)instr->op);
    ir_shape_print(b, instr->shape, true);
    mix_text(m, b);
    ir_print_semantic_attrs(b, instr);
    mix_text(m, b);
    for (int k = 0; k < IR_COMP_COUNT; k++)
        if (instr->info->comps[k])
            pmix_u64(m, fingerprint_depth(instr->info->comps[k], depth + 1) + (uint64_t)k);
    for (int k = 0; k < instr->info->n_branches; k++)
        pmix_u64(m, fingerprint_depth(instr->info->branches[k], depth + 1));
}

static uint64_t fingerprint_depth(const IrComputation *c, int depth)
{
    PMix m;
    pmix_init(&m, 0xc0ffee);
    if (depth > 64)     /* computations call each other more deeply than modules do: stop */
        return pmix_done(&m).lo;
    StrBuf b;
    strbuf_init(&b);
    pmix_u64(&m, (uint64_t)c->n_instrs);
    for (int i = 0; i < c->n_instrs; i++) {
        const IrInstr *instr = c->instrs[i];
        mix_signature(&m, instr, &b, depth);
        if (instr->op == IR_OP_PARAMETER)
            pmix_u64(&m, (uint64_t)instr->info->parameter_number);
        if (instr->op == IR_OP_CONSTANT && instr->info->literal) {
            ir_print_literal(&b, instr->info->literal);
            mix_text(&m, &b);
        }
        for (int k = 0; k < instr->n_operands; k++) {
            int pos = -1;
            for (int j = i - 1; j >= 0 && pos < 0; j--)
                if (c->instrs[j] == instr->operands[k])
                    pos = j;
            pmix_u64(&m, (uint64_t)(int64_t)pos);
        }
        pmix_u64(&m, instr == c->root);
    }
    strbuf_free(&b);
    return pmix_done(&m).lo;
}

uint64_t ph_computation_fingerprint(const IrComputation *c)
{
    return fingerprint_depth(c, 0);
}

uint64_t ph_instr_signature(const IrInstr *instr)
{
    PMix m;
    StrBuf b;
    strbuf_init(&b);
    pmix_init(&m, 0x5157);
    mix_signature(&m, instr, &b, 0);
    strbuf_free(&b);
    return pmix_done(&m).lo;
}

uint64_t ph_elementwise_signature(const IrInstr *instr)
{
    PMix m;
    StrBuf b;
    strbuf_init(&b);
    pmix_init(&m, 0xe1e3);
    pmix_u64(&m, (uint64_t)instr->op);
    pmix_u64(&m, (uint64_t)instr->shape->type);
    ir_print_semantic_attrs(&b, instr);
    mix_text(&m, &b);
    strbuf_free(&b);
    return pmix_done(&m).lo;
}

/* ---- The node table */

struct PTable {
    PNode *slots;
    uint64_t mask;
};

PTable *ptable_new(int log2_slots)
{
    PTable *t = xcalloc(1, sizeof *t);
    t->slots = xcalloc((size_t)1 << log2_slots, sizeof *t->slots);
    t->mask = ((uint64_t)1 << log2_slots) - 1;
    return t;
}

void ptable_free(PTable *t)
{
    if (!t)
        return;
    free(t->slots);
    free(t);
}

void ptable_put(PTable *t, const PNode *n)
{
    t->slots[(n->key.lo ^ (n->key.hi >> 7)) & t->mask] = *n;
}

const PNode *ptable_get(const PTable *t, PHash key)
{
    const PNode *n = &t->slots[(key.lo ^ (key.hi >> 7)) & t->mask];
    return ph_eq(n->key, key) && n->kind ? n : NULL;
}
