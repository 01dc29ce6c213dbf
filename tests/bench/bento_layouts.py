# bento_layouts.py — what candidate session/memory layouts and call patterns
# cost on the TESAIoT BENTO's real LittleFS geometry (issue 22), measured on
# MicroPython's own LittleFS (vfs.VfsLfs2): bytes programmed, erases and,
# above all, bytes READ per operation.
#
# Plain MicroPython (unix port), no bentoclaw module (except in "module"
# mode): the script replays the file operations of each layout (open "rb" /
# "wb" / "r+b", write, seek, flush, close, remove, rename, mkdir, rmdir,
# ilistdir) through a
# VfsLfs2 object on a counting RAM block device, and checks that the
# layout's own reader reads back the modelled state (every 100 operations
# and from a fresh mount at the end).
#
#   micropython -X heapsize=200M tests/bench/bento_layouts.py [MODE]
#
#   MODE  all (default)  the mechanics probe, every candidate on every
#                        workload fresh and aged, the power-cut checks
#         quick          every candidate, 200 operations per run
#         mech           the littlefs mechanics probe only
#         cuts           the power-cut checks only
#         one NAME [W,..] one candidate (its name in CANDIDATES), every
#                        workload (or those listed)
#         agedsweep NAME one candidate's mixed workload against root's log
#                        length at the start (0 .. 240 KiB)
#         longrun NAME N one candidate, N exchanges with a remember() after
#                        every 5th, a row per 2000: how the rotations' own
#                        commits into "/" lengthen root's log over time
#         module         today's bentoclaw module itself on this geometry
#                        (needs the bentoclaw unix build and a backend:
#                        python3 mpy/examples/backend.py --port 0, then
#                        BENTOCLAW_PORT=<port>): ask() and remember() with the
#                        block device counting reads, to check the replay of
#                        the baseline against the real module
#   environment  BENTO_BLOCKS (default 208 = 52 MiB; the device is allocated
#                once and reused), BENTO_OPS (default 1000), BENTO_ROOT
#                (fresh or aged: only those rows)
#
# Geometry (docs: /work/shared/spec/VENDOR-SDK.md §5): VfsLfs2(bdev,
# progsize=512, readsize=512) on 256 KiB erase blocks, 208 blocks, default
# lookahead (32) and mtime (on). MicroPython 1.25 derives cache_size =
# min(block, 4*max(read, prog)) = 2048 and block_cycles = 100; littlefs 2.8
# keeps a file inline while it is at most min(0x3fe, cache, block/8) = 1022
# bytes.
#
# Counted per operation (one ask() exchange, one remember()): bytes handed
# to writeblocks() ("programmed"), erases (ioctl 6), bytes handed to
# readblocks() ("read"), and the path operations the layout issued
# ("lookups": every open/remove/mkdir/rmdir/ilistdir is one, a rename two)
# and the directory fetches they imply (a lookup of /a is one fetch of "/",
# of /d/a two). Reported: mean and max over the run, for each workload:
#   ask       1000 exchanges, a 20-key store in place, no remember()
#   rem10/20/30  1000 remember()s on a store of 10/20/30 keys (the keys and
#             values of tests/mpy/bench_flash.py, key (i*7) % n)
#   mixed     1000 exchanges, a remember() after every 5th (20 keys)
#   burst     250 remember()s then 750 exchanges (20 keys): asks after the
#             memory directory's log was left long
#   hot       1000 remember()s of ONE key of a 20-key store (the other
#             files of the store age in the log)
#   worst     300 remember()s on 32 keys of 31 bytes with 127-byte values
#   askworst  1000 exchanges beside that worst-case store
#   asklong   1000 exchanges near the 255-byte cut (two-unit slots; a ring
#             of ~2.8 KB, past the inline limit)
#   (ask0, grow: an empty store, as tests/mpy/bench_flash.py's ask section;
#   a store growing from 4 to 32 keys: for the module check and the cuts)
# Goals (issue 22), per operation: programmed <= 1100 B, erases <= 0.005,
# read mean <= 256 KiB and max <= 1 MiB.
# each from a fresh file system and from an "aged" one: before the layout
# is created, a vendor file in "/" is rewritten until root's metadata log is
# about AGED_KIB long (a device in use: littlefs compacts a 256 KiB
# metadata block only when it is full, so a root that took ~250 commits
# since its last compaction reads ~128 KiB on every fetch).
#
# Candidates (CANDIDATES; tests/bench/BENTO_LAYOUTS.md has the results):
#   C1  today: the files in "/", the opens the module issues (traced through
#       a Python VFS), the memory fold through .tmp + rename
#   C2  the same files, fewer opens (C2-list: an ilistdir of "/" instead of
#       failed opens), no .tmp + rename
#   C3  the same files in a directory of our own (one, or one each)
#   C5  fewer, larger memory files: base + delta, or K "full" shards (each
#       holds all its keys: no base, no fold)
#   C4  rotation: session and memory each in two directories used in turn
#       (Place): the directory is written afresh when the core's own count of
#       the units it committed there passes a threshold; K of the full
#       shards adapts at each rotation (a472: every shard <= 472 B, one
#       512-byte program unit; a984: <= 984 B, two units)
#   C6  C4 with memory shards 0 and 1 kept open between calls (MemFull.kept:
#       "rb", or "r+b" for C6w, which also rewrites them through the handle:
#       seek(0), write, flush() = lfs2_file_sync, no path lookup)
# A name reads C<n>-<K policy>-s<session units>-m<memory units>.
#
# Deterministic: fixed workloads from a fixed LCG seed, a fresh file system
# per row. Power-cut check ("cuts"): every device operation (program or
# erase) of a window of operations, rotations included, is in turn the one
# where power fails (torn: half the bytes land / half the block is erased;
# dropped: nothing lands); the image is mounted afresh, the layout attaches
# (what the core does at boot), reads back, must read the state before or
# after the operation, and one more operation on the recovered image must
# read back right. An unsafe control layout shows the check can fail. The
# last line is "RESULT: ok" or "RESULT: N failures".

import gc
import sys
import os
import vfs
import json

from cut_dev import CutDev  # tests/bench/, beside this script

BS = 262144
PROG = 512
READ = 512
CACHE = 2048
INLINE_MAX = 1022
INLINE_2U = 984  # the largest inline file one commit of two 512-byte units holds
ENOENT = 2
EEXIST = 17
EIO = 5
RING_MAX = 10


def env_int(name, default):
    v = os.getenv(name)
    return int(v) if v else default


MODE = sys.argv[1] if len(sys.argv) > 1 else "all"
BLOCKS = env_int("BENTO_BLOCKS", 208)
OPS = env_int("BENTO_OPS", 200 if MODE == "quick" else 1000)
AGED_KIB = 128
CUT_BLOCKS = 12

# --- the counting block device ----------------------------------------------------


class Dev(CutDev):
    """cut_dev.CutDev of 256 KiB blocks (it counts the bytes read too)."""

    def __init__(self, blocks):
        super().__init__(blocks, BS)

    def counters(self):
        return (self.prog, self.erases, self.read)

    def log_len(self, pair=(0, 1)):
        """Bytes of the newer block of a metadata pair up to the end of its
        last tag (what a fetch of it scans): the revision count, then the
        XOR-chained big-endian tags until one is not valid."""
        best = None
        for b in pair:
            rev = int.from_bytes(self.data[b * BS : b * BS + 4], "little")
            if best is None or ((rev - best[1]) & 0xFFFFFFFF) < 0x80000000:
                best = (b, rev)
        b = best[0]
        d = self.mv[b * BS : (b + 1) * BS]
        off = 4
        ptag = 0xFFFFFFFF
        while off + 4 <= BS:
            t = int.from_bytes(d[off : off + 4], "big") ^ ptag
            if t & 0x80000000:
                break
            ln = t & 0x3FF
            size = 0 if ln == 0x3FF else ln
            typ = (t >> 20) & 0x7FF
            ptag = t
            if typ & 0x780 == 0x500:  # CCRC tag: the next commit flips the valid bit
                ptag = t ^ ((typ & 1) << 31)
            off += 4 + size
        return off


