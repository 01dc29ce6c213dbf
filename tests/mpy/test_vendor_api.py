# test_vendor_api.py — the module as BENTO users know it (the vendor's
# modbentoclaw.c, VENDOR-SDK.md §1.3): its 11 functions with their arguments,
# return shapes, dict keys and exception texts; the vendor's tool registry as
# the board's default; the UI messages with the vendor's CLAW_UI_* numbers at
# the vendor's moments; the wire (POST /ai/v1/chat with an apikey header).
# needs: backend
# needs: clock
# targets: unix
import claw_rig as rig
import bentoclaw

t = rig.Checker("vendor-api")
rig.mount_ram()

VENDOR = ("tools", "execute", "status", "version", "connect", "ask", "disconnect", "remember", "history",
          "session_clear", "safety")
for n in VENDOR:
    t.check(callable(getattr(bentoclaw, n, None)), "the vendor's %s() is there" % n)

# --- version() ---------------------------------------------------------------------
t.eq(bentoclaw.version(), "1.11.0", "version(): the vendor API level (BENTOCLAW_VERSION)")

# --- tools(): the vendor's registry, its dicts -----------------------------------------
tools = bentoclaw.tools()
t.check(all(isinstance(x, dict) for x in tools), "tools() returns dicts")
t.check(all(list(x)[:0] == [] and {"name", "description", "risk", "confirm"} <= set(x) for x in tools),
        "each has the vendor's keys name, description, risk, confirm")
by = {x["name"]: x for x in tools}
# The vendor's tools MicroPython can do on any port (mpy/claw_tools.c), with
# the vendor's descriptions, risks and confirm flags (s_tools[]).
VENDOR_TOOLS = {
    "ui_notify": ("Show notification on screen", 1, False, 10),
    "trustm_sign": ("ECDSA sign with Trust M", 2, True, 2),
    "rule_set": ("Create automation rule", 2, True, 5),
    "rule_clear": ("Clear automation rules", 2, True, 2),
    "diagnostics_read": ("Read system diagnostics", 0, False, 10),
    "rtc_read": ("Read current date/time", 0, False, 60),
    "heap_info": ("Read heap memory usage", 0, False, 10),
    "fs_list": ("List files in directory", 0, False, 10),
    "fs_stat": ("Check file exists + size", 0, False, 30),
    "fs_read": ("Read text file content", 0, False, 10),
    "py_exec": ("Execute MicroPython code", 2, True, 5),
    "rtc_set": ("Set RTC date/time", 2, True, 5),
    "fs_write": ("Write text file to flash", 2, True, 5),
    "fs_delete": ("Delete file from flash", 2, True, 5),
    "trustm_random": ("Hardware RNG (OPTIGA TRNG)", 0, False, 10),
    "trustm_sha256": ("SHA-256 hash (OPTIGA HW)", 0, False, 10),
}
for name, (desc, risk, confirm, rate) in VENDOR_TOOLS.items():
    x = by.get(name)
    t.eq(None if x is None else (x["description"], x["risk"], x["confirm"], x["rate_per_min"], x["builtin"]),
         (desc, risk, confirm, rate, True), "%s as the vendor's registry has it" % name)
# The hardware tools come from the firmware: none on the unix port.
for name in ("gpio_set", "gpio_read", "sensor_read_all", "lcd_console", "wifi_status", "wifi_scan",
             "joystick_read", "trustm_info", "hard_reset", "safe_boot", "radar_read"):
    t.check(name not in by, "%s is the firmware's: not on the unix port" % name)
order = [x["name"] for x in tools]
vendor_order = [n for n in ("ui_notify", "trustm_sign", "rule_set", "rule_clear", "diagnostics_read",
                            "rtc_read", "heap_info", "fs_list", "fs_stat", "fs_read", "py_exec", "rtc_set",
                            "fs_write", "fs_delete", "trustm_random", "trustm_sha256")]
