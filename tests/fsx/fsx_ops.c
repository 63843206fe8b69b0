/* fsx_ops: the random operations of poolfs-fsx. Each draws its parameters from the seeded
 * generator, applies the same change by the same method to the pool file and the reference file,
 * updates the model and checks what it touched. Mappings never reach past the page holding the
 * last byte of the file (no SIGBUS by construction). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsx.h"

const char *const op_names[OP_COUNT] = {
	"write",     "read",   "mapread",   "mapwrite", "truncate",
	"fallocate", "reopen", "forkwrite", "fadvise",
};

/* Relative frequencies: data movers dominate; the slow or disruptive ones (fork, reopen) are rarer
 * but still hundreds of times in a 3000-op run. */
const unsigned op_default_weight[OP_COUNT] = {20, 14, 14, 16, 8, 8, 4, 5, 3};

const struct falloc_mode falloc_modes[NFALLOC] = {
	{0, "alloc"},
	{FALLOC_FL_KEEP_SIZE, "keep_size"},
	{FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, "punch_hole"},
	{FALLOC_FL_ZERO_RANGE, "zero_range"},
	{FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, "zero_keep"},
};

static uint64_t rnd(struct fsx *f)
{
	/* splitmix64: tiny, good enough, and the same on every libc, so a seed replays anywhere */
	uint64_t z = (f->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t rnd_below(struct fsx *f, size_t n)
{
	return n ? (size_t)(rnd(f) % n) : 0;
}

static size_t page_down(const struct fsx *f, size_t x)
{
	return x & ~(f->pagesz - 1);
}

static size_t page_up(const struct fsx *f, size_t x)
{
	return (x + f->pagesz - 1) & ~(f->pagesz - 1);
}

/* ---- range generators ---- */

/* A range to write: anywhere below maxlen, sometimes at EOF (appends), sometimes page-aligned (the
 * whole-page paths of the page cache differ from the partial-page ones). */
static void gen_write_range(struct fsx *f, size_t *off, size_t *len)
{
	*len = 1 + rnd_below(f, f->maxop);
	*off = rnd_below(f, 8) == 0 ? f->m.size : rnd_below(f, f->maxlen);
	if (rnd_below(f, 4) == 0) {
		*off = page_down(f, *off);
		*len = page_up(f, *len);
		if (*len > f->maxop) /* wbuf holds maxop bytes, which need not be whole pages */
			*len = f->maxop;
	}
	if (*off >= f->maxlen)
		*off = page_down(f, f->maxlen - 1);
	if (*off + *len > f->maxlen)
		*len = f->maxlen - *off;
}

/* A range inside the file (size > 0): for reads that must not pass EOF (mappings). */
static void gen_inside_range(struct fsx *f, size_t *off, size_t *len)
{
	*off = rnd_below(f, f->m.size);
	if (rnd_below(f, 4) == 0)
		*off = page_down(f, *off);
	*len = 1 + rnd_below(f, f->maxop);
	if (*len > f->m.size - *off)
		*len = f->m.size - *off;
}

/* ---- operations: each returns 0 or -errno with f->why set ---- */

static int op_write(struct fsx *f)
{
	size_t off, len;
	int ret;

	gen_write_range(f, &off, &len);
	f->cur = log_add(&f->log, f->opnum, "write", "pwrite", off, len, f->m.size);
	fsx_pattern(f->wbuf, off, len, f->opnum);
	ret = pwrite_full(f->pool_fd, f->wbuf, len, off);
	if (ret)
		return failf(f, ret, "pwrite to the pool file: %s", strerror(-ret));
	ret = pwrite_full(f->ref_fd, f->wbuf, len, off);
	if (ret)
		return failf(f, ret, "pwrite to the reference file: %s", strerror(-ret));
	model_write(&f->m, off, f->wbuf, len);
	return check_range(f, off, len, "after write");
}

static int op_read(struct fsx *f)
{
	size_t off, len;

	/* unlike a mapping, a read may run past EOF: it must come back short, exactly at EOF */
	off = f->m.size ? rnd_below(f, f->m.size + f->pagesz) : 0;
	len = 1 + rnd_below(f, f->maxop);
	f->cur = log_add(&f->log, f->opnum, "read", "pread", off, len, f->m.size);
	return check_range(f, off, len, "read");
}

/* Fault in every page of a mapping by reading it: a later change must reach pages already mapped,
 * not only pages faulted afterwards. */
static void touch_pages(const struct fsx *f, const unsigned char *p, size_t len)
{
	volatile unsigned char sink = 0;

	for (size_t i = 0; i < len; i += f->pagesz)
		sink ^= p[i];
	(void)sink;
}

static int op_mapread(struct fsx *f)
{
	size_t off, len, pg, mapend, maplen, woff = 0, wlen = 0;
	unsigned char *p;
	long first;
	int fdwrite, ret = 0;

	if (f->m.size == 0) {
		f->cur = log_add(&f->log, f->opnum, "mapread", "", 0, 0, 0);
		f->cur->note = "skipped: empty file";
		f->skipped[OP_MAPREAD]++;
		return 0;
	}
	gen_inside_range(f, &off, &len);
	/* sometimes pwrite into the range while it is mapped: the mapping must show it */
	fdwrite = rnd_below(f, 4) == 0;
	if (fdwrite) {
		woff = off + rnd_below(f, len);
		wlen = 1 + rnd_below(f, off + len - woff);
	}
	f->cur = log_add(&f->log, f->opnum, "mapread", fdwrite ? "pwrite-in" : "", off, len,
			 f->m.size);
	f->cur->off2 = woff;
	f->cur->len2 = wlen;
	pg = page_down(f, off);
	mapend = page_up(f, off + len); /* <= page_up(size): no page wholly past EOF, no SIGBUS */
	maplen = mapend - pg;
	p = mmap(NULL, maplen, PROT_READ, MAP_SHARED, f->pool_fd, (off_t)pg);
	if (p == MAP_FAILED)
		return failf(f, -errno, "mmap PROT_READ of the pool file at 0x%zx len 0x%zx: %s",
			     pg, maplen, strerror(errno));
	if (fdwrite) {
		touch_pages(f, p, maplen);
		fsx_pattern(f->wbuf, woff, wlen, f->opnum);
		ret = pwrite_full(f->pool_fd, f->wbuf, wlen, woff);
		if (ret) {
			ret = failf(f, ret, "pwrite to the mapped pool file: %s", strerror(-ret));
			goto out;
		}
		ret = pwrite_full(f->ref_fd, f->wbuf, wlen, woff);
		if (ret) {
			ret = failf(f, ret, "pwrite to the reference file: %s", strerror(-ret));
			goto out;
		}
		model_write(&f->m, woff, f->wbuf, wlen);
	}
	first = model_diff(&f->m, off, p + (off - pg), len);
	if (first >= 0) {
		memcpy(f->rbuf, p + (off - pg), len);
		ret = fail_data(f,
				fdwrite ? "mapread (through a mapping made before the pwrite)"
					: "mapread (through the mapping)",
				off, f->rbuf, len, first);
		goto out;
	}
	/* the tail of the page holding EOF must read as zero through a mapping */
	if (mapend > f->m.size) {
		first = model_diff(&f->m, f->m.size, p + (f->m.size - pg), mapend - f->m.size);
		if (first >= 0) {
			memcpy(f->rbuf, p + (f->m.size - pg), mapend - f->m.size);
			ret = fail_data(f, "mapread (tail of the EOF page through the mapping)",
					f->m.size, f->rbuf, mapend - f->m.size, first);
		}
	}
out:
	munmap(p, maplen);
	return ret;
}

/* Write wbuf over [off, off+len) of fd through a shared mapping (the file already reaches off+len),
 * msync it if asked; unmap it, or hand it back in *keep (*keeplen bytes) when keep is not NULL. */
static int map_write_fd(struct fsx *f, int fd, size_t off, size_t len, int do_msync,
			unsigned char **keep, size_t *keeplen)
{
	size_t pg = page_down(f, off), maplen = page_up(f, off + len) - pg;
	unsigned char *p = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)pg);

	if (p == MAP_FAILED)
		return -errno;
	memcpy(p + (off - pg), f->wbuf, len);
	if (do_msync && msync(p, maplen, MS_SYNC) < 0) {
		int err = -errno;

		munmap(p, maplen);
		return err;
	}
	if (keep) {
		*keep = p;
		*keeplen = maplen;
	} else {
		munmap(p, maplen);
	}
	return 0;
}

