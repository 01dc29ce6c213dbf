# test_bdev_raise_gc.py — an exception from a block device written in Python
# must never unwind MicroPython's LittleFS binding (issue 13, crash 2;
# mpy/patches/micropython/0002-littlefs-no-unwinding-from-block-device.patch).
#
# Without that patch littlefs is longjmp'd through and keeps pointers to a
# freed file object (or to a dead C stack frame) in lfs->mlist; the next
# commit walks them and the interpreter dies with SIGSEGV in lfs2_pair_cmp.
# Plain MicroPython, no bentoclaw, is enough:
#
#   flush_gc     writeblocks raises during f.flush(); the file is dropped;
#                gc.collect() runs its finaliser (close) with the heap locked
#   close_gc     the same with f.close()
#   unclosed_gc  a block device that never raises: a written file is dropped
#                unclosed and collected (its finaliser's writeblocks call
#                allocates, and allocating raises MemoryError in a GC)
#   rmdir        writeblocks raises during os.rmdir() (a stack node is left)
#   rename_dir   the same during os.rename() onto an existing directory
#   base_exc     KeyboardInterrupt / SystemExit from writeblocks reach the
#                caller as themselves, and the file system stays usable
#   bentoclaw    bentoclaw's own paths: a block device raising at every write
#                k of remember()/flush(), then a GC: no file is ever left to
#                a finaliser in the middle of littlefs ("heap is locked"
#                inside a block device call), the store stays consistent
#
# Each scenario runs in its own interpreter (`<this file> child <name>`,
# claw_rig.run_child), so a crash is reported by name and the other
# scenarios still run.
import sys
import os
import gc
import vfs

BS = 512
SCENARIOS = ("flush_gc", "close_gc", "unclosed_gc", "rmdir", "rename_dir", "base_exc", "bentoclaw")


class Dev:
    """A RAM block device; raises self.exc (when set) from writes/erases."""

    def __init__(self, blocks=64):
        self.data = bytearray(blocks * BS)
        self.blocks = blocks
        self.exc = None

    def readblocks(self, b, buf, off=0):
        a = b * BS + off
        buf[:] = self.data[a : a + len(buf)]

    def writeblocks(self, b, buf, off=None):
        if self.exc is not None:
            raise self.exc
        a = b * BS + (off or 0)
        self.data[a : a + len(buf)] = buf  # allocates (a slice)

    def ioctl(self, op, arg):
        if op == 4:
            return self.blocks
        if op == 5:
            return BS
        if op == 6:
            if self.exc is not None:
                raise self.exc
            a = arg * BS
            self.data[a : a + BS] = b"\xff" * BS
        return 0


def churn():
    """Reuse freed heap memory (and the dead C stack) with junk, then make
    littlefs commit: a dangling lfs->mlist node is dereferenced here."""

    def deep(n):
        if n:
            return deep(n - 1) + 1
        bytearray(b"\x5a" * 200)
        return 0

    deep(50)
    junk = [bytearray(b"\xa5" * s) for s in (32, 64, 100, 160, 200, 256, 300, 400, 512) for i in range(60)]
    for i in range(8):
        with open("/fs/j%d" % i, "wb") as g:
            g.write(b"y" * 100)
        os.remove("/fs/j%d" % i)
    del junk


def child(name):
    import claw_rig as rig

    t = rig.Checker("bdev-raise-gc:" + name)
    dev = Dev()
    vfs.VfsLfs2.mkfs(dev)
    vfs.mount(vfs.VfsLfs2(dev), "/fs")
    with open("/fs/a", "wb") as f:
        f.write(b"old" * 100)
    boom = ValueError("bdev boom")

    def remount():
        vfs.umount("/fs")
        vfs.mount(vfs.VfsLfs2(dev), "/fs")

    if name in ("flush_gc", "close_gc"):

        def step():
            f = open("/fs/a", "wb")
            f.write(b"x" * 700)
            dev.exc = boom
            try:
                f.flush() if name == "flush_gc" else f.close()
                t.check(False, "%s raises the block device's exception" % name[:5])
            except ValueError as e:
                t.check(e is boom, "%s raises the block device's own ValueError" % name[:5], repr(e))
            dev.exc = None

        step()
        gc.collect()
        churn()
        t.eq(open("/fs/a", "rb").read(), b"old" * 100, "the file keeps its committed content")
    elif name == "unclosed_gc":

        def step():
            f = open("/fs/a", "wb")
            f.write(b"z" * 700)

        step()
        gc.collect()
        churn()
        # The finaliser could not write (the heap is locked during a GC);
        # what was committed stays.
        t.eq(open("/fs/a", "rb").read(), b"old" * 100, "the unclosed file keeps its committed content")
    elif name == "rmdir":
        os.mkdir("/fs/d")
        dev.exc = boom
        try:
            os.rmdir("/fs/d")
            t.check(False, "rmdir raises the block device's exception")
        except ValueError as e:
            t.check(e is boom, "rmdir raises the block device's own ValueError", repr(e))
        dev.exc = None
        churn()
        t.eq(sorted(os.listdir("/fs")), ["a", "d"], "the directory is still there")
        os.rmdir("/fs/d")
    elif name == "rename_dir":
        os.mkdir("/fs/d1")
        os.mkdir("/fs/d2")
        dev.exc = boom
        try:
            os.rename("/fs/d1", "/fs/d2")
            t.check(False, "rename raises the block device's exception")
        except ValueError as e:
            t.check(e is boom, "rename raises the block device's own ValueError", repr(e))
        dev.exc = None
        churn()
        t.eq(sorted(os.listdir("/fs")), ["a", "d1", "d2"], "both directories are still there")
    elif name == "base_exc":
        for exc_type in (KeyboardInterrupt, SystemExit):
            f = open("/fs/k", "wb")
            f.write(b"x" * 700)
            dev.exc = exc_type()
            try:
                f.close()
                t.check(False, "close() raises %s" % exc_type.__name__)
            except BaseException as e:
                t.eq(type(e), exc_type, "close() raises the block device's %s" % exc_type.__name__)
            dev.exc = None
            # The failed close() closed the file: closing it again is a no-op.
            t.eq(f.close(), None, "close() again after %s" % exc_type.__name__)
            gc.collect()
            churn()
        t.eq(open("/fs/a", "rb").read(), b"old" * 100, "other files are untouched")
    elif name == "bentoclaw":
        child_bentoclaw(t, dev)
    else:
        t.check(False, "known scenario", name)

    # Common ending: the file system still works and survives a remount.
    with open("/fs/new", "wb") as f:
        f.write(b"n" * 600)
    remount()
    t.eq(open("/fs/new", "rb").read(), b"n" * 600, "a new file round-trips through a remount")
    t.done()


