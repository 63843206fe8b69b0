/* Stepping a child through a scenario (testutil.h): the two pipes of a struct chan and the bytes
 * sent over them, waiting for input with a bound, whether a listing shows a name, a descriptor
 * passed over a unix socket, and a unix socket at a path. */
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>

#include "testutil.h"

int tu_unix_socket(const char *path, enum tu_sock_use use)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int s, e;

	if (strlen(path) >= sizeof(a.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(a.sun_path, path, strlen(path));
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	if (use == TU_SOCK_CONNECT ? connect(s, (struct sockaddr *)&a, sizeof(a)) == 0
				   : bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 &&
					     (use != TU_SOCK_LISTEN || listen(s, 4) == 0))
		return s;
	e = errno;
	close(s);
	errno = e;
	return -1;
}

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

int tu_dir_count(const char *dir, int (*counts)(const struct dirent *e, const void *ctx),
		 const void *ctx)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		n += counts(e, ctx) != 0;
	closedir(d);
	return n;
}

static int is_named(const struct dirent *e, const void *name)
{
	return strcmp(e->d_name, name) == 0;
}

int tu_listed(const char *dir, const char *name)
{
	int found = tu_dir_count(dir, is_named, name);

	return found < 0 ? found : found > 0;
}

/* A message of one byte with room for one descriptor. The control buffer is aligned for the
 * struct cmsghdr that CMSG_FIRSTHDR puts at its start (UBSan: a char array is not). */
struct fd_msg {
	char byte;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov;
	struct msghdr msg;
};

static void fd_msg_init(struct fd_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->byte = 'f';
	m->iov = (struct iovec){&m->byte, 1};
	m->msg = (struct msghdr){.msg_iov = &m->iov,
				 .msg_iovlen = 1,
				 .msg_control = m->ctl.buf,
				 .msg_controllen = sizeof(m->ctl.buf)};
}

int tu_send_fd(int sock, int fd)
{
	struct fd_msg m;
	struct cmsghdr *cm;

	fd_msg_init(&m);
	cm = CMSG_FIRSTHDR(&m.msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	return sendmsg(sock, &m.msg, 0) == 1 ? 0 : -errno;
}

int tu_recv_fd(int sock, int timeout_ms)
{
	struct fd_msg m;
	struct cmsghdr *cm;
	int fd, r = fd_wait_readable(sock, timeout_ms);

	if (r < 0)
		return r;
	fd_msg_init(&m);
	if (recvmsg(sock, &m.msg, MSG_CMSG_CLOEXEC) != 1)
		return -EPROTO;
	cm = CMSG_FIRSTHDR(&m.msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	return fd;
}
