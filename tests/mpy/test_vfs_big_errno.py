# test_vfs_big_errno.py — a file system written in Python that raises
# OSError with an errno too big for a machine int (OSError(2**100)).
# Reading that errno must not raise a second time outside the port's
# handler (an OverflowError there would unwind through the Rust core and
# leave the file-operation guard set): the call fails cleanly (False / EIO)
# and every later call works.
#
# Before the fix (the binding read the errno with mp_obj_get_int_maybe
# outside any handler): remember() raised OverflowError and every later
# call raised "bentoclaw called from inside a file operation".
# targets: unix
import vfs
import claw_rig as rig
import fault_rig as fr
import bentoclaw

t = rig.Checker("vfs-big-errno")


class BigErrnoFS(fr.DictFS):
    def __init__(self):
        super().__init__("plain")
        self.big = False

    def open(self, path, mode):
        if self.big and "w" in mode:
            raise OSError(2**100)
        return super().open(path, mode)


fs = BigErrnoFS()
vfs.umount("/")
vfs.mount(fs, "/")
bc = rig.simulate_soft_reset(bentoclaw)
t.eq(bc.remember("city", "Chiang Mai"), True, "a plain write works")
fs.big = True
for what, call in (("remember()", lambda: bc.remember("pet", "cat")),
                   ("forget()", lambda: bc.forget("city")),
                   ("flush()", lambda: (bc.tool("echo", "x"), bc.flush())[1])):
    try:
        got = call()
        t.check(got is False, "%s with a huge errno returns False" % what, got)
    except Exception as e:  # noqa: only a clean exception is acceptable
        t.check(isinstance(e, OSError), "%s with a huge errno: a clean error" % what, repr(e))
fs.big = False
t.eq(bc.recall("city"), "Chiang Mai", "the store is as before")
t.eq(bc.remember("pet", "cat"), True, "later writes work (no guard left set)")
t.eq(bc.recall("pet"), "cat", "and read back")
t.done()
