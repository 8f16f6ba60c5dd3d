#!/usr/bin/python3
"""gen_peer_e2e.py: write tests/collectives/peer_e2e/<case>/ from the sidecars.

Every end-to-end case of ../shared/peer-corpus/collective_ops_test/ and
../shared/peer-corpus/collective_ops_e2e_test/ whose .expect.md gives
concrete inputs and per-replica values becomes one folder:

  case.txt                  module <path relative to ../shared/peer-corpus>
                            ranks <R>
                            replace <old>|<new>   (0 or more, applied in order
                                                   to a temporary copy: the
                                                   upstream template's
                                                   StrReplaceAll placeholders)
                            source <sidecar line the values come from>
  param<p>.rank<r>.npy      the argument literal, the SAME on every replica
  expected/out<i>.rank<r>.npy   the value replica r must produce for leaf i

The values below are transcribed by hand from the sidecars.  Where the
sidecar says the upstream test is DISABLED_ON_CPU, or states the values as a
rule ("replica i -> i"), the expected values are computed here from that rule
(the module's arithmetic, written out in numpy) and checked against the
numbers the sidecar states, so a typo in either shows up as an assertion.

The peer .hlo files are not copied: scripts/run_peer_e2e.sh runs them in
place.  Types numpy lacks (bf16) are written as f32, as hlo-run reads and
writes them (spec/tools.md).  Run with /usr/bin/python3 (needs numpy); it
rewrites every case folder it owns and leaves anything else alone.
"""
import os
import shutil
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "collectives", "peer_e2e")

cases = {}


def case(name, module, ranks, params, expected, source, replace=()):
    """params: list of arrays (same literal on every rank); expected: a list
    over ranks of a list over output leaves."""
    assert name not in cases, name
    assert len(expected) == ranks, (name, len(expected), ranks)
    cases[name] = dict(module=module, ranks=ranks, params=params,
                       expected=expected, source=source, replace=list(replace))


def same_on_all(ranks, *leaves):
    return [list(leaves) for _ in range(ranks)]


u32 = np.uint32
f32 = np.float32
A = np.array

# ---- collective_ops_test

OPS = "collective_ops_test/"

# DISABLED_ON_CPU upstream: values computed from the module.  Replica r
# broadcasts its id into u32[2,1] (p0) and f32[2,1] (p1); all-gather on
# dim 1 puts replica r's column at column r; reshape to [4].
ag = np.concatenate([np.full((2, 1), r, dtype=u32) for r in range(2)], axis=1)
assert (ag.reshape(4) == A([0, 1, 0, 1])).all()
case("AllGatherMixedTypes", OPS + "AllGatherMixedTypes.hlo", 2, [],
     same_on_all(2, ag.reshape(4), ag.reshape(4).astype(f32)),
     "every replica outputs tuple(u32 {0, 1, 0, 1}, f32 {0.0, 1.0, 0.0, 1.0}) (DISABLED_ON_CPU; computed)")

case("AllGather_Dim0", OPS + "AllGather_Dim0.hlo", 2, [],
     same_on_all(2, A([10, 15, 11, 16], dtype=u32)),
     "every replica outputs u32[4] {10, 15, 11, 16}")

case("AllGather_Dim0_UseGlobalDevices", OPS + "AllGather_Dim0_UseGlobalDevices.hlo", 2, [],
     same_on_all(2, A([10, 15, 11, 16], dtype=u32)),
     "every replica outputs u32[4] {10, 15, 11, 16}")

case("AllGather_Dim1", OPS + "AllGather_Dim1.hlo", 2, [],
     same_on_all(2, A([10, 11, 15, 16], dtype=u32)),
     "every replica outputs u32[4] {10, 11, 15, 16}")

case("AllReduceAnd_Pred", OPS + "AllReduceAnd_Pred.hlo", 2, [],
     same_on_all(2, A([False])),
     "both replicas output pred[1] {false}")
case("AllReduceAnd_Pred--or", OPS + "AllReduceAnd_Pred.hlo", 2, [],
     same_on_all(2, A([True])),
     'AllReduceOr_Pred, same text with "or": both get {true}',
     replace=["and(x, y)|or(x, y)"])

