# test_vfs_faults.py — the VFS bridge under flash faults: failed writes are
# reported (remember -> False, flush -> False, ring stays dirty) and leave
# the old data; no filesystem at all is an OSError naming the file; a power cut
# at any write during remember()/flush leaves the old or the new state.
# targets: unix qemu
import vfs
import claw_rig as rig
import gc
import bentoclaw

t = rig.Checker("vfs-faults")
# 32 KiB; on the emulated board 8 blocks of 4 KiB (the upstream port's
# geometry), not the board's 256 KiB ones: the power-cut parts below copy
# the whole device at every write (test_powercut.py cuts the power on the
# board's 256 KiB blocks).
bdev = rig.mount_ram(blocks=64, board_geometry=False)

t.eq(bentoclaw.remember("k", "old"), True, "remember on a healthy device")

# --- every write fails ----------------------------------------------------------------
bdev.fail_writes = True
t.eq(bentoclaw.remember("k", "new"), False, "remember reports a failed write")
t.eq(bentoclaw.tool("echo", "while failing"), "while failing", "a tool call still works")
t.eq(bentoclaw.status()["dirty"], True, "the failed flush leaves the ring dirty")
t.eq(bentoclaw.flush(), False, "flush() reports the failure")
t.eq(bentoclaw.status()["dirty"], True, "still dirty after a failed flush()")
bdev.fail_writes = False
t.eq(bentoclaw.recall("k"), "old", "the failed remember left the old value")
t.eq(bentoclaw.flush(), True, "flush() succeeds once the device recovers")
t.eq(bentoclaw.status()["dirty"], False, "clean after the retry")
t.eq(bentoclaw.remember("k", "new"), True, "remember works again")
t.eq(bentoclaw.recall("k"), "new", "new value")

# --- writes fail part-way (the device runs out after a few hundred bytes) ------------
for budget in (0, 16, 100, 300, 600):
    bdev.fail_after = budget
    ok = bentoclaw.remember("k", "v%d" % budget)
    bdev.fail_after = None
    bdev.fail_writes = False
    got = bentoclaw.recall("k")
    t.check(got in ("new", "v%d" % budget) or (ok and got == "v%d" % budget),
            "after a write failing at %d bytes the value is old or new" % budget, ok, got)
    if ok:
        t.eq(got, "v%d" % budget, "remember True means the new value is there")
    bentoclaw.remember("k", "new")

# --- reads fail -------------------------------------------------------------------------
bdev.fail_reads = True
r = bentoclaw.recall("k")
bdev.fail_reads = False
t.check(r in (None, "new"), "recall with failing reads: None (or a cached value)", r)

# --- no filesystem mounted at all ---------------------------------------------------------
# No passing fault: an OSError naming the file (issue 22; a bare False
# before), e.errno ENODEV.
vfs.umount("/")
NO_FS = ": no writable file system there"
e = t.raises(OSError, bentoclaw.remember, "k2", "x", text=None,
             what="remember without a filesystem raises OSError")
t.check(e is not None and e.errno == 19 and e.args[1] == "memory not saved: /.bentoclaw_memory" + NO_FS,
        "its errno (ENODEV) and text", e and e.args)
t.eq(bentoclaw.recall("k2"), None, "recall without a filesystem -> None")
bentoclaw.tool("echo", "no fs")
t.eq(bentoclaw.status()["dirty"], True, "the tool call's turn waits")
e = t.raises(OSError, bentoclaw.flush, what="flush without a filesystem raises OSError")
t.check(e is not None and e.errno == 19 and e.args[1].startswith("session not saved: /.bentoclaw_session")
        and e.args[1].endswith(NO_FS), "its errno (ENODEV) and text", e and e.args)
t.eq(bentoclaw.status()["dirty"], True, "still dirty")
vfs.mount(vfs.VfsLfs2(bdev), "/")
t.eq(bentoclaw.flush(), True, "flush after re-mounting")

# --- a block device that calls back into bentoclaw -----------------------------------
# Python code running inside a core call must not re-enter the core; the
# binding refuses, the file operation fails, nothing crashes.
seen = []


def reenter(b):
    try:
        bentoclaw.remember("inner", "x")
    except RuntimeError as e:
        seen.append(str(e))


bdev.on_write = reenter
r = bentoclaw.remember("outer", "y")
bdev.on_write = None
t.check(len(seen) > 0 and "inside a file operation" in seen[0], "re-entrant call refused", seen[:1])
t.eq(bentoclaw.recall("outer"), "y" if r else None, "the outer remember is consistent with its result")
t.eq(bentoclaw.recall("inner"), None, "the inner call did nothing")
t.eq(bentoclaw.remember("after", "ok"), True, "the module works normally afterwards")

# --- power cut at every write of remember() ----------------------------------------------
snaps = []
bdev.on_write = lambda b: snaps.append(bytes(b.data))
t.eq(bentoclaw.remember("k", "after-cut"), True, "remember under observation")
bdev.on_write = None
print("remember() touched the device %d times" % len(snaps))
good = 0
for i, img in enumerate(snaps):
    d = rig.RamBlockDev(bdev.blocks, img, block_size=bdev.block_size)
    try:
        rig.mount(d, mkfs=False)
    except OSError as e:
        t.check(False, "image after write %d mounts" % i, e)
        continue
    v = bentoclaw.recall("k")
    if t.check(v in ("new", "after-cut"), "power cut after write %d: old or new value" % i, v):
        good += 1
print("power-cut images with a consistent memory store: %d/%d" % (good, len(snaps)))

# --- power cut at every write of a session flush -------------------------------------------
rig.mount(bdev, mkfs=False)
bentoclaw.flush()
before = bentoclaw.status()["session_msgs"]
# The device as it was, and every store into it since (address, bytes),
# with the count of stores after each write: image i is the first replayed
# onto a copy of the device. (A copy of the device per write does not fit
# the emulated board's GC heap, where the earlier parts leave it in pieces.)
gc.collect()
start = bytearray(bdev.data)
work = bytearray(len(start))
stores, bounds = [], []
bdev._store = lambda a, buf: (stores.append((a, bytes(buf))), rig.RamBlockDev._store(bdev, a, buf))
bdev.on_write = lambda b: bounds.append(len(stores))
bentoclaw.tool("echo", "flushed under observation")
bdev.on_write = None
del bdev._store
after = bentoclaw.status()["session_msgs"]
print("session flush touched the device %d times (%d -> %d messages)" % (len(bounds), before, after))
t.check(len(bounds) > 0, "the session flush wrote")
for i, n_stores in enumerate(bounds):
    work[:] = start
    for a, buf in stores[:n_stores]:
        work[a : a + len(buf)] = buf
    rig.mount(rig.RamBlockDev(bdev.blocks, storage=work, block_size=bdev.block_size), mkfs=False)
    bc = rig.simulate_soft_reset(bentoclaw)  # drop the RAM ring: reload from "flash"
    n = bc.status()["session_msgs"]
    t.check(n in (before, after), "power cut after write %d: previous or new ring" % i, n)
t.done()
