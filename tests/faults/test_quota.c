/* Space limits (docs/interface.md "Limits"): max_size=BYTES for the whole pool (ENOSPC)
 * and max_user_size=BYTES per user (EDQUOT) at ftruncate, fallocate and write; a full pool never
 * kills a mapper with SIGBUS; other files stay intact; statfs reports the limit; freed space is
 * usable again; bad option values make the daemon exit 2. Real mounts, one pool per test. */
#include "ftest.h"

#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>

#define MiB (1024L * 1024L)
#define POOL_SIZE (64 * MiB)
#define USER_SIZE (16 * MiB)

static int setup_pool64(void **state)
{
	return tu_setup(state, "autohold=none,max_size=64M");
}

static int setup_user16(void **state)
{
	return tu_setup(state, "autohold=none,max_user_size=16M");
}

/* Create rel (O_EXCL), registered for teardown. */
static int create_file(const struct pool_fixture *p, const char *rel)
{
	PATH(path, p, rel);
	int fd = ftest_fd(open(path, O_RDWR | O_CREAT | O_EXCL, 0600));

	if (fd < 0)
		fail_msg("create %s: %s", path, errname(errno));
	return fd;
}

static void fill_pattern(int fd, size_t len, uint32_t seed)
{
	char *buf = malloc(MiB);

	assert_non_null(buf);
	for (size_t off = 0; off < len; off += MiB) {
		size_t n = len - off < (size_t)MiB ? len - off : (size_t)MiB;

		pat_fill(buf, n, seed, off);
		if (pwrite_all(fd, buf, n, (off_t)off) != (ssize_t)n) {
			int e = errno;

			free(buf);
			fail_msg("pwrite of %zu bytes at %zu: %s", n, off, errname(e));
		}
	}
	free(buf);
}

/* write() pattern chunks at the end of fd until the pool (or quota) is full to the page:
 * 1 MiB chunks, halved down to one page each time a chunk is refused with ENOSPC or EDQUOT, so
 * a daemon that refuses a whole write that does not fit and one that writes what fits both end
 * with a full pool. Bounded by max_bytes, so a limit that is not enforced cannot loop for ever.
 * Returns the bytes written; *err gets the errno of the final failure, or 0 if none came. */
static size_t write_until_error(int fd, uint32_t seed, size_t max_bytes, int *err)
{
	char *buf = malloc(MiB);
	size_t chunk = MiB, total = 0;

	assert_non_null(buf);
	*err = 0;
	while (total <= max_bytes) {
		ssize_t n;

		pat_fill(buf, chunk, seed, total);
		n = write(fd, buf, chunk);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if ((errno == ENOSPC || errno == EDQUOT) && chunk > 4096) {
				chunk /= 2;
				continue;
			}
			*err = errno;
			break;
		}
		if (n == 0) {
			*err = -1;
			break;
		}
		total += (size_t)n;
	}
	free(buf);
	return total;
}

static void check_statfs_limit(const struct pool_fixture *p, unsigned long long limit)
{
	struct statvfs sv;
	unsigned long long total;

	CHECK(statvfs(p->mnt, &sv));
	total = (unsigned long long)sv.f_blocks * sv.f_frsize;
	if (total < limit - MiB || total > limit + MiB)
		fail_msg("statfs: f_blocks %llu * f_frsize %lu = %llu bytes, want about %llu",
			 (unsigned long long)sv.f_blocks, (unsigned long)sv.f_frsize, total, limit);
}

static unsigned long long statfs_free(const struct pool_fixture *p)
{
	struct statvfs sv;

	CHECK(statvfs(p->mnt, &sv));
	return (unsigned long long)sv.f_bavail * sv.f_frsize;
}

/* bytes of `user UID entries N bytes X` in user.poolfs.stat of path, or -1 if the line is not
 * there; *entries gets N. Fails the test on a getxattr error. */
