# typed_example.py — the whole bentoclaw API as typed MicroPython code.
#
# scripts/test_stubs.sh type-checks it with `mypy --strict` against
# mpy/bentoclaw.pyi (plus a minimal stub of MicroPython's `vfs`,
# tests/stubs/shims/), and runs it on the unix port: code the type checker
# accepts must also run. It runs offline (nothing listens on the port it
# tries), so the connected part is type-checked but takes the offline path.
#
# MicroPython does not evaluate annotations, so the type-only names of the
# stub (bentoclaw._Status, ...) and `X | None` cost nothing at run time.
import vfs

import bentoclaw
from bentoclaw import RISK_LOW, RISK_MEDIUM


class RamDisk:
    """A block device in RAM with LittleFS's extended interface."""

    def __init__(self, blocks: int, block_size: int = 512) -> None:
        self.blocks = blocks
        self.block_size = block_size
        self.data = bytearray(b"\xff" * (blocks * block_size))

    def readblocks(self, block: int, buf: bytearray, off: int = 0) -> None:
        start = block * self.block_size + off
        buf[:] = self.data[start : start + len(buf)]

    def writeblocks(self, block: int, buf: bytes, off: int | None = None) -> None:
        start = block * self.block_size + (off or 0)
        self.data[start : start + len(buf)] = buf

    def ioctl(self, op: int, arg: int) -> int:
        if op == 4:  # block count
            return self.blocks
        if op == 5:  # block size
            return self.block_size
        if op == 6:  # erase
            start = arg * self.block_size
            self.data[start : start + self.block_size] = b"\xff" * self.block_size
        return 0


def mount_flash() -> RamDisk:
    """LittleFS at "/", where bentoclaw keeps its files."""
    disk = RamDisk(128)
    vfs.VfsLfs2.mkfs(disk)
    try:
        vfs.umount("/")
    except OSError:
        pass
    vfs.mount(vfs.VfsLfs2(disk), "/")
    return disk


def thermostat(arg: object) -> str:
    """A Python tool: None reads, anything else sets."""
    return "21.5 C" if arg is None else "set to %s" % (arg,)


def health() -> bool:
    """True when the agent can talk to the backend now."""
    st: bentoclaw._Status = bentoclaw.status()
    sf = bentoclaw.safety()
    print("state %s, %d turns, %d errors, last: %r" % (st["state"], st["session_msgs"], st["error_count"], st["last_result"]))
    print("sent %d B, received %d B, %d exchanges" % (st["bytes_in"], st["bytes_out"], st["exchanges"]))
    if sf["circuit_breaker"] == "open":
        print("breaker open for %d ms more" % sf["cooldown_ms"])
    for key, value in sf.items():
        print("  safety %s = %r" % (key, value))
    print("%d tools, %d calls, last %r" % (st["tool_count"], st["exec_count"], st["last_cmd"]))
    return st["connected"] and st["state"] != "error" and sf["trust_level"] != "none" and sf["connected"]


def chat(host: str, port: int, api_key: str) -> str | None:
    if not bentoclaw.connect(host, port, api_key):
        return None
    try:
        return bentoclaw.ask("What is my name?")
    except RuntimeError as e:
        print("ask failed:", e)
        return None
    finally:
        bentoclaw.disconnect()


def memory() -> int:
    stored: bool = bentoclaw.remember("name", "Somchai")
    name = bentoclaw.recall("name")
    if stored and name is not None:
        print("name:", name.upper())
    for key, value, score in bentoclaw.search("name", n=3):
        print("  %s = %s (%d)" % (key, value, score))
    bentoclaw.pin("name")
    bentoclaw.pin("name", on=False)
    text = bentoclaw.export_memory()
    skipped: list[tuple[int, str]] = []
    n = bentoclaw.import_memory(text + "not a list item\n", skipped=skipped)
    for line, why in skipped:
        print("  line %d skipped: %s" % (line, why))
    try:
        bentoclaw.import_memory("not a list item\n", strict=True)
    except ValueError as e:
        print("strict import:", e)
    bentoclaw.forget("nobody")
    return n


def sessions() -> bytes:
    settings = bentoclaw.config()
    budget = min(settings["context_budget"], bentoclaw.CONTEXT_MAX)
    settings = bentoclaw.config(auto_compact=True, daily_reset_hour=-1, context_budget=budget)
    if not settings["send_tools"]:
        bentoclaw.config(send_tools=1)
    print(bentoclaw.ask("/new"), "/", bentoclaw.ask("/compact"))
    for role, text in bentoclaw.session():
        if role == "summary":
            print("summary:", text)
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = bentoclaw.archive(offset, n=512)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    if not bentoclaw.flush():
        print("session not saved")
    bentoclaw.session_clear()
    return b"".join(chunks)


def tools() -> list[str]:
    bentoclaw.register_tool("thermostat", thermostat, risk=RISK_MEDIUM, rate_per_min=30)
    bentoclaw.register_tool("lights", lambda arg: bool(arg), RISK_LOW)
    names = [t["name"] for t in bentoclaw.tools() if not t["builtin"] or t["risk"] < bentoclaw.RISK_HIGH]
    ready = bentoclaw.execute("echo", None)
    print(ready["tool"], ready["status"], ready["risk"], ready["confirm"])
    print(bentoclaw.tool("echo", "hi"), bentoclaw.tool("thermostat"), bentoclaw.tool(name="lights", arg=1))
    try:
        bentoclaw.tool("wipe_memory")
    except RuntimeError as e:  # refused unless the trust is USB
        print("wipe_memory:", e)
    print(bentoclaw.tacp(b"\xaa\x55\x30\x03\x01\x00\x00\x2c\x28"))
    print(bentoclaw.tacp_ready().hex())
    return names


def unix_hooks() -> None:
    for kind, text in bentoclaw._ui_events():
        print("  ui %s: %s" % (kind, text))
    context: bytes = bentoclaw._context()
    now = bentoclaw._clock()
    bentoclaw._clock(now + 3600)
    bentoclaw._clock(None)
    print("context %d B" % len(context))


LIMITS: dict[str, int] = {
    "PROMPT_MAX": bentoclaw.PROMPT_MAX,
    "CONTEXT_MAX": bentoclaw.CONTEXT_MAX,
    "REPLY_MAX": bentoclaw.REPLY_MAX,
    "HTTP_TIMEOUT_MS": bentoclaw.HTTP_TIMEOUT_MS,
    "TOOL_ROUNDS_MAX": bentoclaw.TOOL_ROUNDS_MAX,
    "CALL_REQUESTS_MAX": bentoclaw.CALL_REQUESTS_MAX,
    "CALL_DEPTH_MAX": bentoclaw.CALL_DEPTH_MAX,
    "ARCHIVE_MAX": bentoclaw.ARCHIVE_MAX,
}

mount_flash()
print("limits:", sorted(LIMITS.items()))
print("healthy:", health())
print("reply:", chat("127.0.0.1", 1, "demo-key"))  # nothing listens on port 1
print("imported:", memory())
print("archive: %d B" % len(sessions()))
print("tools:", tools())
unix_hooks()
print("typed_example: done")
