/* Fault simulation, SQLite's faultsim habit, against a real pool run by poolfs-faultsim (the
 * daemon with fs/fault.h compiled in; never installed).
 *
 * Each operation (open, create, mkdir, rename, setxattr, hold, listing) runs again and again
 * with the Nth daemon allocation failing, N = 1, 2, ... until it completes without reaching
 * the fault; then the same with the Nth reply lost (as when the caller is killed before the
 * reply arrives). After every run:
 *   - the operation succeeded or failed cleanly (ENOMEM for an allocation, EIO for a lost
 *     reply), never with another errno, a hang or a dead daemon;
 *   - user.poolfs.debug.check finds every invariant of the node table, names, counters and
 *     holds intact;
 *   - once the test undoes the operation, the pool holds exactly what it held before (entries,
 *     metadata, backing files): nothing leaked.
 * The daemon must exit cleanly at unmount, which under the sanitizer build also means
 * LeakSanitizer found nothing. */
#include "testutil.h"

#include <dirent.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <sys/xattr.h>

#define MAX_FAULT_POINTS 200

struct ctx {
	struct pool_fixture *p;
	char mnt[PATH_MAX];
	char base[PATH_MAX];	 /* a pinned folder the operations work in */
	char existing[PATH_MAX]; /* base/existing: a file kept by the folder's pin */
	char fresh[PATH_MAX];	 /* base/fresh: what create/mkdir/rename make */
	char victim[PATH_MAX];	 /* base/victim: what rename replaces */
};

struct op {
	const char *name;
	void (*prepare)(const struct ctx *c); /* before arming; may be NULL */
	int (*run)(const struct ctx *c);      /* 0 or -errno */
	void (*undo)(const struct ctx *c);    /* back to the state before prepare */
};

/* ---- the operations ---- */

static int ret(int r)
{
	return r < 0 ? -errno : 0;
}

static int run_create(const struct ctx *c)
{
	return make_closed_file(c->fresh); /* create, write, close */
}

/* After a lost reply that created `fresh`, the kernel keeps its negative entry until the
 * daemon's invalidation (sent from another thread) arrives: the name is listed but not yet
 * reachable. Remove it with `rm` (unlink or rmdir), retrying until it is not listed. */
static void remove_fresh(const struct ctx *c, int (*rm)(const char *))
{
	for (long long until = pool_now_ms() + GONE_MS;; pool_sleep_ms(2)) {
		if (rm(c->fresh) == 0)
			return;
		if (errno != ENOENT)
			fail_msg("removing %s: %s", c->fresh, errname(errno));
		if (!tu_listed(c->base, "fresh"))
			return;
		if (pool_now_ms() > until)
			fail_msg("%s is listed but stays unreachable", c->fresh);
	}
}

static void undo_fresh_file(const struct ctx *c)
{
	remove_fresh(c, unlink);
}

static int run_open(const struct ctx *c)
{
	int fd = open(c->existing, O_RDWR);

	if (fd < 0)
		return -errno;
	return ret(close(fd));
}

static void undo_nothing(const struct ctx *c)
{
	(void)c;
}

static int run_mkdir(const struct ctx *c)
{
	return ret(mkdir(c->fresh, 0700));
}

static void undo_fresh_dir(const struct ctx *c)
{
	remove_fresh(c, rmdir);
}

static void make_victim(const struct ctx *c)
{
	int fd = open(c->victim, O_RDWR | O_CREAT | O_EXCL, 0600);

	CHECK(fd);
	CHECK(close(fd));
	/* Like `existing`, kept by the folder's pin alone, so undoing an exchange is unlinking
	 * whichever file then has this name. */
	if (removexattr(c->victim, POOLFS_XATTR_HOLD) < 0 && errno != ENODATA)
		fail_msg("removexattr %s: %s", c->victim, errname(errno));
}

static int run_rename_over(const struct ctx *c)
{
	return ret(rename(c->existing, c->victim));
}

/* Put `existing` back under its name and drop the victim, whichever way the rename went. */
static void undo_rename_over(const struct ctx *c)
{
	struct stat st;

	if (stat(c->existing, &st) < 0) {
		CHECK(rename(c->victim, c->existing));
		return;
	}
	if (unlink(c->victim) < 0 && errno != ENOENT)
		fail_msg("unlink %s: %s", c->victim, errname(errno));
}

static int run_rename_exchange(const struct ctx *c)
{
	return ret(renameat2(AT_FDCWD, c->existing, AT_FDCWD, c->victim, RENAME_EXCHANGE));
}

static void undo_rename_exchange(const struct ctx *c)
{
	/* Exchanged or not, both names exist: the victim name goes, whichever file it is now. */
	if (unlink(c->victim) < 0)
		fail_msg("unlink %s: %s", c->victim, errname(errno));
}

static int run_setxattr(const struct ctx *c)
{
	char value[200];

	memset(value, 'x', sizeof(value));
	return ret(setxattr(c->existing, "user.fault", value, sizeof(value), 0));
}

static void undo_setxattr(const struct ctx *c)
{
	if (removexattr(c->existing, "user.fault") < 0 && errno != ENODATA)
		fail_msg("removexattr user.fault: %s", errname(errno));
}

static int run_hold(const struct ctx *c)
{
	return ret(setxattr(c->existing, POOLFS_XATTR_HOLD, "process", 7, 0));
}

static void undo_hold(const struct ctx *c)
{
	if (removexattr(c->existing, POOLFS_XATTR_HOLD) < 0 && errno != ENODATA)
		fail_msg("removexattr user.poolfs.hold: %s", errname(errno));
}

static int run_list(const struct ctx *c)
{
	DIR *d = opendir(c->base);
	int n = 0;

	if (!d)
		return -errno;
	errno = 0;
	while (readdir(d))
		n++;
	if (errno) {
		int e = errno;
		closedir(d);
		return -e;
	}
	closedir(d);
	return n >= 3 ? 0 : -EPROTO; /* ".", "..", existing */
}

static int run_symlink(const struct ctx *c)
{
	return ret(symlink("existing", c->fresh));
}

static void make_symlink(const struct ctx *c)
{
	CHECK(symlink("existing", c->victim));
	if (removexattr(c->victim, POOLFS_XATTR_HOLD) < 0 && errno != ENODATA)
		fail_msg("removexattr %s: %s", c->victim, errname(errno));
}

