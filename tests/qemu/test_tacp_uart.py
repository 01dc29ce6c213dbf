# test_tacp_uart.py — TACP lines over the board's UART2, as the USB host
# sends them (docs/TACP.md, docs/EMULATOR.md): the host writes request lines
# (CR LF, LF or CR LF with spaces), the board's CDC loop (serve_tacp: board.
# tacp_readline -> bentoclaw.tacp -> board.tacp_write) answers each with one
# line, the host reads the answers back. Thai and quoted arguments, an
# over-long line (refused whole, the next line still served), a read with
# nothing to read (returns after its timeout), a line that comes in two
# parts (served once whole), and TACP while connected over HTTPS (USB trust
# for the tool).
# needs: backend
# boards: m33
# qemu: icount
import json
import time
import bentoclaw

t = Checker("tacp-uart")
mount_ramdisk()

# Nothing sent: tacp_readline gives up at its timeout (board time).
t0 = time.ticks_ms()
t.eq(board.tacp_readline(200), None, "no line within the timeout: None")
dt = time.ticks_diff(time.ticks_ms(), t0)
t.check(200 <= dt < 400, "tacp_readline waited its timeout (%d ms)" % dt, dt)
t.eq(serve_tacp(3, timeout_ms=100), 0, "serve_tacp with no lines serves none")

# Requests with different terminators, Thai, quoting.
board.link_call(LINK_TACP_SEND, b"STATUS\r\nREMEMBER \xe0\xb8\x8a\xe0\xb8\xb7\xe0\xb9\x88\xe0\xb8\xad \"\xe0\xb8\xaa\xe0\xb8\xa1 \xe0\xb8\x8a\xe0\xb8\xb2\xe0\xb8\xa2\"\n  recall   ชื่อ  \r\nTOOL echo \"two words\"\r\n", 5000, 16)
t.eq(serve_tacp(4), 4, "four lines served")
a = tacp_host_read(4)
t.eq(len(a), 4, "four answers")
if len(a) == 4:
    t.check(a[0].startswith("{") and json.loads(a[0])["connected"] is False, "STATUS offline", a[0])
    t.eq(a[1:], ["ok", '"สม ชาย"', '"two words"'], "REMEMBER (LF), RECALL (spaces, lower case), TOOL with quotes")
t.eq(bentoclaw.recall("ชื่อ"), "สม ชาย", "stored through the UART")

# An over-long line is refused whole and the next one is still a line.
tacp_host_send(["RECALL " + "k" * 600, "RECALL ชื่อ"])
t.eq(serve_tacp(2), 2, "two lines served")
t.eq(tacp_host_read(2), ["err line too long", '"สม ชาย"'], "over 512 bytes refused, the next line fine")

# Control characters and bad quoting arrive as they are and are refused.
tacp_host_send(['TOOL echo "open', "STATUS\tx", ""])
t.eq(serve_tacp(3), 3, "three lines served")
t.eq(tacp_host_read(3), ["err unterminated quote", "err control character", "err empty line"], "refusals")

# Connected over HTTPS: a TACP tool runs at USB trust, tool() is refused.
t.eq(bentoclaw.connect("127.0.0.1", BACKEND_PORT, API_KEY), True, "connect")
t.raises(RuntimeError, bentoclaw.tool, "wipe_memory", text=TRUST_TEXT)
tacp_host_send(["TOOL wipe_memory", "SAFETY"])
t.eq(serve_tacp(2), 2, "served while connected")
a = tacp_host_read(2)
t.eq(a[:1], ['"True"'], "wipe_memory over TACP at USB trust")
t.check(len(a) == 2 and json.loads(a[1])["trust"] == "https", "SAFETY: https outside the tool call", a)
t.eq(bentoclaw.recall("ชื่อ"), None, "memory wiped")

# A line that arrives slowly: not served until its end comes, then whole.
board.link_call(LINK_TACP_SEND, b"RECALL nob", 5000, 16)
t.eq(serve_tacp(1, timeout_ms=300), 0, "half a line is not a request yet")
board.link_call(LINK_TACP_SEND, b"ody\r\n", 5000, 16)
t.eq(serve_tacp(1), 1, "the completed line is served")
t.eq(tacp_host_read(1), ["err not found"], "as one line: RECALL nobody")
bentoclaw.disconnect()
t.done()
