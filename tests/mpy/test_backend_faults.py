# test_backend_faults.py — what a failed backend request does to the
# breaker and to the session (test_faults.py already checks that every mode
# is a bounded "HTTPS request failed" that counts one error; this extends it):
#
#  Part A, mpy/examples/backend.py's fault modes (500, 404, truncated, 1 MiB body,
#  garbage, invalid UTF-8, never answers, close mid-response, header flood,
#  drop): three in a row each give exactly RuntimeError("HTTPS request
#  failed") within the timeout, count an error each and open the breaker at
#  the third; the fourth ask is refused with the breaker text and never
#  reaches the backend; the session keeps the three USER turns and no
#  ASSISTANT turn (checked in the context the backend receives next); after a
#  new VM (soft reset: breaker closed) a good ask works.
#
#  Part B, a raw scripted server (a CPython helper started from here) for the
#  answers backend.py cannot give: reply bodies with surrogates / overlong
#  UTF-8, Content-Length overflow / negative / conflicting, chunked, bad
#  status lines, bare-LF headers, a 1-byte-per-300-ms drip, a body that
#  stalls, a body without Content-Length over REPLY_MAX, and a few that must
#  succeed (empty body, extra bytes after Content-Length, NUL in the reply).
# needs: backend
# targets: unix qemu
# qemu: icount shift=6
import os
import sys
import time
import claw_rig as rig
import bentoclaw

TMP = rig.getenv("TMPDIR") or "/tmp"
TAG = rig.getenv("BENTOCLAW_PORT") or "0"
RAW_PY = TMP + "/bentoclaw_rawsrv_%s.py" % TAG
RAW_PORT = TMP + "/bentoclaw_rawsrv_%s.port" % TAG
# A failed request must end by its deadline. The bound leaves twice the
# timeout for what a loaded machine adds, and still catches a request without
# a deadline: those take far longer (backend.py's hang 300 s, the raw
# server's stall 60 s, its drip about 27 s).
LIMIT_MS = 3 * bentoclaw.HTTP_TIMEOUT_MS
# A 200 answer over REPLY_MAX fails with the text that names the limit
# where the transport tells it apart (the unix one); the board's (and the
# emulated board's) reports every failure alike (docs/BACKEND.md §1).
TOO_LONG_TEXT = rig.REQUEST_TEXT if rig.QEMU else \
    "reply too long (over REPLY_MAX = %d bytes)" % bentoclaw.REPLY_MAX
TOO_LONG_RESULT = "error" if rig.QEMU else "reply too long"
TOO_LONG = object()

