# test_every_call_faults.py — every public call of the module, driven
# through a file system written in Python and through a block device that
# raises (issue 13: "Python-VFS and failing-block-device variants added to
# the fault rig, so that every public call is driven through them").
#
# The calls (fault_rig.drive_every_call): register_tool, connect, ask (the
# bundled backend), remember, recall, forget, pin, search, export_memory,
# import_memory, config (set and get), tool (a built-in and a Python tool),
# tacp (TOOL, REMEMBER, STATUS), flush, archive, session, status, safety,
# tools, disconnect, session_clear, flush again.
#
# (a) "pyfs <variant>": fault_rig.DictFS mounted at "/", its file objects
#     misbehaving in each way test_python_vfs covers (plain classes, None,
#     an int, over-reporting readinto, read() of a str, write() of None or
#     a big number, raising methods, no close(), ...) plus its own methods
#     raising (open, rename, remove, stat) — 27 variants.
# (b) "bdev <exception>": LittleFS on fault_rig.RaiseEveryDev, whose every
#     N-th readblocks/writeblocks call (N = 1, 2, 3, 5, 8, 13, 21; reads,
#     writes, or both) raises OSError, ValueError, MemoryError,
#     KeyboardInterrupt or SystemExit; each once with the ring already in
#     RAM and once after a reboot (everything read through the faults); a
#     garbage collection and fresh allocations follow every drive.
#
# In every case: each call returns or raises an Exception (a
# KeyboardInterrupt/SystemExit only when the device raised that very type,
# after the library returned); the interpreter never dies (each variant and
# each exception type runs in its own process, `<this file> pyfs|bdev
# <name>`, so a crash is reported by name); once the fault is gone the file
# system mounts, and after a reboot what was saved before is intact
# (fault_rig.check_saved_state: the anchor pairs exactly, each key the
# drive writes old or new, a write that said it worked did, a sane ring,
# the config old or new); and the module works again.
#
# Before the fix (41ae5d2, the last release): every Python file system
# variant killed the interpreter (SIGSEGV, mp_stream_rw from
# claw_port_read); a block device raising MemoryError lost the whole store
# (every anchor None after the remount, 3 of 42 drives); a KeyboardInterrupt
# from the device was swallowed and fired later, outside any call; a
# SystemExit was swallowed as an I/O error.
# needs: backend
import sys
import gc
import claw_rig as rig
import fault_rig as fr

EVERY = (1, 2, 3, 5, 8, 13, 21)
KINDS = (("read",), ("write",), ("read", "write"))
EXCEPTIONS = (OSError, ValueError, MemoryError, KeyboardInterrupt, SystemExit)
PYFS = fr.PYFS_VARIANTS + fr.PYFS_VFS_VARIANTS


def churn():
    junk = [bytearray(b"\xa5" * s) for s in (32, 64, 100, 160, 200, 256, 300, 400) for i in range(40)]
    del junk


OUTCOMES = {"ret": 0, "exc": 0, "base": 0}


def check_results(t, label, results, allowed_base=None):
    for name, kind, v in results:
        OUTCOMES[kind] += 1
        if kind == "base":
            t.check(allowed_base is not None and isinstance(v, allowed_base),
                    "%s: %s raised %r (a BaseException the device did not raise)" % (label, name, v))
    t.check(len(results) > 20, "%s: every call was made" % label, len(results))


def child_pyfs(variant):
    import vfs
    import bentoclaw

    t = rig.Checker("every-call:pyfs:" + variant)
    port = rig.backend_port()
    fs = fr.DictFS("plain")
    vfs.umount("/")
    vfs.mount(fs, "/")
    bc = rig.simulate_soft_reset(bentoclaw)
    t.check(fr.save_state(bc), "the state is saved on the well-behaved file system")
    cases = losses = 0
    for phase in ("warm", "cold"):
        cases += 1
        before = t.failed
        label = "%s (%s)" % (variant, phase)
        fs.variant = variant
        if phase == "cold":
            bc = rig.simulate_soft_reset(bc)
        results = fr.drive_every_call(bc, port)
        check_results(t, label, results)
        gc.collect()
        churn()
        # The repaired file system: a remount and a reboot.
        fs.variant = "plain"
        vfs.umount("/")
        vfs.mount(fs, "/")
        bc = rig.simulate_soft_reset(bc)
        fr.check_saved_state(t, bc, label, results)
        t.eq(bc.remember("after", "ok"), True, "%s: remember() works again" % label)
        t.eq(bc.recall("after"), "ok", "%s: recall() works again" % label)
        t.eq(bc.tool("echo", "again"), "again", "%s: tool() works again" % label)
        t.eq(bc.flush(), True, "%s: flush() works again" % label)
        # Back to the saved state for the next phase.
        bc.forget("after")
        bc.remember("city", "Chiang Mai")
        bc.remember("tmp", "forget me")
        bc.forget("lang")
        bc.config(compact_keep=3)
        losses += t.failed > before
    print("pyfs %s: the calls returned %d times, raised an Exception %d times" % (
        variant, OUTCOMES["ret"], OUTCOMES["exc"]))
    print("COUNTS: %d %d" % (cases, losses))
    t.done()


