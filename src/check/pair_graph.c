/* pair_graph.c: a checked pair drawn (hlo-check --graph, check.h).  One
 * picture of both modules: what they compute alike is drawn once, faded;
 * each region where they differ (local_regions.c) is a box holding its two
 * versions side by side, before's instructions on one fill and after's on
 * another, labelled with its verdict when --local checked it; the values
 * both versions hand on meet at the instructions that read them.  The first
 * instruction whose values differ (locate.c) has a red border and its two
 * values; the first differing output and, with --prove, the two
 * expressions head the picture.  Large computations are cut to the
 * neighbourhood of the regions (ir_graph_pick). */
#include "check_internal.h"
#include "coll.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_NODES = 300 };

#define FILL_BEFORE "#f4a582"
#define FILL_AFTER "#92c5de"
#define EDGE_BEFORE "#b2182b"
#define EDGE_AFTER "#2166ac"
#define MARK_FIRST "#d7191c"
#define FADED "color=\"#bbbbbb\", fontcolor=\"#999999\""

typedef struct Draw {
    FILE *f;
    const IrModule *m[2];
    const CheckPairMap *map;
    const CheckPicture *pic;
    const CheckLocated *loc;
    char part[2][128];          /* --prove: the instructions where the two expressions part */
    bool *shown;                /* [region]: drawn (--local leaves out the equivalent ones) */
} Draw;

/* 1 + the drawn region holding instruction id of side s, 0: none. */
static int region_of(const Draw *d, int s, int id)
{
    int r = d->map->region_of[s][id];
    return r && d->shown[r - 1] ? r : 0;
}

/* ---- Labels */

static const char *verdict_text(const Draw *d, int r, const char **color)
{
    const CheckLocal *l = d->pic->local;
    const CheckReport *rep = d->pic->rep;
    *color = "#666666";
    if ((!l || !l->results) && rep && check_region_holds_site(&d->map->regions[r], rep->sites, rep->n_sites)) {
        *color = "#e66101";
        return "an accumulation type changed here";
    }
    if (!l || !l->results)
        return "where the modules differ";
    switch (l->results[r].verdict) {
    case CHECK_REGION_EQUIVALENT:
        *color = "#1a9641";
        return "equivalent";
    case CHECK_REGION_DIFFERS:
        *color = MARK_FIRST;
        return "DIFFERS on free inputs";
    case CHECK_REGION_PRECISION:
        *color = "#e66101";
        return "accumulation type changed: judged on the whole pair";
    case CHECK_REGION_NOT_RUN:
        break;
    }
    switch (l->results[r].not_run) {
    case CHECK_NOT_RUN_P2P:
        return "NOT RUN: holds send / recv";
    case CHECK_NOT_RUN_RANKS:
        return "NOT RUN: needs more ranks";
    case CHECK_NOT_RUN_MEMORY:
        return "NOT RUN: needs more memory";
    case CHECK_RAN:
        break;
    }
    return l->region && l->region != r + 1 ? "not checked (--region)" : "not checked";
}

/* ", run 3" for execution 2 (from 0), in a static buffer. */
static const char *ordinal_run(int execution)
{
    static char text[32];
    snprintf(text, sizeof text, ", run %d", execution + 1);
    return text;
}

/* The note under instruction x of side s: the first difference's value. */
static void first_note(const Draw *d, int s, const IrInstr *x, char *out, size_t n)
{
    out[0] = 0;
    const CheckLocated *loc = d->loc;
    if (loc && loc->found && x->id == (s ? loc->after_id : loc->before_id))
        snprintf(out, n, "FIRST DIFFERENCE%s: rank %d%s %s = %s",
                 loc->free_inputs ? " (on free inputs)" : loc->by_design ? " (the accumulation changed)"
                 : loc->output == -2 ? " (same name in both)" : "", loc->rank,
                 loc->execution ? ordinal_run(loc->execution) : "", loc->where[0] ? loc->where : "",
                 s ? loc->after : loc->before);
    if (d->part[s][0] && strcmp(d->part[s], x->name) == 0)
        snprintf(out + strlen(out), n - strlen(out), "%sthe proof's expressions part here", out[0] ? "\n" : "");
}

