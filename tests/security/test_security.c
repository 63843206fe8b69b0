/* The security suite: another uid tries everything against a real multi-user pool (allow_other,
 * autohold=none, mounted by root without root_exempt). README's error table and
 * docs/interface.md "Entries and permissions" are the spec; every case is one row of a table
 * {actor, target, operation, expected errno}, so adding a case is adding a row, and a failure
 * names its row by table line.
 *
 * Actors: A = uid 1001 (owner of a.dat, adir/), B = uid 1002 (owner of b.dat, bdir/), and root
 * (uid 0, owner of the pool root, not exempt). Each row runs in a fresh process of its actor
 * (run_as_spawn, harness.h) against a fresh scene, so a row that wrongly succeeds cannot change
 * the next one.
 *
 * The refusal matrices run twice: cold (the acting user has never touched the fresh scene, and
 * nobody used it since A and B made it) and warm (just before each row, A walks the same paths:
 * stat, lstat, readlink, open+close, listing of the folders), so that entries and attributes the
 * kernel caches for the owner (docs/design.md "Caching") never turn a refusal into an answer.
 *
 * The entry kinds (symbolic links, FIFOs, Unix sockets, hard links: docs/interface.md "Kinds of
 * entry") have tables of their own on a pool with autohold=session, where A's and B's symlinks,
 * FIFOs and sockets in the shared root stay after the process that made them (with autohold=none they would go at once).
 *
 * One test: SEC_FILTER=test_refusals_warm (cmocka's wildcards) POOLFS_DATAPATH=... as root.
 */
#include "itest.h"
#include "secrun.h"

#include <stdbool.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <ftw.h>

#define UID_A 1001
#define GID_A 1001
#define UID_B 1002
#define GID_B 1002

#define OPTS "autohold=none"
/* The entry kinds' scene: with autohold=none a symlink, FIFO or socket would go at once. */
#define OPTS_KINDS "autohold=session"

/* What every test's *state is: the pool, and how it was mounted (what its scene holds). */
struct sec_fixture {
	struct tu_fixture t; /* first: tu_pool and tu_teardown take *state */
	bool kinds;	     /* OPTS_KINDS, and the scene has A's and B's entry kinds */
};

/* A row's result when the call succeeded but what it returned was wrong (said on stderr). */
#define SEC_WRONG 200
/* A scene could not be cleared (a row that wrongly succeeded left something behind). */
#define SEC_DIRTY 201

#define HOLD POOLFS_XATTR_HOLD
#define REFS POOLFS_XATTR_REFS
#define STAT POOLFS_XATTR_STAT

enum actor { ACT_A, ACT_B, ACT_ROOT };

static const struct {
	const char *name;
	uid_t uid;
	gid_t gid;
} actors[] = {
	[ACT_A] = {"A", UID_A, GID_A},
	[ACT_B] = {"B", UID_B, GID_B},
	[ACT_ROOT] = {"root", 0, 0},
};

static const char *result_name(int r)
{
	static char buf[32];

	if (r == SEC_WRONG)
		return "wrong result";
	if (r == SEC_DIRTY)
		return "scene not cleared";
	if (r < 0) {
		snprintf(buf, sizeof(buf), "runner %s", errname(-r));
		return buf;
	}
	return errname(r);
}

/* ---- operations: each returns 0, an errno, or SEC_WRONG ---- */

struct row;

struct op {
	const char *name;
	int (*fn)(const char *path, const char *arg, const struct row *r);
	bool arg_is_path; /* the row's arg is a second path (warm walks it too) */
};

struct row {
	int line; /* the table line: what a failure names */
	enum actor who;
	const struct op *op;
	const char *path; /* relative to the mount; "" is the pool root */
	const char *arg;  /* a second path, an xattr name, or names a listing must show */
	const char *val;  /* an xattr value ("pid:self": the actor's pid), or names a listing
				 * or a text must not show */
	int flags;	  /* open flags, access mode, or truncate length */
	int expect;	  /* errno; 0 = allowed */
	int also;	  /* a second acceptable errno (0: none) */
	bool known_fail;  /* main still lacks the fix: reported, not counted */
};

static int res(long r)
{
	return r == -1 ? errno : 0;
}

static int do_stat(const char *path, const char *arg, const struct row *r)
{
	struct stat st;

	(void)arg, (void)r;
	return res(stat(path, &st));
}

static int do_lstat(const char *path, const char *arg, const struct row *r)
{
	struct stat st;

	(void)arg, (void)r;
	return res(lstat(path, &st));
}

/* statx that may answer from the kernel's cached attributes without asking the daemon */
static int do_statx_cached(const char *path, const char *arg, const struct row *r)
{
	struct statx stx;

	(void)arg, (void)r;
	return res(statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &stx));
}

/* A refused stat must not fill in anything: the caller's buffer stays as it was. */
static int do_stat_nofill(const char *path, const char *arg, const struct row *r)
{
	struct stat st, blank;
	int e;

	(void)arg, (void)r;
	memset(&st, 0xa5, sizeof(st));
	memcpy(&blank, &st, sizeof(st));
	if (stat(path, &st) == 0)
		return 0;
	e = errno;
	if (memcmp(&st, &blank, sizeof(st)) != 0) {
		fprintf(stderr, "# %s: the refused stat filled in attributes\n", path);
		return SEC_WRONG;
	}
	return e;
}

static int do_open(const char *path, const char *arg, const struct row *r)
{
	int fd = open(path, r->flags, 0600);

	(void)arg;
	if (fd == -1)
		return errno;
	close(fd);
	return 0;
}

static int do_opendir(const char *path, const char *arg, const struct row *r)
{
	DIR *d = opendir(path);

	(void)arg, (void)r;
	if (!d)
		return errno;
	closedir(d);
	return 0;
}

static int do_mkdir(const char *path, const char *arg, const struct row *r)
{
	(void)arg, (void)r;
	return res(mkdir(path, 0700));
}

static int do_truncate(const char *path, const char *arg, const struct row *r)
{
	(void)arg;
	return res(truncate(path, r->flags));
}

static int do_chmod(const char *path, const char *arg, const struct row *r)
{
	(void)arg, (void)r;
	return res(chmod(path, 0700));
}

/* chown to the actor itself (for anyone but the owner, that gives the entry away to them) */
static int do_chown_me(const char *path, const char *arg, const struct row *r)
{
	(void)arg, (void)r;
	return res(chown(path, getuid(), (gid_t)-1));
}

static int do_chgrp_me(const char *path, const char *arg, const struct row *r)
{
	(void)arg, (void)r;
	return res(chown(path, (uid_t)-1, getgid()));
}

/* touch -d 2001-01-01: explicit times need ownership */
static int do_utime_set(const char *path, const char *arg, const struct row *r)
{
	struct timespec ts[2] = {{978307200, 0}, {978307200, 0}};

	(void)arg, (void)r;
	return res(utimensat(AT_FDCWD, path, ts, 0));
}

/* touch: UTIME_NOW for both */
static int do_utime_now(const char *path, const char *arg, const struct row *r)
{
	struct timespec ts[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};

	(void)arg, (void)r;
	return res(utimensat(AT_FDCWD, path, ts, 0));
}

static int do_unlink(const char *path, const char *arg, const struct row *r)
{
	(void)arg, (void)r;
	return res(unlink(path));
}

static int do_rmdir(const char *path, const char *arg, const struct row *r)
{
	(void)arg, (void)r;
	return res(rmdir(path));
}

static int do_rename(const char *path, const char *arg, const struct row *r)
{
	(void)r;
	return res(rename(path, arg));
}

static int do_exchange(const char *path, const char *arg, const struct row *r)
{
	(void)r;
	return res(renameat2(AT_FDCWD, path, AT_FDCWD, arg, RENAME_EXCHANGE));
}

