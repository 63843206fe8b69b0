#!/usr/bin/env python3
"""scripts/count_tests.py, which makes scripts/test's "N passed, N failed" line, counts right.

    test_count_tests.py ROOT

TAP output. Each case writes a meson testlog.json of its own into a temporary build dir (one
without meson's introspection data, so binaries are told TAP by their output) and checks the
counts and, with --failed, the names of what failed: a failure must never be counted as a pass
or a skip, and the last lines of a CI log must name it.
"""
import json
import os
import subprocess
import sys
import tempfile


def record(name, result, stdout, returncode=0, stderr=''):
    return {'name': name, 'result': result, 'returncode': returncode, 'stdout': stdout,
            'stderr': stderr}


def run(root, records, *flags):
    """count_tests.py's output for a build dir whose last run logged `records`."""
    with tempfile.TemporaryDirectory(prefix='poolfs-count-') as builddir:
        os.mkdir(os.path.join(builddir, 'meson-logs'))
        with open(os.path.join(builddir, 'meson-logs', 'testlog.json'), 'w') as f:
            for r in records:
                f.write(json.dumps(r) + '\n')
        out = subprocess.run([sys.executable, os.path.join(root, 'scripts', 'count_tests.py'),
                              *flags, builddir], capture_output=True, text=True, check=True)
        return out.stdout


TAP_PASS = '1..2\nok 1 - a\nok 2 - b\n'
TAP_ONE_FAILED = '1..3\nok 1 - a\nnot ok 2 - test_same_name\n# why it failed\nok 3 - c\n'
TAP_CUT_SHORT = '1..4\nok 1 - a\n'  # a timeout or crash after the first case
# Skips with reasons scripts/skip_reasons.py allows (what it does with others:
# tests/lint/test_skip_reasons.py).
TAP_SKIPS = ('1..3\nok 1 - a\nok 2 - b # SKIP io_uring is not in use\n'
             'not ok 3 - c # SKIP no passthrough\n')

CASES = [
    ('every case of passing binaries passes',
     [record('p:s / a', 'OK', TAP_PASS), record('p:s / b', 'OK', TAP_PASS)],
     (), '4 0 0\n'),
    ('a failed case counts once, its binary\'s passes still count',
     [record('p:s / a', 'FAIL', TAP_ONE_FAILED, 1)], (), '2 1 0\n'),
    ('a binary cut short fails every case it planned and never reported',
     [record('p:s / a', 'TIMEOUT', TAP_CUT_SHORT, -15)], (), '1 3 0\n'),
    ('cmocka skips (ok and not ok with a SKIP directive) count as skipped, not failed',
     [record('p:s / a', 'FAIL', TAP_SKIPS, 0)], (), '1 0 2\n'),
    ('a plain (non-TAP) binary is one case',
     [record('p:s / a', 'OK', ''), record('p:s / b', 'FAIL', 'boom', 1),
      record('p:s / c', 'SKIP', '# skip: not root\n', 77)], (), '1 1 1\n'),
    ('--failed names each failed binary with its failed cases, and nothing that passed',
     [record('p:s / a', 'FAIL', TAP_ONE_FAILED, 1), record('p:s / b', 'OK', TAP_PASS),
      record('p:s / c', 'TIMEOUT', TAP_CUT_SHORT, -15)],
     ('--failed',),
     'p:s / a (FAIL); not ok 2 - test_same_name\np:s / a: # why it failed\np:s / c (TIMEOUT)\n'),
    ('--failed says why: cmocka\'s ERROR lines, then the comments after each "not ok", no more '
     'than four, and not the comments of cases that passed or skipped',
     [record('p:s / a', 'FAIL',
             '1..4\nok 1 - a\n# all fine\nnot ok 2 - b\n# 0x1 != 0x2\n# t.c:8: error: Failure!\n'
             'not ok 3 - c\n# 3 != 4\n# t.c:9: error: Failure!\nok 4 - d # SKIP no passthrough\n'
             '# skipped, not failed\n', 1,
             '# context\nERROR: it broke: 42\n')],
     ('--failed',),
     'p:s / a (FAIL); not ok 2 - b; not ok 3 - c\np:s / a: ERROR: it broke: 42\n'
     'p:s / a: # 0x1 != 0x2\np:s / a: # t.c:8: error: Failure!\np:s / a: # 3 != 4\n'),
    ('--failed ends a plain binary\'s line with the last two lines it printed',
     [record('p:s / a', 'FAIL', 'checking\nstill checking\n\n', 1,
             'perfdoc: docs/performance.md is stale\n')],
     ('--failed',),
     'p:s / a (FAIL)\np:s / a: still checking\np:s / a: perfdoc: docs/performance.md is stale\n'),
    ('--failed prints nothing when only skips made meson fail',
     [record('p:s / a', 'FAIL', TAP_SKIPS, 0)], ('--failed',), ''),
]


def main(argv):
    root = argv[1]
    print(f'1..{len(CASES)}')
    failed = 0
    for i, (name, records, flags, want) in enumerate(CASES, 1):
        got = run(root, records, *flags)
        ok = got == want
        failed += not ok
        print(f'{"ok" if ok else "not ok"} {i} - {name}')
        if not ok:
            print(f'# want {want!r}, got {got!r}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
