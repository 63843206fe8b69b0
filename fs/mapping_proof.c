/* mapping_proof: on the passthrough path, proving that a file's last mapping is gone
 * (docs/design.md "Last-mapping detection"). RELEASE comes at close() even while mappings live,
 * so after the last one the node is "maybe mapped" until proven free:
 *   - trigger: a fanotify close event fires when the kernel's internal backing file goes, i.e.
 *     at the last munmap or process death (events from our own pid are ignored: our probes and
 *     fd closes never end a mapping). Only a backing file still in use at its last RELEASE gets
 *     a mark, removed once it is proven free: a file that was never mapped, most of them, costs
 *     no event at all (if marks run out, the whole store is marked instead). The group reports
 *     names (FAN_REPORT_DFID_NAME) instead of opening an fd per event: nothing of ours is open
 *     on the file when we probe;
 *   - proof: a write lease on an O_RDONLY fd is granted only when no other fd or mapping of the
 *     file exists anywhere (the lease is dropped at once; SIGIO is ignored by main.c);
 *   - the race: the kernel queues the close event (and RELEASE) a moment before it drops the
 *     file's open count, so a probe right after either may still fail. Such a node is probed
 *     again within microseconds to a few milliseconds (the "soon" list);
 *   - the backstop, for an end no event may report: a node still busy after the soon list that
 *     came there by its close event (its closer's exit running late), or whose file has no mark
 *     or got it at this RELEASE, or every waiting node after a queue overflow, goes on the doubt
 *     list, re-probed 2 ms on, backing off to 1 s, for about 1.7 s. A node busy after a RELEASE
 *     with a mark from before waits for its munmap's event: a long-lived mapping costs no probe
 *     after its first 1.7 s. Once a minute the sweep re-probes every waiting node, for an event
 *     lost in a way no known case explains.
 * The nodes that wait for the proof are the front part of the pool's `unseen` set, so the sweep
 * reaches them without walking the table, and the watch thread probes outside the lock
 * (docs/design.md "Work that grows with the pool"). Its state lives in p->dp_state. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "fault.h"
#include "log.h"
#include "mapping_proof.h"
#include "proof_schedule.h"
#include "watch.h"

/* Close events handled per batch; more in one read count as a queue overflow. */
#define EVENT_BATCH 256

#define CLOSE_EVENTS (FAN_CLOSE_WRITE | FAN_CLOSE_NOWRITE)

struct passthrough_state {
	int fan_fd;
	atomic_bool store_marked; /* a file could not get a mark: the whole store has one */
	/* timerfd (absolute CLOCK_MONOTONIC times): the backstop, when `sched` says */
	int backstop_fd;
	struct proof_schedule sched; /* the doubt list and the sweep (keys: inode numbers) */
	bool sweep_noted;	     /* logged once that the sweep, not an event, found an end */
	int soon_fd;	       /* timerfd: re-probes the nodes of `soon` after a failed probe */
	struct soon_list soon; /* keys: inode numbers */
	uint64_t soon_due_us;  /* when soon_fd fires (CLOCK_MONOTONIC), 0 if disarmed */
};

/* Delays of the re-probes after a probe that failed right after a close event or RELEASE: the
 * open count drops microseconds after the event, so most nodes are free at the first step. */
