#!/usr/bin/env bash
# fresh_machine_test.sh — the README's first command on a machine that has
# nothing: a minimal Debian bookworm (debootstrap --variant=minbase, so not
# even gcc, python3, ca-certificates, cmake or libclang), the host's Rust
# toolchain (rustup's ~/.rustup and ~/.cargo/bin, read-only) and a clean
# clone of this repository's HEAD. Inside it, as root:
#
#   1. bash scripts/run.sh           must install what it needs (apt in the
#                                    chroot) and print the demo's success line
#   2. LIBCLANG_PATH=/nonexistent cargo build --release --target thumbv8m.main-none-eabi
#                                    (no libclang, no cbindgen in the chroot)
#
# The mirror is the one in this machine's own apt sources (scripts/lib.sh
# apt_mirror), known only at run time. /proc, /dev, /dev/pts and /sys are
# bind-mounted and every mount is undone on any exit (trap); the root is
# deleted only once nothing is mounted below it.
#
#   scripts/fresh_machine_test.sh [--keep]
#     --keep   leave the chroot in build/fresh-machine/root (for a look inside;
#              the next run starts afresh anyway)
#
# Needs root, debootstrap (installed when missing), about 1.5 GB in build/.
# Times of each stage are printed; last line: RESULT: <n> passed, <m> failed
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$ROOT/build/fresh-machine"
R="$WORK/root"
LOGS="$WORK/logs"
TIMEOUT_RUN="${BENTOCLAW_FRESH_TIMEOUT:-2400}"  # seconds for run.sh in the chroot
keep=0
for a in "$@"; do
    case "$a" in
        --keep) keep=1 ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        *) echo "fresh_machine_test: unknown argument: $a" >&2; exit 2 ;;
    esac
done

log() { printf 'fresh_machine_test: %s\n' "$*" >&2; }
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
finish() { echo "RESULT: $passed passed, $failed failed"; exit $((failed > 0)); }
abort() { bad "$*"; finish; }

[[ $(id -u) -eq 0 ]] || abort "must run as root (debootstrap, mount, chroot)"
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

# --- mounts and their cleanup ------------------------------------------------------
mounts_below() { findmnt -rn -o TARGET | awk -v r="$R" 'index($0, r "/") == 1 || $0 == r' | sort -r; }

