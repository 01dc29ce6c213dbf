#!/usr/bin/env python3
"""run.py — run tests/qemu/test_*.py in the emulated Cortex-M55 firmware.

Each test boots its own qemu-system-arm -M mps3-an547 (power-on state: RAM
disk and C statics zero), talks to MicroPython's raw REPL over the UART
(qemu's -serial stdio on pipes; the CMSDK UART takes one byte at a time and
qemu holds the rest, so nothing is lost), executes tests/qemu/qrig.py and then
the test. Standard library only (no pyserial, no pexpect).

A test file is one or more phases, separated by a marker line:

    #== reset ctrl-d    the runner soft-resets the board with Ctrl-D at the
                        raw REPL prompt before the next phase
    #== reset machine   the phase before ended with machine.soft_reset()
                        (t.done(reset=True)); the runner checks it happened

Before each phase the rig is executed again (a soft reset clears the VM).
A phase passes when it raised nothing and printed
"RESULT: <n> passed, 0 failed" with n > 0. Header markers of a test file:

    # qemu: icount      run with -icount shift=3,sleep=off: virtual time,
                        and a WFI jumps to the next timer deadline, so
                        time.sleep_ms(30000) takes about half a second
    # timeout: <s>      wall-clock limit for the whole test (default 90)

Usage:
    run.py [--elf build/qemu/firmware.elf] [--log-dir DIR] [PATTERN ...]
    run.py --repl        boot, mount the RAM disk at "/", hand over the REPL
                         (Ctrl-] quits; so does machine.reset())

Prints one line per test and last "RESULT: <n> passed, <m> failed";
exits 1 when a test failed.
"""
import argparse
import os
import re
import select
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RAW_PROMPT = b"raw REPL; CTRL-B to exit\r\n>"
MARKER_RE = re.compile(r"^#== reset (ctrl-d|machine)\s*$")
RESULT_RE = re.compile(rb"RESULT: (\d+) passed, (\d+) failed")


class Timeout(Exception):
    pass


