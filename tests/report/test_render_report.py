#!/usr/bin/env python3
"""Unit tests of scripts/render_report.py: the goal policy, a figure that is
not a figure, scripts/goals.tsv, the figure file and a whole size report.

    python3 tests/report/test_render_report.py
"""

import io
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import render_report as rr  # noqa: E402


def checks():
    return rr.Checks(io.StringIO())


class GoalCheck(unittest.TestCase):
    def test_met(self):
        c = checks()
        self.assertEqual(c.goal_check("x", "10", "10", "", " B"), "PASS")
        self.assertEqual((c.passed, c.failed), (1, 0))

    def test_met_with_ceiling_says_it_can_go(self):
        c = checks()
        self.assertEqual(c.goal_check("x", "9", "10", "12", " B"), "PASS")
        self.assertIn("NOTE x: the goal is met now; its ceiling (12 B) can go", c.out.getvalue())

    def test_enforced_goal_missed_fails(self):
        c = checks()
        self.assertEqual(c.goal_check("x", "11", "10", "", " B"), "**FAIL**")
        self.assertEqual((c.passed, c.failed), (0, 1))

    def test_missed_within_ceiling_passes(self):
        c = checks()
        self.assertEqual(c.goal_check("x", "11000", "10000", "12000", " B"),
                         "**MISSED**; ceiling 12,000 B: within")
        self.assertEqual((c.passed, c.failed), (1, 0))
        self.assertIn("MISSED x: 11000 B > goal 10000 B (ceiling 12000 B: within)", c.out.getvalue())

    def test_over_ceiling_fails(self):
        c = checks()
        self.assertEqual(c.goal_check("x", "13000", "10000", "12000", " B"),
                         "**MISSED**; ceiling 12,000 B: **OVER**")
        self.assertEqual((c.passed, c.failed), (0, 1))

    def test_fractions(self):
        c = checks()
        self.assertEqual(c.goal_check("e", "0.001", "0.005", ""), "PASS")
        self.assertEqual(c.goal_check("e", "0.006", "0.005", ""), "**FAIL**")

    def test_not_a_figure_fails(self):
        for value in ("", "-", "12k", None):
            c = checks()
            self.assertEqual(c.goal_check("x", value, "10", "12"), "**FAIL** (not measured)")
            self.assertEqual((c.passed, c.failed), (0, 1), value)


class FigureChecks(unittest.TestCase):
    def test_figure_ok(self):
        c = checks()
        self.assertTrue(c.figure_ok("a", "12"))
        self.assertFalse(c.figure_ok("a", ""))
        self.assertFalse(c.figure_ok("a", "12k"))
        self.assertEqual((c.passed, c.failed), (0, 2))
        self.assertIn("figure 'a' is empty (its measurement did not parse)", c.out.getvalue())

    def test_goal_le(self):
        c = checks()
        self.assertTrue(c.goal_le("code", "12288", "12288", " B"))
        self.assertFalse(c.goal_le("code", "12289", "12288", " B"))
        self.assertFalse(c.goal_le("code", "", "12288", " B"))
        self.assertEqual((c.passed, c.failed), (1, 2))

    def test_fmt(self):
        self.assertEqual(rr.fmt("1234567"), "1,234,567")
        self.assertEqual(rr.fmt("0.5"), "0.5")
        self.assertEqual(rr.fmt("-"), "-")
        self.assertEqual(rr.per("1000", "3", 1), "333.3")
        self.assertEqual(rr.per("", "3", 1), "-")
        self.assertEqual(rr.per("10", "", 1), "-")


class Goals(unittest.TestCase):
    def test_the_project_goals_load(self):
        c = checks()
        goals = rr.load_goals(c)
        self.assertEqual(c.failed, 0, c.out.getvalue())
        for key in ("FW_CODE", "RAM", "MIN_CODE", "STACK", "PER_BYTE", "READ_MEAN", "HEAP_FREE"):
            self.assertIn(key, goals)
        self.assertIsInstance(goals["READ_MEAN"].ceiling, dict)
        self.assertIn("ask", goals["READ_MEAN"].ceiling)

    def test_a_bad_row_fails(self):
        with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
            f.write("key\tissue\tvalue\tunit\tceiling\twhy\nGOOD\t1\t10\tB\t\tok\nbad\t1\tx\tB\t\t\n")
        try:
            c = checks()
            goals = rr.load_goals(c, f.name)
            self.assertIn("GOOD", goals)
            self.assertEqual(c.failed, 1)
        finally:
            os.unlink(f.name)


class SizeReport(unittest.TestCase):
    FIGURES = {
        "v8": "thumbv8m.main-none-eabi", "v8hf": "thumbv8m.main-none-eabihf", "v7": "thumbv7m-none-eabi",
        "arch_v8": "-mcpu=cortex-m33", "arch_v8hf": "-mcpu=cortex-m33 -mfloat-abi=hard",
        "rustc": "rustc 1", "gcc": "12", "panic": "no reachable panic", "code8": "20000", "ram8": "3000",
        "code8_nb": "19000", "data8": "0", "heap_refs": "", "code8_recall": "21000", "ram8_recall": "3000",
        "code8_agent": "70000", "ram8_agent": "3900", "agent_exports": "50", "agent_kept": "50",
        "code8hf": "20000", "ram8hf": "3000", "code7_member": "19000", "code7": "20100", "ram7": "3000",
    }

    def run_size(self, figures, extra=""):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "figures.tsv")
            with open(path, "w") as f:
                for k, v in figures.items():
                    f.write("%s\t%s\n" % (k, v))
                f.write(extra)
            doc = os.path.join(d, "SIZE.md")
            p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "render_report.py"), "size", path,
                                "-o", doc], capture_output=True, text=True)
            text = ""
            if os.path.exists(doc):
                with open(doc, encoding="utf-8") as f:
                    text = f.read()
        return p, text

    def test_all_met(self):
        p, doc = self.run_size(self.FIGURES, "check\tPASS\ta link\n")
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertTrue(p.stdout.rstrip().endswith("RESULT: 9 passed, 0 failed"), p.stdout)
        self.assertIn("| thumbv8m.main-none-eabi .text+.rodata | 20000 B |", doc)
        self.assertNotIn("${", doc)

    def test_empty_figure_and_script_failure_fail(self):
        figures = dict(self.FIGURES, code8="", heap_refs="malloc")
        # The recall line needs the board build's code figure: not counted.
        p, doc = self.run_size(figures, "check\tFAIL\ta link\n")
        self.assertEqual(p.returncode, 1)
        self.assertIn("FAIL issue 22: vendor-ABI minimal image code (budget 24 KiB): figure '' is not a number",
                      p.stdout)
        self.assertIn("FAIL heap functions referenced: malloc", p.stdout)
        self.assertTrue(p.stdout.rstrip().endswith("RESULT: 5 passed, 3 failed"), p.stdout)
        self.assertIn("| heap | referenced: malloc  | 0 | FAIL |", doc)


if __name__ == "__main__":
    # The count line scripts/steps.sh reads (scripts/test.sh's step "report renderer").
    result = unittest.main(exit=False).result
    bad = len(result.failures) + len(result.errors)
    print("RESULT: %d passed, %d failed" % (result.testsRun - bad, bad))
    sys.exit(1 if bad or not result.testsRun else 0)
