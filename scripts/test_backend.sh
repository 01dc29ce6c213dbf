#!/usr/bin/env bash
# test_backend.sh — the model bridge of mpy/examples/backend.py
# (docs/BACKEND.md §6): tests/backend/test_bridge.py, in a virtual
# environment with the `openai` package.
#
# Usage: scripts/test_backend.sh
#
#   * Debian's python3 and python3-venv (installed when missing), a venv in
#     build/backend-venv, `pip install openai` into it when it lacks the
#     package (BENTOCLAW_OPENAI_SPEC overrides the requirement, e.g.
#     "openai<2" to try the older client).
#   * The tests run on loopback only: recorded chat-completions responses
#     (tests/backend/fixtures/) served by tests/backend/replay.py.
#   * The device part (the unix port asking through the bridge) runs when
#     build/micropython/micropython exists (scripts/build_micropython.sh);
#     BENTOCLAW_REQUIRE_DEVICE=1 makes its absence a failure.
# The last line is "RESULT: <n> passed, <m> failed"; the exit status is
# non-zero when a check failed or none ran.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/build/backend-venv"
SPEC="${BENTOCLAW_OPENAI_SPEC:-openai}"
LOG="$ROOT/build/test-backend.log"

log() { printf 'test_backend: %s\n' "$*" >&2; }
fail_setup() {
    echo "FAIL setup ($*)"
    echo "RESULT: 0 passed, 1 failed"
    exit 1
}

case "${1:-}" in
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    "") ;;
    *) fail_setup "unknown argument $1" ;;
esac

# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
ensure_pkgs python3 python3-venv || fail_setup "apt-get install python3 python3-venv"
PYTHON=/usr/bin/python3
[[ -x $PYTHON ]] || PYTHON="$(command -v python3)"

mkdir -p "$ROOT/build"
if ! "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
    log "creating $VENV"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" || fail_setup "python3 -m venv $VENV"
fi
if [[ -n ${BENTOCLAW_OPENAI_SPEC:-} ]] || ! "$VENV/bin/python" -c 'import openai' 2>/dev/null; then
    log "pip install $SPEC"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$SPEC" >&2 \
        || fail_setup "pip install $SPEC"
fi
log "openai $("$VENV/bin/python" -c 'import openai; print(openai.__version__)')"

if [[ ${BENTOCLAW_REQUIRE_DEVICE:-0} == 1 && ! -x $ROOT/build/micropython/micropython ]]; then
    fail_setup "no build/micropython/micropython for the device part"
fi

timeout -k 5 600 "$VENV/bin/python" "$ROOT/tests/backend/test_bridge.py" 2>&1 | tee "$LOG"
rc=${PIPESTATUS[0]}

# The harness prints the RESULT line itself; a crash or a run without checks
# still ends with one that counts as a failure.
last="$(grep -E '^RESULT: [0-9]+ passed, [0-9]+ failed' "$LOG" | tail -n 1)"
if [[ $last =~ ^RESULT:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
    p=${BASH_REMATCH[1]}
    f=${BASH_REMATCH[2]}
else
    p=0
    f=0
fi
if ((p + f == 0 || (rc != 0 && f == 0))); then
    echo "FAIL test_bridge.py (exit $rc, $p checks passed)"
    echo "RESULT: $p passed, $((f + 1)) failed"
    exit 1
fi
((rc == 0 && f == 0))
