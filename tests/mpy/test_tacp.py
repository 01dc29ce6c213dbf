# test_tacp.py — TACP, the USB host line protocol (docs/TACP.md):
# bentoclaw.tacp(line) -> one response line.
#  * every command: STATUS, SAFETY, REMEMBER (ok/full/err), RECALL, TOOL, CLEAR;
#  * malformed and hostile lines (over-long, NUL and other control characters,
#    unterminated quotes, bad escapes, unknown commands, empty, only spaces,
#    CR/LF inside, invalid UTF-8, random bytes) get "err ..." and change
#    nothing: errors, session, memory, breaker, trust, quotas;
#  * TOOL runs at USB trust through the gates: a high-risk tool runs while the
#    device is connected over HTTPS (where tool() refuses it); the trust level
#    is restored afterwards, also when the tool raises (Exception,
#    KeyboardInterrupt) or calls connect()/disconnect() itself;
#  * rate limit and breaker answers carry the exact gate texts; a raising
#    tool is a breaker failure (three open the breaker).
# needs: backend
# targets: unix qemu
import claw_rig as rig
import bentoclaw
import json

t = rig.Checker("tacp")
bdev = rig.mount_ram()


def tacp(line):
    r = bentoclaw.tacp(line)
    t.check(isinstance(r, str) and "\n" not in r and "\r" not in r, "one-line str response", repr(r)[:80])
    return r


def snapshot():
    st = bentoclaw.status()
    sf = bentoclaw.safety()
    return (st["session_msgs"], st["errors"], st["dirty"], sf["circuit_breaker"], sf["trust"],
            bentoclaw.recall("name"), bentoclaw.recall("city"),
            tuple(rig.read_file(p) for p in rig.MEMORY_FILES))


# --- STATUS / SAFETY ----------------------------------------------------------------
for cmd in ("STATUS", "status", "Status", "  STATUS  ", "STATUS\n", "STATUS\r\n"):
    r = tacp(cmd)
    try:
        got = json.loads(r)
    except ValueError:
        got = None
    st = bentoclaw.status()
    t.eq(got, dict((k, st[k]) for k in ("state", "connected", "session_msgs", "errors", "dirty", "last_result")),
         "%r is status() as JSON" % cmd)
r = tacp("SAFETY")
sf = bentoclaw.safety()
t.eq(json.loads(r), dict((k, sf[k]) for k in ("circuit_breaker", "cooldown_ms", "trust", "errors")),
     "SAFETY is safety() as JSON")
t.eq(json.loads(r)["trust"], "usb", "resting trust is usb")
t.eq(tacp("STATUS x"), "err usage: STATUS", "STATUS takes no argument")

# --- REMEMBER / RECALL ----------------------------------------------------------------
t.eq(tacp("REMEMBER name Somchai"), "ok", "REMEMBER bare value")
t.eq(bentoclaw.recall("name"), "Somchai", "stored through the library")
t.eq(tacp("RECALL name"), '"Somchai"', "RECALL answers a JSON string")
t.eq(tacp('REMEMBER city "Chiang Mai"'), "ok", "quoted value with a space")
t.eq(json.loads(tacp("RECALL city")), "Chiang Mai", "quoted value round-trips")
t.eq(tacp('remember "my key" "สมชาย \\"ใจดี\\" \\\\o/"'), "ok", "quoted key, Thai, escaped quote and backslash")
t.eq(json.loads(tacp('RECALL "my key"')), 'สมชาย "ใจดี" \\o/', "escapes decoded once")
t.eq(tacp('REMEMBER empty ""'), "ok", "empty value")
t.eq(tacp("RECALL empty"), '""', "empty value recalled")
bentoclaw.remember("ml", "line1\nline2\t\"x\"")
r = tacp("RECALL ml")
t.eq(json.loads(r), "line1\nline2\t\"x\"", "a stored multi-line value comes back on one line")
t.eq(tacp("RECALL nobody"), "err not found", "RECALL of a missing key")
bentoclaw.remember("trap", "err not found")
t.eq(tacp("RECALL trap"), '"err not found"', "a value that reads like an error is still a JSON string")
t.eq(tacp("REMEMBER " + "k" * 32 + " v"), "err key must be 1..31 bytes", "key too long")
t.eq(tacp("REMEMBER " + "k" * 31 + " v"), "ok", "31-byte key")
t.eq(tacp('REMEMBER "" v'), "err key must be 1..31 bytes", "empty key")
t.eq(tacp("REMEMBER k " + "v" * 128), "err value must be 0..127 bytes", "value too long")
t.eq(tacp("REMEMBER k " + "v" * 127), "ok", "127-byte value")
t.eq(tacp("REMEMBER k"), "err usage: REMEMBER <key> <value>", "REMEMBER without value")
t.eq(tacp("REMEMBER k a b"), "err too many arguments", "unquoted value with a space")
t.eq(tacp("RECALL"), "err usage: RECALL <key>", "RECALL without key")
full = None
for i in range(64):
    r = tacp("REMEMBER fill%d %s" % (i, "x" * 100))
    if r != "ok":
        full = r
        break
