/* pool_check: every invariant of the pool's state, checked in one pass (fault builds only).
 *
 * The faultsim tests run an operation with an injected failure and then ask, through the root's
 * user.poolfs.debug.check, whether the node table, names, counters and holds still agree with
 * each other: an out-of-memory path that left half a change behind shows up here. Lock held.
 * Both functions here walk the whole entry table (and pool_check reads every file's size): only
 * the test-only user.poolfs.debug.* names reach them, never a request of a production daemon
 * (docs/design.md "Work that grows with the pool"). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "array.h"
#include "pool_internal.h"

struct tally {
	uid_t uid;
	uint64_t entries, bytes, meta;
};

struct check {
	struct pool *p;
	char *buf;
	size_t len;
	struct tally *users;
	size_t nusers, cap;
	uint64_t entries, bytes, names, lingering;
	int64_t opens, maybe_mapped, held; /* the gauges of poolstats.h, counted */
};

static int fail(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->buf, c->len, fmt, ap);
	va_end(ap);
	return -EUCLEAN;
}

static struct tally *tally_of(struct check *c, uid_t uid)
{
	for (size_t i = 0; i < c->nusers; i++)
		if (c->users[i].uid == uid)
			return &c->users[i];
	struct tally *room = array_room(c->users, &c->cap, c->nusers, 16);

	if (!room)
		return NULL;
	c->users = room;
	memset(&c->users[c->nusers], 0, sizeof(c->users[0]));
	c->users[c->nusers].uid = uid;
	return &c->users[c->nusers++];
}

/* Children, names and holds of one node. */
static int check_links(struct check *c, struct node *n)
{
	uint32_t children = 0, subdirs = 0;

	uint32_t names = 0;

	for (struct name *k = n->ends.children; k; k = k->sib_next) {
		if (k->dir != &n->ends)
			return fail(c, "inode %" PRIu64 ": a name in it has another folder\n",
				    n->ino);
		if (pool_name_in(c->p, n, k->text) != k)
			return fail(c, "inode %" PRIu64 ": name '%s' not in the name table\n",
				    pool_name_entry(k)->ino, k->text);
		children++;
		subdirs += node_is_dir(pool_name_entry(k));
	}
	for (struct name *k = n->ends.names; k; k = k->alias_next) {
		if (k->entry != &n->ends || !k->dir)
			return fail(c, "inode %" PRIu64 ": one of its names is not its own\n",
				    n->ino);
		names++;
	}
	if (names != n->ends.nnames || (node_is_dir(n) && names > 1))
		return fail(c, "inode %" PRIu64 ": %u names listed, counter says %u\n", n->ino,
			    names, n->ends.nnames);
	if (children != n->life.children)
		return fail(c, "inode %" PRIu64 ": %u children listed, counter says %u\n", n->ino,
			    children, n->life.children);
	if (subdirs != n->ends.subdirs)
		return fail(c, "inode %" PRIu64 ": %u folders listed, counter says %u\n", n->ino,
			    subdirs, n->ends.subdirs);
	if (hold_count(n->holds) != n->life.holds)
		return fail(c, "inode %" PRIu64 ": %zu holds listed, counter says %u\n", n->ino,
			    hold_count(n->holds), n->life.holds);
	for (struct hold *h = n->holds; h; h = h->node_next) {
		if (h->node != n)
			return fail(c, "inode %" PRIu64 ": a hold names another node\n", n->ino);
		if (h->src && h->src->ended)
			return fail(c, "inode %" PRIu64 ": a hold of an ended source\n", n->ino);
	}
	if (n->ino != POOL_ROOT_INO && n->life.linked != (names > 0))
		return fail(c, "inode %" PRIu64 ": linked flag and names disagree\n", n->ino);
	return 0;
}

/* The per-state structures agree with the node: its place in `unseen` with its state, and a
 * lingering node's due time on the heap. */
static int check_states(struct check *c, struct node *n)
{
	const struct pool *p = c->p;
	bool waiting = n->life.maybe_mapped && n->life.opens == 0 && !n->life.removed;
	bool found = false;

	if (part_set_has(&p->unseen, n)) {
		if (n->life.removed)
			return fail(c, "inode %" PRIu64 ": removed but still in unseen\n", n->ino);
		if (part_set_in_front(&p->unseen, n) != waiting)
			return fail(c, "inode %" PRIu64 ": in the wrong part of unseen\n", n->ino);
	} else if (waiting) {
		return fail(c, "inode %" PRIu64 ": waits for the mapping proof, not in unseen\n",
			    n->ino);
	}
	for (size_t i = 0; n->linger_due_ms && !found && i < p->lingers.count; i++)
		found = p->lingers.items[i].key == n->ino &&
			p->lingers.items[i].due == n->linger_due_ms;
	if (n->linger_due_ms && !found)
		return fail(c, "inode %" PRIu64 ": lingers, not on the heap\n", n->ino);
	return 0;
}

