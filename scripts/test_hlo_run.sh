#!/bin/bash
# test_hlo_run.sh [HLO-RUN]: hlo-run end to end (spec/tools.md), alone and
# under mpirun with 2 and 4 ranks: printing, .npy outputs and inputs, seeds,
# --time, stdin, and that every kind of error exits 2 with its message
# printed once (or per rank when only some ranks fail) and never hangs.
# When a python3 with numpy is installed, the .npy files are also checked
# with numpy; otherwise those cases are skipped with a note.
# One line per case, then "hlo-run: N passed, N failed"; exit 1 on any
# failure.  With TALLY set, appends "passed failed" to it.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness hlo-run
run=$(tool_path "${1:-$root/build/hlo-run}") || exit 2
cd "$tmp" || exit 2
mpi_flags=(--mca mpi_yield_when_idle 1)

python=
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then
        python=$p
        break
    fi
done

bad_context() { [ -s err ] && sed 's/^/    /' err | head -n 20; }

# hr N ARGS...: hlo-run on N ranks (0: without mpirun); stdout in out,
# stderr in err, the exit status in rc.
hr() {
    local n=$1
    shift
    if [ "$n" -eq 0 ]; then
        timeout 60 "$run" "$@" >out 2>err </dev/null
    else
        mpi_run 60 "$n" "$run" "$@" >out 2>err </dev/null
    fi
    rc=$?
}

# expect NAME RC [PATTERN...]: the last hr exited RC and stdout+stderr
# contains every PATTERN (grep -E).
expect() {
    local name=$1 want=$2 pat
    shift 2
    if [ "$rc" -ne "$want" ]; then
        bad "$name" "exit $rc, expected $want"
        return 1
    fi
    for pat in "$@"; do
        # grep reads the files itself: with pipefail, `cat | grep -q` fails
        # whenever grep stops early and cat gets SIGPIPE.
        if ! grep -Eq -- "$pat" out err; then
            bad "$name" "output lacks /$pat/"
            return 1
        fi
    done
    ok "$name"
}

# count PATTERN: how many lines of stdout+stderr match.
count() { cat out err | grep -Ec -- "$1"; }

# ---- Modules

cat >add.hlo <<'EOF'
HloModule add

ENTRY %main (a: f32[4], b: f32[4]) -> (f32[4], f32[4]) {
  %a = f32[4] parameter(0)
  %b = f32[4] parameter(1)
  %s = f32[4] add(f32[4] %a, f32[4] %b)
  %n = f32[4] negate(f32[4] %a)
  ROOT %t = (f32[4], f32[4]) tuple(%s, %n)
}
EOF
cat >id.hlo <<'EOF'
HloModule id

ENTRY %main (a: f32[2,3], b: bf16[5], c: s32[], d: pred[3]) -> (f32[2,3], bf16[5], s32[], pred[3]) {
  %a = f32[2,3] parameter(0)
  %b = bf16[5] parameter(1)
  %c = s32[] parameter(2)
  %d = pred[3] parameter(3)
  ROOT %t = (f32[2,3], bf16[5], s32[], pred[3]) tuple(%a, %b, %c, %d)
}
EOF
cat >f32x5.hlo <<'EOF'
HloModule f32x5

ENTRY %main (x: f32[5]) -> f32[5] {
  ROOT %x = f32[5] parameter(0)
}
EOF
cat >big.hlo <<'EOF'
HloModule big

ENTRY %main (x: f32[2000]) -> f32[2000] {
  %x = f32[2000] parameter(0)
  ROOT %n = f32[2000] negate(f32[2000] %x)
}
EOF
cat >syntax.hlo <<'EOF'
HloModule syntax

ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4] parameter(0)
  ROOT %b = f32[4] bogus-op(f32[4] %a)
}
EOF
cat >custom.hlo <<'EOF'
HloModule custom, replica_count=2

ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4] parameter(0)
  ROOT %c = f32[4] custom-call(f32[4] %a), custom_call_target="Frobnicate"
}
EOF
# Replica 0 fails inside a conditional while replica 1 waits in the all-reduce.
cat >stuck.hlo <<'EOF'
HloModule stuck, replica_count=2

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %x, f32[] %y)
}

