/* Unit tests of the daemon's counters texts (fs/poolstats.c, fs/opstats.c's histogram): what
 * user.poolfs.counters gives poolctl metrics. A removal's reason, a reply's errno, the gauges
 * and the histograms of handler times and lock waits (cumulative, each in the first bucket that
 * holds it). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "opstats.h"
#include "poolstats.h"

static void test_poolstats_text(void **state)
{
	struct poolstats s;
	char buf[1024];

	(void)state;
	memset(&s, 0, sizeof(s));
	poolstats_removed(&s, REMOVED_LAST_CLOSE);
	poolstats_removed(&s, REMOVED_LAST_CLOSE);
	poolstats_removed(&s, REMOVED_HOLD_ENDED);
	poolstats_removed(&s, 200); /* not a reason: counted as other, never out of bounds */
	poolstats_reply(&s, EDQUOT);
	poolstats_reply(&s, EACCES);
	poolstats_reply(&s, ENOENT); /* an answer, not a refusal */
	poolstats_reply(&s, 0);
	poolstats_gauge(&s.open_handles, 1);
	poolstats_gauge(&s.open_handles, 1);
	poolstats_gauge(&s.held, 1);
	poolstats_gauge(&s.maybe_mapped, -1); /* a dip below 0 reads as 0 */
	int n = poolstats_format(&s, buf, sizeof(buf));
	assert_int_equal(n, (int)strlen(buf));
	assert_string_equal(buf, "open_handles 2\nmaybe_mapped 0\nheld 1\n"
				 "removed other 1\nremoved last_close 2\nremoved last_unmap 0\n"
				 "removed hold_ended 1\nremoved unlink 0\nremoved emptied 0\n"
				 "refused ENOSPC 0\nrefused EDQUOT 1\nrefused EACCES 1\n"
				 "refused EPERM 0\ndenied 0\ndenied_logged 0\n"
				 "proof_probes 0\n");
	assert_int_equal(poolstats_format(&s, buf, (size_t)n), -ERANGE);
	assert_int_equal(poolstats_format(&s, buf, (size_t)n + 1), n);
	assert_string_equal(poolstats_removal_name(REMOVED_LAST_UNMAP), "last_unmap");
}

static void test_latency_histogram(void **state)
{
	struct opstats s;
	char buf[2048];
	uint64_t now = opstats_now();

	(void)state;
	memset(&s, 0, sizeof(s));
	/* Started "long ago": 2 s and 20 ms (the time a handler took is now - start). */
	opstats_time(&s, OPSTAT_LOOKUP, now - 2000000000u);
	opstats_time(&s, OPSTAT_READ, now - 20000000u);
	int n = opstats_format_latency(&s, buf, sizeof(buf));
	assert_int_equal(n, (int)strlen(buf));
	/* The 20 ms request is in the 25 ms bucket and every one above; the 2 s only in +Inf. */
	assert_non_null(strstr(buf, "latency 10000000 0\nlatency 25000000 1\n"));
	assert_non_null(strstr(buf, "latency 1000000000 1\nlatency inf 2\nlatency_sum_ns "));
	assert_int_equal(opstats_format_latency(&s, buf, 10), -ERANGE);
	opstats_reset(&s);
	assert_true(opstats_format_latency(&s, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "latency 25000000 0\n"));
	assert_non_null(strstr(buf, "latency inf 0\nlatency_sum_ns 0\n"));
}

static void test_lock_wait_histogram(void **state)
{
	struct opstats s;
	char buf[2048];

	(void)state;
	memset(&s, 0, sizeof(s));
	opstats_lock_wait(&s, 0);			/* the lock was free: the first bucket */
	opstats_lock_wait(&s, 10000);			/* on the first bound: still in it */
	opstats_lock_wait(&s, 30000000);		/* 30 ms: the 100 ms bucket */
	opstats_time(&s, OPSTAT_LOOKUP, opstats_now()); /* a handler: not a lock wait */
	int n = opstats_format_latency(&s, buf, sizeof(buf));
	assert_int_equal(n, (int)strlen(buf));
	/* After the handlers' histogram, cumulative, with its own sum. */
	assert_non_null(strstr(buf, "latency_sum_ns "));
	assert_true(strstr(buf, "lock_wait 10000 2\n") > strstr(buf, "latency inf 1\n"));
	assert_non_null(strstr(buf, "lock_wait 25000000 2\nlock_wait 100000000 3\n"));
	assert_non_null(strstr(buf, "lock_wait inf 3\nlock_wait_sum_ns 30010000\n"));
	/* A buffer that holds the first histogram but not the second is too small all the same. */
	assert_int_equal(
		opstats_format_latency(&s, buf, (size_t)(strstr(buf, "lock_wait") - buf) + 4),
		-ERANGE);
	opstats_reset(&s);
	assert_true(opstats_format_latency(&s, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "lock_wait inf 0\nlock_wait_sum_ns 0\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_poolstats_text),
		cmocka_unit_test(test_latency_histogram),
		cmocka_unit_test(test_lock_wait_histogram),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
