/* pool_holds: the pool's side of holds — finding the process, session leader or cgroup a scope
 * names, watching it (pidfd, cgroup.events), ending holds when it goes, and the autohold rule
 * applied to a new entry (the rule itself: holds.c hold_autohold_kinds). A hold that ends
 * rechecks the entry through the lifetime layer below (docs/design.md "Layout"). The hold
 * records live in holds.c, their memory in pool_usage.c; the texts that show them, in
 * pool_texts.c. */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "cgroup2.h"
#include "log.h"
#include "poolfs_names.h"
#include "pool_internal.h"
#include "procfs.h"
#include "session.h"
#include "watch.h"

/* Is cgroup `cg` (relative to the cgroup2 mount) populated: 1, 0, or -errno (cgroup2.h). */
static int cgroup_populated(const struct pool *p, const char *cg)
{
	char dir[8192];

	if (snprintf(dir, sizeof(dir), "%s%s", p->cgroup2_root, cg) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	return cgroup2_populated(dir);
}

static void source_fired(void *ctx, int fd);

#define HOLD_POLL_MS 250

/* Start time of process `pid` (field 22 of /proc/PID/stat), 0 if it is gone or a zombie. */
static unsigned long long process_start_time(pid_t pid)
{
	struct proc_stat st;

	return proc_stat_read(pid, &st) == 0 ? st.start_time : 0;
}

static void hold_poll_fired(void *ctx, int fd);

/* Is the process a PID or SESSION source watches still running? */
static bool source_alive(const struct hold_source *s)
{
	struct pollfd pfd = {.fd = s->fd, .events = POLLIN};

	if (s->fd < 0)
		return process_start_time(s->pid) == s->start_time;
	/* A pidfd turns readable when its process exits. */
	return poll(&pfd, 1, 0) == 0;
}

/* An already watched source for (kind, pid) whose process still runs, or NULL. Never creates
 * one: a new source must be checked the slow way (a zombie leader's pidfd opens fine). */
static struct hold_source *source_find_live(struct pool *p, enum hold_kind kind, pid_t pid)
{
	for (struct hold_source *s = p->sources; s; s = s->next)
		if (!s->ended && s->kind == kind && s->pid == pid)
			return source_alive(s) ? s : NULL;
	return NULL;
}

/* Without pidfds (kernels before 5.3, or valgrind, which does not know the syscall) processes
 * are polled: every HOLD_POLL_MS while any such source exists. The start time guards against
 * a reused pid. Lock held. */
static int hold_poll_arm(struct pool *p)
{
	struct itimerspec its = {.it_value = {.tv_nsec = HOLD_POLL_MS * 1000000L}};
	int r;

	if (p->hold_poll_fd < 0) {
		p->hold_poll_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (p->hold_poll_fd < 0)
			return -errno;
		r = watch_add(p->watch, p->hold_poll_fd, hold_poll_fired, p);
		if (r < 0) {
			close(p->hold_poll_fd);
			p->hold_poll_fd = -1;
			return r;
		}
	}
	return timerfd_settime(p->hold_poll_fd, 0, &its, NULL) < 0 ? -errno : 0;
}

/* Close a source's watch fd and free it; it is in no list any more (or the list goes too). */
static void source_close(struct hold_source *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->cgroup);
	free(s);
}