%bad (t: f32[4]) -> f32[4] {
  %t = f32[4] parameter(0)
  ROOT %c = f32[4] custom-call(f32[4] %t), custom_call_target="Frobnicate"
}

%good (u: f32[4]) -> f32[4] {
  ROOT %u = f32[4] parameter(0)
}

ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4] parameter(0)
  %id = u32[] replica-id()
  %zero = u32[] constant(0)
  %p = pred[] compare(u32[] %id, u32[] %zero), direction=EQ
  %c = f32[4] conditional(pred[] %p, f32[4] %a, f32[4] %a), true_computation=%bad, false_computation=%good
  ROOT %r = f32[4] all-reduce(f32[4] %c), replica_groups={}, to_apply=%sum
}
EOF
demo=$root/corpus/demo/two_layer_grads.hlo

# ---- Usage

hr 0 --help
expect "help lists every flag with its default" 0 '--seed=S' '--dist=uniform\|normal\|wide\|special' \
    '--inputs=DIR' '--print' '--outputs=DIR' '--replicas=N' '--partitions=N' '--time' '--help' \
    'default: 0\)' 'default: uniform\)'
hr 0 add.hlo --frob
expect "unknown flag exits 2" 2 "hlo-run: unknown flag '--frob'"
hr 0 add.hlo --print --outputs o
expect "--print with --outputs exits 2" 2 'exclude each other'
hr 0 add.hlo --dist gaussian
expect "bad --dist exits 2" 2 "--dist: bad value 'gaussian'"
hr 0 add.hlo --seed=-3
expect "negative --seed exits 2" 2 "--seed: bad value '-3'"
hr 0
expect "no module exits 2" 2 'no module'
hr 0 add.hlo --max-memory=lots
expect "bad --max-memory exits 2" 2 "--max-memory: bad value 'lots'"

# ---- Memory, estimated before running

hr 0 big.hlo --max-memory=4kB
expect "a module over --max-memory is refused before it runs, located, with the figures" 2 \
    '^big.hlo:[0-9]+:[0-9]+: error: running the module needs an estimated [0-9.]+ kB per rank, more than --max-memory=4 kB \(as given\)'
hr 2 big.hlo --max-memory=4KiB
if [ "$rc" -eq 2 ] && [ "$(count 'needs an estimated')" -eq 1 ]; then ok "over --max-memory on 2 ranks: one message"
else bad "over --max-memory on 2 ranks: one message" "exit $rc"; fi
hr 0 big.hlo --max-memory=1MB
expect "the same module under a larger --max-memory runs" 0

# ---- One rank

hr 0 add.hlo
# The first f32 uniform values of stream (0, 0, 0) are pinned in
# tests/check/test_random_inputs.c: 0x3da21cd3 ... = 0.0791565403 ...
expect "single rank prints every leaf; out1 = -param0 matches the golden stream" 0 \
    '^rank 0: out0 = f32\[4\] \{' \
    '^rank 0: out1 = f32\[4\] \{-0.0791565403, -0.221206442, -0.527045667, 0.873155236\}$'
cp out first
hr 0 add.hlo --seed 0
if cmp -s out first; then ok "same seed gives the same output"; else bad "same seed gives the same output" "outputs differ"; fi
hr 0 add.hlo --seed=18446744073709551615
if [ "$rc" -eq 0 ] && ! cmp -s out first; then ok "another seed (2^64-1) gives other values"
else bad "another seed (2^64-1) gives other values" "exit $rc or same output"; fi
for d in normal wide special; do
    hr 0 add.hlo --dist "$d"
    expect "--dist $d runs" 0 '^rank 0: out1 = f32\[4\]'
done
hr 0 big.hlo
if [ "$rc" -eq 0 ] && [ ! -s out ] && grep -q 'more than 1000' err; then ok "a large result is not printed, with a note"
else bad "a large result is not printed, with a note" "exit $rc"; fi
hr 0 big.hlo --print
expect "--print prints a large result" 0 '^rank 0: out0 = f32\[2000\] \{'
hr 0 syntax.hlo
expect "parse error exits 2 naming file:line:col" 2 '^syntax.hlo:5:20: error: '
hr 0 nope.hlo
expect "missing module exits 2" 2 '^nope.hlo: error: cannot open'

