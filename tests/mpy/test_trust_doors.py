# test_trust_doors.py — every way a script might try to get a high-risk tool
# run where the transport does not allow it, or to smuggle something into the
# backend's header lines:
#  * risk comes from the registry only: tool() takes no risk, keyword or extra
#    argument;
#  * name variants of wipe_memory (NUL, prefix, suffix, case, whitespace,
#    homoglyph, zero-width) never reach it — checked under USB trust, where
#    the real tool WOULD run: the memory file must still be there;
#  * register_tool() cannot replace a built-in or change its risk/limit; a
#    look-alike registration is a separate Python tool;
#  * transport x risk: USB allows 0..2, HTTPS 0..1 (spec §5), after connect,
#    disconnect, a refused connect, an unresolvable host, a failed re-connect;
#    a denied call runs nothing, uses no quota, counts one error;
#    NONE cannot be reached from Python (the module only ever sets HTTPS and
#    USB), so its row is covered by the C tests (test_trust, hostile section);
#  * CR/LF and other non-printables in host/api_key are refused by connect()
#    and never reach the wire.
# needs: backend
# targets: unix qemu
import claw_rig as rig
import bentoclaw

t = rig.Checker("trust-doors")
rig.mount_ram()
PORT = rig.backend_port()
DEAD = 1  # nothing listens on port 1 on a test machine
_sections = []


def section(name):
    _sections.append([name, t.passed, t.failed])


def end_section():
    name, p0, f0 = _sections.pop()
    print("RELIABILITY: %s|%d|%d" % (name, (t.passed - p0) + (t.failed - f0), t.failed - f0))


def memory_intact(what):
    t.check(rig.store_exists(), what + ": memory files still there")
    t.eq(bentoclaw.recall("secret"), "keep me", what + ": remembered value intact")


ran = {}


def make_tool(name):
    def handler(arg):
        ran[name] = ran.get(name, 0) + 1
        return name

    return handler


t.eq(bentoclaw.remember("secret", "keep me"), True, "seed memory")
t.eq(bentoclaw.safety()["trust_level"], "usb", "resting trust USB")

# --- 1. risk is read from the registry only ------------------------------------------------
section("trust: risk passed with the call")
t.eq(rig.connect(bentoclaw), True, "connect (trust HTTPS)")
t.eq(bentoclaw.safety()["trust_level"], "https", "HTTPS")
e0 = bentoclaw.status()["error_count"]
t.raises(TypeError, lambda: bentoclaw.tool("wipe_memory", risk=0), what="tool(..., risk=0) refused")
t.raises(TypeError, bentoclaw.tool, "wipe_memory", None, 0, what="tool(name, arg, risk) refused")
t.raises(TypeError, bentoclaw.tool, "wipe_memory", 0, what="wipe_memory takes no argument",
         text="this tool takes no argument")
t.raises(RuntimeError, bentoclaw.tool, "wipe_memory", text=rig.TRUST_TEXT,
         what="wipe_memory over HTTPS: risk 2 from the registry")
# Keywords are accepted (name=, arg=) and change nothing about the gates.
t.raises(RuntimeError, lambda: bentoclaw.tool(name="wipe_memory"), text=rig.TRUST_TEXT,
         what="tool(name=...) is refused for trust like tool(...)")
t.raises(RuntimeError, lambda: bentoclaw.tool(name="wipe_memory", arg=None), text=rig.TRUST_TEXT,
         what="tool(name=..., arg=None) too")
t.eq(bentoclaw.status()["error_count"], e0 + 3, "only the trust refusals counted")
memory_intact("HTTPS")
risk_of = dict((x["name"], x["risk"]) for x in bentoclaw.tools())
t.eq(risk_of.get("wipe_memory"), 2, "registry says wipe_memory is risk 2")
end_section()

# --- 2. name variants of the high-risk tool ---------------------------------------------------
section("trust: look-alike names of a high-risk tool")
bentoclaw.disconnect()
t.eq(bentoclaw.safety()["trust_level"], "usb", "USB: the real wipe_memory would run now")
VARIANTS = ["wipe", "wipe_memor", "wipe_memoryy", "WIPE_MEMORY", "Wipe_memory", "wipe_memorY",
            "wipe_memory ", " wipe_memory", "wipe_memory\n", "wipe_memory\t", "\twipe_memory",
            "wipe memory", "wipe-memory", "wipe_memory\u200b", "\ufeffwipe_memory",
            "wipe_mem\u043ery", "ｗｉｐｅ_memory", "wipe_memory\x7f", "wipe_memory/",
            "echo\x08\x08\x08\x08wipe_memory"]
for v in VARIANTS:
    t.raises(ValueError, bentoclaw.tool, v, text="unknown tool",
             what="variant %r is an unknown tool" % v)
