/* debian/tests/pool's client: as an ordinary user, create an .npy array in the pool, fill it,
 * map it a second time read-only and check the data, show it lives while mapped and is gone
 * after the last unmap (the pool is mounted with autohold=none: nothing else keeps it).
 * Prints the pool's data path as "datapath=NAME". Exit 0 on success. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poolfs.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N (1u << 20)

static int fail(const char *what, int err)
{
	fprintf(stderr, "array: %s: %s\n", what, strerror(err < 0 ? -err : err));
	return 1;
}

int main(int argc, char **argv)
{
	struct poolfs_array w, r;
	struct poolfs_usage u;
	struct poolfs_refs refs;
	struct stat st;
	size_t shape[1] = {N};
	char path[4096];
	double sum = 0;
	int err;

	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "%s/array-%d.npy", argv[1], (int)getpid());
	err = poolfs_usage(argv[1], &u);
	if (err)
		return fail("poolfs_usage", err);
	printf("datapath=%s\n", u.datapath);

	err = poolfs_array_create(path, POOLFS_DTYPE_F8, 1, shape, 0, &w);
	if (err)
		return fail("poolfs_array_create", err);
	for (size_t i = 0; i < N; i++)
		((double *)w.data)[i] = (double)i;
	err = poolfs_array_sync(&w);
	if (err)
		return fail("poolfs_array_sync", err);

	err = poolfs_array_open(path, O_RDONLY, &r);
	if (err)
		return fail("poolfs_array_open", err);
	for (size_t i = 0; i < r.nelems; i++)
		sum += ((const double *)r.data)[i];
	if (r.nelems != N || sum != (double)N * (N - 1) / 2) {
		fprintf(stderr, "array: read back %zu elements, sum %.0f\n", r.nelems, sum);
		return 1;
	}
	printf("wrote, mapped and read %u doubles\n", N);
	err = poolfs_array_close(&r);
	if (err)
		return fail("poolfs_array_close", err);

	err = poolfs_refs(path, &refs);
	if (err)
		return fail("poolfs_refs", err);
	/* The writer's mapping keeps it: on passthrough the daemon reports it as mapped; on the
	 * page-cache path the mapping holds the kernel's open file, an open handle to the daemon. */
	if ((!refs.mapped && refs.opens == 0) || stat(path, &st) != 0) {
		fprintf(stderr,
			"array: %s gone or unused while still mapped (opens %llu, mapped %d)\n",
			path, (unsigned long long)refs.opens, refs.mapped);
		return 1;
	}
	printf("still there while mapped (opens %llu, mapped %d, %lld bytes)\n",
	       (unsigned long long)refs.opens, refs.mapped, (long long)st.st_size);

	err = poolfs_array_close(&w);
	if (err)
		return fail("poolfs_array_close", err);
	/* The kernel sends the RELEASE of the last mapping's file after munmap returns: the
	 * removal follows within milliseconds. Wait for it, up to 5 s (the project's tests'
	 * bound, tests/integration/testutil.h). */
	for (int ms = 0;; ms += 5) {
		if (stat(path, &st) != 0 && errno == ENOENT)
			break;
		if (ms >= 5000) {
			fprintf(stderr, "array: %s still there 5 s after the last unmap\n", path);
			return 1;
		}
		usleep(5000);
	}
	printf("removed after the last unmap\n");
	return 0;
}