static void put_node(const Draw *d, int s, const IrInstr *x, const char *attrs)
{
    char id[32], note[400], all[256];
    snprintf(id, sizeof id, "%c%d", s ? 'a' : 'b', x->id);
    first_note(d, s, x, note, sizeof note);
    snprintf(all, sizeof all, "%s%s", attrs, note[0] ? ", penwidth=3, color=\"" MARK_FIRST "\"" : "");
    ir_graph_node(d->f, id, x, note, all);
}

/* text cut into lines of about width characters, escaped for a label. */
static void wrap(StrBuf *b, const char *text, int width)
{
    int col = 0;
    for (const char *p = text; *p; p++) {
        if (col >= width && (*p == ' ' || *p == ',')) {
            strbuf_putc(b, *p);
            strbuf_printf(b, "\\l    ");
            col = 4;
            continue;
        }
        if (*p == '"' || *p == '\\')
            strbuf_putc(b, '\\');
        strbuf_putc(b, (unsigned char)*p < ' ' ? ' ' : *p);
        col++;
    }
    strbuf_printf(b, "\\l");
}

static void title(const Draw *d)
{
    const CheckPicture *pic = d->pic;
    const CheckReport *rep = pic->rep;
    StrBuf b, line;
    strbuf_init(&b);
    strbuf_init(&line);
    strbuf_printf(&line, "%s  vs  %s", pic->before_name, pic->after_name);
    wrap(&b, line.s, 100);
    line.len = 0;
    if (d->map->n_regions == 0)
        strbuf_printf(&line, "no instruction differs: the two modules compute the same values the same way");
    else
        strbuf_printf(&line, "%d region%s where the modules differ", d->map->n_regions,
                      d->map->n_regions == 1 ? "" : "s");
    int hidden = 0;
    for (int r = 0; r < d->map->n_regions; r++)
        hidden += !d->shown[r];
    if (hidden)
        strbuf_printf(&line, ", %d of them not drawn (%s)", hidden,
                      d->pic->local && d->pic->local->region ? "--region" : "equivalent by --local");
    if (rep)
        strbuf_printf(&line, "; checked: %s", rep->equivalent   ? "EQUIVALENT"
                                              : rep->by_accuracy ? "LESS ACCURATE (judged by accuracy)"
                                                                 : "NOT EQUIVALENT");
    wrap(&b, line.s, 100);
    if (rep && rep->diff.found) {
        line.len = 0;
        strbuf_printf(&line, "first output difference: trial %d, rank %d, output %d %s: before %s, after %s",
                      rep->diff.trial, rep->diff.rank, rep->diff.output, rep->diff.where, rep->diff.before,
                      rep->diff.after);
        wrap(&b, line.s, 100);
    }
    if (d->loc && d->loc->found) {
        line.len = 0;
        const IrInstr *xb = check_instr_by_id(d->m[0], d->loc->before_id), *xa = check_instr_by_id(d->m[1], d->loc->after_id);
        strbuf_printf(&line, "first instruction whose values differ (red border)%s: before %s, after %s",
                      d->loc->by_design ? ", bitwise: where an accumulation type changed, as nothing else differs"
                      : d->loc->beside_precision ? ", bitwise, leaving out what reads a reduction whose accumulation "
                                                   "type changed"
                      : d->loc->free_inputs ? ", in its region's own check on free inputs" : "",
                      xb ? xb->name : "?", xa ? xa->name : "?");
        wrap(&b, line.s, 100);
    }
    const CheckProof *p = rep ? &rep->proof : NULL;
    if (p && p->differs) {
        line.len = 0;
        strbuf_printf(&line, "proof: output %d %s on rank %d: before %s", p->output, p->where, p->rank,
                      p->before_expr);
        wrap(&b, line.s, 100);
        line.len = 0;
        strbuf_printf(&line, "after %s", p->after_expr);
        wrap(&b, line.s, 100);
        line.len = 0;
        strbuf_printf(&line, "they part at before %s / after %s", p->before_at, p->after_at);
        wrap(&b, line.s, 100);
    }
    fprintf(d->f, "  labelloc=t; labeljust=l; fontsize=14;\n  label=\"%s\";\n", b.s ? b.s : "");
    strbuf_free(&b);
    strbuf_free(&line);
}

