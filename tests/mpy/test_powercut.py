# test_powercut.py — spec §4 "power may be cut at any instant", proved on
# real LittleFS: for EVERY write (program or erase) of an operation, cut the
# power there (the write dropped, torn in half, or torn with the rest left
# erased; every later write lost), then reboot: a NEW interpreter process
# mounts the image and re-imports bentoclaw. The session must be exactly the
# previous or the new flushed ring (full message lists compared), the memory
# exactly the previous or the new set of pairs — never a mix, never empty —
# the file system must mount, and the next remember()/flush() must work.
#
# Operations: a turn flushed by appending (file of 12 lines), a turn flushed
# by compaction (file of 29 lines: the flush rewrites it via .tmp + rename),
# remember() of a new key, remember() replacing a key, session_clear().
# Each runs on several images of different "age" (the littlefs metadata log
# filled to different points), so cuts also land in metadata compactions.
#
# The images have the BENTO firmware's geometry (fault_rig's "bento": 8
# blocks of 256 KiB, progsize and readsize 512), on which the metadata log of
# "/" takes hundreds of commits to fill: the ages are 0 and 1, and the two
# ages around the one at which the operation makes littlefs compact "/"
# (found by stepping through ages). test_powercut_small.py runs the same on
# 512-byte blocks, where every few commits compact, at ages 0 to 11.
#
# needs: heap
# Usage: micropython test_powercut.py            (the test)
#        micropython test_powercut.py child EXP IMG   (one reboot check)
import sys
import os
import claw_rig as rig
import fault_rig as fr

SCRIPT = sys.argv[0]
fr.use_geometry(globals().get("POWERCUT_GEOMETRY", "bento"))
BENTO = fr.GEOMETRY == "bento"
BLOCKS = 8 if BENTO else 64
# metadata commits made before the operation (bento: see compaction_age())
AGES = (0, 1) if BENTO else tuple(range(12))

if fr.is_child():
    fr.child_main()  # exits

# --- the parent ---------------------------------------------------------------------

import bentoclaw

t = rig.Checker("powercut")
fr.host_dir()
MEM = [("name", "สมชาย"), ("city", "Chiang Mai"), ("k2", "two"), ("lang", "th"), ("pin", "1234")]


def old_ring(batches):
    ring = []
    for b in batches:
        ring.extend(b)
    return fr.newest(ring)


def batches_append():
    return [[("system", "s%02d" % i), ("tool", "note: t%02d" % i)] for i in range(6)]  # 12 lines


def batches_compact():
    # 29 lines: the 2-line flush would make 31 > 30, so it compacts.
    return [[("user", "q%02d" % i), ("assistant", "a%02d" % i)] for i in range(14)] + [[("tool", "note: odd")]]


TURN = [("system", "Disconnected from backend"), ("tool", "note: NEW turn ไทย")]


def op_turn(bc):
    bc.disconnect()
    return bc.tool("note", "NEW turn ไทย")


def op_mem_new(bc):
    return bc.remember("new", "ค่าใหม่")


def op_mem_replace(bc):
    return bc.remember("k2", "changed")


def op_clear(bc):
    return bc.session_clear()


def mem_with(pairs, key, value):
    out = [(k, v) for k, v in pairs if k != key]
    out.append((key, value))
    return out


# (name, session batches, operation, allowed states as (ring, mem) pairs)
SCENARIOS = [
    ("flush (append)", batches_append(), op_turn,
     [(old_ring(batches_append()), MEM), (old_ring(batches_append() + [TURN]), MEM)]),
    ("flush (compaction)", batches_compact(), op_turn,
     [(old_ring(batches_compact()), MEM), (old_ring(batches_compact() + [TURN]), MEM)]),
    ("remember (new key)", batches_append(), op_mem_new,
     [(old_ring(batches_append()), MEM), (old_ring(batches_append()), mem_with(MEM, "new", "ค่าใหม่"))]),
    ("remember (replace key)", batches_append(), op_mem_replace,
     [(old_ring(batches_append()), MEM), (old_ring(batches_append()), mem_with(MEM, "k2", "changed"))]),
    ("session_clear", batches_append(), op_clear,
     [(old_ring(batches_append()), MEM), ([], MEM)]),
]


def make_base(batches, age):
    def setup():
        fr.write_file(rig.SESSION_FILE, fr.session_text(batches).encode())
        fr.write_file(rig.MEMORY_FILE, fr.memory_text(MEM).encode())
        if BENTO:
            aged(age)
        else:
            for i in range(age):
                fr.write_file("/age%d" % i, b"x")
    return fr.make_image(setup, BLOCKS)


def aged(commits, start=0):
    """`commits` metadata commits of "/" (one small file rewritten)."""
    for i in range(start, start + commits):
        fr.write_file("/age", b"%d" % i)


