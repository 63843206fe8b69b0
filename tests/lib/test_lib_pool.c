/* libpoolfs and poolctl against a real pool (tests/integration/harness.h mounts one per test,
 * autohold=none unless a test says otherwise): holds of every scope and their ends, release,
 * refs and usage as the daemon reports them, the pool root, job folders, unique files, array
 * files living as long as their mapping, the numpy round trip inside a held job folder, and
 * poolctl's output and exit codes on a pool.
 * The whole binary is skipped (TAP "1..0 # SKIP") when no daemon is given or it refuses the
 * datapath (POOLFS_DATAPATH) as unsupported.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/xattr.h>

#include "harness.h"
#include "libtest.h"
#include "npy_roundtrip.h"

#define STAY_MS 300 /* how long something must survive to count as kept */

static const char *poolctl;

/* Mount p with autohold=none: 0, or -1 with the reason on stderr. */
static int mount_or_fail(struct pool_fixture *p)
{
	int r = pool_mount(p, "autohold=none");
	if (r < 0) {
		fprintf(stderr, "# pool_mount: %s\n", strerror(-r));
		return -1;
	}
	return 0;
}

/* The pool of a hold_cases row's test, and the row; p first, so teardown frees either. */
struct hold_fixture {
	struct pool_fixture p;
	const struct hold_case *hc;
};

static int setup(void **state)
{
	struct pool_fixture *p = calloc(1, sizeof *p);
	if (!p)
		return -1;
	if (mount_or_fail(p) < 0) {
		free(p);
		return -1;
	}
	*state = p;
	return 0;
}

static int teardown(void **state)
{
	struct pool_fixture *p = *state;
	if (!p)
		return 0;
	int r = pool_unmount(p);
	if (r < 0)
		fprintf(stderr, "# pool_unmount: %s\n", strerror(-r));
	free(p);
	return r < 0 ? -1 : 0;
}

static void ppath(const struct pool_fixture *p, const char *rel, char *buf, size_t len)
{
	assert_int_equal(pool_path(p, rel, buf, len), 0);
}

static int create_file(const char *path)
{
	int fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		fail_msg("create %s: %s", path, strerror(errno));
	return fd;
}

/* Still there after STAY_MS: whatever keeps it does. */
static void assert_stays(const char *path)
{
	pool_sleep_ms(STAY_MS);
	ASSERT_EXISTS(path);
}

#define CHECK_R(expr, want)                                                                        \
	do {                                                                                       \
		int r_ = (expr);                                                                   \
		if (r_ != (want))                                                                  \
			fail_msg("%s = %d (%s), want %d", #expr, r_, r_ < 0 ? strerror(-r_) : "-", \
				 (want));                                                          \
	} while (0)

/* poolfs_refs of path into *r (for the case's further checks) and its counts, every one, so
 * that a case states those it expects at 0 too. */
static void expect_refs(const char *path, struct poolfs_refs *r, uint64_t opens, int folder,
			uint64_t children, uint64_t nholds, unsigned nlisted)
{
	CHECK_R(poolfs_refs(path, r), 0);
	assert_int_equal(r->opens, opens);
	assert_int_equal(r->folder, folder);
	assert_int_equal(r->children, children);
	assert_int_equal(r->nholds, nholds);
	assert_int_equal(r->nlisted, nlisted);
}

/* ---- child processes that never outlive the test ------------------------------------------- */

struct child {
	pid_t pid;
	int go;	 /* our end: closing it lets the child exit */
	int res; /* the child's report: one int */
};

enum child_mode { CHILD_PLAIN, CHILD_SETSID, CHILD_CGROUP };

struct child_task {
	enum child_mode mode;
	const char *cgroup_procs; /* CHILD_CGROUP: the cgroup.procs to move into first */
	int (*fn)(void *);
	void *arg;
};

static void child_start(struct child *c, const struct child_task *t)
{
	int go[2], res[2];
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(res, O_CLOEXEC), 0);
	fflush(NULL);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		int r = 0;
		char b;
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* Keep only stdio and our two pipe ends: an inherited handle on a test file would keep
		 * it alive and hide what the holds do. */
		if (dup2(go[0], 100) < 0 || dup2(res[1], 101) < 0 || close_range(3, 99, 0) < 0 ||
		    close_range(102, ~0U, 0) < 0)
			_exit(3);
		go[0] = 100;
		res[1] = 101;
		if (t->mode == CHILD_SETSID && setsid() < 0)
			r = -errno;
		if (t->mode == CHILD_CGROUP) {
			int fd = open(t->cgroup_procs, O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, "0", 1) != 1)
				r = -errno;
			if (fd >= 0)
				close(fd);
		}
		if (r == 0 && t->fn)
			r = t->fn(t->arg);
		if (write(res[1], &r, sizeof r) != sizeof r)
			_exit(2);
		while (read(go[0], &b, 1) > 0)
			;
		_exit(0);
	}
	close(go[0]);
	close(res[1]);
	c->go = go[1];
	c->res = res[0];
}

