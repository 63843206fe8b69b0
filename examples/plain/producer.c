/* Example: share an array through a pool with nothing but open, mmap and close.
 *
 *   producer POOL/FILE N    writes N doubles (i * 0.5) into FILE and exits
 *
 * The file is closed and unmapped when the producer exits; the pool's default autohold=session
 * keeps it for the consumers of the same job (session), and removes it when the job has ended
 * and nobody uses it. Build: cc -o producer producer.c */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* ftruncate and mmap also under -std=c11 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: producer FILE N\n");
		return 2;
	}
	size_t n = strtoul(argv[2], NULL, 10), len = n * sizeof(double);
	int fd = open(argv[1], O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || n == 0) {
		fprintf(stderr, "producer: %s: %s\n", argv[1],
			n ? strerror(errno) : "N must be > 0");
		return 1;
	}
	/* Growing the file reserves its space: a full pool says ENOSPC here, never SIGBUS later. */
	if (ftruncate(fd, (off_t)len) < 0) {
		fprintf(stderr, "producer: ftruncate: %s\n", strerror(errno));
		close(fd);
		return 1;
	}
	double *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd); /* the mapping keeps the file alive */
	if (a == MAP_FAILED) {
		fprintf(stderr, "producer: mmap: %s\n", strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		a[i] = (double)i * 0.5;
	munmap(a, len);
	printf("producer: wrote %zu doubles to %s\n", n, argv[1]);
	return 0;
}
