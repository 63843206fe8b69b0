/* datapath_passthrough: the zero-copy data path (design section 3), libfuse >= 3.17, Linux >= 6.9.
 *
 * Each file's backing tmpfs file is registered once (one backing_id per inode, shared by its
 * opens) and the kernel sends read/write/mmap straight to it. RELEASE then comes at close() even
 * while mappings live, so after the last release the node is "maybe mapped" until proven free:
 *   - trigger: fanotify close events on the backing folder fire when the kernel's internal backing
 *     file goes, i.e. at the last munmap or process death (events from our own pid are ignored:
 *     our probes and fd closes never end a mapping);
 *   - proof: a write lease on an O_RDONLY fd is granted only when no other fd or mapping of the
 *     file exists anywhere (the lease is dropped at once; SIGIO is ignored by main.c).
 * On queue overflow every maybe-mapped node is probed again. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "datapath.h"
#include "log.h"
#include "watch.h"

struct passthrough_state {
	int fan_fd;
	int backstop_fd;      /* timerfd: re-probes maybe-mapped nodes while any exist */
	uint64_t backstop_ms; /* the interval it is armed with, 0 if disarmed */
	bool backstop_noted;  /* logged once that the backstop, not fanotify, found an end */
};

#define BACKSTOP_FIRST_MS 2
#define BACKSTOP_MAX_MS 1000

static void backstop_set(struct passthrough_state *st, uint64_t ms)
{
	struct itimerspec its = {.it_value = {.tv_sec = (time_t)(ms / 1000),
					      .tv_nsec = (long)(ms % 1000) * 1000000L}};

	if (timerfd_settime(st->backstop_fd, 0, &its, NULL) == 0)
		st->backstop_ms = ms;
}

/* fanotify is the trigger; this timer is the backstop. A probe that fails right after the last
 * release often fails only because the kernel has not yet dropped the closing process's own
 * backing file (it does so a moment after queueing RELEASE), and that close's event can reach
 * us before the node is marked maybe-mapped. So a failed probe is retried soon (2 ms), then
 * at growing intervals up to a second, as long as some node stays maybe-mapped. Lock held. */
static void backstop_arm(struct pool *p)
{
	struct passthrough_state *st = p->dp_state;

	if (!st)
		return;
	if (st->backstop_ms == 0 || st->backstop_ms > BACKSTOP_FIRST_MS)
		backstop_set(st, BACKSTOP_FIRST_MS);
}

static int passthrough_available(const struct pool *p, const char **why)
{
	(void)p;
	(void)why;
	return 0;
}

static int passthrough_init(struct pool *p, struct fuse_conn_info *conn)
{
	(void)p;
	if (!(conn->capable & FUSE_CAP_PASSTHROUGH))
		return -EOPNOTSUPP;
	fuse_set_feature_flag(conn, FUSE_CAP_PASSTHROUGH);
	/* Passthrough and the writeback cache exclude each other. */
	fuse_unset_feature_flag(conn, FUSE_CAP_WRITEBACK_CACHE);
	/* The backing tmpfs is not stacked: one level (us) on top of it. Without a depth > 0 the
	 * kernel silently turns passthrough off. */
	conn->max_backing_stack_depth = 1;
	return 0;
}

/* True if a mapping or fd of `n`'s backing file may still exist anywhere. Lock held. */
static bool probe_in_use(struct pool *p, struct node *n)
{
	int fd = backing_open_file(&p->backing, n->ino, O_RDONLY | O_NOATIME);
	bool busy;

	if (fd == -EPERM)
		fd = backing_open_file(&p->backing, n->ino, O_RDONLY);
	if (fd < 0)
		return fd != -ENOENT; /* gone already: certainly unused; other errors: assume used */
	if (fcntl(fd, F_SETLEASE, F_WRLCK) == 0) {
		fcntl(fd, F_SETLEASE, F_UNLCK);
		busy = false;
	} else {
		busy = errno == EAGAIN || errno == EBUSY;
		if (!busy)
			log_warn("lease probe on inode %" PRIu64 ": %m", n->ino);
	}
	close(fd);
	return busy;
}

