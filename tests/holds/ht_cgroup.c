/* holds_support: test cgroups under the cgroup v2 mount: finding the mount and a process's group,
 * creating groups the test may move processes into, and removing them (with what is left in
 * them) at teardown. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "holdtest.h"

/* Write s to the control file path: 0 or -errno. */
static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int e;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	e = errno;
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -(n < 0 ? e : EIO);
}

int cg2_move(const char *dir, pid_t pid)
{
	char path[3 * PATH_MAX], v[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(v, sizeof(v), "%d", (int)pid);
	return write_str(path, v);
}

int cg2_populated(const char *dir)
{
	return cgroup2_populated(dir); /* as the daemon reads it */
}

/* Whether a throwaway child can move itself into dir: 0, or -errno with the reason in msg.
 * Writable is not enough (delegation rules), so it is tried for real. */
static int cg2_try_move(const char *dir, char *msg, size_t mlen)
{
	pid_t pid = tu_fork(SIGKILL);
	int r, status;

	if (pid == 0) {
		r = cg2_move(dir, 0);
		_exit(r < 0 ? -r : 0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		r = WIFEXITED(status) ? -WEXITSTATUS(status) : -EINTR;
		snprintf(msg, mlen, "cannot move a process into the cgroup %s: %s", dir,
			 strerror(-r));
		return r;
	}
	return 0;
}

int cg2_create(struct htest *t, char *dir, size_t dlen, char *msg, size_t mlen)
{
	static int seq;
	char root[PATH_MAX];
	int slot = -1, r;

	for (int i = 0; i < MAX_CGROUPS && slot < 0; i++)
		if (!t->cgroups[i][0])
			slot = i;
	if (slot < 0) {
		snprintf(msg, mlen, "too many test cgroups");
		return -ENOSPC;
	}
	r = cgroup2_find_mount("/proc/self/mountinfo", root, sizeof(root));
	if (r < 0) {
		snprintf(msg, mlen, "no cgroup2 mount in /proc/self/mountinfo");
		return r;
	}
	if ((size_t)snprintf(dir, dlen, "%s/poolfs-holds-%d-%d", root, (int)getpid(), ++seq) >=
	    dlen) {
		snprintf(msg, mlen, "the cgroup path under %s is too long", root);
		return -ENAMETOOLONG;
	}
	if (mkdir(dir, 0755) == -1) {
		r = -errno;
		snprintf(msg, mlen, "cannot create a cgroup under the cgroup2 mount %s: %s", root,
			 strerror(-r));
		return r;
	}
	snprintf(t->cgroups[slot], sizeof(t->cgroups[slot]), "%s", dir);
	return cg2_try_move(dir, msg, mlen);
}

/* SIGKILL every process listed in the cgroup dir (only ours can be there). */
static void cg2_kill_members(const char *dir)
{
	char path[PATH_MAX + 32], line[64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		pid_t pid = (pid_t)atoi(line);

		if (pid > 0) {
			fprintf(stderr, "# killing leftover %d in %s\n", (int)pid, dir);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, WNOHANG);
		}
	}
	fclose(f);
}

void cg2_remove_all(struct htest *t)
{
	for (int i = 0; i < MAX_CGROUPS; i++) {
		long long deadline = pool_now_ms() + 5000;

		if (!t->cgroups[i][0])
			continue;
		cg2_kill_members(t->cgroups[i]);
		/* A killed member leaves the group a little after SIGKILL: rmdir says EBUSY till then. */
		while (rmdir(t->cgroups[i]) == -1 && errno == EBUSY && pool_now_ms() < deadline)
			pool_sleep_ms(10);
		if (access(t->cgroups[i], F_OK) == 0)
			fprintf(stderr, "# cannot remove test cgroup %s: %s\n", t->cgroups[i],
				strerror(errno));
		t->cgroups[i][0] = '\0';
	}
}

int ht_cg_member_fn(void *arg)
{
	const struct ht_member *m = arg;

	link_far_end(m->l);
	CHILD_CHECK(cg2_move(m->cgroup, 0) == 0, 60);
	CHILD_CHECK(link_send(m->l, (int)getpid()) == 0, 61);
	CHILD_CHECK(link_wait_go(m->l) == 0, 62);
	return 0;
}
