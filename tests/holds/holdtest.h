/* What only the hold tests (tests/holds) add to testutil.h: longer bounds, a "stays" check, test
 * state with cgroups, whether a process still runs, pipes that carry ints (pids) from children and
 * grandchildren (which come back to us because main() makes the test a child subreaper),
 * user.poolfs.refs reading, and test cgroups under the cgroup2 mount. The pool fixture, checks,
 * child tracking and reaping are testutil.h's. */
#ifndef POOLFS_HOLDTEST_H
#define POOLFS_HOLDTEST_H

#include <dirent.h>

/* Bounds, never timings: hold ends take the daemon more steps (and valgrind is slow). */
#define GONE_MS 10000

#include "testutil.h"

#define HOLD_XATTR "user.poolfs.hold"
#define REFS_XATTR "user.poolfs.refs"

/* How long a "stays" check gives the daemon to (wrongly) remove an entry after the event that
 * must not end its hold. Not a timing assertion: a correct daemon passes at any speed. It must
 * outlast what can delay a removal the daemon has decided on: the 500 ms grace an entry gets
 * after a LOOKUP made while it was in use (our own lstat/getxattr), and the passthrough path's
 * 1 s re-probe of maybe-mapped entries; shorter, a wrongly ended hold would go unnoticed. */
#define SETTLE_MS 1500

/* The entry must still be there after the daemon had SETTLE_MS to act on what just happened. */
#define ASSERT_STAYS(path)                                                                    \
	do {                                                                                  \
		pool_sleep_ms(SETTLE_MS);                                                     \
		ASSERT_EXISTS(path);                                                          \
	} while (0)

/* ---- one pool per test ---- */

#define MAX_CGROUPS 4

struct htest {
	struct tu_fixture f;		/* first: tu_pool and tu_backing_back_to_base take *state */
	char cgroups[MAX_CGROUPS][PATH_MAX]; /* test cgroups to remove at teardown */
};

static inline int htest_setup(void **state, const char *opts)
{
	return tu_setup_sized(state, opts, sizeof(struct htest));
}

/* ---- processes ---- */

/* Whether pid still runs (not a zombie). */
static inline int ht_running(pid_t pid)
{
	char path[64], buf[512];
	FILE *f;
	int running = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f)) {
		char *rp = strrchr(buf, ')');

		running = rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
	}
	fclose(f);
	return running;
}

/* ---- pipes between the test and its processes ----
 * testutil.h's struct chan (chan_open), used as a link: up: processes send ints (a pid, a
 * "ready" mark) to the test; down: the test sends one byte per "go". A dead peer reads as EOF, so
 * nobody waits forever. A closed end is set to -1, so link_drop works in any process. */

/* In the process at the far end: keep up[1] and down[0]. */
static inline void link_far_end(struct chan *l)
{
	close(l->up[0]);
	close(l->down[1]);
	l->up[0] = l->down[1] = -1;
}

/* In a process that is not at either end (e.g. the parent of a grandchild). */
static inline void link_drop(struct chan *l)
{
	for (int i = 0; i < 2; i++) {
		if (l->up[i] >= 0)
			close(l->up[i]);
		if (l->down[i] >= 0)
			close(l->down[i]);
		l->up[i] = l->down[i] = -1;
	}
}

/* In the test after forking: keep up[0] and down[1]. */
static inline void link_near_end(struct chan *l)
{
	close(l->up[1]);
	close(l->down[0]);
	l->up[1] = l->down[0] = -1;
}

static inline int link_send(struct chan *l, int v)
{
	return write(l->up[1], &v, sizeof(v)) == (ssize_t)sizeof(v) ? 0 : -EPIPE;
}

/* 0 and *v, -EPIPE (all senders gone), -ETIMEDOUT */
static inline int link_recv(struct chan *l, int *v, int timeout_ms)
{
	int r = fd_wait_readable(l->up[0], timeout_ms);

	if (r < 0)
		return r;
	return read(l->up[0], v, sizeof(*v)) == (ssize_t)sizeof(*v) ? 0 : -EPIPE;
}

