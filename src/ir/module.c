/* module.c: the opcode and attribute tables, and building and editing the
 * IR: modules, computations, instructions, uses, names, replica groups. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

const IrOpInfo ir_op_info[IR_OP_COUNT] = {
#define HLO_OP(E, c, text, arity, flags) [IR_OP_##E] = { text, arity, flags },
#include "opcodes.def"
#undef HLO_OP
};

const char *const ir_list_attr_name[IR_LIST_COUNT] = {
#define IR_ATTR_LIST(E, name) [IR_LIST_##E] = name,
#include "attrs.def"
#undef IR_ATTR_LIST
};
const char *const ir_int_attr_name[IR_INT_COUNT] = {
#define IR_ATTR_INT(E, name) [IR_INT_##E] = name,
#include "attrs.def"
#undef IR_ATTR_INT
};
const char *const ir_bool_attr_name[IR_BOOL_COUNT] = {
#define IR_ATTR_BOOL(E, name) [IR_BOOL_##E] = name,
#include "attrs.def"
#undef IR_ATTR_BOOL
};
const char *const ir_comp_attr_name[IR_COMP_COUNT] = {
#define IR_ATTR_COMP(E, name) [IR_COMP_##E] = name,
#include "attrs.def"
#undef IR_ATTR_COMP
};
const char *const ir_word_attr_name[IR_WORD_COUNT] = {
#define IR_ATTR_WORD(E, name, quoted) [IR_WORD_##E] = name,
#include "attrs.def"
#undef IR_ATTR_WORD
};
const bool ir_word_attr_quoted[IR_WORD_COUNT] = {
#define IR_ATTR_WORD(E, name, quoted) [IR_WORD_##E] = quoted,
#include "attrs.def"
#undef IR_ATTR_WORD
};

/* Editing a module has no error path of its own: an allocation that fails
 * marks the module (ir_module_check_memory reports it), and the edit
 * leaves out what it could not allocate.  The builders take a NULL
 * instruction (one that could not be made) and do nothing. */
void *ir_module_noted(IrModule *m, void *p)
{
    if (!p)
        m->nomem = true;
    return p;
}

bool ir_module_check_memory(const IrModule *m, Error *err)
{
    return !m->nomem || error_nomem(err, (IrLoc){ m->file, 0, 0 });
}

/* ---- Name map: open addressing, FNV-1a, grows at 1/2 load. */

/* Each slot keeps its key's hash: a probe compares hashes before reading a
 * key's text, and growing re-places slots without reading any (on big
 * modules each name read is a trip through memory). */
typedef struct NameSlot { const char *key; uint32_t len; uint32_t hash; void *value; } NameSlot;
struct IrNameMap {
    Arena *arena;
    NameSlot *slots;
    size_t cap, count;
};

/* FNV-1a over 8-byte words, then the tail bytes: the same spread, an
 * eighth of the multiplications. */
static uint32_t hash_name(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 1099511628211ull;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    h ^= h >> 32;
    return (uint32_t)h;
}

IrNameMap *ir_namemap_new(Arena *a)
{
    IrNameMap *map = ARENA_NEW(a, IrNameMap);
    if (!map)
        return NULL;
    map->arena = a;
    map->cap = 64;
    map->slots = ARENA_ARRAY(a, NameSlot, map->cap);
    return map->slots ? map : NULL;
}

