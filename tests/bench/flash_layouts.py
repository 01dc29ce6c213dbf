# flash_layouts.py — what candidate session/memory file layouts cost on the
# board's flash geometry, measured on MicroPython's own LittleFS (vfs.VfsLfs2).
#
# Plain MicroPython (unix port), no bentoclaw module: the script replays the
# file operations (open mode, writes, close, rename, remove) of each layout
# through a VfsLfs2 object on a counting RAM block device, exactly as the
# core's port (mpy/claw_port_vfs.c: open "rb"/"wb"/"ab", write, close,
# remove, rename) would issue them, and checks after every operation that the
# layout's loader reads back the modelled state.
#
#   micropython -X heapsize=16M tests/bench/flash_layouts.py [quick|steady]
#
# (three 1 MiB device images: more than the unix port's default 2 MiB heap;
# "quick" runs the short workload only; "steady" runs only the recommended
# pair for 2000 exchanges + 400 remembers, past littlefs's block_cycles=100
# relocations.)
#
# Geometry (Infineon PSoC Edge port): VfsLfs2(bdev, progsize=256,
# readsize=4096), 4096-byte erase blocks, default lookahead (32) and mtime
# (on). MicroPython 1.25 (extmod/vfs_lfsx.c) derives cache_size =
# min(block, 4*max(read, prog)) = 4096 and block_cycles = 100; littlefs 2.8
# keeps a file inline (in its directory's metadata) while it is at most
# min(0x3fe, cache_size, block_size/8) = 512 bytes.
#
# Counted per operation (mean over 100 operations, folds and metadata
# compactions included): bytes handed to writeblocks() ("programmed"), the
# number of writeblocks() calls, erases (ioctl 6), and of those the erases of
# metadata blocks (blocks that belong to a metadata pair at the end of the
# run, found by walking the littlefs metadata chain from the superblock pair
# {0, 1}). Floors (issue 12): the new JSON lines of the operation in the
# seed's plain form rounded up to 256-byte pages, plus one 256-byte metadata
# page. Goals: ask() <= 1x floor and <= 0.25 erases; remember() <= 2x floor
# and <= 0.5 erases.
#
# Deterministic: fixed workloads from a fixed LCG seed, a fresh file system
# per row. Power-cut check (the "cuts" list in main()): every device
# operation (program or erase) of a run of operations is in turn the one
# where power fails (torn: half the bytes land / half the block is erased;
# dropped: nothing lands); the image is mounted afresh, read back, compared
# with the state before and after the operation, and one more operation is
# run on the recovered image and checked. An unsafe control layout shows the
# check can fail. The last line is "RESULT: ok" or "RESULT: N failures".

import gc
import sys
import vfs
import json

from cut_dev import CutDev  # tests/bench/, beside this script

BS = 4096
PAGE = 256
READ = 4096
BLOCKS = 256  # 1 MiB device
OPS = 100
QUICK = len(sys.argv) > 1 and sys.argv[1] == "quick"
STEADY = len(sys.argv) > 1 and sys.argv[1] == "steady"
RING_MAX = 10
EIO = 5
ENOENT = 2

SESSION = "/.bentoclaw_session"
MEMORY = "/.bentoclaw_memory"

# --- the counting block device ---------------------------------------------------


class Dev(CutDev):
    """cut_dev.CutDev of 4096-byte blocks, with the cut checks' restore()
    and a walk of littlefs's metadata pairs."""

    def __init__(self, blocks=BLOCKS):
        super().__init__(blocks, BS)

    def restore(self, image):
        """This device with `image` as its content and fresh counters (the
        cut checks reuse one buffer: the heap is not compacted)."""
        self.data[:] = image
        self.erased = []
        self.reset()
        self.arm(None)
        return self

    def counters(self):
        return (self.prog, self.calls, self.erases, len(self.erased))

    def meta_blocks(self):
        """The blocks of the metadata pairs the file system holds now: walk
        from the superblock pair {0, 1} along tail and directory pointers
        (littlefs 2 on-disk format: revision count, then XOR-chained
        big-endian tags)."""
        seen = set()
        todo = [(0, 1)]
        while todo:
            pair = todo.pop()
            if pair[0] in seen:
                continue
            seen.add(pair[0])
            seen.add(pair[1])
            best = None
            for b in pair:
                if b >= self.blocks:
                    continue
                rev = int.from_bytes(self.data[b * BS : b * BS + 4], "little")
                first = int.from_bytes(self.data[b * BS + 4 : b * BS + 8], "big") ^ 0xFFFFFFFF
                if first & 0x80000000:
                    continue  # erased or not a metadata block
                if best is None or ((rev - best[1]) & 0xFFFFFFFF) < 0x80000000:
                    best = (b, rev)
            if best is None:
                continue
            for typ, payload in self._tags(best[0]):
                if typ in (0x600, 0x601, 0x200) and len(payload) == 8:
                    a = int.from_bytes(payload[0:4], "little")
                    c = int.from_bytes(payload[4:8], "little")
                    if a < self.blocks and c < self.blocks:
                        todo.append((a, c))
        return seen

    def _tags(self, b):
        d = self.data[b * BS : (b + 1) * BS]
        off = 4
        ptag = 0xFFFFFFFF
        while off + 4 <= BS:
            t = int.from_bytes(d[off : off + 4], "big") ^ ptag
            if t & 0x80000000:
                return
            typ = (t >> 20) & 0x7FF
            ln = t & 0x3FF
            size = 0 if ln == 0x3FF else ln
            yield typ, d[off + 4 : off + 4 + size]
            ptag = t
            if typ in (0x500, 0x501):
                ptag = t ^ ((typ & 1) << 31)
            off += 4 + size


def mkfs(dev):
    vfs.VfsLfs2.mkfs(dev, progsize=PAGE, readsize=READ)
    return vfs.VfsLfs2(dev, progsize=PAGE, readsize=READ)


def mount(dev):
    return vfs.VfsLfs2(dev, progsize=PAGE, readsize=READ)


# --- file operations, as the port issues them ---------------------------------------


def write_file(fs, path, mode, chunks):
    f = fs.open(path, mode)
    try:
        for c in chunks:
            f.write(c)
    finally:
        f.close()


def read_file(fs, path):
    try:
        f = fs.open(path, "rb")
    except OSError as e:
        if e.errno == ENOENT:
            return None
        raise
    try:
        return f.read()
    finally:
        f.close()


def remove(fs, path):
    try:
        fs.remove(path)
    except OSError as e:
        if e.errno != ENOENT:
            raise


def mkdir(fs, path):
    try:
        fs.mkdir(path)
    except OSError as e:
        if e.errno != 17:  # EEXIST
            raise


def pages(n):
    return (n + PAGE - 1) // PAGE * PAGE


# --- the line formats --------------------------------------------------------------


def jstr(s):
    out = bytearray(b'"')
    for c in s.encode():
        if c == 0x22:
            out += b'\\"'
        elif c == 0x5C:
            out += b"\\\\"
        elif c == 0x0A:
            out += b"\\n"
        elif c < 0x20:
            out += b"\\u%04x" % c
        else:
            out.append(c)
    out += b'"'
    return bytes(out)


def msg_line(m, end=False, seq=None):
    """A session line: {"role":..,"content":..[,"keep":k][,stats][,"seq":N][,"end":true]}
    A message is (role, content, stats or None, keep or None)."""
    role, content, stats, keep = m
    s = b'{"role":"' + role.encode() + b'","content":' + jstr(content)
    if keep is not None:
        s += b',"keep":%d' % keep
    if end:
        if stats:
            s += b"," + stats
        if seq is not None:
            s += b',"seq":%d' % seq
        s += b',"end":true'
    return s + b"}\n"


def batch_lines(msgs, seq=None):
    return [msg_line(m, i == len(msgs) - 1, seq) for i, m in enumerate(msgs)]


