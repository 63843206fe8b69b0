/* stress_support: the per-test state around testutil.h's pool fixture, as the tests get it. */
#include "stress.h"

struct stest *stest_get(void **state)
{
	struct stest *t = *state;

	if (t->f.unsupported)
		skip();
	return t;
}

const char *backing_leftover_cause(const struct pool_fixture *p)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	bool dropped = fd >= 0 && write(fd, "2", 1) == 1;

	if (fd >= 0)
		close(fd);
	if (!dropped)
		return "could not drop the kernel's caches (vm.drop_caches) to tell why";
	if (pool_wait_backing_files(p, 0, 2000) == 0)
		return "they went once the kernel's unused dentries and inodes were dropped "
		       "(vm.drop_caches): the kernel still cached a name of a removed file";
	return "they stayed after the kernel's unused dentries and inodes were dropped "
	       "(vm.drop_caches): something still uses them, or the daemon lost a count";
}
