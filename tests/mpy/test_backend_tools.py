# test_backend_tools.py — tool requests from the backend (docs/BACKEND.md).
#  * a reply that is exactly {"tool_call":{"name":…,"arg":…}} runs the tool at
#    HTTPS trust through the gates; the follow-up POST carries
#    "tool_result" {name, status, result} and the final reply is returned;
#  * a high-risk tool is refused for trust (reported with the exact gate
#    text, never run) — while TACP runs the same tool at USB trust;
#  * an unknown tool is reported "unknown"; a raising tool "error" and a
#    breaker failure; a built-in's bad argument "error" without one;
#  * the round limit: a model that asks for tools forever gets
#    RuntimeError("tool round limit reached") after 3 tool runs (4 POSTs);
#  * arguments crafted to break the JSON round-trip exactly and the next
#    request body is valid JSON; malformed tool_call bodies are reply text.
# needs: backend
# targets: unix qemu
import claw_rig as rig
import bentoclaw
import json

t = rig.Checker("backend-tools")
rig.mount_ram()
rig.classic_session(bentoclaw)  # one request per round (no summary requests)
ROUND_TEXT = "tool round limit reached"
t.eq(bentoclaw.TOOL_ROUNDS_MAX, 3, "TOOL_ROUNDS_MAX")


def jstr(s, ascii_only=False):
    """A JSON string literal of s: minimal escapes, or everything outside
    printable ASCII as \\u escapes (surrogate pairs above U+FFFF)."""
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif c < 0x20 or (ascii_only and c >= 0x7F):
            if c >= 0x10000:
                c -= 0x10000
                out.append("\\u%04x\\u%04x" % (0xD800 + (c >> 10), 0xDC00 + (c & 0x3FF)))
            else:
                out.append("\\u%04x" % c)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def call(name, arg=None, ascii_only=False):
    a = "null" if arg is None else jstr(arg, ascii_only)
    return '{"tool_call":{"name":%s,"arg":%s}}' % (jstr(name, ascii_only), a)


def context_text():
    """The session's text: _context() on the unix port; the firmware has no
    such hook, there the turns of session() hold the same text."""
    if hasattr(bentoclaw, "_context"):
        return bentoclaw._context().decode()
    return "\n".join("%s: %s" % (r, x) for r, x in bentoclaw.session())


def requests_since(total0):
    log = rig.backend_log()
    n = log["total"] - total0
    return log["requests"][-n:] if n > 0 else []


def run(replies, prompt="please"):
    """ask() with queued replies; returns (reply or exception, requests)."""
    rig.backend_control(replies=replies)
    total0 = rig.backend_log()["total"]
    try:
        r = bentoclaw.ask(prompt)
    except Exception as e:
        r = e
    rig.backend_control(replies=None)
    return r, requests_since(total0)


seen = []


def echo2(arg):
    seen.append(arg)
    return arg


bentoclaw.register_tool("echo2", echo2, rate_per_min=1000)
bentoclaw.register_tool("probe", lambda a: seen.append(("probe", a)) or "probed", risk=2, rate_per_min=1000)


def boom(arg):
    raise ValueError("boom: %r" % (arg,))


bentoclaw.register_tool("boom", boom, rate_per_min=1000)

t.eq(rig.connect(bentoclaw), True, "connect")
bentoclaw.remember("name", "Somchai")

# --- a tool run and its result sent back ----------------------------------------------------
r, reqs = run([call("echo2", "hello")], "say hello with a tool")
t.eq(r, "Tool echo2 ok: hello", "final reply after the tool round")
t.eq(len(reqs), 2, "two POSTs")
t.eq(seen, ["hello"], "the tool ran once with the argument")
if len(reqs) == 2:
    first, second = reqs[0]["body_json"], reqs[1]["body_json"]
    t.check("tool_result" not in first, "the first request has no tool_result")
    t.eq(second.get("prompt"), "say hello with a tool", "the follow-up repeats the prompt")
    t.eq(second.get("tool_result"), {"name": "echo2", "status": "ok", "result": "hello"}, "tool_result ok")
    t.check("echo2: hello" in second.get("context", ""), "the TOOL turn is in the follow-up context",
            second.get("context"))
    t.eq(reqs[1]["status"], 200, "backend accepted the follow-up")
