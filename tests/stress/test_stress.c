/* Stress: many processes open, map, fork, unmap and kill children on a few
 * shared names of a pool mounted with autohold=none, for a bounded number of iterations.
 *
 * Checked, in every process, all the time:
 *   - no O_CREAT open ever fails (the ENOENT of a stale kernel name is counted separately);
 *   - a name that a process (or a child, through an inherited mapping only) uses keeps naming
 *     the same inode: no file is removed or replaced while used;
 *   - data written by a process into its own page of a shared file reads back unchanged through
 *     its mapping, through pread, and through the mapping inherited by its child;
 * and at the end, once every process is reaped: the pool lists nothing and the backing dir holds
 * no file (none outlives its use).
 *
 * Tests: hammer_shared_names (16 processes on 4 names), no_file_removed_while_used (the same
 * with 4 "keepers" that use one file each the whole time: by mapping only, by descriptor only,
 * by a mapping inherited by an orphaned grandchild only, by a "process" hold only between opens)
 * and create_churn_never_fails (8 processes open(O_CREAT)/write/close 2 names as fast as they
 * can, so names are removed and re-created under concurrent lookups and opens all the time).
 *
 * POOLFS_LONG=1 runs more processes for many more iterations; POOLFS_SEED replays the choices.
 */
#include "stress.h"

#define NNAMES 4
#define MAX_WORKERS 64
#define NKEEPERS 4
#define KEEP_LEN (128 * 1024)

enum {
	C_ITERS,
	C_CREAT_FAIL,
	C_CREAT_ENOENT,
	C_FORKS,
	C_CHILD_KILLED,
	C_CHILD_ONLY,
	C_FRESH, /* an O_CREAT open that found a new, empty file: a removal happened before */
	C_KEEP0, /* C_KEEP0 + i: verifications by keeper i */
};

struct hcfg {
	struct shared *sh;
	char mnt[PATH_MAX];
	int nworkers;
	int iters;
	int nslots;  /* the shared files are nslots pages; worker i owns page i */
	int keepers; /* the "no file is removed while used" variant */
	uint64_t seed;
};

struct hworker {
	const struct hcfg *c;
	int slot;
	int ready_fd; /* keepers: one byte once their file is set up */
};

static void name_path(const struct hcfg *c, const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", c->mnt, name);

	if (n < 0 || (size_t)n >= len)
		abort(); /* the mountpoint is a short temporary path */
}

/* ---- a child reading through the mapping it inherited ---- */

enum child_mode {
	CHILD_VERIFY_EXIT,    /* verify once, exit */
	CHILD_VERIFY_LOOP,    /* verify until killed */
	CHILD_AFTER_UNMAP,    /* wait until the parent unmapped and closed, verify, exit */
	CHILD_KILLED_ANYTIME, /* verify once, exit, but the parent kills it at a random moment */
	CHILD_MODES
};

enum {
	CHILD_OK = 0,
	CHILD_BAD_DATA = 2,
	CHILD_NAME_GONE = 3,
	CHILD_NAME_REPLACED = 4,
	CHILD_STAT_ERROR = 5,
	CHILD_PIPE = 6,
};

static int child_check(const unsigned char *region, uint32_t seed, off_t off, const char *path,
		       ino_t ino, int mode, int go_fd)
{
	if (mode == CHILD_AFTER_UNMAP) {
		char b;

		if (read(go_fd, &b, 1) != 1)
			return CHILD_PIPE;
	}
	do {
		struct stat st;

		if (pat_check(region, PAGE, seed, (uint64_t)off) >= 0)
			return CHILD_BAD_DATA;
		if (stat(path, &st) == -1)
			return errno == ENOENT ? CHILD_NAME_GONE : CHILD_STAT_ERROR;
		if (st.st_ino != ino)
			return CHILD_NAME_REPLACED;
	} while (mode == CHILD_VERIFY_LOOP);
	return CHILD_OK;
}