static const long soon_us[PROOF_SOON_STEPS] = {50, 200, 1000, 3000, 8000};

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Arm the backstop timer for what `sched` says is due first (nothing: disarmed). Lock held. */
static void backstop_update(struct passthrough_state *st)
{
	uint64_t due = proof_schedule_next(&st->sched);
	struct itimerspec its = {{0, 0}, {0, 0}};

	its.it_value.tv_sec = (time_t)(due / 1000000u);
	its.it_value.tv_nsec = (long)(due % 1000000u) * 1000L;
	if (timerfd_settime(st->backstop_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		log_warn("passthrough: arming the backstop timer: %m");
}

/* A node waits for the proof: have the sweep come by (proof_schedule_sweep). Lock held. */
static void sweep_arm(struct passthrough_state *st)
{
	if (st->sched.sweep_due)
		return;
	proof_schedule_sweep(&st->sched, now_us());
	backstop_update(st);
}

/* Put `n`, which waits for the proof, on the doubt list: no event may tell when its last use
 * ends. Its trigger was a close event whose closer still held the file through the soon
 * re-probes (an exit running late on a busy machine), or its file has no mark that would report
 * its last close, or its mark was made by this RELEASE (a close between the first probe and the
 * mark went unreported, and the open count may drop only after the second), or close events
 * were lost (a queue overflow). A node busy after a RELEASE with a mark from before is not
 * doubtful: its last munmap's event will come. A doubtful node costs PROOF_DOUBT_ROUNDS probes
 * once, in under 2 s; re-probing every long-lived mapping for as long as it lives would cost
 * work that grows with them (docs/design.md "Last-mapping detection"). Its rounds:
 * proof_schedule.h. Lock held. */
static void doubt_add(struct pool *p, struct node *n, unsigned rounds)
{
	struct passthrough_state *st = p->dp_state;
	struct proof_schedule *s = st ? &st->sched : NULL;
	struct doubt_entry *room;

	if (!s || !proof_waiting(n) || n->proof_doubt || rounds >= PROOF_DOUBT_ROUNDS)
		return;
	room = array_room(s->doubt, &s->doubt_cap, s->ndoubt, 64);
	if (!room) {
		log_warn("passthrough: no memory to re-probe inode %" PRIu64 "; the sweep will",
			 n->ino);
		return;
	}
	s->doubt = room;
	n->proof_doubt = proof_schedule_doubt(s, n->ino, rounds, now_us());
	backstop_update(st);
}

/* True if a mapping or fd of backing file `ino` (owned by `uid`, BACKING_ANY_UID if unknown) may
 * still exist anywhere. Needs no lock: it only reads the backing store, and its answer counts only
 * under the lock (see release_commit). */
bool proof_probe(struct pool *p, uid_t uid, uint64_t ino)
{
	int fd = backing_open_file(&p->backing, uid, ino, O_RDONLY | O_NOATIME);
	bool busy;

	atomic_fetch_add_explicit(&p->stats.proof_probes, 1, memory_order_relaxed);

	if (fd == -EPERM)
		fd = backing_open_file(&p->backing, uid, ino, O_RDONLY);
	if (fd < 0)
		/* gone already: certainly unused; other errors: assume used */
		return fd != -ENOENT;
	if (fcntl(fd, F_SETLEASE, F_WRLCK) == 0) {
		fcntl(fd, F_SETLEASE, F_UNLCK);
		busy = false;
	} else {
		busy = errno == EAGAIN || errno == EBUSY;
		if (!busy)
			log_warn("lease probe on inode %" PRIu64 ": %m", ino);
	}
	close(fd);
	return busy;
}

/* The fallback when a backing file cannot get a mark of its own (marks are a bounded kernel
 * resource where FAN_UNLIMITED_MARKS was refused): close events of the whole store. */
static void watch_store(struct pool *p)
{
	struct passthrough_state *st = p->dp_state;

	if (atomic_exchange(&st->store_marked, true))
		return;
	if (backing_fanotify_mark_stores(&p->backing, st->fan_fd, FAN_MARK_ADD,
					 CLOSE_EVENTS | FAN_EVENT_ON_CHILD) < 0)
		log_error("fanotify_mark on the backing store: %m; a mapping's end is found by the "
			  "periodic re-check only");
	else
		log_info(
			"passthrough: close events of every backing file are proof_waiting from now on");
}

/* Have the last close of the backing file of `ino` reported. True if it got a mark of its own,
 * to be removed once it is proven free (proof_unwatch_file). Needs no lock. */
bool proof_watch_file(struct pool *p, uid_t uid, uint64_t ino)
{
	struct passthrough_state *st = p->dp_state;
	int r;

	if (!st || atomic_load(&st->store_marked))
		return false;
	r = fault_fire(&p->fault, FAULT_MARK)
		    ? -ENOSPC
		    : backing_fanotify_mark(&p->backing, st->fan_fd, FAN_MARK_ADD, CLOSE_EVENTS,
					    uid, ino);
	if (r == 0)
		return true;
	if (r != -ENOENT) {
		log_warn("fanotify_mark on the backing file of inode %" PRIu64 ": %s", ino,
			 strerror(-r));
		watch_store(p);
	}
	return false;
}

/* Drop the mark of a backing file proven free: its later closes are nobody's business. Lock
 * held (a system call, but only for files that were still in use at their last RELEASE). */
void proof_unwatch_file(struct pool *p, struct node *n)
{
	struct passthrough_state *st = p->dp_state;
	int r;

	if (!n->close_watched || !st)
		return;
	n->close_watched = false;
	r = backing_fanotify_mark(&p->backing, st->fan_fd, FAN_MARK_REMOVE, CLOSE_EVENTS, n->uid,
				  n->ino);
	if (r < 0 && r != -ENOENT)
		log_warn("removing the fanotify mark of inode %" PRIu64 ": %s", n->ino,
			 strerror(-r));
}

/* `n` was proven free of mappings (unmapped: by a probe or close event after its last handle,
 * so that its last unmap ended its use): hand it back to the pool (which may free it at the
 * commit that ends the section). Lock held. */
void proof_set_free(struct pool *p, struct node *n, bool unmapped)
{
	if (n->life.maybe_mapped) {
		poolstats_gauge(&p->stats.maybe_mapped, -1);
		if (unmapped)
			pool_handle_unmapped(n);
	}
	n->life.maybe_mapped = false;
	n->may_map = false;
	proof_unwatch_file(p, n);
	pool_mark(p, n);
}

/* Whether `n` waits for the proof that its last mapping is gone. Lock held. */
bool proof_waiting(const struct node *n)
{
	return n && !n->life.removed && n->life.maybe_mapped && n->life.opens == 0;
}

/* Probe a proof_waiting node; true if it was proven free and handed back to the pool (which may have
 * freed it: do not touch `n` then). Lock held. */
static bool try_free(struct pool *p, struct node *n)
{
	if (!proof_waiting(n) || proof_probe(p, n->uid, n->ino))
		return false;
	proof_set_free(p, n, true);
	return true;
}

static void soon_set(struct passthrough_state *st, long us)
{
	struct itimerspec its = {
		.it_value = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000L}};

	if (timerfd_settime(st->soon_fd, 0, &its, NULL) < 0)
		log_warn("passthrough: arming the re-probe timer: %m");
	else
		st->soon_due_us = now_us() + (uint64_t)us;
}

/* Arm the re-probe timer `us` from now unless it fires sooner already: one timerfd_settime per
 * burst of releases, not one per file. Lock held. */
static void soon_arm(struct passthrough_state *st, long us)
{
	if (st->soon_due_us && st->soon_due_us <= now_us() + (uint64_t)us)
		return;
	soon_set(st, us);
}

/* A probe of `ino` failed right after its close event or RELEASE: probe it again soon, from the
 * first step (a later event restarts the sequence). If still busy after the last step, a
 * doubtful node (after its close event, or whose mark this RELEASE made, or with no mark that
 * would report its last close: doubt_add) goes to the doubt list; another waits for its mark's
 * event. With the soon list full, a doubtful node goes to the doubt list at once. Lock held. */
void proof_soon_add(struct pool *p, uint64_t ino, bool doubtful)
{
	struct passthrough_state *st = p->dp_state;
	struct node *n = pool_node(p, ino);

	if (!st || !n)
		return;
	doubtful |= !n->close_watched && !atomic_load(&st->store_marked);
	sweep_arm(st);
	if (soon_list_add(&st->soon, ino, doubtful))
		soon_arm(st, soon_us[0]);
	else if (doubtful)
		doubt_add(p, n, 0);
}

/* How probe_events treats a node still busy: */
enum busy_then {
	BUSY_SOON,  /* after its close event: the soon list, doubtful */
	BUSY_DOUBT, /* on the doubt list (its next round), or after an overflow: there, round 0 */
	BUSY_LEAVE, /* the sweep: a mapping that lives on; its event will tell */
	BUSY_TELL,  /* the soon list's round: marked in `told`, for the caller to put back */
};

/* Probe every node that waits for the proof, under the lock (a full pool: the caller waits for
 * the answer); returns how many were found free. Those are the front part of `unseen`, which a
 * proven node leaves only at the commit, so the places do not move under the loop. A node still
 * busy keeps whatever will look at it again (its event, the soon or doubt list, the sweep). */
size_t proof_recheck_now(struct pool *p)
{
	size_t freed = 0;

	if (!p->dp_state)
		return 0;
	for (size_t i = 0; i < p->unseen.front; i++)
		freed += try_free(p, p->unseen.items[i]);
	return freed;
}

static size_t probe_events(struct pool *p, const uint64_t *inos, const unsigned *rounds,
			   size_t count, enum busy_then then, bool *told);

/* The watch thread's re-check of every node that waits for the proof (the sweep, a queue
 * overflow): taken under the lock, probed outside it in batches. The one walk the proof makes
 * (of the waiting nodes only), once a minute or after lost events. No lock held; returns how
 * many were found free. */
static size_t recheck_all(struct pool *p, enum busy_then then)
{
	uint64_t *inos;
	size_t count, freed = 0;

	pool_lock(p);
	count = p->unseen.front;
	inos = count ? pool_alloc(p, count * sizeof(*inos)) : NULL;
	for (size_t i = 0; inos && i < count; i++)
		inos[i] = ((const struct node *)p->unseen.items[i])->ino;
	if (count && !inos) {
		/* No memory for the list: probe them under the lock, as a full pool does. */
		freed = proof_recheck_now(p);
		pool_commit(p);
		return freed;
	}
	pool_unlock(p);
	for (size_t i = 0; i < count; i += EVENT_BATCH)
		freed += probe_events(p, inos + i, NULL,
				      count - i < EVENT_BATCH ? count - i : EVENT_BATCH, then,
				      NULL);
	free(inos);
	return freed;
}

/* The soon list's round: every entry taken under the lock and probed outside it (a kill storm
 * puts hundreds on it at once); each still busy goes back at its next step, or after the last,
 * if doubtful, to the doubt list; a mapping that lives on waits for its munmap's event. */
static void soon_fired(void *ctx, int fd)
{
	struct pool *p = ctx;
	struct passthrough_state *st = p->dp_state;
	struct soon_entry taken[PROOF_SOON_MAX];
	uint64_t inos[PROOF_SOON_MAX];
	bool busy[PROOF_SOON_MAX];
	uint64_t ticks;
	unsigned first;
	size_t count;

	if (read(fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		log_warn("passthrough re-probe timer: %m");
	fault_delay_at(&p->fault, FAULT_PROOF);
	pool_lock(p);
	st->soon_due_us = 0;
	count = soon_list_take(&st->soon, taken);
	pool_unlock(p);
	if (!count)
		return;
	for (size_t i = 0; i < count; i++)
		inos[i] = taken[i].key;
	probe_events(p, inos, NULL, count, BUSY_TELL, busy);
	pool_lock(p);
	for (size_t i = 0; i < count; i++) {
		struct node *n = pool_node(p, taken[i].key);

		if (busy[i] && proof_waiting(n) &&
		    soon_list_put_back(&st->soon, &taken[i]) != SOON_BACK_QUEUED &&
		    taken[i].doubtful)
			doubt_add(p, n, 0);
	}
	first = soon_list_first_step(&st->soon);
	if (first < PROOF_SOON_STEPS)
		soon_arm(st, soon_us[first]);
	pool_commit(p);
}

/* The doubt list's entries, probed outside the lock in batches; each still busy goes back on
 * it for its next round (doubt_add). No lock held. */
static void doubt_round(struct pool *p, const struct doubt_entry *taken, size_t count)
{
	uint64_t inos[EVENT_BATCH];
	unsigned rounds[EVENT_BATCH];

	for (size_t i = 0; i < count; i += EVENT_BATCH) {
		size_t n = count - i < EVENT_BATCH ? count - i : EVENT_BATCH;

		for (size_t k = 0; k < n; k++) {
			inos[k] = taken[i + k].key;
			rounds[k] = taken[i + k].rounds;
		}
		probe_events(p, inos, rounds, n, BUSY_DOUBT, NULL);
	}
}

/* The backstop timer: the doubt list's round when due, then the sweep when due. */
static void backstop_fired(void *ctx, int fd)
{
	struct pool *p = ctx;
	struct passthrough_state *st;
	struct proof_due due;
	uint64_t ticks;
	size_t swept = 0;

	if (read(fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		log_warn("passthrough backstop timer: %m");
	fault_delay_at(&p->fault, FAULT_PROOF);
	pool_lock(p);
	st = p->dp_state;
	due = proof_schedule_take(&st->sched, now_us());
	for (size_t i = 0; i < due.ntaken; i++) {
		struct node *n = pool_node(p, due.taken[i].key);

		if (n)
			n->proof_doubt = false;
	}
	pool_unlock(p);
	doubt_round(p, due.taken, due.ntaken);
	free(due.taken);
	if (due.sweep)
		swept = recheck_all(p, BUSY_LEAVE);
	pool_lock(p);
	if (swept && !st->sweep_noted) {
		st->sweep_noted = true;
		log_info("passthrough: the sweep found a mapping gone that no close event reported "
			 "(logged once)");
	}
	proof_schedule_after(&st->sched, &due, now_us());
	/* Every section before this one committed: the front of `unseen` is what still waits. */
	if (due.sweep && p->unseen.front)
		proof_schedule_sweep(&st->sched, now_us());
	backstop_update(st);
	pool_commit(p);
}

/* Probe the proof_waiting ones of these (at most EVENT_BATCH) backing files outside the lock
 * (the probe is an open, two fcntl and a close; request threads need not wait for them), then
 * apply each answer under the lock unless the node was opened meanwhile. A free file's size is
 * read too, after the probe: nothing can change it any more, so it leaves `unseen` with it. A
 * file still busy goes where `then` says; `rounds` (or NULL): the doubt list's rounds of each;
 * `told` (BUSY_TELL): which were. No lock held; returns how many were found free. */
static size_t probe_events(struct pool *p, const uint64_t *inos, const unsigned *rounds,
			   size_t count, enum busy_then then, bool *told)
{
	uint32_t gen[EVENT_BATCH], usage_gen[EVENT_BATCH];
	uint64_t size[EVENT_BATCH];
	bool want[EVENT_BATCH], busy[EVENT_BATCH], sized[EVENT_BATCH];
	size_t freed = 0;

	pool_lock(p);
	for (size_t i = 0; i < count; i++) {
		struct node *n = pool_node(p, inos[i]);

		want[i] = proof_waiting(n);
		gen[i] = want[i] ? n->open_gen : 0;
		usage_gen[i] = want[i] ? n->usage_gen : 0;
	}
	pool_commit(p);
	for (size_t i = 0; i < count; i++) {
		struct stat st;

		busy[i] = want[i] && proof_probe(p, BACKING_ANY_UID, inos[i]);
		sized[i] = want[i] && !busy[i] &&
			   backing_stat(&p->backing, BACKING_ANY_UID, inos[i], &st) == 0;
		size[i] = sized[i] ? (uint64_t)st.st_size : 0;
	}
	pool_lock(p);
	for (size_t i = 0; i < count; i++) {
		struct node *n = pool_node(p, inos[i]);

		if (told)
			told[i] = false;
		if (!want[i] || !proof_waiting(n) || n->open_gen != gen[i])
			continue;
		if (!busy[i]) {
			proof_set_free(p, n, true);
			if (sized[i])
				pool_unseen_released(p, n, size[i], usage_gen[i], gen[i]);
			freed++;
		} else if (then == BUSY_SOON) {
			proof_soon_add(p, inos[i], true);
		} else if (then == BUSY_DOUBT) {
			doubt_add(p, n, rounds ? rounds[i] + 1 : 0);
		} else if (then == BUSY_TELL) {
			told[i] = true;
		}
	}
	pool_commit(p);
	return freed;
}

static void fanotify_fired(void *ctx, int fan_fd)
{
	struct pool *p = ctx;
	char buf[8192] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	uint64_t inos[EVENT_BATCH];
	size_t count = 0;
	bool overflow = false;
	ssize_t len;

	fault_delay_at(&p->fault, FAULT_PROOF);
	while ((len = read(fan_fd, buf, sizeof(buf))) > 0) {
		struct fanotify_event_metadata md;
		/* Events with name records are not padded to 8 bytes, so FAN_EVENT_NEXT would
		 * point at misaligned metadata: copy each header out instead. */
		for (ssize_t off = 0; off + (ssize_t)sizeof(md) <= len; off += md.event_len) {
			uint64_t ino;

			memcpy(&md, buf + off, sizeof(md));
			if (md.event_len < sizeof(md) || off + (ssize_t)md.event_len > len)
				break;
			if (md.mask & FAN_Q_OVERFLOW)
				overflow = true;
			if (md.fd >= 0)
				close(md.fd); /* never with FID reporting; closed if a kernel sends one */
			if (md.pid == p->daemon_pid || overflow)
				continue;
			ino = backing_event_ino(buf + off, &md);
			if (ino && count < ARRAY_SIZE(inos))
				inos[count++] = ino;
			else if (ino)
				overflow = true;
		}
	}
	if (overflow)
		recheck_all(p, BUSY_DOUBT); /* events were lost: every busy node is doubtful */
	else if (count)
		probe_events(p, inos, NULL, count, BUSY_SOON, NULL);
}

int proof_start(struct pool *p)
{
	const unsigned fan_flags = FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK |
				   FAN_REPORT_DFID_NAME;
	struct passthrough_state *st = fault_calloc(1, sizeof(*st));
	int r;

	if (!st)
		return -ENOMEM;
	int *const fds[] = {&st->fan_fd, &st->backstop_fd, &st->soon_fd}; /* closed on failure */
	st->fan_fd = -1;
	st->soon_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	st->backstop_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (st->backstop_fd < 0 || st->soon_fd < 0) {
		r = -errno;
		goto fail;
	}
	/* One mark per backing file in use at its last RELEASE (proof_watch_file): as many as live
	 * mappings, which the default per-user mark limit could cap (then watch_store). Files are
	 * marked relative to the store's descriptor: a private tmpfs instance has no path. */
	st->fan_fd = fanotify_init(fan_flags | FAN_UNLIMITED_MARKS,
				   O_RDONLY | O_LARGEFILE | O_CLOEXEC);
	if (st->fan_fd < 0 && errno == EPERM)
		st->fan_fd = fanotify_init(fan_flags, O_RDONLY | O_LARGEFILE | O_CLOEXEC);
	if (st->fan_fd < 0) {
		r = -errno;
		log_error("fanotify_init: %s", strerror(-r));
		goto fail;
	}
	r = watch_add(p->watch, st->fan_fd, fanotify_fired, p);
	if (r == 0)
		r = watch_add(p->watch, st->backstop_fd, backstop_fired, p);
	if (r == 0)
		r = watch_add(p->watch, st->soon_fd, soon_fired, p);
	if (r < 0)
		goto fail; /* watch_stop() at unmount drops the registrations made */
	p->dp_state = st;
	return 0;
fail:
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	free(st);
	return r;
}

void proof_stop(struct pool *p)
{
	struct passthrough_state *st = p->dp_state;

	/* Called after watch_stop(): no callback can run any more. */
	if (!st)
		return;
	close(st->fan_fd);
	close(st->backstop_fd);
	close(st->soon_fd);
	free(st->sched.doubt);
	free(st);
	p->dp_state = NULL;
}
