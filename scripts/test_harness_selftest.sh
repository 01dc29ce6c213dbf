#!/usr/bin/env bash
# test_harness_selftest.sh — the test harness must not pass by accident.
# Feeds the real counting and checking code things that ran nothing and
# checks that each one FAILS (and that real work still passes):
#   * scripts/steps.sh: count_output on fake step logs (no count line, 0 and
#     0, cargo's "0 passed", a non-zero exit), step/check with real commands,
#     cargo_filtered on a fake and on a real cargo run whose filter matches
#     no test;
#   * scripts/test_mpy.sh: no file matching, an empty test folder, a file
#     that makes no check, a file without a RESULT line, a hand-made
#     "0 passed, 0 failed"; a good file and the test clock ("needs: clock")
#     pass;
#   * scripts/fuzz.sh with 0 inputs;
#   * scripts/figures.sh, tests/image/map_share.awk and scripts/map_share.py
#     on an empty map, a map without the archive, an unparsable figure.
#
#   scripts/test_harness_selftest.sh [--no-cargo]
#     --no-cargo   skip the real cargo run (it builds the lib's unit tests)
# Needs the interpreter of scripts/build_micropython.sh. Last line:
# "RESULT: <n> passed, <m> failed".
# shellcheck disable=SC2030,SC2317 # subshells on purpose
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR=never

cargo_run=1
[[ ${1:-} == --no-cargo ]] && cargo_run=0

ok=0
bad=0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# expect WHAT WANT GOT — one check of this self-test.
expect() {
    if [[ $3 == "$2" ]]; then
        echo "ok   $1"
        ok=$((ok + 1))
    else
        echo "FAIL $1: got '$3', want '$2'"
        bad=$((bad + 1))
    fi
}

# ---- scripts/steps.sh ----------------------------------------------------------------
# totals LOGTEXT RC — what count_output adds for a step with this output:
# "<passed> <failed>".
totals() {
    printf '%s' "$1" >"$work/step.log"
    (
        # shellcheck source=scripts/steps.sh
        source scripts/steps.sh
        count_output "$work/step.log" fake "$2" >"$work/count.out"
        echo "$passed $failed"
    )
}
# run_step KIND NAME CMD... — step/check in a subshell: "<passed> <failed>".
run_step() {
    (
        # shellcheck source=scripts/steps.sh
        source scripts/steps.sh
        STEP_LOGDIR="$work/logs"
        "$@" >"$work/step.out" 2>&1
        echo "$passed $failed"
    )
}

expect "a step without any count line fails" "0 1" "$(totals $'compiling...\nall good\n' 0)"
expect "a step of 'RESULT: 0 passed, 0 failed' fails" "0 1" "$(totals $'RESULT: 0 passed, 0 failed\n' 0)"
expect "cargo's 'test result: ok. 0 passed' fails" "0 1" \
    "$(totals $'running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 22 filtered out; finished in 0.00s\n' 0)"
expect "two cargo binaries of 0 tests fail" "0 1" \
    "$(totals $'test result: ok. 0 passed; 0 failed; 0 ignored\ntest result: ok. 0 passed; 0 failed; 0 ignored\n' 0)"
expect "counts with a non-zero exit fail" "3 1" "$(totals $'RESULT: 3 passed, 0 failed\n' 2)"
expect "counts are summed" "5 1" "$(totals $'RESULT: 3 passed, 0 failed\nRESULT: 2 passed, 1 failed\n' 1)"
expect "cargo counts pass" "63 0" \
    "$(totals $'test result: ok. 63 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n' 0)"
totals "" 0 >/dev/null
expect "the step line says why it failed" 1 \
    "$(grep -c 'FAILED (0 passed, 1 failed): no count line' "$work/count.out")"
expect "step: a command that prints no count fails" "0 1" "$(run_step step quiet true)"
expect "step: a command of 0 tests fails" "0 1" "$(run_step step zero echo 'RESULT: 0 passed, 0 failed')"
expect "check: a command that succeeds is one pass" "1 0" "$(run_step check build true)"
expect "check: a command that fails is one failure" "0 1" "$(run_step check build false)"
expect "check: count lines of the command are not counted again" "1 0" \
    "$(run_step check lint echo 'RESULT: 7 passed, 0 failed')"

