# test_tacp.py — TACP v2, the BENTO AI IDE's claw sub-protocol (docs/TACP.md),
# through bentoclaw.tacp(frames) -> frames and bentoclaw.tacp_ready():
#  * READY and every sub-command with the vendor's payloads, answers and error
#    texts, exactly: EXEC, ASK (offline echo, online reply, failure), STATUS,
#    TOOLS, HISTORY, REMEMBER (cuts, "full", format error), CLEAR, CONNECT
#    (every format error), DISCONNECT, the extensions SAFETY and RECALL,
#    unknown sub-commands;
#  * EXEC through the gates at USB trust: a risk-2 tool runs while connected
#    over HTTPS (tool() refuses it), the rate and breaker refusals, a failing
#    tool's JSON, last_cmd/last_result and the UI events, a refusal counting
#    one error, the TOOL turn;
#  * an abort inside a tool: answered "interrupted", tacp() raises it.
# The framing itself (split frames, bad frames, control commands) is
# tests/mpy/test_tacp_frames.py.
# needs: backend
# targets: unix qemu
import claw_rig as rig
import bentoclaw
import json

t = rig.Checker("tacp")
bdev = rig.mount_ram()
rig.classic_session(bentoclaw)

EXEC, ASK, STATUS, TOOLS, HISTORY, REMEMBER, CLEAR, CONNECT, DISCONNECT = range(1, 10)
SAFETY, RECALL, ERR = 0x40, 0x41, 0xFF


def call(sub, payload=b"", seq=7):
    return rig.tacp_call(bentoclaw, sub, payload, seq)


def err(text):
    return (ERR, text)


def ui():
    return [e for e in bentoclaw._ui_events()] if hasattr(bentoclaw, "_ui_events") else None


def stats_text():
    st = bentoclaw.status()
    return "State       %s\nTools       %d\nExecuted    %d\nErrors      %d\nTransport   USB" % (
        st["state"], st["tool_count"], st["exec_count"], st["error_count"])


# --- READY ---------------------------------------------------------------------------
ui()
frames = rig.tacp_frames(bentoclaw.tacp_ready())
t.eq(len(frames), 1, "tacp_ready() is one frame")
sub, seq, payload = frames[0]
t.eq((sub, seq), (0, 0), "READY: sub 0, seq 0")
ready = json.loads(payload)
t.eq(payload, b'{"fw":"%s","board":"%s","tools":%d,"proto":2}' % (
    bentoclaw.version().encode(), ready["board"].encode(), bentoclaw.status()["tool_count"]), "READY's payload, in the vendor's order")
t.check(len(ready["board"]) > 0, "a board name", ready)
ev = ui()
if ev is not None:
    t.eq(ev[-1], ("stats", stats_text()), "READY pushes the STATS card")

# --- STATUS --------------------------------------------------------------------------
st = bentoclaw.status()
t.eq(call(STATUS), (STATUS, '{"state":"idle","exec":%d,"err":%d,"tools":%d,"session":%d,"connected":false}' % (
    st["exec_count"], st["error_count"], st["tool_count"], st["session_msgs"])), "STATUS, offline")
ev = ui()
if ev is not None:
    t.eq(ev[-2:], [("status", "Local (USB)"), ("stats", stats_text())], "STATUS: the status line and STATS")

# --- TOOLS ---------------------------------------------------------------------------
sub, text = call(TOOLS)
t.eq(sub, TOOLS, "TOOLS answers TOOLS")
want = [{"name": d["name"], "desc": d["description"], "risk": d["risk"], "confirm": d["confirm"]} for d in bentoclaw.tools()]
t.eq(json.loads(text), want, "TOOLS: every tool of tools(), name/desc/risk/confirm")
t.check(text.startswith('[{"name":"') and text.endswith("}]"), "TOOLS: a JSON array of objects", text[:40])
first = text[1 : text.index("}") + 1]
t.check([first.index(k) for k in ('"name"', '"desc"', '"risk"', '"confirm"')] == sorted(first.index(k) for k in ('"name"', '"desc"', '"risk"', '"confirm"')),
        "TOOLS: the vendor's keys in the vendor's order", first)

# --- EXEC ----------------------------------------------------------------------------
e0 = bentoclaw.status()["error_count"]
x0 = bentoclaw.status()["exec_count"]
ui()
t.eq(call(EXEC, "echo hi there"), (EXEC, "hi there"), "EXEC echo: split at the first space")
ev = ui()
if ev is not None:
    t.eq(ev, [("last_cmd", "echo hi there"), ("tool", "echo: hi there"), ("last_result", "hi there"),
              ("stats", stats_text())], "EXEC: LAST_CMD before the tool, LAST_RESULT, STATS")