static int do_link(const char *path, const char *arg, const struct row *r)
{
	(void)r;
	return res(link(path, arg));
}

/* link() of what a symlink names, not of the symlink */
static int do_link_follow(const char *path, const char *arg, const struct row *r)
{
	(void)r;
	return res(linkat(AT_FDCWD, path, AT_FDCWD, arg, AT_SYMLINK_FOLLOW));
}

static int do_readlink(const char *path, const char *arg, const struct row *r)
{
	char buf[PATH_MAX];

	(void)arg, (void)r;
	return res(readlink(path, buf, sizeof(buf)));
}

/* a symlink named path, to "x" */
static int do_symlink(const char *path, const char *arg, const struct row *r)
{
	(void)arg, (void)r;
	return res(symlink("x", path));
}

static int do_mkfifo(const char *path, const char *arg, const struct row *r)
{
	(void)arg, (void)r;
	return res(mkfifo(path, 0600));
}

/* A unix stream socket connected to or bound at path (tu_request, testutil.h). */
static int do_connect(const char *path, const char *arg, const struct row *r)
{
	(void)arg, (void)r;
	return tu_request(&(const struct tu_req){.op = TU_REQ_CONNECT, .path = path});
}

static int do_bind(const char *path, const char *arg, const struct row *r)
{
	(void)arg, (void)r;
	return tu_request(&(const struct tu_req){.op = TU_REQ_BIND, .path = path});
}

static int do_access(const char *path, const char *arg, const struct row *r)
{
	(void)arg;
	return res(access(path, r->flags));
}

static int do_getxattr(const char *path, const char *arg, const struct row *r)
{
	char buf[4096];

	(void)r;
	return res(getxattr(path, arg, buf, sizeof(buf)));
}

static int do_setxattr(const char *path, const char *arg, const struct row *r)
{
	char val[64];

	if (strcmp(r->val, "pid:self") == 0)
		snprintf(val, sizeof(val), "pid:%d", (int)getpid());
	else
		snprintf(val, sizeof(val), "%s", r->val);
	return res(setxattr(path, arg, val, strlen(val), 0));
}

static int do_removexattr(const char *path, const char *arg, const struct row *r)
{
	(void)r;
	return res(removexattr(path, arg));
}

static int do_listxattr(const char *path, const char *arg, const struct row *r)
{
	char buf[4096];

	(void)arg, (void)r;
	return res(listxattr(path, buf, sizeof(buf)));
}

