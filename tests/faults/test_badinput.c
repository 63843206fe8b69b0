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
#include <sys/xattr.h>

#define MiB (1024L * 1024L)

/* The pool of the whole matrix, static so that every test names it as its cmocka state (a group
 * state would go to every test instead of its own, and each row's own state is its row). */
static struct tu_fixture matrix;

static int group_setup(void **state)
{
	(void)state;
	return tu_mount(&matrix, "autohold=none");
}

static int group_teardown(void **state)
{
	(void)state;
	ftest_close_all();
	return tu_unmount(&matrix);
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

/* Closing fd, the last thing that keeps path, removes it. */
static void close_until_gone(int fd, const char *path)
{
	CHECK(ftest_close(fd));
	ASSERT_GONE(path);
}

/* The test's last entry goes with its last handle, and the test ends (end_of_test). */
static void end_with_gone(void **state, int fd, const char *path)
{
	close_until_gone(fd, path);
	end_of_test(state);
}

/* The daemon logged a "denied:" line beyond the `before` it had, for what was refused. */
static void expect_denied_logged(const struct pool_fixture *p, int before, const char *what)
{
	int after = log_wait_more(p, "denied:", before, 2000);

	fprintf(stderr, "# denied: lines %d -> %d\n", before, after);
	if (after <= before) {
		pool_dump_log(p);
		fail_msg("no \"denied:\" line in the daemon log for %s", what);
	}
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

	/* 256 bytes: the rows *_256_byte_name_* of bad_rows; the 255-byte names still work */
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
	close_until_gone(fu, u255);

	CHECK(rmdir(d255));
	end_with_gone(state, fd, n255);
}

static void test_dot_and_dotdot(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	char a[PATH_MAX], sub[PATH_MAX], into_sub[PATH_MAX], via_dotdot[PATH_MAX], b[PATH_MAX],
		dots3[PATH_MAX];
	struct stat st;
	int fd;

	tu_paths(p, "a", a, "a/sub", sub, "a/sub/a", into_sub, "a/../b", via_dotdot, "b", b,
		 "a/...", dots3);
	CHECK(mkdir(a, 0700));
	CHECK(mkdir(sub, 0700));
	/* the refused renames, rmdirs and creates of "." and ".." are rows of bad_rows */
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
	close_until_gone(fd, dots3);

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
	CHECK_ERR(stat(path, &(struct stat){0}), ENAMETOOLONG);
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
	free(big);
	free(got);
	end_with_gone(state, fd, f);
}

static void test_xattr_poolfs_names(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = create_file(f);

	/* unknown names under the prefix: rows of bad_rows */
	/* the daemon's own reports cannot be written or removed */
	CHECK_ERR(setxattr(f, POOLFS_XATTR_REFS, "opens 0\n", 8, 0), EPERM);
	CHECK_ERR(removexattr(f, POOLFS_XATTR_REFS), EPERM);
	CHECK_ERR(setxattr(f, POOLFS_XATTR_STAT, "x", 1, 0), EPERM);
	CHECK_ERR(removexattr(f, POOLFS_XATTR_STAT), EPERM);
	CHECK_ERR(setxattr(p->mnt, POOLFS_XATTR_STAT, "x", 1, 0), EPERM);
	/* and still read */
	ASSERT_REFS_LINE(f, "opens 1");
	ASSERT_REFS_LINE(f, "holds 0");
	end_with_gone(state, fd, f);
}

/* ---- modes and owners ---- */

/* The scene of the mode and owner tests: root's file f, open, and its folder d. */
struct file_and_folder {
	char f[PATH_MAX];
	char d[PATH_MAX];
	int fd;
};

static void make_file_and_folder(const struct pool_fixture *p, struct file_and_folder *s)
{
	tu_paths(p, "f", s->f, "d", s->d);
	s->fd = create_file(s->f);
	CHECK(mkdir(s->d, 0700));
}

/* Both go, and so does everything else the test made. */
static void drop_file_and_folder(void **state, struct file_and_folder *s)
{
	CHECK(rmdir(s->d));
	end_with_gone(state, s->fd, s->f);
}

static void test_chmod_cannot_widen(void **state)
{
	struct file_and_folder s;
	const char *f = s.f, *d = s.d;

	make_file_and_folder(tu_pool(state), &s);
	expect_chmod_gives(d, 0777, 0700);
	expect_chmod_gives(d, 02775, 0700);
	expect_chmod_gives(f, 0666, 0600);
	CHECK(fchmod(s.fd, 0666));
	expect_mode(f, 0600);
	expect_chmod_gives(f, 06777, 0700);
	CHECK(fchmodat(AT_FDCWD, f, 0604, 0));
	expect_mode(f, 0600);
	drop_file_and_folder(state, &s);
}

static void test_chown_cannot_give_away(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct file_and_folder s;
	const char *f = s.f, *d = s.d;
	int before = log_count(p, "denied:");
	struct stat st;

	make_file_and_folder(p, &s);
	CHECK_ERR(chown(f, OTHER_UID, -1), EPERM);
	CHECK_ERR(chown(f, -1, OTHER_GID), EPERM);
	CHECK_ERR(chown(f, OTHER_UID, OTHER_GID), EPERM);
	CHECK_ERR(fchown(s.fd, OTHER_UID, -1), EPERM);
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
	expect_denied_logged(p, before, "the refused chowns");
	drop_file_and_folder(state, &s);
}

/* ---- another user's entries ---- */

struct rename_names {
	char rootf[PATH_MAX];	/* root's file (kept open by the test) */
	char rootd[PATH_MAX];	/* root's folder (empty, stays) */
	char rootd_x[PATH_MAX]; /* rootd/x */
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
	USER_OK(14, tu_close_until_gone(fd, n->mine));
	return 0;
}

static void test_rename_over_other_users_entries(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct rename_names n;
	int fd, before;
	char buf[16] = {0};
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

	expect_denied_logged(p, before, "the other user's renames");
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
	end_with_gone(state, fd, n.rootf);
}

/* ---- removed inodes ---- */

static int errno_is_stale_or_noent(long r, int e)
{
	return r == -1 && (e == ESTALE || e == ENOENT);
}

/* r and errno e of `what`, a call through a removed folder: said on stderr, and it must have
 * failed with ESTALE or ENOENT. */
static void expect_stale_or_noent(long r, int e, const char *what)
{
	fprintf(stderr, "# %s: %ld %s\n", what, r, errname(e));
	if (!errno_is_stale_or_noent(r, e))
		fail_msg("%s: %ld %s, want ESTALE or ENOENT", what, r, errname(e));
}

static void test_removed_inodes(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	char d[PATH_MAX], df[PATH_MAX], f[PATH_MAX];
	char proc[64], buf[512];
	struct stat st;
	int fd, dfd, pfd;
	long r;
	int e;

	tu_paths(p, "d", d, "d/f", df, "f", f);
	/* A folder the daemon removed while we hold an O_PATH descriptor of it (O_PATH does not
	 * open on FUSE, so it does not keep the folder in use). Names looked up through it give
	 * ENOENT or ESTALE; on kernel 6.18 all three calls gave ENOENT (the kernel knows the
	 * folder is dead once the daemon invalidated its entry), while fstat of the folder itself
	 * reached the daemon and gave ESTALE. */
	CHECK(mkdir(d, 0700));
	fd = create_file(df);
	dfd = ftest_fd(open(d, O_PATH | O_DIRECTORY | O_CLOEXEC));
	CHECK(dfd);
	close_until_gone(fd, df);
	ASSERT_GONE(d);

	errno = 0;
	r = openat(dfd, "g", O_RDWR | O_CREAT | O_EXCL, 0600);
	e = errno;
	if (r >= 0)
		close((int)r);
	expect_stale_or_noent(r, e, "openat(removed folder, \"g\", O_CREAT)");
	errno = 0;
	r = mkdirat(dfd, "x", 0700);
	expect_stale_or_noent(r, errno, "mkdirat(removed folder, \"x\")");
	errno = 0;
	r = fstatat(dfd, "f", &st, 0);
	expect_stale_or_noent(r, errno, "fstatat(removed folder, \"f\")");
	errno = 0;
	r = fstatat(dfd, "", &st, AT_EMPTY_PATH);
	fprintf(stderr, "# fstatat(removed folder, \"\", AT_EMPTY_PATH): %ld %s (not checked)\n", r,
		r == -1 ? errname(errno) : "-");
	CHECK(ftest_close(dfd));

	/* A file the daemon removed while we hold an O_PATH descriptor: its name is gone, but the
	 * kernel still holds the inode, so it behaves as an unlinked file on tmpfs: it reopens
	 * through /proc with its data, takes xattrs and a truncate, but no hold (it has no name);
	 * never ESTALE (docs/interface.md "Errors"). */
	fd = create_file(f);
	assert_int_equal(write(fd, "gone", 4), 4);
	pfd = ftest_fd(open(f, O_PATH | O_CLOEXEC));
	CHECK(pfd);
	close_until_gone(fd, f);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = ftest_fd(open(proc, O_RDONLY | O_CLOEXEC));
	CHECK(fd);
	assert_int_equal(pread(fd, buf, 4, 0), 4);
	assert_memory_equal(buf, "gone", 4);
	CHECK(ftest_close(fd));
	fd = ftest_fd(open(proc, O_RDWR | O_CLOEXEC));
	CHECK(fd);
	CHECK(ftest_close(fd));
	CHECK(setxattr(proc, "user.x", "1", 1, 0));
	CHECK(getxattr(proc, POOLFS_XATTR_REFS, buf, sizeof(buf) - 1) >= 0 ? 0 : -1);
	CHECK_ERR(setxattr(proc, POOLFS_XATTR_HOLD, "pin", 3, 0), ENOENT);
	CHECK(truncate(proc, 0));
	CHECK(stat(proc, &st));
	assert_int_equal(st.st_size, 0);
	ASSERT_ABSENT(f);
	CHECK(ftest_close(pfd));
	end_of_test(state);
}

/* ---- holds ---- */

static void test_bad_holds(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = create_file(f);
	char scope[64];
	pid_t dead;

	/* a pid that does not exist: one we forked and reaped (one above any pid_max, and the
	 * malformed scopes, are rows of bad_rows) */
	dead = tu_dead_pid();
	snprintf(scope, sizeof(scope), "pid:%d", (int)dead);
	CHECK_ERR(setxattr(f, POOLFS_XATTR_HOLD, scope, strlen(scope), 0), ESRCH);

	/* it took no hold */
	ASSERT_REFS_LINE(f, "holds 0");
	CHECK_ERR(removexattr(f, POOLFS_XATTR_HOLD), ENODATA);

	/* a trailing newline or NUL is fine */
	CHECK(setxattr(f, POOLFS_XATTR_HOLD, "pin\n", 4, 0));
	CHECK(setxattr(f, POOLFS_XATTR_HOLD, "pin", 4, 0));
	ASSERT_REFS_LINE(f, "holds 2");
	CHECK(removexattr(f, POOLFS_XATTR_HOLD));
	CHECK_ERR(removexattr(f, POOLFS_XATTR_HOLD), ENODATA);
	end_with_gone(state, fd, f);
}

/* ---- sizes ---- */

static void test_negative_and_huge_sizes(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = create_file(f);
	struct stat st;
	long r;

	/* negative sizes: rows of bad_rows */
	assert_int_equal(write(fd, "12345", 5), 5);
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
		fail_msg("fallocate(LLONG_MAX/2): %ld %s, want EFBIG or ENOSPC", r, errname(errno));
	CHECK(fstat(fd, &st));
	assert_int_equal(st.st_size, 5);
	{
		char buf[8] = {0};

		assert_int_equal(pread(fd, buf, sizeof(buf), 0), 5);
		assert_string_equal(buf, "12345");
	}
	end_with_gone(state, fd, f);
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
	close_until_gone(fd, f);
	free(buf);

	denied = log_count(p, "denied:");
	fprintf(stderr, "# the daemon log has %d \"denied:\" lines\n", denied);
	if (denied < 1) {
		pool_dump_log(p);
		fail_msg("no \"denied:\" line in the daemon log after the matrix");
	}
	end_of_test(state);
}

/* ---- the refused requests: one row, one request, its errno ----
 *
 * Each row is its own cmocka test on the matrix's pool. Before the request, the row's scene is
 * made: SC_FILE a file f (open, 5 bytes) and a folder d; SC_DOTS the folders a and a/sub;
 * SC_LONG a file and a folder whose names are 255 bytes long. After it, what the row names in
 * `absent` must not exist, the scene is taken down, the backing files are back to the base and
 * the daemon lives. A path "@cN" is N copies of the byte c. */

enum scene { SC_FILE, SC_DOTS, SC_LONG };

/* The requests: those by path are tu_request's (testutil.h), the rest this suite's own. */
enum bad_op {
	B_OPEN = TU_REQ_OPEN,
	B_MKDIR = TU_REQ_MKDIR,
	B_STAT = TU_REQ_STAT,
	B_UNLINK = TU_REQ_UNLINK,
	B_RMDIR = TU_REQ_RMDIR,
	B_RENAME = TU_REQ_RENAME,
	B_RENAME2 = TU_REQ_RENAME2,
	B_SETXATTR = TU_REQ_SETXATTR,
	B_GETXATTR = TU_REQ_GETXATTR,
	B_REMOVEXATTR = TU_REQ_REMOVEXATTR,
	B_LINK = TU_REQ_LINK,
	B_MKFIFO = TU_REQ_MKFIFO,
	B_BIND = TU_REQ_BIND,
	B_TRUNCATE = TU_REQ_TRUNCATE,
	B_FSETXATTR = TU_REQ_COUNT,
	B_LINK_FD,
	B_SYMLINK,
	B_SYMLINK_TO,
	B_MKNOD,
	B_FTRUNCATE,
	B_FALLOCATE,
};

struct bad_row {
	const char *name; /* the test case: the request, on what, the errno */
	enum scene scene;
	enum bad_op op;
	const char *path; /* relative to the mount */
	const char *arg;  /* a second path, an xattr name, or a symlink target */
	const char *val;  /* an xattr value (vlen bytes; strlen if vlen is 0) */
	size_t vlen;
	long long a, b; /* flags, mode, device, length or offset, as the op takes them */
	int expect;
	int also;	    /* a second acceptable errno (0: none) */
	const char *absent; /* must not exist after the request (NULL: nothing) */
	bool settles;	    /* absent within GONE_MS (it may exist unused for a moment) */
	int added_names;    /* names the request gave f (links): the scene's nlink is 1 + this */
};

/* names the kernel passes on with their namespace, the daemon refuses */
#define UNKNOWN_NAME(tag, nm)                                                                       \
	{"getxattr_" tag "_enodata", SC_FILE, B_GETXATTR, "f", nm, .expect = ENODATA},              \
		{"setxattr_" tag "_einval", SC_FILE, B_SETXATTR, "f", nm, "pin", .expect = EINVAL}, \
	{                                                                                           \
		"removexattr_" tag "_einval", SC_FILE, B_REMOVEXATTR, "f", nm, .expect = EINVAL     \
	}
/* Only user.* is stored: every other namespace, security.* included, is EOPNOTSUPP (`ls -l` then
 * asks for security.selinux once per pool, not once per file). */
#define OTHER_NAMESPACE(tag, nm, val, len, get_also)                                               \
	{"setxattr_" tag "_eopnotsupp", SC_FILE, B_SETXATTR, "f", nm, val, .vlen = (len),          \
	 .expect = EOPNOTSUPP},                                                                    \
		{"fsetxattr_" tag "_eopnotsupp",                                                   \
		 SC_FILE,                                                                          \
		 B_FSETXATTR,                                                                      \
		 "f",                                                                              \
		 nm,                                                                               \
		 val,                                                                              \
		 .vlen = (len),                                                                    \
		 .expect = EOPNOTSUPP},                                                            \
		{"getxattr_" tag "_eopnotsupp", SC_FILE,	   B_GETXATTR, "f", nm,            \
		 .expect = EOPNOTSUPP,		.also = (get_also)},                               \
	{                                                                                          \
		"removexattr_" tag "_eopnotsupp", SC_FILE, B_REMOVEXATTR, "f", nm,                 \
			.expect = EOPNOTSUPP                                                       \
	}
/* The kernel itself refuses a security.capability value that is no vfs_cap_data (EINVAL) before
 * the daemon is asked: so a well-formed one, revision 2 (magic 0x02000000, little-endian) with
 * no capabilities, 20 bytes. */
#define CAP_V2_NONE                                                                                \
	"\x00\x00\x00\x02"                                                                         \
	"\x00\x00\x00\x00\x00\x00\x00\x00"                                                         \
	"\x00\x00\x00\x00\x00\x00\x00\x00"
#define BAD_SCOPE(tag, scope, len)                                                                 \
	{                                                                                          \
		"hold_scope_" tag "_einval", SC_FILE, B_SETXATTR, "f", POOLFS_XATTR_HOLD, scope,   \
			.vlen = (len), .expect = EINVAL                                            \
	}

#define O_CREAT_RW (O_RDWR | O_CREAT)

static const struct bad_row bad_rows[] = {
	/* names: 256 bytes are refused by every operation that takes a name; the source of a
	 * refused rename is where it was */
	{"create_excl_256_byte_name_enametoolong", SC_LONG, B_OPEN, "@n256",
	 .a = O_CREAT_RW | O_EXCL, .expect = ENAMETOOLONG},
	{"create_256_byte_name_enametoolong", SC_LONG, B_OPEN, "@n256", .a = O_CREAT_RW,
	 .expect = ENAMETOOLONG},
	{"open_256_byte_name_enametoolong", SC_LONG, B_OPEN, "@n256", .a = O_RDONLY,
	 .expect = ENAMETOOLONG},
	{"mkdir_256_byte_name_enametoolong", SC_LONG, B_MKDIR, "@d256", .expect = ENAMETOOLONG},
	{"stat_256_byte_name_enametoolong", SC_LONG, B_STAT, "@n256", .expect = ENAMETOOLONG},
	{"unlink_256_byte_name_enametoolong", SC_LONG, B_UNLINK, "@n256", .expect = ENAMETOOLONG},
	{"rmdir_256_byte_name_enametoolong", SC_LONG, B_RMDIR, "@d256", .expect = ENAMETOOLONG},
	{"rename_file_to_256_byte_name_enametoolong", SC_LONG, B_RENAME, "@n255", "@n256",
	 .expect = ENAMETOOLONG},
	{"rename_folder_to_256_byte_name_enametoolong", SC_LONG, B_RENAME, "@d255", "@d256",
	 .expect = ENAMETOOLONG},
	{"setxattr_256_byte_name_enametoolong", SC_LONG, B_SETXATTR, "@n256", "user.x", "1",
	 .expect = ENAMETOOLONG},

	/* a folder into itself or its own subfolder; rmdir of "."; creating "." or ".."; nothing
	 * moves */
	{"rename_folder_into_its_subfolder_einval", SC_DOTS, B_RENAME, "a", "a/sub/a",
	 .expect = EINVAL, .absent = "a/sub/a"},
	{"rename_folder_into_itself_einval", SC_DOTS, B_RENAME, "a", "a/a", .expect = EINVAL,
	 .absent = "a/a"},
	{"rename_folder_onto_its_subfolder_einval", SC_DOTS, B_RENAME, "a", "a/sub",
	 .expect = EINVAL},
	{"rmdir_dot_einval", SC_DOTS, B_RMDIR, "a/.", .expect = EINVAL},
	{"rmdir_dotdot_enotempty", SC_DOTS, B_RMDIR, "a/sub/..", .expect = ENOTEMPTY},
	{"mkdir_dotdot_eexist", SC_DOTS, B_MKDIR, "a/..", .expect = EEXIST},
	{"mkdir_dot_eexist", SC_DOTS, B_MKDIR, "a/.", .expect = EEXIST},
	{"create_excl_dotdot_eexist", SC_DOTS, B_OPEN, "a/..", .a = O_CREAT_RW | O_EXCL,
	 .expect = EEXIST},
	{"create_dotdot_eisdir", SC_DOTS, B_OPEN, "a/..", .a = O_CREAT_RW, .expect = EISDIR},
	{"create_dot_eisdir", SC_DOTS, B_OPEN, "a/.", .a = O_CREAT_RW, .expect = EISDIR},
	{"rename_dot_ebusy", SC_DOTS, B_RENAME, "a/.", "b", .expect = EBUSY, .absent = "b"},
	{"rename_onto_dotdot_ebusy", SC_DOTS, B_RENAME, "a/sub", "a/..", .expect = EBUSY},

	/* the daemon's own names: unknown ones are refused, never stored */
	UNKNOWN_NAME("user_poolfs_nope", "user.poolfs.nope"),
	UNKNOWN_NAME("user_poolfs_prefix_alone", "user.poolfs."),
	UNKNOWN_NAME("user_poolfs_Hold", "user.poolfs.Hold"),
	UNKNOWN_NAME("user_poolfs_refs_x", "user.poolfs.refs.x"),
	UNKNOWN_NAME("user_poolfs_holds", "user.poolfs.holds"),

	/* other namespaces */
	OTHER_NAMESPACE("trusted_x", "trusted.x", "pin", 0, 0),
	OTHER_NAMESPACE("security_x", "security.x", "pin", 0, 0),
	OTHER_NAMESPACE("security_selinux", "security.selinux", "pin", 0, 0),
	OTHER_NAMESPACE("security_capability", "security.capability", CAP_V2_NONE, 20, 0),
	OTHER_NAMESPACE("trusted_poolfs_hold", "trusted.poolfs.hold", "pin", 0, 0),

	/* kinds of entry (docs/interface.md "Kinds of entry"): a second name of the open file
	 * stays; with this suite's autohold=none a symlink, FIFO or socket is unheld from birth
	 * and gone at once; device nodes are refused */
	{"link_made", SC_FILE, B_LINK, "f", "link", .expect = 0, .added_names = 1},
	{"link_into_folder_made", SC_FILE, B_LINK, "f", "d/link", .expect = 0, .added_names = 1},
	{"linkat_empty_path_made", SC_FILE, B_LINK_FD, "link", .expect = 0, .added_names = 1},
	{"link_onto_itself_eexist", SC_FILE, B_LINK, "f", "f", .expect = EEXIST},
	{"symlink_to_pool_file_unheld_gone", SC_FILE, B_SYMLINK_TO, "symlink", "f", .expect = 0,
	 .absent = "symlink", .settles = true},
	{"symlink_unheld_gone", SC_FILE, B_SYMLINK, "symlink", "anything", .expect = 0,
	 .absent = "symlink", .settles = true},
	{"symlink_empty_target_enoent", SC_FILE, B_SYMLINK, "symlink", "", .expect = ENOENT,
	 .absent = "symlink"},
	{"mkfifo_unheld_gone", SC_FILE, B_MKFIFO, "fifo", .expect = 0, .absent = "fifo",
	 .settles = true},
	{"mknod_fifo_unheld_gone", SC_FILE, B_MKNOD, "fifo", .a = S_IFIFO | 0600, .expect = 0,
	 .absent = "fifo", .settles = true},
	/* devices 1:3 and 7:0 (makedev is no constant expression) */
	{"mknod_char_device_eperm", SC_FILE, B_MKNOD, "chr", .a = S_IFCHR | 0600, .b = 0x103,
	 .expect = EPERM, .absent = "chr"},
	{"mknod_block_device_eperm", SC_FILE, B_MKNOD, "blk", .a = S_IFBLK | 0600, .b = 0x700,
	 .expect = EPERM, .absent = "blk"},
	{"mknod_socket_unheld_gone", SC_FILE, B_MKNOD, "sockn", .a = S_IFSOCK | 0600, .expect = 0,
	 .absent = "sockn", .settles = true},
	{"bind_unix_socket_unheld_gone", SC_FILE, B_BIND, "sock", .expect = 0, .absent = "sock",
	 .settles = true},

	/* O_DIRECT: refused; a refused O_CREAT leaves nothing behind that is in use */
	{"open_rdwr_o_direct_einval", SC_FILE, B_OPEN, "f", .a = O_RDWR | O_DIRECT,
	 .expect = EINVAL},
	{"open_rdonly_o_direct_einval", SC_FILE, B_OPEN, "f", .a = O_RDONLY | O_DIRECT,
	 .expect = EINVAL},
	{"open_trunc_o_direct_einval", SC_FILE, B_OPEN, "f", .a = O_WRONLY | O_DIRECT | O_TRUNC,
	 .expect = EINVAL},
	{"create_o_direct_einval", SC_FILE, B_OPEN, "g", .a = O_CREAT_RW | O_DIRECT,
	 .expect = EINVAL, .absent = "g", .settles = true},

	/* hold scopes that mean nothing */
	BAD_SCOPE("forever", "forever", 0),
	BAD_SCOPE("PIN", "PIN", 0),
	BAD_SCOPE("pin_pin", "pin pin", 0),
	BAD_SCOPE("space_pin", " pin", 0),
	BAD_SCOPE("pinx", "pinx", 0),
	BAD_SCOPE("pid_empty", "pid:", 0),
	BAD_SCOPE("pid_abc", "pid:abc", 0),
	BAD_SCOPE("pid_12x", "pid:12x", 0),
	BAD_SCOPE("pid_minus_1", "pid:-1", 0),
	BAD_SCOPE("pid_0", "pid:0", 0),
	BAD_SCOPE("pid_plus_5", "pid:+5", 0),
	BAD_SCOPE("pid_space_5", "pid: 5", 0),
	BAD_SCOPE("pid_too_big", "pid:99999999999999999999999", 0),
	BAD_SCOPE("session_1", "session:1", 0),
	BAD_SCOPE("cgroup_x", "cgroup:/x", 0),
	BAD_SCOPE("process_1", "process:1", 0),
	BAD_SCOPE("empty", "", 0),
	BAD_SCOPE("pin_nul_x", "pin\0x", 5),
	{"hold_pid_above_pid_max_esrch", SC_FILE, B_SETXATTR, "f", POOLFS_XATTR_HOLD,
	 "pid:99999999", .expect = ESRCH},

	/* negative sizes */
	{"truncate_minus_1_einval", SC_FILE, B_TRUNCATE, "f", .a = -1, .expect = EINVAL},
	{"ftruncate_minus_1_einval", SC_FILE, B_FTRUNCATE, .a = -1, .expect = EINVAL},
	{"ftruncate_llong_min_einval", SC_FILE, B_FTRUNCATE, .a = LLONG_MIN, .expect = EINVAL},
	{"fallocate_negative_offset_einval", SC_FILE, B_FALLOCATE, .a = -4096, .b = 4096,
	 .expect = EINVAL},
	{"fallocate_negative_length_einval", SC_FILE, B_FALLOCATE, .a = 0, .b = -1,
	 .expect = EINVAL},
	{"fallocate_zero_length_einval", SC_FILE, B_FALLOCATE, .a = 0, .b = 0, .expect = EINVAL},
};

#define N_BAD_ROWS (sizeof(bad_rows) / sizeof(bad_rows[0]))

/* mnt/rel, where "@cN" is N copies of c */
static void row_path(const struct pool_fixture *p, const char *rel, char *buf, size_t len)
{
	if (rel && rel[0] == '@')
		repeat_name(buf, len, p, rel[1], (size_t)atoi(rel + 2));
	else
		assert_int_equal(pool_path(p, rel ? rel : "", buf, len), 0);
}

/* The row's scene; the file's descriptor (SC_FILE) or -1. */
static int make_scene(const struct pool_fixture *p, enum scene sc)
{
	char a[PATH_MAX], b[PATH_MAX];
	int fd = -1;

	switch (sc) {
	case SC_FILE:
		row_path(p, "f", a, sizeof(a));
		row_path(p, "d", b, sizeof(b));
		fd = create_file(a);
		assert_int_equal(write(fd, "12345", 5), 5);
		CHECK(mkdir(b, 0700));
		break;
	case SC_DOTS:
		row_path(p, "a", a, sizeof(a));
		row_path(p, "a/sub", b, sizeof(b));
		CHECK(mkdir(a, 0700));
		CHECK(mkdir(b, 0700));
		break;
	case SC_LONG:
		row_path(p, "@n255", a, sizeof(a));
		row_path(p, "@d255", b, sizeof(b));
		fd = create_file(a);
		CHECK(mkdir(b, 0700));
		break;
	}
	return fd;
}

/* The scene is as it was: nothing moved, the file has one name (more if the request linked it),
 * its size and no hold. */
static void check_scene(const struct pool_fixture *p, enum scene sc, int fd, int added_names)
{
	char a[PATH_MAX], b[PATH_MAX], refs[512];
	struct stat st;
	ssize_t n;

	switch (sc) {
	case SC_FILE:
		CHECK(fstat(fd, &st));
		assert_int_equal(st.st_nlink, 1 + added_names);
		assert_int_equal(st.st_size, 5);
		row_path(p, "f", a, sizeof(a));
		n = getxattr(a, POOLFS_XATTR_REFS, refs, sizeof(refs) - 1);
		CHECK(n);
		refs[n] = '\0';
		if (!strstr(refs, "holds 0\n"))
			fail_msg("%s after the refused request:\n%s", POOLFS_XATTR_REFS, refs);
		break;
	case SC_DOTS:
		row_path(p, "a/sub", a, sizeof(a));
		CHECK(stat(a, &st));
		assert_true(S_ISDIR(st.st_mode));
		break;
	case SC_LONG:
		row_path(p, "@n255", a, sizeof(a));
		row_path(p, "@d255", b, sizeof(b));
		ASSERT_EXISTS(a);
		ASSERT_EXISTS(b);
		CHECK(fstat(fd, &st));
		assert_int_equal(st.st_nlink, 1);
		break;
	}
}

/* The row's request: 0 if it succeeded (what it opened is closed), else its errno. */
static int bad_request(const struct bad_row *r, const char *path, const char *arg, int fd)
{
	size_t vlen = r->val ? (r->vlen ? r->vlen : strlen(r->val)) : 0;
	long res = -1;

	errno = 0;
	switch (r->op) {
	case B_FSETXATTR:
		res = fsetxattr(fd, r->arg, r->val, vlen, 0);
		break;
	case B_LINK_FD:
		res = linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH);
		break;
	case B_SYMLINK:
		res = symlink(r->arg, path);
		break;
	case B_SYMLINK_TO:
		res = symlink(arg, path);
		break;
	case B_MKNOD:
		res = mknod(path, (mode_t)r->a, (dev_t)r->b);
		break;
	case B_FTRUNCATE:
		res = ftruncate(fd, (off_t)r->a);
		break;
	case B_FALLOCATE:
		res = fallocate(fd, 0, (off_t)r->a, (off_t)r->b);
		break;
	default: {
		/* arg: the second path of a rename or link (an xattr name is r->arg itself) */
		const struct tu_req q = {.op = (enum tu_req_op)r->op,
					 .path = path,
					 .to = arg,
					 .flags = (int)r->a,
					 .len = (off_t)r->a,
					 .name = r->arg,
					 .val = r->val,
					 .vlen = r->vlen};
		return tu_request(&q);
	}
	}
	return res == -1 ? errno : 0;
}

