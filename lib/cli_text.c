/* poolctl's words: human-readable sizes, what an errno means in the context of each command, and
 * the process ids its commands take. Pure functions; poolctl.c does the printing.
 */
#include "cli_text.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int human_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	int n;

	if (bytes < 1024) {
		n = snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	} else {
		double v = (double)bytes;
		size_t u = 0;
		while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
			v /= 1024.0;
			u++;
		}
		/* 1048575 bytes is 1023.999 KiB, which "%.1f" would print as "1024.0 KiB" */
		if (v >= 1023.95 && u + 1 < sizeof units / sizeof units[0]) {
			v /= 1024.0;
			u++;
		}
		n = snprintf(buf, len, "%.1f %s", v, units[u]);
	}
	if (n < 0 || (size_t)n >= len)
		return -ERANGE;
	return n;
}

static bool is(const char *cmd, const char *name)
{
	return cmd && strcmp(cmd, name) == 0;
}

const char *poolctl_explain(const char *cmd, int err)
{
	/* hold and mkjob both end in setxattr(user.poolfs.hold) */
	bool holds = is(cmd, "hold") || is(cmd, "mkjob");
	bool reads = is(cmd, "refs") || is(cmd, "stat");

	switch (err) {
	case ENOTSUP:
		return "not on a poolfs pool";
	case ENODATA:
		if (is(cmd, "release"))
			return "no hold of yours on this entry";
		if (reads)
			return "not on a poolfs pool";
		break;
	case EINVAL:
		if (holds)
			return "bad hold scope";
		break;
	case ESRCH:
		if (holds)
			return "no such process to hold for";
		break;
	case ENOPROTOOPT:
		if (holds)
			return "this pool cannot watch that hold scope here (cgroup: no cgroup v2 group "
			       "of yours to watch)";
		break;
	case EPROTO:
		if (reads)
			return "unexpected answer from the pool daemon (version mismatch?)";
		break;
	case ESTALE:
		return "the pool has just removed this entry";
	case ERANGE:
		if (is(cmd, "mkjob") || is(cmd, "mkunique"))
			return "path too long";
		break;
	}
	return NULL;
}

bool cli_parse_pid(const char *s, pid_t *pid)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT_MAX)
		return false;
	*pid = (pid_t)v;
	return true;
}
