#!/bin/bash
# run_interp_corpus.sh [HLO-RUN]: the interpreter's op corpus.  For each
# corpus/interp/<case>/ (written by scripts/gen_interp_corpus.py, whose
# expected values are computed independently with numpy), runs
#   hlo-run <case>/module.hlo --inputs <case> --outputs <tmp>
# on one rank (JOBS cases at a time, default 8: a run mostly waits for MPI
# to start) and compares every expected/out<i>.rank0.npy with the output,
# as <case>/compare says:
#   exact     same dtype and shape, bitwise equal (any NaN equals any NaN)
#   ulp N     same dtype and shape, NaN where NaN, infinities equal, a zero
#             where a zero of the same sign is expected, else at most N ulps
#             apart in the output's type (bf16 is known from the module's
#             result type: its values come as f32)
#   rtol X    same dtype and shape, |got - want| <= X |want|
#   maxrel X  same dtype and shape, NaN where NaN, infinities equal, else
#             |got - want| <= X max|want| (the largest finite magnitude of
#             the output): for transforms, whose small outputs carry the
#             rounding error of the large ones
# Complex outputs: exact and ulp compare the real and imaginary parts each;
# rtol and maxrel use the modulus |got - want|.
# Needs /usr/bin/python3 with numpy (scripts/install-deps.sh installs
# python3-numpy).  One line per case, then "interp-corpus: N passed, N
# failed"; exit 1 on any failure.  With TALLY set, appends "passed failed".
set -uo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness interp-corpus
run=$(tool_path "${1:-$root/build/hlo-run}") || exit 2
corpus=$root/corpus/interp
python=/usr/bin/python3

give_up() {
    echo "interp-corpus: $1"
    fail=1
    finish
}

if ! [ -x "$python" ] || ! "$python" -c 'import numpy' 2>/dev/null; then
    give_up "$python has no numpy: install python3-numpy (scripts/install-deps.sh does)"
fi

cases=()
while IFS= read -r -d '' d; do cases+=("$d"); done \
    < <(find "$corpus" -mindepth 1 -maxdepth 1 -type d -print0 2>/dev/null | sort -z)