# DISABLED_ON_CPU: data0 = c0 on replica 0, c1 on replica 1; data1 = c2 / c3;
# result = all-reduce(data0) + all-reduce(data1) on every replica.
c0 = A([1, 2, 3, 4, 5, 6, 7, 8])
c1 = A([11, 12, 13, 14, 15, 16, 17, 18])
c2 = A([2, 3, 4, 5, 6, 7, 8, 9])
c3 = A([12, 13, 14, 15, 16, 17, 18, 19])
ar = ((c0 + c1) + (c2 + c3)).astype(f32)
assert (ar == A([26, 30, 34, 38, 42, 46, 50, 54])).all()
case("AllReduceReassociate", OPS + "AllReduceReassociate.hlo", 2, [],
     same_on_all(2, ar),
     "both replicas equal and == f32 {26, 30, 34, 38, 42, 46, 50, 54} (DISABLED_ON_CPU; computed)")

# MakeCrsModule template: DATATYPE=s32, OP=add in the module as given; the
# sidecar gives every op and type, the module text is turned into those by
# the same literal replacement the template does (DATATYPE, OP).
T = OPS + "AllReduceTwoReplicasOneOperand_int32.hlo"
DTYPES = {  # HLO type -> (numpy type of the .npy files, signed?)
    "s32": (np.int32, True), "s8": (np.int8, True), "u8": (np.uint8, False),
    "u32": (np.uint32, False), "s64": (np.int64, True), "u64": (np.uint64, False),
    "f32": (np.float32, True), "f64": (np.float64, True),
    "f16": (np.float16, True), "bf16": (np.float32, True),  # bf16 as f32 (exact)
}
RESULTS = {  # sidecar: input {1,2,3} and, for signed types, {-1,-2,-3}
    (1,): {"add": [2, 4, 6], "multiply": [1, 4, 9], "maximum": [1, 2, 3], "minimum": [1, 2, 3]},
    (-1,): {"add": [-2, -4, -6], "multiply": [1, 4, 9], "maximum": [-1, -2, -3], "minimum": [-1, -2, -3]},
}
for dt, (npt, signed) in DTYPES.items():
    for op in ("add", "multiply", "maximum", "minimum"):
        for sign in ((1, -1) if signed else (1,)):
            inp = A([1, 2, 3]) * sign
            want = RESULTS[(sign,)][op]
            # the rule behind the sidecar's numbers: op over the two equal copies
            rule = {"add": inp + inp, "multiply": inp * inp,
                    "maximum": np.maximum(inp, inp), "minimum": np.minimum(inp, inp)}[op]
            assert (rule == A(want)).all(), (dt, op, sign)
            if dt == "s32" and op == "add":
                name = "AllReduceTwoReplicasOneOperand_int32"
                rep = []
            else:
                name = f"AllReduceTwoReplicasOneOperand_int32--{dt}-{op}"
                rep = ([f"s32|{dt}"] if dt != "s32" else []) + \
                      ([f"add(x, y)|{op}(x, y)"] if op != "add" else [])
            if sign < 0:
                name += "-neg"
            case(name, T, 2, [inp.astype(npt)],
                 same_on_all(2, A(want).astype(npt)),
                 f"DATATYPE={dt}, OP={op}: input {{{', '.join(map(str, inp))}}} -> "
                 f"{{{', '.join(map(str, want))}}} on every replica",
                 replace=rep)

case("AllReduce_CombinableAllReduces", OPS + "AllReduce_CombinableAllReduces.hlo", 2,
     [A([1, 2, 3, 4, 5], dtype=f32), A([7, 3, 4, 1, 2], dtype=f32)],
     same_on_all(2, A([2, 4, 6, 8, 10], dtype=f32), A([14, 6, 8, 2, 4], dtype=f32)),
     "p0={1,2,3,4,5}, p1={7,3,4,1,2}: every replica outputs tuple({2,4,6,8,10}, {14,6,8,2,4})")

# Rule: singleton groups, so replica i outputs scalar u32 i.
case("AllReduce_Degenerate", OPS + "AllReduce_Degenerate.hlo", 4, [],
     [[A(i, dtype=u32)] for i in range(4)],
     "4 replicas: replica i outputs scalar u32 i (computed from the rule)")

