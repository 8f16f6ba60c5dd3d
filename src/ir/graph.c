/* graph.c: modules drawn as Graphviz DOT (ir.h), and the DOT drawn with
 * Graphviz's dot.  Each side (a module: "before", "after") is a cluster of
 * clusters, one per computation drawn; an instruction is a node labelled
 * with its name, opcode and shape, an operand an edge.  The caller marks
 * instructions with a class (what changed them); unmarked ones are drawn
 * faded, so the eye goes to what differs.  A large module is cut to the
 * neighbourhood of the marked instructions. */
#include "ir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Fill colours of the classes, in order; the legend repeats them. */
static const char *const palette[] = { "#f4a582", "#92c5de", "#b8e186", "#fdb863", "#c2a5cf",
                                       "#f1b6da", "#80cdc1", "#dfc27d", "#bababa" };
#define N_PALETTE (int)(sizeof palette / sizeof palette[0])

const char *ir_graph_class_color(int k)
{
    return k > 0 ? palette[(k - 1) % N_PALETTE] : "#ffffff";
}

static bool is_collective(IrOpcode op)
{
    return (ir_op_info[op].flags & OPF_COLLECTIVE) != 0;
}

void ir_graph_escape(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; s && *s && k + 2 < n; s++) {
        if (*s == '\n') {          /* a line break of the label */
            out[k++] = '\\';
            out[k++] = 'n';
            continue;
        }
        if (*s == '"' || *s == '\\')
            out[k++] = '\\';
        out[k++] = (unsigned char)*s < ' ' ? ' ' : *s;
    }
    out[k] = 0;
}

int ir_graph_pick(const IrComputation *comp, const int *mark, int radius, int max_nodes, bool *draw)
{
    int n = comp->n_instrs, any = 0, drawn = 0;
    int *dist = malloc((size_t)(n ? n : 1) * sizeof *dist);
    int *index = calloc((size_t)(comp->module->next_instr_id + 1), sizeof *index);
    if (!dist || !index) {
        free(dist);
        free(index);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        index[comp->instrs[i]->id] = i + 1;
        dist[i] = mark[i] ? 0 : -1;
        any += mark[i] != 0;
        draw[i] = false;
    }
    if (!any || radius < 0) {
        for (int i = 0; i < n && drawn < max_nodes; i++)
            drawn += draw[i] = true;
        free(dist);
        free(index);
        return drawn;
    }
    /* Breadth first over operand edges both ways, one ring at a time. */
    for (int d = 0; d < radius; d++)
        for (int i = 0; i < n; i++) {
            const IrInstr *in = comp->instrs[i];
            for (int o = 0; o < in->n_operands; o++) {
                int j = in->operands[o]->parent == comp ? index[in->operands[o]->id] - 1 : -1;
                if (j < 0)
                    continue;
                if (dist[i] == d && dist[j] < 0)
                    dist[j] = d + 1;
                if (dist[j] == d && dist[i] < 0)
                    dist[i] = d + 1;
            }
        }
    for (int d = 0; d <= radius; d++)
        for (int i = 0; i < n && drawn < max_nodes; i++)
            if (dist[i] == d)
                drawn += draw[i] = true;
    free(dist);
    free(index);
    return drawn;
}

void ir_graph_node(FILE *out, const char *id, const IrInstr *in, const char *note, const char *attrs)
{
    char name[256], shape[512], text[1024], groups[160] = "";
    ir_graph_escape(in->name, name, sizeof name);
    ir_graph_escape(ir_shape_str(in->shape), shape, sizeof shape);
    ir_graph_escape(note ? note : "", text, sizeof text);
    if (is_collective(in->op) && in->info->replica_groups.n_groups > 0) {
        /* A collective by its groups, cut to a line's width. */
        StrBuf b;
        strbuf_init(&b);
        ir_print_replica_groups(&b, &in->info->replica_groups);
        if (b.s && b.len > 60)
            snprintf(b.s + 56, b.len - 55, "...}");
        char raw[96];
        snprintf(raw, sizeof raw, "groups %s", b.s ? b.s : "");
        ir_graph_escape(raw, groups, sizeof groups);
        strbuf_free(&b);
    }
    fprintf(out, "    %s [label=\"%s\\n%s %s%s%s%s%s\", shape=%s%s%s];\n", id, name, ir_opcode_name(in->op), shape,
            groups[0] ? "\\n" : "", groups, text[0] ? "\\n" : "", text, is_collective(in->op) ? "box3d" : "box",
            attrs && attrs[0] ? ", " : "", attrs ? attrs : "");
}

