# test_sessions.py — sessions that last (issue #6, docs/SESSIONS.md), on
# LittleFS: config() on flash, byte/token accounting in status(), compaction
# instead of silent loss (ring full, context threshold, /compact), a failed
# summary request, /new and /reset, idle timeout and daily reset (on the
# test clock bentoclaw._clock()), tool turns staying with their asker, the
# archive (opt-in) and its cap. The restart side is tests/mpy/test_sessions_restart.py.
# The idle timeout without an RTC runs on ticks: the test clock
# (rig.advance_clock) moves them, real time runs at its own pace.
# needs: backend
# needs: clock
# targets: unix qemu
import json
import claw_rig as rig
import bentoclaw

t = rig.Checker("sessions")
bdev = rig.mount_ram(blocks=512)
CONFIG_FILE = "/.bentoclaw_config"
ARCHIVE_FILE = "/.bentoclaw_archive"
DEFAULTS = {
    "compact_threshold_pct": 80,
    "compact_min_msgs": 4,
    "compact_keep": 4,
    "context_budget": bentoclaw.CONTEXT_MAX,
    "idle_timeout_s": 0,
    "daily_reset_hour": 4,
    "auto_compact": True,
    "backend_summary": False,
    "send_tools": False,
    "archive": False,
    "compact_before_drop": False,
}
DAY = 86400
T0 = 1767225600  # 2026-01-01 00:00:00 (the RTC is taken as local time)
# The unix port's test clock. The firmware has no such hook, and the
# emulated board no RTC (bentoclaw sees it as unset): there the daily reset
# never fires, which is what the sections below set the clock to noon for.
HAS_CLOCK = hasattr(bentoclaw, "_clock")


def set_clock(v):
    if HAS_CLOCK:
        bentoclaw._clock(v)


def roles():
    return [r for r, _ in bentoclaw.session()]


def log_total():
    return rig.backend_log()["total"]


def summaries_sent(since):
    return [r for r in rig.backend_log()["requests"][-(log_total() - since):]
            if r.get("body_json") and "summarize" in r["body_json"]] if log_total() > since else []


def archive_all():
    out = b""
    while True:
        chunk = bentoclaw.archive(len(out), 700)
        if not chunk:
            return out
        out += chunk


def tool_turns_have_askers(what):
    s = bentoclaw.session()
    for i, (role, text) in enumerate(s):
        if role == "tool":
            ok = i > 0 and s[i - 1][0] in ("user", "tool")
            if not t.check(ok, what + ": tool turn %d right after its asker" % i, s):
                return


def fresh(**cfg):
    """A fresh session with these settings (the rest default)."""
    c = dict(DEFAULTS)
    c.update(cfg)
    bentoclaw.config(**c)
    bentoclaw.ask("/new")
    rig.backend_reset()


# --- config() ---------------------------------------------------------------------------------
t.eq(bentoclaw.config(), DEFAULTS, "config() defaults")
t.eq(rig.read_file(CONFIG_FILE), None, "reading the config writes nothing")
t.eq(bdev.bytes_written, 0, "no flash written by config()")
e = t.raises(TypeError, lambda: bentoclaw.config(compact_treshold=50), what="unknown key")
t.check(e is not None and "compact_treshold" in str(e) and "compact_threshold_pct" in str(e),
        "the error names the key and the allowed ones", str(e))
for kw, exc, text in [
    ({"compact_threshold_pct": 0}, ValueError, "compact_threshold_pct must be 1..100"),
    ({"compact_threshold_pct": 101}, ValueError, "compact_threshold_pct must be 1..100"),
    ({"compact_min_msgs": 11}, ValueError, "compact_min_msgs must be 1..10"),
    ({"compact_keep": 8}, ValueError, "compact_keep must be 0..7"),
    ({"context_budget": 255}, ValueError, "context_budget must be 256..%d" % bentoclaw.CONTEXT_MAX),
    ({"context_budget": bentoclaw.CONTEXT_MAX + 1}, ValueError, "context_budget must be 256..%d" % bentoclaw.CONTEXT_MAX),
    ({"idle_timeout_s": -1}, ValueError, "idle_timeout_s must be 0..2592000"),
    ({"idle_timeout_s": 1 << 70}, ValueError, "idle_timeout_s must be 0..2592000"),
    ({"daily_reset_hour": 24}, ValueError, "daily_reset_hour must be -1..23"),
    ({"daily_reset_hour": -2}, ValueError, "daily_reset_hour must be -1..23"),
    ({"daily_reset_hour": "4"}, TypeError, "daily_reset_hour must be int"),
    ({"compact_keep": True}, TypeError, "compact_keep must be int"),
    ({"auto_compact": 2}, TypeError, "auto_compact must be bool"),
    ({"auto_compact": None}, TypeError, "auto_compact must be bool"),
    ({"compact_keep": 2, "daily_reset_hour": 99}, ValueError, "daily_reset_hour must be -1..23"),
]:
    t.raises(exc, lambda: bentoclaw.config(**kw), text=text, what="config(%r)" % (kw,))
