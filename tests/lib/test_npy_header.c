/* Unit tests of the pure .npy header code (lib/npy_header.c): the dtype table, exact numpy-format
 * output, build/parse round trips, and hostile input (truncation at every length, bad quoting,
 * malformed dicts, overflowing shapes, random mutations). Every parse runs on a heap buffer of
 * exactly the given length, so an over-read shows up under ASan/valgrind.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy_header.h"
#include "npy_v1.h"

/* Parse a copy of buf[0..len) held in an exact-size allocation. */
static int parse_exact(const void *buf, size_t len, struct npy_meta *m, size_t *off)
{
	void *copy = malloc(len ? len : 1);
	assert_non_null(copy);
	memcpy(copy, buf, len);
	int r = npy_header_parse(copy, len, m, off);
	free(copy);
	return r;
}

/* A v1.0 header around an arbitrary dict text (padded to 64 like numpy, '\n' last). */
static size_t wrap_v1(const char *dict, unsigned char *out, size_t cap)
{
	size_t total = npy_v1_wrap(dict, 64, out, cap);
	assert_true(total > 0);
	return total;
}

static int parse_dict_text(const char *dict, struct npy_meta *m)
{
	static unsigned char buf[1 << 17];
	size_t off;
	size_t n = wrap_v1(dict, buf, sizeof buf);
	return parse_exact(buf, n, m, &off);
}

static void test_dtype_table(void **state)
{
	(void)state;
	static const char *const want[POOLFS_DTYPE_COUNT] = {
		"<f8", "<f4", "<i8", "<i4", "<i2",  "|i1", "<u8",
		"<u4", "<u2", "|u1", "|b1", "<c16", "<c8",
	};
	static const size_t sizes[POOLFS_DTYPE_COUNT] = {8, 4, 8, 4, 2, 1, 8, 4, 2, 1, 1, 16, 8};
	for (int d = 0; d < POOLFS_DTYPE_COUNT; d++) {
		assert_string_equal(poolfs_dtype_descr((enum poolfs_dtype)d), want[d]);
		assert_int_equal(poolfs_dtype_size((enum poolfs_dtype)d), sizes[d]);
		assert_int_equal(npy_dtype_from_descr(want[d], strlen(want[d])), d);
	}
	assert_null(poolfs_dtype_descr(POOLFS_DTYPE_COUNT));
	assert_null(poolfs_dtype_descr((enum poolfs_dtype) - 1));
	assert_int_equal(poolfs_dtype_size(POOLFS_DTYPE_COUNT), 0);

	/* one-byte types: any byte order mark; larger ones: little-endian only */
	assert_int_equal(npy_dtype_from_descr("<i1", 3), POOLFS_DTYPE_I1);
	assert_int_equal(npy_dtype_from_descr(">u1", 3), POOLFS_DTYPE_U1);
	assert_int_equal(npy_dtype_from_descr("=b1", 3), POOLFS_DTYPE_B1);
	static const char *const bad[] = {">f8",  "=f8",     "|f8", "<f16", "<U5", "|O",
					  "|S1",  "<M8[ns]", "f8",  "<",    "",	   "<f8 ",
					  "<c32", "xi1",     "<b2", "<i3"};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
		assert_int_equal(npy_dtype_from_descr(bad[k], strlen(bad[k])), -1);
	/* a descr containing a NUL byte */
	assert_int_equal(npy_dtype_from_descr("\0i1", 3), -1);
}

