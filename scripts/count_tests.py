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
failed, so the last lines of a CI log say which tests to look at; under it, the first few failure
messages the binary printed (cmocka's "ERROR: ..." lines, the TAP comments after a "not ok"; the
last two lines of a binary that does not speak TAP), each as "NAME: MESSAGE", so a failure seen
only in a CI log's tail still says why.

Every skip has a reason, grouped by scripts/skip_reasons.py: a reason on none of its lines counts
as a failure, and with --strict (scripts/test under CI=true or as root) so does a skip for want of
what scripts/test provides (a package, a service). With --skips it prints instead one line per
group of skips: "COUNT KIND LABEL", then "  TEST: REASON" under each group that is not allowed.

    count_tests.py [--failed | --skips] [--strict] BUILDDIR
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import skip_reasons  # noqa: E402  (scripts/, beside this file)

PLAN = re.compile(r'^1\.\.(\d+)(?:\s*#\s*(?i:SKIP)\b.*)?\s*$')
TEST = re.compile(r'^(not ok|ok)\b(?:\s+\d+)?[^#]*(?:#\s*(?P<dir>(?i:TODO|SKIP))\b.*)?$')
BAIL = re.compile(r'^Bail out!')
# The reason of the next cmocka skip (TU_SKIP), or of an exit-77 test.
SKIP_WHY = re.compile(r'^#\s*skip:\s*(?P<why>.*?)\s*$')
PLAN_SKIP = re.compile(r'^1\.\.0\s*#\s*(?i:SKIP)\b\s*(?P<why>.*?)\s*$')
DIRECTIVE_TEXT = re.compile(r'#\s*(?i:SKIP)\b\s*(?P<text>.*?)\s*$')
GOOD = ('OK', 'EXPECTEDFAIL', 'SKIP')
# A failure's message: cmocka's fail_msg() prints "ERROR: ..." on stderr; a TAP binary's comment
# lines right after a "not ok" line say why it failed (cmocka's assertions, our shell tests).
FAIL_STDERR = re.compile(r'^ERROR: ')
FAIL_WHY_MAX = 4      # messages printed per failed binary
FAIL_WHY_CHARS = 400  # a message is cut there: a CI log's tail is read by people


def cut(message):
    """A failure message no longer than FAIL_WHY_CHARS, marked where it was cut."""
    return message if len(message) <= FAIL_WHY_CHARS else message[:FAIL_WHY_CHARS] + '...'


def failure_messages(r, is_tap=True):
    """The first FAIL_WHY_MAX failure messages of record r: cmocka's, then TAP comments; of a
    binary that does not speak TAP, the last lines it printed (where a script says why)."""
    if not is_tap:
        lines = [x.strip() for x in ((r.get('stdout') or '') + '\n' +
                                     (r.get('stderr') or '')).splitlines() if x.strip()]
        return [cut(x) for x in lines[-2:]]
    found = [x.strip() for x in (r.get('stderr') or '').splitlines() if FAIL_STDERR.match(x)]
    after_fail = False
    for line in (r.get('stdout') or '').splitlines():
        m = TEST.match(line)
        if m:
            after_fail = m.group(1) == 'not ok' and not m.group('dir')
        elif after_fail and line.startswith('#') and line.strip('# \t'):
            found.append(line.strip())
    found = list(dict.fromkeys(found))[:FAIL_WHY_MAX]
    return [cut(x) for x in found]


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


def count_tap(r, out, failed_cases=None, skips=None):
    """(passed, failed, skipped) of one TAP binary's record r with its output out; the failed
    cases' TAP lines are appended to failed_cases when it is a list, and the reason of each skip
    to skips."""
    result = r.get('result', 'ERROR')
    p = f = s = seen = 0
    plan = None
    bail = notok_skip = False
    why = None  # a "# skip: WHY" comment waiting for its cmocka "ok N # SKIP NAME"
    skips = [] if skips is None else skips
    for line in out.splitlines():
        m = SKIP_WHY.match(line)
        if m:
            why = m.group('why')
            continue
        m = PLAN_SKIP.match(line)
        if m:
            skips.append(m.group('why'))
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
            # cmocka names the case after SKIP and TU_SKIP said why just before; a TAP script
            # gives the reason after SKIP.
            skips.append(why if why is not None else DIRECTIVE_TEXT.search(line).group('text'))
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
        why = None
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