def parse_session(raw, seed=False):
    """Trusted entries (role, content, keep) of one file (lines up to the
    last end line) and the seq on that end line (0 when absent). With seed
    (base files only), a file without any end line is the seed's plain
    form: all its lines count."""
    out = []
    trusted = []
    seq = 0
    ended = False
    if not raw:
        return trusted, seq
    for ln in raw.split(b"\n"):
        if not ln:
            continue
        try:
            o = json.loads(ln)
        except ValueError:
            continue
        if not isinstance(o, dict) or "role" not in o:
            continue
        out.append((o["role"], o["content"], o.get("keep")))
        if o.get("end"):
            trusted = trusted + out
            out = []
            seq = o.get("seq", 0)
            ended = True
    if not ended and seed:
        return out, 0
    return trusted, seq


def push(ring, role, content, keep, tag=None):
    """The ring after one entry. Entries are (role, content, tag). A summary
    replaces everything before it, except (with "keep":k) the newest k
    turns; with a summary at its head the ring keeps it and 9 turns."""
    e = (role, content, tag)
    if role == "summary":
        if keep is None:
            return [e]
        turns = [t for t in ring if t[0] != "summary"]
        return [e] + (turns[-keep:] if keep else [])
    r = ring + [e]
    if r[0][0] == "summary":
        return [r[0]] + r[1:][-(RING_MAX - 1):]
    return r[-RING_MAX:]


def ring_apply(ring, msgs, tag=None):
    """msgs: (role, content, stats, keep) as written."""
    for m in msgs:
        ring = push(ring, m[0], m[1], m[3], tag)
    return ring


def ring_entries(ring, ents, tag=None):
    """ents: (role, content, keep) as parsed."""
    for e in ents:
        ring = push(ring, e[0], e[1], e[2], tag)
    return ring


def plain(ring):
    return [(e[0], e[1]) for e in ring]


def pair_line(k, v, seq=None):
    s = b'{"key":' + jstr(k) + b',"value":' + jstr(v)
    if seq is not None:
        s += b',"seq":%d' % seq
    return s + b"}\n"


def parse_pairs(raw, store=None, minseq=0):
    """Apply the pair lines of raw to store (last wins). Lines carrying a seq
    at or below minseq are skipped. Returns (store, header seq, max seq)."""
    if store is None:
        store = {}
    head = 0
    top = 0
    if not raw:
        return store, head, top
    for ln in raw.split(b"\n"):
        if not ln:
            continue
        try:
            o = json.loads(ln)
        except ValueError:
            continue
        if not isinstance(o, dict):
            continue
        if "key" not in o:
            if "seq" in o:
                head = o["seq"]
            continue
        s = o.get("seq", 0)
        if s and s <= minseq:
            continue
        top = max(top, s)
        store[o["key"]] = o["value"]
    return store, head, top


def store_lines(store, head=None):
    lines = []
    if head is not None:
        lines.append(b'{"seq":%d}\n' % head)
    for k in store:  # insertion order: a replaced key keeps its place
        lines.append(pair_line(k, store[k]))
    return lines


# --- session layouts ---------------------------------------------------------------
#
# Each layout: attach(fs) derives its RAM state from flash (what the core does
# on its lazy load, and what recovery after a power cut runs), load(fs) reads
# the ring back, flush(msgs) writes one batch (the messages added since the
# last flush; the ring in RAM is updated by the caller's model).


class S1Append:
    """Today: append the batch ("ab"); when the file would pass 30 lines (or
    after a compaction, or to repair), write the ring to .tmp ("wb") and
    rename it over the file."""

    def __init__(self, limit=30):
        self.limit = limit
        self.name = "S1 append, rewrite at %d lines" % limit

    def attach(self, fs):
        self.fs = fs
        raw = read_file(fs, SESSION)
        self.lines = raw.count(b"\n") if raw else 0
        ents, _ = parse_session(raw, True)
        self.ring = ring_entries([], ents)
        self.repair = raw is not None and len(ents) != self.lines

    def load(self, fs):
        ents, _ = parse_session(read_file(fs, SESSION), True)
        return plain(ring_entries([], ents))

    def rewrite(self, ring, last):
        write_file(self.fs, SESSION + ".tmp", "wb", batch_lines(ring_as_msgs(ring, last)))
        self.fs.rename(SESSION + ".tmp", SESSION)
        self.lines = len(ring)
        self.repair = False

    def flush(self, msgs):
        ring = ring_apply(self.ring, msgs)
        if self.repair or self.lines + len(msgs) > self.limit:
            self.rewrite(ring, msgs)
        else:
            write_file(self.fs, SESSION, "ab", batch_lines(msgs))
            self.lines += len(msgs)
        self.ring = ring

    def compact(self, summary):
        # today: the compacted ring is rewritten whole (summary line first)
        self.ring = ring_apply(self.ring, [summary])
        self.rewrite(self.ring, None)


class S2Rewrite:
    """Rewrite the whole ring every flush: .tmp ("wb") + rename; or, with
    inplace, "wb" straight on /.bentoclaw_session (atomic on littlefs only:
    the new content is committed at close, copy-on-write)."""

    def __init__(self, inplace=False):
        self.inplace = inplace
        self.name = "S2w ring rewritten in place (wb)" if inplace else "S2 ring rewritten, tmp+rename"

    def attach(self, fs):
        self.fs = fs
        ents, _ = parse_session(read_file(fs, SESSION), True)
        self.ring = ring_entries([], ents)

    def load(self, fs):
        ents, _ = parse_session(read_file(fs, SESSION), True)
        return plain(ring_entries([], ents))

    def flush(self, msgs):
        ring = ring_apply(self.ring, msgs)
        lines = batch_lines(ring_as_msgs(ring, msgs))
        if self.inplace:
            write_file(self.fs, SESSION, "wb", lines)
        else:
            write_file(self.fs, SESSION + ".tmp", "wb", lines)
            self.fs.rename(SESSION + ".tmp", SESSION)
        self.ring = ring

    def compact(self, summary):
        self.flush([summary])


def write_base(fs, ring, last, seq, inplace=False):
    """Fold: the ring, plain (a summary at its head without "keep"), to .tmp,
    renamed over the base (or, inplace, "wb" on the base: atomic on littlefs
    only). Its end line carries the newest seq it includes and the
    statistics of the newest batch."""
    lines = batch_lines(ring_as_msgs(ring, last), seq)
    if inplace:
        write_file(fs, SESSION, "wb", lines)
    else:
        write_file(fs, SESSION + ".tmp", "wb", lines)
        fs.rename(SESSION + ".tmp", SESSION)


def ring_as_msgs(ring, last):
    """The ring as messages, the newest batch's stats on the last one."""
    m = [(e[0], e[1], None, None) for e in ring]
    if m and last:
        m[-1] = (m[-1][0], m[-1][1], last[-1][2], None)
    return m


