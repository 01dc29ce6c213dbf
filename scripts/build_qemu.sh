#!/usr/bin/env bash
# build_qemu.sh — MicroPython's bare-metal qemu port for the emulated
# Cortex-M55 (qemu-system-arm -M mps3-an547) with the `bentoclaw` module.
#
#   1. scripts/fetch_micropython.sh   (Debian source package, suite trixie)
#   2. cargo rustc --release --crate-type staticlib --target thumbv8m.main-none-eabihf
#      with CARGO_TARGET_DIR=target/qemu (its own directory: other scripts
#      build the same target with other features into target/)
#   3. make -C <src>/ports/qemu BOARD_DIR=tests/qemu/boards/MPS3_AN547 USER_C_MODULES=<repo root>
#      BENTOCLAW_PORT_FIRMWARE=1 ...
#   4. build/qemu/firmware.elf + build/qemu/firmware.map (link map)
#
# Idempotent and incremental: cargo and make decide what to rebuild; a newer
# staticlib relinks (mpy/micropython.mk makes the image depend on it); a
# changed board .mk file or make arguments start the build directory afresh.
#
# Environment:
#   BENTOCLAW_JOBS              parallel make jobs (default 2)
#   BENTOCLAW_SKIP_CARGO=1      do not run cargo (use the existing staticlib)
#   BENTOCLAW_QEMU_MAKE_ARGS    extra make arguments (e.g. "DEBUG=1")
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/build/micropython-src/micropython"
BOARD_DIR="$ROOT/tests/qemu/boards/MPS3_AN547"
OUT="$ROOT/build/qemu"
STAGE="$OUT/obj"                      # the port's BUILD= directory
TARGET=thumbv8m.main-none-eabihf
CARGO_DIR="$ROOT/target/qemu"
STATICLIB="$CARGO_DIR/$TARGET/release/libbento_mpy.a"
JOBS="${BENTOCLAW_JOBS:-2}"

log() { printf 'build_qemu: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# --- Debian packages ----------------------------------------------------------------
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
ensure_pkgs make python3 gcc-arm-none-eabi binutils-arm-none-eabi libnewlib-arm-none-eabi

"$ROOT/scripts/fetch_micropython.sh"
[[ -f $SRC/ports/qemu/Makefile ]] || die "no MicroPython qemu port at $SRC/ports/qemu"

# --- Rust staticlib for the Cortex-M55 ------------------------------------------------
if [[ ${BENTOCLAW_SKIP_CARGO:-0} != 1 ]]; then
    [[ -x ${CARGO_HOME:-$HOME/.cargo}/bin/cargo ]] && PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
    command -v cargo >/dev/null || die "cargo not found (install Rust with rustup)"
    if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$TARGET"; then
        log "rustup target add $TARGET"
        rustup target add "$TARGET" >&2
    fi
    # The module uses the additions of claw_ext.h: features recall and lasting.
    log "cargo rustc --release --crate-type staticlib --features agent --target $TARGET (CARGO_TARGET_DIR=target/qemu)"
    (cd "$ROOT" && CARGO_TARGET_DIR="$CARGO_DIR" cargo rustc --quiet --release \
        --crate-type staticlib --features agent --target "$TARGET")
fi
[[ -f $STATICLIB ]] || die "no staticlib at $STATICLIB"

# --- the header ABI with the firmware's compiler flags -----------------------------------
# tests/image/abi_target.c (also built by scripts/size_report.sh): static
# asserts on the public headers, compiled as the board compiles modbentoclaw.c.
mkdir -p "$OUT"
arm-none-eabi-gcc -mthumb -mcpu=cortex-m55 -mfloat-abi=hard -mfpu=fpv5-d16 -std=gnu99 -Os \
    -Wall -Werror -I"$ROOT/include" -c "$ROOT/tests/image/abi_target.c" -o "$OUT/abi_target.o" \
    || die "header ABI check (tests/image/abi_target.c) failed with the firmware's flags"

# --- the qemu port ------------------------------------------------------------------------
MAKE_ARGS=(
    -C "$SRC/ports/qemu"
    -j"$JOBS"
    BOARD=MPS3_AN547
    BOARD_DIR="$BOARD_DIR"
    BUILD="$STAGE"
    USER_C_MODULES="$ROOT"
    BENTOCLAW_PORT_FIRMWARE=1
    BENTOCLAW_RUST_TARGET="$TARGET"
    BENTOCLAW_LIB="$STATICLIB"
    FROZEN_MANIFEST=
)
if [[ -n ${BENTOCLAW_QEMU_MAKE_ARGS:-} ]]; then
    read -r -a extra <<<"$BENTOCLAW_QEMU_MAKE_ARGS"
    MAKE_ARGS+=("${extra[@]}")
fi

# Generated headers (module and root-pointer tables) and flags depend on the
# board's .mk file and the arguments, which make does not track: start afresh
# when they changed.
stamp="$STAGE/.bentoclaw-config"
config="$(printf '%s\n' "${MAKE_ARGS[@]}"; cat "$BOARD_DIR/mpconfigboard.mk" "$ROOT/mpy/micropython.mk")"
if [[ -d $STAGE && ( ! -f $stamp || "$(cat "$stamp")" != "$config" ) ]]; then
    log "board, module .mk or make arguments changed: clean rebuild"
    rm -rf "$STAGE"
fi
mkdir -p "$STAGE"
printf '%s' "$config" >"$stamp"

log "make qemu port (BOARD_DIR=tests/qemu/boards/MPS3_AN547, USER_C_MODULES=<repo root>)"
make "${MAKE_ARGS[@]}" >"$OUT/make.log" 2>&1 || {
    tail -n 40 "$OUT/make.log" >&2
    die "qemu port build failed (full log: build/qemu/make.log)"
}

for f in firmware.elf firmware.map; do
    [[ -f $STAGE/$f ]] || die "make did not produce $STAGE/$f"
    if ! cmp -s "$STAGE/$f" "$OUT/$f"; then
        cp -f "$STAGE/$f" "$OUT/$f.tmp"
        mv -f "$OUT/$f.tmp" "$OUT/$f"
    fi
done

# --- sanity: the module and the Rust core are in the image ---------------------------------
syms="$(arm-none-eabi-nm "$OUT/firmware.elf")"
for s in mp_module_bentoclaw claw_session_flush claw_cb_allow claw_port_open board_module mp_hal_ticks_ms; do
    grep -q " $s\$" <<<"$syms" || die "symbol $s missing from firmware.elf"
done
grep -q 'libbento_mpy\.a' "$OUT/firmware.map" || die "libbento_mpy.a not in the link map"
arm-none-eabi-size "$OUT/firmware.elf" | sed 's/^/build_qemu: /' >&2
log "ready: build/qemu/firmware.elf (map: build/qemu/firmware.map)"
