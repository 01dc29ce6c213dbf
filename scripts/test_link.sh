#!/usr/bin/env bash
# shellcheck disable=SC2054 # commas inside -W options are not separators
# test_link.sh — the ARM link test (issue 20): libbentoclaw.a linked with GNU
# ld BEFORE a stand-in of the vendor's libbento_mpy.a, as the BENTO
# firmware's proj_cm33_ns/Makefile puts its archives in LDLIBS
# (docs/BUILD.md, "Linking into the BENTO firmware").
#
#  * The stand-in (tests/link/standin/): one C file of stubs per member of
#    the SDK's PROVENANCE.txt, exporting the 48 symbols of its api.txt
#    (tests/link/vendor_exports.txt says which member holds which;
#    optiga_verify_staged_model weak), built softfp as the vendor builds.
#    Its members call the consumer's symbols (tacp.o calls
#    bentoclaw_tacp_dispatch, ...), a few internals are ELF-global between
#    members as the vendor's README says of its "bx_N".
#  * The stand-in firmware (tests/link/firmware/): main.o softfp (the
#    MTB-compiled part), the binding, mpy_main.c and the port with
#    libmicropython.a's -msoft-float; together they reference all 48.
#  * Links, as ModusToolbox links (--cref --gc-sections --warn-common, the
#    LDLIBS inside --start-group/--end-group), of libbentoclaw.a for
#    thumbv8m.main-none-eabi with --features agent and with the default
#    features, then tests/link/check_link.py on the map: each of the 22
#    claw_* functions resolves to libbentoclaw.a, each of the other 26 to
#    its stand-in member, the stand-in's claw_session.o and claw_safety.o
#    are never extracted. Plus scripts/check_vendor_archive.sh on the
#    stand-in (the nm check docs/BUILD.md gives for the real archive).
#  * Self-tests, which must be caught: a stand-in whose tacp.o calls an
#    internal of claw_session.o (ld stops on multiple definitions, and
#    check_vendor_archive.sh names it); the vendor archive first on the link
#    line (ld succeeds silently, check_link.py reports the 22 resolved to
#    the stand-in).
#  * The float ABI: the thumbv8m.main-none-eabihf archive in the softfp
#    image is refused by ld ("uses VFP register arguments"); the
#    thumbv8m.main-none-eabi one links (above); the eabihf one links into
#    an image built -mfloat-abi=hard throughout.
#
#   scripts/test_link.sh        # last line: RESULT: <n> passed, <m> failed
#
# Work files (archives, objects, maps, logs): target/link/work/.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR=never
OUT=$ROOT/target/link
W=$OUT/work
EABI=thumbv8m.main-none-eabi
EABIHF=thumbv8m.main-none-eabihf
MEMBERS=(tacp lfs_wifi_creds claw_session claw_safety claw_transport modoptiga modedgeai bento_link bento_link_ipc)
EXPORTS=tests/link/vendor_exports.txt

