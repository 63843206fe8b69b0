/* Unit tests of fs/memcg.c's readers: where the memory controller is mounted (cgroup v1's own
 * hierarchy on a hybrid host, v2 on a unified one, none) and which cgroup a /proc/PID/cgroup text
 * names in it, each text written to a temporary file: the v1 and v2 cases this machine cannot
 * show (its memory controller is v1) run here too. And this machine's own files. */
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

#include "memcg.h"

#define ROOTFS "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
#define V1_CPU "36 24 0:31 / /sys/fs/cgroup/cpu rw shared:10 - cgroup cgroup rw,cpu\n"
#define V1_MEM "37 24 0:32 / /sys/fs/cgroup/memory rw shared:11 - cgroup cgroup rw,memory\n"
#define V1_NAMED "38 24 0:33 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=memory\n"
#define V1_JOINED "39 24 0:34 / /sys/fs/cgroup/cm rw - cgroup cgroup rw,cpu,memory,xattr\n"
#define V2_HYBRID "40 24 0:35 / /sys/fs/cgroup/unified rw shared:12 - cgroup2 cgroup2 rw\n"
#define V2_UNIFIED "41 24 0:36 / /sys/fs/cgroup rw shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"

/* /proc/PID/cgroup texts. */
#define SELF_V1 "9:name=systemd:/\n4:memory:/slurm/uid_0/job_7/step_batch\n1:cpu:/\n0::/\n"
#define SELF_V1_JOINED "5:cpu,memory:/a/b\n0::/\n"
#define SELF_V2 "0::/system.slice/slurmstepd.scope/job_7/step_0/user/task_0\n"

struct open_row {
	const char *name;
	const char *mountinfo;
	const char *self; /* /proc/self/cgroup */
	const char *root; /* expected when rc is 0, with v1 and cg */
	const char *cg;
	int rc;
	int v1;
};

static const struct open_row open_rows[] = {
	{"v1 memory on a hybrid host", ROOTFS V1_CPU V1_MEM V2_HYBRID, SELF_V1,
	 "/sys/fs/cgroup/memory", "/slurm/uid_0/job_7/step_batch", 0, 1},
	{"v1 memory joined with cpu", ROOTFS V1_JOINED V2_HYBRID, SELF_V1_JOINED,
	 "/sys/fs/cgroup/cm", "/a/b", 0, 1},
	{"v2 on a unified host", ROOTFS V2_UNIFIED, SELF_V2, "/sys/fs/cgroup",
	 "/system.slice/slurmstepd.scope/job_7/step_0/user/task_0", 0, 0},
	/* memory not among the v1 hierarchies: it is v2's */
	{"v2 on a hybrid host", ROOTFS V1_CPU V2_HYBRID, SELF_V1, "/sys/fs/cgroup/unified", "/", 0,
	 0},
	{"a named hierarchy is not the controller", ROOTFS V1_NAMED, SELF_V1, NULL, NULL, -ENOENT,
	 0},
	{"no cgroups at all", ROOTFS, SELF_V2, NULL, NULL, -ENOENT, 0},
	{"v1 memory, but no memory line", ROOTFS V1_MEM, SELF_V2, NULL, NULL, -ENOENT, 0},
};

#define N_OPEN_ROWS (sizeof(open_rows) / sizeof(open_rows[0]))

static void test_open_row(void **state)
{
	const struct open_row *r = *state;
	char mi[] = "/tmp/poolfs-mountinfo-XXXXXX", self[] = "/tmp/poolfs-cgroup-XXXXXX";
	struct memcg m;
	int rc;

	rows_temp_file(mi, r->mountinfo);
	rows_temp_file(self, r->self);
	rc = memcg_open(&m, mi, self);
	unlink(mi);
	unlink(self);
	assert_int_equal(rc, r->rc);
	if (rc < 0) {
		assert_string_equal(m.root, ""); /* nothing to charge to: the daemon pays */
		return;
	}
	assert_string_equal(m.root, r->root);
	assert_int_equal(m.v1, r->v1);
	assert_string_equal(m.self, r->cg);
}

/* A job's thread, read with the hierarchy this machine has: whatever it is, a path or -ENOENT. */
static void test_live_self(void **state)
{
	struct memcg m;
	char cg[4096];
	int rc = memcg_open(&m, "/proc/self/mountinfo", "/proc/self/cgroup");

	(void)state;
	assert_true(rc == 0 || rc == -ENOENT);
	if (rc < 0)
		return;
	assert_int_equal(memcg_of(&m, getpid(), cg, sizeof(cg)), 0);
	assert_string_equal(cg, m.self);
	assert_int_equal(memcg_of(&m, 0x3fffffff, cg, sizeof(cg)), -ESRCH);
}

/* A path that does not fit is refused, not cut. */
static void test_too_long(void **state)
{
	struct memcg m = {.root = "/sys/fs/cgroup", .v1 = false};
	char path[] = "/tmp/poolfs-cgroup-XXXXXX", cg[8];

	(void)state;
	rows_temp_file(path, "0::/a/long/path\n");
	assert_int_equal(memcg_in_file(&m, path, cg, sizeof(cg)), -ENAMETOOLONG);
	unlink(path);
}

int main(void)
{
	static const struct CMUnitTest more[] = {
		cmocka_unit_test(test_live_self),
		cmocka_unit_test(test_too_long),
	};
	struct CMUnitTest tests[N_OPEN_ROWS + sizeof(more) / sizeof(more[0])];

	rows_to_tests(tests, open_rows, sizeof(open_rows[0]), N_OPEN_ROWS, test_open_row, NULL,
		      NULL);
	memcpy(tests + N_OPEN_ROWS, more, sizeof(more));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
