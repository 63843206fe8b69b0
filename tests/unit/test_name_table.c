/* Unit tests of fs/name_table.c: names apart from entries (docs/design.md "Names and entries").
 *
 * Folders and entries are bare name_ends here, as the module knows them. Named tests walk what
 * the pool does with names (a file's first name, hard links, unlink of any one of them, rename as
 * detach + attach, folders' subfolder counts, a detached name staying readable until freed, the
 * table growing past its first buckets); a model check then applies a long pseudo-random run of
 * attaches and detaches and compares every count, list and lookup with a plain array model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "name_table.h"

static void *plain_alloc(void *ctx, const char *site, size_t size, bool benign)
{
	(void)ctx;
	(void)site;
	(void)benign;
	return calloc(1, size);
}

/* An allocator that fails: name_new must give NULL, not crash. */
static void *failing_alloc(void *ctx, const char *site, size_t size, bool benign)
{
	(void)ctx;
	(void)site;
	(void)size;
	(void)benign;
	return NULL;
}

static struct name *new_name(const char *text)
{
	struct name *nm = name_new(text, plain_alloc, NULL);

	assert_non_null(nm);
	return nm;
}

static unsigned list_len(const struct name *nm, bool by_folder)
{
	unsigned n = 0;

	for (; nm; nm = by_folder ? nm->sib_next : nm->alias_next)
		n++;
	return n;
}

static void one_file_one_name(void **state)
{
	struct name_table t;
	struct name_ends root = {.is_dir = true}, file = {0};
	struct name *nm = new_name("a");

	(void)state;
	assert_int_equal(names_init(&t, plain_alloc, NULL), 0);
	names_attach(&t, nm, &root, &file);
	assert_ptr_equal(names_find(&t, &root, "a"), nm);
	assert_null(names_find(&t, &root, "b"));
	assert_null(names_find(&t, &file, "a")); /* another folder: another name */
	assert_int_equal(root.nchildren, 1);
	assert_int_equal(root.subdirs, 0);
	assert_int_equal(file.nnames, 1);
	assert_ptr_equal(nm->entry, &file);
	assert_ptr_equal(nm->dir, &root);
	assert_int_equal(t.hash.count, 1);
	names_detach(&t, nm);
	assert_null(names_find(&t, &root, "a"));
	assert_int_equal(root.nchildren, 0);
	assert_int_equal(file.nnames, 0);
	assert_null(file.names);
	assert_null(root.children);
	assert_int_equal(t.hash.count, 0);
	/* detached, not freed: on the dead list until taken */
	assert_null(nm->dir);
	assert_ptr_equal(names_take_dead(&t), nm);
	assert_null(names_take_dead(&t));
	names_free_list(nm);
	names_destroy(&t);
}

static void hard_links_any_may_go_first(void **state)
{
	struct name_table t;
	struct name_ends root = {.is_dir = true}, sub = {.is_dir = true}, file = {0};
	struct name *a = new_name("a"), *b = new_name("b"), *c = new_name("c"),
		    *s = new_name("sub");

	(void)state;
	assert_int_equal(names_init(&t, plain_alloc, NULL), 0);
	names_attach(&t, s, &root, &sub);
	names_attach(&t, a, &root, &file);
	names_attach(&t, b, &root, &file);
	names_attach(&t, c, &sub, &file);
	assert_int_equal(file.nnames, 3);
	assert_int_equal(list_len(file.names, false), 3);
	assert_int_equal(root.nchildren, 3);
	assert_int_equal(root.subdirs, 1);
	assert_int_equal(sub.nchildren, 1);
	assert_int_equal(sub.nnames, 1);
	/* the middle one of the entry's list goes first, then the newest, then the oldest */
	names_detach(&t, b);
	assert_int_equal(file.nnames, 2);
	assert_ptr_equal(names_find(&t, &root, "a"), a);
	assert_ptr_equal(names_find(&t, &sub, "c"), c);
	assert_int_equal(list_len(file.names, false), 2);
	names_detach(&t, c);
	assert_int_equal(sub.nchildren, 0);
	assert_ptr_equal(file.names, a);
	names_detach(&t, a);
	assert_int_equal(file.nnames, 0);
	assert_int_equal(root.nchildren, 1);
	assert_int_equal(root.subdirs, 1);
	names_detach(&t, s);
	assert_int_equal(root.subdirs, 0);
	names_detach(&t, s); /* twice: nothing */
	assert_int_equal(t.hash.count, 0);
	names_free_list(names_take_dead(&t));
	names_destroy(&t);
}

/* A walk over a folder keeps reading a sibling detached meanwhile: it stays readable and says
 * it is detached (dir NULL), which is how pool_recheck_subtree knows to start over. */
static void detached_sibling_stays_readable(void **state)
{
	struct name_table t;
	struct name_ends root = {.is_dir = true}, f1 = {0}, f2 = {0};
	struct name *x = new_name("x"), *y = new_name("y");

	(void)state;
	assert_int_equal(names_init(&t, plain_alloc, NULL), 0);
	names_attach(&t, y, &root, &f2);
	names_attach(&t, x, &root, &f1);
	assert_ptr_equal(root.children, x);
	assert_ptr_equal(x->sib_next, y);
	names_detach(&t, y);
	assert_null(x->sib_next);
	assert_null(y->dir);
	assert_string_equal(y->text, "y");
	names_destroy(&t); /* frees x (live) and y (dead) */
}