/* What the child's fn returned. */
static int child_result(struct child *c)
{
	struct pollfd pfd = {.fd = c->res, .events = POLLIN};
	int r;
	assert_int_equal(poll(&pfd, 1, CHILD_MS), 1);
	assert_int_equal(read(c->res, &r, sizeof r), (ssize_t)sizeof r);
	return r;
}

/* Let the child exit and reap it. */
static void child_finish(struct child *c)
{
	int st;
	close(c->go);
	close(c->res);
	assert_int_equal(waitpid(c->pid, &st, 0), c->pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

struct hold_arg {
	const char *path;
	enum poolfs_scope scope;
	pid_t pid;
};

static int do_hold(void *a)
{
	struct hold_arg *h = a;
	return poolfs_hold(h->path, h->scope, h->pid);
}

/* The hold lines of refs, for messages. */
static const char *refs_text(const char *path)
{
	static char buf[4096];
	ssize_t n = getxattr(path, POOLFS_XATTR_REFS, buf, sizeof buf - 1);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static const struct poolfs_hold_info *find_hold(const struct poolfs_refs *r, const char *text)
{
	for (unsigned k = 0; k < r->nlisted; k++)
		if (strcmp(r->holds[k].text, text) == 0)
			return &r->holds[k];
	return NULL;
}

/* The hold `text` on path, as find_hold() gives it; fails the test, showing path's refs, if there
 * is none. Its callers use the hold without a NULL check of their own. */
static const struct poolfs_hold_info *must_find_hold(const struct poolfs_refs *r, const char *text,
						     const char *path)
{
	const struct poolfs_hold_info *h = find_hold(r, text);
	if (!h)
		fail_msg("no hold %s in:\n%s", text, refs_text(path));
	return h;
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_pool_root_and_usage(void **state)
{
	struct pool_fixture *p = *state;
	char d[PATH_MAX], e[PATH_MAX], f[PATH_MAX], root[PATH_MAX], real[PATH_MAX];
	struct poolfs_usage u;

	ppath(p, "d", d, sizeof d);
	ppath(p, "d/e", e, sizeof e);
	ppath(p, "d/e/f", f, sizeof f);
	assert_int_equal(mkdir(d, 0700), 0);
	assert_int_equal(mkdir(e, 0700), 0);
	int fd = create_file(f);
	char block[4096] = {1};
	assert_int_equal(write(fd, block, sizeof block), (ssize_t)sizeof block);

	assert_non_null(realpath(p->mnt, real));
	CHECK_R(poolfs_pool_root(f, root, sizeof root), 0);
	assert_string_equal(root, real);
	CHECK_R(poolfs_pool_root(p->mnt, root, sizeof root), 0);
	assert_string_equal(root, real);
	CHECK_R(poolfs_pool_root(e, root, strlen(real)), -ERANGE);
	CHECK_R(poolfs_pool_root(e, root, strlen(real) + 1), 0);

	CHECK_R(poolfs_usage(f, &u), 0);
	assert_string_equal(u.datapath, p->active_datapath);
	assert_int_equal(u.entries, 3);
	assert_true(u.bytes >= sizeof block);
	assert_int_equal(u.max_size, 0);
	assert_int_equal(u.max_user_size, 0);
	/* we are root: every user's line, here only ours */
	assert_int_equal(u.nusers, 1);
	assert_int_equal(u.users[0].uid, getuid());
	assert_int_equal(u.users[0].entries, 3);
	assert_int_equal(u.users[0].bytes, u.bytes);
	close(fd);
}

static void test_usage_limits(void **state)
{
	(void)state;
	struct pool_fixture p;
	struct poolfs_usage u;
	/* The daemon refuses max_user_size with passthrough (growing writes never reach it). */
	const char *dp = getenv("POOLFS_DATAPATH");
	bool user_quota = !dp || strcmp(dp, "pagecache") == 0;
	int r = pool_mount(&p, user_quota ? "autohold=none,max_size=64M,max_user_size=1G"
					  : "autohold=none,max_size=64M");
	if (r < 0)
		fail_msg("pool_mount with quotas: %s", strerror(-r));
	r = poolfs_usage(p.mnt, &u);
	int un = pool_unmount(&p);
	CHECK_R(r, 0);
	CHECK_R(un, 0);
	assert_int_equal(u.max_size, 64ull << 20);
	assert_int_equal(u.max_user_size, user_quota ? 1ull << 30 : 0);
	assert_int_equal(u.entries, 0);
}

static void test_hold_pin_and_release(void **state)
{
	struct pool_fixture *p = *state;
	char f[PATH_MAX];
	struct poolfs_refs r;

	ppath(p, "pinned", f, sizeof f);
	int fd = create_file(f);
	/* no hold yet: release says so, and refs sees our handle */
	CHECK_R(poolfs_release(f), -ENODATA);
	expect_refs(f, &r, 1, 0, 0, 0, 0);

	CHECK_R(poolfs_hold(f, POOLFS_SCOPE_PIN, 0), 0);
	CHECK_R(poolfs_hold(f, POOLFS_SCOPE_PIN, 0), 0); /* several holds on one entry */
	close(fd);
	assert_stays(f);
	expect_refs(f, &r, 0, 0, 0, 2, 2);
	for (unsigned k = 0; k < 2; k++) {
		assert_int_equal(r.holds[k].scope, POOLFS_SCOPE_PIN);
		assert_string_equal(r.holds[k].text, POOLFS_SCOPE_WORD_PIN);
		assert_int_equal(r.holds[k].uid, getuid());
	}
	/* one release drops all of ours, and the unused file goes */
	CHECK_R(poolfs_release(f), 0);
	ASSERT_GONE(f);
	CHECK_R(poolfs_release(f), -ENOENT);
	CHECK_R(poolfs_hold(f, POOLFS_SCOPE_PIN, 0), -ENOENT);
}

/* ---- holds that end with a process: one row a case ---- */

/* Who takes the hold: the test, for the child's pid, or the child itself. */
enum hold_taker { TAKER_TEST_FOR_CHILD, TAKER_CHILD };

struct hold_case {
	const char *name;
	enum child_mode mode; /* the child's set-up */
	enum hold_taker taker;
	enum poolfs_scope scope; /* asked for */
	const char *word;	 /* refs show "<word>:<child's pid>" */
	int check_info;		 /* and the parsed hold says scope and the child's pid */
};

static const struct hold_case hold_cases[] = {
	{"hold_pid_ends_with_that_process", CHILD_PLAIN, TAKER_TEST_FOR_CHILD, POOLFS_SCOPE_PID,
	 POOLFS_SCOPE_WORD_PID, 1},
	/* a process hold is reported as the pid of the process that took it */
	{"hold_process_ends_with_the_taker", CHILD_PLAIN, TAKER_CHILD, POOLFS_SCOPE_PROCESS,
	 POOLFS_SCOPE_WORD_PID, 0},
	/* the child leads a session of its own, so the session ends when it exits */
	{"hold_session_ends_with_its_leader", CHILD_SETSID, TAKER_CHILD, POOLFS_SCOPE_SESSION,
	 POOLFS_SCOPE_WORD_SESSION, 1},
};

static int setup_hold_case(void **state)
{
	const struct hold_case *hc = *state;
	struct hold_fixture *t = calloc(1, sizeof *t);

	if (!t)
		return -1;
	t->hc = hc;
	*state = t;
	if (mount_or_fail(&t->p) < 0) {
		free(t);
		*state = NULL;
		return -1;
	}
	return 0;
}

/* A closed file that only the row's hold keeps: it stays while the child runs, refs show the
 * hold as the row says, and it goes when the child has exited. */
static void test_hold_case(void **state)
{
	struct hold_fixture *t = *state;
	const struct hold_case *hc = t->hc;
	char f[PATH_MAX], want[64];
	struct poolfs_refs r;
	struct child c;

	ppath(&t->p, "held", f, sizeof f);
	int fd = create_file(f);
	struct hold_arg a = {f, hc->scope, 0};
	struct child_task task = {hc->mode, NULL, hc->taker == TAKER_CHILD ? do_hold : NULL, &a};
	child_start(&c, &task);
	CHECK_R(child_result(&c), 0);
	if (hc->taker == TAKER_TEST_FOR_CHILD)
		CHECK_R(poolfs_hold(f, hc->scope, c.pid), 0);
	close(fd);
	assert_stays(f);
	CHECK_R(poolfs_refs(f, &r), 0);
	snprintf(want, sizeof want, "%s:%ld", hc->word, (long)c.pid);
	const struct poolfs_hold_info *h = must_find_hold(&r, want, f);
	if (hc->check_info) {
		assert_int_equal(h->scope, hc->scope);
		assert_int_equal(h->pid, c.pid);
	}
	child_finish(&c);
	ASSERT_GONE(f);
}

static void test_hold_pid_of_gone_process_esrch(void **state)
{
	struct pool_fixture *p = *state;
	char f[PATH_MAX];
	struct poolfs_refs r;
	struct child c;
	struct child_task t = {CHILD_PLAIN, NULL, NULL, NULL};

	ppath(p, "forpid", f, sizeof f);
	child_start(&c, &t);
	assert_int_equal(child_result(&c), 0);
	child_finish(&c);
	/* the child has been reaped: its pid names no process */
	int fd = create_file(f);
	CHECK_R(poolfs_hold(f, POOLFS_SCOPE_PID, c.pid), -ESRCH);
	CHECK_R(poolfs_refs(f, &r), 0);
	assert_int_equal(r.nholds, 0);
	close(fd);
	ASSERT_GONE(f);
}

/* The first line of file that take() accepts (0: its answer is in buf), or -ENOENT. */
static int scan_lines(const char *file, int (*take)(char *line, char *buf, size_t len), char *buf,
		      size_t len)
{
	FILE *f = fopen(file, "re");
	char line[4096];
	int r = -ENOENT;
	if (!f)
		return -errno;
	while (r < 0 && fgets(line, sizeof line, f))
		r = take(line, buf, len);
	fclose(f);
	return r;
}

/* A mountinfo line of the cgroup2 mount: its mount point. */
static int take_cgroup2_mount(char *line, char *buf, size_t len)
{
	char mnt[PATH_MAX], fstype[64];
	const char *sep = strstr(line, " - ");
	if (!sep || sscanf(sep, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2") != 0)
		return -ENOENT;
	if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 || strlen(mnt) >= len)
		return -ENOENT;
	strcpy(buf, mnt);
	return 0;
}

/* The cgroup v2 line ("0::/x") of /proc/PID/cgroup: the path. */
static int take_cgroup2_path(char *line, char *buf, size_t len)
{
	if (strncmp(line, "0::", 3) != 0)
		return -ENOENT;
	line[strcspn(line, "\n")] = '\0';
	if (strlen(line + 3) >= len)
		return -ENOENT;
	strcpy(buf, line + 3);
	return 0;
}

/* The cgroup2 mountpoint from mountinfo (hybrid layouts put it at /sys/fs/cgroup/unified). */
static int cgroup2_mount(char *buf, size_t len)
{
	return scan_lines("/proc/self/mountinfo", take_cgroup2_mount, buf, len);
}

/* Our own cgroup v2 path ("0::/x" in /proc/self/cgroup). */
static int own_cgroup(char *buf, size_t len)
{
	return scan_lines("/proc/self/cgroup", take_cgroup2_path, buf, len);
}

static void test_hold_cgroup(void **state)
{
	struct pool_fixture *p = *state;
	char f[PATH_MAX], cg2[PATH_MAX], mine[PATH_MAX], dir[PATH_MAX], procs[PATH_MAX + 16],
		want[PATH_MAX];
	struct poolfs_refs r;

	ppath(p, "forcgroup", f, sizeof f);
	int fd = create_file(f);

	/* From where we are: a hold on our cgroup, or a clean refusal when there is none to watch
	 * (no cgroup2 mount, or we sit in its root group, which never empties). */
	bool have2 = cgroup2_mount(cg2, sizeof cg2) == 0 && own_cgroup(mine, sizeof mine) == 0;
	int h = poolfs_hold(f, POOLFS_SCOPE_CGROUP, 0);
	if (have2 && strcmp(mine, "/") != 0) {
		CHECK_R(h, 0);
		libtest_fmt(want, sizeof want, "cgroup:%s", mine);
		CHECK_R(poolfs_refs(f, &r), 0);
		must_find_hold(&r, want, f);
		CHECK_R(poolfs_release(f), 0);
	} else {
		CHECK_R(h, -ENOPROTOOPT);
	}

	/* A group of our own with one child in it: the hold ends when the child has gone. */
	if (!have2) {
		fprintf(stderr, "# no cgroup2 mount: only the refusal was checked\n");
		close(fd);
		return;
	}
	libtest_fmt(dir, sizeof dir, "%s/poolfs-libtest-%ld", cg2, (long)getpid());
	if (mkdir(dir, 0755) < 0) {
		fprintf(stderr,
			"# cannot create a cgroup under %s (%s): only the refusal was checked\n",
			cg2, strerror(errno));
		close(fd);
		return;
	}
	libtest_fmt(procs, sizeof procs, "%s/cgroup.procs", dir);
	struct hold_arg a = {f, POOLFS_SCOPE_CGROUP, 0};
	struct child_task t = {CHILD_CGROUP, procs, do_hold, &a};
	struct child c;
	child_start(&c, &t);
	int cr = child_result(&c);
	if (cr == -EACCES || cr == -EPERM || cr == -EBUSY || cr == -EOPNOTSUPP) {
		/* moving into the group was refused (controllers, delegation): not the library's business */
		fprintf(stderr,
			"# cannot move a process into %s (%s): only the refusal was checked\n", dir,
			strerror(-cr));
		child_finish(&c);
		rmdir(dir);
		close(fd);
		return;
	}
	CHECK_R(cr, 0);
	close(fd);
	assert_stays(f);
	libtest_fmt(want, sizeof want, "cgroup:%s", dir + strlen(cg2));
	CHECK_R(poolfs_refs(f, &r), 0);
	const struct poolfs_hold_info *hi = must_find_hold(&r, want, f);
	assert_int_equal(hi->scope, POOLFS_SCOPE_CGROUP);
	child_finish(&c);
	ASSERT_GONE(f);
	/* the group is empty now; the kernel may take a moment to let it go */
	for (int i = 0; i < 100 && rmdir(dir) < 0 && errno == EBUSY; i++)
		pool_sleep_ms(20);
}

static int try_hold_as_other(void *arg)
{
	return -poolfs_hold(arg, POOLFS_SCOPE_PIN, 0);
}

static int try_release_as_other(void *arg)
{
	return -poolfs_release(arg);
}

static int try_refs_as_other(void *arg)
{
	struct poolfs_refs r;
	return -poolfs_refs(arg, &r);
}

static void test_other_user(void **state)
{
	struct pool_fixture *p = *state;
	char f[PATH_MAX];

	ppath(p, "mine", f, sizeof f);
	int fd = create_file(f);
	CHECK_R(poolfs_hold(f, POOLFS_SCOPE_PIN, 0), 0);
	CHECK_R(run_as_user(OTHER_UID, OTHER_GID, try_hold_as_other, f), EACCES);
	CHECK_R(run_as_user(OTHER_UID, OTHER_GID, try_release_as_other, f), EACCES);
	CHECK_R(run_as_user(OTHER_UID, OTHER_GID, try_refs_as_other, f), EACCES);
	/* our hold is untouched */
	struct poolfs_refs r;
	CHECK_R(poolfs_refs(f, &r), 0);
	assert_int_equal(r.nholds, 1);
	CHECK_R(poolfs_release(f), 0);
	close(fd);
	ASSERT_GONE(f);
}

static void test_folder_hold_and_refs(void **state)
{
	struct pool_fixture *p = *state;
	char d[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
	struct poolfs_refs r;

	ppath(p, "dir", d, sizeof d);
	ppath(p, "dir/a", a, sizeof a);
	ppath(p, "dir/b", b, sizeof b);
	assert_int_equal(mkdir(d, 0700), 0);
	CHECK_R(poolfs_hold(d, POOLFS_SCOPE_PIN, 0), 0);
	close(create_file(a));
	close(create_file(b));
	assert_stays(a);
	ASSERT_EXISTS(b);
	expect_refs(d, &r, 0, 1, 2, 1, 1);
	/* the files have no hold of their own: the folder's keeps them */
	expect_refs(a, &r, 0, 0, 0, 0, 0);
	CHECK_R(poolfs_release(a), -ENODATA);
	CHECK_R(poolfs_release(d), 0);
	ASSERT_GONE(a);
	ASSERT_GONE(b);
	ASSERT_GONE(d);
}

static void check_job_name(const char *pool, const char *path)
{
	size_t n = strlen(pool);
	assert_memory_equal(path, pool, n);
	assert_memory_equal(path + n, "/job-", 5);
	assert_int_equal(strlen(path + n + 5), 36);
}

static void test_mkjob(void **state)
{
	struct pool_fixture *p = *state;
	char job[PATH_MAX], f[PATH_MAX], want[32];
	struct poolfs_refs r;

	CHECK_R(poolfs_mkjob(p->mnt, POOLFS_SCOPE_PIN, 0, job, sizeof job), 0);
	check_job_name(p->mnt, job);
	struct stat st;
	assert_int_equal(stat(job, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	CHECK_R(poolfs_refs(job, &r), 0);
	assert_int_equal(r.nholds, 1);
	assert_string_equal(r.holds[0].text, POOLFS_SCOPE_WORD_PIN);
	/* what goes in stays while the job is held, and everything goes with the hold */
	libtest_fmt(f, sizeof f, "%s/out.bin", job);
	close(create_file(f));
	assert_stays(f);
	CHECK_R(poolfs_release(job), 0);
	ASSERT_GONE(f);
	ASSERT_GONE(job);

	/* the default: our session */
	CHECK_R(poolfs_mkjob(p->mnt, POOLFS_SCOPE_SESSION, 0, job, sizeof job), 0);
	CHECK_R(poolfs_refs(job, &r), 0);
	snprintf(want, sizeof want, "session:%ld", (long)getsid(0));
	if (!find_hold(&r, want)) {
		/* our session leader may be gone: the daemon then holds for our own process */
		snprintf(want, sizeof want, "pid:%ld", (long)getpid());
		if (!find_hold(&r, want))
			fail_msg("no session hold in:\n%s", refs_text(job));
	}
	CHECK_R(poolfs_release(job), 0);
	ASSERT_GONE(job);

	/* a hold that cannot be taken leaves no folder behind */
	struct child c;
	struct child_task t = {CHILD_PLAIN, NULL, NULL, NULL};
	child_start(&c, &t);
	child_result(&c);
	child_finish(&c);
	CHECK_R(poolfs_mkjob(p->mnt, POOLFS_SCOPE_PID, c.pid, job, sizeof job), -ESRCH);
	/* out.bin's data goes at the kernel's FORGET, a moment after its name (docs/design.md
	 * "When removal happens") */
	assert_int_equal(pool_wait_backing_files(p, 0, GONE_MS), 0);
	DIR *d = opendir(p->mnt);
	struct dirent *e;
	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			fail_msg("left behind: %s", e->d_name);
	closedir(d);
}

static void test_mkunique(void **state)
{
	struct pool_fixture *p = *state;
	char path[PATH_MAX];

	int fd = poolfs_mkunique(p->mnt, "u-", ".bin", O_RDWR, 0600, path, sizeof path);
	assert_true(fd >= 0);
	ASSERT_EXISTS(path);
	assert_int_equal(write(fd, "abc", 3), 3);
	/* with autohold=none the handle is all that keeps it */
	close(fd);
	ASSERT_GONE(path);

	fd = poolfs_mkunique(p->mnt, NULL, NULL, O_RDWR, 0600, path, sizeof path);
	assert_true(fd >= 0);
	CHECK_R(poolfs_hold(path, POOLFS_SCOPE_PIN, 0), 0);
	close(fd);
	assert_stays(path);
	CHECK_R(poolfs_release(path), 0);
	ASSERT_GONE(path);
}

/* An array file lives as long as its mapping, after its descriptor is long closed. */
static void test_array_lifetime(void **state)
{
	struct pool_fixture *p = *state;
	char f[PATH_MAX];
	struct poolfs_array a, b;
	size_t shape[2] = {256, 512};

	ppath(p, "a.npy", f, sizeof f);
	CHECK_R(poolfs_array_create(f, POOLFS_DTYPE_F8, 2, shape, 0, &a), 0);
	libtest_npy_fill(&a);
	assert_stays(f);
	CHECK_R(poolfs_array_open(f, O_RDONLY, &b), 0);
	assert_int_equal(libtest_npy_check(&b), 0);
	assert_int_equal(b.nbytes, 256 * 512 * 8);
	CHECK_R(poolfs_array_close(&b), 0);
	/* a write through one mapping is seen by a new one */
	((double *)a.data)[1000] = -1.0;
	CHECK_R(poolfs_array_open(f, O_RDWR, &b), 0);
	assert_true(((double *)b.data)[1000] == -1.0);
	CHECK_R(poolfs_array_close(&b), 0);
	CHECK_R(poolfs_array_sync(&a), 0);
	ASSERT_EXISTS(f);
	CHECK_R(poolfs_array_close(&a), 0);
	ASSERT_GONE(f);

	/* create never clobbers */
	CHECK_R(poolfs_array_create(f, POOLFS_DTYPE_U1, 0, NULL, 0, &a), 0);
	CHECK_R(poolfs_array_create(f, POOLFS_DTYPE_U1, 0, NULL, 0, &b), -EEXIST);
	CHECK_R(poolfs_array_close(&a), 0);
	ASSERT_GONE(f);
}

/* A pool too small for the array: ENOSPC at create, and nothing left behind. */
static void test_array_full_pool(void **state)
{
	(void)state;
	struct pool_fixture p;
	char f[PATH_MAX];
	struct poolfs_array a;
	size_t shape[1] = {(size_t)8 << 20}; /* 64 MiB of doubles */

	int r = pool_mount(&p, "autohold=none,max_size=16M");
	if (r < 0)
		fail_msg("pool_mount with max_size: %s", strerror(-r));
	ppath(&p, "big.npy", f, sizeof f);
	r = poolfs_array_create(f, POOLFS_DTYPE_F8, 1, shape, 0, &a);
	struct stat st;
	int left = lstat(f, &st) == 0;
	int un = pool_unmount(&p);
	CHECK_R(r, -ENOSPC);
	assert_false(left);
	CHECK_R(un, 0);
}

static void test_numpy_roundtrip(void **state)
{
	struct pool_fixture *p = *state;
	char job[PATH_MAX];

	if (!libtest_have_numpy()) {
		fprintf(stderr,
			"# " PYTHON " cannot import numpy: the numpy round trip was not run\n");
		return;
	}
	/* numpy writes and closes before C reads: a held job folder keeps its files */
	CHECK_R(poolfs_mkjob(p->mnt, POOLFS_SCOPE_PIN, 0, job, sizeof job), 0);
	npy_rt_c_to_numpy(job);
	npy_rt_numpy_to_c(job);
	CHECK_R(poolfs_release(job), 0);
	ASSERT_GONE(job);
	assert_int_equal(pool_wait_backing_files(p, 0, GONE_MS), 0);
}

/* ---- poolctl on a pool -------------------------------------------------------------------- */

static struct run_result res;

/* Run poolctl with arguments ended by (char *)NULL, into res: its exit status. */
#define ctl(...) libtest_runl(&res, poolctl, __VA_ARGS__)

static void ctl_expect(int status, const char *out_has, const char *err)
{
	if (res.status != status || (out_has && !strstr(res.out, out_has)) ||
	    (err && strcmp(res.err, err) != 0))
		fail_msg(
			"poolctl exit %d (want %d)\nstdout:\n%s\nstderr:\n%s\nwanted stdout to hold: %s\n"
			"wanted stderr: %s",
			res.status, status, res.out, res.err, out_has ? out_has : "-",
			err ? err : "-");
}

/* poolctl stat of mnt until its stdout holds want, for up to GONE_MS: a removed entry is counted
 * until the kernel's FORGET of it, which comes a moment after its name is gone (docs/design.md
 * "When removal happens"). The last run's result stays in res for ctl_expect. */
static void ctl_stat_until(const char *mnt, const char *want)
{
	for (int waited = 0; waited < GONE_MS; waited += 20) {
		ctl("stat", mnt, (char *)NULL);
		if (res.status == 0 && strstr(res.out, want))
			return;
		usleep(20 * 1000);
	}
	ctl("stat", mnt, (char *)NULL);
}

static void test_poolctl(void **state)
{
	struct pool_fixture *p = *state;
	char f[PATH_MAX], f2[PATH_MAX + 8], missing[PATH_MAX], pid[16], want[PATH_MAX + 128],
		job[PATH_MAX];
	struct child c;
	struct child_task t = {CHILD_PLAIN, NULL, NULL, NULL};

	ppath(p, "ctl", f, sizeof f);
	ppath(p, "missing", missing, sizeof missing);
	int fd = create_file(f);

	ctl("release", f, (char *)NULL);
	libtest_fmt(want, sizeof want, "poolctl: release: %s: no hold of yours on this entry\n", f);
	ctl_expect(1, NULL, want);

	child_start(&c, &t);
	child_result(&c);
	snprintf(pid, sizeof pid, "%ld", (long)c.pid);
	ctl("hold", "--pid", pid, f, (char *)NULL);
	ctl_expect(0, NULL, "");
	close(fd);
	assert_stays(f);
	ctl("refs", f, (char *)NULL);
	libtest_fmt(want, sizeof want,
		    "%s\n  opens     0\n  mapped    no\n  names     1\n  holds     1\n    pid:%s",
		    f, pid);
	ctl_expect(0, want, "");
	assert_non_null(strstr(res.out, "uid 0 (root)"));
	/* A hard link is a second name of the same entry. */
	snprintf(f2, sizeof f2, "%s.link", f);
	assert_int_equal(link(f, f2), 0);
	ctl("refs", f2, (char *)NULL);
	ctl_expect(0, "  names     2\n", "");
	assert_int_equal(unlink(f2), 0);

	ctl("hold", "--pin", f, missing, (char *)NULL);
	libtest_fmt(want, sizeof want, "poolctl: hold: %s: %s\n", missing, strerror(ENOENT));
	ctl_expect(1, NULL, want);
	ctl("refs", f, (char *)NULL);
	ctl_expect(0, "  holds     2\n", "");
	ctl("release", f, (char *)NULL);
	ctl_expect(0, NULL, "");
	ASSERT_GONE(f);
	child_finish(&c);

	/* a process that has gone */
	fd = create_file(f);
	ctl("hold", "--pid", pid, f, (char *)NULL);
	libtest_fmt(want, sizeof want, "poolctl: hold: %s: no such process to hold for\n", f);
	ctl_expect(1, NULL, want);
	close(fd);
	ASSERT_GONE(f);

	libtest_fmt(want, sizeof want, "pool           %s\ndatapath       %s\nentries        0\n",
		    p->mnt, p->active_datapath);
	ctl_stat_until(p->mnt, want);
	ctl_expect(0, want, "");
	assert_non_null(strstr(res.out, "max_size       unlimited\n"));

	ctl("mkjob", "--pin", p->mnt, (char *)NULL);
	ctl_expect(0, NULL, "");
	size_t n = strlen(res.out);
	assert_true(n > 0 && res.out[n - 1] == '\n');
	res.out[n - 1] = '\0';
	snprintf(job, sizeof job, "%s", res.out);
	check_job_name(p->mnt, job);
	assert_stays(job);
	ctl("refs", job, (char *)NULL);
	ctl_expect(0, "  children  0\n  holds     1\n    pin", "");
	ctl("mkunique", "--prefix", "x-", job, (char *)NULL);
	ctl_expect(0, NULL, "");
	res.out[strcspn(res.out, "\n")] = '\0';
	snprintf(f, sizeof f, "%s", res.out);
	assert_stays(f); /* the job's hold keeps it */
	ctl("stat", job, (char *)NULL);
	ctl_expect(0, "entries        2\n", "");
	ctl("release", job, (char *)NULL);
	ctl_expect(0, NULL, "");
	ASSERT_GONE(f);
	ASSERT_GONE(job);

	/* in the bare pool with autohold=none, the new file goes as soon as poolctl closes it */
	ctl("mkunique", p->mnt, (char *)NULL);
	ctl_expect(0, NULL, "");
	res.out[strcspn(res.out, "\n")] = '\0';
	ASSERT_GONE(res.out);

	ctl("refs", missing, (char *)NULL);
	libtest_fmt(want, sizeof want, "poolctl: refs: %s: %s\n", missing, strerror(ENOENT));
	ctl_expect(1, NULL, want);
}

/* Row i of hold_cases as a test case of its own, named after the row. */
#define HOLD_CASE(i)                                                                               \
	{                                                                                          \
		.name = hold_cases[i].name, .test_func = test_hold_case,                           \
		.setup_func = setup_hold_case, .teardown_func = teardown,                          \
		.initial_state = (void *)&hold_cases[i],                                           \
	}
_Static_assert(sizeof hold_cases / sizeof hold_cases[0] == 3,
	       "each row of hold_cases needs its HOLD_CASE(i) line in main()");

/* A test on a pool of its own (setup mounts it, teardown unmounts it). */
#define T(test) cmocka_unit_test_setup_teardown(test, setup, teardown)

int main(void)
{
	poolctl = getenv("POOLCTL");
	if (!getenv("POOLFS_BIN"))
		return tu_skip_all("POOLFS_BIN is not set: no daemon to mount a pool with");
	if (!poolctl || access(poolctl, X_OK) < 0)
		return tu_skip_all("POOLCTL is not set to the poolctl binary");

	/* One probe mount: a datapath this daemon or kernel cannot do skips the whole binary. */
	struct pool_fixture probe;
	int r = pool_mount(&probe, "autohold=none");
	if (r == -EOPNOTSUPP) {
		char why[128];

		snprintf(why, sizeof(why), "datapath %s not supported by this daemon",
			 getenv("POOLFS_DATAPATH") ? getenv("POOLFS_DATAPATH") : "(default)");
		return tu_skip_all(why);
	}
	if (r < 0) {
		fprintf(stderr, "# cannot mount a pool: %s\n", strerror(-r));
		printf("Bail out! cannot mount a pool\n");
		return 1;
	}
	pool_unmount(&probe);

	const struct CMUnitTest tests[] = {
		T(test_pool_root_and_usage),
		cmocka_unit_test(test_usage_limits),
		T(test_hold_pin_and_release),
		HOLD_CASE(0),
		HOLD_CASE(1),
		HOLD_CASE(2),
		T(test_hold_pid_of_gone_process_esrch),
		T(test_hold_cgroup),
		T(test_other_user),
		T(test_folder_hold_and_refs),
		T(test_mkjob),
		T(test_mkunique),
		T(test_array_lifetime),
		cmocka_unit_test(test_array_full_pool),
		T(test_numpy_roundtrip),
		T(test_poolctl),
	};
	return cmocka_run_group_tests_name("lib_pool", tests, NULL, NULL);
}