def mkfs(dev):
    vfs.VfsLfs2.mkfs(dev, progsize=PROG, readsize=READ)
    return vfs.VfsLfs2(dev, progsize=PROG, readsize=READ)


def mount(dev):
    return vfs.VfsLfs2(dev, progsize=PROG, readsize=READ)


# --- file operations, as a port issues them, counted ---------------------------------


class IO:
    """The file system as the core's port sees it, counting path lookups and
    the directory fetches they imply (one per path component)."""

    def __init__(self, fs):
        self.fs = fs
        self.lookups = 0
        self.fetches = 0

    def _n(self, path, n=1):
        self.lookups += n
        self.fetches += n * path.count("/")

    def read(self, path):
        self._n(path)
        try:
            f = self.fs.open(path, "rb")
        except OSError as e:
            if e.errno == ENOENT:
                return None
            raise
        try:
            return f.read()
        finally:
            f.close()

    def write(self, path, data):
        self._n(path)
        f = self.fs.open(path, "wb")
        try:
            f.write(data)
        finally:
            f.close()

    def remove(self, path):
        self._n(path)
        try:
            self.fs.remove(path)
        except OSError as e:
            if e.errno != ENOENT:
                raise

    def rename(self, a, b):
        self._n(a)
        self._n(b)
        self.fs.rename(a, b)

    def mkdir(self, path):
        self._n(path)
        try:
            self.fs.mkdir(path)
            return True
        except OSError as e:
            if e.errno != EEXIST:
                raise
            return False

    def rmdir(self, path):
        """0, or the errno of ENOENT / ENOTEMPTY (39)."""
        self._n(path)
        try:
            self.fs.rmdir(path)
        except OSError as e:
            if e.errno in (ENOENT, 39):
                return e.errno
            raise
        return 0

    def listdir(self, path):
        self._n(path + "/x")
        return [x[0] for x in self.fs.ilistdir(path)]


def units(nbytes):
    """Program units (512 B) of one commit of an inline file of nbytes: the
    struct tag, the data, the mtime attribute, the CRC and FCRC tags."""
    return (nbytes + 40 + PROG - 1) // PROG


# --- the line formats (sizes as the core writes them) ----------------------------------


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


def msg_line(m, end=None):
    """{"role":..,"content":..[,"st":[..]][,"seq":N][,"rot":R,"at":S][,"end":true]}
    A message is (role, content, stats or None)."""
    s = b'{"role":"' + m[0].encode() + b'","content":' + jstr(m[1])
    if end is not None:
        if m[2]:
            s += b"," + m[2]
        s += end + b',"end":true'
    return s + b"}\n"


def batch(msgs, seq, extra=b""):
    lines = [msg_line(m) for m in msgs[:-1]]
    lines.append(msg_line(msgs[-1], b',"seq":%d' % seq + extra))
    return b"".join(lines)


def json_objects(raw):
    """The JSON objects of raw's lines (blank, torn and other lines
    skipped)."""
    for ln in (raw or b"").split(b"\n"):
        if not ln:
            continue
        try:
            o = json.loads(ln)
        except ValueError:
            continue
        if isinstance(o, dict):
            yield o


def parse_session(raw):
    """Trusted entries (role, content) of one file (lines up to its last end
    line) and that end line as a dict ({} when none)."""
    out = []
    trusted = []
    endo = {}
    for o in json_objects(raw):
        if "role" in o:
            out.append((o["role"], o["content"]))
        elif not o.get("end"):
            continue
        if o.get("end"):
            trusted = trusted + out
            out = []
            endo = o
    return trusted, endo


def push(ring, e):
    r = ring + [e]
    return r[-RING_MAX:]


def pair_line(k, v):
    return b'{"key":' + jstr(k) + b',"value":' + jstr(v) + b"}\n"


def head_line(seq, rot=None, at=None):
    if rot is None:
        return b'{"seq":%d}\n' % seq
    return b'{"seq":%d,"rot":%d,"at":%d}\n' % (seq, rot, at)


def parse_pairs(raw, store=None):
    """Apply the pair lines of raw to store (last wins); returns (store,
    header dict)."""
    if store is None:
        store = {}
    head = {}
    for o in json_objects(raw):
        if "key" not in o:
            if "seq" in o:
                head = o
            continue
        store[o["key"]] = o["value"]
    return store, head


def store_bytes(store, keys=None):
    return b"".join(pair_line(k, store[k]) for k in (keys if keys is not None else store))


def fnv(k):
    h = 2166136261
    for c in k.encode():
        h = ((h ^ c) * 16777619) & 0xFFFFFFFF
    return h


# --- where a part's files live -----------------------------------------------------------

ENOTEMPTY = 39


class Place:
    """The files of one part (session or memory): in "/" under today's names
    (dirs None: /.bentoclaw_<name>), in one directory of their own, or in
    two directories used in turn (rotation: when the part estimates that
    its directory's log holds `rotate` program units since the directory
    was made, it writes its live state into the other directory, made
    afresh by mkdir, the marker file last; the old directory's files and
    then the directory itself are removed lazily, one per later operation,
    so that no operation pays for more than one fetch of the old, long
    log). The estimate is the part's own count of the units it committed
    there, persisted as "at" (the seq at the rotation) in its files."""

    def __init__(self, dirs=None, rotate=None):
        self.dirs = dirs
        self.rotate = rotate
        self.cur = 0
        self.rot = 0  # rotation number, carried in the marker file
        self.used = 0  # program units committed into the current directory (estimate)
        self.trash = []  # leftovers of the old directory: files, then the directory ("<dir>/")
        self.rotations = 0

    def two(self):
        return self.dirs is not None and len(self.dirs) == 2

    def path(self, name, i=None):
        if self.dirs is None:
            return "/.bentoclaw_" + name
        return self.dirs[self.cur if i is None else i] + "/" + name

    def due(self):
        return self.rotate is not None and self.used >= self.rotate

    def sweep(self, io):
        if not self.trash:
            return False
        x = self.trash.pop(0)
        if x.endswith("/"):
            io.rmdir(x[:-1])
        else:
            io.remove(x)
        return True

    def begin_rotation(self, io):
        """Finish any cleanup, make the other directory; its index."""
        while self.sweep(io):
            pass
        new = 1 - self.cur
        io.mkdir(self.dirs[new])
        self.rot += 1
        self.rotations += 1
        return new

    def end_rotation(self, old_names):
        old = self.cur
        self.cur = 1 - old
        self.trash = [self.dirs[old] + "/" + n for n in old_names] + [self.dirs[old] + "/"]

    def adopt(self, io, names):
        """At boot: the directory not chosen, if there is one, is a leftover
        (a cleanup or a rotation a cut interrupted): to the trash."""
        other = self.dirs[1 - self.cur]
        if io.rmdir(other) == ENOTEMPTY:
            self.trash = [other + "/" + n for n in names] + [other + "/"]

    def label(self):
        if self.dirs is None:
            return "/"
        s = " | ".join(self.dirs)
        if self.rotate is not None:
            s += " (rotated at %d units)" % self.rotate
        return s


# --- session: base + 6 slots (the core's rule), optionally rotated ---------------------------


