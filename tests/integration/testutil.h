/* What every cmocka test suite shares (tests/integration, faults, holds, stress, lib): checks that
 * name the errno, the pool-per-test fixture around harness.h, child processes that never outlive
 * the test, step checks for children (also as another uid), a byte channel to step a child through
 * a scenario, and deterministic data patterns. The suite headers (itest.h, ftest.h, holdtest.h,
 * stress.h, libtest.h) include this one and keep only what is specific to their suite.
 *
 * Header-only (static inline) so each test binary stays one C file; it lives next to harness.h
 * because everything here that touches a pool goes through the harness (harness_dep gives both).
 */
#ifndef POOLFS_TESTUTIL_H
#define POOLFS_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
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
#include <sys/xattr.h>
#include <unistd.h>

#include "harness.h"

/* cmocka 1.1.5 declares _fail(), which fail() and fail_msg() call, without noreturn, though it
 * never returns (it longjmps out of the test, or exits). Saying so lets the static analyzers see
 * that nothing after a failed check runs. */
void _fail(const char *const file, const int line) __attribute__((noreturn));

/* Bounds, never timings: a pool under valgrind or on a loaded CI machine is slow. A suite whose
 * daemon needs longer to act (holds, stress) defines its own GONE_MS before including this. */
#ifndef GONE_MS
#define GONE_MS 5000
#endif
#define CHILD_MS 30000

/* The second user of the permission tests (nobody/nogroup). */
#define OTHER_UID 65534
#define OTHER_GID 65534

static inline const char *errname(int e)
{
	const char *n = e ? strerrorname_np(e) : "0";

	return n ? n : "?";
}

/* ---- checks in the test process ---- */

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

/* The pool of the running test (set by tu_mount), for the daemon log when a check fails. */
static struct pool_fixture *tu_current;

static inline void tu_dump_log(void)
{
	if (tu_current)
		pool_dump_log(tu_current);
}

/* On failure the entry's refs text says what still keeps it, and the daemon log follows. */
#define ASSERT_GONE(path)                                                                     \
	do {                                                                                  \
		int r_ = pool_wait_gone((path), GONE_MS);                                     \
		if (r_ != 0) {                                                                \
			char rb_[4096] = "";                                                  \
			ssize_t n_ = getxattr((path), "user.poolfs.refs", rb_, sizeof(rb_) - 1); \
			rb_[n_ > 0 ? n_ : 0] = '\0';                                          \
			tu_dump_log();                                                        \
			fail_msg("%s:%d: %s not removed within %d ms (%s); refs:\n%s",         \
				 __FILE__, __LINE__, (path), GONE_MS, errname(-r_), rb_);     \
		}                                                                             \
	} while (0)

/* ---- checks in a child (spawned, or through run_as_user) ----
 * Children never call cmocka: a failed step returns its number as the exit code (the parent's
 * REAP_OK / AS_OTHER_OK turns it into a failure) and says why on stderr. */

#define CHILD_CHECK(cond, step)                                                               \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			fprintf(stderr, "# child %d: step %d (%s) failed: %s\n", (int)getpid(),   \
				(step), #cond, errname(errno));                               \
			return (step);                                                        \
		}                                                                             \
	} while (0)

/* expr must fail with err. */
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

/* expr must not return -1. */
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