# Started directly, hlo-run is an MPI singleton that starts without Open
# MPI's daemon (src/collectives/coll.c); such singletons share Open MPI's
# session directory name unless each has its own base (with one base, 3 of
# 100 runs started 4 ms apart failed in MPI_Init).  Forty started 4 ms apart
# must all finish and leave nothing in TMPDIR.
export TMPDIR=$tmp/singletons
mkdir -p "$TMPDIR"
for i in $(seq 40); do
    (timeout 60 "$run" add.hlo --seed "$i" >/dev/null 2>"err.s$i" </dev/null; echo $? >"rc.s$i") &
    sleep 0.004
done
wait
failed_runs=$(cat rc.s* | grep -cv '^0$')
if [ "$failed_runs" -eq 0 ] && [ -z "$(ls -A "$TMPDIR")" ]; then ok "forty singletons at once all finish and leave nothing in TMPDIR"
else bad "forty singletons at once all finish and leave nothing in TMPDIR" "$failed_runs failed; left: $(ls -A "$TMPDIR" | head -n 3 | tr '\n' ' ')"
    cat err.s* | head -n 10 | sed 's/^/    /'; fi
unset TMPDIR
rm -f rc.s* err.s*

# A start-up that does not end (here: a limit shorter than MPI_Init takes)
# ends with a message and exit 3, not a wait without end.
HLOCHECK_MPI_INIT_TIMEOUT=0.001 hr 0 add.hlo
expect "an MPI start-up past HLOCHECK_MPI_INIT_TIMEOUT exits 3 saying so" 3 \
    '^hlo-run: error: MPI start-up \(MPI_Init\) did not finish within 0.001 s'

# ---- Two and four ranks

hr 2 add.hlo
expect "2 ranks print in rank order" 0 'running it as 2 replicas' '^rank 1: out1 = f32\[4\]'
if [ "$(grep -c '^rank ' out)" -eq 4 ] && [ "$(grep '^rank ' out | cut -c1-6 | tr -d '\n')" = "rank 0rank 0rank 1rank 1" ] \
    && grep -qxF "$(grep '^rank 0' first | tail -n 1)" out; then
    ok "rank 0 of 2 equals the single-rank run; ranks in order"
else
    bad "rank 0 of 2 equals the single-rank run; ranks in order" "$(head -c 300 out)"
fi
r0=$(sed -n 's/^rank 0: out1 = //p' out); r1=$(sed -n 's/^rank 1: out1 = //p' out)
if [ -n "$r0" ] && [ "$r0" != "$r1" ]; then ok "ranks draw different inputs"; else bad "ranks draw different inputs" "same values"; fi

mpi_run 60 2 "$run" - <add.hlo >out 2>err; rc=$?
expect "2 ranks read the module from standard input" 0 '^rank 1: out1 = f32\[4\]'

hr 4 "$demo" --time
expect "demo module on 4 ranks, --time" 0 '^rank 3: out3 = f32\[\] ' '^time per instruction kind' \
    '^  all-gather +[0-9]+ ' 'algbw +busbw' '^  g.w1.shard +reduce-scatter +4 +4096 '
if [ "$(count 'out3 = f32\[\] ')" -eq 4 ] && [ "$(sed -n 's/^rank .: out3 = //p' out | sort -u | wc -l)" -eq 1 ]; then
    ok "all-reduced loss is identical on all 4 ranks"
else
    bad "all-reduced loss is identical on all 4 ranks" "$(grep out3 out)"
