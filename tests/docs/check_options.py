#!/usr/bin/env python3
"""The daemon's options are written in four places: `poolfs --help` (fs/main.c), poolfs(8) (the
one full description), docs/interface.md "Daemon command line" (the exact contract) and README's
"Options" (names only). Each is parsed into its own list here, and the lists must agree on every
option's name, values (`a|b|c`) and default, on the command-line flags (-f -d -s) and on the
mount helpers' options the daemon ignores. A default is compared by meaning, not by wording:
`1M` = `1048576`, `none` = `0` (no limit), a flag's default is "off".

Usage: check_options.py POOLFS_BIN SOURCE_ROOT [--self-test]

--self-test: breaks each source in turn (a wrong default, a missing option, a wrong value list,
an extra ignored option) and fails unless every break is found, so this check cannot pass by
parsing nothing. Exit 0 when all agree, 1 with one line per disagreement.
"""
import re
import subprocess
import sys

import docs_check

SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


class Source:
    """What one document says: option name -> {"values": set or None, "default": str or None}."""

    def __init__(self, name):
        self.name = name
        self.options = {}
        self.flags = set()
        self.ignored = set()
        self.errors = []

    def add(self, token, text):
        """token: `name`, `name=ARG` or `name=a|b|c`; text: where "(default ...)" may be."""
        name, _, arg = token.partition("=")
        values = set(arg.split("|")) if "|" in arg else None
        m = re.search(r"\(default:?\s+([^)]*)\)", text)
        default = m.group(1) if m else None
        if name in self.options:
            self.errors.append(f"{self.name}: option {name} described twice")
        self.options[name] = {"takes_value": "=" in token, "values": values, "default": default}


def canonical_default(raw, takes_value):
    """The meaning of a "(default ...)" text, so that different wordings of one default compare
    equal and different defaults do not."""
    if raw is None:
        return None
    p = re.sub(r"\s+", " ", raw.replace("`", "")).strip().lstrip(":").strip().lower()
    # backing=: "as root, a private tmpfs instance; else /dev/shm" in whatever words.
    if "private" in p and "tmpfs" in p and "/dev/shm" in p:
        return "private tmpfs instance as root, else /dev/shm"
    m = re.match(r"[^\s,;:()]+", p)
    word = m.group(0) if m else p
    if not takes_value:
        return "off" if word in ("off", "no", "disabled") else f"?{p}"
    if word in ("none", "unlimited") or p.startswith("no limit"):
        return "0"
    size = re.fullmatch(r"(\d+)([kmgt]?)b?", word)
    if size:
        return str(int(size.group(1)) * SIZE_UNITS[size.group(2)])
    return word


def normalize_ignored(word):
    """`comment=`, `comment=*` and `x-*` name the same kinds of option in every source."""
    word = word.strip().strip(".").strip("`").strip()
    return re.sub(r"=\*?$", "=", word)


def parse_help(text):
    src = Source("poolfs --help")
    usage = re.search(r"^usage: \S+ (.*)$", text, re.M)
    if usage:
        src.flags = set(re.findall(r"\[-(\w)\]", usage.group(1)))
    block = re.search(r"^pool options:\n(.*?)^(?=\S)", text, re.M | re.S)
    if not block:
        src.errors.append("poolfs --help: no 'pool options:' block")
        return src
    items = []  # [token, description]
    for line in block.group(1).splitlines():
        m = re.match(r"^\s+-o (\S+)\s+(.*)$", line)
        if m:
            items.append([m.group(1), m.group(2)])
        elif items and line.strip():
            items[-1][1] += " " + line.strip()  # a description's continuation line
    for token, desc in items:
        # "huge=MODE  never|within_size|...: ..." names its values in the description.
        values = re.match(r"([\w/]+(?:\|[\w/]+)+)", desc)
        if values and "=" in token:
            token = token.split("=")[0] + "=" + values.group(1)
        src.add(token, desc)
    helpers = re.search(r"options\s+of mount helpers:(.*?)\.\s*$", text, re.M | re.S)
    if helpers:
        src.ignored = {normalize_ignored(w) for w in helpers.group(1).split(",") if w.strip()}
    else:
        src.errors.append("poolfs --help: no list of the mount helpers' options")
    return src


def roff_to_text(roff):
    """The man source as plain lines: font macros' arguments joined the way man joins them, font
    escapes dropped, \\c joining a line to the next. Request lines other than fonts are kept (.TP,
    .SH ...) so the caller can find the structure."""
    out = []
    for line in roff.splitlines():
        if line.startswith('.\\"'):
            continue
        m = re.match(r"^\.(B|I|BR|BI|RB|RI|IR|IB)\s+(.*)$", line)
        if m:
            args = re.findall(r'"([^"]*)"|(\S+)', m.group(2))
            args = [a or b for a, b in args]
            # .B/.I join words with spaces; the alternating macros join them with nothing.
            line = (" " if m.group(1) in ("B", "I") else "").join(args)
        line = re.sub(r"\\f[BIRP]", "", line).replace("\\-", "-").replace("\\&", "")
        if out and out[-1].endswith("\\c"):
            out[-1] = out[-1][:-2] + line
        else:
            out.append(line)
    return out


