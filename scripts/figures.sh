# shellcheck shell=bash
# figures.sh — checks on measured figures in bash (sourced, not run), and
# image_share, scripts/size_report.sh's parse of a linker map. The caller
# defines pass() and fail(). The report scripts themselves no longer compare
# figures in bash: scripts/render_report.py makes their checks (the same
# rules, and its goals from scripts/goals.tsv); goal_le and status_le stay
# for scripts/test_harness_selftest.sh, which feeds them empty figures.
#
# A figure compared with a goal must first be a figure: bash arithmetic reads
# an empty string as 0, so `((x <= goal))` passes when a linker-map parse
# came back empty. Every comparison goes through goal_le, which fails a
# figure that is empty or not a decimal number, naming it.

# is_count VALUE — true when VALUE is a non-empty decimal number.
is_count() { [[ ${1-} =~ ^[0-9]+$ ]]; }

# figure_ok NAME VALUE — true when VALUE is a decimal number; otherwise one
# FAIL line naming the figure.
figure_ok() {
    local name=$1 value=${2-}
    is_count "$value" && return 0
    if [[ -z $value ]]; then
        fail "figure '$name' is empty (its measurement did not parse)"
    else
        fail "figure '$name' is not a decimal number: '$value'"
    fi
    return 1
}

# goal_le NAME VALUE GOAL [UNIT] [NOTE] — PASS when VALUE <= GOAL, FAIL when
# it is larger or is not a figure. Lines: "NAME VALUE UNIT <= GOAL UNIT NOTE".
goal_le() {
    local name=$1 value=${2-} goal=$3 unit=${4:-} note=${5:-}
    figure_ok "$name" "$value" || return 1
    figure_ok "goal of $name" "$goal" || return 1
    if ((10#$value <= 10#$goal)); then
        pass "$name $value$unit <= $goal$unit$note"
    else
        fail "$name $value$unit > $goal$unit$note"
        return 1
    fi
}

# goal_eq NAME VALUE WANT [NOTE_PASS] [NOTE_FAIL] — PASS when VALUE == WANT.
goal_eq() {
    local name=$1 value=${2-} want=$3
    figure_ok "$name" "$value" || return 1
    if ((10#$value == 10#$want)); then
        pass "${4:-$name $value}"
    else
        fail "${5:-$name $value, want $want}"
        return 1
    fi
}

# status_le VALUE GOAL — the status cell of a table row: PASS only for a
# figure within its goal.
status_le() {
    if is_count "${1-}" && is_count "${2-}" && ((10#$1 <= 10#$2)); then
        echo PASS
    else
        echo FAIL
    fi
}

# image_share MAP ARCHIVE — "code ram code_nobuiltins" of ARCHIVE's input
# sections in a GNU ld map (tests/image/map_share.awk); nothing when the map
# holds none (map_share.awk says why on stderr), so goal_le fails the figure.
image_share() {
    awk -v lib="$2" -f tests/image/map_share.awk "$1" |
        sed -nE 's/^code=([0-9]+) ram=([0-9]+) code_nobuiltins=([0-9]+)$/\1 \2 \3/p'
}
