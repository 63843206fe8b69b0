/* memcg: charging allocations to the caller's memory cgroup (see memcg.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
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
	m->idle = NULL;
	m->lock_ready = false;
	r = -pthread_mutex_init(&m->lock, NULL);
	if (r < 0)
		return r;
	m->lock_ready = true;
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

/* ---- chargers ----------------------------------------------------------------------------- */

/* A request: fallocate(fd, mode, off, len), the fd passed along (SCM_RIGHTS); the answer is an
 * int, fallocate's errno or 0. */
struct charge_request {
	int mode;
	off_t off;
	off_t len;
};

struct memcg_charger {
	struct memcg_charger *next;
	pid_t pid;
	int sock;		/* the daemon's end of the socket pair */
	uint64_t idle_since_ms; /* when it answered last (on the idle list) */
	char cg[];
};

/* A charger's answer when it could not join its cgroup (fallocate's errnos are positive). */
#define JOIN_FAILED (-1)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A request as it crosses the socket: the request and room for the one descriptor with it. */
struct charge_message {
	struct msghdr msg;
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
};

/* Lay out `cm` around `req`, all of it zeroed (it crosses into another process). */
static void charge_message_init(struct charge_message *cm, struct charge_request *req)
{
	memset(cm, 0, sizeof(*cm));
	cm->iov = (struct iovec){.iov_base = req, .iov_len = sizeof(*req)};
	cm->msg.msg_iov = &cm->iov;
	cm->msg.msg_iovlen = 1;
	cm->msg.msg_control = cm->control.buf;
	cm->msg.msg_controllen = sizeof(cm->control.buf);
}

/* A charger's one request: 1 and the request, 0 at the end of the stream, -1 on a bad one. */
static int charger_receive(int sock, struct charge_request *req, int *fd)
{
	struct charge_message m;
	struct cmsghdr *cm;
	ssize_t n;

	charge_message_init(&m, req);
	do
		n = recvmsg(sock, &m.msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;
	cm = n == (ssize_t)sizeof(*req) ? CMSG_FIRSTHDR(&m.msg) : NULL;
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(fd, CMSG_DATA(cm), sizeof(int));
	return 1;
}

/* Close every descriptor but the three in keep (sorted here). */
static void close_all_but(int keep[3])
{
	unsigned from = 0;

	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (keep[j] < keep[i]) {
				int t = keep[i];
				keep[i] = keep[j];
				keep[j] = t;
			}
	for (int i = 0; i < 3; i++) {
		if ((unsigned)keep[i] > from)
			close_range(from, (unsigned)keep[i] - 1, 0);
		from = (unsigned)keep[i] + 1;
	}
	close_range(from, ~0u, 0);
}

/* The charger, in the child: nothing but system calls (the daemon has threads). For each request
 * it joins its cgroup (procs_fd), allocates, and goes back to the daemon's (home_fd) before it
 * answers: between requests it is in no job's cgroup, so it never keeps one populated (Slurm's
 * cgroup v1 plugin does not remove a step's cgroup that has a process in it). It keeps only
 * those three descriptors and serves until the daemon closes its end or none came for
 * MEMCG_IDLE_MS. */
static void charger_main(int sock, int procs_fd, int home_fd)
{
	int keep[3] = {sock, procs_fd, home_fd};
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
	/* Nothing else of the daemon's stays open here: not /dev/fuse (a charger must not keep a dead
	 * daemon's mount alive), not another charger's socket. */
	close_all_but(keep);
	for (;;) {
		struct pollfd pfd = {.fd = sock, .events = POLLIN};
		struct charge_request req;
		int fd = -1, err, r = poll(&pfd, 1, MEMCG_IDLE_MS);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			_exit(0); /* idle: end */
		r = charger_receive(sock, &req, &fd);
		if (r == 0)
			_exit(0);
		if (r < 0)
			_exit(EPROTO);
		if (write(procs_fd, "0", 1) != 1)
			err = JOIN_FAILED;
		else
			err = fallocate(fd, req.mode, req.off, req.len) < 0 ? errno : 0;
		close(fd);
		/* Home before the answer; one that cannot go home must not stay: it leaves. */
		r = err == JOIN_FAILED || write(home_fd, "0", 1) == 1;
		if (send(sock, &err, sizeof(err), MSG_NOSIGNAL) != (ssize_t)sizeof(err) || !r)
			_exit(0);
	}
}

/* A cgroup's file to move the charger by, opened: the fd, or -errno (-EPERM: not ours to use). */
static int open_mover(const char *path)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	return fd >= 0 ? fd : errno == EACCES ? -EPERM : -errno;
}

