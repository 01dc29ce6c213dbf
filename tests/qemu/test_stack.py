# test_stack.py — stack use of bentoclaw calls on the Cortex-M55, measured by
# stack painting (board.stack_paint / board.stack_used). Each figure is the
# deepest stack below the caller's frame during the call: the binding, the
# Rust core, the VFS bridge, LittleFS and the Python block device of the
# rig (its readblocks/writeblocks run in the VM, as a Python bdev does on a
# board). A real board's C block driver needs less.
import bentoclaw

t = Checker("stack")
disk = mount_ramdisk()
LIMIT = 16 * 1024  # budget per call; the stack region is 64 KiB


def measure(what, fn, *args):
    base = board.stack_paint()
    fn(*args)
    used = board.stack_used() - base
    print("stack %-44s %5d bytes" % (what, used))
    t.check(0 < used < LIMIT, "%s uses under %d bytes" % (what, LIMIT), used)
    return used


def nothing():
    pass


measure("(a Python call that does nothing)", nothing)
measure("status()", bentoclaw.status)
measure("remember() (memory file rewrite)", bentoclaw.remember, "name", "สมชาย")
measure("recall()", bentoclaw.recall, "name")
measure("tool('echo') (gates + TOOL turn + flush)", bentoclaw.tool, "echo", "x" * 200)
bentoclaw.register_tool("note", lambda a: a, rate_per_min=1000)
for i in range(12):
    bentoclaw.tool("note", "ข้อความ %d " % i + "y" * 200)
bentoclaw.disconnect()
measure("flush() (dirty ring of 10 turns)", bentoclaw.flush)
measure("connect() (fails: no network)", bentoclaw.connect, "h", 1, "k")
measure("session_clear()", bentoclaw.session_clear)
t.done()

#== reset ctrl-d
import bentoclaw

t = Checker("stack after reset")
disk = mount_ramdisk(mkfs=False)
LIMIT = 16 * 1024
base = board.stack_paint()
n = bentoclaw.status()["session_msgs"]
used = board.stack_used() - base
print("stack %-44s %5d bytes" % ("status() loading the ring from flash", used))
t.check(0 < used < LIMIT, "ring reload under %d bytes" % LIMIT, used)
t.done()
