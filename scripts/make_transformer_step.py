#!/usr/bin/env python3
"""Writes corpus/demo/transformer_step_<N>dev.hlo: one FSDP training step of a
small transformer-style MLP block for N devices, the module `make demo`
checks.  Run offline; its outputs are committed.

What it contains, per device (replica_count=N):
  * FSDP weight all-gathers of bf16 shards, converted to f32 after the gather
    (flip-ag-convert moves the convert first; the combiners then merge them);
  * a forward pass (dot, tanh, dot) and a mean-squared loss all-reduced in f32;
  * backward dots giving f32 gradients, cast to bf16 and reduce-scattered in
    bf16 (what a bf16 data-parallel step does), then converted back and added to
    the f32 gradient accumulators carried in the optimizer state tuple:
    add(convert(reduce-scatter(g)), get-tuple-element(state)) -- the pattern
    flip-reduce-convert-add rewrites to accumulate in f32;
  * an SGD update of the f32 master weights, the new bf16 shards, the new
    accumulators and the loss as the result.
"""
import sys

def module(n):
    d, f, b = 64, 128, 16          # model width, hidden width, batch per device
    ds, fs = d // n, f // n        # shard rows of w1 [d,f] and w2 [f,d]
    s = f"""HloModule transformer_step_{n}dev, replica_count={n}

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

ENTRY %train_step (x: bf16[{b},{d}], y: f32[{b},{d}], state: (f32[{ds},{f}], f32[{fs},{d}], f32[{ds},{f}], f32[{fs},{d}]), lr: f32[]) -> (bf16[{ds},{f}], bf16[{fs},{d}], f32[{ds},{f}], f32[{fs},{d}], f32[]) {{
  %x = bf16[{b},{d}] parameter(0), metadata={{op_name="batch/tokens"}}
  %y = f32[{b},{d}] parameter(1), metadata={{op_name="batch/targets"}}
  %state = (f32[{ds},{f}], f32[{fs},{d}], f32[{ds},{f}], f32[{fs},{d}]) parameter(2), metadata={{op_name="optimizer/state"}}
  %lr = f32[] parameter(3)
  %w1.master = f32[{ds},{f}] get-tuple-element(%state), index=0
  %w2.master = f32[{fs},{d}] get-tuple-element(%state), index=1
  %w1.acc = f32[{ds},{f}] get-tuple-element(%state), index=2
  %w2.acc = f32[{fs},{d}] get-tuple-element(%state), index=3
  %w1.shard = bf16[{ds},{f}] convert(%w1.master)
  %w2.shard = bf16[{fs},{d}] convert(%w2.master)
  %w1.gathered = bf16[{d},{f}] all-gather(%w1.shard), channel_id=1, replica_groups={{}}, dimensions={{0}}, metadata={{op_name="fsdp/all_gather_w1"}}
  %w1 = f32[{d},{f}] convert(%w1.gathered)
  %w2.gathered = bf16[{f},{d}] all-gather(%w2.shard), channel_id=2, replica_groups={{}}, dimensions={{0}}, metadata={{op_name="fsdp/all_gather_w2"}}
  %w2 = f32[{f},{d}] convert(%w2.gathered)
  %x.f32 = f32[{b},{d}] convert(%x)
  %h.pre = f32[{b},{f}] dot(%x.f32, %w1), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, metadata={{op_name="mlp/up"}}
  %h = f32[{b},{f}] tanh(%h.pre)
  %out = f32[{b},{d}] dot(%h, %w2), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, metadata={{op_name="mlp/down"}}
  %err = f32[{b},{d}] subtract(%out, %y)
  %sq = f32[{b},{d}] multiply(%err, %err)
  %zero = f32[] constant(0)
  %loss.local = f32[] reduce(%sq, %zero), dimensions={{0,1}}, to_apply=%add.f32
  %loss.sum = f32[] all-reduce(%loss.local), channel_id=3, replica_groups={{}}, to_apply=%add.f32, metadata={{op_name="loss/all_reduce"}}
  %count = f32[] constant({b * d * n})
  %loss = f32[] divide(%loss.sum, %count)
  %g.w2 = f32[{f},{d}] dot(%h, %err), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}, metadata={{op_name="grad/w2"}}
  %g.h = f32[{b},{f}] dot(%err, %w2), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}
  %one = f32[] constant(1)
  %ones = f32[{b},{f}] broadcast(%one), dimensions={{}}
  %h2 = f32[{b},{f}] multiply(%h, %h)
  %dtanh = f32[{b},{f}] subtract(%ones, %h2)
  %g.hpre = f32[{b},{f}] multiply(%g.h, %dtanh)
  %g.w1 = f32[{d},{f}] dot(%x.f32, %g.hpre), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}, metadata={{op_name="grad/w1"}}
  %g.w1.bf16 = bf16[{d},{f}] convert(%g.w1)
  %g.w2.bf16 = bf16[{f},{d}] convert(%g.w2)
  %rs.w1 = bf16[{ds},{f}] reduce-scatter(%g.w1.bf16), channel_id=4, replica_groups={{}}, dimensions={{0}}, to_apply=%add.bf16, metadata={{op_name="grad/reduce_scatter_w1"}}
  %rs.w2 = bf16[{fs},{d}] reduce-scatter(%g.w2.bf16), channel_id=5, replica_groups={{}}, dimensions={{0}}, to_apply=%add.bf16, metadata={{op_name="grad/reduce_scatter_w2"}}
  %rs.w1.f32 = f32[{ds},{f}] convert(%rs.w1)
  %rs.w2.f32 = f32[{fs},{d}] convert(%rs.w2)
  %w1.acc.new = f32[{ds},{f}] add(%rs.w1.f32, %w1.acc)
  %w2.acc.new = f32[{fs},{d}] add(%w2.acc, %rs.w2.f32)
  %lr.w1 = f32[{ds},{f}] broadcast(%lr), dimensions={{}}
  %lr.w2 = f32[{fs},{d}] broadcast(%lr), dimensions={{}}
  %step.w1 = f32[{ds},{f}] multiply(%lr.w1, %w1.acc.new)
  %step.w2 = f32[{fs},{d}] multiply(%lr.w2, %w2.acc.new)
  %w1.master.new = f32[{ds},{f}] subtract(%w1.master, %step.w1)
  %w2.master.new = f32[{fs},{d}] subtract(%w2.master, %step.w2)
  %w1.new = bf16[{ds},{f}] convert(%w1.master.new)
  %w2.new = bf16[{fs},{d}] convert(%w2.master.new)
  ROOT %result = (bf16[{ds},{f}], bf16[{fs},{d}], f32[{ds},{f}], f32[{fs},{d}], f32[]) tuple(%w1.new, %w2.new, %w1.acc.new, %w2.acc.new, %loss)
}}
"""
    return s

if __name__ == "__main__":
    # make_transformer_step.py [OUT-DIR [N...]]: the corpus's 2, 4 and 8 by
    # default; scripts/precision-sweep.sh asks for 16 as well.
    out = sys.argv[1] if len(sys.argv) > 1 else "corpus/demo"
    counts = [int(a) for a in sys.argv[2:]] or [2, 4, 8]
    for n in counts:
        with open(f"{out}/transformer_step_{n}dev.hlo", "w") as fh:
            fh.write(module(n))
