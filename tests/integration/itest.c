/* The integration tests' own helpers (itest.h): valgrind-scaled loop counts, ITEST_FILTER and
 * the whole-binary skip for an unsupported datapath, the request counters. */
#include "itest.h"

int itest_rounds(int n)
{
	const char *v = getenv("POOLFS_VALGRIND");

	return v && v[0] && strcmp(v, "0") != 0 ? (n + 9) / 10 : n;
}

void itest_filter_from_env(void)
{
	const char *f = getenv("ITEST_FILTER"), *s = getenv("ITEST_SKIP");

	if (f && f[0])
		cmocka_set_test_filter(f);
	if (s && s[0])
		cmocka_set_skip_filter(s);
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

long itest_counter(const struct pool_fixture *p, const char *name)
{
	static char text[65536];
	char word[64];
	long n;
	ssize_t len = getxattr(p->mnt, POOLFS_XATTR_COUNTERS, text, sizeof(text) - 1);

	if (len < 0)
		fail_msg("getxattr %s: %s", POOLFS_XATTR_COUNTERS, errname(errno));
	text[len > 0 ? len : 0] = '\0';
	for (const char *line = text; *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "")
		if (sscanf(line, "%63s %ld", word, &n) == 2 && strcmp(word, name) == 0)
			return n;
	fail_msg("no \"%s\" in %s", name, POOLFS_XATTR_COUNTERS);
	return -1;
}

long itest_ops_count(const struct pool_fixture *p, const char *type)
{
	char text[4096], name[32];
	long count = 0, n;
	ssize_t len = getxattr(p->mnt, POOLFS_XATTR_OPS, text, sizeof(text) - 1);

	if (len < 0)
		fail_msg("getxattr %s: %s", POOLFS_XATTR_OPS, errname(errno));
	text[len > 0 ? len : 0] = '\0';
	for (const char *line = text; *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "")
		if (sscanf(line, "%31s %ld", name, &n) == 2 && strcmp(name, type) == 0)
			count = n;
	return count;
}
