/* Unit tests of fs/name_rules.c: every operation's answer to every kind of name, one cmocka
 * case per (operation, kind of name), each with the errno a plain tmpfs gives through the Linux
 * VFS (fs/name_rules.c says why for each). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "array.h"
#include "name_rules.h"
#include "rows.h"

/* The kinds of name, each with a text. */
enum kind { PLAIN, DOTS_IN_A_NAME, LONGEST, EMPTY, TOO_LONG, DOT, DOTDOT, KINDS };

static char longest[NAME_RULES_MAX + 1], too_long[NAME_RULES_MAX + 2];
static const char *const kind_names[KINDS] = {
	"plain", "dots_in_a_name", "longest", "empty", "too_long", "dot", "dotdot"};
static const char *text_of[KINDS] = {"a b\n", "...", longest, "", too_long, ".", ".."};

/* What each operation answers to each kind (0: accepted). */
static const struct {
	const char *name;
	int want[KINDS];
} ops[NAME_OPS] = {
	[NAME_LOOKUP] = {"lookup", {0, 0, 0, -ENOENT, -ENAMETOOLONG, -ENOENT, -ENOENT}},
	[NAME_CREATE] = {"create", {0, 0, 0, -ENOENT, -ENAMETOOLONG, -EEXIST, -EEXIST}},
	[NAME_LINK] = {"link", {0, 0, 0, -ENOENT, -ENAMETOOLONG, -EEXIST, -EEXIST}},
	[NAME_RENAME] = {"rename", {0, 0, 0, -ENOENT, -ENAMETOOLONG, -EBUSY, -EBUSY}},
};

struct row {
	const char *name;
	enum name_op op;
	enum kind kind;
};

static struct row rows[NAME_OPS * KINDS + 1];
static char row_names[ARRAY_SIZE(rows)][48];

static void test_row(void **state)
{
	const struct row *r = *state;

	if (r->op == NAME_OPS) /* not an operation */
		assert_int_equal(name_check(r->op, "a"), -EINVAL);
	else
		assert_int_equal(name_check(r->op, text_of[r->kind]), ops[r->op].want[r->kind]);
}

int main(void)
{
	struct CMUnitTest tests[ARRAY_SIZE(rows)];
	size_t n = 0;

	memset(longest, 'x', sizeof(longest) - 1);
	memset(too_long, 'x', sizeof(too_long) - 1);
	for (int op = 0; op < NAME_OPS; op++)
		for (int k = 0; k < KINDS; k++, n++) {
			snprintf(row_names[n], sizeof(row_names[n]), "%s/%s", ops[op].name,
				 kind_names[k]);
			rows[n] = (struct row){row_names[n], (enum name_op)op, (enum kind)k};
		}
	rows[n] = (struct row){"no_such_op_einval", NAME_OPS, PLAIN};
	rows_to_tests(tests, rows, sizeof(rows[0]), ARRAY_SIZE(rows), test_row, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
