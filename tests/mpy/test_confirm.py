# test_confirm.py — `confirm` is real: a tool whose registry entry says
# confirm does not run when the backend's model asks for it until the person
# at the device confirms it with bentoclaw.confirm(); the wait is bounded
# (60 s, CLAW_CONFIRM_TIMEOUT_MS), after it the tool is refused. What is not
# held: the REPL's own calls, execute(), the USB host's TACP EXEC (the IDE
# confirms with its user), a call the trust gate refuses.
# needs: backend
# needs: clock
# targets: unix
import json
import claw_rig as rig
import bentoclaw

t = rig.Checker("confirm")
rig.mount_ram()

NOTHING = "no tool waits for confirmation"
LATE = "confirmation too late: the tool was refused (60 s, CLAW_CONFIRM_TIMEOUT_MS)"
WAITING = "waiting for the person at the device to confirm (60 s)"

ran = []
bentoclaw.register_tool("valve", lambda a: ran.append(a) or "opened " + str(a), 1, 10, "Open the valve", True)
bentoclaw.register_tool("plain", lambda a: "plain " + str(a), 1, 10, "No confirmation", False)
t.raises(RuntimeError, bentoclaw.confirm, text=NOTHING, what="nothing held at start")
t.eq(bentoclaw.status()["pending_confirm"], "", "status(): nothing pending")

t.eq(rig.connect(bentoclaw), True, "connect")
rig.backend_control(mode="tools")

# --- the model asks: the call is held, the model hears "refused: waiting" ------------------
bentoclaw._ui_events()
reply = bentoclaw.ask("run valve open")
t.eq(ran, [], "the tool did not run")
tr = rig.backend_last()["body_json"].get("tool_result")
t.eq(tr, {"name": "valve", "status": "refused", "result": WAITING}, "the model hears it waits")
t.eq(reply, "Tool valve refused: " + WAITING, "ask() returns the model's answer")
t.eq(bentoclaw.status()["pending_confirm"], "valve", "status(): valve waits")
t.check(("tool", "valve", "waiting for confirmation") in [(r, ) + tuple(x.split(": ", 1)) for r, x in
        bentoclaw.session()], "TOOL turn 'valve: waiting for confirmation'", bentoclaw.session())
t.check(("progress", "Confirm valve?") in bentoclaw._ui_events(), "the panel asks: PROGRESS Confirm valve?")

# A second confirm tool while one waits: refused at once.
bentoclaw.register_tool("door", lambda a: "door", 1, 10, "Door", True)
reply = bentoclaw.ask("run door")
t.eq(rig.backend_last()["body_json"]["tool_result"],
     {"name": "door", "status": "refused", "result": "another tool waits for confirmation"},
     "one call held at a time")
# A tool without the flag runs as usual.
bentoclaw.ask("run plain x")
t.eq(rig.backend_last()["body_json"]["tool_result"], {"name": "plain", "status": "ok", "result": "plain x"},
     "a tool without confirm runs")

# --- the person confirms: the held call runs, with its argument -----------------------------
e0 = bentoclaw.status()["exec_count"]
t.eq(bentoclaw.confirm(), "opened open", "confirm() runs it and returns its result")
t.eq(ran, ["open"], "with the argument the model gave")
t.eq(bentoclaw.status()["exec_count"], e0 + 1, "counted as a call")
t.eq(bentoclaw.session()[-1], ("tool", "valve: opened open"), "its TOOL turn")
t.eq(bentoclaw.status()["pending_confirm"], "", "nothing waits any more")
t.raises(RuntimeError, bentoclaw.confirm, text=NOTHING, what="confirming twice")

# --- refused by the person ---------------------------------------------------------------
bentoclaw.ask("run valve close")
t.eq(bentoclaw.confirm(False), None, "confirm(False) refuses it")
t.eq(ran, ["open"], "it did not run")
t.eq(bentoclaw.session()[-1], ("tool", "valve: refused: not confirmed"), "TOOL turn: refused")

