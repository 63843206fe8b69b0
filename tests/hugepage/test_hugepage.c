/* The private backing store (docs/interface.md, "backing=" and "huge="): pools mounted without
 * backing= (POOLFS_BACKING=private), so a root daemon keeps its data in a tmpfs instance of its
 * own. Checked here:
 *   - no path reaches the instance (it is in no mount table), yet the pool's files live in it;
 *   - big files are mapped with huge pages (PMD mappings in /proc/PID/smaps) for the writer and
 *     for a reader in another process on the passthrough path, and never with huge=never;
 *   - no instance outlives its daemon, SIGKILL included; a mapping made before the crash keeps
 *     the instance (and its data, readable and writable) until it is unmapped, then it goes;
 *   - a file stays until its last mapping in any process is gone, then goes.
 * Huge pages come from the kernel's free memory: where it had none to give (thp_file_fallback
 * moved in /proc/vmstat) the PMD checks skip rather than blame the pool. */
#include "testutil.h"
#include "hp_util.h"

#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#define BIG (16u << 20) /* eight 2 MiB pages */

static int setup(void **state)
{
	return tu_setup(state, "autohold=none");
}

static int setup_never(void **state)
{
	return tu_setup(state, "autohold=none,huge=never");
}

static int teardown(void **state)
{
	return tu_teardown(state);
}

static int passthrough(const struct pool_fixture *p)
{
	return strcmp(p->active_datapath, "passthrough") == 0;
}

/* The store is in no mount table, the test's tmpfs is not it, and the pool's files live in it. */
static void test_store_unreachable(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	char line[1024], want[32];
	FILE *mi;
	int fd, n;

	assert_true(p->private_store);
	assert_true(p->store_dev != 0);
	assert_int_equal(pool_dev_alive(p->store_dev), 1);
	snprintf(want, sizeof(want), " %u:%u ", major(p->store_dev), minor(p->store_dev));
	mi = fopen("/proc/self/mountinfo", "re");
	assert_non_null(mi);
	while (fgets(line, sizeof(line), mi))
		if (strstr(line, want))
			fail_msg("the private tmpfs is mounted somewhere: %s", line);
	fclose(mi);
	n = pool_backing_files(p);
	fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd);
	assert_int_equal(pool_backing_files(p), n + 1);
	CHECK(close(fd));
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

struct reader {
	const char *path;
};

/* A reader in another process: maps the file, checks every page, reports PMD kB > 0 as exit 0,
 * 3 for "no PMD mapping", 1/2 for errors. */
