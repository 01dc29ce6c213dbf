# test_nesting_tools.py — calls nested through tools, at any depth and in
# any mix, end cleanly and leave the stored data as it was (issue 13, crash
# 3: tool -> tacp()/ask() -> the same tool ... exhausted the heap and then
# segfaulted).
#
# The bounds (src/agent/state.rs, Chain): every call that enters the chain —
# tool(), a TACP TOOL line, ask() and each tool its backend asks for,
# connect(), disconnect() — is one level; a call that would be level
# CALL_DEPTH_MAX + 1 (5) is refused with RuntimeError("calls nested too deep
# through tools (4, CALL_DEPTH_MAX)") (a TACP line answers "err " + that
# text, a backend's tool request gets it as its tool_result), and one
# top-level call makes at most CALL_REQUESTS_MAX (16) backend requests, past
# which RuntimeError("backend request limit reached (16 per top-level call,
# CALL_REQUESTS_MAX)").
#
# Each scenario is one top-level call whose tool handler, at level L, does
# what the scenario says (nest again through tool(), tacp(), ask(), mixes of
# them, disconnect()/connect() on the way, fan out to three (ask: eight) calls,
# recurse in plain Python until the interpreter's recursion limit, fill the
# heap, raise KeyboardInterrupt). The bound was 8 until the BENTO board's
# 8 KiB stack was measured (tests/qemu/test_stack_depth.py): 4 since. The
# test keeps its own model of the level of every call and checks, in every
# scenario:
#   * the interpreter exits 0 (each scenario is its own process:
#     `<this file> child <scenario>`, so a crash is reported by name);
#   * a call at a level above 4 is refused with the exact text, a call at
#     4 or below never is; no handler runs above level 4;
#   * the top-level call makes at most 16 requests (the backend's log), and
#     the scenarios built to exceed them see the exact text;
#   * the memory file is byte for byte what it was, the session file is
#     whole JSON Lines, flush() works, and a reboot reads the same ring and
#     every pair.
#
# Before the fix (41ae5d2, the last release): no depth bound (handlers ran
# at level 64 until the interpreter's recursion limit), 66 backend requests
# for one ask(), the fan-out scenario "fan_mix" killed the interpreter with
# SIGSEGV and "fan_ask" ran past the test's timeout; every scenario failed
# its bounds.
# needs: backend
# targets: unix
import sys
import claw_rig as rig

MAX = 4
REQ_MAX = 16
NESTING = "calls nested too deep through tools (4, CALL_DEPTH_MAX)"
REQUESTS = "backend request limit reached (16 per top-level call, CALL_REQUESTS_MAX)"

SCENARIOS = (
    # (name, top-level call, action at each handler level)
    ("tool", "tool", lambda L: ["tool"]),
    ("tacp", "tacp", lambda L: ["tacp"]),
    ("ask", "ask", lambda L: ["ask"]),
    ("tool_ask_tool_tacp", "tool", lambda L: [("ask", "tacp")[L % 2]]),
    ("ask_tool_tacp", "ask", lambda L: [("tool", "tacp", "ask")[L % 3]]),
    ("tacp_ask", "tacp", lambda L: [("ask", "tool")[L % 2]]),
    ("reconnect", "ask", lambda L: ["disconnect", "ask", "connect", ("ask", "tool")[L % 2]]),
    ("connect_deep", "tool", lambda L: ["connect", "tool"]),
    # Eight asks a level: the fan-out reaches CALL_REQUESTS_MAX within the depth bound.
    ("fan_ask", "ask", lambda L: ["ask"] * 8),
    ("fan_mix", "tool", lambda L: ["ask", "tacp", "tool"]),
    ("python_recursion", "tool", lambda L: ["pyrec", "tool"]),
    ("python_recursion_top", "tool", lambda L: ["pyrec_raise"]),
    ("propagate", "tool", lambda L: ["tool_raise"]),
    ("heap", "tool", lambda L: (["heap"] if L == 3 else []) + [("ask", "tool", "tacp")[L % 3]]),
    ("keyboard_interrupt", "tool", lambda L: ["kbd" if L == 3 else ("tool", "ask")[L % 2]]),
)


