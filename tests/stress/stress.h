/* Shared pieces of the stress, kill-storm and crash suites (header-only, one binary per file).
 *
 * - one pool per test (setup/teardown around tests/integration/harness.h);
 * - a "runner": a child process that is a child subreaper and owns a process group, so a test can
 *   fork workers that fork children that get orphaned or killed, and still know that every one of
 *   them is dead and reaped (waitpid(-1) in the runner is safe: the daemon is not its child);
 * - a shared anonymous mapping for counters and the first error, which survives SIGKILLed writers;
 * - a seeded RNG (POOLFS_SEED replays the random choices; timing is never replayable);
 * - the daemon's RSS and open descriptors from /proc.
 * Children never call cmocka: they report through exit codes and the shared area, and _exit().
 */
#ifndef POOLFS_STRESS_H
#define POOLFS_STRESS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

/* cmocka 1.1.5 declares _fail(), which fail() and fail_msg() call, without noreturn, though it
 * never returns (it longjmps out of the test, or exits). Saying so lets the static analyzers see
 * that nothing after a failed check runs. */
void _fail(const char *const file, const int line) __attribute__((noreturn));

#define PAGE 4096
/* Bounds, never timings: a loaded 2-core machine (or valgrind) is slow. */
#define GONE_MS 20000
#define RUNNER_MS 240000

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

/* A -errno result must be 0. */
#define CHECK_0(expr)                                                                         \
	do {                                                                                  \
		int r_ = (expr);                                                              \
		if (r_ != 0)                                                                  \
			fail_msg("%s:%d: %s returned %d (%s)", __FILE__, __LINE__, #expr, r_,     \
				 r_ < 0 ? errname(-r_) : "not 0");                            \
	} while (0)

static inline int env_is(const char *name, const char *val)
{
	const char *v = getenv(name);

	return v && strcmp(v, val) == 0;
}

/* POOLFS_LONG=1: the long variants. */
static inline int stress_long(void)
{
	return env_is("POOLFS_LONG", "1");
}

/* ---- seeded randomness ---- */

static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static inline unsigned rng_below(uint64_t *s, unsigned n)
{
	return n ? (unsigned)(rng_next(s) % n) : 0;
}

/* POOLFS_SEED or a fresh one; always printed so a failure can be replayed. */
static inline uint64_t stress_seed(const char *test)
{
	const char *env = getenv("POOLFS_SEED");
	uint64_t seed;

	if (env && env[0]) {
		seed = strtoull(env, NULL, 0);
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = ((uint64_t)ts.tv_sec * 1000000007ull) ^ (uint64_t)ts.tv_nsec ^
		       ((uint64_t)getpid() << 32);
	}
	fprintf(stderr, "# %s: seed=%" PRIu64 " (replay the choices with POOLFS_SEED=%" PRIu64 ")\n",
		test, seed, seed);
	fflush(stderr);
	return seed;
}

