/* tests/programs: the MPI program cases.sh runs with mpirun -np 2 and TMPDIR in a pool. Every rank
 * adds rank + 1 with MPI_Allreduce; rank 0 prints the sum, whether Open MPI's session directory
 * (ompi.*) is in $TMPDIR while the job runs (so its files really were in the pool), and leaves a
 * file mpi-result in $TMPDIR, what a job's output would be. Exit status 0 when all is well.
 *
 * usage: mpi_hello */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether DIR holds an entry whose name starts with "ompi." (Open MPI's session directory). */
static int has_session_dir(const char *dir)
{
	DIR *d = opendir(dir);
	const struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (strncmp(e->d_name, "ompi.", 5) == 0)
			found = 1;
	closedir(d);
	return found;
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	int rank, size, one, sum = 0;
	FILE *f;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	one = rank + 1;
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		if (!tmp ||
		    snprintf(path, sizeof(path), "%s/mpi-result", tmp) >= (int)sizeof(path)) {
			fprintf(stderr, "mpi_hello: TMPDIR unset or too long\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		printf("ranks %d sum %d\n", size, sum);
		printf("session directory in TMPDIR: %s\n", has_session_dir(tmp) ? "yes" : "no");
		f = fopen(path, "w");
		if (!f || fprintf(f, "ranks %d sum %d\n", size, sum) < 0 || fclose(f) != 0) {
			perror("mpi_hello: mpi-result");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		fflush(stdout);
	}
	MPI_Finalize();
	return 0;
}
