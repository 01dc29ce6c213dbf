# test_trust.py — connect() raises trust to HTTPS, a failed connect and a
# disconnect return it to USB; SYSTEM messages; UI events.
# needs: backend
# targets: unix qemu
import claw_rig as rig
import bentoclaw

t = rig.Checker("trust")
rig.mount_ram()
port = rig.backend_port()
# UI events are recorded by the unix port's IPC stand-in only; the firmware
# sends them to its panel (the emulated board drops them).
UI = hasattr(bentoclaw, "_ui_events")


def ui_check(cond, what):
    """cond(events) over the UI events since the last call (unix port)."""
    if UI:
        ev = bentoclaw._ui_events()
        t.check(cond(ev), what, ev)

t.eq(bentoclaw.safety()["trust_level"], "usb", "resting trust is USB")

# Port 1 (tcpmux) has no listener on a test machine: connect is refused.
dead = 1

errors0 = bentoclaw.status()["error_count"]
t.eq(bentoclaw.connect("127.0.0.1", dead, rig.API_KEY), False, "connect to a closed port fails")
t.eq(bentoclaw.safety()["trust_level"], "usb", "failed connect leaves trust at USB")
t.eq(bentoclaw.status()["connected"], False, "not connected after a failed connect")
t.eq(bentoclaw.status()["session_msgs"], 0, "a failed connect adds no SYSTEM message")
ui_check(lambda ev: ("status", "Connecting...") in ev and ("status", "Connect failed") in ev,
         "UI saw Connecting... then Connect failed")
t.raises(RuntimeError, bentoclaw.ask, "hello", what="ask without a connection")

t.eq(bentoclaw.connect("127.0.0.1", port, rig.API_KEY), True, "connect to the backend")
t.eq(bentoclaw.safety()["trust_level"], "https", "connected: trust HTTPS")
st = bentoclaw.status()
t.eq(st["connected"], True, "status connected")
t.eq(st["session_msgs"], 1, "SYSTEM message added on connect")
ui_check(lambda ev: ("status", "Online (HTTPS)") in ev, "UI shows Online (HTTPS)")

reply = bentoclaw.ask("hello")
ctx = rig.backend_last()["body_json"]["context"]
t.check("Connected to TESAIoT backend" in ctx, "context carries the SYSTEM connect message", ctx)

# High-risk tools are refused over HTTPS, allowed again after disconnect.
t.raises(RuntimeError, bentoclaw.tool, "wipe_memory", text=rig.TRUST_TEXT)
bentoclaw.disconnect()
t.eq(bentoclaw.safety()["trust_level"], "usb", "disconnect: trust back to USB")
t.eq(bentoclaw.status()["connected"], False, "disconnected")
t.eq(bentoclaw.tool("wipe_memory"), True, "high-risk tool allowed over USB")
ui_check(lambda ev: ("status", "Offline") in ev, "UI shows Offline")
t.raises(RuntimeError, bentoclaw.ask, "after disconnect", what="ask after disconnect")

# The disconnect message is in the ring: connect again and look at the context.
t.eq(bentoclaw.connect("127.0.0.1", port, rig.API_KEY), True, "reconnect")
bentoclaw.ask("again")
ctx = rig.backend_last()["body_json"]["context"]
t.check("Disconnected from backend" in ctx, "context carries the SYSTEM disconnect message", ctx)

# A connect that fails while connected also drops trust to USB.
t.eq(bentoclaw.connect("127.0.0.1", dead, rig.API_KEY), False, "second connect to a closed port")
t.eq(bentoclaw.safety()["trust_level"], "usb", "failed re-connect: trust USB")
t.eq(bentoclaw.status()["connected"], False, "failed re-connect: not connected")

# session_clear tells the UI panel (IPC is up since connect()).
ui_check(lambda ev: True, "UI events read")
bentoclaw.session_clear()
ui_check(lambda ev: ("clear", "") in ev, "session_clear sends CLAW_UI_CLEAR")

# A wrong API key: the backend answers 401, which is a failed request.
t.eq(bentoclaw.connect("127.0.0.1", port, "wrong-key"), True, "connect with a wrong key (TCP ok)")
t.raises(RuntimeError, bentoclaw.ask, "hi", text=rig.REQUEST_TEXT, what="401 is a failed request")
t.eq(rig.backend_last()["status"], 401, "backend saw the bad key")
bentoclaw.disconnect()
t.done()
