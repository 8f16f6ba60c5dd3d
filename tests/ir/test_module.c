/* test_module.c: module editing (src/ir/module.c): dead-code removal, id
 * spans, operands held inline, typed attribute setters;
 * moving the live instructions together (src/ir/compact.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"

#include <stdlib.h>
#include <string.h>

static IrModule *parse(const char *text)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "test.hlo", &err);
    if (!m)
        error_print(&err, stderr);
    assert_non_null(m);
    assert_true(ir_verify_module(m, &err));
    return m;
}

static const IrInstr *find(const IrComputation *c, const char *name)
{
    for (int i = 0; i < c->n_instrs; i++)
        if (strcmp(c->instrs[i]->name, name) == 0)
            return c->instrs[i];
    return NULL;
}

static const char dead_code[] =
    "HloModule m\n"
    "%add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
    "ENTRY e {\n"
    "  p = f32[4] parameter(0)\n"
    "  q = f32[4] parameter(1)\n"
    "  n1 = f32[4] negate(p)\n"
    "  n2 = f32[4] exponential(n1)\n"          /* dead chain n1 -> n2 */
    "  ar = f32[4] all-reduce(q), replica_groups={}, to_apply=%add\n"   /* unused collective: dead */
    "  a = f32[4] add(p, q)\n"
    "  ROOT r = f32[4] multiply(a, a)\n"
    "}\n";

static void remove_dead_follows_chains_and_keeps_roots_and_parameters(void **state)
{
    (void)state;
    IrModule *m = parse(dead_code);
    IrComputation *e = m->entry;
    assert_int_equal(ir_remove_dead(e), 3);
    assert_int_equal(e->n_instrs, 4);
    assert_null(find(e, "n1"));
    assert_null(find(e, "n2"));
    assert_null(find(e, "ar"));
    assert_non_null(find(e, "q"));      /* a parameter stays even when only dead code used it */
    assert_non_null(find(e, "r"));
    assert_int_equal(ir_remove_dead(e), 0);
    ir_module_free(m);
}

/* The reducer's instructions are numbered after the entry's ones grew far
 * beyond them: removal in each computation sees only its own ids. */
static void remove_dead_in_a_computation_far_from_the_others_ids(void **state)
{
    (void)state;
    IrModule *m = parse(dead_code);
    IrComputation *add = ir_module_find_computation(m, "add");
    assert_non_null(add);
    IrInstr *a = add->params[0];
    for (int i = 0; i < 1000; i++)      /* burn ids */
        ir_instr_new(m, IR_OP_NEGATE, "x", a->shape, 1, &a);
    IrInstr *dead = ir_instr_new(m, IR_OP_NEGATE, "dead", a->shape, 1, &a);
    ir_computation_append(add, dead);
    int lo, span = ir_computation_id_span(add, &lo);
    assert_int_equal(span, dead->id - lo + 1);
    assert_int_equal(lo, add->params[0]->id < add->params[1]->id ? add->params[0]->id : add->params[1]->id);
    assert_int_equal(ir_remove_dead(add), 1);
    assert_true(dead->dead);
    assert_int_equal(add->n_instrs, 3);
    ir_module_free(m);
}

static void compaction_numbers_in_order(void **state)
{
    (void)state;
    IrModule *m = parse(dead_code);
    ir_remove_dead(m->entry);
    assert_true(ir_module_compact(m));
    int id = 0;
    for (int c = 0; c < m->n_computations; c++) {
        int lo, span = ir_computation_id_span(m->computations[c], &lo);
        for (int i = 0; i < m->computations[c]->n_instrs; i++) {
            assert_int_equal(m->computations[c]->instrs[i]->id, id++);
            assert_true(id - 1 >= lo && id - 1 < lo + span);      /* the span covers every id */
        }
    }
    assert_int_equal(m->next_instr_id, id);
    ir_module_free(m);
}

static void few_operands_are_held_inline(void **state)
{
    (void)state;
    IrModule *m = parse(dead_code);
    IrInstr *p = m->entry->params[0];
    IrInstr *ops[IR_INLINE_OPERANDS + 1];
    for (int i = 0; i <= IR_INLINE_OPERANDS; i++)
        ops[i] = p;
    IrInstr *few = ir_instr_new(m, IR_OP_TUPLE, "few", p->shape, IR_INLINE_OPERANDS, ops);
    IrInstr *many = ir_instr_new(m, IR_OP_TUPLE, "many", p->shape, IR_INLINE_OPERANDS + 1, ops);
    assert_ptr_equal(few->operands, few->inline_operands);
    assert_ptr_not_equal(many->operands, many->inline_operands);
    for (int i = 0; i <= IR_INLINE_OPERANDS; i++)
        assert_ptr_equal(many->operands[i], p);
    const IrInstr *r = m->entry->root;      /* parsed: multiply(a, a) */
    assert_ptr_equal(r->operands, r->inline_operands);
    assert_string_equal(r->operands[1]->name, "a");
    assert_true(((uintptr_t)r % 64) == 0);  /* line-aligned */
    ir_module_free(m);
}