static long long stat_user_bytes(const char *path, unsigned uid, long long *entries)
{
	char buf[8192] = "", key[64]; /* read into all but buf's last byte: it stays a string */
	const char *at;
	long long e, b;

	if (getxattr(path, POOLFS_XATTR_STAT, buf, sizeof(buf) - 1) < 0)
		fail_msg("getxattr(%s, user.poolfs.stat): %s", path, errname(errno));
	snprintf(key, sizeof(key), "user %u entries ", uid);
	for (at = buf; (at = strstr(at, key)); at++)
		if (at == buf || at[-1] == '\n')
			break;
	if (!at)
		return -1;
	if (sscanf(at, "user %*u entries %lld bytes %lld", &e, &b) != 2)
		return -1;
	if (entries)
		*entries = e;
	return b;
}

/* Wait until statfs says at least `want` bytes are free. */
static void wait_statfs_free(const struct pool_fixture *p, unsigned long long want)
{
	long long start = pool_now_ms();
	unsigned long long n;

	while ((n = statfs_free(p)) < want) {
		if (pool_now_ms() >= start + GONE_MS)
			fail_msg("statfs says %llu bytes free after %d ms, want %llu", n, GONE_MS,
				 want);
		pool_sleep_ms(2);
	}
	fprintf(stderr, "# %llu bytes free after %lld ms\n", n, pool_now_ms() - start);
}

/* ---- max_size ---- */

static void test_statfs_reports_pool_limit(void **state)
{
	struct pool_fixture *p = tu_pool(state);

	check_statfs_limit(p, POOL_SIZE);
	/* an empty pool has (nearly) all of it free */
	if (statfs_free(p) < (unsigned long long)(POOL_SIZE - 2 * MiB))
		fail_msg("empty pool: statfs says %llu bytes free of %ld", statfs_free(p),
			 POOL_SIZE);
}

static void test_ftruncate_over_pool_limit(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = create_file(p, "f");
	struct stat st;

	fill_pattern(fd, 4096, 11);
	CHECK_ERR(ftruncate(fd, 256 * MiB), ENOSPC);
	CHECK(fstat(fd, &st));
	assert_int_equal(st.st_size, 4096);
	CHECK_ERR(truncate(f, 256 * MiB), ENOSPC);
	CHECK(stat(f, &st));
	assert_int_equal(st.st_size, 4096);
	/* just past the pool: still refused */
	CHECK_ERR(ftruncate(fd, POOL_SIZE + MiB), ENOSPC);
	assert_pattern(fd, 4096, 11, "f after refused ftruncates");

	/* within the limit it works, and shrinking back too */
	CHECK(ftruncate(fd, 32 * MiB));
	CHECK(fstat(fd, &st));
	assert_int_equal(st.st_size, 32 * MiB);
	/* 32 MiB are taken: another 40 MiB do not fit */
	{
		int fd2 = create_file(p, "g");

		CHECK_ERR(ftruncate(fd2, 40 * MiB), ENOSPC);
		CHECK(fstat(fd2, &st));
		assert_int_equal(st.st_size, 0);
		CHECK(ftest_close(fd2));
	}
	CHECK(ftruncate(fd, 4096));
	assert_pattern(fd, 4096, 11, "f after grow and shrink");
	/* the space given back by the shrink is usable */
	CHECK(ftruncate(fd, 60 * MiB));
	CHECK(ftest_close(fd));
	ASSERT_GONE(f);
	tu_wait_pool_entries(p, 0, GONE_MS);
}

