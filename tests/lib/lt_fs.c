/* libtest_support: test paths that must not be cut, temporary folders and removing them. */
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libtest.h"

void libtest_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* ap is started just above: clang-tidy 14 loses sight of va_start when one run checks
	 * several files, and then flags this call. */
	int n = vsnprintf(buf, len, fmt, ap); /* NOLINT(clang-analyzer-valist.Uninitialized) */
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "# libtest_fmt: \"%s\" does not fit in %zu bytes\n", fmt, len);
		abort();
	}
}

int libtest_tmpdir(char *buf, size_t len)
{
	const char *base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	if ((size_t)snprintf(buf, len, "%s/poolfs-libtest-XXXXXX", base) >= len)
		return -ENAMETOOLONG;
	return mkdtemp(buf) ? 0 : -errno;
}

static int libtest_rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	/* ENOENT: a pool may already have removed an unused entry by itself */
	if ((type == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

int libtest_rmtree(const char *path)
{
	if (nftw(path, libtest_rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
		return errno == ENOENT ? 0 : -errno;
	return 0;
}
