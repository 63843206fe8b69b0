/* Entry kinds (docs/interface.md "Kinds of entry") against real multi-user pools (allow_other,
 * mounted by root): hard links (names apart from entries), symbolic links, FIFOs, Unix sockets,
 * refused device nodes, and root on its own entries. The spec is docs/interface.md with the entry-kinds behaviour: every errno
 * path of it has a test here; the combinations of modes, names and targets are
 * test_entry_table.c's, the fs.protected_* sysctls test_protected.c's, other users' refusals
 * tests/security's.
 *
 * Users: A = uid 1001, B = uid 1002 (through run_as_user, like setpriv --reuid --regid
 * --clear-groups), and root (the test, the pool's owner, not exempt unless the pool says
 * root_exempt). Removal is polled for with a bound (GONE_MS), never timed. */
#include "itest.h"
#include "tu_sysctl.h"

#include <stdbool.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>

#define UID_A 1001
#define GID_A 1001
#define UID_B 1002
#define GID_B 1002

#define HOLD POOLFS_XATTR_HOLD
#define REFS POOLFS_XATTR_REFS

/* What every name beyond an entry's first costs its owner (max_user_meta), and the most names
 * one entry may have. */
#define NAME_COST 320
#define MAX_NAMES 65000

TU_SETUP(setup_none, "autohold=none")
TU_SETUP(setup_session, "autohold=session")
TU_SETUP(setup_exempt, "autohold=none,root_exempt")

static int setup_private(void **state)
{
	return tu_setup_private(state, "autohold=none");
}

#define META_LIMIT 4096
TU_SETUP(setup_meta, "autohold=none,max_user_meta=4k")

#define META_LIMIT_SYMLINK 8192
TU_SETUP(setup_meta_symlink, "autohold=session,max_user_meta=8k")
TU_SETUP(setup_entries, "autohold=none,max_user_entries=2")

/* The machine's settings back before the pool goes (also when the test failed). */
static int teardown_restore(void **state)
{
	int r = tu_sysctl_restore_all();

	if (r < 0)
		fprintf(stderr, "# could not restore a sysctl: %s\n", errname(-r));
	return tu_teardown(state) < 0 || r < 0 ? -1 : 0;
}

/* ---- helpers ---- */

/* A new file holding data, open O_RDWR. */
static int new_file(const char *path, const char *data)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	size_t n = data ? strlen(data) : 0;

	if (fd < 0)
		fail_msg("create %s: %s", path, errname(errno));
	if (n && write(fd, data, n) != (ssize_t)n)
		fail_msg("write %s: %s", path, errname(errno));
	return fd;
}

/* The file at path reads exactly data. */
static void expect_content(const char *path, const char *data)
{
	char buf[256] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		fail_msg("open %s: %s", path, errname(errno));
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n != (ssize_t)strlen(data) || memcmp(buf, data, (size_t)n) != 0)
		fail_msg("%s reads \"%.*s\" (%zd bytes), want \"%s\"", path, n > 0 ? (int)n : 0,
			 buf, n, data);
}

static struct stat lstat_of(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == -1)
		fail_msg("lstat %s: %s", path, errname(errno));
	return st;
}

/* path is a name of the inode ino, which has nlink names. */
static void expect_name_of(const char *path, ino_t ino, nlink_t nlink)
{
	struct stat st = lstat_of(path);

	if (st.st_ino != ino || st.st_nlink != nlink)
		fail_msg("%s: inode %lu with %lu names, want inode %lu with %lu", path,
			 (unsigned long)st.st_ino, (unsigned long)st.st_nlink, (unsigned long)ino,
			 (unsigned long)nlink);
}

static void expect_fd_nlink(int fd, nlink_t nlink)
{
	struct stat st;

	CHECK(fstat(fd, &st));
	if (st.st_nlink != nlink)
		fail_msg("fstat: %lu names, want %lu", (unsigned long)st.st_nlink,
			 (unsigned long)nlink);
}

/* One user's line of user.poolfs.stat (zeros if the user has none). */
struct usage {
	long long entries, bytes, meta;
};

static struct usage user_usage(const struct pool_fixture *p, uid_t uid)
{
	char text[8192], prefix[32];
	struct usage u = {0, 0, 0};
	ssize_t n = getxattr(p->mnt, POOLFS_XATTR_STAT, text, sizeof(text) - 1);

	if (n < 0)
		fail_msg("getxattr %s: %s", POOLFS_XATTR_STAT, errname(errno));
	text[n > 0 ? n : 0] = '\0';
	snprintf(prefix, sizeof(prefix), "user %u ", (unsigned)uid);
	for (const char *s = text; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL)
		if (strncmp(s, prefix, strlen(prefix)) == 0 &&
		    sscanf(s + strlen(prefix), "entries %lld bytes %lld meta %lld", &u.entries,
			   &u.bytes, &u.meta) < 2)
			fail_msg("malformed line in %s:\n%s", POOLFS_XATTR_STAT, text);
	return u;
}

/* Poll until uid's metadata is want bytes (a removal may still be on its way). */
static void expect_meta(const struct pool_fixture *p, uid_t uid, long long want)
{
	long long deadline = pool_now_ms() + GONE_MS;
	struct usage u;

	while ((u = user_usage(p, uid)).meta != want) {
		if (pool_now_ms() > deadline)
			fail_msg("uid %u has %lld bytes of metadata, want %lld", (unsigned)uid,
				 u.meta, want);
		pool_sleep_ms(5);
	}
}

/* A removed entry is counted until the kernel has let go of it too (docs/design.md "The
 * LOOKUP/OPEN race"), a moment after its names went. */
static void expect_entries(const struct pool_fixture *p, uid_t uid, long long want)
{
	long long deadline = pool_now_ms() + GONE_MS;
	struct usage u;

	while ((u = user_usage(p, uid)).entries != want) {
		if (pool_now_ms() > deadline)
			fail_msg("uid %u has %lld entries, want %lld", (unsigned)uid, u.entries,
				 want);
		pool_sleep_ms(5);
	}
}

static void proc_fd(char *buf, size_t len, int fd)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

/* A file made, written, pinned and closed (autohold=none pools keep it by the pin): 0 or -1 with
 * errno, usable in a child of any uid. */
static int make_pinned(const char *path, const char *data)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);

	if (fd < 0)
		return -1;
	if (write(fd, data, strlen(data)) != (ssize_t)strlen(data) ||
	    setxattr(path, HOLD, "pin", 3, 0) == -1) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

/* A folder made and pinned: 0 or -1. */
static int make_pinned_dir(const char *path)
{
	if (mkdir(path, 0700) == -1)
		return -1;
	return setxattr(path, HOLD, "pin", 3, 0);
}

/* ---- links: who may give an entry another name ---- */

/* A's, B's and root's entries in one pool (autohold=none: the pins keep them). */
struct lk {
	char mnt[PATH_MAX];
	char a_dat[PATH_MAX];	/* A's file, pinned */
	char a_dir[PATH_MAX];	/* A's folder, pinned */
	char a_dir_x[PATH_MAX]; /* a name in it */
	char a_dir_y[PATH_MAX];
	char a_2[PATH_MAX];   /* A's second name in the shared root */
	char b_dat[PATH_MAX]; /* B's file, pinned */
	char b_dir[PATH_MAX]; /* B's folder, pinned */
	char b_dir_x[PATH_MAX];
	char b_new[PATH_MAX]; /* a new name in the shared root */
	char r_dat[PATH_MAX]; /* root's file (open in the test) */
	char r_dir[PATH_MAX]; /* root's folder, pinned */
	char r_dir_x[PATH_MAX];
	char r_new[PATH_MAX];
};

static void lk_init(const struct pool_fixture *p, struct lk *l)
{
	memset(l, 0, sizeof(*l));
	tu_paths(p, "", l->mnt, "a.dat", l->a_dat, "adir", l->a_dir, "adir/x", l->a_dir_x, "adir/y",
		 l->a_dir_y, "a-2", l->a_2, "b.dat", l->b_dat, "bdir", l->b_dir, "bdir/x",
		 l->b_dir_x, "b-new", l->b_new, "r.dat", l->r_dat, "rdir", l->r_dir, "rdir/x",
		 l->r_dir_x, "r-new", l->r_new);
}

static int lk_a_makes(void *v)
{
	struct lk *l = v;

	USER_OK(1, make_pinned(l->a_dat, "A data"));
	USER_OK(2, make_pinned_dir(l->a_dir));
	return 0;
}

static int lk_b_makes(void *v)
{
	struct lk *l = v;

	USER_OK(1, make_pinned(l->b_dat, "B data"));
	USER_OK(2, make_pinned_dir(l->b_dir));
	return 0;
}

/* One link(from, to) in the scene, its names by field of struct lk, and the errno it must give
 * (0: it works). */
struct lk_try {
	size_t from, to;
	int expect;
};
#define LK(from_, to_, expect_)                                                                    \
	{                                                                                          \
		offsetof(struct lk, from_), offsetof(struct lk, to_), (expect_)                    \
	}

/* A: its own file, into its own folder and the shared root, works; into others' folders, or of
 * others' files, not. */
