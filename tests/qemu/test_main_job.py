# test_main_job.py — the demo's main path (mpy/examples/demo.py) on the
# emulated Cortex-M33, against mpy/examples/backend.py through the serial
# bridge, on the board's flash geometry: connect, a conversation with memory
# in the context and the backend's token counts, tool requests from the
# backend (its "tools" mode and queued tool_call replies), a high-risk
# request refused at HTTPS trust (TACP from the USB host, on the console,
# is tests/qemu/test_tacp_console.py), compaction with a summary
# request, disconnect; after a soft reset the session and memory are back
# from flash.
# needs: backend
# boards: m33
import json
import bentoclaw
import claw_rig as rig

t = Checker("main-job")
disk = mount_ramdisk()
print("LittleFS: %d blocks x %d B, options %r" % (disk.blocks, BLOCK_SIZE, LFS_OPTS))


def roles():
    return [r for r, _ in bentoclaw.session()]


# --- connect and a short conversation ---------------------------------------------------
t.eq(bentoclaw.connect("127.0.0.1", BACKEND_PORT, API_KEY), True, "connect through the serial bridge")
t.eq(bentoclaw.safety()["trust_level"], "https", "trust HTTPS while connected")
r = bentoclaw.ask("Hello bento, are you there?")
t.check(r.startswith("Echo: Hello bento, are you there?"), "first reply", r)
last = rig.backend_last()
t.eq(last["auth_ok"], True, "the backend saw the apikey header")
t.eq(last["headers"].get("Content-Type"), "application/json", "Content-Type")
st = bentoclaw.status()
body = last["body"].encode()
t.eq(st["bytes_in"], len(body), "bytes_in = the request body the backend got")
t.eq(st["tokens_in"], (len(body) + 3) // 4, "tokens_in from X-Tokens-In (through the bridge)")
t.eq(st["tokens_out"], (len(r.encode()) + 3) // 4, "tokens_out from X-Tokens-Out")
t.eq(bentoclaw.remember("name", "สมชาย"), True, "remember a Thai value")
r = bentoclaw.ask("What is my name?")
t.check("สมชาย" in r, "the backend answers from the memory in the context", r)

# --- tool requests from the backend ---------------------------------------------------------
rig.backend_mode("tools")
t.eq(bentoclaw.ask("run echo สวัสดีจาก bento"), "Tool echo ok: สวัสดีจาก bento",
     "the model's echo request ran at HTTPS trust")
t.eq(bentoclaw.ask("run wipe_memory"), "Tool wipe_memory refused: " + TRUST_TEXT,
     "the model's wipe_memory request refused for trust")
t.eq(bentoclaw.recall("name"), "สมชาย", "memory untouched by the refused tool")
rig.backend_mode("ok")
seen = []


def sensor(arg):
    seen.append(arg)
    return 21.5


bentoclaw.register_tool("sensor", sensor)
call = json.dumps({"tool_call": {"name": "sensor", "arg": "temp"}})
rig.backend_control(replies=[call, "It is 21.5 degrees"])
t.eq(bentoclaw.ask("how warm is it?"), "It is 21.5 degrees", "queued tool_call, then the final reply")
t.eq(seen, ["temp"], "the Python tool ran once with the model's argument")
seen.clear()
t.eq(rig.backend_last()["body_json"].get("tool_result"),
     {"name": "sensor", "status": "ok", "result": "21.5"}, "the follow-up POST carried the tool_result")
rig.backend_control(replies=None)

# Stack of the main path (stack painting, as tests/qemu/test_stack.py): an
# ask() whose reply is a tool request, the tool, the follow-up POST.
rig.backend_control(replies=[call, "still 21.5"])
base = board.stack_paint()
bentoclaw.ask("and now?")
used = board.stack_used() - base
print("stack ask() with a backend tool request: %d bytes" % used)
t.check(0 < used and base + used <= board.stack_limit(), "ask() with a tool round within the stack limit", base, used)
rig.backend_control(replies=None)

# (TACP from the USB host is on the console now: tests/qemu/test_tacp_console.py
# drives it from the host, as the IDE does.)
bentoclaw.remember("name", "gone")
t.eq(bentoclaw.tool("echo", "hi"), "hi", "a tool between the exchanges")
bentoclaw.disconnect()
t.eq(bentoclaw.tool("wipe_memory"), True, "wipe_memory at USB trust (offline)")
t.eq(rig.connect(bentoclaw), True, "connect again")

# --- compaction: the ring fills, a summary request folds the oldest turns -----------------------
# Both opt-in: compaction before the ring drops a turn, summaries written by
# the backend (docs/SESSIONS.md).
bentoclaw.config(compact_before_drop=True, backend_summary=True)
bentoclaw.remember("colour", "teal")
n0 = rig.backend_log()["total"]
disk.reset_counters()
for i in range(10):
    r = bentoclaw.ask("question %d about the garden" % i)
    t.check(r.startswith("Echo: question %d" % i), "reply %d" % i, r)
total = rig.backend_log()["total"]
reqs = rig.backend_log()["requests"][-(total - n0):]
sums = [q for q in reqs if "summarize" in (q.get("body_json") or {})]
print("10 asks: %d requests, %d summary requests; flash: %d bytes programmed, %d erases"
      % (total - n0, len(sums), disk.bytes_written, disk.erases))
t.check(len(sums) >= 1, "at least one summary request went to the backend", total - n0)
t.eq(roles()[0], "summary", "a summary at the head of the session")
t.check(bentoclaw.status()["session_msgs"] <= 10, "the ring stays bounded", bentoclaw.status()["session_msgs"])
ctx = rig.backend_last()["body_json"]["context"]
t.check("summary: " in ctx and "teal" in ctx, "the next context carries the summary and memory", ctx[:200])
st = bentoclaw.status()
t.eq(st["dirty"], False, "flushed at the idle point")
SESSION_AT_RESET = [x for x in bentoclaw.session()]

# --- disconnect -----------------------------------------------------------------------------------
bentoclaw.disconnect()
t.eq(bentoclaw.safety()["trust_level"], "usb", "disconnect: trust back to USB")
t.eq(bentoclaw.flush(), True, "flush the SYSTEM turn")
with open("/main_job_roles", "w") as f:
    f.write(json.dumps(SESSION_AT_RESET + [list(x) for x in bentoclaw.session()[-1:]]))
t.done(reset=True)

#== reset machine
import json
import bentoclaw

t = Checker("main-job-after-reset")
disk = mount_ramdisk(mkfs=False)
want = json.loads(read_file("/main_job_roles"))
got = [list(x) for x in bentoclaw.session()]
t.eq(got, [list(x) for x in want], "the session reloaded from flash after the soft reset")
t.eq(bentoclaw.recall("colour"), "teal", "memory reloaded")
t.eq(bentoclaw.recall("pet"), None, "the wipe is still in effect")
t.eq(bentoclaw.safety()["trust_level"], "usb", "a new VM rests at USB")
t.eq(bentoclaw.connect("127.0.0.1", BACKEND_PORT, API_KEY), True, "connect again")
r = bentoclaw.ask("what colour do I like?")
t.check(r.startswith("Echo:") or "teal" in r, "an ask in the new VM", r)
bentoclaw.disconnect()
t.done()
