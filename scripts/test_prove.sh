#!/bin/bash
# test_prove.sh [BUILD-DIR]: hlo-check --prove end to end on the pairs in
# tests/check/prove/, each built to hold or break one rule of the proof:
#  * soundness: a rewrite that changes only a reduction's order is refuted,
#    only NaN handling (maximum vs compare+select) or only a signed zero
#    (x vs x + 0) is never proved: NOT PROVED on uniform inputs (the sampled
#    verdict stands, exit 0; --require-proof makes it exit 1), REFUTED on
#    special values and by the default trials (--dist=mixed); x * 1 vs x is
#    not proved even there;
#  * completeness where it is cheap: a reduce over merged dims is proved,
#    integer add with swapped operands is, float add is not (NaN payloads);
#  * the explanation names ranks and indices (an all-gather sliced at the
#    other rank's half, an all-reduce against its reduce(all-gather) form);
#  * custom calls the interpreter cannot run are uninterpreted functions
#    (proved across a combiner, listed in the JSON; refuted when their
#    operand moves);
#  * loops: a constant trip count is unconditional, a trip count read from a
#    parameter is a recorded decision;
#  * JSON: "proof" with its status, and the expressions of a difference;
#  * a proof whose estimated need (values with 16-byte hashes beside them)
#    is over --max-memory is not run: NOT PROVED, the need named.
# One line per case, closing "prove: N passed, N failed"; TALLY support.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness prove
use_build "${1:-$root/build}"
check=$build/hlo-check
P=$root/tests/check/prove
py=/usr/bin/python3

bad_context() { sed 's/^/    /' "$tmp/out" | tail -n 6; }
run() {
    local n=$1
    shift
    mpi_run 120 "$n" "$check" "$@" </dev/null >"$tmp/out" 2>&1
}
last() { grep '^hlo-check: \(PROVED\|REFUTED\|NOT \)' "$tmp/out" | tail -n 1; }
# expect NAME WANT-RC WANT-LAST-LINE-PREFIX RANKS ARGS...
expect() {
    local name=$1 want_rc=$2 want=$3 n=$4 rc
    shift 4
    run "$n" "$@"
    rc=$?
    if [ $rc -ne "$want_rc" ]; then
        bad "$name" "want exit $want_rc, got $rc"
    elif [[ "$(last)" != "hlo-check: $want"* ]]; then
        bad "$name" "want the last line to start with '$want', got '$(last)'"
    else
        ok "$name"
    fi
}
has() {  # has NAME PATTERN: the last run's output holds PATTERN (fixed string)
    if grep -qF -- "$2" "$tmp/out"; then ok "$1"; else bad "$1" "no '$2' in the output"; fi
}

pair() { echo "$P/$1.before.hlo" "$P/${2:-$1}.after.hlo"; }

# shellcheck disable=SC2046
{
expect "reduce order changed: refuted" 1 "REFUTED" 1 $(pair reduce_order) --prove
has "reduce order: both expressions printed" "  after:  add(add("
expect "reduce over merged dims: proved" 0 "PROVED EQUIVALENT for all inputs (1 rank, unconditional)" 1 \
    $(pair reduce_merge) --prove --require-proof
expect "NaN handling changed, uniform inputs: not proved" 0 "NOT PROVED" 1 $(pair nan_max) --prove --dist=uniform
expect "NaN handling changed, --require-proof: exit 1" 1 "NOT PROVED" 1 $(pair nan_max) --prove --require-proof \
    --dist=uniform
expect "NaN handling changed, special values: refuted" 1 "REFUTED" 1 $(pair nan_max) --prove --dist=special
expect "NaN handling changed, the default trials: refuted" 1 "REFUTED" 1 $(pair nan_max) --prove
expect "signed zero (x + 0), uniform inputs: not proved" 0 "NOT PROVED" 1 $(pair signed_zero) --prove --dist=uniform
expect "signed zero (x + 0), special values: refuted" 1 "REFUTED" 1 $(pair signed_zero) --prove --dist=special
expect "signed zero (x + 0), the default trials: refuted" 1 "REFUTED" 1 $(pair signed_zero) --prove
expect "x * 1 vs x, special values: not proved, not refuted" 0 "NOT PROVED" 1 $(pair signed_zero times_one) \
    --prove --dist=special
expect "s32 add with swapped operands: proved" 0 "PROVED EQUIVALENT" 1 $(pair commute_s32) --prove
expect "f32 add with swapped operands: not proved (NaN payloads)" 0 "NOT PROVED" 1 $(pair commute_f32) --prove
expect "all-reduce vs reduce(all-gather), uniform inputs: not proved" 0 "NOT PROVED" 2 $(pair all_reduce) --prove \
    --dist=uniform
expect "all-reduce vs reduce(all-gather), the default trials: refuted (the init's +0 against -0 + -0)" 1 "REFUTED" 2 \
    $(pair all_reduce) --prove
has "the edges trial's -0 shows it" "edges), rank 0, output 0, element [1]: before -0, after 0"
has "all-reduce: the fold over ranks" "before: add(x[rank 0][0], x[rank 1][0])"
has "reduce(all-gather): the init folded in" "after:  add(add(f32 0, x[rank 0][0]), x[rank 1][0])"
expect "all-gather sliced at the other rank's half: refuted" 1 "REFUTED" 2 $(pair rank_swap) --prove
has "rank swap: before names rank 0" "before: x[rank 0][0,0]"
has "rank swap: after names rank 1" "after:  x[rank 1][0,0]"
}
expect "opaque custom call across the combiner: proved" 0 "PROVED EQUIVALENT" 2 --passes=default "$P/opaque.hlo" \
    --prove --json="$tmp/opaque.json"
