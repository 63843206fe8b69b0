/* Hardening (docs/interface.md "Limits" and "Entries and permissions"): the shared pool root is
 * its owner's alone, one user cannot make the daemon hold unbounded memory, and every attribute
 * change moves ctime. A real pool mounted allow_other by root, a second uid (OTHER_UID) through
 * run_as_user. */
#include "itest.h"

#include <sys/statvfs.h>
#include <sys/xattr.h>

TU_SETUP(setup_none, "autohold=none")
TU_SETUP(setup_exempt, "autohold=none,root_exempt")

static int setup_user_quota(void **state)
{
	/* On passthrough each user's files go to a tmpfs of its own (docs/design.md "Per-user stores"). */
	return tu_setup(state, "autohold=none,max_user_size=32M");
}

TU_SETUP(setup_meta_1m, "autohold=none,max_user_meta=1M")
TU_SETUP(setup_entries_10, "autohold=none,max_user_entries=10")

/* ---- the pool root is nobody's but its owner's ---- */

/* What another user may not do to the root: each call with the errno it must get. */
static int other_changes_root(void *arg)
{
	const char *mnt = arg;
	static const char *const scopes[] = {"pin", "process", "session", "cgroup", "pid:1"};
	const struct timespec old[2] = {{.tv_sec = 978307200}, {.tv_sec = 978307200}};
	char pid[32];

	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++)
		USER_EXPECT((int)i + 1,
			    setxattr(mnt, POOLFS_XATTR_HOLD, scopes[i], strlen(scopes[i]), 0),
			    EPERM);
	snprintf(pid, sizeof(pid), "pid:%d", (int)getpid());
	USER_EXPECT(10, setxattr(mnt, POOLFS_XATTR_HOLD, pid, strlen(pid), 0), EPERM);
	USER_EXPECT(11, removexattr(mnt, POOLFS_XATTR_HOLD), EPERM);
	USER_EXPECT(12, setxattr(mnt, "user.x", "1", 1, 0), EPERM);
	USER_EXPECT(13, removexattr(mnt, "user.x"), EPERM);
	USER_EXPECT(14, utimensat(AT_FDCWD, mnt, old, 0), EPERM);   /* touch -d 2001-01-01 */
	USER_EXPECT(15, utimensat(AT_FDCWD, mnt, NULL, 0), EACCES); /* touch */
	USER_EXPECT(16, chmod(mnt, 0777), EPERM);
	USER_EXPECT(17, chown(mnt, OTHER_UID, OTHER_GID), EPERM);
	/* Reading the root's attributes and the pool's usage stays open to everyone. */
	{
		char buf[4096];
		struct stat st;
		USER_OK(20, getxattr(mnt, POOLFS_XATTR_STAT, buf, sizeof(buf)));
		USER_OK(21, getxattr(mnt, POOLFS_XATTR_REFS, buf, sizeof(buf)));
		USER_OK(22, listxattr(mnt, buf, sizeof(buf)));
		USER_OK(23, stat(mnt, &st));
	}
	return 0;
}

static void test_root_is_the_owners(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(mnt, p, "");
	PATH(f, p, "roots-file");
	struct stat before, after;
	int fd;

	CHECK(stat(mnt, &before));
	AS_OTHER_OK(other_changes_root, mnt);
	CHECK(stat(mnt, &after));
	if (after.st_mtim.tv_sec != before.st_mtim.tv_sec || (after.st_mode & 07777) != 01777)
		fail_msg("the root changed: mtime %ld -> %ld, mode %04o",
			 (long)before.st_mtim.tv_sec, (long)after.st_mtim.tv_sec,
			 after.st_mode & 07777);
	/* The refused pin changed nothing: root's closed, unheld file still goes. */
	fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd);
	CHECK(close(fd));
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

/* The other user's file, created and closed with a hold on the pool root held by root. */
static int other_creates_and_closes(void *arg)
{
	const char *path = arg;
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);

	USER_OK(1, fd);
	USER_OK(2, write(fd, "x", 1));
	USER_OK(3, close(fd));
	return 0;
}

