/* The fault tests' helpers (ftest.h): descriptors closed at teardown, a whole-file pattern check
 * and reading the daemon log. It owns the list of registered descriptors. */
#include "ftest.h"

#define MAX_FDS 32
static int ftest_fds[MAX_FDS];
static int ftest_nfds;

int ftest_fd(int fd)
{
	if (fd >= 0 && ftest_nfds < MAX_FDS)
		ftest_fds[ftest_nfds++] = fd;
	return fd;
}

int ftest_close(int fd)
{
	for (int i = 0; i < ftest_nfds; i++)
		if (ftest_fds[i] == fd) {
			ftest_fds[i] = ftest_fds[--ftest_nfds];
			break;
		}
	return close(fd);
}

void ftest_close_all(void)
{
	while (ftest_nfds > 0)
		close(ftest_fds[--ftest_nfds]);
}

int ftest_teardown(void **state)
{
	ftest_close_all();
	return tu_teardown(state);
}

void assert_pattern(int fd, size_t len, uint32_t seed, const char *what)
{
	size_t chunk = 1 << 20;
	char *buf = malloc(chunk);
	struct stat st;

	assert_non_null(buf);
	CHECK(fstat(fd, &st));
	if ((size_t)st.st_size != len) {
		free(buf);
		fail_msg("%s: size %lld, want %zu", what, (long long)st.st_size, len);
	}
	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;
		ssize_t got = pread_all(fd, buf, n, (off_t)off);
		long bad;

		if (got != (ssize_t)n) {
			free(buf);
			fail_msg("%s: pread at %zu gave %zd (%s)", what, off, got, errname(errno));
		}
		bad = pat_check(buf, n, seed, off);
		if (bad >= 0) {
			free(buf);
			fail_msg("%s: byte %zu differs from what was written", what,
				 off + (size_t)bad);
		}
	}
	free(buf);
}

int log_count(const struct pool_fixture *p, const char *needle)
{
	FILE *f = fopen(p->log, "re");
	char line[4096];
	int n = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			n++;
	fclose(f);
	return n;
}

int log_wait_more(const struct pool_fixture *p, const char *needle, int before, int timeout_ms)
{
	long long deadline = pool_now_ms() + timeout_ms;
	int n;

	for (;;) {
		n = log_count(p, needle);
		if (n > before || pool_now_ms() >= deadline)
			return n;
		pool_sleep_ms(10);
	}
}