static const char *child_result(int r)
{
	static const char *const results[] = {
		[CHILD_BAD_DATA] = "read a wrong stamp through its inherited mapping",
		[CHILD_NAME_GONE] = "found the name gone (ENOENT) while its mapping used the file",
		[CHILD_NAME_REPLACED] =
			"found the name on another inode while its mapping used the file",
		[CHILD_STAT_ERROR] = "could not stat the name",
		[CHILD_PIPE] = "lost its pipe",
	};

	return tu_word(results, ARRAY_SIZE(results), r, "ended unexpectedly");
}

/* ---- a hammering worker ---- */

/* The name must still be the inode we use. */
static int same_inode(struct shared *sh, const char *path, ino_t ino, const char *when)
{
	struct stat st;

	if (stat(path, &st) == -1) {
		sh_err(sh, "%s: stat %s while it is in use: %s", when, path, errname(errno));
		return -1;
	}
	if (st.st_ino != ino) {
		sh_err(sh, "%s: %s names inode %lu, but the file in use is inode %lu", when, path,
		       (unsigned long)st.st_ino, (unsigned long)ino);
		return -1;
	}
	return 0;
}

/* Open (O_CREAT) name in c's pool, path set to its full path, counting the try in counter and a
 * failure in C_CREAT_FAIL (and C_CREAT_ENOENT): the descriptor, or -errno. */
static int open_counted(const struct hcfg *c, const char *name, char *path, size_t len, int counter)
{
	int fd;

	name_path(c, name, path, len);
	sh_inc(c->sh, counter);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	fd = -errno;
	sh_inc(c->sh, C_CREAT_FAIL);
	if (fd == -ENOENT)
		sh_inc(c->sh, C_CREAT_ENOENT);
	return fd;
}

/* Kill the child kid after a random short while if kill is set, and reap it: its result, where
 * a SIGKILL (counted) is a good end. */
static int reap_maybe_killed(struct shared *sh, uint64_t *rs, pid_t kid, int kill_it)
{
	int r;

	if (kill_it) {
		sleep_us(rng_below(rs, 1000));
		kill(kid, SIGKILL);
	}
	r = tu_reap(kid, 60000);
	if (r == 128 + SIGKILL) {
		sh_inc(sh, C_CHILD_KILLED);
		r = CHILD_OK;
	}
	return r;
}

/* Does worker w's page (at `page`, its region of the mapping) differ from seed's pattern? Then
 * the error says how, at which byte. */
static bool page_differs(const struct hworker *w, int it, const char *name,
			 const unsigned char *page, uint32_t seed, const char *how)
{
	off_t region = (off_t)w->slot * PAGE;
	long bad_at = pat_check(page, PAGE, seed, (uint64_t)region);

	if (bad_at < 0)
		return false;
	sh_err(w->c->sh, "worker %d iteration %d: %s page %d %s, at byte %ld", w->slot, it, name,
	       w->slot, how, bad_at);
	return true;
}

