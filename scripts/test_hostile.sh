#!/bin/bash
# test_hostile.sh [BUILD-DIR]: inputs no user should give, each of which
# must end in exit 2 with a message naming the place (file:line:col, the
# flag or the file), never a crash, a hang, an exit 3 or a wrong verdict:
#   * modules made here that are too large to keep as files: calls nested
#     deeper than the interpreter's stack allows, endless module text;
#   * flag values that parse as numbers but mean nothing (nan, inf,
#     negative tolerances) and report paths that cannot be written, found
#     before any work rather than after a long check.
# The small hostile modules are cases of tests/ir/malformed (run_golden.sh).
# One line per case, then "hostile: N passed, N failed"; exit 1 on any
# failure.  With TALLY set, appends "passed failed" to it.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
harness hostile
use_build "${1:-$root/build}" hlo-opt hlo-run hlo-check
cd "$tmp" || exit 2

bad_context() { [ -s err ] && sed 's/^/    /' err | head -n 5; }

# t NAME WANT-RC PATTERN TOOL ARGS...: runs TOOL (alone, 30 s at most) and
# checks the exit status and that stderr matches PATTERN (grep -E).
t() {
    local name=$1 want=$2 pat=$3
    shift 3
    timeout 30 "$build/$@" >out 2>err </dev/null
    local rc=$?
    if [ $rc -ne "$want" ]; then
        bad "$name" "exit $rc, want $want"
    elif [ -n "$pat" ] && ! grep -Eq -- "$pat" err; then
        bad "$name" "stderr lacks /$pat/"
    else
        ok "$name"
    fi
}

cat >add.hlo <<'EOF'
HloModule add
ENTRY %e {
  %x = f32[2,3] parameter(0)
  %y = f32[2,3] parameter(1)
  ROOT %a = f32[2,3] add(%x, %y)
}
EOF

# ---- Modules

# chain N [REVERSED]: a module whose computations call each other N deep
# (the entry included), callees first; REVERSED, callers first (the text
# may name a computation before it defines it).
chain() {
    local n=$1 i
    {
        for ((i = n - 1; i >= 1; i--)); do
            if [ $i -eq $((n - 1)) ]; then
                echo "%f$i { p = f32[4] parameter(0)
 ROOT c = f32[4] negate(p) }"
            else
                echo "%f$i { p = f32[4] parameter(0)
 ROOT c = f32[4] call(p), to_apply=%f$((i + 1)) }"
            fi
        done
        echo "ENTRY %e { p = f32[4] parameter(0)
 ROOT c = f32[4] call(p), to_apply=%f1 }"
    } >body
    echo "HloModule chain"
    if [ -n "${2:-}" ]; then
        # Reverses the order of the computations: each is two lines.
        paste -d$'\001' - - <body | awk '{ a[NR] = $0 } END { for (i = NR; i > 0; i--) print a[i] }' |
            tr '\001' '\n'
    else
        cat body
    fi
}
chain 256 >chain256.hlo
chain 257 >chain257.hlo
chain 20000 >chain20000.hlo
chain 257 reversed >reversed257.hlo
t "calls nested 256 deep run" 0 '' hlo-run chain256.hlo
t "calls nested 257 deep are refused, the bound named" 2 \
    'chain257.hlo:[0-9]+:[0-9]+: error: call: calls computation f[0-9]+: computations call each other more than 256 deep' \
    hlo-run chain257.hlo
t "calls nested 20000 deep are refused, not a stack overflow (hlo-check --prove)" 2 'more than 256 deep' \
    hlo-check --passes=default --prove chain20000.hlo
t "calls nested 257 deep, callers written first, are refused" 2 'more than 256 deep' hlo-opt reversed257.hlo
t "/dev/zero as the module: its first NUL byte, at once" 2 '^/dev/zero:1:1: error: NUL byte in input' \
    hlo-opt /dev/zero
t "a directory as the module" 2 'error: read error: Is a directory' hlo-opt .

# ---- Flags

t "--rtol below 0 is refused, not a difference found" 2 'take a tolerance of at least 0' \
    hlo-check add.hlo add.hlo --compare=tol --rtol=-1
t "--atol=nan is refused" 2 "--atol: bad value 'nan'" hlo-check add.hlo add.hlo --compare=tol --atol=nan
t "--timeout=inf is refused (hlo-check)" 2 "--timeout: bad value 'inf'" hlo-check add.hlo add.hlo --timeout=inf
t "--timeout=nan is refused (hlo-run)" 2 "--timeout: bad value 'nan'" hlo-run add.hlo --timeout=nan
t "--json in a directory that does not exist: refused before any work" 2 \
    'no/such/dir/r.json: cannot be written \(No such file or directory\)' \
    hlo-check add.hlo add.hlo --json no/such/dir/r.json
t "--junit in a directory that does not exist: refused before any work" 2 'j.xml: cannot be written' \
    hlo-check add.hlo add.hlo --junit no/such/dir/j.xml
if timeout 30 "$build/hlo-check" add.hlo add.hlo --json r.json >out 2>err && [ -s r.json ] &&
   [ "$(ls | grep -c 'probe')" -eq 0 ]; then
    ok "--json in a writable place is written, and the probe leaves nothing behind"
else
    bad "--json in a writable place is written, and the probe leaves nothing behind" "$(ls | tr '\n' ' ')"
fi

# ---- Directories to write into

mpi_run 60 2 "$build/hlo-check" --passes=aws_neuron_flip_all_gather_reshape --shrink \
    --save-counterexample new/nested/dir "$root/corpus/aws_neuron_flip_all_gather_reshape/unsound_interleave_rows.hlo" \
    >out 2>err </dev/null
rc=$?
if [ $rc -eq 1 ] && [ -s new/nested/dir/before.hlo ] && [ -s new/nested/dir/command.txt ]; then
    ok "--save-counterexample makes the directories it names (mkdir -p)"
else
    bad "--save-counterexample makes the directories it names (mkdir -p)" "exit $rc: $(ls -R new 2>&1 | tr '\n' ' ')"
fi

finish
