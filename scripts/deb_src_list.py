#!/usr/bin/env python3
"""Write a private deb822 deb-src list for one Debian suite (scripts/lib.sh, write_src_list).

The URIs and Signed-By are those of the system's own Debian archive entry for its codename, read
from /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list, so no host name is written in
this repository.

    deb_src_list.py OUT SUITE CODENAME
"""
import os
import re
import sys


def deb822_stanzas(text):
    """Yield dicts of field -> value (continuation lines kept, joined with newlines)."""
    stanza, last = {}, None
    for line in text.splitlines():
        if line.startswith('#'):
            continue
        if not line.strip():
            if stanza:
                yield stanza
            stanza, last = {}, None
        elif line[0] in ' \t' and last:
            stanza[last] += '\n' + line
        elif ':' in line:
            key, val = line.split(':', 1)
            last = key.strip().lower()
            stanza[last] = val.strip()
    if stanza:
        yield stanza


def from_deb822(path, codename):
    """(URIs, Signed-By or None) of the first enabled deb/deb-src stanza for codename, or None."""
    with open(path) as f:
        text = f.read()
    for st in deb822_stanzas(text):
        if st.get('enabled', 'yes').lower() == 'no':
            continue
        types = st.get('types', '').split()
        suites = st.get('suites', '').split()
        if not ('deb' in types or 'deb-src' in types) or not st.get('uris'):
            continue
        if codename and codename not in suites:
            continue
        return st['uris'].split(), st.get('signed-by')
    return None


def from_one_line(path, codename):
    """The same from a one-line-style sources.list."""
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines:
        line = line.split('#', 1)[0].strip()
        m = re.match(r'^(deb|deb-src)\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)', line)
        if not m or (codename and m.group(4) != codename):
            continue
        signed = None
        for opt in (m.group(2) or '').split():
            if opt.startswith('signed-by='):
                signed = opt.split('=', 1)[1]
        return [m.group(3)], signed
    return None


def find_archive(codename):
    """The system's archive entry for codename: deb822 files first, then sources.list."""
    candidates = ['/etc/apt/sources.list.d/debian.sources']
    candidates += sorted(os.path.join('/etc/apt/sources.list.d', f)
                         for f in os.listdir('/etc/apt/sources.list.d') if f.endswith('.sources'))
    for path in candidates:
        if os.path.isfile(path):
            found = from_deb822(path, codename)
            if found:
                return found
    if os.path.isfile('/etc/apt/sources.list'):
        return from_one_line('/etc/apt/sources.list', codename)
    return None


def main(argv):
    if len(argv) != 4:
        sys.exit('usage: deb_src_list.py OUT SUITE CODENAME')
    out, suite, codename = argv[1:4]
    found = find_archive(codename)
    if not found:
        sys.exit('no Debian archive entry for suite %r found in /etc/apt/sources.list.d/debian.sources '
                 'or /etc/apt/sources.list' % codename)
    uris, signed = found
    with open(out, 'w') as f:
        f.write('Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\n' % (' '.join(uris), suite))
        if signed:
            f.write('Signed-By: %s\n' % signed)


if __name__ == '__main__':
    main(sys.argv)
