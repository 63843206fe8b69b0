/* The .npy round trip with numpy, as two cmocka-asserting steps that take a directory, so the
 * same checks run on a plain directory (test_npy_numpy) and inside a pool (test_lib_pool).
 * Include after <cmocka.h> and "libtest.h". The bodies are in npy_roundtrip.c (libtest_support).
 */
#ifndef POOLFS_NPY_ROUNDTRIP_H
#define POOLFS_NPY_ROUNDTRIP_H

/* C writes each dtype in C order 3x4, Fortran order 2x3x4, as a scalar and empty (0x5);
 * numpy.load(mmap_mode="r") checks dtype, shape, order and every value. The arrays stay mapped
 * while numpy reads them, then are closed: on a pool mounted with autohold=none that is what
 * keeps them (the caller may also hold the folder). */
void npy_rt_c_to_numpy(const char *dir);
/* numpy writes (formats 1.0, 2.0 and 3.0), C opens each file and checks it. */
void npy_rt_numpy_to_c(const char *dir);

#endif