fi
hr 2 "$demo"
expect "world size mismatch exits 2" 2 'needs 4 replicas x 1 partitions = 4 devices, but 2 MPI ranks'
[ "$(count 'needs 4 replicas')" -eq 1 ] && ok "mismatch message printed once" || bad "mismatch message printed once" "$(count 'needs 4 replicas') times"
hr 2 "$demo" --replicas 2
expect "--replicas overrides the header (then the groups do not fit)" 2 'error: '
hr 2 syntax.hlo
expect "parse error on 2 ranks exits 2" 2 '^syntax.hlo:5:20: error: '
[ "$(count 'error: ')" -eq 1 ] && ok "parse error printed once" || bad "parse error printed once" "$(count 'error: ') times"
hr 2 custom.hlo
expect "unsupported op on every rank exits 2, once" 2 '^custom.hlo:5:8: error: unsupported op'
[ "$(count 'unsupported op')" -eq 1 ] || bad "unsupported op printed once" "$(count 'unsupported op') times"
hr 2 stuck.hlo
expect "a rank failing while the other waits in a collective aborts the job" 2 \
    '^rank 0: stuck.hlo:11:8: error: unsupported op'

# ---- .npy outputs and inputs

hr 2 id.hlo --seed 5 --outputs o1/nested
if [ "$rc" -eq 0 ] && [ ! -s out ] && [ "$(ls o1/nested | tr '\n' ' ')" = \
    "out0.rank0.npy out0.rank1.npy out1.rank0.npy out1.rank1.npy out2.rank0.npy out2.rank1.npy out3.rank0.npy out3.rank1.npy " ]; then
    ok "--outputs writes DIR/out<i>.rank<r>.npy for every leaf, creating DIR"
else
    bad "--outputs writes DIR/out<i>.rank<r>.npy for every leaf, creating DIR" "exit $rc: $(ls -R o1 2>&1 | tr '\n' ' ')"
