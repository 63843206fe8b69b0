/* Kill storm: dozens of processes open, map, fork and hold on a few names of a
 * pool mounted with autohold=none, and are killed with SIGKILL at random moments.
 *
 * Afterwards (every process dead and reaped, checked by a subreaper):
 *   - nothing is in use any more: every remaining entry has no open, no mapping, and no hold but
 *     pins (a worker killed between taking a pin and releasing it leaves one, by design); the test
 *     releases those pins, and then the pool lists nothing and the backing dir holds no file;
 *   - the daemon's open descriptors are exactly what they were before the storm, and its RSS is
 *     back near its baseline (taken after a warm-up storm, so allocator growth is in the baseline).
 * While it runs, no O_CREAT open fails, a name in use keeps its inode, and every process reads
 * back its own stamp through its mapping and its children's inherited mappings.
 *
 * "40 processes killed while mapping leave nothing behind" is its own test.
 * POOLFS_LONG=1 runs longer storms; POOLFS_SEED replays the random choices (not the timing).
 */
#include "stress.h"

#define NNAMES 4
#define MAX_W 64
#define MAX_KEPT 3
#define RSS_SLACK_KB (8 * 1024)

/* meson passes its b_sanitize option ("none", "address,undefined", ...). */
static int daemon_sanitized(void)
{
	const char *s = getenv("POOLFS_SANITIZE");

	return s && *s && strcmp(s, "none") != 0;
}

enum {
	C_ITERS,
	C_CREAT_FAIL,
	C_CREAT_ENOENT,
	C_FORKS,
	C_PROCESS_HOLDS,
	C_PINS,
	C_PIN_RELEASES,
	C_CHILD_HOLDS,
	C_KEPT_MAPS,
	C_KILLS,
	C_STARTED,
	C_READY,
};

struct scfg {
	struct shared *sh;
	char mnt[PATH_MAX];
	int nworkers;
	int kills;	 /* storm: workers killed (and replaced) before the final kill */
	unsigned gap_us; /* storm: at most this long between two kills */
	uint64_t seed;
	int up[2], down[2]; /* mappers: runner -> test "all mapped", test -> runner "kill" */
	int ready[2];	    /* mappers -> runner */
};

struct sworker {
	const struct scfg *c;
	int slot;
	unsigned gen; /* how many workers were started before: different choices */
};

static void name_path(const char *mnt, const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", mnt, name);

	if (n < 0 || (size_t)n >= len)
		abort(); /* the mountpoint is a short temporary path */
}

static size_t file_size(void)
{
	return (size_t)MAX_W * PAGE; /* worker slot i owns page i of every shared file */
}

static int same_inode(struct shared *sh, const char *path, ino_t ino)
{
	struct stat st;

	if (stat(path, &st) == -1) {
		sh_err(sh, "stat %s while it is in use: %s", path, errname(errno));
		return -1;
	}
	if (st.st_ino != ino) {
		sh_err(sh, "%s names inode %lu, but the file in use is inode %lu", path,
		       (unsigned long)st.st_ino, (unsigned long)ino);
		return -1;
	}
	return 0;
}

