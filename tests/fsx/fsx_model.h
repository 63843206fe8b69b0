/* fsx_model: the in-memory truth of poolfs-fsx. Owns the expected contents and size of the file
 * under test, the data pattern writers use, and the comparison that locates the first wrong byte.
 * Pure: no file descriptors, no system calls, so its rules can be read (and trusted) on their own.
 *
 * Invariant: every byte of buf at or past size is zero, so growing the file (truncate up,
 * fallocate, writes past the end) never has to clear anything and shrinking clears the tail.
 */
#ifndef POOLFS_FSX_MODEL_H
#define POOLFS_FSX_MODEL_H

#include <stddef.h>

struct fsx_model {
	unsigned char *buf; /* maxlen bytes */
	size_t size;	    /* the file's current size */
	size_t maxlen;	    /* the largest size the tester ever asks for */
};

/* 0 or -ENOMEM. */
int model_init(struct fsx_model *m, size_t maxlen);
void model_free(struct fsx_model *m);

/* Copy len bytes to [off, off+len), growing size if that ends past it. off+len <= maxlen. */
void model_write(struct fsx_model *m, size_t off, const unsigned char *src, size_t len);

/* Set the size: shrinking zeroes the cut tail (keeps the invariant), growing adds zeroes. */
void model_truncate(struct fsx_model *m, size_t size);

/* Zero [off, off+len) clipped to the current size (punch hole, zero range). */
void model_zero(struct fsx_model *m, size_t off, size_t len);

/* Grow the size to at least size (fallocate without KEEP_SIZE); never shrinks. */
void model_extend(struct fsx_model *m, size_t size);

/* First index i in [0, len) where got[i] differs from the model at off+i (bytes at or past the
 * model's size are expected to be zero), or -1 if all match. */
long model_diff(const struct fsx_model *m, size_t off, const unsigned char *got, size_t len);

/* How many bytes of got differ from the model over [off, off+len). */
size_t model_count_diff(const struct fsx_model *m, size_t off, const unsigned char *got,
			size_t len);

/* The bytes op number opnum writes at file offsets [off, off+len): never zero (so lost data and
 * zero-fill bugs show), different per op and per position (so misplaced or stale pages show). */
void fsx_pattern(unsigned char *dst, size_t off, size_t len, unsigned long opnum);

#endif
