/* Internal to libpoolfs: the .npy header as pure functions (bytes in, description out, and back),
 * with no file or mapping involved, so they are unit-tested on hostile input without a mount.
 *
 * The format (numpy.lib.format): "\x93NUMPY", major, minor, header length (uint16 LE for 1.0,
 * uint32 LE for 2.0 and 3.0), then an ASCII Python dict literal
 * "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }" padded with spaces and ended by '\n'.
 */
#ifndef POOLFS_NPY_HEADER_H
#define POOLFS_NPY_HEADER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "poolfs.h"

/* Bytes before the dict: magic (6) + version (2) + length (2 for 1.0, 4 for 2.0/3.0). */
#define NPY_PREAMBLE_MIN 10
#define NPY_PREAMBLE_MAX 12
/* Data starts at a multiple of this (numpy's ARRAY_ALIGN). */
#define NPY_ALIGN 64
/* Headers longer than this are refused as malformed (numpy's own reader refuses 10000 by default). */
#define NPY_HEADER_LIMIT (1024 * 1024)
/* Enough for any header npy_header_build() writes for up to POOLFS_ARRAY_MAX_DIMS dimensions. */
#define NPY_HEADER_BUILD_MAX 4096

struct npy_meta {
	enum poolfs_dtype dtype;
	int fortran_order;
	int ndim;
	uint64_t shape[POOLFS_ARRAY_MAX_DIMS];
};

/* Read the preamble in buf[0..len): *total = the full header length (preamble + dict), i.e. the data
 * offset. Needs at least NPY_PREAMBLE_MAX bytes for 2.0/3.0 (NPY_PREAMBLE_MIN for 1.0).
 * Returns 0, -EPROTO (bad magic, too short, length over NPY_HEADER_LIMIT), -ENOTSUP (version not
 * 1.0/2.0/3.0). */
int npy_preamble_parse(const void *buf, size_t len, int *major, size_t *total);

/* Parse a whole header in buf[0..len) (len may exceed the header: data may follow).
 * Fills *m and *data_offset. Returns 0 or -EPROTO / -ENOTSUP / -EOVERFLOW as documented for the
 * array calls in poolfs.h. Never reads outside buf[0..len). */
int npy_header_parse(const void *buf, size_t len, struct npy_meta *m, size_t *data_offset);

/* Write the header for *m into buf[0..cap): format `major` (1 or 2; 0 picks 1.0 unless the dict
 * needs more than 65535 bytes), padded so its length is a multiple of NPY_ALIGN.
 * Returns the header length (> 0), or -EINVAL (bad meta or version), -ERANGE (cap too small),
 * -EOVERFLOW (header too large for the version asked, a dimension over INT64_MAX, or header + data
 * larger than an off_t: the limits npy_header_parse() applies). */
ssize_t npy_header_build(const struct npy_meta *m, int major, void *buf, size_t cap);

/* *nbytes = itemsize * product(shape). Returns 0, -EINVAL (bad dtype/ndim), -EOVERFLOW. */
int npy_data_size(const struct npy_meta *m, uint64_t *nbytes);

/* The dtype for a descr string (length n, no quotes), or -1 if unsupported. Accepts '<' and, for
 * one-byte types, also '|', '=', '>' (byte order is meaningless there). */
int npy_dtype_from_descr(const char *s, size_t n);

#endif
