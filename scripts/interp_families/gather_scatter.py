"""gather_scatter.py: gather and scatter cases, compared exactly.

gather_ref and scatter_ref follow XLA's definitions: gather clamps each start
so that the slice fits; scatter skips a window that falls partly outside the
operand and combines in update order (row-major).  Indices are read by value.
Row gathers (embedding lookups), 2-D index vectors, implicit index_vector_dim,
duplicate indices, a non-commutative combiner, batching dims
(gather_batched_ref), a variadic scatter and larger tables (the row-copy
paths).
"""
import numpy as np


def gather_ref(operand, indices, offset_dims, collapsed, start_index_map, ivd, slice_sizes):
    """XLA gather (no batching dims); start indices clamped so the slice fits."""
    idx = indices[..., None] if ivd == indices.ndim else indices
    batch_shape = [idx.shape[d] for d in range(idx.ndim) if d != ivd]
    offset_op_dims = [d for d in range(operand.ndim) if d not in collapsed]
    out_rank = len(batch_shape) + len(offset_dims)
    batch_out = [d for d in range(out_rank) if d not in offset_dims]
    out_shape = [0] * out_rank
    for i, d in enumerate(batch_out):
        out_shape[d] = batch_shape[i]
    for i, d in enumerate(offset_dims):
        out_shape[d] = slice_sizes[offset_op_dims[i]]
    out = np.empty(out_shape, operand.dtype)
    for oi in np.ndindex(*out_shape):
        G = [oi[d] for d in batch_out]
        vec = []
        for k in range(idx.shape[ivd]):
            full = list(G)
            full.insert(ivd, k)
            vec.append(int(idx[tuple(full)]))    # by value (u64 >= 2^63 is past every dim)
        start = [0] * operand.ndim
        for k, d in enumerate(start_index_map):
            start[d] = vec[k]
        pos = [min(max(start[d], 0), operand.shape[d] - slice_sizes[d]) for d in range(operand.ndim)]
        for i, d in enumerate(offset_dims):
            pos[offset_op_dims[i]] += oi[d]
        out[oi] = operand[tuple(pos)]
    return out


def fam_gather(g):
    """gather: row gather (embedding lookup), 2-D index vectors with clamped
    starts, index_vector_dim = rank (implicit), offset dims before batch dims,
    s64/u32 indices, a bf16 operand.  Indices are read as signed 64-bit, as
    the reference says for dynamic-slice and as XLA's evaluator reads every
    index (Literal::GetIntegralAsS64): u64 2^64-1 is -1 and clamps to 0."""
    specs = [
        ("gather_rows_embedding", "f32", (5, 3), "s32", [3, 0, 4, 3], [1], [0], [0], 1, (1, 3)),
        ("gather_2d_clamped", "s32", (4, 5), "s32", [[0, 0], [3, 4], [-1, 2], [2, -7], [1, 1]],
         [1, 2], [], [0, 1], 1, (2, 3)),
        ("gather_implicit_index_dim", "bf16", (6, 4), "s64", [[5, 0], [2, 9]], [2], [0], [0], 2,
         (1, 4)),
        ("gather_offset_first_ivd0", "f64", (3, 4, 2), "u32", [[2, 0, 1], [1, 3, 0]], [0, 1], [1],
         [1, 0], 0, (2, 1, 2)),
        ("gather_scalar_index_collapse_all", "u8", (7,), "s32", 4, [], [0], [0], 0, (1,)),
        ("gather_u64_indices_by_value", "s32", (5,), "u64", [[(1 << 64) - 1], [3], [1 << 63], [1]],
         [1], [], [0], 1, (2,)),
    ]
    for name, ot, oshape, it, ivals, offset, collapsed, sim, ivd, sizes in specs:
        rng = g.seeded(name)
        if ot in g.INTS:
            op = g.arr(ot, rng.integers(0, 100, oshape))
        elif ot == "f64":
            op = rng.standard_normal(oshape)
        else:
            op = g.to_type(ot, rng.standard_normal(oshape).astype(np.float32))
        ind = g.arr(it, ivals)
        want = gather_ref(op, ind, offset, collapsed, sim, ivd, sizes)
        m = g.Module(name)
        po, pi = m.param(g.arr_shape(ot, op)), m.param(g.arr_shape(it, ind))
        attrs = (f"offset_dims={g.ilist(offset)}, collapsed_slice_dims={g.ilist(collapsed)}, "
                 f"start_index_map={g.ilist(sim)}, index_vector_dim={ivd}, slice_sizes={g.ilist(sizes)}")
        r = m.op(g.arr_shape(ot, want), "gather", po, pi, attrs=attrs)
        g.case(name, m.text([r]), [op, ind], [want])


