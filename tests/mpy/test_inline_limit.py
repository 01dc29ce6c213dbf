# test_inline_limit.py — which of bentoclaw's files stay inline on the BENTO
# board's mount (issue 22): VfsLfs2(bdev, progsize=512, readsize=512) on
# 256 KiB blocks, where LittleFS keeps a file in its directory's metadata
# while it is at most 1,022 bytes (inline_max = min(cache 2048, attr_max
# 1022, block/8)). A file past that gets a data block of its own, and each
# rewrite of it erases a 256 KiB block.
#
# After every operation of each workload, the size of every file of the
# module is taken; the test checks:
#  * the memory shards and the config file stay inline whatever their
#    content (a shard folds at 220 bytes; the config is ~240 bytes);
#  * a session slot (one flush's batch) stays inline for exchanges of
#    messages up to the 255-byte cut that JSON writes as they are (Thai,
#    plain text): only escapes (quotes, backslashes, control characters,
#    up to 6 bytes each) can take a batch past 1,022 bytes;
#  * the bases (a session fold writes the whole ring, a memory fold the
#    whole store) pass the limit when the ring or the store is large: the
#    test prints their largest sizes and what one rewrite of an outlined
#    base costs ("INLINE ..." lines), as docs/DESIGN.md says.
# needs: backend heap
import os
import vfs
import claw_rig as rig
import bentoclaw

t = rig.Checker("inline-limit")
BLOCK = 256 * 1024
OPTS = {"progsize": 512, "readsize": 512}
INLINE_MAX = 1022

try:
    vfs.umount("/")
except OSError:
    pass
dev = rig.RamBlockDev(8, block_size=BLOCK)
vfs.VfsLfs2.mkfs(dev, **OPTS)
vfs.mount(vfs.VfsLfs2(dev, **OPTS), "/")
os.chdir("/")

SESSION = ".bentoclaw_session"
MEMORY = ".bentoclaw_memory"


def kind(name):
    if name.startswith(MEMORY + "."):
        return "memory shard" if name[len(MEMORY) + 1 :].isdigit() else "memory temporary"
    if name == MEMORY:
        return "memory base"
    if name.startswith(SESSION + "."):
        return "session slot" if name[len(SESSION) + 1 :].isdigit() else "session temporary"
    if name == SESSION:
        return "session base"
    if name.startswith(".bentoclaw_config"):
        return "config"
    return None


def sizes():
    out = {}
    for name in os.listdir("/"):
        k = kind(name)
        if k is not None:
            out[k] = max(out.get(k, 0), os.stat("/" + name)[6])
    return out


def content(name):
    try:
        with open("/" + name, "rb") as f:
            return f.read()
    except OSError:
        return None


def run(label, ops, base=None):
    """Runs each operation; returns the largest size of each kind of file
    seen after any of them, and what the operations that rewrote `base`
    (a file name) past the limit cost: (count, programmed, erases)."""
    most = {}
    cost = [0, 0, 0]
    for op in ops:
        before = content(base) if base else None
        b0, e0 = dev.bytes_written, dev.erases
        op()
        dp, de = dev.bytes_written - b0, dev.erases - e0
        for k, n in sizes().items():
            most[k] = max(most.get(k, 0), n)
        if base:
            after = content(base)
            if after is not None and after != before and len(after) > INLINE_MAX:
                cost[0] += 1
                cost[1] += dp
                cost[2] += de
    for k in sorted(most):
        print("INLINE %s | %s | %d" % (label, k, most[k]))
    return most, cost


def print_cost(what, cost):
    n, p, e = cost
    print("INLINE cost | %s | %d rewrites past the limit: %d B programmed, %d erases (%.2f a rewrite)"
          % (what, n, p, e, e / n if n else 0))


# --- memory: a full store of the largest keys and values, edited ------------------------------

KEYS = ["k%02d" % i + "_" * 28 for i in range(32)]  # 31 bytes each
assert all(len(k) == 31 for k in KEYS)


