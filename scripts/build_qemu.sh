#!/usr/bin/env bash
# build_qemu.sh — MicroPython's bare-metal qemu port with the `bentoclaw`
# module, for two emulated boards and a variant of the first (docs/EMULATOR.md):
#
#   m33  tests/qemu/boards/MPS2_AN505  qemu-system-arm -M mps2-an505, Cortex-M33,
#        -mcpu=cortex-m33 -mfloat-abi=softfp -mfpu=fpv5-sp-d16 (as the BENTO
#        firmware builds every CM33 object), the archive for
#        thumbv8m.main-none-eabi: the primary target -> build/qemu/firmware.{elf,map}
#   m55  tests/qemu/boards/MPS3_AN547  qemu-system-arm -M mps3-an547, Cortex-M55,
#        -mcpu=cortex-m55 -mfloat-abi=hard -mfpu=fpv5-d16, the archive for
#        thumbv8m.main-none-eabihf (the hard-float option)
#        -> build/qemu-m55/firmware.{elf,map}
#   m33-64k  the m33 board built with the BENTO board's 64 KiB GC heap
#        (MICROPY_HEAP_SIZE=65536; the m33 build has 384 KiB for the tests),
#        for the heap measurements of tests/qemu/test_gc_heap.py
#        -> build/qemu-64k/firmware.{elf,map}
#
#   1. scripts/fetch_micropython.sh   (Debian source package, suite trixie)
#   2. cargo rustc --release --crate-type staticlib --target <board's target>
#      with CARGO_TARGET_DIR=target/qemu (its own directory: other scripts
#      build the same targets with other features into target/)
#   3. per board: make -C <src>/ports/qemu BOARD_DIR=<board dir> USER_C_MODULES=<repo>/tests
#      BENTOCLAW_PORT_FIRMWARE=1 ... -> firmware.elf + firmware.map (link map)
#
# Usage: scripts/build_qemu.sh [m33] [m55] [m33-64k]   (default: m33, m55)
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
CARGO_DIR="$ROOT/target/qemu"
# The Rust target of each board: its float ABI must be the board's.
declare -A BOARD_TARGET=([m33]=thumbv8m.main-none-eabi [m55]=thumbv8m.main-none-eabihf
    [m33-64k]=thumbv8m.main-none-eabi)
staticlib() { printf '%s' "$CARGO_DIR/$1/release/libbentoclaw.a"; }
JOBS="${BENTOCLAW_JOBS:-2}"

log() { printf 'build_qemu: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

boards=()
for a in "$@"; do
    case "$a" in
        m33|m55|m33-64k) boards+=("$a") ;;
        -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
        *) die "unknown board '$a' (m33, m55, m33-64k)" ;;
    esac