for v in ("wipe_memory\x00", "wipe_memory\x00x", "wipe\x00_memory", "\x00wipe_memory"):
    t.raises(ValueError, bentoclaw.tool, v, text="name must not contain NUL",
             what="variant %r refused" % v)
for v in ("wipe_memory" + "x" * 21, "wipe_memory" * 3):
    t.raises(ValueError, bentoclaw.tool, v, text="tool name must be 1..31 bytes (CLAW_RATE_NAME_MAX)",
             what="over-long variant refused")
memory_intact("after %d look-alike names" % (len(VARIANTS) + 6))
end_section()

# --- 3. register_tool cannot replace a built-in ----------------------------------------------
section("trust: replacing or re-rating a built-in")
before = bentoclaw.tools()
for name in ("echo", "uptime", "led", "wipe_memory"):
    for risk in (0, 1, 2):
        t.raises(ValueError, bentoclaw.register_tool, name, make_tool(name), risk,
                 text="cannot replace a built-in tool", what="replace %s with risk %d" % (name, risk))
    t.raises(ValueError, lambda: bentoclaw.register_tool(name, make_tool(name), rate_per_min=65535),
             text="cannot replace a built-in tool", what="re-rate %s" % name)
t.eq(bentoclaw.tools(), before, "registry unchanged")
# Look-alikes register as separate Python tools and never reach the built-in.
for v in ("WIPE_MEMORY", "wipe_memory ", "wipe"):
    bentoclaw.register_tool(v, make_tool(v), 0)
    t.eq(bentoclaw.tool(v), v, "look-alike %r runs its own handler" % v)
    t.eq(ran.get(v), 1, "handler of %r ran once" % v)
memory_intact("look-alike tools")
t.eq([rig.tool_row(x) for x in bentoclaw.tools() if x["name"] == "wipe_memory"], [("wipe_memory", 2, 2, True)],
     "wipe_memory still built-in, risk 2, 2/min")
end_section()

# --- 4. transport x risk ---------------------------------------------------------------------
section("trust: transport x risk matrix")
for r in (0, 1, 2):
    bentoclaw.register_tool("r%d" % r, make_tool("r%d" % r), r, 1000)
MATRIX = {"usb": (True, True, True), "https": (True, True, False)}


def check_matrix(where):
    trust = bentoclaw.safety()["trust_level"]
    t.check(trust in MATRIX, where + ": trust is usb or https", trust)
    allow = MATRIX.get(trust, (False, False, False))
    for r in (0, 1, 2):
        name = "r%d" % r
        n0 = ran.get(name, 0)
        e0 = bentoclaw.status()["error_count"]
        if allow[r]:
            t.eq(bentoclaw.tool(name), name, "%s: %s allows risk %d" % (where, trust, r))
            t.eq(ran.get(name, 0), n0 + 1, "%s: risk %d ran" % (where, r))
        else:
            t.raises(RuntimeError, bentoclaw.tool, name, text=rig.TRUST_TEXT,
                     what="%s: %s denies risk %d" % (where, trust, r))
            t.eq(ran.get(name, 0), n0, "%s: risk %d did not run" % (where, r))
            t.eq(bentoclaw.status()["error_count"], e0 + 1, "%s: denial counted" % where)
    # The built-ins of each risk, without side effects beyond the LED state.
    t.eq(bentoclaw.tool("echo", "e"), "e", where + ": echo (risk 0)")
    if allow[1]:
        t.check(bentoclaw.tool("led") in (True, False), where + ": led (risk 1)")
    if not allow[2]:
        t.raises(RuntimeError, bentoclaw.tool, "wipe_memory", text=rig.TRUST_TEXT,
                 what=where + ": wipe_memory denied")
        memory_intact(where)
    return trust


seen = []
seen.append(check_matrix("at rest"))
t.eq(rig.connect(bentoclaw), True, "connect")
seen.append(check_matrix("connected"))
bentoclaw.disconnect()
seen.append(check_matrix("after disconnect"))
t.eq(rig.connect(bentoclaw), True, "connect again")
t.eq(bentoclaw.connect("127.0.0.1", DEAD, rig.API_KEY), False, "re-connect to a dead port fails")
seen.append(check_matrix("after a failed re-connect"))
t.eq(rig.connect(bentoclaw), True, "connect again")
t.raises(ValueError, bentoclaw.connect, "127.0.0.1\r\n", PORT, rig.API_KEY,
         text="host must be 1..63 bytes of printable ASCII", what="refused arguments while connected")
t.eq(bentoclaw.safety()["trust_level"], "https", "refused arguments leave the connection and its trust")
seen.append(check_matrix("after refused connect() arguments while connected"))
bentoclaw.disconnect()
print("trust levels exercised:", seen, "(none: not reachable from Python)")
# A denied call consumes no quota: r2 has 1000/min, deny it 50 times over
# HTTPS, then over USB it still runs.
t.eq(rig.connect(bentoclaw), True, "connect")
for _ in range(50):
    try:
        bentoclaw.tool("wipe_memory")
    except RuntimeError:
        pass
