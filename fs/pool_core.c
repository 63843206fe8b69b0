/* pool_core: the pool object's primitives, under every other pool module — its allocations
 * (with fault injection), the clocks, the queue of names the kernel must drop, and the access
 * rule applied to a node (access.h). Calls nothing else of the pool (docs/design.md "Layout"). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "pool_internal.h"

void pool_lock(struct pool *p)
{
	/* Every take is counted in the lock-wait histogram, a free lock as 0: a request that
	 * waits long for it would show work under the lock that should not be there
	 * (docs/design.md "Work that grows with the pool"). Only a wait reads the clock. */
	if (pthread_mutex_trylock(&p->lock) == 0) {
		opstats_lock_wait(&p->opstats, 0);
	} else {
		uint64_t start = opstats_now();

		atomic_fetch_add_explicit(&p->lock_waiters, 1, memory_order_relaxed);
		pthread_mutex_lock(&p->lock);
		atomic_fetch_sub_explicit(&p->lock_waiters, 1, memory_order_relaxed);
		opstats_lock_wait(&p->opstats, opstats_now() - start);
	}
	p->lock_turns++;
	if (p->lock_yielders)
		pthread_cond_broadcast(&p->lock_turn);
}

bool pool_lock_wanted(struct pool *p)
{
	return atomic_load_explicit(&p->lock_waiters, memory_order_relaxed) > 0;
}

void pool_unlock(struct pool *p)
{
	pthread_mutex_unlock(&p->lock);
}

uint64_t pool_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void *pool_alloc_at(struct pool *p, size_t size, const char *site)
{
	(void)p; /* its fault state is the one the hook uses (pool_init: fault_use) */
	return fault_alloc_at(site, size, true, false);
}

void *pool_alloc_cb(void *pool, const char *site, size_t size, bool benign)
{
	(void)pool;
	return fault_alloc_at(site, size, true, benign);
}

char *pool_strdup_at(struct pool *p, const char *s, const char *site)
{
	size_t len = strlen(s) + 1;
	char *copy = pool_alloc_at(p, len, site);

	if (copy)
		memcpy(copy, s, len);
	return copy;
}

void pool_set_now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

void pool_deadline(struct timespec *until, long ms)
{
	clock_gettime(CLOCK_REALTIME, until);
	until->tv_sec += ms / 1000;
	until->tv_nsec += (ms % 1000) * 1000000;
	if (until->tv_nsec >= 1000000000) {
		until->tv_sec++;
		until->tv_nsec -= 1000000000;
	}
}

/* Queue a name for the invalidation thread (sent after unlock); with `ino`, report back. */
int pool_queue_inval(struct pool *p, uint64_t parent, const char *name, uint64_t ino)
{
	size_t len = strlen(name);
	struct pending_inval *pi = pool_alloc(p, sizeof(*pi) + len + 1);

	if (!pi) {
		/* Without the invalidation the kernel keeps a dead name until its timeout; opens
		 * then get ESTALE and retry a fresh lookup, so this is slower, not wrong. */
		log_warn("out of memory queueing an invalidation");
		return -ENOMEM;
	}
	pi->next = NULL;
	pi->parent = parent;
	pi->ino = ino;
	pi->namelen = len;
	memcpy(pi->name, name, len + 1);
	*p->inval_tail = pi;
	p->inval_tail = &pi->next;
	return 0;
}

void pool_forget_name(struct pool *p, uint64_t dir_ino, const char *name)
{
	pool_queue_inval(p, dir_ino, name, 0);
}

int pool_may_act(struct pool *p, uid_t caller, const struct node *n, enum access_act act)
{
	return access_check_act(&p->policy, caller, n->uid, n == p->root, act);
}

bool pool_may(struct pool *p, uid_t caller, const struct node *n)
{
	return pool_may_act(p, caller, n, ACCESS_USE) == 0;
}

void pool_log_denied(struct pool *p, uid_t caller, const char *what, const struct node *n)
{
	long now = (long)time(NULL);

	atomic_fetch_add_explicit(&p->stats.denied, 1, memory_order_relaxed);
	/* At most 20 lines a second: a hostile loop must not flood the log. */
	if (p->denied_window != now) {
		p->denied_window = now;
		p->denied_count = 0;
	}
	if (++p->denied_count > 20)
		return;
	atomic_fetch_add_explicit(&p->stats.denied_logged, 1, memory_order_relaxed);
	log_info("denied: uid %u may not %s inode %" PRIu64 " (owner uid %u)", (unsigned)caller,
		 what, n->ino, (unsigned)n->uid);
}
