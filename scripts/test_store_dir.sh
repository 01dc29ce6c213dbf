#!/usr/bin/env bash
# test_store_dir.sh — the module's files in another directory (issue 22,
# "another mount point"): a firmware whose writable flash is not "/"
# (Infineon's upstream port mounts it at /flash) builds the library with
# BENTOCLAW_STORE_DIR=/flash (build.rs writes every path of the store).
#
#   1. CARGO_TARGET_DIR=target/store-flash BENTOCLAW_STORE_DIR=/flash
#      cargo build --release --features agent
#   2. scripts/build_micropython.sh with BENTOCLAW_MPY_BUILD=store-flash and
#      that archive -> build/micropython-store-flash/
#   3. scripts/test_mpy.sh on tests/store_dir/test_*.py with it
#
#   scripts/test_store_dir.sh [--no-build] [PATTERN...]
# The last line is "RESULT: <n> passed, <m> failed".
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"
build=1
if [[ ${1:-} == --no-build ]]; then
    build=0
    shift
fi
broken() { printf 'FAIL build (%s)\nRESULT: 0 passed, 1 failed\n' "$*"; exit 1; }

if ((build)); then
    (cd "$ROOT" && BENTOCLAW_STORE_DIR=/flash CARGO_TARGET_DIR="$ROOT/target/store-flash" \
        cargo build --release --features agent --quiet) \
        || broken "cargo build --release --features agent (BENTOCLAW_STORE_DIR=/flash, target/store-flash)"
    lib="$ROOT/target/store-flash/release/libbentoclaw.a"
    [[ -f $lib ]] || broken "no archive at ${lib#"$ROOT"/}"
    BENTOCLAW_SKIP_CARGO=1 BENTOCLAW_MPY_BUILD=store-flash BENTOCLAW_MPY_MAKE_ARGS="BENTOCLAW_LIB=$lib" \
        "$ROOT/scripts/build_micropython.sh" || broken "scripts/build_micropython.sh (store-flash)"
fi

BENTOCLAW_MPY_BUILD=store-flash BENTOCLAW_MPY_TESTS_DIR="$ROOT/tests/store_dir" \
    exec "$ROOT/scripts/test_mpy.sh" --no-build "$@"
