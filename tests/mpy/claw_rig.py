# claw_rig.py — shared rig for the MicroPython-level tests of bentoclaw.
#
# Import it BEFORE remounting "/": once LittleFS is mounted at the root the
# host's files (this module included) are out of reach.
#
#   import claw_rig as rig
#   t = rig.Checker("ring")
#   bdev = rig.mount_ram()              # LittleFS on a RAM block device at "/"
#   t.check(cond, "what was expected", detail)
#   t.raises(RuntimeError, fn, args..., text="exact message")
#   t.done()                             # prints RESULT, exits 1 on failure
#                                        # (and when no check was made)
#   rig.advance_clock(30000)             # "# needs: clock": time jumps 30 s
#
# Block devices count what LittleFS does to them (bytes_written, writes,
# erases) and can fail writes/reads on demand, the way flash can. Failures
# are reported as a negative errno return (what extmod/vfs_blockdev.c
# expects), never by raising: an exception would unwind through littlefs.
#
# Two targets run the same test files (a test says which in a header line
# "# targets: unix qemu"):
#  * unix: MicroPython's unix port (scripts/test_mpy.sh); the environment
#    gives BENTOCLAW_PORT etc.; the backend's control endpoints are reached
#    with a socket.
#  * qemu: the emulated Cortex-M33 board (tests/qemu/run.py, which installs
#    this file as the module claw_rig and fills ENV). mount_ram() mounts the
#    board's RAM disk with the board's flash geometry (4 KiB blocks,
#    progsize 256, readsize 4096); the backend is reached through the serial
#    bridge (board.link_call); done() does not exit (that would soft-reset
#    the board).
import sys
import os
import vfs
import time

try:
    import json
except ImportError:
    json = None
try:
    import socket
except ImportError:
    socket = None

BLOCK_SIZE = 512
EIO = 5

QEMU = sys.platform == "qemu"
# On the emulated board (no os.getenv): the runner's settings.
ENV = {}

SESSION_FILE = "/.bentoclaw_session"
MEMORY_FILE = "/.bentoclaw_memory"

BREAKER_TEXT = "circuit breaker open \u2014 cooldown active"
# ask()'s (the vendor's short form), and its offline text.
ASK_BREAKER_TEXT = "circuit breaker open"


def tool_row(x):
    """A tools() dict as the tuple (name, risk, rate_per_min, builtin)."""
    return (x["name"], x["risk"], x["rate_per_min"], x["builtin"])
NOT_CONNECTED_TEXT = "not connected \u2014 call bentoclaw.connect() first"
TRUST_TEXT = "tool risk exceeds transport trust level"
RATE_TEXT = "rate limit exceeded for this tool"
REQUEST_TEXT = "HTTPS request failed"
API_KEY = "demo-key"


# --- checks ------------------------------------------------------------------


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
        """fn(*args) must raise exc_type (with str(e) == text / containing
        `contains` when given). Returns the exception or None."""
        what = what or "%s%r raises %s" % (getattr(fn, "__name__", "fn"), args, exc_type.__name__)
        try:
            r = fn(*args)
        except exc_type as e:
            msg = str(e)
            if text is not None and msg != text:
                self.check(False, what, "message", repr(msg), "want", repr(text))
                return e
            if contains is not None and contains not in msg:
                self.check(False, what, "message", repr(msg), "lacks", repr(contains))
                return e
            self.check(True, what)
            return e
        except Exception as e:
            self.check(False, what, "raised", repr(e))
            return None
        self.check(False, what, "returned", repr(r))
        return None

    def done(self):
        """Prints the RESULT line and exits: 1 on any failure, and also when
        no check was made at all (a file that checks nothing cannot pass)."""
        if self.passed + self.failed == 0:
            print("FAIL [%s] no check was made: a test that checks nothing cannot pass" % self.name)
            self.failed = 1
        print("RESULT: %d passed, %d failed" % (self.passed, self.failed))
        if not QEMU:
            sys.exit(1 if self.failed else 0)


# --- block devices ------------------------------------------------------------


def default_block_size():
    """512 on the unix port; the board's erase block on the emulated one."""
    if QEMU:
        import board

        return board.FLASH_BLOCK_SIZE
    return BLOCK_SIZE


