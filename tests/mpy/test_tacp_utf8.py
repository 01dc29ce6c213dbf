# test_tacp_utf8.py — every TACP answer is valid UTF-8, as docs/TACP.md
# promises, whatever text a tool hands back (issue 13, "clear errors": an
# "err ..." line carried ill-formed UTF-8 taken from an exception's text).
#
# MicroPython lets Python code build str objects that are not UTF-8:
# bytes.decode() accepts overlong forms, surrogates and code points above
# U+10FFFF (it only counts continuation bytes), and chr() of a surrogate
# encodes it as its three bytes. A tool can raise an exception with such a
# text, return such a str, or return an object whose repr() is one. Each
# TACP answer is checked with a strict UTF-8 decoder written here (RFC 3629:
# no overlong forms, no surrogates, nothing above U+10FFFF), and so is every
# record of the session file; the answers are one line, and an "err" reason
# is at most 160 bytes.
#
# Before the fix (41ae5d2, the last release) this file failed:
#   a tool raising ValueError("bad " + b"\xed\xb0\x80".decode()) made
#   tacp("TOOL r") answer b'err bad \xed\xb0\x80' (a lone surrogate)
# targets: unix
import claw_rig as rig
import bentoclaw

t = rig.Checker("tacp-utf8")
rig.mount_ram()


def utf8_ok(b):
    """Strict UTF-8 (RFC 3629)."""
    i = 0
    n = len(b)
    while i < n:
        c = b[i]
        if c < 0x80:
            i += 1
            continue
        if 0xC2 <= c <= 0xDF:
            need, lo, hi = 1, 0x80, 0xBF
        elif c == 0xE0:
            need, lo, hi = 2, 0xA0, 0xBF
        elif 0xE1 <= c <= 0xEC or 0xEE <= c <= 0xEF:
            need, lo, hi = 2, 0x80, 0xBF
        elif c == 0xED:
            need, lo, hi = 2, 0x80, 0x9F
        elif c == 0xF0:
            need, lo, hi = 3, 0x90, 0xBF
        elif 0xF1 <= c <= 0xF3:
            need, lo, hi = 3, 0x80, 0xBF
        elif c == 0xF4:
            need, lo, hi = 3, 0x80, 0x8F
        else:
            return False
        if i + need >= n:
            return False
        if not lo <= b[i + 1] <= hi:
            return False
        for k in range(2, need + 1):
            if not 0x80 <= b[i + k] <= 0xBF:
                return False
        i += need + 1
    return True


# The checker itself: it must refuse each malformed form and take valid text.
for good in (b"", b"abc", "ก".encode(), "\U0010ffff".encode(), "\ud7ff".encode(), "\ue000".encode()):
    t.check(utf8_ok(good), "the checker takes valid %r" % good)
for bad in (b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe0\xb8", b"\x80", b"\xff", b"a\xe0"):
    t.check(not utf8_ok(bad), "the checker refuses %r" % bad)

# Ill-formed str objects MicroPython lets Python code make.
MALFORMED = []
for raw in (b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xed\xa0\x80", b"\xed\xbf\xbf",
            b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80",
            b"\xf7\xbf\xbf\xbf", b"ok \xed\xb0\x80 end"):
    try:
        MALFORMED.append(raw.decode())
    except UnicodeError:
        pass
for cp in (0xD800, 0xDBFF, 0xDC00, 0xDFFF):
    try:
        MALFORMED.append("x" + chr(cp) + "y")
    except ValueError:
        pass
t.check(len(MALFORMED) >= 4, "the interpreter lets ill-formed str objects through", len(MALFORMED))
print("ill-formed str objects tried: %d" % len(MALFORMED))
for m in MALFORMED:
    t.check(not utf8_ok(m.encode()), "test data is ill-formed: %r" % m.encode())

current = [None]


def raiser(a):
    raise ValueError("bad " + current[0])


class ReprMalformed:
    def __repr__(self):
        return "obj " + current[0]


bentoclaw.register_tool("r", raiser, 0, 65535)
bentoclaw.register_tool("res", lambda a: "res " + current[0], 0, 65535)
bentoclaw.register_tool("obj", lambda a: ReprMalformed(), 0, 65535)
bentoclaw.register_tool("ok", lambda a: "fine", 0, 65535)
bentoclaw.register_tool("named", lambda a: (_ for _ in ()).throw(OSError(current[0])), 0, 65535)

answers = 0
bad_answers = []


def ask(line, what):
    global answers
    r = bentoclaw.tacp(line)
    answers += 1
    raw = r.encode()
    if not utf8_ok(raw):
        bad_answers.append((what, raw))
    t.check("\n" not in r and "\r" not in r, "%s: one line" % what, repr(raw[:60]))
    if r.startswith("err "):
        t.check(len(raw) <= 4 + 160, "%s: err reason at most 160 bytes" % what, len(raw))
    return r


for i, m in enumerate(MALFORMED):
    current[0] = m
    what = "#%d %r" % (i, m.encode())
    r = ask("TOOL r", "err from an exception text " + what)
    t.check(r.startswith("err bad "), "an exception's text is an err line " + what, repr(r.encode()))
    ask("TOOL named", "err from an OSError text " + what)
    r = ask("TOOL res", "a str result " + what)
    t.check(r.startswith('"res '), "a str result is a JSON string " + what, repr(r.encode()))
    r = ask("TOOL obj", "a repr result " + what)
    t.check(r.startswith('"obj '), "a repr result is a JSON string " + what, repr(r.encode()))
    # Breaker: a success after each failure keeps it closed.
    ask("TOOL ok", "a plain success")
    ask("STATUS", "STATUS after " + what)
    ask("SAFETY", "SAFETY after " + what)
# Long texts: cut at 160 bytes on a character boundary, still valid.
for n in range(50, 60):
    current[0] = "ก" * n + MALFORMED[0]
    ask("TOOL r", "a long Thai exception text (%d chars)" % n)
    ask("TOOL ok", "a plain success")

t.eq(bad_answers, [], "every TACP answer is valid UTF-8 (%d answers)" % answers)
raw = [rig.read_file(p) or b"" for p in rig.SESSION_FILES]
t.check(sum(len(r) for r in raw) > 0, "the session files were written")
t.check(all(utf8_ok(r) for r in raw), "the session files are valid UTF-8", [r[:80] for r in raw if not utf8_ok(r)])
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "the breaker is closed")
t.done()
