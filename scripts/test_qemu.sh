#!/usr/bin/env bash
# test_qemu.sh — build the emulated firmware for both boards (and the M33 with
# the BENTO board's 64 KiB heap) and run the tests in it (docs/EMULATOR.md):
#
#   m33  qemu-system-arm -M mps2-an505, Cortex-M33 (the primary target): every
#        test of tests/qemu/ and the tests/mpy/ files marked
#        "# targets: unix qemu", against mpy/examples/backend.py through the
#        serial bridge
#   m55  qemu-system-arm -M mps3-an547, Cortex-M55: the tests of tests/qemu/
#        that need no backend (the board has no transport)
#   m33-64k  the m33 built with the BENTO board's 64 KiB GC heap: the tests
#        that name it (tests/qemu/test_gc_heap.py)
#
#   scripts/test_qemu.sh [--no-build] [--board m33|m55|m33-64k] [PATTERN...]
#   scripts/test_qemu.sh --repl [--board m33|m55|m33-64k] [--no-build]
#                        the firmware's REPL with LittleFS on the RAM disk at /
#                        (M33: with the backend, the bridge and a TACP socket)
#
# Each test boots its own qemu-system-arm and is driven over the raw REPL by
# tests/qemu/run.py (Python standard library only). One line per test,
# one "board <b>: <n> passed, <m> failed" line per board, and last the only
# "RESULT: <n> passed, <m> failed" line. A build failure, a board that ran
# no test (when no PATTERN narrows the run) and a test with no checks are
# failures. Exit status 1 when anything failed. Logs: build/test-qemu/<board>/.
#
# Environment: BENTOCLAW_JOBS, BENTOCLAW_SKIP_CARGO, BENTOCLAW_QEMU_MAKE_ARGS
# (see scripts/build_qemu.sh).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

build=1
repl=0
boards=(m33 m55 m33-64k)
patterns=()
while (($#)); do
    case "$1" in
        --no-build) build=0 ;;
        --repl) repl=1 ;;
        --board) shift; boards=("${1:-}") ;;
        -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
        *) patterns+=("$1") ;;
    esac
    shift
done
for b in "${boards[@]}"; do
    [[ $b == m33 || $b == m55 || $b == m33-64k ]] ||
        { echo "test_qemu: unknown board '$b' (m33, m55, m33-64k)" >&2; exit 2; }
done

log() { printf 'test_qemu: %s\n' "$*" >&2; }

if ! command -v qemu-system-arm >/dev/null; then
    log "installing qemu-system-arm"
    sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo -n)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends qemu-system-arm >&2 \
        || { "${sudo[@]}" apt-get update -qq >&2 || true
             "${sudo[@]}" apt-get install -y -qq --no-install-recommends qemu-system-arm >&2; }
fi
command -v python3 >/dev/null || { log "error: python3 missing"; exit 1; }

if ((build)); then
    if ! "$ROOT/scripts/build_qemu.sh" "${boards[@]}"; then
        echo "FAIL build (scripts/build_qemu.sh)"
        echo "RESULT: 0 passed, 1 failed"
        exit 1
    fi
fi

cd "$ROOT" || exit 1
if ((repl)); then
    exec python3 tests/qemu/run.py --board "${boards[0]}" --repl
fi

passed=0
failed=0
start=$SECONDS
for b in "${boards[@]}"; do
    out="$(mktemp)"
    # Bounded: each test has its own limit (run.py); this caps a board's run.
    # Every line but run.py's own RESULT line, which becomes the board's.
    timeout -k 5 900 python3 -u tests/qemu/run.py --board "$b" "${patterns[@]}" 2>&1 \
        | tee "$out" | grep -a --line-buffered -v '^RESULT: '
    rc=${PIPESTATUS[0]}
    # -a: a failing test's excerpt may hold TACP frame bytes (grep would
    # print "binary file matches" and drop the lines).
    if [[ $(grep -a '^RESULT: ' "$out" | tail -n 1) =~ ^RESULT:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
        p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]}
    else
        p=0 f=1
        echo "FAIL $b: tests/qemu/run.py ended without a result (exit $rc)"
    fi
    if ((rc != 0 && f == 0 && p > 0)); then
        f=1
        echo "FAIL $b: tests/qemu/run.py exited $rc"
    fi
    if ((p + f == 0)); then
        if ((${#patterns[@]} == 0)); then
            f=1
            echo "FAIL $b: no test ran"
        else
            echo "($b: no test matched ${patterns[*]})"
        fi
    fi
    echo "board $b: $p passed, $f failed"
    passed=$((passed + p))
    failed=$((failed + f))
    rm -f "$out"
done
if ((passed + failed == 0)); then
    echo "FAIL no test ran"
    failed=1
fi
echo "qemu tests took $((SECONDS - start)) s"
echo "RESULT: $passed passed, $failed failed"
((failed == 0))
