#!/bin/bash
# libfuzz.sh [SECONDS]: builds the libFuzzer targets of tests/libfuzzer/
# with clang (-fsanitize=fuzzer,address,undefined) into build-fuzz/ and runs
# each for SECONDS (default $FUZZ_TIME or 60), seeded with every module of
# corpus/, tests/passes/, tests/ir/malformed/ and tests/libfuzzer/regressions/
# (fuzz_proto: the cases of scripts/proto_cases.py).  FUZZ_TARGETS="fuzz_proto"
# runs only the targets named (default: all four), for a long run of one.
# A crash is kept in build-fuzz/crashes/<target>/ with the command that
# replays it; exit 1 when any target found one.  Every crash fixed so far is
# a case in tests/ir/malformed/ or tests/passes/, or, when it needs text
# without a final NUL (which no file read by the tools lacks), a seed in
# tests/libfuzzer/regressions/ that every run replays first.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
secs=${1:-${FUZZ_TIME:-60}}
out=build-fuzz
command -v clang >/dev/null || { echo "libfuzz: clang is needed (scripts/install-deps.sh installs it)" >&2; exit 2; }
mkdir -p "$out/seeds"
k=0
while IFS= read -r f; do k=$((k + 1)); cp "$f" "$out/seeds/$k.hlo"; done < <(find corpus tests/passes tests/ir/malformed tests/libfuzzer/regressions -name '*.hlo')
# src/ir/proto.c includes the C that protoc-c makes of src/ir/hlo.proto.
make --no-print-directory build/gen/hlo.pb-c.c >/dev/null || { echo "libfuzz: cannot run protoc-c" >&2; exit 2; }
python3 scripts/proto_cases.py "$out/proto-cases" || exit 2
mkdir -p "$out/proto-seeds"
find "$out/proto-cases" -name "*.pb" -exec cp {} "$out/proto-seeds/" \;
flags=(-std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_POSIX_C_SOURCE=200809L
       -Isrc/ir -Isrc/passes -Isrc/interp -Ibuild/gen -Itests/libfuzzer)
ir="src/ir/*.c build/gen/hlo.pb-c.c"
declare -A srcs=(
    [fuzz_parse]="$ir"
    [fuzz_pipeline]="$ir src/passes/*.c"
    [fuzz_npy]="$ir src/interp/npy.c src/interp/value.c"
    [fuzz_proto]="$ir"
)
st=0
for t in ${FUZZ_TARGETS:-fuzz_parse fuzz_pipeline fuzz_npy fuzz_proto}; do
    case $t in fuzz_parse|fuzz_pipeline|fuzz_npy|fuzz_proto) ;; *) echo "libfuzz: no target $t" >&2; exit 2 ;; esac
    # shellcheck disable=SC2086
    if ! clang "${flags[@]}" -o "$out/$t" "tests/libfuzzer/$t.c" ${srcs[$t]} -lprotobuf-c -lm 2>"$out/$t.build.log"; then
        echo "libfuzz: $t does not build:"; tail -5 "$out/$t.build.log"; st=1; continue
    fi
    mkdir -p "$out/crashes/$t" "$out/work/$t"
    seeds=$out/seeds
    if [ $t = fuzz_npy ]; then          # the interpreter corpus' inputs, one name each
        seeds=$out/npy-seeds
        mkdir -p "$seeds"
        k=0
        while IFS= read -r f; do k=$((k + 1)); cp "$f" "$seeds/$k.npy"; done < <(find corpus/interp -name '*.npy' | head -n 200)
    fi
    [ $t = fuzz_proto ] && seeds=$out/proto-seeds
    "$out/$t" -max_total_time="$secs" -max_len=8192 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$out/crashes/$t/" "$out/work/$t" "$seeds" >"$out/$t.log" 2>&1
    n=$(find "$out/crashes/$t" -type f | wc -l)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log")
    if [ "$n" -gt 0 ]; then
        echo "libfuzz: $t: $n crash(es) in ${runs:-?} runs, in $out/crashes/$t/ (replay: $out/$t FILE)"
        st=1
    else
        echo "libfuzz: $t: ${runs:-?} runs in $secs s, nothing found"
    fi
done
exit $st
