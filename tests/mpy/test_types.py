# test_types.py — wrong argument types raise TypeError, bad values ValueError,
# and nothing a script passes crashes the interpreter (a small fuzz).
# targets: unix qemu
import claw_rig as rig
import bentoclaw

t = rig.Checker("types")
rig.mount_ram()

T, V = TypeError, ValueError
cases = [
    # (exception, function, args)
    (T, bentoclaw.ask, (1,)),
    (T, bentoclaw.ask, (None,)),
    (T, bentoclaw.ask, (b"bytes",)),
    (V, bentoclaw.ask, ("",)),
    (V, bentoclaw.ask, ("x" * (bentoclaw.PROMPT_MAX + 1),)),
    (V, bentoclaw.ask, ("a\x00b",)),
    (T, bentoclaw.remember, (1, "v")),
    (T, bentoclaw.remember, ("k", None)),
    (T, bentoclaw.remember, ("k", 5)),
    (T, bentoclaw.remember, (b"k", "v")),
    (T, bentoclaw.recall, (None,)),
    (T, bentoclaw.recall, (b"k",)),
    (T, bentoclaw.connect, (1, 80, "k")),
    (T, bentoclaw.connect, ("127.0.0.1", "80", "k")),
    (T, bentoclaw.connect, ("127.0.0.1", 80.0, "k")),
    (T, bentoclaw.connect, ("127.0.0.1", 80, None)),
    (V, bentoclaw.connect, ("127.0.0.1", 0, "k")),
    (V, bentoclaw.connect, ("127.0.0.1", 65536, "k")),
    (V, bentoclaw.connect, ("127.0.0.1", -1, "k")),
    (V, bentoclaw.connect, ("127.0.0.1", 1 << 70, "k")),
    (V, bentoclaw.connect, ("", 80, "k")),
    (V, bentoclaw.connect, ("h" * 64, 80, "k")),
    (V, bentoclaw.connect, ("127.0.0.1\r\nX-Evil: 1", 80, "k")),
    (V, bentoclaw.connect, ("127.0.0.1", 80, "key\r\nX-Evil: 1")),
    (V, bentoclaw.connect, ("127.0.0.1", 80, "k" * 128)),
    (V, bentoclaw.connect, ("127.0.0.1", 80, "")),
    (T, bentoclaw.tool, (1,)),
    (T, bentoclaw.tool, (None, None)),
    (V, bentoclaw.tool, ("no-such-tool",)),
    (V, bentoclaw.tool, ("",)),
    (V, bentoclaw.tool, ("x" * 32,)),
    (V, bentoclaw.tool, ("ec\x00ho",)),
    (T, bentoclaw.tool, ("echo", 5)),
    (T, bentoclaw.tool, ("uptime", "arg")),
    (T, bentoclaw.tool, ("led", 1.5)),
    (T, bentoclaw.register_tool, ("t", 5)),
    (T, bentoclaw.register_tool, ("t", None)),
    (T, bentoclaw.register_tool, (5, print)),
    (T, bentoclaw.register_tool, ("t", print, "1")),
    (T, bentoclaw.register_tool, ("t", print, 0, 1.5)),
    (V, bentoclaw.register_tool, ("t", print, 3)),
    (V, bentoclaw.register_tool, ("t", print, -1)),
    (V, bentoclaw.register_tool, ("t", print, 0, -1)),
    (V, bentoclaw.register_tool, ("t", print, 0, 65536)),
    (V, bentoclaw.register_tool, ("", print)),
    (V, bentoclaw.register_tool, ("n" * 32, print)),
    (V, bentoclaw.register_tool, ("echo", print)),
]
for exc, fn, args in cases:
    t.raises(exc, fn, *args)

# Keyword form of register_tool and its errors.
t.raises(T, lambda: bentoclaw.register_tool("kw", print, risk="high"), what="risk='high' TypeError")
t.raises(T, lambda: bentoclaw.register_tool(name="kw"), what="missing handler TypeError")

# Nothing above may have counted as a gate refusal or a breaker failure.
sf = bentoclaw.safety()
t.eq(sf["circuit_breaker"], "closed", "argument errors do not touch the breaker")

# --- fuzz: every entry point with assorted junk; only Python exceptions ------------
junk = [None, 0, -1, 1 << 64, 3.5, "", "x", "ก" * 200, "\x00", "\ud7ff", "a\r\nb",
        b"", b"\xff\xfe", bytearray(3), [], {}, (1, 2), print, object(), "x" * 5000]
calls = [bentoclaw.ask, bentoclaw.recall, bentoclaw.tool]
count = 0
for j in junk:
    for fn in calls:
        try:
            fn(j)
        except Exception:
            pass
        count += 1
    for j2 in junk[:8]:
        for fn2 in (bentoclaw.remember, bentoclaw.tool):
            try:
                fn2(j, j2)
            except Exception:
                pass
            count += 1
        try:
            bentoclaw.connect(j, j2, j)
        except Exception:
            pass
        count += 1
        try:
            bentoclaw.register_tool(j, j2)
        except Exception:
            pass
        count += 1
print("fuzz calls survived:", count)
t.check(isinstance(bentoclaw.status(), dict), "module still answers after the fuzz")
t.eq(bentoclaw.safety()["trust_level"], "usb", "trust back at USB after failed connects")
t.done()
