#!/usr/bin/env python3
"""Skips cannot slip in unnoticed (scripts/skip_reasons.py, the one list of skip reasons).

    test_skip_reasons.py ROOT

TAP. Checks that:
- count_tests.py counts each kind of skip as the list says: an allowed reason as a skip, a missing
  package or a failed set-up as a skip only without --strict, a reason on no line as a failure,
  and an allowed reason whose build has the missing feature as a failure;
- every skip reason written in the tests and scripts (TU_SKIP, tu_skip_all, "1..0 # SKIP",
  "# SKIP", "# skip:", skip_all) is on a line of the list, so a new one is added there with its
  kind, or this fails;
- no cmocka test skips with a bare skip() (its TAP line carries no reason);
- no test installs a package: tests/ never runs apt, dpkg -i or pip install (scripts/test
  installs every test's packages before the first test starts).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = sys.argv[1] if len(sys.argv) > 1 else '.'
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
import skip_reasons  # noqa: E402

results = []


def check(name, problems):
    results.append((name, problems))


def count(records, *flags, features=None):
    """count_tests.py's output for a build dir whose last run logged records; features: the
    libfuse version meson's introspection names (None: no introspection data)."""
    with tempfile.TemporaryDirectory(prefix='poolfs-skips-') as builddir:
        os.mkdir(os.path.join(builddir, 'meson-logs'))
        with open(os.path.join(builddir, 'meson-logs', 'testlog.json'), 'w') as f:
            for r in records:
                f.write(json.dumps(r) + '\n')
        if features is not None:
            os.mkdir(os.path.join(builddir, 'meson-info'))
            with open(os.path.join(builddir, 'meson-info', 'intro-dependencies.json'), 'w') as f:
                json.dump([{'name': 'fuse3', 'version': features}], f)
        return subprocess.run([sys.executable, os.path.join(ROOT, 'scripts', 'count_tests.py'),
                               *flags, builddir], capture_output=True, text=True,
                              check=True).stdout


def rec(stdout, result='OK', returncode=0):
    return {'name': 'p:s / t', 'result': result, 'returncode': returncode, 'stdout': stdout}


CMOCKA = '1..3\nok 1 - a\n# skip: %s\nok 2 # SKIP test_b\nok 3 - c\n'
BEHAVIOUR = [
    ('an allowed reason (TU_SKIP) is a skip',
     [rec(CMOCKA % 'not root: needs root to run as uid 1')], ('--strict',), None, '2 0 1\n'),
    ('a cmocka skip without a reason fails',
     [rec('1..2\nok 1 - a\nok 2 # SKIP test_b\n')], (), None, '1 1 0\n'),
    ('a reason on no line of the list fails, without --strict too',
     [rec(CMOCKA % 'the moon is not full')], (), None, '2 1 0\n'),
    ('a missing package is a skip without --strict',
     [rec(CMOCKA % 'tmux is not installed')], (), None, '2 0 1\n'),
    ('a missing package fails with --strict',
     [rec(CMOCKA % 'tmux is not installed')], ('--strict',), None, '2 1 0\n'),
    ('a set-up that failed fails every case it skipped, with --strict',
     [rec('1..2\nok 1 - x # SKIP slurmd did not start: boom\nok 2 - y # SKIP slurmd did not '
          'start: boom\n')], ('--strict',), None, '0 2 0\n'),
    ('"no passthrough" is allowed with libfuse 3.14',
     [rec('1..0 # SKIP datapath=passthrough not supported by this daemon\n', 'SKIP')],
     ('--strict',), '3.14.0', '0 0 1\n'),
    ('"no passthrough" fails with libfuse 3.18, which has it',
     [rec('1..0 # SKIP datapath=passthrough not supported by this daemon\n', 'SKIP')],
     (), '3.18.3', '0 1 0\n'),
    ('an exit-77 test\'s skip comment line is its reason',
     [rec('# skip: runs with --long (POOLFS_LONG=1)\n', 'SKIP', 77)], ('--strict',), None,
     '0 0 1\n'),
    ('--skips groups by reason and names the tests of a group that fails',
     [rec(CMOCKA % 'tmux is not installed')], ('--skips', '--strict'), None,
     '1 failed: a Debian package is missing (scripts/test installs it) (t)\n'
     '  p:s / t: tmux is not installed\n'),
]
for name, records, flags, features, want in BEHAVIOUR:
    got = count(records, *flags, features=features)
    check('count_tests: ' + name, [] if got == want else [f'got {got!r}, want {want!r}'])

