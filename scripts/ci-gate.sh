#!/bin/bash
# ci-gate.sh [--passes P] [--ranks 2,4] [--out DIR] [--build DIR] [--no-prove] DIR|FILE...
# The one command a CI job runs to gate a compiler change: every module under
# the paths checked with hlo-check --passes=P (and --prove) at each rank
# count, against the .expect beside it or, without one, "the passes keep it
# equivalent" (scripts/validate.sh does the work).  Writes DIR/junit.xml and
# DIR/validate.json (default DIR: hlocheck-reports) for the CI system, prints
# one line per case and the closing counts.  Exit 0 when every case is as
# expected, 1 when one is not (the job fails), 2 on bad usage.
# docs/ci-gate.github-actions.yml is a sample job.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
passes=default ranks=2,4 out=hlocheck-reports build=$root/build prove=(--prove) paths=()
usage() {
    echo "usage: scripts/ci-gate.sh [--passes P] [--ranks 2,4] [--out DIR] [--build DIR] [--no-prove] DIR|FILE..." >&2
    [ -n "${1:-}" ] && echo "ci-gate: $1" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --passes|--ranks|--out|--build)
        [ $# -ge 2 ] || usage "$1 needs a value"
        case $1 in --passes) passes=$2 ;; --ranks) ranks=$2 ;; --out) out=$2 ;; --build) build=$2 ;; esac
        shift ;;
    --passes=*) passes=${1#*=} ;;
    --ranks=*) ranks=${1#*=} ;;
    --out=*) out=${1#*=} ;;
    --build=*) build=${1#*=} ;;
    --no-prove) prove=() ;;
    -h|--help) usage ;;
    -*) usage "unknown flag $1" ;;
    *) [ -e "$1" ] || usage "no such file or directory: $1"; paths+=("$1") ;;
    esac
    shift
done
[ ${#paths[@]} -gt 0 ] || usage "give the directories or modules to gate"
[ -x "$build/hlo-check" ] || { echo "ci-gate: no $build/hlo-check: run scripts/install-deps.sh and make first" >&2; exit 2; }
mkdir -p "$out" || exit 2
"$root/scripts/validate.sh" "${prove[@]}" --build "$build" --passes "$passes" --ranks "$ranks" \
    --junit "$out/junit.xml" --json "$out/validate.json" "${paths[@]}"
rc=$?
echo "ci-gate: reports in $out/junit.xml and $out/validate.json; $([ $rc -eq 0 ] && echo PASS || echo FAIL)"
exit $rc