/* Lifetime, accounting and usage tallies of one node. */
static int check_node(struct check *c, struct node *n)
{
	struct tally *t;
	int r;

	c->opens += n->life.opens;
	c->maybe_mapped += n->life.maybe_mapped;
	c->held += n->life.holds > 0;
	r = check_states(c, n);
	if (r < 0)
		return r;
	if (n->ino == POOL_ROOT_INO)
		return check_links(c, n);
	if (n->life.removed) {
		if (n->life.linked || n->holds || n->xattrs.head || n->reserved)
			return fail(c, "inode %" PRIu64 ": removed but still named or charged\n",
				    n->ino);
		return 0;
	}
	r = check_links(c, n);
	if (r < 0)
		return r;
	if (n->linger_due_ms)
		c->lingering++;
	else if (lifetime_decide(&n->life, pool_held_above(c->p, n)) != LIFETIME_KEEP)
		return fail(c, "inode %" PRIu64 ": unused but not removed\n", n->ino);
	c->entries++;
	c->bytes += n->reserved;
	c->names += n->ends.nnames;
	t = tally_of(c, n->uid);
	if (!t)
		return -ENOMEM;
	t->entries++;
	t->bytes += n->reserved;
	t->meta += (uint64_t)xattr_total_cost(&n->xattrs);
	if (n->ends.nnames > 1)
		t->meta += (uint64_t)(n->ends.nnames - 1) * POOL_NAME_COST;
	if (n->target)
		t->meta += strlen(n->target) + 1;
	for (struct hold *h = n->holds; h; h = h->node_next) {
		struct tally *ht = tally_of(c, h->uid);
		if (!ht)
			return -ENOMEM;
		ht->meta += sizeof(struct hold);
	}
	return 0;
}

static int check_totals(struct check *c)
{
	struct pool *p = c->p;

	if (c->entries != p->entries || c->bytes != p->bytes)
		return fail(c,
			    "pool counters: entries %" PRIu64 "/%" PRIu64 " bytes %" PRIu64
			    "/%" PRIu64 " (counted/kept)\n",
			    c->entries, p->entries, c->bytes, p->bytes);
	if (c->names != p->names.hash.count)
		return fail(c, "name table holds %zu names, %" PRIu64 " entries are named\n",
			    p->names.hash.count, c->names);
	if (c->lingering != p->lingering)
		return fail(c, "%" PRIu64 " entries linger, counter says %zu\n", c->lingering,
			    p->lingering);
	int64_t gauges[3] = {atomic_load(&p->stats.open_handles),
			     atomic_load(&p->stats.maybe_mapped), atomic_load(&p->stats.held)};
	if (c->opens != gauges[0] || c->maybe_mapped != gauges[1] || c->held != gauges[2])
		return fail(c,
			    "gauges: open handles %" PRId64 "/%" PRId64 ", maybe mapped %" PRId64
			    "/%" PRId64 ", held %" PRId64 "/%" PRId64 " (counted/kept)\n",
			    c->opens, gauges[0], c->maybe_mapped, gauges[1], c->held, gauges[2]);
	uint64_t meta = 0;

	for (struct user_usage *u = p->users; u; u = u->next)
		meta += u->meta;
	if (meta != p->meta)
		return fail(c,
			    "users' meta adds up to %" PRIu64 ", pool counter says %" PRIu64 "\n",
			    meta, p->meta);
	for (struct user_usage *u = p->users; u; u = u->next) {
		struct tally *t = tally_of(c, u->uid);
		if (!t)
			return -ENOMEM;
		if (t->entries != u->entries || t->bytes != u->bytes || t->meta != u->meta)
			return fail(c,
				    "uid %u: entries %" PRIu64 "/%" PRIu64 " bytes %" PRIu64
				    "/%" PRIu64 " meta %" PRIu64 "/%" PRIu64 " (counted/kept)\n",
				    (unsigned)u->uid, t->entries, u->entries, t->bytes, u->bytes,
				    t->meta, u->meta);
	}
	for (struct hold_source *s = p->sources; s; s = s->next)
		for (struct hold *h = s->holds; h; h = h->src_next)
			if (h->src != s)
				return fail(c, "a source lists a hold of another source\n");
	return 0;
}

/* Re-read every file's size from the backing store into the usage counters: what the counters
 * say must then hold whatever `unseen` missed. */
static void refresh_all(struct pool *p)
{
	hash_settle(&p->inos); /* a walk of every bucket */
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

int pool_check(struct pool *p, char *buf, size_t len)
{
	struct check c = {.p = p, .buf = buf, .len = len};
	int r = 0;

	/* Passthrough writes grow files behind our back: take the sizes as they are now. */
	refresh_all(p);
	for (size_t b = 0; b < p->inos.nbuckets && r == 0; b++)
		for (struct node *n = POOL_NODE_OF_LINK(p->inos.buckets[b]); n && r == 0;
		     n = POOL_NODE_OF_LINK(n->ino_link.next))
			r = check_node(&c, n);
	if (r == 0)
		r = check_totals(&c);
	free(c.users);
	if (r == 0)
		snprintf(buf, len, "ok\n");
	return r;
}

size_t pool_unsettled(struct pool *p, struct pool_unsettled *why)
{
	size_t count = 0;

	*why = (struct pool_unsettled){0};
	hash_settle(&p->inos); /* a walk of every bucket */
	for (size_t b = 0; b < p->inos.nbuckets; b++)
		for (struct node *n = POOL_NODE_OF_LINK(p->inos.buckets[b]); n;
		     n = POOL_NODE_OF_LINK(n->ino_link.next)) {
			why->open += n->life.opens > 0;
			why->maybe_mapped += n->life.maybe_mapped;
			why->awaiting_forget += n->awaiting_forget;
			count += n->life.opens > 0 || n->life.maybe_mapped || n->awaiting_forget;
		}
	return count;
}