def child(name):
    import gc
    import json
    import bentoclaw

    t = rig.Checker("nesting:" + name)
    top_kind, actions = [(k, f) for n, k, f in SCENARIOS if n == name][0]
    rig.mount_ram()
    bc = rig.simulate_soft_reset(bentoclaw)
    rig.classic_session(bc)
    rig.backend_reset()
    rig.backend_mode("tools")

    # Stored data before the scenario.
    bc.remember("city", "Chiang Mai")
    bc.remember("pet", "cat named Mali")
    bc.remember("lang", "ไทย")
    t.eq(rig.connect(bc), True, "connect")
    bc.ask("hello")
    t.eq(bc.flush(), True, "flush before the scenario")
    mem_before = [rig.read_file(p) for p in rig.MEMORY_FILES]

    st = {"level": 0, "pending": [], "max_handler": 0, "calls": 0, "refused": 0, "over": 0,
          "requests_refused": 0, "pyrec": [], "heap": []}

    def expect(kind, lvl, out):
        """A call at lvl: refused for nesting exactly when lvl > MAX."""
        st["calls"] += 1
        kind_out, v = out
        if kind == "tacp":
            refused = kind_out == "ret" and v == "err " + NESTING
        else:
            refused = kind_out == "exc" and isinstance(v, RuntimeError) and str(v) == NESTING
        # An ask() is checked for a request left before it enters the chain:
        # past level 4 with the requests used up, that refusal comes first.
        by_requests = kind == "ask" and kind_out == "exc" and isinstance(v, RuntimeError) and str(v) == REQUESTS
        if lvl > MAX:
            st["over"] += 1
            t.check(refused or by_requests, "%s at level %d is refused with the exact text" % (kind, lvl),
                    repr(v)[:120])
        else:
            t.check(not refused, "%s at level %d is not refused for nesting" % (kind, lvl))
        st["refused"] += refused
        if kind_out == "exc" and isinstance(v, RuntimeError) and str(v) == REQUESTS:
            st["requests_refused"] += 1
        if kind_out == "ret" and isinstance(v, str) and v == "err " + REQUESTS:
            st["requests_refused"] += 1

    def call(kind, lvl, fn, *args, handler_level=None):
        st["pending"].append(handler_level if handler_level is not None else lvl)
        try:
            out = ("ret", fn(*args))
        except Exception as e:
            out = ("exc", e)
        finally:
            st["pending"].pop()
        expect(kind, lvl, out)
        st["last"] = (kind, lvl, out[0], repr(out[1])[:60])
        return out

    def rec(n):
        return rec(n + 1) + 1

    def tacp_exec(payload):
        # TACP EXEC; an error frame reads "err <text>" as the old lines did.
        sub, text = rig.tacp_call(bc, 1, payload)
        return ("err " + text) if sub == 0xFF else text

    def do(action, L):
        nxt = L + 1
        if action == "tool":
            call("tool", nxt, bc.tool, "deep", "via tool")
        elif action == "tacp":
            call("tacp", nxt, tacp_exec, "deep via-tacp")
        elif action == "ask":
            # The ask is level L+1; the tool its backend asks for, L+2.
            call("ask", nxt, bc.ask, "run deep via-ask", handler_level=nxt + 1)
        elif action == "connect":
            call("connect", nxt, rig.connect, bc)
        elif action == "disconnect":
            call("disconnect", nxt, bc.disconnect)
        elif action == "pyrec":
            try:
                rec(0)
                st["pyrec"].append("returned")
            except RuntimeError as e:
                st["pyrec"].append(str(e))
        elif action == "pyrec_raise":
            rec(0)
        elif action == "tool_raise":
            # Not caught here: each level's exception goes up through the
            # tool() that called it.
            st["pending"].append(nxt)
            try:
                bc.tool("deep", "via tool")
            finally:
                st["pending"].pop()
        elif action == "heap":
            hold = []
            try:
                while True:
                    hold.append(bytearray(16 * 1024))
            except MemoryError:
                pass
            try:
                while True:
                    hold.append(bytearray(256))
            except MemoryError:
                pass
            st["heap"].append(len(hold))
            # Nest while the heap is full: a MemoryError is a clean answer.
            return hold
        elif action == "kbd":
            raise KeyboardInterrupt()

    def handler(arg):
        L = st["pending"][-1] if st["pending"] else 1
        st["max_handler"] = max(st["max_handler"], L)
        t.check(L <= MAX, "no handler runs above level %d" % MAX, L)
        saved = st["level"]
        st["level"] = L
        hold = None
        try:
            for a in actions(L):
                r = do(a, L)
                if a == "heap":
                    hold = r
                elif hold is not None:
                    st["under_full_heap"] = st.get("last")
        finally:
            del hold
            st["level"] = saved
        return "L%d" % L

    bc.register_tool("deep", handler, 0, 65535)
    total0 = rig.backend_log()["total"]
    top = None
    st["pending"].append(1 if top_kind != "ask" else 2)
    try:
        if top_kind == "tool":
            top = ("ret", bc.tool("deep", "top"))
        elif top_kind == "tacp":
            top = ("ret", tacp_exec("deep top"))
        else:
            top = ("ret", bc.ask("run deep top"))
    except BaseException as e:  # noqa: KeyboardInterrupt is checked below
        top = ("exc", e)
    st["pending"].pop()
    gc.collect()
    requests = rig.backend_log()["total"] - total0
    print("%s: top-level %s -> %s; %d nested calls, %d above level %d (%d refused for nesting), deepest handler "
          "at level %d, %d backend requests, %d refused for requests" % (
              name, top_kind, repr(top[1])[:70], st["calls"], st["over"], MAX, st["refused"], st["max_handler"],
              requests, st["requests_refused"]))
    if st["pyrec"]:
        print("  plain Python recursion inside the handlers: %s" % sorted(set(st["pyrec"])))
    if st["heap"]:
        print("  heap filled (%s blocks held); the call made then: %r" % (st["heap"], st.get("under_full_heap")))

    t.check(requests <= REQ_MAX, "at most %d backend requests for the top-level call" % REQ_MAX, requests)
    # What each scenario must have reached.
    if name in ("tool", "tacp", "tool_ask_tool_tacp", "ask_tool_tacp", "tacp_ask", "connect_deep",
                "python_recursion", "keyboard_interrupt", "reconnect", "ask", "fan_mix"):
        if name != "keyboard_interrupt":
            t.check(st["over"] > 0, "the scenario went past level %d" % MAX, st["over"])
    if name in ("fan_ask", "fan_mix"):
        t.check(st["requests_refused"] > 0 or requests == REQ_MAX, "the fan-out reached the request bound",
                st["requests_refused"], requests)
    if name == "python_recursion":
        t.check(len(st["pyrec"]) > 0 and set(st["pyrec"]) == {"maximum recursion depth exceeded"},
                "plain Python recursion at every level ends in RuntimeError", st["pyrec"])
    if name == "python_recursion_top":
        t.check(top[0] == "exc" and isinstance(top[1], RuntimeError)
                and str(top[1]) == "maximum recursion depth exceeded",
                "endless recursion in a handler: RuntimeError out of tool()", repr(top[1]))
    if name == "propagate":
        t.check(top[0] == "exc" and isinstance(top[1], RuntimeError) and str(top[1]) == NESTING,
                "tool() calling itself: the refusal's RuntimeError reaches the top", repr(top[1]))
        t.eq(st["max_handler"], MAX, "the handler ran at every level up to %d" % MAX)
    if name == "keyboard_interrupt":
        t.check(top[0] == "exc" and isinstance(top[1], KeyboardInterrupt),
                "a KeyboardInterrupt at level 3 comes out of the top-level call", repr(top[1]))
    if name == "heap":
        t.check(len(st["heap"]) > 0, "the heap was filled inside the handlers")
        t.check(st["max_handler"] >= 3, "the heap was filled at level 3", st["max_handler"])
    if name in ("tool", "tacp", "tool_ask_tool_tacp", "connect_deep"):
        t.eq(top[0], "ret", "the top-level call returns")

    # The module still works, and the stored data is unharmed.
    try:
        bc.disconnect()
        t.eq(rig.connect(bc), True, "connect after the scenario")
        rig.backend_mode("ok")
        bc.register_tool("deep", lambda a: "plain", 0, 65535)
        if bc.safety()["circuit_breaker"] == "open":
            # (Eight tool failures in a row, as in "propagate", open it.)
            t.raises(RuntimeError, bc.ask, "after the scenario", text=rig.ASK_BREAKER_TEXT,
                     what="ask() after the scenario: the open breaker refuses")
        else:
            t.check(isinstance(bc.ask("after the scenario"), str), "ask() after the scenario")
            t.eq(bc.tool("echo", "after"), "after", "tool() after the scenario")
    except Exception as e:
        t.check(False, "the module works after the scenario", repr(e))
    t.eq([rig.read_file(p) for p in rig.MEMORY_FILES], mem_before, "the memory files are unchanged")
    for k, v in (("city", "Chiang Mai"), ("pet", "cat named Mali"), ("lang", "ไทย")):
        t.eq(bc.recall(k), v, "recall(%s)" % k)
    t.eq(bc.flush(), True, "flush()")
    raw = b"".join(rig.read_file(p) or b"" for p in rig.SESSION_FILES)
    t.check(len(raw) > 0, "the session files were written")
    bad = 0
    for line in raw.decode().split("\n"):
        if line.strip():
            try:
                r = json.loads(line)
                bad += not (isinstance(r, dict) and isinstance(r.get("content"), str))
            except ValueError:
                bad += 1
    t.eq(bad, 0, "every line of the session files is a whole record")
    ring = bc.session()
    t.eq(rig.session_on_flash(), ring, "the ring read back from the files is the ring")
    t.check(0 < len(ring) <= 10, "the ring holds 1..10 messages", len(ring))
    bc = rig.simulate_soft_reset(bc)
    t.eq(bc.session(), ring, "a reboot reads the same ring")
    for k, v in (("city", "Chiang Mai"), ("pet", "cat named Mali"), ("lang", "ไทย")):
        t.eq(bc.recall(k), v, "after a reboot recall(%s)" % k)
    t.done()


