# test_flash_faults.py — write errors (ENOSPC, EIO returned by the block
# device) at EVERY write of a flush and of remember(), a full file system,
# a session_clear() whose delete fails, and reads failing at load. Each case
# ends with a reboot check: a NEW interpreter process mounts the image and
# must find exactly the expected ring and store (fault_rig.child_main).
#
#   flush      every write k, ENOSPC/EIO, "once" (only write k fails) and
#              "sticky" (k and every later write fail until the fault
#              clears): flush() False, status()['dirty'] True, the image
#              holds the old ring; after the fault clears the next flush is
#              True and a new process reads exactly the new ring.
#   remember   same faults, new key and replaced key: False, every old key
#              recalls its old value, a new process reads the old store;
#              after the fault clears, remember() works and is durable.
#   full fs    a junk file fills the device until ENOSPC: remember() of a new
#              key is False and every old pair survives (new process).
#   clear      the delete fails (every write k, once): the old conversation
#              never comes back after a reboot; every write fails: the clear
#              stays pending (DESIGN.md "Clear") until a flush makes it
#              durable once the device recovers.
#   load       reads fail while the ring loads: no flush replaces the good
#              file with an empty ring.
import sys
import os
import claw_rig as rig
import fault_rig as fr

SCRIPT = sys.argv[0]
BLOCKS = 64
AGES = (0, 3, 6, 7)  # metadata commits before the operation (7: a compaction)
ERRNOS = ((fr.ENOSPC, "ENOSPC"), (fr.EIO, "EIO"))
MODES = ("once", "sticky")

if fr.is_child():
    fr.child_main()  # exits

import bentoclaw

t = rig.Checker("flash-faults")
fr.host_dir()

MEM = [("name", "สมชาย"), ("city", "Chiang Mai"), ("k2", "two"), ("lang", "th"), ("pin", "1234")]
APPEND = [[("system", "s%02d" % i), ("tool", "note: t%02d" % i)] for i in range(6)]  # 12 lines
COMPACT = [[("user", "q%02d" % i), ("assistant", "a%02d" % i)] for i in range(14)] + [[("tool", "note: odd")]]
TURN = [("system", "Disconnected from backend"), ("tool", "note: NEW turn ไทย")]


def flat(batches):
    out = []
    for b in batches:
        out.extend(b)
    return fr.newest(out)


def mem_with(pairs, key, value):
    return [(k, v) for k, v in pairs if k != key] + [(key, value)]


def make_base(batches, age, blocks=BLOCKS):
    def setup():
        fr.write_file(rig.SESSION_FILE, fr.session_text(batches).encode())
        fr.write_file(rig.MEMORY_FILE, fr.memory_text(MEM).encode())
        for i in range(age):
            fr.write_file("/age%d" % i, b"x")
    return fr.make_image(setup, blocks)


def boot(base):
    dev = fr.FailAtBlockDev(base)
    fr.mount_dev(dev)
    bc = fr.reboot_core(bentoclaw)
    bc.register_tool("note", lambda a: a, 0, 60000)
    return dev, bc, fr.state(bc)


def count_writes(base, op):
    dev, bc, _ = boot(base)
    dev.arm(None)
    op(bc)
    return dev.count


def reboot_expect(state, image, label, then_write=True):
    """A new process must find exactly `state` (and, then_write, be able to
    write afterwards)."""
    return fr.reboot_check(t, SCRIPT, [state], image, label, then_write) == 0


class Tally:
    """Cases tried and cases with a failed check (= losses) per fault class."""

    def __init__(self):
        self.rows = []

    def run(self, cls, fn, *args):
        f0 = t.failed
        fn(*args)
        lost = 1 if t.failed > f0 else 0
        for r in self.rows:
            if r[0] == cls:
                r[1] += 1
                r[2] += lost
                return
        self.rows.append([cls, 1, lost])

    def report(self):
        for cls, n, lost in self.rows:
            t.eq(lost, 0, "%s: no case lost data" % cls)
            fr.reliability(cls, n, lost)


tally = Tally()


# --- flush -------------------------------------------------------------------------


