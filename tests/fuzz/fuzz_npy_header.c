/* Fuzz target: npy_header_parse() (lib/npy_header.c), the .npy header of a file someone else wrote.
 *
 * Oracles: only 0, -EPROTO, -ENOTSUP or -EOVERFLOW; the result does not depend on what *m held
 * before; an accepted header agrees with npy_preamble_parse() on its length, lies inside the input,
 * has a valid dtype and ndim, zeroes past ndim, and a data size npy_data_size() accepts; and the
 * header npy_header_build() writes for the parsed description parses back to the same description
 * (with the data 64-byte aligned behind it). What follows the header does not matter: the header
 * alone parses the same, and one byte less of it is a truncated header (-EPROTO). */
#include <errno.h>

#include "fuzz.h"
#include "npy_header.h"

static void check_same(const struct npy_meta *a, const struct npy_meta *b)
{
	FUZZ_CHECK(a->dtype == b->dtype && a->fortran_order == b->fortran_order &&
		   a->ndim == b->ndim);
	FUZZ_CHECK(memcmp(a->shape, b->shape, sizeof(a->shape)) == 0);
}

static void check_accepted(const struct npy_meta *m, size_t offset, const uint8_t *data,
			   size_t size)
{
	int major;
	size_t total;
	uint64_t nbytes;

	FUZZ_CHECK(npy_preamble_parse(data, size, &major, &total) == 0 && total == offset);
	FUZZ_CHECK(offset >= NPY_PREAMBLE_MIN && offset <= size);
	FUZZ_CHECK(m->dtype >= 0 && m->dtype < POOLFS_DTYPE_COUNT);
	FUZZ_CHECK(m->fortran_order == 0 || m->fortran_order == 1);
	FUZZ_CHECK(m->ndim >= 0 && m->ndim <= POOLFS_ARRAY_MAX_DIMS);
	for (int i = m->ndim; i < POOLFS_ARRAY_MAX_DIMS; i++)
		FUZZ_CHECK(m->shape[i] == 0);
	FUZZ_CHECK(npy_data_size(m, &nbytes) == 0);
}

/* The header alone, in a buffer of exactly its size, parses the same; one byte short it is refused. */
static void check_header_alone(const struct npy_meta *m, const uint8_t *data, size_t offset)
{
	uint8_t *copy = malloc(offset);
	struct npy_meta alone;
	size_t off2 = 0;

	FUZZ_CHECK(copy != NULL);
	memcpy(copy, data, offset);
	FUZZ_CHECK(npy_header_parse(copy, offset, &alone, &off2) == 0 && off2 == offset);
	check_same(m, &alone);
	free(copy);
	copy = malloc(offset - 1);
	FUZZ_CHECK(copy != NULL);
	memcpy(copy, data, offset - 1);
	FUZZ_CHECK(npy_header_parse(copy, offset - 1, &alone, &off2) == -EPROTO);
	free(copy);
}

static void check_rebuilt(const struct npy_meta *m)
{
	uint8_t *buf = malloc(NPY_HEADER_BUILD_MAX);
	struct npy_meta back;
	size_t offset;

	FUZZ_CHECK(buf != NULL);
	ssize_t n = npy_header_build(m, 0, buf, NPY_HEADER_BUILD_MAX);
	FUZZ_CHECK(n > 0 && n % NPY_ALIGN == 0);
	memset(&back, 0xa5, sizeof(back));
	FUZZ_CHECK(npy_header_parse(buf, (size_t)n, &back, &offset) == 0);
	FUZZ_CHECK(offset == (size_t)n);
	check_same(m, &back);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npy_meta a, b;
	size_t oa = 1, ob = 2;

	memset(&a, 0x00, sizeof(a));
	memset(&b, 0xa5, sizeof(b));
	int ra = npy_header_parse(data, size, &a, &oa);
	int rb = npy_header_parse(data, size, &b, &ob);
	FUZZ_CHECK(ra == rb);
	FUZZ_CHECK(ra == 0 || ra == -EPROTO || ra == -ENOTSUP || ra == -EOVERFLOW);
	if (ra == 0) {
		FUZZ_CHECK(oa == ob);
		check_same(&a, &b);
		check_accepted(&a, oa, data, size);
		check_header_alone(&a, data, oa);
		check_rebuilt(&a);
	}
	return 0;
}