/* A new charger in `cg`, or NULL and *err: -errno (-EPERM: the cgroup cannot be joined). */
static struct memcg_charger *charger_start(const struct memcg *m, const char *cg, int *err)
{
	char procs[PATH_MAX * 2 + 16], home[PATH_MAX * 2 + 16];
	struct memcg_charger *c;
	int procs_fd, home_fd, sv[2], r;
	pid_t pid;

	/* The charger has one thread: on v1 it moves by `tasks`, which spares the kernel the wait
	 * for an RCU grace period that moving a process by `cgroup.procs` costs when no move came
	 * just before (0.05 ms against 5-8 ms here). v2 moves processes only. */
	const char *file = m->v1 ? "tasks" : "cgroup.procs";

	if ((size_t)snprintf(procs, sizeof(procs), "%s%s/%s", m->root, cg, file) >= sizeof(procs) ||
	    (size_t)snprintf(home, sizeof(home), "%s%s/%s", m->root, m->self, file) >=
		    sizeof(home)) {
		*err = -ENAMETOOLONG;
		return NULL;
	}
	c = malloc(sizeof(*c) + strlen(cg) + 1);
	if (!c) {
		*err = -ENOMEM;
		return NULL;
	}
	procs_fd = r = open_mover(procs);
	if (r < 0)
		goto fail;
	home_fd = r = open_mover(home);
	if (r < 0)
		goto fail_procs;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		r = -errno;
		goto fail_home;
	}
	pid = fork();
	if (pid == 0)
		charger_main(sv[1], procs_fd, home_fd);
	r = pid < 0 ? -errno : 0;
	close(sv[1]);
	if (r < 0) {
		close(sv[0]);
		goto fail_home;
	}
	close(home_fd);
	close(procs_fd);
	c->next = NULL;
	c->pid = pid;
	c->sock = sv[0];
	c->idle_since_ms = 0;
	memcpy(c->cg, cg, strlen(cg) + 1);
	return c;

fail_home:
	close(home_fd);
fail_procs:
	close(procs_fd);
fail:
	free(c);
	*err = r;
	return NULL;
}

/* End charger `c` (it leaves at the end of its stream, if it has not yet) and free it: what its
 * exit says of a request it did not answer. -EAGAIN: it left before reading it (idle, or it
 * could not go home after the last); -EDQUOT: it was killed (only its cgroup's OOM killer, or
 * the job's end, kills it while it serves); -EIO for anything else. */
static int charger_end(struct memcg_charger *c)
{
	int status = 0, r;

	close(c->sock);
	while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
		;
	free(c);
	if (WIFSIGNALED(status))
		return -EDQUOT;
	r = WEXITSTATUS(status);
	return r == 0 ? -EAGAIN : r == ENOMEM ? -EDQUOT : -EIO;
}