absorbed = {}  # one-off faults littlefs recovered from by itself, per class


def must_fail(errno, mode):
    """A sticky fault always fails the operation. So does a one-off EIO. A
    one-off ENOSPC on a metadata commit means "this metadata block is full"
    to littlefs, which compacts into another block and carries on: then the
    operation succeeds and must be durable whole."""
    return mode == "sticky" or errno == fr.EIO


def flush_case(cls, name, batches, age, base, k, errno, ename, mode):
    label = "flush %s age %d: %s %s at write %d" % (name, age, ename, mode, k)
    old = (flat(batches), MEM)
    new = (flat(batches + [TURN]), MEM)
    dev, bc, before = boot(base)
    t.eq(fr.norm(*before), fr.norm(*old), label + ": old ring loaded")
    dev.arm(k, errno, mode == "sticky")
    bc.disconnect()
    bc.tool("note", "NEW turn ไทย")  # its flush hits the fault
    t.check(dev.failed >= 1, label + ": the fault was hit", dev.count)
    t.eq(bc.status()["session_msgs"], 10, label + ": the ring is kept in RAM")
    if not bc.status()["dirty"]:
        t.check(not must_fail(errno, mode), label + ": the flush cannot have succeeded")
        absorbed[cls] = absorbed.get(cls, 0) + 1
        reboot_expect(new, dev.image(), label + ": littlefs recovered: the new ring is durable")
        return
    if mode == "sticky":
        t.eq(bc.flush(), False, label + ": flush() reports the failure")
        t.eq(bc.status()["dirty"], True, label + ": still dirty")
    reboot_expect(old, dev.image(), label + ": reboot before the retry reads the old ring")
    dev.heal()
    t.eq(bc.flush(), True, label + ": flush() after the fault cleared")
    t.eq(bc.status()["dirty"], False, label + ": clean after the retry")
    t.eq(fr.norm(*fr.state(bc)), fr.norm(*new), label + ": the ring in RAM is the new one")
    reboot_expect(new, dev.image(), label + ": a new process reads exactly the new ring")


n_flush_writes = {}
for name, batches in (("append", APPEND), ("compaction", COMPACT)):
    cls = "write error (ENOSPC/EIO) at every write: flush (%s)" % name
    for age in AGES:
        base = make_base(batches, age)
        n = count_writes(base, lambda bc: (bc.disconnect(), bc.tool("note", "NEW turn ไทย")))
        n_flush_writes.setdefault(name, []).append(n)
        for k in range(1, n + 1):
            for errno, ename in ERRNOS:
                for mode in MODES:
                    tally.run(cls, flush_case, cls, name, batches, age, base, k, errno, ename, mode)
print("flush writes per operation by age %s: %s" % (AGES, n_flush_writes))


# --- remember ------------------------------------------------------------------------


def remember_case(cls, name, key, value, age, base, k, errno, ename, mode):
    label = "remember %s age %d: %s %s at write %d" % (name, age, ename, mode, k)
    ring = flat(APPEND)
    new = (ring, mem_with(MEM, key, value))
    dev, bc, before = boot(base)
    dev.arm(k, errno, mode == "sticky")
    r = bc.remember(key, value)
    t.check(dev.failed >= 1, label + ": the fault was hit", dev.count)
    if r:
        t.check(not must_fail(errno, mode), label + ": remember() cannot have succeeded")
        absorbed[cls] = absorbed.get(cls, 0) + 1
        t.eq(bc.recall(key), value, label + ": littlefs recovered: new value")
        reboot_expect(new, dev.image(), label + ": littlefs recovered: the new store is durable")
        return
    for kk, vv in MEM:
        t.eq(bc.recall(kk), vv, label + ": old value of %s" % kk)
    if key not in [kk for kk, vv in MEM]:
        t.eq(bc.recall(key), None, label + ": the new key is absent")
    reboot_expect((ring, MEM), dev.image(), label + ": a new process reads the old store")
    dev.heal()
    t.eq(bc.remember(key, value), True, label + ": remember() after the fault cleared")
    t.eq(bc.recall(key), value, label + ": new value")
    reboot_expect(new, dev.image(), label + ": the retry is durable")


