/* The autohold mount option (docs/interface.md "Lifetime" and "Extended attributes"): every creator
 * gets a hold of the mount's scope on each entry it creates. process: the creator's process;
 * session (the default): the creator's session leader, or in a leaderless session its topmost
 * ancestor there (as under Slurm's slurmstepd); cgroup: the creator's cgroup v2 group;
 * none: no hold, the strict rule. Real mounts, real processes, a test cgroup under the cgroup2
 * mount for the cgroup scope. */
#include "holdtest.h"

static int setup_none(void **state)
{
	return htest_setup(state, "autohold=none");
}

static int setup_process(void **state)
{
	return htest_setup(state, "autohold=process");
}

static int setup_default(void **state)
{
	return htest_setup(state, "");
}

static int setup_session(void **state)
{
	return htest_setup(state, "autohold=session");
}

static int setup_cgroup(void **state)
{
	return htest_setup(state, "autohold=cgroup");
}

/* What a creator makes: a file, a folder and a file in it, all closed. */
struct job {
	char f[PATH_MAX];	/* f */
	char d[PATH_MAX];	/* d */
	char g[PATH_MAX];	/* d/g */
	const char *cgroup;	/* cgroup dir the creator and its helper enter, or NULL */
	int setsid;		/* the creator's parent makes a session and forks the creator */
	int leader_leaves;	/* ... and exits before the creator creates anything */
	struct chan l;		/* test <-> creator (or session leader) */
	struct chan l2;		/* test <-> worker (session) or cgroup member */
};

static void job_init(const struct pool_fixture *p, struct job *j)
{
	memset(j, 0, sizeof(*j));
	assert_int_equal(pool_path(p, "f", j->f, sizeof(j->f)), 0);
	assert_int_equal(pool_path(p, "d", j->d, sizeof(j->d)), 0);
	assert_int_equal(pool_path(p, "d/g", j->g, sizeof(j->g)), 0);
}

static int create_all(struct job *j)
{
	int r = make_closed_file(j->f);

	if (r < 0)
		return r;
	if (mkdir(j->d, 0700) == -1)
		return -errno;
	return make_closed_file(j->g);
}

static void assert_all_stay(struct job *j)
{
	ASSERT_STAYS(j->f);
	ASSERT_EXISTS(j->d);
	ASSERT_EXISTS(j->g);
}

static void assert_all_gone(struct job *j)
{
	ASSERT_GONE(j->f);
	ASSERT_GONE(j->g);
	ASSERT_GONE(j->d);
}

/* The holds the creator got: f and d (its own creations) carry one line each. */
static void assert_autoheld(struct job *j, const char *scope)
{
	char line[PATH_MAX + 64];

	snprintf(line, sizeof(line), "hold %s uid=%u", scope, (unsigned)getuid());
	ASSERT_REFS_LINE(j->f, line);
	ASSERT_REFS_LINE(j->f, "holds 1");
	ASSERT_REFS_LINE(j->d, line);
	ASSERT_REFS_LINE(j->g, line);
	ASSERT_REFS_LINE(j->f, "opens 0");
}

/* ---- process ---- */

/* Creates everything, closes it, says ready, waits for go, exits. */
static int creator_fn(void *arg)
{
	struct job *j = arg;

	link_far_end(&j->l);
	if (j->cgroup)
		CHILD_CHECK(cg2_move(j->cgroup, 0) == 0, 10);
	CHILD_CHECK(create_all(j) == 0, 11);
	CHILD_CHECK(link_send(&j->l, (int)getpid()) == 0, 12);
	CHILD_CHECK(link_wait_go(&j->l) == 0, 13);
	return 0;
}

static void test_process_files_live_while_creator_lives(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct job j;
	char scope[32];
	pid_t c;
	int v;

	job_init(p, &j);
	chan_open(&j.l);
	c = tu_spawn(creator_fn, &j);
	link_near_end(&j.l);
	LINK_RECV(&j.l, v);

	assert_all_stay(&j);
	snprintf(scope, sizeof(scope), POOLFS_SCOPE_WORD_PID ":%d", (int)c);
	assert_autoheld(&j, scope);

	LINK_GO(&j.l);
	REAP_OK(c);
	assert_all_gone(&j);
	link_close_near(&j.l);
	tu_backing_back_to_base(state);
}

/* ---- session ---- */

