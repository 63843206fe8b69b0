#!/usr/bin/env python3
"""README.md's performance table is docs/performance.md's: the lines between `<!-- perf:begin -->`
and `<!-- perf:end -->` are the same in both files, and both files are what `scripts/perfdoc` makes
from docs/bench.csv (`scripts/perfdoc --check`), so a table edited by hand, or a new bench run
copied into one file only, fails here.

Usage: check_perf.py SOURCE_ROOT [--self-test]
--self-test: a README table that differs from performance.md's by one cell, and one without its
markers, must each be found. Exit 0 when they agree, 1 with what differs.
"""
import subprocess
import sys

import docs_check

BEGIN, END = "<!-- perf:begin -->", "<!-- perf:end -->"


def block(text, name):
    """The marked block of text (markers included), or an error line."""
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        return None, f"{name}: needs exactly one {BEGIN} and one {END}"
    start, end = text.index(BEGIN), text.index(END)
    if end < start:
        return None, f"{name}: {END} comes before {BEGIN}"
    return text[start:end + len(END)], None


def compare(readme, perf):
    problems = []
    a, err_a = block(readme, "README.md")
    b, err_b = block(perf, "docs/performance.md")
    problems += [e for e in (err_a, err_b) if e]
    if a is not None and b is not None and a != b:
        for i, (x, y) in enumerate(zip(a.splitlines() + [""] * 99, b.splitlines() + [""] * 99)):
            if x != y:
                problems.append(f"README.md's performance table differs from docs/performance.md's "
                                f"at its line {i + 1}:\n  README.md:           {x}\n"
                                f"  docs/performance.md: {y}\n  (run scripts/perfdoc)")
                break
    return problems


def self_test(readme, perf):
    failures = []
    a, _ = block(readme, "README.md")
    if a is None or "|" not in a:
        return ["self-test: README.md has no marked table to break"]
    last_row = [line for line in a.splitlines() if line.startswith("|")][-1]
    changed = readme.replace(last_row, last_row[:-1] + " 9.99 |", 1)
    if not compare(changed, perf):
        failures.append("self-test: a changed cell in README's table was not found")
    if not compare(readme.replace(BEGIN, "", 1), perf):
        failures.append("self-test: a README without its begin marker was not found")
    return failures


def load(root):
    """The source root, README.md and docs/performance.md."""
    with open(f"{root}/README.md", encoding="utf-8") as f:
        readme = f.read()
    with open(f"{root}/docs/performance.md", encoding="utf-8") as f:
        perf = f.read()
    return root, readme, perf


def check(inputs):
    root, readme, perf = inputs
    problems = compare(readme, perf)
    run = subprocess.run([sys.executable, f"{root}/scripts/perfdoc", "--check"],
                         capture_output=True, text=True, check=False)
    if run.returncode != 0:
        problems.append((run.stdout + run.stderr).strip() or "scripts/perfdoc --check failed")
    return problems


def main(argv):
    return docs_check.run(
        argv, __doc__, 1, load, check, lambda inputs: self_test(*inputs[1:]),
        lambda inputs: "README.md's performance table is docs/performance.md's, and both are "
        "what scripts/perfdoc makes from docs/bench.csv",
        "--self-test: every break was found")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
