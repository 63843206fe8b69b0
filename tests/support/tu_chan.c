/* Stepping a child through a scenario (testutil.h): the two pipes of a struct chan and the bytes
 * sent over them, waiting for input with a bound, and whether a listing shows a name. */
#include "testutil.h"

int fd_wait_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	int r;

	do
		r = poll(&pfd, 1, timeout_ms);
	while (r == -1 && errno == EINTR);
	return r == 0 ? -ETIMEDOUT : r < 0 ? -errno : 0;
}

void chan_open(struct chan *c)
{
	if (pipe2(c->up, O_CLOEXEC) == -1 || pipe2(c->down, O_CLOEXEC) == -1)
		fail_msg("pipe: %s", errname(errno));
}

void chan_child(struct chan *c)
{
	close(c->up[0]);
	close(c->down[1]);
}

void chan_parent(struct chan *c)
{
	close(c->up[1]);
	close(c->down[0]);
}

void chan_close_parent(struct chan *c)
{
	close(c->up[0]);
	close(c->down[1]);
}

int chan_put(int fd)
{
	char b = 1;

	return write(fd, &b, 1) == 1 ? 0 : -EPIPE;
}

int chan_get(int fd, int timeout_ms)
{
	char b;
	int r = fd_wait_readable(fd, timeout_ms);

	if (r < 0)
		return r;
	if (read(fd, &b, 1) != 1)
		return -EPIPE;
	return 0;
}

int tu_listed(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, name) == 0)
			found = 1;
	closedir(d);
	return found;
}
