#!/usr/bin/env python3
"""README.md's first screen is a newcomer's: a title, one short paragraph saying what poolfs is and
for whom, then the two commands (`scripts/run` and `scripts/test`) in the first code block, within
the first FIRST_LINES lines, then "## Installing" as the first section; and the whole file at most
MAX_BYTES. The depth lives in the man pages and docs/.

Usage: check_readme.py SOURCE_ROOT [--self-test]
--self-test: an oversized copy, a copy whose commands come late, one without them and one whose
first section is another must each fail. Exit 0 when README.md holds, 1 with one line per finding.
"""
import re
import sys

import docs_check

MAX_BYTES = 15000
FIRST_LINES = 20


def findings(text):
    """The problems of README text, one line each."""
    problems = []
    size = len(text.encode("utf-8"))
    if size > MAX_BYTES:
        problems.append(f"README.md: {size} bytes, more than {MAX_BYTES}: move the depth to the man "
                        "pages or docs/")
    lines = text.splitlines()
    blocks = [i for i, line in enumerate(lines) if line.startswith("```")]
    if len(blocks) < 2:
        problems.append("README.md: no code block with the two commands")
    else:
        first = lines[blocks[0] + 1:blocks[1]]
        for cmd in ("scripts/run", "scripts/test"):
            if not any(re.match(rf"^{re.escape(cmd)}\b", line) for line in first):
                problems.append(f"README.md: `{cmd}` is not a command of its first code block")
        if blocks[1] >= FIRST_LINES:
            problems.append(f"README.md: the two commands end at line {blocks[1] + 1}, past the "
                            f"first {FIRST_LINES}")
        intro = [line for line in lines[1:blocks[0]] if line.strip() and not line.startswith("#")]
        if not intro:
            problems.append("README.md: no sentence before the commands says what poolfs is")
    heads = [line for line in lines if line.startswith("## ")]
    if not heads or heads[0] != "## Installing":
        problems.append(f"README.md: its first section is {heads[0] if heads else 'missing'!r}, "
                        "not '## Installing'")
    return problems


def self_test(text):
    """The problems a correct check must find in broken copies, as failures of the self-test."""
    failures = []
    if findings(text):
        failures.append("self-test: README.md itself fails the check; fix it first")
    broken = {
        "an oversized README": text + "x" * (MAX_BYTES + 1),
        "commands past the first screen": text.replace("```sh", "\n" * FIRST_LINES + "```sh", 1),
        "no scripts/test command": re.sub(r"(?m)^scripts/test\b", "scripts/tests", text, count=1),
        "another first section": text.replace("## Installing", "## Lifetime rules first", 1),
    }
    for what, copy in broken.items():
        if not findings(copy):
            failures.append(f"self-test: {what} was not found")
    return failures


def load(root):
    with open(f"{root}/README.md", encoding="utf-8") as f:
        return f.read()


if __name__ == "__main__":
    sys.exit(docs_check.run(
        sys.argv, __doc__, 1, load, findings, self_test,
        lambda text: f"README.md's first screen is a newcomer's, {len(text.encode())} bytes "
                     f"(at most {MAX_BYTES})",
        "check_readme.py finds an oversized README, late or missing commands and another first "
        "section"))