static const struct lk_try lk_a_tries[] = {
	LK(a_dat, r_dir_x, EACCES), LK(a_dat, b_dir_x, EACCES), LK(b_dat, a_2, EACCES),
	LK(r_dat, a_2, EACCES),	    LK(a_dat, a_2, 0),		LK(a_dat, a_dir_x, 0),
};

/* B: A's file and its names by path are EACCES everywhere, and so is a name in A's folder; A's
 * name in the shared root cannot be replaced. */
static const struct lk_try lk_b_tries[] = {
	LK(a_dat, b_new, EACCES),   LK(a_dat, b_dir_x, EACCES), LK(a_2, b_new, EACCES),
	LK(a_dir_x, b_new, EACCES), LK(a_dir, b_new, EACCES),	LK(b_dat, a_dir_y, EACCES),
	LK(b_dat, r_dir_x, EACCES), LK(b_dat, a_2, EACCES),
};

/* root, not exempt: the same as B. */
static const struct lk_try lk_root_tries[] = {
	LK(a_dat, r_new, EACCES),
	LK(a_2, r_new, EACCES),
	LK(r_dat, a_dir_y, EACCES),
	LK(r_dat, a_2, EACCES),
};

/* The tries in order, as the calling user: 0, or the number (from 1) of the first that went
 * otherwise (said on stderr). No cmocka: A and B try in children. */
static int lk_try_all(const struct lk *l, const struct lk_try *t, size_t n)
{
	const char *base = (const char *)l;

	for (size_t i = 0; i < n; i++) {
		const struct tu_req q = {
			.op = TU_REQ_LINK, .path = base + t[i].from, .to = base + t[i].to};
		int e = tu_request(&q);

		if (e != t[i].expect) {
			fprintf(stderr, "# uid %d: link(%s, %s): %s, want %s\n", (int)getuid(),
				q.path, q.to, errname(e), errname(t[i].expect));
			return (int)i + 1;
		}
	}
	return 0;
}

static int lk_a_links(void *v)
{
	struct lk *l = v;
	struct stat st;
	int r = lk_try_all(l, lk_a_tries, ARRAY_SIZE(lk_a_tries));

	if (r)
		return r;
	USER_OK(7, lstat(l->a_2, &st));
	USER_TRUE(8, st.st_nlink == 3 && st.st_uid == UID_A && (st.st_mode & 07777) == 0600);
	USER_TRUE(9, tu_listed(l->mnt, "a-2") == 1);
	USER_TRUE(10, tu_listed(l->a_dir, "x") == 1);
	return 0;
}

static int lk_b_links(void *v)
{
	struct lk *l = v;
	struct stat st;
	int r = lk_try_all(l, lk_b_tries, ARRAY_SIZE(lk_b_tries));

	if (r)
		return r;
	USER_EXPECT(9, linkat(AT_FDCWD, l->a_dat, AT_FDCWD, l->b_new, AT_SYMLINK_FOLLOW), EACCES);
	/* A's name in the shared root is hidden */
	USER_EXPECT(10, lstat(l->a_2, &st), EACCES);
	USER_TRUE(11, tu_listed(l->mnt, "a-2") == 0);
	USER_TRUE(12, tu_listed(l->mnt, "b-new") == 0);
	/* B's own works */
	USER_OK(13, link(l->b_dat, l->b_dir_x));
	USER_OK(14, lstat(l->b_dir_x, &st));
	USER_TRUE(15, st.st_nlink == 2 && st.st_uid == UID_B);
	USER_OK(16, unlink(l->b_dir_x));
	return 0;
}

static int lk_a_cleans(void *v)
{
	struct lk *l = v;
	struct stat st;

	USER_OK(1, unlink(l->a_2));
	USER_OK(2, unlink(l->a_dir_x));
	USER_OK(3, lstat(l->a_dat, &st));
	USER_TRUE(4, st.st_nlink == 1);
	return 0;
}

static void test_link_by_path_owner_only(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct lk l;
	int fd;

	lk_init(p, &l);
	fd = new_file(l.r_dat, "root data");
	CHECK(make_pinned_dir(l.r_dir));
	AS_OK(UID_A, GID_A, lk_a_makes, &l);
	AS_OK(UID_B, GID_B, lk_b_makes, &l);
	AS_OK(UID_A, GID_A, lk_a_links, &l);
	AS_OK(UID_B, GID_B, lk_b_links, &l);
	/* root, not exempt: the same as B */
	assert_int_equal(lk_try_all(&l, lk_root_tries, ARRAY_SIZE(lk_root_tries)), 0);
	ASSERT_ABSENT(l.r_new);
	assert_int_equal(tu_listed(p->mnt, "a-2"), 0);
	/* root's own file, into its own folder and the shared root */
	CHECK(link(l.r_dat, l.r_dir_x));
	CHECK(link(l.r_dat, l.r_new));
	expect_name_of(l.r_new, lstat_of(l.r_dat).st_ino, 3);
	expect_content(l.r_dir_x, "root data");
	AS_OK(UID_A, GID_A, lk_a_cleans, &l);
	CHECK(unlink(l.r_new));
	CHECK(unlink(l.r_dir_x));
	CHECK(close(fd));
}

/* root_exempt: root may reach A's file, and give it names where A could (the shared root, A's
 * folder: they are A's entry's names), but not in a folder of another owner than A's (its own):
 * the spec's example of that rule. A still cannot put a name in root's folder. */
static int lk_a_sees_roots_names(void *v)
{
	struct lk *l = v;
	struct stat st;

	USER_OK(1, lstat(l->r_new, &st));
	USER_TRUE(2, st.st_uid == UID_A && st.st_nlink == 3);
	USER_TRUE(3, tu_listed(l->mnt, "r-new") == 1);
	USER_TRUE(4, tu_listed(l->a_dir, "x") == 1);
	USER_EXPECT(5, link(l->a_dat, l->r_dir_x), EACCES);
	USER_OK(6, unlink(l->r_new));
	USER_OK(7, unlink(l->a_dir_x));
	return 0;
}

static void test_link_root_exempt_not_owner(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct lk l;

	lk_init(p, &l);
	CHECK(make_pinned_dir(l.r_dir));
	AS_OK(UID_A, GID_A, lk_a_makes, &l);
	ASSERT_EXISTS(l.a_dat); /* exempt: root sees it */
	CHECK_ERR(link(l.a_dat, l.r_dir_x), EPERM);
	ASSERT_ABSENT(l.r_dir_x);
	assert_int_equal(lstat_of(l.a_dat).st_nlink, 1);
	CHECK(link(l.a_dat, l.r_new));
	CHECK(link(l.a_dat, l.a_dir_x));
	expect_name_of(l.a_dir_x, lstat_of(l.a_dat).st_ino, 3);
	AS_OK(UID_A, GID_A, lk_a_sees_roots_names, &l);
	assert_int_equal(lstat_of(l.a_dat).st_nlink, 1);
}

/* ---- links through a descriptor of another user's entry ---- */

struct pass {
	char mnt[PATH_MAX];
	char a_dat[PATH_MAX];
	char b_new[PATH_MAX];
	char b_dir[PATH_MAX];
	char b_dir_x[PATH_MAX];
	char a_own[PATH_MAX]; /* A's second name, through its own descriptor */
	int sock;
	int fd; /* the descriptor B inherits */
};

/* As A: make a.dat, give it a second name through its own descriptor (the owner may), send the
 * descriptor to root. */
static int pass_a_sends(void *v)
{
	struct pass *ps = v;
	char proc[64];
	int fd = open(ps->a_dat, O_RDWR | O_CREAT | O_EXCL, 0600);

	USER_OK(1, fd);
	USER_TRUE(2, write(fd, "A data", 6) == 6);
	proc_fd(proc, sizeof(proc), fd);
	USER_OK(3, linkat(AT_FDCWD, proc, AT_FDCWD, ps->a_own, AT_SYMLINK_FOLLOW));
	USER_OK(4, unlink(ps->a_own));
	USER_TRUE(5, tu_send_fd(ps->sock, fd) == 0);
	close(fd);
	return 0;
}

/* As B, with A's descriptor inherited from root: no name through it, in the shared root or in
 * B's own folder; the descriptor itself still works. */
static int pass_b_links(void *v)
{
	struct pass *ps = v;
	char proc[64], buf[8] = "";
	struct stat st;

	proc_fd(proc, sizeof(proc), ps->fd);
	USER_OK(1, fstat(ps->fd, &st));
	USER_TRUE(2, st.st_uid == UID_A);
	USER_TRUE(3, pread(ps->fd, buf, 6, 0) == 6 && memcmp(buf, "A data", 6) == 0);
	USER_OK(4, mkdir(ps->b_dir, 0700));
	USER_EXPECT(5, linkat(AT_FDCWD, proc, AT_FDCWD, ps->b_new, AT_SYMLINK_FOLLOW), EPERM);
	USER_EXPECT(6, linkat(AT_FDCWD, proc, AT_FDCWD, ps->b_dir_x, AT_SYMLINK_FOLLOW), EPERM);
	USER_TRUE(7, tu_listed(ps->mnt, "b-new") == 0);
	USER_TRUE(8, tu_listed(ps->b_dir, "x") == 0);
	USER_OK(9, rmdir(ps->b_dir));
	return 0;
}

