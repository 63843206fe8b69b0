/* timer_heap: a binary min-heap of (due time, key) pairs, the pool's timed states (lingering
 * removals) in the order they fall due: the next one is at the top, pushing and popping cost
 * O(log n), and nothing walks the entries that are not due (docs/design.md "Work that grows with
 * the pool"). Entries are never removed from the middle: an owner whose timer was cancelled or
 * moved leaves the old entry in and drops it when it comes to the top (it checks the key's
 * current due time), and timer_heap_filter sheds such stale entries in one pass when they pile
 * up. The caller grows `items` (array.h) before a push, so that the allocation and its fault
 * site stay the caller's. Pure: no lock, no allocation, nothing of the pool. */
#ifndef POOLFS_TIMER_HEAP_H
#define POOLFS_TIMER_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct timer_entry {
	uint64_t due; /* any monotonic unit; the smallest is on top */
	uint64_t key; /* what falls due: the owner's (the pool's: an inode number) */
};

struct timer_heap {
	struct timer_entry *items;
	size_t count, cap;
};

/* Add `e`. The caller made room first (count < cap). */
void timer_heap_push(struct timer_heap *h, struct timer_entry e);
/* The entry due first: false if the heap is empty. */
bool timer_heap_peek(const struct timer_heap *h, struct timer_entry *top);
/* Take the entry due first out into *top: false if the heap is empty. */
bool timer_heap_pop(struct timer_heap *h, struct timer_entry *top);
/* Keep only the entries for which keep(ctx, e) says true (O(n), then the heap order rebuilt). */
void timer_heap_filter(struct timer_heap *h, bool (*keep)(void *ctx, const struct timer_entry *e),
		       void *ctx);
/* Free the storage (accepts a heap never used). */
void timer_heap_free(struct timer_heap *h);

#endif
