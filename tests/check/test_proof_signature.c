/* test_proof_signature.c: hlo-check --prove hashes every attribute that can
 * change a value.  Generated pairs, none written one by one:
 *  - every element-wise opcode of the opcode table against the next one
 *    of the same arity that verifies on the same operands;
 *  - every attribute of every instruction of the interpreter corpus
 *    (corpus/interp, each module in its computations, reducers and
 *    comparators included) changed alone: the next comparison direction
 *    or type, an integer one up or down, the first number of a list or of
 *    a slice, window or padding one up, a true flag false.
 * A pair that differs in one of these must never be PROVED (it may be
 * REFUTED, or NOT PROVED where the change keeps the function). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "check.h"
#include "coll.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static Coll *coll;

static IrModule *parse_quiet(const char *text)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "pair.hlo", &err);
    if (m && !ir_verify_module(m, &err)) {
        ir_module_free(m);
        m = NULL;
    }
    return m;
}

/* The proof's status for the pair, or -1 when the check could not run. */
static int prove_status(const IrModule *b, const IrModule *a)
{
    CheckOptions opt;
    check_options_default(&opt);
    opt.trials = 1;
    opt.prove = true;
    CheckReport rep;
    Error err = { 0 };
    if (!check_modules(coll, b, a, &opt, &rep, &err))
        return -1;
    int st = (int)rep.proof.status;
    check_report_free(&rep);
    return st;
}

static void must_not_prove(const char *before, const char *after, const char *what, int *tested)
{
    IrModule *b = parse_quiet(before), *a = parse_quiet(after);
    if (b && a) {
        int st = prove_status(b, a);
        if (st == CHECK_PROOF_PROVED)
            fail_msg("--prove says PROVED EQUIVALENT, yet %s:\n%s\nagainst\n%s", what, before, after);
        (*tested)++;
    }
    ir_module_free(b);
    ir_module_free(a);
}

/* ---- Opcodes */

static void test_each_elementwise_opcode_against_the_next(void **state)
{
    (void)state;
    static const char *const types[] = { "f32", "s32", "pred" };
    int tested = 0;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (int arity = 1; arity <= 2; arity++) {
            char first[1024] = "", prev[1024] = "", text[1024], prev_name[64] = "";
            for (int op = 0; op < IR_OP_COUNT; op++) {
                if (!(ir_op_info[op].flags & OPF_ELEMENTWISE) || ir_op_info[op].arity != arity)
                    continue;
                snprintf(text, sizeof text,
                         "HloModule m\nENTRY e {\n  p = %s[8] parameter(0)\n  q = %s[8] parameter(1)\n"
                         "  ROOT o = %s[8] %s(p%s)\n}\n", types[t], types[t], types[t], ir_opcode_name((IrOpcode)op),
                         arity == 2 ? ", q" : "");
                IrModule *m = parse_quiet(text);
                if (!m)
                    continue;
                ir_module_free(m);
                char what[160];
                if (prev[0]) {
                    snprintf(what, sizeof what, "%s and %s are other opcodes", prev_name, ir_opcode_name((IrOpcode)op));
                    must_not_prove(prev, text, what, &tested);
                } else {
                    memcpy(first, text, sizeof first);
                }
                memcpy(prev, text, sizeof prev);
                snprintf(prev_name, sizeof prev_name, "%s", ir_opcode_name((IrOpcode)op));
            }
            if (first[0] && strcmp(first, prev) != 0)
                must_not_prove(prev, first, "the last and the first opcodes differ", &tested);
        }
    printf("  opcode pairs: %d\n", tested);
    assert_true(tested >= 40);
}

/* ---- Attributes */

static const char *const directions[] = { "EQ", "NE", "GE", "GT", "LE", "LT" };
static const char *const cmp_types[] = { "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED" };

/* A changed copy of value v (len bytes) of attribute name into out, variant
 * k; false when there is no such variant. */