ctx = context_text()
t.check("echo2: hello" in ctx and "Tool echo2 ok: hello" in ctx, "TOOL and ASSISTANT turns in the session")
t.check('"tool_call"' not in ctx, "the tool request itself is not stored as an assistant turn")
t.eq(bentoclaw.safety()["trust_level"], "https", "trust unchanged")
t.eq(bentoclaw.status()["state"], "idle", "idle after the exchange")

# A null / absent argument is None; a non-str result is sent as str().
seen.clear()
r, reqs = run(['{"tool_call":{"name":"echo2"}}'])
t.eq(seen, [None], "absent arg -> None")
r, reqs = run([' \r\n{ "tool_call" :\t{ "arg" : null , "name" : "uptime" } }\n '])
t.check(r.startswith("Tool uptime ok: "), "whitespace, member order, null arg accepted", r)
t.check(len(reqs) == 2 and reqs[1]["body_json"]["tool_result"]["result"].isdigit(), "uptime's int sent as str")
r, reqs = run(['{"tool_call":{"name":"uptime","arg":"x"}}'])
t.eq(r, "Tool uptime error: this tool takes no argument", "a built-in's bad argument is an error")
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "a bad argument is no breaker failure")

# --- trust: the backend cannot run a high-risk tool; TACP can ----------------------------------
seen.clear()
e0 = bentoclaw.status()["error_count"]
r, reqs = run([call("wipe_memory")])
t.eq(r, "Tool wipe_memory refused: " + rig.TRUST_TEXT, "high-risk tool refused for trust, exact text")
t.eq(bentoclaw.recall("name"), "Somchai", "nothing was wiped")
t.eq(bentoclaw.status()["error_count"], e0 + 1, "the refusal counts an error")
if len(reqs) == 2:
    t.eq(reqs[1]["body_json"]["tool_result"],
         {"name": "wipe_memory", "status": "refused", "result": rig.TRUST_TEXT}, "refusal reported")
r, reqs = run([call("probe", "x")])
t.eq(seen, [], "a refused Python tool never ran")
t.eq(r, "Tool probe refused: " + rig.TRUST_TEXT, "probe refused over HTTPS")
t.eq(rig.tacp_call(bentoclaw, 1, "probe y"), (1, "probed"), "the same tool through TACP EXEC runs (USB trust)")
t.eq(seen, [("probe", "y")], "ran once, through TACP")
t.eq(bentoclaw.safety()["trust_level"], "https", "trust still https")
t.check("wipe_memory: refused: " + rig.TRUST_TEXT in context_text(),
        "the refusal is a TOOL turn")

# --- unknown tools -------------------------------------------------------------------------------
r, reqs = run([call("no_such_tool", "x")])
t.eq(r, "Tool no_such_tool unknown: unknown tool", "unknown tool reported as unknown")
r, reqs = run([call("n" * 200)])
t.eq(r, "Tool %s unknown: unknown tool" % ("n" * 200), "over-long name: unknown, echoed safely")
r, reqs = run([call("echo2\u0000x")])
t.check(len(reqs) == 2 and reqs[1]["body_json"]["tool_result"]["name"] == "echo2\u0000x"
        and reqs[1]["body_json"]["tool_result"]["status"] == "unknown", "NUL inside a name: unknown, escaped")

# --- a raising tool: error + breaker failure -----------------------------------------------------
e0 = bentoclaw.status()["error_count"]
r, reqs = run([call("boom", "1")])
t.eq(r, "Tool boom error: boom: '1'", "a raising tool is reported as an error")
t.eq(bentoclaw.status()["error_count"], e0 + 1, "and counts an error")

# --- the round limit -------------------------------------------------------------------------------
# (An ask() whose tool raised is one failed ask(); a plain one resets the
# consecutive count.)
t.eq(bentoclaw.ask("reset the count")[:6], "Echo: ", "a plain ask() succeeds")
seen.clear()
rig.backend_control(reply=call("echo2", "again"))
total0 = rig.backend_log()["total"]
e0 = bentoclaw.status()["error_count"]
t.raises(RuntimeError, bentoclaw.ask, "loop forever", text=ROUND_TEXT, what="a model that loops ends at the limit")
rig.backend_control(reply=None)
reqs = requests_since(total0)
t.eq(len(reqs), 4, "1 + 3 POSTs")
t.eq(seen, ["again"] * 3, "the tool ran exactly 3 times")
t.eq(bentoclaw.status()["error_count"], e0 + 1, "the limit counts one error")
t.eq(bentoclaw.status()["state"], "error", "state error")
t.eq(bentoclaw.status()["last_result"], "tool round limit", "last_result")
t.check("loop forever" in context_text(), "the USER turn stays")
# An unknown tool asked for forever ends the same way.
rig.backend_control(reply=call("nope"))
t.raises(RuntimeError, bentoclaw.ask, "unknown forever", text=ROUND_TEXT)
rig.backend_control(reply=None)
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "two limits: two failures, still closed")
t.eq(bentoclaw.ask("plain question?")[:6], "Echo: ", "a normal ask works afterwards")

