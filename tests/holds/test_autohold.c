/* The autohold mount option (docs/interface.md "Lifetime" and "Extended attributes"): every creator
 * gets a hold of the mount's scope on each entry it creates. process: the creator's process;
 * session (the default): the creator's session leader, or in a leaderless session its topmost
 * ancestor there (as under Slurm's slurmstepd); cgroup: the creator's cgroup v2 group;
 * none: no hold, the strict rule. Real mounts, real processes, a test cgroup under the cgroup2
 * mount for the cgroup scope. */
#include "holdtest.h"

/* One row a case: the mount options, the scenario that runs on them and the scope word the
 * creator's hold must show in refs. */
struct autohold_case {
	const char *name;
	const char *opts; /* mount options */
	void (*run)(void **state, const struct autohold_case *hc);
	const char *word; /* the scope word refs must show for the hold, or NULL: no hold */
};

/* What a creator makes: a file, a folder and a file in it, all closed. */
struct job {
	char f[PATH_MAX];   /* f */
	char d[PATH_MAX];   /* d */
	char g[PATH_MAX];   /* d/g */
	const char *cgroup; /* cgroup dir the creator and its helper enter, or NULL */
	int setsid;	    /* the creator's parent makes a session and forks the creator */
	int leader_leaves;  /* ... and exits before the creator creates anything */
	struct chan l;	    /* test <-> creator (or session leader) */
	struct chan l2;	    /* test <-> worker (session) or cgroup member */
};