/* As B, with root's own descriptor inherited from root (its owner). */
static int pass_b_links_roots(void *v)
{
	struct pass *ps = v;
	char proc[64];

	proc_fd(proc, sizeof(proc), ps->fd);
	USER_EXPECT(1, linkat(AT_FDCWD, proc, AT_FDCWD, ps->b_new, AT_SYMLINK_FOLLOW), EPERM);
	USER_TRUE(2, tu_listed(ps->mnt, "b-new") == 0);
	return 0;
}

static void test_link_through_passed_fd_eperm(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct pass ps;
	char proc[64];
	int sv[2], fd, rfd, ra;
	pid_t a;

	memset(&ps, 0, sizeof(ps));
	tu_paths(p, "", ps.mnt, "a.dat", ps.a_dat, "b-new", ps.b_new, "bdir", ps.b_dir, "bdir/x",
		 ps.b_dir_x, "a-own", ps.a_own);
	PATH(r_dat, p, "r.dat");
	PATH(r_new, p, "r-new");
	PATH(r_own, p, "r-own");
	/* The kernel's own check (fs.protected_hardlinks) would refuse B before the daemon sees
	 * the request: off, so the daemon's answer is what is tested. */
	CHECK_0(tu_sysctl_set("fs/protected_hardlinks", 0));
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ps.sock = sv[0];
	a = run_as_spawn(UID_A, GID_A, pass_a_sends, &ps);
	CHECK(close(sv[0]));
	if (a < 0)
		fail_msg("spawn A: %s", errname((int)-a));
	tu_track(a);
	fd = tu_recv_fd(sv[1], CHILD_MS);
	ra = run_as_reap(a);
	tu_forget(a);
	CHECK(close(sv[1]));
	if (ra != 0 || fd < 0)
		fail_msg("A's descriptor did not arrive: A step %d, recv %s", ra,
			 fd < 0 ? errname(-fd) : "ok");
	/* root, not exempt, with A's descriptor passed over a socket: not the owner */
	proc_fd(proc, sizeof(proc), fd);
	CHECK_ERR(linkat(AT_FDCWD, proc, AT_FDCWD, r_new, AT_SYMLINK_FOLLOW), EPERM);
	CHECK_ERR(linkat(fd, "", AT_FDCWD, r_new, AT_EMPTY_PATH), EPERM);
	ASSERT_ABSENT(r_new);
	/* B, inheriting it */
	ps.fd = fd;
	AS_OK(UID_B, GID_B, pass_b_links, &ps);
	CHECK(close(fd));
	ASSERT_GONE(ps.a_dat); /* autohold=none: closed and unheld, its only name went too */

	/* root's own file: root may link it through its descriptor; B, inheriting the descriptor
	 * from its owner, may not */
	rfd = new_file(r_dat, "root data");
	proc_fd(proc, sizeof(proc), rfd);
	CHECK(linkat(AT_FDCWD, proc, AT_FDCWD, r_own, AT_SYMLINK_FOLLOW));
	expect_name_of(r_own, lstat_of(r_dat).st_ino, 2);
	ps.fd = rfd;
	AS_OK(UID_B, GID_B, pass_b_links_roots, &ps);
	expect_fd_nlink(rfd, 2);
	CHECK(unlink(r_own));
	/* and with the kernel's protection on, still EPERM (from the kernel then) */
	CHECK_0(tu_sysctl_set("fs/protected_hardlinks", 1));
	AS_OK(UID_B, GID_B, pass_b_links_roots, &ps);
	CLOSE_UNTIL_GONE(rfd, r_dat);
}

/* ---- links the kernel refuses, and names that cannot be had ---- */

static int setup_two(void **state)
{
	return tu_setup_two_sized(state, "autohold=none", sizeof(struct tu_two_pools));
}

static void test_link_across_pools_exdev(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct tu_two_pools *tp = *state;
	char qg[PATH_MAX], qx[PATH_MAX], out[PATH_MAX], proc[64];
	PATH(f, p, "f");
	PATH(x, p, "x");
	int fd, gfd;

	assert_int_equal(pool_path(&tp->q, "g", qg, sizeof(qg)), 0);
	assert_int_equal(pool_path(&tp->q, "x", qx, sizeof(qx)), 0);
	/* the pool's temporary folder: tmpfs, not a pool */
	if ((size_t)snprintf(out, sizeof(out), "%s/outside", p->root) >= sizeof(out))
		fail_msg("path too long");
	fd = new_file(f, "pool one");
	gfd = new_file(qg, "pool two");
	CHECK_ERR(link(f, qx), EXDEV);
	CHECK_ERR(link(qg, x), EXDEV);
	CHECK_ERR(link(f, out), EXDEV);
	proc_fd(proc, sizeof(proc), fd);
	CHECK_ERR(linkat(AT_FDCWD, proc, AT_FDCWD, qx, AT_SYMLINK_FOLLOW), EXDEV);
	ASSERT_ABSENT(qx);
	ASSERT_ABSENT(x);
	ASSERT_ABSENT(out);
	expect_fd_nlink(fd, 1);
	expect_fd_nlink(gfd, 1);
	CLOSE_UNTIL_GONE(gfd, qg);
	CLOSE_UNTIL_GONE(fd, f);
}

static int link_own_folder(void *v)
{
	const struct lk *l = v;

	USER_OK(1, mkdir(l->a_dir, 0700));
	USER_EXPECT(2, link(l->a_dir, l->a_2), EPERM);
	USER_OK(3, rmdir(l->a_dir));
	return 0;
}

static void test_link_folder_eperm(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(d, p, "d");
	PATH(sub, p, "d/sub");
	PATH(x, p, "x");
	PATH(dx, p, "d/x");
	struct lk l;

	CHECK(mkdir(d, 0700));
	CHECK(mkdir(sub, 0700));
	CHECK_ERR(link(d, x), EPERM);
	CHECK_ERR(link(sub, dx), EPERM);
	CHECK_ERR(link(p->mnt, x), EPERM);
	ASSERT_ABSENT(x);
	ASSERT_ABSENT(dx);
	assert_int_equal(lstat_of(sub).st_nlink, 2);
	lk_init(p, &l);
	AS_OK(UID_A, GID_A, link_own_folder, &l);
	CHECK(rmdir(sub));
	ASSERT_GONE(d); /* armed by sub, emptied */
}

static void test_link_onto_existing_eexist(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(g, p, "g");
	PATH(d, p, "d");
	PATH(dot, p, "d/.");
	int fd = new_file(f, "eff"), gfd = new_file(g, "gee");

	CHECK(mkdir(d, 0700));
	CHECK_ERR(link(f, g), EEXIST);
	CHECK_ERR(link(f, f), EEXIST);
	CHECK_ERR(link(f, d), EEXIST);
	CHECK_ERR(link(f, dot), EEXIST);
	CHECK_ERR(link(d, g), EEXIST);
	expect_content(g, "gee");
	expect_content(f, "eff");
	expect_fd_nlink(fd, 1);
	expect_fd_nlink(gfd, 1);
	CHECK(rmdir(d));
	CLOSE_UNTIL_GONE(gfd, g);
	CLOSE_UNTIL_GONE(fd, f);
}

/* An entry that lost its last name gets no new one; one that still has a name does. */
static void test_link_unlinked_file_enoent(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(g, p, "g");
	PATH(h, p, "h");
	char proc[64];
	int fd = new_file(f, "data");

	proc_fd(proc, sizeof(proc), fd);
	CHECK(link(f, g));
	CHECK(unlink(f));
	/* g is still a name of it */
	CHECK(linkat(AT_FDCWD, proc, AT_FDCWD, h, AT_SYMLINK_FOLLOW));
	expect_name_of(h, lstat_of(g).st_ino, 2);
	CHECK(unlink(g));
	CHECK(unlink(h));
	expect_fd_nlink(fd, 0);
	CHECK_ERR(linkat(AT_FDCWD, proc, AT_FDCWD, f, AT_SYMLINK_FOLLOW), ENOENT);
	CHECK_ERR(linkat(fd, "", AT_FDCWD, f, AT_EMPTY_PATH), ENOENT);
	ASSERT_ABSENT(f);
	CHECK(close(fd));
	tu_backing_back_to_base(state);
}

/* ---- what names cost ---- */

static void name_path(const struct pool_fixture *p, const char *fmt, int i, char *buf)
{
	char rel[64];

	snprintf(rel, sizeof(rel), fmt, i);
	assert_int_equal(pool_path(p, rel, buf, PATH_MAX), 0);
}

/* Names n0, n1, ... of f until one is refused, which must be with err (within max names): how
 * many were made. */
static int names_until(const struct pool_fixture *p, const char *f, int err, int max)
{
	char n[PATH_MAX];
	int k;

	for (k = 0;; k++) {
		name_path(p, "n%d", k, n);
		if (link(f, n) == -1)
			break;
		if (k >= max)
			fail_msg("%d names and no %s", k + 1, errname(err));
	}
	if (errno != err)
		fail_msg("name %d: %s, want %s", k + 1, errname(errno), errname(err));
	ASSERT_ABSENT(n);
	return k;
}

