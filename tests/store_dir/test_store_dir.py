# test_store_dir.py — the library built with BENTOCLAW_STORE_DIR=/flash
# (scripts/test_store_dir.sh): every file of the module is in /flash (the
# upstream port's mount), none in "/", everything reloads from there after a
# soft reset, and with nothing mounted at /flash a call that stores raises
# OSError naming its file there.
# needs: backend
# targets: unix
import errno
import os
import sys
import vfs

sys.path.append("tests/mpy")
import claw_rig as rig  # noqa: E402
import bentoclaw  # noqa: E402

t = rig.Checker("store-dir")


def names(d):
    return sorted(n for n in os.listdir(d) if n.startswith(".bentoclaw"))


# "/" writable too, so a file written there by mistake would show.
rig.mount_ram()
flash = rig.RamBlockDev(blocks=128)
vfs.VfsLfs2.mkfs(flash)
vfs.mount(vfs.VfsLfs2(flash), "/flash")
bc = rig.simulate_soft_reset(bentoclaw)
t.eq(bc.remember("city", "Chiang Mai"), True, "remember()")
t.eq(bc.config(auto_compact=False)["auto_compact"], False, "config()")
t.eq(rig.connect(bc), True, "connect()")
t.check(len(bc.ask("hello")) > 0, "ask()")
t.eq(bc.flush(), True, "flush()")
got = names("/flash")
for f in (".bentoclaw_memory", ".bentoclaw_config", ".bentoclaw_session"):
    t.check(f in got, "/flash/%s is there" % f, got)
t.eq(names("/"), [], "nothing of the module in /")

# A soft reset: everything comes back from /flash.
bc = rig.simulate_soft_reset(bentoclaw)
t.eq(bc.recall("city"), "Chiang Mai", "recall() after a soft reset")
t.eq(bc.config()["auto_compact"], False, "config() after a soft reset")
t.check("hello" in bc.history(), "history() after a soft reset", bc.history()[:80])

# Nothing mounted at /flash: a clear error naming the file there — with a
# writable "/" (no directory /flash in it) and with none (the upstream
# port's virtual root).
vfs.umount("/flash")
for label, err, why in (("/ writable", errno.ENOENT, "no such file or directory"),
                        ("no /", errno.ENODEV, "no writable file system there")):
    if err == errno.ENODEV:
        vfs.umount("/")
    bc = rig.simulate_soft_reset(bentoclaw)
    e = t.raises(OSError, bc.remember, "pet", "cat", what="%s: remember() raises OSError" % label)
    if e is not None:
        t.eq(e.errno, err, "%s: its errno" % label)
        # The store's file or its temporary file, whichever was written.
        text = e.args[1]
        t.check(text.startswith("memory not saved: /flash/.bentoclaw_memory") and text.endswith(": " + why),
                "%s: its text names the file in /flash and the cause" % label, text)
    if err == errno.ENOENT:
        t.eq(names("/"), [], "still nothing in /")
t.done()