/* The bytes numpy 1.24 writes for np.save(f, np.zeros((3, 4))) and np.arange(10.0). */
static void test_build_matches_numpy(void **state)
{
	(void)state;
	unsigned char buf[NPY_HEADER_BUILD_MAX];
	struct npy_meta m = {.dtype = POOLFS_DTYPE_F8, .ndim = 2, .shape = {3, 4}};

	ssize_t n = npy_header_build(&m, 0, buf, sizeof buf);
	assert_int_equal(n, 128);
	assert_memory_equal(buf, "\x93NUMPY\x01\x00\x76\x00", 10);
	const char *dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }";
	assert_memory_equal(buf + 10, dict, strlen(dict));
	for (size_t i = 10 + strlen(dict); i < 127; i++)
		assert_int_equal(buf[i], ' ');
	assert_int_equal(buf[127], '\n');

	m.ndim = 1;
	m.shape[0] = 10;
	n = npy_header_build(&m, 0, buf, sizeof buf);
	assert_int_equal(n, 128);
	dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (10,), }";
	assert_memory_equal(buf + 10, dict, strlen(dict));

	m.ndim = 0;
	m.dtype = POOLFS_DTYPE_C16;
	m.fortran_order = 1;
	n = npy_header_build(&m, 0, buf, sizeof buf);
	assert_int_equal(n, 128);
	dict = "{'descr': '<c16', 'fortran_order': True, 'shape': (), }";
	assert_memory_equal(buf + 10, dict, strlen(dict));
}

static void check_roundtrip(const struct npy_meta *m, int major)
{
	unsigned char buf[NPY_HEADER_BUILD_MAX];
	struct npy_meta back;
	size_t off;

	ssize_t n = npy_header_build(m, major, buf, sizeof buf);
	assert_true(n > 0);
	assert_int_equal(n % NPY_ALIGN, 0);
	assert_int_equal(buf[n - 1], '\n');
	assert_int_equal(buf[6], major == 2 ? 2 : 1);
	int maj;
	size_t total;
	assert_int_equal(npy_preamble_parse(buf, (size_t)n, &maj, &total), 0);
	assert_int_equal(total, (size_t)n);

	memset(&back, 0x5a, sizeof back);
	assert_int_equal(parse_exact(buf, (size_t)n, &back, &off), 0);
	assert_int_equal(off, (size_t)n);
	assert_int_equal(back.dtype, m->dtype);
	assert_int_equal(back.fortran_order, m->fortran_order);
	assert_int_equal(back.ndim, m->ndim);
	for (int i = 0; i < m->ndim; i++)
		assert_int_equal(back.shape[i], m->shape[i]);
}

static void test_roundtrip(void **state)
{
	(void)state;
	struct npy_meta m;

	for (int d = 0; d < POOLFS_DTYPE_COUNT; d++)
		for (int ndim = 0; ndim <= POOLFS_ARRAY_MAX_DIMS; ndim++)
			for (int fo = 0; fo < 2; fo++) {
				memset(&m, 0, sizeof m);
				m.dtype = (enum poolfs_dtype)d;
				m.ndim = ndim;
				m.fortran_order = fo;
				for (int i = 0; i < ndim; i++)
					m.shape[i] = ndim > 8 ? 1 : (uint64_t)(i * 7 + 3);
				check_roundtrip(&m, 0);
				check_roundtrip(&m, 1);
				check_roundtrip(&m, 2);
			}
	/* the widest numbers and zero dimensions */
	memset(&m, 0, sizeof m);
	m.dtype = POOLFS_DTYPE_U1;
	m.ndim = 1;
	m.shape[0] = INT64_MAX - 128; /* the largest file an off_t can describe */
	check_roundtrip(&m, 0);
	m.shape[0]++;
	unsigned char big[NPY_HEADER_BUILD_MAX];
	assert_int_equal(npy_header_build(&m, 0, big, sizeof big), -EOVERFLOW);
	m.ndim = 3;
	m.shape[0] = UINT64_MAX;
	m.shape[1] = 0;
	m.shape[2] = UINT64_MAX / 3;
	/* the product is 0, but numpy cannot hold a dimension past INT64_MAX: neither side writes or
	 * reads one */
	unsigned char buf[NPY_HEADER_BUILD_MAX];
	assert_int_equal(npy_header_build(&m, 0, buf, sizeof buf), -EOVERFLOW);
	struct npy_meta back;
	size_t off;
	size_t n = wrap_v1("{'descr': '|u1', 'fortran_order': False, "
			   "'shape': (18446744073709551615, 0, 6148914691236517205), }",
			   buf, sizeof buf);
	assert_int_equal(parse_exact(buf, n, &back, &off), -EOVERFLOW);
	m.shape[0] = INT64_MAX;
	m.shape[2] = INT64_MAX;
	check_roundtrip(&m, 0);
	/* 64 dimensions of the widest numbers still fit the builder's buffer */
	m.ndim = POOLFS_ARRAY_MAX_DIMS;
	for (int i = 0; i < m.ndim; i++)
		m.shape[i] = i == 5 ? 0 : INT64_MAX;
	check_roundtrip(&m, 0);
}

