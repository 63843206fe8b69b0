/* Unit tests of poolctl env's words (lib/env_text.c): the job folder prefix from SLURM_JOB_ID
 * (digits only, never a path), shell quoting that survives eval, and the exported lines. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "env_text.h"

static void test_prefix(void **state)
{
	char buf[64];
	(void)state;
	assert_int_equal(env_folder_prefix(NULL, buf, sizeof buf), 4);
	assert_string_equal(buf, "job-");
	assert_int_equal(env_folder_prefix("", buf, sizeof buf), 4);
	assert_string_equal(buf, "job-");
	assert_int_equal(env_folder_prefix("12345", buf, sizeof buf), 10);
	assert_string_equal(buf, "job-12345-");
	assert_int_equal(env_folder_prefix("12345678901234567890", buf, sizeof buf), 25);
}

static void test_prefix_refuses_non_digits(void **state)
{
	char buf[64];
	(void)state;
	assert_int_equal(env_folder_prefix("12/../x", buf, sizeof buf), -EINVAL);
	assert_int_equal(env_folder_prefix("12 3", buf, sizeof buf), -EINVAL);
	assert_int_equal(env_folder_prefix("-1", buf, sizeof buf), -EINVAL);
	assert_int_equal(env_folder_prefix("123456789012345678901", buf, sizeof buf), -EINVAL);
}

static void test_prefix_room(void **state)
{
	char buf[11];
	(void)state;
	assert_int_equal(env_folder_prefix("12345", buf, 10), -ERANGE);
	assert_int_equal(env_folder_prefix("12345", buf, 11), 10);
	assert_int_equal(env_folder_prefix(NULL, buf, 4), -ERANGE);
}

static void test_quote(void **state)
{
	char buf[64];
	(void)state;
	assert_int_equal(env_shell_quote("/pool/job-1-ab", buf, sizeof buf), 16);
	assert_string_equal(buf, "'/pool/job-1-ab'");
	assert_int_equal(env_shell_quote("", buf, sizeof buf), 2);
	assert_string_equal(buf, "''");
	env_shell_quote("a'b $x `y`", buf, sizeof buf);
	assert_string_equal(buf, "'a'\\''b $x `y`'");
}

static void test_quote_room(void **state)
{
	char buf[8];
	(void)state;
	/* 'abcd' needs 6 bytes + NUL */
	assert_int_equal(env_shell_quote("abcd", buf, 6), -ERANGE);
	assert_int_equal(env_shell_quote("abcd", buf, 7), 6);
	assert_int_equal(env_shell_quote("'", buf, 6), -ERANGE);
	assert_int_equal(env_shell_quote("'", buf, 7), 6);
}

static void test_format(void **state)
{
	char buf[512];
	const char *want = "POOLFS_JOB='/p/job-7-x'; export POOLFS_JOB\n"
			   "JOBLIB_TEMP_FOLDER='/p/job-7-x'; export JOBLIB_TEMP_FOLDER\n"
			   "TMPDIR='/p/job-7-x'; export TMPDIR\n";
	(void)state;
	assert_int_equal(env_format("/p/job-7-x", buf, sizeof buf), (int)strlen(want));
	assert_string_equal(buf, want);
	assert_int_equal(env_format("/p/job-7-x", buf, strlen(want)), -ERANGE);
	assert_int_equal(env_format("/p/job-7-x", buf, strlen(want) + 1), (int)strlen(want));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefix),
		cmocka_unit_test(test_prefix_refuses_non_digits),
		cmocka_unit_test(test_prefix_room),
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_quote_room),
		cmocka_unit_test(test_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