static void test_root_hold_keeps_only_the_holders(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	char mnt[PATH_MAX], mine[PATH_MAX], theirs[PATH_MAX];
	int fd;

	tu_paths(p, "", mnt, "roots-file", mine, "others-file", theirs);
	/* The owner may hold the root; the hold keeps root's own entries... */
	CHECK(setxattr(mnt, POOLFS_XATTR_HOLD, "pin", 3, 0));
	fd = open(mine, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd);
	CHECK(close(fd));
	/* ...but not another user's: theirs goes as soon as it is closed. */
	AS_OTHER_OK(other_creates_and_closes, theirs);
	ASSERT_GONE(theirs);
	pool_sleep_ms(50);
	ASSERT_EXISTS(mine);
	CHECK(removexattr(mnt, POOLFS_XATTR_HOLD));
	ASSERT_GONE(mine);
	tu_backing_back_to_base(state);
}

static void test_root_hold_with_root_exempt_keeps_all(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(mnt, p, "");
	PATH(theirs, p, "others-file");

	/* With root_exempt root may access every entry, so its hold keeps every entry. */
	CHECK(setxattr(mnt, POOLFS_XATTR_HOLD, "pin", 3, 0));
	AS_OTHER_OK(other_creates_and_closes, theirs);
	pool_sleep_ms(50);
	ASSERT_EXISTS(theirs);
	CHECK(removexattr(mnt, POOLFS_XATTR_HOLD));
	ASSERT_GONE(theirs);
}

/* ---- bounded per user ---- */

/* uid OTHER_UID, in a folder it pins: files with 32 KiB xattrs until refused. Returns the
 * accepted bytes through the pipe in arg. */
struct xattr_flood {
	char dir[PATH_MAX];
	int files;
	int want_errno;
	long long accepted; /* value bytes accepted, filled by the child via a pipe */
	int pipe_w;
};

static int flood_xattrs(void *arg)
{
	struct xattr_flood *x = arg;
	static char value[32 * 1024];
	long long accepted = 0;
	int refused = 0;

	memset(value, 'v', sizeof(value));
	USER_OK(1, mkdir(x->dir, 0700));
	USER_OK(2, setxattr(x->dir, POOLFS_XATTR_HOLD, "pin", 3, 0));
	for (int i = 0; i < x->files && !refused; i++) {
		char f[PATH_MAX + 16];
		int fd;
		snprintf(f, sizeof(f), "%s/f%d", x->dir, i);
		fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600);
		USER_OK(3, fd);
		USER_OK(4, close(fd));
		if (setxattr(f, "user.big", value, sizeof(value), 0) == 0) {
			accepted += (long long)sizeof(value);
			continue;
		}
		USER_TRUE(5, errno == x->want_errno);
		refused = 1;
	}
	USER_TRUE(6, refused);
	USER_TRUE(7, write(x->pipe_w, &accepted, sizeof(accepted)) == sizeof(accepted));
	USER_OK(8, removexattr(x->dir, POOLFS_XATTR_HOLD));
	return 0;
}

/* The other user's flood of files with 32 KiB xattrs in a folder it pins, until refused with
 * want_errno; it releases the folder at the end, so everything must go (checked by the caller
 * through the backing store: root may not look the names up). */
static long long run_flood(struct pool_fixture *p, int files, int want_errno)
{
	struct xattr_flood x = {.files = files, .want_errno = want_errno};
	int fds[2];
	long long got = -1;

	assert_int_equal(pool_path(p, "flood", x.dir, sizeof(x.dir)), 0);
	CHECK(pipe(fds));
	x.pipe_w = fds[1];
	AS_OTHER_OK(flood_xattrs, &x);
	CHECK(close(fds[1]));
	if (read(fds[0], &got, sizeof(got)) != sizeof(got))
		fail_msg("the flooding child sent no count");
	CHECK(close(fds[0]));
	return got;
}

