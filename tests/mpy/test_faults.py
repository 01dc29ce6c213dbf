# test_faults.py — every way the backend can misbehave is a failed request
# ("HTTPS request failed") within the bounded timeout; the request itself is
# well-formed JSON with the right headers; context beyond 200 bytes is sent.
# needs: backend
# targets: unix qemu
# qemu: icount shift=6
import claw_rig as rig
import bentoclaw

t = rig.Checker("faults")
rig.mount_ram()
rig.classic_session(bentoclaw)  # one request per ask() (no summary requests)
t.eq(rig.connect(bentoclaw), True, "connect")

# --- the request on the wire ----------------------------------------------------------
tricky = 'quote" back\\ nl\n tab\t ctl\x01\x1f del\x7f ไทย 😀 end'
reply = bentoclaw.ask(tricky)
last = rig.backend_last()
t.eq(last["valid"], True, "body is valid JSON with prompt and context")
t.eq(last["auth_ok"], True, "apikey: <key>")
t.eq(last["path"], "/ai/v1/chat", "POST path")
t.eq(last["headers"].get("Content-Type"), "application/json", "Content-Type")
t.eq(last["body_json"]["prompt"], tricky, "prompt round-trips through the JSON escaping")
t.check(reply.startswith("Echo: "), "reply", reply)

# Context larger than the 200 bytes the original binding sent.
for i in range(8):
    bentoclaw.remember("fact%d" % i, ("ข้อมูล %d " % i) * 5)
bentoclaw.ask("long context please")
ctx = rig.backend_last()["body_json"]["context"]
n = len(ctx.encode())
print("context bytes sent:", n)
t.check(n > 600, "more than 200 bytes of context are sent", n)
t.check(("ข้อมูล 7 " * 5).strip() in ctx, "the last memory value is complete in the context")

# --- faults ------------------------------------------------------------------------------
# A reply over REPLY_MAX names the limit where the transport tells it apart
# (the unix one; the emulated board's, as the board's, does not:
# docs/BACKEND.md §1).
TOO_LONG = rig.REQUEST_TEXT if rig.QEMU else "reply too long (over REPLY_MAX = 4096 bytes)"
modes = ["status500", "status404", "status302", "truncated", "huge", "garbage", "badutf8",
         "close_mid", "drop", "header_flood", "hang"]
for mode in modes:
    rig.backend_mode(mode, count=1)
    errors0 = bentoclaw.status()["error_count"]
    t0 = rig.ticks()
    t.raises(RuntimeError, bentoclaw.ask, "fault " + mode, text=TOO_LONG if mode == "huge" else rig.REQUEST_TEXT,
             what="mode %s is a failed request" % mode)
    ms = rig.elapsed(t0)
    print("mode %-12s failed after %5d ms" % (mode, ms))
    # Twice the timeout of margin for a loaded machine; without a deadline
    # the hang mode would take backend.py's 300 s.
    t.check(ms <= 3 * bentoclaw.HTTP_TIMEOUT_MS, "mode %s bounded by the timeout" % mode, ms)
    t.eq(bentoclaw.status()["error_count"], errors0 + 1, "mode %s counted as an error" % mode)
    st = bentoclaw.status()
    t.eq(st["last_result"], "reply too long" if mode == "huge" and not rig.QEMU else "error",
         "last_result after %s" % mode)
    # A success in between keeps the breaker closed for the next mode.
    r = bentoclaw.ask("recover after " + mode)
    t.check(r.startswith("Echo: recover"), "ok again after %s" % mode, r)
    t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "breaker closed after a success")

# The failed exchanges kept the USER turn; the ring is flushed either way.
t.eq(bentoclaw.status()["dirty"], False, "nothing left dirty")

# A reply larger than REPLY_MAX fails; one that fits exactly is fine.
rig.backend_control(reply="x" * bentoclaw.REPLY_MAX)
t.eq(len(bentoclaw.ask("exact fit")), bentoclaw.REPLY_MAX, "reply of exactly REPLY_MAX bytes")
rig.backend_control(reply="x" * (bentoclaw.REPLY_MAX + 1))
t.raises(RuntimeError, bentoclaw.ask, "one too many", text=TOO_LONG)
rig.backend_control(reply="ตอบ " * 100)
t.eq(bentoclaw.ask("thai reply"), "ตอบ " * 100, "Thai reply comes back intact")
rig.backend_control(reply=None)
bentoclaw.disconnect()
t.done()