case("AllReduce_sum_float32_2D", OPS + "AllReduce_sum_float32_2D.hlo", 2,
     [A([[1, 2], [3, 4]], dtype=f32)],
     same_on_all(2, A([[2, 4], [6, 8]], dtype=f32)),
     "p={{1,2},{3,4}} on both replicas: every replica outputs {{2,4},{6,8}}")

case("ReduceScatter", OPS + "ReduceScatter.hlo", 2, [],
     [[A([11, 13, 15, 17], dtype=u32)], [A([19, 21, 23, 25], dtype=u32)]],
     "replica 0 -> u32 {11, 13, 15, 17}; replica 1 -> u32 {19, 21, 23, 25}")

case("ReduceScatterConstrainLayout", OPS + "ReduceScatterConstrainLayout.hlo", 2,
     [np.arange(1, 17, dtype=u32)],
     [[A([2, 4, 6, 8, 10, 12, 14, 16], dtype=u32)],
      [A([18, 20, 22, 24, 26, 28, 30, 32], dtype=u32)]],
     "param = {1,...,16} on both: replica 0 -> {2,4,...,16}; replica 1 -> {18,20,...,32}")

# DISABLED_ON_CPU: reduce-scatter(data0) + reduce-scatter(data1), replica r
# keeps block r of 4 (the _ReduceScatterCreator form: all-reduce, then
# dynamic-slice at replica-id * 4).
rs = (c0 + c1) + (c2 + c3)
rs_blocks = [rs[4 * r:4 * r + 4].astype(u32) for r in range(2)]
assert (rs_blocks[0] == A([26, 30, 34, 38])).all() and (rs_blocks[1] == A([42, 46, 50, 54])).all()
for stem in ("ReduceScatterReassociate", "ReduceScatterReassociate_ReduceScatterCreator"):
    case(stem, OPS + stem + ".hlo", 2, [],
         [[rs_blocks[0]], [rs_blocks[1]]],
         "replica 0 -> u32 {26, 30, 34, 38}; replica 1 -> u32 {42, 46, 50, 54} (DISABLED_ON_CPU; computed)")

# ---- collective_ops_e2e_test

E2E = "collective_ops_e2e_test/"
case("AsyncAllGatherMixedTypes", E2E + "AsyncAllGatherMixedTypes.hlo", 2, [],
     same_on_all(2, A([10, 15, 11, 16], dtype=u32), A([10, 15, 11, 16], dtype=f32)),
     "every replica outputs tuple(u32 {10, 15, 11, 16}, f32 {10.0, 15.0, 11.0, 16.0})")

# Rule: the sum of the replica ids 0 + 1.
case("AsyncAllReduce", E2E + "AsyncAllReduce.hlo", 2, [],
     same_on_all(2, A(sum(range(2)), dtype=u32)),
     "every replica outputs scalar u32 1 (= sum of replica ids 0+1)")


def write():
    os.makedirs(OUT, exist_ok=True)
    for name in sorted(os.listdir(OUT)):  # drop folders of cases no longer generated
        d = os.path.join(OUT, name)
        if os.path.isfile(os.path.join(d, "case.txt")) and name not in cases:
            shutil.rmtree(d)
    for name, c in cases.items():
        d = os.path.join(OUT, name)
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(os.path.join(d, "expected"))
        with open(os.path.join(d, "case.txt"), "w") as f:
            f.write(f"module {c['module']}\n")
            f.write(f"ranks {c['ranks']}\n")
            for r in c["replace"]:
                f.write(f"replace {r}\n")
            f.write(f"source {c['source']}\n")
        for r in range(c["ranks"]):
            for p, a in enumerate(c["params"]):
                np.save(os.path.join(d, f"param{p}.rank{r}.npy"), a)
            for i, a in enumerate(c["expected"][r]):
                np.save(os.path.join(d, "expected", f"out{i}.rank{r}.npy"), np.asarray(a))
    print(f"gen_peer_e2e: wrote {len(cases)} cases into {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.exit("usage: scripts/gen_peer_e2e.py")
    write()