/* Open name with O_CREAT and make it file_size() long: the fd, or -1 (recorded). */
static int open_shared(struct shared *sh, const char *path, ino_t *ino)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0) {
		int e = errno;

		sh_inc(sh, C_CREAT_FAIL);
		if (e == ENOENT)
			sh_inc(sh, C_CREAT_ENOENT);
		sh_err(sh, "open(%s, O_CREAT) failed: %s", path, errname(e));
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		sh_err(sh, "fstat %s: %s", path, errname(errno));
		close(fd);
		return -1;
	}
	if ((size_t)st.st_size < file_size() && ftruncate(fd, (off_t)file_size()) == -1) {
		sh_err(sh, "ftruncate %s: %s", path, errname(errno));
		close(fd);
		return -1;
	}
	*ino = st.st_ino;
	if (same_inode(sh, path, st.st_ino) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- the storm ---- */

enum { KID_WAITED, KID_KILLED, KID_LINGERS, KID_MODES };

/* A storm worker's child: verify the stamp through the inherited mapping; a lingering child also
 * takes a "process" hold of its own and lives a little longer than needed. */
static int storm_child(const unsigned char *region, uint32_t seed, off_t off, const char *path,
		       int mode, int say_fd, uint64_t *rs)
{
	if (pat_check(region, PAGE, seed, (uint64_t)off) >= 0)
		return 2;
	if (mode != KID_LINGERS)
		return 0;
	if (write(say_fd, "v", 1) != 1)
		return 4;
	if (rng_below(rs, 2) && hold_scope(path, POOLFS_SCOPE_WORD_PROCESS) == -1)
		return 3;
	sleep_us(rng_below(rs, 5000));
	return 0;
}

static const char *storm_child_result(int r)
{
	switch (r) {
	case 2:
		return "read a wrong stamp through its inherited mapping";
	case 3:
		return "could not take a process hold on a file it had mapped";
	case 4:
		return "lost its pipe";
	default:
		return "ended unexpectedly";
	}
}

static int read_byte_bounded(int fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	char b;
	int r;

	do
		r = poll(&pfd, 1, timeout_ms);
	while (r == -1 && errno == EINTR);
	if (r <= 0)
		return -ETIMEDOUT;
	return read(fd, &b, 1) == 1 ? 0 : -EPIPE;
}

static int storm_worker(void *arg)
{
	const struct sworker *w = arg;
	const struct scfg *c = w->c;
	struct shared *sh = c->sh;
	uint64_t rs = c->seed ^
		      (((uint64_t)w->gen << 32) + (uint64_t)w->slot + 1) * 0x9E3779B97F4A7C15ull;
	size_t size = file_size();
	off_t region = (off_t)w->slot * PAGE;
	unsigned char *kept[MAX_KEPT];
	unsigned char buf[PAGE];
	int nkept = 0;

	sh_inc(sh, C_STARTED);
	for (unsigned it = 0;; it++) {
		char path[PATH_MAX], name[16];
		uint32_t s1 = stamp_seed((unsigned)w->slot, it, 1);
		uint32_t s2 = stamp_seed((unsigned)w->slot, it, 2);
		unsigned hold = rng_below(&rs, 4);
		int mode = (int)rng_below(&rs, KID_MODES);
		unsigned char *m;
		int say[2] = {-1, -1};
		pid_t kid;
		int fd, status, r;
		ino_t ino;

		/* Children that lingered: they must have ended well. */
		while (waitpid(-1, &status, WNOHANG) > 0)
			if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
				sh_err(sh, "worker %d: a lingering child %s (exit %d)", w->slot,
				       storm_child_result(WEXITSTATUS(status)),
				       WEXITSTATUS(status));

		snprintf(name, sizeof(name), "k%u", rng_below(&rs, NNAMES));
		name_path(c->mnt, name, path, sizeof(path));
		fd = open_shared(sh, path, &ino);
		if (fd < 0) {
			sleep_us(1000);
			continue;
		}
		if ((hold & 1) && hold_scope(path, POOLFS_SCOPE_WORD_PROCESS) == -1)
			sh_err(sh, "setxattr %s hold=process while open: %s", name, errname(errno));
		else if (hold & 1)
			sh_inc(sh, C_PROCESS_HOLDS);
		if ((hold & 2) && hold_scope(path, POOLFS_SCOPE_WORD_PIN) == -1)
			sh_err(sh, "setxattr %s hold=pin while open: %s", name, errname(errno));
		else if (hold & 2)
			sh_inc(sh, C_PINS);

		pat_fill(buf, PAGE, s1, (uint64_t)region);
		if (pwrite_all(fd, buf, PAGE, region) != PAGE) {
			sh_err(sh, "pwrite %s: %s", name, errname(errno));
			close(fd);
			continue;
		}
		m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			sh_err(sh, "mmap %s: %s", name, errname(errno));
			close(fd);
			continue;
		}
		if (pat_check(m + region, PAGE, s1, (uint64_t)region) >= 0)
			sh_err(sh,
			       "worker %d: %s page %d through the mapping differs from what pwrite "
			       "wrote",
			       w->slot, name, w->slot);
		pat_fill(m + region, PAGE, s2, (uint64_t)region);

		if (mode == KID_LINGERS && pipe2(say, O_CLOEXEC) == -1) {
			sh_err(sh, "pipe: %s", errname(errno));
			mode = KID_WAITED;
		}
		fflush(NULL);
		kid = fork();
		if (kid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(fd);
			_exit(storm_child(m + region, s2, region, path, mode, say[1], &rs));
		}
		if (say[1] >= 0)
			close(say[1]);
		if (kid < 0) {
			sh_err(sh, "fork: %s", errname(errno));
		} else {
			sh_inc(sh, C_FORKS);
			switch (mode) {
			case KID_WAITED:
				r = tu_reap(kid, 60000);
				if (r != 0)
					sh_err(sh, "worker %d: its child on %s %s (exit %d)",
					       w->slot, name, storm_child_result(r), r);
				break;
			case KID_KILLED:
				sleep_us(rng_below(&rs, 1000));
				kill(kid, SIGKILL);
				r = tu_reap(kid, 60000);
				if (r != 0 && r != 128 + SIGKILL)
					sh_err(sh, "worker %d: its child on %s %s (exit %d)",
					       w->slot, name, storm_child_result(r), r);
				break;
			default: /* KID_LINGERS: reaped by a later iteration */
				r = read_byte_bounded(say[0], 60000);
				if (r < 0)
					sh_err(sh,
					       "worker %d: its lingering child on %s said nothing "
					       "(%s)",
					       w->slot, name, errname(-r));
				sh_inc(sh, C_CHILD_HOLDS);
				break;
			}
		}
		if (say[0] >= 0)
			close(say[0]);
		if (pat_check(m + region, PAGE, s2, (uint64_t)region) >= 0)
			sh_err(sh, "worker %d: %s page %d changed under its mapping", w->slot, name,
			       w->slot);
		same_inode(sh, path, ino);
		/* Release the pin most of the time (while the file is open: the name must
		 * exist); ENODATA when another worker's removexattr took our holds already. */
		if ((hold & 2) && rng_below(&rs, 4) != 0) {
			if (removexattr(path, POOLFS_XATTR_HOLD) == -1 && errno != ENODATA)
				sh_err(sh, "removexattr %s hold while open: %s", name,
				       errname(errno));
			else
				sh_inc(sh, C_PIN_RELEASES);
		}
		if (nkept < MAX_KEPT && rng_below(&rs, 4) == 0) {
			kept[nkept++] = m; /* lives on after close, until unmapped or killed */
			sh_inc(sh, C_KEPT_MAPS);
		} else {
			munmap(m, size);
		}
		if (nkept > 0 && rng_below(&rs, 4) == 0)
			munmap(kept[--nkept], size);
		close(fd);
		sh_inc(sh, C_ITERS);
	}
	return 0;
}

