# test_nul_rule.py — one NUL rule, applied at every entry point (issue 13,
# "clear errors"):
#   * any str argument holding a NUL is refused with ValueError
#     "<argument> must not contain NUL", before anything runs or is stored
#     (ask, remember, recall, forget, pin, search, import_memory, connect,
#     register_tool, tool's name and its argument, for built-in and Python
#     tools alike);
#   * a TACP EXEC whose argument holds a NUL is refused with the error frame
#     "arg must not contain NUL"; a REMEMBER/RECALL with one likewise
#     (docs/TACP.md);
#   * a backend reply holding a NUL is a failed request: ask() raises
#     RuntimeError("HTTPS request failed") and no assistant turn is stored;
#   * a backend tool request whose argument holds a NUL does not run the
#     tool and is answered "error" with the same text;
#   * a tool's result holding a NUL comes back to the caller as it is, and
#     its TOOL turn (and the TACP answer, and the tool_result sent to the
#     backend) shows the NUL as "?";
#   * no stored record (session file, memory file) ever holds a NUL, and
#     session() shows every turn whole.
#
# Before the fix (41ae5d2, the last release) this file failed:
#   tool("led", "toggle\x00junk")  returned True (the argument was cut at
#                                  the NUL and taken as "toggle")
#   tool("py", "x\x00y")           ran the handler with the NUL
#   a reply "hello\x00world"       was returned whole, stored as "hello"
#   a result "a\x00b"              was stored as the TOOL turn "nulres: a"
#   a tool request arg "a\x00b"    ran the tool; its turn was stored cut
# needs: backend
# targets: unix
import claw_rig as rig
import bentoclaw
import json

t = rig.Checker("nul-rule")
rig.mount_ram()
rig.classic_session(bentoclaw)  # one request per round (no summary requests)
N = "x\x00y"

ran = []


def py(a):
    ran.append(a)
    return a


bentoclaw.register_tool("py", py, 0, 65535)
bentoclaw.register_tool("nulres", lambda a: "a\x00b", 0, 65535)
bentoclaw.register_tool("nulraise", lambda a: (_ for _ in ()).throw(ValueError("bad\x00thing")), 0, 65535)
bentoclaw.remember("keep", "me")


def snapshot():
    st = bentoclaw.status()
    return (st["session_msgs"], st["error_count"], bentoclaw.safety()["circuit_breaker"],
            tuple(rig.read_file(p) for p in rig.MEMORY_FILES + rig.SESSION_FILES))


def no_nul_stored(what):
    for path in rig.SESSION_FILES + rig.MEMORY_FILES:
        raw = rig.read_file(path) or b""
        t.check(b"\x00" not in raw and b"\\u0000" not in raw, "%s: %s holds no NUL" % (what, path),
                raw[-160:])
    # session() shows what the files hold, whole (a NUL would cut it): the
    # ring read back from the base and its slots.
    t.eq(bentoclaw.session(), rig.session_on_flash(), "%s: session() shows the stored turns whole" % what)


# --- every str argument -----------------------------------------------------------------
s0 = snapshot()
doors = (
    ("ask(prompt)", lambda: bentoclaw.ask(N), "prompt"),
    ("remember(key)", lambda: bentoclaw.remember(N, "v"), "key"),
    ("remember(value)", lambda: bentoclaw.remember("k", N), "value"),
    ("recall(key)", lambda: bentoclaw.recall(N), "key"),
    ("forget(key)", lambda: bentoclaw.forget(N), "key"),
    ("pin(key)", lambda: bentoclaw.pin(N), "key"),
    ("search(query)", lambda: bentoclaw.search(N), "query"),
    ("import_memory(text)", lambda: bentoclaw.import_memory("- **a**: b" + N + "\n"), "text"),
    ("connect(host)", lambda: bentoclaw.connect(N, 80, "k"), "host"),
    ("connect(api_key)", lambda: bentoclaw.connect("127.0.0.1", 80, N), "api_key"),
    ("register_tool(name)", lambda: bentoclaw.register_tool(N, print), "name"),
    ("tool(name)", lambda: bentoclaw.tool(N), "name"),
    ("tool(led, arg)", lambda: bentoclaw.tool("led", "toggle\x00junk"), "arg"),
    ("tool(echo, arg)", lambda: bentoclaw.tool("echo", N), "arg"),
    ("tool(py, arg)", lambda: bentoclaw.tool("py", N), "arg"),
    ("tool(py, arg=)", lambda: bentoclaw.tool("py", arg="\x00"), "arg"),
    ("tool(py, NUL at the end)", lambda: bentoclaw.tool("py", "x\x00"), "arg"),
)
for what, fn, arg in doors:
    t.raises(ValueError, fn, text="%s must not contain NUL" % arg, what=what + " with a NUL")
t.eq(ran, [], "no Python tool ran with a NUL argument")
t.eq(snapshot()[:4], s0[:4], "the refusals changed nothing (turns, errors, breaker, store)")
t.eq(bentoclaw.tool("led"), False, "the LED was never toggled by 'toggle\\x00junk'")
t.eq(bentoclaw.recall("keep"), "me", "the store is intact")

