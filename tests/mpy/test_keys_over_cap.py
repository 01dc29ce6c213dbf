# test_keys_over_cap.py — issue 23: a store with more keys on flash than the
# cap (32) keeps every key readable and every edit keeps every key. Before
# the fix a shard with more than six records (only a hand edit makes one)
# was ignored whole: of 45 keys on flash 38 were visible, seven hidden (one
# of them written through the API), and the next edit folded the 38 into
# the base for good. Files written directly with open() on LittleFS:
#
#  * a base of ours with 30 pairs, two keys set through remember(), then
#    their shard edited by hand to 10 records (an override of a base pair, a
#    forgotten base key, eight new keys) and another shard with 6 more: 45;
#  * shards holding 64 records in all (past the 48 a load indexes), which a
#    reader streams after the keys new since the base;
#  * a seed-form base (no header) of 40 pairs;
#  * a base and a shard at generation 4294967295 (the fold past it writes
#    generation 0, and no stale shard comes back);
#  * a shard past what the index holds (49 pairs of new keys) with a
#    forgotten base key in it, and one with an override of a base key: the
#    audit found the forget lost (recall() gave the base's value, and the
#    next edit wrote the key back for good) and the context showing the
#    base's stale line where recall() gave the shard's value.
#
# For each: recall() of every key, export_memory() lists each key once with
# recall()'s value, the context (_context()) shows each key at most once
# and only with the value recall() returns, remember() of a new key is
# False while the store holds 32 keys or more, remember() of an existing
# key and forget() are True and keep every other key; after each edit a
# soft reset reads the same store; once under the cap a new key is taken.
import os
import claw_rig as rig
import bentoclaw

t = rig.Checker("keys-over-cap")
rig.mount_ram(512)
CAP = 32


def fnv(key):
    h = 0x811C9DC5
    for b in key.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def shard_of(key):
    return fnv(key) % 8


def keys_of_shard(s, prefix, n):
    out, i = [], 0
    while len(out) < n:
        k = "%s%d" % (prefix, i)
        if shard_of(k) == s:
            out.append(k)
        i += 1
    return out


def pair(k, v, n=0):
    return '{"key":"%s","value":"%s"%s}\n' % (k, v, ',"n":%d' % n if n else "")


def clean():
    for p in rig.MEMORY_FILES + [rig.MEMORY_FILE + ".tmp"]:
        try:
            os.remove(p)
        except OSError:
            pass


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def exported():
    """export_memory() as {key: value} (each key once, or a list when twice)."""
    got, twice = {}, []
    for line in bentoclaw.export_memory().splitlines():
        if line.startswith("- **"):
            k, _, v = line[4:].partition("**: ")
            k = k.replace("\\_", "_")
            if k in got:
                twice.append(k)
            got[k] = v
    return got, twice


def context_memory():
    """The memory lines of the context as [(key, value)] (_context() is the
    text ask() would send, as bytes)."""
    out, on = [], False
    for line in bentoclaw._context().decode().split("\n"):
        if line == "Memory:":
            on = True
        elif on and line.startswith("- "):
            k, _, v = line[2:].partition(": ")
            out.append((k, v))
        elif on:
            break
    return out


def same(want, label):
    """Every key of want recalled with its value, exported once, nothing
    else; the context shows what recall() returns."""
    ok = True
    for k, v in want.items():
        ok &= t.eq(bentoclaw.recall(k), v, "%s: recall(%r)" % (label, k))
    got, twice = exported()
    ok &= t.eq(twice, [], "%s: export lists each key once" % label)
    ok &= t.eq(got, want, "%s: export_memory() = the store" % label)
    lines = context_memory()
    keys = [k for k, _ in lines]
    ok &= t.check(len(lines) > 0, "%s: the context shows memory" % label)
    ok &= t.eq(len(set(keys)), len(keys), "%s: the context shows each key once" % label)
    stale = [(k, v) for k, v in lines if bentoclaw.recall(k) != v]
    ok &= t.eq(stale, [], "%s: the context shows what recall() returns" % label)
    return ok


def soft_reset():
    global bentoclaw
    bentoclaw = rig.simulate_soft_reset(bentoclaw)


