/* The bad-input matrix (docs/interface.md): every bad request gets its exact
 * errno and the daemon survives them all. One pool (autohold=none, allow_other) for the whole
 * matrix, so the last test can check that the daemon that took every request is still alive,
 * still serves, and logged the security refusals ("denied:" lines). Each test removes what it
 * made, checked by the count of backing files. */
#include "ftest.h"

#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/xattr.h>

#define KiB 1024L
#define MiB (1024L * 1024L)

static int group_setup(void **state)
{
	return tu_setup(state, "autohold=none");
}

static int group_teardown(void **state)
{
	return ftest_teardown(state);
}

static int remove_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	if (ftw->level == 0)
		return 0;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* After each test, passed or failed: close what it left open, remove what it left in the pool
 * (only root's entries are visible to us; the other user's go with its processes), so one
 * failure does not cascade into the rest of the matrix. */
static int matrix_cleanup(void **state)
{
	struct tu_fixture *t = *state;
	int r;

	if (!t || t->unsupported)
		return 0;
	tu_kill_children();
	ftest_close_all();
	nftw(t->p.mnt, remove_cb, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	r = pool_wait_backing_files(&t->p, t->base_backing, GONE_MS);
	if (r != 0) {
		fprintf(stderr, "# cleanup: backing dir holds %d files, want %d\n",
			pool_backing_files(&t->p), t->base_backing);
		return -1;
	}
	return 0;
}

/* Every test ends here: nothing it made is left, and the daemon lives. */
static void end_of_test(void **state)
{
	struct tu_fixture *t = *state;

	ftest_close_all();
	tu_backing_back_to_base(state);
	ASSERT_DAEMON_ALIVE(&t->p);
}

static int create_file(const char *path)
{
	int fd = ftest_fd(open(path, O_RDWR | O_CREAT | O_EXCL, 0600));

	if (fd < 0)
		fail_msg("create %s: %s", path, errname(errno));
	return fd;
}

/* mnt/rel with rel built from n copies of c */
static void repeat_name(char *buf, size_t len, const struct pool_fixture *p, char c, size_t n)
{
	char name[NAME_MAX + 16];

	assert_true(n < sizeof(name));
	memset(name, c, n);
	name[n] = '\0';
	assert_int_equal(pool_path(p, name, buf, len), 0);
}

/* ---- names ---- */

static void test_name_length(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	char n255[PATH_MAX], n256[PATH_MAX], d255[PATH_MAX], d256[PATH_MAX];
	char u255[PATH_MAX], u256[PATH_MAX], buf[4];
	char utf[NAME_MAX + 16];
	struct stat st;
	int fd, fu;

	repeat_name(n255, sizeof(n255), p, 'n', 255);
	repeat_name(n256, sizeof(n256), p, 'n', 256);
	repeat_name(d255, sizeof(d255), p, 'd', 255);
	repeat_name(d256, sizeof(d256), p, 'd', 256);

	/* 255 bytes: a normal name */
	fd = create_file(n255);
	assert_int_equal(write(fd, "abc", 3), 3);
	CHECK(stat(n255, &st));
	assert_int_equal(st.st_size, 3);
	assert_int_equal(tu_listed(p->mnt, strrchr(n255, '/') + 1), 1);
	CHECK(mkdir(d255, 0700));
	CHECK(stat(d255, &st));
	assert_true(S_ISDIR(st.st_mode));

	/* 256 bytes: refused by every operation that takes a name */
	CHECK_ERR(open(n256, O_RDWR | O_CREAT | O_EXCL, 0600), ENAMETOOLONG);
	CHECK_ERR(open(n256, O_RDWR | O_CREAT, 0600), ENAMETOOLONG);
	CHECK_ERR(open(n256, O_RDONLY), ENAMETOOLONG);
	CHECK_ERR(mkdir(d256, 0700), ENAMETOOLONG);
	CHECK_ERR(stat(n256, &st), ENAMETOOLONG);
	CHECK_ERR(unlink(n256), ENAMETOOLONG);
	CHECK_ERR(rmdir(d256), ENAMETOOLONG);
	CHECK_ERR(rename(n255, n256), ENAMETOOLONG);
	CHECK_ERR(rename(d255, d256), ENAMETOOLONG);
	CHECK_ERR(setxattr(n256, "user.x", "1", 1, 0), ENAMETOOLONG);
	/* the source of the refused renames is where it was */
	CHECK(stat(n255, &st));
	CHECK(pread(fd, buf, 3, 0));
	assert_memory_equal(buf, "abc", 3);
	ASSERT_EXISTS(d255);

	/* bytes count, not characters: 127 x "é" + "x" is 255 bytes, 128 x "é" is 256 */
	utf[0] = '\0';
	for (int i = 0; i < 127; i++)
		strcat(utf, "\xc3\xa9");
	strcat(utf, "x");
	assert_int_equal(strlen(utf), 255);
	assert_int_equal(pool_path(p, utf, u255, sizeof(u255)), 0);
	utf[254] = '\xc3';
	utf[255] = '\xa9';
	utf[256] = '\0';
	assert_int_equal(pool_path(p, utf, u256, sizeof(u256)), 0);
	fu = create_file(u255);
	CHECK_ERR(open(u256, O_RDWR | O_CREAT | O_EXCL, 0600), ENAMETOOLONG);
	CHECK(ftest_close(fu));
	ASSERT_GONE(u255);

	CHECK(rmdir(d255));
	CHECK(ftest_close(fd));
	ASSERT_GONE(n255);
	end_of_test(state);
}

static void test_dot_and_dotdot(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(a, p, "a");
	PATH(sub, p, "a/sub");
	PATH(into_sub, p, "a/sub/a");
	PATH(into_self, p, "a/a");
	PATH(dot, p, "a/.");
	PATH(dotdot, p, "a/..");
	PATH(sub_dotdot, p, "a/sub/..");
	PATH(via_dotdot, p, "a/../b");
	PATH(b, p, "b");
	PATH(dots3, p, "a/...");
	struct stat st;
	int fd;

	CHECK(mkdir(a, 0700));
	CHECK(mkdir(sub, 0700));
	/* a folder into itself or its own subfolder */
	CHECK_ERR(rename(a, into_sub), EINVAL);
	CHECK_ERR(rename(a, into_self), EINVAL);
	CHECK_ERR(rename(a, sub), EINVAL);
	/* rmdir of ".", creating "." or ".." */
	CHECK_ERR(rmdir(dot), EINVAL);
	CHECK_ERR(rmdir(sub_dotdot), ENOTEMPTY);
	CHECK_ERR(mkdir(dotdot, 0700), EEXIST);
	CHECK_ERR(mkdir(dot, 0700), EEXIST);
	CHECK_ERR(open(dotdot, O_RDWR | O_CREAT | O_EXCL, 0600), EEXIST);
	CHECK_ERR(open(dotdot, O_RDWR | O_CREAT, 0600), EISDIR);
	CHECK_ERR(open(dot, O_RDWR | O_CREAT, 0600), EISDIR);
	CHECK_ERR(rename(dot, b), EBUSY);
	CHECK_ERR(rename(sub, dotdot), EBUSY);
	/* nothing moved */
	CHECK(stat(sub, &st));
	assert_true(S_ISDIR(st.st_mode));
	ASSERT_ABSENT(into_sub);
	ASSERT_ABSENT(b);

	/* "a/../b" is resolved by the VFS: it makes b in the root */
	CHECK(mkdir(via_dotdot, 0700));
	CHECK(stat(b, &st));
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(tu_listed(p->mnt, "b"), 1);
	CHECK(rmdir(b));
	ASSERT_ABSENT(b);

	/* "..." is an ordinary name */
	fd = create_file(dots3);
	assert_int_equal(tu_listed(a, "..."), 1);
	CHECK(ftest_close(fd));
	ASSERT_GONE(dots3);

	/* a armed by its children goes with its last one */
	CHECK(rmdir(sub));
	ASSERT_GONE(a);
	end_of_test(state);
}

/* Folders nested under the mount until the absolute path reaches PATH_MAX: the kernel refuses
 * the path with ENAMETOOLONG; every shorter one works. */
static void test_deep_paths(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	char comp[201];
	char path[2 * PATH_MAX];
	size_t lens[64];
	int levels = 0, fd;
	size_t len, rem;
	char buf[8];

	memset(comp, 'p', 200);
	comp[200] = '\0';
	len = (size_t)snprintf(path, sizeof(path), "%s", p->mnt);
	for (;;) {
		assert_true(levels < 64);
		len += (size_t)snprintf(path + len, sizeof(path) - len, "/%s", comp);
		errno = 0;
		if (mkdir(path, 0700) == -1)
			break;
		lens[levels++] = len;
	}
	if (errno != ENAMETOOLONG)
		fail_msg("mkdir of a %zu-byte path failed with %s, want ENAMETOOLONG", len,
			 errname(errno));
	if (len + 1 <= PATH_MAX)
		fail_msg("mkdir refused a %zu-byte path (PATH_MAX %d)", len, PATH_MAX);
	/* before lens[levels - 1] is read: with no level at all it would be lens[-1] */
	if (levels < 10)
		fail_msg("only %d nested folders fit under the mount, want 10 or more", levels);
	fprintf(stderr, "# %d nested folders, deepest path %zu bytes\n", levels, lens[levels - 1]);

	/* a file whose absolute path is exactly PATH_MAX - 1 bytes works; one byte more does not */
	len = lens[levels - 1];
	path[len] = '\0';
	rem = PATH_MAX - 1 - len - 1;
	assert_true(rem >= 1 && rem <= 255);
	path[len] = '/';
	memset(path + len + 1, 'f', rem);
	path[len + 1 + rem] = '\0';
	assert_int_equal(strlen(path), PATH_MAX - 1);
	fd = ftest_fd(open(path, O_RDWR | O_CREAT | O_EXCL, 0600));
	CHECK(fd);
	assert_int_equal(write(fd, "deep", 4), 4);
	assert_int_equal(pread(fd, buf, 4, 0), 4);
	assert_memory_equal(buf, "deep", 4);
	ASSERT_EXISTS(path);
	path[len + 1 + rem] = 'f';
	path[len + 2 + rem] = '\0';
	CHECK_ERR(open(path, O_RDWR | O_CREAT | O_EXCL, 0600), ENAMETOOLONG);
	CHECK_ERR(stat(path, &(struct stat){ 0 }), ENAMETOOLONG);
	ASSERT_DAEMON_ALIVE(p);

	/* the file was the only leaf: with it the whole chain goes */
	CHECK(ftest_close(fd));
	path[lens[0]] = '\0';
	ASSERT_GONE(path);
	end_of_test(state);
}

/* ---- extended attributes ---- */

static void test_xattr_limits(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = create_file(f);
	char name255[300], name256[300];
	char *big = malloc(POOLFS_XATTR_VALUE_MAX + 2), *got = malloc(POOLFS_XATTR_VALUE_MAX + 2);
	char small[4];
	ssize_t n;

	assert_non_null(big);
	assert_non_null(got);
	pat_fill(big, POOLFS_XATTR_VALUE_MAX + 2, 71, 0);

	/* names: 255 bytes with the namespace is the limit */
	strcpy(name255, "user.");
	memset(name255 + 5, 'x', 250);
	name255[255] = '\0';
	strcpy(name256, name255);
	strcat(name256, "x");
	CHECK(setxattr(f, name255, "v", 1, 0));
	assert_int_equal(getxattr(f, name255, small, sizeof(small)), 1);
	CHECK(removexattr(f, name255));
	CHECK_ERR(setxattr(f, name256, "v", 1, 0), ERANGE);
	CHECK_ERR(getxattr(f, name256, small, sizeof(small)), ERANGE);
	CHECK_ERR(removexattr(f, name256), ERANGE);
	CHECK_ERR(fsetxattr(fd, name256, "v", 1, 0), ERANGE);

	/* one value over the largest Linux moves (64 KiB) */
	CHECK_ERR(setxattr(f, "user.big", big, POOLFS_XATTR_VALUE_MAX + 1, 0), E2BIG);
	CHECK_ERR(getxattr(f, "user.big", got, POOLFS_XATTR_VALUE_MAX), ENODATA);

	/* the total per entry: 40000 + 40000 bytes do not fit in POOLFS_XATTR_BYTES_MAX (64 KiB) */
	CHECK(setxattr(f, "user.a", big, 40000, 0));
	CHECK_ERR(setxattr(f, "user.b", big, 40000, 0), ENOSPC);
	CHECK_ERR(getxattr(f, "user.b", got, POOLFS_XATTR_VALUE_MAX), ENODATA);
	n = getxattr(f, "user.a", got, POOLFS_XATTR_VALUE_MAX);
	assert_int_equal(n, 40000);
	assert_memory_equal(got, big, 40000);
	/* replacing a value gives its room back */
	CHECK(setxattr(f, "user.a", big + 1, 20000, XATTR_REPLACE));
	CHECK(setxattr(f, "user.b", big, 40000, 0));
	CHECK_ERR(setxattr(f, "user.c", big, 8000, 0), ENOSPC);
	CHECK_ERR(setxattr(f, "user.a", big, 30000, XATTR_REPLACE), ENOSPC);
	assert_int_equal(getxattr(f, "user.a", got, POOLFS_XATTR_VALUE_MAX), 20000);
	assert_memory_equal(got, big + 1, 20000);
	CHECK(removexattr(f, "user.a"));
	CHECK(setxattr(f, "user.c", big, 8000, 0));

	/* the usual flags and buffer sizes */
	CHECK_ERR(setxattr(f, "user.c", "v", 1, XATTR_CREATE), EEXIST);
	CHECK_ERR(setxattr(f, "user.none", "v", 1, XATTR_REPLACE), ENODATA);
	CHECK_ERR(getxattr(f, "user.c", small, sizeof(small)), ERANGE);
	assert_int_equal(getxattr(f, "user.c", NULL, 0), 8000);
	CHECK_ERR(removexattr(f, "user.none"), ENODATA);
	n = listxattr(f, got, POOLFS_XATTR_VALUE_MAX);
	CHECK(n);
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(got + i) + 1)
		if (strncmp(got + i, POOLFS_XATTR_PREFIX, strlen(POOLFS_XATTR_PREFIX)) == 0)
			fail_msg("listxattr lists %s", got + i);
	CHECK(ftest_close(fd));
	ASSERT_GONE(f);
	free(big);
	free(got);
	end_of_test(state);
}

