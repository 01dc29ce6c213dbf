# qrig.py — the rig of the emulated-target tests (tests/qemu/test_*.py).
#
# tests/qemu/run.py executes this file in the firmware's raw REPL before
# every phase of a test, after setting QEMU_BOARD ("m33" or "m55") and
# BACKEND_PORT (the backend's loopback port, or None), so its names are
# globals of the test script:
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
# and .bss (see the board's linker script). It is zero at power-on and kept
# across a soft reset, so the LittleFS on it survives one, the way the
# board's QSPI flash does. It is mounted with the board's flash geometry:
# on the M33, 8 blocks of 256 KiB with VfsLfs2(bdev, progsize=512,
# readsize=512) as the BENTO firmware mounts its QSPI flash at "/"; on the
# M55, 512-byte blocks with LittleFS's defaults.
#
# On the M33 (UART1 to the serial bridge; TACP is on the console, driven by
# host-side tests: tests/qemu/test_tacp_console.py):
#   bridge_fault(kind)               the bridge's next transport answer is
#                                    corrupted / late / preceded by noise /
#                                    dropped (FAULT_*)
#   bridge_detach()                  the bridge goes away
#   backend_control(**settings)      POST /_control to the backend (its
#                                    queued replies, mode, ...), through the
#                                    bridge (claw_rig.backend_control's)
import sys
import os
import vfs
import time
import board

# The board's flash geometry (the M55 board predates these constants).
BLOCK_SIZE = getattr(board, "FLASH_BLOCK_SIZE", 512)
LFS_OPTS = ({"progsize": board.FLASH_PROG_SIZE, "readsize": board.FLASH_READ_SIZE}
            if hasattr(board, "FLASH_PROG_SIZE") else {})
EIO = 5
# An erase writes this run over the block, as often as it takes: a run of
# the block's size (256 KiB) would not fit the GC heap.
ERASED = b"\xff" * min(BLOCK_SIZE, 4096)
API_KEY = "demo-key"

SESSION_FILE = "/.bentoclaw_session"
MEMORY_FILE = "/.bentoclaw_memory"

