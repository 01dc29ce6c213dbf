#!/usr/bin/env python3
"""Bytes that some input files contribute to a linked image, from a GNU ld map.

Usage: scripts/map_share.py MAP NAME=PATTERN [NAME=PATTERN ...]

PATTERN is a substring of the input file as the map names it, e.g.
"libbentoclaw.a(" (every member of that archive) or "/modbentoclaw.o"; join
several with "|". For each NAME prints one line:

  SHARE <NAME> code=<.text+.rodata> ram=<.data+.bss> data=<.data> builtins=<code of compiler_builtins members> shared=<.cy_sharedmem>

A NAME that no input section placed in the image matched gets no line (a
message on stderr instead), and the exit status is 1: an empty parse must
never read as 0 bytes. So does a map without its memory map part.

Only input sections placed in the image count (the map after "Linker script
and memory map", outside /DISCARD/). Sections are classified by their input
section name: .text*, .rodata*, .ARM.extab*, .ARM.exidx* are code (flash);
.data*, .bss*, .tbss*, .tdata*, .noinit*, COMMON are static RAM (.data also
has its initial image in flash); .cy_sharedmem* (the firmware's
CY_SECTION_SHAREDMEM: IPC messages in the memory both cores share, not the
CM33's RAM) is counted apart as "shared". Same rules as tests/image/map_share.awk,
which classifies by output section; both agree on the minimal image.
"""

import re
import sys

CODE_RE = re.compile(r"^\.(text|rodata|ARM\.extab|ARM\.exidx|gnu\.linkonce\.[tr])")
RAM_RE = re.compile(r"^(\.(data|bss|tbss|tdata|noinit|sbss|sdata)|COMMON$)")
DATA_RE = re.compile(r"^\.(data|tdata|sdata)")
SHARED_RE = re.compile(r"^\.cy_sharedmem")


def shares(map_path, patterns):
    totals = {name: dict(code=0, ram=0, data=0, builtins=0, shared=0, matched=0) for name in patterns}
    inmap = False
    osec = None
    pending = None  # input section name whose numbers are on the next line
    with open(map_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not inmap:
                if line.startswith("Linker script and memory map"):
                    inmap = True
                continue
            if re.match(r"^\S", line):
                osec = line.split()[0]
                pending = None
                continue
            parts = line.split()
            if not parts:
                pending = None
                continue
            if pending is not None and len(parts) >= 3 and parts[0].startswith("0x") and parts[1].startswith("0x"):
                isec, size, fname = pending, parts[1], " ".join(parts[2:])
                pending = None
            elif line.startswith(" ") and not line.startswith("  ") and len(parts) >= 4 and parts[1].startswith("0x") and parts[2].startswith("0x"):
                isec, size, fname = parts[0], parts[2], " ".join(parts[3:])
            elif line.startswith(" ") and not line.startswith("  ") and len(parts) == 1 and not parts[0].startswith("*"):
                pending = parts[0]
                continue
            else:
                pending = None
                continue
            if osec == "/DISCARD/":
                continue
            n = int(size, 16)
            for name, pats in patterns.items():
                if not any(p in fname for p in pats):
                    continue
                t = totals[name]
                t["matched"] += 1
                if CODE_RE.match(isec):
                    t["code"] += n
                    if "compiler_builtins" in fname:
                        t["builtins"] += n
                elif RAM_RE.match(isec):
                    t["ram"] += n
                    if DATA_RE.match(isec):
                        t["data"] += n
                elif SHARED_RE.match(isec):
                    t["shared"] += n
    if not inmap:
        return None
    return totals


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    patterns = {}
    for arg in argv[1:]:
        name, _, pat = arg.partition("=")
        patterns[name] = [p for p in pat.split("|") if p]
    totals = shares(argv[0], patterns)
    if totals is None:
        print("map_share.py: %s: no \"Linker script and memory map\" part" % argv[0], file=sys.stderr)
        return 1
    rc = 0
    for name, t in totals.items():
        if t["matched"] == 0:
            print("map_share.py: %s: no input section matched %s=%s" % (argv[0], name, "|".join(patterns[name])), file=sys.stderr)
            rc = 1
            continue
        print("SHARE %s code=%d ram=%d data=%d builtins=%d shared=%d"
              % (name, t["code"], t["ram"], t["data"], t["builtins"], t["shared"]))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
