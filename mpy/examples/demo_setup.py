# demo_setup.py — MicroPython (unix port): put the same LittleFS the board uses
# at "/", on a block device held in RAM.
#
# As a module:  import demo_setup; bdev = demo_setup.mount_ram_root()
# As a script:  micropython -i mpy/examples/demo_setup.py   (what `scripts/run.sh --repl`
#               runs) mounts the RAM LittleFS, imports bentoclaw and leaves you
#               at the REPL with PORT and KEY set for bentoclaw.connect().
#
# Import this file before mounting: once "/" is LittleFS the host folders on
# sys.path are out of reach (the host tree is mounted at /host for the REPL).

import os
import vfs

BLOCK_SIZE = 512
BLOCKS = 128  # 64 KiB


class RAMBlockDevice:
    """A block device in RAM with littlefs's extended interface.

    readblocks/writeblocks take a byte offset inside the block; ioctl answers
    4 (block count), 5 (block size) and 6 (erase). It counts writes and erases,
    which a test can read to see what a call cost in flash traffic.
    """

    def __init__(self, blocks=BLOCKS, block_size=BLOCK_SIZE):
        self.blocks = blocks
        self.block_size = block_size
        self.data = bytearray(b"\xff" * (blocks * block_size))
        self.view = memoryview(self.data)
        self.writes = 0
        self.bytes_written = 0
        self.erases = 0

    def readblocks(self, block, buf, off=0):
        start = block * self.block_size + off
        buf[:] = self.view[start : start + len(buf)]

    def writeblocks(self, block, buf, off=None):
        if off is None:
            # Simple interface: whole blocks, erase implied.
            off = 0
        start = block * self.block_size + off
        self.data[start : start + len(buf)] = buf
        self.writes += 1
        self.bytes_written += len(buf)

    def ioctl(self, op, arg):
        if op == 4:  # block count
            return self.blocks
        if op == 5:  # block size
            return self.block_size
        if op == 6:  # erase block `arg`
            start = arg * self.block_size
            self.data[start : start + self.block_size] = b"\xff" * self.block_size
            self.erases += 1
            return 0
        return 0  # 1 init, 2 deinit, 3 sync: nothing to do in RAM


def mount_ram_root(blocks=BLOCKS, block_size=BLOCK_SIZE):
    """Format a fresh RAM block device with LittleFS v2 and mount it at "/"."""
    bdev = RAMBlockDevice(blocks, block_size)
    vfs.VfsLfs2.mkfs(bdev)
    try:
        vfs.umount("/")
    except OSError:
        pass
    vfs.mount(vfs.VfsLfs2(bdev), "/")
    os.chdir("/")
    return bdev


def mount_host(host_dir, at="/host"):
    """Make a host folder reachable again under `at` (unix port only)."""
    vfs.mount(vfs.VfsPosix(host_dir), at)


if __name__ == "__main__":
    _cwd = os.getcwd()
    PORT = int(os.getenv("BENTOCLAW_PORT") or "0")
    KEY = os.getenv("BENTOCLAW_API_KEY") or "demo-key"
    bdev = mount_ram_root()
    try:
        mount_host(_cwd)
        _host = "/host"
        import sys

        sys.path.append(_host + "/mpy/examples")  # so demo.py can `import demo_setup`
    except OSError:
        _host = None
    import bentoclaw

    print("bentoclaw REPL: LittleFS in RAM (%d x %d B) at /" % (bdev.blocks, bdev.block_size))
    if _host:
        print("host folder %s at %s" % (_cwd, _host))
    print("backend on 127.0.0.1:%d, key %r. Try:" % (PORT, KEY))
    print("  bentoclaw.connect('127.0.0.1', PORT, KEY)")
    print("  bentoclaw.ask('hello')")
    print("  bentoclaw.remember('name', 'somchai'); bentoclaw.recall('name')")
    print("  bentoclaw.status(); bentoclaw.safety(); os.listdir('/')")
    if _host:
        print("  exec(open('/host/mpy/examples/demo.py').read())   # the whole demo")
