/* pool: the application of lifetime decisions — removal, lingering, the kernel's references and
 * names — and the pool's life: init, lock, teardown (see pool.h). The node table and names are
 * pool_tree.c's, attributes pool_attrs.c's, quotas and usage pool_usage.c's. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "pool.h"
#include "pool_internal.h"
#include "watch.h"

static int queue_inval(struct pool *p, uint64_t parent, const char *name, uint64_t ino);

uint64_t pool_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void *pool_alloc(struct pool *p, size_t size)
{
	if (fault_fire(&p->fault, FAULT_ALLOC))
		return NULL;
	return calloc(1, size);
}

void *pool_alloc_cb(void *pool, size_t size)
{
	return pool_alloc(pool, size);
}

char *pool_strdup(struct pool *p, const char *s)
{
	size_t len = strlen(s) + 1;
	char *copy = pool_alloc(p, len);

	if (copy)
		memcpy(copy, s, len);
	return copy;
}

/* ---- tree ----------------------------------------------------------------------------------- */

void pool_forget_name(struct pool *p, uint64_t dir_ino, const char *name)
{
	queue_inval(p, dir_ino, name, 0);
}

/* Queue a name for the invalidation thread (sent after unlock); with `ino`, report back. */
static int queue_inval(struct pool *p, uint64_t parent, const char *name, uint64_t ino)
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

bool pool_name_cacheable(const struct pool *p, const struct node *dir)
{
	return !(options_multi_user(&p->opts) && dir == p->root);
}

bool pool_name_cached_now(const struct pool *p, const struct node *dir, const struct node *n)
{
	/* The walk up for a folder hold only when nothing closer keeps the entry. */
	return pool_name_cacheable(p, dir) &&
	       (n->is_dir || lifetime_in_use(&n->life, false) || pool_held_above(p, n));
}

void pool_lookup_add(struct node *n, bool name_cached)
{
	n->nlookup++;
	if (name_cached)
		n->unnamed = false; /* the kernel may cache the name again */
}

/* Before an unused entry's names go, the kernel must drop its cached copies: an open(O_CREAT)
 * through a cached name that reached a removed entry would fail with ESTALE, and the kernel's
 * one retry can lose the same race again under churn. So the removal waits one round trip of
 * the invalidation thread for every name the kernel may cache; an OPEN meanwhile finds the
 * entry and keeps it. True while waiting. Lock held. */
static bool unname_first(struct pool *p, struct node *n)
{
	uint32_t asked = 0;

	if (n->is_dir || n->unnamed || n->nlookup == 0)
		return false;
	if (n->unnaming)
		return true;
	for (struct name *nm = n->ends.names; nm && p->inval; nm = nm->alias_next) {
		/* A name that cannot be asked about is removed at once (the ESTALE race, not a
		 * leak). */
		if (pool_name_cacheable(p, pool_name_dir(nm)) &&
		    queue_inval(p, pool_name_dir(nm)->ino, nm->text, n->ino) == 0)
			asked++;
	}
	n->unnaming = asked;
	return asked > 0;
}

void pool_name_invalidated(struct pool *p, uint64_t ino)
{
	struct node *n;

	pool_lock(p);
	n = pool_node(p, ino);
	if (n && n->unnaming && !n->life.removed && --n->unnaming == 0) {
		n->unnamed = true;
		pool_recheck(p, n);
	}
	pool_unlock(p);
}

static void unlink_backing(struct pool *p, const struct backing_file *f)
{
	int r = backing_unlink(&p->backing, f->uid, f->ino);

	if (r < 0 && r != -ENOENT)
		log_warn("removing backing file of inode %" PRIu64 ": %s", f->ino, strerror(-r));
}

/* Have pool_unlock() unlink the backing file of `ino` once the lock is released (inode numbers
 * are never reused, so nothing can meet the file meanwhile); unlinked at once if the list cannot
 * grow. Lock held. */
static void unlink_backing_later(struct pool *p, const struct backing_file *f)
{
	if (p->unlink_count == p->unlink_cap) {
		size_t cap = p->unlink_cap ? p->unlink_cap * 2 : 16;
		struct backing_file *grown = realloc(p->unlink_files, cap * sizeof(*grown));

		if (!grown) {
			unlink_backing(p, f);
			return;
		}
		p->unlink_files = grown;
		p->unlink_cap = cap;
	}
	p->unlink_files[p->unlink_count++] = *f;
}

