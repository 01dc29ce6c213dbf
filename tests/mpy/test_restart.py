# test_restart.py — the session and the memory come back after restarting the
# interpreter: a second process mounts the same LittleFS image (a block device
# backed by a host file) and finds the ring and the memory where they were.
# needs: backend
import sys
import os
import claw_rig as rig

IMAGE = (os.getenv("TMPDIR") or "/tmp") + "/bentoclaw_restart_%s.img" % (os.getenv("BENTOCLAW_PORT") or "0")
child = len(sys.argv) > 1 and sys.argv[1] == "child"
script = sys.argv[0]

t = rig.Checker("restart-child" if child else "restart")
bdev = rig.FileBlockDev(IMAGE, blocks=256, create=not child)
rig.mount(bdev, mkfs=not child)
import bentoclaw

if not child:
    rig.classic_session(bentoclaw)  # the plain ring (the child reads it from flash)
    t.eq(rig.connect(bentoclaw), True, "connect")
    t.eq(bentoclaw.remember("name", "สมหญิง"), True, "remember a Thai name")
    for i in range(1, 7):
        bentoclaw.ask("before-restart-%02d" % i)
    t.eq(bentoclaw.status()["session_msgs"], 10, "ring full")
    t.eq(bentoclaw.status()["dirty"], False, "flushed at the idle point")
    ctx_before = rig.backend_last()["body_json"]["context"]
    # Stop here without disconnect() or flush(): a restart straight after
    # the last exchange.
    cmd = "%s %s child" % (rig.mpy_path(), script)
    print("restarting:", cmd)
    rc = os.system(cmd)
    t.eq(rc, 0, "the second interpreter's checks passed")
    # "/" is LittleFS now: remove the host image through the shell.
    os.system("rm -f %s" % IMAGE)
    t.done()
else:
    st = bentoclaw.status()
    t.eq(st["session_msgs"], 10, "the ring came back after the restart")
    t.eq(bentoclaw.recall("name"), "สมหญิง", "the memory came back")
    t.eq(bentoclaw.safety()["trust_level"], "usb", "a new process starts at USB trust")
    t.eq(st["connected"], False, "and not connected")
    t.eq(rig.connect(bentoclaw), True, "connect from the new process")
    bentoclaw.ask("after-restart")
    ctx = rig.backend_last()["body_json"]["context"]
    t.check("before-restart-06" in ctx, "the last turn before the restart is in the context", ctx)
    t.check("before-restart-01" not in ctx, "older turns stay dropped", ctx)
    t.check("สมหญิง" in ctx, "memory in the context after the restart", ctx)
    t.eq(bentoclaw.status()["session_msgs"], 10, "still the newest 10")
    bentoclaw.disconnect()
    t.done()
