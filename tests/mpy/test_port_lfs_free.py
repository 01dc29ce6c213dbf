# test_port_lfs_free.py — rule 7 of mpy/claw_port_vfs.c: a file that
# LittleFS's own open() made (a native VfsLfs2 mount) is opened with its
# path in a str on the C stack and, once closed without error, its object
# and cache go back to the heap at once; a file that Python code may also
# hold (a VfsLfs2 subclass, a wrapper around one) is the GC's alone.
#  1. native mount: a tool() call (it appends to the session's file, the
#     one file it opens) leaves behind, before any collection, at least the
#     file's 2 KiB cache less than on a VfsLfs2 subclass that changes
#     nothing (its files are the collector's);
#  2. a subclass and a wrapper that keep every file object their open()
#     returns: after calls, a collection and fresh allocations over any
#     freed memory, every kept object is still an intact, closed file, and
#     the data is right.
# targets: unix
import gc
import vfs
import claw_rig as rig
import bentoclaw

t = rig.Checker("port-lfs-free")
OPTS = {"readsize": 512, "progsize": 512}  # the BENTO board's mount
DISK = bytearray(32 * 4096)  # one buffer for every file system here


def fresh_disk():
    disk = rig.RamBlockDev(blocks=32, block_size=4096, storage=DISK)
    vfs.VfsLfs2.mkfs(disk, **OPTS)
    return disk


def mount(fs):
    try:
        vfs.umount("/")
    except OSError:
        pass
    vfs.mount(fs, "/")


class Wrapper:
    """A file system in Python around a VfsLfs2, keeping every file its
    open() returns and counting the opens that found a file and those that
    did not."""

    def __init__(self, inner):
        self.inner = inner
        self.kept = []
        self.found = self.missing = 0

    def mount(self, readonly, mkfs):
        self.inner.mount(readonly, mkfs)

    def umount(self):
        self.inner.umount()

    def open(self, path, mode):
        try:
            f = self.inner.open(path, mode)
        except OSError:
            self.missing += 1
            raise
        self.found += 1
        self.kept.append(f)
        return f

    def __getattr__(self, name):  # stat, remove, rename, ilistdir, mkdir...
        return getattr(self.inner, name)


def tool_left(fs):
    """The same state on `fs` (three keys stored, a tool call in the
    session, flushed), then the heap that one more tool() call, which
    appends to the session's file, leaves behind before any collection."""
    mount(fs)
    bc = rig.simulate_soft_reset(bentoclaw)
    for k in ("name", "city", "lang"):
        t.eq(bc.remember(k, "a value of " + k), True, "remember(%r)" % k)
    t.eq(bc.tool("echo", "x"), "x", "tool()")
    t.eq(bc.flush(), True, "flush()")
    if isinstance(fs, Wrapper):
        fs.found = fs.missing = 0
    gc.collect()
    m0 = gc.mem_alloc()
    v = bc.tool("echo", "y")
    left = gc.mem_alloc() - m0
    t.eq(v, "y", "tool() measured")
    return left


# --- 1. the native mount --------------------------------------------------------------------
class Plain(vfs.VfsLfs2):
    """A subclass that changes nothing: the same open(), but Python code
    could override it, so its files are the collector's."""


w = Wrapper(vfs.VfsLfs2(fresh_disk(), **OPTS))
tool_left(w)
t.eq((w.found, w.missing), (1, 0), "tool() opens one file, the session's, and it is there")
plain_left = tool_left(Plain(fresh_disk(), **OPTS))
native_left = tool_left(vfs.VfsLfs2(fresh_disk(), **OPTS))
print("tool() leaves behind: %d B on a plain subclass, %d B on the native mount" % (plain_left, native_left))
# LittleFS's cache is 4 x max(readsize, progsize): 2 KiB per open file at
# the board's 512, in the file object.
t.check(plain_left - native_left >= 2048,
        "on the native mount the file (its 2 KiB cache and more) was given back at its close",
        plain_left - native_left)


mount(vfs.VfsLfs2(fresh_disk(), **OPTS))
with open("/probe", "wb") as f:
    f.write(b"x")
FILE_T = type(f)
f = None


# --- 2. file objects Python code keeps --------------------------------------------------------
class Keeper(vfs.VfsLfs2):
    """A subclass whose open() keeps what it returns."""

    kept = []

    def open(self, path, mode):
        f = super().open(path, mode)
        Keeper.kept.append(f)
        return f


def churn():
    """Fresh allocations over whatever was freed."""
    gc.collect()
    junk = [bytearray(48) for _ in range(400)] + ["s%d" % i * 20 for i in range(200)]
    return len(junk)


for label, make in (("subclass", lambda d: Keeper(d, **OPTS)),
                    ("wrapper", lambda d: Wrapper(vfs.VfsLfs2(d, **OPTS)))):
    fs = make(fresh_disk())
    mount(fs)
    bc = rig.simulate_soft_reset(bentoclaw)
    for i in range(6):
        t.eq(bc.remember("k%d" % i, "v%d" % i), True, "%s: remember" % label)
    t.eq(bc.recall("k3"), "v3", "%s: recall" % label)
    t.eq(bc.forget("k1"), True, "%s: forget" % label)
    bc.tool("echo", "hello")
    bc.flush()
    kept = Keeper.kept if label == "subclass" else fs.kept
    t.check(len(kept) >= 6, "%s: its open() ran for the core's files" % label, len(kept))
    churn()
    intact = [type(f) is FILE_T for f in kept]
    t.check(all(intact), "%s: every file it kept is still a file after a collection and reuse" % label,
            intact.count(False))
    closed = 0
    for f in kept:
        try:
            f.read(1)
        except (OSError, ValueError):
            closed += 1  # a closed LittleFS file
    t.eq(closed, len(kept), "%s: and closed" % label)
    t.eq([bc.recall("k%d" % i) for i in range(6)], ["v0", None, "v2", "v3", "v4", "v5"], "%s: the data" % label)
    Keeper.kept = []

t.done()