t.raises(TypeError, lambda: bentoclaw.config(1), text="config() takes keyword arguments only")
t.eq(bentoclaw.config(), DEFAULTS, "a refused call changes nothing (all keywords checked first)")
t.eq(rig.read_file(CONFIG_FILE), None, "and writes nothing")

got = bentoclaw.config(compact_keep=3, idle_timeout_s=600, daily_reset_hour=-1, auto_compact=False)
want = dict(DEFAULTS, compact_keep=3, idle_timeout_s=600, daily_reset_hour=-1, auto_compact=False)
t.eq(got, want, "config(**kw) returns the new settings")
raw = rig.read_file(CONFIG_FILE)
print("config file (%d bytes):" % len(raw or b""), raw)
cfg = json.loads(raw) if raw else None
t.check(cfg == want, "the config file is one JSON object of the settings", raw)
t.eq(rig.read_file(CONFIG_FILE + ".tmp"), None, "no temp file left")
bdev.reset_counters()
bentoclaw.config(compact_keep=3)
t.eq(bdev.bytes_written, 0, "setting an unchanged value writes nothing")
bentoclaw.config(compact_keep=4)
print("flash bytes of one config() change: %d (%d writes)" % (bdev.bytes_written, bdev.writes))

# Lazily read again after a soft reset.
bentoclaw = rig.simulate_soft_reset(bentoclaw)
t.eq(bentoclaw.config(), dict(want, compact_keep=4), "config read back after a soft reset")

# A failed write: OSError, the old settings kept in RAM and on flash.
before = rig.read_file(CONFIG_FILE)
bdev.fail_writes = True
t.raises(OSError, lambda: bentoclaw.config(compact_keep=1), what="a failed config write raises OSError")
bdev.fail_writes = False
t.eq(bentoclaw.config()["compact_keep"], 4, "failed write: RAM setting unchanged")
t.eq(rig.read_file(CONFIG_FILE), before, "failed write: file unchanged")

