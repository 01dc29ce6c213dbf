#!/usr/bin/env bash
# shellcheck disable=SC2054 # commas inside -Wl, options are not separators
# Code size of one JSON Lines record parser (and writer) on Cortex-M55:
# serde-json-core vs a hand-written flat-object parser.  Each variant is built
# as a thumbv8m.main-none-eabihf staticlib (lto, codegen-units=1, panic=abort,
# opt-level "s" and "z"), linked into a minimal no-OS image with
# --gc-sections, and the library's share is read from the map file.
#
#   tests/bench/json-alternatives/measure.sh            # prints the table
#   tests/bench/json-alternatives/measure.sh --markdown # the table for README.md
set -euo pipefail
cd "$(dirname "$0")" || exit 1

TARGET=thumbv8m.main-none-eabihf
OUT=target/measure
MD=0
[[ "${1:-}" == "--markdown" ]] && MD=1

if ! command -v arm-none-eabi-gcc >/dev/null; then
    apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi >&2
fi
if ! rustup target list --installed | grep -qx "$TARGET"; then
    rustup target add "$TARGET" >&2
fi

mkdir -p "$OUT"
CFLAGS=(-mcpu=cortex-m55 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16 -Os
        -ffunction-sections -fdata-sections)
LDFLAGS=(-nostartfiles -nostdlib -Wl,--gc-sections -Wl,-e,Reset_Handler
         -Wl,--no-warn-rwx-segments -Wl,--no-warn-execstack)

row() { # variant profile what
    local variant=$1 profile=$2 what=$3 feats=$1 defs=()
    if [[ $what == parse+write ]]; then feats="$variant,write"; defs=(-DWITH_WRITE); fi
    cargo build -q --profile "$profile" --target "$TARGET" --no-default-features \
        --features "$feats" >&2
    local tag="$variant-$profile-$what"
    cp "target/$TARGET/$profile/libjson_alternatives.a" "$OUT/$tag.a"
    arm-none-eabi-gcc "${CFLAGS[@]}" "${defs[@]}" "${LDFLAGS[@]}" \
        -Wl,-Map="$OUT/$tag.map" c/image.c "$OUT/$tag.a" -lgcc -o "$OUT/$tag.elf"
    local share
    share=$(awk -v lib="$tag.a" -f map_share.awk "$OUT/$tag.map")
    local code=${share#code=}; code=${code%% *}
    local nb=${share##*code_nobuiltins=}
    local ram=${share#*ram=}; ram=${ram%% *}
    local opt=${profile/release-z/z}; opt=${opt/release/s}
    if ((MD)); then
        printf '| %s | %s | "%s" | %d | %d | %d |\n' "$variant" "$what" "$opt" "$code" "$nb" "$ram"
    else
        printf '%-13s %-12s %-3s %7d %15d %5d\n' "$variant" "$what" "$opt" "$code" "$nb" "$ram"
    fi
}

if ((MD)); then
    echo '| parser | measured | opt-level | .text+.rodata (B) | without compiler_builtins (B) | .data+.bss (B) |'
    echo '|---|---|---|---:|---:|---:|'
else
    printf '%-13s %-12s %-3s %7s %15s %5s\n' parser measured opt code code-no-builtin ram
fi
for what in parse parse+write; do
    for variant in hand sjc-escstr sjc-heapless; do
        for profile in release release-z; do
            row "$variant" "$profile" "$what"
        done
    done
done
