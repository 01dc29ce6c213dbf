# test_bridge.py — the serial bridge's framing as the board sees it
# (docs/EMULATOR.md): every transport exchange is bounded by
# BENTOCLAW_HTTP_TIMEOUT_MS on the board's tick, and only the answer to the
# request just sent is ever taken:
#  * a damaged answer (CRC mismatch) is a failed request, at once;
#  * an answer held back past its request's deadline arrives just before
#    the next request's answer: skipped by its id, the next ask() gets its
#    own reply (never the late one);
#  * bytes that are no frame before an answer are skipped;
#  * a dropped answer is a failed request at the deadline;
#  * a bridge that is gone: ask() fails ("HTTPS request failed") and
#    connect() returns False, each at the deadline, and nothing hangs.
# Runs with -icount: board time is the instruction count, so the deadlines
# are measured on it regardless of the host's load (shift=6, 64 ns per
# instruction: the busy wait for a 5 s deadline is 78 M instructions).
# needs: backend
# boards: m33
# qemu: icount shift=6
# timeout: 120
import time
import bentoclaw

t = Checker("bridge")
mount_ramdisk()
LIMIT = bentoclaw.HTTP_TIMEOUT_MS
bentoclaw.config(auto_compact=False, daily_reset_hour=-1)  # one request per ask()
t.eq(bentoclaw.connect("127.0.0.1", BACKEND_PORT, API_KEY), True, "connect")


def timed_ask(prompt):
    t0 = time.ticks_ms()
    try:
        r = bentoclaw.ask(prompt)
    except RuntimeError as e:
        r = e
    return r, time.ticks_diff(time.ticks_ms(), t0)


def failed(r):
    return isinstance(r, RuntimeError) and str(r) == REQUEST_TEXT


r, ms = timed_ask("plain")
t.check(r == "Echo: plain" or str(r).startswith("Echo: plain"), "a plain exchange", r)
print("plain exchange: %d ms of board time" % ms)

bridge_fault(FAULT_CORRUPT)
r, ms = timed_ask("corrupted")
t.check(failed(r), "a damaged answer is a failed request", repr(r))
t.check(ms < LIMIT, "failed at once, not at the deadline (%d ms)" % ms, ms)

bridge_fault(FAULT_LATE)
r, ms = timed_ask("late one")
t.check(failed(r), "an answer held back past the deadline: failed request", repr(r))
t.check(LIMIT <= ms <= LIMIT + 500, "failed at the deadline (%d ms)" % ms, ms)
r, ms = timed_ask("the next one")
t.check(isinstance(r, str) and r.startswith("Echo: the next one"),
        "the next ask() gets its own reply, not the late one", r)

bridge_fault(FAULT_NOISE)
r, ms = timed_ask("after noise")
t.check(isinstance(r, str) and r.startswith("Echo: after noise"), "noise before a frame is skipped", r)

bridge_fault(FAULT_DROP)
r, ms = timed_ask("dropped")
t.check(failed(r), "a dropped answer: failed request", repr(r))
t.check(LIMIT <= ms <= LIMIT + 500, "at the deadline (%d ms)" % ms, ms)
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "fail, fail, ok, ok, fail: still closed")

# The bridge goes away while the board is connected.
bridge_detach()
r, ms = timed_ask("anyone there?")
t.check(failed(r), "ask() without a bridge: 'HTTPS request failed'", repr(r))
t.check(LIMIT <= ms <= LIMIT + 500, "at the deadline (%d ms)" % ms, ms)
t0 = time.ticks_ms()
ok = bentoclaw.connect("127.0.0.1", BACKEND_PORT, API_KEY)
ms = time.ticks_diff(time.ticks_ms(), t0)
t.eq(ok, False, "connect() without a bridge returns False")
t.check(LIMIT <= ms <= LIMIT + 500, "within the deadline (%d ms)" % ms, ms)
t.eq(bentoclaw.safety()["trust_level"], "usb", "and leaves trust at USB")
t.eq(bentoclaw.tool("echo", "still here"), "still here", "the board works on without its bridge")
t.done(reset=True)

#== reset machine
import time
import bentoclaw

t = Checker("bridge-gone")
mount_ramdisk(mkfs=False)
# A new VM: breaker closed. The transport believes nothing is connected;
# an ask() that reaches the transport needs a connect() first, which fails.
t0 = time.ticks_ms()
t.eq(bentoclaw.connect("127.0.0.1", BACKEND_PORT, API_KEY), False, "connect() fails again")
t.check(time.ticks_diff(time.ticks_ms(), t0) <= bentoclaw.HTTP_TIMEOUT_MS + 500, "bounded")
t.raises(RuntimeError, bentoclaw.ask, "hello", text=NOT_CONNECTED_TEXT)
t.done()