static void test_xattr_poolfs_names(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = create_file(f);
	static const char *const unknown[] = {
		"user.poolfs.nope", "user.poolfs.", "user.poolfs.Hold", "user.poolfs.refs.x",
		"user.poolfs.holds",
	};
	char buf[1024];
	ssize_t n;

	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		errno = 0;
		n = getxattr(f, unknown[i], buf, sizeof(buf));
		if (n != -1 || errno != ENODATA)
			fail_msg("getxattr %s: %zd %s, want ENODATA", unknown[i], n, errname(errno));
		errno = 0;
		n = setxattr(f, unknown[i], "pin", 3, 0);
		if (n != -1 || errno != EINVAL)
			fail_msg("setxattr %s: %zd %s, want EINVAL", unknown[i], n, errname(errno));
		errno = 0;
		n = removexattr(f, unknown[i]);
		if (n != -1 || errno != EINVAL)
			fail_msg("removexattr %s: %zd %s, want EINVAL", unknown[i], n,
				 errname(errno));
	}
	/* the daemon's own reports cannot be written or removed */
	CHECK_ERR(setxattr(f, POOLFS_XATTR_REFS, "opens 0\n", 8, 0), EPERM);
	CHECK_ERR(removexattr(f, POOLFS_XATTR_REFS), EPERM);
	CHECK_ERR(setxattr(f, POOLFS_XATTR_STAT, "x", 1, 0), EPERM);
	CHECK_ERR(removexattr(f, POOLFS_XATTR_STAT), EPERM);
	CHECK_ERR(setxattr(p->mnt, POOLFS_XATTR_STAT, "x", 1, 0), EPERM);
	/* and still read */
	n = getxattr(f, POOLFS_XATTR_REFS, buf, sizeof(buf) - 1);
	CHECK(n);
	buf[n] = '\0';
	if (!strstr(buf, "opens 1\n") || !strstr(buf, "holds 0\n"))
		fail_msg("user.poolfs.refs after the refused writes:\n%s", buf);
	CHECK(ftest_close(fd));
	ASSERT_GONE(f);
	end_of_test(state);
}