t.eq(full, "full", "REMEMBER answers 'full' when the store is full (after %d)" % i)
t.eq(tacp("RECALL fill%d" % i), "err not found", "the refused key was not stored")
t.eq(tacp("RECALL name"), '"Somchai"', "a full store keeps what it had")

# --- CLEAR ------------------------------------------------------------------------------
bentoclaw.tool("echo", "a turn")
t.check(bentoclaw.status()["session_msgs"] > 0, "a turn in the ring")
t.eq(tacp("CLEAR"), "ok", "CLEAR")
t.eq(bentoclaw.status()["session_msgs"], 0, "CLEAR empties the ring")
t.eq(tacp("RECALL name"), '"Somchai"', "CLEAR keeps memory")
t.eq(tacp("clear now"), "err usage: CLEAR", "CLEAR takes no argument")

# --- TOOL -------------------------------------------------------------------------------
t.eq(tacp("TOOL echo hi"), '"hi"', "TOOL echo")
t.eq(tacp('TOOL echo "two words"'), '"two words"', "quoted argument")
t.eq(tacp('TOOL echo ""'), '""', "empty argument is an empty str")
t.eq(tacp("TOOL echo"), '""', "no argument: None (echo answers '')")
r = tacp("TOOL uptime")
t.check(r.startswith('"') and json.loads(r).isdigit(), "uptime rendered as the JSON string of its str()", r)
t.eq(tacp("TOOL uptime now"), "err this tool takes no argument", "a built-in's argument check")
t.eq(tacp("TOOL nope"), "err unknown tool", "unknown tool")
t.eq(tacp("TOOL " + "n" * 40), "err unknown tool", "over-long tool name")
t.eq(tacp("TOOL"), "err usage: TOOL <name> [arg]", "TOOL without name")
t.eq(tacp("tool ECHO x"), "err unknown tool", "tool names are case-sensitive")
bentoclaw.register_tool("multi", lambda a: "first line\nsecond\r\n\ttabbed \"q\" \\", rate_per_min=100)
r = tacp("TOOL multi")
t.eq(r, '"first line\\nsecond\\r\\n\\ttabbed \\"q\\" \\\\"', "a multi-line result is escaped onto one line")
t.eq(json.loads(r), "first line\nsecond\r\n\ttabbed \"q\" \\", "and decodes back")
bentoclaw.register_tool("tup", lambda a: (1, "x", None), rate_per_min=100)
t.eq(json.loads(tacp("TOOL tup")), "(1, 'x', None)", "a non-str result is rendered as str(result)")
bentoclaw.register_tool("big", lambda a: "ก" * 1000, rate_per_min=100)
r = json.loads(tacp("TOOL big"))
t.check(len(r.encode()) <= 400 and r == "ก" * len(r), "a large result is cut on a character boundary", len(r))

# --- trust: USB for TACP's tools; the transport's level is not touched ----------------
# A TACP line runs at USB trust as a property of the call, not by borrowing
# the global level: safety() still reports the transport's (https).
bentoclaw.register_tool("peek", lambda a: bentoclaw.safety()["trust"], risk=2, rate_per_min=100)
t.eq(rig.connect(bentoclaw), True, "connect (trust HTTPS)")
t.eq(bentoclaw.safety()["trust"], "https", "trust https while connected")
t.raises(RuntimeError, bentoclaw.tool, "wipe_memory", text=rig.TRUST_TEXT,
         what="tool('wipe_memory') over HTTPS is refused")
