/* Example: read the array the producer left in the pool, with open, mmap and close only.
 *
 *   consumer POOL/FILE      maps FILE read-only and prints the number of doubles and their sum
 *
 * Build: cc -o consumer consumer.c */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* ftruncate and mmap also under -std=c11 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct stat st;

	if (argc != 2) {
		fprintf(stderr, "usage: consumer FILE\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
		fprintf(stderr, "consumer: %s: %s\n", argv[1], fd < 0 ? strerror(errno) : "empty");
		if (fd >= 0)
			close(fd);
		return 1;
	}
	size_t len = (size_t)st.st_size, n = len / sizeof(double);
	const double *a = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (a == MAP_FAILED) {
		fprintf(stderr, "consumer: mmap: %s\n", strerror(errno));
		return 1;
	}
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += a[i];
	munmap((void *)a, len);
	printf("consumer: %zu doubles, sum %.1f\n", n, sum);
	return 0;
}
