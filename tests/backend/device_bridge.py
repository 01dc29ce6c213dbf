# device_bridge.py — the real device (MicroPython unix port) asking through
# backend.py's model bridge. Run by tests/backend/test_bridge.py, which starts
# backend.py --openai-base-url <replay endpoint> (BENTOCLAW_PORT) and queues,
# in order: llama_server_text, llama_server_tool_call,
# llama_server_after_tool, summary_long; it then checks what reached the
# endpoint. Checked here: what the device got back.
import os
import sys

sys.path.append(os.getenv("BENTOCLAW_ROOT") + "/tests/mpy")
import claw_rig as rig  # noqa: E402 (before the remount: host files go away)
import bentoclaw  # noqa: E402

t = rig.Checker("device-bridge")
rig.mount_ram()
rig.classic_session(bentoclaw)
t.eq(rig.connect(bentoclaw), True, "connect")
t.eq(bentoclaw.remember("name", "Somchai"), True, "remember")

t.eq(bentoclaw.ask("what is my name?"), "Your name is Somchai.", "the model's answer")
t.eq(bentoclaw.ask("say hello with echo"), "The device echoed: hello from the model",
     "a tool round: the model asked for echo, the device ran it, the model answered")
s = bentoclaw.session()
t.eq(s[-3:], [("user", "say hello with echo"), ("tool", "echo: hello from the model"),
              ("assistant", "The device echoed: hello from the model")], "the turns of the tool round")
st = bentoclaw.status()
t.eq((st["tokens_in"], st["tokens_out"]), (118 + 402 + 447, 7 + 21 + 9),
     "the model's token counts reached the statistics")

# Backend-written summaries are opt-in (docs/BACKEND.md §4).
bentoclaw.config(compact_keep=3, backend_summary=True)
r = bentoclaw.ask("/compact")
t.check(r.startswith("compacted ") and "local digest" not in r, "/compact asked the backend", r)
summary = bentoclaw.session()[0]
want = ("The user is Somchai from Chiang Mai; his cat is called Mali (แมวชื่อมะลิ). "
        "He asked the device to echo a greeting and to switch the LED on; both worked. "
        "He prefers short answers in Thai (ตอบสั้น ๆ เป็นภา")  # 253 bytes: "ษ" would make 256
t.eq(summary, ("summary", want), "the model's summary, cut to 255 bytes, is the summary entry")
t.check(len(summary[1].encode()) <= 255, "at most 255 bytes")
t.done()
