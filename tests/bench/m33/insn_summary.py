#!/usr/bin/env python3
"""Pair the emulated-M33 instruction counts with the harness's calls.

Usage: insn_summary.py UART_LOG PLUGIN_LOG [PORT_UART_LOG PORT_PLUGIN_LOG]

UART_LOG: what tests/bench/callgrind/harness.c printed on UART0 in its
emulated Cortex-M33 build (scripts/insn_m33.sh): one line
"READ<tab><label><tab><bytes read>" after each measured call.
PLUGIN_LOG: qemu's -D file with what tests/plugin/insn.c printed, loaded
with match= arguments: one line per execution of a marker, in the order
they ran,
  "0x<pc>, '<insn>', <n> hits, <m> match hits, Δ+<d> since last match, ..."
(<d>: the instructions since the previous execution of the same marker,
this one included), and "total insns: <n>" at exit.

The markers:
  mov fp, fp  each measured call is bracketed by two
              (tests/bench/m33/valgrind/callgrind.h): the deltas come in
              pairs, what ran between two calls, then the call itself (the
              instructions after the opening marker up to and including
              the closing one);
  mov sl, sl  only in the second image (PORT_*: port_ram.c built with
              -DPORT_MARKERS): each claw_port_* call runs its body between
              two; every second delta is one port call, and those inside a
              measured call are its port share.

Prints one tab-separated line per call,

  M33 <label> <instructions> <of which in claw_port_*> <bytes read>

(the instructions from the first image, which has no port markers; the
port share from the second, "-" without it), then "TOTAL <instructions of
the first image's whole run>". Exits 1 (with a message on standard error)
when the logs do not pair up, or the two images did not run the same calls
reading the same bytes.
"""

import re
import sys

CALL, PORT = "mov fp, fp", "mov sl, sl"
LINE = re.compile(r"^0x[0-9a-f]+, '([^']*)', \d+ hits, (\d+) match hits, \u0394\+(\d+) since last match")
TOTAL = re.compile(r"^(?:total )?insns: (\d+)$")


def parse(uart, plugin):
    """-> [(label, bytes read, instructions, port share)], total."""
    reads = []
    for line in open(uart, encoding="utf-8", errors="replace"):
        parts = line.rstrip("\r\n").split("\t")
        if len(parts) == 3 and parts[0] == "READ" and parts[2].isdigit():
            reads.append((parts[1], int(parts[2])))
    hits = {CALL: 0, PORT: 0}
    calls = []  # (instructions, of which in the port) per measured call
    port = 0
    total = None
    for line in open(plugin, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        m = LINE.match(line)
        if m:
            insn, nth, delta = m.group(1), int(m.group(2)), int(m.group(3))
            if insn not in hits:
                sys.exit(f"insn_summary: {plugin}: unexpected marker '{insn}'")
            hits[insn] += 1
            if nth != hits[insn]:
                sys.exit(f"insn_summary: {plugin}: '{insn}' hit {nth} out of order")
            if insn == CALL:
                if hits[CALL] % 2 == 0:  # the closing marker of a call
                    if hits[PORT] % 2:
                        sys.exit(f"insn_summary: {plugin}: a call ended inside a port call")
                    calls.append((delta, port))
                port = 0
            elif hits[PORT] % 2 == 0 and hits[CALL] % 2 == 1:  # a port call inside a measured call
                port += delta
            continue
        m = TOTAL.match(line)
        if m:
            total = int(m.group(1))
    if not reads:
        sys.exit(f"insn_summary: {uart}: no READ line")
    if hits[CALL] != 2 * len(reads) or len(calls) != len(reads):
        sys.exit(f"insn_summary: {plugin}: {hits[CALL]} call markers executed for {len(reads)} calls (expected {2 * len(reads)})")
    if total is None:
        sys.exit(f"insn_summary: {plugin}: no 'total insns' line (did qemu exit normally?)")
    rows = [(label, nread, count, port if hits[PORT] else None) for (label, nread), (count, port) in zip(reads, calls)]
    return rows, total


def main(argv):
    if len(argv) not in (2, 4):
        sys.exit(__doc__)
    rows, total = parse(argv[0], argv[1])
    if any(port is not None for *_, port in rows):
        sys.exit(f"insn_summary: {argv[1]}: port markers in the image that counts the calls")
    ports = ["-"] * len(rows)
    if len(argv) == 4:
        prows, _ = parse(argv[2], argv[3])
        if [r[:2] for r in prows] != [r[:2] for r in rows]:
            sys.exit("insn_summary: the two images ran different calls or read different bytes")
        if any(port is None for *_, port in prows):
            sys.exit(f"insn_summary: {argv[3]}: no port marker executed")
        ports = [port for *_, port in prows]
    for (label, nread, count, _), port in zip(rows, ports):
        print(f"M33\t{label}\t{count}\t{port}\t{nread}")
    print(f"TOTAL\t{total}")


if __name__ == "__main__":
    main(sys.argv[1:])
