/* Private pools (docs/design.md "Where the kernel checks and where the daemon checks"): a pool
 * mounted without allow_other has no default_permissions, because FUSE itself keeps every user
 * but the one who mounted out. What the kernel's mode checks did there, the daemon does: modes
 * keep only owner bits, access(2) follows them, owners cannot be given away, the root stays as it is.
 * And the point of it: creating and unlinking in a folder no longer makes the kernel ask for the
 * folder's attributes again (counted with the root's user.poolfs.ops). Every test but the last
 * mounts a private pool; the last mounts a multi-user one, where the kernel must keep checking. */
#include "itest.h"

#include <sys/wait.h>
#include <sys/xattr.h>

#define FILES 40

static int setup_private(void **state)
{
	return tu_setup_private(state, "autohold=none");
}

static int setup_multi(void **state)
{
	return tu_setup(state, "autohold=none");
}

static void ops_reset(const struct pool_fixture *p)
{
	CHECK(setxattr(p->mnt, POOLFS_XATTR_OPS, "reset", 5, 0));
}

/* Create FILES files in a fresh folder (kept open, so folder and files stay) and unlink them:
 * the GETATTR requests that cost. */
static long getattrs_of_create_and_unlink(const struct pool_fixture *p)
{
	PATH(dir, p, "churn");
	int fds[FILES], dirfd;
	char name[16];
	long n;

	CHECK(mkdir(dir, 0700));
	CHECK(dirfd = open(dir, O_RDONLY | O_DIRECTORY));
	ops_reset(p);
	for (int i = 0; i < FILES; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		CHECK(fds[i] = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL, 0600));
	}
	for (int i = 0; i < FILES; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		CHECK(unlinkat(dirfd, name, 0));
	}
	n = itest_ops_count(p, "getattr");
	for (int i = 0; i < FILES; i++)
		CHECK(close(fds[i]));
	CHECK(close(dirfd));
	ASSERT_GONE(dir);
	return n;
}

static void test_private_creates_do_not_refetch_the_folder(void **state)
{
	long n = getattrs_of_create_and_unlink(tu_pool(state));

	if (n >= FILES / 4)
		fail_msg("%ld GETATTRs for %d creates and %d unlinks in one folder", n, FILES,
			 FILES);
}

/* The other side of the same choice: with other users about, the kernel checks modes on fresh
 * attributes, so each change of the folder costs a GETATTR of it (if this stops holding, the
 * kernel changed, and docs/design.md should say so). */
static void test_multi_user_pool_keeps_kernel_checks(void **state)
{
	long n = getattrs_of_create_and_unlink(tu_pool(state));

	if (n < FILES)
		fail_msg("only %ld GETATTRs for %d creates and %d unlinks: is default_permissions "
			 "still on for multi-user pools?",
			 n, FILES, FILES);
}

static void test_private_modes_stay_owner_only(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "m-file");
	PATH(d, p, "m-dir");
	struct stat st;
	mode_t old = umask(0);
	int fd;

	fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0666);
	umask(old);
	CHECK(fd);
	CHECK(mkdir(d, 0777));
	CHECK(stat(f, &st));
	assert_int_equal(st.st_mode & 07777, 0600);
	CHECK(chmod(f, 06777));
	CHECK(fstat(fd, &st));
	assert_int_equal(st.st_mode & 07777, 0700);
	CHECK(stat(d, &st));
	assert_int_equal(st.st_mode & 07777, 0700);
	CHECK(chmod(d, 01777));
	CHECK(stat(d, &st));
	assert_int_equal(st.st_mode & 07777, 0700);
	CHECK(rmdir(d));
	CLOSE_UNTIL_GONE(fd, f);
}

/* Without the kernel's mode checks, access(2) reaches the daemon (op_access) and exec still
 * needs an x bit (the kernel checks that on regular files in any case). */
