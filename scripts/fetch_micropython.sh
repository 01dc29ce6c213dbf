#!/usr/bin/env bash
# fetch_micropython.sh — get MicroPython 1.25 source from Debian's `micropython`
# source package (suite trixie) and unpack it under build/micropython-src/.
#
# The mirror is taken from this machine's own apt configuration at run time;
# no host name is written into the repository (spec §7).
#
# Output: build/micropython-src/micropython -> the unpacked source tree
#         (a symlink to the versioned directory dpkg-source created).
# Re-runs are no-ops once the tree is there. Needs root (apt).
#
# Environment:
#   BENTOCLAW_MPY_VERSION   version glob to fetch (default 1.25.0*)
#   BENTOCLAW_MPY_SUITE     Debian suite holding it (default trixie)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/build/micropython-src"
LINK="$DEST/micropython"
VERSION_GLOB="${BENTOCLAW_MPY_VERSION:-1.25.0*}"
SUITE="${BENTOCLAW_MPY_SUITE:-trixie}"
SRC_LIST=/etc/apt/sources.list.d/bentoclaw-${SUITE}-src.sources

log() { printf 'fetch_micropython: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Fixes we carry for MicroPython and its bundled libraries
# (mpy/patches/micropython/, applied in name order; a patch's header says
# what it fixes and how to reproduce it). Applied once; a re-run sees them
# applied and does nothing. 0002 (littlefs never unwound by a block device
# exception) is what keeps a failing Python block device from crashing the
# interpreter (tests/mpy/test_bdev_raise_gc.py).
apply_patches() {
    local p
    for p in "$ROOT"/mpy/patches/micropython/*.patch; do
        [[ -f $p ]] || continue
        if patch -d "$LINK/" -p1 -R --dry-run -s -f <"$p" >/dev/null 2>&1; then
            continue
        fi
        log "applying $(basename "$p")"
        patch -d "$LINK/" -p1 -s -f <"$p" || die "patch $(basename "$p") does not apply"
    done
}

if [[ -f "$LINK/ports/unix/Makefile" && -f "$LINK/py/mpconfig.h" ]]; then
    log "source present: $(readlink -f "$LINK")"
    apply_patches
    exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || die "must run as root (apt-get source/update)"
    SUDO=(sudo -n)
fi
export DEBIAN_FRONTEND=noninteractive

# --- 1. tools -------------------------------------------------------------------
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
ensure_pkgs dpkg-dev xz-utils patch debian-archive-keyring || die "installing dpkg-dev xz-utils patch"

# --- 2. deb-src entry for the suite, on the Debian mirror this machine already
# uses (scripts/lib.sh deb_src_entry); refreshed below only when needed --------
deb_src_entry "$SRC_LIST" "$SUITE" || die "no Debian archive entry found in /etc/apt sources"
log "using the machine's Debian mirror for deb-src $SUITE"

version_available() {
    apt-cache showsrc micropython 2>/dev/null \
        | awk '/^Version:/ {print $2}' \
        | while read -r v; do
            # shellcheck disable=SC2254
            case "$v" in $VERSION_GLOB) echo "$v" ;; esac
          done | sort -V | tail -n1
}
ver="$(version_available || true)"
if [[ -z $ver ]]; then
    log "apt-get update (deb-src $SUITE only)"
    "${SUDO[@]}" apt-get "${APT_SRC_ONLY[@]}" update -qq
    ver="$(version_available || true)"
fi
[[ -n $ver ]] || die "no micropython source $VERSION_GLOB in $SUITE (apt-cache showsrc micropython)"
log "micropython source version $ver"

# --- 3. download + unpack --------------------------------------------------------
mkdir -p "$DEST"
cd "$DEST"
upstream="${ver#*:}"; upstream="${upstream%-*}"
dsc="micropython_${upstream}-${ver##*-}.dsc"
if [[ ! -f $dsc ]]; then
    # Download as the invoking user would; apt warns about "unsandboxed" as root.
    apt-get source --download-only -qq "micropython=$ver" 2>&1 \
        | grep -v 'unsandboxed' >&2 || true
fi
[[ -f $dsc ]] || die "download failed: $dsc not in $DEST"

dir="micropython-${upstream}"
if [[ ! -f $dir/ports/unix/Makefile ]]; then
    rm -rf "$dir" "$dir.tmp"
    # apt-get checked the files against the signed Sources index; dpkg-source
    # checks them against the .dsc again. It cannot check the uploader's
    # signature without debian-keyring and says so: kept out of sight unless
    # the unpacking fails.
    dpkg-source -x "$dsc" "$dir.tmp" >"$DEST/dpkg-source.log" 2>&1 \
        || { cat "$DEST/dpkg-source.log" >&2; die "dpkg-source -x $dsc failed"; }
    mv "$dir.tmp" "$dir"
fi
ln -sfn "$dir" "$LINK"
apply_patches
log "source ready: $DEST/$dir"
