/* libpoolfs on an ordinary filesystem (no pool, no daemon): unique names, the "not on a pool"
 * answers of the hold/refs/usage calls (and that they write nothing there), and the array files:
 * create/open round trips of every dtype, the shared mapping, and hostile files on disk.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <sys/xattr.h>

#include "libtest.h"
#include "npy_v1.h"

struct fixture {
	char dir[PATH_MAX];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	if (!f || libtest_tmpdir(f->dir, sizeof f->dir) < 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int r = libtest_rmtree(f->dir);
	free(f);
	return r;
}

static void join(char *buf, size_t len, const char *dir, const char *name)
{
	assert_true((size_t)snprintf(buf, len, "%s/%s", dir, name) < len);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* "<prefix><pid>-<tid>-<uuid><suffix>" with a lowercase 8-4-4-4-12 uuid */
static void check_unique_name(const char *path, const char *dir, const char *prefix,
			      const char *suffix)
{
	char head[128];
	size_t dl = strlen(dir);
	assert_memory_equal(path, dir, dl);
	assert_int_equal(path[dl], '/');
	const char *name = path + dl + 1;
	snprintf(head, sizeof head, "%s%ld-%ld-", prefix, (long)getpid(), (long)gettid());
	assert_memory_equal(name, head, strlen(head));
	const char *u = name + strlen(head);
	for (int i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23)
			assert_int_equal(u[i], '-');
		else
			assert_non_null(strchr("0123456789abcdef", u[i]));
	}
	assert_string_equal(u + 36, suffix);
}

