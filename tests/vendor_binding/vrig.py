# vrig.py — what the tests of tests/vendor_binding share: tests/mpy/claw_rig.py
# (imported from the repo root, the tests' working directory) and a few
# readers of vclaw's answers. Import it before remounting "/".
import sys

sys.path.append("tests/mpy")
import claw_rig as rig  # noqa: E402

RATE_TEXT = rig.RATE_TEXT
TRUST_TEXT = rig.TRUST_TEXT
BREAKER_TEXT = rig.BREAKER_TEXT
REQUEST_TEXT = rig.REQUEST_TEXT


def conversation(history):
    """The conversation lines of a history()/ask() context, oldest first."""
    lines = history.split("\n")
    if "Conversation:" not in lines:
        return []
    return [x for x in lines[lines.index("Conversation:") + 1 :] if x]


def memory(history):
    """The memory lines of a context ("key: value")."""
    lines = history.split("\n")
    if "Memory:" not in lines:
        return []
    out = []
    for x in lines[lines.index("Memory:") + 1 :]:
        if not x.startswith("- "):
            break
        out.append(x[2:])
    return out


def boot(vclaw, bdev):
    """A hard boot: the file system as the device holds it, mounted again,
    and the RAM state gone (ensure_init runs again at the next call)."""
    rig.mount(bdev, mkfs=False)
    vclaw._hard_boot()