static void test_build_errors(void **state)
{
	(void)state;
	unsigned char buf[NPY_HEADER_BUILD_MAX];
	struct npy_meta m = {.dtype = POOLFS_DTYPE_F8, .ndim = 1, .shape = {3}};

	assert_int_equal(npy_header_build(&m, 3, buf, sizeof buf), -EINVAL);
	assert_int_equal(npy_header_build(&m, -1, buf, sizeof buf), -EINVAL);
	assert_int_equal(npy_header_build(&m, 0, buf, 127), -ERANGE);
	assert_int_equal(npy_header_build(&m, 0, buf, 0), -ERANGE);
	m.dtype = POOLFS_DTYPE_COUNT;
	assert_int_equal(npy_header_build(&m, 0, buf, sizeof buf), -EINVAL);
	m.dtype = (enum poolfs_dtype) - 1;
	assert_int_equal(npy_header_build(&m, 0, buf, sizeof buf), -EINVAL);
	m.dtype = POOLFS_DTYPE_F8;
	m.ndim = -1;
	assert_int_equal(npy_header_build(&m, 0, buf, sizeof buf), -EINVAL);
	m.ndim = POOLFS_ARRAY_MAX_DIMS + 1;
	assert_int_equal(npy_header_build(&m, 0, buf, sizeof buf), -EINVAL);
	m.ndim = 2;
	m.shape[0] = 1ull << 32;
	m.shape[1] = 1ull << 32;
	assert_int_equal(npy_header_build(&m, 0, buf, sizeof buf), -EOVERFLOW);
}

static void test_data_size(void **state)
{
	(void)state;
	struct npy_meta m = {.dtype = POOLFS_DTYPE_F8};
	uint64_t n;

	assert_int_equal(npy_data_size(&m, &n), 0);
	assert_int_equal(n, 8); /* a 0-d array holds one element */
	m.ndim = 2;
	m.shape[0] = 1ull << 30;
	m.shape[1] = 1ull << 29;
	assert_int_equal(npy_data_size(&m, &n), 0);
	assert_int_equal(n, 1ull << 62);
	m.shape[1] = 1ull << 30; /* 2^63 bytes: past INT64_MAX */
	assert_int_equal(npy_data_size(&m, &n), -EOVERFLOW);
	m.shape[1] = 1ull << 40; /* wraps uint64 */
	assert_int_equal(npy_data_size(&m, &n), -EOVERFLOW);
	m.ndim = 3;
	m.shape[2] = 0; /* a zero anywhere: no overflow, 0 bytes */
	assert_int_equal(npy_data_size(&m, &n), 0);
	assert_int_equal(n, 0);
	m.dtype = POOLFS_DTYPE_U1;
	m.ndim = 1;
	m.shape[0] = INT64_MAX;
	assert_int_equal(npy_data_size(&m, &n), 0);
	assert_int_equal(n, INT64_MAX);
	m.dtype = POOLFS_DTYPE_I2;
	assert_int_equal(npy_data_size(&m, &n), -EOVERFLOW);
}

/* Every strict prefix of a valid header is refused cleanly. */
static void test_truncated_everywhere(void **state)
{
	(void)state;
	unsigned char buf[NPY_HEADER_BUILD_MAX];
	struct npy_meta m = {.dtype = POOLFS_DTYPE_C8, .ndim = 3, .shape = {2, 3, 4}}, back;
	size_t off;

	for (int major = 1; major <= 2; major++) {
		ssize_t n = npy_header_build(&m, major, buf, sizeof buf);
		assert_true(n > 0);
		for (size_t len = 0; len < (size_t)n; len++)
			assert_int_equal(parse_exact(buf, len, &back, &off), -EPROTO);
		assert_int_equal(parse_exact(buf, (size_t)n, &back, &off), 0);
	}
	assert_int_equal(npy_header_parse(NULL, 0, &back, &off), -EPROTO);
}