# cargo_filtered on a fake cargo: the format of `cargo test` / `cargo miri test`.
fake_cargo() {
    cat <<'EOF'
running 4 tests
test ffi::tests::ring_roundtrip ... ok
test jsonl::tests::escape ... ok
test session::ring::tests::newest_ten ... FAILED
test text::tests::slow_one ... ignored

test result: FAILED. 2 passed; 1 failed; 1 ignored; 0 measured; 40 filtered out; finished in 0.10s
EOF
    return "${FAKE_RC:-0}"
}
filtered() { # prints "<rc> <unmatched count line>"
    (
        # shellcheck source=scripts/steps.sh
        source scripts/steps.sh
        cargo_filtered "$@" >"$work/filtered.out" 2>&1
        echo "$? $(grep -c '^FAIL cargo_filtered' "$work/filtered.out")"
    )
}
expect "cargo_filtered: every filter matched" "0 0" "$(filtered fake_cargo test -- ffi:: jsonl:: --skip model_tests)"
expect "cargo_filtered: a filter that matched nothing fails" "1 1" \
    "$(filtered fake_cargo test -- ffi:: nothing_is_called_this::)"
expect "cargo_filtered: a filter that matched only ignored tests fails" "1 1" \
    "$(filtered fake_cargo test -- text::)"
expect "cargo_filtered: --skip's value is not a filter" "0 0" \
    "$(filtered fake_cargo test -- ffi:: --skip nothing_is_called_this)"
expect "cargo_filtered: --exact needs the whole name" "1 1" "$(filtered fake_cargo test -- --exact escape)"
expect "cargo_filtered: a failed test still fails" "3 0" "$(FAKE_RC=3 filtered fake_cargo test -- session::ring)"
expect "cargo_filtered: no filter, cargo's status" "0 0" "$(filtered fake_cargo test)"

if ((cargo_run)); then
    # A real cargo test whose filter matches nothing: "test result: ok. 0 passed".
    got=$(run_step step "cargo zero filter" cargo_filtered cargo test --features recall,lasting --lib \
        -- no_test_is_called_this_zz)
    expect "real cargo test with a filter that matches nothing fails" "0 1" "$got"
    if grep -q "^test result: ok. 0 passed" "$work/logs/cargo_zero_filter.log"; then
        expect "  (cargo itself called it ok)" yes yes
    else
        expect "  (cargo itself called it ok)" yes "no: $(tail -n 3 "$work/logs/cargo_zero_filter.log" | tr '\n' ' ')"
    fi
fi

# ---- scripts/fuzz.sh --------------------------------------------------------------------
bash scripts/fuzz.sh 0 >"$work/fuzz.out" 2>&1
expect "fuzz.sh with 0 inputs fails" "1 RESULT: 0 passed, 1 failed" "$? $(tail -n 1 "$work/fuzz.out")"

# ---- scripts/test_mpy.sh ----------------------------------------------------------------
MPY="$ROOT/build/micropython/micropython"
if [[ ! -x $MPY ]]; then
    expect "the interpreter exists (run scripts/build_micropython.sh)" yes no
else
    # mpy_run DIR ARGS... — "<exit status> <last line>"
    mpy_run() {
        local dir=$1; shift
        BENTOCLAW_MPY_TESTS_DIR="$dir" bash scripts/test_mpy.sh --no-build "$@" >"$work/mpy.out" 2>&1
        echo "$? $(tail -n 1 "$work/mpy.out")"
    }
    mkdir -p "$work/none" "$work/t"
    expect "test_mpy.sh: an empty test folder fails" "1 RESULT: 0 passed, 1 failed" "$(mpy_run "$work/none")"
    expect "test_mpy.sh: a pattern that matches no file fails" "1 RESULT: 0 passed, 1 failed" \
        "$(mpy_run "$ROOT/tests/mpy" no_test_is_called_this_zz)"
    expect "test_mpy.sh: it says so" 1 "$(grep -c '^FAIL no test file matched' "$work/mpy.out")"

    rig='import os, sys
