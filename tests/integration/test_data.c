/* Data integrity and the file-system surface: read/write/mmap against a reference buffer (seeded),
 * a large file, concurrent writers, refused file types and flags, names, xattrs, statfs, and a
 * clean unmount. Files are kept open while checked: with autohold=none a closed file goes. */
#include "itest.h"

#include <dirent.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <time.h>

static long pg;
static uint32_t seed;

TU_SETUP(setup_none, "autohold=none")
TU_SETUP(setup_default, "")

/* xorshift64*: the whole random test replays from its seed */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* Mostly small sizes, sometimes up to max: both paths (partial pages, whole MiB) get exercised. */
static size_t rnd_len(size_t max)
{
	size_t cap = rnd_below(4) == 0 ? max : (rnd_below(2) ? 4096 : 64);

	if (cap > max)
		cap = max;
	return cap ? 1 + rnd_below(cap) : 0;
}

static void rnd_fill(unsigned char *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)(rnd() >> 56);
}

static int create_open(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);

	if (fd < 0)
		fail_msg("create %s: %s", path, errname(errno));
	return fd;
}

/* ---- read/write/mmap against a reference ---- */

#define REF_MAX (8u << 20)

enum op { OP_WRITE, OP_READ, OP_TRUNC, OP_MAPWRITE, OP_MAPREAD, OP_FSYNC, OP_REOPEN, OP_N };
static const char *op_names[] = {"pwrite",    "pread", "ftruncate", "mmap-write",
				 "mmap-read", "fsync", "reopen"};

static void test_random_rw_mmap(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	unsigned char *ref = calloc(1, REF_MAX);
	unsigned char *buf = malloc(REF_MAX + 4096);
	int keeper = create_open(f);
	int fd = open(f, O_RDWR);
	size_t size = 0;
	struct stat st;

	assert_non_null(ref);
	assert_non_null(buf);
	CHECK(fd);
	rng_state = seed ? seed : 1;
	fprintf(stderr, "# test_random_rw_mmap seed %u\n", seed);

	for (int i = 0; i < 4000; i++) {
		enum op op = (enum op)rnd_below(OP_N);
		size_t off = 0, len = 0;

		switch (op) {
		case OP_WRITE:
			off = rnd_below(REF_MAX);
			len = rnd_len(REF_MAX - off);
			rnd_fill(ref + off, len);
			if (pwrite_all(fd, ref + off, len, off) != (ssize_t)len)
				fail_msg("op %d %s off %zu len %zu: %s (seed %u)", i, op_names[op],
					 off, len, errname(errno), seed);
			if (off + len > size)
				size = off + len;
			break;
		case OP_READ: {
			ssize_t n, want;

			off = rnd_below(size + 8192);
			len = rnd_len(REF_MAX);
			want = off >= size ? 0 : (ssize_t)(size - off < len ? size - off : len);
			n = pread_all(fd, buf, len, off);
			if (n != want)
				fail_msg(
					"op %d %s off %zu len %zu: got %zd bytes, want %zd (seed %u)",
					i, op_names[op], off, len, n, want, seed);
			if (want > 0 && memcmp(buf, ref + off, want) != 0)
				fail_msg("op %d %s off %zu len %zu: data differs (seed %u)", i,
					 op_names[op], off, len, seed);
			break;
		}
		case OP_TRUNC:
			/* rarely, or the file stays small */
			if (rnd_below(8))
				continue;
			len = rnd_below(REF_MAX);
			if (ftruncate(fd, len) == -1)
				fail_msg("op %d ftruncate %zu: %s (seed %u)", i, len,
					 errname(errno), seed);
			if (len < size)
				memset(ref + len, 0, size - len);
			size = len;
			break;
		case OP_MAPWRITE:
		case OP_MAPREAD: {
			size_t moff, mlen;
			unsigned char *m;

			if (size == 0)
				continue;
			off = rnd_below(size);
			len = rnd_len(size - off);
			moff = off & ~(size_t)(pg - 1);
			mlen = off + len - moff;
			m = mmap(NULL, mlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, moff);
			if (m == MAP_FAILED)
				fail_msg("op %d mmap off %zu len %zu: %s (seed %u)", i, moff, mlen,
					 errname(errno), seed);
			if (op == OP_MAPWRITE) {
				rnd_fill(ref + off, len);
				memcpy(m + (off - moff), ref + off, len);
				if (rnd_below(2) && msync(m, mlen, MS_SYNC) == -1)
					fail_msg("op %d msync: %s", i, errname(errno));
			} else if (memcmp(m + (off - moff), ref + off, len) != 0) {
				fail_msg("op %d %s off %zu len %zu: data differs (seed %u)", i,
					 op_names[op], off, len, seed);
			}
			CHECK(munmap(m, mlen));
			break;
		}
		case OP_FSYNC:
			CHECK(rnd_below(2) ? fsync(fd) : fdatasync(fd));
			break;
		case OP_REOPEN:
			CHECK(close(fd));
			fd = open(f, O_RDWR);
			if (fd < 0)
				fail_msg("op %d reopen: %s (seed %u)", i, errname(errno), seed);
			break;
		default:
			break;
		}
		CHECK(fstat(fd, &st));
		if ((size_t)st.st_size != size)
			fail_msg("op %d %s off %zu len %zu: size %jd, want %zu (seed %u)", i,
				 op_names[op], off, len, (intmax_t)st.st_size, size, seed);
	}

	/* everything, by read and by one mapping of the whole file, through a fresh descriptor */
	CHECK(close(fd));
	fd = open(f, O_RDONLY);
	CHECK(fd);
	assert_int_equal(pread_all(fd, buf, REF_MAX + 4096, 0), size);
	if (memcmp(buf, ref, size) != 0)
		fail_msg("final read differs (seed %u)", seed);
	if (size) {
		unsigned char *m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);

		assert_true(m != MAP_FAILED);
		if (memcmp(m, ref, size) != 0)
			fail_msg("final mapping differs (seed %u)", seed);
		CHECK(munmap(m, size));
	}
	CHECK(close(fd));
	CLOSE_UNTIL_GONE(keeper, f);
	free(ref);
	free(buf);
}

/* ---- a large file ---- */

#define LARGE (64u << 20)