static void test_xattr_other_namespaces(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = create_file(f);
	static const char *const names[] = { "trusted.x", "security.x", "trusted.poolfs.hold" };
	char buf[64];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		long r;

		errno = 0;
		r = setxattr(f, names[i], "pin", 3, 0);
		if (r != -1 || errno != EOPNOTSUPP)
			fail_msg("setxattr %s: %ld %s, want EOPNOTSUPP", names[i], r, errname(errno));
		errno = 0;
		r = fsetxattr(fd, names[i], "1", 1, 0);
		if (r != -1 || errno != EOPNOTSUPP)
			fail_msg("fsetxattr %s: %ld %s, want EOPNOTSUPP", names[i], r,
				 errname(errno));
		errno = 0;
		r = getxattr(f, names[i], buf, sizeof(buf));
		/* The daemon answers gets of security.* with ENODATA on purpose (kernels ask for
		 * security.capability on writes); nothing is ever stored there either way. */
		if (r != -1 || (errno != EOPNOTSUPP &&
				 !(errno == ENODATA && strncmp(names[i], "security.", 9) == 0)))
			fail_msg("getxattr %s: %ld %s, want EOPNOTSUPP", names[i], r, errname(errno));
		errno = 0;
		r = removexattr(f, names[i]);
		if (r != -1 || errno != EOPNOTSUPP)
			fail_msg("removexattr %s: %ld %s, want EOPNOTSUPP", names[i], r,
				 errname(errno));
	}
	/* no hold was taken through another namespace */
	{
		ssize_t n = getxattr(f, POOLFS_XATTR_REFS, buf, sizeof(buf) - 1);

		CHECK(n);
		buf[n] = '\0';
		if (!strstr(buf, "holds 0\n"))
			fail_msg("user.poolfs.refs:\n%s", buf);
	}
	CHECK(ftest_close(fd));
	ASSERT_GONE(f);
	end_of_test(state);
}

