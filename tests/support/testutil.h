/* What every cmocka test suite shares (tests/integration, faults, holds, stress, lib, ...), the
 * one test-support library (tests/support): checks that
 * name the errno, the pool-per-test fixture around harness.h, child processes that never outlive
 * the test, step checks for children (also as another uid), a byte channel to step a child through
 * a scenario, and deterministic data patterns. The suite headers (itest.h, ftest.h, holdtest.h,
 * stress.h, libtest.h) include this one and keep only what is specific to their suite.
 *
 * Declarations and check macros only: the bodies live in the harness library (harness_dep), one
 * file per concern: tu_fixture.c (the pool per test), tu_files.c (paths and modes), tu_proc.c
 * (children), tu_chan.c (stepping a child, listings), tu_data.c (data patterns, whole reads
 * and writes), tu_refs.c (holds and user.poolfs.refs), tu_sysctl.c (kernel switches) and
 * tu_req.c (one request by path, for the suites whose tables name requests).
 */
#ifndef POOLFS_TESTUTIL_H
#define POOLFS_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "array.h" /* ARRAY_SIZE, fs/'s */

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
#include "rows.h"
#include "poolfs_names.h"

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

const char *errname(int e);

/* ---- checks in the test process ---- */

/* expr must not return -1. */
#define CHECK(expr)                                                                                \
	do {                                                                                       \
		if ((long)(expr) == -1L)                                                           \
			fail_msg("%s:%d: %s failed: %s", __FILE__, __LINE__, #expr,                \
				 errname(errno));                                                  \
	} while (0)

/* Declares r_ (what expr returned) and e_ (the errno it left, 0 if it set none). */
#define TU_CALL(expr)                                                                              \
	long r_;                                                                                   \
	int e_ = (errno = 0, r_ = (long)(expr), errno)

/* expr must return -1 with errno err. */
#define CHECK_ERR(expr, err)                                                                       \
	do {                                                                                       \
		TU_CALL(expr);                                                                     \
		if (r_ != -1L || e_ != (err))                                                      \
			fail_msg("%s:%d: %s returned %ld errno %s, want -1 errno %s", __FILE__,    \
				 __LINE__, #expr, r_, r_ == -1L ? errname(e_) : "-",               \
				 errname(err));                                                    \
	} while (0)

/* A -errno result (harness calls) must be 0. */
#define CHECK_0(expr)                                                                              \
	do {                                                                                       \
		int r_ = (expr);                                                                   \
		if (r_ != 0)                                                                       \
			fail_msg("%s:%d: %s returned %d (%s)", __FILE__, __LINE__, #expr, r_,      \
				 r_ < 0 ? errname(-r_) : "not 0");                                 \
	} while (0)

#define PATH(var, p, rel)                                                                          \
	char var[PATH_MAX];                                                                        \
	assert_int_equal(pool_path((p), (rel), var, sizeof(var)), 0)

#define ASSERT_EXISTS(path)                                                                        \
	do {                                                                                       \
		struct stat st_;                                                                   \
		if (lstat((path), &st_) == -1)                                                     \
			fail_msg("%s:%d: %s should exist: %s", __FILE__, __LINE__, (path),         \
				 errname(errno));                                                  \
	} while (0)

#define ASSERT_ABSENT(path)                                                                        \
	do {                                                                                       \
		struct stat st_;                                                                   \
		if (lstat((path), &st_) == 0 || errno != ENOENT)                                   \
			fail_msg("%s:%d: %s should not exist (lstat: %s)", __FILE__, __LINE__,     \
				 (path), errname(errno));                                          \
	} while (0)

/* The daemon log of the running test's pool (the last one tu_mount mounted), when a check fails. */
void tu_dump_log(void);

