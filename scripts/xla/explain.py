"""explain.py: differences between hlo-run and XLA:CPU explained by
experiment, not by a list.  Each explainer changes one thing on hlo-run's
side that XLA:CPU is known to do differently from HLO's written semantics
(docs/xla-differences.md), runs hlo-run again, and reports the outputs that
then agree with XLA's: for those, that one thing is the whole difference.

  ftz               XLA:CPU flushes f32, f64 and bf16 subnormals to zero
                    (inputs and results, and f16 results): hlo-run runs on
                    inputs with every such subnormal made a zero of its sign,
                    and both sides' subnormal outputs are flushed before
                    comparing.
  wide-collectives  XLA:CPU sums a bf16 or f16 all-reduce or reduce-scatter in
                    f32 and rounds once: hlo-run runs the module with each
                    such collective rewritten to convert to f32, reduce in
                    f32 and convert back.

An explainer never makes hlo-run follow XLA in the product: the variant
runs only here, to name the cause of a difference.
"""
import os
import re
import shutil

import numpy as np

import tolerance

FLUSHED_DTYPES = (np.float32, np.float64)     # bf16 comes as <f4; f16 is not flushed by XLA:CPU


def flush(a, f16=False):
    """a with its subnormals (of f32 / f64, and bf16 stored as f32; with f16,
    of f16 too) made zeros of their sign.  f16 is for results: XLA:CPU
    computes f16 in f32, where an f16 subnormal input is normal, but the
    conversion of a result can flush it."""
    if a.dtype.type not in FLUSHED_DTYPES + ((np.float16,) if f16 else ()) and a.dtype.kind != "c":
        return a
    if a.dtype.kind == "c":
        parts = np.atleast_1d(a).view(a.real.dtype).reshape(a.shape + (2,))
        out = flush(parts)
        return a if out is parts else np.ascontiguousarray(out).view(a.dtype).reshape(a.shape)
    tiny = np.finfo(a.dtype).tiny
    sub = (a != 0) & (np.abs(a) < tiny)
    if not sub.any():
        return a
    out = a.copy()
    out[sub] = np.copysign(0, a[sub])
    return out


def flushed_inputs(src, dst):
    """Copies the .npy inputs in src to dst with subnormals flushed; False
    when nothing was flushed (the explainer cannot apply)."""
    os.makedirs(dst, exist_ok=True)
    changed = False
    for f in os.listdir(src):
        if not f.endswith(".npy"):
            continue
        a = np.load(os.path.join(src, f))
        b = flush(a)
        changed = changed or b is not a
        np.save(os.path.join(dst, f), b, allow_pickle=False)
    return changed


def ftz_explains(hlo_dirs, xla_dir, leaf, n_dev, cls, etype):
    """Whether flush-to-zero accounts for every element of output leaf
    where hlo-run and XLA differ, on every rank: each such element agrees
    once both sides' subnormal results are flushed, either in hlo-run's run
    on the original inputs or in its run on the flushed inputs (hlo_dirs:
    the output directories of those runs; XLA:CPU does not flush every
    subnormal input of every op, atan2's for one)."""
    for r in range(n_dev):
        name = "out%d.rank%d.npy" % (leaf, r)
        x = os.path.join(xla_dir, name)
        if not os.path.exists(x):
            return False
        xv = flush(np.load(x), f16=True)
        left = None
        for d in hlo_dirs:
            h = os.path.join(d, name)
            if not os.path.exists(h):
                continue
            hv = flush(np.load(h), f16=True)
            if hv.shape != xv.shape or hv.dtype != xv.dtype:
                return False
            bad = tolerance.bad_elements(hv, xv, etype, cls)
            left = bad if left is None else left & bad
        if left is None or left.any():
            return False
    return True


REDUCERS = {"add", "multiply", "maximum", "minimum"}
COLLECTIVE = re.compile(
    r"^(?P<indent>\s*)(?P<root>ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=\s*(?P<type>bf16|f16)\[(?P<dims>[^\]]*)\]"
    r"(?P<layout>\{[^}]*\})?\s+(?P<op>all-reduce|reduce-scatter)\((?P<operand>[^()]*)\)(?P<rest>.*)$")


def _reducer_op(text, comp):
    """The op of a two-parameter reducer computation whose root combines the
    two parameters (add, multiply, maximum, minimum), else None."""
    m = re.search(r"^%?" + re.escape(comp) + r"\s*(\([^)]*\))?[^{\n]*\{(.*?)^\}", text, re.M | re.S)
    if not m:
        return None
    root = re.search(r"ROOT\s+%?[\w.\-]+\s*=\s*\w+\[\]\S*\s+([a-z\-]+)\(", m.group(2))
    return root.group(1) if root and root.group(1) in REDUCERS else None


def widen_collectives(text, operand_shapes):
    """text with each single-operand bf16/f16 all-reduce or reduce-scatter
    reducing in f32 between two converts; None when there is none.
    operand_shapes maps an instruction's name to its operand's 'type[dims]'
    (the operand's shape, which a reduce-scatter's line does not give)."""
    out, extra, n = [], {}, 0
    for line in text.splitlines():
        m = COLLECTIVE.match(line)
        if not m or "," in m.group("operand").split("%")[-1] or m.group("operand").count("%") > 1:
            out.append(line)
            continue
        rest = m.group("rest")
        comp = re.search(r"to_apply=%?([\w.\-]+)", rest)
        op = _reducer_op(text, comp.group(1)) if comp else None
        oshape = operand_shapes.get(m.group("name"))
        if not op or not oshape:
            out.append(line)
            continue
        operand = "%" + m.group("operand").split("%")[-1].strip()
        name, ind, lay = m.group("name"), m.group("indent"), m.group("layout") or ""
        wide = "%%xw_%s_f32" % op
        extra[op] = wide
        rest = rest[:comp.start()] + "to_apply=" + wide + rest[comp.end():]
        odims = oshape.split("[", 1)[1].rstrip("]")
        out.append("%s%%%s.xw.in = f32[%s] convert(%s)" % (ind, name, odims, operand))
        out.append("%s%%%s.xw = f32[%s]%s %s(%%%s.xw.in)%s" % (ind, name, m.group("dims"), lay, m.group("op"),
                                                             name, rest))
        out.append("%s%s%%%s = %s[%s]%s convert(%%%s.xw)" % (ind, m.group("root") or "", name, m.group("type"),
                                                            m.group("dims"), lay, name))
        n += 1
    if n == 0:
        return None
    comps = ["%s (a: f32[], b: f32[]) -> f32[] {\n  %%a = f32[] parameter(0)\n  %%b = f32[] parameter(1)\n"
             "  ROOT %%r = f32[] %s(%%a, %%b)\n}\n" % (wide, op) for op, wide in sorted(extra.items())]
    lines = out
    first = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("HloModule"))
    return "\n".join(lines[:first + 1] + [""] + comps + lines[first + 1:]) + "\n"


def operand_shapes(module):
    """{collective name: its operand's 'type[dims]'} from hlo_cone's parsed module."""
    shapes = {}
    for comp in module.comps.values():
        for instr in comp.instructions():
            ops = instr.operands()
            if len(ops) != 1:
                continue
            text = instr.to_string()
            if " all-reduce(" not in text and " reduce-scatter(" not in text:
                continue
            m = re.match(r"^\s*%?[^\s=]+\s*=\s*([a-z0-9]+\[[^\]]*\])", ops[0].to_string())
            if m:
                shapes[instr.name] = m.group(1)
    return shapes


def scratch(d, name):
    p = os.path.join(d, name)
    shutil.rmtree(p, ignore_errors=True)
    return p
