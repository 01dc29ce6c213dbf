#!/usr/bin/env python3
"""run.py — run bentoclaw's MicroPython tests in the emulated firmware.

Two boards (scripts/build_qemu.sh builds both; docs/EMULATOR.md):

    m33  qemu-system-arm -M mps2-an505, Cortex-M33 (the primary target):
         build/qemu/firmware.elf. UART0 is the REPL; UART1 goes to the
         serial bridge (tests/qemu/serial_bridge.py, run here on threads),
         which forwards the board's backend requests to
         mpy/examples/backend.py on loopback. TACP shares UART0 with the
         REPL, as on the board (tests/qemu/tacp_client.py is the host side);
         UART2 is left unattached (the firmware does not use it).
    m55  qemu-system-arm -M mps3-an547, Cortex-M55: build/qemu-m55/firmware.elf,
         UART0 only (its transport has no network).
    m33-64k  the m33 built with the BENTO board's 64 KiB GC heap:
         build/qemu-64k/firmware.elf; it runs only the tests whose header
         names it ("# boards: m33-64k").

Tests:
  * tests/qemu/test_*.py — written for the emulated boards; run on m33 and
    m55 unless a header line "# boards: m55" (or m33, m33-64k) says otherwise.
    tests/qemu/qrig.py is executed before each phase (Checker, mount_ramdisk,
    bridge_fault, ...).
  * tests/mpy/test_*.py with a header line "# targets: unix qemu" — the
    unix port's tests, run unchanged on the M33: tests/mpy/claw_rig.py is
    installed as the module claw_rig (its ENV filled with BENTOCLAW_PORT),
    and does what differs on the board (mount with the board's flash
    geometry, the backend's control endpoints through the bridge).
    A "# boards:" line picks their boards too (default: m33).

Each test boots its own qemu (power-on state: RAM disk and C statics zero),
talks to MicroPython's raw REPL over UART0 (qemu's -serial stdio on pipes;
the CMSDK UART takes one byte at a time and qemu holds the rest, so nothing
is lost). Standard library only. A test file is one or more phases,
separated by a marker line:

    #== reset ctrl-d    the runner soft-resets the board with Ctrl-D at the
                        raw REPL prompt before the next phase
    #== reset machine   the phase before ended with machine.soft_reset()
                        (t.done(reset=True)); the runner checks it happened

A phase passes when it raised nothing and printed
"RESULT: <n> passed, 0 failed" with n > 0. Header lines of a test file:

    # needs: backend    a fresh mpy/examples/backend.py on a free loopback port
                        for this test (its port: BENTOCLAW_PORT / BACKEND_PORT)
    # needs: faketime   (tests/mpy: the unix port's faster clock) and
    # qemu: icount      run with -icount shift=3,sleep=off: board time follows
                        the instruction count (8 ns each), not the host's load,
                        and a WFI jumps to the next timer deadline, so
                        time.sleep_ms(30000) takes well under a second;
                        "icount shift=N": 2^N ns per instruction (a test that
                        waits out the transport's deadline in a busy loop
                        gets there in fewer instructions)
    # qemu: chunks=N    the rig and each phase are sent as runs of top-level
                        statements of about N bytes, one raw-REPL input each
                        (a small heap keeps its long free runs)
    # timeout: <s>      wall-clock limit for the whole test (default 90;
                        180 for tests/mpy files)
    # runs: host        the test is Python on the host, not on the board:
                        run.py imports it and calls its run(ctx) with the
                        booted Board (nothing read from it yet), the rig's
                        source, the backend's port and a Checker; it
                        drives the console itself (TACP frames and the REPL,
                        tests/qemu/tacp_client.py)

Usage:
    run.py [--board m33|m55] [--elf ELF] [--log-dir DIR] [PATTERN ...]
    run.py --repl [--board ...]   boot, mount the RAM disk at "/", hand over
                                  the REPL (Ctrl-] quits; so does machine.reset());
                                  on the M33 with the backend and the bridge

Prints one line per test and last "RESULT: <n> passed, <m> failed"; exits 1
when a test failed or no test ran.
"""
import argparse
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MPY_TESTS = os.path.join(ROOT, "tests", "mpy")
BACKEND = os.path.join(ROOT, "mpy", "examples", "backend.py")
RAW_PROMPT = b"raw REPL; CTRL-B to exit\r\n>"
MARKER_RE = re.compile(r"^#== reset (ctrl-d|machine)\s*$")
RESULT_RE = re.compile(rb"RESULT: (\d+) passed, (\d+) failed")
ICOUNT_SHIFT = 3  # 2^3 = 8 ns of board time per instruction

