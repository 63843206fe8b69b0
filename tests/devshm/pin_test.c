/* The devshm suite's pinning check (docs/devshm.md, "Pinning for DMA"). A GPU or RDMA driver pins
 * the pages of a mapping long-term (cudaHostRegister, ibv_reg_mr: pin_user_pages with
 * FOLL_LONGTERM) and its device then reads and writes them with no page fault. io_uring's
 * registered buffers pin the same way (io_uring_register_buffers), so they stand in for the device
 * on a machine without one: a READ_FIXED into the buffer is a DMA write into the pinned pages, a
 * WRITE_FIXED from it a DMA read.
 *
 * A file in /dev/shm (devshm_ns runs this with /dev/shm a pool, or the tmpfs control), mapped
 * MAP_SHARED and registered. What must happen depends on the data path the daemon reports
 * (DEVSHM_DATAPATH), not on the options it was given:
 *   tmpfs, passthrough  the registration succeeds; what READ_FIXED puts into the buffer another
 *                       process reads from the file with read(); what is written through the
 *                       mapping WRITE_FIXED carries out
 *   pagecache           the registration fails with EFAULT: the kernel refuses a long-term
 *                       writable pin of a file mapping whose writeback it must track (a FUSE
 *                       file's), as it refuses cudaHostRegister and ibv_reg_mr there
 * Built only where liburing is found (scripts/build installs liburing-dev). */
#include "testutil.h"

#include <liburing.h>
#include <limits.h>
#include <sys/mman.h>

#define LEN (8UL << 20) /* 4 huge pages of the private tmpfs */
#define HALF (LEN / 2)
#define SRC_SEED 7
#define MAP_SEED 9

static const char *datapath;

/* Submit the one prepared request and wait for its completion: its result. */
static int run_one(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	int r = io_uring_submit(ring);

	if (r != 1)
		fail_msg("io_uring_submit: %d (%s)", r, r < 0 ? errname(-r) : "not 1");
	r = io_uring_wait_cqe(ring, &cqe);
	if (r < 0)
		fail_msg("io_uring_wait_cqe: %s", errname(-r));
	r = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return r;
}

struct reader_arg {
	char path[PATH_MAX];
};

/* Another process reads the file with read(): the first half is what the "device" wrote. */
static int reader_fn(void *arg)
{
	const struct reader_arg *a = arg;
	unsigned char *buf = malloc(HALF);
	int fd = open(a->path, O_RDONLY);

	int r = 0;

	if (!buf || fd < 0)
		r = 1;
	else if (pread_all(fd, buf, HALF, 0) != (ssize_t)HALF)
		r = 2;
	else if (pat_check(buf, HALF, SRC_SEED, 0) != -1)
		r = 3;
	if (r)
		fprintf(stderr, "# reader: step %d failed: %s\n", r, errname(errno));
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

/* A scratch file outside /dev/shm (DEVSHM_WORK) with len bytes of pattern seed (or none). */
static int scratch(const char *name, size_t len, uint32_t seed, char *path)
{
	const char *work = getenv("DEVSHM_WORK");
	unsigned char *buf;
	int fd;

	snprintf(path, PATH_MAX, "%s/%s", work ? work : "/tmp", name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd);
	CHECK(unlink(path));
	if (!len)
		return fd;
	buf = malloc(len);
	assert_non_null(buf);
	pat_fill(buf, len, seed, 0);
	assert_int_equal(pwrite_all(fd, buf, len, 0), (ssize_t)len);
	free(buf);
	return fd;
}

static void test_register_mapped_file(void **state)
{
	int pinnable = strcmp(datapath, "pagecache") != 0;
	char src_path[PATH_MAX], dst_path[PATH_MAX];
	struct reader_arg a;
	struct io_uring ring;
	struct iovec iov;
	unsigned char *p, *back;
	int fd, src, dst, r;

	(void)state;
	snprintf(a.path, sizeof(a.path), "/dev/shm/devshm-pin-%d", (int)getpid());
	{
		const char *names = getenv("DEVSHM_NAMES");
		FILE *f = names ? fopen(names, "a") : NULL;

		if (f) {
			fprintf(f, "%s\n", a.path + strlen("/dev/shm/"));
			fclose(f);
		}
	}
	fd = open(a.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd);
	CHECK(ftruncate(fd, (off_t)LEN));
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	memset(p, 0, LEN);
	r = io_uring_queue_init(4, &ring, 0);
	if (r < 0)
		fail_msg("io_uring_queue_init: %s (a kernel without io_uring?)", errname(-r));
	iov.iov_base = p;
	iov.iov_len = LEN;
	r = io_uring_register_buffers(&ring, &iov, 1);
	fprintf(stderr,
		"# io_uring_register_buffers of a %lu MiB mapping of %s (datapath %s): %s\n",
		LEN >> 20, a.path, datapath, r ? errname(-r) : "pinned");
	if (!pinnable) {
		if (r != -EFAULT)
			fail_msg("registering a page-cache mapping gave %s, want EFAULT",
				 r ? errname(-r) : "success");
		goto out;
	}
	if (r)
		fail_msg("io_uring_register_buffers: %s", errname(-r));

	/* The "device" writes into the pinned pages: another process sees it in the file. */
	src = scratch("pin-src", HALF, SRC_SEED, src_path);
	io_uring_prep_read_fixed(io_uring_get_sqe(&ring), src, p, HALF, 0, 0);
	assert_int_equal(run_one(&ring), (int)HALF);
	REAP_OK(tu_spawn(reader_fn, &a));
	/* What the program writes through its mapping, the "device" reads from the pinned pages. */
	pat_fill(p + HALF, HALF, MAP_SEED, HALF);
	dst = scratch("pin-dst", 0, 0, dst_path);
	io_uring_prep_write_fixed(io_uring_get_sqe(&ring), dst, p + HALF, HALF, 0, 0);
	assert_int_equal(run_one(&ring), (int)HALF);
	back = malloc(HALF);
	assert_non_null(back);
	assert_int_equal(pread_all(dst, back, HALF, 0), (ssize_t)HALF);
	assert_int_equal(pat_check(back, HALF, MAP_SEED, HALF), -1);
	free(back);
	CHECK(close(src));
	CHECK(close(dst));
	CHECK(io_uring_unregister_buffers(&ring));
out:
	io_uring_queue_exit(&ring);
	CHECK(munmap(p, LEN));
	CHECK(close(fd));
	CHECK(unlink(a.path));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_register_mapped_file),
	};

	datapath = getenv("DEVSHM_DATAPATH");
	if (!datapath || !getenv("DEVSHM_KIND"))
		return tu_skip_all("DEVSHM_DATAPATH is not set: run me through devshm_ns");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