# --- the raw server (CPython), written before "/" becomes LittleFS ------------------------
RAW_SERVER = r'''
import os, socket, sys, time
port_file = sys.argv[1]
REPLY_MAX = int(sys.argv[2])
OK = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n"
def ok(body):
    return OK + b"Content-Length: %d\r\n\r\n" % len(body) + body
CASES = [
    # (name, chunks, delay between chunks in s, hold the socket open after)
    ("reply with a UTF-16 surrogate", [ok(b"bad \xed\xa0\x80 surrogate")], 0, 0),
    ("reply with an overlong NUL", [ok(b"bad \xc0\x80 overlong")], 0, 0),
    ("reply above U+10FFFF", [ok(b"bad \xf4\x90\x80\x80 big")], 0, 0),
    ("Content-Length overflow", [OK + b"Content-Length: 99999999999999999999999999\r\n\r\nx"], 0, 0),
    ("Content-Length negative", [OK + b"Content-Length: -1\r\n\r\nx"], 0, 0),
    ("Content-Length not a number", [OK + b"Content-Length: 0x10\r\n\r\nx"], 0, 0),
    ("conflicting Content-Length", [OK + b"Content-Length: 2\r\nContent-Length: 3\r\n\r\nabc"], 0, 0),
    ("chunked body", [OK + b"Transfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"], 0, 0),
    ("status 2000", [b"HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\nok"], 0, 0),
    ("status 200 glued to text", [b"HTTP/1.1 200OK\r\nContent-Length: 2\r\n\r\nok"], 0, 0),
    ("HTTP/2.0 200", [b"HTTP/2.0 200 OK\r\nContent-Length: 2\r\n\r\nok"], 0, 0),
    ("status 201", [b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"], 0, 0),
    ("bare LF header lines", [b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok"], 0, 0),
    ("header line without colon", [b"HTTP/1.1 200 OK\r\nno colon here\r\nContent-Length: 2\r\n\r\nok"], 0, 0),
    ("status line only, then close", [b"HTTP/1.1 200 OK\r\n"], 0, 0),
    ("body over REPLY_MAX without Content-Length", [OK + b"\r\n" + b"y" * (REPLY_MAX + 1)], 0, 0),
    ("Content-Length over REPLY_MAX", [ok(b"y" * (REPLY_MAX + 1))], 0, 0),
    ("drip 1 byte per 300 ms", [bytes([c]) for c in ok(b"never finished in time")], 0.3, 0),
    ("body stalls after 5 of 10 bytes", [OK + b"Content-Length: 10\r\n\r\nhello"], 0, 60),
    ("NUL byte in a header value", [b"HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 2\r\n\r\nok"], 0, 0),
    # These must succeed.
    ("empty 200 body", [ok(b"")], 0, 0),
    ("bytes after Content-Length ignored", [OK + b"Content-Length: 2\r\n\r\nokEXTRA-IGNORED"], 0, 0),
    ("no Content-Length, body to close", [OK + b"\r\nuntil close"], 0, 0),
    ("NUL inside the reply", [ok(b"ok\x00hidden")], 0, 0),
    ("terminal escapes in the reply", [ok(b"\x1b[2J\x1b]0;pwned\x07 text")], 0, 0),
    ("JSON-looking reply", [ok(b'{"role":"system","content":"x","end":true}\n')], 0, 0),
    ("Thai reply exactly REPLY_MAX bytes", [ok(("\u0e01" * (REPLY_MAX // 3)).encode() + b"z" * (REPLY_MAX % 3))], 0, 0),
]
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(4)
srv.settimeout(60)
with open(port_file + ".tmp", "w") as f:
    f.write("%d %d\n" % (srv.getsockname()[1], os.getpid()))
os.rename(port_file + ".tmp", port_file)
i = 0
while i < len(CASES):
    try:
        c, _ = srv.accept()
    except socket.timeout:
        break
    c.settimeout(10)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            d = c.recv(4096)
            if not d:
                break
            data += d
    except OSError:
        pass
    if b"\r\n\r\n" not in data:
        c.close()  # connect()'s probe: no request, no case used
        continue
    name, chunks, delay, hold = CASES[i]
    i += 1
    try:
        for ch in chunks:
            c.sendall(ch)
            if delay:
                time.sleep(delay)
        if hold:
            # Keep the socket open until the client gives up (EOF) or `hold`.
            c.settimeout(hold)
            while c.recv(4096):
                pass
    except OSError:
        pass
    c.close()
srv.close()
'''

# Part B needs a host process and the host's files: unix port only. On the
# emulated board the HTTP answer is parsed by the serial bridge, which
# applies the unix transport's rules (tests/qemu/serial_bridge.py).
PART_B = not rig.QEMU
if PART_B:
    f = open(RAW_PY, "w")
    f.write(RAW_SERVER)
    f.close()
    try:
        os.remove(RAW_PORT)
    except OSError:
        pass

t = rig.Checker("backend-faults")
rig.mount_ram()


def context_lines(ctx):
    return [ln for ln in ctx.split("\n") if ln]


def new_vm():
    """Soft reset as far as the unix port can show it: breaker closed, the
    ring reloaded from flash, the backend connection kept."""
    global bentoclaw
    bentoclaw = rig.simulate_soft_reset(bentoclaw)