static void test_large_file(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "big");
	size_t chunk = 1u << 20;
	unsigned char *buf = malloc(chunk);
	int fd = create_open(f);
	int rfd;
	struct stat st;
	unsigned char *m;

	assert_non_null(buf);
	for (size_t off = 0; off < LARGE; off += chunk) {
		pat_fill(buf, chunk, 41, off);
		if (pwrite_all(fd, buf, chunk, off) != (ssize_t)chunk)
			fail_msg("write at %zu: %s", off, errname(errno));
	}
	CHECK(fsync(fd));
	CHECK(fstat(fd, &st));
	assert_int_equal(st.st_size, LARGE);

	/* back through another descriptor, in pieces that straddle pages and requests */
	rfd = open(f, O_RDONLY);
	CHECK(rfd);
	for (size_t off = 0; off < LARGE;) {
		size_t len = 777777;
		ssize_t n;
		long bad;

		if (len > LARGE - off)
			len = LARGE - off;
		n = pread_all(rfd, buf, len, off);
		if (n != (ssize_t)len)
			fail_msg("read at %zu: %zd (%s)", off, n, errname(errno));
		bad = pat_check(buf, len, 41, off);
		if (bad >= 0)
			fail_msg("data differs at %zu", off + (size_t)bad);
		off += len;
	}
	m = mmap(NULL, LARGE, PROT_READ, MAP_SHARED, rfd, 0);
	assert_true(m != MAP_FAILED);
	{
		long bad = pat_check(m, LARGE, 41, 0);

		if (bad >= 0)
			fail_msg("mapping differs at %ld", bad);
	}
	CHECK(munmap(m, LARGE));
	CHECK(close(rfd));
	CLOSE_UNTIL_GONE(fd, f);
	free(buf);
}

/* ---- concurrent processes ---- */

struct writer {
	char path[PATH_MAX];
	size_t off, len;       /* the range this writer owns (stripe: the first stripe) */
	size_t stripe, stride; /* stripe > 0: owns [off + k*stride, +stripe) for all k */
	size_t total;	       /* file size, for striped writers */
	int start_fd;	       /* read end of the start pipe: EOF means go */
	int start_wfd;	       /* its write end, which every writer must close for EOF to come */
	int use_mmap;
	uint32_t seed;
};

/* The writer's stripes, through a mapping or with pwrite from buf (w->stripe bytes): 0, or the
 * number of the step that failed. */
static int write_stripes(const struct writer *w, int fd, unsigned char *buf)
{
	unsigned char *m = NULL;

	if (w->use_mmap) {
		m = mmap(NULL, w->total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		CHILD_CHECK(m != MAP_FAILED, 4);
	}
	for (size_t o = w->off; o + w->stripe <= w->total; o += w->stride) {
		if (m) {
			pat_fill(m + o, w->stripe, w->seed, o);
		} else {
			pat_fill(buf, w->stripe, w->seed, o);
			CHILD_CHECK(pwrite_all(fd, buf, w->stripe, o) == (ssize_t)w->stripe, 5);
		}
	}
	if (m) {
		CHILD_CHECK(msync(m, w->total, MS_SYNC) == 0, 6);
		munmap(m, w->total);
	}
	return 0;
}

static int writer_main(void *v)
{
	struct writer *w = v;
	char b;
	int fd;

	close(w->start_wfd);
	CHILD_CHECK(read(w->start_fd, &b, 1) == 0, 1);
	fd = open(w->path, O_RDWR);
	CHILD_CHECK(fd >= 0, 2);
	rng_state = w->seed * 2654435761u + 1;
	if (w->stripe) {
		unsigned char *buf = malloc(w->stripe);
		int step;

		CHILD_CHECK(buf != NULL, 3);
		step = write_stripes(w, fd, buf);
		free(buf);
		if (step)
			return step;
	} else if (w->use_mmap) {
		unsigned char *m = mmap(NULL, w->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
					w->off);

		CHILD_CHECK(m != MAP_FAILED, 7);
		for (size_t o = 0; o < w->len;) {
			size_t n = rnd_len(w->len - o);

			pat_fill(m + o, n, w->seed, w->off + o);
			o += n;
		}
		CHILD_CHECK(msync(m, w->len, MS_SYNC) == 0, 8);
		munmap(m, w->len);
	} else {
		unsigned char *buf = malloc(w->len);

		CHILD_CHECK(buf != NULL, 9);
		for (size_t o = 0; o < w->len;) {
			size_t n = rnd_len(w->len - o);

			pat_fill(buf, n, w->seed, w->off + o);
			CHILD_CHECK(pwrite_all(fd, buf, n, w->off + o) == (ssize_t)n, 10);
			o += n;
		}
		free(buf);
	}
	CHILD_CHECK(close(fd) == 0, 11);
	return 0;
}

/* Start every writer at once (closing the pipe), reap them all. */
static void run_writers(struct writer *w, int n, int start[2])
{
	pid_t pids[16];

	for (int i = 0; i < n; i++) {
		w[i].start_fd = start[0];
		w[i].start_wfd = start[1];
		pids[i] = tu_spawn(writer_main, &w[i]);
	}
	close(start[0]);
	close(start[1]);
	for (int i = 0; i < n; i++) {
		int r = tu_reap(pids[i], 120000);

		if (r != 0)
			fail_msg("writer %d (%s) ended with %d", i,
				 w[i].use_mmap ? "mmap" : "write", r);
	}
}

/* Byte at off as writer owning it wrote it: seed_of(off) gives that writer's seed. */
static void verify_file(int fd, size_t total, uint32_t (*seed_of)(size_t off, void *), void *ctx)
{
	size_t chunk = 1u << 20;
	unsigned char *buf = malloc(chunk);
	unsigned char *m;

	assert_non_null(buf);
	for (size_t off = 0; off < total; off += chunk) {
		size_t len = total - off < chunk ? total - off : chunk;

		assert_int_equal(pread_all(fd, buf, len, off), len);
		for (size_t i = 0; i < len; i++)
			if (buf[i] != pat_byte(seed_of(off + i, ctx), off + i))
				fail_msg("read: byte %zu differs", off + i);
	}
	m = mmap(NULL, total, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	for (size_t i = 0; i < total; i++)
		if (m[i] != pat_byte(seed_of(i, ctx), i))
			fail_msg("mapping: byte %zu differs", i);
	munmap(m, total);
	free(buf);
}

#define REGION (4u << 20)

static uint32_t region_seed(size_t off, void *ctx)
{
	(void)ctx;
	return 100 + (uint32_t)(off / REGION);
}

/* A small file seen through two kinds of handle at once stays one file: on passthrough a
 * read-only first open of a small file takes the page cache, but never while a passthrough
 * mapping may still store into it, and a writer that comes while page-cache handles are open
 * joins them. Either way every store is seen by the other side at once. */
static void small_file_two_views(const char *f, bool writer_first)
{
	int wfd = -1, rfd = -1;
	volatile unsigned char *w = NULL;
	const volatile unsigned char *r = NULL;
	unsigned char c = 0;

	if (!writer_first) {
		CHECK(rfd = open(f, O_RDONLY));
		r = mmap(NULL, 4096, PROT_READ, MAP_SHARED, rfd, 0);
		assert_true(r != MAP_FAILED);
	}
	CHECK(wfd = open(f, O_RDWR));
	w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, wfd, 0);
	assert_true(w != MAP_FAILED);
	CHECK(close(wfd));
	w[0] = 1;
	if (writer_first) {
		CHECK(rfd = open(f, O_RDONLY));
		r = mmap(NULL, 4096, PROT_READ, MAP_SHARED, rfd, 0);
		assert_true(r != MAP_FAILED);
	}
	assert_int_equal(r[0], 1);
	w[0] = 2;
	w[100] = 3;
	assert_int_equal(r[0], 2);
	CHECK(pread(rfd, &c, 1, 100));
	assert_int_equal(c, 3);
	CHECK(munmap((void *)w, 4096));
	CHECK(munmap((void *)r, 4096));
	CHECK(close(rfd));
}

static void test_small_file_two_views(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "flags");
	int fd;

	for (int writer_first = 0; writer_first < 2; writer_first++) {
		/* a pin keeps it with no handle open, so the next open is the inode's first */
		CHECK(fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600));
		CHECK(ftruncate(fd, 4096));
		CHECK(hold(f, POOLFS_SCOPE_WORD_PIN));
		CHECK(close(fd));
		/* and no mapping can be left: the reader's open may take the page cache */
		tu_wait_unused(f, GONE_MS);
		small_file_two_views(f, writer_first);
		CHECK(removexattr(f, POOLFS_XATTR_HOLD));
		ASSERT_GONE(f);
	}
	tu_backing_back_to_base(state);
}

