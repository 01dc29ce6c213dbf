#!/usr/bin/env python3
"""render_report.py — the one renderer of the measured reports (issue 24).

    python3 scripts/render_report.py size target/size-report/figures.tsv [-o docs/SIZE.md]
    python3 scripts/render_report.py perf target/perf/figures.tsv [-o docs/PERFORMANCE.md]
    python3 scripts/render_report.py reliability build/reliability/figures.tsv [-o docs/RELIABILITY.md]
    python3 scripts/render_report.py REPORT FIGURES --no-doc   # the checks alone

The report scripts (scripts/size_report.sh, scripts/perf_report.sh,
scripts/reliability_report.sh) only build and measure; this program reads
what they measured, checks every figure against its goal (scripts/goals.tsv),
prints one line per check and writes the Markdown document. It can be run
again alone on the saved data: the same data give the same document.

The figure data
---------------
FIGURES is a tab-separated file the script writes (no header; a line
starting with "#" is a comment):

    KEY<TAB>VALUE              one figure; a later row of the same KEY wins
    check<TAB>PASS<TAB>TEXT    a check the script made itself (a build, a
    check<TAB>FAIL<TAB>TEXT    link, a run): already printed, counted here

A KEY that is absent was not measured (the step before it failed); a KEY
with an empty VALUE was measured and did not parse: a check on it fails.
Besides FIGURES, a report reads the measuring programs' own output files
from FIGURES's directory, as they wrote them (perf: flash-<run>.txt of
tests/mpy/bench_flash.py, callgrind.txt of cg_summary.py, stack-*.txt of
scripts/stack_report.py and scripts/stack_bounds.py, ...; each is named
where it is read). Their line formats are the programs' own.

The documents' prose is in docs/templates/<DOC>.md: `${name}` is a figure
or a generated table; a line `<!-- if NAME -->` ... `<!-- else -->` ...
`<!-- end -->` keeps the first part when the renderer sets NAME true, the
second otherwise (blocks do not nest).

Goals and ceilings (scripts/goals.tsv)
--------------------------------------
Tab-separated, a header row, one goal a row: key, issue, value, unit,
ceiling, why. The policy for a goal of an issue:

 * a goal that is met is enforced: FAIL when a later run misses it;
 * a goal missed today has a ceiling (today's figure rounded up by about
   5 %). The run prints one line "MISSED <what>: <figure> > <goal>
   (ceiling <c>: within|OVER)", counts a PASS while the figure stays within
   the ceiling and a FAIL when it goes over it: a missed goal does not fail
   the suite, and cannot get worse silently either. Once the goal is met,
   the ceiling can go (a NOTE line says so).

A goal judged per export, per path or per operation has that phrase
("per ...") in its ceiling column; the rows KEY[NAME] after it (an empty
value, a ceiling) hold the ceilings of the names that miss it; a NAME
without a row is enforced. A row that does not parse fails.

Output
------
One line per check: "PASS ...", "FAIL ...", plus "MISSED ..." and
"NOTE ..." lines; the last line is "RESULT: <n> passed, <m> failed" (the
script's own checks from FIGURES included), which scripts/steps.sh counts.
The exit status is 1 when a check failed. With -o the document goes to that
file and the lines to stdout; without it, the document to stdout and the
lines to stderr.
"""

import argparse
import csv
import os
import re
import string
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATES = os.path.join(ROOT, "docs", "templates")
GOALS = os.path.join(ROOT, "scripts", "goals.tsv")

NUMBER = re.compile(r"^[0-9]+(\.[0-9]+)?$")
COUNT = re.compile(r"^[0-9]+$")


def is_number(v):
    return v is not None and bool(NUMBER.match(v))


def is_count(v):
    return v is not None and bool(COUNT.match(v))


def fmt(n):
    """N with thousands separators when it is a whole number; else as it is."""
    if n is None:
        return "-"
    if not is_count(n):
        return n
    return "{:,}".format(int(n))


def per(a, n, digits=1):
    """A/N with DIGITS decimals, "-" when either is not a figure."""
    try:
        if re.match(r"^[0-9.]+$", a or "") and float(n) > 0:
            return "%.*f" % (digits, float(a) / float(n))
    except (TypeError, ValueError):
        pass
    return "-"


def ratio(a, b):
    return per(a, b, 2)


def md_code(label):
    """`claw_x` of a label that starts with a function name."""
    return re.sub(r"^(claw_[a-z_]+)(.*)$", r"`\1`\2", label)