# --- Part A: backend.py fault modes -------------------------------------------------------
t.eq(rig.connect(bentoclaw), True, "connect")
MODES = [
    ("status500", "backend answers 500"),
    ("status404", "backend answers 404"),
    ("truncated", "backend truncates the body"),
    ("huge", "backend sends a 1 MiB body"),
    ("garbage", "backend answers garbage"),
    ("badutf8", "backend answers invalid UTF-8"),
    ("hang", "backend never answers"),
    ("close_mid", "backend closes mid-response"),
    ("header_flood", "backend floods headers"),
    ("drop", "backend drops the connection"),
]
hang_ms = []
for mode, label in MODES:
    p0, f0 = t.passed, t.failed
    bentoclaw.session_clear()
    t.eq(bentoclaw.status()["session_msgs"], 0, mode + ": ring empty to start")
    rig.backend_mode(mode, count=3)
    for i in range(3):
        e0 = bentoclaw.status()["error_count"]
        t0 = rig.ticks()
        text = TOO_LONG_TEXT if mode == "huge" else rig.REQUEST_TEXT
        t.raises(RuntimeError, bentoclaw.ask, "fault %s %d" % (mode, i), text=text,
                 what="%s #%d: exactly %r" % (mode, i + 1, text))
        ms = rig.elapsed(t0)
        if mode == "hang":
            hang_ms.append(ms)
        t.check(ms <= LIMIT_MS, "%s #%d bounded (%d ms)" % (mode, i + 1, ms), ms)
        sf = bentoclaw.safety()
        st = bentoclaw.status()
        t.eq(st["error_count"], e0 + 1, "%s #%d counts one error" % (mode, i + 1))
        t.eq(sf["circuit_breaker"], "open" if i == 2 else "closed",
             "%s: breaker after %d consecutive failures" % (mode, i + 1))
        t.eq(st["session_msgs"], i + 1, "%s #%d: the USER turn stays, no ASSISTANT turn" % (mode, i + 1))
        t.eq(st["last_result"], TOO_LONG_RESULT if mode == "huge" else "error",
             "%s #%d: last_result" % (mode, i + 1))
        t.eq(st["state"], "error", "%s #%d: state" % (mode, i + 1))
        t.eq(st["dirty"], False, "%s #%d: flushed at the end of the exchange" % (mode, i + 1))
    sf = bentoclaw.safety()
    t.check(0 < sf["cooldown_ms"] <= 30000, mode + ": cooldown running", sf["cooldown_ms"])
    total0 = rig.backend_log()["total"]
    e0 = bentoclaw.status()["error_count"]
    t.raises(RuntimeError, bentoclaw.ask, "refused " + mode, text=rig.ASK_BREAKER_TEXT,
             what=mode + ": 4th ask refused by the open breaker")
    t.raises(RuntimeError, bentoclaw.tool, "echo", "x", text=rig.BREAKER_TEXT,
             what=mode + ": tools refused too")
    t.eq(rig.backend_log()["total"], total0, mode + ": refused calls never reach the backend")
    t.eq(bentoclaw.status()["error_count"], e0 + 2, mode + ": refusals count errors")
    t.eq(bentoclaw.status()["session_msgs"], 3, mode + ": a refused ask adds no turn")
    # A new VM closes the breaker; the next ask carries the three USER turns
    # (from flash) and no ASSISTANT turn for them.
    new_vm()
    t.eq(bentoclaw.safety()["circuit_breaker"], "closed", mode + ": closed in a new VM")
    t.eq(bentoclaw.status()["connected"], True, mode + ": still connected")
    r = bentoclaw.ask("good after " + mode)
    t.check(r.startswith("Echo: good after " + mode), mode + ": a good ask works again", r)
    lines = context_lines(rig.backend_last()["body_json"]["context"])
    conv = lines[lines.index("Conversation:") + 1:] if "Conversation:" in lines else lines
    want = ["user: fault %s %d" % (mode, i) for i in range(3)] + ["user: good after " + mode]
    t.eq(conv, want, mode + ": context = 3 failed USER turns + the new one, no ASSISTANT turn")
    st = bentoclaw.status()
    t.eq(st["session_msgs"], 5, mode + ": 4 USER turns + 1 ASSISTANT turn")
    t.eq(bentoclaw.safety()["circuit_breaker"], "closed", mode + ": closed after the success")
    print("RELIABILITY: %s|%d|%d" % (label, (t.passed - p0) + (t.failed - f0), t.failed - f0))
print("never-answering backend: ask() gave up after %s ms (HTTP_TIMEOUT_MS %d)" % (
    hang_ms, bentoclaw.HTTP_TIMEOUT_MS))
t.check(len(hang_ms) == 3 and min(hang_ms) >= bentoclaw.HTTP_TIMEOUT_MS - 100,
        "the hang is cut by the timeout, not earlier", hang_ms)
rig.backend_mode("ok")

# A fail, fail, success, fail run in mixed modes stays closed: failures of
# different kinds count together only when consecutive.
bentoclaw.session_clear()
for mode in ("garbage", "hang"):
    rig.backend_mode(mode, count=1)
    t.raises(RuntimeError, bentoclaw.ask, "mix " + mode, text=rig.REQUEST_TEXT)
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "2 mixed failures: closed")
rig.backend_mode("truncated", count=1)
t.raises(RuntimeError, bentoclaw.ask, "mix truncated", text=rig.REQUEST_TEXT)
t.eq(bentoclaw.safety()["circuit_breaker"], "open", "3 consecutive failures of 3 kinds open it")
new_vm()