static void job_init(const struct pool_fixture *p, struct job *j)
{
	memset(j, 0, sizeof(*j));
	/* Closed ends are -1 (link_drop skips them), so ending a job closes only the links it used. */
	for (int i = 0; i < 2; i++)
		j->l.up[i] = j->l.down[i] = j->l2.up[i] = j->l2.down[i] = -1;
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

/* The creator's holds are there, as "hold <hc->word>:<keeper>", while the keeper lives. */
static void assert_kept_by(struct job *j, const struct autohold_case *hc, const char *keeper)
{
	char scope[PATH_MAX + 16];

	assert_all_stay(j);
	snprintf(scope, sizeof(scope), "%s:%s", hc->word, keeper);
	assert_autoheld(j, scope);
}

/* The same for a process keeper. */
static void assert_kept_by_pid(struct job *j, const struct autohold_case *hc, pid_t keeper)
{
	char id[16];

	snprintf(id, sizeof(id), "%d", (int)keeper);
	assert_kept_by(j, hc, id);
}

/* Open link (and link2, if not NULL), run fn(j) as the test's child, keep the near ends. */
static pid_t spawn_job(struct job *j, int (*fn)(void *), struct chan *link, struct chan *link2)
{
	pid_t pid;

	chan_open(link);
	if (link2)
		chan_open(link2);
	pid = tu_spawn(fn, j);
	link_near_end(link);
	if (link2)
		link_near_end(link2);
	return pid;
}

/* Let the keeper at the far end of link exit, reap it, and see everything go with it. */
static void end_job(void **state, struct job *j, struct chan *link, pid_t keeper)
{
	LINK_GO(link);
	REAP_OK(keeper);
	assert_all_gone(j);
	link_close_near(&j->l);
	link_close_near(&j->l2);
	tu_backing_back_to_base(state);
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

static void process_files_live_while_creator_lives(void **state, const struct autohold_case *hc)
{
	struct job j;
	pid_t c;
	int v;

	job_init(tu_pool(state), &j);
	c = spawn_job(&j, creator_fn, &j.l, NULL);
	LINK_RECV(&j.l, v);
	assert_kept_by_pid(&j, hc, c);
	end_job(state, &j, &j.l, c);
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

/* In a child: keep the far end of link, lead a new session and fork: fork's answer (0 in the
 * new child), or -1 if either step failed (said on stderr). */
static pid_t lead_and_fork(struct chan *link)
{
	link_far_end(link);
	if (setsid() != getpid()) {
		fprintf(stderr, "# setsid in %d: %s\n", (int)getpid(), errname(errno));
		return -1;
	}
	fflush(NULL);
	return fork();
}

/* The session leader: setsid, fork a worker that creates the files; unless leader_leaves, reap
 * it, report its status, wait for go and exit; with leader_leaves, exit at once. */
static int leader_fn(void *arg)
{
	struct job *j = arg;
	int status;
	pid_t w;

	w = lead_and_fork(&j->l);
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

static void session_files_live_while_leader_lives(void **state, const struct autohold_case *hc)
{
	struct job j;
	pid_t a;
	int w = 0, v = -1;

	job_init(tu_pool(state), &j);
	a = spawn_job(&j, leader_fn, &j.l, &j.l2);
	LINK_RECV(&j.l2, w);
	tu_track(w);
	LINK_RECV(&j.l, v); /* the worker created everything and was reaped */
	tu_forget(w);
	if (v != 0)
		fail_msg("the worker failed at step %d (see above)", v);

	/* The creator is gone; its session leader runs. */
	assert_kept_by_pid(&j, hc, a);
	end_job(state, &j, &j.l, a);
}

/* A creator whose session leader is already gone: its own process is the lifetime. */
static void session_without_leader_falls_back_to_process(void **state,
							 const struct autohold_case *hc)
{
	struct job j;
	pid_t a;
	int w = 0, v = 0;

	job_init(tu_pool(state), &j);
	j.leader_leaves = 1;
	a = spawn_job(&j, leader_fn, &j.l, &j.l2);
	LINK_RECV(&j.l2, w);
	tu_track(w);
	REAP_OK(a);
	if (getsid(w) != a)
		fail_msg("worker %d is in session %d, want %d", w, (int)getsid(w), (int)a);
	LINK_GO(&j.l2);
	LINK_RECV(&j.l2, v);

	assert_kept_by_pid(&j, hc, w);
	end_job(state, &j, &j.l2, w);
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

	m = lead_and_fork(&j->l2);
	CHILD_CHECK(m >= 0, 57);
	if (m == 0)
		_exit(middle_body(j));
	return 0;
}

/* A leaderless session: the creator's topmost ancestor in it (the middle) keeps the files. */
static void session_without_leader_is_kept_by_top_ancestor(void **state,
							   const struct autohold_case *hc)
{
	struct job j;
	pid_t a;
	int m = 0, v = -1;

	job_init(tu_pool(state), &j);
	chan_open(&j.l2);
	a = tu_spawn(stepd_leader_fn, &j);
	link_near_end(&j.l2);
	REAP_OK(a);
	LINK_RECV(&j.l2, m);
	tu_track(m); /* reparented to us, a subreaper */
	LINK_RECV(&j.l2, v);
	if (v != 0)
		fail_msg("the creator failed at step %d", v);

	/* The leader and the creator are gone; the middle runs. */
	assert_kept_by_pid(&j, hc, m);
	end_job(state, &j, &j.l2, m);
}

/* ---- cgroup ---- */

static void cgroup_files_live_while_group_lives(void **state, const struct autohold_case *hc)
{
	struct job j;
	char cg[PATH_MAX], cgpath[PATH_MAX];
	pid_t a, b;
	int v;

	job_init(tu_pool(state), &j);
	CGROUP_OR_SKIP((struct htest *)*state, cg);
	j.cgroup = cg;
	chan_open(&j.l2);
	b = tu_spawn(ht_cg_member_fn, &(struct ht_member){&j.l2, cg});
	link_near_end(&j.l2);
	LINK_RECV(&j.l2, v);

	a = spawn_job(&j, creator_fn, &j.l, NULL);
	LINK_RECV(&j.l, v);
	CHECK_0(cg2_of(a, cgpath, sizeof(cgpath)));
	assert_kept_by(&j, hc, cgpath);

	/* The creator leaves; the group still has b. */
	LINK_GO(&j.l);
	REAP_OK(a);
	assert_kept_by(&j, hc, cgpath);
	end_job(state, &j, &j.l2, b);
}

/* ---- none ---- */

static void none_closed_file_goes_at_once(void **state, const struct autohold_case *hc)
{
	struct job j;
	pid_t c;
	int v;

	(void)hc;
	job_init(tu_pool(state), &j);
	/* Created by this process... */
	CHECK_0(make_closed_file(j.f));
	ASSERT_GONE(j.f);
	/* ... or by a child that still runs: no hold either way. */
	c = spawn_job(&j, creator_fn, &j.l, NULL);
	LINK_RECV(&j.l, v);
	assert_all_gone(&j);
	if (!ht_running(c))
		fail_msg("creator %d should still run", (int)c);
	end_job(state, &j, &j.l, c);
}

/* ---- the table: one row a case ---- */

static const struct autohold_case cases[] = {
	{"test_process_files_live_while_creator_lives", "autohold=process",
	 process_files_live_while_creator_lives, POOLFS_SCOPE_WORD_PID},
	{"test_default_is_session", "", session_files_live_while_leader_lives,
	 POOLFS_SCOPE_WORD_SESSION},
	{"test_session_files_live_while_leader_lives", "autohold=session",
	 session_files_live_while_leader_lives, POOLFS_SCOPE_WORD_SESSION},
	{"test_session_without_leader_falls_back_to_process", "autohold=session",
	 session_without_leader_falls_back_to_process, POOLFS_SCOPE_WORD_PID},
	{"test_session_without_leader_is_kept_by_top_ancestor", "autohold=session",
	 session_without_leader_is_kept_by_top_ancestor, POOLFS_SCOPE_WORD_SESSION},
	{"test_cgroup_files_live_while_group_lives", "autohold=cgroup",
	 cgroup_files_live_while_group_lives, POOLFS_SCOPE_WORD_CGROUP},
	{"test_none_closed_file_goes_at_once", "autohold=none", none_closed_file_goes_at_once,
	 NULL},
};

static int setup_case(void **state)
{
	const struct autohold_case *hc = *state;

	return htest_setup_row(state, hc->opts);
}

static void test_case(void **state)
{
	const struct autohold_case *hc = htest_row(state);

	hc->run(state, hc);
}

int main(void)
{
	struct CMUnitTest tests[HT_NROWS(cases)];
	size_t n = HT_ROWS(tests, cases, test_case, setup_case);

	htest_init();
	return _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
}
