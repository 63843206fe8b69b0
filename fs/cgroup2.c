/* cgroup2: the cgroup v2 mount point and whether a group is populated (see cgroup2.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup2.h"
#include "procfs.h"

/* The first cgroup2 mount point into buf. */
struct mount_line {
	char *buf;
	size_t len;
};

static int mount_line(char *line, void *ctx)
{
	const struct mount_line *m = ctx;
	char mnt[4096], fstype[64];
	const char *dash = strstr(line, " - ");

	/* Fields: id parent major:minor root mountpoint options ... - fstype source superoptions.
	 * On hybrid hosts cgroup2 sits at /sys/fs/cgroup/unified; on unified ones at /sys/fs/cgroup.
	 * A mount point has its blanks escaped, so %s reads one whole. */
	if (!dash || sscanf(dash, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2") != 0)
		return 0;
	if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
		return 0;
	mountinfo_unescape(mnt);
	return (size_t)snprintf(m->buf, m->len, "%s", mnt) < m->len ? 1 : -ENAMETOOLONG;
}

int cgroup2_find_mount(const char *mountinfo, char *buf, size_t len)
{
	struct mount_line m = {buf, len};
	int r = file_scan(mountinfo, mount_line, &m);

	return r > 0 ? 0 : r;
}

int cgroup2_populated(const char *dir)
{
	char path[8192], buf[512];
	const char *pop;
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/cgroup.events", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	pop = strstr(buf, "populated ");
	return pop ? pop[10] == '1' : -EIO;
}
