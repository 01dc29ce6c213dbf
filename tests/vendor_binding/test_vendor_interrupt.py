# test_vendor_interrupt.py — an exception inside a file operation under the
# vendor binding, which never calls a control of our VFS port (issue 20;
# rule 4 of mpy/claw_port_vfs.c). A Python block device raises
# KeyboardInterrupt, SystemExit or GeneratorExit at its k-th read or write:
#  * the call that meets it fails cleanly (returns its failure value: False,
#    None, an empty history...) and raises nothing itself;
#  * the VM raises the exception at its next check, in the caller's code;
#  * the next calls work, with nothing in between;
#  * after a power cut the store holds the old or the new value.
# An Exception from the device (ValueError) is an I/O failure: the call fails
# cleanly and nothing is raised at all.
import vrig
import vclaw

rig = vrig.rig
t = rig.Checker("vendor-interrupt")
OLD, NEW = "old value", "new value"


class RaiseDev(rig.RamBlockDev):
    """Raises self.exc from the k-th readblocks (kind "read") or
    writeblocks/erase ("write") once armed."""

    def __init__(self, data=None):
        super().__init__(64, data)
        self.arm(None, None, 0)

    def arm(self, exc, kind, k):
        self.exc, self.kind, self.k, self.n, self.fired = exc, kind, k, 0, False

    def _maybe(self, kind):
        if self.exc is not None and kind == self.kind and not self.fired:
            self.n += 1
            if self.n == self.k:
                self.fired = True
                raise self.exc("block device")

    def readblocks(self, block, buf, off=0):
        self._maybe("read")
        return super().readblocks(block, buf, off)

    def writeblocks(self, block, buf, off=None):
        self._maybe("write")
        return super().writeblocks(block, buf, off)

    def ioctl(self, op, arg):
        if op == 6:
            self._maybe("write")
        return super().ioctl(op, arg)


def image():
    dev = RaiseDev()
    rig.mount(dev)
    vclaw._hard_boot()
    vclaw.remember("k", OLD)
    vclaw.remember("other", "stays")
    vclaw.execute("gpio_read", None)
    vclaw.idle()
    return bytes(dev.data)


BASE = image()
OPS = {
    "remember": (lambda: vclaw.remember("k", NEW), "write"),
    "remember/read": (lambda: vclaw.remember("k", NEW), "read"),
    "recall": (lambda: vclaw._recall("k"), "read"),
    "history": (vclaw.history, "read"),
    "ask": (lambda: vclaw.ask("hello", "hi"), "read"),
    "execute": (lambda: vclaw.execute("rtc_read", None), "read"),
    "idle": (vclaw.idle, "write"),
}


def attempt(fn):
    """The call, then a loop in the same try (the VM checks for a pending
    exception at a branch). Returns (whether the call returned, the
    exception raised in the try, or None)."""
    returned = False
    try:
        fn()
        returned = True
        for _ in range(3):
            pass
    except BaseException as e:  # noqa: the point of the test
        return returned, e
    return returned, None


cases = 0
for exc in (KeyboardInterrupt, SystemExit, GeneratorExit, ValueError):
    for name, (fn, kind) in OPS.items():
        k = 0
        while k < 200:
            k += 1
            label = "%s at %s #%d of %s" % (exc.__name__, kind, k, name)
            dev = RaiseDev(BASE)
            vrig.boot(vclaw, dev)
            if name in ("ask", "idle"):
                vclaw.execute("gpio_set", None)  # the ring loaded (and dirty)
            dev.arm(exc, kind, k)
            returned, after = attempt(fn)
            fired = dev.fired
            dev.arm(None, None, 0)
            if not fired:
                t.check(returned and after is None, "%s: no fault, no exception" % label, repr(after))
                break
            cases += 1
            t.check(returned, "%s: the call returns (the binding raises nothing)" % label, repr(after))
            if exc is ValueError:
                t.check(after is None, "%s: an Exception is an I/O failure, nothing raised" % label, repr(after))
            else:
                t.check(type(after) is exc, "%s: the VM raises %s after the call" % (label, exc.__name__),
                        repr(after))
            # The next calls work, with nothing in between.
            try:
                t.eq(vclaw.remember("after", "ok"), True, "%s: remember() right after" % label)
                t.eq(vclaw._recall("after"), "ok", "%s: recall() right after" % label)
                t.eq(vclaw._recall("other"), "stays", "%s: the other pair" % label)
                t.check("tool: execute: gpio_read" in vrig.conversation(vclaw.history()),
                        "%s: history() right after" % label)
                t.eq(vclaw.idle(), True, "%s: the idle point right after" % label)
            except BaseException as e:  # noqa: nothing may stay pending
                t.check(False, "%s: the next calls work" % label, repr(e))
            # A power cut: what is on flash.
            vrig.boot(vclaw, RaiseDev(bytes(dev.data)))
            allowed = (OLD, NEW) if name.startswith("remember") else (OLD,)
            t.check(vclaw._recall("k") in allowed, "%s: the store holds %s" % (label, " or ".join(allowed)),
                    vclaw._recall("k"))
            t.eq(vclaw._recall("other"), "stays", "%s: the other pair survives" % label)
t.check(cases > 40, "faults were injected", cases)
t.done()
