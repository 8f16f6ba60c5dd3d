#!/bin/bash
# test_validate.sh [BUILD-DIR]: scripts/validate.sh on a directory of one's
# own modules, and scripts/ci-gate.sh, on tests/tools/gate/ (a good module,
# a broken one that the passes make non-equivalent, given as .txt as XLA
# dumps are, and one whose replica groups need 4 devices):
#  * one line per case and rank count: the broken one fails, the good one
#    passes, rank counts a module cannot run at are skipped with the reason
#    (its header fixes the count, its groups name more devices); exit 1;
#  * --junit and --json parse and count the same cases;
#  * an .expect beside a module is honoured (kind unsound: refuted in
#    faithful mode, declined in sound mode);
#  * bad usage is exit 2;
#  * ci-gate.sh writes its reports and fails the job on the broken module,
#    passes it on the good one;
#  * hlo-check --per-pass --shrink names the guilty pass and shrinks the pair
#    across it alone, which replays from the files written.
# One line per case, closing "validate-dirs: N passed, N failed"; TALLY support.
set -uo pipefail
# The validate.sh runs below are cases, not suites: they must not add to the tally.
tally=${TALLY:-}
unset TALLY

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness validate-dirs
use_build "${1:-$root/build}"
G=$root/tests/tools/gate
py=/usr/bin/python3

bad_context() { sed 's/^/    /' "$tmp/out" | tail -n 8; }
has() { if grep -qE -- "$2" "$tmp/out"; then ok "$1"; else bad "$1" "no /$2/ in the output"; fi; }

"$root/scripts/validate.sh" --prove --build "$build" --ranks 2,4 --junit "$tmp/j.xml" --json "$tmp/j.json" "$G" \
    >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 1 ] && ok "a directory with a broken module: exit 1" || bad "a directory with a broken module" "exit $rc"
has "the broken module fails, named with its rank count" '^FAIL tests/tools/gate/broken.txt @ 2: want equivalent'
has "the good module passes (proved)" '^ok   tests/tools/gate/good.hlo @ 2 \(equivalent, proved\)'
has "a rank count the header does not allow: skipped with the reason" '^skip tests/tools/gate/good.hlo @ 4: its header fixes 2 devices'
has "a rank count the groups do not fit: skipped with the reason" '^skip tests/tools/gate/needs4.hlo @ 2: cannot run at 2 ranks: .*replica_groups name'
has "the module that needs 4 devices runs at 4" '^ok   tests/tools/gate/needs4.hlo @ 4'
has "the closing line counts all three" '^validate: 2 passed, 1 failed, 3 skipped$'
if $py - "$tmp/j.xml" "$tmp/j.json" <<'PY'
import json, sys, xml.etree.ElementTree as E
s = E.parse(sys.argv[1]).getroot().find("testsuite")
cases = s.findall("testcase")
j = json.load(open(sys.argv[2]))
assert (s.get("tests"), s.get("failures"), s.get("skipped")) == ("6", "1", "3"), s.attrib
assert sum(c.find("failure") is not None for c in cases) == 1
assert (j["passed"], j["failed"], j["skipped"]) == (2, 1, 3) and len(j["cases"]) == 6, j
assert [c["case"] for c in j["cases"] if c["status"] == "fail"] == ["tests/tools/gate/broken.txt @ 2"]
PY
then ok "--junit and --json parse and agree"; else bad "--junit and --json" "$(cat "$tmp/j.xml")"; fi

"$root/scripts/validate.sh" --build "$build" --ranks 2 "$G/good.hlo" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "one good module given as a file: exit 0" || bad "one good module given as a file" "exit $rc"

mkdir -p "$tmp/own"
cp "$G/broken.txt" "$tmp/own/interleave.hlo"
printf 'pass: flip-ag-reshape\nkind: unsound\n' >"$tmp/own/interleave.expect"
"$root/scripts/validate.sh" --prove --build "$build" --ranks 2 "$tmp/own" >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q 'refuted in faithful mode, declined in sound mode' "$tmp/out"; then
    ok "an .expect beside one's own module is honoured (known unsound)"
else
    bad "an .expect beside one's own module" "exit $rc"
fi

for args in "--bogus" "--ranks x $G" "$tmp/no-such-dir" "--passes"; do
    # shellcheck disable=SC2086
    "$root/scripts/validate.sh" --build "$build" $args >"$tmp/out" 2>&1
    rc=$?
    [ $rc -eq 2 ] && grep -q '^usage: ' "$tmp/out" && ok "bad usage ($args): exit 2 with the usage" ||
        bad "bad usage ($args)" "exit $rc"
done

"$root/scripts/ci-gate.sh" --build "$build" --ranks 2,4 --out "$tmp/reports" "$G" >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && [ -s "$tmp/reports/junit.xml" ] && [ -s "$tmp/reports/validate.json" ] &&
   grep -q '^ci-gate: reports in .*; FAIL$' "$tmp/out"; then
    ok "ci-gate on the directory: fails the job, writes junit.xml and validate.json"
else
    bad "ci-gate on the directory" "exit $rc"
fi
"$root/scripts/ci-gate.sh" --build "$build" --ranks 2 --out "$tmp/reports2" "$G/good.hlo" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q 'PASS$' "$tmp/out" && ok "ci-gate on the good module: passes" || bad "ci-gate on the good module" "exit $rc"
"$root/scripts/ci-gate.sh" --build "$build" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 2 ] && ok "ci-gate without paths: exit 2" || bad "ci-gate without paths" "exit $rc"

# --per-pass --shrink: the guilty pass named, then the pair across it alone
# shrunk and written with its inputs; the written pair replays the difference.
( cd "$tmp" && mpi_run 120 2 "$build/hlo-check" --passes=default --per-pass --shrink \
    --save-counterexample=pps "$root/corpus/aws_neuron_flip_all_gather_reshape/unsound_interleave_rows.hlo" \
    </dev/null >"$tmp/out" 2>&1 )
rc=$?
instrs=$(cat "$tmp/pps/before.hlo" "$tmp/pps/after.hlo" 2>/dev/null | grep -c ' = ')
if [ $rc -eq 1 ] && grep -q 'first pass that breaks equivalence is #97' "$tmp/out" &&
   grep -q 'the pair across #97 aws_neuron_flip_all_gather_reshape alone' "$tmp/out" &&
   [ -s "$tmp/pps/command.txt" ] && [ "$instrs" -gt 0 ] && [ "$instrs" -le 20 ]; then
    ok "--per-pass --shrink: #97 named, the pair across it shrunk to $instrs instructions (both sides)"
else
    bad "--per-pass --shrink" "exit $rc, $instrs instructions"
fi
mpi_run 60 2 "$build/hlo-check" "$tmp/pps/before.hlo" "$tmp/pps/after.hlo" --inputs "$tmp/pps" \
    </dev/null >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 1 ] && ok "--per-pass --shrink: the written pair replays the difference" ||
    bad "--per-pass --shrink replay" "exit $rc"

TALLY=$tally finish