def parent():
    t = rig.Checker("nesting")
    losses = 0
    for name, _, _ in SCENARIOS:
        before = t.failed
        text = rig.run_child(t, "%s child %s" % (sys.argv[0], name), "scenario " + name)
        for line in text.split("\n"):
            if line.startswith(name + ":") or line.startswith("  "):
                print(line)
        losses += t.failed > before
    print("RELIABILITY: calls nested through tools (tool, tacp, ask, connect; mixes, fan-out, recursion, "
          "full heap, Ctrl-C)|%d|%d" % (len(SCENARIOS), losses))
    print("CRASHCLASS: calls nested through tools at any depth and mix (%d scenarios)|test_nesting_tools|%s|"
          "SIGSEGV (fan-out through ask/tacp/tool); no depth bound (handlers at level 64), 66 requests for one ask()" % (
              len(SCENARIOS), "clean: RuntimeError at level 5, at most 16 requests, data intact"
              if t.failed == 0 else "FAILED"))
    print("CRASHCLASS: endless plain-Python recursion inside a tool handler|test_nesting_tools|%s|"
          "RuntimeError (already clean)" % ("RuntimeError('maximum recursion depth exceeded'), at every level"
                                            if t.failed == 0 else "FAILED"))
    t.done()


if len(sys.argv) > 2 and sys.argv[1] == "child":
    child(sys.argv[2])
else:
    parent()
