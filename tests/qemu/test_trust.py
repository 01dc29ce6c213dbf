# test_trust.py — trust without a backend: the resting level is USB; a
# failed connect() (no backend is reachable: the M55 has no network, the
# M33's bridge reaches loopback hosts only) raises trust to HTTPS only
# while trying and leaves it at USB, counts an error and adds no SYSTEM
# turn; disconnect() adds one; ask() needs a connection.
import bentoclaw

t = Checker("trust")
mount_ramdisk()

t.eq(bentoclaw.safety()["trust_level"], "usb", "resting trust is USB")
e0 = bentoclaw.status()["error_count"]
t.eq(bentoclaw.connect("192.168.1.10", 8443, "demo-key"), False, "connect fails cleanly")
sf, st = bentoclaw.safety(), bentoclaw.status()
t.eq(sf["trust_level"], "usb", "failed connect leaves trust at USB")
t.eq(st["error_count"], e0 + 1, "a failed connect counts an error")
t.eq(st["connected"], False, "not connected")
t.eq((st["state"], st["connected"]), ("idle", False), "idle, not connected")
t.eq(st["session_msgs"], 0, "a failed connect adds no SYSTEM message")
t.eq(bentoclaw.tool("wipe_memory"), True, "high-risk tool allowed over USB")
t.raises(RuntimeError, bentoclaw.ask, "hello", text=NOT_CONNECTED_TEXT, what="ask without a connection")
t.eq(bentoclaw.status()["error_count"], e0 + 2, "ask without a connection counts an error")
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "and is no breaker failure")

# Many failed connects in a row: still USB, breaker untouched.
for i in range(5):
    bentoclaw.connect("h%d.example" % i, 443, "k")
t.eq(bentoclaw.safety()["trust_level"], "usb", "still USB after 5 failed connects")
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "failed connects are not breaker failures")

m0 = bentoclaw.status()["session_msgs"]  # the wipe_memory TOOL turn
bentoclaw.disconnect()
st = bentoclaw.status()
t.eq(st["session_msgs"], m0 + 1, "disconnect adds the SYSTEM message")
t.eq(bentoclaw.safety()["trust_level"], "usb", "disconnect: USB")
t.eq(bentoclaw.flush(), True, "flush it")
t.check(("system", "Disconnected from backend") in session_on_flash(), "SYSTEM text on flash")
t.check(("system", "Connected to TESAIoT backend") not in session_on_flash(),
        "no connect message after a failed connect")
bentoclaw.session_clear()  # IPC was initialised by connect(): the board drops UI messages
t.eq(bentoclaw.status()["session_msgs"], 0, "session_clear")
t.done()
