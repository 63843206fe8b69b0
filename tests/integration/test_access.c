/* Owner-only rules (docs/interface.md "Entries and permissions") with a
 * second uid (65534, through run_as_user, like setpriv --reuid --regid --clear-groups) against a
 * pool mounted allow_other by root. */
#include "itest.h"

#include <dirent.h>
#include <grp.h>
#include <sys/xattr.h>

static int setup_none(void **state)
{
	return tu_setup(state, "autohold=none");
}

static int setup_exempt(void **state)
{
	return tu_setup(state, "autohold=none,root_exempt");
}

/* Paths the scenarios use; absolute, so a child of any uid can use them. */
struct names {
	char mnt[PATH_MAX];
	char rootf[PATH_MAX];	/* root's file, kept open by the test */
	char rootd[PATH_MAX];	/* root's empty folder (stays) */
	char rootd2[PATH_MAX];	/* root's folder with an open child */
	char child[PATH_MAX];	/* rootd2/child */
	char mine[PATH_MAX];	/* the other user's file */
	char ud[PATH_MAX];	/* the other user's folder */
	char uf[PATH_MAX];	/* the other user's file, held open by a child of that uid */
	struct chan c;
};

static void names_init(const struct pool_fixture *p, struct names *n)
{
	memset(n, 0, sizeof(*n));
	assert_int_equal(pool_path(p, "", n->mnt, sizeof(n->mnt)), 0);
	assert_int_equal(pool_path(p, "rootf", n->rootf, sizeof(n->rootf)), 0);
	assert_int_equal(pool_path(p, "rootd", n->rootd, sizeof(n->rootd)), 0);
	assert_int_equal(pool_path(p, "rootd2", n->rootd2, sizeof(n->rootd2)), 0);
	assert_int_equal(pool_path(p, "rootd2/child", n->child, sizeof(n->child)), 0);
	assert_int_equal(pool_path(p, "mine", n->mine, sizeof(n->mine)), 0);
	assert_int_equal(pool_path(p, "ud", n->ud, sizeof(n->ud)), 0);
	assert_int_equal(pool_path(p, "uf", n->uf, sizeof(n->uf)), 0);
}

/* root's entries: rootf (open, returned in fds[0]), rootd (empty), rootd2/child (open, fds[1]) */
static void make_root_entries(struct names *n, int fds[2])
{
	fds[0] = open(n->rootf, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fds[0]);
	CHECK(write(fds[0], "root data", 9));
	CHECK(setxattr(n->rootf, "user.x", "1", 1, 0));
	CHECK(mkdir(n->rootd, 0700));
	CHECK(mkdir(n->rootd2, 0700));
	fds[1] = open(n->child, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fds[1]);
}

/* ---- modes ---- */

static void expect_mode(const char *path, mode_t want)
{
	struct stat st;

	CHECK(stat(path, &st));
	if ((st.st_mode & 07777) != want)
		fail_msg("%s: mode %04o, want %04o", path, st.st_mode & 07777, want);
}

