#!/usr/bin/env python3
"""gen_inputs.py: random inputs for a module, as hlo-run --inputs reads them.

    gen_inputs.py MODULE.hlo --ranks N --out DIR [--seed S] [--dist uniform|normal|ints]

Writes DIR/param<p>.rank<r>.npy (tuple parameters: param<p>.<leaf>.rank<r>.npy)
for every entry parameter and rank, each rank different: floats uniform in
[-1, 1) (or standard normal) rounded to the parameter's type (bf16 / f8
written as <f4 holding values of the type; no subnormals are produced except
by that rounding, which a value of magnitude >= 2^-8 never hits), integers
in [-8, 8) (unsigned [0, 16)), pred random.  Shapes come from XLA's own
parser (run with the venv's python).
"""
import argparse
import os
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("module")
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dist", default="uniform", choices=["uniform", "normal"])
    a = ap.parse_args()
    import ml_dtypes
    from jax._src.lib import xla_client as xc
    text = open(a.module).read()
    m = xc.hlo.hlo_module_from_text(text)
    ps = xc.XlaComputation(m.as_serialized_hlo_module_proto()).program_shape()
    os.makedirs(a.out, exist_ok=True)
    narrow = {xc.PrimitiveType.BF16, xc.PrimitiveType.F8E5M2, xc.PrimitiveType.F8E4M3FN,
              xc.PrimitiveType.F8E4M3, xc.PrimitiveType.F8E4M3B11FNUZ, xc.PrimitiveType.F8E3M4,
              xc.PrimitiveType.F8E5M2FNUZ, xc.PrimitiveType.F8E4M3FNUZ, xc.PrimitiveType.F8E8M0FNU,
              xc.PrimitiveType.F4E2M1FN}

    def leaves(s):
        if s.is_tuple():
            return [l for t in s.tuple_shapes() for l in leaves(t)]
        return [s]

    def value(rng, s):
        et = s.xla_element_type()
        dims = tuple(s.dimensions())
        dt = np.dtype(s.numpy_dtype())
        if et == xc.PrimitiveType.PRED:
            return rng.integers(0, 2, dims).astype(bool)
        if et in (xc.PrimitiveType.S4, xc.PrimitiveType.U4):
            lo, hi = (-8, 8) if et == xc.PrimitiveType.S4 else (0, 16)
            return rng.integers(lo, hi, dims).astype(np.int8 if lo < 0 else np.uint8)
        if dt.kind in "iu":
            lo, hi = (-8, 8) if dt.kind == "i" else (0, 16)
            return rng.integers(lo, hi, dims).astype(dt)
        if dt.kind == "c":
            re = rng.uniform(-1, 1, dims)
            im = rng.uniform(-1, 1, dims)
            return (re + 1j * im).astype(dt)
        x = rng.uniform(-1, 1, dims) if a.dist == "uniform" else rng.standard_normal(dims)
        # Keep magnitudes normal in every type: tiny values go to 0.
        x = np.where(np.abs(x) < 2.0 ** -6, 0.0, x)
        if et in narrow:
            return x.astype(np.float32).astype(dt).astype(np.float32)
        return x.astype(dt)

    for p, s in enumerate(ps.parameter_shapes()):
        for r in range(a.ranks):
            rng = np.random.default_rng([a.seed, r, p])
            if s.is_tuple():
                k = 0
                for leaf in leaves(s):
                    if leaf.is_token():
                        continue
                    np.save(os.path.join(a.out, "param%d.%d.rank%d.npy" % (p, k, r)), value(rng, leaf))
                    k += 1
            elif not s.is_token():
                np.save(os.path.join(a.out, "param%d.rank%d.npy" % (p, r)), value(rng, s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