/* The workers a runner starts: their arguments and pids, an order to kill them in, the process
 * group that holds them (see group_new) and the runner's random choices. */
struct crowd {
	struct sworker wa[MAX_W];
	pid_t pid[MAX_W];
	int order[MAX_W];
	pid_t grp;
	uint64_t rs;		  /* the runner's random choices */
	int (*worker)(void *arg); /* what each of them runs */
	unsigned started;	  /* how many were started: the next one's gen */
};

/* Start the crowd's worker `slot` (again, after a kill). */
static void crowd_start(struct crowd *cw, const struct scfg *c, int slot)
{
	cw->wa[slot] = (struct sworker){.c = c, .slot = slot, .gen = cw->started++};
	cw->pid[slot] = spawn_child(cw->grp, 1, cw->worker, &cw->wa[slot]);
}

/* A crowd of c->nworkers running `worker` in a group of their own, its choices seeded from the
 * test's seed and the runner's salt: 0, or -1 (said in the shared area) if the group's holder
 * cannot be forked. */
static int crowd_init(struct crowd *cw, const struct scfg *c, uint64_t salt,
		      int (*worker)(void *arg))
{
	cw->rs = c->seed ^ salt;
	cw->worker = worker;
	cw->started = 0;
	cw->grp = group_new();
	if (cw->grp < 0) {
		sh_err(c->sh, "runner: fork of the group holder: %s", errname(errno));
		return -1;
	}
	for (int i = 0; i < c->nworkers; i++)
		crowd_start(cw, c, i);
	return 0;
}