t.eq(tacp("TOOL peek"), '"https"', "a TACP tool (risk 2) runs; the transport's level is unchanged")
t.eq(bentoclaw.safety()["trust"], "https", "trust back to https after TACP")
t.eq(tacp("TOOL wipe_memory"), '"True"', "TACP runs the high-risk wipe while connected over HTTPS")
t.eq(bentoclaw.recall("name"), None, "memory wiped by the TACP tool")
t.eq(bentoclaw.safety()["trust"], "https", "trust still https")
t.eq(json.loads(tacp("SAFETY"))["trust"], "https", "SAFETY reports the connection's trust")
t.eq(tacp("TOOL wipe_memory"), '"True"', "second wipe (2/min)")
e0 = bentoclaw.safety()["errors"]
t.eq(tacp("TOOL wipe_memory"), "err " + rig.RATE_TEXT, "third wipe: exact rate-limit text")
t.eq(bentoclaw.safety()["errors"], e0 + 1, "a refusal counts an error")
t.eq(bentoclaw.safety()["trust"], "https", "trust restored after a refusal")


def boom(arg):
    raise ValueError("boom %s\nsecond line" % arg)


def kbd(arg):
    raise KeyboardInterrupt


def leave(arg):
    bentoclaw.disconnect()
    return "left"


def join(arg):
    return rig.connect(bentoclaw)


bentoclaw.register_tool("boom", boom, risk=2, rate_per_min=100)
bentoclaw.register_tool("kbd", kbd, risk=2, rate_per_min=100)
bentoclaw.register_tool("leave", leave, risk=1, rate_per_min=100)
bentoclaw.register_tool("join", join, risk=1, rate_per_min=100)

e0 = bentoclaw.safety()["errors"]
t.eq(tacp("TOOL boom 1"), "err boom 1 second line", "a raising tool: err <exception text>, one line")
t.eq(bentoclaw.safety()["trust"], "https", "trust restored when the tool raised")
t.eq(bentoclaw.safety()["errors"], e0 + 1, "a raising tool counts an error")
t.eq(tacp("TOOL uptime")[0], '"', "a success resets the failure count")
try:
    bentoclaw.tacp("TOOL kbd")
    t.check(False, "KeyboardInterrupt propagates")
except KeyboardInterrupt:
    t.check(True, "KeyboardInterrupt propagates")
t.eq(bentoclaw.safety()["trust"], "https", "trust restored after KeyboardInterrupt")
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "KeyboardInterrupt is no breaker failure")

t.eq(tacp("TOOL leave"), '"left"', "a TACP tool that disconnects")
t.eq(bentoclaw.status()["connected"], False, "disconnected")
t.eq(bentoclaw.safety()["trust"], "usb", "disconnect's USB stands (not the saved https)")
t.eq(tacp("TOOL join"), '"True"', "a TACP tool that connects (from USB)")
t.eq(bentoclaw.status()["connected"], True, "connected")
t.eq(bentoclaw.safety()["trust"], "https", "connect's HTTPS stands (not the saved usb)")
t.raises(RuntimeError, bentoclaw.tool, "peek", text=rig.TRUST_TEXT,
         what="high risk refused afterwards over HTTPS")

# --- malformed and hostile lines: err, nothing changes -------------------------------------
bentoclaw.remember("name", "Somchai")
hostile = [
    ("", "err empty line"),
    (" ", "err empty line"),
    ("      ", "err empty line"),
    ("\r\n", "err empty line"),
    ("\n", "err empty line"),
    ("FOO", "err unknown command"),
    ("STATUSX", "err unknown command"),
    ("REMEMBERX a b", "err unknown command"),
    ("wipe", "err unknown command"),
    ("TOOL echo \"unterminated", "err unterminated quote"),
    ('REMEMBER name "Mallory', "err unterminated quote"),
    ('REMEMBER name "a\\nb"', "err bad escape (only \\\" and \\\\)"),
    ('REMEMBER name "a\\', "err bad escape (only \\\" and \\\\)"),
    ('REMEMBER name "a"b', "err bad quoting"),
    ('REMEMBER name a"b', "err bad quoting"),
    ('REMEMBER name ""x', "err bad quoting"),
    ("REMEMBER name Mallory extra", "err too many arguments"),
    ("TOOL wipe_memory x y", "err too many arguments"),
    ("REMEMBER name Mal\x00lory", "err control character"),
    ("\x00", "err control character"),
    ("CLEAR\x00", "err control character"),
    ("REMEMBER name\tMallory", "err control character"),
    ("REMEMBER name Mal\x1blory", "err control character"),
    ("REMEMBER name Mal\x7flory", "err control character"),
    ("CLEAR\rREMEMBER name Mallory", "err control character"),
    ("CLEAR\nREMEMBER name Mallory", "err control character"),
    ("CLEAR\n\n", "err control character"),
    ("CLEAR\r\n\r\n", "err control character"),
    ("REMEMBER name " + "M" * 600, "err line too long"),
    ("CLEAR" + " " * 600, "err line too long"),
    ("TOOL wipe_memory " + "x" * 65536, "err line too long"),
    (b"REMEMBER name \xff\xfe", "err invalid UTF-8"),
    (b"REMEMBER name \xc0\x80", "err invalid UTF-8"),
    (b"REMEMBER name \xed\xa0\x80", "err invalid UTF-8"),
    (bytearray(b"CLEAR \xe0\xb8"), "err invalid UTF-8"),
    (b"CLEAR\x00\r\n", "err control character"),
]
# A 513-byte line is refused, a 512-byte one is read.
line512 = "REMEMBER name " + '"' + "M" * (512 - 16) + '"'
t.eq(len(line512), 512, "the 512-byte line")
t.eq(tacp(line512), "err value must be 0..127 bytes", "a 512-byte line is parsed")
hostile.append((line512 + " ", "err line too long"))
hostile.append((line512 + "\r\n", "err value must be 0..127 bytes"))