static int op_mapwrite(struct fsx *f)
{
	static const char *const hows[] = {"msync", "msync", "no-msync", "pread-mapped"};
	unsigned char *keep = NULL;
	size_t off, len, keeplen = 0;
	int how, ret;

	gen_write_range(f, &off, &len);
	/* msync, or only munmap (the data must be there either way), or pread while still mapped and
	 * not synced (the reader must see the mapping's bytes at once) */
	how = (int)rnd_below(f, 4);
	f->cur = log_add(&f->log, f->opnum, "mapwrite", hows[how], off, len, f->m.size);
	fsx_pattern(f->wbuf, off, len, f->opnum);
	if (off + len > f->m.size) {
		/* a mapping cannot grow a file: extend first, as a program would */
		if (ftruncate(f->pool_fd, (off_t)(off + len)) < 0)
			return failf(f, -errno,
				     "ftruncate of the pool file to 0x%zx before mapwrite: %s",
				     off + len, strerror(errno));
		if (ftruncate(f->ref_fd, (off_t)(off + len)) < 0)
			return failf(f, -errno, "ftruncate of the reference file: %s",
				     strerror(errno));
		model_truncate(&f->m, off + len);
	}
	ret = map_write_fd(f, f->pool_fd, off, len, how < 2, how == 3 ? &keep : NULL, &keeplen);
	if (ret)
		return failf(f, ret, "mapwrite to the pool file (mmap/msync): %s", strerror(-ret));
	ret = map_write_fd(f, f->ref_fd, off, len, how < 2, NULL, NULL);
	if (!ret)
		model_write(&f->m, off, f->wbuf, len);
	else
		ret = failf(f, ret, "mapwrite to the reference file: %s", strerror(-ret));
	if (!ret && keep)
		ret = check_range(f, off, len, "pread while the mapwrite's mapping lives");
	if (keep)
		munmap(keep, keeplen);
	return ret ? ret : check_range(f, off, len, "after mapwrite");
}

