# test_soft_reset.py — a real soft reset of the firmware, twice: Ctrl-D at
# the raw REPL, then machine.soft_reset(). bentoclaw_ensure_init() must run
# again in each new VM (breaker, rate table, error count re-initialised;
# Python tools of the old VM dropped), while what is on flash survives: the
# RAM disk sits outside the GC heap and .bss, so LittleFS, the memory store
# and the flushed ring come back. A turn no call flushed is written by the
# board's idle point before the soft reset (board.c; the core then drops the
# RAM ring and reloads it from the file).
import bentoclaw

t = Checker("soft-reset 1")
disk = mount_ramdisk()
t.eq(bentoclaw.remember("name", "สมชาย"), True, "remember before the reset")
with open("/phase1.txt", "w") as f:
    f.write("written before the soft reset")


def boom(a):
    raise OSError(5)


bentoclaw.register_tool("boom", boom)
bentoclaw.register_tool("note", lambda a: a, rate_per_min=1000)
for i in range(12):
    bentoclaw.tool("note", "turn-%02d" % i)
for i in range(10):
    bentoclaw.tool("echo", "e%d" % i)
t.raises(RuntimeError, bentoclaw.tool, "echo", "11th", text=RATE_TEXT)
for i in range(3):
    t.raises(OSError, bentoclaw.tool, "boom")
sf = bentoclaw.safety()
t.eq(sf["circuit_breaker"], "open", "breaker open before the reset")
t.eq(bentoclaw.status()["error_count"], 4, "errors before the reset")
t.eq(len([x for x in bentoclaw.tools() if not x["builtin"]]), 2, "two Python tools registered")
t.eq(bentoclaw.status()["session_msgs"], 10, "ring full")
t.eq(bentoclaw.status()["dirty"], False, "ring flushed")
t.done()

#== reset ctrl-d
import bentoclaw

t = Checker("soft-reset 2 (after Ctrl-D)")
disk = mount_ramdisk(mkfs=False)
t.eq(read_file("/phase1.txt"), b"written before the soft reset", "the RAM disk survived the soft reset")
sf = bentoclaw.safety()
t.eq(sf["circuit_breaker"], "closed", "ensure_init ran again: breaker re-initialised")
t.eq(sf["cooldown_ms"], 0, "no cooldown")
t.eq(bentoclaw.status()["error_count"], 0, "error count restarts with the VM")
t.eq(sf["trust_level"], "usb", "trust USB")
t.eq([x["name"] for x in bentoclaw.tools() if not x["builtin"]], [],
     "Python tools of the old VM dropped")
t.raises(ValueError, bentoclaw.tool, "note", "x", what="an old handler can no longer be called")
t.eq(bentoclaw.status()["session_msgs"], 10, "the ring is reloaded from flash")
t.eq(bentoclaw.status()["dirty"], False, "a reloaded ring is clean")
t.eq(bentoclaw.recall("name"), "สมชาย", "memory survives")
t.eq(bentoclaw.tool("echo", "again"), "again", "echo allowed again: rate table re-initialised")
bentoclaw.register_tool("note", lambda a: "new VM " + a, rate_per_min=1000)
t.eq(bentoclaw.tool("note", "x"), "new VM x", "tools can be registered again")
t.eq(bentoclaw.status()["session_msgs"], 10, "ring still 10")
# A SYSTEM turn no call flushes: the board's idle point (after this command,
# before the soft reset; docs/BUILD.md) writes it.
bentoclaw.disconnect()
t.eq(bentoclaw.status()["dirty"], True, "a SYSTEM turn no call flushed")
t.done(reset=True)

#== reset machine
import bentoclaw

t = Checker("soft-reset 3 (after machine.soft_reset)")
disk = mount_ramdisk(mkfs=False)
st = bentoclaw.status()
t.eq(st["session_msgs"], 10, "the ring reloads from flash again")
t.eq(st["dirty"], False, "clean")
ring = session_on_flash()
t.eq(ring[-2:], [("tool", "note: new VM x"), ("system", "Disconnected from backend")],
     "the previous VM's turns are on flash, the SYSTEM turn by the board's idle point")
t.eq(bentoclaw.status()["error_count"], 0, "errors 0 again")
t.eq(bentoclaw.recall("name"), "สมชาย", "memory survives a second reset")
# The registry limit of wipe_memory (2/min) is re-installed in every VM.
t.eq(bentoclaw.tool("wipe_memory"), True, "wipe 1")
t.eq(bentoclaw.tool("wipe_memory"), True, "wipe 2")
t.raises(RuntimeError, bentoclaw.tool, "wipe_memory", text=RATE_TEXT, what="registry limit re-installed")
t.eq(bentoclaw.recall("name"), None, "memory wiped")
t.done()
