#!/usr/bin/env bash
# setup.sh — installs what building and testing bentoclaw needs on a fresh
# Debian machine of this kind (root, apt and rustup reachable). Idempotent:
# a second run installs nothing.
#
#   Debian: build tools, libclang (bindgen), the Arm GNU toolchain with newlib
#           (target image, size report), qemu-system-arm (emulated M55),
#           faketime (time-dependent MicroPython tests), libffi/pkg-config
#           (MicroPython unix port), dpkg-dev (apt-get source), cmake (the
#           CMake build test), ca-certificates (cargo's downloads),
#           libglib2.0-dev (qemu's instruction-counting plugin:
#           scripts/build_qemu_plugin.sh).
#   rustup: thumbv8m.main-none-eabi (the board build: soft-float calling
#           convention, as every BENTO Cortex-M33 object is softfp),
#           thumbv8m.main-none-eabihf (hard-float firmwares, the emulated
#           Cortex-M55) and thumbv7m-none-eabi, rustfmt, clippy; nightly with
#           miri, rust-src and the two thumbv8m targets (the stack analysis);
#           cargo-fuzz (cargo install).
set -euo pipefail

log() { printf 'setup: %s\n' "$*" >&2; }

PKGS=(build-essential pkg-config libffi-dev libclang-dev clang dpkg-dev python3
      gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi
      qemu-system-arm faketime valgrind patch cmake ca-certificates libglib2.0-dev)

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo -n)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

export PATH="$HOME/.cargo/bin:$PATH"
command -v rustup >/dev/null || { log "rustup is required"; exit 1; }
installed=$(rustup target list --installed)
THUMB_TARGETS=(thumbv8m.main-none-eabi thumbv8m.main-none-eabihf)
for t in "${THUMB_TARGETS[@]}" thumbv7m-none-eabi; do
    grep -qx "$t" <<<"$installed" || { log "adding Rust target $t"; rustup target add "$t"; }
done
comps=$(rustup component list --installed)
for c in rustfmt clippy; do
    grep -q "^$c" <<<"$comps" || { log "adding $c"; rustup component add "$c"; }
done

# Nightly: Miri over the core's unit tests, cargo-fuzz, -Z emit-stack-sizes.
rustup toolchain list | grep -q '^nightly' ||
    { log "installing the nightly toolchain"; rustup toolchain install nightly --profile minimal; }
ncomps=$(rustup +nightly component list --installed)
for c in miri rust-src; do
    grep -q "^$c" <<<"$ncomps" || { log "adding nightly $c"; rustup +nightly component add "$c"; }
done
ninstalled=$(rustup +nightly target list --installed)
for t in "${THUMB_TARGETS[@]}"; do
    grep -qx "$t" <<<"$ninstalled" || { log "adding nightly Rust target $t"; rustup +nightly target add "$t"; }
done
command -v cargo-fuzz >/dev/null ||
    { log "installing cargo-fuzz"; cargo install --locked cargo-fuzz >/dev/null; }
