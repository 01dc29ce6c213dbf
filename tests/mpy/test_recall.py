# test_recall.py — search/forget/pin and the MEMORY.md export/import of the
# memory store (mpy/bentoclaw_memory.c, include/claw_ext.h), on LittleFS:
# argument checks, Thai text, the 31/127-byte limits, the 32-key capacity,
# escaping round trips, hand-edited files, flash write failures; then what
# build_context injects when the store does not fit the context (seen by the
# test backend); then the same store after a restart (a second process
# mounts the same image).
# needs: backend
import sys
import os
import claw_rig as rig

IMAGE = (os.getenv("TMPDIR") or "/tmp") + "/bentoclaw_recall_%s.img" % (os.getenv("BENTOCLAW_PORT") or "0")
child = len(sys.argv) > 1 and sys.argv[1] == "child"
script = sys.argv[0]

t = rig.Checker("recall-child" if child else "recall")
# The file-backed device must be opened before "/" is replaced.
fbdev = rig.FileBlockDev(IMAGE, blocks=256, create=not child)

# What the parent leaves on the image for the child.
RESTART_PAIRS = [
    ("wifi_password", "guest network: mango-tree-42"),
    ("แมว", "ชื่อมะลิ สีส้ม ชอบนอนบนโซฟา"),
    ("owner", "Somchai Jaidee"),
    ("dentist", "Dr. Anong, 3 March 10:00"),
]
RESTART_PINNED = "owner"
RESTART_FORGOTTEN = "dentist"


def expected_restart_export():
    lines = ["# Memory", ""]
    for k, v in RESTART_PAIRS:
        if k == RESTART_FORGOTTEN:
            continue
        mark = " (pinned)" if k == RESTART_PINNED else ""
        lines.append("- **%s**%s: %s" % (k, mark, v))
    return "\n".join(lines) + "\n"


if child:
    rig.mount(fbdev, mkfs=False)
    import bentoclaw

    t.eq(bentoclaw.export_memory(), expected_restart_export(), "export after the restart")
    hits = bentoclaw.search("what is the wifi password?", 3)
    t.check(hits and hits[0][0] == "wifi_password", "search after the restart", hits)
    hits = bentoclaw.search("แมวของฉันชื่ออะไร", 3)
    t.check(hits and hits[0][0] == "แมว", "Thai search after the restart", hits)
    t.eq(bentoclaw.recall(RESTART_FORGOTTEN), None, "a forgotten key stays forgotten")
    t.eq(bentoclaw.forget(RESTART_FORGOTTEN), False, "forget of it is False")
    t.eq(rig.connect(bentoclaw), True, "connect from the new process")
    bentoclaw.ask("hello again")
    ctx = rig.backend_last()["body_json"]["context"]
    t.check("- owner: Somchai Jaidee\n" in ctx, "pinned key in the context after the restart", ctx)
    bentoclaw.disconnect()
    t.done()

# ---------------------------------------------------------------------------
# Parent: RAM LittleFS first.
bdev = rig.mount_ram()
import bentoclaw

MAX = 32  # CLAW_MEMORY_SEARCH_MAX and CLAW_MEM_MAX_ENTRIES


def wipe():
    for k in keys_in_export(bentoclaw.export_memory()):
        bentoclaw.forget(k)
    t.eq(bentoclaw.export_memory(), "# Memory\n\n", "store wiped")


def md_unescape(s):
    # The reader's rules (docs/SESSIONS.md), written again independently.
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            e = s[i + 1]
            if e in "nrt":
                out.append({"n": "\n", "r": "\r", "t": "\t"}[e])
                i += 2
                continue
            if e == "x" and i + 3 < len(s):
                try:
                    out.append(chr(int(s[i + 2 : i + 4], 16)))
                    i += 4
                    continue
                except ValueError:
                    pass
            if 0x21 <= ord(e) <= 0x7E and not e.isalpha() and not e.isdigit():
                out.append(e)
                i += 2
                continue
        out.append(c)
        i += 1
    return "".join(out)