static void test_modes_owner_only(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f1, p, "f1");
	PATH(f2, p, "f2");
	PATH(f3, p, "f3");
	PATH(f4, p, "f4");
	PATH(d1, p, "d1");
	PATH(d2, p, "d2");
	mode_t old = umask(0);
	int fd[4];
	struct stat st;

	fd[0] = open(f1, O_RDWR | O_CREAT | O_EXCL, 0666);
	fd[1] = open(f2, O_RDWR | O_CREAT | O_EXCL, 0777);
	fd[2] = open(f3, O_RDWR | O_CREAT | O_EXCL, 0400);
	umask(022);
	fd[3] = open(f4, O_RDWR | O_CREAT | O_EXCL, 0644);
	umask(0);
	for (int i = 0; i < 4; i++)
		CHECK(fd[i]);
	CHECK(mkdir(d1, 0777));
	CHECK(mkdir(d2, 01755));
	umask(old);

	expect_mode(f1, 0600);
	expect_mode(f2, 0700);
	expect_mode(f3, 0400);
	expect_mode(f4, 0600);
	expect_mode(d1, 0700);
	expect_mode(d2, 0700);
	CHECK(fstat(fd[0], &st));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, 0);

	/* chmod keeps only the owner bits, and never set-id or sticky bits */
	CHECK(chmod(f1, 0644));
	expect_mode(f1, 0600);
	CHECK(chmod(f1, 0777));
	expect_mode(f1, 0700);
	CHECK(fchmod(fd[0], 0604));
	expect_mode(f1, 0600);
	CHECK(chmod(f1, 04755));
	expect_mode(f1, 0700);
	CHECK(chmod(d1, 0755));
	expect_mode(d1, 0700);
	CHECK(chmod(d1, 01777));
	expect_mode(d1, 0700);

	/* the root is shared and sticky */
	CHECK(stat(p->mnt, &st));
	assert_int_equal(st.st_mode & 07777, 01777);
	assert_int_equal(st.st_uid, getuid());

	for (int i = 0; i < 4; i++)
		CHECK(close(fd[i]));
	CHECK(rmdir(d1));
	CHECK(rmdir(d2));
}

/* ---- another user against root's entries ---- */

static int other_refused(void *v)
{
	struct names *n = v;
	struct timespec ts[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };
	char buf[256];
	int fd;

	/* an entry of our own, to rename onto root's */
	fd = open(n->mine, O_RDWR | O_CREAT | O_EXCL, 0600);
	USER_OK(1, fd);

	USER_EXPECT(2, open(n->rootf, O_RDONLY), EACCES);
	USER_EXPECT(3, open(n->rootf, O_WRONLY), EACCES);
	USER_EXPECT(4, open(n->rootf, O_RDWR | O_CREAT, 0600), EACCES);
	USER_EXPECT(5, stat(n->rootf, &(struct stat){ 0 }), EACCES);
	USER_EXPECT(6, lstat(n->rootf, &(struct stat){ 0 }), EACCES);
	USER_EXPECT(7, truncate(n->rootf, 0), EACCES);
	USER_EXPECT(8, unlink(n->rootf), EACCES);
	USER_EXPECT(9, rename(n->rootf, n->ud), EACCES);
	USER_EXPECT(10, rename(n->mine, n->rootf), EACCES);
	USER_EXPECT(11, getxattr(n->rootf, "user.x", buf, sizeof(buf)), EACCES);
	USER_EXPECT(12, setxattr(n->rootf, "user.y", "2", 1, 0), EACCES);
	USER_EXPECT(13, listxattr(n->rootf, buf, sizeof(buf)), EACCES);
	USER_EXPECT(14, removexattr(n->rootf, "user.x"), EACCES);
	USER_EXPECT(15, setxattr(n->rootf, POOLFS_XATTR_HOLD, "pin", 3, 0), EACCES);
	USER_EXPECT(16, setxattr(n->rootf, POOLFS_XATTR_HOLD, "process", 7, 0), EACCES);
	USER_EXPECT(17, getxattr(n->rootf, POOLFS_XATTR_REFS, buf, sizeof(buf)), EACCES);
	USER_EXPECT(18, chmod(n->rootf, 0600), EACCES);
	USER_EXPECT(19, utimensat(AT_FDCWD, n->rootf, ts, 0), EACCES);

	USER_EXPECT(20, open(n->rootd, O_RDONLY | O_DIRECTORY), EACCES);
	USER_EXPECT(21, stat(n->rootd, &(struct stat){ 0 }), EACCES);
	USER_EXPECT(22, rmdir(n->rootd), EACCES);
	USER_EXPECT(23, rename(n->rootd, n->ud), EACCES);
	USER_EXPECT(24, setxattr(n->rootd, POOLFS_XATTR_HOLD, "pin", 3, 0), EACCES);
	USER_EXPECT(25, open(n->rootd2, O_RDONLY | O_DIRECTORY), EACCES);
	USER_EXPECT(26, stat(n->child, &(struct stat){ 0 }), EACCES);
	USER_EXPECT(27, open(n->child, O_RDONLY), EACCES);
	USER_EXPECT(28, unlink(n->child), EACCES);
	{
		char inside[PATH_MAX + 8];

		snprintf(inside, sizeof(inside), "%s/x", n->rootd);
		USER_EXPECT(29, open(inside, O_RDWR | O_CREAT, 0600), EACCES);
		USER_EXPECT(30, mkdir(inside, 0700), EACCES);
	}
	USER_EXPECT(31, access(n->rootf, F_OK), EACCES);
	USER_EXPECT(32, access(n->rootf, R_OK), EACCES);
	USER_EXPECT(33, access(n->rootd, X_OK), EACCES);
	close(fd);
	return 0;
}

