/* pool_usage: what each user and the pool use — entries, bytes reserved for file data, daemon
 * memory for xattrs and hold records (and freeing those records) — and the quotas on them
 * (docs/interface.md "Limits"). Calls only the tables below it (docs/design.md "Layout"). Every
 * function runs with the pool lock held. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
	n->life.holds = 0;
}

struct user_usage pool_user_usage(struct pool *p, uid_t uid)
{
	struct user_usage *u = pool_usage_of(p, uid, false), none = {.uid = uid};

	return u ? *u : none;
}

void pool_refresh_usage(struct pool *p)
{
	/* Passthrough writes grow files without the daemon seeing them: before reporting usage,
	 * read the real sizes. Only files can hold bytes; removed ones hold none. */
	for (size_t b = 0; b < p->inos.nbuckets; b++) {
		for (struct node *n = POOL_NODE_OF_LINK(p->inos.buckets[b]); n;
		     n = POOL_NODE_OF_LINK(n->ino_link.next)) {
			struct stat st;
			if (!pool_has_backing(n) || n->life.removed)
				continue;
			if (backing_stat(&p->backing, n->uid, n->ino, &st) == 0 &&
			    (uint64_t)st.st_size != n->reserved)
				pool_account(p, n, (uint64_t)st.st_size);
		}
	}
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