static void unlink_names(const struct pool_fixture *p, int k)
{
	char n[PATH_MAX];

	for (int i = 0; i < k; i++) {
		name_path(p, "n%d", i, n);
		CHECK(unlink(n));
	}
}

/* max_user_meta=4k: names until EDQUOT, each exactly NAME_COST; a name given back makes room for
 * one more; links never count as entries. */
static void test_link_meta_quota_edquot(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	char n[PATH_MAX];
	struct usage u0, u1;
	int fd = new_file(f, "data"), k;

	u0 = user_usage(p, 0);
	k = names_until(p, f, EDQUOT, META_LIMIT / NAME_COST + 1);
	u1 = user_usage(p, 0);
	fprintf(stderr, "# %d names under max_user_meta=%d (meta %lld before, %lld after)\n", k,
		META_LIMIT, u0.meta, u1.meta);
	if (u1.meta != u0.meta + (long long)k * NAME_COST)
		fail_msg("%d names cost %lld bytes, want %d", k, u1.meta - u0.meta, k * NAME_COST);
	if (u1.meta > META_LIMIT || u1.meta + NAME_COST <= META_LIMIT)
		fail_msg("EDQUOT at %lld bytes of %d: one more name would have fit", u1.meta,
			 META_LIMIT);
	assert_int_equal(u1.entries, u0.entries);
	expect_fd_nlink(fd, (nlink_t)k + 1);
	/* a name given back makes room for exactly one */
	name_path(p, "n%d", 0, n);
	CHECK(unlink(n));
	expect_meta(p, 0, u1.meta - NAME_COST);
	CHECK(link(f, n));
	name_path(p, "n%d", k, n);
	CHECK_ERR(link(f, n), EDQUOT);
	/* the user's other metadata is bounded by the same budget: a value the size of what is
	 * left cannot fit with its name and record */
	{
		size_t left = (size_t)(META_LIMIT - u1.meta);
		char *v = calloc(left + 1, 1);

		assert_non_null(v);
		memset(v, 'v', left);
		CHECK_ERR(setxattr(f, "user.big", v, left, 0), EDQUOT);
		free(v);
	}
	unlink_names(p, k);
	expect_meta(p, 0, u0.meta);
	expect_fd_nlink(fd, 1);
	CLOSE_UNTIL_GONE(fd, f);
	tu_backing_back_to_base(state);
}

/* The pool's totals (user.poolfs.stat "bytes N" and "meta N"). */
static struct usage pool_totals(const struct pool_fixture *p)
{
	char text[8192];
	struct usage u = {0, -1, -1};
	ssize_t n = getxattr(p->mnt, POOLFS_XATTR_STAT, text, sizeof(text) - 1);

	if (n < 0)
		fail_msg("getxattr %s: %s", POOLFS_XATTR_STAT, errname(errno));
	text[n > 0 ? n : 0] = '\0';
	for (const char *s = text; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
		if (strncmp(s, "bytes ", 6) == 0)
			u.bytes = atoll(s + 6);
		if (strncmp(s, "meta ", 5) == 0)
			u.meta = atoll(s + 5);
	}
	if (u.bytes < 0 || u.meta < 0)
		fail_msg("no bytes or meta line in %s:\n%s", POOLFS_XATTR_STAT, text);
	return u;
}

/* Names count with data against max_user_size (EDQUOT) and max_size (ENOSPC): a file of
 * SIZE_LIMIT - 8 KiB takes names until one more would pass the limit. */
#define SIZE_LIMIT (1024 * 1024)
static void names_against_size(void **state, int err)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = new_file(f, NULL), k;
	struct usage u;

	CHECK(ftruncate(fd, SIZE_LIMIT - 8192));
	k = names_until(p, f, err, 8192 / NAME_COST + 1);
	u = err == EDQUOT ? user_usage(p, 0) : pool_totals(p);
	fprintf(stderr, "# %d names beside %lld bytes of data, %lld of metadata\n", k, u.bytes,
		u.meta);
	if (u.bytes + u.meta > SIZE_LIMIT || u.bytes + u.meta + NAME_COST <= SIZE_LIMIT)
		fail_msg("%s at %lld bytes of data and %lld of metadata: one more name of %d "
			 "would have fit under %d",
			 errname(err), u.bytes, u.meta, NAME_COST, SIZE_LIMIT);
	if (u.meta < (long long)k * NAME_COST)
		fail_msg("%d names cost %lld bytes", k, u.meta);
	unlink_names(p, k);
	CLOSE_UNTIL_GONE(fd, f);
	tu_backing_back_to_base(state);
}

TU_SETUP(setup_user_size, "autohold=none,max_user_size=1M")

static void test_link_max_user_size_edquot(void **state)
{
	names_against_size(state, EDQUOT);
}

TU_SETUP(setup_pool_size, "autohold=none,max_size=1M")

static void test_link_max_size_enospc(void **state)
{
	names_against_size(state, ENOSPC);
}

/* max_user_entries=2: an entry counts once, whatever its names. */
static void test_link_entries_count_once(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(g, p, "g");
	PATH(h, p, "h");
	char n[PATH_MAX];
	struct statvfs sv;
	int fd = new_file(f, "data"), gfd;

	for (int i = 0; i < 10; i++) {
		name_path(p, "n%d", i, n);
		CHECK(link(f, n));
	}
	assert_int_equal(user_usage(p, 0).entries, 1);
	CHECK(statvfs(p->mnt, &sv));
	assert_int_equal(sv.f_files, 2);
	assert_int_equal(sv.f_ffree, 1);
	gfd = new_file(g, "second");
	CHECK_ERR(open(h, O_RDWR | O_CREAT | O_EXCL, 0600), EDQUOT);
	CHECK_ERR(mkdir(h, 0700), EDQUOT);
	name_path(p, "n%d", 10, n);
	CHECK(link(f, n)); /* a name is no entry */
	CHECK(link(g, h));
	assert_int_equal(user_usage(p, 0).entries, 2);
	CHECK(statvfs(p->mnt, &sv));
	assert_int_equal(sv.f_ffree, 0);
	CHECK(close(gfd));
	ASSERT_GONE(g);
	ASSERT_GONE(h);
	CHECK(close(fd));
	for (int i = 0; i <= 10; i++) {
		name_path(p, "n%d", i, n);
		ASSERT_GONE(n);
	}
	ASSERT_GONE(f);
	expect_entries(p, 0, 0);
	tu_backing_back_to_base(state);
}

/* ---- one entry, many names ---- */

#define MANY 256
#define MANY_LEN 10000

/* Name i of the entry: the first half in the shared root, the rest in folder d. */
static void many_path(const struct pool_fixture *p, int i, char *buf)
{
	name_path(p, i < MANY / 2 ? "n%03d" : "d/n%03d", i, buf);
}

static void expect_many_data(const char *path)
{
	char buf[MANY_LEN + 1];
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		fail_msg("open %s: %s", path, errname(errno));
	if (pread_all(fd, buf, sizeof(buf), 0) != MANY_LEN ||
	    pat_check(buf, MANY_LEN, 256, 0) != -1)
		fail_msg("%s does not read the entry's data", path);
	close(fd);
}

static void test_256_names(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(d, p, "d");
	char n[PATH_MAX], first[PATH_MAX], buf[MANY_LEN];
	struct stat st;
	int fd, left = MANY;

	CHECK(mkdir(d, 0700));
	many_path(p, 0, first);
	fd = open(first, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd);
	pat_fill(buf, sizeof(buf), 256, 0);
	assert_int_equal(pwrite_all(fd, buf, sizeof(buf), 0), MANY_LEN);
	CHECK(fstat(fd, &st));
	for (int i = 1; i < MANY; i++) {
		many_path(p, i, n);
		if (link(first, n) == -1)
			fail_msg("name %d (%s): %s", i + 1, n, errname(errno));
	}
	expect_fd_nlink(fd, MANY);
	for (int i = 0; i < MANY; i++) {
		struct stat sn;

		many_path(p, i, n);
		sn = lstat_of(n);
		if (sn.st_ino != st.st_ino || sn.st_nlink != MANY || sn.st_size != MANY_LEN ||
		    sn.st_uid != 0 || (sn.st_mode & 07777) != 0600 || !S_ISREG(sn.st_mode))
			fail_msg("%s: inode %lu, %lu names, size %lld, mode 0%o", n,
				 (unsigned long)sn.st_ino, (unsigned long)sn.st_nlink,
				 (long long)sn.st_size, (unsigned)sn.st_mode);
	}
	ASSERT_REFS_LINE(first, "names 256");
	expect_many_data(first);
	/* a name goes, the entry stays with one name fewer: a quarter of each half */
	for (int i = 0; i < MANY; i++) {
		if (i % (MANY / 2) >= MANY / 4)
			continue;
		many_path(p, i, n);
		CHECK(unlink(n));
		ASSERT_ABSENT(n);
		left--;
		expect_fd_nlink(fd, (nlink_t)left);
		many_path(p, MANY - 1, n);
		expect_name_of(n, st.st_ino, (nlink_t)left);
		if (left % 32 == 0)
			expect_many_data(n);
	}
	many_path(p, MANY / 2 - 1, n);
	ASSERT_REFS_LINE(n, "names 128");
	expect_many_data(n);
	/* no longer in use: every one of the 128 names left goes, and d with its last child */
	CHECK(close(fd));
	for (int i = 0; i < MANY; i++) {
		many_path(p, i, n);
		ASSERT_GONE(n);
	}
	ASSERT_GONE(d);
	tu_backing_back_to_base(state);
}