sys.path.append(os.getenv("BENTOCLAW_ROOT") + "/tests/mpy")
import claw_rig as rig
'
    printf '%s' "$rig" >"$work/t/test_nocheck.py"
    printf 't = rig.Checker("nocheck")\nt.done()\n' >>"$work/t/test_nocheck.py"
    printf 'print("all fine, I think")\n' >"$work/t/test_noresult.py"
    printf 'print("RESULT: 0 passed, 0 failed")\n' >"$work/t/test_zeroresult.py"
    printf '%s' "$rig" >"$work/t/test_good.py"
    printf 't = rig.Checker("good")\nt.check(1 + 1 == 2, "arithmetic")\nt.done()\n' >>"$work/t/test_good.py"
    { printf '# needs: clock\n%s' "$rig"
      cat <<'EOF'
import time
t = rig.Checker("clock")
a = time.ticks_ms()
w = time.time()
rig.advance_clock(30000)
b = time.ticks_ms()
t.check(30000 <= time.ticks_diff(b, a) < 40000, "ticks jump 30 s", time.ticks_diff(b, a))
t.check(30 <= time.time() - w < 40, "the RTC jumps 30 s", time.time() - w)
t.done()
EOF
    } >"$work/t/test_clock.py"

    expect "a file that makes no check fails" "1 RESULT: 0 passed, 1 failed" "$(mpy_run "$work/t" nocheck)"
    expect "  Checker.done() printed 0 passed, 1 failed" 1 \
        "$(grep -c '^RESULT: 0 passed, 1 failed$' "$ROOT/build/test-mpy/test_nocheck.log")"
    expect "  and said why" 1 "$(grep -c 'no check was made' "$ROOT/build/test-mpy/test_nocheck.log")"
    expect "a file without a RESULT line fails" "1 RESULT: 0 passed, 1 failed" "$(mpy_run "$work/t" noresult)"
    expect "  test_mpy.sh said why" 1 "$(grep -c 'no RESULT line' "$work/mpy.out")"
    expect "a file reporting 0 passed, 0 failed fails" "1 RESULT: 0 passed, 1 failed" "$(mpy_run "$work/t" zeroresult)"
    expect "a file with a passing check passes" "0 RESULT: 1 passed, 0 failed" "$(mpy_run "$work/t" good)"
    expect "the test clock (needs: clock) moves ticks and the RTC" "0 RESULT: 1 passed, 0 failed" \
        "$(mpy_run "$work/t" clock)"
    expect "all of them together: 2 pass, 3 fail" "1 RESULT: 2 passed, 3 failed" "$(mpy_run "$work/t")"
    rm -f "$ROOT"/build/test-mpy/test_{nocheck,noresult,zeroresult,good,clock}.log
fi

# ---- figures: scripts/figures.sh, map_share.awk, map_share.py -----------------------------
# fig METHOD ARGS... — one check of scripts/render_report.py's Checks (the one
# place a figure is judged), its line appended to fig.out: "<passed> <failed>".
fig() {
    python3 - "$work/fig.out" "$@" <<'PY' 2>/dev/null || echo "error"
import sys
sys.path.insert(0, "scripts")
import render_report as rr
with open(sys.argv[1], "a") as out:
    c = rr.Checks(out)
    getattr(c, sys.argv[2])(*sys.argv[3:])
print(c.passed, c.failed)
PY
}
: >"$work/empty.map"
printf 'Archive member included to satisfy reference by file (symbol)\n\nMemory Configuration\n' >"$work/nomap.map"
cat >"$work/other.map" <<'EOF'
Linker script and memory map

.text           0x00000000      0x200
 .text.main     0x00000000      0x100 /tmp/cc1.o
 .text.other    0x00000100      0x100 libother.a(other.o)
EOF
cat >"$work/lib.map" <<'EOF'
Linker script and memory map

.text           0x00000000      0x300
 .text.claw_session_init
                0x00000000      0x120 libbentoclaw.a(bentoclaw-1.o)
 .text.memcpy   0x00000120       0x40 libbentoclaw.a(compiler_builtins-2.o)
