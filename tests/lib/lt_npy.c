/* libtest_support: the .npy test patterns, written and checked the same way by C (here) and by
 * numpy (libtest_npy_py): keep the two in step. */
#include <complex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libtest.h"

void libtest_npy_fill(struct poolfs_array *a)
{
	for (size_t i = 0; i < a->nelems; i++) {
		long long s = (long long)(i * 7 % 200) - 100;
		unsigned long long u = i * 3 % 250;
		switch (a->dtype) {
		case POOLFS_DTYPE_F8:
			((double *)a->data)[i] = (double)i * 0.5;
			break;
		case POOLFS_DTYPE_F4:
			((float *)a->data)[i] = (float)i * 0.25f;
			break;
		case POOLFS_DTYPE_I8:
			((int64_t *)a->data)[i] = s * 1000000007LL;
			break;
		case POOLFS_DTYPE_I4:
			((int32_t *)a->data)[i] = (int32_t)(s * 1000);
			break;
		case POOLFS_DTYPE_I2:
			((int16_t *)a->data)[i] = (int16_t)(s * 100);
			break;
		case POOLFS_DTYPE_I1:
			((int8_t *)a->data)[i] = (int8_t)s;
			break;
		case POOLFS_DTYPE_U8:
			((uint64_t *)a->data)[i] = u * 1000000007ULL;
			break;
		case POOLFS_DTYPE_U4:
			((uint32_t *)a->data)[i] = (uint32_t)(u * 1000);
			break;
		case POOLFS_DTYPE_U2:
			((uint16_t *)a->data)[i] = (uint16_t)(u * 100);
			break;
		case POOLFS_DTYPE_U1:
			((uint8_t *)a->data)[i] = (uint8_t)u;
			break;
		case POOLFS_DTYPE_B1:
			((uint8_t *)a->data)[i] = i % 3 == 0;
			break;
		/* CMPLX, not x + y * I: complex arithmetic would turn 0 into -0.0 in places, which
		 * compares equal but not bytewise */
		case POOLFS_DTYPE_C16:
			((double complex *)a->data)[i] = CMPLX((double)i, 3.0 * (double)i);
			break;
		case POOLFS_DTYPE_C8:
			((float complex *)a->data)[i] = CMPLXF((float)i, 2.0f * (float)i);
			break;
		default:
			break;
		}
	}
}

size_t libtest_npy_check(const struct poolfs_array *a)
{
	struct poolfs_array want = *a;
	void *buf = malloc(a->nbytes ? a->nbytes : 1);
	size_t bad = 0;
	if (!buf)
		return SIZE_MAX;
	want.data = buf;
	libtest_npy_fill(&want);
	for (size_t i = 0; i < a->nelems && !bad; i++)
		if (memcmp((char *)a->data + i * a->itemsize, (char *)buf + i * a->itemsize,
			   a->itemsize) != 0)
			bad = i + 1;
	free(buf);
	return bad;
}

int libtest_dtype_by_name(const char *name)
{
	for (int d = 0; d < POOLFS_DTYPE_COUNT; d++)
		if (strcmp(poolfs_dtype_descr((enum poolfs_dtype)d) + 1, name) == 0)
			return d;
	return -1;
}

const char libtest_npy_py[] =
	"import sys, os, numpy as np\n"
	"mode, d = sys.argv[1], sys.argv[2]\n"
	"def expected(dt, n):\n"
	"    i = np.arange(n, dtype=np.int64)\n"
	"    s = (i * 7 % 200) - 100\n"
	"    u = (i * 3 % 250).astype(np.uint64)\n"
	"    k = dt.kind + str(dt.itemsize)\n"
	"    if k == 'f8': return i * 0.5\n"
	"    if k == 'f4': return (i.astype(np.float32) * np.float32(0.25))\n"
	"    if k == 'i8': return s * 1000000007\n"
	"    if k in ('i4', 'i2', 'i1'): return s * {'i4': 1000, 'i2': 100, 'i1': 1}[k]\n"
	"    if k == 'u8': return u * np.uint64(1000000007)\n"
	"    if k in ('u4', 'u2', 'u1'): return u * {'u4': 1000, 'u2': 100, 'u1': 1}[k]\n"
	"    if k == 'b1': return i % 3 == 0\n"
	"    if k == 'c16': return i + 3j * i\n"
	"    if k == 'c8': return (i + 2j * i).astype(np.complex64)\n"
	"    raise SystemExit('no pattern for ' + dt.str)\n"
	"names = {'f8':'<f8','f4':'<f4','i8':'<i8','i4':'<i4','i2':'<i2','i1':'|i1','u8':'<u8',"
	"'u4':'<u4','u2':'<u2','u1':'|u1','b1':'|b1','c16':'<c16','c8':'<c8'}\n"
	"def shape_of(s): return () if s == 'scalar' else tuple(int(x) for x in s.split('x'))\n"
	"if mode == 'check':\n"
	"    n = 0\n"
	"    for f in sorted(os.listdir(d)):\n"
	"        if not f.startswith('c-') or not f.endswith('.npy'): continue\n"
	"        _, dts, order, shp = f[:-4].split('-')\n"
	"        a = np.load(os.path.join(d, f), mmap_mode='r')\n"
	"        dt = np.dtype(names[dts])\n"
	"        assert a.dtype == dt, (f, a.dtype)\n"
	"        assert a.shape == shape_of(shp), (f, a.shape)\n"
	"        if a.ndim > 1 and a.size > 1:\n"
	"            assert a.flags.f_contiguous == (order == 'F'), f\n"
	"        flat = np.ravel(a, order='F' if order == 'F' else 'C')\n"
	"        want = expected(dt, flat.size).astype(dt)\n"
	"        assert np.array_equal(flat, want), (f, flat[:8], want[:8])\n"
	"        n += 1\n"
	"    print('checked', n)\n"
	"else:\n"
	"    from numpy.lib import format as fmt\n"
	"    for dts, code in names.items():\n"
	"        for order, shp, ver in (('C', '3x4', (1, 0)), ('F', '2x3x4', (2, 0)),\n"
	"                                ('C', 'scalar', (3, 0)), ('C', '0x5', (1, 0))):\n"
	"            dt = np.dtype(code)\n"
	"            shape = shape_of(shp)\n"
	"            n = int(np.prod(shape))\n"
	"            a = expected(dt, n).astype(dt).reshape(shape, order=order)\n"
	"            if order == 'F': a = np.asfortranarray(a)\n"
	"            with open(os.path.join(d, 'py-%s-%s-%s.npy' % (dts, order, shp)), 'wb') as fh:\n"
	"                fmt.write_array(fh, a, version=ver)\n"
	"    print('written')\n";