/* The kernel's limit is the daemon's: 65000 names, then EMLINK; and all of them go together. */
static void test_emlink_after_65000_names(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	char n[PATH_MAX];
	int fd;

	if (itest_rounds(10) != 10)
		TU_SKIP("under valgrind: 65000 requests would outlast the timeout");
	fd = new_file(f, "many");
	for (int i = 1; i < MAX_NAMES; i++) {
		name_path(p, "n%05d", i, n);
		if (link(f, n) == -1)
			fail_msg("name %d: %s", i + 1, errname(errno));
	}
	expect_fd_nlink(fd, MAX_NAMES);
	name_path(p, "n%05d", MAX_NAMES, n);
	CHECK_ERR(link(f, n), EMLINK);
	ASSERT_ABSENT(n);
	ASSERT_REFS_LINE(f, "names 65000");
	/* one given back makes room for one */
	name_path(p, "n%05d", 1, n);
	CHECK(unlink(n));
	CHECK(link(f, n));
	CHECK(close(fd));
	ASSERT_GONE(f);
	for (int i = 1; i < MAX_NAMES; i += 997) {
		name_path(p, "n%05d", i, n);
		ASSERT_GONE(n);
	}
	name_path(p, "n%05d", MAX_NAMES - 1, n);
	ASSERT_GONE(n);
	expect_entries(p, 0, 0);
	expect_meta(p, 0, 0);
	tu_backing_back_to_base(state);
}

/* rename of one name onto another name of the same entry does nothing (POSIX): both stay. */
static void test_rename_onto_same_entry(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(g, p, "g");
	PATH(d, p, "d");
	PATH(dx, p, "d/x");
	int fd = new_file(f, "same");
	ino_t ino = lstat_of(f).st_ino;

	CHECK(mkdir(d, 0700));
	CHECK(link(f, g));
	CHECK(link(f, dx));
	CHECK(rename(f, g));
	expect_name_of(f, ino, 3);
	expect_name_of(g, ino, 3);
	CHECK(rename(dx, f));
	expect_name_of(dx, ino, 3);
	expect_name_of(f, ino, 3);
	CHECK(renameat2(AT_FDCWD, g, AT_FDCWD, dx, RENAME_EXCHANGE));
	expect_name_of(g, ino, 3);
	expect_name_of(dx, ino, 3);
	CHECK_ERR(renameat2(AT_FDCWD, g, AT_FDCWD, f, RENAME_NOREPLACE), EEXIST);
	assert_int_equal(tu_listed(p->mnt, "f"), 1);
	assert_int_equal(tu_listed(p->mnt, "g"), 1);
	assert_int_equal(tu_listed(d, "x"), 1);
	expect_content(dx, "same");
	/* a real rename of one name moves only that name */
	PATH(h, p, "h");
	CHECK(rename(g, h));
	ASSERT_ABSENT(g);
	expect_name_of(h, ino, 3);
	ASSERT_REFS_LINE(h, "names 3");
	CHECK(close(fd));
	ASSERT_GONE(f);
	ASSERT_GONE(h);
	ASSERT_GONE(dx);
	ASSERT_GONE(d);
	tu_backing_back_to_base(state);
}

/* ---- holds and names ---- */

/* An entry's holds end with its last name, and its hold records are refunded. */
static void test_holds_end_with_last_name(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(g, p, "g");
	PATH(k, p, "k");
	PATH(l, p, "l");
	long long m0;
	int fd = new_file(f, "held");

	m0 = user_usage(p, 0).meta;
	CHECK(setxattr(f, HOLD, "pin", 3, 0));
	CHECK(link(f, g));
	ASSERT_REFS_LINE(g, "names 2");
	ASSERT_REFS_LINE(g, "holds 1");
	ASSERT_REFS_LINE(f, "hold pin uid=0");
	CHECK(unlink(f));
	ASSERT_REFS_LINE(g, "names 1");
	ASSERT_REFS_LINE(g, "holds 1");
	CHECK(unlink(g)); /* the last name: the hold ends */
	ASSERT_FD_REFS_LINE(fd, "holds 0");
	expect_meta(p, 0, m0);
	CHECK(close(fd));
	tu_backing_back_to_base(state);

	/* closed and kept by its pin alone: it stays while a name is left, goes with the last */
	CHECK(close(new_file(k, "pinned")));
	ASSERT_GONE(k);
	fd = new_file(k, "pinned");
	CHECK(setxattr(k, HOLD, "pin", 3, 0));
	CHECK(link(k, l));
	CHECK(close(fd));
	ASSERT_STAYS(k);
	CHECK(unlink(k));
	ASSERT_STAYS(l);
	ASSERT_REFS_LINE(l, "holds 1");
	CHECK(unlink(l));
	ASSERT_ABSENT(l);
	expect_meta(p, 0, m0);
	tu_backing_back_to_base(state);
}

/* A hold on the entry keeps every name; released, every name goes at once. */
static void test_names_go_when_hold_released(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(d, p, "d");
	PATH(dg, p, "d/g");
	int fd = new_file(f, "held");

	CHECK(mkdir(d, 0700));
	CHECK(link(f, dg));
	CHECK(setxattr(dg, HOLD, "pin", 3, 0));
	CHECK(close(fd));
	ASSERT_STAYS(f);
	ASSERT_STAYS(dg);
	ASSERT_REFS_LINE(f, "holds 1");
	CHECK(removexattr(f, HOLD));
	ASSERT_GONE(f);
	ASSERT_GONE(dg);
	ASSERT_GONE(d);
	tu_backing_back_to_base(state);
}

/* When an entry stops being in use every name goes, in every folder, and each folder emptied
 * (and armed) goes too; a hold on a folder above any one name keeps the entry and so all its
 * names. */
static void test_every_name_goes_when_unused(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(d1, p, "d1");
	PATH(d2, p, "d2");
	PATH(f, p, "d1/f");
	PATH(g, p, "d2/g");
	PATH(keep, p, "d2/keep");
	int fd, kfd;

	/* plain: both names, then both folders */
	CHECK(mkdir(d1, 0700));
	CHECK(mkdir(d2, 0700));
	fd = new_file(f, "two folders");
	CHECK(link(f, g));
	CHECK(close(fd));
	ASSERT_GONE(f);
	ASSERT_GONE(g);
	ASSERT_GONE(d1);
	ASSERT_GONE(d2);

	/* d2 has another child in use: it stays, d1 goes */
	CHECK(mkdir(d1, 0700));
	CHECK(mkdir(d2, 0700));
	fd = new_file(f, "two folders");
	kfd = new_file(keep, "keep");
	CHECK(link(f, g));
	CHECK(close(fd));
	ASSERT_GONE(f);
	ASSERT_GONE(g);
	ASSERT_GONE(d1);
	ASSERT_STAYS(d2);
	assert_int_equal(tu_listed(d2, "keep"), 1);
	CHECK(close(kfd));
	ASSERT_GONE(d2);

	/* a hold on d1 keeps the entry: its name in d2 stays as well */
	CHECK(mkdir(d1, 0700));
	CHECK(mkdir(d2, 0700));
	CHECK(setxattr(d1, HOLD, "pin", 3, 0));
	fd = new_file(f, "held above");
	CHECK(link(f, g));
	CHECK(close(fd));
	ASSERT_STAYS(g);
	ASSERT_STAYS(f);
	expect_content(g, "held above");
	/* released: every name goes, and both folders with them */
	CHECK(removexattr(d1, HOLD));
	ASSERT_GONE(f);
	ASSERT_GONE(g);
	ASSERT_GONE(d1);
	ASSERT_GONE(d2);
	tu_backing_back_to_base(state);
}

/* ---- symbolic links ---- */

static char *target_of(size_t len)
{
	char *t = malloc(len + 1);

	assert_non_null(t);
	for (size_t i = 0; i < len; i++)
		t[i] = i % 64 == 63 ? '/' : (char)('a' + i % 26);
	t[len] = '\0';
	return t;
}

static void expect_readlink(const char *path, const char *want)
{
	char buf[PATH_MAX + 16];
	ssize_t n = readlink(path, buf, sizeof(buf));

	if (n < 0)
		fail_msg("readlink %s: %s", path, errname(errno));
	if ((size_t)n != strlen(want) || memcmp(buf, want, (size_t)n) != 0)
		fail_msg("readlink %s: %zd bytes, want %zu", path, n, strlen(want));
}

static void expect_symlink_stat(const char *path, size_t len)
{
	struct stat st = lstat_of(path);

	if (st.st_mode != (S_IFLNK | 0700) || st.st_size != (off_t)len || st.st_uid != getuid())
		fail_msg("%s: mode 0%o size %lld uid %u, want lrwx------ (0%o) size %zu uid %u",
			 path, (unsigned)st.st_mode, (long long)st.st_size, (unsigned)st.st_uid,
			 (unsigned)(S_IFLNK | 0700), len, (unsigned)getuid());
}