static void test_fallocate_over_pool_limit(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	int fa = create_file(p, "a");
	int fb = create_file(p, "b");
	struct stat st;

	CHECK_ERR(fallocate(fa, 0, 0, 80 * MiB), ENOSPC);
	CHECK(fstat(fa, &st));
	assert_int_equal(st.st_size, 0);
	CHECK(fallocate(fa, 0, 0, 40 * MiB));
	CHECK(fstat(fa, &st));
	assert_int_equal(st.st_size, 40 * MiB);
	fill_pattern(fa, 40 * MiB, 21);

	/* 40 MiB taken: 32 more do not fit, with or without KEEP_SIZE */
	CHECK_ERR(fallocate(fb, 0, 0, 32 * MiB), ENOSPC);
	CHECK(fstat(fb, &st));
	assert_int_equal(st.st_size, 0);
	CHECK_ERR(fallocate(fb, FALLOC_FL_KEEP_SIZE, 0, 32 * MiB), ENOSPC);
	CHECK(fstat(fb, &st));
	assert_int_equal(st.st_size, 0);
	/* growing a past the pool from its end */
	CHECK_ERR(fallocate(fa, 0, 40 * MiB, 32 * MiB), ENOSPC);
	CHECK(fstat(fa, &st));
	assert_int_equal(st.st_size, 40 * MiB);

	/* what fits still fits */
	CHECK(fallocate(fb, 0, 0, 16 * MiB));
	assert_pattern(fa, 40 * MiB, 21, "a after refused fallocates");
	CHECK(ftest_close(fa));
	CHECK(ftest_close(fb));
	tu_wait_pool_entries(p, 0, GONE_MS);
}

static void test_write_past_pool_limit(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(a, p, "a");
	PATH(b, p, "b");
	int fa = create_file(p, "a");
	int fb = create_file(p, "b");
	int fc, again, err;
	size_t total;

	fill_pattern(fa, 3 * MiB + 123, 31);
	total = write_until_error(fb, 32, 2 * POOL_SIZE, &err);
	fprintf(stderr, "# wrote %zu bytes into b before %s\n", total, errname(err));
	if (err != ENOSPC)
		fail_msg("write loop: %zu bytes written, then %s, want ENOSPC", total,
			 err > 0 ? errname(err)
			 : err	 ? "EOF"
				 : "no error");
	if (total > (size_t)POOL_SIZE - 3 * MiB)
		fail_msg("write loop: %zu bytes fit next to a's 3 MiB in a 64 MiB pool", total);
	if (total < (size_t)POOL_SIZE - 4 * MiB)
		fail_msg("write loop: ENOSPC after only %zu bytes", total);
	/* once full, stays refused */
	CHECK_ERR(write(fb, "x", 1), ENOSPC);
	check_statfs_limit(p, POOL_SIZE);
	if (statfs_free(p) > (unsigned long long)(2 * MiB))
		fail_msg("full pool: statfs says %llu bytes free", statfs_free(p));

	/* the other file, and everything b got, are intact */
	assert_pattern(fa, 3 * MiB + 123, 31, "a next to a full pool");
	assert_pattern(fb, total, 32, "b (what was accepted)");
	again = ftest_fd(open(a, O_RDONLY));
	CHECK(again);
	assert_pattern(again, 3 * MiB + 123, 31, "a through a new open");
	CHECK(ftest_close(again));

	/* delete b: its space is usable again */
	CHECK(unlink(b));
	CHECK(ftest_close(fb));
	ASSERT_GONE(b);
	tu_wait_pool_entries(p, 1, GONE_MS);
	/* close() sends RELEASE asynchronously: the space comes back a little later */
	wait_statfs_free(p, 56 * MiB);
	fc = create_file(p, "c");
	fill_pattern(fc, 56 * MiB, 33);
	assert_pattern(fc, 56 * MiB, 33, "c in the freed space");
	assert_pattern(fa, 3 * MiB + 123, 31, "a after c");
	CHECK(ftest_close(fc));
	CHECK(ftest_close(fa));
	tu_wait_pool_entries(p, 0, GONE_MS);
}

/* user.poolfs.stat counts what the backing store holds while the files are open: "bytes" of
 * the pool and of the user's line are the reserved bytes (docs/interface.md), whichever path the
 * data took (write() past the end, ftruncate, fallocate). */
