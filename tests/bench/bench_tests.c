/* bench_tests: the measurements of poolfs-bench. Each runs once per repetition and target, creates
 * its own files, times only the part named in the report, checks the data it reads, and leaves
 * nothing behind (on a pool: it waits until the pool removed the file by itself).
 *
 * Pools are mounted with autohold=none, so a file closed by everyone goes at once: where a test
 * needs the file across phases, an untimed "anchor" fd keeps it (the timed phase opens its own fd,
 * so its close and the FLUSH it sends are timed).
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static int failed(const struct bench_target *t, const char *test, const char *what, int err)
{
	fprintf(stderr, "poolfs-bench: %s on %s: %s: %s\n", test, t->name, what,
		err == -EILSEQ	    ? "wrong data read back"
		: err == -ETIMEDOUT ? "timed out"
				    : strerror(-err));
	return err;
}

static double gbps(size_t bytes, double secs)
{
	return (double)bytes / secs / 1e9;
}

/* Size the open file fd to size bytes, map it shared and fill it with the pattern: 0 and *out
 * (the caller unmaps it), or -errno after saying what failed (for the test named test). */
static int map_filled(struct bench_target *t, const char *test, int fd, size_t size,
		      unsigned char **out)
{
	unsigned char *p;

	if (ftruncate(fd, (off_t)size) < 0)
		return failed(t, test, "ftruncate", -errno);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return failed(t, test, "mmap", -errno);
	fill_pages(p, size);
	*out = p;
	return 0;
}

/* Write a fresh file through MAP_SHARED: open, ftruncate, fill, munmap, close (all timed: *secs).
 * The file must exist (the caller's anchor keeps it). 0 or -errno after saying what failed. */
static int mmap_write(const struct bench_cfg *c, struct bench_target *t, const char *path,
		      double *secs)
{
	double t0 = now_s();
	unsigned char *p = MAP_FAILED;
	int fd, ret = 0;

	fd = open(path, O_RDWR);
	if (fd < 0)
		return failed(t, "mmap", "open", -errno);
	ret = map_filled(t, "mmap", fd, c->size, &p);
	if (p != MAP_FAILED)
		munmap(p, c->size);
	close(fd);
	*secs = now_s() - t0;
	return ret;
}

/* mmap write of a fresh file (ftruncate + fill through MAP_SHARED, close included), then the same
 * file mapped and summed by another process; once it is gone, another fresh file written the same
 * way ("next fresh file"). The first write takes whatever memory the other targets left; the
 * next one reuses what the first freed: on a VM whose host backs guest memory lazily, and with
 * huge pages that need whole 2 MiB blocks, the two differ by up to 30x (docs/design.md,
 * "Huge pages and writes"), on raw tmpfs and pools alike. */
static int t_mmap(const struct bench_cfg *c, struct bench_target *t, unsigned rep)
{
	char path[PATH_MAX];
	int anchor, ret;
	double secs = 0;

	bench_path(path, t, "mmap", rep, 0);
	anchor = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (anchor < 0)
		return failed(t, "mmap", "create", -errno);
	ret = mmap_write(c, t, path, &secs);
	if (ret)
		goto out;
	t->res.v[M_MMAP_WRITE][rep] = gbps(c->size, secs);
	ret = child_map_and_sum(path, c->size, &secs);
	if (ret) {
		failed(t, "mmap read", "child", ret);
		goto out;
	}
	t->res.v[M_MMAP_READ][rep] = gbps(c->size, secs);
out:
	ret = finish_anchored(t, path, anchor, ret);
	if (ret)
		return ret;

	bench_path(path, t, "mmap", rep, 1);
	anchor = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (anchor < 0)
		return failed(t, "mmap", "create", -errno);
	ret = mmap_write(c, t, path, &secs);
	if (!ret)
		t->res.v[M_MMAP_REWRITE][rep] = gbps(c->size, secs);
	return finish_anchored(t, path, anchor, ret);
}

/* pwrite of a fresh file in 1 MiB blocks (close included), then pread of it in 1 MiB blocks by
 * the same process, nothing dropped in between: the reads are warm wherever the data path keeps
 * what was written (tmpfs and passthrough always; the page-cache path if the daemon lets the
 * kernel keep its cache). */
