#!/usr/bin/env python3
"""stub_api.py — the API a stub declares, as JSON for the MicroPython checker.

Run by CPython on the host (MicroPython has no `ast` module):

    python3 tests/stubs/stub_api.py [--stub mpy/bentoclaw.pyi]
        [--c-source mpy/modbentoclaw.c] [--mutate NAME] > build/stubs/api.json

What it writes (read by tests/stubs/check_stub.py):

    {"functions": {name: {"min_pos", "max_pos", "posonly", "kw", "kw_required",
                          "returns", "unix_only"}},
     "constants": {name: {"type", "value"}},      # value null: the stub says `...`
     "type_only": [names],                         # TypedDicts, type aliases
     "c_table": {"names": [...], "unix_only": [...]},   # modbentoclaw.c's table
     "c_args": {name: how modbentoclaw.c defines it (c_args())},
     "problems": [...]}                             # what this script could not read

A type is a small tree: {"t": "int"|"str"|"bool"|"bytes"|"bytearray"|"none"|
"any"|"callable"}, {"t": "list", "of": T}, {"t": "tuple", "items": [T...]},
{"t": "union", "of": [T...]}, {"t": "literal", "values": [...]},
{"t": "dict", "keys": {name: T}} (a TypedDict).

A function is unix-only when its docstring (or each overload's) says
"Availability: unix port only". `--mutate NAME` applies one deliberate
mistake to the stub before reading it (scripts/test_stubs.sh checks that the
checker catches each one: MUTANTS below).
"""

import argparse
import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UNIX_ONLY_MARK = "Availability: unix port only"

# name -> (what is wrong, old text, new text): each must make check_stub.py fail.
MUTANTS = {
    "renamed-keyword": ("search()'s n is called count", "def search(query: str, n: int = 5)", "def search(query: str, count: int = 5)"),
    "lost-positional-only": ("_clock() takes s= by keyword", "def _clock(s: Optional[int], /)", "def _clock(s: Optional[int])"),
    "lost-keyword-only": ("import_memory()'s strict may be positional", "def import_memory(text: str, *, strict", "def import_memory(text: str, strict"),
    "extra-parameter": ("tacp() has a second parameter", "def tacp(data: Union[bytes, bytearray, memoryview], /)", "def tacp(data: Union[bytes, bytearray, memoryview], eol: str = '', /)"),
    "missing-function": ("session() is left out", "def session() -> List[Tuple[_Role, str]]:", "def _not_session() -> List[Tuple[_Role, str]]:"),
    "extra-function": ("a reset() the module lacks", "def disconnect() -> None:", "def reset() -> None: ...\ndef disconnect() -> None:"),
    "constant-value": ("PROMPT_MAX is 1024", "PROMPT_MAX: Final[int] = 4096", "PROMPT_MAX: Final[int] = 1024"),
    "constant-type": ("ARCHIVE_MAX is a str", "ARCHIVE_MAX: Final[int] = 8192", "ARCHIVE_MAX: Final[str] = ..."),
    "dict-key": ("status() lacks last_active", '    last_active: int\n    """Extension: RTC seconds of the last exchange (0: unknown)."""\n', ""),
    "literal-value": ("the breaker's states lack closed", '_BreakerState: TypeAlias = Literal["closed", ', "_BreakerState: TypeAlias = Literal["),
    "return-type": ("flush() returns None", "def flush() -> bool:", "def flush() -> None:"),
    "config-key": ("config() lacks send_tools", "    send_tools: _ConfigFlag = False,\n", ""),
    "unix-only": ("_context() not marked unix-only", '    The context the next ``ask()`` would send; sends nothing, adds no turn.\n\n    Availability: unix port only', '    The context the next ``ask()`` would send; sends nothing, adds no turn.\n\n    Availability: every port'),
}


