#!/usr/bin/env python3
"""xla_run.py: runs an HLO text module on XLA:CPU (jax/jaxlib from PyPI), on
N devices in one process, with hlo-run's input and output file conventions.

    xla_run.py MODULE.hlo --inputs DIR --outputs DIR [--ranks N]
               [--replicas R] [--partitions P] [--time]
    xla_run.py --serve N        (used by xla_pool.py: many modules, one import)

  inputs   DIR/param<p>.rank<r>.npy (a tuple parameter: param<p>.<leaf>.rank<r>.npy,
           leaves in order, tokens skipped), read as hlo-run reads them:
           the exact numpy dtype of the parameter's element type, except
           bf16 / f8 / f4 from <f4 (rounded to nearest even) or from their
           raw bits (<u2 or |V2 for bf16, |u1 or |V1 for the 8- and 4-bit
           floats), pred from |b1, s4/u4 from |i1/|u1 (range checked).
  outputs  DIR/out<i>.rank<r>.npy for leaf i of the result (nested tuples
           flattened in order; a token leaf counts but is not written), as
           hlo-run writes them: bf16 / f8 / f4 widened to <f4, s4 / u4 as
           |i1 / |u1, everything else in its own dtype.
  devices  replicas x partitions from the module header (replica_count=,
           num_partitions=), or --replicas/--partitions, as hlo-run's
           coll_setup_devices; a module with neither runs as --ranks
           replicas.  Device d is rank d = replica * P + partition (XLA device
           assignment [[0..P-1], [P..2P-1], ...]).

The path through jaxlib: HLO text -> HloModule (XLA's own parser) ->
HloModuleProto -> StableHLO -> compile_and_load on the CPU client (jaxlib
0.10.2 compiles MLIR only) -> execute_sharded, one shard per device.

Exit: 0 done; 2 bad usage, bad input, or a module XLA refuses (parse,
StableHLO conversion or compile; XLA's message goes to standard error);
3 XLA failed while executing, returned something unexpected, or crashed
(the work runs in a child process so that an abort inside XLA, e.g. a
CHECK failure, is reported instead of killing the caller's view of it).

--serve N: reads one JSON job a line on standard input ({"module", "inputs",
"outputs", "replicas", "partitions"}, replicas x partitions = N) and answers
each with one JSON line {"status", "message", "times"} on file descriptor 3
or --answer-fd (standard output goes to standard error, so nothing XLA prints can corrupt
the answers).  A crash inside XLA ends the server; xla_pool.py names the job
and starts another.

Needs the venv of scripts/install-deps.sh xla (jax/jaxlib 0.10.2).
"""
import argparse
import json
import os
import re
import sys
import time


class Refused(Exception):
    """Exit 2: bad input, or XLA refuses the module (its message kept)."""


class Failed(Exception):
    """Exit 3: XLA failed at run time or returned something unexpected."""


def header_counts(text):
    """(replica_count or None, num_partitions or None) from the HloModule line."""
    m = re.search(r"^\s*HloModule\s+[^\s,]+(.*)$", text, re.M)
    if not m:
        return None, None
    rest = m.group(1)
    r = re.search(r"\breplica_count=(\d+)", rest)
    p = re.search(r"\bnum_partitions=(\d+)", rest)
    return (int(r.group(1)) if r else None), (int(p.group(1)) if p else None)


def device_grid(hdr_r, hdr_p, replicas, partitions, ranks):
    """hlo-run's coll_setup_devices: (R, P) for a run on `ranks` devices."""
    header = hdr_r is not None or hdr_p is not None
    R = hdr_r if hdr_r is not None else 1
    P = hdr_p if hdr_p is not None else 1
    if replicas:
        R = replicas
    if partitions:
        P = partitions
    if ranks is None:
        return R, P
    if not header and not replicas and not partitions:
        return ranks, 1
    if not replicas and partitions and hdr_r is None and ranks % P == 0:
        R = ranks // P
    elif not partitions and replicas and hdr_p is None and ranks % R == 0:
        P = ranks // R
    return R, P


