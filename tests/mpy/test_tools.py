# test_tools.py — the tool registry and the gate order: breaker -> trust ->
# rate check -> rate record, each refusal with its exact text; refusals use
# no quota; the 11th call of a default tool within a minute is refused;
# register_tool() limits; a raising handler is a breaker failure.
# needs: backend
# targets: unix qemu
import claw_rig as rig
import bentoclaw

t = rig.Checker("tools")
rig.mount_ram()

names = {x["name"]: x for x in bentoclaw.tools()}
for n, risk in (("echo", 0), ("uptime", 0), ("led", 1), ("wipe_memory", 2)):
    t.check(n in names and names[n]["risk"] == risk and names[n]["builtin"],
            "built-in %s with risk %d" % (n, risk), names.get(n))
t.check(isinstance(bentoclaw.tool("uptime"), int), "uptime returns an int")
t.eq(bentoclaw.tool("led", True), True, "led on")
t.eq(bentoclaw.tool("led", "toggle"), False, "led toggled off")
t.eq(bentoclaw.tool("led"), False, "led read back")

# --- high risk over USB, and its own rate limit (2/min) -----------------------------
bentoclaw.remember("secret", "ลับมาก")
t.eq(bentoclaw.tool("wipe_memory"), True, "wipe_memory over USB")
t.eq(bentoclaw.recall("secret"), None, "memory wiped")
t.eq(bentoclaw.tool("wipe_memory"), True, "second wipe within the minute")
t.raises(RuntimeError, bentoclaw.tool, "wipe_memory", text=rig.RATE_TEXT,
         what="third wipe refused by its 2/min limit")

# --- the default limit: 10 calls a minute -------------------------------------------
ok = 0
for i in range(10):
    if bentoclaw.tool("echo", "e%d" % i) == "e%d" % i:
        ok += 1
t.eq(ok, 10, "10 echo calls pass")
e0 = bentoclaw.status()["error_count"]
t.raises(RuntimeError, bentoclaw.tool, "echo", "11th", text=rig.RATE_TEXT,
         what="the 11th call within a minute is refused")
t.raises(RuntimeError, bentoclaw.tool, "echo", "12th", text=rig.RATE_TEXT)
t.eq(bentoclaw.status()["error_count"], e0 + 2, "each refusal counts an error")
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "refusals are not breaker failures")

# --- trust before rate; refusals consume no quota -----------------------------------
calls = []
bentoclaw.register_tool("probe", lambda a: calls.append(a) or len(calls), risk=2, rate_per_min=3)
t.eq(rig.connect(bentoclaw), True, "connect (trust HTTPS)")
for i in range(5):
    t.raises(RuntimeError, bentoclaw.tool, "probe", i, text=rig.TRUST_TEXT,
             what="high-risk probe refused over HTTPS #%d" % i)
t.eq(calls, [], "the handler never ran")
t.raises(RuntimeError, bentoclaw.tool, "wipe_memory", text=rig.TRUST_TEXT,
         what="trust is checked before the (exhausted) rate")
t.eq(bentoclaw.tool("led", True), True, "medium risk allowed over HTTPS")
bentoclaw.disconnect()
for i in range(3):
    t.eq(bentoclaw.tool("probe", i), i + 1, "probe over USB #%d (trust refusals used no quota)" % i)
t.raises(RuntimeError, bentoclaw.tool, "probe", 3, text=rig.RATE_TEXT, what="probe's 4th call (3/min)")
t.eq(calls, [0, 1, 2], "handler got its argument each time")

# --- register_tool: replace, argument, limits ---------------------------------------
bentoclaw.register_tool("answer", lambda a: 1)
t.eq(bentoclaw.tool("answer"), 1, "first handler")
bentoclaw.register_tool("answer", lambda a: ("second", a))
t.eq(bentoclaw.tool("answer", "x"), ("second", "x"), "re-registering replaces the handler")
t.eq(bentoclaw.tool("answer"), ("second", None), "arg defaults to None")
t.raises(ValueError, bentoclaw.register_tool, "wipe_memory", lambda a: 0, 0,
         what="a built-in cannot be replaced")
t.raises(ValueError, bentoclaw.tool, "nope", text="unknown tool", what="unknown tool (the vendor's text)")


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
# The 12 spare slots (CLAW_RATE_MAX_TOOLS - CLAW_RATE_KNOWN_TOOLS) hold the
# tools of other names: probe, answer, boom and the extras.
t.eq(added, 12 - 3, "the spare slots fill, then the registry is full")
t.eq(total, n_tools + added, "each registration took a slot")
bentoclaw.register_tool("boom", boom, risk=0)  # re-registering still works when full
t.eq(len(bentoclaw.tools()), total, "replacing does not take a slot")

# --- a raising handler: its exception propagates and the breaker counts it ------------
t.eq(rig.connect(bentoclaw), True, "connect again (HTTPS)")
msgs0 = bentoclaw.status()["session_msgs"]
e0 = bentoclaw.status()["error_count"]
e = t.raises(ValueError, bentoclaw.tool, "boom", 1, text="boom: 1", what="handler's exception propagates")
t.eq(bentoclaw.status()["error_count"], e0 + 1, "a failing tool counts an error")
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "one failure: still closed")
t.check(isinstance(bentoclaw.tool("uptime"), int), "a success resets the count")
for i in range(3):
    t.raises(ValueError, bentoclaw.tool, "boom", i)
sf = bentoclaw.safety()
t.eq(sf["circuit_breaker"], "open", "three failing tool calls open the breaker")

# The breaker is the first gate: it refuses before trust and rate are looked at.
t.raises(RuntimeError, bentoclaw.tool, "wipe_memory", text=rig.BREAKER_TEXT,
         what="breaker before trust (high risk over HTTPS)")
t.raises(RuntimeError, bentoclaw.tool, "echo", "x", text=rig.BREAKER_TEXT,
         what="breaker before rate (echo's quota is used up)")
t.raises(RuntimeError, bentoclaw.tool, "uptime", text=rig.BREAKER_TEXT)
t.raises(RuntimeError, bentoclaw.ask, "hello", text=rig.ASK_BREAKER_TEXT, what="ask refused too (the vendor's short text)")
t.check(bentoclaw.status()["session_msgs"] >= 1, "tool results were logged as TOOL turns")
bentoclaw.disconnect()
t.done()
