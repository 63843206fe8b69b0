/* Lifetime rules (docs/interface.md "Lifetime") against a real pool mounted
 * with autohold=none: an entry lives exactly while a handle, a mapping or (folders) a child uses
 * it. Removal is polled for with a generous bound, never timed. */
#include "itest.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/xattr.h>
#include <time.h>

static long pg;

static int setup_none(void **state)
{
	return tu_setup(state, "autohold=none");
}

/* The same without allow_other: names in the root are cached too. */
static int setup_private_none(void **state)
{
	return tu_setup_private(state, "autohold=none");
}

/* A new file holding len bytes of pattern seed; returns the open O_RDWR fd. */
static int make_file(const char *path, size_t len, uint32_t seed)
{
	char *buf = malloc(len ? len : 1);
	int fd;

	assert_non_null(buf);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		fail_msg("create %s: %s", path, errname(errno));
	pat_fill(buf, len, seed, 0);
	if (pwrite_all(fd, buf, len, 0) != (ssize_t)len)
		fail_msg("write %s: %s", path, errname(errno));
	free(buf);
	return fd;
}

/* The file at fd holds exactly len bytes of pattern seed. */
static void expect_fd_pattern(int fd, size_t len, uint32_t seed)
{
	char *buf = malloc(len + 1);
	ssize_t n;
	long bad;

	assert_non_null(buf);
	n = pread_all(fd, buf, len + 1, 0);
	if (n != (ssize_t)len)
		fail_msg("read %zd bytes, want %zu (%s)", n, len, n < 0 ? errname(errno) : "");
	bad = pat_check(buf, len, seed, 0);
	free(buf);
	if (bad >= 0)
		fail_msg("data differs at offset %ld", bad);
}

static void expect_path_pattern(const char *path, size_t len, uint32_t seed)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		fail_msg("open %s: %s", path, errname(errno));
	expect_fd_pattern(fd, len, seed);
	close(fd);
}

static void *map_fd(int fd, size_t len)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED)
		fail_msg("mmap: %s", errname(errno));
	return m;
}

/* A new file of len bytes of pattern seed, mapped shared read-write; its descriptor is closed, so
 * the mapping is all that uses it. */
static unsigned char *mapped_file(const char *path, size_t len, uint32_t seed)
{
	int fd = make_file(path, len, seed);
	unsigned char *m = map_fd(fd, len);

	CHECK(close(fd));
	return m;
}

/* The file went with its last user, and the backing dir holds what it held before the test (at
 * the test's end, or before it starts over). */
static void end_with_gone(void **state, const char *path)
{
	ASSERT_GONE(path);
	tu_backing_back_to_base(state);
}

/* ---- mappings ---- */

static void test_mapping_outlives_close(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	size_t len = 4 * pg;
	unsigned char *m = mapped_file(f, len, 4);
	int fd2;

	ASSERT_STAYS(f);
	assert_int_equal(pat_check(m, len, 4, 0), -1);
	/* writes through the mapping are what another opener reads */
	pat_fill(m, len, 5, 0);
	fd2 = open(f, O_RDONLY);
	CHECK(fd2);
	expect_fd_pattern(fd2, len, 5);
	CHECK(close(fd2));
	ASSERT_STAYS(f);
	CHECK(munmap(m, len));
	end_with_gone(state, f);
}

/* Poll until the daemon holds `want` fanotify marks: the RELEASE that adds one comes after
 * close(). */
static void expect_marks(const struct pool_fixture *p, int want)
{
	int r = pool_wait_daemon_marks(p, want, GONE_MS);

	if (r != 0)
		fail_msg("the daemon holds %d fanotify marks, want %d", pool_daemon_marks(p), want);
}

/* Passthrough: close events are watched only for files still in use at their last RELEASE (a
 * mark each, dropped once they are proven free), so files that were never mapped cost no event
 * (docs/design.md "Last-mapping detection"). */
static void test_only_mapped_files_are_watched(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(a, p, "w-plain");
	PATH(b, p, "w-mapped");
	size_t len = 4 * pg;
	unsigned char *m;

	if (pool_daemon_marks(p) < 0)
		TU_SKIP("passthrough only: on the page-cache path RELEASE follows the last mapping");
	expect_marks(p, 0);
	CHECK(close(make_file(a, len, 1)));
	ASSERT_GONE(a);
	expect_marks(p, 0);
	m = mapped_file(b, len, 2);
	expect_marks(p, 1);
	ASSERT_EXISTS(b);
	CHECK(munmap(m, len));
	end_with_gone(state, b);
	expect_marks(p, 0);
}

/* The daemon's count of mapping-proof probes once it stops moving: after the last RELEASE, the
 * soon re-probes (about 12 ms), then the doubt list's rounds for a mark that RELEASE made (about
 * 1.7 s, mapping_proof.c); polled until unchanged for 1.5 s. */
static long settled_probes(const struct pool_fixture *p)
{
	enum { POLL_MS = 100, QUIET_POLLS = 15, DEADLINE_MS = 20000 };
	long last = itest_counter(p, "proof_probes"), now;
	int same = 0;

	/* Quiet for 1.5 s: longer than any gap between two rounds of the doubt list (1 s). */
	for (int waited = 0; same < QUIET_POLLS; waited += POLL_MS) {
		if (waited > DEADLINE_MS)
			fail_msg("the mapping proof kept probing for %d ms (%ld probes)",
				 DEADLINE_MS, last);
		usleep(POLL_MS * 1000);
		now = itest_counter(p, "proof_probes");
		same = now == last ? same + 1 : 0;
		last = now;
	}
	return last;
}

/* Passthrough: a file busy at its last RELEASE has a mark that will report its last munmap, so
 * a mapping that lives on costs no probe once its first rounds are over; only the sweep, once a
 * minute, looks again (docs/design.md "Last-mapping detection"). Re-probing every such file every second was
 * work that grew with the mappings that live on. */
static void test_long_lived_mappings_cost_no_probes(void **state)
{
	enum { FILES = 200 };
	struct pool_fixture *p = tu_pool(state);
	unsigned char *m[FILES];
	char path[FILES][PATH_MAX];
	long before, idle, after;

	if (pool_daemon_marks(p) < 0)
		TU_SKIP("passthrough only: on the page-cache path RELEASE follows the last mapping");
	for (int i = 0; i < FILES; i++) {
		char rel[32];

		snprintf(rel, sizeof(rel), "long-%d", i);
		assert_int_equal(pool_path(p, rel, path[i], sizeof(path[i])), 0);
		m[i] = mapped_file(path[i], pg, (uint32_t)i);
	}
	expect_marks(p, FILES);
	before = settled_probes(p);
	sleep(2);
	idle = itest_counter(p, "proof_probes") - before;
	if (idle != 0)
		fail_msg("%d files mapped and idle cost %ld probes in 2 s", FILES, idle);
	for (int i = 0; i < FILES; i++)
		assert_int_equal(pat_check(m[i], pg, (uint32_t)i, 0), -1);
	for (int i = 0; i < FILES; i++)
		CHECK(munmap(m[i], pg));
	for (int i = 0; i < FILES; i++)
		ASSERT_GONE(path[i]);
	after = itest_counter(p, "proof_probes") - before;
	if (after < FILES)
		fail_msg("%d last munmaps proven with %ld probes", FILES, after);
	expect_marks(p, 0);
	tu_backing_back_to_base(state);
}

