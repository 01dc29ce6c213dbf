#!/usr/bin/env bash
# insn_m33.sh — instructions per call of the claw_* functions on the emulated
# Cortex-M33 (qemu-system-arm -M mps2-an505), counted by qemu's TCG plugin
# tests/plugin/insn.c: the same calls, state and labels as the x86 counts
# of tests/bench/callgrind/harness.c under callgrind (docs/PERFORMANCE.md §4,
# docs/EMULATOR.md *Counting instructions*).
#
#   1. scripts/build_qemu_plugin.sh -> build/qemu-plugin/libinsn.so;
#   2. the M33 firmware's library: cargo rustc --release --crate-type
#      staticlib --features agent --target thumbv8m.main-none-eabi with
#      CARGO_TARGET_DIR=target/qemu (scripts/build_qemu.sh's build: the same
#      archive, rebuilt only when the code changed);
#   3. tests/bench/callgrind/harness.c itself, unchanged, built for the M33
#      (the firmware's flags: -mcpu=cortex-m33 -mfloat-abi=softfp
#      -mfpu=fpv5-sp-d16, -O2 as on the host) with
#        tests/bench/m33/valgrind/callgrind.h  each CALLGRIND_TOGGLE_COLLECT
#                                              one marker instruction
#        tests/bench/m33/port_ram.c            the port: files in RAM
#        tests/bench/m33/startup.c, m33.ld     reset, UART0, newlib's calls
#        tests/image/agent_ports.c             the agent's ports as stubs
#      and newlib -> target/m33-insn/harness-m33-calls.elf, and again with
#      -DPORT_MARKERS (each port call's body between two markers)
#      -> harness-m33-port.elf;
#   4. runs each twice: qemu-system-arm -M mps2-an505 -semihosting
#      -plugin libinsn.so,match=<call marker>,match=<port marker> -d plugin:
#      the plugin prints the instructions executed between consecutive
#      executions of each marker; UART0 carries the harness's READ lines
#      (label, bytes read);
#   5. tests/bench/m33/insn_summary.py pairs them: each call's
#      instructions from the first image, its port share from the second
#      (the same calls and bytes read required); the two runs must agree to
#      the instruction (else exit 1).
#
# Usage: scripts/insn_m33.sh     prints "M33<tab><label><tab><instructions><tab><of which
#                                in claw_port_*><tab><bytes read>" per call, then
#                                "TOTAL<tab><instructions of the run>";
#                                also in target/m33-insn/insn-m33.txt
# Environment:
#   BENTOCLAW_SKIP_CARGO=1   use the existing target/qemu archive
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT=$ROOT/target/m33-insn
V8=thumbv8m.main-none-eabi
LIB=$ROOT/target/qemu/$V8/release/libbentoclaw.a
ARCH_M33=(-mcpu=cortex-m33 -mthumb -mfloat-abi=softfp -mfpu=fpv5-sp-d16)
# The markers as qemu's disassembler (capstone) prints them: `mov r11, r11`
# brackets each measured call (tests/bench/m33/valgrind/callgrind.h),
# `mov r10, r10` the body of each claw_port_* function (tests/bench/m33/port_ram.c).
CALL_MARK="mov fp, fp"
PORT_MARK="mov sl, sl"