def set_xla_flags(n_dev):
    """The CPU client is made when jax first needs it: the device count must be
    in XLA_FLAGS before that."""
    flags = [f for f in os.environ.get("XLA_FLAGS", "").split()
             if not f.startswith("--xla_force_host_platform_device_count")]
    flags.append("--xla_force_host_platform_device_count=%d" % n_dev)
    # An HLO module with num_partitions > 1 is already partitioned (one
    # program per partition, partition-id and collectives explicit), as
    # hlo-run runs it.  XLA:CPU refuses num_partitions > 1 without SPMD
    # partitioning, and the SPMD partitioner refuses partition-id: SPMD is
    # turned on for such modules (below) and its passes off here.  With SPMD
    # off (one partition) the two passes do not run anyway.
    flags.append("--xla_disable_hlo_passes=spmd-partitioning,sharding-propagation")
    # By default XLA may compute a bf16 or f16 value in f32 and skip the
    # rounding in between (convert(add(bf16)) becomes an f32 add): "excess
    # precision".  HLO's semantics round every op's result to its type; this
    # flag asks XLA to keep those roundings (a diff without it blames
    # hlo-run for XLA's own shortcut).  A flag the caller gives wins.
    if not any(f.startswith("--xla_allow_excess_precision") for f in flags):
        flags.append("--xla_allow_excess_precision=false")
    os.environ["XLA_FLAGS"] = " ".join(flags)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")


def drop_entry_layout(text):
    """text without the entry_computation_layout={...} of its HloModule line."""
    i = text.find("entry_computation_layout={")
    eol = text.find("\n")
    if i < 0 or i > eol:
        return text
    j, depth = i + len("entry_computation_layout="), 0
    while j < len(text):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        j += 1
        if depth == 0:
            break
    start = text.rfind(",", 0, i)
    return text[:start if start >= 0 else i] + text[j:]


