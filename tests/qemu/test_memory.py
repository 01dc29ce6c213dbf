# test_memory.py — remember/recall (Thai text), the limits naming their
# constants, session_clear keeps memory, a full store refuses and keeps
# what it had; status()/safety() keys. (Adapted from tests/mpy/test_memory.py.)
import bentoclaw

t = Checker("memory")
disk = mount_ramdisk()

# --- fresh device ---------------------------------------------------------------
st = bentoclaw.status()
for k in ("state", "connected", "session_msgs", "error_count", "last_result"):
    t.check(k in st, "status() has %r" % k, st)
t.eq(st["session_msgs"], 0, "no session on a fresh filesystem")
t.eq(st["connected"], False, "not connected at start")
t.eq((st["state"], st["connected"]), ("idle", False), "idle and offline at start")
sf = bentoclaw.safety()
t.eq(sf["circuit_breaker"], "closed", "breaker closed at start")
t.eq(sf["trust_level"], "usb", "resting trust level is USB")
t.eq(sf["cooldown_ms"], 0, "no cooldown at start")
t.eq(st["error_count"], 0, "no errors at start")

# --- remember / recall with Thai text -----------------------------------------------
name = "สมชาย ใจดี"
t.eq(bentoclaw.remember("name", name), True, "remember(name) succeeds")
t.eq(bentoclaw.recall("name"), name, "recall returns the Thai value")
t.eq(bentoclaw.recall("ชื่อเล่น"), None, "an absent key recalls None")
t.eq(bentoclaw.remember("ชื่อเล่น", "ต้น"), True, "Thai key")
t.eq(bentoclaw.recall("ชื่อเล่น"), "ต้น", "Thai key recalls")
t.eq(bentoclaw.remember("name", "Somchai"), True, "replace an existing key")
t.eq(bentoclaw.recall("name"), "Somchai", "replaced value")
t.eq(bentoclaw.remember("empty", ""), True, "empty value allowed")
t.eq(bentoclaw.recall("empty"), "", "empty value recalls as ''")
store = store_on_flash()
t.eq(store, [("name", "Somchai", False), ("ชื่อเล่น", "ต้น", False), ("empty", "", False)],
     "the memory store on the LittleFS (read back from its files)")
print("memory files: %d bytes" % sum(len(read_file(p) or b"") for p in MEMORY_FILES))

# --- limits name the constant ---------------------------------------------------------
k31 = "k" * 31
t.eq(bentoclaw.remember(k31, "v"), True, "31-byte key accepted")
t.eq(bentoclaw.recall(k31), "v", "31-byte key recalls")
t.raises(ValueError, bentoclaw.remember, "k" * 32, "v", contains="CLAW_MEM_KEY_MAX")
t.raises(ValueError, bentoclaw.remember, "", "v", contains="CLAW_MEM_KEY_MAX")
# 10 Thai characters are 30 bytes, 11 are 33: the limit is in bytes.
t.eq(bentoclaw.remember("ก" * 10, "x"), True, "30-byte Thai key accepted")
t.raises(ValueError, bentoclaw.remember, "ก" * 11, "x", contains="CLAW_MEM_KEY_MAX")
v127 = "v" * 127
t.eq(bentoclaw.remember("long", v127), True, "127-byte value accepted")
t.eq(bentoclaw.recall("long"), v127, "127-byte value recalls")
t.raises(ValueError, bentoclaw.remember, "long", "v" * 128, contains="CLAW_MEM_VAL_MAX")
t.raises(ValueError, bentoclaw.remember, "long", "ก" * 43, contains="CLAW_MEM_VAL_MAX")
t.eq(bentoclaw.recall("long"), v127, "a refused value leaves the old one")
thai42 = "ก" * 42  # 126 bytes
t.eq(bentoclaw.remember("thai", thai42), True, "126-byte Thai value accepted")
t.eq(bentoclaw.recall("thai"), thai42, "Thai value recalls whole")
t.raises(ValueError, bentoclaw.remember, "a\x00b", "v", what="NUL in key")
t.raises(ValueError, bentoclaw.remember, "k", "a\x00b", what="NUL in value")
t.raises(ValueError, bentoclaw.recall, "k" * 32, contains="CLAW_MEM_KEY_MAX")

# --- session_clear keeps memory ------------------------------------------------------
t.eq(bentoclaw.tool("echo", "สวัสดี"), "สวัสดี", "echo tool")
t.eq(bentoclaw.status()["session_msgs"], 1, "the tool call left a TOOL turn")
t.eq(session_on_flash(), [("tool", "echo: สวัสดี")], "the TOOL turn on flash at the idle point")
bentoclaw.session_clear()
t.eq(bentoclaw.status()["session_msgs"], 0, "session_clear empties the ring")
t.eq(session_exists(), False, "session files deleted (base and slots)")
t.eq(bentoclaw.recall("name"), "Somchai", "memory survives session_clear")
t.eq(bentoclaw.recall("ชื่อเล่น"), "ต้น", "Thai memory survives session_clear")
t.eq(bentoclaw.flush(), True, "flush with nothing dirty is True")

# --- a failing flash: remember fails, the store stays as it was ------------------------
disk.fail_writes = True
t.eq(bentoclaw.remember("name", "Broken"), False, "remember fails when the flash write fails")
disk.fail_writes = False
t.eq(bentoclaw.recall("name"), "Somchai", "the store on flash is exactly as before")

# --- the store fills up and then refuses, keeping what it had ------------------------
stored = []
for i in range(64):
    ok = bentoclaw.remember("fill%02d" % i, "value %d" % i)
    if not ok:
        break
    stored.append(i)
print("memory store took %d extra keys before refusing" % len(stored))
t.check(len(stored) < 64, "a full store refuses (remember -> False)")
t.eq(bentoclaw.recall("name"), "Somchai", "a refused remember keeps the store")
t.eq(bentoclaw.recall("fill00"), "value 0", "the first fill key is still there")
t.eq(bentoclaw.remember("name", "Somsri"), True, "replacing a key works in a full store")
t.eq(bentoclaw.recall("name"), "Somsri", "replacement in a full store")
print("bytes written by this test:", disk.bytes_written, "writes:", disk.writes, "erases:", disk.erases)
t.done()
