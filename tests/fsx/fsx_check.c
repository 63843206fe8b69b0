/* fsx_check: the comparisons of poolfs-fsx. Owns what "the file is right" means: both sizes equal
 * the model's, a pread returns exactly the bytes below EOF and stops there, every byte equals the
 * model; and the text of a failure (where, how many bytes, expected vs got). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsx.h"

__attribute__((format(printf, 3, 4))) int failf(struct fsx *f, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	/* ap is started just above: clang-tidy 14 loses sight of va_start when one run checks
	 * several files, and then flags this call. */
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	vsnprintf(f->why, sizeof(f->why), fmt, ap);
	va_end(ap);
	return err;
}

/* pread (write 0) or pwrite (write 1) until len bytes moved or the file ends: the count moved,
 * or -errno. Only the write side reads buf. */
static ssize_t io_full(int fd, unsigned char *buf, size_t len, size_t off, int write)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write ? pwrite(fd, buf + done, len - done, (off_t)(off + done))
				  : pread(fd, buf + done, len - done, (off_t)(off + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

ssize_t pread_full(int fd, unsigned char *buf, size_t len, size_t off)
{
	return io_full(fd, buf, len, off, 0);
}

int pwrite_full(int fd, const unsigned char *buf, size_t len, size_t off)
{
	ssize_t n = io_full(fd, (unsigned char *)buf, len, off, 1);

	/* a write that moves nothing would loop forever: it is an I/O error */
	if (n < 0)
		return (int)n;
	return (size_t)n < len ? -EIO : 0;
}

/* Describe a data mismatch at file offset bad into f->why: where, how many, expected vs got. */
int fail_data(struct fsx *f, const char *what, size_t off, const unsigned char *got, size_t len,
	      long first)
{
	size_t bad = off + (size_t)first;
	size_t nbad = model_count_diff(&f->m, off, got, len);
	size_t show = len - (size_t)first < 16 ? len - (size_t)first : 16;
	char exp_hex[64] = "", got_hex[64] = "";

	for (size_t i = 0; i < show; i++) {
		size_t p = bad + i;
		unsigned e = p < f->m.maxlen ? f->m.buf[p] : 0;

		snprintf(exp_hex + 3 * i, sizeof(exp_hex) - 3 * i, "%02x ", e);
		snprintf(got_hex + 3 * i, sizeof(got_hex) - 3 * i, "%02x ", got[first + (long)i]);
	}
	return failf(
		f, -EIO,
		"%s: data mismatch at offset 0x%zx (page 0x%zx + 0x%zx), %zu of 0x%zx bytes checked from 0x%zx "
		"differ; file size 0x%zx%s\n  expected: %s\n  got:      %s",
		what, bad, bad / f->pagesz, bad % f->pagesz, nbad, len, off, f->m.size,
		bad >= f->m.size ? " (past EOF: must read as zero)" : "", exp_hex, got_hex);
}

static int check_size(struct fsx *f, const char *when)
{
	struct stat st;

	if (fstat(f->pool_fd, &st) < 0)
		return failf(f, -errno, "%s: fstat of the pool file: %s", when, strerror(errno));
	if ((size_t)st.st_size != f->m.size)
		return failf(f, -EIO, "%s: pool file size is 0x%jx, expected 0x%zx", when,
			     (intmax_t)st.st_size, f->m.size);
	if (fstat(f->ref_fd, &st) < 0)
		return failf(f, -errno, "%s: fstat of the reference file: %s", when,
			     strerror(errno));
	if ((size_t)st.st_size != f->m.size)
		return failf(f, -EIO,
			     "%s: reference file size is 0x%jx, expected 0x%zx (tester bug?)", when,
			     (intmax_t)st.st_size, f->m.size);
	return 0;
}

/* pread [off, off+len) of fd (the pool unless is_ref): the right byte count (short exactly at EOF)
 * and the right bytes. len <= maxlen + maxop + page. */
static int check_range_fd(struct fsx *f, int is_ref, size_t off, size_t len, const char *when)
{
	int fd = is_ref ? f->ref_fd : f->pool_fd;
	const char *name = is_ref ? "reference file" : "pool file";
	size_t want = off < f->m.size ? f->m.size - off : 0;
	ssize_t n;
	long first;
	char what[128];

	if (want > len)
		want = len;
	n = pread_full(fd, f->rbuf, len, off);
	if (n < 0)
		return failf(f, (int)n, "%s: pread of the %s at 0x%zx len 0x%zx: %s", when, name,
			     off, len, strerror((int)-n));
	if ((size_t)n != want)
		return failf(
			f, -EIO,
			"%s: pread of the %s at 0x%zx len 0x%zx returned 0x%zx bytes, expected 0x%zx "
			"(file size 0x%zx)",
			when, name, off, len, (size_t)n, want, f->m.size);
	first = model_diff(&f->m, off, f->rbuf, (size_t)n);
	if (first < 0)
		return 0;
	snprintf(what, sizeof(what), "%s (pread of the %s)%s", when, name,
		 is_ref ? " [the tmpfs reference disagrees with the model: tester bug?]" : "");
	return fail_data(f, what, off, f->rbuf, (size_t)n, first);
}

int check_range(struct fsx *f, size_t off, size_t len, const char *when)
{
	int ret = check_size(f, when);

	return ret ? ret : check_range_fd(f, 0, off, len, when);
}

/* The whole pool file and one page past its end (reads must stop at EOF), then the reference. */
int check_all(struct fsx *f, const char *when)
{
	int ret = check_size(f, when);

	if (!ret)
		ret = check_range_fd(f, 0, 0, f->m.size + f->pagesz, when);
	if (!ret)
		ret = check_range_fd(f, 1, 0, f->m.size + f->pagesz, when);
	return ret;
}