static void test_preamble(void **state)
{
	(void)state;
	unsigned char buf[NPY_HEADER_BUILD_MAX];
	struct npy_meta m = {.dtype = POOLFS_DTYPE_F4, .ndim = 1, .shape = {5}}, back;
	size_t off, total;
	int maj;
	ssize_t n = npy_header_build(&m, 1, buf, sizeof buf);

	/* bad magic, each byte */
	for (int i = 0; i < 6; i++) {
		buf[i] ^= 0x20;
		assert_int_equal(parse_exact(buf, (size_t)n, &back, &off), -EPROTO);
		buf[i] ^= 0x20;
	}
	/* versions: 0.x, 4.0 and minor != 0 are unsupported, 3.0 is 2.0 with UTF-8 allowed */
	buf[6] = 0;
	assert_int_equal(parse_exact(buf, (size_t)n, &back, &off), -ENOTSUP);
	buf[6] = 4;
	assert_int_equal(parse_exact(buf, (size_t)n, &back, &off), -ENOTSUP);
	buf[6] = 255;
	assert_int_equal(parse_exact(buf, (size_t)n, &back, &off), -ENOTSUP);
	buf[6] = 1;
	buf[7] = 1;
	assert_int_equal(parse_exact(buf, (size_t)n, &back, &off), -ENOTSUP);
	buf[7] = 0;

	n = npy_header_build(&m, 2, buf, sizeof buf);
	buf[6] = 3;
	assert_int_equal(parse_exact(buf, (size_t)n, &back, &off), 0);
	assert_int_equal(back.shape[0], 5);

	/* a header length pointing past the buffer, or past the limit */
	buf[6] = 2;
	buf[8] = 0xff;
	buf[9] = 0xff;
	buf[10] = 0xff;
	buf[11] = 0xff;
	assert_int_equal(parse_exact(buf, (size_t)n, &back, &off), -EPROTO);
	assert_int_equal(npy_preamble_parse(buf, (size_t)n, &maj, &total), -EPROTO);
	buf[8] = 0;
	buf[9] = 0;
	buf[10] = 0x10; /* exactly 1 MiB: allowed by the preamble, but the buffer is short */
	buf[11] = 0;
	assert_int_equal(npy_preamble_parse(buf, (size_t)n, &maj, &total), 0);
	assert_int_equal(total, 12 + (1u << 20));
	assert_int_equal(parse_exact(buf, (size_t)n, &back, &off), -EPROTO);
	buf[8] = 1; /* one byte over the limit */
	assert_int_equal(npy_preamble_parse(buf, (size_t)n, &maj, &total), -EPROTO);
	/* 2.0 needs 12 preamble bytes */
	assert_int_equal(npy_preamble_parse(buf, 11, &maj, &total), -EPROTO);

	/* a zero-length dict */
	memcpy(buf, "\x93NUMPY\x01\x00\x00\x00", 10);
	assert_int_equal(parse_exact(buf, 10, &back, &off), -EPROTO);
}

struct dict_case {
	const char *dict;
	int want;
};

