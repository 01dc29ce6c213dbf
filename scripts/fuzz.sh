#!/usr/bin/env bash
# fuzz.sh — runs each cargo-fuzz target (fuzz/fuzz_targets) for a fixed
# number of inputs with a fixed seed, so that the figures are reproducible.
#
#   scripts/fuzz.sh [RUNS]     default 100000 inputs per target (CI)
#
# Longer runs: `cargo +nightly fuzz run -O <target> -- -max_total_time=600`
# (figures of such runs are in docs/RELIABILITY.md). Prints, per target, a
# line "RELIABILITY: <class>|<inputs>|<failures>" for the reliability report
# and, last, "RESULT: <n> passed, <m> failed".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export PATH="$HOME/.cargo/bin:$PATH"
RUNS=${1:-100000}
# Zero inputs ("-runs=0") would be a pass that tried nothing.
if [[ ! $RUNS =~ ^[1-9][0-9]*$ ]]; then
    echo "FAIL fuzz: RUNS must be a positive number of inputs, not '$RUNS'"
    echo "RESULT: 0 passed, 1 failed"
    exit 1
fi

declare -A CLASS=(
    [session_file]="fuzzed session files (reader, repair)"
    [memory_file]="fuzzed memory files (reader, repair)"
    [api_sequence]="fuzzed API sequences with faults and reboots (vs model)"
    [reply_reader]="fuzzed backend replies (tool_call reader, vs serde_json)"
    [tacp_frames]="fuzzed TACP v2 streams (framer vs parser, one answer per frame, USB trust)"
    [config_file]="fuzzed config files (reader, ranges, store round trip, vs serde_json)"
)
passed=0
failed=0
# Every target under fuzz/fuzz_targets runs, and only those: a target added
# without a class here, or a class whose target is gone, fails.
shopt -s nullglob
on_disk=(fuzz/fuzz_targets/*.rs)
shopt -u nullglob
for f in "${on_disk[@]}"; do
    t=$(basename "$f" .rs)
    if [[ -z ${CLASS[$t]+x} ]]; then
        echo "FAIL fuzz $t: target not run (no reliability class in scripts/fuzz.sh)"
        failed=$((failed + 1))
    fi
done
if ((${#on_disk[@]} == 0)); then
    echo "FAIL fuzz: no target in fuzz/fuzz_targets/"
    failed=$((failed + 1))
fi
if ((failed > 0)); then
    echo "RESULT: 0 passed, $failed failed"
    exit 1
fi
if ! cargo +nightly fuzz build -O >/dev/null 2>build/fuzz-build.log; then
    cat build/fuzz-build.log
    echo "RESULT: 0 passed, 1 failed"
    exit 1
fi
for t in session_file memory_file api_sequence reply_reader tacp_frames config_file; do
    [[ -f fuzz/fuzz_targets/$t.rs ]] || { echo "FAIL fuzz $t: fuzz/fuzz_targets/$t.rs is missing"; failed=$((failed + 1)); continue; }
    log=build/fuzz-$t.log
    if cargo +nightly fuzz run -O "$t" -- -runs="$RUNS" -seed=1 -rss_limit_mb=2048 >"$log" 2>&1 &&
        grep -q "^Done $RUNS runs" "$log"; then
        echo "PASS fuzz $t: $RUNS inputs"
        echo "RELIABILITY: ${CLASS[$t]}|$RUNS|0"
        passed=$((passed + 1))
    else
        echo "FAIL fuzz $t (log: $log)"
        tail -n 40 "$log"
        echo "RELIABILITY: ${CLASS[$t]}|$RUNS|1"
        failed=$((failed + 1))
    fi
done
echo "RESULT: $passed passed, $failed failed"
((failed == 0))
