/* provenance.c: which pass made, changed or removed each instruction
 * (pass.h).  After every pass that changed the module, each instruction's
 * key (computation and instruction name) and fingerprint (a hash of its
 * opcode, shape, semantic attributes and operands' names) are compared
 * with those before it: a new key was made by the pass, a changed
 * fingerprint changed by it, a key gone removed by it. */
#include "pass.h"

#include <stdlib.h>
#include <string.h>

typedef struct Entry {
    char *key;              /* "computation/instruction" */
    uint64_t fp;
    int pass;               /* after: the pass (index + 1) that made or last changed it; 0: none */
} Entry;

typedef struct Table {
    Entry *e;
    int n;
} Table;

struct PassProvenance {
    Table now;              /* the module as the last pass left it */
    Table original;         /* before the passes; .pass: the pass that removed or first changed it */
};

static uint64_t hash(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)      /* FNV-1a, 64 bits */
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

static char *key_of(const IrInstr *in)
{
    const char *c = in->parent && in->parent->name ? in->parent->name : "";
    size_t n = strlen(c) + strlen(in->name) + 2;
    char *k = xmalloc(n);
    snprintf(k, n, "%s/%s", c, in->name);
    return k;
}

static uint64_t fingerprint(const IrInstr *in, StrBuf *b)
{
    b->len = 0;
    strbuf_printf(b, "%s %s", ir_opcode_name(in->op), ir_shape_str(in->shape));
    ir_print_semantic_attrs(b, in);
    for (int o = 0; o < in->n_operands; o++)
        strbuf_printf(b, " %s", in->operands[o]->name);
    return hash(0xcbf29ce484222325ull, b->s ? b->s : "", b->len);
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const Entry *)a)->key, ((const Entry *)b)->key);
}

static void table_build(Table *t, const IrModule *m)
{
    int n = 0;
    for (int c = 0; c < m->n_computations; c++)
        n += m->computations[c]->n_instrs;
    t->e = xcalloc((size_t)(n ? n : 1), sizeof *t->e);
    t->n = 0;
    StrBuf b;
    strbuf_init(&b);
    for (int c = 0; c < m->n_computations; c++)
        for (int i = 0; i < m->computations[c]->n_instrs; i++) {
            const IrInstr *in = m->computations[c]->instrs[i];
            t->e[t->n++] = (Entry){ key_of(in), fingerprint(in, &b), 0 };
        }
    strbuf_free(&b);
    qsort(t->e, (size_t)t->n, sizeof *t->e, by_key);
}

static void table_free(Table *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->e[i].key);
    free(t->e);
    t->e = NULL;
    t->n = 0;
}

static Entry *find(const Table *t, const char *key)
{
    Entry probe = { (char *)key, 0, 0 };
    return t->n ? bsearch(&probe, t->e, (size_t)t->n, sizeof *t->e, by_key) : NULL;
}

PassProvenance *pass_provenance_new(const IrModule *m)
{
    PassProvenance *p = xcalloc(1, sizeof *p);
    table_build(&p->now, m);
    p->original.n = p->now.n;       /* the same entries, keys copied */
    p->original.e = xcalloc((size_t)(p->now.n ? p->now.n : 1), sizeof *p->original.e);
    for (int i = 0; i < p->now.n; i++)
        p->original.e[i] = (Entry){ xstrdup(p->now.e[i].key), p->now.e[i].fp, 0 };
    return p;
}

void pass_provenance_record(const IrModule *m, int pass_index, void *ctx)
{
    PassProvenance *p = ctx;
    Table next;
    table_build(&next, m);
    for (int i = 0; i < next.n; i++) {
        Entry *e = &next.e[i], *was = find(&p->now, e->key);
        e->pass = !was || was->fp != e->fp ? pass_index + 1 : was->pass;
        Entry *orig = find(&p->original, e->key);
        if (orig && orig->pass == 0 && orig->fp != e->fp)
            orig->pass = pass_index + 1;       /* changed: the first pass that did */
    }
    for (int i = 0; i < p->original.n; i++)
        if (p->original.e[i].pass == 0 && !find(&next, p->original.e[i].key))
            p->original.e[i].pass = pass_index + 1;     /* removed */
    table_free(&p->now);
    p->now = next;
}

static int lookup(const Table *t, const IrInstr *in)
{
    char *k = key_of(in);
    Entry *e = find(t, k);
    free(k);
    return e ? e->pass : 0;
}

int pass_provenance_after(const PassProvenance *p, const IrInstr *in)
{
    return lookup(&p->now, in);
}

int pass_provenance_before(const PassProvenance *p, const IrInstr *in)
{
    return lookup(&p->original, in);
}

void pass_provenance_free(PassProvenance *p)
{
    if (!p)
        return;
    table_free(&p->now);
    table_free(&p->original);
    free(p);
}