class Reader:
    def __init__(self, tree):
        self.problems = []
        self.aliases = {}  # name -> annotation node
        self.typeddicts = {}  # name -> {key: annotation node}
        self.functions = {}  # name -> [FunctionDef...]
        self.constants = {}  # name -> (annotation node, value node)
        self.type_only = []
        for node in tree.body:
            self.top(node)

    def top(self, node):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # a docstring
        if isinstance(node, ast.ClassDef):
            if not any(self.name_of(b) == "TypedDict" for b in node.bases):
                self.problems.append("class %s: only TypedDicts are read" % node.name)
                return
            keys = {}
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    keys[item.target.id] = item.annotation
            self.typeddicts[node.name] = keys
            self.type_only.append(node.name)
            return
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
            if self.name_of(node.annotation) == "TypeAlias":
                self.aliases[name] = node.value
                self.type_only.append(name)
            elif self.name_of(node.annotation) == "Final" or (
                isinstance(node.annotation, ast.Subscript) and self.name_of(node.annotation.value) == "Final"
            ):
                ann = node.annotation.slice if isinstance(node.annotation, ast.Subscript) else None
                self.constants[name] = (ann, node.value)
            else:
                self.problems.append("%s: a module-level name must be Final (a constant) or a TypeAlias" % name)
            return
        if isinstance(node, ast.FunctionDef):
            self.functions.setdefault(node.name, []).append(node)
            return
        self.problems.append("line %d: %s is not read" % (node.lineno, type(node).__name__))

    @staticmethod
    def name_of(node):
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            return node.attr
        return None

    def type_of(self, node, seen=()):
        """An annotation as a type tree."""
        if node is None:
            return {"t": "any"}
        if isinstance(node, ast.Constant):
            if node.value is None:
                return {"t": "none"}
            if isinstance(node.value, str):  # a forward reference
                return self.type_of(ast.parse(node.value, mode="eval").body, seen)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self.union([self.type_of(node.left, seen), self.type_of(node.right, seen)])
        name = self.name_of(node)
        if name is not None:
            if name in ("int", "str", "bool", "bytes", "bytearray"):
                return {"t": name}
            if name == "None":
                return {"t": "none"}
            if name in ("Any", "object"):
                return {"t": "any"}
            if name in seen:
                self.problems.append("recursive type %s" % name)
                return {"t": "any"}
            if name in self.aliases:
                return self.type_of(self.aliases[name], seen + (name,))
            if name in self.typeddicts:
                keys = self.typeddicts[name]
                return {"t": "dict", "keys": {k: self.type_of(v, seen + (name,)) for k, v in keys.items()}}
            self.problems.append("unknown type name %s" % name)
            return {"t": "any"}
        if isinstance(node, ast.Subscript):
            outer = self.name_of(node.value)
            args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if outer in ("List", "list"):
                return {"t": "list", "of": self.type_of(args[0], seen)}
            if outer in ("Tuple", "tuple"):
                return {"t": "tuple", "items": [self.type_of(a, seen) for a in args]}
            if outer == "Optional":
                return self.union([self.type_of(args[0], seen), {"t": "none"}])
            if outer == "Union":
                return self.union([self.type_of(a, seen) for a in args])
            if outer == "Literal":
                return {"t": "literal", "values": [a.value for a in args]}
            if outer == "Callable":
                return {"t": "callable"}
            if outer == "Final":
                return self.type_of(args[0], seen)
            self.problems.append("unknown generic %s" % outer)
            return {"t": "any"}
        self.problems.append("unread annotation %s" % ast.dump(node))
        return {"t": "any"}

    @staticmethod
    def union(parts):
        flat = []
        for p in parts:
            for q in p["of"] if p["t"] == "union" else [p]:
                if q not in flat:
                    flat.append(q)
        return flat[0] if len(flat) == 1 else {"t": "union", "of": flat}

    def signature(self, fn):
        a = fn.args
        positional = a.posonlyargs + a.args
        n_defaults = len(a.defaults)
        required_pos = len(positional) - n_defaults
        kw = [p.arg for p in a.args] + [p.arg for p in a.kwonlyargs]
        kw_required = [p.arg for i, p in enumerate(a.args) if len(a.posonlyargs) + i < required_pos]
        kw_required += [p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is None]
        return {
            "min_pos": required_pos,
            "max_pos": -1 if a.vararg else len(positional),
            "posonly": [p.arg for p in a.posonlyargs],
            "kw": kw,
            "kwonly": [p.arg for p in a.kwonlyargs],
            "kw_required": kw_required,
            "varkw": a.kwarg is not None,
            "returns": self.type_of(fn.returns),
        }

    def function(self, name, defs):
        sigs = [self.signature(f) for f in defs]
        if len(defs) > 1 and not all(any(self.name_of(d) == "overload" for d in f.decorator_list) for f in defs):
            self.problems.append("%s: defined twice without @overload" % name)
        if any(s["varkw"] for s in sigs):
            self.problems.append("%s: **kwargs cannot be checked; name the keywords" % name)
        docs = [ast.get_docstring(f) or "" for f in defs]
        unix = [UNIX_ONLY_MARK in d for d in docs]
        if any(unix) and not all(unix):
            self.problems.append("%s: only some overloads say they are unix-only" % name)
        if not all(docs):
            self.problems.append("%s: no docstring" % name)
        kw = []
        for s in sigs:
            kw += [k for k in s["kw"] if k not in kw]
        return {
            "min_pos": min(s["min_pos"] for s in sigs),
            "max_pos": -1 if any(s["max_pos"] < 0 for s in sigs) else max(s["max_pos"] for s in sigs),
            # Positional-only: in some overload, and by keyword in none.
            "posonly": [p for p in dict.fromkeys(p for s in sigs for p in s["posonly"]) if p not in kw],
            "kw": kw,
            "kwonly": [k for k in dict.fromkeys(k for s in sigs for k in s["kwonly"])],
            "kw_required": [k for k in sigs[0]["kw_required"] if all(k in s["kw_required"] for s in sigs)],
            "returns": self.union([s["returns"] for s in sigs]),
            "unix_only": all(unix),
        }

    def api(self):
        out = {
            "functions": {n: self.function(n, d) for n, d in self.functions.items()},
            "constants": {},
            "type_only": self.type_only,
        }
        for name, (ann, value) in self.constants.items():
            v = value.value if isinstance(value, ast.Constant) and value.value is not Ellipsis else None
            out["constants"][name] = {"type": self.type_of(ann), "value": v}
        return out


