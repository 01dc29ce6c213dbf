# demo.py — the bentoclaw walk-through, run by `scripts/run.sh` on MicroPython's
# unix port (this is MicroPython code, not CPython).
#
# It mounts LittleFS on a RAM block device at "/" (the file system the board
# uses), connects to mpy/examples/backend.py on loopback (port from BENTOCLAW_PORT),
# holds a short conversation, shows that memory outlives session_clear(), shows
# the safety state, has a high-risk tool refused while the transport is only
# HTTPS-trusted, lets the backend's model ask for tools (one runs, the
# high-risk one is refused for trust: docs/BACKEND.md), drives the same tools
# over TACP v2, the BENTO AI IDE's protocol (docs/TACP.md), where the high-risk
# one runs, and disconnects. It exits 1 when something did not behave as the
# contract says, so run.sh doubles as a smoke test.

import os
import sys

import demo_setup  # before the remount: its folder is on sys.path only until then

PORT = int(os.getenv("BENTOCLAW_PORT") or "0")
KEY = os.getenv("BENTOCLAW_API_KEY") or "demo-key"

bdev = demo_setup.mount_ram_root()

import bentoclaw

problems = []


def step(title):
    print()
    print("-- " + title)


def expect(cond, what):
    if not cond:
        problems.append(what)
        print("   !! unexpected: " + what)


def show(label, value):
    # repr() would print Thai text as \u escapes; show strings as they are.
    if isinstance(value, str):
        value = "'" + value + "'"
    else:
        value = repr(value)
    print("   %s -> %s" % (label, value))


def say(prompt):
    print("   you : " + prompt)
    try:
        reply = bentoclaw.ask(prompt)
    except RuntimeError as e:
        print("   ask failed: %s" % e)
        expect(False, "ask(%r) raised %s" % (prompt, e))
        return None
    print("   bento: " + reply)
    return reply


def backend_mode(mode):
    """Switch mpy/examples/backend.py's mode through its /_control endpoint."""
    import socket

    body = '{"mode": "%s"}' % mode
    s = socket.socket()
    try:
        s.connect(socket.getaddrinfo("127.0.0.1", PORT)[0][-1])
        s.send(("POST /_control HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                "Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)).encode())
        head = s.recv(64)
    finally:
        s.close()
    return head.startswith(b"HTTP/1.1 200") or head.startswith(b"HTTP/1.0 200")


def tool_entries():
    """[(name, risk)] of the registry, from bentoclaw.tools() when present."""
    if not hasattr(bentoclaw, "tools"):
        return []
    out = []
    for t in bentoclaw.tools():
        if isinstance(t, dict):
            out.append((t.get("name"), t.get("risk", 0)))
        elif isinstance(t, (tuple, list)):
            out.append((t[0], t[1] if len(t) > 1 else 0))
        else:
            out.append((t, 0))
    return out


print("bentoclaw demo — MicroPython %s on %s" % (".".join(str(v) for v in sys.implementation.version[:3]), sys.platform))
print("LittleFS v2 in RAM: %d blocks x %d B mounted at /" % (bdev.blocks, bdev.block_size))

step("connect to the backend at 127.0.0.1:%d" % PORT)
ok = bentoclaw.connect("127.0.0.1", PORT, KEY)
show("connect()", ok)
expect(ok is True, "connect() returned %r" % (ok,))
show("safety()['trust']", bentoclaw.safety()["trust"])
if not ok:
    print("backend not reachable; is mpy/examples/backend.py running on port %d?" % PORT)
    sys.exit(1)

step("a short conversation")
say("Hello bento, are you there?")
show("remember('name', 'สมชาย')", bentoclaw.remember("name", "สมชาย"))
show("remember('city', 'Chiang Mai')", bentoclaw.remember("city", "Chiang Mai"))
reply = say("What is my name?")
expect(reply is not None and "สมชาย" in reply, "the backend did not see the name in the context")
say("ชื่ออะไร")
show("status()['session_msgs']", bentoclaw.status()["session_msgs"])

step("flush the session to flash")
show("flush()", bentoclaw.flush())
print("   files on /: %r" % sorted(os.listdir("/")))
try:
    with open("/.bentoclaw_memory") as f:
        print("   /.bentoclaw_memory:")
        for line in f.read().splitlines():
            print("     " + line)
except OSError as e:
    print("   (no memory file: %r)" % e)

step("session_clear(): the conversation goes, memory stays")
bentoclaw.session_clear()
msgs = bentoclaw.status()["session_msgs"]
show("status()['session_msgs']", msgs)
expect(msgs == 0, "session_msgs after session_clear() is %r" % (msgs,))
name = bentoclaw.recall("name")
show("recall('name')", name)
expect(name == "สมชาย", "recall('name') after session_clear() is %r" % (name,))
show("recall('nobody')", bentoclaw.recall("nobody"))

