/* Shared pieces of the fault tests (tests/faults): checks that name the errno, a pool per test
 * or per group, children that never outlive the test, a byte channel to step a child, data
 * patterns, and the daemon log. Header-only (static inline): each test binary is one file. Self-
 * contained on purpose: it depends on nothing but the harness (tests/integration/harness.h). */
#ifndef POOLFS_FTEST_H
#define POOLFS_FTEST_H

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

/* Bounds, never timings: a loaded machine or a valgrind daemon is slow. */
#define GONE_MS 5000
#define CHILD_MS 30000

#define OTHER_UID 65534
#define OTHER_GID 65534

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

/* In a child (run_as_user or spawned): a failed step returns its number as the exit code and
 * says why on stderr. */
#define USER_EXPECT(step, expr, err)                                                          \
	do {                                                                                  \
		long r_;                                                                      \
		int e_;                                                                       \
		errno = 0;                                                                    \
		r_ = (long)(expr);                                                            \
		e_ = errno;                                                                   \
		if (r_ != -1L || e_ != (err)) {                                               \
			fprintf(stderr, "# uid %d step %d: %s returned %ld errno %s, want %s\n", \
				(int)getuid(), (step), #expr, r_, r_ == -1L ? errname(e_) : "-",  \
				errname(err));                                                \
			return (step);                                                        \
		}                                                                             \
	} while (0)

#define USER_OK(step, expr)                                                                   \
	do {                                                                                  \
		if ((long)(expr) == -1L) {                                                    \
			fprintf(stderr, "# uid %d step %d: %s failed: %s\n", (int)getuid(),       \
				(step), #expr, errname(errno));                               \
			return (step);                                                        \
		}                                                                             \
	} while (0)

#define USER_TRUE(step, cond)                                                                 \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			fprintf(stderr, "# uid %d step %d: %s is false (errno %s)\n",             \
				(int)getuid(), (step), #cond, errname(errno));                \
			return (step);                                                        \
		}                                                                             \
	} while (0)

#define AS_OTHER_OK(fn, arg)                                                                  \
	do {                                                                                  \
		int r_ = run_as_user(OTHER_UID, OTHER_GID, (fn), (arg));                      \
		if (r_ != 0)                                                                  \
			fail_msg("%s as uid %d failed at step %d", #fn, OTHER_UID, r_);           \
	} while (0)

/* ---- pools ---- */

struct ftest {
	struct pool_fixture p;
	int unsupported;	/* the daemon refused this datapath (or this option with it): skip */
	int base_backing;	/* backing files right after mount */
};

static inline int ftest_setup(void **state, const char *opts)
{
	struct ftest *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -1;
	r = pool_mount(&t->p, opts);
	if (r == -EOPNOTSUPP) {
		fprintf(stderr, "# datapath %s with \"%s\" not supported by this daemon: skipping\n",
			getenv("POOLFS_DATAPATH") ? getenv("POOLFS_DATAPATH") : "?", opts);
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

#define MAX_CHILDREN 16
static pid_t ftest_children[MAX_CHILDREN];

static inline void ftest_kill_children(void)
{
	for (int i = 0; i < MAX_CHILDREN; i++) {
		int status;

		if (ftest_children[i] <= 0)
			continue;
		kill(ftest_children[i], SIGKILL);
		waitpid(ftest_children[i], &status, 0);
		ftest_children[i] = 0;
	}
}

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

static inline int ftest_teardown(void **state)
{
	struct ftest *t = *state;
	int r;

	if (!t)
		return 0;
	ftest_kill_children();
	ftest_close_all();
	r = pool_unmount(&t->p);
	free(t);
	*state = NULL;
	if (r < 0) {
		fprintf(stderr, "# pool_unmount failed: %s\n", errname(-r));
		return -1;
	}
	return 0;
}

static inline struct pool_fixture *ftest_pool(void **state)
{
	struct ftest *t = *state;

	if (t->unsupported)
		skip();
	return &t->p;
}

static inline void ftest_backing_back_to_base(void **state)
{
	struct ftest *t = *state;
	int r = pool_wait_backing_files(&t->p, t->base_backing, GONE_MS);

	if (r != 0)
		fail_msg("backing dir holds %d files, want %d after %d ms",
			 pool_backing_files(&t->p), t->base_backing, GONE_MS);
}

#define ASSERT_DAEMON_ALIVE(p)                                                                \
	do {                                                                                  \
		if (!pool_daemon_alive(p)) {                                                  \
			pool_dump_log(p);                                                     \
			fail_msg("%s:%d: the daemon is gone", __FILE__, __LINE__);            \
		}                                                                             \
	} while (0)

/* ---- children ---- */

/* Fork a child running fn(arg) and _exit with its result; it dies with us, and teardown kills
 * it if the test did not reap it. */
static inline pid_t ftest_spawn(int (*fn)(void *), void *arg)
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
		if (ftest_children[i] <= 0) {
			ftest_children[i] = pid;
			break;
		}
	return pid;
}

static inline void ftest_forget_child(pid_t pid)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (ftest_children[i] == pid)
			ftest_children[i] = 0;
}

/* Reap pid within timeout_ms: its exit code, 128+signal, or -ETIMEDOUT (then it is killed). */
static inline int ftest_reap(pid_t pid, int timeout_ms)
{
	long long deadline = pool_now_ms() + timeout_ms;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r == -1 && errno != EINTR) {
			ftest_forget_child(pid);
			return -errno;
		}
		if (pool_now_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			ftest_forget_child(pid);
			return -ETIMEDOUT;
		}
		pool_sleep_ms(5);
	}
	ftest_forget_child(pid);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* Two pipes: the parent sends "go" bytes down, the child "ready" bytes up. A dead peer reads
 * as EOF, so nobody waits forever. */
struct chan {
	int up[2];
	int down[2];
};

static inline void chan_open(struct chan *c)
{
	if (pipe2(c->up, O_CLOEXEC) == -1 || pipe2(c->down, O_CLOEXEC) == -1)
		fail_msg("pipe: %s", errname(errno));
}

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

/* ---- data ---- */

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
