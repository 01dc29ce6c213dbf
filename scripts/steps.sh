# shellcheck shell=bash
# steps.sh — how scripts/test.sh runs and counts its steps (sourced, not
# run; scripts/test_harness_selftest.sh feeds these functions fake outputs).
#
# A step must say what it ran, in count lines:
#   RESULT: N passed, M failed                  our scripts (lines are summed)
#   test result: ok. N passed; M failed; ...    cargo test / Miri, one per binary
# A step without any count line, or whose counts add up to 0 passed and 0
# failed, ran no test: it FAILS. A step that is one check by nature (a build,
# rustfmt, clippy, the setup) says so with `check` instead of `step`: the
# command's exit status becomes its count line. A cargo test run with name
# filters goes through `cargo_filtered`, which fails a filter that matched no
# test that ran.
#
# The caller sets ROOT; STEP_LOGDIR (default $ROOT/build/test-logs) receives
# one log per step, named after the step (spaces become underscores).

passed=0
failed=0
failures=()

# count_output LOG NAME RC — adds the step's counts to the totals.
count_output() {
    local log=$1 name=$2 rc=$3 p=0 f=0 lines=0 line why=""
    while IFS= read -r line || [[ -n $line ]]; do
        if [[ $line =~ ^RESULT:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
            p=$((p + 10#${BASH_REMATCH[1]})); f=$((f + 10#${BASH_REMATCH[2]})); lines=$((lines + 1))
        elif [[ $line =~ ^test\ result:.*\ ([0-9]+)\ passed\;\ ([0-9]+)\ failed ]]; then
            p=$((p + 10#${BASH_REMATCH[1]})); f=$((f + 10#${BASH_REMATCH[2]})); lines=$((lines + 1))
        fi
    done <"$log"
    if ((lines == 0)); then
        f=$((f + 1)); why="no count line: the step ran no test (a single check goes through 'check')"
    elif ((p + f == 0)); then
        f=1; why="0 passed, 0 failed: the step ran no test"
    elif ((rc != 0 && f == 0)); then
        f=1; why="exit status $rc"
    fi
    passed=$((passed + p))
    failed=$((failed + f))
    if ((f > 0)); then failures+=("$name"); fi
    printf '== %-28s %s (%d passed, %d failed)%s\n' "$name" \
        "$([[ $rc == 0 && $f == 0 ]] && echo ok || echo FAILED)" "$p" "$f" "${why:+: $why}"
}

# step NAME CMD... — runs CMD, keeps its output in the step's log, counts it.
step() {
    local name=$1; shift
    local dir=${STEP_LOGDIR:-$ROOT/build/test-logs}
    local log="$dir/${name//[ \/]/_}.log" # a "/" in a name is no directory
    mkdir -p "$dir"
    printf '\n== %s: %s\n' "$name" "$*"
    local start=$SECONDS
    "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    printf '== %s took %ds\n' "$name" $((SECONDS - start))
    count_output "$log" "$name" "$rc"
}

# check NAME CMD... — a step that is one check: passes when CMD exits 0.
check() {
    local name=$1; shift
    step "$name" one_check "$@"
}

# one_check CMD... — runs CMD and prints its exit status as one count line.
# Count lines CMD prints itself are indented, so they are not counted twice.
one_check() {
    "$@" 2>&1 | sed -uE 's/^(RESULT:|test result:)/  \1/'
    local rc=${PIPESTATUS[0]}
    if ((rc == 0)); then
        echo "RESULT: 1 passed, 0 failed"
    else
        echo "RESULT: 0 passed, 1 failed"
    fi
    return "$rc"
}

# cargo_filtered CARGO_ARGS... -- TEST_ARGS... — runs cargo (test, miri test)
# and then fails every name filter among TEST_ARGS that no test that ran
# matched: cargo itself reports a filter that matches nothing as
# "test result: ok. 0 passed". Filters match as libtest's do (substring of
# the test's path; whole path with --exact). Extra last line on failure:
# "RESULT: 0 passed, <unmatched filters> failed".
cargo_filtered() {
    local args=("$@") filters=() exact=0 after=0 skip_value=0 a
    for a in "${args[@]}"; do
        if ((!after)); then
            [[ $a == -- ]] && after=1
            continue
        fi
        if ((skip_value)); then skip_value=0; continue; fi
        case $a in
            --exact) exact=1 ;;
            --skip|--test-threads|--color|--format|--logfile|-Z|--shuffle-seed) skip_value=1 ;;
            -*) ;;
            *) filters+=("$a") ;;
        esac
    done
    local out
    out=$(mktemp)
    "$@" 2>&1 | tee "$out"
    local rc=${PIPESTATUS[0]}
    # The tests that ran: "test <path> ... ok" / "... FAILED" (not "ignored").
    local ran
    ran=$(sed -nE 's/^test (.+) \.\.\. (ok|FAILED)$/\1/p' "$out")
    rm -f "$out"
    local unmatched=0 flt
    for flt in "${filters[@]}"; do
        if ((exact)); then
            grep -qxF -- "$flt" <<<"$ran" && continue
        else
            grep -qF -- "$flt" <<<"$ran" && continue
        fi
        echo "FAIL cargo_filtered: the filter '$flt' matched no test that ran"
        unmatched=$((unmatched + 1))
    done
    if ((unmatched > 0)); then
        echo "RESULT: 0 passed, $unmatched failed"
        return 1
    fi
    return "$rc"
}