static void test_symlinks(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(l1, p, "l1");
	PATH(l2, p, "l2");
	PATH(l3, p, "l3");
	PATH(lf, p, "lf");
	PATH(lf2, p, "lf2");
	PATH(f, p, "f");
	char *t4095 = target_of(4095), *t4096 = target_of(4096);
	struct stat st;

	CHECK(symlink("some/target", l1));
	expect_readlink(l1, "some/target");
	expect_symlink_stat(l1, 11);
	CHECK_ERR(stat(l1, &st), ENOENT); /* dangling */
	CHECK(symlink(t4095, l2));
	expect_readlink(l2, t4095);
	expect_symlink_stat(l2, 4095);
	CHECK_ERR(symlink(t4096, l3), ENAMETOOLONG);
	ASSERT_ABSENT(l3);
	/* followed: the file it names */
	CHECK(close(new_file(f, "followed")));
	CHECK(symlink("f", lf));
	expect_content(lf, "followed");
	CHECK(stat(lf, &st));
	assert_true(S_ISREG(st.st_mode));
	/* a second name of the symlink itself (link() does not follow) */
	CHECK(link(lf, lf2));
	expect_symlink_stat(lf2, 1);
	assert_int_equal(lstat_of(lf).st_nlink, 2);
	expect_readlink(lf2, "f");
	/* user.* attributes: the kernel allows them on files and folders only */
	CHECK_ERR(lsetxattr(l1, HOLD, "pin", 3, 0), EPERM);
	CHECK_ERR(lgetxattr(l1, REFS, NULL, 0), ENODATA);
	assert_int_equal(tu_listed(p->mnt, "l2"), 1);
	free(t4095);
	free(t4096);
	CHECK(unlink(l1));
	CHECK(unlink(l2));
	CHECK(unlink(lf));
	CHECK(unlink(lf2));
	CHECK(unlink(f));
	tu_backing_back_to_base(state);
}

/* Its target is the owner's metadata: a 4095-byte target fits max_user_meta=8k once. */
static void test_symlink_target_charged(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(l1, p, "l1");
	PATH(l2, p, "l2");
	char *t = target_of(4095);
	long long m0 = user_usage(p, 0).meta, m1;

	CHECK(symlink(t, l1));
	m1 = user_usage(p, 0).meta;
	if (m1 < m0 + 4095)
		fail_msg("a 4095-byte target cost %lld bytes of metadata", m1 - m0);
	CHECK_ERR(symlink(t, l2), EDQUOT);
	ASSERT_ABSENT(l2);
	CHECK(unlink(l1));
	expect_meta(p, 0, m0);
	CHECK(symlink(t, l2));
	CHECK(unlink(l2));
	expect_meta(p, 0, m0);
	free(t);
}

/* ---- FIFOs ---- */

struct fifo_arg {
	char path[PATH_MAX];
};

#define FIFO_LEN 10000

static int fifo_writer(void *v)
{
	const struct fifo_arg *a = v;
	char buf[FIFO_LEN];
	size_t done = 0;
	int fd = open(a->path, O_WRONLY);

	CHILD_CHECK(fd >= 0, 1);
	pat_fill(buf, sizeof(buf), 77, 0);
	while (done < sizeof(buf)) {
		ssize_t n = write(fd, buf + done, sizeof(buf) - done);

		CHILD_CHECK(n > 0 || errno == EINTR, 2);
		done += n > 0 ? (size_t)n : 0;
	}
	close(fd);
	return 0;
}

/* Read exactly len bytes from a FIFO, each wait bounded. */
static void fifo_read(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n;
		int r = fd_wait_readable(fd, CHILD_MS);

		if (r < 0)
			fail_msg("FIFO: %zu of %zu bytes, then %s", got, len, errname(-r));
		n = read(fd, buf + got, len - got);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			fail_msg("FIFO read: %s", errname(errno));
		if (n > 0)
			got += (size_t)n;
	}
}

static int fifo_as_a(void *v)
{
	const struct fifo_arg *a = v;
	struct stat st;

	USER_OK(1, mkfifo(a->path, 0666));
	USER_OK(2, lstat(a->path, &st));
	USER_TRUE(3, st.st_mode == (S_IFIFO | 0600) && st.st_uid == UID_A);
	return 0;
}

static int fifo_b_opens(void *v)
{
	const struct fifo_arg *a = v;

	USER_EXPECT(1, open(a->path, O_RDONLY | O_NONBLOCK), EACCES);
	USER_EXPECT(2, open(a->path, O_WRONLY | O_NONBLOCK), EACCES);
	return 0;
}

static void test_fifos(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct fifo_arg a;
	PATH(q, p, "q");
	PATH(q2, p, "q2");
	PATH(aq, p, "aq");
	char buf[FIFO_LEN];
	mode_t old = umask(0);
	int fd;
	pid_t pid;

	assert_int_equal(pool_path(p, "fifo", a.path, sizeof(a.path)), 0);
	CHECK(mkfifo(a.path, 0666));
	CHECK(mknod(q, S_IFIFO | 0640, 0));
	CHECK(mknod(q2, S_IFIFO | 07777, 0));
	umask(old);
	assert_int_equal(lstat_of(a.path).st_mode, S_IFIFO | 0600);
	assert_int_equal(lstat_of(q).st_mode, S_IFIFO | 0600);
	assert_int_equal(lstat_of(q2).st_mode, S_IFIFO | 0700);
	assert_int_equal(lstat_of(a.path).st_uid, 0);
	/* a writer in another process, a reader here (O_RDWR: the open never waits) */
	fd = open(a.path, O_RDWR | O_NONBLOCK);
	CHECK(fd);
	pid = tu_spawn(fifo_writer, &a);
	fifo_read(fd, buf, sizeof(buf));
	REAP_OK(pid);
	assert_int_equal(pat_check(buf, sizeof(buf), 77, 0), -1);
	CHECK(close(fd));
	/* still there (autohold=session), for its owner only */
	ASSERT_EXISTS(a.path);
	CHECK_ERR(setxattr(a.path, HOLD, "pin", 3, 0), EPERM);
	CHECK_ERR(getxattr(a.path, REFS, NULL, 0), ENODATA);
	AS_OK(UID_B, GID_B, fifo_b_opens, &a);
	memcpy(a.path, aq, sizeof(aq));
	AS_OK(UID_A, GID_A, fifo_as_a, &a);
	CHECK_ERR(open(aq, O_RDONLY | O_NONBLOCK), EACCES);
	assert_int_equal(tu_listed(p->mnt, "aq"), 0);
	PATH(fifo, p, "fifo");
	CHECK(unlink(fifo));
	CHECK(unlink(q));
	CHECK(unlink(q2));
}

/* ---- Unix sockets ---- */

static int sock_b_connects(void *v)
{
	const char *path = v;
	struct stat st;

	USER_EXPECT(1, tu_unix_socket(path, TU_SOCK_CONNECT), EACCES);
	USER_EXPECT(2, lstat(path, &st), EACCES);
	return 0;
}

struct sock_arg {
	char path[PATH_MAX];
	struct chan c;
};

/* As A: a listening socket in the shared root, kept until told. */
static int sock_a_listens(void *v)
{
	struct sock_arg *a = v;
	int s;

	chan_child(&a->c);
	s = tu_unix_socket(a->path, TU_SOCK_LISTEN);
	CHILD_CHECK(s >= 0, 1);
	CHILD_READY_THEN_GO(&a->c, 2);
	close(s);
	return 0;
}

static void test_unix_sockets(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(sp, p, "s");
	struct sock_arg a;
	char buf[8] = "";
	int srv, cli, acc;
	struct stat st;
	pid_t pid;

	srv = tu_unix_socket(sp, TU_SOCK_LISTEN);
	if (srv < 0)
		fail_msg("bind %s: %s", sp, errname(errno));
	st = lstat_of(sp);
	if (!S_ISSOCK(st.st_mode) || (st.st_mode & 07777) != 0700 || st.st_uid != 0)
		fail_msg("%s: mode 0%o uid %u, want srwx------ of root", sp, (unsigned)st.st_mode,
			 (unsigned)st.st_uid);
	cli = tu_unix_socket(sp, TU_SOCK_CONNECT);
	CHECK(cli);
	acc = accept4(srv, NULL, NULL, SOCK_CLOEXEC);
	CHECK(acc);
	assert_int_equal(send(cli, "ping", 4, 0), 4);
	assert_int_equal(fd_wait_readable(acc, CHILD_MS), 0);
	assert_int_equal(recv(acc, buf, sizeof(buf), 0), 4);
	assert_memory_equal(buf, "ping", 4);
	assert_int_equal(send(acc, "pong", 4, 0), 4);
	assert_int_equal(fd_wait_readable(cli, CHILD_MS), 0);
	assert_int_equal(recv(cli, buf, sizeof(buf), 0), 4);
	assert_memory_equal(buf, "pong", 4);
	/* bind on a name that exists */
	CHECK_ERR(tu_unix_socket(sp, TU_SOCK_BIND), EADDRINUSE);
	/* another uid cannot connect */
	AS_OK(UID_B, GID_B, sock_b_connects, sp);
	CHECK(close(acc));
	CHECK(close(cli));
	CHECK(close(srv));
	/* the entry outlives the socket that made it (autohold=session) */
	ASSERT_EXISTS(sp);
	CHECK_ERR(tu_unix_socket(sp, TU_SOCK_CONNECT), ECONNREFUSED);
	CHECK(unlink(sp));

	/* A's listening socket: root, not exempt, cannot connect to it either */
	memset(&a, 0, sizeof(a));
	assert_int_equal(pool_path(p, "a.sock", a.path, sizeof(a.path)), 0);
	chan_open(&a.c);
	pid = run_as_spawn(UID_A, GID_A, sock_a_listens, &a);
	if (pid < 0)
		fail_msg("spawn A: %s", errname((int)-pid));
	tu_track(pid);
	chan_parent(&a.c);
	PARENT_WAIT_READY(&a.c);
	CHECK_ERR(tu_unix_socket(a.path, TU_SOCK_CONNECT), EACCES);
	AS_OK(UID_B, GID_B, sock_b_connects, a.path);
	assert_int_equal(tu_listed(p->mnt, "a.sock"), 0);
	PARENT_GO(&a.c);
	assert_int_equal(run_as_reap(pid), 0);
	tu_forget(pid);
	chan_close_parent(&a.c);
}