/* ---- One computation pair: its regions and their neighbourhood */

typedef struct Comp {
    const IrComputation *c[2];
    bool *draw[2];              /* [side][position]: drawn as a node of that side */
    int *pos[2];                /* [side][instr id]: position + 1 in c[side], 0: elsewhere */
} Comp;

/* The before instruction x of after's computation stands for, or NULL. */
static const IrInstr *alias(const Draw *d, const Comp *k, const IrInstr *x)
{
    int b = d->map->before_of[x->id] - 1;
    if (b < 0 || !k->pos[0][b])
        return NULL;
    return k->c[0]->instrs[k->pos[0][b] - 1];
}

/* The node an instruction of side s is drawn as ("b12", "a7"); false when
 * it is not drawn. */
static bool node_id(const Draw *d, const Comp *k, int s, const IrInstr *x, char *out, size_t n)
{
    int p = k->pos[s][x->id] - 1;
    if (p < 0)
        return false;
    if (k->draw[s][p]) {
        snprintf(out, n, "%c%d", s ? 'a' : 'b', x->id);
        return true;
    }
    const IrInstr *b = s ? alias(d, k, x) : NULL;
    if (!b || !k->draw[0][k->pos[0][b->id] - 1])
        return false;
    snprintf(out, n, "b%d", b->id);
    return true;
}

static void choose(const Draw *d, Comp *k)
{
    for (int s = 0; s < 2; s++) {
        const IrComputation *c = k->c[s];
        k->pos[s] = xcalloc((size_t)d->m[s]->next_instr_id + 1, sizeof(int));
        k->draw[s] = xcalloc((size_t)c->n_instrs + 1, sizeof(bool));
        for (int i = 0; i < c->n_instrs; i++)
            k->pos[s][c->instrs[i]->id] = i + 1;
    }
    /* Before: its regions' instructions, and what after's regions read and
     * hand on to (drawn once, as before's), with their neighbourhood. */
    const IrComputation *cb = k->c[0], *ca = k->c[1];
    int *mark = xcalloc((size_t)cb->n_instrs + 1, sizeof *mark);
    for (int i = 0; i < cb->n_instrs; i++)
        mark[i] = region_of(d, 0, cb->instrs[i]->id) != 0;
    for (int i = 0; i < ca->n_instrs; i++) {
        const IrInstr *x = ca->instrs[i];
        bool in = region_of(d, 1, x->id) != 0;
        for (int o = 0; o < x->n_operands; o++) {
            const IrInstr *y = x->operands[o];
            bool y_in = region_of(d, 1, y->id) != 0;
            const IrInstr *b = in && !y_in ? alias(d, k, y) : !in && y_in ? alias(d, k, x) : NULL;
            if (b)
                mark[k->pos[0][b->id] - 1] = 1;
        }
    }
    const CheckLocated *loc = d->loc;
    ir_graph_pick(cb, mark, d->pic->radius, MAX_NODES, k->draw[0]);
    if (loc && loc->found && k->pos[0][loc->before_id])
        k->draw[0][k->pos[0][loc->before_id] - 1] = true;
    free(mark);
    /* After: its regions' instructions, and those next to them that before
     * has no counterpart for. */
    int drawn = 0;
    for (int i = 0; i < ca->n_instrs && drawn < MAX_NODES; i++)
        if (region_of(d, 1, ca->instrs[i]->id))
            drawn += k->draw[1][i] = true;
    /* The first difference on both sides, also where after computes it
     * alike outside the regions (and would be drawn as before's). */
    if (loc && loc->found && k->pos[1][loc->after_id])
        k->draw[1][k->pos[1][loc->after_id] - 1] = true;
    for (int i = 0; i < ca->n_instrs; i++) {
        const IrInstr *x = ca->instrs[i];
        for (int o = 0; o < x->n_operands && k->draw[1][i] && region_of(d, 1, x->id); o++) {
            const IrInstr *y = x->operands[o];
            int p = k->pos[1][y->id] - 1;
            if (p >= 0 && !alias(d, k, y))
                k->draw[1][p] = true;
        }
    }
}