static void test_dicts(void **state)
{
	(void)state;
	static const struct dict_case cases[] = {
		/* accepted spellings */
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 0},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}", 0},
		{"{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (3,)}", 0},
		{"{'shape': (3,), 'fortran_order': False, 'descr': '<f8'}", 0},
		{"{ 'descr' : '<f8' ,\n 'fortran_order' :True,'shape':( 3 , 4 , ) , }", 0},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (3L, 4L), }", 0},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }", 0},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 0},
		{"{'descr': '|i1', 'fortran_order': False, 'shape': (1, 2, 3), }", 0},
		/* broken syntax */
		{"", -EPROTO},
		{"{", -EPROTO},
		{"}", -EPROTO},
		{"{}", -EPROTO},
		{"[]", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False}", -EPROTO},
		{"{'descr': '<f8', 'shape': (3,)}", -EPROTO},
		{"{'fortran_order': False, 'shape': (3,)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'x': 1}", -EPROTO},
		{"{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (3,)}",
		 -EPROTO},
		{"{'descr: '<f8', 'fortran_order': False, 'shape': (3,)}", -EPROTO},
		{"{'descr\": '<f8', 'fortran_order': False, 'shape': (3,)}", -EPROTO},
		{"{'descr': '<f8\", 'fortran_order': False, 'shape': (3,)}", -EPROTO},
		{"{'des\\cr': '<f8', 'fortran_order': False, 'shape': (3,)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }\\", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (3,)} x", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (3,),, }", -EPROTO},
		{"{'descr': '<f8' 'fortran_order': False, 'shape': (3,)}", -EPROTO},
		{"{'descr' '<f8', 'fortran_order': False, 'shape': (3,)}", -EPROTO},
		{"{descr: '<f8', 'fortran_order': False, 'shape': (3,)}", -EPROTO},
		{"{'descr': <f8, 'fortran_order': False, 'shape': (3,)}", -EPROTO},
		{"{'descr': '<f\n8', 'fortran_order': False, 'shape': (3,)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': 0, 'shape': (3,)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': true, 'shape': (3,)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': 'False', 'shape': (3,)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (3)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': 3}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': [3]}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (-3,)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (+3,)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (3,,)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (,)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (,3)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (03,)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (3.0,)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (1_000,)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (0x10,)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (L,)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (3 4)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': ((3,),)}", -EPROTO},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (3,", -EPROTO},
		{"{'descr': ['<f8'", -EPROTO},
		{"{'descr': [('x', '<f8'), ('y' '<i4')], 'fortran_order': False, 'shape': (3,)}",
		 0 /* see below */},
		{"{'descr': [('x', '<f8')}, 'fortran_order': False, 'shape': (3,)}", -EPROTO},
		/* well-formed but unsupported */
		{"{'descr': '>f8', 'fortran_order': False, 'shape': (3,)}", -ENOTSUP},
		{"{'descr': '<U8', 'fortran_order': False, 'shape': (3,)}", -ENOTSUP},
		{"{'descr': '|O', 'fortran_order': False, 'shape': (3,)}", -ENOTSUP},
		{"{'descr': '', 'fortran_order': False, 'shape': (3,)}", -ENOTSUP},
		{"{'descr': '<f\\x38', 'fortran_order': False, 'shape': (3,)}", -ENOTSUP},
		{"{'descr': [('x', '<f8'), ('y', '<i4')], 'fortran_order': False, 'shape': (3,)}",
		 -ENOTSUP},
		{"{'descr': [('x', '<f8', (2, 2)), ('y', [('a', '|u1')])], 'fortran_order': False, "
		 "'shape': (3,)}",
		 -ENOTSUP},
		/* a broken dict is reported as broken even if its dtype is also unsupported */
		{"{'descr': '>f8', 'fortran_order': False, 'shape': (3)}", -EPROTO},
		{"{'descr': '>f8', 'fortran_order': False}", -EPROTO},
		/* too large */
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (18446744073709551616,)}",
		 -EOVERFLOW},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999999999999,)}",
		 -EOVERFLOW},
		{"{'descr': '|u1', 'fortran_order': False, 'shape': (9223372036854775808,)}",
		 -EOVERFLOW},
		{"{'descr': '|u1', 'fortran_order': False, 'shape': (9223372036854775807,)}",
		 -EOVERFLOW},
		{"{'descr': '|u1', 'fortran_order': False, 'shape': (9223372036854775000,)}", 0},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}",
		 -EOVERFLOW},
		{"{'descr': '<c16', 'fortran_order': False, 'shape': (576460752303423488,)}",
		 -EOVERFLOW},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 0)}",
		 0},
	};
	struct npy_meta m;

	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		int want = cases[k].want;
		/* the structured descr with a missing comma inside is a syntax error */
		if (strstr(cases[k].dict, "('y' '<i4')"))
			want = -EPROTO;
		int got = parse_dict_text(cases[k].dict, &m);
		if (got != want)
			fail_msg("case %zu: %s: got %d, want %d", k, cases[k].dict, got, want);
	}

	assert_int_equal(
		parse_dict_text(
			"{ 'descr' : '<f8' ,\n 'fortran_order' :True,'shape':( 3 , 4 , ) , }", &m),
		0);
	assert_int_equal(m.fortran_order, 1);
	assert_int_equal(m.ndim, 2);
	assert_int_equal(m.shape[0], 3);
	assert_int_equal(m.shape[1], 4);
}