/* ---- device nodes ---- */

static int devices_as_a(void *v)
{
	const struct lk *l = v;

	USER_EXPECT(1, mknod(l->a_2, S_IFCHR | 0600, makedev(1, 3)), EPERM);
	USER_EXPECT(2, mknod(l->a_2, S_IFBLK | 0600, makedev(7, 0)), EPERM);
	return 0;
}

static void test_device_nodes_refused(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(c, p, "c");
	PATH(b, p, "b");
	struct lk l;

	CHECK_ERR(mknod(c, S_IFCHR | 0600, makedev(1, 3)), EPERM);
	CHECK_ERR(mknod(c, S_IFCHR | 0600, makedev(0, 0)), EPERM);
	CHECK_ERR(mknod(b, S_IFBLK | 0600, makedev(7, 0)), EPERM);
	ASSERT_ABSENT(c);
	ASSERT_ABSENT(b);
	lk_init(p, &l);
	AS_OK(UID_A, GID_A, devices_as_a, &l);
	ASSERT_ABSENT(l.a_2);
	expect_entries(p, 0, 0);
	tu_backing_back_to_base(state);
}

/* ---- lifetime of the new kinds ---- */

/* autohold=none: a symlink, FIFO or socket is unused from birth (no data, no handle the daemon
 * sees), so it goes at once, like a file made with mknod and never opened. */
static void test_autohold_none_kinds_go_at_once(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(l, p, "l");
	PATH(q, p, "q");
	PATH(s, p, "s");
	PATH(r, p, "r");
	int fd;

	CHECK(symlink("anywhere", l));
	ASSERT_GONE(l);
	CHECK(mkfifo(q, 0600));
	ASSERT_GONE(q);
	fd = tu_unix_socket(s, TU_SOCK_LISTEN);
	CHECK(fd);
	ASSERT_GONE(s);
	CHECK(close(fd));
	CHECK(mknod(r, S_IFREG | 0600, 0));
	ASSERT_GONE(r);
	expect_entries(p, 0, 0);
	tu_backing_back_to_base(state);
}

/* A hold on their folder keeps them; released, they go with the folder. */
static void test_folder_hold_keeps_kinds(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(d, p, "d");
	PATH(l, p, "d/l");
	PATH(q, p, "d/q");
	PATH(s, p, "d/s");
	PATH(l2, p, "l2");
	int fd;

	CHECK(mkdir(d, 0700));
	CHECK(setxattr(d, HOLD, "pin", 3, 0));
	CHECK(symlink("anywhere", l));
	CHECK(mkfifo(q, 0600));
	fd = tu_unix_socket(s, TU_SOCK_BIND);
	CHECK(fd);
	CHECK(close(fd));
	ASSERT_STAYS(l);
	ASSERT_STAYS(q);
	ASSERT_STAYS(s);
	/* a second name outside the held folder is kept by the hold above the first */
	CHECK(link(l, l2));
	ASSERT_STAYS(l2);
	CHECK(removexattr(d, HOLD));
	ASSERT_GONE(l);
	ASSERT_GONE(l2);
	ASSERT_GONE(q);
	ASSERT_GONE(s);
	ASSERT_GONE(d);
	expect_entries(p, 0, 0);
	tu_backing_back_to_base(state);
}

struct sess_arg {
	char l[PATH_MAX], q[PATH_MAX], s[PATH_MAX], f[PATH_MAX], f2[PATH_MAX];
	struct chan c;
};

