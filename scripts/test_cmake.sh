#!/usr/bin/env bash
# shellcheck disable=SC2317  # helper functions run through check()
# test_cmake.sh — the CMake path and the seed's build switch BENTO_HAS_MPY.
#
#  1. MicroPython built by its own CMake files (py/py.cmake, extmod/extmod.cmake,
#     py/usermod.cmake, py/mkrules.cmake) from tests/cmake/ with
#     USER_C_MODULES=mpy/micropython.cmake: the QSTR, moduledefs and root
#     pointer headers carry the module, cargo runs through
#     cmake/bentoclaw.cmake and the archive is linked; tests/cmake/smoke.py
#     runs in the result (API, remember/recall on LittleFS, safety()).
#  2. BENTO_HAS_MPY=0, CMake (same project) and make (the unix port with
#     USER_C_MODULES=<repo>, i.e. mpy/micropython.mk): the build succeeds,
#     `import bentoclaw` fails, nm finds no claw_ symbol, and cargo did not
#     run (a stand-in cargo that leaves a mark is first on PATH and named in
#     CARGO / BENTOCLAW_CARGO; two control checks show the mark appears when
#     the switch is on).
#
# Build folders (kept for incremental re-runs): build/cmake-host,
# build/cmake-host-nompy, build/mpy-unix-nompy. Logs: build/test-cmake/.
# Last line: RESULT: <n> passed, <m> failed
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
SRC="$ROOT/build/micropython-src/micropython"
LOGS="$ROOT/build/test-cmake"
JOBS="${BENTOCLAW_JOBS:-2}"
HOST="$ROOT/build/cmake-host"
HOST0="$ROOT/build/cmake-host-nompy"
UNIX0="$ROOT/build/mpy-unix-nompy"

log() { printf 'test_cmake: %s\n' "$*" >&2; }

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
check() { # check "what" command...
    local what=$1; shift
    if "$@"; then ok "$what"; else bad "$what"; fi
}
finish() { echo "RESULT: $passed passed, $failed failed"; exit $((failed > 0)); }
abort() { bad "$*"; finish; }

# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
ensure_pkgs cmake build-essential libffi-dev pkg-config python3 binutils \
    || abort "installing cmake and the build tools"
"$ROOT/scripts/fetch_micropython.sh" >&2 || abort "fetching the MicroPython source"
[[ -x ${CARGO_HOME:-$HOME/.cargo}/bin/cargo ]] && PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
command -v cargo >/dev/null || abort "cargo not found (install Rust with rustup)"
mkdir -p "$LOGS"

# A stand-in cargo: records that it ran and fails.
trap_dir="$(mktemp -d)"
trap 'rm -rf "$trap_dir"' EXIT
mkdir -p "$trap_dir/bin"
MARK="$trap_dir/cargo-ran"
cat >"$trap_dir/bin/cargo" <<EOF
#!/bin/sh
echo "\$*" >>"$MARK"
exit 97
EOF
chmod +x "$trap_dir/bin/cargo"
FAKE_CARGO="$trap_dir/bin/cargo"

