# test_gc_heap.py — bentoclaw's GC heap (issue 22) on the unix port: the
# code of tests/qemu/test_gc_heap.py, run as it is with claw_rig in the place
# of the emulated board's rig, LittleFS on a RAM block device of 4 KiB blocks
# mounted as the board mounts its flash (readsize = progsize = 512). The
# port's GC blocks are 32 bytes (16 on the board) and its objects larger
# (64-bit), so its figures are the port's own: printed as "HEAP ..." lines,
# checked against the goals on the board only.
# needs: backend
import vfs
import claw_rig as rig

g = {
    "__name__": "test_gc_heap",
    "QEMU_BOARD": None,
    "BACKEND_PORT": rig.backend_port(),
    "API_KEY": rig.API_KEY,
    "Checker": rig.Checker,
    "read_file": rig.read_file,
    "backend_control": rig.backend_control,
}


ERASED = b"\xff" * 4096


class Disk(rig.RamBlockDev):
    """rig.RamBlockDev that allocates nothing per operation (as the board's
    RAM disk): reads and writes through a memoryview, erases from a
    constant."""

    def ioctl(self, op, arg):
        if op == 6:
            self.data[arg * 4096 : (arg + 1) * 4096] = ERASED
            return 0
        return super().ioctl(op, arg)


def mount_ramdisk():
    bdev = Disk(64, block_size=4096)
    bdev.data = memoryview(bdev.data)
    vfs.VfsLfs2.mkfs(bdev, **g["LFS_OPTS"])
    vfs.mount(vfs.VfsLfs2(bdev, **g["LFS_OPTS"]), "/")
    return bdev


g["mount_ramdisk"] = mount_ramdisk
with open(rig.getenv("BENTOCLAW_ROOT") + "/tests/qemu/test_gc_heap.py") as f:
    src = f.read()
exec(src, g)
