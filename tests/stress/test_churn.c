/* Churn: a few processes race every name operation on a few names, and every answer must be one
 * that tmpfs could give in the same step (docs/interface.md "Entries and permissions": a pool
 * answers as tmpfs does; ESTALE, EIO, EBADF or ENOMEM is never an answer a program expects).
 *
 * NWORKERS processes loop, for POOLFS_CHURN_SECONDS each (default 2; 600 with POOLFS_SOAK=1;
 * ITEST_FILTER=NAME runs one case), over random steps on the names "a", "b", "d" (in the root)
 * and "d/a", "d/b" (in the folder d, while d is a folder): open with O_CREAT (then pwrite and
 * pread back a stamp of their own, close), open without it (pread, close), stat, unlink, rename
 * and link of one name over another, mkdir, rmdir and getxattr "user.poolfs.refs". Any name may
 * be a file, a folder or absent at any moment, so each step has a list of errnos tmpfs may give
 * (allowed(), one line per step and why); any other errno, or any error from the I/O on a
 * descriptor once opened, fails the test with the step, its names, the worker and its round.
 *
 * Cases: a plain tmpfs folder first (the control: it proves the allowed lists are tmpfs's own),
 * then pools of each kind: private (no allow_other: names in the root are cached by the kernel)
 * and multi-user (allow_other), each with autohold=none and the default autohold (session; the
 * workers run in a session of their own, so their holds end with it), each over /dev/fuse
 * (uring=off) and over io_uring (uring=on: skipped where the build or kernel has none, and under
 * valgrind). meson runs the binary once per data path (POOLFS_DATAPATH). Every case prints its
 * counts per step and errno. Once the workers are gone the test removes what is left and the pool
 * must empty: lists nothing, backing store back to where it started.
 *
 * POOLFS_SEED replays the random choices (timing is never replayable).
 */
#include <ftw.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "stress.h"

#define NWORKERS 5
#define NERRNO 134 /* errno values are below this (EHWPOISON, 133, is the last) */
#define STAMP 16
#define DEFAULT_SECONDS 2
#define SOAK_SECONDS 600

enum step {
	S_CREATE,
	S_OPEN,
	S_STAT,
	S_UNLINK,
	S_RENAME,
	S_LINK,
	S_MKDIR,
	S_RMDIR,
	S_XATTR,
	S_IO,
	NSTEPS
};

static const char *const step_name[NSTEPS] = {
	"open(O_CREAT)", "open",  "stat",  "unlink",   "rename",
	"link",		 "mkdir", "rmdir", "getxattr", "io on an open fd",
};

/* The names the workers race on; "d" is the only one that can have children. */
static const char *const names[] = {"a", "b", "d", "d/a", "d/b"};
#define NNAMES ((unsigned)(sizeof(names) / sizeof(names[0])))

/* Counts per step and errno (0: success), in a shared mapping every worker writes. */
struct churn_counts {
	atomic_long n[NSTEPS][NERRNO];
	atomic_long estale;
};

struct ccfg {
	struct shared *sh;
	struct churn_counts *cc;
	char dir[PATH_MAX]; /* the pool's mountpoint or the control's tmpfs folder */
	int seconds;
	uint64_t seed;
	int where_tmpfs;
};

struct cworker {
	const struct ccfg *c;
	int slot;
};

/* ---- what tmpfs may answer ---- */

static int in_d(const char *name)
{
	return name && strncmp(name, "d/", 2) == 0;
}

static int is_one_of(int e, const int *list)
{
	for (; *list; list++)
		if (*list == e)
			return 1;
	return 0;
}

/* Whether tmpfs may answer step on src (and dst) with errno e. Any name may be a file, a folder
 * or absent at any moment, and folders move: rename(d, a) makes "a" the folder with d's children
 * and rename(a, d/a) puts that folder, children and all, into d. So any name may be a folder with
 * children, and a folder named in the root may be the very folder d that a path in d goes through.
 * A path in d also meets d gone (ENOENT) or d a file (ENOTDIR) on its way. */
