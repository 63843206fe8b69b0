/* Shared pieces of the cmocka integration tests: one pool per test (setup/teardown), checks
 * that name the errno, child processes that never outlive the test, and a byte channel to step
 * a child through a scenario. Header-only (static inline) so each test binary is one file. */
#ifndef POOLFS_ITEST_H
#define POOLFS_ITEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* cmocka 1.1.5 declares _fail(), which fail() and fail_msg() call, without noreturn, though it
 * never returns (it longjmps out of the test, or exits). Saying so lets the static analyzers see
 * that nothing after a failed check runs. */
void _fail(const char *const file, const int line) __attribute__((noreturn));

/* Generous: a pool under valgrind or on a loaded CI machine is slow, and these are bounds, never
 * timings. */
#define GONE_MS 5000
#define CHILD_MS 30000

static inline const char *errname(int e)
{
	const char *n = e ? strerrorname_np(e) : "0";

	return n ? n : "?";
}

/* expr must not return -1. */
#define CHECK(expr)                                                                           \
	do {                                                                                  \
		if ((long)(expr) == -1L)                                                      \
			fail_msg("%s:%d: %s failed: %s", __FILE__, __LINE__, #expr,           \
				 errname(errno));                                             \
	} while (0)

/* expr must return -1 with errno err. */
#define CHECK_ERR(expr, err)                                                                  \
	do {                                                                                  \
		long r_;                                                                      \
		int e_;                                                                       \
		errno = 0;                                                                    \
		r_ = (long)(expr);                                                            \
		e_ = errno;                                                                   \
		if (r_ != -1L || e_ != (err))                                                 \
			fail_msg("%s:%d: %s returned %ld errno %s, want -1 errno %s", __FILE__,  \
				 __LINE__, #expr, r_, r_ == -1L ? errname(e_) : "-",          \
				 errname(err));                                               \
	} while (0)

/* A -errno result (harness calls) must be 0. */
#define CHECK_0(expr)                                                                         \
	do {                                                                                  \
		int r_ = (expr);                                                              \
		if (r_ != 0)                                                                  \
			fail_msg("%s:%d: %s returned %d (%s)", __FILE__, __LINE__, #expr, r_,     \
				 r_ < 0 ? errname(-r_) : "not 0");                            \
	} while (0)

#define PATH(var, p, rel)                                                                     \
	char var[PATH_MAX];                                                                   \
	assert_int_equal(pool_path((p), (rel), var, sizeof(var)), 0)

#define ASSERT_EXISTS(path)                                                                   \
	do {                                                                                  \
		struct stat st_;                                                              \
		if (lstat((path), &st_) == -1)                                                \
			fail_msg("%s:%d: %s should exist: %s", __FILE__, __LINE__, (path),        \
				 errname(errno));                                             \
	} while (0)

#define ASSERT_ABSENT(path)                                                                   \
	do {                                                                                  \
		struct stat st_;                                                              \
		if (lstat((path), &st_) == 0 || errno != ENOENT)                              \
			fail_msg("%s:%d: %s should not exist (lstat: %s)", __FILE__, __LINE__,    \
				 (path), errname(errno));                                     \
	} while (0)

#define ASSERT_GONE(path)                                                                     \
	do {                                                                                  \
		int r_ = pool_wait_gone((path), GONE_MS);                                     \
		if (r_ != 0)                                                                  \
			fail_msg("%s:%d: %s not removed within %d ms (%s)", __FILE__, __LINE__,   \
				 (path), GONE_MS, errname(-r_));                              \
	} while (0)

/* Loop counts for stress-like tests: a tenth under valgrind, where each request is ~50x slower,
 * so the run stays within its timeout. */
static inline int itest_rounds(int n)
{
	const char *v = getenv("POOLFS_VALGRIND");

	return v && v[0] && strcmp(v, "0") != 0 ? (n + 9) / 10 : n;
}

/* ---- one pool per test ---- */

struct itest {
	struct pool_fixture p;
	int unsupported;	/* the daemon refused this datapath: the tests skip */
	int base_backing;	/* backing files right after mount (the daemon's own, if any) */
};

#define MAX_CHILDREN 64
static pid_t itest_children[MAX_CHILDREN];