/* The data of `n` is gone for good: unlink its backing file, forget its accounting. */
static void destroy(struct pool *p, struct node *n)
{
	struct user_usage *u;

	if (pool_has_backing(n)) {
		unlink_backing_later(p, &(struct backing_file){.ino = n->ino, .uid = n->uid});
		pool_reserve(p, n, 0);
	}
	if (n->target)
		pool_meta_charge(p, n->uid, -(int64_t)(strlen(n->target) + 1));
	u = pool_usage_of(p, n->uid, false);
	if (u && u->entries)
		u->entries--;
	if (p->entries)
		p->entries--;
	n->unnaming = 0;
	if (n->linger_due_ms) {
		n->linger_due_ms = 0;
		p->lingering--;
	}
	/* Normally an unlinked entry has no holds left (unlink drops them); drop any anyway,
	 * here under the lock, so no source keeps a pointer to a node about to be freed. */
	pool_drop_holds(p, n);
	pool_free_xattrs(p, n);
	n->life.removed = true;
	if (lifetime_can_free(&n->life, n->nlookup)) {
		pool_ino_remove(p, n);
		n->zombie_next = p->zombies;
		p->zombies = n;
	}
}

bool pool_held_above(const struct pool *p, const struct node *n)
{
	const struct node *walked = NULL;

	/* Every name's folders: a hard link in a held folder keeps the entry under all names. Names
	 * made one after another in one folder sit next to each other in the list: a folder just
	 * walked is not walked again, so 65000 links in one folder cost one walk, not 65000. */
	for (const struct name *nm = n->ends.names; nm; nm = nm->alias_next) {
		if (pool_name_dir(nm) == walked)
			continue;
		walked = pool_name_dir(nm);
		for (const struct node *a = walked; a; a = pool_parent(a)) {
			if (a->life.holds == 0)
				continue;
			for (const struct hold *h = a->holds; h; h = h->node_next)
				if (access_hold_keeps(&p->policy, h->uid, n->uid))
					return true;
		}
	}
	return false;
}

/* Arm the linger timer for `due` (or earlier). 0 or -errno: without a timer the removal would
 * never come, so the caller then removes at once. */
static int linger_arm(struct pool *p, uint64_t due)
{
	struct itimerspec its = {0};
	uint64_t now = pool_now_ms();
	uint64_t in = due > now ? due - now : 1;

	if (p->linger_timer_fd < 0)
		return -EBADF;
	/* One timer for all: re-armed to the nearest due time each time a removal lingers; the
	 * expiry handler re-arms for whatever is still pending. */
	its.it_value.tv_sec = (time_t)(in / 1000);
	its.it_value.tv_nsec = (long)(in % 1000) * 1000000;
	struct itimerspec cur;
	if (timerfd_gettime(p->linger_timer_fd, &cur) == 0 &&
	    (cur.it_value.tv_sec || cur.it_value.tv_nsec)) {
		uint64_t cur_ms = (uint64_t)cur.it_value.tv_sec * 1000 +
				  (uint64_t)cur.it_value.tv_nsec / 1000000;
		if (cur_ms <= in)
			return 0;
	}
	if (timerfd_settime(p->linger_timer_fd, 0, &its, NULL) < 0) {
		int r = -errno;
		log_error("cannot arm the linger timer: %s; removing at once", strerror(-r));
		return r;
	}
	return 0;
}

/* An unused entry goes under every name at once (docs/interface.md "Lifetime"). Each folder
 * that lost a name but the last is rechecked here; the last is returned, for pool_recheck's
 * walk up. Folders have one name, so past the first level the walk is a single chain. */
static struct node *remove_names(struct pool *p, struct node *n)
{
	struct name *nm;
	struct node *dir = NULL;

	while ((nm = n->ends.names)) {
		if (dir)
			pool_recheck(p, dir);
		dir = pool_name_dir(nm);
		queue_inval(p, dir->ino, nm->text, 0);
		pool_unlink(p, nm);
	}
	return dir;
}

/* Apply the verdict to one node. Returns the folder above that lost a child, if any. */
static struct node *apply(struct pool *p, struct node *n)
{
	enum lifetime_verdict v = lifetime_decide(&n->life, pool_held_above(p, n));
	struct node *parent;

