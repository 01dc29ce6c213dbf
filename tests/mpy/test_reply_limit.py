# test_reply_limit.py — issue 23: the bundled backend (mpy/examples/backend.py)
# keeps every answer of its rules within the device's REPLY_MAX (4096 bytes)
# whatever the prompt. Before the fix it echoed the prompt whole, so any
# prompt over about 4,058 bytes got a reply over the limit: the device
# raised "HTTPS request failed" and counted a breaker failure. Now every
# prompt length from 4,000 to PROMPT_MAX bytes (ASCII, Thai, mixed) is
# answered, the echo cut on a character with "…" where needed, exactly; a
# "run echo <long>" stays a tool request (its argument cut). And a reply
# over the limit (a fixed one) fails with the text that names the limit.
# needs: backend
import claw_rig as rig
import bentoclaw

t = rig.Checker("reply-limit")
rig.mount_ram()
rig.classic_session(bentoclaw)
MAX = bentoclaw.REPLY_MAX
TOO_LONG = rig.REQUEST_TEXT if rig.QEMU else "reply too long (over REPLY_MAX = %d bytes)" % MAX
t.eq(rig.connect(bentoclaw), True, "connect")


def expected(prompt, ctx):
    """The echo of backend.py's rule: 'Echo: <prompt> (context: N bytes, M
    lines)', the prompt cut on a character with '…' when it would pass MAX."""
    lines = ctx.count("\n") + (1 if ctx and not ctx.endswith("\n") else 0)
    tail = " (context: %d bytes, %d lines)" % (len(ctx.encode()), lines)
    whole = "Echo: " + prompt + tail
    if len(whole.encode()) <= MAX:
        return whole
    room = MAX - len(("Echo: \u2026" + tail).encode())
    return "Echo: " + utf8_prefix(prompt, room) + "\u2026" + tail


def utf8_prefix(text, n):
    """The longest prefix of text of at most n bytes, whole characters."""
    b = text.encode()[:n]
    while True:
        try:
            return b.decode()
        except UnicodeError:
            b = b[:-1]


cases = losses = 0
for unit in ("x", "ก", "aก"):
    for n in list(range(4000, 4097, 7)) + [bentoclaw.PROMPT_MAX]:
        prompt = utf8_prefix(unit * n, n)
        bentoclaw.session_clear()
        cases += 1
        try:
            r = bentoclaw.ask(prompt)
        except Exception as e:
            r = e
        ctx = rig.backend_last()["body_json"]["context"]
        ok = t.check(isinstance(r, str), "prompt of %d bytes (%r): answered" % (len(prompt.encode()), unit), repr(r)[:80])
        ok = ok and t.check(len(r.encode()) <= MAX, "within REPLY_MAX", len(r.encode()))
        ok = ok and t.eq(r, expected(prompt, ctx), "prompt of %d bytes: the echo exactly" % len(prompt.encode()))
        losses += 0 if ok else 1
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "no breaker failure")

# A tool request for a long argument stays one (its argument cut to fit).
rig.backend_mode("tools")
seen = []
bentoclaw.register_tool("echo2", lambda a: seen.append(a) or "ok")
bentoclaw.session_clear()
r = bentoclaw.ask("run echo2 " + "y" * 4000)
cases += 1
ok = t.eq(r, "Tool echo2 ok: ok", "a long run request still runs the tool")
ok &= t.check(len(seen) == 1 and seen[0] == "y" * len(seen[0]) and 4000 - 40 < len(seen[0]) <= 4000,
              "its argument cut to fit", [len(s) for s in seen])
losses += 0 if ok else 1
rig.backend_mode("ok")

# A reply over the limit: the text names the limit.
rig.backend_control(reply="z" * (MAX + 1))
cases += 1
e = t.raises(RuntimeError, bentoclaw.ask, "too long", text=TOO_LONG)
losses += 0 if e is not None and str(e) == TOO_LONG else 1
rig.backend_control(reply=None)
bentoclaw.disconnect()
print("RELIABILITY: prompts up to PROMPT_MAX against the bundled backend: every reply within REPLY_MAX; one over it names the limit|%d|%d"
      % (cases, losses))
t.done()
