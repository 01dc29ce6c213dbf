# test_tools.py — the tool registry and the gates without a backend:
# breaker -> trust -> rate check -> rate record, each refusal with its exact
# text and an error count; refusals use no quota; the 11th call of a
# default tool within a minute is refused; register_tool() limits; a raising
# handler is a breaker failure, three open the breaker, which then refuses
# before trust and rate. (Adapted from tests/mpy/test_tools.py; the
# HTTPS-trust cases need a backend and stay in tests/mpy.)
import bentoclaw

t = Checker("tools")
mount_ramdisk()

names = {x["name"]: (x["name"], x["risk"], x["rate_per_min"], x["builtin"]) for x in bentoclaw.tools()}
for n, risk, rate in (("echo", 0, 10), ("uptime", 0, 10), ("led", 1, 10), ("wipe_memory", 2, 2)):
    t.eq(names.get(n), (n, risk, rate, True), "built-in %s" % n)
t.check(isinstance(bentoclaw.tool("uptime"), int), "uptime returns an int")
t.eq(bentoclaw.tool("led", True), True, "led on")
t.eq(bentoclaw.tool("led", "toggle"), False, "led toggled off")
t.eq(bentoclaw.tool("led"), False, "led read back")
t.eq(bentoclaw.tool("echo"), "", "echo without an argument")

# --- high risk over USB, and its own rate limit (2/min) -----------------------------
bentoclaw.remember("secret", "ลับมาก")
t.eq(bentoclaw.tool("wipe_memory"), True, "wipe_memory over USB")
t.eq(bentoclaw.recall("secret"), None, "memory wiped")
t.eq(store_exists(), False, "every memory file gone")
t.eq(bentoclaw.tool("wipe_memory"), True, "second wipe within the minute (nothing to wipe)")
t.raises(RuntimeError, bentoclaw.tool, "wipe_memory", text=RATE_TEXT,
         what="third wipe refused by its 2/min limit")

# --- the default limit: 10 calls a minute -------------------------------------------
ok = 1  # echo() above was the first
for i in range(9):
    if bentoclaw.tool("echo", "e%d" % i) == "e%d" % i:
        ok += 1
t.eq(ok, 10, "10 echo calls pass")
e0 = bentoclaw.status()["error_count"]
t.raises(RuntimeError, bentoclaw.tool, "echo", "11th", text=RATE_TEXT,
         what="the 11th call within a minute is refused")
t.raises(RuntimeError, bentoclaw.tool, "echo", "12th", text=RATE_TEXT)
t.eq(bentoclaw.status()["error_count"], e0 + 2, "each refusal counts an error")
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "refusals are not breaker failures")
# A malformed call to a built-in is the caller's error: checked before the gates.
t.raises(TypeError, bentoclaw.tool, "echo", 5, what="echo(5) TypeError even with the quota used up")
t.eq(bentoclaw.status()["error_count"], e0 + 2, "argument errors are not gate refusals")

# --- a failed connect leaves trust at USB: high risk still allowed -------------------
calls = []
bentoclaw.register_tool("probe", lambda a: calls.append(a) or len(calls), risk=2, rate_per_min=3)
t.eq(bentoclaw.connect("10.0.0.1", 443, "key"), False, "connect fails (no network on this board)")
t.eq(bentoclaw.safety()["trust_level"], "usb", "trust back at USB")
for i in range(3):
    t.eq(bentoclaw.tool("probe", i), i + 1, "high-risk probe over USB #%d" % i)
t.raises(RuntimeError, bentoclaw.tool, "probe", 3, text=RATE_TEXT, what="probe's 4th call (3/min)")
t.eq(calls, [0, 1, 2], "handler got its argument each time")
t.eq([(x["name"], x["risk"], x["rate_per_min"], x["builtin"]) for x in bentoclaw.tools() if x["name"] == "probe"],
     [("probe", 2, 3, False)], "tools() lists probe")

# --- register_tool: replace, argument, limits ---------------------------------------
bentoclaw.register_tool("answer", lambda a: 1)
t.eq(bentoclaw.tool("answer"), 1, "first handler")
bentoclaw.register_tool("answer", lambda a: ("second", a))
t.eq(bentoclaw.tool("answer", "x"), ("second", "x"), "re-registering replaces the handler")
t.eq(bentoclaw.tool("answer"), ("second", None), "arg defaults to None")
t.raises(ValueError, bentoclaw.register_tool, "wipe_memory", lambda a: 0, 0,
         what="a built-in cannot be replaced")
t.raises(ValueError, bentoclaw.tool, "nope", what="unknown tool")


def boom(arg):
    raise ValueError("boom: %r" % (arg,))


bentoclaw.register_tool("boom", boom)
n_tools = len(bentoclaw.tools())
added = 0
while True:
    try:
        bentoclaw.register_tool("extra%d" % added, print)
    except RuntimeError as e:
        t.check("CLAW_RATE_MAX_TOOLS" in str(e), "full registry names the limit", str(e))
        break
    added += 1
    if added > 20:
        break
total = len(bentoclaw.tools())
print("registry: %d tools (%d added to fill it)" % (total, added))
spare_used = len([x for x in bentoclaw.tools() if not x["builtin"]])
t.eq(spare_used, 12, "the 12 spare slots hold the Python tools")
t.eq(total, n_tools + added, "each registration took a slot")
bentoclaw.register_tool("boom", boom, risk=0)  # re-registering still works when full
t.eq(len(bentoclaw.tools()), total, "replacing does not take a slot")

# --- a raising handler: its exception propagates and the breaker counts it ------------
e0 = bentoclaw.status()["error_count"]
t.raises(ValueError, bentoclaw.tool, "boom", 1, text="boom: 1", what="handler's exception propagates")
t.eq(bentoclaw.status()["error_count"], e0 + 1, "a failing tool counts an error")
t.eq(bentoclaw.status()["last_result"], "tool error", "last_result after a failing tool")
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "one failure: still closed")
t.check(isinstance(bentoclaw.tool("uptime"), int), "a success resets the count")
t.eq(bentoclaw.status()["last_result"], "tool ok", "last_result after a good tool")
t.raises(ValueError, bentoclaw.tool, "boom", 1)
t.raises(ValueError, bentoclaw.tool, "boom", 2)
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "two failures: closed")
t.raises(ValueError, bentoclaw.tool, "boom", 3)
sf = bentoclaw.safety()
t.eq(sf["circuit_breaker"], "open", "three consecutive failing tool calls open the breaker")
t.check(29000 < sf["cooldown_ms"] <= 30000, "30 s cooldown running", sf["cooldown_ms"])

# The breaker is the first gate: it refuses before trust and rate are looked at.
e1 = bentoclaw.status()["error_count"]
t.raises(RuntimeError, bentoclaw.tool, "wipe_memory", text=BREAKER_TEXT,
         what="breaker before rate (wipe quota used up)")
t.raises(RuntimeError, bentoclaw.tool, "echo", "x", text=BREAKER_TEXT,
         what="breaker before rate (echo's quota is used up)")
t.raises(RuntimeError, bentoclaw.tool, "uptime", text=BREAKER_TEXT)
t.eq(bentoclaw.status()["error_count"], e1 + 3, "each breaker refusal counts an error")
t.raises(RuntimeError, bentoclaw.ask, "hello", text=NOT_CONNECTED_TEXT,
         what="ask() without a connection says so")
t.check(bentoclaw.status()["session_msgs"] >= 1, "tool results were logged as TOOL turns")
t.done()
