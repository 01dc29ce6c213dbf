#!/usr/bin/env bash
# test_mpy.sh — run the MicroPython-level tests tests/mpy/test_*.py on the unix
# port built by scripts/build_micropython.sh.
#
# Usage: scripts/test_mpy.sh [--no-build] [PATTERN...]
#   PATTERN selects tests whose file name contains it (default: all).
#
# Per test (cwd = repo root):
#   * "# needs: backend"  -> a fresh mpy/examples/backend.py on a free loopback port;
#                            BENTOCLAW_PORT holds the port (key "demo-key").
#   * "# needs: faketime" -> run under `faketime -f '+0 x50'` (ticks 50x faster).
#   * "# needs: heap"     -> a 64 MiB GC heap (-X heapsize=64M): images of
#                            the BENTO board's 256 KiB blocks.
#   * "# needs: clock"    -> the test clock: real time runs at its own pace,
#                            and the clock jumps when the test says so:
#                            libfaketime reads its offset from a file
#                            (BENTOCLAW_CLOCK_FILE) that claw_rig.advance_clock(ms)
#                            rewrites. Ticks, CLOCK_MONOTONIC and the RTC jump
#                            forward by exactly ms.
#   * BENTOCLAW_MPY = absolute path of the interpreter (for restart tests),
#     BENTOCLAW_ROOT = the repo root.
#   * a timeout of BENTOCLAW_TEST_TIMEOUT seconds (default 120).
# BENTOCLAW_MPY_TESTS_DIR overrides the test folder (default tests/mpy).
# A test passes when the interpreter exits 0 and its last "RESULT: N passed,
# M failed" line (claw_rig.Checker.done()) has N > 0 and M = 0: a file that
# printed no RESULT line, or made no check, fails. No matching file at all is
# a failure too. Output of each test is kept in build/test-mpy/<name>.log.
# The last line is "RESULT: <n> passed, <m> failed".
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# BENTOCLAW_MPY_BUILD: a second interpreter (scripts/build_micropython.sh).
MPY_BUILD="${BENTOCLAW_MPY_BUILD:-standard}"
MPY="$ROOT/build/micropython$([[ $MPY_BUILD == standard ]] || printf -- '-%s' "$MPY_BUILD")/micropython"
LOGDIR="$ROOT/build/test-mpy"
TIMEOUT="${BENTOCLAW_TEST_TIMEOUT:-120}"
FAKETIME_SPEC="${BENTOCLAW_FAKETIME:-+0 x50}"

log() { printf 'test_mpy: %s\n' "$*" >&2; }

build=1
patterns=()
for a in "$@"; do
    case "$a" in
        --no-build) build=0 ;;
        -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
        *) patterns+=("$a") ;;
    esac
done

# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

# A build failure is reported like a failed test, so the summary line is
# always the last line.
if ((build)) && ! "$ROOT/scripts/build_micropython.sh"; then
    echo "FAIL build (scripts/build_micropython.sh)"
    echo "RESULT: 0 passed, 1 failed"
    exit 1
fi
if [[ ! -x $MPY ]]; then
    echo "FAIL build (no interpreter at ${MPY#"$ROOT"/})"
    echo "RESULT: 0 passed, 1 failed"
    exit 1
fi

# Debian's python3 (the backend needs only the standard library).
PYTHON=/usr/bin/python3
[[ -x $PYTHON ]] || PYTHON="$(command -v python3)"