/* ---- file types ---- */

static void test_special_files_refused(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(d, p, "d");
	PATH(l, p, "link");
	PATH(s, p, "symlink");
	PATH(fifo, p, "fifo");
	PATH(chr, p, "chr");
	PATH(blk, p, "blk");
	PATH(sockn, p, "sockn");
	PATH(sock, p, "sock");
	PATH(dl, p, "d/link");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = create_file(f);
	int sfd;
	struct stat st;

	CHECK(mkdir(d, 0700));
	CHECK_ERR(link(f, l), EPERM);
	CHECK_ERR(link(f, dl), EPERM);
	CHECK_ERR(linkat(fd, "", AT_FDCWD, l, AT_EMPTY_PATH), EPERM);
	CHECK_ERR(symlink(f, s), EPERM);
	CHECK_ERR(symlink("anything", s), EPERM);
	CHECK_ERR(mkfifo(fifo, 0600), EPERM);
	CHECK_ERR(mknod(fifo, S_IFIFO | 0600, 0), EPERM);
	CHECK_ERR(mknod(chr, S_IFCHR | 0600, makedev(1, 3)), EPERM);
	CHECK_ERR(mknod(blk, S_IFBLK | 0600, makedev(7, 0)), EPERM);
	CHECK_ERR(mknod(sockn, S_IFSOCK | 0600, 0), EPERM);

	assert_true(strlen(sock) < sizeof(sa.sun_path));
	strcpy(sa.sun_path, sock);
	sfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(sfd);
	CHECK_ERR(bind(sfd, (struct sockaddr *)&sa, sizeof(sa)), EPERM);
	close(sfd);

	ASSERT_ABSENT(l);
	ASSERT_ABSENT(dl);
	ASSERT_ABSENT(s);
	ASSERT_ABSENT(fifo);
	ASSERT_ABSENT(chr);
	ASSERT_ABSENT(blk);
	ASSERT_ABSENT(sockn);
	ASSERT_ABSENT(sock);
	CHECK(fstat(fd, &st));
	assert_int_equal(st.st_nlink, 1);
	CHECK(rmdir(d));
	CHECK(ftest_close(fd));
	ASSERT_GONE(f);
	end_of_test(state);
}

