/* What only the tests/lib tests add to testutil.h (header-only, static inline, so each test is one
 * file): temporary directories, running a program and capturing its output and exit status, and
 * the .npy test patterns shared by the numpy round trips on a plain directory and on a pool.
 * Checks, the noreturn _fail and whole-binary TAP skips (tu_skip_all) are testutil.h's.
 */
#ifndef POOLFS_LIBTEST_H
#define POOLFS_LIBTEST_H

#include <complex.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "poolfs.h"
#include "testutil.h"

#ifndef PYTHON
#define PYTHON "/usr/bin/python3" /* Debian's, with python3-numpy; the PATH one may lack numpy */
#endif

/* snprintf that must not truncate (aborts if it would): test paths are built with it. Going
 * through vsnprintf also keeps -Wformat-truncation from guessing at PATH_MAX-sized buffers. */
static inline void libtest_fmt(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline void libtest_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* ap is started just above: clang-tidy 14 loses sight of va_start when one run checks
	 * several files (llvm/llvm-project#40656), and then flags this call. */
	int n = vsnprintf(buf, len, fmt, ap); /* NOLINT(clang-analyzer-valist.Uninitialized) */
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "# libtest_fmt: \"%s\" does not fit in %zu bytes\n", fmt, len);
		abort();
	}
}

/* mkdtemp under $TMPDIR (default /tmp): 0 or -errno. */
static inline int libtest_tmpdir(char *buf, size_t len)
{
	const char *base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	if ((size_t)snprintf(buf, len, "%s/poolfs-libtest-XXXXXX", base) >= len)
		return -ENAMETOOLONG;
	return mkdtemp(buf) ? 0 : -errno;
}

