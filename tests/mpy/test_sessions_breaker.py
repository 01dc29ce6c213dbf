# test_sessions_breaker.py — the breaker and an ask() that sends more than
# one request (config(backend_summary=True): a summary request before the
# exchange). One ask() is at most one breaker failure and one error,
# whatever it sends or runs:
#   * three asks whose tools fail (the POSTs answered) open the breaker:
#     one failure each;
#   * a half-open trial whose summary request fails re-opens the breaker and
#     ends the ask() with "HTTPS request failed" — one failure, one error,
#     no exchange sent, the compaction kept with the local digest;
#   * a half-open trial whose summary request succeeds ends the trial: the
#     exchange goes out in the same ask().
# Runs on the test clock: real time runs at its own pace (the breaker stays
# open for 30 s of real time, whatever the load) and the test jumps over the
# cooldown with rig.advance_clock().
# needs: backend
# needs: clock
# targets: unix qemu
import json
import claw_rig as rig
import bentoclaw

t = rig.Checker("sessions-breaker")
rig.mount_ram()
# (compact_before_drop: opt-in; the full ring compacts before the exchange.)
bentoclaw.config(daily_reset_hour=-1, backend_summary=True, compact_before_drop=True)
t.eq(rig.connect(bentoclaw), True, "connect")


def boom(arg):
    raise ValueError("boom")


bentoclaw.register_tool("boom", boom)
for i in range(4):
    bentoclaw.ask("q%d" % i)
call = json.dumps({"tool_call": {"name": "boom", "arg": None}})
errors = bentoclaw.status()["error_count"]
for i in range(3):
    rig.backend_control(replies=[call, "done"])
    t.eq(bentoclaw.ask("break it %d" % i), "done", "a failing tool, the POSTs answered (%d)" % i)
    t.eq(bentoclaw.status()["error_count"], errors + i + 1, "one error for that ask() (%d)" % i)
t.eq(bentoclaw.safety()["circuit_breaker"], "open", "three asks whose tools failed opened the breaker")
rig.advance_clock(30000)
t.eq(bentoclaw.safety()["circuit_breaker"], "half-open", "cooldown over")

# The trial's summary request fails: the trial's one failure.
t.eq(bentoclaw.status()["session_msgs"], 10, "ring full: the next ask() compacts first")
rig.backend_mode("status500", count=1)
errors = bentoclaw.status()["error_count"]
n0 = rig.backend_log()["total"]
t.raises(RuntimeError, bentoclaw.ask, "trial", text=rig.REQUEST_TEXT,
         what="the failed summary request ends the trial ask()")
log = rig.backend_log()
t.eq(log["total"] - n0, 1, "only the summary request went out")
t.check("summarize" in (log["requests"][-1].get("body_json") or {}), "and it was a summary request")
t.eq(bentoclaw.safety()["circuit_breaker"], "open", "open again")
t.eq(bentoclaw.status()["error_count"], errors + 1, "one error for the whole ask()")
s = bentoclaw.session()
t.eq(s[0][0], "summary", "the compaction is kept (local digest)")
t.check("trial" not in [x for _, x in s], "the prompt of the failed trial was not added", s)
t.eq(bentoclaw.status()["last_result"], "summary failed", "last_result")
t.eq(bentoclaw.status()["dirty"], False, "flushed")

# The next trial: the summary (a backend that now works) ends the trial and
# the exchange follows in the same ask().
rig.advance_clock(30000)
t.eq(bentoclaw.safety()["circuit_breaker"], "half-open", "cooldown over again")
r = bentoclaw.ask("second trial")
t.check(r.startswith("Echo: second trial"), "the trial ask() answered", r)
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "the answered trial closed the breaker")
bentoclaw.disconnect()
t.done()
