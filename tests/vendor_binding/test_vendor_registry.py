# test_vendor_registry.py — the vendor binding's 32-tool registry on our
# archive (issue 20): ensure_init installs each tool's limit with
# claw_rate_set(), then execute() (breaker -> trust -> rate check -> rate
# record) is called for every tool until it is refused. Each tool must be
# admitted exactly its own limit of calls in the minute and refused the next
# one with the vendor's text: none refused for lack of room in the rate table
# (its first call passes), none unlimited (the call past the limit fails).
# The vendor's own limiter has 16 slots and leaves tools 17..32 unlimited.
import vrig
import vclaw

rig = vrig.rig
t = rig.Checker("vendor-registry")
rig.mount_ram()

tools = vclaw.tools()
t.eq(len(tools), 32, "the registry holds 32 tools")
t.eq(vclaw.TOOL_COUNT, 32, "TOOL_COUNT")
t.eq(len(set(x["name"] for x in tools)), 32, "32 distinct names")
t.eq(sum(x["rate_per_min"] for x in tools), 543, "the registry's limits")

room = []  # tools whose first call was refused
unlimited = []  # tools admitted past their limit
for i, tool in enumerate(tools):
    name, limit = tool["name"], tool["rate_per_min"]
    admitted = 0
    refusal = None
    for n in range(limit + 1):
        try:
            r = vclaw.execute(name, None)
        except RuntimeError as e:
            refusal = (n, str(e))
            break
        admitted += 1
        if n == 0:
            t.eq(r, {"tool": name, "status": "ready", "risk": tool["risk"], "confirm": tool["confirm"]},
                 "#%d %s: execute() returns the vendor's dict" % (i + 1, name))
    if admitted == 0:
        room.append(name)
    if refusal is None:
        unlimited.append(name)
    t.eq(admitted, limit, "#%d %s: admitted at its own limit of %d/min" % (i + 1, name, limit))
    t.eq(refusal, (limit, vrig.RATE_TEXT), "#%d %s: call %d refused, rate limited" % (i + 1, name, limit + 1))
t.eq(room, [], "no tool refused for lack of room in the rate table")
t.eq(unlimited, [], "no tool unlimited")

# Each admitted call added its TOOL turn; the ring keeps the newest 10.
conv = vrig.conversation(vclaw.history())
t.eq(len(conv), 10, "the ring holds 10 turns")
t.eq(conv[-1], "tool: execute: potentiometer_read", "the newest turn is the last tool's")
st = vclaw.status()
t.eq(st["exec_count"], 543, "every admitted call counted")
t.eq(st["error_count"], 32, "one refusal per tool")
t.eq(vclaw.safety()["circuit_breaker"], "closed", "rate refusals are no breaker failures")
t.done()
