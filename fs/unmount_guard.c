/* unmount_guard: a child that holds auto_unmount's socket until a dead daemon's connection is
 * gone (see unmount_guard.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "procfs.h"
#include "unmount_guard.h"

/* libfuse names its end of the auto_unmount socket here (lib/mount.c, libfuse >= 3.16). */
#define COMMFD2_ENV "_FUSE_COMMFD2"

static bool is_socket(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

static bool was_open(const struct unmount_guard_sockets *before, int fd)
{
	return before->open[fd / UNMOUNT_GUARD_WORD_BITS] & (1UL << (fd % UNMOUNT_GUARD_WORD_BITS));
}

void unmount_guard_note_sockets(struct unmount_guard_sockets *before)
{
	memset(before, 0, sizeof(*before));
	for (int fd = 0; fd < UNMOUNT_GUARD_FDS; fd++)
		if (is_socket(fd))
			before->open[fd / UNMOUNT_GUARD_WORD_BITS] |=
				1UL << (fd % UNMOUNT_GUARD_WORD_BITS);
}

/* The one Unix stream socket open now that was not before the mount, or -1 (none, or several:
 * then which is the helper's cannot be told). */
static int new_socket(const struct unmount_guard_sockets *before)
{
	int found = -1;

	for (int fd = 0; fd < UNMOUNT_GUARD_FDS; fd++) {
		int domain = 0, type = 0;
		socklen_t len = sizeof(int);

		if (was_open(before, fd) || !is_socket(fd))
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 || domain != AF_UNIX)
			continue;
		len = sizeof(int);
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM)
			continue;
		if (found >= 0)
			return -1;
		found = fd;
	}
	return found;
}

/* The daemon's end of fusermount3's socket, or -1. */
static int auto_unmount_socket(const struct unmount_guard_sockets *before)
{
	const char *s = getenv(COMMFD2_ENV);
	char *end;
	long fd;

	if (!s || !*s)
		return new_socket(before);
	errno = 0;
	fd = strtol(s, &end, 10);
	if (errno || *end || fd < 0 || fd > INT_MAX || !is_socket((int)fd))
		return -1;
	return (int)fd;
}

/* Every descriptor but `a` and `b` (a < b) goes: the daemon's /dev/fuse, store and backing files
 * must not live on in the guard (a /dev/fuse kept open would keep the dead connection alive). */
static void close_all_but(int a, int b)
{
	if (a > 3)
		close_range(3, (unsigned)a - 1, 0);
	if (b > a + 1)
		close_range((unsigned)a + 1, (unsigned)b - 1, 0);
	close_range((unsigned)b + 1, ~0U, 0);
}

/* Whether a FUSE file system is mounted on `mountpoint` in this mount namespace (procfs.c reads
 * mountinfo). A cleanly unmounted pool is not looked into: an open of what lies beneath could
 * set off an automount (fusermount3 checks first, for the same reason). */
static int fuse_mounted_on(const char *mountpoint)
{
	dev_t dev;

	/* -errno: cannot tell, so look */
	return mountinfo_fuse_dev("/proc/self/mountinfo", mountpoint, &dev) != -ENOENT;
}

/* 1 when the mountpoint's answer is final for fusermount3: the connection is dead (ENOTCONN,
 * ECONNABORTED), or the open works (the mount is gone), or fails for another reason that no wait
 * changes. 0 while a ring of the dead daemon still cancels requests (ECANCELED). */
static int answer_is_final(const char *mountpoint)
{
	int fd = open(mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno != ECANCELED && errno != EINTR;
}

static _Noreturn void guard(int daemon_gone, int sock, const char *mountpoint)
{
	const struct timespec ms = {.tv_nsec = 1000000};
	sigset_t all;
	char c;
	int null_fd;

	/* Like fusermount3: out of the daemon's session and deaf to its signals, so only the
	 * daemon's end (or SIGKILL) ends the wait. */
	setsid();
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	if (chdir("/") < 0)
		_exit(1);
	null_fd = open("/dev/null", O_RDWR);
	if (null_fd >= 0) {
		dup2(null_fd, STDIN_FILENO);
		dup2(null_fd, STDOUT_FILENO);
		dup2(null_fd, STDERR_FILENO);
		if (null_fd > STDERR_FILENO)
			close(null_fd);
	}
	/* The pipe's write end is the daemon's only: end of file when the daemon is gone. */
	while (read(daemon_gone, &c, 1) < 0 && errno == EINTR)
		;
	for (int waited = 0; waited < UNMOUNT_GUARD_GIVE_UP_MS && fuse_mounted_on(mountpoint) &&
			     !answer_is_final(mountpoint);
	     waited++)
		nanosleep(&ms, NULL);
	(void)sock; /* closed by _exit: now fusermount3 looks */
	_exit(0);
}

int unmount_guard_start(const char *mountpoint, const struct unmount_guard_sockets *before)
{
	int sock = auto_unmount_socket(before);
	int p[2];
	pid_t pid;

	if (sock < 0)
		return 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		close(p[1]);
		close_all_but(p[0] < sock ? p[0] : sock, p[0] < sock ? sock : p[0]);
		guard(p[0], sock, mountpoint);
	}
	close(p[0]);
	/* p[1] stays open, close-on-exec, for the daemon's life. */
	return 0;
}
