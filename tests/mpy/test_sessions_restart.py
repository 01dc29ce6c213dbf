# test_sessions_restart.py — what sessions that last keep across a restart
# (a second interpreter on the same LittleFS image, as test_restart.py): the
# config, the accounting, the summary at the head of the ring, the archive,
# and the last-active time, so that an idle timeout and the daily reset
# still fire after a reboot; session_clear() resets the accounting for good.
# needs: backend
import sys
import os
import claw_rig as rig

IMAGE = (os.getenv("TMPDIR") or "/tmp") + "/bentoclaw_sessions_restart_%s.img" % (os.getenv("BENTOCLAW_PORT") or "0")
step = sys.argv[1] if len(sys.argv) > 1 else "parent"
script = sys.argv[0]
T0 = 1767225600  # 2026-01-01 00:00:00

t = rig.Checker("sessions-restart-" + step)
bdev = rig.FileBlockDev(IMAGE, blocks=256, create=step == "parent")
rig.mount(bdev, mkfs=step == "parent")
import bentoclaw

STATS = ("bytes_in", "bytes_out", "tokens_in", "tokens_out", "context_bytes", "exchanges", "last_active")
# (archive and compact_before_drop: opt-in; on here, so the ring compacts
# when full and the compacted and retired turns go to the archive.)
CFG = {"compact_keep": 3, "idle_timeout_s": 3600, "daily_reset_hour": 5, "context_budget": 3000,
       "backend_summary": True, "archive": True, "compact_before_drop": True}


def stats():
    st = bentoclaw.status()
    return [st[k] for k in STATS]


def archive_all():
    out = b""
    while True:
        chunk = bentoclaw.archive(len(out))
        if not chunk:
            return out
        out += chunk


def child(name):
    rc = os.system("%s %s %s" % (rig.mpy_path(), script, name))
    t.eq(rc, 0, "the %s interpreter's checks passed" % name)


def save(obj):
    with open("/state.txt", "w") as f:
        f.write(repr(obj))


def load():
    with open("/state.txt") as f:
        return eval(f.read())


if step == "parent":
    bentoclaw.config(**CFG)
    t.eq(rig.connect(bentoclaw), True, "connect")
    bentoclaw.ask("/new")
    bentoclaw._clock(T0 + 6 * 3600)  # 06:00
    bentoclaw.ask("the gate code is 4711")
    for i in range(5):
        bentoclaw.ask("question %d" % i)
    s = bentoclaw.session()
    t.eq(s[0][0], "summary", "compacted (ring full)")
    t.check("4711" in s[0][1], "the summary holds the old fact", s[0][1])
    st = stats()
    t.check(st[0] > 0 and st[2] > 0 and st[5] == 7, "bytes, tokens, 6 exchanges + 1 summary", st)
    t.eq(st[6], T0 + 6 * 3600, "last_active")
    t.eq(bentoclaw.status()["dirty"], False, "flushed")
    save({"stats": st, "session": s, "archive": archive_all()})
    child("child")           # reads everything back; ask()s at 06:30 (no reset)
    child("child_idle")      # 2 h later: the idle timeout fires
    child("child_clear")     # session_clear(), then restart again
    child("child_cleared")
    os.system("rm -f %s" % IMAGE)
    t.done()

saved = load()
if step == "child":
    t.eq({k: bentoclaw.config()[k] for k in CFG}, CFG, "config read back from flash after the restart")
    t.eq(stats(), saved["stats"], "the accounting came back with the session")
    t.eq(bentoclaw.session(), saved["session"], "the ring with its summary came back")
    t.eq(archive_all(), saved["archive"], "the archive came back")
    t.eq(rig.connect(bentoclaw), True, "connect")
    bentoclaw._clock(T0 + 6 * 3600 + 1800)  # 06:30, 30 min idle
    bentoclaw.ask("what was the gate code?")
    ctx = rig.backend_last()["body_json"]["context"]
    t.check("4711" in ctx, "the summary reaches the model after the restart", ctx)
    st = stats()
    t.eq(st[5], saved["stats"][5] + 1, "same session: exchanges go on")
    t.check(st[0] > saved["stats"][0], "bytes go on")
    save(dict(saved, stats=st))
    bentoclaw.disconnect()
elif step == "child_idle":
    t.eq(stats(), saved["stats"], "statistics persisted again")
    t.eq(rig.connect(bentoclaw), True, "connect")
    bentoclaw._clock(T0 + 6 * 3600 + 1800 + 7200)  # 08:30: 2 h idle > 3600 s
    bentoclaw.ask("good morning")
    st = stats()
    t.eq(st[5], 1, "idle timeout after the restart: a fresh session (last_active came from flash)")
    t.eq([r for r, _ in bentoclaw.session()], ["user", "assistant"], "only the new exchange")
    t.check(b"what was the gate code?" in archive_all(), "the old session archived")
    save(dict(saved, stats=st))
    bentoclaw.disconnect()
elif step == "child_clear":
    t.eq(stats(), saved["stats"], "statistics of the fresh session persisted")
    bentoclaw.session_clear()
    t.eq(stats(), [0] * 7, "session_clear() resets the accounting")
elif step == "child_cleared":
    t.eq(stats(), [0] * 7, "still zero after a restart")
    t.eq(bentoclaw.session(), [], "and the ring empty")
t.done()
