#!/bin/bash
# fuzz_coverage.sh: how far hlo-fuzz reaches into the passes, measured.
# Builds hlocheck into build-cov/ with src/passes/ counted by gcov
# (make COVERAGE=1), runs scripts/fuzz_passes.sh there (every pass, both
# modes, 1, 2, 4 and 8 ranks, FUZZ_SECONDS (default 10) each, seed
# FUZZ_SEED (default 1, so that two runs compare)), and reports with gcovr:
#   build-cov/coverage/summary.txt   per file and per function, lines and
#                                    branches, and every branch never taken
#                                    as file:line (scripts/coverage_report.py)
#   build-cov/coverage/untaken.txt   that list alone
#   build-cov/coverage/accounted.txt that list against docs/fuzz-coverage.md's
#                                    accounting of every untaken branch
#   build-cov/coverage/index.html    gcovr's annotated sources
# Exit 1 when hlo-fuzz found something (the coverage is reported anyway).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
build=build-cov
out=$build/coverage
command -v gcovr >/dev/null || { echo "fuzz-coverage: gcovr is needed (scripts/install-deps.sh gcovr)" >&2; exit 2; }
mkdir -p "$build"
make --no-print-directory BUILD=$build COVERAGE=1 -j"$(nproc)" "$build/hlo-fuzz" >"$build/build.log" 2>&1 ||
    { echo "fuzz-coverage: the build failed (see $build/build.log)" >&2; tail -5 "$build/build.log" >&2; exit 2; }
find "$build" -name '*.gcda' -delete          # this run's counts only
rm -rf "$out" && mkdir -p "$out"
FUZZ_SECONDS=${FUZZ_SECONDS:-10} FUZZ_SEED=${FUZZ_SEED:-1} scripts/fuzz_passes.sh "$build"
st=$?
gcovr=(gcovr --root "$root" --object-directory "$build/obj/src/passes" --filter 'src/passes/')
"${gcovr[@]}" --json "$out/coverage.json" || exit 2
"${gcovr[@]}" --branches --html-details "$out/index.html" || exit 2
python3 scripts/coverage_report.py "$out/coverage.json" --untaken "$out/untaken.txt" >"$out/summary.txt" || exit 2
grep -v '^  ' "$out/summary.txt" | sed -n '1,/^total/p'
echo "fuzz-coverage: $(wc -l <"$out/untaken.txt") branches never taken; per function and each with its file:line" \
     "in $out/summary.txt, annotated sources in $out/index.html"
# Each untaken branch against docs/fuzz-coverage.md's list (unreachable,
# out of memory, or reachable and not generated yet): what is new or stale.
python3 scripts/coverage_report.py "$out/coverage.json" --accounted docs/fuzz-coverage.md >"$out/accounted.txt"
sed -n '/^accounted for in/,$p' "$out/accounted.txt" | sed 's/^/fuzz-coverage: /' | head -40
exit $st
