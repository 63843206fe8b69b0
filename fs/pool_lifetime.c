/* pool_lifetime: the application of lifetime decisions (lifetime.h) — removal, lingering, the
 * kernel's references and names — and the pool lock, whose release hands on what a section left
 * for after it (invalidations, nodes and names to free, backing files to unlink). Lingering
 * removals wait in a heap by due time (pool->lingers), so their timer takes the due ones off
 * the top instead of walking the table (docs/design.md "Work that grows with the pool"). Calls
 * the tables, accounting and attributes below it, never the holds or handlers above
 * (docs/design.md "Layout"). */
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

#include "array.h"
#include "log.h"
#include "pool_internal.h"
#include "watch.h"

bool pool_name_cacheable(const struct pool *p, const struct node *dir)
{
	return !(options_multi_user(&p->opts) && dir == p->root);
}

bool pool_name_cached_now(const struct pool *p, const struct node *dir, const struct node *n)
{
	/* The walk up for a folder hold only when nothing closer keeps the entry. */
	return pool_name_cacheable(p, dir) &&
	       (node_is_dir(n) || lifetime_in_use(&n->life, false) || pool_held_above(p, n));
}

void pool_lookup_add(struct node *n)
{
	n->life.lookups++;
}

/* Have pool_commit() unlink the backing file of `ino` once the lock is released (inode numbers
 * are never reused, so nothing can meet the file meanwhile); unlinked at once if the list cannot
 * grow. Lock held. */
static void unlink_backing_later(struct pool *p, const struct backing_file *f)
{
	if (!pool_backing_list_push(&p->unlinks, f))
		pool_unlink_backing(p, f);
}

/* The data of `n` is gone for good: unlink its backing file, forget its accounting. `reaped`:
 * the unlink goes to the reaper whatever the file's size (a FORGET's: no reply waits for it,
 * and libfuse starts no new worker for one, so it must not block on a big unlink: docs/design.md
 * "The LOOKUP/OPEN race"). */
