# test_vendor_calls.py — the vendor binding's call sequences on our archive
# (issue 20; VENDOR-SDK.md §1.3, §2): ask() (claw_cb_allow, the USER turn,
# claw_session_build_context(buf, 3072 - 256), then claw_cb_failure or
# claw_cb_success and the ASSISTANT turn), execute()'s gate order (breaker ->
# trust -> rate check -> rate record; a refused call consumes no quota),
# connect()/disconnect() (trust and SYSTEM turns) and session_clear().
# needs: clock
import vrig
import vclaw

rig = vrig.rig
t = rig.Checker("vendor-calls")
rig.mount_ram()

# --- ask(): the context carries memory and the USER turn, not the reply ---
t.eq(vclaw.remember("name", "Mali"), True, "remember()")
ctx = vclaw.ask("what is my name?", "Mali.")
t.eq(vrig.memory(ctx), ["name: Mali"], "the context carries the memory")
t.eq(vrig.conversation(ctx), ["user: what is my name?"], "the USER turn is in, the reply not yet")
t.eq(vrig.conversation(vclaw.history()), ["user: what is my name?", "assistant: Mali."],
     "the ASSISTANT turn follows the answer")

# build_context(buf, 3072 - 256): at most 2815 bytes and the NUL; when the
# state does not fit, the newest turns win.
for i in range(20):
    t.eq(vclaw.remember("key%02d" % i, "v" * 100), True, "remember key%02d" % i)
for i in range(5):
    vclaw.ask("q%d " % i + "x" * 240, "a%d " % i + "y" * 240)
ctx = vclaw.ask("the newest question", "ok")
hist = vclaw.history()
t.check(len(ctx.encode()) <= 2815, "the ask context fits 3072 - 256 with its NUL", len(ctx.encode()))
t.check(len(hist.encode()) > len(ctx.encode()), "history() (3072) holds more", len(hist.encode()))
t.eq(vrig.conversation(ctx)[-1], "user: the newest question", "the newest turn is in the ask context")
t.check(len(vrig.conversation(ctx)) < len(vrig.conversation(hist)), "older turns gave way in the smaller buffer")

# --- a failed request: the USER turn stays, the breaker counts it ---
errors = vclaw.status()["error_count"]
t.raises(RuntimeError, vclaw.ask, "fails", None, text=vrig.REQUEST_TEXT)
t.eq(vrig.conversation(vclaw.history())[-1], "user: fails", "the USER turn stays after a failed request")
t.eq(vclaw.status()["error_count"], errors + 1, "a failed request is an error")

# --- execute(): the gates in the vendor's order ---
t.raises(ValueError, vclaw.execute, "no_such_tool", None, text="unknown tool")
t.eq(vclaw.connect(True), True, "connect() sets HTTPS")
t.eq(vclaw.safety()["trust_level"], "https", "trust https")
t.eq(vrig.conversation(vclaw.history())[-1], "system: Connected to TESAIoT backend", "the SYSTEM turn")
t.raises(RuntimeError, vclaw.execute, "py_exec", "x", text=vrig.TRUST_TEXT)
t.eq(vclaw.execute("gpio_set", None)["status"], "ready", "risk 1 passes at HTTPS")
# Refused by trust three times: no quota used (trustm_sign: 2/min).
for _ in range(3):
    t.raises(RuntimeError, vclaw.execute, "trustm_sign", None, text=vrig.TRUST_TEXT)
vclaw.disconnect()
t.eq(vclaw.safety()["trust_level"], "usb", "disconnect() sets USB")
t.eq(vrig.conversation(vclaw.history())[-1], "system: Disconnected from backend", "its SYSTEM turn")
t.eq(vclaw.execute("trustm_sign", None)["confirm"], True, "trustm_sign 1 of 2")
t.eq(vclaw.execute("trustm_sign", None)["risk"], 2, "trustm_sign 2 of 2: the refusals cost no quota")
t.raises(RuntimeError, vclaw.execute, "trustm_sign", None, text=vrig.RATE_TEXT)
# Trust is checked before the rate: an exhausted tool at HTTPS says trust.
t.eq(vclaw.connect(True), True, "connect() again")
t.raises(RuntimeError, vclaw.execute, "trustm_sign", None, text=vrig.TRUST_TEXT)
t.eq(vclaw.connect(False), False, "a failed connect()")
t.eq(vclaw.safety()["trust_level"], "usb", "a failed connect() leaves USB")

# The breaker first: three failed requests in a row open it (the successful
# execute() calls above each closed it again).
for _ in range(3):
    t.raises(RuntimeError, vclaw.ask, "fails", None, text=vrig.REQUEST_TEXT)
sf = vclaw.safety()
t.eq(sf["circuit_breaker"], "open", "three failures open the breaker")
# What is left of the 30 s: the clock (libfaketime's offset on the real one)
# may have moved a millisecond or two since the third failure.
t.check(29900 <= sf["cooldown_ms"] <= 30000, "for 30 s", sf["cooldown_ms"])
t.raises(RuntimeError, vclaw.ask, "refused", None, text="circuit breaker open")
t.raises(RuntimeError, vclaw.execute, "gpio_read", None, text=vrig.BREAKER_TEXT)
t.raises(RuntimeError, vclaw.execute, "trustm_sign", None, text=vrig.BREAKER_TEXT)
t.eq(vrig.conversation(vclaw.history())[-1], "user: fails", "a refused ask() adds no turn")
rig.advance_clock(30000)
t.eq(vclaw.safety()["circuit_breaker"], "half-open", "half-open after 30 s")
t.eq(vclaw.execute("gpio_read", None)["status"], "ready", "the trial call passes")
t.eq(vclaw.safety()["circuit_breaker"], "closed", "its success closes the breaker")

# --- session_clear(): the conversation goes, memory stays ---
vclaw.session_clear()
hist = vclaw.history()
t.eq(vrig.conversation(hist), [], "no conversation after session_clear()")
t.eq(vrig.memory(hist)[0], "name: Mali", "memory kept")
t.eq(vclaw.status()["session_msgs"], 0, "session_msgs 0")
t.done()
