/* hash_table: the daemon's one hash table, chained and intrusive: an item embeds a `struct
 * hash_link` carrying its hash, so the table never calls back to hash an item, and growing it
 * (doubling once it is as full as it is wide) only moves links. It serves the name table (names
 * by folder and text, name_table.c) and the pool's entry table (nodes by inode number,
 * pool_tree.c). It compares nothing: a lookup walks hash_chain and matches items itself. It
 * takes no lock and calls nothing of the pool, so it sits with the pure modules. */
#ifndef POOLFS_HASH_TABLE_H
#define POOLFS_HASH_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "fault.h"

struct hash_link {
	struct hash_link *next;
	size_t hash;
};

struct hash_table {
	struct hash_link **buckets;
	size_t nbuckets; /* a power of two */
	size_t count;
	fault_alloc_fn alloc; /* zeroed memory or NULL (fault.h) */
	void *alloc_ctx;
};

/* An empty table of `nbuckets` (a power of two). 0 or -ENOMEM. */
int hash_init(struct hash_table *t, size_t nbuckets, fault_alloc_fn alloc, void *alloc_ctx);
/* Free the buckets, not the items (accepts a table hash_init never reached). */
void hash_destroy(struct hash_table *t);

/* Add `l` with `hash`. Cannot fail: a table that cannot grow (a benign allocation, fault.h)
 * stays as it is, only slower. */
void hash_insert(struct hash_table *t, struct hash_link *l, size_t hash);
/* Take `l` out (nothing if it is not in). */
void hash_remove(struct hash_table *t, struct hash_link *l);
/* The chain that holds every item of `hash` (and others): match link->hash, then the item. */
struct hash_link *hash_chain(const struct hash_table *t, size_t hash);

#endif