step("safety and status")
safety = bentoclaw.safety()
status = bentoclaw.status()
for k in sorted(safety):
    show("safety()['%s']" % k, safety[k])
for k in sorted(status):
    show("status()['%s']" % k, status[k])
expect(safety.get("circuit_breaker") == "closed", "breaker is not closed")
expect(safety.get("trust") == "https", "trust while connected is %r" % (safety.get("trust"),))

step("tools: a high-risk tool is refused over HTTPS")
entries = tool_entries()
if entries:
    print("   registry: %s" % ", ".join("%s(risk %s)" % e for e in entries))
low = [n for n, r in entries if r == 0]
high = [n for n, r in entries if r == 2]
calls = []
if "echo" in low:
    calls.append(("echo", "สวัสดี from a low-risk tool"))
if "uptime" in low:
    calls.append(("uptime", None))
if not calls and low:
    calls.append((low[0], None))
for name, arg in calls:
    try:
        show("tool(%r)" % name, bentoclaw.tool(name, arg))
    except Exception as e:
        print("   tool(%r) raised %r" % (name, e))
        expect(False, "low-risk tool %r refused over HTTPS" % name)
if not high:
    # No introspection: register one of our own at risk 2 for the demo.
    bentoclaw.register_tool("demo_erase", lambda arg: "erased", risk=2)
    high = ["demo_erase"]
try:
    bentoclaw.tool(high[0])
    expect(False, "high-risk tool %r ran over HTTPS" % high[0])
except RuntimeError as e:
    show("tool(%r) refused" % high[0], str(e))
    expect(str(e) == "tool risk exceeds transport trust level", "wrong refusal: %s" % e)
try:
    bentoclaw.tool("no_such_tool")
except ValueError as e:
    show("tool('no_such_tool') -> ValueError", str(e))

step("tools asked for by the backend's model (HTTPS trust)")
expect(backend_mode("tools"), "the backend did not switch to mode tools")
reply = say("run echo สวัสดีจาก bento")
expect(reply == "Tool echo ok: สวัสดีจาก bento", "the model's echo request did not run")
reply = say("run wipe_memory")
expect(reply == "Tool wipe_memory refused: tool risk exceeds transport trust level",
       "the model's wipe_memory request was not refused for trust")
show("recall('name')", bentoclaw.recall("name"))
expect(bentoclaw.recall("name") == "สมชาย", "memory changed by a refused tool")
backend_mode("ok")

step("TACP v2: the BENTO AI IDE's frames (USB trust, while still connected)")


def tacp_crc(data):
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def tacp(sub, payload=b"", seq=1):
    """One request frame through bentoclaw.tacp(); its answer (sub, text)."""
    body = bytes([sub, seq, len(payload) & 0xFF, len(payload) >> 8]) + payload
    crc = tacp_crc(body)
    out = bentoclaw.tacp(b"\xaa\x55\x30" + body + bytes([crc & 0xFF, crc >> 8]))
    n = out[5] | (out[6] << 8)
    return out[3], str(out[7 : 7 + n], "utf-8")


if hasattr(bentoclaw, "tacp"):
    for seq, (sub, payload) in enumerate(((0x03, b""), (0x40, b""), (0x06, "pet=Khao Niao".encode()),
                                          (0x41, b"pet"), (0x01, b"echo hi"), (0x01, b"wipe_memory"),
                                          (0x41, b"name"), (0x01, b"nope"), (0x55, b"")), 1):
        r = tacp(sub, payload, seq)
        print("   > 0x%02x %r\n   < 0x%02x %s" % (sub, payload, r[0], r[1]))
    expect(bentoclaw.recall("name") is None, "TACP's wipe_memory did not run at USB trust")
    show("safety()['trust_level'] after TACP", bentoclaw.safety()["trust_level"])
    expect(bentoclaw.safety()["trust_level"] == "https", "TACP left the trust level changed")

step("disconnect")
bentoclaw.disconnect()
safety = bentoclaw.safety()
show("status()['connected']", bentoclaw.status()["connected"])
show("safety()['trust']", safety["trust"])
expect(safety["trust"] == "usb", "trust after disconnect is %r" % (safety["trust"],))
show("flush()", bentoclaw.flush())
print("   flash traffic: %d writes (%d bytes), %d erases" % (bdev.writes, bdev.bytes_written, bdev.erases))

print()
if problems:
    print("demo finished with %d unexpected result(s)" % len(problems))
    sys.exit(1)
print("demo finished: all as expected")
