# test_corrupt_files.py — session and memory files that are torn, zero- or
# 0xFF-filled at the tail, full of garbage, invalid UTF-8, CRLF, without a
# final newline, with a 100 KB line, 10 000-deep nesting, duplicate keys,
# more entries than the capacity. Written directly with open() on LittleFS.
# Each must load without a crash and keep every valid entry (the session:
# the trusted lines — up to the last "end" line — newest 10; the memory:
# every valid pair, the last duplicate wins); the next flush()/remember()
# must repair the file (re-read: clean JSON Lines, each key once), and a new
# interpreter process must read the repaired files back exactly.
import sys
import gc
import json
import claw_rig as rig
import fault_rig as fr

SCRIPT = sys.argv[0]
BLOCKS = 512  # 256 KiB: room for a 100 KB line

if fr.is_child():
    fr.child_main()  # exits

import bentoclaw

t = rig.Checker("corrupt-files")
fr.host_dir()

DISC = ("system", "Disconnected from backend")


def line(role, content, end=False):
    return fr.session_line(role, content, end).encode()


def m(i, end=False):
    return line("user" if i % 2 == 0 else "assistant", "m%02d" % i, end)


def ring_of(*idx):
    return [("user" if i % 2 == 0 else "assistant", "m%02d" % i) for i in idx]


def pair(k, v):
    return fr.memory_line(k, v).encode()


DEEP = b"[" * 10000 + b"]" * 10000
BIG = ("rep", b"x" * 1000, 100)  # 100 000 bytes of "x", written in 1000-byte pieces
GOOD_MEM = pair("name", "สมชาย") + pair("city", "Chiang Mai")
GOOD_MEM_D = {"name": "สมชาย", "city": "Chiang Mai"}
GOOD_SES = m(0) + m(1, True)
GOOD_SES_R = ring_of(0, 1)

# (name, session file bytes, expected ring)
SESSION_CASES = [
    ("torn mid-line", m(0) + m(1, True) + m(2) + m(3, True) + b'{"role":"assistant","content":"tor',
     ring_of(0, 1, 2, 3)),
    ("torn mid-batch", m(0) + m(1, True) + m(2) + b'{"role":"user","con', ring_of(0, 1)),
    ("batch without its end line", m(0, True) + m(1) + m(2), ring_of(0)),
    ("zero-filled tail", m(0) + m(1, True) + m(2, True) + b"\x00" * 700, ring_of(0, 1, 2)),
    ("0xFF-filled tail", m(0) + m(1, True) + m(2, True) + b"\xff" * 700, ring_of(0, 1, 2)),
    ("zero-filled tail after a newline-less record", m(0, True) + m(1, True)[:-1] + b"\x00" * 64, ring_of(0)),
    ("garbage lines", m(0, True) + b"garbage!!!\n" + m(1, True) + b"{not json\n[1,2,3]\n\n"
     + b'{"role":"nobody","content":"x","end":true}\n' + b'{"role":"user"}\n' + m(2, True),
     ring_of(0, 1, 2)),
    ("control characters and \\u0000", m(0, True) + b'{"role":"user","content":"a\\u0000b","end":true}\n'
     + b'{"role":"user","content":"raw\x01ctl","end":true}\n' + m(1, True), ring_of(0, 1)),
    ("invalid UTF-8", m(0, True) + b'{"role":"user","content":"\xff\xfe bad"}\n' + m(1, True)
     + b'{"role":"user","content":"\xc3\x28","end":true}\n' + b'{"role":"user","content":"\xe0\xb8","end":true}\n',
     ring_of(0, 1)),
    ("CRLF line ends", m(0).replace(b"\n", b"\r\n") + m(1, True).replace(b"\n", b"\r\n")
     + m(2, True).replace(b"\n", b"\r\n"), ring_of(0, 1, 2)),
    ("no final newline", m(0) + m(1, True) + m(2, True)[:-1], ring_of(0, 1, 2)),
    ("100 KB content line", [m(0, True) + b'{"role":"user","content":"', BIG, b'","end":true}\n' + m(1, True)],
     ring_of(0, 1)),
    ("100 KB garbage line", [m(0, True), BIG, b"\n" + m(1, True)], ring_of(0, 1)),
    ("10 000-deep nesting", m(0, True) + DEEP + b"\n" + b'{"role":"user","content":' + DEEP + b',"end":true}\n'
     + m(1, True) + b'{"a":' * 10000 + b"\n" + m(2, True), ring_of(0, 1, 2)),
    ("nested values", m(0, True) + b'{"role":"user","content":{"a":[1,2]},"end":true}\n'
     + b'{"role":["user"],"content":"x","end":true}\n' + m(1, True), ring_of(0, 1)),
    ("40 lines (ring of 10)", b"".join(m(i, i % 2 == 1) for i in range(40)), ring_of(*range(30, 40))),
    ("only garbage", b"\x00\xff garbage\n{]\n", []),
    ("empty file", b"", []),
]

