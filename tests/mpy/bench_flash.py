# bench_flash.py — bytes programmed and blocks erased on flash by ask(),
# remember() and session_clear(), next to the floor of each operation.
# needs: backend
#
# Not a test_*.py: scripts/perf_report.sh runs it (with a backend from
# mpy/examples/backend.py on BENTOCLAW_PORT) and tables its "BENCH ..." lines.
#
# LittleFS (vfs.VfsLfs2) on a counting RAM block device (tests/mpy/claw_rig.py).
# "Programmed" is the byte count LittleFS hands to writeblocks(); an erase is
# one ioctl(6) of a whole block; "read" is the byte count of readblocks().
# The geometry comes from the environment:
#   BENCH_BLOCK (default 262144), BENCH_BLOCKS (default 208: 52 MiB),
#   BENCH_PROGSIZE (512), BENCH_READSIZE (512), BENCH_LOOKAHEAD (32),
#   BENCH_MTIME (1: MicroPython's default mtime attribute on every file),
#   BENCH_EXCHANGES (1000), BENCH_SETS (1000; 0: no remember() runs).
# The defaults are the BENTO board's mount (VENDOR-SDK.md §5, issue 22):
# vfs.VfsLfs2(psoc_edge.QSPI_Flash(), progsize=0x200, readsize=0x200) on 208
# erase blocks of 256 KiB (LittleFS's cache is then 2048 B, its inline limit
# 1022 B). The upstream PSoC Edge port's mount is BENCH_BLOCK=4096
# BENCH_PROGSIZE=256 BENCH_READSIZE=4096.
#
# The floor of an operation (issue 12): the new JSON lines it must persist,
# in the seed's plain form, rounded up to whole pages, plus one page of
# metadata commit.
#   ask():      {"role":"user","content":"<prompt>"}\n
#               {"role":"assistant","content":"<reply>"}\n
#               (floor_all also counts a compaction's summary line,
#                {"role":"summary","content":"<summary>"}\n)
#   remember(): {"key":"<key>","value":"<value>"}\n
# After each of the first 100 operations, every 10th after them and the
# last, the files are read back with claw_rig's own reader of the layout
# (rig.session_on_flash(), rig.store_on_flash()) and compared with the
# module's view: the figures are of a layout that holds the data. (Each
# read-back replays the metadata log as the operation does: after every
# one of 1,000 operations it would double the run's time.)

import os
import sys
import vfs
import claw_rig as rig
import bentoclaw


def env_int(name, default):
    v = os.getenv(name)
    return int(v) if v else default


BLOCK = env_int("BENCH_BLOCK", 256 * 1024)
BLOCKS = env_int("BENCH_BLOCKS", 208)
PROGSIZE = env_int("BENCH_PROGSIZE", 512)
READSIZE = env_int("BENCH_READSIZE", 512)
LOOKAHEAD = env_int("BENCH_LOOKAHEAD", 32)
MTIME = env_int("BENCH_MTIME", 1) != 0
EXCHANGES = env_int("BENCH_EXCHANGES", 1000)
SETS = env_int("BENCH_SETS", 1000)
PAGE = PROGSIZE
MSG_MAX = 255

bad = 0


def fail(*what):
    global bad
    bad += 1
    print("BENCH-FAIL", *what)


_dev = None


def mount_root():
    """A fresh file system at "/" on a device of zeros, as after power-on.
    The one device of the run is reused: a stale reference to a previous
    one (a closed file found by the conservative GC) could otherwise keep
    52 MiB alive."""
    global _dev
    try:
        vfs.umount("/")
    except OSError:
        pass
    if _dev is None:
        _dev = rig.RamBlockDev(BLOCKS, block_size=BLOCK)
    else:
        zero = bytes(BLOCK)
        for b in range(BLOCKS):
            _dev.mv[b * BLOCK : (b + 1) * BLOCK] = zero
        zero = None
    bdev = _dev
    vfs.VfsLfs2.mkfs(bdev, readsize=READSIZE, progsize=PROGSIZE, lookahead=LOOKAHEAD)
    fs = vfs.VfsLfs2(bdev, readsize=READSIZE, progsize=PROGSIZE, lookahead=LOOKAHEAD, mtime=MTIME)
    vfs.mount(fs, "/")
    os.chdir("/")
    bdev.reset_counters()
    return bdev


