# shellcheck shell=bash
# figures.sh — the map parse of scripts/size_report.sh (sourced, not run).
# Every check of a figure against its goal is scripts/render_report.py's
# (class Checks): a figure that is empty or not a number fails there, naming it.

# image_share MAP ARCHIVE — "code ram code_nobuiltins" of ARCHIVE's input
# sections in a GNU ld map (tests/image/map_share.awk); nothing when the map
# holds none (map_share.awk says why on stderr), so the renderer fails the figure.
image_share() {
    awk -v lib="$2" -f tests/image/map_share.awk "$1" |
        sed -nE 's/^code=([0-9]+) ram=([0-9]+) code_nobuiltins=([0-9]+)$/\1 \2 \3/p'
}
