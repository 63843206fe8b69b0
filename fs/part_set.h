/* part_set: a set of items in two parts, front and back, for the pool's per-state lists of
 * nodes (docs/design.md "Work that grows with the pool"): adding, removing and moving an item
 * from one part to the other cost O(1), and each part is a plain array slice, so its owner
 * reaches every item of one state without walking anything else. Each item keeps its place in
 * a uint32_t at `idx_off` (0 while in no set): 4 bytes, where a linked list would cost 16. The
 * caller grows `items` (array.h) before an add, so the allocation and its fault site stay the
 * caller's. Pure: no lock, no allocation, nothing of the pool. */
#ifndef POOLFS_PART_SET_H
#define POOLFS_PART_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct part_set {
	void **items; /* [0, front): the front part; [front, count): the back part */
	size_t count, cap, front;
	size_t idx_off; /* where each item keeps its place + 1 (uint32_t) */
};

static inline uint32_t *part_set_idx(const struct part_set *s, const void *item)
{
	return (uint32_t *)(void *)((char *)(uintptr_t)item + s->idx_off);
}

static inline bool part_set_has(const struct part_set *s, const void *item)
{
	return *part_set_idx(s, item) != 0;
}

/* In the front part? (The item is in the set.) */
static inline bool part_set_in_front(const struct part_set *s, const void *item)
{
	return *part_set_idx(s, item) - 1 < s->front;
}

/* Add `item`, which is in no set, to the front or back part. The caller made room first
 * (count < cap). */
void part_set_add(struct part_set *s, void *item, bool front);
/* Move `item`, which is in the set, to the front or back part (nothing if it is there). */
void part_set_move(struct part_set *s, void *item, bool front);
/* Take `item` out; nothing if it is in no set. */
void part_set_remove(struct part_set *s, void *item);
/* Free the storage (accepts a set never used); the items keep their stale places. */
void part_set_free(struct part_set *s);

#endif