# --- the wait is bounded -----------------------------------------------------------------
bentoclaw.ask("run valve late")
rig.advance_clock(59000)
t.eq(bentoclaw.status()["pending_confirm"], "valve", "still waiting after 59 s")
rig.advance_clock(2000)
t.raises(RuntimeError, bentoclaw.confirm, text=LATE, what="after 60 s: too late")
t.eq(ran, ["open"], "the late call never ran")
t.eq(bentoclaw.session()[-1], ("tool", "valve: refused: not confirmed"), "TOOL turn: refused")
t.raises(RuntimeError, bentoclaw.confirm, text=NOTHING, what="and it is gone")
# An expired call is also dropped by the next request that meets it.
bentoclaw.ask("run valve again")
rig.advance_clock(61000)
bentoclaw.ask("run valve once more")
t.eq(bentoclaw.status()["pending_confirm"], "valve", "the new request is held, the old one dropped")
t.eq(bentoclaw.confirm(), "opened once more", "the new one runs")

# --- what is not held -----------------------------------------------------------------------
t.eq(bentoclaw.tool("valve", "repl"), "opened repl", "the REPL's own tool() call is not held")
t.eq(bentoclaw.execute("valve", None)["confirm"], True, "execute() reports the flag, runs nothing")
# The USB host's own TACP EXEC of a confirm tool is not held: it runs at once
# and the one answer is its result; the same tool asked for by the backend's
# model is held.
EXEC = 0x01
n0, x0 = len(ran), bentoclaw.status()["exec_count"]
frames = rig.tacp_frames(bentoclaw.tacp(rig.tacp_frame(EXEC, "valve usb", 9)))
t.eq(frames, [(EXEC, 9, b"opened usb")], "TACP EXEC of a confirm tool: answered with its result at once")
t.eq(ran[n0:], ["usb"], "... it ran, with the rest of the line")
t.eq(bentoclaw.status()["pending_confirm"], "", "... nothing held")
t.eq(bentoclaw.status()["exec_count"], x0 + 1, "... counted as a call")
t.eq(bentoclaw.session()[-1], ("tool", "valve: opened usb"), "... its TOOL turn")
bentoclaw.ask("run valve model")
t.eq(rig.backend_last()["body_json"].get("tool_result"), {"name": "valve", "status": "refused", "result": WAITING},
     "the same tool asked for by the model: held")
t.eq(ran[n0:], ["usb"], "... it did not run")
t.eq(bentoclaw.status()["pending_confirm"], "valve", "... it waits")
t.eq(bentoclaw.confirm(False), None, "(refused by the person)")
# A confirm tool the trust gate refuses is refused, not held.
bentoclaw.register_tool("nuke", lambda a: "boom", 2, 10, "High risk", True)
bentoclaw.ask("run nuke")
t.eq(rig.backend_last()["body_json"]["tool_result"],
     {"name": "nuke", "status": "refused", "result": rig.TRUST_TEXT}, "risk 2 over HTTPS: the trust gate")
t.eq(bentoclaw.status()["pending_confirm"], "", "nothing held")

# --- the gates still apply when it runs --------------------------------------------------------
bentoclaw.register_tool("once", lambda a: "done", 1, 1, "Once a minute", True)
bentoclaw.ask("run once")
t.eq(bentoclaw.confirm(), "done", "first held call runs")
bentoclaw.ask("run once")
t.raises(RuntimeError, bentoclaw.confirm, text=rig.RATE_TEXT, what="the rate limit applies when it runs")

# --- a soft reset drops the held call ---------------------------------------------------------------
rig.advance_clock(61000)
bentoclaw.ask("run valve reset")
bc = rig.simulate_soft_reset(bentoclaw)
t.eq(bc.status()["pending_confirm"], "", "a new VM holds nothing")
t.raises(RuntimeError, bc.confirm, text=NOTHING, what="nothing to confirm after a soft reset")
bc.disconnect()
t.done()
