/* session: which process a `session` hold watches. Normally the session's leader; when the leader
 * has exited (Slurm's slurmstepd calls setsid() and then forks, so every job step's session is
 * leaderless), the caller's topmost ancestor that is still in the session stands in for it (for a
 * Slurm step: its slurmstepd). See docs/cluster.md, "Which scope ends with a job".
 * It also owns the daemon's one reader of /proc/PID/stat (proc_stat_read), which the hold
 * watchers and the backing store's sweep use too. */
#ifndef POOLFS_SESSION_H
#define POOLFS_SESSION_H

#include <sys/types.h>

/* The fields of /proc/PID/stat the daemon needs. */
struct proc_stat {
	char state; /* R, S, D, Z, X ... */
	pid_t ppid;
	pid_t sid;
	unsigned long long start_time; /* field 22, clock ticks after boot; 0 if the text ends
					 * before it. Tells a process from a later one with its pid. */
};

/* Parse the text of /proc/PID/stat (the command name may hold spaces and parentheses).
 * Returns 0, or -EINVAL if the text is not in that format. */
int proc_stat_parse(const char *text, struct proc_stat *out);

/* Read and parse /proc/PID/stat. 0; -ESRCH if the process is gone or a zombie (a zombie
 * has ended: only its parent has not reaped it yet); another negative errno if it cannot be
 * read or parsed (the process may still run). */
int proc_stat_read(pid_t pid, struct proc_stat *out);

/* The process a session hold taken by process `pid` should watch: the session leader if it is
 * running, else the topmost ancestor of `pid` in the same session (`pid` itself if its parent is
 * in another session). Returns 0 and sets *anchor, or -ESRCH if `pid` is gone. */
int session_anchor(pid_t pid, pid_t *anchor);

#endif
