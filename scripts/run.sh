#!/usr/bin/env bash
# run.sh — build everything and run the bentoclaw demo on MicroPython's unix port.
#
# Usage: scripts/run.sh [--repl] [--no-build]
#   (default)   build, start mpy/examples/backend.py on a free loopback port, run
#               mpy/examples/demo.py in build/micropython/micropython, stop the backend.
#   --repl      same set-up, then the interactive REPL (mpy/examples/demo_setup.py:
#               LittleFS in RAM at /, bentoclaw imported, PORT/KEY defined).
#   --no-build  skip scripts/build_micropython.sh (use the existing interpreter).
# Needs root for the first run (apt installs, apt-get source).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MPY="$ROOT/build/micropython/micropython"
API_KEY="${BENTOCLAW_API_KEY:-demo-key}"

log() { printf 'run: %s\n' "$*" >&2; }

repl=0
build=1
for a in "$@"; do
    case "$a" in
        --repl) repl=1 ;;
        --no-build) build=0 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) log "unknown argument: $a"; exit 2 ;;
    esac
done

if ((build)); then
    "$ROOT/scripts/build_micropython.sh"
fi
[[ -x $MPY ]] || { log "no interpreter at $MPY (run without --no-build)"; exit 2; }

PYTHON=/usr/bin/python3
[[ -x $PYTHON ]] || PYTHON="$(command -v python3)"

work="$(mktemp -d)"
backend_pid=""
# shellcheck disable=SC2317  # called through the EXIT trap
cleanup() {
    if [[ -n $backend_pid ]]; then
        kill -TERM "$backend_pid" 2>/dev/null || true
        wait "$backend_pid" 2>/dev/null || true
    fi
    exec 7>&- 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The backend reads a FIFO whose only writer is this script (fd 7), so it
# exits on EOF even if this script is killed outright.
mkfifo "$work/keepalive"
exec 7<>"$work/keepalive"
mkdir -p "$ROOT/build"
"$PYTHON" "$ROOT/mpy/examples/backend.py" --port 0 --api-key "$API_KEY" --stdin-exit \
    <"$work/keepalive" >"$work/backend.out" 2>"$ROOT/build/backend.log" 7>&- &
backend_pid=$!
port=""
for _ in $(seq 1 100); do
    port="$(awk '/^PORT [0-9]+$/ {print $2; exit}' "$work/backend.out")"
    [[ -n $port ]] && break
    kill -0 "$backend_pid" 2>/dev/null || break
    sleep 0.05
done
[[ -n $port ]] || { cat "$ROOT/build/backend.log" >&2; log "backend did not start"; exit 1; }
log "backend on 127.0.0.1:$port (requests logged to build/backend.log)"

export BENTOCLAW_PORT="$port" BENTOCLAW_API_KEY="$API_KEY"
cd "$ROOT"
set +e
if ((repl)); then
    "$MPY" -i mpy/examples/demo_setup.py 7>&-
else
    "$MPY" mpy/examples/demo.py 7>&- </dev/null
fi
rc=$?
set -e
exit "$rc"
