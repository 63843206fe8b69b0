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
#include <inttypes.h>
#include <string.h>

#include "log.h"
#include "pool.h"
#include "pool_internal.h"

int pool_resize_begin(struct pool *p, struct node *n, uint64_t end, unsigned how,
		      struct pool_resize *rz)
{
	int r;

	if (n->is_dir)
		return -EISDIR;
	if (!pool_has_backing(n))
		return -EINVAL;
	if (end > (uint64_t)INT64_MAX)
		return -EFBIG;
	*rz = (struct pool_resize){.ino = n->ino, .uid = n->uid, .end = end, .before = n->reserved,
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