/* Far end: wait for one "go" byte: 0, -EPIPE (the test is gone), -ETIMEDOUT */
static inline int link_wait_go(struct chan *l)
{
	return chan_get(l->down[0], 10 * CHILD_MS);
}

#define LINK_GO(l) CHECK_0(write((l)->down[1], "g", 1) == 1 ? 0 : -EPIPE)

/* The test receives an int from the far end; fails the test on EOF or timeout. */
#define LINK_RECV(l, var)                                                                     \
	do {                                                                                  \
		int r_ = link_recv((l), &(var), CHILD_MS);                                    \
		if (r_ != 0)                                                                  \
			fail_msg("%s:%d: no message from the child: %s", __FILE__, __LINE__,      \
				 errname(-r_));                                               \
	} while (0)

static inline void link_close_near(struct chan *l)
{
	link_drop(l);
}

/* ---- holds and refs ---- */

static inline int hold(const char *path, const char *scope)
{
	return setxattr(path, HOLD_XATTR, scope, strlen(scope), 0);
}

/* The refs text of path, NUL-terminated in buf: its length, or -1 and errno. */
static inline ssize_t refs(const char *path, char *buf, size_t len)
{
	ssize_t n = getxattr(path, REFS_XATTR, buf, len - 1);

	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* Whether text holds the exact line (without its "\n"). */
static inline int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
		if (strncmp(s, line, n) == 0 && s[n] == '\n')
			return 1;
	return 0;
}

#define ASSERT_REFS_LINE(path, line)                                                          \
	do {                                                                                  \
		char rb_[4096];                                                               \
		if (refs((path), rb_, sizeof(rb_)) < 0)                                       \
			fail_msg("%s:%d: getxattr(%s, refs): %s", __FILE__, __LINE__, (path),     \
				 errname(errno));                                             \
		if (!has_line(rb_, (line)))                                                   \
			fail_msg("%s:%d: refs of %s lack the line \"%s\":\n%s", __FILE__,         \
				 __LINE__, (path), (line), rb_);                              \
	} while (0)

/* ---- files ---- */

/* Create path (exclusive) with a few bytes and close it: 0 or -errno. */
static inline int make_closed_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (write(fd, "hold me\n", 8) != 8) {
		int e = errno;

		close(fd);
		return -e;
	}
	return close(fd) == 0 ? 0 : -errno;
}

/* ---- cgroup v2 ---- */

/* The cgroup2 mount point from /proc/self/mountinfo: 0, or -ENOENT. */
static inline int cg2_mount(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], fstype[64];
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(dash, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2") != 0)
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		if ((size_t)snprintf(buf, len, "%s", mnt) < len)
			r = 0;
		break;
	}
	fclose(f);
	return r;
}

/* pid's cgroup v2 path (the "0::" line of /proc/PID/cgroup): 0 or -errno. */
static inline int cg2_of(pid_t pid, char *buf, size_t len)
{
	char path[64], line[PATH_MAX + 8];
	FILE *f;
	int r = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			r = (size_t)snprintf(buf, len, "%s", line + 3) < len ? 0 : -ENAMETOOLONG;
			break;
		}
	fclose(f);
	return r;
}

static inline int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int e;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	e = errno;
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -(n < 0 ? e : EIO);
}