static int run_readlink(const struct ctx *c)
{
	char target[64];
	ssize_t n = readlink(c->victim, target, sizeof(target));

	if (n < 0)
		return -errno;
	return n == 8 && memcmp(target, "existing", 8) == 0 ? 0 : -EPROTO;
}

static void undo_victim(const struct ctx *c)
{
	CHECK(unlink(c->victim));
}

/* A getxattr of `name` on `path` that reads the value. */
static int get_value(const char *path, const char *name)
{
	char value[65536];

	return getxattr(path, name, value, sizeof(value)) < 0 ? -errno : 0;
}

static void set_user_xattr(const struct ctx *c)
{
	CHECK(setxattr(c->existing, "user.fault", "value", 5, 0));
}

static int run_getxattr(const struct ctx *c)
{
	return get_value(c->existing, "user.fault");
}

static int run_listxattr(const struct ctx *c)
{
	char names[4096];

	return listxattr(c->existing, names, sizeof(names)) < 0 ? -errno : 0;
}

static int run_refs(const struct ctx *c)
{
	return get_value(c->existing, POOLFS_XATTR_REFS);
}

static int run_stat_text(const struct ctx *c)
{
	return get_value(c->mnt, POOLFS_XATTR_STAT);
}

static int run_ops_text(const struct ctx *c)
{
	return get_value(c->mnt, POOLFS_XATTR_OPS);
}

static int run_counters_text(const struct ctx *c)
{
	return get_value(c->mnt, POOLFS_XATTR_COUNTERS);
}

static const struct op ops[] = {
	{"create", NULL, run_create, undo_fresh_file},
	{"open", NULL, run_open, undo_nothing},
	{"mkdir", NULL, run_mkdir, undo_fresh_dir},
	{"rename over", make_victim, run_rename_over, undo_rename_over},
	{"rename exchange", make_victim, run_rename_exchange, undo_rename_exchange},
	{"setxattr", NULL, run_setxattr, undo_setxattr},
	{"hold", NULL, run_hold, undo_hold},
	{"list", NULL, run_list, undo_nothing},
	{"symlink", NULL, run_symlink, undo_fresh_file},
	{"readlink", make_symlink, run_readlink, undo_victim},
	{"getxattr", set_user_xattr, run_getxattr, undo_setxattr},
	{"listxattr", set_user_xattr, run_listxattr, undo_setxattr},
	{"refs", NULL, run_refs, undo_nothing},
	{"stat text", NULL, run_stat_text, undo_nothing},
	{"ops text", NULL, run_ops_text, undo_nothing},
	{"counters text", NULL, run_counters_text, undo_nothing},
};

/* ---- the daemon's controls ---- */

static void arm(const struct ctx *c, const char *what)
{
	if (setxattr(c->mnt, POOLFS_XATTR_DEBUG_FAULT, what, strlen(what), 0) < 0)
		fail_msg("arming '%s': %s (is this the faultsim daemon?)", what, errname(errno));
}

/* ---- the allocation sites walked ----
 * The daemon names every allocation site a fault landed on ("walked FILE:LINE"); the sites of
 * all the daemons this binary ran are gathered here, and the last test compares them with every
 * allocation site in fs/ (POOLFS_SRC). */

#define MAX_SITES 256

static char walked_sites[MAX_SITES][64];
static int nwalked;
static bool walks_ran; /* a walk ran (not skipped: a data path this daemon lacks) */

static void note_walked(const char *report)
{
	for (const char *at = strstr(report, "walked "); at; at = strstr(at + 1, "walked ")) {
		char site[64];
		const char *slash;
		int i;

		if (sscanf(at, "walked %63s", site) != 1)
			continue;
		slash = strrchr(site, '/'); /* "../fs/x.c:12" -> "x.c:12" */
		if (slash)
			memmove(site, slash + 1, strlen(slash + 1) + 1);
		for (i = 0; i < nwalked && strcmp(walked_sites[i], site) != 0; i++)
			;
		if (i == nwalked && nwalked < MAX_SITES)
			snprintf(walked_sites[nwalked++], sizeof(walked_sites[0]), "%s", site);
	}
}

/* Wait (bounded) until the daemon says nothing waits for the kernel or the mapping proof any
 * more ("unsettled 0 ..."): the RELEASE of what the operation closed, the proof that its last
 * mapping went, the FORGET of what it removed. The kernel sends those after the call returned
 * and the daemon handles them on other threads, so without this wait a fault armed for them
 * would land, or not, by the luck of the threads, and the walk could end before it reached
 * their allocation sites (a FORGET's unlink of a file a rename replaced). */
static void wait_settled(const struct ctx *c)
{
	char buf[4096];
	const char *at;
	ssize_t n;

	for (long long until = pool_now_ms() + GONE_MS;; pool_sleep_ms(1)) {
		n = getxattr(c->mnt, POOLFS_XATTR_DEBUG_FAULT, buf, sizeof(buf) - 1);
		if (n < 0) {
			fail_msg("reading the fault state: %s", errname(errno));
			return;
		}
		buf[n] = '\0';
		at = strstr(buf, "unsettled ");
		if (!at) {
			fail_msg("the fault state has no unsettled line: %s", buf);
			return;
		}
		if (strncmp(at, "unsettled 0 ", 12) == 0 || pool_now_ms() > until)
			return; /* still unsettled: whatever it waits for is the checks' to find */
	}
}

/* Did the armed fault of `site` fire? 1 if so, 2 if it landed on a benign allocation (fault.h:
 * the operation must succeed anyway), 0 if not. Disarms everything. */
static int fired_and_disarm(const struct ctx *c, const char *site)
{
	char buf[4096], want[64];
	ssize_t n = getxattr(c->mnt, POOLFS_XATTR_DEBUG_FAULT, buf, sizeof(buf) - 1);

	if (n < 0) {
		fail_msg("reading the fault state: %s", errname(errno));
		return 0;
	}
	buf[n] = '\0';
	arm(c, "off");
	note_walked(buf);
	snprintf(want, sizeof(want), "%s benign\n", site);
	if (strstr(buf, want))
		return 2;
	snprintf(want, sizeof(want), "%s fired\n", site);
	return strstr(buf, want) != NULL;
}

