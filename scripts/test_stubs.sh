#!/usr/bin/env bash
# test_stubs.sh — the Python stub mpy/bentoclaw.pyi against the built module
# and against a stock type checker.
#
# Usage: scripts/test_stubs.sh [--no-build]
#
#   1. the unix port (scripts/build_micropython.sh, incremental; --no-build
#      uses build/micropython/micropython as it is);
#   2. tests/stubs/stub_api.py (CPython) reads the stub into
#      build/stubs/api.json; tests/stubs/check_stub.py (MicroPython) compares
#      it with dir(bentoclaw), modbentoclaw.c's definitions, the call
#      signatures it probes and the types the functions return;
#   3. the same checker on each deliberately wrong stub of
#      `stub_api.py --list-mutants` must FAIL (one check each): the checker
#      cannot pass by accident;
#   4. tests/stubs/typed_example.py runs on the unix port (the example the
#      type checker accepts must also run);
#   5. mypy from PyPI, in a venv build/stubs-venv (`pip install mypy` when it
#      lacks it; BENTOCLAW_MYPY_SPEC overrides the requirement, e.g.
#      "mypy==1.15.0"): tests/stubs/run_mypy.py — the stub and the example
#      clean under --strict, tests/stubs/typed_bad.py refused line by line.
# Each part's own RESULT line is indented; the last line is
# "RESULT: <n> passed, <m> failed" over all of them (0 checks = failure).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MPY="$ROOT/build/micropython/micropython"
OUT="$ROOT/build/stubs"
VENV="$ROOT/build/stubs-venv"
SPEC="${BENTOCLAW_MYPY_SPEC:-mypy}"

log() { printf 'test_stubs: %s\n' "$*" >&2; }

passed=0
failed=0

# count LOG — adds LOG's last RESULT line to the totals (none: one failure).
count() {
    local last
    last="$(grep -E '^RESULT: [0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)"
    if [[ $last =~ ^RESULT:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
        passed=$((passed + BASH_REMATCH[1]))
        failed=$((failed + BASH_REMATCH[2]))
        ((BASH_REMATCH[1] + BASH_REMATCH[2] > 0)) || failed=$((failed + 1))
    else
        echo "FAIL $(basename "$1" .log): no RESULT line"
        failed=$((failed + 1))
    fi
}

one() {  # one CONDITION-STATUS WHAT
    if (($1 == 0)); then passed=$((passed + 1)); echo "ok   $2"; else failed=$((failed + 1)); echo "FAIL $2"; fi
}

finish() {
    ((passed + failed > 0)) || failed=1
    echo "RESULT: $passed passed, $failed failed"
    ((failed == 0))
    exit
}

indent() { sed -u 's/^/  /'; }

build=1
case "${1:-}" in
    --no-build) build=0 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    "") ;;
    *) echo "FAIL unknown argument $1"; failed=1; finish ;;
esac

# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
ensure_pkgs python3 python3-venv || { echo "FAIL apt-get install python3 python3-venv"; failed=1; finish; }
PYTHON=/usr/bin/python3
[[ -x $PYTHON ]] || PYTHON="$(command -v python3)"
mkdir -p "$OUT"

# --- 1. the interpreter ----------------------------------------------------------
if ((build)); then
    "$ROOT/scripts/build_micropython.sh" >"$OUT/build.log" 2>&1
    one $? "scripts/build_micropython.sh (log: build/stubs/build.log)"
fi
if [[ ! -x $MPY ]]; then
    echo "FAIL no interpreter at build/micropython/micropython"
    failed=$((failed + 1))
    finish
fi

# The checker and the example mount a RAM LittleFS at "/"; they start in a
# scratch folder all the same.
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mpy() { (cd "$WORK" && timeout -k 5 120 "$MPY" "$@"); }

# --- 2. the stub against the module -------------------------------------------------
echo "== check_stub.py: mpy/bentoclaw.pyi against the built module"
if "$PYTHON" "$ROOT/tests/stubs/stub_api.py" >"$OUT/api.json" 2>"$OUT/api.err"; then
    mpy "$ROOT/tests/stubs/check_stub.py" "$OUT/api.json" >"$OUT/check_stub.log" 2>&1
    rc=$?
    indent <"$OUT/check_stub.log"
    count "$OUT/check_stub.log"
    ((rc == 0)) || grep -q '^RESULT: [0-9]* passed, [1-9]' "$OUT/check_stub.log" \
        || { echo "FAIL check_stub.py exited $rc"; failed=$((failed + 1)); }
else
    cat "$OUT/api.err"
    echo "FAIL stub_api.py could not read the stub"
    failed=$((failed + 1))
fi

# --- 3. wrong stubs must fail --------------------------------------------------------
echo "== check_stub.py on deliberately wrong stubs (each must fail)"
mutants="$("$PYTHON" "$ROOT/tests/stubs/stub_api.py" --list-mutants)"
[[ -n $mutants ]] || { echo "FAIL no mutants listed"; failed=$((failed + 1)); }
while IFS=$'\t' read -r name what; do
    [[ -n $name ]] || continue
    if "$PYTHON" "$ROOT/tests/stubs/stub_api.py" --mutate "$name" >"$OUT/mutant.json" 2>"$OUT/mutant.err"; then
        mpy "$ROOT/tests/stubs/check_stub.py" "$OUT/mutant.json" >"$OUT/mutant-$name.log" 2>&1
        rc=$?
        caught="$(grep -c '^FAIL' "$OUT/mutant-$name.log")"
        ((rc == 1 && caught > 0)); one $? "mutant $name ($what): $caught check(s) fail"
    else
        cat "$OUT/mutant.err"
        one 1 "mutant $name: stub_api.py could not apply it"
    fi
done <<<"$mutants"

# --- 4. the typed example runs ------------------------------------------------------
echo "== typed_example.py on the unix port"
mpy "$ROOT/tests/stubs/typed_example.py" >"$OUT/typed_example.log" 2>&1
rc=$?
[[ $rc == 0 && "$(tail -n 1 "$OUT/typed_example.log")" == "typed_example: done" ]]
st=$?
((st == 0)) || indent <"$OUT/typed_example.log"
one $st "tests/stubs/typed_example.py runs to its end (exit $rc; log: build/stubs/typed_example.log)"

# --- 5. mypy -------------------------------------------------------------------------
echo "== mypy"
if ! "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
    log "creating $VENV"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" || { echo "FAIL python3 -m venv $VENV"; failed=$((failed + 1)); finish; }
fi
if [[ -n ${BENTOCLAW_MYPY_SPEC:-} ]] || ! "$VENV/bin/python" -c 'import mypy' 2>/dev/null; then
    log "pip install $SPEC"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$SPEC" >&2 \
        || { echo "FAIL pip install $SPEC"; failed=$((failed + 1)); finish; }
fi
timeout -k 5 600 "$VENV/bin/python" "$ROOT/tests/stubs/run_mypy.py" >"$OUT/run_mypy.log" 2>&1
rc=$?
indent <"$OUT/run_mypy.log"
count "$OUT/run_mypy.log"
((rc == 0)) || grep -q '^RESULT: [0-9]* passed, [1-9]' "$OUT/run_mypy.log" \
    || { echo "FAIL run_mypy.py exited $rc"; failed=$((failed + 1)); }

finish
