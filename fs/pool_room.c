/* pool_room: whether growth that the pool refused can fit after all, decided in one place. A
 * count or a store can say "full" while room is on its way back: files whose last mapping ended
 * unseen (a proof frees them), removed files the kernel still holds (their FORGET gives the room
 * back), RELEASEs in flight (their close(2) does), the reaper's queue (its unlink does). Every
 * caller that grows a file (pool_resize, a page-cache WRITE) asks pool_room_wait, which makes what
 * room it can, waits with one deadline per request, and says whether one more try is worth it.
 * Also the RELEASE span those waits need (docs/design.md "What runs outside the lock"). */
#include <errno.h>
#include <time.h>

#include "pool_internal.h"

/* The one deadline: how long a request may wait for room, all causes together. */
#define ROOM_MS 2000

void pool_room_begin(struct pool_room *room, size_t (*prove)(struct pool *p), bool forgets)
{
	*room = (struct pool_room){.prove = prove, .forgets = forgets};
	pool_deadline(&room->until, ROOM_MS);
}

/* Milliseconds left before `until` (CLOCK_REALTIME, as pool_deadline), 0 if none. */
static int ms_left(const struct timespec *until)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_REALTIME, &now);
	ms = (long long)(until->tv_sec - now.tv_sec) * 1000 +
	     (until->tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? (int)ms : 0;
}

/* Lock held (released meanwhile): a removed entry the kernel still holds counts until its
 * FORGET. Wait for the next one to go. True if one went. */
static bool wait_forgotten(struct pool *p, const struct timespec *until)
{
	uint64_t seen = p->forgotten;

	while (p->forgotten == seen && p->awaiting_forget)
		if (pthread_cond_timedwait(&p->forgotten_cond, &p->lock, until) != 0)
			break;
	return p->forgotten != seen;
}

/* A RELEASE that removes a file unlinks its backing file (pool_commit) while the daemon's fd of
 * the handle still holds the inode: the room comes back at the close(2) after the reply. So
 * what meets a full store waits for every RELEASE in flight, with any store. */
void pool_release_enter(struct pool *p)
{
	atomic_fetch_add(&p->releases_in_flight, 1);
}

void pool_release_leave(struct pool *p)
{
	/* Only the last one out, and only if someone waits: RELEASEs stay off the pool lock. A
	 * waiter raises room_waiters and then tests the count, both holding the mutex, and sleeps
	 * releasing it; the two atomics are sequentially consistent, so either the waiter sees
	 * the count at 0 or this sees the waiter, and broadcasting under the mutex cannot fall
	 * between its test and its sleep. The section changes no pool state, so the bare mutex
	 * does (pool_commit would have nothing to hand on). */
	if (atomic_fetch_sub(&p->releases_in_flight, 1) != 1 || !atomic_load(&p->room_waiters))
		return;
	pthread_mutex_lock(&p->lock);
	pthread_cond_broadcast(&p->releases_drained);
	pthread_mutex_unlock(&p->lock);
}

/* Lock held (released meanwhile): wait until no RELEASE is between enter and leave. True if one
 * was: the refusal may have been a file on its way out. */
static bool wait_releases(struct pool *p, const struct timespec *until)
{
	bool waited = false;

	atomic_fetch_add(&p->room_waiters, 1);
	while (atomic_load(&p->releases_in_flight) > 0) {
		waited = true;
		if (pthread_cond_timedwait(&p->releases_drained, &p->lock, until) != 0)
			break;
	}
	atomic_fetch_sub(&p->room_waiters, 1);
	return waited;
}

bool pool_room_wait(struct pool *p, struct pool_room *room, bool store_full)
{
	bool back;

	/* First what costs no wait: files whose last mapping ended while the data path's own
	 * thread had not yet come to prove it (docs/design.md "Last-mapping detection"). Once per
	 * request: a proof walks every file that waits for one. */
	if (room->prove && !room->proved) {
		room->proved = true;
		if (room->prove(p) > 0)
			return true;
	}
	if (!ms_left(&room->until))
		return false;
	if (!store_full)
		/* The count refused: only removed files the kernel still holds give room back to
		 * it, unless the caller may not wait for them (a WRITE: see op_write_buf). */
		return room->forgets && wait_forgotten(p, &room->until);
	/* The store refused though the count said it fits: a RELEASE in flight may be about to
	 * drop the last reference of a file the reaper has unlinked, or the other way round; a
	 * removed file's data stays until the kernel lets go of it, and its unlink then goes to
	 * the reaper: all three. The reaper's wait also covers the big files another thread's
	 * pool_commit is unlinking: their names go under the lock, their room only after it. */
	back = wait_releases(p, &room->until);
	back |= wait_forgotten(p, &room->until);
	pool_unlock(p);
	back |= pool_reaper_wait(p, ms_left(&room->until));
	pool_lock(p);
	/* Once, also when there was nothing left to wait for: the unlink may have ended between
	 * the refusal and the wait. */
	if (!room->store_retried)
		back = room->store_retried = true;
	return back;
}