class Session:
    """The core's session files: a base (session) and six slots (session.0
    .. .5), a batch per flush "wb" into the oldest slot; the base is
    rewritten in place ("wb", atomic on littlefs) only when the slot to
    overwrite still holds an entry of the ring after this flush (with
    two-message exchanges: never). With rotation the flush that finds the
    directory's log long enough writes the ring, this batch included, as
    the base of the other directory (its end line says "rot":R+1 and
    "at":seq): that base is the marker. Boot reads the base of both
    directories and takes the higher rot."""

    K = 6
    NAMES = ["session.%d" % i for i in range(6)] + ["session"]

    def __init__(self, place):
        self.p = place

    def attach(self, io):
        self.io = io
        p = self.p
        if p.dirs is not None and not p.two():
            io.mkdir(p.dirs[0])
        if p.two():
            best = None
            for i in (0, 1):
                ents, endo = parse_session(io.read(p.path("session", i)))
                if endo and (best is None or endo.get("rot", 0) > best[1]):
                    best = (i, endo.get("rot", 0))
            if best is None:
                io.mkdir(p.dirs[0])
                best = (0, 0)
            p.cur, p.rot = best
            p.adopt(io, self.NAMES)
        self.ring, self.base, self.slotseq, self.at = self.read_all(io)
        self.seq = max([self.base] + self.slotseq)
        self.last = None
        p.used = self.seq - self.at  # one unit a flush, since the rotation

    def read_all(self, io):
        """(ring, base seq, slot seqs, the base's "at"): the base, then the
        slots newer than it in seq order. Ring entries: (role, content, seq
        of their batch)."""
        ents, endo = parse_session(io.read(self.p.path("session")))
        base = endo.get("seq", 0)
        ring = [(e[0], e[1], 0) for e in ents]
        slots = []
        for i in range(self.K):
            e2, o2 = parse_session(io.read(self.p.path("session.%d" % i)))
            slots.append((o2.get("seq", 0), i, e2))
        for q, i, e2 in sorted(slots):
            if q > base:
                for e in e2:
                    ring = push(ring, (e[0], e[1], q))
        return ring, base, [q for q, i, e in slots], endo.get("at", 0)

    def load(self, io):
        return [(e[0], e[1]) for e in self.read_all(io)[0]]

    def base_bytes(self, ring, seq, last):
        msgs = [(e[0], e[1], None) for e in ring]
        if last and msgs:
            msgs[-1] = (msgs[-1][0], msgs[-1][1], last[-1][2])
        extra = b',"rot":%d,"at":%d' % (self.p.rot, self.at) if self.p.two() else b""
        return batch(msgs, seq, extra)

    def flush(self, msgs):
        io = self.io
        p = self.p
        self.seq += 1
        live = self.ring
        for m in msgs:
            live = push(live, (m[0], m[1], self.seq))
        if p.due():
            new = p.begin_rotation(io)
            self.at = self.seq
            data = self.base_bytes(live, self.seq, msgs)
            if len(data) <= INLINE_2U:
                # the ring, this batch included, as the new base
                io.write(p.path("session", new), data)  # the marker: from here on the new directory counts
                p.used = units(len(data))
                self.base = self.seq
                self.slotseq = [0] * self.K
                self.ring = [(e[0], e[1], 0) for e in live]
            else:
                # a ring too long for one inline file: two entries a slot,
                # numbered up to this batch's seq, then a base that holds
                # nothing but the end line (the marker, last)
                ents = [(e[0], e[1], None) for e in live]
                groups = [ents[i : i + 2] for i in range(0, len(ents), 2)]
                q0 = self.seq - len(groups)
                self.slotseq = [0] * self.K
                used = 0
                ring = []
                for j, g in enumerate(groups):
                    q = q0 + 1 + j
                    if j == len(groups) - 1:
                        g[-1] = (g[-1][0], g[-1][1], msgs[-1][2])
                    d = batch(g, q)
                    io.write(p.path("session.%d" % (q % self.K), new), d)
                    used += units(len(d))
                    self.slotseq[q % self.K] = q
                    ring += [(e[0], e[1], q) for e in g]
                mark = b'{"seq":%d,"rot":%d,"at":%d,"end":true}\n' % (q0, p.rot, self.at)
                io.write(p.path("session", new), mark)
                p.used = used + units(len(mark))
                self.base = q0
                self.ring = ring
            p.end_rotation(self.NAMES)
            self.last = msgs
            return
        i = self.slotseq.index(min(self.slotseq))
        q = self.slotseq[i]
        if q > self.base and any(e[2] <= q for e in live):
            data = self.base_bytes(self.ring, self.seq - 1, self.last)
            io.write(p.path("session"), data)
            p.used += units(len(data))
            self.base = self.seq - 1
        data = batch(msgs, self.seq)
        io.write(p.path("session.%d" % i), data)
        p.used += units(len(data))
        self.slotseq[i] = self.seq
        self.ring = live
        self.last = msgs


# --- memory layouts ----------------------------------------------------------------------------


class MemShards:
    """Today's store: a base (memory: {"seq":G} + one pair a line) and 8
    hash shards (memory.0 .. .7: {"seq":G} + the pairs set since the base,
    at most 220 bytes and 6 records); a set rewrites its shard ("wb"), or
    folds: the merged store under {"seq":G+1} (fold "tmp": to memory.tmp,
    renamed over the base, as the core does; "inplace": "wb" on the base).
    Shards of an older generation are ignored and overwritten later. With
    rotation, the set that finds the log long enough folds into the other
    directory (the base is the marker).

    pattern "today": the opens the module issues (traced through a Python
    VFS): a context build opens the base, the 8 shards, the base, then for
    every live shard record its shard and the base again; a remember() the
    base, the 8 shards, the base, and the key's shard twice more.
    pattern "onepass": the base once and only the shards that hold records
    of the base's generation (known in RAM from the last full read and the
    core's own writes; at boot: all 8 once).
    pattern "list": ilistdir() of the directory, then the base and every
    shard file the listing shows (stale ones included)."""

    H = 8
    NAMES = ["memory.%d" % i for i in range(8)] + ["memory.tmp", "memory"]

    def __init__(self, place, pattern="today", fold="tmp", cap=220, maxrec=6):
        self.p = place
        self.pattern = pattern
        self.fold = fold
        self.cap = cap
        self.maxrec = maxrec

    def attach(self, io):
        self.io = io
        p = self.p
        if p.dirs is not None and not p.two():
            io.mkdir(p.dirs[0])
        if p.two():
            rs = []
            for i in (0, 1):
                s, h = parse_pairs(io.read(p.path("memory", i)))
                rs.append(h.get("rot", -1) if h else -1)
            if max(rs) < 0:
                io.mkdir(p.dirs[0])
            p.cur = 1 if rs[1] > rs[0] else 0
            p.rot = max(rs[0], rs[1], 0)
            p.adopt(io, self.NAMES)
        self.store, self.gen, self.shards, self.at = self.read_all(io)
        self.seq = self.gen
        p.used = 0

    def read_all(self, io):
        store, head = parse_pairs(io.read(self.p.path("memory")))
        gen = head.get("seq", 0)
        shards = {}
        for i in range(self.H):
            s, h = parse_pairs(io.read(self.p.path("memory.%d" % i)))
            if h.get("seq", -1) == gen and s:
                shards[i] = s
                for k in s:
                    store[k] = s[k]
        return store, gen, shards, head.get("at", 0)

    def load(self, io):
        return self.read_all(io)[0]

    def seed(self, store):
        self.fold_to(dict(store), False)

    def context(self):
        io = self.io
        p = self.p
        if self.pattern == "today":
            io.read(p.path("memory"))
            for i in range(self.H):
                io.read(p.path("memory.%d" % i))
            io.read(p.path("memory"))
            for i in sorted(self.shards):
                for k in self.shards[i]:
                    io.read(p.path("memory.%d" % i))
                    io.read(p.path("memory"))
        elif self.pattern == "list":
            names = io.listdir(p.dirs[p.cur] if p.dirs else "/")
            io.read(p.path("memory"))
            for i in range(self.H):
                n = p.path("memory.%d" % i)
                if n.rsplit("/", 1)[1] in names:
                    io.read(n)
        else:
            io.read(p.path("memory"))
            for i in sorted(self.shards):
                io.read(p.path("memory.%d" % i))

    def set(self, k, v):
        io = self.io
        i = fnv(k) % self.H
        if self.pattern == "today":
            io.read(self.p.path("memory"))
            for j in range(self.H):
                io.read(self.p.path("memory.%d" % j))
            io.read(self.p.path("memory"))
            io.read(self.p.path("memory.%d" % i))
            io.read(self.p.path("memory.%d" % i))
        else:
            self.context()
        cur = dict(self.shards.get(i, {}))
        cur[k] = v
        data = head_line(self.gen) + store_bytes(cur)
        st = dict(self.store)
        st[k] = v
        if self.p.due():
            self.fold_to(st, True)
            return
        if len(data) > self.cap or len(cur) > self.maxrec:
            self.fold_to(st, False)
            return
        io.write(self.p.path("memory.%d" % i), data)
        self.p.used += units(len(data))
        self.shards[i] = cur
        self.store[k] = v

    def fold_to(self, store, rotate):
        io = self.io
        p = self.p
        self.gen += 1
        if rotate:
            new = p.begin_rotation(io)
            self.at = self.gen
            data = head_line(self.gen, p.rot, self.at) + store_bytes(store)
            io.write(p.path("memory", new), data)
            p.end_rotation(self.NAMES)
            p.used = units(len(data))
        else:
            data = (head_line(self.gen, p.rot, self.at) if p.two() else head_line(self.gen)) + store_bytes(store)
            if self.fold == "tmp":
                io.write(p.path("memory.tmp"), data)
                io.rename(p.path("memory.tmp"), p.path("memory"))
            else:
                io.write(p.path("memory"), data)
            p.used += units(len(data))
        self.shards = {}
        self.store = store