/* rename is a new name attached, the old one detached: same entry, same counts. */
static void rename_keeps_the_entry(void **state)
{
	struct name_table t;
	struct name_ends d1 = {.is_dir = true}, d2 = {.is_dir = true}, file = {0};
	struct name *old = new_name("old"), *moved = new_name("new");

	(void)state;
	assert_int_equal(names_init(&t, plain_alloc, NULL), 0);
	names_attach(&t, old, &d1, &file);
	names_detach(&t, old);
	names_attach(&t, moved, &d2, &file);
	assert_int_equal(file.nnames, 1);
	assert_int_equal(d1.nchildren, 0);
	assert_int_equal(d2.nchildren, 1);
	assert_ptr_equal(names_find(&t, &d2, "new")->entry, &file);
	names_destroy(&t);
}

static void out_of_memory_gives_null(void **state)
{
	(void)state;
	assert_null(name_new("a", failing_alloc, NULL));
}

/* Buckets when the table is made, then never again: growth is benign (fault.h). */
static void *no_growth_alloc(void *ctx, const char *site, size_t size, bool benign)
{
	(void)ctx;
	(void)site;
	return benign ? NULL : calloc(1, size);
}

/* A table that cannot grow stays correct, only with longer chains. */
static void failed_growth_is_harmless(void **state)
{
	struct name_table t;
	struct name_ends root = {.is_dir = true}, file = {0};
	char text[16];

	(void)state;
	assert_int_equal(names_init(&t, no_growth_alloc, NULL), 0);
	for (int i = 0; i < 3000; i++) {
		snprintf(text, sizeof(text), "n%d", i);
		names_attach(&t, new_name(text), &root, &file);
	}
	assert_int_equal(t.hash.nbuckets, 1024);
	for (int i = 0; i < 3000; i++) {
		snprintf(text, sizeof(text), "n%d", i);
		assert_non_null(names_find(&t, &root, text));
	}
	assert_int_equal(root.nchildren, 3000);
	names_destroy(&t);
}

static void longest_name_kept_exactly(void **state)
{
	struct name_table t;
	struct name_ends root = {.is_dir = true}, file = {0};
	char text[256];
	struct name *nm;

	(void)state;
	memset(text, 'n', 255);
	text[255] = '\0';
	nm = new_name(text);
	assert_int_equal(nm->len, 255);
	assert_int_equal(names_init(&t, plain_alloc, NULL), 0);
	names_attach(&t, nm, &root, &file);
	assert_ptr_equal(names_find(&t, &root, text), nm);
	text[254] = '\0';
	assert_null(names_find(&t, &root, text));
	names_destroy(&t);
}

/* ---- model check ---- */

#define M_DIRS 5
#define M_ENTRIES 40
#define M_SLOTS 3000
#define M_STEPS 40000

struct model_slot {
	struct name *nm;
	int dir, entry;
	char text[24];
};

static uint32_t next_rand(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void model_compare(const struct name_table *t, struct name_ends *dirs,
			  struct name_ends *entries, const struct model_slot *slots)
{
	unsigned children[M_DIRS] = {0}, names[M_ENTRIES] = {0}, total = 0;

	for (int i = 0; i < M_SLOTS; i++) {
		if (!slots[i].nm)
			continue;
		children[slots[i].dir]++;
		names[slots[i].entry]++;
		total++;
		assert_ptr_equal(names_find(t, &dirs[slots[i].dir], slots[i].text), slots[i].nm);
		assert_ptr_equal(slots[i].nm->entry, &entries[slots[i].entry]);
	}
	assert_int_equal(t->hash.count, total);
	for (int d = 0; d < M_DIRS; d++) {
		assert_int_equal(dirs[d].nchildren, children[d]);
		assert_int_equal(list_len(dirs[d].children, true), children[d]);
	}
	for (int e = 0; e < M_ENTRIES; e++) {
		assert_int_equal(entries[e].nnames, names[e]);
		assert_int_equal(list_len(entries[e].names, false), names[e]);
	}
}

static void model_check(void **state)
{
	static struct model_slot slots[M_SLOTS];
	struct name_ends dirs[M_DIRS], entries[M_ENTRIES];
	struct name_table t;
	uint32_t seed = 12345;

	(void)state;
	memset(slots, 0, sizeof(slots));
	memset(dirs, 0, sizeof(dirs));
	memset(entries, 0, sizeof(entries));
	assert_int_equal(names_init(&t, plain_alloc, NULL), 0);
	for (int step = 0; step < M_STEPS; step++) {
		struct model_slot *s = &slots[next_rand(&seed) % M_SLOTS];

		if (s->nm) {
			names_detach(&t, s->nm);
			s->nm = NULL;
		} else {
			/* the slot's index makes the text unique in any folder */
			snprintf(s->text, sizeof(s->text), "n%u", (unsigned)(s - slots) % M_SLOTS);
			s->dir = (int)(next_rand(&seed) % M_DIRS);
			s->entry = (int)(next_rand(&seed) % M_ENTRIES);
			s->nm = new_name(s->text);
			names_attach(&t, s->nm, &dirs[s->dir], &entries[s->entry]);
		}
		if (step % 997 == 0) {
			model_compare(&t, dirs, entries, slots);
			names_free_list(names_take_dead(&t));
		}
	}
	model_compare(&t, dirs, entries, slots);
	/* the table grew past its first 1024 buckets and still finds everything */
	assert_true(t.hash.nbuckets > 1024);
	names_destroy(&t);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_file_one_name),
		cmocka_unit_test(hard_links_any_may_go_first),
		cmocka_unit_test(detached_sibling_stays_readable),
		cmocka_unit_test(rename_keeps_the_entry),
		cmocka_unit_test(out_of_memory_gives_null),
		cmocka_unit_test(failed_growth_is_harmless),
		cmocka_unit_test(longest_name_kept_exactly),
		cmocka_unit_test(model_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
