/* session: finding the process that stands for a caller's session (see session.h for the rule and
 * why). Reads /proc only; no pool state. */
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A chain of parents longer than this is a loop made by pid reuse while we walked: stop there. */
#define MAX_ANCESTORS 4096

int proc_stat_parse(const char *text, struct proc_stat *out)
{
	const char *s = strrchr(text, ')');
	int ppid, pgrp, sid;
	unsigned long long start = 0;
	char state;

	/* Fields resume after the last ')': state(3) ppid pgrp session tty_nr tpgid flags(9),
	 * seven counters (10-15 unsigned, 16-21 signed) and starttime(22). */
	if (!s || s[1] != ' ')
		return -EINVAL;
	if (sscanf(s + 2,
		   "%c %d %d %d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
		   "%*d %llu",
		   &state, &ppid, &pgrp, &sid, &start) < 4)
		return -EINVAL;
	if (ppid < 0 || sid < 0)
		return -EINVAL;
	out->state = state;
	out->ppid = ppid;
	out->sid = sid;
	out->start_time = start;
	return 0;
}

int proc_stat_read(pid_t pid, struct proc_stat *st)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd, r;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r;
	if (n == 0)
		return -ESRCH;
	buf[n] = '\0';
	if ((r = proc_stat_parse(buf, st)) < 0)
		return r;
	return st->state == 'Z' || st->state == 'X' ? -ESRCH : 0;
}

int session_anchor(pid_t pid, pid_t *anchor)
{
	struct proc_stat me = {0}, up = {0};
	pid_t cur = pid;
	int r;

	/* The common case reads one /proc file: the leader runs (the kernel keeps a session's id
	 * from being reused as a pid while the session exists, so a live process with that pid
	 * leading that session is the leader; a zombie leader is gone). */
	pid_t sid = getsid(pid);
	if (sid < 0)
		return -errno;
	if (sid > 0 && proc_stat_read(sid, &up) == 0 && up.sid == sid) {
		*anchor = sid;
		return 0;
	}
	if ((r = proc_stat_read(pid, &me)) < 0)
		return r;
	for (int i = 0; i < MAX_ANCESTORS && me.ppid > 1; i++) {
		if (proc_stat_read(me.ppid, &up) < 0 || up.sid != me.sid)
			break;
		cur = me.ppid;
		me = up;
	}
	*anchor = cur;
	return 0;
}