done
((${#boards[@]})) || boards=(m33 m55)

# --- Debian packages ----------------------------------------------------------------
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
ensure_pkgs make python3 gcc-arm-none-eabi binutils-arm-none-eabi libnewlib-arm-none-eabi

"$ROOT/scripts/fetch_micropython.sh"
[[ -f $SRC/ports/qemu/Makefile ]] || die "no MicroPython qemu port at $SRC/ports/qemu"

# --- Rust staticlib for each board's target ---------------------------------------------
targets=()
for b in "${boards[@]}"; do
    [[ " ${targets[*]} " == *" ${BOARD_TARGET[$b]} "* ]] || targets+=("${BOARD_TARGET[$b]}")
done
if [[ ${BENTOCLAW_SKIP_CARGO:-0} != 1 ]]; then
    [[ -x ${CARGO_HOME:-$HOME/.cargo}/bin/cargo ]] && PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
    command -v cargo >/dev/null || die "cargo not found (install Rust with rustup)"
    for t in "${targets[@]}"; do
        if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$t"; then
            log "rustup target add $t"
            rustup target add "$t" >&2
        fi
        # The module uses the additions of claw_ext.h: feature agent.
        log "cargo rustc --release --crate-type staticlib --features agent --target $t (CARGO_TARGET_DIR=target/qemu)"
        (cd "$ROOT" && CARGO_TARGET_DIR="$CARGO_DIR" cargo rustc --quiet --release \
            --crate-type staticlib --features agent --target "$t")
    done
fi
for t in "${targets[@]}"; do
    [[ -f $(staticlib "$t") ]] || die "no staticlib at $(staticlib "$t")"
done

# --- one board ----------------------------------------------------------------------------
# build_board NAME BOARD_NAME OUT_DIR HEAP CPU_FLAGS...   (HEAP: bytes, or - for the board's)
build_board() {
    local name=$1 board=$2 out=$3 heap=$4
    shift 4
    local cpu_flags=("$@")
    local target=${BOARD_TARGET[$name]}
    local board_dir="$ROOT/tests/qemu/boards/$board"
    local stage="$out/obj"                  # the port's BUILD= directory
    local rel_out="${out#"$ROOT"/}"

    # tests/image/abi_target.c (also built by scripts/size_report.sh): static
    # asserts on the public headers, compiled as the board compiles
    # modbentoclaw.c.
    mkdir -p "$out"
    arm-none-eabi-gcc "${cpu_flags[@]}" -std=gnu99 -Os \
        -Wall -Werror -I"$ROOT/include" -c "$ROOT/tests/image/abi_target.c" -o "$out/abi_target.o" \
        || die "$name: header ABI check (tests/image/abi_target.c) failed with the firmware's flags"

    local make_args=(
        -C "$SRC/ports/qemu"
        -j"$JOBS"
        BOARD="$board"
        BOARD_DIR="$board_dir"
        BUILD="$stage"
        # tests/vendor_binding/micropython.mk: the test module vclaw, beside
        # bentoclaw (it includes mpy/micropython.mk).
        USER_C_MODULES="$ROOT/tests"
        BENTOCLAW_PORT_FIRMWARE=1
        BENTOCLAW_RUST_TARGET="$target"
        BENTOCLAW_LIB="$(staticlib "$target")"
        FROZEN_MANIFEST=
    )
    [[ $heap == - ]] || make_args+=(MICROPY_HEAP_SIZE="$heap")
    if [[ -n ${BENTOCLAW_QEMU_MAKE_ARGS:-} ]]; then
        local extra
        read -r -a extra <<<"$BENTOCLAW_QEMU_MAKE_ARGS"
        make_args+=("${extra[@]}")
    fi

    # Generated headers (module and root-pointer tables) and flags depend on
    # the board's .mk file and the arguments, which make does not track:
    # start afresh when they changed.
    local stamp="$stage/.bentoclaw-config" config
    config="$(printf '%s\n' "${make_args[@]}"; cat "$board_dir/mpconfigboard.mk" "$ROOT/mpy/micropython.mk" \
        "$ROOT/tests/vendor_binding/micropython.mk")"
    if [[ -d $stage && ( ! -f $stamp || "$(cat "$stamp")" != "$config" ) ]]; then
        log "$name: board, module .mk or make arguments changed: clean rebuild"
        rm -rf "$stage"
    fi
    mkdir -p "$stage"
    printf '%s' "$config" >"$stamp"

    log "$name: make qemu port (BOARD_DIR=tests/qemu/boards/$board, USER_C_MODULES=<repo>/tests)"
    make "${make_args[@]}" >"$out/make.log" 2>&1 || {
        tail -n 40 "$out/make.log" >&2
        die "$name: qemu port build failed (full log: $rel_out/make.log)"
    }

    local f
    for f in firmware.elf firmware.map; do
        [[ -f $stage/$f ]] || die "$name: make did not produce $stage/$f"
        if ! cmp -s "$stage/$f" "$out/$f"; then
            cp -f "$stage/$f" "$out/$f.tmp"
            mv -f "$out/$f.tmp" "$out/$f"
        fi
    done

    # Sanity: the module, the Rust core and the board are in the image.
    local syms s
    syms="$(arm-none-eabi-nm "$out/firmware.elf")"
    for s in mp_module_bentoclaw mp_module_vclaw claw_session_flush claw_ask claw_port_open board_module mp_hal_ticks_ms; do
        grep -q " $s\$" <<<"$syms" || die "$name: symbol $s missing from firmware.elf"
    done
    grep -q "${target//./\\.}/release/libbentoclaw\\.a" "$out/firmware.map" ||
        die "$name: $target/release/libbentoclaw.a not in the link map"
    arm-none-eabi-size "$out/firmware.elf" | sed "s/^/build_qemu: $name: /" >&2
    log "$name: ready: $rel_out/firmware.elf (map: $rel_out/firmware.map)"
}

for b in "${boards[@]}"; do
    case $b in
        m33) build_board m33 MPS2_AN505 "$ROOT/build/qemu" - \
                 -mthumb -mcpu=cortex-m33 -mfloat-abi=softfp -mfpu=fpv5-sp-d16 ;;
        m55) build_board m55 MPS3_AN547 "$ROOT/build/qemu-m55" - \
                 -mthumb -mcpu=cortex-m55 -mfloat-abi=hard -mfpu=fpv5-d16 ;;
        m33-64k) build_board m33-64k MPS2_AN505 "$ROOT/build/qemu-64k" 65536 \
                 -mthumb -mcpu=cortex-m33 -mfloat-abi=softfp -mfpu=fpv5-sp-d16 ;;
    esac
done
