/* What only the integration tests (tests/integration) add to testutil.h: loop counts scaled for
 * valgrind, ITEST_FILTER, and a whole-binary skip when the daemon does not support the datapath.
 * The pool fixture, checks, children and channels are testutil.h's. */
#ifndef POOLFS_ITEST_H
#define POOLFS_ITEST_H

#include "testutil.h"

/* Loop counts for stress-like tests: a tenth under valgrind, where each request is ~50x slower,
 * so the run stays within its timeout. */
static inline int itest_rounds(int n)
{
	const char *v = getenv("POOLFS_VALGRIND");

	return v && v[0] && strcmp(v, "0") != 0 ? (n + 9) / 10 : n;
}

/* ITEST_FILTER=pattern runs only the matching tests (cmocka's wildcards), for debugging. */
static inline void itest_filter_from_env(void)
{
	const char *f = getenv("ITEST_FILTER");

	if (f && f[0])
		cmocka_set_test_filter(f);
}

/* A binary whose datapath the daemon does not support skips as a whole (tu_skip_all: cmocka's
 * own skip() would count as a failure); the per-test skip() of tu_pool stays as a fallback. */
static inline int itest_datapath_unsupported(void)
{
	struct pool_fixture p;
	char why[128];
	int r = pool_mount(&p, "autohold=none");

	if (r == -EOPNOTSUPP) {
		snprintf(why, sizeof(why), "datapath=%s not supported by this daemon",
			 getenv("POOLFS_DATAPATH") ? getenv("POOLFS_DATAPATH") : "?");
		tu_skip_all(why);
		return 1;
	}
	if (r == 0)
		pool_unmount(&p);
	return 0;
}

#define ITEST_RUN(tests)                                                                      \
	(itest_filter_from_env(),                                                             \
	 itest_datapath_unsupported() ? 0 : cmocka_run_group_tests((tests), NULL, NULL))

#endif
