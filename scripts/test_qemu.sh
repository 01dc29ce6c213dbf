#!/usr/bin/env bash
# test_qemu.sh — build the emulated Cortex-M55 firmware and run tests/qemu/.
#
#   scripts/test_qemu.sh [--no-build] [PATTERN...]   run tests/qemu/test_*.py
#   scripts/test_qemu.sh --repl [--no-build]         the firmware's REPL, with
#                                                    LittleFS on the RAM disk at /
#
# Each test boots its own qemu-system-arm -M mps3-an547 and is driven over
# the raw REPL by tests/qemu/run.py (Python standard library only). One line
# per test, last line "RESULT: <n> passed, <m> failed"; exit status 1 when a
# test failed. Logs: build/test-qemu/<test>.log.
#
# Environment: BENTOCLAW_JOBS, BENTOCLAW_SKIP_CARGO, BENTOCLAW_QEMU_MAKE_ARGS
# (see scripts/build_qemu.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ELF="$ROOT/build/qemu/firmware.elf"

build=1
repl=0
patterns=()
for a in "$@"; do
    case "$a" in
        --no-build) build=0 ;;
        --repl) repl=1 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) patterns+=("$a") ;;
    esac
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
    "$ROOT/scripts/build_qemu.sh"
fi
[[ -f $ELF ]] || { log "error: no $ELF (run scripts/build_qemu.sh)"; exit 1; }

cd "$ROOT"
if ((repl)); then
    exec python3 tests/qemu/run.py --elf "$ELF" --repl
fi
# Bounded: each test has its own limit (run.py, default 90 s); this caps the lot.
exec timeout 900 python3 tests/qemu/run.py --elf "$ELF" "${patterns[@]}"