static void test_o_direct(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(g, p, "g");
	PATH(d, p, "d");
	int fd = create_file(f);

	CHECK(mkdir(d, 0700));
	CHECK_ERR(open(f, O_RDWR | O_DIRECT), EINVAL);
	CHECK_ERR(open(f, O_RDONLY | O_DIRECT), EINVAL);
	CHECK_ERR(open(f, O_WRONLY | O_DIRECT | O_TRUNC), EINVAL);
	CHECK_ERR(open(g, O_RDWR | O_CREAT | O_DIRECT, 0600), EINVAL);
	ASSERT_DAEMON_ALIVE(p);
	/* a refused O_CREAT leaves nothing behind that is in use */
	ASSERT_GONE(g);
	CHECK(rmdir(d));
	CHECK(ftest_close(fd));
	ASSERT_GONE(f);
	end_of_test(state);
}

/* ---- modes and owners ---- */

static void expect_mode(const char *path, mode_t want)
{
	struct stat st;

	CHECK(stat(path, &st));
	if ((st.st_mode & 07777) != want)
		fail_msg("%s: mode %04o, want %04o", path, st.st_mode & 07777, want);
}

static void test_chmod_cannot_widen(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(d, p, "d");
	int fd = create_file(f);

	CHECK(mkdir(d, 0700));
	CHECK(chmod(d, 0777));
	expect_mode(d, 0700);
	CHECK(chmod(d, 02775));
	expect_mode(d, 0700);
	CHECK(chmod(f, 0666));
	expect_mode(f, 0600);
	CHECK(fchmod(fd, 0666));
	expect_mode(f, 0600);
	CHECK(chmod(f, 06777));
	expect_mode(f, 0700);
	CHECK(fchmodat(AT_FDCWD, f, 0604, 0));
	expect_mode(f, 0600);
	CHECK(rmdir(d));
	CHECK(ftest_close(fd));
	ASSERT_GONE(f);
	end_of_test(state);
}

static void test_chown_cannot_give_away(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(d, p, "d");
	int fd = create_file(f);
	int before = log_count(p, "denied:"), after;
	struct stat st;

	CHECK(mkdir(d, 0700));
	CHECK_ERR(chown(f, OTHER_UID, -1), EPERM);
	CHECK_ERR(chown(f, -1, OTHER_GID), EPERM);
	CHECK_ERR(chown(f, OTHER_UID, OTHER_GID), EPERM);
	CHECK_ERR(fchown(fd, OTHER_UID, -1), EPERM);
	CHECK_ERR(lchown(f, -1, OTHER_GID), EPERM);
	CHECK_ERR(chown(d, OTHER_UID, OTHER_GID), EPERM);
	CHECK(stat(f, &st));
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_gid, 0);
	CHECK(stat(d, &st));
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_gid, 0);
	/* to oneself is no change */
	CHECK(chown(f, 0, 0));
	after = log_wait_more(p, "denied:", before, 2000);
	fprintf(stderr, "# denied: lines %d -> %d\n", before, after);
	if (after <= before) {
		pool_dump_log(p);
		fail_msg("no \"denied:\" line in the daemon log for the refused chowns");
	}
	CHECK(rmdir(d));
	CHECK(ftest_close(fd));
	ASSERT_GONE(f);
	end_of_test(state);
}

/* ---- another user's entries ---- */

struct rename_names {
	char rootf[PATH_MAX];	/* root's file (kept open by the test) */
	char rootd[PATH_MAX];	/* root's folder (empty, stays) */
	char rootd_x[PATH_MAX];	/* rootd/x */
	char mine[PATH_MAX];	/* the other user's file */
	char ud[PATH_MAX];	/* the other user's folder */
	char rootd_ud[PATH_MAX];
};