static int hammer_worker(void *arg)
{
	const struct hworker *w = arg;
	const struct hcfg *c = w->c;
	struct shared *sh = c->sh;
	uint64_t rs = c->seed ^ (0xABCD0000ull + (uint64_t)w->slot) * 0x9E3779B97F4A7C15ull;
	size_t size = (size_t)c->nslots * PAGE;
	off_t region = (off_t)w->slot * PAGE;
	unsigned char buf[PAGE], back[PAGE];
	int bad = 0;

	for (int it = 0; it < c->iters; it++) {
		char path[PATH_MAX], name[32];
		uint32_t s1 = stamp_seed((unsigned)w->slot, (unsigned)it, 1);
		uint32_t s2 = stamp_seed((unsigned)w->slot, (unsigned)it, 2);
		int mode = (int)rng_below(&rs, CHILD_MODES);
		unsigned char *m = MAP_FAILED;
		int go[2] = {-1, -1};
		struct stat st;
		long bad_at = -1;
		pid_t kid;
		int fd, r;

		snprintf(name, sizeof(name), "s%u", rng_below(&rs, NNAMES));
		fd = open_counted(c, name, path, sizeof(path), C_ITERS);
		if (fd < 0) {
			int e = -fd;

			sh_err(sh, "worker %d iteration %d: open(%s, O_CREAT) failed: %s", w->slot,
			       it, name, errname(e));
			bad = 1;
			continue;
		}
		if (fstat(fd, &st) == -1) {
			sh_err(sh, "fstat %s: %s", name, errname(errno));
			bad = 1;
			goto next;
		}
		if (st.st_size == 0)
			sh_inc(sh, C_FRESH);
		if ((size_t)st.st_size < size && ftruncate(fd, (off_t)size) == -1) {
			sh_err(sh, "ftruncate %s to %zu: %s", name, size, errname(errno));
			bad = 1;
			goto next;
		}
		if (same_inode(sh, path, st.st_ino, "after open") < 0) {
			bad = 1;
			goto next;
		}
		pat_fill(buf, PAGE, s1, (uint64_t)region);
		if (pwrite_all(fd, buf, PAGE, region) != PAGE) {
			sh_err(sh, "pwrite %s: %s", name, errname(errno));
			bad = 1;
			goto next;
		}
		m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			sh_err(sh, "mmap %s: %s", name, errname(errno));
			bad = 1;
			goto next;
		}
		if (page_differs(w, it, name, m + region, s1,
				 "read through the mapping differs from what pwrite wrote")) {
			bad = 1;
			goto next;
		}
		pat_fill(m + region, PAGE, s2, (uint64_t)region);
		if (pread_all(fd, back, PAGE, region) != PAGE ||
		    (bad_at = pat_check(back, PAGE, s2, (uint64_t)region)) >= 0) {
			sh_err(sh,
			       "worker %d iteration %d: %s page %d read by pread differs from what "
			       "the mapping wrote (%s, byte %ld)",
			       w->slot, it, name, w->slot, errname(errno), bad_at);
			bad = 1;
			goto next;
		}

		if (mode == CHILD_AFTER_UNMAP && pipe2(go, O_CLOEXEC) == -1) {
			sh_err(sh, "pipe: %s", errname(errno));
			bad = 1;
			goto next;
		}
		fflush(NULL);
		kid = fork();
		if (kid == -1) {
			sh_err(sh, "fork: %s", errname(errno));
			bad = 1;
			goto next;
		}
		if (kid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(fd); /* the child uses the file through its inherited mapping only */
			if (go[1] >= 0)
				close(go[1]);
			_exit(child_check(m + region, s2, region, path, st.st_ino, mode, go[0]));
		}
		sh_inc(sh, C_FORKS);
		if (go[0] >= 0)
			close(go[0]);

		switch (mode) {
		case CHILD_VERIFY_EXIT:
			r = tu_reap(kid, 60000);
			break;
		case CHILD_VERIFY_LOOP:
			sleep_us(rng_below(&rs, 2000));
			kill(kid, SIGKILL);
			r = tu_reap(kid, 60000);
			if (r == 128 + SIGKILL)
				sh_inc(sh, C_CHILD_KILLED);
			else if (r == CHILD_OK)
				r = -1; /* it may only stop by being killed */
			break;
		case CHILD_AFTER_UNMAP:
			/* From here on only the child's inherited mapping uses this inode (besides
			 * other workers that may open the name). */
			munmap(m, size);
			m = MAP_FAILED;
			close(fd);
			fd = -1;
			sh_inc(sh, C_CHILD_ONLY);
			if (write(go[1], "g", 1) != 1)
				sh_err(sh, "pipe write: %s", errname(errno));
			close(go[1]);
			r = reap_maybe_killed(sh, &rs, kid, rng_below(&rs, 4) == 0);
			break;
		default: /* CHILD_KILLED_ANYTIME */
			r = reap_maybe_killed(sh, &rs, kid, 1);
			break;
		}
		if (mode == CHILD_VERIFY_LOOP && r == 128 + SIGKILL)
			r = CHILD_OK;
		if (r != CHILD_OK) {
			sh_err(sh, "worker %d iteration %d: the child (mode %d) on %s %s (exit %d)",
			       w->slot, it, mode, name, child_result(r), r);
			bad = 1;
		}
		if (m != MAP_FAILED) {
			if (page_differs(w, it, name, m + region, s2,
					 "changed under the mapping while in use"))
				bad = 1;
			if (same_inode(sh, path, st.st_ino, "before close") < 0)
				bad = 1;
		}
next:
		if (m != MAP_FAILED)
			munmap(m, size);
		if (fd >= 0)
			close(fd);
	}
	return bad;
}

