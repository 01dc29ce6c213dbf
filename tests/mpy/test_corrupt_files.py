# test_corrupt_files.py — session and memory files that are torn, zero- or
# 0xFF-filled at the tail, full of garbage, invalid UTF-8, CRLF, without a
# final newline, with a 100 KB line, 10 000-deep nesting, duplicate keys,
# more entries than the capacity. Written directly with open() on LittleFS.
# Each must load without a crash and keep every valid entry (the session:
# the trusted lines — up to the last "end" line — newest 10; the memory:
# every valid pair, the last duplicate wins); the next flush()/remember()
# must repair the files (a damaged base is folded: every file of the set
# that exists is clean JSON Lines of valid records, each key once), the
# files read back (claw_rig's own reader of the layout) must hold exactly
# the ring / the pairs, and a new interpreter process must read the
# repaired files back exactly.
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


def flat_bytes(data):
    """The bytes write_parts() writes for data."""
    if isinstance(data, bytes):
        return data
    return b"".join(p[1] * p[2] if isinstance(p, tuple) else p for p in data)


def clean_lines(text, what, newline=True):
    """The file must be clean JSON Lines: UTF-8, newline-terminated, each
    line a JSON object (a CRLF line end kept from an accepted CRLF file is
    still JSON Lines; a lone CR is not). Returns the parsed objects.
    newline=False: a last line without its newline is accepted (a base the
    library left as it found it: nothing is ever appended to a base)."""
    try:
        s = text.decode()
    except UnicodeError:
        t.check(False, what + ": the file is UTF-8")
        return []
    t.check("\r" not in s.replace("\r\n", "\n"), what + ": no stray CR", repr(s[:200]))
    if newline:
        t.check(s == "" or s.endswith("\n"), what + ": ends with a newline", repr(s[-40:]))
    elif s and not s.endswith("\n"):
        s += "\n"
    out = []
    for ln in s.split("\n")[:-1]:
        try:
            out.append(json.loads(ln))
        except ValueError:
            t.check(False, what + ": every line is JSON", repr(ln[:80]))
    return out


ROLES = ("user", "assistant", "system", "tool", "summary")


def ints(v, n=None):
    return isinstance(v, list) and (n is None or len(v) == n) and all(isinstance(x, int) for x in v)


def session_record(o):
    """A line of the session layout (src/format/session.rs): a message
    {role, content} (a summary may carry "keep"), the batch's last line
    with "end":true, "seq" and the statistics "st" (7 numbers), or a bare
    end line."""
    if not isinstance(o, dict) or not set(o) <= {"role", "content", "keep", "end", "seq", "st"}:
        return False
    if "role" in o or "content" in o:
        if o.get("role") not in ROLES or not isinstance(o.get("content"), str):
            return False
        if "keep" in o and (o["role"] != "summary" or not isinstance(o["keep"], int)):
            return False
    elif o.get("end") is not True:
        return False
    if "end" in o and o["end"] is not True:
        return False
    if ("seq" in o or "st" in o) and "end" not in o:
        return False
    return (not isinstance(o.get("seq", 0), bool) and isinstance(o.get("seq", 0), int)
            and ("st" not in o or ints(o["st"], 7)))


def session_files_clean(what, seed):
    """Every session file that exists is clean JSON Lines of valid records,
    with nothing after its last end line; a file the library wrote (every
    slot, a rewritten base) ends with an end line that numbers its batch,
    and holds at most the ring (10 messages) and an end line. The base may
    be the one the test wrote when it is not damaged (the library keeps it
    until a fold). Returns the number of files."""
    n = 0
    for path in rig.SESSION_FILES:
        raw = fr.read_file(path)
        if raw is None:
            continue
        n += 1
        kept = path == rig.SESSION_FILE and raw == seed
        label = "%s: %s%s" % (what, path, " (kept as written)" if kept else "")
        objs = clean_lines(raw, label, newline=not kept)
        t.check(all(session_record(o) for o in objs), label + ": every line is a record (nothing invalid left)",
                [o for o in objs if not session_record(o)][:3])
        ends = [i for i, o in enumerate(objs) if o.get("end") is True]
        t.check(not ends or ends[-1] == len(objs) - 1, label + ": nothing after the last end line", objs[-2:])
        if not kept:
            t.check(len(objs) > 0 and objs[-1].get("end") is True and isinstance(objs[-1].get("seq"), int),
                    label + ": the last line ends a batch with its number", objs[-1:])
            # (Was: at most 30 lines in the single compacted file. A base the
            # library writes holds the ring, a slot one batch: never more
            # than the ring's 10 messages and a summary.)
            t.check(len(objs) <= 11, label + ": at most the ring's lines", len(objs))
    t.eq(fr.read_file("/.bentoclaw_session.tmp"), None, what + ": no temporary file left")
    return n


