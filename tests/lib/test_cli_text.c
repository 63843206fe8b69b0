/* Unit tests of poolctl's words (lib/cli_text.c): human-readable sizes and the poolfs-specific
 * explanations of errno values that poolctl prints after "poolctl: CMD: PATH: ".
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "cli_text.h"

static void check_size(uint64_t v, const char *want)
{
	char buf[32];
	int n = human_size(v, buf, sizeof buf);
	if (n < 0 || strcmp(buf, want) != 0 || (size_t)n != strlen(want))
		fail_msg("human_size(%llu) = %d \"%s\", want \"%s\"", (unsigned long long)v, n, buf,
			 want);
}

static void test_human_size(void **state)
{
	(void)state;
	check_size(0, "0 B");
	check_size(1, "1 B");
	check_size(1023, "1023 B");
	check_size(1024, "1.0 KiB");
	check_size(1536, "1.5 KiB");
	check_size(10 * 1024 + 51, "10.0 KiB");
	check_size(1048575, "1.0 MiB"); /* not "1024.0 KiB" */
	check_size(1048576, "1.0 MiB");
	check_size(1610612736ull, "1.5 GiB");
	check_size(10737418240ull, "10.0 GiB");
	check_size(1ull << 40, "1.0 TiB");
	check_size(1ull << 50, "1.0 PiB");
	check_size(1ull << 60, "1.0 EiB");
	check_size(UINT64_MAX, "16.0 EiB");

	char small[8];
	assert_int_equal(human_size(1023, small, 7), 6);
	assert_int_equal(human_size(1023, small, 6), -ERANGE);
	assert_int_equal(human_size(1610612736ull, small, sizeof small), 7);
	assert_int_equal(human_size(10737418240ull, small, sizeof small), -ERANGE);
}

static void check_explain(const char *cmd, int err, const char *want)
{
	const char *got = poolctl_explain(cmd, err);
	if (want == NULL ? got != NULL : (got == NULL || strcmp(got, want) != 0))
		fail_msg("poolctl_explain(%s, %d) = \"%s\", want \"%s\"", cmd ? cmd : "(null)", err,
			 got ? got : "(null)", want ? want : "(null)");
}

static void test_explain(void **state)
{
	(void)state;
	check_explain("hold", EINVAL, "bad hold scope");
	check_explain("mkjob", EINVAL, "bad hold scope");
	check_explain("hold", ESRCH, "no such process to hold for");
	check_explain(
		"mkjob", ENOPROTOOPT,
		"this pool cannot watch that hold scope here (cgroup: no cgroup v2 group of yours to watch)");
	check_explain("refs", ENOPROTOOPT, NULL);
	check_explain("release", ENODATA, "no hold of yours on this entry");
	check_explain("refs", ENODATA, "not on a poolfs pool");
	check_explain("stat", ENODATA, "not on a poolfs pool");
	for (const char *const *c =
		     (const char *const[]){"hold", "release", "refs", "stat", "mkjob", NULL};
	     *c; c++)
		check_explain(*c, ENOTSUP, "not on a poolfs pool");
	check_explain("refs", EPROTO, "unexpected answer from the pool daemon (version mismatch?)");
	check_explain("stat", EPROTO, "unexpected answer from the pool daemon (version mismatch?)");
	check_explain("hold", ESTALE, "the pool has just removed this entry");
	check_explain("mkjob", ERANGE, "path too long");
	check_explain("mkunique", ERANGE, "path too long");

	/* no special meaning: strerror() says it */
	check_explain("release", EINVAL, NULL);
	check_explain("refs", EINVAL, NULL);
	check_explain("hold", ENOENT, NULL);
	check_explain("hold", EACCES, NULL);
	check_explain("hold", ENODATA, NULL);
	check_explain("mkunique", EEXIST, NULL);
	check_explain("hold", EPROTO, NULL);
	check_explain(NULL, EINVAL, NULL);
	check_explain("refs", 0, NULL);
}

/* One row per argument: accepted or not, and the pid it gives. */
static void test_parse_pid(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		bool ok;
		pid_t want;
	} rows[] = {
		{"1", true, 1},
		{"4242", true, 4242},
		{"2147483647", true, 2147483647},
		{"0", false, 0},
		{"-1", false, 0},
		{"2147483648", false, 0},
		{"", false, 0},
		{"12x", false, 0},
		{" 12", true, 12}, /* strtol's blank */
		{"99999999999999999999", false, 0},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		pid_t pid = -7;
		bool ok = cli_parse_pid(rows[i].text, &pid);
		if (ok != rows[i].ok || (ok && pid != rows[i].want) || (!ok && pid != -7))
			fail_msg("row %zu '%s': ok %d pid %d", i, rows[i].text, ok, (int)pid);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_human_size),
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_parse_pid),
	};
	return cmocka_run_group_tests_name("cli_text", tests, NULL, NULL);
}