class S3Deltas:
    """One new file per flush, /.bentoclaw_session.<seq> ("wb", created),
    holding that batch (inline while <= 512 B). Every `fold` flushes: the ring
    to .tmp, renamed over the base (its end line carries the seq), then the
    folded deltas are removed. Load: base, then deltas seq+1, seq+2, ...
    until one is missing."""

    def __init__(self, fold):
        self.foldn = fold
        self.name = "S3 delta file per flush, fold every %d" % fold

    def delta(self, q):
        return "%s.%d" % (SESSION, q)

    def read_all(self, fs):
        ents, base = parse_session(read_file(fs, SESSION), True)
        ring = ring_entries([], ents)
        s = base
        while True:
            ents, _ = parse_session(read_file(fs, self.delta(s + 1)))
            if not ents:
                return ring, base, s
            ring = ring_entries(ring, ents)
            s += 1

    def attach(self, fs):
        self.fs = fs
        self.ring, base, self.seq = self.read_all(fs)
        # stale deltas a cut left between the base's rename and their removal
        self.deltas = [q for q in range(max(1, base - self.foldn + 1), base + 1)
                       if read_file(fs, self.delta(q)) is not None]
        self.deltas += list(range(base + 1, self.seq + 1))
        self.unfolded = self.seq - base
        self.folds = 0

    def load(self, fs):
        return plain(self.read_all(fs)[0])

    def flush(self, msgs):
        self.seq += 1
        ring = ring_apply(self.ring, msgs)
        if self.unfolded + 1 >= self.foldn:
            write_base(self.fs, ring, msgs, self.seq)
            self.folds += 1
            for q in self.deltas:
                remove(self.fs, self.delta(q))
            self.deltas = []
            self.unfolded = 0
        else:
            write_file(self.fs, self.delta(self.seq), "wb", batch_lines(msgs, self.seq))
            self.deltas.append(self.seq)
            self.unfolded += 1
        self.ring = ring

    def compact(self, summary):
        self.flush([summary])


class SSlots:
    """K slot files /.bentoclaw_session.0 .. .K-1, rewritten in place ("wb"
    on an existing file: one metadata commit at close) in round-robin, each
    holding one batch whose end line carries its seq; plus the base
    /.bentoclaw_session (its end line carries the newest seq it includes).
    Load: base, then the slots whose seq > the base's, in seq order; a
    summary line with "keep":k keeps the newest k turns before it.

    periodic=True (S4): fold (ring -> .tmp, rename over the base) whenever
    the slot to be overwritten holds a batch newer than the base, i.e. every
    K flushes. periodic=False (S5): fold only when the slot to be overwritten
    still holds an entry of the current ring (so the ring can always be
    rebuilt without it: old or new even if the slot write is torn, on any
    file system). lfs_rule: fold only when the slot still holds an entry of
    the ring after this flush (relies on littlefs committing a "wb" file
    atomically at close; a torn slot on FAT could then lose old entries).
    """

    def __init__(self, k, periodic, d=None, lfs_rule=False):
        self.k = k
        self.periodic = periodic
        self.d = d
        self.lfs_rule = lfs_rule
        self.inplace = lfs_rule
        if periodic:
            self.name = "S4 %d slots (wb) + base, fold every %d" % (k, k)
        elif lfs_rule:
            self.name = "S5L %d slots (wb) + base, fold when needed (littlefs rule, base folded in place)" % k
        else:
            self.name = "S5 %d slots (wb) + base, fold when needed" % k
        if d:
            self.name += ", slots in %s/" % d

    def slot(self, i):
        if self.d:
            return "%s/s%d" % (self.d, i)
        return "%s.%d" % (SESSION, i)

    def read_all(self, fs):
        ents, base = parse_session(read_file(fs, SESSION), True)
        ring = ring_entries([], ents, 0)  # entries tagged with their batch's seq
        slots = []
        for i in range(self.k):
            ents, q = parse_session(read_file(fs, self.slot(i)))
            slots.append((q, i, ents))
        for q, i, ents in sorted(slots):
            if q > base and ents:
                ring = ring_entries(ring, ents, q)
        return ring, base, slots

    def attach(self, fs):
        self.fs = fs
        if self.d:
            mkdir(fs, self.d)
        self.ring, self.base, slots = self.read_all(fs)
        self.slotseq = [q for q, i, e in slots]
        self.seq = max([self.base] + self.slotseq)
        self.last = None
        self.folds = 0

    def load(self, fs):
        return plain(self.read_all(fs)[0])

    def flush(self, msgs):
        self.seq += 1
        i = self.slotseq.index(min(self.slotseq))  # the oldest slot
        q = self.slotseq[i]
        if self.lfs_rule:
            # littlefs commits the slot atomically: it may hold entries of
            # the old ring as long as none of them stays in the new one
            live = ring_apply(self.ring, msgs, self.seq)
        else:
            live = self.ring
        if q > self.base and (self.periodic or any(e[2] <= q for e in live)):
            write_base(self.fs, self.ring, self.last, self.seq - 1, self.inplace)
            self.base = self.seq - 1
            self.folds += 1
        write_file(self.fs, self.slot(i), "wb", batch_lines(msgs, self.seq))
        self.slotseq[i] = self.seq
        self.ring = ring_apply(self.ring, msgs, self.seq)
        self.last = msgs

    def compact(self, summary):
        # a compaction is one more batch: the summary line with "keep"
        self.flush([summary])


# --- the archive (feature lasting): where compactions put the folded turns --------

ARCHIVE = "/.bentoclaw_archive"
ARCHIVE_MAX = 8192


class ArchiveAppend:
    """Today: append the folded turns ("ab"); past 8 KiB keep the newest
    lines that fit in half of it (.tmp + rename)."""

    name = "archive appended (today)"

    def attach(self, fs):
        self.fs = fs

    def append(self, lines):
        write_file(self.fs, ARCHIVE, "ab", lines)
        raw = read_file(self.fs, ARCHIVE)
        if len(raw) > ARCHIVE_MAX:
            keep = []
            n = 0
            for ln in reversed(raw.split(b"\n")[:-1]):
                if n + len(ln) + 1 > ARCHIVE_MAX // 2:
                    break
                keep.append(ln + b"\n")
                n += len(ln) + 1
            keep.reverse()
            write_file(self.fs, ARCHIVE + ".tmp", "wb", keep)
            self.fs.rename(ARCHIVE + ".tmp", ARCHIVE)

    def newest(self, fs):
        raw = read_file(fs, ARCHIVE) or b""
        return raw


class ArchiveSlots:
    """The folded turns of each compaction in one of K files
    /.bentoclaw_archive.0 .. ("wb", round-robin); the archive reads as the
    old file, then the slots in seq order (the oldest chunk is dropped)."""

    def __init__(self, k):
        self.k = k
        self.name = "archive in %d chunk slots (wb)" % k

    def attach(self, fs):
        self.fs = fs
        self.i = 0
        self.seq = 0

    def append(self, lines):
        self.seq += 1
        lines = lines[:-1] + [lines[-1][:-2] + b',"seq":%d}\n' % self.seq]
        write_file(self.fs, "%s.%d" % (ARCHIVE, self.i), "wb", lines)
        self.i = (self.i + 1) % self.k

    def newest(self, fs):
        return read_file(fs, "%s.%d" % (ARCHIVE, (self.i - 1) % self.k)) or b""


# --- memory layouts ----------------------------------------------------------------


class M1Rewrite:
    """Today: the whole store streamed to .tmp ("wb") with the change made,
    renamed over /.bentoclaw_memory. inplace: "wb" straight on the store
    (atomic on littlefs only)."""

    def __init__(self, inplace=False):
        self.inplace = inplace
        self.name = "M1w store rewritten in place (wb)" if inplace else "M1 store rewritten, tmp+rename"

    def attach(self, fs):
        self.fs = fs

    def load(self, fs):
        return parse_pairs(read_file(fs, MEMORY))[0]

    def set(self, k, v):
        store = self.load(self.fs)
        store[k] = v
        if self.inplace:
            write_file(self.fs, MEMORY, "wb", store_lines(store))
        else:
            write_file(self.fs, MEMORY + ".tmp", "wb", store_lines(store))
            self.fs.rename(MEMORY + ".tmp", MEMORY)


def fold_store(fs, store, head, inplace=False):
    if inplace:
        write_file(fs, MEMORY, "wb", store_lines(store, head))
    else:
        write_file(fs, MEMORY + ".tmp", "wb", store_lines(store, head))
        fs.rename(MEMORY + ".tmp", MEMORY)