class RamBlockDev:
    """A RAM block device with 512-byte blocks (default_block_size()) and the
    extended interface (readblocks/writeblocks with offset, ioctl 4/5/6).
    storage: a buffer to use as it is (the emulated board's RAM disk)."""

    def __init__(self, blocks=256, data=None, block_size=None, storage=None):
        self.blocks = blocks
        self.block_size = block_size or default_block_size()
        if storage is not None:
            self.data = storage
        else:
            self.data = bytearray(data) if data is not None else bytearray(blocks * self.block_size)
        # Reads copy out of a view, erases write a 4 KiB erased run made
        # here: no allocation of a block's size per operation (256 KiB on
        # the BENTO geometry, more than the emulated board's GC heap).
        self.mv = memoryview(self.data)
        self.erased = b"\xff" * min(self.block_size, 4096)
        self.reset_counters()
        self.fail_writes = False  # True: every write fails with EIO
        self.fail_after = None  # int: writes succeed for this many more bytes
        self.fail_reads = False
        self.on_write = None  # callback(self) after each successful write

    def reset_counters(self):
        self.bytes_written = 0
        self.writes = 0
        self.erases = 0
        self.bytes_read = 0

    def readblocks(self, block, buf, off=0):
        if self.fail_reads:
            return -EIO
        a = block * self.block_size + off
        buf[:] = self.mv[a : a + len(buf)]
        self.bytes_read += len(buf)
        return 0

    def writeblocks(self, block, buf, off=None):
        if off is None:
            # Legacy form: whole blocks, erase implied.
            off = 0
        if self.fail_writes:
            return -EIO
        if self.fail_after is not None:
            if len(buf) > self.fail_after:
                self.fail_writes = True
                return -EIO
            self.fail_after -= len(buf)
        a = block * self.block_size + off
        self._store(a, buf)
        self.bytes_written += len(buf)
        self.writes += 1
        if self.on_write:
            self.on_write(self)
        return 0

    def _store(self, a, buf):
        self.data[a : a + len(buf)] = buf

    def ioctl(self, op, arg):
        if op == 4:  # block count
            return self.blocks
        if op == 5:  # block size
            return self.block_size
        if op == 6:  # erase
            if self.fail_writes:
                return -EIO
            self.erases += 1
            a = arg * self.block_size
            for off in range(0, self.block_size, len(self.erased)):
                self._store(a + off, self.erased)
            if self.on_write:
                self.on_write(self)
            return 0
        return 0


class FileBlockDev(RamBlockDev):
    """A RamBlockDev whose every write also goes to a host file, so a second
    interpreter process can mount the same image. Open it before "/" is
    remounted (the host file object stays usable afterwards)."""

    def __init__(self, path, blocks=256, create=True):
        if create:
            f = open(path, "w+b")
            f.write(bytes(blocks * BLOCK_SIZE))
            f.flush()
            data = None
        else:
            f = open(path, "r+b")
            data = f.read()
            blocks = len(data) // BLOCK_SIZE
        self.f = f
        super().__init__(blocks, data)

    def _store(self, a, buf):
        super()._store(a, buf)
        self.f.seek(a)
        self.f.write(buf)
        self.f.flush()


# The upstream PSoC Edge port's geometry: 4 KiB blocks, VfsLfs2(bdev,
# progsize=256, readsize=4096).
UPSTREAM_BLOCK = 4096
UPSTREAM_OPTS = {"progsize": 256, "readsize": 4096}


def lfs_options(block_size=None):
    """VfsLfs2 keyword arguments for a device of block_size: on the emulated
    board's own blocks its flash geometry (what the BENTO firmware mounts:
    progsize=512, readsize=512), on 4 KiB blocks the upstream port's, and
    LittleFS's defaults on the unix port's 512-byte blocks."""
    if QEMU:
        import board

        if block_size in (None, board.FLASH_BLOCK_SIZE):
            return {"progsize": board.FLASH_PROG_SIZE, "readsize": board.FLASH_READ_SIZE}
    if block_size == UPSTREAM_BLOCK:
        return UPSTREAM_OPTS
    return {}


def mount(bdev, mkfs=True):
    """Mount LittleFS on bdev at "/" (replacing what is there) and reset the
    counters, so they count bentoclaw's writes only."""
    opts = lfs_options(getattr(bdev, "block_size", None))
    if mkfs:
        vfs.VfsLfs2.mkfs(bdev, **opts)
    try:
        vfs.umount("/")
    except OSError:
        pass
    vfs.mount(vfs.VfsLfs2(bdev, **opts), "/")
    os.chdir("/")
    bdev.reset_counters()
    return bdev


