#!/usr/bin/env python3
"""gen_module.py: writes the generated HLO modules `make bench` measures.

    gen_module.py pipeline N OUT     about N instructions, 20% of them collectives
    gen_module.py parse MB OUT       the same structure with metadata, about MB megabytes
    gen_module.py step D F B R OUT   the demo's training step at width D, hidden F,
                                     batch B per device, R devices

pipeline / parse: a scheduled module (is_scheduled=true, replica_count=4) of
K parallel chains of blocks, written depth by depth so that the blocks of one
depth are independent (the combiners can group them) and each depth depends
on the one before (the reachability guard must split groups).  A block is ten
instructions, two of them collectives, in the shapes the flip passes match:

    a   = bf16[16,128] convert(h)                 h: the chain's previous output
    ag  = bf16[64,128] all-gather(a)              -- collective
    w   = f32[64,128]  convert(ag)                -- flip-ag-convert (#96)
    p   = f32[64,128]  multiply(w, w)
  even depths:
    q   = bf16[64,128] convert(p)
    rs  = bf16[16,128] reduce-scatter(q)          -- collective
    r   = f32[16,128]  convert(rs)
    g   = f32[16,128]  get-tuple-element(st)
    d   = f32[16,128]  add(r, g)                  -- flip-reduce-convert-add (#102)
    h'  = f32[16,128]  tanh(d)
  odd depths:
    s   = f32[16,128]  slice(p)
    q   = bf16[16,128] convert(s)
    ar  = bf16[16,128] all-reduce(q)              -- collective
    r   = f32[16,128]  convert(ar)
    g   = f32[16,128]  get-tuple-element(st)
    h'  = f32[16,128]  add(r, g)                  -- flip-reduce-convert-add (#102)

step: scripts/make_transformer_step.py's module (the one `make demo` checks)
with its width constants replaced, so the checker's overhead is measured on
the demo's own structure at a size where computing dominates.
"""
import os
import re
import sys

CHAINS = 8
BLOCK = 10

HEADER = """HloModule {name}, is_scheduled=true, replica_count=4

%add.f32 (a: f32[], b: f32[]) -> f32[] {{
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}}

%add.bf16 (a: bf16[], b: bf16[]) -> bf16[] {{
  %a = bf16[] parameter(0)
  %b = bf16[] parameter(1)
  ROOT %s = bf16[] add(%a, %b)
}}

"""


def block(c, k, chan, meta):
    """The ten lines of chain c at depth k (k >= 1); chan: first channel id."""
    h = f"%h.{c}.{k - 1}" if k > 1 else "%x"
    s = f".{c}.{k}"
    m = ""
    if meta:
        m = (f', metadata={{op_name="jit(train_step)/layer_{k}/chain_{c}/op" '
             f'source_file="/home/user/project/model/transformer.py" source_line={100 + k % 900}}}')
    lines = [
        f"%a{s} = bf16[16,128] convert({h}){m}",
        f"%ag{s} = bf16[64,128] all-gather(%a{s}), channel_id={chan}, replica_groups={{}}, dimensions={{0}}{m}",
        f"%w{s} = f32[64,128] convert(%ag{s}){m}",
        f"%p{s} = f32[64,128] multiply(%w{s}, %w{s}){m}",
    ]
    if k % 2 == 0:
        lines += [
            f"%q{s} = bf16[64,128] convert(%p{s}){m}",
            f"%rs{s} = bf16[16,128] reduce-scatter(%q{s}), channel_id={chan + 1}, replica_groups={{}}, "
            f"dimensions={{0}}, to_apply=%add.bf16{m}",
            f"%r{s} = f32[16,128] convert(%rs{s}){m}",
            f"%g{s} = f32[16,128] get-tuple-element(%st), index={k % 2}{m}",
            f"%d{s} = f32[16,128] add(%r{s}, %g{s}){m}",
            f"%h{s} = f32[16,128] tanh(%d{s}){m}",
        ]
    else:
        lines += [
            f"%s{s} = f32[16,128] slice(%p{s}), slice={{[0:16], [0:128]}}{m}",
            f"%q{s} = bf16[16,128] convert(%s{s}){m}",
            f"%ar{s} = bf16[16,128] all-reduce(%q{s}), channel_id={chan + 1}, replica_groups={{}}, "
            f"to_apply=%add.bf16{m}",
            f"%r{s} = f32[16,128] convert(%ar{s}){m}",
            f"%g{s} = f32[16,128] get-tuple-element(%st), index={k % 2}{m}",
            f"%h{s} = f32[16,128] add(%r{s}, %g{s}){m}",
        ]
    return lines


def chains_module(depth, meta, name):
    out = [HEADER.format(name=name)]
    results = ", ".join(["f32[16,128]"] * CHAINS)
    out.append(f"ENTRY %main (x: f32[16,128], st: (f32[16,128], f32[16,128])) -> ({results}) {{\n")
    out.append("  %x = f32[16,128] parameter(0)\n")
    out.append("  %st = (f32[16,128], f32[16,128]) parameter(1)\n")
    chan = 1
    for k in range(1, depth + 1):
        for c in range(CHAINS):
            out.append("".join(f"  {line}\n" for line in block(c, k, chan, meta)))
            chan += 2
    ends = ", ".join(f"%h.{c}.{depth}" for c in range(CHAINS))
    out.append(f"  ROOT %result = ({results}) tuple({ends})\n}}\n")
    return "".join(out)


def pipeline(n, path):
    depth = max(1, n // (CHAINS * BLOCK))
    text = chains_module(depth, False, f"bench_pipeline_{n}")
    write(path, text)
    print(f"{path}: {depth * CHAINS * BLOCK + 3} instructions, "
          f"{depth * CHAINS * 2} collectives, {len(text) / 1e6:.1f} MB")


def parse(mb, path):
    probe = chains_module(10, True, "bench_parse")
    per_depth = len(probe) / 10
    depth = max(1, int(mb * 1e6 / per_depth))
    text = chains_module(depth, True, "bench_parse")
    write(path, text)
    print(f"{path}: {depth * CHAINS * BLOCK + 3} instructions, {len(text) / 1e6:.1f} MB")


def step(d, f, b, r, path):
    here = os.path.dirname(os.path.abspath(__file__))
    src_path = os.path.join(here, "..", "scripts", "make_transformer_step.py")
    with open(src_path) as fh:
        src = fh.read()
    pattern = r"^(\s*)d, f, b = \d+, \d+, \d+"
    if not re.search(pattern, src, flags=re.M):
        sys.exit(f"gen_module.py: {src_path} no longer has the line 'd, f, b = ...' to scale")
    src = re.sub(pattern, rf"\g<1>d, f, b = {d}, {f}, {b}", src, count=1, flags=re.M)
    scope = {"__name__": "make_transformer_step"}
    exec(compile(src, src_path, "exec"), scope)
    text = scope["module"](r)
    write(path, text)
    print(f"{path}: training step d={d} f={f} b={b} on {r} devices, {len(text)} bytes")


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def main(argv):
    if len(argv) >= 4 and argv[1] == "pipeline":
        pipeline(int(argv[2]), argv[3])
    elif len(argv) >= 4 and argv[1] == "parse":
        parse(float(argv[2]), argv[3])
    elif len(argv) >= 7 and argv[1] == "step":
        step(int(argv[2]), int(argv[3]), int(argv[4]), int(argv[5]), argv[6])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
