/* Holds through xattrs (docs/interface.md "Extended attributes") on a real
 * pool mounted autohold=none, so every entry lives only by its handles, mappings and the holds
 * the tests take: pid:N, process, session (with a setsid'd child and its worker), cgroup (a test
 * cgroup under the cgroup2 mount), pin on folders, the error cases and the refs text. */
#include "holdtest.h"

#include <sys/mman.h>

static int setup_none(void **state)
{
	return htest_setup(state, "autohold=none");
}

/* A file created, held with scope, then closed: only the hold keeps it. */
static void make_held_file(const char *path, const char *scope)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	CHECK(fd);
	CHECK(write(fd, "held\n", 5));
	CHECK(hold(path, scope));
	CHECK(close(fd));
}

static void hold_line(char *buf, size_t len, const char *scope)
{
	snprintf(buf, len, "hold %s uid=%u", scope, (unsigned)getuid());
}

/* The refs line of our hold whose scope is word:pid ("pid:N", "session:N"). */
static void hold_line_for(char *buf, size_t len, const char *word, pid_t pid)
{
	char scope[32];

	snprintf(scope, sizeof(scope), "%s:%d", word, (int)pid);
	hold_line(buf, len, scope);
}

/* ---- a process that sleeps on a pipe until told to exit ---- */

static int sleeper_fn(void *arg)
{
	struct chan *l = arg;

	link_far_end(l);
	if (link_send(l, (int)getpid()) != 0)
		return 1;
	return link_wait_go(l) == 0 ? 0 : 2;
}

/* A sleeper: a child that waits on its link until told to exit; holds for it use its scope. */
struct sleeper {
	struct chan l;
	pid_t pid;
	char scope[32]; /* "pid:N" */
};

static struct sleeper start_sleeper(void)
{
	struct sleeper k;
	int v = 0;

	chan_open(&k.l);
	k.pid = tu_spawn(sleeper_fn, &k.l);
	link_near_end(&k.l);
	LINK_RECV(&k.l, v);
	assert_int_equal(v, k.pid);
	snprintf(k.scope, sizeof(k.scope), POOLFS_SCOPE_WORD_PID ":%d", (int)k.pid);
	return k;
}

static void stop_sleeper(struct sleeper *k)
{
	LINK_GO(&k->l);
	REAP_OK(k->pid);
	link_close_near(&k->l);
}

/* ---- pid:N ---- */

