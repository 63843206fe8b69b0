/* procfs: the one reader of /proc (see procfs.h). */
#include "procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* /proc/PID/`what` opened for reading: a stream, or NULL with errno (ESRCH for a gone pid). */
static FILE *proc_open(pid_t pid, const char *what)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	f = fopen(path, "re");
	if (!f && errno == ENOENT)
		errno = ESRCH;
	return f;
}

int proc_stat_any(pid_t pid, struct proc_stat *st)
{
	char buf[1024];
	FILE *f = proc_open(pid, "stat");
	size_t n;
	int r;

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	r = ferror(f) ? -EIO : 0;
	fclose(f);
	if (r < 0)
		return r;
	if (n == 0)
		return -ESRCH;
	buf[n] = '\0';
	return proc_stat_parse(buf, st);
}

int proc_stat_read(pid_t pid, struct proc_stat *st)
{
	int r = proc_stat_any(pid, st);

	if (r < 0)
		return r;
	return st->state == 'Z' || st->state == 'X' ? -ESRCH : 0;
}

int proc_running(pid_t pid)
{
	struct proc_stat st;
	int r = proc_stat_read(pid, &st);

	return r == 0 ? 1 : r == -ESRCH ? 0 : r;
}

/* The line "KEY: ..." of /proc/PID/status scanned with `fmt` (one conversion) into `out`: 0,
 * -ENOENT if no such line, or -errno. */
static int status_field(pid_t pid, const char *fmt, void *out)
{
	FILE *f = proc_open(pid, "status");
	char line[256];
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, fmt, out) == 1) {
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

pid_t proc_tgid(pid_t tid)
{
	int tgid;
	int r = status_field(tid, "Tgid: %d", &tgid);

	return r < 0 ? r : (pid_t)tgid;
}

int proc_cap_eff(pid_t pid, unsigned long long *caps)
{
	return status_field(pid, "CapEff: %llx", caps);
}

long proc_rss_kb(pid_t pid)
{
	long kb;
	int r = status_field(pid, "VmRSS: %ld kB", &kb);

	return r < 0 ? r : kb;
}

int proc_cgroup(pid_t pid, char *buf, size_t len)
{
	FILE *f = proc_open(pid, "cgroup");
	char line[4096];
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			r = (size_t)snprintf(buf, len, "%s", line + 3) < len ? 0 : -ENAMETOOLONG;
			break;
		}
	}
	fclose(f);
	return r;
}

int proc_fd_count(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}