def root_erased(dev):
    """Whether dev (a CutBlockDev) erased a block of the metadata pair of
    "/" (blocks 0 and 1): littlefs compacted it."""
    return any(kind == "erase" and block < 2 for kind, block, _, _ in dev.ops)


def compacts_root(img, op):
    """Whether the operation, run on the image, makes littlefs compact "/"."""
    dev = fr.CutBlockDev(img)
    bc, _ = boot(dev)
    dev.ops = []
    op(bc)
    return root_erased(dev)


def compaction_age(batches, op, limit=2000, stride=32):
    """The fewest commits before the operation after which it compacts "/".
    The aging commits themselves compact it at some point, after which the
    log is short again, so the operation compacts only in the few ages just
    before: stride until the aging compacts, then step one by one from the
    last image before it."""
    lo = make_base(batches, 0)
    lo_age = 0
    while lo_age < limit:
        dev = fr.CutBlockDev(lo)
        fr.mount_dev(dev)
        aged(stride, lo_age)
        if root_erased(dev):
            break
        lo, lo_age = dev.image(), lo_age + stride
    else:
        return None
    for age in range(lo_age, lo_age + stride):
        if compacts_root(lo, op):
            return age
        dev = fr.CutBlockDev(lo)
        fr.mount_dev(dev)
        aged(1, age)
        lo = dev.image()
    return None


def boot(dev):
    """Mount dev, reset the core, load the ring and the store (reads only)."""
    fr.mount_dev(dev)
    bc = fr.reboot_core(bentoclaw)
    bc.register_tool("note", lambda a: a, 0, 60000)
    return bc, fr.state(bc)


def check_child(states, image, label):
    """Reboot = a new process on the image: 0 old state, 1 new, None failed."""
    return fr.reboot_check(t, SCRIPT, states, image, label)


total_cuts = 0
total_losses = 0
for si, (name, batches, op, allowed) in enumerate(SCENARIOS):
    writes = []
    outcomes = [0, 0]
    cuts = 0
    losses = 0
    ages = AGES
    at = None
    if BENTO:
        at = compaction_age(batches, op)
        t.check(at is not None, "%s: some age makes the operation compact the metadata of /" % name)
        if at is not None:
            ages = AGES + tuple(a for a in (at - 1, at) if a not in AGES)
    for age in ages:
        base = make_base(batches, age)
        # A run without a cut: how many writes, and the new state.
        dev = fr.CutBlockDev(base)
        bc, before = boot(dev)
        t.eq(fr.norm(*before), fr.norm(*allowed[0]), "%s age %d: the old state loads" % (name, age))
        dev.count = 0
        dev.ops = []
        op(bc)
        n = dev.count
        if age == at:
            t.check(root_erased(dev), "%s age %d: the operation compacts the metadata of /" % (name, age))
        writes.append(n)
        t.eq(fr.norm(*fr.state(bc)), fr.norm(*allowed[1]), "%s age %d: the new state after the operation" % (name, age))
        t.check(n > 0, "%s age %d: the operation writes" % (name, age), n)
        idx = check_child(allowed, dev.image(), "%s age %d, no cut" % (name, age))
        t.eq(idx, 1, "%s age %d, no cut: the new state after a reboot" % (name, age))
        for k in range(1, n + 1):
            for mode in fr.CUT_MODES:
                dev = fr.CutBlockDev(base)
                bc, _ = boot(dev)
                dev.count = 0
                dev.cut_at = k
                dev.mode = mode
                try:
                    op(bc)  # the result does not matter: the power is gone
                    crashed = None
                except Exception as e:  # noqa: BLE001 — an exception is a bug here
                    crashed = e
                t.check(crashed is None, "%s: no exception when the power fails at write %d" % (name, k), crashed)
                t.check(dev.dead, "%s age %d: write %d was reached" % (name, age, k), dev.count)
                cuts += 1
                idx = check_child(allowed, dev.image(), "%s age %d cut at write %d/%d (%s)" % (name, age, k, n, mode))
                if idx is None or crashed is not None:
                    losses += 1
                else:
                    outcomes[idx] += 1
    print("%-24s writes per operation at ages %s: %s; %d cut points (%s) -> old %d, new %d, losses %d" % (
        name, list(ages), writes, cuts, "/".join(fr.CUT_MODES), outcomes[0], outcomes[1], losses))
    t.eq(losses, 0, "%s: no cut point loses data" % name)
    # The k-th write itself is lost or torn, so a cut at the last write (the
    # commit) still reads old; the new state is the one of the runs without
    # a cut (checked above for every age).
    t.eq(outcomes[0] + outcomes[1] + losses, cuts, "%s: every cut point accounted for" % name)
    fr.reliability("power cut (%s): %s" % (fr.GEOMETRY, name), cuts, losses)
    total_cuts += cuts
    total_losses += losses

print("power cut points tried: %d, losses: %d" % (total_cuts, total_losses))
fr.host_cleanup()
t.done()