def keys_in_export(text):
    out = []
    for line in text.split("\n"):
        if line.startswith("- **"):
            i = 4
            while line[i : i + 2] != "**":
                i += 2 if line[i] == "\\" else 1
            out.append(md_unescape(line[4:i]))
    return out


# --- an empty store ------------------------------------------------------------
t.eq(bentoclaw.search("anything"), [], "search of an empty store")
t.eq(bentoclaw.export_memory(), "# Memory\n\n", "export of an empty store")
t.eq(bentoclaw.forget("nothing"), False, "forget of an absent key")
t.eq(bentoclaw.pin("nothing"), False, "pin of an absent key")
t.eq(bentoclaw.import_memory(""), 0, "import of an empty text")
t.eq(bentoclaw.import_memory("# Memory\n\nsome words\n"), 0, "import of a text without pairs")

# --- arguments -------------------------------------------------------------------
t.raises(TypeError, bentoclaw.search, 5, what="search(int)")
t.raises(TypeError, bentoclaw.search, b"wifi", what="search(bytes)")
t.raises(TypeError, bentoclaw.search, "x", "3", what="search n=str")
t.raises(TypeError, bentoclaw.search, "x", 2.0, what="search n=float")
t.raises(ValueError, bentoclaw.search, "x", 0, what="search n=0")
t.raises(ValueError, bentoclaw.search, "x", -1, what="search n=-1")
t.raises(ValueError, bentoclaw.search, "x", -(10**30), what="search n=-big")
t.raises(ValueError, bentoclaw.search, "a\x00b", what="search NUL")
t.raises(ValueError, bentoclaw.search, b"\xed\xa0\x80".decode(), contains="UTF-8", what="search surrogate")
t.raises(TypeError, bentoclaw.forget, 1, what="forget(int)")
t.raises(ValueError, bentoclaw.forget, "", contains="CLAW_MEM_KEY_MAX")
t.raises(ValueError, bentoclaw.forget, "k" * 32, contains="CLAW_MEM_KEY_MAX")
t.raises(ValueError, bentoclaw.forget, "ก" * 11, contains="CLAW_MEM_KEY_MAX")
t.raises(TypeError, bentoclaw.pin, 5, what="pin(int)")
t.raises(TypeError, bentoclaw.pin, "k", "yes", what="pin on=str")
t.raises(ValueError, bentoclaw.pin, "k" * 32, contains="CLAW_MEM_KEY_MAX")
t.raises(TypeError, bentoclaw.import_memory, 5, what="import(int)")
t.raises(TypeError, bentoclaw.import_memory, b"- a: b", what="import(bytes)")
t.raises(ValueError, bentoclaw.import_memory, "- a: b\x00", what="import NUL")
t.raises(TypeError, lambda: bentoclaw.import_memory("- a: b", skipped=5), what="skipped=int")
t.raises(TypeError, lambda: bentoclaw.import_memory("- a: b", strict="yes"), what="strict=str")
t.eq(bentoclaw.recall("a"), None, "a refused import wrote nothing")

# --- search ----------------------------------------------------------------------
PAIRS = [
    ("wifi_password", "hunter2 (the 5 GHz network)"),
    ("cat_name", "Mali, an orange cat"),
    ("แมว", "ชื่อมะลิ สีส้ม"),
    ("ทันตแพทย์", "หมออนงค์ วันที่ 3 มีนาคม"),
    ("owner", "Somchai"),
    ("แม่", "คุณแม่ชื่อสมศรี"),
]
for k, v in PAIRS:
    bentoclaw.remember(k, v)