static void typed_attribute_setters(void **state)
{
    (void)state;
    IrModule *m = parse(dead_code);
    IrInstr *p = m->entry->params[0];
    IrInstr *x = ir_instr_new(m, IR_OP_NEGATE, "x", p->shape, 1, &p);
    assert_ptr_equal(x->lists, ir_no_lists);        /* nothing set yet: the shared empty arrays */
    assert_ptr_equal(x->ints, ir_no_ints);
    assert_false(x->ints[IR_INT_CHANNEL_ID].present);
    ir_set_channel_id(m, x, 7);
    assert_ptr_not_equal(x->ints, ir_no_ints);
    assert_true(x->ints[IR_INT_CHANNEL_ID].present);
    assert_int_equal(x->ints[IR_INT_CHANNEL_ID].v, 7);
    assert_false(ir_no_ints[IR_INT_CHANNEL_ID].present);   /* the shared one untouched */
    int64_t dims[1] = { 0 };
    ir_instr_set_list(m, x, IR_LIST_DIMENSIONS, (IrIntList){ true, 1, dims });
    assert_true(x->lists[IR_LIST_DIMENSIONS].present);
    assert_false(ir_no_lists[IR_LIST_DIMENSIONS].present);
    IrInstr *y = ir_instr_new(m, IR_OP_NEGATE, "y", p->shape, 1, &p);
    ir_instr_copy_attrs(m, y, x);
    assert_int_equal(y->ints[IR_INT_CHANNEL_ID].v, 7);
    assert_int_equal(y->lists[IR_LIST_DIMENSIONS].v[0], 0);
    assert_ptr_not_equal(y->lists[IR_LIST_DIMENSIONS].v, dims);     /* values copied */
    ir_set_channel_id(m, y, -1);
    assert_false(y->ints[IR_INT_CHANNEL_ID].present);
    ir_module_free(m);
}


static char *printed(const IrModule *m)
{
    StrBuf b;
    strbuf_init(&b);
    ir_print_module(&b, m);
    return b.s;
}

static bool holds(const IrComputation *c, const IrInstr *x)
{
    for (int i = 0; i < c->n_instrs; i++)
        if (c->instrs[i] == x)
            return true;
    return false;
}

/* A rewrite leaves a removed instruction and a new one at the arena's end;
 * compaction puts the live ones side by side in order, numbered in order,
 * with every reference to them following. */
static void compact_moves_live_instructions_together_in_order(void **state)
{
    (void)state;
    IrModule *m = parse(dead_code);
    IrComputation *e = m->entry;
    IrInstr *a = (IrInstr *)find(e, "a"), *r = e->root;
    IrInstr *ops[2] = { e->params[0], e->params[1] };
    IrInstr *sub = ir_instr_new(m, IR_OP_SUBTRACT, "sub", a->shape, 2, ops);
    ir_computation_insert_before(e, r, sub);
    ir_replace_all_uses(e, a, sub);
    assert_int_equal(ir_remove_dead(e), 4);     /* n1, n2, ar and a */
    ir_computation_build_users(e);
    char *before = printed(m);
    size_t live = 0;
    for (int c = 0; c < m->n_computations; c++)
        live += (size_t)m->computations[c]->n_instrs;

    assert_true(ir_module_compact(m));
    char *after = printed(m);
    assert_string_equal(after, before);
    assert_true(arena_bytes_used(m->instr_arena) <= live * sizeof(IrInstr) + 64);   /* + the first line's alignment */
    const IrInstr *prev = NULL;
    int id = 0;
    for (int c = 0; c < m->n_computations; c++) {
        const IrComputation *comp = m->computations[c];
        for (int i = 0; i < comp->n_instrs; i++) {
            const IrInstr *x = comp->instrs[i];
            if (prev)   /* side by side, in module order */
                assert_true((uintptr_t)x > (uintptr_t)prev && (uintptr_t)x - (uintptr_t)prev < 2 * sizeof *x);
            prev = x;
            assert_int_equal(x->id, id++);
            assert_int_equal(x->n_users, 0);        /* the old lists named old copies */
            assert_null(x->users);
            for (int k = 0; k < x->n_operands; k++)
                assert_true(holds(comp, x->operands[k]));
            if (x->n_operands > 0 && x->n_operands <= IR_INLINE_OPERANDS)
                assert_ptr_equal(x->operands, x->inline_operands);
        }
        assert_true(holds(comp, comp->root));
        for (int k = 0; k < comp->n_params; k++)
            assert_true(holds(comp, comp->params[k]) && comp->params[k]->op == IR_OP_PARAMETER);
    }
    assert_int_equal(m->next_instr_id, id);
    assert_string_equal(e->root->name, "r");
    assert_string_equal(e->root->operands[0]->name, "sub");
    /* Names stay taken, the removed instructions' too. */
    assert_string_not_equal(ir_unique_name(e, "sub"), "sub");
    assert_string_not_equal(ir_unique_name(e, "n1"), "n1");
    Error err = { 0 };
    assert_true(ir_verify_module(m, &err));
    free(before);
    free(after);
    ir_module_free(m);
}

