# test_stack.py — stack use of bentoclaw calls on the emulated boards, measured
# by stack painting (board.stack_paint / board.stack_used). Each figure is the
# deepest stack below the caller's frame during the call: the binding, the
# Rust core, the VFS bridge, LittleFS and the Python block device of the
# rig (its readblocks/writeblocks run in the VM, as a Python bdev does on a
# board). A real board's C block driver needs less. Each call must stay
# within MicroPython's limit on the board's 8 KiB stack (8 KiB - 512); the
# deepest calls the API allows are tests/qemu/test_stack_depth.py.
import bentoclaw

t = Checker("stack")
disk = mount_ramdisk()
LIMIT = board.stack_limit()  # 8 KiB - 512, from the top of the 8 KiB region


def measure(what, fn, *args):
    base = board.stack_paint()
    fn(*args)
    used = board.stack_used() - base
    print("stack %-44s %5d bytes" % (what, used))
    t.check(0 < used and base + used <= LIMIT, "%s within the limit %d" % (what, LIMIT), base, used)
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
LIMIT = board.stack_limit()
base = board.stack_paint()
n = bentoclaw.status()["session_msgs"]
used = board.stack_used() - base
print("stack %-44s %5d bytes" % ("status() loading the ring from flash", used))
t.check(0 < used and base + used <= LIMIT, "ring reload within the limit %d" % LIMIT, base, used)
t.done()
