# test_tacp_frames.py — TACP v2 framing through bentoclaw.tacp() (docs/TACP.md):
#  * frames split anywhere across calls (one byte a call, random cuts), several
#    in one call, among bytes that are not TACP (dropped: REPL input);
#  * each answer echoes its request's seq; the CRC of every answer checks;
#  * bad frames are dropped unanswered and the next one is read: a bad CRC, a
#    length over 3072 (its header only), a frame cut short for 5 s (board
#    time), a frame whose bytes stop and others follow within the gap;
#  * the largest payload (3072) in, the largest answer (3072) out;
#  * control commands: CONNECT (the IDE's ping) changes nothing and gets no
#    answer; TERMINATE raises KeyboardInterrupt (the answers of its call
#    dropped, the frames before it handled); the rest are swallowed;
#  * tacp() takes bytes, bytearray and memoryview, and refuses str.
# needs: faketime
# targets: unix qemu
import claw_rig as rig
import bentoclaw
import random
import time

t = rig.Checker("tacp-frames")
rig.mount_ram()

EXEC, STATUS, REMEMBER = 1, 3, 6
F = rig.tacp_frame
# echo's 10 a minute would not last this file: a tool of its own.
bentoclaw.register_tool("say", lambda a: a, rate_per_min=60000)


def answers(data):
    return [(s, q, str(p, "utf-8")) for s, q, p in rig.tacp_frames(bentoclaw.tacp(data))]


def status_text():
    st = bentoclaw.status()
    return '{"state":"idle","exec":%d,"err":%d,"tools":%d,"session":%d,"connected":false}' % (
        st["exec_count"], st["error_count"], st["tool_count"], st["session_msgs"])


# Several frames, REPL bytes around them.
want = status_text()
got = answers(b"print(1)\r\n" + F(STATUS, b"", 1) + b"\xaa\x55x" + F(EXEC, "say a", 200) + b"\xaa")
t.eq(got, [(STATUS, 1, want), (EXEC, 200, "a")], "two frames among REPL bytes, seqs echoed")
t.eq(answers(b"x" + F(EXEC, "say b", 3)), [(EXEC, 3, "b")], "a held 0xAA that was no frame")

# One byte a call: nothing until the last one.
f = F(EXEC, "say one byte at a time", 9)
out = b""
silent = True
for i, b in enumerate(f):
    r = bentoclaw.tacp(bytes([b]))
    if i < len(f) - 1 and r:
        silent = False
    out += r
t.check(silent, "no answer before the frame is whole")
t.eq(rig.tacp_frames(out), [(EXEC, 9, b"one byte at a time")], "a frame fed a byte a call")

# Random cuts over a stream of frames.
random.seed(21)
stream = b""
want = []
for i in range(12):
    word = "w%d" % i * (i + 1)
    stream += b"junk" * (i % 3) + F(EXEC, "say " + word, i + 10)
    want.append((EXEC, i + 10, word))
got = b""
i = 0
while i < len(stream):
    n = random.randint(1, 40)
    got += bentoclaw.tacp(stream[i : i + n])
    i += n
t.eq([(s, q, str(p, "utf-8")) for s, q, p in rig.tacp_frames(got)], want, "twelve frames split at random")

# bytearray and memoryview; str is refused.
t.eq(answers(bytearray(F(EXEC, "say ba", 4))), [(EXEC, 4, "ba")], "a bytearray")
t.eq(answers(memoryview(F(EXEC, "say mv", 5))), [(EXEC, 5, "mv")], "a memoryview")
t.raises(TypeError, bentoclaw.tacp, "\xaa", text="data must be bytes")

# Bad frames: dropped, unanswered; the next frame is read.
bad = bytearray(F(EXEC, "say crc", 6))
bad[-1] ^= 0x01
e0 = bentoclaw.status()["error_count"]
t.eq(answers(bytes(bad) + F(EXEC, "say next", 7)), [(EXEC, 7, "next")], "a bad CRC: dropped, the next one answered")
bad = bytearray(F(EXEC, "say bit", 6))
bad[8] ^= 0x10
t.eq(bentoclaw.tacp(bytes(bad)), b"", "a flipped payload bit: no answer")
over = b"\xaa\x55\x30\x01\x06\x01\x0c"  # length 3073
t.eq(answers(over + F(EXEC, "say after", 8)), [(EXEC, 8, "after")], "length 3073: its header dropped, what follows read")
t.eq(bentoclaw.status()["error_count"], e0, "bad frames count no error")

# The largest payload and the largest answer.
big = "say " + "z" * (3072 - 4)
t.eq(answers(F(EXEC, big, 11)), [(EXEC, 11, "z" * 3068)], "a 3072-byte payload")
bentoclaw.register_tool("huge", lambda a: "y" * 5000)
got = answers(F(EXEC, "huge", 12))
t.eq([(s, q, len(p)) for s, q, p in got], [(EXEC, 12, 3072)], "a longer result is cut to 3072 bytes")
thai = "\u0e01" * 1500  # 4500 bytes
bentoclaw.register_tool("thai", lambda a: thai)
got = answers(F(EXEC, "thai", 13))
t.eq([(s, q, p) for s, q, p in got], [(EXEC, 13, "\u0e01" * 1024)], "cut on a character boundary (3072 bytes)")

# A frame cut short: after 5 s of board time the rest is a new start.
half = F(REMEMBER, "cut=short", 14)[:9]
t.eq(bentoclaw.tacp(half), b"", "half a frame: nothing yet")
time.sleep_ms(5200)
t.eq(answers(F(EXEC, "say fresh", 15)), [(EXEC, 15, "fresh")], "after the gap: the next frame is read whole")
t.eq(bentoclaw.recall("cut"), None, "the cut frame did nothing")
# Within the gap a frame goes on.
f = F(REMEMBER, "slow=yes", 16)
t.eq(bentoclaw.tacp(f[:9]), b"", "the first part")
time.sleep_ms(2000)
t.eq(answers(f[9:]), [(REMEMBER, 16, "ok")], "the rest within the gap: answered")

# Control commands.
st0 = (status_text(), bentoclaw.session(), bentoclaw.safety())
t.eq(bentoclaw.tacp(b"\xaa\x55\x03"), b"", "CONNECT (ping): no answer")
t.eq((status_text(), bentoclaw.session(), bentoclaw.safety()), st0, "and no side effect")
for cmd in (0x02, 0x04, 0x05, 0x06):
    t.eq(bentoclaw.tacp(bytes([0xAA, 0x55, cmd])), b"", "control 0x%02x: swallowed" % cmd)
t.eq(bentoclaw.tacp(b"\xaa\x55\x20\x08/main.py\x0a\x00\x00\x00"), b"", "FILE_XFER: its header swallowed, no FILE_RDY")
t.eq(answers(F(EXEC, "say still", 17)), [(EXEC, 17, "still")], "frames go on after them")
try:
    bentoclaw.tacp(F(REMEMBER, "before=1", 18) + b"\xaa\x55\x01" + F(REMEMBER, "after=1", 19))
    t.check(False, "TERMINATE raises KeyboardInterrupt")
except KeyboardInterrupt:
    t.check(True, "TERMINATE raises KeyboardInterrupt")
t.eq((bentoclaw.recall("before"), bentoclaw.recall("after")), ("1", None), "the frame before it ran, the one after it did not")
t.eq(answers(F(EXEC, "say alive", 20)), [(EXEC, 20, "alive")], "tacp() works after a TERMINATE")
t.done()