def value(i, salt):
    return ("v%03d-%d " % (i, salt) + "x" * 127)[:127]


def mem_ops():
    ops = [lambda i=i: bentoclaw.remember(KEYS[i], value(i, 0)) for i in range(32)]
    for j in range(200):
        i = (j * 7) % 32
        ops.append(lambda i=i, j=j: bentoclaw.remember(KEYS[i], value(i, j)))
        if j % 25 == 24:
            ops.append(lambda i=i: bentoclaw.forget(KEYS[i]))
            ops.append(lambda i=i, j=j: bentoclaw.remember(KEYS[i], value(i, j + 1)))
    return ops


def escaped_ops():
    # Values that JSON escapes (a quote is 2 bytes on flash, a backslash 2,
    # a control character 6): shards still fold at 220 bytes.
    return [lambda j=j: bentoclaw.remember(KEYS[j % 32], ('"\\\x01' * 43)[:127]) for j in range(40)]


mem, mem_cost = run("memory, 32 keys of 31 + 127 bytes", mem_ops(), MEMORY)
t.check(0 < mem.get("memory shard", 0) <= INLINE_MAX, "every memory shard stays inline", mem.get("memory shard"))
t.check(mem.get("memory base", 0) > INLINE_MAX, "a full store's base passes the limit (docs/DESIGN.md says so)",
        mem.get("memory base"))
print_cost("memory base (fold), 32 keys of 31 + 127 bytes", mem_cost)
t.check(mem_cost[0] > 0 and mem_cost[2] >= mem_cost[0], "each rewrite of an outlined base erases a block", mem_cost)
mem, mem_cost = run("memory, values of 127 bytes that JSON escapes", escaped_ops(), MEMORY)
t.check(0 < mem.get("memory shard", 0) <= INLINE_MAX, "every memory shard stays inline, escaped values too",
        mem.get("memory shard"))
print_cost("memory base (fold), escaped values", mem_cost)

# --- session: exchanges at the 255-byte cut ----------------------------------------------------

t.check(rig.connect(bentoclaw), "connect to the backend")
bentoclaw.config(daily_reset_hour=-1)
THAI = "สวัสดีครับ ช่วยเปิดปั๊มน้ำ " * 20  # 3 bytes a character: past the cut


def exchange(prompt, reply):
    def op():
        rig.backend_control(reply=reply)
        bentoclaw.ask(prompt)
    return op


plain = [exchange("%03d " % i + THAI, "%03d " % i + THAI) for i in range(40)]
ses, ses_cost = run("session, messages of 255 bytes that need no escape", plain, SESSION)
t.check(0 < ses.get("session slot", 0) <= INLINE_MAX, "a slot of two 255-byte messages stays inline",
        ses.get("session slot"))
t.check(ses.get("session base", 0) <= INLINE_MAX, "the base of a ring of such exchanges stays inline",
        ses.get("session base"))

bentoclaw.session_clear()
QUOTES = '"' * 300
escaped = [exchange("%03d " % i + QUOTES, "%03d " % i + QUOTES) for i in range(20)]
esc, esc_cost = run("session, messages of 255 quotes (2 bytes each on flash)", escaped, SESSION)
t.check(esc.get("session slot", 0) > INLINE_MAX, "a slot of escape-heavy messages passes the limit (documented)",
        esc.get("session slot"))
print_cost("session base (fold), escaped messages", esc_cost)

# --- config: every option set ------------------------------------------------------------------

cfg, _ = run("config, every option", [lambda: bentoclaw.config(
    compact_threshold_pct=99, compact_min_msgs=10, compact_keep=7, context_budget=4096,
    idle_timeout_s=86400, daily_reset_hour=23, auto_compact=True, backend_summary=True,
    send_tools=True, archive=True, compact_before_drop=True)])
t.check(0 < cfg.get("config", 0) <= INLINE_MAX, "the config file stays inline", cfg.get("config"))

bentoclaw.disconnect()
t.done()