static void test_pid_hold_until_exit(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(control, p, "control");
	char line[64];
	struct sleeper s = start_sleeper();

	/* The strict rule is really on: a closed file without a hold goes at once. */
	CHECK_0(make_closed_file(control));
	ASSERT_GONE(control);

	make_held_file(f, s.scope);
	ASSERT_STAYS(f);
	hold_line(line, sizeof(line), s.scope);
	ASSERT_REFS_LINE(f, line);
	ASSERT_REFS_LINE(f, "holds 1");
	ASSERT_REFS_LINE(f, "opens 0");

	stop_sleeper(&s);
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

static void test_pid_hold_of_dead_process_esrch(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	char scope[32], rb[4096];
	pid_t dead = tu_dead_pid();
	int fd;

	fd = open(f, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd);
	snprintf(scope, sizeof(scope), POOLFS_SCOPE_WORD_PID ":%d", (int)dead);
	CHECK_ERR(hold(f, scope), ESRCH);
	CHECK(refs(f, rb, sizeof(rb)));
	if (!has_line(rb, "holds 0"))
		fail_msg("a refused hold was recorded:\n%s", rb);
	CHECK(close(fd));
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

static void test_pid_holds_of_two_processes(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	struct sleeper a = start_sleeper();
	struct sleeper b = start_sleeper();
	int fd = open(f, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	CHECK(fd);
	CHECK(hold(f, a.scope));
	CHECK(hold(f, b.scope));
	CHECK(close(fd));
	ASSERT_REFS_LINE(f, "holds 2");

	stop_sleeper(&a);
	ASSERT_STAYS(f);
	ASSERT_REFS_LINE(f, "holds 1");
	stop_sleeper(&b);
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

/* ---- process ---- */

struct path_link {
	const char *path;
	const char *path2;
	const char *cgroup; /* cgroup dir to enter first, or NULL */
	const char *scope;
	int way; /* session scenarios: enum leader_way */
	struct chan l;
	struct chan l2; /* a grandchild's link */
};

/* Creates pl->path, takes a pl->scope hold on it, closes it, says ready, waits, exits. */
static int holder_fn(void *arg)
{
	struct path_link *pl = arg;
	int fd;

	link_far_end(&pl->l);
	if (pl->cgroup)
		CHILD_CHECK(cg2_move(pl->cgroup, 0) == 0, 10);
	fd = open(pl->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHILD_CHECK(fd >= 0, 11);
	CHILD_CHECK(write(fd, "held\n", 5) == 5, 12);
	CHILD_CHECK(hold(pl->path, pl->scope) == 0, 13);
	CHILD_CHECK(close(fd) == 0, 14);
	CHILD_CHECK(link_send(&pl->l, (int)getpid()) == 0, 15);
	CHILD_CHECK(link_wait_go(&pl->l) == 0, 16);
	return 0;
}

static void test_process_hold_by_child(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	struct path_link pl = {.path = f, .scope = POOLFS_SCOPE_WORD_PROCESS};
	char line[64];
	pid_t c;
	int v;

	chan_open(&pl.l);
	c = tu_spawn(holder_fn, &pl);
	link_near_end(&pl.l);
	LINK_RECV(&pl.l, v);

	ASSERT_STAYS(f);
	hold_line_for(line, sizeof(line), POOLFS_SCOPE_WORD_PID, c);
	ASSERT_REFS_LINE(f, line);
	ASSERT_REFS_LINE(f, "holds 1");

	LINK_GO(&pl.l);
	REAP_OK(c);
	ASSERT_GONE(f);
	link_close_near(&pl.l);
	tu_backing_back_to_base(state);
}

/* ---- session ---- */

/* A worker (grandchild) in the leader's session: sends its pid; with wait_first, waits for a go
 * (so the test can let its leader go first); creates pl->path2 with a session hold, says so,
 * waits for go, exits. */
static int worker_fn(struct path_link *pl, int wait_first)
{
	int fd;

	link_far_end(&pl->l2);
	CHILD_CHECK(link_send(&pl->l2, (int)getpid()) == 0, 30);
	if (wait_first)
		CHILD_CHECK(link_wait_go(&pl->l2) == 0, 31);
	fd = open(pl->path2, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHILD_CHECK(fd >= 0, 32);
	CHILD_CHECK(write(fd, "worker\n", 7) == 7, 33);
	CHILD_CHECK(hold(pl->path2, POOLFS_SCOPE_WORD_SESSION) == 0, 34);
	CHILD_CHECK(close(fd) == 0, 35);
	CHILD_CHECK(link_send(&pl->l2, 1) == 0, 36);
	CHILD_CHECK(link_wait_go(&pl->l2) == 0, 37);
	return 0;
}

/* Fork the worker from the leader; the leader keeps only its own link. */
static pid_t fork_worker(struct path_link *pl, int wait_first)
{
	pid_t w;

	fflush(NULL);
	w = fork();
	if (w == 0) {
		link_drop(&pl->l);
		_exit(worker_fn(pl, wait_first));
	}
	link_drop(&pl->l2);
	return w;
}

/* How a session leader (tu_spawn'd, it calls setsid) treats the worker it forks:
 * REAPS_WORKER: takes a session hold on pl->path first; says 1 once the worker runs, waits for
 *   the worker to exit and reaps it, says 2, waits for go, exits;
 * LEAVES_WORKER: says 1 once the worker runs, waits for go, exits while the worker still runs;
 * EXITS_FIRST: exits at once; its worker waits for a go before it takes its hold. */
enum leader_way { REAPS_WORKER, LEAVES_WORKER, EXITS_FIRST };

static int leader_fn(void *arg)
{
	struct path_link *pl = arg;
	int fd, status;
	pid_t w;

	link_far_end(&pl->l);
	CHILD_CHECK(setsid() == getpid(), 20);
	if (pl->way == REAPS_WORKER) {
		fd = open(pl->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		CHILD_CHECK(fd >= 0, 21);
		CHILD_CHECK(hold(pl->path, POOLFS_SCOPE_WORD_SESSION) == 0, 22);
		CHILD_CHECK(close(fd) == 0, 23);
	}
	w = fork_worker(pl, pl->way == EXITS_FIRST);
	CHILD_CHECK(w > 0, 24);
	if (pl->way == EXITS_FIRST)
		return 0;
	CHILD_CHECK(link_send(&pl->l, 1) == 0, 25);
	if (pl->way == REAPS_WORKER) {
		CHILD_CHECK(waitpid(w, &status, 0) == w, 26);
		CHILD_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, 27);
		CHILD_CHECK(link_send(&pl->l, 2) == 0, 28);
	}
	CHILD_CHECK(link_wait_go(&pl->l) == 0, 29);
	return 0;
}

/* A session scenario: the leader (a) with its link, the worker (w) it forks with its own, and
 * the files: f, held by a REAPS_WORKER leader, and g, held by the worker. */
struct session {
	struct path_link pl;
	char f[PATH_MAX];
	char g[PATH_MAX];
	pid_t a;
	int w;
	int v; /* what the last LINK_RECV got */
};

/* Run a session leader of the given way as the test's child with both links; it forks a worker
 * that sends its pid first, which s->w gets (tracked, so teardown kills it if the test fails). */
static void start_session(void **state, struct session *s, enum leader_way way)
{
	struct pool_fixture *p = tu_pool(state);

	memset(s, 0, sizeof(*s));
	assert_int_equal(pool_path(p, "f", s->f, sizeof(s->f)), 0);
	assert_int_equal(pool_path(p, "g", s->g, sizeof(s->g)), 0);
	s->pl.path = s->f;
	s->pl.path2 = s->g;
	s->pl.way = way;
	chan_open(&s->pl.l);
	chan_open(&s->pl.l2);
	s->a = tu_spawn(leader_fn, &s->pl);
	link_near_end(&s->pl.l);
	link_near_end(&s->pl.l2);
	LINK_RECV(&s->pl.l2, s->w);
	tu_track(s->w);
}

/* Let process pid (at the far end of link) exit, reap it, see path (and path2, if not NULL) go;
 * then close both links and the pool is back to its own backing files. */
static void end_session(void **state, struct session *s, struct chan *link, pid_t pid,
			const char *path, const char *path2)
{
	LINK_GO(link);
	REAP_OK(pid);
	ASSERT_GONE(path);
	if (path2)
		ASSERT_GONE(path2);
	link_close_near(&s->pl.l);
	link_close_near(&s->pl.l2);
	tu_backing_back_to_base(state);
}

static void test_session_hold_lasts_while_leader_lives(void **state)
{
	struct session s;
	char line[64];

	start_session(state, &s, REAPS_WORKER);
	LINK_RECV(&s.pl.l2, s.v); /* the worker holds g */
	LINK_RECV(&s.pl.l, s.v);  /* the leader holds f */

	hold_line_for(line, sizeof(line), POOLFS_SCOPE_WORD_SESSION, s.a);
	ASSERT_STAYS(s.f);
	ASSERT_STAYS(s.g);
	ASSERT_REFS_LINE(s.f, line);
	ASSERT_REFS_LINE(s.g, line);

	/* The worker that took g's hold exits: the session (its leader) still runs. */
	LINK_GO(&s.pl.l2);
	LINK_RECV(&s.pl.l, s.v);
	assert_int_equal(s.v, 2);
	tu_forget(s.w);
	ASSERT_STAYS(s.f);
	ASSERT_STAYS(s.g);

	end_session(state, &s, &s.pl.l, s.a, s.f, s.g);
}

static void test_session_hold_ends_with_leader_not_worker(void **state)
{
	struct session s;
	char line[64];

	start_session(state, &s, LEAVES_WORKER);
	LINK_RECV(&s.pl.l2, s.v);
	LINK_RECV(&s.pl.l, s.v);

	hold_line_for(line, sizeof(line), POOLFS_SCOPE_WORD_SESSION, s.a);
	ASSERT_STAYS(s.g);
	ASSERT_REFS_LINE(s.g, line);

	LINK_GO(&s.pl.l);
	REAP_OK(s.a);
	ASSERT_GONE(s.g);
	if (!ht_running(s.w))
		fail_msg("the worker %d should still run: the leader's exit ended the hold", s.w);

	/* the worker is an orphan reparented to us (child subreaper) */
	end_session(state, &s, &s.pl.l2, s.w, s.g, NULL);
}

static void test_session_without_leader_falls_back_to_process(void **state)
{
	struct session s;
	char line[64];

	start_session(state, &s, EXITS_FIRST);
	REAP_OK(s.a); /* the leader is gone and reaped: its session has no leader */
	if (getsid(s.w) != s.a)
		fail_msg("worker %d is in session %d, want %d", s.w, (int)getsid(s.w), (int)s.a);

	LINK_GO(&s.pl.l2);
	LINK_RECV(&s.pl.l2, s.v); /* the worker took a session hold on g */
	hold_line_for(line, sizeof(line), POOLFS_SCOPE_WORD_PID, s.w);
	ASSERT_REFS_LINE(s.g, line);
	ASSERT_STAYS(s.g);

	end_session(state, &s, &s.pl.l2, s.w, s.g, NULL);
}

/* ---- cgroup ---- */

/* The test cgroup with a member B that stays and a holder A that takes a cgroup hold on f and
 * exits: f must stay while B is in the group. Leaves B running, returns its pid. */
static pid_t cgroup_scenario(struct path_link *pl, char *cg)
{
	char want[PATH_MAX + 64], cgpath[PATH_MAX], scope[PATH_MAX + 16];
	pid_t a, b;
	int v;

	pl->cgroup = cg;
	pl->scope = POOLFS_SCOPE_WORD_CGROUP;
	chan_open(&pl->l2);
	b = tu_spawn(ht_cg_member_fn, &(struct ht_member){&pl->l2, cg});
	link_near_end(&pl->l2);
	LINK_RECV(&pl->l2, v);

	chan_open(&pl->l);
	a = tu_spawn(holder_fn, pl);
	link_near_end(&pl->l);
	LINK_RECV(&pl->l, v);
	CHECK_0(cg2_of(a, cgpath, sizeof(cgpath)));
	if (strcmp(cgpath, "/") == 0)
		fail_msg("the holder did not leave the root cgroup");
	snprintf(scope, sizeof(scope), POOLFS_SCOPE_WORD_CGROUP ":%s", cgpath);
	hold_line(want, sizeof(want), scope);
	ASSERT_REFS_LINE(pl->path, want);

	LINK_GO(&pl->l);
	REAP_OK(a);
	link_close_near(&pl->l);
	if (cg2_populated(cg) != 1)
		fail_msg("test cgroup %s should still hold process %d", cg, (int)b);
	ASSERT_STAYS(pl->path);
	ASSERT_REFS_LINE(pl->path, want);
	return b;
}

static void test_cgroup_hold_until_last_member_exits(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	struct path_link pl = {.path = f};
	char cg[PATH_MAX];
	pid_t b;

	CGROUP_OR_SKIP((struct htest *)*state, cg);
	b = cgroup_scenario(&pl, cg);
	LINK_GO(&pl.l2);
	REAP_OK(b);
	ASSERT_GONE(f);
	link_close_near(&pl.l2);
	tu_backing_back_to_base(state);
}

static void test_cgroup_hold_until_last_member_moves_out(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	struct path_link pl = {.path = f};
	char cg[PATH_MAX], root[PATH_MAX], mine[PATH_MAX], home[2 * PATH_MAX + 2];
	pid_t b;

	CGROUP_OR_SKIP((struct htest *)*state, cg);
	b = cgroup_scenario(&pl, cg);
	/* Move B back to our own group: the test group empties while B runs. */
	CHECK_0(cgroup2_find_mount("/proc/self/mountinfo", root, sizeof(root)));
	CHECK_0(cg2_of(getpid(), mine, sizeof(mine)));
	snprintf(home, sizeof(home), "%s%s", root, strcmp(mine, "/") == 0 ? "" : mine);
	CHECK_0(cg2_move(home, b));
	ASSERT_GONE(f);
	if (!ht_running(b))
		fail_msg("process %d should still run", (int)b);
	LINK_GO(&pl.l2);
	REAP_OK(b);
	link_close_near(&pl.l2);
	tu_backing_back_to_base(state);
}

/* ---- pin on folders ---- */

static void test_pin_on_folder_keeps_closed_files(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(d, p, "d");
	PATH(a, p, "d/a");
	PATH(b, p, "d/b");
	PATH(s, p, "d/s");
	PATH(c, p, "d/s/c");

	CHECK(mkdir(d, 0700));
	CHECK(hold(d, POOLFS_SCOPE_WORD_PIN));
	CHECK_0(make_closed_file(a));
	CHECK_0(make_closed_file(b));
	CHECK(mkdir(s, 0700));
	CHECK_0(make_closed_file(c));
	ASSERT_STAYS(a);
	ASSERT_EXISTS(b);
	ASSERT_EXISTS(c);
	ASSERT_REFS_LINE(d, "children 3");
	ASSERT_REFS_LINE(d, "holds 1");
	ASSERT_REFS_LINE(a, "holds 0");

	CHECK(removexattr(d, POOLFS_XATTR_HOLD));
	ASSERT_GONE(a);
	ASSERT_GONE(b);
	ASSERT_GONE(c);
	ASSERT_GONE(s);
	ASSERT_GONE(d);
	tu_backing_back_to_base(state);
}

static void test_pin_release_keeps_what_is_used(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(d, p, "d");
	PATH(a, p, "d/a");
	PATH(b, p, "d/b");
	int fd;

	CHECK(mkdir(d, 0700));
	CHECK(hold(d, POOLFS_SCOPE_WORD_PIN));
	CHECK_0(make_closed_file(a));
	fd = open(b, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd);
	CHECK(removexattr(d, POOLFS_XATTR_HOLD));
	ASSERT_GONE(a);
	ASSERT_STAYS(b);
	ASSERT_EXISTS(d);
	CHECK(close(fd));
	ASSERT_GONE(b);
	ASSERT_GONE(d);
	tu_backing_back_to_base(state);
}

static void test_folder_hold_keeps_file_in_subfolder(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(d, p, "d");
	PATH(s, p, "d/s");
	PATH(t, p, "d/s/t");
	PATH(f, p, "d/s/f");
	PATH(u, p, "d/s/t/u");
	struct sleeper k = start_sleeper();

	CHECK(mkdir(d, 0700));
	CHECK(hold(d, k.scope));
	CHECK(mkdir(s, 0700));
	CHECK(mkdir(t, 0700));
	CHECK_0(make_closed_file(f));
	CHECK_0(make_closed_file(u));
	ASSERT_STAYS(f);
	ASSERT_EXISTS(u);
	ASSERT_REFS_LINE(f, "holds 0");
	ASSERT_REFS_LINE(s, "holds 0");

	stop_sleeper(&k);
	ASSERT_GONE(f);
	ASSERT_GONE(u);
	ASSERT_GONE(t);
	ASSERT_GONE(s);
	ASSERT_GONE(d);
	tu_backing_back_to_base(state);
}

/* ---- release and errors ---- */

static void test_removexattr_without_hold_enodata(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(d, p, "d");
	int fd = open(f, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	CHECK(fd);
	CHECK_ERR(removexattr(f, POOLFS_XATTR_HOLD), ENODATA);
	CHECK(mkdir(d, 0700));
	CHECK_ERR(removexattr(d, POOLFS_XATTR_HOLD), ENODATA);
	/* Released once: there is nothing left to release. */
	CHECK(hold(f, POOLFS_SCOPE_WORD_PIN));
	CHECK(removexattr(f, POOLFS_XATTR_HOLD));
	CHECK_ERR(removexattr(f, POOLFS_XATTR_HOLD), ENODATA);
	ASSERT_EXISTS(f);
	CHECK(close(fd));
	ASSERT_GONE(f);
	CHECK(rmdir(d));
	tu_backing_back_to_base(state);
}

static void test_removexattr_drops_all_of_callers_holds(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	struct sleeper k = start_sleeper();
	int fd = open(f, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	CHECK(fd);
	CHECK(hold(f, POOLFS_SCOPE_WORD_PIN));
	CHECK(hold(f, k.scope));
	CHECK(hold(f, POOLFS_SCOPE_WORD_PROCESS));
	CHECK(hold(f, POOLFS_SCOPE_WORD_SESSION));
	CHECK(close(fd));
	ASSERT_REFS_LINE(f, "holds 4");
	CHECK(removexattr(f, POOLFS_XATTR_HOLD));
	/* Every hold went, though process k, this process and its session all still run. */
	ASSERT_GONE(f);
	stop_sleeper(&k);
	tu_backing_back_to_base(state);
}

/* ---- hold requests: one row a case ---- */

/* A value written to user.poolfs.hold on an open file of ours, and what must come of it. */
struct hold_request {
	const char *name;
	const char *v;
	size_t len; /* bytes written: may hold a NUL, or leave out the last bytes of v */
	int err;    /* the errno, or 0: the hold is taken */
};

/* Only deliberately odd spellings and the documented ones: the literals are the input. */
static const struct hold_request hold_requests[] = {
	{"hold_word_unknown_einval", "bogus", 5, EINVAL},
	{"hold_empty_einval", "", 0, EINVAL},
	{"hold_pid_without_number_einval", "pid:", 4, EINVAL},
	{"hold_pid_zero_einval", "pid:0", 5, EINVAL},
	{"hold_pid_negative_einval", "pid:-3", 6, EINVAL},
	{"hold_pid_trailing_letters_einval", "pid:12ab", 8, EINVAL},
	{"hold_pid_space_before_number_einval", "pid: 5", 6, EINVAL},
	{"hold_word_upper_case_einval", "PIN", 3, EINVAL},
	{"hold_word_twice_einval", "pin pin", 7, EINVAL},
	{"hold_word_with_suffix_einval", "pins", 4, EINVAL},
	{"hold_session_with_number_einval", "session:1", 9, EINVAL},
	{"hold_cgroup_with_path_einval", "cgroup:/x", 9, EINVAL},
	{"hold_two_trailing_newlines_einval", "process\n\n", 9, EINVAL},
	{"hold_bytes_after_nul_einval", "pin\0x", 5, EINVAL},
	{"hold_leading_space_einval", " pin", 4, EINVAL},
	{"hold_pid_two_numbers_einval", "pid:1:2", 7, EINVAL},
	{"hold_pin_taken", "pin", 3, 0},
	{"hold_pin_trailing_newline_taken", "pin\n", 4, 0},
	{"hold_pin_trailing_nul_taken", "pin", 4, 0},
	{"hold_process_taken", "process", 7, 0},
	{"hold_session_taken", "session", 7, 0},
};

static int setup_request(void **state)
{
	return htest_setup_row(state, "autohold=none");
}

/* A refused request leaves no hold and the closed file goes; a taken one keeps the closed file
 * until it is released. The holders (this process, its session) outlive the check. */
static void test_hold_request(void **state)
{
	const struct hold_request *hr = htest_row(state);
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = open(f, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	CHECK(fd);
	errno = 0;
	if (setxattr(f, POOLFS_XATTR_HOLD, hr->v, hr->len, 0) != (hr->err ? -1 : 0) ||
	    (hr->err && errno != hr->err))
		fail_msg("scope \"%.*s\" (%zu bytes): errno %s, want %s", (int)hr->len, hr->v,
			 hr->len, errname(errno), errname(hr->err));
	ASSERT_REFS_LINE(f, hr->err ? "holds 0" : "holds 1");
	CHECK(close(fd));
	if (!hr->err) {
		ASSERT_STAYS(f);
		CHECK(removexattr(f, POOLFS_XATTR_HOLD));
	}
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

/* The documented variants (one trailing newline or NUL) are holds like any other: they add up. */
static void test_hold_variants_add_up(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = open(f, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	CHECK(fd);
	CHECK(setxattr(f, POOLFS_XATTR_HOLD, "pin\n", 4, 0));
	CHECK(setxattr(f, POOLFS_XATTR_HOLD, "pin", 4, 0));
	ASSERT_REFS_LINE(f, "holds 2");
	CHECK(close(fd));
	ASSERT_STAYS(f);
	CHECK(removexattr(f, POOLFS_XATTR_HOLD));
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

struct other {
	char f[PATH_MAX];    /* root's open file */
	char d[PATH_MAX];    /* root's folder */
	char mine[PATH_MAX]; /* the other user's own file */
};

#define EXPECT_FAIL(step, expr, err)                                                               \
	do {                                                                                       \
		long r_;                                                                           \
		errno = 0;                                                                         \
		r_ = (long)(expr);                                                                 \
		if (r_ != -1 || errno != (err)) {                                                  \
			fprintf(stderr, "# uid %d: step %d: %s gave %ld errno %s, want %s\n",      \
				(int)getuid(), (step), #expr, r_, errname(errno), errname(err));   \
			return (step);                                                             \
		}                                                                                  \
	} while (0)

static int other_user_fn(void *arg)
{
	struct other *o = arg;
	char buf[256];
	int fd;

	EXPECT_FAIL(1, hold(o->f, POOLFS_SCOPE_WORD_PIN), EACCES);
	EXPECT_FAIL(2, hold(o->f, POOLFS_SCOPE_WORD_PROCESS), EACCES);
	EXPECT_FAIL(3, removexattr(o->f, POOLFS_XATTR_HOLD), EACCES);
	EXPECT_FAIL(4, getxattr(o->f, POOLFS_XATTR_REFS, buf, sizeof(buf)), EACCES);
	EXPECT_FAIL(5, hold(o->d, POOLFS_SCOPE_WORD_PIN), EACCES);
	EXPECT_FAIL(6, removexattr(o->d, POOLFS_XATTR_HOLD), EACCES);
	/* Its own entry: the same calls work (the refusal is about ownership). */
	fd = open(o->mine, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHILD_CHECK(fd >= 0, 7);
	CHILD_CHECK(hold(o->mine, POOLFS_SCOPE_WORD_PIN) == 0, 8);
	CHILD_CHECK(getxattr(o->mine, POOLFS_XATTR_REFS, buf, sizeof(buf)) > 0, 9);
	CHILD_CHECK(strstr(buf, "hold pin uid=65534\n") != NULL, 10);
	CHILD_CHECK(removexattr(o->mine, POOLFS_XATTR_HOLD) == 0, 11);
	CHILD_CHECK(close(fd) == 0, 12);
	/* Only its owner can see it go (root is not exempt: lstat gives root EACCES). */
	CHILD_CHECK(pool_wait_gone(o->mine, GONE_MS) == 0, 13);
	return 0;
}

static void test_hold_on_other_users_entry_eacces(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct other o;
	int fd, r;

	if (getuid() != 0) {
		TU_SKIP("not root: needs root to run as uid %d", OTHER_UID);
	}
	assert_int_equal(pool_path(p, "f", o.f, sizeof(o.f)), 0);
	assert_int_equal(pool_path(p, "d", o.d, sizeof(o.d)), 0);
	assert_int_equal(pool_path(p, "mine", o.mine, sizeof(o.mine)), 0);
	fd = open(o.f, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd);
	CHECK(mkdir(o.d, 0700));
	fflush(NULL);
	r = run_as_user(OTHER_UID, OTHER_GID, other_user_fn, &o);
	if (r != 0)
		fail_msg("as uid %d: step %d failed (see above)", OTHER_UID, r);
	ASSERT_REFS_LINE(o.f, "holds 0");
	ASSERT_REFS_LINE(o.d, "holds 0");
	CHECK(close(fd));
	ASSERT_GONE(o.f);
	CHECK(rmdir(o.d));
	tu_backing_back_to_base(state);
}

/* ---- the refs text ---- */

/* refs of path once it shows no handle and no mapping: RELEASE reaches the daemon
 * asynchronously after close()/munmap() (slowly under valgrind), and passthrough may say
 * "mapped yes" until it has checked. */
static void refs_settled(const char *path, char *buf, size_t len)
{
	long long deadline = pool_now_ms() + GONE_MS;

	for (;;) {
		if (refs(path, buf, len) < 0)
			fail_msg("getxattr(%s, %s): %s", path, POOLFS_XATTR_REFS, errname(errno));
		if ((has_line(buf, "mapped no") && has_line(buf, "opens 0")) ||
		    pool_now_ms() >= deadline)
			return;
		pool_sleep_ms(10);
	}
}

/* text must be exactly head followed by the lines of tail in any order. */
static void assert_refs_text(const char *path, const char *text, const char *head,
			     const char *const *tail, int ntail)
{
	size_t hl = strlen(head);
	const char *rest = text + hl;
	int lines = 0;

	if (strncmp(text, head, hl) != 0)
		fail_msg("refs of %s:\n%s\nwant it to begin with:\n%s", path, text, head);
	for (const char *s = rest; *s; s++)
		if (*s == '\n')
			lines++;
	if (text[0] && text[strlen(text) - 1] != '\n')
		fail_msg("refs of %s do not end in a newline:\n%s", path, text);
	if (lines != ntail)
		fail_msg("refs of %s: %d hold lines, want %d:\n%s", path, lines, ntail, text);
	for (int i = 0; i < ntail; i++)
		if (!has_line(rest, tail[i]))
			fail_msg("refs of %s lack \"%s\":\n%s", path, tail[i], text);
}

static void test_refs_format(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(d, p, "d");
	PATH(c, p, "d/c");
	char pin_line[64], pid_line[64], rb[4096], head[128];
	const char *tail[2];
	struct sleeper k = start_sleeper();
	ssize_t n;
	int fd, dfd;
	void *m;

	/* A file with two holds, closed. */
	fd = open(f, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd);
	CHECK(ftruncate(fd, 4096));
	CHECK(hold(f, POOLFS_SCOPE_WORD_PIN));
	CHECK(hold(f, k.scope));
	hold_line(pin_line, sizeof(pin_line), POOLFS_SCOPE_WORD_PIN);
	hold_line(pid_line, sizeof(pid_line), k.scope);
	tail[0] = pin_line;
	tail[1] = pid_line;

	/* Open: one handle. */
	CHECK(refs(f, rb, sizeof(rb)));
	assert_refs_text(f, rb, "opens 1\nmapped no\nnames 1\nholds 2\n", tail, 2);
	CHECK(close(fd));
	refs_settled(f, rb, sizeof(rb));
	assert_refs_text(f, rb, "opens 0\nmapped no\nnames 1\nholds 2\n", tail, 2);
	/* The size query agrees with the text. */
	n = getxattr(f, POOLFS_XATTR_REFS, NULL, 0);
	CHECK(n);
	assert_true((size_t)n >= strlen(rb));
	CHECK_ERR(getxattr(f, POOLFS_XATTR_REFS, rb, 3), ERANGE);

	/* Mapped after close: the refs must show that something uses it (a handle the page-cache
	 * path keeps until munmap, or "mapped yes"), and go back to unused after munmap. */
	fd = open(f, O_RDWR | O_CLOEXEC);
	CHECK(fd);
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		fail_msg("mmap: %s", errname(errno));
	CHECK(close(fd));
	CHECK(refs(f, rb, sizeof(rb)));
	if (!has_line(rb, "mapped yes") && has_line(rb, "opens 0"))
		fail_msg("refs of a mapped file show no use:\n%s", rb);
	CHECK(munmap(m, 4096));
	{
		long long deadline = pool_now_ms() + GONE_MS;

		do {
			CHECK(refs(f, rb, sizeof(rb)));
			if (has_line(rb, "opens 0") && has_line(rb, "mapped no"))
				break;
			pool_sleep_ms(10);
		} while (pool_now_ms() < deadline);
	}
	assert_refs_text(f, rb, "opens 0\nmapped no\nnames 1\nholds 2\n", tail, 2);

	/* A folder: children, and a folder handle counts as an open. */
	CHECK(mkdir(d, 0700));
	CHECK(hold(d, POOLFS_SCOPE_WORD_PIN));
	CHECK_0(make_closed_file(c));
	CHECK(refs(d, rb, sizeof(rb)));
	assert_refs_text(d, rb, "opens 0\nmapped no\nchildren 1\nholds 1\n", tail, 1);
	dfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dfd);
	CHECK(refs(d, rb, sizeof(rb)));
	assert_refs_text(d, rb, "opens 1\nmapped no\nchildren 1\nholds 1\n", tail, 1);
	CHECK(close(dfd));
	/* A file under it: no holds of its own. */
	refs_settled(c, rb, sizeof(rb));
	snprintf(head, sizeof(head), "opens 0\nmapped no\nnames 1\nholds 0\n");
	assert_refs_text(c, rb, head, NULL, 0);

	CHECK(removexattr(d, POOLFS_XATTR_HOLD));
	ASSERT_GONE(c);
	ASSERT_GONE(d);
	CHECK(removexattr(f, POOLFS_XATTR_HOLD));
	ASSERT_GONE(f);
	stop_sleeper(&k);
	tu_backing_back_to_base(state);
}

/* ---- unlink ---- */

static void test_unlink_drops_holds(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(g, p, "g");
	char buf[8];
	struct sleeper k = start_sleeper();
	int fd;

	/* Held and still open: the name goes at unlink, the data stays readable until close,
	 * then goes although process k still runs and the pin was never released. */
	fd = open(f, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd);
	CHECK(write(fd, "payload", 7));
	CHECK(hold(f, POOLFS_SCOPE_WORD_PIN));
	CHECK(hold(f, k.scope));
	CHECK(unlink(f));
	CHECK_ERR(access(f, F_OK), ENOENT);
	assert_int_equal(pread(fd, buf, 7, 0), 7);
	assert_memory_equal(buf, "payload", 7);
	CHECK(close(fd));
	tu_backing_back_to_base(state);

	/* Held and closed: unlink alone frees it. */
	make_held_file(g, POOLFS_SCOPE_WORD_PIN);
	ASSERT_STAYS(g);
	CHECK(unlink(g));
	tu_backing_back_to_base(state);

	/* The name is free and the holds did not stay with it: a new f without a hold goes. */
	CHECK_0(make_closed_file(f));
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
	stop_sleeper(&k);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_none, htest_teardown)

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		T(test_pid_hold_until_exit),
		T(test_pid_hold_of_dead_process_esrch),
		T(test_pid_holds_of_two_processes),
		T(test_process_hold_by_child),
		T(test_session_hold_lasts_while_leader_lives),
		T(test_session_hold_ends_with_leader_not_worker),
		T(test_session_without_leader_falls_back_to_process),
		T(test_cgroup_hold_until_last_member_exits),
		T(test_cgroup_hold_until_last_member_moves_out),
		T(test_pin_on_folder_keeps_closed_files),
		T(test_pin_release_keeps_what_is_used),
		T(test_folder_hold_keeps_file_in_subfolder),
		T(test_removexattr_without_hold_enodata),
		T(test_removexattr_drops_all_of_callers_holds),
		T(test_hold_variants_add_up),
		T(test_hold_on_other_users_entry_eacces),
		T(test_refs_format),
		T(test_unlink_drops_holds),
	};
	struct CMUnitTest tests[HT_NROWS(fixed) + HT_NROWS(hold_requests)];
	size_t n = HT_NROWS(fixed);

	memcpy(tests, fixed, sizeof(fixed));
	n += HT_ROWS(tests + n, hold_requests, test_hold_request, setup_request);
	htest_init();
	return _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
}