static inline void sleep_us(unsigned us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
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

/* -1 if buf holds the pattern, else the first index that differs */
static inline long pat_check(const volatile void *buf, size_t len, uint32_t seed, uint64_t off)
{
	const volatile unsigned char *b = buf;

	for (size_t i = 0; i < len; i++)
		if (b[i] != pat_byte(seed, off + i))
			return (long)i;
	return -1;
}

/* A stamp seed that differs per slot, iteration, step and process. */
static inline uint32_t stamp_seed(unsigned slot, unsigned iter, unsigned step)
{
	uint64_t s = ((uint64_t)slot << 40) ^ ((uint64_t)iter << 8) ^ step ^
		     ((uint64_t)getpid() << 20);

	return (uint32_t)(rng_next(&s) | 1);
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

/* ---- the shared area: counters and the first error ---- */

#define SH_COUNTERS 32
#define SH_ERRLEN 1024
#define SH_PRINT_ERRORS 20

struct shared {
	atomic_long n[SH_COUNTERS];
	atomic_int nerr;
	atomic_int stop;
	atomic_int done[8];
	char first_err[SH_ERRLEN];
};

static inline struct shared *shared_new(void)
{
	void *m = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		fail_msg("mmap of the shared area: %s", errname(errno));
	memset(m, 0, sizeof(struct shared));
	return m;
}

static inline void shared_free(struct shared *sh)
{
	if (sh)
		munmap(sh, sizeof(*sh));
}

static inline void sh_inc(struct shared *sh, int i)
{
	atomic_fetch_add(&sh->n[i], 1);
}

static inline long sh_get(struct shared *sh, int i)
{
	return atomic_load(&sh->n[i]);
}

/* Record an error from any process: the first one is kept for the test's failure message, the
 * first few are printed (TAP comments on stderr). */
__attribute__((format(printf, 2, 3))) static inline void sh_err(struct shared *sh,
								const char *fmt, ...)
{
	char msg[SH_ERRLEN];
	va_list ap;
	int k;

	va_start(ap, fmt);
	/* ap is started just above: clang-tidy 14 loses sight of va_start when one run checks
	 * several files (llvm/llvm-project#40656), and then flags this call. */
	vsnprintf(msg, sizeof(msg), fmt, ap); /* NOLINT(clang-analyzer-valist.Uninitialized) */
	va_end(ap);
	k = atomic_fetch_add(&sh->nerr, 1);
	if (k == 0)
		memcpy(sh->first_err, msg, sizeof(msg));
	if (k < SH_PRINT_ERRORS)
		fprintf(stderr, "# [pid %d] %s\n", (int)getpid(), msg);
}

#define SH_NO_ERRORS(sh)                                                                      \
	do {                                                                                  \
		int e_ = atomic_load(&(sh)->nerr);                                            \
		if (e_)                                                                       \
			fail_msg("%d error(s) in the workers; first: %s", e_, (sh)->first_err);   \
	} while (0)

/* ---- processes ---- */

/* Fork a child running fn(arg), in process group grp if > 0; pdeath: SIGKILL it when its parent
 * dies. Returns the pid (or -1). The child _exits with fn's result. */
static inline pid_t spawn_child(pid_t grp, int pdeath, int (*fn)(void *), void *arg)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (grp > 0)
			setpgid(0, grp);
		if (pdeath) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(120);
		}
		_exit(fn(arg));
	}
	if (pid > 0 && grp > 0)
		setpgid(pid, grp); /* whichever of the two runs first; the other fails harmlessly */
	return pid;
}

/* Reap pid within timeout_ms: its exit code, 128+signal, or -ETIMEDOUT (then it is killed and
 * reaped), or -errno. */
static inline int reap_bounded(pid_t pid, int timeout_ms)
{
	long long deadline = pool_now_ms() + timeout_ms;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r == -1 && errno != EINTR)
			return -errno;
		if (pool_now_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -ETIMEDOUT;
		}
		sleep_us(2000);
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static inline int group_holder(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

/* A process group for everything a runner starts: a sleeping holder leads it, so the group lives
 * as long as the runner wants it, whoever else dies. */
static inline pid_t group_new(void)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(120);
		_exit(group_holder(NULL));
	}
	if (pid > 0)
		setpgid(pid, pid);
	return pid;
}

/* In the runner: kill the whole group and reap every descendant (orphans come to us: we are a
 * subreaper). When this returns, no process the runner started is left. */
static inline void runner_kill_all(pid_t grp)
{
	int status;

	if (grp > 0)
		kill(-grp, SIGKILL);
	for (;;) {
		pid_t r = waitpid(-1, &status, 0);

		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			break; /* ECHILD: nobody left */
	}
}

/* Start a runner: a child that is a subreaper, runs fn(arg) and then kills and reaps whatever is
 * left of its descendants before it exits with fn's result. */
static int (*runner_fn_)(void *);

