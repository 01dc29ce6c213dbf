# bench_flash.py — bytes programmed to flash by ask(), remember() and
# session_clear(), next to the floor (the bytes of the new JSON lines).
# needs: backend
#
# Not a test_*.py: scripts/perf_report.sh runs it (with a backend from
# mpy/examples/backend.py on BENTOCLAW_PORT) and tables its "BENCH ..." lines.
#
# LittleFS (vfs.VfsLfs2) on a counting RAM block device of 512-byte blocks
# (tests/mpy/claw_rig.py). "Programmed" is the byte count LittleFS hands to
# writeblocks(); erases are counted apart (whole blocks). Mount options come
# from the environment, as a board's _boot.py would choose them:
#   BENCH_READSIZE, BENCH_PROGSIZE, BENCH_LOOKAHEAD (VfsLfs2 defaults 32/32/32),
#   BENCH_MTIME (1 = MicroPython's default mtime attribute on every file),
#   BENCH_EXCHANGES (default 100), BENCH_BLOCKS (default 256 = 128 KiB).
#
# Floors, from the exact line text the session/memory formats write:
#   ask():      {"role":"user","content":"<prompt>"}\n
#               {"role":"assistant","content":"<reply>","end":true}\n
#   remember(): {"key":"<key>","value":"<value>"}\n
#   session_clear(): no line (a delete; the floor is 0).
# The model of the lines (escaping, 255-byte cut on a character boundary) is
# checked against the session file itself after every exchange.
#
# The alternative design, rewriting the whole ring at every flush (tmp file +
# rename), is replayed on a second, identical LittleFS mounted at /alt: after
# each exchange the exact bytes of the ring file (the 10 newest lines) are
# written to /alt/.bentoclaw_session.tmp and renamed over
# /alt/.bentoclaw_session; its block device counts what that costs.

import os
import sys
import vfs
import claw_rig as rig
import bentoclaw


def env_int(name, default):
    v = os.getenv(name)
    return int(v) if v else default


READSIZE = env_int("BENCH_READSIZE", 32)
PROGSIZE = env_int("BENCH_PROGSIZE", 32)
LOOKAHEAD = env_int("BENCH_LOOKAHEAD", 32)
MTIME = env_int("BENCH_MTIME", 1) != 0
EXCHANGES = env_int("BENCH_EXCHANGES", 100)
BLOCKS = env_int("BENCH_BLOCKS", 256)
MAX_MSGS = 10
MSG_MAX = 255

bad = 0


def fail(*what):
    global bad
    bad += 1
    print("BENCH-FAIL", *what)


class LoggingBlockDev(rig.RamBlockDev):
    """Also keeps (block, offset, bytes) of every program while `log` is a list."""

    def __init__(self, blocks):
        super().__init__(blocks)
        self.log = None

    def writeblocks(self, block, buf, off=None):
        r = super().writeblocks(block, buf, off)
        if r == 0 and self.log is not None:
            self.log.append((block, off or 0, bytes(buf)))
        return r


def is_file_data(block_off, buf, text):
    """Whether a program carries file content: its bytes, less the 0xff
    padding of the last program unit and the CTZ skip-list pointers at the
    start of a block, occur in the file `text`. Metadata commits (tags,
    CRCs, revision counts) do not."""
    end = len(buf)
    while end > 0 and buf[end - 1] == 0xFF:
        end -= 1
    if end == 0:
        return True
    for skip in (0, 4, 8, 12, 16) if block_off == 0 else (0,):
        if skip < end and buf[skip:end] in text:
            return True
    return False


def make_fs(bdev):
    vfs.VfsLfs2.mkfs(bdev, readsize=READSIZE, progsize=PROGSIZE, lookahead=LOOKAHEAD)
    return vfs.VfsLfs2(bdev, readsize=READSIZE, progsize=PROGSIZE, lookahead=LOOKAHEAD, mtime=MTIME)


def mount_root():
    bdev = LoggingBlockDev(BLOCKS)
    fs = make_fs(bdev)
    try:
        vfs.umount("/")
    except OSError:
        pass
    vfs.mount(fs, "/")
    os.chdir("/")
    bdev.reset_counters()
    return bdev