static int op_truncate(struct fsx *f)
{
	size_t old = f->m.size, size, lo, hi;
	int by_path = rnd_below(f, 4) == 0;

	switch (rnd_below(f, 4)) {
	case 0: /* near the current size: partial-page edges */
		size = old + rnd_below(f, 2 * f->pagesz);
		size = size > f->pagesz ? size - f->pagesz : 0;
		break;
	case 1:
		size = page_down(f, rnd_below(f, f->maxlen + 1));
		break;
	case 2:
		size = rnd_below(f, 8) ? rnd_below(f, f->maxlen + 1) : 0;
		break;
	default:
		size = rnd_below(f, f->maxlen + 1);
		break;
	}
	if (size > f->maxlen)
		size = f->maxlen;
	/* by path the daemon gets a setattr without a file handle: another code path */
	f->cur = log_add(&f->log, f->opnum, "truncate", by_path ? "path" : "fd", 0, 0, old);
	if ((by_path ? truncate(f->pool_path, (off_t)size) : ftruncate(f->pool_fd, (off_t)size)) <
	    0)
		return failf(f, -errno, "truncate of the pool file from 0x%zx to 0x%zx: %s", old,
			     size, strerror(errno));
	if (ftruncate(f->ref_fd, (off_t)size) < 0)
		return failf(f, -errno, "ftruncate of the reference file: %s", strerror(errno));
	model_truncate(&f->m, size);
	/* from the page holding the lower edge to a page past the higher: zeroed tails show here */
	lo = page_down(f, old < size ? old : size);
	hi = (old > size ? old : size) + f->pagesz;
	return check_range(f, lo, hi - lo, "after truncate");
}

