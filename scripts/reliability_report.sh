#!/usr/bin/env bash
# reliability_report.sh — the fault-injection figures of the whole project in
# one table: docs/RELIABILITY.md (generated; deterministic, no timestamps).
# This script runs the tests whose logs are stale and lists the logs in
# target/reliability/figures.tsv; scripts/render_report.py reads their rows,
# judges them and writes the document (its prose: docs/templates/RELIABILITY.md).
# Rerun the renderer alone on the saved list:
#   python3 scripts/render_report.py reliability target/reliability/figures.tsv -o docs/RELIABILITY.md
#
# Usage: scripts/reliability_report.sh [--run] [EXTRA_LOG...]
#
# Sources of rows, each a line printed by a test:
#     RELIABILITY: <fault class>|<cases tried>|<losses>[|<command>]
#     CRASHCLASS: <crash class>|<reproducer test>|<result now>[|<before the fix>]
#   * every tests/mpy/test_*.py that mentions "reliability" or "CRASHCLASS"
#     (the power-cut, flash-fault, corrupt-file and issue-13 crash tests, and
#     any other test that prints such lines). Their output is read from
#     build/test-mpy/<name>.log when that log is newer than the test,
#     tests/mpy/claw_rig.py, tests/mpy/fault_rig.py and the interpreter;
#     otherwise (or with --run) the stale tests are run first with
#     scripts/test_mpy.sh --no-build.
#   * EXTRA_LOG files (e.g. build/test-logs/*.log from Rust fuzzing/property
#     tests): every RELIABILITY line in them, anywhere.
# A row fails when its losses are not 0 or the test that printed it failed;
# a crash-class row fails when its test failed or its result says FAILED; a
# reporting test that failed without printing rows is one failed row.
# The last line is "RESULT: <n> passed, <m> failed"; the exit status is 1 on
# any failure.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
LOGDIR="build/test-mpy"
MPY="build/micropython/micropython"
OUT="docs/RELIABILITY.md"
RUNLOG="build/reliability-run.log"
FIG="target/reliability/figures.tsv"

force=0
extras=()
for a in "$@"; do
    case "$a" in
        --run) force=1 ;;
        -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
        *) extras+=("$a") ;;
    esac
done

# --- which tests report, and are their logs fresh? ----------------------------------------
shopt -s nullglob
tests=()
for t in tests/mpy/test_*.py; do
    grep -qiE 'reliability|CRASHCLASS' "$t" && tests+=("$(basename "$t" .py)")
done
shopt -u nullglob

stale=()
for name in "${tests[@]}"; do
    log="$LOGDIR/$name.log"
    fresh=1
    if ((force)) || [[ ! -f $log ]]; then
        fresh=0
    else
        for dep in "tests/mpy/$name.py" tests/mpy/claw_rig.py tests/mpy/fault_rig.py "$MPY"; do
            [[ -e $dep && $dep -nt $log ]] && fresh=0
        done
    fi
    ((fresh)) || stale+=("$name")
done

if ((${#stale[@]})); then
    echo "running: scripts/test_mpy.sh ${stale[*]}"
    mkdir -p build
    build_arg=(--no-build)
    [[ -x $MPY ]] || build_arg=()
    # Indented, so that its own RESULT line is not taken for this script's.
    bash scripts/test_mpy.sh "${build_arg[@]}" "${stale[@]}" >"$RUNLOG" 2>&1
    sed 's/^/  | /' "$RUNLOG"
else
    echo "using the logs in $LOGDIR/ (newer than the tests and the interpreter)"
fi

# --- the rows, the checks and the report: scripts/render_report.py -----------------------
mkdir -p "$(dirname "$FIG")"
{
    for name in "${tests[@]}"; do printf 'test\t%s\n' "$name"; done
    for f in "${extras[@]}"; do printf 'extra\t%s\n' "$f"; done
} >"$FIG"
python3 scripts/render_report.py reliability "$FIG" -o "$OUT"