def child_bentoclaw(t, dev):
    # "/" becomes LittleFS here: the host's files are out of reach from now on.
    import claw_rig as rig
    import bentoclaw

    class RaiseAt(rig.RamBlockDev):
        def __init__(self):
            super().__init__(64)
            self.raise_at = None
            self.count = 0

        def _tick(self):
            self.count += 1
            if self.raise_at is not None and self.count >= self.raise_at:
                raise ValueError("bdev boom")

        def writeblocks(self, block, buf, off=None):
            self._tick()
            return super().writeblocks(block, buf, off)

        def ioctl(self, op, arg):
            if op == 6:
                self._tick()
            return super().ioctl(op, arg)

    # How many writes remember()+flush() take, with nothing failing.
    probe = RaiseAt()
    rig.mount(probe)
    bc = rig.simulate_soft_reset(bentoclaw)
    bc.remember("a", "1" * 100)
    bc.remember("b", "2")
    probe.count = 0
    bc.remember("a", "x" * 120)
    bc.flush()
    total = probe.count
    t.check(total > 0, "remember()+flush() write something", total)

    for k in range(1, total + 2):
        d = RaiseAt()
        rig.mount(d)
        bc = rig.simulate_soft_reset(bentoclaw)
        bc.remember("a", "1" * 100)
        bc.remember("b", "2")
        d.count = 0
        d.raise_at = k
        stored = bc.remember("a", "x" * 120)
        bc.flush()
        d.raise_at = None
        gc.collect()
        churn_root()
        want = "x" * 120 if stored else "1" * 100
        t.eq(bc.recall("a"), want, "k=%d: recall() after the failure and a GC" % k)
        t.eq(bc.recall("b"), "2", "k=%d: the other key" % k)
        rig.mount(d, mkfs=False)
        bc = rig.simulate_soft_reset(bentoclaw)
        t.eq(bc.recall("a"), want, "k=%d: recall() after a remount" % k)
    # (/fs, the common ending's file system, is still mounted.)


def churn_root():
    junk = [bytearray(b"\xa5" * s) for s in (32, 64, 100, 160, 200, 256, 300, 400, 512) for i in range(60)]
    for i in range(4):
        with open("/j%d" % i, "wb") as g:
            g.write(b"y" * 600)
        os.remove("/j%d" % i)
    del junk


def parent():
    import claw_rig as rig

    t = rig.Checker("bdev-raise-gc")
    losses = 0
    for name in SCENARIOS:
        before = t.failed
        text = rig.run_child(t, "%s child %s" % (sys.argv[0], name), "scenario " + name)
        if name == "bentoclaw":
            # A finaliser that ran a block device call inside littlefs
            # prints this (the GC catches the MemoryError); unpatched, each
            # one leaves a freed file object linked into lfs->mlist.
            # bentoclaw never leaves a file open for a finaliser to close.
            t.check("heap is locked" not in text, "bentoclaw leaves no file for a finaliser to close in a GC",
                    text.count("heap is locked"), "times")
        losses += t.failed > before
    print("RELIABILITY: block device raising in littlefs (flush, close, rmdir, rename; then GC)|%d|%d"
          % (len(SCENARIOS), losses))
    print("CRASHCLASS: block device raising during a flush/close/rmdir/rename, then a GC (plain MicroPython "
          "and bentoclaw)|test_bdev_raise_gc|%s|SIGSEGV (lfs2_pair_cmp) in 5 of 7 scenarios without "
          "mpy/patches/micropython/0002" % ("no crash; the file system stays usable" if t.failed == 0 else "FAILED"))
    t.done()


if len(sys.argv) > 2 and sys.argv[1] == "child":
    child(sys.argv[2])
else:
    parent()
