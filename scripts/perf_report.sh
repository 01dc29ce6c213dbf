#!/usr/bin/env bash
# shellcheck disable=SC2054,SC2016 # commas inside -W options; backquotes are Markdown
# Costs of bentoclaw, measured against the goals of issues 10, 12 and 22.
# This script builds and measures; its figures go to target/perf/figures.tsv
# and the measuring programs' own outputs beside it, and
# scripts/render_report.py checks them against the goals and writes
# docs/PERFORMANCE.md (its prose: docs/templates/PERFORMANCE.md). Rerun the
# renderer alone on the saved data:
#   python3 scripts/render_report.py perf target/perf/figures.tsv -o docs/PERFORMANCE.md
#
#  1. code and static RAM of libbentoclaw.a and of the MicroPython binding
#     (mpy/modbentoclaw.c, mpy/claw_port_vfs.c) in the
#     Cortex-M33 firmware (MPS2-AN505, build/qemu/firmware.map of
#     scripts/build_qemu.sh), the Cortex-M55 one (build/qemu-m55/) and the
#     vendor-ABI minimal image of tests/image/ (M33 flags); heap use;
#  2. worst-case stack depth of every exported function on thumbv8m, in
#     the default build (the vendor ABI) and with feature agent
#     (scripts/stack_report.py: -Z emit-stack-sizes + call graph;
#     scripts/stack_bounds.py: the same with indirect calls and recursion
#     bounded); the deepest calls the API allows on the board's 8 KiB
#     MicroPython stack, measured by stack painting on the emulated M33
#     (tests/qemu/test_stack_depth.py, issue 22);
#  3. bytes programmed and blocks erased on flash per ask(), remember(),
#     session_clear() on LittleFS, on the board's geometry and on 512-byte
#     blocks (tests/mpy/bench_flash.py on the unix port, with a backend);
#  4. instructions per call and per byte read on the host
#     (tests/bench/callgrind/harness.c under valgrind --tool=callgrind), and
#     of the same harness on the emulated M33 (scripts/insn_m33.sh: qemu's
#     instruction-counting plugin, built by scripts/build_qemu_plugin.sh);
#  5. the MicroPython GC heap bentoclaw takes (issue 22): held between
#     calls, the peak of a whole ask(), with 24 KiB free, on the M33 built
#     with the board's 64 KiB heap (tests/qemu/test_gc_heap.py on
#     build/qemu-64k) and on the unix port (tests/mpy/test_gc_heap.py).
#
#   scripts/perf_report.sh    # last line: RESULT: <n> passed, <m> failed
#
# Goals (scripts/goals.tsv, read by scripts/render_report.py): a goal that is met is
# enforced; a goal missed today has a ceiling (today's figure + about 5 %),
# prints a line "MISSED ..." and fails only when the figure goes over it.
# The document has no dates or host names: its figures change only when the
# code (or the toolchain) does. Work files go to target/perf/ (and
# target/stack/ for the nightly build).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
OUT=$ROOT/target/perf
mkdir -p "$OUT"
export CARGO_TERM_COLOR=never
export PATH="$HOME/.cargo/bin:$PATH"

# The board build: soft-float calling convention, as every CM33 object of the
# BENTO firmware (the M33 firmware of scripts/build_qemu.sh links it too; its
# M55 firmware links the hard-float option, thumbv8m.main-none-eabihf).
V8=thumbv8m.main-none-eabi
V8HF=thumbv8m.main-none-eabihf
# The M33 core that runs MicroPython on PSoC Edge (issue 12): the CM33 flags of
# the BENTO firmware, the same as scripts/build_qemu.sh's MPS2-AN505 board.
ARCH_M33=(-mcpu=cortex-m33 -mthumb -mfloat-abi=softfp -mfpu=fpv5-sp-d16)
HEAP_RE='^(malloc|free|calloc|realloc|_sbrk|sbrk|_malloc_r|_free_r|_calloc_r|_realloc_r|__rust_alloc|__rust_dealloc|__rust_realloc|__rust_alloc_zeroed|__rg_alloc)$'
BINDING_RE='/modbentoclaw.o|/claw_port_vfs.o'
MAP_PARTS=('lib=libbentoclaw.a(' "binding=$BINDING_RE" 'transport=claw_transport')
# The stack of two builds: the vendor ABI alone (the default features: the
# exports of claw_session.h and claw_safety.h) and feature `agent` (every
# export, claw_ext.h's too).
STACK_SETS=(default agent)
declare -A STACK_EXPORTS=(
    [default]="--exports include/claw_session.h --exports include/claw_safety.h"
    [agent]="--exports include/claw_session.h --exports include/claw_safety.h --exports include/claw_ext.h"
)

