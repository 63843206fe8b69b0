/* Fuzz target: npy_header_build() (lib/npy_header.c) from descriptions made of the input, checked
 * by the parser: parse(build(m)) == m.
 *
 * Input layout: byte 0 the dtype (a few out of range too), byte 1 fortran_order, byte 2 ndim (-2 to
 * 69, so out of range both ways), byte 3 the format version asked (-1 to 3) and whether to give a
 * buffer too small, then 9 bytes per dimension: a selector and 8 bytes (the selector keeps most
 * dimensions small, so products often fit, but lets through 0, huge and INT64_MAX-sized ones).
 *
 * Oracles: build succeeds exactly when the description is valid (npy_data_size() accepts it), the
 * version is 0, 1 or 2, the buffer is large enough and header + data fit in an off_t; then the header is a multiple of 64 bytes,
 * has the version asked (0: 1.0), and parses back to the same description with the data right
 * behind it. */
#include <errno.h>

#include "fuzz.h"
#include "npy_header.h"

static uint64_t dim_from(const uint8_t *p)
{
	uint64_t raw;

	memcpy(&raw, p + 1, sizeof(raw));
	switch (p[0] % 8) {
	case 0:
		return 0;
	case 1:
		return raw;
	case 2:
		return raw >> 1; /* up to INT64_MAX */
	case 3:
		return (uint64_t)INT64_MAX - (raw & 0xff);
	default:
		return raw & 0xff;
	}
}

static void read_meta(const uint8_t *data, size_t size, struct npy_meta *m)
{
	memset(m, 0, sizeof(*m));
	m->dtype = (enum poolfs_dtype)((int)(data[0] % (POOLFS_DTYPE_COUNT + 3)) - 1);
	m->fortran_order = data[1] & 1;
	m->ndim = (int)(data[2] % 72) - 2;
	const uint8_t *p = data + 4;
	for (int i = 0; i < m->ndim && i < POOLFS_ARRAY_MAX_DIMS && p + 9 <= data + size;
	     i++, p += 9)
		m->shape[i] = dim_from(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npy_meta m, back;
	uint64_t nbytes;
	size_t offset;

	if (size < 4)
		return 0;
	read_meta(data, size, &m);
	int major = (int)(data[3] % 5) - 1;
	int small = (data[3] >> 4) & 1;
	size_t cap = small ? 64 : NPY_HEADER_BUILD_MAX;
	uint8_t *buf = malloc(cap);
	FUZZ_CHECK(buf != NULL);

	ssize_t n = npy_header_build(&m, major, buf, cap);
	int valid = npy_data_size(&m, &nbytes) == 0 && major >= 0 && major <= 2;
	if (!valid) {
		FUZZ_CHECK(n == -EINVAL || n == -EOVERFLOW);
	} else if (n == -ERANGE) {
		FUZZ_CHECK(small); /* only the 64-byte buffer may be too small */
	} else if (n == -EOVERFLOW) {
		/* header + data must stay addressable as an off_t, as the parser demands */
		FUZZ_CHECK(nbytes > (uint64_t)INT64_MAX - NPY_HEADER_BUILD_MAX);
	} else {
		FUZZ_CHECK(n > 0 && (size_t)n <= cap && n % NPY_ALIGN == 0);
		FUZZ_CHECK(buf[6] == (major == 2 ? 2 : 1));
		memset(&back, 0xa5, sizeof(back));
		FUZZ_CHECK(npy_header_parse(buf, (size_t)n, &back, &offset) == 0);
		FUZZ_CHECK(offset == (size_t)n);
		FUZZ_CHECK(back.dtype == m.dtype && back.fortran_order == m.fortran_order);
		FUZZ_CHECK(back.ndim == m.ndim &&
			   memcmp(back.shape, m.shape, sizeof(m.shape)) == 0);
	}
	free(buf);
	return 0;
}