static int allowed(enum step s, const char *src, const char *dst, int e)
{
	/* Each step's errnos, 0-terminated; none for I/O on a descriptor we hold: it never fails. */
	static const int may[NSTEPS][6] = {
		/* the name is a folder; O_CREAT in an existing folder never gives ENOENT */
		[S_CREATE] = {EISDIR},
		[S_OPEN] = {ENOENT, EISDIR}, /* absent; O_RDWR of a folder */
		[S_STAT] = {ENOENT},
		[S_UNLINK] = {ENOENT, EISDIR}, /* Linux's unlink of a folder */
		[S_MKDIR] = {EEXIST},
		/* absent; a file; a folder with children (POSIX allows either errno) */
		[S_RMDIR] = {ENOENT, ENOTDIR, ENOTEMPTY, EEXIST},
		[S_XATTR] = {ENOENT, ENODATA}, /* tmpfs has no user.poolfs.refs */
		/* src absent; a file onto a folder; a folder onto a file; onto a folder with
		 * children */
		[S_RENAME] = {ENOENT, EISDIR, ENOTDIR, ENOTEMPTY, EEXIST},
		/* src absent (or unlinked meanwhile); dst exists; src a folder (the kernel's EPERM) */
		[S_LINK] = {ENOENT, EEXIST, EPERM},
	};
	int sub = in_d(src) || in_d(dst);

	if (sub && (e == ENOENT || e == ENOTDIR) && s != S_IO)
		return 1;
	/* EINVAL: a folder of the root into itself (src is, or has become, d) */
	if (s == S_RENAME && e == EINVAL && !in_d(src) && in_d(dst))
		return 1;
	return e != 0 && is_one_of(e, may[s]);
}

/* ---- a worker ---- */

struct wstate {
	const struct ccfg *c;
	int slot;
	long round;
	long long t0;
};

static void path_of(const struct ccfg *c, const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", c->dir, name);

	if (n < 0 || (size_t)n >= len)
		abort(); /* short temporary paths */
}

/* Count the outcome of one step (r == -1: errno e) and report an errno tmpfs would not give. */
static int outcome(struct wstate *w, enum step s, const char *src, const char *dst, long r, int e)
{
	struct churn_counts *cc = w->c->cc;

	if (r != -1) {
		atomic_fetch_add(&cc->n[s][0], 1);
		return 0;
	}
	atomic_fetch_add(&cc->n[s][e > 0 && e < NERRNO ? e : 0], 1);
	if (e == ESTALE)
		atomic_fetch_add(&cc->estale, 1);
	if (allowed(s, src, dst, e))
		return 0;
	sh_err(w->c->sh,
	       "worker %d round %ld (%lld ms): %s(%s%s%s) gave %s, which tmpfs never gives there",
	       w->slot, w->round, pool_now_ms() - w->t0, step_name[s], src, dst ? ", " : "",
	       dst ? dst : "", errname(e));
	return -1;
}

/* After an open: our stamp at our offset reads back (no other worker writes there), close. */
static void io_after_create(struct wstate *w, int fd, const char *name)
{
	unsigned char st[STAMP], back[STAMP];
	off_t off = (off_t)w->slot * STAMP;
	ssize_t n;

	for (int i = 0; i < STAMP; i++)
		st[i] = (unsigned char)(w->round * 31 + i + w->slot);
	n = pwrite(fd, st, STAMP, off);
	if (n != STAMP) {
		outcome(w, S_IO, name, "pwrite", -1, n < 0 ? errno : EIO);
	} else {
		n = pread(fd, back, STAMP, off);
		if (n < 0)
			outcome(w, S_IO, name, "pread", -1, errno);
		else if (n != STAMP || memcmp(st, back, STAMP) != 0)
			sh_err(w->c->sh,
			       "worker %d round %ld: %s: pread gave %zd bytes, not our stamp",
			       w->slot, w->round, name, n);
		else
			outcome(w, S_IO, name, NULL, 0, 0);
	}
	if (close(fd) == -1)
		outcome(w, S_IO, name, "close", -1, errno);
}

static void io_after_open(struct wstate *w, int fd, const char *name)
{
	char buf[PAGE];

	if (pread(fd, buf, sizeof(buf), 0) < 0)
		outcome(w, S_IO, name, "pread", -1, errno);
	else
		outcome(w, S_IO, name, NULL, 0, 0);
	if (close(fd) == -1)
		outcome(w, S_IO, name, "close", -1, errno);
}

