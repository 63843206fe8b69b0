/* secrun: pass descriptors over unix sockets (see secrun.h). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "secrun.h"

#define SEC_MAX_FDS 8

int sec_send_fds(int sock, const int *fds, int n)
{
	char byte = 'F';
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union {
		char buf[CMSG_SPACE(sizeof(int) * SEC_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf};
	struct cmsghdr *cm;
	ssize_t r;

	if (n < 1 || n > SEC_MAX_FDS)
		return -EINVAL;
	memset(&u, 0, sizeof(u));
	msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)n);
	do
		r = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (r == -1 && errno == EINTR);
	if (r == -1)
		return -errno;
	return r == 1 ? 0 : -EPROTO;
}

/* Close every descriptor a message carried (when it is not what we asked for). */
static void close_carried(struct msghdr *msg)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		size_t k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			close(fd);
		}
	}
}

int sec_recv_fds(int sock, int *fds, int n)
{
	char byte;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union {
		char buf[CMSG_SPACE(sizeof(int) * SEC_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *cm;
	ssize_t r;

	if (n < 1 || n > SEC_MAX_FDS)
		return -EINVAL;
	do
		r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (r == -1 && errno == EINTR);
	if (r == -1)
		return -errno;
	if (r == 0)
		return -EPIPE; /* the sender went away without sending */
	cm = CMSG_FIRSTHDR(&msg);
	if ((msg.msg_flags & MSG_CTRUNC) || !cm || cm->cmsg_level != SOL_SOCKET ||
	    cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int) * (size_t)n)) {
		close_carried(&msg);
		return -EPROTO;
	}
	memcpy(fds, CMSG_DATA(cm), sizeof(int) * (size_t)n);
	return 0;
}
