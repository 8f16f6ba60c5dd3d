#!/bin/bash
# xla_diff.sh [--tally-name NAME] [--syntax | --ops | --zoo] [flags]: hlo-run
# against XLA:CPU (scripts/xla/xla_diff.py, whose docstring says what it runs
# and prints), or with --syntax hlocheck's reading of HLO text against XLA's
# parser (scripts/xla/xla_syntax.py), or with --ops generated single ops and
# collectives (scripts/xla/gen_ops.py), or with --zoo JAX programs
# partitioned by XLA, run and checked (scripts/zoo/zoo_check.py), or with
# --snapshots the HloSnapshots XLA:CPU records replayed by hlo-run
# (scripts/xla/snapshots.py), with the XLA environment of
# `scripts/install-deps.sh xla`.
#   * No environment (PyPI was out of reach when it was to be made): one
#     line saying so and why; exit 1, or, with TALLY set (make test), the
#     line goes into the tally as a skip and the exit is 0: the XLA cases
#     are then skipped, never passed.
#   * With TALLY set, appends "passed failed" (passed: outputs that agree,
#     differences explained or documented in docs/xla-differences.md and
#     modules or ops XLA refuses; failed: unexplained differences and ops
#     hlo-run alone refuses; --syntax: modules read the same or refused by
#     XLA, and those that differ or hlocheck alone refuses; --zoo: the
#     cases ok and failed; --snapshots: modules replayed within the table
#     or refused by XLA, and those whose classes or arguments disagree or
#     whose replay fails; replays that differ and refusals in a note).
# make xla-diff runs every set; make test and make xla-test run a quicker
# slice (--quick: one device count per pass-corpus case, a few hlo-fuzz
# modules).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${XLA_VENV:-$root/build/xla-venv}
name=xla-diff tool=xla_diff.py
if [ "${1:-}" = --tally-name ]; then
    name=$2
    shift 2
fi
if [ "${1:-}" = --syntax ]; then
    tool=xla_syntax.py
    shift
elif [ "${1:-}" = --ops ]; then
    tool=gen_ops.py
    shift
elif [ "${1:-}" = --zoo ]; then
    tool=../zoo/zoo_check.py
    shift
elif [ "${1:-}" = --snapshots ]; then
    tool=snapshots.py
    shift
fi

if ! "$venv/bin/python" -c 'import jax, jaxlib' >/dev/null 2>&1; then
    why="no XLA environment in $venv (scripts/install-deps.sh xla makes it; see $venv.log for why it could not)"
    if [ -n "${TALLY:-}" ]; then
        echo "skip $name: $why"
        echo "0 0 $name skipped: $why" >>"$TALLY"
        exit 0
    fi
    echo "$name: $why" >&2
    exit 1
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
nice -n 5 "$venv/bin/python" "$root/scripts/xla/$tool" "$@" | tee "$out"
rc=${PIPESTATUS[0]}
if [ -n "${TALLY:-}" ]; then
    # xla-diff: A agree, D differ (K documented, U unexplained), R refused by XLA, N not run; ...
    line=$(grep -E '^(xla-diff|xla-syntax|gen-ops|zoo-check|snapshots): [0-9]+ (agree|same|cases|replayed)' "$out" | tail -1)
    if [ -z "$line" ]; then
        echo "0 1" >>"$TALLY"
    elif [ "$tool" = snapshots.py ]; then
        # snapshots: R replayed, D differ, C class disagreements, A argument mismatches, F failed,
        # H refused by hlo-run, X refused by XLA; the differences and refusals go in a note
        set -- $(echo "$line" | sed -E 's/^snapshots: ([0-9]+) replayed, ([0-9]+) differ, ([0-9]+) class disagreements, ([0-9]+) argument mismatches, ([0-9]+) failed, ([0-9]+) refused by hlo-run, ([0-9]+) refused by XLA.*/\1 \2 \3 \4 \5 \6 \7/')
        echo "$(($1 + $7)) $(($3 + $4 + $5)) snapshots: $2 replays differ (XLA:CPU's departures, docs/xla-differences.md), $6 refused by hlo-run (custom calls only XLA's optimized modules hold)" >>"$TALLY"
    elif [ "$tool" = ../zoo/zoo_check.py ]; then
        # zoo-check: C cases, K ok, F failed; ...
        echo "$line" | sed -E 's/^zoo-check: [0-9]+ cases, ([0-9]+) ok, ([0-9]+) failed.*/\1 \2/' >>"$TALLY"
    elif [ "$tool" = gen_ops.py ]; then
        # gen-ops: A agree, E explained, D documented, U unexplained, R refused by XLA, H refused by hlo-run
        set -- $(echo "$line" | sed -E 's/^gen-ops: ([0-9]+) agree, ([0-9]+) explained, ([0-9]+) documented, ([0-9]+) unexplained, ([0-9]+) refused by XLA, ([0-9]+) refused by hlo-run.*/\1 \2 \3 \4 \5 \6/')
        echo "$(($1 + $2 + $3 + $5)) $(($4 + $6))" >>"$TALLY"
    elif [ "$tool" = xla_syntax.py ]; then
        # xla-syntax: S same, D differ, H refused by hlocheck only, X refused by XLA
        set -- $(echo "$line" | sed -E 's/^xla-syntax: ([0-9]+) same, ([0-9]+) differ, ([0-9]+) refused by hlocheck only, ([0-9]+) refused by XLA.*/\1 \2 \3 \4/')
        echo "$(($1 + $4)) $(($2 + $3))" >>"$TALLY"
    else
        set -- $(echo "$line" | sed -E 's/^xla-diff: ([0-9]+) agree, [0-9]+ differ \(([0-9]+) documented, ([0-9]+) unexplained\), ([0-9]+) refused.*/\1 \2 \3 \4/')
        echo "$(($1 + $2 + $4)) $3" >>"$TALLY"
    fi
fi
exit "$rc"