passed=0
failed=0
pass() { echo "PASS $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
finish() {
    echo "RESULT: $passed passed, $failed failed"
    ((failed == 0))
    exit $?
}
indent() { sed 's/^/    /'; }

# ---- tools -------------------------------------------------------------------------
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
ensure_pkgs gcc-arm-none-eabi binutils-arm-none-eabi libnewlib-arm-none-eabi python3 ||
    { fail "could not install the Arm toolchain"; finish; }
for t in "$EABI" "$EABIHF"; do
    if ! rustup target list --installed | grep -qx "$t"; then
        rustup target add "$t" >&2 || { fail "rustup target add $t"; finish; }
    fi
done

rm -rf "$W"
mkdir -p "$W"

# The flags: ModusToolbox compiles proj_cm33_ns softfp (COMPONENT_SOFTFP), as
# the vendor built libbento_mpy.a; Makefile.micropython builds libmicropython.a
# (the binding, mpy_main.c, the port) with -msoft-float. Both have the
# soft-float calling convention.
SOFTFP=(-mcpu=cortex-m33 -mthumb -mfloat-abi=softfp -mfpu=fpv5-sp-d16)
SOFT=(-mcpu=cortex-m33 -mthumb -msoft-float)
HARD=(-mcpu=cortex-m33 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16)
# tests/link/firmware/freertos: stand-ins of FreeRTOS.h and task.h, so that
# port.c compiles mpy/claw_vm_task.h's FreeRTOS branch, as the firmware does.
CFLAGS=(-std=c11 -Wall -Wextra -Werror -Os -ffunction-sections -fdata-sections -Iinclude -Itests/link/standin
        -Impy -Itests/link/firmware/freertos)
# MTB's GCC_ARM link flags (--cref --gc-sections --warn-common); the memory
# map of tests/image/image.ld; never run, so no start files.
LDFLAGS=(-nostartfiles -T tests/image/image.ld -Wl,--cref -Wl,--gc-sections -Wl,--warn-common
         -Wl,--no-warn-rwx-segments -Wl,--no-warn-execstack)

# ---- 1. our archives ------------------------------------------------------------------
# ours NAME TARGET [FEATURES] -> $W/NAME/libbentoclaw.a
ours() {
    local name=$1 target=$2 features=${3-} args=(--release --crate-type staticlib --target "$2")
    [[ -n $features ]] && args+=(--features "$features")
    echo "== cargo rustc ${args[*]} (CARGO_TARGET_DIR=target/link)"
    if ! CARGO_TARGET_DIR=$OUT cargo rustc -j2 "${args[@]}" >"$W/cargo-$name.log" 2>&1; then
        fail "cargo build of libbentoclaw.a ($name, target/link/work/cargo-$name.log)"
        tail -n 15 "$W/cargo-$name.log" | indent
        return 1
    fi
    mkdir -p "$W/$name"
    cp "$OUT/$target/release/libbentoclaw.a" "$W/$name/libbentoclaw.a"
}
ours agent "$EABI" agent || finish
ours default "$EABI" || finish
ours hf "$EABIHF" || finish

# The calling convention recorded in the objects (Tag_ABI_VFP_args: VFP
# registers = hard-float; absent = base AAPCS, what softfp objects use).
vfp_members() { arm-none-eabi-readelf -A "$1" 2>/dev/null | grep -c 'Tag_ABI_VFP_args: VFP registers'; }
n=$(vfp_members "$W/default/libbentoclaw.a")
if ((n == 0)); then pass "$EABI archive: no member passes floats in VFP registers (soft-float calling convention)"
else fail "$EABI archive: $n member(s) record Tag_ABI_VFP_args: VFP registers"; fi
n=$(vfp_members "$W/hf/libbentoclaw.a")
if ((n > 0)); then pass "$EABIHF archive: $n member(s) record Tag_ABI_VFP_args: VFP registers (hard-float)"
else fail "$EABIHF archive: no member records VFP register arguments"; fi

# ---- 2. the stand-in of the vendor's archive ---------------------------------------------
# standin DIR FLAGS-ARRAY [CPPFLAGS...] -> DIR/libbento_mpy.a, members in PROVENANCE.txt's order
standin() {
    local dir=$1 m
    local -n flags=$2
    shift 2
    mkdir -p "$dir"
    for m in "${MEMBERS[@]}"; do
        arm-none-eabi-gcc "${flags[@]}" "${CFLAGS[@]}" "$@" -c "tests/link/standin/$m.c" -o "$dir/$m.o" ||
            return 1
    done
    (cd "$dir" && arm-none-eabi-ar rcs libbento_mpy.a "${MEMBERS[@]/%/.o}")
}
if standin "$W/vendor" SOFTFP && standin "$W/vendor-bad" SOFTFP -DSTANDIN_TACP_REACHES_INTO_SESSION &&
    standin "$W/vendor-hard" HARD; then
    pass "stand-in libbento_mpy.a built softfp from tests/link/standin/ (${#MEMBERS[@]} members; the self-test's variant and a hard-float copy too)"
else
    fail "stand-in libbento_mpy.a did not build"
    finish
fi
VENDOR=$W/vendor/libbento_mpy.a

# Its exports are the SDK's: exactly the 48 of vendor_exports.txt, each in its
# member, optiga_verify_staged_model weak; internals other than "bx_N" none.
got=$(arm-none-eabi-nm -A -P -g --defined-only "$VENDOR" |
    sed -nE 's/^[^[]*\[([^]]+)\]: ([^ ]+) ([A-Za-z]).*/\1 \2 \3/p' | grep -v ' bx_[0-9]* ' |
    awk '{print $1, $2, ($3 == "W" ? "weak" : "")}' | sed 's/ $//' | sort)
want=$(sed 's/#.*//' "$EXPORTS" | awk 'NF' | sed 's/ *$//' | sort)
if [[ $got == "$want" ]]; then
    pass "stand-in exports: the 48 of $EXPORTS, each in its member, the weak one weak"
else
    fail "stand-in exports differ from $EXPORTS:"
    diff <(echo "$want") <(echo "$got") | indent
fi
if ar_members=$(arm-none-eabi-ar t "$VENDOR" | tr '\n' ' ') &&
    [[ $ar_members == "$(printf '%s.o ' "${MEMBERS[@]}")" ]]; then
    pass "stand-in members are PROVENANCE.txt's: $ar_members"
else
    fail "stand-in members: $ar_members"
fi

# ---- 3. the stand-in firmware -----------------------------------------------------------------
# firmware DIR MTB-FLAGS-ARRAY MPY-FLAGS-ARRAY -> DIR/*.o
firmware() {
    local dir=$1 f
    local -n mtb=$2 mpy=$3
    mkdir -p "$dir"
    arm-none-eabi-gcc "${mtb[@]}" "${CFLAGS[@]}" -c tests/link/firmware/main.c -o "$dir/main.o" || return 1
    for f in binding mpy_main port; do
        arm-none-eabi-gcc "${mpy[@]}" "${CFLAGS[@]}" -c "tests/link/firmware/$f.c" -o "$dir/$f.o" || return 1
    done
    # The agent archive's callbacks (claw_port.h): what bentoclaw's own
    # binding provides; the vendor's binding has none of them.
    arm-none-eabi-gcc "${mpy[@]}" "${CFLAGS[@]}" -c tests/image/agent_ports.c -o "$dir/agent_ports.o"
}
if firmware "$W/fw" SOFTFP SOFT && firmware "$W/fw-hard" HARD HARD; then
    pass "stand-in firmware built (main.o softfp; binding.o, mpy_main.o, port.o -msoft-float)"
else
    fail "stand-in firmware did not build"
    finish
fi
FW=("$W/fw/main.o" "$W/fw/binding.o" "$W/fw/mpy_main.o" "$W/fw/port.o")

# ---- 4. the links ---------------------------------------------------------------------------------
# link NAME ARCH-ARRAY LIBS... -> $W/NAME.{elf,map,log}; the objects are "${FW[@]}"
# (and agent_ports.o when asked through AGENT_PORTS=1). Status of ld.
link() {
    local name=$1
    local -n arch=$2
    shift 2
    local objs=("${FW[@]}")
    [[ ${AGENT_PORTS:-0} == 1 ]] && objs+=("$(dirname "${FW[0]}")/agent_ports.o")
    arm-none-eabi-gcc "${arch[@]}" "${LDFLAGS[@]}" -Wl,-Map="$W/$name.map" "${objs[@]}" "$@" \
        -o "$W/$name.elf" >"$W/$name.log" 2>&1
}
# checked NAME WHAT — counts the PASS/FAIL lines of check_link.py on NAME's map.
checked() {
    local name=$1 what=$2 out line
    out=$(python3 tests/link/check_link.py --all-referenced "$W/$name.map" "$EXPORTS" libbentoclaw.a libbento_mpy.a)
    while IFS= read -r line; do
        case $line in
            PASS\ *) pass "$what: ${line#PASS }" ;;
            FAIL\ *) fail "$what: ${line#FAIL }" ;;
            *) echo "$what: $line" ;;
        esac
    done <<<"$out"
}
mtb_link() { # NAME ARCH OURS VENDOR: the LDLIBS in MTB's group, ours first
    link "$1" "$2" -Wl,--start-group "$3" "$4" -Wl,--end-group
}

