"""module_sets.py: the modules xla_diff.py runs through hlo-run and XLA:CPU,
each with the device counts it runs at and where its inputs come from.

  interp  corpus/interp/<case>: the case's own inputs, one device
  passes  corpus/<pass>/<case>.hlo, before and after hlo-opt's default
          pipeline, at the device counts its .expect lists (quick: one)
  demo    corpus/demo/*.hlo at the count its name or header gives
  peer    ../shared/peer-corpus/*/*.hlo (XLA's own test modules), at the
          count their header or replica groups need
  real    ../shared/real-dumps/*.hlo, at the README's device count, elided
          constants filled (hlo-opt --fill-elided, the same values for both)
  fuzz    hlo-fuzz's generated modules (hlo-fuzz --index K --print), before
          and after the pass each aims at

A Job is one module at one device count: name (set/what[.after][@N]),
path, devices, inputs (a directory, or None: hlo-run draws them and saves
them with --save-inputs), prepare (None, "after" or "fill": the module is
rewritten by hlo-opt first; "skip: WHY": not run), passes (hlo-opt --passes for "after"), others
(device counts to try in turn when hlo-run refuses the module at devices:
XLA's test modules do not say how many devices they were written for).
"""
import collections
import glob
import os
import re
import subprocess

Job = collections.namedtuple("Job", "set name path devices inputs prepare passes others")
Job.__new__.__defaults__ = ((),)        # others: device counts to try when hlo-run refuses `devices`


def header_devices(text):
    m = re.search(r"^\s*HloModule\s+[^\s,]+(.*)$", text, re.M)
    if not m:
        return None
    r = re.search(r"\breplica_count=(\d+)", m.group(1))
    p = re.search(r"\bnum_partitions=(\d+)", m.group(1))
    if not r and not p:
        return None
    return (int(r.group(1)) if r else 1) * (int(p.group(1)) if p else 1)


def groups_devices(text):
    """The fewest devices every replica group of the module fits in (2 when
    it names none): explicit groups {{0,1},{2,3}} by their largest id, iota
    groups [G,S]<=[...] by G x S, source_target_pairs likewise."""
    need = 2
    for g in re.findall(r"replica_groups=\{((?:\{[\d,\s]*\},?\s*)+)\}", text):
        ids = [int(x) for x in re.findall(r"\d+", g)]
        if ids:
            need = max(need, max(ids) + 1)
    for g, s in re.findall(r"replica_groups=\[(\d+),(\d+)\]<=", text):
        need = max(need, int(g) * int(s))
    for pairs in re.findall(r"source_target_pairs=\{([^=]*?)\}\}", text):
        ids = [int(x) for x in re.findall(r"\d+", pairs)]
        if ids:
            need = max(need, max(ids) + 1)
    return need


def interp_jobs(root):
    out = []
    for d in sorted(glob.glob(os.path.join(root, "corpus/interp/*/module.hlo"))):
        case = os.path.dirname(d)
        out.append(Job("interp", "interp/" + os.path.basename(case), d, 1, case, None, None))
    return out


def passes_jobs(root, quick, max_devices):
    out = []
    for hlo in sorted(glob.glob(os.path.join(root, "corpus/aws_neuron_*/*.hlo"))):
        exp = hlo[:-4] + ".expect"
        counts = [2]
        if os.path.exists(exp):
            m = re.search(r"^ranks:\s*([\d,\s]+)$", open(exp).read(), re.M)
            if m:
                counts = [int(x) for x in m.group(1).replace(",", " ").split()]
        counts = [n for n in counts if n <= max_devices] or counts[:1]
        if quick:
            counts = [max((n for n in counts if n <= 4), default=min(counts))]
        pass_dir = os.path.basename(os.path.dirname(hlo))
        what = "passes/%s/%s" % (pass_dir, os.path.basename(hlo)[:-4])
        for n in counts:
            for prep in (None, "after"):
                name = what + (".after" if prep else "") + "@%d" % n
                out.append(Job("passes", name, hlo, n, None, prep, "default"))
    return out