before = snapshot()
losses = 0
for line, want in hostile:
    r = tacp(line)
    ok = t.eq(r, want, "hostile line %r" % (line[:40],))
    if snapshot() != before:
        ok = False
        t.check(False, "state unchanged after %r" % (line[:40],), snapshot(), before)
    losses += 0 if ok else 1
print("RELIABILITY: tacp-malformed-lines|%d|%d" % (len(hostile), losses))

# Random lines over an alphabet of separators, quotes, escapes, controls and
# UTF-8 pieces: never an exception, always one line; an err changes nothing.
import random

random.seed(7)
alphabet = [" ", '"', "\\", "\x00", "\t", "\r", "\n", "\x7f", "a", "Z", "ก", "\u2014", "TOOL", "REMEMBER",
            "RECALL", "wipe_memory", "echo", "name", "\U0001f600"]
cases = 0
losses = 0
for i in range(400):
    n = random.getrandbits(4)
    line = "".join(alphabet[random.getrandbits(5) % len(alphabet)] for _ in range(n))
    cases += 1
    try:
        r = bentoclaw.tacp(line)
    except Exception as e:
        losses += 1
        t.check(False, "random line raised", repr(line), repr(e))
        continue
    if not isinstance(r, str) or "\n" in r or "\r" in r:
        losses += 1
        t.check(False, "random line: one-line str", repr(line), repr(r))
    elif r in ("err " + rig.RATE_TEXT, "err " + rig.TRUST_TEXT, "err " + rig.BREAKER_TEXT):
        before = snapshot()  # a gate refusal of a well-formed TOOL line counts an error
    elif r.startswith("err ") and snapshot() != before:
        losses += 1
        t.check(False, "random err line changed state", repr(line), repr(r))
        before = snapshot()
    else:
        before = snapshot()
t.check(losses == 0, "random lines handled")
print("RELIABILITY: tacp-random-lines|%d|%d" % (cases, losses))

t.raises(TypeError, bentoclaw.tacp, 5, what="tacp(int) is a TypeError")
t.raises(TypeError, bentoclaw.tacp, None, what="tacp(None) is a TypeError")

# --- the breaker counts TACP tool failures ------------------------------------------------
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "breaker closed before")
e0 = bentoclaw.safety()["errors"]
for i in range(3):
    t.eq(tacp("TOOL boom %d" % i), "err boom %d second line" % i, "failing TACP tool #%d" % i)
sf = bentoclaw.safety()
t.eq(sf["circuit_breaker"], "open", "three failing TACP tools open the breaker")
t.eq(sf["errors"], e0 + 3, "each counted an error")
t.eq(sf["trust"], "https", "trust restored throughout")
t.eq(tacp("TOOL echo x"), "err " + rig.BREAKER_TEXT, "breaker refusal with the exact text (em dash)")
t.eq(tacp("TOOL wipe_memory"), "err " + rig.BREAKER_TEXT, "breaker is the first gate (before rate)")
t.eq(json.loads(tacp("SAFETY"))["circuit_breaker"], "open", "SAFETY shows it")
t.eq(tacp("RECALL name"), '"Somchai"', "memory commands still answer")
bentoclaw.disconnect()
t.eq(bentoclaw.safety()["trust"], "usb", "usb after disconnect")
t.done()