shopt -s nullglob
TESTDIR="${BENTOCLAW_MPY_TESTS_DIR:-$ROOT/tests/mpy}"
all_tests=("$TESTDIR"/test_*.py)
shopt -u nullglob
tests=()
for t in "${all_tests[@]}"; do
    if ((${#patterns[@]} == 0)); then tests+=("$t"); continue; fi
    for p in "${patterns[@]}"; do
        [[ $(basename "$t") == *"$p"* ]] && { tests+=("$t"); break; }
    done
done

needs() { grep -qE "^[[:space:]]*#[[:space:]]*needs:.*\\b$2\\b" "$1"; }

if ((${#tests[@]} == 0)); then
    echo "FAIL no test file matched (${patterns[*]:-all}) in ${TESTDIR#"$ROOT"/}/: nothing was run"
    echo "RESULT: 0 passed, 1 failed"
    exit 1
fi

want=(python3)
for t in "${tests[@]}"; do
    if needs "$t" faketime; then want+=(faketime); break; fi
done
for t in "${tests[@]}"; do
    if needs "$t" clock; then want+=(libfaketime); break; fi
done
ensure_pkgs "${want[@]}"
FAKETIME_LIB=""
if [[ " ${want[*]} " == *" libfaketime "* ]]; then
    FAKETIME_LIB="$(dpkg -L libfaketime | grep -m1 '/libfaketime\.so\.1$' || true)"
fi

mkdir -p "$LOGDIR"
work="$(mktemp -d)"
backend_pid=""
stop_backend() {
    if [[ -n $backend_pid ]]; then
        kill -TERM "$backend_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$backend_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$backend_pid" 2>/dev/null || true
        wait "$backend_pid" 2>/dev/null || true
        backend_pid=""
    fi
}
cleanup() {
    stop_backend
    exec 7>&- 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The backend reads a FIFO whose only writer is this script (fd 7): if the
# runner dies, even by SIGKILL, the backend sees EOF and exits (--stdin-exit).
mkfifo "$work/keepalive"
exec 7<>"$work/keepalive"

backend_port=""
start_backend() {
    local out="$work/backend.out" port=""
    : >"$out"
    "$PYTHON" "$ROOT/mpy/examples/backend.py" --port 0 --stdin-exit --quiet \
        <"$work/keepalive" >"$out" 2>"$work/backend.err" 7>&- &
    backend_pid=$!
    # Up to 30 s: a loaded machine may take seconds to start CPython; a
    # backend that died stops the wait at once.
    for _ in $(seq 1 600); do
        port="$(awk '/^PORT [0-9]+$/ {print $2; exit}' "$out")"
        [[ -n $port ]] && break
        kill -0 "$backend_pid" 2>/dev/null || break
        sleep 0.05
    done
    [[ -n $port ]] || { cat "$work/backend.err" >&2; return 1; }
    backend_port=$port
}

passed=0
failed=0
for t in "${tests[@]}"; do
    name="$(basename "$t" .py)"
    tlog="$LOGDIR/$name.log"
    env_extra=(BENTOCLAW_MPY="$MPY" BENTOCLAW_ROOT="$ROOT")
    wrap=()
    note=""
    heap=()
    if needs "$t" heap; then
        heap=(-X heapsize=64M)
        note+=" heap:64M"
    fi
    if needs "$t" backend; then
        if ! start_backend; then
            echo "FAIL $name (backend did not start)"
            failed=$((failed + 1))
            stop_backend
            continue
        fi
        env_extra+=(BENTOCLAW_PORT="$backend_port")
        note+=" backend:$backend_port"
    fi
    if needs "$t" faketime; then
        wrap=(faketime -f "$FAKETIME_SPEC")
        note+=" faketime"
        # The backend answers in real time: the unix transport's 5 s request
        # deadline, scaled by the clock's speed-up, stays 5 s of real time
        # (unscaled it is 100 ms, which a loaded machine can miss).
        speed=${FAKETIME_SPEC##*x}
        [[ $speed =~ ^[0-9]+$ ]] && env_extra+=(BENTOCLAW_HTTP_TIMEOUT_MS=$((5000 * speed)))
    fi
    if needs "$t" clock; then
        if [[ -z $FAKETIME_LIB ]]; then
            echo "FAIL $name (needs: clock, but libfaketime.so.1 was not found)"
            failed=$((failed + 1))
            stop_backend
            continue
        fi
        if ((${#wrap[@]})); then
            echo "FAIL $name (needs both faketime and clock: pick one)"
            failed=$((failed + 1))
            stop_backend
            continue
        fi
        printf '%-23s\n' "+0" >"$work/clock"
        wrap=(env LD_PRELOAD="$FAKETIME_LIB" FAKETIME_TIMESTAMP_FILE="$work/clock" FAKETIME_NO_CACHE=1)
        env_extra+=(BENTOCLAW_CLOCK_FILE="$work/clock")
        note+=" clock"
    fi
    start=$SECONDS
    set +e
    (cd "$ROOT" && exec env "${env_extra[@]}" timeout -k 5 "$TIMEOUT" \
        "${wrap[@]}" "$MPY" "${heap[@]}" "$t") >"$tlog" 2>&1 7>&- </dev/null
    rc=$?
    set -e
    stop_backend
    secs=$((SECONDS - start))
    # The file's own verdict: its last RESULT line.
    result="$(grep -E '^RESULT: [0-9]+ passed, [0-9]+ failed$' "$tlog" | tail -n 1 || true)"
    why=""
    if ((rc != 0)); then
        why="exit $rc"
        ((rc == 124 || rc == 137)) && why="timeout after ${TIMEOUT}s"
    elif [[ -z $result ]]; then
        why="exit 0 but no RESULT line: the file never reached Checker.done()"
    elif [[ $result =~ ^RESULT:\ 0\ passed,\ 0\ failed$ ]]; then
        why="exit 0 but no check was made ($result)"
    elif [[ ! $result =~ \ 0\ failed$ ]]; then
        why="exit 0 but $result"
    fi
    if [[ -z $why ]]; then
        echo "PASS $name (${secs}s)"
        passed=$((passed + 1))
    else
        echo "FAIL $name ($why, ${secs}s;$note) log: build/test-mpy/$name.log"
        tail -n 25 "$tlog" | sed 's/^/    | /'
        failed=$((failed + 1))
    fi
done

echo "RESULT: $passed passed, $failed failed"
((failed == 0))