.bss            0x20000000       0x10
 .bss.STATE     0x20000000       0x10 libbentoclaw.a(bentoclaw-1.o)
EOF

# image_share (scripts/size_report.sh's parse), then the renderer's goal_le.
share_goal() { # MAP -> "<passed> <failed>" of goal_le code + goal_le "static RAM"
    local code="" ram=""
    read -r code ram _ <<<"$( (source scripts/figures.sh; image_share "$1" libbentoclaw.a) 2>/dev/null)"
    local a b
    read -r a _ <<<"$(fig goal_le code "$code" 12288 " B")"
    read -r b _ <<<"$(fig goal_le "static RAM" "$ram" 4096 " B")"
    echo "$((a + b)) $((2 - a - b))"
}
expect "size: an empty map fails both figures" "0 2" "$(share_goal "$work/empty.map")"
expect "size: a map without its memory map part fails" "0 2" "$(share_goal "$work/nomap.map")"
expect "size: a map without the archive fails" "0 2" "$(share_goal "$work/other.map")"
expect "size: the archive's figures pass" "2 0" "$(share_goal "$work/lib.map")"
expect "size: the figures are right" "352 16 288" \
    "$( (source scripts/figures.sh; image_share "$work/lib.map" libbentoclaw.a) )"
awk -v lib=libbentoclaw.a -f tests/image/map_share.awk "$work/empty.map" >"$work/awk.out" 2>"$work/awk.err"
expect "map_share.awk: empty map, exit 1 and nothing on stdout" "1 0" "$? $(wc -c <"$work/awk.out")"
awk -v lib=libbentoclaw.a -v only=data -f tests/image/map_share.awk "$work/other.map" >"$work/awk.out" 2>/dev/null
expect "map_share.awk only=data: map without the archive, exit 1 and nothing" "1 0" "$? $(wc -c <"$work/awk.out")"

# map_share.py, then the renderer's goal_le, as the performance report does.
py_goal() {
    local code="" ram=""
    read -r code ram _ _ < <(python3 scripts/map_share.py "$1" 'lib=libbentoclaw.a(' 2>/dev/null |
        sed -nE 's/^SHARE lib code=([0-9]+) ram=([0-9]+) data=([0-9]+) builtins=([0-9]+) shared=[0-9]+$/\1 \2 \3 \4/p')
    local a b
    read -r a _ <<<"$(fig goal_le "library code" "$code" 12288 " B")"
    read -r b _ <<<"$(fig goal_le "library static RAM" "$ram" 4096 " B")"
    echo "$((a + b)) $((2 - a - b))"
}
expect "perf: an empty map fails both figures" "0 2" "$(py_goal "$work/empty.map")"
expect "perf: a map without the archive fails" "0 2" "$(py_goal "$work/other.map")"
expect "perf: the archive's figures pass" "2 0" "$(py_goal "$work/lib.map")"
python3 scripts/map_share.py "$work/other.map" 'lib=libbentoclaw.a(' >"$work/py.out" 2>/dev/null
expect "map_share.py: no SHARE line and exit 1 for an unmatched name" "1 0" "$? $(wc -c <"$work/py.out")"

: >"$work/fig.out"
expect "goal_le: an empty figure fails" "0 1" "$(fig goal_le code "" 12288 " B")"
expect "  naming the figure" 1 "$(grep -c "^FAIL figure 'code' is empty" "$work/fig.out")"
expect "goal_le: a figure that is not a number fails" "0 1" "$(fig goal_le code 12k 12288 " B")"
expect "goal_le: over the goal fails" "0 1" "$(fig goal_le code 12289 12288 " B")"
expect "goal_le: at the goal passes" "1 0" "$(fig goal_le code 12288 12288 " B")"
expect "goal_eq: an empty count fails" "0 1" "$(fig goal_eq "stack: recursion" "" 0)"
expect "goal_eq: 0 == 0 passes" "1 0" "$(fig goal_eq "stack: recursion" 0 0)"

echo "RESULT: $ok passed, $bad failed"
((bad == 0))
