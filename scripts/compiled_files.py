#!/usr/bin/env python3
"""The source files of a meson build dir's compile_commands.json that lie under ROOT, one a line,
each once, in the order meson lists them (scripts/lint runs clang-tidy on them: only files meson
compiled in that build dir have compile commands).

    compiled_files.py COMPILE_COMMANDS_JSON ROOT
"""
import json
import os
import sys


def main(argv):
    if len(argv) != 3:
        sys.exit('usage: compiled_files.py COMPILE_COMMANDS_JSON ROOT')
    with open(argv[1]) as f:
        entries = json.load(f)
    seen = set()
    for e in entries:
        path = os.path.normpath(os.path.join(e['directory'], e['file']))
        if path.startswith(argv[2] + '/') and path not in seen:
            seen.add(path)
            print(path)


if __name__ == '__main__':
    main(sys.argv)