static int t_rw(const struct bench_cfg *c, struct bench_target *t, unsigned rep)
{
	char path[PATH_MAX];
	unsigned char *buf;
	int anchor = -1, fd = -1, ret = 0;
	double t0;

	buf = aligned_alloc(4096, c->block);
	if (!buf)
		return failed(t, "rw", "buffer", -ENOMEM);
	bench_path(path, t, "rw", rep, 0);
	anchor = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (anchor < 0) {
		ret = failed(t, "rw", "create", -errno);
		free(buf);
		return ret;
	}
	t0 = now_s();
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		ret = failed(t, "pwrite", "open", -errno);
		goto out;
	}
	ret = write_blocks(fd, c->size, c->block, buf);
	if (ret) {
		failed(t, "pwrite", "pwrite", ret);
		goto out;
	}
	close(fd);
	t->res.v[M_PWRITE][rep] = gbps(c->size, now_s() - t0);

	t0 = now_s();
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		ret = failed(t, "pread", "open", -errno);
		goto out;
	}
	for (size_t off = 0; off < c->size; off += c->block) {
		size_t len = c->size - off < c->block ? c->size - off : c->block;
		ssize_t n = pread(fd, buf, len, (off_t)off);

		if (n != (ssize_t)len) {
			ret = failed(t, "pread", "pread", n < 0 ? -errno : -EIO);
			goto out;
		}
		/* one byte per page: cheap next to the copy, catches a wrong or empty block */
		for (size_t i = 0; i < len; i += 4096)
			if (buf[i] != (unsigned char)((off + i) / 4096 * 7 % 255 + 1)) {
				ret = failed(t, "pread", "check", -EILSEQ);
				goto out;
			}
	}
	close(fd);
	fd = -1;
	t->res.v[M_PREAD][rep] = gbps(c->size, now_s() - t0);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return finish_anchored(t, path, anchor, ret);
}

/* Create + write 4 KiB + close, then until the name is gone: on a pool the removal the close
 * triggers (autohold=none), on raw tmpfs an unlink. Names are all new. */
static int t_create(const struct bench_cfg *c, struct bench_target *t, unsigned rep)
{
	char path[PATH_MAX];
	unsigned char *buf = calloc(1, c->small);
	double t0;
	int ret = 0;

	if (!buf)
		return failed(t, "create", "buffer", -ENOMEM);
	memset(buf, 0x5a, c->small);
	t0 = now_s();
	for (unsigned i = 0; i < c->ncreate; i++) {
		int fd;

		bench_path(path, t, "c", rep, i);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0) {
			ret = failed(t, "create", path, -errno);
			goto out;
		}
		if (write(fd, buf, c->small) != (ssize_t)c->small) {
			ret = failed(t, "create", "write", -EIO);
			close(fd);
			goto out;
		}
		close(fd);
		ret = finish_entry(t, path);
		if (ret) {
			failed(t, "create", "removal", ret);
			goto out;
		}
	}
	t->res.v[M_CREATE][rep] = c->ncreate / (now_s() - t0);
out:
	free(buf);
	return ret;
}

#define CREATE_PROCS 2

/* One process of t_create2: once `go` reads EOF, the create loop in `dir`, each file unlinked
 * after its close. 0 or an errno (the exit code). */
static int create_loop(const struct bench_cfg *c, const char *dir, int go)
{
	char path[PATH_MAX], byte;
	unsigned char *buf = malloc(c->small);

	if (!buf || read(go, &byte, 1) != 0)
		return buf ? EIO : ENOMEM;
	memset(buf, 0x5a, c->small);
	for (unsigned i = 0; i < c->ncreate; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/f%u", dir, i);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0)
			return errno;
		if (write(fd, buf, c->small) != (ssize_t)c->small || close(fd) < 0 ||
		    unlink(path) < 0)
			return errno ? errno : EIO;
	}
	free(buf);
	return 0;
}

/* The create loop in CREATE_PROCS processes at once, each in a folder of its own (the kernel
 * serializes the creates of one folder): what the pool lets two cores do together. On a pool
 * the folders are pinned, so a file stays until its unlink, as on raw tmpfs. Timed from the
 * processes' release to the last exit. */