/* A write-only handle cannot be mapped, so the last RELEASE of write-only handles has nothing to
 * prove on passthrough (datapath_passthrough.c): such a file goes at once. But a mapping made
 * through an earlier, or a concurrent, readable handle must still keep the file. */
static void test_write_only_handles_never_hide_a_mapping(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(plain, p, "wo-plain");
	PATH(earlier, p, "wo-earlier");
	PATH(concurrent, p, "wo-concurrent");
	size_t len = 4 * pg;
	unsigned char *m1, *m2;
	int rw, wo;

	/* write-only from birth to close */
	CHECK(wo = open(plain, O_WRONLY | O_CREAT | O_EXCL, 0600));
	CHECK(ftruncate(wo, (off_t)len));
	CHECK(close(wo));
	ASSERT_GONE(plain);
	/* mapped through a handle closed before a write-only one came and went */
	m1 = mapped_file(earlier, len, 6);
	CHECK(wo = open(earlier, O_WRONLY));
	CHECK(close(wo));
	ASSERT_STAYS(earlier);
	/* mapped through a readable handle; a write-only handle closes last */
	rw = make_file(concurrent, len, 7);
	m2 = map_fd(rw, len);
	CHECK(wo = open(concurrent, O_WRONLY));
	CHECK(close(rw));
	CHECK(close(wo));
	ASSERT_STAYS(concurrent);
	assert_int_equal(pat_check(m1, len, 6, 0), -1);
	assert_int_equal(pat_check(m2, len, 7, 0), -1);
	CHECK(munmap(m1, len));
	ASSERT_GONE(earlier);
	CHECK(munmap(m2, len));
	end_with_gone(state, concurrent);
}

struct mapper_arg {
	char path[PATH_MAX];
	struct chan c;
	size_t len;
	int fd;
	unsigned char *map;
};

/* fn started as a child with a, on a's channel opened afresh: its pid. */
static pid_t start_child(struct mapper_arg *a, int (*fn)(void *))
{
	pid_t pid;

	chan_open(&a->c);
	pid = tu_spawn(fn, a);
	chan_parent(&a->c);
	return pid;
}

/* The child is the file's last user now: the file stays until the child, let go, ends; then it
 * goes, and the test ends. */
static void end_after_child(void **state, struct mapper_arg *a, pid_t pid)
{
	ASSERT_STAYS(a->path);
	PARENT_GO(&a->c);
	REAP_OK(pid);
	chan_close_parent(&a->c);
	end_with_gone(state, a->path);
}

static int child_second_mapper(void *v)
{
	struct mapper_arg *a = v;
	unsigned char *m;

	chan_child(&a->c);
	m = tu_map_path(a->path, a->len);
	CHILD_CHECK(m != MAP_FAILED, 1);
	CHILD_CHECK(pat_check(m, a->len, 6, 0) == -1, 2);
	CHILD_READY_THEN_GO(&a->c, 3);
	/* the parent wrote through its own mapping: one page cache, so we see it at once */
	CHILD_CHECK(m[5] == 0xAB, 5);
	m[6] = 0xCD;
	CHILD_READY_THEN_GO(&a->c, 6);
	munmap(m, a->len);
	return 0;
}

static void test_two_mappers_two_processes(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct mapper_arg a = {.len = 4 * pg};
	unsigned char *m;
	pid_t pid;
	int fd;

	assert_int_equal(pool_path(p, "f", a.path, sizeof(a.path)), 0);
	fd = make_file(a.path, a.len, 6);
	m = map_fd(fd, a.len);
	CHECK(close(fd));
	pid = start_child(&a, child_second_mapper);
	PARENT_WAIT_READY(&a.c);
	m[5] = 0xAB;
	PARENT_GO(&a.c);
	PARENT_WAIT_READY(&a.c);
	assert_int_equal(m[6], 0xCD);
	CHECK(munmap(m, a.len));
	/* the child's mapping alone keeps it */
	end_after_child(state, &a, pid);
}

static int child_inherited_fd(void *v)
{
	struct mapper_arg *a = v;
	char buf[pg];

	chan_child(&a->c);
	CHILD_CHECK(CHILD_WAIT_GO(&a->c) == 0, 1);
	pat_fill(buf, sizeof(buf), 8, 0);
	CHILD_CHECK(pwrite(a->fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf), 2);
	CHILD_READY_THEN_GO(&a->c, 3);
	return 0; /* exiting closes the inherited fd, the last handle */
}

static void test_fork_inherits_fd(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct mapper_arg a = {.len = 0};
	pid_t pid;

	assert_int_equal(pool_path(p, "f", a.path, sizeof(a.path)), 0);
	a.fd = make_file(a.path, 3 * pg, 7);
	pid = start_child(&a, child_inherited_fd);
	CHECK(close(a.fd));
	ASSERT_STAYS(a.path);
	PARENT_GO(&a.c);
	PARENT_WAIT_READY(&a.c);
	{
		/* the child's write through the inherited fd reached the file */
		int fd = open(a.path, O_RDONLY);
		char buf[pg];

		CHECK(fd);
		assert_int_equal(pread_all(fd, buf, sizeof(buf), 0), pg);
		assert_int_equal(pat_check(buf, sizeof(buf), 8, 0), -1);
		CHECK(close(fd));
	}
	end_after_child(state, &a, pid);
}

static int child_inherited_map(void *v)
{
	struct mapper_arg *a = v;

	chan_child(&a->c);
	pat_fill(a->map, pg, 9, 0);
	CHILD_READY_THEN_GO(&a->c, 1);
	return 0; /* exiting drops the inherited mapping, the last user */
}

static void test_fork_inherits_mapping(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct mapper_arg a = {.len = 2 * pg};
	pid_t pid;
	int fd;

	assert_int_equal(pool_path(p, "f", a.path, sizeof(a.path)), 0);
	fd = make_file(a.path, a.len, 10);
	a.map = map_fd(fd, a.len);
	CHECK(close(fd));
	pid = start_child(&a, child_inherited_map);
	PARENT_WAIT_READY(&a.c);
	CHECK(munmap(a.map, a.len));
	ASSERT_STAYS(a.path);
	fd = open(a.path, O_RDONLY);
	CHECK(fd);
	{
		char buf[pg];

		assert_int_equal(pread_all(fd, buf, sizeof(buf), 0), pg);
		assert_int_equal(pat_check(buf, sizeof(buf), 9, 0), -1);
	}
	CHECK(close(fd));
	end_after_child(state, &a, pid);
}

static void test_partial_munmap(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	size_t len = 4 * pg;
	unsigned char *m = mapped_file(f, len, 11);

	/* a hole in the middle splits the mapping in two: both halves still count */
	CHECK(munmap(m + pg, pg));
	ASSERT_STAYS(f);
	CHECK(munmap(m, pg));
	ASSERT_STAYS(f);
	CHECK(munmap(m + 3 * pg, pg));
	ASSERT_STAYS(f);
	assert_int_equal(pat_check(m + 2 * pg, pg, 11, 2 * pg), -1);
	CHECK(munmap(m + 2 * pg, pg));
	end_with_gone(state, f);
}

