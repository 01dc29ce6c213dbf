# test_clock.py — the gates that run on the clock: the sliding rate window
# (60 s) and the breaker cooldown (30 s), with the board's millisecond clock.
# qemu: icount
# Runs with -icount shift=3,sleep=off: time is virtual and a WFI (sleep_ms)
# jumps to the next timer deadline, so the ~3 minutes of waiting below take a
# few seconds of real time — the emulator's faketime. ticks_ms stays the
# firmware's own clock (the SSE-300 system counter).
# timeout: 120
import time
import bentoclaw

t = Checker("clock")
mount_ramdisk()


def sleep_until(pred, step_ms=100, limit_ms=200000):
    t0 = time.ticks_ms()
    while not pred():
        if elapsed(t0) > limit_ms:
            return False
        time.sleep_ms(step_ms)
    return True


def fail(a):
    raise OSError(5)


bentoclaw.register_tool("lim", lambda a: time.ticks_ms(), rate_per_min=2)
bentoclaw.register_tool("lim1", lambda a: 1, rate_per_min=1)
bentoclaw.register_tool("fail", fail)

# --- sliding rate window: limit 2/min -------------------------------------------------
# Two calls 5 s apart, then a call every 250 ms for 140 s. The core counts
# calls in 10 s buckets over 70 s: a call stops counting 60..70 s after it
# was recorded (CLAW_RATE_GRANULARITY_MS). So: the 3rd call is admitted
# 60..70 s after the 1st, and no 60 s span ever holds more than 2 calls.
calls = [bentoclaw.tool("lim")]
time.sleep_ms(5000)
calls.append(bentoclaw.tool("lim"))
t.raises(RuntimeError, bentoclaw.tool, "lim", text=RATE_TEXT, what="3rd call within the minute")
refused = 0
while elapsed(calls[0]) < 140000:
    time.sleep_ms(250)
    try:
        calls.append(bentoclaw.tool("lim"))
    except RuntimeError as e:
        refused += 1
        if str(e) != RATE_TEXT:
            t.check(False, "only rate refusals while waiting", str(e))
            break
rel = [time.ticks_diff(c, calls[0]) for c in calls]
print("rate window: calls admitted at %s ms (%d refused)" % (rel, refused))
t.check(len(rel) >= 4 and 60000 <= rel[2] <= 70500,
        "3rd call admitted 60..70 s after the 1st (+ the 250 ms poll)", rel)
spans = [rel[i + 2] - rel[i] for i in range(len(rel) - 2)]
t.check(spans and min(spans) >= 59950, "no 60 s span holds more than 2 calls", spans)
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "rate refusals never open the breaker")
t.eq(bentoclaw.status()["error_count"], refused + 1, "every refusal counted as an error")

# --- breaker: open for 30 s, then one half-open trial ------------------------------------
bentoclaw.tool("lim1")  # lim1's quota is now used up (1/min)
for i in range(2):
    t.raises(OSError, bentoclaw.tool, "fail")
# The breaker opens inside the third failing call: its time is between the
# ticks taken before and after that call.
before = time.ticks_ms()
t.raises(OSError, bentoclaw.tool, "fail")
opened = time.ticks_ms()
call_ms = time.ticks_diff(opened, before)
sf = bentoclaw.safety()
t.eq(sf["circuit_breaker"], "open", "open after 3 failures")
t.check(29900 <= sf["cooldown_ms"] <= 30000, "cooldown starts at 30 s", sf["cooldown_ms"])
time.sleep_ms(15000)
sf = bentoclaw.safety()
t.eq(sf["circuit_breaker"], "open", "still open after 15 s")
t.check(14500 <= sf["cooldown_ms"] <= 15100, "cooldown_ms counts down", sf["cooldown_ms"])
t.raises(RuntimeError, bentoclaw.tool, "echo", "x", text=BREAKER_TEXT)
t.check(sleep_until(lambda: bentoclaw.safety()["circuit_breaker"] != "open", 50), "breaker leaves OPEN")
half = elapsed(opened)
print("breaker: half-open %d ms after opening" % half)
t.check(30000 - call_ms <= half <= 30300, "half-open once 30 s have passed (from the failing call)", half, call_ms)
t.eq(bentoclaw.safety()["cooldown_ms"], 0, "no cooldown left when half-open")

# A trial that a later gate refuses is never reported: the breaker admits no
# second trial for 30 s, but does not wedge either.
trial = time.ticks_ms()
t.raises(RuntimeError, bentoclaw.tool, "lim1", text=RATE_TEXT, what="the trial is refused by the rate gate")
t.raises(RuntimeError, bentoclaw.tool, "echo", "y", text=BREAKER_TEXT, what="no second trial while one is out")
ok = [None]


def try_echo():
    try:
        ok[0] = bentoclaw.tool("echo", "trial")
        return True
    except RuntimeError as e:
        return False


t.check(sleep_until(try_echo, 250), "a new trial is admitted eventually")
again = elapsed(trial)
print("breaker: unreported trial, next trial admitted after %d ms" % again)
t.check(30000 <= again <= 31000, "after another 30 s", again)
t.eq(ok[0], "trial", "the trial ran")
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "a successful trial closes the breaker")

# Open again; this time the trial fails: a fresh 30 s.
for i in range(3):
    t.raises(OSError, bentoclaw.tool, "fail")
t.check(sleep_until(lambda: bentoclaw.safety()["circuit_breaker"] == "half-open", 50), "half-open again")
t.raises(OSError, bentoclaw.tool, "fail", what="failing trial")
sf = bentoclaw.safety()
t.eq(sf["circuit_breaker"], "open", "a failed trial re-opens the breaker")
t.check(29900 <= sf["cooldown_ms"] <= 30000, "with a fresh cooldown", sf["cooldown_ms"])
t.raises(RuntimeError, bentoclaw.tool, "echo", "z", text=BREAKER_TEXT)
t.check(sleep_until(lambda: bentoclaw.safety()["circuit_breaker"] == "half-open", 50), "half-open a third time")
t.eq(bentoclaw.tool("uptime") > 0, True, "a built-in as the trial")
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "closed")
print("virtual time used by this test: %d s" % (time.ticks_ms() // 1000))
t.done()