def parse_man(roff):
    src = Source("poolfs(8)")
    lines = roff_to_text(roff)
    section = None
    items = []  # [tag, body]
    after_tp = False
    for line in lines:
        if line.startswith(".SH"):
            section = line[3:].strip().strip('"')
            continue
        if section == "SYNOPSIS":
            src.flags |= set(re.findall(r"\[-(\w)\]", line))
        if section != "OPTIONS":
            continue
        if line.startswith(".TP"):
            after_tp = True
            continue
        if line.startswith((".PP", ".SS")):
            items.append(None)  # ends the item before it
            continue
        if after_tp:
            items.append([line.strip(), ""])
            after_tp = False
        elif items and items[-1] is not None:
            items[-1][1] += " " + line.strip()
    for item in items:
        if item is None:
            continue
        tag, body = item
        if tag.startswith("-"):
            src.options.setdefault("-flags", set()).add(tag.lstrip("-"))
            continue
        src.add(tag, body)
    man_flags = src.options.pop("-flags", set())
    if man_flags != src.flags:
        src.errors.append(f"poolfs(8): SYNOPSIS flags {sorted(src.flags)} but OPTIONS describes "
                          f"{sorted(man_flags)}")
    text = " ".join(lines)
    helpers = re.search(r"options of mount helpers are ignored:(.*?)\.\s", text)
    if helpers:
        words = re.split(r",|\band\b", helpers.group(1))
        src.ignored = {normalize_ignored(w) for w in words if w.strip()}
    else:
        src.errors.append("poolfs(8): no list of the mount helpers' options")
    return src


def section(md, title, src):
    """The text of the Markdown section `title` (up to the next "## "), or None with an error."""
    sec = re.search(r"^## " + re.escape(title) + r"\n(.*?)^## ", md, re.M | re.S)
    if not sec:
        src.errors.append(f'{src.name}: no section "{title}"')
        return None
    return sec.group(1)


def parse_interface(md):
    src = Source("docs/interface.md")
    body = section(md, "Daemon command line", src)
    if body is None:
        return src
    synopsis = re.search(r"^poolfs (.*)$", body, re.M)
    if synopsis:
        src.flags = set(re.findall(r"\[-(\w)\]", synopsis.group(1)))
    bullets = re.findall(r"^- (.*(?:\n  .*)*)", body, re.M)
    described_flags = set()
    for bullet in bullets:
        bullet = re.sub(r"\s+", " ", bullet)
        if bullet.startswith("Ignored"):
            words = re.findall(r"`([^`]+)`", bullet.split(":", 1)[1].split(". ")[0])
            src.ignored = {normalize_ignored(w) for w in words}
            continue
        if bullet.startswith("`-"):  # "`-f` foreground, `-d` debug (implies `-f`), `-s` ..."
            described_flags |= set(re.findall(r"`-(\w)`", bullet))
            continue
        # An option bullet starts with one or more "`token` (default ...)", comma-separated, then
        # ":" or ".": a bullet that only mentions an option ("`max_size` with ...") defines none.
        pos = 0
        head = re.compile(r"`(\w+(?:=\S*)?)`( \((?:[^()]|\([^()]*\))*\))?(?=[:,.]|$)(?:, )?")
        while True:
            m = head.match(bullet, pos)
            if not m:
                break
            src.add(m.group(1), m.group(2) or "")
            pos = m.end()
    if described_flags != src.flags:
        src.errors.append(f"docs/interface.md: synopsis flags {sorted(src.flags)} but the bullets "
                          f"describe {sorted(described_flags)}")
    if not src.ignored:
        src.errors.append("docs/interface.md: no 'Ignored' list of the mount helpers' options")
    return src


def parse_readme(md):
    """README names the options (no defaults): the backticked names in its "Options" list."""
    src = Source("README.md")
    body = section(md, "Options", src)
    if body is None:
        return src
    for line in body.splitlines():
        if line.startswith("- "):
            for token in re.findall(r"`(\w+)=?`", line):
                src.options[token] = None
    if "poolfs(8)" not in body:
        src.errors.append('README.md "Options" does not point to poolfs(8)')
    return src