def build_features(builddir):
    """What the build's libfuse gives: {"passthrough", "uring"} or part of it, from meson's
    introspection of its fuse3 dependency (empty when there is none to read)."""
    try:
        with open(os.path.join(builddir, 'meson-info', 'intro-dependencies.json')) as f:
            deps = json.load(f)
    except (OSError, ValueError):
        return set()
    version = next((d.get('version', '') for d in deps if d.get('name') == 'fuse3'), '')
    nums = tuple(int(x) for x in re.findall(r'\d+', version)[:2])
    return {feature for feature, since in (('passthrough', (3, 17)), ('uring', (3, 18)))
            if nums >= since}


def plain_skip_reason(r):
    """The reason an exit-77 test printed: its last "# skip: WHY" line, else its last line."""
    lines = [x for x in ((r.get('stdout') or '') + '\n' + (r.get('stderr') or '')).splitlines()
             if x.strip()]
    for line in reversed(lines):
        m = SKIP_WHY.match(line)
        if m:
            return m.group('why')
    return lines[-1].strip() if lines else ''


def main(argv):
    args = argv[1:]
    flags = {a for a in args if a.startswith('--')}
    rest = [a for a in args if not a.startswith('--')]
    if len(rest) != 1 or not flags <= {'--failed', '--skips', '--strict'} or \
            {'--failed', '--skips'} <= flags:
        sys.exit('usage: count_tests.py [--failed | --skips] [--strict] BUILDDIR')
    list_failed, list_skips, strict = '--failed' in flags, '--skips' in flags, '--strict' in flags
    builddir = rest[0]
    protocols = test_protocols(builddir)
    features = build_features(builddir)
    passed = failed = skipped = 0
    groups = {}  # (kind, label) -> [(test name, reason)]
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
        cases, reasons = [], []
        if is_tap:
            p, f, s = count_tap(r, out, cases, reasons)
        else:
            p, f, s = count_plain(result)
            reasons = [plain_skip_reason(r)] * s
        reasons = (reasons + [''] * s)[:s]  # one reason per skip counted
        bad = []  # the skips that count as failures
        for why in reasons:
            kind, label = skip_reasons.classify(why, features)
            groups.setdefault((kind, label), []).append((name, why))
            if kind is None or (kind == skip_reasons.ENVIRONMENT and strict):
                bad.append('SKIP ' + (why or '(no reason given)'))
        s -= len(bad)
        f += len(bad)
        passed, failed, skipped = passed + p, failed + f, skipped + s
        if list_failed and f:
            # A set-up that failed skips every case with one reason: name it once, counted.
            bad_once = ['%s (%d cases)' % (b, bad.count(b)) if bad.count(b) > 1 else b
                        for b in dict.fromkeys(bad)]
            print('%s (%s)%s' % (name, result, ''.join('; ' + c for c in cases + bad_once)))
            for why in failure_messages(r, is_tap):
                print('%s: %s' % (name, why))
    if list_skips:
        order = {skip_reasons.ALLOWED: 0, skip_reasons.ENVIRONMENT: 1, None: 2}
        for (kind, label), members in sorted(groups.items(),
                                             key=lambda g: (order[g[0][0]], -len(g[1]))):
            counted = 'skipped' if kind == skip_reasons.ALLOWED or \
                (kind == skip_reasons.ENVIRONMENT and not strict) else 'failed'
            tests = sorted({n.rsplit(' / ', 1)[-1] for n, _ in members})
            print('%d %s: %s (%s)' % (len(members), counted, label,
                                      ', '.join(tests[:4]) + (', ...' if len(tests) > 4 else '')))
            if kind != skip_reasons.ALLOWED:
                for n, why in sorted(set(members)):
                    print('  %s: %s' % (n, why or '(no reason given)'))
    elif not list_failed:
        print(passed, failed, skipped)


if __name__ == '__main__':
    main(sys.argv)