/* On failure the entry's refs text says what still keeps it, and the daemon log follows. */
#define ASSERT_GONE(path)                                                                          \
	do {                                                                                       \
		int r_ = pool_wait_gone((path), GONE_MS);                                          \
		if (r_ != 0) {                                                                     \
			char rb_[4096] = "";                                                       \
			ssize_t n_ = getxattr((path), POOLFS_XATTR_REFS, rb_, sizeof(rb_) - 1);    \
			rb_[n_ > 0 ? n_ : 0] = '\0';                                               \
			tu_dump_log();                                                             \
			fail_msg("%s:%d: %s not removed within %d ms (%s); refs:\n%s", __FILE__,   \
				 __LINE__, (path), GONE_MS, errname(-r_), rb_);                    \
		}                                                                                  \
	} while (0)

/* How long ASSERT_STAYS gives the daemon to (wrongly) remove an entry: a suite whose daemon may
 * take longer to act (holds) defines its own SETTLE_MS before including this. Not a timing
 * assertion: a correct daemon passes at any speed. */
#ifndef SETTLE_MS
#define SETTLE_MS 200
#endif

/* There now and still after SETTLE_MS: a removal racing behind the last change is caught too. */
#define ASSERT_STAYS(path)                                                                         \
	do {                                                                                       \
		ASSERT_EXISTS(path);                                                               \
		pool_sleep_ms(SETTLE_MS);                                                          \
		ASSERT_EXISTS(path);                                                               \
	} while (0)

/* Closing fd, the entry's last handle, removes path. */
#define CLOSE_UNTIL_GONE(fd, path)                                                                 \
	do {                                                                                       \
		CHECK(close(fd));                                                                  \
		ASSERT_GONE(path);                                                                 \
	} while (0)

/* ---- checks in a child (spawned, or through run_as_user) ----
 * Children never call cmocka: a failed step returns its number as the exit code (the parent's
 * REAP_OK / AS_OTHER_OK turns it into a failure) and says why on stderr. */

#define CHILD_CHECK(cond, step)                                                                    \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "# child %d: step %d (%s) failed: %s\n", (int)getpid(),    \
				(step), #cond, errname(errno));                                    \
			return (step);                                                             \
		}                                                                                  \
	} while (0)

/* expr must fail with err. */
#define USER_EXPECT(step, expr, err)                                                               \
	do {                                                                                       \
		TU_CALL(expr);                                                                     \
		if (r_ != -1L || e_ != (err)) {                                                    \
			fprintf(stderr, "# uid %d step %d: %s returned %ld errno %s, want %s\n",   \
				(int)getuid(), (step), #expr, r_, r_ == -1L ? errname(e_) : "-",   \
				errname(err));                                                     \
			return (step);                                                             \
		}                                                                                  \
	} while (0)

/* expr must not return -1. */
#define USER_OK(step, expr)                                                                        \
	do {                                                                                       \
		if ((long)(expr) == -1L) {                                                         \
			fprintf(stderr, "# uid %d step %d: %s failed: %s\n", (int)getuid(),        \
				(step), #expr, errname(errno));                                    \
			return (step);                                                             \
		}                                                                                  \
	} while (0)

/* A child's steps that need a buffer of `size` bytes: steps(arg, buf)'s result, or step 1's
 * failure if there is no memory for it. */
int tu_steps_with_buffer(size_t size, int (*steps)(void *arg, char *buf), void *arg);

#define USER_TRUE(step, cond)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "# uid %d step %d: %s is false (errno %s)\n",              \
				(int)getuid(), (step), #cond, errname(errno));                     \
			return (step);                                                             \
		}                                                                                  \
	} while (0)

/* fn(arg) as OTHER_UID must pass every step. */
/* fn(arg) as uid/gid must pass every step. */
#define AS_OK(uid_, gid_, fn, arg)                                                                 \
	do {                                                                                       \
		int r_ = run_as_user((uid_), (gid_), (fn), (arg));                                 \
		if (r_ != 0)                                                                       \
			fail_msg("%s:%d: %s as uid %d failed at step %d", __FILE__, __LINE__, #fn, \
				 (int)(uid_), r_);                                                 \
	} while (0)

