/* idle_halt: does this VM halt its idle CPUs at once (see idle_halt.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idle_halt.h"
#include "procfs.h"

struct line_buf {
	char *buf;
	size_t len;
};

/* file_scan's callback: keep the first line, and stop there. */
static int keep_first(char *line, void *ctx)
{
	struct line_buf *lb = ctx;

	snprintf(lb->buf, lb->len, "%s", line);
	return 1;
}

/* The first line of `sysfs``rel` into buf, without its newline: 0 or a negative errno. */
static int read_line(const char *sysfs, const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];
	struct line_buf lb = {buf, len};
	int r;

	if (snprintf(path, sizeof(path), "%s%s", sysfs, rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	r = file_scan(path, keep_first, &lb);
	return r == 1 ? 0 : r;
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
