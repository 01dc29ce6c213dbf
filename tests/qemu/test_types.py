# test_types.py — hostile input on the target: wrong types raise TypeError,
# bad values ValueError (naming the limit), and nothing a script passes
# crashes the firmware (a small fuzz); deep recursion in a tool handler, a
# block device that calls back into bentoclaw, and MemoryError inside a
# handler end as Python exceptions. (Adapted from tests/mpy/test_types.py.)
import gc
import bentoclaw

t = Checker("types")
disk = mount_ramdisk()

T, V = TypeError, ValueError
cases = [
    (T, bentoclaw.ask, (1,)),
    (T, bentoclaw.ask, (None,)),
    (T, bentoclaw.ask, (b"bytes",)),
    (V, bentoclaw.ask, ("",)),
    (V, bentoclaw.ask, ("x" * (bentoclaw.PROMPT_MAX + 1),)),
    (V, bentoclaw.ask, ("a\x00b",)),
    (T, bentoclaw.remember, (1, "v")),
    (T, bentoclaw.remember, ("k", None)),
    (T, bentoclaw.remember, ("k", 5)),
    (T, bentoclaw.remember, (b"k", "v")),
    (T, bentoclaw.recall, (None,)),
    (T, bentoclaw.recall, (b"k",)),
    (T, bentoclaw.connect, (1, 80, "k")),
    (T, bentoclaw.connect, ("127.0.0.1", "80", "k")),
    (T, bentoclaw.connect, ("127.0.0.1", 80.0, "k")),
    (T, bentoclaw.connect, ("127.0.0.1", 80, None)),
    (V, bentoclaw.connect, ("127.0.0.1", 0, "k")),
    (V, bentoclaw.connect, ("127.0.0.1", 65536, "k")),
    (V, bentoclaw.connect, ("127.0.0.1", -1, "k")),
    (V, bentoclaw.connect, ("127.0.0.1", 1 << 70, "k")),
    (V, bentoclaw.connect, ("", 80, "k")),
    (V, bentoclaw.connect, ("h" * 64, 80, "k")),
    (V, bentoclaw.connect, ("127.0.0.1\r\nX-Evil: 1", 80, "k")),
    (V, bentoclaw.connect, ("127.0.0.1", 80, "key\r\nX-Evil: 1")),
    (V, bentoclaw.connect, ("127.0.0.1", 80, "k" * 128)),
    (V, bentoclaw.connect, ("127.0.0.1", 80, "")),
    (T, bentoclaw.tool, (1,)),
    (T, bentoclaw.tool, (None, None)),
    (V, bentoclaw.tool, ("no-such-tool",)),
    (V, bentoclaw.tool, ("",)),
    (V, bentoclaw.tool, ("x" * 32,)),
    (V, bentoclaw.tool, ("ec\x00ho",)),
    (T, bentoclaw.tool, ("echo", 5)),
    (T, bentoclaw.tool, ("uptime", "arg")),
    (T, bentoclaw.tool, ("led", 1.5)),
    (T, bentoclaw.register_tool, ("t", 5)),
    (T, bentoclaw.register_tool, ("t", None)),
    (T, bentoclaw.register_tool, (5, print)),
    (T, bentoclaw.register_tool, ("t", print, "1")),
    (T, bentoclaw.register_tool, ("t", print, 0, 1.5)),
    (V, bentoclaw.register_tool, ("t", print, 3)),
    (V, bentoclaw.register_tool, ("t", print, -1)),
    (V, bentoclaw.register_tool, ("t", print, 0, -1)),
    (V, bentoclaw.register_tool, ("t", print, 0, 65536)),
    (V, bentoclaw.register_tool, ("", print)),
    (V, bentoclaw.register_tool, ("n" * 32, print)),
    (V, bentoclaw.register_tool, ("echo", print)),
]
for exc, fn, args in cases:
    t.raises(exc, fn, *args)