class M2Log:
    """Base store + /.bentoclaw_memory.log of recent pair lines (last wins).
    append=True: the record is appended ("ab"); littlefs then commits the
    whole inline file again. append=False: the log is rewritten ("wb") with
    all its records plus the new one. When the log holds `n` records, the
    set folds: store (with the change) -> .tmp, renamed over the base, then
    the log is rewritten empty... here: truncated to nothing ("wb", no data).
    A stale log replayed on the new base changes nothing (last wins over a
    suffix of the history that the base already holds)."""

    def __init__(self, n, append=True):
        self.n = n
        self.append = append
        self.name = "M2 base + log (%s), fold at %d records" % ("ab" if append else "wb", n)

    def attach(self, fs):
        self.fs = fs
        raw = read_file(fs, MEMORY + ".log")
        self.recs = [ln + b"\n" for ln in raw.split(b"\n") if ln] if raw else []
        self.folds = 0

    def load(self, fs):
        store = parse_pairs(read_file(fs, MEMORY))[0]
        return parse_pairs(read_file(fs, MEMORY + ".log"), store)[0]

    def set(self, k, v):
        rec = pair_line(k, v)
        if len(self.recs) >= self.n:
            store = self.load(self.fs)
            store[k] = v
            fold_store(self.fs, store, None)
            self.folds += 1
            write_file(self.fs, MEMORY + ".log", "wb", [])
            self.recs = []
        elif self.append:
            write_file(self.fs, MEMORY + ".log", "ab", [rec])
            self.recs.append(rec)
        else:
            self.recs.append(rec)
            write_file(self.fs, MEMORY + ".log", "wb", self.recs)


class MSlots:
    """K slot files /.bentoclaw_memory.0 .. .K-1 rewritten in place ("wb"),
    round-robin, each holding one pair line with its seq. The base
    /.bentoclaw_memory starts with a {"seq":N} line once a fold wrote it
    (a seed-written store has none: seq 0). Load: base, then the slot pairs
    whose seq > the base's, in seq order (last wins). A set folds first when
    the slot to be overwritten holds a pair newer than the base: store (with
    the change) -> .tmp, renamed over the base."""

    def __init__(self, k, d=None, inplace=False):
        self.k = k
        self.d = d
        self.inplace = inplace
        self.name = "M2s %d slots (wb) + base, fold when full%s" % (k, ", base folded in place" if inplace else "")
        if d:
            self.name += ", slots in %s/" % d

    def slot(self, i):
        if self.d:
            return "%s/m%d" % (self.d, i)
        return "%s.%d" % (MEMORY, i)

    def read_all(self, fs):
        store, base, _ = parse_pairs(read_file(fs, MEMORY))
        slots = []
        for i in range(self.k):
            raw = read_file(fs, self.slot(i))
            _, _, q = parse_pairs(raw)
            slots.append((q, i, raw))
        for q, i, raw in sorted(slots):
            if q > base:
                parse_pairs(raw, store, base)
        return store, base, slots

    def attach(self, fs):
        self.fs = fs
        if self.d:
            mkdir(fs, self.d)
        store, base, slots = self.read_all(fs)
        self.base = base
        self.slotseq = [q for q, i, r in slots]
        self.seq = max([base] + self.slotseq)
        self.folds = 0

    def load(self, fs):
        return self.read_all(fs)[0]

    def set(self, k, v):
        self.seq += 1
        i = self.slotseq.index(min(self.slotseq))
        if self.slotseq[i] > self.base:
            store = self.load(self.fs)
            store[k] = v
            fold_store(self.fs, store, self.seq, self.inplace)
            self.folds += 1
            self.base = self.seq
            # the pair is in the base; the slot is left as it is
            return
        write_file(self.fs, self.slot(i), "wb", [pair_line(k, v, self.seq)])
        self.slotseq[i] = self.seq


class MUnsafe:
    """Control for the power-cut check (not a candidate): remove the store,
    then write it anew. A cut between the two leaves no store."""

    name = "control: remove + rewrite (unsafe on purpose)"

    def attach(self, fs):
        self.fs = fs

    def load(self, fs):
        return parse_pairs(read_file(fs, MEMORY))[0]

    def set(self, k, v):
        store = self.load(self.fs)
        store[k] = v
        remove(self.fs, MEMORY)
        write_file(self.fs, MEMORY, "wb", store_lines(store))


def khash(k):
    h = 2166136261
    for c in k.encode():
        h = ((h ^ c) * 16777619) & 0xFFFFFFFF
    return h


class MShards:
    """H shard files /.bentoclaw_memory.h0 .. (inline), shard i holding the
    pairs set since the last fold whose key hashes to i, under a {"seq":G}
    line naming the base generation they apply to. A set rewrites its shard
    ("wb") with its pairs plus the new one; when that would pass `cap` bytes
    (220: the most one 256-byte commit holds with the mtime attribute) it
    folds instead: store (with the change, {"seq":G+1}) -> .tmp, renamed over
    the base (inplace: "wb" on the base, littlefs only); shards of an older
    generation are ignored and later overwritten."""

    def __init__(self, h, cap=220, d=None, inplace=False):
        self.h = h
        self.cap = cap
        self.d = d
        self.inplace = inplace
        self.name = "M3 %d hash shards (wb) + base, fold at %d B%s" % (
            h, cap, ", base folded in place" if inplace else "")
        if d:
            self.name += ", shards in %s/" % d

    def shard(self, i):
        if self.d:
            return "%s/h%d" % (self.d, i)
        return "%s.h%d" % (MEMORY, i)

    def read_all(self, fs):
        store, gen, _ = parse_pairs(read_file(fs, MEMORY))
        raws = []
        for i in range(self.h):
            raw = read_file(fs, self.shard(i))
            s, g, _ = parse_pairs(raw)
            if g == gen and raw:
                for k in s:
                    store[k] = s[k]
                raws.append(raw)
            else:
                raws.append(None)
        return store, gen, raws

    def attach(self, fs):
        self.fs = fs
        if self.d:
            mkdir(fs, self.d)
        self.folds = 0

    def load(self, fs):
        return self.read_all(fs)[0]

    def set(self, k, v):
        store, gen, raws = self.read_all(self.fs)
        i = khash(k) % self.h
        cur = parse_pairs(raws[i])[0] if raws[i] else {}
        cur[k] = v
        lines = store_lines(cur, gen)
        if sum(len(x) for x in lines) > self.cap:
            store[k] = v
            fold_store(self.fs, store, gen + 1, self.inplace)
            self.folds += 1
            return
        write_file(self.fs, self.shard(i), "wb", lines)


# --- workloads ---------------------------------------------------------------------


class Rng:
    def __init__(self, seed):
        self.x = seed

    def next(self, n):
        self.x = (self.x * 1103515245 + 12345) & 0x7FFFFFFF
        return (self.x >> 8) % n


WORDS = ("soil", "moisture", "bed", "pump", "zone", "valve", "ok", "temp", "humidity", "alert",
         "สวัสดี", "ครับ", "light", "fan", "on", "off", "level", "tank", "report", "today")


def text(rng, lo, hi):
    n = lo + rng.next(hi - lo + 1)
    s = ""
    while len(s.encode()) < n:
        s += WORDS[rng.next(len(WORDS))] + " "
    b = s.encode()[:n]
    while b and (b[-1] & 0xC0) == 0x80:
        b = b[:-1]
    if b and b[-1] >= 0xC0:
        b = b[:-1]
    return b.decode()


def stats(i, compact=False):
    v = (900 + 37 * i, 200 + 11 * i, 240 + 9 * i, 60 + 3 * i, 1800 + 5 * i, i + 1, 1733050000 + 60 * i)
    if compact:
        return b'"st":[%d,%d,%d,%d,%d,%d,%d]' % v
    return b'"in":%d,"out":%d,"tin":%d,"tout":%d,"ctx":%d,"n":%d,"at":%d' % v