/* ---- a small file's first read ---- */

static unsigned char first_read_byte(size_t i, unsigned round)
{
	return (unsigned char)(i * 7 + round * 31 + (i >> 12));
}

/* Read all of `f` (`size` bytes) through a fresh read-only handle and check it is round
 * `round`'s content; the daemon's READs meanwhile. */
static long read_back(const struct pool_fixture *p, const char *f, size_t size, unsigned round)
{
	long before = itest_ops_count(p, "read");
	unsigned char *buf = malloc(size + 1);
	ssize_t got;
	size_t at = 0;
	int fd;

	assert_non_null(buf);
	CHECK(fd = open(f, O_RDONLY));
	while ((got = read(fd, buf + at, size + 1 - at)) > 0)
		at += (size_t)got;
	CHECK(got);
	CHECK(close(fd));
	if (at != size)
		fail_msg("%s: read %zu bytes of %zu (round %u)", f, at, size, round);
	for (size_t i = 0; i < size; i++)
		if (buf[i] != first_read_byte(i, round))
			fail_msg("%s (%zu bytes): byte %zu is %u, round %u wrote %u", f, size, i,
				 buf[i], round, first_read_byte(i, round));
	free(buf);
	return itest_ops_count(p, "read") - before;
}

static void write_round(const char *f, size_t size, unsigned round)
{
	unsigned char *buf = malloc(size);
	int fd;

	assert_non_null(buf);
	for (size_t i = 0; i < size; i++)
		buf[i] = first_read_byte(i, round);
	CHECK(fd = open(f, O_WRONLY));
	assert_int_equal(pwrite(fd, buf, size, 0), (ssize_t)size);
	CHECK(close(fd));
	free(buf);
	tu_wait_unused(f, GONE_MS);
}

/* A new file `f` of `size` bytes of round 1, pinned (so it stays with no handle open), whose
 * writer's handle the daemon no longer counts. */
static void new_pinned_file(const char *f, size_t size)
{
	int fd;

	CHECK(fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600));
	CHECK(hold(f, POOLFS_SCOPE_WORD_PIN));
	CHECK(close(fd));
	write_round(f, size, 1);
}

static void unpin_gone(const char *f)
{
	CHECK(removexattr(f, POOLFS_XATTR_HOLD));
	ASSERT_GONE(f);
}

/* Tries for a read that needs no READ: this VM's page cache is now and then dropped from outside
 * (a balloon), which makes a READ of a page that was cached. The code failing makes one every
 * time. */
#define NO_READ_TRIES 3

/* On passthrough a small file's first read-only open hands the kernel the file with its answer
 * (docs/design.md "Passthrough path"): the read that follows needs no READ, up to 64 KiB, and
 * reads what the file holds, also after a passthrough writer changed it behind the kernel's
 * cache. */
static void test_small_file_first_read(void **state)
{
	static const size_t sizes[] = {1, 4095, 4096, 5000, 65536, 65537, 200000};
	struct pool_fixture *p = tu_pool(state);
	bool passthrough = strcmp(p->active_datapath, "passthrough") == 0;
	PATH(f, p, "first");

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t size = sizes[k];
		long reads = 0;

		for (int t = 0; t < NO_READ_TRIES; t++) {
			if (t > 0)
				unpin_gone(f); /* the first open of a new file, again */
			new_pinned_file(f, size);
			reads = read_back(p, f, size, 1);
			if (!passthrough || size > 65536 || reads == 0)
				break;
		}
		if (passthrough && size <= 65536 && reads != 0)
			fail_msg(
				"%zu bytes: the first read asked the daemon %ld times, %d times out "
				"of %d",
				size, reads, NO_READ_TRIES, NO_READ_TRIES);
		if (passthrough && size > 65536 && reads == 0)
			fail_msg("%zu bytes: no READ, yet only files up to 64 KiB are handed over",
				 size);
		/* again: from the cache, on either path */
		for (int t = 0; t < NO_READ_TRIES && (reads = read_back(p, f, size, 1)) != 0; t++)
			;
		if (reads != 0)
			fail_msg(
				"%zu bytes: a read of an unchanged file asked the daemon %ld times, "
				"%d times out of %d",
				size, reads, NO_READ_TRIES, NO_READ_TRIES);
		/* a passthrough writer goes around the kernel's cache: the next open drops it */
		write_round(f, size, 2);
		read_back(p, f, size, 2);
		/* two readers at once share the cache, and a writer joining them writes through it */
		{
			int r1, r2, w;
			unsigned char c = 0;

			CHECK(r1 = open(f, O_RDONLY));
			CHECK(r2 = open(f, O_RDONLY));
			CHECK(pread(r1, &c, 1, size - 1));
			assert_int_equal(c, first_read_byte(size - 1, 2));
			CHECK(w = open(f, O_WRONLY));
			c = 0xA5;
			assert_int_equal(pwrite(w, &c, 1, size - 1), 1);
			c = 0;
			CHECK(pread(r2, &c, 1, size - 1));
			assert_int_equal(c, 0xA5);
			CHECK(close(w));
			CHECK(close(r2));
			CHECK(close(r1));
		}
		unpin_gone(f);
	}
	tu_backing_back_to_base(state);
}

static void test_concurrent_writers_disjoint(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct writer w[4];
	int start[2];
	int fd;

	memset(w, 0, sizeof(w));
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pool_path(p, "f", w[i].path, sizeof(w[i].path)), 0);
		w[i].use_mmap = i >= 2;
		w[i].off = (size_t)i * REGION;
		w[i].len = REGION;
		w[i].seed = 100 + i;
	}
	fd = create_open(w[0].path);
	CHECK(ftruncate(fd, 4 * REGION));
	CHECK(pipe(start));
	run_writers(w, 4, start);
	verify_file(fd, 4 * REGION, region_seed, NULL);
	CLOSE_UNTIL_GONE(fd, w[0].path);
}

/* write() writers own odd-sized stripes interleaved in the first region (so requests share
 * pages); mmap writers own alternate pages of the second; all six run at once. */
#define STRIPE 3000u

