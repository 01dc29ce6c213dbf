#!/usr/bin/env bash
# test.sh — the whole test suite (README's test command; .ci/run calls it).
#
# Steps: setup → rustfmt → clippy → Rust unit + property tests → Miri →
# fuzzing (fixed seed and count) → target
# builds (Cortex-M55 and M3) → C ABI test under ASan/UBSan → no-panic link
# and size report → MicroPython tests on the unix port (real LittleFS, real
# HTTP on loopback) → reliability report → the MicroPython suite on an
# emulated Cortex-M55 (qemu mps3-an547) → performance report. Every step is
# counted; the last line is "N passed, N failed".
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR=never

passed=0
failed=0
failures=()

# Adds the counts of a step whose output has "RESULT: N passed, M failed"
# (our scripts) or "test result: ... N passed; M failed" (cargo test).
count_output() {
    local log=$1 name=$2 rc=$3 p=0 f=0 line
    while IFS= read -r line; do
        if [[ $line =~ ^RESULT:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
            p=$((p + BASH_REMATCH[1])); f=$((f + BASH_REMATCH[2]))
        elif [[ $line =~ ^test\ result:.*\ ([0-9]+)\ passed\;\ ([0-9]+)\ failed ]]; then
            p=$((p + BASH_REMATCH[1])); f=$((f + BASH_REMATCH[2]))
        fi
    done <"$log"
    if ((p + f == 0)); then
        # A step without its own counts is one check.
        if ((rc == 0)); then p=1; else f=1; fi
    elif ((rc != 0 && f == 0)); then
        f=1
    fi
    passed=$((passed + p))
    failed=$((failed + f))
    if ((f > 0)); then failures+=("$name"); fi
    printf '== %-28s %s (%d passed, %d failed)\n' "$name" "$([[ $rc == 0 && $f == 0 ]] && echo ok || echo FAILED)" "$p" "$f"
}

step() {
    local name=$1; shift
    local log="$ROOT/build/test-logs/${name// /_}.log"
    mkdir -p "$ROOT/build/test-logs"
    printf '\n== %s: %s\n' "$name" "$*"
    local start=$SECONDS
    "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    printf '== %s took %ds\n' "$name" $((SECONDS - start))
    count_output "$log" "$name" "$rc"
}

step setup bash scripts/setup.sh
step rustfmt cargo fmt --all -- --check
step "generated bindings" bash scripts/gen_headers.sh --check
step clippy cargo clippy --all-targets -- -D warnings
step "clippy (features)" cargo clippy --all-targets --features agent -- -D warnings
step "rust tests" cargo test --features agent
step "rust tests (vendor ABI only)" cargo test
# Miri over the FFI layer (all the unsafe code, driven through the C ABI into
# the core) and the byte-level modules; the rest of the core is safe code
# already covered above, and interpreting it all takes Miri over 6 minutes.
step miri cargo +nightly miri test --features agent -- ffi:: session::ring jsonl:: text:: --skip model_tests
step fuzz bash scripts/fuzz.sh
step "build thumbv8m" cargo build --release --target thumbv8m.main-none-eabihf
step "build thumbv7m" cargo build --release --target thumbv7m-none-eabi
step "c abi tests" bash scripts/test_c.sh
step "size report" bash scripts/size_report.sh
step "micropython tests" bash scripts/test_mpy.sh
step "reliability report" bash scripts/reliability_report.sh build/test-logs/fuzz.log build/test-logs/c_abi_tests.log
step "emulated cortex-m55" bash scripts/test_qemu.sh
step "performance report" bash scripts/perf_report.sh

echo
if ((failed > 0)); then
    echo "failed steps: ${failures[*]}"
fi
echo "$passed passed, $failed failed"
((failed == 0))
