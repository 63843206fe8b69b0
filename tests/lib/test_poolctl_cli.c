/* poolctl as a program, on a plain directory (no pool): help and version, usage errors (exit 2
 * with "poolctl: CMD: ..." and a hint), operation failures (exit 1 with
 * "poolctl: CMD: PATH: reason"), and mkunique, which works anywhere.
 * The binary comes from $POOLCTL (set by meson).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>

#include "libtest.h"

static const char *poolctl;
static char dir[PATH_MAX];
static struct run_result res;

/* Run poolctl with arguments ended by (char *)NULL, into res: its exit status. */
#define run(...) libtest_runl(&res, poolctl, __VA_ARGS__)

static void expect(int status, const char *out_has, const char *err_has)
{
	if (res.status != status)
		fail_msg("exit %d, want %d\nstdout: %s\nstderr: %s", res.status, status, res.out,
			 res.err);
	if (out_has && !strstr(res.out, out_has))
		fail_msg("stdout lacks \"%s\":\n%s", out_has, res.out);
	if (err_has && !strstr(res.err, err_has))
		fail_msg("stderr lacks \"%s\":\n%s", err_has, res.err);
	if (!out_has && status != 0)
		assert_string_equal(res.out, "");
}

static void test_help_and_version(void **state)
{
	(void)state;
	run("--help", (char *)NULL);
	expect(0, "usage: poolctl", NULL);
	assert_string_equal(res.err, "");
	assert_non_null(strstr(res.out, "mkjob"));
	assert_non_null(strstr(res.out, "Exit status"));
	run("-h", (char *)NULL);
	expect(0, "usage: poolctl", NULL);
	run("help", (char *)NULL);
	expect(0, "usage: poolctl", NULL);
	run("--version", (char *)NULL);
	expect(0, "poolctl ", NULL);
	assert_string_not_equal(res.out, "poolctl unknown\n");

	static const char *const cmds[] = {"hold",  "release",	"refs", "stat",
					   "mkjob", "mkunique", "help"};
	for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
		char want[64];
		libtest_fmt(want, sizeof want, "usage: poolctl %s", cmds[k]);
		run("help", cmds[k], (char *)NULL);
		expect(0, want, NULL);
		run(cmds[k], "--help", (char *)NULL);
		expect(0, want, NULL);
	}
	run("help", "hold", (char *)NULL);
	assert_non_null(strstr(res.out, "--pid N"));
	assert_non_null(strstr(res.out, "--process is refused"));
}

static void test_usage_errors(void **state)
{
	(void)state;
	run(NULL);
	expect(2, NULL, "usage: poolctl");
	run("frobnicate", (char *)NULL);
	expect(2, NULL, "poolctl: unknown command 'frobnicate'");
	run("help", "frobnicate", (char *)NULL);
	expect(2, NULL, "poolctl: help: unknown command 'frobnicate'");
	run("help", "hold", "release", (char *)NULL);
	expect(2, NULL, "poolctl: help:");

	run("hold", (char *)NULL);
	expect(2, NULL, "poolctl: hold: no PATH given\nTry 'poolctl help hold'.\n");
	run("hold", "--pin", (char *)NULL);
	expect(2, NULL, "poolctl: hold: no PATH given");
	run("hold", "--process", dir, (char *)NULL);
	expect(2, NULL, "poolctl: hold: --process would end with poolctl itself");
	run("hold", "--pid", (char *)NULL);
	expect(2, NULL, "poolctl: hold: --pid needs a value");
	run("hold", "--pid", "0", dir, (char *)NULL);
	expect(2, NULL, "poolctl: hold: --pid needs a positive process id, not '0'");
	run("hold", "--pid=-4", dir, (char *)NULL);
	expect(2, NULL, "not '-4'");
	run("hold", "--pid", "12abc", dir, (char *)NULL);
	expect(2, NULL, "not '12abc'");
	run("hold", "--pid", "99999999999", dir, (char *)NULL);
	expect(2, NULL, "not '99999999999'");
	run("hold", "--pin", "--session", dir, (char *)NULL);
	expect(2, NULL, "poolctl: hold: give only one of");
	run("hold", "--frob", dir, (char *)NULL);
	expect(2, NULL, "poolctl: hold: unknown option '--frob'");
	run("release", (char *)NULL);
	expect(2, NULL, "poolctl: release: no PATH given");
	run("release", "--pin", dir, (char *)NULL);
	expect(2, NULL, "poolctl: release: unknown option '--pin'");
	run("refs", (char *)NULL);
	expect(2, NULL, "poolctl: refs: no PATH given");
	run("stat", "a", "b", (char *)NULL);
	expect(2, NULL, "poolctl: stat: give at most one POOL");
	run("mkjob", (char *)NULL);
	expect(2, NULL, "poolctl: mkjob: give exactly one POOL");
	run("mkjob", dir, dir, (char *)NULL);
	expect(2, NULL, "poolctl: mkjob: give exactly one POOL");
	run("mkjob", "--cgroup", "--pin", dir, (char *)NULL);
	expect(2, NULL, "poolctl: mkjob: give only one of");
	run("mkunique", (char *)NULL);
	expect(2, NULL, "poolctl: mkunique: give exactly one DIR");
	run("mkunique", "--prefix", (char *)NULL);
	expect(2, NULL, "poolctl: mkunique: --prefix needs a value");
	run("mkunique", "--prefix", "a/b", dir, (char *)NULL);
	expect(2, NULL, "poolctl: mkunique: --prefix and --suffix cannot contain '/'");
}