/* A worker in the leader's session: creates everything and exits. */
static int session_worker(struct job *j)
{
	link_far_end(&j->l2);
	CHILD_CHECK(link_send(&j->l2, (int)getpid()) == 0, 30);
	if (j->leader_leaves) {
		CHILD_CHECK(link_wait_go(&j->l2) == 0, 31);
		CHILD_CHECK(create_all(j) == 0, 32);
		CHILD_CHECK(link_send(&j->l2, 1) == 0, 33);
		CHILD_CHECK(link_wait_go(&j->l2) == 0, 34);
		return 0;
	}
	CHILD_CHECK(create_all(j) == 0, 35);
	return 0;
}

/* The session leader: setsid, fork a worker that creates the files; unless leader_leaves, reap
 * it, report its status, wait for go and exit; with leader_leaves, exit at once. */
static int leader_fn(void *arg)
{
	struct job *j = arg;
	int status;
	pid_t w;

	link_far_end(&j->l);
	CHILD_CHECK(setsid() == getpid(), 20);
	fflush(NULL);
	w = fork();
	CHILD_CHECK(w >= 0, 21);
	if (w == 0) {
		link_drop(&j->l);
		_exit(session_worker(j));
	}
	link_drop(&j->l2);
	if (j->leader_leaves)
		return 0;
	CHILD_CHECK(waitpid(w, &status, 0) == w, 22);
	CHILD_CHECK(link_send(&j->l, WIFEXITED(status) ? WEXITSTATUS(status) : 128) == 0, 23);
	CHILD_CHECK(link_wait_go(&j->l) == 0, 24);
	return 0;
}

static void session_files_live_while_leader_lives(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct job j;
	char scope[32];
	pid_t a;
	int w = 0, v = -1;

	job_init(p, &j);
	chan_open(&j.l);
	chan_open(&j.l2);
	a = tu_spawn(leader_fn, &j);
	link_near_end(&j.l);
	link_near_end(&j.l2);
	LINK_RECV(&j.l2, w);
	tu_track(w);
	LINK_RECV(&j.l, v);	/* the worker created everything and was reaped */
	tu_forget(w);
	if (v != 0)
		fail_msg("the worker failed at step %d (see above)", v);

	/* The creator is gone; its session leader runs. */
	assert_all_stay(&j);
	snprintf(scope, sizeof(scope), POOLFS_SCOPE_WORD_SESSION ":%d", (int)a);
	assert_autoheld(&j, scope);

	LINK_GO(&j.l);
	REAP_OK(a);
	assert_all_gone(&j);
	link_close_near(&j.l);
	link_close_near(&j.l2);
	tu_backing_back_to_base(state);
}

static void test_default_is_session(void **state)
{
	session_files_live_while_leader_lives(state);
}

static void test_session_files_live_while_leader_lives(void **state)
{
	session_files_live_while_leader_lives(state);
}

/* A creator whose session leader is already gone: its own process is the lifetime. */
static void test_session_without_leader_falls_back_to_process(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct job j;
	char scope[32];
	pid_t a;
	int w = 0, v = 0;

	job_init(p, &j);
	j.leader_leaves = 1;
	chan_open(&j.l);
	chan_open(&j.l2);
	a = tu_spawn(leader_fn, &j);
	link_near_end(&j.l);
	link_near_end(&j.l2);
	LINK_RECV(&j.l2, w);
	tu_track(w);
	REAP_OK(a);
	if (getsid(w) != a)
		fail_msg("worker %d is in session %d, want %d", w, (int)getsid(w), (int)a);
	LINK_GO(&j.l2);
	LINK_RECV(&j.l2, v);

	assert_all_stay(&j);
	snprintf(scope, sizeof(scope), POOLFS_SCOPE_WORD_PID ":%d", w);
	assert_autoheld(&j, scope);

	LINK_GO(&j.l2);
	REAP_OK(w);
	assert_all_gone(&j);
	link_close_near(&j.l);
	link_close_near(&j.l2);
	tu_backing_back_to_base(state);
}

/* slurmstepd's shape (docs/cluster.md): the leader forks a middle process and exits at once; the
 * middle forks the creator, reaps it, reports, waits for go. */
static int middle_body(struct job *j)
{
	int status;
	pid_t w;

	/* Until the leader has gone, so the creator's session is leaderless when it creates. */
	while (getppid() == getsid(0))
		usleep(1000);
	fflush(NULL);
	w = fork();
	CHILD_CHECK(w >= 0, 50);
	if (w == 0)
		_exit(create_all(j) == 0 ? 0 : 51);
	CHILD_CHECK(waitpid(w, &status, 0) == w, 52);
	CHILD_CHECK(link_send(&j->l2, (int)getpid()) == 0, 53);
	CHILD_CHECK(link_send(&j->l2, WIFEXITED(status) ? WEXITSTATUS(status) : 128) == 0, 54);
	CHILD_CHECK(link_wait_go(&j->l2) == 0, 55);
	return 0;
}

