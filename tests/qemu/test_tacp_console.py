# test_tacp_console.py — TACP v2 on the emulated M33's console UART, with a
# host-side client standing in for the BENTO AI IDE (tests/qemu/tacp_client.py;
# docs/TACP.md, docs/EMULATOR.md). The REPL and TACP share UART0, as on the
# board:
#  * READY comes once, at start-up, before the banner;
#  * the REPL works before, between and around frames (a frame in the middle
#    of a typed line);
#  * every sub-command over the wire, with the vendor's answers, its seq
#    echoed; CONNECT to the backend through the serial bridge, EXEC of a
#    risk-2 tool at USB trust while connected, ASK online and offline;
#  * frames split in pieces with pauses; a bad CRC and a length over 3072
#    unanswered, the next frame answered;
#  * CONNECT (the IDE's ping): no answer, no effect; TERMINATE interrupts a
#    running REPL command (KeyboardInterrupt) and an EXEC's running tool
#    (answered "interrupted"), and the REPL goes on.
# runs: host
# needs: backend
# boards: m33
# timeout: 150
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tacp_client as tc  # noqa: E402

EXEC, ASK, STATUS, TOOLS, HISTORY, REMEMBER, CLEAR, CONNECT, DISCONNECT = range(1, 10)
SAFETY, RECALL, ERR = 0x40, 0x41, 0xFF