hits = bentoclaw.search("what is my wifi password?")
t.check(hits and hits[0][0] == "wifi_password", "English query: wifi first", hits)
t.check(all(type(h) is tuple and len(h) == 3 for h in hits), "hits are 3-tuples", hits)
t.check(all(type(h[0]) is str and type(h[1]) is str and type(h[2]) is int for h in hits), "(str, str, int)", hits)
t.check(all(0 < h[2] <= 1000 for h in hits), "scores in 1..1000", hits)
t.check(all(hits[i][2] >= hits[i + 1][2] for i in range(len(hits) - 1)), "best first", hits)
t.eq(hits[0][1], "hunter2 (the 5 GHz network)", "the hit carries the value")
hits = bentoclaw.search("แมวของฉันชื่ออะไร")
t.check(hits and hits[0][0] == "แมว", "Thai query: แมว first", hits)
hits = bentoclaw.search("หมอฟันนัดวันไหน ทันตแพทย์")
t.check(hits and hits[0][0] == "ทันตแพทย์", "Thai query: dentist first", hits)
# Vowel and tone marks do not count: "แม" finds "แม่".
hits = bentoclaw.search("แม")
t.check(any(h[0] == "แม่" for h in hits), "a query without the tone mark finds แม่", hits)
t.eq(len(bentoclaw.search("wifi cat owner แมว", 1)), 1, "n=1 gives one hit")
t.eq(bentoclaw.search(""), [], "an empty query matches nothing")
far = bentoclaw.search("zzqq xjvk")
t.check(all(h[2] < 200 for h in far), "an unrelated query scores low at most (hashed bigrams may collide)", far)
t.eq(bentoclaw.search(query="wifi password", n=2)[0][0], "wifi_password", "keyword arguments")
big = bentoclaw.search("wifi", 10**30)
t.check(big and big[0][0] == "wifi_password", "a huge n is capped, not refused", big)

# --- forget ------------------------------------------------------------------------
t.eq(bentoclaw.forget("cat_name"), True, "forget an existing key")
t.eq(bentoclaw.recall("cat_name"), None, "recall after forget")
t.eq(bentoclaw.forget("cat_name"), False, "forget it again: False")
t.check(all(h[0] != "cat_name" for h in bentoclaw.search("cat name Mali orange", 32)), "search no longer finds it")
t.eq(bentoclaw.forget("แมว"), True, "forget a Thai key")
t.eq(bentoclaw.recall("แมว"), None, "Thai key gone")
t.eq(bentoclaw.recall("wifi_password"), "hunter2 (the 5 GHz network)", "other keys untouched")

# --- pin ------------------------------------------------------------------------------
t.eq(bentoclaw.pin("owner"), True, "pin an existing key")
t.check("- **owner** (pinned): Somchai\n" in bentoclaw.export_memory(), "export marks it", bentoclaw.export_memory())
t.eq(bentoclaw.pin("owner", True), True, "pinning again is True")
t.eq(bentoclaw.remember("owner", "Somchai Jaidee"), True, "replace a pinned value")
t.check("- **owner** (pinned): Somchai Jaidee\n" in bentoclaw.export_memory(), "a replaced value keeps its pin")
t.eq(bentoclaw.pin("owner", on=False), True, "unpin with on=False")
t.check("- **owner**: Somchai Jaidee\n" in bentoclaw.export_memory(), "unpinned in the export")
t.eq(bentoclaw.pin("ทันตแพทย์", 1), True, "pin a Thai key (on=1)")
t.eq(bentoclaw.recall("ทันตแพทย์"), "หมออนงค์ วันที่ 3 มีนาคม", "pinning keeps the value")
t.eq(bentoclaw.pin("ทันตแพทย์", 0), True, "unpin (on=0)")

