# test_vendor_persistence.py — persistence under the vendor binding, which
# never calls claw_session_flush() (issue 20). A "power cut" here: the block
# device's bytes as they are, mounted again, and the RAM state gone (the
# next call runs ensure_init again).
#
#  * Memory is written at once: every remember() survives with no flush.
#  * Turns are RAM until the firmware's idle point flushes them (vclaw.idle():
#    the one line of docs/BUILD.md): without it a power cut loses the turns
#    of that boot, never anything already on flash; with it they survive.
#  * A soft reset is no power cut: the vendor's ensure_init does not run
#    again, the RAM ring lives on and the next idle point writes it.
#  * session_clear() deletes at once: the old conversation never comes back.
import vrig
import vclaw

rig = vrig.rig
t = rig.Checker("vendor-persistence")


def power_cut(dev):
    copy = rig.RamBlockDev(dev.blocks, bytes(dev.data))
    vrig.boot(vclaw, copy)
    return copy


def turns():
    return vrig.conversation(vclaw.history())


dev = rig.mount_ram(64)
vclaw._hard_boot()

# Boot 1: memory and turns, no flush anywhere.
t.eq(vclaw.remember("name", "Mali"), True, "boot 1: remember()")
vclaw.execute("gpio_read", None)
vclaw.ask("hello", "hi")
t.eq(vclaw._dirty(), True, "boot 1: the turns are RAM only")
dev = power_cut(dev)
t.eq(vclaw._recall("name"), "Mali", "memory survives with no flush")
t.eq(turns(), [], "turns never flushed are gone (the idle point was not reached)")

# Boot 2: the idle point flushes.
vclaw.execute("rtc_read", None)
vclaw.ask("what is my name?", "Mali.")
t.eq(vclaw.idle(), True, "boot 2: the idle point's flush")
t.eq(vclaw._dirty(), False, "clean after it")
BOOT2 = ["tool: execute: rtc_read", "user: what is my name?", "assistant: Mali."]
dev = power_cut(dev)
t.eq(turns(), BOOT2, "boot 2's turns survive the power cut")

# Boot 3: more turns and a new pair, never flushed: nothing already written
# is lost.
t.eq(vclaw.remember("city", "Chiang Mai"), True, "boot 3: remember()")
t.eq(vclaw.remember("name", "Somchai"), True, "boot 3: a pair changed")
vclaw.ask("and now?", "Somchai.")
dev = power_cut(dev)
t.eq(turns(), BOOT2, "boot 3's unflushed turns are gone, boot 2's are all there")
t.eq(vclaw._recall("name"), "Somchai", "the changed pair survives")
t.eq(vclaw._recall("city"), "Chiang Mai", "the new pair survives")

# A soft reset: ensure_init does not run again, the RAM ring lives on. The
# port's file slots may hold a previous VM's files: the next call forgets
# them (else every open would fail, EMFILE).
vclaw.ask("before the soft reset", "ok")
rig.mount(dev, mkfs=False)  # the board's boot script mounts "/" again
vclaw._stale_files()
t.eq(vclaw.remember("after", "the reset"), True, "a call after the soft reset: stale file slots forgotten")
t.eq(vclaw._recall("after"), "the reset", "and read back")
t.eq(turns()[-2:], ["user: before the soft reset", "assistant: ok"], "the RAM ring survives a soft reset")
t.eq(vclaw.idle(), True, "the next idle point writes it")
dev = power_cut(dev)
t.eq(turns(), BOOT2 + ["user: before the soft reset", "assistant: ok"], "and it is on flash")

# session_clear() with no flush: the old conversation never comes back.
vclaw.session_clear()
t.eq(turns(), [], "cleared")
dev = power_cut(dev)
t.eq(turns(), [], "the cleared conversation does not come back after a power cut")
t.eq(vclaw._recall("name"), "Somchai", "memory untouched by the clear")
t.eq(vclaw.idle(), True, "an idle point with nothing dirty")
t.done()
