/* What only the integration tests (tests/integration) add to testutil.h: loop counts scaled for
 * valgrind, ITEST_FILTER, a whole-binary skip when the daemon does not support the datapath,
 * and the daemon's request counters.
 * The pool fixture, checks, children and channels are testutil.h's; the bodies are itest.c's. */
#ifndef POOLFS_ITEST_H
#define POOLFS_ITEST_H

#include "testutil.h"

/* Loop counts for stress-like tests: a tenth under valgrind, where each request is ~50x slower,
 * so the run stays within its timeout. */
int itest_rounds(int n);

/* ITEST_FILTER=pattern runs only the matching tests (cmocka's wildcards), for debugging;
 * ITEST_SKIP=pattern leaves the matching ones out (meson.build splits a binary so). */
void itest_filter_from_env(void);

/* A binary whose datapath the daemon does not support skips as a whole (tu_skip_all: cmocka's
 * own skip() would count as a failure); the per-test skip() of tu_pool stays as a fallback. */
int itest_datapath_unsupported(void);

/* How many requests of one type (a name in the root's user.poolfs.ops: "lookup", "getattr",
 * ...) the daemon counted since its counters were last reset; 0 for a type it has not seen.
 * Fails the running test if the counters cannot be read. */
long itest_ops_count(const struct pool_fixture *p, const char *type);

/* One `NAME VALUE` line of the root's user.poolfs.counters ("lock_handoffs", ...); fails the
 * running test if it cannot be read or has no such line. */
long itest_counter(const struct pool_fixture *p, const char *name);

#define ITEST_RUN(tests)                                                                           \
	(itest_filter_from_env(),                                                                  \
	 itest_datapath_unsupported() ? 0 : cmocka_run_group_tests((tests), NULL, NULL))

#endif
