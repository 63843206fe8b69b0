#!/usr/bin/env python3
"""docs/design.md says how poolfs works now: at most MAX_BYTES, and no dated history (a date, "until
2026...", "before/after", "before this change" ...). History goes to docs/decisions.md, with the
date of each decision; measurements to docs/performance.md.

PENDING names sections another change is rewriting: their history is reported as a note, not a
failure, and once such a section is clean the check fails until its entry is removed here, so an
exemption cannot outlive its reason.

Usage: check_design.py SOURCE_ROOT [--self-test]
--self-test: each kind of history marker, added to a copy of the text, must be found, and an
oversized copy must fail. Exit 0 when design.md is current, 1 with one line per finding.
"""
import re
import sys

import docs_check

MAX_BYTES = 40000
PENDING: set = set()
MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|"
          "December")
MARKERS = [
    (r"\b(19|20)\d\d-\d\d(-\d\d)?\b", "a date"),
    (rf"\b({MONTHS}) (19|20)\d\d\b", "a month and year"),
    (r"\b([Uu]ntil|[Ss]ince|[Bb]efore|[Aa]fter|[Oo]n|[Ii]n) (19|20)\d\d\b", "a year"),
    (r"\bbefore/after\b|\bbefore and after\b", "before/after"),
    (r"\b[Bb]efore this (work|change|commit)\b", "before this change"),
    (r"\b(timed|measured) on (19|20)\d\d", "a dated measurement"),
]


def sections(text):
    """(heading, body) pairs; text before the first heading has heading None."""
    out, name, body = [], None, []
    for line in text.splitlines(keepends=True):
        m = re.match(r"^#{2,6}\s+(.*?)\s*$", line)
        if m:
            out.append((name, "".join(body)))
            name, body = m.group(1), []
        body.append(line)
    out.append((name, "".join(body)))
    return out


def findings(text):
    """(problems, notes): lines that fail the check, lines only reported."""
    problems, notes = [], []
    size = len(text.encode("utf-8"))
    if size > MAX_BYTES:
        problems.append(f"docs/design.md: {size} bytes, more than {MAX_BYTES}: move history to "
                        "docs/decisions.md, measurements to docs/performance.md")
    pending_hits = {name: 0 for name in PENDING}
    for name, body in sections(text):
        for pattern, what in MARKERS:
            for m in re.finditer(pattern, body):
                line = body[:m.start()].count("\n")
                where = f'docs/design.md "{name}" (its line {line + 1})'
                msg = f"{where}: {what}, {m.group(0)!r}: history belongs in docs/decisions.md"
                if name in PENDING:
                    pending_hits[name] += 1
                    notes.append("note (pending rewrite): " + msg)
                else:
                    problems.append(msg)
    headings = {name for name, _ in sections(text)}
    for name, hits in sorted(pending_hits.items()):
        if name in headings and hits == 0:
            problems.append(f'docs/design.md "{name}" has no dated history left: remove it from '
                            "PENDING in tests/docs/check_design.py")
    return problems, notes


def self_test(text):
    failures = []
    # A section no one is rewriting, to add the markers to.
    anchor = "\n## Purpose\n"
    if anchor not in text:
        return ['self-test: docs/design.md has no section "Purpose" to add markers to']
    base = set(findings(text)[0])
    for added in ("Measured on 2026-11-23 it took 5 ms.", "Until 2026-11 names were cached.",
                  "In November 2026 this was slower.", "The before/after timings differ.",
                  "Before this change it took longer.", "since 2025 it is so."):
        broken = text.replace(anchor, anchor + added + "\n", 1)
        if not set(findings(broken)[0]) - base:
            failures.append(f"self-test: {added!r} was not found")
    if not set(findings(text + "x" * (MAX_BYTES + 1))[0]) - base:
        failures.append("self-test: an oversized design.md was not found")
    return failures


def load(root):
    with open(f"{root}/docs/design.md", encoding="utf-8") as f:
        return f.read()


def check(text):
    """The findings, after the notes on the pending sections (printed, never a failure)."""
    problems, notes = findings(text)
    for line in notes:
        print(line)
    return problems


def main(argv):
    return docs_check.run(
        argv, __doc__, 1, load, check, self_test,
        lambda text: f"docs/design.md: {len(text.encode('utf-8'))} bytes (at most {MAX_BYTES}), "
        "no dated history outside the pending sections",
        "--self-test: every marker was found")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
