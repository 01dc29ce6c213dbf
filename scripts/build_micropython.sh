#!/usr/bin/env bash
# build_micropython.sh — build MicroPython's unix port with the `bentoclaw`
# user C module and the Rust staticlib, for tests and the demo.
#
#   1. scripts/fetch_micropython.sh   (Debian source package, suite trixie)
#   2. cargo build --release --features agent -> target/release/libbentoclaw.a (host)
#   3. make -C <src>/ports/unix USER_C_MODULES=<repo root> ...
#   4. copy the interpreter to build/micropython/micropython
#
# Re-runs are incremental (cargo and make); a newer libbentoclaw.a forces a relink.
#
# Environment:
#   BENTOCLAW_JOBS            parallel make jobs (default 2)
#   BENTOCLAW_SKIP_CARGO=1    do not run cargo (use the existing staticlib)
#   BENTOCLAW_USER_C_MODULES  parent folder of the user C modules
#                             (default: the repo root, i.e. mpy/micropython.mk)
#   BENTOCLAW_MPY_MAKE_ARGS   extra make arguments (e.g. "DEBUG=1")
#   BENTOCLAW_MPY_BUILD       name of a second build beside the default one
#                             (e.g. "vendor": scripts/test_vendor_binding.sh):
#                             objects in build/mpy-unix-<name>, the interpreter
#                             build/micropython-<name>/micropython
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/build/micropython-src/micropython"
MPY_BUILD="${BENTOCLAW_MPY_BUILD:-standard}"
OUT_DIR="$ROOT/build/micropython$([[ $MPY_BUILD == standard ]] || printf -- '-%s' "$MPY_BUILD")"
USERMODS="${BENTOCLAW_USER_C_MODULES:-$ROOT}"
JOBS="${BENTOCLAW_JOBS:-2}"
STAGE="$ROOT/build/mpy-unix-$MPY_BUILD"   # the port's BUILD= directory
STATICLIB="$ROOT/target/release/libbentoclaw.a"

log() { printf 'build_micropython: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# --- Debian packages the build needs --------------------------------------------
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
# ca-certificates: cargo fetches the crates over HTTPS (a minimal Debian has none).
ensure_pkgs build-essential libffi-dev pkg-config python3 ca-certificates

"$ROOT/scripts/fetch_micropython.sh"
[[ -f $SRC/ports/unix/Makefile ]] || die "no MicroPython source at $SRC"

# --- Rust staticlib ---------------------------------------------------------------
if [[ ${BENTOCLAW_SKIP_CARGO:-0} != 1 ]]; then
    if [[ -f $ROOT/Cargo.toml ]]; then
        # rustup installs into ~/.cargo/bin, which a non-login shell may lack.
        [[ -x ${CARGO_HOME:-$HOME/.cargo}/bin/cargo ]] && PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
        command -v cargo >/dev/null || die "cargo not found (install Rust with rustup)"
        log "cargo build --release --features agent"
        (cd "$ROOT" && cargo build --release --features agent --quiet)
        [[ -f $STATICLIB ]] || die "cargo did not produce $STATICLIB"
    else
        log "warning: no Cargo.toml at the repo root; skipping the Rust build"
    fi
fi

# --- user C modules: the make build includes every $(USER_C_MODULES)/*/micropython.mk
shopt -s nullglob
mods=("$USERMODS"/*/micropython.mk)
shopt -u nullglob
if [[ $USERMODS == "$ROOT" ]]; then
    for m in "${mods[@]}"; do
        [[ $m == "$ROOT/mpy/micropython.mk" ]] \
            || die "unexpected user module $m (only mpy/micropython.mk may sit one level below the repo root)"
    done
fi
((${#mods[@]})) || log "warning: no */micropython.mk under $USERMODS; building a plain interpreter"

# --- the unix port -----------------------------------------------------------------
# Debian's source package strips the bundled third-party trees (berkeley-db,
# mbedtls, most of micropython-lib) and patches extmod.mk to link the system
# mbedtls; none of that is needed here, so switch it off from the command line
# (no file of MicroPython is changed):
#   FROZEN_MANIFEST=        nothing frozen (needs micropython-lib; also no mpy-cross)
#   MICROPY_PY_BTREE=0      lib/berkeley-db-1.xx is empty
#   MICROPY_PY_SSL=0 MICROPY_SSL_MBEDTLS=0   lib/mbedtls is empty
# The standard variant keeps MICROPY_VFS_LFS2=1 (vfs.VfsLfs2), os.getenv, socket.
MAKE_ARGS=(
    -C "$SRC/ports/unix"
    -j"$JOBS"
    VARIANT=standard
    BUILD="$STAGE"
    USER_C_MODULES="$USERMODS"
    FROZEN_MANIFEST=
    MICROPY_PY_BTREE=0
    MICROPY_PY_SSL=0
    MICROPY_SSL_MBEDTLS=0
    MICROPY_SSL_AXTLS=0
    STRIP=true
    BENTOCLAW_LIB="$STATICLIB"
)
if [[ -n ${BENTOCLAW_MPY_MAKE_ARGS:-} ]]; then
    read -r -a extra <<<"$BENTOCLAW_MPY_MAKE_ARGS"
    MAKE_ARGS+=("${extra[@]}")
fi

# A different set of user modules invalidates the generated module tables:
# start that build directory afresh. The port's link rule depends on the
# objects only, so also relink when the staticlib is newer than the last link.
stamp="$STAGE/.bentoclaw-config"
config="$USERMODS ${BENTOCLAW_MPY_MAKE_ARGS:-}"
if [[ -d $STAGE && ( ! -f $stamp || "$(cat "$stamp")" != "$config" ) ]]; then
    log "user modules or make arguments changed: clean rebuild"
    rm -rf "$STAGE"
fi
if [[ -f $STAGE/micropython && -f $STATICLIB && $STATICLIB -nt $STAGE/micropython ]]; then
    rm -f "$STAGE/micropython"
fi

log "make unix port (USER_C_MODULES=$USERMODS)"
mkdir -p "$STAGE"
printf '%s' "$config" >"$stamp"
make_log="$ROOT/build/mpy-make$([[ $MPY_BUILD == standard ]] || printf -- '-%s' "$MPY_BUILD").log"
make "${MAKE_ARGS[@]}" >"$make_log" 2>&1 || {
    tail -n 40 "$make_log" >&2
    die "unix port build failed (full log: ${make_log#"$ROOT"/})"
}

mkdir -p "$OUT_DIR"
if ! cmp -s "$STAGE/micropython" "$OUT_DIR/micropython"; then
    cp -f "$STAGE/micropython" "$OUT_DIR/micropython.tmp"
    mv -f "$OUT_DIR/micropython.tmp" "$OUT_DIR/micropython"
fi
"$OUT_DIR/micropython" -c 'import vfs; vfs.VfsLfs2' \
    || die "built interpreter lacks vfs.VfsLfs2"
log "ready: ${OUT_DIR#"$ROOT"/}/micropython"