class Runner:
    """jax imported once, the CPU client with n_dev devices."""

    def __init__(self, n_dev):
        self.dynamic_dims = []      # (leaf, dimension) of the result sizes with_runtime_sizes appended
        set_xla_flags(n_dev)
        import numpy as np
        import ml_dtypes
        import jax
        jax.config.update("jax_enable_x64", True)     # else f64/s64/u64 inputs are narrowed
        jax.config.update("jax_platforms", "cpu")
        from jax._src.lib import xla_client as xc, _jax
        self.np, self.ml_dtypes, self.jax, self.xc, self._jax = np, ml_dtypes, jax, xc, _jax
        self.client = jax.devices("cpu")[0].client
        self.devices = sorted(self.client.devices(), key=lambda d: d.id)
        self.n_dev = n_dev
        P = xc.PrimitiveType
        self.narrow_float = {
            P.BF16, P.F8E5M2, P.F8E4M3, P.F8E4M3FN, P.F8E4M3B11FNUZ, P.F8E3M4,
            P.F8E5M2FNUZ, P.F8E4M3FNUZ, P.F8E8M0FNU, P.F4E2M1FN,
        }
        self.sub_byte_int = {P.S4: np.int8, P.U4: np.uint8}

    # ---- parse, convert, compile
    def with_runtime_sizes(self, hm, pshape):
        """XLA hands back a result of dynamic size as its bounded buffer.  For
        a result (an array or a tuple of arrays) with dimensions of dynamic
        size, the module text with the runtime size of each such dimension
        (get-dimension-size) appended to the result, and the list of (leaf,
        dimension) they belong to; (None, []) when there are none."""
        leaves = self.leaves_of(pshape.result_shape())
        dyn = [(i, d) for i, leaf in enumerate(leaves) if leaf.is_array()
               for d in range(len(leaf.dimensions())) if leaf.is_dynamic_dimension(d)]
        result = pshape.result_shape()
        if not dyn or (result.is_tuple() and any(e.is_tuple() for e in result.tuple_shapes())):
            return None, []
        text = hm.to_string()
        m = re.search(r"^ENTRY [^\n]*\{\n(.*?)^\}", text, re.S | re.M)
        root = m and re.search(r"^(\s*)ROOT (%[\w.\-]+) = ", m.group(1), re.M)
        if not root:
            return None, []
        name, lines = root.group(2), []
        elems = []
        for i, leaf in enumerate(leaves):
            if result.is_tuple():
                lines.append("  %%__xla_run_leaf%d = %s get-tuple-element(%s), index=%d" % (i, leaf, name, i))
                elems.append(("%%__xla_run_leaf%d" % i, str(leaf)))
            else:
                elems.append((name, str(leaf)))
        for k, (i, d) in enumerate(dyn):
            lines.append("  %%__xla_run_size%d = s32[] get-dimension-size(%s), dimensions={%d}" % (k, elems[i][0], d))
            elems.append(("%%__xla_run_size%d" % k, "s32[]"))
        shape = "(" + ", ".join(e[1] for e in elems) + ")"
        lines.append("  ROOT %%__xla_run_root = %s tuple(%s)" % (shape, ", ".join(e[0] for e in elems)))
        body = m.group(1)
        body = body[:root.start()] + root.group(1) + body[root.start() + len(root.group(1)) + 5:]
        body = body.rstrip("\n") + "\n" + "\n".join(lines) + "\n"
        head = text[:m.start(1)]
        head = re.sub(r"->[^\n]*\{\n$", "-> %s {\n" % shape, head)
        out = head + body + text[m.end(1):]
        # The module's layout line names the old result: drop it.
        out = drop_entry_layout(out)
        return out, dyn

    def compile(self, text, name, R, P, times):
        xc, _jax, np = self.xc, self._jax, self.np
        t = time.perf_counter()
        try:
            hm = xc.hlo.hlo_module_from_text(text)
            proto = hm.as_serialized_hlo_module_proto()
            pshape = xc.XlaComputation(proto).program_shape()
        except Exception as e:      # XlaRuntimeError / JaxRuntimeError / ValueError
            raise Refused("XLA cannot parse %s: %s" % (name, e))
        sized, self.dynamic_dims = self.with_runtime_sizes(hm, pshape)
        if sized:
            try:
                hm = xc.hlo.hlo_module_from_text(sized)
                proto = hm.as_serialized_hlo_module_proto()
            except Exception as e:
                raise Failed("xla_run.py could not append the runtime sizes of %s's result: %s" % (name, e))
        times["parse"] = time.perf_counter() - t
        t = time.perf_counter()
        try:
            mlir = _jax.mlir.hlo_to_stablehlo(proto)
        except Exception as e:
            raise Refused("XLA cannot convert %s to StableHLO: %s" % (name, e))
        times["to_stablehlo"] = time.perf_counter() - t
        n_dev = R * P
        if len(self.devices) < n_dev:
            raise Refused("XLA:CPU has %d devices here, the module needs %d" % (len(self.devices), n_dev))
        devices = self.devices[:n_dev]
        opts = xc.CompileOptions()
        opts.num_replicas = R
        opts.num_partitions = P
        bo = opts.executable_build_options
        bo.num_replicas = R
        bo.num_partitions = P
        bo.use_spmd_partitioning = P > 1
        assign = np.array([d.id for d in devices], dtype=np.int32).reshape(R, P)   # [replica][partition]
        opts.device_assignment = xc.DeviceAssignment.create(assign)
        bo.device_assignment = opts.device_assignment
        t = time.perf_counter()
        try:
            exe = self.client.compile_and_load(mlir, xc.DeviceList(tuple(devices)), opts)
        except Exception as e:
            raise Refused("XLA refused %s: %s" % (name, e))
        times["compile"] = time.perf_counter() - t
        return exe, pshape, devices

    # ---- inputs
    @staticmethod
    def leaves_of(shape):
        if shape.is_tuple():
            out = []
            for s in shape.tuple_shapes():
                out.extend(Runner.leaves_of(s))
            return out
        return [shape]

    def read_leaf(self, path, shape):
        np = self.np
        et = shape.xla_element_type()
        want = np.dtype(shape.numpy_dtype())
        dims = tuple(shape.dimensions())
        try:
            arr = np.load(path, allow_pickle=False)
        except OSError as e:
            raise Refused("%s: cannot open: %s" % (path, e.strerror or e))
        except ValueError as e:
            raise Refused("%s: not a readable .npy file: %s" % (path, e))
        if arr.shape != dims:
            raise Refused("%s: shape %s does not fit parameter %s" % (path, arr.shape, shape))
        got = arr.dtype
        if et in self.narrow_float:
            if got.kind in "uV" and got.itemsize == want.itemsize:
                return np.asarray(arr, order="C").view(want)
            if got.kind == "f" and got.itemsize == 4:
                return arr.astype(np.float32).astype(want)       # nearest even
            raise Refused("%s: dtype %s does not fit parameter %s (expected <f4, or raw bits)"
                          % (path, got.str, shape))
        if et in self.sub_byte_int:
            if got != np.dtype(self.sub_byte_int[et]):
                raise Refused("%s: dtype %s does not fit parameter %s (expected %s)"
                              % (path, got.str, shape, np.dtype(self.sub_byte_int[et]).str))
            info = self.ml_dtypes.iinfo(want)
            if arr.size and (arr.min() < int(info.min) or arr.max() > int(info.max)):
                raise Refused("%s: an element is outside the range of %s" % (path, shape))
            return arr.astype(want)
        if got.newbyteorder("=") != want.newbyteorder("=") or (got.byteorder == ">"):
            raise Refused("%s: dtype %s does not fit parameter %s (expected %s)" % (path, got.str, shape, want.str))
        # np.asarray, not np.ascontiguousarray: that one makes a 0-d array 1-d,
        # and XLA runs an f32[] parameter on an f32[1] buffer without a word.
        return np.asarray(arr, order="C")

    def arguments(self, pshape, devices, inputs):
        """One global array per parameter leaf (the StableHLO importer flattens
        tuple parameters), whose shard on device d is rank d's value."""
        np, jax = self.np, self.jax
        files = []          # (p, leaf index or -1, shape)
        for p, ps in enumerate(pshape.parameter_shapes()):
            if ps.is_tuple():
                k = 0
                for leaf in self.leaves_of(ps):
                    if leaf.is_token():
                        raise Refused("parameter %d has a token leaf: not supported by xla_run.py" % p)
                    files.append((p, k, leaf))
                    k += 1
            else:
                files.append((p, -1, ps))
        mesh = jax.sharding.Mesh(np.array(devices), ("d",))
        # A "replicated" sharding whose shards hold different values: XLA
        # does not check that they agree, and each shard keeps the
        # parameter's own shape.
        sh = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
        args = []
        for p, k, shape in files:
            if shape.is_token():
                raise Refused("parameter %d is a token: not supported by xla_run.py" % p)
            per_dev = []
            for r, d in enumerate(devices):
                name = ("param%d.rank%d.npy" % (p, r)) if k == -1 else ("param%d.%d.rank%d.npy" % (p, k, r))
                per_dev.append(jax.device_put(self.read_leaf(os.path.join(inputs, name), shape), d))
            args.append(jax.make_array_from_single_device_arrays(per_dev[0].shape, sh, per_dev))
        return args

    # ---- outputs
    def cut_to_runtime_sizes(self, host):
        """host with the runtime sizes with_runtime_sizes appended taken off,
        each leaf of dynamic size at its runtime shape (as hlo-run writes
        it).  XLA:CPU's buffer of such a result holds the elements of the
        runtime shape packed, row-major, at its start (not at their places
        in the bounded array): seen on f32[4,<=6] holding [4,4]."""
        dyn = self.dynamic_dims
        if not dyn:
            return host
        sizes, host = host[len(host) - len(dyn):], host[:len(host) - len(dyn)]
        for i in sorted({i for i, _ in dyn}):
            for r, x in enumerate(host[i]):
                dims = list(x.shape)
                for k, (leaf, d) in enumerate(dyn):
                    if leaf == i:
                        dims[d] = int(sizes[k][r])
                n = int(self.np.prod(dims, dtype=self.np.int64))
                host[i][r] = x.reshape(-1)[:n].reshape(dims).copy()
        return host

    def write_outputs(self, pshape, host, outputs):
        np = self.np
        result_leaves = self.leaves_of(pshape.result_shape())
        if len(host) != len(result_leaves):
            raise Failed("XLA returned %d outputs for %d result leaves" % (len(host), len(result_leaves)))
        os.makedirs(outputs, exist_ok=True)
        for i, (shape, per_dev) in enumerate(zip(result_leaves, host)):
            if shape.is_token():
                continue
            et = shape.xla_element_type()
            want = np.dtype(shape.numpy_dtype())
            for r, x in enumerate(per_dev):
                bound = tuple(shape.dimensions())
                if len(x.shape) != len(bound) or any(
                        g != b and not (shape.is_dynamic_dimension(d) and g <= b)
                        for d, (g, b) in enumerate(zip(x.shape, bound))):
                    raise Failed("XLA returned shape %s for result leaf %d, %s" % (x.shape, i, shape))
                if x.dtype != want:
                    # The StableHLO path gives rng-bit-generator's signed results
                    # as unsigned (same bits): view them as the declared type.
                    if x.dtype.kind in "iu" and want.kind in "iu" and x.dtype.itemsize == want.itemsize:
                        x = x.view(want)
                    else:
                        raise Failed("XLA returned dtype %s for result leaf %d, %s" % (x.dtype, i, shape))
                if et in self.narrow_float:
                    x = x.astype(np.float32)
                elif et in self.sub_byte_int:
                    x = x.astype(self.sub_byte_int[et])
                path = os.path.join(outputs, "out%d.rank%d.npy" % (i, r))
                tmp = path + ".tmp.%d" % os.getpid()
                with open(tmp, "wb") as f:
                    np.save(f, np.asarray(x, order="C"), allow_pickle=False)
                os.replace(tmp, path)

    def run(self, module, inputs, outputs, R, P, optimized=None, repeat=1):
        """Runs one module; returns the seconds of each step (execute: the
        fastest of repeat runs).  Raises Refused or Failed.  optimized: a
        file for the module XLA compiled it into."""
        times = {}
        try:
            with open(module) as f:
                text = f.read()
        except OSError as e:
            raise Refused("%s: %s" % (module, e.strerror))
        exe, pshape, devices = self.compile(text, module, R, P, times)
        if optimized:
            with open(optimized, "w") as f:
                f.write("\n\n".join(m.to_string() for m in exe.hlo_modules()))
        t = time.perf_counter()
        args = self.arguments(pshape, devices, inputs)
        times["inputs"] = time.perf_counter() - t
        for k in range(max(1, repeat)):
            if k:
                # a module with input/output aliasing donates its arguments:
                # fresh ones for every execution (outside the timing)
                args = self.arguments(pshape, devices, inputs)
            t = time.perf_counter()
            try:
                res = exe.execute_sharded(args)
                outs = res.disassemble_into_single_device_arrays()     # [output][device]
                host = [[self.np.asarray(x) for x in o] for o in outs]
                host = self.cut_to_runtime_sizes(host)
            except Exception as e:
                raise Failed("XLA failed running %s: %s" % (module, e))
            times["execute"] = min(times.get("execute", 1e300), time.perf_counter() - t)
        t = time.perf_counter()
        self.write_outputs(pshape, host, outputs)
        times["outputs"] = time.perf_counter() - t
        return times