static void source_free(struct pool *p, struct hold_source *s)
{
	for (struct hold_source **pp = &p->sources; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	source_close(s);
}

void pool_sources_free(struct pool *p)
{
	while (p->sources) {
		struct hold_source *s = p->sources;
		p->sources = s->next;
		source_close(s);
	}
}

/* Find or start watching the source for (kind, pid/cgroup). */
static int source_get(struct pool *p, enum hold_kind kind, pid_t pid, const char *cg,
		      struct hold_source **out)
{
	struct hold_source *s;
	int r;

	for (s = p->sources; s; s = s->next) {
		if (s->ended || s->kind != kind)
			continue;
		if (kind == HOLD_CGROUP ? strcmp(s->cgroup, cg) == 0 : s->pid == pid) {
			/* A source outlives its holds until the watch thread sees its end, so the
			 * process may be gone already: then a new hold on it is refused, as for any
			 * process that does not exist. The watch thread frees the source. */
			if (kind != HOLD_CGROUP && !source_alive(s)) {
				s->ended = true;
				return -ESRCH;
			}
			*out = s;
			return 0;
		}
	}
	s = pool_alloc(p, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->kind = kind;
	s->pid = pid;
	s->fd = -1;
	if (kind == HOLD_CGROUP) {
		char path[8192];
		s->unchecked = true;
		s->cgroup = pool_strdup(p, cg);
		s->fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
		if (!s->cgroup || s->fd < 0) {
			r = s->cgroup ? -errno : -ENOMEM;
			goto fail;
		}
		snprintf(path, sizeof(path), "%s%s/cgroup.events", p->cgroup2_root, cg);
		if (inotify_add_watch(s->fd, path, IN_MODIFY) < 0) {
			r = -errno;
			goto fail;
		}
	} else {
		s->fd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (s->fd < 0 && errno == ENOSYS) {
			s->start_time = process_start_time(pid);
			if (!s->start_time) {
				r = -ESRCH;
				goto fail;
			}
		} else if (s->fd < 0) {
			r = -errno;
			goto fail;
		}
	}
	s->pool = p;
	r = s->fd >= 0 ? watch_add(p->watch, s->fd, source_fired, s) : hold_poll_arm(p);
	if (r < 0)
		goto fail;
	s->next = p->sources;
	p->sources = s;
	*out = s;
	return 0;
fail:
	source_close(s);
	return r;
}

void pool_source_ended(struct pool *p, struct hold_source *src)
{
	struct hold *h = src->holds, *next;

	/* Take the whole list off the source first: each hold then only leaves its node. */
	src->ended = true;
	src->holds = NULL;
	for (; h; h = next) {
		struct node *n = h->node;
		next = h->src_next;
		h->src = NULL;
		pool_hold_free(p, n, h);
		/* Nodes are only freed in pool_commit(), after the rule ran on the marked ones. */
		pool_mark_subtree(p, n);
	}
}

static void source_fired(void *arg, int fd)
{
	struct hold_source *s = arg;
	struct pool *p = s->pool;
	bool ended = true;

	pool_lock(p);
	if (s->kind == HOLD_CGROUP) {
		char ev[4096];
		while (read(fd, ev, sizeof(ev)) > 0)
			;
		/* inotify only says "changed": the file says whether the group is empty. */
		ended = cgroup_populated(p, s->cgroup) <= 0;
	}
	if (ended) {
		pool_source_ended(p, s);
		watch_del(p->watch, fd);
		source_free(p, s);
	}
	pool_commit(p);
}

static void hold_poll_fired(void *ctx, int fd)
{
	struct pool *p = ctx;
	struct hold_source *s, *next;
	uint64_t ticks;
	bool polled = false;

	if (read(fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		log_warn("hold poll timer: %m");
	pool_lock(p);
	for (s = p->sources; s; s = next) {
		next = s->next;
		if (s->fd >= 0 || s->kind == HOLD_CGROUP)
			continue;
		if (process_start_time(s->pid) == s->start_time) {
			polled = true;
			continue;
		}
		pool_source_ended(p, s);
		source_free(p, s);
	}
	if (polled && hold_poll_arm(p) < 0)
		log_error("cannot re-arm the hold poll timer: process holds will not end");
	pool_commit(p);
}

static int take_hold(struct pool *p, struct node *n, uid_t uid, const struct hold_caller *who,
		     const struct hold_request *req);

/* Which source a session hold taken by process `pid` watches: the leader, or the caller's topmost
 * ancestor in a leaderless session (a Slurm step's slurmstepd; docs/cluster.md). If that is the
 * caller itself, or the caller is gone, the caller's own process is the best lifetime left.
 * /proc only: no lock needed. */
static int session_anchor_of(pid_t pid, enum hold_kind *kind, pid_t *anchor)
{
	int r = session_anchor(pid, anchor);

	if (r == -ESRCH || (r == 0 && *anchor == pid && getsid(pid) != pid)) {
		*kind = HOLD_PID;
		*anchor = pid;
		return 0;
	}
	*kind = HOLD_SESSION;
	return r;
}

/* The source for session_anchor_of's answer; if the anchor just exited, the caller's process. */
static int session_source(struct pool *p, enum hold_kind kind, pid_t anchor, pid_t pid,
			  struct hold_source **src)
{
	int r = source_get(p, kind == HOLD_SESSION ? HOLD_SESSION : HOLD_PID, anchor, NULL, src);

	if (r == -ESRCH && kind == HOLD_SESSION)
		r = source_get(p, HOLD_PID, pid, NULL, src);
	return r;
}

void pool_hold_caller(const struct pool *p, enum hold_kind kind, pid_t tid, struct hold_caller *c)
{
	memset(c, 0, offsetof(struct hold_caller, cgroup));
	c->tid = tid;
	c->anchor_kind = HOLD_PIN;
	c->cgroup_r = -ENOENT;
	c->cgroup[0] = '\0';
	switch (kind) {
	case HOLD_PID:
		c->tgid = proc_tgid(tid);
		break;
	case HOLD_SESSION:
		/* getsid() takes a thread id too. A session whose leader runs needs nothing from
		 * /proc: the lock finds the leader watched already (source_find_live), except at
		 * the session's first hold. A leaderless session (every Slurm step's) needs the
		 * walk up its process tree at every hold: done here, outside the lock. */
		c->sid = getsid(tid);
		if (c->sid > 0 && getsid(c->sid) == c->sid)
			break;
		c->tgid = proc_tgid(tid);
		if (c->tgid > 0 && session_anchor_of(c->tgid, &c->anchor_kind, &c->anchor) < 0)
			c->anchor_kind = HOLD_PIN;
		break;
	case HOLD_CGROUP:
		c->tgid = proc_tgid(tid);
		if (!p->cgroup2_root[0])
			c->cgroup_r = -EOPNOTSUPP;
		else if (c->tgid <= 0)
			c->cgroup_r = -ESRCH;
		else
			c->cgroup_r = proc_cgroup(c->tgid, c->cgroup, sizeof(c->cgroup));
		break;
	case HOLD_PIN:
		break;
	}
}

int pool_hold(struct pool *p, struct node *n, uid_t uid, const struct hold_caller *who,
	      const struct hold_request *req)
{
	int r;

	if (!p->watch && req->kind != HOLD_PIN)
		return -EOPNOTSUPP;
	/* A hold keeps an entry in the tree; one with no name (unlinked, or removed and still
	 * reachable through the kernel) is in none (docs/design.md "Holds"). */
	if (!n->life.linked && n != p->root)
		return -ENOENT;
	if (n->life.holds >= POOLFS_HOLDS_PER_ENTRY_MAX)
		return -ENOSPC;
	r = pool_hold_charge(p, uid);
	if (r < 0)
		return r;
	r = take_hold(p, n, uid, who, req);
	if (r < 0)
		pool_hold_refund(p, uid);
	return r;
}

/* The caller's process: as pool_hold_caller() found it, else (not looked up) from /proc now. */
static pid_t caller_tgid(const struct hold_caller *who)
{
	return who->tgid ? who->tgid : proc_tgid(who->tid);
}

/* The source of a session hold (lock held). */
static int session_hold_source(struct pool *p, const struct hold_caller *who,
			       struct hold_source **src)
{
	enum hold_kind kind = who->anchor_kind;
	pid_t anchor = who->anchor, pid;
	int r;

	if (kind == HOLD_PIN) {
		/* Not walked outside the lock: the leader ran then. The common case (every create
		 * under the default autohold) finds it watched already and costs one poll(). */
		pid_t sid = who->sid ? who->sid : getsid(who->tid);
		*src = sid > 0 ? source_find_live(p, HOLD_SESSION, sid) : NULL;
		if (*src)
			return 0;
		pid = caller_tgid(who);
		if (pid <= 0)
			return -ESRCH;
		r = session_anchor_of(pid, &kind, &anchor);
		if (r < 0)
			return r;
	}
	pid = caller_tgid(who);
	return session_source(p, kind, anchor, pid > 0 ? pid : anchor, src);
}

/* The source of a cgroup hold (lock held). */
static int cgroup_hold_source(struct pool *p, const struct hold_caller *who,
			      struct hold_source **src)
{
	char cg[sizeof(who->cgroup)];
	const char *path = who->cgroup;
	int r = who->cgroup_r;

	if (!p->cgroup2_root[0])
		return -EOPNOTSUPP;
	if (!who->tgid) { /* not looked up outside the lock */
		pid_t pid = proc_tgid(who->tid);
		if (pid <= 0)
			return -ESRCH;
		r = proc_cgroup(pid, cg, sizeof(cg));
		path = cg;
	}
	if (r < 0)
		return r;
	/* The root group never empties and has no cgroup.events. */
	if (strcmp(path, "/") == 0)
		return -EOPNOTSUPP;
	return source_get(p, HOLD_CGROUP, 0, path, src);
}

/* pool_hold() once the hold is paid for: find and watch its source, link the record. */
static int take_hold(struct pool *p, struct node *n, uid_t uid, const struct hold_caller *who,
		     const struct hold_request *req)
{
	struct hold_source *src = NULL;
	struct hold *h;
	pid_t pid;
	int r = 0;

	switch (req->kind) {
	case HOLD_PIN:
		break;
	case HOLD_PID:
		pid = req->pid ? req->pid : caller_tgid(who);
		r = pid > 0 ? source_get(p, HOLD_PID, pid, NULL, &src) : -ESRCH;
		break;
	case HOLD_SESSION:
		r = session_hold_source(p, who, &src);
		break;
	case HOLD_CGROUP:
		r = cgroup_hold_source(p, who, &src);
		break;
	default:
		return -EINVAL;
	}
	if (r < 0)
		return r;
	h = pool_alloc(p, sizeof(*h));
	if (!h)
		return -ENOMEM; /* a new source without holds goes when its process or group ends */
	h->node = n;
	h->uid = uid;
	h->src = src;
	hold_link(&n->holds, h);
	if (n->life.holds++ == 0)
		p->held++;
	if (node_is_dir(n))
		n->life.armed = true;
	/* A cgroup may have emptied between reading /proc and arming inotify: a new source's
	 * first hold looks once (a source watched before reports its end by itself). */
	if (src && src->kind == HOLD_CGROUP && src->unchecked) {
		src->unchecked = false;
		if (cgroup_populated(p, src->cgroup) == 0)
			pool_source_ended(p, src);
	}
	return 0;
}

int pool_release_holds(struct pool *p, struct node *n, uid_t uid)
{
	struct hold *h = n->holds, *next;
	int dropped = 0;

	for (; h; h = next) {
		next = h->node_next;
		if (h->uid != uid && !(uid == 0 && p->policy.root_exempt))
			continue;
		pool_hold_free(p, n, h);
		dropped++;
	}
	if (!dropped)
		return -ENODATA;
	pool_mark_subtree(p, n);
	return 0;
}

void pool_autohold_caller(const struct pool *p, pid_t tid, struct hold_caller *who)
{
	enum hold_kind kinds[2];

	if (hold_autohold_kinds(p->opts.autohold, kinds) == 0)
		kinds[0] = HOLD_PIN; /* nothing to look up */
	pool_hold_caller(p, kinds[0], tid, who);
}

void pool_autohold(struct pool *p, struct node *n, uid_t uid, const struct hold_caller *who)
{
	enum hold_kind kinds[2];
	size_t nkinds = hold_autohold_kinds(p->opts.autohold, kinds);
	int r = 0;

	for (size_t i = 0; i < nkinds; i++) {
		r = pool_hold(p, n, uid, who, &(struct hold_request){.kind = kinds[i]});
		if (r == 0)
			return;
	}
	if (nkinds)
		log_warn("autohold for inode %" PRIu64 ": %s", n->ino, strerror(-r));
}
