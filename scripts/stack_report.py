#!/usr/bin/env python3
"""Worst-case stack depth of the exported claw_* functions of libbentoclaw.a.

Usage: scripts/stack_report.py ARCHIVE [--exports FILE.h ...] [--objdump BIN]

Method (stated in docs/PERFORMANCE.md):
  * Frame sizes: the `.stack_sizes` sections that rustc/LLVM emit with
    `-Z emit-stack-sizes` (one record per function: address, ULEB128 bytes of
    stack the function itself allocates).  Functions without a record
    (hand-written assembly in compiler_builtins, machine-outlined fragments)
    get the size found by reading their prologue (push/stmdb/vpush/sub sp).
    The prologue reading is also done for every function that has a record,
    as a cross-check; differences are printed.
  * Call graph: `arm-none-eabi-objdump -d -r` of every object member of the
    archive (the LTO'd crate object and compiler_builtins).  An edge is a
    relocation R_ARM_THM_CALL (bl/blx: a call), R_ARM_THM_JUMP24/JUMP19
    (b.w/b<cond>.w to another function: a tail call, made after the caller's
    frame is popped), or a `blx rN` whose register was loaded from a literal
    holding a function address (R_ARM_ABS32; the compiler does this at
    opt-level "z" to call one function several times).  A `blx`/`bx` through a
    register that cannot be resolved is an indirect call and is reported.
  * depth(f) = max(frame(f) + max depth(called g), max depth(tail-called g)),
    with depth 0 for symbols outside the archive (the claw_port_* callbacks:
    their own stack belongs to the host).  A cycle in the graph (recursion)
    is reported; the depth is then unbounded.

Output: machine-readable lines
  STACK <export> <bytes> <deepest path a>b>c>
  EXTERN <symbol>            (callee outside the archive, counted as 0)
  INDIRECT <function> <offset>
  RECURSION <cycle>
  NORECORD <function> <prologue bytes>
  MISMATCH <function> <record> <prologue>
  FRAME <bytes> <function>    (largest frames, top 8; env STACK_FRAMES=N for N)
  (env STACK_PATH_FRAMES=1: each function of a STACK path followed by [its own frame])
  SUMMARY exports=<n> max=<bytes> indirect=<n> recursion=<n> records=<n>
"""

import os
import re
import struct
import subprocess
import sys
import tempfile


# --- ELF32 little-endian, just enough for .stack_sizes ----------------------