static void draw_comp(const Draw *d, Comp *k, int *more)
{
    const CheckPairMap *map = d->map;
    FILE *f = d->f;
    char cname[256];
    ir_graph_escape(k->c[0]->name, cname, sizeof cname);
    fprintf(f, "  subgraph cluster_c%d {\n    label=\"%s%s\"; style=dashed; color=\"#888888\";\n", k->c[0]->id, cname,
            k->c[0]->is_entry ? " (entry)" : "");
    for (int r = 0; r < map->n_regions; r++) {
        const CheckRegion *g = &map->regions[r];
        if (!d->shown[r] || g->comp[0] != k->c[0] || g->comp[1] != k->c[1])
            continue;
        const char *color;
        const char *verdict = verdict_text(d, r, &color);
        bool first = d->loc && d->loc->found && d->loc->region == r;
        fprintf(f, "    subgraph cluster_r%d {\n      label=\"region %d: %s%s\"; style=\"rounded,bold\"; "
                "color=\"%s\"; penwidth=2;\n", r, r + 1, verdict, first ? "; the first difference is here" : "",
                color);
        for (int s = 1; s >= 0; s--) {      /* declared after first, Graphviz draws before on the left */
            fprintf(f, "      subgraph cluster_r%d_%c {\n        label=\"%s\"; style=filled; fillcolor=\"#f7f7f7\"; "
                    "color=\"#cccccc\";\n", r, s ? 'a' : 'b', s ? "after" : "before");
            int shown = 0;
            for (int i = 0; i < g->n_members[s]; i++) {
                int p = k->pos[s][g->members[s][i]] - 1;
                if (p < 0 || !k->draw[s][p])
                    continue;
                put_node(d, s, k->c[s]->instrs[p], s ? "style=\"filled\", fillcolor=\"" FILL_AFTER "\""
                                                     : "style=\"filled\", fillcolor=\"" FILL_BEFORE "\"");
                shown++;
            }
            if (shown == 0) {
                /* A side that computes nothing hands on values from outside. */
                char names[200] = "", text[256];
                size_t len = 0;
                for (int j = 0; j < g->n_outputs && j < 3 && len < sizeof names; j++) {
                    const IrInstr *x = check_instr_by_id(d->m[s], g->outputs[s][j]);
                    len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", j ? ", " : "", x ? x->name : "?");
                }
                snprintf(text, sizeof text, "computes nothing: hands on %s%s", names, g->n_outputs > 3 ? ", ..." : "");
                char esc[300];
                ir_graph_escape(text, esc, sizeof esc);
                fprintf(f, "        r%d_%c_none [label=\"%s\", shape=plaintext];\n", r, s ? 'a' : 'b', esc);
            }
            else if (shown < g->n_members[s])
                fprintf(f, "        r%d_%c_more [label=\"%d more not drawn\", shape=note, " FADED "];\n", r,
                        s ? 'a' : 'b', g->n_members[s] - shown);
            fprintf(f, "      }\n");
        }
        fprintf(f, "    }\n");
    }
    /* What both compute alike (before's), and after's own outside the regions. */
    int hidden = 0;
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < k->c[s]->n_instrs; i++) {
            const IrInstr *x = k->c[s]->instrs[i];
            if (region_of(d, s, x->id))
                continue;
            bool first = d->loc && d->loc->found && x->id == (s ? d->loc->after_id : d->loc->before_id);
            if (k->draw[s][i] && first)
                put_node(d, s, x, s ? "style=\"filled\", fillcolor=\"" FILL_AFTER "\""
                                    : "style=\"filled\", fillcolor=\"" FILL_BEFORE "\"");
            else if (k->draw[s][i])
                put_node(d, s, x, s ? "style=dashed, " FADED : FADED);
            else if (s == 0)
                hidden++;
        }
    if (hidden)
        fprintf(f, "    c%d_more [label=\"%d more instructions not drawn (--graph-radius)\", shape=note, " FADED
                "];\n", k->c[0]->id, hidden);
    fprintf(f, "  }\n");
    *more += hidden;
}