def board_blockdev(blocks=256, bs=None):
    """On the emulated board: a block device over board.ramdisk() (outside
    the GC heap, kept across soft resets) with the board's 256 KiB blocks
    (or blocks of bs bytes), as many bytes as `blocks` 512-byte blocks (at
    least 8 blocks, at most the whole RAM disk)."""
    import board

    bs = bs or board.FLASH_BLOCK_SIZE
    mem = memoryview(board.ramdisk())
    n = min(max(blocks * BLOCK_SIZE // bs, 8), len(mem) // bs)
    return RamBlockDev(n, block_size=bs, storage=mem[: n * bs])


def mount_ram(blocks=256, board_geometry=True):
    """LittleFS at "/" on `blocks` 512-byte blocks of RAM; on the emulated
    board, its RAM disk with the board's geometry, or with the upstream
    port's 4 KiB blocks when board_geometry is False (a test that copies the
    whole device: 2 MiB would not fit the GC heap)."""
    if QEMU:
        return mount(board_blockdev(blocks, None if board_geometry else UPSTREAM_BLOCK))
    return mount(RamBlockDev(blocks))


def read_file(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


# The files of the session and the store (src/session, src/memory): a base
# each, plus slots and shards beside it.
SESSION_SLOTS = ["/.bentoclaw_session.%d" % i for i in range(6)]
MEMORY_SHARDS = ["/.bentoclaw_memory.%d" % i for i in range(8)]
SESSION_FILES = [SESSION_FILE] + SESSION_SLOTS
MEMORY_FILES = [MEMORY_FILE] + MEMORY_SHARDS
ROLES = ("user", "assistant", "system", "tool", "summary")
RING = 10


def _json_lines(raw):
    """The lines of a file that are JSON objects (None for the others)."""
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
    """A session file's records up to its last end line (all of them when it
    has none, the seed's plain form) and that line's seq (None: no end)."""
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
        while len(ring) > RING:
            del ring[1]
        return
    if len(ring) >= RING:
        del ring[1 if ring[0][0] == "summary" else 0]
    ring.append((v["role"], text))


def session_on_flash():
    """The ring as the core reads it back from the files, [(role, text)],
    oldest first: an implementation of the layout of src/session
    independent of the core's."""
    ring = []
    recs, base_seq = _batch(read_file(SESSION_FILE))
    base_seq = base_seq or 0
    for v in recs:
        _replay(ring, v)
    slots = []
    for i, path in enumerate(SESSION_SLOTS):
        recs, seq = _batch(read_file(path))
        # (Slots count only beside a base of the core's, seq >= 1.)
        if seq is not None and base_seq >= 1 and seq > base_seq and seq % 6 == i:
            slots.append((seq, recs))
    for _, recs in sorted(slots, key=lambda x: x[0]):
        for v in recs:
            _replay(ring, v)
    return ring


def session_bytes():
    """Bytes of all session files."""
    return sum(len(read_file(p) or b"") for p in SESSION_FILES)


def store_on_flash():
    """The store as the core reads it from the files, [(key, value, pinned)]
    in store order: an implementation of the layout of src/memory
    independent of the core's."""
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
        # (Shards count only beside a base of the core's, generation >= 1.)
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


def store_exists():
    """Whether any file of the store is there."""
    return any(read_file(p) is not None for p in MEMORY_FILES)


def session_exists():
    """Whether any file of the session is there."""
    return any(read_file(p) is not None for p in SESSION_FILES)


def simulate_soft_reset(bentoclaw_module):
    """What a soft reset does to the module, as far as the unix port can show
    it: the new VM's sys.modules lacks the marker that bentoclaw keeps there,
    so the next import runs its __init__ (new VM: Python tools dropped, core
    re-initialised on the next call)."""
    for k in list(sys.modules):
        if not isinstance(k, str):
            del sys.modules[k]
    del bentoclaw_module
    import bentoclaw

    return bentoclaw


def getenv(name):
    f = getattr(os, "getenv", None)
    return f(name) if f else ENV.get(name)


def mpy_path():
    return getenv("BENTOCLAW_MPY") or sys.executable


def wait_status_text(rc):
    """os.system's status -> "exit N" / "killed by signal N" (the shell
    reports a child's signal as exit 128+N, system() itself as a signal)."""
    if rc & 0x7F:
        return "killed by signal %d" % (rc & 0x7F)
    code = rc >> 8
    if code > 128:
        return "killed by signal %d" % (code - 128)
    return "exit %d" % code


def run_child(t, args, label):
    """Run `<interpreter> <args>` in a new process (cwd unchanged; the host's
    file system must be reachable at "/", i.e. call this before remounting
    it). The child is a test of its own: its "RESULT: N passed, M failed"
    counts are added to t and its FAIL lines printed. A child that prints no
    RESULT line, or dies by a signal, is one failed check. Returns the
    child's output."""
    tag = "".join("%02x" % b for b in os.urandom(4))
    out = "%s/bentoclaw_child_%s.log" % (getenv("TMPDIR") or "/tmp", tag)
    rc = os.system("%s %s >%s 2>&1 </dev/null" % (mpy_path(), args, out))
    with open(out) as f:
        text = f.read()
    os.remove(out)
    counted = False
    failed = 0
    for line in text.split("\n"):
        if line.startswith("FAIL "):
            print("FAIL [%s] %s" % (label, line[5:]))
        elif line.startswith("RESULT: "):
            w = line.split()
            t.passed += int(w[1])
            failed = int(w[3])
            t.failed += failed
            counted = True
    # A non-zero exit is explained only by failed checks (exit 1).
    if not counted or (rc != 0 and not (rc == 0x100 and failed > 0)):
        t.check(False, "%s: the interpreter exits 0 with a RESULT line" % label, wait_status_text(rc))
        print("    | " + "\n    | ".join(text.rstrip().split("\n")[-12:]))
    return text


def ticks():
    return time.ticks_ms()


# --- the test clock ("# needs: clock" in scripts/test_mpy.sh) -------------------
# libfaketime reads the offset of the process's clocks from this file at every
# clock read; real time runs at its own pace in between. Opened here, at
# import, while the host's files are still reachable.
CLOCK_FILE = None if QEMU else getenv("BENTOCLAW_CLOCK_FILE")
_clock_f = open(CLOCK_FILE, "w") if CLOCK_FILE else None
_clock_offset_ms = 0
CLOCK_FILE_WIDTH = 23  # the line scripts/test_mpy.sh writes: "%-23s\n"


def advance_clock(ms):
    """Moves ticks_ms(), CLOCK_MONOTONIC and the RTC forward by exactly ms,
    at once. Only under "# needs: clock"."""
    global _clock_offset_ms
    if QEMU:
        # The emulated board runs such tests under -icount with sleep=off
        # (tests/qemu/run.py): its clock jumps over an idle wait.
        time.sleep_ms(ms)
        return
    if _clock_f is None:
        raise RuntimeError("advance_clock() needs '# needs: clock' (scripts/test_mpy.sh)")
    if ms < 0:
        raise ValueError("the clock only moves forward")
    _clock_offset_ms += ms
    spec = "+%d.%03d" % (_clock_offset_ms // 1000, _clock_offset_ms % 1000)
    _clock_f.seek(0)
    _clock_f.write("%s%s\n" % (spec, " " * (CLOCK_FILE_WIDTH - len(spec))))
    _clock_f.flush()


def elapsed(t0):
    return time.ticks_diff(time.ticks_ms(), t0)


# --- the test backend (mpy/examples/backend.py) --------------------------------------------


def backend_port():
    p = getenv("BENTOCLAW_PORT")
    return int(p) if p else None


# The serial bridge's harness request for the backend's control endpoints
# (tests/qemu/serial_bridge.py, HOST_HTTP), and its "keep all" value.
LINK_HOST_HTTP = 0x10
KEEP_ALL = 0xFFFF
# Records the backend keeps in /_log (mpy/examples/backend.py LOG_KEEP). On
# the emulated board only the ones a test looks at are fetched: the whole
# log can be larger than its heap, and its UART moves about 30 KB/s.
LOG_RECORDS = 32


def http(method, path, body=None, port=None, keep=KEEP_ALL):
    """Minimal HTTP/1.1 client for the backend's control endpoints.
    Returns (status, body_text). On the emulated board the request goes
    through the serial bridge, which trims a "requests" list in the answer
    to its newest `keep` entries."""
    port = port or backend_port()
    if QEMU:
        import board
        import struct

        data = body.encode() if isinstance(body, str) else (body or b"")
        m, p = method.encode(), path.encode()
        payload = struct.pack("<HHB", port, keep, len(m)) + m + struct.pack("<H", len(p)) + p + data
        ans = board.link_call(LINK_HOST_HTTP, payload, 20000, 64 * 1024)
        if ans is None or len(ans) < 2:
            raise OSError("the serial bridge did not answer %s %s" % (method, path))
        return struct.unpack("<H", ans[:2])[0], str(ans[2:], "utf-8")
    addr = socket.getaddrinfo("127.0.0.1", port)[0][-1]
    s = socket.socket()
    try:
        s.connect(addr)
        data = body.encode() if isinstance(body, str) else (body or b"")
        req = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" "Content-Length: %d\r\nConnection: close\r\n\r\n" % (method, path, len(data))
        s.send(req.encode() + data)
        chunks = []
        while True:
            c = s.recv(4096)
            if not c:
                break
            chunks.append(c)
    finally:
        s.close()
    raw = b"".join(chunks)
    head, _, rest = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    return status, rest.decode()


def backend_control(**settings):
    st, text = http("POST", "/_control", json.dumps(settings))
    if st != 200:
        raise OSError("backend control failed: %d %s" % (st, text))
    return json.loads(text)


def backend_mode(mode, count=None):
    if count is None:
        return backend_control(mode=mode)
    return backend_control(mode=mode, count=count)


def backend_last():
    return json.loads(http("GET", "/_last")[1])


class _BoardRequests:
    """The "requests" of backend_log() on the emulated board: indexing or
    slicing from the end (log[-1], log[-n:]) fetches just the newest records
    it needs; anything else fetches the backend's whole log (32 records)."""

    def __init__(self, total):
        self.total = total

    def __len__(self):
        return min(self.total, LOG_RECORDS)

    def __getitem__(self, i):
        start = i.start if isinstance(i, slice) else i
        need = -start if isinstance(start, int) and start < 0 and (
            not isinstance(i, slice) or (i.stop is None and i.step is None)) else LOG_RECORDS
        got = json.loads(http("GET", "/_log", keep=min(need, LOG_RECORDS))[1])["requests"]
        return got[i]

    def __iter__(self):
        return iter(self[-LOG_RECORDS:])


class _BoardLog:
    """backend_log() on the emulated board: the total at once, the records
    (_BoardRequests) when they are used."""

    def __init__(self):
        self.doc = json.loads(http("GET", "/_log", keep=0)[1])
        self.doc["requests"] = _BoardRequests(self.doc["total"])

    def __getitem__(self, k):
        return self.doc[k]

    def get(self, k, default=None):
        return self.doc.get(k, default)


def backend_log():
    if QEMU:
        return _BoardLog()
    return json.loads(http("GET", "/_log")[1])


def backend_reset():
    return http("POST", "/_reset", "{}")


def classic_session(bentoclaw_module):
    """The session as it was before issue #6: a plain ring of the newest 10
    (no automatic compaction, so no summary requests) and no daily reset
    (the unix port's RTC is always set, and under faketime x50 a run can
    cross 04:00). For tests that model the ring or count requests; written
    to /.bentoclaw_config, so a restarted interpreter keeps it."""
    return bentoclaw_module.config(auto_compact=False, daily_reset_hour=-1)


def connect(bentoclaw_module):
    return bentoclaw_module.connect("127.0.0.1", backend_port(), API_KEY)


# --- TACP v2 frames (docs/TACP.md), as the BENTO AI IDE sends and reads them ---------
# An independent implementation (not the core's): CRC-16/CCITT, init 0xFFFF,
# poly 0x1021, over sub, seq, length and payload.
TACP_ERROR = 0xFF


def tacp_crc(data, crc=0xFFFF):
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def tacp_frame(sub, payload=b"", seq=1):
    if isinstance(payload, str):
        payload = payload.encode()
    body = bytes([sub, seq, len(payload) & 0xFF, len(payload) >> 8]) + payload
    crc = tacp_crc(body)
    return b"\xaa\x55\x30" + body + bytes([crc & 0xFF, crc >> 8])


def tacp_frames(data):
    """The frames in `data` (what the device sent) as [(sub, seq, payload)];
    raises ValueError for anything else or a bad CRC."""
    out = []
    i = 0
    while i < len(data):
        if data[i : i + 3] != b"\xaa\x55\x30" or len(data) < i + 9:
            raise ValueError("not a frame at %d: %r" % (i, data[i : i + 12]))
        n = data[i + 5] | (data[i + 6] << 8)
        end = i + 7 + n
        if len(data) < end + 2 or tacp_crc(data[i + 3 : end]) != data[end] | (data[end + 1] << 8):
            raise ValueError("bad frame at %d" % i)
        out.append((data[i + 3], data[i + 4], bytes(data[i + 7 : end])))
        i = end + 2
    return out


def tacp_call(bentoclaw_module, sub, payload=b"", seq=1):
    """One request through bentoclaw.tacp(): its one answer as (sub, text)."""
    got = tacp_frames(bentoclaw_module.tacp(tacp_frame(sub, payload, seq)))
    if len(got) != 1 or got[0][1] != seq:
        raise ValueError("not one answer with seq %d: %r" % (seq, got))
    return got[0][0], str(got[0][2], "utf-8")
