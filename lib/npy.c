/* Typed array files in numpy's .npy format: create, open, sync and close, each a file plus one
 * MAP_SHARED mapping of the whole header + data. The header text itself is built and parsed by the
 * pure functions of npy_header.c; this file owns only the I/O and the mapping.
 */
#include "npy_header.h"
#include "poolfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Move n bytes at off (pwrite when `writing`, else pread), going on after short transfers and
 * EINTR; returns the bytes moved (fewer than n only at end of file, or when a write moves nothing)
 * or -errno. One function for both directions, so the restart logic exists once. */
static ssize_t pio_full(int fd, void *buf, size_t n, off_t off, bool writing)
{
	size_t done = 0;

	while (done < n) {
		char *at = (char *)buf + done;
		off_t pos = off + (off_t)done;
		ssize_t r = writing ? pwrite(fd, at, n - done, pos) : pread(fd, at, n - done, pos);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

/* Fill *out from a parsed header and a mapping of the file. */
static void fill(struct poolfs_array *out, const struct npy_meta *m, size_t data_offset,
		 uint64_t nbytes, void *map, size_t map_len, int writable)
{
	memset(out, 0, sizeof *out);
	out->map_base = map;
	out->map_len = map_len;
	out->data = (char *)map + data_offset;
	out->data_offset = data_offset;
	out->nbytes = (size_t)nbytes;
	out->itemsize = poolfs_dtype_size(m->dtype);
	out->nelems = out->nbytes / out->itemsize;
	out->dtype = m->dtype;
	out->ndim = m->ndim;
	out->fortran_order = m->fortran_order;
	out->writable = writable;
	for (int i = 0; i < m->ndim; i++)
		out->shape[i] = (size_t)m->shape[i];
}

int poolfs_array_create(const char *path, enum poolfs_dtype dtype, int ndim, const size_t *shape,
			int fortran_order, struct poolfs_array *out)
{
	struct npy_meta m;
	unsigned char hdr[NPY_HEADER_BUILD_MAX];
	uint64_t nbytes;
	int r;

	if (!path || !out || ndim < 0 || ndim > POOLFS_ARRAY_MAX_DIMS || (ndim > 0 && !shape) ||
	    poolfs_dtype_size(dtype) == 0)
		return -EINVAL;
	memset(&m, 0, sizeof m);
	m.dtype = dtype;
	m.ndim = ndim;
	m.fortran_order = fortran_order ? 1 : 0;
	for (int i = 0; i < ndim; i++)
		m.shape[i] = shape[i];
	if ((r = npy_data_size(&m, &nbytes)) < 0)
		return r;
	ssize_t hl = npy_header_build(&m, 0, hdr, sizeof hdr);
	if (hl < 0)
		return (int)hl;
	if (nbytes > (uint64_t)INT64_MAX - (uint64_t)hl || nbytes > SIZE_MAX - (uint64_t)hl)
		return -EOVERFLOW;
	size_t total = (size_t)hl + (size_t)nbytes;

	/* O_EXCL: truncating a file that someone else maps would SIGBUS them. */
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)total) < 0) {
		r = -errno;
		goto fail;
	}
	/* Reserve the space now, so a full filesystem says ENOSPC here instead of killing whoever first
	 * touches a page of a sparse mapping with SIGBUS. A pool already reserves at ftruncate; where
	 * fallocate does not exist at all, go on as before. */
	if (fallocate(fd, 0, 0, (off_t)total) < 0 && errno != EOPNOTSUPP && errno != ENOSYS) {
		r = -errno;
		goto fail;
	}
	ssize_t w = pio_full(fd, hdr, (size_t)hl, 0, true);
	if (w != hl) {
		r = w < 0 ? (int)w : -EIO; /* a write of 0 bytes: nothing more would go either */
		goto fail;
	}
	void *map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		r = -errno;
		goto fail;
	}
	close(fd); /* the mapping keeps the file in use */
	fill(out, &m, (size_t)hl, nbytes, map, total, 1);
	return 0;

fail:
	/* We created it exclusively, so the name is still ours to remove. */
	unlink(path);
	close(fd);
	return r;
}

/* Alignment a C compiler gives the element type (complex types align like their parts). */
static size_t element_align(size_t itemsize)
{
	return itemsize > 8 ? 8 : itemsize;
}

int poolfs_array_open(const char *path, int flags, struct poolfs_array *out)
{
	unsigned char pre[NPY_PREAMBLE_MAX];
	unsigned char *hdr = NULL;
	struct npy_meta m;
	struct stat st;
	size_t total, data_offset;
	uint64_t nbytes;
	int major, r;

	if (!path || !out || (flags != O_RDONLY && flags != O_RDWR))
		return -EINVAL;
	int fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}

	/* Read the header into our own buffer rather than parsing it in the mapping, where another
	 * writer could change it under the parser. */
	ssize_t n = pio_full(fd, pre, sizeof pre, 0, false);
	if (n < 0) {
		r = (int)n;
		goto out;
	}
	if ((r = npy_preamble_parse(pre, (size_t)n, &major, &total)) < 0)
		goto out;
	if (!(hdr = malloc(total))) {
		r = -ENOMEM;
		goto out;
	}
	if ((n = pio_full(fd, hdr, total, 0, false)) < 0) {
		r = (int)n;
		goto out;
	}
	if ((r = npy_header_parse(hdr, (size_t)n, &m, &data_offset)) < 0)
		goto out;
	if ((r = npy_data_size(&m, &nbytes)) < 0)
		goto out;
	if (data_offset % element_align(poolfs_dtype_size(m.dtype)) != 0) {
		r = -ENOTSUP;
		goto out;
	}
	/* npy_header_parse checked that header + data fits in an off_t */
	uint64_t need = (uint64_t)data_offset + nbytes;
	if (need > SIZE_MAX) {
		r = -EOVERFLOW;
		goto out;
	}
	if ((uint64_t)st.st_size < need) {
		r = -ENODATA;
		goto out;
	}
	int prot = flags == O_RDWR ? PROT_READ | PROT_WRITE : PROT_READ;
	void *map = mmap(NULL, (size_t)need, prot, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		r = -errno;
		goto out;
	}
	fill(out, &m, data_offset, nbytes, map, (size_t)need, flags == O_RDWR);
	r = 0;
out:
	free(hdr);
	close(fd);
	return r;
}

int poolfs_array_sync(struct poolfs_array *a)
{
	if (!a || !a->map_base)
		return -EINVAL;
	if (a->writable && msync(a->map_base, a->map_len, MS_SYNC) < 0)
		return -errno;
	return 0;
}

int poolfs_array_close(struct poolfs_array *a)
{
	int r = 0;

	if (!a)
		return -EINVAL;
	if (a->map_base && munmap(a->map_base, a->map_len) < 0)
		r = -errno;
	memset(a, 0, sizeof *a);
	return r;
}
