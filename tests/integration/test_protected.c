/* The kernel's fs.protected_symlinks, protected_hardlinks, protected_fifos and protected_regular
 * with two users in the shared root of a multi-user pool (mode 01777, sticky, root's), next to
 * the same scene in a sticky tmpfs folder of root's: the kernel checks them before the daemon
 * sees anything, and the pool must not get in their way.
 *
 * Each check runs with the setting off first (the scene then works: the control) and on (it must
 * be refused), so a protection that did not apply fails the test. The settings are machine-wide:
 * each is put back at the end of its test, by teardown if the test failed, at exit and on
 * SIGTERM (tu_sysctl.h). The pool is root_exempt, so root may reach A's entries and what refuses
 * root is the kernel's protection; autohold=session keeps A's entries after A's process ends.
 *
 * A = uid 1001, B = uid 1002; root is the test and the pool's owner. */
#include "itest.h"
#include "tu_sysctl.h"

#include <ftw.h>
#include <stdbool.h>

#define UID_A 1001
#define GID_A 1001
#define UID_B 1002
#define GID_B 1002

/* One place a scene is made in: the pool's root, or the sticky tmpfs folder. */
struct place {
	const char *what; /* "pool" or "tmpfs" */
	char dir[PATH_MAX];
	char a_dat[PATH_MAX];  /* A's file, 0600 */
	char a_lnk[PATH_MAX];  /* A's symlink to "a.dat" */
	char r_lnk[PATH_MAX];  /* root's symlink to "a.dat" */
	char a_fifo[PATH_MAX]; /* A's FIFO, 0600 */
	char b_name[PATH_MAX]; /* where B tries to link A's file */
};

struct prot {
	struct tu_fixture t;   /* first: tu_pool and tu_teardown take *state */
	char sticky[PATH_MAX]; /* root's 01777 folder on tmpfs ("" if none) */
	struct place pl[2];    /* the pool, the tmpfs folder */
};

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (type == FTW_DP ? rmdir(path) : unlink(path))
		fprintf(stderr, "# cannot remove %s: %s\n", path, errname(errno));
	return 0;
}

static void place_init(struct place *pl, const char *what, const char *dir)
{
	memset(pl, 0, sizeof(*pl));
	pl->what = what;
	snprintf(pl->dir, sizeof(pl->dir), "%s", dir);
#define PL(field, name)                                                                            \
	if ((size_t)snprintf(pl->field, sizeof(pl->field), "%s/%s", dir, name) >=                  \
	    sizeof(pl->field))                                                                     \
	fail_msg("path too long: %s/%s", dir, name)
	PL(a_dat, "a.dat");
	PL(a_lnk, "a.lnk");
	PL(r_lnk, "r.lnk");
	PL(a_fifo, "a.fifo");
	PL(b_name, "b.name");
#undef PL
}

