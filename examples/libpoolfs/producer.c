/* Example: the same pair with libpoolfs: a held job folder and a .npy array that numpy maps too.
 *
 *   producer POOL ROWS COLS   makes POOL/job-<uuid> (held until the caller's session ends),
 *                             writes x.npy (float64, ROWS x COLS, x[i][j] = i + j) in it and
 *                             prints the array's path
 *
 * Build: cc -o producer producer.c $(pkg-config --cflags --libs poolfs) */
#include <limits.h>
#include <poolfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	char job[PATH_MAX], path[PATH_MAX + 8];
	struct poolfs_array a;
	int r;

	if (argc != 4) {
		fprintf(stderr, "usage: producer POOL ROWS COLS\n");
		return 2;
	}
	size_t shape[2] = {strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10)};
	r = poolfs_mkjob(argv[1], POOLFS_SCOPE_SESSION, 0, job, sizeof(job));
	if (r < 0) {
		fprintf(stderr, "producer: mkjob %s: %s\n", argv[1], strerror(-r));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/x.npy", job);
	r = poolfs_array_create(path, POOLFS_DTYPE_F8, 2, shape, 0, &a);
	if (r < 0) {
		fprintf(stderr, "producer: %s: %s\n", path, strerror(-r));
		return 1;
	}
	double *x = a.data;
	for (size_t i = 0; i < shape[0]; i++)
		for (size_t j = 0; j < shape[1]; j++)
			x[i * shape[1] + j] = (double)(i + j);
	r = poolfs_array_close(&a); /* the job folder's hold keeps it for the consumers */
	if (r < 0) {
		fprintf(stderr, "producer: close %s: %s\n", path, strerror(-r));
		return 1;
	}
	printf("%s\n", path);
	return 0;
}