static int falloc_unsupported(int err)
{
	return err == EOPNOTSUPP || err == ENOSYS;
}

/* Put [lo, hi) and the size of the reference file back to the model's (after a refused op). */
static int ref_resync(struct fsx *f, size_t lo, size_t hi)
{
	int ret;

	if (hi > f->m.size)
		hi = f->m.size;
	if (lo < hi) {
		ret = pwrite_full(f->ref_fd, f->m.buf + lo, hi - lo, lo);
		if (ret)
			return ret;
	}
	return ftruncate(f->ref_fd, (off_t)f->m.size) < 0 ? -errno : 0;
}

static int op_fallocate(struct fsx *f)
{
	size_t off, len, n = 0, k, i;
	int mode, ret;

	for (i = 0; i < NFALLOC; i++)
		n += !f->falloc_off[i];
	if (n == 0) {
		f->cur = log_add(&f->log, f->opnum, "fallocate", "", 0, 0, f->m.size);
		f->cur->note = "skipped: no mode supported";
		f->skipped[OP_FALLOCATE]++;
		return 0;
	}
	k = rnd_below(f, n);
	for (i = 0; i < NFALLOC; i++)
		if (!f->falloc_off[i] && k-- == 0)
			break;
	if (i == NFALLOC) /* cannot be: k < n, the number of modes still on */
		return failf(f, -EIO, "fallocate: no mode left to pick (tester bug)");
	mode = falloc_modes[i].mode;
	gen_write_range(f, &off, &len);
	f->cur = log_add(&f->log, f->opnum, "fallocate", falloc_modes[i].name, off, len, f->m.size);
	/* the reference first: tmpfs lacks some modes, and a mode it refuses is not tested */
	if (fallocate(f->ref_fd, mode, (off_t)off, (off_t)len) < 0) {
		if (!falloc_unsupported(errno))
			return failf(f, -errno, "fallocate %s of the reference file: %s",
				     falloc_modes[i].name, strerror(errno));
		f->falloc_off[i] = 1;
		f->cur->note = "unsupported on the reference fs: mode disabled";
		f->skipped[OP_FALLOCATE]++;
		return 0;
	}
	if (fallocate(f->pool_fd, mode, (off_t)off, (off_t)len) < 0) {
		if (!falloc_unsupported(errno))
			return failf(f, -errno,
				     "fallocate %s of the pool file at 0x%zx len 0x%zx: %s",
				     falloc_modes[i].name, off, len, strerror(errno));
		f->falloc_off[i] = 1;
		f->cur->note = "unsupported on the pool: mode disabled";
		f->skipped[OP_FALLOCATE]++;
		ret = ref_resync(f, off, off + len);
		return ret ? failf(f, ret, "resync of the reference file: %s", strerror(-ret)) : 0;
	}
	if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
		model_zero(&f->m, off, len);
	if (!(mode & FALLOC_FL_KEEP_SIZE))
		model_extend(&f->m, off + len);
	return check_range(f, page_down(f, off), page_up(f, off + len) - page_down(f, off),
			   "after fallocate");
}

static int op_reopen(struct fsx *f)
{
	int trunc = rnd_below(f, 8) == 0;
	int flags = O_RDWR | (trunc ? O_TRUNC : 0);

	f->cur = log_add(&f->log, f->opnum, "reopen", trunc ? "O_TRUNC" : "", 0, 0, f->m.size);
	close(f->pool_fd);
	close(f->ref_fd);
	f->ref_fd = -1;
	f->pool_fd = open(f->pool_path, flags);
	if (f->pool_fd < 0)
		return failf(
			f, -errno, "reopen of the pool file: %s%s", strerror(errno),
			errno == ENOENT
				? " (the pool removed it after the last close: no hold and no anchor?)"
				: "");
	f->ref_fd = open(f->ref_path, flags);
	if (f->ref_fd < 0)
		return failf(f, -errno, "reopen of the reference file: %s", strerror(errno));
	if (trunc)
		model_truncate(&f->m, 0);
	/* a fresh open is where stale caches show: check everything */
	return check_all(f, "after reopen");
}

