# test_vendor_soft_reset.py — soft resets of the emulated M33 under the
# vendor binding's pattern (issue 20): vclaw's ensure_init is a C static, so
# after a soft reset no _init runs again, and everything must still work. The
# board flushes at its idle point (after every REPL command, so before each
# soft reset: board.c), as the BENTO firmware should beside
# wifi_creds_flush_if_dirty(); vclaw never flushes.
#
#  1. power-on: memory, tool turns, an ask; the 22 from an interrupt handler
#     (another context than the MicroPython one): RAM answers, no file touched
#  2. after Ctrl-D: the RAM ring, breaker and rate windows of the previous VM
#     (no claw_*_init ran), the ring on flash (the idle point); new calls, a
#     KeyboardInterrupt from the block device followed by normal calls; then
#     machine.soft_reset() from inside a file operation (writeblocks)
#  3. after that soft reset: everything works again, the interrupted write
#     left the old or the new value, nothing else lost
# The M33 only: the interrupt handler is its board_run_in_irq().
# boards: m33
import vclaw

t = Checker("vendor soft-reset 1 (power-on)")
disk = mount_ramdisk()
t.eq(vclaw.remember("name", "Mali"), True, "remember()")
t.eq(vclaw.execute("trustm_sign", None)["status"], "ready", "trustm_sign: 2 a minute")
t.eq(vclaw.execute("trustm_sign", None)["confirm"], True, "trustm_sign again")
t.raises(RuntimeError, vclaw.execute, "trustm_sign", None, text=RATE_TEXT)
for i in range(2):
    vclaw.execute("gpio_read", None)
t.eq(vclaw.ask("hello", "hi").split("\n")[-2:], ["user: hello", ""], "ask(): the context ends with the USER turn")
t.eq(vclaw.status()["session_msgs"], 6, "six turns")
# From an interrupt handler: answers from RAM, or clean failures.
disk.reset_counters()
r = vclaw.off_task([
    ("session_count",),
    ("session_add", 3, "execute: from an interrupt"),
    ("memory_get", "name"),
    ("memory_set", "k", "v"),
    ("session_build_context",),
    ("session_flush",),
    ("cb_state",),
    ("rate_check", "trustm_sign"),
    ("trust_get",),
])
t.eq(r, [6, True, (False, True), False, (0, ""), False, 0, False, 2],
     "the 22 from an interrupt: RAM answers (count, add, gates) or failures (files)")
t.eq((disk.writes, disk.erases, disk.bytes_written), (0, 0, 0), "the interrupt wrote nothing")
t.eq(vclaw._dirty(), True, "seven turns, dirty: left to the idle point")
t.done()

#== reset ctrl-d
import vclaw


class TrigDisk(RamDisk):
    """The RAM disk, raising (or soft-resetting) once at a chosen kind of
    access, and counting reads."""

    def __init__(self):
        super().__init__()
        self.trigger = None
        self.reads = 0

    def _fire(self, kind):
        trig = self.trigger
        if trig is not None and trig[0] == kind:
            self.trigger = None
            if trig[1] == "soft_reset":
                import machine

                machine.soft_reset()
            raise trig[1]("block device")

    def readblocks(self, block, buf, off=0):
        self.reads += 1
        self._fire("read")
        return super().readblocks(block, buf, off)

    def writeblocks(self, block, buf, off=0):
        self._fire("write")
        return super().writeblocks(block, buf, off)


def mount_trig():
    d = TrigDisk()
    try:
        vfs.umount("/")
    except OSError:
        pass
    vfs.mount(vfs.VfsLfs2(d, **LFS_OPTS), "/")
    os.chdir("/")
    return d


t = Checker("vendor soft-reset 2 (after Ctrl-D, no _init)")
disk = mount_trig()
# The port's file slots holding objects, as a previous VM's files would: the
# first call forgets them (else every open fails).
vclaw._stale_files()
t.eq(vclaw._recall("name"), "Mali", "the first call after the reset: stale file slots forgotten")
ring = session_on_flash()
t.eq(len(ring), 7, "the idle point flushed all seven turns before the soft reset")
t.eq(ring[-1], ("tool", "execute: from an interrupt"), "the interrupt's turn among them")
t.eq(vclaw._dirty(), False, "clean")
t.eq(vclaw.status()["session_msgs"], 7, "the RAM ring lived through the soft reset (no claw_session_init)")
t.raises(RuntimeError, vclaw.execute, "trustm_sign", None, text=RATE_TEXT,
         what="the rate window lived through it (no claw_rate_init)")
t.eq(vclaw._recall("name"), "Mali", "memory")
t.eq(vclaw.remember("city", "Chiang Mai"), True, "remember() in the new VM")
ctx = vclaw.ask("where do I live?", "Chiang Mai.")
t.check("- city: Chiang Mai" in ctx and "- name: Mali" in ctx, "ask(): the context carries the memory", ctx)
t.eq(vclaw.execute("gpio_set", None)["risk"], 1, "execute() in the new VM")

# A KeyboardInterrupt from the block device: the call fails cleanly, the VM
# raises it after the call, the next calls work.
disk.trigger = ("write", KeyboardInterrupt)
returned = False
try:
    r = vclaw.remember("lang", "th")
    returned = True
    for _ in range(3):
        pass
    t.check(False, "the VM raises the KeyboardInterrupt after the call")
except KeyboardInterrupt:
    t.check(returned and r is False, "remember() returned False, then the VM raised KeyboardInterrupt", r)
t.eq(vclaw.remember("lang", "th"), True, "the next remember() works")
t.eq(vclaw._recall("lang"), "th", "and reads back")
disk.trigger = ("read", KeyboardInterrupt)
try:
    h = vclaw.history()
    for _ in range(3):
        pass
    t.check(False, "the VM raises the KeyboardInterrupt after history()")
except KeyboardInterrupt:
    t.check(True, "history() met a KeyboardInterrupt; raised by the VM")
t.check("- lang: th" in vclaw.history(), "the next history() works")
t.done()
# A soft reset from inside a file operation: machine.soft_reset() (SystemExit)
# in writeblocks. The port hands it to the VM, which raises it here.
disk.trigger = ("write", "soft_reset")
vclaw.remember("name", "Somchai")
for _ in range(3):
    pass
print("FAIL [vendor soft-reset 2] no soft reset")

#== reset machine
import vclaw

t = Checker("vendor soft-reset 3 (after machine.soft_reset() in writeblocks)")
disk = mount_ramdisk(mkfs=False)
t.check(vclaw._recall("name") in ("Mali", "Somchai"), "the interrupted write: the old or the new value",
        vclaw._recall("name"))
t.eq((vclaw._recall("city"), vclaw._recall("lang")), ("Chiang Mai", "th"), "the other pairs")
t.eq(len(session_on_flash()), 10, "the ring on flash: full (the idle point before the reset)")
t.eq(vclaw.status()["session_msgs"], 10, "the RAM ring lived on")
t.eq(vclaw.remember("name", "Mali"), True, "remember() works")
t.eq(vclaw.execute("rtc_read", None)["status"], "ready", "execute() works")
t.eq(vclaw.ask("and now?", "fine").split("\n")[-2], "user: and now?", "ask() works")
disk.reset_counters()
r = vclaw.off_task([("session_count",), ("cb_allow",), ("memory_get", "name")])
t.eq(r, [10, True, (False, True)], "the interrupt handler's calls as before")
t.eq((disk.writes, disk.erases), (0, 0), "no file touched from the interrupt")
t.done()