if mtb_link default SOFTFP "$W/default/libbentoclaw.a" "$VENDOR"; then
    pass "default features: the softfp image links, libbentoclaw.a before libbento_mpy.a (MTB's link line)"
    checked default "default features"
else
    fail "default features: link failed (target/link/work/default.log):"
    grep -v 'GNU-stack\|NOTE: This behaviour' "$W/default.log" | head -n 12 | indent
fi
if AGENT_PORTS=1 mtb_link agent SOFTFP "$W/agent/libbentoclaw.a" "$VENDOR"; then
    pass "feature agent: the softfp image links, libbentoclaw.a before libbento_mpy.a (MTB's link line)"
    checked agent "feature agent"
else
    fail "feature agent: link failed (target/link/work/agent.log):"
    grep -v 'GNU-stack\|NOTE: This behaviour' "$W/agent.log" | head -n 12 | indent
fi
# Without the group: the archives searched once each, in LDLIBS order.
if AGENT_PORTS=1 link agent-plain SOFTFP "$W/agent/libbentoclaw.a" "$VENDOR"; then
    pass "feature agent, plain link line (no --start-group): the softfp image links"
    checked agent-plain "feature agent, no group"
else
    fail "feature agent, plain link line: link failed (target/link/work/agent-plain.log):"
    grep -v 'GNU-stack\|NOTE: This behaviour' "$W/agent-plain.log" | head -n 12 | indent
fi

# The nm check of docs/BUILD.md, on the stand-in, beside each of our archives.
for v in default agent; do
    if bash scripts/check_vendor_archive.sh "$VENDOR" --ours "$W/$v/libbentoclaw.a" >"$W/check-$v.log" 2>&1; then
        pass "scripts/check_vendor_archive.sh: the stand-in can stand behind libbentoclaw.a ($v features)"
    else
        fail "scripts/check_vendor_archive.sh on the stand-in ($v features):"
        indent <"$W/check-$v.log"
    fi
