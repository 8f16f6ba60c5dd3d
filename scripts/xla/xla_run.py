#!/usr/bin/env python3
"""xla_run.py: runs an HLO text module on XLA:CPU (jax/jaxlib from PyPI), on
N devices in one process, with hlo-run's input and output file conventions.

    xla_run.py MODULE.hlo --inputs DIR --outputs DIR [--ranks N]
               [--replicas R] [--partitions P] [--time]

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

Exit: 0 done; 2 bad usage, bad input, or a module XLA refuses (parse,
StableHLO conversion or compile; XLA's message goes to standard error);
3 XLA failed while executing, returned something unexpected, or crashed
(the work runs in a child process so that an abort inside XLA, e.g. a
CHECK failure, is reported instead of killing the caller's view of it).

Needs the venv of scripts/xla/NOTES.md (jax/jaxlib 0.10.2).
"""
import argparse
import os
import re
import sys
import time


def die(code, msg):
    sys.stderr.write("xla_run: %s\n" % msg.rstrip())
    sys.exit(code)


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


def main():
    ap = argparse.ArgumentParser(description="Run an HLO text module on XLA:CPU with hlo-run's file conventions.")
    ap.add_argument("module")
    ap.add_argument("--inputs", required=True, help="DIR of param<p>.rank<r>.npy")
    ap.add_argument("--outputs", required=True, help="DIR for out<i>.rank<r>.npy (created)")
    ap.add_argument("--ranks", type=int, help="number of devices (default: replicas x partitions)")
    ap.add_argument("--replicas", type=int, default=0)
    ap.add_argument("--partitions", type=int, default=0)
    ap.add_argument("--time", action="store_true", help="print the time of each step to standard error")
    a = ap.parse_args()
    if (a.ranks is not None and a.ranks < 1) or a.replicas < 0 or a.partitions < 0:
        die(2, "--ranks, --replicas and --partitions take a positive count")

    try:
        with open(a.module) as f:
            text = f.read()
    except OSError as e:
        die(2, "%s: %s" % (a.module, e.strerror))

    R, P = device_grid(*header_counts(text), a.replicas, a.partitions, a.ranks)
    n_dev = R * P
    if a.ranks is not None and n_dev != a.ranks:
        die(2, "the module needs %d replicas x %d partitions = %d devices, but --ranks %d was given"
            % (R, P, n_dev, a.ranks))

    # The CPU client is made when jax first needs it: the device count must be
    # in XLA_FLAGS before that.
    flags = [f for f in os.environ.get("XLA_FLAGS", "").split()
             if not f.startswith("--xla_force_host_platform_device_count")]
    flags.append("--xla_force_host_platform_device_count=%d" % n_dev)
    if P > 1:
        # An HLO module with num_partitions > 1 is already partitioned (one
        # program per partition, partition-id and collectives explicit), as
        # hlo-run runs it.  XLA:CPU refuses num_partitions > 1 without SPMD
        # partitioning, and the SPMD partitioner refuses partition-id: turn
        # SPMD on and its passes off.
        flags.append("--xla_disable_hlo_passes=spmd-partitioning,sharding-propagation")
    os.environ["XLA_FLAGS"] = " ".join(flags)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

    times = {}
    t0 = time.perf_counter()
    import numpy as np
    import ml_dtypes
    import jax
    jax.config.update("jax_enable_x64", True)     # else f64/s64/u64 inputs are narrowed
    jax.config.update("jax_platforms", "cpu")
    from jax._src.lib import xla_client as xc, _jax
    times["import"] = time.perf_counter() - t0

    # ---- parse, convert, compile
    t = time.perf_counter()
    try:
        hm = xc.hlo.hlo_module_from_text(text)
        proto = hm.as_serialized_hlo_module_proto()
        pshape = xc.XlaComputation(proto).program_shape()
    except Exception as e:      # XlaRuntimeError / JaxRuntimeError / ValueError
        die(2, "XLA cannot parse %s: %s" % (a.module, e))
    times["parse"] = time.perf_counter() - t
    t = time.perf_counter()
    try:
        mlir = _jax.mlir.hlo_to_stablehlo(proto)
    except Exception as e:
        die(2, "XLA cannot convert %s to StableHLO: %s" % (a.module, e))
    times["to_stablehlo"] = time.perf_counter() - t

    client = jax.devices("cpu")[0].client
    devices = sorted(client.devices(), key=lambda d: d.id)
    if len(devices) < n_dev:
        die(3, "XLA:CPU has %d devices, %d wanted" % (len(devices), n_dev))
    devices = devices[:n_dev]

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
        exe = client.compile_and_load(mlir, xc.DeviceList(tuple(devices)), opts)
    except Exception as e:
        die(2, "XLA refused %s: %s" % (a.module, e))
    times["compile"] = time.perf_counter() - t

    # ---- inputs
    def leaves_of(shape):
        if shape.is_tuple():
            out = []
            for s in shape.tuple_shapes():
                out.extend(leaves_of(s))
            return out
        return [shape]

    narrow_float = {
        xc.PrimitiveType.BF16, xc.PrimitiveType.F8E5M2, xc.PrimitiveType.F8E4M3,
        xc.PrimitiveType.F8E4M3FN, xc.PrimitiveType.F8E4M3B11FNUZ, xc.PrimitiveType.F8E3M4,
        xc.PrimitiveType.F8E5M2FNUZ, xc.PrimitiveType.F8E4M3FNUZ, xc.PrimitiveType.F8E8M0FNU,
        xc.PrimitiveType.F4E2M1FN,
    }
    sub_byte_int = {xc.PrimitiveType.S4: np.int8, xc.PrimitiveType.U4: np.uint8}

    def read_leaf(path, shape):
        et = shape.xla_element_type()
        want = np.dtype(shape.numpy_dtype())
        dims = tuple(shape.dimensions())
        try:
            arr = np.load(path, allow_pickle=False)
        except OSError as e:
            die(2, "%s: cannot open: %s" % (path, e.strerror or e))
        except ValueError as e:
            die(2, "%s: not a readable .npy file: %s" % (path, e))
        if arr.shape != dims:
            die(2, "%s: shape %s does not fit parameter %s" % (path, arr.shape, shape))
        got = arr.dtype
        if et in narrow_float:
            if got.kind in "uV" and got.itemsize == want.itemsize:
                return np.asarray(arr, order="C").view(want)
            if got.kind == "f" and got.itemsize == 4:
                return arr.astype(np.float32).astype(want)       # nearest even
            die(2, "%s: dtype %s does not fit parameter %s (expected <f4, or raw bits)" % (path, got.str, shape))
        if et in sub_byte_int:
            if got != np.dtype(sub_byte_int[et]):
                die(2, "%s: dtype %s does not fit parameter %s (expected %s)"
                    % (path, got.str, shape, np.dtype(sub_byte_int[et]).str))
            info = ml_dtypes.iinfo(want)
            if arr.size and (arr.min() < int(info.min) or arr.max() > int(info.max)):
                die(2, "%s: an element is outside the range of %s" % (path, shape))
            return arr.astype(want)
        if got.newbyteorder("=") != want.newbyteorder("=") or (got.byteorder == ">"):
            die(2, "%s: dtype %s does not fit parameter %s (expected %s)" % (path, got.str, shape, want.str))
        # np.asarray, not np.ascontiguousarray: that one makes a 0-d array 1-d,
        # and XLA runs an f32[] parameter on an f32[1] buffer without a word.
        return np.asarray(arr, order="C")

    # Parameter leaves in the order the compiled program takes them (the
    # StableHLO importer flattens tuple parameters).
    param_files = []        # (p, leaf index or None, shape)
    for p, ps in enumerate(pshape.parameter_shapes()):
        if ps.is_tuple():
            k = 0
            for leaf in leaves_of(ps):
                if leaf.is_token():
                    param_files.append((p, None, leaf))
                else:
                    param_files.append((p, k, leaf))
                    k += 1
        else:
            param_files.append((p, -1, ps))

    t = time.perf_counter()
    args = []
    for p, k, shape in param_files:
        if shape.is_token():
            die(2, "parameter %d has a token leaf: not supported by xla_run.py" % p)
        per_dev = []
        for r, d in enumerate(devices):
            name = ("param%d.rank%d.npy" % (p, r)) if k == -1 else ("param%d.%d.rank%d.npy" % (p, k, r))
            x = read_leaf(os.path.join(a.inputs, name), shape)
            per_dev.append(jax.device_put(x, d))
        # One global array whose shard on device d is rank d's value: a
        # "replicated" sharding over the devices (XLA does not check that the
        # shards agree), so that every shard has the parameter's own shape.
        mesh = jax.sharding.Mesh(np.array(devices), ("d",))
        sh = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
        args.append(jax.make_array_from_single_device_arrays(per_dev[0].shape, sh, per_dev))
    times["inputs"] = time.perf_counter() - t

    # ---- run
    t = time.perf_counter()
    try:
        res = exe.execute_sharded(args)
        outs = res.disassemble_into_single_device_arrays()     # [output][device]
        host = [[np.asarray(x) for x in o] for o in outs]
    except Exception as e:
        die(3, "XLA failed running %s: %s" % (a.module, e))
    times["execute"] = time.perf_counter() - t

    # ---- outputs
    result_leaves = leaves_of(pshape.result_shape())
    if len(host) != len(result_leaves):
        die(3, "XLA returned %d outputs for %d result leaves" % (len(host), len(result_leaves)))
    t = time.perf_counter()
    os.makedirs(a.outputs, exist_ok=True)
    for i, (shape, per_dev) in enumerate(zip(result_leaves, host)):
        if shape.is_token():
            continue
        et = shape.xla_element_type()
        for r, x in enumerate(per_dev):
            if x.shape != tuple(shape.dimensions()):
                die(3, "XLA returned shape %s for result leaf %d, %s" % (x.shape, i, shape))
            want = np.dtype(shape.numpy_dtype())
            if x.dtype != want:
                # The StableHLO path gives rng-bit-generator's signed results
                # as unsigned (same bits): view them as the declared type.
                if x.dtype.kind in "iu" and want.kind in "iu" and x.dtype.itemsize == want.itemsize:
                    x = x.view(want)
                else:
                    die(3, "XLA returned dtype %s for result leaf %d, %s" % (x.dtype, i, shape))
            if et in narrow_float:
                x = x.astype(np.float32)
            elif et in sub_byte_int:
                x = x.astype(sub_byte_int[et])
            path = os.path.join(a.outputs, "out%d.rank%d.npy" % (i, r))
            tmp = path + ".tmp.%d" % os.getpid()
            with open(tmp, "wb") as f:
                np.save(f, np.asarray(x, order="C"), allow_pickle=False)
            os.replace(tmp, path)
    times["outputs"] = time.perf_counter() - t
    if a.time:
        sys.stderr.write("xla_run: %d replicas x %d partitions; seconds: %s\n"
                         % (R, P, " ".join("%s %.3f" % kv for kv in times.items())))
    return 0


def run_guarded():
    """Runs main() in a child process: a CHECK failure inside XLA aborts the
    process, and the parent turns that into a message and exit 3."""
    if os.environ.get("XLA_RUN_CHILD") == "1":
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