/* Out of memory in the middle of the copy (the fresh arena's second
 * block), the module is exactly as it was, users lists included. */
static void compact_out_of_memory_leaves_the_module_as_it_was(void **state)
{
    (void)state;
    enum { N = 20000 };     /* 2.5 MB of instructions: more than one block */
    StrBuf t;
    strbuf_init(&t);
    strbuf_printf(&t, "HloModule big\nENTRY e {\n  x0 = f32[4] parameter(0)\n");
    for (int i = 1; i < N; i++)
        strbuf_printf(&t, "  x%d = f32[4] negate(x%d)\n", i, i - 1);
    strbuf_printf(&t, "  ROOT r = f32[4] add(x%d, x0)\n}\n", N - 1);
    IrModule *m = parse(t.s);
    strbuf_free(&t);
    IrComputation *e = m->entry;
    ir_computation_build_users(e);
    char *before = printed(m);
    IrInstr **instrs = malloc((size_t)e->n_instrs * sizeof *instrs);
    memcpy(instrs, e->instrs, (size_t)e->n_instrs * sizeof *instrs);

    xmalloc_fail_after(3);      /* the arena, its first block, then this */
    assert_false(ir_module_compact(m));
    xmalloc_fail_after(0);
    char *after = printed(m);
    assert_string_equal(after, before);
    for (int i = 0; i < e->n_instrs; i++) {
        assert_ptr_equal(e->instrs[i], instrs[i]);
        assert_int_equal(e->instrs[i]->n_users, i == e->n_instrs - 1 ? 0 : i == 0 ? 2 : 1);
        if (i > 0 && i < e->n_instrs - 1)
            assert_ptr_equal(e->instrs[i]->users[0], instrs[i + 1]);
    }
    assert_true(ir_module_compact(m));      /* and it still can */
    free(after);
    after = printed(m);
    assert_string_equal(after, before);
    free(before);
    free(after);
    free(instrs);
    ir_module_free(m);
}

/* arena_rewind empties an arena for the next message but keeps its
 * largest chunk: what it hands out next is zeroed and starts at the
 * chunk's start again, and a request bigger than every chunk still gets
 * one of its own. */
static void arena_rewind_keeps_one_chunk_and_zeroes(void **state)
{
    (void)state;
    Arena *a = arena_new(256);
    assert_non_null(a);
    unsigned char *first = arena_alloc(a, 64);
    memset(first, 0xab, 64);
    for (int i = 0; i < 100; i++)       /* several chunks, one of them big */
        memset(arena_alloc(a, i == 50 ? 8192 : 48), 0xcd, i == 50 ? 8192 : 48);
    assert_true(arena_bytes_used(a) > 8192);
    arena_rewind(a);
    assert_int_equal(arena_bytes_used(a), 0);
    unsigned char *p = arena_alloc(a, 4096);    /* fits the big chunk kept */
    assert_non_null(p);
    for (int i = 0; i < 4096; i++)
        assert_int_equal(p[i], 0);
    unsigned char *q = arena_alloc(a, 4096);    /* next to it, not over it */
    assert_true(q >= p + 4096 || q + 4096 <= p);
    arena_rewind(a);
    assert_ptr_equal(arena_alloc(a, 16), p);    /* the kept chunk, from its start */
    assert_non_null(arena_alloc(a, 1 << 20));   /* bigger than any chunk */
    arena_rewind(a);
    arena_rewind(a);                            /* twice, and on an empty arena */
    assert_int_equal(arena_bytes_used(a), 0);
    arena_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(remove_dead_follows_chains_and_keeps_roots_and_parameters),
        cmocka_unit_test(remove_dead_in_a_computation_far_from_the_others_ids),
        cmocka_unit_test(compaction_numbers_in_order),
        cmocka_unit_test(few_operands_are_held_inline),
        cmocka_unit_test(typed_attribute_setters),
        cmocka_unit_test(compact_moves_live_instructions_together_in_order),
        cmocka_unit_test(compact_out_of_memory_leaves_the_module_as_it_was),
        cmocka_unit_test(arena_rewind_keeps_one_chunk_and_zeroes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
