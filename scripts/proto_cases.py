#!/usr/bin/env python3
"""proto_cases.py [--check] [ROOT]: the proto cases of scripts/test_proto.sh,
built byte by byte with a small wire-format encoder (no protobuf library,
no XLA: the reader is tested without them; with the XLA environment,
scripts/xla/xla_syntax.py also reads XLA's own proto of every corpus
module).  Writes them under ROOT (default: the repository), or with
--check says whether the files there are what it would write (exit 1 if
not: a case was edited here and not regenerated, or the reverse):

  tests/ir/proto/NAME.{hlo_module,hlo,snapshot}.pb  a module in one of
        XLA's binary forms; NAME.hlo the same module as HLO text (hlo-opt
        must print both the same) and NAME.note the note hlo-opt must give;
  tests/ir/malformed/proto_NAME.hlo_module.pb  a broken one, with .err, the
        error line every tool must print (exit 2), as run_golden.sh takes
        the malformed text cases;
  tests/ir/snapshot/NAME.snapshot.pb (NAME.rank<r>.snapshot.pb for a run of
        several devices)  an HloSnapshot to replay (hlo-run --snapshot),
        with NAME.want: the exit status, then a line the replay must print.

Field numbers are XLA's (src/ir/hlo.proto names each)."""
import math
import os
import struct
import sys


# --- the wire format --------------------------------------------------

def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire_type):
    return varint(field << 3 | wire_type)


def V(field, n):
    """A varint field (int, bool, enum)."""
    return key(field, 0) + varint(n)


def L(field, data):
    """A length-delimited field: bytes, a string or a nested message."""
    if isinstance(data, str):
        data = data.encode()
    return key(field, 2) + varint(len(data)) + data


def M(field, *parts):
    """A nested message made of parts."""
    return L(field, b"".join(parts))


def packed(field, values):
    return L(field, b"".join(varint(v) for v in values))


def f32s(field, values):
    return L(field, b"".join(struct.pack("<f", v) for v in values))


# --- HLO messages -----------------------------------------------------

F32, S32, PRED, TUPLE = 11, 4, 1, 13


def shape(etype, dims=(), field=3, layout=True, extra=b""):
    parts = [V(2, etype)]
    if dims:
        parts.append(packed(3, dims))
    if layout and etype != TUPLE:
        parts.append(M(5, packed(1, list(range(len(dims) - 1, -1, -1)))) if dims else M(5))
    return M(field, *parts, extra)


def tuple_shape(*elems, field=3):
    return M(field, V(2, TUPLE), *[e for e in elems])


def instr(name, opcode, id_, shp, operands=(), *extra):
    parts = [L(1, name), L(2, opcode), shp, V(35, id_)]
    if operands:
        parts.append(packed(36, operands))
    return M(2, *parts, *extra)


def computation(name, id_, root, *instrs, field=3):
    return M(field, L(1, name), *instrs, V(5, id_), V(6, root))


def module(name, entry_id, *comps, entry_name=None, extra=b""):
    return L(1, name) + (L(2, entry_name) if entry_name else b"") + b"".join(comps) + V(6, entry_id) + extra


def param(name, id_, n, shp):
    return instr(name, "parameter", id_, shp, (), V(9, n))


def add_module(extra_on_add=b"", mod_extra=b""):
    return module("add_f32", 1, computation(
        "main", 1, 4,
        param("x", 1, 0, shape(F32, [4])),
        param("y", 2, 1, shape(F32, [4])),
        instr("c", "constant", 3, shape(F32, [4]),
              (), M(8, shape(F32, [4], field=1), f32s(8, [1.0, 2.5, -3.0, 0.125]))),
        instr("sum", "add", 4, shape(F32, [4]), (1, 3), extra_on_add)), extra=mod_extra)


ADD_TEXT = """HloModule add_f32, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[4]{0}}

ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %c = f32[4]{0} constant({1, 2.5, -3, 0.125})
  ROOT %sum = f32[4]{0} add(%x, %c)
}
"""

ADD_REDUCER_TEXT = """%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
"""