def demo_jobs(root):
    out = []
    for hlo in sorted(glob.glob(os.path.join(root, "corpus/demo/*.hlo"))):
        text = open(hlo).read()
        m = re.search(r"_(\d+)dev\b", os.path.basename(hlo))
        n = header_devices(text) or (int(m.group(1)) if m else groups_devices(text))
        base = "demo/" + os.path.basename(hlo)[:-4]
        out.append(Job("demo", base + "@%d" % n, hlo, n, None, None, None))
        out.append(Job("demo", base + ".after@%d" % n, hlo, n, None, "after", "default"))
    return out


def peer_jobs(shared):
    out = []
    for hlo in sorted(glob.glob(os.path.join(shared, "peer-corpus/*/*.hlo"))):
        text = open(hlo).read()
        side = hlo[:-4] + ".expect.md"
        note = re.search(r"Parse-only for an interpreter[^.;\n]*", open(side).read()) if os.path.exists(side) else None
        if note:            # an infinite loop, hundreds of MiB: its sidecar says so
            name = "peer/%s/%s" % (os.path.basename(os.path.dirname(hlo)), os.path.basename(hlo)[:-4])
            out.append(Job("peer", name, hlo, 0, None, "skip: its sidecar says: " + note.group(0), None))
            continue
        fixed = header_devices(text)
        n = fixed or groups_devices(text)
        others = () if fixed else tuple(k for k in (2, 4, 8) if k > n)
        name = "peer/%s/%s@%d" % (os.path.basename(os.path.dirname(hlo)), os.path.basename(hlo)[:-4], n)
        out.append(Job("peer", name, hlo, n, None, None, None, others))
    return out


def real_jobs(shared):
    readme = os.path.join(shared, "real-dumps/README.md")
    if not os.path.exists(readme):
        return []
    out = []
    for line in open(readme):
        m = re.match(r"^\|\s*([\w.]+\.hlo)\s*\|[^|]*\|[^|]*\|\s*([^|]*)\|", line)
        if not m:
            continue
        count = re.search(r"\d+", m.group(2))
        n = int(count.group(0)) if count else 2          # "any": two devices
        hlo = os.path.join(shared, "real-dumps", m.group(1))
        out.append(Job("real", "real/%s@%d" % (m.group(1)[:-4], n), hlo, n, None, "fill", None))
    return out


def fuzz_jobs(build, work, count, seed):
    """count modules of hlo-fuzz's seed, each before and after the pass it
    aims at (its recipe names the pass and the device grid)."""
    out = []
    d = os.path.join(work, "fuzz-modules")
    os.makedirs(d, exist_ok=True)
    for k in range(count):
        r = subprocess.run([os.path.join(build, "hlo-fuzz"), "--seed", str(seed), "--index", str(k), "--print"],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("hlo-fuzz --seed %d --index %d --print: exit %d: %s"
                               % (seed, k, r.returncode, r.stderr.strip()[:300]))
        text = r.stdout
        grid = re.search(r"^// devices: (\d+) replicas x (\d+) partitions", text, re.M)
        recipe = re.search(r"^// # hlo-fuzz recipe: module \d+ of seed \d+, pass (#\d+|[\w-]+)", text, re.M)
        n = int(grid.group(1)) * int(grid.group(2)) if grid else 1
        path = os.path.join(d, "fuzz_%d_%d.hlo" % (seed, k))
        with open(path, "w") as f:
            f.write(text)
        passes = pass_names(build).get(recipe.group(1)) if recipe else None
        base = "fuzz/seed%d-%d" % (seed, k)
        out.append(Job("fuzz", base + "@%d" % n, path, n, None, None, None))
        out.append(Job("fuzz", base + ".after@%d" % n, path, n, None, "after", passes or "default"))
    return out


_PASSES = {}


def pass_names(build):
    """{'#98': 'aws_neuron_flip_all_gathers_binary', ...} from hlo-opt --list-passes."""
    if not _PASSES:
        text = subprocess.run([os.path.join(build, "hlo-opt"), "--list-passes"], capture_output=True,
                              text=True).stdout
        for tag, name in re.findall(r"^\s*(#\d+)\s+(\S+)", text, re.M):
            _PASSES[tag] = name
    return _PASSES