t.eq(order[:len(vendor_order)], vendor_order, "in the vendor's order")
t.eq(order[len(vendor_order):], ["echo", "uptime", "led", "wipe_memory"], "then the library's own")
t.eq(bentoclaw.status()["tool_count"], len(tools), "status()['tool_count'] counts them")

# --- status() and safety(): the vendor's keys ------------------------------------------
st = bentoclaw.status()
for k in ("state", "exec_count", "error_count", "tool_count", "last_cmd", "last_result", "session_msgs",
          "connected"):
    t.check(k in st, "status() has the vendor's %r" % k)
t.eq((st["state"], st["exec_count"], st["error_count"], st["last_cmd"], st["connected"]),
     ("idle", 0, 0, "", False), "status() at start")
sf = bentoclaw.safety()
t.eq(sorted(k for k in sf if k in ("circuit_breaker", "cooldown_ms", "trust_level", "connected")),
     ["circuit_breaker", "connected", "cooldown_ms", "trust_level"], "safety() has the vendor's keys")
t.eq((sf["circuit_breaker"], sf["cooldown_ms"], sf["trust_level"], sf["connected"]), ("closed", 0, "usb", False),
     "safety() at start")

# --- execute(name, params): gates, recorded, not run ------------------------------------
bentoclaw.session_clear()
bentoclaw._ui_events()
ran = []
bentoclaw.register_tool("probe", lambda a: ran.append(a) or "ran", 0, 2, "A probe", False)
r = bentoclaw.execute("probe", {"anything": 1})
t.eq(r, {"tool": "probe", "status": "ready", "risk": 0, "confirm": False}, "execute() answers the vendor's dict")
t.eq(ran, [], "execute() does not run the tool")
st = bentoclaw.status()
t.eq((st["exec_count"], st["last_cmd"], st["last_result"]), (1, "probe", "dispatched"),
     "counted, the last command, 'dispatched'")
t.eq(bentoclaw.session()[-1], ("tool", "execute: probe"), "the TOOL turn 'execute: probe'")
t.eq(bentoclaw._ui_events(), [("last_cmd", "probe"), ("last_result", "dispatched")],
     "UI LAST_CMD then LAST_RESULT")
t.eq(bentoclaw.execute("py_exec", None), {"tool": "py_exec", "status": "ready", "risk": 2, "confirm": True},
     "a vendor tool's risk and confirm flag")
t.raises(ValueError, bentoclaw.execute, "nope", None, text="unknown tool", what="unknown: ValueError")
t.raises(ValueError, bentoclaw.execute, "x" * 40, None, text="unknown tool", what="an over-long name is unknown too")
t.raises(TypeError, bentoclaw.execute, 5, None, text="name must be str")
t.eq(bentoclaw.status()["error_count"], 0, "an unknown tool counts no error")
# The rate gate (2/min): the third is refused and counts an error.
bentoclaw.execute("probe", None)
t.raises(RuntimeError, bentoclaw.execute, "probe", None, text=rig.RATE_TEXT, what="probe's third call refused")
t.eq(bentoclaw.status()["error_count"], 1, "a refusal counts one error")
t.eq(bentoclaw.status()["exec_count"], 3, "a refusal is not counted as run")
# Trust: high risk refused while connected (HTTPS).
t.eq(rig.connect(bentoclaw), True, "connect")
t.eq(bentoclaw.safety()["trust_level"], "https", "connected: trust_level https")
t.eq(bentoclaw.safety()["connected"], True, "safety()['connected']")
# The extension keys of before, kept: the same values as the vendor's keys
# (the other tests read the vendor's).
sf, st = bentoclaw.safety(), bentoclaw.status()
t.eq((sf["trust"], sf["errors"], st["errors"]), (sf["trust_level"], st["error_count"], st["error_count"]),
     "extension keys safety()['trust'], ['errors'] and status()['errors'] equal trust_level and error_count")
