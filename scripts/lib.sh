# shellcheck shell=bash disable=SC2034  # root, tmp, build and the counters are the drivers'
# lib.sh: the harness the test drivers of scripts/ share, sourced, never run.
# A driver holds only its cases; this file holds what each would repeat:
# where the repo and the build are, a temporary directory, the Open MPI
# environment, the counters and their lines, mpirun, and the closing tally.
#
#     #!/bin/bash
#     # NAME.sh [BUILD-DIR]: what it tests ...
#     set -uo pipefail
#     # shellcheck source-path=SCRIPTDIR
#     . "$(dirname "$0")/lib.sh"
#     harness NAME
#     use_build "${1:-$root/build}" hlo-check     # or: run=$(tool_path "${1:-...}") || exit 2
#     mpi_flags=(--mca mpi_yield_when_idle 1)       # optional: more mpirun options
#     bad_context() { sed 's/^/    /' "$tmp/out" | tail -n 5; }   # optional
#     if mpi_run 300 4 "$build/hlo-check" a.hlo b.hlo >"$tmp/out" 2>&1; then
#         ok "a and b agree at 4 ranks"
#     else
#         bad "a and b at 4 ranks" "exit $?"
#     fi
#     finish
#
# harness NAME      root: the repo (absolute); tmp: a new directory, removed on
#                   exit; OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1 exported (CI runs
#                   as root); the counters pass, fail and skip at 0.  NAME
#                   opens the driver's messages and its closing line.
# use_build DIR [TOOL...]   build: DIR made absolute; exit 2 ("NAME: no
#                   DIR/TOOL: build first (make)") when a TOOL is not in it.
# tool_path PATH    prints PATH made absolute; fails (status 2, "NAME: no
#                   PATH: build first (make)") when it is not executable.
# ok NAME           a case that held: "ok   NAME".
# bad NAME WHY      a case that did not: "FAIL NAME: WHY", then the driver's
#                   bad_context, when it defines one, to show what the case
#                   printed (indented, cut to a few lines).
# skip NAME WHY     a case not run: "skip NAME: WHY".
# mpi_run SECS N CMD...   CMD on N ranks: timeout SECS mpirun --oversubscribe
#                   "${mpi_flags[@]}" -np N CMD...; the driver redirects it.
#                   mpi_flags (empty unless the driver sets it) holds the
#                   driver's other mpirun options; CMD may continue with
#                   `: -np M CMD2` (MPMD).
# finish [--skips-apart] [NOTE]   the end of the driver: with TALLY set (make
#                   test), appends "pass fail" to it, and NOTE after them
#                   when given (a part not run and why: make test prints it
#                   under its total); prints "NAME: P passed, F failed"
#                   (", S skipped" after it when a case was skipped, or with
#                   --skips-apart a line "NAME: S skipped" before it); exits
#                   1 when a case failed, else 0.
# A driver that sets pass, fail and skip itself (from a report it parses)
# calls finish all the same.

harness() {
    suite=$1
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    pass=0 fail=0 skip=0
    mpi_flags=()
}

use_build() {
    local dir=$1 t
    shift
    for t in "$@"; do
        [ -x "$dir/$t" ] || { echo "$suite: no $dir/$t: build first (make)" >&2; exit 2; }
    done
    build=$(cd "$dir" 2>/dev/null && pwd) || { echo "$suite: no $dir: build first (make)" >&2; exit 2; }
}

tool_path() {
    [ -x "$1" ] || { echo "$suite: no $1: build first (make)" >&2; return 2; }
    echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
}

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
    fail=$((fail + 1))
    echo "FAIL $1: $2"
    if declare -F bad_context >/dev/null; then bad_context; fi
}
skip() { skip=$((skip + 1)); echo "skip $1: $2"; }

mpi_run() {
    local secs=$1 n=$2
    shift 2
    timeout "$secs" mpirun --oversubscribe "${mpi_flags[@]}" -np "$n" "$@"
}

# shellcheck disable=SC2120  # its options are optional
finish() {
    local apart=false
    if [ "${1:-}" = --skips-apart ]; then
        apart=true
        shift
    fi
    [ -n "${TALLY:-}" ] && echo "$pass $fail${1:+ $1}" >>"$TALLY"
    if [ "$skip" -gt 0 ] && $apart; then
        echo "$suite: $skip skipped"
        echo "$suite: $pass passed, $fail failed"
    elif [ "$skip" -gt 0 ]; then
        echo "$suite: $pass passed, $fail failed, $skip skipped"
    else
        echo "$suite: $pass passed, $fail failed"
    fi
    [ "$fail" -eq 0 ]
    exit
}
