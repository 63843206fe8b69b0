/* notify: the kernel name-invalidation thread (see notify.h). */
#include <errno.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fault.h"
#include "log.h"
#include "notify.h"

struct item {
	struct item *next;
	uint64_t parent;
	uint64_t ino; /* the entry deleted with the name, 0 for a bare invalidation */
	size_t len;
	char name[];
};

struct notify {
	struct fuse_session *se;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct item *head, **tail;
	bool stopping;
	bool started;
};

static void *notify_loop(void *arg)
{
	struct notify *n = arg;

	pthread_mutex_lock(&n->lock);
	for (;;) {
		struct item *it;
		while (!n->head && !n->stopping)
			pthread_cond_wait(&n->cond, &n->lock);
		if (n->stopping)
			break;
		it = n->head;
		n->head = it->next;
		if (!n->head)
			n->tail = &n->head;
		pthread_mutex_unlock(&n->lock);
		/* A deletion drops the name and clears the inode's link count, so the kernel
		 * evicts it, and sends FORGET, as soon as no walk holds it, and refuses new entries
		 * in a removed folder itself. */
		int r = it->ino ? fuse_lowlevel_notify_delete(n->se, it->parent, it->ino, it->name,
							      it->len)
				: fuse_lowlevel_notify_inval_entry(n->se, it->parent, it->name,
								   it->len);
		/* -ENOENT: the kernel had no such name cached (or a newer entry under it, which
		 * the deletion still invalidated), -ENOTEMPTY: a folder whose cached children are
		 * still going (it is invalidated all the same); nothing else to do. */
		if (r < 0 && r != -ENOENT && r != -ENOTEMPTY && r != -ENOTCONN)
			log_warn("invalidating %s: %s", it->name, strerror(-r));
		free(it);
		pthread_mutex_lock(&n->lock);
	}
	pthread_mutex_unlock(&n->lock);
	return NULL;
}

int notify_start(struct notify **out, struct fuse_session *se)
{
	struct notify *n = fault_calloc(1, sizeof(*n));
	int r;

	if (!n)
		return -ENOMEM;
	n->se = se;
	n->tail = &n->head;
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->cond, NULL);
	r = -pthread_create(&n->thread, NULL, notify_loop, n);
	if (r < 0) {
		notify_stop(n);
		return r;
	}
	n->started = true;
	*out = n;
	return 0;
}

int notify_push(void *ctx, uint64_t parent, const char *name, size_t len, uint64_t ino)
{
	struct notify *n = ctx;
	struct item *it = fault_malloc(sizeof(*it) + len + 1);

	if (!it) {
		log_warn("out of memory queueing an invalidation of %s", name);
		return -ENOMEM;
	}
	it->next = NULL;
	it->parent = parent;
	it->ino = ino;
	it->len = len;
	memcpy(it->name, name, len);
	it->name[len] = '\0';
	pthread_mutex_lock(&n->lock);
	*n->tail = it;
	n->tail = &it->next;
	pthread_cond_signal(&n->cond);
	pthread_mutex_unlock(&n->lock);
	return 0;
}

static void ask_to_stop(struct notify *n)
{
	pthread_mutex_lock(&n->lock);
	n->stopping = true;
	pthread_cond_signal(&n->cond);
	pthread_mutex_unlock(&n->lock);
}

int notify_stop_within(struct notify *n, int ms)
{
	struct timespec until;
	int r;

	if (!n || !n->started)
		return 0;
	ask_to_stop(n);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	r = pthread_timedjoin_np(n->thread, NULL, &until);
	if (r == 0)
		n->started = false; /* joined: notify_stop only frees */
	return -r;
}

void notify_stop(struct notify *n)
{
	if (!n)
		return;
	if (n->started) {
		ask_to_stop(n);
		pthread_join(n->thread, NULL);
	}
	while (n->head) {
		struct item *it = n->head;
		n->head = it->next;
		free(it);
	}
	pthread_mutex_destroy(&n->lock);
	pthread_cond_destroy(&n->cond);
	free(n);
}
