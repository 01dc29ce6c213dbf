# test_ring.py — the session ring without a backend: every successful tool()
# call adds a TOOL turn "<name>: <result>" and flushes at the idle point;
# disconnect() adds a SYSTEM turn without flushing. The ring keeps the newest
# 10, the file on flash follows, a failed flush keeps the ring dirty for a
# retry, session_clear deletes the files and keeps memory. The ring on flash
# is read back from the files (base and slots) by qrig's own reader.
import json
import bentoclaw

t = Checker("ring")
disk = mount_ramdisk()
bentoclaw.remember("name", "สมชาย")
# A Python tool with a generous limit, so the ring can be filled past 10.
bentoclaw.register_tool("note", lambda a: a, rate_per_min=1000)
t.eq(bentoclaw.status()["session_msgs"], 0, "empty ring")

disk.reset_counters()
per_call = []
for i in range(1, 15):
    before = disk.bytes_written
    t.eq(bentoclaw.tool("note", "turn-%02d สวัสดี" % i), "turn-%02d สวัสดี" % i, "note %d" % i)
    per_call.append(disk.bytes_written - before)
    st = bentoclaw.status()
    t.eq(st["session_msgs"], min(i, 10), "session_msgs after call %d" % i)
    t.eq(st["dirty"], False, "call %d flushed at the idle point" % i)
print("bytes written per tool() call:", per_call)


def session_lines():
    """Every line of every session file (None: no file)."""
    out = None
    for path in SESSION_FILES:
        raw = read_file(path)
        if raw is not None:
            out = (out or []) + [l for l in raw.decode().split("\n") if l]
    return out


def ring_text():
    return "\n".join("%s: %s" % rt for rt in session_on_flash())


lines = session_lines()
t.check(lines is not None, "session files exist")
print("session files: %d lines, %d bytes" % (len(lines or []), session_bytes()))
bad = 0
for l in lines or []:
    try:
        json.loads(l)
    except ValueError:
        bad += 1
t.eq(bad, 0, "every session line is JSON (JSON Lines)")
ring = session_on_flash()
t.eq(ring, [("tool", "note: turn-%02d สวัสดี" % i) for i in range(5, 15)],
     "the ring on flash: the newest 10 turns, turn-05 .. turn-14 (Thai text kept)")

# --- disconnect(): a SYSTEM turn, dirty until flushed ------------------------------
bentoclaw.disconnect()
st = bentoclaw.status()
t.eq(st["dirty"], True, "disconnect() marks the ring dirty (no flash write)")
t.eq(st["session_msgs"], 10, "ring stays at 10")
t.check("Disconnected from backend" not in ring_text(), "not on flash yet")
t.eq(bentoclaw.flush(), True, "flush() writes it")
t.eq(bentoclaw.status()["dirty"], False, "clean after flush")
t.eq(session_on_flash()[-1], ("system", "Disconnected from backend"), "SYSTEM turn on flash")

# --- a flush that fails keeps the ring dirty; the retry writes it --------------------
bentoclaw.disconnect()
disk.fail_writes = True
t.eq(bentoclaw.flush(), False, "flush fails while the flash fails")
t.eq(bentoclaw.status()["dirty"], True, "still dirty after the failure")
disk.fail_writes = False
t.eq(bentoclaw.flush(), True, "the retry succeeds")
t.eq(bentoclaw.status()["dirty"], False, "clean after the retry")
t.eq(bentoclaw.status()["session_msgs"], 10, "nothing lost")

# --- a long result is cut to 255 bytes on a character boundary ---------------------
long = "ก" * 200  # 600 bytes
t.eq(bentoclaw.tool("note", long), long, "the caller gets the whole result")
last = session_on_flash()[-1]
stored = [last[1]] if last[0] == "tool" and last[1].startswith("note: ") else []
t.check(len(stored) == 1, "the newest entry on flash is the note turn", last)
if stored:
    b = stored[0].encode()
    t.check(len(b) <= 255, "stored turn at most 255 bytes", len(b))
    t.check(stored[0].endswith("ก"), "cut on a character boundary (valid UTF-8 ending in ก)")

# --- the files stay bounded over many calls -----------------------------------------
sizes = []
for i in range(30):
    bentoclaw.tool("note", "more-%02d" % i)
    sizes.append(session_bytes())
print("session files over 30 more calls: min %d, max %d bytes" % (min(sizes), max(sizes)))
t.check(max(sizes) < 16384, "session files stay bounded", max(sizes))
t.eq(session_on_flash(), [("tool", "note: more-%02d" % i) for i in range(20, 30)],
     "the ring on flash is the newest 10")
t.eq(bentoclaw.status()["session_msgs"], 10, "still 10 messages")

# --- built-in tools log TOOL turns too -------------------------------------------------
bentoclaw.tool("led", True)
bentoclaw.tool("uptime")
text = ring_text()
t.check("tool: led: True" in text, "led turn logged", text[-200:])
t.check("tool: uptime: " in text, "uptime turn logged")

# --- session_clear: ring and file gone, memory kept --------------------------------------
bentoclaw.session_clear()
t.eq(bentoclaw.status()["session_msgs"], 0, "cleared")
t.eq(session_exists(), False, "session files deleted (base and slots)")
t.eq(bentoclaw.recall("name"), "สมชาย", "memory survives session_clear")
bentoclaw.tool("note", "after clear")
t.eq(bentoclaw.status()["session_msgs"], 1, "a new turn after the clear")
t.eq(session_on_flash(), [("tool", "note: after clear")], "the files hold just that turn")
t.eq(len(session_lines()), 1, "one line on flash")
t.done()
