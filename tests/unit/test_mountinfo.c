/* Unit tests of fs/procfs.c mountinfo_fuse_dev: the device of the FUSE mount on a path, read from
 * mountinfo texts (the topmost of a stack, escaped blanks, a non-FUSE mount on the same path, a
 * FUSE mount elsewhere, no separator), each written to a temporary file; a missing file; and a
 * path of this machine's own table that holds no FUSE mount. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "rows.h"

#include "procfs.h"

#define ROOTFS "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
#define TMPFS_P "30 22 0:40 / /p rw - tmpfs tmpfs rw\n"
#define POOL_P "31 30 0:52 / /p rw,nosuid,nodev - fuse.poolfs poolfs rw,user_id=0\n"
#define POOL_P_TOP "32 31 0:57 / /p rw - fuse.poolfs poolfs rw,user_id=0\n"

struct dev_row {
	const char *name;
	const char *text;	/* the mountinfo file's content */
	const char *mountpoint; /* asked */
	int rc;
	unsigned minor; /* expected when rc is 0 (major 0) */
};

static const struct dev_row dev_rows[] = {
	{"a pool", ROOTFS TMPFS_P POOL_P, "/p", 0, 52},
	{"the topmost of two", ROOTFS TMPFS_P POOL_P POOL_P_TOP, "/p", 0, 57},
	{"not FUSE", ROOTFS TMPFS_P, "/p", -ENOENT, 0},
	{"FUSE elsewhere", ROOTFS POOL_P, "/q", -ENOENT, 0},
	{"a prefix is not the path", ROOTFS POOL_P, "/", -ENOENT, 0},
	{"space in the mount point", "40 22 0:60 / /a\\040b rw - fuse.poolfs p rw\n", "/a b", 0,
	 60},
	{"plain fuse", "41 22 0:61 / /f rw - fuse sshfs rw\n", "/f", 0, 61},
	{"fuse as an optional field", "42 22 0:62 / /g rw fuse - tmpfs t rw\n", "/g", -ENOENT, 0},
	{"no separator", "43 22 0:63 / /h rw fuse fuse rw\n", "/h", -ENOENT, 0},
	{"empty file", "", "/p", -ENOENT, 0},
};

static void test_dev_row(void **state)
{
	const struct dev_row *r = *state;
	char path[] = "/tmp/poolfs-mountinfo-XXXXXX";
	dev_t dev = 0;
	int rc;

	rows_temp_file(path, r->text);
	rc = mountinfo_fuse_dev(path, r->mountpoint, &dev);
	unlink(path);
	assert_int_equal(rc, r->rc);
	if (rc == 0) {
		assert_int_equal(major(dev), 0);
		assert_int_equal(minor(dev), r->minor);
	}
}

static void test_missing_file(void **state)
{
	dev_t dev;

	(void)state;
	assert_int_equal(mountinfo_fuse_dev("/nonexistent/mountinfo", "/p", &dev), -ENOENT);
}

/* This machine's own table: the root is never a FUSE mount. */
static void test_live_mountinfo(void **state)
{
	dev_t dev;

	(void)state;
	assert_int_equal(mountinfo_fuse_dev("/proc/self/mountinfo", "/", &dev), -ENOENT);
}

int main(void)
{
	static const struct CMUnitTest more[] = {
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_live_mountinfo),
	};
	const size_t nrows = sizeof(dev_rows) / sizeof(dev_rows[0]);
	struct CMUnitTest
		tests[sizeof(dev_rows) / sizeof(dev_rows[0]) + sizeof(more) / sizeof(more[0])];

	rows_to_tests(tests, dev_rows, sizeof(dev_rows[0]), nrows, test_dev_row, NULL, NULL);
	memcpy(tests + nrows, more, sizeof(more));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