PROFILES = {
    # ~137 B of new lines (the "short exchange"): user 27, reply 36 B
    "short": dict(user=(22, 32), reply=(30, 42)),
    # short, every third exchange with a TOOL message between
    "tool": dict(user=(22, 32), reply=(30, 42), tool=3),
    # short, every fourth ask() fails: its flush holds the USER turn alone
    "flaky": dict(user=(22, 32), reply=(30, 42), fail=4),
    # what the core writes today: the end line carries the statistics
    "stats": dict(user=(22, 32), reply=(30, 42), stats=True),
    # the same statistics as one array field ("st":[in,out,tin,tout,ctx,n,at])
    "statsc": dict(user=(22, 32), reply=(30, 42), stats="compact"),
    # long replies (up to the 255-byte cut) with statistics: past inline_max
    "long": dict(user=(40, 120), reply=(180, 255), stats=True),
    # short with automatic compaction (the default config, compact_keep 4):
    # before an ask() whose 2 turns would push a turn out of the ring, the
    # old summary and all but the newest 4 turns are folded into a summary
    # (about 200 B) and appended to the archive; the compacted ring is
    # flushed, then the exchange
    "auto": dict(user=(22, 32), reply=(30, 42), auto=4),
}


def workload(profile, n, seed=7):
    """n exchanges, each (floor, events); an event is ("flush", msgs) or
    ("compact", summary message, archived lines). The floor counts the
    exchange's new lines only."""
    p = PROFILES[profile]
    rng = Rng(seed)
    out = []
    ring = []
    for i in range(n):
        evs = []
        if p.get("auto") and len(ring) + 2 > RING_MAX:
            turns = [e for e in ring if e[0] != "summary"]
            keep = p["auto"]
            if turns[-keep][0] == "assistant":
                keep += 1
            folded = [e for e in ring if e[0] == "summary"] + turns[:-keep]
            summary = ("summary", "summary %03d: " % i + text(rng, 150, 220), None, keep)
            evs.append(("compact", summary, [msg_line((e[0], e[1], None, None)) for e in folded]))
            ring = ring_apply(ring, [summary])
        msgs = [("user", "turn %03d: " % i + text(rng, p["user"][0] - 10, p["user"][1] - 10), None, None)]
        if p.get("fail") and i % p["fail"] == p["fail"] - 1:
            pass  # the request failed: the USER turn is flushed alone
        else:
            if p.get("tool") and i % p["tool"] == 2:
                msgs.append(("tool", '{"tool":"relay","ok":true,"state":"%s"}' % text(rng, 8, 30), None, None))
            msgs.append(("assistant", text(rng, p["reply"][0], p["reply"][1]),
                         stats(i, p.get("stats") == "compact") if p.get("stats") else None, None))
        evs.append(("flush", msgs))
        ring = ring_apply(ring, msgs)
        out.append(Exchange(exchange_floor(msgs), evs))
    return out


class Exchange:
    """Iterates as (floor, events); floor_all() also counts what a
    compaction writes that is new or moved: the summary line and the
    archived lines, each rounded up to pages + one page."""

    def __init__(self, floor, evs):
        self.floor = floor
        self.evs = evs

    def __iter__(self):
        return iter((self.floor, self.evs))

    def floor_all(self):
        evs = self.evs
        if evs[0][0] != "compact":
            return self.floor
        return (self.floor + exchange_floor([evs[0][1]]) + pages(sum(len(x) for x in evs[0][2])) + PAGE)


def archive_floor():
    """The archived lines' share of floor_all() over the auto workload."""
    return sum(pages(sum(len(x) for x in evs[0][2])) + PAGE
               for f, evs in workload("auto", OPS) if evs[0][0] == "compact")


def do_event(lay, arch, ev):
    if ev[0] == "flush":
        lay.flush(ev[1])
    else:
        if arch:
            arch.append(ev[2])
        lay.compact(ev[1])


def model_event(model, ev):
    return ring_apply(model, ev[1] if ev[0] == "flush" else [ev[1]])


def exchange_floor(msgs):
    return pages(sum(len(x) for x in batch_lines(msgs))) + PAGE


def memory_ops(nkeys, n, seed=11):
    rng = Rng(seed + nkeys)
    keys = ["k%02d_%s" % (i, WORDS[i % 10]) for i in range(nkeys)]
    initial = {}
    for k in keys:
        initial[k] = text(rng, 4, 40)
    ops = []
    for i in range(n):
        ops.append((keys[rng.next(nkeys)], "v%d " % i + text(rng, 2, 36)))
    return initial, ops


def pair_floor(k, v):
    return pages(len(pair_line(k, v))) + PAGE


# --- running ---------------------------------------------------------------------

bad = 0


CONTROL = [False]


def fail(*what):
    global bad
    bad += 1
    if not CONTROL[0]:
        print("FAIL", *what)


# Two devices for the whole run (MicroPython's heap is not compacted: 1 MiB
# buffers allocated per row would fragment it): POOL[0] for every row,
# POOL[1] as the scratch device of the power-cut checks.
POOL = []


def device(i):
    while len(POOL) <= i:
        gc.collect()
        POOL.append(Dev())
    return POOL[i].blank()


SNAP = []


def snapshot_buffer():
    if not SNAP:
        gc.collect()
        SNAP.append(bytearray(BLOCKS * BS))
    return SNAP[0]


def fresh():
    dev = device(0)
    fs = mkfs(dev)
    return dev, fs


def seed_memory(fs, initial):
    # the seed's plain JSON Lines form: the layouts must read it
    write_file(fs, MEMORY, "wb", store_lines(initial))


class Acc:
    def __init__(self):
        self.n = 0
        self.prog = 0
        self.calls = 0
        self.erases = 0
        self.meta = 0
        self.eblocks = []
        self.floor = 0
        self.floor_all = 0
        self.worst = 0

    def add(self, dev, before, floor):
        p, c, e, m = dev.counters()
        dp = p - before[0]
        self.n += 1
        self.prog += dp
        self.calls += c - before[1]
        self.erases += e - before[2]
        self.eblocks += dev.erased[before[3] : m]
        self.floor += floor
        self.worst = max(self.worst, dp)


ROWS = []


def classify(acc, dev):
    """Metadata erases: erases of blocks that are metadata pairs at the end."""
    meta = dev.meta_blocks()
    acc.meta = sum(1 for b in acc.eblocks if b in meta)
    return meta


def by_block(accs, meta):
    out = {}
    for acc in accs:
        for b in acc.eblocks:
            if b in meta:
                out[b] = out.get(b, 0) + 1
    return out


def row(kind, layout, work, acc, goal_ratio, goal_erase):
    n = acc.n or 1
    ratio = acc.prog / acc.floor if acc.floor else 0
    ok = ratio <= goal_ratio and acc.erases / n <= goal_erase
    ROWS.append((kind, layout, work, acc.prog / n, acc.floor / n, ratio, acc.erases / n, acc.meta / n,
                 acc.calls / n, acc.worst, ok))


def run_session(layout, profile, n=OPS, archive=None, check=True):
    dev, fs = fresh()
    layout.attach(fs)
    if archive:
        archive.attach(fs)
    model = []
    acc = Acc()
    for x in workload(profile, n):
        floor, evs = x
        before = dev.counters()
        for ev in evs:
            do_event(layout, archive, ev)
            model = model_event(model, ev)
        acc.add(dev, before, floor)
        acc.floor_all += x.floor_all()
        if check:
            got = layout.load(fs)
            if got != plain(model):
                fail(layout.name, profile, "read back", len(got), "entries, model", len(model))
                break
            if archive and evs[0][0] == "compact" and evs[0][2][-1][:-2] not in archive.newest(fs):
                fail(layout.name, archive.name, "archive does not end with the folded turns")
    # and from a fresh mount
    if check and layout.load(mount(dev)) != plain(model):
        fail(layout.name, profile, "after remount")
    classify(acc, dev)
    return acc, dev