static void test_xattrs_count_against_max_user_size(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	long long got;

	/* 2048 files x 32 KiB = 64 MiB of xattrs asked; the 32 MiB quota refuses before. */
	got = run_flood(p, 2048, EDQUOT);
	tu_backing_back_to_base(state);
	fprintf(stderr, "# accepted %lld bytes of xattrs under max_user_size=32M\n", got);
	if (got > 32LL << 20)
		fail_msg("accepted %lld bytes of xattrs past a 32 MiB quota", got);
	if (got < 30LL << 20)
		fail_msg("refused already at %lld bytes (entries and holds cost far less)", got);
	tu_backing_back_to_base(state);
}

static void test_max_user_meta_bounds_xattrs(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	long long got = run_flood(p, 256, EDQUOT);

	tu_backing_back_to_base(state);

	if (got > 1LL << 20 || got < 768LL << 10)
		fail_msg("max_user_meta=1M accepted %lld bytes of xattrs", got);
}

static int fill_entries(void *arg)
{
	const char *dir = arg;
	struct statvfs sv;
	char f[PATH_MAX + 16];
	int fd, i;

	USER_OK(1, mkdir(dir, 0700));
	USER_OK(2, setxattr(dir, POOLFS_XATTR_HOLD, "pin", 3, 0));
	for (i = 1; i < 10; i++) { /* the folder is the first of 10 entries */
		snprintf(f, sizeof(f), "%s/f%d", dir, i);
		fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600);
		USER_OK(3, fd);
		USER_OK(4, close(fd));
	}
	snprintf(f, sizeof(f), "%s/one-too-many", dir);
	USER_EXPECT(5, open(f, O_RDWR | O_CREAT | O_EXCL, 0600), EDQUOT);
	USER_EXPECT(6, mkdir(f, 0700), EDQUOT);
	/* df -i shows the limit and what is left. */
	USER_OK(7, statvfs(dir, &sv));
	USER_TRUE(8, sv.f_files == 10 && sv.f_ffree == 0);
	USER_OK(9, removexattr(dir, POOLFS_XATTR_HOLD));
	return 0;
}

static void test_max_user_entries(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(dir, p, "many");
	PATH(f, p, "roots-own");
	int fd;

	AS_OTHER_OK(fill_entries, dir);
	tu_backing_back_to_base(state);
	/* The limit is per user: root's entries are not affected by the other user's count. */
	fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd);
	CHECK(close(fd));
}

static void test_holds_per_entry_bounded_and_refs_readable(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "held");
	char pid[32], *buf;
	ssize_t len, got;
	int fd, taken = 0, i;

	fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd);
	snprintf(pid, sizeof(pid), "pid:%d", (int)getpid());
	for (i = 0; i < 2 * POOLFS_HOLDS_PER_ENTRY_MAX; i++) { /* well past the limit */
		if (setxattr(f, POOLFS_XATTR_HOLD, pid, strlen(pid), 0) == 0) {
			taken++;
			continue;
		}
		if (errno != ENOSPC)
			fail_msg("hold %d: %s, want ENOSPC past the per-entry limit", i,
				 errname(errno));
		break;
	}
	if (taken != POOLFS_HOLDS_PER_ENTRY_MAX)
		fail_msg("%d holds taken on one entry, want the documented %d", taken,
			 POOLFS_HOLDS_PER_ENTRY_MAX);
	/* user.poolfs.refs stays readable, sized from its content. */
	len = getxattr(f, POOLFS_XATTR_REFS, NULL, 0);
	CHECK(len);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	got = getxattr(f, POOLFS_XATTR_REFS, buf, (size_t)len);
	CHECK(got);
	buf[got] = '\0';
	snprintf(pid, sizeof(pid), "holds %d\n", POOLFS_HOLDS_PER_ENTRY_MAX);
	if (!strstr(buf, pid))
		fail_msg("refs text lacks '%s':\n%.200s", pid, buf);
	free(buf);
	CHECK(removexattr(f, POOLFS_XATTR_HOLD));
	CHECK(close(fd));
	ASSERT_GONE(f);
}