	if (v == LIFETIME_KEEP) {
		if ((n->linger_due_ms || n->linger_base_ms) &&
		    lifetime_in_use(&n->life, pool_held_above(p, n))) {
			if (n->linger_due_ms)
				p->lingering--;
			n->linger_due_ms = 0;
			n->linger_base_ms = 0;
		}
		return NULL;
	}
	if (v == LIFETIME_REMOVE) {
		uint64_t now = pool_now_ms();
		uint64_t due;

		/* linger= counts from the moment the entry fell unused; a grace below may push the
		 * removal later, and a grace that ends early (pool_drop_stale_lookup) pulls it back. */
		if (!n->linger_base_ms)
			n->linger_base_ms = now + p->opts.linger_ms;
		due = n->linger_base_ms;
		/* Someone looked the name up while it was in use and has not opened it yet: give
		 * that OPEN a moment, or their open(O_CREAT) would fail with ESTALE twice over
		 * under churn (the kernel retries only once). */
		for (size_t i = 0; i < sizeof(n->pending_open) / sizeof(n->pending_open[0]); i++) {
			uint64_t until = n->pending_open[i].ms + POOL_OPEN_GRACE_MS;

			if (until > n->linger_base_ms + POOL_OPEN_GRACE_MS)
				until = n->linger_base_ms + POOL_OPEN_GRACE_MS;
			if (n->pending_open[i].tid && until > now && until > due)
				due = until;
		}
		if (due > now && (due == n->linger_due_ms || linger_arm(p, due) == 0)) {
			if (!n->linger_due_ms)
				p->lingering++;
			n->linger_due_ms = due;
			return NULL;
		}
		if (n->linger_due_ms) {
			n->linger_due_ms = 0;
			p->lingering--;
		}
	}
	if (v == LIFETIME_REMOVE && unname_first(p, n))
		return NULL;
	parent = v == LIFETIME_REMOVE ? remove_names(p, n) : NULL;
	destroy(p, n);
	return parent;
}

void pool_recheck(struct pool *p, struct node *n)
{
	while (n)
		n = apply(p, n);
}

void pool_recheck_subtree(struct pool *p, struct node *n)
{
	/* Children first, so that a folder sees its final child count. A removal detaches names
	 * (freed only after the lock is released), so the next sibling is fetched before applying;
	 * if that one was detached meanwhile (another name of an entry removed below), the walk
	 * starts over: only a removal can cause that, so it ends. */
	if (n->is_dir) {
		struct name *c, *next;
restart:
		for (c = n->ends.children; c; c = next) {
			next = c->sib_next;
			pool_recheck_subtree(p, pool_name_entry(c));
			if (next && !next->dir)
				goto restart;
		}
	}
	pool_recheck(p, n);
}

void pool_linger_expire(struct pool *p)
{
	uint64_t now = pool_now_ms(), next_due = 0;

	/* Linger is rare and short: a scan of the table is simpler than a second index. */
	for (size_t b = 0; b < p->ino_buckets && p->lingering; b++) {
		struct node *n = p->ino_table[b], *next;
		for (; n; n = next) {
			next = n->ino_next;
			if (!n->linger_due_ms)
				continue;
			if (n->linger_due_ms <= now)
				pool_recheck(p, n);
			else if (!next_due || n->linger_due_ms < next_due)
				next_due = n->linger_due_ms;
		}
	}
	if (next_due)
		linger_arm(p, next_due);
}

void pool_forget(struct pool *p, struct node *n, uint64_t count)
{
	n->nlookup = count > n->nlookup ? 0 : n->nlookup - count;
	if (n->ino != POOL_ROOT_INO && lifetime_can_free(&n->life, n->nlookup)) {
		pool_ino_remove(p, n);
		n->zombie_next = p->zombies;
		p->zombies = n;
	}
}

/* ---- permissions ---------------------------------------------------------------------------- */

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

	/* At most 20 lines a second: a hostile loop must not flood the log. */
	if (p->denied_window != now) {
		p->denied_window = now;
		p->denied_count = 0;
	}
	if (++p->denied_count > 20)
		return;
	log_info("denied: uid %u may not %s inode %" PRIu64 " (owner uid %u)", (unsigned)caller,
		 what, n->ino, (unsigned)n->uid);
}

/* ---- init / teardown ------------------------------------------------------------------------ */

