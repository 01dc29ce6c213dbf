#!/usr/bin/env python3
"""Where each of the vendor archive's 48 exports came from in a linked image.

Usage: tests/link/check_link.py [--all-referenced] MAP EXPORTS OURS VENDOR

MAP is a GNU ld map written with --cref (ModusToolbox's GCC_ARM links with
--cref, so the firmware's own map has these tables too). EXPORTS is
tests/link/vendor_exports.txt ("<member> <symbol> [weak]" lines). OURS and
VENDOR are the file names of the two archives as the map names them (e.g.
libbentoclaw.a, libbento_mpy.a).

Checks, one PASS or FAIL line each:
  * each export that an object outside both archives (the firmware)
    references is defined: the claw_session.o/claw_safety.o ones (the 22) by
    a member of OURS, every other one by VENDOR's member that EXPORTS names.
    An export nothing references is an INFO line, or with --all-referenced
    (scripts/test_link.sh, whose stand-in firmware references all 48) a FAIL:
    its resolution would prove nothing;
  * VENDOR's claw_session.o and claw_safety.o were not extracted.
INFO lines: the members of VENDOR that were extracted; who defines memcpy,
memset and strlen. Exit status: 1 when a check failed or the map lacks the
tables, else 0. (No RESULT line: scripts/test_link.sh counts the PASS and
FAIL lines.)
"""

import re
import sys

CLAW_MEMBERS = ("claw_session.o", "claw_safety.o")


def archive_member(path):
    """("libx.a", "m.o") for "/dir/libx.a(m.o)", else (None, path)."""
    m = re.match(r"^(?:.*/)?([^/()]+\.a)\((.+)\)$", path)
    return (m.group(1), m.group(2)) if m else (None, path)


def parse_map(text):
    """(extracted [(archive, member)], cref {symbol: [files]}) of a map."""
    lines = text.splitlines()
    extracted = []
    cref = {}
    section = None
    current = None
    for line in lines:
        if line.startswith("Archive member included to satisfy reference by file (symbol)"):
            section = "archive"
            continue
        if line.startswith("Cross Reference Table"):
            section = "cref"
            continue
        if section == "archive":
            if line.startswith(("Discarded input sections", "Memory Configuration", "Allocating common")):
                section = None
                continue
            if line and not line[0].isspace():
                a, m = archive_member(line.split()[0])
                if a:
                    extracted.append((a, m))
        elif section == "cref":
            if not line.strip() or line.startswith("Symbol "):
                continue
            if not line[0].isspace():
                parts = line.split(None, 1)
                current = parts[0]
                cref[current] = [parts[1].strip()] if len(parts) > 1 else []
            elif current is not None:
                cref[current].append(line.strip())
    return extracted, cref


def main(argv):
    args = argv[1:]
    all_referenced = "--all-referenced" in args
    args = [a for a in args if a != "--all-referenced"]
    if len(args) != 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    map_path, exports_path, ours, vendor = args
    exports = []
    with open(exports_path, encoding="utf-8") as f:
        for raw in f:
            line = raw.split("#", 1)[0].split()
            if line:
                exports.append((line[0], line[1]))
    with open(map_path, encoding="utf-8", errors="replace") as f:
        extracted, cref = parse_map(f.read())

    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        print(("PASS " if ok else "FAIL ") + what)
        if ok:
            passed += 1
        else:
            failed += 1

    if not cref or not extracted:
        check(False, f"{map_path}: no cross reference table or no archive member list (link with -Wl,-Map,<map> -Wl,--cref)")
        return 1
    check(len(exports) == 48, f"{exports_path}: {len(exports)} exports (the vendor's api.txt has 48)")

    for member, sym in exports:
        files = cref.get(sym, [])
        a, m = archive_member(files[0]) if files else (None, "nothing")
        where = f"{a}({m})" if a else m.rsplit("/", 1)[-1]
        refs = sorted({r.rsplit("/", 1)[-1] for r in files[1:] if archive_member(r)[0] not in (ours, vendor)})
        want = ours if member in CLAW_MEMBERS else f"{vendor}({member})"
        ok = a == ours if member in CLAW_MEMBERS else (a == vendor and m == member)
        if not refs and all_referenced:
            check(False, f"{sym}: no object of the firmware references it, so its resolution proves nothing")
        elif not refs:
            print(f"INFO {sym}: no object of the firmware references it (defined by {where})")
        else:
            check(ok, f"{sym} resolves to {want}: defined by {where}, referenced by {' '.join(refs)}")

    vendor_members = sorted({m for a, m in extracted if a == vendor})
    for m in CLAW_MEMBERS:
        check(m not in vendor_members, f"{vendor}({m}) was not extracted")
    print("INFO extracted from " + vendor + ": " + (" ".join(vendor_members) or "nothing"))
    for sym in ("memcpy", "memset", "strlen"):
        if sym in cref and cref[sym]:
            print(f"INFO {sym} is defined by {cref[sym][0]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