# --- TACP -------------------------------------------------------------------------------------
for (sub, payload), want in (((1, "echo a\x00b"), "arg must not contain NUL"),
                             ((1, "py a\x00b"), "arg must not contain NUL"),
                             ((6, "k=a\x00b"), "value must not contain NUL"),
                             ((6, "a\x00=b"), "key must not contain NUL"),
                             ((0x41, "\x00"), "key must not contain NUL")):
    t.eq(rig.tacp_call(bentoclaw, sub, payload), (0xFF, want), "TACP 0x%02x %r" % (sub, payload))
t.eq(ran, [], "no tool ran from a TACP request with a NUL")

# --- a tool's result with a NUL ---------------------------------------------------------------
r = bentoclaw.tool("nulres")
t.eq(r, "a\x00b", "tool() hands the result back as it is")
t.eq(bentoclaw.session()[-1], ("tool", "nulres: a?b"), "its TOOL turn shows the NUL as ?")
t.eq(rig.tacp_call(bentoclaw, 1, "nulres"), (1, "a?b"), "the TACP answer shows it as ?")
t.eq(bentoclaw.session()[-1], ("tool", "nulres: a?b"), "the TACP call's TOOL turn too")
t.eq(rig.tacp_call(bentoclaw, 1, "nulraise"), (1, '{"tool":"nulraise","status":"error","code":-1}'),
     "a raising tool: the vendor's failure JSON (no exception text sent)")
t.check("\x00" not in bentoclaw.session()[-1][1] and "thing" in bentoclaw.session()[-1][1],
        "its TOOL turn has the text, the NUL as ?", bentoclaw.session()[-1])
no_nul_stored("tool results")

# --- the backend: a reply with a NUL is a failed request ---------------------------------------
t.eq(rig.connect(bentoclaw), True, "connect")
rig.backend_control(reply="hello\x00world")
n0 = bentoclaw.status()["session_msgs"]
e0 = bentoclaw.status()["error_count"]
t.raises(RuntimeError, bentoclaw.ask, "hello", text=rig.REQUEST_TEXT, what="a reply with a NUL: failed request")
t.eq(bentoclaw.status()["error_count"], e0 + 1, "counted as one error")
t.check(all(role != "assistant" for role, text in bentoclaw.session()[n0:]), "no assistant turn from it",
        bentoclaw.session()[n0:])
t.check(all("hello\x00" not in x and x != "hello" for r, x in bentoclaw.session() if r == "assistant"),
        "the reply was never stored cut at the NUL", bentoclaw.session())
# Each failure followed by a success (three failures in a row would open
# the breaker).
for reply in ("\x00", "x" * 300 + "\x00", "ok\x00"):
    rig.backend_control(reply=None)
    t.check(isinstance(bentoclaw.ask("hello"), str), "a normal reply in between")
    rig.backend_control(reply=reply)
    t.raises(RuntimeError, bentoclaw.ask, "again", text=rig.REQUEST_TEXT, what="reply %r..." % reply[:6])
rig.backend_control(reply=None)
t.check(isinstance(bentoclaw.ask("hello"), str), "a normal reply afterwards")
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "the breaker closed")
no_nul_stored("replies")

# --- the backend's tool requests -------------------------------------------------------------
rig.backend_control(replies=[json.dumps({"tool_call": {"name": "py", "arg": "a\x00b"}})])
r = bentoclaw.ask("go")
t.eq(ran, [], "a tool request with a NUL in its argument does not run the tool")
tr = rig.backend_last()["body_json"].get("tool_result")
t.eq(tr, {"name": "py", "status": "error", "result": "arg must not contain NUL"},
     "the tool_result says why")
t.eq(bentoclaw.session()[-2], ("tool", "py: error: arg must not contain NUL"), "the TOOL turn says why")
rig.backend_control(replies=[json.dumps({"tool_call": {"name": "nulres", "arg": None}})])
r = bentoclaw.ask("go")
tr = rig.backend_last()["body_json"].get("tool_result")
t.eq(tr, {"name": "nulres", "status": "ok", "result": "a?b"}, "a result's NUL goes to the backend as ?")
t.eq(bentoclaw.session()[-2], ("tool", "nulres: a?b"), "and into the TOOL turn as ?")
# A tool name with a NUL is no registered tool: reported "unknown", and its
# echo in the TOOL turn follows the rule too (no NUL stored).
rig.backend_control(replies=[json.dumps({"tool_call": {"name": "py\x00x", "arg": None}}), "done"])
try:
    bentoclaw.ask("go")
except RuntimeError:
    pass
t.eq(ran, [], "a tool name with a NUL runs nothing")
turns = [x for r, x in bentoclaw.session() if r == "tool"]
t.check(turns and turns[-1].startswith("py") and "unknown tool" in turns[-1], "the unknown name's TOOL turn",
        turns[-1:])
ctx = rig.backend_last()["body_json"]["context"]
t.check("\x00" not in ctx, "no NUL sent to the backend in the context", repr(ctx[-120:]))
no_nul_stored("tool requests")
bentoclaw.disconnect()
t.eq(bentoclaw.recall("keep"), "me", "the store is intact at the end")
t.done()