static int t_create2(const struct bench_cfg *c, struct bench_target *t, unsigned rep)
{
	char dirs[CREATE_PROCS][PATH_MAX];
	pid_t pids[CREATE_PROCS];
	int go[2], ret = 0, status;
	unsigned started = 0;
	double t0;

	for (unsigned k = 0; k < CREATE_PROCS; k++) {
		bench_path(dirs[k], t, "p", rep, k);
		if (mkdir(dirs[k], 0700) < 0 ||
		    (t->is_pool && setxattr(dirs[k], "user.poolfs.hold", "pin", 3, 0) < 0))
			return failed(t, "create2", dirs[k], -errno);
	}
	if (pipe(go) < 0)
		return failed(t, "create2", "pipe", -errno);
	for (; started < CREATE_PROCS; started++) {
		pids[started] = fork();
		if (pids[started] < 0) {
			ret = failed(t, "create2", "fork", -errno);
			break;
		}
		if (pids[started] == 0) {
			close(go[1]);
			_exit(create_loop(c, dirs[started], go[0]));
		}
	}
	close(go[0]);
	t0 = now_s();
	close(go[1]); /* EOF: every process starts */
	for (unsigned k = 0; k < started; k++) {
		if (waitpid(pids[k], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			ret = failed(t, "create2", "a creating process",
				     WIFEXITED(status) ? -WEXITSTATUS(status) : -EINTR);
	}
	if (ret == 0)
		t->res.v[M_CREATE2][rep] = CREATE_PROCS * c->ncreate / (now_s() - t0);
	for (unsigned k = 0; k < CREATE_PROCS; k++) {
		/* On a pool the empty folder goes once its pin does. */
		int r = t->is_pool ? (removexattr(dirs[k], "user.poolfs.hold") < 0
					      ? -errno
					      : wait_gone(dirs[k], 10.0))
				   : (rmdir(dirs[k]) < 0 ? -errno : 0);
		if (r < 0 && ret == 0)
			ret = failed(t, "create2", dirs[k], r);
	}
	return ret;
}

/* nprocs processes map the same file and sum it at once, released together through a pipe;
 * timed from the release to the last exit. The file is written beforehand (untimed). */
static int t_map8(const struct bench_cfg *c, struct bench_target *t, unsigned rep)
{
	char path[PATH_MAX];
	unsigned char *buf;
	pid_t pids[64];
	unsigned started = 0, bad = 0;
	int anchor, gate[2] = {-1, -1}, ret = 0;
	double t0;

	bench_path(path, t, "map8", rep, 0);
	buf = aligned_alloc(4096, c->block);
	anchor = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (!buf || anchor < 0) {
		ret = failed(t, "map8", "create", buf ? -errno : -ENOMEM);
		free(buf);
		if (anchor >= 0)
			goto out;
		return ret;
	}
	ret = write_blocks(anchor, c->size, c->block, buf);
	if (ret) {
		failed(t, "map8", "pwrite", ret);
		goto out;
	}
	if (pipe(gate) < 0) {
		ret = failed(t, "map8", "pipe", -errno);
		goto out;
	}
	fflush(NULL);
	for (; started < c->nprocs && started < 64; started++) {
		pids[started] = fork();
		if (pids[started] < 0) {
			ret = failed(t, "map8", "fork", -errno);
			break;
		}
		if (pids[started] == 0) {
			char b;
			double secs;

			close(gate[1]);
			/* EOF once the parent closes its end: every child starts at the same moment */
			if (read(gate[0], &b, 1) < 0)
				_exit(2);
			_exit(map_and_sum(path, c->size, &secs) ? 1 : 0);
		}
	}
	t0 = now_s();
	close(gate[1]);
	gate[1] = -1;
	for (unsigned i = 0; i < started; i++) {
		int status = 0;

		while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR)
			;
		bad += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	if (!ret && bad)
		ret = failed(t, "map8", "a reader", -EILSEQ);
	if (!ret)
		t->res.v[M_MAP8][rep] = gbps(c->size * started, now_s() - t0);
out:
	if (gate[0] >= 0)
		close(gate[0]);
	if (gate[1] >= 0)
		close(gate[1]);
	free(buf);
	return finish_anchored(t, path, anchor, ret);
}

/* Memory per byte stored: /proc/meminfo before, and while a file of size bytes written through a
 * shared mapping (msync'ed, so the page-cache path has handed it to the backing store too) is held
 * mapped. Cached counts tmpfs and page-cache pages; Shmem only tmpfs; MemAvailable what the
 * kernel could still give (a clean page-cache copy counts as partly available). */
static int t_mem(const struct bench_cfg *c, struct bench_target *t, unsigned rep)
{
	char path[PATH_MAX];
	struct meminfo before, during;
	unsigned char *p = MAP_FAILED;
	int fd, ret;
	double size = (double)c->size;

	bench_path(path, t, "mem", rep, 0);
	/* let the frees of the previous test (an unlink, a daemon's removal) settle first */
	sleep_s(0.5);
	ret = meminfo_read(&before);
	if (ret)
		return failed(t, "mem", "/proc/meminfo", ret);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return failed(t, "mem", "create", -errno);
	ret = map_filled(t, "mem", fd, c->size, &p);
	if (ret)
		goto out;
	if (msync(p, c->size, MS_SYNC) < 0) {
		ret = failed(t, "mem", "msync", -errno);
		goto out;
	}
	/* per-CPU counters reach /proc/meminfo with a small delay */
	sleep_s(0.2);
	ret = meminfo_read(&during);
	if (ret) {
		failed(t, "mem", "/proc/meminfo", ret);
		goto out;
	}
	t->res.v[M_MEM_CACHED][rep] = (double)(during.cached_kb - before.cached_kb) * 1024 / size;
	t->res.v[M_MEM_SHMEM][rep] = (double)(during.shmem_kb - before.shmem_kb) * 1024 / size;
	t->res.v[M_MEM_AVAIL][rep] = (double)(before.avail_kb - during.avail_kb) * 1024 / size;
out:
	if (p != MAP_FAILED)
		munmap(p, c->size);
	return finish_anchored(t, path, fd, ret);
}

/* Removal latency after the last munmap (pools only): create, map a page, close (the mapping keeps
 * the file), check the name is still there, munmap and poll until the name is gone. */
static int t_rmlat(const struct bench_cfg *c, struct bench_target *t, unsigned rep)
{
	unsigned n = (c->nlat + c->reps - 1) / c->reps;
	char path[PATH_MAX];
	struct stat st;
	int ret;

	for (unsigned i = 0; i < n; i++) {
		unsigned char *p;
		double t0;
		int fd;

		bench_path(path, t, "lat", rep, i);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd < 0)
			return failed(t, "rmlat", "create", -errno);
		if (ftruncate(fd, 4096) < 0) {
			ret = failed(t, "rmlat", "ftruncate", -errno);
			close(fd);
			finish_entry(t, path);
			return ret;
		}
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (p == MAP_FAILED) {
			ret = failed(t, "rmlat", "mmap", -errno);
			finish_entry(t, path);
			return ret;
		}
		p[0] = 1;
		if (lstat(path, &st) < 0) {
			/* a lifetime bug, not a benchmark problem: say it loudly */
			ret = failed(t, "rmlat", "file gone while still mapped", -errno);
			munmap(p, 4096);
			return ret;
		}
		t0 = now_s();
		munmap(p, 4096);
		ret = wait_gone(path, 10.0);
		if (ret) {
			failed(t, "rmlat", "not removed after the last munmap", ret);
			unlink(path);
			return ret;
		}
		ret = add_latency(&t->res, now_s() - t0);
		if (ret)
			return failed(t, "rmlat", "samples", ret);
	}
	return 0;
}

const struct bench_test bench_tests[] = {
	{"mmap", 0, t_mmap, 0},	      {"rw", 0, t_rw, 0},   {"create", 0, t_create, 0},
	{"map8", 0, t_map8, 0},	      {"mem", 0, t_mem, 0}, {"rmlat", 1, t_rmlat, 0},
	{"create2", 0, t_create2, 0}, {"shm", 0, t_shm, 1}, {"sem", 0, t_sem, 1},
};
const size_t bench_ntests = sizeof(bench_tests) / sizeof(bench_tests[0]);