log() { printf 'insn_m33: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
ensure_pkgs gcc-arm-none-eabi binutils-arm-none-eabi libnewlib-arm-none-eabi python3 \
    || die "installing the Arm toolchain"
PLUGIN=$(scripts/build_qemu_plugin.sh | tail -n1)
[[ -f $PLUGIN ]] || die "no plugin library"

if [[ ${BENTOCLAW_SKIP_CARGO:-0} != 1 ]]; then
    [[ -x ${CARGO_HOME:-$HOME/.cargo}/bin/cargo ]] && PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
    command -v cargo >/dev/null || die "cargo not found (install Rust with rustup)"
    if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$V8"; then
        rustup target add "$V8" >&2
    fi
    log "cargo rustc --release --crate-type staticlib --features agent --target $V8 (CARGO_TARGET_DIR=target/qemu)"
    CARGO_TARGET_DIR=$ROOT/target/qemu cargo rustc --quiet --release --crate-type staticlib \
        --features agent --target "$V8" >&2
fi
[[ -f $LIB ]] || die "no $LIB"

mkdir -p "$OUT"
# Two images: "calls" counts the calls (no marker in the port), "port" has
# each claw_port_* body between two port markers (PORT_MARKERS) and gives
# the port's share of each call.
# build IMAGE [CFLAGS...]: -> $OUT/harness-m33-IMAGE.elf
build() {
    local elf=$OUT/harness-m33-$1.elf
    shift
    log "arm-none-eabi-gcc ${ARCH_M33[*]} -O2 $* tests/bench/callgrind/harness.c + tests/bench/m33 -> ${elf#"$ROOT"/}"
    arm-none-eabi-gcc "${ARCH_M33[@]}" -std=c11 -O2 -g -Wall -Wextra -Werror -ffunction-sections \
        -fdata-sections "$@" -Itests/bench/m33 -Iinclude -Itests/c -nostartfiles -T tests/bench/m33/m33.ld \
        -Wl,--gc-sections -Wl,--no-warn-rwx-segments -Wl,--no-warn-execstack -Wl,-Map="${elf%.elf}.map" \
        tests/bench/callgrind/harness.c tests/bench/m33/port_ram.c tests/bench/m33/startup.c \
        tests/image/agent_ports.c "$LIB" -o "$elf"
}
build calls
build port -DPORT_MARKERS

# Each marker must stand only where it is put: anywhere else, a delta would
# be cut in two (insn_summary.py would then fail on the count).
# marker_fns IMAGE REG: the functions of the image that hold `mov REG, REG`.
marker_fns() {
    arm-none-eabi-objdump -d --no-show-raw-insn -j .text "$OUT/harness-m33-$1.elf" |
        awk -v re="mov[[:space:]]+$2, $2\$" '/^[0-9a-f]+ <[^>]+>:$/ {fn = $2} $0 ~ re {print fn}' | sort -u | tr '\n' ' '
}
for image in calls port; do
    fns=$(marker_fns "$image" '(r11|fp)')
    [[ $fns == "<run>: " ]] || die "$image: the call marker (mov r11, r11) in: '${fns:-nothing}' (expected <run>: only)"
done
fns=$(marker_fns calls '(r10|sl)')
[[ -z $fns ]] || die "calls: a port marker (mov r10, r10) in: $fns"
fns=$(marker_fns port '(r10|sl)')
[[ -n $fns ]] || die "port: no port marker (mov r10, r10)"
for fn in $fns; do
    [[ $fn == "<claw_port_"*">:" ]] || die "port: the port marker (mov r10, r10) in $fn (expected claw_port_* only)"
done

# Each image twice; the four logs go to insn_summary.py per round.
for r in 1 2; do
    for image in calls port; do
        rm -f "$OUT/uart-$image.$r.txt" "$OUT/plugin-$image.$r.log"
        if ! timeout 600 qemu-system-arm -M mps2-an505 -display none -monitor none -semihosting \
            -serial file:"$OUT/uart-$image.$r.txt" \
            -plugin "$PLUGIN,match=${CALL_MARK//,/,,},match=${PORT_MARK//,/,,}" \
            -d plugin -D "$OUT/plugin-$image.$r.log" -kernel "$OUT/harness-m33-$image.elf" \
            >"$OUT/qemu-$image.$r.log" 2>&1; then
            tail -n 20 "$OUT/uart-$image.$r.txt" "$OUT/qemu-$image.$r.log" >&2 2>/dev/null || true
            die "the harness failed on the emulated M33 ($image, run $r; target/m33-insn/uart-$image.$r.txt)"
        fi
    done
    python3 tests/bench/m33/insn_summary.py "$OUT/uart-calls.$r.txt" "$OUT/plugin-calls.$r.log" \
        "$OUT/uart-port.$r.txt" "$OUT/plugin-port.$r.log" >"$OUT/insn.$r.txt" ||
        die "run $r: the logs do not pair up (target/m33-insn/)"
done
cmp -s "$OUT/insn.1.txt" "$OUT/insn.2.txt" ||
    { diff "$OUT/insn.1.txt" "$OUT/insn.2.txt" >&2 || true; die "two runs counted differently"; }
cp "$OUT/insn.1.txt" "$OUT/insn-m33.txt"
log "$(grep -c '^M33' "$OUT/insn-m33.txt") calls counted, the same in two runs"
cat "$OUT/insn-m33.txt"
