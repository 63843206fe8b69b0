/* Checks of the harness itself that need no daemon: a wrong harness would make every
 * integration result meaningless. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static int who_am_i(void *arg)
{
	gid_t groups[4];
	(void)arg;

	if (getuid() != 65534 || geteuid() != 65534)
		return EINVAL;
	if (getgid() != 65534 || getegid() != 65534)
		return EINVAL;
	if (getgroups(4, groups) != 0)
		return E2BIG;
	return 0;
}

static int returns_arg(void *arg)
{
	return *(int *)arg;
}

static void test_run_as_user_drops_credentials(void **state)
{
	(void)state;
	assert_int_equal(run_as_user(65534, 65534, who_am_i, NULL), 0);
}

static void test_run_as_user_passes_errno(void **state)
{
	int e = EACCES;

	(void)state;
	assert_int_equal(run_as_user(65534, 65534, returns_arg, &e), EACCES);
	e = 0;
	assert_int_equal(run_as_user(65534, 65534, returns_arg, &e), 0);
}

static void test_pool_path(void **state)
{
	struct pool_fixture p;
	char buf[PATH_MAX];
	char small[8];

	(void)state;
	memset(&p, 0, sizeof(p));
	strcpy(p.mnt, "/x/mnt");
	assert_int_equal(pool_path(&p, "a/b", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/x/mnt/a/b");
	assert_int_equal(pool_path(&p, "", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/x/mnt");
	assert_int_equal(pool_path(&p, "abcdef", small, sizeof(small)), -ENAMETOOLONG);
}

static void test_wait_gone(void **state)
{
	char path[] = "/dev/shm/pooltest-wait-XXXXXX";
	int fd = mkstemp(path);
	pid_t pid;
	int status;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pool_wait_exists(path, 1000), 0);
	assert_int_equal(pool_wait_gone(path, 50), -ETIMEDOUT);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pool_sleep_ms(100);
		unlink(path);
		_exit(0);
	}
	assert_int_equal(pool_wait_gone(path, 5000), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

static void test_unmount_of_empty_fixture(void **state)
{
	struct pool_fixture p;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(pool_unmount(&p), 0);
}

/* Entries in dir (the harness's private temp base for these checks). */
static size_t count_entries(const char *dir)
{
	char pattern[PATH_MAX];
	glob_t g;
	size_t n;

	snprintf(pattern, sizeof(pattern), "%s/*", dir);
	if (glob(pattern, 0, NULL, &g) != 0)
		return 0;
	n = g.gl_pathc;
	globfree(&g);
	return n;
}

/* A stand-in daemon: a shell script that prints msg and exits with code. */
static void fake_daemon(char *path, size_t len, const char *msg, int code)
{
	int fd;

	snprintf(path, len, "/dev/shm/pooltest-fake-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	dprintf(fd, "#!/bin/sh\necho '%s' >&2\nexit %d\n", msg, code);
	fchmod(fd, 0755);
	close(fd);
}

static void expect_mount_result(const char *msg, int code, int want)
{
	char fake[PATH_MAX];
	const char *bin = getenv("POOLFS_BIN");
	char *saved = bin ? strdup(bin) : NULL;
	char base[] = "/dev/shm/pooltest-base-XXXXXX";
	struct pool_fixture p;
	int r;

	/* a base of our own: other tests may create and remove temp dirs meanwhile */
	assert_non_null(mkdtemp(base));
	setenv("POOLFS_TEST_TMP", base, 1);
	fake_daemon(fake, sizeof(fake), msg, code);
	setenv("POOLFS_BIN", fake, 1);
	r = pool_mount(&p, NULL);
	unsetenv("POOLFS_TEST_TMP");
	if (saved) {
		setenv("POOLFS_BIN", saved, 1);
		free(saved);
	} else {
		unsetenv("POOLFS_BIN");
	}
	unlink(fake);
	assert_int_equal(r, want);
	/* a failed mount cleans up after itself */
	assert_int_equal(count_entries(base), 0);
	assert_int_equal(rmdir(base), 0);
	assert_int_equal(pool_unmount(&p), 0);
}

static void test_mount_unsupported_datapath(void **state)
{
	(void)state;
	expect_mount_result("poolfs: datapath=passthrough is not supported by this build", 1,
			    -EOPNOTSUPP);
}

static void test_mount_exit_3_is_unsupported(void **state)
{
	(void)state;
	expect_mount_result("poolfs: cannot have that", 3, -EOPNOTSUPP);
}

static void test_mount_bad_option(void **state)
{
	(void)state;
	expect_mount_result("poolfs: bad option linger=x", 2, -EINVAL);
}

static void test_mount_daemon_fails(void **state)
{
	(void)state;
	expect_mount_result("poolfs: something broke", 1, -EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_as_user_drops_credentials),
		cmocka_unit_test(test_run_as_user_passes_errno),
		cmocka_unit_test(test_pool_path),
		cmocka_unit_test(test_wait_gone),
		cmocka_unit_test(test_unmount_of_empty_fixture),
		cmocka_unit_test(test_mount_unsupported_datapath),
		cmocka_unit_test(test_mount_exit_3_is_unsupported),
		cmocka_unit_test(test_mount_bad_option),
		cmocka_unit_test(test_mount_daemon_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
