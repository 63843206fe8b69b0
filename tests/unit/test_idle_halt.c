/* Unit tests of fs/idle_halt.c: is this a VM that halts its idle CPUs at once? Each row builds a
 * sysfs of its own in a temporary folder (the driver and the polling time, or their absence), so
 * the cases this machine cannot show run here too; then this machine's own /sys. */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "rows.h"

#include "idle_halt.h"

struct halt_row {
	const char *name;
	const char *driver;  /* current_driver's text; NULL: no such file */
	const char *poll_ns; /* guest_halt_poll_ns's text; NULL: no such file */
	int rc;
};

static const struct halt_row halt_rows[] = {
	{"haltpoll, polling off", "haltpoll\n", "0\n", 1},
	{"haltpoll, polling 200 us", "haltpoll\n", "200000\n", 0},
	{"haltpoll, no newline", "haltpoll", "0", 1},
	{"another driver", "intel_idle\n", NULL, 0},
	{"no cpuidle driver", "none\n", NULL, 0},
	{"no driver file", NULL, "0\n", -ENOENT},
	{"haltpoll without its parameter", "haltpoll\n", NULL, -ENOENT},
	{"polling time not a number", "haltpoll\n", "soon\n", -EINVAL},
	{"polling time empty", "haltpoll\n", "\n", -EINVAL},
	{"polling time negative", "haltpoll\n", "-1\n", -EINVAL},
};
#define N_HALT_ROWS (sizeof(halt_rows) / sizeof(halt_rows[0]))

/* Writes root/rel (making its folders) holding text. */
static void put(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	for (const char *s = strchr(rel + 1, '/'); s; s = strchr(s + 1, '/')) {
		assert_true(snprintf(path, sizeof(path), "%s%.*s", root, (int)(s - rel), rel) <
			    (int)sizeof(path));
		assert_true(mkdir(path, 0700) == 0 || errno == EEXIST);
	}
	assert_true(snprintf(path, sizeof(path), "%s%s", root, rel) < (int)sizeof(path));
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) < 0, 0);
	assert_int_equal(fclose(f), 0);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void test_halt_row(void **state)
{
	const struct halt_row *row = *state;
	char root[] = "/tmp/poolfs-sysfs-XXXXXX";

	assert_non_null(mkdtemp(root));
	if (row->driver)
		put(root, IDLE_HALT_DRIVER, row->driver);
	if (row->poll_ns)
		put(root, IDLE_HALT_POLL_NS, row->poll_ns);
	int r = idle_halt_at_once(root);
	assert_int_equal(nftw(root, remove_one, 8, FTW_DEPTH | FTW_PHYS), 0);
	assert_int_equal(r, row->rc);
}

/* This machine: an answer where it has a cpuidle driver, -ENOENT where it has none. */
static void test_this_machine(void **state)
{
	struct stat st;
	int r = idle_halt_at_once("/sys");

	(void)state;
	if (stat("/sys" IDLE_HALT_DRIVER, &st) == 0)
		assert_true(r == 0 || r == 1);
	else
		assert_int_equal(r, -ENOENT);
}

int main(void)
{
	static const struct CMUnitTest more[] = {
		cmocka_unit_test(test_this_machine),
	};
	struct CMUnitTest tests[N_HALT_ROWS + sizeof(more) / sizeof(more[0])];

	rows_to_tests(tests, halt_rows, sizeof(halt_rows[0]), N_HALT_ROWS, test_halt_row, NULL,
		      NULL);
	memcpy(tests + N_HALT_ROWS, more, sizeof(more));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