def run_memory(layout, nkeys, n=OPS, check=True):
    dev, fs = fresh()
    initial, ops = memory_ops(nkeys, n)
    seed_memory(fs, initial)
    layout.attach(fs)
    if layout.load(fs) != initial:
        fail(layout.name, "does not read the seed-form store")
    model = dict(initial)
    acc = Acc()
    for k, v in ops:
        before = dev.counters()
        layout.set(k, v)
        acc.add(dev, before, pair_floor(k, v))
        model[k] = v
        if check:
            got = layout.load(fs)
            if got != model:
                fail(layout.name, nkeys, "read back differs")
                break
    if check and layout.load(mount(dev)) != model:
        fail(layout.name, nkeys, "after remount")
    classify(acc, dev)
    return acc, dev


def run_mixed(slay, mlay, profile, nkeys, every, n=OPS):
    """n exchanges, a remember() after every `every`-th, one file system."""
    dev, fs = fresh()
    initial, ops = memory_ops(nkeys, n)
    seed_memory(fs, initial)
    slay.attach(fs)
    mlay.attach(fs)
    ex = Acc()
    mem = Acc()
    model = []
    mmodel = dict(initial)
    j = 0
    for i, (floor, evs) in enumerate(workload(profile, n)):
        before = dev.counters()
        for ev in evs:
            do_event(slay, None, ev)
            model = model_event(model, ev)
        ex.add(dev, before, floor)
        if i % every == every - 1:
            k, v = ops[j]
            j += 1
            before = dev.counters()
            mlay.set(k, v)
            mem.add(dev, before, pair_floor(k, v))
            mmodel[k] = v
    fs2 = mount(dev)
    if slay.load(fs2) != plain(model) or mlay.load(fs2) != mmodel:
        fail("mixed", slay.name, mlay.name, "read back")
    return ex, mem, dev


# --- power cuts ------------------------------------------------------------------


def cut_session(make, profile, warm, nops):
    """Warm up `warm` flushes/compactions, then for each of the next `nops`
    cut power at each of its device operations (torn and dropped)."""
    evs = []
    for floor, e in workload(profile, warm + nops + 2):
        evs += e
    dev, fs = fresh()
    lay = make()
    lay.attach(fs)
    model = []
    for ev in evs[:warm]:
        do_event(lay, None, ev)
        model = model_event(model, ev)
    points = 0
    snap = snapshot_buffer()
    scratch = device(1)
    folds0 = getattr(lay, "folds", 0)
    erases0 = dev.erases
    for t in range(warm, warm + nops):
        ev = evs[t]
        snap[:] = dev.data
        new = model_event(model, ev)
        old_p, new_p = plain(model), plain(new)
        # count the device operations of this flush
        d0 = scratch.restore(snap)
        l0 = make()
        l0.attach(mount(d0))
        d0.arm(None)
        do_event(l0, None, ev)
        total = d0.nops
        for cut in range(1, total + 1):
            for tear in (True, False):
                d = scratch.restore(snap)
                lay2 = make()
                lay2.attach(mount(d))
                d.arm(cut, tear)
                try:
                    do_event(lay2, None, ev)
                except OSError:
                    pass
                d.arm(None)
                try:
                    fs2 = mount(d)
                    lay3 = make()
                    lay3.attach(fs2)
                    got = lay3.load(fs2)
                except OSError as e:
                    fail(lay.name, "cut", t, cut, "mount/load:", e)
                    continue
                points += 1
                if got != old_p and got != new_p:
                    fail(lay.name, "event", t, ev[0], "cut at op", cut, "of", total, "tear" if tear else "drop",
                         ": neither old nor new (%d entries)" % len(got))
                    continue
                # the next flush on the recovered image
                nxt = evs[t + 1]
                try:
                    do_event(lay3, None, nxt)
                except OSError as e:
                    fail(lay.name, "recovery flush failed", e)
                    continue
                base = model if got == old_p else new
                if lay3.load(mount(d)) != plain(model_event(base, nxt)):
                    fail(lay.name, "event", t, "cut", cut, "next flush after recovery reads back wrong")
        do_event(lay, None, ev)
        model = new
    return points, getattr(lay, "folds", 0) - folds0, dev.erases - erases0


def cut_memory(make, nkeys, warm, nops):
    initial, ops = memory_ops(nkeys, warm + nops + 1)
    dev, fs = fresh()
    seed_memory(fs, initial)
    lay = make()
    lay.attach(fs)
    model = dict(initial)
    for k, v in ops[:warm]:
        lay.set(k, v)
        model[k] = v
    points = 0
    snap = snapshot_buffer()
    scratch = device(1)
    folds0 = getattr(lay, "folds", 0)
    erases0 = dev.erases
    for t in range(warm, warm + nops):
        k, v = ops[t]
        snap[:] = dev.data
        new = dict(model)
        new[k] = v
        d0 = scratch.restore(snap)
        l0 = make()
        l0.attach(mount(d0))
        d0.arm(None)
        l0.set(k, v)
        total = d0.nops
        for cut in range(1, total + 1):
            for tear in (True, False):
                d = scratch.restore(snap)
                lay2 = make()
                lay2.attach(mount(d))
                d.arm(cut, tear)
                try:
                    lay2.set(k, v)
                except OSError:
                    pass
                d.arm(None)
                try:
                    fs2 = mount(d)
                    lay3 = make()
                    lay3.attach(fs2)
                    got = lay3.load(fs2)
                except OSError as e:
                    fail(lay.name, "cut", t, cut, "mount/load:", e)
                    continue
                points += 1
                if got != model and got != new:
                    fail(lay.name, "set", t, "cut at op", cut, "of", total, "tear" if tear else "drop",
                         ": neither old nor new store")
                    continue
                k2, v2 = ops[t + 1]
                try:
                    lay3.set(k2, v2)
                except OSError as e:
                    fail(lay.name, "recovery set failed", e)
                    continue
                exp = dict(got)
                exp[k2] = v2
                if lay3.load(mount(d)) != exp:
                    fail(lay.name, "set", t, "cut", cut, "next set after recovery reads back wrong")
        lay.set(k, v)
        model = new
    return points, getattr(lay, "folds", 0) - folds0, dev.erases - erases0


# --- mechanics probe -------------------------------------------------------------


def probe():
    """Programs and erases of single littlefs operations on this geometry."""
    dev, fs = fresh()
    out = []

    def w(path, mode, n):
        return lambda: write_file(fs, path, mode, [b"{" + b"x" * (n - 1)] if n else [])

    steps = [
        ('"wb" new file, 137 B (create commit + close commit)', None, w("/p", "wb", 137)),
        ('"wb" existing file, 137 B (one commit at close)', None, w("/p", "wb", 137)),
        ('"wb" existing file, 220 B (largest one-page commit)', None, w("/p", "wb", 220)),
        ('"wb" existing file, 221 B', None, w("/p", "wb", 221)),
        ('"ab" +137 B on an inline file of 137 B (whole file recommitted)', w("/p", "wb", 137), w("/p", "ab", 137)),
        ('"wb" existing file, 512 B (largest inline file)', None, w("/p", "wb", 512)),
        ('"wb" existing file, 513 B (outlined: a data block)', None, w("/p", "wb", 513)),
        ('"ab" +137 B on an outlined file (last block copied)', None, w("/p", "ab", 137)),
        ('"wb" 100 B on an outlined file (inline again)', None, w("/p", "wb", 100)),
        ("rename an inline file of 100 B over another (data recommitted)", w("/q", "wb", 100), lambda: fs.rename("/q", "/p")),
        ("rename an outlined file over another", w("/q", "wb", 700), lambda: fs.rename("/q", "/p")),
        ("remove a file", None, lambda: fs.remove("/p")),
    ]
    for name, setup, fn in steps:
        if setup:
            setup()
        b = dev.counters()
        fn()
        a = dev.counters()
        out.append((name, a[0] - b[0], a[1] - b[1], a[2] - b[2]))
    return out


