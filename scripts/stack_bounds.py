#!/usr/bin/env python3
"""Worst-case stack depth of the exports with indirect calls and recursion bounded.

Usage: scripts/stack_bounds.py ARCHIVE [--exports FILE.h ...] [--nesting N]

scripts/stack_report.py counts an indirect call (`blx rN` whose target it
cannot resolve: a `dyn FnMut` closure, a `fn` pointer) as 0 bytes and a
recursive cycle once. This script bounds both, with the same frames, the
same call graph and the same depth rule (it imports stack_report.py):

  * an indirect call may reach any function whose address the code takes:
    an R_ARM_ABS32 literal of the code that no `blx` of the same function
    consumes as a direct call, or a movw/movt pair (conservative: every
    indirect call site gets every such function as a callee);
  * a recursive cycle runs at most N levels deep (--nesting, default 1: the
    cycle counted once, as stack_report.py does). Each level past the first
    adds the frames the cycle keeps on the stack per round (the members that
    call the next one with a normal call; a tail call pops its frame first).
    An export from which a cycle is reachable gets (N - 1) x that growth
    added: an upper bound, as a path through the cycle with k levels is at
    most the one-level depth plus (k - 1) rounds.

Output:
  TARGET <bytes> <function>        (address-taken functions, with their depth)
  CYCLE <growth bytes per level> <member > member ...>
  BOUND <export> <bytes> <path>    (depth with both bounded)
  SUMMARY targets=<n> sites=<n> cycles=<n> nesting=<N> max=<bytes>
"""
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no scripts/__pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stack_report as sr


def address_taken(objdump, path, info):
    """Functions whose address a literal of the code holds, less the literals
    a `blx` of the same function consumes (those are direct calls)."""
    text = subprocess.run([objdump, "-d", "-r", "--no-show-raw-insn", path], check=True,
                          capture_output=True, text=True).stdout
    taken = set()
    lits, loads, blx = {}, [], []

    def close():
        consumed = set()
        last = {}
        for o, kind, r, lo in sorted([(o, 0, r, lo) for o, r, lo in loads] + [(o, 1, r, None) for o, r in blx]):
            if kind == 0:
                last[r] = lo
            elif last.get(r) is not None:
                consumed.add(last[r])
        for off, sym in lits.items():
            if off not in consumed:
                taken.add(info.resolve(sym))

    for line in text.splitlines():
        if sr.FUNC_RE.match(line):
            close()
            lits, loads, blx = {}, [], []
            continue
        m = sr.RELOC_RE.match(line)
        if m:
            sym = re.sub(r"\+0x[0-9a-f]+$", "", m.group(3))
            if m.group(2) == "R_ARM_ABS32":
                lits[int(m.group(1), 16)] = sym
            elif m.group(2) in ("R_ARM_THM_MOVW_ABS_NC", "R_ARM_THM_MOVT_ABS"):
                taken.add(info.resolve(sym))  # movw/movt: counted as taken (conservative)
            continue
        m = sr.INSN_RE.match(line)
        if not m or m.group(2).startswith("."):
            continue
        off, op, args = int(m.group(1), 16), m.group(2), m.group(3)
        a = args.split("@")[0].strip()
        first = a.split(",")[0].strip()
        if op.startswith("ldr") and "[pc" in a:
            tm = re.search(r"@ \(?([0-9a-f]+) <", args)
            if re.match(sr.REG + "$", first) and tm:
                loads.append((off, first, int(tm.group(1), 16)))
        elif re.match(r"^(blx|bx)(\.[nw])?$", op) and re.match(sr.REG + "$", first) and first != "lr":
            blx.append((off, first))
    close()
    return taken


def name(key):
    """stack_report.py's short name, marked when the symbol is a closure."""
    raw = key.split("#", 1)[-1]
    closure = raw.startswith("_RNC") or "closure" in raw
    return sr.short(key) + (" (closure)" if closure else "")