static uint32_t striped_seed(size_t off, void *ctx)
{
	(void)ctx;
	if (off < REGION)
		return 200 + (uint32_t)((off / STRIPE) % 4);
	return 300 + (uint32_t)(((off - REGION) / (size_t)pg) % 2);
}

static void test_concurrent_writers_interleaved(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	size_t region = REGION / STRIPE * STRIPE; /* whole stripes only */
	struct writer w[6];
	int start[2];
	int fd;

	assert_int_equal(region, REGION - REGION % STRIPE);
	memset(w, 0, sizeof(w));
	for (int i = 0; i < 6; i++)
		assert_int_equal(pool_path(p, "f", w[i].path, sizeof(w[i].path)), 0);
	for (int i = 0; i < 4; i++) {
		w[i].off = (size_t)i * STRIPE;
		w[i].stripe = STRIPE;
		w[i].stride = 4 * STRIPE;
		w[i].total = region;
		w[i].seed = 200 + i;
	}
	for (int i = 0; i < 2; i++) {
		w[4 + i].use_mmap = 1;
		w[4 + i].off = REGION + (size_t)i * pg;
		w[4 + i].stripe = pg;
		w[4 + i].stride = 2 * pg;
		w[4 + i].total = 2 * REGION;
		w[4 + i].seed = 300 + i;
	}
	fd = create_open(w[0].path);
	/* the tail of the first region that no whole stripe covers is written here */
	CHECK(ftruncate(fd, 2 * REGION));
	{
		unsigned char tail[REGION % STRIPE];

		for (size_t i = 0; i < sizeof(tail); i++)
			tail[i] = pat_byte(striped_seed(region + i, NULL), region + i);
		assert_int_equal(pwrite_all(fd, tail, sizeof(tail), region), sizeof(tail));
	}
	CHECK(pipe(start));
	run_writers(w, 6, start);
	verify_file(fd, 2 * REGION, striped_seed, NULL);
	CLOSE_UNTIL_GONE(fd, w[0].path);
}

/* ---- what is refused ---- */

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		fail_msg("opendir %s: %s", dir, errname(errno));
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* Every kind of entry but device nodes (docs/interface.md "Kinds of entry"). With this suite's
 * autohold=none a symlink, FIFO or socket is in use only while held, so each goes as soon as it
 * is made; a hard link is a second name of f, and goes with it. */
static void test_entry_kinds_unheld(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	char f[PATH_MAX], g[PATH_MAX], s[PATH_MAX], q[PATH_MAX], c[PATH_MAX], b[PATH_MAX],
		sock[PATH_MAX];
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct stat st, st2;
	int fd, sfd;

	tu_paths(p, "f", f, "g", g, "s", s, "q", q, "c", c, "b", b, "sock", sock);
	fd = create_open(f);
	CHECK(link(f, g));
	CHECK(stat(f, &st));
	CHECK(stat(g, &st2));
	assert_int_equal(st.st_nlink, 2);
	assert_int_equal(st.st_ino, st2.st_ino);
	CHECK(symlink("f", s));
	ASSERT_GONE(s);
	CHECK(mkfifo(q, 0600));
	ASSERT_GONE(q);
	CHECK(mknod(q, S_IFIFO | 0600, 0));
	ASSERT_GONE(q);
	CHECK_ERR(mknod(c, S_IFCHR | 0600, makedev(1, 3)), EPERM);
	CHECK_ERR(mknod(b, S_IFBLK | 0600, makedev(7, 0)), EPERM);
	assert_true(strlen(sock) < sizeof(sun.sun_path));
	strcpy(sun.sun_path, sock);
	sfd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(sfd);
	CHECK(bind(sfd, (struct sockaddr *)&sun, sizeof(sun)));
	ASSERT_GONE(sock);
	CHECK(close(sfd));
	/* f under its two names, nothing else */
	assert_int_equal(count_entries(p->mnt), 2);
	CLOSE_UNTIL_GONE(fd, f);
	ASSERT_GONE(g);
}

static void test_o_direct_refused(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(g, p, "g");
	int fd = create_open(f);

	CHECK_ERR(open(f, O_RDWR | O_DIRECT), EINVAL);
	CHECK_ERR(open(f, O_RDONLY | O_DIRECT), EINVAL);
	CHECK_ERR(open(g, O_RDWR | O_CREAT | O_DIRECT, 0600), EINVAL);
	/* whatever the refused create left, nobody uses it */
	ASSERT_GONE(g);
	CLOSE_UNTIL_GONE(fd, f);
}

static void test_name_length(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	char name[257];
	char path[PATH_MAX];
	struct stat st;
	int fd;

	memset(name, 'n', 256);
	name[256] = '\0';
	assert_int_equal(pool_path(p, name, path, sizeof(path)), 0);
	CHECK_ERR(open(path, O_RDWR | O_CREAT, 0600), ENAMETOOLONG);
	CHECK_ERR(mkdir(path, 0700), ENAMETOOLONG);
	CHECK_ERR(stat(path, &st), ENAMETOOLONG);
	{
		PATH(f, p, "f");

		fd = create_open(f);
		CHECK_ERR(rename(f, path), ENAMETOOLONG);
		CLOSE_UNTIL_GONE(fd, f);
	}
	/* 255 bytes is fine */
	name[255] = '\0';
	assert_int_equal(pool_path(p, name, path, sizeof(path)), 0);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd);
	CHECK(stat(path, &st));
	CLOSE_UNTIL_GONE(fd, path);
	name[255] = 'd';
	name[254] = '\0';
	assert_int_equal(pool_path(p, name, path, sizeof(path)), 0);
	CHECK(mkdir(path, 0700));
	CHECK(rmdir(path));
}

/* ---- xattrs ---- */

static int list_has(const char *list, ssize_t len, const char *name)
{
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(list + i) + 1)
		if (strcmp(list + i, name) == 0)
			return 1;
	return 0;
}

static int list_has_prefix(const char *list, ssize_t len, const char *prefix)
{
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(list + i) + 1)
		if (strncmp(list + i, prefix, strlen(prefix)) == 0)
			return 1;
	return 0;
}

