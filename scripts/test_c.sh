#!/usr/bin/env bash
# shellcheck disable=SC2054 # commas inside -f/-W options are not separators
# C tests of the bentoclaw ABI: builds the host staticlib, checks the headers'
# ABI with and without -fshort-enums, builds tests/c/test_claw.c against
# include/ under ASan + UBSan, runs it and forwards its RESULT line.
#
#   scripts/test_c.sh            # last line: RESULT: <n> passed, <m> failed
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
OUT=$ROOT/target/ctest
mkdir -p "$OUT"

fail() { echo "test_c: $*" >&2; echo "RESULT: 0 passed, 1 failed"; exit 1; }

CC=${CC:-cc}
if ! command -v "$CC" >/dev/null; then
    apt-get install -y gcc libc6-dev >&2 || fail "no C compiler"
fi

echo "== cargo build --release --features agent (host staticlib)"
cargo build --release --features agent >&2 || fail "cargo build --release failed"
LIB=$ROOT/target/release/libbentoclaw.a
[[ -f $LIB ]] || fail "$LIB missing"

CFLAGS=(-std=c11 -Wall -Wextra -Werror -g -Iinclude -Itests/c)
SAN=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)

echo "== header ABI (static asserts), with and without -fshort-enums"
abi_ok=0
for flags in "" "-fshort-enums"; do
    # shellcheck disable=SC2086 # $flags is one optional word
    if "$CC" "${CFLAGS[@]}" $flags -c tests/c/abi_check.c -o "$OUT/abi_check.o"; then
        echo "ok   header ABI ${flags:-(default enums)}"
    else
        echo "FAIL header ABI ${flags:-(default enums)}"
        abi_ok=1
    fi
done

echo "== build test_claw (ASan + UBSan)"
"$CC" "${CFLAGS[@]}" "${SAN[@]}" tests/c/test_claw.c tests/c/port_posix.c \
    "$LIB" -Wl,--gc-sections -lpthread -ldl -lm -o "$OUT/test_claw" || fail "test_claw did not build"

echo "== run"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    "$OUT/test_claw" >"$OUT/test_claw.log" 2>&1
rc=$?
# The binary's own RESULT line is folded into the one printed last.
grep -v '^RESULT:' "$OUT/test_claw.log"

result=$(grep -E '^RESULT: [0-9]+ passed, [0-9]+ failed$' "$OUT/test_claw.log" | tail -n 1)
if [[ -z $result ]]; then
    fail "test_claw crashed or printed no RESULT line (exit $rc)"
fi
passed=$(sed -E 's/RESULT: ([0-9]+) passed.*/\1/' <<<"$result")
failed=$(sed -E 's/.* ([0-9]+) failed/\1/' <<<"$result")
# The two header builds count as two checks.
if ((abi_ok == 0)); then passed=$((passed + 2)); else failed=$((failed + 1)); passed=$((passed + 1)); fi
if ((rc != 0 && failed == 0)); then failed=1; fi
echo "RESULT: $passed passed, $failed failed"
((failed == 0))