def run(ctx):
    b, t, dl = ctx.board, ctx.t, ctx.deadline
    c = tc.Client(b)

    # --- READY, before the banner --------------------------------------------------
    banner = b.read_until(b">>> ", dl)
    frames, text = tc.parse(banner)
    t.eq([(f[0], f[1]) for f in frames], [(0, 0)], "one READY frame (sub 0, seq 0) at start-up")
    ready = json.loads(frames[0][2]) if frames else {}
    t.eq(sorted(ready), ["board", "fw", "proto", "tools"], "READY's keys")
    t.eq((ready.get("board"), ready.get("proto")), ("mps2-an505", 2), "READY: the board, proto 2")
    t.check(frames and frames[0][2].startswith(b'{"fw":"') and banner.index(tc.MAGIC) < banner.index(b"MicroPython"),
            "READY before the banner, the vendor's member order", banner[:120])
    tools = ready.get("tools")

    # --- the REPL, around a frame in the middle of a line ----------------------------
    b.write(b"print(6*7)\r\n")
    b.read_until(b"42\r\n>>> ", dl)
    t.check(True, "the REPL answers after READY")
    c.send(b"print(1" + tc.frame(STATUS, b"", 3) + b"+1)\r\n")
    sub, p = c.wait(3)
    t.eq((sub, json.loads(p)["connected"]), (STATUS, False), "a frame inside a typed line is answered")
    out = b.read_until(b">>> ", dl)
    t.check(b"print(1+1)\r\n2\r\n" in out, "and the line around it reaches the REPL whole", out)

    # --- the raw REPL, with the RAM disk mounted (as the other tests) ------------------
    b.write(b"\r\x03\x03\x01")
    b.read_until(b"raw REPL; CTRL-B to exit\r\n>", dl)
    _, err, _ = b.exec_raw(ctx.pre + "\ndisk = mount_ramdisk()\n", dl)
    t.eq(err, b"", "the RAM disk mounted")

    # --- every sub-command ---------------------------------------------------------------
    t.eq(c.request(STATUS, seq=10), (STATUS, b'{"state":"idle","exec":0,"err":0,"tools":%d,"session":0,"connected":false}' % tools),
         "STATUS")
    sub, p = c.request(TOOLS, seq=11)
    names = [d["name"] for d in json.loads(p)] if sub == TOOLS else []
    t.eq(len(names), tools, "TOOLS lists every tool")
    t.check("echo" in names and "gpio_set" in names, "TOOLS: the built-ins and the board's hardware tool", names)
    t.check(p.startswith(b'[{"name":"') and b'"desc":"' in p, "TOOLS: the vendor's keys", p[:60])
    t.eq(c.request(EXEC, "echo hi there", seq=12), (EXEC, b"hi there"), "EXEC echo")
    t.eq(c.request(EXEC, "nope", seq=13), (ERR, b"unknown tool"), "EXEC of an unknown tool")
    t.eq(c.request(REMEMBER, "name=\u0e2a\u0e21\u0e0a\u0e32\u0e22", seq=14), (REMEMBER, b"ok"), "REMEMBER (Thai)")
    t.eq(c.request(RECALL, "name", seq=15), (RECALL, "\u0e2a\u0e21\u0e0a\u0e32\u0e22".encode()), "RECALL (extension)")
    t.eq(c.request(REMEMBER, "novalue", seq=16), (ERR, b"format: key=value"), "REMEMBER without =")
    sub, p = c.request(HISTORY, seq=17)
    t.check(sub == HISTORY and p.startswith("Memory:\n- name: \u0e2a\u0e21\u0e0a\u0e32\u0e22\n".encode()), "HISTORY", p[:80])
    t.eq(c.request(ASK, "hello", seq=18), (ASK, b"hello"), "ASK offline: the prompt back")
    port = ctx.backend_port
    t.eq(c.request(CONNECT, "127.0.0.1:%d:demo-key" % port, seq=19), (CONNECT, b"127.0.0.1:%d" % port),
         "CONNECT through the serial bridge")
    t.eq(c.request(CONNECT, "127.0.0.1:99999:k", seq=20), (ERR, b"invalid port"), "CONNECT, a bad port")
    t.eq(c.request(EXEC, "wipe_memory", seq=21), (EXEC, b"True"), "EXEC of a risk-2 tool at USB trust while connected")
    t.eq(c.request(RECALL, "name", seq=22), (ERR, b"not found"), "the wipe ran")
    sub, p = c.request(ASK, "what is up", seq=23, timeout=40)
    t.check(sub == ASK and p.startswith(b"Echo: what is up"), "ASK online: the backend's reply", sub, p[:80])
    sub, p = c.request(SAFETY, seq=24)
    t.eq((sub, json.loads(p)["trust_level"], json.loads(p)["connected"]), (SAFETY, "https", True), "SAFETY while connected")
    t.eq(c.request(DISCONNECT, seq=25), (DISCONNECT, b"ok"), "DISCONNECT")
    t.eq(c.request(CLEAR, seq=26), (CLEAR, b"ok"), "CLEAR")
    t.eq(c.request(0x55, "x", seq=27), (ERR, b"unknown sub_cmd"), "an unknown sub-command")

    # --- framing on the wire --------------------------------------------------------------
    f = tc.frame(EXEC, "echo in pieces", 30)
    for part in (f[:2], f[2:6], f[6:]):
        c.send(part)
        time.sleep(0.3)
    t.eq(c.wait(30), (EXEC, b"in pieces"), "a frame in three pieces with pauses")
    bad = bytearray(tc.frame(EXEC, "echo bad", 31))
    bad[-2] ^= 0xFF
    c.send(bytes(bad))
    t.eq(c.frames(1.0), [], "a bad CRC: no answer")
    c.send(b"\xaa\x55\x30\x01\x20\x01\x0c")  # length 3073
    t.eq(c.request(EXEC, "echo after", seq=32), (EXEC, b"after"), "after a bad frame and an over-long header: answered")
    c.send(tc.PING)
    t.eq(c.frames(0.5), [], "CONNECT (ping): no answer")
    _, err, _ = b.exec_raw("print('after the ping')", dl)
    t.eq(err, b"", "the REPL after the ping")

    # --- TERMINATE ------------------------------------------------------------------------
    b.write(b"import time\nwhile True:\n    time.sleep_ms(10)\n\x04")
    b.read_until(b"OK", dl)
    time.sleep(0.5)
    c.send(tc.TERMINATE)
    b.read_until(b"\x04", dl)
    err = b.read_until(b"\x04", dl)
    t.check(b"KeyboardInterrupt" in err, "TERMINATE interrupts a running REPL command", err)
    b.read_until(b">", dl)
    _, err, _ = b.exec_raw(
        "import bentoclaw, time\n"
        "def spin(a):\n"
        "    while True:\n"
        "        time.sleep_ms(10)\n"
        "bentoclaw.register_tool('spin', spin)\n", dl)
    t.eq(err, b"", "a tool that never returns")
    c.send(tc.frame(EXEC, "spin", 40))
    time.sleep(0.5)
    c.send(tc.TERMINATE)
    t.eq(c.wait(40), (ERR, b"interrupted"), "TERMINATE stops the EXEC's tool: answered interrupted")
    out, err, _ = b.exec_raw("print(bentoclaw.status()['state'])", dl)
    t.eq((out.strip(), err), (b"idle", b""), "the REPL goes on, the agent idle")
    t.eq(c.request(STATUS, seq=41)[0], STATUS, "and TACP too")
    return banner
