/* test_fsx: runs poolfs-fsx sequences against a real pool (one data path per meson test, from
 * POOLFS_DATAPATH) mounted once by the integration harness with autohold=none, and checks that the
 * pool drops each file and its backing file when fsx is done, and that the daemon exits cleanly
 * with an empty backing dir (pool_unmount). An unsupported data path skips the whole binary.
 *
 * Environment:
 *   POOLFS_FSX       the poolfs-fsx binary (meson sets it)
 *   POOLFS_LONG=1    100000 operations per sequence instead of 3000 (and a clock seed)
 *   POOLFS_FSX_SEED  the seed to use (default: fixed for the short run, so scripts/test is
 *                    reproducible; from the clock for the long run); printed either way
 * The reference file and, on failure, fsx's .fsxgood/.fsxbad/.fsxlog go to a directory
 * /dev/shm/fsxref-XXXXXX that is removed on success and kept (and named) on failure.
 * fsx's own output goes to stderr so the TAP stream on stdout stays clean.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define SHORT_OPS 3000UL
#define LONG_OPS 100000UL
#define DEFAULT_SEED 20261122ULL

struct fsx_state {
	struct pool_fixture pool;
	int mount_err;	       /* pool_mount's result: the tests fail with it */
	char refdir[PATH_MAX]; /* where the reference files live */
};

/* One pool for the whole binary, mounted in main() before cmocka prints its plan, so that an
 * unsupported data path can skip the binary as a whole ("1..0 # SKIP", which meson reports as
 * SKIP; a cmocka skip() per test prints "not ok # SKIP", which meson 1.0 counts as a failure). */
static struct fsx_state g_state;

static int env_long(void)
{
	const char *v = getenv("POOLFS_LONG");

	return v && strcmp(v, "1") == 0;
}

static unsigned long long pick_seed(void)
{
	const char *v = getenv("POOLFS_FSX_SEED");

	if (v && v[0])
		return strtoull(v, NULL, 0);
	if (env_long())
		return (unsigned long long)time(NULL) % 1000000000ULL;
	return DEFAULT_SEED;
}

static int group_setup(void **state)
{
	*state = &g_state;
	if (g_state.mount_err)
		return 0; /* each test reports it */
	/* Not "poolfs-*": a daemon with backing=/dev/shm sweeps such names. */
	snprintf(g_state.refdir, sizeof(g_state.refdir), "/dev/shm/fsxref-XXXXXX");
	if (!mkdtemp(g_state.refdir)) {
		fprintf(stderr, "# mkdtemp: %s\n", strerror(errno));
		g_state.refdir[0] = '\0';
		return -1;
	}
	return 0;
}

/* Unmount (fails if the daemon did not exit 0 or left backing files) and remove the reference
 * dir, which a passing fsx leaves empty; on failure it is kept with fsx's dumps in it. */
static int group_teardown(void **state)
{
	struct fsx_state *s = *state;
	int ret = 0;

	if (!s->mount_err) {
		ret = pool_unmount(&s->pool);
		if (ret)
			fprintf(stderr, "# pool_unmount: %s\n", strerror(-ret));
	}
	if (s->refdir[0] && rmdir(s->refdir) < 0)
		fprintf(stderr, "# kept %s (fsx left files there: see *.fsxlog)\n", s->refdir);
	return ret ? -1 : 0;
}

/* Run poolfs-fsx with args (NULL-terminated, after argv[0]) and the two files: its exit status,
 * or -1 if it did not exit normally. */
static int run_fsx(const char *pool_file, const char *ref_file, const char *const *args)
{
	const char *bin = getenv("POOLFS_FSX");
	const char *argv[32];
	int argc = 0, status;
	pid_t pid;

	if (!bin || !bin[0])
		bin = "poolfs-fsx";
	argv[argc++] = bin;
	while (*args && argc < 29)
		argv[argc++] = *args++;
	argv[argc++] = pool_file;
	argv[argc++] = ref_file;
	argv[argc] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(2, 1); /* fsx talks on stdout; the TAP stream must not see it */
		execvp(bin, (char *const *)argv);
		fprintf(stderr, "# cannot exec %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* One fsx sequence on NAME in the pool; extra options in opts (NULL-terminated). */
static void fsx_sequence(struct fsx_state *s, const char *name, unsigned long ops,
			 const char *const *opts)
{
	char pool_file[PATH_MAX], ref_file[PATH_MAX], seed[32], nops[32];
	const char *args[24];
	int n = 0, ret;

	if (s->mount_err)
		fail_msg("pool_mount: %s", strerror(-s->mount_err));
	assert_int_equal(pool_path(&s->pool, name, pool_file, sizeof(pool_file)), 0);
	assert_true(snprintf(ref_file, sizeof(ref_file), "%s/%s", s->refdir, name) <
		    (int)sizeof(ref_file));
	snprintf(seed, sizeof(seed), "%llu", pick_seed());
	snprintf(nops, sizeof(nops), "%lu", ops);
	args[n++] = "-s";
	args[n++] = seed;
	args[n++] = "-n";
	args[n++] = nops;
	while (opts && *opts && n < 22)
		args[n++] = *opts++;
	args[n] = NULL;
	fprintf(stderr, "# fsx on %s (datapath %s): seed %s, %s ops\n", pool_file,
		s->pool.active_datapath, seed, nops);
	ret = run_fsx(pool_file, ref_file, args);
	if (ret != 0)
		fail_msg(
			"poolfs-fsx on datapath %s exited %d (seed %s): its report and replay line are above",
			s->pool.active_datapath, ret, seed);
	/* fsx unlinks its file on success: the pool must drop it, and its backing file, at once */
	assert_int_equal(pool_wait_gone(pool_file, 5000), 0);
	assert_int_equal(pool_wait_backing_files(&s->pool, 0, 5000), 0);
}

/* The classic shape: a file up to 256 KiB, operations up to 64 KiB. */
static void test_fsx_small_file(void **state)
{
	struct fsx_state *s = *state;

	fsx_sequence(s, "fsx-small", env_long() ? LONG_OPS : SHORT_OPS, NULL);
}

/* Larger I/O: requests past FUSE's max_write (1 MiB) and multi-megabyte truncates and mappings. */
static void test_fsx_large_file(void **state)
{
	static const char *const opts[] = {"-l", "8M", "-o", "2M", "-c", "32", NULL};
	struct fsx_state *s = *state;

	fsx_sequence(s, "fsx-large", env_long() ? LONG_OPS / 10 : SHORT_OPS / 6, opts);
}

/* A run whose file is kept alive only by an open fd, not a hold: close + reopen then exercises
 * RELEASE arriving while another handle stays open. */
static void test_fsx_anchor_fd(void **state)
{
	static const char *const opts[] = {"-k", "anchor", NULL};
	struct fsx_state *s = *state;

	fsx_sequence(s, "fsx-anchor", env_long() ? LONG_OPS / 4 : SHORT_OPS / 3, opts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fsx_small_file),
		cmocka_unit_test(test_fsx_large_file),
		cmocka_unit_test(test_fsx_anchor_fd),
	};
	const char *dp = getenv("POOLFS_DATAPATH");

	/* from the main thread: the harness ties the daemon's life to the thread that forked it */
	g_state.mount_err = pool_mount(&g_state.pool, "autohold=none");
	if (g_state.mount_err == -EOPNOTSUPP) {
		printf("1..0 # SKIP datapath %s is not supported by this daemon\n",
		       dp ? dp : "(default)");
		return 0;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
