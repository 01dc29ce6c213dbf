# shellcheck shell=bash disable=SC2034 # GOAL_STATUS and the ceilings are read by the sourcing script
# goals.sh — goals and ceilings, for the report scripts (scripts/perf_report.sh,
# scripts/size_report.sh; sourced after scripts/figures.sh). The caller
# defines pass() and fail().
#
# The policy for a goal of an issue:
#  * a goal that is met is enforced: FAIL when a later run misses it;
#  * a goal missed today has a ceiling, in scripts/goals.tsv (today's
#    figure rounded up by about 5 %). The run prints one line
#    "MISSED <what>: <figure> > <goal> (ceiling <c>: within|OVER)", counts a
#    PASS while the figure stays within the ceiling and a FAIL when it goes
#    over it: a missed goal does not fail the suite, and cannot get worse
#    silently either. Once the goal is met, the ceiling can go.
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

# goals_load FILE — reads the goals and ceilings of FILE (scripts/goals.tsv):
# tab-separated, a header row, then one row a goal with the columns key,
# issue, value, unit, ceiling, why. A row KEY sets KEY_GOAL to the value and
# KEY_CEILING to the ceiling ("" where the goal is enforced). A goal judged
# per export, per path or per operation has that phrase ("per ...") in its
# ceiling column: KEY_CEILING is then an associative array, filled from the
# rows KEY[NAME] after it (an empty value, a ceiling); a NAME without a row
# is enforced. A row that does not parse fails. (Python reads it with
# csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE).)
goals_load() {
    local file=$1 line n=0 key issue value unit ceiling why name label
    while IFS= read -r line || [[ -n $line ]]; do
        n=$((n + 1))
        IFS=$'\x1f' read -r key issue value unit ceiling why <<<"${line//$'\t'/$'\x1f'}"
        ((n == 1)) && [[ $key == key ]] && continue
        name=$key label=""
        [[ $key =~ ^([A-Z][A-Z0-9_]*)\[(.+)\]$ ]] && name=${BASH_REMATCH[1]} label=${BASH_REMATCH[2]}
        if ! [[ $name =~ ^[A-Z][A-Z0-9_]*$ ]]; then
            :
        elif [[ -n $label ]]; then
            if [[ -z $value && $(declare -p "${name}_CEILING" 2>/dev/null) == "declare -A"* ]] &&
                is_number "$ceiling"; then
                eval "${name}_CEILING[\$label]=\$ceiling"
                continue
            fi
        elif is_number "$value" && [[ $ceiling == per\ * ]]; then
            printf -v "${name}_GOAL" %s "$value"
            declare -gA "${name}_CEILING=()"
            continue
        elif is_number "$value" && { [[ -z $ceiling ]] || is_number "$ceiling"; }; then
            printf -v "${name}_GOAL" %s "$value"
            printf -v "${name}_CEILING" %s "$ceiling"
            continue
        fi
        fail "$file line $n: not a goal row (key, issue, value, unit, ceiling, why; tab-separated): $line"
    done <"$file"
}
goals_load "$(dirname "${BASH_SOURCE[0]}")/goals.tsv"