# Every reason text written in the tree: the literal part of each skip site.
SITES = [
    (re.compile(r'TU_SKIP\(\s*"((?:[^"\\]|\\.)*)"'), 'TU_SKIP'),
    (re.compile(r'tu_skip_all\(\s*"((?:[^"\\]|\\.)*)"'), 'tu_skip_all'),
    (re.compile(r'(?<![\w])skip_all\s*\(?\s*[\'"]((?:[^\'"\\]|\\.)*)[\'"]'), 'skip_all'),
    (re.compile(r'#\s*SKIP\s+([^"\'\n]*)["\']'), '# SKIP'),
    (re.compile(r'echo "#\s*skip:\s*([^"\n]*)"'), '# skip:'),
]
SKIP_SITE_FILES = ('tests', 'scripts', 'examples')
sources = []
for top in SKIP_SITE_FILES:
    for d, _, files in os.walk(os.path.join(ROOT, top)):
        for fn in files:
            path = os.path.join(d, fn)
            if fn.endswith(('.c', '.h', '.py', '.sh')) or (os.access(path, os.X_OK) and
                                                           '.' not in fn):
                sources.append(path)
SELF = {os.path.abspath(__file__), os.path.abspath(os.path.join(ROOT, 'scripts', 'count_tests.py')),
        os.path.abspath(os.path.join(ROOT, 'scripts', 'skip_reasons.py')),
        os.path.abspath(os.path.join(ROOT, 'tests', 'lint', 'test_count_tests.py'))}
unlisted, sites = [], 0
bare_skip, installs = [], []
INSTALL = re.compile(r'\bapt' r'-get\b|\bapt\s+install\b|\bdpkg\s+-i\b|\bpip3?\s+install\b')
for path in sources:
    if os.path.abspath(path) in SELF:
        continue
    try:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    except (UnicodeDecodeError, OSError):
        continue
    rel = os.path.relpath(path, ROOT)
    for pat, what in SITES:
        for m in pat.finditer(text):
            line_text = text[text.rfind('\n', 0, m.start()) + 1:text.find('\n', m.start())]
            if line_text.lstrip().startswith(('*', '/*', '//', '# ')):
                continue  # a comment that speaks of skips, not a skip
            # The reason with each substitution (printf, shell, Python) standing as X.
            why = re.sub(r'%[-0-9.]*[a-z]+|\$\{[^}]*\}|\$\([^)]*\)|\$\w+|\{[^}]*\}', 'X',
                         m.group(1).replace('\\"', '"').replace('\\n', '')).strip()
            if not why or why == 'X':
                continue
            sites += 1
            kind, label = skip_reasons.classify(why, set())
            if kind is None:
                line = text[:m.start()].count('\n') + 1
                unlisted.append(f'{rel}:{line}: {what} "{why}": {label}')
    if path.endswith(('.c', '.h')) and rel.startswith('tests'):
        for m in re.finditer(r'(?<![A-Za-z_])skip\(\)\s*;', text):
            line = text[:m.start()].count('\n') + 1
            if rel != os.path.join('tests', 'support', 'testutil.h'):  # TU_SKIP's own
                bare_skip.append(f'{rel}:{line}: a bare skip(): use TU_SKIP("why")')
    if rel.startswith('tests'):
        for m in INSTALL.finditer(text):
            line = text[:m.start()].count('\n') + 1
            installs.append(f'{rel}:{line}: "{m.group(0)}": a test installs nothing '
                            '(scripts/lib.sh, TEST_PACKAGES)')

check(f'every skip reason written in the tree is listed ({sites} sites)',
      unlisted + ([] if sites >= 20 else [f'only {sites} skip sites found: the scan is broken']))
check('no cmocka test skips without a reason', bare_skip)
check('no test installs a package', installs)

print('1..%d' % len(results))
failed = 0
for i, (name, problems) in enumerate(results, 1):
    if problems:
        failed += 1
        print('not ok %d - %s' % (i, name))
        for p in problems:
            print('# ' + p)
    else:
        print('ok %d - %s' % (i, name))
sys.exit(1 if failed else 0)
