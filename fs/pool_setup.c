/* pool_setup: the pool object's life — pool_init builds it (locks, conditions, the root, the
 * tables, the store), pool_destroy takes apart whatever of it was built. It sits at the top of
 * the pool's layers because teardown reaches every part (docs/design.md "Layout"). Teardown
 * walks the whole entry table: at unmount, when no request can come any more. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "log.h"
#include "pool_internal.h"

int pool_init(struct pool *p, const struct pool_options *opts)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->backing.parent_fd = p->backing.dir_fd = -1;
	p->linger_timer_fd = -1;
	p->hold_poll_fd = -1;
	p->inval_tail = &p->inval_head;
	p->dir_handles.prev = p->dir_handles.next = &p->dir_handles;
	p->unseen.idx_off = offsetof(struct node, unseen_idx);
	p->opts = *opts;
	p->policy.root_exempt = opts->root_exempt;
	p->owner_uid = geteuid();
	p->owner_gid = getegid();
	p->daemon_pid = getpid();
	p->next_ino = POOL_ROOT_INO + 1;
	/* Files pool_commit takes out of the lock count as the reaper's until unlinked. */
	p->unlinks.outside = &p->reaper.outside;
	r = pthread_mutex_init(&p->lock, NULL);
	if (r)
		return -r;
	/* memset left it all zeros, which is glibc's static initializer too: destroying it is
	 * safe even if this init is never reached. */
	r = pthread_cond_init(&p->probe_done, NULL);
	if (!r)
		r = pthread_cond_init(&p->releases_drained, NULL);
	if (!r)
		r = pthread_cond_init(&p->forgotten_cond, NULL);
	if (!r)
		r = pthread_cond_init(&p->lock_turn, NULL);
	if (r)
		return -r;
	fault_use(&p->fault);
	p->root = pool_alloc(p, sizeof(*p->root));
	if (!p->root || hash_init(&p->inos, 1024, pool_alloc_cb, p) < 0 ||
	    names_init(&p->names, pool_alloc_cb, p) < 0)
		return -ENOMEM;
	p->root->ino = POOL_ROOT_INO;
	p->root->type = S_IFDIR;
	p->root->ends.is_dir = true;
	p->root->uid = p->owner_uid;
	p->root->gid = p->owner_gid;
	p->root->perm = 01777;
	p->root->life.is_dir = true;
	p->root->life.is_root = true;
	p->root->life.linked = true;
	p->root->life.lookups = 1;
	pool_set_now(&p->root->mtime);
	p->root->atime = p->root->ctime = p->root->mtime;
	pool_ino_insert(p, p->root);
	p->linger_timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (p->linger_timer_fd < 0)
		return -errno;
	r = backing_open(&p->backing, &(struct backing_cfg){.dir = opts->backing,
							    .dir_given = opts->backing_given,
							    .limit = opts->max_size,
							    .huge = options_huge_name(opts->huge),
							    .huge_given = opts->huge_given,
							    .user_limit = opts->max_user_size});
	if (r < 0)
		return r;
	/* Without a memory controller (or its files) every page is the daemon's, as it always was
	 * where no job has a limit: say so, the admin may have expected otherwise. */
	r = memcg_open(&p->memcg, "/proc/self/mountinfo", "/proc/self/cgroup");
	if (r < 0)
		log_warn("no memory cgroup found (%s): pool pages are charged to the daemon's own "
			 "memory, not to the jobs that make them",
			 strerror(-r));
	else
		log_info("growth is charged to the caller's memory cgroup (cgroup %s, %s)",
			 p->memcg.v1 ? "v1" : "v2", p->memcg.root);
	return 0;
}

void pool_destroy(struct pool *p)
{
	/* First: its thread uses the store. */
	pool_reaper_stop(p);
	if (p->inos.buckets) {
		hash_settle(&p->inos);
		for (size_t b = 0; b < p->inos.nbuckets; b++) {
			struct node *n = POOL_NODE_OF_LINK(p->inos.buckets[b]), *next;
			for (; n; n = next) {
				next = POOL_NODE_OF_LINK(n->ino_link.next);
				pool_node_free(n);
			}
		}
	}
	while (p->zombies) {
		struct node *n = p->zombies;
		p->zombies = n->zombie_next;
		pool_node_free(n);
	}
	while (p->inval_head) {
		struct pending_inval *pi = p->inval_head;
		p->inval_head = pi->next;
		free(pi);
	}
	/* The store goes as a whole at unmount (backing_close). */
	free(pool_backing_list_take(&p->unlinks).files);
	timer_heap_free(&p->lingers);
	part_set_free(&p->unseen);
	while (p->users) {
		struct user_usage *u = p->users;
		p->users = u->next;
		free(u);
	}
	pool_sources_free(p);
	hash_destroy(&p->inos);
	names_destroy(&p->names);
	/* Before the store: a charger may still hold one of its files for a moment. */
	memcg_close(&p->memcg);
	backing_close(&p->backing);
	if (p->linger_timer_fd >= 0)
		close(p->linger_timer_fd);
	p->linger_timer_fd = -1;
	if (p->hold_poll_fd >= 0)
		close(p->hold_poll_fd);
	p->hold_poll_fd = -1;
	pthread_cond_destroy(&p->probe_done);
	pthread_cond_destroy(&p->releases_drained);
	pthread_cond_destroy(&p->forgotten_cond);
	pthread_cond_destroy(&p->lock_turn);
	pthread_mutex_destroy(&p->lock);
}
