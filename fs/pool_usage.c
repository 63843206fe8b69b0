/* pool_usage: what each user and the pool use — entries, bytes reserved for file data, daemon
 * memory for xattrs and hold records (and freeing those records) — and the quotas on them
 * (docs/interface.md "Limits"). The counters change with each change, so reading them costs
 * the same with ten entries as with a million; the only sizes that move without the daemon
 * seeing it are those of the files in `unseen` (passthrough writes and stores), which
 * pool_unseen_settle re-reads outside the lock (docs/design.md "Work that grows with the
 * pool"). Calls only the tables below it (docs/design.md "Layout"). Every function runs with
 * the pool lock held unless it says otherwise. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "log.h"
#include "pool_internal.h"

struct user_usage *pool_usage_of(struct pool *p, uid_t uid, bool create)
{
	struct user_usage *u;

	for (u = p->users; u; u = u->next)
		if (u->uid == uid)
			return u;
	if (!create)
		return NULL;
	u = pool_alloc(p, sizeof(*u));
	if (!u)
		return NULL;
	u->uid = uid;
	u->next = p->users;
	p->users = u;
	return u;
}

/* Count `n` as `new_size` bytes, no questions asked. */
int pool_account(struct pool *p, struct node *n, uint64_t new_size)
{
	struct user_usage *u = pool_usage_of(p, n->uid, true);

	if (!u)
		return -ENOMEM;
	p->bytes = p->bytes - n->reserved + new_size;
	u->bytes = u->bytes - n->reserved + new_size;
	n->reserved = new_size;
	n->usage_gen++;
	return 0;
}

int pool_reserve(struct pool *p, struct node *n, uint64_t new_size)
{
	struct user_usage *u = pool_usage_of(p, n->uid, true);

	if (!u)
		return -ENOMEM;
	/* The quotas cover all a user makes the pool hold: data and metadata (xattrs, holds). */
	if (new_size > n->reserved) {
		uint64_t grow = new_size - n->reserved;
		if (p->opts.max_size && p->bytes + p->meta + grow > p->opts.max_size)
			return -ENOSPC;
		if (p->opts.max_user_size && u->bytes + u->meta + grow > p->opts.max_user_size)
			return -EDQUOT;
	}
	return pool_account(p, n, new_size);
}

int pool_meta_charge(struct pool *p, uid_t uid, int64_t delta)
{
	struct user_usage *u = pool_usage_of(p, uid, delta > 0);

	if (!u)
		return delta > 0 ? -ENOMEM : 0;
	if (delta > 0) {
		uint64_t add = (uint64_t)delta;
		if (p->opts.max_user_meta && u->meta + add > p->opts.max_user_meta)
			return -EDQUOT;
		if (p->opts.max_user_size && u->bytes + u->meta + add > p->opts.max_user_size)
			return -EDQUOT;
		if (p->opts.max_size && p->bytes + p->meta + add > p->opts.max_size)
			return -ENOSPC;
		u->meta += add;
		p->meta += add;
		return 0;
	}
	/* Refunds never fail; clamp so a bookkeeping slip cannot wrap to a huge charge. */
	u->meta = (uint64_t)-delta > u->meta ? 0 : u->meta - (uint64_t)-delta;
	p->meta = (uint64_t)-delta > p->meta ? 0 : p->meta - (uint64_t)-delta;
	return 0;
}

int pool_hold_charge(struct pool *p, uid_t uid)
{
	return pool_meta_charge(p, uid, (int64_t)sizeof(struct hold));
}

void pool_hold_refund(struct pool *p, uid_t uid)
{
	pool_meta_charge(p, uid, -(int64_t)sizeof(struct hold));
}

void pool_hold_free(struct pool *p, struct node *n, struct hold *h)
{
	hold_unlink(&n->holds, h);
	if (n->life.holds > 0 && --n->life.holds == 0) {
		poolstats_gauge(&p->stats.held, -1);
		n->let_go = REMOVED_HOLD_ENDED;
	}
	pool_hold_refund(p, h->uid);
	free(h);
}

void pool_drop_holds(struct pool *p, struct node *n)
{
	while (n->holds)
		pool_hold_free(p, n, n->holds);
	if (n->life.holds)
		poolstats_gauge(&p->stats.held, -1);
	n->life.holds = 0;
}

struct user_usage pool_user_usage(struct pool *p, uid_t uid)
{
	struct user_usage *u = pool_usage_of(p, uid, false), none = {.uid = uid};

	return u ? *u : none;
}

/* Nothing can change the file's size without the daemon any more: no handle, no mapping. */
static bool unseen_idle(const struct node *n)
{
	return n->life.opens == 0 && !n->life.maybe_mapped;
}

