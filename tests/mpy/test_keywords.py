# test_keywords.py — register_tool() and tool() take keyword arguments
# (issue 13, "clear errors": register_tool(name=..., handler=...) raised
# TypeError; keywords are what Python users expect, and the same goes for
# tool(name, arg=...)).
#
# Before the fix (41ae5d2, the last release) this file failed:
#   register_tool(name="kw", handler=f)  TypeError('function missing 2 required
#                                         positional arguments')
#   tool("kw", arg="z")                   TypeError("function doesn't take
#                                         keyword arguments")
#
# Checked: every keyword of both (name, handler, risk, rate_per_min; name,
# arg), mixed positional + keyword, what the handler receives, that the
# registry records risk and rate given by keyword, that the gates see them
# (a risk=2 tool refused over HTTPS is not tested here: see test_trust_doors),
# and MicroPython's own argument errors (exact texts) for an unknown keyword,
# a missing argument and an argument given twice.
# targets: unix
import claw_rig as rig
import bentoclaw

t = rig.Checker("keywords")
rig.mount_ram()

got = []


def handler(a):
    got.append(a)
    return ("got", a)


# --- register_tool -------------------------------------------------------------------
t.eq(bentoclaw.register_tool(name="kw", handler=handler), None, "register_tool(name=, handler=)")
tools = {x["name"]: rig.tool_row(x) for x in bentoclaw.tools()}
t.eq(tools.get("kw"), ("kw", 0, 10, False), "registered with the defaults (risk 0, 10/min)")
t.eq(bentoclaw.register_tool(name="kw2", handler=handler, risk=1, rate_per_min=5), None,
     "register_tool with every keyword")
t.eq({x["name"]: rig.tool_row(x) for x in bentoclaw.tools()}.get("kw2"), ("kw2", 1, 5, False), "risk and rate given by keyword")
t.eq(bentoclaw.register_tool("kw3", handler=handler, rate_per_min=2), None, "positional name, keyword handler")
t.eq({x["name"]: rig.tool_row(x) for x in bentoclaw.tools()}.get("kw3"), ("kw3", 0, 2, False), "rate by keyword, risk default")
t.eq(bentoclaw.register_tool("kw4", handler, risk=0, rate_per_min=65535), None, "positional name and handler")

# --- tool ------------------------------------------------------------------------------
t.eq(bentoclaw.tool("kw", arg="z"), ("got", "z"), "tool(name, arg=...)")
t.eq(bentoclaw.tool(name="kw", arg=3), ("got", 3), "tool(name=..., arg=...)")
t.eq(bentoclaw.tool(name="kw"), ("got", None), "tool(name=...) passes None")
t.eq(bentoclaw.tool("kw", None), ("got", None), "positional None")
t.eq(got, ["z", 3, None, None], "the handler received each argument")
t.eq(bentoclaw.tool("echo", arg="hi"), "hi", "a built-in by keyword")
t.eq(bentoclaw.tool(name="led", arg=True), True, "led by keywords")
t.eq(bentoclaw.session()[-1], ("tool", "led: True"), "the TOOL turn of a keyword call")
# The rate given by keyword is enforced: kw3 allows 2 a minute.
t.eq(bentoclaw.tool("kw3", arg=1), ("got", 1), "kw3 #1")
t.eq(bentoclaw.tool(name="kw3", arg=2), ("got", 2), "kw3 #2")
t.raises(RuntimeError, lambda: bentoclaw.tool(name="kw3", arg=3), text=rig.RATE_TEXT,
         what="kw3 #3 refused by the keyword rate (2/min)")

# --- argument errors (MicroPython's mp_arg_parse_all texts) ------------------------------
t.raises(TypeError, lambda: bentoclaw.register_tool(name="x", handler=print, foo=1),
         text="extra keyword arguments given", what="register_tool: unknown keyword")
t.raises(TypeError, lambda: bentoclaw.register_tool(name="x"), text="'handler' argument required",
         what="register_tool: no handler")
t.raises(TypeError, lambda: bentoclaw.register_tool("x", print, name="y"), text="extra keyword arguments given",
         what="register_tool: name twice")
t.raises(TypeError, lambda: bentoclaw.tool("echo", argx=1), text="extra keyword arguments given",
         what="tool: unknown keyword")
t.raises(TypeError, lambda: bentoclaw.tool(), text="'name' argument required", what="tool: no name")
t.raises(TypeError, lambda: bentoclaw.tool("echo", "a", arg="b"), text="extra keyword arguments given",
         what="tool: arg twice")
t.raises(TypeError, lambda: bentoclaw.tool("echo", "a", "b"), text="extra positional arguments given",
         what="tool: three positional arguments")
t.eq("x" in {x["name"] for x in bentoclaw.tools()}, False, "no failed registration left a tool")

# The other calls of the module, as they are now (reported, not required by
# the issue): which of them take keywords.
others = (
    ("remember", lambda: bentoclaw.remember(key="a", value="b")),
    ("recall", lambda: bentoclaw.recall(key="a")),
    ("forget", lambda: bentoclaw.forget(key="a")),
    ("pin", lambda: bentoclaw.pin(key="a", on=False)),
    ("search", lambda: bentoclaw.search(query="a", n=2)),
    ("import_memory", lambda: bentoclaw.import_memory(text="- **a**: b\n", strict=True)),
    ("archive", lambda: bentoclaw.archive(offset=0, n=10)),
    ("connect", lambda: bentoclaw.connect(host="127.0.0.1", port=1, api_key="k")),
    ("ask", lambda: bentoclaw.ask(prompt="x")),
    ("tacp", lambda: bentoclaw.tacp(data=b"")),
)
takes = []
refuses = []
for name, fn in others:
    try:
        fn()
        takes.append(name)
    except TypeError:
        refuses.append(name)
    except Exception:
        takes.append(name)
print("NOTE: keywords taken by %s; refused (TypeError) by %s" % (", ".join(takes), ", ".join(refuses)))

t.done()