st = bentoclaw.status()
t.eq((st["exec_count"], st["last_cmd"], st["last_result"]), (x0 + 1, "echo hi there", "hi there"), "EXEC: counted, last_cmd, last_result")
t.eq(bentoclaw.session()[-1], ("tool", "echo: hi there"), "EXEC leaves its TOOL turn")
t.eq(call(EXEC, "echo"), (EXEC, ""), "EXEC without arguments")
t.eq(call(EXEC, "echo "), (EXEC, ""), "EXEC with an empty argument")
long_cmd = "echo " + "x" * 60
t.eq(call(EXEC, long_cmd), (EXEC, "x" * 60), "EXEC: a long line")
t.eq(bentoclaw.status()["last_cmd"], long_cmd[:47], "last_cmd: the payload's first 47 bytes")
t.eq(bentoclaw.status()["last_result"], "x" * 47, "last_result: the result's first 47 bytes")
sub, up = call(EXEC, "uptime")
t.check(sub == EXEC and up.isdigit(), "EXEC uptime: its digits", up)
t.eq(call(EXEC, "led on"), err("led takes None, a bool or 'toggle'"), "a built-in's argument check")
t.eq(call(EXEC, "uptime x"), err("this tool takes no argument"), "no argument for uptime")
t.eq(call(EXEC, b"echo a\x00b"), err("arg must not contain NUL"), "an argument with NUL")
t.eq(call(EXEC, b"echo \xff"), err("arg must be valid UTF-8"), "an argument that is not UTF-8")
for name in ("nope", "", " echo", "ECHO", "echo\t"):
    t.eq(call(EXEC, name), err("unknown tool"), "unknown tool %r" % name)
t.eq(bentoclaw.status()["error_count"], e0, "unknown tools and argument refusals count no error")

seen = []


def probe(arg):
    seen.append(arg)
    return "probed"


bentoclaw.register_tool("probe", probe, risk=bentoclaw.RISK_HIGH, rate_per_min=30)
t.eq(call(EXEC, "probe"), (EXEC, "probed"), "a Python tool")
t.eq(call(EXEC, "probe a b"), (EXEC, "probed"), "a Python tool with an argument")
t.eq(seen, [None, "a b"], "None without an argument, the rest of the line with one")


def bad(arg):
    raise ValueError("boom")


bentoclaw.register_tool("bad", bad, rate_per_min=60)
e0 = bentoclaw.status()["error_count"]
ui()
t.eq(call(EXEC, "bad"), (EXEC, '{"tool":"bad","status":"error","code":-1}'), "a failing tool: the vendor's JSON")
ev = ui()
if ev is not None:
    t.eq([e for e in ev if e[0] in ("last_result", "error")],
         [("last_result", '{"tool":"bad","status":"error","code":-1}')],
         "the failure on the UI: LAST_RESULT only, no ERROR (the vendor's EXEC)")
t.eq(bentoclaw.status()["error_count"], e0 + 1, "a failing tool: one error")
t.eq(bentoclaw.session()[-1], ("tool", "bad: error: boom"), "its TOOL turn has the exception")
t.eq(call(EXEC, "bad"), (EXEC, '{"tool":"bad","status":"error","code":-1}'), "second failure")
t.eq(call(EXEC, "bad"), (EXEC, '{"tool":"bad","status":"error","code":-1}'), "third failure")
t.eq(bentoclaw.safety()["circuit_breaker"], "open", "three failures open the breaker")
e0 = bentoclaw.status()["error_count"]
t.eq(call(EXEC, "echo x"), err("circuit breaker open"), "EXEC refused by the breaker")
t.eq(bentoclaw.status()["error_count"], e0 + 1, "a refusal counts one error")
# The breaker back to closed (a soft reset's init).
bentoclaw = rig.simulate_soft_reset(bentoclaw)
bentoclaw.register_tool("probe", probe, risk=bentoclaw.RISK_HIGH, rate_per_min=30)

# Rate: wipe_memory is 2 a minute.
t.eq(call(EXEC, "wipe_memory"), (EXEC, "True"), "wipe_memory 1")
t.eq(call(EXEC, "wipe_memory"), (EXEC, "True"), "wipe_memory 2")
e0 = bentoclaw.status()["error_count"]
t.eq(call(EXEC, "wipe_memory"), err("rate limited"), "the third within a minute: rate limited")
t.eq(bentoclaw.status()["error_count"], e0 + 1, "counted")