static void test_stat_counts_bytes(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	int fa = create_file(p, "a");
	int fb = create_file(p, "b");
	int fc = create_file(p, "c");
	long long pool_bytes = -1, user_bytes, entries = -1;
	long long want = 8 * MiB + 4 * MiB + 2 * MiB;
	char buf[8192];
	ssize_t n;

	fill_pattern(fa, 8 * MiB, 91);
	CHECK(ftruncate(fb, 4 * MiB));
	CHECK(fallocate(fc, 0, 0, 2 * MiB));
	n = getxattr(p->mnt, POOLFS_XATTR_STAT, buf, sizeof(buf) - 1);
	CHECK(n);
	buf[n] = '\0';
	{
		const char *at = strstr(buf, "\nbytes ");

		if (!at || sscanf(at, "\nbytes %lld", &pool_bytes) != 1)
			fail_msg("user.poolfs.stat has no bytes line:\n%s", buf);
	}
	user_bytes = stat_user_bytes(p->mnt, 0, &entries);
	fprintf(stderr, "# pool bytes %lld, uid 0 entries %lld bytes %lld; want %lld\n", pool_bytes,
		entries, user_bytes, want);
	assert_int_equal(tu_pool_entries(p), 3);
	assert_int_equal(entries, 3);
	if (pool_bytes != want || user_bytes != want)
		fail_msg("user.poolfs.stat: pool bytes %lld, uid 0 bytes %lld, want %lld "
			 "(8 MiB written, 4 MiB ftruncated, 2 MiB fallocated)",
			 pool_bytes, user_bytes, want);
	CHECK(ftest_close(fa));
	CHECK(ftest_close(fb));
	CHECK(ftest_close(fc));
	tu_wait_pool_entries(p, 0, GONE_MS);
}

/* The mapper: maps m (already grown by ftruncate), waits until the pool is full, then writes
 * every page. A missing reservation would kill it with SIGBUS (exit 128+7). */
struct mapper {
	char path[PATH_MAX];
	size_t len;
	struct chan c;
};

static int mapper_child(void *v)
{
	struct mapper *m = v;
	unsigned char *map;

	chan_child(&m->c);
	map = tu_map_path(m->path, m->len);
	if (map == MAP_FAILED)
		return 2;
	if (chan_put(m->c.up[1]) != 0)
		return 3;
	if (chan_get(m->c.down[0], 10 * CHILD_MS) != 0)
		return 4;
	for (size_t off = 0; off < m->len; off += 4096)
		pat_fill(map + off, 4096, 41, off);
	if (msync(map, m->len, MS_SYNC) == -1) {
		fprintf(stderr, "# mapper: msync: %s\n", errname(errno));
		return 5;
	}
	if (munmap(map, m->len) == -1)
		return 6;
	return 0;
}

static void test_mapper_survives_full_pool(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct mapper m = {.len = 16 * MiB};
	int fm = create_file(p, "m");
	int ff, err, rc;
	size_t total;
	pid_t pid;

	assert_int_equal(pool_path(p, "m", m.path, sizeof(m.path)), 0);
	CHECK(ftruncate(fm, (off_t)m.len));
	chan_open(&m.c);
	pid = tu_spawn(mapper_child, &m);
	chan_parent(&m.c);
	if (chan_get(m.c.up[0], CHILD_MS) != 0)
		fail_msg("mapper not ready (exit %d)", tu_reap(pid, CHILD_MS));

	/* fill the rest of the pool with another file */
	ff = create_file(p, "fill");
	total = write_until_error(ff, 42, 2 * POOL_SIZE, &err);
	fprintf(stderr, "# filled %zu bytes next to the 16 MiB mapping before %s\n", total,
		errname(err));
	if (err != ENOSPC)
		fail_msg("fill: %zu bytes, then %s, want ENOSPC", total,
			 err > 0 ? errname(err) : "no error");
	if (total > (size_t)(POOL_SIZE - 16 * MiB))
		fail_msg("fill: %zu bytes fit next to a 16 MiB file in a 64 MiB pool", total);

	CHECK_0(chan_put(m.c.down[1]));
	rc = tu_reap(pid, CHILD_MS);
	chan_close_parent(&m.c);
	if (rc == 128 + SIGBUS)
		fail_msg("the mapper was killed by SIGBUS writing a file grown by ftruncate");
	if (rc != 0)
		fail_msg("mapper ended with %d", rc);
	assert_pattern(fm, m.len, 41, "m written through the mapping");
	assert_pattern(ff, total, 42, "fill");
	CHECK(ftest_close(ff));
	CHECK(ftest_close(fm));
	tu_wait_pool_entries(p, 0, GONE_MS);
}

