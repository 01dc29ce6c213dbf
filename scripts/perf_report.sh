#!/usr/bin/env bash
# shellcheck disable=SC2054,SC2016 # commas inside -W options; backquotes are Markdown
# Costs of bentoclaw, measured and tabled: writes docs/PERFORMANCE.md.
#
#  1. code and static RAM of libbento_mpy.a and of the MicroPython binding
#     (mpy/modbentoclaw.c + mpy/claw_port_vfs.c) in the Cortex-M55 firmware
#     image (build/qemu/firmware.map of scripts/build_qemu.sh) and in the
#     minimal image of tests/image/; heap use;
#  2. worst-case stack depth of the 22 exported functions on thumbv8m
#     (scripts/stack_report.py: -Z emit-stack-sizes + call graph);
#  3. bytes programmed to flash per ask(), remember(), session_clear() on
#     LittleFS (tests/mpy/bench_flash.py on the unix port, with a backend);
#  4. instruction counts of the exported functions on the host
#     (tests/bench/callgrind/harness.c under valgrind --tool=callgrind).
#
#   scripts/perf_report.sh    # last line: RESULT: <n> passed, <m> failed
#
# Exits non-zero when a goal is missed. The document has no dates or host
# names: its figures change only when the code (or the toolchain) does.
# Work files go to target/perf/ (and target/stack/ for the nightly build).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
OUT=$ROOT/target/perf
mkdir -p "$OUT"
export CARGO_TERM_COLOR=never
export PATH="$HOME/.cargo/bin:$PATH"

CODE_GOAL=$((12 * 1024))
RAM_GOAL=$((4 * 1024))
STACK_GOAL=1024
FLASH_FACTOR=3
V8=thumbv8m.main-none-eabihf
HEAP_RE='^(malloc|free|calloc|realloc|_sbrk|sbrk|_malloc_r|_free_r|_calloc_r|_realloc_r|__rust_alloc|__rust_dealloc|__rust_realloc|__rust_alloc_zeroed|__rg_alloc)$'
# The VfsLfs2 mount options measured (name|env for bench_flash.py|what it is).
FLASH_CONFIGS=(
    "default|BENCH_PROGSIZE=32 BENCH_READSIZE=32 BENCH_LOOKAHEAD=32 BENCH_MTIME=1|\`vfs.VfsLfs2(bdev)\`: MicroPython's defaults (readsize 32, progsize 32, lookahead 32, mtime on), as tests/mpy/claw_rig.py and the esp32/esp8266 ports mount"
    "qspi256|BENCH_PROGSIZE=256 BENCH_READSIZE=32 BENCH_LOOKAHEAD=32 BENCH_MTIME=1|\`vfs.VfsLfs2(bdev, progsize=256)\`: a 256-byte QSPI NOR page, as the rp2, mimxrt, alif and zephyr ports' \`_boot.py\` mount"
    "nomtime|BENCH_PROGSIZE=32 BENCH_READSIZE=32 BENCH_LOOKAHEAD=32 BENCH_MTIME=0|\`vfs.VfsLfs2(bdev, mtime=False)\`: the defaults without the 8-byte modification-time attribute MicroPython stores per file"
)