/* Padding and what may follow the dict inside the header. */
static void test_padding(void **state)
{
	(void)state;
	unsigned char buf[256];
	struct npy_meta m;
	size_t off;
	size_t n = wrap_v1("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", buf,
			   sizeof buf);

	buf[n - 2] = '\t';
	assert_int_equal(parse_exact(buf, n, &m, &off), 0);
	buf[n - 2] = '\0';
	assert_int_equal(parse_exact(buf, n, &m, &off), -EPROTO);
	buf[n - 2] = '#';
	assert_int_equal(parse_exact(buf, n, &m, &off), -EPROTO);
	buf[n - 2] = ' ';
	/* data bytes after the header are none of the parser's business */
	unsigned char big[512];
	memcpy(big, buf, n);
	memset(big + n, 0xff, sizeof big - n);
	assert_int_equal(parse_exact(big, sizeof big, &m, &off), 0);
	assert_int_equal(off, n);
}

/* Deeply nested structured descr lists are refused, not recursed into without bound. */
static void test_deep_nesting(void **state)
{
	(void)state;
	char dict[8192];
	struct npy_meta m;

	for (int depth = 1; depth < 2000; depth *= 3) {
		size_t n = (size_t)snprintf(dict, sizeof dict, "{'descr': ");
		for (int i = 0; i < depth; i++)
			dict[n++] = '[';
		for (int i = 0; i < depth; i++)
			dict[n++] = ']';
		snprintf(dict + n, sizeof dict - n, ", 'fortran_order': False, 'shape': (3,)}");
		int r = parse_dict_text(dict, &m);
		assert_int_equal(r, depth <= 17 ? -ENOTSUP : -EPROTO);
	}
	/* 100 dimensions: well-formed, more than numpy's 64 */
	size_t n = (size_t)snprintf(dict, sizeof dict,
				    "{'descr': '<f8', 'fortran_order': False, 'shape': (");
	for (int i = 0; i < 100; i++)
		n += (size_t)snprintf(dict + n, sizeof dict - n, "1, ");
	snprintf(dict + n, sizeof dict - n, ")}");
	assert_int_equal(parse_dict_text(dict, &m), -ENOTSUP);
}

/* xorshift64*: deterministic, so a failure can be replayed. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static void check_result(int r, const unsigned char *buf, size_t len, const struct npy_meta *m,
			 size_t off)
{
	if (r != 0 && r != -EPROTO && r != -ENOTSUP && r != -EOVERFLOW)
		fail_msg("unexpected result %d", r);
	if (r != 0)
		return;
	/* Accepted: the description must be sane and survive a rebuild. */
	assert_true(off <= len);
	assert_true(m->ndim >= 0 && m->ndim <= POOLFS_ARRAY_MAX_DIMS);
	assert_true((int)m->dtype >= 0 && m->dtype < POOLFS_DTYPE_COUNT);
	uint64_t nbytes;
	assert_int_equal(npy_data_size(m, &nbytes), 0);
	unsigned char again[NPY_HEADER_BUILD_MAX];
	struct npy_meta back;
	size_t off2;
	ssize_t n = npy_header_build(m, 0, again, sizeof again);
	assert_true(n > 0);
	assert_int_equal(parse_exact(again, (size_t)n, &back, &off2), 0);
	assert_int_equal(back.ndim, m->ndim);
	assert_memory_equal(back.shape, m->shape, sizeof(uint64_t) * (size_t)m->ndim);
	(void)buf;
}

