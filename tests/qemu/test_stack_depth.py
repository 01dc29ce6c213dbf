# test_stack_depth.py — the deepest calls the API allows, on the BENTO
# board's stack (issue 22): the emulated M33 runs MicroPython with the
# board's 8 KiB task stack and MicroPython's limit at 8 KiB - 512
# (tests/qemu/boards/common/board_stack.c). Each deepest call is measured by
# stack painting: board.stack_paint() before it, board.stack_used() after
# it, the high-water mark in bytes from the top of the 8 KiB region, the
# figure set against the limit (board.stack_limit()).
#
# needs: backend
# boards: m33
# timeout: 120
#
# The chains, each as deep as bentoclaw.CALL_DEPTH_MAX allows (every call
# that enters the chain is one level: tool(), a TACP EXEC, ask() and each
# tool its backend asks for):
#   tool   a Python tool calling bentoclaw.tool() of itself, level after level
#   tacp   a Python tool sending bentoclaw.tacp() an EXEC of itself
#   ask    a Python tool calling bentoclaw.ask(), whose backend asks for the
#          same tool (the ask one level, its tool the next); the innermost
#          ask runs TOOL_ROUNDS_MAX (3) tool rounds
#   mix    TACP EXECs (the deepest per level) down to the level before the
#          last, then an ask() whose tool round is refused
# At the innermost level the handler does what costs the most stack there
# (remember(): the memory file rewritten through LittleFS; recall(),
# status(), flush()) and then the call one level too deep, which the core
# refuses: RuntimeError("calls nested too deep through tools (N,
# CALL_DEPTH_MAX)") for tool() and ask(), an error frame with that text for
# a TACP EXEC. One more chain lets that RuntimeError go up through every
# level: it comes out of the top-level tool(). After each chain the
# interpreter works on. A fault ends qemu ("FATAL: ..."), which fails the
# test; MicroPython's own "maximum recursion depth exceeded" in a chain the
# bound allows fails it too.
#
# Each chain's handler is one Python function that calls the API itself:
# a caller's own Python frames add to every figure (about 140-250 bytes a
# frame). The block device is the rig's Python RamDisk (its readblocks/
# writeblocks run in the VM during the call), deeper than a C driver such
# as the board's QSPI one: the figures are upper bounds for the board.
#
# Then calls made near MicroPython's limit: plain Python recursion to the
# limit, and each API call from every depth on the way back works or raises
# RuntimeError("maximum recursion depth exceeded"), within the region.
#
# Lines for scripts/perf_report.sh (docs/PERFORMANCE.md §2):
#   STACK-DEEP <kind> levels=<n> hwm=<bytes> base=<bytes> limit=<bytes> size=<bytes> | <what>
#   STACK-NEAR <call> hwm=<bytes> worked=<deepest depth it worked from> calls=<n> size=<bytes>
import json
import bentoclaw
import claw_rig as rig

t = Checker("stack-depth")
disk = mount_ramdisk()
MAX = bentoclaw.CALL_DEPTH_MAX
NESTING = "calls nested too deep through tools (%d, CALL_DEPTH_MAX)" % MAX
SIZE = board.stack_size()
LIMIT = board.stack_limit()
# What the deepest call must leave below MicroPython's limit: the real
# board's task stack also takes the FreeRTOS context and exception frames
# (up to about 200 bytes with the FPU's), and its firmware is compiled with
# other flags.
MARGIN = 512
t.eq(SIZE, 8192, "the MicroPython stack region is the board's 8 KiB")
t.eq(LIMIT, 8192 - 512, "MicroPython's stack limit is 8 KiB - 512")
print("stack region %d bytes, MicroPython's limit %d bytes, CALL_DEPTH_MAX %d" % (SIZE, LIMIT, MAX))

lv = [0]  # the level of the handler running now
got = {}  # kind -> (deepest handler level, inner work ok, what the refused call gave)
TEXT = "x" * 40


def inner(kind):
    """The innermost handler's work: the API calls that reach deepest."""
    ok = bentoclaw.remember("deep", TEXT) is True
    ok = bentoclaw.recall("deep") == TEXT and ok
    ok = isinstance(bentoclaw.status(), dict) and ok
    ok = bentoclaw.flush() is True and ok
    got[kind] = [lv[0], ok, None]


def refused_by(e):
    return isinstance(e, RuntimeError) and str(e) == NESTING


def attempt(kind, call, *args):
    """The innermost handler's call one level too deep: what it gave."""
    try:
        got[kind][2] = call(*args)
    except Exception as e:
        got[kind][2] = e


EXEC = rig.tacp_frame(1, "deep")
mode = ["tool"]  # the chain being measured: tool, tacp, ask or mix