int pool_init(struct pool *p, const struct pool_options *opts)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->backing.parent_fd = p->backing.dir_fd = -1;
	p->linger_timer_fd = -1;
	p->hold_poll_fd = -1;
	p->inval_tail = &p->inval_head;
	p->dir_handles.prev = p->dir_handles.next = &p->dir_handles;
	p->opts = *opts;
	p->policy.root_exempt = opts->root_exempt;
	p->owner_uid = geteuid();
	p->owner_gid = getegid();
	p->daemon_pid = getpid();
	p->next_ino = POOL_ROOT_INO + 1;
	r = pthread_mutex_init(&p->lock, NULL);
	if (r)
		return -r;
	/* memset left it all zeros, which is glibc's static initializer too: destroying it is
	 * safe even if this init is never reached. */
	r = pthread_cond_init(&p->release_done, NULL);
	if (r)
		return -r;
	p->ino_buckets = 1024;
	p->ino_table = calloc(p->ino_buckets, sizeof(struct node *));
	p->root = calloc(1, sizeof(*p->root));
	if (!p->ino_table || !p->root || names_init(&p->names) < 0)
		return -ENOMEM;
	p->root->ino = POOL_ROOT_INO;
	p->root->type = S_IFDIR;
	p->root->is_dir = true;
	p->root->ends.is_dir = true;
	p->root->uid = p->owner_uid;
	p->root->gid = p->owner_gid;
	p->root->perm = 01777;
	p->root->life.is_dir = true;
	p->root->life.is_root = true;
	p->root->life.linked = true;
	p->root->nlookup = 1;
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
	return 0;
}

/* Free a node's memory. Its holds are gone already (destroy() drops them under the lock),
 * except at unmount (pool_destroy), when no other thread runs. */
static void free_node(struct node *n)
{
	xattr_clear(&n->xattrs);
	while (n->holds) {
		struct hold *h = n->holds;
		hold_unlink(&n->holds, h);
		free(h);
	}
	free(n->target);
	free(n);
}

void pool_destroy(struct pool *p)
{
	if (p->ino_table) {
		for (size_t b = 0; b < p->ino_buckets; b++) {
			struct node *n = p->ino_table[b], *next;
			for (; n; n = next) {
				next = n->ino_next;
				free_node(n);
			}
		}
	}
	while (p->zombies) {
		struct node *n = p->zombies;
		p->zombies = n->zombie_next;
		free_node(n);
	}
	while (p->inval_head) {
		struct pending_inval *pi = p->inval_head;
		p->inval_head = pi->next;
		free(pi);
	}
	/* The store goes as a whole at unmount (backing_close). */
	free(p->unlink_files);
	p->unlink_files = NULL;
	while (p->users) {
		struct user_usage *u = p->users;
		p->users = u->next;
		free(u);
	}
	pool_sources_free(p);
	free(p->ino_table);
	p->ino_table = NULL;
	names_destroy(&p->names);
	backing_close(&p->backing);
	if (p->linger_timer_fd >= 0)
		close(p->linger_timer_fd);
	p->linger_timer_fd = -1;
	if (p->hold_poll_fd >= 0)
		close(p->hold_poll_fd);
	p->hold_poll_fd = -1;
	pthread_cond_destroy(&p->release_done);
	pthread_mutex_destroy(&p->lock);
}

void pool_lock(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
}

void pool_unlock(struct pool *p)
{
	struct pending_inval *inval = p->inval_head;
	struct node *zombies = p->zombies;
	struct name *dead_names = names_take_dead(&p->names);
	struct backing_file *unlinks = p->unlink_files;
	size_t nunlinks = p->unlink_count;

	p->inval_head = NULL;
	p->inval_tail = &p->inval_head;
	p->zombies = NULL;
	if (nunlinks) {
		p->unlink_files = NULL;
		p->unlink_count = p->unlink_cap = 0;
	}
	pthread_mutex_unlock(&p->lock);

	for (size_t i = 0; i < nunlinks; i++)
		unlink_backing(p, &unlinks[i]);
	if (nunlinks)
		free(unlinks);

	while (zombies) {
		struct node *n = zombies;
		zombies = n->zombie_next;
		free_node(n);
	}
	names_free_list(dead_names);
	while (inval) {
		struct pending_inval *next = inval->next;
		bool sent = p->inval && p->inval(p->inval_ctx, inval->parent, inval->name,
						 inval->namelen, inval->ino) == 0;
		/* An entry waiting to be unnamed must not wait forever: go on without it. */
		if (!sent && inval->ino)
			pool_name_invalidated(p, inval->ino);
		free(inval);
		inval = next;
	}
}