static void xattr_roundtrip_on(const char *path, int fd)
{
	unsigned char bin[1000], back[1000];
	char list[4096];
	static char big[40000];
	ssize_t n;

	for (size_t i = 0; i < sizeof(bin); i++)
		bin[i] = (unsigned char)(i * 7);
	CHECK(setxattr(path, "user.a", "1", 1, 0));
	CHECK(setxattr(path, "user.b", bin, sizeof(bin), XATTR_CREATE));
	CHECK(setxattr(path, "user.empty", "", 0, 0));
	assert_int_equal(getxattr(path, "user.a", NULL, 0), 1);
	assert_int_equal(getxattr(path, "user.b", back, sizeof(back)), sizeof(bin));
	assert_memory_equal(back, bin, sizeof(bin));
	assert_int_equal(getxattr(path, "user.empty", back, sizeof(back)), 0);
	CHECK_ERR(getxattr(path, "user.b", back, 10), ERANGE);
	CHECK_ERR(setxattr(path, "user.a", "2", 1, XATTR_CREATE), EEXIST);
	CHECK_ERR(setxattr(path, "user.none", "2", 1, XATTR_REPLACE), ENODATA);
	CHECK(setxattr(path, "user.a", "22", 2, XATTR_REPLACE));
	if (fd >= 0) {
		assert_int_equal(fgetxattr(fd, "user.a", back, sizeof(back)), 2);
		assert_memory_equal(back, "22", 2);
		CHECK(fsetxattr(fd, "user.c", "3", 1, 0));
	}

	n = listxattr(path, NULL, 0);
	CHECK(n);
	assert_true(n <= (ssize_t)sizeof(list));
	n = listxattr(path, list, sizeof(list));
	CHECK(n);
	assert_true(list_has(list, n, "user.a"));
	assert_true(list_has(list, n, "user.b"));
	assert_true(list_has(list, n, "user.empty"));
	assert_false(list_has_prefix(list, n, POOLFS_XATTR_PREFIX));
	CHECK_ERR(listxattr(path, list, 3), ERANGE);

	CHECK(removexattr(path, "user.a"));
	CHECK_ERR(getxattr(path, "user.a", back, sizeof(back)), ENODATA);
	CHECK_ERR(removexattr(path, "user.a"), ENODATA);
	n = listxattr(path, list, sizeof(list));
	assert_false(list_has(list, n, "user.a"));

	/* other namespaces are not stored, security.* included: EOPNOTSUPP (`ls -l` then stops
	 * asking for security.selinux on every file) */
	CHECK_ERR(setxattr(path, "trusted.x", "1", 1, 0), EOPNOTSUPP);
	CHECK_ERR(setxattr(path, "security.x", "1", 1, 0), EOPNOTSUPP);
	CHECK_ERR(getxattr(path, "trusted.x", back, sizeof(back)), EOPNOTSUPP);
	CHECK_ERR(getxattr(path, "security.capability", back, sizeof(back)), EOPNOTSUPP);
	CHECK_ERR(lgetxattr(path, "security.selinux", back, sizeof(back)), EOPNOTSUPP);

	/* at most 64 KiB per entry */
	memset(big, 'x', sizeof(big));
	CHECK(setxattr(path, "user.big", big, sizeof(big), 0));
	CHECK_ERR(setxattr(path, "user.big2", big, sizeof(big), 0), ENOSPC);
	CHECK(setxattr(path, "user.big", "small", 5, 0));
	CHECK(setxattr(path, "user.big2", big, sizeof(big), 0));
	assert_int_equal(getxattr(path, "user.big2", NULL, 0), sizeof(big));
	CHECK(removexattr(path, "user.big2"));
}

static void test_xattr_roundtrip(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(d, p, "d");
	int fd = create_open(f);

	xattr_roundtrip_on(f, fd);
	CHECK(mkdir(d, 0700));
	xattr_roundtrip_on(d, -1);
	CHECK(rmdir(d));
	CLOSE_UNTIL_GONE(fd, f);
}

/* Text of a user.poolfs.* attribute, NUL-terminated. */
static void read_text_xattr(const char *path, const char *name, char *buf, size_t len)
{
	ssize_t n = getxattr(path, name, buf, len - 1);

	if (n < 0)
		fail_msg("getxattr %s %s: %s", path, name, errname(errno));
	buf[n] = '\0';
	if (n == 0 || buf[n - 1] != '\n')
		fail_msg("%s of %s does not end in a newline: \"%s\"", name, path, buf);
}

/* text holds line as a whole line */
static void expect_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *s = text; s && *s;) {
		const char *nl = strchr(s, '\n');

		if (strncmp(s, line, n) == 0 && s[n] == '\n')
			return;
		s = nl ? nl + 1 : NULL;
	}
	fail_msg("no line \"%s\" in:\n%s", line, text);
}

static void test_poolfs_xattrs(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	char f[PATH_MAX], d[PATH_MAX], df[PATH_MAX];
	char text[4096], want[64];
	int fd, fd2, gfd;

	tu_paths(p, "f", f, "d", d, "d/g", df);
	fd = create_open(f);
	read_text_xattr(f, POOLFS_XATTR_REFS, text, sizeof(text));
	expect_line(text, "opens 1");
	expect_line(text, "holds 0");
	fd2 = open(f, O_RDONLY);
	CHECK(fd2);
	read_text_xattr(f, POOLFS_XATTR_REFS, text, sizeof(text));
	expect_line(text, "opens 2");
	CHECK(close(fd2));

	CHECK(mkdir(d, 0700));
	gfd = create_open(df);
	read_text_xattr(d, POOLFS_XATTR_REFS, text, sizeof(text));
	expect_line(text, "children 1");

	read_text_xattr(p->mnt, POOLFS_XATTR_STAT, text, sizeof(text));
	expect_line(text, "max_size 0");
	expect_line(text, "max_user_size 0");
	snprintf(want, sizeof(want), "datapath %s", p->datapath);
	expect_line(text, want);
	if (!strstr(text, "entries ") || !strstr(text, "bytes ") || !strstr(text, "user 0 "))
		fail_msg("user.poolfs.stat lacks entries/bytes/user lines:\n%s", text);

	/* every entry answers user.poolfs.stat: how a client recognises a pool */
	read_text_xattr(f, POOLFS_XATTR_STAT, text, sizeof(text));
	expect_line(text, want);
	read_text_xattr(d, POOLFS_XATTR_STAT, text, sizeof(text));
	expect_line(text, want);

	CHECK_ERR(getxattr(f, "user.poolfs.nothing", text, sizeof(text)), ENODATA);
	CHECK_ERR(setxattr(f, "user.poolfs.nothing", "1", 1, 0), EINVAL);
	CHECK_ERR(removexattr(f, "user.poolfs.nothing"), EINVAL);
	CHECK_ERR(setxattr(f, POOLFS_XATTR_REFS, "1", 1, 0), EPERM);
	CHECK_ERR(removexattr(f, POOLFS_XATTR_STAT), EPERM);
	CHECK_ERR(setxattr(f, POOLFS_XATTR_HOLD, "forever", 7, 0), EINVAL);
	CHECK_ERR(removexattr(f, POOLFS_XATTR_HOLD), ENODATA);

	CLOSE_UNTIL_GONE(gfd, d);
	CLOSE_UNTIL_GONE(fd, f);
}

/* A pin hold keeps a closed file; dropping it lets the file go. */
static void test_pin_hold(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	char text[4096];
	int fd = create_open(f);

	CHECK(setxattr(f, POOLFS_XATTR_HOLD, "pin\n", 4, 0));
	CHECK(close(fd));
	pool_sleep_ms(200);
	ASSERT_EXISTS(f);
	read_text_xattr(f, POOLFS_XATTR_REFS, text, sizeof(text));
	expect_line(text, "holds 1");
	expect_line(text, "hold pin uid=0");
	CHECK(removexattr(f, POOLFS_XATTR_HOLD));
	ASSERT_GONE(f);
}