claw_symbols() { nm "$1" 2>/dev/null | awk '$3 ~ /^claw_/ {print $3}' | sort -u; }
no_claw_symbols() { [[ -z "$(claw_symbols "$1")" ]]; }
no_mark() { [[ ! -e $MARK ]]; }
# has_target BUILD_DIR NAME — the CMake build defines target NAME.
has_target() {
    local t
    t=$(cmake --build "$1" --target help 2>/dev/null | awk '$1 == "..." {print $2}')
    grep -qx "$2" <<<"$t"
}
# run_py BINARY SCRIPT LOG — runs a test script with tests/mpy on the path.
run_py() { MICROPYPATH="$ROOT/tests/mpy" timeout 60 "$1" "$2" >"$3" 2>&1; }
# count_result LOG — adds the log's RESULT line to the totals.
count_result() {
    local line
    line=$(grep -E '^RESULT: [0-9]+ passed, [0-9]+ failed$' "$1" | tail -n 1)
    if [[ -z $line ]]; then
        bad "$(basename "$1" .log) printed no RESULT line"
        tail -n 20 "$1"
        return
    fi
    grep -E '^FAIL' "$1"
    [[ $line =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
    echo "     $(basename "$1" .log): $line"
}

CMAKE_ARGS=(-DMICROPY_DIR="$SRC" -DUSER_C_MODULES="$ROOT/mpy/micropython.cmake"
            -DBENTOCLAW_PORT_FIRMWARE=OFF)

# MicroPython's generated headers collect the QSTRs and modules of every file
# ever scanned in a build folder (genhdr/qstr, genhdr/module): a source that
# left the module's list, or a module switched off, would stay registered.
# Start a build folder's genhdr afresh when its inputs changed.
fresh_genhdr() { # fresh_genhdr BUILD_DIR CMAKE_ARGS...
    local dir=$1 stamp; shift
    stamp="$(cat mpy/micropython.cmake cmake/bentoclaw.cmake tests/cmake/CMakeLists.txt \
        tests/cmake/mpconfigport.h | sha256sum) $*"
    if [[ -d $dir && "$(cat "$dir/.bentoclaw-stamp" 2>/dev/null)" != "$stamp" ]]; then
        rm -rf "$dir/genhdr"
    fi
    mkdir -p "$dir"
    printf '%s' "$stamp" >"$dir/.bentoclaw-stamp"
}

# --- 1. CMake, module in ----------------------------------------------------------------
echo "== CMake build with the module (build/cmake-host)"
fresh_genhdr "$HOST" "${CMAKE_ARGS[@]}" -DBENTO_HAS_MPY=ON
if cmake -S tests/cmake -B "$HOST" "${CMAKE_ARGS[@]}" -DBENTO_HAS_MPY=ON \
        >"$LOGS/configure.log" 2>&1 \
    && cmake --build "$HOST" -j"$JOBS" >"$LOGS/build.log" 2>&1; then
    ok "cmake configure + build (tests/cmake, USER_C_MODULES=mpy/micropython.cmake)"
else
    tail -n 40 "$LOGS/configure.log" "$LOGS/build.log" 2>/dev/null
    abort "cmake build with the module (logs: build/test-cmake/)"
fi
check "py/usermod.cmake found the module" \
    grep -q 'Found User C Module(s): usermod_bentoclaw' "$LOGS/configure.log" "$HOST/CMakeCache.txt"
lib="$HOST/bentoclaw-cargo/release/libbentoclaw.a"
check "cmake/bentoclaw.cmake built the archive with cargo ($(realpath --relative-to="$ROOT" "$lib"))" \
    test -f "$lib"
check "the firmware's link line names the archive, after the objects" \
    grep -qE '\.o .* bentoclaw-cargo/release/libbentoclaw\.a' "$HOST/CMakeFiles/bentoclaw_host.dir/link.txt"
check "the module's objects are on the link line" \
    grep -q '/mpy/modbentoclaw\.c\.o' "$HOST/CMakeFiles/bentoclaw_host.dir/link.txt"
check "cargo is a build step (bentoclaw_cargo target)" has_target "$HOST" bentoclaw_cargo
check "mkrules.cmake: qstrdefs.generated.h has QSTR bentoclaw" \
    grep -q 'QDEF[0-9]*(MP_QSTR_bentoclaw,' "$HOST/genhdr/qstrdefs.generated.h"
check "mkrules.cmake: moduledefs.h registers bentoclaw" \
    grep -q 'MODULE_DEF_BENTOCLAW' "$HOST/genhdr/moduledefs.h"
check "mkrules.cmake: root_pointers.h has the module's root pointers" \
    grep -q 'bentoclaw_' "$HOST/genhdr/root_pointers.h"
n=$(claw_symbols "$HOST/bentoclaw_host" | wc -l)
check "the binary holds the Rust core (nm: $n claw_ symbols)" \
    bash -c "nm '$HOST/bentoclaw_host' | grep -q ' T claw_session_add$' && nm '$HOST/bentoclaw_host' | grep -q ' T claw_cb_allow$'"
run_py "$HOST/bentoclaw_host" tests/cmake/smoke.py "$LOGS/smoke.log"
count_result "$LOGS/smoke.log"

# --- 2a. CMake, BENTO_HAS_MPY=0 -------------------------------------------------------
echo "== CMake build with BENTO_HAS_MPY=0 (build/cmake-host-nompy)"
rm -f "$MARK"
fresh_genhdr "$HOST0" "${CMAKE_ARGS[@]}" -DBENTO_HAS_MPY=0
if PATH="$trap_dir/bin:$PATH" cmake -S tests/cmake -B "$HOST0" "${CMAKE_ARGS[@]}" \
        -DBENTO_HAS_MPY=0 -DBENTOCLAW_CARGO="$FAKE_CARGO" >"$LOGS/configure-nompy.log" 2>&1 \
    && PATH="$trap_dir/bin:$PATH" cmake --build "$HOST0" -j"$JOBS" >"$LOGS/build-nompy.log" 2>&1; then
    ok "cmake configure + build with BENTO_HAS_MPY=0"
else
    tail -n 40 "$LOGS/configure-nompy.log" "$LOGS/build-nompy.log" 2>/dev/null
    abort "cmake build with BENTO_HAS_MPY=0 (logs: build/test-cmake/)"
fi
check "BENTO_HAS_MPY=0: cargo did not run" no_mark
check "BENTO_HAS_MPY=0: no bentoclaw_cargo target" \
    bash -c "$(declare -f has_target); has_target '$HOST0' bentoclaw_host && ! has_target '$HOST0' bentoclaw_cargo"
check "BENTO_HAS_MPY=0: no archive on the link line" \
    bash -c "! grep -q libbentoclaw '$HOST0/CMakeFiles/bentoclaw_host.dir/link.txt'"
check "BENTO_HAS_MPY=0: no object of mpy/ on the link line" \
    bash -c "! grep -q '/mpy/[^ ]*\.o' '$HOST0/CMakeFiles/bentoclaw_host.dir/link.txt'"
check "BENTO_HAS_MPY=0: no mp_module_bentoclaw in the binary (nm)" \
    bash -c "! nm '$HOST0/bentoclaw_host' | grep -q mp_module_bentoclaw"
check "BENTO_HAS_MPY=0: moduledefs.h has no bentoclaw" \
    bash -c "! grep -q -i bentoclaw '$HOST0/genhdr/moduledefs.h'"
check "BENTO_HAS_MPY=0: no claw_ symbol in the binary (nm)" no_claw_symbols "$HOST0/bentoclaw_host"
run_py "$HOST0/bentoclaw_host" tests/cmake/without_module.py "$LOGS/without-module-cmake.log"
count_result "$LOGS/without-module-cmake.log"

# The environment's BENTO_HAS_MPY is the default at the first configure (what
# `make BENTO_HAS_MPY=0` passes down through the rp2/esp32 make wrappers).
envdir="$trap_dir/cmake-env"
PATH="$trap_dir/bin:$PATH" BENTO_HAS_MPY=0 cmake -S tests/cmake -B "$envdir" "${CMAKE_ARGS[@]}" \
    >"$LOGS/configure-env.log" 2>&1
check "BENTO_HAS_MPY=0 from the environment: switched off at configure" \
    grep -q '^BENTO_HAS_MPY:BOOL=0$' "$envdir/CMakeCache.txt"

# Control: with the switch on, the same stand-in cargo is what the build runs.
ctrl="$trap_dir/cmake-ctrl"
rm -f "$MARK"
PATH="$trap_dir/bin:$PATH" cmake -S tests/cmake -B "$ctrl" "${CMAKE_ARGS[@]}" -DBENTO_HAS_MPY=ON \
    -DBENTOCLAW_CARGO="$FAKE_CARGO" >"$LOGS/configure-ctrl.log" 2>&1
PATH="$trap_dir/bin:$PATH" cmake --build "$ctrl" --target bentoclaw_cargo >"$LOGS/build-ctrl.log" 2>&1
check "control: with BENTO_HAS_MPY=ON the stand-in cargo runs" test -e "$MARK"

# --- 2b. make (unix port), BENTO_HAS_MPY=0 ----------------------------------------------
echo "== unix port (make) with BENTO_HAS_MPY=0 (build/mpy-unix-nompy)"
MAKE_ARGS=(-C "$SRC/ports/unix" VARIANT=standard USER_C_MODULES="$ROOT"
           FROZEN_MANIFEST= MICROPY_PY_BTREE=0 MICROPY_PY_SSL=0 MICROPY_SSL_MBEDTLS=0
           MICROPY_SSL_AXTLS=0 STRIP=true CARGO="$FAKE_CARGO")
rm -f "$MARK"
if PATH="$trap_dir/bin:$PATH" make "${MAKE_ARGS[@]}" -j"$JOBS" BUILD="$UNIX0" BENTO_HAS_MPY=0 \
        >"$LOGS/make-nompy.log" 2>&1; then
    ok "make unix port with BENTO_HAS_MPY=0"
else
    tail -n 40 "$LOGS/make-nompy.log"
    abort "make unix port with BENTO_HAS_MPY=0 (log: build/test-cmake/make-nompy.log)"
fi
check "make BENTO_HAS_MPY=0: cargo did not run" no_mark
check "make BENTO_HAS_MPY=0: no mp_module_bentoclaw in the binary (nm)" \
    bash -c "! nm '$UNIX0/micropython' | grep -q mp_module_bentoclaw"
check "make BENTO_HAS_MPY=0: no claw_ symbol in the binary (nm)" no_claw_symbols "$UNIX0/micropython"
run_py "$UNIX0/micropython" tests/cmake/without_module.py "$LOGS/without-module-make.log"
count_result "$LOGS/without-module-make.log"

# The archive rule: with the switch on, asking make for a missing archive runs
# (stand-in) cargo; with BENTO_HAS_MPY=0 in the environment there is no rule.
want="$trap_dir/nolib/libbentoclaw.a"
rm -f "$MARK"
PATH="$trap_dir/bin:$PATH" make "${MAKE_ARGS[@]}" BUILD="$UNIX0" BENTO_HAS_MPY=1 \
    BENTOCLAW_LIB="$want" "$want" >"$LOGS/make-ctrl.log" 2>&1
check "control: make with BENTO_HAS_MPY=1 runs cargo for a missing archive" test -e "$MARK"
rm -f "$MARK"
PATH="$trap_dir/bin:$PATH" BENTO_HAS_MPY=0 make "${MAKE_ARGS[@]}" BUILD="$UNIX0" \
    BENTOCLAW_LIB="$want" "$want" >"$LOGS/make-env.log" 2>&1
check "make with BENTO_HAS_MPY=0 in the environment: no archive rule, cargo not run" \
    bash -c "grep -q 'No rule to make target' '$LOGS/make-env.log' && [[ ! -e '$MARK' ]]"

finish
