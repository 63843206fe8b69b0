/* idle_halt: does this VM halt its idle CPUs at once (see idle_halt.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "idle_halt.h"

/* The first line of `sysfs``rel` into buf, without its newline: 0 or a negative errno. */
static int read_line(const char *sysfs, const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, err;

	if (snprintf(path, sizeof(path), "%s%s", sysfs, rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	err = errno;
	close(fd);
	if (n < 0)
		return err ? -err : -EIO;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int idle_halt_at_once(const char *sysfs)
{
	char driver[64] = "", poll[32] = "", *end;
	unsigned long long ns;
	int r;

	r = read_line(sysfs, IDLE_HALT_DRIVER, driver, sizeof(driver));
	if (r < 0)
		return r;
	/* Other drivers (intel_idle, acpi_idle, none) either poll on their own terms or run on
	 * hardware where waking a CPU costs no trip through a host. */
	if (strcmp(driver, "haltpoll") != 0)
		return 0;
	r = read_line(sysfs, IDLE_HALT_POLL_NS, poll, sizeof(poll));
	if (r < 0)
		return r;
	errno = 0;
	ns = strtoull(poll, &end, 10);
	if (errno || end == poll || *end || poll[0] == '-')
		return -EINVAL;
	return ns == 0;
}
