/* memcg: charging allocations to the caller's memory cgroup (see memcg.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memcg.h"
#include "procfs.h"

/* The memory hierarchy's mount point: a v1 "cgroup" mount whose super options name "memory",
 * else (no v1 memory) the cgroup2 mount. */
struct mount_find {
	struct memcg *m;
	char v2[PATH_MAX];
};

static bool has_option(const char *opts, const char *want)
{
	size_t n = strlen(want);

	for (const char *s = opts; s; s = strchr(s, ',')) {
		if (*s == ',')
			s++;
		if (strncmp(s, want, n) == 0 && (s[n] == ',' || s[n] == '\0'))
			return true;
	}
	return false;
}

static int mount_line(char *line, void *ctx)
{
	struct mount_find *f = ctx;
	char mnt[PATH_MAX], fstype[64], opts[512];
	const char *dash = strstr(line, " - ");

	/* id parent major:minor root mountpoint options ... - fstype source superoptions */
	if (!dash || sscanf(dash, " - %63s %*s %511s", fstype, opts) != 2 ||
	    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
		return 0;
	mountinfo_unescape(mnt);
	if (strcmp(fstype, "cgroup") == 0 && has_option(opts, "memory")) {
		snprintf(f->m->root, sizeof(f->m->root), "%s", mnt);
		f->m->v1 = true;
		return 1;
	}
	if (strcmp(fstype, "cgroup2") == 0 && !f->v2[0])
		snprintf(f->v2, sizeof(f->v2), "%s", mnt);
	return 0;
}

/* /proc/PID/cgroup: "ID:CONTROLLERS:PATH"; the v1 line whose controllers name memory, or the
 * v2 line "0::PATH". */
struct cgroup_find {
	bool v1;
	char *buf;
	size_t len;
};

static int cgroup_line(char *line, void *ctx)
{
	const struct cgroup_find *c = ctx;
	char *ctl = strchr(line, ':'), *path;

	if (!ctl)
		return 0;
	path = strchr(++ctl, ':');
	if (!path)
		return 0;
	*path++ = '\0';
	if (c->v1 ? !has_option(ctl, "memory") : (strncmp(line, "0:", 2) != 0 || *ctl))
		return 0;
	return (size_t)snprintf(c->buf, c->len, "%s", path) < c->len ? 1 : -ENAMETOOLONG;
}

/* The memory cgroup named in a cgroup file: `file` (a path), else /proc/`pid`/cgroup. */
static int find_cgroup(const struct memcg *m, const char *file, pid_t pid, char *buf, size_t len)
{
	struct cgroup_find c = {m->v1, buf, len};
	int r;

	if (!m->root[0])
		return -ENOENT;
	r = file ? file_scan(file, cgroup_line, &c) : proc_scan(pid, "cgroup", cgroup_line, &c);
	return r > 0 ? 0 : r;
}

int memcg_in_file(const struct memcg *m, const char *cgroup_file, char *buf, size_t len)
{
	return find_cgroup(m, cgroup_file, 0, buf, len);
}

int memcg_of(const struct memcg *m, pid_t pid, char *buf, size_t len)
{
	return find_cgroup(m, NULL, pid, buf, len);
}

int memcg_open(struct memcg *m, const char *mountinfo, const char *self_cgroup)
{
	struct mount_find f = {.m = m};
	int r;

	m->root[0] = m->self[0] = '\0';
	m->v1 = false;
	atomic_init(&m->warned, false);
	r = file_scan(mountinfo, mount_line, &f);
	if (r < 0 && r != -ENOENT)
		return r;
	if (!m->root[0] && f.v2[0])
		snprintf(m->root, sizeof(m->root), "%s", f.v2);
	if (!m->root[0])
		return -ENOENT;
	r = memcg_in_file(m, self_cgroup, m->self, sizeof(m->self));
	if (r < 0)
		m->root[0] = '\0';
	return r;
}

/* In the child: nothing but async-signal-safe calls (the daemon has threads). The exit code is
 * fallocate's errno, 0, or JOIN_FAILED. */
#define JOIN_FAILED 255

static void child_allocate(int procs_fd, int fd, int mode, off_t off, off_t len)
{
	int adj = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

	/* The OOM killer's first pick in the cgroup it joins: when the job is over its limit, the
	 * allocation made for it fails (EDQUOT to the caller) and none of the job's processes dies
	 * for it. Raising one's own score needs no privilege. */
	if (adj >= 0) {
		if (write(adj, "1000", 4) < 0) {
			/* then the daemon's own score stays: the pick is the kernel's */
		}
		close(adj);
	}
	if (write(procs_fd, "0", 1) != 1)
		_exit(JOIN_FAILED);
	if (fallocate(fd, mode, off, len) < 0)
		_exit(errno > 0 && errno < JOIN_FAILED ? errno : EIO);
	_exit(0);
}

int memcg_fallocate(const struct memcg *m, const char *cg, int fd, int mode, off_t off, off_t len)
{
	char procs[PATH_MAX * 2 + 16];
	int procs_fd, status, r;
	pid_t pid;

	if (!cg || !m->root[0] || strcmp(cg, m->self) == 0)
		return fallocate(fd, mode, off, len) < 0 ? -errno : 0;
	if ((size_t)snprintf(procs, sizeof(procs), "%s%s/cgroup.procs", m->root, cg) >=
	    sizeof(procs))
		return -ENAMETOOLONG;
	procs_fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (procs_fd < 0)
		return errno == EACCES ? -EPERM : -errno;
	pid = fork();
	if (pid == 0)
		child_allocate(procs_fd, fd, mode, off, len);
	r = pid < 0 ? -errno : 0;
	close(procs_fd);
	if (r < 0)
		return r;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	/* Killed: only the OOM killer of cg kills it (its pid is no one else's). That, or ENOMEM
	 * from the charge itself, means the caller's cgroup is at its limit: its quota. */
	if (WIFSIGNALED(status) || WEXITSTATUS(status) == ENOMEM)
		return -EDQUOT;
	if (WEXITSTATUS(status) == JOIN_FAILED)
		return -EPERM;
	return -WEXITSTATUS(status);
}