static int storm_runner(void *arg)
{
	const struct scfg *c = arg;
	struct shared *sh = c->sh;
	struct crowd cw;

	if (crowd_init(&cw, c, 0x5157AB1Eull, storm_worker) < 0)
		return 1;
	for (int k = 0; k < c->kills; k++) {
		int i = (int)rng_below(&cw.rs, (unsigned)c->nworkers);
		int status, r;
		pid_t z;

		sleep_us(rng_below(&cw.rs, c->gap_us));
		kill(cw.pid[i], SIGKILL);
		r = tu_reap(cw.pid[i], 60000);
		if (r != 128 + SIGKILL)
			sh_err(sh, "storm worker %d ended with %d before it was killed", i, r);
		sh_inc(sh, C_KILLS);
		crowd_start(&cw, c, i);
		/* Orphaned grandchildren come to us; a worker found here died on its own. */
		while ((z = waitpid(-1, &status, WNOHANG)) > 0)
			for (int j = 0; j < c->nworkers; j++)
				if (cw.pid[j] == z) {
					sh_err(sh, "storm worker %d died on its own (status 0x%x)",
					       j, status);
					crowd_start(&cw, c, j);
				}
	}
	/* The last ones, in random order. */
	rng_shuffle(&cw.rs, cw.order, c->nworkers);
	for (int i = 0; i < c->nworkers; i++) {
		sleep_us(rng_below(&cw.rs, c->gap_us));
		kill(cw.pid[cw.order[i]], SIGKILL);
		sh_inc(sh, C_KILLS);
	}
	for (int i = 0; i < c->nworkers; i++)
		tu_reap(cw.pid[i], 60000);
	runner_kill_all(cw.grp);
	return 0;
}

/* ---- after the storm ---- */

#define MAX_LEFT 256

/* Every process is gone: wait until what is left is in use by nothing but pins, release the
 * pins (as their owner), and require an empty pool and backing dir. Returns the pins released. */
static int settle_and_unpin(struct pool_fixture *p)
{
	long long deadline = pool_now_ms() + GONE_MS;
	char names[MAX_LEFT][NAME_MAX + 1];
	struct refs r;
	char left[2048];
	int n, pinned = 0, ret;

	for (;;) {
		DIR *d = opendir(p->mnt);
		struct dirent *e;
		char busy[2048] = "";

		if (!d)
			fail_msg("opendir %s: %s", p->mnt, errname(errno));
		n = 0;
		while ((e = readdir(d)) && n < MAX_LEFT) {
			char path[PATH_MAX];

			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			name_path(p->mnt, e->d_name, path, sizeof(path));
			if (refs_get(path, &r) < 0)
				continue; /* just removed */
			if (r.opens || r.mapped || r.others) {
				int k = snprintf(busy, sizeof(busy), "%s: %s", e->d_name, r.text);

				if (k < 0 || (size_t)k >= sizeof(busy))
					busy[sizeof(busy) - 2] = '~';
				for (char *q = busy; *q; q++)
					if (*q == '\n')
						*q = ' ';
			}
			snprintf(names[n++], NAME_MAX + 1, "%s", e->d_name);
		}
		closedir(d);
		if (!busy[0])
			break;
		if (pool_now_ms() >= deadline)
			fail_msg("%d ms after every process died, an entry is still in use by more "
				 "than a pin: %s",
				 GONE_MS, busy);
		sleep_us(20000);
	}
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];

		name_path(p->mnt, names[i], path, sizeof(path));
		if (refs_get(path, &r) < 0 || !r.pins)
			continue;
		if (removexattr(path, POOLFS_XATTR_HOLD) == -1)
			fail_msg("removexattr %s (pinned by a killed worker): %s", names[i],
				 errname(errno));
		pinned++;
	}
	ret = wait_dir_empty(p->mnt, GONE_MS, left, sizeof(left));
	if (ret != 0)
		fail_msg("%d entries still listed %d ms after every process died and the pins "
			 "were released: %s",
			 ret, GONE_MS, left);
	ret = pool_wait_backing_files(p, 0, GONE_MS);
	if (ret != 0) {
		static const char *const knames[] = {"k0", "k1", "k2", "k3", "m0",
						     "m1", "m2", "m3", NULL};
		char why[2048];
		int left_files = pool_backing_files(p);

		pool_dump_log(p); /* a warning of the notify thread would say why */
		fail_msg("the backing dir still holds %d files %d ms after the pool emptied; %s",
			 left_files, GONE_MS, backing_leftover_cause(p, knames, why, sizeof(why)));
	}
	return pinned;
}