static int read_child(void *arg)
{
	const struct reader *r = arg;
	int fd = open(r->path, O_RDONLY);
	unsigned char *m;
	long kb;

	if (fd < 0)
		return 1;
	m = mmap(NULL, BIG, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return 1;
	if (pat_check(m, BIG, 9, 0) != -1)
		return 2;
	kb = hp_pmd_kb(m);
	munmap(m, BIG);
	return kb > 0 ? 0 : 3;
}

/* A new file f of BIG bytes, mapped shared read-write into *m and filled with pattern seed:
 * its descriptor. */
static int map_new_big(const char *f, uint32_t seed, unsigned char **m)
{
	int fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600);

	CHECK(fd);
	CHECK(ftruncate(fd, BIG));
	*m = mmap(NULL, BIG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(*m != MAP_FAILED);
	pat_fill(*m, BIG, seed, 0);
	return fd;
}

/* Write a big file through a mapping, then read it from another process: both map huge pages
 * (passthrough). Returns the writer's PMD kB; *fell_back says the kernel had no huge page. */
static long write_and_read(struct pool_fixture *p, int *reader_rc, int *fell_back)
{
	PATH(f, p, "big");
	struct reader r = {f};
	long before = hp_vmstat("thp_file_fallback"), kb;
	unsigned char *m;
	int fd = map_new_big(f, 9, &m);

	kb = hp_pmd_kb(m);
	*reader_rc = tu_reap(tu_spawn(read_child, &r), CHILD_MS);
	*fell_back = hp_vmstat("thp_file_fallback") != before;
	CHECK(munmap(m, BIG));
	CHECK(close(fd));
	ASSERT_GONE(f);
	return kb;
}

static void test_pmd_mapped_writer_and_reader(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	int reader_rc, fell_back;
	long kb;

	if (!passthrough(p))
		TU_SKIP("passthrough only: page-cache mappings are FUSE pages, never PMD-mapped");
	kb = write_and_read(p, &reader_rc, &fell_back);
	if (fell_back && (kb <= 0 || reader_rc == 3)) {
		TU_SKIP("the kernel had no free huge page (thp_file_fallback moved)");
	}
	if (kb <= 0)
		fail_msg("the writer's mapping has no PMD-mapped pages (%ld kB)", kb);
	assert_int_equal(reader_rc, 0);
}

/* huge=never reaches the instance: the same file is mapped with small pages only. */
static void test_huge_never(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	int reader_rc, fell_back;

	assert_int_equal(write_and_read(p, &reader_rc, &fell_back), 0);
	assert_int_equal(reader_rc, 3);
}

/* A daemon killed with SIGKILL: a mapping made before keeps its data (passthrough: the tmpfs
 * pages themselves, readable and writable) and keeps the instance alive; at munmap the
 * instance goes. Held but unmapped data goes with the daemon. */
static void test_sigkill_store_lifetime(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(g, p, "held");
	dev_t dev = p->store_dev;
	unsigned char *m;
	int fd;

	fd = open(g, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd);
	CHECK(fsetxattr(fd, POOLFS_XATTR_HOLD, "pin", 3, 0));
	CHECK(close(fd));
	fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd);
	CHECK(ftruncate(fd, BIG));
	m = mmap(NULL, BIG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	pat_fill(m, BIG, 21, 0);
	CHECK(close(fd));
	CHECK_0(pool_kill_daemon(p, SIGKILL));
	assert_false(pool_is_mounted(p));
	if (passthrough(p)) {
		assert_int_equal(pool_dev_alive(dev), 1);
		/* our mapping keeps it: the wait for its end must run out */
		assert_int_equal(pool_wait_store_gone(p, 100), -ETIMEDOUT);
		assert_int_equal(pat_check(m, BIG, 21, 0), -1);
		pat_fill(m, BIG, 22, 0);
		assert_int_equal(pat_check(m, BIG, 22, 0), -1);
		CHECK(munmap(m, BIG));
	} else {
		/* page cache: the mapping holds FUSE pages, not the instance, which goes at once */
		CHECK_0(pool_wait_store_gone(p, GONE_MS));
		CHECK(munmap(m, BIG));
	}
	CHECK_0(pool_wait_store_gone(p, GONE_MS));
}

struct mapper {
	const char *path;
	struct chan c;
};

static int map_child(void *arg)
{
	struct mapper *mp = arg;
	int fd = open(mp->path, O_RDONLY);
	unsigned char *m;

	chan_child(&mp->c);
	if (fd < 0)
		return 1;
	m = mmap(NULL, BIG, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED || pat_check(m, BIG, 5, 0) != -1)
		return 2;
	if (CHILD_READY(&mp->c) < 0 || CHILD_WAIT_GO(&mp->c) < 0)
		return 3;
	munmap(m, BIG);
	return 0;
}

/* Two processes map a file and close their fds: it stays while either mapping lives, and goes
 * after the last munmap. */
static void test_removal_after_last_munmap(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	struct mapper mp = {.path = f};
	unsigned char *m;
	pid_t kid;
	int fd = map_new_big(f, 5, &m);

	chan_open(&mp.c);
	kid = tu_spawn(map_child, &mp);
	chan_parent(&mp.c);
	PARENT_WAIT_READY(&mp.c);
	CHECK(close(fd));
	CHECK(munmap(m, BIG));
	/* the child's mapping alone keeps it: give a wrong removal every chance to happen first */
	pool_sleep_ms(200);
	ASSERT_EXISTS(f);
	PARENT_GO(&mp.c);
	REAP_OK(kid);
	chan_close_parent(&mp.c);
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

/* A test on a pool of its own (setup mounts it, teardown unmounts it). */
#define T(test) cmocka_unit_test_setup_teardown(test, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_store_unreachable),
		T(test_pmd_mapped_writer_and_reader),
		cmocka_unit_test_setup_teardown(test_huge_never, setup_never, teardown),
		T(test_sigkill_store_lifetime),
		T(test_removal_after_last_munmap),
	};

	if (geteuid() != 0)
		return tu_skip_all("a private tmpfs instance needs root");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
