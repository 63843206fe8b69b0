/* MPI ranks sharing an array through a pool with nothing but open, ftruncate and mmap, on one
 * node (docs/cluster.md, "MPI on one node"; also the devshm suite's mpi_test) or on several, each
 * node with an array of its own in its own pool (docs/cluster.md, "Many nodes"). On every node
 * the node's first rank creates PATH (open, ftruncate, mmap) and fills it; after a barrier every
 * rank of the node maps it and sums its slice of the node's array; the sums of all nodes are added
 * up (across nodes over TCP) and checked against the closed form times the number of nodes.
 *
 * usage: mpi_share PATH N [hang]
 *   PATH  the array's name, the same on every node (each node's pool has its own)
 *   N     number of doubles in each node's array
 *   hang  after the check, every rank keeps its mapping, prints "mapped RANK PID HOST" and waits
 *         to be killed (the test SIGKILLs one rank; Open MPI then ends the others)
 * Prints "mpi_share: R ranks on K nodes, sum S, want W: ok" (rank 0); exit status 0 when the
 * sums are right. */
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

/* The node's first rank: create and fill the node's array; the fd is kept until the barrier. */
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
	int rank = 0, size = 1, lrank = 0, lsize = 1, fd = -1;
	char host[256] = "?";
	MPI_Comm node;

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
	gethostname(host, sizeof(host) - 1);
	/* The ranks that share memory: Open MPI's node, here the node's hostname. */
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &lrank);
	MPI_Comm_size(node, &lsize);

	if (lrank == 0)
		fd = create(rank, path, n);
	MPI_Barrier(node);
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

	size_t lo = n * (size_t)lrank / (size_t)lsize, hi = n * (size_t)(lrank + 1) / (size_t)lsize;
	double mine = 0, total = 0;
	int first = lrank == 0, nodes = 0;
	for (size_t i = lo; i < hi; i++)
		mine += a[i];
	MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&first, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	double want = (double)nodes * (double)n * (double)(n - 1) / 2;
	int ok = total == want;
	if (rank == 0)
		printf("mpi_share: %d ranks on %d nodes, sum %.0f, want %.0f: %s\n", size, nodes,
		       total, want, ok ? "ok" : "WRONG");
	fflush(stdout);
	if (hang) {
		MPI_Barrier(MPI_COMM_WORLD);
		printf("mapped %d %d %s\n", rank, (int)getpid(), host);
		fflush(stdout);
		for (;;)
			pause();
	}
	munmap((void *)a, n * sizeof(double));
	MPI_Comm_free(&node);
	MPI_Finalize();
	return ok ? 0 : 1;
}
