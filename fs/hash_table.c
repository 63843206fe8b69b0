/* hash_table: the one hash table (see hash_table.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash_table.h"

int hash_init(struct hash_table *t, size_t nbuckets, fault_alloc_fn alloc, void *alloc_ctx)
{
	memset(t, 0, sizeof(*t));
	t->alloc = alloc;
	t->alloc_ctx = alloc_ctx;
	t->buckets = alloc(alloc_ctx, FAULT_HERE, nbuckets * sizeof(struct hash_link *), false);
	if (!t->buckets)
		return -ENOMEM;
	t->nbuckets = nbuckets;
	return 0;
}

void hash_destroy(struct hash_table *t)
{
	free(t->buckets);
	free(t->old);
	t->buckets = t->old = NULL;
	t->nbuckets = t->old_nbuckets = t->moved = t->count = 0;
}

/* Move up to `n` old buckets into the new ones; free the old ones once all are moved. */
static void hash_move(struct hash_table *t, size_t n)
{
	for (; t->old && n > 0; n--) {
		struct hash_link *l = t->old[t->moved], *next;

		for (; l; l = next) {
			size_t to = l->hash & (t->nbuckets - 1);
			next = l->next;
			l->next = t->buckets[to];
			t->buckets[to] = l;
		}
		t->old[t->moved] = NULL;
		if (++t->moved == t->old_nbuckets) {
			free(t->old);
			t->old = NULL;
			t->old_nbuckets = t->moved = 0;
		}
	}
}

/* Start growing once the table is as full as it is wide. Failing is harmless (benign): the
 * table still works, with longer chains. */
static void hash_grow(struct hash_table *t)
{
	size_t nb = t->nbuckets * 2;
	struct hash_link **grown;

	if (t->count < t->nbuckets)
		return;
	hash_settle(t); /* not reached at HASH_MOVES_PER_CALL >= 1; kept for any future step */
	grown = t->alloc(t->alloc_ctx, FAULT_HERE, nb * sizeof(struct hash_link *), true);
	if (!grown)
		return;
	t->old = t->buckets;
	t->old_nbuckets = t->nbuckets;
	t->moved = 0;
	t->buckets = grown;
	t->nbuckets = nb;
}

void hash_insert(struct hash_table *t, struct hash_link *l, size_t hash)
{
	size_t b;

	hash_move(t, HASH_MOVES_PER_CALL);
	hash_grow(t);
	b = hash & (t->nbuckets - 1);
	l->hash = hash;
	l->next = t->buckets[b];
	t->buckets[b] = l;
	t->count++;
}

/* Unlink `l` from the chain at *pp: true if it was there. */
static bool chain_remove(struct hash_link **pp, struct hash_link *l)
{
	for (; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			return true;
		}
	}
	return false;
}

void hash_remove(struct hash_table *t, struct hash_link *l)
{
	if ((t->old && chain_remove(&t->old[l->hash & (t->old_nbuckets - 1)], l)) ||
	    chain_remove(&t->buckets[l->hash & (t->nbuckets - 1)], l))
		t->count--;
	hash_move(t, HASH_MOVES_PER_CALL);
}

struct hash_link *hash_first(const struct hash_table *t, size_t hash, struct hash_walk *w)
{
	struct hash_link *l = t->buckets[hash & (t->nbuckets - 1)];

	/* An old bucket not moved yet may still hold items of this hash. */
	w->then = t->old ? t->old[hash & (t->old_nbuckets - 1)] : NULL;
	if (l)
		return l;
	l = w->then;
	w->then = NULL;
	return l;
}

struct hash_link *hash_next(struct hash_walk *w, const struct hash_link *l)
{
	struct hash_link *next = l->next;

	if (next)
		return next;
	next = w->then;
	w->then = NULL;
	return next;
}

void hash_settle(struct hash_table *t)
{
	if (t->old)
		hash_move(t, t->old_nbuckets - t->moved);
}
