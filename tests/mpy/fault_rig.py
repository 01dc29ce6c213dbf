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
BLOCK_SIZE = rig.BLOCK_SIZE
CUT_MODES = ("drop", "torn", "torn_ff")


class CutBlockDev(rig.RamBlockDev):
    """A RAM block device whose power is cut at the cut_at-th write."""

    def __init__(self, data, cut_at=None, mode="drop"):
        super().__init__(len(data) // BLOCK_SIZE, data)
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
            r = self._write("erase", arg * BLOCK_SIZE, b"\xff" * BLOCK_SIZE)
            if r == 0:
                self.erases += 1
            return r
        return super().ioctl(op, arg)

    def image(self):
        return bytes(self.data)


class FailAtBlockDev(rig.RamBlockDev):
    """A RAM block device whose fail_at-th write (and, sticky, every later
    one until heal()) returns -errno without reaching the image."""

    def __init__(self, data, fail_at=None, errno=EIO, sticky=False):
        super().__init__(len(data) // BLOCK_SIZE, data)
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
        vfs.VfsLfs2.mkfs(dev)
    try:
        vfs.umount("/")
    except OSError:
        pass
    vfs.mount(vfs.VfsLfs2(dev, mtime=MTIME), "/")
    os.chdir("/")
    dev.reset_counters()
    return dev


def make_image(setup, blocks=64):
    """A fresh LittleFS image on which setup() has run (with "/" mounted on
    it); returns its bytes."""
    dev = rig.RamBlockDev(blocks)
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
    with open(img_path, "rb") as f:
        data = f.read()
    dev = rig.RamBlockDev(len(data) // BLOCK_SIZE, data)
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
        json.dump({"states": [norm(r, m) for r, m in states], "label": label, "then_write": then_write}, f)
    write_file("/host/img.bin", image)
    cmd = "%s %s child %s %s" % (rig.mpy_path(), script, host_path("exp.json"), host_path("img.bin"))
    code = status_of(os.system(cmd))
    if code is None or code < 10 or code >= 10 + len(states):
        t.check(False, "%s: the rebooted process found an allowed state" % label, "exit", code)
        return None
    return code - 10