#define AS_OTHER_OK(fn, arg)                                                                       \
	do {                                                                                       \
		int r_ = run_as_user(OTHER_UID, OTHER_GID, (fn), (arg));                           \
		if (r_ != 0)                                                                       \
			fail_msg("%s as uid %d failed at step %d", #fn, OTHER_UID, r_);            \
	} while (0)

/* ---- one pool per test (or per group) ---- */

/* A suite with more per-test state puts this first in its own struct: tu_pool and
 * tu_backing_back_to_base then work on that struct's *state too. */
struct tu_fixture {
	struct pool_fixture p;
	int unsupported; /* the daemon refused this datapath (or these options): the tests skip */
	char unsupported_why[192]; /* why, as tu_pool's skip says it (scripts/skip_reasons.py) */
	int base_backing;	   /* backing files right after mount (the daemon's own, if any) */
	int single_user;	   /* tu_mount mounts without allow_other (pool_mount_private) */
};

/* Mount t's pool: 0 (also when the datapath is unsupported: the tests then skip), or -1. */
int tu_mount(struct tu_fixture *t, const char *opts);

/* Take t's pool down: 0, or -1 if the unmount failed (a leak, a busy mount, a daemon error). */
int tu_unmount(struct tu_fixture *t);

/* cmocka setup: a zeroed struct of size bytes that starts with a struct tu_fixture (a suite's
 * own test state, or just the fixture), its pool mounted. */
int tu_setup_sized(void **state, const char *opts, size_t size);

/* For suites that need nothing but the pool. */
int tu_setup(void **state, const char *opts);

/* tu_setup for a private pool (no allow_other): FUSE itself keeps other users out. */
int tu_setup_private(void **state, const char *opts);

/* cmocka teardown: the pool goes down and *state (whatever tu_setup_sized allocated) is freed;
 * a suite frees or stops its own extras first. */
int tu_teardown(void **state);

/* Two pools per test, for what must not cross from one pool to another (EXDEV): the fixture's,
 * and q, mounted with the same options. A suite with more per-test state puts this first in its
 * own struct (tu_pool, tu_teardown_two then work on that struct's *state). */
struct tu_two_pools {
	struct tu_fixture t; /* first: tu_pool and tu_teardown take *state */
	struct pool_fixture q;
	int q_mounted;
};

/* cmocka setup: tu_setup_sized (size bytes starting with a struct tu_two_pools), then q mounted
 * with opts too (not when the datapath is unsupported: the tests then skip). */
int tu_setup_two_sized(void **state, const char *opts, size_t size);

/* cmocka teardown: q goes down (the test's children killed and its descriptors and mappings of
 * q's files released first), then tu_teardown. */
int tu_teardown_two(void **state);

/* Fill PATH_MAX buffers with absolute paths in p: tu_paths(p, rel, buf, rel, buf, ...) with
 * const char *rel and char buf[PATH_MAX]. Fails the test if one does not fit. */
#define tu_paths(p, ...) tu_paths_((p), __VA_ARGS__, (const char *)NULL)
void tu_paths_(const struct pool_fixture *p, ...);

/* The permission bits (07777) of path must be want. */
void expect_mode(const char *path, mode_t want);

/* chmod(path, mode) succeeds and leaves the permission bits want. */
void expect_chmod_gives(const char *path, mode_t mode, mode_t want);

/* close(fd), then wait (GONE_MS) until path is gone because that was its last handle: 0, or -1
 * with errno set, so that a child as another user can check it with USER_OK. */
int tu_close_until_gone(int fd, const char *path);

/* The pool of this test; skips the test if the datapath is unsupported. */
struct pool_fixture *tu_pool(void **state);

/* Backing files must come back to what the pool had right after mount, within timeout_ms. */
void tu_backing_back_within(void **state, int timeout_ms);

/* The same within the suite's GONE_MS: a macro, so a suite that defines a longer GONE_MS before
 * including this header gets it here too. */
#define tu_backing_back_to_base(state) tu_backing_back_within((state), GONE_MS)

/* Skip the running test case, saying why (printf-style): the reason goes to stdout as a TAP
 * comment "# skip: WHY" just before cmocka's "ok N # SKIP NAME", where scripts/count_tests.py
 * reads it and groups it by the reasons scripts/skip_reasons.py allows; a skip without a listed
 * reason fails the run. So every skip of a cmocka test goes through this, never bare skip(). */
#define TU_SKIP(...)                                                                               \
	do {                                                                                       \
		printf("# skip: " __VA_ARGS__);                                                    \
		printf("\n");                                                                      \
		fflush(stdout);                                                                    \
		skip();                                                                            \
	} while (0)

/* cmocka 1.1.5 reports a skip() as "not ok N # SKIP", which TAP readers (meson) count as a
 * failure. So a binary that cannot run at all prints the TAP plan "1..0 # SKIP why" instead,
 * before cmocka starts, and exits with what this returns. */
int tu_skip_all(const char *why);

/* ---- children ---- */

/* Remember pid (once) for teardown to kill and reap; also for orphans a subreaper test will
 * reap itself. */
void tu_track(pid_t pid);

/* Stop remembering pid (the test reaped it). */
void tu_forget(pid_t pid);

/* SIGKILL and reap every process this test started and has not reaped. */
void tu_kill_children(void);

/* Fork a child running fn(arg) and _exit(fn's result); it dies with us (PDEATHSIG) and teardown
 * kills it if the test did not reap it. */
pid_t tu_spawn(int (*fn)(void *), void *arg);
/* fork(2) for a test: 0 in the child, which gets pdeath_sig when the test dies (and exits at
 * once if it already has); the pid in the test, which is not tracked (tu_spawn tracks). Fails
 * the test if it cannot fork. */
pid_t tu_fork(int pdeath_sig);

/* Reap pid (a child, or an orphan reparented to a subreaper) within timeout_ms: its exit code,
 * 128+signal, -ETIMEDOUT (then it is killed and reaped), or -errno. Safe in a child too: it never
 * calls cmocka. */
int tu_reap(pid_t pid, int timeout_ms);

/* The pid of a process that has ended: a child that exited at once, reaped (for the requests
 * that must refuse a process that does not exist). Fails the test if it cannot be had. */
pid_t tu_dead_pid(void);

#define REAP_OK(pid) REAP_OK_WITHIN((pid), CHILD_MS)
#define REAP_OK_WITHIN(pid, ms)                                                                    \
	do {                                                                                       \
		int c_ = tu_reap((pid), (ms));                                                     \
		if (c_ != 0)                                                                       \
			fail_msg("%s:%d: process %d ended with %d", __FILE__, __LINE__,            \
				 (int)(pid), c_);                                                  \
	} while (0)

/* ---- stepping a child ---- */

/* What tu_unix_socket does with its socket at the path. */
enum tu_sock_use { TU_SOCK_BIND, TU_SOCK_LISTEN, TU_SOCK_CONNECT };

/* A unix stream socket (close-on-exec) bound at path (and listening, TU_SOCK_LISTEN) or
 * connected to it: its descriptor, or -1 with errno (ENAMETOOLONG: path does not fit). No cmocka:
 * a child of any uid may call it. */
int tu_unix_socket(const char *path, enum tu_sock_use use);

/* Poll fd for input: 0, -ETIMEDOUT, or -errno. */
int fd_wait_readable(int fd, int timeout_ms);
/* One descriptor over a unix socket (SCM_RIGHTS): 0 or -errno. */
int tu_send_fd(int sock, int fd);
/* The descriptor tu_send_fd sent (within timeout_ms, close-on-exec): >= 0, or -errno. */
int tu_recv_fd(int sock, int timeout_ms);

/* Two pipes to step a child through a scenario: the parent sends "go" bytes down, the child
 * sends "ready" bytes up. A dead peer reads as EOF, so nobody waits forever. */
struct chan {
	int up[2];
	int down[2];
};

void chan_open(struct chan *c);

/* Called first in the child / right after spawning in the parent. */
void chan_child(struct chan *c);

void chan_parent(struct chan *c);

void chan_close_parent(struct chan *c);

int chan_put(int fd);

/* 0, -EPIPE on EOF (peer gone), -ETIMEDOUT, or -errno of poll */
int chan_get(int fd, int timeout_ms);

/* Child side */
#define CHILD_READY(c) chan_put((c)->up[1])
#define CHILD_WAIT_GO(c) chan_get((c)->down[0], 10 * CHILD_MS)
/* The usual pair: say ready (failing as `step`), then wait for the go (as step + 1). */
#define CHILD_READY_THEN_GO(c, step)                                                               \
	do {                                                                                       \
		CHILD_CHECK(CHILD_READY(c) == 0, (step));                                          \
		CHILD_CHECK(CHILD_WAIT_GO(c) == 0, (step) + 1);                                    \
	} while (0)
/* Parent side */
#define PARENT_GO(c) CHECK_0(chan_put((c)->down[1]))
#define PARENT_WAIT_READY(c)                                                                       \
	do {                                                                                       \
		int r_ = chan_get((c)->up[0], CHILD_MS);                                           \
		if (r_ != 0)                                                                       \
			fail_msg("%s:%d: child not ready: %s", __FILE__, __LINE__, errname(-r_));  \
	} while (0)

/* Whether readdir of dir lists name: 1 or 0, or -errno if dir cannot be listed (usable in a
 * child; compare with 1 or 0 exactly, so an error never passes for either answer). */
int tu_listed(const char *dir, const char *name);
/* How many of dir's entries (".", ".." too) `counts` says yes to, or -errno. */
int tu_dir_count(const char *dir, int (*counts)(const struct dirent *e, const void *ctx),
		 const void *ctx);

/* ---- data ---- */

/* Deterministic bytes: the value at file offset off for a given seed. */
unsigned char pat_byte(uint32_t seed, uint64_t off);

void pat_fill(void *buf, size_t len, uint32_t seed, uint64_t off);

/* -1 if buf holds the pattern, else the first index that differs. volatile: buf may be a shared
 * mapping that other processes write while we read, and every byte must really be read. */
long pat_check(const volatile void *buf, size_t len, uint32_t seed, uint64_t off);

ssize_t pwrite_all(int fd, const void *buf, size_t len, off_t off);

/* Reads until len or EOF: the count read, or -1 */
ssize_t pread_all(int fd, void *buf, size_t len, off_t off);

/* The first len bytes of the existing file at path, mapped shared read-write; the descriptor is
 * closed again, so the mapping is what uses the file. MAP_FAILED with errno set on error (a
 * child can check it without the cmocka machinery). */
void *tu_map_path(const char *path, size_t len);

/* ---- one request by path (tu_req.c) ---- */

/* The requests by path that the suites' tables name (test_access, test_lifetime, test_badinput,
 * test_churn). A suite with requests of its own numbers them from TU_REQ_COUNT on. */
enum tu_req_op {
	TU_REQ_OPEN, /* open(path, flags, 0600), closed again */
	TU_REQ_STAT,
	TU_REQ_LSTAT,
	TU_REQ_TRUNCATE, /* truncate(path, len) */
	TU_REQ_UNLINK,
	TU_REQ_RMDIR,
	TU_REQ_MKDIR,	    /* mode 0700 */
	TU_REQ_RENAME,	    /* rename(path, to) */
	TU_REQ_RENAME2,	    /* renameat2(path, to, flags) */
	TU_REQ_LINK,	    /* link(path, to) */
	TU_REQ_GETXATTR,    /* getxattr(path, name) into a 4 KiB buffer */
	TU_REQ_SETXATTR,    /* setxattr(path, name, val, vlen) */
	TU_REQ_LISTXATTR,   /* into a 4 KiB buffer */
	TU_REQ_REMOVEXATTR, /* removexattr(path, name) */
	TU_REQ_CHMOD,	    /* chmod(path, 0600) */
	TU_REQ_UTIMENS,	    /* both times set to now */
	TU_REQ_ACCESS,	    /* access(path, flags) */
	TU_REQ_MKFIFO,	    /* mode 0600 */
	TU_REQ_BIND,	    /* a unix socket bound at path (tu_unix_socket), closed again */
	TU_REQ_CONNECT,	    /* a unix socket connected to path, closed again */
	TU_REQ_COUNT
};

struct tu_req {
	enum tu_req_op op;
	const char *path;
	const char *to;	  /* rename, renameat2, link: the second path */
	int flags;	  /* open's flags, access's mode, renameat2's flags */
	off_t len;	  /* truncate's length */
	const char *name; /* the attribute of the xattr requests */
	const char *val;  /* setxattr's value (NULL: none) */
	size_t vlen;	  /* its length; 0: strlen(val) */
};

/* Make the request: 0 if it succeeded (a descriptor it opened is closed again), else its errno
 * (EINVAL for an op it does not know). No cmocka: a child of another uid may call it. */
int tu_request(const struct tu_req *q);

/* ---- holds and refs (tu_refs.c) ---- */

/* Take a hold of scope on path (user.poolfs.hold): setxattr's 0, or -1 and errno. */
int hold(const char *path, const char *scope);
/* The refs text of path, NUL-terminated in buf: its length, or -1 and errno. */
ssize_t refs(const char *path, char *buf, size_t len);
/* Whether text holds the exact line (without its "\n"; the last may lack one). */
int has_line(const char *text, const char *line);
/* Create path (exclusive) with a few bytes and close it: 0 or -errno. */
int make_closed_file(const char *path);

/* user.poolfs.refs parsed into counts. */
struct refs {
	long opens;
	int mapped;
	long holds;
	int pins;   /* hold lines with scope "pin" */
	int others; /* hold lines with any other scope */
	char text[1024];
};

/* The refs text of path (fd < 0) or of the descriptor fd has the exact line `line` (without its
 * "\n"); else the test fails at file:at, with the text. */
void tu_expect_refs_line(const char *path, int fd, const char *line, const char *file, int at);
#define ASSERT_REFS_LINE(path, line) tu_expect_refs_line((path), -1, (line), __FILE__, __LINE__)
#define ASSERT_FD_REFS_LINE(fd, line) tu_expect_refs_line(NULL, (fd), (line), __FILE__, __LINE__)

/* getxattr user.poolfs.refs of path, parsed: 0 or -errno. */
int refs_get(const char *path, struct refs *r);
/* Wait until the daemon counts no handle of path and no mapping may be left (RELEASE comes
 * after close() returns, the proof of the last unmapping after munmap()), at most timeout_ms
 * (then fail the test): the next open is then the file's first, alone. */
void tu_wait_unused(const char *path, int timeout_ms);

/* "entries N" of the pool's user.poolfs.stat: the pool's entries of all users (fails the test
 * if it cannot be read). */
long long tu_pool_entries(const struct pool_fixture *p);
/* Wait until the pool holds `want` entries, at most timeout_ms (then fail the test): a store
 * the test cannot walk into (a private tmpfs, another user's names) is counted by the daemon. */
void tu_wait_pool_entries(const struct pool_fixture *p, long long want, int timeout_ms);

/* words[i] (a table of texts by a small number, e.g. an enum's), or `other` for a number
 * outside it or without a text. */
static inline const char *tu_word(const char *const *words, size_t n, int i, const char *other)
{
	return i >= 0 && (size_t)i < n && words[i] ? words[i] : other;
}

/* A cmocka setup that mounts the test's pool with `opts` (tu_setup), one line a setup:
 * TU_SETUP(setup_none, "autohold=none") */
#define TU_SETUP(name, opts)                                                                       \
	static int name(void **state)                                                              \
	{                                                                                          \
		return tu_setup(state, opts);                                                      \
	}

#endif