int pool_unseen_track(struct pool *p, struct node *n)
{
	if (!part_set_has(&p->unseen, n)) {
		void **items = array_room(p->unseen.items, &p->unseen.cap, p->unseen.count, 64);

		if (!items)
			return -ENOMEM;
		p->unseen.items = items;
		part_set_add(&p->unseen, n, false);
	}
	pool_unseen_place(p, n);
	return 0;
}

void pool_unseen_place(struct pool *p, struct node *n)
{
	if (!part_set_has(&p->unseen, n))
		return;
	if (n->life.removed) {
		part_set_remove(&p->unseen, n);
		return;
	}
	part_set_move(&p->unseen, n, n->life.maybe_mapped && n->life.opens == 0);
}

/* `size`, read outside the lock, is `n`'s unless its accounting moved meanwhile (`usage_gen`);
 * and if nothing could change it since (idle then and now, not reopened: `open_gen`), it is
 * final and `n` leaves `unseen`. */
static void unseen_apply(struct pool *p, struct node *n, uint64_t size, uint32_t usage_gen,
			 uint32_t open_gen, bool idle)
{
	if (!n || n->life.removed || !part_set_has(&p->unseen, n) || n->usage_gen != usage_gen)
		return;
	/* Out of memory for a user record: it stays in `unseen`, to be read again. */
	if (size != n->reserved && pool_account(p, n, size) < 0)
		return;
	if (idle && n->open_gen == open_gen && unseen_idle(n))
		part_set_remove(&p->unseen, n);
}

void pool_unseen_released(struct pool *p, struct node *n, uint64_t size, uint32_t usage_gen,
			  uint32_t open_gen)
{
	unseen_apply(p, n, size, usage_gen, open_gen, true);
}

/* One file of `unseen` as taken under the lock, and its size as read after it. */
struct unseen_read {
	uint64_t ino, size;
	uid_t uid;
	uint32_t usage_gen, open_gen;
	bool idle; /* nothing could change it any more when it was taken */
	bool read; /* backing_stat said where it is */
};

int pool_unseen_settle(struct pool *p)
{
	struct unseen_read *rd = NULL;
	size_t count;

	pool_lock(p);
	count = p->unseen.count;
	if (count)
		rd = pool_alloc(p, count * sizeof(*rd));
	if (!rd) {
		pool_unlock(p);
		return count ? -ENOMEM : 0;
	}
	for (size_t i = 0; i < count; i++) {
		const struct node *n = p->unseen.items[i];

		rd[i] = (struct unseen_read){.ino = n->ino,
					     .uid = n->uid,
					     .usage_gen = n->usage_gen,
					     .open_gen = n->open_gen,
					     .idle = unseen_idle(n)};
	}
	pool_unlock(p);
	/* The system calls, one per file that may have moved, with no lock held: requests go on. */
	for (size_t i = 0; i < count; i++) {
		struct stat st;

		rd[i].read = backing_stat(&p->backing, rd[i].uid, rd[i].ino, &st) == 0;
		rd[i].size = rd[i].read ? (uint64_t)st.st_size : 0;
	}
	pool_lock(p);
	for (size_t i = 0; i < count; i++)
		if (rd[i].read)
			unseen_apply(p, pool_node(p, rd[i].ino), rd[i].size, rd[i].usage_gen,
				     rd[i].open_gen, rd[i].idle);
	pool_unlock(p);
	free(rd);
	return 0;
}

/* Free `n`'s xattrs and refund them to its owner. */
void pool_free_xattrs(struct pool *p, struct node *n)
{
	pool_meta_charge(p, n->uid, -xattr_total_cost(&n->xattrs));
	xattr_clear(&n->xattrs);
}

int pool_xattr_set(struct pool *p, struct node *n, const char *name, const void *value, size_t size,
		   int flags)
{
	int64_t cost = xattr_set_cost(&n->xattrs, name, size), done = 0;
	int r;

	/* Charge first: a value the budget cannot pay for is refused before we hold it. */
	if (cost > 0) {
		r = pool_meta_charge(p, n->uid, cost);
		if (r < 0)
			return r;
	}
	r = xattr_set(&n->xattrs, name, value, size, flags, ((size_t)POOLFS_XATTR_BYTES_MAX),
		      pool_alloc_cb, p, &done);
	/* Settle the difference between what was charged and what the change cost. */
	pool_meta_charge(p, n->uid, done - (cost > 0 ? cost : 0));
	if (r == 0)
		pool_touch_ctime(n);
	return r;
}

int pool_xattr_remove(struct pool *p, struct node *n, const char *name)
{
	int64_t freed = 0;
	int r = xattr_remove(&n->xattrs, name, &freed);

	if (r == 0) {
		pool_meta_charge(p, n->uid, -freed);
		pool_touch_ctime(n);
	}
	return r;
}