/* ---- attributes, space, listing ---- */

static void test_setattr_and_fallocate(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	struct timespec ts[2] = {{1000000000, 5}, {1200000000, 7}};
	unsigned char buf[8192];
	struct stat st;
	int fd = create_open(f);

	CHECK(truncate(f, 100000));
	CHECK(stat(f, &st));
	assert_int_equal(st.st_size, 100000);
	assert_int_equal(pread_all(fd, buf, sizeof(buf), 50000), sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0);
	CHECK(ftruncate(fd, 10));
	CHECK(fstat(fd, &st));
	assert_int_equal(st.st_size, 10);

	CHECK(utimensat(AT_FDCWD, f, ts, 0));
	CHECK(stat(f, &st));
	assert_int_equal(st.st_atim.tv_sec, 1000000000);
	assert_int_equal(st.st_mtim.tv_sec, 1200000000);
	assert_int_equal(st.st_mtim.tv_nsec, 7);

	CHECK(fallocate(fd, 0, 0, 1 << 20));
	CHECK(fstat(fd, &st));
	assert_int_equal(st.st_size, 1 << 20);
	assert_int_equal(pread_all(fd, buf, sizeof(buf), 500000), sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0);
	CHECK(fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 2 << 20));
	CHECK(fstat(fd, &st));
	assert_int_equal(st.st_size, 1 << 20);
	CHECK(fsync(fd));
	CHECK(fdatasync(fd));
	CLOSE_UNTIL_GONE(fd, f);
}

static void test_statfs(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct statfs m, b;
	double mt, bt;

	CHECK(statfs(p->mnt, &m));
	CHECK(statfs(p->backing, &b));
	assert_int_equal((unsigned long)m.f_type, POOL_FUSE_SUPER_MAGIC);
	assert_true(m.f_bsize > 0);
	assert_true(m.f_blocks > 0);
	assert_true(m.f_bfree <= m.f_blocks);
	assert_true(m.f_bavail <= m.f_blocks);
	assert_int_equal(m.f_namelen, 255);
	/* the backing tmpfs's size */
	mt = (double)m.f_blocks * (double)(m.f_frsize ? m.f_frsize : m.f_bsize);
	bt = (double)b.f_blocks * (double)(b.f_frsize ? b.f_frsize : b.f_bsize);
	if (mt < bt * 0.99 || mt > bt * 1.01)
		fail_msg("pool size %.0f bytes, backing tmpfs %.0f", mt, bt);
}

static void test_readdir_many(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	enum { N = 300 };
	int fds[N];
	char seen[N] = {0};
	char name[300];
	char xs[201];
	DIR *d;
	struct dirent *e;

	memset(xs, 'x', 200);
	xs[200] = '\0';
	for (int i = 0; i < N; i++) {
		char path[PATH_MAX];

		/* names of many lengths, so readdir buffers fill unevenly */
		snprintf(name, sizeof(name), "%d-%.*s", i, i % 200, xs);
		assert_int_equal(pool_path(p, name, path, sizeof(path)), 0);
		fds[i] = create_open(path);
	}
	d = opendir(p->mnt);
	assert_non_null(d);
	while ((e = readdir(d))) {
		int i;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		i = atoi(e->d_name);
		if (i < 0 || i >= N || seen[i])
			fail_msg("unexpected or repeated entry %s", e->d_name);
		seen[i] = 1;
	}
	closedir(d);
	for (int i = 0; i < N; i++)
		if (!seen[i])
			fail_msg("entry %d not listed", i);
	for (int i = 0; i < N; i++)
		CHECK(close(fds[i]));
	{
		long long deadline = pool_now_ms() + GONE_MS;

		while (count_entries(p->mnt) != 0 && pool_now_ms() < deadline)
			pool_sleep_ms(10);
		assert_int_equal(count_entries(p->mnt), 0);
	}
}

/* A churner: creates and removes names in `dir` until killed (0 on an error's exit code). */
static int churn_names(void *arg)
{
	const char *dir = arg;
	char path[PATH_MAX];

	for (unsigned i = 0;; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/churn-%u", dir, i % 64);
		fd = open(path, O_CREAT | O_RDWR, 0600);
		if (fd < 0 && errno != ENOENT)
			return 1;
		if (fd >= 0)
			close(fd);
		if (unlink(path) < 0 && errno != ENOENT)
			return 2;
	}
	return 0;
}

/* Folder `name` of the pool (its path into dir, PATH_MAX), pinned, with n empty files
 * PREFIX0 .. PREFIX(n-1): they stay after their close (autohold=none). */
static void make_pinned_files(const struct pool_fixture *p, const char *name, const char *prefix,
			      int n, char *dir)
{
	char path[PATH_MAX + 32];

	assert_int_equal(pool_path(p, name, dir, PATH_MAX), 0);
	CHECK(mkdir(dir, 0700));
	CHECK(setxattr(dir, POOLFS_XATTR_HOLD, POOLFS_SCOPE_WORD_PIN, strlen(POOLFS_SCOPE_WORD_PIN),
		       0));
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s%d", dir, prefix, i);
		CHECK(close(create_open(path)));
	}
}

/* The snapshot of a folder bigger than a lock section (SNAPSHOT_CHUNK in fs/ops_dirs.c) taken
 * while names come and go in it and the lock is wanted: each listing has every name that stayed
 * throughout exactly once, and nothing else but the churner's names (docs/design.md "Work that
 * grows with the pool": the copy starts over when the folder moved under it). */
static void test_readdir_big_folder_while_it_changes(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	enum { N = 3000, ROUNDS = 20 };
	static char seen[N];
	char dir[PATH_MAX];
	pid_t churners[2];

	make_pinned_files(p, "big", "stay-", N, dir);
	for (int c = 0; c < 2; c++)
		churners[c] = tu_spawn(churn_names, dir);
	for (int round = 0; round < ROUNDS; round++) {
		DIR *d = opendir(dir);
		struct dirent *e;

		assert_non_null(d);
		memset(seen, 0, sizeof(seen));
		while ((e = readdir(d))) {
			int i;

			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
			    !strncmp(e->d_name, "churn-", 6))
				continue;
			if (sscanf(e->d_name, "stay-%d", &i) != 1 || i < 0 || i >= N)
				fail_msg("round %d: unexpected entry %s", round, e->d_name);
			if (seen[i]++)
				fail_msg("round %d: %s listed twice", round, e->d_name);
		}
		closedir(d);
		for (int i = 0; i < N; i++)
			if (!seen[i])
				fail_msg("round %d: stay-%d not listed", round, i);
	}
	for (int c = 0; c < 2; c++) {
		int end;

		kill(churners[c], SIGKILL);
		end = tu_reap(churners[c], CHILD_MS);
		if (end != 128 + SIGKILL)
			fail_msg("churner %d ended with %d before it was stopped", c, end);
	}
	CHECK(removexattr(dir, POOLFS_XATTR_HOLD));
}

