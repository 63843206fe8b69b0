/* Unit tests of fs/timer_heap.c and fs/part_set.c, the pool's structures for timed states and
 * per-state lists (docs/design.md "Work that grows with the pool").
 *
 * The heap: entries come out in due order (ties by key), a filter keeps exactly what it is told
 * and leaves a valid heap, and a long pseudo-random run of pushes, pops and filters is compared
 * at every step with a plain array model. The set: adding to either part, moving both ways,
 * removing from either part, each item's place, against a model of where each item is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "part_set.h"
#include "timer_heap.h"

static void push(struct timer_heap *h, uint64_t due, uint64_t key)
{
	if (h->count == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 4;
		struct timer_entry *grown = realloc(h->items, cap * sizeof(*grown));

		assert_non_null(grown);
		h->items = grown;
		h->cap = cap;
	}
	timer_heap_push(h, (struct timer_entry){.due = due, .key = key});
}

static void empty_heap_gives_nothing(void **state)
{
	struct timer_heap h = {0};
	struct timer_entry e;

	(void)state;
	assert_false(timer_heap_peek(&h, &e));
	assert_false(timer_heap_pop(&h, &e));
	timer_heap_free(&h);
	timer_heap_free(&h); /* twice: a freed heap is an empty one */
}

static void pops_in_due_order(void **state)
{
	static const uint64_t dues[] = {50, 10, 40, 10, 30, 20, 60, 0, 99, 45};
	struct timer_heap h = {0};
	struct timer_entry e, last = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(dues) / sizeof(dues[0]); i++)
		push(&h, dues[i], 100 - i);
	assert_true(timer_heap_peek(&h, &e));
	assert_int_equal(e.due, 0);
	for (size_t i = 0; i < sizeof(dues) / sizeof(dues[0]); i++) {
		assert_true(timer_heap_pop(&h, &e));
		assert_true(e.due > last.due || (e.due == last.due && e.key >= last.key) || i == 0);
		last = e;
	}
	assert_int_equal(h.count, 0);
	timer_heap_free(&h);
}

static bool keep_even_keys(void *ctx, const struct timer_entry *e)
{
	(*(size_t *)ctx)++;
	return e->key % 2 == 0;
}

static void filter_keeps_what_it_is_told(void **state)
{
	struct timer_heap h = {0};
	struct timer_entry e;
	size_t asked = 0, popped = 0;
	uint64_t last = 0;

	(void)state;
	for (uint64_t k = 0; k < 1000; k++)
		push(&h, (k * 7919) % 1009, k);
	timer_heap_filter(&h, keep_even_keys, &asked);
	assert_int_equal(asked, 1000);
	assert_int_equal(h.count, 500);
	while (timer_heap_pop(&h, &e)) {
		assert_int_equal(e.key % 2, 0);
		assert_true(e.due >= last);
		last = e.due;
		popped++;
	}
	assert_int_equal(popped, 500);
	timer_heap_free(&h);
}

