/* pool_handles: what handles do to a node — file handles opened and closed, a last RELEASE's
 * probe in flight and the LOOKUPs that wait for it, folder handles. Also GETATTR of a file in
 * use, whose fstat runs between two lock sections, so that a handler neither writes a node nor
 * drops the lock in the middle of a request (docs/design.md "Layout", "What runs outside the
 * lock"). Each function says whether it takes the pool lock held. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "pool_internal.h"

void pool_handle_opened(struct pool *p, struct node *n)
{
	n->life.opens++;
	poolstats_gauge(&p->stats.open_handles, 1);
	n->open_gen++; /* a probe made outside the lock before this open is stale */
}

void pool_handle_unopened(struct pool *p, struct node *n)
{
	if (n->life.opens > 0) {
		n->life.opens--;
		poolstats_gauge(&p->stats.open_handles, -1);
	}
	pool_mark(p, n);
}

bool pool_handle_closed(struct pool *p, struct node *n)
{
	pool_mark(p, n);
	if (n->life.opens == 0)
		return false;
	poolstats_gauge(&p->stats.open_handles, -1);
	if (--n->life.opens > 0)
		return false;
	n->let_go = REMOVED_LAST_CLOSE;
	return true;
}

void pool_handle_unmapped(struct node *n)
{
	n->let_go = REMOVED_LAST_UNMAP;
}

void pool_release_probing(struct node *n, bool probing)
{
	n->releasing = probing;
}

struct node *pool_release_probed(struct pool *p, uint64_t ino, bool probed)
{
	/* Only a removed and forgotten node is freed, and `releasing` kept it unremoved. */
	struct node *n = pool_node(p, ino);

	if (n && probed)
		n->releasing = false;
	pthread_cond_broadcast(&p->probe_done);
	return n;
}

bool pool_wait_release(struct pool *p, const struct node *n)
{
	if (!n->releasing)
		return false;
	pthread_cond_wait(&p->probe_done, &p->lock);
	return true;
}

void pool_dir_opened(struct pool *p, struct node *n, struct handle_link *h)
{
	n->life.opens++;
	poolstats_gauge(&p->stats.open_handles, 1);
	h->next = p->dir_handles.next;
	h->prev = &p->dir_handles;
	p->dir_handles.next->prev = h;
	p->dir_handles.next = h;
}

void pool_dir_closed(struct pool *p, struct node *n, struct handle_link *h)
{
	h->prev->next = h->next;
	h->next->prev = h->prev;
	h->prev = h->next = h;
	poolstats_gauge(&p->stats.open_handles, -1);
	if (n && n->life.opens > 0) {
		if (--n->life.opens == 0)
			n->let_go = REMOVED_LAST_CLOSE;
		pool_mark(p, n);
	}
}

int pool_stat_fresh(struct pool *p, struct node **np, struct stat *st)
{
	struct node *n = *np;
	struct stat backing;
	uint64_t ino = n->ino;
	uid_t owner = n->uid;
	int r;

	if (!pool_stat_needs_backing(n))
		return pool_stat(p, n, st);
	pool_unlock(p);
	r = backing_stat(&p->backing, owner, ino, &backing);
	pool_lock(p);
	*np = n = pool_node(p, ino);
	if (!n)
		return -ESTALE;
	if (r == 0 && !n->life.removed) {
		pool_stat_with(p, n, &backing, st);
		return 0;
	}
	if (r == 0 || r == -ENOENT)
		return pool_stat(p, n, st); /* removed meanwhile: what the node still knows */
	return r;
}
