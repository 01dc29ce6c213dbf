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
replies = []
for i in range(1, 8):
    before = bdev.bytes_written
    reply = bentoclaw.ask("turn-%02d สวัสดี" % i)
    replies.append(reply)
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

# The ring on flash has the same newest turns: read back from the files
# (base and slots) by the rig's own reader of the layout.
import json
ring_ram = bentoclaw.session()
ring_flash = rig.session_on_flash()
t.check(rig.session_exists(), "session files exist")
t.eq(ring_flash, ring_ram, "the ring read back from flash is the ring in RAM")
want = []
for i in range(3, 8):
    want += [("user", "turn-%02d สวัสดี" % i), ("assistant", replies[i - 1])]
t.eq(ring_flash, want, "the ring on flash: the newest 10 messages, U3 A3 ... U7 A7")
total_lines = 0
bad = 0
for path in rig.SESSION_FILES:
    raw = rig.read_file(path)
    if raw is None:
        continue
    text = raw.decode()
    lines = [l for l in text.split("\n") if l]
    total_lines += len(lines)
    print("%s: %d bytes, %d lines" % (path, len(raw), len(lines)))
    for l in lines:
        try:
            json.loads(l)
        except ValueError:
            bad += 1
t.check(total_lines >= 10, "one line per message of the ring", total_lines)
t.eq(bad, 0, "every session line is JSON (JSON Lines, readable by a person)")

# Many more exchanges: the files on flash must stay bounded (the ring holds
# 10 messages; the base holds at most the ring and each slot one batch, so
# the total may lag behind the ring but not grow without limit).
sizes = []
slot_max = 0
for i in range(30):
    bentoclaw.ask("more-%02d" % i)
    sizes.append(rig.session_bytes())
    slot_max = max([slot_max] + [len(rig.read_file(p) or b"") for p in rig.SESSION_SLOTS])
print("session files over 30 more exchanges: min %d, max %d bytes (largest slot %d bytes)"
      % (min(sizes), max(sizes), slot_max))
t.check(max(sizes) < 16384, "session files stay bounded", max(sizes))
# One exchange is one batch of two messages (<= 255 bytes each, escaped
# at most 6x) and its end line.
t.check(slot_max <= 2 * (6 * 255 + 64) + 128, "no slot holds more than one batch", slot_max)
t.eq(bentoclaw.status()["session_msgs"], 10, "still 10 messages")
t.eq(rig.session_on_flash(), bentoclaw.session(), "after 30 more exchanges the ring on flash is the ring")

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