ADD_REDUCER = computation("add", 7, 9,
                          param("a", 7, 0, shape(F32)), param("b", 8, 1, shape(F32)),
                          instr("s", "add", 9, shape(F32), (7, 8)))


def good_cases():
    cases = {}
    cases["add_f32.hlo_module.pb"] = (add_module(), ADD_TEXT, None)

    # The three places replica groups are written: the iota list of field
    # 92 (XLA from 2025), the iota list inside collective_device_list
    # (older XLA, Neuron's), and explicit groups in either.
    iota92 = M(92, V(1, 2), V(2, 2), packed(3, [4]), packed(4, [0]))
    iota_old = M(87, M(2, V(1, 2), V(2, 2), packed(3, [2, 2]), packed(4, [1, 0])))
    explicit = M(87, M(1, packed(1, [0, 1])), M(1, packed(1, [2, 3])))
    cases["replica_groups.hlo_module.pb"] = (module("groups", 2, ADD_REDUCER, computation(
        "main", 2, 4,
        param("p", 1, 0, shape(F32, [8])),
        instr("ar", "all-reduce", 2, shape(F32, [8]), (1,), V(38, 7), iota92),
        instr("ar2", "all-reduce", 3, shape(F32, [8]), (2,), V(38, 7), iota_old),
        instr("ag", "all-gather", 4, shape(F32, [16]), (3,), packed(14, [0]), explicit))),
        """HloModule groups, entry_computation_layout={(f32[8]{0})->f32[16]{0}}

""" + ADD_REDUCER_TEXT + """
ENTRY %main (p: f32[8]) -> f32[16] {
  %p = f32[8]{0} parameter(0)
  %ar = f32[8]{0} all-reduce(%p), replica_groups=[2,2]<=[4], to_apply=%add
  %ar2 = f32[8]{0} all-reduce(%ar), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=%add
  ROOT %ag = f32[16]{0} all-gather(%ar2), replica_groups={{0,1},{2,3}}, dimensions={0}
}
""", None)

    # A while loop whose computations come after the entry in the proto
    # (a while calls its body, then its condition), and a schedule that orders the entry against the proto's order.
    cond = computation("cond", 3, 13,
                       param("cp", 11, 0, tuple_shape(shape(S32, field=4))),
                       instr("ci", "get-tuple-element", 12, shape(S32), (11,), V(13, 0)),
                       instr("lt", "compare", 13, shape(PRED), (12, 14), L(63, "LT")),
                       instr("ten", "constant", 14, shape(S32), (), M(8, shape(S32, field=1), packed(4, [10]))))
    body = computation("body", 4, 24,
                       param("bp", 21, 0, tuple_shape(shape(S32, field=4))),
                       instr("bi", "get-tuple-element", 22, shape(S32), (21,), V(13, 0)),
                       instr("one", "constant", 23, shape(S32), (), M(8, shape(S32, field=1), packed(4, [1]))),
                       instr("next", "tuple", 24, tuple_shape(shape(S32, field=4)), (25,)),
                       instr("inc", "add", 25, shape(S32), (22, 23)))
    entry = computation("main", 5, 33,
                        instr("loop", "while", 33, tuple_shape(shape(S32, field=4)), (32,), packed(38, [4, 3])),
                        instr("init", "tuple", 32, tuple_shape(shape(S32, field=4)), (31,)),
                        param("start", 31, 0, shape(S32)))
    schedule = M(7, M(1, V(1, 5), M(2, packed(1, [31, 32, 33]))),
                 M(1, V(1, 3), M(2, packed(1, [11, 12, 14, 13]))),
                 M(1, V(1, 4), M(2, packed(1, [21, 22, 23, 25, 24]))))
    cases["while_scheduled.hlo_module.pb"] = (module("loop", 5, entry, cond, body, extra=schedule), """HloModule loop, is_scheduled=true, entry_computation_layout={(s32[])->(s32[])}

ENTRY %main (start: s32[]) -> (s32[]) {
  %start = s32[] parameter(0)
  %init = (s32[]) tuple(%start)
  ROOT %loop = (s32[]) while(%init), condition=%cond, body=%body
}

%cond (cp: (s32[])) -> pred[] {
  %cp = (s32[]) parameter(0)
  %ci = s32[] get-tuple-element(%cp), index=0
  %ten = s32[] constant(10)
  ROOT %lt = pred[] compare(%ci, %ten), direction=LT
}

%body (bp: (s32[])) -> (s32[]) {
  %bp = (s32[]) parameter(0)
  %bi = s32[] get-tuple-element(%bp), index=0
  %one = s32[] constant(1)
  %inc = s32[] add(%bi, %one)
  ROOT %next = (s32[]) tuple(%inc)
}
""", None)

    # Ids as XLA writes them (the computation's id in the high 32 bits: far
    # from dense), one shape given to several instructions (a constant
    # among them), a slice, and metadata before a backend_config (the
    # reader gives both as the text would hold them, in that order).
    hi = 2 << 32
    md = M(7, L(2, "jit(f)/s"), L(3, "f.py"), V(4, 3))
    cases["sparse_ids.hlo_module.pb"] = (module("sparse", 2, ADD_REDUCER, computation(
        "main", 2, hi + 100,
        param("p", hi + 1, 0, shape(F32, [8])),
        instr("sl", "slice", hi + 7, shape(F32, [4]), (hi + 1,), M(17, V(1, 0), V(2, 8), V(3, 2)), md,
              L(43, '{"k":1}')),
        instr("c", "constant", hi + 9, shape(F32, [4]), (),
              M(8, shape(F32, [4], field=1), f32s(8, [1.0, 2.0, 3.0, 4.0]))),
        instr("ar", "all-reduce", hi + 50, shape(F32, [4]), (hi + 7,), V(38, 7), M(87, M(1, packed(1, [0, 1])))),
        instr("r", "add", hi + 100, shape(F32, [4]), (hi + 50, hi + 9), md))),
        """HloModule sparse, entry_computation_layout={(f32[8]{0})->f32[4]{0}}

""" + ADD_REDUCER_TEXT + """
ENTRY %main (p: f32[8]) -> f32[4] {
  %p = f32[8]{0} parameter(0)
  %sl = f32[4]{0} slice(%p), slice={[0:8:2]}, metadata={op_name="jit(f)/s" source_file="f.py" source_line=3}, backend_config={"k":1}
  %c = f32[4]{0} constant({1, 2, 3, 4})
  %ar = f32[4]{0} all-reduce(%sl), replica_groups={{0,1}}, to_apply=%add
  ROOT %r = f32[4]{0} add(%ar, %c), metadata={op_name="jit(f)/s" source_file="f.py" source_line=3}
}
""", None)

    # A computation's execution thread, kept as the text gives it (quoted,
    # escapes and all).
    threaded = M(3, L(1, "main"), param("x", 1, 0, shape(F32, [4])),
                 instr("n", "negate", 2, shape(F32, [4]), (1,)), V(5, 1), V(6, 2), L(8, 'ho"st'))
    cases["execution_thread.hlo_module.pb"] = (module("t", 1, threaded), """HloModule t, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%x)
}, execution_thread="ho\\"st"
""", None)

    # An HloSnapshot (module, arguments and result of one run) and an
    # HloProto around the same module; a field from a newer schema.
    arg = M(2, shape(F32, [4], field=1), f32s(8, [0, 0, 0, 0]))
    cases["add_f32_snapshot.snapshot.pb"] = (M(1, M(1, add_module())) + arg + arg, ADD_TEXT, None)
    cases["add_f32_hlo_proto.hlo.pb"] = (M(1, add_module()), ADD_TEXT, None)
    cases["newer_field.hlo_module.pb"] = (add_module(V(500, 1) + M(82, V(1, 3))), ADD_TEXT,
                            "hlo-opt: note: FILE: read as an HloModuleProto; not carried: "
                            "HloInstructionProto.field 500")
    return cases