has "opaque custom call: named in the report" "uninterpreted functions: team_kernel"
if $py -c "import json,sys; p=json.load(open(sys.argv[1]))['proof']; sys.exit(not (p['status']=='proved' and p['opaque_targets']==['team_kernel'] and p['unconditional'] is True))" "$tmp/opaque.json"; then
    ok "opaque custom call: JSON proof"
else
    bad "opaque custom call: JSON proof" "$(cat "$tmp/opaque.json")"
fi
expect "opaque custom call fed a moved operand: refuted" 1 "REFUTED" 2 "$P/opaque.hlo" "$P/opaque_moved.hlo" --prove \
    --json="$tmp/moved.json"
has "opaque custom call: the expression names it" "custom-call(%cx)"
if $py -c "import json,sys; p=json.load(open(sys.argv[1]))['proof']; sys.exit(not (p['status']=='refuted' and 'custom-call' in p['before_expr'] and p['after_expr']))" "$tmp/moved.json"; then
    ok "refuted: JSON before_expr / after_expr"
else
    bad "refuted: JSON before_expr / after_expr" "$(cat "$tmp/moved.json")"
fi
expect "loop with a constant trip count: unconditional" 0 "PROVED EQUIVALENT for all inputs (1 rank, unconditional)" 1 \
    --passes=default "$P/loop_const.hlo" --prove
expect "loop with a trip count from a parameter: conditional" 0 "PROVED EQUIVALENT for all inputs that take" 1 \
    --passes=default "$P/loop_param.hlo" --prove --json="$tmp/loop.json"
if $py -c "import json,sys; p=json.load(open(sys.argv[1]))['proof']; sys.exit(not (p['unconditional'] is False and p['decisions']>0))" "$tmp/loop.json"; then
    ok "conditional proof: JSON decisions"
else
    bad "conditional proof: JSON decisions" "$(cat "$tmp/loop.json")"
fi
expect "precision-changing rewrite (demo): not exact" 0 "NOT EXACT" 4 --passes=default \
    "$root/corpus/demo/transformer_step_4dev.hlo" --prove --trials=2 --json="$tmp/demo.json"
if $py -c "import json,sys; p=json.load(open(sys.argv[1]))['proof']; sys.exit(p['status']!='not_exact')" "$tmp/demo.json"; then
    ok "not exact: JSON status"
else
    bad "not exact: JSON status" "$(cat "$tmp/demo.json")"
fi
expect "precision-changing rewrite, --require-proof: exit 1" 1 "NOT EXACT" 4 --passes=default \
    "$root/corpus/demo/transformer_step_4dev.hlo" --prove --require-proof --trials=1

expect "a proof that needs more memory than allowed is not run" 0 "NOT PROVED" 1 --passes=default "$P/big.hlo" \
    --prove --max-memory=30000000 --trials=1
has "proof over the memory limit: the need named" "the proof would need an estimated"
expect "the same proof with room for its hashes: proved" 0 "PROVED EQUIVALENT" 1 --passes=default "$P/big.hlo" \
    --prove --max-memory=80000000 --trials=1

# Runtime sizes (bounded dynamic shapes) decide which elements count, and
# the hashes do not follow them: never proved, the reason named.
dyn=$root/corpus/interp/dynamic_gather/module.hlo
expect "a module of dynamic size: not proved" 0 "NOT PROVED" 1 "$dyn" "$dyn" --prove --trials=1
has "dynamic size: the reason named" "runtime sizes are not modelled by the proof"

finish