/* ---- keepers: files used the whole time, each in its own way ---- */

enum { K_MAP, K_FD, K_FORK, K_HOLD };
static const char *const keeper_name[NKEEPERS] = {"keep-map", "keep-fd", "keep-fork", "keep-hold"};

static int keeper_create(struct shared *sh, const char *path, uint32_t seed, ino_t *ino)
{
	unsigned char *buf = malloc(KEEP_LEN);
	struct stat st;
	int fd;

	if (!buf)
		return -1;
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		sh_err(sh, "keeper: create %s: %s", path, errname(errno));
		free(buf);
		return -1;
	}
	pat_fill(buf, KEEP_LEN, seed, 0);
	if (pwrite_all(fd, buf, KEEP_LEN, 0) != KEEP_LEN || fstat(fd, &st) == -1) {
		sh_err(sh, "keeper: write %s: %s", path, errname(errno));
		close(fd);
		free(buf);
		return -1;
	}
	*ino = st.st_ino;
	free(buf);
	return fd;
}

static int keeper_check_data(struct shared *sh, const char *who, const unsigned char *data,
			     uint32_t seed)
{
	long at = pat_check(data, KEEP_LEN, seed, 0);

	if (at >= 0) {
		sh_err(sh, "%s: data changed while in use, first at byte %ld", who, at);
		return -1;
	}
	return 0;
}

static int keeper_check_fd(struct shared *sh, const char *who, int fd, uint32_t seed)
{
	static unsigned char buf[KEEP_LEN];

	if (pread_all(fd, buf, KEEP_LEN, 0) != KEEP_LEN) {
		sh_err(sh, "%s: pread of the file in use: %s", who, errname(errno));
		return -1;
	}
	return keeper_check_data(sh, who, buf, seed);
}

/* One round of checks of a keeper's file: name (and listing), content. */
static int keeper_round(const struct hcfg *c, int k, const char *path, ino_t ino,
			const unsigned char *map, int fd, uint32_t seed, long round)
{
	struct shared *sh = c->sh;
	const char *who = keeper_name[k];

	if (same_inode(sh, path, ino, who) < 0)
		return -1;
	if (round % 25 == 0 && tu_listed(c->mnt, who) != 1) {
		sh_err(sh, "%s: in use but not listed by readdir", who);
		return -1;
	}
	if (map && keeper_check_data(sh, who, map, seed) < 0)
		return -1;
	if (fd >= 0 && keeper_check_fd(sh, who, fd, seed) < 0)
		return -1;
	sh_inc(sh, C_KEEP0 + k);
	return 0;
}

/* Loop until told to stop (or the runner is gone), then a last round. */
static int keeper_loop(const struct hcfg *c, int k, const char *path, ino_t ino,
		       const unsigned char *map, int fd, uint32_t seed, pid_t runner)
{
	long round = 0;

	while (!atomic_load(&c->sh->stop)) {
		if (getppid() != runner)
			return 1; /* the runner died: nobody will ever tell us to stop */
		if (keeper_round(c, k, path, ino, map, fd, seed, round++) < 0)
			return 1;
		sleep_us(1000);
	}
	if (keeper_round(c, k, path, ino, map, fd, seed, 0) < 0)
		return 1;
	atomic_store(&c->sh->done[k], 1);
	return 0;
}