t.eq((sf["trust"], sf["errors"]), ("https", 1), "... with values that tell them apart from the defaults")
t.raises(RuntimeError, bentoclaw.execute, "py_exec", None, text=rig.TRUST_TEXT, what="risk 2 over HTTPS refused")

# --- ask(): the vendor's texts and UI moments -------------------------------------------
bentoclaw._ui_events()
reply = bentoclaw.ask("hello")
t.check(isinstance(reply, str) and reply, "ask() returns the reply str", reply)
last = rig.backend_last()
t.eq(last["path"], "/ai/v1/chat", "POST /ai/v1/chat")
t.eq(last["headers"].get("apikey"), rig.API_KEY, "the key as an apikey header (APISIX key-auth)")
t.check("Authorization" not in last["headers"], "no Authorization header")
t.eq(sorted(last["body_json"]), ["context", "prompt"], "body {prompt, context}")
ev = bentoclaw._ui_events()
vendor_ev = [e for e in ev if e[0] in ("status", "last_cmd", "last_result", "progress", "error", "clear", "stats")]
t.eq(vendor_ev, [("status", "Thinking..."), ("last_cmd", "hello"),
                 ("last_result", "ok (%d bytes)" % len(reply.encode())), ("status", "Online (HTTPS)")],
     "ask(): STATUS Thinking..., LAST_CMD, LAST_RESULT ok (N bytes), STATUS Online (HTTPS)")
t.eq([e for e in ev if e[0] not in [v[0] for v in vendor_ev]], [("user", "hello"), ("assistant", reply)],
     "and the library's own events (numbers >= 7)")
t.eq(bentoclaw.status()["last_result"], "ok (%d bytes)" % len(reply.encode()), "last_result ok (N bytes)")
rig.backend_mode("status500", 1)
bentoclaw._ui_events()
t.raises(RuntimeError, bentoclaw.ask, "fails", text=rig.REQUEST_TEXT, what="a failed request")
ev = bentoclaw._ui_events()
t.check(("error", "Backend error") in ev and ("last_result", "error") in ev, "UI ERROR Backend error", ev)
st = bentoclaw.status()
t.eq((st["state"], st["last_result"]), ("error", "error"), "status() after a failed ask: state error")
bentoclaw.disconnect()
t.raises(RuntimeError, bentoclaw.ask, "offline", text="not connected \u2014 call bentoclaw.connect() first",
         what="the vendor's offline text")

# --- history(): a str, the context -------------------------------------------------------
h = bentoclaw.history()
t.check(isinstance(h, str), "history() returns a str")
t.check("hello" in h and "Disconnected from backend" in h, "history() is the context text", h[-200:])
bentoclaw.remember("name", "Mali")
t.check("name" in bentoclaw.history() and "Mali" in bentoclaw.history(), "the memory is in history()")

# --- the states' names -------------------------------------------------------------------
t.eq(bentoclaw.status()["state"], "error", "the failed ask's state stays until the next call changes it")
bentoclaw.execute("echo", None)
t.eq(bentoclaw.status()["state"], "idle", "execute() leaves it idle (the vendor's)")

# --- session_clear(): UI CLEAR -------------------------------------------------------------
bentoclaw._ui_events()
bentoclaw.session_clear()
t.eq(bentoclaw._ui_events(), [("clear", "")], "session_clear(): UI CLEAR")
t.eq(bentoclaw.status()["session_msgs"], 0, "ring empty")

# --- remember(): the vendor's bool -----------------------------------------------------------
t.eq(bentoclaw.remember("k", "v"), True, "remember() -> True")

# --- the vendor's tools on the unix port: their answers -------------------------------------
import json  # noqa: E402

