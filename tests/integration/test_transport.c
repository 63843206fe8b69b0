/* Transport (docs/interface.md "Transport"): uring=on really carries requests over io_uring,
 * uring=off and an unavailable io_uring use /dev/fuse, and uring=on is refused (exit 3) where it
 * cannot be had. The evidence is the daemon's own: its io_uring descriptors in /proc/PID/fd and
 * their completion counters in /proc/PID/fdinfo, which must grow with the requests we make. */
#include "itest.h"
#include "procfs.h"

#include <dirent.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

/* What this machine should give: the build has io_uring (libfuse >= 3.18) and the kernel's switch
 * is on. Read the same way the daemon reads it, so the test follows the admin's setting. */
static int uring_expected(void)
{
#ifdef POOLFS_HAVE_URING
	FILE *f = fopen("/sys/module/fuse/parameters/enable_uring", "re");
	int c;

	if (!f)
		return 0;
	c = fgetc(f);
	fclose(f);
	return c == 'Y' || c == 'y' || c == '1';
#else
	return 0;
#endif
}

/* Number of io_uring instances the daemon holds; *cq_total gets the sum of their CqTail (the
 * completions the kernel posted: one per request handed to the daemon over a ring). */
static int daemon_rings(pid_t pid, unsigned long long *cq_total)
{
	int ring[256], rings = proc_find_fds(pid, "anon_inode:[io_uring]", ring, 256);
	char path[64], line[256];

	*cq_total = 0;
	assert_true(rings >= 0);
	for (int i = 0; i < rings; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, ring[i]);
		f = fopen(path, "re");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f)) {
			unsigned long long v;

			if (sscanf(line, "CqTail: %llu", &v) == 1)
				*cq_total += v;
		}
		fclose(f);
	}
	return rings;
}

/* Requests that must reach the daemon: new names are never in the kernel's caches. */
static void make_files(const struct pool_fixture *p, const char *prefix, int n)
{
	char path[PATH_MAX], rel[64];

	for (int i = 0; i < n; i++) {
		int fd;

		snprintf(rel, sizeof(rel), "%s-%d", prefix, i);
		assert_int_equal(pool_path(p, rel, path, sizeof(path)), 0);
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, "x", 1), 1);
		assert_int_equal(close(fd), 0);
	}
}

static int log_has(const struct pool_fixture *p, const char *needle)
{
	char line[1024];
	FILE *f = fopen(p->log, "re");
	int yes = 0;

	if (!f)
		return 0;
	while (!yes && fgets(line, sizeof(line), f))
		yes = strstr(line, needle) != NULL;
	fclose(f);
	return yes;
}

/* The rings carry the requests: completions grow by at least one per created file. */
static void assert_requests_over_rings(struct pool_fixture *p)
{
	unsigned long long before, after;
	int rings = daemon_rings(p->daemon_pid, &before);

	if (rings < 1)
		fail_msg("the daemon holds no io_uring instance");
	make_files(p, "ring", 20);
	assert_int_equal(daemon_rings(p->daemon_pid, &after), rings);
	if (after < before + 20)
		fail_msg("io_uring completions grew by %llu for 20 creates", after - before);
	assert_true(log_has(p, "transport=io_uring in use"));
}

static void test_uring_on(void **state)
{
	struct pool_fixture p;
	int r;

	(void)state;
	r = pool_mount(&p, "autohold=none,uring=on");
	if (!uring_expected()) {
		/* Refused before mounting with exit 3, the contract's "not available here" (the
		 * harness's other sign of it, a message about the datapath, cannot apply). */
		if (r == 0)
			pool_unmount(&p);
		assert_int_equal(r, -EOPNOTSUPP);
		return;
	}
	assert_int_equal(r, 0);
	assert_true(log_has(&p, "transport=io_uring requested (uring=on"));
	assert_requests_over_rings(&p);
	assert_int_equal(pool_unmount(&p), 0);
}

/* uring=off wins even over libfuse's own switches: its -o io_uring (libfuse >= 3.18 only) and
 * its FUSE_URING_ENABLE environment variable. */
static void test_uring_off(void **state)
{
	struct pool_fixture p;
	unsigned long long cq;
#ifdef POOLFS_HAVE_URING
	const char *opts = "autohold=none,uring=off,io_uring";
#else
	const char *opts = "autohold=none,uring=off";
#endif

	(void)state;
	assert_int_equal(setenv("FUSE_URING_ENABLE", "1", 1), 0);
	assert_int_equal(pool_mount(&p, opts), 0);
	assert_int_equal(unsetenv("FUSE_URING_ENABLE"), 0);
	make_files(&p, "dev", 20);
	assert_int_equal(daemon_rings(p.daemon_pid, &cq), 0);
	assert_true(log_has(&p, "transport=/dev/fuse (uring=off)"));
	assert_false(log_has(&p, "transport=io_uring"));
	assert_int_equal(pool_unmount(&p), 0);
}

