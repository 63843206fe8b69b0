/* What only the stress, kill-storm and crash suites add to testutil.h (header-only, one binary
 * per file); the checks, child reaping, data patterns and the pool fixture are testutil.h's.
 *
 * - per-test state around testutil.h's pool fixture: a runner, extra daemons, a shared area;
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

#define PAGE 4096
/* Bounds, never timings: a loaded 2-core machine (or valgrind) is slow. */
#define GONE_MS 20000
#define RUNNER_MS 240000

#include "testutil.h"

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

/* A stamp seed that differs per slot, iteration, step and process. */
static inline uint32_t stamp_seed(unsigned slot, unsigned iter, unsigned step)
{
	uint64_t s = ((uint64_t)slot << 40) ^ ((uint64_t)iter << 8) ^ step ^
		     ((uint64_t)getpid() << 20);

	return (uint32_t)(rng_next(&s) | 1);
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
	struct tu_fixture f;		/* first: tu_pool and tu_backing_back_to_base take *state */
	pid_t runner;			/* a runner still to reap */
	pid_t extra[MAX_EXTRA];		/* daemons the test started itself */
	char extra_mnt[MAX_EXTRA][PATH_MAX];
	struct shared *sh;
};

static inline int stest_setup(void **state, const char *opts)
{
	return tu_setup_sized(state, opts, sizeof(struct stest));
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
	r = tu_reap(pid, 10000);
	if (r == -ETIMEDOUT)
		fprintf(stderr, "# daemon %d did not exit after unmount: killed\n", (int)pid);
	return r;
}

/* The runner, children the test forked directly (tu_track) and extra daemons go first; then
 * tu_teardown releases what this process still has open in the pool and takes the pool down. */
static inline int stest_teardown(void **state)
{
	struct stest *t = *state;

	if (!t)
		return 0;
	if (t->runner > 0) {
		kill(t->runner, SIGKILL);
		waitpid(t->runner, NULL, 0);
	}
	tu_kill_children();
	for (int i = 0; i < MAX_EXTRA; i++)
		if (t->extra[i] > 0) {
			kill(t->extra[i], SIGTERM);
			extra_daemon_stop(t->extra_mnt[i], t->extra[i]);
		}
	shared_free(t->sh);
	return tu_teardown(state);
}

static inline struct stest *stest_get(void **state)
{
	struct stest *t = *state;

	if (t->f.unsupported)
		skip();
	return t;
}

/* Wait for the runner (bounded), then forget it. Its exit code, 128+signal or -ETIMEDOUT. */
static inline int stest_wait_runner(struct stest *t, int timeout_ms)
{
	int r = tu_reap(t->runner, timeout_ms);

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
