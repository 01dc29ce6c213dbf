# shellcheck shell=bash
# lib.sh — helpers shared by the build and test scripts (sourced, not run).
# The sourcing script defines log().

# ensure_pkgs PKG... — installs the Debian packages that are missing, as root
# or through sudo -n; the package lists are refreshed only when an install
# from the current lists fails.
ensure_pkgs() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
            || missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    log "installing ${missing[*]}"
    local sudo=() out rc
    [[ $(id -u) -eq 0 ]] || sudo=(sudo -n)
    export DEBIAN_FRONTEND=noninteractive
    # dpkg's progress goes to a file; it is shown only when the install fails.
    out="$(mktemp)"
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$out" 2>&1 \
        || { "${sudo[@]}" apt-get update -qq >>"$out" 2>&1 || true
             "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$out" 2>&1; }
    rc=$?
    ((rc == 0)) || tail -n 30 "$out" >&2
    rm -f "$out"
    return "$rc"
}

# apt_mirror [SKIP_FILE] — prints "URI<TAB>SIGNED-BY" of the first Debian
# main-archive entry (not -security) in this machine's apt sources: deb822
# files first (Debian 12's default), then one-line sources.list files.
# SKIP_FILE (a sources file of our own) is not read. The mirror is only ever
# known at run time: no host name is written into the repository.
apt_mirror() {
    local skip=${1:-} f
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f $f && $f != "$skip" ]] || continue
        awk '
            function flush() {
                if (uris != "" && suites ~ /(^|[[:space:]])(bookworm|trixie|sid|stable|testing|unstable)([[:space:]]|$)/ \
                    && uris !~ /security/ && enabled != "no") {
                    split(uris, u, /[[:space:]]+/)
                    printf "%s\t%s\n", u[1], signed
                    found = 1; exit
                }
                uris = ""; suites = ""; signed = ""; enabled = ""
            }
            /^[[:space:]]*#/ { next }
            /^[[:space:]]*$/ { flush(); next }
            tolower($1) == "uris:"      { sub(/^[^:]*:[[:space:]]*/, ""); uris = $0 }
            tolower($1) == "suites:"    { sub(/^[^:]*:[[:space:]]*/, ""); suites = $0 }
            tolower($1) == "signed-by:" { sub(/^[^:]*:[[:space:]]*/, ""); signed = $0 }
            tolower($1) == "enabled:"   { sub(/^[^:]*:[[:space:]]*/, ""); enabled = tolower($0) }
            END { if (!found) flush() }
        ' "$f" | head -n1 | grep . && return 0
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [[ -f $f && $f != "$skip" ]] || continue
        # deb [opts] URI SUITE COMPONENTS...
        awk '
            $1 == "deb" || $1 == "deb-src" {
                i = 2; signed = ""
                if ($2 ~ /^\[/) {
                    for (; i <= NF; i++) {
                        if ($i ~ /^\[?signed-by=/) { s = $i; sub(/^\[?signed-by=/, "", s); sub(/\]$/, "", s); signed = s }
                        if ($i ~ /\]$/) { i++; break }
                    }
                }
                uri = $i; suite = $(i + 1)
                if (uri !~ /security/ && suite ~ /^(bookworm|trixie|sid|stable|testing|unstable)$/) {
                    printf "%s\t%s\n", uri, signed; exit
                }
            }
        ' "$f" | head -n1 | grep . && return 0
    done
    return 1
}

# deb_src_entry LIST SUITES — writes LIST (a deb822 file under
# /etc/apt/sources.list.d/): deb-src of the Debian mirror this machine
# already uses (apt_mirror, LIST itself not read) for SUITES (one word or
# several, space-separated), component main. Rewritten only when it differs.
# Sets APT_SRC_ONLY: apt-get options that read LIST alone (to refresh only
# that entry). The mirror is only known at run time.
deb_src_entry() {
    local list=$1 suites=$2 line mirror signed want
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo -n)
    line="$(apt_mirror "$list")" || return 1
    mirror=${line%%$'\t'*}
    signed=${line#*$'\t'}
    [[ -n $signed ]] || signed=/usr/share/keyrings/debian-archive-keyring.gpg
    want="Types: deb-src
URIs: $mirror
Suites: $suites
Components: main
Signed-By: $signed"
    if [[ ! -f $list ]] || [[ "$(cat "$list")" != "$want" ]]; then
        printf '%s\n' "$want" | "${sudo[@]}" tee "$list" >/dev/null || return 1
        log "wrote $list"
    fi
    # shellcheck disable=SC2034 # for the caller
    APT_SRC_ONLY=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=/dev/null"
                  -o "Dir::Etc::SourceList=$list" -o "APT::Get::List-Cleanup=0")
}