/* Off a pool: exit 1, one line per failing path naming it and the reason. */
static void test_operation_failures(void **state)
{
	(void)state;
	char file[PATH_MAX], missing[PATH_MAX], want[PATH_MAX + 128];

	libtest_fmt(file, sizeof file, "%s/f", dir);
	libtest_fmt(missing, sizeof missing, "%s/missing", dir);
	int fd = open(file, O_CREAT | O_RDWR, 0600);
	assert_true(fd >= 0);
	close(fd);

	run("hold", file, (char *)NULL);
	libtest_fmt(want, sizeof want, "poolctl: hold: %s: not on a poolfs pool\n", file);
	expect(1, NULL, NULL);
	assert_string_equal(res.err, want);
	run("hold", "--pid", "1", file, missing, (char *)NULL);
	expect(1, NULL, NULL);
	libtest_fmt(want, sizeof want,
		    "poolctl: hold: %s: not on a poolfs pool\npoolctl: hold: %s: %s\n", file,
		    missing, strerror(ENOENT));
	assert_string_equal(res.err, want);
	run("release", file, (char *)NULL);
	libtest_fmt(want, sizeof want, "poolctl: release: %s: not on a poolfs pool\n", file);
	expect(1, NULL, NULL);
	assert_string_equal(res.err, want);
	run("refs", "--", file, (char *)NULL);
	libtest_fmt(want, sizeof want, "poolctl: refs: %s: not on a poolfs pool\n", file);
	expect(1, NULL, NULL);
	assert_string_equal(res.err, want);
	run("stat", dir, (char *)NULL);
	libtest_fmt(want, sizeof want, "poolctl: stat: %s: not on a poolfs pool\n", dir);
	expect(1, NULL, NULL);
	assert_string_equal(res.err, want);
	run("mkjob", dir, (char *)NULL);
	libtest_fmt(want, sizeof want, "poolctl: mkjob: %s: not on a poolfs pool\n", dir);
	expect(1, NULL, NULL);
	assert_string_equal(res.err, want);
	run("mkjob", missing, (char *)NULL);
	libtest_fmt(want, sizeof want, "poolctl: mkjob: %s: %s\n", missing, strerror(ENOENT));
	expect(1, NULL, NULL);
	assert_string_equal(res.err, want);
	run("mkunique", missing, (char *)NULL);
	libtest_fmt(want, sizeof want, "poolctl: mkunique: %s: %s\n", missing, strerror(ENOENT));
	expect(1, NULL, NULL);
	assert_string_equal(res.err, want);

	/* only the file we made is left: no job folder, no unique file */
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	assert_int_equal(n, 1);
	unlink(file);
}

static void test_mkunique(void **state)
{
	(void)state;
	run("mkunique", "--prefix", "data-", "--suffix=.npy", dir, (char *)NULL);
	expect(0, NULL, NULL);
	assert_string_equal(res.err, "");
	size_t n = strlen(res.out);
	assert_true(n > 0 && res.out[n - 1] == '\n');
	res.out[n - 1] = '\0';
	char want[PATH_MAX];
	libtest_fmt(want, sizeof want, "%s/data-", dir);
	assert_memory_equal(res.out, want, strlen(want));
	assert_string_equal(res.out + n - 5, ".npy");
	struct stat st;
	assert_int_equal(stat(res.out, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(unlink(res.out), 0);
}

static int group_setup(void **state)
{
	(void)state;
	poolctl = getenv("POOLCTL");
	if (!poolctl || access(poolctl, X_OK) < 0) {
		fprintf(stderr, "# POOLCTL is not set to the poolctl binary\n");
		return -1;
	}
	return libtest_tmpdir(dir, sizeof dir) < 0 ? -1 : 0;
}

static int group_teardown(void **state)
{
	(void)state;
	return libtest_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_and_version),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_operation_failures),
		cmocka_unit_test(test_mkunique),
	};
	return cmocka_run_group_tests_name("poolctl_cli", tests, group_setup, group_teardown);
}