def scatter_ref(operand, indices, updates, uwd, iwd, sdod, ivd, combine):
    """XLA scatter (no batching dims): per scatter position (row-major), the
    window is skipped when any part of it falls outside the operand, otherwise
    operand = combine(operand, update) over the window (row-major)."""
    out = operand.copy()
    idx = indices[..., None] if ivd == indices.ndim else indices
    scatter_dims = [d for d in range(updates.ndim) if d not in uwd]
    win_op_dims = [d for d in range(operand.ndim) if d not in iwd]
    wsize = [1] * operand.ndim
    for i, d in enumerate(win_op_dims):
        wsize[d] = updates.shape[uwd[i]]
    for G in np.ndindex(*[updates.shape[d] for d in scatter_dims]):
        vec = []
        for k in range(idx.shape[ivd]):
            full = list(G)
            full.insert(ivd, k)
            vec.append(int(idx[tuple(full)]))    # by value (u64 >= 2^63 is past every dim)
        start = [0] * operand.ndim
        for k, d in enumerate(sdod):
            start[d] = vec[k]
        if any(start[d] < 0 or start[d] + wsize[d] > operand.shape[d] for d in range(operand.ndim)):
            continue
        for W in np.ndindex(*[updates.shape[d] for d in uwd]):
            ui = [0] * updates.ndim
            for k, d in enumerate(scatter_dims):
                ui[d] = G[k]
            for k, d in enumerate(uwd):
                ui[d] = W[k]
            pos = list(start)
            for k, d in enumerate(win_op_dims):
                pos[d] += W[k]
            out[tuple(pos)] = combine(out[tuple(pos)], updates[tuple(ui)])
    return out


def fam_scatter(g):
    """scatter: add with duplicate indices, replace with out-of-bounds windows
    skipped, 2-D windows from 2-D index vectors, a non-commutative combiner
    applied in update order."""
    specs = [
        ("scatter_add_duplicates", "f32", (5, 3), "s32", [1, 3, 1, 0], (4, 3), [1], [0], [0], 1,
         "add"),
        ("scatter_replace_out_of_bounds", "s32", (6,), "s32", [[2], [9], [-1], [5], [-6]], (5,),
         [], [0], [0], 1, "replace"),
        ("scatter_2d_windows", "s64", (4, 5), "s32", [[0, 0], [2, 3], [3, 3], [1, 1]],
         (4, 2, 2), [1, 2], [], [0, 1], 1, "add"),
        ("scatter_u8_order_sensitive", "u8", (4,), "s64", [[1], [1], [3], [1]], (4,), [], [0],
         [0], 1, "horner"),
        ("scatter_bf16_implicit_index_dim", "bf16", (3, 4), "u32", [2, 0], (2, 4), [1], [0], [0],
         1, "add"),
    ]
    for name, t, oshape, it, ivals, ushape, uwd, iwd, sdod, ivd, comb in specs:
        rng = g.seeded(name)
        if t == "f32":
            op, upd = g.dyadic(rng, t, oshape), g.dyadic(rng, t, ushape)
        elif t == "bf16":
            op, upd = g.dyadic(rng, t, oshape, den=2), g.dyadic(rng, t, ushape, den=2)
        else:
            op, upd = g.arr(t, rng.integers(0, 50, oshape)), g.arr(t, rng.integers(1, 50, ushape))
        ind = g.arr(it, ivals)
        if name == "scatter_bf16_implicit_index_dim":
            ivd = 1             # indices u32[2]: index_vector_dim = rank = 1
        m = g.Module(name)
        comp = f"comb_{t}"
        if comb == "add":
            m.comp(g.binary_comp(comp, "add", t))
            fn = (lambda a, b, t=t: g.apply_scalar(t, "add", a, b))
        elif comb == "replace":
            m.comp(f"""
%{comp} (a: {t}[], b: {t}[]) -> {t}[] {{
  %{comp}.a = {t}[] parameter(0)
  ROOT %{comp}.b = {t}[] parameter(1)
}}""")
            fn = (lambda a, b: b)
        else:
            m.comp(f"""
%{comp} (a: {t}[], b: {t}[]) -> {t}[] {{
  %{comp}.a = {t}[] parameter(0)
  %{comp}.b = {t}[] parameter(1)
  %{comp}.k = {t}[] constant(3)
  %{comp}.m = {t}[] multiply({t}[] %{comp}.a, {t}[] %{comp}.k)
  ROOT %{comp}.r = {t}[] add({t}[] %{comp}.m, {t}[] %{comp}.b)
}}""")
            fn = (lambda a, b, t=t: g.wrap(int(a) * 3 + int(b), t))
        want = scatter_ref(op, ind, upd, uwd, iwd, sdod, ivd, fn)
        po, pi, pu = m.param(g.arr_shape(t, op)), m.param(g.arr_shape(it, ind)), m.param(g.arr_shape(t, upd))
        attrs = (f"update_window_dims={g.ilist(uwd)}, inserted_window_dims={g.ilist(iwd)}, "
                 f"scatter_dims_to_operand_dims={g.ilist(sdod)}, index_vector_dim={ivd}, "
                 f"to_apply=%{comp}")
        r = m.op(g.arr_shape(t, op), "scatter", po, pi, pu, attrs=attrs)
        g.case(name, m.text([r]), [op, ind, upd], [want])


