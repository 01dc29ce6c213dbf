#!/usr/bin/env bash
# reliability_report.sh — the fault-injection figures of the whole project in
# one table: docs/RELIABILITY.md (generated; deterministic, no timestamps).
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
cd "$ROOT"
LOGDIR="build/test-mpy"
MPY="build/micropython/micropython"
OUT="docs/RELIABILITY.md"
RUNLOG="build/reliability-run.log"

force=0
extras=()
for a in "$@"; do
    case "$a" in
        --run) force=1 ;;
        -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
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

# --- rows ----------------------------------------------------------------------------------
# Each row: class, cases, losses, source, command, ok(1/0)
rows_class=() rows_cases=() rows_losses=() rows_source=() rows_cmd=() rows_ok=()
re='^[[:space:]]*RELIABILITY: ([^|]+)\|([0-9]+)\|([0-9]+)(\|(.*))?[[:space:]]*$'

add_rows() { # file source default_cmd test_ok
    local file=$1 source=$2 cmd=$3 test_ok=$4 line n=0 ok
    while IFS= read -r line || [[ -n $line ]]; do
        [[ $line =~ $re ]] || continue
        local c=${BASH_REMATCH[1]} k=${BASH_REMATCH[2]} l=${BASH_REMATCH[3]} rc=${BASH_REMATCH[5]:-$cmd}
        ok=1
        ((l == 0 && test_ok)) || ok=0
        rows_class+=("${c%"${c##*[![:space:]]}"}") rows_cases+=("$k") rows_losses+=("$l")
        rows_source+=("$source") rows_cmd+=("$rc") rows_ok+=("$ok")
        n=$((n + 1))
    done <"$file"
    return $((n == 0))
}

# Crash-class rows: class, before, now, command, ok(1/0)
crash_class=() crash_before=() crash_now=() crash_cmd=() crash_ok=()
cre='^[[:space:]]*CRASHCLASS: ([^|]+)\|([^|]+)\|([^|]*)(\|(.*))?[[:space:]]*$'

add_crash_rows() { # file test_ok
    local file=$1 test_ok=$2 line n=0 ok
    while IFS= read -r line || [[ -n $line ]]; do
        [[ $line =~ $cre ]] || continue
        local c=${BASH_REMATCH[1]} r=${BASH_REMATCH[2]} now=${BASH_REMATCH[3]} before=${BASH_REMATCH[5]:-}
        r="${r%"${r##*[![:space:]]}"}"
        ok=1
        ((test_ok)) || ok=0
        [[ $now == FAILED* ]] && ok=0
        crash_class+=("${c%"${c##*[![:space:]]}"}") crash_before+=("${before:-—}") crash_now+=("$now")
        crash_cmd+=("bash scripts/test_mpy.sh ${r#tests/mpy/}") crash_ok+=("$ok")
        n=$((n + 1))
    done <"$file"
    return $((n == 0))
}

declare -A seen=()
for name in "${tests[@]}"; do
    log="$LOGDIR/$name.log"
    cmd="bash scripts/test_mpy.sh $name"
    seen["$(realpath -m "$log")"]=1
    test_ok=0
    if [[ -f $log ]]; then
        last="$(grep -v '^[[:space:]]*$' "$log" | tail -n 1)"
        [[ $last =~ ^RESULT:\ [0-9]+\ passed,\ 0\ failed$ ]] && test_ok=1
    fi
    got_rows=0
    add_rows "${log}" "tests/mpy/$name.py" "$cmd" "$test_ok" 2>/dev/null && got_rows=1
    add_crash_rows "${log}" "$test_ok" 2>/dev/null && got_rows=1
    if ((!got_rows && !test_ok)); then
        if ! grep -qi 'reliability' "tests/mpy/$name.py"; then
            crash_class+=("test $name (failed before reporting)") crash_before+=("—") crash_now+=("FAILED")
            crash_cmd+=("$cmd") crash_ok+=(0)
        else
            rows_class+=("test $name (failed before reporting)") rows_cases+=(0) rows_losses+=(0)
            rows_source+=("tests/mpy/$name.py") rows_cmd+=("$cmd") rows_ok+=(0)
        fi
    fi
done
for f in "${extras[@]}"; do
    [[ -f $f ]] || { echo "note: no file $f"; continue; }
    [[ -n ${seen["$(realpath -m "$f")"]:-} ]] && continue
    seen["$(realpath -m "$f")"]=1
    rel="$(realpath -m "$f")"
    [[ $rel == "$ROOT"/* ]] && rel="${rel#"$ROOT"/}"
    add_rows "$f" "$rel" "see $rel" 1 || true
done

# --- the table and the report --------------------------------------------------------------
passed=0 failed=0 total_cases=0 total_losses=0
table=""
for i in "${!rows_class[@]}"; do
    if ((rows_ok[i])); then passed=$((passed + 1)); verdict="ok"; else failed=$((failed + 1)); verdict="**FAILED**"; fi
    total_cases=$((total_cases + rows_cases[i]))
    total_losses=$((total_losses + rows_losses[i]))
    table+="| ${rows_class[i]} | ${rows_cases[i]} | ${rows_losses[i]} | $verdict | \`${rows_cmd[i]}\` |"$'\n'
    printf '  %-62s %6s cases %3s losses  %s\n' "${rows_class[i]}" "${rows_cases[i]}" "${rows_losses[i]}" "$verdict"
done
if ((${#rows_class[@]} == 0)); then
    echo "no RELIABILITY lines found"
    failed=$((failed + 1))
fi
crash_table=""
for i in "${!crash_class[@]}"; do
    if ((crash_ok[i])); then passed=$((passed + 1)); verdict="ok"; else failed=$((failed + 1)); verdict="**FAILED**"; fi
    crash_table+="| ${crash_class[i]} | ${crash_before[i]} | ${crash_now[i]} | $verdict | \`${crash_cmd[i]}\` |"$'\n'
    printf '  crash class: %-62s %s\n' "${crash_class[i]:0:62}" "$verdict"
done
if ((${#crash_class[@]} == 0)); then
    echo "no CRASHCLASS lines found"
    failed=$((failed + 1))
fi

mkdir -p docs
{
cat <<'EOF'
# Reliability report

Generated by `scripts/reliability_report.sh` from the output of the fault
tests; do not edit by hand. Regenerate with

    bash scripts/reliability_report.sh [build/test-logs/*.log]

Every figure is deterministic: the tests inject faults at every write of an
operation on real LittleFS (MicroPython's `vfs.VfsLfs2`, unix port) and the
number of writes littlefs makes is a function of the image.

## Results

| fault class | cases tried | losses | verdict | reproduce |
|---|---:|---:|---|---|
EOF
printf '%s' "$table"
printf '| **total** | **%d** | **%d** | | |\n' "$total_cases" "$total_losses"
cat <<'EOF'

A *loss* is a case in which any check failed: data gone or mixed, a wrong
return value, a crash, a file system that does not mount, a file left
unrepaired. Every loss must be 0.

## Crash classes

What MicroPython lets a user do that once killed the interpreter or lost
data (issue 13), each with the test that reproduces it. *Before the fix* is
what that test found on the last release before the fix (commit 41ae5d2,
with its own interpreter and littlefs, built in a scratch clone); *now* is
what the test's latest run printed. Each test runs the dangerous part in
child interpreters, so a crash is a failed check naming its signal, never a
lost test run.

| crash class | before the fix (41ae5d2) | now | verdict | reproduce |
|---|---|---|---|---|
EOF
printf '%s' "$crash_table"
cat <<'EOF'

A crash class passes when its test passes: no interpreter dies by a signal,
every call returns or raises an `Exception` (a `KeyboardInterrupt` or
`SystemExit` only where the device or the handler raised it, after the
library returned), and what was saved before is intact after a remount and
a reboot.

## What the classes mean

**Power cut** (`tests/mpy/test_powercut.py`). A Python block device
(`tests/mpy/fault_rig.py`, `CutBlockDev`) numbers every write littlefs makes
(programs and erases) and cuts the power at the k-th: the write is *dropped*,
*torn* (its first half reaches flash, the rest is unchanged) or *torn_ff* (its
first quarter reaches flash, the rest reads 0xFF, erased); every later write
is lost. For every k of the operation and every mode, the image is saved and a
**new interpreter process** mounts it, re-imports `bentoclaw` and compares the
whole ring (every message, via the unix-port hook `bentoclaw._context()`) and
the whole store with the state before and after the operation: it must be
exactly one of them, never a mix, never empty; then `remember()` and `flush()`
must work on the rebooted image. Operations: a two-message turn flushed by
appending (12-line file), the same turn flushed by compaction (29-line file,
`.tmp` + rename), `remember()` of a new key and of an existing key,
`session_clear()`; each on 12 images whose littlefs metadata log is filled to
different points, so cuts also land inside metadata compactions. A cut at
the last write (the littlefs commit) still reads the old state; the runs
without a cut read the new one.

**Write error** (`tests/mpy/test_flash_faults.py`, `FailAtBlockDev`). The
k-th write returns `-ENOSPC` or `-EIO`, for every k, either once or sticky
(every later write too, until the fault clears). `flush()` returns False and
`status()['dirty']` stays True; a reboot at that point reads the old ring;
after the fault clears the next flush is True and a new process reads exactly
the new ring. `remember()` returns False, every old key recalls its old value
and a new process reads the old store; the retry is durable. One exception is
by design of littlefs, not of bentoclaw: a one-off `ENOSPC` on a metadata
commit means "this metadata block is full" to littlefs, which compacts into
another block and carries on — the operation then succeeds, and the test
requires the new state to be durable whole (the counts are in the test log).

**Full file system.** A junk file fills a 32-block device until `ENOSPC`:
`remember()` of a new key is False and every old pair survives a reboot;
a flush on the full device is False and dirty (or True and durable); after
freeing space both work and are durable.

**Failed delete: session_clear.** The delete fails (every write k, once or
sticky, ENOSPC/EIO): the ring is empty at once, and when the clear completed
(the delete or the empty rewrite worked) a reboot never shows the old
conversation; after the fault clears, a flush makes a pending clear durable,
and a turn added after the clear is the only thing stored. *Documented limit*
(docs/DESIGN.md, "Clear"): when the device refuses **every** write and the
board reboots before it recovers, nothing on flash could change, so the old
conversation is read back; the test measures this case and counts it
separately, it is not a loss.

**Read error at load.** Reads fail while the ring would load: the turn is
refused, no flush replaces the good file with an empty ring.

**Read error while streaming** (`tests/mpy/test_flash_read_faults.py`). The
k-th block read returns `-EIO`, for every k of a turn (load + flush), a
`remember()` of a new and of an existing key (three streaming passes over a
30-pair store) and a `recall()`, once or sticky. A read error is never taken
for the end of a file: no flush writes a ring loaded halfway, no
`remember()` commits a store copied halfway, and what `remember()` returns
agrees with the store on flash after a reboot. One outcome cannot be known
by anyone and is counted in the log, not as a loss: littlefs reads every
commit back to check its CRC, so when the reads fail from that point on a
rename that did commit is reported as failed (`remember()` False, the new
store on flash, whole).

**Read error, then a write in the same mount** (`tests/mpy/test_flash_lfs_cache.py`).
Not bentoclaw's code: littlefs as shipped with MicroPython 1.25 keeps its
read cache tagged with the block whose read just failed (upstream littlefs
issue #1205, fix proposed in PR #1206), so later operations of the same
mount can use another block's bytes. Two reproductions found by the read
fault hunt are replayed on the image they were found on: one transient read
error during a turn, then a flush, overwrote the memory store's first block
with session data (27 of 30 pairs gone after the reboot); one during
`remember()` (which returned True), then a flush, lost 7 pairs. With the
one-line littlefs fix (drop the read cache when a read fails) both keep
every pair. The test prints which littlefs the interpreter has. Firmware
builds should carry the fix.

The images are made with littlefs file timestamps off (`mtime=False`):
timestamps go into the metadata CRCs from which littlefs seeds its block
allocator at mount, so images made at different seconds allocate different
blocks and the figures would change from run to run. `BENTOCLAW_MTIME=1`
runs the same tests with timestamps.

**Corrupt session / memory file** (`tests/mpy/test_corrupt_files.py`). Files
written directly: torn mid-line and mid-batch, zero- and 0xFF-filled tails,
garbage, control characters, `\u0000`, invalid UTF-8, CRLF, no final newline,
100 KB content/key/value/garbage lines, 10 000-deep nesting, nested values,
duplicate keys, 40 lines/pairs (ring of 10, store capacity 32). Each loads
without a crash and keeps every valid entry (the session: the lines up to the
last `"end":true` line, newest 10; the memory: every valid pair, the last
duplicate wins); the next `flush()`/`remember()` leaves clean JSON Lines with
each key once, and a new process reads it back exactly. (A CRLF session file
is accepted as valid JSON Lines and appended to, not rewritten.)

Rows from other sources (hostile input, Rust fuzzing and property tests) are
defined by the tests that print them.

**Python file system, raising block device, every public call**
(`tests/mpy/test_every_call_faults.py`, `tests/mpy/test_python_vfs.py`,
`tests/mpy/test_bdev_raise_gc.py`, `tests/mpy/test_bdev_base_exceptions.py`,
`tests/mpy/test_reimport_guard.py`). `fault_rig.drive_every_call()` makes
every public call of the module once (connect and ask with the bundled
backend, remember, recall, forget, pin, search, export_memory,
import_memory, config, tool, tacp, flush, archive, session, status, safety,
tools, disconnect, session_clear) through (a) `fault_rig.DictFS`, a file
system written in Python mounted at `/`, whose file objects misbehave in 21
ways (plain classes without the stream protocol, `None`, an int, a
`readinto()` that over-reports, a `read()` that returns a str, writes that
return `None`, 0 or a big number, raising methods, no `close()`) and whose
own methods raise in 6 more, and (b) `fault_rig.RaiseEveryDev`, a block
device whose every N-th read and/or write raises `OSError`, `ValueError`,
`MemoryError`, `KeyboardInterrupt` or `SystemExit` (N = 1, 2, 3, 5, 8, 13,
21; with the ring in RAM and after a reboot; a GC after each drive). After
the fault is gone the file system must mount and a reboot must read the
saved pairs exactly (`fault_rig.check_saved_state`).

**Calls nested through tools** (`tests/mpy/test_nesting_tools.py`). A tool
that calls `tool()`, `tacp()`, `ask()`, `connect()`/`disconnect()` in 15
mixes, fans out, recurses in plain Python, fills the heap or raises
`KeyboardInterrupt` at level 3. Every call at a level above
`CALL_DEPTH_MAX` (4) is refused with the exact text, none below it is, one
top-level call makes at most `CALL_REQUESTS_MAX` (16) backend requests (the
backend's log counts them), and the memory file, the session file and a
rebooted ring are unharmed.

**Hostile stores** (`tests/mpy/test_export_duplicates.py`,
`tests/mpy/test_export_linear.py`, `tests/mpy/test_jsonl_torn_string.py`,
`tests/mpy/test_store_path_dirs.py`, `tests/mpy/test_config_enospc.py`).
Store files that hold a key twice (export = recall, key by key, and the
export imports back to the same store); a 10 000-line store (the bytes
`export_memory()` reads from the block device, against a recall's, not the
clock); a line torn inside a JSON string (the next record must survive); a
directory, empty or not, at each of the module's eight paths; `config()`
on a LittleFS filled in 96 ways, some of which make littlefs itself say
`ENAMETOOLONG` for a new file.

**Edges of the formats and stored text** (issue 23:
`tests/mpy/test_seq_wrap.py`, `tests/mpy/test_keys_over_cap.py`,
`tests/mpy/test_one_line.py`, `tests/mpy/test_reply_limit.py`,
`tests/mpy/test_sessions.py`). An adversarial pass found five defects,
each now a class with its reproducer; *before the fix* is what the same
test found on the release before (commit 03baaab). *Sequence numbers*:
session files whose `"seq"` is near 2^32 (4294967290, 4294967294,
4294967295), past it (4294967296, 10^20) or not a batch number (-5, 1.5,
a string, 0), in the base or in a slot, then 9 flushes each followed by a
soft reset: the ring read back must be the ring in RAM with the turn just
flushed, after a remount too, and no file may stay at the top (before:
10 of 16 cases lost turns that `flush()` had reported as written).
*Keys over the cap*: 45 keys with a hand-edited shard of 10 records (two
keys in it set through the API), 64 shard records (past the 48 a load
indexes), a seed-form base of 40 pairs; every key must be recalled and
exported once, a new key refused while 32 or more are stored, replacing
and forgetting must keep every other key across soft resets; and memory
generations at and past 2^32 must not bring a stale shard back (before: 2
of 3 stores hid keys, 3 of 3 generations lost edits). *One record, one
line*: the reproducer's MEMORY.md (values with `\n` escapes that forge
`Conversation:` and `user:` lines), values with every line break Python's
`str.splitlines()` knows, a tool result of several lines (by `tool()` and
by the backend's request), the summary request's lines: the context the
backend receives must be exactly the escaped lines, and each of its lines
a header, a memory line or a turn (before: 3 of 3 forged lines).
*Replies within the limit*: prompts of 4,000 bytes to `PROMPT_MAX` against
the bundled backend must each be answered within `REPLY_MAX`, exactly, and
a reply over the limit must fail with `reply too long (over REPLY_MAX =
4096 bytes)` (before: 36 of 45 prompts failed as `HTTPS request failed`
and opened the breaker). *Counters*: a reply reporting 4294967295 (or any
count over `TOKENS_MAX`, 1,000,000) tokens must leave the counters as
they were, and later counts add up. The Rust unit and property tests of
`src/session`, `src/memory`, `src/text.rs`, `src/context.rs` (against its
reference model) and `src/ffi/agent_tests.rs` cover the same edges.

## Checks that cannot pass by accident

**Nothing run is a failure.** `scripts/test.sh` runs its steps through
`scripts/steps.sh`. A step must print count lines (`RESULT: N passed, M
failed`, or cargo's `test result:` lines); a step with none, or whose counts
add up to 0 passed and 0 failed, fails. The steps that are one check by
nature (setup, rustfmt, clippy, the target builds) say so with `check`,
which turns their exit status into one count line. The Miri run goes
through `cargo_filtered`: a name filter that no test that ran matched fails,
where cargo itself reports `test result: ok. 0 passed`.
`scripts/test_mpy.sh` fails when no test file matches. It also fails a
file that exits 0 without a RESULT line, or with one that reports no check.
`Checker.done()` (`tests/mpy/claw_rig.py`) fails a file that made no check.
`scripts/fuzz.sh` refuses 0 inputs, and a target under `fuzz/fuzz_targets`
that it does not run. `scripts/test_harness_selftest.sh` feeds each of
these something that ran nothing and checks that it fails.

**A figure must be a number.** Bash arithmetic reads an empty string as 0,
so `((code <= goal))` passed when the linker-map parse came back empty.
`scripts/size_report.sh` and `scripts/perf_report.sh` now compare through
`goal_le` (`scripts/figures.sh`), which fails a figure that is empty or not
a decimal number and names it. `tests/image/map_share.awk` and
`scripts/map_share.py` print nothing and exit 1 for a map that holds no
input section of the archive, rather than "0 bytes". The self-test feeds
them an empty map, a map without its memory-map part, and a map without
the archive.

**Time.** On a loaded two-core machine, a check must not depend on how fast
the code runs. Each timing check below became deterministic, or got a margin
that load alone cannot use up:

* *Breaker cooldown* (`test_breaker`, `test_sessions_breaker`). These ran
  under `faketime` ×50, so the 30 s cooldown lasted 0.6 s of real time: a
  stall that long looked like a cooldown that had passed. "A fresh cooldown
  is over 25 s" was a 100 ms real-time window. Now they run on the **test
  clock** (`# needs: clock` in `scripts/test_mpy.sh`). libfaketime reads
  the clock offset from a file at every clock read. Real time runs at its
  own pace, and `rig.advance_clock(ms)` moves ticks, `CLOCK_MONOTONIC` and
  the RTC forward by exactly `ms`. The breaker stays open for 30 s of real
  time unless the test jumps the clock. The tests jump 20 s (still open),
  then 10 s (half-open). Every check has 10 s of real time to spare.
* *Rate windows* (`test_random_api`, faketime ×50). The check allowed
  500 ms of ticks of slack, which was 10 ms of real time. Now each call is
  **bracketed** by the ticks read just before and just after it, and the
  limiter took its time somewhere between them. When the limiter is right,
  the "after" of the newest call and the "before" of the call `limit` calls
  earlier are at least 60 000 ms apart. The bound is exact, with no slack,
  under any load.
* *Idle timeout without an RTC* (`test_sessions`). The test had two `ask()`
  calls that had to fit within a 1 s timeout of real time. Now it uses the
  test clock with a 60 s timeout: a 50 s jump keeps the same session (10 s
  of real time to spare), and a further 60 s jump starts a fresh one (real
  time can only add idle time).
* *"A failed request is bounded"* (`test_faults`, `test_backend_faults`).
  The bound was the timeout + 1.5 s. It is now 3 × `HTTP_TIMEOUT_MS`, which
  leaves 10 s of margin. A request without a deadline still breaks the
  bound: `backend.py`'s hang lasts 300 s, the raw server holds a stalled
  body for 60 s (was 8 s, less than the new bound), and its drip lasts
  about 32 s. The lower bound ("cut by the timeout, not earlier") is safe
  under load as it stands.
* *Name lookup* (`mpy/claw_transport_unix.c`). `getaddrinfo()` on a name
  may wait on DNS, and no deadline can bound that wait. The unix transport
  now parses numeric addresses with `AI_NUMERICHOST`. It takes `localhost`
  as 127.0.0.1, then ::1, without a lookup. It refuses every other name at
  once (`connect()` False, plus a line on stderr that says why).
  `test_transport_addresses` checks this, including names that
  `/etc/hosts` maps to 127.0.0.1, which a lookup would have reached. The
  "unresolvable host" case of `test_trust_doors` no longer asks DNS.
* *Start-up waits*. The backend's and the raw server's port were waited for
  5 s; now 30 s, ending as soon as the port is there (`test_mpy.sh`,
  `perf_report.sh`, `test_backend_faults`).
* *Kept as they are*. `test_random_api` still runs under faketime ×50.
  Its other checks hold at any speed: a breaker refusal is judged against
  the state read before the call, and its "idle" steps are sleeps, which
  load can only lengthen. The failed connects of `test_trust_doors`
  (≤ 2 × the timeout) stay too: a refused port or a refused name ends at
  once.

## The line format

Any test may contribute rows by printing, on a line of its own,

    RELIABILITY: <fault class>|<cases tried>|<losses>[|<command>]

`<fault class>` is free text without `|`; `<cases tried>` and `<losses>` are
decimal counts; the optional `<command>` reproduces the row. Lines in
`build/test-mpy/<test>.log` (the output `scripts/test_mpy.sh` keeps) default
to `bash scripts/test_mpy.sh <test>`; lines in files given as arguments
default to "see <file>". Keep the counts deterministic.

A test adds a crash class by printing

    CRASHCLASS: <crash class>|<reproducer test>|<result now>[|<before the fix>]

with `<result now>` starting with `FAILED` when its own checks failed (the
row then fails). Only `tests/mpy/` test logs are read for these lines.
EOF
} >"$OUT"

echo "wrote $OUT ($total_cases cases, $total_losses losses)"
echo "RESULT: $passed passed, $failed failed"
((failed == 0))