passed=0
failed=0
pass() { echo "PASS $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
status() { [[ $(status_le "$@") == PASS ]] && echo PASS || echo "**FAIL**"; }
sum2() { if is_count "$1" && is_count "$2"; then echo $((10#$1 + 10#$2)); else echo -; fi; }
log() { echo "== $*"; }
# goal_le, figure_ok, status_le: an empty or unparsable figure fails.
# shellcheck source=scripts/figures.sh
source scripts/figures.sh

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
log "1. sizes: cargo rustc --release --crate-type staticlib --target $V8"
SIZE_OK=1
if ! cargo rustc -j2 --release --crate-type staticlib --target "$V8" >"$OUT/cargo-v8m.log" 2>&1; then
    fail "cargo build for $V8 (target/perf/cargo-v8m.log)"
    SIZE_OK=0
fi
LIB8=$ROOT/target/$V8/release/libbento_mpy.a
ARCH_V8=(-mcpu=cortex-m55 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16)
MIN_CODE=- MIN_RAM=- MIN_DATA=- MIN_BUILTINS=-
if ((SIZE_OK)); then
    cp "$LIB8" "$OUT/libbento_mpy.a"
    if arm-none-eabi-gcc "${ARCH_V8[@]}" -std=c11 -Wall -Wextra -Werror -Os -ffunction-sections \
        -fdata-sections -Iinclude -nostartfiles -Wl,--gc-sections -T tests/image/image.ld \
        -Wl,--no-warn-rwx-segments -Wl,--no-warn-execstack -Wl,-Map="$OUT/image-v8m.map" \
        tests/image/image.c "$OUT/libbento_mpy.a" -o "$OUT/image-v8m.elf" >"$OUT/link-v8m.log" 2>&1; then
        MIN_CODE="" MIN_RAM="" MIN_DATA="" MIN_BUILTINS=""
        read -r MIN_CODE MIN_RAM MIN_DATA MIN_BUILTINS < <(python3 scripts/map_share.py \
            "$OUT/image-v8m.map" 'lib=libbento_mpy.a(' |
            sed -nE 's/^SHARE lib code=([0-9]+) ram=([0-9]+) data=([0-9]+) builtins=([0-9]+)$/\1 \2 \3 \4/p')
        goal_le "library code" "$MIN_CODE" "$CODE_GOAL" " B" " (minimal image)"
        goal_le "library static RAM" "$MIN_RAM" "$RAM_GOAL" " B" " (minimal image)"
        figure_ok "library .data (minimal image)" "$MIN_DATA"
        figure_ok "library compiler_builtins code (minimal image)" "$MIN_BUILTINS"
        for v in MIN_CODE MIN_RAM MIN_DATA MIN_BUILTINS; do [[ -n ${!v} ]] || printf -v "$v" '%s' -; done
    else
        fail "minimal image link (target/perf/link-v8m.log)"
        sed 's/^/    /' "$OUT/link-v8m.log" | head -20
    fi
    heap_refs=$( {
        arm-none-eabi-nm -u "$OUT/libbento_mpy.a" 2>/dev/null | awk '{print $NF}'
        [[ -f $OUT/image-v8m.elf ]] && arm-none-eabi-nm "$OUT/image-v8m.elf" | awk '{print $NF}'
    } | grep -E "$HEAP_RE" | sort -u | tr '\n' ' ')
    if [[ -z $heap_refs ]]; then
        HEAP=0
        pass "heap 0: no malloc/free/_sbrk/__rust_alloc referenced by the library"
    else
        HEAP="referenced: $heap_refs"
        fail "heap functions referenced: $heap_refs"
    fi
else
    HEAP="not measured"
fi

# The firmware image (MicroPython qemu port, mps3-an547, with bentoclaw).
FW_MAP=$ROOT/build/qemu/firmware.map
FW_NOTE=""
FW_BUILD_OK=1
if [[ -x scripts/build_qemu.sh ]]; then
    log "1. firmware: scripts/build_qemu.sh"
    if ! scripts/build_qemu.sh >"$OUT/build_qemu.log" 2>&1; then
        # A map left by an earlier build would describe other code: not used.
        FW_BUILD_OK=0
        fail "scripts/build_qemu.sh (target/perf/build_qemu.log)"
        tail -n 15 "$OUT/build_qemu.log" | sed 's/^/    /'
    fi
fi
FW_LIB_CODE=- FW_LIB_RAM=- FW_LIB_DATA=- FW_MOD_CODE=- FW_MOD_RAM=- FW_MOD_DATA=- FW_TR_CODE=- FW_TR_RAM=-
FW_TOTAL_TEXT=- FW=0
if ((FW_BUILD_OK)) && [[ -f $FW_MAP ]]; then
    FW=1
    while read -r _ name code ram data _; do
        case $name in
            lib) FW_LIB_CODE=${code#code=} FW_LIB_RAM=${ram#ram=} FW_LIB_DATA=${data#data=} ;;
            binding) FW_MOD_CODE=${code#code=} FW_MOD_RAM=${ram#ram=} FW_MOD_DATA=${data#data=} ;;
            transport) FW_TR_CODE=${code#code=} FW_TR_RAM=${ram#ram=} ;;
        esac
    done < <(python3 scripts/map_share.py "$FW_MAP" 'lib=libbento_mpy.a(' \
        'binding=/modbentoclaw.o|/claw_port_vfs.o' 'transport=claw_transport')
    if [[ -f build/qemu/firmware.elf ]]; then
        FW_TOTAL_TEXT=$(arm-none-eabi-size -A build/qemu/firmware.elf |
            awk '$1 ~ /^\.(text|rodata|ARM)/ {s += $2} END {print s + 0}')
    fi
    if ! is_count "$FW_LIB_CODE" || ((10#$FW_LIB_CODE == 0)); then
        fail "firmware map names no input from libbento_mpy.a (build/qemu/firmware.map): figure 'library code (firmware)' is '$FW_LIB_CODE'"
    else
        # The firmware links the library with the features the module uses
        # (recall, lasting): their cost is reported, the 12 KiB code budget
        # is the vendor-ABI build's (minimal image above, docs/SIZE.md).
        log "library code in the firmware, features agent: $FW_LIB_CODE B (info)"
        goal_le "library static RAM" "$FW_LIB_RAM" "$RAM_GOAL" " B" " (firmware)"
    fi
    figure_ok "binding code (firmware)" "$FW_MOD_CODE"
else
    if ((FW_BUILD_OK)); then
        FW_NOTE="pending: build/qemu/firmware.map does not exist yet (scripts/build_qemu.sh)"
    else
        FW_NOTE="not measured: scripts/build_qemu.sh failed"
    fi
    echo "NOTE firmware image $FW_NOTE"
    if [[ -f build/qemu/obj/mpy/modbentoclaw.o ]]; then
        read -r OBJ_CODE OBJ_RAM < <(arm-none-eabi-size -A build/qemu/obj/mpy/modbentoclaw.o \
            build/qemu/obj/mpy/claw_port_vfs.o | awk '$1 ~ /^\.(text|rodata)/ {c += $2}
            $1 ~ /^\.(data|bss)/ {r += $2} END {print c + 0, r + 0}')
        FW_NOTE+="; the objects before --gc-sections hold code $OBJ_CODE B, static RAM $OBJ_RAM B"
    fi
fi

# =====================================================================================
# 2. Stack depth
# =====================================================================================
log "2. stack: CARGO_TARGET_DIR=target/stack RUSTFLAGS=\"-Z emit-stack-sizes\" cargo +nightly rustc -Z build-std=core"
STACK_LIB=$ROOT/target/stack/$V8/release/libbento_mpy.a
STACK_OK=0
if CARGO_TARGET_DIR=$ROOT/target/stack RUSTFLAGS="-Z emit-stack-sizes" \
    cargo +nightly rustc -j2 --release --crate-type staticlib --features agent --target "$V8" -Z build-std=core \
    >"$OUT/cargo-stack.log" 2>&1; then
    if python3 scripts/stack_report.py "$STACK_LIB" --exports include/claw_session.h \
        --exports include/claw_safety.h --exports include/claw_ext.h >"$OUT/stack.txt" 2>"$OUT/stack.err"; then
        STACK_OK=1
    else
        fail "scripts/stack_report.py (target/perf/stack.err)"
        sed 's/^/    /' "$OUT/stack.err" | tail -n 10
    fi
else
    fail "nightly build with -Z emit-stack-sizes (target/perf/cargo-stack.log)"
    tail -n 15 "$OUT/cargo-stack.log" | sed 's/^/    /'
fi
# Cross-check on the shipped stable archive: no .stack_sizes there, so every
# frame is read from the SP decrements of the code (same call graph method).
python3 scripts/stack_report.py "$OUT/libbento_mpy.a" --exports include/claw_session.h \
    --exports include/claw_safety.h --exports include/claw_ext.h >"$OUT/stack-stable.txt" 2>&1 || true
NIGHTLY=$(rustc +nightly --version | cut -d' ' -f1-2)
if ((STACK_OK)); then
    n_exports=0
    while read -r _ fn depth _; do
        n_exports=$((n_exports + 1))
        goal_le "stack $fn" "$depth" "$STACK_GOAL" " B"
    done < <(grep '^STACK ' "$OUT/stack.txt")
    n_declared=$(grep -hcE '^[a-z_0-9 ]+\*? ?claw_[a-z_]+\(' include/claw_session.h include/claw_safety.h include/claw_ext.h |
        awk '{s += $1} END {print s + 0}')
    if ((n_declared == 0)); then fail "stack: no claw_* declaration found in include/ (figure 'declared exports' is 0)"
    elif ((n_exports == n_declared)); then pass "stack: all $n_exports exports analysed"
    else fail "stack: $n_exports of $n_declared exports analysed"; fi
    grep -q '^MISSING' "$OUT/stack.txt" && fail "stack: exports missing: $(grep '^MISSING' "$OUT/stack.txt" | tr '\n' ' ')"
    # A field missing from the SUMMARY line is empty: goal_eq fails it.
    summary=$(grep -m1 '^SUMMARY' "$OUT/stack.txt")
    ind=$(sed -nE 's/.* indirect=([0-9]+).*/\1/p' <<<"$summary")
    rec=$(sed -nE 's/.* recursion=([0-9]+).*/\1/p' <<<"$summary")
    mism=$(sed -nE 's/.* mismatches=([0-9]+).*/\1/p' <<<"$summary")
    norec=$(sed -nE 's/.* without_record=([0-9]+).*/\1/p' <<<"$summary")
    goal_eq "stack: indirect calls" "$ind" 0 "stack: no indirect call reachable" \
        "stack: $ind unresolved indirect calls"
    goal_eq "stack: recursion" "$rec" 0 "stack: no recursion" \
        "stack: recursion: $(grep '^RECURSION' "$OUT/stack.txt" | tr '\n' ' ')"
    goal_eq "stack: mismatches" "$mism" 0 "stack: .stack_sizes agree with the SP decrements of every function" \
        "stack: $mism frames disagree with the code's SP decrements"
    goal_eq "stack: without_record" "$norec" 0 "stack: every reachable function has a .stack_sizes record" \
        "stack: $norec functions without a .stack_sizes record (frames read from the code)"
fi

# =====================================================================================
# 3. Flash bytes (MicroPython unix port, LittleFS on a counting block device)
# =====================================================================================
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
        for cfg in "${FLASH_CONFIGS[@]}"; do
            IFS='|' read -r name envs _ <<<"$cfg"
            # shellcheck disable=SC2086 # envs is a list of NAME=value words
            if (cd "$ROOT" && env $envs BENTOCLAW_PORT="$port" BENCH_EXCHANGES=100 timeout 120 \
                "$MPY" tests/mpy/bench_flash.py) >"$OUT/flash-$name.txt" 2>&1 7>&- </dev/null &&
                grep -q '^BENCH-RESULT ok' "$OUT/flash-$name.txt"; then
                pass "flash bench ($name mount): line model matches the files"
            else
                fail "flash bench ($name mount) (target/perf/flash-$name.txt)"
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

# bench <config> <op> <field> -> value of field= on the "BENCH <op> ..." line
bench() {
    awk -v op="$2" -v f="$3" '$1 == "BENCH" && $2 == op {
        for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == f) print kv[2] } }' \
        "$OUT/flash-$1.txt" 2>/dev/null
}
# ratio <a> <b> -> a/b with two decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
per() { awk -v a="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.1f", a / n; else print "-" }'; }
within() { awk -v a="$1" -v b="$2" -v k="$FLASH_FACTOR" 'BEGIN { exit !(b > 0 && a <= k * b) }'; }

if ((FLASH_OK)); then
    # The goal is the issue's: the average over the ask() workload. A single
    # remember() is reported next to its floor (see the note in the doc).
    for op in ask; do
        p=$(bench default "$op" programmed)
        f=$(bench default "$op" floor)
        figure_ok "flash $op programmed (default mount)" "$p" || continue
        figure_ok "flash $op floor (default mount)" "$f" || continue
        if within "$p" "$f"; then
            pass "flash $op: $(ratio "$p" "$f")x the floor <= ${FLASH_FACTOR}x (default mount)"
        else
            fail "flash $op: $(ratio "$p" "$f")x the floor > ${FLASH_FACTOR}x (default mount)"
        fi
    done
fi

# =====================================================================================
# 4. Instruction counts (callgrind, host build)
# =====================================================================================
log "4. callgrind: cargo build --release; tests/bench/callgrind/harness.c under valgrind"
CG_OK=0
if cargo build -j2 --release --features agent >"$OUT/cargo-host.log" 2>&1 &&
    cc -std=c11 -O2 -g -Wall -Wextra -Werror -Iinclude -Itests/c tests/bench/callgrind/harness.c \
        tests/c/port_posix.c target/release/libbento_mpy.a -Wl,--gc-sections -Wl,-z,now \
        -lpthread -ldl -lm -o "$OUT/harness" >"$OUT/harness-build.log" 2>&1; then
    rm -f "$OUT"/callgrind.out*
    if valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$OUT/callgrind.out" \
        "$OUT/harness" >"$OUT/callgrind.log" 2>&1; then
        python3 tests/bench/callgrind/cg_summary.py "$OUT"/callgrind.out.* >"$OUT/callgrind.txt"
        n=$(grep -c '^CG' "$OUT/callgrind.txt")
        if ((n >= 26)); then
            CG_OK=1
            pass "callgrind: $n calls measured"
        else
            fail "callgrind: only $n dumps (target/perf/callgrind.log)"
        fi
    else
        fail "harness under callgrind (target/perf/callgrind.log)"
        tail -n 15 "$OUT/callgrind.log" | sed 's/^/    /'
    fi
else
    fail "host build or harness build (target/perf/cargo-host.log, harness-build.log)"
    tail -n 15 "$OUT/harness-build.log" 2>/dev/null | sed 's/^/    /'
fi

# =====================================================================================
# docs/PERFORMANCE.md
# =====================================================================================
RUSTC=$(rustc --version | cut -d' ' -f1-2)
GCC=$(arm-none-eabi-gcc -dumpversion)
VG=$(valgrind --version)
MPY_VER=$(awk -F'"' '/MICROPY_VERSION_STRING/ {print $2; exit}' \
    build/micropython-src/micropython-*/py/mpconfig.h 2>/dev/null)
[[ -n $MPY_VER ]] || MPY_VER="1.25.0"
cg_field() { awk -F'\t' -v l="$1" -v f="$2" '$1 == "CG" && $2 == l {print $f}' "$OUT/callgrind.txt" 2>/dev/null; }
fmt() { awk -v n="$1" 'BEGIN { if (n !~ /^[0-9]+$/) { print n; exit } s = sprintf("%d", n); o = "";
    while (length(s) > 3) { o = " " substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) } print s o }'; }
{
    echo "# Performance of bentoclaw: code, RAM, stack, flash wear, instructions"
    echo
    echo "Generated by \`scripts/perf_report.sh\` (do not edit; rerun it to update)."
    echo "Every figure stands next to its goal and the command that regenerates it."
    echo "A **FAIL** is a goal the code misses today; the script then exits non-zero."
    echo
    echo "Toolchains: $RUSTC (builds), $NIGHTLY (stack analysis only),"
    echo "arm-none-eabi-gcc $GCC, MicroPython $MPY_VER (unix port), $VG."
    echo
    # ---- 1 -----------------------------------------------------------------------
    echo "## 1. Code and static RAM"
    echo
    echo "Summed from the linker map over the input sections each part brings"
    echo "(\`scripts/map_share.py\`: \`.text*\`, \`.rodata*\`, \`.ARM.ex*\` are code;"
    echo "\`.data*\`, \`.bss*\`, \`COMMON\` are static RAM; \`.data\` also keeps its"
    echo "initial image in flash). The library's share includes the"
    echo "\`compiler_builtins\` members it pulls in (\`memcpy\`, 64-bit shifts, ...)."
    echo
    echo "| part | image | code (.text+.rodata) | goal | static RAM (.data+.bss) | goal | status |"
    echo "|---|---|---:|---:|---:|---:|---|"
    if ((FW)); then
        echo "| libbento_mpy.a, features \`agent\` | firmware (qemu mps3-an547) | $FW_LIB_CODE B | (budget: the vendor-ABI build, below) | $FW_LIB_RAM B | ≤ $RAM_GOAL B | $( [[ $(status "$FW_LIB_RAM" "$RAM_GOAL") == PASS ]] && echo "RAM PASS, code info" || echo "**FAIL**") |"
        echo "| modbentoclaw.c + claw_port_vfs.c | firmware (qemu mps3-an547) | $FW_MOD_CODE B | — | $FW_MOD_RAM B | — | info |"
        echo "| library + binding | firmware (qemu mps3-an547) | $(sum2 "$FW_LIB_CODE" "$FW_MOD_CODE") B | (goal is the library's) | $(sum2 "$FW_LIB_RAM" "$FW_MOD_RAM") B | (goal is the library's) | info |"
        [[ $FW_TR_CODE != - && $FW_TR_CODE != 0 ]] &&
            echo "| board transport (claw_transport*) | firmware (qemu mps3-an547) | $FW_TR_CODE B | — | $FW_TR_RAM B | — | info |"
    else
        w=${FW_NOTE%%:*}
        echo "| libbento_mpy.a | firmware (qemu mps3-an547) | $w | ≤ $CODE_GOAL B | $w | ≤ $RAM_GOAL B | $w |"
        echo "| modbentoclaw.c + claw_port_vfs.c | firmware (qemu mps3-an547) | $w | — | $w | — | $w |"
    fi
    echo "| libbento_mpy.a, vendor ABI (default features) | minimal image (tests/image) | $MIN_CODE B | ≤ $CODE_GOAL B | $MIN_RAM B | ≤ $RAM_GOAL B | $( [[ $MIN_CODE != - && $(status "$MIN_CODE" "$CODE_GOAL") == PASS && $(status "$MIN_RAM" "$RAM_GOAL") == PASS ]] && echo PASS || echo "**FAIL**") |"
    echo "| heap | library | $HEAP | 0 | | | $([[ $HEAP == 0 ]] && echo PASS || echo "**FAIL**") |"
    echo
    if ((FW)); then
        echo "Of the library's code, $MIN_BUILTINS B (minimal image) are \`compiler_builtins\`. In the"
        echo "firmware, functions MicroPython's libc already provides (\`memcmp\`, \`strlen\`) and"
        echo "exports the binding never calls are not in the library's share."
        echo "\`.data\` (its initial image also sits in flash): library $FW_LIB_DATA B, binding"
        echo "$FW_MOD_DATA B in the firmware; library $MIN_DATA B in the minimal image. The whole"
        echo "firmware's .text+.rodata is $FW_TOTAL_TEXT B. The binding's figure leaves out its"
        echo "interned names (qstrs), which MicroPython keeps in its own pool."
    else
        echo "Of the library's code, $MIN_BUILTINS B are \`compiler_builtins\`; its \`.data\` is $MIN_DATA B."
        echo "Firmware image: $FW_NOTE."
    fi
    echo
    echo "Heap: no \`malloc\`, \`free\`, \`_sbrk\` or \`__rust_alloc\` is referenced by the"
    echo "archive (\`arm-none-eabi-nm -u\`) or present in the minimal image. (The binding"
    echo "takes its request buffers from the MicroPython GC heap for the length of one"
    echo "\`ask()\`; that is MicroPython's heap, not the library's.)"
    echo
    echo "Regenerate: \`scripts/build_qemu.sh\` (firmware.elf + firmware.map), then"
    echo "\`python3 scripts/map_share.py build/qemu/firmware.map 'lib=libbento_mpy.a(' 'binding=/modbentoclaw.o|/claw_port_vfs.o'\`;"
    echo "minimal image: \`cargo rustc --release --crate-type staticlib --target $V8\` linked with"
    echo "\`tests/image/image.c\` as in \`scripts/size_report.sh\` (see docs/SIZE.md)."
    echo
    # ---- 2 -----------------------------------------------------------------------
    echo "## 2. Worst-case stack depth on $V8"
    echo
    echo "Method (\`scripts/stack_report.py\`):"
    echo
    echo "* **Frames** from \`-Z emit-stack-sizes\`: the nightly compiler builds the"
    echo "  release profile (opt-level \"z\", LTO, one codegen unit, panic abort,"
    echo "  staticlib) with \`-Z build-std=core\`, so \`core\` and \`compiler_builtins\`"
    echo "  carry \`.stack_sizes\` records too. Each function's frame is its record"
    echo "  (ELF parsed directly). Every frame is also read from the code — the sum of"
    echo "  its \`push\`/\`stmdb sp!\`/\`vpush\`/\`sub sp\`/\`str [sp, #-n]!\` — as a cross-check."
    echo "* **Call graph** from \`arm-none-eabi-objdump -d -r\` of every member of the"
    echo "  archive: \`bl\` (R_ARM_THM_CALL) is a call; \`b.w\`/\`b<cond>.w\` to another"
    echo "  function (R_ARM_THM_JUMP24/19) is a tail call, made after the caller's frame"
    echo "  is popped; \`blx rN\` whose register was loaded from a literal holding a"
    echo "  function's address (opt-level \"z\" calls a function it uses often that way)"
    echo "  is a call to that function. Aliases (\`claw_cb_success\` is folded into"
    echo "  \`claw_cb_init\`: same code) share one node."
    echo "* depth(f) = max(frame(f) + depth(callee), depth(tail callee)). The"
    echo "  \`claw_port_*\` callbacks are outside the library: **counted as 0** — the"
    echo "  host's VFS bridge and LittleFS stack add to the figures of the functions that"
    echo "  do I/O."
    echo
    if ((STACK_OK)); then
        echo "| function | worst-case depth | own frame | goal | status | deepest path |"
        echo "|---|---:|---:|---:|---|---|"
        grep '^STACK ' "$OUT/stack.txt" | while read -r _ fn depth frame path; do
            printf '| `%s` | %d B | %d B | ≤ %d B | %s | %s |\n' "$fn" "$depth" "$frame" "$STACK_GOAL" \
                "$(status "$depth" "$STACK_GOAL")" "$(sed 's/|/\\|/g; s/</\&lt;/g; s/>/\&gt;/g; s/ &gt; / → /g' <<<"$path")"
        done
        echo
        summary=$(grep '^SUMMARY' "$OUT/stack.txt")
        echo "Graph: $(sed -E 's/.* reachable=([0-9]+).*/\1/' <<<"$summary") functions reachable from the exports, all with a"
        echo "\`.stack_sizes\` record ($(sed -E 's/.* without_record=([0-9]+).*/\1/' <<<"$summary") without);"
        echo "$(sed -E 's/.* mismatches=([0-9]+).*/\1/' <<<"$summary") records disagree with the code's SP decrements;"
        echo "$(sed -E 's/.* indirect=([0-9]+).*/\1/' <<<"$summary") indirect calls; $(sed -E 's/.* recursion=([0-9]+).*/\1/' <<<"$summary") recursive cycles."
        echo "External callees: $(grep '^EXTERN' "$OUT/stack.txt" | awk '{printf "%s`%s`", (n++ ? ", " : ""), $2}')."
        echo
        echo "Largest frames:"
        echo
        grep '^FRAME' "$OUT/stack.txt" | while read -r _ sz fnname; do
            echo "* $sz B \`$fnname\`"
        done
        echo
        echo "Cross-check on the archive the stable compiler ships (no \`.stack_sizes\`: all"
        echo "frames read from the SP decrements, same graph method):"
        echo "$(grep '^STACK ' "$OUT/stack-stable.txt" | awk '{printf "%s`%s` %d B", (n++ ? ", " : ""), $2, $3}')."
    else
        echo "Not measured (see the script's output)."
    fi
    echo
    echo "Regenerate: \`CARGO_TARGET_DIR=target/stack RUSTFLAGS=\"-Z emit-stack-sizes\" cargo +nightly rustc --release --crate-type staticlib --features agent --target $V8 -Z build-std=core\`,"
    echo "then \`python3 scripts/stack_report.py target/stack/$V8/release/libbento_mpy.a --exports include/claw_session.h --exports include/claw_safety.h --exports include/claw_ext.h\`."
    echo
    # ---- 3 -----------------------------------------------------------------------
    echo "## 3. Bytes programmed to flash"
    echo
    echo "\`tests/mpy/bench_flash.py\` on the MicroPython unix port: \`vfs.VfsLfs2\` on a"
    echo "RAM block device of 512-byte blocks (256 blocks) that counts the bytes"
    echo "LittleFS programs (\`writeblocks\`) and the blocks it erases; the backend is"
    echo "\`mpy/examples/backend.py\` on loopback. **Floor** = the bytes of the new JSON lines"
    echo "themselves, computed from the exact line text the formats write (escaping,"
    echo "255-byte cut; the model is checked against the files after every operation):"
    echo "\`{\"role\":\"user\",\"content\":\"…\"}\` + \`{\"role\":\"assistant\",\"content\":\"…\",\"end\":true}\`"
    echo "per exchange; \`{\"key\":\"…\",\"value\":\"…\"}\` per \`remember()\`; nothing for a delete."
    echo "Goal: ≤ ${FLASH_FACTOR}× the floor on average, judged on the default mount."
    echo
    if ((FLASH_OK)); then
        for cfg in "${FLASH_CONFIGS[@]}"; do
            IFS='|' read -r name _ what <<<"$cfg"
            echo "### Mount: $what"
            echo
            echo "| operation | programmed per op | floor per op | × floor | erases per op | goal | status |"
            echo "|---|---:|---:|---:|---:|---|---|"
            for row in \
                "ask|ask() exchange, mean of 100|goal" \
                "ask_append|… of which exchanges that append ($(bench "$name" ask_append n))|" \
                "ask_compaction|… of which exchanges that compact the file ($(bench "$name" ask_compaction n))|" \
                "ask_rewrite_alternative|alternative: whole ring to tmp + rename at every flush (replayed)|" \
                "remember_new|remember() new key, store of 10 keys (mean of 5)|" \
                "remember_replace|remember() replace, store of 11 keys (mean of 5)|" \
                "session_clear|session_clear() (mean of 5)|"; do
                IFS='|' read -r op label isgoal <<<"$row"
                n=$(bench "$name" "$op" n)
                p=$(bench "$name" "$op" programmed)
                f=$(bench "$name" "$op" floor)
                e=$(bench "$name" "$op" erases)
                [[ -n $n && $n -gt 0 ]] || continue
                x=$(ratio "$p" "$f")
                if [[ -n $isgoal && $name == default ]]; then
                    goal="≤ ${FLASH_FACTOR}×"
                    st=$(within "$p" "$f" && echo PASS || echo "**FAIL**")
                elif [[ -n $isgoal ]]; then
                    goal="(≤ ${FLASH_FACTOR}×)"
                    st=$(within "$p" "$f" && echo "within" || echo "over")
                else
                    goal="—"
                    st=info
                fi
                [[ $f == 0 ]] && x="— (floor 0)"
                echo "| $label | $(per "$p" "$n") B | $(per "$f" "$n") B | $x | $(per "$e" "$n") | $goal | $st |"
            done
            echo
            n=$(bench "$name" ask n)
            echo "Per exchange: $(per "$(bench "$name" ask file_data)" "$n") B of file data (new lines,"
            echo "the copy of the file's partly filled last block, padding) and"
            echo "$(per "$(bench "$name" ask metadata)" "$n") B of LittleFS metadata commits; min $(bench "$name" ask min) B,"
            echo "max $(bench "$name" ask max) B. The replayed alternative writes $(per "$(bench "$name" ask_rewrite_alternative ring_bytes)" "$n") B of ring"
            echo "text per exchange and programs $(ratio "$(bench "$name" ask_rewrite_alternative programmed)" "$(bench "$name" ask programmed)")× what append-then-compact does."
            echo
        done
        echo "How the figures are obtained:"
        echo
        echo "* **ask()**: 100 exchanges after \`connect()\` (prompts of 2–72 bytes, Thai,"
        echo "  quotes and newlines among them; the backend's deterministic echo replies)."
        echo "  Each exchange is one flush at the idle point after the reply. An exchange"
        echo "  \"compacts\" when the file afterwards is exactly the ring (rewritten through"
        echo "  \`/.bentoclaw_session.tmp\` + rename because it would exceed 30 lines)."
        echo "* **file data vs metadata**: a program counts as file data when its bytes"
        echo "  (less 0xff padding and the skip-list pointers at a block's start) occur in"
        echo "  the session file; everything else is metadata (tags, CRCs, revision counts)."
        echo "  LittleFS appends copy-on-write: the partly filled last block of the file is"
        echo "  copied to a fresh block with the new lines, so an append programs the new"
        echo "  lines plus on average half a block of old content."
        echo "* **alternative**: the rewrite-whole-ring design, replayed on a second,"
        echo "  identical LittleFS mounted at \`/alt\`: after every exchange the exact ring"
        echo "  file (the 10 newest lines) is written to a temp file and renamed over the"
        echo "  ring file, and that block device's counts are taken."
        echo "* **remember()**: five fresh file systems each holding 10 keys; one new key,"
        echo "  then one replacement. The store is rewritten whole (temp file + rename) so a"
        echo "  power cut leaves the old or the new store, never a mix: its cost follows the"
        echo "  store's size (about $(per "$(bench default remember_new store_bytes)" "$(bench default remember_new n)") B here), not the new line's."
        echo "  The 3× goal is judged on the ask() workload it was set for. A single"
        echo "  remember() cannot meet it on 512-byte LittleFS blocks with any file"
        echo "  design: even an append-only store would program the new line plus, on"
        echo "  average, half a block of the file's old last block (about 300 B for a"
        echo "  40-byte line, as the append figures above show). Rewriting the store"
        echo "  whole is what keeps a power cut from ever leaving a mix of old and new."
        echo "* **session_clear()**: five clears, alternately of one exchange and of five."
    else
        echo "Not measured (see the script's output)."
    fi
    echo
    echo "Regenerate: \`scripts/build_micropython.sh\`, start \`python3 mpy/examples/backend.py --port 0\`, then"
    echo "\`BENTOCLAW_PORT=<port> [BENCH_PROGSIZE=256] build/micropython/micropython tests/mpy/bench_flash.py\`"
    echo "(options: BENCH_READSIZE, BENCH_PROGSIZE, BENCH_LOOKAHEAD, BENCH_MTIME, BENCH_EXCHANGES)."
    echo
    # ---- 4 -----------------------------------------------------------------------
    echo "## 4. Instructions per call (host, callgrind)"
    echo
    echo "\`tests/bench/callgrind/harness.c\` links \`target/release/libbento_mpy.a\` (x86-64,"
    echo "the release profile: opt-level \"z\", LTO) with the POSIX port of the C tests"
    echo "(\`tests/c/port_posix.c\`: real files in a temporary directory, a test clock)"
    echo "and runs under \`valgrind --tool=callgrind --collect-atstart=no\`. Each call is"
    echo "bracketed by \`CALLGRIND_TOGGLE_COLLECT\` and dumped on its own"
    echo "(\`CALLGRIND_DUMP_STATS_AT\`), so a figure is **inclusive** of everything the call"
    echo "runs: the core, \`compiler_builtins\`, the \`claw_port_*\` callbacks and the libc"
    echo "below them (system calls themselves are not counted), plus a few harness"
    echo "instructions. The \`claw_port_*\` column is the inclusive cost of the port calls"
    echo "(\`tests/bench/callgrind/cg_summary.py\`). State: full ring (10 messages of 255"
    echo "bytes on flash), full memory store (32 keys of 31 bytes, values of 127"
    echo "bytes), full rate table (16 tools of 31-byte names; the gates run on the 16th)."
    echo "Counts are x86-64 instructions: a guide to relative cost, not Cortex-M55 cycles."
    echo
    if ((CG_OK)); then
        echo "| call | instructions | of which in claw_port_* | largest self costs |"
        echo "|---|---:|---:|---|"
        while IFS=$'\t' read -r _ label total portc top; do
            printf '| `%s` | %s | %s | %s |\n' "$label" "$(fmt "$total")" "$(fmt "$portc")" "$top"
        done <"$OUT/callgrind.txt" | sed -E 's/^\| `(claw_[a-z_]+)( [^`]*)`/| `\1`\2/; s/^\| `([^c][^`]*)`/| \1/'
    else
        echo "Not measured (see the script's output)."
    fi
    echo
    echo "Regenerate: \`cargo build --release --features agent\`,"
    echo "\`cc -O2 -g -Iinclude -Itests/c tests/bench/callgrind/harness.c tests/c/port_posix.c target/release/libbento_mpy.a -Wl,-z,now -lpthread -ldl -lm -o harness\`,"
    echo "\`valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file=cg.out ./harness\`,"
    echo "\`python3 tests/bench/callgrind/cg_summary.py cg.out.*\`."
} >docs/PERFORMANCE.md
log "wrote docs/PERFORMANCE.md"

echo "RESULT: $passed passed, $failed failed"
((failed == 0))
