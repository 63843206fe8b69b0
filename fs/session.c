/* session: finding the process that stands for a caller's session (see session.h for the rule and
 * why). Reads /proc only (procfs.h); no pool state. */
#include "session.h"

#include <errno.h>
#include <unistd.h>

/* A chain of parents longer than this is a loop made by pid reuse while we walked: stop there. */
#define MAX_ANCESTORS 4096

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
