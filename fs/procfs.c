/* procfs: the one reader of /proc (see procfs.h). */
#include "procfs.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
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

int file_scan(const char *path, int (*fn)(char *line, void *ctx), void *ctx)
{
	FILE *f = fopen(path, "re");
	char line[4096];
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (r == -ENOENT && fgets(line, sizeof(line), f)) {
		int found;

		line[strcspn(line, "\n")] = '\0';
		found = fn(line, ctx);
		if (found != 0)
			r = found;
	}
	if (ferror(f) && r == -ENOENT)
		r = -EIO;
	fclose(f);
	return r;
}

/* "/proc/PID/what" into path. */
static void proc_path(char *path, size_t len, pid_t pid, const char *what)
{
	snprintf(path, len, "/proc/%d/%s", (int)pid, what);
}

int proc_scan(pid_t pid, const char *what, int (*fn)(char *line, void *ctx), void *ctx)
{
	char path[64];
	int r;

	proc_path(path, sizeof(path), pid, what);
	r = file_scan(path, fn, ctx);
	return r == -ENOENT && access(path, F_OK) < 0 ? -ESRCH : r;
}

int proc_stat_any(pid_t pid, struct proc_stat *st)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd;

	proc_path(path, sizeof(path), pid, "stat");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n <= 0)
		return n < 0 ? (int)n : -ESRCH;
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
	struct proc_stat st = {0};
	int r = proc_stat_read(pid, &st);

	return r == 0 ? 1 : r == -ESRCH ? 0 : r;
}

/* The line of /proc/PID/status that `fmt` (one conversion) scans, into `out`. */
struct status_field {
	const char *fmt;
	void *out;
};

static int status_line(char *line, void *ctx)
{
	const struct status_field *f = ctx;

	return sscanf(line, f->fmt, f->out) == 1;
}

/* 0, -ENOENT if no such line, or -errno. */
static int status_field(pid_t pid, const char *fmt, void *out)
{
	struct status_field f = {fmt, out};
	int r = proc_scan(pid, "status", status_line, &f);

	return r > 0 ? 0 : r;
}

pid_t proc_tgid(pid_t tid)
{
	int tgid = 0;
	int r = status_field(tid, "Tgid: %d", &tgid);

	return r < 0 ? r : (pid_t)tgid;
}

int proc_cap_eff(pid_t pid, unsigned long long *caps)
{
	return status_field(pid, "CapEff: %llx", caps);
}

long proc_rss_kb(pid_t pid)
{
	long kb = 0;
	int r = status_field(pid, "VmRSS: %ld kB", &kb);

	return r < 0 ? r : kb;
}

/* The cgroup v2 line ("0::PATH") into buf. */
struct cgroup_line {
	char *buf;
	size_t len;
};

static int cgroup_line(char *line, void *ctx)
{
	const struct cgroup_line *c = ctx;

	if (strncmp(line, "0::", 3) != 0)
		return 0;
	return (size_t)snprintf(c->buf, c->len, "%s", line + 3) < c->len ? 1 : -ENAMETOOLONG;
}

int proc_cgroup(pid_t pid, char *buf, size_t len)
{
	struct cgroup_line c = {buf, len};
	int r = proc_scan(pid, "cgroup", cgroup_line, &c);

	return r > 0 ? 0 : r;
}

/* The descriptors of `pid` whose link reads `target`, or all of them if target is NULL: how many
 * (at most max), their numbers into fds unless it is NULL. */
static int fd_scan(pid_t pid, const char *target, int *fds, int max)
{
	char path[64], link[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int n = 0;

	proc_path(path, sizeof(path), pid, "fd");
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while (n < max && (e = readdir(d))) {
		ssize_t len;

		if (e->d_name[0] == '.')
			continue;
		if (target) {
			/* a descriptor closed meanwhile has no link left: not one of them */
			len = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
			if (len < 0)
				continue;
			link[len] = '\0';
			if (strcmp(link, target) != 0)
				continue;
		}
		if (fds)
			fds[n] = atoi(e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

int proc_fd_count(pid_t pid)
{
	return fd_scan(pid, NULL, NULL, INT_MAX);
}

int proc_find_fds(pid_t pid, const char *target, int *fds, int max)
{
	return fd_scan(pid, target, fds, max);
}

struct mount_dev_search {
	const char *mountpoint;
	dev_t dev;
	bool found;
};

void mountinfo_unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

static int mount_dev_line(char *line, void *ctx)
{
	struct mount_dev_search *m = ctx;
	const char *fstype = strstr(line, " - ");
	unsigned major, minor;
	char mp[4096];

	/* "ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE ..." */
	if (!fstype || strncmp(fstype + 3, "fuse", 4) != 0 ||
	    sscanf(line, "%*d %*d %u:%u %*s %4095s", &major, &minor, mp) != 3)
		return 0;
	mountinfo_unescape(mp);
	if (strcmp(mp, m->mountpoint) == 0) {
		m->dev = makedev(major, minor);
		m->found = true; /* later lines are mounts on top: go on */
	}
	return 0;
}

int mountinfo_fuse_dev(const char *path, const char *mountpoint, dev_t *dev)
{
	struct mount_dev_search m = {.mountpoint = mountpoint};
	int r = file_scan(path, mount_dev_line, &m);

	if (r != -ENOENT)
		return r < 0 ? r : -EIO;
	if (!m.found)
		return -ENOENT;
	*dev = m.dev;
	return 0;
}
