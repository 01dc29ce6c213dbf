# test_random_api.py — 10 000 random calls of the whole bentoclaw API with
# random arguments (types, lengths, Thai / ASCII / control characters),
# deterministic (seeded PRNG), against a model:
#  * memory: a dict of what remember() accepted; recall() must equal it;
#    a full store (32 keys) refuses only new keys; wipe_memory clears it;
#  * the ring: status()['session_msgs'] == min(10, turns the model added)
#    (SYSTEM on connect/disconnect, USER per admitted ask, ASSISTANT per
#    successful ask, TOOL per successful tool call; session_clear empties);
#  * argument errors: the exact TypeError/ValueError text, no error counted;
#  * gates: a refusal carries the exact text and counts one error; the trust
#    gate refuses exactly risk 2 while connected; the breaker refuses only
#    when it was not closed; errors never decrease; rate limits are never
#    exceeded in any 60 s of (fake) ticks;
#  * safety()/status() values stay in their sets after every call.
# Runs under faketime x50 so the breaker cooldown and rate windows pass
# quickly in real time (no fault mode that waits for a timeout is used).
# needs: backend
# needs: faketime
# targets: unix qemu
# timeout: 420
import random
import time
import claw_rig as rig
import bentoclaw

SEED = 20260430
# On the emulated board (tests/qemu/run.py) 3000: the same kinds of calls
# at a fraction of the emulator's time.
N_CALLS = 3000 if rig.QEMU else 10000
random.seed(SEED)
t = rig.Checker("random-api")
rig.mount_ram()
rig.classic_session(bentoclaw)  # the model is the plain ring of 10

PORT = rig.backend_port()
# _ui_events() is a hook of the unix port; the firmware has none.
STATUS_CALLS = (bentoclaw.status, bentoclaw.safety) + (
    (bentoclaw._ui_events,) if hasattr(bentoclaw, "_ui_events") else ())
TYPE_NAMES = {"key": "key", "value": "value", "prompt": "prompt", "name": "name"}
BUILTIN = {"echo": 0, "uptime": 0, "led": 1, "wipe_memory": 2}
BUILTIN_RATE = {"echo": 10, "uptime": 10, "led": 10, "wipe_memory": 2}
PY_NAMES = ["t%02d" % i for i in range(10)] + ["ไทย", "tool_with_31_bytes_xxxxxxxxxxxx", "x", "ก" * 10]
RATE_OF = {}
for i, n in enumerate(PY_NAMES):
    RATE_OF[n] = (0, 3, 10, 1000)[i % 4]
STATES = ("idle", "executing", "thinking", "error")
BREAKER = ("closed", "open", "half-open")

# --- random values -------------------------------------------------------------------------------
ASCII = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-:\"\\{}"
THAI = "กขคงจฉชซญดตถทนบปผพฟภมยรลวศษสหอฮะาิีึืุูเแโใไ่้๊๋็์ๆ"
CTRL = "".join(chr(c) for c in range(1, 32)) + "\x7f"
EMOJI = "😀🙂🚀"


def rlen():
    k = random.getrandbits(4)
    if k < 9:
        return random.randint(0, 12)
    if k < 12:
        return random.randint(25, 40)
    if k < 14:
        return random.randint(120, 135)
    if k < 15:
        return random.randint(250, 262)
    return random.randint(1020, 1030)


def rstr():
    n = rlen()
    pools = (ASCII, ASCII, THAI, THAI, CTRL, EMOJI)
    pool = pools[random.getrandbits(8) % len(pools)]
    s = "".join(pool[random.getrandbits(16) % len(pool)] for _ in range(n))
    if s and random.getrandbits(6) == 0:
        i = random.getrandbits(16) % len(s)
        s = s[:i] + "\x00" + s[i:]
    return s


class Obj:
    def __str__(self):
        return "k"


def rjunk():
    k = random.getrandbits(3)
    return (None, 7, b"k", bytearray(b"k"), ["k"], 2.5, Obj(), 1 << 70)[k]


def rarg():
    """A str 7 times in 8, something else otherwise."""
    return rstr() if random.getrandbits(3) else rjunk()


KEYS = ["k%d" % i for i in range(36)] + ["ชื่อ", "ที่อยู่", "a" * 31, "ก" * 10]


def rkey():
    k = random.getrandbits(3)
    if k < 6:
        return random.choice(KEYS)
    return rarg()


