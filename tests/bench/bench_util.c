/* bench_util: the plumbing of poolfs-bench: clocks, /proc/meminfo, the data pattern and its
 * checksum, mapping a file in a child process, waiting for a pool to remove a name, statistics. */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sleep_s(double s)
{
	struct timespec ts = {.tv_sec = (time_t)s,
			      .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int meminfo_read(struct meminfo *mi)
{
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");
	int found = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		long long kb;

		if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
			mi->avail_kb = kb, found |= 1;
		else if (sscanf(line, "Shmem: %lld kB", &kb) == 1)
			mi->shmem_kb = kb, found |= 2;
		else if (sscanf(line, "Cached: %lld kB", &kb) == 1)
			mi->cached_kb = kb, found |= 4;
	}
	fclose(f);
	if (found != 7)
		return -ENODATA;
	/* Free pages parked on the per-CPU lists are not in MemFree, hence not in MemAvailable; a
	 * big free followed by an allocation moves pages through them (tens of MB here), which
	 * would hide that much of a file. Count them back in from /proc/zoneinfo. */
	f = fopen("/proc/zoneinfo", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		long long pages;

		if (sscanf(line, " count: %lld", &pages) == 1)
			mi->avail_kb += pages * (sysconf(_SC_PAGESIZE) / 1024);
	}
	fclose(f);
	return 0;
}

void bench_path(char *buf, const struct bench_target *t, const char *name, unsigned rep, unsigned i)
{
	snprintf(buf, PATH_MAX, "%s/%s-%u-%u", t->dir, name, rep, i);
}

int wait_gone(const char *path, double timeout_s)
{
	double start = now_s();
	struct stat st;
	unsigned spins = 0;

	for (;;) {
		if (lstat(path, &st) < 0)
			return errno == ENOENT ? 0 : -errno;
		if (now_s() - start > timeout_s)
			return -ETIMEDOUT;
		/* spin first (removal is usually a matter of microseconds), then give the daemon the CPU:
		 * this machine may have as few CPUs as the daemon has busy threads */
		if (++spins < 64)
			sched_yield();
		else
			sleep_s(20e-6);
	}
}

int finish_entry(const struct bench_target *t, const char *path)
{
	int ret;

	if (!t->is_pool)
		return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	ret = wait_gone(path, 10.0);
	if (ret == -ETIMEDOUT) {
		fprintf(stderr,
			"poolfs-bench: %s: %s still there 10 s after its last use (not removed)\n",
			t->name, path);
		unlink(path);
	}
	return ret;
}

static unsigned char page_byte(size_t page)
{
	return (unsigned char)(page * 7 % 255 + 1);
}

void fill_pages(unsigned char *p, size_t size)
{
	for (size_t off = 0; off < size; off += PAGE)
		memset(p + off, page_byte(off / PAGE), size - off < PAGE ? size - off : PAGE);
}

void fill_block(unsigned char *p, size_t off, size_t len)
{
	/* off is a page multiple: the bytes fill_pages would put at [off, off+len) of the file */
	for (size_t i = 0; i < len; i += PAGE)
		memset(p + i, page_byte((off + i) / PAGE), len - i < PAGE ? len - i : PAGE);
}

uint64_t expected_sum(size_t size)
{
	uint64_t s = 0;

	for (size_t page = 0; page < size / PAGE; page++)
		s += (uint64_t)page_byte(page) * 0x0101010101010101ULL * (PAGE / 8);
	return s;
}

uint64_t sum_words(const unsigned char *p, size_t size)
{
	const uint64_t *w = (const uint64_t *)p;
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	size_t n = size / 8, i;

	/* four chains so the adds are not the bottleneck; page faults are what we measure */
	for (i = 0; i + 4 <= n; i += 4) {
		s0 += w[i];
		s1 += w[i + 1];
		s2 += w[i + 2];
		s3 += w[i + 3];
	}
	for (; i < n; i++)
		s0 += w[i];
	return s0 + s1 + s2 + s3;
}

int map_and_sum(const char *path, size_t size, double *secs)
{
	double t0 = now_s();
	int fd = open(path, O_RDONLY), ret = 0;
	unsigned char *p;
	uint64_t s;

	if (fd < 0)
		return -errno;
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	s = sum_words(p, size);
	munmap(p, size);
	if (s != expected_sum(size))
		ret = -EILSEQ;
out:
	close(fd);
	*secs = now_s() - t0;
	return ret;
}

int run_in_child(void (*fn)(void *arg, void *msg), void *arg, void *msg, size_t len)
{
	int pfd[2], status, ret = 0;
	pid_t pid;

	if (pipe(pfd) < 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return ret;
	}
	if (pid == 0) {
		close(pfd[0]);
		fn(arg, msg);
		_exit(write(pfd[1], msg, len) == (ssize_t)len ? 0 : 1);
	}
	close(pfd[1]);
	if (read(pfd[0], msg, len) != (ssize_t)len)
		ret = -ECHILD;
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return ret;
}

struct child_msg {
	int ret;
	double secs;
};

struct map_and_sum_args {
	const char *path;
	size_t size;
};

static void map_and_sum_child(void *arg, void *msg)
{
	const struct map_and_sum_args *a = arg;
	struct child_msg *m = msg;

	m->ret = map_and_sum(a->path, a->size, &m->secs);
}

int child_map_and_sum(const char *path, size_t size, double *secs)
{
	struct map_and_sum_args args = {.path = path, .size = size};
	struct child_msg msg = {.ret = -EIO};
	int ret = run_in_child(map_and_sum_child, &args, &msg, sizeof(msg));

	if (ret)
		return ret;
	*secs = msg.secs;
	return msg.ret;
}

int write_blocks(int fd, size_t size, size_t block, unsigned char *buf)
{
	for (size_t off = 0; off < size; off += block) {
		size_t len = size - off < block ? size - off : block;
		ssize_t n;

		fill_block(buf, off, len);
		n = pwrite(fd, buf, len, (off_t)off);
		if (n < 0)
			return -errno;
		if ((size_t)n != len)
			return -EIO;
	}
	return 0;
}

int add_latency(struct bench_results *r, double secs)
{
	if (r->nlat == r->caplat) {
		size_t cap = r->caplat ? 2 * r->caplat : 256;
		double *n = realloc(r->lat, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->lat = n;
		r->caplat = cap;
	}
	r->lat[r->nlat++] = secs;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

size_t stats(double *v, size_t n, double *med, double *min, double *max)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i]))
			v[k++] = v[i];
	*med = *min = *max = NAN;
	if (!k)
		return 0;
	qsort(v, k, sizeof(*v), cmp_double);
	*min = v[0];
	*max = v[k - 1];
	*med = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
	return k;
}

int finish_anchored(const struct bench_target *t, const char *path, int fd, int ret)
{
	int ret2;

	close(fd);
	ret2 = finish_entry(t, path);
	return ret ? ret : ret2;
}
