/* holds_support: taking holds and reading user.poolfs.refs (docs/interface.md "Extended
 * attributes"), and the closed files the hold tests hold. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "holdtest.h"

int hold(const char *path, const char *scope)
{
	return setxattr(path, POOLFS_XATTR_HOLD, scope, strlen(scope), 0);
}

ssize_t refs(const char *path, char *buf, size_t len)
{
	ssize_t n = getxattr(path, POOLFS_XATTR_REFS, buf, len - 1);

	if (n >= 0)
		buf[n] = '\0';
	return n;
}

int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
		if (strncmp(s, line, n) == 0 && s[n] == '\n')
			return 1;
	return 0;
}

int make_closed_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (write(fd, "hold me\n", 8) != 8) {
		int e = errno;

		close(fd);
		return -e;
	}
	return close(fd) == 0 ? 0 : -errno;
}