def main(argv):
    archive, headers, nesting = None, [], 1
    i = 0
    while i < len(argv):
        if argv[i] == "--exports":
            headers.append(argv[i + 1])
            i += 2
        elif argv[i] == "--nesting":
            nesting = int(argv[i + 1])
            i += 2
        else:
            archive = argv[i]
            i += 1
    if not archive or nesting < 1:
        print(__doc__, file=sys.stderr)
        return 2
    exports = []
    for h in headers:
        for m in re.finditer(r"\b(claw_[a-z_]+)\s*\(", open(h, encoding="utf-8").read()):
            if m.group(1) not in exports:
                exports.append(m.group(1))
    objdump = "arm-none-eabi-objdump"
    funcs, records, aliases, taken = {}, {}, {}, set()
    with tempfile.TemporaryDirectory() as tmp:
        archive = os.path.abspath(archive)
        members = subprocess.run(["arm-none-eabi-ar", "t", archive], check=True, capture_output=True,
                                 text=True).stdout.split()
        subprocess.run(["arm-none-eabi-ar", "x", archive], cwd=tmp, check=True)
        for mem in members:
            if not mem.endswith(".o"):
                continue
            p = os.path.join(tmp, mem)
            info = sr.ObjInfo(p, mem)
            records.update(info.records)
            for k, v in info.aliases.items():
                for a in v:
                    aliases[a] = k
            sr.parse_objdump(objdump, p, info, funcs)
            taken |= address_taken(objdump, p, info)
    taken = {k for k in taken if k in funcs}

    def frame(key):
        return records[key] if key in records else (funcs[key].sp_down if key in funcs else 0)

    def callees(key):
        """(callee, tail?) pairs; an indirect call site reaches every address-taken function."""
        f = funcs[key]
        out = [(c, False) for c in sorted(f.calls | (taken if f.indirect else set()))]
        return out + [(c, True) for c in sorted(f.tails)]

    memo, path_of = {}, {}
    stack = []  # (key, entered by a tail call?) of the functions being walked
    cycles = {}  # frozenset(members) -> (growth per level, members in order)

    def depth(key, tail=False):
        if key in memo:
            return memo[key]
        f = funcs.get(key)
        if f is None:
            memo[key], path_of[key] = 0, [key]
            return 0
        own = frame(key)
        best, best_path = own, [key]
        stack.append((key, tail))
        for c, ctail in callees(key):
            keys = [k for k, _ in stack]
            if c in keys:
                ring = stack[keys.index(c):]
                # Member i calls member i+1 by the edge that entered i+1; the
                # last member calls the first by this edge. A normal call
                # keeps the caller's frame on the stack, a tail call does not.
                kinds = [t for _, t in ring[1:]] + [ctail]
                growth = sum(frame(k) for (k, _), t in zip(ring, kinds) if not t)
                members = frozenset(keys[keys.index(c):])
                if growth > cycles.get(members, (-1, None))[0]:
                    cycles[members] = (growth, [k for k, _ in ring])
                continue
            d = depth(c, ctail)
            if not ctail:
                d += own
            if d > best:
                mark = ["(tail call)"] if ctail else [] if c in f.calls else ["(indirect)"]
                best, best_path = d, [key] + mark + path_of[c]
        stack.pop()
        memo[key], path_of[key] = best, best_path
        return best

    depth_entry = depth

    reach_memo = {}

    def reach(key):
        if key in reach_memo:
            return reach_memo[key]
        seen, todo = set(), [key]
        while todo:
            k = todo.pop()
            if k in seen or k not in funcs:
                continue
            seen.add(k)
            todo.extend(c for c, _ in callees(k))
        reach_memo[key] = seen
        return seen

    sites = sum(len(f.indirect) for f in funcs.values())
    for k in sorted(taken, key=lambda k: (-depth_entry(k), k)):
        print("TARGET %d %s" % (depth_entry(k), name(k)))
    results = []
    for e in exports:
        key = aliases.get(e, e)
        if key not in funcs:
            print("MISSING %s" % e)
            continue
        results.append((e, key, depth_entry(key)))
    for growth, ring in sorted(cycles.values(), key=lambda c: -c[0]):
        print("CYCLE %d %s" % (growth, " > ".join(name(k) for k in ring)))
    worst = 0
    for e, key, d in results:
        r = reach(key)
        extra = sum(g for g, ring in cycles.values() if ring[0] in r) * (nesting - 1)
        worst = max(worst, d + extra)
        path = " > ".join(p if p.startswith("(") else name(p) for p in path_of[key])
        if extra:
            path += " (+%d B: %d more levels of recursion)" % (extra, nesting - 1)
        print("BOUND %s %d %s" % (e, d + extra, path))
    print("SUMMARY targets=%d sites=%d cycles=%d nesting=%d max=%d" % (len(taken), sites, len(cycles), nesting, worst))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
