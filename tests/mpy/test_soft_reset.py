# test_soft_reset.py — bentoclaw_ensure_init() runs once per soft reset.
#
# The unix port has no soft reset, so this simulates what the module sees
# after one: a fresh sys.modules without bentoclaw's marker, then an import
# that runs the module's __init__. C statics (the breaker, the rate table,
# the tool registry) survive, as they do on the board; Python tool handlers
# from the "old VM" must be dropped and the core re-initialised.
# targets: unix qemu
import claw_rig as rig
import bentoclaw

t = rig.Checker("soft-reset")
rig.mount_ram()


def boom(a):
    raise OSError(5)


bentoclaw.register_tool("boom", boom)
bentoclaw.register_tool("keep", lambda a: "kept")
t.eq(bentoclaw.tool("keep"), "kept", "python tool works before the reset")
for i in range(3):
    t.raises(OSError, bentoclaw.tool, "boom")
t.eq(bentoclaw.safety()["circuit_breaker"], "open", "breaker open before the reset")
bentoclaw.flush()
msgs = bentoclaw.status()["session_msgs"]

# Importing again in the same VM changes nothing.
import bentoclaw as again
t.eq(again.safety()["circuit_breaker"], "open", "a second import in the same VM is a no-op")
t.eq(len([x for x in again.tools() if not x["builtin"]]), 2, "python tools still registered in the same VM")

# Now the "soft reset".
bc = rig.simulate_soft_reset(bentoclaw)
sf = bc.safety()
t.eq(sf["circuit_breaker"], "closed", "ensure_init ran again: breaker re-initialised")
t.eq(bc.status()["error_count"], 0, "error count restarts with the VM")
names = [x["name"] for x in bc.tools() if not x["builtin"]]
t.eq(names, [], "python tools of the old VM dropped")
t.raises(ValueError, bc.tool, "keep", what="an old handler can no longer be called")
t.eq(bc.status()["session_msgs"], msgs, "the ring is reloaded from flash")
t.eq(bc.tool("echo", "hi"), "hi", "built-ins work after the reset")

# The rate table was re-initialised and the registry limits re-installed:
# wipe_memory is limited to 2 a minute again.
t.eq(bc.tool("wipe_memory"), True, "wipe 1")
t.eq(bc.tool("wipe_memory"), True, "wipe 2")
t.raises(RuntimeError, bc.tool, "wipe_memory", text=rig.RATE_TEXT, what="registry limit re-installed")
bc.register_tool("keep", lambda a: "new VM")
t.eq(bc.tool("keep"), "new VM", "tools can be registered again")
t.done()
