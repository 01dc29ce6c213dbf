#!/usr/bin/env bash
# gen_headers.sh — regenerates the committed bindings with bindgen and
# cbindgen (scripts/gen-headers, pinned by its Cargo.lock):
#   src/ffi/sys.rs                       bindgen, from include/claw_port.h
#   include/claw_session.h, claw_safety.h, claw_ext.h   cbindgen, from src/ffi
#
#   scripts/gen_headers.sh           write them into the tree
#   scripts/gen_headers.sh --check   generate into a scratch directory and
#                                    fail on any difference (the test command)
#
# Needs libclang (Debian libclang-dev), which only this step does: building
# the library itself runs no generator.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"

log() { printf 'gen_headers: %s\n' "$*" >&2; }
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
ensure_pkgs libclang-dev

check=0
[[ ${1:-} == --check ]] && check=1

GEN="$ROOT/target/gen-headers"
cargo build --quiet --release --manifest-path scripts/gen-headers/Cargo.toml --target-dir "$GEN"
BIN="$GEN/release/bentoclaw-gen-headers"
FILES=(src/ffi/sys.rs include/claw_session.h include/claw_safety.h include/claw_ext.h)

if ((check == 0)); then
    "$BIN" "$ROOT" "$ROOT"
    git diff --stat -- "${FILES[@]}" || true
    exit 0
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
"$BIN" "$ROOT" "$scratch"
stale=0
for f in "${FILES[@]}"; do
    if diff -u "$f" "$scratch/$f"; then
        echo "ok   $f"
    else
        echo "STALE $f: run scripts/gen_headers.sh and commit"
        stale=$((stale + 1))
    fi
done
echo "RESULT: $((${#FILES[@]} - stale)) passed, $stale failed"
((stale == 0))