/* The K_HOLD keeper: between rounds only its "process" hold keeps the file. */
static int keeper_hold_loop(const struct hcfg *c, const char *path, ino_t ino, uint32_t seed,
			    pid_t runner)
{
	struct shared *sh = c->sh;
	int last = 0;

	for (long round = 0;; round++) {
		int fd;
		struct stat st;

		if (atomic_load(&sh->stop))
			last = 1;
		if (getppid() != runner)
			return 1;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			sh_err(sh, "keep-hold: open of the held file failed: %s", errname(errno));
			return 1;
		}
		if (fstat(fd, &st) == -1 || st.st_ino != ino) {
			sh_err(sh, "keep-hold: the held name now opens inode %lu, not %lu",
			       (unsigned long)st.st_ino, (unsigned long)ino);
			close(fd);
			return 1;
		}
		if (keeper_round(c, K_HOLD, path, ino, NULL, fd, seed, round) < 0) {
			close(fd);
			return 1;
		}
		close(fd);
		if (last)
			break;
		sleep_us(1000);
	}
	atomic_store(&sh->done[K_HOLD], 1);
	return 0;
}

static int keeper_main(void *arg)
{
	const struct hworker *w = arg;
	const struct hcfg *c = w->c;
	struct shared *sh = c->sh;
	int k = w->slot;
	uint32_t seed = stamp_seed(100 + (unsigned)k, 0, 7);
	pid_t runner = getppid();
	char path[PATH_MAX];
	unsigned char *map = NULL;
	ino_t ino;
	int fd, g[2];
	pid_t gpid;

	name_path(c, keeper_name[k], path, sizeof(path));
	fd = keeper_create(sh, path, seed, &ino);
	if (fd < 0)
		return 1;
	if (k != K_FD && k != K_HOLD) {
		map = mmap(NULL, KEEP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) {
			sh_err(sh, "%s: mmap: %s", keeper_name[k], errname(errno));
			return 1;
		}
	}
	switch (k) {
	case K_MAP:
		/* Only the mapping keeps it: its descriptor is closed. */
		close(fd);
		if (write(w->ready_fd, "k", 1) != 1)
			return 1;
		return keeper_loop(c, k, path, ino, map, -1, seed, runner);
	case K_FD:
		if (write(w->ready_fd, "k", 1) != 1)
			return 1;
		return keeper_loop(c, k, path, ino, NULL, fd, seed, runner);
	case K_HOLD:
		if (hold_scope(path, POOLFS_SCOPE_WORD_PROCESS) == -1) {
			sh_err(sh, "keep-hold: setxattr %s=%s: %s", POOLFS_XATTR_HOLD,
			       POOLFS_SCOPE_WORD_PROCESS, errname(errno));
			return 1;
		}
		close(fd);
		if (write(w->ready_fd, "k", 1) != 1)
			return 1;
		return keeper_hold_loop(c, path, ino, seed, runner);
	default: /* K_FORK */
		/* A grandchild inherits the mapping; we unmap, close and exit, so the orphaned
		 * grandchild's inherited mapping alone keeps the file. */
		close(fd);
		if (pipe(g) == -1)
			return 1;
		fflush(NULL);
		gpid = fork();
		if (gpid == -1)
			return 1;
		if (gpid == 0) {
			/* No PDEATHSIG: our parent exits on purpose. We come to the runner (a
			 * subreaper), and leave if it is gone. */
			close(g[0]);
			if (write(g[1], "r", 1) != 1)
				_exit(1);
			close(g[1]);
			while (getppid() != runner && !atomic_load(&sh->stop)) {
				if (getppid() == 1)
					_exit(1);
				sleep_us(1000); /* until our parent's exit reparents us */
			}
			_exit(keeper_loop(c, k, path, ino, map, -1, seed, runner));
		}
		close(g[1]);
		{
			char b;

			if (read(g[0], &b, 1) != 1)
				return 1;
		}
		munmap(map, KEEP_LEN);
		if (write(w->ready_fd, "k", 1) != 1)
			return 1;
		return 0;
	}
}

/* ---- the runner ---- */

static int read_bytes_bounded(int fd, int n, int timeout_ms)
{
	long long deadline = pool_now_ms() + timeout_ms;
	int got = 0;

	while (got < n) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		long long left = deadline - pool_now_ms();
		char b[64];
		ssize_t r;

		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			return got;
		r = read(fd, b, (size_t)(n - got) < sizeof(b) ? (size_t)(n - got) : sizeof(b));
		if (r <= 0)
			return got;
		got += (int)r;
	}
	return got;
}

