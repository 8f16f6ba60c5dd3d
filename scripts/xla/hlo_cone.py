"""hlo_cone.py: which kinds of computation each output of a module depends
on, read with XLA's own HLO parser (jaxlib's HloModule bindings), so that
xla_diff.py compares each output under the tolerance its ops call for.

    leaves = output_classes(xc, text)    # [(set of class names, element type)] per result leaf

The classes (tolerance.py gives each its tolerance):
  exact           every other op: HLO fixes the bits
  transcendental  float exp, log, tanh, sin, pow, erf, rsqrt, ... (XLA:CPU's
                  own approximations)
  complex         complex divide, abs, sign and transcendentals (each
                  side's own algorithm); complex-power: power
  batch-norm      batch-norm-training, -inference, -grad (XLA expands them
                  with its own formulas)
  contraction     a float multiply and a float add or subtract in the same
                  cone (XLA:CPU fuses them into one FMA, one rounding)
  accumulation    a float sum or product over many elements whose order or
                  precision the backend chooses: reduce, reduce-window,
                  all-reduce, reduce-scatter, scatter and select-and-scatter
                  with a float add or multiply, dot, convolution, fft,
                  cholesky, triangular-solve, batch-norm-*
  unspecified     rng (and rng-get-and-update-state, XLA's expansion of it):
                  its values are the implementation's own
"""
import re

TRANSCENDENTAL = {
    "exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "tanh", "sine", "cosine",
    "tan", "atan2", "power", "erf", "rsqrt", "cbrt", "acos", "acosh", "asin", "asinh", "atanh", "cosh", "sinh",
}
ALWAYS_ACCUMULATE = {"dot", "convolution", "fft", "cholesky", "triangular-solve"}
BATCH_NORM = {"batch-norm-training", "batch-norm-inference", "batch-norm-grad"}
ACCUMULATE_WITH_REDUCER = {
    "reduce", "reduce-window", "all-reduce", "all-reduce-start", "reduce-scatter", "scatter",
    "select-and-scatter",
}
UNSPECIFIED = {"rng", "rng-get-and-update-state"}     # its values, and XLA's expansion of it from its global state
# Complex ops whose algorithm is the implementation's own (C's Annex G here,
# XLA's emitters there: scaling in divide and abs, no correct rounding).
COMPLEX_OWN_ALGORITHM = {"divide", "abs", "sign", "sqrt", "rsqrt", "exponential", "exponential-minus-one",
                         "log", "log-plus-one", "sine", "cosine", "tan", "tanh"}
COMPLEX_TYPE = re.compile(r"^c(64|128)$")
FLOAT_TYPE = re.compile(r"^(f\d+\w*|bf16|c64|c128)$")
CALLS = re.compile(r"\b(?:to_apply|calls|body|condition|select|scatter|comparator|true_computation|"
                   r"false_computation)=%?([\w.\-]+)")
CALL_LISTS = re.compile(r"\b(?:branch_computations|called_computations)=\{([^}]*)\}")
LEAF = re.compile(r"\b([a-z][a-z0-9]*)\[")


INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?[^\s=]+\s*=\s*(.*?)\s([a-z][a-z0-9\-]*)\(")


def _parts(instr):
    """(opcode, element types of its shape, called computation names) from
    the instruction's text as XLA prints it."""
    text = instr.to_string()
    m = INSTR.match(text)
    shape, op = (m.group(1), m.group(2)) if m else ("", "")
    called = CALLS.findall(text)
    for group in CALL_LISTS.findall(text):
        called += [c.strip().lstrip("%") for c in group.split(",") if c.strip()]
    return op, LEAF.findall(shape), called


class Module:
    def __init__(self, xc, text):
        self.hm = xc.hlo.hlo_module_from_text(text)
        self.comps = {c.name: c for c in self.hm.computations()}
        printed = self.hm.to_string()
        entry = re.search(r"^ENTRY %?([\w.\-]+)", printed, re.M)
        self.entry = self.comps[entry.group(1)]
        block = printed[entry.start():]
        root = re.search(r"^\s*ROOT %?([\w.\-]+)", block, re.M)
        self.by_name = {i.name: i for i in self.entry.instructions()}
        self.root = self.by_name[root.group(1)]
        self._comp_classes = {}

    def classes_of_instr(self, op, types, called, operand_types=()):
        is_float = any(FLOAT_TYPE.match(t) for t in types)
        out = set()
        if op in UNSPECIFIED:
            out.add("unspecified")
        if is_float and op in TRANSCENDENTAL:
            out.add("transcendental")
        is_complex = any(COMPLEX_TYPE.match(t) for t in list(types) + list(operand_types))
        if is_complex and op in COMPLEX_OWN_ALGORITHM:
            out.add("complex")
        if is_complex and op == "power":
            out.add("complex-power")
        if is_float and op in BATCH_NORM:
            out.add("batch-norm")
        acc = op in ALWAYS_ACCUMULATE and is_float
        if op in ACCUMULATE_WITH_REDUCER and called:
            inner = set()
            for c in called:
                inner |= self.ops_of_computation(c)
            acc = acc or bool(inner & {"float:add", "float:multiply", "float:subtract"})
        if acc:
            out.add("accumulation")
            # the types it accumulates in: an error of one ulp of the
            # narrowest of them can reach the output
            out |= {"acctype:" + t for t in types if FLOAT_TYPE.match(t)}
        return out

    def ops_of_computation(self, name, seen=None):
        """'float:OP' / 'other:OP' / 'class:C' for every instruction reachable in computation name."""
        if name in self._comp_classes:
            return self._comp_classes[name]
        seen = seen or set()
        if name in seen or name not in self.comps:
            return set()
        seen.add(name)
        acc = set()
        for instr in self.comps[name].instructions():
            acc |= self._tags(instr, seen)
        self._comp_classes[name] = acc
        return acc

    def _tags(self, instr, seen):
        op, types, called = _parts(instr)
        is_float = any(FLOAT_TYPE.match(t) for t in types)
        operand_types = [t for o in instr.operands()[:1] for t in _parts(o)[1]]
        tags = {("float:" if is_float else "other:") + op}
        tags |= {"class:" + c for c in self.classes_of_instr(op, types, called, operand_types)}
        for c in called:
            tags |= self.ops_of_computation(c, seen)
        return tags

    def cone_tags(self, instr):
        tags, stack, seen = set(), [instr], set()
        while stack:
            i = stack.pop()
            if i.name in seen:
                continue
            seen.add(i.name)
            tags |= self._tags(i, set())
            stack.extend(i.operands())
        return tags

    def leaves(self, instr):
        """[(instruction whose cone a result leaf has, the leaf's element
        type)] in leaf order."""
        op, types, _ = _parts(instr)
        if op == "tuple":
            out = []
            for o in instr.operands():
                out += self.leaves(o)
            return out
        return [(instr, t) for t in types] or [(instr, "?")]


def classes_from_tags(tags):
    """The classes of a cone, with 'acctype:T' for each float type an
    accumulation in it works in."""
    out = {t[6:] for t in tags if t.startswith("class:")}
    if {"float:multiply"} <= tags and tags & {"float:add", "float:subtract"}:
        out.add("contraction")
    return out or {"exact"}


def output_classes(xc, text):
    """[(class set, element type)] of each result leaf, in leaf order
    (raises what XLA's parser raises)."""
    m = Module(xc, text)
    cache = {}
    out = []
    for instr, etype in m.leaves(m.root):
        if instr.name not in cache:
            cache[instr.name] = classes_from_tags(m.cone_tags(instr))
        out.append((cache[instr.name], etype))
    return out
