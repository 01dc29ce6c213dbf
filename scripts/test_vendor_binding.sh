#!/usr/bin/env bash
# test_vendor_binding.sh — our archive under the call sequences of the
# vendor's own binding (issue 20): the test module vclaw
# (tests/vendor_binding/modvclaw.c) on the unix port, in an interpreter of
# its own that has no bentoclaw module.
#
#   1. the archive of the 22 functions, default features (the firmware's
#      archive): CARGO_TARGET_DIR=target/vendor cargo build --release
#   2. scripts/build_micropython.sh with BENTOCLAW_MPY_BUILD=vendor,
#      USER_C_MODULES=<repo>/tests and VCLAW_ALONE=1: vclaw, the VFS port
#      mpy/claw_port_vfs.c and that archive -> build/micropython-vendor/
#   3. scripts/test_mpy.sh on tests/vendor_binding/test_*.py with it
#
#   scripts/test_vendor_binding.sh [--no-build] [PATTERN...]
# The last line is "RESULT: <n> passed, <m> failed".
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"

build=1
args=()
for a in "$@"; do
    case "$a" in
        --no-build) build=0 ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) args+=("$a") ;;
    esac
done

fail() { echo "FAIL build ($*)"; echo "RESULT: 0 passed, 1 failed"; exit 1; }

if ((build)); then
    (cd "$ROOT" && CARGO_TARGET_DIR="$ROOT/target/vendor" cargo build --release --quiet) \
        || fail "cargo build --release (target/vendor)"
    # Whatever Cargo.toml names the archive (libbentoclaw.a today).
    lib=""
    for f in "$ROOT"/target/vendor/release/lib*.a; do
        [[ -f $f ]] && lib=$f
    done
    [[ -n $lib ]] || fail "no archive in target/vendor/release"
    BENTOCLAW_SKIP_CARGO=1 BENTOCLAW_MPY_BUILD=vendor BENTOCLAW_USER_C_MODULES="$ROOT/tests" \
        BENTOCLAW_MPY_MAKE_ARGS="VCLAW_ALONE=1 VCLAW_LIB=$lib" "$ROOT/scripts/build_micropython.sh" \
        || fail "scripts/build_micropython.sh (vendor)"
fi

BENTOCLAW_MPY_BUILD=vendor BENTOCLAW_MPY_TESTS_DIR="$ROOT/tests/vendor_binding" \
    exec "$ROOT/scripts/test_mpy.sh" --no-build "${args[@]}"
