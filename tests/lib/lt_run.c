/* libtest_support: running a program with its output captured, and whether numpy is there. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libtest.h"

static void libtest_slurp(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;
	lseek(fd, 0, SEEK_SET);
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
}

int libtest_run(char *const argv[], struct run_result *r)
{
	int out = memfd_create("stdout", MFD_CLOEXEC), err = memfd_create("stderr", MFD_CLOEXEC);
	int ret = 0;

	r->status = -1;
	r->out[0] = r->err[0] = '\0';
	if (out < 0 || err < 0) {
		ret = -errno;
		goto done;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		ret = -errno;
		goto done;
	}
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			ret = -errno;
			goto done;
		}
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	libtest_slurp(out, r->out, sizeof r->out);
	libtest_slurp(err, r->err, sizeof r->err);
done:
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	return ret;
}

bool libtest_have_numpy(void)
{
	static struct run_result r;
	char *const argv[] = {PYTHON, "-c", "import numpy", NULL};
	if (access(PYTHON, X_OK) < 0)
		return false;
	return libtest_run(argv, &r) == 0 && r.status == 0;
}

int libtest_runl(struct run_result *r, const char *prog, const char *a0, ...)
{
	char *argv[LIBTEST_RUNL_MAX + 2] = {(char *)prog};
	va_list ap;
	int n = 1;

	va_start(ap, a0);
	/* ap is started just above: clang-tidy 14 loses sight of va_start when one run checks
	 * several files, and then flags va_arg. */
	for (const char *a = a0; a && n <= LIBTEST_RUNL_MAX;
	     a = va_arg(ap, const char *)) /* NOLINT(clang-analyzer-valist.Uninitialized) */
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	assert_int_equal(libtest_run(argv, r), 0);
	return r->status;
}