static void run_storm(struct stest *t, struct scfg *c, const char *what)
{
	long long t0 = pool_now_ms();
	int r;

	memset(c->sh, 0, sizeof(*c->sh));
	t->runner = runner_start(storm_runner, c);
	r = stest_wait_runner(t, RUNNER_MS);
	fprintf(stderr,
		"# %s: datapath=%s workers=%d started=%ld killed=%ld iterations=%ld "
		"O_CREAT failures=%ld (ENOENT %ld) children=%ld lingering=%ld process holds=%ld "
		"pins=%ld released=%ld kept mappings=%ld in %lld ms\n",
		what, t->f.p.active_datapath, c->nworkers, sh_get(c->sh, C_STARTED),
		sh_get(c->sh, C_KILLS), sh_get(c->sh, C_ITERS), sh_get(c->sh, C_CREAT_FAIL),
		sh_get(c->sh, C_CREAT_ENOENT), sh_get(c->sh, C_FORKS), sh_get(c->sh, C_CHILD_HOLDS),
		sh_get(c->sh, C_PROCESS_HOLDS), sh_get(c->sh, C_PINS),
		sh_get(c->sh, C_PIN_RELEASES), sh_get(c->sh, C_KEPT_MAPS), pool_now_ms() - t0);
	if (r != 0)
		fail_msg("%s: the runner ended with %d", what, r);
	if (sh_get(c->sh, C_CREAT_FAIL))
		fail_msg("%s: %ld O_CREAT opens failed (%ld with ENOENT); first error: %s", what,
			 sh_get(c->sh, C_CREAT_FAIL), sh_get(c->sh, C_CREAT_ENOENT),
			 c->sh->first_err);
	SH_NO_ERRORS(c->sh);
	assert_int_equal(sh_get(c->sh, C_KILLS), c->kills + c->nworkers);
}

static int setup_none(void **state)
{
	return stest_setup(state, "autohold=none");
}

static void test_killstorm_leaves_nothing(void **state)
{
	struct stest *t = stest_get(state);
	struct pool_fixture *p = &t->f.p;
	int lng = stress_long();
	struct scfg c;
	long rss0, rss1 = 0;
	int fd0, fd1 = 0, pins;
	long long deadline;

	memset(&c, 0, sizeof(c));
	c.sh = t->sh = shared_new();
	snprintf(c.mnt, sizeof(c.mnt), "%s", p->mnt);
	c.nworkers = lng ? MAX_W : 48;
	c.gap_us = 8000;
	c.seed = stress_seed("killstorm_leaves_nothing");

	/* Warm-up: the same storm, smaller; its growth (allocator arenas, threads, lazily
	 * opened descriptors) belongs to the baseline. */
	c.kills = 100;
	run_storm(t, &c, "warm-up storm");
	pins = settle_and_unpin(p);
	fprintf(stderr, "# warm-up: released %d pins left by killed workers\n", pins);
	fd0 = proc_fd_count(p->daemon_pid);
	rss0 = proc_rss_kb(p->daemon_pid);
	assert_true(fd0 > 0);
	assert_true(rss0 > 0);

	c.kills = lng ? 5000 : 600;
	c.seed ^= 0xF00Dull;
	run_storm(t, &c, "storm");
	assert_true(sh_get(c.sh, C_ITERS) > 0);
	assert_true(sh_get(c.sh, C_FORKS) > 0);
	assert_true(sh_get(c.sh, C_PROCESS_HOLDS) > 0);
	assert_true(sh_get(c.sh, C_PINS) > 0);
	assert_true(sh_get(c.sh, C_KEPT_MAPS) > 0);
	pins = settle_and_unpin(p);
	fprintf(stderr, "# storm: released %d pins left by killed workers\n", pins);

	/* Descriptors: exactly back (pidfds of holds, backing files, passthrough registrations
	 * are all closed once their entries are gone). */
	deadline = pool_now_ms() + GONE_MS;
	for (;;) {
		fd1 = proc_fd_count(p->daemon_pid);
		if (fd1 == fd0 || pool_now_ms() >= deadline)
			break;
		sleep_us(20000);
	}
	/* RSS: back near the baseline. */
	deadline = pool_now_ms() + 5000;
	for (;;) {
		rss1 = proc_rss_kb(p->daemon_pid);
		if (rss1 <= rss0 + RSS_SLACK_KB || pool_now_ms() >= deadline)
			break;
		sleep_us(50000);
	}
	fprintf(stderr, "# daemon %d: descriptors %d -> %d, VmRSS %ld kB -> %ld kB\n",
		(int)p->daemon_pid, fd0, fd1, rss0, rss1);
	if (fd1 != fd0) {
		proc_fd_dump(p->daemon_pid, "after the storm");
		fail_msg("the daemon has %d open descriptors after the storm, %d before", fd1, fd0);
	}
	if (p->valgrind)
		fprintf(stderr, "# under valgrind: RSS not compared\n");
	else if (daemon_sanitized())
		/* ASan's quarantine keeps freed memory on purpose; its LeakSanitizer checks the
		 * daemon for leaks at exit instead (a leak fails the unmount's exit-status check). */
		fprintf(stderr, "# daemon built with sanitizers: RSS not compared\n");
	else if (rss1 > rss0 + RSS_SLACK_KB)
		fail_msg(
			"the daemon's VmRSS is %ld kB after the storm, %ld kB before (slack %d kB)",
			rss1, rss0, RSS_SLACK_KB);
	assert_true(pool_daemon_alive(p));
}