d = json.loads(bentoclaw.tool("fs_stat", '{"path":"/"}'))
t.eq((d["path"], d["exists"], d["is_dir"]), ("/", True, True), "fs_stat / (JSON argument)")
t.eq(json.loads(bentoclaw.tool("fs_stat", "/nope")), {"path": "/nope", "exists": False}, "fs_stat of no file")
t.eq(json.loads(bentoclaw.tool("fs_stat")), {"error": "no path given"}, "fs_stat without a path")
t.eq(bentoclaw.tool("fs_write", "/note.txt hello there"),
     '{"path":"/note.txt","bytes_written":11}', "fs_write '/path content'")
t.eq(bentoclaw.tool("fs_write", {"path": "/j.txt", "data": "a\"b\nc"}),
     '{"path":"/j.txt","bytes_written":5}', "fs_write with a dict (sent as JSON), escapes decoded")
t.eq(json.loads(bentoclaw.tool("fs_read", "/j.txt")), {"path": "/j.txt", "size": 5, "content": "a\"b\nc"},
     "fs_read: content escaped in the answer")
t.eq(json.loads(bentoclaw.tool("fs_read", "/none")), {"error": "cannot read file", "path": "/none"},
     "fs_read of no file")
big = "x" * 600
with open("/big.txt", "w") as f:
    f.write(big)
d = json.loads(bentoclaw.tool("fs_read", "/big.txt"))
t.eq((d["size"], d["content"]), (512, big[:512]), "fs_read: the first 512 bytes")
d = json.loads(bentoclaw.tool("fs_list", "/"))
t.check(d["path"] == "/" and "note.txt" in d["files"] and d["count"] == len(d["files"]), "fs_list /", d)
t.eq(json.loads(bentoclaw.tool("fs_list", "/nowhere")), {"error": "listdir failed", "path": "/nowhere"},
     "fs_list of no directory")
t.eq(bentoclaw.tool("fs_delete", "/note.txt"), '{"path":"/note.txt","deleted":true}', "fs_delete")
t.eq(json.loads(bentoclaw.tool("fs_delete", "/note.txt")),
     {"path": "/note.txt", "deleted": False, "error": "not found or permission denied"}, "fs_delete of no file")
t.eq(bentoclaw.tool("fs_delete", "rel"), '{"error":"invalid path"}', "fs_delete of a relative path")
d = json.loads(bentoclaw.tool("heap_info"))
t.check(set(d) == {"gc_total", "gc_used", "gc_free", "gc_max_free", "gc_fragments", "uptime_ms", "tasks"}
        and d["gc_used"] + d["gc_free"] == d["gc_total"] and d["gc_max_free"] <= d["gc_free"], "heap_info", d)
d = json.loads(bentoclaw.tool("rtc_read"))
t.eq(sorted(d), ["day", "hour", "min", "month", "sec", "weekday", "year"], "rtc_read's keys")
d = json.loads(bentoclaw.tool("diagnostics_read"))
t.eq((sorted(d), d["transport"]), (["tasks", "transport", "uptime_ms"], "USB"), "diagnostics_read")
d = json.loads(bentoclaw.tool("trustm_random", '{"length":16}'))
t.check(d["bytes"] == 16 and len(d["hex"]) == 32, "trustm_random 16 bytes", d)
t.eq(bentoclaw.tool("trustm_random", "4"), '{"error":"len must be 8-256"}', "trustm_random's range")
t.eq(json.loads(bentoclaw.tool("trustm_sha256", "abc"))["hash"],
     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "trustm_sha256 of abc")
t.eq(bentoclaw.tool("trustm_sha256"), '{"error":"no data to hash"}', "trustm_sha256 without data")
d = json.loads(bentoclaw.tool("trustm_sign", '{"data":"abc"}'))
t.eq((d["digest"][:8], d["note"]), ("ba7816bf", "OPTIGA ECDSA pending \u2014 digest only"), "trustm_sign")
t.eq(json.loads(bentoclaw.tool("py_exec", "x = 6 * 7")), {"status": "ok", "code_len": 9}, "py_exec")
d = json.loads(bentoclaw.tool("py_exec", '{"code":"1/0"}'))
t.eq((d["status"], "ZeroDivisionError" in d["exception"]), ("error", True), "py_exec of code that raises")
t.eq(bentoclaw.tool("py_exec"), '{"error":"no code given"}', "py_exec without code")
rig.advance_clock(70000)  # the tools' per-minute limits start afresh
for i in range(3):
    d = json.loads(bentoclaw.tool("rule_set", '{"trigger":"t%d","action":"led1_on"}' % i))
    t.eq(d, {"status": "ok", "slot": i, "trigger": "t%d" % i, "action": "led1_on"}, "rule_set #%d" % i)
