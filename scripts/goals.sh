# shellcheck shell=bash disable=SC2034 # GOAL_STATUS and the ceilings are read by the sourcing script
# goals.sh — goals and ceilings, for the report scripts (scripts/perf_report.sh,
# scripts/size_report.sh; sourced after scripts/figures.sh). The caller
# defines pass() and fail().
#
# The policy for a goal of an issue:
#  * a goal that is met is enforced: FAIL when a later run misses it;
#  * a goal missed today has a ceiling, a constant in the caller (today's
#    figure rounded up by about 5 %). The run prints one line
#    "MISSED <what>: <figure> > <goal> (ceiling <c>: within|OVER)", counts a
#    PASS while the figure stays within the ceiling and a FAIL when it goes
#    over it: a missed goal does not fail the suite, and cannot get worse
#    silently either. Once the goal is met, the ceiling constant can go.
#
# goal_check WHAT VALUE GOAL CEILING [UNIT]
#   VALUE, GOAL, CEILING are decimal numbers (fractions allowed); CEILING ""
#   means the goal is enforced. Sets GOAL_STATUS to the table cell:
#   "PASS", "**FAIL**", "**MISSED**; ceiling C: within" or
#   "**MISSED**; ceiling C: **OVER**". An empty or unparsable figure fails.
#   Returns 1 when the run counts a FAIL.

is_number() { [[ ${1-} =~ ^[0-9]+(\.[0-9]+)?$ ]]; }

# num_le A B — true when A <= B (decimal fractions).
num_le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }

# goal_num N — N with thousands separators when it is a whole number ≥ 1000.
goal_num() {
    awk -v n="$1" 'BEGIN { if (n !~ /^[0-9]+$/) { print n; exit } s = sprintf("%d", n); o = ""
        while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) } print s o }'
}

GOAL_STATUS=""
goal_check() {
    local what=$1 value=${2-} goal=$3 ceiling=${4-} unit=${5-} c
    c=$(goal_num "$ceiling")
    if ! is_number "$value"; then
        fail "$what: figure '$value' is not a number (its measurement did not parse)"
        GOAL_STATUS="**FAIL** (not measured)"
        return 1
    fi
    if num_le "$value" "$goal"; then
        pass "$what: $value$unit <= goal $goal$unit"
        GOAL_STATUS=PASS
        [[ -n $ceiling ]] && echo "NOTE $what: the goal is met now; its ceiling ($ceiling$unit) can go"
        return 0
    fi
    if [[ -z $ceiling ]]; then
        fail "$what: $value$unit > goal $goal$unit"
        GOAL_STATUS="**FAIL**"
        return 1
    fi
    if num_le "$value" "$ceiling"; then
        echo "MISSED $what: $value$unit > goal $goal$unit (ceiling $ceiling$unit: within)"
        pass "$what: $value$unit within ceiling $ceiling$unit (goal $goal$unit missed)"
        GOAL_STATUS="**MISSED**; ceiling $c$unit: within"
        return 0
    fi
    echo "MISSED $what: $value$unit > goal $goal$unit (ceiling $ceiling$unit: OVER)"
    fail "$what: $value$unit over its ceiling $ceiling$unit (goal $goal$unit)"
    GOAL_STATUS="**MISSED**; ceiling $c$unit: **OVER**"
    return 1
}

# Ceilings shared by both scripts (the minimal image is measured by each).
# issue 22 budget "vendor-ABI build within 24 KiB of code" not met (it
# replaced issue 10's 12 KiB, whose ceiling this was); ceiling =
# measured 22069 B (M33 flags, default features) + 5 %, rounded up to 256 B;
# raised by issue 23 (seq renumbering, keys over the cap, the context's
# escapes: +1,398 B, measured 24,290 B) with the same 404 B of headroom,
# rounded up to 256 B. Raised by issues 20 and 21 (a rate slot for each of
# the vendor registry's 32 tools and the library's built-ins, their names in
# the image; the port's task check): measured 25,038 B, +748 B, with about
# 300 B of headroom, rounded up to 256 B. Raised by issue 23's last defects
# (a forget or a change in a hand-edited shard the index cannot hold wins
# everywhere: +354 B, measured 25,392 B) with the same headroom.
MIN_CODE_CEILING=25600
