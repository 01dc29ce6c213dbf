# smoke.py — the bentoclaw module in the MicroPython that CMake built
# (tests/cmake, run by scripts/test_cmake.sh with MICROPYPATH=tests/mpy).
import sys
import vfs
import claw_rig as rig
import bentoclaw

t = rig.Checker("cmake")
t.eq(sys.platform, "bentoclaw-cmake", "running in the CMake-built host port")

# --- the API (spec section 6) ---------------------------------------------------------
names = dir(bentoclaw)
for name in ("connect", "disconnect", "ask", "remember", "recall", "session_clear",
             "flush", "status", "safety", "tool", "register_tool"):
    t.check(name in names, "dir(bentoclaw) has %s" % name, names)
    t.check(callable(getattr(bentoclaw, name, None)), "bentoclaw.%s is callable" % name)

# --- remember / recall on LittleFS in RAM mounted at "/" ------------------------------
bdev = rig.mount_ram()
t.eq(bentoclaw.recall("name"), None, "an absent key recalls None")
t.eq(bentoclaw.remember("name", "สมชาย"), True, "remember(name) succeeds")
t.eq(bentoclaw.recall("name"), "สมชาย", "recall returns the Thai value")
t.eq(bentoclaw.remember("name", "Somchai"), True, "remember replaces a key")
t.eq(bentoclaw.recall("name"), "Somchai", "recall returns the new value")
t.check(bdev.bytes_written > 0, "remember wrote to the block device", bdev.bytes_written)
stored = rig.store_on_flash()
t.eq(stored, [("name", "Somchai", False)], "the store's files hold the value (base and shards, claw_rig's reader)")
t.raises(TypeError, bentoclaw.remember, 1, "x")
t.raises(ValueError, bentoclaw.remember, "k" * 40, "x", contains="31")

# The file is LittleFS's, not the module's RAM: remount the same device.
vfs.umount("/")
rig.mount(bdev, mkfs=False)
again = rig.store_on_flash()
t.eq(again, stored, "the store's files survive a remount")

# --- safety() -------------------------------------------------------------------------
sf = bentoclaw.safety()
t.eq(sf.get("circuit_breaker"), "closed", "breaker closed")
t.eq(sf.get("trust"), "usb", "resting trust level is USB")
t.eq(sf.get("cooldown_ms"), 0, "no cooldown")
t.eq(sf.get("errors"), 0, "no errors")

t.done()