/* Two CPUs this process may run on, into a and b: false if it has fewer. */
static bool two_cpus(int *a, int *b)
{
	cpu_set_t set;
	int found = 0;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return false;
	for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
		if (CPU_ISSET(c, &set))
			*(found++ ? b : a) = c;
	return found == 2;
}

static int pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

struct on_cpu {
	const char *path;
	int cpu;
};

/* Asks the daemon about a path until killed, from its own CPU: a request that wants the pool
 * lock. */
static int ask_refs(void *arg)
{
	const struct on_cpu *a = arg;
	char buf[4096];

	if (pin_to(a->cpu) < 0)
		return 2;
	for (;;)
		if (getxattr(a->path, POOLFS_XATTR_REFS, buf, sizeof(buf)) < 0)
			return 1;
}

enum { SNAPSHOT_NAMES = 20000 };

/* Lists a folder of SNAPSHOT_NAMES names from its own CPU until killed: 1 if a listing missed a
 * name or opendir failed. */
static int list_rounds(void *arg)
{
	const struct on_cpu *l = arg;

	if (pin_to(l->cpu) < 0)
		return 2;
	for (;;) {
		DIR *d = opendir(l->path);
		int names = 0;

		if (!d)
			return 1;
		while (readdir(d))
			names++;
		closedir(d);
		if (names != SNAPSHOT_NAMES + 2)
			return 1;
	}
}

/* A folder's snapshot is longer than a lock section: while another process's requests wait for
 * the lock, it lets one in between its chunks (`pool_yield`, docs/design.md "Work that grows
 * with the pool") and counts it (lock_handoffs). A turn is given only to a thread that waits in
 * pool_lock, so its wait was timed: the lock-wait histogram's sum grew too. The lister and the asker run on CPUs of their
 * own: over io_uring each CPU's requests are served by that CPU's ring thread one after the
 * other, so on one CPU the asker would wait behind the OPENDIR for the thread, not for the lock.
 * Whether a request waits at a chunk's end is the scheduler's: the folder is listed until a turn
 * is counted, for at most 20 s. */
static void test_snapshot_gives_waiters_turns(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	char dir[PATH_MAX];
	struct on_cpu lister = {.path = dir}, asking = {.path = dir};
	long before, now = 0, waited_ns;
	pid_t asker, listing;
	int waited, end;

	if (!two_cpus(&lister.cpu, &asking.cpu))
		TU_SKIP("fewer than two CPUs to run on: the lister and the asker need one each");
	make_pinned_files(p, "big", "f", SNAPSHOT_NAMES, dir);
	waited_ns = itest_counter(p, "lock_wait_sum_ns");
	before = itest_counter(p, "lock_handoffs");
	asker = tu_spawn(ask_refs, &asking);
	listing = tu_spawn(list_rounds, &lister);
	for (waited = 0; waited < 20000; waited += 20) {
		usleep(20000);
		now = itest_counter(p, "lock_handoffs");
		if (now > before)
			break;
	}
	kill(listing, SIGKILL);
	kill(asker, SIGKILL);
	end = tu_reap(listing, CHILD_MS);
	if (end != 128 + SIGKILL)
		fail_msg("listing the folder of %d names ended with %d", SNAPSHOT_NAMES, end);
	if (tu_reap(asker, CHILD_MS) != 128 + SIGKILL)
		fail_msg("the asking process ended before it was stopped");
	if (now <= before)
		fail_msg(
			"snapshots of %d names for %d ms with another process asking: no turn given",
			SNAPSHOT_NAMES, waited);
	if (itest_counter(p, "lock_wait_sum_ns") <= waited_ns)
		fail_msg("%ld turns given, but no wait for the pool lock was timed", now - before);
	CHECK(removexattr(dir, POOLFS_XATTR_HOLD));
}

/* ---- mount and unmount ---- */

static void test_mount_reports_datapath(void **state)
{
	struct pool_fixture *p = tu_pool(state);

	assert_string_equal(p->active_datapath, p->datapath);
}

static void test_bad_options_refused(void **state)
{
	static const char *bad[] = {"linger=abc", "autohold=forever", "max_size=12Q",
				    "datapath=floppy", "linger=-1"};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pool_fixture q;
		int r = pool_mount(&q, bad[i]);

		if (r == -EOPNOTSUPP)
			TU_SKIP("datapath %s not supported by this daemon",
				getenv("POOLFS_DATAPATH") ? getenv("POOLFS_DATAPATH") : "?");
		if (r == 0)
			pool_unmount(&q);
		if (r != -EINVAL)
			fail_msg("mount with %s: %s, want exit 2 (-EINVAL)", bad[i],
				 r ? errname(-r) : "mounted");
	}
}

/* Everything created, used and closed; an empty folder and (default autohold) held files still
 * there: unmount must still leave the backing dir empty and the daemon exit 0. */
static void clean_unmount(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(e, p, "e");
	PATH(d, p, "d");
	char buf[1 << 16];
	int fds[8];
	int r;

	CHECK(mkdir(e, 0700));
	CHECK(mkdir(d, 0700));
	pat_fill(buf, sizeof(buf), 50, 0);
	for (int i = 0; i < 8; i++) {
		char rel[32], path[PATH_MAX];

		snprintf(rel, sizeof(rel), i % 2 ? "d/f%d" : "f%d", i);
		assert_int_equal(pool_path(p, rel, path, sizeof(path)), 0);
		fds[i] = create_open(path);
		assert_int_equal(pwrite_all(fds[i], buf, sizeof(buf), 0), sizeof(buf));
	}
	assert_true(pool_backing_files(p) > 0);
	for (int i = 0; i < 8; i++)
		CHECK(close(fds[i]));
	r = pool_unmount(p);
	if (r != 0)
		fail_msg("pool_unmount: %s", errname(-r));
}

static void test_clean_unmount(void **state)
{
	clean_unmount(state);
}

static void test_clean_unmount_default_autohold(void **state)
{
	clean_unmount(state);
}

/* The entries a directory store (p->backing) still holds, each named on stderr. */
static int store_entries_left(const struct pool_fixture *p)
{
	DIR *d = opendir(p->backing);
	struct dirent *ent;
	int n = 0;

	assert_non_null(d);
	while ((ent = readdir(d)))
		if (strcmp(ent->d_name, ".") != 0 && strcmp(ent->d_name, "..") != 0) {
			fprintf(stderr, "# left in the store: %s\n", ent->d_name);
			n++;
		}
	closedir(d);
	return n;
}

/* SIGTERM is a clean unmount too: exit 0, mount gone, backing dir empty. */
static void test_sigterm_unmounts_cleanly(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(e, p, "e");
	PATH(f, p, "f");
	int fd;

	CHECK(mkdir(e, 0700));
	fd = create_open(f);
	CHECK(write(fd, "x", 1));
	CHECK(close(fd));
	CHECK_0(pool_kill_daemon(p, SIGTERM));
	if (!WIFEXITED(p->exit_status) || WEXITSTATUS(p->exit_status) != 0)
		fail_msg("daemon wait status %#x after SIGTERM, want exit 0", p->exit_status);
	assert_false(pool_is_mounted(p));
	if (p->private_store) {
		/* the daemon's own tmpfs went with it */
		CHECK_0(pool_wait_store_gone(p, GONE_MS));
		return;
	}
	assert_int_equal(pool_backing_files(p), 0);
	assert_int_equal(store_entries_left(p), 0);
}

