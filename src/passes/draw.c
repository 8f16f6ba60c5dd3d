/* draw.c: a rewrite drawn (pass.h): the module before and after the
 * passes side by side, each instruction a pass made, changed or removed
 * filled with that pass's colour, the rest faded (ir_graph_write_dot),
 * written as DOT and drawn by Graphviz. */
#include "pass.h"

#include <stdio.h>
#include <string.h>

typedef struct DrawCtx {
    const PassProvenance *prov;
} DrawCtx;

typedef struct Writer {
    const IrGraphSide *sides;
    int n_sides;
    const IrGraphStyle *style;
} Writer;

static bool write(FILE *f, void *ctx)
{
    const Writer *w = ctx;
    return ir_graph_write_dot(f, w->sides, w->n_sides, w->style);
}

static int mark(const IrInstr *in, int side, void *ctx)
{
    const DrawCtx *d = ctx;
    return side == 0 ? pass_provenance_before(d->prov, in) : pass_provenance_after(d->prov, in);
}

bool pass_draw_rewrite(const IrModule *before, const IrModule *after, const PassProvenance *prov,
                       const Pass *const *passes, int n, const char *path, int radius, char *note, size_t note_n,
                       Error *err)
{
    const char *names[64];
    char labels[64][96];
    for (int i = 0; i < n && i < 64; i++) {
        snprintf(labels[i], sizeof labels[i], "#%d %s", passes[i]->number, passes[i]->name);
        names[i] = labels[i];
    }
    DrawCtx ctx = { prov };
    IrGraphStyle style = { .mark = prov ? mark : NULL, .ctx = &ctx, .class_names = names, .n_classes = n < 64 ? n : 64,
                           .radius = radius };
    IrGraphSide sides[2] = { { before, "before the passes" }, { after, "after the passes" } };
    Writer w = { sides, after ? 2 : 1, &style };
    return ir_graph_save(path, write, &w, note, note_n, err);
}