def edits_over_the_cap(want, label):
    """Edits on a store over the cap; 0 or 1 (a loss)."""
    ok = t.check(len(want) > CAP, "%s: over the cap (%d keys)" % (label, len(want)))
    soft_reset()
    ok &= same(want, label + ", as written")
    ok &= t.eq(bentoclaw.remember("brand_new", "x"), False, "%s: a new key is refused" % label)
    ok &= same(want, label + ", after the refused key")
    for i, k in enumerate(sorted(want)):
        if len(want) >= CAP and i % 3 != 2:
            ok &= t.eq(bentoclaw.forget(k), True, "%s: forget(%r)" % (label, k))
            del want[k]
        else:
            ok &= t.eq(bentoclaw.remember(k, "replaced %d" % i), True, "%s: remember(%r)" % (label, k))
            want[k] = "replaced %d" % i
        if len(want) >= CAP:
            ok &= t.eq(bentoclaw.remember("brand_new", "x"), False, "%s: still refused" % label)
        soft_reset()
        if not same(want, "%s, after editing %r and a soft reset" % (label, k)):
            return 1
    ok &= t.eq(bentoclaw.remember("brand_new", "x"), True, "%s: under the cap a new key is taken" % label)
    want["brand_new"] = "x"
    soft_reset()
    ok &= same(want, label + ", at the end")
    return 0 if ok else 1


cases = losses = 0

# 1. The store: 45 keys, one shard of 10 records.
clean()
soft_reset()
base = '{"seq":1}\n' + "".join(pair("k%d" % i, "v%d" % i) for i in range(30))
write(rig.MEMORY_FILE, base)
want = {"k%d" % i: "v%d" % i for i in range(30)}
soft_reset()
for k in keys_of_shard(0, "api", 2):
    t.eq(bentoclaw.remember(k, "through the API"), True, "remember(%r)" % k)
    want[k] = "through the API"
shard = rig.read_file(rig.MEMORY_SHARDS[0]).decode()
in_zero = [k for k in sorted(want) if k.startswith("k") and shard_of(k) == 0]
shard += pair(in_zero[0], "over")
want[in_zero[0]] = "over"
shard += '{"key":"%s","del":true}\n' % in_zero[1]
del want[in_zero[1]]
for i, k in enumerate(keys_of_shard(0, "hand", 8)):
    shard += pair(k, "h%d" % i, 3 + i)
    want[k] = "h%d" % i
write(rig.MEMORY_SHARDS[0], shard)
more = '{"seq":1}\n'
for i, k in enumerate(keys_of_shard(5, "more", 6)):
    more += pair(k, "m%d" % i, 20 + i)
    want[k] = "m%d" % i
write(rig.MEMORY_SHARDS[5], more)
t.eq(len(want), 45, "45 keys on flash")
cases += 1
losses += edits_over_the_cap(want, "45 keys, a shard of 10 records")

# 2. 64 records in the shards of the base's generation (the index holds 48).
clean()
write(rig.MEMORY_FILE, '{"seq":7}\n' + "".join(pair("k%d" % i, "v%d" % i) for i in range(4)))
want = {"k%d" % i: "v%d" % i for i in range(4)}
n = 0
for s in range(8):
    text = '{"seq":7}\n'
    for i, k in enumerate(keys_of_shard(s, "s%d_" % s, 8)):
        n += 1
        text += pair(k, "%d.%d" % (s, i), n)
        want[k] = "%d.%d" % (s, i)
    for i in range(4):
        if shard_of("k%d" % i) == s:
            text += pair("k%d" % i, "later")
            want["k%d" % i] = "later"
    write(rig.MEMORY_SHARDS[s], text)
cases += 1
losses += edits_over_the_cap(want, "64 shard records")

# 3. A seed-form base of 40 pairs.
clean()
write(rig.MEMORY_FILE, "".join(pair("k%d" % i, "v%d" % i) for i in range(40)))
cases += 1
losses += edits_over_the_cap({"k%d" % i: "v%d" % i for i in range(40)}, "seed base of 40 pairs")

over_losses = losses


def oversized(s, at, records):
    """Shard s at generation 1: 49 pairs of new keys (the index holds 48
    records), `records` (lines) after the first `at`; {key: value} of the
    49."""
    fill = keys_of_shard(s, "fill", 49)
    text = '{"seq":1}\n'
    for i, k in enumerate(fill):
        if i == at:
            text += "".join(records)
        text += pair(k, "f%d" % i, i + 1)
    write(rig.MEMORY_SHARDS[s], text)
    return {k: "f%d" % i for i, k in enumerate(fill)}


past_cases = past_losses = 0