/* ---- max_user_size ---- */

/* The errno of a write() past max_user_size: EDQUOT from the daemon on the page-cache path; on
 * passthrough the write never reaches the daemon, and the user's own tmpfs refuses it with
 * ENOSPC (docs/interface.md "Limits"). */
static int user_write_errno(const struct pool_fixture *p)
{
	char text[4096];
	ssize_t n = getxattr(p->mnt, POOLFS_XATTR_STAT, text, sizeof(text) - 1);

	if (n < 0)
		return -1;
	text[n] = '\0';
	return strstr(text, "datapath passthrough\n") ? ENOSPC : EDQUOT;
}

/* The steps of other_fills_quota() after step 1, with buf its MiB of scratch: each failed step
 * returns at once, so buf is freed by the caller. */
static int other_fills_quota_steps(void *arg, char *buf)
{
	const struct pool_fixture *p = arg;

	char path[PATH_MAX], stat_buf[8192];
	struct stat st;
	ssize_t n;
	int fd;

	USER_TRUE(2, pool_path(p, "other", path, sizeof(path)) == 0);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	USER_OK(3, fd);
	for (long off = 0; off < USER_SIZE; off += MiB) {
		pat_fill(buf, MiB, 51, (uint64_t)off);
		USER_TRUE(4, pwrite_all(fd, buf, MiB, off) == MiB);
	}
	USER_EXPECT(5, pwrite(fd, buf, 4096, USER_SIZE), user_write_errno(p));
	USER_EXPECT(6, ftruncate(fd, USER_SIZE + MiB), EDQUOT);
	USER_EXPECT(7, fallocate(fd, 0, 0, USER_SIZE + MiB), EDQUOT);
	USER_OK(8, fstat(fd, &st));
	USER_TRUE(9, st.st_size == USER_SIZE);
	for (long off = 0; off < USER_SIZE; off += MiB) {
		USER_TRUE(10, pread_all(fd, buf, MiB, off) == MiB);
		USER_TRUE(11, pat_check(buf, MiB, 51, (uint64_t)off) < 0);
	}
	/* the usage it sees: its own line with its 16 MiB, and not root's */
	n = getxattr(p->mnt, POOLFS_XATTR_STAT, stat_buf, sizeof(stat_buf) - 1);
	USER_OK(12, n);
	stat_buf[n] = '\0';
	for (char *c = stat_buf; *c; c++)
		if (*c == '\n' && c[1])
			*c = '|';
	fprintf(stderr, "# user.poolfs.stat as uid %d: %s", OTHER_UID, stat_buf);
	for (char *c = stat_buf; *c; c++)
		if (*c == '|')
			*c = '\n';
	USER_TRUE(13, strstr(stat_buf, "user 65534 entries 1 bytes 16777216 meta 0\n") != NULL);
	USER_TRUE(14, strstr(stat_buf, "user 0 ") == NULL);
	USER_TRUE(15, strstr(stat_buf, "max_user_size 16777216\n") != NULL);
	USER_OK(16, close(fd));
	return 0;
}

/* The other user: its own 16 MiB fit whatever root uses; a byte more does not. */
static int other_fills_quota(void *v)
{
	return tu_steps_with_buffer(MiB, other_fills_quota_steps, v);
}