n_mem_writes = {}
for name, key, value in (("new key", "new", "ค่าใหม่"), ("replace key", "k2", "changed")):
    cls = "write error (ENOSPC/EIO) at every write: remember (%s)" % name
    for age in AGES:
        base = make_base(APPEND, age)
        n = count_writes(base, lambda bc: bc.remember(key, value))
        n_mem_writes.setdefault(name, []).append(n)
        for k in range(1, n + 1):
            for errno, ename in ERRNOS:
                for mode in MODES:
                    tally.run(cls, remember_case, cls, name, key, value, age, base, k, errno, ename, mode)
print("remember writes per operation by age %s: %s" % (AGES, n_mem_writes))


# --- a full file system ----------------------------------------------------------------


def fill(chunks=(4096, 512, 64, 8, 1)):
    """Appends junk to /junk until every chunk size fails. Returns the bytes
    stored and the errnos seen."""
    stored = 0
    errs = set()
    for size in chunks:
        for _ in range(200):  # bounded: 32 blocks of 512 bytes
            try:
                with open("/junk", "ab") as f:
                    f.write(b"j" * size)
                stored += size
            except OSError as e:
                errs.add(e.errno)
                break
    t.eq(sorted(errs), [fr.ENOSPC], "filling ends with ENOSPC")
    return stored


def full_fs_case():
    label = "full file system"
    base = make_base(APPEND, 0, blocks=32)
    dev, bc, before = boot(base)
    ring = flat(APPEND)
    stored = fill()
    print("full fs: %d junk bytes stored on a %d-block device; statvfs free blocks %d" % (
        stored, dev.blocks, os.statvfs("/")[3]))
    w0 = dev.writes
    t.eq(bc.remember("new", "ค่าใหม่"), False, label + ": remember() of a new key fails")
    for kk, vv in MEM:
        t.eq(bc.recall(kk), vv, label + ": old value of %s" % kk)
    t.eq(bc.recall("new"), None, label + ": the new key is absent")
    # Replacing a key needs a new block too: it fails or succeeds whole.
    r = bc.remember("k2", "changed")
    mem_now = mem_with(MEM, "k2", "changed") if r else MEM
    t.eq(bc.recall("k2"), "changed" if r else "two", label + ": replace is all or nothing")
    print("full fs: remember(new key) False after %d device writes; replace -> %r" % (dev.writes - w0, r))
    reboot_expect((ring, mem_now), dev.image(), label + ": a new process reads every old pair", False)
    # A flush on the full device: False and dirty, or True; never a mix.
    bc.disconnect()
    ok = bc.flush()
    t.eq(bc.status()["dirty"], not ok, label + ": dirty exactly when the flush failed")
    ring_new = fr.newest(ring + [("system", "Disconnected from backend")])
    reboot_expect((ring_new if ok else ring, mem_now), dev.image(), label + ": the ring after a flush on a full fs", False)
    print("full fs: flush -> %r" % ok)
    # Free the space: everything works and is durable.
    os.remove("/junk")
    t.eq(bc.flush(), True, label + ": flush after freeing space")
    t.eq(bc.remember("new", "ค่าใหม่"), True, label + ": remember after freeing space")
    reboot_expect((ring_new, mem_with(mem_now, "new", "ค่าใหม่")), dev.image(), label + ": durable after freeing space")


tally.run("full file system: remember and flush", full_fs_case)


# --- session_clear with a failing delete -------------------------------------------------

pending_old_visible = [0, 0]  # reboots while a clear was pending: old ring seen, cases


