/* Unit tests of fs/xattrs.c: an entry's user.* attribute list. Every flag, the per-entry byte
 * limit, the cost the pool charges, listing, and every allocation failing in turn (the list must
 * be exactly as before, and what the list says it costs must match what it holds). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include <cmocka.h>

#include "xattrs.h"

/* An allocator that fails its Nth call (0: never). */
struct alloc_ctl {
	int fail_at, calls;
};

static void *test_alloc(void *ctx, const char *site, size_t size, bool benign)
{
	(void)site;
	(void)benign;
	struct alloc_ctl *a = ctx;

	if (a && a->fail_at && ++a->calls == a->fail_at)
		return NULL;
	return calloc(1, size);
}

static int set(struct xattr_list *l, const char *name, const char *value, int flags, int64_t *delta)
{
	return xattr_set(l, name, value, strlen(value), flags, 64 * 1024, test_alloc, NULL, delta);
}

static void flags_table(void **state)
{
	(void)state;
	static const struct {
		const char *name, *value;
		int flags, want;
	} rows[] = {
		{"user.a", "1", 0, 0},
		{"user.a", "22", 0, 0}, /* replace */
		{"user.a", "x", XATTR_CREATE, -EEXIST},
		{"user.b", "x", XATTR_REPLACE, -ENODATA},
		{"user.b", "333", XATTR_CREATE, 0},
		{"user.b", "4444", XATTR_REPLACE, 0},
		{"user.c", "", 0, 0}, /* empty values are values */
	};
	struct xattr_list l = {0};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int r = set(&l, rows[i].name, rows[i].value, rows[i].flags, NULL);
		if (r != rows[i].want)
			fail_msg("row %zu: got %d, want %d", i, r, rows[i].want);
	}
	assert_int_equal(xattr_get(&l, "user.a")->size, 2);
	assert_memory_equal(xattr_get(&l, "user.b")->value, "4444", 4);
	assert_int_equal(xattr_get(&l, "user.c")->size, 0);
	assert_null(xattr_get(&l, "user.d"));
	assert_int_equal(l.bytes, strlen("user.a") + 2 + strlen("user.b") + 4 + strlen("user.c"));
	xattr_clear(&l);
	assert_null(l.head);
	assert_int_equal(l.bytes, 0);
}

static void byte_limit(void **state)
{
	(void)state;
	struct xattr_list l = {0};
	char big[100];

	memset(big, 'v', sizeof(big));
	/* name 6 + value 100 = 106 bytes; a 200-byte limit takes one, not two. */
	assert_int_equal(xattr_set(&l, "user.a", big, 100, 0, 200, test_alloc, NULL, NULL), 0);
	assert_int_equal(xattr_set(&l, "user.b", big, 100, 0, 200, test_alloc, NULL, NULL),
			 -ENOSPC);
	/* Replacing counts the old value as freed. */
	assert_int_equal(xattr_set(&l, "user.a", big, 90, 0, 200, test_alloc, NULL, NULL), 0);
	assert_int_equal(l.bytes, 96);
	xattr_clear(&l);
}

static void cost_matches_contents(void **state)
{
	(void)state;
	struct xattr_list l = {0};
	int64_t total = 0, d = 0;

	assert_int_equal(xattr_set_cost(&l, "user.a", 10), xattr_cost(6, 10));
	assert_int_equal(set(&l, "user.a", "0123456789", 0, &d), 0);
	total += d;
	assert_int_equal(d, xattr_cost(6, 10));
	/* A replacement costs only the value's difference, either way. */
	assert_int_equal(xattr_set_cost(&l, "user.a", 3), 3 - 10);
	assert_int_equal(set(&l, "user.a", "abc", 0, &d), 0);
	total += d;
	assert_int_equal(d, -7);
	assert_int_equal(set(&l, "user.b", "x", 0, &d), 0);
	total += d;
	assert_int_equal(total, xattr_total_cost(&l));
	assert_int_equal(xattr_remove(&l, "user.a", &d), 0);
	total -= d;
	assert_int_equal(total, xattr_total_cost(&l));
	assert_int_equal(xattr_remove(&l, "user.a", &d), -ENODATA);
	assert_int_equal(d, 0);
	/* Failed calls cost nothing. */
	assert_int_equal(set(&l, "user.b", "y", XATTR_CREATE, &d), -EEXIST);
	assert_int_equal(d, 0);
	xattr_clear(&l);
}

/* Each allocation of a new attribute and of a replacement fails in turn: -ENOMEM, no change. */
static void every_allocation_failure(void **state)
{
	(void)state;
	for (int replace = 0; replace <= 1; replace++) {
		for (int n = 1;; n++) {
			struct xattr_list l = {0};
			struct alloc_ctl a = {.fail_at = n};
			int64_t d = 99;
			int r;

			if (replace)
				assert_int_equal(set(&l, "user.a", "old", 0, NULL), 0);
			r = xattr_set(&l, "user.a", "newer", 5, 0, 1024, test_alloc, &a, &d);
			if (r == 0) {
				xattr_clear(&l);
				assert_true(n > 1); /* at least one allocation was tried */
				break;
			}
			assert_int_equal(r, -ENOMEM);
			assert_int_equal(d, 0);
			if (replace) {
				assert_memory_equal(xattr_get(&l, "user.a")->value, "old", 3);
				assert_int_equal(l.bytes, 6 + 3);
			} else {
				assert_null(l.head);
				assert_int_equal(l.bytes, 0);
			}
			xattr_clear(&l);
		}
	}
}

static void names_listing(void **state)
{
	(void)state;
	struct xattr_list l = {0};
	char buf[64];
	size_t need;

	assert_int_equal(xattr_names(&l, NULL, 0), 0);
	assert_int_equal(set(&l, "user.a", "1", 0, NULL), 0);
	assert_int_equal(set(&l, "user.bb", "2", 0, NULL), 0);
	need = xattr_names(&l, NULL, 0);
	assert_int_equal(need, 7 + 8);
	/* Too small: the size is still reported and nothing is written. */
	memset(buf, '#', sizeof(buf));
	assert_int_equal(xattr_names(&l, buf, 3), need);
	assert_int_equal(buf[0], '#');
	assert_int_equal(xattr_names(&l, buf, sizeof(buf)), need);
	assert_true(memmem(buf, need, "user.a\0", 7) != NULL);
	assert_true(memmem(buf, need, "user.bb\0", 8) != NULL);
	xattr_clear(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flags_table),		 cmocka_unit_test(byte_limit),
		cmocka_unit_test(cost_matches_contents), cmocka_unit_test(every_allocation_failure),
		cmocka_unit_test(names_listing),
	};

	return cmocka_run_group_tests_name("xattrs", tests, NULL, NULL);
}