def deep(arg):
    # One Python frame per level, calling the API itself. An ask()'s tool
    # runs one level below the ask().
    k = mode[0]
    lv[0] += 2 if k == "ask" else 1
    if lv[0] + (2 if k == "ask" else 1) <= MAX - (k == "mix"):
        if k == "tool":
            r = bentoclaw.tool("deep")
        elif k == "ask":
            r = bentoclaw.ask("run deep")
        else:
            r = tacp_answer(bentoclaw.tacp(EXEC))[1]
    else:
        if got.get(k) is None:
            inner(k)
        got["rounds"] += 1
        if k == "tool":
            attempt(k, bentoclaw.tool, "deep")
        elif k == "tacp":
            attempt(k, bentoclaw.tacp, EXEC)
        else:
            attempt(k, bentoclaw.ask, "run deep")
        r = "deepest"
    lv[0] -= 2 if k == "ask" else 1
    return r


def via_tool_raise(arg):
    # No handler catches the refusal: it goes up through every tool().
    lv[0] += 1
    got["propagate"] = [max(lv[0], got["propagate"][0]), True, None]
    return bentoclaw.tool("via_tool_raise")


def tacp_answer(frame):
    """(sub, text) of the one answer frame."""
    (sub, _, payload), = rig.tacp_frames(frame)
    return sub, str(payload, "utf-8")


bentoclaw.register_tool("deep", deep, 0, 65535)
bentoclaw.register_tool("via_tool_raise", via_tool_raise, 0, 65535)
t.eq(bentoclaw.connect("127.0.0.1", BACKEND_PORT, API_KEY), True, "connect through the serial bridge")
rig.backend_mode("tools")


def measure(kind, levels, what, top):
    """Runs top() with the stack painted; the high-water mark from the top
    of the region, checked against the limit."""
    lv[0] = 0
    mode[0] = kind
    got[kind] = None
    got["rounds"] = 0
    base = board.stack_paint()
    try:
        r = top()
    except Exception as e:
        r = e
    hwm = board.stack_used()
    print("STACK-DEEP %s levels=%d hwm=%d base=%d limit=%d size=%d | %s" % (kind, levels, hwm, base, LIMIT, SIZE, what))
    print("stack %-58s %5d bytes from the top (margin %d)" % (what, hwm, LIMIT - hwm))
    t.check(hwm + MARGIN <= LIMIT, "%s: high-water mark %d + %d bytes of margin within the limit %d"
            % (what, hwm, MARGIN, LIMIT), hwm)
    t.check(not (isinstance(r, RuntimeError) and "recursion" in str(r)),
            "%s: no 'maximum recursion depth exceeded'" % what, repr(r))
    # The interpreter works on.
    t.eq(bentoclaw.tool("echo", "after"), "after", "%s: tool() works after it" % what)
    return r


# --- tool() through tools -------------------------------------------------------------
r = measure("tool", MAX, "tool() nested %d deep, memory rewrite at the bottom" % MAX,
            lambda: bentoclaw.tool("deep"))
t.eq(r, "deepest", "the deepest tool() chain returns")
g = got["tool"]
t.eq(g[0], MAX, "the innermost handler runs at level CALL_DEPTH_MAX")
t.check(g[1], "remember/recall/status/flush work at the innermost level")
t.check(refused_by(g[2]), "tool() past the bound: RuntimeError naming the limit", repr(g[2]))

# --- TACP EXEC through tools ------------------------------------------------------------
r = measure("tacp", MAX, "TACP EXEC nested %d deep, memory rewrite at the bottom" % MAX,
            lambda: bentoclaw.tacp(EXEC))
t.eq(tacp_answer(r), (1, "deepest"), "the deepest EXEC chain is answered")
g = got["tacp"]
t.eq(g[0], MAX, "the innermost EXEC's tool runs at level CALL_DEPTH_MAX")
t.check(g[1], "remember/recall/status/flush work at the innermost level")
t.eq(tacp_answer(g[2]), (rig.TACP_ERROR, NESTING), "an EXEC past the bound: an error frame naming the limit")

# --- ask() with tool rounds ---------------------------------------------------------------
# Each ask()'s first reply asks for the handler; the innermost allowed ask() gets
# two more tool requests (TOOL_ROUNDS_MAX rounds), then every ask() its final
# reply. Every request of the chain is one of the queued replies.
asks = (MAX + 1) // 2
call = json.dumps({"tool_call": {"name": "deep", "arg": None}})
rig.backend_control(replies=[call] * (asks + 2) + ["done %d" % i for i in range(asks)])
r = measure("ask", MAX, "ask() nested %d deep (%d ask()s), 3 tool rounds at the bottom" % (MAX, asks),
            lambda: bentoclaw.ask("run deep"))
rig.backend_control(replies=None)
t.eq(r, "done %d" % (asks - 1), "the outermost ask() gets its final reply")
g = got["ask"]
t.check(g is not None and g[1], "remember/recall/status/flush work at the innermost level")
if MAX % 2 == 0:
    t.eq(g[0], MAX, "the innermost tool runs at level CALL_DEPTH_MAX")
    t.eq(got["rounds"], 3, "the innermost ask() ran TOOL_ROUNDS_MAX tool rounds")
    t.check(refused_by(g[2]), "ask() past the bound: RuntimeError naming the limit", repr(g[2]))