# --- the line formats, byte for byte ----------------------------------------------


def utf8_cut(b, limit):
    """The longest prefix of at most `limit` bytes ending on a character
    boundary (what the core stores: 255 bytes of a message)."""
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


def session_line(role, text, end):
    # The last line of a batch carries the session's statistics (feature
    # `lasting`: "in","out","tin","tout","ctx","n","at") before "end".
    tail = (b"," + stats_fields() + b',"end":true}\n') if end else b"}\n"
    return b'{"role":"' + role + b'","content":' + jstr(utf8_cut(text, MSG_MAX)) + tail


def stats_fields():
    st = bentoclaw.status()
    keys = (("in", "bytes_in"), ("out", "bytes_out"), ("tin", "tokens_in"), ("tout", "tokens_out"),
            ("ctx", "context_bytes"), ("n", "exchanges"), ("at", "last_active"))
    return b",".join(b'"%s":%d' % (k.encode(), st[s]) for k, s in keys)


def batch(msgs):
    return b"".join(session_line(r, t, i == len(msgs) - 1) for i, (r, t) in enumerate(msgs))


def memory_line(key, value):
    return b'{"key":' + jstr(key) + b',"value":' + jstr(value) + b"}\n"


def report(name, n, programmed, floor, erases, extra=""):
    print(
        "BENCH %s n=%d programmed=%d floor=%d erases=%d%s"
        % (name, n, programmed, floor, erases, (" " + extra) if extra else "")
    )


print(
    "BENCH config readsize=%d progsize=%d lookahead=%d mtime=%d block=%d blocks=%d exchanges=%d"
    % (READSIZE, PROGSIZE, LOOKAHEAD, 1 if MTIME else 0, rig.BLOCK_SIZE, BLOCKS, EXCHANGES)
)

# --- ask(): 100 exchanges ------------------------------------------------------------

bdev = mount_root()
alt = rig.RamBlockDev(BLOCKS)
vfs.mount(make_fs(alt), "/alt")
alt.reset_counters()

if not rig.connect(bentoclaw):
    fail("connect to the backend on port", rig.backend_port())
    print("BENCH-RESULT failed")
    sys.exit(1)
# The plain ring this bench models: no automatic compaction (and no daily
# reset crossing 04:00 during the run). Set before the counters start.
bentoclaw.config(auto_compact=False, daily_reset_hour=-1)
ring = [(b"system", b"Connected to TESAIoT backend")]
bentoclaw.flush()
bdev.reset_counters()

PROMPTS = (
    "turn %03d: what is the soil moisture in bed 3?",
    'turn %03d: สวัสดีครับ ช่วยเปิดปั๊มน้ำ "zone A" 5 นาที',
    "turn %03d: summarise today's alerts\nand the last error",
    "turn %03d: ok",
)

tot = dict(programmed=0, floor=0, erases=0)
app = dict(n=0, programmed=0, floor=0, erases=0)
cmp_ = dict(n=0, programmed=0, floor=0, erases=0)
alt_tot = dict(programmed=0, floor=0, erases=0)
split = dict(meta=0, data=0, data_append=0, meta_append=0)
per = []
for i in range(EXCHANGES):
    prompt = PROMPTS[i % len(PROMPTS)] % i
    b0, e0 = bdev.bytes_written, bdev.erases
    bdev.log = []
    reply = bentoclaw.ask(prompt)
    log, bdev.log = bdev.log, None
    dp, de = bdev.bytes_written - b0, bdev.erases - e0
    new = [(b"user", prompt.encode()), (b"assistant", reply.encode())]
    ring = (ring + new)[-MAX_MSGS:]
    floor = len(batch(new))
    raw = rig.read_file(rig.SESSION_FILE) or b""
    whole = batch(ring)
    compacted = raw == whole
    if not raw.endswith(batch(new)):
        fail("exchange", i, "session file does not end with the modelled lines")
    tot["programmed"] += dp
    tot["floor"] += floor
    tot["erases"] += de
    data = sum(len(b) for blk, off, b in log if is_file_data(off, b, raw))
    split["data"] += data
    split["meta"] += dp - data
    if not compacted:
        split["data_append"] += data
        split["meta_append"] += dp - data
    d = cmp_ if compacted else app
    d["n"] += 1
    d["programmed"] += dp
    d["floor"] += floor
    d["erases"] += de
    per.append(dp)
    # The alternative: the whole ring through a temp file and a rename.
    a0, ae0 = alt.bytes_written, alt.erases
    with open("/alt/.bentoclaw_session.tmp", "wb") as f:
        f.write(whole)
    os.rename("/alt/.bentoclaw_session.tmp", "/alt/.bentoclaw_session")
    alt_tot["programmed"] += alt.bytes_written - a0
    alt_tot["erases"] += alt.erases - ae0
    alt_tot["floor"] += len(whole)

