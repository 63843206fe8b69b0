/* array: the daemon's one growable array and ARRAY_SIZE. An array is three fields of its owner
 * (items, count, capacity); array_room makes room for one more, doubling, through the fault
 * hook (fault.h) at the caller's site. Header only, so each caller's site is its own. */
#ifndef POOLFS_ARRAY_H
#define POOLFS_ARRAY_H

#include <stddef.h>

#include "fault.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* `items` with room for item number `count` (doubled from `first` when full, *cap updated), or
 * NULL when out of memory: then `items` and *cap are as they were. */
#define array_room(items, cap, count, first)                                                       \
	array_room_at(FAULT_HERE, (items), (cap), (count), sizeof(*(items)), (first))

static inline void *array_room_at(const char *site, void *items, size_t *cap, size_t count,
				  size_t size, size_t first)
{
	size_t grown_cap;
	void *grown;

	if (count < *cap)
		return items;
	grown_cap = *cap ? *cap * 2 : first;
	grown = fault_realloc_at(site, items, grown_cap, size, false);
	if (grown)
		*cap = grown_cap;
	return grown;
}

#endif
