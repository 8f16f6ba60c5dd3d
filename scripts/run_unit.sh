#!/bin/bash
# run_unit.sh [DIR]: runs every cmocka test binary in DIR (default build/tests).
# Binaries built from tests/collectives/ (collectives_*) run under mpirun with
# 2, 3, 4 and 8 ranks (STYLE.md section 8; idle ranks yield, for more ranks than cores); the others run alone
# (those whose source starts MPI, as a world of one, without leak checking),
# the interpreter's (interp_*) twice, with and without the AVX2 kernels, and on
# a CPU with AVX-512 a third time, held to AVX2.  A binary's
# output is shown only when it fails.  One line per run, then
# "unit: N passed, N failed"; exit 1 on any failure.  With TALLY set, appends
# "passed failed" to it.  UNIT_ONE_VARIANT=1 (make asan-subset: the sanitizer
# looks for memory errors, which the variants do not add) runs the
# interpreter's tests once and the collectives' at 2 and 3 ranks.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness unit

dir=${1:-build/tests}
one_variant=${UNIT_ONE_VARIANT:-0}
rank_counts=(2 3 4 8)
[ "$one_variant" = 1 ] && rank_counts=(2 3)

# OpenBLAS kernels (OPENBLAS_CORETYPE) whose instructions this CPU has.
blas_cores() {
    local flags
    flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
    case $flags in *" avx2 "*) echo Haswell Zen ;; esac
    case $flags in *" avx512bw "*) echo SkylakeX ;; esac
    case $flags in *" avx512_bf16 "*) echo Cooperlake ;; esac
}
limit=600   # seconds per run; ASan builds are slow
mpi_flags=(--mca mpi_yield_when_idle 1)
# Open MPI itself leaks at exit, so under ASan the MPI runs skip leak
# checking (the tests that run alone keep it); the variable is ignored
# by builds without ASan.
mpi_asan=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

# Runs one test command, at most $limit seconds (mpi_run "$limit" N ... or
# timeout "$limit" ...); $1 is its display name, the rest the command.
run() {
    local name=$1 rc tests
    shift
    "$@" </dev/null >"$tmp/out" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        tests=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$tmp/out" | tail -n 1)
        ok "$name${tests:+ ($tests tests)}"
    else
        sed 's/^/    /' "$tmp/out"
        if [ $rc -eq 124 ]; then
            bad "$name" "timed out after $limit s"
        else
            bad "$name" "exit $rc"
        fi
    fi
}

if [ -d "$dir" ]; then
    while IFS= read -r -d '' t; do
        name=$(basename "$t")
        case $name in
            collectives_*)
                for n in "${rank_counts[@]}"; do
                    ASAN_OPTIONS=$mpi_asan run "$name (mpirun -n $n)" mpi_run "$limit" "$n" "$t"
                done ;;
            interp_*)
                # Kernels with AVX2 versions (src/interp/simd.c): once as
                # the CPU allows, once held to the plain x86-64 ones.
                run "$name" timeout "$limit" env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1" "$t"
                [ "$one_variant" = 1 ] && continue
                run "$name (HLOCHECK_SIMD=sse2)" timeout "$limit" env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1" \
                    HLOCHECK_SIMD=sse2 "$t"
                # Where the CPU has AVX-512, the kernels that have such a
                # version take it: the AVX2 ones are then run held to them.
                if grep -q '^flags.* avx512bw' /proc/cpuinfo 2>/dev/null; then
                    run "$name (HLOCHECK_SIMD=avx2)" timeout "$limit" env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1" \
                        HLOCHECK_SIMD=avx2 "$t"
                fi
                # The dot's bits at any thread count must not depend on the
                # kernel OpenBLAS picks (eval_dot.c's tiles): the thread
                # test again under every kernel this CPU can run.
                if [ "$name" = interp_test_threads ]; then
                    for core in $(blas_cores); do
                        run "$name (OPENBLAS_CORETYPE=$core)" timeout "$limit" \
                            env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1" OPENBLAS_CORETYPE="$core" "$t"
                    done
                fi ;;
            *)
                # Leak checking stays on under ASan even when the caller
                # turned it off for the MPI tools, unless the test's source
                # starts MPI itself (a world of one rank: Open MPI's own
                # memory at exit is no leak of ours).
                src=$root/tests/${name%%_test_*}/test_${name#*_test_}.c
                leaks=1
                if [ -f "$src" ] && grep -q 'coll_init(' "$src"; then leaks=0; fi
                run "$name" timeout "$limit" env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=$leaks" "$t" ;;
        esac
    done < <(find "$dir" -maxdepth 1 -type f -perm -u+x -print0 | sort -z)
fi

finish
