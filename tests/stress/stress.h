/* What only the stress, kill-storm and crash suites add to testutil.h; the checks, child
 * reaping, data patterns and the pool fixture are testutil.h's.
 *
 * - per-test state around testutil.h's pool fixture: a runner, extra daemons, a shared area;
 * - a "runner": a child process that is a child subreaper and owns a process group, so a test can
 *   fork workers that fork children that get orphaned or killed, and still know that every one of
 *   them is dead and reaped (waitpid(-1) in the runner is safe: the daemon is not its child);
 * - a shared anonymous mapping for counters and the first error, which survives SIGKILLed writers;
 * - a seeded RNG (POOLFS_SEED replays the random choices; timing is never replayable);
 * - the daemon's RSS and open descriptors from /proc (fs/procfs.h, the daemon's reader).
 * Children never call cmocka: they report through exit codes and the shared area, and _exit().
 *
 * Declarations only: the bodies are in the stress_support library (st_env.c, st_shared.c,
 * st_proc.c, st_proc_info.c, st_pool.c), except setup and teardown (see there); what other
 * suites use too is in tests/support.
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

#include "poolfs_names.h"
#include "procfs.h"
#include "testutil.h"
/* ---- environment and seeded randomness (st_env.c) ---- */

/* Whether the environment variable name is set to exactly val. */
int env_is(const char *name, const char *val);
/* POOLFS_LONG=1: the long variants. */
int stress_long(void);
/* The next number of the generator whose state is *s (splitmix64). */
uint64_t rng_next(uint64_t *s);
/* A number below n (0 if n is 0). */
unsigned rng_below(uint64_t *s, unsigned n);
/* order[0..n-1] set to 0..n-1 in a random order. */
void rng_shuffle(uint64_t *s, int *order, int n);
/* POOLFS_SEED or a fresh one; always printed so a failure can be replayed. */
uint64_t stress_seed(const char *test);
/* Sleep us microseconds, across signals. */
void sleep_us(unsigned us);
/* A stamp seed that differs per slot, iteration, step and process. */
uint32_t stamp_seed(unsigned slot, unsigned iter, unsigned step);

/* ---- the shared area: counters and the first error (st_shared.c) ---- */

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

/* A zeroed shared area (MAP_SHARED, inherited across fork); fails the test if it cannot map. */
struct shared *shared_new(void);
void shared_free(struct shared *sh);
void sh_inc(struct shared *sh, int i);
long sh_get(struct shared *sh, int i);
/* Record an error from any process: the first one is kept for the test's failure message, the
 * first few are printed (TAP comments on stderr). */
void sh_err(struct shared *sh, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define SH_NO_ERRORS(sh)                                                                           \
	do {                                                                                       \
		int e_ = atomic_load(&(sh)->nerr);                                                 \
		if (e_)                                                                            \
			fail_msg("%d error(s) in the workers; first: %s", e_, (sh)->first_err);    \
	} while (0)

/* ---- processes (st_proc.c) ---- */

/* Fork a child running fn(arg), in process group grp if > 0; pdeath: SIGKILL it when its parent
 * dies. Returns the pid (or -1). The child _exits with fn's result. */
pid_t spawn_child(pid_t grp, int pdeath, int (*fn)(void *), void *arg);
/* A process group for everything a runner starts: a sleeping holder leads it, so the group lives
 * as long as the runner wants it, whoever else dies. Returns the group (the holder's pid) or -1. */
pid_t group_new(void);
/* In the runner: kill the whole group and reap every descendant (orphans come to us: we are a
 * subreaper). When this returns, no process the runner started is left. */
void runner_kill_all(pid_t grp);
/* Start a runner: a child that is a subreaper, runs fn(arg) and then kills and reaps whatever is
 * left of its descendants before it exits with fn's result. Fails the test if it cannot fork. */
pid_t runner_start(int (*fn)(void *), void *arg);

/* After pool_wait_backing_files() timed out with no name left: why backing files stay, in words
 * (in out). The daemon destroys a nameless entry at the kernel's FORGET, which comes when the
 * kernel lets go of the inode: FUSE drops an unused inode at once, so what can keep it is a name
 * the kernel still caches that no deletion notice removes (one handed out after its notice, as
 * READDIRPLUS once did). This names the files left (their inode numbers), looks up each of the
 * test's names (NULL-terminated; one that still stats is such a cached name, and a lookup that
 * revalidates it lets the file go), then drops the machine's unused dentries and inodes
 * (vm.drop_caches: the stress tests run alone) and says whether the files then went (the kernel
 * kept a cached name) or not (something still uses them, or the daemon lost a count). Only for a
 * failure message. */
const char *backing_leftover_cause(const struct pool_fixture *p, const char *const *names,
				   char *out, size_t len);

/* ---- folders and the daemon from /proc (st_proc_info.c) ---- */

/* The names in dir (no "." or ".."), comma-separated in out: their count, or -errno. */
int list_dir(const char *dir, char *out, size_t outlen);
/* Poll until readdir of dir shows nothing: 0, or the count still listed after timeout_ms. */
int wait_dir_empty(const char *dir, int timeout_ms, char *left, size_t len);
/* proc_rss_kb and proc_fd_count: fs/procfs.h (included above). */
/* Print what each of pid's descriptors points at (diagnostics). */
void proc_fd_dump(pid_t pid, const char *title);

/* ---- holds and refs: testutil.h (tests/support/tu_refs.c), struct refs and refs_get ---- */

/* Take a hold of scope on path (user.poolfs.hold): 0, or -1 and errno. */
static inline int hold_scope(const char *path, const char *scope)
{
	return hold(path, scope);
}

/* ---- the pool ----
 * Setup, teardown and the two helpers that reap stay here, inline in the test binary, because
 * they work on testutil.h's child list and current pool, which are the test binary's own while
 * testutil.h is header-only. */

#define MAX_EXTRA 4

struct stest {
	struct tu_fixture f;	/* first: tu_pool and tu_backing_back_to_base take *state */
	pid_t runner;		/* a runner still to reap */
	pid_t extra[MAX_EXTRA]; /* daemons the test started itself */
	char extra_mnt[MAX_EXTRA][PATH_MAX];
	struct shared *sh;
};

/* The test's state; skips the test if the datapath is unsupported (st_pool.c). */
struct stest *stest_get(void **state);

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

/* Wait for the runner (bounded), then forget it. Its exit code, 128+signal or -ETIMEDOUT. */
static inline int stest_wait_runner(struct stest *t, int timeout_ms)
{
	int r = tu_reap(t->runner, timeout_ms);

	t->runner = 0;
	return r;
}

#endif