static void test_other_user_refused(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct names n;
	int fds[2];
	char buf[16] = { 0 };

	names_init(p, &n);
	make_root_entries(&n, fds);
	AS_OTHER_OK(other_refused, &n);
	/* nothing of root's was touched */
	ASSERT_EXISTS(n.rootf);
	ASSERT_EXISTS(n.rootd);
	ASSERT_EXISTS(n.child);
	assert_int_equal(pread(fds[0], buf, sizeof(buf), 0), 9);
	assert_string_equal(buf, "root data");
	assert_int_equal(getxattr(n.rootf, "user.x", buf, sizeof(buf)), 1);
	CHECK_ERR(getxattr(n.rootf, "user.y", buf, sizeof(buf)), ENODATA);
	CHECK(close(fds[0]));
	CHECK(close(fds[1]));
	CHECK(rmdir(n.rootd));
}

/* ---- listings ---- */

static int other_lists(void *v)
{
	struct names *n = v;

	USER_OK(1, mkdir(n->ud, 0700));
	USER_TRUE(2, tu_listed(n->mnt, "ud") == 1);
	USER_TRUE(3, tu_listed(n->mnt, "rootf") == 0);
	USER_TRUE(4, tu_listed(n->mnt, "rootd") == 0);
	USER_TRUE(5, tu_listed(n->mnt, "rootd2") == 0);
	return 0;
}

static void test_listing_hides_other_users(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct names n;
	int fds[2];

	names_init(p, &n);
	make_root_entries(&n, fds);
	AS_OTHER_OK(other_lists, &n);
	/* root is not exempt here: it does not see the other user's folder either */
	assert_int_equal(tu_listed(p->mnt, "rootf"), 1);
	assert_int_equal(tu_listed(p->mnt, "rootd"), 1);
	assert_int_equal(tu_listed(p->mnt, "ud"), 0);
	CHECK(close(fds[0]));
	CHECK(close(fds[1]));
	CHECK(rmdir(n.rootd));
}

/* ---- the other user's own entries ---- */

static int other_creates(void *v)
{
	struct names *n = v;
	char buf[16] = { 0 };
	char inside[PATH_MAX + 8];
	struct stat st;
	int fd;

	fd = open(n->mine, O_RDWR | O_CREAT | O_EXCL, 0666);
	USER_OK(1, fd);
	USER_OK(2, fstat(fd, &st));
	USER_TRUE(3, st.st_uid == OTHER_UID && st.st_gid == OTHER_GID);
	USER_TRUE(4, (st.st_mode & 07777) == 0600);
	USER_TRUE(5, write(fd, "mine", 4) == 4);
	USER_TRUE(6, pread(fd, buf, sizeof(buf), 0) == 4 && memcmp(buf, "mine", 4) == 0);
	USER_OK(7, setxattr(n->mine, "user.k", "v", 1, 0));
	USER_TRUE(8, getxattr(n->mine, "user.k", buf, sizeof(buf)) == 1 && buf[0] == 'v');
	USER_OK(9, chmod(n->mine, 0644));
	USER_OK(10, stat(n->mine, &st));
	USER_TRUE(11, (st.st_mode & 07777) == 0600);
	USER_EXPECT(12, chown(n->mine, 0, -1), EPERM);
	USER_EXPECT(13, chown(n->mine, -1, 0), EPERM);
	USER_OK(14, close(fd));
	USER_OK(15, pool_wait_gone(n->mine, GONE_MS));

	USER_OK(16, mkdir(n->ud, 0777));
	USER_OK(17, stat(n->ud, &st));
	USER_TRUE(18, st.st_uid == OTHER_UID && (st.st_mode & 07777) == 0700);
	snprintf(inside, sizeof(inside), "%s/x", n->ud);
	fd = open(inside, O_RDWR | O_CREAT | O_EXCL, 0600);
	USER_OK(19, fd);
	USER_OK(20, close(fd));
	/* armed by its child, the folder goes with it */
	USER_OK(21, pool_wait_gone(n->ud, GONE_MS));
	return 0;
}

