/* What only the fault tests (tests/faults) add to testutil.h: descriptors registered for
 * teardown to close, a teardown that closes them, the daemon-alive check, a whole-file pattern
 * check, and reading the daemon log. The pool fixture, checks, children, channels and data
 * patterns are testutil.h's. */
#ifndef POOLFS_FTEST_H
#define POOLFS_FTEST_H

#include "testutil.h"

/* Descriptors a test registered: closed at teardown so a failed test cannot keep the mount
 * busy (each test unregisters what it closes itself). */
#define MAX_FDS 32
static int ftest_fds[MAX_FDS];
static int ftest_nfds;

static inline int ftest_fd(int fd)
{
	if (fd >= 0 && ftest_nfds < MAX_FDS)
		ftest_fds[ftest_nfds++] = fd;
	return fd;
}

static inline int ftest_close(int fd)
{
	for (int i = 0; i < ftest_nfds; i++)
		if (ftest_fds[i] == fd) {
			ftest_fds[i] = ftest_fds[--ftest_nfds];
			break;
		}
	return close(fd);
}

static inline void ftest_close_all(void)
{
	while (ftest_nfds > 0)
		close(ftest_fds[--ftest_nfds]);
}

/* tu_teardown, after closing what the test registered. */
static inline int ftest_teardown(void **state)
{
	ftest_close_all();
	return tu_teardown(state);
}

#define ASSERT_DAEMON_ALIVE(p)                                                                \
	do {                                                                                  \
		if (!pool_daemon_alive(p)) {                                                  \
			pool_dump_log(p);                                                     \
			fail_msg("%s:%d: the daemon is gone", __FILE__, __LINE__);            \
		}                                                                             \
	} while (0)

/* The whole file at fd must hold len bytes of pattern seed from offset 0. */
static inline void assert_pattern(int fd, size_t len, uint32_t seed, const char *what)
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

/* ---- the daemon log ---- */

/* Lines of the daemon's stderr containing needle, or -errno. */
static inline int log_count(const struct pool_fixture *p, const char *needle)
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

/* Poll until the log has more than `before` lines containing needle: the count, or what it
 * was at the deadline. */
static inline int log_wait_more(const struct pool_fixture *p, const char *needle, int before,
				int timeout_ms)
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

#endif