def rname():
    k = random.getrandbits(3)
    if k < 3:
        return random.choice(list(BUILTIN))
    if k < 6:
        return random.choice(PY_NAMES)
    return rarg()


# --- the model of the argument checks (mirrors mpy/README.md) ------------------------------------
def str_error(v, what):
    """The (type, text) a str argument `v` named `what` is refused with, or None."""
    if not isinstance(v, str) or type(v) is not str:
        return (TypeError, "%s must be str" % what)
    if "\x00" in v:
        return (ValueError, "%s must not contain NUL" % what)
    return None


def key_error(k):
    e = str_error(k, "key")
    if e:
        return e
    if not 1 <= len(k.encode()) <= 31:
        return (ValueError, "key must be 1..31 bytes (CLAW_MEM_KEY_MAX)")
    return None


def value_error(v):
    e = str_error(v, "value")
    if e:
        return e
    if len(v.encode()) > 127:
        return (ValueError, "value must be 0..127 bytes (CLAW_MEM_VAL_MAX)")
    return None


def name_error(n):
    e = str_error(n, "name")
    if e:
        return e
    if not 1 <= len(n.encode()) <= 31:
        return (ValueError, "tool name must be 1..31 bytes (CLAW_RATE_NAME_MAX)")
    return None


def prompt_error(p):
    e = str_error(p, "prompt")
    if e:
        return e
    if not 1 <= len(p.encode()) <= bentoclaw.PROMPT_MAX:
        return (ValueError, "prompt must be 1..%d bytes (PROMPT_MAX)" % bentoclaw.PROMPT_MAX)
    return None


def builtin_arg_error(name, arg):
    if name == "echo":
        if arg is not None and not isinstance(arg, str):
            return (TypeError, "echo takes a str")
    elif name == "led":
        if not (arg is None or isinstance(arg, (bool, int)) or (type(arg) is str and arg == "toggle")):
            return (TypeError, "led takes None, a bool or 'toggle'")
    elif arg is not None:
        return (TypeError, "this tool takes no argument")
    return None


# --- model state ---------------------------------------------------------------------------------
memory = {}
ring = 0  # turns added since the last clear (status shows min(10, ring))
connected = False
py_tools = {}  # name -> (kind, risk, rate)
ran = {}
# name -> [ticks before, ticks after, ...] of each call the limiter admitted,
# flat: small ints take no heap, so the model leaves no objects of its own
# strewn over the heap for the whole run (a heap that fragmented had no
# 16 KiB piece left for a 1 KiB emoji string at 1.8 MB free).
calls_ok = {}
errors_seen = 0
counts = {}
fails = 0
bad_calls = 0  # calls with at least one failed check
last_bad = -1


def note(op, outcome):
    k = op + ":" + outcome
    counts[k] = counts.get(k, 0) + 1


def rep(x):
    """repr(x), cut to 40 characters of a long str or bytes (a message is
    built for every check: a 10 KB one would need a run of the heap that
    the test's own objects may have left in pieces)."""
    if isinstance(x, (str, bytes)) and len(x) > 40:
        return "%r...(%d)" % (x[:40], len(x))
    return repr(x)


def expect(cond, what, *detail):
    global fails, bad_calls, last_bad
    if not cond:
        fails += 1
        if last_bad != i_call:
            bad_calls += 1
            last_bad = i_call
        if fails <= 25:
            print("FAIL [random-api] call %d: %s" % (i_call, what), *detail)
        t.failed += 1
    else:
        t.passed += 1