report("ask", EXCHANGES, tot["programmed"], tot["floor"], tot["erases"],
       "min=%d max=%d file_data=%d metadata=%d" % (min(per), max(per), split["data"], split["meta"]))
report("ask_append", app["n"], app["programmed"], app["floor"], app["erases"],
       "file_data=%d metadata=%d" % (split["data_append"], split["meta_append"]))
report("ask_compaction", cmp_["n"], cmp_["programmed"], cmp_["floor"], cmp_["erases"])
report("ask_rewrite_alternative", EXCHANGES, alt_tot["programmed"], tot["floor"], alt_tot["erases"], "ring_bytes=%d" % alt_tot["floor"])
bentoclaw.disconnect()
vfs.umount("/alt")

# --- session_clear(): a session file of one exchange and of a full ring ----------------

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
    if rig.read_file(rig.SESSION_FILE) is not None:
        fail("session file left after session_clear")
report("session_clear", clr["n"], clr["programmed"], 0, clr["erases"])
bentoclaw.disconnect()

# --- remember(): a store of 10 keys, then a new key and a replacement ------------------

KEYS = [("name", "สมชาย"), ("city", "Chiang Mai"), ("plant", "durian"), ("bed_count", "12"),
        ("pump", "zone A"), ("lang", "th"), ("wifi", "farm-2g"), ("owner", "Somsri"),
        ("unit", "metric"), ("alert_to", "+66 81 234 5678")]
new_d = dict(n=0, programmed=0, floor=0, erases=0, store=0)
rep_d = dict(n=0, programmed=0, floor=0, erases=0, store=0)
for rep in range(5):
    bdev = mount_root()
    for k, v in KEYS:
        bentoclaw.remember(k, v)
    store = b"".join(memory_line(k.encode(), v.encode()) for k, v in KEYS)
    raw = rig.read_file(rig.MEMORY_FILE) or b""
    if raw != store:
        fail("memory file differs from the modelled lines", raw)
    key, val = "note_%d" % rep, "water bed %d at 06:00" % rep
    b0, e0 = bdev.bytes_written, bdev.erases
    ok = bentoclaw.remember(key, val)
    new_d["n"] += 1
    new_d["programmed"] += bdev.bytes_written - b0
    new_d["erases"] += bdev.erases - e0
    new_d["floor"] += len(memory_line(key.encode(), val.encode()))
    new_d["store"] += len(store) + len(memory_line(key.encode(), val.encode()))
    if not ok:
        fail("remember new key")
    key, val = "city", "Bangkok %d" % rep
    b0, e0 = bdev.bytes_written, bdev.erases
    ok = bentoclaw.remember(key, val)
    rep_d["n"] += 1
    rep_d["programmed"] += bdev.bytes_written - b0
    rep_d["erases"] += bdev.erases - e0
    rep_d["floor"] += len(memory_line(key.encode(), val.encode()))
    rep_d["store"] += len(rig.read_file(rig.MEMORY_FILE) or b"")
    if not ok:
        fail("remember replace")
report("remember_new", new_d["n"], new_d["programmed"], new_d["floor"], new_d["erases"], "store_bytes=%d" % new_d["store"])
report("remember_replace", rep_d["n"], rep_d["programmed"], rep_d["floor"], rep_d["erases"], "store_bytes=%d" % rep_d["store"])

print("BENCH-RESULT", "ok" if bad == 0 else "failed")
sys.exit(1 if bad else 0)