static void test_mkunique(void **state)
{
	struct fixture *f = *state;
	char a[PATH_MAX], b[PATH_MAX];
	struct stat st;

	mode_t old = umask(022);
	int fa = poolfs_mkunique(f->dir, "arr-", ".npy", O_RDWR, 0600, a, sizeof a);
	int fb = poolfs_mkunique(f->dir, NULL, NULL, O_WRONLY, 0644, b, sizeof b);
	umask(old);
	assert_true(fa >= 0);
	assert_true(fb >= 0);
	check_unique_name(a, f->dir, "arr-", ".npy");
	check_unique_name(b, f->dir, "", "");
	assert_string_not_equal(a, b);
	assert_int_equal(fcntl(fa, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_int_equal(fcntl(fa, F_GETFL) & O_ACCMODE, O_RDWR);
	assert_int_equal(fcntl(fb, F_GETFL) & O_ACCMODE, O_WRONLY);
	assert_int_equal(fstat(fa, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(write(fa, "x", 1), 1);
	close(fa);
	close(fb);

	/* no out_path: still created */
	int fc = poolfs_mkunique(f->dir, "p", "s", O_RDWR, 0600, NULL, 0);
	assert_true(fc >= 0);
	close(fc);
	assert_int_equal(count_entries(f->dir), 3);

	/* many in a row never collide */
	for (int i = 0; i < 200; i++) {
		int fd = poolfs_mkunique(f->dir, "many-", NULL, O_RDWR, 0600, NULL, 0);
		assert_true(fd >= 0);
		close(fd);
	}
	assert_int_equal(count_entries(f->dir), 203);
}

static void test_mkunique_errors(void **state)
{
	struct fixture *f = *state;
	char out[PATH_MAX], missing[PATH_MAX], big[300];

	assert_int_equal(poolfs_mkunique(f->dir, "a/b", NULL, O_RDWR, 0600, out, sizeof out),
			 -EINVAL);
	assert_int_equal(poolfs_mkunique(f->dir, NULL, "/x", O_RDWR, 0600, out, sizeof out),
			 -EINVAL);
	assert_int_equal(poolfs_mkunique(NULL, NULL, NULL, O_RDWR, 0600, out, sizeof out), -EINVAL);
	assert_int_equal(
		poolfs_mkunique(f->dir, NULL, NULL, O_RDWR | O_DIRECTORY, 0600, out, sizeof out),
		-EINVAL);
	assert_int_equal(
		poolfs_mkunique(f->dir, NULL, NULL, O_RDWR | O_TMPFILE, 0600, out, sizeof out),
		-EINVAL);
	assert_int_equal(poolfs_mkunique(f->dir, NULL, NULL, O_PATH, 0600, out, sizeof out),
			 -EINVAL);
	assert_int_equal(
		poolfs_mkunique(f->dir, NULL, NULL, O_RDWR | O_CREAT, 0600, out, sizeof out),
		-EINVAL);
	/* out_path too small: refused before anything is created */
	assert_int_equal(
		poolfs_mkunique(f->dir, NULL, NULL, O_RDWR, 0600, out, strlen(f->dir) + 20),
		-ERANGE);
	/* a name over NAME_MAX */
	memset(big, 'n', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	assert_int_equal(poolfs_mkunique(f->dir, big, NULL, O_RDWR, 0600, out, sizeof out),
			 -ENAMETOOLONG);
	assert_int_equal(count_entries(f->dir), 0);

	join(missing, sizeof missing, f->dir, "nope");
	assert_int_equal(poolfs_mkunique(missing, NULL, NULL, O_RDWR, 0600, out, sizeof out),
			 -ENOENT);
}

/* Off a pool, every pool call says -ENOTSUP and leaves nothing behind. */
static void test_not_a_pool(void **state)
{
	struct fixture *f = *state;
	char file[PATH_MAX], missing[PATH_MAX], buf[PATH_MAX];
	struct poolfs_refs refs;
	struct poolfs_usage usage;

	join(file, sizeof file, f->dir, "plain");
	join(missing, sizeof missing, f->dir, "missing");
	int fd = open(file, O_CREAT | O_RDWR, 0600);
	assert_true(fd >= 0);
	close(fd);

	for (int s = POOLFS_SCOPE_PIN; s <= POOLFS_SCOPE_CGROUP; s++)
		assert_int_equal(poolfs_hold(file, (enum poolfs_scope)s, getpid()), -ENOTSUP);
	assert_int_equal(poolfs_hold(f->dir, POOLFS_SCOPE_SESSION, 0), -ENOTSUP);
	/* nothing was stored as a plain attribute */
	errno = 0;
	assert_int_equal(getxattr(file, POOLFS_XATTR_HOLD, NULL, 0), -1);
	assert_true(errno == ENODATA || errno == ENOTSUP);

	assert_int_equal(poolfs_release(file), -ENOTSUP);
	assert_int_equal(poolfs_refs(file, &refs), -ENOTSUP);
	assert_int_equal(poolfs_usage(f->dir, &usage), -ENOTSUP);
	assert_int_equal(poolfs_pool_root(file, buf, sizeof buf), -ENOTSUP);
	assert_int_equal(poolfs_mkjob(f->dir, POOLFS_SCOPE_SESSION, 0, buf, sizeof buf), -ENOTSUP);
	assert_int_equal(poolfs_mkjob(f->dir, POOLFS_SCOPE_PIN, 0, buf, sizeof buf), -ENOTSUP);
	/* the job folder was removed again */
	assert_int_equal(count_entries(f->dir), 1);

	/* argument errors come first, and a path that does not exist says so */
	assert_int_equal(poolfs_hold(file, POOLFS_SCOPE_PID, 0), -EINVAL);
	assert_int_equal(poolfs_hold(file, POOLFS_SCOPE_PID, -1), -EINVAL);
	assert_int_equal(poolfs_hold(file, (enum poolfs_scope)42, 0), -EINVAL);
	assert_int_equal(poolfs_hold(file, POOLFS_SCOPE_UNKNOWN, 0), -EINVAL);
	assert_int_equal(poolfs_hold(NULL, POOLFS_SCOPE_PIN, 0), -EINVAL);
	assert_int_equal(poolfs_release(NULL), -EINVAL);
	assert_int_equal(poolfs_refs(file, NULL), -EINVAL);
	assert_int_equal(poolfs_usage(NULL, &usage), -EINVAL);
	assert_int_equal(poolfs_pool_root(file, NULL, 10), -EINVAL);
	assert_int_equal(poolfs_mkjob(f->dir, POOLFS_SCOPE_PID, 0, buf, sizeof buf), -EINVAL);
	assert_int_equal(poolfs_mkjob(f->dir, (enum poolfs_scope)9, 0, buf, sizeof buf), -EINVAL);
	assert_int_equal(poolfs_mkjob(f->dir, POOLFS_SCOPE_PIN, 0, buf, strlen(f->dir) + 10),
			 -ERANGE);
	assert_int_equal(poolfs_mkjob(f->dir, POOLFS_SCOPE_PIN, 0, NULL, 0), -EINVAL);
	assert_int_equal(count_entries(f->dir), 1);

	assert_int_equal(poolfs_hold(missing, POOLFS_SCOPE_PIN, 0), -ENOENT);
	assert_int_equal(poolfs_release(missing), -ENOENT);
	assert_int_equal(poolfs_refs(missing, &refs), -ENOENT);
	assert_int_equal(poolfs_usage(missing, &usage), -ENOENT);
	assert_int_equal(poolfs_pool_root(missing, buf, sizeof buf), -ENOENT);
	join(buf, sizeof buf, missing, "job");
	assert_int_equal(poolfs_mkjob(missing, POOLFS_SCOPE_PIN, 0, buf, sizeof buf), -ENOENT);
}

static const size_t shape_2d[] = {3, 4};
static const size_t shape_3d[] = {2, 3, 4};
static const size_t shape_empty[] = {0, 5};

static void test_array_roundtrip(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];

	for (int d = 0; d < POOLFS_DTYPE_COUNT; d++) {
		const struct {
			const size_t *shape;
			int ndim;
			int fortran;
		} shapes[] = {
			{shape_2d, 2, 0}, {shape_3d, 3, 1}, {NULL, 0, 0}, {shape_empty, 2, 0}};
		for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
			struct poolfs_array a, b;
			char name[64];
			snprintf(name, sizeof name, "a-%d-%zu.npy", d, k);
			join(path, sizeof path, f->dir, name);

			assert_int_equal(poolfs_array_create(path, (enum poolfs_dtype)d,
							     shapes[k].ndim, shapes[k].shape,
							     shapes[k].fortran, &a),
					 0);
			assert_int_equal(a.dtype, d);
			assert_int_equal(a.itemsize, poolfs_dtype_size((enum poolfs_dtype)d));
			assert_int_equal(a.ndim, shapes[k].ndim);
			size_t n = 1;
			/* shapes[k].shape has shapes[k].ndim entries (and is NULL for a scalar) */
			for (int i = 0; i < shapes[k].ndim; i++) {
				assert_int_equal(a.shape[i], shapes[k].shape[i]);
				n *= shapes[k].shape[i];
			}
			assert_int_equal(a.nelems, n);
			assert_int_equal(a.nbytes, n * a.itemsize);
			assert_int_equal(a.fortran_order, shapes[k].fortran);
			assert_int_equal(a.writable, 1);
			assert_int_equal(a.data_offset % 64, 0);
			assert_int_equal(((uintptr_t)a.data) % 64, 0);
			/* a fresh array reads as zeros */
			for (size_t i = 0; i < a.nbytes; i++)
				assert_int_equal(((unsigned char *)a.data)[i], 0);
			libtest_npy_fill(&a);
			assert_int_equal(poolfs_array_sync(&a), 0);
			assert_int_equal(poolfs_array_close(&a), 0);
			assert_null(a.data);

			struct stat st;
			assert_int_equal(stat(path, &st), 0);
			assert_int_equal(st.st_mode & 0777, 0600);

			assert_int_equal(poolfs_array_open(path, O_RDONLY, &b), 0);
			assert_int_equal(st.st_size, (off_t)(b.data_offset + b.nbytes));
			assert_int_equal(b.dtype, d);
			assert_int_equal(b.ndim, shapes[k].ndim);
			assert_int_equal(b.nelems, n);
			assert_int_equal(b.fortran_order, shapes[k].fortran);
			assert_int_equal(b.writable, 0);
			assert_int_equal(libtest_npy_check(&b), 0);
			assert_int_equal(poolfs_array_sync(&b), 0); /* nothing to write back */
			assert_int_equal(poolfs_array_close(&b), 0);
		}
	}
}

/* Two mappings of one file see each other's writes at once (MAP_SHARED). */
static void test_array_shared(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	struct poolfs_array w, r;
	size_t shape[1] = {1000};

	join(path, sizeof path, f->dir, "shared.npy");
	assert_int_equal(poolfs_array_create(path, POOLFS_DTYPE_I4, 1, shape, 0, &w), 0);
	assert_int_equal(poolfs_array_open(path, O_RDWR, &r), 0);
	assert_int_equal(r.writable, 1);
	((int32_t *)w.data)[999] = 42;
	assert_int_equal(((int32_t *)r.data)[999], 42);
	((int32_t *)r.data)[0] = -7;
	assert_int_equal(((int32_t *)w.data)[0], -7);
	assert_int_equal(poolfs_array_close(&w), 0);
	assert_int_equal(poolfs_array_close(&r), 0);
	/* closing twice, or a zeroed struct, is harmless */
	assert_int_equal(poolfs_array_close(&r), 0);
	struct poolfs_array z;
	memset(&z, 0, sizeof z);
	assert_int_equal(poolfs_array_close(&z), 0);
	assert_int_equal(poolfs_array_close(NULL), -EINVAL);
	assert_int_equal(poolfs_array_sync(&z), -EINVAL);
}

static void test_array_create_errors(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX], missing[PATH_MAX];
	struct poolfs_array a;
	size_t shape[3] = {2, 2, 2};
	size_t huge[2] = {(size_t)1 << 32, (size_t)1 << 32};
	size_t toolarge[1] = {(size_t)INT64_MAX};

	join(path, sizeof path, f->dir, "e.npy");
	assert_int_equal(poolfs_array_create(NULL, POOLFS_DTYPE_F8, 1, shape, 0, &a), -EINVAL);
	assert_int_equal(poolfs_array_create(path, POOLFS_DTYPE_F8, 1, shape, 0, NULL), -EINVAL);
	assert_int_equal(poolfs_array_create(path, POOLFS_DTYPE_COUNT, 1, shape, 0, &a), -EINVAL);
	assert_int_equal(poolfs_array_create(path, (enum poolfs_dtype) - 1, 1, shape, 0, &a),
			 -EINVAL);
	assert_int_equal(poolfs_array_create(path, POOLFS_DTYPE_F8, -1, shape, 0, &a), -EINVAL);
	assert_int_equal(
		poolfs_array_create(path, POOLFS_DTYPE_F8, POOLFS_ARRAY_MAX_DIMS + 1, shape, 0, &a),
		-EINVAL);
	assert_int_equal(poolfs_array_create(path, POOLFS_DTYPE_F8, 2, NULL, 0, &a), -EINVAL);
	assert_int_equal(poolfs_array_create(path, POOLFS_DTYPE_F8, 2, huge, 0, &a), -EOVERFLOW);
	assert_int_equal(poolfs_array_create(path, POOLFS_DTYPE_U1, 1, toolarge, 0, &a),
			 -EOVERFLOW);
	assert_int_equal(count_entries(f->dir), 0);

	assert_int_equal(poolfs_array_create(path, POOLFS_DTYPE_F8, 3, shape, 0, &a), 0);
	assert_int_equal(poolfs_array_close(&a), 0);
	/* never clobbers an existing file */
	assert_int_equal(poolfs_array_create(path, POOLFS_DTYPE_F8, 3, shape, 0, &a), -EEXIST);
	join(missing, sizeof missing, f->dir, "no/such.npy");
	assert_int_equal(poolfs_array_create(missing, POOLFS_DTYPE_F8, 3, shape, 0, &a), -ENOENT);
}

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* A v1.0 file: the dict padded to `align`, then `data` zero bytes. */
static void write_npy(const char *path, const char *dict, size_t align, size_t data)
{
	size_t cap = 10 + strlen(dict) + 1 + align;
	unsigned char *buf = calloc(1, cap + data);
	assert_non_null(buf);
	size_t total = npy_v1_wrap(dict, align, buf, cap);
	assert_true(total > 0);
	write_file(path, buf, total + data);
	free(buf);
}

static void test_array_open_hostile(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	struct poolfs_array a;

	join(path, sizeof path, f->dir, "h.npy");
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), -ENOENT);
	write_file(path, "", 0);
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), -EPROTO);
	write_file(path, "\x93NUMPY", 6);
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), -EPROTO);
	write_file(path, "PK\x03\x04 this is a zip, not an npy file", 35);
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), -EPROTO);
	/* a header that claims more bytes than the file has */
	write_file(path, "\x93NUMPY\x01\x00\x00\x10{'descr'", 17);
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), -EPROTO);
	write_file(path, "\x93NUMPY\x09\x00\x10\x00", 10);
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), -ENOTSUP);

	const char *ok = "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 4), }";
	write_npy(path, ok, 64, 128);
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), 0);
	assert_int_equal(poolfs_array_close(&a), 0);
	/* the data is one byte short, or missing entirely */
	write_npy(path, ok, 64, 127);
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), -ENODATA);
	write_npy(path, ok, 64, 0);
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), -ENODATA);
	/* extra bytes after the data are ignored, as numpy does */
	write_npy(path, ok, 64, 4096);
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), 0);
	assert_int_equal(a.nbytes, 128);
	assert_int_equal(poolfs_array_close(&a), 0);
	/* numpy < 1.14 aligned the data to 16 bytes: fine */
	write_npy(path, ok, 16, 128);
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), 0);
	assert_int_equal(a.data_offset % 16, 0);
	assert_int_equal(poolfs_array_close(&a), 0);
	/* data at an offset that no double may start at */
	write_npy(path, ok, 1, 128); /* 10 + 60 + 1: the data would start at 71 */
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), -ENOTSUP);

	write_npy(path, "{'descr': '>f8', 'fortran_order': False, 'shape': (4, 4), }", 64, 128);
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), -ENOTSUP);
	write_npy(path, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (4,), }", 64,
		  32);
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), -ENOTSUP);
	write_npy(path, "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 4), ", 64, 128);
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), -EPROTO);
	write_npy(path,
		  "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
		  64, 128);
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), -EOVERFLOW);
	/* a huge but representable shape on a small file: short data, never a huge mapping */
	write_npy(path, "{'descr': '<f8', 'fortran_order': False, 'shape': (1073741824, 1024), }",
		  64, 128);
	assert_int_equal(poolfs_array_open(path, O_RDONLY, &a), -ENODATA);

	/* flags and file types */
	write_npy(path, ok, 64, 128);
	assert_int_equal(poolfs_array_open(path, O_WRONLY, &a), -EINVAL);
	assert_int_equal(poolfs_array_open(path, O_RDWR | O_APPEND, &a), -EINVAL);
	assert_int_equal(poolfs_array_open(path, O_RDONLY, NULL), -EINVAL);
	assert_int_equal(poolfs_array_open(NULL, O_RDONLY, &a), -EINVAL);
	assert_int_equal(poolfs_array_open(f->dir, O_RDONLY, &a), -EISDIR);
	chmod(path, 0400);
	if (geteuid() != 0) /* root ignores the mode */
		assert_int_equal(poolfs_array_open(path, O_RDWR, &a), -EACCES);
}

/* A test on a pool of its own (setup mounts it, teardown unmounts it). */
#define T(test) cmocka_unit_test_setup_teardown(test, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_mkunique),	    T(test_mkunique_errors), T(test_not_a_pool),
		T(test_array_roundtrip),    T(test_array_shared),    T(test_array_create_errors),
		T(test_array_open_hostile),
	};
	return cmocka_run_group_tests_name("lib_local", tests, NULL, NULL);
}
