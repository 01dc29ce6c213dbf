# test_sessions_breaker.py — a summary request is a backend request for the
# breaker: when it fails during a half-open trial the breaker opens again and
# the ask() ends as a breaker refusal (no exchange), the compaction kept with
# the local digest. The breaker here was opened by three failing tools (the
# POSTs themselves succeeded), the one way a summary can be the trial.
# Runs under faketime x50 so the 30 s cooldown passes in under a second.
# needs: backend
# needs: faketime
# targets: unix qemu
import json
import time
import claw_rig as rig
import bentoclaw

t = rig.Checker("sessions-breaker")
rig.mount_ram()
bentoclaw.config(daily_reset_hour=-1)
t.eq(rig.connect(bentoclaw), True, "connect")


def boom(arg):
    raise ValueError("boom")


bentoclaw.register_tool("boom", boom)
for i in range(4):
    bentoclaw.ask("q%d" % i)
call = json.dumps({"tool_call": {"name": "boom", "arg": None}})
rig.backend_control(replies=[call, call, call, "done"])
t.eq(bentoclaw.ask("break it"), "done", "three failing tools, the POSTs answered")
t.eq(bentoclaw.safety()["circuit_breaker"], "open", "the tools opened the breaker")
t.eq(bentoclaw.status()["session_msgs"], 10, "ring full")
for _ in range(3000):
    if bentoclaw.safety()["circuit_breaker"] != "open":
        break
    time.sleep_ms(20)
t.eq(bentoclaw.safety()["circuit_breaker"], "half-open", "cooldown over")
rig.backend_mode("status500", count=1)
errors = bentoclaw.status()["errors"]
n0 = rig.backend_log()["total"]
t.raises(RuntimeError, bentoclaw.ask, "trial", text=rig.BREAKER_TEXT,
         what="the failed summary request re-opens the breaker and ends the ask()")
log = rig.backend_log()
t.eq(log["total"] - n0, 1, "only the summary request went out")
t.check("summarize" in (log["requests"][-1].get("body_json") or {}), "and it was a summary request")
t.eq(bentoclaw.safety()["circuit_breaker"], "open", "open again")
t.eq(bentoclaw.status()["errors"], errors + 2, "errors: the failed summary and the refusal")
s = bentoclaw.session()
t.eq(s[0][0], "summary", "the compaction is kept (local digest)")
t.check("trial" not in [x for _, x in s], "the refused prompt was not added", s)
t.eq(bentoclaw.status()["last_result"], "summary failed", "last_result")
t.eq(bentoclaw.status()["dirty"], False, "flushed")
bentoclaw.disconnect()
t.done()