/* The default: io_uring where this build and kernel have it, /dev/fuse (said so) elsewhere. */
static void test_uring_auto(void **state)
{
	struct pool_fixture p;
	unsigned long long cq;

	(void)state;
	assert_int_equal(pool_mount(&p, "autohold=none"), 0);
	if (uring_expected()) {
		assert_true(log_has(&p, "transport=io_uring requested (uring=auto"));
		assert_requests_over_rings(&p);
	} else {
		make_files(&p, "dev", 20);
		assert_int_equal(daemon_rings(p.daemon_pid, &cq), 0);
		assert_true(log_has(&p, "using /dev/fuse") || log_has(&p, "transport=/dev/fuse"));
	}
	assert_int_equal(pool_unmount(&p), 0);
}

/* ---- a daemon killed while it serves over io_uring ---- */

#define FUSECTL "/sys/fs/fuse/connections"

/* What the test holds of a killed daemon while auto_unmount's helper decides. */
/* What keeps a killed daemon's connection alive past its death. */
struct held_conn {
	int fd[16]; /* the daemon's io_uring instances or /dev/fuse, taken with pidfd_getfd */
	int n;
	int helper;		/* pidfd of its `fusermount3 --auto-unmount` */
	char waiting[PATH_MAX]; /* the connection's request count in the fusectl file system */
	const char *why;	/* what ended the wait */
};

/* The FUSE connection's number: the minor of the mount's device in /proc/self/mountinfo. */
static int fuse_connection_of(const char *mnt)
{
	dev_t dev;

	return mountinfo_fuse_dev("/proc/self/mountinfo", mnt, &dev) == 0 ? (int)minor(dev) : -1;
}

/* The pid of the auto_unmount helper libfuse started for MNT, or -1: `fusermount3 --auto-unmount
 * -- MNT` from libfuse 3.17 on, the mounting `fusermount3 -o ...,auto_unmount -- MNT` that stays
 * before. */
static pid_t auto_unmount_helper(const char *mnt)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = -1;

	assert_non_null(d);
	while (found < 0 && (e = readdir(d))) {
		char path[300], args[PATH_MAX + 64];
		const char *last = NULL;
		ssize_t n;
		int fd;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, args, sizeof(args) - 1);
		close(fd);
		if (n <= 0)
			continue;
		args[n] = '\0';
		if (!strstr(args, "fusermount3") ||
		    (!memmem(args, (size_t)n, "--auto-unmount", 14) &&
		     !memmem(args, (size_t)n, "auto_unmount", 12)))
			continue;
		for (ssize_t i = 0; i < n; i += (ssize_t)strlen(args + i) + 1)
			last = args + i;
		if (last && strcmp(last, mnt) == 0)
			found = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	return found;
}

/* Take the daemon's descriptors whose /proc link reads `target`: held here, they outlive it. */
static void hold_fds(pid_t daemon, const char *target, struct held_conn *h)
{
	int fd[ARRAY_SIZE(h->fd)];
	int pidfd = (int)syscall(SYS_pidfd_open, daemon, 0);
	int n = proc_find_fds(daemon, target, fd, (int)ARRAY_SIZE(fd) - h->n);

	assert_true(pidfd >= 0);
	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		h->fd[h->n] = (int)syscall(SYS_pidfd_getfd, pidfd, fd[i], 0);
		if (h->fd[h->n] >= 0)
			h->n++;
	}
	close(pidfd);
}

static int requests_waiting(const struct held_conn *h)
{
	FILE *f = fopen(h->waiting, "re");
	int n = 0;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n;
}

/* After the daemon's death: keep its connection until auto_unmount's helper has decided (it
 * exited) or a request waits on the dead connection (the helper's own open, or a guard's before
 * it), then let it go. */
static void release_once_looked_at(struct pool_fixture *p, void *arg)
{
	struct held_conn *h = arg;
	long long until = pool_now_ms() + GONE_MS;

	(void)p;
	h->why = "neither the helper exited nor a request waited";
	while (pool_now_ms() < until) {
		struct pollfd pfd = {.fd = h->helper, .events = POLLIN};

		if (poll(&pfd, 1, 2) > 0) {
			h->why = "auto_unmount's helper exited while the connection was held";
			break;
		}
		if (requests_waiting(h) > 0) {
			h->why = "a request waited on the dead connection";
			break;
		}
	}
	for (int i = 0; i < h->n; i++)
		close(h->fd[i]);
	h->n = 0;
}

