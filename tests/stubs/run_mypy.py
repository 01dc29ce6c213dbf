#!/usr/bin/env python3
"""run_mypy.py — mypy (from PyPI) against mpy/bentoclaw.pyi.

Run by the virtual environment's Python that has mypy
(scripts/test_stubs.sh: build/stubs-venv):

    build/stubs-venv/bin/python tests/stubs/run_mypy.py

Checks, each printed, then "RESULT: N passed, M failed":
  * `mypy --strict` finds nothing in the stub itself;
  * it finds nothing in tests/stubs/typed_example.py (the whole API, used
    the way the docs say);
  * in tests/stubs/typed_bad.py it reports exactly the errors marked
    `# E: <code>[, <code>]` on their lines: one check per marked line, one
    failure per error nobody marked, and mypy must exit 1 there.
`bentoclaw` resolves to the stub through MYPYPATH=mpy; MicroPython's `vfs`
to the minimal stub in tests/stubs/shims/.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
FLAGS = ["--strict", "--warn-unreachable", "--show-error-codes", "--no-error-summary", "--no-color-output"]
ERROR = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): error: (?P<msg>.*?)\s+\[(?P<code>[\w-]+)\]$")
MARK = re.compile(r"#\s*E:\s*([\w\-, ]+)$")

passed = 0
failed = 0


def check(cond, what, *detail):
    global passed, failed
    if cond:
        passed += 1
        print("ok   %s" % what)
    else:
        failed += 1
        print("FAIL %s" % what, *detail)


def mypy(*files):
    env = dict(os.environ)
    env["MYPYPATH"] = os.pathsep.join([str(ROOT / "mpy"), str(HERE / "shims")])
    cmd = [sys.executable, "-m", "mypy", *FLAGS, "--cache-dir", str(ROOT / "build" / "stubs" / "mypy-cache"), *files]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    out = r.stdout + r.stderr
    errors = []
    for line in out.splitlines():
        m = ERROR.match(line)
        if m:
            errors.append((Path(m["file"]).name, int(m["line"]), m["code"], m["msg"]))
    return r.returncode, out, errors


def clean(path):
    rc, out, errors = mypy(path)
    check(rc == 0 and not errors, "mypy --strict: no error in %s" % path, "\n" + out.rstrip())


def expected_errors(path):
    want = {}
    for n, line in enumerate((ROOT / path).read_text().splitlines(), 1):
        m = MARK.search(line)
        if m:
            want[n] = sorted(set(c.strip() for c in m.group(1).split(",") if c.strip()))
    return want


def refused(path):
    want = expected_errors(path)
    rc, out, errors = mypy(path)
    check(rc == 1, "mypy --strict exits 1 on %s" % path, "exit %d" % rc, "\n" + out.rstrip())
    check(len(want) > 0, "%s marks the errors it expects" % path)
    name = Path(path).name
    got = {}
    for f, line, code, msg in errors:
        if f == name:
            got.setdefault(line, set()).add(code)
    for line, codes in sorted(want.items()):
        text = (ROOT / path).read_text().splitlines()[line - 1].split("#")[0].strip()
        check(sorted(got.get(line, ())) == codes, "mypy refuses line %d: %s  [%s]" % (line, text, ", ".join(codes)),
              "got", sorted(got.get(line, ())))
    for f, line, code, msg in errors:
        if f != name or line not in want:
            check(False, "an error the file does not expect", "%s:%d: %s [%s]" % (f, line, msg, code))


def main():
    r = subprocess.run([sys.executable, "-m", "mypy", "--version"], capture_output=True, text=True)
    print(r.stdout.strip() or r.stderr.strip())
    clean("mpy/bentoclaw.pyi")
    clean("tests/stubs/typed_example.py")
    refused("tests/stubs/typed_bad.py")
    print("RESULT: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
