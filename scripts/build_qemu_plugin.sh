#!/usr/bin/env bash
# build_qemu_plugin.sh — qemu's TCG instruction-counting plugin
# (tests/plugin/insn.c of the qemu source) for the installed
# qemu-system-arm, built from Debian's `qemu` source package of exactly the
# installed version: Debian's qemu packages accept `-plugin` but ship no
# plugin library and no qemu-plugin.h (docs/EMULATOR.md, *Counting
# instructions*).
#
#   1. the installed qemu-system-arm and its source version
#      (dpkg-query: e.g. 1:7.2+dfsg-7+deb12u18);
#   2. a deb-src entry for this machine's suite (bookworm and
#      bookworm-updates on Debian 12), on the Debian mirror the machine's
#      apt already uses (scripts/lib.sh deb_src_entry); `apt-get source
#      --download-only qemu=<version>`, `dpkg-source -x` (Debian's patches
#      applied) -> build/qemu-src/qemu (a link to the versioned tree);
#   3. gcc -shared -fPIC against that tree's include/qemu/qemu-plugin.h and
#      glib -> build/qemu-plugin/libinsn.so;
#   4. checks that the plugin's API version (QEMU_PLUGIN_VERSION) is one the
#      installed qemu accepts and that it loads and reports:
#      `qemu-system-arm -M mps2-an505 -plugin build/qemu-plugin/libinsn.so,inline=on
#      -d plugin` prints "insns: 0" when quit before the CPU runs.
#
# Usage: scripts/build_qemu_plugin.sh      (last line: the library's path)
#
# Re-runs: the download and the unpacked tree are kept; the library is
# rebuilt when missing or older than its source; the load check always runs.
# Needs root (apt) on a machine that lacks the packages or the source.
#
# Environment:
#   BENTOCLAW_QEMU_SRC_VERSION   the source version to fetch (default: the
#                                installed qemu-system-arm's source version)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC_DIR="$ROOT/build/qemu-src"
LINK="$SRC_DIR/qemu"
OUT_DIR="$ROOT/build/qemu-plugin"
LIB="$OUT_DIR/libinsn.so"
SRC_LIST=/etc/apt/sources.list.d/bentoclaw-qemu-src.sources

SUDO=()
[[ $(id -u) -eq 0 ]] || SUDO=(sudo -n)

