/* MKNOD, SYMLINK and LINK requests in every combination of their arguments, against a real pool
 * (autohold=session, so what a row makes stays until the row removes it), as root and as a user
 * (A = uid 1001): mode types (regular, FIFO, socket, character and block devices, the whiteout
 * 0:0, folder, symlink, garbage type bits) with plain and all permission bits; targets of 0, 1,
 * 4095 and 4096 bytes; link sources of every kind (file, symlink followed or not, dangling,
 * FIFO, socket, folder, the pool root, missing, under a file, in another pool); new names of 0,
 * 1, 255 and 256 bytes, ".", "..", an existing name, in the actor's folder, in a missing folder,
 * under a file.
 *
 * Each dimension's values carry the errno the spec (docs/interface.md with the entry-kinds
 * behaviour; the kernel's own checks where it answers first) gives them, and the stage at which
 * it is decided, in the order the kernel and the daemon check:
 *   ARG     the call's own arguments (mknod's mode, symlink's target), before any lookup
 *   SOURCE  link's existing path is looked up
 *   NAME    the new name is looked up (the daemon refuses names over 255 bytes)
 *   MOUNT   link across mounts (EXDEV)
 *   TYPE    what may not be made or linked (device nodes, folders: EPERM)
 * A row's expected result is the error of its earliest stage, else success: then the entry
 * made must be what was asked for (type, owner-only permission bits, target, same inode and one
 * name more), and is removed again.
 *
 * After every row the pool must be as before: the actor's entries and metadata in
 * user.poolfs.stat back to what they were, and, when the daemon exposes it (poolfs-faultsim:
 * user.poolfs.debug.check), every invariant of the pool intact. POOLFS_REQUIRE_CHECK=1 (the run
 * against poolfs-faultsim) makes a missing check a failure. */
#include "itest.h"

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#define UID_A 1001
#define GID_A 1001

/* A row's result when the call worked but made the wrong thing, or was not undone. */
#define WRONG 200
#define NOT_UNDONE 201

enum stage { ST_ARG, ST_SOURCE, ST_NAME, ST_MOUNT, ST_TYPE, ST_NONE };

/* ---- the dimensions ---- */

struct name_case {
	const char *label;
	const char *name; /* relative to the pool root; NULL: len bytes of 'n' */
	int len;
	enum stage st;
	int err;
};

static const struct name_case names[] = {
	{"name_empty", "", 0, ST_NAME, ENOENT},
	{"name_dot", ".", 0, ST_NAME, EEXIST},
	{"name_dotdot", "..", 0, ST_NAME, EEXIST},
	{"name_len1", "x", 0, ST_NONE, 0},
	{"name_len255", NULL, 255, ST_NONE, 0},
	{"name_len256", NULL, 256, ST_NAME, ENAMETOOLONG},
	{"name_existing", "exists", 0, ST_NAME, EEXIST},
	{"name_in_own_folder", "dir/n", 0, ST_NONE, 0},
	{"name_in_missing_folder", "nodir/n", 0, ST_NAME, ENOENT},
	{"name_under_a_file", "file/n", 0, ST_NAME, ENOTDIR},
};

struct mode_case {
	const char *label;
	mode_t mode;
	dev_t dev;
	enum stage st;
	int err;
};

static const struct mode_case modes[] = {
	{"reg", S_IFREG | 0644, 0, ST_NONE, 0},
	{"reg_all_bits", S_IFREG | 07777, 0, ST_NONE, 0},
	{"type_0_is_reg", 0640, 0, ST_NONE, 0},
	{"fifo", S_IFIFO | 0666, 0, ST_NONE, 0},
	{"fifo_all_bits", S_IFIFO | 07777, 0, ST_NONE, 0},
	{"fifo_with_dev", S_IFIFO | 0600, 0x0103, ST_NONE, 0},
	{"sock", S_IFSOCK | 0755, 0, ST_NONE, 0},
	{"sock_all_bits", S_IFSOCK | 07777, 0, ST_NONE, 0},
	{"chr", S_IFCHR | 0600, 0x0103, ST_TYPE, EPERM},
	/* 0:0 is an overlayfs whiteout: the kernel lets anyone make one, so it reaches the daemon */
	{"chr_whiteout", S_IFCHR | 0600, 0, ST_TYPE, EPERM},
	{"blk", S_IFBLK | 0600, 0x0700, ST_TYPE, EPERM},
	{"dir", S_IFDIR | 0700, 0, ST_ARG, EPERM},
	{"lnk", S_IFLNK | 0777, 0, ST_ARG, EINVAL},
	{"garbage_030", 0030000 | 0600, 0, ST_ARG, EINVAL},
	{"garbage_050", 0050000 | 0600, 0, ST_ARG, EINVAL},
	{"garbage_070", 0070000 | 0600, 0, ST_ARG, EINVAL},
	{"garbage_110", 0110000 | 0600, 0, ST_ARG, EINVAL},
	{"garbage_130", 0130000 | 0600, 0, ST_ARG, EINVAL},
	{"garbage_150", 0150000 | 0600, 0, ST_ARG, EINVAL},
	{"garbage_160", 0160000 | 0600, 0, ST_ARG, EINVAL},
	{"garbage_170", 0170000 | 0600, 0, ST_ARG, EINVAL},
};