bentoclaw.disconnect()
t.eq(bentoclaw.tool("wipe_memory"), True, "50 trust denials used none of wipe_memory's 2/min")
t.eq(rig.store_exists(), False, "the real wipe ran over USB: every memory file gone")
t.eq(bentoclaw.recall("secret"), None, "and the value with it")
t.eq(bentoclaw.remember("secret", "keep me"), True, "re-seed memory")
end_section()

# --- 5. failed connects never leave HTTPS trust behind --------------------------------------
section("trust: failed connects")
FAILS = [("127.0.0.1", DEAD, "refused port"), ("nonexistent.invalid", 80, "unresolvable host"),
         ("256.256.256.256", 80, "invalid address"), ("::1", DEAD, "IPv6 refused port")]
for host, port, what in FAILS:
    for pre in ("usb", "https"):
        if pre == "https":
            t.eq(rig.connect(bentoclaw), True, "connect before: " + what)
        e0 = bentoclaw.status()["error_count"]
        t0 = rig.ticks()
        ok = bentoclaw.connect(host, port, rig.API_KEY)
        ms = rig.elapsed(t0)
        t.eq(ok, False, "%s (from %s) fails" % (what, pre))
        t.check(ms <= 2 * bentoclaw.HTTP_TIMEOUT_MS, "%s: returns in %d ms" % (what, ms), ms)
        sf = bentoclaw.safety()
        st = bentoclaw.status()
        t.eq(sf["trust_level"], "usb", "%s (from %s): trust back to USB" % (what, pre))
        t.eq(st["connected"], False, "%s (from %s): not connected" % (what, pre))
        t.eq((st["state"], st["connected"]), ("idle", False), "%s (from %s): idle, not connected" % (what, pre))
        t.eq(st["error_count"], e0 + 1, "%s: counted" % what)
        t.raises(RuntimeError, bentoclaw.ask, "x", text=rig.NOT_CONNECTED_TEXT,
                 what="%s: ask refused afterwards" % what)
        print("failed connect %-20s from %-5s: %d ms" % (what, pre, ms))
end_section()

# --- 6. header injection through connect() ------------------------------------------------
section("trust: header injection in connect()")
HOST_TEXT = "host must be 1..63 bytes of printable ASCII"
KEY_TEXT = "api_key must be 1..127 bytes of printable ASCII"
EVIL = ["\r\nX-Evil: 1", "\nX-Evil: 1", "\rX-Evil: 1", "x\r\n\r\nGET / HTTP/1.1", " ", "a b",
        "\t", "\x7f", "\x1b", "ก", "\u2028", "\x85"]
trust0 = bentoclaw.safety()["trust_level"]
for e in EVIL:
    t.raises(ValueError, bentoclaw.connect, "127.0.0.1" + e, PORT, rig.API_KEY, text=HOST_TEXT,
             what="host with %r refused" % e)
    t.raises(ValueError, bentoclaw.connect, "127.0.0.1", PORT, rig.API_KEY + e, text=KEY_TEXT,
             what="api_key with %r refused" % e)
    t.raises(ValueError, bentoclaw.connect, "127.0.0.1", PORT, e + rig.API_KEY, text=KEY_TEXT,
             what="api_key starting with %r refused" % e)
t.eq(bentoclaw.safety()["trust_level"], trust0, "refused connects did not touch trust")
t.eq(bentoclaw.status()["connected"], False, "nor connect")
# What is allowed goes on the wire verbatim in one header line.
t.eq(rig.connect(bentoclaw), True, "connect with the real key")
bentoclaw.ask("headers?")
last = rig.backend_last()
hdrs = last["headers"]
t.eq(hdrs.get("apikey"), rig.API_KEY, "apikey line exact")
t.check(not any(k.lower().startswith("x-evil") for k in hdrs), "no injected header", hdrs)
t.eq(last["auth_ok"], True, "backend accepted the key")
# A printable key with JSON/HTTP-ish punctuation is just text.
odd = 'k:"{}%0d%0a\\<>;'
t.eq(bentoclaw.connect("127.0.0.1", PORT, odd), True, "printable odd key accepted")
t.raises(RuntimeError, bentoclaw.ask, "odd key", text=rig.REQUEST_TEXT, what="wrong key: 401 is a failure")
last = rig.backend_last()
t.eq(last["headers"].get("apikey"), odd, "odd key sent verbatim")
t.eq(last["status"], 401, "backend refused it")
t.check(not any(k.lower().startswith("x-evil") for k in last["headers"]), "still no injected header")
bentoclaw.disconnect()
end_section()

t.eq(bentoclaw.safety()["trust_level"], "usb", "trust at rest at the end")
t.done()