static bool mutate(const char *name, const char *v, size_t len, int k, char *out, size_t n)
{
    if (strcmp(name, "direction") == 0) {
        if (k > 0)
            return false;
        for (int d = 0; d < 6; d++)
            if (strlen(directions[d]) == len && memcmp(v, directions[d], len) == 0) {
                snprintf(out, n, "%s", directions[(d + 1) % 6]);
                return true;
            }
        return false;
    }
    if (strcmp(name, "type") == 0) {
        if (k > 2)
            return false;
        int at = 0;
        for (int d = 0; d < 4; d++)
            if (strlen(cmp_types[d]) == len && memcmp(v, cmp_types[d], len) == 0)
                at = d;
        snprintf(out, n, "%s", cmp_types[(at + 1 + k) % 4]);
        return true;
    }
    if (len == 4 && memcmp(v, "true", 4) == 0) {
        if (k > 0)
            return false;
        snprintf(out, n, "false");
        return true;
    }
    /* The first two numbers of the value (not inside a name): k = 0 the
     * first one up, 1 down, 2 the first up and the second down (a pad or
     * a permutation that keeps the shape), 3 both up (a slice moved),
     * 4 the two swapped. */
    size_t at[2], to[2];
    long long x[2];
    int found = 0;
    for (size_t i = 0; i < len && found < 2;) {
        if (!isdigit((unsigned char)v[i]) ||
            (i > 0 && (isalpha((unsigned char)v[i - 1]) || v[i - 1] == '%' || v[i - 1] == '_' || v[i - 1] == '.'))) {
            while (i < len && (isalnum((unsigned char)v[i]) || v[i] == '.' || (v[i] == '_' && i + 1 < len &&
                                                                              isalpha((unsigned char)v[i + 1]))))
                i++;
            if (i < len && !isdigit((unsigned char)v[i]))
                i++;
            continue;
        }
        at[found] = i;
        x[found] = 0;
        while (i < len && isdigit((unsigned char)v[i]))
            x[found] = x[found] * 10 + (v[i++] - '0');
        to[found++] = i;
    }
    if (found == 0 || k > 4 || (k >= 2 && found < 2))
        return false;
    long long y[2] = { x[0], found > 1 ? x[1] : 0 };
    switch (k) {
    case 0: y[0]++; break;
    case 1: y[0]--; break;
    case 2: y[0]++; y[1]--; break;
    case 3: y[0]++; y[1]++; break;
    default: y[0] = x[1]; y[1] = x[0]; break;
    }
    if (y[0] < 0 || y[1] < 0 || (k == 4 && x[0] == x[1]))
        return false;
    if (found == 1 || k < 2)
        snprintf(out, n, "%.*s%lld%.*s", (int)at[0], v, y[0], (int)(len - to[0]), v + to[0]);
    else
        snprintf(out, n, "%.*s%lld%.*s%lld%.*s", (int)at[0], v, y[0], (int)(at[1] - to[0]), v + to[0], y[1],
                 (int)(len - to[1]), v + to[1]);
    return true;
}

/* Attributes whose values name computations or carry no value semantics
 * here: not mutated. */
static bool skipped_attr(const char *name)
{
    static const char *const skip[] = { "to_apply", "calls", "condition", "body", "true_computation",
                                        "false_computation", "branch_computations", "metadata",
                                        "control-predecessors", "sharding", "frontend_attributes",
                                        "backend_config", "custom_call_target", "api_version" };
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
        if (strcmp(name, skip[i]) == 0)
            return true;
    return false;
}

typedef struct Coverage {
    char names[64][40];
    int counts[64];
    int n;
} Coverage;

static void covered(Coverage *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->names[i], name) == 0) {
            c->counts[i]++;
            return;
        }
    if (c->n < 64) {
        snprintf(c->names[c->n], sizeof c->names[0], "%s", name);
        c->counts[c->n++] = 1;
    }
}

/* Is a (a string) a permutation of the n characters at b? */
static bool same_letters(const char *a, const char *b, size_t n)
{
    int count[256] = { 0 };
    if (strlen(a) != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        count[(unsigned char)a[i]]++;
        count[(unsigned char)b[i]]--;
    }
    for (int c = 0; c < 256; c++)
        if (count[c])
            return false;
    return true;
}

/* Does the shape text [s, e) have a dimension of size 0? */
static bool empty_shape(const char *s, const char *e)
{
    for (const char *c = s; c + 2 < e; c++)
        if ((c[0] == '[' || c[0] == ',') && c[1] == '0' && (c[2] == ']' || c[2] == ','))
            return true;
    return false;
}

/* Every attribute of every instruction line of text, changed alone. */
static void mutate_module(const char *text, Coverage *cov, int *tested)
{
    size_t n = strlen(text);
    char *copy = malloc(n + 4096);
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = text + n;
        const char *eq = strstr(line, " = ");
        /* The attributes start after the operand list's closing paren; a
         * tuple shape's parens come first. */
        const char *shape_end = eq && eq < end ? eq + 3 : NULL;
        if (shape_end && *shape_end == '(') {
            for (int depth = 0; shape_end < end; shape_end++) {
                depth += *shape_end == '(' ? 1 : *shape_end == ')' ? -1 : 0;
                if (depth == 0)
                    break;
            }
        }
        const char *open = shape_end ? strchr(shape_end, '(') : NULL;
        const char *close = NULL;
        if (open && open < end) {
            int depth = 0;
            for (const char *c = open; c < end; c++) {
                depth += *c == '(' ? 1 : *c == ')' ? -1 : 0;
                if (depth == 0) {
                    close = c;
                    break;
                }
            }
        }
        /* An instruction of no elements computes nothing to change. */
        if (close && empty_shape(eq + 3, open))
            close = NULL;
        for (const char *a = close; a && a < end;) {
            a = strstr(a, ", ");
            if (!a || a >= end)
                break;
            a += 2;
            const char *is = a;
            while (is < end && *is != '=' && *is != ',')
                is++;
            if (is >= end || *is != '=')
                continue;
            const char *v = is + 1, *ve = v;
            int depth = 0;
            bool quoted = false;
            for (; ve < end; ve++) {
                if (*ve == '"')
                    quoted = !quoted;
                if (quoted)
                    continue;
                depth += (*ve == '{' || *ve == '[' || *ve == '(') - (*ve == '}' || *ve == ']' || *ve == ')');
                if (depth == 0 && *ve == ',')
                    break;
            }
            char name[40];
            snprintf(name, sizeof name, "%.*s", (int)(is - a), a);
            if (skipped_attr(name))
                continue;
            char value[512];
            /* reduce's dimensions are a set: their order is no change. */
            bool is_set = strcmp(name, "dimensions") == 0 && open - shape_end >= 7 &&
                          memcmp(open - 7, " reduce", 7) == 0;
            for (int k = 0; mutate(name, v, (size_t)(ve - v), k, value, sizeof value); k++) {
                if (is_set && same_letters(value, v, (size_t)(ve - v)))
                    continue;
                size_t pre = (size_t)(v - text);
                snprintf(copy, n + 4096, "%.*s%s%s", (int)pre, text, value, ve);
                int before = *tested;
                char what[800];
                snprintf(what, sizeof what, "%s= changed from %.*s to %s", name, (int)(ve - v), v, value);
                must_not_prove(text, copy, what, tested);
                if (*tested > before)
                    covered(cov, name);
            }
            a = ve;
        }
        line = *end ? end + 1 : end;
    }
    free(copy);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    for (size_t k; (k = fread(s + n, 1, cap - n - 1, f)) > 0;) {
        n += k;
        if (n + 1 == cap)
            s = realloc(s, cap *= 2);
    }
    fclose(f);
    s[n] = 0;
    return s;
}

