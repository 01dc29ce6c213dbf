# check_stub.py — mpy/bentoclaw.pyi against the built module (MicroPython).
#
#   python3 tests/stubs/stub_api.py > build/stubs/api.json      # the stub, read on the host
#   build/micropython/micropython tests/stubs/check_stub.py build/stubs/api.json
#
# (scripts/test_stubs.sh runs both.) MicroPython has no `ast`, so CPython
# reads the stub into api.json first; this file compares it with the module:
#
#  * names: dir(bentoclaw) (less the names every built-in module has) is
#    exactly the stub's functions and constants; modbentoclaw.c's module table
#    says the same, and its `#if !BENTOCLAW_PORT_FIRMWARE` names are exactly
#    those the stub marks "Availability: unix port only"; no type-only name
#    of the stub (TypedDicts, aliases) is in the module, and each starts
#    with "_";
#  * modbentoclaw.c's definitions, read on the host: the number of
#    positional arguments of each function, and a keyword function's mp_arg_t
#    table in order (required, keyword-only) — this finds a keyword the stub
#    lacks, which no probe can guess;
#  * constants: type and, where the stub gives one, value;
#  * call signatures, probed: every function is called with 0..max+1
#    positional arguments, with each keyword the stub names (the required
#    ones beside it), with a keyword no function has, and with each
#    positional-only parameter by keyword. The arguments are a probe object
#    no function takes, so an accepted call raises the function's own
#    TypeError ("name must be str") before doing anything; the argument
#    parser's TypeErrors ("extra keyword arguments given", "function takes 1
#    positional arguments but 2 were given", ...) are what rejects a call;
#  * config()'s keywords: the key list its own error message gives;
#  * return types: a sample call of every function (valid arguments, on a
#    RAM LittleFS) returns what the stub says (TypedDict keys exactly,
#    Literal values, tuple shapes).
#
# Ends with "RESULT: N passed, M failed" (claw_rig.Checker), exit 1 on a failure.
import sys
import json

_here = sys.argv[0].rsplit("/", 1)[0] if "/" in sys.argv[0] else "."
sys.path.insert(0, _here + "/../mpy")
import claw_rig as rig  # noqa: E402  (before the remount: the host tree goes away)

if len(sys.argv) < 2:
    print("usage: micropython check_stub.py API_JSON")
    sys.exit(2)
with open(sys.argv[1]) as _f:
    API = json.load(_f)

t = rig.Checker("stub")
rig.mount_ram()
import bentoclaw  # noqa: E402

# Names every built-in module's dir() shows; `__init__` is the module's import
# hook (MICROPY_MODULE_BUILTIN_INIT), which user code does not call.
MACHINERY = ("__class__", "__dict__", "__name__", "__init__")
FUNCS = API["functions"]
CONSTS = API["constants"]


class _Probe:
    """An argument no bentoclaw function accepts (not str, int, bool, bytes,
    None, list or callable)."""

    def __repr__(self):
        return "<probe>"


P = _Probe()
BOGUS = "zz_no_such_parameter"

# --- the host's reading of the stub ---------------------------------------------

for p in API["problems"]:
    t.check(False, "stub_api.py read the stub", p)

# --- names ------------------------------------------------------------------------

stub_names = set(FUNCS) | set(CONSTS)
mod_names = set(n for n in dir(bentoclaw) if n not in MACHINERY)
for n in sorted(stub_names | mod_names):
    t.check(n in stub_names and n in mod_names, "%s is in the stub and in dir(bentoclaw)" % n,
            "(in the stub: %s, in the module: %s)" % (n in stub_names, n in mod_names))
for n in MACHINERY:
    t.check(n in dir(bentoclaw), "dir(bentoclaw) has the module machinery name %s" % n)
for n in API["type_only"]:
    t.check(n.startswith("_") and n not in mod_names, "type-only name %s starts with _ and is not in the module" % n)

table = API["c_table"] or {"names": [], "unix_only": []}
c_names = set(n for n in table["names"] if n not in MACHINERY)
t.eq(sorted(c_names), sorted(stub_names), "modbentoclaw.c's module table names the stub's names")
stub_unix = sorted(n for n in FUNCS if FUNCS[n]["unix_only"])
t.eq(sorted(table["unix_only"]), stub_unix,
     "the table's #if !BENTOCLAW_PORT_FIRMWARE names are the stub's unix-only ones")