static uint64_t next_rand(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

static uint64_t model_min(const struct timer_entry *m, size_t n, size_t *at)
{
	size_t best = 0;

	for (size_t i = 1; i < n; i++)
		if (m[i].due < m[best].due || (m[i].due == m[best].due && m[i].key < m[best].key))
			best = i;
	*at = best;
	return m[best].due;
}

static bool keep_not_multiple_of_5(void *ctx, const struct timer_entry *e)
{
	(void)ctx;
	return e->key % 5 != 0;
}

static void model_check(void **state)
{
	enum { STEPS = 20000, MAX = 4096 };
	static struct timer_entry model[MAX];
	struct timer_heap h = {0};
	uint64_t seed = 42, key = 0;
	size_t n = 0;

	(void)state;
	for (int step = 0; step < STEPS; step++) {
		uint64_t r = next_rand(&seed) % 100;
		struct timer_entry e;
		size_t at;

		if (r < 55 && n < MAX) {
			model[n] = (struct timer_entry){.due = next_rand(&seed) % 500, .key = key};
			key++;
			push(&h, model[n].due, model[n].key);
			n++;
		} else if (r < 99) {
			if (n == 0) {
				assert_false(timer_heap_pop(&h, &e));
				continue;
			}
			model_min(model, n, &at);
			assert_true(timer_heap_peek(&h, &e));
			assert_int_equal(e.due, model[at].due);
			assert_int_equal(e.key, model[at].key);
			assert_true(timer_heap_pop(&h, &e));
			assert_int_equal(e.key, model[at].key);
			model[at] = model[--n];
		} else {
			size_t kept = 0;

			timer_heap_filter(&h, keep_not_multiple_of_5, NULL);
			for (size_t i = 0; i < n; i++)
				if (model[i].key % 5 != 0)
					model[kept++] = model[i];
			n = kept;
		}
		assert_int_equal(h.count, n);
	}
	timer_heap_free(&h);
}

struct item {
	int id;
	uint32_t idx;
};

static struct part_set new_set(void **storage, size_t cap)
{
	return (struct part_set){
		.items = storage, .cap = cap, .idx_off = offsetof(struct item, idx)};
}

/* The set holds exactly the items of front[0..nf) in its front part and back[0..nb) in its
 * back part, in any order, and each item's place points back at it. */
static void set_is(const struct part_set *s, struct item *const *front, size_t nf,
		   struct item *const *back, size_t nb)
{
	assert_int_equal(s->front, nf);
	assert_int_equal(s->count, nf + nb);
	for (size_t i = 0; i < s->count; i++) {
		struct item *it = s->items[i];

		assert_int_equal(it->idx, i + 1);
		assert_true(part_set_has(s, it));
		assert_int_equal(part_set_in_front(s, it), i < nf);
	}
	for (size_t i = 0; i < nf; i++)
		assert_true(part_set_has(s, front[i]) && part_set_in_front(s, front[i]));
	for (size_t i = 0; i < nb; i++)
		assert_true(part_set_has(s, back[i]) && !part_set_in_front(s, back[i]));
}

static void set_add_remove_move(void **state)
{
	void *storage[4];
	struct part_set s = new_set(storage, 4);
	struct item it[4] = {{.id = 0}, {.id = 1}, {.id = 2}, {.id = 3}};

	(void)state;
	set_is(&s, NULL, 0, NULL, 0);
	assert_false(part_set_has(&s, &it[0]));
	part_set_add(&s, &it[0], false);
	part_set_add(&s, &it[1], true);
	part_set_add(&s, &it[2], false);
	part_set_add(&s, &it[3], true);
	set_is(&s, (struct item *[]){&it[1], &it[3]}, 2, (struct item *[]){&it[0], &it[2]}, 2);
	/* moves both ways, and a move to where it is already */
	part_set_move(&s, &it[1], false);
	part_set_move(&s, &it[2], true);
	part_set_move(&s, &it[2], true);
	set_is(&s, (struct item *[]){&it[2], &it[3]}, 2, (struct item *[]){&it[0], &it[1]}, 2);
	/* removal from either part; removing what is in no set does nothing */
	part_set_remove(&s, &it[3]);
	assert_false(part_set_has(&s, &it[3]));
	part_set_remove(&s, &it[3]);
	part_set_remove(&s, &it[0]);
	set_is(&s, (struct item *[]){&it[2]}, 1, (struct item *[]){&it[1]}, 1);
	part_set_remove(&s, &it[2]);
	part_set_remove(&s, &it[1]);
	set_is(&s, NULL, 0, NULL, 0);
}

static void set_model_check(void **state)
{
	enum { N = 64, STEPS = 20000 };
	static struct item items[N];
	void *storage[N];
	struct part_set s = new_set(storage, N);
	int where[N]; /* -1: in no set, 0: front, 1: back */
	uint64_t seed = 7;

	(void)state;
	for (int i = 0; i < N; i++) {
		items[i] = (struct item){.id = i};
		where[i] = -1;
	}
	for (int step = 0; step < STEPS; step++) {
		int i = (int)(next_rand(&seed) % N), to = (int)(next_rand(&seed) % 3) - 1;
		struct item *front[N], *back[N];
		size_t nf = 0, nb = 0;

		if (to < 0)
			part_set_remove(&s, &items[i]);
		else if (where[i] < 0)
			part_set_add(&s, &items[i], to == 0);
		else
			part_set_move(&s, &items[i], to == 0);
		where[i] = to;
		for (int j = 0; j < N; j++) {
			if (where[j] == 0)
				front[nf++] = &items[j];
			else if (where[j] == 1)
				back[nb++] = &items[j];
			else
				assert_false(part_set_has(&s, &items[j]));
		}
		set_is(&s, front, nf, back, nb);
	}
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_heap_gives_nothing),	cmocka_unit_test(pops_in_due_order),
		cmocka_unit_test(filter_keeps_what_it_is_told), cmocka_unit_test(model_check),
		cmocka_unit_test(set_add_remove_move),		cmocka_unit_test(set_model_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