static void destroy(struct pool *p, struct node *n, bool reaped)
{
	struct user_usage *u;

	poolstats_removed(&p->stats, n->let_go);
	if (pool_has_backing(n)) {
		/* Small only if known small: the node's copy of the backing file's size holds
		 * while nothing but the daemon could change it, and a write on passthrough that
		 * the daemon never saw may have made it big (pool_reaper.c). */
		bool small = reaped ||
			     (n->battr_valid && (uint64_t)n->battr.st_size <= POOL_REAP_MAX &&
			      n->reserved <= POOL_REAP_MAX);

		unlink_backing_later(
			p, &(struct backing_file){.ino = n->ino, .uid = n->uid, .small = small});
		pool_reserve(p, n, 0);
	}
	if (n->target)
		pool_meta_charge(p, n->uid, -(int64_t)(strlen(n->target) + 1));
	u = pool_usage_of(p, n->uid, false);
	if (u && u->entries)
		u->entries--;
	if (p->entries)
		p->entries--;
	if (n->linger_due_ms) {
		n->linger_due_ms = 0;
		p->lingering--;
	}
	/* Normally an unlinked entry has no holds left (unlink drops them); drop any anyway,
	 * here under the lock, so no source keeps a pointer to a node about to be freed. */
	pool_drop_holds(p, n);
	pool_free_xattrs(p, n);
	n->life.removed = true;
	pool_unseen_place(p, n);
	if (n->awaiting_forget) {
		n->awaiting_forget = false;
		p->awaiting_forget--;
		p->forgotten++;
		pthread_cond_broadcast(&p->forgotten_cond);
	}
	if (lifetime_can_free(&n->life)) {
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

/* An unused entry goes under every name at once (docs/interface.md "Lifetime"), and the kernel
 * is told each name's entry was deleted, so that it drops the name and, once no walk holds the
 * inode any more, forgets it (docs/design.md "Name invalidation"). Each folder that lost a name
 * but the last is rechecked here; the last is returned, for pool_recheck's walk up. Folders
 * have one name, so past the first level the walk is a single chain. */
static struct node *remove_names(struct pool *p, struct node *n)
{
	struct name *nm;
	struct node *dir = NULL;

	while ((nm = n->ends.names)) {
		if (dir)
			pool_recheck(p, dir);
		dir = pool_name_dir(nm);
		pool_queue_inval(p, dir->ino, nm->text, n->ino);
		pool_unlink(p, nm);
	}
	return dir;
}

/* A heap entry still stands for its node's lingering (not cancelled, not moved). */
static bool linger_entry_live(void *ctx, const struct timer_entry *e)
{
	const struct node *n = pool_node(ctx, e->key);

	return n && n->linger_due_ms == e->due;
}

/* Put `n`'s new due time on the heap. False when out of memory: then it cannot wait. */
static bool linger_push(struct pool *p, struct node *n, uint64_t due)
{
	struct timer_entry *items;

	/* Entries of removals cancelled or moved stay until they come up: shed them once they
	 * outnumber the live ones, so the heap stays in proportion to what lingers. */
	if (p->lingers.count >= 64 && p->lingers.count > 2 * p->lingering)
		timer_heap_filter(&p->lingers, linger_entry_live, p);
	items = array_room(p->lingers.items, &p->lingers.cap, p->lingers.count, 16);
	if (!items) {
		log_warn("no memory to keep inode %" PRIu64 " lingering; removing it at once",
			 n->ino);
		return false;
	}
	p->lingers.items = items;
	timer_heap_push(&p->lingers, (struct timer_entry){.due = due, .key = n->ino});
	return true;
}

/* linger= keeps an unused entry listed for a while (docs/design.md "Lingering"): true while it
 * waits, counted from the moment it fell unused. */
static bool linger_waits(struct pool *p, struct node *n)
{
	uint64_t now = pool_now_ms(), due;

	if (!n->linger_base_ms)
		n->linger_base_ms = now + p->opts.linger_ms;
	/* A thread in the kernel's retry of an open looked it up: wait for that OPEN too
	 * (pool_stale.c). */
	due = n->retry_until_ms > n->linger_base_ms ? n->retry_until_ms : n->linger_base_ms;
	if (due > now &&
	    (due == n->linger_due_ms || (linger_arm(p, due) == 0 && linger_push(p, n, due)))) {
		if (!n->linger_due_ms)
			p->lingering++;
		n->linger_due_ms = due;
		return true;
	}
	if (n->linger_due_ms) {
		n->linger_due_ms = 0;
		p->lingering--;
	}
	return false;
}

bool pool_gone(const struct pool *p, const struct node *n)
{
	return n != p->root && !n->life.linked && !lifetime_in_use(&n->life, false);
}

/* `n` is gone: only the kernel's references keep it, and its room. */
static void note_awaiting_forget(struct pool *p, struct node *n)
{
	if (n->awaiting_forget || n->life.removed || !pool_gone(p, n))
		return;
	n->awaiting_forget = true;
	p->awaiting_forget++;
}

/* Apply the verdict to one node. Returns the folder above that lost a child, if any. */
static struct node *apply(struct pool *p, struct node *n)
{
	/* The walk up for a folder hold only when nothing closer keeps the entry: a folder that
	 * gained a child or a file still open is decided at once. */
	bool above = !lifetime_in_use(&n->life, false) && pool_held_above(p, n);
	enum lifetime_verdict v = lifetime_decide(&n->life, above);
	struct node *parent = NULL;

	pool_unseen_place(p, n);
	if (v == LIFETIME_KEEP) {
		if ((n->linger_due_ms || n->linger_base_ms) && lifetime_in_use(&n->life, above)) {
			if (n->linger_due_ms)
				p->lingering--;
			n->linger_due_ms = 0;
			n->linger_base_ms = 0;
		}
		note_awaiting_forget(p, n);
		return NULL;
	}
	if (v == LIFETIME_REMOVE) {
		uint8_t let_go = n->let_go;

		if (linger_waits(p, n))
			return NULL;
		/* Its names go because it is unused: not an unlink of its own. */
		parent = remove_names(p, n);
		n->let_go = let_go;
		/* The data stays while the kernel may still open it (docs/design.md "The
		 * LOOKUP/OPEN race"): its FORGET rechecks it. */
		if (lifetime_decide(&n->life, false) != LIFETIME_DESTROY) {
			note_awaiting_forget(p, n);
			return parent;
		}
	}
	destroy(p, n, false);
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
	if (node_is_dir(n)) {
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
	uint64_t now = pool_now_ms();
	struct timer_entry e;

	/* The due ones from the top; an entry whose node no longer lingers then is dropped. A
	 * recheck of a node still waiting (its retry moved the time) pushes its new time. */
	while (timer_heap_peek(&p->lingers, &e) && e.due <= now) {
		timer_heap_pop(&p->lingers, &e);
		if (linger_entry_live(p, &e))
			pool_recheck(p, pool_node(p, e.key));
	}
	if (timer_heap_peek(&p->lingers, &e))
		linger_arm(p, e.due);
}

void pool_forget(struct pool *p, struct node *n, uint64_t count)
{
	n->life.lookups = count > n->life.lookups ? 0 : n->life.lookups - count;
	if (n->ino == POOL_ROOT_INO || n->life.lookups)
		return;
	n->cache_used = false; /* the kernel's inode, and its page cache, are gone */
	if (lifetime_can_free(&n->life)) {
		pool_ino_remove(p, n);
		n->zombie_next = p->zombies;
		p->zombies = n;
	} else if (!n->life.linked && lifetime_decide(&n->life, false) == LIFETIME_DESTROY) {
		/* The last thing that could still open a nameless, unused entry is gone (a nameless
		 * entry has no folder above to hold it, nor to recheck). */
		destroy(p, n, true);
	}
}

/* What a section left for after the lock: invalidations handed to the notify thread, forgotten
 * nodes freed, removed files' backing files unlinked or queued to the reaper. Lock held; returns
 * without it. */
static void unlock_and_hand_on(struct pool *p)
{
	struct pending_inval *inval = p->inval_head;
	struct node *zombies = p->zombies;
	struct name *dead_names = names_take_dead(&p->names);
	struct backing_list unlinks = pool_backing_list_take(&p->unlinks);

	p->inval_head = NULL;
	p->inval_tail = &p->inval_head;
	p->zombies = NULL;
	pthread_mutex_unlock(&p->lock);

	for (size_t i = 0; i < unlinks.count; i++)
		if (!unlinks.files[i].small || !pool_reaper_take(p, &unlinks.files[i]))
			pool_unlink_backing(p, &unlinks.files[i]);
	free(unlinks.files);

	while (zombies) {
		struct node *n = zombies;
		zombies = n->zombie_next;
		pool_node_free(n);
	}
	names_free_list(dead_names);
	while (inval) {
		struct pending_inval *next = inval->next;
		/* Not handed on (no memory): the kernel keeps the name until its entry timeout, and
		 * a nameless entry's data until the kernel forgets it (docs/design.md "Name
		 * invalidation"). */
		if (p->inval)
			p->inval(p->inval_ctx, inval->parent, inval->name, inval->namelen,
				 inval->ino);
		free(inval);
		inval = next;
	}
}

void pool_commit(struct pool *p)
{
	struct node *n;

	/* The rule's one home: every node the section touched, and what removing one touches in
	 * turn (its folder, marked when it loses the name), until nothing is left to decide. */
	while ((n = p->marked)) {
		bool subtree = n->marked == POOL_MARK_SUBTREE;

		p->marked = n->mark_next;
		n->mark_next = NULL;
		n->marked = 0;
		if (subtree)
			pool_recheck_subtree(p, n);
		else
			pool_recheck(p, n);
	}
	unlock_and_hand_on(p);
}

void pool_yield(struct pool *p)
{
	uint64_t before = p->lock_turns, mine;

	pool_commit(p);
	pool_lock(p);
	/* Usually this thread took the lock back first: wait, without it, for another's turn. A
	 * thread counted in lock_waiters is in pool_lock, so it takes the lock while we wait. */
	mine = p->lock_turns;
	p->lock_yielders++;
	while (p->lock_turns == mine && pool_lock_wanted(p))
		pthread_cond_wait(&p->lock_turn, &p->lock);
	p->lock_yielders--;
	/* Turns since this section's own: ours, and another's if any came between. */
	if (p->lock_turns - before > 1)
		p->lock_handoffs++;
}