def clear_case(age, base, k, errno, ename, mode):
    label = "session_clear age %d: %s %s at write %d" % (age, ename, mode, k)
    dev, bc, before = boot(base)
    dev.arm(k, errno, mode == "sticky")
    bc.session_clear()
    t.eq(bc.status()["session_msgs"], 0, label + ": the ring is empty at once")
    t.check(dev.failed >= 1, label + ": the fault was hit", dev.count)
    if not bc.status()["dirty"]:
        # The clear is durable (the delete or the empty rewrite worked).
        reboot_expect(([], MEM), dev.image(), label + ": the old conversation does not come back")
    else:
        # Pending: DESIGN.md's one uncovered case if the device never
        # recovers before a reboot. Record what a reboot would see now.
        idx = fr.reboot_check(t, SCRIPT, [([], MEM), (flat(APPEND), MEM)], dev.image(), label + ": pending")
        pending_old_visible[0] += 1 if idx == 1 else 0
        pending_old_visible[1] += 1
        t.eq(mode, "sticky", label + ": only a device refusing every write leaves the clear pending")
    dev.heal()
    t.eq(bc.flush(), True, label + ": flush after the fault cleared")
    t.eq(bc.status()["dirty"], False, label + ": nothing pending")
    reboot_expect(([], MEM), dev.image(), label + ": after the flush the clear is durable")
    # A new turn after the clear: only the new turn is stored.
    bc.tool("note", "after clear")
    reboot_expect(([("tool", "note: after clear")], MEM), dev.image(), label + ": a turn after the clear")


n_clear_writes = []
for age in AGES:
    base = make_base(APPEND, age)
    n = count_writes(base, lambda bc: bc.session_clear())
    n_clear_writes.append(n)
    for k in range(1, n + 1):
        for errno, ename in ERRNOS:
            for mode in MODES:
                tally.run("failed delete: session_clear", clear_case, age, base, k, errno, ename, mode)
print("session_clear writes by age %s: %s" % (AGES, n_clear_writes))


def clear_all_fail_case():
    """Every write fails during the clear and the flush that retries it;
    a turn added meanwhile; the device recovers; the next flush writes the
    clear and the new turn, never the old conversation."""
    label = "session_clear, every write failing"
    base = make_base(APPEND, 0)
    dev, bc, before = boot(base)
    dev.arm(1, fr.EIO, True)
    bc.session_clear()
    t.eq(bc.status()["dirty"], True, label + ": the clear is pending")
    t.eq(bc.flush(), False, label + ": flush() fails while the device refuses writes")
    bc.tool("note", "during outage")  # its flush fails too
    t.eq(bc.status()["session_msgs"], 1, label + ": only the new turn in RAM")
    idx = fr.reboot_check(t, SCRIPT, [([], MEM), (flat(APPEND), MEM)], dev.image(), label + ": before recovery")
    pending_old_visible[0] += 1 if idx == 1 else 0
    pending_old_visible[1] += 1
    dev.heal()
    t.eq(bc.flush(), True, label + ": flush after recovery")
    reboot_expect(([("tool", "note: during outage")], MEM), dev.image(), label + ": only the new turn after a reboot")


tally.run("failed delete: session_clear", clear_all_fail_case)
print("session_clear pending at a reboot (documented limit): old ring visible in %d of %d such reboots" % (
    pending_old_visible[0], pending_old_visible[1]))


# --- reads failing while the ring loads ---------------------------------------------------


def load_fail_case():
    label = "reads fail at load"
    base = make_base(APPEND, 0)
    dev = fr.FailAtBlockDev(base)
    fr.mount_dev(dev)
    bc = fr.reboot_core(bentoclaw)
    dev.fail_reads = True
    bc.disconnect()  # the add needs the ring: refused while it cannot load
    t.eq(bc.flush(), True, label + ": nothing to flush")
    r = bc.remember("x", "y")
    t.eq(r, False, label + ": remember() with unreadable flash")
    dev.fail_reads = False
    t.eq(bc.status()["session_msgs"], 10, label + ": the ring loads once reads work")
    bc.disconnect()
    t.eq(bc.flush(), True, label + ": flush after recovery")
    ring = fr.newest(flat(APPEND) + [("system", "Disconnected from backend")])
    reboot_expect((ring, MEM), dev.image(), label + ": the good file was never replaced by an empty ring")


tally.run("read error at load: session and memory", load_fail_case)

for cls in sorted(absorbed):
    print("%s: %d one-off ENOSPC faults absorbed by littlefs (operation succeeded, new state durable)" % (cls, absorbed[cls]))
tally.report()
fr.host_cleanup()
t.done()
