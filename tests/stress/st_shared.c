/* stress_support: the shared anonymous area where workers in any process count and report the
 * first errors; it survives writers that are SIGKILLed. */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stress.h"

struct shared *shared_new(void)
{
	void *m = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		fail_msg("mmap of the shared area: %s", errname(errno));
	memset(m, 0, sizeof(struct shared));
	return m;
}

void shared_free(struct shared *sh)
{
	if (sh)
		munmap(sh, sizeof(*sh));
}

void sh_inc(struct shared *sh, int i)
{
	atomic_fetch_add(&sh->n[i], 1);
}

long sh_get(struct shared *sh, int i)
{
	return atomic_load(&sh->n[i]);
}

void sh_err(struct shared *sh, const char *fmt, ...)
{
	char msg[SH_ERRLEN];
	va_list ap;
	int k;

	va_start(ap, fmt);
	/* ap is started just above: clang-tidy 14 loses sight of va_start when one run checks
	 * several files, and then flags this call. */
	vsnprintf(msg, sizeof(msg), fmt, ap); /* NOLINT(clang-analyzer-valist.Uninitialized) */
	va_end(ap);
	k = atomic_fetch_add(&sh->nerr, 1);
	if (k == 0)
		memcpy(sh->first_err, msg, sizeof(msg));
	if (k < SH_PRINT_ERRORS)
		fprintf(stderr, "# [pid %d] %s\n", (int)getpid(), msg);
}
