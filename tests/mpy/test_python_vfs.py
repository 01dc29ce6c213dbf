# test_python_vfs.py — a file system written in Python, mounted at "/"
# (issue 13, crash 1; the port's rule 2 in mpy/claw_port_vfs.c).
#
# MicroPython mounts any object with the VFS methods, and whatever its open()
# returns is the "file". Before the fix, bentoclaw handed that object to
# mp_stream_rw()/mp_stream_close(), which assume a native stream: a plain
# Python class, None or an int made recall() segfault, and an io.IOBase
# subclass whose readinto() over-reports wrote past the core's buffer.
#
# DictFS (tests/mpy/fault_rig.py) keeps its files in a dict. Its open()
# returns one of the VARIANTS (fault_rig.PYFS_VARIANTS). Every bentoclaw
# call that touches files is driven through it; each must return or raise
# an Exception, the interpreter must survive, and the well-behaved variants
# must round-trip the data (through a simulated
# reboot: the core reloads from the "flash" of the dict). Each variant runs
# in its own interpreter (`<this file> child <variant>`), so a crash is
# reported by name.
import sys
import os
import claw_rig as rig
import fault_rig as fr

VARIANTS = fr.PYFS_VARIANTS
ROUND_TRIP = fr.PYFS_ROUND_TRIP
NOTHING_STORED = fr.PYFS_NOTHING_STORED
CLOSE_FAILS = fr.PYFS_CLOSE_FAILS
READ_BROKEN = fr.PYFS_READ_BROKEN
DictFS = fr.DictFS


# --- the child: one variant -----------------------------------------------------


def drive(t, bc, v):
    """Every call that touches files; returns {name: result or exception}."""
    res = {}

    def call(name, fn, *args, **kw):
        try:
            res[name] = fn(*args, **kw)
        except Exception as e:
            res[name] = e
        return res[name]

    call("remember", bc.remember, "city", "Chiang Mai")
    call("remember2", bc.remember, "pet", "cat named Mali")
    call("tool", bc.tool, "echo", "hello through " + v)
    call("flush", bc.flush)
    call("recall", bc.recall, "city")
    call("search", bc.search, "which city", 3)
    call("pin", bc.pin, "city")
    call("export", bc.export_memory)
    call("import", bc.import_memory, "- lang: th\n")
    call("forget", bc.forget, "pet")
    call("config_set", bc.config, compact_keep=3)
    call("config", bc.config)
    call("session", bc.session)
    call("archive", bc.archive, 0, 64)
    call("status", bc.status)
    call("session_clear", bc.session_clear)
    call("flush2", bc.flush)
    return res