def session_case(name, data, want):
    what = "session " + name
    bc = fresh_fs(session=data, memory=GOOD_MEM)
    ring, mem = fr.state(bc)
    t.eq(ring, want, what + ": ring = the trusted valid lines, newest 10")
    t.eq(bc.status()["session_msgs"], len(want), what + ": session_msgs")
    t.eq(dict(mem), GOOD_MEM_D, what + ": the memory is untouched")
    # The next flush repairs the files: a damaged base is folded.
    bc.disconnect()
    t.eq(bc.flush(), True, what + ": flush")
    new = fr.newest(want + [DISC])
    t.check(session_files_clean(what + " after the flush", flat_bytes(data)) > 0, what + ": session files exist")
    t.eq(rig.session_on_flash(), new, what + ": the ring read back from the files is the ring")
    t.eq(fr.reboot_check(t, SCRIPT, [(new, list(GOOD_MEM_D.items()))], image(), what + ": reboot"),
         0, what + ": a new process reads the repaired ring")


def utf8_len(v):
    return len(v.encode()) if isinstance(v, str) else -1


def memory_record(o, first, shard):
    """A line of the store layout (src/memory/): a header {"seq":G} (the
    first line; a base in the seed's plain form has none), a pair
    {key, value} (with "pin":true when pinned; in a shard "n" for a new
    key's place), or in a shard {key, "del":true}."""
    if not isinstance(o, dict):
        return False
    if set(o) == {"seq"}:
        return first and isinstance(o["seq"], int) and not isinstance(o["seq"], bool)
    if not 1 <= utf8_len(o.get("key")) <= 31:
        return False
    if shard and set(o) == {"key", "del"}:
        return o["del"] is True
    allowed = {"key", "value", "pin", "n"} if shard else {"key", "value", "pin"}
    return (set(o) <= allowed and 0 <= utf8_len(o.get("value")) <= 127
            and o.get("pin", True) is True and isinstance(o.get("n", 0), int))


def memory_files_clean(what, seed):
    """Every memory file that exists is clean JSON Lines of valid records
    (each shard starts with its header); the base may be the one the test
    wrote when it is not damaged."""
    for path in rig.MEMORY_FILES:
        raw = fr.read_file(path)
        if raw is None:
            continue
        shard = path != rig.MEMORY_FILE
        kept = not shard and raw == seed
        label = "%s: %s%s" % (what, path, " (kept as written)" if kept else "")
        objs = clean_lines(raw, label, newline=not kept)
        t.check(all(memory_record(o, i == 0, shard) for i, o in enumerate(objs)),
                label + ": every line is a header or a key/value record (no other fields)",
                [o for i, o in enumerate(objs) if not memory_record(o, i == 0, shard)][:3])
        if shard:
            t.check(objs and set(objs[0]) == {"seq"}, label + ": a shard starts with its header", objs[:1])
    t.eq(fr.read_file("/.bentoclaw_memory.tmp"), None, what + ": no temporary file left")


def memory_snapshot():
    return [fr.read_file(p) for p in rig.MEMORY_FILES]


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
        before = memory_snapshot()
        t.eq(bc.remember("fresh", "no room"), False, what + ": a new key beyond the capacity is refused")
        t.eq(memory_snapshot(), before, what + ": the refused remember wrote nothing")
    # The next remember repairs the files: a damaged base is folded.
    t.eq(bc.remember(key, "ใหม่"), True, what + ": remember(%s)" % key)
    new = dict(want)
    new[key] = "ใหม่"
    memory_files_clean(what + " after remember", flat_bytes(data))
    store = rig.store_on_flash()
    keys = [k for k, v, p in store]
    t.eq(len(keys), len(set(keys)), what + ": each key once")
    t.eq(dict((k, v) for k, v, p in store), new, what + ": the files hold exactly the pairs")
    t.eq([p for k, v, p in store if p], [], what + ": nothing pinned")
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