def sweep():
    """Metadata compaction against the inline bytes living in the directory:
    200 one-page commits ("wb" of a 100-byte file) next to files holding
    `total` bytes inline."""
    out = []
    for total in (0, 512, 1024, 1536, 2048, 2560, 3072):
        dev, fs = fresh()
        for i in range(total // 256):
            write_file(fs, "/.f%d" % i, "wb", [b'{"' + b"x" * 254])
        write_file(fs, "/.probe", "wb", [b'{"' + b"y" * 98])
        dev.reset()
        acc = Acc()
        before = dev.counters()
        n = 200
        for j in range(n):
            write_file(fs, "/.probe", "wb", [b'{"' + b"%03d" % j + b"y" * 95])
        acc.add(dev, before, 0)
        p, c, e, m = dev.counters()
        meta = classify(acc, dev)
        out.append((total, p / n, e / n, (n / e) if e else 0, len(by_block([acc], meta)), len(meta) // 2))
    return out


def seed_check(smake, mmake):
    """A session and a store in the seed's plain form (no end, no seq, no
    extra files) are read back, and 20 exchanges and 10 sets later the
    layouts read back the model."""
    dev, fs = fresh()
    ring = [("system", "Connected to TESAIoT backend"), ("user", "hi, my name is Somchai"),
            ("assistant", "Hello Somchai!")]
    write_file(fs, SESSION, "wb", [b'{"role":"' + r.encode() + b'","content":' + jstr(c) + b"}\n" for r, c in ring])
    initial, ops = memory_ops(12, 10)
    seed_memory(fs, initial)
    sl, ml = smake(), mmake()
    sl.attach(fs)
    ml.attach(fs)
    ok = sl.load(fs) == ring and ml.load(fs) == initial
    model = [(r, c, None) for r, c in ring]
    mm = dict(initial)
    for i, (floor, evs) in enumerate(workload("short", 20)):
        for ev in evs:
            do_event(sl, None, ev)
            model = model_event(model, ev)
        if i % 2:
            k, v = ops[i // 2]
            ml.set(k, v)
            mm[k] = v
    fs2 = mount(dev)
    ok = ok and sl.load(fs2) == plain(model) and ml.load(fs2) == mm
    if not ok:
        fail("seed form", sl.name, ml.name)
    return ok


# --- main ------------------------------------------------------------------------


def summary_line(kind, name, work, folds):
    r = ROWS[-1]
    unit = "exchange" if kind == "ask" else "set"
    print("SUMMARY %s %s [%s]: %d B/%s = %.2fx floor, %.3f erases/%s (%.3f metadata)%s, %s" % (
        kind, name, work, r[3], unit, r[5], r[6], unit, r[7],
        (", %d base folds" % folds) if folds is not None else "",
        "meets the goals" if r[10] else "misses the goals"))


def fmt_rows():
    print()
    print("| kind | layout | workload | programmed/op | floor/op | x floor | erases/op | of them metadata | writeblocks calls/op | worst op | goal |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for kind, lay, work, p, fl, ratio, e, m, c, worst, ok in ROWS:
        print("| %s | %s | %s | %d | %d | %.2f | %.3f | %.3f | %.1f | %d | %s |" % (
            kind, lay, work, p, fl, ratio, e, m, c, worst, "met" if ok else "missed"))
    print()


def steady():
    n = 2000
    print("## steady state: %d exchanges, a remember() after every 5th (20 keys)" % n)
    print()
    print("| session layout | memory layout | workload | exchange B (x floor) | erases/exchange | remember B (x floor) | erases/remember | metadata pairs at the end | most erases of one block |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for prof in ("short", "statsc"):
        sl, ml = SSlots(6, False, None, True), MShards(8, 220, None, True)
        ex, mem, dev = run_mixed(sl, ml, prof, 20, 5, n)
        meta = classify(ex, dev)
        classify(mem, dev)
        allb = {}
        for b in ex.eblocks + mem.eblocks:
            allb[b] = allb.get(b, 0) + 1
        print("| %s | %s | %s | %d (%.2f) | %.3f | %d (%.2f) | %.3f | %d | %d |" % (
            sl.name, ml.name, prof, ex.prog / ex.n, ex.prog / ex.floor, ex.erases / ex.n,
            mem.prog / mem.n, mem.prog / mem.floor, mem.erases / mem.n, len(meta) // 2, max(allb.values())))
    print()
    print("RESULT: %s" % ("ok" if bad == 0 else "%d failures" % bad))


def main():
    # the three 1 MiB buffers first, while the heap is empty
    device(0)
    device(1)
    snapshot_buffer()
    if STEADY:
        steady()
        return
    print("flash_layouts: LittleFS %s block=%d prog=%d read=%d cache=%d inline_max=%d blocks=%d ops=%d" % (
        "v2", BS, PAGE, READ, min(BS, 4 * max(READ, PAGE)), min(0x3FE, min(BS, 4 * max(READ, PAGE)), BS // 8),
        BLOCKS, OPS))
    print()
    print("## littlefs mechanics (one operation each; mtime on)")
    print()
    print("| operation | programmed | writeblocks calls | erases |")
    print("|---|---:|---:|---:|")
    for name, p, c, e in probe():
        print("| %s | %d | %d | %d |" % (name, p, c, e))

    print()
    print("## workloads (100 exchanges each)")
    print()
    print("| workload | new-line bytes per exchange (mean, min-max) | floor per exchange |")
    print("|---|---:|---:|")
    for prof in ("short", "tool", "flaky", "stats", "statsc", "long", "auto"):
        sizes = [sum(len(x) for x in batch_lines(evs[-1][1])) for f, evs in workload(prof, OPS)]
        floors = [f for f, evs in workload(prof, OPS)]
        print("| %s | %d (%d-%d) | %d |" % (prof, sum(sizes) // len(sizes), min(sizes), max(sizes),
                                          sum(floors) // len(floors)))
    print("memory: pre-filled with 10/20/30 keys in the seed's form, then 100 sets of existing keys;")
    initial, ops = memory_ops(20, OPS)
    print("pair lines %d-%d B, floor 512 B each" % (min(len(pair_line(k, v)) for k, v in ops),
                                                   max(len(pair_line(k, v)) for k, v in ops)))
    print()

    sess = [
        lambda: S1Append(30),
        lambda: S2Rewrite(False),
        lambda: S2Rewrite(True),
        lambda: S3Deltas(4),
        lambda: S3Deltas(5),
        lambda: S3Deltas(8),
        lambda: SSlots(4, True),
        lambda: SSlots(5, True),
        lambda: SSlots(6, True),
        lambda: SSlots(6, False),
        lambda: SSlots(8, False),
        lambda: SSlots(5, False, None, True),
        lambda: SSlots(6, False, None, True),
    ]
    profiles = ("short", "tool", "flaky", "stats", "statsc", "long") if not QUICK else ("short",)
    for prof in profiles:
        for mk in sess:
            lay = mk()
            acc, dev = run_session(lay, prof)
            row("ask", lay.name, prof, acc, 1.0, 0.25)
            summary_line("ask", lay.name, prof, getattr(lay, "folds", None))
    # automatic compaction: the session layout and the archive together
    autos = [
        (lambda: S1Append(30), lambda: ArchiveAppend()),
        (lambda: S1Append(30), lambda: None),
        (lambda: SSlots(6, False), lambda: ArchiveAppend()),
        (lambda: SSlots(6, False), lambda: ArchiveSlots(8)),
        (lambda: SSlots(6, False), lambda: None),
        (lambda: SSlots(8, False), lambda: None),
        (lambda: SSlots(5, False, None, True), lambda: None),
        (lambda: SSlots(6, False, None, True), lambda: None),
    ]
    for ms, ma in (autos if not QUICK else autos[2:3]):
        lay, arch = ms(), ma()
        acc, dev = run_session(lay, "auto", archive=arch)
        name = lay.name + (" + " + arch.name if arch else " (archive writes left out)")
        row("ask", name, "auto", acc, 1.0, 0.25)
        summary_line("ask", name, "auto", getattr(lay, "folds", None))
        print("SUMMARY ask %s [auto]: %.2fx the floor that also counts the summary line%s" % (
            name, acc.prog / (acc.floor_all if arch else acc.floor_all - archive_floor()),
            " and the archived lines" if arch else ""))

    mems = [
        lambda: M1Rewrite(False),
        lambda: M1Rewrite(True),
        lambda: M2Log(4, True),
        lambda: M2Log(8, True),
        lambda: M2Log(4, False),
        lambda: MSlots(4),
        lambda: MSlots(8),
        lambda: MSlots(12),
        lambda: MSlots(8, None, True),
        lambda: MShards(4, 200),
        lambda: MShards(4),
        lambda: MShards(8),
        lambda: MShards(16),
        lambda: MShards(8, 220, None, True),
    ]
    for nkeys in ((10, 20, 30) if not QUICK else (20,)):
        for mk in mems:
            lay = mk()
            acc, dev = run_memory(lay, nkeys)
            row("remember", lay.name, "%d keys" % nkeys, acc, 2.0, 0.5)
            summary_line("remember", lay.name, "%d keys" % nkeys, getattr(lay, "folds", None))

    fmt_rows()

    print("## metadata compaction against the inline bytes in the directory")
    print("(200 one-page commits: \"wb\" of a 100-byte file beside files holding that many bytes inline)")
    print()
    print("| inline bytes beside | programmed/commit | erases/commit | commits per erase | metadata blocks erased | metadata pairs |")
    print("|---:|---:|---:|---:|---:|---:|")
    for total, p, e, per, nb, np in sweep():
        print("| %d | %d | %.3f | %.1f | %d | %d |" % (total, p, e, per, nb, np))
    print()

    print("## mixed: %d exchanges, a remember() after every 5th (20 keys), one file system" % OPS)
    print()
    print("| session layout | memory layout | workload | exchange B (x floor) | erases/exchange | remember B (x floor) | erases/remember | all erases/op | root-pair erases | metadata blocks erased |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---|")
    mixes = [
        (lambda: S1Append(30), lambda: M1Rewrite(False)),
        (lambda: SSlots(6, False, None, True), lambda: MShards(8, 220, None, True)),
        (lambda: SSlots(5, False, None, True), lambda: MShards(8, 220, None, True)),
        (lambda: SSlots(6, False, None, True), lambda: MShards(16, 220, None, True)),
        (lambda: SSlots(6, False, None, True), lambda: MSlots(8, None, True)),
        (lambda: SSlots(6, False, "/.bentoclaw_s", True), lambda: MShards(8, 220, "/.bentoclaw_m", True)),
        (lambda: SSlots(6, False), lambda: MSlots(4)),
        (lambda: SSlots(6, False), lambda: MSlots(8)),
        (lambda: SSlots(8, False), lambda: MSlots(8)),
        (lambda: SSlots(6, False), lambda: MShards(8)),
        (lambda: SSlots(6, False, "/.bentoclaw_s"), lambda: MSlots(8, "/.bentoclaw_m")),
        (lambda: S3Deltas(5), lambda: MSlots(8)),
    ]
    for prof in (("short", "stats", "statsc") if not QUICK else ("short",)):
        for ms, mm in mixes:
            sl, ml = ms(), mm()
            ex, mem, dev = run_mixed(sl, ml, prof, 20, 5)
            tot_e = ex.erases + mem.erases
            meta = classify(ex, dev)
            classify(mem, dev)
            per = by_block([ex, mem], meta)
            root = per.get(0, 0) + per.get(1, 0)
            blocks = sorted(per.items())
            print("| %s | %s | %s | %d (%.2f) | %.3f | %d (%.2f) | %.3f | %.3f | %d | %s |" % (
                sl.name, ml.name, prof, ex.prog / ex.n, ex.prog / ex.floor, ex.erases / ex.n,
                mem.prog / mem.n, mem.prog / mem.floor, mem.erases / mem.n, tot_e / (ex.n + mem.n), root,
                " ".join("%d:%d" % b for b in blocks)))
            print("SUMMARY mixed %s + %s [%s]: exchange %.2fx floor %.3f erases, remember %.2fx floor %.3f erases" % (
                sl.name, ml.name, prof, ex.prog / ex.floor, ex.erases / ex.n, mem.prog / mem.floor, mem.erases / mem.n))
    print()

    print("## power cuts (every program/erase of each operation, torn and dropped; then one more operation)")
    print()
    cuts = [
        ("session", lambda: SSlots(6, False, None, True), "short", 12, 40),
        ("session", lambda: SSlots(6, False, None, True), "stats", 12, 30),
        ("session", lambda: SSlots(6, False, None, True), "flaky", 12, 20),
        ("session", lambda: SSlots(6, False, None, True), "auto", 12, 24),
        ("session", lambda: SSlots(6, False, None, True), "long", 12, 12),
        ("session", lambda: SSlots(5, False, None, True), "flaky", 12, 20),
        ("memory", lambda: MShards(8, 220, None, True), 30, 6, 40),
        ("memory", lambda: MShards(8, 220, None, True), 10, 6, 12),
        ("session", lambda: SSlots(6, False), "short", 12, 20),
        ("session", lambda: SSlots(6, False), "tool", 12, 8),
        ("session", lambda: SSlots(6, False), "flaky", 12, 12),
        ("session", lambda: SSlots(6, False), "auto", 12, 14),
        ("session", lambda: SSlots(4, True), "short", 6, 8),
        ("session", lambda: S3Deltas(5), "short", 6, 8),
        ("memory", lambda: MSlots(8), 20, 6, 20),
        ("memory", lambda: MShards(8), 20, 6, 12),
        ("memory", lambda: M2Log(4, True), 20, 3, 8),
    ]
    if QUICK:
        cuts = cuts[:1]
    print("SEED %s" % ("read and continued: ok" if seed_check(lambda: SSlots(6, False, None, True),
                                                              lambda: MShards(8, 220, None, True)) else "FAILED"))
    print("SEED %s" % ("read and continued: ok" if seed_check(lambda: SSlots(6, False),
                                                              lambda: MSlots(8)) else "FAILED"))
    for kind, mk, work, warm, nops in cuts:
        b0 = bad
        if kind == "session":
            pts, folds, erases = cut_session(mk, work, warm, nops)
        else:
            pts, folds, erases = cut_memory(mk, work, warm, nops)
        print("CUTS %s %s [%s]: %d operations (%d base folds, %d erases) after %d warm-up, %d cut points checked, %s" % (
            kind, mk().name, work, nops, folds, erases, warm, pts,
            "all old-or-new" if bad == b0 else "%d FAILURES" % (bad - b0)))
    # the check can fail: a layout that is not power-cut safe is caught
    b0 = bad
    CONTROL[0] = True
    pts, folds, erases = cut_memory(lambda: MUnsafe(), 20, 2, 4)
    CONTROL[0] = False
    caught = bad - b0
    globals()["bad"] = b0
    print("CUTS control %s: %d cut points checked, %d caught as neither old nor new (must be > 0)" % (
        MUnsafe.name, pts, caught))
    if caught == 0:
        fail("the power-cut check did not catch the unsafe control")
    print()
    print("RESULT: %s" % ("ok" if bad == 0 else "%d failures" % bad))


main()