static void one_step(struct wstate *w, uint64_t *rs)
{
	/* The steps by path but the opens: tu_request's (testutil.h). */
	static const enum tu_req_op req[NSTEPS] = {
		[S_STAT] = TU_REQ_STAT,	     [S_UNLINK] = TU_REQ_UNLINK, [S_RENAME] = TU_REQ_RENAME,
		[S_LINK] = TU_REQ_LINK,	     [S_MKDIR] = TU_REQ_MKDIR,	 [S_RMDIR] = TU_REQ_RMDIR,
		[S_XATTR] = TU_REQ_GETXATTR,
	};
	enum step s = (enum step)rng_below(rs, S_IO);
	unsigned i = rng_below(rs, NNAMES), j = (i + 1 + rng_below(rs, NNAMES - 1)) % NNAMES;
	const char *src = names[i], *dst = names[j];
	char p[PATH_MAX], q[PATH_MAX];
	int e;

	path_of(w->c, src, p, sizeof(p));
	path_of(w->c, dst, q, sizeof(q));
	if (s == S_CREATE || s == S_OPEN) {
		errno = 0;
		int fd = open(p, O_RDWR | O_CLOEXEC | (s == S_CREATE ? O_CREAT : 0), 0600);

		e = errno;
		if (outcome(w, s, src, NULL, fd < 0 ? -1 : 0, e) == 0 && fd >= 0)
			(s == S_CREATE ? io_after_create : io_after_open)(w, fd, src);
		else if (fd >= 0)
			close(fd);
		return;
	}
	/* only a rename or a link names a second entry */
	const bool two = s == S_RENAME || s == S_LINK;
	const struct tu_req r = {
		.op = req[s], .path = p, .to = two ? q : NULL, .name = POOLFS_XATTR_REFS};

	e = tu_request(&r);
	outcome(w, s, src, two ? dst : NULL, e ? -1 : 0, e);
}

static int churn_worker(void *arg)
{
	const struct cworker *cw = arg;
	const struct ccfg *c = cw->c;
	struct wstate w = {.c = c, .slot = cw->slot, .t0 = pool_now_ms()};
	uint64_t rs = c->seed ^ (0x5EED0000ull + (uint64_t)cw->slot) * 0x9E3779B97F4A7C15ull;

	while (!atomic_load(&c->sh->stop)) {
		one_step(&w, &rs);
		w.round++;
	}
	return 0;
}

/* The runner leads a session of its own, so the default autohold's session holds of the workers
 * end when it exits. It lets the workers run for c->seconds, then stops and reaps them. */
static int churn_runner(void *arg)
{
	const struct ccfg *c = arg;
	struct cworker wa[NWORKERS];
	pid_t w[NWORKERS];
	pid_t grp;
	int bad = 0;

	if (setsid() == -1) {
		sh_err(c->sh, "runner: setsid: %s", errname(errno));
		return 1;
	}
	grp = group_new();
	for (int i = 0; i < NWORKERS; i++) {
		wa[i] = (struct cworker){.c = c, .slot = i};
		w[i] = spawn_child(grp, 1, churn_worker, &wa[i]);
		if (w[i] < 0)
			sh_err(c->sh, "runner: fork: %s", errname(errno));
	}
	for (int s = 0; s < c->seconds * 10 && !atomic_load(&c->sh->stop); s++)
		sleep_us(100000);
	atomic_store(&c->sh->stop, 1);
	for (int i = 0; i < NWORKERS; i++) {
		int r;

		if (w[i] <= 0)
			continue;
		r = tu_reap(w[i], RUNNER_MS);
		if (r != 0) {
			sh_err(c->sh, "worker %d ended with %d%s", i, r,
			       r == -ETIMEDOUT ? " (timed out: killed)" : "");
			bad = 1;
		}
	}
	runner_kill_all(grp);
	return bad;
}

/* ---- the cases ---- */

struct churn_case {
	const char *name;  /* cmocka's */
	const char *label; /* in the counts and messages */
	int tmpfs;	   /* the control: a plain tmpfs folder, no pool */
	int multi_user;	   /* allow_other */
	const char *opts;  /* autohold and transport */
	int uring;
};

