/* What only the hold tests (tests/holds) add to testutil.h: longer bounds (also for its "stays"
 * check), test state with cgroups, whether a process still runs, pipes that carry ints (pids) from
 * children and grandchildren (which come back to us because main() makes the test a child
 * subreaper), and test cgroups under the cgroup2 mount. The pool fixture, checks,
 * child tracking and reaping are testutil.h's.
 *
 * Declarations only: the bodies are in the holds_support library (ht_proc.c, ht_link.c,
 * ht_cgroup.c); what other suites use too is in tests/support. */
#ifndef POOLFS_HOLDTEST_H
#define POOLFS_HOLDTEST_H

#include <dirent.h>
#include <limits.h>
#include <sys/types.h>

/* Bounds, never timings: hold ends take the daemon more steps (and valgrind is slow). */
#define GONE_MS 10000

/* How long a "stays" check (ASSERT_STAYS, testutil.h) gives the daemon to (wrongly) remove an
 * entry after the event that must not end its hold. Not a timing assertion: a correct daemon
 * passes at any speed. It must outlast what can delay a removal the daemon has decided on: the
 * 500 ms grace an entry gets after a LOOKUP made while it was in use (our own lstat/getxattr), and
 * the passthrough path's 1 s re-probe of maybe-mapped entries; shorter, a wrongly ended hold
 * would go unnoticed. */
#define SETTLE_MS 1500

#include "cgroup2.h"
#include "poolfs_names.h"
#include "procfs.h"
#include "rows.h"
#include "testutil.h"

/* ---- one pool per test ---- */

#define MAX_CGROUPS 4

struct htest {
	struct tu_fixture f; /* first: tu_pool and tu_backing_back_to_base take *state */
	char cgroups[MAX_CGROUPS][PATH_MAX]; /* test cgroups to remove at teardown */
	const void *row;		     /* a table-driven test's row (HT_ROWS), or NULL */
};

/* Every test binary's main() calls this first: orphaned grandchildren come back to us, so a
 * test can reap them by pid and teardown can kill them. HOLDS_TEST_FILTER (a cmocka pattern,
 * e.g. "test_session*") runs only the matching tests. */
void htest_init(void);

/* ---- processes (fs/procfs.h) ---- */

/* Whether pid still runs (not a zombie), as the daemon reads it. */
static inline int ht_running(pid_t pid)
{
	return proc_running(pid) > 0;
}

/* ---- pipes between the test and its processes (ht_link.c) ----
 * testutil.h's struct chan (chan_open), used as a link: up: processes send ints (a pid, a
 * "ready" mark) to the test; down: the test sends one byte per "go". A dead peer reads as EOF, so
 * nobody waits forever. A closed end is set to -1, so link_drop works in any process. */

/* In the process at the far end: keep up[1] and down[0]. */
void link_far_end(struct chan *l);
/* In a process that is not at either end (e.g. the parent of a grandchild). */
void link_drop(struct chan *l);
/* In the test after forking: keep up[0] and down[1]. */
void link_near_end(struct chan *l);
/* The test is done with the link. */
void link_close_near(struct chan *l);
/* Far end: send v up: 0 or -EPIPE. */
int link_send(struct chan *l, int v);
/* 0 and *v, -EPIPE (all senders gone), -ETIMEDOUT */
int link_recv(struct chan *l, int *v, int timeout_ms);
/* Far end: wait for one "go" byte: 0, -EPIPE (the test is gone), -ETIMEDOUT */
int link_wait_go(struct chan *l);

#define LINK_GO(l) CHECK_0(write((l)->down[1], "g", 1) == 1 ? 0 : -EPIPE)

/* The test receives an int from the far end; fails the test on EOF or timeout. */
#define LINK_RECV(l, var)                                                                          \
	do {                                                                                       \
		int r_ = link_recv((l), &(var), CHILD_MS);                                         \
		if (r_ != 0)                                                                       \
			fail_msg("%s:%d: no message from the child: %s", __FILE__, __LINE__,       \
				 errname(-r_));                                                    \
	} while (0)