def data_units(n):
    return units(n)


class MemFull:
    """K shard files (memory.0 .. .K-1), each holding ALL the pairs whose
    key hashes to it, under a header {"seq":N,"k":K[,"rot":R,"at":S]}; no
    base, no fold: a set rewrites its shard ("wb"). remember() reads its
    own shard only (own=True: the key count for the 32-key cap is known in
    RAM from the last full read) or all K. k: a fixed K, or None for the
    smallest K of 1, 2, 4, 8 whose every shard holds at most `cap` bytes,
    chosen when the directory is written afresh (rotation): a set whose
    shard would pass `cap` rotates early to a larger K. With rotation the
    set that finds the log long enough writes all K shards (the change
    included) into the other directory, shard 0 (the marker) last. Boot
    reads shard 0 of both directories and takes the higher rot."""

    KS = (1, 2, 4, 8)

    def __init__(self, place, k=None, own=True, cap=984, keep=False):
        self.p = place
        self.k0 = k
        self.k = k or 1
        self.own = own
        self.cap = cap
        self.keep = keep  # keep the shards open between calls (see kept())
        self.handles = {}

    KEEPMAX = 2  # handles kept open at most (each holds a 2 KiB cache on the GC heap)

    def kept(self, i):
        """keep=True: shard i read through a handle kept open between calls
        (opened once: one lookup; then seek(0) + read, which littlefs serves
        from the handle's own cache for an inline file: no lookup, no device
        read). The core's own write of shard i, and a rotation, close it."""
        io = self.io
        f = self.handles.get(i)
        if f is None:
            io._n(self.p.path("memory.%d" % i))
            try:
                f = io.fs.open(self.p.path("memory.%d" % i), "r+b" if self.keep == "rw" else "rb")
            except OSError as e:
                if e.errno != ENOENT:
                    raise
                return None
            self.handles[i] = f
        f.seek(0)
        return f.read()

    def kept_write(self, i, data):
        """keep="rw": the shard rewritten through its kept "r+b" handle:
        seek(0), write, flush() (lfs2_file_sync: one atomic commit into the
        handle's directory, no path lookup). There is no truncate: a shorter
        content is padded with spaces to the old length (a blank line the
        reader skips)."""
        f = self.handles[i]
        f.seek(0, 2)
        n = f.tell()
        if len(data) < n:
            data = data + b" " * (n - len(data) - 1) + b"\n"
        f.seek(0)
        f.write(data)
        f.flush()
        return len(data)

    def drop(self, i=None):
        for j in (list(self.handles) if i is None else [i]):
            f = self.handles.pop(j, None)
            if f is not None:
                f.close()

    def names(self, k):
        return ["memory.%d" % i for i in range(k)]

    def shard(self, key, k=None):
        return fnv(key) % (k or self.k)

    def attach(self, io):
        self.io = io
        p = self.p
        if p.dirs is not None and not p.two():
            io.mkdir(p.dirs[0])
        if p.two():
            hs = []
            for i in (0, 1):
                s, h = parse_pairs(io.read(p.path("memory.0", i)))
                hs.append(h if h else {"rot": -1})
            if max(hs[0]["rot"], hs[1]["rot"]) < 0:
                io.mkdir(p.dirs[0])
            p.cur = 1 if hs[1]["rot"] > hs[0]["rot"] else 0
            p.rot = max(hs[0]["rot"], hs[1]["rot"], 0)
            p.adopt(io, self.names(max(hs[1 - p.cur].get("k", 8), 1)))
        self.store, self.seq, self.at, big = self.read_all(io)
        p.used = (self.seq - self.at) * units(big)

    def read_all(self, io):
        store = {}
        s, h = parse_pairs(io.read(self.p.path("memory.0")), store)
        k = h.get("k", self.k0 or 1)
        seq = h.get("seq", 0)
        at = h.get("at", 0)
        self.k = k
        big = 0
        for i in range(1, k):
            raw = io.read(self.p.path("memory.%d" % i))
            big = max(big, len(raw) if raw else 0)
            s, h = parse_pairs(raw, store)
            seq = max(seq, h.get("seq", 0))
        return store, seq, at, big

    def load(self, io):
        return self.read_all(io)[0]

    def keys_of(self, store, i, k):
        return [x for x in store if fnv(x) % k == i]

    def shard_bytes(self, store, i, k):
        h = head_line(self.seq, self.p.rot, self.at) if self.p.two() else head_line(self.seq)
        return h[:-2] + b',"k":%d}\n' % k + store_bytes(store, self.keys_of(store, i, k))

    def choose_k(self, store):
        if self.k0:
            return self.k0
        for k in self.KS:
            if all(len(self.shard_bytes(store, i, k)) <= self.cap for i in range(k)):
                return k
        return self.KS[-1]

    def seed(self, store):
        self.store = dict(store)
        self.k = self.choose_k(self.store)
        for i in range(self.k - 1, -1, -1):
            self.io.write(self.p.path("memory.%d" % i), self.shard_bytes(self.store, i, self.k))

    def context(self):
        for i in range(self.k):
            if self.keep and i < self.KEEPMAX:
                self.kept(i)
            else:
                self.io.read(self.p.path("memory.%d" % i))

    def set(self, key, v):
        io = self.io
        p = self.p
        i = self.shard(key)
        if self.keep and i < self.KEEPMAX:
            self.kept(i)
            if self.keep != "rw":
                self.drop(i)
        elif self.own:
            io.read(p.path("memory.%d" % i))
        else:
            self.context()
        self.store[key] = v
        self.seq += 1
        data = self.shard_bytes(self.store, i, self.k)
        grow = self.k0 is None and len(data) > self.cap and self.k < self.KS[-1]
        if p.two() and (p.due() or grow):
            self.rotate()
            return
        if self.keep == "rw" and i in self.handles:
            p.used += units(self.kept_write(i, data))
            return
        io.write(p.path("memory.%d" % i), data)
        p.used += units(len(data))

    def rotate(self):
        io = self.io
        p = self.p
        self.drop()
        oldk = self.k
        new = p.begin_rotation(io)
        self.at = self.seq
        self.k = self.choose_k(self.store)
        used = 0
        for i in range(self.k - 1, -1, -1):  # the marker (shard 0) last
            data = self.shard_bytes(self.store, i, self.k)
            io.write(p.path("memory.%d" % i, new), data)
            used += units(len(data))
        p.end_rotation(self.names(oldk))
        p.used = used


class MemBaseDelta:
    """A base (memory: {"seq":G} + the store) and one delta file (memory.d:
    {"seq":G} + the pairs set since the base, a key once); a set reads both
    and rewrites the delta ("wb"), or, when the delta would pass `cap`
    bytes, folds: the merged store "wb" over the base (generation G+1: the
    delta is then stale and ignored)."""

    def __init__(self, place, cap=400):
        self.p = place
        self.cap = cap

    def attach(self, io):
        self.io = io
        if self.p.dirs is not None:
            io.mkdir(self.p.dirs[0])
        self.store, self.gen, self.delta = self.read_all(io)

    def read_all(self, io):
        store, h = parse_pairs(io.read(self.p.path("memory")))
        gen = h.get("seq", 0)
        d, hd = parse_pairs(io.read(self.p.path("memory.d")))
        if hd.get("seq", -1) != gen:
            d = {}
        for k in d:
            store[k] = d[k]
        return store, gen, d

    def load(self, io):
        return self.read_all(io)[0]

    def seed(self, store):
        self.gen = 1
        self.store = dict(store)
        self.delta = {}
        self.io.write(self.p.path("memory"), head_line(self.gen) + store_bytes(self.store))

    def context(self):
        self.io.read(self.p.path("memory"))
        self.io.read(self.p.path("memory.d"))

    def set(self, key, v):
        io = self.io
        self.context()
        self.store[key] = v
        d = dict(self.delta)
        d[key] = v
        data = head_line(self.gen) + store_bytes(d)
        if len(data) <= self.cap:
            io.write(self.p.path("memory.d"), data)
            self.delta = d
            return
        self.gen += 1
        self.delta = {}
        io.write(self.p.path("memory"), head_line(self.gen) + store_bytes(self.store))