def _die_with_parent():
    """In the qemu child: get SIGKILL when the runner dies (Linux), so a
    runner killed by a timeout leaves no emulator behind."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except Exception:
        pass


class Board:
    """One qemu process; its UART is our stdin/stdout pipe pair."""

    def __init__(self, qemu, elf, icount=False, log=None):
        cmd = [qemu, "-M", "mps3-an547", "-display", "none", "-monitor", "none",
               "-serial", "stdio", "-semihosting", "-kernel", elf]
        if icount:
            cmd[1:1] = ["-icount", "shift=3,sleep=off"]
        self.cmd = cmd
        self.log = log
        self.buf = bytearray()
        self.cond = threading.Condition()
        self.eof = False
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        fd = self.proc.stdout.fileno()
        while True:
            try:
                data = os.read(fd, 4096)
            except OSError:
                data = b""
            with self.cond:
                if not data:
                    self.eof = True
                    self.cond.notify_all()
                    return
                self.buf += data
                self.cond.notify_all()

    def write(self, data):
        if self.log:
            self.log.write(b"\n>>> sent %d bytes\n" % len(data))
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read_until(self, token, deadline):
        """Everything up to and including token (removed from the buffer)."""
        with self.cond:
            while True:
                i = self.buf.find(token)
                if i >= 0:
                    out = bytes(self.buf[: i + len(token)])
                    del self.buf[: i + len(token)]
                    if self.log:
                        self.log.write(out)
                    return out
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    pending = bytes(self.buf)
                    if self.log:
                        self.log.write(pending)
                    why = "qemu exited" if self.eof else "timeout"
                    raise Timeout("%s waiting for %r; last output: %r" % (why, token, pending[-300:]))
                self.cond.wait(min(left, 0.5))

    def enter_raw(self, deadline):
        banner = self.read_until(b">>> ", deadline)
        self.write(b"\r\x03\x03\x01")
        self.read_until(RAW_PROMPT, deadline)
        return banner

    def exec_raw(self, src, deadline):
        """Run src in the raw REPL. Returns (stdout, exception text, tail);
        tail holds what came before the next prompt (a soft reboot's text)."""
        if isinstance(src, str):
            src = src.encode()
        self.write(src + b"\x04")
        self.read_until(b"OK", deadline)
        out = self.read_until(b"\x04", deadline)[:-1]
        err = self.read_until(b"\x04", deadline)[:-1]
        # The next prompt; after machine.soft_reset() it comes after
        # "MPY: soft reboot" and the new VM's raw REPL banner.
        tail = self.read_until(b">", deadline)
        return out, err, tail

    def soft_reset_ctrl_d(self, deadline):
        self.write(b"\x04")
        got = self.read_until(RAW_PROMPT, deadline)
        if b"soft reboot" not in got:
            raise Timeout("Ctrl-D did not soft-reset: %r" % got)
        return got

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.stdout.close()


def parse_test(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    header = "\n".join(l for l in lines[:40] if l.startswith("#"))
    icount = bool(re.search(r"^# qemu: .*\bicount\b", header, re.M))
    m = re.search(r"^# timeout: (\d+)", header, re.M)
    timeout = int(m.group(1)) if m else 90
    phases = []  # (reset kind before this phase or None, source)
    start, kind = 0, None
    for i, line in enumerate(lines + ["#== reset end"]):
        mm = MARKER_RE.match(line) if i < len(lines) else True
        if mm:
            # Pad with blank lines so tracebacks give the file's line numbers.
            src = "\n" * start + "\n".join(lines[start:i]) + "\n"
            phases.append((kind, src))
            kind = mm.group(1) if i < len(lines) else None
            start = i + 1
    return icount, timeout, phases


def run_test(path, args, rig_src, log_dir):
    name = os.path.splitext(os.path.basename(path))[0]
    icount, timeout, phases = parse_test(path)
    log_path = os.path.join(log_dir, name + ".log")
    t0 = time.monotonic()
    deadline = t0 + timeout
    checks = 0
    reason = None
    banner = b""
    with open(log_path, "wb") as log:
        board = Board(args.qemu, args.elf, icount=icount, log=log)
        log.write(("$ %s\n" % " ".join(board.cmd)).encode())
        try:
            banner = board.enter_raw(deadline)
            for n, (kind, src) in enumerate(phases, 1):
                if kind == "ctrl-d":
                    board.soft_reset_ctrl_d(deadline)
                out, err, _ = board.exec_raw(rig_src, deadline)
                if err:
                    reason = "rig failed in phase %d: %s" % (n, err.decode(errors="replace").strip())
                    break
                out, err, tail = board.exec_raw(src, deadline)
                log.write(b"\n--- end of phase %d\n" % n)
                if err:
                    reason = "phase %d raised: %s" % (n, err.decode(errors="replace").strip().split("\n")[-1])
                    break
                results = RESULT_RE.findall(out)
                if not results:
                    reason = "phase %d printed no RESULT line" % n
                    break
                p, f = (int(x) for x in results[-1])
                checks += p + f
                if f or p == 0:
                    bad = [l for l in out.decode(errors="replace").split("\n") if l.startswith("FAIL")]
                    reason = "phase %d: %d of %d checks failed: %s" % (n, f, p + f, "; ".join(bad)[:400])
                    break
                want_reset = n < len(phases) and phases[n][0] == "machine"
                if want_reset and b"soft reboot" not in tail:
                    reason = "phase %d did not end in a soft reset" % n
                    break
        except Timeout as e:
            reason = str(e)
        except OSError as e:  # qemu went away while we wrote to it
            reason = "qemu I/O failed: %s" % e
        finally:
            board.close()
    secs = time.monotonic() - t0
    return name, reason, checks, secs, log_path, banner


def repl(args, rig_src):
    import termios
    import tty

    board = Board(args.qemu, args.elf)
    try:
        deadline = time.monotonic() + 20
        banner = board.enter_raw(deadline)
        setup = lambda mkfs: rig_src + "\ndisk = mount_ramdisk(mkfs=%s)\n" % mkfs
        board.exec_raw(setup(True), deadline)
        board.write(b"\x02")  # friendly REPL
    except BaseException:
        board.close()
        raise
    sys.stdout.write(banner.decode(errors="replace").split("\n")[0] + "\n")
    sys.stdout.write("LittleFS on the RAM disk is mounted at '/' (and again after every soft "
                     "reset); the rig's names (Checker, mount_ramdisk, ...) are defined.\n"
                     "Ctrl-] quits, as does machine.reset(). Ctrl-D soft-resets.\n")
    sys.stdout.flush()
    fd = sys.stdin.fileno()
    old = termios.tcgetattr(fd) if os.isatty(fd) else None
    recent = b""
    try:
        if old:
            tty.setraw(fd)
        while board.proc.poll() is None:
            with board.cond:
                data = bytes(board.buf)
                del board.buf[:]
                eof = board.eof
            if data:
                os.write(sys.stdout.fileno(), data)
                recent = (recent + data)[-200:]
            if eof:
                break
            if b"soft reboot" in recent and recent.endswith(b">>> "):
                # A new VM: mount the RAM disk again (without mkfs) before
                # handing the prompt back.
                recent = b""
                d = time.monotonic() + 20
                board.write(b"\x01")
                board.read_until(RAW_PROMPT, d)
                board.exec_raw(setup(False), d)
                board.write(b"\x02")
                board.read_until(b">>> ", d)
                os.write(sys.stdout.fileno(), b"(RAM disk mounted again)\r\n>>> ")
            r, _, _ = select.select([fd], [], [], 0.02)
            if r:
                data = os.read(fd, 256)
                if not data or b"\x1d" in data:
                    break
                board.write(data)
    finally:
        if old:
            termios.tcsetattr(fd, termios.TCSADRAIN, old)
        board.close()
    print()
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--elf", default=os.path.join(ROOT, "build", "qemu", "firmware.elf"))
    ap.add_argument("--qemu", default="qemu-system-arm")
    ap.add_argument("--log-dir", default=os.path.join(ROOT, "build", "test-qemu"))
    ap.add_argument("--repl", action="store_true")
    ap.add_argument("patterns", nargs="*")
    args = ap.parse_args()

    with open(os.path.join(HERE, "qrig.py"), encoding="utf-8") as f:
        rig_src = f.read()
    if args.repl:
        return repl(args, rig_src)

    os.makedirs(args.log_dir, exist_ok=True)
    tests = sorted(f for f in os.listdir(HERE) if f.startswith("test_") and f.endswith(".py"))
    if args.patterns:
        tests = [t for t in tests if any(p in t for p in args.patterns)]
    passed = failed = 0
    t_all = time.monotonic()
    for t in tests:
        name, reason, checks, secs, log_path, banner = run_test(os.path.join(HERE, t), args, rig_src,
                                                                args.log_dir)
        if passed + failed == 0 and banner:
            print("firmware: %s" % banner.decode(errors="replace").strip().split("\n")[0].strip())
        if reason is None:
            passed += 1
            print("PASS %-24s %5.1f s  %d checks" % (name, secs, checks))
        else:
            failed += 1
            print("FAIL %-24s %5.1f s  %s" % (name, secs, reason))
            with open(log_path, "rb") as f:
                tail = f.read().decode(errors="replace").split("\n")[-25:]
            for line in tail:
                print("    | " + line.rstrip("\r"))
        sys.stdout.flush()
    print("total %.1f s; logs in %s" % (time.monotonic() - t_all, os.path.relpath(args.log_dir, os.getcwd())))
    print("RESULT: %d passed, %d failed" % (passed, failed))
    return 1 if failed or not tests else 0


if __name__ == "__main__":
    sys.exit(main())