# The figures (scripts/render_report.py's FIGURES): fig, pass and fail write
# rows; the renderer makes every check on the figures and counts them all.
FIG=$OUT/figures.tsv
: >"$FIG"
# shellcheck source=scripts/report_lib.sh
source scripts/report_lib.sh
log() { echo "== $*"; }
fig v8 "$V8"
fig v8hf "$V8HF"
fig arch_m33 "${ARCH_M33[*]}"
fig binding_re "$BINDING_RE"

# ---- tools ------------------------------------------------------------------------
need_pkgs=()
command -v arm-none-eabi-gcc >/dev/null || need_pkgs+=(gcc-arm-none-eabi binutils-arm-none-eabi)
[[ -d /usr/lib/arm-none-eabi/newlib || -d /usr/lib/arm-none-eabi/lib ]] || need_pkgs+=(libnewlib-arm-none-eabi)
command -v valgrind >/dev/null || need_pkgs+=(valgrind)
[[ -f /usr/include/valgrind/callgrind.h ]] || need_pkgs+=(valgrind)
command -v cc >/dev/null || need_pkgs+=(gcc libc6-dev)
command -v python3 >/dev/null || need_pkgs+=(python3)
if ((${#need_pkgs[@]})); then
    log "installing ${need_pkgs[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >&2 ||
        { apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >&2; } ||
        fail "could not install ${need_pkgs[*]}"
fi
rustup target list --installed | grep -qx "$V8" || rustup target add "$V8" >&2 || fail "rustup target add $V8"
if ! cargo +nightly --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal --component rust-src >&2 || fail "nightly toolchain"
fi
NIGHTLY_SYSROOT=$(rustc +nightly --print sysroot 2>/dev/null)
[[ -d $NIGHTLY_SYSROOT/lib/rustlib/src/rust/library/core ]] ||
    rustup component add rust-src --toolchain nightly >&2 || fail "nightly rust-src"

# =====================================================================================
# 1. Code and static RAM
# =====================================================================================
log "1. sizes: cargo rustc --release --crate-type staticlib --target $V8 (vendor ABI, default features)"
rm -f "$OUT"/share-*.txt
if cargo rustc -j2 --release --crate-type staticlib --target "$V8" >"$OUT/cargo-v8m.log" 2>&1; then
    fig min_built 1
    cp "target/$V8/release/libbentoclaw.a" "$OUT/libbentoclaw.a"
    if arm-none-eabi-gcc "${ARCH_M33[@]}" -std=c11 -Wall -Wextra -Werror -Os -ffunction-sections \
        -fdata-sections -Iinclude -nostartfiles -Wl,--gc-sections -T tests/image/image.ld \
        -Wl,--no-warn-rwx-segments -Wl,--no-warn-execstack -Wl,-Map="$OUT/image-m33.map" \
        tests/image/image.c "$OUT/libbentoclaw.a" -o "$OUT/image-m33.elf" >"$OUT/link-m33.log" 2>&1; then
        fig min_linked 1
        python3 scripts/map_share.py "$OUT/image-m33.map" 'lib=libbentoclaw.a(' >"$OUT/share-image-m33.txt"
    else
        fail "minimal image link (target/perf/link-m33.log)"
        sed 's/^/    /' "$OUT/link-m33.log" | head -20
    fi
    fig heap_refs "$( {
        arm-none-eabi-nm -u "$OUT/libbentoclaw.a" 2>/dev/null | awk '{print $NF}'
        [[ -f $OUT/image-m33.elf ]] && arm-none-eabi-nm "$OUT/image-m33.elf" | awk '{print $NF}'
    } | grep -E "$HEAP_RE" | sort -u | tr '\n' ' ' | sed 's/ $//')"
else
    fail "cargo build for $V8 (target/perf/cargo-v8m.log)"
fi

# The firmware images (MicroPython's qemu port with bentoclaw): M33 and M55.
log "1. firmware: scripts/build_qemu.sh (m33: build/qemu, m55: build/qemu-m55)"
FW_BUILD_OK=0
if scripts/build_qemu.sh >"$OUT/build_qemu.log" 2>&1; then
    FW_BUILD_OK=1
    # (A map left by an earlier, failed build would describe other code.)
    for board in m33:build/qemu m55:build/qemu-m55; do
        dir=${board#*:} board=${board%%:*}
        [[ -f $dir/firmware.map ]] || continue
        python3 scripts/map_share.py "$dir/firmware.map" "${MAP_PARTS[@]}" >"$OUT/share-$board.txt"
        fig "fw_$board" 1
    done
    [[ -f build/qemu/firmware.elf ]] && fig m33_text "$(arm-none-eabi-size -A build/qemu/firmware.elf |
        awk '$1 ~ /^\.(text|rodata|ARM)/ {s += $2} END {print s + 0}')"
else
    fail "scripts/build_qemu.sh (target/perf/build_qemu.log)"
    tail -n 15 "$OUT/build_qemu.log" | sed 's/^/    /'
fi

# =====================================================================================
# 2. Stack depth
# =====================================================================================
# Both builds go to target/stack/, one after the other; each archive is
# analysed before the next build replaces it.
log "2. stack: CARGO_TARGET_DIR=target/stack RUSTFLAGS=\"-Z emit-stack-sizes\" cargo +nightly rustc -Z build-std=core --features <${STACK_SETS[*]}>"
STACK_LIB=$ROOT/target/stack/$V8/release/libbentoclaw.a
# Any recursion through serde-json-core is bounded by its MAX_NESTING (one
# round per level of arrays or objects); the analysis is told that bound.
NESTING=$(sed -nE 's/^pub const MAX_NESTING: u8 = ([0-9]+);.*/\1/p' src/vendor/serde-json-core/src/de/mod.rs)
fig nesting "$NESTING"
[[ $NESTING =~ ^[0-9]+$ ]] || NESTING=1
fig nightly "$(rustc +nightly --version | cut -d' ' -f1-2)"
for set in "${STACK_SETS[@]}"; do
    read -ra hdrs <<<"${STACK_EXPORTS[$set]}"
    fig "exports_$set" "${STACK_EXPORTS[$set]}"
    err=$OUT/stack-$set.err
    if ! CARGO_TARGET_DIR=$ROOT/target/stack RUSTFLAGS="-Z emit-stack-sizes" \
        cargo +nightly rustc -j2 --release --crate-type staticlib --features "$set" --target "$V8" -Z build-std=core \
        >"$OUT/cargo-stack-$set.log" 2>&1; then
        fail "stack ($set): nightly build with -Z emit-stack-sizes (target/perf/cargo-stack-$set.log)"
        tail -n 15 "$OUT/cargo-stack-$set.log" | sed 's/^/    /'
    elif python3 scripts/stack_report.py "$STACK_LIB" "${hdrs[@]}" >"$OUT/stack-$set.txt" 2>"$err" &&
        python3 scripts/stack_bounds.py "$STACK_LIB" "${hdrs[@]}" --nesting "$NESTING" \
            >"$OUT/stack-bounds-$set.txt" 2>>"$err"; then
        fig "stack_ok_$set" 1
    else
        fail "stack ($set): scripts/stack_report.py or scripts/stack_bounds.py (target/perf/stack-$set.err)"
        sed 's/^/    /' "$err" | tail -n 10
    fi
done
# Cross-check on the shipped stable archive: no .stack_sizes there, so every
# frame is read from the SP decrements of the code (same call graph method).
# That archive has the default features: the vendor ABI.
read -ra hdrs <<<"${STACK_EXPORTS[agent]}"
python3 scripts/stack_report.py "$OUT/libbentoclaw.a" "${hdrs[@]}" >"$OUT/stack-stable.txt" 2>&1 || true

# The deepest calls on the board's stack: tests/qemu/test_stack_depth.py in
# the M33 firmware built in §1 (8 KiB region, MicroPython's limit 8 KiB - 512),
# its STACK-DEEP/STACK-NEAR lines.
log "2. board stack: python3 tests/qemu/run.py --board m33 test_stack_depth"
rm -rf "$OUT/qemu-stack"
if ((FW_BUILD_OK)) &&
    python3 tests/qemu/run.py --board m33 --log-dir "$OUT/qemu-stack" test_stack_depth \
        >"$OUT/qemu-stack.txt" 2>&1 && grep -aq '^STACK-DEEP ' "$OUT/qemu-stack/test_stack_depth.log"; then
    fig bstack_ok 1
    pass "board stack: tests/qemu/test_stack_depth.py passed on the emulated M33"
else
    fail "board stack: tests/qemu/test_stack_depth.py (target/perf/qemu-stack.txt, target/perf/qemu-stack/)"
    tail -n 15 "$OUT/qemu-stack.txt" | sed 's/^/    /'
fi

# =====================================================================================
# 3. Flash: bytes programmed, blocks erased (MicroPython unix port, LittleFS on a
#    counting RAM block device)
# =====================================================================================
# name|mount|workload and configuration|environment of tests/mpy/bench_flash.py
# The BENTO board's mount is the bench's default (256 KiB blocks, progsize
# and readsize 512, 208 blocks; 1,000 exchanges and 1,000 remember()s per
# store: issue 22's goals). The other workloads run 100 exchanges without
# remember(); the upstream port's mount (4 KiB blocks, progsize 256,
# readsize 4096: issue 12's goals) and the 512 B mount 100 of each.
FLASH_CONFIGS=(
    "bento-short|BENTO|short, default configuration|"
    "bento-cbd|BENTO|short, \`compact_before_drop=True\`|BENCH_EXCHANGES=100 BENCH_SETS=0 BENCH_COMPACT_BEFORE_DROP=1"
    "bento-long|BENTO|long, default configuration|BENCH_EXCHANGES=100 BENCH_SETS=0 BENCH_WORKLOAD=long"
    "bento-full|BENTO|full, default configuration|BENCH_EXCHANGES=100 BENCH_SETS=0 BENCH_WORKLOAD=full"
    "upstream-short|upstream|short, default configuration|BENCH_BLOCK=4096 BENCH_PROGSIZE=256 BENCH_READSIZE=4096 BENCH_BLOCKS=128 BENCH_EXCHANGES=100 BENCH_SETS=100"
    "b512-short|512|short, default configuration|BENCH_BLOCK=512 BENCH_PROGSIZE=32 BENCH_READSIZE=32 BENCH_BLOCKS=256 BENCH_EXCHANGES=100 BENCH_SETS=100"
)
for cfg in "${FLASH_CONFIGS[@]}"; do fig flash_config "$cfg"; done
fig mount_BENTO "256 KiB blocks, progsize 512, readsize 512 (cache 2048 B, inline limit 1,022 B), 208 blocks"
fig mount_upstream "4 KiB blocks, progsize 256, readsize 4096, 128 blocks"
fig mount_512 "512 B blocks, progsize 32, readsize 32, 256 blocks"
log "3. flash: scripts/build_micropython.sh, tests/mpy/bench_flash.py with mpy/examples/backend.py"
MPY=$ROOT/build/micropython/micropython
FLASH_OK=0
if scripts/build_micropython.sh >"$OUT/build_micropython.log" 2>&1 && [[ -x $MPY ]]; then
    work=$(mktemp -d)
    backend_pid=""
    cleanup() {
        if [[ -n $backend_pid ]]; then
            kill -TERM "$backend_pid" 2>/dev/null
            wait "$backend_pid" 2>/dev/null
        fi
        exec 7>&- 2>/dev/null
        rm -rf "$work"
    }
    trap cleanup EXIT
    # As scripts/test_mpy.sh: the backend exits on EOF of a FIFO only this
    # script holds open (fd 7), so it cannot outlive the report.
    mkfifo "$work/keepalive"
    exec 7<>"$work/keepalive"
    /usr/bin/python3 mpy/examples/backend.py --port 0 --stdin-exit --quiet <"$work/keepalive" \
        >"$work/backend.out" 2>"$work/backend.err" 7>&- &
    backend_pid=$!
    port=""
    # Up to 30 s: CPython may start slowly on a loaded machine.
    for _ in $(seq 1 600); do
        port=$(awk '/^PORT [0-9]+$/ {print $2; exit}' "$work/backend.out")
        [[ -n $port ]] && break
        kill -0 "$backend_pid" 2>/dev/null || break
        sleep 0.05
    done
    if [[ -z $port ]]; then
        fail "backend did not start"
        sed 's/^/    /' "$work/backend.err"
    else
        FLASH_OK=1
        # run_bench NAME ENVS: one run of the bench, its output in flash-NAME.txt.
        run_bench() {
            # shellcheck disable=SC2086 # envs is a list of NAME=value words
            (cd "$ROOT" && env $2 BENTOCLAW_PORT="$port" timeout 1200 \
                "$MPY" -X heapsize=80M tests/mpy/bench_flash.py) >"$OUT/flash-$1.txt" 2>&1 7>&- </dev/null
        }
        # The first configuration (1,000 exchanges, 3,000 remember()s) takes
        # about as long as all the others: it runs beside them, on two cores.
        declare -A bench_pid=()
        for i in "${!FLASH_CONFIGS[@]}"; do
            IFS='|' read -r name _ _ envs <<<"${FLASH_CONFIGS[$i]}"
            if ((i == 0)); then
                run_bench "$name" "$envs" &
                bench_pid[$name]=$!
            else
                run_bench "$name" "$envs"
                bench_pid[$name]=""
            fi
        done
        for cfg in "${FLASH_CONFIGS[@]}"; do
            IFS='|' read -r name _ _ _ <<<"$cfg"
            if { [[ -z ${bench_pid[$name]} ]] || wait "${bench_pid[$name]}"; } &&
                grep -q '^BENCH-RESULT ok' "$OUT/flash-$name.txt"; then
                pass "flash bench ($name): the files read back hold the data"
            else
                fail "flash bench ($name) (target/perf/flash-$name.txt)"
                tail -n 15 "$OUT/flash-$name.txt" | sed 's/^/    /'
                FLASH_OK=0
            fi
        done
    fi
    cleanup
    trap - EXIT
else
    fail "scripts/build_micropython.sh (target/perf/build_micropython.log)"
fi
((FLASH_OK)) && fig flash_ok 1

# =====================================================================================
# 4. Instruction counts (callgrind, host build) and the emulated M33
# =====================================================================================
log "4. callgrind: cargo build --release --features agent; tests/bench/callgrind/harness.c under valgrind"
rm -f "$OUT/callgrind.txt" "$OUT/insn-m33.txt"
if cargo build -j2 --release --features agent >"$OUT/cargo-host.log" 2>&1 &&
    cc -std=c11 -O2 -g -Wall -Wextra -Werror -Iinclude -Itests/c tests/bench/callgrind/harness.c \
        tests/c/port_posix.c target/release/libbentoclaw.a -Wl,--gc-sections -Wl,-z,now \
        -lpthread -ldl -lm -o "$OUT/harness" >"$OUT/harness-build.log" 2>&1; then
    rm -f "$OUT"/callgrind.out*
    if valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$OUT/callgrind.out" \
        "$OUT/harness" >"$OUT/callgrind.log" 2>&1; then
        python3 tests/bench/callgrind/cg_summary.py --read "$OUT/callgrind.log" \
            "$OUT"/callgrind.out.* >"$OUT/callgrind.txt"
        fig cg_ran 1
    else
        fail "harness under callgrind (target/perf/callgrind.log)"
        tail -n 15 "$OUT/callgrind.log" | sed 's/^/    /'
    fi
else
    fail "host build or harness build (target/perf/cargo-host.log, harness-build.log)"
    tail -n 15 "$OUT/harness-build.log" 2>/dev/null | sed 's/^/    /'
fi

# The same calls on the emulated M33 (scripts/insn_m33.sh): harness.c built
# for the Cortex-M33 with a port in RAM, run on qemu-system-arm -M
# mps2-an505 under qemu's instruction-counting plugin tests/plugin/insn.c
# (built from Debian's qemu source by scripts/build_qemu_plugin.sh).
log "4. emulated M33: scripts/insn_m33.sh (qemu's tests/plugin/insn.c from Debian's qemu source)"
fig qemu_ver "$(qemu-system-arm --version 2>/dev/null | sed -nE '1s/^QEMU emulator version ([^ ]+).*/\1/p')"
if scripts/insn_m33.sh >"$OUT/insn-m33.txt" 2>"$OUT/insn-m33.log"; then
    fig m33_ran 1
else
    fail "scripts/insn_m33.sh (target/perf/insn-m33.log)"
    tail -n 15 "$OUT/insn-m33.log" | sed 's/^/    /'
fi
# (after the run: scripts/build_qemu_plugin.sh fetched the source)
fig qemu_plugin_api "$(sed -nE 's/^#define QEMU_PLUGIN_VERSION ([0-9]+).*/\1/p' \
    build/qemu-src/qemu/include/qemu/qemu-plugin.h 2>/dev/null)"

# =====================================================================================
# 5. The GC heap (issue 22)
# =====================================================================================
# tests/qemu/test_gc_heap.py on the M33 with the board's 64 KiB heap, and the
# same code on the unix port: "HEAP <name> <bytes>" lines.
log "5. GC heap: scripts/build_qemu.sh m33-64k, tests/qemu/run.py --board m33-64k test_gc_heap; the unix port"
rm -f "$OUT/gc-heap/test_gc_heap.log" "$OUT/gc-heap-unix.log"
if scripts/build_qemu.sh m33-64k >"$OUT/build_qemu_64k.log" 2>&1 &&
    python3 tests/qemu/run.py --board m33-64k --log-dir "$OUT/gc-heap" test_gc_heap >"$OUT/gc-heap.txt" 2>&1; then
    pass "GC heap: tests/qemu/test_gc_heap.py on the M33 with a 64 KiB heap (target/perf/gc-heap/)"
else
    fail "GC heap: tests/qemu/test_gc_heap.py on the M33 with a 64 KiB heap (target/perf/gc-heap.txt)"
    tail -n 15 "$OUT/gc-heap.txt" | sed 's/^/    /'
fi
if scripts/test_mpy.sh --no-build test_gc_heap >"$OUT/gc-heap-unix.txt" 2>&1; then
    pass "GC heap: tests/mpy/test_gc_heap.py on the unix port"
else
    fail "GC heap: tests/mpy/test_gc_heap.py on the unix port (target/perf/gc-heap-unix.txt)"
fi
cp build/test-mpy/test_gc_heap.log "$OUT/gc-heap-unix.log" 2>/dev/null

# =====================================================================================
# docs/PERFORMANCE.md: the checks and the document
# =====================================================================================
fig rustc "$(rustc --version | cut -d' ' -f1-2)"
fig gcc "$(arm-none-eabi-gcc -dumpversion)"
fig valgrind "$(valgrind --version)"
MPY_VER=$(awk -F'"' '/MICROPY_VERSION_STRING/ {print $2; exit}' \
    build/micropython-src/micropython-*/py/mpconfig.h 2>/dev/null)
fig mpy_ver "${MPY_VER:-1.25.0}"
python3 scripts/render_report.py perf "$FIG" -o docs/PERFORMANCE.md