static int walk(const char *dir, Coverage *cov, int *tested, int *modules)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".hlo") == 0) {
            char *text = read_text(path);
            if (!text)
                continue;
            IrModule *m = parse_quiet(text);
            if (m) {
                StrBuf b;
                strbuf_init(&b);
                ir_print_module(&b, m);     /* one attribute spelling for the mutations */
                mutate_module(b.s, cov, tested);
                strbuf_free(&b);
                ir_module_free(m);
                (*modules)++;
            }
            free(text);
        } else {
            walk(path, cov, tested, modules);
        }
    }
    closedir(d);
    return 1;
}

/* Attributes the interpreter corpus holds on few instructions, in one
 * module more: each is mutated like the corpus's. */
static const char extra_module[] =
    "HloModule extra\n\n"
    "%add (a: f32[], b: f32[]) -> f32[] {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n}\n\n"
    "ENTRY e {\n  p = f32[4,6] parameter(0)\n  q = f32[6,4] parameter(1)\n  z = f32[] constant(0)\n"
    "  rp = f32[4,6] reduce-precision(p), exponent_bits=5, mantissa_bits=7\n"
    "  pd = f32[6,9] pad(rp, z), padding=1_1x1_2\n"
    "  rw = f32[3,4] reduce-window(pd, z), window={size=2x3 stride=2x2 pad=0_0x0_1}, to_apply=%add\n"
    "  d = f32[4,4] dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  x = f32[1,4,6,1] reshape(p)\n  k = f32[2,3,1,1] broadcast(z), dimensions={}\n"
    "  c = f32[1,3,6,1] convolution(x, k), window={size=2x3 pad=0_0x1_1}, dim_labels=b01f_01io->b01f\n"
    "  ROOT t = (f32[3,4], f32[4,4], f32[1,3,6,1]) tuple(rw, d, c)\n}\n";

static void test_each_attribute_of_the_corpus_changed_alone(void **state)
{
    (void)state;
    const char *root = getenv("HLOCHECK_CORPUS");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/interp", root ? root : "corpus");
    Coverage cov = { .n = 0 };
    int tested = 0, modules = 0;
    if (!walk(dir, &cov, &tested, &modules))
        fail_msg("no corpus at %s (HLOCHECK_CORPUS names the corpus directory)", dir);
    IrModule *m = parse_quiet(extra_module);
    assert_non_null(m);
    StrBuf b;
    strbuf_init(&b);
    ir_print_module(&b, m);
    mutate_module(b.s, &cov, &tested);
    strbuf_free(&b);
    ir_module_free(m);
    printf("  %d modules, %d attribute changes, none proved:", modules, tested);
    for (int i = 0; i < cov.n; i++)
        printf(" %s %d", cov.names[i], cov.counts[i]);
    printf("\n");
    /* The attributes the signature must carry are among those changed. */
    static const char *const must[] = { "direction", "type", "dimensions", "slice", "index", "iota_dimension",
                                        "exponent_bits", "mantissa_bits", "window", "padding" };
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++) {
        bool seen = false;
        for (int k = 0; k < cov.n; k++)
            seen |= strcmp(cov.names[k], must[i]) == 0;
        if (!seen)
            fail_msg("no change of %s= was tested", must[i]);
    }
    assert_true(modules > 100 && tested > 300);
}

int main(int argc, char **argv)
{
    coll = coll_init(&argc, &argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_elementwise_opcode_against_the_next),
        cmocka_unit_test(test_each_attribute_of_the_corpus_changed_alone),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    coll_finish(coll, rc);
}
