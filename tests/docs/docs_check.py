"""What the docs suite's checks that take --self-test share (check_design.py, check_options.py,
check_perf.py): their command line, the check's inputs then an optional --self-test, and their
report, every problem on a line of its own and exit 1, or one line saying what holds and exit 0.
The usage line is the one of the check's docstring that starts with "Usage:".
"""
import sys


def run(argv, doc, nargs, load, check, self_test, holds, self_test_holds):
    """The check's main: argv as sys.argv; doc its docstring; nargs the arguments before
    --self-test; load(*args) reads the inputs; check(inputs) and self_test(inputs) give the
    problems (a list of lines); holds(inputs) and self_test_holds the line printed when there is
    none. Returns the exit status: 0, 1 with problems, 2 on a wrong command line."""
    if len(argv) < 1 + nargs:
        usage = [line for line in doc.splitlines() if line.startswith("Usage:")]
        print(usage[0] if usage else doc.strip().splitlines()[0], file=sys.stderr)
        return 2
    inputs = load(*argv[1:1 + nargs])
    testing = "--self-test" in argv[1 + nargs:]
    problems = self_test(inputs) if testing else check(inputs)
    for line in problems:
        print(line)
    if problems:
        return 1
    print(self_test_holds if testing else holds(inputs))
    return 0