def read_elf(path):
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        raise ValueError("%s: not an ELF32 little-endian object" % path)
    (e_shoff,) = struct.unpack_from("<I", data, 0x20)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 0x2E)
    secs = []
    for i in range(e_shnum):
        f = struct.unpack_from("<IIIIIIIIII", data, e_shoff + i * e_shentsize)
        secs.append(
            dict(name_off=f[0], type=f[1], flags=f[2], offset=f[4], size=f[5], link=f[6], info=f[7], entsize=f[9])
        )
    shstr = secs[e_shstrndx]

    def cstr(off):
        end = data.index(b"\0", off)
        return data[off:end].decode("utf-8", "replace")

    for s in secs:
        s["name"] = cstr(shstr["offset"] + s["name_off"])
    syms = []
    for s in secs:
        if s["type"] == 2:  # SHT_SYMTAB
            strtab = secs[s["link"]]
            for j in range(s["size"] // 16):
                name, value, size, info, other, shndx = struct.unpack_from("<IIIBBH", data, s["offset"] + j * 16)
                syms.append(
                    dict(name=cstr(strtab["offset"] + name), value=value, size=size, type=info & 0xF, bind=info >> 4, shndx=shndx)
                )
    return data, secs, syms


def uleb(data, pos):
    v = 0
    shift = 0
    while True:
        b = data[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, pos


class ObjInfo:
    """Function symbols and .stack_sizes records of one object member.

    Functions are named by a key: the symbol name when it is global, and
    "<member>#<name>" when it is local (local names such as
    OUTLINED_FUNCTION_8 repeat across members).  Aliases (two symbols at one
    address, e.g. claw_cb_success folded into claw_cb_init) share one key.
    """

    def __init__(self, path, tag):
        data, secs, syms = read_elf(path)
        self.tag = tag
        self.sec_names = {i: s["name"] for i, s in enumerate(secs)}
        self.canon = {}  # (shndx, addr) -> key
        self.by_name = {}  # symbol name -> key (functions defined here)
        self.aliases = {}  # key -> [other names]
        groups = {}
        for s in syms:
            if s["type"] == 2 and s["name"] and s["shndx"] not in (0, 0xFFF1, 0xFFF2):
                groups.setdefault((s["shndx"], s["value"] & ~1), []).append(s)
        for at, group in groups.items():
            group.sort(key=lambda s: (s["bind"] == 0, s["name"]))
            first = group[0]
            key = first["name"] if first["bind"] != 0 else "%s#%s" % (tag, first["name"])
            self.canon[at] = key
            for s in group:
                self.by_name[s["name"]] = key
            self.aliases[key] = [s["name"] for s in group[1:]]
        # .stack_sizes: address (relocated against a symbol) + ULEB128 size
        rels = {}
        for s in secs:
            if s["type"] == 9 and secs[s["info"]]["name"] == ".stack_sizes":  # SHT_REL
                m = {}
                for j in range(s["size"] // 8):
                    off, info = struct.unpack_from("<II", data, s["offset"] + j * 8)
                    m[off] = info >> 8
                rels[s["info"]] = m
        self.records = {}
        for idx, s in enumerate(secs):
            if s["name"] != ".stack_sizes":
                continue
            pos = s["offset"]
            end = pos + s["size"]
            rel = rels.get(idx, {})
            while pos < end:
                off = pos - s["offset"]
                (addend,) = struct.unpack_from("<I", data, pos)
                size, pos = uleb(data, pos + 4)
                sym = syms[rel[off]] if off in rel else None
                if sym is not None:
                    at = (sym["shndx"], (sym["value"] + addend) & ~1)
                else:
                    at = (s["link"], addend & ~1)
                key = self.canon.get(at)
                if key:
                    self.records[key] = max(size, self.records.get(key, 0))

    def resolve(self, name):
        """Key of a symbol named in this member's disassembly/relocations."""
        if name in self.by_name:
            return self.by_name[name]
        if name.startswith(".text"):
            for i, n in self.sec_names.items():
                if n == name and (i, 0) in self.canon:
                    return self.canon[(i, 0)]
        return name  # undefined here: a global defined elsewhere, or external


# --- disassembly ----------------------------------------------------------------

FUNC_RE = re.compile(r"^([0-9a-f]+) <(.+)>:$")
INSN_RE = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
RELOC_RE = re.compile(r"^\s*([0-9a-f]+): (R_ARM_\w+)\s+(\S+)")
REGLIST_RE = re.compile(r"\{([^}]*)\}")
REG = r"(r\d+|sl|fp|ip|lr|sb)"


def reg_count(lst):
    n = 0
    for part in lst.split(","):
        part = part.strip()
        if not part:
            continue
        m = re.match(r"([a-z]+)(\d+)-[a-z]+(\d+)$", part)
        if m:
            n += int(m.group(3)) - int(m.group(2)) + 1
        else:
            n += 1
    return n


def sp_decrement(op, args):
    """Bytes an instruction moves SP down by (0 if it does not)."""
    base = re.sub(r"(\.w|\.n)$", "", op)
    if base == "push" or (base in ("stmdb", "stmfd") and args.startswith("sp!")):
        m = REGLIST_RE.search(args)
        return 4 * reg_count(m.group(1)) if m else 0
    if base == "vpush" or (base == "vstmdb" and args.startswith("sp!")):
        m = REGLIST_RE.search(args)
        return (8 if "d" in m.group(1) else 4) * reg_count(m.group(1)) if m else 0
    if base in ("sub", "subw") and re.match(r"^sp, (sp, )?#\d+$", args):
        return int(args.split("#")[1])
    m = re.match(r"^(str|strd|vstr)\b", base)
    if m and re.search(r"\[sp, #-(\d+)\]!$", args):
        return int(re.search(r"\[sp, #-(\d+)\]!$", args).group(1))
    return 0


class Func:
    def __init__(self, key, obj):
        self.key = key
        self.obj = obj
        self.calls = set()
        self.tails = set()
        self.indirect = []
        self.sp_down = 0


def parse_objdump(objdump, path, info, funcs):
    text = subprocess.run(
        [objdump, "-d", "-r", "--no-show-raw-insn", path], check=True, capture_output=True, text=True
    ).stdout
    state = {}

    def close():
        cur = state.get("cur")
        if cur is None:
            return
        last = {}
        events = sorted(
            [(o, 0, r, lo) for o, r, lo in state["loads"]] + [(o, 1, r, None) for o, r in state["blx"]]
        )
        for o, kind, r, lo in events:
            if kind == 0:
                last[r] = state["lits"].get(lo)
            else:
                target = last.get(r) or state["movw"].get(r)
                if target:
                    cur.calls.add(info.resolve(target))
                else:
                    cur.indirect.append(o)

    for line in text.splitlines():
        m = FUNC_RE.match(line)
        if m:
            close()
            key = info.resolve(m.group(2))
            cur = funcs.setdefault(key, Func(key, info.tag))
            state = dict(cur=cur, lits={}, loads=[], blx=[], movw={}, pending=None)
            continue
        cur = state.get("cur")
        if cur is None:
            continue
        m = RELOC_RE.match(line)
        if m:
            off = int(m.group(1), 16)
            kind, sym = m.group(2), re.sub(r"\+0x[0-9a-f]+$", "", m.group(3))
            if kind in ("R_ARM_THM_CALL", "R_ARM_CALL", "R_ARM_PC24"):
                cur.calls.add(info.resolve(sym))
            elif kind in ("R_ARM_THM_JUMP24", "R_ARM_THM_JUMP19", "R_ARM_JUMP24"):
                t = info.resolve(sym)
                if t != cur.key:
                    cur.tails.add(t)
            elif kind == "R_ARM_ABS32":
                state["lits"][off] = sym
            elif kind in ("R_ARM_THM_MOVW_ABS_NC", "R_ARM_THM_MOVT_ABS") and state["pending"]:
                state["movw"][state["pending"]] = sym
            continue
        m = INSN_RE.match(line)
        if not m:
            continue
        off, op, args = int(m.group(1), 16), m.group(2), m.group(3)
        if op.startswith("."):  # .word / .short data
            continue
        state["pending"] = None
        a = args.split("@")[0].strip().split(";")[0].strip()
        cur.sp_down += sp_decrement(op, a)
        first = a.split(",")[0].strip()
        if op.startswith("ldr") and "[pc" in a:
            tm = re.search(r"@ \(?([0-9a-f]+) <", args)
            if re.match(REG + "$", first) and tm:
                state["loads"].append((off, first, int(tm.group(1), 16)))
        elif op.startswith(("movw", "movt")):
            state["pending"] = first
        elif re.match(r"^blx(\.[nw])?$", op) and re.match(REG + "$", first):
            state["blx"].append((off, first))
        elif re.match(r"^bx(\.[nw])?$", op) and first != "lr":
            state["blx"].append((off, first))
        elif re.match(r"^(mov|ldr|pop|ldm)", op) and ("pc," in a.replace(" ", "") and not op.startswith("pop")):
            cur.indirect.append(off)
    close()


def short(n):
    """A readable name: the last two path components of a mangled symbol."""
    if "#" in n:
        n = n.split("#", 1)[1]
    if not n.startswith(("_R", "_ZN")):
        return n
    if n.startswith("_R"):
        n = re.sub(r"C(s[0-9A-Za-z]*_)?(?=\d)", "C", n)  # crate disambiguators
    parts = []
    i = 3 if n.startswith("_ZN") else 2
    while i < len(n):
        m = re.match(r"\d+", n[i:])
        if m and not n[i - 1].isdigit():
            ln = int(m.group(0))
            start = i + len(m.group(0))
            if n.startswith("_R") and n[start : start + 1] == "_":
                start += 1
            word = n[start : start + ln]
            if ln > 0 and len(word) == ln and re.match(r"^[A-Za-z_$.][A-Za-z0-9_$.]*$", word):
                parts.append(word)
                i = start + ln
                continue
        i += 1
    parts = [p for p in parts if not re.match(r"^h[0-9a-f]{16}$", p)]
    parts = [p for p in parts if p not in ("ffi", "CPort", "bentoclaw", "core", "compiler_builtins")]
    out = "::".join(parts[-2:]) if parts else n
    for a, b in (("$LT$", "<"), ("$GT$", ">"), ("$u20$", " "), ("$RF$", "&"), ("..", "::")):
        out = out.replace(a, b)
    return out


def main(argv):
    archive = None
    headers = []
    objdump = "arm-none-eabi-objdump"
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--exports", "--objdump"):
            if a == "--exports":
                headers.append(argv[i + 1])
            else:
                objdump = argv[i + 1]
            i += 2
            continue
        archive = a
        i += 1
    if not archive:
        print(__doc__, file=sys.stderr)
        return 2
    exports = []
    for h in headers:
        for m in re.finditer(r"\b(claw_[a-z_]+)\s*\(", open(h, encoding="utf-8").read()):
            if m.group(1) not in exports:
                exports.append(m.group(1))

    funcs = {}
    records = {}
    aliases = {}
    with tempfile.TemporaryDirectory() as tmp:
        archive = os.path.abspath(archive)
        members = subprocess.run(
            ["arm-none-eabi-ar", "t", archive], check=True, capture_output=True, text=True
        ).stdout.split()
        subprocess.run(["arm-none-eabi-ar", "x", archive], cwd=tmp, check=True)
        for mem in members:
            if not mem.endswith(".o"):
                continue
            p = os.path.join(tmp, mem)
            info = ObjInfo(p, mem)
            records.update(info.records)
            for k, v in info.aliases.items():
                for a in v:
                    aliases[a] = k
            parse_objdump(objdump, p, info, funcs)

    def frame(key):
        if key in records:
            return records[key]
        f = funcs.get(key)
        return f.sp_down if f else 0

    memo, path_of = {}, {}
    recursion, externs, onstack = [], set(), set()

    def depth(key):
        if key in memo:
            return memo[key]
        f = funcs.get(key)
        if f is None:
            externs.add(key)
            memo[key], path_of[key] = 0, [key]
            return 0
        if key in onstack:
            recursion.append(key)
            return 0
        onstack.add(key)
        own = frame(key)
        best, best_path = own, [key]
        for c in sorted(f.calls):
            d = own + depth(c)
            if d > best:
                best, best_path = d, [key] + path_of[c]
        for c in sorted(f.tails):
            d = depth(c)
            if d > best:
                best, best_path = d, [key, "(tail)"] + path_of[c]
        onstack.discard(key)
        memo[key], path_of[key] = best, best_path
        return best

    reach = set()

    def walk(k):
        if k in reach:
            return
        reach.add(k)
        f = funcs.get(k)
        if f:
            for c in f.calls | f.tails:
                walk(c)

    worst = 0
    missing = 0
    for e in exports:
        key = aliases.get(e, e)
        if key not in funcs:
            print("MISSING %s" % e)
            missing += 1
            continue
        d = depth(key)
        worst = max(worst, d)
        walk(key)
        # STACK_PATH_FRAMES=1: each step of the path with its own frame.
        step = (lambda p: "%s[%d]" % (p if os.environ.get("STACK_PATH_FRAMES") == "raw" else short(p), frame(p))) if os.environ.get("STACK_PATH_FRAMES") else short
        print(
            "STACK %s %d %d %s"
            % (e, d, frame(key), " > ".join(step(p) if p != "(tail)" else "(tail call)" for p in path_of[key]))
        )
    for e in exports:
        if e in aliases:
            print("ALIAS %s %s" % (e, aliases[e]))
    indirect = 0
    for k in sorted(reach):
        f = funcs.get(k)
        if f and f.indirect:
            indirect += len(f.indirect)
            for o in f.indirect:
                print("INDIRECT %s 0x%x" % (short(k), o))
    for k in sorted(externs & reach):
        print("EXTERN %s" % k)
    for k in recursion:
        print("RECURSION %s" % short(k))
    mism = 0
    norec = 0
    for k in sorted(reach):
        f = funcs.get(k)
        if not f:
            continue
        if k not in records:
            norec += 1
            print("NORECORD %s %d" % (short(k), f.sp_down))
        elif records[k] != f.sp_down:
            mism += 1
            print("MISMATCH %s record=%d sp_decrements=%d" % (short(k), records[k], f.sp_down))
    for sz, k in sorted(((frame(k), k) for k in reach if k in funcs), reverse=True)[:int(os.environ.get("STACK_FRAMES", "8"))]:
        print("FRAME %d %s" % (sz, short(k)))
    print(
        "SUMMARY exports=%d missing=%d max=%d reachable=%d with_record=%d without_record=%d "
        "mismatches=%d indirect=%d recursion=%d"
        % (len(exports), missing, worst, len([k for k in reach if k in funcs]),
           len([k for k in reach if k in records]), norec, mism, indirect, len(recursion))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
