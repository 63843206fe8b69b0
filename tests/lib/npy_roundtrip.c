/* libtest_support: the .npy round trip with numpy, as two cmocka-asserting steps that take a
 * folder, so the same checks run on a plain folder (test_npy_numpy) and inside a pool
 * (test_lib_pool). */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libtest.h"
#include "npy_roundtrip.h"

/* The arrays written by C: each dtype in C order 3x4, Fortran order 2x3x4, as a scalar and
 * empty (0x5); the name tells numpy what to expect. */
static const struct npy_rt_shape {
	const char *order, *shape_name;
	size_t shape[3];
	int ndim;
	int fortran;
} npy_rt_shapes[] = {
	{"C", "3x4", {3, 4, 0}, 2, 0},
	{"F", "2x3x4", {2, 3, 4}, 3, 1},
	{"C", "scalar", {0, 0, 0}, 0, 0},
	{"C", "0x5", {0, 5, 0}, 2, 0},
};

#define NPY_RT_FILES (POOLFS_DTYPE_COUNT * (int)(sizeof npy_rt_shapes / sizeof npy_rt_shapes[0]))

/* C writes, numpy.load(mmap_mode="r") checks dtype, shape, order and every value. The arrays stay
 * mapped (in `keep`, NPY_RT_FILES of them) while numpy reads them, then are closed: on a pool
 * mounted with autohold=none that is what keeps them (the caller may also hold the folder). */
void npy_rt_c_to_numpy(const char *dir)
{
	struct poolfs_array *keep = calloc(NPY_RT_FILES, sizeof *keep);
	char path[PATH_MAX];
	int k = 0;

	assert_non_null(keep);
	for (int d = 0; d < POOLFS_DTYPE_COUNT; d++)
		for (size_t s = 0; s < sizeof npy_rt_shapes / sizeof npy_rt_shapes[0]; s++, k++) {
			libtest_fmt(path, sizeof path, "%s/c-%s-%s-%s.npy", dir,
				    poolfs_dtype_descr((enum poolfs_dtype)d) + 1,
				    npy_rt_shapes[s].order, npy_rt_shapes[s].shape_name);
			int r = poolfs_array_create(path, (enum poolfs_dtype)d,
						    npy_rt_shapes[s].ndim, npy_rt_shapes[s].shape,
						    npy_rt_shapes[s].fortran, &keep[k]);
			if (r < 0)
				fail_msg("poolfs_array_create(%s): %s", path, strerror(-r));
			libtest_npy_fill(&keep[k]);
		}

	static struct run_result res;
	char *const argv[] = {PYTHON, "-c", (char *)libtest_npy_py, "check", (char *)dir, NULL};
	assert_int_equal(libtest_run(argv, &res), 0);
	if (res.status != 0)
		fail_msg("numpy check failed (exit %d):\n%s%s", res.status, res.out, res.err);
	char want[32];
	snprintf(want, sizeof want, "checked %d\n", NPY_RT_FILES);
	assert_string_equal(res.out, want);

	for (k = 0; k < NPY_RT_FILES; k++)
		assert_int_equal(poolfs_array_close(&keep[k]), 0);
	free(keep);
}

/* numpy writes (formats 1.0, 2.0 and 3.0), C opens each file and checks it. */
void npy_rt_numpy_to_c(const char *dir)
{
	static struct run_result res;
	char *const argv[] = {PYTHON, "-c", (char *)libtest_npy_py, "write", (char *)dir, NULL};
	assert_int_equal(libtest_run(argv, &res), 0);
	if (res.status != 0)
		fail_msg("numpy write failed (exit %d):\n%s%s", res.status, res.out, res.err);

	DIR *dh = opendir(dir);
	struct dirent *e;
	int n = 0;
	assert_non_null(dh);
	while ((e = readdir(dh))) {
		char dts[8], order[2], shp[16], path[PATH_MAX];
		if (strncmp(e->d_name, "py-", 3) != 0)
			continue;
		if (sscanf(e->d_name, "py-%7[a-z0-9]-%1[CF]-%15[a-z0-9]", dts, order, shp) != 3)
			fail_msg("unexpected file %s", e->d_name);
		int d = libtest_dtype_by_name(dts);
		assert_true(d >= 0);
		const struct npy_rt_shape *sh = NULL;
		for (size_t s = 0; s < sizeof npy_rt_shapes / sizeof npy_rt_shapes[0]; s++)
			if (strcmp(npy_rt_shapes[s].shape_name, shp) == 0) {
				sh = &npy_rt_shapes[s];
				break;
			}
		if (!sh)
			fail_msg("unexpected shape %s in %s", shp, e->d_name);

		struct poolfs_array a;
		libtest_fmt(path, sizeof path, "%s/%s", dir, e->d_name);
		int r = poolfs_array_open(path, O_RDONLY, &a);
		if (r < 0)
			fail_msg("poolfs_array_open(%s): %s", path, strerror(-r));
		assert_int_equal(a.dtype, d);
		assert_int_equal(a.ndim, sh->ndim);
		for (int i = 0; i < a.ndim; i++)
			assert_int_equal(a.shape[i], sh->shape[i]);
		/* numpy marks only arrays that are Fortran and not also C contiguous */
		assert_int_equal(a.fortran_order, order[0] == 'F');
		size_t bad = libtest_npy_check(&a);
		if (bad)
			fail_msg("%s: element %zu differs", e->d_name, bad - 1);
		assert_int_equal(poolfs_array_close(&a), 0);
		n++;
	}
	closedir(dh);
	assert_int_equal(n, NPY_RT_FILES);
}