static inline int itest_setup(void **state, const char *opts)
{
	struct itest *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -1;
	r = pool_mount(&t->p, opts);
	if (r == -EOPNOTSUPP) {
		fprintf(stderr, "# datapath %s not supported by this daemon: skipping\n",
			getenv("POOLFS_DATAPATH") ? getenv("POOLFS_DATAPATH") : "?");
		t->unsupported = 1;
	} else if (r < 0) {
		fprintf(stderr, "# pool_mount(\"%s\") failed: %s\n", opts ? opts : "",
			errname(-r));
		free(t);
		return -1;
	} else {
		t->base_backing = pool_backing_files(&t->p);
	}
	*state = t;
	return 0;
}

static inline void itest_kill_children(void)
{
	for (int i = 0; i < MAX_CHILDREN; i++) {
		int status;

		if (itest_children[i] <= 0)
			continue;
		kill(itest_children[i], SIGKILL);
		waitpid(itest_children[i], &status, 0);
		itest_children[i] = 0;
	}
}

static inline int itest_teardown(void **state)
{
	struct itest *t = *state;
	int r;

	if (!t)
		return 0;
	/* Leftovers of a failed test must not make the unmount fail too. */
	itest_kill_children();
	if (!t->unsupported)
		pool_release_all(&t->p);
	r = pool_unmount(&t->p);
	free(t);
	*state = NULL;
	if (r < 0) {
		fprintf(stderr, "# pool_unmount failed: %s\n", errname(-r));
		return -1;
	}
	return 0;
}

/* The pool of this test; skips the test if the datapath is unsupported. */
static inline struct pool_fixture *itest_pool(void **state)
{
	struct itest *t = *state;

	if (t->unsupported)
		skip();
	return &t->p;
}

/* Backing files must come back to what the pool had right after mount. */
static inline void itest_backing_back_to_base(void **state)
{
	struct itest *t = *state;
	int r = pool_wait_backing_files(&t->p, t->base_backing, GONE_MS);

	if (r != 0)
		fail_msg("backing dir holds %d files, want %d after %d ms",
			 pool_backing_files(&t->p), t->base_backing, GONE_MS);
}

/* ITEST_FILTER=pattern runs only the matching tests (cmocka's wildcards), for debugging. */
static inline void itest_filter_from_env(void)
{
	const char *f = getenv("ITEST_FILTER");

	if (f && f[0])
		cmocka_set_test_filter(f);
}

/* cmocka 1.1.5 reports a skip() as "not ok N # SKIP", which TAP readers (meson) count as a
 * failure. So a binary whose datapath the daemon does not support skips as a whole, with a TAP
 * plan of 1..0 # SKIP, before cmocka starts; the per-test skip() stays as a fallback. */
static inline int itest_datapath_unsupported(void)
{
	struct pool_fixture p;
	int r = pool_mount(&p, "autohold=none");

	if (r == -EOPNOTSUPP) {
		printf("1..0 # SKIP datapath=%s not supported by this daemon\n",
		       getenv("POOLFS_DATAPATH") ? getenv("POOLFS_DATAPATH") : "?");
		fflush(stdout);
		return 1;
	}
	if (r == 0)
		pool_unmount(&p);
	return 0;
}

#define ITEST_RUN(tests)                                                                      \
	(itest_filter_from_env(),                                                             \
	 itest_datapath_unsupported() ? 0 : cmocka_run_group_tests((tests), NULL, NULL))

/* ---- children ---- */

/* Fork a child running fn(arg) and _exit(fn's result); it dies with us (PDEATHSIG) and teardown
 * kills it if the test did not reap it. */
static inline pid_t itest_spawn(int (*fn)(void *), void *arg)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == -1)
		fail_msg("fork: %s", errname(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(120);
		_exit(fn(arg));
	}
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (itest_children[i] <= 0) {
			itest_children[i] = pid;
			break;
		}
	return pid;
}

static inline void itest_forget_child(pid_t pid)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (itest_children[i] == pid)
			itest_children[i] = 0;
}

