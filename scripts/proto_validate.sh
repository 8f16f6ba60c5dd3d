#!/bin/bash
# proto_validate.sh [--prove] [BUILD-DIR]: the validation suite on the
# corpus handed over as protos.  Every module of corpus/ (but interp/)
# is written as an HloModuleProto by hlo-opt, with its .expect beside it,
# and scripts/validate.sh runs on those protos and on the texts: every case
# must pass in both and give the same outcome line (verdict and kind) at
# every rank count.  One line per difference, then "proto-validate: N cases
# the same, N differ"; exit 1 when one differs or either run fails.  With
# TALLY set, appends "passed failed" to it.  Takes a few minutes (the
# suite twice).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prove=()
[ "${1:-}" = --prove ] && { prove=(--prove); shift; }
build=$(cd "${1:-$root/build}" && pwd) || exit 2
cd "$root" || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for d in corpus/*/; do
    [ "$d" = corpus/interp/ ] && continue
    mkdir -p "$tmp/protos/$(basename "$d")"
    for m in "$d"*.hlo; do
        b=$(basename "$m" .hlo)
        "$build/hlo-opt" --passes=none "$m" -o "$tmp/protos/$(basename "$d")/$b.hlo_module.pb" 2>/dev/null ||
            { echo "proto-validate: hlo-opt cannot write $m as a proto"; exit 1; }
        [ -f "$d$b.expect" ] && cp "$d$b.expect" "$tmp/protos/$(basename "$d")/"
    done
done
scripts/validate.sh "${prove[@]}" --build "$build" "$tmp/protos" >"$tmp/protos.out" 2>&1
rp=$?
scripts/validate.sh "${prove[@]}" --build "$build" >"$tmp/texts.out" 2>&1
rt=$?
# The outcome lines, named alike: corpus/D/M.hlo and .../D/M.hlo_module.pb.
grep -E '^(ok|FAIL|skip) ' "$tmp/protos.out" | sed -E "s#$tmp/protos/##; s#\.hlo_module\.pb#.hlo#" | sort >"$tmp/a"
grep -E '^(ok|FAIL|skip) ' "$tmp/texts.out" | sed -E 's#[^ ]*corpus/##' | sort >"$tmp/b"
same=$(comm -12 "$tmp/a" "$tmp/b" | wc -l)
differ=$(comm -3 "$tmp/a" "$tmp/b" | wc -l)
comm -3 "$tmp/a" "$tmp/b" | sed 's/^\t/text:  /; s/^\([^t]\)/proto: \1/'
echo "proto-validate: $same cases the same, $differ differ ($(tail -n 1 "$tmp/protos.out") on the protos)"
st=0
[ $rp -eq 0 ] && [ $rt -eq 0 ] && [ "$differ" -eq 0 ] || st=1
[ -n "${TALLY:-}" ] && echo "$same $differ" >>"$TALLY"
exit $st