# --- export / import round trip with hostile text -------------------------------------------
wipe()
TRICKY = [
    ("a*b", "**bold** and *it*"),
    ("key:with:colons", "value: with: colons"),
    ("a:", "key ends with a colon"),
    ("x (pinned)", "a key that ends like the marker"),
    ("lines", "one\ntwo\r\nthree\tfour"),
    ("back\\slash", "ends with a backslash \\"),
    ("literal", "\\n is not a newline, \\x41 not A, \\* not a star"),
    ("spaces", "  leading and trailing  "),
    (" k ", "key with spaces at both ends"),
    ("md", "# not a heading\n- not an item\n> not a quote\n<!-- not a comment -->"),
    ("links", "[text](http://x) `code` ~~gone~~ <b>html</b> | pipe"),
    ("under_score", "_emph_ snake_case __dunder__ _"),
    ("ctrl", "bell\x07 esc\x1b del\x7f"),
    ("ไทย", "ภาษาไทย ๑๒๓ ก่อน ค่ะ"),
    ("emoji", "\U0001F408 cat \U0001F4F6"),
    ("empty", ""),
    ("v(pinned)", "(pinned)"),
    ("k" * 31, "v" * 127),
    ("nl127", "\n" * 127),
]
for k, v in TRICKY:
    t.eq(bentoclaw.remember(k, v), True, "remember %r" % k)
for k in ("a*b", "x (pinned)", "ไทย", "nl127"):
    bentoclaw.pin(k)
exported = bentoclaw.export_memory()
print("export of the tricky store: %d bytes, %d lines" % (len(exported), exported.count("\n")))
t.check(exported.startswith("# Memory\n\n"), "export starts with the heading")
body = exported.split("\n")[2:-1]
t.check(len(body) == len(TRICKY), "one line per pair (newlines escaped)", body)
t.check(all(line.startswith("- **") for line in body), "every line is a bold list item", body)
t.check("- **a\\*b** (pinned): \\*\\*bold\\*\\* and \\*it\\*\n" in exported, "stars escaped, pin marked", exported)
t.check("- **under_score**: \\_emph\\_ snake_case \\_\\_dunder\\_\\_ \\_\n" in exported, "underscores escaped only at word edges", exported)
t.check("- **spaces**: \\x20 leading and trailing \\x20\n" in exported, "edge spaces kept", exported)
t.check("- **empty**:\n" in exported, "empty value", exported)
t.check("- **ไทย** (pinned): ภาษาไทย ๑๒๓ ก่อน ค่ะ\n" in exported, "Thai kept as is", exported)
# Import into an empty store gives back every byte and every pin.
for k, _ in TRICKY:
    bentoclaw.forget(k)
t.eq(bentoclaw.export_memory(), "# Memory\n\n", "store emptied")
skipped = []
t.eq(bentoclaw.import_memory(exported, skipped=skipped), len(TRICKY), "import counts every pair")
t.eq(skipped, [], "nothing skipped")
for k, v in TRICKY:
    t.eq(bentoclaw.recall(k), v, "round trip of %r" % k)
t.eq(bentoclaw.export_memory(), exported, "export -> import -> export is identical")
# Importing the same text again changes nothing and writes nothing.
bdev.reset_counters()
t.eq(bentoclaw.import_memory(exported), len(TRICKY), "re-import")
t.eq(bdev.bytes_written, 0, "re-importing an identical store writes nothing")
t.eq(bentoclaw.export_memory(), exported, "still identical")

