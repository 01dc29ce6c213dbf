# test_boot.py — the emulated board itself: platform, FPU, clock, board
# module, LittleFS on the RAM disk, the bentoclaw module's firmware variant.
# (tests/qemu/qrig.py has been executed first: Checker, mount_ramdisk, ...)
import sys
import time
import board
import bentoclaw

t = Checker("boot")
CORE = {"m33": "mps2-an505 with Cortex-M33", "m55": "mps3-an547 with Cortex-M55"}[QEMU_BOARD]
RAMDISK = {"m33": 2 * 1024 * 1024, "m55": 256 * 1024}[QEMU_BOARD]
t.eq(sys.platform, "qemu", "sys.platform")
t.eq(sys.implementation._machine, CORE, "machine name")
print("machine:", sys.implementation._machine)
t.eq(1.5 * 2.25, 3.375, "hard-float arithmetic")
t.check(abs(2.0 ** 0.5 - 1.41421356) < 1e-6, "float sqrt")

# --- the clock: monotonic, ms resolution, sleep_ms about right -----------------
prev = time.ticks_ms()
mono = True
for _ in range(2000):
    now = time.ticks_ms()
    if time.ticks_diff(now, prev) < 0:
        mono = False
    prev = now
t.check(mono, "ticks_ms never goes backwards")
for ms in (5, 50, 200):
    t0 = time.ticks_ms()
    u0 = time.ticks_us()
    time.sleep_ms(ms)
    dt = time.ticks_diff(time.ticks_ms(), t0)
    du = time.ticks_diff(time.ticks_us(), u0)
    print("sleep_ms(%d): ticks_ms %d, ticks_us %d" % (ms, dt, du))
    # qemu's timers run on the host's clock: a busy host may wake us late.
    t.check(ms <= dt <= ms + 60, "sleep_ms(%d) measured %d ms" % (ms, dt))
    t.check(abs(du - dt * 1000) <= 2000, "ticks_us agrees with ticks_ms", du, dt)
t.check(time.ticks_diff(time.ticks_ms(), 0) >= 0, "ticks_diff works")

# --- board module ------------------------------------------------------------------
# The BENTO board's MicroPython task stack: 8 KiB, limit 8 KiB - 512,
# painted at boot (tests/qemu/boards/common/board_stack.c).
boot_peak = board.stack_used()
print("stack: deepest since power-on %d bytes" % boot_peak)
t.check(0 < boot_peak < 8 * 1024, "the boot painted the stack: its high-water mark since power-on", boot_peak)
t.eq(board.stack_size(), 8 * 1024, "stack size from the linker script")
t.eq(board.stack_limit(), 8 * 1024 - 512, "MicroPython's stack limit")
d = board.stack_depth()
t.check(0 < d < 4096, "stack depth at the REPL", d)
mem = board.ramdisk()
t.eq(len(mem), RAMDISK, "RAM disk size")
t.eq(BLOCK_SIZE, {"m33": 256 * 1024, "m55": 512}[QEMU_BOARD], "flash block size")
t.eq(LFS_OPTS, {"m33": {"progsize": 512, "readsize": 512}, "m55": {}}[QEMU_BOARD], "LittleFS mount options")
t.check(all(b == 0 for b in mem[:64]), "RAM disk is zero at power-on")
base = board.stack_paint()


def deep(n):
    return 0 if n == 0 else 1 + deep(n - 1)


deep(20)
used = board.stack_used()
print("stack: depth at paint %d, peak after deep(20) %d bytes" % (base, used))
t.check(used > base + 1000, "stack painting sees the recursion", base, used)

# --- LittleFS on the RAM disk ---------------------------------------------------------
disk = mount_ramdisk()
with open("/hello.txt", "w") as f:
    f.write("สวัสดี %s\n" % QEMU_BOARD)
t.eq(read_file("/hello.txt"), ("สวัสดี %s\n" % QEMU_BOARD).encode(), "file round trip on LittleFS")
st = os.stat("/hello.txt")
t.eq(st[6], len(("สวัสดี %s\n" % QEMU_BOARD).encode()), "stat size")
t.check(disk.writes > 0, "the RAM disk saw the writes", disk.writes)

# --- bentoclaw, firmware variant ----------------------------------------------------
for name in ("tools", "execute", "status", "version", "connect", "ask", "disconnect", "remember", "history",
             "session_clear", "safety", "recall", "flush", "tool", "register_tool", "confirm"):
    t.check(hasattr(bentoclaw, name), "bentoclaw.%s" % name)
t.check(not hasattr(bentoclaw, "_ui_events"), "no unix-only _ui_events in the firmware variant")
names = [x["name"] for x in bentoclaw.tools()]
# The board's registry: the vendor's tools the firmware has (the board's
# hardware tools on the M33, the binding's MicroPython ones, the firmware
# build's LCD console and resets), then the library's own.
HARDWARE = {"m33": ["gpio_set", "gpio_read"], "m55": []}[QEMU_BOARD]
want = HARDWARE + ["lcd_console", "ui_notify", "trustm_sign", "rule_set", "rule_clear", "diagnostics_read",
                   "rtc_read", "heap_info", "fs_list", "fs_stat", "fs_read", "py_exec", "rtc_set", "fs_write",
                   "fs_delete", "trustm_random", "trustm_sha256", "hard_reset", "safe_boot",
                   "echo", "uptime", "led", "wipe_memory"]
t.eq(names, want, "the board's tools, in the vendor's order")
t.check(all(x["builtin"] for x in bentoclaw.tools()), "all of them the board's")
t.eq(bentoclaw.safety()["trust_level"], "usb", "resting trust USB")
up = bentoclaw.tool("uptime")
t.check(isinstance(up, int) and abs(time.ticks_diff(up, time.ticks_ms())) < 100,
        "uptime tool reads mp_hal_ticks_ms", up)
print("limits: PROMPT_MAX %d CONTEXT_MAX %d REPLY_MAX %d" %
      (bentoclaw.PROMPT_MAX, bentoclaw.CONTEXT_MAX, bentoclaw.REPLY_MAX))
t.done()