/* Returns true if the node was maybe-mapped and is now proven free. */
static bool recheck_mapped(struct pool *p, struct node *n)
{
	if (!n || n->life.removed || !n->life.maybe_mapped || n->life.opens > 0)
		return false;
	if (probe_in_use(p, n)) {
		backstop_arm(p);
		return false;
	}
	n->life.maybe_mapped = false;
	pool_recheck(p, n);
	return true;
}

/* Probe every maybe-mapped node; returns how many were found free. */
static size_t recheck_all(struct pool *p)
{
	size_t freed = 0;

	for (size_t b = 0; b < p->ino_buckets; b++) {
		struct node *n = p->ino_table[b], *next;
		for (; n; n = next) {
			next = n->ino_next;
			freed += recheck_mapped(p, n);
		}
	}
	return freed;
}

static void backstop_fired(void *ctx, int fd)
{
	struct pool *p = ctx;
	struct passthrough_state *st;
	uint64_t ticks;

	if (read(fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		log_warn("passthrough backstop timer: %m");
	pool_lock(p);
	st = p->dp_state;
	{
		uint64_t interval = st->backstop_ms ? st->backstop_ms : BACKSTOP_FIRST_MS;
		size_t remaining = 0;

		st->backstop_ms = 0;
		/* recheck_all() re-arms at the first interval for nodes still busy; take over
		 * and back off instead, so a long-lived mapping costs one probe a second. */
		if (recheck_all(p) && interval >= BACKSTOP_MAX_MS && !st->backstop_noted) {
			st->backstop_noted = true;
			log_info("passthrough: the periodic re-check found a mapping gone that no "
				 "close event reported (logged once)");
		}
		for (size_t b = 0; b < p->ino_buckets; b++)
			for (struct node *n = p->ino_table[b]; n; n = n->ino_next)
				remaining += n->life.maybe_mapped && !n->life.removed;
		if (remaining)
			backstop_set(st, interval * 4 > BACKSTOP_MAX_MS ? BACKSTOP_MAX_MS : interval * 4);
		else if (st->backstop_ms)
			backstop_set(st, 0);
	}
	pool_unlock(p);
}

static void fanotify_fired(void *ctx, int fan_fd)
{
	struct pool *p = ctx;
	char buf[8192] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	uint64_t inos[256];
	size_t count = 0;
	bool overflow = false;
	ssize_t len;

	/* Collect first and close every event fd: an open event fd would itself fail the probe. */
	while ((len = read(fan_fd, buf, sizeof(buf))) > 0) {
		struct fanotify_event_metadata *m = (struct fanotify_event_metadata *)buf;
		for (; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
			if (m->mask & FAN_Q_OVERFLOW)
				overflow = true;
			if (m->fd < 0)
				continue;
			if (m->pid != p->daemon_pid && !overflow) {
				char link[64], target[4096];
				ssize_t tl;
				snprintf(link, sizeof(link), "/proc/self/fd/%d", m->fd);
				tl = readlink(link, target, sizeof(target) - 1);
				if (tl > 0) {
					const char *base;
					uint64_t ino;
					target[tl] = '\0';
					base = strrchr(target, '/');
					ino = backing_name_to_ino(base ? base + 1 : target);
					if (ino && count < sizeof(inos) / sizeof(inos[0]))
						inos[count++] = ino;
					else if (ino)
						overflow = true;
				}
			}
			close(m->fd);
		}
	}
	if (!count && !overflow)
		return;
	pool_lock(p);
	if (overflow)
		recheck_all(p);
	else
		for (size_t i = 0; i < count; i++)
			recheck_mapped(p, pool_node(p, inos[i]));
	pool_unlock(p);
}

static int passthrough_start(struct pool *p)
{
	struct passthrough_state *st = calloc(1, sizeof(*st));
	int r;

	if (!st)
		return -ENOMEM;
	st->backstop_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (st->backstop_fd < 0) {
		r = -errno;
		st->fan_fd = -1;
		goto fail;
	}
	st->fan_fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK,
				   O_RDONLY | O_LARGEFILE | O_CLOEXEC);
	if (st->fan_fd < 0) {
		r = -errno;
		log_error("fanotify_init: %s", strerror(-r));
		goto fail;
	}
	if (fanotify_mark(st->fan_fd, FAN_MARK_ADD,
			  FAN_CLOSE_WRITE | FAN_CLOSE_NOWRITE | FAN_EVENT_ON_CHILD, AT_FDCWD,
			  p->backing.path) < 0) {
		r = -errno;
		log_error("fanotify_mark %s: %s", p->backing.path, strerror(-r));
		goto fail;
	}
	r = watch_add(p->watch, st->fan_fd, fanotify_fired, p);
	if (r < 0)
		goto fail;
	r = watch_add(p->watch, st->backstop_fd, backstop_fired, p);
	if (r < 0)
		goto fail; /* watch_stop() at unmount drops the fanotify registration */
	p->dp_state = st;
	return 0;
fail:
	if (st->fan_fd >= 0)
		close(st->fan_fd);
	if (st->backstop_fd >= 0)
		close(st->backstop_fd);
	free(st);
	return r;
}

static void passthrough_stop(struct pool *p)
{
	struct passthrough_state *st = p->dp_state;

	/* Called after watch_stop(): no callback can run any more. */
	if (!st)
		return;
	close(st->fan_fd);
	close(st->backstop_fd);
	free(st);
	p->dp_state = NULL;
}

static int passthrough_open(struct pool *p, struct node *n, fuse_req_t req, int fd,
			    struct fuse_file_info *fi)
{
	(void)p;
	if (!n->backing_id) {
		int id = fuse_passthrough_open(req, fd);
		if (id <= 0) {
			log_error("registering the backing file of inode %" PRIu64 " failed (%d)", n->ino, id);
			return id < 0 ? id : -EIO;
		}
		n->backing_id = id;
	}
	fi->backing_id = n->backing_id;
	fi->keep_cache = 0;
	return 0;
}

/* FUSE_DEV_IOC_BACKING_CLOSE from <linux/fuse.h> >= 6.9 (bookworm's headers predate it). */
#ifndef FUSE_DEV_IOC_BACKING_CLOSE
#define FUSE_DEV_IOC_BACKING_CLOSE _IOW(229, 2, uint32_t)
#endif

/* Drop the kernel's registration of a backing file. fuse_passthrough_close() wants a request,
 * but the last release may come after a reply failed and its request was freed: the
 * registration belongs to the connection, so the session's device fd serves as well. */
static int backing_unregister(struct pool *p, int backing_id)
{
	uint32_t id = (uint32_t)backing_id;

	if (ioctl(fuse_session_fd(p->session), FUSE_DEV_IOC_BACKING_CLOSE, &id) < 0)
		return -errno;
	return 0;
}

static void passthrough_last_release(struct pool *p, struct node *n)
{
	if (n->backing_id) {
		int r = backing_unregister(p, n->backing_id);
		if (r < 0)
			log_warn("closing the backing registration of inode %" PRIu64 ": %s", n->ino,
				 strerror(-r));
		n->backing_id = 0;
	}
	/* Handles are gone, mappings may not be: prove it now, or wait for fanotify. */
	n->life.maybe_mapped = true;
	if (!probe_in_use(p, n))
		n->life.maybe_mapped = false;
	else
		backstop_arm(p);
}

const struct datapath datapath_passthrough = {
	.name = "passthrough",
	.available = passthrough_available,
	.init = passthrough_init,
	.start = passthrough_start,
	.stop = passthrough_stop,
	.open = passthrough_open,
	.last_release = passthrough_last_release,
};