/* ---- holds, refs and files: testutil.h (tests/support/tu_refs.c) ---- */

/* ---- cgroup v2 (ht_cgroup.c) ---- */

/* The cgroup2 mount point: cgroup2_find_mount() of fs/cgroup2.h (included above), as the daemon
 * finds it. */
/* pid's cgroup v2 path (the "0::" line of /proc/PID/cgroup): 0 or -errno (fs/procfs.h). */
static inline int cg2_of(pid_t pid, char *buf, size_t len)
{
	return proc_cgroup(pid, buf, len);
}
/* Move pid (0: the caller) into the cgroup directory dir: 0 or -errno. */
int cg2_move(const char *dir, pid_t pid);
/* 1 populated, 0 empty, -errno */
int cg2_populated(const char *dir);
/* Create a test cgroup under the cgroup2 mount (dir: its absolute path), remembered in t for
 * cg2_remove_all, and check that a process can be moved into it (a throwaway child tries).
 * Returns 0, or -errno with the reason in msg (the test should then skip). */
int cg2_create(struct htest *t, char *dir, size_t dlen, char *msg, size_t mlen);
/* Kill what is left in t's test cgroups (only our processes can be there) and remove them. */
void cg2_remove_all(struct htest *t);

/* A member that keeps a test cgroup populated: run ht_cg_member_fn(&member) as a child (tu_spawn,
 * with the link opened); it enters the cgroup, sends its pid up the link, waits for a go, exits. */
struct ht_member {
	struct chan *l;
	const char *cgroup;
};
int ht_cg_member_fn(void *arg);

/* Skip the running test: no writable cgroup2 here. */
#define CGROUP_OR_SKIP(t, dir)                                                                     \
	do {                                                                                       \
		char msg_[PATH_MAX + 128];                                                         \
		int r_ = cg2_create((t), (dir), sizeof(dir), msg_, sizeof(msg_));                  \
		if (r_ < 0) {                                                                      \
			TU_SKIP("no writable cgroup v2 here (%s)", msg_);                          \
		}                                                                                  \
	} while (0)

/* ---- scenario tables (rows.h) ----
 * A table is an array of row structs whose first member is `const char *name` (the test case's
 * name); HT_ROWS appends one cmocka test case per row to out, each run as fn between setup
 * (which calls htest_setup_row) and htest_teardown. Its value is the number of rows. */
#define HT_NROWS(rows) (sizeof(rows) / sizeof((rows)[0]))
#define HT_ROWS(out, rows, fn, setup)                                                              \
	(rows_to_tests((out), (rows), sizeof((rows)[0]), HT_NROWS(rows), (fn), (setup),            \
		       htest_teardown),                                                            \
	 HT_NROWS(rows))

/* ---- setup and teardown ----
 * These two stay here, inline in the test binary, because they work on testutil.h's child list
 * and current pool, which are the test binary's own while testutil.h is header-only. */

static inline int htest_setup(void **state, const char *opts)
{
	return tu_setup_sized(state, opts, sizeof(struct htest));
}

static inline int htest_teardown(void **state)
{
	struct htest *t = *state;

	if (!t)
		return 0;
	/* The cgroups can only go once the processes in them are dead. */
	tu_kill_children();
	cg2_remove_all(t);
	return tu_teardown(state);
}

/* A table row's setup: the row (cmocka's initial state) is kept in the test state. */
static inline int htest_setup_row(void **state, const char *opts)
{
	const void *row = *state;
	int r = htest_setup(state, opts);

	if (r == 0)
		((struct htest *)*state)->row = row;
	return r;
}

/* The running test's row. */
static inline const void *htest_row(void **state)
{
	return ((struct htest *)*state)->row;
}

#endif