static void expect_consistent(const struct ctx *c, const char *op, const char *site, int n,
			      const char *when)
{
	char buf[4096];
	ssize_t len = getxattr(c->mnt, POOLFS_XATTR_DEBUG_CHECK, buf, sizeof(buf) - 1);

	if (len < 0) {
		fail_msg("%s, %s %d, %s: the check failed: %s", op, site, n, when, errname(errno));
		return;
	}
	buf[len] = '\0';
	if (strcmp(buf, "ok\n") != 0)
		fail_msg("%s, %s fault %d, %s: inconsistent pool: %s", op, site, n, when, buf);
}

/* "entries N" and "meta N" of user.poolfs.stat. */
static void usage_now(const struct ctx *c, long long *entries, long long *meta)
{
	char buf[4096], *at;
	ssize_t len = getxattr(c->mnt, POOLFS_XATTR_STAT, buf, sizeof(buf) - 1);

	if (len < 0) {
		fail_msg("reading user.poolfs.stat: %s", errname(errno));
		return;
	}
	buf[len] = '\0';
	at = strstr(buf, "\nmeta ");
	if (sscanf(buf, "entries %lld", entries) != 1 || !at ||
	    sscanf(at, "\nmeta %lld", meta) != 1)
		fail_msg("unexpected user.poolfs.stat text: %s", buf);
}

/* ---- the loop ---- */

struct fs_state {
	struct tu_fixture t;
	struct ctx c;
	const char *also;	 /* armed too at every step of a walk (a delay), or NULL */
	long long entries, meta; /* the pool at rest */
	int backing;
};

static int expected_errno(const char *site, int r)
{
	if (r == 0)
		return 1;
	return strcmp(site, "alloc") == 0 ? r == -ENOMEM : r == -EIO;
}

/* Run `op` with fault `site` at N = 1, 2, ... until it no longer fires; returns how many
 * fault points the operation has. */
static int drive(struct fs_state *s, const struct op *op, const char *site)
{
	const struct ctx *c = &s->c;
	int n;

	for (n = 1; n <= MAX_FAULT_POINTS; n++) {
		char what[64];
		long long entries, meta;
		int r, fired;

		if (op->prepare)
			op->prepare(c);
		snprintf(what, sizeof(what), "%s %d", site, n);
		arm(c, what);
		if (s->also)
			arm(c, s->also);
		r = op->run(c);
		wait_settled(c);
		fired = fired_and_disarm(c, site);
		if (!expected_errno(site, r))
			fail_msg("%s with %s fault %d: %s, want success or %s", op->name, site, n,
				 errname(-r), strcmp(site, "alloc") == 0 ? "ENOMEM" : "EIO");
		if (!fired && r != 0)
			fail_msg("%s failed (%s) with no fault injected", op->name, errname(-r));
		if (fired == 2 && r != 0)
			fail_msg("%s failed (%s) with a benign fault %d", op->name, errname(-r), n);
		expect_consistent(c, op->name, site, n, "after the operation");
		op->undo(c);
		expect_consistent(c, op->name, site, n, "after undoing it");
		/* On passthrough a closed file goes once the mapping probe proves it unmapped,
		 * a moment after the close: wait for it (bounded). */
		for (long long until = pool_now_ms() + GONE_MS;; pool_sleep_ms(5)) {
			usage_now(c, &entries, &meta);
			if ((entries == s->entries && meta == s->meta) || pool_now_ms() > until)
				break;
		}
		if (entries != s->entries || meta != s->meta)
			fail_msg(
				"%s, %s fault %d: entries %lld meta %lld, want %lld and %lld (a leak)",
				op->name, site, n, entries, meta, s->entries, s->meta);
		if (pool_wait_backing_files(s->c.p, s->backing, GONE_MS) != 0)
			fail_msg("%s, %s fault %d: %d backing files, want %d", op->name, site, n,
				 pool_backing_files(s->c.p), s->backing);
		if (!fired)
			return n - 1;
	}
	fail_msg("%s: still failing at %s fault %d", op->name, site, MAX_FAULT_POINTS);
	return -1;
}

static int setup_opts(void **state, const char *opts)
{
	struct fs_state *s;
	int fd;

	if (tu_setup_sized(state, opts, sizeof(struct fs_state)) < 0)
		return -1;
	s = *state;
	if (s->t.unsupported)
		return 0;
	s->c.p = &s->t.p;
	if (pool_path(&s->t.p, "", s->c.mnt, sizeof(s->c.mnt)) < 0 ||
	    pool_path(&s->t.p, "base", s->c.base, sizeof(s->c.base)) < 0 ||
	    pool_path(&s->t.p, "base/existing", s->c.existing, sizeof(s->c.existing)) < 0 ||
	    pool_path(&s->t.p, "base/fresh", s->c.fresh, sizeof(s->c.fresh)) < 0 ||
	    pool_path(&s->t.p, "base/victim", s->c.victim, sizeof(s->c.victim)) < 0)
		return -1;
	if (mkdir(s->c.base, 0700) < 0 || setxattr(s->c.base, POOLFS_XATTR_HOLD, "pin", 3, 0) < 0)
		return -1;
	fd = open(s->c.existing, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, "data", 4) != 4 || close(fd) < 0)
		return -1;
	/* The folder's pin keeps it; without its autohold, the hold operation's undo (which
	 * drops all our holds on it) puts it back exactly as it was. */
	if (removexattr(s->c.existing, POOLFS_XATTR_HOLD) < 0 && errno != ENODATA)
		return -1;
	return 0;
}

static int setup_strict(void **state)
{
	return setup_opts(state, "autohold=none");
}

static int setup_linger(void **state)
{
	return setup_opts(state, "autohold=none,linger=0.05");
}

static int setup_autohold(void **state)
{
	/* Every create also takes a hold: its allocations are fault points too. */
	return setup_opts(state, "autohold=process");
}

static int teardown(void **state)
{
	struct fs_state *s = *state;

	if (s && !s->t.unsupported && s->c.base[0]) {
		removexattr(s->c.base, POOLFS_XATTR_HOLD);
		pool_wait_gone(s->c.base, GONE_MS);
	}
	return tu_teardown(state);
}

