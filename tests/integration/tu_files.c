/* Paths and entries of the pool under test (testutil.h): many absolute paths at once, and the
 * mode an entry must have. */
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
