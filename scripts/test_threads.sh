#!/bin/bash
# test_threads.sh [BUILD]: the same bits at any thread count (issue 17).
#   1. Every interpreter corpus module (corpus/interp/<case>/) run by
#      hlo-run --inputs <case> at --threads 1, 2 and 3; every output file
#      of 2 and 3 threads must be byte for byte the one of 1 thread (cmp),
#      and the exit status the same.
#   2. Modules with collectives and dots (the demo transformer step, the
#      Neuron corpus modules with all-reduce / reduce-scatter) under mpirun
#      at their rank count on seeded inputs, compared the same way.
#   3. The collectives' cmocka test (BUILD/tests/collectives_test_collectives)
#      under mpirun -n 2, 3, 4 at HLOCHECK_THREADS=2 and 3: its exact
#      expected values must hold at every count.
# HLOCHECK_PAR_MIN=1 (bytes of work per thread before a kernel splits)
# makes even the corpus's small arrays split across the threads, so the
# split results are what is compared.  One line per case, then
# "threads: N passed, N failed"; exit 1 on any failure.  With TALLY set,
# appends "passed failed" to it.  About a minute on 2 cores.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness threads
use_build "${1:-$root/build}" hlo-run
run=$build/hlo-run

export HLOCHECK_PAR_MIN=1
# --bind-to none: ranks bound to one core each would still be correct, but
# the threads would take turns instead of running together.
mpi_flags=(--bind-to none --mca mpi_yield_when_idle 1)
counts=(1 2 3)

