#!/usr/bin/env python3
"""Every relative link in the tree's Markdown files resolves: `[text](path)` to a file or folder
that exists, `[text](path#anchor)` and `[text](#anchor)` to a heading of that file (GitHub's
anchors: lower case, punctuation dropped, spaces to hyphens, "-1" for a repeated heading). When a
document moves or a section is renamed, a link to the old place fails here rather than on a
reader. Links to other sites are not fetched.

Usage: check_links.py SOURCE_ROOT. Exit 0 when every link resolves, 1 with one line per broken link.
"""
import os
import re
import subprocess
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def markdown_files(root):
    """The Markdown files git knows of (tracked, or new and not ignored): not build trees."""
    out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others",
                          "--exclude-standard", "*.md"], capture_output=True, text=True, check=False)
    if out.returncode == 0:
        return sorted({f for f in out.stdout.splitlines() if os.path.exists(os.path.join(root, f))})
    found = []
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
        found += [os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(".md")]
    return sorted(found)


def without_code(text):
    """The text with fenced code blocks and inline code blanked, so examples are not links."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "``", text)


def anchors(text):
    seen = {}
    result = set()
    for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.sub(r"^```.*?^```", "", text,
                                                             flags=re.M | re.S), re.M):
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        result.add(slug if n == 0 else f"{slug}-{n}")
    return result


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = argv[1]
    problems = []
    files = markdown_files(root)
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        for m in LINK.finditer(without_code(text)):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ...
                continue
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(rel), path)) if path else rel
            full = os.path.join(root, dest)
            if not os.path.exists(full):
                problems.append(f"{rel}: link to {target}: {dest} does not exist")
                continue
            if anchor:
                if not dest.endswith(".md"):
                    problems.append(f"{rel}: link to {target}: an anchor into a file that is not Markdown")
                    continue
                with open(full, encoding="utf-8") as f:
                    if anchor not in anchors(f.read()):
                        problems.append(f"{rel}: link to {target}: no heading #{anchor} in {dest}")
    for p in problems:
        print(p)
    if not files:
        print("no Markdown files found")
        return 1
    if problems:
        return 1
    print(f"every relative link in {len(files)} Markdown files resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