static inline int runner_main_(void *arg)
{
	int r;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	r = runner_fn_(arg);
	runner_kill_all(0);
	return r;
}

static inline pid_t runner_start(int (*fn)(void *), void *arg)
{
	pid_t pid;

	runner_fn_ = fn;
	pid = spawn_child(0, 1, runner_main_, arg);
	if (pid < 0)
		fail_msg("fork of the runner: %s", errname(errno));
	return pid;
}

/* ---- the pool ---- */

#define MAX_EXTRA 4

struct stest {
	struct pool_fixture p;
	int unsupported;
	pid_t runner;			/* a runner still to reap */
	pid_t extra[MAX_EXTRA];		/* daemons the test started itself */
	char extra_mnt[MAX_EXTRA][PATH_MAX];
	pid_t kids[16];			/* children the test forked directly */
	struct shared *sh;
};

static inline int stest_setup(void **state, const char *opts)
{
	struct stest *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -1;
	r = pool_mount(&t->p, opts);
	if (r == -EOPNOTSUPP) {
		fprintf(stderr, "# datapath %s not supported by this daemon: skipping\n",
			getenv("POOLFS_DATAPATH") ? getenv("POOLFS_DATAPATH") : "?");
		t->unsupported = 1;
	} else if (r < 0) {
		fprintf(stderr, "# pool_mount(\"%s\") failed: %s\n", opts ? opts : "", errname(-r));
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

static inline void stest_kid_add(struct stest *t, pid_t pid)
{
	for (size_t i = 0; i < sizeof(t->kids) / sizeof(t->kids[0]); i++)
		if (t->kids[i] <= 0) {
			t->kids[i] = pid;
			return;
		}
}

static inline void stest_kid_forget(struct stest *t, pid_t pid)
{
	for (size_t i = 0; i < sizeof(t->kids) / sizeof(t->kids[0]); i++)
		if (t->kids[i] == pid)
			t->kids[i] = 0;
}

/* Stop a daemon we started ourselves: unmount (detach if it stays busy), reap it. Returns its
 * exit code, 128+signal, or -errno. */
static inline int extra_daemon_stop(const char *mnt, pid_t pid)
{
	long long deadline = pool_now_ms() + 3000;
	int r;

	while (umount2(mnt, 0) == -1 && errno == EBUSY) {
		if (pool_now_ms() >= deadline) {
			fprintf(stderr, "# umount %s stays busy: detaching\n", mnt);
			umount2(mnt, MNT_DETACH);
			break;
		}
		sleep_us(20000);
	}
	r = reap_bounded(pid, 10000);
	if (r == -ETIMEDOUT)
		fprintf(stderr, "# daemon %d did not exit after unmount: killed\n", (int)pid);
	return r;
}

/* Close this process's descriptors of files under dir (a test that failed half-way must not
 * keep the pool busy). The tests never map pool files in the test process itself. */
static inline void release_fds_under(const char *dir)
{
	size_t n = strlen(dir);
	struct dirent *e;
	DIR *d;

	if (!n)
		return;
	d = opendir("/proc/self/fd");
	if (!d)
		return;
	while ((e = readdir(d))) {
		char link[64], target[PATH_MAX];
		int fd = atoi(e->d_name);
		ssize_t len;

		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = '\0';
		if (strncmp(target, dir, n) == 0 && (target[n] == '/' || target[n] == '\0'))
			close(fd);
	}
	closedir(d);
}

static inline int stest_teardown(void **state)
{
	struct stest *t = *state;
	int r;

	if (!t)
		return 0;
	if (t->runner > 0) {
		kill(t->runner, SIGKILL);
		waitpid(t->runner, NULL, 0);
	}
	for (size_t i = 0; i < sizeof(t->kids) / sizeof(t->kids[0]); i++)
		if (t->kids[i] > 0) {
			kill(t->kids[i], SIGKILL);
			waitpid(t->kids[i], NULL, 0);
		}
	for (int i = 0; i < MAX_EXTRA; i++)
		if (t->extra[i] > 0) {
			kill(t->extra[i], SIGTERM);
			extra_daemon_stop(t->extra_mnt[i], t->extra[i]);
		}
	if (!t->unsupported)
		release_fds_under(t->p.mnt);
	r = pool_unmount(&t->p);
	shared_free(t->sh);
	free(t);
	*state = NULL;
	if (r < 0) {
		fprintf(stderr, "# pool_unmount failed: %s\n", errname(-r));
		return -1;
	}
	return 0;
}

static inline struct stest *stest_get(void **state)
{
	struct stest *t = *state;

	if (t->unsupported)
		skip();
	return t;
}

/* Wait for the runner (bounded), then forget it. Its exit code, 128+signal or -ETIMEDOUT. */
static inline int stest_wait_runner(struct stest *t, int timeout_ms)
{
	int r = reap_bounded(t->runner, timeout_ms);

	t->runner = 0;
	return r;
}

/* The names in dir (no "." or ".."), comma-separated in out: their count, or -errno. */
static inline int list_dir(const char *dir, char *out, size_t outlen)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	size_t used = 0;

	if (out && outlen)
		out[0] = '\0';
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (out && used + strlen(e->d_name) + 2 < outlen) {
			used += (size_t)snprintf(out + used, outlen - used, "%s%s", n ? "," : "",
						 e->d_name);
		}
		n++;
	}
	closedir(d);
	return n;
}

