/* timer_heap: see timer_heap.h. */
#include <stdlib.h>

#include "timer_heap.h"

static bool before(const struct timer_entry *a, const struct timer_entry *b)
{
	return a->due < b->due || (a->due == b->due && a->key < b->key);
}

static void sift_up(struct timer_heap *h, size_t i)
{
	struct timer_entry e = h->items[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!before(&e, &h->items[parent]))
			break;
		h->items[i] = h->items[parent];
		i = parent;
	}
	h->items[i] = e;
}

static void sift_down(struct timer_heap *h, size_t i)
{
	struct timer_entry e = h->items[i];

	for (;;) {
		size_t child = 2 * i + 1;

		if (child >= h->count)
			break;
		if (child + 1 < h->count && before(&h->items[child + 1], &h->items[child]))
			child++;
		if (!before(&h->items[child], &e))
			break;
		h->items[i] = h->items[child];
		i = child;
	}
	h->items[i] = e;
}

void timer_heap_push(struct timer_heap *h, struct timer_entry e)
{
	h->items[h->count++] = e;
	sift_up(h, h->count - 1);
}

bool timer_heap_peek(const struct timer_heap *h, struct timer_entry *top)
{
	if (h->count == 0)
		return false;
	*top = h->items[0];
	return true;
}

bool timer_heap_pop(struct timer_heap *h, struct timer_entry *top)
{
	if (h->count == 0)
		return false;
	*top = h->items[0];
	h->items[0] = h->items[--h->count];
	if (h->count)
		sift_down(h, 0);
	return true;
}

void timer_heap_filter(struct timer_heap *h, bool (*keep)(void *ctx, const struct timer_entry *e),
		       void *ctx)
{
	size_t kept = 0;

	for (size_t i = 0; i < h->count; i++)
		if (keep(ctx, &h->items[i]))
			h->items[kept++] = h->items[i];
	h->count = kept;
	/* Floyd's bottom-up build: O(n). */
	for (size_t i = kept / 2; i-- > 0;)
		sift_down(h, i);
}

void timer_heap_free(struct timer_heap *h)
{
	free(h->items);
	h->items = NULL;
	h->count = h->cap = 0;
}