class Checks:
    """Counts and prints the checks; the one place a PASS or FAIL is made."""

    def __init__(self, out):
        self.out = out
        self.passed = 0
        self.failed = 0

    def say(self, line):
        print(line, file=self.out)

    def ok(self, text):
        self.say("PASS " + text)
        self.passed += 1

    def fail(self, text):
        self.say("FAIL " + text)
        self.failed += 1

    def check(self, good, pass_text, fail_text):
        if good:
            self.ok(pass_text)
        else:
            self.fail(fail_text)
        return good

    def figure_ok(self, name, value):
        """True when VALUE is a decimal count; otherwise one FAIL naming it."""
        if is_count(value):
            return True
        if not value:
            self.fail("figure '%s' is empty (its measurement did not parse)" % name)
        else:
            self.fail("figure '%s' is not a decimal number: '%s'" % (name, value))
        return False

    def goal_le(self, name, value, goal, unit="", note=""):
        if not self.figure_ok(name, value) or not self.figure_ok("goal of " + name, goal):
            return False
        if int(value) <= int(goal):
            self.ok("%s %s%s <= %s%s%s" % (name, value, unit, goal, unit, note))
            return True
        self.fail("%s %s%s > %s%s%s" % (name, value, unit, goal, unit, note))
        return False

    def goal_eq(self, name, value, want, pass_text=None, fail_text=None):
        if not self.figure_ok(name, value):
            return False
        if int(value) == int(want):
            self.ok(pass_text or "%s %s" % (name, value))
            return True
        self.fail(fail_text or "%s %s, want %s" % (name, value, want))
        return False

    def goal_check(self, what, value, goal, ceiling="", unit=""):
        """The goal policy (module doc); returns the status cell of a table:
        "PASS", "**FAIL**", "**MISSED**; ceiling C: within" or
        "**MISSED**; ceiling C: **OVER**"."""
        ceiling = ceiling or ""
        c = fmt(ceiling)
        if not is_number(value):
            self.fail("%s: figure '%s' is not a number (its measurement did not parse)"
                      % (what, value or ""))
            return "**FAIL** (not measured)"
        if float(value) <= float(goal):
            self.ok("%s: %s%s <= goal %s%s" % (what, value, unit, goal, unit))
            if ceiling:
                self.say("NOTE %s: the goal is met now; its ceiling (%s%s) can go"
                         % (what, ceiling, unit))
            return "PASS"
        if not ceiling:
            self.fail("%s: %s%s > goal %s%s" % (what, value, unit, goal, unit))
            return "**FAIL**"
        if float(value) <= float(ceiling):
            self.say("MISSED %s: %s%s > goal %s%s (ceiling %s%s: within)"
                     % (what, value, unit, goal, unit, ceiling, unit))
            self.ok("%s: %s%s within ceiling %s%s (goal %s%s missed)"
                    % (what, value, unit, ceiling, unit, goal, unit))
            return "**MISSED**; ceiling %s%s: within" % (c, unit)
        self.say("MISSED %s: %s%s > goal %s%s (ceiling %s%s: OVER)"
                 % (what, value, unit, goal, unit, ceiling, unit))
        self.fail("%s: %s%s over its ceiling %s%s (goal %s%s)"
                  % (what, value, unit, ceiling, unit, goal, unit))
        return "**MISSED**; ceiling %s%s: **OVER**" % (c, unit)

    def result(self):
        self.say("RESULT: %d passed, %d failed" % (self.passed, self.failed))


class Goal:
    def __init__(self, value, ceiling):
        self.value = value  # the goal, a decimal string
        self.ceiling = ceiling  # "" (enforced), a figure, or {name: figure}


def load_goals(checks, path=GOALS):
    """KEY -> Goal from scripts/goals.tsv (the module doc has the format)."""
    goals = {}
    with open(path, newline="") as f:
        for n, row in enumerate(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE), 1):
            if n == 1 and row and row[0] == "key":
                continue
            row = (row + [""] * 6)[:6]
            key, _issue, value, _unit, ceiling, _why = row
            m = re.match(r"^([A-Z][A-Z0-9_]*)\[(.+)\]$", key)
            if m:
                name, label = m.groups()
                g = goals.get(name)
                if not value and g and isinstance(g.ceiling, dict) and is_number(ceiling):
                    g.ceiling[label] = ceiling
                    continue
            elif re.match(r"^[A-Z][A-Z0-9_]*$", key) and is_number(value):
                if ceiling.startswith("per "):
                    goals[key] = Goal(value, {})
                    continue
                if not ceiling or is_number(ceiling):
                    goals[key] = Goal(value, ceiling)
                    continue
            checks.fail("%s line %d: not a goal row (key, issue, value, unit, ceiling, why; "
                        "tab-separated): %s" % (path, n, "\t".join(row)))
    return goals