# An abort inside a tool: answered "interrupted", raised by tacp().
def stop(arg):
    raise KeyboardInterrupt


bentoclaw.register_tool("stop", stop)
try:
    bentoclaw.tacp(rig.tacp_frame(EXEC, "stop"))
    t.check(False, "a KeyboardInterrupt in a tool propagates out of tacp()")
except KeyboardInterrupt:
    t.check(True, "a KeyboardInterrupt in a tool propagates out of tacp()")
t.eq(bentoclaw.status()["state"], "idle", "idle after the abort")

# A tool that calls tacp() itself: both answered, each with its seq.
def inner(arg):
    return repr(rig.tacp_frames(bentoclaw.tacp(rig.tacp_frame(STATUS, b"", 99)))[0][:2])


bentoclaw.register_tool("inner", inner)
t.eq(call(EXEC, "inner", seq=5), (EXEC, "(3, 99)"), "a nested request answers inside, the outer after")

# --- REMEMBER / RECALL / HISTORY ------------------------------------------------------
t.eq(call(REMEMBER, "name=Somchai"), (REMEMBER, "ok"), "REMEMBER key=value")
t.eq(bentoclaw.recall("name"), "Somchai", "stored")
t.eq(call(RECALL, "name"), (RECALL, "Somchai"), "RECALL (extension)")
t.eq(call(REMEMBER, "eq=a=b"), (REMEMBER, "ok"), "split at the first =")
t.eq(bentoclaw.recall("eq"), "a=b", "the value keeps its =")
t.eq(call(REMEMBER, "empty="), (REMEMBER, "ok"), "an empty value")
t.eq(bentoclaw.recall("empty"), "", "stored empty")
t.eq(call(REMEMBER, "k" * 40 + "=v"), (REMEMBER, "ok"), "a long key is cut")
t.eq(bentoclaw.recall("k" * 31), "v", "to 31 bytes")
t.eq(call(REMEMBER, "long=" + "v" * 200), (REMEMBER, "ok"), "a long value is cut")
t.eq(bentoclaw.recall("long"), "v" * 127, "to 127 bytes")
thai = "\u0e01" * 11  # 33 bytes
t.eq(call(REMEMBER, thai + "=" + "\u0e02" * 50), (REMEMBER, "ok"), "Thai key and value")
t.eq(bentoclaw.recall("\u0e01" * 10), "\u0e02" * 42, "cut on a character boundary (30 and 126 bytes)")
for p in ("=v", "novalue", ""):
    t.eq(call(REMEMBER, p), err("format: key=value"), "REMEMBER %r" % p)
t.eq(call(REMEMBER, b"k=\xff"), err("value must be valid UTF-8"), "a value that is not UTF-8")
t.eq(call(REMEMBER, b"\xff=v"), err("key must be valid UTF-8"), "a key that is not UTF-8")
t.eq(call(RECALL, "nobody"), err("not found"), "RECALL of a missing key")
t.eq(call(RECALL, ""), err("key must be 1..31 bytes (CLAW_MEM_KEY_MAX)"), "RECALL of an empty key")
n = len(bentoclaw.export_memory().split("\n"))
i = 0
full = None
while i < 40:
    r = call(REMEMBER, "fill%d=x" % i)
    if r != (REMEMBER, "ok"):
        full = r
        break
    i += 1
t.eq(full, (REMEMBER, "full"), "a full store: full")
t.eq(call(HISTORY), (HISTORY, bentoclaw.history()), "HISTORY is history()'s text")
t.check(call(HISTORY)[1].startswith("Memory:\n"), "HISTORY: memory first")

# --- ASK -----------------------------------------------------------------------------
n0 = bentoclaw.status()["session_msgs"]
ui()
t.eq(call(ASK, "hello there"), (ASK, "hello there"), "ASK offline: the prompt back, for the IDE to send")
t.eq(bentoclaw.session()[-1], ("user", "hello there"), "ASK offline adds the USER turn")
ev = ui()
if ev is not None:
    t.eq(ev, [("status", "Thinking..."), ("last_cmd", "hello there"), ("status", "Local (USB)"),
              ("stats", stats_text())], "ASK offline on the UI")
t.eq(call(ASK, ""), err("prompt must be 1..4096 bytes (PROMPT_MAX)"), "an empty prompt")
t.eq(call(ASK, b"\xff"), err("prompt must be valid UTF-8"), "a prompt that is not UTF-8")