/* In a session of its own: a symlink, a FIFO, a socket and a file with two names. */
static int sess_child(void *v)
{
	struct sess_arg *a = v;
	int fd;

	chan_child(&a->c);
	CHILD_CHECK(setsid() != -1, 1);
	CHILD_CHECK(symlink("anywhere", a->l) == 0, 2);
	CHILD_CHECK(mkfifo(a->q, 0600) == 0, 3);
	fd = tu_unix_socket(a->s, TU_SOCK_BIND);
	CHILD_CHECK(fd >= 0, 4);
	close(fd);
	fd = open(a->f, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHILD_CHECK(fd >= 0, 5);
	close(fd);
	CHILD_CHECK(link(a->f, a->f2) == 0, 6);
	CHILD_READY_THEN_GO(&a->c, 7);
	return 0;
}

/* autohold=session: they stay while their creator's session lives, and go when it ends. */
static void test_session_kinds_end_with_session(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct sess_arg a;
	pid_t pid;

	memset(&a, 0, sizeof(a));
	tu_paths(p, "l", a.l, "q", a.q, "s", a.s, "f", a.f, "f2", a.f2);
	chan_open(&a.c);
	pid = tu_spawn(sess_child, &a);
	chan_parent(&a.c);
	PARENT_WAIT_READY(&a.c);
	ASSERT_STAYS(a.l);
	ASSERT_EXISTS(a.q);
	ASSERT_EXISTS(a.s);
	ASSERT_EXISTS(a.f);
	ASSERT_EXISTS(a.f2);
	ASSERT_REFS_LINE(a.f, "names 2");
	PARENT_GO(&a.c);
	REAP_OK(pid);
	chan_close_parent(&a.c);
	ASSERT_GONE(a.l);
	ASSERT_GONE(a.q);
	ASSERT_GONE(a.s);
	ASSERT_GONE(a.f);
	ASSERT_GONE(a.f2);
	tu_backing_back_to_base(state);
}

/* ---- root on its own entries ---- */

/* Root gets on its own entries what tmpfs gives it (CAP_DAC_OVERRIDE): any file opened for
 * reading or writing whatever its mode, a folder of mode 0 entered and written; never execute
 * without an x bit. */
static void root_on_own_entries(const struct pool_fixture *p)
{
	PATH(f4, p, "r0400");
	PATH(f2, p, "r0200");
	PATH(f0, p, "r0000");
	PATH(d, p, "rd");
	PATH(dx, p, "rd/x");
	int fd[3], o;

	fd[0] = open(f4, O_RDWR | O_CREAT | O_EXCL, 0400);
	fd[1] = open(f2, O_RDWR | O_CREAT | O_EXCL, 0200);
	fd[2] = open(f0, O_RDWR | O_CREAT | O_EXCL, 0000);
	for (int i = 0; i < 3; i++)
		CHECK(fd[i]);
	expect_mode(f4, 0400);
	expect_mode(f2, 0200);
	expect_mode(f0, 0000);
	CHECK(o = open(f4, O_WRONLY));
	assert_int_equal(write(o, "w", 1), 1);
	CHECK(close(o));
	CHECK(access(f4, W_OK));
	CHECK(access(f4, R_OK | W_OK));
	CHECK(o = open(f2, O_RDONLY));
	CHECK(close(o));
	CHECK(access(f2, R_OK));
	CHECK(o = open(f0, O_RDWR));
	CHECK(close(o));
	CHECK(access(f0, R_OK | W_OK));
	CHECK_ERR(access(f4, X_OK), EACCES);
	CHECK(truncate(f4, 0));
	CHECK(mkdir(d, 0700));
	CHECK(chmod(d, 0));
	expect_mode(d, 0);
	CHECK(access(d, R_OK | W_OK | X_OK));
	CHECK(o = open(dx, O_RDWR | O_CREAT | O_EXCL, 0600));
	assert_int_equal(tu_listed(d, "x"), 1);
	CHECK(close(o));
	ASSERT_GONE(dx);
	ASSERT_GONE(d);
	for (int i = 0; i < 3; i++)
		CHECK(close(fd[i]));
}

static int a_makes_file(void *v)
{
	const struct lk *l = v;

	USER_OK(1, make_pinned(l->a_dat, "A data"));
	return 0;
}

static int a_removes_file(void *v)
{
	const struct lk *l = v;

	USER_OK(1, unlink(l->a_dat));
	return 0;
}

static void test_root_own_entries(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct lk l;

	root_on_own_entries(p);
	/* nothing more on A's entries: the pool is not root_exempt */
	lk_init(p, &l);
	AS_OK(UID_A, GID_A, a_makes_file, &l);
	CHECK_ERR(open(l.a_dat, O_WRONLY), EACCES);
	CHECK_ERR(open(l.a_dat, O_RDONLY), EACCES);
	CHECK_ERR(access(l.a_dat, W_OK), EACCES);
	CHECK_ERR(access(l.a_dat, F_OK), EACCES);
	CHECK_ERR(open(l.a_dat, O_RDWR | O_CREAT, 0600), EACCES);
	AS_OK(UID_A, GID_A, a_removes_file, &l);
	tu_backing_back_to_base(state);
}

/* The same in a private pool, where the daemon alone checks (no default_permissions). */
static void test_root_own_entries_private(void **state)
{
	root_on_own_entries(tu_pool(state));
	tu_backing_back_to_base(state);
}

static void test_root_exempt_user_file(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct lk l;
	int fd;

	lk_init(p, &l);
	AS_OK(UID_A, GID_A, a_makes_file, &l);
	CHECK(fd = open(l.a_dat, O_RDWR));
	assert_int_equal(pwrite(fd, "R", 1, 0), 1);
	CHECK(close(fd));
	CHECK(access(l.a_dat, R_OK | W_OK));
	expect_content(l.a_dat, "R data");
}

/* ---- user.poolfs.stat counts what the daemon never saw ---- */

/* A user's file that grows behind the daemon's back: on passthrough, write() and stores into a
 * shared mapping go straight to the backing file (docs/design.md "Work that grows with the
 * pool"); on the page cache the daemon sees them, and the counts must be the same. */
struct grower {
	char path[PATH_MAX];
	size_t first, second; /* bytes written before the first and the second report */
	int go[2], done[2];   /* the test says go; the child says done */
	pid_t pid;
};

#define GROW_CHUNK 65536

static int grow_to(int fd, size_t from, size_t to)
{
	static char buf[GROW_CHUNK];

	memset(buf, 'g', sizeof(buf));
	for (size_t off = from; off < to; off += sizeof(buf))
		if (pwrite(fd, buf, sizeof(buf), (off_t)off) != (ssize_t)sizeof(buf))
			return -1;
	return 0;
}

/* As its user: make the file, pin it, write `first` bytes, store into all of them through a
 * shared mapping, report; on go, write on to `second` bytes with the fd and the mapping still
 * there, report; on go, unmap, close and end. 0, or the step that failed. */
static int grower_child(void *arg)
{
	struct grower *g = arg;
	int fd = open(g->path, O_RDWR | O_CREAT | O_EXCL, 0600);
	char *m, c;

	if (fd < 0)
		return 1;
	if (setxattr(g->path, HOLD, "pin", 3, 0) < 0)
		return 2;
	if (grow_to(fd, 0, g->first) < 0)
		return 3;
	m = mmap(NULL, g->first, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return 4;
	memset(m, 'm', g->first);
	if (write(g->done[1], "1", 1) != 1 || read(g->go[0], &c, 1) != 1)
		return 5;
	if (grow_to(fd, g->first, g->second) < 0)
		return 6;
	if (write(g->done[1], "2", 1) != 1 || read(g->go[0], &c, 1) != 1)
		return 7;
	if (munmap(m, g->first) < 0 || close(fd) < 0)
		return 8;
	return 0;
}

static void grower_start(struct grower *g, uid_t uid, gid_t gid)
{
	CHECK(pipe(g->go));
	CHECK(pipe(g->done));
	g->pid = run_as_spawn(uid, gid, grower_child, g);
	if (g->pid < 0)
		fail_msg("run_as_spawn: %s", errname((int)-g->pid));
	/* Only the child writes `done` now: its end closes when it ends, whatever happens. */
	CHECK(close(g->done[1]));
	CHECK(close(g->go[0]));
}

/* Wait for the child's next report; its exit code if it ended instead. */
static void grower_wait(struct grower *g)
{
	char c;

	if (read(g->done[0], &c, 1) != 1)
		fail_msg("the writer of %s ended early: %d", g->path, run_as_reap(g->pid));
}

static void grower_go(struct grower *g)
{
	CHECK(write(g->go[1], "g", 1) == 1 ? 0 : -1);
}

static void expect_usage(const struct pool_fixture *p, uid_t uid, long long entries,
			 long long bytes)
{
	struct usage u = user_usage(p, uid);

	if (u.entries != entries || u.bytes != bytes)
		fail_msg("uid %u: entries %lld bytes %lld, want %lld and %lld", (unsigned)uid,
			 u.entries, u.bytes, entries, bytes);
}

static int unlink_path(void *arg)
{
	return unlink(arg) < 0 ? errno : 0;
}

static void test_stat_counts_unseen_growth(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct grower a = {.first = 1 << 20, .second = 3 << 20};
	struct grower b = {.first = 256 << 10, .second = 512 << 10};

	tu_paths(p, "a-grows", a.path, "b-grows", b.path);
	grower_start(&a, UID_A, GID_A);
	grower_start(&b, UID_B, GID_B);
	grower_wait(&a);
	grower_wait(&b);
	/* written and mapped, the fds open: each user's own bytes, the pool's the sum */
	expect_usage(p, UID_A, 1, 1 << 20);
	expect_usage(p, UID_B, 1, 256 << 10);
	assert_int_equal(pool_totals(p).bytes, (1 << 20) + (256 << 10));
	/* asked twice: nothing moved, nothing changes */
	expect_usage(p, UID_A, 1, 1 << 20);
	grower_go(&a);
	grower_go(&b);
	grower_wait(&a);
	grower_wait(&b);
	/* grown past the mapping, still open and mapped */
	expect_usage(p, UID_A, 1, 3 << 20);
	expect_usage(p, UID_B, 1, 512 << 10);
	assert_int_equal(pool_totals(p).bytes, (3 << 20) + (512 << 10));
	grower_go(&a);
	grower_go(&b);
	assert_int_equal(run_as_reap(a.pid), 0);
	assert_int_equal(run_as_reap(b.pid), 0);
	/* closed and unmapped (the pins keep them): the same */
	expect_usage(p, UID_A, 1, 3 << 20);
	expect_usage(p, UID_B, 1, 512 << 10);
	assert_int_equal(pool_totals(p).bytes, (3 << 20) + (512 << 10));
	/* removed: nothing left, once the kernel has let go of them */
	AS_OK(UID_A, GID_A, unlink_path, a.path);
	AS_OK(UID_B, GID_B, unlink_path, b.path);
	expect_entries(p, UID_A, 0);
	expect_entries(p, UID_B, 0);
	expect_usage(p, UID_A, 0, 0);
	expect_usage(p, UID_B, 0, 0);
	assert_int_equal(pool_totals(p).bytes, 0);
	CHECK(close(a.go[1]));
	CHECK(close(b.go[1]));
	CHECK(close(a.done[0]));
	CHECK(close(b.done[0]));
}

#define T(fn, setup, teardown) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_link_by_path_owner_only, setup_none, tu_teardown),
		T(test_link_root_exempt_not_owner, setup_exempt, tu_teardown),
		T(test_link_through_passed_fd_eperm, setup_none, teardown_restore),
		T(test_link_across_pools_exdev, setup_two, tu_teardown_two),
		T(test_link_folder_eperm, setup_none, tu_teardown),
		T(test_link_onto_existing_eexist, setup_none, tu_teardown),
		T(test_link_unlinked_file_enoent, setup_none, tu_teardown),
		T(test_link_meta_quota_edquot, setup_meta, tu_teardown),
		T(test_link_max_user_size_edquot, setup_user_size, tu_teardown),
		T(test_link_max_size_enospc, setup_pool_size, tu_teardown),
		T(test_link_entries_count_once, setup_entries, tu_teardown),
		T(test_256_names, setup_none, tu_teardown),
		T(test_emlink_after_65000_names, setup_none, tu_teardown),
		T(test_rename_onto_same_entry, setup_none, tu_teardown),
		T(test_holds_end_with_last_name, setup_none, tu_teardown),
		T(test_names_go_when_hold_released, setup_none, tu_teardown),
		T(test_every_name_goes_when_unused, setup_none, tu_teardown),
		T(test_symlinks, setup_session, tu_teardown),
		T(test_symlink_target_charged, setup_meta_symlink, tu_teardown),
		T(test_fifos, setup_session, tu_teardown),
		T(test_unix_sockets, setup_session, tu_teardown),
		T(test_device_nodes_refused, setup_none, tu_teardown),
		T(test_autohold_none_kinds_go_at_once, setup_none, tu_teardown),
		T(test_folder_hold_keeps_kinds, setup_none, tu_teardown),
		T(test_session_kinds_end_with_session, setup_session, tu_teardown),
		T(test_root_own_entries, setup_none, tu_teardown),
		T(test_root_own_entries_private, setup_private, tu_teardown),
		T(test_root_exempt_user_file, setup_exempt, tu_teardown),
		T(test_stat_counts_unseen_growth, setup_none, tu_teardown),
	};

	if (geteuid() != 0)
		return tu_skip_all("needs root (mounts allow_other, switches uids)");
	return ITEST_RUN(tests);
}
