/* opaque.c: what the checker does with what it cannot compute.
 *
 * A custom call whose target the interpreter does not implement (cuDNN or
 * Transformer Engine attention, Neuron kernels) is modelled as an unknown
 * but deterministic function of its operands: its outputs are drawn from
 * the seeded streams of random_inputs.c, keyed by a hash of the target, the
 * backend_config and every operand's shape and bytes.  So a rewrite that
 * leaves a call's operands alone keeps its outputs, and one that changes
 * them is seen to.  An "equivalent" verdict then holds for every
 * deterministic implementation of the call only if the call's outputs
 * depend on nothing but those operands, which hlo-check says in its header.
 *
 * An elided constant ({...}) gets values drawn from a stream keyed by its
 * name and the seed, the same in both modules of a check.
 *
 * The hash: four 64-bit lanes over the bytes taken 32 at a time (lane k
 * eats word k of each 32-byte block: h = rotl(h ^ w, 29) * P1), the tail
 * bytes packed little-endian into one last word, then the lanes and the
 * length folded through the splitmix64 finaliser.  Not cryptographic: it
 * separates inputs that differ, which is all the checker needs, at memory
 * speed for the GB-sized operands of real programs. */
#include "check.h"
#include "check_internal.h"

#include <string.h>

#define P1 0x9E3779B97F4A7C15ULL
#define P2 0xC2B2AE3D27D4EB4FULL

static uint64_t rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t fmix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t lane(uint64_t h, uint64_t w)
{
    return rotl64(h ^ w, 29) * P1;
}

uint64_t check_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t l[4] = { h ^ P2, h + P1, rotl64(h, 17) ^ P1, h - P2 };
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, b + i + 8 * (size_t)k, 8);
            l[k] = lane(l[k], w);
        }
    uint64_t tail = 0;
    for (size_t j = 0; i + j < n; j++)
        tail |= (uint64_t)b[i + j] << (8 * (j % 8));
    uint64_t z = l[0] ^ rotl64(l[1], 13) ^ rotl64(l[2], 31) ^ rotl64(l[3], 47);
    return fmix(z ^ fmix(tail + (uint64_t)n * P2));
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    return check_hash_bytes(h, s ? s : "", s ? strlen(s) : 0);
}

/* The element type, dims and bytes of every leaf, in order. */
static uint64_t hash_value(uint64_t h, const Value *v)
{
    const IrShape *s = v->shape;
    int64_t head[2] = { s->type, s->type == IR_TYPE_TUPLE ? v->n_elements : s->rank };
    h = check_hash_bytes(h, head, sizeof head);
    if (s->type == IR_TYPE_TUPLE) {
        for (int i = 0; i < v->n_elements; i++)
            h = hash_value(h, v->elements[i]);
        return h;
    }
    h = check_hash_bytes(h, s->dims, (size_t)s->rank * sizeof *s->dims);
    return ir_shape_is_array(s) ? check_hash_bytes(h, v->data, value_bytes(v)) : h;
}

bool check_opaque_custom_call(const IrInstr *instr, Value *const *args, int n_args, Value **out, Error *err)
{
    uint64_t h = hash_str(0x6F70617175650000ULL, instr->info->words[IR_WORD_CUSTOM_CALL_TARGET]);
    h = hash_str(h, ir_raw_attr_get(instr, "backend_config"));
    for (int i = 0; i < n_args; i++)
        h = hash_value(h, args[i]);
    *out = check_random_value(h, instr->shape, CHECK_DIST_UNIFORM, err);
    return *out != NULL;
}

/* ---- Elided constants */

/* lit takes the values of v (same shape), in the module's arena. */
static bool literal_from_value(Arena *a, IrLiteral *lit, const Value *v, Error *err)
{
    lit->elided = false;
    if (v->shape->type == IR_TYPE_TUPLE) {
        lit->n_elements = v->n_elements;
        lit->elements = ARENA_ARRAY(a, IrLiteral *, (size_t)(v->n_elements ? v->n_elements : 1));
        if (!lit->elements)
            return error_set(err, ERR_NOMEM, (IrLoc){ 0 }, "out of memory filling an elided constant");
        for (int i = 0; i < v->n_elements; i++) {
            IrLiteral *el = ARENA_NEW(a, IrLiteral);
            if (!el)
                return error_set(err, ERR_NOMEM, (IrLoc){ 0 }, "out of memory filling an elided constant");
            el->shape = lit->shape->elements[i];
            lit->elements[i] = el;
            if (!literal_from_value(a, el, v->elements[i], err))
                return false;
        }
        return true;
    }
    if (!ir_shape_is_array(v->shape))
        return true;        /* token: no values */
    size_t n = value_bytes(v);
    lit->data = arena_alloc(a, n ? n : 1);
    if (!lit->data)
        return error_set(err, ERR_NOMEM, (IrLoc){ 0 }, "out of memory filling an elided constant");
    memcpy(lit->data, v->data, n);
    return true;
}

int check_fill_elided_constants(IrModule *m, uint64_t seed, char *note, size_t note_size, Error *err)
{
    int n = 0;
    size_t len = 0;
    if (note_size)
        note[0] = 0;
    for (int c = 0; c < m->n_computations; c++) {
        IrComputation *comp = m->computations[c];
        for (int i = 0; i < comp->n_instrs; i++) {
            IrInstr *in = comp->instrs[i];
            IrLiteral *lit = in->op == IR_OP_CONSTANT ? in->info->literal : NULL;
            if (!lit || !lit->elided)
                continue;
            uint64_t key = hash_str(check_hash_bytes(0x656C696465640000ULL, &seed, sizeof seed), in->name);
            Value *v = check_random_value(key, in->shape, CHECK_DIST_UNIFORM, err);
            bool ok = v && literal_from_value(m->arena, lit, v, err);
            value_release(v);
            if (!ok) {
                error_set_loc(err, in->info->loc);
                return -1;
            }
            if (len < note_size)
                len += (size_t)snprintf(note + len, note_size - len, "%s%s", n ? ", " : "", in->name);
            n++;
        }
    }
    if (n && len < note_size) {
        char names[2048];
        snprintf(names, sizeof names, "%s", note);
        snprintf(note, note_size, "%s: %d elided constant%s ({...}) filled with seeded values keyed by name "
                 "and seed %llu: %s", m->name, n, n == 1 ? "" : "s", (unsigned long long)seed, names);
    }
    return n;
}