sys.path.insert(0, HERE)
import serial_bridge  # noqa: E402

BOARDS = {
    "m33": dict(machine="mps2-an505", elf=os.path.join(ROOT, "build", "qemu", "firmware.elf"),
                bridge=True, mpy_tests=True),
    "m55": dict(machine="mps3-an547", elf=os.path.join(ROOT, "build", "qemu-m55", "firmware.elf"),
                bridge=False, mpy_tests=False),
    # The m33 with the BENTO board's 64 KiB GC heap: only the tests that
    # name it ("# boards: m33-64k").
    "m33-64k": dict(machine="mps2-an505", elf=os.path.join(ROOT, "build", "qemu-64k", "firmware.elf"),
                    bridge=True, mpy_tests=False, variant=True),
}


class Timeout(Exception):
    pass


def _die_with_parent():
    """In a child: get SIGKILL when the runner dies (Linux), so a runner
    killed by a timeout leaves no emulator or backend behind."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except Exception:
        pass


class Backend:
    """mpy/examples/backend.py on a free loopback port (--stdin-exit: it ends
    when our pipe closes, even if the runner is killed)."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, BACKEND, "--port", "0", "--stdin-exit", "--quiet"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent)
        line = self.proc.stdout.readline().decode()
        m = re.match(r"PORT (\d+)", line)
        if not m:
            self.close()
            raise OSError("backend did not start: %r" % line)
        self.port = int(m.group(1))

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(2)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()


class Board:
    """One qemu process; UART0 is our stdin/stdout pipe pair. On a board with
    the bridge, UART1 is a Unix socket served by a SerialBridge."""

    def __init__(self, qemu, board, elf, icount=False, log=None):
        self.log = log
        self.buf = bytearray()
        self.cond = threading.Condition()
        self.eof = False
        self.bridge = None
        self.tmp = None
        cmd = [qemu, "-M", BOARDS[board]["machine"], "-display", "none", "-monitor", "none",
               "-semihosting", "-serial", "stdio"]
        listener = None
        if BOARDS[board]["bridge"]:
            # Short paths: a Unix socket path has a 108-byte limit.
            self.tmp = tempfile.mkdtemp(prefix="bcq-")
            link_path = os.path.join(self.tmp, "link.sock")
            listener = serial_bridge.listen_unix(link_path)
            cmd += ["-chardev", "socket,id=link,path=" + link_path, "-serial", "chardev:link"]
        if icount:
            cmd += ["-icount", "shift=%d,sleep=off" % icount]
        cmd += ["-kernel", elf]
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        if listener is not None:
            # qemu connects while it starts; the listening socket queued it.
            listener.settimeout(20)
            try:
                conn = listener.accept()[0]
            except OSError:
                self.close()
                raise Timeout("qemu did not attach its UART1 to the bridge socket")
            finally:
                listener.close()
            tlog = (lambda msg: log.write(("\n[%s]\n" % msg).encode())) if log else None
            self.bridge = serial_bridge.SerialBridge(conn, tlog).start()

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

    def exec_chunks(self, src, deadline, chunk=0):
        """exec_raw, or with chunk > 0 one exec_raw per run of top-level
        statements of at most about `chunk` bytes, in order, up to the first
        that raises: the raw REPL's input buffer (as long as the longest
        input, kept for the session) and the compiler's garbage stay small,
        so a small GC heap keeps its long free runs."""
        if not chunk:
            return self.exec_raw(src, deadline)
        import ast

        lines = src.split("\n")
        starts = [min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
                  for node in ast.parse(src).body] + [len(lines)]
        out, err, tail, at = b"", b"", b"", 0
        for i in range(1, len(starts)):
            if i == len(starts) - 1 or len("\n".join(lines[at:starts[i + 1]])) > chunk:
                # Blank lines keep the file's line numbers in tracebacks.
                o, err, tail = self.exec_raw("\n" * at + "\n".join(lines[at:starts[i]]) + "\n", deadline)
                out += o
                at = starts[i]
                if err:
                    break
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
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        if self.bridge:
            self.bridge.close()
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)