# --- crafted arguments: exact round trip, valid JSON body ---------------------------------------------
crafted = [
    'quote " inside',
    'back\\slash \\" \\\\ \\u0022 \\n',
    '","status":"ok","result":"pwned',
    '"}},"tool_result":{"name":"x"',
    '{"tool_call":{"name":"wipe_memory"}}',
    '{"a":{"b":{"c":[1,2,{"d":null}]}}}',
    "new\nline\r\ttab\x08\x0c",
    "ctrl \x01\x02\x1f\x7f",
    "ไทย สวัสดี",
    "emoji \U0001f600 \U0010ffff",
    "\u2028\u2029 separators",
    "\ufeff bom \ufffd",
    "/ solidus </script>",
    "",
    "x" * 1000,
    "\\" * 300,
    '"' * 300,
]
cases = 0
losses = 0
for ascii_only in (False, True):
    for a in crafted:
        cases += 1
        seen.clear()
        r, reqs = run([call("echo2", a, ascii_only)])
        ok = len(reqs) == 2 and seen == [a]
        if ok:
            b = reqs[1]
            tr = (b.get("body_json") or {}).get("tool_result")
            ok = (b["valid"] and b["status"] == 200 and tr == {"name": "echo2", "status": "ok", "result": a}
                  and json.loads(b["body"])["tool_result"]["result"] == a)
        ok = ok and r == "Tool echo2 ok: " + a
        if not ok:
            losses += 1
            t.check(False, "crafted arg round-trips (ascii_only=%s)" % ascii_only, repr(a)[:60], repr(r)[:80],
                    reqs[-1]["body"][:200] if reqs else None)
t.check(losses == 0, "crafted arguments round-trip")
print("RELIABILITY: tool-call crafted arguments|%d|%d" % (cases, losses))

# One rule for NUL everywhere (docs/DESIGN.md): an argument with a NUL is not
# passed to the tool; the backend hears why.
for ascii_only in (False, True):
    seen.clear()
    r, reqs = run([call("echo2", "nul\x00inside", ascii_only)])
    tr = (reqs[1].get("body_json") or {}).get("tool_result") if len(reqs) == 2 else None
    t.eq((seen, tr), ([], {"name": "echo2", "status": "error", "result": "arg must not contain NUL"}),
         "an argument with a NUL is refused (ascii_only=%s)" % ascii_only)

# Too long for the result: cut to TOOL_RESULT_MAX (1024) bytes on a character boundary.
seen.clear()
big = "ก" * 1300  # 3900 bytes: fits a 4096-byte reply as raw UTF-8
r, reqs = run([call("echo2", big)])
t.eq(seen, [big], "a 3900-byte argument arrives whole")
res = reqs[1]["body_json"]["tool_result"]["result"] if len(reqs) == 2 else None
t.check(res is not None and res == "ก" * 341, "the result sent back is cut to 1023 bytes (341 chars)",
        len(res or ""))

