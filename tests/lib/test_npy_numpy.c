/* The .npy files of libpoolfs against Debian's numpy (/usr/bin/python3), on a plain directory:
 * numpy.load(mmap_mode="r") reads every dtype and order C writes, and C maps every file
 * numpy.save writes (formats 1.0, 2.0, 3.0). Skipped as a whole, with the reason, without numpy.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "libtest.h"
#include "npy_roundtrip.h"

static int setup(void **state)
{
	char *dir = malloc(PATH_MAX);
	if (!dir || libtest_tmpdir(dir, PATH_MAX) < 0) {
		free(dir);
		return -1;
	}
	*state = dir;
	return 0;
}

static int teardown(void **state)
{
	int r = libtest_rmtree(*state);
	free(*state);
	return r;
}

static void test_c_to_numpy(void **state)
{
	npy_rt_c_to_numpy(*state);
}

static void test_numpy_to_c(void **state)
{
	npy_rt_numpy_to_c(*state);
}

int main(void)
{
	if (!libtest_have_numpy())
		return tu_skip_all(PYTHON " cannot import numpy (Debian package python3-numpy)");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_c_to_numpy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_numpy_to_c, setup, teardown),
	};
	return cmocka_run_group_tests_name("npy_numpy", tests, NULL, NULL);
}