# (name, memory file bytes, expected {key: value}, key for the repairing remember)
MEMORY_CASES = [
    ("torn mid-line", GOOD_MEM + pair("lang", "th") + b'{"key":"d","val', dict(GOOD_MEM_D, lang="th"), "fresh"),
    ("zero-filled tail", GOOD_MEM + b"\x00" * 700, GOOD_MEM_D, "fresh"),
    ("0xFF-filled tail", GOOD_MEM + b"\xff" * 700, GOOD_MEM_D, "fresh"),
    ("garbage lines", pair("a", "1") + b"garbage\n{}\n[1]\n\n" + b'{"key":"","value":"empty key"}\n'
     + b'{"key":"b"}\n' + pair("b", "2"), {"a": "1", "b": "2"}, "fresh"),
    ("invalid UTF-8", pair("a", "1") + b'{"key":"\xff","value":"x"}\n' + b'{"key":"c","value":"\xc3\x28"}\n'
     + pair("b", "2"), {"a": "1", "b": "2"}, "fresh"),
    ("CRLF line ends", GOOD_MEM.replace(b"\n", b"\r\n"), GOOD_MEM_D, "fresh"),
    ("no final newline", GOOD_MEM + pair("last", "kept")[:-1], dict(GOOD_MEM_D, last="kept"), "fresh"),
    ("100 KB value", [pair("a", "1") + b'{"key":"big","value":"', BIG, b'"}\n' + pair("b", "2")],
     {"a": "1", "b": "2"}, "fresh"),
    ("100 KB key", [pair("a", "1") + b'{"key":"', BIG, b'","value":"v"}\n' + pair("b", "2")],
     {"a": "1", "b": "2"}, "fresh"),
    ("100 KB garbage line", [pair("a", "1"), BIG, b"\n" + pair("b", "2")], {"a": "1", "b": "2"}, "fresh"),
    ("over-long key and value", pair("a", "1") + pair("k" * 32, "v") + pair("v", "x" * 128) + pair("k" * 31, "x" * 127),
     {"a": "1", "k" * 31: "x" * 127}, "fresh"),
    ("10 000-deep nesting", pair("a", "1") + DEEP + b"\n" + b'{"key":"n","value":' + DEEP + b"}\n"
     + b'{"key":' * 10000 + b"\n" + pair("b", "2"), {"a": "1", "b": "2"}, "fresh"),
    ("duplicate keys", pair("a", "1") + pair("b", "2") + pair("a", "3") + pair("c", "4") + pair("b", "5") + pair("a", "6"),
     {"a": "6", "b": "5", "c": "4"}, "fresh"),
    ("40 pairs (capacity 32)", b"".join(pair("k%02d" % i, "v%02d" % i) for i in range(40)),
     dict(("k%02d" % i, "v%02d" % i) for i in range(40)), "k05"),
    ("40 pairs with duplicates", b"".join(pair("k%02d" % (i % 30), "v%02d" % i) for i in range(40)),
     dict(("k%02d" % (i % 30), "v%02d" % i) for i in range(40)), "fresh"),
]


DEV = [None]


def image():
    return DEV[0].data


def write_parts(path, data):
    """data: bytes, or a list of bytes and ("rep", chunk, n) pieces."""
    if isinstance(data, bytes):
        data = [data]
    with open(path, "wb") as f:
        for part in data:
            if isinstance(part, tuple):
                for _ in range(part[2]):
                    f.write(part[1])
            else:
                f.write(part)


def fresh_fs(session=None, memory=None):
    DEV[0] = None
    gc.collect()
    DEV[0] = fr.mount_dev(rig.RamBlockDev(BLOCKS), mkfs=True)
    if session is not None:
        write_parts(rig.SESSION_FILE, session)
    if memory is not None:
        write_parts(rig.MEMORY_FILE, memory)
    return fr.reboot_core(bentoclaw)


def clean_lines(text, what):
    """The file must be clean JSON Lines: UTF-8, newline-terminated, each
    line a JSON object (a CRLF line end kept from an accepted CRLF file is
    still JSON Lines; a lone CR is not). Returns the parsed objects."""
    try:
        s = text.decode()
    except UnicodeError:
        t.check(False, what + ": the file is UTF-8")
        return []
    t.check("\r" not in s.replace("\r\n", "\n"), what + ": no stray CR", repr(s[:200]))
    t.check(s == "" or s.endswith("\n"), what + ": ends with a newline", repr(s[-40:]))
    out = []
    for ln in s.split("\n")[:-1]:
        try:
            out.append(json.loads(ln))
        except ValueError:
            t.check(False, what + ": every line is JSON", repr(ln[:80]))
    return out