# --- hand-edited files ---------------------------------------------------------------------
wipe()
HAND = "\r\n".join([
    "# My device notes",  # 1 other heading
    "",  # 2
    "Things the assistant should know:",  # 3 paragraph: skipped
    "",  # 4
    "## People",  # 5
    "- name: Somchai",  # 6 plain
    "* wife: Somying",  # 7 star bullet
    "+ son : Ton ",  # 8 plus bullet, spaces
    "   - indented: yes",  # 9
    "- **dog:** Khao, a white dog",  # 10 colon inside the bold
    "- **bold key**   :   spaced",  # 11
    "- boss (pinned): Khun Anan",  # 12 plain pin marker
    "<!-- a comment",  # 13
    "- hidden: in the comment",  # 14
    "-->",  # 15
    "---",  # 16 rule
    "- no colon here",  # 17 skipped
    "- **unclosed: x",  # 18 skipped
    "- " + "k" * 32 + ": too long key",  # 19 skipped
    "- long: " + "v" * 128,  # 20 skipped
    "- thai_long: " + "ก" * 43,  # 21 skipped (129 bytes)
    "- nul: a\\x00b",  # 22 skipped
    "- : empty key",  # 23 skipped
    "- escaped\\: colon: yes",  # 24 key "escaped: colon"
    "- url: http://example.com/a_b",  # 25 value with colons
    "- name: Somchai Jaidee",  # 26 duplicate: last wins
    "1. numbered: no",  # 27 skipped
    "- ท่าน: คุณยาย",  # 28 Thai plain
])
skipped = []
n = bentoclaw.import_memory(HAND, skipped=skipped)
print("hand-edited import: %d pairs, skipped %r" % (n, skipped))
t.eq([s[0] for s in skipped], [3, 17, 18, 19, 20, 21, 22, 23, 27], "skipped line numbers")
t.check(all(type(s[1]) is str and s[1] for s in skipped), "each skip has a reason", skipped)
t.eq(dict(skipped).get(19), "key must be 1..31 bytes (CLAW_MEM_KEY_MAX)", "reason names the key limit")
t.eq(dict(skipped).get(20), "value must be 0..127 bytes (CLAW_MEM_VAL_MAX)", "reason names the value limit")
want = {
    "name": "Somchai Jaidee",
    "wife": "Somying",
    "son": "Ton",
    "indented": "yes",
    "dog": "Khao, a white dog",
    "bold key": "spaced",
    "boss": "Khun Anan",
    "escaped: colon": "yes",
    "url": "http://example.com/a_b",
    "ท่าน": "คุณยาย",
}
t.eq(n, len(want), "import returns the distinct pairs")
for k, v in want.items():
    t.eq(bentoclaw.recall(k), v, "hand-edited %r" % k)
t.eq(bentoclaw.recall("hidden"), None, "lines inside a comment are ignored")
t.check("- **boss** (pinned): Khun Anan\n" in bentoclaw.export_memory(), "plain pin marker honoured")
# strict: the first bad line raises, nothing is written.
before = bentoclaw.export_memory()
t.raises(ValueError, lambda: bentoclaw.import_memory("- fresh: 1\nbad line\n- other: 2", strict=True), text="line 2: not a list item", what="strict: bad line")
t.raises(ValueError, lambda: bentoclaw.import_memory("- fresh: 1\n- " + "k" * 32 + ": v", strict=True), contains="CLAW_MEM_KEY_MAX", what="strict: long key")
t.eq(bentoclaw.export_memory(), before, "a strict failure writes nothing")
t.eq(bentoclaw.import_memory("- fresh: 1\n\n# x\n- other: 2", strict=True), 2, "strict import of a clean text")
# A line without a marker unpins (the file's state wins for the keys it lists).
t.eq(bentoclaw.import_memory("- boss: Khun Anan"), 1, "re-import boss without the marker")
t.check("- **boss**: Khun Anan\n" in bentoclaw.export_memory(), "unpinned by the import")
# 127 escaped bytes fit, 128 do not.
t.eq(bentoclaw.import_memory("- esc: " + "\\n" * 127), 1, "127 escaped newlines fit")
t.eq(bentoclaw.recall("esc"), "\n" * 127, "and unescape")
sk = []
t.eq(bentoclaw.import_memory("- esc: " + "\\n" * 128, skipped=sk), 0, "128 do not")
t.eq(sk, [(1, "value must be 0..127 bytes (CLAW_MEM_VAL_MAX)")], "skipped with the reason")

# --- capacity (32 keys) -------------------------------------------------------------------------
wipe()
for i in range(30):
    bentoclaw.remember("k%02d" % i, "v%02d" % i)
