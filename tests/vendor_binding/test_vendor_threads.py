# test_vendor_threads.py — the 22 functions called from another task (a
# pthread here; issue 20, VENDOR-SDK.md §7.5 E1): each answers from RAM or
# fails cleanly, and none reaches the file system (the block device, Python
# code, counts every read and write: it must see none, and a call from
# another thread into the VM would crash the interpreter). What the calls
# leave is then right for the MicroPython task.
#
# off_task(ops) runs [(name, args...)] on the other thread, in order, and
# returns their results: a bool, an int, None (void), for memory_get the
# value or (False, out untouched), for session_build_context (n, the text to
# its NUL or None).
import vrig
import vclaw

rig = vrig.rig
t = rig.Checker("vendor-threads")
ROLE_USER, ROLE_TOOL = 0, 3
CB_CLOSED, CB_OPEN = 0, 1
TRUST_NONE, TRUST_HTTPS, TRUST_USB = 0, 1, 2


def off(ops, what):
    dev.reset_counters()
    r = vclaw.off_task(ops)
    t.eq((dev.bytes_read, dev.writes, dev.erases), (0, 0, 0), "%s: the block device saw nothing" % what)
    return r


dev = rig.mount_ram(64)
vclaw._hard_boot()
t.eq(vclaw.remember("name", "Mali"), True, "a pair on flash")
vclaw.execute("gpio_read", None)
t.eq(vclaw.idle(), True, "a turn on flash")
vrig.boot(vclaw, dev)  # a hard boot...
t.eq(off([("session_init",)], "init"), [None], "...and claw_session_init from the other task: nothing loaded")

# --- the ring not loaded ---
r = off([
    ("session_count",),
    ("session_add", ROLE_TOOL, "execute: gpio_set"),
    ("session_dirty",),
    ("session_flush",),
    ("session_clear",),
    ("session_build_context",),
    ("memory_get", "name"),
    ("memory_set", "k", "v"),
], "not loaded")
t.eq(r, [0, False, False, True, None, (0, ""), (False, True), False],
     "not loaded: count 0, add False, dirty False, flush True, clear nothing, "
     "context (0, ''), memory_get (False, untouched), memory_set False")
t.eq(vrig.conversation(vclaw.history()), ["tool: execute: gpio_read"], "the clear did nothing; the ring loads here")
t.eq(vclaw._recall("name"), "Mali", "memory as it was")
t.eq(vclaw._recall("k"), None, "the refused set stored nothing")

# --- the ring loaded (by history() above) ---
r = off([
    ("session_count",),
    ("session_add", ROLE_TOOL, "execute: gpio_set"),
    ("session_count",),
    ("session_dirty",),
    ("session_flush",),
    ("session_build_context",),
    ("memory_get", "name"),
], "loaded")
t.eq(r, [1, True, 2, True, False, (0, ""), (False, True)],
     "loaded: add from RAM (count 2, dirty), flush False (left to this task), context and memory fail")
t.eq(vclaw._dirty(), True, "the other task's turn is dirty here")
t.eq(vclaw.idle(), True, "this task's idle point flushes it")
vrig.boot(vclaw, dev)
t.eq(vrig.conversation(vclaw.history()), ["tool: execute: gpio_read", "tool: execute: gpio_set"],
     "the other task's turn reached flash")

# A clear from the other task: RAM now, the files at the next idle point.
r = off([("session_clear",), ("session_count",), ("session_dirty",)], "clear")
t.eq(r, [None, 0, True], "clear: the ring emptied, the clear pending (dirty)")
t.check(rig.read_file(rig.SESSION_FILE) is not None, "the file stays until the idle point")
t.eq(vclaw.idle(), True, "the idle point")
vrig.boot(vclaw, dev)
t.eq(vrig.conversation(vclaw.history()), [], "the old session does not come back")

# --- the gates: RAM, one state for every task ---
r = off([
    ("cb_init",), ("cb_allow",), ("cb_failure",), ("cb_failure",), ("cb_failure",),
    ("cb_state",), ("cb_cooldown_remaining",), ("cb_allow",), ("cb_success",), ("cb_state",),
    ("rate_init",), ("rate_set", "hard_reset", 1), ("rate_check", "hard_reset"),
    ("rate_record", "hard_reset"), ("rate_check", "hard_reset"),
    ("trust_set", TRUST_HTTPS), ("trust_get",), ("trust_allows", 1), ("trust_allows", 2),
], "gates")
t.eq(r, [None, True, None, None, None, CB_OPEN, 30000, False, None, CB_CLOSED,
         None, None, True, None, False, None, TRUST_HTTPS, True, False], "the gates from the other task")
t.raises(RuntimeError, vclaw.execute, "fs_write", None, text=vrig.TRUST_TEXT, what="trust HTTPS here too")
vclaw.disconnect()
t.raises(RuntimeError, vclaw.execute, "hard_reset", None, text=vrig.RATE_TEXT,
         what="the other task's record counts here")
t.eq(vclaw.execute("gpio_read", None)["status"], "ready", "the rate table was re-initialised there (default 10)")
t.done()