def child(v):
    import vfs

    t = rig.Checker("python-vfs:" + v)
    fs = DictFS(v)
    vfs.umount("/")
    vfs.mount(fs, "/")
    import bentoclaw

    bc = rig.simulate_soft_reset(bentoclaw)
    res = drive(t, bc, v)
    for name, r in res.items():
        # An Exception is a clean answer too; what must not happen is a
        # crash or a non-Exception escaping (the child would die).
        t.check(True, "%s returned or raised" % name)
        if isinstance(r, Exception) and not isinstance(r, (OSError, ValueError, TypeError, RuntimeError)):
            t.check(False, "%s raised an unexpected exception type" % name, repr(r))
    if v in ROUND_TRIP:
        t.eq(res["remember"], True, "remember() stores")
        t.eq(res["recall"], "Chiang Mai", "recall() reads it back")
        t.eq(res["flush"], True, "flush() stores the session")
        t.check(isinstance(res["search"], list) and res["search"] and res["search"][0][0] == "city",
                "search() finds it", res["search"])
        t.eq(res["pin"], True, "pin()")
        t.check(isinstance(res["export"], str) and "- **city** (pinned): Chiang Mai" in res["export"],
                "export_memory()", res["export"])
        t.eq(res["import"], 1, "import_memory() of one pair")
        t.eq(res["forget"], True, "forget()")
        t.check(isinstance(res["config"], dict) and res["config"].get("compact_keep") == 3, "config() persisted",
                res["config"])
        t.check(isinstance(res["archive"], bytes), "archive() gives bytes", res["archive"])
        t.check(isinstance(res["session"], list) and len(res["session"]) > 0, "session()", res["session"])
        t.eq(res["flush2"], True, "flush() after session_clear()")
        # A reboot: the core reloads everything from the dict.
        bc = rig.simulate_soft_reset(bc)
        t.eq(bc.recall("city"), "Chiang Mai", "after a reboot: recall(city)")
        t.eq(bc.recall("lang"), "th", "after a reboot: the imported pair")
        t.eq(bc.recall("pet"), None, "after a reboot: the forgotten pair stays forgotten")
        t.eq(bc.config()["compact_keep"], 3, "after a reboot: config")
        t.eq(bc.status()["session_msgs"], 0, "after a reboot: the cleared session stays cleared")
        # The files of the Python file system hold the store, read back by
        # claw_rig's own reader of the layout.
        t.eq(fs.on_flash(rig.store_on_flash), [("city", "Chiang Mai", True), ("lang", "th", False)],
             "the store is in the files of the Python file system")
    elif v in NOTHING_STORED:
        t.eq(res["remember"], False, "remember() says False: nothing could be stored")
        t.eq(res["remember2"], False, "the second remember() says False too")
        t.eq(res["recall"], None, "recall() finds nothing")
        t.check(isinstance(res["import"], OSError), "import_memory() raises OSError", res["import"])
        # Offline, a turn is only logged once the ring could be loaded.
        t.check(res["flush"] is False or res["session"] == [], "flush() stored no turn",
                res["flush"], res["session"])
    elif v in CLOSE_FAILS:
        # What each call reported is what the files hold.
        print("%s: remember %r, remember2 %r, import %r, forget %r, flush %r" % (
            v, res["remember"], res["remember2"], res["import"], res["forget"], res["flush"]))
        for name in ("remember", "remember2", "forget"):
            t.check(res[name] in (True, False), "%s() says True or False" % name, res[name])
        t.check(res["import"] == 1 or isinstance(res["import"], OSError), "import_memory() stores or raises OSError",
                res["import"])
        city = "Chiang Mai" if res["remember"] is True else None
        lang = "th" if res["import"] == 1 else None
        pet = "cat named Mali" if res["remember2"] is True and res["forget"] is not True else None
        t.eq(res["recall"], city, "recall() finds the pair exactly when remember() said True")
        want_store = [(k, v2, p) for k, v2, p in (("city", city, res["pin"] is True), ("pet", pet, False),
                                                   ("lang", lang, False)) if v2 is not None]
        t.eq(fs.on_flash(rig.store_on_flash), want_store, "the files hold exactly what the calls reported")
        bc = rig.simulate_soft_reset(bc)
        t.eq((bc.recall("city"), bc.recall("pet"), bc.recall("lang")), (city, pet, lang),
             "after a reboot: what the calls reported")
    elif v in READ_BROKEN:
        t.eq(res["remember"], True, "remember() creates the store (nothing to read yet)")
        t.eq(res["remember2"], False, "remember() refuses to rewrite a store it cannot read")
        t.eq(res["recall"], None, "recall() cannot read it")
        t.eq(fs.on_flash(rig.store_on_flash), [("city", "Chiang Mai", False)],
             "the store still holds the first pair, and only it")
    else:
        t.check(False, "variant has an expectation", v)
    # Whatever happened, the module still works on a sane file system.
    fs.variant = "plain"
    bc = rig.simulate_soft_reset(bc)
    t.eq(bc.remember("after", "ok"), True, "remember() on the repaired file system")
    t.eq(bc.recall("after"), "ok", "recall() on the repaired file system")
    want = None if v in NOTHING_STORED else "Chiang Mai"
    if v in CLOSE_FAILS:
        want = "Chiang Mai" if res["remember"] is True else None
    t.eq(bc.recall("city"), want, "recall(city) on the repaired file system")
    t.done()


def parent():
    t = rig.Checker("python-vfs")
    losses = 0
    for v in VARIANTS:
        before = t.failed
        rig.run_child(t, "%s child %s" % (sys.argv[0], v), "python-vfs:" + v)
        losses += t.failed > before
    print("RELIABILITY: Python file system at / (file object variants, every file call)|%d|%d"
          % (len(VARIANTS), losses))
    print("CRASHCLASS: Python file system at / (%d file-object variants: plain class, None, int, over-reporting "
          "readinto, ...)|test_python_vfs|%s|SIGSEGV in every variant"
          % (len(VARIANTS), "no crash; round trip or a clean refusal" if t.failed == 0 else "FAILED"))
    t.done()


if len(sys.argv) > 2 and sys.argv[1] == "child":
    child(sys.argv[2])
else:
    parent()
