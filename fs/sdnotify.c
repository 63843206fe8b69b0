/* sdnotify: one datagram per state change to $NOTIFY_SOCKET (see sdnotify.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sdnotify.h"

int sdnotify_send(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len;
	socklen_t salen;
	ssize_t n;
	int fd, r = 0;

	if (!path || !*path)
		return 0;
	len = strlen(path);
	/* Paths must be absolute; '@' marks Linux's abstract namespace (a leading NUL byte). */
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/'));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (const struct sockaddr *)&sa, salen);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != strlen(state))
		r = -EMSGSIZE;
	close(fd);
	return r;
}