# Processes whose root is the chroot were started by this script (run.sh,
# cargo, the backend): end them by id before unmounting.
kill_chroot_procs() {
    local p root pids=()
    for p in /proc/[0-9]*; do
        root=$(readlink "$p/root" 2>/dev/null) || continue
        [[ $root == "$R" ]] && pids+=("${p#/proc/}")
    done
    ((${#pids[@]})) || return 0
    kill -TERM "${pids[@]}" 2>/dev/null
    sleep 1
    kill -KILL "${pids[@]}" 2>/dev/null
    return 0
}

unmount_all() {
    local m
    kill_chroot_procs
    for _ in 1 2 3; do
        while read -r m; do
            [[ -n $m ]] && umount "$m" 2>/dev/null
        done < <(mounts_below)
        [[ -z "$(mounts_below)" ]] && return 0
        sleep 1
    done
    while read -r m; do
        [[ -n $m ]] && umount -l "$m" 2>/dev/null
    done < <(mounts_below)
    [[ -z "$(mounts_below)" ]]
}

remove_root() {
    if [[ -n "$(mounts_below)" ]]; then
        log "still mounted below $R; not deleting it:"
        mounts_below >&2
        return 1
    fi
    rm -rf "$R"
}

bg_pid=""
# shellcheck disable=SC2317  # called through the EXIT trap
cleanup() {
    # A step still running (debootstrap, or timeout around the chroot) is ours.
    if [[ -n $bg_pid ]] && kill -0 "$bg_pid" 2>/dev/null; then
        kill -TERM "$bg_pid" 2>/dev/null
        kill_chroot_procs
        wait "$bg_pid" 2>/dev/null
    fi
    unmount_all || log "could not unmount everything below $R"
    if ((keep == 0)); then remove_root || true; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# Long steps run in the background and are waited for: bash runs a trap only
# once the foreground command is done, but it interrupts `wait` at once.
fg_wait() { "$@" & bg_pid=$!; wait "$bg_pid"; }

bind() { # bind SRC DEST [ro]
    mkdir -p "$2"
    mount --bind "$1" "$2" || return 1
    if [[ ${3:-} == ro ]]; then
        mount -o remount,bind,ro "$2" || return 1
    fi
}

t_all=$SECONDS
# A previous run that was killed outright may have left mounts and a root.
unmount_all || abort "stale mounts below $R cannot be removed"
remove_root || abort "cannot remove the old $R"
mkdir -p "$WORK" "$LOGS"

# --- 1. a minimal Debian bookworm --------------------------------------------------
ensure_pkgs debootstrap debian-archive-keyring || abort "installing debootstrap"
mirror_line="$(apt_mirror "")" || abort "no Debian archive entry in this machine's apt sources"
MIRROR="${mirror_line%%$'\t'*}"
SIGNED_BY="${mirror_line#*$'\t'}"
[[ -f $SIGNED_BY ]] || SIGNED_BY=/usr/share/keyrings/debian-archive-keyring.gpg
log "debootstrap --variant=minbase bookworm (mirror from this machine's apt sources)"
t=$SECONDS
# .debs are kept in $WORK/debs between runs (saves the download, not the install).
mkdir -p "$WORK/debs"
if fg_wait debootstrap --variant=minbase --keyring="$SIGNED_BY" --cache-dir="$WORK/debs" \
        bookworm "$R" "$MIRROR" >"$LOGS/debootstrap.log" 2>&1; then
    ok "debootstrap minbase bookworm ($((SECONDS - t)) s)"
else
    tail -n 20 "$LOGS/debootstrap.log"
    abort "debootstrap (log: build/fresh-machine/logs/debootstrap.log)"
fi
t_boot=$((SECONDS - t))
[[ -s $R/etc/resolv.conf ]] || cp -L /etc/resolv.conf "$R/etc/resolv.conf"
# The network's own trust settings belong to the machine, like its apt
# mirror: local CA certificates (e.g. of an HTTPS proxy) go where Debian's
# ca-certificates picks them up when the scripts install it.
shopt -s nullglob
local_cas=(/usr/local/share/ca-certificates/*.crt)
shopt -u nullglob
if ((${#local_cas[@]})); then
    mkdir -p "$R/usr/local/share/ca-certificates"
    cp "${local_cas[@]}" "$R/usr/local/share/ca-certificates/"
fi

# What "nothing" means here: none of the tools the scripts install.
found_tools() {
    local x
    for x in gcc cc python3 cmake clang cbindgen bindgen faketime qemu-system-arm arm-none-eabi-gcc; do
        [[ -z "$(chroot "$R" /bin/sh -c "command -v $x" 2>/dev/null)" ]] || { echo "$x"; }
    done
    ls "$R"/usr/lib/x86_64-linux-gnu/libclang* 2>/dev/null
}
found="$(found_tools)"
check "the chroot starts without gcc, python3, cmake, libclang, cbindgen, qemu, arm gcc (found: ${found:-none})" \
    test -z "$found"
check "the chroot has no CA certificates (cargo must get them installed)" \
    test ! -e "$R/etc/ssl/certs/ca-certificates.crt"

# --- 2. mounts, Rust, the clone -------------------------------------------------------
if ! { bind /proc "$R/proc" && bind /dev "$R/dev" && bind /dev/pts "$R/dev/pts" \
        && bind /sys "$R/sys"; }; then
    abort "bind-mounting /proc /dev /dev/pts /sys"
fi
RUSTUP_HOST="${RUSTUP_HOME:-$HOME/.rustup}"
CARGO_HOST="${CARGO_HOME:-$HOME/.cargo}"
[[ -d $RUSTUP_HOST && -x $CARGO_HOST/bin/cargo ]] || abort "no rustup toolchain at $RUSTUP_HOST / $CARGO_HOST"
# ~/.cargo itself stays writable in the chroot (cargo keeps its registry
# there); only the toolchain and the rustup proxies come from the host.
if ! { bind "$RUSTUP_HOST" "$R/root/.rustup" ro && bind "$CARGO_HOST/bin" "$R/root/.cargo/bin" ro; }; then
    abort "bind-mounting the Rust toolchain"
fi
git clone -q --no-hardlinks "$ROOT" "$R/root/bentoclaw" || abort "git clone of the repository"
log "clean clone of $(git -C "$ROOT" rev-parse --short HEAD) in the chroot"

# A login-less root shell as on a fresh machine: Debian's PATH (no ~/.cargo/bin).
CHROOT_ENV=(/usr/bin/env -i HOME=/root USER=root LOGNAME=root TERM=dumb LANG=C.UTF-8
            PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)

# --- 3. the README's first command --------------------------------------------------
log "bash scripts/run.sh in the chroot (log: build/fresh-machine/logs/run.log)"
t=$SECONDS
fg_wait timeout --kill-after=10 "$TIMEOUT_RUN" chroot "$R" "${CHROOT_ENV[@]}" \
    /bin/bash -c 'cd /root/bentoclaw && bash scripts/run.sh' </dev/null >"$LOGS/run.log" 2>&1
rc=$?
t_run=$((SECONDS - t))
check "scripts/run.sh exits 0 as the first command on the fresh machine (exit $rc, $t_run s)" test "$rc" -eq 0
check "the demo ran to its end: 'demo finished: all as expected'" \
    grep -qx 'demo finished: all as expected' "$LOGS/run.log"
if ((rc != 0)); then tail -n 40 "$LOGS/run.log"; fi
# shellcheck disable=SC2016  # ${Package} is dpkg-query's, not the shell's
installed="$(chroot "$R" dpkg-query -W -f='${Package}\n' 2>/dev/null | sort)"
check "run.sh installed gcc and python3 itself" \
    bash -c "grep -qx gcc <<<'$installed' && grep -qx python3 <<<'$installed'"
check "run.sh needed no libclang" bash -c "! grep -q '^libclang' <<<'$installed'"

# --- 4. the library for the target with LIBCLANG_PATH pointing at nothing -----------
t=$SECONDS
# shellcheck disable=SC2016  # expanded by the shell in the chroot
fg_wait timeout --kill-after=10 600 chroot "$R" "${CHROOT_ENV[@]}" /bin/bash -c '
    cd /root/bentoclaw && export PATH="$HOME/.cargo/bin:$PATH"
    rustup target list --installed | grep -qx thumbv8m.main-none-eabi || exit 3
    LIBCLANG_PATH=/nonexistent cargo build --release --target thumbv8m.main-none-eabi' \
    </dev/null >"$LOGS/thumbv8m.log" 2>&1
rc=$?
t_target=$((SECONDS - t))
if ((rc == 3)); then
    bad "the host's toolchain lacks thumbv8m.main-none-eabi (rustup target add thumbv8m.main-none-eabi on the host)"
else
    check "LIBCLANG_PATH=/nonexistent cargo build --release --target thumbv8m.main-none-eabi ($t_target s)" \
        test "$rc" -eq 0
    check "the target archive exists" \
        test -f "$R/root/bentoclaw/target/thumbv8m.main-none-eabi/release/libbentoclaw.a"
    ((rc == 0)) || tail -n 20 "$LOGS/thumbv8m.log"
fi

echo "times: debootstrap ${t_boot} s, run.sh ${t_run} s, thumbv8m build ${t_target} s, total $((SECONDS - t_all)) s"
finish
