#!/usr/bin/env python3
"""Count the test cases of the last `meson test` run in a build dir (scripts/lib.sh, count_tests).

Prints "PASSED FAILED SKIPPED". meson 1.0.1 reports TAP tests per binary only (its summary and
testlog.json have one result per executable), so the TAP lines each binary printed (kept in
testlog.json) are counted here:
  ok -> passed; ok # SKIP, not ok # SKIP (cmocka's skip()) -> skipped; not ok -> failed;
  ok # TODO -> failed (unexpected pass); not ok # TODO -> passed (expected failure).
A binary meson did not pass (crash, timeout, bail out, bad exit status, too few tests) always
counts at least one failure, and every planned test case it never reported counts as failed.
Non-TAP tests count one per binary. Which tests speak TAP comes from `meson introspect --tests`.
With --failed it prints instead one line per binary that failed: its name, then the cases that
failed, so the last lines of a CI log say which tests to look at.

    count_tests.py [--failed] BUILDDIR
"""
import json
import re
import subprocess
import sys

PLAN = re.compile(r'^1\.\.(\d+)(?:\s*#\s*(?i:SKIP)\b.*)?\s*$')
TEST = re.compile(r'^(not ok|ok)\b(?:\s+\d+)?[^#]*(?:#\s*(?P<dir>(?i:TODO|SKIP))\b.*)?$')
BAIL = re.compile(r'^Bail out!')
GOOD = ('OK', 'EXPECTEDFAIL', 'SKIP')


def test_protocols(builddir):
    """Test name -> set of protocols, from `meson introspect --tests` (empty if that fails)."""
    protocols = {}
    try:
        intro = subprocess.run(['meson', 'introspect', builddir, '--tests'], capture_output=True,
                               text=True, check=True).stdout
        for t in json.loads(intro):
            proto = t.get('protocol', 'exitcode')
            # testlog.json names a test "PROJECT:SUITE1+SUITE2 / NAME"; keep the bare NAME as a
            # fallback.
            suites = t.get('suite') or []
            if suites:
                project = suites[0].split(':', 1)[0]
                key = '%s:%s / %s' % (project, '+'.join(s.split(':', 1)[-1] for s in suites),
                                      t['name'])
                protocols.setdefault(key, set()).add(proto)
            protocols.setdefault(t['name'], set()).add(proto)
    except Exception:
        # Not fatal: without introspection (meson missing, the dir not configured) main() tells
        # TAP tests by their output instead.
        pass
    return protocols


def count_plain(result):
    """(passed, failed, skipped) of a test that does not speak TAP: one case per binary."""
    if result in ('OK', 'EXPECTEDFAIL'):
        return 1, 0, 0
    if result == 'SKIP':
        return 0, 0, 1
    return 0, 1, 0


def count_tap(r, out, failed_cases=None):
    """(passed, failed, skipped) of one TAP binary's record r with its output out; the failed
    cases' TAP lines are appended to failed_cases when it is a list."""
    result = r.get('result', 'ERROR')
    p = f = s = seen = 0
    plan = None
    bail = notok_skip = False
    for line in out.splitlines():
        m = PLAN.match(line)
        if m:
            plan = int(m.group(1))
            continue
        if BAIL.match(line):
            bail = True
            continue
        m = TEST.match(line)
        if not m:
            continue
        seen += 1
        ok, directive = m.group(1) == 'ok', (m.group('dir') or '').upper()
        if directive == 'SKIP':
            s += 1
            notok_skip |= not ok
        elif directive == 'TODO':
            if ok:
                f += 1
            else:
                p += 1
        elif ok:
            p += 1
        else:
            f += 1
            if failed_cases is not None:
                failed_cases.append(line.strip())
    if result not in GOOD:
        # meson did not pass this binary: tests it planned but never reported count as failed.
        f += max(0, (plan or 0) - seen)
        if f == 0:
            # meson 1.0.1 fails a binary for cmocka's "not ok N # SKIP"; that alone is a skip.
            only_skips = notok_skip and r.get('returncode') == 0 and not bail and \
                (plan is None or plan == seen)
            if not only_skips:
                f = 1
    elif seen == 0:
        # "1..0 # SKIP", exit status 77, or a TAP binary that passed without reporting a case.
        if result == 'SKIP':
            s += 1
        else:
            p += 1
    return p, f, s


def main(argv):
    list_failed = len(argv) == 3 and argv[1] == '--failed'
    if len(argv) != 2 and not list_failed:
        sys.exit('usage: count_tests.py [--failed] BUILDDIR')
    builddir = argv[-1]
    protocols = test_protocols(builddir)
    passed = failed = skipped = 0
    try:
        with open(builddir + '/meson-logs/testlog.json') as f:
            lines = f.read().splitlines()
    except OSError:
        lines = []
    for line in lines:
        if not line.strip():
            continue
        r = json.loads(line)
        name, result = r.get('name', '?'), r.get('result', 'ERROR')
        out = r.get('stdout') or ''
        proto = protocols.get(name) or protocols.get(name.rsplit(' / ', 1)[-1], set())
        is_tap = 'tap' in proto if len(proto) == 1 else \
            any(PLAN.match(x) or TEST.match(x) for x in out.splitlines())
        cases = []
        p, f, s = count_tap(r, out, cases) if is_tap else count_plain(result)
        passed, failed, skipped = passed + p, failed + f, skipped + s
        if list_failed and f:
            print('%s (%s)%s' % (name, result, ''.join('; ' + c for c in cases)))
    if not list_failed:
        print(passed, failed, skipped)


if __name__ == '__main__':
    main(sys.argv)