static void draw_edges(const Draw *d, const Comp *k)
{
    char from[32], to[32];
    for (int i = 0; i < k->c[0]->n_instrs; i++) {
        const IrInstr *x = k->c[0]->instrs[i];
        if (!k->draw[0][i])
            continue;
        for (int o = 0; o < x->n_operands; o++) {
            const IrInstr *y = x->operands[o];
            if (!node_id(d, k, 0, y, from, sizeof from))
                continue;
            bool changed = region_of(d, 0, x->id) || region_of(d, 0, y->id);
            fprintf(d->f, "  %s -> b%d%s;\n", from, x->id, changed ? " [color=\"" EDGE_BEFORE "\"]" : "");
        }
    }
    /* After's edges that touch its regions (the rest are before's, drawn). */
    for (int i = 0; i < k->c[1]->n_instrs; i++) {
        const IrInstr *x = k->c[1]->instrs[i];
        bool x_drawn = k->draw[1][i];
        for (int o = 0; o < x->n_operands; o++) {
            const IrInstr *y = x->operands[o];
            int p = k->pos[1][y->id] - 1;
            bool y_drawn = p >= 0 && k->draw[1][p];
            if (!x_drawn && !y_drawn)
                continue;
            if (!node_id(d, k, 1, y, from, sizeof from) || !node_id(d, k, 1, x, to, sizeof to))
                continue;
            fprintf(d->f, "  %s -> %s [color=\"" EDGE_AFTER "\"];\n", from, to);
        }
    }
}

static void legend(FILE *f)
{
    fprintf(f, "  legend [shape=plaintext, fontsize=10, label=<<table border=\"0\" cellborder=\"1\" "
            "cellspacing=\"4\"><tr><td bgcolor=\"" FILL_BEFORE "\">before's version</td>"
            "<td bgcolor=\"" FILL_AFTER "\">after's version</td>"
            "<td color=\"#bbbbbb\"><font color=\"#999999\">computed alike: drawn once</font></td>"
            "<td color=\"" MARK_FIRST "\" border=\"3\">first instruction whose values differ</td></tr></table>>];\n");
}

