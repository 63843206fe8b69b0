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
	t->buckets = NULL;
	t->nbuckets = t->count = 0;
}

/* Double the buckets once the table is as full as it is wide. Failing is harmless (benign):
 * the old table still works, with longer chains. */
static void hash_grow(struct hash_table *t)
{
	size_t nb = t->nbuckets * 2;
	struct hash_link **grown;

	if (t->count < t->nbuckets)
		return;
	grown = t->alloc(t->alloc_ctx, FAULT_HERE, nb * sizeof(struct hash_link *), true);
	if (!grown)
		return;
	for (size_t b = 0; b < t->nbuckets; b++) {
		struct hash_link *l = t->buckets[b], *next;
		for (; l; l = next) {
			size_t to = l->hash & (nb - 1);
			next = l->next;
			l->next = grown[to];
			grown[to] = l;
		}
	}
	free(t->buckets);
	t->buckets = grown;
	t->nbuckets = nb;
}

void hash_insert(struct hash_table *t, struct hash_link *l, size_t hash)
{
	size_t b;

	hash_grow(t);
	b = hash & (t->nbuckets - 1);
	l->hash = hash;
	l->next = t->buckets[b];
	t->buckets[b] = l;
	t->count++;
}

void hash_remove(struct hash_table *t, struct hash_link *l)
{
	for (struct hash_link **pp = &t->buckets[l->hash & (t->nbuckets - 1)]; *pp;
	     pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			t->count--;
			return;
		}
	}
}

struct hash_link *hash_chain(const struct hash_table *t, size_t hash)
{
	return t->buckets[hash & (t->nbuckets - 1)];
}