def utf8_cut(b, limit):
    if len(b) <= limit:
        return b
    n = limit
    while n > 0 and (b[n] & 0xC0) == 0x80:
        n -= 1
    return b[:n]


def jstr(b):
    out = bytearray(b'"')
    for c in b:
        if c == 0x22:
            out += b'\\"'
        elif c == 0x5C:
            out += b"\\\\"
        elif c == 0x0A:
            out += b"\\n"
        elif c == 0x0D:
            out += b"\\r"
        elif c == 0x09:
            out += b"\\t"
        elif c < 0x20:
            out += b"\\u00%02x" % c
        else:
            out.append(c)
    out += b'"'
    return bytes(out)


def seed_line(role, text):
    return b'{"role":"' + role.encode() + b'","content":' + jstr(utf8_cut(text.encode(), MSG_MAX)) + b"}\n"


def pair_line(key, value):
    return b'{"key":' + jstr(key.encode()) + b',"value":' + jstr(value.encode()) + b"}\n"


def floor(nbytes):
    """New bytes rounded up to pages, plus one page of metadata commit."""
    return ((nbytes + PAGE - 1) // PAGE) * PAGE + PAGE


def report(name, n, programmed, fl, erases, extra=""):
    print("BENCH %s n=%d programmed=%d floor=%d erases=%d%s"
          % (name, n, programmed, fl, erases, (" " + extra) if extra else ""))


def reads(per_op):
    """The read= and read_max= fields: bytes read in all, and by the worst operation."""
    return "read=%d read_max=%d" % (sum(per_op), max(per_op) if per_op else 0)


def checked(i, n):
    """Whether operation i of n is read back (see the header)."""
    return i < 100 or i % 10 == 9 or i == n - 1


def ring_now():
    return [(r, t) for r, t in bentoclaw.session()]


print("BENCH config block=%d blocks=%d progsize=%d readsize=%d lookahead=%d mtime=%d exchanges=%d sets=%d workload=%s compact_before_drop=%d"
      % (BLOCK, BLOCKS, PROGSIZE, READSIZE, LOOKAHEAD, 1 if MTIME else 0, EXCHANGES, SETS,
         os.getenv("BENCH_WORKLOAD") or "short", env_int("BENCH_COMPACT_BEFORE_DROP", 0)))

# --- ask(): EXCHANGES exchanges, default configuration ----------------------------------

bdev = mount_root()
if not rig.connect(bentoclaw):
    fail("connect to the backend on port", rig.backend_port())
    print("BENCH-RESULT failed")
    sys.exit(1)
# Only the daily reset is off (the run must not cross 04:00 and start a new
# session halfway); automatic compaction stays on, as by default. Written
# before the counters start.
bentoclaw.config(daily_reset_hour=-1)
# BENCH_COMPACT_BEFORE_DROP=1: the opt-in compaction before the ring would
# drop a turn (a summary every second exchange once the ring is full).
if env_int("BENCH_COMPACT_BEFORE_DROP", 0):
    bentoclaw.config(compact_before_drop=True)
bentoclaw.flush()
bdev.reset_counters()

# BENCH_WORKLOAD=short (default): about 137 bytes of new JSON lines per
# exchange, as the issue measured; "long": about 200 (Thai, quotes,
# newlines). The bundled backend answers "Echo: <prompt> (context: ...)".
if os.getenv("BENCH_WORKLOAD") == "full":
    # Messages near the 255-byte cut: the context passes the default
    # compaction threshold (80 % of 4096 bytes) and compactions happen.
    PROMPTS = ("t%03d: " + "describe the irrigation schedule for every bed, " * 4,)
elif os.getenv("BENCH_WORKLOAD") == "long":
    PROMPTS = (
        "turn %03d: what is the soil moisture in bed 3?",
        'turn %03d: สวัสดีครับ ช่วยเปิดปั๊ม "zone A"',
        "turn %03d: summarise today's alerts\nand the last error",
        "turn %03d: ok",
    )
else:
    PROMPTS = ("t%03d: bed 3 moisture?", "t%03d: pump on", "t%03d: alerts?", "t%03d: ok")
tot = dict(programmed=0, floor=0, floor_all=0, erases=0, lines=0)
cmp_ = dict(n=0, programmed=0, floor_all=0, erases=0)
per = []
per_read = []
for i in range(EXCHANGES):
    prompt = PROMPTS[i % len(PROMPTS)] % i
    before = ring_now()
    b0, e0, r0 = bdev.bytes_written, bdev.erases, bdev.bytes_read
    reply = bentoclaw.ask(prompt)
    dp, de = bdev.bytes_written - b0, bdev.erases - e0
    per_read.append(bdev.bytes_read - r0)
    after = ring_now()
    lines = len(seed_line("user", prompt)) + len(seed_line("assistant", reply))
    summary = after[0][1] if after and after[0][0] == "summary" else None
    compacted = summary is not None and (not before or before[0] != after[0])
    lines_all = lines + (len(seed_line("summary", summary)) if compacted else 0)
    tot["programmed"] += dp
    tot["erases"] += de
    tot["floor"] += floor(lines)
    tot["floor_all"] += floor(lines_all)
    tot["lines"] += lines
    per.append(dp)
    if compacted:
        cmp_["n"] += 1
        cmp_["programmed"] += dp
        cmp_["erases"] += de
        cmp_["floor_all"] += floor(lines_all)
    if checked(i, EXCHANGES):
        got = rig.session_on_flash()
        if got != after:
            fail("exchange", i, "the files read back", got, "not the ring", after)
report("ask", EXCHANGES, tot["programmed"], tot["floor"], tot["erases"],
       "floor_all=%d lines=%d compactions=%d min=%d max=%d %s"
       % (tot["floor_all"], tot["lines"], cmp_["n"], min(per), max(per), reads(per_read)))
report("ask_compaction", cmp_["n"], cmp_["programmed"], cmp_["floor_all"], cmp_["erases"])
bentoclaw.disconnect()

# --- session_clear(): a session of one exchange and of a full ring -----------------------

clr = dict(n=0, programmed=0, erases=0)
if not rig.connect(bentoclaw):
    fail("reconnect")
for rep in range(5):
    for j in range(1 + 4 * (rep % 2)):
        bentoclaw.ask("clear-%d-%d" % (rep, j))
    b0, e0 = bdev.bytes_written, bdev.erases
    bentoclaw.session_clear()
    clr["n"] += 1
    clr["programmed"] += bdev.bytes_written - b0
    clr["erases"] += bdev.erases - e0
    if rig.session_exists():
        fail("session files left after session_clear")
report("session_clear", clr["n"], clr["programmed"], 0, clr["erases"])
bentoclaw.disconnect()

# --- remember(): stores of 10, 20 and 30 keys, SETS replacements each ---------------------

VALUES = ("สมชาย", "Chiang Mai", "durian", "12", "zone A", "th", "farm-2g", "Somsri", "metric",
          "+66 81 234 5678")
for keys in (10, 20, 30) if SETS else ():
    bdev = mount_root()
    store = [("key_%02d" % k, VALUES[k % len(VALUES)]) for k in range(keys)]
    # A store in the seed's plain form, as a device that ran the vendor
    # library leaves it.
    with open(rig.MEMORY_FILE, "wb") as f:
        f.write(b"".join(pair_line(k, v) for k, v in store))
    bdev.reset_counters()
    d = dict(programmed=0, floor=0, erases=0, worst=0)
    per_read = []
    for i in range(SETS):
        k = (i * 7) % keys
        key, value = store[k][0], "%s %d" % (VALUES[i % len(VALUES)], i)
        b0, e0, r0 = bdev.bytes_written, bdev.erases, bdev.bytes_read
        if not bentoclaw.remember(key, value):
            fail("remember", key)
        dp = bdev.bytes_written - b0
        per_read.append(bdev.bytes_read - r0)
        d["programmed"] += dp
        d["erases"] += bdev.erases - e0
        d["floor"] += floor(len(pair_line(key, value)))
        d["worst"] = max(d["worst"], dp)
        store[k] = (key, value)
        if checked(i, SETS):
            got = [(k2, v2) for k2, v2, _ in rig.store_on_flash()]
            if got != store:
                fail("remember", i, "the files read back", got, "not the store", store)
    report("remember_%d" % keys, SETS, d["programmed"], d["floor"], d["erases"],
           "worst=%d %s" % (d["worst"], reads(per_read)))

print("BENCH-RESULT", "ok" if bad == 0 else "failed")
sys.exit(1 if bad else 0)