static int child_map_and_wait(void *v)
{
	struct mapper_arg *a = v;
	unsigned char *m;
	int fd;

	chan_child(&a->c);
	fd = open(a->path, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHILD_CHECK(fd >= 0, 1);
	CHILD_CHECK(ftruncate(fd, a->len) == 0, 2);
	m = mmap(NULL, a->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHILD_CHECK(m != MAP_FAILED, 3);
	close(fd);
	pat_fill(m, a->len, 12, 0);
	CHILD_CHECK(CHILD_READY(&a->c) == 0, 4);
	for (;;)
		pause(); /* until SIGKILL */
}

static void test_sigkill_while_mapped(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct mapper_arg a = {.len = 64 * pg};
	pid_t pid;
	int fd, fd2;

	assert_int_equal(pool_path(p, "f", a.path, sizeof(a.path)), 0);
	pid = start_child(&a, child_map_and_wait);
	PARENT_WAIT_READY(&a.c);
	/* only the child's mapping keeps it now */
	ASSERT_STAYS(a.path);
	/* another holder reads what the child wrote through its mapping while it is alive */
	fd = open(a.path, O_RDONLY);
	CHECK(fd);
	expect_fd_pattern(fd, a.len, 12);
	fd2 = open(a.path, O_RDONLY);
	CHECK(fd2);
	CHECK(close(fd2));
	CHECK(kill(pid, SIGKILL));
	assert_int_equal(tu_reap(pid, CHILD_MS), 128 + SIGKILL);
	/* the dead child's dirty pages were not lost */
	expect_fd_pattern(fd, a.len, 12);
	CHECK(close(fd));
	end_with_gone(state, a.path);

	/* and with no other holder at all: the kill alone releases it */
	chan_close_parent(&a.c);
	pid = start_child(&a, child_map_and_wait);
	PARENT_WAIT_READY(&a.c);
	ASSERT_STAYS(a.path);
	CHECK(kill(pid, SIGKILL));
	assert_int_equal(tu_reap(pid, CHILD_MS), 128 + SIGKILL);
	chan_close_parent(&a.c);
	end_with_gone(state, a.path);
}

static void test_unlink_while_mapped(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	size_t len = 8 * pg;
	unsigned char *m = mapped_file(f, len, 13);

	CHECK(unlink(f));
	ASSERT_ABSENT(f);
	assert_int_equal(tu_listed(p->mnt, "f"), 0);
	assert_int_equal(pat_check(m, len, 13, 0), -1);
	pat_fill(m, len, 14, 0);
	assert_int_equal(pat_check(m, len, 14, 0), -1);
	CHECK(munmap(m, len));
	tu_backing_back_to_base(state);
}

/* A folder handle lists what its opendir saw, and READDIRPLUS hands the kernel each entry as a
 * name to cache (fs/ops_dirs.c plus_entry). So an entry that lost its name after the opendir must
 * not come back under it: its data would stay until the kernel let go of a name the pool no
 * longer has, and where names are cached (a private pool) stat() would find the removed file. A
 * name made again since goes out with its newer entry. On a multi-user pool names in the root
 * are asked again at each walk, so the data left is what shows it there: it is checked before
 * any lookup of the names. */
static void listing_opened_before_a_removal(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct tu_fixture *t = *state;
	PATH(f, p, "f");
	PATH(g, p, "g");
	int fd_f, fd_g, fd_g2;
	struct stat st, st_new;
	DIR *dir;

	CHECK(fd_f = open(f, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
	CHECK(fd_g = open(g, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
	dir = opendir(p->mnt); /* its snapshot names f and g */
	if (!dir)
		fail_msg("opendir %s: %s", p->mnt, errname(errno));
	CHECK(unlink(f)); /* still open: an entry without a name */
	CHECK(unlink(g));
	CHECK(fd_g2 = open(g, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
	CHECK(fstat(fd_g2, &st_new));
	errno = 0;
	while (readdir(dir))
		;
	if (errno != 0)
		fail_msg("readdir %s: %s", p->mnt, errname(errno));
	CHECK(closedir(dir));
	CHECK(close(fd_f)); /* the unlinked files' last users: their data goes */
	CHECK(close(fd_g));
	if (pool_wait_backing_files(p, t->base_backing + 1, GONE_MS) != 0)
		fail_msg(
			"%d backing files %d ms after the unlinked files were closed, want %d (the "
			"new g's): a name the listing handed back keeps them",
			pool_backing_files(p), GONE_MS, t->base_backing + 1);
	ASSERT_ABSENT(f);
	CHECK(lstat(g, &st));
	if (st.st_ino != st_new.st_ino)
		fail_msg("g names inode %lu after the listing, not the new file's %lu",
			 (unsigned long)st.st_ino, (unsigned long)st_new.st_ino);
	CHECK(close(fd_g2));
	tu_backing_back_to_base(state);
}

static void test_listing_opened_before_a_removal(void **state)
{
	listing_opened_before_a_removal(state);
}

static void test_private_listing_opened_before_a_removal(void **state)
{
	listing_opened_before_a_removal(state);
}

static void test_recreate_while_old_mapping_alive(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	size_t len = 4 * pg;
	int fd = make_file(f, len, 15);
	unsigned char *m = map_fd(fd, len);
	struct stat old, st;

	CHECK(fstat(fd, &old));
	CHECK(close(fd));
	CHECK(unlink(f));
	fd = open(f, O_RDWR | O_CREAT, 0600);
	CHECK(fd);
	CHECK(fstat(fd, &st));
	assert_int_equal(st.st_size, 0);
	/* a live old inode and the new one must never share an inode number */
	assert_true(st.st_ino != old.st_ino);
	{
		char buf[pg];

		assert_int_equal(pread_all(fd, buf, sizeof(buf), 0), 0);
		pat_fill(buf, sizeof(buf), 16, 0);
		assert_int_equal(pwrite_all(fd, buf, sizeof(buf), 0), pg);
	}
	assert_int_equal(pat_check(m, len, 15, 0), -1);
	expect_fd_pattern(fd, pg, 16);
	CHECK(close(fd));
	ASSERT_GONE(f);
	assert_int_equal(pat_check(m, len, 15, 0), -1);
	CHECK(munmap(m, len));
	tu_backing_back_to_base(state);
}

/* Create, write, read back and close one name rounds times, with O_EXCL and waiting for each
 * removal or neither. */
static void create_loop(void **state, int rounds, bool wait_each)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int flags = O_RDWR | O_CREAT | (wait_each ? O_EXCL : 0);

	for (uint32_t i = 0; i < (uint32_t)rounds; i++) {
		uint32_t back = ~i;
		int fd = open(f, flags, 0600);
		int r;

		if (fd < 0)
			fail_msg("round %u: open(O_CREAT%s): %s", i, wait_each ? "|O_EXCL" : "",
				 errname(errno));
		if (pwrite(fd, &i, sizeof(i), 0) != sizeof(i))
			fail_msg("round %u: write: %s", i, errname(errno));
		if (pread(fd, &back, sizeof(back), 0) != sizeof(back) || back != i)
			fail_msg("round %u: read back %u", i, back);
		if (close(fd) == -1)
			fail_msg("round %u: close: %s", i, errname(errno));
		r = wait_each ? pool_wait_gone(f, GONE_MS) : 0;
		if (r)
			fail_msg("round %u: not removed: %s", i, errname(-r));
	}
	end_with_gone(state, f);
}

/* The name of a just-removed file must be reusable at once: a stale kernel dentry made O_CREAT
 * fail with ENOENT (docs/design.md "Name invalidation"). No waiting between rounds. */
static void test_create_loop_no_wait(void **state)
{
	create_loop(state, itest_rounds(2000), false);
}

/* Same, waiting for each removal: once the name is gone, O_EXCL must succeed. Every removal
 * must happen: a lost "unused" event leaves the file for good. */
static void test_create_loop_with_wait(void **state)
{
	create_loop(state, itest_rounds(1000), true);
}

static void test_private_mapping_outlives_close(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	size_t len = 3 * pg;
	int fd = make_file(f, len, 34);
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);

	assert_true(m != MAP_FAILED);
	CHECK(close(fd));
	ASSERT_STAYS(f);
	/* a private copy: writes stay in this process */
	m[0] ^= 0xFF;
	expect_path_pattern(f, len, 34);
	assert_int_equal(pat_check(m + 1, len - 1, 34, 1), -1);
	CHECK(munmap(m, len));
	end_with_gone(state, f);
}

/* Many handles and mappings dropped in a random order: the file goes with the last of them. */
static void test_many_users_any_order(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	enum { FDS = 48, MAPS = 16 };
	int fds[FDS];
	void *maps[MAPS];
	int order[FDS + MAPS];
	uint32_t rng = (uint32_t)time(NULL);
	int fd = make_file(f, pg, 35);

	fprintf(stderr, "# test_many_users_any_order order seed %u\n", rng);
	for (int i = 0; i < FDS; i++) {
		fds[i] = open(f, i % 2 ? O_RDONLY : O_RDWR);
		CHECK(fds[i]);
	}
	for (int i = 0; i < MAPS; i++) {
		maps[i] = mmap(NULL, pg, PROT_READ, MAP_SHARED, fds[i], 0);
		assert_true(maps[i] != MAP_FAILED);
	}
	CHECK(close(fd));
	for (int i = 0; i < FDS + MAPS; i++)
		order[i] = i;
	for (int i = FDS + MAPS - 1; i > 0; i--) {
		int j, t;

		rng = rng * 1103515245u + 12345u;
		j = (int)((rng >> 8) % (uint32_t)(i + 1));
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (int i = 0; i < FDS + MAPS; i++) {
		int k = order[i];

		if (k < FDS)
			CHECK(close(fds[k]));
		else
			CHECK(munmap(maps[k - FDS], pg));
		if (i < FDS + MAPS - 1) {
			struct stat st;

			if (lstat(f, &st) == -1)
				fail_msg("removed with %d users left: %s", FDS + MAPS - 1 - i,
					 errname(errno));
		}
	}
	end_with_gone(state, f);
}

/* A descriptor passed to another process (SCM_RIGHTS) keeps the file after the sender closes. */
struct pass_arg {
	int sock;
	struct chan c;
	uint32_t seed;
	size_t len;
};

static int child_receives_fd(void *v)
{
	struct pass_arg *a = v;
	unsigned char *buf;
	int fd;

	chan_child(&a->c);
	fd = tu_recv_fd(a->sock, CHILD_MS);
	CHILD_CHECK(fd >= 0, 1);
	CHILD_READY_THEN_GO(&a->c, 3);
	buf = malloc(a->len);
	CHILD_CHECK(buf && pread(fd, buf, a->len, 0) == (ssize_t)a->len, 5);
	CHILD_CHECK(pat_check(buf, a->len, a->seed, 0) == -1, 6);
	return 0;
}

static void test_fd_passed_over_socket(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	struct pass_arg a = {.seed = 36, .len = 5000};
	int sv[2];
	pid_t pid;
	int fd;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	a.sock = sv[1];
	chan_open(&a.c);
	/* forked before the file exists: the child inherits no handle of it */
	pid = tu_spawn(child_receives_fd, &a);
	chan_parent(&a.c);
	CHECK(close(sv[1]));
	fd = make_file(f, a.len, a.seed);
	CHECK_0(tu_send_fd(sv[0], fd));
	PARENT_WAIT_READY(&a.c);
	CHECK(close(fd));
	/* only the passed descriptor keeps it */
	ASSERT_STAYS(f);
	PARENT_GO(&a.c);
	REAP_OK(pid);
	chan_close_parent(&a.c);
	CHECK(close(sv[0]));
	end_with_gone(state, f);
}

static int child_exec_sleep(void *v)
{
	(void)v;
	execlp("sleep", "sleep", "600", (char *)NULL);
	return 127;
}

/* A handle inherited across exec keeps the file for the new program; an O_CLOEXEC one does
 * not. */
static void test_exec_inherits_fd_unless_cloexec(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(g, p, "g");
	int ff = make_file(f, 100, 37);
	int gf = open(g, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	pid_t pid;

	CHECK(gf);
	pid = tu_spawn(child_exec_sleep, NULL);
	/* the exec must have happened (closing g's copy) before we drop ours */
	{
		char comm_path[64], comm[32] = "";
		long long deadline = pool_now_ms() + CHILD_MS;

		snprintf(comm_path, sizeof(comm_path), "/proc/%d/comm", (int)pid);
		while (strncmp(comm, "sleep", 5) != 0) {
			FILE *c = fopen(comm_path, "re");

			if (c) {
				if (!fgets(comm, sizeof(comm), c))
					comm[0] = '\0';
				fclose(c);
			}
			if (pool_now_ms() > deadline)
				fail_msg("child %d did not exec sleep", (int)pid);
			pool_sleep_ms(5);
		}
	}
	CHECK(close(ff));
	CHECK(close(gf));
	ASSERT_GONE(g);
	ASSERT_STAYS(f);
	CHECK(kill(pid, SIGKILL));
	assert_int_equal(tu_reap(pid, CHILD_MS), 128 + SIGKILL);
	end_with_gone(state, f);
}

/* Thousands of files created, written and closed back to back, then every one of them must go:
 * a removal lost among many "unused" events leaves a file for good. */
static void test_every_closed_file_goes(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	int n = itest_rounds(5000);
	int stuck = 0, first = -1;

	for (int i = 0; i < n; i++) {
		char rel[32], path[PATH_MAX];
		int fd;

		snprintf(rel, sizeof(rel), "f%d", i);
		assert_int_equal(pool_path(p, rel, path, sizeof(path)), 0);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd < 0)
			fail_msg("create %s: %s", rel, errname(errno));
		if (write(fd, "x", 1) != 1)
			fail_msg("write %s: %s", rel, errname(errno));
		CHECK(close(fd));
	}
	for (int i = 0; i < n; i++) {
		char rel[32], path[PATH_MAX];

		snprintf(rel, sizeof(rel), "f%d", i);
		assert_int_equal(pool_path(p, rel, path, sizeof(path)), 0);
		/* the bound is for all of them together: most are long gone */
		if (pool_wait_gone(path, stuck ? 0 : GONE_MS) != 0) {
			if (first < 0)
				first = i;
			stuck++;
		}
	}
	if (stuck) {
		char rel[32], path[PATH_MAX], refs[256] = "";
		ssize_t len;

		snprintf(rel, sizeof(rel), "f%d", first);
		assert_int_equal(pool_path(p, rel, path, sizeof(path)), 0);
		len = getxattr(path, POOLFS_XATTR_REFS, refs, sizeof(refs) - 1);
		refs[len > 0 ? len : 0] = '\0';
		fail_msg("%d of %d closed files never removed; %s has refs:\n%s", stuck, n, rel,
			 refs);
	}
	tu_backing_back_to_base(state);
}

/* ---- folders ---- */

/* One process keeps re-creating a file in d and closing it (so d keeps being emptied and
 * removed) while another creates its own file in d: whenever that create succeeds, the file and d
 * must stay while it is open, never be removed under it. */
struct race_arg {
	char d[PATH_MAX];
	char f[PATH_MAX];
	int rounds;
	int check_held;
};

static int child_race(void *v)
{
	struct race_arg *a = v;
	int made = 0;

	for (int i = 0; i < a->rounds; i++) {
		struct stat st;
		int fd;

		CHILD_CHECK(mkdir(a->d, 0700) == 0 || errno == EEXIST, 1);
		fd = open(a->f, O_RDWR | O_CREAT, 0600);
		if (fd < 0) {
			/* d went away between our mkdir and open: allowed, try again */
			CHILD_CHECK(errno == ENOENT, 2);
			continue;
		}
		made++;
		CHILD_CHECK(write(fd, "x", 1) == 1, 3);
		if (a->check_held) {
			CHILD_CHECK(stat(a->f, &st) == 0, 4);
			CHILD_CHECK(stat(a->d, &st) == 0 && S_ISDIR(st.st_mode), 5);
		}
		CHILD_CHECK(close(fd) == 0, 6);
	}
	CHILD_CHECK(made > 0, 7);
	return 0;
}

static void test_folder_removal_races_create(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct race_arg a[2];
	pid_t pid[2];

	for (int i = 0; i < 2; i++) {
		memset(&a[i], 0, sizeof(a[i]));
		assert_int_equal(pool_path(p, "d", a[i].d, sizeof(a[i].d)), 0);
		assert_int_equal(pool_path(p, i ? "d/b" : "d/a", a[i].f, sizeof(a[i].f)), 0);
		a[i].rounds = itest_rounds(1000);
		a[i].check_held = 1;
	}
	for (int i = 0; i < 2; i++)
		pid[i] = tu_spawn(child_race, &a[i]);
	for (int i = 0; i < 2; i++)
		REAP_OK_WITHIN(pid[i], 10 * CHILD_MS);
	end_with_gone(state, a[0].d);
}

/* Several processes re-creating one name at once: every O_CREAT open must succeed (a removal
 * racing an open of the same name must not turn into ENOENT). */
static int child_same_name(void *v)
{
	const char *f = v;

	uint32_t rounds = (uint32_t)itest_rounds(500);

	for (uint32_t i = 0; i < rounds; i++) {
		int fd = open(f, O_RDWR | O_CREAT, 0600);

		if (fd < 0) {
			fprintf(stderr, "# child %d round %u: open(O_CREAT): %s\n", (int)getpid(),
				i, errname(errno));
			return 1;
		}
		CHILD_CHECK(pwrite(fd, &i, sizeof(i), 0) == sizeof(i), 2);
		CHILD_CHECK(close(fd) == 0, 3);
	}
	return 0;
}

static void test_same_name_created_concurrently(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	pid_t pid[4];

	for (int i = 0; i < 4; i++)
		pid[i] = tu_spawn(child_same_name, f);
	for (int i = 0; i < 4; i++)
		REAP_OK_WITHIN(pid[i], 10 * CHILD_MS);
	end_with_gone(state, f);
}

/* While a mapping is the only user, user.poolfs.refs must show the file in use. */
static void test_refs_show_live_mapping(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	void *m = mapped_file(f, pg, 41);
	char text[1024];
	ssize_t n;

	n = getxattr(f, POOLFS_XATTR_REFS, text, sizeof(text) - 1);
	CHECK(n);
	text[n] = '\0';
	if (strstr(text, "opens 0\n") && strstr(text, "mapped no\n"))
		fail_msg("refs of a mapped file say it is unused:\n%s", text);
	CHECK(munmap(m, pg));
	end_with_gone(state, f);
}

/* ---- scenarios as tables: one row = one scenario, a list of steps with what each expects ----
 *
 * A row names the pool options and the steps; each row is its own cmocka test (named like the
 * scenario, so ITEST_FILTER picks rows as it picks functions). Handles live in slots: a file
 * made by CREATE is also the data the slot's later DATA, PATH_DATA and MAP steps expect. Every
 * row ends with the backing files back to what the pool had after mount. */

enum life_op {
	L_END,
	L_CREATE,    /* path: a new file of len bytes (or pages) of pattern seed, O_RDWR in slot */
	L_OPEN,	     /* path: opened O_RDWR into slot, with the data of slot `from` */
	L_OPEN_RO,   /* the same, O_RDONLY */
	L_OPENDIR,   /* path: a folder handle in slot */
	L_OPEN_PATH, /* path: an O_PATH descriptor (no OPEN reaches the daemon: it keeps no name, but
		      * the data stays while the kernel holds the inode for it) */
	L_PROC_REOPEN, /* slot `from`'s descriptor reopened through /proc/self/fd with `flags` into
			* slot, with the data of slot `len` */
	L_MAP,	       /* slot: a shared read-write mapping of slot `from`'s descriptor */
	L_MAP_RO,      /* the same, read-only */
	L_CLOSE,       /* slot's descriptor */
	L_MUNMAP,      /* slot's mapping */
	L_CHANGE, /* tu_request `req` on path (and `to`, with `flags`); must fail with `expect` if
		   * it is not 0 */
	L_STAYS,  /* path: there now and a little later */
	L_EXISTS, /* path: there now */
	L_ABSENT, /* path: not there now */
	L_GONE,	  /* path: removed within GONE_MS */
	L_GONE_LINGER, /* path: removed within 10 s (linger=1 delays it by 1 s) */
	L_LISTED,
	L_UNLISTED,    /* path: whether the pool root's listing shows it */
	L_DATA,	       /* slot: its descriptor reads the slot's data */
	L_MAP_DATA,    /* slot: its mapping holds the slot's data */
	L_PATH_DATA,   /* path: opened anew, reads the data of slot `from` */
	L_ROOT_INTACT, /* the pool root: still a folder, mode 01777 */
	L_PAUSE,       /* len ms: a pending linger removal must not happen meanwhile */
	/* through the descriptor in slot of a removed entry; each must fail with `expect` or
	 * `also` */
	L_PROC_OPEN, /* reopen it through /proc/self/fd with `flags` */
	L_CREATE_AT, /* openat(O_CREAT) of path in it */
	L_MKDIR_AT,  /* mkdirat of path in it */
};

struct life_step {
	enum life_op op;
	enum tu_req_op req; /* L_CHANGE's request */
	const char *path;
	const char *to;
	int slot;
	int from;
	size_t len;
	int pages;
	uint32_t seed;
	int flags;
	int expect;
	int also;
};

#define LIFE_STEPS 16
#define LIFE_SLOTS 4

struct life_row {
	const char *name;
	const char *opts;
	struct life_step steps[LIFE_STEPS];
};

/* The steps read as a table: one line each (clang-format would spread every one over four). */
/* clang-format off */
#define CREATE(p, s, n, sd) \
	{ .op = L_CREATE, .path = (p), .slot = (s), .len = (n), .seed = (sd) }
#define CREATE_PAGES(p, s, n, sd) \
	{ .op = L_CREATE, .path = (p), .slot = (s), .pages = (n), .seed = (sd) }
#define OPEN(p, s, f) { .op = L_OPEN, .path = (p), .slot = (s), .from = (f) }
#define OPEN_RO(p, s, f) { .op = L_OPEN_RO, .path = (p), .slot = (s), .from = (f) }
#define OPENDIR(p, s) { .op = L_OPENDIR, .path = (p), .slot = (s) }
#define OPEN_PATH(p, s, fl) { .op = L_OPEN_PATH, .path = (p), .slot = (s), .flags = (fl) }
#define PROC_REOPEN(s, via, fl, data) \
	{ .op = L_PROC_REOPEN, .slot = (s), .from = (via), .flags = (fl), .len = (data) }
#define MAP(s, f) { .op = L_MAP, .slot = (s), .from = (f) }
#define MAP_RO(s, f) { .op = L_MAP_RO, .slot = (s), .from = (f) }
#define CLOSE(s) { .op = L_CLOSE, .slot = (s) }
#define MUNMAP(s) { .op = L_MUNMAP, .slot = (s) }
#define MKDIR(p) { .op = L_CHANGE, .req = TU_REQ_MKDIR, .path = (p) }
#define RMDIR(p, e) { .op = L_CHANGE, .req = TU_REQ_RMDIR, .path = (p), .expect = (e) }
#define UNLINK(p) { .op = L_CHANGE, .req = TU_REQ_UNLINK, .path = (p) }
#define RENAME(p, t) { .op = L_CHANGE, .req = TU_REQ_RENAME, .path = (p), .to = (t) }
#define RENAME_NOREP(p, t, e) { .op = L_CHANGE, .req = TU_REQ_RENAME2, .path = (p), .to = (t), \
				.flags = RENAME_NOREPLACE, .expect = (e) }
#define EXCHANGE(p, t) { .op = L_CHANGE, .req = TU_REQ_RENAME2, .path = (p), .to = (t), \
			 .flags = RENAME_EXCHANGE }
#define STAYS(p) { .op = L_STAYS, .path = (p) }
#define EXISTS(p) { .op = L_EXISTS, .path = (p) }
#define ABSENT(p) { .op = L_ABSENT, .path = (p) }
#define GONE(p) { .op = L_GONE, .path = (p) }
#define GONE_LINGER(p) { .op = L_GONE_LINGER, .path = (p) }
#define LISTED(p) { .op = L_LISTED, .path = (p) }
#define UNLISTED(p) { .op = L_UNLISTED, .path = (p) }
#define DATA(s) { .op = L_DATA, .slot = (s) }
#define MAP_DATA(s) { .op = L_MAP_DATA, .slot = (s) }
#define PATH_DATA(p, f) { .op = L_PATH_DATA, .path = (p), .from = (f) }
#define ROOT_INTACT { .op = L_ROOT_INTACT }
#define PAUSE(ms) { .op = L_PAUSE, .len = (ms) }
#define PROC_OPEN(s, fl, e) { .op = L_PROC_OPEN, .slot = (s), .flags = (fl), .expect = (e) }
/* ENOENT, as in a removed folder on tmpfs: from the kernel if it knows the folder is dead, else
 * from the daemon on the kernel's retry (docs/design.md "The LOOKUP/OPEN race"); never ESTALE */
#define CREATE_AT(s, p) { .op = L_CREATE_AT, .path = (p), .slot = (s), .expect = ENOENT, \
			  .also = ENOENT }
#define MKDIR_AT(s, p) { .op = L_MKDIR_AT, .path = (p), .slot = (s), .expect = ENOENT, \
			 .also = ENOENT }
/* clang-format on */

#define NONE "autohold=none"
#define LINGER "autohold=none,linger=1"

static const struct life_row life_rows[] = {
	/* files and handles */
	{"test_closed_file_is_removed",
	 NONE,
	 {CREATE("f", 0, 100, 1), EXISTS("f"), CLOSE(0), GONE("f"), UNLISTED("f")}},
	{"test_removed_after_last_close",
	 NONE,
	 {CREATE("f", 0, 5000, 2), OPEN_RO("f", 1, 0), CLOSE(0), STAYS("f"), LISTED("f"), DATA(1),
	  CLOSE(1), GONE("f"), UNLISTED("f")}},
	{"test_unlink_while_open",
	 NONE,
	 {CREATE("f", 0, 10000, 3), UNLINK("f"), ABSENT("f"), UNLISTED("f"), DATA(0), CLOSE(0)}},
	/* mappings: gone at the first close? a read-only mapping counts as much as a writable one */
	{"test_readonly_mapping_outlives_close",
	 NONE,
	 {CREATE_PAGES("f", 0, 3, 33), OPEN_RO("f", 1, 0), CLOSE(0), MAP_RO(2, 1), CLOSE(1),
	  STAYS("f"), MAP_DATA(2), MUNMAP(2), GONE("f")}},
	/* folders: removed up to (never including) the root, which still takes new entries */
	{"test_folders_removed_up_to_root",
	 NONE,
	 {MKDIR("a"), MKDIR("a/b"), MKDIR("a/b/c"), CREATE("a/b/c/f", 0, 10, 17), STAYS("a"),
	  CLOSE(0), GONE("a/b/c/f"), GONE("a/b/c"), GONE("a/b"), GONE("a"), ROOT_INTACT,
	  CREATE("g", 1, 10, 17), CLOSE(1), GONE("g")}},
	/* an open handle alone does not arm a folder */
	{"test_empty_folder_stays",
	 NONE,
	 {MKDIR("e"), STAYS("e"), OPENDIR("e", 0), CLOSE(0), STAYS("e"), RMDIR("e", 0),
	  ABSENT("e")}},
	{"test_folder_handle_keeps_folder",
	 NONE,
	 {MKDIR("d"), CREATE("d/f", 0, 10, 18), OPENDIR("d", 1), CLOSE(0), GONE("d/f"), STAYS("d"),
	  CLOSE(1), GONE("d")}},
	{"test_rmdir_not_empty",
	 NONE,
	 {MKDIR("d"), CREATE("d/f", 0, 10, 19), RMDIR("d", ENOTEMPTY), EXISTS("d/f"), CLOSE(0),
	  GONE("d")}},
	/* b is empty and never used: it stays, and keeps a */
	{"test_rmdir_of_last_child_removes_parent",
	 NONE,
	 {MKDIR("a"), MKDIR("a/b"), STAYS("a/b"), RMDIR("a/b", 0), GONE("a")}},
	/* the unlinked file is still open but no longer a child */
	{"test_unlink_of_last_child_removes_parent",
	 NONE,
	 {MKDIR("d"), CREATE("d/f", 0, 3000, 20), UNLINK("d/f"), GONE("d"), DATA(0), CLOSE(0)}},
	/* rename */
	{"test_rename_open_file_keeps_data",
	 NONE,
	 {CREATE("a", 0, 7000, 21), RENAME("a", "b"), ABSENT("a"), EXISTS("b"), DATA(0),
	  PATH_DATA("b", 0), STAYS("b"), CLOSE(0), GONE("b")}},
	{"test_rename_noreplace",
	 NONE,
	 {CREATE("a", 0, 1000, 22), CREATE("b", 1, 2000, 23), RENAME_NOREP("a", "b", EEXIST),
	  PATH_DATA("a", 0), PATH_DATA("b", 1), CLOSE(0), CLOSE(1), GONE("a"), GONE("b")}},
	/* the names move with the inodes: closing A's last handle removes the name b */
	{"test_rename_exchange",
	 NONE,
	 {CREATE("a", 0, 1000, 24), CREATE("b", 1, 2000, 25), EXCHANGE("a", "b"), PATH_DATA("a", 1),
	  PATH_DATA("b", 0), DATA(0), DATA(1), CLOSE(0), GONE("b"), STAYS("a"), CLOSE(1),
	  GONE("a")}},
	/* the replaced inode is still open and keeps its data */
	{"test_rename_over_open_file",
	 NONE,
	 {CREATE("a", 0, 1000, 26), CREATE("b", 1, 2000, 27), RENAME("a", "b"), ABSENT("a"),
	  PATH_DATA("b", 0), DATA(1), CLOSE(1), STAYS("b"), CLOSE(0), GONE("b")}},
	{"test_rename_into_folder",
	 NONE,
	 {MKDIR("d"), CREATE("f", 0, 500, 28), RENAME("f", "d/f"), ABSENT("f"), RENAME("d", "e"),
	  ABSENT("d"), PATH_DATA("e/f", 0), CLOSE(0), GONE("e/f"), GONE("e")}},
	/* moving the last child out of an armed folder removes the folder; b is armed too, by a
	 * child that stays while we look */
	{"test_rename_out_empties_folder",
	 NONE,
	 {MKDIR("a"), MKDIR("b"), CREATE("a/f", 0, 100, 39), CREATE("b/keep", 1, 1, 40),
	  RENAME("a/f", "b/f"), GONE("a"), PATH_DATA("b/f", 0), CLOSE(0), GONE("b/f"), STAYS("b"),
	  CLOSE(1), GONE("b")}},
	/* linger=1: removal waits for the delay (1 s), so it is still there right after */
	{"test_linger_keeps_then_removes",
	 LINGER,
	 {CREATE("f", 0, 100, 29), CLOSE(0), EXISTS("f"), PATH_DATA("f", 0), GONE_LINGER("f")}},
	/* in use again: the pending removal must not happen */
	{"test_linger_reopen_keeps",
	 LINGER,
	 {CREATE("f", 0, 100, 30), CLOSE(0), OPEN("f", 1, 0), PAUSE(1500), EXISTS("f"), DATA(1),
	  CLOSE(1), EXISTS("f"), GONE_LINGER("f")}},
	/* the last mapping is gone, the linger delay starts */
	{"test_linger_after_munmap",
	 LINGER,
	 {CREATE_PAGES("f", 0, 1, 38), MAP(1, 0), CLOSE(0), MUNMAP(1), EXISTS("f"),
	  GONE_LINGER("f")}},
	/* removed inodes: an O_PATH descriptor sends no OPEN, so it does not keep the file;
	 * reopening the removed inode through /proc/self/fd reaches the daemon with its node id */
	/* A removed file the kernel still holds (here for an O_PATH descriptor; in general a walk
	 * that reached it before it went) opens as an unlinked file does on tmpfs, never ESTALE:
	 * its name stays gone, and its data goes with the kernel's last reference. */
	{"test_removed_file_opens_while_the_kernel_holds_it",
	 NONE,
	 {CREATE("f", 0, 100, 31), OPEN_PATH("f", 1, 0), CLOSE(0), GONE("f"),
	  PROC_REOPEN(2, 1, O_RDONLY, 0), DATA(2), PROC_REOPEN(3, 1, O_RDWR, 0), DATA(3),
	  ABSENT("f"), UNLISTED("f"), CLOSE(2), CLOSE(3), ABSENT("f"), CLOSE(1)}},
	/* creating inside a removed folder must fail, never resurrect an orphan */
	{"test_create_in_removed_folder",
	 NONE,
	 {MKDIR("d"), CREATE("d/f", 0, 10, 32), OPEN_PATH("d", 1, O_DIRECTORY), CLOSE(0), GONE("d"),
	  CREATE_AT(1, "g"), MKDIR_AT(1, "x"), CLOSE(1)}},
};

#define N_LIFE_ROWS (sizeof(life_rows) / sizeof(life_rows[0]))

/* What the slots hold while a row runs. */
struct life_slot {
	int fd;
	void *map;
	size_t len;
	uint32_t seed;
};

struct life_state {
	struct tu_fixture t; /* first: tu_pool and tu_teardown take *state */
	const struct life_row *row;
	struct life_slot slot[LIFE_SLOTS];
};

static int life_setup(void **state)
{
	const struct life_row *row = *state;

	if (tu_setup_sized(state, row->opts, sizeof(struct life_state)) < 0)
		return -1;
	((struct life_state *)*state)->row = row;
	return 0;
}

/* A step that changes the pool: 0 or its errno, compared with what the step expects. */
static void life_change(const struct pool_fixture *p, const struct life_step *s)
{
	PATH(path, p, s->path);
	PATH(to, p, s->to ? s->to : "");
	const struct tu_req q = {.op = s->req, .path = path, .to = to, .flags = s->flags};
	int e = tu_request(&q);

	if (e != s->expect)
		fail_msg("%s %s: %s, want %s", s->path, s->to ? s->to : "", errname(e),
			 errname(s->expect));
}

/* A step that makes or drops a handle in its slot. */
static void life_handle(struct life_state *ls, const struct life_step *s)
{
	struct life_slot *h = &ls->slot[s->slot];
	struct life_slot *from = &ls->slot[s->from];
	char path[PATH_MAX];

	if (s->path)
		assert_int_equal(pool_path(&ls->t.p, s->path, path, sizeof(path)), 0);
	switch (s->op) {
	case L_CREATE:
		h->len = s->pages ? (size_t)s->pages * (size_t)pg : s->len;
		h->seed = s->seed;
		h->fd = make_file(path, h->len, h->seed);
		break;
	case L_OPEN:
	case L_OPEN_RO:
		*h = *from;
		h->fd = open(path, s->op == L_OPEN ? O_RDWR : O_RDONLY);
		CHECK(h->fd);
		break;
	case L_OPENDIR:
		CHECK(h->fd = open(path, O_RDONLY | O_DIRECTORY));
		break;
	case L_OPEN_PATH:
		CHECK(h->fd = open(path, O_PATH | s->flags));
		break;
	case L_PROC_REOPEN:
		*h = ls->slot[s->len];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", from->fd);
		h->fd = open(path, s->flags);
		if (h->fd < 0)
			fail_msg("reopening a removed file through /proc: %s", errname(errno));
		break;
	case L_MAP:
	case L_MAP_RO:
		*h = *from;
		h->map = mmap(NULL, h->len, s->op == L_MAP ? PROT_READ | PROT_WRITE : PROT_READ,
			      MAP_SHARED, from->fd, 0);
		if (h->map == MAP_FAILED)
			fail_msg("mmap: %s", errname(errno));
		break;
	case L_CLOSE:
		CHECK(close(h->fd));
		break;
	case L_MUNMAP:
		CHECK(munmap(h->map, h->len));
		break;
	default:
		fail_msg("step %d is no handle", (int)s->op);
	}
}

/* A step that only looks. */
static void life_check(struct life_state *ls, const struct life_step *s)
{
	const struct pool_fixture *p = &ls->t.p;
	const struct life_slot *h = &ls->slot[s->slot];
	char path[PATH_MAX];
	struct stat st;

	if (s->path)
		assert_int_equal(pool_path(p, s->path, path, sizeof(path)), 0);
	switch (s->op) {
	case L_STAYS:
		ASSERT_STAYS(path);
		break;
	case L_EXISTS:
		ASSERT_EXISTS(path);
		break;
	case L_ABSENT:
		ASSERT_ABSENT(path);
		break;
	case L_GONE:
		ASSERT_GONE(path);
		break;
	case L_GONE_LINGER:
		if (pool_wait_gone(path, 10000) != 0)
			fail_msg("%s not removed within 10 s with linger=1", path);
		break;
	case L_LISTED:
		assert_int_equal(tu_listed(p->mnt, s->path), 1);
		break;
	case L_UNLISTED:
		assert_int_equal(tu_listed(p->mnt, s->path), 0);
		break;
	case L_DATA:
		expect_fd_pattern(h->fd, h->len, h->seed);
		break;
	case L_MAP_DATA:
		assert_int_equal(pat_check(h->map, h->len, h->seed, 0), -1);
		break;
	case L_PATH_DATA:
		expect_path_pattern(path, ls->slot[s->from].len, ls->slot[s->from].seed);
		break;
	case L_ROOT_INTACT:
		CHECK(stat(p->mnt, &st));
		assert_true(S_ISDIR(st.st_mode));
		assert_int_equal(st.st_mode & 07777, 01777);
		break;
	case L_PAUSE:
		pool_sleep_ms((int)s->len);
		break;
	default:
		fail_msg("step %d is no check", (int)s->op);
	}
}

/* A request through a removed entry's descriptor, which must fail. */
static void life_through_removed(struct life_state *ls, const struct life_step *s)
{
	int fd = ls->slot[s->slot].fd;
	char proc[64];
	long r = -1;

	errno = 0;
	switch (s->op) {
	case L_PROC_OPEN:
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		r = open(proc, s->flags);
		break;
	case L_CREATE_AT:
		r = openat(fd, s->path, O_RDWR | O_CREAT, 0600);
		break;
	case L_MKDIR_AT:
		r = mkdirat(fd, s->path, 0700);
		break;
	default:
		fail_msg("step %d is no request through a removed entry", (int)s->op);
	}
	if (r >= 0 && s->op != L_MKDIR_AT)
		close((int)r);
	if (r != -1 || (errno != s->expect && errno != s->also))
		fail_msg("step %d through a removed entry: %ld %s, want %s", (int)s->op, r,
			 r == -1 ? errname(errno) : "-", errname(s->expect));
}

static void test_life_row(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct life_state *ls = *state;

	for (const struct life_step *s = ls->row->steps; s->op != L_END; s++) {
		if (s->op == L_CHANGE)
			life_change(p, s);
		else if (s->op >= L_PROC_OPEN)
			life_through_removed(ls, s);
		else if (s->op >= L_STAYS)
			life_check(ls, s);
		else
			life_handle(ls, s);
	}
	tu_backing_back_to_base(state);
}

static int setup_linger(void **state)
{
	return tu_setup(state, "autohold=none,linger=1");
}

/* A file that is unused, on its way out (here: lingering), is named to the kernel without a
 * cache timeout: each walk to it asks the daemon again, so a poller waiting for the name to
 * vanish sees it go from the daemon's own answer (pool_name_cached_now). The kernel's own cache
 * of the name is dropped first (drop_caches: root only). */
static void test_unused_name_is_looked_up_again(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(d, p, "u-dir");
	PATH(f, p, "u-dir/u-file");
	struct stat st;
	int fd, dirfd, drop;
	long before;

	CHECK(mkdir(d, 0700));
	/* walks from the folder: its own name sits in the shared root, never cached */
	CHECK(dirfd = open(d, O_RDONLY | O_DIRECTORY));
	CHECK(fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600));
	CHECK(close(fd)); /* unused: gone after linger=1 */
	drop = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (drop < 0)
		TU_SKIP("not root: /proc/sys/vm/drop_caches is not writable (%s)", errname(errno));
	CHECK(write(drop, "2", 1));
	CHECK(close(drop));
	CHECK(fstatat(dirfd, "u-file", &st, 0)); /* the first LOOKUP since the cache was dropped */
	before = itest_ops_count(p, "lookup");
	for (int i = 0; i < 5; i++)
		CHECK(fstatat(dirfd, "u-file", &st, 0));
	if (itest_ops_count(p, "lookup") - before < 5)
		fail_msg("5 stat() of an unused file made %ld LOOKUPs: its name was cached",
			 itest_ops_count(p, "lookup") - before);
	CHECK(close(dirfd));
	ASSERT_GONE(f);
	ASSERT_GONE(d);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_none, tu_teardown)

/* The scenarios that need more than steps: other processes, sockets, loops, partial unmaps. */
static const struct CMUnitTest scenarios[] = {
	T(test_mapping_outlives_close),
	T(test_only_mapped_files_are_watched),
	T(test_long_lived_mappings_cost_no_probes),
	T(test_write_only_handles_never_hide_a_mapping),
	T(test_two_mappers_two_processes),
	T(test_fork_inherits_fd),
	T(test_fork_inherits_mapping),
	T(test_partial_munmap),
	T(test_sigkill_while_mapped),
	T(test_unlink_while_mapped),
	T(test_listing_opened_before_a_removal),
	cmocka_unit_test_setup_teardown(test_private_listing_opened_before_a_removal,
					setup_private_none, tu_teardown),
	T(test_private_mapping_outlives_close),
	T(test_many_users_any_order),
	T(test_fd_passed_over_socket),
	T(test_exec_inherits_fd_unless_cloexec),
	T(test_recreate_while_old_mapping_alive),
	T(test_create_loop_no_wait),
	T(test_create_loop_with_wait),
	T(test_every_closed_file_goes),
	T(test_same_name_created_concurrently),
	T(test_folder_removal_races_create),
	T(test_refs_show_live_mapping),
	cmocka_unit_test_setup_teardown(test_unused_name_is_looked_up_again, setup_linger,
					tu_teardown),
};

#define N_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

int main(void)
{
	struct CMUnitTest tests[N_LIFE_ROWS + N_SCENARIOS];

	rows_to_tests(tests, life_rows, sizeof(life_rows[0]), N_LIFE_ROWS, test_life_row,
		      life_setup, tu_teardown);
	memcpy(tests + N_LIFE_ROWS, scenarios, sizeof(scenarios));
	pg = sysconf(_SC_PAGESIZE);
	return ITEST_RUN(tests);
}