static int hammer_runner(void *arg)
{
	const struct hcfg *c = arg;
	struct shared *sh = c->sh;
	struct hworker wa[MAX_WORKERS], ka[NKEEPERS];
	pid_t w[MAX_WORKERS], kp[NKEEPERS] = {0};
	pid_t grp = group_new();
	int ready[2];

	if (grp < 0 || pipe(ready) == -1) {
		sh_err(sh, "runner: %s", errname(errno));
		return 1;
	}
	if (c->keepers) {
		int got;

		for (int k = 0; k < NKEEPERS; k++) {
			ka[k] = (struct hworker){.c = c, .slot = k, .ready_fd = ready[1]};
			kp[k] = spawn_child(grp, 1, keeper_main, &ka[k]);
		}
		got = read_bytes_bounded(ready[0], NKEEPERS, 60000);
		if (got != NKEEPERS) {
			sh_err(sh, "runner: only %d of %d keepers got ready", got, NKEEPERS);
			runner_kill_all(grp);
			return 1;
		}
	}
	for (int i = 0; i < c->nworkers; i++) {
		wa[i] = (struct hworker){.c = c, .slot = i, .ready_fd = -1};
		w[i] = spawn_child(grp, 1, hammer_worker, &wa[i]);
		if (w[i] < 0)
			sh_err(sh, "runner: fork: %s", errname(errno));
	}
	for (int i = 0; i < c->nworkers; i++) {
		int r;

		if (w[i] <= 0)
			continue;
		r = tu_reap(w[i], RUNNER_MS);
		if (r != 0)
			sh_err(sh, "hammer worker %d ended with %d%s", i, r,
			       r == -ETIMEDOUT ? " (timed out: killed)" : "");
	}
	if (c->keepers) {
		long long deadline;

		atomic_store(&sh->stop, 1);
		for (int k = 0; k < NKEEPERS; k++) {
			int r = tu_reap(kp[k], 60000);

			if (r != 0)
				sh_err(sh, "keeper %s ended with %d", keeper_name[k], r);
		}
		/* The K_FORK grandchild is an orphan now: it says it is done in the shared area. */
		deadline = pool_now_ms() + 60000;
		while (!atomic_load(&sh->done[K_FORK]) && atomic_load(&sh->nerr) == 0 &&
		       pool_now_ms() < deadline)
			sleep_us(5000);
	}
	runner_kill_all(grp);
	return 0;
}

/* ---- create churn: the name is removed and re-created all the time ---- */

enum { C_CHURN_OPS = C_KEEP0 + NKEEPERS, C_CHURN_FRESH, C_CHURN_ESTALE, C_CHURN_OTHER };

/* open(O_CREAT), write a byte, close, on two names as fast as possible: every close may be the
 * last use, so names are removed and re-created while other processes look them up and open
 * them. No open may fail. */
static int churn_worker(void *arg)
{
	const struct hworker *w = arg;
	const struct hcfg *c = w->c;
	struct shared *sh = c->sh;
	uint64_t rs = c->seed ^ (0xC0FFEE00ull + (uint64_t)w->slot) * 0x9E3779B97F4A7C15ull;
	int bad = 0;

	for (int it = 0; it < c->iters; it++) {
		char path[PATH_MAX], name[16];
		struct stat st;
		int fd;

		snprintf(name, sizeof(name), "c%u", rng_below(&rs, 2));
		fd = open_counted(c, name, path, sizeof(path), C_CHURN_OPS);
		if (fd < 0) {
			int e = -fd;

			if (e != ENOENT)
				sh_inc(sh, e == ESTALE ? C_CHURN_ESTALE : C_CHURN_OTHER);
			if (atomic_load(&sh->nerr) < SH_PRINT_ERRORS)
				sh_err(sh,
				       "churn worker %d iteration %d: open(%s, O_CREAT) failed: %s",
				       w->slot, it, name, errname(e));
			else
				atomic_fetch_add(&sh->nerr, 1);
			bad = 1;
			continue;
		}
		if (fstat(fd, &st) == 0 && st.st_size == 0)
			sh_inc(sh, C_CHURN_FRESH);
		if (write(fd, "x", 1) != 1) {
			sh_err(sh, "churn worker %d: write %s: %s", w->slot, name, errname(errno));
			bad = 1;
		}
		close(fd);
	}
	return bad;
}

