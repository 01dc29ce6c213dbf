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
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo -n)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 \
        || { "${sudo[@]}" apt-get update -qq >&2 || true
             "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; }
}