done
indent <"$W/check-default.log"

# ---- 5. self-tests: what the checks must catch ----------------------------------------------------
echo "== self-tests"
# a) a needed member (tacp.o) calls an internal of claw_session.o
if mtb_link bad SOFTFP "$W/default/libbentoclaw.a" "$W/vendor-bad/libbento_mpy.a"; then
    fail "self-test: a tacp.o that calls claw_session.o's bx_41 linked; the multiple definition went unseen"
elif grep -q "multiple definition of \`claw_" "$W/bad.log" &&
    grep -q 'libbento_mpy.a(claw_session.o)' "$W/bad.log"; then
    pass "self-test: a tacp.o that calls claw_session.o's bx_41 fails the link: $(grep -c "multiple definition of \`claw_" "$W/bad.log") multiple definitions of claw_* from libbento_mpy.a(claw_session.o)"
else
    fail "self-test: the link of the bad stand-in failed, but not on a multiple definition of claw_* (target/link/work/bad.log)"
    head -n 8 "$W/bad.log" | indent
fi
if bash scripts/check_vendor_archive.sh "$W/vendor-bad/libbento_mpy.a" >"$W/check-bad.log" 2>&1; then
    fail "self-test: scripts/check_vendor_archive.sh passed the bad stand-in"
elif grep -q '^PROBLEM tacp.o needs bx_41, which only claw_session.o defines' "$W/check-bad.log"; then
    pass "self-test: scripts/check_vendor_archive.sh names it: $(grep -m1 '^PROBLEM' "$W/check-bad.log" | cut -c9-)"
else
    fail "self-test: scripts/check_vendor_archive.sh failed the bad stand-in for another reason:"
    indent <"$W/check-bad.log"
fi
# b) the vendor's archive first: ld is happy, the 22 are the vendor's
if ! link vendor-first SOFTFP -Wl,--start-group "$VENDOR" "$W/default/libbentoclaw.a" -Wl,--end-group; then
    fail "self-test: the link with libbento_mpy.a first failed (it should succeed silently; target/link/work/vendor-first.log)"
    head -n 8 "$W/vendor-first.log" | indent
else
    out=$(python3 tests/link/check_link.py --all-referenced "$W/vendor-first.map" "$EXPORTS" libbentoclaw.a libbento_mpy.a)
    rc=$?
    n22=$(grep -c '^FAIL claw_.* defined by libbento_mpy.a(claw_s' <<<"$out")
    nx=$(grep -c '^FAIL libbento_mpy.a(claw_s[a-z]*.o) was not extracted' <<<"$out")
    if ((rc != 0 && n22 == 22 && nx == 2)); then
        pass "self-test: libbento_mpy.a first links, and check_link.py reports it: $n22 of the 22 resolved to the stand-in, claw_session.o and claw_safety.o extracted"
    else
        fail "self-test: libbento_mpy.a first: check_link.py exit $rc, $n22 of the 22 reported, $nx members reported"
        grep -v '^PASS' <<<"$out" | head -n 8 | indent
    fi
fi

# ---- 6. the float ABI -----------------------------------------------------------------------------
echo "== the float ABI"
if mtb_link hf-in-softfp SOFTFP "$W/hf/libbentoclaw.a" "$VENDOR"; then
    fail "the $EABIHF archive linked into the softfp image (ld should refuse it)"
elif grep -q 'uses VFP register arguments' "$W/hf-in-softfp.log"; then
    pass "the $EABIHF archive in the softfp image is refused by ld: $(grep -m1 -o 'error: .*uses VFP register arguments.*' "$W/hf-in-softfp.log" |
        sed -E 's#/[^ ]*/([^/ ]+\.a)#\1#g; s/\(bentoclaw-[^)]*\)/(bentoclaw-….o)/; s#[^ ]*/hf-in-softfp.elf#<image>#')"
else
    fail "the $EABIHF archive in the softfp image failed to link, but not on the float ABI (target/link/work/hf-in-softfp.log)"
    head -n 8 "$W/hf-in-softfp.log" | indent
fi
# (The $EABI archive in the same image: the links of section 4.)
FW=("$W/fw-hard/main.o" "$W/fw-hard/binding.o" "$W/fw-hard/mpy_main.o" "$W/fw-hard/port.o")
if mtb_link hf-in-hard HARD "$W/hf/libbentoclaw.a" "$W/vendor-hard/libbento_mpy.a"; then
    pass "the hard-float option: the $EABIHF archive links into an image built -mfloat-abi=hard throughout"
    checked hf-in-hard "hard-float image"
else
    fail "the hard-float option: link failed (target/link/work/hf-in-hard.log)"
    head -n 8 "$W/hf-in-hard.log" | indent
fi

finish