# Hostile config files: a torn one (no end line) or garbage is ignored whole
# (defaults); inside a complete file unknown keys and bad values are skipped.
# (file bytes, expected compact_keep, expected idle_timeout_s)
CORRUPT = [
    (before[: len(before) // 2], 4, 0),
    (before[:-1], 4, 0),
    (before[:-4], 4, 0),
    (b"", 4, 0),
    (b"\xff\x00garbage", 4, 0),
    (b"\x00" * 600, 4, 0),
    (b"compact_keep=1\n", 4, 0),
    (b"compact_keep=1\nend", 4, 0),
    (b"end\n", 4, 0),
    (b"compact_keep=1\nxend\n", 4, 0),
    (b"compact_keep=77\nend\n", 4, 0),
    (b"compact_keep=-1\nend\n", 4, 0),
    (b"compact_keep=1\n" + b"#" * 600 + b"\nend\n", 4, 0),
    (b"compact_keep=2\r\nidle_timeout_s=abc\nend\n", 2, 0),
    (b"future_key=9\ncompact_keep=3\nend\n", 3, 0),
    (b"compact_keep=2\ncompact_keep=5\nend\n", 5, 0),
    (b"idle_timeout_s=99999999999\nend\n", 4, 0),
    (b"idle_timeout_s=2592000\nend\n", 4, 2592000),
    (b"idle_timeout_s=2592001\nend\n", 4, 0),
    (b"idle_timeout_s=--5\nend\n", 4, 0),
    (b"idle_timeout_s= 5\nend\n", 4, 0),
    (b"=5\ncompact_keep\n\n\nend\n", 4, 0),
    (b"compact_keep=\xe0\xb8\x81\nend\n", 4, 0),
    (b"auto_compact=1\ncompact_keep=0\nend\n", 0, 0),
    # The JSON file: out of range keeps that default, unknown keys with a
    # flat value are skipped, anything that does not parse (wrong type,
    # duplicate, torn, an array or object as a value, too long) is ignored
    # whole.
    (b'{"compact_keep":2,"idle_timeout_s":60}', 2, 60),
    (b'{"compact_keep":99,"idle_timeout_s":60}', 4, 60),
    (b'{"future":"x","f2":-1.5e3,"f3":null,"compact_keep":3}', 3, 0),
    (b'{"future":{"x":[[1],{"y":null}]},"compact_keep":3}', 4, 0),
    (b'{"compact_keep":"2","idle_timeout_s":60}', 4, 0),
    (b'{"compact_keep":2,"compact_keep":3}', 4, 0),
    (b'{"compact_keep":2', 4, 0),
    (b'{"future":' + b"[" * 300 + b"]" * 300 + b',"compact_keep":2}', 4, 0),
    (b'{"compact_keep":2}' + b" " * 400, 4, 0),
]
losses = 0
for bad, keep, idle in CORRUPT:
    with open(CONFIG_FILE, "wb") as f:
        f.write(bad)
    bentoclaw = rig.simulate_soft_reset(bentoclaw)
    got = bentoclaw.config()
    ok = t.eq((got["compact_keep"], got["idle_timeout_s"]), (keep, idle), "config file %r" % bad[:32])
    ok = ok and all(got[k] == DEFAULTS[k] for k in DEFAULTS if k not in ("compact_keep", "idle_timeout_s"))
    losses += 0 if ok else 1
print("RELIABILITY: config file corrupt|%d|%d" % (len(CORRUPT), losses))
bentoclaw.config(**DEFAULTS)
t.eq(bentoclaw.config(), DEFAULTS, "back to the defaults")

# --- accounting --------------------------------------------------------------------------------
t.eq(rig.connect(bentoclaw), True, "connect")
fresh(auto_compact=False)
set_clock(T0 + 12 * 3600)
reply = bentoclaw.ask("how big is this?")
rec = rig.backend_last()
st = bentoclaw.status()
body = rec["body"].encode()
ctx = rec["body_json"]["context"].encode()
t.eq(st["bytes_in"], len(body), "bytes_in = request body bytes")
t.eq(st["bytes_out"], len(reply.encode()), "bytes_out = reply bytes")
t.eq(st["tokens_in"], (len(body) + 3) // 4, "tokens_in from X-Tokens-In")
t.eq(st["tokens_out"], (len(reply.encode()) + 3) // 4, "tokens_out from X-Tokens-Out")
t.eq(st["context_bytes"], len(ctx), "context_bytes of the request")
t.eq(st["exchanges"], 1, "one exchange")
t.eq(st["last_active"], T0 + 12 * 3600 if HAS_CLOCK else 0, "last_active = the RTC at the exchange (0: unset)")
for k in ("state", "connected", "session_msgs", "error_count", "last_result", "dirty"):
    t.check(k in st, "status() keeps %r" % k)
rig.backend_control(tokens=False)
reply2 = bentoclaw.ask("and now?")
st2 = bentoclaw.status()
t.eq((st2["tokens_in"], st2["tokens_out"]), (st["tokens_in"], st["tokens_out"]),
     "no X-Tokens-* headers: token counts unchanged")
t.eq(st2["bytes_out"], st["bytes_out"] + len(reply2.encode()), "bytes still counted")
t.eq(st2["exchanges"], 2, "two exchanges")
rig.backend_control(tokens=True)
rig.backend_mode("status500", count=1)
errors = st2["error_count"]
t.raises(RuntimeError, bentoclaw.ask, "fails", text=rig.REQUEST_TEXT)
st3 = bentoclaw.status()
t.eq((st3["exchanges"], st3["bytes_in"]), (2, st2["bytes_in"]), "a failed request is not counted")
bentoclaw.session_clear()
st4 = bentoclaw.status()
t.eq([st4[k] for k in ("bytes_in", "bytes_out", "tokens_in", "tokens_out", "context_bytes",
                        "exchanges", "last_active")], [0] * 7, "session_clear() resets the accounting")
rig.backend_reset()

# Hostile token headers: the reply is still good; only valid counts count.
fresh(auto_compact=False)
TOKENS = [
    ({"X-Tokens-In": "abc", "X-Tokens-Out": "7"}, 0, 7),
    ({"X-Tokens-In": "-1", "X-Tokens-Out": ""}, 0, 0),
    ({"X-Tokens-In": "12345678901", "X-Tokens-Out": "4294967296"}, 0, 0),
    # Past TOKENS_MAX (1,000,000: docs/BACKEND.md §3): ignored, so one
    # reply cannot pin or wrap the counters; at it: taken.
    ({"X-Tokens-In": "4294967295", "X-Tokens-Out": "4294967295"}, 0, 0),
    ({"X-Tokens-In": "1000001", "X-Tokens-Out": "4294967294"}, 0, 0),
    ({"X-Tokens-In": "1000000", "X-Tokens-Out": "999999"}, 1000000, 999999),
    ({"X-Tokens-In": " 12 ", "X-Tokens-Out": "1e3"}, 12, 0),
    ({"X-Tokens-In": "0x10", "X-Tokens-Out": "+5"}, 0, 0),
    ({"x-tokens-in": "3", "X-TOKENS-OUT": "4"}, 3, 4),
    ({"X-Tokens-In": "\xb9\xb2", "X-Tokens-Out": "5 5"}, 0, 0),
    ({"X-Tokens-Inx": "9", "X-Token-Out": "9"}, 0, 0),
    ({"X-Tokens-In": "1" * 300}, 0, 0),
]
OVER = [h for h, _, _ in TOKENS if any(v.isdigit() and int(v) > 1000000 for v in h.values())]
losses = over_losses = 0
for hdrs, tin, tout in TOKENS:
    bentoclaw.session_clear()
    rig.backend_control(token_headers=hdrs)
    try:
        r = bentoclaw.ask("tokens?")
        st = bentoclaw.status()
        ok = t.eq((st["tokens_in"], st["tokens_out"], st["exchanges"]), (tin, tout, 1), "token headers %r" % (hdrs,))
        ok = ok and t.check(r.startswith("Echo: tokens?"), "the reply is still good", r)
    except Exception as e:
        ok = t.check(False, "token headers %r: the ask() answered" % (hdrs,), repr(e))
    if hdrs in OVER:
        over_losses += 0 if ok else 1
    else:
        losses += 0 if ok else 1
# One hostile reply between good ones: the counts go on from where they
# were (not pinned at 4294967295, not wrapped).
bentoclaw.session_clear()
counts = []
for hdrs in ({"X-Tokens-In": "5", "X-Tokens-Out": "6"}, {"X-Tokens-In": "4294967295", "X-Tokens-Out": "4294967295"},
             {"X-Tokens-In": "5", "X-Tokens-Out": "6"}):
    rig.backend_control(token_headers=hdrs)
    bentoclaw.ask("tokens?")
    st = bentoclaw.status()
    counts.append((st["tokens_in"], st["tokens_out"]))
ok = t.eq(counts, [(5, 6), (5, 6), (10, 12)], "a reply reporting 4294967295 tokens is ignored, later counts add up")
over_losses += 0 if ok else 1
rig.backend_control(token_headers=None)
print("RELIABILITY: token headers malformed|%d|%d" % (len(TOKENS) - len(OVER), losses))
print("RELIABILITY: token counts past TOKENS_MAX (one reply must not pin or wrap them)|%d|%d"
      % (len(OVER) + 1, over_losses))

# --- by default: the seed's wire contract, compaction with the local digest ---------------------
# (Compaction before the ring would drop a turn is opt-in: compact_before_drop.)
fresh(compact_before_drop=True)
set_clock(T0 + 12 * 3600)
n0 = log_total()
for i in range(14):
    bentoclaw.ask("default config question %d" % i)
t.eq(log_total() - n0, 14, "14 asks, 14 requests: nothing but the seed's requests by default")
t.eq(summaries_sent(n0), [], "no summary request without config(backend_summary=True)")
t.check(all(set(r["body_json"]) == {"prompt", "context"} for r in rig.backend_log()["requests"][-14:]),
        "every body is {prompt, context}")
t.eq(roles()[0], "summary", "compacted with the local digest")
# The archive is opt-in (config(archive=True)): by default neither a
# compaction nor /new writes one.
t.eq(rig.read_file(ARCHIVE_FILE), None, "archive off by default: the compaction wrote no archive file")
bentoclaw.ask("/new")
t.eq(rig.read_file(ARCHIVE_FILE), None, "archive off by default: /new wrote no archive file")
t.eq(bentoclaw.archive(0), b"", "archive() reads nothing")

# --- compaction when the ring would drop a turn (backend summaries, opt-in) ----------------------
fresh(backend_summary=True, archive=True, compact_before_drop=True)
set_clock(T0 + 12 * 3600)
bentoclaw.ask("my favourite colour is teal")
for i in range(1, 5):
    bentoclaw.ask("filler question %d" % i)
t.eq(bentoclaw.status()["session_msgs"], 10, "5 exchanges: 10 turns, nothing dropped, no compaction yet")
t.eq(summaries_sent(0), [], "no summary request yet")
n0 = log_total()
bentoclaw.ask("filler question 5")
s = bentoclaw.session()
sums = summaries_sent(n0)
t.eq(len(sums), 1, "the 6th ask() sent one summary request first")
if sums:
    lines = sums[0]["body_json"]["summarize"]
    t.check(lines.startswith("user: my favourite colour is teal\nassistant: "), "the folded turns as role: text lines", lines)
    t.eq(sums[0]["body_json"].get("max_bytes"), 255, "max_bytes 255")
t.eq(roles(), ["summary", "user", "assistant", "user", "assistant", "user", "assistant"],
     "summary + the newest 4 turns + the new exchange")
t.check(s and "teal" in s[0][1], "the backend's summary holds the old fact", s[:1])
last = rig.backend_last()["body_json"]
t.check("summary: Earlier: my favourite colour is teal" in last["context"],
        "the exchange after the compaction carries the summary in its context", last["context"])
arch = archive_all()
t.check(b'{"role":"user","content":"my favourite colour is teal"}' in arch, "folded turns archived", arch[:200])
# Keep going: facts from the first turn still reach the model many asks later.
for i in range(6, 16):
    bentoclaw.ask("filler question %d" % i)
    t.check(bentoclaw.status()["session_msgs"] <= 10, "never more than 10 entries")
ctx = rig.backend_last()["body_json"]["context"]
t.check("teal" in ctx, "after 15 asks and several compactions the old fact is still in the context", ctx)
t.check(roles()[0] == "summary" and roles().count("summary") == 1, "one summary, at the head", roles())
nsum = len(summaries_sent(n0))
print("summary requests over 11 asks after the ring filled: %d" % nsum)

# The same with the backend unreachable for the summary: local digest.
fresh(backend_summary=True, compact_before_drop=True)
for i in range(5):
    bentoclaw.ask("remember the number %d" % (40 + i))
errors = bentoclaw.status()["error_count"]
rig.backend_mode("status500", count=1)
reply = bentoclaw.ask("after a failed summary")
t.check(reply.startswith("Echo: after a failed summary"), "the ask() itself still answered", reply)
st = bentoclaw.status()
t.eq(st["error_count"], errors + 1, "a failed summary request counts one error")
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "one failure does not open the breaker")
s = bentoclaw.session()
t.eq(s[0][0], "summary", "local digest at the head")
# The core's digest keeps the newest 255 bytes of "role: text" pieces (60
# bytes of each turn): the newest folded turns survive, the oldest may not.
t.check("user: remember the number 42" in s[0][1], "the local digest keeps the newest folded text", s[0][1])
t.check("summary: " in rig.backend_last()["body_json"]["context"], "and reaches the model")

# Hostile summary replies: whatever the backend answers, the folded turns are
# archived, the summary entry is valid UTF-8 of at most 255 bytes (the local
# digest when the answer is unusable), the ask() answers.
SUMMARIES = [
    ("empty", {"summary": ""}, "local"),
    ("NUL first", {"summary": "\x00hidden"}, "local"),
    ("NUL inside", {"summary": "before\x00after"}, "local"),  # one rule for NUL: unusable
    ("1000 bytes Thai", {"summary": "\u0e01" * 333}, "\u0e01" * 85),
    ("4096 bytes", {"summary": "s" * 4096}, "s" * 255),
    ("over REPLY_MAX", {"summary": "s" * 5000}, "local"),
    ("tool_call JSON", {"summary": '{"tool_call":{"name":"wipe_memory"}}'}, '{"tool_call":{"name":"wipe_memory"}}'),
    ("newlines and quotes", {"summary": 'a\n"b"\r\n\\c'}, 'a\n"b"\r\n\\c'),
    ("emoji cut", {"summary": "x" * 253 + "\U0001f600"}, "x" * 253),
    ("bad UTF-8", {"mode": "badutf8", "count": 1}, "local"),
    ("HTTP 404", {"mode": "status404", "count": 1}, "local"),
    ("truncated", {"mode": "truncated", "count": 1}, "local"),
    ("dropped", {"mode": "drop", "count": 1}, "local"),
    ("1 MiB", {"mode": "huge", "count": 1}, "local"),
    ("header flood", {"mode": "header_flood", "count": 1}, "local"),
]
losses = 0
for name, ctl, want in SUMMARIES:
    fresh(backend_summary=True, archive=True, compact_before_drop=True)
    set_clock(T0 + 12 * 3600)
    for i in range(5):
        bentoclaw.ask("%s fact %d" % (name, i))
    rig.backend_control(**ctl)
    try:
        r = bentoclaw.ask("after the summary")
        s = bentoclaw.session()
        head = s[0][1] if s else ""
        ok = t.eq(s[0][0] if s else None, "summary", "summary reply %s: a summary entry" % name)
        if want == "local":
            # (the digest keeps the newest 255 bytes of the folded turns)
            ok = ok and t.check(("user: %s fact 2" % name) in head, "summary reply %s: the local digest" % name, head)
        else:
            ok = ok and t.eq(head, want, "summary reply %s: the summary as stored" % name)
        ok = ok and t.check(len(head.encode()) <= 255, "at most 255 bytes")
        ok = ok and t.check(('"content":"%s fact 0"' % name).encode() in archive_all(), "summary reply %s: folded turns archived" % name)
        ok = ok and t.check(r.startswith("Echo: after the summary"), "summary reply %s: the ask() answered" % name, r)
    except Exception as e:
        ok = t.check(False, "summary reply %s: the ask() answered" % name, repr(e))
    losses += 0 if ok else 1
    rig.backend_control(summary=None)
print("RELIABILITY: summary replies hostile|%d|%d" % (len(SUMMARIES), losses))

# After a failed request the next compaction does not ask that backend for a
# summary (local digest, no extra request to a failing backend).
fresh(backend_summary=True, compact_before_drop=True)
for i in range(3):
    bentoclaw.ask("q%d" % i)
bentoclaw.tool("echo", "x")  # 7 turns
rig.backend_mode("status500", count=3)
t.raises(RuntimeError, bentoclaw.ask, "one", text=rig.REQUEST_TEXT)  # failure 1, 8 turns
t.raises(RuntimeError, bentoclaw.ask, "two", text=rig.REQUEST_TEXT)  # failure 2, 9 turns
t.eq(bentoclaw.safety()["circuit_breaker"], "closed", "two failures: still closed")
n0 = log_total()
t.raises(RuntimeError, bentoclaw.ask, "three", text=rig.REQUEST_TEXT)  # failure 3
t.eq(log_total() - n0, 1, "one request went out")
t.eq(summaries_sent(n0), [], "no summary request after a failed request")
t.eq(bentoclaw.safety()["circuit_breaker"], "open", "three failed asks open the breaker, as before")
s = bentoclaw.session()
t.eq(s[0][0], "summary", "compacted with the local digest")
t.check("user: q1" in s[0][1], "the digest holds the folded turns", s[0][1])
t.check(("user", "q2") in s, "a kept reply keeps its question (q2 not folded)", s)
t.eq(s[-1], ("user", "three"), "the failed ask's USER turn stays, as before")
t.eq(bentoclaw.status()["dirty"], False, "flushed")
rig.backend_reset()
bentoclaw.disconnect()
bentoclaw = rig.simulate_soft_reset(bentoclaw)  # a fresh breaker
t.eq(rig.connect(bentoclaw), True, "reconnect")
set_clock(T0 + 12 * 3600)

# --- the context threshold ------------------------------------------------------------------------
fresh(context_budget=1024, compact_threshold_pct=50, compact_keep=2, backend_summary=True)
long = "x" * 200
bentoclaw.ask("long one " + long)
bentoclaw.ask("long two " + long)
st = bentoclaw.status()
print("context bytes after two long asks:", st["context_bytes"])
t.check(st["context_bytes"] >= 512, "the context passed 50 % of 1024", st)
n0 = log_total()
rig.backend_control(summary="short summary")
bentoclaw.ask("short three")
t.eq(len(summaries_sent(n0)), 1, "threshold passed: compacted before the 3rd ask (ring not full)")
t.eq(roles()[0], "summary", "summary at the head")
t.check(bentoclaw.status()["context_bytes"] < st["context_bytes"], "the context shrank",
        bentoclaw.status()["context_bytes"])
t.check(len(rig.backend_last()["body_json"]["context"].encode()) <= 1023, "context_budget caps the context")
# compact_min_msgs: not below it.
fresh(context_budget=1024, compact_threshold_pct=1, compact_keep=0, compact_min_msgs=10, backend_summary=True)
bentoclaw.ask("a " + long)
n0 = log_total()
bentoclaw.ask("b " + long)
t.eq(summaries_sent(n0), [], "fewer turns than compact_min_msgs: no compaction")
# auto_compact=False: the ring drops turns as before.
fresh(auto_compact=False)
for i in range(7):
    bentoclaw.ask("plain %d" % i)
t.eq(bentoclaw.status()["session_msgs"], 10, "auto_compact off: the ring keeps the newest 10")
t.check("summary" not in roles(), "and no summary")
# The defaults (compact_before_drop off): a full ring drops its oldest turn
# as the seed's does; short turns stay under the threshold: no compaction.
fresh()
n0 = log_total()
for i in range(7):
    bentoclaw.ask("plain %d" % i)
t.eq(bentoclaw.status()["session_msgs"], 10, "defaults: the ring keeps the newest 10")
t.eq(roles().count("summary"), 0, "defaults: a full ring drops its oldest turn, no summary")
t.eq(bentoclaw.session()[0], ("user", "plain 2"), "defaults: the oldest turns were dropped")
t.eq(log_total() - n0, 7, "defaults: one request per ask()")

# --- /compact, /new, /reset ---------------------------------------------------------------------
fresh(backend_summary=True, archive=True)
for i in range(3):
    bentoclaw.ask("compact me %d" % i)
n0 = log_total()
r = bentoclaw.ask("/compact")
t.eq(r, "compacted 2 turns", "/compact folds all but compact_keep (4) turns")
t.eq(log_total() - n0, 1, "one request: the summary, no exchange")
t.eq(len(summaries_sent(n0)), 1, "which is a summary request")
t.eq(roles(), ["summary", "user", "assistant", "user", "assistant"], "summary + 4")
t.eq(bentoclaw.status()["dirty"], False, "flushed")
t.eq(bentoclaw.ask(" /compact\n"), "compacted 0 turns", "nothing more to fold (surrounding blanks ignored)")
t.eq(bentoclaw.ask("/compact"), "compacted 0 turns", "again")
bentoclaw.disconnect()
bentoclaw.config(compact_keep=0)
r = bentoclaw.ask("/compact")
t.eq(r, "compacted 5 turns (local digest)", "offline: /compact with the local digest")
t.eq(roles(), ["summary"], "only the summary left")
bentoclaw.config(compact_keep=4)
t.eq(rig.connect(bentoclaw), True, "reconnect")
arch_before = len(archive_all())
n0 = log_total()
t.eq(bentoclaw.ask("/new"), "new session", "/new")
t.eq(bentoclaw.status()["session_msgs"], 0, "the ring is empty")
t.eq(bentoclaw.status()["exchanges"], 0, "statistics reset")
t.eq(log_total(), n0, "/new sends nothing")
t.check(len(archive_all()) > arch_before, "the retired session went to the archive")
bentoclaw.ask("one more")
t.eq(bentoclaw.ask("/reset"), "new session", "/reset")
t.eq(bentoclaw.session(), [], "empty after /reset")
bentoclaw.ask("/Compact")  # not a command: sent to the backend
t.check(rig.backend_last()["body_json"]["prompt"] == "/Compact", "commands are exact (case-sensitive)")
bentoclaw.remember("pet", "Mali the cat")
bentoclaw.ask("/new")
t.eq(bentoclaw.recall("pet"), "Mali the cat", "memory survives /new")

# --- tool turns stay with their asker -------------------------------------------------------------
fresh(compact_keep=2, backend_summary=True)
rig.backend_mode("tools")
bentoclaw.ask("run echo a")
bentoclaw.ask("run echo b")
t.eq(roles(), ["user", "tool", "assistant", "user", "tool", "assistant"], "two tool exchanges")
bentoclaw.config(compact_keep=5)
t.eq(bentoclaw.ask("/compact"), "compacted 0 turns",
     "keep 5 would cut between 'run echo a' and its tool turn: nothing folded")
bentoclaw.config(compact_keep=2)
r = bentoclaw.ask("/compact")
t.eq(r, "compacted 3 turns", "keep 2 would start at a tool turn: its asker stays too")
s = bentoclaw.session()
t.eq([x[0] for x in s], ["summary", "user", "tool", "assistant"], "summary + the whole 'run echo b' exchange")
t.eq(s[1][1], "run echo b", "the asker kept")
tool_turns_have_askers("after /compact")
# In the middle of an ask(): the ring has no room for the TOOL turn.
fresh(compact_before_drop=True)
rig.backend_mode("tools")
for i in range(4):
    bentoclaw.ask("plain %d" % i)
t.eq(bentoclaw.status()["session_msgs"], 8, "8 turns")
n0 = log_total()
r = bentoclaw.ask("run echo mid")
t.check(r.startswith("Tool echo ok: mid"), "the tool exchange answered", r)
t.eq(summaries_sent(n0), [], "no summary request in the middle of an ask()")
s = bentoclaw.session()
t.eq(s[0][0], "summary", "local digest before the TOOL turn")
t.check(("user", "run echo mid") in s and s[s.index(("user", "run echo mid")) + 1] == ("tool", "echo: mid"),
        "the USER turn and its TOOL turn together", s)
tool_turns_have_askers("after a mid-ask compaction")
t.eq(len(s), 8, "summary + 5 kept (a reply keeps its question) + tool + reply")
rig.backend_mode("ok")

# --- idle timeout and daily reset (test clock) ----------------------------------------------------
if HAS_CLOCK:
    fresh(idle_timeout_s=60, daily_reset_hour=-1, archive=True)
    bentoclaw._clock(T0 + 10 * 3600)
    bentoclaw.ask("idle one")
    bentoclaw._clock(T0 + 10 * 3600 + 59)
    bentoclaw.ask("idle two")
    t.eq(bentoclaw.status()["exchanges"], 2, "59 s later: the same session")
    bentoclaw._clock(T0 + 10 * 3600 + 59 + 60)
    arch_before = archive_all()
    bentoclaw.ask("idle three")
    t.eq(bentoclaw.status()["exchanges"], 1, "60 s idle: a fresh session at the next ask()")
    t.eq([x[1] for x in bentoclaw.session()][0], "idle three", "only the new exchange in it")
    t.check(b"idle two" in archive_all()[len(arch_before):], "the old session archived")
# No RTC (before 2024): the idle timeout runs on the tick counter, moved by
# the test clock. Real time between two asks only adds to the idle time, and
# the 60 s timeout leaves it 10 s before "same session" could change.
if HAS_CLOCK:
    bentoclaw.config(idle_timeout_s=60)
    bentoclaw._clock(5)
    t.eq(bentoclaw._clock(), 0, "an RTC before 2024 reads as unset")
else:
    fresh(idle_timeout_s=60, daily_reset_hour=-1)
bentoclaw.ask("ticks one")
n = bentoclaw.status()["exchanges"]
rig.advance_clock(50000)
bentoclaw.ask("ticks two")
t.eq(bentoclaw.status()["exchanges"], n + 1, "50 s idle of a 60 s timeout: same session")
rig.advance_clock(60000)
bentoclaw.ask("ticks three")
t.eq(bentoclaw.status()["exchanges"], 1, "60 s idle without RTC: fresh session (tick counter)")
if HAS_CLOCK:
    # Daily reset at 04:00.
    fresh(idle_timeout_s=0, daily_reset_hour=4)
    bentoclaw._clock(T0 + 3 * 3600 + 59 * 60)  # 03:59
    bentoclaw.ask("before four")
    bentoclaw._clock(T0 + 3 * 3600 + 59 * 60 + 59)  # 03:59:59
    bentoclaw.ask("still before four")
    t.eq(bentoclaw.status()["exchanges"], 2, "before 04:00: same session")
    bentoclaw._clock(T0 + 4 * 3600)  # 04:00:00
    bentoclaw.ask("after four")
    t.eq(bentoclaw.status()["exchanges"], 1, "the first ask() from 04:00 starts a fresh session")
    bentoclaw._clock(T0 + DAY + 3 * 3600)  # next day 03:00
    bentoclaw.ask("next night")
    t.eq(bentoclaw.status()["exchanges"], 2, "next day 03:00: same session (reset point not passed)")
    bentoclaw._clock(T0 + 3 * DAY + 12 * 3600)  # days later, noon
    bentoclaw.ask("days later")
    t.eq(bentoclaw.status()["exchanges"], 1, "days later: fresh session")
    bentoclaw.config(daily_reset_hour=-1)
    bentoclaw._clock(T0 + 9 * DAY)
    bentoclaw.ask("reset off")
    t.eq(bentoclaw.status()["exchanges"], 2, "daily_reset_hour=-1: no reset")
    bentoclaw.config(daily_reset_hour=4)
    bentoclaw._clock(0)
    bentoclaw.ask("rtc unset")
    t.eq(bentoclaw.status()["exchanges"], 3, "RTC unset: no daily reset")
    t.eq(bentoclaw.status()["last_active"], T0 + 9 * DAY, "and last_active kept")
    bentoclaw._clock(None)

# --- the archive: readable, capped ----------------------------------------------------------------
fresh(daily_reset_hour=-1, archive=True)
for i in range(12):
    for j in range(3):
        bentoclaw.ask("archive round %02d turn %d %s" % (i, j, "y" * 150))
    bentoclaw.ask("/new")
arch = archive_all()
print("archive after 12 retired sessions: %d bytes (cap %d)" % (len(arch), bentoclaw.ARCHIVE_MAX))
t.check(len(arch) <= bentoclaw.ARCHIVE_MAX, "the archive stays under its cap", len(arch))
t.check(b"archive round 11 turn 2" in arch, "the newest retired turns are kept")
t.check(b"archive round 00 turn 0" not in arch, "the oldest were dropped")
bad = 0
for line in arch.split(b"\n"):
    if line:
        try:
            json.loads(line)
        except ValueError:
            bad += 1
t.eq(bad, 0, "the archive is JSON Lines")
t.eq(bentoclaw.archive(len(arch)), b"", "archive() at the end: b''")
t.eq(bentoclaw.archive(10, 5), arch[10:15], "archive(offset, n)")
t.raises(ValueError, bentoclaw.archive, -1, text="offset must be 0..1073741823")
t.raises(ValueError, bentoclaw.archive, 0, 0, text="n must be 1..%d" % bentoclaw.REPLY_MAX)
t.raises(TypeError, bentoclaw.archive, "0", text="offset must be int")
t.raises(TypeError, bentoclaw.archive, 0, 1.5, text="n must be int")
# The costs with the default config: no archive is written.
fresh()
arch_file = rig.read_file(ARCHIVE_FILE)
bdev.reset_counters()
for i in range(4):
    bentoclaw.ask("measure %d %s" % (i, "z" * 100))
w0, r0 = bdev.bytes_written, bdev.bytes_read
bentoclaw.ask("/compact")
print("COST /compact, 4 turns of ~110 B folded (backend summary), archive off: "
      "%d B programmed, %d B read" % (bdev.bytes_written - w0, bdev.bytes_read - r0))
w0, r0 = bdev.bytes_written, bdev.bytes_read
bentoclaw.ask("/new")
print("COST /new, summary + 4 turns retired, archive off: %d B programmed, %d B read"
      % (bdev.bytes_written - w0, bdev.bytes_read - r0))
t.eq(rig.read_file(ARCHIVE_FILE), arch_file, "archive off: /compact and /new left the archive file as it was")
w0, r0 = bdev.bytes_written, bdev.bytes_read
bentoclaw.ask("plain question")
print("COST ask() after /new (append with the statistics line): %d B programmed, %d B read"
      % (bdev.bytes_written - w0, bdev.bytes_read - r0))
w0 = bdev.bytes_written
bentoclaw.config(idle_timeout_s=5)
print("COST config() change: %d B programmed" % (bdev.bytes_written - w0))

bentoclaw.disconnect()
t.done()