def c_table(path):
    """The names in modbentoclaw.c's module table, and those only the unix build has."""
    text = Path(path).read_text()
    m = re.search(r"bentoclaw_module_globals_table\[\]\s*=\s*\{(.*?)\n\};", text, re.S)
    if not m:
        return None
    names, unix_only, depth_unix = [], [], 0
    for line in m.group(1).splitlines():
        s = line.strip()
        if s.startswith("#if"):
            depth_unix += s == "#if !BENTOCLAW_PORT_FIRMWARE"
            if s != "#if !BENTOCLAW_PORT_FIRMWARE":
                return None  # another condition: read it by hand
        elif s.startswith("#endif"):
            depth_unix = max(0, depth_unix - 1)
        else:
            q = re.match(r"\{\s*MP_ROM_QSTR\(MP_QSTR_(\w+)\)", s)
            if q:
                names.append(q.group(1))
                if depth_unix:
                    unix_only.append(q.group(1))
    return {"names": names, "unix_only": unix_only}


def c_args(path):
    """How the binding (mpy/*.c) defines each function of the module table:
    {"kind": "fixed", "n"} (MP_DEFINE_CONST_FUN_OBJ_N), {"kind": "var", "min",
    "max"} (VAR_BETWEEN), {"kind": "kw", "args": [{"name", "required",
    "kw_only"}]} (KW with an mp_arg_t table; "args": null when the function
    reads its keywords itself)."""
    # The table is in modbentoclaw.c; a function may be defined in any mpy/*.c.
    text = "\n".join(f.read_text() for f in sorted(Path(path).parent.glob("*.c")))
    objs = dict(re.findall(r"\{\s*MP_ROM_QSTR\(MP_QSTR_(\w+)\),\s*MP_ROM_PTR\(&(\w+)_obj\)", text))
    defs = {}
    for m in re.finditer(r"MP_DEFINE_CONST_FUN_OBJ_(\d)\((\w+)_obj,\s*(\w+)\)", text):
        defs[m.group(2)] = {"kind": "fixed", "n": int(m.group(1))}
    for m in re.finditer(r"MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN\((\w+)_obj,\s*(\d+),\s*(\d+),", text):
        defs[m.group(1)] = {"kind": "var", "min": int(m.group(2)), "max": int(m.group(3))}
    for m in re.finditer(r"MP_DEFINE_CONST_FUN_OBJ_KW\((\w+)_obj,\s*(\d+),\s*(\w+)\)", text):
        body = re.search(r"\nstatic mp_obj_t %s\((.*?)\n\}\n" % re.escape(m.group(3)), text, re.S)
        table = re.search(r"mp_arg_t allowed\[\]\s*=\s*\{(.*?)\};", body.group(1), re.S) if body else None
        args = None
        if table:
            args = []
            # Entries in full, or REQ(name): a required argument, by position or keyword.
            for full, flags, req in re.findall(r"\{\s*MP_QSTR_(\w+),\s*([^,]+),|\bREQ\((\w+)\)", table.group(1)):
                if req:
                    args.append({"name": req, "required": True, "kw_only": False})
                else:
                    args.append({"name": full, "required": "MP_ARG_REQUIRED" in flags, "kw_only": "MP_ARG_KW_ONLY" in flags})
        defs[m.group(1)] = {"kind": "kw", "args": args}
    return {name: defs.get(obj) for name, obj in objs.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stub", default=str(ROOT / "mpy" / "bentoclaw.pyi"))
    ap.add_argument("--c-source", default=str(ROOT / "mpy" / "modbentoclaw.c"))
    ap.add_argument("--mutate", choices=sorted(MUTANTS))
    ap.add_argument("--list-mutants", action="store_true")
    args = ap.parse_args()
    if args.list_mutants:
        for k in sorted(MUTANTS):
            print("%s\t%s" % (k, MUTANTS[k][0]))
        return 0
    text = Path(args.stub).read_text()
    if args.mutate:
        _, old, new = MUTANTS[args.mutate]
        if text.count(old) != 1:
            print("mutant %s: its text is not in the stub exactly once" % args.mutate, file=sys.stderr)
            return 2
        text = text.replace(old, new)
    r = Reader(ast.parse(text))
    api = r.api()
    api["c_table"] = c_table(args.c_source)
    api["c_args"] = c_args(args.c_source)
    if api["c_table"] is None:
        r.problems.append("could not read the module table of %s" % args.c_source)
    api["problems"] = r.problems
    json.dump(api, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