/* Poll until readdir of dir shows nothing: 0, or the count still listed after timeout_ms. */
static inline int wait_dir_empty(const char *dir, int timeout_ms, char *left, size_t len)
{
	long long deadline = pool_now_ms() + timeout_ms;

	for (;;) {
		int n = list_dir(dir, left, len);

		if (n <= 0)
			return n;
		if (pool_now_ms() >= deadline)
			return n;
		sleep_us(10000);
	}
}

/* ---- the daemon from /proc ---- */

/* VmRSS in KiB, or -1. */
static inline long proc_rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Open descriptors of pid, or -errno. */
static inline int proc_fd_count(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Print what each of pid's descriptors points at (diagnostics). */
static inline void proc_fd_dump(pid_t pid, const char *title)
{
	char path[64];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	fprintf(stderr, "# %s: descriptors of daemon %d:\n", title, (int)pid);
	while ((e = readdir(d))) {
		char link[PATH_MAX + 64], target[PATH_MAX];
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", path, e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		fprintf(stderr, "#   %s -> %s\n", e->d_name, target);
	}
	closedir(d);
}

/* ---- refs ---- */

struct refs {
	long opens;
	int mapped;
	long holds;
	int pins;	/* hold lines with scope "pin" */
	int others;	/* hold lines with any other scope */
	char text[1024];
};

/* getxattr user.poolfs.refs of path, parsed: 0 or -errno. */
static inline int refs_get(const char *path, struct refs *r)
{
	ssize_t n = getxattr(path, "user.poolfs.refs", r->text, sizeof(r->text) - 1);
	char *line, *save = NULL;
	char copy[sizeof(r->text)];

	r->opens = r->holds = 0;
	r->mapped = r->pins = r->others = 0;
	if (n < 0) {
		r->text[0] = '\0';
		return -errno;
	}
	r->text[n] = '\0';
	memcpy(copy, r->text, sizeof(copy));
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char scope[256];

		if (sscanf(line, "opens %ld", &r->opens) == 1)
			continue;
		if (strcmp(line, "mapped yes") == 0) {
			r->mapped = 1;
			continue;
		}
		if (sscanf(line, "holds %ld", &r->holds) == 1)
			continue;
		if (sscanf(line, "hold %255s", scope) == 1) {
			if (strcmp(scope, "pin") == 0)
				r->pins++;
			else
				r->others++;
		}
	}
	return 0;
}

#endif
