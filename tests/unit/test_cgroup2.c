/* Unit tests of fs/cgroup2.c: finding the cgroup v2 mount in mountinfo texts (unified and hybrid
 * hosts, none at all, a cgroup v1 mount named like it, a mount point that does not fit or holds
 * escaped blanks, a line without the separator, a missing file), each written to a temporary file; and the live
 * /proc/self/mountinfo of this machine. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rows.h"

#include "cgroup2.h"

#define UNIFIED                                                                                    \
	"35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw\n"
#define HYBRID_V1 "36 24 0:31 / /sys/fs/cgroup/cpu rw shared:10 - cgroup cgroup rw,cpu\n"
#define HYBRID_V2 "37 24 0:32 / /sys/fs/cgroup/unified rw shared:11 - cgroup2 cgroup2 rw\n"
#define ROOTFS "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"

struct find_row {
	const char *name;
	const char *text; /* the mountinfo file's content */
	size_t buflen;	  /* 0: a PATH_MAX-sized buffer */
	int rc;
	const char *mount; /* expected when rc is 0 */
};

static const struct find_row find_rows[] = {
	{"unified", ROOTFS UNIFIED, 0, 0, "/sys/fs/cgroup"},
	{"hybrid", ROOTFS HYBRID_V1 HYBRID_V2, 0, 0, "/sys/fs/cgroup/unified"},
	{"the first of two", ROOTFS HYBRID_V2 UNIFIED, 0, 0, "/sys/fs/cgroup/unified"},
	{"v1 only", ROOTFS HYBRID_V1, 0, -ENOENT, NULL},
	{"empty file", "", 0, -ENOENT, NULL},
	/* optional fields before the separator may name anything, the fstype after it decides */
	{"cgroup2 as an optional field", "40 24 0:33 / /x rw shared:12 cgroup2 - tmpfs t rw\n", 0,
	 -ENOENT, NULL},
	{"no separator", "41 24 0:34 / /y rw cgroup2 cgroup2 rw\n", 0, -ENOENT, NULL},
	{"fits exactly", UNIFIED, sizeof("/sys/fs/cgroup"), 0, "/sys/fs/cgroup"},
	{"one byte short", UNIFIED, sizeof("/sys/fs/cgroup") - 1, -ENAMETOOLONG, NULL},
	{"space in the mount point", "42 24 0:35 / /a\\040b rw - cgroup2 c rw\n", 0, 0, "/a b"},
	{"backslash in the mount point", "43 24 0:36 / /a\\134b rw - cgroup2 c rw\n", 0, 0,
	 "/a\\b"},
	{"a lone backslash is kept", "44 24 0:37 / /a\\9b rw - cgroup2 c rw\n", 0, 0, "/a\\9b"},
};

#define N_FIND_ROWS (sizeof(find_rows) / sizeof(find_rows[0]))

static void test_find_row(void **state)
{
	const struct find_row *r = *state;
	char path[] = "/tmp/poolfs-mountinfo-XXXXXX", buf[4096];
	size_t len = r->buflen ? r->buflen : sizeof(buf);

	rows_temp_file(path, r->text);
	memset(buf, 'x', sizeof(buf));
	int rc = cgroup2_find_mount(path, buf, len);
	unlink(path);
	assert_int_equal(rc, r->rc);
	if (rc == 0)
		assert_string_equal(buf, r->mount);
}

static void test_missing_file(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(cgroup2_find_mount("/nonexistent/mountinfo", buf, sizeof(buf)), -ENOENT);
}

/* This machine's own table: whatever it says, the answer is a mount point or -ENOENT. */
static void test_live_mountinfo(void **state)
{
	char buf[4096];
	int rc = cgroup2_find_mount("/proc/self/mountinfo", buf, sizeof(buf));

	(void)state;
	assert_true(rc == 0 || rc == -ENOENT);
	if (rc == 0)
		assert_true(buf[0] == '/');
}

int main(void)
{
	static const struct CMUnitTest more[] = {
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_live_mountinfo),
	};
	struct CMUnitTest tests[N_FIND_ROWS + sizeof(more) / sizeof(more[0])];

	rows_to_tests(tests, find_rows, sizeof(find_rows[0]), N_FIND_ROWS, test_find_row, NULL,
		      NULL);
	memcpy(tests + N_FIND_ROWS, more, sizeof(more));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
