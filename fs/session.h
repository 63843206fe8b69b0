/* session: which process a `session` hold watches. Normally the session's leader; when the leader
 * has exited (Slurm's slurmstepd calls setsid() and then forks, so every job step's session is
 * leaderless), the caller's topmost ancestor that is still in the session stands in for it (for a
 * Slurm step: its slurmstepd). See docs/cluster.md, "Which scope ends with a job".
 * It reads /proc through procfs.h. */
#ifndef POOLFS_SESSION_H
#define POOLFS_SESSION_H

#include <sys/types.h>

#include "procfs.h"

/* The process a session hold taken by process `pid` should watch: the session leader if it is
 * running, else the topmost ancestor of `pid` in the same session (`pid` itself if its parent is
 * in another session). Returns 0 and sets *anchor, or -ESRCH if `pid` is gone. */
int session_anchor(pid_t pid, pid_t *anchor);

#endif