before = bentoclaw.export_memory()
three = "- n1: a\n- n2: b\n- n3: c\n"
t.raises(ValueError, bentoclaw.import_memory, three, contains="CLAW_MEM_MAX_ENTRIES", what="30 + 3 new keys")
t.eq(bentoclaw.export_memory(), before, "a refused import writes nothing")
t.eq(bentoclaw.import_memory("- n1: a\n- n2: b\n- k00: replaced\n- n1: again\n"), 3, "30 + 2 new + 1 replaced (a key twice counts once)")
t.eq(bentoclaw.recall("n1"), "again", "the last line of a key wins")
t.eq(bentoclaw.recall("k00"), "replaced", "an existing key replaced")
t.eq(bentoclaw.remember("n3", "c"), False, "the store is full")
t.eq(bentoclaw.import_memory("- k01: still possible\n"), 1, "replacing works when full")
t.raises(ValueError, bentoclaw.import_memory, "- n3: c\n", contains="CLAW_MEM_MAX_ENTRIES", what="a new key when full")
many = "".join("- m%02d: note %02d\n" % (i, i) for i in range(33))
wipe()
t.raises(ValueError, bentoclaw.import_memory, many, contains="CLAW_MEM_MAX_ENTRIES", what="33 keys into an empty store")
t.eq(bentoclaw.export_memory(), "# Memory\n\n", "nothing written")
t.eq(bentoclaw.import_memory(many[: many.index("- m32")]), 32, "32 keys fit")
hits = bentoclaw.search("note", 100)
t.eq(len(hits), MAX, "search n is capped at CLAW_MEMORY_SEARCH_MAX")
t.eq(len(bentoclaw.search("note")), 5, "the default n is 5")

# --- flash write failures ---------------------------------------------------------------------
before = bentoclaw.export_memory()
bdev.fail_writes = True
t.eq(bentoclaw.forget("m00"), False, "forget with failing writes: False")
t.eq(bentoclaw.pin("m00"), False, "pin with failing writes: False")
e = t.raises(OSError, bentoclaw.import_memory, "- m00: changed\n", what="import with failing writes")
t.check(e is not None and "line 1" in str(e), "the error names the line", e)
bdev.fail_writes = False
t.eq(bentoclaw.export_memory(), before, "the store is as before")
bdev.fail_reads = True
t.eq(bentoclaw.search("note"), [], "an unreadable store: no hits")
bdev.fail_reads = False

# --- build_context: pinned and relevant memory when the store does not fit -----------------------
wipe()
t.eq(rig.connect(bentoclaw), True, "connect")
bentoclaw.remember("name", "Somchai")
bentoclaw.remember("city", "Chiang Mai")
bentoclaw.session_clear()
bentoclaw.ask("hello")
ctx = rig.backend_last()["body_json"]["context"]
t.check("- name: Somchai\n- city: Chiang Mai\n" in ctx, "a small store is injected whole, in store order", ctx)
wipe()

FILLER_TOPICS = [
    "garden", "bicycle", "library", "printer", "recipe", "holiday", "market", "painting",
    "concert", "plumber", "insurance", "football", "laundry", "battery", "umbrella", "notebook",
    "calendar", "elevator", "postcard", "harvest", "museum", "ticket", "lantern", "orchard",
    "ferry", "sandals", "chess", "kettle", "balcony",
]
def filler(i, topic):
    # Every filler line has the same length, so "each that fits" takes a
    # prefix of the ranking.
    key = "household_reminder_%02d" % i
    v = "Reminder about the %s: nothing important here, just a long filler line to use space " % topic
    v = (v + "." * 127)[:127]
    return key, v

# Store order: wifi (oldest), 14 fillers, owner (pinned), 15 fillers, แมว (newest).
store = []
store.append(("wifi_password", "the guest wifi password is mango-tree-42; the router is in the hall cabinet, admin page 192.168.1.1"))
for i, topic in enumerate(FILLER_TOPICS[:14]):
    store.append(filler(i, topic))