def fam_gather_scatter_rows(g):
    """Row gathers and scatters over larger tables (the row-copy paths): an
    embedding lookup with clamped indices, scatter-add of rows with
    duplicates and skipped out-of-bounds rows, scatter-replace of rows."""
    name = "gather_scatter_rows_large"
    rng = g.seeded(name)
    m = g.Module(name)
    m.comp(g.binary_comp("add_f32", "add", "f32"))
    m.comp("""
%take_s32 (a: s32[], b: s32[]) -> s32[] {
  %take_s32.a = s32[] parameter(0)
  ROOT %take_s32.b = s32[] parameter(1)
}""")
    table = g.dyadic(rng, "f32", (100, 16))
    gi = g.arr("s32", np.concatenate([rng.integers(0, 100, 56), [-5, 100, 250, 99]]))
    acc = g.dyadic(rng, "f32", (50, 16))
    si = g.arr("s32", np.concatenate([rng.integers(0, 50, 76), [50, -1, 1000, 49]]))
    upd = g.dyadic(rng, "f32", (80, 16))
    ints = g.arr("s32", rng.integers(-1000, 1000, (30, 8)))
    ri = g.arr("s32", np.concatenate([rng.permutation(30)[:20], [30, -2]]))
    rupd = g.arr("s32", rng.integers(-1000, 1000, (22, 8)))
    params = [table, gi, acc, si, upd, ints, ri, rupd]
    types = ["f32", "s32", "f32", "s32", "f32", "s32", "s32", "s32"]
    ps = [m.param(g.arr_shape(t, v)) for t, v in zip(types, params)]
    gat = ("offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
           "slice_sizes={1,16}")
    sca = "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1"
    roots = [m.op("f32[60,16]", "gather", ps[0], ps[1], attrs=gat),
             m.op("f32[50,16]", "scatter", ps[2], ps[3], ps[4], attrs=sca + ", to_apply=%add_f32"),
             m.op("s32[30,8]", "scatter", ps[5], ps[6], ps[7], attrs=sca + ", to_apply=%take_s32")]
    outs = [gather_ref(table, gi, [1], [0], [0], 1, (1, 16)),
            scatter_ref(acc, si, upd, [1], [0], [0], 1, lambda a, b: np.float32(a + b)),
            scatter_ref(ints, ri, rupd, [1], [0], [0], 1, lambda a, b: b)]
    g.case(name, m.text(roots), params, outs)


