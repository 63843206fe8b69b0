/* What a program that crashes leaves in /dev/shm: a POSIX shared-memory segment and a named
 * semaphore, made with glibc's shm_open and sem_open, kept open and mapped, never unlinked. The
 * cluster suite runs it in a batch job on a node whose /dev/shm is a pool and cancels the job
 * (docs/devshm.md); its control run binds a plain tmpfs folder on the job's /dev/shm instead.
 *
 * usage: shm_hold NAME REPORT
 *   makes the segment /NAME (1 MiB, every page written) and the semaphore /NAME, writes their
 *   entries "NAME sem.NAME" to REPORT (whole: a temporary file renamed), then waits to be killed.
 * Exit status 1 (and a message) if a call fails. */
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SEG (1UL << 20)

static int fail(const char *what, const char *name)
{
	fprintf(stderr, "shm_hold: %s %s: %s\n", what, name, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	char shm[256], tmp[4096];
	unsigned char *p;
	sem_t *s;
	FILE *f;
	int fd;

	if (argc != 3 || strchr(argv[1], '/')) {
		fprintf(stderr, "usage: shm_hold NAME REPORT\n");
		return 2;
	}
	snprintf(shm, sizeof(shm), "/%s", argv[1]);
	fd = shm_open(shm, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return fail("shm_open", shm);
	if (ftruncate(fd, (off_t)SEG) < 0)
		return fail("ftruncate", shm);
	p = mmap(NULL, SEG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return fail("mmap", shm);
	for (size_t off = 0; off < SEG; off += 4096)
		p[off] = 1;
	s = sem_open(shm, O_CREAT | O_EXCL, 0600, 0);
	if (s == SEM_FAILED)
		return fail("sem_open", shm);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", argv[2], (int)getpid());
	f = fopen(tmp, "w");
	if (!f)
		return fail("fopen", tmp);
	fprintf(f, "%s sem.%s\n", argv[1], argv[1]);
	if (fclose(f) != 0 || rename(tmp, argv[2]) < 0)
		return fail("writing", argv[2]);
	for (;;)
		pause();
}