static void node(FILE *out, int side, const IrInstr *in, int mark, const char *note)
{
    char id[32], attrs[128];
    snprintf(id, sizeof id, "s%d_%d", side, in->id);
    if (mark)
        snprintf(attrs, sizeof attrs, "style=\"filled,bold\", fillcolor=\"%s\"", ir_graph_class_color(mark));
    else
        snprintf(attrs, sizeof attrs, "color=\"#bbbbbb\", fontcolor=\"#999999\"");
    ir_graph_node(out, id, in, note, attrs);
}

/* used[k]: class k was drawn (k <= st->n_classes). */
static bool draw_side(FILE *out, int side, const IrGraphSide *s, const IrGraphStyle *st, bool *used)
{
    const IrModule *m = s->m;
    int marked_anywhere = 0;
    int **marks = calloc((size_t)(m->n_computations ? m->n_computations : 1), sizeof *marks);
    if (!marks)
        return false;
    bool ok = true;
    for (int c = 0; c < m->n_computations && ok; c++) {
        const IrComputation *comp = m->computations[c];
        marks[c] = calloc((size_t)(comp->n_instrs ? comp->n_instrs : 1), sizeof **marks);
        ok = marks[c] != NULL;
        for (int i = 0; ok && i < comp->n_instrs; i++) {
            marks[c][i] = st->mark ? st->mark(comp->instrs[i], side, st->ctx) : 0;
            marked_anywhere += marks[c][i] != 0;
        }
    }
    char title[256];
    ir_graph_escape(s->title, title, sizeof title);
    fprintf(out, "  subgraph cluster_side%d {\n    label=\"%s\"; fontsize=18; style=rounded;\n", side, title);
    for (int c = 0; c < m->n_computations && ok; c++) {
        const IrComputation *comp = m->computations[c];
        int here = 0;
        for (int i = 0; i < comp->n_instrs; i++)
            here += marks[c][i] != 0;
        /* The computations that hold a change; the entry alone when none does. */
        if (marked_anywhere ? here == 0 : !comp->is_entry)
            continue;
        bool *draw = calloc((size_t)(comp->n_instrs ? comp->n_instrs : 1), sizeof *draw);
        if (!draw) {
            ok = false;
            break;
        }
        int drawn = ir_graph_pick(comp, marks[c], st->radius, st->max_nodes > 0 ? st->max_nodes : 300, draw);
        char cname[256];
        ir_graph_escape(comp->name, cname, sizeof cname);
        fprintf(out, "    subgraph cluster_s%d_c%d {\n    label=\"%s%s\"; style=dashed;\n", side, comp->id, cname,
                comp->is_entry ? " (entry)" : "");
        for (int i = 0; i < comp->n_instrs; i++) {
            if (!draw[i])
                continue;
            node(out, side, comp->instrs[i], marks[c][i], st->note ? st->note(comp->instrs[i], side, st->ctx) : NULL);
            if (marks[c][i] > 0 && marks[c][i] <= st->n_classes)
                used[marks[c][i]] = true;
        }
        if (drawn < comp->n_instrs)
            fprintf(out, "    s%d_c%d_more [label=\"%d more instructions not drawn (--graph-radius)\", shape=note, "
                    "color=\"#bbbbbb\", fontcolor=\"#999999\"];\n", side, comp->id, comp->n_instrs - drawn);
        fprintf(out, "    }\n");
        bool *drawn_id = calloc((size_t)m->next_instr_id + 1, sizeof *drawn_id);
        for (int i = 0; drawn_id && i < comp->n_instrs; i++)
            drawn_id[comp->instrs[i]->id] = draw[i];
        for (int i = 0; drawn_id && i < comp->n_instrs; i++) {
            const IrInstr *in = comp->instrs[i];
            for (int o = 0; draw[i] && o < in->n_operands; o++) {
                const IrInstr *op = in->operands[o];
                if (op->parent == comp && drawn_id[op->id])
                    fprintf(out, "    s%d_%d -> s%d_%d;\n", side, op->id, side, in->id);
            }
        }
        ok = drawn_id != NULL;
        free(drawn_id);
        free(draw);
    }
    fprintf(out, "  }\n");
    for (int c = 0; c < m->n_computations; c++)
        free(marks[c]);
    free(marks);
    return ok;
}

