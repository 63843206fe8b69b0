/* hash_table: the daemon's one hash table, chained and intrusive: an item embeds a `struct
 * hash_link` carrying its hash, so the table never calls back to hash an item. It serves the name
 * table (names by folder and text, name_table.c) and the pool's entry table (nodes by inode
 * number, pool_tree.c). It compares nothing: a lookup walks the links that may hold a hash
 * (hash_first, hash_next) and matches items itself. It takes no lock and calls nothing of the
 * pool, so it sits with the pure modules.
 *
 * Growing is spread over later calls, so that no insert pays for the whole table (docs/design.md
 * "Work kept per state, not per pool"): once the table is as full as it is wide, it takes buckets
 * twice as many, and every insert and remove then moves a few of the old buckets into them
 * (HASH_MOVES_PER_CALL), the old ones freed when the last is moved. Until then an item is in the
 * old buckets or the new ones; a lookup looks in both. */
#ifndef POOLFS_HASH_TABLE_H
#define POOLFS_HASH_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "fault.h"

/* Old buckets moved per insert or remove while the table grows: at 1 or more, the move ends
 * before the table is full again (an old table of N buckets is moved in N / 8 inserts, the next
 * growth needs N more). */
#define HASH_MOVES_PER_CALL 8

struct hash_link {
	struct hash_link *next;
	size_t hash;
};

struct hash_table {
	struct hash_link **buckets;
	size_t nbuckets; /* a power of two */
	size_t count;
	/* While growing: the buckets being emptied into `buckets`, and how many of them (from
	 * the first) are moved already; NULL when the table is not growing. */
	struct hash_link **old;
	size_t old_nbuckets;
	size_t moved;
	fault_alloc_fn alloc; /* zeroed memory or NULL (fault.h) */
	void *alloc_ctx;
};

/* A lookup's place: the chain still to walk once the first ends. */
struct hash_walk {
	struct hash_link *then;
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
/* Every item of `hash` (among others): `for (l = hash_first(t, hash, &w); l; l = hash_next(&w,
 * l))`, matching link->hash, then the item. Nothing may be inserted or removed during the walk. */
struct hash_link *hash_first(const struct hash_table *t, size_t hash, struct hash_walk *w);
struct hash_link *hash_next(struct hash_walk *w, const struct hash_link *l);
/* Finish a growth in progress, so that `buckets` holds every item: for what walks the whole
 * table anyway (teardown, the consistency check). */
void hash_settle(struct hash_table *t);

#endif
