/* pool_handles: what handles do to a node — file handles opened and closed, a last RELEASE's
 * probe in flight, folder handles — and the two requests whose system call runs between two lock
 * sections (a file in use statted; a resize), so that a handler neither writes a node nor drops
 * the lock in the middle of a request (docs/design.md "Layout", "What runs outside the lock").
 * Every function is called with the pool lock held, and returns with it held. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "pool.h"
#include "pool_internal.h"

void pool_handle_opened(struct node *n)
{
	n->life.opens++;
	n->open_gen++; /* a probe made outside the lock before this open is stale */
}

void pool_handle_unopened(struct pool *p, struct node *n)
{
	if (n->life.opens > 0)
		n->life.opens--;
	pool_mark(p, n);
}

bool pool_handle_closed(struct pool *p, struct node *n)
{
	pool_mark(p, n);
	return n->life.opens > 0 && --n->life.opens == 0;
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
	pthread_cond_broadcast(&p->release_done);
	return n;
}

bool pool_wait_release(struct pool *p, const struct node *n)
{
	if (!n->releasing)
		return false;
	pthread_cond_wait(&p->release_done, &p->lock);
	return true;
}

void pool_dir_opened(struct pool *p, struct node *n, struct handle_link *h)
{
	n->life.opens++;
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
	if (n && n->life.opens > 0) {
		n->life.opens--;
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

int pool_resize(struct pool *p, struct node **np, uint64_t end, unsigned how, int fd,
		const struct pool_fallocate *fa)
{
	struct pool_resize rz;
	int r, own_fd = -1;

	r = pool_resize_begin(p, *np, end, how, &rz);
	/* Room a removed file still holds until the kernel lets go of it. */
	while ((r == -EDQUOT || r == -ENOSPC) && pool_wait_forgotten(p)) {
		*np = pool_node(p, rz.ino);
		if (!*np)
			return -ESTALE;
		r = pool_resize_begin(p, *np, end, how, &rz);
	}
	if (r < 0)
		return r;
	pool_unlock(p);
	if (!fa)
		fault_stall(&p->fault);
	if (fd < 0)
		fd = own_fd = backing_open_file(&p->backing, rz.uid, rz.ino, O_RDWR);
	r = fd < 0 ? (fd == -ENOENT ? -ESTALE : fd) : pool_resize_io(p, fd, &rz, fa);
	if (own_fd >= 0)
		close(own_fd);
	pool_lock(p);
	*np = pool_resize_commit(p, &rz, r);
	return *np || r < 0 ? r : -ESTALE;
}