class MemUnsafe:
    """Control for the power-cut check (not a candidate): remove the store,
    then write it anew. A cut between the two leaves no store."""

    name = "control: remove + rewrite (unsafe on purpose)"

    def __init__(self):
        self.p = Place()

    def attach(self, io):
        self.io = io
        self.store = self.load(io)

    def load(self, io):
        return parse_pairs(io.read("/.bentoclaw_memory"))[0]

    def seed(self, store):
        self.store = dict(store)
        self.io.write("/.bentoclaw_memory", store_bytes(store))

    def context(self):
        self.io.read("/.bentoclaw_memory")

    def set(self, k, v):
        self.store[k] = v
        self.io.remove("/.bentoclaw_memory")
        self.io.write("/.bentoclaw_memory", store_bytes(self.store))


# --- candidates ------------------------------------------------------------------------------


def close(lay):
    """Close the handles a layout keeps open (before its device is reused)."""
    if hasattr(lay.mem, "drop"):
        lay.mem.drop()


class Layout:
    def __init__(self, name, sess, mem):
        self.name = name
        self.sess = sess
        self.mem = mem

    def attach(self, io):
        self.io = io
        self.sess.attach(io)
        self.mem.attach(io)

    def sweep(self):
        """At most one leftover of an old directory removed per operation."""
        if not self.sess.p.sweep(self.io):
            self.mem.p.sweep(self.io)

    def ask(self, msgs):
        self.mem.context()
        self.sess.flush(msgs)
        self.sweep()

    def remember(self, k, v):
        self.mem.set(k, v)
        self.sweep()

    def rotations(self):
        return self.sess.p.rotations + self.mem.p.rotations


SD = ["/.bentoclaw_s0", "/.bentoclaw_s1"]
MD = ["/.bentoclaw_m0", "/.bentoclaw_m1"]
S1 = ["/.bentoclaw_s"]
M1 = ["/.bentoclaw_m"]


def cand(name, note, sess, mem):
    return (name, note, lambda: Layout(name, sess(), mem()))


def sp(ts):
    return (lambda: Session(Place(SD, ts))) if ts else (lambda: Session(Place(S1)))


CANDIDATES = [
    cand("C1-today", "today: the files in /, the module's opens, fold via .tmp + rename",
         lambda: Session(Place()), lambda: MemShards(Place(), "today", "tmp")),
    cand("C2-onepass", "today's files in /; base once + live shards once; fold \"wb\" in place",
         lambda: Session(Place()), lambda: MemShards(Place(), "onepass", "inplace")),
    cand("C2-list", "C2, but the context lists \"/\" (ilistdir) and reads the shard files it shows",
         lambda: Session(Place()), lambda: MemShards(Place(), "list", "inplace")),
    cand("C3-dir", "C2 in one directory /.bentoclaw",
         lambda: Session(Place(["/.bentoclaw"])), lambda: MemShards(Place(["/.bentoclaw"]), "onepass", "inplace")),
    cand("C3-dirs", "C2 with the session in /.bentoclaw_s, the memory in /.bentoclaw_m",
         lambda: Session(Place(S1)), lambda: MemShards(Place(M1), "onepass", "inplace")),
    cand("C5-bd", "C3-dirs, memory as base + one delta file (fold at 400 B)",
         lambda: Session(Place(S1)), lambda: MemBaseDelta(Place(M1))),
    cand("C5-full1", "C3-dirs, memory as 1 file (the whole store)",
         lambda: Session(Place(S1)), lambda: MemFull(Place(M1), 1)),
    cand("C5-full2", "C3-dirs, memory as 2 full shards (no base)",
         lambda: Session(Place(S1)), lambda: MemFull(Place(M1), 2)),
    cand("C5-full4", "C3-dirs, memory as 4 full shards (no base)",
         lambda: Session(Place(S1)), lambda: MemFull(Place(M1), 4)),
    cand("C4-shards", "C3-dirs rotated: session at 256 units, memory (today's base + 8 shards) at 256",
         sp(256), lambda: MemShards(Place(MD, 256), "onepass", "inplace")),
]


def rot(ts, tm, k=None, cap=984, own=True, keep=False):
    kk = ("k%d" % k) if k else ("a%d" % cap)
    name = "C%s-%s-s%s-m%d%s" % ({False: "4", True: "6", "rw": "6w"}[keep], kk, ts if ts else "x", tm, "" if own else "-all")
    note = "session %s; memory %s, directories rotated at %d units%s%s" % (
        ("rotated at %d units" % ts) if ts else "in /.bentoclaw_s (not rotated)",
        ("%d full shards" % k) if k else ("full shards, K adaptive (each <= %d B)" % cap), tm,
        "" if own else "; remember() reads all shards",
        {False: "", True: "; the shards kept open (\"rb\") between calls, re-read from the handle's cache",
         "rw": "; the shards kept open (\"r+b\") between calls, read from the handle's cache and rewritten through it"}[keep])
    return cand(name, note, sp(ts), lambda: MemFull(Place(MD, tm), k, own, cap, keep))


for _a in ((256, 256, 2), (None, 256, None, 472), (200, 200, None, 472), (256, 256, None, 472),
           (400, 256, None, 472), (256, 256, None, 472, False), (256, 400, None, 984),
           (256, 400, None, 984, True, True), (256, 400, None, 984, True, "rw"), (400, 400, None, 984, True, "rw"),
           (256, 448, None, 984, True, "rw")):
    CANDIDATES.append(rot(*_a))


def candidate(name):
    for c in CANDIDATES:
        if c[0] == name:
            return c
    raise ValueError(name)


# --- workloads ---------------------------------------------------------------------------


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


def long_exchanges(n, seed=9):
    """n exchanges near the 255-byte cut (user 40-120 B, reply 180-255 B,
    Thai and quotes): a ring of 10 turns is ~2.8 KB, past the inline limit."""
    rng = Rng(seed)
    out = []
    for i in range(n):
        st = b'"st":[%d,%d,%d,%d,%d,%d,%d]' % (900 + 37 * i, 200 + 11 * i, 240 + 9 * i, 60 + 3 * i,
                                             1800 + 5 * i, i + 1, 1733050000 + 60 * i)
        out.append([("user", 'turn %03d: "' % i + text(rng, 30, 110), None),
                    ("assistant", text(rng, 180, 255), st)])
    return out


def exchanges(n, seed=7):
    """n exchanges of the issue's short form (~140 B of user + reply) with
    the core's statistics on the end line: (msgs) each."""
    rng = Rng(seed)
    out = []
    for i in range(n):
        st = b'"st":[%d,%d,%d,%d,%d,%d,%d]' % (900 + 37 * i, 200 + 11 * i, 240 + 9 * i, 60 + 3 * i,
                                             1800 + 5 * i, i + 1, 1733050000 + 60 * i)
        out.append([("user", "turn %03d: " % i + text(rng, 12, 22), None),
                    ("assistant", text(rng, 30, 42), st)])
    return out


VALUES = ("สมชาย", "Chiang Mai", "durian", "12", "zone A", "th", "farm-2g", "Somsri", "metric",
          "+66 81 234 5678")


