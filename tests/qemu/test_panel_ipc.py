# test_panel_ipc.py — the firmware build's own UI panel and hardware tools:
# the binding sends its UI messages itself over the (stand-in) CM33->CM55
# IPC pipe with the vendor's layout (ipc_msg_t: client 3, cmd 0xCA,
# data[0] the CLAW_UI_* type, the text after it cut to 126 bytes on a
# character boundary, NUL-terminated), retrying a busy pipe 20 times; no
# claw_ipc_* symbol is needed from the firmware. On the M33 the board
# registers gpio_set/gpio_read (the MPS2 FPGA's user LEDs) with
# claw_tools_register(), as a BENTO firmware registers its hardware tools.
import struct
import bentoclaw
import board_ipc

t = Checker("panel-ipc")
mount_ramdisk()

CMD_UI, CMD_LCD, CLIENT, MASK = 0xCA, 0xE0, 3, 1 << 4


def ui_log():
    out = []
    for cmd, client, mask, data in board_ipc.log():
        t.check(client == CLIENT and mask == MASK, "client CM55_IPC_CLAW_CLIENT_ID, EP1 mask", client, mask)
        if cmd == CMD_UI:
            text = data[1:data.index(b"\0", 1)] if b"\0" in data[1:] else data[1:]
            out.append((data[0], text.decode()))
        else:
            out.append((cmd, data[:data.index(b"\0")].decode()))
    board_ipc.clear()
    return out


board_ipc.clear()
setups = board_ipc.setups()
if QEMU_BOARD == "m33":
    # READY, sent once the board is up (bentoclaw_send_ready() after boot.py
    # and main.py, board_tacp.c), pushes the STATS card: the link came up
    # with it, once (cm33_ipc_communication_setup), before any call of the
    # script.
    t.eq(setups, 1, "the link set up once, by READY at boot")
else:
    # The M55 board has no TACP console, so no READY: the first UI message
    # sets the link up.
    t.eq(setups, 0, "no READY on the M55: the link is not up yet")
# execute() sends LAST_CMD and LAST_RESULT over it, the link set up once.
bentoclaw.execute("echo", None)
t.eq(board_ipc.setups(), 1, "the link set up once, and not again")
t.eq(ui_log(), [(1, "echo"), (2, "dispatched")], "execute(): CLAW_UI_LAST_CMD 1, CLAW_UI_LAST_RESULT 2")
ui_log()
bentoclaw.session_clear()
t.eq(ui_log(), [(5, "")], "session_clear(): CLAW_UI_CLEAR 5, empty text")
t.eq(bentoclaw.tool("ui_notify", "hello"), '{"status":"notified"}', "ui_notify")
got = ui_log()
t.check((3, "hello") in got, "ui_notify: CLAW_UI_PROGRESS 3", got)
t.check(all(k in (1, 2, 3, 9) for k, _ in got), "a tool call: LAST_RESULT and the TOOL turn (9, ours)", got)

# The text is cut to IPC_DATA_MAX_LEN - 2 = 126 bytes on a character boundary.
thai = "\u0e01" * 60  # 180 bytes
bentoclaw.tool("ui_notify", thai)
prog = [x for k, x in ui_log() if k == 3]
t.eq(prog, ["\u0e01" * 42], "cut to 126 bytes: 42 whole Thai characters, never half of one")

# A busy pipe is tried 20 times, 200 us apart; past that the message is dropped.
board_ipc.busy(19)
bentoclaw.tool("ui_notify", "late")
t.check((3, "late") in ui_log(), "delivered on the 20th try")
board_ipc.busy(20 + 20 + 20)
bentoclaw.tool("ui_notify", "gone")
t.check((3, "gone") not in ui_log(), "dropped after 20 busy tries")
board_ipc.busy(0)

# lcd_console: IPC_CMD_LCD_PRINT 0xE0 with the text (127 bytes at most).
t.eq(bentoclaw.tool("lcd_console", "hi LCD"), '{"status":"printed","len":6}', "lcd_console")
t.check((CMD_LCD, "hi LCD") in ui_log(), "lcd_console: IPC_CMD_LCD_PRINT")
t.eq(bentoclaw.tool("lcd_console"), '{"error":"no text"}', "lcd_console without text")

# The message itself, byte by byte.
board_ipc.clear()
bentoclaw.tool("ui_notify", "abc")
raw = [x for x in board_ipc.log() if x[3][0] == 3][0]
t.eq(raw[0], CMD_UI, "cmd IPC_CMD_CLAW_UI_UPDATE")
t.eq(raw[3][:5], b"\x03abc\0", "data: type, text, NUL")
t.eq(len(raw[3]), 128, "IPC_DATA_MAX_LEN bytes of data")

if QEMU_BOARD == "m33":
    # The board's hardware tools: the vendor's names, risks and limits.
    g = [x for x in bentoclaw.tools() if x["name"] in ("gpio_set", "gpio_read")]
    t.eq([(x["name"], x["description"], x["risk"], x["rate_per_min"]) for x in g],
         [("gpio_set", "Set LED on/off", 1, 30), ("gpio_read", "Read LED + button state", 0, 60)],
         "gpio_set and gpio_read from the board, with the vendor's registry entries")
    t.eq(bentoclaw.tool("gpio_set", "led1 on"), '{"led":"led1","state":"on"}', "gpio_set led1 on")
    t.eq(bentoclaw.tool("gpio_read"), '{"leds":{"led1":true,"led2":false}}', "gpio_read sees it")
    fpga_led = struct.unpack("<I", bytes(__import__("uctypes").bytearray_at(0x50302000, 4)))[0]
    t.eq(fpga_led & 3, 1, "the FPGA's LED register says so")
    t.eq(bentoclaw.tool("gpio_set", '{"pin":"led2","value":1}'), '{"led":"led2","state":"on"}', "JSON form")
    t.eq(bentoclaw.tool("gpio_set", "led1 off"), '{"led":"led1","state":"off"}', "led1 off")
    t.eq(bentoclaw.tool("gpio_read"), '{"leds":{"led1":false,"led2":true}}', "gpio_read")
    t.eq(bentoclaw.tool("gpio_set", "led9 on"), '{"error":"unknown LED","available":["led1","led2"]}',
         "an unknown LED")
    t.eq(bentoclaw.tool("gpio_set", "led1"), '{"error":"usage: gpio_set <led_name> <on|off>"}', "usage")
    t.eq(bentoclaw.execute("gpio_set", None), {"tool": "gpio_set", "status": "ready", "risk": 1, "confirm": False},
         "execute() of a hardware tool")
t.done()