class Figures(dict):
    """The rows of FIGURES: KEY -> VALUE, and the script's own checks."""

    def __init__(self, path):
        super().__init__()
        self.dir = os.path.dirname(os.path.abspath(path))
        self.checks = []
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line or line.startswith("#"):
                    continue
                key, _, value = line.partition("\t")
                if key == "check":
                    verdict, _, text = value.partition("\t")
                    self.checks.append((verdict, text))
                else:
                    self[key] = value

    def file(self, name):
        return os.path.join(self.dir, name)

    def read(self, name):
        """The text of a data file beside FIGURES, "" when there is none."""
        try:
            with open(self.file(name), encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def flag(self, key):
        return self.get(key) == "1"


def render_template(name, values, flags):
    """docs/templates/NAME with its ${...} and <!-- if --> blocks filled."""
    with open(os.path.join(TEMPLATES, name), encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, keep, mode = [], True, None
    for line in lines:
        m = re.match(r"^<!-- (if|else|end)(?: (\w+))? -->$", line)
        if m:
            kind, flag = m.groups()
            if kind == "if":
                mode, keep = flag, bool(flags[flag])
            elif kind == "else":
                keep = not bool(flags[mode])
            else:
                mode, keep = None, True
            continue
        if keep:
            out.append(line)
    return string.Template("\n".join(out)).substitute(values)


def table(head, align, rows):
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


# =========================================================================================
# docs/SIZE.md (scripts/size_report.sh; data in target/size-report/)
# =========================================================================================
# Keys: code8 ram8 code8_nb data8 (the board build's share of the minimal
# image), heap_refs (heap functions referenced, space-separated), panic
# (the link's verdict), code8_recall ram8_recall, agent_exports agent_kept
# code8_agent ram8_agent (or agent_panic: why not shown), code8hf ram8hf
# (hf_panic when the link failed), code7 ram7 code7_member, v8 v8hf v7,
# arch_v8 arch_v8hf, rustc gcc.
def size_report(fig, checks, goals):
    v8, v8hf, v7 = fig["v8"], fig["v8hf"], fig["v7"]
    min_code, ram = goals["MIN_CODE"], goals["RAM"]
    code8, ram8 = fig.get("code8", ""), fig.get("ram8", "")
    code8_st = checks.goal_check("issue 22: vendor-ABI minimal image code (budget 24 KiB)",
                                 code8, min_code.value, min_code.ceiling, " B")
    ram8_st = checks.goal_check("issue 10: vendor-ABI minimal image static RAM",
                                ram8, ram.value, "", " B")
    checks.figure_ok("code without compiler_builtins", fig.get("code8_nb", ""))
    checks.figure_ok(".data", fig.get("data8", ""))
    heap_refs = fig.get("heap_refs", "").strip()
    heap = "0" if not heap_refs else "referenced: %s " % heap_refs
    checks.check(not heap_refs, "heap use 0 (no malloc/free/_sbrk/__rust_alloc referenced)",
                 "heap functions referenced: %s " % heap_refs)

    def measured(key):
        return fig.get(key) or "-"

    if "code8_recall" in fig:
        rc, rr = fig["code8_recall"], fig.get("ram8_recall", "")
        if checks.figure_ok("code with feature recall", rc) and is_count(code8):
            checks.ok("feature recall: links without a reachable panic (code %s B, +%d B)"
                      % (rc, int(rc) - int(code8)))
        checks.goal_le("static RAM with feature recall", rr, ram.value, " B")
    agent_panic = fig.get("agent_panic", "-")
    if "agent_exports" in fig:
        n, kept = int(fig["agent_exports"]), int(fig.get("agent_kept", "0"))
        if n < 30:
            checks.fail("feature agent: only %d claw_* functions found in include/claw_ext.h" % n)
        else:
            checks.figure_ok("code with feature agent", fig.get("code8_agent", ""))
            checks.figure_ok("static RAM with feature agent", fig.get("ram8_agent", ""))
            if kept == n:
                agent_panic = "no reachable panic (%d exports of claw_ext.h, all in the image)" % n
                checks.ok("feature agent: links without a reachable panic (%d exports of "
                          "claw_ext.h, all %d in the image)" % (n, kept))
            else:
                agent_panic = "not shown: only %d of %d exports in the image" % (kept, n)
                checks.fail("feature agent: only %d of %d claw_ext.h exports are in the image "
                            "(the check would prove nothing)" % (kept, n))
    hf_panic = fig.get("hf_panic", "-")
    if "code8hf" in fig:
        hf_panic = "no reachable panic"
        ch, rh = fig["code8hf"], fig.get("ram8hf", "")
        if checks.figure_ok(v8hf + " code", ch) and checks.figure_ok(v8hf + " static RAM", rh):
            checks.ok("%s (hard-float option): links without a reachable panic "
                      "(code %s B, static RAM %s B)" % (v8hf, ch, rh))
    if "code7_member" in fig:
        checks.figure_ok(v7 + " object member bentoclaw-*.o .text+.rodata", fig["code7_member"])
    if "code7" in fig:
        c7, r7 = fig["code7"], fig.get("ram7", "")
        if checks.figure_ok(v7 + " code", c7) and checks.figure_ok(v7 + " static RAM", r7):
            checks.ok("%s image links (code %s B, static RAM %s B)" % (v7, c7, r7))

    def status(value, goal):
        return "PASS" if is_count(value) and is_count(goal) and int(value) <= int(goal) else "FAIL"

    def verdict(good):
        return "PASS" if good else "FAIL"

    panic = fig.get("panic", "-")
    rows = [
        [v8 + " .text+.rodata", code8 + " B",
         "≤ %s B (24 KiB, issue 22: the 12 KiB of issue 10 retired)" % min_code.value, code8_st],
        [v8 + " .text+.rodata without compiler_builtins", fig.get("code8_nb", "") + " B", "—", "info"],
        [v8 + " .data+.bss", ram8 + " B", "≤ %s B (4 KiB, issue 10)" % ram.value, ram8_st],
        [v8 + " .data (its initial image also sits in flash)", fig.get("data8", "") + " B", "—", "info"],
        [v8 + " .text+.rodata with feature `recall` (claw_ext.h's recall functions referenced too)",
         measured("code8_recall") + " B", "— (option)", "info"],
        [v8 + " .data+.bss with feature `recall`", measured("ram8_recall") + " B",
         "≤ %s B (4 KiB)" % ram.value, status(measured("ram8_recall"), ram.value)],
        [v8 + " .text+.rodata with feature `agent` (every claw_ext.h export referenced; what the "
         "MicroPython module links)", measured("code8_agent") + " B",
         "— (library + binding: docs/PERFORMANCE.md)", "info"],
        [v8 + " .data+.bss with feature `agent`", measured("ram8_agent") + " B",
         "— (library in the firmware: docs/PERFORMANCE.md)", "info"],
        ["heap", heap, "0", verdict(heap == "0")],
        ["panic paths (link with `--features panic-check`)", panic, "none",
         verdict(panic == "no reachable panic")],
        ["panic paths with feature `agent` (link with `--features panic-check,agent`)", agent_panic,
         "none", verdict(agent_panic.startswith("no reachable panic"))],
        [v8hf + " (hard-float option) .text+.rodata", measured("code8hf") + " B", "—", "info"],
        [v8hf + " (hard-float option) .data+.bss", measured("ram8hf") + " B", "—", "info"],
        ["panic paths of the hard-float option (link with `--features panic-check`)", hf_panic,
         "none", verdict(hf_panic == "no reachable panic")],
        [v7 + " .text+.rodata, linked image", measured("code7") + " B", "—", "info"],
        [v7 + " .text+.rodata, object member bentoclaw-*.o of the archive",
         measured("code7_member") + " B", "—", "info"],
    ]
    values = {k: fig.get(k, "?") for k in ("v8", "v8hf", "v7", "arch_v8", "arch_v8hf", "rustc", "gcc")}
    values["table"] = table(["figure", "value", "goal", "status"], ["---", "---:", "---:", "---"], rows)
    return render_template("SIZE.md", values, {})


REPORTS = {
    "size": size_report,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", choices=sorted(REPORTS))
    ap.add_argument("figures", help="the figure data (FIGURES: see the module doc)")
    ap.add_argument("-o", "--output", help="write the document here (default: stdout)")
    ap.add_argument("--no-doc", action="store_true", help="make the checks, write no document")
    args = ap.parse_args()
    to_file = args.output or args.no_doc
    checks = Checks(sys.stdout if to_file else sys.stderr)
    fig = Figures(args.figures)
    for verdict, text in fig.checks:
        if verdict == "PASS":
            checks.passed += 1
        else:
            checks.failed += 1
    goals = load_goals(checks)
    doc = None
    if not args.no_doc:
        doc = REPORTS[args.report](fig, checks, goals)
    if doc is not None:
        if args.output:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(doc)
            checks.say("== wrote " + os.path.relpath(args.output, os.getcwd()))
        else:
            sys.stdout.write(doc)
    checks.result()
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
