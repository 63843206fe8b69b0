/* Transport (docs/interface.md "Transport"): uring=on really carries requests over io_uring,
 * uring=off and an unavailable io_uring use /dev/fuse, and uring=on is refused (exit 3) where it
 * cannot be had. The evidence is the daemon's own: its io_uring descriptors in /proc/PID/fd and
 * their completion counters in /proc/PID/fdinfo, which must grow with the requests we make. */
#include "itest.h"

#include <dirent.h>

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
	char dir[64], path[PATH_MAX], target[256], line[256];
	struct dirent *e;
	DIR *d;
	int rings = 0;

	*cq_total = 0;
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d))) {
		ssize_t n;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			continue; /* closed meanwhile */
		target[n] = '\0';
		if (strcmp(target, "anon_inode:[io_uring]") != 0)
			continue;
		rings++;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", (int)pid, e->d_name);
		f = fopen(path, "re");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f)) {
			unsigned long long v;

			if (sscanf(line, "CqTail: %llu", &v) == 1)
				*cq_total += v;
		}
		fclose(f);
	}
	closedir(d);
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
	};
	const char *vg = getenv("POOLFS_VALGRIND");

	fprintf(stderr, "# io_uring expected here: %s\n", uring_expected() ? "yes" : "no");
	/* The harness keeps daemons under valgrind on /dev/fuse (see its start_daemon()). */
	if (vg && vg[0] && strcmp(vg, "0") != 0)
		return tu_skip_all("io_uring is not tested under valgrind, where it deadlocks");
	return ITEST_RUN(tests);
}