static void test_user_quota(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	int fa = create_file(p, "a");
	int fb = create_file(p, "b");
	long long used, entries = -1;
	struct stat st;
	size_t total;
	int err;

	/* 12 of root's 16 MiB */
	CHECK(ftruncate(fa, 12 * MiB));
	fill_pattern(fa, 12 * MiB, 61);
	CHECK_ERR(ftruncate(fa, USER_SIZE + MiB), EDQUOT);
	CHECK(fstat(fa, &st));
	assert_int_equal(st.st_size, 12 * MiB);
	CHECK_ERR(ftruncate(fb, 8 * MiB), EDQUOT);
	CHECK(fstat(fb, &st));
	assert_int_equal(st.st_size, 0);
	CHECK_ERR(fallocate(fb, 0, 0, 8 * MiB), EDQUOT);
	CHECK(fstat(fb, &st));
	assert_int_equal(st.st_size, 0);

	total = write_until_error(fb, 62, 2 * USER_SIZE, &err);
	fprintf(stderr, "# root wrote %zu bytes into b before %s\n", total, errname(err));
	if (err != user_write_errno(p))
		fail_msg("write loop: %zu bytes, then %s, want %s", total,
			 err > 0 ? errname(err) : "no error", errname(user_write_errno(p)));
	if (total > (size_t)(4 * MiB) || total < (size_t)(4 * MiB - 64 * 1024))
		fail_msg("write loop: %zu bytes fit next to 12 MiB under a 16 MiB quota", total);
	CHECK_ERR(fallocate(fb, 0, 0, (off_t)total + MiB), EDQUOT);

	/* another user has a quota of its own */
	AS_OTHER_OK(other_fills_quota, p);

	/* root's files are intact, and root's line counts them */
	assert_pattern(fa, 12 * MiB, 61, "a");
	assert_pattern(fb, total, 62, "b");
	used = stat_user_bytes(p->mnt, 0, &entries);
	fprintf(stderr, "# root's line: entries %lld bytes %lld\n", entries, used);
	if (used < 0)
		fail_msg("user.poolfs.stat has no line for uid 0");
	assert_int_equal(entries, 2);
	if (used < 12 * MiB + (long long)total || used > USER_SIZE)
		fail_msg("user.poolfs.stat: root uses %lld bytes, want %lld..%ld", used,
			 12 * MiB + (long long)total, USER_SIZE);

	/* freeing a gives the room back */
	CHECK(ftest_close(fa));
	{
		PATH(a, p, "a");

		ASSERT_GONE(a);
	}
	CHECK(ftruncate(fb, 14 * MiB));
	CHECK(ftest_close(fb));
	tu_wait_pool_entries(p, 0, GONE_MS);
}

/* ---- bad option values ---- */

static void test_bad_size_options(void **state)
{
	static const char *const bad[] = {
		"max_size=12X",
		"max_size=-1",
		"max_user_size=12X",
		"max_user_size=-1",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pool_fixture f;
		int r = pool_mount(&f, bad[i]);

		fprintf(stderr, "# -o %s: pool_mount gave %d (%s)\n", bad[i], r, errname(-r));
		if (r == 0) {
			pool_unmount(&f);
			fail_msg("the daemon mounted with -o %s", bad[i]);
		}
		/* the harness maps exit status 2 (bad option) to -EINVAL */
		if (r != -EINVAL)
			fail_msg("-o %s: pool_mount gave %s, want EINVAL (daemon exit status 2)",
				 bad[i], errname(-r));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_statfs_reports_pool_limit, setup_pool64,
						ftest_teardown),
		cmocka_unit_test_setup_teardown(test_ftruncate_over_pool_limit, setup_pool64,
						ftest_teardown),
		cmocka_unit_test_setup_teardown(test_fallocate_over_pool_limit, setup_pool64,
						ftest_teardown),
		cmocka_unit_test_setup_teardown(test_write_past_pool_limit, setup_pool64,
						ftest_teardown),
		cmocka_unit_test_setup_teardown(test_mapper_survives_full_pool, setup_pool64,
						ftest_teardown),
		cmocka_unit_test_setup_teardown(test_stat_counts_bytes, setup_pool64,
						ftest_teardown),
		cmocka_unit_test_setup_teardown(test_user_quota, setup_user16, ftest_teardown),
		cmocka_unit_test(test_bad_size_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
