/* What only the fault tests (tests/faults) add to testutil.h: descriptors registered for
 * teardown to close, a teardown that closes them, the daemon-alive check, a whole-file pattern
 * check, and reading the daemon log. The pool fixture, checks, children, channels and data
 * patterns are testutil.h's. The bodies are ftest.c's (the ftest library of tests/faults). */
#ifndef POOLFS_FTEST_H
#define POOLFS_FTEST_H

#include "testutil.h"

/* Register fd (when it is one) to be closed at teardown, so a failed test cannot keep the mount
 * busy; returns fd, so it can wrap the open. */
int ftest_fd(int fd);

/* close(fd), unregistering it: what close returns. */
int ftest_close(int fd);

/* Close every registered descriptor. */
void ftest_close_all(void);

/* tu_teardown, after closing what the test registered. */
int ftest_teardown(void **state);

#define ASSERT_DAEMON_ALIVE(p)                                                                     \
	do {                                                                                       \
		if (!pool_daemon_alive(p)) {                                                       \
			pool_dump_log(p);                                                          \
			fail_msg("%s:%d: the daemon is gone", __FILE__, __LINE__);                 \
		}                                                                                  \
	} while (0)

/* The whole file at fd must hold len bytes of pattern seed from offset 0. */
void assert_pattern(int fd, size_t len, uint32_t seed, const char *what);

/* ---- the daemon log ---- */

/* Lines of the daemon's stderr containing needle, or -errno. */
int log_count(const struct pool_fixture *p, const char *needle);

/* Poll until the log has more than `before` lines containing needle: the count, or what it
 * was at the deadline. */
int log_wait_more(const struct pool_fixture *p, const char *needle, int before, int timeout_ms);

#endif