static void test_every_fault_point(void **state)
{
	struct fs_state *s = *state;

	tu_pool(state);
	walks_ran = true;
	usage_now(&s->c, &s->entries, &s->meta);
	s->backing = pool_backing_files(s->c.p);
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		int allocs = drive(s, &ops[i], "alloc");
		int replies = drive(s, &ops[i], "reply");
		fprintf(stderr, "# %-16s %3d allocation and %d reply fault points\n", ops[i].name,
			allocs, replies);
	}
	/* A run that reached no fault point at all would prove nothing. */
	assert_true(drive(s, &ops[0], "alloc") > 0);
	assert_true(drive(s, &ops[0], "reply") > 0);
}

/* A file that falls unused in a pool with linger= waits on the pool's heap of due times, whose
 * growth is an allocation site of its own: reached only by a file made and closed outside the
 * pinned folder. A fault there removes the file at once instead of letting it linger; the undo
 * is the linger running out (drive waits for the entries to come back to what they were). */
static int run_linger(const struct ctx *c)
{
	char path[2 * PATH_MAX];

	snprintf(path, sizeof(path), "%s/lingers", c->mnt);
	return make_closed_file(path);
}

static void test_linger_walked(void **state)
{
	struct fs_state *s = *state;
	const struct op linger = {"linger", NULL, run_linger, undo_nothing};

	tu_pool(state);
	usage_now(&s->c, &s->entries, &s->meta);
	s->backing = pool_backing_files(s->c.p);
	assert_true(drive(s, &linger, "alloc") > 0);
}

/* A rename over a file frees the file it replaced only at the kernel's FORGET, which the daemon
 * handles after the rename's reply, on another thread: the unlink of its backing file
 * (pool_reaper.c) is an allocation site that only a walk that waits for the FORGET reaches. Here
 * every FORGET comes 300 ms late, as on a loaded machine: the walk must still land a fault on
 * it (wait_settled). */
static void test_late_forget_still_walked(void **state)
{
	struct fs_state *s = *state;
	char report[4096];
	ssize_t len;
	const struct op *rename_over = NULL;

	tu_pool(state);
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
		if (strcmp(ops[i].name, "rename over") == 0)
			rename_over = &ops[i];
	assert_non_null(rename_over);
	usage_now(&s->c, &s->entries, &s->meta);
	s->backing = pool_backing_files(s->c.p);
	s->also = "forget 300";
	/* The rename's own allocation, then the FORGET's. */
	assert_true(drive(s, rename_over, "alloc") >= 2);
	CHECK(len = getxattr(s->c.mnt, POOLFS_XATTR_DEBUG_FAULT, report, sizeof(report) - 1));
	report[len] = '\0';
	if (!strstr(report, "/pool_reaper.c:"))
		fail_msg("no fault landed on the FORGET's unlink: %s", report);
}

/* Passthrough: when the kernel refuses a backing file its own fanotify mark, the daemon marks
 * the whole store instead (mapping_proof.c watch_store), and a mapping's end still
 * removes the file. */
static void test_refused_mark_falls_back_to_the_store(void **state)
{
	struct fs_state *s = *state;
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "mapped");
	char report[4096];
	ssize_t len;
	void *m;
	int fd;

	if (pool_daemon_marks(p) < 0)
		TU_SKIP("passthrough only: the page-cache path watches no close events");
	CHECK_0(pool_wait_daemon_marks(p, 0, GONE_MS));
	CHECK(setxattr(s->c.mnt, POOLFS_XATTR_DEBUG_FAULT, "mark 1", 6, 0));
	CHECK(fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600));
	CHECK(ftruncate(fd, 4096));
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	CHECK(close(fd)); /* the mapping keeps it: its RELEASE asks for a mark, which is refused */
	CHECK_0(pool_wait_daemon_marks(p, 1, GONE_MS)); /* the store's */
	len = getxattr(s->c.mnt, POOLFS_XATTR_DEBUG_FAULT, report, sizeof(report) - 1);
	CHECK(len);
	report[len] = '\0';
	if (!strstr(report, "mark fired"))
		fail_msg("the mark fault did not fire:\n%s", report);
	ASSERT_EXISTS(f);
	CHECK(munmap(m, 4096));
	ASSERT_GONE(f);
	CHECK_0(pool_wait_daemon_marks(p, 1, GONE_MS)); /* the store's mark stays */
}

/* ---- a resize outside the lock ---- */

#define MIB (1024 * 1024)

/* A resize in a child: ftruncate to `size`, or with `allocate`, fallocate(0, size). */
struct resize_job {
	int fd;
	off_t size;
	bool allocate;
	const char *mnt; /* the pool: what it says when the resize fails, if set */
};

/* Print the pool's own account of itself (its counters, what still waits for the kernel) at
 * the moment a resize failed: the next moment it may have changed. */
static void print_pool_state(const char *mnt)
{
	static const char *const texts[] = {POOLFS_XATTR_STAT, POOLFS_XATTR_DEBUG_FAULT};
	char buf[4096];

	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		ssize_t n = getxattr(mnt, texts[i], buf, sizeof(buf) - 1);

		if (n < 0)
			snprintf(buf, sizeof(buf), "(%s)\n", errname(errno));
		else
			buf[n] = '\0';
		for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
			fprintf(stderr, "# %s: %s\n", texts[i], line);
	}
}

static int run_resize(void *arg)
{
	const struct resize_job *j = arg;
	int r = j->allocate ? fallocate(j->fd, 0, 0, j->size) : ftruncate(j->fd, j->size);
	int e = errno;

	if (r < 0 && j->mnt) {
		fprintf(stderr, "# %s of %lld bytes: %s\n", j->allocate ? "fallocate" : "ftruncate",
			(long long)j->size, errname(e));
		print_pool_state(j->mnt);
	}
	return r < 0 ? e : 0;
}