/* ---- ctime ---- */

static int ctime_after(const char *path, const struct stat *before)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return 0;
	return st.st_ctim.tv_sec > before->st_ctim.tv_sec ||
	       (st.st_ctim.tv_sec == before->st_ctim.tv_sec &&
		st.st_ctim.tv_nsec > before->st_ctim.tv_nsec);
}

/* Every attribute change moves ctime, as on tmpfs (pjdfstest's chmod/00.t and friends). */
static void expect_ctime_moves(const char *path, int is_dir)
{
	const struct timespec t[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
	struct stat st;

	for (int op = 0; op < 6; op++) {
		int r = 0;
		CHECK(stat(path, &st));
		pool_sleep_ms(5);
		switch (op) {
		case 0:
			r = chmod(path, is_dir ? 0700 : 0600);
			break;
		case 1:
			r = chown(path, getuid(), getgid());
			break;
		case 2:
			r = utimensat(AT_FDCWD, path, t, 0);
			break;
		case 3:
			r = utimensat(AT_FDCWD, path, NULL, 0);
			break;
		case 4:
			r = is_dir ? 0 : truncate(path, 4096);
			break;
		case 5:
			r = setxattr(path, "user.c", "1", 1, 0);
			break;
		}
		CHECK(r);
		if ((op != 4 || !is_dir) && !ctime_after(path, &st))
			fail_msg("%s: ctime did not move on change %d (%s)", path, op,
				 is_dir ? "folder" : "file");
	}
}

static void test_ctime_moves_on_every_change(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "c-file");
	PATH(d, p, "c-dir");
	int fd;

	fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd);
	CHECK(mkdir(d, 0700));
	expect_ctime_moves(f, 0);
	expect_ctime_moves(d, 1);
	CHECK(close(fd));
	CHECK(rmdir(d));
	ASSERT_GONE(f);
}

/* The pool's own texts change as they are read (ops counts the probe itself): a size probe and
 * then a read of that size must never meet ERANGE, as getfattr and os.getxattr do it. */
static void test_live_texts_fit_their_probe(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	static const char *const names[] = {POOLFS_XATTR_OPS, POOLFS_XATTR_REFS, POOLFS_XATTR_STAT};
	char buf[POOLFS_XATTR_VALUE_MAX];

	for (int round = 0; round < 150; round++) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			ssize_t want = getxattr(p->mnt, names[i], NULL, 0), got;

			if (want < 0)
				fail_msg("probe of %s: %s", names[i], errname(errno));
			got = getxattr(p->mnt, names[i], buf, (size_t)want);
			if (got < 0)
				fail_msg("round %d: read of %s with its probed size %zd: %s", round,
					 names[i], want, errname(errno));
			assert_true(got <= want);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_root_is_the_owners, setup_none, tu_teardown),
		cmocka_unit_test_setup_teardown(test_root_hold_keeps_only_the_holders, setup_none,
						tu_teardown),
		cmocka_unit_test_setup_teardown(test_root_hold_with_root_exempt_keeps_all,
						setup_exempt, tu_teardown),
		cmocka_unit_test_setup_teardown(test_xattrs_count_against_max_user_size,
						setup_user_quota, tu_teardown),
		cmocka_unit_test_setup_teardown(test_max_user_meta_bounds_xattrs, setup_meta_1m,
						tu_teardown),
		cmocka_unit_test_setup_teardown(test_max_user_entries, setup_entries_10,
						tu_teardown),
		cmocka_unit_test_setup_teardown(test_holds_per_entry_bounded_and_refs_readable,
						setup_none, tu_teardown),
		cmocka_unit_test_setup_teardown(test_ctime_moves_on_every_change, setup_none,
						tu_teardown),
		cmocka_unit_test_setup_teardown(test_live_texts_fit_their_probe, setup_none,
						tu_teardown),
	};

	return ITEST_RUN(tests);
}