/* Arguments that are paths in the pool (the rest are names or targets). */
static bool arg_is_path(enum bad_op op)
{
	return op == B_RENAME || op == B_RENAME2 || op == B_LINK || op == B_SYMLINK_TO;
}

static void test_bad_row(void **state)
{
	const struct bad_row *r = *state;
	void *pool_state = &matrix;
	struct pool_fixture *p = tu_pool(&pool_state);
	char path[PATH_MAX], arg[PATH_MAX], gone[PATH_MAX];
	int fd, got;

	fd = make_scene(p, r->scene);
	row_path(p, r->path, path, sizeof(path));
	row_path(p, arg_is_path(r->op) ? r->arg : NULL, arg, sizeof(arg));
	got = bad_request(r, path, arg, fd);
	if (got != r->expect && !(r->also && got == r->also))
		fail_msg("%s: %s, want %s", r->name, errname(got), errname(r->expect));
	if (r->absent) {
		row_path(p, r->absent, gone, sizeof(gone));
		if (r->settles)
			ASSERT_GONE(gone);
		else
			ASSERT_ABSENT(gone);
	}
	check_scene(p, r->scene, fd, r->added_names);
	ftest_close_all();
	end_of_test(&pool_state);
}

/* The matrix's cleanup, for a row. */
static int bad_row_cleanup(void **state)
{
	void *pool_state = &matrix;

	(void)state;
	return matrix_cleanup(&pool_state);
}

#define M(fn) cmocka_unit_test_prestate_setup_teardown(fn, NULL, matrix_cleanup, &matrix)

static const struct CMUnitTest scenarios[] = {
	M(test_name_length),
	M(test_dot_and_dotdot),
	M(test_deep_paths),
	M(test_xattr_limits),
	M(test_xattr_poolfs_names),
	M(test_chmod_cannot_widen),
	M(test_chown_cannot_give_away),
	M(test_rename_over_other_users_entries),
	M(test_removed_inodes),
	M(test_bad_holds),
	M(test_negative_and_huge_sizes),
};

#define N_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

/* The scenarios, every row, and last the check that the daemon took them all. */
int main(void)
{
	struct CMUnitTest tests[N_SCENARIOS + N_BAD_ROWS + 1];

	memcpy(tests, scenarios, sizeof(scenarios));
	rows_to_tests(tests + N_SCENARIOS, bad_rows, sizeof(bad_rows[0]), N_BAD_ROWS, test_bad_row,
		      NULL, bad_row_cleanup);
	tests[N_SCENARIOS + N_BAD_ROWS] = (struct CMUnitTest)M(test_after_matrix);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