static void wait_fault_fired(const struct ctx *c, const char *site)
{
	char buf[4096], want[64];

	snprintf(want, sizeof(want), "%s fired\n", site);
	for (long long until = pool_now_ms() + GONE_MS;; pool_sleep_ms(2)) {
		ssize_t n = getxattr(c->mnt, POOLFS_XATTR_DEBUG_FAULT, buf, sizeof(buf) - 1);

		CHECK(n);
		buf[n] = '\0';
		if (strstr(buf, want))
			return;
		if (pool_now_ms() > until)
			fail_msg("the %s fault did not fire:\n%s", site, buf);
	}
}

/* A resize's fallocate and ftruncate run outside the pool lock (fs/pool_resize.c): while one
 * is stalled in its I/O, the pool serves everything else, a resize of another file included,
 * and the stalled resize's reservation already counts against max_size. The pool runs over
 * /dev/fuse (uring=off): over io_uring each core's queue is served by one thread, so a stalled
 * request holds up the requests its core sends after it. */
static void test_resize_runs_outside_the_lock(void **state)
{
	struct fs_state *s = *state;
	struct pool_fixture *p = tu_pool(state);
	PATH(big, p, "big");
	PATH(other, p, "other");
	PATH(fresh, p, "fresh");
	struct resize_job grow = {.size = 2 * MIB};
	struct stat st;
	pid_t first;
	int ofd, ffd;

	CHECK(grow.fd = open(big, O_RDWR | O_CREAT | O_EXCL, 0600));
	CHECK(ofd = open(other, O_RDWR | O_CREAT | O_EXCL, 0600));
	arm(&s->c, "stall 1");
	first = tu_spawn(run_resize, &grow);
	wait_fault_fired(&s->c, "stall");
	/* The first resize waits in its I/O, its 2 MiB reserved: 1.5 more do not fit in 3. */
	CHECK_ERR(ftruncate(ofd, 3 * MIB / 2), ENOSPC);
	CHECK(ftruncate(ofd, MIB / 2));
	CHECK(fstat(ofd, &st));
	assert_int_equal(st.st_size, MIB / 2);
	CHECK(ffd = open(fresh, O_RDWR | O_CREAT | O_EXCL, 0600));
	CHECK(close(ffd));
	CHECK(stat(big, &st));
	CHECK(fallocate(ofd, 0, 0, MIB / 4));
	arm(&s->c, "off");
	REAP_OK(first);
	CHECK(fstat(grow.fd, &st));
	assert_int_equal(st.st_size, 2 * MIB);
	expect_consistent(&s->c, "resize", "stall", 1, "after the resizes");
	CHECK(close(grow.fd));
	CHECK(close(ofd));
}

static int run_create_in(void *arg)
{
	int fd = open(arg, O_RDWR | O_CREAT | O_EXCL, 0600);

	return fd < 0 || close(fd) < 0 ? errno : 0;
}

/* CREATE makes, stats and registers the new backing file before it takes the pool lock
 * (fs/ops_entries.c new_file_make): while one is stalled there, the pool serves everything else,
 * creates in other folders included (the kernel serializes the creates of one folder). */
static void test_create_runs_outside_the_lock(void **state)
{
	struct fs_state *s = *state;
	struct pool_fixture *p = tu_pool(state);
	PATH(a, p, "a");
	PATH(b, p, "b");
	PATH(stalled, p, "a/stalled");
	PATH(other, p, "b/other");
	struct stat st;
	pid_t first;
	int fd;

	CHECK(mkdir(a, 0700));
	CHECK(setxattr(a, POOLFS_XATTR_HOLD, "pin", 3, 0));
	CHECK(mkdir(b, 0700));
	CHECK(setxattr(b, POOLFS_XATTR_HOLD, "pin", 3, 0));
	arm(&s->c, "stall 1");
	first = tu_spawn(run_create_in, stalled);
	wait_fault_fired(&s->c, "stall");
	CHECK(fd = open(other, O_RDWR | O_CREAT | O_EXCL, 0600));
	CHECK(ftruncate(fd, 4096));
	CHECK(close(fd));
	CHECK(stat(other, &st));
	assert_int_equal(st.st_size, 4096);
	CHECK(unlink(other));
	CHECK_ERR(stat(stalled, &st), ENOENT); /* not there until its CREATE is done */
	arm(&s->c, "off");
	REAP_OK(first);
	CHECK(stat(stalled, &st));
	expect_consistent(&s->c, "create", "stall", 1, "after the creates");
	CHECK(unlink(stalled));
	CHECK(removexattr(a, POOLFS_XATTR_HOLD));
	CHECK(removexattr(b, POOLFS_XATTR_HOLD));
}

struct retry_arg {
	char path[PATH_MAX];   /* the first open's */
	char second[PATH_MAX]; /* the second open's */
	struct chan c;
};

/* The opener of the retry tests. Its first open's OPEN waits while the file it looked up goes,
 * so the kernel's retry finds no name: ENOENT, and the daemon still counts the thread as in a
 * retry. Its second open, with O_CREAT, must get a file that its name names. */