static int churn_runner(void *arg)
{
	const struct hcfg *c = arg;
	struct hworker wa[MAX_WORKERS];
	pid_t w[MAX_WORKERS];
	pid_t grp = group_new();

	for (int i = 0; i < c->nworkers; i++) {
		wa[i] = (struct hworker){.c = c, .slot = i, .ready_fd = -1};
		w[i] = spawn_child(grp, 1, churn_worker, &wa[i]);
	}
	for (int i = 0; i < c->nworkers; i++)
		if (w[i] > 0)
			tu_reap(w[i], RUNNER_MS);
	runner_kill_all(grp);
	return 0;
}

/* ---- tests ---- */

static int setup_none(void **state)
{
	return stest_setup(state, "autohold=none");
}

/* The runner's configuration for the test's pool, with a fresh shared area the teardown frees. */
static void hcfg_init(struct stest *t, struct hcfg *c, const char *test)
{
	memset(c, 0, sizeof(*c));
	c->sh = t->sh = shared_new();
	snprintf(c->mnt, sizeof(c->mnt), "%s", t->f.p.mnt);
	c->seed = stress_seed(test);
}

/* Once every process is reaped, nothing may outlive its use: the pool lists nothing and its
 * backing store holds no file. */
static void assert_pool_empties(struct pool_fixture *p)
{
	char left[1024];
	int n = wait_dir_empty(p->mnt, GONE_MS, left, sizeof(left));

	if (n != 0)
		fail_msg("%d entries still listed %d ms after every user was gone: %s", n, GONE_MS,
			 left);
	if (pool_wait_backing_files(p, 0, GONE_MS) != 0) {
		static const char *const names[] = {"s0",	 "s1",	      "s2",	  "s3",
						    "c0",	 "c1",	      "keep-map", "keep-fd",
						    "keep-fork", "keep-hold", NULL};
		char why[2048];
		int left_files = pool_backing_files(p);

		pool_dump_log(p); /* a warning of the notify thread would say why */
		fail_msg("the backing dir still holds %d files %d ms after every user was gone; %s",
			 left_files, GONE_MS, backing_leftover_cause(p, names, why, sizeof(why)));
	}
}

/* Run fn(c) in a runner and wait for it (bounded): its exit code, and in *ms how long it took. */
static int run_runner(struct stest *t, int (*fn)(void *), struct hcfg *c, long long *ms)
{
	long long t0 = pool_now_ms();
	int r;

	t->runner = runner_start(fn, c);
	r = stest_wait_runner(t, RUNNER_MS + 60000);
	*ms = pool_now_ms() - t0;
	return r;
}

