/* Unit tests of fs/name_rules.c: every operation's answer to every kind of name, one table row a
 * case, each with the errno a plain tmpfs gives through the Linux VFS (fs/name_rules.c says
 * why for each). */
#include <errno.h>
#include <string.h>

#include "array.h"
#include "name_rules.h"
#include "rows.h"

static char longest[NAME_RULES_MAX + 1], too_long[NAME_RULES_MAX + 2];

struct row {
	const char *name;
	enum name_op op;
	const char *text; /* NULL: the longest name; "" empty; "+": one byte too long */
	int want;
};

static const struct row rows[] = {
	{"lookup/plain", NAME_LOOKUP, "a", 0},
	{"lookup/longest", NAME_LOOKUP, NULL, 0},
	{"lookup/empty_enoent", NAME_LOOKUP, "", -ENOENT},
	{"lookup/too_long_enametoolong", NAME_LOOKUP, "+", -ENAMETOOLONG},
	{"lookup/dot_enoent", NAME_LOOKUP, ".", -ENOENT},
	{"lookup/dotdot_enoent", NAME_LOOKUP, "..", -ENOENT},
	{"create/plain", NAME_CREATE, "a b\n", 0},
	{"create/longest", NAME_CREATE, NULL, 0},
	{"create/dots_in_a_name", NAME_CREATE, "...", 0},
	{"create/empty_enoent", NAME_CREATE, "", -ENOENT},
	{"create/too_long_enametoolong", NAME_CREATE, "+", -ENAMETOOLONG},
	{"create/dot_eexist", NAME_CREATE, ".", -EEXIST},
	{"create/dotdot_eexist", NAME_CREATE, "..", -EEXIST},
	{"link/plain", NAME_LINK, ".a", 0},
	{"link/empty_enoent", NAME_LINK, "", -ENOENT},
	{"link/too_long_enametoolong", NAME_LINK, "+", -ENAMETOOLONG},
	{"link/dot_eexist", NAME_LINK, ".", -EEXIST},
	{"link/dotdot_eexist", NAME_LINK, "..", -EEXIST},
	{"rename/plain", NAME_RENAME, "..a", 0},
	{"rename/longest", NAME_RENAME, NULL, 0},
	{"rename/empty_enoent", NAME_RENAME, "", -ENOENT},
	{"rename/too_long_enametoolong", NAME_RENAME, "+", -ENAMETOOLONG},
	{"rename/dot_ebusy", NAME_RENAME, ".", -EBUSY},
	{"rename/dotdot_ebusy", NAME_RENAME, "..", -EBUSY},
	{"no_such_op_einval", NAME_OPS, "a", -EINVAL},
};

static void test_row(void **state)
{
	const struct row *r = *state;
	const char *text = !r->text ? longest : strcmp(r->text, "+") == 0 ? too_long : r->text;

	assert_int_equal(name_check(r->op, text), r->want);
}

int main(void)
{
	struct CMUnitTest tests[ARRAY_SIZE(rows)];

	memset(longest, 'x', sizeof(longest) - 1);
	memset(too_long, 'x', sizeof(too_long) - 1);
	rows_to_tests(tests, rows, sizeof(rows[0]), ARRAY_SIZE(rows), test_row, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
