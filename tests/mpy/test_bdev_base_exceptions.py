# test_bdev_base_exceptions.py — KeyboardInterrupt, SystemExit and
# GeneratorExit raised inside a block device propagate out of the bentoclaw
# call that ran into them (issue 13; the port's rule 4 in
# mpy/claw_port_vfs.c). Before the fix they were swallowed as I/O errors:
# remember() returned False and Ctrl-C was lost (or re-armed to fire at some
# later bytecode).
#
# For each exception type, raised at every k-th writeblocks (remember(),
# flush()) or readblocks (remember(), recall(), flush() after a reboot):
#   - the call raises exactly that type (after the library has returned);
#   - the next calls work (nothing stays pending);
#   - after a remount and a reboot the store holds the old value (or, for a
#     remember() interrupted after its commit, the new one) and every other
#     pair, and the session holds the old or the new ring.
import claw_rig as rig
import bentoclaw

t = rig.Checker("bdev-base-exceptions")
EXCS = (KeyboardInterrupt, SystemExit, GeneratorExit)
OLD, NEW = "old value", "new value"


class RaiseDev(rig.RamBlockDev):
    """Raises self.exc from the k-th readblocks or writeblocks call."""

    def __init__(self, data=None):
        super().__init__(64, data)
        self.arm(None, None, 0)

    def arm(self, exc, kind, k):
        self.exc = exc
        self.kind = kind
        self.k = k
        self.n = 0
        self.fired = False

    def _maybe(self, kind):
        if self.exc is not None and kind == self.kind and not self.fired:
            self.n += 1
            if self.n == self.k:
                self.fired = True
                raise self.exc()

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


def boot(image):
    dev = RaiseDev(image)
    rig.mount(dev, mkfs=False)
    return dev, rig.simulate_soft_reset(bentoclaw)


def make_image():
    dev = RaiseDev()
    rig.mount(dev)
    bc = rig.simulate_soft_reset(bentoclaw)
    rig.classic_session(bc)
    bc.remember("k", OLD)
    bc.remember("other", "stays")
    bc.tool("echo", "turn one")
    bc.flush()
    return bytes(dev.data)


BASE = make_image()


def ring(bc):
    return [c for r, c in bc.session()]


dev, bc = boot(BASE)
RING_OLD = ring(bc)


def prepare(dev, bc, op):
    """Before the fault is armed. flush() needs a dirty ring: a turn whose
    own flush failed (tool() flushes at once; a plain -EIO from the device
    leaves the turn in RAM, dirty)."""
    if op == "flush":
        dev.fail_writes = True
        bc.tool("echo", "turn two")
        dev.fail_writes = False
        t.eq(bc.status()["dirty"], True, "the ring is dirty before flush()")


def run(bc, op):
    if op == "remember":
        return bc.remember("k", NEW)
    if op == "recall":
        return bc.recall("k")
    return bc.flush()


cases = 0
losses = 0
for exc in EXCS:
    for op, kind in (("remember", "write"), ("remember", "read"), ("recall", "read"), ("flush", "write"),
                     ("flush", "read")):
        k = 0
        while True:
            k += 1
            label = "%s at %s #%d of %s()" % (exc.__name__, kind, k, op)
            dev, bc = boot(BASE)
            prepare(dev, bc, op)
            dev.arm(exc, kind, k)
            try:
                r = run(bc, op)
                raised = None
            except BaseException as e:  # noqa: the point of the test
                raised = e
            if not dev.fired:
                # k is past the last device call of this kind: done.
                t.check(raised is None, "%s: no exception without the fault" % label, repr(raised))
                break
            cases += 1
            before = t.failed
            t.check(raised is not None and type(raised) is exc, "%s: the call raises %s" % (label, exc.__name__),
                    repr(raised) if raised is not None else "returned %r" % (r,))
            # Nothing stays pending: the next calls work.
            try:
                t.eq(bc.remember("after", "ok"), True, "%s: remember() afterwards" % label)
                t.eq(bc.recall("after"), "ok", "%s: recall() afterwards" % label)
            except BaseException as e:
                t.check(False, "%s: later calls work" % label, repr(e))
            # A reboot: what is on flash.
            rig.mount(dev, mkfs=False)
            bc2 = rig.simulate_soft_reset(bentoclaw)
            allowed = (OLD, NEW) if op == "remember" else (OLD,)
            t.check(bc2.recall("k") in allowed, "%s: the store holds %s after a reboot" % (label, " or ".join(allowed)),
                    bc2.recall("k"))
            t.eq(bc2.recall("other"), "stays", "%s: the other pair survives" % label)
            rg = ring(bc2)
            t.check(rg[: len(RING_OLD)] == RING_OLD, "%s: the session keeps its old turns" % label, rg)
            losses += t.failed > before
            if k > 1000:
                t.check(False, "%s: the operation ends" % label)
                break
t.check(cases > 20, "faults were injected", cases)
print("RELIABILITY: KeyboardInterrupt/SystemExit/GeneratorExit in the block device (every read/write)|%d|%d"
      % (cases, losses))
print("CRASHCLASS: KeyboardInterrupt/SystemExit/GeneratorExit raised inside the block device|"
      "test_bdev_base_exceptions|%s|swallowed as an I/O error; the KeyboardInterrupt fired later, outside the call"
      % ("propagates after the library returned; data intact" if t.failed == 0 else "FAILED"))
t.done()
