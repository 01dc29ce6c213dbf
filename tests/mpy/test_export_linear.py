# test_export_linear.py — export_memory() reads the store in time linear in
# its size (issue 13, "unbounded time": 97 s on a hand-made store of 10 000
# pairs, while recall() took 19 ms).
#
# The measure is the bytes littlefs reads from the block device, not the
# clock (a loaded machine cannot change it): a recall() of a key that is not
# there reads the whole file once; export_memory() may read it a few times
# (its work size, then two passes) but never once per key. The bound,
# EXPORT_PASSES recalls' worth plus one block per 4 KiB of file for
# littlefs's own metadata, is far below what a re-scan per key reads (the
# file about 5000 times). Past 4 x that bound the block device refuses
# reads (-EIO), so a quadratic export ends at once instead of taking minutes.
#
# The store: 10 000 lines over 6000 keys (keys 0..3999 twice); the export
# must equal a model of it exactly (each key's last line, in the order of
# those lines), and sampled keys must recall the same.
#
# Times are printed, not checked (BENTOCLAW_EXPORT_NOBUDGET=1 lifts the read
# budget, to time an old build on this store).
#
# Before the fix (41ae5d2, the last release): export_memory() read the file
# once per line it listed (claw_memory_at(i) re-scans from the start): the
# budget stopped it at 4 x the bound, and the export came out truncated.
import gc
import os
import time
import claw_rig as rig
import bentoclaw

t = rig.Checker("export-linear")
LINES = 10000
KEYS = 6000
EXPORT_PASSES = 3
NOBUDGET = (os.getenv("BENTOCLAW_EXPORT_NOBUDGET") or "") == "1"


class BudgetDev(rig.RamBlockDev):
    """Counts the bytes read; past `budget` bytes every read fails."""

    budget = None

    def readblocks(self, block, buf, off=0):
        if self.budget is not None and self.bytes_read + len(buf) > self.budget:
            self.refused = getattr(self, "refused", 0) + 1
            return -rig.EIO
        return super().readblocks(block, buf, off)


dev = rig.mount(BudgetDev(1000))  # 500 KiB (the heap is 2 MiB)


def value_of(i):
    return "v%05d" % i


# The hand-made store, written in pieces (lines of about 34 bytes): line i
# sets key i % KEYS, so keys below LINES - KEYS appear twice.
with open(rig.MEMORY_FILE, "w") as f:
    chunk = []
    for i in range(LINES):
        chunk.append('{"key":"k%04d","value":"%s"}\n' % (i % KEYS, value_of(i)))
        if len(chunk) == 200:
            f.write("".join(chunk))
            chunk = []
    f.write("".join(chunk))
size = os.stat(rig.MEMORY_FILE)[6]
print("store: %d lines, %d keys, %d bytes" % (LINES, KEYS, size))


def model_lines():
    """The model: each key at its last line, in the order of those lines —
    the keys seen once (lines LINES-KEYS .. KEYS-1), then the others at
    their second line."""
    twice = LINES - KEYS
    for k in range(twice, KEYS):
        yield k, value_of(k)
    for k in range(twice):
        yield k, value_of(k + KEYS)


def matches_model(text):
    """(equal, first differing line). Compared as bytes: a str slice of a
    long non-ASCII-capable str would be slow."""
    b = text.encode()
    head = b"# Memory\n\n"
    if b[: len(head)] != head:
        return False, "header"
    pos = len(head)
    mv = memoryview(b)
    for k, v in model_lines():
        line = ("- **k%04d**: %s\n" % (k, v)).encode()
        if mv[pos : pos + len(line)] != line:
            return False, (line, bytes(mv[pos : pos + len(line)]))
        pos += len(line)
    return pos == len(b), "%d bytes after the last line" % (len(b) - pos)


gc.collect()
# One whole-file pass: recall() of a key that is not there.
dev.bytes_read = 0
t0 = time.ticks_ms()
t.eq(bentoclaw.recall("absent"), None, "recall() of a missing key")
recall_ms = time.ticks_diff(time.ticks_ms(), t0)
one_pass = dev.bytes_read
t.check(one_pass >= size, "one recall() reads the whole file", one_pass, size)
bound = EXPORT_PASSES * one_pass + (size // 4096 + 1) * dev.block_size
print("recall(): %d bytes read, %d ms; export bound %d bytes" % (one_pass, recall_ms, bound))

dev.bytes_read = 0
dev.budget = None if NOBUDGET else 4 * bound
t0 = time.ticks_ms()
try:
    got = bentoclaw.export_memory()
except Exception as e:
    got = e
export_ms = time.ticks_diff(time.ticks_ms(), t0)
read = dev.bytes_read
dev.budget = None
print("export_memory(): %d bytes read (%.1f whole-file passes), %d ms%s" % (
    read, read / one_pass, export_ms, "" if not getattr(dev, "refused", 0) else
    ", stopped by the read budget (%d reads refused)" % dev.refused))
t.check(read <= bound, "export_memory() reads at most %d passes' worth" % EXPORT_PASSES, read, "bytes, bound", bound)
t.check(isinstance(got, str), "export_memory() returns a str", repr(got)[:80])
if isinstance(got, str):
    t.eq(got.count("\n"), KEYS + 2, "one line per key")
    ok, where = matches_model(got)
    t.check(ok, "the export equals the model (each key's last line, in their order)", where)
    # Sampled keys: recall() says what the export says.
    for k in (0, 1, 3999, 4000, 5999):
        line = "\n- **k%04d**: " % k
        pos = got.find(line)
        v = got[pos + len(line) : got.find("\n", pos + 1)] if pos >= 0 else None
        t.eq(bentoclaw.recall("k%04d" % k), v, "recall(k%04d) = its exported value" % k)
print("RELIABILITY: export_memory() of a 10 000-line store: linear reads, exact text|1|%d" % (1 if t.failed else 0))
t.done()