class TestFile:
    def __init__(self, path):
        self.path = path
        self.shared = os.path.dirname(os.path.abspath(path)) == MPY_TESTS
        self.name = ("mpy/" if self.shared else "") + os.path.splitext(os.path.basename(path))[0]
        with open(path, encoding="utf-8") as f:
            text = f.read()
        lines = text.split("\n")
        # tests/mpy/claw_rig.py is installed for the tests that import it.
        self.claw_rig = self.shared or "import claw_rig" in text
        header = "\n".join(l for l in lines[:40] if l.startswith("#"))
        self.needs = set(re.findall(r"^#\s*needs:\s*(\w+)", header, re.M))
        m = re.search(r"^# qemu: .*\bicount\b(?: shift=(\d+))?", header, re.M)
        # icount: the -icount shift, or 0 (board time = host time)
        self.icount = int(m.group(1) or ICOUNT_SHIFT) if m else (ICOUNT_SHIFT if self.needs & {"faketime", "clock"} else 0)
        m = re.search(r"^#\s*targets:(.*)$", header, re.M)
        self.targets = m.group(1).split() if m else []
        m = re.search(r"^# boards:(.*)$", header, re.M)
        self.named = m.group(1).split() if m else None
        self.boards = self.named or [b for b in BOARDS if not BOARDS[b].get("variant")]
        self.host = bool(re.search(r"^# runs: host\s*$", header, re.M))
        m = re.search(r"^# qemu: .*\bchunks=(\d+)", header, re.M)
        self.chunk = int(m.group(1)) if m else 0
        m = re.search(r"^# timeout: (\d+)", header, re.M)
        self.timeout = int(m.group(1)) if m else (180 if self.shared else 90)
        self.phases = []  # (reset kind before this phase or None, source)
        start, kind = 0, None
        for i, line in enumerate(lines + ["#== reset end"]):
            mm = MARKER_RE.match(line) if i < len(lines) else True
            if mm:
                # Pad with blank lines so tracebacks give the file's line numbers.
                src = "\n" * start + "\n".join(lines[start:i]) + "\n"
                self.phases.append((kind, src))
                kind = mm.group(1) if i < len(lines) else None
                start = i + 1

    def runs_on(self, board):
        if self.shared:
            named = board in self.named if self.named else BOARDS[board]["mpy_tests"]
            return named and "qemu" in self.targets
        return board in self.boards


def prelude(board, rig_src, claw_rig_src, backend_port, claw_rig):
    """What is executed before each phase: the board's name and the backend
    port as globals, the rig, and for a test that imports it the module
    claw_rig."""
    src = "QEMU_BOARD = %r\nBACKEND_PORT = %r\n" % (board, backend_port) + rig_src
    if claw_rig:
        env = {"BENTOCLAW_PORT": str(backend_port)} if backend_port else {}
        src += (
            "\ndef _install_claw_rig(src, env):\n"
            "    import sys\n"
            "    g = {'__name__': 'claw_rig'}\n"
            "    exec(src, g)\n"
            "    g['ENV'].update(env)\n"
            "    class ClawRig:\n"
            "        pass\n"
            "    m = ClawRig()\n"
            "    for k in g:\n"
            "        setattr(m, k, g[k])\n"
            "    if not sys.path:\n"
            "        sys.path.append('')\n"
            "    sys.modules['claw_rig'] = m\n"
            "_install_claw_rig(%r, %r)\n"
            "del _install_claw_rig\n" % (claw_rig_src, env))
    return src


