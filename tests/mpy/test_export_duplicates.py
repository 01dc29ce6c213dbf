# test_export_duplicates.py — export_memory() on a store file that holds a
# key more than once (a hand edit, an older writer, a torn compaction) says
# exactly what recall() says, key by key (issue 13, "wrong data").
#
# recall() takes a key's last valid line. export_memory() must list each key
# once, with that value and pin, in the order of those last lines — the text
# is compared whole with a model written here, and each exported line with
# recall(). Then the export is imported into an empty store and every key
# must recall the same again (an export that lost or cut a value would store
# wrong data).
#
# Stores: the hand-made shapes below and 60 generated ones (a fixed-seed
# generator: 2..70 lines over 1..12 keys, values of 0..127 bytes, pins, torn
# and garbage lines between them; a line is torn after a complete string —
# one torn inside a string is test_jsonl_torn_string's subject).
#
# Before the fix (41ae5d2, the last release) this file failed: the export
# kept a line per key in its output and cut an earlier line out when a key
# came again, but moved the offsets of the lines after it by the length of
# the wrong line, so the next cut took bytes of another key's line: a stale
# line for one key and a value cut short for another (on "a, b, c, a, c":
# c's stale line kept, b's value cut from 100 bytes).
# targets: unix
import claw_rig as rig
import bentoclaw
import json

t = rig.Checker("export-duplicates")
rig.mount_ram(256)

ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"


def jline(k, v, pin=False):
    return '{"key":%s,"value":%s%s}\n' % (json.dumps(k), json.dumps(v), ',"pin":true' if pin else "")


def model(lines):
    """[(key, value, pinned)] in export order: each key's last valid line."""
    last = {}
    for i, ln in enumerate(lines):
        if isinstance(ln, tuple):
            k, v, p = ln
            last[k] = (i, v, p)
    order = sorted((i, k, v, p) for k, (i, v, p) in last.items())
    return [(k, v, p) for i, k, v, p in order]


def export_text(pairs):
    out = ["# Memory\n\n"]
    for k, v, p in pairs:
        out.append("- **%s**%s:%s\n" % (k, " (pinned)" if p else "", " " + v if v else ""))
    return "".join(out)


def render(lines):
    """The file: a tuple is a pair line, a str is written as it is."""
    return "".join(jline(*ln) if isinstance(ln, tuple) else ln for ln in lines)


stores = 0
losses = 0


def check_store(label, lines):
    global stores, losses
    stores += 1
    before = t.failed
    with open(rig.MEMORY_FILE, "w") as f:
        f.write(render(lines))
    want = model(lines)
    for k, v, p in want:
        t.eq(bentoclaw.recall(k), v, "%s: recall(%s) is the key's last line" % (label, k))
    got = bentoclaw.export_memory()
    t.eq(got, export_text(want), "%s: the export, whole" % label)
    # Each exported line against recall(), and each key once.
    seen = []
    for line in got.split("\n")[2:]:
        if not line:
            continue
        head, _, value = line.partition(":")
        key = head[4:].split("**")[0]
        seen.append(key)
        try:
            want_v = bentoclaw.recall(key) or ""
        except ValueError as e:  # a key the export made up
            want_v = e
        t.eq(value[1:] if value else "", want_v, "%s: exported %s = recall()" % (label, key))
    t.eq(len(seen), len(set(seen)), "%s: each key once" % label)
    # Round trip: import the export into an empty store.
    text = got
    with open(rig.MEMORY_FILE, "w") as f:
        f.write("")
    # (A store holds 32 keys at most: a hand-made file with more cannot
    # be imported whole.)
    if 0 < len(want) <= 32:
        try:
            n = bentoclaw.import_memory(text)
        except Exception as e:
            n = e
        t.eq(n, len(want), "%s: the import stores every key" % label)
        for k, v, p in want:
            t.eq(bentoclaw.recall(k), v, "%s: after the round trip recall(%s)" % (label, k))
    if t.failed > before:
        losses += 1
        print("    store %s:\n      %s" % (label, "      ".join(render(lines).split("\n")[:12])))


X100 = "x" * 100
Y100 = "y" * 100
# --- hand-made shapes -------------------------------------------------------------------
check_store("issue: a b c a c", [("a", "1", False), ("b", Y100, False), ("c", "short", False),
                                 ("a", "new-a", False), ("c", "new-c", False)])
check_store("a b a", [("a", X100, False), ("b", Y100, False), ("a", "new", False)])
check_store("a a a", [("a", "1", False), ("a", "22", False), ("a", "333", False)])
check_store("a b c d b d a", [("a", "1" * 120, False), ("b", "2" * 7, False), ("c", "3" * 60, False),
                              ("d", "4", False), ("b", "b2", False), ("d", "d2" * 40, False),
                              ("a", "", False)])
check_store("pin changes", [("a", "1", True), ("b", "2", False), ("a", "1", False), ("b", "2", True)])
check_store("empty values", [("a", "", False), ("b", "", True), ("a", "x", False), ("b", "", False)])
check_store("torn and garbage lines", [("a", X100, False), '{"key":"b","value":"x"', "\n", "garbage\n",
                                       ("b", Y100, False), '{"key":"a",', "\n",
                                       ("c", "c", False), ("a", "last", True)])
check_store("33 keys, each twice", [("k%02d" % (i % 33), "v%d" % i, False) for i in range(66)])
check_store("one key", [("only", "one", False)])

# --- generated stores (fixed seed) ------------------------------------------------------
seed = [12345]


def rnd(n):
    seed[0] = (seed[0] * 1103515245 + 12345) & 0x7FFFFFFF
    return (seed[0] >> 8) % n


for s in range(60):
    nkeys = 1 + rnd(12)
    nlines = 2 + rnd(69)
    lines = []
    for i in range(nlines):
        r = rnd(20)
        if r == 0:
            # A torn line (cut after a complete string: a line cut inside
            # a string is test_jsonl_torn_string's subject).
            lines.append(('{"key":"k%d","value":"torn"' % rnd(nkeys), '{"key":"k%d",' % rnd(nkeys),
                          '{"key":')[rnd(3)] + "\n")
            continue
        if r == 1:
            lines.append("not json\n")
            continue
        k = "k%d" % rnd(nkeys)
        v = "".join(ALNUM[rnd(len(ALNUM))] for _ in range(rnd(128)))
        lines.append((k, v, rnd(4) == 0))
    check_store("generated #%d (%d lines, %d keys)" % (s, nlines, nkeys), lines)

print("RELIABILITY: store files holding a key twice: export_memory() = recall()|%d|%d" % (stores, losses))
t.done()