def child_bdev(exc_name):
    import bentoclaw

    exc = [e for e in EXCEPTIONS if e.__name__ == exc_name][0]
    base = exc if not issubclass(exc, Exception) else None
    t = rig.Checker("every-call:bdev:" + exc_name)
    port = rig.backend_port()
    dev = fr.RaiseEveryDev(blocks=64)
    rig.mount(dev)
    bc = rig.simulate_soft_reset(bentoclaw)
    t.check(fr.save_state(bc), "the state is saved before the faults")
    image = bytes(dev.data)
    cases = losses = raised = 0
    for every in EVERY:
        for kinds in KINDS:
            for phase in ("warm", "cold"):
                cases += 1
                before = t.failed
                label = "%s at every %d%s %s (%s)" % (exc_name, every, {1: "st", 2: "nd", 3: "rd"}.get(every, "th"),
                                                      "/".join(kinds), phase)
                dev = fr.RaiseEveryDev(image)
                rig.mount(dev, mkfs=False)
                bc = rig.simulate_soft_reset(bc)
                if phase == "warm":
                    bc.session()  # the ring is loaded before the faults
                dev.arm(exc, every, kinds)
                results = fr.drive_every_call(bc, port)
                raised += dev.raised
                dev.disarm()
                check_results(t, label, results, base)
                if base is not None and dev.raised:
                    t.check(any(k == "base" for n, k, v in results),
                            "%s: the device's %s came out of a call" % (label, exc_name))
                gc.collect()
                churn()
                try:
                    st = bc.status()
                    t.check(isinstance(st, dict), "%s: status() right after" % label)
                except BaseException as e:  # noqa: nothing may stay pending
                    t.check(False, "%s: nothing stays pending after the drive" % label, repr(e))
                try:
                    rig.mount(dev, mkfs=False)
                except OSError as e:
                    t.check(False, "%s: the file system mounts after the faults" % label, repr(e))
                    losses += 1
                    continue
                bc = rig.simulate_soft_reset(bc)
                fr.check_saved_state(t, bc, label, results)
                t.eq(bc.remember("after", "ok"), True, "%s: remember() works again" % label)
                t.eq(bc.recall("after"), "ok", "%s: recall() works again" % label)
                t.eq(bc.flush(), True, "%s: flush() works again" % label)
                rig.mount(dev, mkfs=False)
                bc = rig.simulate_soft_reset(bc)
                t.eq(bc.recall("after"), "ok", "%s: and after a reboot" % label)
                losses += t.failed > before
    t.check(raised > cases, "the device raised (%d times)" % raised)
    print("%s: %d drives, the device raised %d times; the calls returned %d times, raised an Exception %d times, "
          "%s %d times" % (exc_name, cases, raised, OUTCOMES["ret"], OUTCOMES["exc"], exc_name, OUTCOMES["base"]))
    print("COUNTS: %d %d" % (cases, losses))
    t.done()


def parent():
    t = rig.Checker("every-call")

    def run(args, label):
        before = t.failed
        text = rig.run_child(t, "%s %s" % (sys.argv[0], args), label)
        counts = [line.split()[1:] for line in text.split("\n") if line.startswith("COUNTS: ")]
        for line in text.split("\n"):
            if "drives, the device raised" in line or line.startswith("pyfs "):
                print(line)
        if counts:
            return int(counts[-1][0]), int(counts[-1][1])
        return 1, 1 if t.failed > before else 0

    cases = losses = 0
    for v in PYFS:
        c, l = run("pyfs " + v, "pyfs " + v)
        cases += c
        losses += l
    print("RELIABILITY: Python file system at / (%d variants x warm/cold): every public call|%d|%d"
          % (len(PYFS), cases, losses))
    pyfs_ok = losses == 0
    all_bdev_ok = True
    for e in EXCEPTIONS:
        c, l = run("bdev " + e.__name__, "bdev " + e.__name__)
        print("RELIABILITY: block device raising %s at every Nth read/write: every public call|%d|%d"
              % (e.__name__, c, l))
        all_bdev_ok &= l == 0
    print("CRASHCLASS: Python file system at / (file objects and methods misbehaving, %d variants), every public "
          "call|test_every_call_faults|%s|SIGSEGV in every variant"
          % (len(PYFS), "no crash, saved data intact" if pyfs_ok else "FAILED"))
    print("CRASHCLASS: block device raising OSError/ValueError/MemoryError/KeyboardInterrupt/SystemExit at every "
          "Nth call, every public call, then GC|test_every_call_faults|%s|MemoryError lost the whole store; "
          "KeyboardInterrupt fired later, outside the call; SystemExit swallowed"
          % ("no crash; Ctrl-C/exit propagate; saved data intact" if all_bdev_ok else "FAILED"))
    t.done()


if len(sys.argv) > 2 and sys.argv[1] == "pyfs":
    child_pyfs(sys.argv[2])
elif len(sys.argv) > 2 and sys.argv[1] == "bdev":
    child_bdev(sys.argv[2])
else:
    parent()
