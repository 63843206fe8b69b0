/* A client built by tests/install against the installed poolfs.h and poolfs.pc (not the source
 * tree): make a job folder on the pool, write an array in it, check the daemon's answers.
 * usage: client POOL; prints the array's path on success, exits 1 with a message otherwise. */
#define _GNU_SOURCE /* PATH_MAX with -std=c11 */
#include <limits.h>
#include <poolfs.h>
#include <stdio.h>
#include <string.h>

static int check(int r, const char *what)
{
	if (r < 0)
		fprintf(stderr, "client: %s: %s\n", what, strerror(-r));
	return r;
}

int main(int argc, char **argv)
{
	char job[PATH_MAX], path[PATH_MAX + 16];
	size_t shape[1] = {1024};
	struct poolfs_array a;
	struct poolfs_refs refs;
	struct poolfs_usage u;

	if (argc != 2) {
		fprintf(stderr, "usage: client POOL\n");
		return 2;
	}
	if (check(poolfs_mkjob(argv[1], POOLFS_SCOPE_PIN, 0, job, sizeof(job)), "mkjob") < 0)
		return 1;
	snprintf(path, sizeof(path), "%s/x.npy", job);
	if (check(poolfs_array_create(path, POOLFS_DTYPE_F8, 1, shape, 0, &a), "array_create") < 0)
		return 1;
	((double *)a.data)[1023] = 42.0;
	if (check(poolfs_refs(path, &refs), "refs") < 0 ||
	    check(poolfs_usage(path, &u), "usage") < 0)
		return 1;
	if (!refs.mapped && refs.opens == 0) {
		fprintf(stderr, "client: the daemon does not see the array as mapped or open\n");
		return 1;
	}
	if (check(poolfs_array_close(&a), "array_close") < 0 ||
	    check(poolfs_release(job), "release") < 0)
		return 1;
	printf("%s %s\n", path, u.datapath);
	return 0;
}
