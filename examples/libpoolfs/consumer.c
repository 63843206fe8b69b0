/* Example: map the .npy array the producer wrote (or numpy.save did) and sum it.
 *
 *   consumer PATH.npy   prints "ROWSxCOLS sum S"
 *
 * Build: cc -o consumer consumer.c $(pkg-config --cflags --libs poolfs) */
#include <fcntl.h>
#include <poolfs.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct poolfs_array a;
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: consumer PATH.npy\n");
		return 2;
	}
	r = poolfs_array_open(argv[1], O_RDONLY, &a);
	if (r < 0) {
		fprintf(stderr, "consumer: %s: %s\n", argv[1], strerror(-r));
		return 1;
	}
	if (a.dtype != POOLFS_DTYPE_F8 || a.ndim != 2) {
		fprintf(stderr, "consumer: %s: want a 2-d float64 array\n", argv[1]);
		poolfs_array_close(&a);
		return 1;
	}
	const double *x = a.data;
	double sum = 0;
	for (size_t i = 0; i < a.nelems; i++)
		sum += x[i];
	printf("%zux%zu sum %.1f\n", a.shape[0], a.shape[1], sum);
	return poolfs_array_close(&a) < 0 ? 1 : 0;
}