static NameSlot *find_slot(NameSlot *slots, size_t cap, const char *name, size_t len, uint32_t hash)
{
    size_t i = hash & (cap - 1);
    while (slots[i].key &&
           !(slots[i].hash == hash && slots[i].len == len && memcmp(slots[i].key, name, len) == 0))
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

void *ir_namemap_get(const IrNameMap *map, const char *name, size_t len)
{
    NameSlot *s = find_slot(map->slots, map->cap, name, len, hash_name(name, len));
    return s->key ? s->value : NULL;
}

static bool namemap_grow(IrNameMap *map)
{
    size_t cap = map->cap * 2;
    NameSlot *slots = ARENA_ARRAY(map->arena, NameSlot, cap);
    if (!slots)
        return false;
    for (size_t i = 0; i < map->cap; i++)
        if (map->slots[i].key) {
            size_t k = map->slots[i].hash & (cap - 1);
            while (slots[k].key)        /* keys are distinct: the first free slot */
                k = (k + 1) & (cap - 1);
            slots[k] = map->slots[i];
        }
    map->slots = slots;
    map->cap = cap;
    return true;
}

void ir_namemap_set(IrNameMap *map, const char *name, void *value)
{
    size_t len = strlen(name);
    NameSlot *s = find_slot(map->slots, map->cap, name, len, hash_name(name, len));
    if (s->key)
        s->value = value;
    else
        ir_namemap_put(map, name, value);
}

void ir_namemap_remap(IrNameMap *map, void *(*f)(const char *key, void *value))
{
    for (size_t i = 0; i < map->cap; i++)
        if (map->slots[i].key)
            map->slots[i].value = f(map->slots[i].key, map->slots[i].value);
}

bool ir_namemap_put(IrNameMap *map, const char *name, void *value)
{
    size_t len = strlen(name);
    uint32_t hash = hash_name(name, len);
    NameSlot *s = find_slot(map->slots, map->cap, name, len, hash);
    if (s->key)
        return false;
    if ((map->count + 1) * 2 > map->cap && namemap_grow(map))
        s = find_slot(map->slots, map->cap, name, len, hash);
    else if (map->count + 2 > map->cap)
        return false;           /* out of memory and full (the probe needs a free slot) */
    *s = (NameSlot){ name, (uint32_t)len, hash, value };
    map->count++;
    return true;
}

/* ---- Opcodes */

/* The slow way, for when the map cannot be made. */
static IrOpcode opcode_by_scan(const char *s, size_t len)
{
    for (int op = 0; op < IR_OP_COUNT; op++)
        if (strlen(ir_op_info[op].name) == len && memcmp(ir_op_info[op].name, s, len) == 0)
            return (IrOpcode)op;
    return IR_OP_COUNT;
}

IrOpcode ir_opcode_from_name(const char *s, size_t len)
{
    static IrNameMap *map;
    static Arena *arena;
    if (!map) {
        arena = arena_new(16 * 1024);
        map = arena ? ir_namemap_new(arena) : NULL;
        for (int op = 0; map && op < IR_OP_COUNT; op++)
            if (!ir_namemap_put(map, ir_op_info[op].name, (void *)(intptr_t)(op + 1)))
                map = NULL;
        if (!map) {             /* out of memory: try again next time */
            arena_free(arena);
            arena = NULL;
            return opcode_by_scan(s, len);
        }
    }
    intptr_t v = (intptr_t)ir_namemap_get(map, s, len);
    return v ? (IrOpcode)(v - 1) : IR_OP_COUNT;
}

const char *ir_opcode_name(IrOpcode op)
{
    return op < IR_OP_COUNT ? ir_op_info[op].name : "?";
}

/* ---- Modules and computations */

IrModule *ir_module_new(const char *name)
{
    Arena *a = arena_new(256 * 1024);
    if (!a)
        return NULL;
    IrModule *m = ARENA_NEW(a, IrModule);
    if (!m) {
        arena_free(a);
        return NULL;
    }
    m->arena = a;
    m->instr_arena = arena_new(256 * 1024);
    if (!m->instr_arena) {
        arena_free(a);
        return NULL;
    }
    m->name = arena_strdup(a, name ? name : "module");
    m->max_channel_id = 0;
    return m;
}

void ir_module_free(IrModule *m)
{
    if (m) {
        arena_free(m->instr_arena);
        arena_free(m->arena);
    }
}

/* Growable arrays live in the module's arena: a grown array abandons the old
 * block to the arena, which at most doubles the space they take. */
void *ir_grow_array(Arena *a, void *old, size_t n_old, size_t n_new, size_t size)
{
    void *p = arena_alloc_array(a, n_new, size);
    if (p && n_old)
        memcpy(p, old, n_old * size);
    return p;
}

IrComputation *ir_computation_new(IrModule *m, const char *name)
{
    IrComputation *c = ARENA_NEW(m->arena, IrComputation);
    if (!c)
        return NULL;
    c->name = arena_strdup(m->arena, name);
    c->module = m;
    c->id = m->next_computation_id++;
    return c->name ? c : NULL;
}

void ir_module_insert_computation(IrModule *m, IrComputation *comp, int pos)
{
    if (!comp)
        return;
    if (m->n_computations == m->cap_computations) {
        int cap = m->cap_computations ? 2 * m->cap_computations : 16;
        IrComputation **grown = ir_module_noted(
            m, ir_grow_array(m->arena, m->computations, (size_t)m->n_computations, (size_t)cap,
                             sizeof *m->computations));
        if (!grown)
            return;
        m->computations = grown;
        m->cap_computations = cap;
    }
    if (pos < 0 || pos > m->n_computations)
        pos = m->n_computations;
    memmove(&m->computations[pos + 1], &m->computations[pos],
            (size_t)(m->n_computations - pos) * sizeof *m->computations);
    m->computations[pos] = comp;
    m->n_computations++;
}

int ir_module_max_computation_id(const IrModule *m)
{
    int n = 0;
    for (int i = 0; i < m->n_computations; i++)
        if (m->computations[i]->id > n)
            n = m->computations[i]->id;
    return n;
}

IrComputation *ir_module_find_computation(const IrModule *m, const char *name)
{
    for (int i = 0; i < m->n_computations; i++)
        if (strcmp(m->computations[i]->name, name) == 0)
            return m->computations[i];
    return NULL;
}

/* ---- Instructions */

IrInstr *ir_instr_new(IrModule *m, IrOpcode op, const char *name, IrShape *shape,
                      int n_operands, IrInstr *const *operands)
{
    IrInstr *instr = name ? arena_alloc_line(m->instr_arena, sizeof(IrInstr)) : NULL;
    if (!instr || !(instr->info = ARENA_NEW(m->arena, IrInstrInfo)) ||
        !(instr->name = arena_strdup(m->arena, name)))
        return ir_module_noted(m, NULL);    /* a NULL name: ir_unique_name ran out */
    instr->op = op;
    instr->shape = shape;
    instr->id = m->next_instr_id++;
    instr->info->n_slice = -1;
    instr->info->async_wrapped = IR_OP_COUNT;
    instr->lists = (IrIntList *)ir_no_lists;
    instr->ints = (IrOptInt *)ir_no_ints;
    instr->n_operands = n_operands;
    if (n_operands > 0) {
        instr->operands = n_operands <= IR_INLINE_OPERANDS
                              ? instr->inline_operands
                              : ARENA_ARRAY(m->arena, IrInstr *, (size_t)n_operands);
        if (!instr->operands)
            return ir_module_noted(m, NULL);
        memcpy(instr->operands, operands, (size_t)n_operands * sizeof *operands);
    }
    return instr;
}

static void *dup_array(IrModule *m, const void *src, size_t n, size_t size)
{
    if (!src || n == 0)
        return NULL;
    void *p = ir_module_noted(m, arena_alloc_array(m->arena, n, size));
    return p ? memcpy(p, src, n * size) : NULL;
}

static void copy_replica_groups(IrModule *m, IrReplicaGroups *dst, const IrReplicaGroups *src)
{
    *dst = *src;
    dst->group_sizes = dup_array(m, src->group_sizes, (size_t)src->n_groups, sizeof(int));
    dst->groups = dup_array(m, src->groups, (size_t)src->n_groups, sizeof(int64_t *));
    if (!dst->groups || !dst->group_sizes)
        dst->n_groups = 0;      /* out of memory (noted) or none */
    for (int g = 0; g < dst->n_groups; g++)
        dst->groups[g] = dup_array(m, src->groups[g], (size_t)src->group_sizes[g], sizeof(int64_t));
    dst->iota_dims = dup_array(m, src->iota_dims, (size_t)src->n_iota_dims, sizeof(int64_t));
    dst->iota_perm = dup_array(m, src->iota_perm, (size_t)src->n_iota_dims, sizeof(int64_t));
}

const IrIntList ir_no_lists[IR_LIST_COUNT] = { { false, 0, NULL } };
const IrOptInt ir_no_ints[IR_INT_COUNT] = { { false, 0 } };

static IrIntList *own_lists(IrModule *m, IrInstr *instr)
{
    IrIntList *lists = instr->lists != ir_no_lists
                           ? instr->lists
                           : ir_module_noted(m, ARENA_ARRAY(m->arena, IrIntList, IR_LIST_COUNT));
    if (lists)
        instr->lists = lists;
    return lists;
}

static IrOptInt *own_ints(IrModule *m, IrInstr *instr)
{
    IrOptInt *ints = instr->ints != ir_no_ints
                         ? instr->ints
                         : ir_module_noted(m, ARENA_ARRAY(m->arena, IrOptInt, IR_INT_COUNT));
    if (ints)
        instr->ints = ints;
    return ints;
}

void ir_instr_set_list(IrModule *m, IrInstr *instr, IrListAttr k, IrIntList v)
{
    IrIntList *lists = instr ? own_lists(m, instr) : NULL;
    if (lists)
        lists[k] = v;
}

void ir_instr_set_int(IrModule *m, IrInstr *instr, IrIntAttr k, int64_t v)
{
    IrOptInt *ints = instr ? own_ints(m, instr) : NULL;
    if (ints)
        ints[k] = (IrOptInt){ true, v };
}

/* Typed lists: src's, each with its own copy of the values. */
static void copy_lists(IrModule *m, IrInstr *dst, const IrInstr *src)
{
    IrIntList *lists = own_lists(m, dst);
    for (int i = 0; lists && i < IR_LIST_COUNT; i++) {
        lists[i] = src->lists[i];
        lists[i].v = dup_array(m, src->lists[i].v, (size_t)src->lists[i].n, sizeof(int64_t));
        if (!lists[i].v)
            lists[i].n = 0;     /* out of memory (noted) or empty */
    }
}

void ir_instr_copy_attrs(IrModule *m, IrInstr *dst, const IrInstr *src)
{
    if (!dst)
        return;
    IrOptInt *ints;
    dst->info->parameter_number = src->info->parameter_number;
    dst->info->literal = src->info->literal;
    dst->info->async_wrapped = src->info->async_wrapped;
    dst->info->async_is_done = src->info->async_is_done;
    dst->info->async_is_update = src->info->async_is_update;
    if (src->lists != ir_no_lists || dst->lists != ir_no_lists)
        copy_lists(m, dst, src);
    if ((src->ints != ir_no_ints || dst->ints != ir_no_ints) && (ints = own_ints(m, dst)))
        memcpy(ints, src->ints, IR_INT_COUNT * sizeof *src->ints);
    memcpy(dst->info->bools, src->info->bools, sizeof dst->info->bools);
    memcpy(dst->info->comps, src->info->comps, sizeof dst->info->comps);
    memcpy(dst->info->words, src->info->words, sizeof dst->info->words);
    dst->info->n_slice = src->info->n_slice;
    dst->info->slice = dup_array(m, src->info->slice, src->info->n_slice > 0 ? (size_t)src->info->n_slice : 0, sizeof(IrSliceDim));
    dst->info->has_padding = src->info->has_padding;
    dst->info->n_padding = src->info->n_padding;
    dst->info->padding = dup_array(m, src->info->padding, (size_t)src->info->n_padding, sizeof(IrPadDim));
    dst->info->has_window = src->info->has_window;
    dst->info->n_window = src->info->n_window;
    dst->info->window = dup_array(m, src->info->window, (size_t)src->info->n_window, sizeof(IrWindowDim));
    copy_replica_groups(m, &dst->info->replica_groups, &src->info->replica_groups);
    dst->info->has_source_target_pairs = src->info->has_source_target_pairs;
    dst->info->n_source_target_pairs = src->info->n_source_target_pairs;
    dst->info->source_target_pairs = dup_array(m, src->info->source_target_pairs,
                                         (size_t)src->info->n_source_target_pairs, 2 * sizeof(int64_t));
    dst->info->direction = src->info->direction;
    dst->info->compare_type = src->info->compare_type;
    dst->info->n_branches = src->info->n_branches;
    dst->info->branches = dup_array(m, src->info->branches, (size_t)src->info->n_branches, sizeof(IrComputation *));
    dst->info->n_raw_attrs = src->info->n_raw_attrs;
    dst->info->raw_attrs = dup_array(m, src->info->raw_attrs, (size_t)src->info->n_raw_attrs, sizeof(IrRawAttr));
}

static bool instrs_reserve(IrComputation *comp, int extra)
{
    if (comp->n_instrs + extra <= comp->cap_instrs)
        return true;
    int cap = comp->cap_instrs ? comp->cap_instrs : 16;
    while (cap < comp->n_instrs + extra)
        cap *= 2;
    IrInstr **instrs = ir_grow_array(comp->module->arena, comp->instrs, (size_t)comp->n_instrs,
                                     (size_t)cap, sizeof *comp->instrs);
    if (!ir_module_noted(comp->module, instrs))
        return false;
    comp->instrs = instrs;
    comp->cap_instrs = cap;
    return true;
}

static void note_name(IrComputation *comp, IrInstr *instr)
{
    if (comp->names)
        ir_namemap_put(comp->names, instr->name, instr);
    if (instr->op != IR_OP_PARAMETER)
        return;
    int k = (int)instr->info->parameter_number;
    if (k >= comp->n_params) {
        IrInstr **params = ir_grow_array(comp->module->arena, comp->params, (size_t)comp->n_params,
                                         (size_t)k + 1, sizeof *comp->params);
        if (!ir_module_noted(comp->module, params))
            return;
        comp->params = params;
        comp->n_params = k + 1;
    }
    comp->params[k] = instr;
}

void ir_computation_append(IrComputation *comp, IrInstr *instr)
{
    if (!instr || !instrs_reserve(comp, 1))
        return;
    comp->instrs[comp->n_instrs++] = instr;
    instr->parent = comp;
    note_name(comp, instr);
    if (instr->shape && instr->ints[IR_INT_CHANNEL_ID].present &&
        instr->ints[IR_INT_CHANNEL_ID].v > comp->module->max_channel_id)
        comp->module->max_channel_id = instr->ints[IR_INT_CHANNEL_ID].v;
}

void ir_computation_insert_before(IrComputation *comp, IrInstr *before, IrInstr *instr)
{
    int pos = comp->n_instrs;
    for (int i = 0; i < comp->n_instrs; i++)
        if (comp->instrs[i] == before) {
            pos = i;
            break;
        }
    if (!instr || !instrs_reserve(comp, 1))
        return;
    memmove(&comp->instrs[pos + 1], &comp->instrs[pos],
            (size_t)(comp->n_instrs - pos) * sizeof *comp->instrs);
    comp->instrs[pos] = instr;
    comp->n_instrs++;
    instr->parent = comp;
    note_name(comp, instr);
}

void ir_replace_all_uses(IrComputation *comp, IrInstr *from, IrInstr *to)
{
    for (int i = 0; i < comp->n_instrs; i++) {
        IrInstr *instr = comp->instrs[i];
        if (instr == to)
            continue;
        for (int k = 0; k < instr->n_operands; k++)
            if (instr->operands[k] == from)
                instr->operands[k] = to;
        for (int k = 0; k < instr->n_control_predecessors; k++)
            if (instr->control_predecessors[k] == from)
                instr->control_predecessors[k] = to;
    }
    if (comp->root == from)
        comp->root = to;
}

void ir_computation_build_users(IrComputation *comp)
{
    Arena *a = comp->module->arena;
    for (int i = 0; i < comp->n_instrs; i++)
        comp->instrs[i]->n_users = 0;
    for (int i = 0; i < comp->n_instrs; i++)
        for (int k = 0; k < comp->instrs[i]->n_operands; k++)
            comp->instrs[i]->operands[k]->n_users++;
    bool ok = true;
    for (int i = 0; i < comp->n_instrs; i++) {
        IrInstr *instr = comp->instrs[i];
        instr->users = instr->n_users && ok ? ARENA_ARRAY(a, IrInstr *, (size_t)instr->n_users) : NULL;
        ok &= ir_module_noted(comp->module, instr->users || !instr->n_users ? comp : NULL) != NULL;
        instr->n_users = 0;
    }
    for (int i = 0; i < comp->n_instrs && !ok; i++)
        comp->instrs[i]->users = NULL;      /* out of memory: no users lists */
    for (int i = 0; i < comp->n_instrs && ok; i++) {
        IrInstr *user = comp->instrs[i];
        for (int k = 0; k < user->n_operands; k++) {
            IrInstr *op = user->operands[k];
            /* An instruction using the same operand twice is one user. */
            if (op->n_users == 0 || op->users[op->n_users - 1] != user)
                op->users[op->n_users++] = user;
        }
    }
}

static bool is_removable(const IrComputation *comp, const IrInstr *instr)
{
    return instr != comp->root && instr->op != IR_OP_PARAMETER &&
           !(ir_op_info[instr->op].flags & OPF_SIDE_EFFECT);
}

/* Collective ops are marked side-effecting so a module's structure is kept
 * as written, but a collective whose result nobody uses is dead code that a
 * rewrite left behind: it may go. */
static bool is_dead_collective(const IrComputation *comp, const IrInstr *instr)
{
    return instr != comp->root && (ir_op_info[instr->op].flags & OPF_COLLECTIVE);
}

/* A worklist over positions: uses[id - lo] counts the operand and
 * control-predecessor slots that refer to an instruction; removing one
 * releases its operands, which may become removable in turn.
 * O(instructions + edges), and each instruction is read once (plus the
 * removed ones again): on big modules every read is a trip through memory. */
typedef struct DeadScan {
    const IrComputation *comp;
    int lo, span;
    int *uses;              /* by id - lo */
    int *pos;               /* by id - lo: position in comp->instrs */
    int *work, n_work;      /* positions */
} DeadScan;

static void release(DeadScan *d, const IrInstr *dep)
{
    int k = dep->id - d->lo;
    if (dep->parent == d->comp && !dep->dead && k >= 0 && k < d->span && --d->uses[k] == 0)
        d->work[d->n_work++] = d->pos[k];
}

int ir_remove_dead(IrComputation *comp)
{
    int n = comp->n_instrs;
    DeadScan d = { .comp = comp };
    d.span = ir_computation_id_span(comp, &d.lo);
    d.uses = xcalloc_try((size_t)d.span + 1, sizeof *d.uses);
    d.pos = xmalloc_try(((size_t)d.span + 1) * sizeof *d.pos);
    d.work = xmalloc_try(((size_t)n + 1) * sizeof *d.work);
    int *ids = xmalloc_try(((size_t)n + 1) * sizeof *ids);
    char *gone = xcalloc_try((size_t)n + 1, 1);
    int removed = 0;
    if (!d.uses || !d.pos || !d.work || !ids || !gone) {
        ir_module_noted(comp->module, NULL);
        removed = -1;
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const IrInstr *instr = comp->instrs[i];
        ids[i] = instr->id;
        d.pos[instr->id - d.lo] = i;
        int n_deps = instr->n_operands + instr->n_control_predecessors;
        for (int k = 0; k < n_deps; k++) {
            const IrInstr *dep = k < instr->n_operands ? instr->operands[k]
                                                       : instr->control_predecessors[k - instr->n_operands];
            if (dep->parent == comp && !dep->dead && dep->id - d.lo >= 0 && dep->id - d.lo < d.span)
                d.uses[dep->id - d.lo]++;
        }
    }
    for (int i = 0; i < n; i++)
        if (d.uses[ids[i] - d.lo] == 0)
            d.work[d.n_work++] = i;
    while (d.n_work > 0) {
        int i = d.work[--d.n_work];
        IrInstr *instr = comp->instrs[i];
        if (gone[i] || !(is_removable(comp, instr) || is_dead_collective(comp, instr)))
            continue;
        gone[i] = 1;
        instr->dead = true;
        removed++;
        for (int k = 0; k < instr->n_operands; k++)
            release(&d, instr->operands[k]);
        for (int k = 0; k < instr->n_control_predecessors; k++)
            release(&d, instr->control_predecessors[k]);
    }
    if (removed > 0) {
        int kept = 0;
        for (int i = 0; i < n; i++)
            if (!gone[i])
                comp->instrs[kept++] = comp->instrs[i];
        comp->n_instrs = kept;
    }
done:
    free(d.uses);
    free(d.pos);
    free(d.work);
    free(ids);
    free(gone);
    return removed;
}

int ir_module_remove_dead(IrModule *m)
{
    int removed = 0;
    for (int c = 0; c < m->n_computations; c++) {
        int n = ir_remove_dead(m->computations[c]);
        if (n < 0)
            return -1;
        removed += n;
    }
    return removed;
}

void ir_computation_remove(IrComputation *comp, IrInstr *instr)
{
    int kept = 0;
    for (int i = 0; i < comp->n_instrs; i++)
        if (comp->instrs[i] != instr)
            comp->instrs[kept++] = comp->instrs[i];
    comp->n_instrs = kept;
    instr->dead = true;
}

IrInstr *ir_computation_find(const IrComputation *comp, const char *name)
{
    for (int i = 0; i < comp->n_instrs; i++)
        if (strcmp(comp->instrs[i]->name, name) == 0)
            return comp->instrs[i];
    return NULL;
}

void ir_module_drop_entry_layout(IrModule *m)
{
    int kept = 0;
    for (int i = 0; i < m->n_header_attrs; i++)
        if (strcmp(m->header_attrs[i].name, "entry_computation_layout") != 0)
            m->header_attrs[kept++] = m->header_attrs[i];
    m->n_header_attrs = kept;
}

int ir_computation_id_span(const IrComputation *comp, int *lo)
{
    /* A computation holding a good part of the module: the module's whole
     * range, without a pass over its instructions (on big modules every
     * such pass is a trip through memory).  A small one: its own span. */
    int all = comp->module->next_instr_id;
    if (comp->n_instrs >= all / 4) {
        *lo = 0;
        return all;
    }
    int min = 0, max = -1;
    for (int i = 0; i < comp->n_instrs; i++) {
        int id = comp->instrs[i]->id;
        if (i == 0 || id < min)
            min = id;
        if (id > max)
            max = id;
    }
    *lo = min;
    return max - min + 1;
}

const char *ir_unique_name(IrComputation *comp, const char *base)
{
    IrModule *m = comp->module;
    Arena *a = m->arena;
    if (!comp->names) {
        if (!(comp->names = ir_module_noted(m, ir_namemap_new(a))))
            return NULL;
        for (int i = 0; i < comp->n_instrs; i++)
            ir_namemap_put(comp->names, comp->instrs[i]->name, comp->instrs[i]);
    }
    /* The next suffix to try for each base, so that many names from one base
     * cost one probe each rather than a count from 1 every time; a base
     * that has one was taken then and still is (names stay taken), so the
     * name map, big on big modules, is not probed for it again. */
    size_t len = strlen(base);
    intptr_t known = comp->name_suffixes ? (intptr_t)ir_namemap_get(comp->name_suffixes, base, len) : 0;
    if (!known && !ir_namemap_get(comp->names, base, len))
        return ir_module_noted(m, arena_strndup(a, base, len));
    if (!comp->name_suffixes && !(comp->name_suffixes = ir_module_noted(m, ir_namemap_new(a))))
        return NULL;
    char buf[256];
    const char *key;
    intptr_t k;
    for (k = known ? known : 1;; k++) {
        snprintf(buf, sizeof buf, "%.200s.%ld", base, (long)k);
        if (!ir_namemap_get(comp->names, buf, strlen(buf)))
            break;
    }
    if (known)
        ir_namemap_set(comp->name_suffixes, base, (void *)(k + 1));    /* the key is there: kept */
    else if ((key = ir_module_noted(m, arena_strndup(a, base, len))))
        ir_namemap_put(comp->name_suffixes, key, (void *)(k + 1));
    return ir_module_noted(m, arena_strdup(a, buf));
}

/* ---- Raw attributes and channel ids */

const char *ir_raw_attr_get(const IrInstr *instr, const char *name)
{
    for (int i = 0; i < instr->info->n_raw_attrs; i++)
        if (strcmp(instr->info->raw_attrs[i].name, name) == 0)
            return instr->info->raw_attrs[i].value;
    return NULL;
}

void ir_raw_attr_set(IrModule *m, IrInstr *instr, const char *name, const char *value)
{
    if (!instr)
        return;
    const char *copy = ir_module_noted(m, arena_strdup(m->arena, value));
    for (int i = 0; copy && i < instr->info->n_raw_attrs; i++)
        if (strcmp(instr->info->raw_attrs[i].name, name) == 0) {
            instr->info->raw_attrs[i].value = copy;
            return;
        }
    size_t n = (size_t)instr->info->n_raw_attrs + 1;
    IrRawAttr *attrs = copy ? ir_module_noted(m, ARENA_ARRAY(m->arena, IrRawAttr, n)) : NULL;
    const char *key = attrs ? ir_module_noted(m, arena_strdup(m->arena, name)) : NULL;
    if (!key)
        return;
    if (instr->info->n_raw_attrs)
        memcpy(attrs, instr->info->raw_attrs, (size_t)instr->info->n_raw_attrs * sizeof *attrs);
    attrs[instr->info->n_raw_attrs].name = key;
    attrs[instr->info->n_raw_attrs].value = copy;
    instr->info->raw_attrs = attrs;
    instr->info->n_raw_attrs++;
}

void ir_set_channel_id(IrModule *m, IrInstr *instr, int64_t id)
{
    if (!instr)
        return;
    if (id >= 0)
        ir_instr_set_int(m, instr, IR_INT_CHANNEL_ID, id);
    else if (instr->ints[IR_INT_CHANNEL_ID].present)
        instr->ints[IR_INT_CHANNEL_ID] = (IrOptInt){ false, 0 };
    if (id > m->max_channel_id)
        m->max_channel_id = id;
}

int64_t ir_fresh_channel_id(const IrModule *m)
{
    return m->max_channel_id + 1;
}

/* ---- Replica groups */

/* [G,S]<=[dims]T(perm): iota 0..G*S-1, reshaped to dims, transposed by perm,
 * flattened, cut into G groups of S. */
/* out[i] for the row-major walk of src (dims[0..nd), NULL: the iota
 * 0, 1, ...) seen through the transpose perm: out has dims dims[perm[k]]. */
static void transpose_flatten(const int64_t *src, int nd, const int64_t *dims, const int *perm,
                              int64_t total, int64_t *out)
{
    int64_t coord[IR_MAX_RANK] = {0}, stride[IR_MAX_RANK];
    for (int k = nd - 1, s = 1; k >= 0; k--) {
        stride[k] = s;
        s *= (int)dims[k];
    }
    for (int64_t i = 0; i < total; i++) {
        int64_t v = 0;
        for (int k = 0; k < nd; k++)
            v += coord[k] * stride[perm[k]];
        out[i] = src ? src[v] : v;
        for (int k = nd - 1; k >= 0; k--) {
            if (++coord[k] < dims[perm[k]])
                break;
            coord[k] = 0;
        }
    }
}

/* Cuts flat (total ids) into groups of size each. */
static bool set_groups(Arena *a, IrReplicaGroups *g, int64_t *flat, int64_t total, int64_t size, IrLoc loc,
                       Error *err)
{
    int64_t n = total / size;
    int *sizes = ARENA_ARRAY(a, int, (size_t)n);
    int64_t **groups = ARENA_ARRAY(a, int64_t *, (size_t)n);
    if (!sizes || !groups)
        return error_set(err, ERR_NOMEM, loc, "out of memory");
    for (int64_t k = 0; k < n; k++) {
        groups[k] = flat + k * size;
        sizes[k] = (int)size;
    }
    g->n_groups = (int)n;
    g->groups = groups;
    g->group_sizes = sizes;
    return true;
}

static bool expand_iota(Arena *a, IrReplicaGroups *g, IrLoc loc, Error *err)
{
    int64_t total = g->iota_groups * g->iota_size, prod = 1;
    int nd = g->n_iota_dims;
    for (int i = 0; i < nd && prod <= (1 << 24); i++)
        prod *= g->iota_dims[i] > 0 ? g->iota_dims[i] : (1 << 25);
    if (g->iota_groups <= 0 || g->iota_size <= 0 || g->iota_groups > (1 << 24) || g->iota_size > (1 << 24) ||
        prod != total || total > (1 << 24))
        return error_set(err, ERR_SYNTAX, loc,
                         "replica_groups: [%lld,%lld] does not match the reshape dims",
                         (long long)g->iota_groups, (long long)g->iota_size);
    if (nd > IR_MAX_RANK)
        return error_set(err, ERR_SYNTAX, loc, "replica_groups: too many reshape dims");
    int perm[IR_MAX_RANK];
    for (int k = 0; k < nd; k++)
        perm[k] = g->iota_perm ? (int)g->iota_perm[k] : k;
    int64_t *flat = ARENA_ARRAY(a, int64_t, (size_t)total);
    if (!flat)
        return error_set(err, ERR_NOMEM, loc, "out of memory");
    transpose_flatten(NULL, nd, g->iota_dims, perm, total, flat);
    return set_groups(a, g, flat, total, g->iota_size, loc, err);
}

/* The reshape of one mesh axis of size full that its refs (n of them, all
 * on this axis) need: dims appended to dims[*nd], the grouped ones (in the
 * order the refs are listed) to grouped[*ng].  As XLA's
 * MeshAxesReplicaGroupList: a whole axis is one grouped dim; one sub-axis
 * :(pre)size splits it into [pre, size, rest] and groups the middle; several
 * sub-axes, taken by pre_size, get padding dims between them. */
static bool mesh_axis_dims(const IrMeshAxisRef *const *refs, int n, int64_t full, int64_t *dims, int *nd,
                           int *grouped, int *ng)
{
    if (n == 1 && refs[0]->size == 0) {
        grouped[(*ng)++] = *nd;
        dims[(*nd)++] = full;
        return true;
    }
    int order[IR_MAX_RANK];
    for (int i = 0; i < n; i++) {
        if (refs[i]->size == 0)
            return false;           /* a whole axis beside a part of it */
        order[i] = i;
    }
    for (int i = 1; i < n; i++)     /* insertion sort by pre_size */
        for (int j = i; j > 0 && refs[order[j]]->pre_size < refs[order[j - 1]]->pre_size; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    int64_t prefix = 1;
    int at[IR_MAX_RANK];
    for (int i = 0; i < n; i++) {
        const IrMeshAxisRef *r = refs[order[i]];
        if (r->pre_size % prefix != 0 || *nd + 2 > IR_MAX_RANK)
            return false;           /* overlapping sub-axes */
        if (r->pre_size != prefix) {
            dims[(*nd)++] = r->pre_size / prefix;
            prefix = r->pre_size;
        }
        at[order[i]] = *nd;
        dims[(*nd)++] = r->size;
        prefix *= r->size;
    }
    if (full % prefix != 0 || *nd + 1 > IR_MAX_RANK)
        return false;
    if (prefix != full)
        dims[(*nd)++] = full / prefix;
    for (int i = 0; i < n; i++)
        grouped[(*ng)++] = at[i];
    return true;
}

static bool expand_mesh(Arena *a, IrReplicaGroups *g, IrLoc loc, Error *err)
{
    int64_t total = 1, size = 1;
    for (int i = 0; i < g->n_mesh_axes; i++)
        total *= g->mesh_axis_sizes[i];
    int64_t dims[IR_MAX_RANK];
    int grouped[IR_MAX_RANK], nd = 0, ng = 0;
    for (int ax = 0; ax < g->n_mesh_axes; ax++) {
        const IrMeshAxisRef *refs[IR_MAX_RANK];
        int n = 0;
        for (int r = 0; r < g->n_mesh_refs && n < IR_MAX_RANK; r++)
            if (g->mesh_refs[r].axis == ax)
                refs[n++] = &g->mesh_refs[r];
        int64_t full = g->mesh_axis_sizes[ax];
        bool ok = true;
        if (n == 0 && nd < IR_MAX_RANK)
            dims[nd++] = full;
        else
            ok = n > 0 && mesh_axis_dims(refs, n, full, dims, &nd, grouped, &ng);
        if (!ok)
            return error_set(err, ERR_SYNTAX, loc, "replica_groups: the axes of %s overlap or do not divide its axis %d",
                             g->mesh_text, ax);
    }
    for (int r = 0; r < g->n_mesh_refs; r++)
        size *= g->mesh_refs[r].size ? g->mesh_refs[r].size : g->mesh_axis_sizes[g->mesh_refs[r].axis];
    if (size < 2)
        return error_set(err, ERR_SYNTAX, loc, "replica_groups: %s has groups of one device", g->mesh_text);
    int perm[IR_MAX_RANK], np = 0;
    for (int d = 0; d < nd; d++) {
        bool in_group = false;
        for (int k = 0; k < ng; k++)
            in_group |= grouped[k] == d;
        if (!in_group)
            perm[np++] = d;
    }
    for (int k = 0; k < ng; k++)
        perm[np++] = grouped[k];
    int64_t *flat = ARENA_ARRAY(a, int64_t, (size_t)total);
    if (!flat)
        return error_set(err, ERR_NOMEM, loc, "out of memory");
    transpose_flatten(g->mesh_device_ids, nd, dims, perm, total, flat);
    return set_groups(a, g, flat, total, size, loc, err);
}

bool ir_replica_groups_expand(Arena *a, IrReplicaGroups *g, IrLoc loc, Error *err)
{
    if (g->form == IR_GROUPS_IOTA)
        return expand_iota(a, g, loc, err);
    if (g->form == IR_GROUPS_MESH)
        return expand_mesh(a, g, loc, err);
    return true;
}

bool ir_replica_groups_equal(const IrReplicaGroups *a, const IrReplicaGroups *b)
{
    if (a->n_groups != b->n_groups)
        return false;
    for (int g = 0; g < a->n_groups; g++) {
        if (a->group_sizes[g] != b->group_sizes[g])
            return false;
        if (memcmp(a->groups[g], b->groups[g], (size_t)a->group_sizes[g] * sizeof(int64_t)))
            return false;
    }
    return true;
}

int ir_instr_called(const IrInstr *instr, IrComputation **out, int max)
{
    int n = 0;
    for (int i = 0; i < IR_COMP_COUNT; i++)
        if (instr->info->comps[i] && n < max)
            out[n++] = instr->info->comps[i];
    for (int i = 0; i < instr->info->n_branches && n < max; i++)
        out[n++] = instr->info->branches[i];
    return n;
}