struct target_case {
	const char *label;
	const char *target; /* NULL: len bytes */
	int len;
	enum stage st;
	int err;
};

static const struct target_case targets[] = {
	{"target_empty", "", 0, ST_ARG, ENOENT},
	{"target_len1", "t", 0, ST_NONE, 0},
	{"target_file", "file", 0, ST_NONE, 0},
	{"target_absolute", "/nowhere/at/all", 0, ST_NONE, 0},
	{"target_len4095", NULL, 4095, ST_NONE, 0},
	{"target_len4096", NULL, 4096, ST_ARG, ENAMETOOLONG},
};

struct source_case {
	const char *label;
	const char *path; /* relative to the pool root; NULL: the other pool's file */
	int flags;	  /* linkat's */
	enum stage st;
	int err;
};

static const struct source_case sources[] = {
	{"src_file", "file", 0, ST_NONE, 0},
	{"src_symlink", "lnk", 0, ST_NONE, 0},
	{"src_symlink_followed", "lnk", AT_SYMLINK_FOLLOW, ST_NONE, 0},
	{"src_dangling", "dangling", 0, ST_NONE, 0},
	{"src_dangling_followed", "dangling", AT_SYMLINK_FOLLOW, ST_SOURCE, ENOENT},
	{"src_fifo", "fifo", 0, ST_NONE, 0},
	{"src_sock", "sock", 0, ST_NONE, 0},
	{"src_folder", "dir", 0, ST_TYPE, EPERM},
	{"src_pool_root", ".", 0, ST_TYPE, EPERM},
	{"src_missing", "missing", 0, ST_SOURCE, ENOENT},
	{"src_empty", "", 0, ST_SOURCE, ENOENT},
	{"src_under_a_file", "file/x", 0, ST_SOURCE, ENOTDIR},
	{"src_other_pool", NULL, 0, ST_MOUNT, EXDEV},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- rows ---- */

enum op { OP_MKNOD, OP_SYMLINK, OP_LINK };

struct row {
	enum op op;
	int arg;  /* index into modes, targets or sources */
	int name; /* index into names */
};

/* The earliest error of the row's two dimensions (0 if none). */
static int expected(const struct row *r)
{
	const struct name_case *n = &names[r->name];
	enum stage st = ST_NONE;
	int err = 0;

	switch (r->op) {
	case OP_MKNOD:
		st = modes[r->arg].st, err = modes[r->arg].err;
		break;
	case OP_SYMLINK:
		st = targets[r->arg].st, err = targets[r->arg].err;
		break;
	case OP_LINK:
		st = sources[r->arg].st, err = sources[r->arg].err;
		break;
	}
	return n->st < st ? n->err : err;
}

static void describe(char *buf, size_t len, const struct row *r)
{
	static const char *const ops[] = {"mknod", "symlink", "link"};
	const char *arg = r->op == OP_MKNOD	? modes[r->arg].label
			  : r->op == OP_SYMLINK ? targets[r->arg].label
						: sources[r->arg].label;

	snprintf(buf, len, "%s(%s, %s)", ops[r->op], arg, names[r->name].label);
}

/* ---- the pools ---- */

struct table {
	struct tu_two_pools two; /* first: the test's pool, and the other one q (EXDEV) */
	uid_t uid;		 /* the actor of the running table */
	gid_t gid;
	char qfile[PATH_MAX]; /* the actor's file in q */
};

#define OPTS "autohold=session"

static int setup(void **state)
{
	return tu_setup_two_sized(state, OPTS, sizeof(struct table));
}

/* ---- in the actor's process ---- */

struct job {
	const struct table *tb;
	const struct row *r;
};

/* The scene, as the actor: file ("data"), exists, lnk -> file, dangling -> nowhere, fifo, sock,
 * dir (a folder), and qfile in the other pool. */
static int scene_child(void *v)
{
	const struct table *tb = v;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int dfd = open(tb->two.t.p.mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd, s;

	USER_OK(1, dfd);
	fd = openat(dfd, "file", O_RDWR | O_CREAT | O_EXCL, 0600);
	USER_OK(2, fd);
	USER_TRUE(3, write(fd, "data", 4) == 4);
	close(fd);
	USER_OK(4, fd = openat(dfd, "exists", O_RDWR | O_CREAT | O_EXCL, 0600));
	close(fd);
	USER_OK(5, symlinkat("file", dfd, "lnk"));
	USER_OK(6, symlinkat("nowhere", dfd, "dangling"));
	USER_OK(7, mkfifoat(dfd, "fifo", 0600));
	USER_OK(8, mkdirat(dfd, "dir", 0700));
	USER_TRUE(9, (size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s/sock", tb->two.t.p.mnt) <
			     sizeof(a.sun_path));
	USER_OK(10, s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	USER_OK(11, bind(s, (struct sockaddr *)&a, sizeof(a)));
	close(s);
	USER_OK(12, fd = open(tb->qfile, O_RDWR | O_CREAT | O_EXCL, 0600));
	close(fd);
	close(dfd);
	return 0;
}

/* The name of names[i] (a buffer of at least 300 bytes). */
static const char *name_of(int i, char *buf)
{
	const struct name_case *n = &names[i];

	if (n->name)
		return n->name;
	memset(buf, 'n', (size_t)n->len);
	buf[n->len] = '\0';
	return buf;
}

/* targets[i] (a buffer of at least 4097 bytes). */
static const char *target_of(int i, char *buf)
{
	const struct target_case *t = &targets[i];

	if (t->target)
		return t->target;
	for (int k = 0; k < t->len; k++)
		buf[k] = k % 100 == 99 ? '/' : 't';
	buf[t->len] = '\0';
	return buf;
}

#define WRONG_IF(cond, ...)                                                                        \
	do {                                                                                       \
		if (cond) {                                                                        \
			fprintf(stderr, "# uid %d: " __VA_ARGS__);                                 \
			fprintf(stderr, "\n");                                                     \
			return WRONG;                                                              \
		}                                                                                  \
	} while (0)

/* What a made entry must be. */
static int check_made(int dfd, const char *name, const struct row *r, const char *target,
		      const struct stat *src)
{
	char buf[4200];
	struct stat st;
	ssize_t n;
	int uid = (int)getuid();

	WRONG_IF(fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1, "lstat of what was made: %s",
		 uid, errname(errno));
	WRONG_IF(st.st_uid != getuid(), "owner %u", uid, (unsigned)st.st_uid);
	switch (r->op) {
	case OP_MKNOD: {
		mode_t m = modes[r->arg].mode;
		mode_t type = (m & S_IFMT) ? (m & S_IFMT) : S_IFREG;

		WRONG_IF((st.st_mode & S_IFMT) != type || (st.st_mode & 07777) != (m & 0700),
			 "mode 0%o, want 0%o", uid, (unsigned)st.st_mode,
			 (unsigned)(type | (m & 0700)));
		WRONG_IF(st.st_nlink != 1 || st.st_size != 0, "%lu names, size %lld", uid,
			 (unsigned long)st.st_nlink, (long long)st.st_size);
		break;
	}
	case OP_SYMLINK:
		WRONG_IF(st.st_mode != (S_IFLNK | 0700) || st.st_size != (off_t)strlen(target),
			 "mode 0%o size %lld, want lrwx------ size %zu", uid, (unsigned)st.st_mode,
			 (long long)st.st_size, strlen(target));
		n = readlinkat(dfd, name, buf, sizeof(buf));
		WRONG_IF(n != (ssize_t)strlen(target) || memcmp(buf, target, (size_t)n) != 0,
			 "readlink gave %zd bytes, not the target", uid, n);
		break;
	case OP_LINK:
		WRONG_IF(st.st_ino != src->st_ino || st.st_nlink != src->st_nlink + 1 ||
				 (st.st_mode & S_IFMT) != (src->st_mode & S_IFMT),
			 "inode %lu with %lu names, want inode %lu with %lu", uid,
			 (unsigned long)st.st_ino, (unsigned long)st.st_nlink,
			 (unsigned long)src->st_ino, (unsigned long)src->st_nlink + 1);
		break;
	}
	return 0;
}

/* The row's request as the actor: its errno (0 if it worked, was right and was undone), WRONG or
 * NOT_UNDONE. */
static int row_child(void *v)
{
	const struct job *j = v;
	const struct row *r = j->r;
	char nbuf[300], tbuf[4200];
	const char *name = name_of(r->name, nbuf), *target = NULL, *src = NULL;
	struct stat before = {0};
	int dfd = open(j->tb->two.t.p.mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC), flags = 0, e;
	long res = -1;

	if (dfd < 0)
		return WRONG;
	umask(0);
	switch (r->op) {
	case OP_MKNOD:
		res = mknodat(dfd, name, modes[r->arg].mode, modes[r->arg].dev);
		break;
	case OP_SYMLINK:
		target = target_of(r->arg, tbuf);
		res = symlinkat(target, dfd, name);
		break;
	case OP_LINK:
		src = sources[r->arg].path ? sources[r->arg].path : j->tb->qfile;
		flags = sources[r->arg].flags;
		if (fstatat(dfd, src, &before, flags & AT_SYMLINK_FOLLOW ? 0 : AT_SYMLINK_NOFOLLOW))
			memset(&before, 0, sizeof(before));
		res = linkat(dfd, src, dfd, name, flags);
		break;
	}
	if (res == -1) {
		e = errno;
		close(dfd);
		return e;
	}
	e = check_made(dfd, name, r, target, &before);
	if (unlinkat(dfd, name, 0) == -1) {
		fprintf(stderr, "# uid %d: unlink of what was made: %s\n", (int)getuid(),
			errname(errno));
		e = NOT_UNDONE;
	}
	close(dfd);
	return e;
}

/* ---- in the test ---- */

/* 1 if the pool's invariants hold, 0 if this daemon has no check, -1 if one is broken (said). */
static int pool_invariants(const struct pool_fixture *p, const char *after)
{
	char buf[4096];
	ssize_t n = getxattr(p->mnt, POOLFS_XATTR_DEBUG_CHECK, buf, sizeof(buf) - 1);

	if (n < 0) {
		if (errno == ENODATA)
			return 0;
		fprintf(stderr, "# after %s: %s: %s\n", after, POOLFS_XATTR_DEBUG_CHECK,
			errname(errno));
		return -1;
	}
	buf[n] = '\0';
	if (strcmp(buf, "ok\n") == 0)
		return 1;
	fprintf(stderr, "# after %s: the pool is inconsistent: %s", after, buf);
	return -1;
}

struct usage {
	long long entries, meta;
};

/* The actor's entries and metadata (user.poolfs.stat, read by root). */
static int usage_of(const struct pool_fixture *p, uid_t uid, struct usage *u)
{
	char text[8192], prefix[32];
	ssize_t n = getxattr(p->mnt, POOLFS_XATTR_STAT, text, sizeof(text) - 1);
	long long bytes;

	u->entries = u->meta = 0;
	if (n < 0)
		return -errno;
	text[n] = '\0';
	snprintf(prefix, sizeof(prefix), "user %u ", (unsigned)uid);
	for (const char *s = text; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL)
		if (strncmp(s, prefix, strlen(prefix)) == 0 &&
		    sscanf(s + strlen(prefix), "entries %lld bytes %lld meta %lld", &u->entries,
			   &bytes, &u->meta) != 3)
			return -EPROTO;
	return 0;
}

/* Poll (GONE_MS) until the actor's usage is base again: 0, or -1 (said). */
static int usage_back(const struct pool_fixture *p, uid_t uid, const struct usage *base,
		      const char *after)
{
	long long deadline = pool_now_ms() + GONE_MS;
	struct usage u;
	int r;

	while ((r = usage_of(p, uid, &u)) == 0 &&
	       (u.entries != base->entries || u.meta != base->meta)) {
		if (pool_now_ms() > deadline)
			break;
		pool_sleep_ms(2);
	}
	if (r == 0 && u.entries == base->entries && u.meta == base->meta)
		return 0;
	fprintf(stderr,
		"# after %s: uid %u has %lld entries and %lld bytes of metadata, had %lld "
		"and %lld (%s)\n",
		after, (unsigned)uid, u.entries, u.meta, base->entries, base->meta, errname(-r));
	return -1;
}

static size_t make_rows(struct row *rows)
{
	size_t n = 0;

	for (int i = 0; i < (int)N(modes); i++)
		for (int k = 0; k < (int)N(names); k++)
			rows[n++] = (struct row){OP_MKNOD, i, k};
	for (int i = 0; i < (int)N(targets); i++)
		for (int k = 0; k < (int)N(names); k++)
			rows[n++] = (struct row){OP_SYMLINK, i, k};
	for (int i = 0; i < (int)N(sources); i++)
		for (int k = 0; k < (int)N(names); k++)
			rows[n++] = (struct row){OP_LINK, i, k};
	return n;
}

#define N_ROWS ((N(modes) + N(targets) + N(sources)) * N(names))

static void run_table(void **state, uid_t uid, gid_t gid)
{
	struct pool_fixture *p = tu_pool(state);
	struct table *tb = *state;
	static struct row rows[N_ROWS];
	size_t n = make_rows(rows);
	const char *req = getenv("POOLFS_REQUIRE_CHECK");
	int failed = 0, checked = 0, r;
	struct usage base;
	char what[160];

	assert_int_equal(n, N_ROWS);
	tb->uid = uid;
	tb->gid = gid;
	assert_int_equal(pool_path(&tb->two.q, "qfile", tb->qfile, sizeof(tb->qfile)), 0);
	r = run_as_user(uid, gid, scene_child, tb);
	if (r != 0)
		fail_msg("the scene as uid %u failed at step %d", (unsigned)uid, r);
	CHECK_0(usage_of(p, uid, &base));
	for (size_t i = 0; i < n; i++) {
		struct job j = {tb, &rows[i]};
		int want = expected(&rows[i]), got, inv;

		describe(what, sizeof(what), &rows[i]);
		got = run_as_user(uid, gid, row_child, &j);
		if (got != want) {
			fprintf(stderr, "# FAIL uid %u %s: got %s, want %s\n", (unsigned)uid, what,
				got == WRONG	    ? "a wrong entry"
				: got == NOT_UNDONE ? "an entry that could not be removed"
				: got < 0	    ? "a failed runner"
						    : errname(got),
				errname(want));
			failed++;
		}
		inv = pool_invariants(p, what);
		failed += inv < 0;
		checked += inv > 0;
		failed += usage_back(p, uid, &base, what) < 0;
	}
	if (req && strcmp(req, "1") == 0 && checked != (int)n) {
		fprintf(stderr,
			"# the daemon's invariant check ran after %d of %zu rows "
			"(POOLFS_REQUIRE_CHECK=1)\n",
			checked, n);
		failed++;
	}
	fprintf(stderr, "# uid %u: %zu rows, %d invariant checks, %d failures\n", (unsigned)uid, n,
		checked, failed);
	if (failed) {
		tu_dump_log();
		fail_msg("uid %u: %d failures in %zu rows (see stderr)", (unsigned)uid, failed, n);
	}
}

static void test_table_root(void **state)
{
	run_table(state, 0, 0);
}

static void test_table_user(void **state)
{
	run_table(state, UID_A, GID_A);
}

/* The table's own oracle: the earliest stage wins. */
static void test_expected_order(void **state)
{
	struct row r;

	(void)state;
	r = (struct row){OP_MKNOD, 13, 0}; /* garbage type, empty name: the mode first */
	assert_int_equal(expected(&r), EINVAL);
	r = (struct row){OP_MKNOD, 8, 5}; /* chr, 256-byte name: the name first */
	assert_int_equal(expected(&r), ENAMETOOLONG);
	r = (struct row){OP_LINK, 12, 6}; /* other pool onto an existing name: EEXIST */
	assert_int_equal(expected(&r), EEXIST);
	r = (struct row){OP_LINK, 7, 3}; /* folder to a good name */
	assert_int_equal(expected(&r), EPERM);
	r = (struct row){OP_SYMLINK, 5, 1}; /* 4096-byte target to "." */
	assert_int_equal(expected(&r), ENAMETOOLONG);
	r = (struct row){OP_SYMLINK, 4, 4};
	assert_int_equal(expected(&r), 0);
	assert_string_equal(modes[13].label, "garbage_030");
	assert_string_equal(modes[8].label, "chr");
	assert_string_equal(sources[12].label, "src_other_pool");
	assert_string_equal(sources[7].label, "src_folder");
	assert_string_equal(targets[5].label, "target_len4096");
	assert_string_equal(names[5].label, "name_len256");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expected_order),
		cmocka_unit_test_setup_teardown(test_table_root, setup, tu_teardown_two),
		cmocka_unit_test_setup_teardown(test_table_user, setup, tu_teardown_two),
	};

	if (geteuid() != 0)
		return tu_skip_all("needs root (mounts allow_other, switches uids)");
	return ITEST_RUN(tests);
}