static void test_other_user_creates_in_root(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct names n;

	names_init(p, &n);
	AS_OTHER_OK(other_creates, &n);
}

static void test_chown_refused(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600);

	CHECK(fd);
	CHECK_ERR(chown(f, OTHER_UID, -1), EPERM);
	CHECK_ERR(chown(f, -1, OTHER_GID), EPERM);
	CHECK_ERR(fchown(fd, OTHER_UID, OTHER_GID), EPERM);
	/* to oneself is no change */
	CHECK(chown(f, getuid(), getgid()));
	CHECK(close(fd));
}

/* ---- root against the other user's entries ---- */

/* As the other user: make ud (empty folder, stays) and uf (held open until told to go). */
static int other_holds_entries(void *v)
{
	struct names *n = v;
	int fd;

	chan_child(&n->c);
	if (setgroups(0, NULL) == -1 || setgid(OTHER_GID) == -1 || setuid(OTHER_UID) == -1)
		return 99;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	CHILD_CHECK(mkdir(n->ud, 0700) == 0, 1);
	fd = open(n->uf, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHILD_CHECK(fd >= 0, 2);
	CHILD_CHECK(write(fd, "user data", 9) == 9, 3);
	CHILD_CHECK(setxattr(n->uf, "user.x", "1", 1, 0) == 0, 4);
	CHILD_CHECK(CHILD_READY(&n->c) == 0, 5);
	CHILD_CHECK(CHILD_WAIT_GO(&n->c) == 0, 6);
	close(fd);
	return 0;
}

static pid_t start_other_holder(const struct pool_fixture *p, struct names *n)
{
	pid_t pid;

	names_init(p, n);
	chan_open(&n->c);
	pid = tu_spawn(other_holds_entries, n);
	chan_parent(&n->c);
	PARENT_WAIT_READY(&n->c);
	return pid;
}

static int other_waits_gone(void *v)
{
	USER_OK(1, pool_wait_gone(v, GONE_MS) == 0 ? 0 : -1);
	return 0;
}

static void test_root_refused_without_exempt(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct timespec ts[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };
	struct names n;
	struct stat st;
	char buf[64];
	pid_t pid = start_other_holder(p, &n);

	CHECK_ERR(stat(n.uf, &st), EACCES);
	CHECK_ERR(open(n.uf, O_RDONLY), EACCES);
	CHECK_ERR(open(n.uf, O_RDWR | O_CREAT, 0600), EACCES);
	CHECK_ERR(truncate(n.uf, 0), EACCES);
	CHECK_ERR(unlink(n.uf), EACCES);
	CHECK_ERR(rename(n.uf, n.rootf), EACCES);
	CHECK_ERR(getxattr(n.uf, "user.x", buf, sizeof(buf)), EACCES);
	CHECK_ERR(setxattr(n.uf, "user.y", "1", 1, 0), EACCES);
	CHECK_ERR(listxattr(n.uf, buf, sizeof(buf)), EACCES);
	CHECK_ERR(setxattr(n.uf, POOLFS_XATTR_HOLD, "pin", 3, 0), EACCES);
	CHECK_ERR(chmod(n.uf, 0600), EACCES);
	CHECK_ERR(utimensat(AT_FDCWD, n.uf, ts, 0), EACCES);
	CHECK_ERR(stat(n.ud, &st), EACCES);
	CHECK_ERR(open(n.ud, O_RDONLY | O_DIRECTORY), EACCES);
	CHECK_ERR(rmdir(n.ud), EACCES);
	CHECK_ERR(rename(n.ud, n.rootd), EACCES);
	assert_int_equal(tu_listed(p->mnt, "uf"), 0);
	assert_int_equal(tu_listed(p->mnt, "ud"), 0);

	PARENT_GO(&n.c);
	REAP_OK(pid);
	chan_close_parent(&n.c);
	/* root may not even look at uf: its owner watches it go */
	AS_OTHER_OK(other_waits_gone, n.uf);
}

static void test_root_exempt_allowed(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct names n;
	struct stat st;
	char buf[64] = { 0 };
	pid_t pid = start_other_holder(p, &n);
	int fd;

	CHECK(stat(n.uf, &st));
	assert_int_equal(st.st_uid, OTHER_UID);
	assert_int_equal(tu_listed(p->mnt, "uf"), 1);
	assert_int_equal(tu_listed(p->mnt, "ud"), 1);
	fd = open(n.uf, O_RDONLY);
	CHECK(fd);
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 9);
	assert_string_equal(buf, "user data");
	CHECK(close(fd));
	assert_int_equal(getxattr(n.uf, "user.x", buf, sizeof(buf)), 1);
	CHECK(setxattr(n.uf, "user.y", "2", 1, 0));
	CHECK(stat(n.ud, &st));
	fd = open(n.ud, O_RDONLY | O_DIRECTORY);
	CHECK(fd);
	CHECK(close(fd));
	CHECK(rmdir(n.ud));
	ASSERT_ABSENT(n.ud);
	CHECK(unlink(n.uf));
	ASSERT_ABSENT(n.uf);

	PARENT_GO(&n.c);
	REAP_OK(pid);
	chan_close_parent(&n.c);
}