t.eq(json.loads(bentoclaw.tool("rule_set", '{"trigger":"t1","action":"notify"}'))["slot"], 1,
     "the same trigger replaces its rule")
bentoclaw.tool("rule_set", '{"trigger":"t3","action":"x"}')
rig.advance_clock(70000)
t.eq(bentoclaw.tool("rule_set", '{"trigger":"t4","action":"x"}'), '{"error":"max 4 rules","max":4}',
     "at most 4 rules")
t.eq(bentoclaw.tool("rule_clear"), '{"status":"cleared","rules_removed":4}', "rule_clear")
t.eq(bentoclaw.tool("ui_notify", "hi there"), '{"status":"notified"}', "ui_notify")
t.check(("progress", "hi there") in bentoclaw._ui_events(), "ui_notify: UI PROGRESS")
t.eq(json.loads(bentoclaw.tool("rtc_set", "1999 01 01 00 00 00")), {"error": "date/time out of range"},
     "rtc_set's range")
t.eq(json.loads(bentoclaw.tool("rtc_set", "bad")), {"error": "format: YYYY MM DD HH MM SS"}, "rtc_set's format")

# --- a tool called from the REPL: our texts on the vendor's UI numbers ---------------------
bentoclaw.register_tool("div", lambda a: 1 // int(a), 0, 10, "Divide", False)
bentoclaw._ui_events()
t.eq(bentoclaw.tool("div", "1"), 1, "a REPL tool call")
t.eq([e for e in bentoclaw._ui_events() if e[0] in ("error", "last_result")], [("last_result", "tool ok")],
     "a REPL tool's success: UI LAST_RESULT 'tool ok'")
t.raises(ZeroDivisionError, bentoclaw.tool, "div", "0")
t.eq([e for e in bentoclaw._ui_events() if e[0] in ("error", "last_result")],
     [("error", "Tool error"), ("last_result", "tool error")],
     "a REPL tool's failure: UI ERROR 'Tool error', LAST_RESULT 'tool error'")

# --- register_tool(): description and confirm --------------------------------------------
bentoclaw.register_tool("valve", lambda a: "opened", 1, 3, "Open the valve", True)
v = [x for x in bentoclaw.tools() if x["name"] == "valve"][0]
t.eq((v["description"], v["risk"], v["confirm"], v["rate_per_min"], v["builtin"]),
     ("Open the valve", 1, True, 3, False), "a Python tool's description and confirm flag")
t.raises(ValueError, bentoclaw.register_tool, "v2", print, 0, 0, "d" * 128,
         text="description must be 0..127 bytes")
# A Python tool may take a vendor name the board has no handler for, with
# that tool's risk, flag and limit.
bentoclaw.register_tool("gpio_set", lambda a: "set " + a, 0, 99, "mine", False)
g = [x for x in bentoclaw.tools() if x["name"] == "gpio_set"][0]
t.eq((g["description"], g["risk"], g["rate_per_min"]), ("Set LED on/off", 1, 30),
     "a vendor name keeps the vendor's description, risk and limit")
t.eq(bentoclaw.tool("gpio_set", "led1 on"), "set led1 on", "and runs the Python handler")
t.raises(ValueError, bentoclaw.register_tool, "fs_read", print, text="cannot replace a built-in tool",
         what="the board's own tools are not replaced")
t.done()
