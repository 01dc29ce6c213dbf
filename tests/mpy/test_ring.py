# test_ring.py — the ring keeps the newest 10 across ask() calls, the session
# is flushed once per exchange, and how many bytes each ask() writes.
# needs: backend
# targets: unix qemu
import claw_rig as rig
import bentoclaw

t = rig.Checker("ring")
bdev = rig.mount_ram()
rig.classic_session(bentoclaw)  # the plain ring (compaction: test_sessions.py)

t.eq(rig.connect(bentoclaw), True, "connect")
t.eq(bentoclaw.status()["session_msgs"], 1, "SYSTEM message")
bentoclaw.remember("name", "สมชาย")
bdev.reset_counters()

per_ask = []
for i in range(1, 8):
    before = bdev.bytes_written
    reply = bentoclaw.ask("turn-%02d สวัสดี" % i)
    per_ask.append(bdev.bytes_written - before)
    t.check(reply.startswith("Echo: turn-%02d" % i), "reply %d is the backend's echo" % i, reply)
    want = min(1 + 2 * i, 10)
    t.eq(bentoclaw.status()["session_msgs"], want, "session_msgs after ask %d" % i)
    t.eq(bentoclaw.status()["dirty"], False, "ask %d flushed at the idle point" % i)

print("bytes written per ask():", per_ask)
print("mean bytes per ask(): %d (block device writes: %d, erases: %d)"
      % (sum(per_ask) // len(per_ask), bdev.writes, bdev.erases))

# The context of the 7th request: the ring then held the newest 10 messages,
# A2 U3 A3 ... U7; turn-01 (U1, A1) had dropped out.
body = rig.backend_last()["body_json"]
ctx = body["context"]
t.eq(body["prompt"], "turn-07 สวัสดี", "prompt sent intact (Thai kept as UTF-8)")
t.check("turn-07" in ctx, "newest turn in the context", ctx)
t.check("turn-03" in ctx, "turn-03 still in the context", ctx)
t.check("turn-01" not in ctx, "oldest turn gone from the context", ctx)
t.check("Connected to TESAIoT backend" not in ctx, "the SYSTEM message has aged out", ctx)
t.check("สมชาย" in ctx, "memory is part of the context", ctx)
print("context bytes sent with the 7th ask:", len(ctx.encode()))

# The ring on flash has the same newest turns.
raw = rig.read_file(rig.SESSION_FILE)
t.check(raw is not None, "session file exists")
if raw:
    text = raw.decode()
    print("session file: %d bytes, %d lines" % (len(raw), text.count("\n")))
    t.check("turn-07" in text, "session file holds the newest turn", text)
    lines = [l for l in text.split("\n") if l]
    t.check(len(lines) >= 10, "one line per message", text)
    import json
    bad = 0
    for l in lines:
        try:
            json.loads(l)
        except ValueError:
            bad += 1
    t.eq(bad, 0, "every session line is JSON (JSON Lines, readable by a person)")

# Many more exchanges: the file on flash must stay bounded (the ring holds
# 10 messages; the file may lag behind with an append log, but not grow
# without limit).
sizes = []
for i in range(30):
    bentoclaw.ask("more-%02d" % i)
    sizes.append(len(rig.read_file(rig.SESSION_FILE) or b""))
print("session file size over 30 more exchanges: min %d, max %d bytes" % (min(sizes), max(sizes)))
t.check(max(sizes) < 16384, "session file stays bounded", max(sizes))
t.eq(bentoclaw.status()["session_msgs"], 10, "still 10 messages")

# The backend answers from memory: the context carries it.
reply = bentoclaw.ask("what is my name?")
t.check("สมชาย" in reply, "backend read the name from the context", reply)

# session_clear empties the ring but not the memory.
bentoclaw.session_clear()
t.eq(bentoclaw.status()["session_msgs"], 0, "cleared")
reply = bentoclaw.ask("what is my name?")
t.check("สมชาย" in reply, "memory still in the context after session_clear", reply)
t.eq(bentoclaw.status()["session_msgs"], 2, "one exchange after the clear")
bentoclaw.disconnect()
t.done()