log() { printf 'build_qemu_plugin: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

# --- 1. the installed qemu ------------------------------------------------------------
ensure_pkgs qemu-system-arm gcc libc6-dev libglib2.0-dev pkg-config dpkg-dev xz-utils \
    debian-archive-keyring || die "installing the packages"
QEMU=$(command -v qemu-system-arm) || die "qemu-system-arm not found"
QEMU_VER=$("$QEMU" --version | sed -nE '1s/^QEMU emulator version ([0-9.]+).*/\1/p')
ver=${BENTOCLAW_QEMU_SRC_VERSION:-$(dpkg-query -W -f='${source:Version}' qemu-system-arm)}
[[ -n $ver ]] || die "qemu-system-arm is not a Debian package (dpkg-query)"
upstream=${ver#*:}      # 7.2+dfsg-7+deb12u18
upstream=${upstream%-*} # 7.2+dfsg
log "qemu-system-arm $QEMU_VER, source package qemu $ver"

# --- 2. the source ----------------------------------------------------------------------
dir="$SRC_DIR/qemu-${ver#*:}"
if [[ ! -f $dir/include/qemu/qemu-plugin.h || ! -f $dir/tests/plugin/insn.c ]]; then
    [[ -f /etc/os-release ]] || die "no /etc/os-release: cannot tell the Debian suite"
    suite=$(sed -nE 's/^VERSION_CODENAME="?([a-z]+)"?$/\1/p' /etc/os-release)
    [[ -n $suite ]] || die "no VERSION_CODENAME in /etc/os-release"
    deb_src_entry "$SRC_LIST" "$suite $suite-updates" \
        || die "no Debian archive entry found in /etc/apt sources"
    have_src() { apt-cache showsrc qemu 2>/dev/null | awk -v v="$ver" '$1 == "Version:" && $2 == v {f = 1} END {exit !f}'; }
    if ! have_src; then
        log "apt-get update (deb-src $suite only)"
        "${SUDO[@]}" apt-get "${APT_SRC_ONLY[@]}" update -qq
        have_src || die "no source qemu=$ver in $suite (apt-cache showsrc qemu); \
the installed qemu-system-arm may be older than the mirror's: upgrade it, or set BENTOCLAW_QEMU_SRC_VERSION"
    fi
    mkdir -p "$SRC_DIR"
    dsc="$SRC_DIR/qemu_${ver#*:}.dsc"
    if [[ ! -f $dsc ]]; then
        log "apt-get source --download-only qemu=$ver"
        # Download as the invoking user would; apt warns about "unsandboxed" as root.
        (cd "$SRC_DIR" && apt-get source --download-only -qq "qemu=$ver" 2>&1 |
            { grep -v 'unsandboxed' || true; } >&2)
    fi
    [[ -f $dsc ]] || die "download failed: $(basename "$dsc") not in $SRC_DIR"
    rm -rf "$dir" "$dir.tmp"
    # apt-get checked the files against the signed Sources index; dpkg-source
    # checks them against the .dsc and applies Debian's patches.
    dpkg-source -x "$dsc" "$dir.tmp" >"$SRC_DIR/dpkg-source.log" 2>&1 \
        || { cat "$SRC_DIR/dpkg-source.log" >&2; die "dpkg-source -x $(basename "$dsc") failed"; }
    mv "$dir.tmp" "$dir"
fi
ln -sfn "$(basename "$dir")" "$LINK"
HEADER="$LINK/include/qemu/qemu-plugin.h"
SRC_VERSION=$(cat "$LINK/VERSION")
[[ $SRC_VERSION == "$QEMU_VER" ]] ||
    log "warning: the source is qemu $SRC_VERSION, the installed binary says $QEMU_VER"
API=$(sed -nE 's/^#define QEMU_PLUGIN_VERSION ([0-9]+).*/\1/p' "$HEADER")
[[ -n $API ]] || die "no QEMU_PLUGIN_VERSION in $HEADER"
log "source ready: ${dir#"$ROOT"/} (qemu $SRC_VERSION, plugin API version $API)"

# --- 3. the plugin ------------------------------------------------------------------------
mkdir -p "$OUT_DIR"
PLUGIN_SRC="$LINK/tests/plugin/insn.c"
if [[ ! -f $LIB || $LIB -ot $PLUGIN_SRC || $LIB -ot $HEADER ]]; then
    read -ra GLIB_CFLAGS < <(pkg-config --cflags glib-2.0)
    read -ra GLIB_LIBS < <(pkg-config --libs glib-2.0)
    log "gcc -shared -fPIC -O2 tests/plugin/insn.c -> ${LIB#"$ROOT"/}"
    gcc -shared -fPIC -O2 -Wall -Werror "${GLIB_CFLAGS[@]}" -I"$LINK/include/qemu" \
        "$PLUGIN_SRC" -Wl,-soname,libinsn.so -o "$LIB.tmp" "${GLIB_LIBS[@]}"
    mv "$LIB.tmp" "$LIB"
fi
# The API the library declares (qemu refuses one outside its range at load).
nm -D --defined-only "$LIB" | grep -qw qemu_plugin_version || die "$LIB exports no qemu_plugin_version"
# Every qemu_plugin_* function it calls must be one the installed qemu exports.
lacking=$(comm -23 <(nm -D --undefined-only "$LIB" | awk '$2 ~ /^qemu_plugin_/ {print $2}' | sort -u) \
    <(nm -D --defined-only "$QEMU" | awk '$3 ~ /^qemu_plugin_/ {print $3}' | sort -u))
[[ -z $lacking ]] || die "the installed qemu lacks: $lacking"

# --- 4. loads and reports ------------------------------------------------------------------
out=$(printf 'quit\n' | timeout 30 "$QEMU" -M mps2-an505 -display none -S -monitor stdio \
    -serial null -plugin "$LIB,inline=on" -d plugin 2>&1) ||
    die "qemu-system-arm -plugin $LIB failed: $out"
grep -qx 'insns: 0' <<<"$out" || die "the plugin loaded but did not report (expected 'insns: 0'): $out"
log "qemu-system-arm $QEMU_VER loads it (API version $API) and it reports"
echo "$LIB"
