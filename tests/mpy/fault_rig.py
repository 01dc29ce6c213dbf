# fault_rig.py — power cuts, write errors and reboots for the reliability
# tests (test_powercut.py, test_flash_faults.py, test_corrupt_files.py).
# Builds on claw_rig.py (import this module BEFORE remounting "/").
#
#   import fault_rig as fr
#   base = fr.make_image(setup_fn)        # bytes of a LittleFS image
#   dev = fr.CutBlockDev(base, cut_at=3, mode="torn")
#   fr.mount_dev(dev); bc = fr.reboot_core(bentoclaw)
#   ... the operation runs; the 3rd write is torn, later writes are lost ...
#   fr.save(dev.image(), "/host/x.img")  # a new interpreter checks it
#
# A "write" is what LittleFS does to flash: a program (writeblocks) or an
# erase (ioctl 6). Both are numbered from 1 after the device is armed.
#
# Power cut modes (what the k-th write leaves behind; later writes are lost,
# the device stays dead until the image is mounted again = a reboot):
#   drop     nothing of the k-th write reaches the image
#   torn     the first half of it reaches the image, the rest is unchanged
#   torn_ff  the first quarter reaches the image, the rest of its range reads
#            0xFF (erased) — a program interrupted right after its erase
# For an erase the same modes mean: not erased / first half erased / erased
# whole (with the program that would follow it lost).
#
# Write errors (FailAtBlockDev): the k-th write returns -errno (ENOSPC or
# EIO, the way vfs_blockdev.c expects a Python block device to fail) and
# reaches nothing; "once" = only that write, "sticky" = every write from the
# k-th on, until heal().

import sys
import os
import vfs
import json
import claw_rig as rig

ENOSPC = 28
EIO = 5
# The geometry of the images: "small" (the default: 512-byte blocks with
# LittleFS's defaults, where a few commits fill a metadata block, so cuts
# land in compactions at every age) or "bento" (the BENTO firmware's mount,
# VENDOR-SDK.md §5: 256 KiB blocks, VfsLfs2(progsize=512, readsize=512)).
# use_geometry() changes it; a reboot check passes it to the new process.
GEOMETRIES = {"small": (rig.BLOCK_SIZE, {}), "bento": (256 * 1024, {"progsize": 512, "readsize": 512})}
GEOMETRY = "small"
BLOCK_SIZE, LFS_OPTS = GEOMETRIES[GEOMETRY]


def use_geometry(name):
    global GEOMETRY, BLOCK_SIZE, LFS_OPTS
    GEOMETRY = name
    BLOCK_SIZE, LFS_OPTS = GEOMETRIES[name]
CUT_MODES = ("drop", "torn", "torn_ff")