static inline int libtest_rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	/* ENOENT: a pool may already have removed an unused entry by itself */
	if ((type == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

/* rm -rf path: 0 or -errno. */
static inline int libtest_rmtree(const char *path)
{
	if (nftw(path, libtest_rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
		return errno == ENOENT ? 0 : -errno;
	return 0;
}

struct run_result {
	int status;      /* exit code; 128 + signal if killed; -1 if it could not run */
	char out[16384]; /* stdout, NUL-terminated (cut if longer) */
	char err[16384]; /* stderr, likewise */
};

static inline void libtest_slurp(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;
	lseek(fd, 0, SEEK_SET);
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
}

/* Run argv[0] (a path) with argv, stdin from /dev/null, capturing stdout and stderr in memory
 * files (no pipes, so no deadlock however much it writes). Returns 0 (see r->status) or -errno. */
static inline int libtest_run(char *const argv[], struct run_result *r)
{
	int out = memfd_create("stdout", MFD_CLOEXEC), err = memfd_create("stderr", MFD_CLOEXEC);
	int ret = 0;

	r->status = -1;
	r->out[0] = r->err[0] = '\0';
	if (out < 0 || err < 0) {
		ret = -errno;
		goto done;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		ret = -errno;
		goto done;
	}
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			ret = -errno;
			goto done;
		}
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	libtest_slurp(out, r->out, sizeof r->out);
	libtest_slurp(err, r->err, sizeof r->err);
done:
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	return ret;
}

/* Whether /usr/bin/python3 can import numpy. */
static inline bool libtest_have_numpy(void)
{
	static struct run_result r;
	char *const argv[] = {PYTHON, "-c", "import numpy", NULL};
	if (access(PYTHON, X_OK) < 0)
		return false;
	return libtest_run(argv, &r) == 0 && r.status == 0;
}

/* ---- .npy test patterns ------------------------------------------------------------------- */

/* Element i (in memory order) of a test array of each dtype, as numpy computes it in
 * LIBTEST_NPY_PY's expected(): keep the two in step. */
static inline void libtest_npy_fill(struct poolfs_array *a)
{
	for (size_t i = 0; i < a->nelems; i++) {
		long long s = (long long)(i * 7 % 200) - 100;
		unsigned long long u = i * 3 % 250;
		switch (a->dtype) {
		case POOLFS_DTYPE_F8: ((double *)a->data)[i] = (double)i * 0.5; break;
		case POOLFS_DTYPE_F4: ((float *)a->data)[i] = (float)i * 0.25f; break;
		case POOLFS_DTYPE_I8: ((int64_t *)a->data)[i] = s * 1000000007LL; break;
		case POOLFS_DTYPE_I4: ((int32_t *)a->data)[i] = (int32_t)(s * 1000); break;
		case POOLFS_DTYPE_I2: ((int16_t *)a->data)[i] = (int16_t)(s * 100); break;
		case POOLFS_DTYPE_I1: ((int8_t *)a->data)[i] = (int8_t)s; break;
		case POOLFS_DTYPE_U8: ((uint64_t *)a->data)[i] = u * 1000000007ULL; break;
		case POOLFS_DTYPE_U4: ((uint32_t *)a->data)[i] = (uint32_t)(u * 1000); break;
		case POOLFS_DTYPE_U2: ((uint16_t *)a->data)[i] = (uint16_t)(u * 100); break;
		case POOLFS_DTYPE_U1: ((uint8_t *)a->data)[i] = (uint8_t)u; break;
		case POOLFS_DTYPE_B1: ((uint8_t *)a->data)[i] = i % 3 == 0; break;
		/* CMPLX, not x + y * I: complex arithmetic would turn 0 into -0.0 in places, which
		 * compares equal but not bytewise */
		case POOLFS_DTYPE_C16: ((double complex *)a->data)[i] = CMPLX((double)i, 3.0 * (double)i); break;
		case POOLFS_DTYPE_C8: ((float complex *)a->data)[i] = CMPLXF((float)i, 2.0f * (float)i); break;
		default: break;
		}
	}
}

/* 0 if a holds exactly libtest_npy_fill's pattern, else the first index that differs + 1. */
static inline size_t libtest_npy_check(const struct poolfs_array *a)
{
	struct poolfs_array want = *a;
	void *buf = malloc(a->nbytes ? a->nbytes : 1);
	size_t bad = 0;
	if (!buf)
		return SIZE_MAX;
	want.data = buf;
	libtest_npy_fill(&want);
	for (size_t i = 0; i < a->nelems && !bad; i++)
		if (memcmp((char *)a->data + i * a->itemsize, (char *)buf + i * a->itemsize, a->itemsize))
			bad = i + 1;
	free(buf);
	return bad;
}

/* Python side of the round trip, run as: PYTHON -c LIBTEST_NPY_PY MODE DIR
 *   MODE "check": every DIR/c-*.npy (written by C) loads with mmap_mode="r" and holds the pattern;
 *                 the name says dtype and order: c-<dtype>-<C|F>-<shape as 3x4 or "scalar">.npy
 *   MODE "write": numpy writes the same pattern to DIR/py-*.npy, in formats 1.0, 2.0 and 3.0 */
#define LIBTEST_NPY_PY                                                                             \
	"import sys, os, numpy as np\n"                                                            \
	"mode, d = sys.argv[1], sys.argv[2]\n"                                                     \
	"def expected(dt, n):\n"                                                                   \
	"    i = np.arange(n, dtype=np.int64)\n"                                                   \
	"    s = (i * 7 % 200) - 100\n"                                                            \
	"    u = (i * 3 % 250).astype(np.uint64)\n"                                                \
	"    k = dt.kind + str(dt.itemsize)\n"                                                     \
	"    if k == 'f8': return i * 0.5\n"                                                       \
	"    if k == 'f4': return (i.astype(np.float32) * np.float32(0.25))\n"                     \
	"    if k == 'i8': return s * 1000000007\n"                                                \
	"    if k in ('i4', 'i2', 'i1'): return s * {'i4': 1000, 'i2': 100, 'i1': 1}[k]\n"        \
	"    if k == 'u8': return u * np.uint64(1000000007)\n"                                     \
	"    if k in ('u4', 'u2', 'u1'): return u * {'u4': 1000, 'u2': 100, 'u1': 1}[k]\n"         \
	"    if k == 'b1': return i % 3 == 0\n"                                                    \
	"    if k == 'c16': return i + 3j * i\n"                                                   \
	"    if k == 'c8': return (i + 2j * i).astype(np.complex64)\n"                             \
	"    raise SystemExit('no pattern for ' + dt.str)\n"                                       \
	"names = {'f8':'<f8','f4':'<f4','i8':'<i8','i4':'<i4','i2':'<i2','i1':'|i1','u8':'<u8',"   \
	"'u4':'<u4','u2':'<u2','u1':'|u1','b1':'|b1','c16':'<c16','c8':'<c8'}\n"                   \
	"def shape_of(s): return () if s == 'scalar' else tuple(int(x) for x in s.split('x'))\n"   \
	"if mode == 'check':\n"                                                                    \
	"    n = 0\n"                                                                              \
	"    for f in sorted(os.listdir(d)):\n"                                                    \
	"        if not f.startswith('c-') or not f.endswith('.npy'): continue\n"                  \
	"        _, dts, order, shp = f[:-4].split('-')\n"                                          \
	"        a = np.load(os.path.join(d, f), mmap_mode='r')\n"                                 \
	"        dt = np.dtype(names[dts])\n"                                                      \
	"        assert a.dtype == dt, (f, a.dtype)\n"                                             \
	"        assert a.shape == shape_of(shp), (f, a.shape)\n"                                  \
	"        if a.ndim > 1 and a.size > 1:\n"                                                   \
	"            assert a.flags.f_contiguous == (order == 'F'), f\n"                             \
	"        flat = np.ravel(a, order='F' if order == 'F' else 'C')\n"                          \
	"        want = expected(dt, flat.size).astype(dt)\n"                                      \
	"        assert np.array_equal(flat, want), (f, flat[:8], want[:8])\n"                     \
	"        n += 1\n"                                                                         \
	"    print('checked', n)\n"                                                                \
	"else:\n"                                                                                  \
	"    from numpy.lib import format as fmt\n"                                                \
	"    for dts, code in names.items():\n"                                                    \
	"        for order, shp, ver in (('C', '3x4', (1, 0)), ('F', '2x3x4', (2, 0)),\n"            \
	"                                ('C', 'scalar', (3, 0)), ('C', '0x5', (1, 0))):\n"        \
	"            dt = np.dtype(code)\n"                                                        \
	"            shape = shape_of(shp)\n"                                                      \
	"            n = int(np.prod(shape))\n"                                                    \
	"            a = expected(dt, n).astype(dt).reshape(shape, order=order)\n"                 \
	"            if order == 'F': a = np.asfortranarray(a)\n"                                  \
	"            with open(os.path.join(d, 'py-%s-%s-%s.npy' % (dts, order, shp)), 'wb') as fh:\n" \
	"                fmt.write_array(fh, a, version=ver)\n"                                    \
	"    print('written')\n"

/* The dtype of a short name as used in the file names ("f8", "u1", "c16"...), or -1. */
static inline int libtest_dtype_by_name(const char *name)
{
	for (int d = 0; d < POOLFS_DTYPE_COUNT; d++)
		if (strcmp(poolfs_dtype_descr((enum poolfs_dtype)d) + 1, name) == 0)
			return d;
	return -1;
}

#endif
