/* Owner-only rules (docs/interface.md "Entries and permissions") with a
 * second uid (65534, through run_as_user, like setpriv --reuid --regid --clear-groups) against a
 * pool mounted allow_other by root. */
#include "itest.h"

#include <dirent.h>
#include <grp.h>
#include <sys/xattr.h>

TU_SETUP(setup_none, "autohold=none")
TU_SETUP(setup_exempt, "autohold=none,root_exempt")

/* Paths the scenarios use; absolute, so a child of any uid can use them. */
struct names {
	char mnt[PATH_MAX];
	char rootf[PATH_MAX];	/* root's file, kept open by the test */
	char rootd[PATH_MAX];	/* root's empty folder (stays) */
	char rootd_x[PATH_MAX]; /* rootd/x (never made) */
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
	assert_int_equal(pool_path(p, "rootd/x", n->rootd_x, sizeof(n->rootd_x)), 0);
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

static void test_modes_owner_only(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	char f1[PATH_MAX], f2[PATH_MAX], f3[PATH_MAX], f4[PATH_MAX], d1[PATH_MAX], d2[PATH_MAX];
	mode_t old = umask(0);
	int fd[4];
	struct stat st;

	tu_paths(p, "f1", f1, "f2", f2, "f3", f3, "f4", f4, "d1", d1, "d2", d2);
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
	expect_chmod_gives(f1, 0644, 0600);
	expect_chmod_gives(f1, 0777, 0700);
	CHECK(fchmod(fd[0], 0604));
	expect_mode(f1, 0600);
	expect_chmod_gives(f1, 04755, 0700);
	expect_chmod_gives(d1, 0755, 0700);
	expect_chmod_gives(d1, 01777, 0700);

	/* the root is shared and sticky */
	CHECK(stat(p->mnt, &st));
	assert_int_equal(st.st_mode & 07777, 01777);
	assert_int_equal(st.st_uid, getuid());

	for (int i = 0; i < 4; i++)
		CHECK(close(fd[i]));
	CHECK(rmdir(d1));
	CHECK(rmdir(d2));
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
	char buf[16] = {0};
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
	USER_OK(14, tu_close_until_gone(fd, n->mine));

	USER_OK(15, mkdir(n->ud, 0777));
	USER_OK(16, stat(n->ud, &st));
	USER_TRUE(17, st.st_uid == OTHER_UID && (st.st_mode & 07777) == 0700);
	snprintf(inside, sizeof(inside), "%s/x", n->ud);
	fd = open(inside, O_RDWR | O_CREAT | O_EXCL, 0600);
	USER_OK(18, fd);
	/* armed by its child, the folder goes with it */
	USER_OK(19, tu_close_until_gone(fd, n->ud));
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
	CHILD_READY_THEN_GO(&n->c, 5);
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

/* ---- the refusal matrix: one row, one request, one test case ----
 *
 * BY_OTHER rows: root made rootf (open, with data and user.x), rootd (empty) and rootd2/child
 * (open); the other user, who has a file of its own (mine) to rename onto root's, makes the
 * request. After it, root's entries must be untouched.
 * BY_ROOT rows: the other user made ud (empty) and uf (open in a process of that uid, with data
 * and user.x); root, not exempt, makes the request. Listings must hide uf and ud from root. */

enum actor { BY_OTHER, BY_ROOT };

/* The rows' requests: tu_request's (testutil.h), by the names the table reads best with. */
enum op {
	OP_OPEN = TU_REQ_OPEN,
	OP_STAT = TU_REQ_STAT,
	OP_LSTAT = TU_REQ_LSTAT,
	OP_TRUNCATE = TU_REQ_TRUNCATE,
	OP_UNLINK = TU_REQ_UNLINK,
	OP_RMDIR = TU_REQ_RMDIR,
	OP_MKDIR = TU_REQ_MKDIR,
	OP_RENAME = TU_REQ_RENAME,
	OP_GETXATTR = TU_REQ_GETXATTR,
	OP_SETXATTR = TU_REQ_SETXATTR,
	OP_LISTXATTR = TU_REQ_LISTXATTR,
	OP_REMOVEXATTR = TU_REQ_REMOVEXATTR,
	OP_CHMOD = TU_REQ_CHMOD,
	OP_UTIMENS = TU_REQ_UTIMENS,
	OP_ACCESS = TU_REQ_ACCESS,
};

#define AT(field) offsetof(struct names, field)

struct access_row {
	const char *name; /* the test case: who, what, on whose entry, the errno */
	enum actor who;
	enum op op;
	size_t path;	   /* AT(field): the entry the request names */
	size_t to;	   /* AT(field): OP_RENAME's target */
	const char *xattr; /* the attribute name of the xattr requests */
	const char *val;   /* OP_SETXATTR's value */
	int flags;	   /* OP_OPEN's flags, OP_ACCESS's mode */
	int expect;	   /* the errno */
};

static const struct access_row rows[] = {
	/* open */
	{"other_open_rdonly_root_file_eacces", BY_OTHER, OP_OPEN, AT(rootf), .flags = O_RDONLY,
	 .expect = EACCES},
	{"other_open_wronly_root_file_eacces", BY_OTHER, OP_OPEN, AT(rootf), .flags = O_WRONLY,
	 .expect = EACCES},
	{"other_open_creat_root_file_eacces", BY_OTHER, OP_OPEN, AT(rootf),
	 .flags = O_RDWR | O_CREAT, .expect = EACCES},
	{"other_opendir_root_folder_eacces", BY_OTHER, OP_OPEN, AT(rootd),
	 .flags = O_RDONLY | O_DIRECTORY, .expect = EACCES},
	{"other_opendir_root_folder_in_use_eacces", BY_OTHER, OP_OPEN, AT(rootd2),
	 .flags = O_RDONLY | O_DIRECTORY, .expect = EACCES},
	{"other_open_inside_root_folder_eacces", BY_OTHER, OP_OPEN, AT(child), .flags = O_RDONLY,
	 .expect = EACCES},
	{"other_create_in_root_folder_eacces", BY_OTHER, OP_OPEN, AT(rootd_x),
	 .flags = O_RDWR | O_CREAT, .expect = EACCES},
	{"root_open_other_file_eacces", BY_ROOT, OP_OPEN, AT(uf), .flags = O_RDONLY,
	 .expect = EACCES},
	{"root_open_creat_other_file_eacces", BY_ROOT, OP_OPEN, AT(uf), .flags = O_RDWR | O_CREAT,
	 .expect = EACCES},
	{"root_opendir_other_folder_eacces", BY_ROOT, OP_OPEN, AT(ud),
	 .flags = O_RDONLY | O_DIRECTORY, .expect = EACCES},
	/* stat */
	{"other_stat_root_file_eacces", BY_OTHER, OP_STAT, AT(rootf), .expect = EACCES},
	{"other_stat_root_folder_eacces", BY_OTHER, OP_STAT, AT(rootd), .expect = EACCES},
	{"other_stat_inside_root_folder_eacces", BY_OTHER, OP_STAT, AT(child), .expect = EACCES},
	{"root_stat_other_file_eacces", BY_ROOT, OP_STAT, AT(uf), .expect = EACCES},
	{"root_stat_other_folder_eacces", BY_ROOT, OP_STAT, AT(ud), .expect = EACCES},
	/* lstat */
	{"other_lstat_root_file_eacces", BY_OTHER, OP_LSTAT, AT(rootf), .expect = EACCES},
	/* truncate */
	{"other_truncate_root_file_eacces", BY_OTHER, OP_TRUNCATE, AT(rootf), .expect = EACCES},
	{"root_truncate_other_file_eacces", BY_ROOT, OP_TRUNCATE, AT(uf), .expect = EACCES},
	/* unlink */
	{"other_unlink_root_file_eacces", BY_OTHER, OP_UNLINK, AT(rootf), .expect = EACCES},
	{"other_unlink_inside_root_folder_eacces", BY_OTHER, OP_UNLINK, AT(child),
	 .expect = EACCES},
	{"root_unlink_other_file_eacces", BY_ROOT, OP_UNLINK, AT(uf), .expect = EACCES},
	/* rmdir */
	{"other_rmdir_root_folder_eacces", BY_OTHER, OP_RMDIR, AT(rootd), .expect = EACCES},
	{"root_rmdir_other_folder_eacces", BY_ROOT, OP_RMDIR, AT(ud), .expect = EACCES},
	/* mkdir */
	{"other_mkdir_in_root_folder_eacces", BY_OTHER, OP_MKDIR, AT(rootd_x), .expect = EACCES},
	/* rename */
	{"other_rename_root_file_away_eacces", BY_OTHER, OP_RENAME, AT(rootf), AT(ud),
	 .expect = EACCES},
	{"other_rename_own_file_over_root_file_eacces", BY_OTHER, OP_RENAME, AT(mine), AT(rootf),
	 .expect = EACCES},
	{"other_rename_root_folder_away_eacces", BY_OTHER, OP_RENAME, AT(rootd), AT(ud),
	 .expect = EACCES},
	{"root_rename_other_file_away_eacces", BY_ROOT, OP_RENAME, AT(uf), AT(rootf),
	 .expect = EACCES},
	{"root_rename_other_folder_away_eacces", BY_ROOT, OP_RENAME, AT(ud), AT(rootd),
	 .expect = EACCES},
	/* getxattr */
	{"other_getxattr_root_file_eacces", BY_OTHER, OP_GETXATTR, AT(rootf), .xattr = "user.x",
	 .expect = EACCES},
	{"other_refs_of_root_file_eacces", BY_OTHER, OP_GETXATTR, AT(rootf),
	 .xattr = POOLFS_XATTR_REFS, .expect = EACCES},
	{"root_getxattr_other_file_eacces", BY_ROOT, OP_GETXATTR, AT(uf), .xattr = "user.x",
	 .expect = EACCES},
	/* setxattr (a user attribute or a hold) */
	{"other_setxattr_root_file_eacces", BY_OTHER, OP_SETXATTR, AT(rootf), .xattr = "user.y",
	 .val = "2", .expect = EACCES},
	{"other_pin_root_file_eacces", BY_OTHER, OP_SETXATTR, AT(rootf), .xattr = POOLFS_XATTR_HOLD,
	 .val = POOLFS_SCOPE_WORD_PIN, .expect = EACCES},
	{"other_process_hold_on_root_file_eacces", BY_OTHER, OP_SETXATTR, AT(rootf),
	 .xattr = POOLFS_XATTR_HOLD, .val = POOLFS_SCOPE_WORD_PROCESS, .expect = EACCES},
	{"other_pin_root_folder_eacces", BY_OTHER, OP_SETXATTR, AT(rootd),
	 .xattr = POOLFS_XATTR_HOLD, .val = POOLFS_SCOPE_WORD_PIN, .expect = EACCES},
	{"root_setxattr_other_file_eacces", BY_ROOT, OP_SETXATTR, AT(uf), .xattr = "user.y",
	 .val = "1", .expect = EACCES},
	{"root_pin_other_file_eacces", BY_ROOT, OP_SETXATTR, AT(uf), .xattr = POOLFS_XATTR_HOLD,
	 .val = POOLFS_SCOPE_WORD_PIN, .expect = EACCES},
	/* listxattr */
	{"other_listxattr_root_file_eacces", BY_OTHER, OP_LISTXATTR, AT(rootf), .expect = EACCES},
	{"root_listxattr_other_file_eacces", BY_ROOT, OP_LISTXATTR, AT(uf), .expect = EACCES},
	/* removexattr */
	{"other_removexattr_root_file_eacces", BY_OTHER, OP_REMOVEXATTR, AT(rootf),
	 .xattr = "user.x", .expect = EACCES},
	/* chmod */
	{"other_chmod_root_file_eacces", BY_OTHER, OP_CHMOD, AT(rootf), .expect = EACCES},
	{"root_chmod_other_file_eacces", BY_ROOT, OP_CHMOD, AT(uf), .expect = EACCES},
	/* utimensat */
	{"other_utimens_root_file_eacces", BY_OTHER, OP_UTIMENS, AT(rootf), .expect = EACCES},
	{"root_utimens_other_file_eacces", BY_ROOT, OP_UTIMENS, AT(uf), .expect = EACCES},
	/* access */
	{"other_access_f_ok_root_file_eacces", BY_OTHER, OP_ACCESS, AT(rootf), .flags = F_OK,
	 .expect = EACCES},
	{"other_access_r_ok_root_file_eacces", BY_OTHER, OP_ACCESS, AT(rootf), .flags = R_OK,
	 .expect = EACCES},
	{"other_access_x_ok_root_folder_eacces", BY_OTHER, OP_ACCESS, AT(rootd), .flags = X_OK,
	 .expect = EACCES},
};

#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

/* The row's request: 0 if it succeeded (a descriptor it opened is closed), else its errno. No
 * cmocka: it also runs in a child of the other uid. */
static int row_request(const struct names *n, const struct access_row *r)
{
	const char *base = (const char *)n;
	const struct tu_req q = {.op = (enum tu_req_op)r->op,
				 .path = base + r->path,
				 .to = base + r->to,
				 .flags = r->flags,
				 .name = r->xattr,
				 .val = r->val};

	return tu_request(&q);
}

/* What a BY_OTHER row's child runs: its own file first (the source of the renames onto root's
 * entries), then the request. The exit code is the request's errno (0: it succeeded). */
struct other_request {
	const struct names *n;
	const struct access_row *row;
};

static int other_requests(void *v)
{
	const struct other_request *o = v;
	int fd = open(o->n->mine, O_RDWR | O_CREAT | O_EXCL, 0600);
	int e;

	if (fd < 0) {
		fprintf(stderr, "# uid %d: create %s: %s\n", (int)getuid(), o->n->mine,
			errname(errno));
		return 254;
	}
	e = row_request(o->n, o->row);
	close(fd);
	return e;
}

static void expect_row(const struct access_row *r, int got)
{
	if (got != r->expect)
		fail_msg("%s: got %s, want %s", r->name, got < 0 ? "runner failed" : errname(got),
			 errname(r->expect));
}

static void run_other_row(const struct pool_fixture *p, const struct access_row *r)
{
	struct names n;
	struct other_request o = {&n, r};
	char buf[16] = {0};
	int fds[2];

	names_init(p, &n);
	make_root_entries(&n, fds);
	expect_row(r, run_as_user(OTHER_UID, OTHER_GID, other_requests, &o));
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

static int other_waits_gone(void *v)
{
	USER_OK(1, pool_wait_gone(v, GONE_MS) == 0 ? 0 : -1);
	return 0;
}

static void run_root_row(const struct pool_fixture *p, const struct access_row *r)
{
	struct names n;
	pid_t pid = start_other_holder(p, &n);

	expect_row(r, row_request(&n, r));
	assert_int_equal(tu_listed(p->mnt, "uf"), 0);
	assert_int_equal(tu_listed(p->mnt, "ud"), 0);
	PARENT_GO(&n.c);
	REAP_OK(pid);
	chan_close_parent(&n.c);
	/* root may not even look at uf: its owner watches it go */
	AS_OTHER_OK(other_waits_gone, n.uf);
}

/* Each row on a pool of its own (autohold=none, not root_exempt), so a request that wrongly
 * succeeds cannot change the next row's scene. */
struct row_state {
	struct tu_fixture t; /* first: tu_pool and tu_teardown take *state */
	const struct access_row *row;
};

static int row_setup(void **state)
{
	const struct access_row *row = *state;

	if (tu_setup_sized(state, "autohold=none", sizeof(struct row_state)) < 0)
		return -1;
	((struct row_state *)*state)->row = row;
	return 0;
}

static void test_row(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	const struct access_row *r = ((struct row_state *)*state)->row;

	if (r->who == BY_OTHER)
		run_other_row(p, r);
	else
		run_root_row(p, r);
}

static void test_root_exempt_allowed(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct names n;
	struct stat st;
	char buf[64] = {0};
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

static const struct CMUnitTest scenarios[] = {
	T(test_modes_owner_only),	    T(test_listing_hides_other_users),
	T(test_other_user_creates_in_root), T(test_chown_refused),
	T(test_stat_xattr_per_user),	    TX(test_root_exempt_allowed),
};

#define N_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

int main(void)
{
	struct CMUnitTest tests[N_SCENARIOS + N_ROWS];

	memcpy(tests, scenarios, sizeof(scenarios));
	rows_to_tests(tests + N_SCENARIOS, rows, sizeof(rows[0]), N_ROWS, test_row, row_setup,
		      tu_teardown);
	if (geteuid() != 0) {
		/* a second uid and allow_other need root */
		fprintf(stderr, "# not root: the access tests need to switch uid\n");
	}
	return ITEST_RUN(tests);
}
