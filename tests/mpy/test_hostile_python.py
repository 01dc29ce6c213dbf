# test_hostile_python.py — hostile input through every Python door of
# bentoclaw: 1 MiB strings, embedded NUL, non-str types (bytes, int, None,
# list, bytearray, objects with __str__, a str subclass), str objects holding
# malformed UTF-8 (MicroPython's bytes.decode() accepts overlong forms and
# surrogates), Thai text cut at every character boundary (round-trips, the
# 31/32-byte key, 127/128-byte value and 255-byte ring limits), and hostile
# tool handlers. Every refusal is checked by its exact text; nothing may
# crash, hang or get stored.
#
# The ring is read back from the session files themselves (the base and its
# slots, by claw_rig's own reader of the layout) after each tool call:
# tool() flushes at its end, so the newest entry on flash is the TOOL turn.
# targets: unix qemu
import gc
import sys
import claw_rig as rig
import bentoclaw

t = rig.Checker("hostile-python")
rig.mount_ram()

# The emulated board's heap is 384 KiB: 64 KiB strings there.
MB = 64 * 1024 if rig.QEMU else 1024 * 1024
KEY_TEXT = "key must be 1..31 bytes (CLAW_MEM_KEY_MAX)"
VAL_TEXT = "value must be 0..127 bytes (CLAW_MEM_VAL_MAX)"
NAME_TEXT = "tool name must be 1..31 bytes (CLAW_RATE_NAME_MAX)"
PROMPT_TEXT = "prompt must be 1..%d bytes (PROMPT_MAX)" % bentoclaw.PROMPT_MAX
HOST_TEXT = "host must be 1..63 bytes of printable ASCII"
APIKEY_TEXT = "api_key must be 1..127 bytes of printable ASCII"
NOT_CONNECTED = rig.NOT_CONNECTED_TEXT


# --- helpers (local to this test) ---------------------------------------------------------

_sections = []


def section(name):
    _sections.append([name, t.passed, t.failed])


def end_section():
    name, p0, f0 = _sections.pop()
    cases = (t.passed - p0) + (t.failed - f0)
    print("RELIABILITY: %s|%d|%d" % (name, cases, t.failed - f0))


def records():
    """(role, content) of the ring as read back from the session files."""
    return rig.session_on_flash()


def last_record():
    r = records()
    return r[-1] if r else None


def cut255(text):
    """The longest prefix of text on a character boundary with <= 255 bytes."""
    b = text.encode()
    if len(b) <= 255:
        return text
    n = 255
    while n > 0 and (b[n] & 0xC0) == 0x80:
        n -= 1
    return b[:n].decode()


def state_now():
    """The breaker's state and the error count, to compare with later."""
    return bentoclaw.safety()["circuit_breaker"], bentoclaw.status()["error_count"]


def unchanged_state(s0, what):
    breaker0, errors0 = s0
    s1 = bentoclaw.safety()
    t.eq(s1["circuit_breaker"], breaker0, what + ": breaker untouched")
    t.eq(bentoclaw.status()["error_count"], errors0, what + ": no error counted")
    t.eq(s1["trust_level"], "usb", what + ": trust still USB")


# A tool with a huge limit, so the boundary sweeps are not rate limited.
bentoclaw.register_tool("say", lambda a: a, 0, 65535)