/* ---- 40 processes killed while mapping ---- */

enum { MAP_FD_AND_MAP, MAP_ONLY, MAP_IN_CHILD, MAP_MODES };

static void mapper_name(int i, char *buf, size_t len)
{
	if (i % 2 == 0)
		snprintf(buf, len, "m%d", (i / 2) % NNAMES);
	else
		snprintf(buf, len, "own%02d", i);
}

/* Keep touching our page: read the stamp, write it again (a write fault on a shared mapping),
 * until killed. */
static int mapper_touch(struct shared *sh, unsigned char *region, uint32_t seed, off_t off, int i)
{
	for (;;) {
		if (pat_check(region, PAGE, seed, (uint64_t)off) >= 0) {
			sh_err(sh, "mapper %d: its page changed while it had it mapped", i);
			return 2;
		}
		pat_fill(region, PAGE, seed, (uint64_t)off);
		sleep_us(500);
	}
}

static int mapper(void *arg)
{
	const struct sworker *w = arg;
	const struct scfg *c = w->c;
	struct shared *sh = c->sh;
	int i = w->slot;
	off_t region = (off_t)i * PAGE;
	uint32_t seed = stamp_seed((unsigned)i, 0, 9);
	char name[16], path[PATH_MAX];
	unsigned char *m;
	ino_t ino;
	int fd, g[2];
	pid_t kid;

	mapper_name(i, name, sizeof(name));
	name_path(c->mnt, name, path, sizeof(path));
	fd = open_shared(sh, path, &ino);
	if (fd < 0)
		return 1;
	m = mmap(NULL, file_size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		sh_err(sh, "mapper %d: mmap %s: %s", i, name, errname(errno));
		return 1;
	}
	pat_fill(m + region, PAGE, seed, (uint64_t)region);
	switch (i % MAP_MODES) {
	case MAP_FD_AND_MAP:
		break;
	case MAP_ONLY:
		close(fd);
		break;
	default: /* MAP_IN_CHILD: only a child's inherited mapping uses the file */
		if (pipe(g) == -1)
			return 1;
		fflush(NULL);
		kid = fork();
		if (kid < 0)
			return 1;
		if (kid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(fd);
			close(g[0]);
			if (write(g[1], "c", 1) != 1)
				_exit(1);
			_exit(mapper_touch(sh, m + region, seed, region, i));
		}
		close(g[1]);
		if (read_byte_bounded(g[0], 60000) < 0) {
			sh_err(sh, "mapper %d: its child never got going", i);
			return 1;
		}
		munmap(m, file_size());
		close(fd);
		m = NULL;
		break;
	}
	sh_inc(sh, C_READY);
	if (write(c->ready[1], "r", 1) != 1)
		return 1;
	if (m)
		return mapper_touch(sh, m + region, seed, region, i);
	/* MAP_IN_CHILD: the child touches the page; this one waits to be killed */
	for (;;)
		pause();
}

