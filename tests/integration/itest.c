/* The integration tests' own helpers (itest.h): valgrind-scaled loop counts, ITEST_FILTER and
 * the whole-binary skip for an unsupported datapath. */
#include "itest.h"

int itest_rounds(int n)
{
	const char *v = getenv("POOLFS_VALGRIND");

	return v && v[0] && strcmp(v, "0") != 0 ? (n + 9) / 10 : n;
}

void itest_filter_from_env(void)
{
	const char *f = getenv("ITEST_FILTER");

	if (f && f[0])
		cmocka_set_test_filter(f);
}

int itest_datapath_unsupported(void)
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
