/* pool_reaper: unlinks the backing files of small removed files on a thread of its own. tmpfs
 * frees a file's pages and evicts its inode inside unlinkat(2): for a small file that is most of
 * what an UNLINK costs the daemon, and `rm -rf` of many small files waited for it on every
 * request. The reaper does it after the reply, on another core. A big file is still unlinked
 * before the reply, so its room is back when unlink(2) returns; a small one's comes back
 * microseconds later, and the paths that meet a full store wait for it before giving up
 * (pool_reaper_wait; docs/design.md "What runs outside the lock"). Calls only the store
 * (docs/design.md "Layout"). Lock order: `reaper.lock` is a leaf, never held with the pool lock. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "pool.h"
#include "pool_internal.h"

void pool_unlink_backing(struct pool *p, const struct backing_file *f)
{
	int r = backing_unlink(&p->backing, f->uid, f->ino);

	if (r < 0 && r != -ENOENT)
		log_warn("removing backing file of inode %" PRIu64 ": %s", f->ino, strerror(-r));
}

static void *reaper_main(void *arg)
{
	struct pool *p = arg;
	struct reaper *rp = &p->reaper;
	struct backing_file *batch = NULL;
	size_t n = 0;

	pthread_mutex_lock(&rp->lock);
	for (;;) {
		/* The batch just unlinked is done: say so to whoever waits for room. */
		rp->busy = 0;
		pthread_cond_broadcast(&rp->done);
		free(batch);
		batch = NULL;
		while (rp->count == 0 && !rp->stop)
			pthread_cond_wait(&rp->wake, &rp->lock);
		if (rp->stop)
			break; /* unmount: the store goes as a whole (backing_close) */
		batch = rp->files;
		n = rp->busy = rp->count;
		rp->files = NULL;
		rp->count = rp->cap = 0;
		pthread_mutex_unlock(&rp->lock);
		fault_stall_at(&p->fault, FAULT_REAP);
		for (size_t i = 0; i < n; i++)
			pool_unlink_backing(p, &batch[i]);
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
	free(rp->files);
	rp->files = NULL;
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
	if (rp->count == rp->cap) {
		size_t cap = rp->cap ? rp->cap * 2 : 64;
		struct backing_file *grown = realloc(rp->files, cap * sizeof(*grown));

		if (grown) {
			rp->files = grown;
			rp->cap = cap;
		}
	}
	if (rp->count < rp->cap && !rp->stop) {
		rp->files[rp->count++] = *f;
		/* The thread sleeps only on an empty queue. */
		if (rp->count == 1)
			pthread_cond_signal(&rp->wake);
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
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&rp->lock);
	while (rp->count + rp->busy > 0) {
		waited = true;
		if (pthread_cond_timedwait(&rp->done, &rp->lock, &until) != 0)
			break;
	}
	pthread_mutex_unlock(&rp->lock);
	return waited;
}
