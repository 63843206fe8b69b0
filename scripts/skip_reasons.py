"""Why a test may skip: the one list of skip reasons (scripts/count_tests.py reads it).

A test that cannot run says why (cmocka: TU_SKIP in tests/support/testutil.h; TAP: the text after
"# SKIP"; exit status 77: a "# skip: WHY" line). Each reason is matched against REASONS, in order:

- ALLOWED: the machine or the build cannot do it (libfuse 3.14 has no passthrough, not root, a
  --long run's work): a skip, grouped under its label in scripts/test's report.
- ENVIRONMENT: something scripts/test should have provided is missing (a package, a service that
  did not start): a skip on a developer's machine, but a failure under CI=true or as root
  (count_tests.py --strict), where scripts/test installs and can start everything.
- A reason on no line of the list is a failure everywhere: a new reason is added here, with its
  kind, or it does not pass (tests/lint/test_skip_reasons.py checks the tests' own reason texts).

NEEDS says when an ALLOWED reason holds: "no-passthrough" only in a build without passthrough
(libfuse < 3.17: there a daemon supports every data path but passthrough), "no-uring" only in one without io_uring (libfuse < 3.18); None always. A build
that has the feature and still skips for want of it has a broken environment: that is a failure.
"""
import re

ALLOWED, ENVIRONMENT = "allowed", "environment"

# (kind, label, NEEDS, pattern): the first whose pattern matches (re.search) the reason wins.
REASONS = [
    (ALLOWED, "passthrough cases: libfuse 3.14 has no passthrough", "no-passthrough",
     r"^datapath[ =]\S+ (is )?not supported by this daemon|no passthrough"),
    (ALLOWED, "passthrough-only cases on the page-cache path", None, r"^passthrough only: "),
    (ALLOWED, "private-store cases with backing=DIR", None,
     r"^private store only: |need the private store"),
    (ALLOWED, "io_uring cases without io_uring (libfuse < 3.18 or enable_uring=N)", None,
     r"^io_uring is not in use\b"),
    (ALLOWED, "runs with --long", None, r"^runs with --long\b"),
    (ALLOWED, "not run under valgrind (--valgrind)", None, r"under valgrind\b"),
    (ALLOWED, "the kernel had no free huge page", None, r"no free huge page"),
    (ALLOWED, "a cgroup this machine lacks (writable cgroup v2, a memory controller)", None,
     r"^no writable cgroup v2 here\b|^no memory cgroup controller\b"),
    (ALLOWED, "not root", None, r"^not root\b|\bneeds? root\b"),
    (ALLOWED, "fewer than two CPUs to run on", None, r"^fewer than two CPUs\b"),
    (ENVIRONMENT, "a Debian package is missing (scripts/test installs it)", None,
     r"is not installed|are not installed|not installed\b|cannot be imported|"
     r"missing Debian packages|Debian packages? [a-z0-9]|\(package [a-z0-9.+-]+\)"),
    (ENVIRONMENT, "an install failed", None, r"apt-get install .* failed"),
    (ENVIRONMENT, "run outside meson test (a variable it sets is missing)", None,
     r"^[A-Z_]+ is (not set|neither)\b"),
    (ENVIRONMENT, "a service or set-up step failed", None,
     r"did not start|never became idle|wrote no pid file|are not mounted|did not mount|is no "
     r"pool|\bc?c failed|mpicc failed|cannot mount a tmpfs|could be created|belongs to another "
     r"user"),
]
_COMPILED = [(kind, label, needs, re.compile(pat)) for kind, label, needs, pat in REASONS]


def classify(reason, features):
    """(kind, label) of a skip reason in a build with features (a set: "passthrough",
    "uring"); kind is ALLOWED, ENVIRONMENT or None for a reason on no line of the list (or an
    ALLOWED one whose NEEDS the build does not meet)."""
    reason = (reason or "").strip()
    for kind, label, needs, pat in _COMPILED:
        if not pat.search(reason):
            continue
        if needs == "no-passthrough" and "passthrough" in features:
            return None, f"{label}, but this build has passthrough"
        if needs == "no-uring" and "uring" in features:
            return None, f"{label}, but this build has io_uring"
        return kind, label
    return None, "a reason not in scripts/skip_reasons.py"