/* Whether the comma-separated names are all (want 1) or none (want 0) in the listing of dir. */
static int listing_has(const char *dir, const char *names, int want)
{
	char copy[256];
	char *save = NULL;

	snprintf(copy, sizeof(copy), "%s", names ? names : "");
	for (char *n = strtok_r(copy, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
		int got = tu_listed(dir, n);

		if (got < 0)
			return -got;
		if (got != want) {
			fprintf(stderr, "# uid %d: listing of %s %s %s\n", (int)getuid(), dir,
				got ? "shows" : "lacks", n);
			return SEC_WRONG;
		}
	}
	return 0;
}

/* readdir must show every name in arg and none in val */
static int do_listing(const char *path, const char *arg, const struct row *r)
{
	int e = listing_has(path, arg, 1);

	return e ? e : listing_has(path, r->val, 0);
}

/* getxattr of arg must work, and its text must have (want) or lack (!want) a line starting
 * with the row's val. */
static int text_line(const char *path, const char *arg, const struct row *r, bool want)
{
	char buf[8192];
	ssize_t n = getxattr(path, arg, buf, sizeof(buf) - 1);
	bool found = false;

	if (n < 0)
		return errno;
	buf[n] = '\0';
	for (char *line = buf; line && *line && !found;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		found = strncmp(line, r->val, strlen(r->val)) == 0;
	if (found == want)
		return 0;
	fprintf(stderr, "# uid %d: %s of %s %s \"%s\":\n%s", (int)getuid(), arg, path,
		want ? "lacks" : "shows", r->val, buf);
	return SEC_WRONG;
}

static int do_text_lacks(const char *path, const char *arg, const struct row *r)
{
	return text_line(path, arg, r, false);
}

static int do_text_has(const char *path, const char *arg, const struct row *r)
{
	return text_line(path, arg, r, true);
}

#define OP(n, arg_path) static const struct op OP_##n = {#n, do_##n, arg_path}
OP(stat, false);
OP(lstat, false);
OP(stat_nofill, false);
OP(statx_cached, false);
OP(open, false);
OP(opendir, false);
OP(mkdir, false);
OP(truncate, false);
OP(chmod, false);
OP(chown_me, false);
OP(chgrp_me, false);
OP(utime_set, false);
OP(utime_now, false);
OP(unlink, false);
OP(rmdir, false);
OP(rename, true);
OP(exchange, true);
OP(link, true);
OP(link_follow, true);
OP(readlink, false);
OP(symlink, false);
OP(mkfifo, false);
OP(connect, false);
OP(bind, false);
OP(access, false);
OP(getxattr, false);
OP(setxattr, false);
OP(removexattr, false);
OP(listxattr, false);
OP(listing, false);
OP(text_lacks, false);
OP(text_has, false);

/* ---- the tables ---- */

#define R(who_, op_, path_, expect_, ...)                                                          \
	{                                                                                          \
		.line = __LINE__, .who = (who_), .op = &OP_##op_, .path = (path_),                 \
		.expect = (expect_), __VA_ARGS__                                                   \
	}
/* An xattr row: name, value (for setxattr) */
#define X(who_, op_, path_, name_, expect_, ...)                                                   \
	R(who_, op_, path_, expect_, .arg = (name_), __VA_ARGS__)

/* Every xattr request of who on path, refused: get, set and remove of a user name and of each of
 * the daemon's names, and the listing (rows that share a table line, told apart by op and name) */
#define XATTRS_REFUSED(who_, path_)                                                                \
	X(who_, getxattr, path_, "user.x", EACCES), X(who_, getxattr, path_, HOLD, EACCES),        \
		X(who_, getxattr, path_, REFS, EACCES), X(who_, getxattr, path_, STAT, EACCES),    \
		X(who_, setxattr, path_, "user.x", EACCES, .val = "1"),                            \
		X(who_, setxattr, path_, HOLD, EACCES, .val = "pin"),                              \
		X(who_, setxattr, path_, REFS, EACCES, .val = "1"),                                \
		X(who_, setxattr, path_, STAT, EACCES, .val = "1"),                                \
		X(who_, removexattr, path_, "user.x", EACCES),                                     \
		X(who_, removexattr, path_, HOLD, EACCES),                                         \
		X(who_, removexattr, path_, REFS, EACCES),                                         \
		X(who_, removexattr, path_, STAT, EACCES), R(who_, listxattr, path_, EACCES)

/* Put on a row whose fix main does not have yet: its failure is reported but not counted, and
 * a pass says to remove the mark. */
#define KNOWN_FAIL .known_fail = true

#define A ACT_A
#define B ACT_B
#define ROOT ACT_ROOT

/* The pool root (""), by B (not its owner) and by root (its owner). */
static const struct row root_rows[] = {
	X(B, setxattr, "", HOLD, EPERM, .val = "pin"),
	X(B, setxattr, "", HOLD, EPERM, .val = "process"),
	X(B, setxattr, "", HOLD, EPERM, .val = "session"),
	X(B, setxattr, "", HOLD, EPERM, .val = "pid:self"),
	X(B, setxattr, "", HOLD, EPERM, .val = "cgroup"),
	X(B, removexattr, "", HOLD, EPERM),
	X(B, setxattr, "", "user.x", EPERM, .val = "1"),
	X(B, removexattr, "", "user.x", EPERM),
	X(B, text_lacks, "", STAT, 0, .val = "user 1001 "),
	X(B, getxattr, "", REFS, 0),
	R(B, listxattr, "", 0),
	R(B, chmod, "", EPERM),
	R(B, chown_me, "", EPERM),
	R(B, chgrp_me, "", EPERM),
	R(B, utime_set, "", EPERM),
	R(B, utime_now, "", EACCES),
	R(B, truncate, "", EISDIR),
	R(B, listing, "", 0, .arg = "b.dat,bdir", .val = "a.dat,adir"),
	R(B, stat, "", 0),
	R(B, link, "", EPERM, .arg = "x"),
	/* root owns the pool root: it may hold it (what such a hold keeps: test_root_hold) */
	X(ROOT, setxattr, "", HOLD, 0, .val = "pin"),
	X(ROOT, getxattr, "", REFS, 0),
	X(ROOT, setxattr, "", "user.x", 0, .val = "1"),
	R(ROOT, utime_set, "", 0),
	R(ROOT, utime_now, "", 0),
	R(ROOT, listing, "", 0, .val = "a.dat,adir,b.dat,bdir"),
	/* the shared root stays 01777 and root's, even for its owner (README's error table) */
	R(ROOT, chmod, "", EPERM),
	R(ROOT, chgrp_me, "", EPERM),
};

/* A's entries, path-based, by B and by root (not exempt): every call is refused. */
static const struct row refusal_rows[] = {
	R(B, stat, "a.dat", EACCES),
	R(B, lstat, "a.dat", EACCES),
	R(B, stat, "adir", EACCES),
	R(B, lstat, "adir", EACCES),
	R(B, stat, "adir/f", EACCES),
	R(B, lstat, "adir/f", EACCES),
	R(B, statx_cached, "a.dat", EACCES),
	R(B, statx_cached, "adir/f", EACCES),
	R(B, open, "a.dat", EACCES, .flags = O_RDONLY),
	R(B, open, "a.dat", EACCES, .flags = O_WRONLY),
	R(B, open, "a.dat", EACCES, .flags = O_RDWR),
	R(B, open, "a.dat", EACCES, .flags = O_RDWR | O_CREAT),
	R(B, open, "a.dat", EACCES, .flags = O_RDWR | O_CREAT | O_EXCL),
	R(B, opendir, "adir", EACCES),
	R(B, open, "adir/new", EACCES, .flags = O_RDWR | O_CREAT | O_EXCL),
	R(B, mkdir, "adir/new", EACCES),
	R(B, mkdir, "a.dat", EACCES),
	R(B, truncate, "a.dat", EACCES),
	R(B, chmod, "a.dat", EACCES),
	R(B, chmod, "adir", EACCES),
	R(B, chown_me, "a.dat", EACCES),
	R(B, chown_me, "adir", EACCES),
	R(B, utime_set, "a.dat", EACCES),
	R(B, utime_set, "adir", EACCES),
	R(B, utime_now, "a.dat", EACCES),
	R(B, utime_now, "adir", EACCES),
	R(B, unlink, "a.dat", EACCES),
	R(B, unlink, "adir/f", EACCES),
	R(B, rmdir, "adir", EACCES),
	R(B, rmdir, "adir/sub", EACCES),
	R(B, rename, "a.dat", EACCES, .arg = "x"),
	R(B, rename, "adir/f", EACCES, .arg = "x"),
	R(B, rename, "b.dat", EACCES, .arg = "a.dat"),
	R(B, rename, "b.dat", EACCES, .arg = "adir/b.dat"),
	R(B, rename, "bdir", EACCES, .arg = "adir/bdir"),
	R(B, exchange, "b.dat", EACCES, .arg = "a.dat"),
	XATTRS_REFUSED(B, "a.dat"),
	XATTRS_REFUSED(B, "adir"),
	/* a second name for A's file: its name cannot even be looked up */
	R(B, link, "a.dat", EACCES, .arg = "mine"),
	R(B, link, "adir/f", EACCES, .arg = "mine"),
	R(B, link, "b.dat", EACCES, .arg = "adir/b.dat"),
	R(B, link, "b.dat", EACCES, .arg = "a.dat"),
	R(B, access, "a.dat", EACCES, .flags = F_OK),
	R(B, access, "a.dat", EACCES, .flags = R_OK),
	/* names never leak */
	R(B, stat_nofill, "a.dat", EACCES),
	R(B, listing, "", 0, .arg = "b.dat,bdir", .val = "a.dat,adir"),
	X(B, text_lacks, "a.dat", STAT, EACCES, .val = "user 1001 "),
	X(B, text_lacks, "b.dat", STAT, 0, .val = "user 1001 "),
	/* root without root_exempt: the same refusals */
	R(ROOT, stat, "a.dat", EACCES),
	R(ROOT, stat, "adir/f", EACCES),
	R(ROOT, statx_cached, "a.dat", EACCES),
	R(ROOT, open, "a.dat", EACCES, .flags = O_RDONLY),
	R(ROOT, open, "a.dat", EACCES, .flags = O_RDWR | O_CREAT),
	R(ROOT, opendir, "adir", EACCES),
	R(ROOT, unlink, "a.dat", EACCES),
	R(ROOT, rmdir, "adir/sub", EACCES),
	R(ROOT, rename, "a.dat", EACCES, .arg = "x"),
	X(ROOT, setxattr, "a.dat", HOLD, EACCES, .val = "pin"),
	X(ROOT, removexattr, "adir", HOLD, EACCES),
	X(ROOT, getxattr, "a.dat", REFS, EACCES),
	R(ROOT, listing, "", 0, .val = "a.dat,adir,b.dat,bdir"),
};

/* Positive controls: the owners' own operations on their entries work (so the refusals above
 * are about the actor, not a broken scene). */
static const struct row owner_rows[] = {
	R(A, stat, "a.dat", 0),
	R(A, lstat, "adir/f", 0),
	R(A, statx_cached, "adir/f", 0),
	R(A, open, "a.dat", 0, .flags = O_RDONLY),
	R(A, open, "a.dat", 0, .flags = O_WRONLY),
	R(A, open, "a.dat", 0, .flags = O_RDWR),
	R(A, open, "a.dat", 0, .flags = O_RDWR | O_CREAT),
	/* the owner may learn that its name exists */
	R(A, open, "a.dat", EEXIST, .flags = O_RDWR | O_CREAT | O_EXCL),
	R(A, opendir, "adir", 0),
	R(A, open, "adir/new", 0, .flags = O_RDWR | O_CREAT | O_EXCL),
	R(A, mkdir, "adir/new", 0),
	R(A, truncate, "a.dat", 0, .flags = 100),
	R(A, chmod, "a.dat", 0),
	R(A, chmod, "adir", 0),
	R(A, chown_me, "a.dat", 0),
	R(A, chgrp_me, "adir", 0),
	R(A, utime_set, "a.dat", 0),
	R(A, utime_set, "adir", 0),
	R(A, utime_now, "a.dat", 0),
	R(A, utime_now, "adir", 0),
	R(A, unlink, "a.dat", 0),
	R(A, unlink, "adir/f", 0),
	R(A, rmdir, "adir/sub", 0),
	R(A, rmdir, "adir", ENOTEMPTY),
	R(A, rename, "a.dat", 0, .arg = "x"),
	R(A, rename, "adir/f", 0, .arg = "x"),
	R(A, rename, "a.dat", 0, .arg = "adir/a.dat"),
	R(A, exchange, "a.dat", 0, .arg = "adir/f"),
	R(A, link, "a.dat", 0, .arg = "mine"),
	R(A, link, "a.dat", 0, .arg = "adir/mine"),
	R(A, link, "adir", EPERM, .arg = "mine"),
	R(A, access, "a.dat", 0, .flags = F_OK),
	R(A, access, "a.dat", 0, .flags = R_OK | W_OK),
	X(A, getxattr, "a.dat", "user.x", 0),
	X(A, getxattr, "adir", REFS, 0),
	X(A, getxattr, "a.dat", STAT, 0),
	X(A, setxattr, "a.dat", "user.x", 0, .val = "2"),
	X(A, setxattr, "adir", HOLD, 0, .val = "session"),
	X(A, removexattr, "adir", "user.x", 0),
	X(A, removexattr, "a.dat", HOLD, 0),
	R(A, listxattr, "adir", 0),
	R(A, listing, "", 0, .arg = "a.dat,adir", .val = "b.dat,bdir"),
	R(A, listing, "adir", 0, .arg = "f,sub"),
	X(A, text_lacks, "", STAT, 0, .val = "user 1002 "),
	/* B and root on their own entries: the refusals are not a broken uid switch */
	R(B, stat, "b.dat", 0),
	R(B, open, "bdir/f", 0, .flags = O_RDWR),
	X(B, getxattr, "b.dat", REFS, 0),
	R(B, listing, "bdir", 0, .arg = "f,sub"),
	R(B, mkdir, "bnew", 0),
	R(ROOT, open, "r.dat", 0, .flags = O_RDWR | O_CREAT | O_EXCL),
	R(ROOT, mkdir, "rdir", 0),
};

/* The entry kinds (test_kinds_*: a pool with OPTS_KINDS). Each of A and B also has, in the
 * shared root, x.lnk -> x.dat, a FIFO x.fifo, a socket x.sock (nobody listening), x.hl (a second
 * name of x.dat) and x.to_y -> y.dat (the other user's file); in xdir, lnk -> ../x.dat and hl
 * (a third name of x.dat). B and root (not exempt) reach none of A's by any name, follow none,
 * open, connect to or link none, remove, rename or replace none of A's names, and see none of
 * them listed. */
static const struct row kind_rows[] = {
	/* symlinks: not looked at, read or followed */
	R(B, lstat, "a.lnk", EACCES),
	R(B, stat, "a.lnk", EACCES),
	R(B, stat_nofill, "a.lnk", EACCES),
	R(B, readlink, "a.lnk", EACCES),
	R(B, open, "a.lnk", EACCES, .flags = O_RDONLY),
	R(B, open, "a.lnk", EACCES, .flags = O_RDONLY | O_NOFOLLOW),
	R(B, chmod, "a.lnk", EACCES),
	R(B, lstat, "adir/lnk", EACCES),
	R(B, readlink, "adir/lnk", EACCES),
	/* B's own symlink to A's file leads nowhere */
	R(B, stat, "b.to_a", EACCES),
	R(B, open, "b.to_a", EACCES, .flags = O_RDONLY),
	R(B, link_follow, "b.to_a", EACCES, .arg = "mine"),
	/* FIFOs */
	R(B, lstat, "a.fifo", EACCES),
	R(B, open, "a.fifo", EACCES, .flags = O_RDONLY | O_NONBLOCK),
	R(B, open, "a.fifo", EACCES, .flags = O_WRONLY | O_NONBLOCK),
	R(B, open, "a.fifo", EACCES, .flags = O_RDWR | O_CREAT),
	/* sockets */
	R(B, lstat, "a.sock", EACCES),
	R(B, connect, "a.sock", EACCES),
	/* no new name for A's entries, of any kind, by any of their names */
	R(B, link, "a.lnk", EACCES, .arg = "mine"),
	R(B, link_follow, "a.lnk", EACCES, .arg = "mine"),
	R(B, link, "a.fifo", EACCES, .arg = "mine"),
	R(B, link, "a.sock", EACCES, .arg = "mine"),
	R(B, link, "a.hl", EACCES, .arg = "mine"),
	R(B, link, "adir/hl", EACCES, .arg = "mine"),
	R(B, link, "a.dat", EACCES, .arg = "bdir/mine"),
	/* A's names: not removed, renamed, replaced or taken */
	R(B, unlink, "a.hl", EACCES),
	R(B, unlink, "adir/hl", EACCES),
	R(B, unlink, "a.lnk", EACCES),
	R(B, unlink, "a.fifo", EACCES),
	R(B, unlink, "a.sock", EACCES),
	R(B, rename, "a.hl", EACCES, .arg = "x"),
	R(B, rename, "a.lnk", EACCES, .arg = "x"),
	R(B, rename, "a.fifo", EACCES, .arg = "bdir/x"),
	R(B, rename, "a.sock", EACCES, .arg = "x"),
	R(B, rename, "b.dat", EACCES, .arg = "a.hl"),
	R(B, rename, "b.lnk", EACCES, .arg = "a.lnk"),
	R(B, exchange, "b.hl", EACCES, .arg = "a.hl"),
	R(B, link, "b.dat", EACCES, .arg = "a.hl"),
	R(B, link, "b.lnk", EACCES, .arg = "adir/lnk2"),
	R(B, symlink, "a.lnk", EACCES),
	R(B, symlink, "adir/new", EACCES),
	R(B, mkfifo, "a.fifo", EACCES),
	R(B, mkfifo, "adir/new", EACCES),
	R(B, bind, "a.sock", EACCES),
	R(B, bind, "adir/new", EACCES),
	/* A's second name is A's file */
	X(B, getxattr, "a.hl", REFS, EACCES),
	X(B, setxattr, "a.hl", HOLD, EACCES, .val = "pin"),
	R(B, truncate, "a.hl", EACCES),
	/* listings */
	R(B, listing, "", 0, .arg = "b.lnk,b.fifo,b.sock,b.hl,b.to_a",
	  .val = "a.lnk,a.fifo,a.sock,a.hl,a.to_b"),
	/* root, not exempt: the same */
	R(ROOT, lstat, "a.lnk", EACCES),
	R(ROOT, readlink, "a.lnk", EACCES),
	R(ROOT, stat, "a.lnk", EACCES),
	R(ROOT, open, "a.fifo", EACCES, .flags = O_RDONLY | O_NONBLOCK),
	R(ROOT, connect, "a.sock", EACCES),
	R(ROOT, link, "a.hl", EACCES, .arg = "r.new"),
	R(ROOT, link, "a.lnk", EACCES, .arg = "r.new"),
	R(ROOT, unlink, "a.hl", EACCES),
	R(ROOT, unlink, "a.sock", EACCES),
	R(ROOT, rename, "a.lnk", EACCES, .arg = "r.new"),
	R(ROOT, listing, "", 0,
	  .val = "a.lnk,a.fifo,a.sock,a.hl,a.to_b,b.lnk,b.fifo,b.sock,b.hl,b.to_a"),
};

/* The owners on their own entry kinds (so the refusals above are about the actor). */
static const struct row kind_owner_rows[] = {
	R(A, lstat, "a.lnk", 0),
	R(A, readlink, "a.lnk", 0),
	R(A, stat, "a.lnk", 0),
	R(A, open, "a.lnk", 0, .flags = O_RDONLY),
	R(A, stat, "adir/lnk", 0),
	R(A, stat, "a.to_b", EACCES), /* A's own symlink to B's file */
	R(A, open, "a.fifo", 0, .flags = O_RDONLY | O_NONBLOCK),
	R(A, connect, "a.sock", ECONNREFUSED), /* found, nobody listening */
	R(A, link, "a.lnk", 0, .arg = "mine"),
	R(A, link_follow, "a.lnk", 0, .arg = "mine"),
	R(A, link, "a.fifo", 0, .arg = "adir/mine"),
	R(A, link, "a.sock", 0, .arg = "mine"),
	R(A, link, "a.hl", EEXIST, .arg = "a.dat"),
	R(A, unlink, "a.hl", 0),
	R(A, unlink, "a.lnk", 0),
	R(A, unlink, "a.fifo", 0),
	R(A, unlink, "a.sock", 0),
	R(A, rename, "a.hl", 0, .arg = "adir/hl2"),
	R(A, rename, "a.lnk", 0, .arg = "adir/lnk2"),
	/* onto another name of the same entry: nothing happens, both stay */
	R(A, rename, "a.hl", 0, .arg = "a.dat"),
	R(A, symlink, "adir/new", 0),
	R(A, mkfifo, "adir/new", 0),
	R(A, bind, "adir/new", 0),
	X(A, getxattr, "a.hl", REFS, 0),
	X(A, text_has, "a.hl", REFS, 0, .val = "names 3"),
	/* the kernel allows user.* attributes on files and folders only */
	X(A, setxattr, "a.fifo", HOLD, EPERM, .val = "pin"),
	X(A, getxattr, "a.fifo", REFS, ENODATA),
	R(A, listing, "", 0, .arg = "a.lnk,a.fifo,a.sock,a.hl,a.to_b",
	  .val = "b.lnk,b.fifo,b.sock,b.hl,b.to_a"),
	R(A, listing, "adir", 0, .arg = "lnk,hl"),
	R(B, readlink, "b.lnk", 0),
	R(B, connect, "b.sock", ECONNREFUSED),
	R(ROOT, symlink, "r.lnk", 0),
	R(ROOT, mkfifo, "r.fifo", 0),
	R(ROOT, bind, "r.sock", 0),
};

#undef A
#undef B
#undef ROOT

/* ---- scenes ---- */

/* What a child of any actor needs: the mount and the row. */
struct job {
	const char *mnt;
	const struct row *r;
};

static int abspath(char *buf, size_t len, const char *mnt, const char *rel)
{
	int n = rel && rel[0] ? snprintf(buf, len, "%s/%s", mnt, rel)
			      : snprintf(buf, len, "%s", mnt);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (type == FTW_DP ? rmdir(path) : unlink(path))
		fprintf(stderr, "# uid %d: cannot remove %s: %s\n", (int)getuid(), path,
			errname(errno));
	return 0; /* go on: what is left is found by the listing after */
}

/* Remove every entry of the caller's in the pool root, and its hold on the root; then the
 * caller must see an empty root. */
static int clear_own(const char *mnt)
{
	DIR *d;
	struct dirent *e;
	int left = 0;

	/* what a row may have put on the pool root (only its owner can, but a wrong row...) */
	if (removexattr(mnt, HOLD) == -1 && errno != ENODATA && errno != EPERM)
		fprintf(stderr, "# uid %d: removexattr(root hold): %s\n", (int)getuid(),
			errname(errno));
	if (removexattr(mnt, "user.x") == -1 && errno != ENODATA && errno != EPERM)
		fprintf(stderr, "# uid %d: removexattr(root user.x): %s\n", (int)getuid(),
			errname(errno));
	for (int pass = 0; pass < 2; pass++) {
		d = opendir(mnt);
		if (!d)
			return SEC_DIRTY;
		left = 0;
		while ((e = readdir(d))) {
			char p[PATH_MAX];

			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			left++;
			if (pass == 0 && abspath(p, sizeof(p), mnt, e->d_name) == 0)
				nftw(p, remove_one, 8, FTW_DEPTH | FTW_PHYS);
		}
		closedir(d);
	}
	return left ? SEC_DIRTY : 0;
}

static int clear_child(void *v)
{
	return clear_own(v);
}

/* The caller's part of the scene ("a" for A, "b" for B): x.dat with 4 KiB, xdir/f (closed),
 * xdir/sub, user.x on x.dat and xdir, pins on x.dat and xdir (autohold=none: closed and unheld
 * entries go at once). */
static int make_own(const char *mnt, const char *x)
{
	char dat[PATH_MAX], dir[PATH_MAX], f[PATH_MAX], sub[PATH_MAX], buf[4096];
	int fd;

	snprintf(dat, sizeof(dat), "%s/%s.dat", mnt, x);
	snprintf(dir, sizeof(dir), "%s/%sdir", mnt, x);
	snprintf(f, sizeof(f), "%s/%sdir/f", mnt, x);
	snprintf(sub, sizeof(sub), "%s/%sdir/sub", mnt, x);
	pat_fill(buf, sizeof(buf), 1, 0);
	fd = open(dat, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHILD_CHECK(fd >= 0, 1);
	CHILD_CHECK(pwrite_all(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf), 2);
	CHILD_CHECK(setxattr(dat, HOLD, "pin", 3, 0) == 0, 3);
	CHILD_CHECK(setxattr(dat, "user.x", "1", 1, 0) == 0, 4);
	CHILD_CHECK(close(fd) == 0, 5);
	CHILD_CHECK(mkdir(dir, 0700) == 0, 6);
	CHILD_CHECK(setxattr(dir, HOLD, "pin", 3, 0) == 0, 7);
	CHILD_CHECK(setxattr(dir, "user.x", "1", 1, 0) == 0, 8);
	fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHILD_CHECK(fd >= 0, 9);
	CHILD_CHECK(pwrite_all(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf), 10);
	CHILD_CHECK(close(fd) == 0, 11);
	CHILD_CHECK(mkdir(sub, 0700) == 0, 12);
	return 0;
}

/* The entry kinds of the caller's part of the scene ("a" for A, "b" for B, y the other one):
 * x.lnk -> x.dat, xdir/lnk -> ../x.dat, x.fifo, x.sock, x.hl and xdir/hl (names of x.dat), and
 * x.to_y -> y.dat. */
static int make_kinds(const char *mnt, const char *x, const char *y)
{
	char p[PATH_MAX], q[PATH_MAX], t[64];
	int s;

#define AT_(buf, fmt, ...) snprintf((buf), sizeof(buf), "%s/" fmt, mnt, __VA_ARGS__)
	AT_(p, "%s.lnk", x);
	snprintf(t, sizeof(t), "%s.dat", x);
	CHILD_CHECK(symlink(t, p) == 0, 21);
	AT_(p, "%sdir/lnk", x);
	snprintf(t, sizeof(t), "../%s.dat", x);
	CHILD_CHECK(symlink(t, p) == 0, 22);
	AT_(p, "%s.fifo", x);
	CHILD_CHECK(mkfifo(p, 0600) == 0, 23);
	AT_(p, "%s.sock", x);
	s = tu_unix_socket(p, TU_SOCK_BIND);
	CHILD_CHECK(s >= 0, 24);
	close(s);
	AT_(p, "%s.dat", x);
	AT_(q, "%s.hl", x);
	CHILD_CHECK(link(p, q) == 0, 27);
	AT_(q, "%sdir/hl", x);
	CHILD_CHECK(link(p, q) == 0, 28);
	AT_(p, "%s.to_%s", x, y);
	snprintf(t, sizeof(t), "%s.dat", y);
	CHILD_CHECK(symlink(t, p) == 0, 29);
#undef AT_
	return 0;
}

/* What a scene child is told. */
struct scene_arg {
	const char *mnt;
	bool kinds;
};

static int scene_child(void *v)
{
	const struct scene_arg *a = v;
	bool is_a = getuid() == UID_A;
	int r = clear_own(a->mnt);

	if (r == 0)
		r = make_own(a->mnt, is_a ? "a" : "b");
	if (r == 0 && a->kinds)
		r = make_kinds(a->mnt, is_a ? "a" : "b", is_a ? "b" : "a");
	return r;
}

/* Clear and make A's and B's parts of the scene (with their entry kinds on an OPTS_KINDS pool);
 * a pool a wrong row left dirty is replaced by a fresh one. 0, or the first failing child's
 * result. t is the tu_fixture at the start of a struct sec_fixture (every test's state). */
static int scene(struct tu_fixture *t)
{
	const struct sec_fixture *sf = (const struct sec_fixture *)t;
	struct scene_arg a = {t->p.mnt, sf->kinds};
	int r = 0;

	for (int attempt = 0; attempt < 2; attempt++) {
		r = run_as_user(0, 0, clear_child, t->p.mnt);
		if (r == 0)
			r = run_as_user(UID_A, GID_A, scene_child, &a);
		if (r == 0)
			r = run_as_user(UID_B, GID_B, scene_child, &a);
		if (r != SEC_DIRTY)
			return r;
		fprintf(stderr, "# a row left the pool dirty: mounting a fresh pool\n");
		if (tu_unmount(t) < 0 || tu_mount(t, sf->kinds ? OPTS_KINDS : OPTS) < 0)
			return -EIO;
		a.mnt = t->p.mnt;
	}
	return r;
}

static int clear_all(const char *mnt)
{
	int r = run_as_user(UID_A, GID_A, clear_child, (void *)mnt);

	if (r == 0)
		r = run_as_user(UID_B, GID_B, clear_child, (void *)mnt);
	if (r == 0)
		r = run_as_user(0, 0, clear_child, (void *)mnt);
	return r;
}

/* ---- running rows ---- */

/* A's walk down rel (warm runs): stat every prefix, open and close the target, list its folder
 * and the target itself if it is one. Failures are expected (B's names, new names) and ignored:
 * the point is what the kernel caches on the way. */
static void walk(const char *mnt, const char *rel)
{
	char p[PATH_MAX], parent[PATH_MAX];
	struct stat st;
	ssize_t linklen;
	int fd;

	if (abspath(p, sizeof(p), mnt, rel) < 0)
		return;
	for (char *s = rel[0] ? strchr(p + strlen(mnt) + 1, '/') : NULL; s;
	     s = strchr(s + 1, '/')) {
		*s = '\0';
		stat(p, &st);
		*s = '/';
	}
	stat(p, &st);
	lstat(p, &st);
	linklen = readlink(p, parent, sizeof(parent)); /* a symlink's target, cached */
	(void)linklen;
	fd = open(p, O_RDONLY | O_NONBLOCK);
	if (fd >= 0)
		close(fd);
	snprintf(parent, sizeof(parent), "%s", p);
	if (strlen(parent) > strlen(mnt))
		*strrchr(parent, '/') = '\0';
	tu_listed(parent, ".");
	if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
		tu_listed(p, ".");
}

static int warm_child(void *v)
{
	const struct job *j = v;

	walk(j->mnt, j->r->path);
	if (j->r->op->arg_is_path)
		walk(j->mnt, j->r->arg);
	return 0;
}

static int row_child(void *v)
{
	const struct job *j = v;
	char path[PATH_MAX], arg[PATH_MAX];

	if (abspath(path, sizeof(path), j->mnt, j->r->path) < 0)
		return ENAMETOOLONG;
	if (j->r->op->arg_is_path) {
		if (abspath(arg, sizeof(arg), j->mnt, j->r->arg) < 0)
			return ENAMETOOLONG;
		return j->r->op->fn(path, arg, j->r);
	}
	return j->r->op->fn(path, j->r->arg, j->r);
}

static void describe(char *buf, size_t len, const struct row *r)
{
	snprintf(buf, len, "line %d: %s %s(\"%s\"%s%s%s%s%s) flags 0x%x want %s%s%s", r->line,
		 actors[r->who].name, r->op->name, r->path, r->arg ? ", \"" : "",
		 r->arg ? r->arg : "", r->arg ? "\"" : "", r->val ? " = " : "",
		 r->val ? r->val : "", (unsigned)r->flags, errname(r->expect),
		 r->also ? " or " : "", r->also ? errname(r->also) : "");
}

/* One row on a fresh scene: 1 if it failed (said on stderr), else 0. */
static int run_row(struct tu_fixture *t, const struct row *r, bool warm, const char *mode)
{
	struct job j = {.r = r};
	char what[512];
	int got = scene(t);

	describe(what, sizeof(what), r);
	j.mnt = t->p.mnt;
	/* A broken scene or walk fails the row whatever it expects (a child's step numbers are
	 * small numbers that could pass for an errno). */
	if (got != 0) {
		fprintf(stderr, "# FAIL %s %s: the scene failed (%s)\n", mode, what,
			result_name(got));
		return 1;
	}
	if (warm && r->who != ACT_A) {
		got = run_as_user(UID_A, GID_A, warm_child, &j);
		if (got != 0) {
			fprintf(stderr, "# FAIL %s %s: A's walk failed (%s)\n", mode, what,
				result_name(got));
			return 1;
		}
	}
	got = run_as_user(actors[r->who].uid, actors[r->who].gid, row_child, &j);
	if (got == r->expect || (r->also && got == r->also)) {
		if (r->known_fail)
			fprintf(stderr, "# %s %s: KNOWN_FAIL row passes now: flip it\n", mode,
				what);
		return 0;
	}
	fprintf(stderr, "# %s%s %s: got %s\n", r->known_fail ? "known failure, " : "FAIL ", mode,
		what, result_name(got));
	return r->known_fail ? 0 : 1;
}

static void run_table(void **state, const struct row *rows, size_t n, bool warm)
{
	struct tu_fixture *t = *state;
	const char *mode = warm ? "warm" : "cold";
	int failed = 0, first = -1;
	char what[512];

	tu_pool(state);
	for (size_t i = 0; i < n; i++)
		if (run_row(t, &rows[i], warm, mode) && failed++ == 0)
			first = (int)i;
	CHECK_0(clear_all(t->p.mnt));
	if (failed) {
		describe(what, sizeof(what), &rows[first]);
		tu_dump_log();
		fail_msg("%s: %d of %zu rows failed (see stderr), the first %s", mode, failed, n,
			 what);
	}
	tu_backing_back_to_base(state);
}

/* A test that runs one table, with cold or warm caches. */
#define TABLE_TEST(name, rows, warm)                                                               \
	static void name(void **state)                                                             \
	{                                                                                          \
		run_table(state, rows, ARRAY_SIZE(rows), warm);                                    \
	}

TABLE_TEST(test_pool_root_cold, root_rows, false)
TABLE_TEST(test_pool_root_warm, root_rows, true)
TABLE_TEST(test_refusals_cold, refusal_rows, false)
TABLE_TEST(test_refusals_warm, refusal_rows, true)
TABLE_TEST(test_owner_controls, owner_rows, false)
TABLE_TEST(test_kinds_cold, kind_rows, false)
TABLE_TEST(test_kinds_warm, kind_rows, true)
TABLE_TEST(test_kind_owner_controls, kind_owner_rows, false)

/* ---- a root hold on the pool root ---- */

/* As A: make a file, close it, wait for it to go (nothing holds it: root's hold on the pool
 * root keeps root's entries only). */
static int a_file_goes(void *v)
{
	const char *path = v;
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	int r;

	CHILD_CHECK(fd >= 0, 1);
	CHILD_CHECK(close(fd) == 0, 2);
	r = pool_wait_gone(path, GONE_MS);
	if (r != 0)
		fprintf(stderr, "# A's file %s under root's pin on the pool root: %s\n", path,
			errname(-r));
	return r ? 3 : 0;
}

static int b_pins_root(void *v)
{
	return res(setxattr(v, HOLD, "pin", 3, 0));
}

/* Poll until path has no open handle and no mapping left, so that "still there" is a fact, not
 * a race with the release. */
static void wait_settled(const char *path)
{
	long long deadline = pool_now_ms() + GONE_MS;
	char buf[4096];

	for (;;) {
		ssize_t n = getxattr(path, REFS, buf, sizeof(buf) - 1);

		if (n < 0)
			fail_msg("%s: getxattr(refs): %s", path, errname(errno));
		buf[n > 0 ? n : 0] = '\0';
		if (strstr(buf, "opens 0\n") && strstr(buf, "mapped no\n"))
			return;
		if (pool_now_ms() > deadline)
			fail_msg("%s: still in use after %d ms:\n%s", path, GONE_MS, buf);
		pool_sleep_ms(2);
	}
}

static void make_closed(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);

	CHECK(fd);
	CHECK(write(fd, "root", 4));
	CHECK(close(fd));
}

static void test_root_hold(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	char rf[PATH_MAX], af[PATH_MAX], rf2[PATH_MAX];
	int r;

	tu_paths(p, "root.dat", rf, "a.dat", af, "root2.dat", rf2);
	/* root (the pool root's owner) pins the pool root: root's closed file stays, A's goes */
	CHECK(setxattr(p->mnt, HOLD, "pin", 3, 0));
	make_closed(rf);
	r = run_as_user(UID_A, GID_A, a_file_goes, af);
	if (r != 0)
		fail_msg("A's closed file under root's pin on the pool root: step %d", r);
	wait_settled(rf);
	ASSERT_EXISTS(rf);
	/* dropping the hold lets root's file go */
	CHECK(removexattr(p->mnt, HOLD));
	ASSERT_GONE(rf);

	/* B's refused pin on the pool root keeps nothing */
	r = run_as_user(UID_B, GID_B, b_pins_root, p->mnt);
	if (r != EPERM)
		fail_msg("B's pin on the pool root gave %s, want EPERM", result_name(r));
	make_closed(rf2);
	ASSERT_GONE(rf2);
	tu_backing_back_to_base(state);
}

/* ---- descriptors A passes to B ---- */

#define MARK_PWRITE "B-pwrite"
#define MARK_MMAP "B-mmap"
#define OFF_PWRITE 512
#define OFF_MMAP 1024

struct fdrow {
	int line;
	bool dir; /* on the folder's fd (adir), else on the file's (a.dat) */
	const char *name;
	int (*fn)(int fd);
	int expect;
	bool known_fail; /* as in struct row */
};

static int fd_read(int fd)
{
	char buf[4096];
	ssize_t n = pread_all(fd, buf, sizeof(buf), 0);

	if (n < 0)
		return errno;
	if (n != (ssize_t)sizeof(buf) || pat_check(buf, 64, 1, 0) != -1) {
		fprintf(stderr, "# B's read of the passed fd: %zd bytes or wrong data\n", n);
		return SEC_WRONG;
	}
	return 0;
}

static int fd_pwrite(int fd)
{
	return pwrite_all(fd, MARK_PWRITE, strlen(MARK_PWRITE), OFF_PWRITE) < 0 ? errno : 0;
}

static int fd_fstat(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == -1)
		return errno;
	if (st.st_uid != UID_A) {
		fprintf(stderr, "# fstat of A's passed fd: uid %d\n", (int)st.st_uid);
		return SEC_WRONG;
	}
	return 0;
}

static int fd_mmap(int fd)
{
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int r = 0;

	if (m == MAP_FAILED)
		return errno;
	if (pat_check(m, 64, 1, 0) != -1) {
		fprintf(stderr, "# B's mapping of A's file reads wrong data\n");
		r = SEC_WRONG;
	}
	memcpy(m + OFF_MMAP, MARK_MMAP, sizeof(MARK_MMAP)); /* with its NUL */
	if (msync(m, 4096, MS_SYNC) == -1)
		r = errno;
	munmap(m, 4096);
	return r;
}

static int fd_size(int fd, off_t size)
{
	struct stat st;

	if (ftruncate(fd, size) == -1)
		return errno;
	if (fstat(fd, &st) == -1)
		return errno;
	return st.st_size == size ? 0 : SEC_WRONG;
}

static int fd_grow(int fd)
{
	return fd_size(fd, 8192);
}

static int fd_shrink(int fd)
{
	return fd_size(fd, 4096);
}

static int fd_fchmod(int fd)
{
	return res(fchmod(fd, 0600));
}

static int fd_fchown(int fd)
{
	return res(fchown(fd, getuid(), (gid_t)-1));
}

static int fd_futimens_set(int fd)
{
	struct timespec ts[2] = {{978307200, 0}, {978307200, 0}};

	return res(futimens(fd, ts));
}

static int fd_futimens_now(int fd)
{
	struct timespec ts[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};

	return res(futimens(fd, ts));
}

static int fd_fgetxattr(int fd)
{
	char buf[64];

	return res(fgetxattr(fd, "user.x", buf, sizeof(buf)));
}

static int fd_fsetxattr(int fd)
{
	return res(fsetxattr(fd, "user.x", "B", 1, 0));
}

static int fd_flistxattr(int fd)
{
	char buf[256];

	return res(flistxattr(fd, buf, sizeof(buf)));
}

static int fd_fremovexattr(int fd)
{
	return res(fremovexattr(fd, "user.x"));
}

/* getdents on A's folder fd lists what A sees there */
static int fd_getdents(int fd)
{
	int dup_fd = dup(fd);
	DIR *d;
	struct dirent *e;
	int seen = 0;

	if (dup_fd == -1)
		return errno;
	d = fdopendir(dup_fd);
	if (!d) {
		close(dup_fd);
		return errno;
	}
	rewinddir(d);
	errno = 0;
	while ((e = readdir(d)))
		seen |= strcmp(e->d_name, "f") == 0 ? 1 : strcmp(e->d_name, "sub") == 0 ? 2 : 0;
	if (errno) {
		int err = errno;

		closedir(d);
		return err;
	}
	closedir(d);
	return seen == 3 ? 0 : SEC_WRONG;
}

static int fd_openat_f(int fd)
{
	int f = openat(fd, "f", O_RDONLY);

	if (f == -1)
		return errno;
	close(f);
	return 0;
}

#define FDR(dir_, fn_, expect_, ...)                                                               \
	{                                                                                          \
		.line = __LINE__, .dir = (dir_), .name = #fn_, .fn = fn_, .expect = (expect_),     \
		__VA_ARGS__                                                                        \
	}
/* In this order: the writes come before the size changes, the shrink back to 4 KiB keeps them. */
static const struct fdrow fd_rows[] = {
	FDR(false, fd_read, 0),
	FDR(false, fd_pwrite, 0),
	FDR(false, fd_fstat, 0),
	FDR(false, fd_mmap, 0),
	FDR(false, fd_grow, 0),
	FDR(false, fd_shrink, 0),
	FDR(false, fd_fchmod, EPERM),
	FDR(false, fd_fchown, EPERM),
	FDR(false, fd_futimens_set, EPERM),
	FDR(false, fd_futimens_now, EACCES),
	FDR(false, fd_fgetxattr, EACCES),
	FDR(false, fd_fsetxattr, EACCES),
	FDR(false, fd_flistxattr, EACCES),
	FDR(false, fd_fremovexattr, EACCES),
	FDR(true, fd_fstat, 0),
	FDR(true, fd_getdents, 0),
	FDR(true, fd_openat_f, EACCES),
};

struct pass {
	const char *mnt;
	int sock;
	int *results; /* shared with B's process: one per fd row */
};

/* As A: open a.dat O_RDWR and adir as a folder, send both to B, close ours. */
static int a_sends(void *v)
{
	const struct pass *ps = v;
	char dat[PATH_MAX], dir[PATH_MAX];
	int fds[2];

	snprintf(dat, sizeof(dat), "%s/a.dat", ps->mnt);
	snprintf(dir, sizeof(dir), "%s/adir", ps->mnt);
	fds[0] = open(dat, O_RDWR);
	CHILD_CHECK(fds[0] >= 0, 1);
	fds[1] = open(dir, O_RDONLY | O_DIRECTORY);
	CHILD_CHECK(fds[1] >= 0, 2);
	CHILD_CHECK(sec_send_fds(ps->sock, fds, 2) == 0, 3);
	close(fds[0]);
	close(fds[1]);
	return 0;
}

/* As B: receive the two fds and run every fd row on them. */
static int b_uses(void *v)
{
	const struct pass *ps = v;
	int fds[2];

	CHILD_CHECK(sec_recv_fds(ps->sock, fds, 2) == 0, 1);
	for (size_t i = 0; i < ARRAY_SIZE(fd_rows); i++)
		ps->results[i] = fd_rows[i].fn(fds[fd_rows[i].dir ? 1 : 0]);
	close(fds[0]);
	close(fds[1]);
	return 0;
}

/* As A: B's pwrite and mmap writes are in a.dat, which is 4 KiB again. */
static int a_sees_b(void *v)
{
	const char *path = v;
	char buf[4096];
	struct stat st;
	int fd = open(path, O_RDONLY);

	CHILD_CHECK(fd >= 0, 1);
	CHILD_CHECK(fstat(fd, &st) == 0 && st.st_size == 4096, 2);
	CHILD_CHECK(pread_all(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf), 3);
	CHILD_CHECK(memcmp(buf + OFF_PWRITE, MARK_PWRITE, strlen(MARK_PWRITE)) == 0, 4);
	CHILD_CHECK(memcmp(buf + OFF_MMAP, MARK_MMAP, strlen(MARK_MMAP)) == 0, 5);
	close(fd);
	return 0;
}

static void test_passed_fds(void **state)
{
	struct tu_fixture *t = *state;
	struct pass ps;
	int sv[2], failed = 0, r;
	pid_t a;
	int *results;

	tu_pool(state);
	CHECK_0(scene(t));
	PATH(dat, &t->p, "a.dat");
	results = mmap(NULL, sizeof(int) * ARRAY_SIZE(fd_rows), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(results != MAP_FAILED);
	for (size_t i = 0; i < ARRAY_SIZE(fd_rows); i++)
		results[i] = -ENOEXEC; /* "did not run" */
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ps = (struct pass){.mnt = t->p.mnt, .sock = sv[0], .results = results};
	a = run_as_spawn(UID_A, GID_A, a_sends, &ps);
	close(sv[0]); /* only A has that end now: if A dies, B reads EOF */
	if (a > 0)
		tu_track(a);
	ps.sock = sv[1];
	r = a > 0 ? run_as_user(UID_B, GID_B, b_uses, &ps) : (int)a;
	close(sv[1]);
	if (a > 0) {
		int ra = run_as_reap(a);

		tu_forget(a);
		if (ra != 0)
			fail_msg("A could not pass its fds: step %s", result_name(ra));
	}
	if (r != 0)
		fail_msg("B's process with the passed fds: %s", result_name(r));
	for (size_t i = 0; i < ARRAY_SIZE(fd_rows); i++) {
		const struct fdrow *f = &fd_rows[i];
		bool ok = results[i] == f->expect;

		if (ok && f->known_fail)
			fprintf(stderr, "# fd row line %d: KNOWN_FAIL row passes now: flip it\n",
				f->line);
		if (ok)
			continue;
		fprintf(stderr, "# %s fd row line %d: B %s on A's passed %s fd gave %s, want %s\n",
			f->known_fail ? "known failure," : "FAIL", f->line, f->name,
			f->dir ? "folder" : "file", result_name(results[i]), errname(f->expect));
		failed += !f->known_fail;
	}
	munmap(results, sizeof(int) * ARRAY_SIZE(fd_rows));
	r = run_as_user(UID_A, GID_A, a_sees_b, dat);
	if (r != 0) {
		fprintf(stderr,
			"# FAIL: A does not see B's writes through the passed fd (step %s)\n",
			result_name(r));
		failed++;
	}
	CHECK_0(clear_all(t->p.mnt));
	if (failed)
		fail_msg("%d of %zu fd checks failed (see stderr)", failed,
			 ARRAY_SIZE(fd_rows) + 1);
	tu_backing_back_to_base(state);
}

/* ---- the runner itself (no pool) ---- */

/* 0 if the process runs as ids[0]/ids[1] (real, effective, saved) with no supplementary group */
static int has_ids(void *v)
{
	const unsigned *ids = v;
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (getresuid(&ru, &eu, &su) == -1 || getresgid(&rg, &eg, &sg) == -1)
		return 1;
	if (ru != ids[0] || eu != ids[0] || su != ids[0])
		return 2;
	if (rg != ids[1] || eg != ids[1] || sg != ids[1])
		return 3;
	return getgroups(0, NULL) == 0 ? 0 : 4;
}

static void same_file(int a, int b)
{
	struct stat sa, sb;

	CHECK(fstat(a, &sa));
	CHECK(fstat(b, &sb));
	assert_true(sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

static void test_runner(void **state)
{
	unsigned a[2] = {UID_A, GID_A}, b[2] = {UID_B, GID_B}, root[2] = {0, 0};
	int sv[2], pp[2], got[2];

	(void)state;
	assert_int_equal(run_as_user(UID_A, GID_A, has_ids, a), 0);
	assert_int_equal(run_as_user(UID_B, GID_B, has_ids, b), 0);
	assert_int_equal(run_as_user(0, 0, has_ids, root), 0);
	assert_int_equal(run_as_user(UID_B, GID_B, has_ids, a), 2); /* the check can tell */

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	CHECK(pipe(pp));
	CHECK_0(sec_send_fds(sv[0], pp, 2));
	CHECK_0(sec_recv_fds(sv[1], got, 2));
	same_file(pp[0], got[0]);
	same_file(pp[1], got[1]);
	close(got[0]);
	close(got[1]);
	/* another number of fds than asked for is refused (and what came is closed) */
	CHECK_0(sec_send_fds(sv[0], pp, 2));
	assert_int_equal(sec_recv_fds(sv[1], got, 1), -EPROTO);
	assert_int_equal(sec_send_fds(sv[0], pp, 0), -EINVAL);
	close(sv[0]);
	assert_int_equal(sec_recv_fds(sv[1], got, 1), -EPIPE);
	close(sv[1]);
	close(pp[0]);
	close(pp[1]);
}

static int setup_opts(void **state, bool kinds)
{
	if (tu_setup_sized(state, kinds ? OPTS_KINDS : OPTS, sizeof(struct sec_fixture)) < 0)
		return -1;
	((struct sec_fixture *)*state)->kinds = kinds;
	return 0;
}

static int setup(void **state)
{
	return setup_opts(state, false);
}

static int setup_kinds(void **state)
{
	return setup_opts(state, true);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, tu_teardown)
#define TK(fn) cmocka_unit_test_setup_teardown(fn, setup_kinds, tu_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runner),
		T(test_owner_controls),
		T(test_pool_root_cold),
		T(test_pool_root_warm),
		T(test_refusals_cold),
		T(test_refusals_warm),
		T(test_root_hold),
		T(test_passed_fds),
		TK(test_kind_owner_controls),
		TK(test_kinds_cold),
		TK(test_kinds_warm),
	};
	const char *f = getenv("SEC_FILTER");

	if (getuid() != 0)
		return tu_skip_all("needs root (mounts allow_other, switches uids)");
	if (f && f[0])
		cmocka_set_test_filter(f);
	/* the daemon must support this datapath at all, else the binary skips as a whole */
	if (itest_datapath_unsupported())
		return 0;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