else:
    # The innermost ask() is at CALL_DEPTH_MAX; the tool it asks for is refused.
    t.eq(g[0], MAX - 1, "the innermost handler runs one level below CALL_DEPTH_MAX")
    t.check(isinstance(g[2], str) and NESTING in g[2], "the tool request past the bound: its result names the limit",
            repr(g[2]))

# --- mixed: TACP (the deepest per level), then ask() -----------------------------------------
rig.backend_mode("tools")
r = measure("mix", MAX, "TACP EXEC nested %d deep, then ask() at level %d" % (MAX - 1, MAX),
            lambda: bentoclaw.tacp(EXEC))
t.eq(tacp_answer(r), (1, "deepest"), "the mixed chain is answered")
g = got["mix"]
t.eq(g[0], MAX - 1, "the innermost EXEC's tool runs one level below CALL_DEPTH_MAX")
t.check(g[1], "remember/recall/status/flush work there")
t.check(isinstance(g[2], str) and NESTING in g[2], "the ask()'s tool request past the bound: its result names the limit",
        repr(g[2]))

# The module and the stored data after the chains.
t.eq(bentoclaw.recall("deep"), TEXT, "recall() after the chains")
t.check(bentoclaw.ask("hello").startswith("Echo: hello"), "ask() after the chains")
t.eq(bentoclaw.flush(), True, "flush() after the chains")

# --- calls made near MicroPython's limit -------------------------------------------------
# Plain Python recursion to the limit, then each call below from every depth
# on the way back: it works, or it is refused with MicroPython's
# RuntimeError("maximum recursion depth exceeded") (the binding refuses a
# core call entered with less than BENTOCLAW_STACK_NEED before the limit);
# never a fault.
RECURSION = "maximum recursion depth exceeded"
bentoclaw.register_tool("near", lambda a: a, 0, 65535)
NEAR = (
    ("status()", bentoclaw.status),
    ("tool()", lambda: bentoclaw.tool("near", "x")),
    ("remember()", lambda: bentoclaw.remember("near", "v")),
    ("recall()", lambda: bentoclaw.recall("near")),
    ("flush()", bentoclaw.flush),
    ("ask()", lambda: bentoclaw.ask("near the limit")),
    ("tacp()", lambda: bentoclaw.tacp(rig.tacp_frame(1, "near x"))),
)
runs = []


def down(op):
    try:
        down(op)
    except RuntimeError as e:
        if str(e) != RECURSION:
            raise
    d = board.stack_depth()
    try:
        op()
        runs.append((d, "ok"))
    except RuntimeError as e:
        runs.append((d, str(e)))


for what, op in NEAR:
    runs.clear()
    board.stack_paint()
    down(op)
    hwm = board.stack_used()
    worked = [d for d, r in runs if r == "ok"]
    other = [r for d, r in runs if r not in ("ok", RECURSION)]
    print("STACK-NEAR %s hwm=%d worked=%d calls=%d size=%d" % (what, hwm, max(worked) if worked else -1, len(runs),
                                                               SIZE))
    print("stack %-58s %5d bytes from the top; called from %d depths, worked from up to %d bytes deep"
          % (what + " from every depth up to the limit", hwm, len(runs), max(worked) if worked else -1))
    t.check(len(worked) > 0 and not other, "%s near the limit: works or raises %r" % (what, RECURSION), other[:2])
    t.check(hwm <= SIZE, "%s near the limit: within the stack region" % what, hwm)

# --- the refusal not caught: it comes out of the top-level tool() ---------------------------
# Last: each level's tool() fails, and as many failures in a row may open
# the breaker.
lv[0] = 0
got["propagate"] = [0, True, None]
base = board.stack_paint()
e = t.raises(RuntimeError, bentoclaw.tool, "via_tool_raise", text=NESTING,
             what="tool() calling itself without end: RuntimeError naming the limit out of the top-level call")
hwm = board.stack_used()
what = "tool() calling itself, the refusal not caught"
print("STACK-DEEP raise levels=%d hwm=%d base=%d limit=%d size=%d | %s" % (MAX, hwm, base, LIMIT, SIZE, what))
print("stack %-58s %5d bytes from the top (margin %d)" % (what, hwm, LIMIT - hwm))
t.eq(got["propagate"][0], MAX, "the handler ran at every level up to CALL_DEPTH_MAX")
t.check(hwm + MARGIN <= LIMIT, "the refusal's way up within the limit", hwm)
if bentoclaw.safety()["circuit_breaker"] == "open":
    # (CALL_DEPTH_MAX tool failures in a row may open it.)
    t.raises(RuntimeError, bentoclaw.tool, "echo", "after", text=BREAKER_TEXT,
             what="tool() after the refusal: the open breaker refuses")
else:
    t.eq(bentoclaw.tool("echo", "after"), "after", "tool() works after the refusal")
t.eq(bentoclaw.recall("deep"), TEXT, "recall() after the refusal")
t.done()