static void run_hammer(void **state, int keepers)
{
	struct stest *t = stest_get(state);
	struct pool_fixture *p = &t->f.p;
	int lng = stress_long();
	struct hcfg c;
	long long ms;
	int r;

	hcfg_init(t, &c, keepers ? "no_file_removed_while_used" : "hammer_shared_names");
	c.nworkers = keepers ? (lng ? 24 : 12) : (lng ? 32 : 16);
	c.iters = lng ? 5000 : (keepers ? 300 : 500);
	c.nslots = MAX_WORKERS;
	c.keepers = keepers;

	r = run_runner(t, hammer_runner, &c, &ms);
	fprintf(stderr,
		"# datapath=%s workers=%d iterations=%ld/%d O_CREAT failures=%ld (ENOENT %ld) "
		"fresh files=%ld children=%ld killed=%ld child-only=%ld keeper rounds=%ld/%ld/%ld/%ld in %lld ms\n",
		p->active_datapath, c.nworkers, sh_get(c.sh, C_ITERS), c.nworkers * c.iters,
		sh_get(c.sh, C_CREAT_FAIL), sh_get(c.sh, C_CREAT_ENOENT), sh_get(c.sh, C_FRESH),
		sh_get(c.sh, C_FORKS), sh_get(c.sh, C_CHILD_KILLED), sh_get(c.sh, C_CHILD_ONLY),
		sh_get(c.sh, C_KEEP0), sh_get(c.sh, C_KEEP0 + 1), sh_get(c.sh, C_KEEP0 + 2),
		sh_get(c.sh, C_KEEP0 + 3), ms);
	if (r != 0)
		fail_msg("the runner ended with %d", r);
	if (sh_get(c.sh, C_CREAT_FAIL))
		fail_msg("%ld O_CREAT opens failed (%ld with ENOENT); first error: %s",
			 sh_get(c.sh, C_CREAT_FAIL), sh_get(c.sh, C_CREAT_ENOENT), c.sh->first_err);
	SH_NO_ERRORS(c.sh);
	assert_int_equal(sh_get(c.sh, C_ITERS), (long)c.nworkers * c.iters);
	assert_true(sh_get(c.sh, C_FORKS) > 0);
	assert_true(sh_get(c.sh, C_CHILD_KILLED) > 0);
	assert_true(sh_get(c.sh, C_CHILD_ONLY) > 0);
	if (keepers)
		for (int k = 0; k < NKEEPERS; k++) {
			if (!atomic_load(&c.sh->done[k]))
				fail_msg("keeper %s did not finish its checks", keeper_name[k]);
			if (sh_get(c.sh, C_KEEP0 + k) < 2)
				fail_msg("keeper %s checked only %ld times", keeper_name[k],
					 sh_get(c.sh, C_KEEP0 + k));
		}

	assert_pool_empties(p);
}

static void test_hammer_shared_names(void **state)
{
	run_hammer(state, 0);
}

static void test_no_file_removed_while_used(void **state)
{
	run_hammer(state, 1);
}

static void test_create_churn_never_fails(void **state)
{
	struct stest *t = stest_get(state);
	struct pool_fixture *p = &t->f.p;
	struct hcfg c;
	long long ms;
	int r;

	hcfg_init(t, &c, "create_churn_never_fails");
	c.nworkers = 8;
	c.iters = stress_long() ? 100000 : 5000;
	r = run_runner(t, churn_runner, &c, &ms);
	fprintf(stderr,
		"# datapath=%s workers=%d opens=%ld fresh files=%ld O_CREAT failures=%ld "
		"(ENOENT %ld, ESTALE %ld, other %ld) in %lld ms\n",
		p->active_datapath, c.nworkers, sh_get(c.sh, C_CHURN_OPS),
		sh_get(c.sh, C_CHURN_FRESH), sh_get(c.sh, C_CREAT_FAIL),
		sh_get(c.sh, C_CREAT_ENOENT), sh_get(c.sh, C_CHURN_ESTALE),
		sh_get(c.sh, C_CHURN_OTHER), ms);
	assert_int_equal(r, 0);
	if (sh_get(c.sh, C_CREAT_FAIL))
		fail_msg("%ld of %ld O_CREAT opens failed (ENOENT %ld, ESTALE %ld, other %ld); "
			 "first: %s",
			 sh_get(c.sh, C_CREAT_FAIL), sh_get(c.sh, C_CHURN_OPS),
			 sh_get(c.sh, C_CREAT_ENOENT), sh_get(c.sh, C_CHURN_ESTALE),
			 sh_get(c.sh, C_CHURN_OTHER), c.sh->first_err);
	SH_NO_ERRORS(c.sh);
	assert_int_equal(sh_get(c.sh, C_CHURN_OPS), (long)c.nworkers * c.iters);
	/* The names really were removed and re-created under the workers. */
	assert_true(sh_get(c.sh, C_CHURN_FRESH) > 0);
	assert_pool_empties(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hammer_shared_names, setup_none,
						stest_teardown),
		cmocka_unit_test_setup_teardown(test_no_file_removed_while_used, setup_none,
						stest_teardown),
		cmocka_unit_test_setup_teardown(test_create_churn_never_fails, setup_none,
						stest_teardown),
	};

	return cmocka_run_group_tests_name("stress", tests, NULL, NULL);
}