static int other_renames(void *v)
{
	struct rename_names *n = v;
	int fd;

	fd = open(n->mine, O_RDWR | O_CREAT | O_EXCL, 0600);
	USER_OK(1, fd);
	USER_TRUE(2, write(fd, "mine", 4) == 4);
	USER_OK(3, mkdir(n->ud, 0700));
	/* over root's entry, into root's folder, or taking root's entry */
	USER_EXPECT(4, rename(n->mine, n->rootf), EACCES);
	USER_EXPECT(5, rename(n->mine, n->rootd_x), EACCES);
	USER_EXPECT(6, rename(n->ud, n->rootd_ud), EACCES);
	USER_EXPECT(7, rename(n->ud, n->rootd), EACCES);
	USER_EXPECT(8, renameat2(AT_FDCWD, n->mine, AT_FDCWD, n->rootf, RENAME_EXCHANGE), EACCES);
	USER_EXPECT(9, renameat2(AT_FDCWD, n->mine, AT_FDCWD, n->rootd_x, RENAME_NOREPLACE),
		    EACCES);
	USER_EXPECT(10, rename(n->rootf, n->mine), EACCES);
	/* its own entries are where they were */
	USER_OK(11, access(n->mine, F_OK));
	USER_OK(12, access(n->ud, F_OK));
	USER_OK(13, rmdir(n->ud));
	USER_OK(14, close(fd));
	USER_OK(15, pool_wait_gone(n->mine, GONE_MS));
	return 0;
}

static void test_rename_over_other_users_entries(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct rename_names n;
	int fd, before, after;
	char buf[16] = { 0 };
	struct stat st;

	assert_int_equal(pool_path(p, "rootf", n.rootf, sizeof(n.rootf)), 0);
	assert_int_equal(pool_path(p, "rootd", n.rootd, sizeof(n.rootd)), 0);
	assert_int_equal(pool_path(p, "rootd/x", n.rootd_x, sizeof(n.rootd_x)), 0);
	assert_int_equal(pool_path(p, "rootd/ud", n.rootd_ud, sizeof(n.rootd_ud)), 0);
	assert_int_equal(pool_path(p, "mine", n.mine, sizeof(n.mine)), 0);
	assert_int_equal(pool_path(p, "ud", n.ud, sizeof(n.ud)), 0);
	fd = create_file(n.rootf);
	assert_int_equal(write(fd, "root data", 9), 9);
	CHECK(mkdir(n.rootd, 0700));
	/* root has looked everything up: the kernel's cached entries must not let the other
	 * user through */
	CHECK(stat(n.rootf, &st));
	CHECK(stat(n.rootd, &st));
	/* the daemon logs at most 20 denials a second: start in a fresh second */
	pool_sleep_ms(1100);
	before = log_count(p, "denied:");

	AS_OTHER_OK(other_renames, &n);

	after = log_wait_more(p, "denied:", before, 2000);
	fprintf(stderr, "# denied: lines %d -> %d\n", before, after);
	if (after <= before) {
		pool_dump_log(p);
		fail_msg("no \"denied:\" line in the daemon log for the other user's renames");
	}
	/* root's entries are untouched */
	CHECK(stat(n.rootf, &st));
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_size, 9);
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 9);
	assert_string_equal(buf, "root data");
	{
		int again = ftest_fd(open(n.rootf, O_RDONLY));

		CHECK(again);
		memset(buf, 0, sizeof(buf));
		assert_int_equal(read(again, buf, sizeof(buf)), 9);
		assert_string_equal(buf, "root data");
		CHECK(ftest_close(again));
	}
	ASSERT_ABSENT(n.rootd_x);
	ASSERT_ABSENT(n.rootd_ud);
	CHECK(stat(n.rootd, &st));
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_uid, 0);
	CHECK(rmdir(n.rootd));
	CHECK(ftest_close(fd));
	ASSERT_GONE(n.rootf);
	end_of_test(state);
}

/* ---- removed inodes ---- */

static int errno_is_stale_or_noent(long r, int e)
{
	return r == -1 && (e == ESTALE || e == ENOENT);
}