/* Ask `c` for the fallocate: 1 and *result (0 or -errno) if it answered, 0 if it is gone. */
static int charger_ask(struct memcg_charger *c, int fd, int mode, off_t off, off_t len, int *result)
{
	struct charge_request req;
	struct charge_message m;
	struct cmsghdr *cm;
	ssize_t n;
	int err;

	/* All of it, the padding after `mode` too: it crosses into another process. */
	memset(&req, 0, sizeof(req));
	req.mode = mode;
	req.off = off;
	req.len = len;
	charge_message_init(&m, &req);
	cm = CMSG_FIRSTHDR(&m.msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	do
		n = sendmsg(c->sock, &m.msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(req))
		return 0;
	do
		n = recv(c->sock, &err, sizeof(err), 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(err))
		return 0;
	/* ENOMEM: the charge itself failed (the cgroup's OOM killer off): the job's limit. */
	*result = err == JOIN_FAILED ? -EPERM : err == ENOMEM ? -EDQUOT : -err;
	return 1;
}

/* An idle charger of `cg`, taken off the list, or NULL. Every charger idle for half its time or
 * more comes off the list too, into *done: it leaves (or has left) by itself, and the caller
 * ends it (charger_end, outside the lock): a request is never sent to one about to leave. */
static struct memcg_charger *charger_take(struct memcg *m, const char *cg,
					  struct memcg_charger **done)
{
	struct memcg_charger *found = NULL, **pp, *c;
	uint64_t now = now_ms();

	pthread_mutex_lock(&m->lock);
	for (pp = &m->idle; (c = *pp);) {
		if (now - c->idle_since_ms >= MEMCG_IDLE_MS / 2) {
			*pp = c->next;
			c->next = *done;
			*done = c;
		} else if (!found && strcmp(c->cg, cg) == 0) {
			*pp = c->next;
			found = c;
		} else {
			pp = &c->next;
		}
	}
	pthread_mutex_unlock(&m->lock);
	return found;
}

static void charger_put(struct memcg *m, struct memcg_charger *c)
{
	c->idle_since_ms = now_ms();
	pthread_mutex_lock(&m->lock);
	c->next = m->idle;
	m->idle = c;
	pthread_mutex_unlock(&m->lock);
}

/* End idle chargers: nothing was asked of them. Killed rather than left to read the end of
 * their stream: one in a frozen cgroup (v2's freezer, a suspended Slurm job) would never read it,
 * and the daemon would wait for it, at unmount too; a fatal signal ends a frozen task. */
static void chargers_end(struct memcg_charger *list)
{
	while (list) {
		struct memcg_charger *next = list->next;
		kill(list->pid, SIGKILL);
		(void)charger_end(list);
		list = next;
	}
}

int memcg_fallocate(struct memcg *m, const char *cg, int fd, int mode, off_t off, off_t len)
{
	struct memcg_charger *c, *done = NULL;
	bool fresh = false;
	int r = 0;

	if (!cg || !m->root[0] || !m->lock_ready || strcmp(cg, m->self) == 0)
		return fallocate(fd, mode, off, len) < 0 ? -errno : 0;
	c = charger_take(m, cg, &done);
	chargers_end(done);
	for (;;) {
		bool answered;
		int end;

		if (!c) {
			c = charger_start(m, cg, &r);
			if (!c)
				return r;
			fresh = true;
		}
		answered = charger_ask(c, fd, mode, off, len, &r);
		if (answered && r != -EPERM) {
			charger_put(m, c);
			return r;
		}
		/* Not kept. It could not join (its cgroup may be gone, or made again under the same
		 * name after it opened the old one), or it is gone: one taken from the list may have
		 * left, or been killed, before the request came (it waits in the daemon's cgroup, the
		 * OOM killer's first pick there too). A fresh one then, which opens the name anew and
		 * says what the request meets; a fresh one does not leave before its first request. */
		if (answered)
			kill(c->pid, SIGKILL);
		end = charger_end(c);
		c = NULL;
		if (!answered)
			r = end == -EAGAIN ? -EIO : end;
		if (fresh)
			return r;
	}
}

void memcg_close(struct memcg *m)
{
	struct memcg_charger *list;

	if (!m->lock_ready)
		return;
	pthread_mutex_lock(&m->lock);
	list = m->idle;
	m->idle = NULL;
	pthread_mutex_unlock(&m->lock);
	chargers_end(list);
	pthread_mutex_destroy(&m->lock);
	m->lock_ready = false;
}