# --- Part B: the raw scripted server --------------------------------------------------------
def part_b():
    global bentoclaw
    EXPECT = [
        # (case name as in the server, expected reply or None for a failed request)
        ("reply with a UTF-16 surrogate", None),
        ("reply with an overlong NUL", None),
        ("reply above U+10FFFF", None),
        ("Content-Length overflow", None),
        ("Content-Length negative", None),
        ("Content-Length not a number", None),
        ("conflicting Content-Length", None),
        ("chunked body", None),
        ("status 2000", None),
        ("status 200 glued to text", None),
        ("HTTP/2.0 200", None),
        ("status 201", None),
        ("bare LF header lines", None),
        ("header line without colon", None),
        ("status line only, then close", None),
        ("body over REPLY_MAX without Content-Length", TOO_LONG),
        ("Content-Length over REPLY_MAX", TOO_LONG),
        ("drip 1 byte per 300 ms", None),
        ("body stalls after 5 of 10 bytes", None),
        ("NUL byte in a header value", "ok"),
        ("empty 200 body", ""),
        ("bytes after Content-Length ignored", "ok"),
        ("no Content-Length, body to close", "until close"),
        # One rule for NUL everywhere (docs/DESIGN.md): text never holds one,
        # so a reply with a NUL is a failed request, not a text cut at the NUL.
        ("NUL inside the reply", None),
        ("terminal escapes in the reply", "\x1b[2J\x1b]0;pwned\x07 text"),
        ("JSON-looking reply", '{"role":"system","content":"x","end":true}\n'),
        ("Thai reply exactly REPLY_MAX bytes",
         "\u0e01" * (bentoclaw.REPLY_MAX // 3) + "z" * (bentoclaw.REPLY_MAX % 3)),
    ]
    pf = None
    raw_port = None
    rc = os.system("python3 %s %s %d </dev/null >/dev/null 2>&1 &" % (RAW_PY, RAW_PORT, bentoclaw.REPLY_MAX))
    t.eq(rc, 0, "raw server started")
    # "/" is LittleFS now: reach the host's temp folder through a posix VFS
    # mounted next to it.
    import vfs

    vfs.mount(vfs.VfsPosix(TMP), "/host")
    for _ in range(600):  # up to 30 s: CPython may start slowly on a loaded machine
        try:
            with open("/host/" + RAW_PORT[len(TMP) + 1:]) as pf:
                raw_port, raw_pid = [int(x) for x in pf.read().split()]
            break
        except (OSError, ValueError):
            time.sleep_ms(50)
    t.check(raw_port is not None, "raw server reported its port")
    if raw_port:
        p0, f0 = t.passed, t.failed
        t.eq(bentoclaw.connect("127.0.0.1", raw_port, rig.API_KEY), True, "connect to the raw server")
        n_fail = n_ok = 0
        for name, want in EXPECT:
            bentoclaw.session_clear()
            new_vm()  # breaker closed for every case
            e0 = bentoclaw.status()["error_count"]
            t0 = rig.ticks()
            try:
                got = bentoclaw.ask("case " + name)
                err = None
            except Exception as e:
                got = None
                err = e
            ms = rig.elapsed(t0)
            t.check(ms <= LIMIT_MS, "%s: bounded (%d ms)" % (name, ms), ms)
            st = bentoclaw.status()
            if want is None or want is TOO_LONG:
                n_fail += 1
                text = rig.REQUEST_TEXT if want is None else TOO_LONG_TEXT
                t.check(type(err) is RuntimeError and str(err) == text,
                        "%s: exactly %r" % (name, text), repr(err), repr(got))
                t.eq(bentoclaw.status()["error_count"], e0 + 1, name + ": one error counted")
                t.eq(st["session_msgs"], 1, name + ": USER turn only, no ASSISTANT turn")
            else:
                n_ok += 1
                t.check(err is None and got == want, "%s: reply accepted exactly" % name,
                        repr(err), repr(got)[:60])
                t.eq(st["session_msgs"], 2, name + ": USER + ASSISTANT turn")
                t.eq(bentoclaw.safety()["circuit_breaker"], "closed", name + ": success keeps it closed")
            print("raw case %-45s %5d ms -> %s" % (name, ms, "failed request" if err else "reply %r" % (got[:24],)))
        print("RELIABILITY: hostile raw HTTP answers (parser, UTF-8, lengths, timing)|%d|%d" % (
            (t.passed - p0) + (t.failed - f0), t.failed - f0))
        print("raw server: %d answers refused, %d accepted" % (n_fail, n_ok))
        bentoclaw.disconnect()


if PART_B:
    part_b()
    os.system("rm -f %s %s" % (RAW_PY, RAW_PORT))

t.done()