static void test_removed_inodes(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(d, p, "d");
	PATH(df, p, "d/f");
	PATH(f, p, "f");
	char proc[64], buf[8];
	struct stat st;
	int fd, dfd, pfd;
	long r;
	int e;

	/* A folder the daemon removed while we hold an O_PATH descriptor of it (O_PATH does not
	 * open on FUSE, so it does not keep the folder in use). Names looked up through it give
	 * ENOENT or ESTALE; on kernel 6.18 all three calls gave ENOENT (the kernel knows the
	 * folder is dead once the daemon invalidated its entry), while fstat of the folder itself
	 * reached the daemon and gave ESTALE. */
	CHECK(mkdir(d, 0700));
	fd = create_file(df);
	dfd = ftest_fd(open(d, O_PATH | O_DIRECTORY | O_CLOEXEC));
	CHECK(dfd);
	CHECK(ftest_close(fd));
	ASSERT_GONE(df);
	ASSERT_GONE(d);

	errno = 0;
	r = openat(dfd, "g", O_RDWR | O_CREAT | O_EXCL, 0600);
	e = errno;
	fprintf(stderr, "# openat(removed folder, \"g\", O_CREAT): %ld %s\n", r, errname(e));
	if (r >= 0)
		close((int)r);
	if (!errno_is_stale_or_noent(r, e))
		fail_msg("openat O_CREAT in a removed folder: %ld %s, want ESTALE or ENOENT", r,
			 errname(e));
	errno = 0;
	r = mkdirat(dfd, "x", 0700);
	e = errno;
	fprintf(stderr, "# mkdirat(removed folder, \"x\"): %ld %s\n", r, errname(e));
	if (!errno_is_stale_or_noent(r, e))
		fail_msg("mkdirat in a removed folder: %ld %s, want ESTALE or ENOENT", r,
			 errname(e));
	errno = 0;
	r = fstatat(dfd, "f", &st, 0);
	e = errno;
	fprintf(stderr, "# fstatat(removed folder, \"f\"): %ld %s\n", r, errname(e));
	if (!errno_is_stale_or_noent(r, e))
		fail_msg("fstatat in a removed folder: %ld %s, want ESTALE or ENOENT", r,
			 errname(e));
	errno = 0;
	r = fstatat(dfd, "", &st, AT_EMPTY_PATH);
	fprintf(stderr, "# fstatat(removed folder, \"\", AT_EMPTY_PATH): %ld %s (not checked)\n",
		r, r == -1 ? errname(errno) : "-");
	CHECK(ftest_close(dfd));

	/* A file the daemon removed while we hold an O_PATH descriptor: reopening it through
	 * /proc asks the daemon to open a removed inode (ESTALE, docs/interface.md). */
	fd = create_file(f);
	assert_int_equal(write(fd, "gone", 4), 4);
	pfd = ftest_fd(open(f, O_PATH | O_CLOEXEC));
	CHECK(pfd);
	CHECK(ftest_close(fd));
	ASSERT_GONE(f);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	CHECK_ERR(open(proc, O_RDONLY), ESTALE);
	CHECK_ERR(open(proc, O_RDWR), ESTALE);
	CHECK_ERR(truncate(proc, 0), ESTALE);
	CHECK_ERR(setxattr(proc, "user.x", "1", 1, 0), ESTALE);
	CHECK_ERR(getxattr(proc, POOLFS_XATTR_REFS, buf, sizeof(buf)), ESTALE);
	CHECK(ftest_close(pfd));
	end_of_test(state);
}

/* ---- holds ---- */

static int exit_now(void *v)
{
	(void)v;
	return 0;
}

static void test_bad_holds(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = create_file(f);
	static const char *const bogus[] = {
		"forever", "PIN", "pin pin", " pin", "pinx", "pid:", "pid:abc", "pid:12x",
		"pid:-1", "pid:0", "pid:+5", "pid: 5", "pid:99999999999999999999999",
		"session:1", "cgroup:/x", "process:1",
	};
	char scope[64], buf[512];
	ssize_t n;
	pid_t dead;

	/* a pid that does not exist: one we forked and reaped, and one above any pid_max */
	dead = tu_spawn(exit_now, NULL);
	assert_int_equal(tu_reap(dead, CHILD_MS), 0);
	snprintf(scope, sizeof(scope), "pid:%d", (int)dead);
	CHECK_ERR(setxattr(f, POOLFS_XATTR_HOLD, scope, strlen(scope), 0), ESRCH);
	CHECK_ERR(setxattr(f, POOLFS_XATTR_HOLD, "pid:99999999", 12, 0), ESRCH);

	/* malformed scopes */
	for (size_t i = 0; i < sizeof(bogus) / sizeof(bogus[0]); i++) {
		long r;

		errno = 0;
		r = setxattr(f, POOLFS_XATTR_HOLD, bogus[i], strlen(bogus[i]), 0);
		if (r != -1 || errno != EINVAL)
			fail_msg("hold \"%s\": %ld %s, want EINVAL", bogus[i], r, errname(errno));
	}
	CHECK_ERR(setxattr(f, POOLFS_XATTR_HOLD, "", 0, 0), EINVAL);
	CHECK_ERR(setxattr(f, POOLFS_XATTR_HOLD, "pin\0x", 5, 0), EINVAL);

	/* none of them took a hold */
	n = getxattr(f, POOLFS_XATTR_REFS, buf, sizeof(buf) - 1);
	CHECK(n);
	buf[n] = '\0';
	if (!strstr(buf, "holds 0\n"))
		fail_msg("user.poolfs.refs after refused holds:\n%s", buf);
	CHECK_ERR(removexattr(f, POOLFS_XATTR_HOLD), ENODATA);

	/* a trailing newline or NUL is fine */
	CHECK(setxattr(f, POOLFS_XATTR_HOLD, "pin\n", 4, 0));
	CHECK(setxattr(f, POOLFS_XATTR_HOLD, "pin", 4, 0));
	n = getxattr(f, POOLFS_XATTR_REFS, buf, sizeof(buf) - 1);
	CHECK(n);
	buf[n] = '\0';
	if (!strstr(buf, "holds 2\n"))
		fail_msg("user.poolfs.refs after two pins:\n%s", buf);
	CHECK(removexattr(f, POOLFS_XATTR_HOLD));
	CHECK_ERR(removexattr(f, POOLFS_XATTR_HOLD), ENODATA);
	CHECK(ftest_close(fd));
	ASSERT_GONE(f);
	end_of_test(state);
}