/* ---- user.poolfs.stat: one line per user, only one's own unless root ---- */

static int has_line_prefix(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *s = text; s && *s;) {
		const char *nl = strchr(s, '\n');

		if (strncmp(s, prefix, n) == 0)
			return 1;
		s = nl ? nl + 1 : NULL;
	}
	return 0;
}

static int other_reads_stat(void *v)
{
	struct names *n = v;
	char text[4096];
	ssize_t len;

	USER_OK(1, mkdir(n->ud, 0700));
	len = getxattr(n->mnt, POOLFS_XATTR_STAT, text, sizeof(text) - 1);
	USER_OK(2, len);
	text[len] = '\0';
	USER_TRUE(3, has_line_prefix(text, "user 65534 entries 1 "));
	USER_TRUE(4, !has_line_prefix(text, "user 0 "));
	USER_TRUE(5, has_line_prefix(text, "entries "));
	return 0;
}

static void test_stat_xattr_per_user(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct names n;
	char text[4096];
	ssize_t len;
	int fds[2];

	names_init(p, &n);
	make_root_entries(&n, fds);
	AS_OTHER_OK(other_reads_stat, &n);
	len = getxattr(p->mnt, POOLFS_XATTR_STAT, text, sizeof(text) - 1);
	CHECK(len);
	text[len] = '\0';
	if (!has_line_prefix(text, "user 0 ") || !has_line_prefix(text, "user 65534 "))
		fail_msg("root should see every user's line:\n%s", text);
	CHECK(close(fds[0]));
	CHECK(close(fds[1]));
	CHECK(rmdir(n.rootd));
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_none, tu_teardown)
#define TX(fn) cmocka_unit_test_setup_teardown(fn, setup_exempt, tu_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_modes_owner_only),
		T(test_other_user_refused),
		T(test_listing_hides_other_users),
		T(test_other_user_creates_in_root),
		T(test_chown_refused),
		T(test_stat_xattr_per_user),
		T(test_root_refused_without_exempt),
		TX(test_root_exempt_allowed),
	};

	if (geteuid() != 0) {
		/* a second uid and allow_other need root */
		fprintf(stderr, "# not root: the access tests need to switch uid\n");
	}
	return ITEST_RUN(tests);
}
