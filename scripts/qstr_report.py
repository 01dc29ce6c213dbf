#!/usr/bin/env python3
"""qstr_report.py — the static qstrs and root pointers our binding adds to a
MicroPython firmware, set against the vendor's binding (docs/VENDOR.md,
"The qstr pool").

The vendor's prebuilt archive stores qstr indices and root-pointer offsets;
the BENTO firmware pins them (bento_archived_qstrs.c). A binding that
brings other qstrs moves the pool. This counts ours: every MP_QSTR_<name>
and every REQ(<name>) (modbentoclaw.c's argument tables) in the binding's C
files, and every MP_REGISTER_ROOT_POINTER.

    python3 scripts/qstr_report.py            # the figures
    python3 scripts/qstr_report.py --check    # ... and that docs/VENDOR.md says them

Prints "RESULT: N passed, M failed" with --check.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What a firmware build compiles (the unix transport is not in it).
FILES = ["mpy/modbentoclaw.c", "mpy/claw_port_vfs.c", "mpy/claw_tools.c"]


def ours():
    names, roots = set(), []
    for f in FILES:
        text = (ROOT / f).read_text()
        # The unix port's test hooks are not in a firmware build.
        text = re.sub(r"#if !BENTOCLAW_PORT_FIRMWARE\n.*?#endif", "", text, flags=re.S)
        # Macro definitions name parameters, not qstrs.
        text = re.sub(r"^#define .*$", "", text, flags=re.M)
        names |= set(re.findall(r"MP_QSTR_(\w+)", text))
        # modbentoclaw.c's REQ(name) and ACC(name, field) make MP_QSTR_name.
        names |= set(re.findall(r"\bREQ\((\w+)\)", text))
        names |= set(re.findall(r"\bACC\((\w+),", text))
        roots += re.findall(r"^MP_REGISTER_ROOT_POINTER\((.*)\);", text, flags=re.M)
    names.discard("")  # MP_QSTR_ of the empty string
    return names, roots


def vendor():
    lines = (ROOT / "docs/data/vendor-binding-qstrs.txt").read_text().splitlines()
    return set(x for x in lines if x and not x.startswith("#"))


def main():
    names, roots = ours()
    v = vendor()
    added = sorted(names - v)
    dropped = sorted(v - names)
    figures = {
        "qstrs": len(names),
        "added": len(added),
        "dropped": len(dropped),
        "roots": len(roots),
    }
    print("binding qstrs: %d (%d not in the vendor binding's %d; %d of the vendor's unused)" %
          (len(names), len(added), len(v), len(dropped)))
    print("added:", " ".join(added))
    print("vendor's, unused here:", " ".join(dropped) or "-")
    print("root pointers: %d (%s)" % (len(roots), "; ".join(roots)))
    if "--check" in sys.argv:
        doc = (ROOT / "docs/VENDOR.md").read_text()
        m = re.search(r"<!-- qstr-report: qstrs=(\d+) added=(\d+) dropped=(\d+) roots=(\d+) -->", doc)
        bad = 0
        if m is None:
            print("FAIL docs/VENDOR.md has no qstr-report line")
            bad = 1
        else:
            for (k, want), got in zip(figures.items(), m.groups()):
                ok = int(got) == want
                print("%s %s: docs/VENDOR.md says %s, measured %d" % ("ok  " if ok else "FAIL", k, got, want))
                bad += not ok
        print("RESULT: %d passed, %d failed" % (4 - bad if m else 0, bad))
        sys.exit(1 if bad else 0)


main()