# same_outputs NAME DIR: DIR/t<N>/ (outputs) and DIR/rc.t<N> for each
# count; pass when every count matches 1 thread.
same_outputs() {
    local name=$1 dir=$2 t f why=
    for t in "${counts[@]:1}"; do
        if [ "$(cat "$dir/rc.t$t")" != "$(cat "$dir/rc.t1")" ]; then
            why="exit $(cat "$dir/rc.t$t") at $t threads, $(cat "$dir/rc.t1") at 1"
            break
        fi
        if [ "$(cd "$dir/t1" && ls)" != "$(cd "$dir/t$t" && ls)" ]; then
            why="a different set of output files at $t threads"
            break
        fi
        for f in "$dir/t1"/*; do
            [ -e "$f" ] || continue
            cmp -s "$f" "$dir/t$t/$(basename "$f")" || { why="$(basename "$f") differs at $t threads"; break 2; }
        done
    done
    if [ -n "$why" ]; then
        bad "$name" "$why"
        for t in "${counts[@]}"; do
            [ -s "$dir/err.t$t" ] && sed "s/^/    $t threads: /" "$dir/err.t$t" | head -n 5
        done
    elif [ "$(cat "$dir/rc.t1")" != 0 ]; then
        bad "$name" "exit $(cat "$dir/rc.t1") at every count"
    else
        ok "$name"
    fi
}

# ---- 1. The interpreter corpus, JOBS modules at a time (a run mostly waits for MPI to start)

cat >"$tmp/run_case.sh" <<'END_RUN'
#!/bin/bash
d=$1
name=$(basename "$d")
for t in 1 2 3; do
    mkdir -p "$TMPD/$name/t$t" "$TMPD/$name/session"
    OMPI_MCA_orte_tmpdir_base=$TMPD/$name/session timeout 60 "$RUN" "$d/module.hlo" --inputs "$d" --outputs "$TMPD/$name/t$t" --threads "$t" \
        >/dev/null 2>"$TMPD/$name/err.t$t" </dev/null
    echo $? >"$TMPD/$name/rc.t$t"
done
END_RUN
chmod +x "$tmp/run_case.sh"
mkdir -p "$tmp/interp"
# One rank, no mpirun: MPI's singleton start-up, kept short (no daemon, no
# network transports probed), is most of a run's time.  Isolated singletons
# share a session directory name, so each case gets its own base.
find "$root/corpus/interp" -mindepth 1 -maxdepth 1 -type d -print0 | sort -z |
    OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self \
    TMPD=$tmp/interp RUN=$run xargs -0 -n 1 -P "${JOBS:-8}" "$tmp/run_case.sh"
for d in "$tmp"/interp/*/; do
    same_outputs "interp $(basename "$d")" "$d"
done

# ---- 2. Collectives and dots end to end

coll_case() {   # coll_case RANKS MODULE
    local n=$1 m=$2 name dir t
    name="mpirun -np $n $(basename "$(dirname "$m")")/$(basename "$m")"
    dir=$tmp/coll/$(basename "$m" .hlo).$n
    for t in "${counts[@]}"; do
        mkdir -p "$dir/t$t"
        mpi_run 120 "$n" "$run" "$m" --seed 7 --outputs "$dir/t$t" --threads "$t" \
            >/dev/null 2>"$dir/err.t$t" </dev/null
        echo $? >"$dir/rc.t$t"
    done
    same_outputs "$name" "$dir"
}
coll_case 4 "$root/corpus/demo/transformer_step_4dev.hlo"
for m in aws_neuron_flip_reduce_convert_add/rewrite_rs_bf16_grad_accumulate \
         aws_neuron_flip_reduce_convert_add/rewrite_two_sites_share_reducer \
         aws_neuron_flip_all_gather_convert/keep_convert_of_reduce_scatter \
         aws_neuron_flip_all_gather_reshape/keep_reshape_of_all_reduce; do
    f=$root/corpus/$m.hlo
    [ -f "$f" ] || continue
    n=$(sed -n '1s/.*replica_count=\([0-9]*\).*/\1/p' "$f")
    coll_case "${n:-2}" "$f"
done

# ---- 3. The collectives' unit tests at 2 and 3 threads (run_unit.sh runs them at 1)

bin=$build/tests/collectives_test_collectives
if [ -x "$bin" ]; then
    for n in 2 3 4; do
        for t in 2 3; do
            name="$(basename "$bin") (mpirun -n $n, HLOCHECK_THREADS=$t)"
            if HLOCHECK_THREADS=$t mpi_run 300 "$n" "$bin" >"$tmp/unit.out" 2>&1 </dev/null; then
                ok "$name"
            else
                bad "$name" "failed"
                sed 's/^/    /' "$tmp/unit.out" | tail -n 20
            fi
        done
    done
else
    bad "collectives unit tests" "no $bin: build them first (make unit-tests)"
fi

# ---- 4. --threads above the cores a rank may run on: one note on rank 0,
# naming mpirun's fixes; none when the ranks are not bound.

m=$root/corpus/demo/transformer_step_2dev.hlo
note='asks for more threads than the 1 core a rank may run on'
if ! timeout 120 mpirun --oversubscribe --bind-to core -np 2 true >/dev/null 2>&1; then
    skip "--threads note" "this mpirun cannot bind ranks to cores"
else
    timeout 120 mpirun --oversubscribe --bind-to core -np 2 "$run" "$m" --threads 2 >/dev/null 2>"$tmp/bound.err" </dev/null
    timeout 120 mpirun --oversubscribe --bind-to none -np 2 "$run" "$m" --threads 2 >/dev/null 2>"$tmp/free.err" </dev/null
    said=$(grep -c "$note" "$tmp/bound.err")
    if [ "$said" = 1 ] && grep -q -- '--bind-to none' "$tmp/bound.err" && grep -q -- '--map-by slot:PE=2' "$tmp/bound.err" &&
       ! grep -q 'asks for more threads' "$tmp/free.err"; then
        ok "--threads 2 on ranks bound to one core: one note naming --bind-to none and --map-by slot:PE=2; none unbound"
    else
        bad "--threads note" "bound: said $said times; unbound: $(grep -c 'asks for more threads' "$tmp/free.err")"
        sed 's/^/    /' "$tmp/bound.err" | tail -n 5
    fi
fi


finish