def gather_batched_ref(operand, indices, obd, sibd, sim, collapsed, ivd, sizes):
    """gather with operand_batching_dims / start_indices_batching_dims, offset
    dims last (the layout used here): out[G..., offsets...]."""
    idx = indices[..., None] if ivd == indices.ndim else indices
    bshape = [idx.shape[d] for d in range(idx.ndim) if d != ivd]
    off_dims = [d for d in range(operand.ndim) if d not in collapsed and d not in obd]
    out = np.empty(bshape + [sizes[d] for d in off_dims], operand.dtype)
    for G in np.ndindex(*bshape):
        full = list(G)
        full.insert(ivd, 0)
        start = [0] * operand.ndim
        for k, d in enumerate(sim):
            f = list(full)
            f[ivd] = k
            start[d] = min(max(int(idx[tuple(f)]), 0), operand.shape[d] - sizes[d])
        for od, idim in zip(obd, sibd):
            start[od] = full[idim]
        for O in np.ndindex(*[sizes[d] for d in off_dims]):
            pos = list(start)
            for k, d in enumerate(off_dims):
                pos[d] += O[k]
            out[G + O] = operand[tuple(pos)]
    return out


def fam_gather_scatter_batching(g):
    """gather and scatter with batching dims (operand_batching_dims /
    input_batching_dims), and a variadic (two-operand) scatter."""
    name = "gather_scatter_batching_variadic"
    rng = g.seeded(name)
    m = g.Module(name)
    m.comp(g.binary_comp("add_s32", "add", "s32"))
    m.comp("""
%add_pair (a: s32[], b: f32[], c: s32[], d: f32[]) -> (s32[], f32[]) {
  %add_pair.a = s32[] parameter(0)
  %add_pair.b = f32[] parameter(1)
  %add_pair.c = s32[] parameter(2)
  %add_pair.d = f32[] parameter(3)
  %add_pair.s = s32[] add(s32[] %add_pair.a, s32[] %add_pair.c)
  %add_pair.m = f32[] maximum(f32[] %add_pair.b, f32[] %add_pair.d)
  ROOT %add_pair.r = (s32[], f32[]) tuple(s32[] %add_pair.s, f32[] %add_pair.m)
}""")
    op = g.arr("f32", rng.standard_normal((2, 5, 3)).astype(np.float32))
    gi = g.arr("s32", [[[4], [0], [7]], [[2], [-1], [2]]])            # [2,3,1]
    sop = g.arr("s32", rng.integers(0, 100, (2, 6)))
    si = g.arr("s32", [[1, 5, 1], [0, 0, 9]])                          # [2,3]: batch 2, 3 each
    su = g.arr("s32", rng.integers(1, 10, (2, 3)))
    v0 = g.arr("s32", rng.integers(0, 10, (5,)))
    v1 = g.dyadic(rng, "f32", (5,))
    vi = g.arr("s32", [[0], [4], [0], [9]])
    vu0 = g.arr("s32", [1, 2, 3, 4])
    vu1 = g.dyadic(rng, "f32", (4,))
    params = [op, gi, sop, si, su, v0, v1, vi, vu0, vu1]
    types = ["f32", "s32", "s32", "s32", "s32", "s32", "f32", "s32", "s32", "f32"]
    ps = [m.param(g.arr_shape(t, v)) for t, v in zip(types, params)]
    r1 = m.op("f32[2,3,3]", "gather", ps[0], ps[1],
              attrs="offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, "
                    "operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, "
                    "slice_sizes={1,1,3}")
    w1 = gather_batched_ref(op, gi, [0], [0], [1], [1], 2, (1, 1, 3))
    r2 = m.op("s32[2,6]", "scatter", ps[2], ps[3], ps[4],
              attrs="update_window_dims={}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, "
                    "input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, "
                    "to_apply=%add_s32")
    w2 = sop.copy()
    for b in range(2):
        for j in range(3):
            k = int(si[b, j])
            if 0 <= k < 6:
                w2[b, k] = g.wrap(int(w2[b, k]) + int(su[b, j]), "s32")
    r3 = m.op("(s32[5], f32[5])", "scatter", ps[5], ps[6], ps[7], ps[8], ps[9],
              attrs="update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                    "index_vector_dim=1, to_apply=%add_pair")
    w30, w31 = v0.copy(), v1.copy()
    for j in range(4):
        k = int(vi[j, 0])
        if 0 <= k < 5:
            w30[k] = g.wrap(int(w30[k]) + int(vu0[j]), "s32")
            w31[k] = g.ieee_max(w31[k], vu1[j])
    g.case(name, m.text([r1, r2, r3]), params, [w1, w2, w30, w31])


def families(g):
    return [lambda: fam_gather(g), lambda: fam_scatter(g), lambda: fam_gather_scatter_rows(g),
            lambda: fam_gather_scatter_batching(g)]