class CutBlockDev(rig.RamBlockDev):
    """A RAM block device whose power is cut at the cut_at-th write."""

    def __init__(self, data, cut_at=None, mode="drop"):
        super().__init__(len(data) // BLOCK_SIZE, data, block_size=BLOCK_SIZE)
        assert mode in CUT_MODES
        self.cut_at = cut_at
        self.mode = mode
        self.count = 0  # writes seen since arming (progs + erases)
        self.dead = False
        self.ops = []  # ("prog"/"erase", block, off, len) of every write seen

    def _write(self, kind, a, buf):
        """Apply one write of buf at byte address a. Returns 0 or -EIO."""
        self.count += 1
        self.ops.append((kind, a // BLOCK_SIZE, a % BLOCK_SIZE, len(buf)))
        if self.dead:
            return -EIO
        if self.cut_at is not None and self.count >= self.cut_at:
            self.dead = True
            n = len(buf)
            if self.mode == "torn":
                self._store(a, buf[: n // 2])
            elif self.mode == "torn_ff":
                keep = n if kind == "erase" else n // 4
                self._store(a, bytes(buf[:keep]) + b"\xff" * (n - keep))
            return -EIO
        self._store(a, buf)
        self.bytes_written += len(buf)
        self.writes += 1
        return 0

    def writeblocks(self, block, buf, off=None):
        return self._write("prog", block * BLOCK_SIZE + (off or 0), buf)

    def ioctl(self, op, arg):
        if op == 6:
            r = self._write("erase", arg * BLOCK_SIZE, memoryview(self.erased_block()))
            if r == 0:
                self.erases += 1
            return r
        return super().ioctl(op, arg)

    def image(self):
        return bytes(self.data)

    _erased = None

    @classmethod
    def erased_block(cls):
        if cls._erased is None or len(cls._erased) != BLOCK_SIZE:
            cls._erased = b"\xff" * BLOCK_SIZE
        return cls._erased


class FailAtBlockDev(rig.RamBlockDev):
    """A RAM block device whose fail_at-th write (and, sticky, every later
    one until heal()) returns -errno without reaching the image."""

    def __init__(self, data, fail_at=None, errno=EIO, sticky=False):
        super().__init__(len(data) // BLOCK_SIZE, data, block_size=BLOCK_SIZE)
        self.arm(fail_at, errno, sticky)

    def arm(self, fail_at, errno=EIO, sticky=False):
        self.fail_at = fail_at
        self.errno = errno
        self.sticky = sticky
        self.count = 0
        self.failed = 0  # writes refused so far

    def heal(self):
        self.fail_at = None
        self.read_fail_at = None

    def arm_reads(self, fail_at, sticky=False):
        """Reads: the fail_at-th readblocks (and, sticky, every later one
        until heal()) returns -EIO."""
        self.read_fail_at = fail_at
        self.read_sticky = sticky
        self.reads = 0
        self.read_failed = 0

    def readblocks(self, block, buf, off=0):
        self.reads = getattr(self, "reads", 0) + 1
        at = getattr(self, "read_fail_at", None)
        if at is not None and (self.reads == at or (self.read_sticky and self.reads > at)):
            self.read_failed += 1
            return -EIO
        return super().readblocks(block, buf, off)

    def _refuse(self):
        self.count += 1
        if self.fail_at is None:
            return False
        if self.count == self.fail_at or (self.sticky and self.count > self.fail_at):
            self.failed += 1
            return True
        return False

    def writeblocks(self, block, buf, off=None):
        if self._refuse():
            return -self.errno
        return super().writeblocks(block, buf, off)

    def ioctl(self, op, arg):
        if op == 6 and self._refuse():
            return -self.errno
        return super().ioctl(op, arg)

    def image(self):
        return bytes(self.data)


# --- images, mounts, reboots ---------------------------------------------------


# littlefs stores a modification time with every file (MicroPython's
# VfsLfs2 default). The time goes into the metadata CRCs, from which littlefs
# seeds its block allocator at mount, so images made at different seconds
# allocate different blocks. The fault tests turn it off to make every
# figure reproducible run after run (BENTOCLAW_MTIME=1 restores the default).
MTIME = os.getenv("BENTOCLAW_MTIME") == "1"


def mount_dev(dev, mkfs=False):
    """Mount dev at "/" (no mkfs by default: the image holds a file system)
    and reset its counters, like claw_rig.mount but with MTIME."""
    if mkfs:
        vfs.VfsLfs2.mkfs(dev, **LFS_OPTS)
    try:
        vfs.umount("/")
    except OSError:
        pass
    vfs.mount(vfs.VfsLfs2(dev, mtime=MTIME, **LFS_OPTS), "/")
    os.chdir("/")
    dev.reset_counters()
    return dev


def make_image(setup, blocks=64):
    """A fresh LittleFS image on which setup() has run (with "/" mounted on
    it); returns its bytes."""
    dev = rig.RamBlockDev(blocks, block_size=BLOCK_SIZE)
    mount_dev(dev, mkfs=True)
    setup()
    return bytes(dev.data)


def reboot_core(bentoclaw_module):
    """The core forgets its RAM state (the ring is reloaded from flash at the
    next call): what a soft reset does. Python tools are dropped."""
    return rig.simulate_soft_reset(bentoclaw_module)


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)


def read_file(path):
    return rig.read_file(path)


_host_mounted = None


def host_dir():
    """A host directory reachable after "/" became LittleFS: mounted at
    /host (created on first use). Returns "/host"."""
    global _host_mounted
    if _host_mounted is None:
        tag = "".join("%02x" % b for b in os.urandom(6))
        d = (os.getenv("TMPDIR") or "/tmp") + "/bentoclaw_faults_" + tag
        os.system("mkdir -p %s" % d)
        vfs.mount(vfs.VfsPosix(d), "/host")
        _host_mounted = d
    return "/host"


def host_path(name):
    """The path a child process (which sees the host's file system) uses for
    /host/<name>."""
    host_dir()
    return _host_mounted + "/" + name


def host_cleanup():
    if _host_mounted is not None:
        os.system("rm -rf %s" % _host_mounted)


def status_of(rc):
    """os.system's wait status -> exit code (None when killed by a signal)."""
    if rc & 0xFF:
        return None
    return rc >> 8


# --- JSON Lines records ---------------------------------------------------------


def jstr(s):
    return json.dumps(s)


def session_line(role, content, end=False):
    return '{"role":%s,"content":%s%s}\n' % (jstr(role), jstr(content), ',"end":true' if end else "")


def session_text(batches):
    """batches: list of lists of (role, content); one end marker per batch."""
    out = []
    for b in batches:
        for i, (role, content) in enumerate(b):
            out.append(session_line(role, content, i == len(b) - 1))
    return "".join(out)


def memory_line(key, value):
    return '{"key":%s,"value":%s}\n' % (jstr(key), jstr(value))


def memory_text(pairs):
    return "".join(memory_line(k, v) for k, v in pairs)


def parse_context(ctx):
    """bentoclaw._context() -> (ring [(role, content)], memory [(key, value)]).
    The rendering is "Memory:\\n- k: v\\n...Conversation:\\nrole: text\\n..."."""
    text = ctx.decode()
    ring = []
    mem = []
    section = None
    for line in text.split("\n")[:-1]:
        if line == "Memory:":
            section = "m"
        elif line == "Conversation:":
            section = "c"
        elif section == "m" and line.startswith("- "):
            k, _, v = line[2:].partition(": ")
            mem.append((k, v))
        elif section == "c":
            role, _, content = line.partition(": ")
            ring.append((role, content))
        else:
            raise ValueError("unexpected context line %r" % line)
    return ring, mem


def state(bc):
    """What the library holds now: (ring, memory pairs in file order). The
    whole ring must fit the context (keep test data small): a rendering
    that dropped turns raises."""
    ring, mem = parse_context(bc._context())
    n = bc.status()["session_msgs"]
    if n != len(ring):
        raise AssertionError("the context shows %d of %d turns: test data too large" % (len(ring), n))
    return ring, mem


def brief(st):
    """A short description of a normed state, for failure messages."""
    ring, mem = st
    short = lambda s: s if len(s) <= 16 else s[:13] + "..."
    return "ring %d %s | mem %d %s" % (len(ring), [short(c) for r, c in ring], len(mem),
                                        [short(k) + "=" + short(v) for k, v in mem])


def newest(ring, n=10):
    return list(ring)[-n:]


def reliability(fault_class, cases, losses):
    """The line scripts/reliability_report.sh collects."""
    print("RELIABILITY: %s|%d|%d" % (fault_class, cases, losses))


# --- reboot checks in a new interpreter process -----------------------------------


def norm(ring, mem):
    """A comparable state: the ring as a list, the memory as sorted pairs."""
    return [[[r, c] for r, c in ring], sorted([[k, v] for k, v in mem])]


def is_child():
    return len(sys.argv) > 1 and sys.argv[1] == "child"


def child_main():
    """The rebooted device: `<test>.py child EXP IMG`. Mounts the image (a
    failure to mount is a failure), imports bentoclaw, reads the ring and the
    store, and exits 10 + the index of the allowed state of EXP it found
    (1 on a failed check). Then checks the next remember() and flush() work."""
    exp_path, img_path = sys.argv[2], sys.argv[3]
    with open(exp_path) as f:
        exp = json.load(f)
    use_geometry(exp.get("geometry", "small"))
    # One readinto: read() of a whole file grows its buffer step by step,
    # which takes most of a second for a 2 MiB image.
    data = bytearray(os.stat(img_path)[6])
    with open(img_path, "rb") as f:
        f.readinto(data)
    dev = rig.RamBlockDev(len(data) // BLOCK_SIZE, data, block_size=BLOCK_SIZE)
    t = rig.Checker("reboot-child")
    try:
        mount_dev(dev)
    except OSError as e:
        t.check(False, "%s: the file system mounts" % exp.get("label"), repr(e))
        t.done()
    import bentoclaw

    ring, mem = state(bentoclaw)
    got = norm(ring, mem)
    states = exp["states"]
    which = states.index(got) if got in states else -1
    t.check(which >= 0, "%s: the ring and the store are an allowed state" % exp.get("label"),
            "\n got:", brief(got), "\n allowed:", " || ".join(brief(s) for s in states))
    t.eq(bentoclaw.status()["session_msgs"], len(ring), "session_msgs matches the ring")
    t.eq(len(set(k for k, v in mem)), len(mem), "each key once")
    for k, v in mem:
        t.eq(bentoclaw.recall(k), v, "recall %s after the reboot" % k)
    if exp.get("then_write", True):
        t.eq(bentoclaw.remember("after-reboot", "ok"), True, "remember after the reboot")
        t.eq(bentoclaw.recall("after-reboot"), "ok", "recall after the reboot")
        bentoclaw.disconnect()
        t.eq(bentoclaw.flush(), True, "flush after the reboot")
    if t.failed:
        t.done()
    sys.exit(10 + which)


def reboot_check(t, script, states, image, label, then_write=True):
    """Run a new interpreter on a copy of `image` (child_main of `script`).
    states: allowed (ring, mem) pairs. Returns the index of the state found,
    or None after recording a failed check."""
    host_dir()
    with open("/host/exp.json", "w") as f:
        json.dump({"states": [norm(r, m) for r, m in states], "label": label, "then_write": then_write,
                   "geometry": GEOMETRY}, f)
    write_file("/host/img.bin", image)
    # A child's heap holds the image twice: 64 MiB for 256 KiB blocks.
    heap = " -X heapsize=64M" if GEOMETRY == "bento" else ""
    cmd = "%s%s %s child %s %s" % (rig.mpy_path(), heap, script, host_path("exp.json"), host_path("img.bin"))
    code = status_of(os.system(cmd))
    if code is None or code < 10 or code >= 10 + len(states):
        t.check(False, "%s: the rebooted process found an allowed state" % label, "exit", code)
        return None
    return code - 10


# --- a file system written in Python (issue 13) ---------------------------------
# MicroPython mounts any object with the VFS methods at "/", and whatever its
# open() returns is the "file". DictFS keeps its files in a dict; its
# `variant` says how its file objects (PYFS_VARIANTS) or its own methods
# (PYFS_VFS_VARIANTS) misbehave, and may be changed at any time ("plain" is a
# well-behaved file system: what a remount of a repaired device would see).
# Used by test_python_vfs and test_every_call_faults.

PYFS_VARIANTS = (
    # well-behaved: data must round-trip
    "plain",  # a plain class: read(n)/readinto(b)/write(b)/close()
    "plain_read_only",  # a plain class without readinto (read(n) only)
    "iobase",  # an io.IOBase subclass with readinto/write/close
    "bytesio_sub",  # a Python subclass of io.BytesIO (a native stream)
    # misbehaving: no crash, no false success
    "open_none",  # open() returns None
    "open_int",  # open() returns 42
    "open_object",  # open() returns object(): no methods at all
    "iobase_over",  # io.IOBase: readinto() reports 1000 more than the buffer
    "plain_over",  # plain class: readinto() reports 1000 more than the buffer
    "read_big",  # plain, no readinto: read(n) returns more than n bytes
    "read_str",  # plain, no readinto: read() returns str instead of bytes
    "readinto_none",  # readinto() returns None
    "readinto_str",  # readinto() returns "12"
    "write_none",  # write() returns None
    "write_huge",  # write() returns 2**40 (fits an int) after storing the data
    "write_bignum",  # write() returns 10**40 (a big int) after storing the data
    "write_zero",  # write() returns 0
    "raise_oserror",  # every method raises OSError(EACCES)
    "raise_value",  # every method raises ValueError
    "close_raises",  # reads/writes fine, close() raises OSError(EIO)
    "no_close",  # reads/writes fine, no close() method
)
# Data must round-trip through these: well-behaved files, and a write()
# that claims more than it was given (clamped: it took all of it).
PYFS_ROUND_TRIP = ("plain", "plain_read_only", "iobase", "bytesio_sub", "write_huge")
# Nothing can be stored (open or write never succeeds): every write says
# False / raises, nothing is read.
PYFS_NOTHING_STORED = ("open_none", "open_int", "open_object", "write_none", "write_zero", "write_bignum",
                       "raise_oserror", "raise_value")
# The data lands (writes go to the dict at once) but close() fails. An edit
# of the store that the core reads back as landed is a success
# (src/memory/: a commit that landed but reported an error); whatever a
# call reports must be what the files hold: True -> the value is there (now
# and after a reboot), False -> it is not.
PYFS_CLOSE_FAILS = ("close_raises", "no_close")
# Writes work, reads never do (a read that claims more bytes than the buffer
# holds, or returns more than asked, is an error: the core must not get
# bytes the file never supplied): the first remember() creates the store;
# the second must refuse to rewrite a store it cannot read (else "city" is
# lost).
PYFS_READ_BROKEN = ("read_str", "readinto_none", "readinto_str", "iobase_over", "plain_over", "read_big")


# Misbehaving file system methods (not the file objects): used by
# test_every_call_faults, with the file-object variants above.
PYFS_VFS_VARIANTS = (
    "vfs_open_raises",  # open() raises ValueError
    "vfs_open_memoryerror",  # open() raises MemoryError
    "vfs_rename_raises",  # rename() raises OSError(EIO)
    "vfs_remove_raises",  # remove() raises OSError(EIO)
    "vfs_stat_raises",  # stat() raises ValueError
    "vfs_stat_garbage",  # stat() returns a str
)




class DictFS:
    def __init__(self, variant):
        self.files = {}
        self.variant = variant

    def _k(self, path):
        return path.lstrip("/")

    def mount(self, readonly, mkfs):
        pass

    def umount(self):
        pass

    def chdir(self, path):
        pass

    def getcwd(self):
        return "/"

    def open(self, path, mode):
        v = self.variant
        if v == "vfs_open_raises":
            raise ValueError("hostile open")
        if v == "vfs_open_memoryerror":
            raise MemoryError()
        if v == "open_none":
            return None
        if v == "open_int":
            return 42
        if v == "open_object":
            return object()
        k = self._k(path)
        if "r" in mode and k not in self.files:
            raise OSError(2)
        if "w" in mode:
            self.files[k] = b""
        elif "a" in mode:
            self.files.setdefault(k, b"")
        return make_file(v, self, k, mode)

    def remove(self, path):
        if self.variant == "vfs_remove_raises":
            raise OSError(5)
        k = self._k(path)
        if k not in self.files:
            raise OSError(2)
        del self.files[k]

    def rename(self, a, b):
        if self.variant == "vfs_rename_raises":
            raise OSError(5)
        a, b = self._k(a), self._k(b)
        if a not in self.files:
            raise OSError(2)
        self.files[b] = self.files.pop(a)

    def stat(self, path):
        if self.variant == "vfs_stat_raises":
            raise ValueError("hostile stat")
        if self.variant == "vfs_stat_garbage":
            return "not a stat tuple"
        k = self._k(path)
        if k == "":
            return (0x4000, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        if k not in self.files:
            raise OSError(2)
        return (0x8000, 0, 0, 0, 0, 0, len(self.files[k]), 0, 0, 0)

    def ilistdir(self, path):
        for k in self.files:
            yield (k, 0x8000, 0, len(self.files[k]))

    def mkdir(self, path):
        raise OSError(1)

    def rmdir(self, path):
        raise OSError(1)

    def statvfs(self, path):
        return (512, 512, 1000, 900, 900, 0, 0, 0, 0, 255)

    def read_file(self, path):
        """The bytes of a file as stored, whatever the variant (None when
        it does not exist)."""
        return self.files.get(self._k(path))

    def on_flash(self, reader):
        """reader() (claw_rig.store_on_flash, session_on_flash, ...) over
        the files of this file system as stored."""
        saved = rig.read_file
        rig.read_file = self.read_file
        try:
            return reader()
        finally:
            rig.read_file = saved


class PlainFile:
    """A file as a plain class. Writes go to the dict at once."""

    def __init__(self, fs, key, mode):
        self.fs = fs
        self.key = key
        self.pos = 0
        self.mode = mode
        self.over = 0  # added to readinto's count while data remains

    def _take(self, n):
        data = self.fs.files[self.key][self.pos : self.pos + n]
        self.pos += len(data)
        return data

    def read(self, n=-1):
        return self._take(1 << 30 if n is None or n < 0 else n)

    def readinto(self, b):
        data = self._take(len(b))
        b[: len(data)] = data
        return len(data) + self.over if data else 0

    def write(self, b):
        self.fs.files[self.key] += bytes(b)
        return len(b)

    def close(self):
        pass


def make_file(v, fs, key, mode):
    import io

    if v in ("plain", "plain_over", "close_raises", "no_close") or v.startswith("vfs_"):
        f = PlainFile(fs, key, mode)
        if v == "plain_over":
            f.over = 1000
        if v == "close_raises":

            def close():
                raise OSError(5)

            f.close = close
        if v == "no_close":
            return NoClose(f)
        return f
    if v in ("plain_read_only", "read_big", "read_str"):
        return ReadOnly(PlainFile(fs, key, mode), v)
    if v in ("iobase", "iobase_over"):
        f = IOBaseFile(PlainFile(fs, key, mode))
        if v == "iobase_over":
            f.inner.over = 1000
        return f
    if v == "bytesio_sub":
        return BytesIOSub(fs, key, mode)
    if v in ("readinto_none", "readinto_str", "write_none", "write_huge", "write_bignum", "write_zero"):
        return Odd(PlainFile(fs, key, mode), v)
    if v in ("raise_oserror", "raise_value"):
        return Raising(OSError(13) if v == "raise_oserror" else ValueError("hostile"))
    raise ValueError(v)


class NoClose:
    def __init__(self, inner):
        self.read = inner.read
        self.readinto = inner.readinto
        self.write = inner.write


class ReadOnly:
    """No readinto: the port must use read(n)."""

    def __init__(self, inner, v):
        self.inner = inner
        self.v = v

    def read(self, n=-1):
        if self.v == "read_str":
            return self.inner.read(n).decode("utf-8", "replace") or ""
        if self.v == "read_big":
            data = self.inner.read(n)
            return data + b"#" * 1000 if data else b""
        return self.inner.read(n)

    def write(self, b):
        return self.inner.write(b)

    def close(self):
        pass


class Odd:
    def __init__(self, inner, v):
        self.inner = inner
        self.v = v

    def read(self, n=-1):
        return self.inner.read(n)

    def readinto(self, b):
        n = self.inner.readinto(b)
        if self.v == "readinto_none":
            return None
        if self.v == "readinto_str":
            return str(n)
        return n

    def write(self, b):
        n = self.inner.write(b)
        if self.v == "write_none":
            return None
        if self.v == "write_huge":
            return 2**40
        if self.v == "write_bignum":
            return 10**40
        if self.v == "write_zero":
            return 0
        return n

    def close(self):
        pass


class Raising:
    def __init__(self, exc):
        self.exc = exc

    def read(self, n=-1):
        raise self.exc

    def readinto(self, b):
        raise self.exc

    def write(self, b):
        raise self.exc

    def close(self):
        raise self.exc


def _iobase():
    import io

    return io.IOBase


class IOBaseFile(_iobase()):
    def __init__(self, inner):
        self.inner = inner

    def readinto(self, b):
        return self.inner.readinto(b)

    def write(self, b):
        return self.inner.write(b)

    def close(self):
        pass


def _bytesio():
    import io

    return io.BytesIO


class BytesIOSub(_bytesio()):
    """A Python subclass of a native stream: its inherited protocol slot
    expects the native object, not this instance."""

    def __init__(self, fs, key, mode):
        super().__init__(fs.files[key] if "r" in mode or "a" in mode else b"")
        if "a" in mode:
            self.seek(0, 2)
        self.fs = fs
        self.key = key
        self.mode = mode

    def close(self):
        if "r" not in self.mode:
            self.fs.files[self.key] = self.getvalue()
        super().close()


# --- a block device that raises (issue 13) ---------------------------------------


class RaiseEveryDev(rig.RamBlockDev):
    """A RAM block device whose every `every`-th readblocks and/or
    writeblocks call (an erase, ioctl 6, counts as a write) raises exc()
    instead of answering: what a block device written in Python may do.
    Armed after the mount; disarm() before a remount."""

    def __init__(self, data=None, blocks=64):
        super().__init__(len(data) // BLOCK_SIZE if data else blocks, data, block_size=BLOCK_SIZE)
        self.disarm()

    def arm(self, exc, every, kinds=("read", "write")):
        self.exc = exc
        self.every = every
        self.kinds = kinds
        self.calls = 0
        self.raised = 0

    def disarm(self):
        self.arm(None, 0, ())

    def _maybe(self, kind):
        if self.exc is None or kind not in self.kinds:
            return
        self.calls += 1
        if self.calls % self.every == 0:
            self.raised += 1
            raise self.exc("block device fault") if self.exc is not MemoryError else MemoryError()

    def readblocks(self, block, buf, off=0):
        self._maybe("read")
        return super().readblocks(block, buf, off)

    def writeblocks(self, block, buf, off=None):
        self._maybe("write")
        return super().writeblocks(block, buf, off)

    def ioctl(self, op, arg):
        if op == 6:
            self._maybe("write")
        return super().ioctl(op, arg)


# --- every public call of the module, once ------------------------------------------
# The saved state a drive starts from (save_state) and what may change: the
# anchors are never touched by drive_every_call and must read back exactly;
# TOUCHED keys may hold their old or their new value; a key that was
# forgotten may be gone.
ANCHORS = (("anchor", "ต้องอยู่ครบ"), ("wifi", "hunter2"), ("name", "Somchai"))
TOUCHED = {"city": ("Chiang Mai", "Bangkok"), "tmp": ("forget me", None), "lang": (None, "th")}
KNOWN_TEXTS = ("turn one", "turn two", "during the fault")


def save_state(bc):
    """The state saved before the faults: anchors, touched keys, a config
    and a ring of a few turns, flushed. Returns False if anything failed."""
    ok = True
    for k, v in ANCHORS:
        ok &= bc.remember(k, v) is True
    ok &= bc.remember("city", "Chiang Mai") is True
    ok &= bc.remember("tmp", "forget me") is True
    bc.config(compact_keep=3)
    bc.tool("echo", "turn one")
    bc.tool("echo", "turn two")
    ok &= bc.flush() is True
    return ok


def drive_every_call(bc, port=None, api_key=rig.API_KEY):
    """Calls every public function of the module once (connect/ask/
    disconnect when a backend port is given). Returns [(name, kind, value)]
    with kind "ret", "exc" (an Exception) or "base" (any other
    BaseException: KeyboardInterrupt, SystemExit), in call order."""
    out = []

    def call(name, fn, *args, **kw):
        try:
            out.append((name, "ret", fn(*args, **kw)))
        except Exception as e:
            out.append((name, "exc", e))
        except BaseException as e:  # noqa: reported to the caller
            out.append((name, "base", e))

    call("register_tool", bc.register_tool, "probe", lambda a: "probed %s" % (a,), 0, 65535)
    if port is not None:
        call("connect", bc.connect, "127.0.0.1", port, api_key)
        call("ask", bc.ask, "hello during the fault")
    call("remember", bc.remember, "city", "Bangkok")
    call("recall", bc.recall, "anchor")
    call("forget", bc.forget, "tmp")
    call("pin", bc.pin, "city")
    call("search", bc.search, "city", 3)
    call("export_memory", bc.export_memory)
    call("import_memory", bc.import_memory, "- **lang**: th\n")
    call("config_set", bc.config, compact_keep=4)
    call("config", bc.config)
    call("tool", bc.tool, "echo", "during the fault")
    call("tool_python", bc.tool, "probe", 1)
    call("tacp", bc.tacp, rig.tacp_frame(1, "echo during"))
    call("tacp_remember", bc.tacp, rig.tacp_frame(6, "city=Bangkok"))
    call("tacp_status", bc.tacp, rig.tacp_frame(3))
    call("flush", bc.flush)
    call("archive", bc.archive, 0, 64)
    call("session", bc.session)
    call("status", bc.status)
    call("safety", bc.safety)
    call("tools", bc.tools)
    if port is not None:
        call("disconnect", bc.disconnect)
    call("session_clear", bc.session_clear)
    call("flush_after_clear", bc.flush)
    return out


def check_saved_state(t, bc, label, results=None):
    """After a remount and a reboot: the anchors exactly, each touched key
    old or new (new only if the call that wrote it could have), a sane ring,
    the config old or new. Returns the number of failed checks."""
    before = t.failed
    for k, v in ANCHORS:
        t.eq(bc.recall(k), v, "%s: anchor %s intact" % (label, k))
    for k, allowed in TOUCHED.items():
        got = bc.recall(k)
        t.check(got in allowed, "%s: %s is its old or its new value" % (label, k), repr(got), allowed)
    ring = bc.session()
    t.check(len(ring) <= 10, "%s: the ring holds at most 10 messages" % label, len(ring))
    for role, text in ring:
        t.check(role in ("user", "assistant", "system", "tool", "summary"), "%s: a known role" % label, role)
    keep = bc.config()["compact_keep"]
    t.check(keep in (3, 4), "%s: compact_keep is 3 or 4" % label, keep)
    if results is not None:
        r = dict((n, (k, v)) for n, k, v in results)
        # A write that said it worked did. (The converse need not hold: a
        # rename that committed before a failing read of littlefs's own
        # check is reported as failed; see docs/RELIABILITY.md.)
        if r.get("remember") == ("ret", True):
            t.eq(bc.recall("city"), "Bangkok", "%s: remember() said True: the new value is there" % label)
        if r.get("forget") == ("ret", True):
            t.eq(bc.recall("tmp"), None, "%s: forget() said True: the key is gone" % label)
        if r.get("import_memory") == ("ret", 1):
            t.eq(bc.recall("lang"), "th", "%s: import_memory() said 1: the pair is there" % label)
    return t.failed - before
