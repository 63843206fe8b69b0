/* part_set: see part_set.h. */
#include <stdlib.h>

#include "part_set.h"

static void place(struct part_set *s, size_t at, void *item)
{
	s->items[at] = item;
	*part_set_idx(s, item) = (uint32_t)(at + 1);
}

static void swap(struct part_set *s, size_t a, size_t b)
{
	void *x = s->items[a];

	if (a == b)
		return;
	place(s, a, s->items[b]);
	place(s, b, x);
}

void part_set_add(struct part_set *s, void *item, bool front)
{
	place(s, s->count++, item);
	if (front)
		part_set_move(s, item, true);
}

void part_set_move(struct part_set *s, void *item, bool front)
{
	size_t at = *part_set_idx(s, item) - 1;

	if (front && at >= s->front) {
		swap(s, at, s->front);
		s->front++;
	} else if (!front && at < s->front) {
		s->front--;
		swap(s, at, s->front);
	}
}

void part_set_remove(struct part_set *s, void *item)
{
	if (!part_set_has(s, item))
		return;
	part_set_move(s, item, false);
	swap(s, *part_set_idx(s, item) - 1, s->count - 1);
	s->count--;
	*part_set_idx(s, item) = 0;
}

void part_set_free(struct part_set *s)
{
	free(s->items);
	s->items = NULL;
	s->count = s->cap = s->front = 0;
}