/* Move pid (0: the caller) into the cgroup directory dir: 0 or -errno. */
static inline int cg2_move(const char *dir, pid_t pid)
{
	char path[3 * PATH_MAX], v[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(v, sizeof(v), "%d", (int)pid);
	return write_str(path, v);
}

/* 1 populated, 0 empty, -errno */
static inline int cg2_populated(const char *dir)
{
	char path[PATH_MAX + 32], buf[512];
	int fd;
	ssize_t n;
	const char *pop;

	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	pop = strstr(buf, "populated ");
	return pop ? pop[10] == '1' : -EIO;
}

/* Create a test cgroup under the cgroup2 mount (dir: its absolute path) and check that a process
 * can be moved into it (a throwaway child tries). Returns 0, or -errno with the reason in msg
 * (the test should then skip). */
static inline int cg2_create(struct htest *t, char *dir, size_t dlen, char *msg, size_t mlen)
{
	static int seq;
	char root[PATH_MAX];
	int slot = -1, r, status;
	pid_t pid;

	for (int i = 0; i < MAX_CGROUPS; i++)
		if (!t->cgroups[i][0]) {
			slot = i;
			break;
		}
	if (slot < 0) {
		snprintf(msg, mlen, "too many test cgroups");
		return -ENOSPC;
	}
	r = cg2_mount(root, sizeof(root));
	if (r < 0) {
		snprintf(msg, mlen, "no cgroup2 mount in /proc/self/mountinfo");
		return r;
	}
	if ((size_t)snprintf(dir, dlen, "%s/poolfs-holds-%d-%d", root, (int)getpid(), ++seq) >= dlen)
		return -ENAMETOOLONG;
	if (mkdir(dir, 0755) == -1) {
		r = -errno;
		snprintf(msg, mlen, "cannot create a cgroup under the cgroup2 mount %s: %s", root,
			 strerror(-r));
		return r;
	}
	snprintf(t->cgroups[slot], sizeof(t->cgroups[slot]), "%s", dir);

	fflush(NULL);
	pid = fork();
	if (pid == -1)
		return -errno;
	if (pid == 0) {
		r = cg2_move(dir, 0);
		_exit(r < 0 ? -r : 0);
	}
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		r = WIFEXITED(status) ? -WEXITSTATUS(status) : -EINTR;
		snprintf(msg, mlen, "cannot move a process into the cgroup %s: %s", dir,
			 strerror(-r));
		return r;
	}
	return 0;
}

/* Kill what is left in our test cgroups (only our processes can be there) and remove them. */
static inline void cg2_remove_all(struct htest *t)
{
	for (int i = 0; i < MAX_CGROUPS; i++) {
		char path[PATH_MAX + 32], line[64];
		long long deadline = pool_now_ms() + 5000;
		FILE *f;

		if (!t->cgroups[i][0])
			continue;
		snprintf(path, sizeof(path), "%s/cgroup.procs", t->cgroups[i]);
		f = fopen(path, "re");
		if (f) {
			while (fgets(line, sizeof(line), f)) {
				pid_t pid = (pid_t)atoi(line);

				if (pid > 0) {
					fprintf(stderr, "# killing leftover %d in %s\n", (int)pid,
						t->cgroups[i]);
					kill(pid, SIGKILL);
					waitpid(pid, NULL, WNOHANG);
				}
			}
			fclose(f);
		}
		while (rmdir(t->cgroups[i]) == -1 && errno == EBUSY && pool_now_ms() < deadline)
			pool_sleep_ms(10);
		if (access(t->cgroups[i], F_OK) == 0)
			fprintf(stderr, "# cannot remove test cgroup %s: %s\n", t->cgroups[i],
				strerror(errno));
		t->cgroups[i][0] = '\0';
	}
}

/* Skip the running test: no writable cgroup2 here. */
#define CGROUP_OR_SKIP(t, dir)                                                                \
	do {                                                                                  \
		char msg_[PATH_MAX + 128];                                                    \
		int r_ = cg2_create((t), (dir), sizeof(dir), msg_, sizeof(msg_));             \
		if (r_ < 0) {                                                                 \
			fprintf(stderr, "# no writable cgroup2 (%s): skipping\n", msg_);          \
			skip();                                                               \
		}                                                                             \
	} while (0)

static inline int htest_teardown(void **state)
{
	struct htest *t = *state;

	if (!t)
		return 0;
	/* The cgroups can only go once the processes in them are dead. */
	tu_kill_children();
	cg2_remove_all(t);
	return tu_teardown(state);
}

/* Every test binary's main() calls this first: orphaned grandchildren come back to us, so a
 * test can reap them by pid and teardown can kill them. HOLDS_TEST_FILTER (a cmocka pattern,
 * e.g. "test_session*") runs only the matching tests. */
static inline void htest_init(void)
{
	const char *filter = getenv("HOLDS_TEST_FILTER");

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (filter && filter[0])
		cmocka_set_test_filter(filter);
}

#endif