static bool write_pair(FILE *f, void *ctx)
{
    Draw *d = ctx;
    d->f = f;
    fprintf(f, "digraph hlocheck_pair {\n  rankdir=TB; newrank=true;\n"
            "  node [fontname=\"Helvetica\", fontsize=10]; edge [color=\"#999999\"];\n");
    title(d);
    const CheckPairMap *map = d->map;
    int more = 0;
    if (map->n_regions == 0) {
        /* Nothing differs: before's entry, faded, as a map of the module. */
        const IrComputation *c = d->m[0]->entry;
        Comp k = { .c = { c, d->m[1]->entry } };
        k.pos[0] = xcalloc((size_t)d->m[0]->next_instr_id + 1, sizeof(int));
        k.pos[1] = xcalloc((size_t)d->m[1]->next_instr_id + 1, sizeof(int));
        k.draw[0] = xcalloc((size_t)c->n_instrs + 1, sizeof(bool));
        k.draw[1] = xcalloc((size_t)d->m[1]->entry->n_instrs + 1, sizeof(bool));
        int *none = xcalloc((size_t)c->n_instrs + 1, sizeof *none);
        for (int i = 0; i < c->n_instrs; i++)
            k.pos[0][c->instrs[i]->id] = i + 1;
        ir_graph_pick(c, none, -1, MAX_NODES, k.draw[0]);
        free(none);
        draw_comp(d, &k, &more);
        draw_edges(d, &k);
        for (int s = 0; s < 2; s++) {
            free(k.pos[s]);
            free(k.draw[s]);
        }
    }
    for (int r = 0; r < map->n_regions; r++) {
        bool seen = !d->shown[r];
        for (int q = 0; q < r && !seen; q++)
            seen = d->shown[q] && map->regions[q].comp[0] == map->regions[r].comp[0] &&
                   map->regions[q].comp[1] == map->regions[r].comp[1];
        if (seen)
            continue;
        Comp k = { .c = { map->regions[r].comp[0], map->regions[r].comp[1] } };
        choose(d, &k);
        draw_comp(d, &k, &more);
        draw_edges(d, &k);
        for (int s = 0; s < 2; s++) {
            free(k.pos[s]);
            free(k.draw[s]);
        }
    }
    legend(f);
    fprintf(f, "}\n");
    return !ferror(f);
}

/* "%name (op)" -> name. */
static void part_name(const char *at, char *out, size_t n)
{
    out[0] = 0;
    if (at[0] != '%')
        return;
    size_t len = strcspn(at + 1, " ");
    snprintf(out, n, "%.*s", (int)len, at + 1);
}

void check_located_text(const IrModule *before, const IrModule *after, const CheckLocated *loc, char *out,
                        size_t n)
{
    const IrInstr *xb = check_instr_by_id(before, loc->before_id), *xa = check_instr_by_id(after, loc->after_id);
    char run[32] = "";
    if (loc->execution)
        snprintf(run, sizeof run, ", run %d", loc->execution + 1);
    snprintf(out, n, "before %s, after %s (rank %d%s, element %s: %s against %s%s)", xb ? xb->name : "?",
             xa ? xa->name : "?", loc->rank, run, loc->where, loc->before, loc->after,
             loc->free_inputs ? ", on free inputs" : "");
}