static int retry_opener(void *v)
{
	struct retry_arg *a = v;
	struct stat fst, nst;
	int fd;

	chan_child(&a->c);
	CHILD_CHECK(CHILD_WAIT_GO(&a->c) == 0, 1);
	fd = open(a->path, O_RDONLY | O_CLOEXEC);
	CHILD_CHECK(fd == -1 && errno == ENOENT, 2);
	CHILD_READY_THEN_GO(&a->c, 3);
	fd = open(a->second, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	CHILD_CHECK(fd >= 0, 5);
	CHILD_CHECK(fstat(fd, &fst) == 0 && stat(a->second, &nst) == 0, 6);
	CHILD_CHECK(fst.st_nlink == 1 && fst.st_ino == nst.st_ino, 7);
	CHILD_CHECK(close(fd) == 0, 8);
	return 0;
}

/* Start the opener on `name` (then `second`) and take it through its first open: it ends in a
 * failed retry. The opener is spawned first, so that it inherits none of the files the test
 * opens. */
static pid_t opener_after_failed_retry(struct fs_state *s, struct retry_arg *a, const char *name,
				       const char *second)
{
	pid_t opener;
	int held;

	snprintf(a->path, sizeof(a->path), "%s", name);
	snprintf(a->second, sizeof(a->second), "%s", second);
	chan_open(&a->c);
	opener = tu_spawn(retry_opener, a);
	chan_parent(&a->c);
	CHECK(held = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
	arm(&s->c, "open 1");
	PARENT_GO(&a->c);
	wait_fault_fired(&s->c, "open");
	CHECK(close(held)); /* the file goes while the opener's OPEN of it waits */
	ASSERT_GONE(name);
	arm(&s->c, "off");
	PARENT_WAIT_READY(&a->c);
	return opener;
}

/* Until `path` (an entry's /proc/self/fd link) is used by no handle or mapping. */

/* A retry's OPEN that waits (fault "open 1") on the file its LOOKUP found: `held`, a new file
 * of the same name opened here, with an O_PATH descriptor (`via` is its /proc/self/fd link) to
 * tell when it is unused. */
struct stalled_retry {
	int held, opath;
	char via[64];
};

/* Make the new file at `name`, let the opener (past its failed retry) open it, and wait until its
 * OPEN is stalled. */
static void stall_retry_on_new_file(struct fs_state *s, struct retry_arg *a, const char *name,
				    struct stalled_retry *r)
{
	CHECK(r->held = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
	CHECK(r->opath = open(name, O_PATH | O_CLOEXEC));
	snprintf(r->via, sizeof(r->via), "/proc/self/fd/%d", r->opath);
	arm(&s->c, "open 1");
	PARENT_GO(&a->c);
	wait_fault_fired(&s->c, "open"); /* its LOOKUP found the new file; the OPEN waits */
}

/* Let the stalled OPEN go: the opener must get the named file (retry_opener checks), the pool
 * must be consistent, and the file go with its last user. */
static void end_stalled_retry(struct fs_state *s, struct retry_arg *a, pid_t opener,
			      const char *name, struct stalled_retry *r)
{
	arm(&s->c, "off");
	REAP_OK(opener);
	chan_close_parent(&a->c);
	CHECK(close(r->opath));
	expect_consistent(&s->c, "open", "open", 1, "after the retry");
	ASSERT_GONE(name);
}

/* What a kernel retry of an open looked up keeps its name until that retry's OPEN comes
 * (fs/pool_stale.c), even when someone else opens and closes the file in between: else the
 * retry opens a nameless file while the program asked for the file of that name. The names in
 * a multi-user pool's root are looked up on every open, so each open here sends its LOOKUP. */
static void test_retry_opens_the_named_file(void **state)
{
	struct fs_state *s = *state;
	struct pool_fixture *p = tu_pool(state);
	PATH(name, p, "name");
	struct retry_arg a = {.path = ""};
	struct stalled_retry r;
	int other;
	pid_t opener = opener_after_failed_retry(s, &a, name, name);

	stall_retry_on_new_file(s, &a, name, &r);
	CHECK(other = open(name, O_RDWR | O_CLOEXEC));
	CHECK(close(other));
	CHECK(close(r.held));
	tu_wait_unused(r.via, GONE_MS);
	ASSERT_EXISTS(name);
	end_stalled_retry(s, &a, opener, name, &r);
}

/* How many threads' ESTALE the daemon tells apart (fs/pool_model.h POOL_STALE_SLOTS). */
#define STALE_SLOTS 64

/* A thread between its ESTALE and its retry's OPEN keeps its slot, and so its keep, however many
 * other threads are answered ESTALE meanwhile while slots are free (fs/pool_stale.c): else the
 * file its retry looked up goes, and its OPEN, a new open of a gone entry, is answered ESTALE
 * again, which the kernel does not retry twice. The other ESTALEs here are reopens of a removed
 * file through /proc/self/fd, each answered ESTALE once and then opened nameless, twice as many
 * as there are slots. */
static void test_retry_keeps_its_slot(void **state)
{
	struct fs_state *s = *state;
	struct pool_fixture *p = tu_pool(state);
	PATH(name, p, "name");
	PATH(removed, p, "removed");
	struct retry_arg a = {.path = ""};
	struct stalled_retry r;
	char reopen[64];
	int gone, fd;
	pid_t opener = opener_after_failed_retry(s, &a, name, name);

	CHECK(fd = open(removed, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
	CHECK(gone = open(removed, O_PATH | O_CLOEXEC));
	CHECK(close(fd));
	ASSERT_GONE(removed);
	snprintf(reopen, sizeof(reopen), "/proc/self/fd/%d", gone);
	stall_retry_on_new_file(s, &a, name, &r);
	CHECK(close(r.held));
	tu_wait_unused(r.via, GONE_MS);
	for (int i = 0; i < 2 * STALE_SLOTS; i++) {
		CHECK(fd = open(reopen, O_RDONLY | O_CLOEXEC));
		CHECK(close(fd));
	}
	ASSERT_EXISTS(name); /* still kept for the waiting OPEN */
	end_stalled_retry(s, &a, opener, name, &r);
	CHECK(close(gone));
}

/* A thread whose retry ended in an error is in no retry when it next meets a gone file: that
 * open is answered ESTALE and retried like any other, and with O_CREAT it makes a new file,
 * rather than opening the nameless one (whose data nobody could find by its name). The second
 * name is in a folder, where the kernel caches the name of a file in use: the opener's walk
 * reaches the file without a LOOKUP. Another file in use keeps the folder. */
static void test_failed_retry_then_a_new_open(void **state)
{
	struct fs_state *s = *state;
	struct pool_fixture *p = tu_pool(state);
	PATH(name, p, "name");
	PATH(dir, p, "dir");
	PATH(keep, p, "dir/keep");
	PATH(cached, p, "dir/cached");
	struct retry_arg a = {.path = ""};
	int held, kept;
	pid_t opener = opener_after_failed_retry(s, &a, name, cached);

	CHECK(mkdir(dir, 0700));
	CHECK(kept = open(keep, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
	CHECK(held = open(cached, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
	arm(&s->c, "open 1");
	PARENT_GO(&a.c);
	wait_fault_fired(&s->c, "open"); /* through the cached name; the OPEN waits */
	CHECK(close(held));
	ASSERT_GONE(cached);
	arm(&s->c, "off");
	REAP_OK(opener);
	chan_close_parent(&a.c);
	expect_consistent(&s->c, "open", "open", 1, "after the second open");
	ASSERT_GONE(cached);
	CHECK(close(kept));
	ASSERT_GONE(dir);
}

/* A file removed and unmapped gives its room back at once, as on tmpfs, even while the mapping
 * proof's own thread runs late, as on a loaded machine (here each of its steps waits 2 s first):
 * a resize that finds the pool full proves what it can itself (pool_room_wait, with the proof ops_files.c gives it). */
static void test_unmapped_room_comes_back_at_once(void **state)
{
	struct fs_state *s = *state;
	struct pool_fixture *p = tu_pool(state);
	PATH(mapped, p, "mapped");
	PATH(big, p, "big");
	char *m;
	int fd;

	if (pool_daemon_marks(p) < 0)
		TU_SKIP("passthrough only: on the page-cache path RELEASE comes after the last "
			"mapping, nothing to prove");
	CHECK(fd = open(mapped, O_RDWR | O_CREAT | O_EXCL, 0600));
	CHECK(ftruncate(fd, 2 * MIB));
	m = mmap(NULL, 2 * MIB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	memset(m, 'm', 2 * MIB); /* its pages are in the store */
	arm(&s->c, "proof 2000");
	CHECK(close(fd)); /* RELEASE while the mapping lives: the file waits for the proof */
	CHECK(unlink(mapped));
	CHECK(munmap(m, 2 * MIB)); /* nothing uses it any more: on tmpfs its room is back now */
	CHECK(fd = open(big, O_RDWR | O_CREAT | O_EXCL, 0600));
	if (fallocate(fd, 0, 0, 2 * MIB) < 0) {
		print_pool_state(s->c.mnt);
		fail_msg("fallocate of 2 MiB after the 2 MiB file went: %s", errname(errno));
	}
	arm(&s->c, "off");
	CHECK(close(fd));
	ASSERT_GONE(big);
}

/* The reaper is held with removed files' room still taken in a 3 MiB store: a 2 MiB fallocate of
 * a new file must wait for it (pool_room_wait) and succeed once it goes on, after `hold_ms`. */
static void fallocate_while_reaper_held(struct fs_state *s, struct pool_fixture *p, int hold_ms)
{
	PATH(big, p, "big");
	struct resize_job job = {.size = 2 * MIB, .allocate = true, .mnt = s->c.mnt};
	struct stat st;
	pid_t child;
	int status;

	CHECK(job.fd = open(big, O_RDWR | O_CREAT | O_EXCL, 0600));
	child = tu_spawn(run_resize, &job);
	pool_sleep_ms(hold_ms);
	arm(&s->c, "off");
	status = tu_reap(child, CHILD_MS);
	if (status != 0) {
		fprintf(stderr, "# then: %d backing files\n", pool_backing_files(p));
		print_pool_state(s->c.mnt);
		pool_dump_log(p);
		fail_msg("the fallocate ended with %d", status);
	}
	CHECK(fstat(job.fd, &st));
	assert_int_equal(st.st_size, 2 * MIB);
	expect_consistent(&s->c, "reap", "reap", 1, "after the fallocate");
	CHECK(close(job.fd)); /* nothing holds it: it goes */
	ASSERT_GONE(big);
}

/* A small removed file's backing file is unlinked by the reaper thread after the reply
 * (fs/pool_reaper.c): until then its room is still taken in the store, though the daemon's
 * count gave it back. A resize that the store refuses meanwhile waits for the reaper and tries
 * again (pool_room_wait). Here the reaper is stalled with 2.5 MiB of removed small files queued,
 * in a 3 MiB store, while a 2 MiB fallocate runs: it must succeed once the reaper goes on. */
static void test_reaped_room_comes_back(void **state)
{
	struct fs_state *s = *state;
	struct pool_fixture *p = tu_pool(state);
	static char data[64 * 1024];
	char name[PATH_MAX + 16];
	struct stat st;
	int fd;

	if (!p->private_store) {
		TU_SKIP("private store only: with backing=DIR the store has no bound of its own");
		return;
	}
	memset(data, 'r', sizeof(data));
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "%s/small-%d", p->mnt, i);
		CHECK(fd = open(name, O_RDWR | O_CREAT | O_EXCL, 0600));
		assert_int_equal(write(fd, data, sizeof(data)), (ssize_t)sizeof(data));
		CHECK(fsetxattr(fd, POOLFS_XATTR_HOLD, "pin", 3, 0)); /* kept until its unlink */
		CHECK(close(fd));
		CHECK(stat(name, &st)); /* idle and statted: its size is known, small */
	}
	arm(&s->c, "reap 1");
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "%s/small-%d", p->mnt, i);
		CHECK(unlink(name));
	}
	wait_fault_fired(&s->c, "reap");
	fallocate_while_reaper_held(s, p, 300);
}

/* A big removed file's data goes when the kernel forgets its inode: the FORGET hands its backing
 * file to the reaper, since a FORGET must not block on a big unlink (docs/design.md "The
 * LOOKUP/OPEN race"). Its name is gone before its room is back in the store, and the daemon's
 * count gave the room back already. A resize that the store refuses meanwhile waits for that
 * unlink and tries again (pool_room_wait). Here the unlink of a removed 2 MiB file is stalled,
 * in a 3 MiB store, while a 2 MiB fallocate runs: it must succeed once the unlink goes on.
 * Before the wait covered these unlinks, the fallocate failed with ENOSPC (with per-user
 * stores, faults/quota's EDQUOT from an ftruncate right after a removal). */
static void test_removed_room_comes_back(void **state)
{
	struct fs_state *s = *state;
	struct pool_fixture *p = tu_pool(state);
	PATH(gone, p, "gone");
	struct stat st;
	int fd;

	if (!p->private_store) {
		TU_SKIP("private store only: with backing=DIR the store has no bound of its own");
		return;
	}
	CHECK(fd = open(gone, O_RDWR | O_CREAT | O_EXCL, 0600));
	CHECK(ftruncate(fd, 2 * MIB)); /* allocated in the store too (backing_resize) */
	arm(&s->c, "reap 1");
	CHECK(close(fd)); /* its last use: removed, then unlinked by the reaper */
	wait_fault_fired(&s->c, "reap");
	CHECK_ERR(stat(gone, &st), ENOENT);
	fallocate_while_reaper_held(s, p, 500);
}

/* ---- every allocation site walked ---- */

/* Allocation sites no operation above reaches, and why. Each is still failed by the faultsim
 * daemon's hook; a new site that is neither walked nor listed here fails the test. A site is
 * named by its file and, for one site, a piece of its line (line numbers move). */
static const struct {
	const char *file;
	const char *line; /* NULL: every site in the file */
	const char *why;
} not_walked[] = {
	{"main.c", NULL, "the pool object, before the mount: no xattr can arm it yet"},
	{"pool_setup.c", NULL, "pool_init's root, before the mount"},
	{"watch.c", NULL, "the epoll thread's start and its registrations, before the mount"},
	{"notify.c", NULL, "the invalidation thread's start, before the mount"},
	{"mapping_proof.c", NULL, "the passthrough proof's start, before the mount"},
	{"pool_check.c", NULL, "the checker's own tallies: the check is what reads the pool"},
	{"backing.c", NULL,
	 "a user's first private store: multi-user pools with max_user_size only"},
	{"pool_usage.c", NULL,
	 "a user's first usage record: one user's pool has it from its set-up"},
	{"pool_holds.c", "s->cgroup = pool_strdup(",
	 "a cgroup hold's group: needs a writable cgroup2 (tests/holds)"},
	{"pool_core.c", "struct pending_inval *pi = pool_alloc(",
	 "a name for the kernel to drop: only when an entry the kernel caches goes, or a reply is "
	 "lost (the reply faults above), not under an allocation fault; on failure the name is "
	 "removed at once"},
};

/* Which excuses matched a site: one that matches none is stale (the test says so). */
static int excuse_used[ARRAY_SIZE(not_walked)];

static int site_excused(const char *file, const char *line)
{
	for (size_t i = 0; i < ARRAY_SIZE(not_walked); i++)
		if (strcmp(file, not_walked[i].file) == 0 &&
		    (!not_walked[i].line || strstr(line, not_walked[i].line))) {
			excuse_used[i] = 1;
			return 1;
		}
	return 0;
}

static int allocates(const char *line)
{
	static const char *const calls[] = {
		"fault_malloc(",  "fault_calloc(", "fault_calloc_benign(",
		"fault_realloc(", "fault_strdup(", "pool_alloc(",
		"pool_strdup(",	  "array_room(",   "FAULT_HERE,"};

	if (strstr(line, "#define") || strstr(line, "/*") || strstr(line, " * "))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++)
		if (strstr(line, calls[i]))
			return 1;
	return 0;
}

static int was_walked(const char *site)
{
	for (int i = 0; i < nwalked; i++)
		if (strcmp(walked_sites[i], site) == 0)
			return 1;
	return 0;
}

/* Runs last: the operations above walked every allocation site of fs/ but the excused ones. */
static void test_every_alloc_site_walked(void **state)
{
	const char *src = getenv("POOLFS_SRC");
	char dir[PATH_MAX], path[2 * PATH_MAX], line[1024];
	int sites = 0, missed = 0;
	struct dirent *e;
	DIR *d;

	(void)state;
	if (!src)
		TU_SKIP("POOLFS_SRC is not set: no source to read");
	if (!walks_ran)
		TU_SKIP("datapath %s not supported by this daemon: no walk ran",
			getenv("POOLFS_DATAPATH") ? getenv("POOLFS_DATAPATH") : "?");
	snprintf(dir, sizeof(dir), "%s/fs", src);
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		FILE *f;

		if (len < 3 || strcmp(e->d_name + len - 2, ".c") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "re");
		assert_non_null(f);
		for (int n = 1; fgets(line, sizeof(line), f); n++) {
			char site[300];

			if (!allocates(line))
				continue;
			snprintf(site, sizeof(site), "%s:%d", e->d_name, n);
			sites++;
			if (site_excused(e->d_name, line) || was_walked(site))
				continue;
			fprintf(stderr, "# allocation site %s: no fault landed on it\n", site);
			missed++;
		}
		fclose(f);
	}
	closedir(d);
	for (size_t i = 0; i < ARRAY_SIZE(not_walked); i++)
		if (!excuse_used[i]) {
			fprintf(stderr, "# excused site %s \"%s\" is no allocation site any more\n",
				not_walked[i].file, not_walked[i].line ? not_walked[i].line : "");
			missed++;
		}
	fprintf(stderr, "# %d allocation sites in fs/, %d walked\n", sites, nwalked);
	assert_true(sites > 0);
	assert_int_equal(missed, 0);
}

static int setup_small(void **state)
{
	return setup_opts(state, "autohold=none,uring=off,max_size=3145728");
}

static int setup_one_queue(void **state)
{
	return setup_opts(state, "autohold=none,uring=off");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		{"every_fault_point_autohold_none", test_every_fault_point, setup_strict, teardown,
		 NULL},
		{"every_fault_point_autohold_process", test_every_fault_point, setup_autohold,
		 teardown, NULL},
		{"late_forget_still_walked", test_late_forget_still_walked, setup_strict, teardown,
		 NULL},
		{"linger_walked", test_linger_walked, setup_linger, teardown, NULL},
		{"refused_mark_falls_back_to_the_store", test_refused_mark_falls_back_to_the_store,
		 setup_strict, teardown, NULL},
		{"resize_runs_outside_the_lock", test_resize_runs_outside_the_lock, setup_small,
		 teardown, NULL},
		{"create_runs_outside_the_lock", test_create_runs_outside_the_lock, setup_small,
		 teardown, NULL},
		{"retry_opens_the_named_file", test_retry_opens_the_named_file, setup_one_queue,
		 teardown, NULL},
		{"failed_retry_then_a_new_open", test_failed_retry_then_a_new_open, setup_one_queue,
		 teardown, NULL},
		{"retry_keeps_its_slot", test_retry_keeps_its_slot, setup_one_queue, teardown,
		 NULL},
		{"reaped_room_comes_back", test_reaped_room_comes_back, setup_small, teardown,
		 NULL},
		{"unmapped_room_comes_back_at_once", test_unmapped_room_comes_back_at_once,
		 setup_small, teardown, NULL},
		{"removed_room_comes_back", test_removed_room_comes_back, setup_small, teardown,
		 NULL},
		{"every_alloc_site_walked", test_every_alloc_site_walked, NULL, NULL, NULL},
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