/* ---- sizes ---- */

static void test_negative_and_huge_sizes(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = create_file(f);
	struct stat st;
	long r;

	assert_int_equal(write(fd, "12345", 5), 5);
	CHECK_ERR(truncate(f, -1), EINVAL);
	CHECK_ERR(ftruncate(fd, -1), EINVAL);
	CHECK_ERR(ftruncate(fd, LLONG_MIN), EINVAL);
	CHECK_ERR(fallocate(fd, 0, -4096, 4096), EINVAL);
	CHECK_ERR(fallocate(fd, 0, 0, -1), EINVAL);
	CHECK_ERR(fallocate(fd, 0, 0, 0), EINVAL);
	CHECK(fstat(fd, &st));
	assert_int_equal(st.st_size, 5);

	/* far beyond any memory: refused, with nothing reserved */
	errno = 0;
	r = ftruncate(fd, LLONG_MAX);
	fprintf(stderr, "# ftruncate(LLONG_MAX): %ld %s\n", r, r == -1 ? errname(errno) : "-");
	if (r != -1 || (errno != EFBIG && errno != ENOSPC))
		fail_msg("ftruncate(LLONG_MAX): %ld %s, want EFBIG or ENOSPC", r, errname(errno));
	errno = 0;
	r = fallocate(fd, 0, 0, LLONG_MAX / 2);
	fprintf(stderr, "# fallocate(LLONG_MAX/2): %ld %s\n", r, r == -1 ? errname(errno) : "-");
	if (r != -1 || (errno != EFBIG && errno != ENOSPC))
		fail_msg("fallocate(LLONG_MAX/2): %ld %s, want EFBIG or ENOSPC", r,
			 errname(errno));
	CHECK(fstat(fd, &st));
	assert_int_equal(st.st_size, 5);
	{
		char buf[8] = { 0 };

		assert_int_equal(pread(fd, buf, sizeof(buf), 0), 5);
		assert_string_equal(buf, "12345");
	}
	CHECK(ftest_close(fd));
	ASSERT_GONE(f);
	end_of_test(state);
}

/* ---- after the matrix ---- */

static void test_after_matrix(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "after");
	char *buf = malloc(MiB);
	int fd, fd2, denied;

	assert_non_null(buf);
	ASSERT_DAEMON_ALIVE(p);
	fd = create_file(f);
	pat_fill(buf, MiB, 81, 0);
	assert_int_equal(pwrite_all(fd, buf, MiB, 0), MiB);
	assert_pattern(fd, MiB, 81, "after");
	fd2 = ftest_fd(open(f, O_RDONLY));
	CHECK(fd2);
	assert_pattern(fd2, MiB, 81, "after, through a second open");
	CHECK(ftest_close(fd2));
	CHECK(ftest_close(fd));
	ASSERT_GONE(f);
	free(buf);

	denied = log_count(p, "denied:");
	fprintf(stderr, "# the daemon log has %d \"denied:\" lines\n", denied);
	if (denied < 1) {
		pool_dump_log(p);
		fail_msg("no \"denied:\" line in the daemon log after the matrix");
	}
	end_of_test(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_name_length, matrix_cleanup),
		cmocka_unit_test_teardown(test_dot_and_dotdot, matrix_cleanup),
		cmocka_unit_test_teardown(test_deep_paths, matrix_cleanup),
		cmocka_unit_test_teardown(test_xattr_limits, matrix_cleanup),
		cmocka_unit_test_teardown(test_xattr_poolfs_names, matrix_cleanup),
		cmocka_unit_test_teardown(test_xattr_other_namespaces, matrix_cleanup),
		cmocka_unit_test_teardown(test_special_files_refused, matrix_cleanup),
		cmocka_unit_test_teardown(test_o_direct, matrix_cleanup),
		cmocka_unit_test_teardown(test_chmod_cannot_widen, matrix_cleanup),
		cmocka_unit_test_teardown(test_chown_cannot_give_away, matrix_cleanup),
		cmocka_unit_test_teardown(test_rename_over_other_users_entries, matrix_cleanup),
		cmocka_unit_test_teardown(test_removed_inodes, matrix_cleanup),
		cmocka_unit_test_teardown(test_bad_holds, matrix_cleanup),
		cmocka_unit_test_teardown(test_negative_and_huge_sizes, matrix_cleanup),
		cmocka_unit_test_teardown(test_after_matrix, matrix_cleanup),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