/* A stop that crosses an unmount (systemd's SIGTERM while the pool goes away): SIGTERMs again
 * and again from the unmount until the daemon is reaped must not cut its teardown short. Killed
 * there it would exit by the signal and leave a directory store's folder behind (the next daemon
 * with that store sweeps it, but nothing should leak till then). 10,000 pinned entries make the
 * teardown (freeing them, emptying the store) long enough to be hit many times over. */
static void test_sigterm_during_teardown(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	enum { N = 10000 };
	char dir[PATH_MAX];
	pid_t daemon = p->daemon_pid;
	long long deadline;
	int status = 0, sent = 0;
	pid_t r;

	make_pinned_files(p, "many", "f", N, dir);
	CHECK(umount2(p->mnt, 0));
	deadline = pool_now_ms() + GONE_MS;
	while ((r = waitpid(daemon, &status, WNOHANG)) == 0) {
		if (pool_now_ms() >= deadline)
			fail_msg("daemon %ld still there %d ms after its unmount", (long)daemon,
				 GONE_MS);
		CHECK(kill(daemon, SIGTERM));
		sent++;
		usleep(100);
	}
	CHECK(r);
	p->daemon_pid = 0;
	p->exit_status = status;
	p->store[0] = '\0';
	p->mounted = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg(
			"daemon wait status %#x after %d SIGTERMs during its teardown, want exit 0",
			status, sent);
	if (p->private_store) {
		CHECK_0(pool_wait_store_gone(p, GONE_MS));
		return;
	}
	assert_int_equal(store_entries_left(p), 0);
}

/* umount -l while a file is open and mapped: the pool keeps serving it, and once both are gone
 * the daemon exits 0 and leaves the backing dir empty. */
static void test_lazy_unmount_with_open_file(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	unsigned char buf[8192];
	int fd = create_open(f);
	unsigned char *m;

	pat_fill(buf, sizeof(buf), 70, 0);
	assert_int_equal(pwrite_all(fd, buf, sizeof(buf), 0), sizeof(buf));
	m = mmap(NULL, sizeof(buf), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	CHECK(umount2(p->mnt, MNT_DETACH));
	assert_false(pool_is_mounted(p));
	/* still served */
	assert_true(pool_daemon_alive(p));
	assert_int_equal(pread_all(fd, buf, sizeof(buf), 0), sizeof(buf));
	assert_int_equal(pat_check(buf, sizeof(buf), 70, 0), -1);
	pat_fill(m, sizeof(buf), 71, 0);
	CHECK(close(fd));
	assert_int_equal(pat_check(m, sizeof(buf), 71, 0), -1);
	CHECK(munmap(m, sizeof(buf)));
	/* pool_unmount finds it detached, waits for the daemon, checks exit 0 and the backing */
	CHECK_0(pool_unmount(p));
}

/* fusermount3 -u, as a user would unmount. */
static void test_fusermount_unmount(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execlp("fusermount3", "fusermount3", "-u", p->mnt, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* pool_unmount finds it unmounted, reaps the daemon and checks exit 0 and the backing */
	CHECK_0(pool_unmount(p));
}

static int count_dir(const char *dir, char *first, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *ent;
	int n = 0;

	if (!d)
		fail_msg("opendir %s: %s", dir, errname(errno));
	while ((ent = readdir(d))) {
		if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, ".."))
			continue;
		if (!n && first)
			snprintf(first, len, "%s", ent->d_name);
		n++;
	}
	closedir(d);
	return n;
}

/* A killed daemon leaves its subfolder; the next daemon on that backing dir sweeps it, and the
 * new pool starts empty. A private tmpfs instance needs no sweep: it dies with the daemon, held
 * data included. */
static void test_killed_daemon_swept_by_next(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(e, p, "e");
	PATH(f, p, "f");
	char old[256], now[256];
	int fd;

	CHECK(mkdir(e, 0700));
	fd = create_open(f);
	CHECK(write(fd, "x", 1));
	CHECK(setxattr(f, POOLFS_XATTR_HOLD, "pin", 3, 0));
	CHECK(close(fd));
	CHECK_0(pool_kill_daemon(p, SIGKILL));
	assert_false(pool_is_mounted(p));
	if (p->private_store) {
		/* (the new instance may get the dead one's device number: the kernel reuses them) */
		CHECK_0(pool_wait_store_gone(p, GONE_MS));
		CHECK_0(pool_remount(p, "autohold=none"));
		assert_int_equal(pool_backing_files(p), 0);
		assert_int_equal(count_dir(p->mnt, NULL, 0), 0);
		return;
	}
	assert_int_equal(count_dir(p->backing, old, sizeof(old)), 1);
	assert_true(pool_backing_files(p) >= 1);

	CHECK_0(pool_remount(p, "autohold=none"));
	assert_int_equal(count_dir(p->backing, now, sizeof(now)), 1);
	if (strcmp(old, now) == 0)
		fail_msg("the dead daemon's %s was not swept", old);
	assert_int_equal(count_dir(p->mnt, NULL, 0), 0);
	fd = create_open(f);
	CLOSE_UNTIL_GONE(fd, f);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_none, tu_teardown)
#define TD(fn) cmocka_unit_test_setup_teardown(fn, setup_default, tu_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_mount_reports_datapath),
		T(test_random_rw_mmap),
		T(test_large_file),
		T(test_small_file_two_views),
		T(test_small_file_first_read),
		T(test_concurrent_writers_disjoint),
		T(test_concurrent_writers_interleaved),
		T(test_entry_kinds_unheld),
		T(test_o_direct_refused),
		T(test_name_length),
		T(test_xattr_roundtrip),
		T(test_poolfs_xattrs),
		T(test_pin_hold),
		T(test_setattr_and_fallocate),
		T(test_statfs),
		T(test_readdir_many),
		T(test_readdir_big_folder_while_it_changes),
		T(test_snapshot_gives_waiters_turns),
		cmocka_unit_test(test_bad_options_refused),
		T(test_clean_unmount),
		T(test_sigterm_unmounts_cleanly),
		T(test_sigterm_during_teardown),
		T(test_fusermount_unmount),
		T(test_lazy_unmount_with_open_file),
		T(test_killed_daemon_swept_by_next),
		TD(test_clean_unmount_default_autohold),
	};
	const char *s = getenv("POOLFS_SEED");

	pg = sysconf(_SC_PAGESIZE);
	seed = s && s[0] ? (uint32_t)strtoul(s, NULL, 0)
			 : (uint32_t)time(NULL) ^ (uint32_t)getpid();
	fprintf(stderr, "# seed %u (set POOLFS_SEED=%u to repeat)\n", seed, seed);
	return ITEST_RUN(tests);
}
