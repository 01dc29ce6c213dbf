# shellcheck shell=bash
# report_lib.sh — how the report scripts (scripts/size_report.sh,
# scripts/perf_report.sh, scripts/reliability_report.sh) hand their figures
# to scripts/render_report.py (sourced, not run). The caller sets FIG, the
# figure file (render_report.py's FIGURES: KEY<TAB>VALUE rows).
#
# fig KEY VALUE — one figure (VALUE on one line: tabs and newlines become
# spaces).
# pass TEXT / fail TEXT — a check the script made itself (a build, a link, a
# run): printed now, counted by the renderer with the figures' checks.

fig() {
    local value=${2-}
    value=${value//$'\t'/ }
    printf '%s\t%s\n' "$1" "${value//$'\n'/ }" >>"$FIG"
}
pass() {
    echo "PASS $*"
    printf 'check\tPASS\t%s\n' "$*" >>"$FIG"
}
fail() {
    echo "FAIL $*"
    printf 'check\tFAIL\t%s\n' "$*" >>"$FIG"
}
