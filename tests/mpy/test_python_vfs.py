# test_python_vfs.py — a file system written in Python, mounted at "/"
# (issue 13, crash 1; the port's rule 2 in mpy/claw_port_vfs.c).
#
# MicroPython mounts any object with the VFS methods, and whatever its open()
# returns is the "file". Before the fix, bentoclaw handed that object to
# mp_stream_rw()/mp_stream_close(), which assume a native stream: a plain
# Python class, None or an int made recall() segfault, and an io.IOBase
# subclass whose readinto() over-reports wrote past the core's buffer.
#
# DictFS keeps its files in a dict. Its open() returns one of the VARIANTS
# below. Every bentoclaw call that touches files is driven through it; each
# must return or raise an Exception, the interpreter must survive, and the
# well-behaved variants must round-trip the data (through a simulated
# reboot: the core reloads from the "flash" of the dict). Each variant runs
# in its own interpreter (`<this file> child <variant>`), so a crash is
# reported by name.
import sys
import os
import claw_rig as rig

VARIANTS = (
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
ROUND_TRIP = ("plain", "plain_read_only", "iobase", "bytesio_sub", "write_huge")
# Nothing can be stored (open, write or close never succeeds): every write
# says False / raises, nothing is read.
NOTHING_STORED = ("open_none", "open_int", "open_object", "write_none", "write_zero", "write_bignum",
                  "raise_oserror", "raise_value", "close_raises", "no_close")
# Writes work, reads never do (a read that claims more bytes than the buffer
# holds, or returns more than asked, is an error: the core must not get
# bytes the file never supplied): the first remember() creates the store;
# the second must refuse to rewrite a store it cannot read (else "city" is
# lost).
READ_BROKEN = ("read_str", "readinto_none", "readinto_str", "iobase_over", "plain_over", "read_big")


# --- the file system ------------------------------------------------------------


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
        k = self._k(path)
        if k not in self.files:
            raise OSError(2)
        del self.files[k]

    def rename(self, a, b):
        a, b = self._k(a), self._k(b)
        if a not in self.files:
            raise OSError(2)
        self.files[b] = self.files.pop(a)

    def stat(self, path):
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

    if v in ("plain", "plain_over", "close_raises", "no_close"):
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


# --- the child: one variant -----------------------------------------------------


def drive(t, bc, v):
    """Every call that touches files; returns {name: result or exception}."""
    res = {}

    def call(name, fn, *args, **kw):
        try:
            res[name] = fn(*args, **kw)
        except Exception as e:
            res[name] = e
        return res[name]

    call("remember", bc.remember, "city", "Chiang Mai")
    call("remember2", bc.remember, "pet", "cat named Mali")
    call("tool", bc.tool, "echo", "hello through " + v)
    call("flush", bc.flush)
    call("recall", bc.recall, "city")
    call("search", bc.search, "which city", 3)
    call("pin", bc.pin, "city")
    call("export", bc.export_memory)
    call("import", bc.import_memory, "- lang: th\n")
    call("forget", bc.forget, "pet")
    call("config_set", bc.config, compact_keep=3)
    call("config", bc.config)
    call("session", bc.session)
    call("archive", bc.archive, 0, 64)
    call("status", bc.status)
    call("session_clear", bc.session_clear)
    call("flush2", bc.flush)
    return res


def child(v):
    import vfs

    t = rig.Checker("python-vfs:" + v)
    fs = DictFS(v)
    vfs.umount("/")
    vfs.mount(fs, "/")
    import bentoclaw

    bc = rig.simulate_soft_reset(bentoclaw)
    res = drive(t, bc, v)
    for name, r in res.items():
        # An Exception is a clean answer too; what must not happen is a
        # crash or a non-Exception escaping (the child would die).
        t.check(True, "%s returned or raised" % name)
        if isinstance(r, Exception) and not isinstance(r, (OSError, ValueError, TypeError, RuntimeError)):
            t.check(False, "%s raised an unexpected exception type" % name, repr(r))
    if v in ROUND_TRIP:
        t.eq(res["remember"], True, "remember() stores")
        t.eq(res["recall"], "Chiang Mai", "recall() reads it back")
        t.eq(res["flush"], True, "flush() stores the session")
        t.check(isinstance(res["search"], list) and res["search"] and res["search"][0][0] == "city",
                "search() finds it", res["search"])
        t.eq(res["pin"], True, "pin()")
        t.check(isinstance(res["export"], str) and "- **city** (pinned): Chiang Mai" in res["export"],
                "export_memory()", res["export"])
        t.eq(res["import"], 1, "import_memory() of one pair")
        t.eq(res["forget"], True, "forget()")
        t.check(isinstance(res["config"], dict) and res["config"].get("compact_keep") == 3, "config() persisted",
                res["config"])
        t.check(isinstance(res["archive"], bytes), "archive() gives bytes", res["archive"])
        t.check(isinstance(res["session"], list) and len(res["session"]) > 0, "session()", res["session"])
        t.eq(res["flush2"], True, "flush() after session_clear()")
        # A reboot: the core reloads everything from the dict.
        bc = rig.simulate_soft_reset(bc)
        t.eq(bc.recall("city"), "Chiang Mai", "after a reboot: recall(city)")
        t.eq(bc.recall("lang"), "th", "after a reboot: the imported pair")
        t.eq(bc.recall("pet"), None, "after a reboot: the forgotten pair stays forgotten")
        t.eq(bc.config()["compact_keep"], 3, "after a reboot: config")
        t.eq(bc.status()["session_msgs"], 0, "after a reboot: the cleared session stays cleared")
        t.check(".bentoclaw_memory" in fs.files, "the store is a file of the Python file system", list(fs.files))
    elif v in NOTHING_STORED:
        t.eq(res["remember"], False, "remember() says False: nothing could be stored")
        t.eq(res["remember2"], False, "the second remember() says False too")
        t.eq(res["recall"], None, "recall() finds nothing")
        t.check(isinstance(res["import"], OSError), "import_memory() raises OSError", res["import"])
        # Offline, a turn is only logged once the ring could be loaded.
        t.check(res["flush"] is False or res["session"] == [], "flush() stored no turn",
                res["flush"], res["session"])
    elif v in READ_BROKEN:
        t.eq(res["remember"], True, "remember() creates the store (nothing to read yet)")
        t.eq(res["remember2"], False, "remember() refuses to rewrite a store it cannot read")
        t.eq(res["recall"], None, "recall() cannot read it")
        t.check(b'"city"' in fs.files.get(".bentoclaw_memory", b""), "the store still holds the first pair",
                fs.files.get(".bentoclaw_memory"))
    else:
        t.check(False, "variant has an expectation", v)
    # Whatever happened, the module still works on a sane file system.
    fs.variant = "plain"
    bc = rig.simulate_soft_reset(bc)
    t.eq(bc.remember("after", "ok"), True, "remember() on the repaired file system")
    t.eq(bc.recall("after"), "ok", "recall() on the repaired file system")
    want = None if v in NOTHING_STORED else "Chiang Mai"
    t.eq(bc.recall("city"), want, "recall(city) on the repaired file system")
    t.done()


def parent():
    t = rig.Checker("python-vfs")
    losses = 0
    for v in VARIANTS:
        before = t.failed
        rig.run_child(t, "%s child %s" % (sys.argv[0], v), "python-vfs:" + v)
        losses += t.failed > before
    print("RELIABILITY: Python file system at / (file object variants, every file call)|%d|%d"
          % (len(VARIANTS), losses))
    t.done()


if len(sys.argv) > 2 and sys.argv[1] == "child":
    child(sys.argv[2])
else:
    parent()
