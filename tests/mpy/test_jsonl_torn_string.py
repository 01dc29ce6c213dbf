# test_jsonl_torn_string.py — a line of a store file that ends inside a
# JSON string (a torn write, a hand edit) costs that line only: the record
# on the next line is read (issue 13, "hostile stores"; src/format/lines/
# promises "the records around it survive").
#
# Found while writing test_export_duplicates: the reader takes the newline
# that ends a torn string as the string's next byte, refuses it as a raw
# control character, and then skips "the rest of the line" — which is the
# whole next line. The same happens after a backslash, inside a \u escape
# and inside a bare scalar (true, 123) cut at the end of its line.
#
# Checked for the memory store (recall(), export_memory()) and the session
# file (the ring after a reboot), for each way a line can end early.
#
# Before any fix (41ae5d2, and main as of this test): the record after a
# line cut inside a string is lost (recall() None, the turn missing).
# targets: unix
import claw_rig as rig
import bentoclaw

t = rig.Checker("jsonl-torn-string")
rig.mount_ram()

TORN = (
    ("cut in a value string", '{"key":"t","value":"tor'),
    ("cut in a key string", '{"key":"t'),
    ("cut in a field name", '{"ke'),
    ("cut after a backslash", '{"key":"t","value":"a\\'),
    ("cut in a \\u escape", '{"key":"t","value":"\\u00'),
    ("cut in a scalar", '{"key":"t","value":"v","pin":tr'),
    ("cut after a complete string", '{"key":"t","value":"v"'),
    ("garbage", "garbage"),
)
cases = 0
losses = 0
for what, torn in TORN:
    cases += 1
    before = t.failed
    with open(rig.MEMORY_FILE, "w") as f:
        f.write('{"key":"a","value":"1"}\n' + torn + '\n{"key":"b","value":"2"}\n{"key":"c","value":"3"}\n')
    t.eq(bentoclaw.recall("a"), "1", "memory, %s: the line before" % what)
    t.eq(bentoclaw.recall("b"), "2", "memory, %s: the line after" % what)
    t.eq(bentoclaw.recall("c"), "3", "memory, %s: the line after that" % what)
    t.eq(bentoclaw.export_memory(), "# Memory\n\n- **a**: 1\n- **b**: 2\n- **c**: 3\n", "memory, %s: export" % what)
    losses += t.failed > before

    cases += 1
    before = t.failed
    session_torn = torn.replace('"key":"t","value"', '"role":"user","content"').replace('"key":"t', '"role":"us')
    with open(rig.SESSION_FILE, "w") as f:
        f.write('{"role":"user","content":"one"}\n{"role":"assistant","content":"two","end":true}\n'
                + session_torn + '\n{"role":"user","content":"three"}\n'
                '{"role":"assistant","content":"four","end":true}\n')
    bentoclaw = rig.simulate_soft_reset(bentoclaw)
    t.eq([c for r, c in bentoclaw.session()], ["one", "two", "three", "four"],
         "session, %s: every whole record is in the ring" % what)
    losses += t.failed > before
print("RELIABILITY: store lines torn inside a JSON string (the next record survives)|%d|%d" % (cases, losses))
t.done()