def session_case(name, data, want):
    what = "session " + name
    bc = fresh_fs(session=data, memory=GOOD_MEM)
    ring, mem = fr.state(bc)
    t.eq(ring, want, what + ": ring = the trusted valid lines, newest 10")
    t.eq(bc.status()["session_msgs"], len(want), what + ": session_msgs")
    t.eq(dict(mem), GOOD_MEM_D, what + ": the memory is untouched")
    # The next flush repairs the file.
    bc.disconnect()
    t.eq(bc.flush(), True, what + ": flush")
    new = fr.newest(want + [DISC])
    text = fr.read_file(rig.SESSION_FILE)
    objs = clean_lines(text, what + " after the flush")
    roles = ("user", "assistant", "system", "tool")
    # An "end" line also carries the session's statistics (feature lasting:
    # in, out, tin, tout, ctx, n, at; docs/SESSIONS.md).
    stats = ["at", "content", "ctx", "end", "in", "n", "out", "role", "tin", "tout"]
    t.check(all((sorted(o.keys()) in (["content", "role"], ["content", "end", "role"])
                 or (sorted(o.keys()) == stats and all(isinstance(o[k], int) for k in ("in", "out", "tin", "tout", "ctx", "n", "at"))))
                and o["role"] in roles
                and isinstance(o["content"], str) and o.get("end", True) is True for o in objs),
            what + ": every line is a record (nothing invalid left)", objs[:3])
    t.check(len(objs) > 0 and objs[-1].get("end") is True, what + ": the last line ends a batch")
    t.eq(fr.newest([(o.get("role"), o.get("content")) for o in objs]), new, what + ": the file's newest 10 lines are the ring")
    if b"\r" in text:
        print("  note: %s: the accepted CRLF lines were kept, the flush appended LF lines" % what)
    t.check(len(objs) <= 30, what + ": at most 30 lines (compacted)", len(objs))
    t.eq(fr.reboot_check(t, SCRIPT, [(new, list(GOOD_MEM_D.items()))], image(), what + ": reboot"),
         0, what + ": a new process reads the repaired ring")


def memory_case(name, data, want, key):
    what = "memory " + name
    bc = fresh_fs(session=GOOD_SES, memory=data)
    for k in sorted(want):
        t.eq(bc.recall(k), want[k], what + ": recall %s" % k[:40])
    ring, mem = fr.state(bc)
    if len(mem) <= 64:  # the context renders at most 64 memory lines
        t.eq(dict(mem), want, what + ": the pairs in the context (last duplicate wins)")
    t.eq(ring, GOOD_SES_R, what + ": the session is untouched")
    # A new key on a store with 32 or more keys is refused, the store kept.
    if len(want) >= 32:
        before = fr.read_file(rig.MEMORY_FILE)
        t.eq(bc.remember("fresh", "no room"), False, what + ": a new key beyond the capacity is refused")
        t.eq(fr.read_file(rig.MEMORY_FILE), before, what + ": the refused remember wrote nothing")
    # The next remember repairs the file.
    t.eq(bc.remember(key, "ใหม่"), True, what + ": remember(%s)" % key)
    new = dict(want)
    new[key] = "ใหม่"
    objs = clean_lines(fr.read_file(rig.MEMORY_FILE), what + " after remember")
    keys = [o.get("key") for o in objs]
    t.eq(len(keys), len(set(keys)), what + ": each key once")
    t.eq(dict((o.get("key"), o.get("value")) for o in objs), new, what + ": the file holds exactly the pairs")
    t.check(all(sorted(o.keys()) == ["key", "value"] for o in objs), what + ": only key/value fields")
    for k in sorted(new):
        t.eq(bc.recall(k), new[k], what + ": recall %s after the repair" % k[:40])
    # With 32 keys or more the child's own remember() of a new key is refused.
    t.eq(fr.reboot_check(t, SCRIPT, [(GOOD_SES_R, list(new.items()))], image(), what + ": reboot", len(new) < 32),
         0, what + ": a new process reads the repaired store")


def run_cases(cls, fn, cases):
    losses = 0
    for case in cases:
        f0 = t.failed
        fn(*case)
        ok = t.failed == f0
        losses += 0 if ok else 1
        print("%-16s %-44s %s" % (cls, case[0], "ok" if ok else "LOST"))
    t.eq(losses, 0, "%s: every case loads, keeps the valid entries and is repaired" % cls)
    fr.reliability(cls, len(cases), losses)


run_cases("corrupt session file", session_case, SESSION_CASES)
run_cases("corrupt memory file", memory_case, MEMORY_CASES)
fr.host_cleanup()
t.done()
