# test_tool_repr.py — a tool whose result has a __repr__ that raises
# (issue 13, "clear errors"). The tool ran: the quota was used and the
# breaker counted a success, so the call is a success, logged as run, with
# the result's text obtained safely: "<Type object>". Through every door a
# tool runs by: tool(), TACP EXEC, a backend's tool request.
#
# Before the fix (41ae5d2, the last release) this file failed:
#   tool("bad")          raised the repr's OSError(5) although the tool ran
#                        (errors 0, last_result "tool ok", no TOOL turn)
#   tacp("TOOL bad")     answered "err [Errno 5] EIO" (the text protocol
#                        of then; TACP EXEC now)
#
# Also here: results whose text cannot be had in other ways (a repr that
# recurses without end, raises MemoryError, returns a non-str, returns 1 MiB,
# a list that holds itself) — each a success with a text, none a crash; and
# the breaker and rate accounting of such calls.
# needs: backend
# targets: unix
import claw_rig as rig
import bentoclaw
import json

t = rig.Checker("tool-repr")
rig.mount_ram()
rig.classic_session(bentoclaw)


class Bad:
    def __repr__(self):
        raise OSError(5)


class BadValue:
    def __repr__(self):
        raise ValueError("no repr for you")


class Recurse:
    def __repr__(self):
        return repr(self)


class NoMem:
    def __repr__(self):
        raise MemoryError()


class NotStr:
    def __repr__(self):
        return 42


class Huge:
    def __repr__(self):
        return "x" * (64 * 1024 if rig.QEMU else 1 << 20)


def selfref(a):
    lst = []
    lst.append(lst)
    return lst


def fail(a):
    raise ValueError("tool failed")


def last_turn():
    s = bentoclaw.session()
    return s[-1] if s else None


def stored_turn():
    """The newest entry of the ring read back from the session files."""
    ring = rig.session_on_flash()
    return ring[-1] if ring else (None, None)


for cls in (Bad, BadValue, Recurse, NoMem):
    bentoclaw.register_tool(cls.__name__.lower(), (lambda c: lambda a: c())(cls), 0, 65535)
bentoclaw.register_tool("notstr", lambda a: NotStr(), 0, 65535)
bentoclaw.register_tool("huge", lambda a: Huge(), 0, 65535)
bentoclaw.register_tool("selfref", selfref, 0, 65535)
bentoclaw.register_tool("fail", fail, 0, 65535)
bentoclaw.register_tool("bad2", lambda a: Bad(), 0, 2)

# --- tool() ----------------------------------------------------------------------------------
for name, cls, text in (("bad", Bad, "<Bad object>"), ("badvalue", BadValue, "<BadValue object>"),
                        ("recurse", Recurse, "<Recurse object>"), ("nomem", NoMem, "<NoMem object>")):
    e0 = bentoclaw.status()["error_count"]
    try:
        r = bentoclaw.tool(name)
    except Exception as e:
        r = e
    t.check(type(r) is cls, "tool(%r) returns its result object" % name, repr(type(r)))
    t.eq(bentoclaw.status()["error_count"], e0, "%s: no error counted" % name)
    t.eq(bentoclaw.status()["last_result"], "tool ok", "%s: last_result" % name)
    t.eq(last_turn(), ("tool", "%s: %s" % (name, text)), "%s: its TOOL turn" % name)
    t.eq(stored_turn(), ("tool", "%s: %s" % (name, text)), "%s: the TOOL turn is on flash" % name)
for name in ("notstr", "huge", "selfref"):
    try:
        r = bentoclaw.tool(name)
        ok = True
    except Exception as e:
        ok = repr(e)
    t.eq(ok, True, "tool(%r) succeeds" % name)
    turn = last_turn()
    t.check(turn is not None and turn[0] == "tool" and turn[1].startswith(name + ": ")
            and len(turn[1].encode()) <= 255, "%s: a TOOL turn of at most 255 bytes" % name, turn)

# The breaker counted a success: fail, fail, bad, fail, fail leaves it closed
# (three failures in a row would open it).
for name in ("fail", "fail", "bad", "fail", "fail"):
    try:
        bentoclaw.tool(name)
    except Exception:
        pass
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "a raising repr is a breaker success")
bentoclaw.tool("bad")  # and resets the consecutive count again

# The quota was used: bad2 allows 2 a minute.
t.check(type(bentoclaw.tool("bad2")) is Bad, "bad2 #1")
t.check(type(bentoclaw.tool("bad2")) is Bad, "bad2 #2")
t.raises(RuntimeError, bentoclaw.tool, "bad2", text=rig.RATE_TEXT, what="bad2 #3 refused: the quota was used")

# --- TACP ---------------------------------------------------------------------------------------
e0 = bentoclaw.status()["error_count"]
t.eq(rig.tacp_call(bentoclaw, 1, "bad"), (1, "<Bad object>"), "TACP answers the safe text")
t.eq(last_turn(), ("tool", "bad: <Bad object>"), "TACP: the TOOL turn")
t.eq(rig.tacp_call(bentoclaw, 1, "recurse"), (1, "<Recurse object>"), "TACP: a repr that recurses")
t.eq(bentoclaw.status()["error_count"], e0, "TACP: no error counted")

# --- a backend's tool request -------------------------------------------------------------------
t.eq(rig.connect(bentoclaw), True, "connect")
rig.backend_control(replies=[json.dumps({"tool_call": {"name": "bad", "arg": None}}), "done"])
e0 = bentoclaw.status()["error_count"]
t.eq(bentoclaw.ask("go"), "done", "ask() with a tool request for bad")
t.eq(rig.backend_last()["body_json"].get("tool_result"), {"name": "bad", "status": "ok", "result": "<Bad object>"},
     "the tool_result is ok with the safe text")
t.eq(bentoclaw.session()[-2], ("tool", "bad: <Bad object>"), "backend: the TOOL turn")
t.eq(bentoclaw.status()["error_count"], e0, "backend: no error counted")
bentoclaw.disconnect()

# --- what a KeyboardInterrupt / SystemExit raised by the repr does (reported) -----------------
class ReprKI:
    def __repr__(self):
        raise KeyboardInterrupt()


class ReprExit:
    def __repr__(self):
        raise SystemExit(3)


for cls in (ReprKI, ReprExit):
    name = cls.__name__.lower()
    bentoclaw.register_tool(name, (lambda c: lambda a: c())(cls), 0, 65535)
    try:
        r = bentoclaw.tool(name)
        what = "returned %s, TOOL turn %r" % (type(r).__name__, last_turn())
    except BaseException as e:  # noqa: reported either way
        what = "raised %r" % (e,)
    print("NOTE: a result whose __repr__ raises %s: tool() %s" % (cls.__name__[4:], what))
    t.check(bentoclaw.status()["session_msgs"] <= 10, "%s: the ring is consistent" % name)

print("CRASHCLASS: tool result whose __repr__ raises (OSError, ValueError, MemoryError, endless recursion)|"
      "test_tool_repr|%s|the call raised the repr's exception although the tool ran; no TOOL turn"
      % ("success, logged as <Type object>" if t.failed == 0 else "FAILED"))
t.done()