/* fn(arg) as OTHER_UID must pass every step. */
#define AS_OTHER_OK(fn, arg)                                                                  \
	do {                                                                                  \
		int r_ = run_as_user(OTHER_UID, OTHER_GID, (fn), (arg));                      \
		if (r_ != 0)                                                                  \
			fail_msg("%s as uid %d failed at step %d", #fn, OTHER_UID, r_);           \
	} while (0)

/* ---- one pool per test (or per group) ---- */

/* A suite with more per-test state puts this first in its own struct: tu_pool and
 * tu_backing_back_to_base then work on that struct's *state too. */
struct tu_fixture {
	struct pool_fixture p;
	int unsupported;	/* the daemon refused this datapath (or these options): the tests skip */
	int base_backing;	/* backing files right after mount (the daemon's own, if any) */
};

/* Mount t's pool: 0 (also when the datapath is unsupported: the tests then skip), or -1. */
static inline int tu_mount(struct tu_fixture *t, const char *opts)
{
	int r = pool_mount(&t->p, opts);

	if (r == -EOPNOTSUPP) {
		fprintf(stderr, "# datapath %s with \"%s\" not supported by this daemon: skipping\n",
			getenv("POOLFS_DATAPATH") ? getenv("POOLFS_DATAPATH") : "?",
			opts ? opts : "");
		t->unsupported = 1;
	} else if (r < 0) {
		fprintf(stderr, "# pool_mount(\"%s\") failed: %s\n", opts ? opts : "",
			errname(-r));
		return -1;
	} else {
		t->base_backing = pool_backing_files(&t->p);
		tu_current = &t->p;
	}
	return 0;
}

static inline void tu_kill_children(void);

/* Take t's pool down: 0, or -1 if the unmount failed (a leak, a busy mount, a daemon error). */
static inline int tu_unmount(struct tu_fixture *t)
{
	int r;

	tu_current = NULL;
	/* Leftovers of a failed test must not make the unmount fail too. */
	tu_kill_children();
	if (!t->unsupported)
		pool_release_all(&t->p);
	r = pool_unmount(&t->p);
	if (r < 0) {
		fprintf(stderr, "# pool_unmount failed: %s\n", errname(-r));
		return -1;
	}
	return 0;
}

/* cmocka setup: a zeroed struct of size bytes that starts with a struct tu_fixture (a suite's
 * own test state, or just the fixture), its pool mounted. */
static inline int tu_setup_sized(void **state, const char *opts, size_t size)
{
	struct tu_fixture *t = calloc(1, size);

	if (!t)
		return -1;
	if (tu_mount(t, opts) < 0) {
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

/* For suites that need nothing but the pool. */
static inline int tu_setup(void **state, const char *opts)
{
	return tu_setup_sized(state, opts, sizeof(struct tu_fixture));
}

/* cmocka teardown: the pool goes down and *state (whatever tu_setup_sized allocated) is freed;
 * a suite frees or stops its own extras first. */
static inline int tu_teardown(void **state)
{
	struct tu_fixture *t = *state;
	int r;

	if (!t)
		return 0;
	r = tu_unmount(t);
	free(t);
	*state = NULL;
	return r;
}

/* The pool of this test; skips the test if the datapath is unsupported. */
static inline struct pool_fixture *tu_pool(void **state)
{
	struct tu_fixture *t = *state;

	if (t->unsupported)
		skip();
	return &t->p;
}

/* Backing files must come back to what the pool had right after mount. */
static inline void tu_backing_back_to_base(void **state)
{
	struct tu_fixture *t = *state;
	int r = pool_wait_backing_files(&t->p, t->base_backing, GONE_MS);

	if (r != 0)
		fail_msg("backing dir holds %d files, want %d after %d ms",
			 pool_backing_files(&t->p), t->base_backing, GONE_MS);
}

/* cmocka 1.1.5 reports a skip() as "not ok N # SKIP", which TAP readers (meson) count as a
 * failure. So a binary that cannot run at all prints the TAP plan "1..0 # SKIP why" instead,
 * before cmocka starts, and exits with what this returns. */
static inline int tu_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	fflush(stdout);
	return 0;
}

/* ---- children ---- */

/* Processes the test started and has not reaped: teardown kills and reaps them. */
#define TU_MAX_CHILDREN 64
static pid_t tu_children[TU_MAX_CHILDREN];

/* Remember pid (once) for teardown; also for orphans a subreaper test will reap itself. */
static inline void tu_track(pid_t pid)
{
	for (int i = 0; i < TU_MAX_CHILDREN; i++)
		if (tu_children[i] == pid)
			return;
	for (int i = 0; i < TU_MAX_CHILDREN; i++)
		if (tu_children[i] <= 0) {
			tu_children[i] = pid;
			return;
		}
}

static inline void tu_forget(pid_t pid)
{
	for (int i = 0; i < TU_MAX_CHILDREN; i++)
		if (tu_children[i] == pid)
			tu_children[i] = 0;
}

/* SIGKILL and reap every process this test started and has not reaped. */
static inline void tu_kill_children(void)
{
	for (int i = 0; i < TU_MAX_CHILDREN; i++) {
		int status;

		if (tu_children[i] <= 0)
			continue;
		kill(tu_children[i], SIGKILL);
		waitpid(tu_children[i], &status, 0);
		tu_children[i] = 0;
	}
}

/* Fork a child running fn(arg) and _exit(fn's result); it dies with us (PDEATHSIG) and teardown
 * kills it if the test did not reap it. */
static inline pid_t tu_spawn(int (*fn)(void *), void *arg)
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
	tu_track(pid);
	return pid;
}

/* Reap pid (a child, or an orphan reparented to a subreaper) within timeout_ms: its exit code,
 * 128+signal, -ETIMEDOUT (then it is killed and reaped), or -errno. Safe in a child too: it never
 * calls cmocka. */
static inline int tu_reap(pid_t pid, int timeout_ms)
{
	long long deadline = pool_now_ms() + timeout_ms;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r == -1 && errno != EINTR) {
			int e = errno;

			tu_forget(pid);
			return -e;
		}
		if (pool_now_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			tu_forget(pid);
			return -ETIMEDOUT;
		}
		pool_sleep_ms(5);
	}
	tu_forget(pid);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

#define REAP_OK(pid) REAP_OK_WITHIN((pid), CHILD_MS)
#define REAP_OK_WITHIN(pid, ms)                                                               \
	do {                                                                                  \
		int c_ = tu_reap((pid), (ms));                                                \
		if (c_ != 0)                                                                  \
			fail_msg("%s:%d: process %d ended with %d", __FILE__, __LINE__,           \
				 (int)(pid), c_);                                             \
	} while (0)

/* ---- stepping a child ---- */

/* Poll fd for input: 0, -ETIMEDOUT, or -errno. */
static inline int fd_wait_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int r;

	do
		r = poll(&pfd, 1, timeout_ms);
	while (r == -1 && errno == EINTR);
	return r == 0 ? -ETIMEDOUT : r < 0 ? -errno : 0;
}

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

/* 0, -EPIPE on EOF (peer gone), -ETIMEDOUT, or -errno of poll */
static inline int chan_get(int fd, int timeout_ms)
{
	char b;
	int r = fd_wait_readable(fd, timeout_ms);

	if (r < 0)
		return r;
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

/* Whether readdir of dir lists name: 1 or 0, or -errno if dir cannot be listed (usable in a
 * child; compare with 1 or 0 exactly, so an error never passes for either answer). */
static inline int tu_listed(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, name) == 0)
			found = 1;
	closedir(d);
	return found;
}

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

/* -1 if buf holds the pattern, else the first index that differs. volatile: buf may be a shared
 * mapping that other processes write while we read, and every byte must really be read. */
static inline long pat_check(const volatile void *buf, size_t len, uint32_t seed, uint64_t off)
{
	const volatile unsigned char *b = buf;

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