class HostChecker:
    """The Checker of a host-side test: its FAIL lines go to the log."""

    def __init__(self, name, log):
        self.name, self.log = name, log
        self.passed = self.failed = 0

    def check(self, cond, what, *detail):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            line = "FAIL [%s] %s %s" % (self.name, what, " ".join(map(repr, detail)))
            self.log.write(("\n" + line + "\n").encode())
            self.fails.append(line)
        return cond

    def eq(self, got, want, what):
        return self.check(got == want, what, "got", got, "want", want)

    fails = None


class HostContext:
    def __init__(self, board, pre, backend, deadline, t):
        self.board, self.pre, self.deadline, self.t = board, pre, deadline, t
        self.backend_port = backend.port if backend else None


def run_host_test(test, board, pre, backend, deadline, log):
    """A "# runs: host" test: its run(ctx) drives the booted board."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("hosttest_" + os.path.basename(test.path)[:-3], test.path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    t = HostChecker(test.name, log)
    t.fails = []
    banner = mod.run(HostContext(board, pre, backend, deadline, t)) or b""
    checks = t.passed + t.failed
    if t.failed or t.passed == 0:
        return "%d of %d checks failed: %s" % (t.failed, checks, "; ".join(t.fails)[:400]), checks, banner
    return None, checks, banner


def run_test(test, args, rig_src, claw_rig_src):
    log_path = os.path.join(args.log_dir, test.name.replace("/", "-") + ".log")
    t0 = time.monotonic()
    deadline = t0 + test.timeout
    checks = 0
    reason = None
    banner = b""
    backend = board = None
    with open(log_path, "wb") as log:
        try:
            if "backend" in test.needs:
                if not BOARDS[args.board]["bridge"]:
                    raise OSError("board %s has no transport for a backend" % args.board)
                backend = Backend()
                log.write(b"backend on 127.0.0.1:%d\n" % backend.port)
            board = Board(args.qemu, args.board, args.elf, icount=test.icount, log=log)
            log.write(("$ %s\n" % " ".join(board.cmd)).encode())
            pre = prelude(args.board, rig_src, claw_rig_src, backend.port if backend else None, test.claw_rig)
            if test.host:
                reason, checks, banner = run_host_test(test, board, pre, backend, deadline, log)
                return reason, checks, time.monotonic() - t0, log_path, banner
            banner = board.enter_raw(deadline)
            for n, (kind, src) in enumerate(test.phases, 1):
                if kind == "ctrl-d":
                    board.soft_reset_ctrl_d(deadline)
                out, err, _ = board.exec_chunks(pre, deadline, test.chunk)
                if err:
                    reason = "rig failed in phase %d: %s" % (n, err.decode(errors="replace").strip())
                    break
                out, err, tail = board.exec_chunks(src, deadline, test.chunk)
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
                want_reset = n < len(test.phases) and test.phases[n][0] == "machine"
                if want_reset and b"soft reboot" not in tail:
                    reason = "phase %d did not end in a soft reset" % n
                    break
        except Timeout as e:
            reason = str(e)
        except (OSError, ValueError) as e:  # qemu or the backend went away, or did not start
            reason = "I/O failed: %s" % e
        finally:
            if board:
                if board.bridge:
                    log.write(("\n[bridge: %r]\n" % board.bridge.stats).encode())
                board.close()
            if backend:
                backend.close()
    secs = time.monotonic() - t0
    return reason, checks, secs, log_path, banner


def repl(args, rig_src):
    import termios
    import tty

    backend = None
    if BOARDS[args.board]["bridge"]:
        backend = Backend()
    board = Board(args.qemu, args.board, args.elf)
    setup = lambda mkfs: ("QEMU_BOARD = %r\nBACKEND_PORT = %r\n" % (args.board, backend and backend.port)
                          + rig_src + "\ndisk = mount_ramdisk(mkfs=%s)\n" % mkfs)
    try:
        deadline = time.monotonic() + 20
        banner = board.enter_raw(deadline)
        board.exec_raw(setup(True), deadline)
        board.write(b"\x02")  # friendly REPL
    except BaseException:
        board.close()
        if backend:
            backend.close()
        raise
    sys.stdout.write(banner.decode(errors="replace").split("\n")[0] + "\n")
    sys.stdout.write("LittleFS on the RAM disk is mounted at '/' (and again after every soft "
                     "reset); the rig's names (Checker, mount_ramdisk, ...) are defined.\n")
    if backend:
        sys.stdout.write(
            "backend: mpy/examples/backend.py on 127.0.0.1:%d (BACKEND_PORT), through the serial bridge:\n"
            "  bentoclaw.connect('127.0.0.1', BACKEND_PORT, 'demo-key'); bentoclaw.ask('hello')\n"
            "TACP v2 frames share this console with the REPL (docs/TACP.md).\n" % backend.port)
    sys.stdout.write("Ctrl-] quits, as does machine.reset(). Ctrl-D soft-resets.\n")
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
        if backend:
            backend.close()
    print()
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--board", choices=sorted(BOARDS), default="m33")
    ap.add_argument("--elf", help="firmware image (default: the board's build output)")
    ap.add_argument("--qemu", default="qemu-system-arm")
    ap.add_argument("--log-dir", help="default build/test-qemu/<board>")
    ap.add_argument("--repl", action="store_true")
    ap.add_argument("--list", action="store_true", help="list the tests that would run")
    ap.add_argument("patterns", nargs="*")
    args = ap.parse_args()
    args.elf = args.elf or BOARDS[args.board]["elf"]
    args.log_dir = args.log_dir or os.path.join(ROOT, "build", "test-qemu", args.board)

    with open(os.path.join(HERE, "qrig.py"), encoding="utf-8") as f:
        rig_src = f.read()
    with open(os.path.join(MPY_TESTS, "claw_rig.py"), encoding="utf-8") as f:
        claw_rig_src = f.read()
    if args.repl:
        return repl(args, rig_src)

    os.makedirs(args.log_dir, exist_ok=True)
    files = [os.path.join(HERE, f) for f in sorted(os.listdir(HERE)) if f.startswith("test_") and f.endswith(".py")]
    files += [os.path.join(MPY_TESTS, f) for f in sorted(os.listdir(MPY_TESTS))
              if f.startswith("test_") and f.endswith(".py")]
    tests = [t for t in map(TestFile, files) if t.runs_on(args.board)]
    if args.patterns:
        tests = [t for t in tests if any(p in t.name for p in args.patterns)]
    if args.list:
        for t in tests:
            print(t.name, " ".join(sorted(t.needs)), "icount shift=%d" % t.icount if t.icount else "")
        return 0
    passed = failed = 0
    t_all = time.monotonic()
    print("board %s: %s (%s)" % (args.board, BOARDS[args.board]["machine"], os.path.relpath(args.elf, ROOT)))
    for t in tests:
        reason, checks, secs, log_path, banner = run_test(t, args, rig_src, claw_rig_src)
        if passed + failed == 0 and banner:
            # (The banner as the console sent it: after the READY frame.)
            text = banner[banner.find(b"MicroPython"):] if b"MicroPython" in banner else banner
            print("firmware: %s" % text.decode(errors="replace").strip().split("\n")[0].strip())
        if reason is None:
            passed += 1
            print("PASS %-28s %5.1f s  %d checks" % (t.name, secs, checks))
        else:
            failed += 1
            print("FAIL %-28s %5.1f s  %s" % (t.name, secs, reason))
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
