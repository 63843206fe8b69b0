/* Paths and entries of the pool under test (testutil.h): many absolute paths at once, the mode
 * an entry must have, and an entry going with its last handle. */
#include "testutil.h"

void tu_paths_(const struct pool_fixture *p, ...)
{
	const char *rel, *too_long = NULL;
	va_list ap;

	va_start(ap, p);
	while (!too_long && (rel = va_arg(ap, const char *))) {
		char *buf = va_arg(ap, char *);

		if (pool_path(p, rel, buf, PATH_MAX) != 0)
			too_long = rel;
	}
	va_end(ap);
	if (too_long)
		fail_msg("%s: path too long", too_long);
}

void expect_mode(const char *path, mode_t want)
{
	struct stat st;

	CHECK(stat(path, &st));
	if ((st.st_mode & 07777) != want)
		fail_msg("%s: mode %04o, want %04o", path, st.st_mode & 07777, want);
}

void expect_chmod_gives(const char *path, mode_t mode, mode_t want)
{
	CHECK(chmod(path, mode));
	expect_mode(path, want);
}

int tu_close_until_gone(int fd, const char *path)
{
	int r;

	if (close(fd) != 0)
		return -1;
	/* pool_wait_gone says -errno: USER_OK looks for -1 and errno. */
	r = pool_wait_gone(path, GONE_MS);
	if (r != 0) {
		errno = -r;
		return -1;
	}
	return 0;
}