def bench_store(n):
    """tests/mpy/bench_flash.py's store and sets: key_NN, the values above;
    set i changes key (i*7) % n to "<value> i"."""
    store = {}
    for k in range(n):
        store["key_%02d" % k] = VALUES[k % len(VALUES)]
    keys = list(store)
    ops = [(keys[(i * 7) % n], "%s %d" % (VALUES[i % len(VALUES)], i)) for i in range(OPS)]
    return store, ops


def hot_store():
    store, ops = bench_store(20)
    return store, [("key_03", "%s %d" % (VALUES[i % len(VALUES)], i)) for i in range(OPS)]


def worst_store(n_ops):
    rng = Rng(99)
    store = {}
    keys = []
    for k in range(32):
        key = ("w%02d_" % k) + "k" * 27
        keys.append(key)
        store[key] = ("%03d " % k) + text(rng, 123, 123)
    ops = []
    for i in range(n_ops):
        k = keys[(i * 7) % 32]
        ops.append((k, ("%03d " % i) + text(rng, 123, 123)))
    return store, ops


WORKLOADS = ("ask", "rem10", "rem20", "rem30", "mixed", "burst", "hot", "worst", "askworst", "asklong")


def workload(name):
    """(store, [("ask", msgs) | ("rem", (k, v))])"""
    if name == "ask":
        store, _ = bench_store(20)
        return store, [("ask", m) for m in exchanges(OPS)]
    if name == "asklong":  # long exchanges: 2-unit slots, a ring past the inline limit
        store, _ = bench_store(20)
        return store, [("ask", m) for m in long_exchanges(OPS)]
    if name == "ask0":  # an empty store: tests/mpy/bench_flash.py's ask() section
        return {}, [("ask", m) for m in exchanges(OPS)]
    if name.startswith("rem"):
        store, ops = bench_store(int(name[3:]))
        return store, [("rem", o) for o in ops]
    if name == "mixed":
        store, ops = bench_store(20)
        out = []
        j = 0
        for i, m in enumerate(exchanges(OPS)):
            out.append(("ask", m))
            if i % 5 == 4:
                out.append(("rem", ops[j]))
                j += 1
        return store, out
    if name == "burst":  # 250 remember()s, then asks: the memory directory's log left long
        store, ops = bench_store(20)
        out = [("rem", o) for o in ops[:250]]
        out += [("ask", m) for m in exchanges(OPS - 250)]
        return store, out
    if name == "grow":  # 4 keys, then new keys up to 32, then changes
        store, ops = bench_store(32)
        keys = list(store)
        small = dict((k, store[k]) for k in keys[:4])
        return small, [("rem", (keys[4 + i] if 4 + i < 32 else keys[i % 32], "%s %d" % (VALUES[i % 10], i)))
                       for i in range(OPS)]
    if name == "hot":
        store, ops = hot_store()
        return store, [("rem", o) for o in ops]
    if name == "askworst":  # asks beside the worst-case store
        store, _ = worst_store(1)
        return store, [("ask", m) for m in exchanges(OPS)]
    if name == "worst":
        store, ops = worst_store(min(OPS, 300))
        return store, [("rem", o) for o in ops]
    raise ValueError(name)


# --- running -------------------------------------------------------------------------------

bad = 0
CONTROL = [False]


def fail(*what):
    global bad
    bad += 1
    if not CONTROL[0]:
        print("FAIL", *what)


POOL = []


def device():
    if not POOL:
        gc.collect()
        POOL.append(Dev(BLOCKS))
    return POOL[0].blank()


def age_root(io, dev, kib=AGED_KIB):
    """Rewrite a vendor file in "/" until root's log is about kib long."""
    i = 0
    while i % 16 or dev.log_len() < kib * 1024:
        io.write("/vendor.json", b'{"boot":%d,"wifi":"farm-2g","note":"%s"}' % (i, b"x" * 40))
        i += 1
    return i


class Acc:
    def __init__(self):
        self.n = 0
        self.prog = 0
        self.erases = 0
        self.read = 0
        self.rmax = 0
        self.pmax = 0
        self.lookups = 0
        self.fetches = 0
        self.reads = []

    def add(self, dp, de, dr, dl, df):
        self.n += 1
        self.prog += dp
        self.erases += de
        self.read += dr
        self.rmax = max(self.rmax, dr)
        self.pmax = max(self.pmax, dp)
        self.lookups += dl
        self.fetches += df

    def row(self):
        n = self.n or 1
        return (self.n, self.prog / n, self.erases / n, self.read / n, self.rmax, self.lookups / n, self.fetches / n,
                self.pmax)


def run(make, wname, aged, kib=AGED_KIB):
    dev = device()
    fs = mkfs(dev)
    io = IO(fs)
    aged_commits = age_root(io, dev, kib) if aged else 0
    lay = make()
    lay.attach(io)
    store, ops = workload(wname)
    if store:
        lay.mem.seed(store)
    mstore = dict(store)
    ring = []
    root0 = dev.log_len()
    dev.reset()
    accs = {"ask": Acc(), "rem": Acc(), "all": Acc()}
    for t, (kind, arg) in enumerate(ops):
        p0, e0, r0 = dev.counters()
        l0, f0 = io.lookups, io.fetches
        if kind == "ask":
            lay.ask(arg)
            for m in arg:
                ring = push(ring, (m[0], m[1]))
        else:
            lay.remember(arg[0], arg[1])
            mstore[arg[0]] = arg[1]
        p1, e1, r1 = dev.counters()
        d = (p1 - p0, e1 - e0, r1 - r0, io.lookups - l0, io.fetches - f0)
        accs[kind].add(*d)
        accs["all"].add(*d)
        if t % 100 == 99:
            c = dev.counters()
            if lay.sess.load(io) != ring or lay.mem.load(io) != mstore:
                fail(lay.name, wname, "read back differs at op", t)
                break
            dev.prog, dev.erases, dev.read = c
    close(lay)
    # and from a fresh mount, after a reboot: attach (the boot) and read
    io2 = IO(mount(dev))
    lay2 = make()
    lay2.attach(io2)
    if lay2.sess.load(io2) != ring or lay2.mem.load(io2) != mstore:
        fail(lay.name, wname, "after remount")
    close(lay2)
    return accs, root0, lay.rotations()


ROWS = []


def goal_ok(kind, a):
    n, prog, er, rmean, rmax, lk, fe, pmax = a.row()
    return prog <= 1100 and er <= 0.005 and rmean <= 256 * 1024 and rmax <= 1024 * 1024


AGEDS = {"fresh": (False,), "aged": (True,)}.get(os.getenv("BENTO_ROOT") or "", (False, True))


def run_candidate(c, works, ageds=AGEDS):
    name, note, make = c
    for aged in ageds:
        for w in works:
            gc.collect()
            accs, root0, rots = run(make, w, aged)
            for kind in ("ask", "rem"):
                a = accs[kind]
                if a.n == 0:
                    continue
                n, prog, er, rmean, rmax, lk, fe, pmax = a.row()
                ok = goal_ok(kind, a)
                ROWS.append((name, w, "aged" if aged else "fresh", kind, n, prog, er, rmean, rmax, lk, fe, ok, root0,
                             pmax, rots))
                print("ROW %-20s %-6s %-5s %-3s n=%4d prog %5.0f B (max %5d) erases %.4f read mean %7.0f max %8d lookups %4.1f fetches %4.1f rotations %d %s (root log %d B)" % (
                    name, w, "aged" if aged else "fresh", kind, n, prog, pmax, er, rmean, rmax, lk, fe, rots,
                    "meets" if ok else "misses", root0))