store.append(("owner", "Somchai Jaidee"))
for i, topic in enumerate(FILLER_TOPICS[14:]):
    store.append(filler(14 + i, topic))
store.append(("แมว", "ชื่อมะลิ สีส้ม ชอบนอนบนโซฟา"))
t.eq(len(store), 32, "32 keys")
for k, v in store:
    t.eq(bentoclaw.remember(k, v), True, "remember %s" % k)
bentoclaw.pin("owner")
mem_bytes = len("Memory:\n") + sum(len(("- %s: %s\n" % kv).encode()) for kv in store)
print("memory section if everything fit: %d bytes; CONTEXT_MAX %d" % (mem_bytes, bentoclaw.CONTEXT_MAX))
t.check(mem_bytes > bentoclaw.CONTEXT_MAX, "the store is larger than the context budget", mem_bytes)


def context_for(question):
    bentoclaw.session_clear()  # the query is then the question alone
    bentoclaw.ask(question)
    ctx = rig.backend_last()["body_json"]["context"]
    mem = ctx[: ctx.index("Conversation:\n")] if "Conversation:\n" in ctx else ctx
    lines = [l for l in mem.split("\n")[1:] if l.startswith("- ")]
    return ctx, lines


SCORE_STEP = 4


def check_ranking(question, lines):
    # Same query as build_context (the newest turn only), same scores.
    score = {h[0]: h[2] for h in bentoclaw.search(question, 32)}
    inside = set(l[2 : l.index(": ")] for l in lines)
    rest = [k for k, _ in store if k not in inside]
    # build_context keeps a score at SCORE_STEP resolution (one byte per
    # line, src/context.rs); within a step the newer line wins.
    lo = min([score.get(k, 0) // SCORE_STEP for k in inside if k != "owner"] or [0])
    hi = max([score.get(k, 0) // SCORE_STEP for k in rest] or [0])
    t.check(lo >= hi, "nothing left out ranks above what was taken", question, lo, hi,
            [(k, score.get(k, 0), k in inside) for k, _ in store])
    return inside, rest


for question, key in (("what is my wifi password?", "wifi_password"), ("แมวของฉันชื่ออะไร", "แมว")):
    ctx, lines = context_for(question)
    inside, rest = check_ranking(question, lines)
    print("\"%s\": %d of 32 memory lines in a %d-byte context; left out: %s" % (question, len(lines), len(ctx.encode()), ", ".join(rest)))
    t.check(len(ctx.encode()) < bentoclaw.CONTEXT_MAX, "the context fits its buffer")
    t.check(0 < len(lines) < 32, "only part of the store fits", len(lines))
    t.check(key in inside, "the relevant key %r is in the context" % key, ctx)
    t.check("owner" in inside, "the pinned key is in the context", ctx)
    t.check(ctx.endswith("user: %s\n" % question), "the question is the newest turn", ctx[-80:])
    order = [k for k, _ in store if k in inside]
    t.eq([l[2 : l.index(": ")] for l in lines], order, "chosen lines are printed in store order")
bentoclaw.disconnect()

# --- restart: the same store in a second process --------------------------------------------------
rig.mount(fbdev, mkfs=True)
bentoclaw.session_clear()
for k, v in RESTART_PAIRS:
    t.eq(bentoclaw.remember(k, v), True, "remember %s on the image" % k)
t.eq(bentoclaw.pin(RESTART_PINNED), True, "pin on the image")
t.eq(bentoclaw.forget(RESTART_FORGOTTEN), True, "forget on the image")
t.eq(bentoclaw.export_memory(), expected_restart_export(), "export before the restart")
cmd = "%s %s child" % (rig.mpy_path(), script)
print("restarting:", cmd)
rc = os.system(cmd)
t.eq(rc, 0, "the second interpreter's checks passed")
os.system("rm -f %s" % IMAGE)
t.done()