# --- CONNECT / DISCONNECT ------------------------------------------------------------
port = rig.backend_port()
for p, why in (("127.0.0.1:0:k", "invalid port"), ("127.0.0.1:70000:k", "invalid port"),
               ("127.0.0.1:8a:k", "invalid port"), ("127.0.0.1::k", "invalid port"),
               ("127.0.0.1:65536:k", "invalid port"), ("127.0.0.1:80", "format: host:port:api_key"),
               ("nohost", "format: host:port:api_key"), (":80:k", "format: host:port:api_key"),
               ("127.0.0.1:80:", "format: host:port:api_key"), ("", "format: host:port:api_key")):
    t.eq(call(CONNECT, p), err(why), "CONNECT %r" % p)
t.eq(call(CONNECT, "h" * 64 + ":80:k"), err("host must be 1..63 bytes of printable ASCII"), "a host too long")
t.eq(call(CONNECT, "127.0.0.1:80:a b"), err("api_key must be 1..127 bytes of printable ASCII"), "a key with a space")
e0 = bentoclaw.status()["error_count"]
t.eq(call(CONNECT, "127.0.0.1:1:demo-key"), err("connect failed"), "nothing listening: connect failed")
t.eq(bentoclaw.safety()["trust_level"], "usb", "a failed connect: trust back to usb")
t.eq(bentoclaw.status()["error_count"], e0 + 1, "a failed connect counts one error (as connect())")
t.eq(call(CONNECT, "127.0.0.1:%d:%s" % (port, rig.API_KEY)), (CONNECT, "127.0.0.1:%d" % port), "CONNECT: host:port back")
t.eq((bentoclaw.safety()["connected"], bentoclaw.safety()["trust_level"]), (True, "https"), "connected at HTTPS trust")
t.eq(bentoclaw.session()[-1], ("system", "Connected to TESAIoT backend"), "CONNECT adds connect()'s SYSTEM turn")
st = bentoclaw.status()
t.eq(call(STATUS), (STATUS, '{"state":"idle","exec":%d,"err":%d,"tools":%d,"session":%d,"connected":true}' % (
    st["exec_count"], st["error_count"], st["tool_count"], st["session_msgs"])), "STATUS, online")

# Online: EXEC at USB trust; ASK is an ask().
t.raises(RuntimeError, bentoclaw.tool, "probe", text="tool risk exceeds transport trust level")
t.eq(call(EXEC, "probe z"), (EXEC, "probed"), "EXEC runs a risk-2 tool at USB trust while connected")
t.eq(bentoclaw.safety()["trust_level"], "https", "and leaves the trust level as it was")
sub, reply = call(ASK, "what is up")
t.check(sub == ASK and reply.startswith("Echo: what is up (context: "), "ASK online: the backend's reply", reply)
t.eq(bentoclaw.session()[-2:], [("user", "what is up"), ("assistant", reply)], "ASK online is an ask(): USER and ASSISTANT turns")
t.eq(rig.backend_last()["body_json"]["prompt"], "what is up", "with ask()'s request")
rig.backend_mode("status500", 1)
t.eq(call(ASK, "fails"), err("backend request failed"), "ASK online, the backend fails")

t.eq(call(DISCONNECT), (DISCONNECT, "ok"), "DISCONNECT")
t.eq((bentoclaw.safety()["connected"], bentoclaw.safety()["trust_level"]), (False, "usb"), "offline, usb")
t.eq(bentoclaw.session()[-1], ("system", "Disconnected from backend"), "disconnect()'s SYSTEM turn")
t.eq(call(DISCONNECT), (DISCONNECT, "ok"), "DISCONNECT again")

# --- SAFETY / CLEAR / unknown ----------------------------------------------------------
sf = bentoclaw.safety()
t.eq(call(SAFETY), (SAFETY, '{"circuit_breaker":"%s","cooldown_ms":%d,"trust_level":"usb","connected":false,"errors":%d}' % (
    sf["circuit_breaker"], sf["cooldown_ms"], bentoclaw.status()["error_count"])), "SAFETY (extension)")
ui()
t.eq(call(CLEAR), (CLEAR, "ok"), "CLEAR")
t.eq(bentoclaw.session(), [], "the session is empty")
ev = ui()
if ev is not None:
    t.eq(ev[0], ("clear", ""), "CLEAR clears the panel")
for sub in (0x00, 0x0A, 0x30, 0x3F, 0x42, 0x7F, 0xFE, 0xFF):
    t.eq(call(sub, "x"), err("unknown sub_cmd"), "sub 0x%02x" % sub)
t.done()
