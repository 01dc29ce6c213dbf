# test_vendor_tools.py — the vendor's tools that the binding runs in
# MicroPython (mpy/claw_tools.c), called on the emulated board through
# bentoclaw.tool() on LittleFS on the RAM disk: fs_stat, fs_write, fs_read,
# fs_list, fs_delete, heap_info, rtc_read, diagnostics_read, py_exec, with
# the exact JSON answers tests/mpy/test_vendor_api.py expects on the unix
# port; where the port decides a value (the heap's sizes, the clock, the
# uptime) its shape and range. At the resting USB trust, so the risk-2 ones
# (fs_write, fs_delete, py_exec) run; an answer with an "error" member is
# still the tool's success (as the vendor's): no error is counted.
import json
import time
import bentoclaw

t = Checker("vendor-tools")
mount_ramdisk()

t.eq(bentoclaw.safety()["trust_level"], "usb", "resting trust USB: risk-2 tools allowed")
risk = {x["name"]: x["risk"] for x in bentoclaw.tools()}
t.eq([risk.get(n) for n in ("fs_stat", "fs_write", "fs_read", "fs_list", "fs_delete", "heap_info", "rtc_read",
                            "diagnostics_read", "py_exec")],
     [0, 2, 0, 0, 2, 0, 0, 0, 2], "the tools are the board's, with the vendor's risks")


def tool_json(name, arg=None):
    r = bentoclaw.tool(name) if arg is None else bentoclaw.tool(name, arg)
    t.check(isinstance(r, str), "%s answers a str" % name, repr(r))
    return json.loads(r)


# --- files ---------------------------------------------------------------------------
d = tool_json("fs_stat", '{"path":"/"}')
t.eq((d["path"], d["exists"], d["is_dir"]), ("/", True, True), "fs_stat / (JSON argument)")
t.eq(json.loads(bentoclaw.tool("fs_stat", "/nope")), {"path": "/nope", "exists": False}, "fs_stat of no file")
t.eq(json.loads(bentoclaw.tool("fs_stat")), {"error": "no path given"}, "fs_stat without a path")
t.eq(bentoclaw.tool("fs_write", "/note.txt hello there"),
     '{"path":"/note.txt","bytes_written":11}', "fs_write '/path content'")
t.eq(read_file("/note.txt"), b"hello there", "fs_write: the file on LittleFS")
t.eq(bentoclaw.tool("fs_write", {"path": "/j.txt", "data": "a\"b\nc"}),
     '{"path":"/j.txt","bytes_written":5}', "fs_write with a dict (sent as JSON), escapes decoded")
t.eq(read_file("/j.txt"), b'a"b\nc', "fs_write: the decoded text on LittleFS")
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
t.eq(sorted(n for n in d["files"] if not n.startswith(".")), ["big.txt", "j.txt", "note.txt"],
     "fs_list /: the files written (and the library's own dot files)")
t.eq(sorted(d["files"]), sorted(os.listdir("/")), "fs_list / is os.listdir('/')")
t.eq(json.loads(bentoclaw.tool("fs_list", "/nowhere")), {"error": "listdir failed", "path": "/nowhere"},
     "fs_list of no directory")
t.eq(bentoclaw.tool("fs_delete", "/note.txt"), '{"path":"/note.txt","deleted":true}', "fs_delete")
t.eq(read_file("/note.txt"), None, "fs_delete: the file is gone from LittleFS")
t.eq(json.loads(bentoclaw.tool("fs_delete", "/note.txt")),
     {"path": "/note.txt", "deleted": False, "error": "not found or permission denied"}, "fs_delete of no file")
t.eq(bentoclaw.tool("fs_delete", "rel"), '{"error":"invalid path"}', "fs_delete of a relative path")

# --- the heap, the clock, the system (values the port's: their shape) -------------------
d = tool_json("heap_info")
print("heap_info:", d)
t.check(set(d) == {"gc_total", "gc_used", "gc_free", "gc_max_free", "gc_fragments", "uptime_ms", "tasks"}
        and d["gc_used"] + d["gc_free"] == d["gc_total"] and d["gc_max_free"] <= d["gc_free"], "heap_info", d)
t.check(256 * 1024 < d["gc_total"] <= 384 * 1024, "heap_info: the board's 384 KiB GC heap", d["gc_total"])
t.eq(d["gc_fragments"], d["gc_free"] - d["gc_max_free"], "heap_info: gc_fragments = free - max_free (bytes)")
t.check(abs(time.ticks_diff(d["uptime_ms"], time.ticks_ms())) < 1000, "heap_info: uptime_ms is the tick",
        d["uptime_ms"])
now = time.localtime()
d = tool_json("rtc_read")
print("rtc_read:", d)
t.eq(sorted(d), ["day", "hour", "min", "month", "sec", "weekday", "year"], "rtc_read's keys")
t.eq((d["year"], d["month"], d["day"], d["weekday"]), (now[0], now[1], now[2], now[6]),
     "rtc_read: the date of time.localtime(), MicroPython's weekday")
t.check(0 <= d["hour"] < 24 and 0 <= d["min"] < 60 and 0 <= d["sec"] < 60, "rtc_read: a time of day", d)
d = tool_json("diagnostics_read")
print("diagnostics_read:", d)
t.eq((sorted(d), d["transport"]), (["tasks", "transport", "uptime_ms"], "USB"), "diagnostics_read")
t.check(isinstance(d["tasks"], int) and d["tasks"] >= 1, "diagnostics_read: tasks", d["tasks"])
t.check(abs(time.ticks_diff(d["uptime_ms"], time.ticks_ms())) < 1000, "diagnostics_read: uptime_ms is the tick",
        d["uptime_ms"])

# --- Python code ----------------------------------------------------------------------------
t.eq(json.loads(bentoclaw.tool("py_exec", "x = 6 * 7")), {"status": "ok", "code_len": 9}, "py_exec")
d = json.loads(bentoclaw.tool("py_exec", '{"code":"1/0"}'))
t.eq((d["status"], "ZeroDivisionError" in d["exception"]), ("error", True), "py_exec of code that raises")
t.eq(bentoclaw.tool("py_exec"), '{"error":"no code given"}', "py_exec without code")
code = "f = open('/py.txt', 'w'); f.write('from py_exec'); f.close()"
t.eq(json.loads(bentoclaw.tool("py_exec", code)), {"status": "ok", "code_len": len(code)}, "py_exec writing a file")
t.eq(read_file("/py.txt"), b"from py_exec", "py_exec's code ran on the board")

# --- the accounting: answers with "error" are the tools' successes --------------------------
st, sf = bentoclaw.status(), bentoclaw.safety()
t.eq((st["error_count"], st["last_result"], sf["circuit_breaker"]), (0, "tool ok", "closed"),
     "no error counted, last_result 'tool ok', breaker closed")
t.done()