t.raises(V, bentoclaw.remember, "k" * 32, "v", text="key must be 1..31 bytes (CLAW_MEM_KEY_MAX)")
t.raises(V, bentoclaw.remember, "k", "v" * 128, text="value must be 0..127 bytes (CLAW_MEM_VAL_MAX)")
t.raises(T, lambda: bentoclaw.register_tool("kw", print, risk="high"), what="risk='high' TypeError")
t.raises(T, lambda: bentoclaw.register_tool(name="kw"), what="missing handler TypeError")
sf = bentoclaw.safety()
t.eq(sf["circuit_breaker"], "closed", "argument errors do not touch the breaker")
t.eq(bentoclaw.status()["error_count"], 0, "argument errors are not counted as gate refusals")

# --- fuzz: every entry point with assorted junk; only Python exceptions ------------
junk = [None, 0, -1, 1 << 64, 3.5, "", "x", "ก" * 200, "\x00", "\ud7ff", "a\r\nb",
        b"", b"\xff\xfe", bytearray(3), [], {}, (1, 2), print, object(), "x" * 5000]
calls = [bentoclaw.ask, bentoclaw.recall, bentoclaw.tool]
count = 0
for j in junk:
    for fn in calls:
        try:
            fn(j)
        except Exception:
            pass
        count += 1
    for j2 in junk[:8]:
        for fn2 in (bentoclaw.remember, bentoclaw.tool):
            try:
                fn2(j, j2)
            except Exception:
                pass
            count += 1
        try:
            bentoclaw.connect(j, j2, j)
        except Exception:
            pass
        count += 1
        try:
            bentoclaw.register_tool(j, j2)
        except Exception:
            pass
        count += 1
print("fuzz calls survived:", count)
t.check(isinstance(bentoclaw.status(), dict), "module still answers after the fuzz")
t.eq(bentoclaw.safety()["trust_level"], "usb", "trust at USB after the fuzz")

# --- deep recursion inside a tool handler: RuntimeError, not a crash --------------------
def rec(n):
    return rec(n + 1)


bentoclaw.register_tool("rec", lambda a: rec(0))
e0 = bentoclaw.status()["error_count"]
d0 = board.stack_paint()
e = t.raises(RuntimeError, bentoclaw.tool, "rec", what="unbounded recursion in a handler")
peak = board.stack_used()
print("recursion stopped at %d bytes of %d of stack (%s)" % (peak, board.stack_size(), e))
t.check(peak < board.stack_size(), "the stack limit stopped it inside the stack region", peak)
t.eq(bentoclaw.status()["error_count"], e0 + 1, "a handler that blows the recursion limit is a tool failure")

# --- MemoryError inside a handler -------------------------------------------------------
def hog(a):
    keep = []
    while True:
        keep.append(bytearray(16 * 1024))


bentoclaw.register_tool("hog", hog)
t.raises(MemoryError, bentoclaw.tool, "hog", what="MemoryError propagates from a handler")
gc.collect()
t.eq(bentoclaw.tool("echo", "after hog"), "after hog", "module works after a MemoryError")


# --- a block device that calls back into bentoclaw during a file operation ----------------
class Reentrant(RamDisk):
    def writeblocks(self, block, buf, off=0):
        if self.reenter:
            bentoclaw.status()  # raises inside the VFS callback
        return RamDisk.writeblocks(self, block, buf, off)


rd = Reentrant()
rd.reenter = False
import vfs

vfs.VfsLfs2.mkfs(rd)
vfs.umount("/")
vfs.mount(vfs.VfsLfs2(rd), "/")
bentoclaw.disconnect()  # dirty SYSTEM turn
rd.reenter = True
r = bentoclaw.flush()
t.eq(r, False, "re-entry from the block device fails the flush cleanly")
t.eq(bentoclaw.status()["dirty"], True, "the ring stays dirty for a retry")
rd.reenter = False
t.eq(bentoclaw.flush(), True, "the retry succeeds")
t.done()
