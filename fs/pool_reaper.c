/* pool_reaper: unlinks the backing files of small removed files on a thread of its own. tmpfs
 * frees a file's pages and evicts its inode inside unlinkat(2): for a small file that is most of
 * what an UNLINK costs the daemon, and `rm -rf` of many small files waited for it on every
 * request. The reaper does it after the reply, on another core. A big file is still unlinked
 * before the reply, so its room is back when unlink(2) returns; a small one's comes back
 * microseconds later, and the paths that meet a full store wait for it before giving up
 * (pool_reaper_wait; docs/design.md "What runs outside the lock"). It also keeps the pool's
 * growing lists of backing files to unlink (pool_backing_list_push), and counts the files that
 * pool_commit has taken out of the lock and not yet unlinked or queued (`outside`), big ones
 * included, so that pool_reaper_wait waits for every removed file's room. Calls only the store and
 * pool_core.c (docs/design.md "Layout"). Lock order: `reaper.lock` is a leaf, never held with
 * the pool lock. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "log.h"
#include "pool_internal.h"

/* One file counted in `outside` is unlinked or queued: the last one wakes the waiters. */
static void outside_done_locked(struct reaper *rp)
{
	if (atomic_fetch_sub(&rp->outside, 1) == 1)
		pthread_cond_broadcast(&rp->done);
}

static void unlink_one(struct pool *p, const struct backing_file *f)
{
	int r = backing_unlink(&p->backing, f->uid, f->ino);

	if (r < 0 && r != -ENOENT)
		log_warn("removing backing file of inode %" PRIu64 ": %s", f->ino, strerror(-r));
}

void pool_unlink_backing(struct pool *p, const struct backing_file *f)
{
	struct reaper *rp = &p->reaper;

	if (!f->outside) {
		unlink_one(p, f);
		return;
	}
	/* Out of the lock, its name already gone: where tests hold a big file's unlink. */
	fault_stall_at(&p->fault, FAULT_UNLINK);
	unlink_one(p, f);
	pthread_mutex_lock(&rp->lock);
	outside_done_locked(rp);
	pthread_mutex_unlock(&rp->lock);
}

bool pool_backing_list_push(struct backing_list *l, const struct backing_file *f)
{
	struct backing_file *room = array_room(l->files, &l->cap, l->count, 16);

	if (!room)
		return false;
	l->files = room;
	l->files[l->count++] = *f;
	return true;
}

struct backing_list pool_backing_list_take(struct backing_list *l)
{
	struct backing_list taken = *l;

	*l = (struct backing_list){.outside = l->outside};
	if (taken.outside) {
		for (size_t i = 0; i < taken.count; i++)
			taken.files[i].outside = true;
		atomic_fetch_add(taken.outside, taken.count);
	}
	return taken;
}

static void *reaper_main(void *arg)
{
	struct pool *p = arg;
	struct reaper *rp = &p->reaper;
	struct backing_list batch = {0};

	pthread_mutex_lock(&rp->lock);
	for (;;) {
		/* The batch just unlinked is done: say so to whoever waits for room. */
		rp->busy = 0;
		pthread_cond_broadcast(&rp->done);
		free(batch.files);
		while (rp->queue.count == 0 && !rp->stop)
			pthread_cond_wait(&rp->wake, &rp->lock);
		if (rp->stop)
			break; /* unmount: the store goes as a whole (backing_close) */
		batch = pool_backing_list_take(&rp->queue);
		rp->busy = batch.count;
		pthread_mutex_unlock(&rp->lock);
		fault_stall_at(&p->fault, FAULT_REAP);
		for (size_t i = 0; i < batch.count; i++)
			unlink_one(p, &batch.files[i]);
		pthread_mutex_lock(&rp->lock);
	}
	pthread_mutex_unlock(&rp->lock);
	return NULL;
}

int pool_reaper_start(struct pool *p)
{
	struct reaper *rp = &p->reaper;
	int r;

	r = pthread_mutex_init(&rp->lock, NULL);
	if (r == 0)
		r = pthread_cond_init(&rp->wake, NULL);
	if (r == 0)
		r = pthread_cond_init(&rp->done, NULL);
	if (r == 0)
		r = pthread_create(&rp->thread, NULL, reaper_main, p);
	if (r)
		return -r;
	rp->started = true;
	return 0;
}

void pool_reaper_stop(struct pool *p)
{
	struct reaper *rp = &p->reaper;

	/* Half-built (pool_init failed before the start): the primitives are all-zero, which is
	 * glibc's static initializer, and nothing was queued. */
	if (rp->started) {
		pthread_mutex_lock(&rp->lock);
		rp->stop = true;
		pthread_cond_signal(&rp->wake);
		pthread_mutex_unlock(&rp->lock);
		pthread_join(rp->thread, NULL); /* after the batch it is unlinking, if any */
		rp->started = false;
	}
	free(pool_backing_list_take(&rp->queue).files);
	pthread_cond_destroy(&rp->done);
	pthread_cond_destroy(&rp->wake);
	pthread_mutex_destroy(&rp->lock);
}

bool pool_reaper_take(struct pool *p, const struct backing_file *f)
{
	struct reaper *rp = &p->reaper;
	bool taken = false;

	if (!rp->started)
		return false;
	pthread_mutex_lock(&rp->lock);
	if (!rp->stop && pool_backing_list_push(&rp->queue, f)) {
		/* The thread sleeps only on an empty queue. */
		if (rp->queue.count == 1)
			pthread_cond_signal(&rp->wake);
		/* From `outside` to the queue in one step: a waiter sees it in one or the other. */
		if (f->outside)
			outside_done_locked(rp);
		taken = true;
	}
	pthread_mutex_unlock(&rp->lock);
	return taken;
}

bool pool_reaper_wait(struct pool *p, int timeout_ms)
{
	struct reaper *rp = &p->reaper;
	struct timespec until;
	bool waited = false;

	if (!rp->started)
		return false;
	pool_deadline(&until, timeout_ms);
	pthread_mutex_lock(&rp->lock);
	while (rp->queue.count + rp->busy + atomic_load(&rp->outside) > 0) {
		waited = true;
		if (pthread_cond_timedwait(&rp->done, &rp->lock, &until) != 0)
			break;
	}
	pthread_mutex_unlock(&rp->lock);
	return waited;
}