def compare(help_src, man_src, iface_src, readme_src):
    """Every disagreement, one line each."""
    problems = []
    full = [help_src, man_src, iface_src]
    for s in full + [readme_src]:
        problems += s.errors
    names = set(help_src.options)
    for s in full + [readme_src]:
        if not s.options:
            problems.append(f"{s.name}: no options found (has its format changed?)")
    for s in [man_src, iface_src, readme_src]:
        for n in sorted(names - set(s.options)):
            problems.append(f"{s.name} lacks option {n} (in {help_src.name})")
        for n in sorted(set(s.options) - names):
            problems.append(f"{s.name} has option {n}, which {help_src.name} lacks")
    for n in sorted(names):
        present = [s for s in full if n in s.options]
        seen = {}
        for s in present:
            o = s.options[n]
            if o["default"] is None and (o["takes_value"] or s is not help_src):
                # --help may leave a flag's "off" unsaid; the full descriptions may not.
                problems.append(f"{s.name}: option {n} states no default")
                continue
            seen[s.name] = (canonical_default(o["default"] or "off", o["takes_value"]),
                            o["default"])
        if len({c for c, _ in seen.values()}) > 1:
            told = "; ".join(f"{k}: {raw!r} = {c}" for k, (c, raw) in seen.items())
            problems.append(f"option {n}: defaults differ ({told})")
        kinds = {s.name: s.options[n]["takes_value"] for s in present}
        if len(set(kinds.values())) > 1:
            problems.append(f"option {n}: takes a value in some sources, not in others {kinds}")
        values = {s.name: s.options[n]["values"] for s in present if s.options[n]["values"]}
        if len({frozenset(v) for v in values.values()}) > 1:
            told = "; ".join(f"{k}: {'|'.join(sorted(v))}" for k, v in values.items())
            problems.append(f"option {n}: values differ ({told})")
    for s in [man_src, iface_src]:
        if s.flags != help_src.flags:
            problems.append(f"flags differ: {help_src.name} {sorted(help_src.flags)}, "
                            f"{s.name} {sorted(s.flags)}")
        if s.ignored != help_src.ignored:
            problems.append(f"ignored mount helper options differ: {help_src.name} "
                            f"{sorted(help_src.ignored)}, {s.name} {sorted(s.ignored)}")
    return problems


def check(texts):
    return compare(parse_help(texts["help"]), parse_man(texts["man"]),
                   parse_interface(texts["interface"]), parse_readme(texts["readme"]))


def self_test(texts):
    """Each break below must be found; a parser that silently matched nothing would find none."""
    breaks = [
        ("help", r"\(default session\)", "(default process)", "default in --help"),
        ("help", r"^\s+-o linger=.*\n", "", "option missing from --help"),
        ("help", r"_netdev, ", "", "ignored option missing from --help"),
        ("man", r"\(default\n\.BR session \)", "(default\n.BR none )", "default in poolfs(8)"),
        ("man", r"\(default 64M;", "(default 32M;", "size default in poolfs(8)"),
        ("man", r"\.TP\n\.B debug\n", ".TP\n.B debugging\n", "option renamed in poolfs(8)"),
        ("man", r"within_size \| always", "within_size | sometimes", "values in poolfs(8)"),
        ("man", r"\(default off: a private pool\)", "(default on)", "flag default in poolfs(8)"),
        ("interface", r"\(default 1048576 = `1M`\)", "(default 1048575)", "default in interface.md"),
        ("interface", r"- `uring=auto\|on\|off` \(default `auto`\)", "- `uring=auto|on|off`",
         "default missing from interface.md"),
        ("interface", r"`suid`, ", "`suid`, `nodev`, ", "extra ignored option in interface.md"),
        ("interface", r"\[-s\] \[-o", "[-o", "flag missing from interface.md"),
        ("readme", r"^(- users: `allow_other`, )`root_exempt`", r"\1`root_exemption`",
         "name in README"),
    ]
    failures = []
    base = set(check(texts))
    for key, pattern, repl, what in breaks:
        broken = dict(texts)
        broken[key], n = re.subn(pattern, repl, texts[key], count=1, flags=re.M)
        if n != 1:
            failures.append(f"self-test: could not make the break '{what}' (text changed?)")
        elif not set(check(broken)) - base:
            failures.append(f"self-test: the break '{what}' was not found")
    return failures


def load(poolfs, root):
    """The four texts: `poolfs --help`, poolfs(8), docs/interface.md and README.md."""
    run = subprocess.run([poolfs, "--help"], capture_output=True, text=True, check=False)
    texts = {"help": run.stdout}
    for key, path in (("man", "man/poolfs.8"), ("interface", "docs/interface.md"),
                      ("readme", "README.md")):
        with open(f"{root}/{path}", encoding="utf-8") as f:
            texts[key] = f.read()
    return texts


def main(argv):
    return docs_check.run(
        argv, __doc__, 2, load, check, self_test,
        lambda texts: "poolfs --help, poolfs(8), docs/interface.md and README agree on every option",
        "--self-test: every break was found")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