struct ctest {
	struct stest s; /* first: stest_teardown and tu_* work on it */
	const struct churn_case *cc;
	char tmpdir[PATH_MAX]; /* the control's folder, removed at teardown */
	struct churn_counts *counts;
};

static int churn_seconds(void)
{
	const char *v = getenv("POOLFS_CHURN_SECONDS");

	if (v && v[0])
		return atoi(v) > 0 ? atoi(v) : DEFAULT_SECONDS;
	return env_is("POOLFS_SOAK", "1") ? SOAK_SECONDS : DEFAULT_SECONDS;
}

static int churn_setup(void **state)
{
	const struct churn_case *cc = *state;
	struct ctest *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	t->cc = cc;
	if (cc->tmpfs) {
		const char *base = getenv("POOLFS_TEST_TMP");
		struct statfs sf;

		snprintf(t->tmpdir, sizeof(t->tmpdir), "%s/poolfs-churn-XXXXXX",
			 base && base[0] ? base : "/dev/shm");
		if (!mkdtemp(t->tmpdir) || statfs(t->tmpdir, &sf) == -1 ||
		    sf.f_type != TMPFS_MAGIC) {
			fprintf(stderr, "# %s: not a fresh folder on tmpfs: %s\n", t->tmpdir,
				errname(errno));
			if (t->tmpdir[0])
				rmdir(t->tmpdir);
			free(t);
			return -1;
		}
		t->s.f.unsupported = 0;
		*state = t;
		return 0;
	}
	t->s.f.single_user = !cc->multi_user;
	if (cc->uring && env_is("POOLFS_VALGRIND", "1")) {
		t->s.f.unsupported = 1; /* io_uring deadlocks under valgrind (harness.h) */
		snprintf(t->s.f.unsupported_why, sizeof(t->s.f.unsupported_why),
			 "io_uring is not tested under valgrind, where it deadlocks");
		*state = t;
		return 0;
	}
	if (tu_mount(&t->s.f, cc->opts) < 0) {
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	if (ftw->level == 0)
		return 0; /* the folder itself stays */
	if ((flag == FTW_DP ? rmdir(path) : unlink(path)) == -1 && errno != ENOENT)
		fprintf(stderr, "# cleanup: %s: %s\n", path, errname(errno));
	return 0;
}

/* Remove what the workers left, however deep folders moved into each other. */
static void remove_leftovers(const char *dir)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int churn_teardown(void **state)
{
	struct ctest *t = *state;

	if (!t)
		return 0;
	if (t->counts)
		munmap(t->counts, sizeof(*t->counts));
	if (t->cc->tmpfs) {
		if (t->s.runner > 0) {
			kill(t->s.runner, SIGKILL);
			waitpid(t->s.runner, NULL, 0);
		}
		shared_free(t->s.sh);
		remove_leftovers(t->tmpdir);
		if (rmdir(t->tmpdir) == -1)
			fprintf(stderr, "# rmdir %s: %s\n", t->tmpdir, errname(errno));
		free(t);
		*state = NULL;
		return 0;
	}
	return stest_teardown(state);
}

static void print_counts(const struct churn_counts *cc, const char *label, int seconds)
{
	long total = 0;

	for (int s = 0; s < NSTEPS; s++) {
		char line[1024];
		size_t len = 0;
		long n = 0;

		for (int e = 0; e < NERRNO; e++) {
			long v = atomic_load(&cc->n[s][e]);

			n += v;
			if (v && len < sizeof(line))
				len += (size_t)snprintf(line + len, sizeof(line) - len, " %s %ld",
							e ? errname(e) : "ok", v);
		}
		total += n;
		fprintf(stderr, "# %s: %-16s %8ld:%s\n", label, step_name[s], n, len ? line : "");
	}
	fprintf(stderr, "# %s: %ld steps in %d s, ESTALE %ld\n", label, total, seconds,
		atomic_load(&cc->estale));
}

static void test_churn(void **state)
{
	struct ctest *t = *state;
	const struct churn_case *cc = t->cc;
	struct ccfg c;
	char label[128];
	long unexpected;
	int r;

	if (!cc->tmpfs)
		stest_get(state); /* skips an unsupported data path or transport */
	memset(&c, 0, sizeof(c));
	c.sh = t->s.sh = shared_new();
	t->counts = mmap(NULL, sizeof(*t->counts), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t->counts == MAP_FAILED) {
		t->counts = NULL;
		fail_msg("mmap: %s", errname(errno));
	}
	c.cc = t->counts;
	c.seconds = churn_seconds();
	c.where_tmpfs = cc->tmpfs;
	snprintf(c.dir, sizeof(c.dir), "%s", cc->tmpfs ? t->tmpdir : t->s.f.p.mnt);
	snprintf(label, sizeof(label), "%s%s%s", cc->label,
		 cc->tmpfs ? "" : " datapath=", cc->tmpfs ? "" : t->s.f.p.active_datapath);
	c.seed = stress_seed(label);

	t->s.runner = runner_start(churn_runner, &c);
	r = stest_wait_runner(&t->s, c.seconds * 1000 + RUNNER_MS);
	print_counts(c.cc, label, c.seconds);
	unexpected = atomic_load(&c.sh->nerr);
	if (unexpected)
		fail_msg("%s: %ld step(s) gave an errno tmpfs never gives there (ESTALE %ld); "
			 "first: %s",
			 label, unexpected, atomic_load(&c.cc->estale), c.sh->first_err);
	if (r != 0)
		fail_msg("%s: the runner ended with %d", label, r);
	/* The control shows that every step can succeed in this workload (but getxattr: tmpfs has
	 * no user.poolfs.refs); on a pool, where files go with their last close, it is only said. */
	for (int s = 0; s < NSTEPS; s++) {
		if (atomic_load(&c.cc->n[s][0]) || (cc->tmpfs && s == S_XATTR))
			continue;
		if (cc->tmpfs)
			fail_msg("%s: no %s ever succeeded: the workload is not what it says",
				 label, step_name[s]);
		fprintf(stderr, "# %s: no %s succeeded in this run\n", label, step_name[s]);
	}

	remove_leftovers(c.dir);
	if (!cc->tmpfs) {
		struct pool_fixture *p = &t->s.f.p;
		char left[1024];
		int n = wait_dir_empty(p->mnt, GONE_MS, left, sizeof(left));

		if (n != 0)
			fail_msg("%s: %d entries still listed %d ms after every user was gone: %s",
				 label, n, GONE_MS, left);
		tu_backing_back_within(state, GONE_MS);
	}
}

#define CASE(nm, lbl, tmp, multi, o, ur)                                                           \
	{                                                                                          \
		.name = (nm), .label = (lbl), .tmpfs = (tmp), .multi_user = (multi), .opts = (o),  \
		.uring = (ur)                                                                      \
	}

static const struct churn_case cases[] = {
	CASE("tmpfs_control", "tmpfs (control)", 1, 0, NULL, 0),
	CASE("private_none_devfuse", "private autohold=none /dev/fuse", 0, 0,
	     "autohold=none,uring=off", 0),
	CASE("private_none_uring", "private autohold=none io_uring", 0, 0, "autohold=none,uring=on",
	     1),
	CASE("private_session_devfuse", "private autohold=session /dev/fuse", 0, 0, "uring=off", 0),
	CASE("private_session_uring", "private autohold=session io_uring", 0, 0, "uring=on", 1),
	CASE("multi_user_none_devfuse", "multi-user autohold=none /dev/fuse", 0, 1,
	     "autohold=none,uring=off", 0),
	CASE("multi_user_none_uring", "multi-user autohold=none io_uring", 0, 1,
	     "autohold=none,uring=on", 1),
	CASE("multi_user_session_devfuse", "multi-user autohold=session /dev/fuse", 0, 1,
	     "uring=off", 0),
	CASE("multi_user_session_uring", "multi-user autohold=session io_uring", 0, 1, "uring=on",
	     1),
};

int main(void)
{
#define T(i)                                                                                       \
	{                                                                                          \
		cases[i].name, test_churn, churn_setup, churn_teardown, (void *)&cases[i]          \
	}
	const struct CMUnitTest tests[] = {T(0), T(1), T(2), T(3), T(4), T(5), T(6), T(7), T(8)};
	const char *only = getenv("ITEST_FILTER"); /* one case (cmocka's wildcards), e.g. a soak */
#undef T

	if (only && only[0])
		cmocka_set_test_filter(only);

	return cmocka_run_group_tests_name("churn", tests, NULL, NULL);
}
