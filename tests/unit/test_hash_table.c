/* Unit tests of fs/hash_table.c: growth spread over later calls (docs/design.md "Work kept per
 * state, not per pool"). Named tests look inside a growth (items found in the old buckets and the
 * new, removed from either, the move finished before the table is full again, hash_settle); a
 * model check then runs pseudo-random inserts and removes across many growths, with many items
 * sharing a hash, and compares every lookup and the count with a plain array. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hash_table.h"

struct item {
	struct hash_link link;
	unsigned key;
	bool in;
};

static void *plain_alloc(void *ctx, const char *site, size_t size, bool benign)
{
	(void)ctx;
	(void)site;
	(void)benign;
	return calloc(1, size);
}

/* Keys share hashes in groups of four: chains hold items a lookup must tell apart. */
static size_t key_hash(unsigned key)
{
	return (size_t)((key / 4) * 0x9E3779B97F4A7C15ull >> 7);
}

static void insert(struct hash_table *t, struct item *it)
{
	hash_insert(t, &it->link, key_hash(it->key));
	it->in = true;
}

static void remove_item(struct hash_table *t, struct item *it)
{
	hash_remove(t, &it->link);
	it->in = false;
}

/* The item of `key` as a lookup finds it, NULL if none; fails on a second match. */
static struct item *find(const struct hash_table *t, unsigned key)
{
	size_t hash = key_hash(key);
	struct item *found = NULL;
	struct hash_walk w;

	for (struct hash_link *l = hash_first(t, hash, &w); l; l = hash_next(&w, l)) {
		struct item *it = (struct item *)(void *)l;

		if (l->hash == hash && it->key == key) {
			assert_null(found);
			found = it;
		}
	}
	return found;
}

static size_t links_in(struct hash_link **buckets, size_t n)
{
	size_t count = 0;

	for (size_t b = 0; buckets && b < n; b++)
		for (struct hash_link *l = buckets[b]; l; l = l->next)
			count++;
	return count;
}

/* Right after the table starts growing, items sit in both bucket sets, and every lookup and
 * removal finds them wherever they are. */
static void lookups_and_removals_during_growth(void **state)
{
	static struct item items[64];
	struct hash_table t;
	unsigned n = 0;

	(void)state;
	assert_int_equal(hash_init(&t, 32, plain_alloc, NULL), 0);
	while (!t.old) {
		items[n].key = n;
		insert(&t, &items[n]);
		n++;
	}
	/* the growth began at the 33rd insert and moved only a few buckets */
	assert_int_equal(n, 33);
	assert_int_equal(t.nbuckets, 64);
	assert_int_equal(t.old_nbuckets, 32);
	assert_int_equal(t.moved, 0);
	assert_true(links_in(t.old, t.old_nbuckets) > 0);
	assert_int_equal(links_in(t.old, t.old_nbuckets) + links_in(t.buckets, t.nbuckets), n);
	for (unsigned k = 0; k < n; k++)
		assert_ptr_equal(find(&t, k), &items[k]);
	/* remove every other item, wherever it is; the rest stay found */
	for (unsigned k = 0; k < n; k += 2)
		remove_item(&t, &items[k]);
	assert_int_equal(t.count, n / 2);
	for (unsigned k = 0; k < n; k++)
		assert_ptr_equal(find(&t, k), k % 2 ? &items[k] : NULL);
	assert_null(find(&t, 1000));
	hash_settle(&t);
	assert_null(t.old);
	assert_int_equal(links_in(t.buckets, t.nbuckets), t.count);
	hash_destroy(&t);
}

/* Inserts alone finish each growth long before the next: no insert ever finds the table full
 * while still growing (which would move every old bucket at once). */
static void growth_ends_before_the_table_is_full_again(void **state)
{
	enum { N = 1 << 17 };
	struct item *items = calloc(N, sizeof(*items));
	struct hash_table t;
	unsigned growths = 0;

	(void)state;
	assert_non_null(items);
	assert_int_equal(hash_init(&t, 16, plain_alloc, NULL), 0);
	for (unsigned k = 0; k < N; k++) {
		if (t.count >= t.nbuckets) {
			assert_null(t.old);
			growths++;
		}
		items[k].key = k;
		insert(&t, &items[k]);
		/* each call moves at most HASH_MOVES_PER_CALL old buckets */
		assert_true(!t.old || t.moved <= (size_t)HASH_MOVES_PER_CALL * (t.count + 1));
	}
	assert_true(growths >= 12);
	for (unsigned k = 0; k < N; k += 97)
		assert_ptr_equal(find(&t, k), &items[k]);
	hash_destroy(&t);
	free(items);
}

enum { M_ITEMS = 20000, M_STEPS = 400000 };

static uint32_t next_rand(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void model_compare(const struct hash_table *t, const struct item *items)
{
	size_t in = 0;

	for (unsigned k = 0; k < M_ITEMS; k++) {
		in += items[k].in;
		assert_ptr_equal(find(t, k), items[k].in ? &items[k] : NULL);
	}
	assert_int_equal(t->count, in);
	assert_int_equal(links_in(t->old, t->old_nbuckets) + links_in(t->buckets, t->nbuckets), in);
}

/* Inserts and removes in a pseudo-random mix that fills and empties the table over and over,
 * compared with the model at steps that fall inside growths and outside them. */
static void model_check(void **state)
{
	struct item *items = calloc(M_ITEMS, sizeof(*items));
	struct hash_table t;
	uint32_t seed = 4242;
	unsigned checks_while_growing = 0;

	(void)state;
	assert_non_null(items);
	for (unsigned k = 0; k < M_ITEMS; k++)
		items[k].key = k;
	assert_int_equal(hash_init(&t, 8, plain_alloc, NULL), 0);
	for (unsigned step = 0; step < M_STEPS; step++) {
		/* phases that mostly insert, then mostly remove */
		bool filling = (step / 50000) % 2 == 0;
		struct item *it = &items[next_rand(&seed) % M_ITEMS];

		if (it->in && (!filling || next_rand(&seed) % 4 == 0))
			remove_item(&t, it);
		else if (!it->in && (filling || next_rand(&seed) % 4 == 0))
			insert(&t, it);
		/* at a growth's start, halfway through it, and now and then */
		bool start = t.old && t.moved == 0;
		bool halfway = t.old && t.moved >= t.old_nbuckets / 2 &&
			       t.moved < t.old_nbuckets / 2 + HASH_MOVES_PER_CALL;

		if (step % 4999 == 0 || start || halfway) {
			checks_while_growing += t.old != NULL;
			model_compare(&t, items);
		}
	}
	model_compare(&t, items);
	assert_true(checks_while_growing >= 10);
	hash_destroy(&t);
	free(items);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(lookups_and_removals_during_growth),
		cmocka_unit_test(growth_ends_before_the_table_is_full_again),
		cmocka_unit_test(model_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