# How modbentoclaw.c defines each function (read on the host): the number of
# positional arguments, and for a keyword function its mp_arg_t table in order
# (MP_ARG_REQUIRED, MP_ARG_KW_ONLY). A keyword-only parameter the stub lacks
# shows here; the probes below cannot find it.
C_ARGS = API.get("c_args") or {}
for name in sorted(FUNCS):
    d = C_ARGS.get(name)
    sig = FUNCS[name]
    if d is None:
        t.check(name not in mod_names, "modbentoclaw.c defines %s with a form stub_api.py reads" % name)
        continue
    if d["kind"] == "fixed":
        want = {"min_pos": d["n"], "max_pos": d["n"], "kw": []}
    elif d["kind"] == "var":
        want = {"min_pos": d["min"], "max_pos": d["max"], "kw": []}
    elif d["args"] is None:  # reads its keywords itself (config): none positional
        want = {"min_pos": 0, "max_pos": 0}
    else:
        pos = [a for a in d["args"] if not a["kw_only"]]
        want = {
            "min_pos": len([a for a in pos if a["required"]]),
            "max_pos": len(pos),
            "kw": [a["name"] for a in d["args"]],
            "kwonly": [a["name"] for a in d["args"] if a["kw_only"]],
            "kw_required": [a["name"] for a in d["args"] if a["required"]],
        }
    got = dict((k, sig[k]) for k in want)
    t.eq(got, want, "the stub's %s() has the parameters modbentoclaw.c defines" % name)


# --- types ------------------------------------------------------------------------


def mismatch(v, ty, where="value"):
    """None when v is of type ty, else what differs."""
    k = ty["t"]
    ok = True
    if k == "any":
        return None
    if k == "none":
        ok = v is None
    elif k in ("int", "bool", "str", "bytes", "bytearray"):
        ok = type(v).__name__ == k  # exact: a bool is not an int here
    elif k == "callable":
        ok = callable(v)
    elif k == "literal":
        ok = any(type(v) is type(x) and v == x for x in ty["values"])
    elif k == "union":
        whys = [mismatch(v, o, where) for o in ty["of"]]
        return None if None in whys else "%s %r matches none of %s" % (where, v, whys)
    elif k == "list":
        if type(v) is not list:
            ok = False
        else:
            for i, x in enumerate(v):
                w = mismatch(x, ty["of"], "%s[%d]" % (where, i))
                if w:
                    return w
    elif k == "tuple":
        if type(v) is not tuple or len(v) != len(ty["items"]):
            ok = False
        else:
            for i, x in enumerate(v):
                w = mismatch(x, ty["items"][i], "%s[%d]" % (where, i))
                if w:
                    return w
    elif k == "dict":
        if type(v) is not dict:
            ok = False
        elif sorted(v) != sorted(ty["keys"]):
            return "%s has the keys %s, the stub %s" % (where, sorted(v), sorted(ty["keys"]))
        else:
            for key in sorted(v):
                w = mismatch(v[key], ty["keys"][key], "%s[%r]" % (where, key))
                if w:
                    return w
    else:
        return "unknown type %r" % (ty,)
    return None if ok else "%s %r is not %s" % (where, v, ty)


for n in sorted(CONSTS):
    if n in mod_names:
        v = getattr(bentoclaw, n)
        w = mismatch(v, CONSTS[n]["type"], n)
        t.check(w is None, "constant %s has the stub's type" % n, w)
        if CONSTS[n]["value"] is not None:
            t.eq(v, CONSTS[n]["value"], "constant %s has the stub's value" % n)

# --- call signatures --------------------------------------------------------------

POSITIONAL = (
    "positional arguments but",  # function takes 1 positional arguments but 2 were given
    "required positional arguments",  # function missing 1 required positional arguments
    "function expected at most",  # function expected at most 1 arguments, got 2
    "extra positional arguments given",  # mp_arg_parse_all
    "takes keyword arguments only",  # config()
)
KEYWORD = (
    "extra keyword arguments given",  # mp_arg_parse_all
    "doesn't take keyword arguments",  # a fixed-arity function
    "unexpected keyword argument",
    "unknown config key",  # config()
)


def classify(fn, args, kw):
    """How the module answered fn(*args, **kw): "ok" (the arguments were
    taken), "pos"/"kw" (the parser refused the positional/keyword ones),
    "missing" (a required argument was not given), with the message."""
    try:
        fn(*args, **kw)
    except TypeError as e:
        msg = str(e)
        for k, texts in (("pos", POSITIONAL), ("kw", KEYWORD)):
            for s in texts:
                if s in msg:
                    return k, msg
        if "argument required" in msg:  # 'name' argument required
            return "missing", msg
        return "ok", msg
    except Exception as e:
        return "ok", repr(e)
    return "ok", "returned"


def call_text(name, args, kw):
    parts = ["<probe>"] * len(args) + ["%s=<probe>" % k for k in kw]
    return "%s(%s)" % (name, ", ".join(parts))


