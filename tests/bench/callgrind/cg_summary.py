#!/usr/bin/env python3
"""Summarise the per-call dumps of tests/bench/callgrind/harness under callgrind.

Usage: cg_summary.py [--read LOG] OUT.1 OUT.2 ...
       (OUT.n: the files --callgrind-out-file=OUT wrote; LOG: the harness's
       standard output, with its "READ<tab><label><tab><bytes>" lines)

For each dump prints one tab-separated line:
  CG <label> <total Ir> <Ir inside claw_port_* (inclusive)> <top self-cost functions> <bytes read>
where the label is the CALLGRIND_DUMP_STATS_AT() text, the total is the
dump's `summary:` (everything collected while the call ran: core, builtins,
port callbacks, libc), the port share is the inclusive cost of the calls
made to claw_port_* functions, the top list names the three functions
with the largest self cost ("name pct%"), and the bytes read are the
harness's count of bytes claw_port_read returned during the call ("-"
without --read, or when the log has no READ line for the label).
"""

import re
import sys


def parse(path):
    label, total = "?", 0
    names = {}
    self_cost = {}
    port = 0
    fn = None
    cfn = None
    after_calls = False

    def name_of(spec):
        m = re.match(r"\((\d+)\)(?: (.*))?$", spec)
        if not m:
            return spec
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), spec)

    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("desc: Trigger: Client Request: "):
            label = line[len("desc: Trigger: Client Request: ") :]
        elif line.startswith("summary:"):
            total = int(line.split()[1])
        elif line.startswith("fn="):
            fn = name_of(line[3:])
            after_calls = False
        elif line.startswith("cfn="):
            cfn = name_of(line[4:])
        elif line.startswith("calls="):
            after_calls = True
        elif line and (line[0].isdigit() or line[0] in "+-*"):
            parts = line.split()
            cost = int(parts[1]) if len(parts) > 1 else 0
            if after_calls:
                if cfn and cfn.startswith("claw_port_") and not (fn or "").startswith("claw_port_"):
                    port += cost
                after_calls = False
            elif fn:
                self_cost[fn] = self_cost.get(fn, 0) + cost
    return label, total, port, self_cost


def read_counts(log):
    """label -> bytes read, from the harness's READ lines."""
    out = {}
    for line in open(log, encoding="utf-8", errors="replace"):
        parts = line.rstrip("\n").split("\t")
        if len(parts) == 3 and parts[0] == "READ" and parts[2].isdigit():
            out[parts[1]] = int(parts[2])
    return out


def main(argv):
    reads = {}
    files = []
    i = 0
    while i < len(argv):
        if argv[i] == "--read":
            reads = read_counts(argv[i + 1])
            i += 2
        else:
            files.append(argv[i])
            i += 1

    def key(p):
        m = re.search(r"\.(\d+)$", p)
        return int(m.group(1)) if m else 0

    for path in sorted(files, key=key):
        label, total, port, self_cost = parse(path)
        top = sorted(self_cost.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        tops = ", ".join(
            "%s %d%%" % (re.sub(r"^.*::", "", n), round(100.0 * c / total)) for n, c in top if total and c
        )
        got = reads.get(label)
        print("CG\t%s\t%d\t%d\t%s\t%s" % (label, total, port, tops, "-" if got is None else got))


if __name__ == "__main__":
    main(sys.argv[1:])
