/* MPI ranks on one node sharing an array through a pool with nothing but open, ftruncate and mmap
 * (docs/cluster.md, "MPI on one node"). Rank 0 creates PATH, sizes it and fills it; after a barrier every rank
 * opens and maps it, sums its own slice, and the sums are checked against the closed form.
 *
 * usage: mpi_share PATH N [hang]
 *   N     number of doubles in the array
 *   hang  after the check, every rank keeps its mapping and prints "mapped" and waits to be killed
 *         (the test SIGKILLs one rank; Open MPI then ends the others)
 * Exit status 0 when the sums are right. */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int die(int rank, const char *what, const char *path)
{
	fprintf(stderr, "mpi_share: rank %d: %s %s: %s\n", rank, what, path, strerror(errno));
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

/* Rank 0: create and fill the array; the mapping is dropped, the fd kept until the barrier. */
static int create(int rank, const char *path, size_t n)
{
	size_t bytes = n * sizeof(double);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return die(rank, "open(O_CREAT)", path);
	if (ftruncate(fd, (off_t)bytes) < 0)
		return die(rank, "ftruncate", path);
	double *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (a == MAP_FAILED)
		return die(rank, "mmap", path);
	for (size_t i = 0; i < n; i++)
		a[i] = (double)i;
	if (munmap(a, bytes) < 0)
		return die(rank, "munmap", path);
	return fd;
}

int main(int argc, char **argv)
{
	int rank = 0, size = 1, fd = -1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 3 || argc > 4) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_share PATH N [hang]\n");
		MPI_Finalize();
		return 2;
	}
	const char *path = argv[1];
	size_t n = strtoull(argv[2], NULL, 10);
	int hang = argc == 4 && strcmp(argv[3], "hang") == 0;

	if (rank == 0)
		fd = create(rank, path, n);
	MPI_Barrier(MPI_COMM_WORLD);
	int rfd = open(path, O_RDONLY | O_CLOEXEC);
	if (rfd < 0)
		return die(rank, "open", path);
	const double *a = mmap(NULL, n * sizeof(double), PROT_READ, MAP_SHARED, rfd, 0);
	if (a == MAP_FAILED)
		return die(rank, "mmap", path);
	/* The mapping alone keeps the file: close both descriptors now. */
	close(rfd);
	if (fd >= 0)
		close(fd);

	size_t lo = n * (size_t)rank / (size_t)size, hi = n * (size_t)(rank + 1) / (size_t)size;
	double mine = 0, total = 0;
	for (size_t i = lo; i < hi; i++)
		mine += a[i];
	MPI_Reduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	int ok = 1;
	if (rank == 0) {
		double want = (double)n * (double)(n - 1) / 2;
		ok = total == want;
		printf("mpi_share: %d ranks, sum %.0f, want %.0f: %s\n", size, total, want,
		       ok ? "ok" : "WRONG");
	}
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (hang) {
		MPI_Barrier(MPI_COMM_WORLD);
		printf("mapped %d %d\n", rank, (int)getpid());
		fflush(stdout);
		for (;;)
			pause();
	}
	munmap((void *)a, n * sizeof(double));
	MPI_Finalize();
	return ok ? 0 : 1;
}