# --- 1. huge strings (1 MiB) --------------------------------------------------------------
section("Python API 1 MiB strings")
s0 = state_now()
# One 1 MiB string at a time: the unix port's heap is 2 MiB.
for unit in ("x", "ก", "😀"):
    b = None
    gc.collect()
    b = unit * (MB // len(unit.encode()))
    w = " (%r x %d)" % (unit, len(b))
    t.raises(ValueError, bentoclaw.ask, b, text=PROMPT_TEXT, what="1 MiB prompt" + w)
    t.raises(ValueError, bentoclaw.remember, b, "v", text=KEY_TEXT, what="1 MiB key" + w)
    t.raises(ValueError, bentoclaw.remember, "k", b, text=VAL_TEXT, what="1 MiB value" + w)
    t.raises(ValueError, bentoclaw.remember, b, b, text=KEY_TEXT, what="1 MiB key and value" + w)
    t.raises(ValueError, bentoclaw.recall, b, text=KEY_TEXT, what="1 MiB recall key" + w)
    t.raises(ValueError, bentoclaw.tool, b, text=NAME_TEXT, what="1 MiB tool name" + w)
    t.raises(ValueError, bentoclaw.register_tool, b, print, text=NAME_TEXT, what="1 MiB register name" + w)
    host_text = HOST_TEXT if unit == "x" else HOST_TEXT  # non-ASCII fails the same check
    t.raises(ValueError, bentoclaw.connect, b, 80, "k", text=host_text, what="1 MiB host" + w)
    t.raises(ValueError, bentoclaw.connect, "127.0.0.1", 80, b, text=APIKEY_TEXT, what="1 MiB api_key" + w)
    # A 1 MiB tool argument and result: the call works, the TOOL turn is cut
    # to 255 bytes on a character boundary.
    r = bentoclaw.tool("say", b)
    t.check(r is b, "the handler's 1 MiB result comes back as is" + w)
    rec = last_record()
    t.eq(rec, ("tool", cut255("say: " + b[:300])), "1 MiB result: TOOL turn cut to 255 bytes" + w)
    t.check(rec is not None and len(rec[1].encode()) == {"x": 255, "ก": 254, "😀": 253}[unit],
            "bytes kept for a 1 MiB result" + w, rec and len(rec[1].encode()))
    b = r = None
gc.collect()
t.eq(bentoclaw.recall("k"), None, "nothing stored by the refused remember()")
t.eq(len([x for x in records() if x[0] != "tool"]), 0, "no turn but the TOOL turns")
unchanged_state(s0, "1 MiB arguments")
# The prompt limit itself: PROMPT_MAX passes the length check (and then
# needs a connection), PROMPT_MAX + 1 does not.
e0 = bentoclaw.status()["error_count"]
t.raises(RuntimeError, bentoclaw.ask, "p" * bentoclaw.PROMPT_MAX, text=NOT_CONNECTED,
         what="prompt of exactly PROMPT_MAX bytes passes the length check")
t.eq(bentoclaw.status()["error_count"], e0 + 1, "ask() without a connection counts an error")
t.raises(ValueError, bentoclaw.ask, "p" * (bentoclaw.PROMPT_MAX + 1), text=PROMPT_TEXT)
t.raises(ValueError, bentoclaw.ask, "ก" * (bentoclaw.PROMPT_MAX // 3 + 1), text=PROMPT_TEXT,
         what="Thai prompt one character over PROMPT_MAX bytes")
# (20 000 on the emulated board: its heap is 384 KiB.) The list is made at
# its exact size: list(range(n)) grows by doubling (to 1 MiB, the old half
# kept while it moves), which a heap fragmented by the 1 MiB strings above
# may not have in one piece.
big = [0] * (20000 if rig.QEMU else 100000)
for i in range(len(big)):
    big[i] = i
bentoclaw.tool("say", big)
big = None
rec = last_record()
t.check(rec[1].startswith("say: [0, 1, 2,") and len(rec[1].encode()) == 255,
        "100 000-element list result: repr cut to 255 bytes", rec[1][:40])
t.check(rig.session_bytes() < 8192, "session files stay small", rig.session_bytes())
gc.collect()
end_section()

# --- 2. embedded NUL -------------------------------------------------------------------------
section("Python API embedded NUL")
s0 = state_now()
n0 = bentoclaw.status()["session_msgs"]
for nul in ("\x00", "a\x00", "\x00b", "a\x00b", "ไทย\x00ไทย"):
    t.raises(ValueError, bentoclaw.ask, nul, text="prompt must not contain NUL")
    t.raises(ValueError, bentoclaw.remember, nul, "v", text="key must not contain NUL")
    t.raises(ValueError, bentoclaw.remember, "k", nul, text="value must not contain NUL")
    t.raises(ValueError, bentoclaw.recall, nul, text="key must not contain NUL")
    t.raises(ValueError, bentoclaw.tool, nul, text="name must not contain NUL")
    t.raises(ValueError, bentoclaw.register_tool, nul, print, text="name must not contain NUL")
    t.raises(ValueError, bentoclaw.connect, nul, 80, "k", text="host must not contain NUL")
    t.raises(ValueError, bentoclaw.connect, "127.0.0.1", 80, nul, text="api_key must not contain NUL")
# "k\0x" must not become "k": nothing stored under the prefix.
t.eq(bentoclaw.recall("k"), None, "no key stored through a NUL")
t.eq(bentoclaw.recall("a"), None, "no key 'a' stored through a NUL")
t.check("a" not in [x["name"] for x in bentoclaw.tools()], "no tool 'a' registered through a NUL")
t.eq(bentoclaw.status()["session_msgs"], n0, "no turn from NUL arguments")
unchanged_state(s0, "NUL arguments")
# One rule for NUL everywhere (docs/DESIGN.md): no str argument may hold
# one — a tool's argument neither (it used to reach a built-in cut at the
# NUL). A tool's *result* is the tool's own object: it comes back whole, and
# its TOOL turn shows the NUL as "?".
t.raises(ValueError, bentoclaw.tool, "say", "a\x00b", text="arg must not contain NUL")
t.raises(ValueError, bentoclaw.tool, "led", "toggle\x00junk", text="arg must not contain NUL")
bentoclaw.register_tool("nul", lambda a: "a\x00b")
t.eq(bentoclaw.tool("nul"), "a\x00b", "tool result with a NUL comes back whole")
rec = last_record()
t.check(rec is not None and rec[0] == "tool" and rec[1] == "nul: a?b",
        "TOOL turn logged for a result with a NUL, the NUL shown as '?'", rec)
end_section()

# --- 3. non-str types ---------------------------------------------------------------------
section("Python API wrong types")


class WithStr:
    called = 0

    def __str__(self):
        WithStr.called += 1
        return "echo"

    def __len__(self):
        return 4


class StrSub(str):
    pass


s0 = state_now()
n0 = bentoclaw.status()["session_msgs"]
junk = [b"echo", bytearray(b"echo"), 1, 0, -1, 1 << 80, 2.5, None, True, ["echo"], ("echo",),
        {"k": "v"}, WithStr(), StrSub("echo"), print, memoryview(b"echo")]
for j in junk:
    t.raises(TypeError, bentoclaw.ask, j, text="prompt must be str", what="ask(%r)" % (type(j),))
    t.raises(TypeError, bentoclaw.remember, j, "v", text="key must be str", what="remember key %r" % (type(j),))
    t.raises(TypeError, bentoclaw.remember, "k", j, text="value must be str", what="remember value %r" % (type(j),))
    t.raises(TypeError, bentoclaw.recall, j, text="key must be str", what="recall(%r)" % (type(j),))
    t.raises(TypeError, bentoclaw.tool, j, text="name must be str", what="tool(%r)" % (type(j),))
    t.raises(TypeError, bentoclaw.register_tool, j, print, text="name must be str",
             what="register_tool(%r)" % (type(j),))
    t.raises(TypeError, bentoclaw.connect, j, 80, "k", text="host must be str", what="connect host %r" % (type(j),))
    t.raises(TypeError, bentoclaw.connect, "127.0.0.1", 80, j, text="api_key must be str",
             what="connect api_key %r" % (type(j),))
    if not isinstance(j, int) or isinstance(j, bool):
        t.raises(TypeError, bentoclaw.connect, "127.0.0.1", j, "k", text="port must be int",
                 what="connect port %r" % (type(j),))
    if not callable(j):
        t.raises(TypeError, bentoclaw.register_tool, "h", j, text="handler must be callable",
                 what="register_tool handler %r" % (type(j),))
t.eq(WithStr.called, 0, "__str__ of an argument is never called")
t.raises(TypeError, bentoclaw.register_tool, "h", print, WithStr(), text="risk must be int")
t.raises(TypeError, bentoclaw.register_tool, "h", print, 0, "5", text="rate_per_min must be int")
t.raises(ValueError, bentoclaw.register_tool, "h", print, 1 << 80, text="risk must be 0..2")
t.raises(ValueError, bentoclaw.register_tool, "h", print, 0, 1 << 80, text="rate_per_min must be 0..65535")
t.raises(ValueError, bentoclaw.connect, "127.0.0.1", 1 << 80, "k", text="port must be 1..65535")
t.check("h" not in [x["name"] for x in bentoclaw.tools()], "no tool 'h' registered by refused calls")
# Built-in argument checks: wrong types are the caller's error, before the gates.
for j in (b"x", 1, ["x"], WithStr()):
    t.raises(TypeError, bentoclaw.tool, "echo", j, text="echo takes a str")
for j in (b"toggle", "on", 2.5, ["x"], WithStr()):
    t.raises(TypeError, bentoclaw.tool, "led", j, text="led takes None, a bool or 'toggle'")
for name in ("uptime", "wipe_memory"):
    t.raises(TypeError, bentoclaw.tool, name, "x", text="this tool takes no argument")
t.eq(WithStr.called, 0, "__str__ still never called")
t.eq(bentoclaw.status()["session_msgs"], n0, "no turn from wrong types")
unchanged_state(s0, "wrong types")
end_section()

# --- 4. malformed UTF-8 inside a str ------------------------------------------------------
# MicroPython's bytes.decode() accepts these (it only counts continuation
# bytes); the core refuses them, so the binding must say so at the door.
section("Python API malformed UTF-8 in str")
malformed = []
for b in (b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xed\xa0\x80",
          b"\xed\xbf\xbf", b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80",
          b"\xf5\x80\x80\x80", b"\xf7\xbf\xbf\xbf", b"ok \xed\xb0\x80 end"):
    try:
        malformed.append(b.decode())
    except UnicodeError:
        pass  # refused by the interpreter already: cannot reach bentoclaw
print("malformed UTF-8 str objects the interpreter lets through:", len(malformed))
s0 = state_now()
n0 = bentoclaw.status()["session_msgs"]
for m in malformed:
    t.raises(ValueError, bentoclaw.ask, m, text="prompt must be valid UTF-8")
    t.raises(ValueError, bentoclaw.remember, m, "v", text="key must be valid UTF-8")
    t.raises(ValueError, bentoclaw.remember, "k", m, text="value must be valid UTF-8")
    t.raises(ValueError, bentoclaw.recall, m, text="key must be valid UTF-8")
    t.raises(ValueError, bentoclaw.tool, m, text="name must be valid UTF-8")
    t.raises(ValueError, bentoclaw.register_tool, m, print, text="name must be valid UTF-8")
    t.raises(ValueError, bentoclaw.connect, m, 80, "k", text="host must be valid UTF-8")
t.eq(bentoclaw.recall("k"), None, "nothing stored from malformed text")
t.eq(bentoclaw.status()["session_msgs"], n0, "no turn from malformed text")
unchanged_state(s0, "malformed UTF-8")
# Valid neighbours of the malformed forms still work (boundaries of the check).
edges = ["\u0080", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff", "\U00010000", "\U0010ffff"]
for e in edges:
    t.eq(bentoclaw.remember("edge", e), True, "edge %r stored" % e)
    t.eq(bentoclaw.recall("edge"), e, "edge %r round-trips" % e)
end_section()

# --- 5. Thai text at every character boundary ----------------------------------------------
section("Thai text at every character boundary")
THAI = "สวัสดีครับ ผมชื่อสมชาย ยินดีที่ได้รู้จัก วันนี้อากาศดีมาก 😀 ขอบคุณครับ " * 3
chars = len(THAI)
print("Thai text: %d characters, %d bytes" % (chars, len(THAI.encode())))
# Values: every prefix; <=127 bytes stored and read back exactly, longer ones
# refused with the exact text and the old value kept.
t.eq(bentoclaw.remember("v", "old"), True, "seed value")
last_ok = "old"
stored = refused = 0
for n in range(chars + 1):
    p = THAI[:n]
    nb = len(p.encode())
    if nb <= 127:
        ok = bentoclaw.remember("v", p)
        t.check(ok is True, "value of %d bytes stored" % nb)
        last_ok = p
        stored += 1
    else:
        try:
            bentoclaw.remember("v", p)
            t.check(False, "value of %d bytes accepted" % nb)
        except ValueError as e:
            t.check(str(e) == VAL_TEXT, "value %d bytes: exact text" % nb, str(e))
        refused += 1
    if n % 7 == 0 or nb in range(120, 135):
        t.eq(bentoclaw.recall("v"), last_ok, "recall after a value of %d bytes" % nb)
print("value prefixes: %d stored, %d refused" % (stored, refused))
t.eq(bentoclaw.recall("v"), last_ok, "the last stored value survives the refusals")
# Keys: every prefix up to 40 bytes.
keys_ok = []
for n in range(1, 20):
    k = THAI[:n]
    nb = len(k.encode())
    if nb <= 31:
        t.eq(bentoclaw.remember(k, "k%d" % n), True, "key of %d bytes" % nb)
        keys_ok.append((k, "k%d" % n))
    elif nb < 60:
        t.raises(ValueError, bentoclaw.remember, k, "x", text=KEY_TEXT, what="key of %d bytes" % nb)
        t.raises(ValueError, bentoclaw.recall, k, text=KEY_TEXT, what="recall key of %d bytes" % nb)
for k, v in keys_ok:
    t.eq(bentoclaw.recall(k), v, "key %d bytes round-trips" % len(k.encode()))
# The exact limits, ASCII and Thai.
K31 = ["k" * 31, "a" + "ก" * 10, "ab" + "ก" * 9 + "c" * 2]
K32 = ["k" * 32, "ab" + "ก" * 10, "ก" * 10 + "xy", "😀" * 8]
for k in K31:
    t.eq(len(k.encode()), 31, "31-byte key built")
    t.eq(bentoclaw.remember(k, "31"), True, "31-byte key accepted")
    t.eq(bentoclaw.recall(k), "31", "31-byte key round-trips")
for k in K32:
    t.eq(len(k.encode()), 32, "32-byte key built")
    t.raises(ValueError, bentoclaw.remember, k, "32", text=KEY_TEXT, what="32-byte key refused")
    t.raises(ValueError, bentoclaw.recall, k, text=KEY_TEXT, what="32-byte key recall refused")
t.raises(ValueError, bentoclaw.remember, "", "v", text=KEY_TEXT, what="empty key refused")
V127 = ["v" * 127, "a" + "ก" * 42, "😀" * 31 + "abc"]
V128 = ["v" * 128, "ab" + "ก" * 42, "😀" * 32, "ก" * 43]
for v in V127:
    t.eq(len(v.encode()), 127, "127-byte value built")
    t.eq(bentoclaw.remember("lim", v), True, "127-byte value accepted")
    t.eq(bentoclaw.recall("lim"), v, "127-byte value round-trips")
for v in V128:
    t.raises(ValueError, bentoclaw.remember, "lim", v, text=VAL_TEXT, what="%d-byte value refused" % len(v.encode()))
t.eq(bentoclaw.recall("lim"), V127[-1], "refused values left the old one")
t.eq(bentoclaw.remember("empty", ""), True, "empty value accepted")
t.eq(bentoclaw.recall("empty"), "", "empty value round-trips")
# The ring: TOOL turn "say: <prefix>" cut to 255 bytes on a boundary.
bad_cut = 0
for n in range(chars + 1):
    p = THAI[:n]
    r = bentoclaw.tool("say", p)
    if r != p:
        bad_cut += 1
        continue
    want = cut255("say: " + p)
    rec = last_record()
    if rec != ("tool", want):
        bad_cut += 1
        if bad_cut < 4:
            print("ring mismatch at", n, repr(rec), repr(want))
    if bentoclaw.status()["session_msgs"] > 10:
        bad_cut += 1
t.eq(bad_cut, 0, "every Thai prefix stored as its 255-byte boundary cut (%d prefixes)" % (chars + 1))
# The last lines of the ring read back after a fresh load (soft reset).
recs_before = records()[-10:]
bentoclaw = rig.simulate_soft_reset(bentoclaw)
t.eq(bentoclaw.status()["session_msgs"], 10, "ring reloaded from flash")
bentoclaw.register_tool("say", lambda a: a, 0, 65535)
bentoclaw.tool("say", "after reload")
t.eq(records()[-11:-1][-9:], recs_before[-9:], "older turns unchanged by the reload")
end_section()

# --- 6. hostile tool handlers -------------------------------------------------------------
section("hostile tool handlers")


def boom(a):
    raise ValueError("boom %r" % (a,))


class Bad:
    def __repr__(self):
        raise OSError(5)


def reenter(a):
    # Python calling back into bentoclaw from a handler: legal (no core call
    # is in progress) and must see a consistent module.
    bentoclaw.remember("from_handler", "yes")
    bentoclaw.session_clear()
    return bentoclaw.tool("echo", "nested")


def reregister(a):
    bentoclaw.register_tool("self", lambda x: "replaced", 0, 65535)
    return "original"


depth = [0]


def recurse(a):
    depth[0] += 1
    return bentoclaw.tool("deep", a)


bentoclaw.register_tool("boom", boom, 0, 65535)
bentoclaw.register_tool("bad", lambda a: Bad(), 0, 65535)
bentoclaw.register_tool("reenter", reenter, 0, 65535)
bentoclaw.register_tool("self", reregister, 0, 65535)
bentoclaw.register_tool("kbd", lambda a: (_ for _ in ()).throw(KeyboardInterrupt()), 0, 65535)
bentoclaw.register_tool("exit", lambda a: sys.exit(7), 0, 65535)

e0 = bentoclaw.status()["error_count"]
t.raises(ValueError, bentoclaw.tool, "boom", 1, text="boom 1", what="a raising handler's exception propagates")
t.eq(bentoclaw.status()["error_count"], e0 + 1, "a raising handler counts one error")
t.eq(bentoclaw.status()["last_result"], "tool error", "last_result 'tool error'")
t.eq(bentoclaw.tool("say", "ok"), "ok", "a success resets the consecutive count")
# A result whose __repr__ raises: the tool ran, so it is a success, logged
# as run with a text obtained safely (its type), and its object comes back.
e1 = bentoclaw.status()["error_count"]
r = bentoclaw.tool("bad")
t.check(type(r) is Bad, "a result whose repr raises comes back as it is")
t.eq(bentoclaw.status()["error_count"], e1, "... counted as no error")
t.eq(bentoclaw.status()["last_result"], "tool ok", "... last_result 'tool ok'")
t.eq(last_record(), ("tool", "bad: <Bad object>"), "... TOOL turn with its type as the text")
st = bentoclaw.status()
t.check(0 <= st["session_msgs"] <= 10, "ring consistent after a failing repr", st)
t.eq(bentoclaw.tool("reenter"), "nested", "handler re-entering the module from Python")
t.eq(bentoclaw.recall("from_handler"), "yes", "its remember() landed")
t.eq(bentoclaw.tool("self"), "original", "handler that replaces itself returns its own result")
t.eq(bentoclaw.tool("self"), "replaced", "the replacement runs next time")
e0 = bentoclaw.status()["error_count"]
cb0 = bentoclaw.safety()["circuit_breaker"]
try:
    bentoclaw.tool("kbd")
    t.check(False, "KeyboardInterrupt swallowed")
except KeyboardInterrupt:
    t.check(True, "KeyboardInterrupt propagates")
try:
    bentoclaw.tool("exit")
    t.check(False, "SystemExit swallowed")
except SystemExit as e:
    t.check(e.value == 7 if hasattr(e, "value") else True, "SystemExit propagates")
t.eq(bentoclaw.status()["error_count"], e0, "Ctrl-C / sys.exit in a handler are not tool failures")
t.eq(bentoclaw.safety()["circuit_breaker"], cb0, "nor breaker failures")
# Unbounded recursion through tool(): the interpreter's recursion limit
# stops it with a Python exception, never a crash.
bentoclaw.register_tool("deep", recurse, 0, 65535)
got = None
try:
    bentoclaw.tool("deep", "x")
except RuntimeError as e:
    got = str(e)
except Exception as e:
    got = repr(e)
print("recursion through tool() stopped at depth %d: %s" % (depth[0], got))
t.check(got is not None and depth[0] > 1, "unbounded recursion ends in an exception", got)
sf = bentoclaw.safety()
t.eq(sf["circuit_breaker"], "open", "each failing level was a breaker failure")
t.check(0 <= bentoclaw.status()["session_msgs"] <= 10, "ring consistent after the recursion")
# Filling the registry from handlers and at top level: the 13th of other names fails.
bentoclaw = rig.simulate_soft_reset(bentoclaw)
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "new VM: breaker closed")
names = []
for i in range(20):
    try:
        bentoclaw.register_tool("fill%02d" % i, print)
        names.append(i)
    except RuntimeError as e:
        t.eq(str(e), "tool registry full (CLAW_RATE_MAX_TOOLS)", "registry full text")
        break
t.eq(len(names), 12, "12 Python tools fit in the spare slots")
t.eq(len([x for x in bentoclaw.tools() if not x["builtin"] and x["name"].startswith("fill")]), 12,
     "all 12 listed")
# Re-registering an existing name while full replaces it (no new slot).
bentoclaw.register_tool("fill00", lambda a: "again", 0, 65535)
t.eq(bentoclaw.tool("fill00"), "again", "re-registered handler while full")
end_section()

print("counts: 1 MiB doors, NUL doors, %d junk types, %d malformed str, %d Thai prefixes" % (
    len(junk), len(malformed), chars + 1))
t.done()
