# test_seq_wrap.py — issue 23: session files whose "seq" is at the top of
# u32 (4294967290, 4294967294, 4294967295), past it (4294967296, 10^20) or
# not a batch number at all (negative, a fraction, a string, 0), in the base
# or in a slot, written directly with open() on LittleFS. Before the fix,
# every flush() returned True and dirty was False, but after a soft reset the
# turns flushed past the wrap were gone (3 of 9). Now, for every case: the
# base's turns are read, then 9 exchanges (ask(): two turns a batch;
# tool(): one) are flushed, and after each one a soft reset (the core reloads
# the ring from flash) reads back exactly the ring that was in RAM, the turn
# just flushed included; at the end the image is remounted and read again,
# and no file names a number at the top any more (renumbered from 1).
# needs: backend
import claw_rig as rig
import bentoclaw

t = rig.Checker("seq-wrap")
BDEV = rig.mount_ram()
TOP = 4294967295
VALUES = ["4294967290", "4294967294", "4294967295", "4294967296", "100000000000000000000",
          "-5", "1.5", '"x"', "0", "1000"]


def base_text(seq):
    return ('{"role":"user","content":"b0"}\n'
            '{"role":"assistant","content":"b1","end":true,"seq":%s}\n' % seq)


def slot_text(i, seq):
    return '{"role":"user","content":"s%d","end":true,"seq":%s}\n' % (i, seq)


def end_seq(raw):
    """The number of the last end line of a file (None without one)."""
    n = None
    for line in (raw or b"").decode().splitlines():
        if '"end":true' in line and '"seq":' in line:
            digits = line.split('"seq":')[1]
            k = 0
            while k < len(digits) and digits[k].isdigit():
                k += 1
            n = int(digits[:k]) if k else None
    return n


def clean_fs():
    import os
    for p in rig.SESSION_FILES + [rig.SESSION_FILE + ".tmp"]:
        try:
            os.remove(p)
        except OSError:
            pass


def run_case(label, base_seq, slot):
    """slot: None or (index, seq). Returns the losses of the case (0 or 1)."""
    global bentoclaw
    clean_fs()
    with open(rig.SESSION_FILE, "w") as f:
        f.write(base_text(base_seq))
    if slot is not None:
        with open(rig.SESSION_SLOTS[slot[0]], "w") as f:
            f.write(slot_text(slot[0], slot[1]))
    bentoclaw = rig.simulate_soft_reset(bentoclaw)
    rig.classic_session(bentoclaw)
    ok = True
    first = [text for _, text in bentoclaw.session()]
    ok &= t.check(first[:2] == ["b0", "b1"], "%s: the base is read" % label, first)
    ok &= t.eq(rig.connect(bentoclaw), True, "%s: connect" % label)
    for i in range(9):
        if i % 3 == 2:
            bentoclaw.tool("echo", "%s tool %d" % (label, i))
            mine = "echo: %s tool %d" % (label, i)
        else:
            bentoclaw.ask("%s ask %d" % (label, i))
            mine = "%s ask %d" % (label, i)
        ok &= t.eq(bentoclaw.flush(), True, "%s: flush %d" % (label, i))
        ok &= t.eq(bentoclaw.status()["dirty"], False, "%s: clean after flush %d" % (label, i))
        ram = bentoclaw.session()
        bentoclaw = rig.simulate_soft_reset(bentoclaw)
        back = bentoclaw.session()
        if not t.eq(back, ram, "%s: soft reset %d reads the ring back" % (label, i)):
            ok = False
            break
        ok &= t.check(any(text == mine for _, text in back), "%s: turn %d survived" % (label, i), back)
        ok &= t.eq(rig.connect(bentoclaw), True, "%s: connect again" % label)
    ok &= t.eq(bentoclaw.flush(), True, "%s: last flush" % label)
    ram = bentoclaw.session()
    rig.mount(BDEV, mkfs=False)
    bentoclaw = rig.simulate_soft_reset(bentoclaw)
    ok &= t.eq(bentoclaw.session(), ram, "%s: the ring after a remount" % label)
    tops = [p for p in rig.SESSION_FILES if (end_seq(rig.read_file(p)) or 0) >= TOP]
    ok &= t.eq(tops, [], "%s: no file at the top of u32 any more" % label)
    bentoclaw.disconnect()
    return 0 if ok else 1


cases = losses = 0
for v in VALUES:
    cases += 1
    losses += run_case("base %s" % v, v, None)
# Slot files beside a base near the top, in the slot of their number and
# in another one.
for base, slot in [("4294967290", (3, "4294967295")), ("4294967290", (1, "4294967291")),
                   ("5", (3, "4294967295")), ("5", (4, "100000000000000000000")),
                   ("5", (2, "-7")), ("4294967295", (0, "4294967294"))]:
    cases += 1
    losses += run_case("base %s, slot %d %s" % (base, slot[0], slot[1]), base, slot)
print("RELIABILITY: session seq at and past 2^32, negative or not a number (9 flushes, soft reset after each)|%d|%d"
      % (cases, losses))
t.done()
