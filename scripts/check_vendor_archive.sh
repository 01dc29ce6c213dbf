#!/usr/bin/env bash
# check_vendor_archive.sh — can bentoclaw's libbentoclaw.a stand before this
# vendor libbento_mpy.a on one link line (docs/BUILD.md, "Linking into the
# BENTO firmware")?
#
#   scripts/check_vendor_archive.sh <vendor libbento_mpy.a> [--ours <libbentoclaw.a>]
#
# Reads the archive's symbol table with arm-none-eabi-nm (nothing is linked,
# nothing runs) and checks:
#  1. which members define the 22 functions of include/claw_session.h and
#     include/claw_safety.h (the vendor's claw_session.o and claw_safety.o):
#     beside libbentoclaw.a these must never be extracted;
#  2. that no other member reaches into them: every symbol another member
#     needs that only those members define, other than the 22 themselves
#     (which resolve to libbentoclaw.a), would make ld extract one of them,
#     and the link then stops on a multiple definition of claw_*. All the
#     other members count as needed: the firmware references TACP, the Wi-Fi
#     credentials, the transport, bento_link and the two module objects.
#  3. with --ours: that libbentoclaw.a defines no strong symbol a needed
#     vendor member defines too, and that the two use the same float calling
#     convention (Tag_ABI_VFP_args).
# Prints one line per finding; the last line is "check_vendor_archive: OK"
# or "check_vendor_archive: <n> problem(s)"; exit status 0 or 1 (2: usage).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NM=${NM:-arm-none-eabi-nm}
READELF=${READELF:-arm-none-eabi-readelf}

usage() { sed -n '2,22p' "$0" >&2; exit 2; }
vendor="" ours=""
while (($#)); do
    case $1 in
        --ours) ours=${2-}; shift 2 || usage ;;
        -h|--help) usage ;;
        -*) usage ;;
        *) [[ -z $vendor ]] || usage; vendor=$1; shift ;;
    esac
done
[[ -n $vendor && -f $vendor ]] || { echo "check_vendor_archive: no archive '${vendor}'" >&2; usage; }
[[ -z $ours || -f $ours ]] || { echo "check_vendor_archive: no archive '$ours'" >&2; usage; }
command -v "$NM" >/dev/null || { echo "check_vendor_archive: $NM not found" >&2; exit 2; }

problems=0
ok() { echo "ok      $*"; }
problem() { echo "PROBLEM $*"; problems=$((problems + 1)); }
note() { echo "note    $*"; }

# The 22, from the headers (the same names as the vendor's).
mapfile -t CLAW22 < <(grep -hoE '^[a-z_0-9]+[ *]+(claw_[a-z_]+)\(' "$ROOT/include/claw_session.h" \
    "$ROOT/include/claw_safety.h" | sed -E 's/.*(claw_[a-z_]+)\($/\1/' | sort -u)
