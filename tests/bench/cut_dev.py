# cut_dev.py — the counting RAM block device that tests/bench/flash_layouts.py
# and tests/bench/bento_layouts.py measure LittleFS with (plain MicroPython,
# the extended block interface: readblocks/writeblocks with offset, ioctl
# 4/5/6). It counts bytes programmed and read, program calls and erases (and
# which blocks), and cuts the power on demand: arm(cut) makes the cut-th
# device operation (a program or an erase, counted from arm()) fail with EIO,
# half done when `tear`, and every one after it too (the machine is "off").

EIO = 5


class CutDev:
    def __init__(self, blocks, block_size):
        self.blocks = blocks
        self.bs = block_size
        self.data = bytearray(blocks * block_size)
        self.mv = memoryview(self.data)
        self.ff = b"\xff" * block_size
        self.blank()

    def blank(self):
        """Erased flash and fresh counters."""
        bs = self.bs
        for b in range(self.blocks):
            self.data[b * bs : (b + 1) * bs] = self.ff
        self.erased = []
        self.reset()
        self.arm(None)
        return self

    def reset(self):
        self.prog = 0
        self.calls = 0
        self.erases = 0
        self.read = 0

    def arm(self, cut, tear=True):
        self.cut = cut
        self.tear = tear
        self.nops = 0
        self.dead = False

    def _op(self):
        """0: the operation runs; 1: power fails during it; 2: it is off."""
        if self.dead:
            return 2
        self.nops += 1
        if self.cut is not None and self.nops == self.cut:
            self.dead = True
            return 1
        return 0

    def readblocks(self, block, buf, off=0):
        a = block * self.bs + off
        n = len(buf)
        buf[:] = self.mv[a : a + n]
        self.read += n
        return 0

    def writeblocks(self, block, buf, off=None):
        if off is None:
            off = 0
        st = self._op()
        a = block * self.bs + off
        if st:
            if st == 1 and self.tear:
                n = len(buf) // 2
                self.data[a : a + n] = buf[:n]
            return -EIO
        self.data[a : a + len(buf)] = buf
        self.prog += len(buf)
        self.calls += 1
        return 0

    def ioctl(self, op, arg):
        if op == 4:
            return self.blocks
        if op == 5:
            return self.bs
        if op == 6:
            st = self._op()
            a = arg * self.bs
            if st:
                if st == 1 and self.tear:
                    half = self.bs // 2
                    self.data[a : a + half] = self.ff[:half]
                return -EIO
            self.data[a : a + self.bs] = self.ff
            self.erases += 1
            self.erased.append(arg)
            return 0
        return 0