fi
mkdir -p in1
for r in 0 1; do for i in 0 1 2 3; do cp "o1/nested/out$i.rank$r.npy" "in1/param$i.rank$r.npy"; done; done
hr 2 id.hlo --inputs in1 --outputs o2
same=1
for f in o1/nested/*.npy; do cmp -s "$f" "o2/$(basename "$f")" || same=0; done
if [ "$rc" -eq 0 ] && [ $same -eq 1 ] && ! grep -q rounded err; then
    ok "outputs read back as inputs reproduce them bit for bit (bf16 via f32, no rounding)"
else
    bad "outputs read back as inputs reproduce them bit for bit (bf16 via f32, no rounding)" "exit $rc"
fi
hr 0 id.hlo --seed 5
sed 's/^rank 0: //' out >alone
hr 2 id.hlo --inputs in1
if [ "$rc" -eq 0 ] && diff <(sed -n 's/^rank 0: //p' out) alone >/dev/null; then
    ok "printed values from .npy inputs equal the seeded run"
else
    bad "printed values from .npy inputs equal the seeded run" "exit $rc"
fi
hr 0 f32x5.hlo --outputs o3
cp o3/out0.rank0.npy in1/param1.rank0.npy
hr 0 id.hlo --inputs in1
expect "f32 values rounded into a bf16 parameter give a note" 0 'note: in1/param1.rank0.npy: f32 values rounded to bf16'
cp o3/out0.rank0.npy in1/param0.rank0.npy
hr 0 id.hlo --inputs in1
expect "a file of the wrong shape exits 2 naming it" 2 \
    '^in1/param0.rank0.npy: error: shape \(5,\) does not fit parameter of type f32\[2,3\]'
cp o1/nested/out2.rank0.npy in1/param3.rank0.npy
cp o1/nested/out0.rank0.npy in1/param0.rank0.npy
hr 0 id.hlo --inputs in1
expect "a file of the wrong dtype exits 2 naming it" 2 \
    '^in1/param3.rank0.npy: error: dtype <i4 does not fit parameter of type pred\[3\]'
cp o1/nested/out3.rank0.npy in1/param3.rank0.npy
rm in1/param2.rank1.npy
hr 2 id.hlo --inputs in1
expect "a file only rank 1 lacks: found at start-up, exit 2 naming the rank and the file" 2 \
    '^hlo-run: --inputs in1: rank 1 cannot read in1/param2.rank1.npy \(and maybe more\) while other ranks read 4 files each'
[ "$(grep -c 'cannot read in1/param2' err)" -eq 1 ] || bad "said once" "$(grep -c 'cannot read in1/param2' err) lines"

# ---- numpy cross-checks

if [ -z "$python" ]; then
    skip "numpy reads our .npy files" "no python3 with numpy (apt-get install python3-numpy)"
    skip "numpy's .npy files are read" "no python3 with numpy"
    skip "add and negate agree with numpy" "no python3 with numpy"
else
    if "$python" - o1/nested <<'EOF' >pyout 2>&1; then
import sys, numpy as np
d = sys.argv[1]
for r in (0, 1):
    a = np.load(f"{d}/out0.rank{r}.npy"); b = np.load(f"{d}/out1.rank{r}.npy")
    c = np.load(f"{d}/out2.rank{r}.npy"); p = np.load(f"{d}/out3.rank{r}.npy")
    assert a.dtype == np.float32 and a.shape == (2, 3), (a.dtype, a.shape)
    assert b.dtype == np.float32 and b.shape == (5,), (b.dtype, b.shape)
    assert ((b.view(np.uint32) & 0xFFFF) == 0).all(), "bf16 written as f32 must have zero low bits"
    assert c.dtype == np.int32 and c.shape == () and -8 <= int(c) <= 8, (c.dtype, c.shape, c)
    assert p.dtype == np.bool_ and p.shape == (3,), (p.dtype, p.shape)
    assert (-1 <= a).all() and (a < 1).all() and (-1 <= b).all() and (b < 1).all()
print("ok")
EOF
        ok "numpy reads our .npy files (dtypes, shapes, bf16 as exact f32)"
    else
        bad "numpy reads our .npy files (dtypes, shapes, bf16 as exact f32)" "$(head -c 400 pyout)"
    fi
    mkdir -p in4
    "$python" - in4 <<'EOF'
import sys, numpy as np
g = np.random.default_rng(1)
for r in (0, 1):
    for p in (0, 1):
        np.save(f"{sys.argv[1]}/param{p}.rank{r}.npy", g.standard_normal(4).astype(np.float32))
EOF
    hr 2 add.hlo --inputs in4 --outputs o4
    if [ "$rc" -eq 0 ] && "$python" - in4 o4 <<'EOF' >pyout 2>&1; then
import sys, numpy as np
i, o = sys.argv[1], sys.argv[2]
for r in (0, 1):
    a = np.load(f"{i}/param0.rank{r}.npy"); b = np.load(f"{i}/param1.rank{r}.npy")
    s = np.load(f"{o}/out0.rank{r}.npy"); n = np.load(f"{o}/out1.rank{r}.npy")
    assert s.dtype == np.float32 and (s == a + b).all(), (r, s, a + b)
    assert (n == -a).all(), (r, n, -a)
print("ok")
EOF
        ok "add and negate on numpy's inputs equal numpy's results on both ranks"
    else
        bad "add and negate on numpy's inputs equal numpy's results on both ranks" "exit $rc: $(head -c 400 pyout)"
    fi
    mkdir -p in3
    "$python" - in3 <<'EOF'
import sys, numpy as np
d = sys.argv[1]
np.save(f"{d}/param0.rank0.npy", np.arange(6, dtype=np.float32).reshape(2, 3) / 4)
np.save(f"{d}/param1.rank0.npy", np.array([1, -2, 0.5, 3.25, -0.125], dtype=np.float32))
np.save(f"{d}/param2.rank0.npy", np.array(-7, dtype=np.int32))
np.save(f"{d}/param3.rank0.npy", np.array([True, False, True]))
EOF
    hr 0 id.hlo --inputs in3 --outputs o5
    if [ "$rc" -eq 0 ] && "$python" - in3 o5 <<'EOF' >pyout 2>&1; then
import sys, numpy as np
i, o = sys.argv[1], sys.argv[2]
for k in range(4):
    x = np.load(f"{i}/param{k}.rank0.npy"); y = np.load(f"{o}/out{k}.rank0.npy")
    assert x.dtype == y.dtype and x.shape == y.shape and (x == y).all(), (k, x, y)
print("ok")
EOF
        ok "numpy's .npy files are read and written back unchanged"
    else
        bad "numpy's .npy files are read and written back unchanged" "exit $rc: $(head -c 400 pyout)"
    fi
fi

# Start-up agreement: ranks given different module files, flags or input
# files stop before any work, exit 2 on every rank, one message naming them.
cp "$demo" a.hlo
{ cat "$demo"; echo "// one line more"; } >b.hlo
mpi_run 60 2 "$run" a.hlo : -np 2 "$run" b.hlo >out 2>err </dev/null; rc=$?
expect "MPMD ranks on different module files: refused" 2 \
    'different module files \(by content\): ranks 0-1 have one, ranks 2-3 another'
if [ "$(grep -c 'different module files' err)" -eq 1 ] && ! grep -q '^rank ' out; then
    ok "the mismatch is printed once, before any output"
else
    bad "mismatch printed once" "$(grep -c 'different module files' err) times"
fi
mpi_run 60 1 "$run" a.hlo --seed 1 : -np 1 "$run" a.hlo --seed 2 >out 2>err </dev/null; rc=$?
expect "ranks given different --seed: refused" 2 'different flags: rank 0 has one, rank 1 another'
# every rank's files present, but rank 1's first one of another size
mpi_run 60 2 "$run" add.hlo --outputs agree_out >out 2>err </dev/null
mkdir -p agree_in
for r in 0 1; do for p in 0 1; do cp agree_out/out0.rank$r.npy agree_in/param$p.rank$r.npy; done; done
cp id_small.npy agree_in/param0.rank1.npy 2>/dev/null || head -c 100 agree_out/out0.rank1.npy >agree_in/param0.rank1.npy
mpi_run 60 2 "$run" add.hlo --inputs agree_in >out 2>err </dev/null; rc=$?
expect "a rank's --inputs file of another size: refused at start-up" 2 \
    'different --inputs files \(how many DIR/param<p>.rank<r>.npy, and their sizes\): rank 0 has one, rank 1 another'

mpi_run 60 2 "$run" add.hlo --inputs agree_out --outputs ./agree_out >out 2>err </dev/null; rc=$?
expect "--outputs naming the --inputs directory: refused" 2 'is the --inputs directory: refusing to write over the inputs'

check_tool=$(dirname "$run")/hlo-check
# A rank that fails alone (its input file is not .npy, same size as the
# others'): every rank ends within a bounded time, the failing rank's
# message once, exit 2; also for hlo-check, whose other ranks wait for it.
for r in 0 1; do for p in 0 1; do cp agree_out/out0.rank$r.npy agree_in/param$p.rank$r.npy; done; done
printf 'XXXXXX' | dd of=agree_in/param1.rank1.npy bs=1 seek=0 conv=notrunc status=none
for tool in "$run" "$check_tool"; do
    args=(add.hlo)
    [ "$tool" = "$check_tool" ] && args+=(add.hlo)
    t0=$(date +%s%N)
    mpi_run 60 2 "$tool" "${args[@]}" --inputs agree_in >out 2>err </dev/null; rc=$?
    took=$((($(date +%s%N) - t0) / 1000000))
    if [ $rc -eq 2 ] && [ "$(grep -c '^rank 1: agree_in/param1.rank1.npy: error: not a .npy file' err)" -eq 1 ] &&
       [ $took -lt 20000 ]; then
        ok "one rank's bad input file ($(basename "$tool")): exit 2 after $took ms, its message once"
    else
        bad "one rank's bad input file ($(basename "$tool"))" "exit $rc after $took ms"
    fi
done

# A module read from a pipe (process substitution) is read once, by the
# parser: the start-up agreement hashes a pipe by its name.  An input that
# is a pipe, a directory or a device is refused without waiting on it.
hr 0 <(cat add.hlo) --seed 5
expect "a module from a pipe (<(cat m.hlo)) runs" 0 '^rank 0: out0 = '
mkdir -p odd_in
cp agree_out/out0.rank0.npy odd_in/param0.rank0.npy
mkfifo odd_in/param1.rank0.npy
hr 0 add.hlo --inputs odd_in
expect "an input that is a FIFO is refused at once, not waited on" 2 \
    'odd_in/param1.rank0.npy: error: not a regular file \(a pipe\)'
rm odd_in/param1.rank0.npy
mkdir odd_in/param1.rank0.npy
hr 0 add.hlo --inputs odd_in
expect "an input that is a directory is refused" 2 'not a regular file \(a directory\)'

# --timeout: a loop that never ends, a rank stuck in a collective its peer
# never joins: the job ends after S seconds plus a bounded grace, exit 3,
# each rank naming the instruction it was in.
check=$(dirname "$run")/hlo-check
# (in the loop a rank may be in the while or in its condition or body)
for case in "loop_forever.hlo|$run|rank 0: --timeout 2 s passed, in instruction [a-z]+ \((while|constant|compare|get-tuple-element|add|tuple)\)" \
            "stuck_in_all_reduce.hlo|$run|rank 0: --timeout 2 s passed, in instruction ar \(all-reduce\)" \
            "loop_forever.hlo|$check|hlo-check: rank [01]: --timeout 2 s passed, in instruction"; do
    IFS='|' read -r m tool pat <<<"$case"
    args=("$root/tests/tools/$m")
    [ "$tool" = "$check" ] && args+=("$root/tests/tools/$m")
    t0=$(date +%s%N)
    mpi_run 60 2 "$tool" "${args[@]}" --timeout 2 >out 2>err </dev/null; rc=$?
    took=$((($(date +%s%N) - t0) / 1000000))
    if expect "--timeout 2 on $m ($(basename "$tool"))" 3 "$pat" >/dev/null && [ $took -lt 12000 ]; then
        ok "--timeout 2 on $m ($(basename "$tool")): exit 3 after $took ms, naming the instruction"
    else
        bad "--timeout 2 on $m ($(basename "$tool"))" "exit $rc after $took ms"
    fi
done

# Rank faults made real by the kernel, not simulated: under mpirun's MPMD
# form one rank runs under a resource limit.  `ulimit -v` makes replica 1's
# 1 GB allocation fail while replica 0 waits in the next all-reduce; `ulimit
# -t 1` has the kernel kill replica 1 while it spins and replica 0 waits in
# an all-reduce.  Every rank must end within a bounded time, the failing
# rank's message printed once.  ASan reserves terabytes of address space,
# so the allocation cases are skipped on a sanitized build.
sanitized=0
ldd "$run" 2>/dev/null | grep -q libasan && sanitized=1
# mpmd N-TOOL-ARGS LIMIT: rank 0 plain, rank 1 under `ulimit LIMIT`; out, err, rc, took (ms).
mpmd() {
    local limit=$1
    shift
    t0=$(date +%s%N)
    mpi_run 60 1 "$@" : -np 1 sh -c "ulimit $limit && exec \"\$@\"" sh "$@" \
        >out 2>err </dev/null
    rc=$?
    took=$((($(date +%s%N) - t0) / 1000000))
}
for tool in "$run" "$check"; do
    name=$(basename "$tool")
    args=("$root/tests/tools/big_after_all_reduce.hlo")
    [ "$tool" = "$check" ] && args+=("$root/tests/tools/big_after_all_reduce.hlo" --trials=1)
    if [ $sanitized -eq 1 ]; then
        skip "an allocation failing on one rank mid-run ($name)" "ulimit -v and ASan do not mix"
    else
        mpmd "-v 500000" "$tool" "${args[@]}"
        if [ $rc -eq 3 ] && [ $took -lt 20000 ] &&
           [ "$(grep -c 'rank 1: .*big_after_all_reduce.hlo:16:3: error: out of memory allocating 1000000000 bytes' err)" -eq 1 ] &&
           [ "$(grep -c 'out of memory' err)" -eq 1 ]; then
            ok "an allocation failing on one rank mid-run ($name): exit 3 after $took ms, its message once"
        else
            bad "an allocation failing on one rank mid-run ($name)" "exit $rc after $took ms"
        fi
    fi
    args=("$root/tests/tools/spin_on_rank1.hlo")
    [ "$tool" = "$check" ] && args+=("$root/tests/tools/spin_on_rank1.hlo" --trials=1)
    mpmd "-t 1" "$tool" "${args[@]}"
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $took -lt 15000 ] && grep -q 'rank 1 .*exited on signal' err; then
        ok "a rank killed while the other waits in an all-reduce ($name): exit $rc after $took ms"
    else
        bad "a rank killed while the other waits in an all-reduce ($name)" "exit $rc after $took ms"
    fi
done

finish