/* Mount with `opts`, hold the daemon's descriptors that read `target` past its SIGKILL until
 * auto_unmount's helper has decided or a request waits, then let them go: the mount must go all
 * the same (docs/design.md "Daemon crash"). */
static void assert_killed_daemon_unmounted(const char *opts, const char *target, bool rings)
{
	struct held_conn h = {.helper = -1};
	struct pool_fixture p;
	bool own_fusectl = false;
	pid_t helper;
	int conn, r;

	assert_int_equal(pool_mount(&p, opts), 0);
	if (rings)
		assert_requests_over_rings(&p);
	/* The pool's connection in the fusectl file system, mounted in this test's own mount
	 * namespace (the harness made one at the first mount) if it is not there. */
	if (access(FUSECTL "/", F_OK) == 0 && !pool_path_is_mountpoint(FUSECTL)) {
		assert_int_equal(mount("fusectl", FUSECTL, "fusectl", 0, NULL), 0);
		own_fusectl = true;
	}
	conn = fuse_connection_of(p.mnt);
	assert_true(conn >= 0);
	snprintf(h.waiting, sizeof(h.waiting), FUSECTL "/%d/waiting", conn);
	assert_int_equal(access(h.waiting, R_OK), 0);
	helper = auto_unmount_helper(p.mnt);
	if (helper < 0)
		fail_msg("no fusermount3 --auto-unmount for %s", p.mnt);
	h.helper = (int)syscall(SYS_pidfd_open, helper, 0);
	assert_true(h.helper >= 0);
	hold_fds(p.daemon_pid, target, &h);
	if (h.n < 1)
		fail_msg("the daemon holds no %s", target);

	r = pool_kill_daemon_then(&p, SIGKILL, release_once_looked_at, &h);
	close(h.helper);
	if (own_fusectl)
		umount2(FUSECTL, MNT_DETACH);
	if (r != 0)
		fail_msg("the killed daemon's mount stayed (pool_kill_daemon: %s; %s)",
			 strerror(-r), h.why);
	assert_int_equal(pool_unmount(&p), 0);
}

/* A daemon killed while it serves over io_uring leaves no mount behind. Its rings outlive it until
 * the kernel's teardown of them runs, from a work queue, late on a busy machine; a request handed
 * to one of them meanwhile fails with ECANCELED, and `fusermount3 --auto-unmount`, whose one open
 * of the mountpoint got that, used to leave the dead mount for good. Holding the rings past the
 * daemon's death is the widest form of that moment. */
static void test_killed_daemon_unmounted(void **state)
{
	(void)state;
	if (!uring_expected())
		TU_SKIP("io_uring is not in use (libfuse < 3.18, or the kernel's enable_uring is N)");
	assert_killed_daemon_unmounted("autohold=none,uring=on", "anon_inode:[io_uring]", true);
}

/* A dying daemon may close auto_unmount's socket before its /dev/fuse: the helper's open then
 * waits on a live connection, and the abort that follows ends it with ECONNABORTED, which
 * fusermount3 3.14 does not take for a dead mount (it wants ENOTCONN). Holding /dev/fuse past the
 * daemon's death is the widest form of that moment, on every transport and libfuse. */
static void test_killed_daemon_unmounted_after_a_late_abort(void **state)
{
	(void)state;
	assert_killed_daemon_unmounted("autohold=none,uring=off", "/dev/fuse", false);
}

static void test_uring_bad_value(void **state)
{
	struct pool_fixture p;

	(void)state;
	assert_int_equal(pool_mount(&p, "uring=yes"), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uring_on),
		cmocka_unit_test(test_uring_off),
		cmocka_unit_test(test_uring_auto),
		cmocka_unit_test(test_uring_bad_value),
		cmocka_unit_test(test_killed_daemon_unmounted),
		cmocka_unit_test(test_killed_daemon_unmounted_after_a_late_abort),
	};
	const char *vg = getenv("POOLFS_VALGRIND");

	fprintf(stderr, "# io_uring expected here: %s\n", uring_expected() ? "yes" : "no");
	/* The harness keeps daemons under valgrind on /dev/fuse (see its start_daemon()). */
	if (vg && vg[0] && strcmp(vg, "0") != 0)
		return tu_skip_all("io_uring is not tested under valgrind, where it deadlocks");
	return ITEST_RUN(tests);
}