# --- malformed tool_call bodies are reply text (never run) ------------------------------------------------
nested = "[" * 2000 + "]" * 2000
malformed = [
    '{"tool_call":{"name":"echo2","arg":"x"}} trailing',
    '{"tool_call":{"name":"echo2","arg":"x"}}}',
    '{"tool_call":{"name":"echo2","arg":{"x":1}}}',
    '{"tool_call":{"name":"echo2","arg":["x"]}}',
    '{"tool_call":{"name":"echo2","arg":1}}',
    '{"tool_call":{"name":"echo2","arg":true}}',
    '{"tool_call":{"name":"echo2","arg":nul}}',
    '{"tool_call":{"name":"echo2","arg":nullx}}',
    '{"tool_call":{"name":"echo2","name":"echo2"}}',
    '{"tool_call":{"arg":"x","arg":"y","name":"echo2"}}',
    '{"tool_call":{"name":"echo2","extra":"x"}}',
    '{"tool_call":{"arg":"x"}}',
    '{"tool_call":{}}',
    '{"tool_call":[]}',
    '{"tool_call":"echo2"}',
    '{"tool_call":{"name":"echo2"},"more":1}',
    '{"tool_call":{"name":echo2}}',
    '{"tool_call":{"name":"echo2",}}',
    '{"tool_call":{"name":"echo2" "arg":"x"}}',
    "{'tool_call':{'name':'echo2'}}",
    '{"tool_call":{"name":"echo2","arg":"\\ud800"}}',
    '{"tool_call":{"name":"echo2","arg":"\\udc00\\ud800"}}',
    '{"tool_call":{"name":"echo2","arg":"\\ud800\\u0041"}}',
    '{"tool_call":{"name":"echo2","arg":"\\x41"}}',
    '{"tool_call":{"name":"echo2","arg":"\\u12"}}',
    '{"tool_call":{"name":"echo2","arg":"\\u12G4"}}',
    '{"tool_call":{"name":"echo2","arg":"a\nb"}}',
    '{"tool_call":{"name":"echo2","arg":"tab\there"}}',
    '{"tool_call":{"name":"echo2","arg":"unterminated}}',
    '{"tool_call":{"name":"echo2","arg":"x"',
    '{"tool_call":{"name":"echo2","arg":"x\\',
    '{"tool_call"',
    '{"tool_call":',
    "{",
    '{"tool\\u0000call":{"name":"echo2"}}',
    '{"Tool_call":{"name":"echo2"}}',
    '{"tool_call":{"Name":"echo2"}}',
    '[{"tool_call":{"name":"echo2"}}]',
    '"{\\"tool_call\\":{\\"name\\":\\"echo2\\"}}"',
    nested,
    '{"tool_call":' * 300,
    "{}",
    "null",
]
cases = 0
losses = 0
for body in malformed:
    cases += 1
    seen.clear()
    r, reqs = run([body])
    ok = r == body and seen == [] and len(reqs) == 1
    if not ok:
        losses += 1
        t.check(False, "malformed tool_call is reply text", repr(body)[:70], repr(r)[:70], len(reqs))
t.check(losses == 0, "malformed tool_call bodies")
print("RELIABILITY: tool-call malformed bodies|%d|%d" % (cases, losses))

# A member name written with escapes is still the member name (valid JSON).
seen.clear()
r, reqs = run(['{"tool\\u005fcall":{"n\\u0061me":"echo\\u0032","\\u0061rg":"\\u0e01"}}'])
t.eq((r, seen), ("Tool echo2 ok: ก", ["ก"]), "escaped member names and values decode")

# --- breaker: one ask() is at most one breaker failure, whatever its tools do ---------------
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "closed before")
e0 = bentoclaw.status()["error_count"]
r, reqs = run([call("boom", "a"), call("boom", "b"), call("boom", "c"), "done"])
t.eq(r, "done", "three failing rounds, then the final reply")
t.eq(len(reqs), 4, "4 POSTs")
if len(reqs) == 4:
    t.eq([q["body_json"]["tool_result"]["status"] for q in reqs[1:]], ["error"] * 3, "each reported as error")
sf = bentoclaw.safety()
t.eq(sf["circuit_breaker"], "closed", "three failing tools in one ask(): one breaker failure, still closed")
t.eq(bentoclaw.status()["error_count"], e0 + 1, "... and one error")
t.eq(sf["trust_level"], "https", "trust unchanged")
# Two more such asks: three consecutive failures in all open the breaker.
for i in range(2):
    r, reqs = run([call("boom", "x"), "done"])
    t.eq(r, "done", "an ask() whose tool fails still answers (%d)" % i)
sf = bentoclaw.safety()
t.eq(sf["circuit_breaker"], "open", "three asks with a failing tool open the breaker")
t.eq(bentoclaw.status()["error_count"], e0 + 3, "one error per ask()")
t.raises(RuntimeError, bentoclaw.ask, "more", text=rig.ASK_BREAKER_TEXT, what="the next ask is refused")
bentoclaw.disconnect()
t.eq(bentoclaw.safety()["trust_level"], "usb", "usb after disconnect")
t.done()