/* The child of op_forkwrite: write wbuf at [off, off+len) into both files by `how`; exit status 0,
 * or 10 + the step that failed. Never returns. */
static void forkwrite_child(struct fsx *f, int how, size_t off, size_t len, int grow)
{
	int fds[2] = {f->pool_fd, f->ref_fd};

	for (int i = 0; i < 2; i++) {
		if (how == 0) {
			if (pwrite_full(fds[i], f->wbuf, len, off))
				_exit(10 + 3 * i);
			continue;
		}
		if (grow && ftruncate(fds[i], (off_t)(off + len)) < 0)
			_exit(11 + 3 * i);
		unsigned char *keep;
		size_t keeplen;

		/* how 2 leaves the mapping for exit to tear down: the kernel's unmap, not ours */
		if (map_write_fd(f, fds[i], off, len, 0, how == 2 ? &keep : NULL, &keeplen))
			_exit(12 + 3 * i);
	}
	_exit(0);
}

static int op_forkwrite(struct fsx *f)
{
	static const char *const hows[] = {"child-pwrite", "child-mmap", "child-exit"};
	size_t off, len;
	int how, grow, status;
	pid_t pid;

	gen_write_range(f, &off, &len);
	how = (int)rnd_below(f, 3);
	grow = how != 0 && off + len > f->m.size;
	f->cur = log_add(&f->log, f->opnum, "forkwrite", hows[how], off, len, f->m.size);
	fsx_pattern(f->wbuf, off, len, f->opnum);
	fflush(NULL); /* the child exits with _exit, but be safe with -v output */
	pid = fork();
	if (pid < 0)
		return failf(f, -errno, "fork: %s", strerror(errno));
	if (pid == 0)
		forkwrite_child(f, how, off, len, grow);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return failf(f, -errno, "waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status))
		return failf(f, -EIO, "forkwrite child killed by signal %d", WTERMSIG(status));
	if (WEXITSTATUS(status) == CHILD_SIGBUS)
		return failf(f, -EIO, "forkwrite child got SIGBUS writing 0x%zx len 0x%zx", off,
			     len);
	if (WEXITSTATUS(status) != 0) {
		int step = WEXITSTATUS(status) - 10;

		return failf(f, -EIO, "forkwrite child failed (%s of the %s file)",
			     (const char *[]){"pwrite", "ftruncate", "mmap write"}[step % 3],
			     step < 3 ? "pool" : "reference");
	}
	if (grow)
		model_truncate(&f->m, off + len);
	model_write(&f->m, off, f->wbuf, len);
	return check_range(f, off, len, "after forkwrite");
}

static int op_fadvise(struct fsx *f)
{
	int err;

	/* drop clean cached pages so the next reads come from the daemon / the backing store */
	f->cur = log_add(&f->log, f->opnum, "fadvise", "DONTNEED", 0, 0, f->m.size);
	err = posix_fadvise(f->pool_fd, 0, 0, POSIX_FADV_DONTNEED);
	if (err)
		return failf(f, -err, "posix_fadvise DONTNEED of the pool file: %s", strerror(err));
	return check_all(f, "after fadvise");
}

int (*const op_fn[OP_COUNT])(struct fsx *f) = {
	op_write,     op_read,	 op_mapread,   op_mapwrite, op_truncate,
	op_fallocate, op_reopen, op_forkwrite, op_fadvise,
};

enum op pick_op(struct fsx *f)
{
	unsigned total = 0, r;
	int i;

	for (i = 0; i < OP_COUNT; i++)
		total += f->weight[i];
	r = (unsigned)rnd_below(f, total);
	for (i = 0; i < OP_COUNT - 1; i++) {
		if (r < f->weight[i])
			break;
		r -= f->weight[i];
	}
	return (enum op)i;
}
