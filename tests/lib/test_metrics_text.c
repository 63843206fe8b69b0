/* Unit tests of poolctl metrics' pure part (lib/metrics_text.c): the pool's texts read, the
 * exposition format written (each family once across pools, HELP and TYPE, escaped labels, no
 * limit sample for "no limit", the histogram cumulative up to +Inf), and the pools found in
 * mountinfo texts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_text.h"

static const char stat_text[] = "entries 3\nbytes 4096\nmeta 96\nmax_size 8192\n"
				"max_user_size 1048576\nmax_user_entries 0\nmax_user_meta 65536\n"
				"datapath passthrough\nsomething_newer 7\n"
				"user 0 entries 1 bytes 0 meta 96\n"
				"user 1000 entries 2 bytes 4096 meta 0\n";
static const char counters_text[] =
	"rss_bytes 2146304\nlingering 1\nawaiting_forget 0\nestale 2\nswept_folders 1\n"
	"swept_files 5\nlock_handoffs 11\ntransport io_uring\nopen_handles 4\nmaybe_mapped 1\nheld 2\n"
	"removed other 0\nremoved last_close 6\nremoved unlink 1\nrefused EDQUOT 3\n"
	"refused EACCES 0\ndenied 9\ndenied_logged 8\nproof_probes 13\nlatency 10000 5\n"
	"latency 25000 8\n"
	"latency inf 12\nlatency_sum_ns 730561\nlock_wait 10000 40\nlock_wait 25000 41\n"
	"lock_wait inf 42\nlock_wait_sum_ns 2000000000\n";
static const char ops_text[] = "lookup 10 5000\ngetxattr 3 1000000001\ntotal 13 1000005001\n";

/* metrics_write's text for `n` pools, in a new string. */
static char *written(const struct metrics_pool *pools, size_t n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(metrics_write(f, pools, n), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

static size_t occurrences(const char *text, const char *s)
{
	size_t n = 0;

	for (const char *p = strstr(text, s); p; p = strstr(p + 1, s))
		n++;
	return n;
}

static void assert_has_line(const char *text, const char *line)
{
	size_t size = strlen(line) + 3;
	char *want = malloc(size);

	assert_non_null(want);
	snprintf(want, size, "\n%s\n", line);
	if (!strstr(text, want))
		fail_msg("no line \"%s\" in:\n%s", line, text);
	free(want);
}

static void test_stat_read(void **state)
{
	struct metrics_pool p = {.mountpoint = "/pool"};

	(void)state;
	assert_int_equal(metrics_parse_stat(&p, stat_text), 0);
	assert_true(p.have_stat);
	assert_int_equal(p.entries, 3);
	assert_int_equal(p.bytes, 4096);
	assert_int_equal(p.meta, 96);
	assert_int_equal(p.max_size, 8192);
	assert_int_equal(p.max_user_size, 1048576);
	assert_int_equal(p.max_user_meta, 65536);
	assert_string_equal(p.datapath, "passthrough");
	assert_int_equal(p.nusers, 2);
	assert_int_equal(p.users[1].uid, 1000);
	assert_int_equal(p.users[1].entries, 2);
	assert_int_equal(p.users[1].bytes, 4096);
	metrics_pool_clear(&p);
	assert_null(p.users);
	assert_string_equal(p.mountpoint, "/pool");
}

static void test_bad_texts_refused(void **state)
{
	static const char *const bad_stat[] = {"entries x\n",
					       "bytes -1\n",
					       "entries 1 2\n",
					       "user 5 entries 1 bytes 2\n",
					       "user x entries 1 bytes 2 meta 3\n",
					       "user 4294967296 entries 1 bytes 2 meta 3\n"};
	struct metrics_pool p = {.mountpoint = "/pool"};

	(void)state;
	for (size_t i = 0; i < sizeof(bad_stat) / sizeof(bad_stat[0]); i++) {
		assert_int_equal(metrics_parse_stat(&p, bad_stat[i]), -EINVAL);
		metrics_pool_clear(&p);
	}
	assert_int_equal(metrics_parse_counters(&p, "held\n"), -EINVAL);
	assert_int_equal(metrics_parse_counters(&p, "removed a b c\n"), -EINVAL);
	assert_int_equal(metrics_parse_ops(&p, "lookup 1\n"), -EINVAL);
	assert_int_equal(metrics_parse_ops(&p, "lookup 1 x\n"), -EINVAL);
	metrics_pool_clear(&p);
}

static void test_two_pools_written(void **state)
{
	struct metrics_pool pools[2] = {{.mountpoint = "/a"}, {.mountpoint = "/b"}};
	char *text;

	(void)state;
	assert_int_equal(metrics_parse_stat(&pools[0], stat_text), 0);
	assert_int_equal(metrics_parse_counters(&pools[0], counters_text), 0);
	assert_int_equal(metrics_parse_ops(&pools[0], ops_text), 0);
	/* The second: a user's view (no counters), no limits. */
	assert_int_equal(metrics_parse_stat(&pools[1], "entries 1\nbytes 2\nmeta 0\nmax_size 0\n"
						       "datapath pagecache\n"
						       "user 1001 entries 1 bytes 2 meta 0\n"),
			 0);
	text = written(pools, 2);
	/* Each family once, its samples together. */
	assert_int_equal(occurrences(text, "# TYPE poolfs_entries gauge\n"), 1);
	assert_int_equal(occurrences(text, "# HELP poolfs_entries "), 1);
	assert_has_line(text, "poolfs_entries{pool=\"/a\"} 3\npoolfs_entries{pool=\"/b\"} 1");
	assert_has_line(text, "poolfs_up{pool=\"/a\"} 1\npoolfs_up{pool=\"/b\"} 1");
	assert_has_line(
		text, "poolfs_info{pool=\"/a\",datapath=\"passthrough\",transport=\"io_uring\"} 1");
	assert_has_line(text,
			"poolfs_info{pool=\"/b\",datapath=\"pagecache\",transport=\"unknown\"} 1");
	/* Limits: present when set, absent when 0 (none), per user too. */
	assert_has_line(text, "poolfs_max_size_bytes{pool=\"/a\"} 8192");
	assert_null(strstr(text, "poolfs_max_size_bytes{pool=\"/b\"}"));
	assert_null(strstr(text, "poolfs_max_user_entries{"));
	assert_null(strstr(text, "poolfs_user_entries_limit{"));
	assert_has_line(text, "poolfs_user_size_limit_bytes{pool=\"/a\",uid=\"0\"} 1048576");
	assert_has_line(text, "poolfs_user_size_limit_bytes{pool=\"/a\",uid=\"1000\"} 1048576");
	assert_has_line(text, "poolfs_user_data_bytes{pool=\"/a\",uid=\"1000\"} 4096");
	assert_has_line(text, "poolfs_user_data_bytes{pool=\"/b\",uid=\"1001\"} 2");
	/* The daemon's counters, for the pool whose counters were read only. */
	assert_has_line(text, "poolfs_daemon_resident_memory_bytes{pool=\"/a\"} 2146304");
	assert_has_line(text, "poolfs_held_entries{pool=\"/a\"} 2");
	assert_has_line(text, "poolfs_crash_swept_files_total{pool=\"/a\"} 5");
	assert_has_line(text, "poolfs_lock_handoffs_total{pool=\"/a\"} 11");
	assert_has_line(text, "poolfs_removed_entries_total{pool=\"/a\",reason=\"last_close\"} 6");
	assert_has_line(text, "poolfs_refusals_total{pool=\"/a\",errno=\"EDQUOT\"} 3");
	assert_has_line(text, "poolfs_denied_log_lines_total{pool=\"/a\"} 8");
	assert_has_line(text, "poolfs_mapping_proof_probes_total{pool=\"/a\"} 13");
	assert_null(strstr(text, "poolfs_open_handles{pool=\"/b\"}"));
	assert_has_line(text, "# TYPE poolfs_request_duration_seconds histogram");
	assert_has_line(text,
			"poolfs_request_duration_seconds_bucket{pool=\"/a\",le=\"1e-05\"} 5\n"
			"poolfs_request_duration_seconds_bucket{pool=\"/a\",le=\"2.5e-05\"} 8\n"
			"poolfs_request_duration_seconds_bucket{pool=\"/a\",le=\"+Inf\"} 12\n"
			"poolfs_request_duration_seconds_sum{pool=\"/a\"} 0.000730561\n"
			"poolfs_request_duration_seconds_count{pool=\"/a\"} 12");
	/* A second histogram from the same text: its own lines only, its own sum. */
	assert_has_line(text, "# TYPE poolfs_lock_wait_seconds histogram");
	assert_has_line(text, "poolfs_lock_wait_seconds_bucket{pool=\"/a\",le=\"1e-05\"} 40\n"
			      "poolfs_lock_wait_seconds_bucket{pool=\"/a\",le=\"2.5e-05\"} 41\n"
			      "poolfs_lock_wait_seconds_bucket{pool=\"/a\",le=\"+Inf\"} 42\n"
			      "poolfs_lock_wait_seconds_sum{pool=\"/a\"} 2.000000000\n"
			      "poolfs_lock_wait_seconds_count{pool=\"/a\"} 42");
	assert_has_line(text, "poolfs_requests_total{pool=\"/a\",op=\"lookup\"} 10");
	assert_has_line(
		text,
		"poolfs_request_handler_seconds_total{pool=\"/a\",op=\"getxattr\"} 1.000000001");
	assert_null(strstr(text, "op=\"total\""));
	free(text);
	metrics_pool_clear(&pools[0]);
	metrics_pool_clear(&pools[1]);
}

static void test_silent_pool_and_escapes(void **state)
{
	struct metrics_pool p = {.mountpoint = "/x \"y\"\\z\nw"};
	char *text;

	(void)state;
	text = written(&p, 1);
	/* Only poolfs_up: 0, and nothing else claims a value. */
	assert_string_equal(text, "# HELP poolfs_up 1 if the pool's daemon answered, 0 if not.\n"
				  "# TYPE poolfs_up gauge\n"
				  "poolfs_up{pool=\"/x \\\"y\\\"\\\\z\\nw\"} 0\n");
	free(text);
}

static void test_mounts_found(void **state)
{
	static const char mountinfo[] =
		"22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
		"90 22 0:50 / /tmp/a\\040b rw,nosuid,nodev,relatime shared:1 master:2 - fuse.poolfs "
		"poolfs rw,user_id=0,group_id=0\n"
		"91 22 0:51 / /mnt/other rw - fuse.sshfs host:/ rw\n"
		"92 22 0:52 / /dev/shm rw - fuse.poolfs poolfs rw\n";
	char **mounts = NULL;

	(void)state;
	assert_int_equal(metrics_find_mounts(mountinfo, &mounts), 0);
	assert_string_equal(mounts[0], "/tmp/a b");
	assert_string_equal(mounts[1], "/dev/shm");
	assert_null(mounts[2]);
	metrics_mounts_free(mounts);
	assert_int_equal(metrics_find_mounts("", &mounts), 0);
	assert_null(mounts[0]);
	metrics_mounts_free(mounts);
	/* No " - " separator with a type after it: not mountinfo. */
	assert_int_equal(metrics_find_mounts("1 2 0:1 / /x rw shared:1\n", &mounts), -EINVAL);
	assert_int_equal(metrics_find_mounts("1 2 0:1 / /x rw -\n", &mounts), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat_read),
		cmocka_unit_test(test_bad_texts_refused),
		cmocka_unit_test(test_two_pools_written),
		cmocka_unit_test(test_silent_pool_and_escapes),
		cmocka_unit_test(test_mounts_found),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
