# test_breaker.py — three failed requests open the breaker; ask() and tool()
# are refused with the breaker text until the cooldown has passed; a
# half-open trial that succeeds closes it, one that fails re-opens it.
# Runs on the test clock: time runs at its real pace (so the breaker stays
# open for 30 s of real time, whatever the machine's load) and the test moves
# it over the cooldown with rig.advance_clock().
# needs: backend
# needs: clock
# targets: unix qemu
import claw_rig as rig
import bentoclaw

t = rig.Checker("breaker")
rig.mount_ram()
rig.classic_session(bentoclaw)  # one request per ask() (no summary requests)
t.eq(rig.connect(bentoclaw), True, "connect")
t.check(bentoclaw.ask("warm up").startswith("Echo:"), "a first ask succeeds")


# Real time that may pass between two calls of this test without a check
# changing its outcome: 10 s, far beyond any stall of a loaded machine.
MARGIN_MS = 10000


def wait_cooldown(what):
    """Moves the clock over the 30 s cooldown: still open 20 s on, at least
    30 s on it is over. Returns safety() then."""
    rig.advance_clock(30000 - MARGIN_MS)
    t.eq(bentoclaw.safety()["circuit_breaker"], "open", what + ": still open 20 s into the cooldown")
    rig.advance_clock(MARGIN_MS)
    return bentoclaw.safety()


def open_breaker():
    rig.backend_mode("status500")
    for i in range(3):
        t.raises(RuntimeError, bentoclaw.ask, "fail %d" % i, text=rig.REQUEST_TEXT,
                 what="backend 500 #%d is a failed request" % (i + 1))
        if i < 2:
            t.eq(bentoclaw.safety()["circuit_breaker"], "closed",
                 "still closed after %d failures" % (i + 1))


# fail, fail, success, fail: failures count only when consecutive.
rig.backend_mode("status500", count=2)
for i in range(2):
    t.raises(RuntimeError, bentoclaw.ask, "f%d" % i, text=rig.REQUEST_TEXT)
t.check(bentoclaw.ask("ok").startswith("Echo:"), "success in between")
rig.backend_mode("status500", count=1)
t.raises(RuntimeError, bentoclaw.ask, "f3", text=rig.REQUEST_TEXT)
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "fail, fail, success, fail stays closed")
t.check(bentoclaw.ask("ok again").startswith("Echo:"), "and the next success")

# Three in a row open it.
open_breaker()
sf = bentoclaw.safety()
t.eq(sf["circuit_breaker"], "open", "open after 3 consecutive failures")
t.check(0 < sf["cooldown_ms"] <= 30000, "cooldown running", sf["cooldown_ms"])
print("cooldown_ms right after opening:", sf["cooldown_ms"])

# While open: nothing reaches the backend, and the refusals count as errors.
total0 = rig.backend_log()["total"]
errors0 = bentoclaw.status()["error_count"]
t.raises(RuntimeError, bentoclaw.ask, "refused", text=rig.ASK_BREAKER_TEXT)
t.raises(RuntimeError, bentoclaw.tool, "echo", "x", text=rig.BREAKER_TEXT)
t.eq(rig.backend_log()["total"], total0, "refused calls never reach the backend")
t.eq(bentoclaw.status()["error_count"], errors0 + 2, "each refusal counts an error")

# Cooldown passes (the test clock jumps over it).
rig.backend_mode("ok")
sf = wait_cooldown("first cooldown")
t.eq(sf["circuit_breaker"], "half-open", "half-open once the cooldown has passed")
t.eq(sf["cooldown_ms"], 0, "no cooldown left when half-open")

# The trial succeeds: closed again.
t.check(bentoclaw.ask("trial").startswith("Echo: trial"), "half-open trial goes through")
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "a successful trial closes the breaker")

# Open again, and this time the trial fails: a fresh cooldown.
open_breaker()
t.eq(bentoclaw.safety()["circuit_breaker"], "open", "open again")
sf = wait_cooldown("second cooldown")
t.eq(sf["circuit_breaker"], "half-open", "half-open again")
t.raises(RuntimeError, bentoclaw.ask, "failing trial", text=rig.REQUEST_TEXT)
sf = bentoclaw.safety()
t.eq(sf["circuit_breaker"], "open", "a failed trial re-opens the breaker")
t.check(sf["cooldown_ms"] > 30000 - MARGIN_MS, "with a fresh cooldown", sf["cooldown_ms"])
t.raises(RuntimeError, bentoclaw.ask, "still refused", text=rig.ASK_BREAKER_TEXT)

# A tool can be the trial as well: after the cooldown, a working tool closes it.
sf = wait_cooldown("third cooldown")
t.eq(sf["circuit_breaker"], "half-open", "half-open for a tool trial")
t.eq(bentoclaw.tool("echo", "trial"), "trial", "tool call as the half-open trial")
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "closed by the tool's success")
rig.backend_mode("ok")
bentoclaw.disconnect()
t.done()
