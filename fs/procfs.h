/* procfs: the one reader of /proc/PID files, for the daemon and the tests alike (the tests link
 * this object). Pure functions of a pid: each reads one file and returns the fields asked, or a
 * negative errno (-ESRCH: no such process). session.c and cgroup2.c build on it; nothing else
 * parses /proc. Needs no FUSE and no pool. */
#ifndef POOLFS_PROCFS_H
#define POOLFS_PROCFS_H

#include <stddef.h>
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
/* The same for any process, a zombie too (its state says so). */
int proc_stat_any(pid_t pid, struct proc_stat *out);
/* 1 if `pid` runs (not gone, not a zombie), 0 if not, or another negative errno. */
int proc_running(pid_t pid);

/* The thread group (process) of thread `tid`, from its status: the pid, or -errno. */
pid_t proc_tgid(pid_t tid);
/* The effective capabilities of `pid` (CapEff in its status) into *caps: 0 or -errno. */
int proc_cap_eff(pid_t pid, unsigned long long *caps);
/* The resident set of `pid` (VmRSS in its status) in KiB, or -errno. */
long proc_rss_kb(pid_t pid);

/* The cgroup v2 path of `pid` (the "0::" line of /proc/PID/cgroup, relative to the cgroup2
 * mount) into buf: 0, -ENOENT (no v2 line), -ENAMETOOLONG, or -errno. */
int proc_cgroup(pid_t pid, char *buf, size_t len);

/* Each line of the text file `path` (up to 4095 bytes of it, without its newline) to
 * fn(line, ctx) until fn returns other than 0: that value; -ENOENT if no line did; -errno if the
 * file cannot be read. proc_scan does the same for /proc/PID/`what` (-ESRCH: no such pid). */
int file_scan(const char *path, int (*fn)(char *line, void *ctx), void *ctx);
int proc_scan(pid_t pid, const char *what, int (*fn)(char *line, void *ctx), void *ctx);

/* How many descriptors `pid` has open, or -errno. */
int proc_fd_count(pid_t pid);
/* The descriptors of `pid` whose /proc/PID/fd link reads exactly `target` (such as
 * "anon_inode:[fanotify]"), their numbers into fds[0..max): how many (at most max), -ESRCH if
 * no such process, or -errno. The tests find the daemon's io_uring and fanotify instances so. */
int proc_find_fds(pid_t pid, const char *target, int *fds, int max);

/* mountinfo writes a space, tab, newline and backslash in a path as \040, \011, \012 and \134:
 * undo that in place (cgroup2.c and mountinfo_fuse_dev). */
void mountinfo_unescape(char *s);
/* The device of the FUSE mount on `mountpoint` (an absolute path) in the mountinfo file `path`
 * (/proc/self/mountinfo: this mount namespace), the topmost if several: nothing is asked of the
 * file system, so it works whatever state its daemon is in. 0 with *dev, -ENOENT if no FUSE
 * mount is there, or -errno. */
int mountinfo_fuse_dev(const char *path, const char *mountpoint, dev_t *dev);

#endif
