# qrig.py — the rig of the emulated-target tests (tests/qemu/test_*.py).
#
# tests/qemu/run.py executes this file in the firmware's raw REPL before
# every phase of a test, so its names are globals of the test script:
#
#   t = Checker("ring")
#   disk = mount_ramdisk()           # mkfs + mount LittleFS at "/"
#   disk = mount_ramdisk(mkfs=False) # after a soft reset: mount what is there
#   t.check(cond, "what", detail); t.eq(got, want, "what")
#   t.raises(RuntimeError, fn, args..., text="exact message")
#   t.done()                         # prints RESULT: <n> passed, <m> failed
#   t.done(reset=True)               # ... then machine.soft_reset()
#
# The RAM disk is board.ramdisk(): a fixed SRAM region outside the GC heap
# and .bss (see tests/qemu/boards/MPS3_AN547/mps3_an547.ld). It is zero at power-on and
# kept across a soft reset, so the LittleFS on it survives one, the way the
# board's QSPI flash does.
import sys
import os
import vfs
import time
import board

BLOCK_SIZE = 512
EIO = 5
ERASED = b"\xff" * BLOCK_SIZE

SESSION_FILE = "/.bentoclaw_session"
MEMORY_FILE = "/.bentoclaw_memory"

BREAKER_TEXT = "circuit breaker open \u2014 cooldown active"
TRUST_TEXT = "tool risk exceeds transport trust level"
RATE_TEXT = "rate limit exceeded for this tool"
NOT_CONNECTED_TEXT = "not connected: call connect() first"


class Checker:
    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0

    def check(self, cond, what, *detail):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL [%s] %s" % (self.name, what), *detail)
        return cond

    def eq(self, got, want, what):
        return self.check(got == want, what, "got", repr(got), "want", repr(want))

    def raises(self, exc_type, fn, *args, text=None, contains=None, what=None):
        what = what or "%s%r raises %s" % (getattr(fn, "__name__", "fn"), args, exc_type.__name__)
        try:
            r = fn(*args)
        except exc_type as e:
            msg = str(e)
            if text is not None and msg != text:
                self.check(False, what, "message", repr(msg), "want", repr(text))
            elif contains is not None and contains not in msg:
                self.check(False, what, "message", repr(msg), "lacks", repr(contains))
            else:
                self.check(True, what)
            return e
        except Exception as e:
            self.check(False, what, "raised", repr(e))
            return None
        self.check(False, what, "returned", repr(r))
        return None

    def done(self, reset=False):
        print("RESULT: %d passed, %d failed" % (self.passed, self.failed))
        if reset:
            import machine

            machine.soft_reset()


class RamDisk:
    """Block device over the board's RAM-disk region: 512-byte blocks,
    readblocks/writeblocks with offset, ioctl 4/5/6. Counts what LittleFS
    does; fail_writes=True makes every write fail with EIO (a negative
    return, never an exception: that would unwind through littlefs)."""

    def __init__(self, blocks=None):
        self.mem = memoryview(board.ramdisk())
        self.blocks = blocks or len(self.mem) // BLOCK_SIZE
        self.fail_writes = False
        self.reset_counters()

    def reset_counters(self):
        self.bytes_written = 0
        self.writes = 0
        self.erases = 0

    def readblocks(self, block, buf, off=0):
        a = block * BLOCK_SIZE + off
        buf[:] = self.mem[a : a + len(buf)]
        return 0

    def writeblocks(self, block, buf, off=0):
        if self.fail_writes:
            return -EIO
        a = block * BLOCK_SIZE + off
        self.mem[a : a + len(buf)] = buf
        self.bytes_written += len(buf)
        self.writes += 1
        return 0

    def ioctl(self, op, arg):
        if op == 4:  # block count
            return self.blocks
        if op == 5:  # block size
            return BLOCK_SIZE
        if op == 6:  # erase
            if self.fail_writes:
                return -EIO
            self.erases += 1
            a = arg * BLOCK_SIZE
            self.mem[a : a + BLOCK_SIZE] = ERASED
            return 0
        return 0


def mount_ramdisk(mkfs=True, blocks=None):
    disk = RamDisk(blocks)
    if mkfs:
        vfs.VfsLfs2.mkfs(disk)
    try:
        vfs.umount("/")
    except OSError:
        pass
    vfs.mount(vfs.VfsLfs2(disk), "/")
    os.chdir("/")
    disk.reset_counters()
    return disk


def read_file(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def elapsed(t0):
    return time.ticks_diff(time.ticks_ms(), t0)