def table(rows, title):
    print()
    print("### " + title)
    print()
    print("| candidate | root | op | n | programmed B/op (max) | erases/op | read mean B/op | read max B/op | lookups/op | fetches/op | rotations | goals |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        name, w, aged, kind, n, prog, er, rmean, rmax, lk, fe, ok, root0, pmax, rots = r
        print("| %s | %s | %s | %d | %d (%d) | %.4f | %d | %d | %.1f | %.1f | %d | %s |" % (
            name, aged, "ask" if kind == "ask" else "remember", n, prog, pmax, er, rmean, rmax, lk, fe, rots,
            "met" if ok else "missed"))
    print()


def candidates_table():
    print("## candidates")
    print()
    print("| name | layout and call pattern |")
    print("|---|---|")
    for c in CANDIDATES:
        print("| %s | %s |" % (c[0], c[1]))
    print()


def long_run(name, n):
    c = candidate(name)
    print("## %s over %d exchanges (a remember() after every 5th, 20 keys), a row per 2000" % (name, n))
    print()
    print("| exchanges | root log | ask B | ask erases | ask read mean | ask read max | remember B | remember erases | remember read mean | remember read max | rotations |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    dev = device()
    io = IO(mkfs(dev))
    lay = c[2]()
    lay.attach(io)
    store, rops = bench_store(20)
    lay.mem.seed(store)
    ex = exchanges(200)
    dev.reset()
    acc_a = Acc()
    acc_r = Acc()
    j = 0
    for i in range(n):
        c0 = dev.counters()
        lay.ask(ex[i % 200])
        c1 = dev.counters()
        acc_a.add(c1[0] - c0[0], c1[1] - c0[1], c1[2] - c0[2], 0, 0)
        if i % 5 == 4:
            k, v = rops[j % len(rops)]
            j += 1
            c0 = dev.counters()
            lay.remember(k, v)
            c1 = dev.counters()
            acc_r.add(c1[0] - c0[0], c1[1] - c0[1], c1[2] - c0[2], 0, 0)
        if i % 2000 == 1999:
            a = acc_a.row()
            r = acc_r.row()
            print("| %d | %d | %d | %.4f | %d | %d | %d | %.4f | %d | %d | %d |" % (
                i + 1, dev.log_len(), a[1], a[2], a[3], a[4], r[1], r[2], r[3], r[4], lay.rotations()))
            acc_a = Acc()
            acc_r = Acc()
    close(lay)
    print()


def aged_sweep(name):
    """One candidate's ask() and remember() (the mixed workload) against the
    length of root's log when the layout is created."""
    c = candidate(name)
    print("## %s against the length of root's log (mixed workload, %d exchanges)" % (name, OPS))
    print()
    print("| root log at start | ask read mean | ask read max | remember read mean | remember read max | goals |")
    print("|---:|---:|---:|---:|---:|---|")
    for kib in (0, 16, 32, 48, 64, 96, 128, 192, 240):
        gc.collect()
        accs, root0, rots = run(c[2], "mixed", kib > 0, kib)
        a, r = accs["ask"].row(), accs["rem"].row()
        ok = goal_ok("ask", accs["ask"]) and goal_ok("rem", accs["rem"])
        print("| %d | %d | %d | %d | %d | %s |" % (root0, a[3], a[4], r[3], r[4], "met" if ok else "missed"))
    print()


# --- the littlefs mechanics on this geometry -------------------------------------------------


def mechanics():
    """What single littlefs operations read, program and erase against the
    length of the directory's log."""
    print("## littlefs 2.8 mechanics on 256 KiB blocks (progsize 512, readsize 512, cache 2048, mtime on)")
    print()
    print("| root log before | operation | read B | programmed B | erases |")
    print("|---:|---|---:|---:|---:|")
    for commits in (0, 120, 250, 480):
        dev = device()
        fs = mkfs(dev)
        io = IO(fs)
        io.write("/old", b"o" * 200)
        io.write("/other", b"p" * 200)
        io.mkdir("/d")
        io.write("/d/f", b"d" * 200)
        for i in range(commits):
            io.write("/busy", b"b" * 150)
        io.write("/fresh", b"f" * 200)
        L = dev.log_len()

        def m(name, fn):
            p0, e0, r0 = dev.counters()
            try:
                fn()
            except OSError as e:
                name += " (OSError %d)" % e.errno
            p1, e1, r1 = dev.counters()
            print("| %d | %s | %d | %d | %d |" % (L, name, r1 - r0, p1 - p0, e1 - e0))

        m("open \"rb\" + read, missing file (ENOENT)", lambda: io.read("/missing"))
        m("open \"rb\" + read, file written last (200 B)", lambda: io.read("/fresh"))
        m("open \"rb\" + read, file written before the log grew (200 B)", lambda: io.read("/old"))
        m("stat, file written before the log grew", lambda: fs.stat("/other"))
        m("ilistdir(\"/\") (%d entries)" % 6, lambda: list(fs.ilistdir("/")))
        m("\"wb\" existing file, 200 B", lambda: io.write("/fresh", b"g" * 200))
        m("\"wb\" existing file, 600 B (2 units)", lambda: io.write("/fresh", b"g" * 600))
        m("\"wb\" new file, 200 B", lambda: io.write("/new", b"n" * 200))
        m("\"wb\" existing file, 1100 B (outlined: a data block)", lambda: io.write("/new", b"n" * 1100))
        m("rename (new over fresh)", lambda: io.rename("/new", "/fresh"))
        m("remove", lambda: io.remove("/fresh"))
        m("open \"rb\" /d/f (a quiet directory below this root)", lambda: io.read("/d/f"))
        m("mkdir /e", lambda: io.mkdir("/e"))
        m("rmdir /e (empty)", lambda: io.rmdir("/e"))
        m("mount", lambda: mount(dev))
    print()
    print("(a fetch reads the newer block of the pair from its start to the end of its log in 2048-byte")
    print("cache loads; an open \"rb\" of an inline file then walks the log backwards from its end three times —")
    print("the struct tag, the mtime attribute, the inline data — each walk reading as far back as the file's")
    print("last commit)")
    print()


# --- power cuts ----------------------------------------------------------------------------


def cut_check(make, wname, warm, nops, rot_s=None, rot_m=None):
    """Warm up `warm` operations, then cut power at every device operation
    of each of the next `nops` (torn and dropped), on a CUT_BLOCKS device."""
    global BLOCKS
    store, ops = workload(wname)
    dev = Dev(CUT_BLOCKS)
    snap = bytearray(CUT_BLOCKS * BS)
    scratch = Dev(CUT_BLOCKS)
    fs = mkfs(dev)
    io = IO(fs)
    lay = make()
    if rot_s is not None:
        lay.sess.p.rotate = rot_s
    if rot_m is not None:
        lay.mem.p.rotate = rot_m
    lay.attach(io)
    if store:
        lay.mem.seed(store)
    ring = []
    mstore = dict(store)

    def apply(state, op):
        r, ms = state
        if op[0] == "ask":
            for m in op[1]:
                r = push(r, (m[0], m[1]))
        else:
            ms = dict(ms)
            ms[op[1][0]] = op[1][1]
        return r, ms

    def do(l, op):
        if op[0] == "ask":
            l.ask(op[1])
        else:
            l.remember(op[1][0], op[1][1])

    def fresh_layout(d):
        l = make()
        if rot_s is not None:
            l.sess.p.rotate = rot_s
        if rot_m is not None:
            l.mem.p.rotate = rot_m
        i = IO(mount(d))
        l.attach(i)
        return l, i

    for op in ops[:warm]:
        do(lay, op)
        ring, mstore = apply((ring, mstore), op)
    points = 0
    rotations = 0
    for t in range(warm, warm + nops):
        op = ops[t]
        # each operation from a fresh attach (what a device that rebooted
        # before it does): the layout checked and the image agree on when
        # the next rotation is due
        close(lay)
        lay, io = fresh_layout(dev)
        snap[:] = dev.data
        new = apply((ring, mstore), op)
        # count the device operations of this one
        scratch.data[:] = snap
        scratch.reset()
        l0, i0 = fresh_layout(scratch)
        rs0 = (l0.sess.p.rot, l0.mem.p.rot)
        scratch.arm(None)
        do(l0, op)
        close(l0)
        total = scratch.nops
        if (l0.sess.p.rot, l0.mem.p.rot) != rs0:
            rotations += 1
        for cut in range(1, total + 1):
            for tear in (True, False):
                scratch.data[:] = snap
                scratch.reset()
                l2, i2 = fresh_layout(scratch)
                scratch.arm(cut, tear)
                try:
                    do(l2, op)
                except OSError:
                    pass
                try:
                    close(l2)  # while the power is still off: nothing more lands
                except OSError:
                    pass
                scratch.arm(None)
                try:
                    l3, i3 = fresh_layout(scratch)
                    got = (l3.sess.load(i3), l3.mem.load(i3))
                except OSError as e:
                    fail(lay_name(make), "cut", t, cut, "mount/attach:", e)
                    continue
                points += 1
                if got != (ring, mstore) and got != new:
                    close(l3)
                    fail(lay_name(make), "op", t, op[0], "cut at device op", cut, "of", total,
                         "torn" if tear else "dropped", ": neither old nor new")
                    continue
                nxt = ops[t + 1]
                try:
                    do(l3, nxt)
                except OSError as e:
                    fail(lay_name(make), "recovery op failed", e)
                    continue
                close(l3)
                exp = apply(got, nxt)
                i4 = IO(mount(scratch))
                l4 = make()
                l4.attach(i4)
                if (l4.sess.load(i4), l4.mem.load(i4)) != exp:
                    fail(lay_name(make), "op", t, "cut", cut, "the next operation after recovery reads back wrong")
                close(l4)
        do(lay, op)
        close(lay)
        ring, mstore = new
    return points, rotations


def lay_name(make):
    return make().name


def cuts():
    print("## power cuts (every program/erase of each operation, torn and dropped; then one more operation)")
    print()
    checks = [
        ("C4-a472-s256-m256", "mixed", 4, 120, 6, 3),
        ("C4-a472-s256-m256", "grow", 2, 40, None, 4),
        ("C4-a472-s256-m256", "worst", 2, 20, None, 6),
        ("C4-a984-s256-m400", "rem30", 2, 30, None, 4),
        ("C4-a984-s256-m400", "mixed", 4, 60, 6, 4),
        ("C6w-a984-s256-m448", "mixed", 4, 120, 6, 4),
        ("C6w-a984-s256-m448", "grow", 2, 40, None, 6),
        ("C6w-a984-s256-m448", "rem30", 2, 30, None, 4),
        ("C6w-a984-s256-m448", "worst", 2, 20, None, 8),
        ("C6w-a984-s256-m448", "asklong", 4, 40, 8, None),
        ("C4-shards", "mixed", 4, 24, 6, 3),
        ("C2-onepass", "mixed", 4, 16, None, None),
        ("C5-full2", "rem20", 2, 10, None, None),
    ]
    if MODE == "quick":
        checks = checks[:1]
    for name, w, warm, nops, rs, rm in checks:
        b0 = bad
        pts, rots = cut_check(candidate(name)[2], w, warm, nops, rs, rm)
        print("CUTS %s [%s]%s: %d operations after %d warm-up (%d of them rotate), %d cut points checked, %s" % (
            name, w, (" thresholds for the check: session %s, memory %s units" % (rs, rm)) if rs or rm else "",
            nops, warm, rots, pts, "all old-or-new" if bad == b0 else "%d FAILURES" % (bad - b0)))
    b0 = bad
    CONTROL[0] = True
    mk = lambda: Layout("control", Session(Place()), MemUnsafe())
    pts, rots = cut_check(mk, "rem20", 2, 3)
    CONTROL[0] = False
    caught = bad - b0
    globals()["bad"] = b0
    print("CUTS control %s: %d cut points checked, %d caught as neither old nor new (must be > 0)" % (
        MemUnsafe.name, pts, caught))
    if caught == 0:
        fail("the power-cut check did not catch the unsafe control")
    print()


# --- today's module itself ------------------------------------------------------------------


def module_run():
    sys.path.append("tests/mpy")
    import claw_rig as rig

    dev = device()
    fs = mkfs(dev)
    vfs.umount("/")
    vfs.mount(fs, "/")
    os.chdir("/")
    import bentoclaw

    if not rig.connect(bentoclaw):
        fail("connect to the backend on port", rig.backend_port())
        return
    bentoclaw.config(daily_reset_hour=-1)
    bentoclaw.flush()
    print("## today's module (bentoclaw unix build) on this geometry")
    print()
    print("| workload | op | n | programmed B/op | erases/op | read mean B/op | read max B/op |")
    print("|---|---|---:|---:|---:|---:|---:|")

    def row(w, kind, xs):
        n = len(xs)
        print("| %s | %s | %d | %d | %.4f | %d | %d |" % (w, kind, n, sum(x[0] for x in xs) / n,
                                                        sum(x[1] for x in xs) / n, sum(x[2] for x in xs) / n,
                                                        max(x[2] for x in xs)))

    PROMPTS = ("t%03d: bed 3 moisture?", "t%03d: pump on", "t%03d: alerts?", "t%03d: ok")
    # ask(), empty store (tests/mpy/bench_flash.py's ask section)
    xs = []
    for i in range(OPS):
        c0 = dev.counters()
        bentoclaw.ask(PROMPTS[i % 4] % i)
        c1 = dev.counters()
        xs.append((c1[0] - c0[0], c1[1] - c0[1], c1[2] - c0[2]))
    row("ask, empty store", "ask", xs)
    # mixed: a fresh file system, a 20-key store (seed form), remember after every 5th
    for w in ("mixed",):
        dev.blank()
        fs = mkfs(dev)
        vfs.umount("/")
        vfs.mount(fs, "/")
        os.chdir("/")
        bentoclaw.disconnect()
        rig.connect(bentoclaw)
        bentoclaw.config(daily_reset_hour=-1)
        store, ops = bench_store(20)
        with open("/.bentoclaw_memory", "wb") as f:
            f.write(store_bytes(store))
        bentoclaw.flush()
        xa, xr = [], []
        j = 0
        for i in range(OPS):
            c0 = dev.counters()
            bentoclaw.ask(PROMPTS[i % 4] % i)
            c1 = dev.counters()
            xa.append((c1[0] - c0[0], c1[1] - c0[1], c1[2] - c0[2]))
            if i % 5 == 4:
                k, v = ops[j]
                j += 1
                c0 = dev.counters()
                bentoclaw.remember(k, v)
                c1 = dev.counters()
                xr.append((c1[0] - c0[0], c1[1] - c0[1], c1[2] - c0[2]))
        row("mixed (20 keys)", "ask", xa)
        row("mixed (20 keys)", "remember", xr)
    for n in (10, 20, 30):
        dev.blank()
        fs = mkfs(dev)
        vfs.umount("/")
        vfs.mount(fs, "/")
        os.chdir("/")
        store, ops = bench_store(n)
        with open("/.bentoclaw_memory", "wb") as f:
            f.write(store_bytes(store))
        xr = []
        for k, v in ops:
            c0 = dev.counters()
            bentoclaw.remember(k, v)
            c1 = dev.counters()
            xr.append((c1[0] - c0[0], c1[1] - c0[1], c1[2] - c0[2]))
        row("rem%d" % n, "remember", xr)
    print()


# --- main ------------------------------------------------------------------------------------


def main():
    device()
    print("bento_layouts: LittleFS v2 block=%d prog=%d read=%d cache=%d inline_max=%d blocks=%d ops=%d aged root log ~%d KiB" % (
        BS, PROG, READ, CACHE, INLINE_MAX, BLOCKS, OPS, AGED_KIB))
    print()
    if MODE == "module":
        module_run()
        return
    if MODE == "longrun":
        long_run(sys.argv[2], int(sys.argv[3]))
        print("RESULT: %s" % ("ok" if bad == 0 else "%d failures" % bad))
        return
    if MODE == "agedsweep":
        aged_sweep(sys.argv[2])
        print("RESULT: %s" % ("ok" if bad == 0 else "%d failures" % bad))
        return
    if MODE in ("all", "mech"):
        mechanics()
    if MODE in ("all", "quick", "one"):
        candidates_table()
        cands = CANDIDATES
        if MODE == "one":
            cands = [candidate(sys.argv[2])]
        works = WORKLOADS
        if len(sys.argv) > 3:
            works = sys.argv[3].split(",")
        for c in cands:
            run_candidate(c, works)
        for w in WORKLOADS:
            rows = [r for r in ROWS if r[1] == w]
            if rows:
                table(rows, "workload " + w)
    if MODE in ("all", "cuts", "quick"):
        cuts()
    print("RESULT: %s" % ("ok" if bad == 0 else "%d failures" % bad))


main()