[ ${#cases[@]} -gt 0 ] || give_up "no cases under $corpus (run scripts/gen_interp_corpus.py)"

mkdir -p "$tmp/out" "$tmp/err" "$tmp/rc"

# run_case.sh DIR: hlo-run on one case; outputs in $TMPD/out/<case>/, exit
# status in $TMPD/rc/<case>, standard error in $TMPD/err/<case>.
cat >"$tmp/run_case.sh" <<'END_RUN'
#!/bin/bash
d=$1
name=$(basename "$d")
mkdir -p "$TMPD/out/$name"
timeout 60 "$RUN" "$d/module.hlo" --inputs "$d" --outputs "$TMPD/out/$name" \
    >/dev/null 2>"$TMPD/err/$name" </dev/null
echo $? >"$TMPD/rc/$name"
END_RUN
chmod +x "$tmp/run_case.sh"

# compare.py TMP CASE-DIR...: one line per case, "ok   " or "FAIL " first,
# the reasons indented below a failure.
cat >"$tmp/compare.py" <<'END_COMPARE'
import os, re, sys
import numpy as np

INT_VIEW = {2: np.int16, 4: np.int32, 8: np.int64}


def ordered(a, t):
    """Float bits as integers ordered like the values (-0 and +0 both 0);
    bf16 values (f32 storage) use their top 16 bits."""
    if t == "bf16":
        i = (a.view(np.uint32) >> 16).astype(np.uint16).view(np.int16).astype(np.int64)
        m = (1 << 15) - 1
    else:
        i = a.view(INT_VIEW[a.dtype.itemsize]).astype(np.int64)
        m = (1 << (8 * a.dtype.itemsize - 1)) - 1
    return np.where(i < 0, -(i & m), i)


def show(a, idx):
    v = a[idx]
    if a.dtype.kind == "f":
        bits = int(v.view(INT_VIEW[a.dtype.itemsize])) & ((1 << (8 * a.dtype.itemsize)) - 1)
        return f"{v!r} (0x{bits:x})"
    return repr(v)


def parts(a):
    """A complex array as its real and imaginary parts, in a last dim of 2."""
    return a.view(a.real.dtype).reshape(a.shape + (2,))


def mismatches(got, want, mode, t):
    """Boolean mask of the elements that do not match under mode."""
    if want.dtype.kind == "c" and mode[0] in ("exact", "ulp"):
        return np.any(mismatches(parts(got), parts(want), mode, t), axis=-1)
    if want.dtype.kind not in "fc":
        return got != want
    wide = np.complex128 if want.dtype.kind == "c" else np.float64
    gn, wn = np.isnan(got), np.isnan(want)
    with np.errstate(all="ignore"):
        if mode[0] == "exact":
            iv = INT_VIEW[want.dtype.itemsize]
            return ~((gn & wn) | (got.view(iv) == want.view(iv)))
        if mode[0] == "ulp":
            fin = np.isfinite(got) & np.isfinite(want)
            dist = np.abs(ordered(got, t) - ordered(want, t))
            zero_sign = (want == 0) & (got == 0) & (np.signbit(want) != np.signbit(got))
            return ((gn != wn) | (~gn & ~wn & ~fin & (got != want))
                    | (fin & (dist > int(mode[1]))) | zero_sign)
        if mode[0] in ("rtol", "maxrel"):
            fin = np.isfinite(want)
            err = np.abs(got.astype(wide) - want.astype(wide))
            mag = np.abs(want.astype(wide))
            bound = mag if mode[0] == "rtol" else (np.max(mag[fin]) if np.any(fin) else 0.0)
            return ((gn != wn) | (~fin & ~wn & (got != want))
                    | (fin & ~(err <= float(mode[1]) * bound)))
    raise ValueError(f"bad compare mode '{' '.join(mode)}'")


def check(case, outdir):
    """The compare mode and the problems of one case's outputs."""
    mode = open(os.path.join(case, "compare")).read().split()
    text = open(os.path.join(case, "module.hlo")).read()
    sig = re.search(r"^ENTRY[^\n]*->(.*)$", text, re.M)
    leaf_types = re.findall(r"([a-z][a-z0-9]*)\[", sig.group(1)) if sig else []
    expdir = os.path.join(case, "expected")
    n = len([f for f in os.listdir(expdir) if re.fullmatch(r"out\d+\.rank0\.npy", f)])
    problems = []
    for i in range(n):
        want = np.load(os.path.join(expdir, f"out{i}.rank0.npy"))
        path = os.path.join(outdir, f"out{i}.rank0.npy")
        t = leaf_types[i] if i < len(leaf_types) else "?"
        if not os.path.exists(path):
            problems.append(f"out{i} ({t}): not written")
            continue
        got = np.load(path)
        if got.dtype != want.dtype or got.shape != want.shape:
            problems.append(f"out{i} ({t}): got {got.dtype} {got.shape}, want {want.dtype} {want.shape}")
            continue
        if want.size == 0:
            continue
        bad = mismatches(got, want, mode, t)
        if np.any(bad):
            idx = tuple(int(v) for v in np.argwhere(bad)[0])
            problems.append(f"out{i} ({t}{list(want.shape)}): {int(np.sum(bad))} of {want.size} differ; "
                            f"first at {list(idx)}: got {show(got, idx)}, want {show(want, idx)}")
    extra = [f for f in os.listdir(outdir) if re.fullmatch(r"out\d+\.rank0\.npy", f)
             and int(f[3:-10]) >= n]
    if extra:
        problems.append(f"{len(extra)} more outputs than expected")
    return " ".join(mode), problems


tmp = sys.argv[1]
for case in sys.argv[2:]:
    name = os.path.basename(case)
    rc_path = os.path.join(tmp, "rc", name)
    rc = open(rc_path).read().strip() if os.path.exists(rc_path) else "?"
    if rc != "0":
        print(f"FAIL {name}: hlo-run exit {rc}")
        err_path = os.path.join(tmp, "err", name)
        err = open(err_path, errors="replace").read().splitlines() if os.path.exists(err_path) else []
        for line in err[:5]:
            print("    " + line)
        continue
    try:
        mode, problems = check(case, os.path.join(tmp, "out", name))
    except Exception as e:          # a malformed case or output file
        mode, problems = "?", [f"comparer: {type(e).__name__}: {e}"]
    if problems:
        print(f"FAIL {name} ({mode})")
        for p in problems[:6]:
            print("    " + p)
        if len(problems) > 6:
            print(f"    ... and {len(problems) - 6} more")
    else:
        print(f"ok   {name} ({mode})")
    sys.stdout.flush()
END_COMPARE

printf '%s\0' "${cases[@]}" | TMPD=$tmp RUN=$run xargs -0 -n 1 -P "${JOBS:-8}" "$tmp/run_case.sh"
"$python" "$tmp/compare.py" "$tmp" "${cases[@]}" | tee "$tmp/report"

pass=$(grep -c '^ok ' "$tmp/report")
fail=$(grep -c '^FAIL ' "$tmp/report")
missing=$((${#cases[@]} - pass - fail))
if [ $missing -ne 0 ]; then
    echo "interp-corpus: the comparer stopped early; $missing cases not compared"
    fail=$((fail + missing))
fi
finish
