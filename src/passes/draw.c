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

static int mark(const IrInstr *in, int side, void *ctx)
{
    const DrawCtx *d = ctx;
    return side == 0 ? pass_provenance_before(d->prov, in) : pass_provenance_after(d->prov, in);
}

void pass_draw_dot_path(const char *path, char *out, size_t n)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - path) : strlen(path);
    snprintf(out, n, "%.*s.dot", (int)stem, path);
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
    char dot_path[4096];
    pass_draw_dot_path(path, dot_path, sizeof dot_path);
    IrAtomicFile f;
    if (!ir_atomic_open(&f, dot_path, err))
        return false;
    bool ok = ir_graph_write_dot(f.f, sides, after ? 2 : 1, &style);
    if (!ir_atomic_close(&f, ok, err))
        return false;
    note[0] = 0;
    if (strcmp(dot_path, path) == 0)
        return true;
    char why[1024];
    if (!ir_graph_render(dot_path, path, why, sizeof why))
        snprintf(note, note_n, "%s", why);
    return true;
}