static int mappers_runner(void *arg)
{
	const struct scfg *c = arg;
	struct shared *sh = c->sh;
	struct crowd cw;
	int got = 0;

	if (crowd_init(&cw, c, 0xDEAD40ull, mapper) < 0)
		return 1;
	while (got < c->nworkers && read_byte_bounded(c->ready[0], 60000) == 0)
		got++;
	if (got != c->nworkers) {
		sh_err(sh, "only %d of %d mappers got their mapping", got, c->nworkers);
		runner_kill_all(cw.grp);
		return 1;
	}
	if (write(c->up[1], "u", 1) != 1 || read_byte_bounded(c->down[0], 120000) < 0) {
		runner_kill_all(cw.grp);
		return 1;
	}
	rng_shuffle(&cw.rs, cw.order, c->nworkers);
	for (int i = 0; i < c->nworkers; i++) {
		int r;

		sleep_us(rng_below(&cw.rs, 2000));
		kill(cw.pid[cw.order[i]], SIGKILL);
		r = tu_reap(cw.pid[cw.order[i]], 60000);
		if (r != 128 + SIGKILL)
			sh_err(sh, "mapper %d ended with %d before it was killed", cw.order[i], r);
		sh_inc(sh, C_KILLS);
	}
	runner_kill_all(cw.grp);
	return 0;
}

static void test_forty_killed_while_mapping_leave_nothing(void **state)
{
	struct stest *t = stest_get(state);
	struct pool_fixture *p = &t->f.p;
	int lng = stress_long();
	struct scfg c;
	char left[2048];
	int r, names = 0;

	memset(&c, 0, sizeof(c));
	c.sh = t->sh = shared_new();
	snprintf(c.mnt, sizeof(c.mnt), "%s", p->mnt);
	c.nworkers = lng ? MAX_W : 40;
	c.seed = stress_seed("forty_killed_while_mapping_leave_nothing");
	CHECK(pipe2(c.up, O_CLOEXEC));
	CHECK(pipe2(c.down, O_CLOEXEC));
	CHECK(pipe(c.ready));
	for (int i = 0; i < c.nworkers; i++)
		if (i % 2 || i / 2 < NNAMES)
			names++;

	t->runner = runner_start(mappers_runner, &c);
	close(c.up[1]);
	close(c.down[0]);
	close(c.ready[1]);
	close(c.ready[0]);
	r = read_byte_bounded(c.up[0], 120000);
	if (r < 0)
		fail_msg("the mappers did not all get going (%s); first error: %s", errname(-r),
			 c.sh->first_err);
	/* All mapped (a third only through a child's inherited mapping, a third with the
	 * descriptor closed): every name is there. */
	r = list_dir(p->mnt, left, sizeof(left));
	if (r != names)
		fail_msg("%d entries listed while %d files are mapped: %s", r, names, left);
	r = pool_backing_files(p);
	if (r != names)
		fail_msg("%d backing files while %d files are mapped", r, names);

	CHECK(write(c.down[1], "k", 1));
	r = stest_wait_runner(t, RUNNER_MS);
	close(c.up[0]);
	close(c.down[1]);
	fprintf(stderr, "# datapath=%s: %ld mappers on %d names killed\n", p->active_datapath,
		sh_get(c.sh, C_KILLS), names);
	assert_int_equal(r, 0);
	SH_NO_ERRORS(c.sh);
	assert_int_equal(sh_get(c.sh, C_KILLS), c.nworkers);

	r = wait_dir_empty(p->mnt, GONE_MS, left, sizeof(left));
	if (r != 0)
		fail_msg("%d entries still listed %d ms after the %d mappers were killed: %s", r,
			 GONE_MS, c.nworkers, left);
	r = pool_wait_backing_files(p, 0, GONE_MS);
	if (r != 0)
		fail_msg("the backing dir still holds %d files %d ms after the mappers were killed",
			 pool_backing_files(p), GONE_MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_killstorm_leaves_nothing, setup_none,
						stest_teardown),
		cmocka_unit_test_setup_teardown(test_forty_killed_while_mapping_leave_nothing,
						setup_none, stest_teardown),
	};

	return cmocka_run_group_tests_name("killstorm", tests, NULL, NULL);
}
