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

/* The value of the `NAME VALUE` line `name` of the root's xattr `xattr` into *value: whether
 * there is one. Fails the running test if the xattr cannot be read. */
static bool root_value(const struct pool_fixture *p, const char *xattr, const char *name,
		       long *value)
{
	static char text[65536];
	char word[64];
	ssize_t len = getxattr(p->mnt, xattr, text, sizeof(text) - 1);

	if (len < 0)
		fail_msg("getxattr %s: %s", xattr, errname(errno));
	text[len > 0 ? len : 0] = '\0';
	for (const char *line = text; *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "")
		if (sscanf(line, "%63s %ld", word, value) == 2 && strcmp(word, name) == 0)
			return true;
	return false;
}

long itest_counter(const struct pool_fixture *p, const char *name)
{
	long n = -1;

	if (!root_value(p, POOLFS_XATTR_COUNTERS, name, &n))
		fail_msg("no \"%s\" in %s", name, POOLFS_XATTR_COUNTERS);
	return n;
}

long itest_ops_count(const struct pool_fixture *p, const char *type)
{
	long n;

	return root_value(p, POOLFS_XATTR_OPS, type, &n) ? n : 0;
}
