# test_no_root.py — a board with no writable "/" (issue 22, "another mount
# point"): Infineon's upstream port mounts its flash at /flash and leaves
# "/" the VFS's virtual root; a read-only "/" is the other case. Every call
# that would store something raises OSError, its errno the file system's
# (ENODEV: no file system there; EROFS: read-only), its text naming the file
# and the cause — "memory not saved: /.bentoclaw_memory: no writable file
# system there" — where it returned a bare False before. Reads find nothing
# (None, an empty history), the calls that store nothing work, and once a
# writable "/" is mounted everything works again. A firmware whose flash is
# elsewhere builds the library with BENTOCLAW_STORE_DIR
# (scripts/test_store_dir.sh).
# targets: unix
import errno
import vfs
import claw_rig as rig
import bentoclaw

t = rig.Checker("no-root")
ENODEV, EROFS = errno.ENODEV, 30
NO_FS = ": no writable file system there"


def umount_root():
    try:
        vfs.umount("/")
    except OSError:
        pass


def stores(bc, label, err, readable):
    """The calls that store: each raises OSError(err, '<what> not saved:
    <path>: no writable file system there'). Where the (empty) store can
    be read, forget() and pin() of a key it lacks change nothing: False."""
    mem = "/.bentoclaw_memory" + (".tmp" if readable else "")
    calls = [("remember()", lambda: bc.remember("city", "Chiang Mai"), "memory not saved: " + mem + NO_FS),
             ("config()", lambda: bc.config(auto_compact=False), "config not saved: /.bentoclaw_config.tmp" + NO_FS)]
    if readable:
        t.eq(bc.forget("city"), False, "%s: forget() of a key not there" % label)
        t.eq(bc.pin("city", True), False, "%s: pin() of a key not there" % label)
    else:
        calls += [("forget()", lambda: bc.forget("city"), "memory not saved: " + mem + NO_FS),
                  ("pin()", lambda: bc.pin("city", True), "memory not saved: " + mem + NO_FS)]
    for what, fn, text in calls:
        e = t.raises(OSError, fn, what="%s: %s raises OSError" % (label, what))
        if e is not None:
            t.eq(e.errno, err, "%s: %s's errno" % (label, what))
            t.eq(e.args[1] if len(e.args) > 1 else str(e), text, "%s: %s's text names the file" % (label, what))


# --- 1. the upstream layout: the flash at /flash, "/" the virtual root ---------------------
flash = rig.RamBlockDev(blocks=64)
vfs.VfsLfs2.mkfs(flash)
umount_root()
vfs.mount(vfs.VfsLfs2(flash), "/flash")
bc = rig.simulate_soft_reset(bentoclaw)
stores(bc, "/flash only", ENODEV, False)
t.eq(bc.recall("city"), None, "/flash only: recall() finds nothing")
t.eq(bc.history(), "", "/flash only: an empty history")
t.eq(bc.tool("echo", "hi"), "hi", "/flash only: a tool runs")
t.check(isinstance(bc.status(), dict), "/flash only: status() works")
vfs.umount("/flash")

# --- 2. a read-only "/" ----------------------------------------------------------------------
ro = rig.RamBlockDev(blocks=64)
vfs.VfsLfs2.mkfs(ro)
vfs.mount(vfs.VfsLfs2(ro), "/", readonly=True)
bc = rig.simulate_soft_reset(bentoclaw)
stores(bc, "read-only /", EROFS, True)
t.eq(bc.recall("city"), None, "read-only /: recall() finds nothing")
umount_root()

# --- 3. a writable "/" again: everything works ------------------------------------------------
rig.mount_ram()
bc = rig.simulate_soft_reset(bentoclaw)
t.eq(bc.remember("city", "Chiang Mai"), True, "writable /: remember()")
t.eq(bc.recall("city"), "Chiang Mai", "writable /: recall()")
t.eq(bc.config(auto_compact=False)["auto_compact"], False, "writable /: config()")
t.done()