bool ir_graph_write_dot(FILE *out, const IrGraphSide *sides, int n_sides, const IrGraphStyle *style)
{
    fprintf(out, "digraph hlocheck {\n  rankdir=TB; newrank=true; compound=true;\n"
            "  node [fontname=\"Helvetica\", fontsize=10]; edge [color=\"#777777\"];\n");
    bool *used = calloc((size_t)style->n_classes + 1, sizeof *used), ok = used != NULL, any = false;
    for (int s = 0; s < n_sides && ok; s++)
        ok = draw_side(out, s, &sides[s], style, used);
    for (int k = 1; ok && k <= style->n_classes; k++)
        any |= used[k];
    if (any) {      /* the classes drawn, each once */
        fprintf(out, "  subgraph cluster_legend {\n    label=\"what changed it\"; style=rounded;\n");
        for (int k = 1; k <= style->n_classes; k++) {
            if (!used[k])
                continue;
            char name[256];
            ir_graph_escape(style->class_names[k - 1], name, sizeof name);
            fprintf(out, "    legend%d [label=\"%s\", shape=box, style=filled, fillcolor=\"%s\"];\n", k, name,
                    ir_graph_class_color(k));
        }
        fprintf(out, "  }\n");
    }
    fprintf(out, "}\n");
    free(used);
    return ok && !ferror(out);
}

bool ir_graph_render(const char *dot_path, const char *out_path, char *why, size_t why_n)
{
    const char *dot = strrchr(out_path, '.');
    const char *format = dot && dot[1] ? dot + 1 : "svg";
    char flag[32];
    snprintf(flag, sizeof flag, "-T%s", format);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, why_n, "cannot start Graphviz's dot: %s", strerror(errno));
        return false;
    }
    if (pid == 0) {
        execlp("dot", "dot", flag, "-o", out_path, dot_path, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
        snprintf(why, why_n, "Graphviz's dot is not installed (Debian: apt-get install graphviz); the graph is in %s, "
                 "which dot -T%s draws", dot_path, format);
        return false;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(why, why_n, "Graphviz's dot failed on %s (exit %d)", dot_path, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return false;
    }
    return true;
}

void ir_graph_dot_path(const char *path, char *out, size_t n)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - path) : strlen(path);
    snprintf(out, n, "%.*s.dot", (int)stem, path);
}

bool ir_graph_save(const char *path, bool (*write)(FILE *f, void *ctx), void *ctx, char *note, size_t note_n,
                   Error *err)
{
    char dot_path[4096];
    ir_graph_dot_path(path, dot_path, sizeof dot_path);
    note[0] = 0;
    IrAtomicFile f;
    if (!ir_atomic_open(&f, dot_path, err))
        return false;
    bool ok = write(f.f, ctx);
    if (!ir_atomic_close(&f, ok, err))
        return false;
    if (strcmp(dot_path, path) != 0)
        ir_graph_render(dot_path, path, note, note_n);
    return true;
}