def serve(n_dev, answer_fd):
    """The --serve loop: answers on answer_fd, standard output sent to stderr."""
    answers = os.fdopen(answer_fd, "w", buffering=1)
    os.dup2(2, 1)
    runner = Runner(n_dev)
    answers.write(json.dumps({"ready": n_dev}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        status, message, times = 0, "", {}
        try:
            R, P = int(job["replicas"]), int(job["partitions"])
            if R * P != n_dev:
                raise Refused("this server has %d devices, the job wants %d x %d" % (n_dev, R, P))
            times = runner.run(job["module"], job["inputs"], job["outputs"], R, P)
        except Refused as e:
            status, message = 2, str(e)
        except Failed as e:
            status, message = 3, str(e)
        except Exception as e:      # a bug here, not in XLA: say so, keep serving
            status, message = 3, "xla_run internal error: %r" % (e,)
        answers.write(json.dumps({"status": status, "message": message, "times": times}) + "\n")
    return 0


def die(code, msg):
    sys.stderr.write("xla_run: %s\n" % msg.rstrip())
    sys.exit(code)


def main():
    ap = argparse.ArgumentParser(description="Run an HLO text module on XLA:CPU with hlo-run's file conventions.")
    ap.add_argument("module", nargs="?")
    ap.add_argument("--inputs", help="DIR of param<p>.rank<r>.npy")
    ap.add_argument("--outputs", help="DIR for out<i>.rank<r>.npy (created)")
    ap.add_argument("--ranks", type=int, help="number of devices (default: replicas x partitions)")
    ap.add_argument("--replicas", type=int, default=0)
    ap.add_argument("--partitions", type=int, default=0)
    ap.add_argument("--time", action="store_true", help="print the time of each step to standard error")
    ap.add_argument("--optimized", metavar="FILE", help="write the module XLA compiled (after its passes) to FILE")
    ap.add_argument("--repeat", type=int, default=1, help="execute N times, --time giving the fastest")
    ap.add_argument("--serve", type=int, metavar="N", help="serve jobs for N devices (see the docstring)")
    ap.add_argument("--answer-fd", type=int, default=3, help="with --serve: the descriptor answers go to")
    a = ap.parse_args()
    if a.serve is not None:
        if a.serve < 1:
            die(2, "--serve takes a positive device count")
        return serve(a.serve, a.answer_fd)
    if not a.module or not a.inputs or not a.outputs:
        die(2, "give MODULE.hlo --inputs DIR --outputs DIR (see --help)")
    if (a.ranks is not None and a.ranks < 1) or a.replicas < 0 or a.partitions < 0:
        die(2, "--ranks, --replicas and --partitions take a positive count")
    try:
        with open(a.module) as f:
            text = f.read()
    except OSError as e:
        die(2, "%s: %s" % (a.module, e.strerror))
    R, P = device_grid(*header_counts(text), a.replicas, a.partitions, a.ranks)
    if a.ranks is not None and R * P != a.ranks:
        die(2, "the module needs %d replicas x %d partitions = %d devices, but --ranks %d was given"
            % (R, P, R * P, a.ranks))
    t0 = time.perf_counter()
    runner = Runner(R * P)
    imported = time.perf_counter() - t0
    try:
        times = runner.run(a.module, a.inputs, a.outputs, R, P, a.optimized, a.repeat)
    except Refused as e:
        die(2, str(e))
    except Failed as e:
        die(3, str(e))
    if a.time:
        times = dict(times, **{"import": imported})
        sys.stderr.write("xla_run: %d replicas x %d partitions; seconds: %s\n"
                         % (R, P, " ".join("%s %.6f" % kv for kv in times.items())))
    return 0


def run_guarded():
    """Runs main() in a child process: a CHECK failure inside XLA aborts the
    process, and the parent turns that into a message and exit 3.  The
    server is guarded by xla_pool.py instead."""
    if os.environ.get("XLA_RUN_CHILD") == "1" or "--serve" in sys.argv:
        return main()
    import signal
    import subprocess
    env = dict(os.environ, XLA_RUN_CHILD="1")
    rc = subprocess.call([sys.executable, os.path.abspath(__file__)] + sys.argv[1:], env=env)
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = "signal %d" % -rc
        sys.stderr.write("xla_run: XLA crashed (%s; a CHECK failure prints 'Check failed' above)\n" % name)
        return 3
    return rc


if __name__ == "__main__":
    sys.exit(run_guarded())