bool check_draw_pair(Coll *c, const IrModule *before, const IrModule *after, const CheckOptions *co,
                     const CheckPicture *pic, CheckLocated *located, char *note, size_t note_n, Error *err)
{
    note[0] = 0;
    CheckPairMap map;
    bool ok = check_map_pair(before, after, &map, err);
    if (!coll_all_ok(c, ok)) {
        if (ok)
            check_pair_map_free(&map);
        return false;
    }
    CheckLocated loc = { 0 };
    if (pic->rep && !check_locate(c, before, after, &map, co, pic->rep, &loc, err)) {
        check_pair_map_free(&map);
        return false;
    }
    /* --local without the whole pair: the first region that differed on
     * free inputs, at the output its own check found differing. */
    const CheckLocal *l = pic->local;
    for (int r = 0; !loc.found && l && l->results && r < map.n_regions && r < l->n_regions; r++) {
        const CheckDifference *diff = &l->results[r].diff;
        if (l->results[r].verdict != CHECK_REGION_DIFFERS || !diff->found || diff->output >= map.regions[r].n_outputs)
            continue;
        loc = (CheckLocated){ .found = true, .region = r, .output = diff->output,
                              .before_id = map.regions[r].outputs[0][diff->output],
                              .after_id = map.regions[r].outputs[1][diff->output], .rank = diff->rank,
                              .free_inputs = true };
        snprintf(loc.where, sizeof loc.where, "%s", diff->where);
        snprintf(loc.before, sizeof loc.before, "%s", diff->before);
        snprintf(loc.after, sizeof loc.after, "%s", diff->after);
    }
    ok = true;
    if (coll_rank(c) == 0) {
        Draw d = { .m = { before, after }, .map = &map, .pic = pic, .loc = &loc,
                   .shown = xcalloc((size_t)map.n_regions + 1, sizeof(bool)) };
        /* --local: the regions it did not find equivalent, when there are
         * any; --region=N: that one. */
        bool any = false;
        for (int r = 0; r < map.n_regions; r++) {
            d.shown[r] = !l || !l->results || r >= l->n_regions ||
                         (l->region ? l->region == r + 1 : l->results[r].verdict != CHECK_REGION_EQUIVALENT);
            any |= d.shown[r];
        }
        for (int r = 0; r < map.n_regions && !any; r++)
            d.shown[r] = true;
        if (pic->rep && pic->rep->proof.differs) {
            part_name(pic->rep->proof.before_at, d.part[0], sizeof d.part[0]);
            part_name(pic->rep->proof.after_at, d.part[1], sizeof d.part[1]);
        }
        ok = ir_graph_save(pic->path, write_pair, &d, note, note_n, err);
        free(d.shown);
    }
    check_pair_map_free(&map);
    if (located)
        *located = loc;
    return ok;
}

/* The failing rank's inputs of a pair shrunk to one device, on every rank
 * (NULL when a parameter is not an array). */
static Value **failing_inputs(Coll *c, const CheckShrunk *sh, Error *err)
{
    const IrComputation *e = sh->s.before->entry;
    for (int p = 0; p < e->n_params; p++)
        if (!ir_shape_is_array(e->params[p]->shape) || p >= sh->s.n_inputs)
            return NULL;
    Value **in = xcalloc((size_t)e->n_params + 1, sizeof *in);
    bool mine = coll_rank(c) == sh->failing_rank, ok = true;
    for (int p = 0; p < e->n_params && ok; p++) {
        in[p] = mine ? value_retain(sh->s.inputs[p]) : value_new_array(e->params[p]->shape, err);
        ok = in[p] != NULL;
    }
    if (!coll_all_ok(c, ok)) {
        for (int p = 0; p < e->n_params; p++)
            value_release(in[p]);
        free(in);
        return NULL;
    }
    for (int p = 0; p < e->n_params; p++)
        coll_bcast(c, in[p]->data, value_bytes(in[p]), sh->failing_rank);
    return in;
}

bool check_draw_shrunk(Coll *c, const CheckShrunk *sh, const CheckOptions *co, const CheckPicture *pic,
                       CheckLocated *located, char *note, size_t note_n, Error *err)
{
    CheckOptions po = *co;
    po.prove = false;
    po.inputs = sh->s.inputs;
    po.n_inputs = sh->s.n_inputs;
    int ranks = sh->ranks;
    Value **alone = NULL;
    if (sh->alone) {
        /* One device, the failing rank's inputs: rank 0 runs it on them. */
        alone = failing_inputs(c, sh, err);
        po.inputs = alone;
        ranks = 1;
    }
    CheckPicture p = *pic;
    if (sh->alone && !alone)
        p.rep = NULL;           /* a tuple parameter: drawn without locating */
    bool narrowed = ranks < coll_world(c), ok = true;
    if (narrowed)
        po.replicas = po.partitions = 0;
    memset(located, 0, sizeof *located);
    note[0] = 0;
    if (!narrowed || coll_narrow(c, ranks))
        ok = check_draw_pair(c, sh->s.before, sh->s.after, &po, &p, located, note, note_n, err);
    if (narrowed && ok)
        coll_widen(c);
    for (int i = 0; alone && i < sh->s.n_inputs; i++)
        value_release(alone[i]);
    free(alone);
    return ok;
}