# --- snapshots to replay -------------------------------------------------

def f32(v):
    """v rounded to f32 (nearest even), as a Python float."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def ulps(v, k):
    """The f32 k steps above v (v > 0)."""
    return struct.unpack("<f", struct.pack("<i", struct.unpack("<i", struct.pack("<f", v))[0] + k))[0]


def literal(field, values, dims=None):
    return M(field, shape(F32, dims or [len(values)], field=1), f32s(8, values))


def snapshot(module_bytes, args, result):
    return M(1, M(1, module_bytes)) + b"".join(literal(2, a) for a in args) + \
        (literal(3, result) if result is not None else b"") + L(4, "Host")


def exp_module():
    return module("exp_f32", 1, computation(
        "main", 1, 2,
        param("x", 1, 0, shape(F32, [4])),
        instr("e", "exponential", 2, shape(F32, [4]), (1,))))


def all_reduce_module():
    devices = M(15, V(1, 2), V(2, 1), M(3, packed(1, [0, 1])))
    return module("sum2", 2, ADD_REDUCER, computation(
        "main", 2, 2,
        param("p", 1, 0, shape(F32, [4])),
        instr("ar", "all-reduce", 2, shape(F32, [4]), (1,), V(38, 7))), extra=devices)


def slice_to_dynamic_module():
    """x: f32[8], n: s32[] -> custom-call SliceToDynamic(x, n): f32[<=8]."""
    return module("dyn", 1, computation(
        "main", 1, 3,
        param("x", 1, 0, shape(F32, [8])),
        param("n", 2, 1, shape(S32)),
        instr("d", "custom-call", 3, shape(F32, [8], extra=packed(6, [1])), (1, 2), L(28, "SliceToDynamic"))))


def dynamic_snapshot(recorded):
    """The module above run on x = 1..8, n = 3; XLA records the result at
    its runtime shape, as f32[3]."""
    x = [float(v) for v in range(1, 9)]
    return M(1, M(1, slice_to_dynamic_module())) + literal(2, x) + \
        M(2, shape(S32, field=1), packed(4, [3])) + literal(3, recorded) + L(4, "Host")


def snapshot_cases():
    """{NAME: ([bytes of each rank's snapshot], exit status, a line the replay prints)}."""
    x, y = [0.5, -1.25, 3.0, 1e-3], [9.0, 9.0, 9.0, 9.0]
    c = [1.0, 2.5, -3.0, 0.125]
    total = [f32(a + b) for a, b in zip(x, c)]
    off = list(total)
    off[2] = 1.401298464324817e-45     # 0 recorded as the smallest subnormal: one ulp, in the exact class
    e = [f32(math.exp(v)) for v in x]
    near, far = list(e), list(e)
    near[1] = ulps(e[1], 3)            # within the 4 ulps a transcendental may be off
    far[1] = ulps(e[1], 12)
    x1 = [1.0, 2.0, -0.5, 4.0]
    s2 = [f32(a + b) for a, b in zip(x, x1)]
    return {
        "add": ([snapshot(add_module(), [x, y], total)], 0,
                "hlo-run: snapshot: out0 f32[4]{0}: within exact (bitwise)"),
        "add_off": ([snapshot(add_module(), [x, y], off)], 1,
                    "hlo-run: snapshot: out0 f32[4]{0}: DIFFERS beyond exact (bitwise): 1 of 4 elements, first [2]: "
                    "0 here, 1.4013e-45 recorded"),
        "exp_near": ([snapshot(exp_module(), [x], near)], 0,
                     "hlo-run: snapshot: out0 f32[4]{0}: within transcendental (ulp 4 in f32; largest "),
        "exp_far": ([snapshot(exp_module(), [x], far)], 1,
                    "hlo-run: snapshot: out0 f32[4]{0}: DIFFERS beyond transcendental (ulp 4 in f32; largest "),
        "no_result": ([snapshot(add_module(), [x, y], None)], 2,
                      "error: the snapshot records no result to compare with"),
        "wrong_argument": ([snapshot(add_module(), [x[:3], y], total)], 2,
                           "error: arguments[0] is f32[3]{0}; parameter 0 (%x) is f32[4]{0}"),
        "dynamic": ([dynamic_snapshot([1.0, 2.0, 3.0])], 0,
                    "hlo-run: snapshot: out0 f32[3]: within exact (bitwise)"),
        "dynamic_size_differs": ([dynamic_snapshot([1.0, 2.0, 3.0, 4.0])], 1,
                                 "hlo-run: snapshot: out0 f32[3]: DIFFERS beyond exact (bitwise): recorded f32[4]{0}"),
        "two_ranks": ([snapshot(all_reduce_module(), [x], s2), snapshot(all_reduce_module(), [x1], s2)], 0,
                      "hlo-run: snapshot: rank 1: out0 f32[4]{0}: within accumulation (scaled ulp 64 in f32; "
                      "largest 0)"),
    }


def elided(path):
    """A field path as errors give it: one too long to read keeps its ends."""
    n = len(path)
    return path if n <= 200 else "%s...(%d characters)...%s" % (path[:100], n - 150, path[-50:])


def bad_cases():
    good = add_module()
    cases = {}
    cases["truncated"] = (good[:len(good) - 9],
                          "FILE: computations[0]: error: length 170 runs past the end of its message (163 bytes left: "
                          "truncated)")
    cases["wrong_wire_type"] = (module("m", 1, computation("main", 1, 1, M(2, V(1, 5)))),
                                "FILE: computations[0].instructions[0].name: error: written as varint, "
                                "but the field is length-delimited")
    cases["dangling_operand"] = (module("m", 1, computation(
        "main", 1, 2, param("x", 1, 0, shape(F32)), instr("n", "negate", 2, shape(F32), (9,)))),
        "FILE: computations[0].instructions[1] (%n): error: operand_ids[0]: no instruction 9 in computation main")
    cases["cycle"] = (module("m", 1, computation(
        "main", 1, 2, instr("a", "negate", 1, shape(F32), (2,)), instr("b", "negate", 2, shape(F32), (1,)))),
        "FILE: computations[0].instructions[1] (%b): error: operand %a (id 1) depends on this instruction: "
        "the operands form a cycle")
    nest = b""
    for _ in range(200):
        nest = M(4, V(2, TUPLE), nest)
    cases["nesting_bomb"] = (module("m", 1, computation("main", 1, 1, M(2, L(1, "p"), M(3, V(2, TUPLE), nest)))),
                             "FILE: %s: error: messages nested more than 96 deep" % elided(
                                 # the module, a computation, an instruction, its shape and 94 more levels
                                 "computations[0].instructions[0].shape" + ".tuple_shapes[0]" * 94))
    cases["huge_length"] = (L(1, "m") + key(3, 2) + varint(1 << 40) + b"\x00" * 16,
                            "FILE: computations[0]: error: length 1099511627776 runs past the end of its "
                            "message (16 bytes left: truncated)")
    cases["group_wire_type"] = (L(1, "m") + key(3, 3),
                                "FILE: computations[0]: error: group start fields are not used by XLA's protos (not a "
                                "proto, or corrupt)")
    cases["unknown_element_type"] = (module("m", 1, computation("main", 1, 1, param("x", 1, 0, shape(99)))),
                                     "FILE: computations[0].instructions[0].shape (%x): error: element_type 99 is not a "
                                     "PrimitiveType hlocheck knows")
    cases["f6_element_type"] = (module("m", 1, computation("main", 1, 1, param("x", 1, 0, shape(35, [2])))),
                                "FILE: computations[0].instructions[0].shape (%x): error: element_type F6E3M2FN is not "
                                "supported by hlocheck")
    cases["sparse_layout"] = (module("m", 1, computation("main", 1, 1, param("x", 1, 0, M(
        3, V(2, F32), packed(3, [4]), M(5, packed(1, [0]), packed(9, [1])))))),
        "FILE: computations[0].instructions[0].shape (%x): error: layout.dim_level_types[0] is 1: sparse "
        "arrays are not supported")
    cases["mesh_axes_groups"] = (module("m", 2, ADD_REDUCER, computation(
        "main", 2, 2, param("p", 1, 0, shape(F32, [8])),
        instr("ar", "all-reduce", 2, shape(F32, [8]), (1,), V(38, 7), M(93, V(1, 1))))),
        "FILE: computations[1].instructions[1] (%ar): error: mesh_axes_replica_group_list is set: replica groups "
        "given as mesh axes are not supported by hlocheck")
    cases["no_entry"] = (module("m", 8, computation("main", 1, 1, param("x", 1, 0, shape(F32)))),
                         "FILE: error: no computation has the entry_computation_id 8 or the name ''")
    cases["duplicate_id"] = (module("m", 1, computation(
        "main", 1, 1, param("x", 1, 0, shape(F32)), param("y", 1, 1, shape(F32)))),
        "FILE: computations[0].instructions[1].id (%y): error: id 1 is also the id of instructions[0]")
    far = 3 << 32       # ids as XLA writes them: no table, a search (proto.c index_ids)
    cases["duplicate_far_id"] = (module("m", 1, computation(
        "main", 1, far + 9, param("x", far + 9, 0, shape(F32)), param("y", far + 700, 1, shape(F32)),
        param("z", far + 9, 2, shape(F32)))),
        "FILE: computations[0].instructions[2].id (%z): error: id 12884901897 is also the id of instructions[0]")
    cases["name_start"] = (module("m", 1, computation("-ain", 1, 1, param("x", 1, 0, shape(F32)))),
        "FILE: computations[0]: error: name '-ain' is not an HLO computation name")
    cases["unknown_opcode"] = (module("m", 1, computation(
        "main", 1, 2, param("x", 1, 0, shape(F32)), instr("n", "frobnicate", 2, shape(F32), (1,)))),
        "FILE: computations[0].instructions[1] (%n): error: unknown opcode 'frobnicate'")
    cases["negative_dimension"] = (module("m", 1, computation(
        "main", 1, 1, param("x", 1, 0, M(3, V(2, F32), packed(3, [-4]))))),
        "FILE: computations[0].instructions[0].shape (%x): error: dimension 0 is -4")
    cases["empty_literal_bomb"] = (module("m", 1, computation("main", 1, 1, instr(
        "c", "constant", 1, shape(S32, [8, 1 << 40, 100, 0]),
        (), M(8, shape(S32, [8, 1 << 40, 100, 0], field=1))))),
        "FILE: computations[0].instructions[0].literal (%c): error: a constant with no elements whose text would be "
        "over 65536 empty lists (dimensions before the first 0 too large)")
    cases["binary_garbage"] = (bytes(range(1, 200)) * 3,
                               "FILE: error: neither HLO text nor an HloModuleProto, HloProto or HloSnapshot: "
                               "field number 0 in a HloModuleProto (not a proto, or corrupt)")
    return cases


def files():
    """{path under the root: bytes} of every case."""
    out = {}
    for name, (data, text, note) in good_cases().items():
        path = "tests/ir/proto/" + name
        base = path[:path.index(".")]
        out[path] = data
        out[base + ".hlo"] = text.encode()
        kind = {"hlo_module": "HloModuleProto", "hlo": "HloProto", "snapshot": "HloSnapshot"}[name.split(".")[1]]
        note = note or "hlo-opt: note: FILE: read as an " + kind
        out[base + ".note"] = (note.replace("FILE", path) + "\n").encode()
    for name, (ranks, status, line) in snapshot_cases().items():
        base = "tests/ir/snapshot/" + name
        if len(ranks) == 1:
            out[base + ".snapshot.pb"] = ranks[0]
        else:
            for r, data in enumerate(ranks):
                out["%s.rank%d.snapshot.pb" % (base, r)] = data
        out[base + ".want"] = ("%d\n%s\n" % (status, line)).encode()
    for name, (data, err) in bad_cases().items():
        path = "tests/ir/malformed/proto_" + name + ".hlo_module.pb"   # apart from the text cases' names
        out[path] = data
        out[path[:-len(".hlo_module.pb")] + ".err"] = (err.replace("FILE", path) + "\n").encode()
    return out


def main():
    args = sys.argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    stale = []
    for path, data in sorted(files().items()):
        full = os.path.join(root, path)
        if check:
            try:
                same = open(full, "rb").read() == data
            except OSError:
                same = False
            if not same:
                stale.append(path)
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
    if stale:
        print("proto_cases: not what scripts/proto_cases.py writes (run it to regenerate): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