for name in sorted(FUNCS):
    if name not in mod_names:
        continue
    fn = getattr(bentoclaw, name)
    sig = FUNCS[name]
    top = sig["max_pos"] if sig["max_pos"] >= 0 else sig["min_pos"] + 3
    # Positional counts.
    for k in range(0, top + 2):
        want = sig["min_pos"] <= k and (sig["max_pos"] < 0 or k <= sig["max_pos"])
        if k == 0 and want:
            got, msg = classify(fn, (), {})  # a call without arguments: it runs
        else:
            got, msg = classify(fn, (P,) * k, {})
        t.check((got == "ok") == want, "%s %s %d positional argument(s)" % (name, "takes" if want else "refuses", k),
                got, msg)
    # Keywords the stub names, each with the required ones beside it.
    base = dict((r, P) for r in sig["kw_required"])
    lead = (P,) * len([p for p in sig["posonly"][: sig["min_pos"]]])
    for k in sig["kw"]:
        kw = dict(base)
        kw[k] = P
        got, msg = classify(fn, lead, kw)
        t.check(got == "ok", "%s takes the keyword %s" % (name, k), call_text(name, lead, kw), "->", got, msg)
    # A keyword the function does not have.
    kw = dict(base)
    kw[BOGUS] = P
    got, msg = classify(fn, lead, kw)
    t.check(got == "kw", "%s refuses an unknown keyword" % name, call_text(name, lead, kw), "->", got, msg)
    # Positional-only parameters given by keyword.
    for i, p in enumerate(sig["posonly"]):
        got, msg = classify(fn, (P,) * i, {p: P})
        t.check(got != "ok", "%s takes %s only by position" % (name, p), call_text(name, (P,) * i, {p: P}), "->", got,
                msg)

# config(): the key list its own error message gives.
if "config" in FUNCS and "config" in mod_names:
    got, msg = classify(bentoclaw.config, (), {BOGUS: 1})
    keys = msg.split("(keys: ", 1)[1].rstrip(")").split(", ") if "(keys: " in msg else []
    t.eq(sorted(keys), sorted(FUNCS["config"]["kw"]), "config()'s keywords are the keys the module lists")

# --- return types -------------------------------------------------------------------

SAMPLES = (
    ("status", (), {}),
    ("safety", (), {}),
    ("config", (), {}),
    ("config", (), {"auto_compact": True, "compact_keep": 4}),
    ("connect", ("127.0.0.1", 1, "key"), {}),  # nothing listens on port 1: False
    ("_ui_events", (), {}),
    ("disconnect", (), {}),
    ("ask", ("/new",), {}),  # a command: no backend needed
    ("remember", ("k", "v"), {}),
    ("recall", ("k",), {}),
    ("recall", ("absent",), {}),
    ("search", ("k",), {}),
    ("search", ("k",), {"n": 2}),
    ("pin", ("k",), {}),
    ("pin", ("k",), {"on": False}),
    ("export_memory", (), {}),
    ("import_memory", ("- a: b\njunk\n",), {"skipped": []}),
    ("import_memory", ("- c: d\n",), {"strict": True}),
    ("forget", ("a",), {}),
    ("register_tool", ("t", lambda a: a), {"risk": bentoclaw.RISK_LOW, "rate_per_min": 60}),
    ("register_tool", ("t2", lambda a: a), {"description": "a tool", "confirm": True}),
    ("tool", ("t", 5), {}),
    ("tool", ("echo", "hi"), {}),
    ("tool", ("uptime",), {}),
    ("tool", ("led",), {"arg": True}),
    ("tools", (), {}),
    ("execute", ("echo", None), {}),
    # Nothing is held here (no backend): the documented RuntimeError.
    ("confirm", (), {"yes": False}, RuntimeError),
    ("history", (), {}),
    ("version", (), {}),
    ("tacp", (b"\xaa\x55\x30\x03\x01\x00\x00\x2c\x28",), {}),
    ("tacp", (bytearray(b"\xaa\x55\x30\x03"),), {}),
    ("tacp", (b"print(1)\r\n",), {}),
    ("tacp_ready", (), {}),
    ("session", (), {}),
    ("flush", (), {}),
    ("archive", (), {}),
    ("archive", (0,), {"n": 16}),
    ("session_clear", (), {}),
    ("_ui_events", (), {}),
    ("_context", (), {}),
    ("_clock", (), {}),
    ("_clock", (2000000000,), {}),
    ("_clock", (None,), {}),
)

sampled = set()
for sample in SAMPLES:
    name, args, kw = sample[:3]
    if name not in FUNCS or name not in mod_names:
        continue
    sampled.add(name)
    what = "%s(%s) returns the stub's type" % (name, ", ".join([repr(a) for a in args] + ["%s=%r" % i for i in kw.items()]))
    try:
        r = getattr(bentoclaw, name)(*args, **kw)
    except Exception as e:
        t.check(len(sample) > 3 and isinstance(e, sample[3]), what, "raised", repr(e))
        continue
    if len(sample) > 3:
        t.check(False, what, "returned", repr(r), "want", sample[3].__name__)
        continue
    w = mismatch(r, FUNCS[name]["returns"], "result")
    t.check(w is None, what, w)
for name in sorted(FUNCS):
    t.check(name in sampled or name not in mod_names, "check_stub.py has a sample call of %s" % name)

t.done()
