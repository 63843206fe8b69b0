/* The pool per test (testutil.h): mounting and unmounting a struct tu_fixture as cmocka setup and
 * teardown, skipping where the daemon does not support the datapath, and the errno names every
 * check prints. It owns the one piece of state the checks share: the pool of the running test,
 * whose daemon log a failed check dumps. */
#include "testutil.h"

/* Set by tu_mount, cleared by tu_unmount. */
static struct pool_fixture *tu_current;

const char *errname(int e)
{
	const char *n = e ? strerrorname_np(e) : "0";

	return n ? n : "?";
}

void tu_dump_log(void)
{
	if (tu_current)
		pool_dump_log(tu_current);
}

int tu_mount(struct tu_fixture *t, const char *opts)
{
	int r = t->single_user ? pool_mount_private(&t->p, opts) : pool_mount(&t->p, opts);

	if (r == -EOPNOTSUPP) {
		const char *dp = getenv("POOLFS_DATAPATH") ? getenv("POOLFS_DATAPATH") : "?";

		/* uring=on is refused where io_uring cannot be had, whatever the datapath. */
		if (opts && strstr(opts, "uring=on"))
			snprintf(
				t->unsupported_why, sizeof(t->unsupported_why),
				"io_uring is not in use here: the daemon refused \"%s\" (libfuse < "
				"3.18, or the kernel's enable_uring is N)",
				opts);
		else
			snprintf(t->unsupported_why, sizeof(t->unsupported_why),
				 "datapath %s not supported by this daemon (options \"%s\")", dp,
				 opts ? opts : "");
		fprintf(stderr, "# %s: skipping\n", t->unsupported_why);
		t->unsupported = 1;
	} else if (r < 0) {
		fprintf(stderr, "# pool_mount(\"%s\") failed: %s\n", opts ? opts : "", errname(-r));
		return -1;
	} else {
		t->base_backing = pool_backing_files(&t->p);
		tu_current = &t->p;
	}
	return 0;
}

int tu_unmount(struct tu_fixture *t)
{
	int r;

	tu_current = NULL;
	/* Leftovers of a failed test must not make the unmount fail too. */
	tu_kill_children();
	if (!t->unsupported)
		pool_release_all(&t->p);
	r = pool_unmount(&t->p);
	if (r < 0) {
		fprintf(stderr, "# pool_unmount failed: %s\n", errname(-r));
		return -1;
	}
	return 0;
}

int tu_setup_sized(void **state, const char *opts, size_t size)
{
	struct tu_fixture *t = calloc(1, size);

	if (!t)
		return -1;
	if (tu_mount(t, opts) < 0) {
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

int tu_setup(void **state, const char *opts)
{
	return tu_setup_sized(state, opts, sizeof(struct tu_fixture));
}

int tu_setup_private(void **state, const char *opts)
{
	struct tu_fixture *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	t->single_user = 1;
	if (tu_mount(t, opts) < 0) {
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

int tu_teardown(void **state)
{
	struct tu_fixture *t = *state;
	int r;

	if (!t)
		return 0;
	r = tu_unmount(t);
	free(t);
	*state = NULL;
	return r;
}

int tu_setup_two_sized(void **state, const char *opts, size_t size)
{
	struct tu_two_pools *tp;

	if (tu_setup_sized(state, opts, size) < 0)
		return -1;
	tp = *state;
	if (tp->t.unsupported)
		return 0;
	if (pool_mount(&tp->q, opts) < 0) {
		tu_teardown(state);
		return -1;
	}
	tp->q_mounted = 1;
	return 0;
}

int tu_teardown_two(void **state)
{
	struct tu_two_pools *tp = *state;
	int r = 0;

	if (tp && tp->q_mounted) {
		/* nothing of the test may keep q busy: its children and its own descriptors */
		tu_kill_children();
		pool_release_all(&tp->q);
		if (pool_unmount(&tp->q) < 0)
			r = -1;
		tp->q_mounted = 0;
	}
	return tu_teardown(state) < 0 ? -1 : r;
}

struct pool_fixture *tu_pool(void **state)
{
	struct tu_fixture *t = *state;

	if (t->unsupported)
		TU_SKIP("%s", t->unsupported_why);
	return &t->p;
}

void tu_backing_back_within(void **state, int timeout_ms)
{
	struct tu_fixture *t = *state;
	int r = pool_wait_backing_files(&t->p, t->base_backing, timeout_ms);
	char files[1024], counters[8192];
	ssize_t n;

	if (r == 0)
		return;
	/* What is left and what the daemon thinks of it (its gauges come first in the counters):
	 * a failure seen only in a CI log still says why. */
	pool_backing_describe(&t->p, files, sizeof(files));
	n = getxattr(t->p.mnt, POOLFS_XATTR_COUNTERS, counters, sizeof(counters) - 1);
	if (n < 0)
		snprintf(counters, sizeof(counters), "(%s)", errname(errno));
	else
		counters[n] = '\0';
	for (char *c = counters; *c; c++)
		if (*c == '\n')
			*c = ' ';
	fail_msg("backing dir holds %d files, want %d after %d ms: %s; the pool's counters: %.300s",
		 pool_backing_files(&t->p), t->base_backing, timeout_ms, files, counters);
}

int tu_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	fflush(stdout);
	return 0;
}