def run(fn, *args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: any Python exception is a valid outcome to classify
        return None, e


def exc_is(e, pair):
    return e is not None and type(e) is pair[0] and str(e) == pair[1]


def make_handler(name, kind):
    def handler(arg):
        ran[name] = ran.get(name, 0) + 1
        if kind == "raise":
            raise ValueError("handler %s failed" % name)
        if kind == "big":
            return "ก" * 500
        if kind == "none":
            return None
        if kind == "reenter":
            return bentoclaw.recall("k0")
        return arg

    return handler


def rate_window_ok(name, limit):
    """No 60 s span of (fake) ticks holds more successful calls than limit.
    Each call is bracketed by the ticks read just before and just after it,
    and the limiter took its own time somewhere in between. So when the
    limiter is right, the newest call's "after" and the "before" of the call
    `limit` calls earlier are at least 60 s apart: exact, no slack, whatever
    the load (under faketime x50 a 10 ms stall is 500 ms of ticks)."""
    ts = calls_ok.get(name, [])
    n = len(ts) // 2
    if n <= limit:
        return True
    return time.ticks_diff(ts[2 * n - 1], ts[2 * (n - 1 - limit)]) >= 60000


# --- the run -------------------------------------------------------------------------------------
OPS = (["remember"] * 20 + ["recall"] * 14 + ["tool"] * 22 + ["register"] * 6 + ["clear"] * 3
       + ["flush"] * 5 + ["status"] * 4 + ["ask"] * 3 + ["connect"] * 2 + ["disconnect"] * 1
       + ["tools"] * 2 + ["idle"] * 4)
FAULTS = ("status500", "status404", "garbage", "truncated", "badutf8", "close_mid", "drop")
t0_run = rig.ticks()
i_call = 0
for i_call in range(N_CALLS):
    op = OPS[random.getrandbits(16) % len(OPS)]
    e0 = bentoclaw.status()["error_count"]
    br0 = bentoclaw.safety()["circuit_breaker"]

    if op == "remember":
        k, v = rkey(), (rarg() if random.getrandbits(2) else rstr()[:40])
        r, e = run(bentoclaw.remember, k, v)
        want_e = key_error(k) or value_error(v)
        if want_e:
            expect(exc_is(e, want_e), "remember(%s, %s) error" % (rep(k), rep(v)), repr(e), want_e)
            note(op, "refused-arg")
        else:
            full = k not in memory and len(memory) >= 32
            expect(e is None and r is (not full), "remember(%s) -> %r (full %r)" % (rep(k), r, full), repr(e))
            if r:
                memory[k] = v
                expect(bentoclaw.recall(k) == v, "recall right after remember(%s)" % rep(k))
            note(op, "stored" if r else "full")
    elif op == "recall":
        k = rkey()
        r, e = run(bentoclaw.recall, k)
        want_e = key_error(k)
        if want_e:
            expect(exc_is(e, want_e), "recall(%s) error" % (rep(k),), repr(e), want_e)
            note(op, "refused-arg")
        else:
            expect(e is None and r == memory.get(k), "recall(%s) == model" % rep(k), rep(r), rep(memory.get(k)))
            note(op, "hit" if r is not None else "miss")
    elif op == "tool":
        n = rname()
        arg = rarg() if random.getrandbits(1) else None
        if type(n) is str and n == "led" and random.getrandbits(1):
            arg = random.choice((True, False, 1, 0, "toggle", None))
        ts = rig.ticks()
        r, e = run(bentoclaw.tool, n, arg)
        ts = (ts, rig.ticks())
        want_e = name_error(n)
        if want_e is None and n not in BUILTIN and n not in py_tools:
            want_e = (ValueError, "unknown tool")
        if want_e is None and type(arg) is str and "\x00" in arg:
            # One rule for NUL everywhere, checked after the name.
            want_e = (ValueError, "arg must not contain NUL")
        if want_e is None and n in BUILTIN:
            want_e = builtin_arg_error(n, arg)
        if want_e:
            expect(exc_is(e, want_e), "tool(%s, %s) error" % (rep(n), rep(arg)), repr(e), want_e)
            expect(bentoclaw.status()["error_count"] == e0, "argument error counted")
            note(op, "refused-arg")
        else:
            risk = BUILTIN[n] if n in BUILTIN else py_tools[n][1]
            kind = "builtin" if n in BUILTIN else py_tools[n][0]
            e1 = bentoclaw.status()["error_count"]
            if e is not None and str(e) == rig.BREAKER_TEXT:
                expect(br0 != "closed", "breaker refusal while closed")
                expect(e1 == e0 + 1, "breaker refusal counts one error")
                note(op, "breaker")
            elif e is not None and str(e) == rig.TRUST_TEXT:
                expect(risk == 2 and connected, "trust refusal of risk %d (connected %r)" % (risk, connected))
                expect(e1 == e0 + 1, "trust refusal counts one error")
                note(op, "trust")
            elif e is not None and str(e) == rig.RATE_TEXT:
                expect(e1 == e0 + 1, "rate refusal counts one error")
                expect(not (risk == 2 and connected), "rate gate reached before trust")
                note(op, "rate")
            elif kind == "raise":
                expect(type(e) is ValueError and str(e) == "handler %s failed" % n,
                       "raising handler's exception propagates", repr(e))
                expect(e1 == e0 + 1, "raising handler counts one error")
                expect(not (risk == 2 and connected), "risk-2 tool ran over HTTPS")
                calls_ok.setdefault(n, []).extend(ts)
                ring += 1  # it ran: a TOOL turn "<name>: error: <text>"
                note(op, "raised")
            else:
                expect(e is None, "tool(%s) ran without error" % rep(n), repr(e))
                expect(not (risk == 2 and connected), "risk-2 tool ran over HTTPS")
                expect(e1 == e0, "success counts no error")
                calls_ok.setdefault(n, []).extend(ts)
                ring += 1
                if n == "wipe_memory":
                    memory.clear()
                    expect(not rig.store_exists(), "wipe_memory removed every memory file")
                elif n == "echo":
                    expect(r == arg if arg is not None else r == "", "echo result")
                elif kind == "ret":
                    expect(r is arg, "handler result returned as is")
                note(op, "ok")
            limit = BUILTIN_RATE[n] if n in BUILTIN else (py_tools[n][2] or 10)
            expect(rate_window_ok(n, limit), "tool %s over %d calls in 60 s" % (rep(n), limit))
    elif op == "register":
        n = rname() if random.getrandbits(2) else random.choice(PY_NAMES)
        kind = random.choice(("ret", "ret", "raise", "big", "none", "reenter"))
        h = make_handler(n, kind) if random.getrandbits(4) else rjunk()
        risk = random.choice((0, 0, 1, 2)) if random.getrandbits(4) else random.choice((3, -1, "1", None))
        rate = (RATE_OF.get(n, 0) if type(n) is str else 0) if random.getrandbits(4) \
            else random.choice((65536, -1, 1.5))
        r, e = run(bentoclaw.register_tool, n, h, risk, rate)
        want_e = name_error(n)
        if want_e is None and not callable(h):
            want_e = (TypeError, "handler must be callable")
        if want_e is None and not isinstance(risk, int):
            want_e = (TypeError, "risk must be int")
        if want_e is None and not 0 <= risk <= 2:
            want_e = (ValueError, "risk must be 0..2")
        if want_e is None and not isinstance(rate, int):
            want_e = (TypeError, "rate_per_min must be int")
        if want_e is None and not 0 <= rate <= 65535:
            want_e = (ValueError, "rate_per_min must be 0..65535")
        if want_e is None and n in BUILTIN:
            want_e = (ValueError, "cannot replace a built-in tool")
        if want_e is None and n not in py_tools and len(py_tools) >= 12:
            want_e = (RuntimeError, "tool registry full (CLAW_RATE_MAX_TOOLS)")
        if want_e:
            expect(exc_is(e, want_e), "register_tool(%s) error" % (rep(n),), repr(e), want_e)
            note(op, "refused")
        else:
            expect(e is None, "register_tool(%s) accepted" % (rep(n),), repr(e))
            py_tools[n] = (kind, risk, rate)
            note(op, "ok")
        expect(bentoclaw.status()["error_count"] == e0, "register_tool counts no error")
    elif op == "clear":
        bentoclaw.session_clear()
        ring = 0
        note(op, "ok")
    elif op == "flush":
        r, e = run(bentoclaw.flush)
        expect(e is None and r is True, "flush on a healthy RAM disk", repr(r), repr(e))
        expect(bentoclaw.status()["dirty"] is False, "clean after flush")
        note(op, "ok")
    elif op == "status":
        r, e = run(random.choice(STATUS_CALLS))
        expect(e is None, "status/safety/_ui_events", repr(e))
        note(op, "ok")
    elif op == "tools":
        r = bentoclaw.tools()
        board = [x["name"] for x in r if x["builtin"]]
        names = [x["name"] for x in r if not x["builtin"]]
        expect(board[-4:] == ["echo", "uptime", "led", "wipe_memory"], "the board's tools first")
        expect(sorted(names) == sorted(py_tools), "registry == model", names)
        expect(len(names) <= 12, "at most 12 Python tools")
        note(op, "ok")
    elif op == "ask":
        p = rarg() if random.getrandbits(2) == 0 else rstr()[:60] or "hi"
        fault = None
        if connected and random.getrandbits(3) == 0:
            fault = random.choice(FAULTS)
            rig.backend_mode(fault, count=1)
        r, e = run(bentoclaw.ask, p)
        want_e = prompt_error(p)
        e1 = bentoclaw.status()["error_count"]
        if want_e:
            expect(exc_is(e, want_e), "ask(%s) error" % (rep(p),), repr(e), want_e)
            expect(e1 == e0, "argument error counted")
            note(op, "refused-arg")
        elif not connected:
            expect(exc_is(e, (RuntimeError, rig.NOT_CONNECTED_TEXT)), "ask offline", repr(e))
            expect(e1 == e0 + 1, "offline ask counts one error")
            note(op, "offline")
        elif e is not None and str(e) == rig.ASK_BREAKER_TEXT:
            expect(br0 != "closed", "ask refused by a closed breaker")
            expect(e1 == e0 + 1, "breaker refusal counts one error")
            note(op, "breaker")
        elif fault:
            expect(exc_is(e, (RuntimeError, rig.REQUEST_TEXT)), "fault %s -> request failed" % fault, repr(e))
            expect(e1 == e0 + 1, "failed request counts one error")
            ring += 1
            note(op, "failed")
        else:
            expect(e is None and isinstance(r, str), "ask ok", repr(e))
            expect(e1 == e0, "success counts no error")
            ring += 2
            note(op, "ok")
        if fault and e is not None and str(e) != rig.REQUEST_TEXT:
            rig.backend_mode("ok")  # the fault was not consumed
    elif op == "connect":
        good = random.getrandbits(2) != 0
        r, e = run(bentoclaw.connect, "127.0.0.1", PORT if good else 1, rig.API_KEY)
        expect(e is None and r is good, "connect(%s) -> %r" % ("good" if good else "dead", r), repr(e))
        connected = good
        if good:
            ring += 1
        else:
            expect(bentoclaw.status()["error_count"] == e0 + 1, "failed connect counts one error")
        note(op, "ok" if good else "failed")
    elif op == "idle":
        # Let (fake) time pass: rate windows slide, cooldowns run out.
        time.sleep_ms(random.randint(100, 4000))
        note(op, "ok")
    elif op == "disconnect":
        bentoclaw.disconnect()
        connected = False
        ring += 1
        note(op, "ok")

    # --- invariants after every call ---------------------------------------------------------
    st = bentoclaw.status()
    sf = bentoclaw.safety()
    expect(0 <= st["session_msgs"] <= 10, "session_msgs in 0..10", st["session_msgs"])
    expect(st["session_msgs"] == min(10, ring), "session_msgs == model", st["session_msgs"], ring, op)
    expect(st["state"] in STATES, "state in its set", st["state"])
    expect(st["connected"] is connected, "connected == model")
    expect(sf["circuit_breaker"] in BREAKER, "breaker in its set", sf["circuit_breaker"])
    expect(sf["trust_level"] == ("https" if connected else "usb"), "trust == transport", sf["trust_level"])
    expect(0 <= sf["cooldown_ms"] <= 30000, "cooldown in range", sf["cooldown_ms"])
    expect(sf["circuit_breaker"] == "open" or sf["cooldown_ms"] == 0, "cooldown only while open")
    expect(st["error_count"] >= errors_seen, "errors never decrease", st["error_count"], errors_seen)
    errors_seen = st["error_count"]
    if i_call % 500 == 499:
        for k, v in memory.items():
            expect(bentoclaw.recall(k) == v, "full memory sweep: %r" % k)

# Final sweep: memory model and a reload from flash.
for k, v in memory.items():
    expect(bentoclaw.recall(k) == v, "final memory %r" % k)
bentoclaw.flush()
n_msgs = bentoclaw.status()["session_msgs"]
bentoclaw = rig.simulate_soft_reset(bentoclaw)
expect(bentoclaw.status()["session_msgs"] == n_msgs, "ring reloaded whole in a new VM")
for k, v in memory.items():
    expect(bentoclaw.recall(k) == v, "memory after reload %r" % k)

print("calls: %d over %d ms of (faked, x50) ticks; seed %d" % (N_CALLS, rig.elapsed(t0_run), SEED))
for k in sorted(counts):
    print("  %-24s %5d" % (k, counts[k]))
print("memory keys at the end: %d; python tools: %d; errors counter: %d" % (
    len(memory), len(py_tools), errors_seen))
print("RELIABILITY: random API sequences (10 000 calls, model-checked)|%d|%d" % (N_CALLS, bad_calls))
t.done()