static int stepd_leader_fn(void *arg)
{
	struct job *j = arg;
	pid_t m;

	link_far_end(&j->l2);
	CHILD_CHECK(setsid() == getpid(), 56);
	fflush(NULL);
	m = fork();
	CHILD_CHECK(m >= 0, 57);
	if (m == 0)
		_exit(middle_body(j));
	return 0;
}

/* A leaderless session: the creator's topmost ancestor in it (the middle) keeps the files. */
static void test_session_without_leader_is_kept_by_top_ancestor(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct job j;
	char scope[32];
	pid_t a;
	int m = 0, v = -1;

	job_init(p, &j);
	chan_open(&j.l2);
	a = tu_spawn(stepd_leader_fn, &j);
	link_near_end(&j.l2);
	REAP_OK(a);
	LINK_RECV(&j.l2, m);
	tu_track(m);	/* reparented to us, a subreaper */
	LINK_RECV(&j.l2, v);
	if (v != 0)
		fail_msg("the creator failed at step %d", v);

	/* The leader and the creator are gone; the middle runs. */
	assert_all_stay(&j);
	snprintf(scope, sizeof(scope), POOLFS_SCOPE_WORD_SESSION ":%d", m);
	assert_autoheld(&j, scope);

	LINK_GO(&j.l2);
	REAP_OK(m);
	assert_all_gone(&j);
	link_close_near(&j.l2);
	tu_backing_back_to_base(state);
}

/* ---- cgroup ---- */

static int member_fn(void *arg)
{
	struct job *j = arg;

	link_far_end(&j->l2);
	CHILD_CHECK(cg2_move(j->cgroup, 0) == 0, 40);
	CHILD_CHECK(link_send(&j->l2, (int)getpid()) == 0, 41);
	CHILD_CHECK(link_wait_go(&j->l2) == 0, 42);
	return 0;
}

static void test_cgroup_files_live_while_group_lives(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct job j;
	char cg[PATH_MAX], cgpath[PATH_MAX], scope[PATH_MAX + 16];
	pid_t a, b;
	int v;

	job_init(p, &j);
	CGROUP_OR_SKIP((struct htest *)*state, cg);
	j.cgroup = cg;
	chan_open(&j.l2);
	b = tu_spawn(member_fn, &j);
	link_near_end(&j.l2);
	LINK_RECV(&j.l2, v);

	chan_open(&j.l);
	a = tu_spawn(creator_fn, &j);
	link_near_end(&j.l);
	LINK_RECV(&j.l, v);
	CHECK_0(cg2_of(a, cgpath, sizeof(cgpath)));
	snprintf(scope, sizeof(scope), POOLFS_SCOPE_WORD_CGROUP ":%s", cgpath);
	assert_autoheld(&j, scope);

	/* The creator leaves; the group still has b. */
	LINK_GO(&j.l);
	REAP_OK(a);
	assert_all_stay(&j);
	assert_autoheld(&j, scope);

	LINK_GO(&j.l2);
	REAP_OK(b);
	assert_all_gone(&j);
	link_close_near(&j.l);
	link_close_near(&j.l2);
	tu_backing_back_to_base(state);
}

/* ---- none ---- */

static void test_none_closed_file_goes_at_once(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct job j;
	pid_t c;
	int v;

	job_init(p, &j);
	/* Created by this process... */
	CHECK_0(make_closed_file(j.f));
	ASSERT_GONE(j.f);
	/* ... or by a child that still runs: no hold either way. */
	chan_open(&j.l);
	c = tu_spawn(creator_fn, &j);
	link_near_end(&j.l);
	LINK_RECV(&j.l, v);
	ASSERT_GONE(j.f);
	ASSERT_GONE(j.g);
	ASSERT_GONE(j.d);
	if (!ht_running(c))
		fail_msg("creator %d should still run", (int)c);
	LINK_GO(&j.l);
	REAP_OK(c);
	link_close_near(&j.l);
	tu_backing_back_to_base(state);
}

#define T(fn, setup) cmocka_unit_test_setup_teardown(fn, setup, htest_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_process_files_live_while_creator_lives, setup_process),
		T(test_default_is_session, setup_default),
		T(test_session_files_live_while_leader_lives, setup_session),
		T(test_session_without_leader_falls_back_to_process, setup_session),
		T(test_session_without_leader_is_kept_by_top_ancestor, setup_session),
		T(test_cgroup_files_live_while_group_lives, setup_cgroup),
		T(test_none_closed_file_goes_at_once, setup_none),
	};

	htest_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