static int setup(void **state)
{
	const char *base = getenv("POOLFS_TEST_TMP");
	struct prot *pr;

	if (tu_setup_sized(state, "root_exempt,autohold=session", sizeof(struct prot)) < 0)
		return -1;
	pr = *state;
	snprintf(pr->sticky, sizeof(pr->sticky), "%s/pooltest-sticky-XXXXXX",
		 base && base[0] ? base : "/dev/shm");
	if (!mkdtemp(pr->sticky) || chmod(pr->sticky, 01777) == -1) {
		fprintf(stderr, "# sticky folder %s: %s\n", pr->sticky, errname(errno));
		pr->sticky[0] = '\0';
		tu_teardown(state);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	struct prot *pr = *state;
	int r = tu_sysctl_restore_all();

	if (r < 0)
		fprintf(stderr, "# could not restore a sysctl: %s\n", errname(-r));
	if (pr && pr->sticky[0]) {
		nftw(pr->sticky, remove_one, 8, FTW_DEPTH | FTW_PHYS);
		pr->sticky[0] = '\0';
	}
	return tu_teardown(state) < 0 || r < 0 ? -1 : 0;
}

/* As A, in each place: a.dat, a.lnk -> a.dat, a.fifo. */
static int a_makes(void *v)
{
	const struct prot *pr = v;

	for (int i = 0; i < 2; i++) {
		const struct place *pl = &pr->pl[i];
		int fd = open(pl->a_dat, O_RDWR | O_CREAT | O_EXCL, 0600);

		USER_OK(10 * i + 1, fd);
		USER_TRUE(10 * i + 2, write(fd, "A data", 6) == 6);
		USER_OK(10 * i + 3, close(fd));
		USER_OK(10 * i + 4, symlink("a.dat", pl->a_lnk));
		USER_OK(10 * i + 5, mkfifo(pl->a_fifo, 0600));
	}
	return 0;
}

/* The scene in both places, and the sysctl at its starting value. The pool root must be what the
 * kernel's checks look at: sticky, world-writable, root's. */
static struct prot *scene(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct prot *pr = *state;
	struct stat st;

	place_init(&pr->pl[0], "pool", p->mnt);
	place_init(&pr->pl[1], "tmpfs", pr->sticky);
	for (int i = 0; i < 2; i++) {
		CHECK(stat(pr->pl[i].dir, &st));
		if ((st.st_mode & 07777) != 01777 || st.st_uid != 0)
			fail_msg("%s: mode 0%o uid %u, want 01777 of root", pr->pl[i].dir,
				 (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
	}
	AS_OK(UID_A, GID_A, a_makes, pr);
	for (int i = 0; i < 2; i++)
		CHECK(symlink("a.dat", pr->pl[i].r_lnk));
	return pr;
}

static void set(const char *name, int value)
{
	int r = tu_sysctl_set(name, value);

	if (r < 0)
		fail_msg("cannot set %s to %d: %s", name, value, errname(-r));
}

/* What a call returned as an errno (0: it worked); a descriptor it opened is closed. */
static int res(long r)
{
	if (r >= 0)
		return 0;
	return errno;
}

static int opened(int fd)
{
	int e = res(fd);

	if (fd >= 0)
		close(fd);
	return e;
}

#define EXPECT_IN(pl, expr, want)                                                                  \
	do {                                                                                       \
		int got_ = (errno = 0, (expr));                                                    \
		if (got_ != (want))                                                                \
			fail_msg("%s:%d: %s (%s): %s, want %s", __FILE__, __LINE__, #expr,         \
				 (pl)->what, errname(got_), errname(want));                        \
	} while (0)

/* ---- protected_symlinks ---- */

static int a_follows_own(void *v)
{
	const struct prot *pr = v;
	struct stat st;

	for (int i = 0; i < 2; i++)
		USER_OK(i + 1, stat(pr->pl[i].a_lnk, &st));
	return 0;
}

static void test_protected_symlinks(void **state)
{
	struct prot *pr = scene(state);
	struct stat st;
	char buf[64];

	set("fs/protected_symlinks", 0);
	for (int i = 0; i < 2; i++) {
		const struct place *pl = &pr->pl[i];

		/* the control: off, root follows A's symlink to A's file */
		EXPECT_IN(pl, res(stat(pl->a_lnk, &st)), 0);
		EXPECT_IN(pl, opened(open(pl->a_lnk, O_RDONLY)), 0);
	}
	set("fs/protected_symlinks", 1);
	for (int i = 0; i < 2; i++) {
		const struct place *pl = &pr->pl[i];

		/* on: root may not follow another owner's symlink in a sticky world-writable
		 * folder it does not share an owner with */
		EXPECT_IN(pl, res(stat(pl->a_lnk, &st)), EACCES);
		EXPECT_IN(pl, opened(open(pl->a_lnk, O_RDONLY)), EACCES);
		/* the link itself is still there to look at */
		EXPECT_IN(pl, res(lstat(pl->a_lnk, &st)), 0);
		EXPECT_IN(pl, res(readlink(pl->a_lnk, buf, sizeof(buf))), 0);
		/* the folder's owner's own symlink is followed */
		EXPECT_IN(pl, res(stat(pl->r_lnk, &st)), 0);
	}
	/* the link's owner follows it */
	AS_OK(UID_A, GID_A, a_follows_own, pr);
	CHECK_0(tu_sysctl_restore_all());
}

/* ---- protected_hardlinks ---- */

struct hl {
	const struct place *pl;
	int fd; /* A's file, opened by root and inherited */
};

/* As B, with a descriptor of A's file inherited from root: a name for it through /proc. */
static int b_links_inherited(void *v)
{
	const struct hl *h = v;
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", h->fd);
	return linkat(AT_FDCWD, proc, AT_FDCWD, h->pl->b_name, AT_SYMLINK_FOLLOW) == 0 ? 0 : errno;
}

/* The daemon's LINK requests so far (counted as "other" unless the daemon names them). */
static long link_requests(const struct pool_fixture *p)
{
	return itest_ops_count(p, "link") + itest_ops_count(p, "other");
}

/* B's link of A's file in pl, with fs.protected_hardlinks at `on`: B's errno, and whether the
 * request reached the daemon. */
static int b_link_attempt(const struct pool_fixture *p, const struct place *pl, bool *reached)
{
	struct hl h = {pl, open(pl->a_dat, O_RDONLY)};
	long before;
	int r;

	CHECK(h.fd);
	before = link_requests(p);
	r = run_as_user(UID_B, GID_B, b_links_inherited, &h);
	*reached = link_requests(p) > before;
	CHECK(close(h.fd));
	if (r < 0)
		fail_msg("B's process: %s", errname(-r));
	return r;
}

static void test_protected_hardlinks(void **state)
{
	struct prot *pr = scene(state);
	struct pool_fixture *p = &pr->t.p;
	const struct place *pool = &pr->pl[0], *tmp = &pr->pl[1];
	bool reached;
	int r;

	set("fs/protected_hardlinks", 0);
	/* tmpfs: off, B may name A's file (the control that the setting is what refuses) */
	r = b_link_attempt(p, tmp, &reached);
	if (r != 0)
		fail_msg("tmpfs, protected_hardlinks=0: B's link of A's file: %s, want it to work",
			 errname(r));
	CHECK(unlink(tmp->b_name));
	/* the pool: off, the daemon itself refuses (B is not the owner) */
	r = b_link_attempt(p, pool, &reached);
	if (r != EPERM || !reached)
		fail_msg(
			"pool, protected_hardlinks=0: %s, %s the daemon; want EPERM from the daemon",
			errname(r), reached ? "reached" : "did not reach");
	set("fs/protected_hardlinks", 1);
	for (int i = 0; i < 2; i++) {
		r = b_link_attempt(p, &pr->pl[i], &reached);
		if (r != EPERM)
			fail_msg("%s, protected_hardlinks=1: B's link of A's file: %s, want EPERM",
				 pr->pl[i].what, errname(r));
		/* the kernel refused: the daemon never heard of it */
		if (i == 0 && reached)
			fail_msg("pool, protected_hardlinks=1: the LINK reached the daemon: the "
				 "kernel's protection did not apply");
		ASSERT_ABSENT(pr->pl[i].b_name);
	}
	CHECK_0(tu_sysctl_restore_all());
}

/* ---- protected_fifos and protected_regular: O_CREAT on an existing entry ---- */

static int a_creat_own(void *v)
{
	const struct prot *pr = v;

	for (int i = 0; i < 2; i++) {
		USER_OK(10 * i + 1,
			opened(open(pr->pl[i].a_fifo, O_RDONLY | O_CREAT | O_NONBLOCK, 0600)) == 0
				? 0
				: -1);
		USER_OK(10 * i + 2,
			opened(open(pr->pl[i].a_dat, O_RDWR | O_CREAT, 0600)) == 0 ? 0 : -1);
	}
	return 0;
}

static void test_protected_fifos(void **state)
{
	struct prot *pr = scene(state);
	int fl = O_RDONLY | O_CREAT | O_NONBLOCK;

	set("fs/protected_fifos", 0);
	for (int i = 0; i < 2; i++)
		EXPECT_IN(&pr->pl[i], opened(open(pr->pl[i].a_fifo, fl, 0600)), 0);
	set("fs/protected_fifos", 1);
	for (int i = 0; i < 2; i++) {
		const struct place *pl = &pr->pl[i];

		/* root opening A's FIFO with O_CREAT in the sticky folder */
		EXPECT_IN(pl, opened(open(pl->a_fifo, fl, 0600)), EACCES);
		/* without O_CREAT it is no concern of the setting */
		EXPECT_IN(pl, opened(open(pl->a_fifo, O_RDONLY | O_NONBLOCK)), 0);
	}
	AS_OK(UID_A, GID_A, a_creat_own, pr);
	CHECK_0(tu_sysctl_restore_all());
}

static void test_protected_regular(void **state)
{
	struct prot *pr = scene(state);

	set("fs/protected_regular", 0);
	for (int i = 0; i < 2; i++)
		EXPECT_IN(&pr->pl[i], opened(open(pr->pl[i].a_dat, O_RDWR | O_CREAT, 0600)), 0);
	set("fs/protected_regular", 1);
	for (int i = 0; i < 2; i++) {
		const struct place *pl = &pr->pl[i];

		EXPECT_IN(pl, opened(open(pl->a_dat, O_RDWR | O_CREAT, 0600)), EACCES);
		EXPECT_IN(pl, opened(open(pl->a_dat, O_RDWR)), 0);
	}
	AS_OK(UID_A, GID_A, a_creat_own, pr);
	CHECK_0(tu_sysctl_restore_all());
}

/* The helper itself: a value set is read back, and put back by restore. */
static void test_sysctl_restored(void **state)
{
	int before = tu_sysctl_get("fs/protected_fifos");

	(void)state;
	assert_true(before >= 0);
	CHECK_0(tu_sysctl_set("fs/protected_fifos", before ? 0 : 1));
	assert_int_equal(tu_sysctl_get("fs/protected_fifos"), before ? 0 : 1);
	CHECK_0(tu_sysctl_set("fs/protected_fifos", 2));
	CHECK_0(tu_sysctl_restore_all());
	assert_int_equal(tu_sysctl_get("fs/protected_fifos"), before);
	assert_int_equal(tu_sysctl_set("no/such_setting", 1), -ENOENT);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sysctl_restored),
		T(test_protected_symlinks),
		T(test_protected_hardlinks),
		T(test_protected_fifos),
		T(test_protected_regular),
	};

	if (geteuid() != 0)
		return tu_skip_all("needs root (mounts allow_other, switches uids, sets sysctls)");
	return ITEST_RUN(tests);
}