BREAKER_TEXT = "circuit breaker open \u2014 cooldown active"
TRUST_TEXT = "tool risk exceeds transport trust level"
RATE_TEXT = "rate limit exceeded for this tool"
NOT_CONNECTED_TEXT = "not connected \u2014 call bentoclaw.connect() first"
ASK_BREAKER_TEXT = "circuit breaker open"
REQUEST_TEXT = "HTTPS request failed"


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
    """Block device over the board's RAM-disk region: blocks of the board's
    BLOCK_SIZE, readblocks/writeblocks with offset, ioctl 4/5/6. Counts what LittleFS
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
            for off in range(a, a + BLOCK_SIZE, len(ERASED)):
                self.mem[off : off + len(ERASED)] = ERASED
            return 0
        return 0


def mount_ramdisk(mkfs=True, blocks=None):
    disk = RamDisk(blocks)
    if mkfs:
        vfs.VfsLfs2.mkfs(disk, **LFS_OPTS)
    try:
        vfs.umount("/")
    except OSError:
        pass
    vfs.mount(vfs.VfsLfs2(disk, **LFS_OPTS), "/")
    os.chdir("/")
    disk.reset_counters()
    return disk


def read_file(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


# The files of the session and the store (src/session, src/memory): a base
# each, plus six slots and eight shards beside it. The readers below are
# tests/mpy/claw_rig.py's, independent of the core's.
SESSION_SLOTS = ["/.bentoclaw_session.%d" % i for i in range(6)]
MEMORY_SHARDS = ["/.bentoclaw_memory.%d" % i for i in range(8)]
SESSION_FILES = [SESSION_FILE] + SESSION_SLOTS
MEMORY_FILES = [MEMORY_FILE] + MEMORY_SHARDS
ROLES = ("user", "assistant", "system", "tool", "summary")


def _json_lines(raw):
    import json

    out = []
    for line in (raw or b"").split(b"\n"):
        if not line.strip():
            continue
        try:
            v = json.loads(line)
        except (ValueError, UnicodeError):
            v = None
        out.append(v if isinstance(v, dict) else None)
    return out


def _batch(raw):
    recs, trusted, seq = [], None, None
    for v in _json_lines(raw):
        if v is None:
            continue
        if "role" in v or "content" in v:
            if v.get("role") not in ROLES or not isinstance(v.get("content"), str):
                continue
            recs.append(v)
        if v.get("end") is True:
            trusted, seq = len(recs), v.get("seq", 0)
    return (recs if trusted is None else recs[:trusted]), seq


def _replay(ring, v):
    text = v["content"]
    if v["role"] == "summary":
        keep = v.get("keep")
        if keep is None:
            ring[:] = [("summary", text)]
            return
        head = 1 if ring and ring[0][0] == "summary" else 0
        turns = ring[head:]
        kept = turns[len(turns) - keep:] if keep < len(turns) else turns
        ring[:] = [("summary", text)] + kept
        while len(ring) > 10:
            del ring[1]
        return
    if len(ring) >= 10:
        del ring[1 if ring[0][0] == "summary" else 0]
    ring.append((v["role"], text))


def session_on_flash():
    """The ring as read back from the files, [(role, text)], oldest first."""
    ring = []
    recs, base_seq = _batch(read_file(SESSION_FILE))
    base_seq = base_seq or 0
    for v in recs:
        _replay(ring, v)
    slots = []
    for i, path in enumerate(SESSION_SLOTS):
        recs, seq = _batch(read_file(path))
        if seq is not None and base_seq >= 1 and seq > base_seq and seq % 6 == i:
            slots.append((seq, recs))
    for _, recs in sorted(slots, key=lambda x: x[0]):
        for v in recs:
            _replay(ring, v)
    return ring


def store_on_flash():
    """The store as read back from the files, [(key, value, pinned)]."""
    base = [v for v in _json_lines(read_file(MEMORY_FILE)) if v is not None]
    generation = 0
    if base and "seq" in base[0] and "key" not in base[0]:
        generation = base[0]["seq"]
        base = base[1:]
    pairs = [v for v in base if isinstance(v.get("key"), str) and isinstance(v.get("value"), str)]
    shard = {}
    order = []
    for i, path in enumerate(MEMORY_SHARDS):
        recs = _json_lines(read_file(path))
        if generation < 1 or not recs or recs[0] is None or recs[0].get("seq") != generation or "key" in recs[0]:
            continue
        for v in recs[1:]:
            if v is None or not isinstance(v.get("key"), str):
                continue
            shard[v["key"]] = v
            order.append(v["key"])
    out, seen = [], set()
    for v in pairs:
        k = v["key"]
        r = shard.get(k, v)
        seen.add(k)
        if r.get("del") is not True:
            out.append((k, r["value"], r.get("pin") is True))
    new = [(shard[k].get("n", 0), i, shard[k]) for i, k in enumerate(order)
           if k not in seen and shard[k].get("del") is not True]
    new.sort(key=lambda x: (x[0], x[1]))
    out += [(v["key"], v["value"], v.get("pin") is True) for _, _, v in new]
    return out


def session_bytes():
    return sum(len(read_file(p) or b"") for p in SESSION_FILES)


def session_exists():
    return any(read_file(p) is not None for p in SESSION_FILES)


def store_exists():
    return any(read_file(p) is not None for p in MEMORY_FILES)


def elapsed(t0):
    return time.ticks_diff(time.ticks_ms(), t0)


# --- the serial bridge (M33) ---------------------------------

LINK_FAULT = 0x13
LINK_DETACH = 0x14
FAULT_CORRUPT = 1  # one bit of the next transport answer flipped (CRC fails)
FAULT_LATE = 2  # the next answer held back, sent before the one after it
FAULT_NOISE = 3  # bytes that are no frame before the next answer
FAULT_DROP = 4  # the next answer never sent


def bridge_fault(kind):
    if board.link_call(LINK_FAULT, bytes([kind]), 10000, 16) is None:
        raise OSError("the serial bridge did not take the fault")


def bridge_detach():
    board.link_call(LINK_DETACH, b"", 1000, 0)


def backend_control(**settings):
    import json
    import struct

    body = json.dumps(settings).encode()
    msg = struct.pack("<HHB", BACKEND_PORT, 0, 4) + b"POST" + struct.pack("<H", 9) + b"/_control" + body
    ans = board.link_call(0x10, msg, 20000, 8192)
    if ans is None or ans[:2] != b"\xc8\x00":
        raise OSError("backend control failed: %r" % (ans and ans[:80]))
