# test_reimport_guard.py — the re-entry guard never outlives the operation
# that set it (issue 13; the port's rule 3 in mpy/claw_port_vfs.c).
#
# bentoclaw tells a new VM from the current one by a marker it keeps in
# sys.modules; `import bentoclaw` without the marker looks like a new VM and
# resets the binding's state (the port forgets a previous VM's open files
# itself when a core call begins). Python code running inside a
# file operation (a block device written in Python, under LittleFS) can
# remove the marker and re-import the module. Before the fix that reset
# zeroed the busy depth and the open-file slots under the running callback:
# the callback's decrement wrapped the depth to 255, and every later call
# raised RuntimeError('bentoclaw called from inside a file operation') for
# the rest of the process.
#
# Now each callback restores the depth it found, and nothing is reset while
# a callback runs (claw_port_vfs_busy()). Checked from readblocks and writeblocks
# callbacks, during remember(), recall() and flush(): the call in progress
# completes correctly, a call made inside the callback is still refused,
# and every later call works.
import sys
import claw_rig as rig
import bentoclaw

GUARD_TEXT = "bentoclaw called from inside a file operation"

t = rig.Checker("reimport-guard")


class HookDev(rig.RamBlockDev):
    """Calls self.hook() from the n-th readblocks or writeblocks call."""

    def __init__(self):
        super().__init__(64)
        self.hook = None
        self.when = None  # ("read" | "write", n)
        self.seen = 0

    def _maybe(self, kind):
        if self.when is not None and self.when[0] == kind:
            self.seen += 1
            if self.seen == self.when[1]:
                self.when = None
                self.hook()

    def readblocks(self, block, buf, off=0):
        r = super().readblocks(block, buf, off)
        self._maybe("read")
        return r

    def writeblocks(self, block, buf, off=None):
        r = super().writeblocks(block, buf, off)
        self._maybe("write")
        return r


inside = []  # what happened inside the callback


def reimport():
    # What simulate_soft_reset does, from inside a file operation.
    for k in list(sys.modules):
        if not isinstance(k, str):
            del sys.modules[k]
    import bentoclaw as again

    inside.append("reimported")
    try:
        again.recall("x")
        inside.append("inner call ran")
    except RuntimeError as e:
        inside.append(str(e))


def arm(dev, kind, n):
    dev.seen = 0
    dev.when = (kind, n)
    dev.hook = reimport
    del inside[:]


def later_calls_work(bc, label):
    ok = True
    try:
        ok &= t.eq(bc.remember("later", label), True, "%s: remember() afterwards" % label)
        ok &= t.eq(bc.recall("later"), label, "%s: recall() afterwards" % label)
        bc.tool("echo", "after " + label)
        ok &= t.eq(bc.flush(), True, "%s: flush() afterwards" % label)
        ok &= t.eq(bc.status()["session_msgs"] >= 0, True, "%s: status() afterwards" % label)
    except RuntimeError as e:
        t.check(False, "%s: later calls work" % label, repr(e))
        ok = False
    return ok


cases = 0
losses = 0
for kind, n in (("write", 1), ("write", 2), ("write", 3), ("read", 1), ("read", 2)):
    for op in ("remember", "recall", "flush"):
        label = "%s #%d during %s()" % (kind, n, op)
        dev = rig.mount(HookDev())
        bc = rig.simulate_soft_reset(bentoclaw)
        t.eq(bc.remember("k", "old"), True, "%s: setup" % label)
        bc.tool("echo", "turn one")
        bc.flush()
        rig.mount(dev, mkfs=False)  # drop LittleFS's caches: reads reach the device
        bc = rig.simulate_soft_reset(bc)
        arm(dev, kind, n)
        try:
            if op == "remember":
                r = bc.remember("k", "new")
            elif op == "recall":
                r = bc.recall("k")
            else:
                bc.tool("echo", "turn two")
                r = bc.flush()
        except Exception as e:
            r = e
        fired = dev.when is None
        if not fired:
            # This operation makes fewer device calls of that kind: nothing
            # to check, but the module must still work.
            dev.when = None
            later_calls_work(bc, label)
            continue
        cases += 1
        before = t.failed
        t.check(inside[:1] == ["reimported"], "%s: the callback re-imported the module" % label, inside)
        t.eq(inside[1:], [GUARD_TEXT], "%s: a call inside the callback is still refused" % label)
        # The call in progress was not disturbed by the re-import.
        if op == "remember":
            t.eq(r, True, "%s: remember() completes" % label)
            want = "new"
        elif op == "recall":
            t.eq(r, "old", "%s: recall() completes" % label)
            want = "old"
        else:
            t.eq(r, True, "%s: flush() completes" % label)
            want = "old"
        if later_calls_work(bc, label):
            t.eq(bc.recall("k"), want, "%s: the value" % label)
        # And after a reboot the store says the same.
        rig.mount(dev, mkfs=False)
        bc = rig.simulate_soft_reset(bc)
        t.eq(bc.recall("k"), want, "%s: the value after a remount" % label)
        losses += t.failed > before
t.check(cases >= 10, "the callback fired in most cases", cases)
print("RELIABILITY: re-import from inside a block device callback|%d|%d" % (cases, losses))
print("CRASHCLASS: re-import of bentoclaw from inside a block device callback|test_reimport_guard|%s|every "
      "later call raised RuntimeError('bentoclaw called from inside a file operation') (12 of 12 cases)"
      % ("the guard ends with its operation" if t.failed == 0 else "FAILED"))
t.done()