/* Reap pid within timeout_ms: its exit code, 128+signal, or -ETIMEDOUT (then it is killed). */
static inline int itest_reap(pid_t pid, int timeout_ms)
{
	long long deadline = pool_now_ms() + timeout_ms;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r == -1 && errno != EINTR) {
			itest_forget_child(pid);
			return -errno;
		}
		if (pool_now_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			itest_forget_child(pid);
			return -ETIMEDOUT;
		}
		pool_sleep_ms(5);
	}
	itest_forget_child(pid);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

#define REAP_OK(pid) REAP_OK_WITHIN((pid), CHILD_MS)
#define REAP_OK_WITHIN(pid, ms)                                                               \
	do {                                                                                  \
		int c_ = itest_reap((pid), (ms));                                             \
		if (c_ != 0)                                                                  \
			fail_msg("%s:%d: child %d ended with %d", __FILE__, __LINE__, (int)(pid), \
				 c_);                                                         \
	} while (0)

/* A child reports a failed step: the step number as exit code, the reason on stderr. */
#define CHILD_CHECK(cond, step)                                                               \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			fprintf(stderr, "# child %d: step %d (%s) failed: %s\n", (int)getpid(),   \
				(step), #cond, errname(errno));                               \
			return (step);                                                        \
		}                                                                             \
	} while (0)

/* Two pipes to step a child through a scenario: the parent sends "go" bytes down, the child
 * sends "ready" bytes up. A dead peer reads as EOF, so nobody waits forever. */
struct chan {
	int up[2];
	int down[2];
};

static inline void chan_open(struct chan *c)
{
	if (pipe2(c->up, O_CLOEXEC) == -1 || pipe2(c->down, O_CLOEXEC) == -1)
		fail_msg("pipe: %s", errname(errno));
}

/* Called first in the child / right after spawning in the parent. */
static inline void chan_child(struct chan *c)
{
	close(c->up[0]);
	close(c->down[1]);
}

static inline void chan_parent(struct chan *c)
{
	close(c->up[1]);
	close(c->down[0]);
}

static inline void chan_close_parent(struct chan *c)
{
	close(c->up[0]);
	close(c->down[1]);
}

static inline int chan_put(int fd)
{
	char b = 1;

	return write(fd, &b, 1) == 1 ? 0 : -EPIPE;
}

/* 0, -EPIPE on EOF (peer gone), -ETIMEDOUT */
static inline int chan_get(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char b;
	int r;

	do
		r = poll(&pfd, 1, timeout_ms);
	while (r == -1 && errno == EINTR);
	if (r == 0)
		return -ETIMEDOUT;
	if (read(fd, &b, 1) != 1)
		return -EPIPE;
	return 0;
}

/* Child side */
#define CHILD_READY(c) chan_put((c)->up[1])
#define CHILD_WAIT_GO(c) chan_get((c)->down[0], 10 * CHILD_MS)
/* Parent side */
#define PARENT_GO(c) CHECK_0(chan_put((c)->down[1]))
#define PARENT_WAIT_READY(c)                                                                  \
	do {                                                                                  \
		int r_ = chan_get((c)->up[0], CHILD_MS);                                      \
		if (r_ != 0)                                                                  \
			fail_msg("%s:%d: child not ready: %s", __FILE__, __LINE__,                \
				 errname(-r_));                                               \
	} while (0)

/* ---- data ---- */

/* Deterministic bytes: the value at file offset off for a given seed. */
static inline unsigned char pat_byte(uint32_t seed, uint64_t off)
{
	uint64_t x = off * 0x9E3779B97F4A7C15ull + seed;

	x ^= x >> 29;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 32;
	return (unsigned char)x;
}

static inline void pat_fill(void *buf, size_t len, uint32_t seed, uint64_t off)
{
	unsigned char *b = buf;

	for (size_t i = 0; i < len; i++)
		b[i] = pat_byte(seed, off + i);
}

/* -1 if buf holds the pattern, else the first index that differs */
static inline long pat_check(const void *buf, size_t len, uint32_t seed, uint64_t off)
{
	const unsigned char *b = buf;

	for (size_t i = 0; i < len; i++)
		if (b[i] != pat_byte(seed, off + i))
			return (long)i;
	return -1;
}

static inline ssize_t pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done, off + (off_t)done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* Reads until len or EOF: the count read, or -1 */
static inline ssize_t pread_all(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + (off_t)done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

#endif
