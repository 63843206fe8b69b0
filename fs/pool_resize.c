/* pool_resize: a file's size against the quotas (SETATTR size, FALLOCATE), with the slow part
 * outside the pool lock. fallocate and ftruncate of a big file take milliseconds on huge pages
 * and hundreds of milliseconds on small ones, and under the lock every request of every user
 * would wait for them (docs/design.md "Locking and threads"). Three steps:
 *   begin  (lock held)  reserves the growth (ENOSPC / EDQUOT before a byte moves);
 *   I/O    (no lock)    backing_resize() or fallocate(2) on the caller's fd;
 *   commit (lock held)  settles the reservation to the outcome.
 * The kernel holds a file's inode lock around both requests, so resizes of one file never
 * overlap; what can run meanwhile (a page-cache write reserving, pool_stat catching up with a
 * passthrough write) only grows the reservation, and the commit gives back what begin reserved
 * only if nothing else changed it since. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "pool.h"
#include "pool_internal.h"

int pool_resize_begin(struct pool *p, struct node *n, uint64_t end, unsigned how,
		      struct pool_resize *rz)
{
	int r;

	if (node_is_dir(n))
		return -EISDIR;
	if (!pool_has_backing(n))
		return -EINVAL;
	if (end > (uint64_t)INT64_MAX)
		return -EFBIG;
	*rz = (struct pool_resize){.ino = n->ino,
				   .uid = n->uid,
				   .end = end,
				   .before = n->reserved,
				   .sets_size = how & POOL_RESIZE_SETS_SIZE};
	if ((how & POOL_RESIZE_GROWS) && end > n->reserved) {
		r = pool_reserve(p, n, end);
		if (r < 0)
			return r;
	}
	rz->reserved = n->reserved;
	pool_backing_changed(n);
	return 0;
}

struct node *pool_resize_commit(struct pool *p, const struct pool_resize *rz, int result)
{
	struct node *n = pool_node(p, rz->ino);
	int r = 0;

	if (!n)
		return NULL;
	/* A GETATTR during the I/O may have cached the size half-way. */
	pool_backing_changed(n);
	if (n->life.removed)
		return n; /* destroy() gave the reservation back already */
	if (result < 0) {
		if (n->reserved == rz->reserved)
			r = pool_account(p, n, rz->before);
	} else if (rz->sets_size && rz->end < n->reserved) {
		r = pool_account(p, n, rz->end);
	}
	if (r < 0)
		log_warn("inode %" PRIu64 ": settling the size after a resize: %s", n->ino,
			 strerror(-r));
	return n;
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
	 * does (pool_commit.s hand-on has nothing to hand on). */
	if (atomic_fetch_sub(&p->releases_in_flight, 1) != 1 || !atomic_load(&p->room_waiters))
		return;
	pthread_mutex_lock(&p->lock);
	pthread_cond_broadcast(&p->release_done);
	pthread_mutex_unlock(&p->lock);
}

/* Wait (lock not held) until no RELEASE is between enter and leave, at most 2 s. True if one
 * was: the caller's ENOSPC may have been a file on its way out. */
static bool wait_releases(struct pool *p)
{
	struct timespec until;
	bool waited = false;

	pool_deadline(&until, 2000);
	pthread_mutex_lock(&p->lock);
	atomic_fetch_add(&p->room_waiters, 1);
	while (atomic_load(&p->releases_in_flight) > 0) {
		waited = true;
		if (pthread_cond_timedwait(&p->release_done, &p->lock, &until) != 0)
			break;
	}
	atomic_fetch_sub(&p->room_waiters, 1);
	pthread_mutex_unlock(&p->lock);
	return waited;
}

bool pool_wait_room(struct pool *p)
{
	/* Both: a RELEASE in flight may be about to drop the last reference of a file the
	 * reaper has unlinked, or the other way round. The reaper's wait also covers the big
	 * files another thread's pool_commit is unlinking: their names go under the lock, their
	 * room only with the unlink after it. */
	bool released = wait_releases(p), forgot, reaped;

	/* A removed file's data stays until the kernel lets go of it, and its unlink then goes
	 * to the reaper: first that, then the reaper's queue. */
	pthread_mutex_lock(&p->lock);
	forgot = pool_wait_forgotten(p);
	pthread_mutex_unlock(&p->lock);
	reaped = pool_reaper_wait(p, 2000);
	return released || forgot || reaped;
}

static int resize_once(int fd, const struct pool_resize *rz, const struct pool_fallocate *fa)
{
	if (!fa)
		return backing_resize(fd, rz->end);
	return fallocate(fd, fa->mode, fa->off, fa->len) < 0 ? -errno : 0;
}

int pool_resize_io(struct pool *p, int fd, const struct pool_resize *rz,
		   const struct pool_fallocate *fa)
{
	int r = resize_once(fd, rz, fa);

	/* The daemon's count said it fits (begin reserved it), the store did not: a file whose
	 * room the count gave back may still be on its way out of the store. Try again after
	 * waiting for it, also when there was nothing left to wait for: the unlink may have
	 * ended between the refusal and the wait. */
	if (r == -ENOSPC) {
		pool_wait_room(p);
		r = resize_once(fd, rz, fa);
	}
	/* Still full: passthrough writes the count never saw used the user's store up. */
	if (r == -ENOSPC && backing_per_user(&p->backing))
		r = backing_store_full_errno(&p->backing);
	return r;
}