static void test_private_access_follows_the_owner_bits(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "x-file");
	PATH(d, p, "x-dir");
	static const char script[] = "#!/bin/sh\nexit 0\n";
	char *const argv[] = {f, NULL};
	int fd, reader, status;
	pid_t pid;

	CHECK(mkdir(d, 0700));
	CHECK(fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600));
	assert_int_equal(write(fd, script, sizeof(script) - 1), (ssize_t)sizeof(script) - 1);
	CHECK_ERR(access(f, X_OK), EACCES);
	CHECK(access(f, R_OK | W_OK));
	CHECK(access(d, R_OK | W_OK | X_OK));
	CHECK(chmod(f, 0400));
	/* Root gets what CAP_DAC_OVERRIDE gives it on tmpfs, on its own entries: writing a 0400
	 * file (but still no exec without an x bit, checked above). */
	if (geteuid() == 0)
		CHECK(access(f, W_OK));
	else
		CHECK_ERR(access(f, W_OK), EACCES);
	CHECK(chmod(f, 0600));
	/* exec refuses a file open for writing (ETXTBSY): keep it by a read-only handle instead */
	CHECK(reader = open(f, O_RDONLY));
	CHECK(close(fd));
	fd = reader;
	pid = fork();
	CHECK(pid);
	if (pid == 0) {
		execv(f, argv);
		_exit(errno == EACCES ? 0 : errno);
	}
	CHECK(waitpid(pid, &status, 0));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0); /* else the errno of execv */
	CHECK(rmdir(d));
	CLOSE_UNTIL_GONE(fd, f);
}

static void test_private_owner_not_given_away(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "o-file");
	struct stat st;
	int fd;

	CHECK(fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600));
	CHECK(fstat(fd, &st));
	CHECK_ERR(chown(f, OTHER_UID, (gid_t)-1), EPERM);
	CHECK_ERR(fchown(fd, (uid_t)-1, OTHER_GID), EPERM);
	CHECK(chown(f, st.st_uid, st.st_gid)); /* to oneself: allowed, as anywhere */
	CHECK_ERR(chmod(p->mnt, 0700), EPERM); /* the root keeps its mode */
	CHECK(ftruncate(fd, 4096));
	CHECK(utimensat(AT_FDCWD, f, NULL, 0));
	CHECK(fstat(fd, &st));
	assert_int_equal(st.st_size, 4096);
	assert_int_equal(st.st_uid, getuid());
	CLOSE_UNTIL_GONE(fd, f);
}

/* chdir and relative names go through FUSE's ACCESS request when the kernel does not check. */
static void test_private_relative_work_in_a_folder(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(d, p, "w-dir");
	int here, fd;

	CHECK(mkdir(d, 0700));
	CHECK(here = open(".", O_RDONLY | O_DIRECTORY));
	CHECK(chdir(d));
	CHECK(fd = open("a", O_RDWR | O_CREAT | O_EXCL, 0600));
	CHECK(rename("a", "b"));
	CHECK(access("b", F_OK));
	CHECK_ERR(access("a", F_OK), ENOENT);
	CHECK(unlink("b"));
	CHECK(fchdir(here));
	CHECK(close(here));
	CHECK(close(fd));
	ASSERT_GONE(d);
}

/* FUSE refuses every other user before a request reaches the daemon. */
static int other_is_kept_out(void *arg)
{
	const struct pool_fixture *p = arg;
	char f[PATH_MAX];
	struct stat st;

	if (pool_path(p, "k-file", f, sizeof(f)) != 0)
		return 9;
	USER_EXPECT(1, stat(p->mnt, &st), EACCES);
	USER_EXPECT(2, stat(f, &st), EACCES);
	USER_EXPECT(3, open(f, O_RDONLY), EACCES);
	USER_EXPECT(4, open(p->mnt, O_RDONLY | O_DIRECTORY), EACCES);
	USER_EXPECT(5, mkdir(f, 0700), EACCES);
	return 0;
}

static void test_private_other_users_kept_out(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "k-file");
	int fd;

	CHECK(fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600));
	AS_OTHER_OK(other_is_kept_out, p);
	CLOSE_UNTIL_GONE(fd, f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_private_creates_do_not_refetch_the_folder,
						setup_private, tu_teardown),
		cmocka_unit_test_setup_teardown(test_private_modes_stay_owner_only, setup_private,
						tu_teardown),
		cmocka_unit_test_setup_teardown(test_private_access_follows_the_owner_bits,
						setup_private, tu_teardown),
		cmocka_unit_test_setup_teardown(test_private_owner_not_given_away, setup_private,
						tu_teardown),
		cmocka_unit_test_setup_teardown(test_private_relative_work_in_a_folder,
						setup_private, tu_teardown),
		cmocka_unit_test_setup_teardown(test_private_other_users_kept_out, setup_private,
						tu_teardown),
		cmocka_unit_test_setup_teardown(test_multi_user_pool_keeps_kernel_checks,
						setup_multi, tu_teardown),
	};

	return ITEST_RUN(tests);
}