static void test_fuzz_mutations(void **state)
{
	(void)state;
	static const char alphabet[] = "(){}[],:'\" \n\\0123456789-LTrueFalsedscrhp<>|fiucb";
	static const char *const seeds[] = {
		"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }",
		"{'descr': '|b1', 'fortran_order': True, 'shape': (), }",
		"{'shape': (1, 2, 3, 4, 5, 6, 7,), 'descr': '<c16', 'fortran_order': False}",
		"{'descr': [('x', '<f8'), ('y', [('z', '|u1', (2,))])], 'fortran_order': False, 'shape': (9,)}",
		"{\"descr\": \"<u2\", \"fortran_order\": False, \"shape\": (18446744073709551615L,)}",
	};
	uint64_t s = 0x9e3779b97f4a7c15ull;
	unsigned char buf[1024];
	char dict[900];
	int accepted = 0, refused = 0;

	for (int iter = 0; iter < 200000; iter++) {
		const char *seed = seeds[rnd(&s) % (sizeof seeds / sizeof seeds[0])];
		size_t n = strlen(seed);
		memcpy(dict, seed, n);
		int muts = 1 + (int)(rnd(&s) % 4);
		for (int k = 0; k < muts; k++) {
			size_t at = n ? rnd(&s) % (n + 1) : 0;
			char ch = alphabet[rnd(&s) % (sizeof alphabet - 1)];
			switch (rnd(&s) % 4) {
			case 0: /* replace */
				if (at < n)
					dict[at] = ch;
				break;
			case 1: /* insert */
				if (n + 1 < sizeof dict - 1) {
					memmove(dict + at + 1, dict + at, n - at);
					dict[at] = ch;
					n++;
				}
				break;
			case 2: /* delete */
				if (at < n) {
					memmove(dict + at, dict + at + 1, n - at - 1);
					n--;
				}
				break;
			default: /* random byte */
				if (at < n)
					dict[at] = (char)(rnd(&s) & 0xff);
				break;
			}
		}
		dict[n] = '\0';
		size_t total;
		/* a NUL from a mutation ends the C string: wrap what is left */
		total = wrap_v1(dict, buf, sizeof buf);
		/* sometimes lie in the length field or cut the buffer */
		switch (rnd(&s) % 8) {
		case 0:
			buf[8] = (unsigned char)rnd(&s);
			break;
		case 1:
			total = rnd(&s) % (total + 1);
			break;
		}
		struct npy_meta m;
		size_t off = 0;
		int r = parse_exact(buf, total, &m, &off);
		check_result(r, buf, total, &m, off);
		if (r == 0)
			accepted++;
		else
			refused++;
	}
	/* the mutations must exercise both outcomes */
	assert_true(accepted > 1000);
	assert_true(refused > 1000);
}

static void test_fuzz_random_bytes(void **state)
{
	(void)state;
	uint64_t s = 12345;
	unsigned char buf[300] = {0}; /* len 0 writes nothing, and parse_exact still copies it */

	for (int iter = 0; iter < 100000; iter++) {
		size_t len = rnd(&s) % sizeof buf;
		for (size_t i = 0; i < len; i++)
			buf[i] = (unsigned char)rnd(&s);
		if (len >= 12 && rnd(&s) % 2) {
			memcpy(buf, "\x93NUMPY", 6);
			buf[6] = (unsigned char)(1 + rnd(&s) % 3);
			buf[7] = 0;
			size_t hl = len - (buf[6] == 1 ? 10 : 12);
			buf[8] = (unsigned char)hl;
			buf[9] = (unsigned char)(hl >> 8);
			if (buf[6] != 1)
				buf[10] = buf[11] = 0;
			buf[buf[6] == 1 ? 10 : 12] = '{';
		}
		struct npy_meta m;
		size_t off = 0;
		int r = parse_exact(buf, len, &m, &off);
		check_result(r, buf, len, &m, off);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dtype_table),    cmocka_unit_test(test_build_matches_numpy),
		cmocka_unit_test(test_roundtrip),      cmocka_unit_test(test_build_errors),
		cmocka_unit_test(test_data_size),      cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_preamble),       cmocka_unit_test(test_dicts),
		cmocka_unit_test(test_padding),	       cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_fuzz_mutations), cmocka_unit_test(test_fuzz_random_bytes),
	};
	return cmocka_run_group_tests_name("npy_header", tests, NULL, NULL);
}