if ((${#CLAW22[@]} != 22)); then
    echo "check_vendor_archive: found ${#CLAW22[@]} functions in include/claw_session.h and claw_safety.h, not 22" >&2
    exit 2
fi

# nm -P: "<archive>[<member>]: <name> <type> [<value> <size>]", one line per
# symbol; -g: external symbols only (the vendor's hidden bx_N are local).
syms=$(mktemp)
trap 'rm -f "$syms" "$syms.out"' EXIT
if ! "$NM" -A -P -g "$vendor" 2>/dev/null | sed -nE 's/^[^[]*\[([^]]+)\]: ([^ ]+) ([A-Za-z]).*/\1 \2 \3/p' >"$syms" ||
    [[ ! -s $syms ]]; then
    echo "check_vendor_archive: $NM read no symbols from $vendor" >&2
    exit 2
fi

# Findings, by awk over "member symbol type" lines.
awk -v claw="${CLAW22[*]}" '
    BEGIN { n = split(claw, c, " "); for (i = 1; i <= n; i++) is22[c[i]] = 1 }
    { member[$1] = 1
      if ($3 == "U") { need[$1] = need[$1] " " $2 }
      else { def[$2] = def[$2] " " $1; deftype[$1 SUBSEP $2] = $3; defs[$1] = defs[$1] " " $2 } }
    END {
        # 1. the members that define the 22
        for (s in is22) {
            m = def[s]; sub(/^ /, "", m)
            if (m == "") { missing = missing " " s; continue }
            split(m, ms, " "); for (k in ms) clawm[ms[k]] = 1
        }
        nm_ = 0; for (m in clawm) { list = list " " m; nm_++ }
        if (nm_ == 0) { print "PROBLEM none of the 22 claw_* functions is defined in this archive"; exit }
        print "ok      the 22 claw_* functions are defined in:" list
        if (missing != "") print "note    not defined here (the vendor'"'"'s headers may differ):" missing
        for (m in clawm) {
            extra = ""
            split(defs[m], ds, " ")
            for (k in ds) if (!(ds[k] in is22)) extra = extra " " ds[k]
            if (extra != "") print "note    " m " also defines (reached by nothing else is fine):" extra
        }
        # 2. members outside the claw members that need them
        for (m in member) {
            if (m in clawm) continue
            split(need[m], us, " ")
            for (k in us) {
                s = us[k]
                if (s in is22) { pub[m] = pub[m] " " s; continue }
                d = def[s]; sub(/^ /, "", d)
                if (d == "") continue              # the consumer provides it
                split(d, dm, " "); other = 0; inclaw = ""
                for (j in dm) { if (dm[j] in clawm) inclaw = inclaw " " dm[j]; else other = 1 }
                if (inclaw != "" && !other) {
                    print "PROBLEM " m " needs " s ", which only" inclaw " defines: ld would extract it and stop on multiple definitions of claw_*"
                    bad++
                }
            }
        }
        for (m in pub) print "note    " m " calls" pub[m] ": resolved by libbentoclaw.a, fine"
        print "members " nm_ " " length(member) " " bad + 0
    }' "$syms" | sort >"$syms.out"
# In a fixed order: what was found, the notes, the problems, the verdict.
for want in ok note PROBLEM members; do
    while read -r kind rest; do
        [[ $kind == "$want" ]] || continue
        case $kind in
            ok) ok "$rest" ;;
            note) note "$rest" ;;
            PROBLEM) problem "$rest" ;;
            members) read -r nclaw nall nbad <<<"$rest"
                if ((nbad == 0)); then
                    ok "$((nall - nclaw)) other member(s) checked: none needs a symbol that only the claw members define"
                fi ;;
        esac
    done <"$syms.out"
done
rm -f "$syms.out"

# 3. beside ours: no shared strong symbol, the same float calling convention
if [[ -n $ours ]]; then
    clash=$(join <("$NM" -A -P -g --defined-only "$ours" 2>/dev/null |
            sed -nE 's/^[^[]*\[[^]]+\]: ([^ ]+) [TDRBC].*/\1/p' | sort -u) \
        <(awk '$3 ~ /^[TDRBC]$/ {print $2}' "$syms" | sort -u))
    # The 22 are the ones meant to be in both (in the members never extracted).
    clash=$(comm -23 <(sort -u <<<"$clash") <(printf '%s\n' "${CLAW22[@]}" | sort -u) | tr '\n' ' ')
    if [[ -z ${clash// /} ]]; then
        ok "libbentoclaw.a and this archive share no strong symbol besides the 22"
    else
        problem "both archives define: $clash(multiple definitions once both members are extracted)"
    fi
    vfp() { "$READELF" -A "$1" 2>/dev/null | grep -q 'Tag_ABI_VFP_args: VFP registers' && echo hard || echo soft; }
    v=$(vfp "$vendor") o=$(vfp "$ours")
    if [[ $v == "$o" ]]; then
        ok "float calling convention: both $v-float (Tag_ABI_VFP_args)"
    else
        want=thumbv8m.main-none-eabi
        [[ $v == hard ]] && want=thumbv8m.main-none-eabihf
        problem "float calling convention: this archive is $v-float, libbentoclaw.a $o-float (ld refuses the mix; build ours for $want)"
    fi
fi

if ((problems == 0)); then
    echo "check_vendor_archive: OK"
else
    echo "check_vendor_archive: $problems problem(s)"
fi
((problems == 0))