# 5. A forgotten base key in a shard past the index: it stays forgotten
#    everywhere (recall, export, context), through edits and soft resets.
clean()
write(rig.MEMORY_FILE, '{"seq":1}\n' + "".join(pair("k%d" % i, "v%d" % i) for i in range(10)))
want = {"k%d" % i: "v%d" % i for i in range(1, 10)}
want.update(oversized(shard_of("k0"), 20, ['{"key":"k0","del":true}\n']))
soft_reset()
label = "a del in a shard past the index"
ok = t.eq(bentoclaw.recall("k0"), None, "%s: recall('k0')" % label)
ok &= t.check("k0" not in dict(context_memory()), "%s: no context line for k0" % label)
ok &= t.check("k0" not in exported()[0], "%s: no k0 in export_memory()" % label)
ok &= same(want, label)
ok &= t.eq(bentoclaw.remember("k0", "back"), False, "%s: k0 is a new key, over the cap" % label)
ok &= t.eq(bentoclaw.forget("k0"), False, "%s: forget('k0'): not there" % label)
ok &= t.eq(bentoclaw.remember("k1", "changed"), True, "%s: remember('k1') (a fold)" % label)
want["k1"] = "changed"
ok &= t.check(b'"k0"' not in rig.read_file(rig.MEMORY_FILE), "%s: the fold wrote no k0" % label)
ok &= t.eq(bentoclaw.forget("k2"), True, "%s: forget('k2')" % label)
del want["k2"]
soft_reset()
ok &= t.eq(bentoclaw.recall("k0"), None, "%s: recall('k0') after edits and a soft reset" % label)
ok &= same(want, label + ", after edits and a soft reset")
past_cases += 1
lost = edits_over_the_cap(want, label)
past_losses += 1 if lost or not ok else 0

# 6. An override of a base key early in a shard past the index: the context
#    shows the shard's value only (the base's line gives way to it).
clean()
write(rig.MEMORY_FILE, '{"seq":1}\n' + "".join(pair("k%d" % i, "v%d" % i) for i in range(3)))
want = {"k1": "v1", "k2": "v2", "k0": "new"}
want.update(oversized(shard_of("k0"), 0, [pair("k0", "old"), pair("k0", "new")]))
soft_reset()
label = "an override in a shard past the index"
lines = context_memory()
ok = t.eq(dict(lines).get("k0"), "new", "%s: the context shows the new value" % label)
ok &= t.eq([v for k, v in lines if k == "k0"], ["new"], "%s: and no other for k0" % label)
ok &= t.eq(bentoclaw.recall("k0"), "new", "%s: recall('k0')" % label)
ok &= same(want, label)
ok &= t.eq(bentoclaw.remember("k1", "changed"), True, "%s: remember('k1') (a fold)" % label)
want["k1"] = "changed"
soft_reset()
ok &= t.eq(dict(context_memory()).get("k0"), "new", "%s: after a fold and a soft reset" % label)
ok &= same(want, label + ", after a fold and a soft reset")
past_cases += 1
lost = edits_over_the_cap(want, label)
past_losses += 1 if lost or not ok else 0

# 4. Generation 4294967295 (and past it): the fold after it, and no stale
#    shard of that number coming back.
for g in ("4294967294", "4294967295", "100000000000000000000"):
    clean()
    read_as = g if g == "4294967294" else "4294967295"
    write(rig.MEMORY_FILE, '{"seq":%s}\n' % g + "".join(pair("k%d" % i, "v%d" % i) for i in range(3)))
    x = keys_of_shard(shard_of("k0"), "x", 1)[0]
    write(rig.MEMORY_SHARDS[shard_of("k0")], '{"seq":%s}\n' % read_as + pair("k0", "shard") + pair(x, "new", 1))
    want = {"k0": "shard", "k1": "v1", "k2": "v2", x: "new"}
    soft_reset()
    ok = same(want, "generation %s" % g)
    for i, k in enumerate(["k1", "k0", "k2", "k1", "k0", x]):
        v = '"' * 120 if i % 2 == 0 else "e%d" % i  # a value too big for a shard: a fold
        ok &= t.eq(bentoclaw.remember(k, v), True, "generation %s: remember %d" % (g, i))
        want[k] = v
        soft_reset()
        ok &= same(want, "generation %s: after edit %d and a soft reset" % (g, i))
    head = rig.read_file(rig.MEMORY_FILE).decode().splitlines()[0]
    ok &= t.check(int(head[7:-1]) < 10, "generation %s: numbered from 0 again" % g, head)
    cases += 1
    losses += 0 if ok else 1

print("RELIABILITY: memory store over the 32-key cap (hand-edited shards, 64 shard records, 40-pair seed base): no key hidden or dropped|3|%d" % over_losses)
print("RELIABILITY: memory generation at and past 2^32: no stale shard back, no edit lost|3|%d" % (losses - over_losses))
print("RELIABILITY: memory store with a shard past the index: a forgotten key never back, no stale value in the context|%d|%d" % (past_cases, past_losses))
t.done()
