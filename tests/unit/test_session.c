/* Unit tests of fs/session.c: parsing and reading /proc/PID/stat (command names with spaces and
 * parentheses, malformed texts, the start time; live, zombie and reaped processes) and the
 * anchor a session hold watches, on real processes: the running leader, a leaderless session
 * (the caller's topmost ancestor in it, as under Slurm's slurmstepd), and a process that is
 * gone; and the descriptors of a process whose link reads a given text (procfs.c). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "rows.h"

#include "session.h"

/* /proc/PID/stat texts: one row, one test case, with what proc_stat_parse must return and, when
 * it succeeds, what it must have read. */
struct parse_row {
	const char *name;
	const char *text;
	int rc;
	char state;
	pid_t ppid;
	pid_t sid;
};

static const struct parse_row parse_rows[] = {
	{"test_parse_plain", "123 (bash) S 45 67 89 34816 0 4194560", 0, 'S', 45, 89},
	{"test_parse_name_with_spaces_and_parens", "7 (slurmstepd: [2.batch]) ) Z 1 6 6 0 -1", 0,
	 'Z', 1, 6},
	{"test_parse_malformed_empty", "", -EINVAL, 0, 0, 0},
	{"test_parse_malformed_no_parens", "12 bash S 1 2 3", -EINVAL, 0, 0, 0},
	{"test_parse_malformed_no_space_after_name", "12 (bash)S 1 2 3", -EINVAL, 0, 0, 0},
	{"test_parse_malformed_no_session", "12 (bash) S 1 2", -EINVAL, 0, 0, 0},
	{"test_parse_malformed_negative_ppid", "12 (bash) S -4 2 3", -EINVAL, 0, 0, 0},
};

#define N_PARSE_ROWS (sizeof(parse_rows) / sizeof(parse_rows[0]))

static void test_parse_row(void **state)
{
	const struct parse_row *r = *state;
	struct proc_stat st;

	assert_int_equal(proc_stat_parse(r->text, &st), r->rc);
	if (r->rc != 0)
		return;
	assert_int_equal(st.state, r->state);
	assert_int_equal(st.ppid, r->ppid);
	assert_int_equal(st.sid, r->sid);
}

/* A whole line as Linux writes it: the start time is field 22. */
static void test_parse_start_time(void **state)
{
	struct proc_stat st;
	(void)state;
	assert_int_equal(proc_stat_parse("4242 (a (b) c) S 1 4242 4242 0 -1 4194560 96 0 0 0 1 2 "
					 "0 0 20 0 1 0 987654321 2555904 224 18446744073709551615",
					 &st),
			 0);
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.sid, 4242);
	assert_true(st.start_time == 987654321ULL);
	/* A text that ends before field 22 still parses; the start time is then unknown (0). */
	assert_int_equal(proc_stat_parse("123 (bash) S 45 67 89 34816 0 4194560", &st), 0);
	assert_true(st.start_time == 0);
}

/* proc_stat_read on real processes: this one, a zombie (not reaped yet) and a reaped one. */
static void test_read_live_zombie_gone(void **state)
{
	struct proc_stat me, child;
	siginfo_t si;
	pid_t c;
	int status;
	(void)state;

	assert_int_equal(proc_stat_read(getpid(), &me), 0);
	assert_int_equal(me.ppid, getppid());
	assert_int_equal(me.sid, getsid(0));
	assert_true(me.start_time > 0);

	c = fork();
	assert_true(c >= 0);
	if (c == 0)
		_exit(0);
	/* Wait for the exit without reaping: the child stays a zombie, which counts as gone. */
	assert_int_equal(waitid(P_PID, (id_t)c, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(proc_stat_read(c, &child), -ESRCH);
	assert_int_equal(waitpid(c, &status, 0), c);
	assert_int_equal(proc_stat_read(c, &child), -ESRCH);
}

/* A pipe a child writes one int to. */
static int read_int(int fd)
{
	int v = -1;
	assert_int_equal(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	return v;
}

static void write_int(int fd, int v)
{
	if (write(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		_exit(90);
}

/* The caller leads its own session: it is its own anchor. */
static void test_anchor_is_running_leader(void **state)
{
	int fds[2], status;
	pid_t c, anchor = 0;
	(void)state;

	assert_int_equal(pipe(fds), 0);
	c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		pid_t a = 0;
		if (setsid() != getpid() || session_anchor(getpid(), &a) != 0)
			_exit(91);
		write_int(fds[1], (int)a);
		_exit(0);
	}
	anchor = read_int(fds[0]);
	assert_int_equal(waitpid(c, &status, 0), c);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(anchor, c);
	close(fds[0]);
	close(fds[1]);
}

/* slurmstepd's shape: the leader forks a middle process and exits; the middle forks a worker. The
 * worker's anchor is the middle (its topmost ancestor in the leaderless session), not itself, and
 * not the leader, which stays a zombie until the worker has answered. */
static void test_anchor_in_leaderless_session(void **state)
{
	int up[2], go[2], status;
	pid_t leader, middle = 0, anchor = 0;
	(void)state;

	/* The middle is reparented to us when the leader exits, so we can reap it. */
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	assert_int_equal(pipe(up), 0);
	assert_int_equal(pipe(go), 0);
	leader = fork();
	assert_true(leader >= 0);
	if (leader == 0) {
		/* Only the test writes "go": if it fails and exits, the middle reads EOF and ends. */
		close(go[1]);
		close(up[0]);
		if (setsid() != getpid())
			_exit(92);
		pid_t m = fork();
		if (m < 0)
			_exit(93);
		if (m > 0)
			_exit(0); /* the leader leaves at once */
		/* The middle: wait until the leader is gone, fork the worker, wait for it. */
		while (getppid() == getsid(0))
			usleep(1000);
		pid_t w = fork();
		if (w < 0)
			_exit(94);
		if (w == 0) {
			pid_t a = 0;
			if (session_anchor(getpid(), &a) != 0)
				_exit(95);
			write_int(up[1], (int)getppid());
			write_int(up[1], (int)a);
			_exit(0);
		}
		int ws;
		if (waitpid(w, &ws, 0) != w || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
			_exit(96);
		/* Stay until the test has looked at us. */
		char c;
		if (read(go[0], &c, 1) != 1)
			_exit(97);
		_exit(0);
	}
	/* The leader stays a zombie (unreaped) until the worker has asked: a zombie leader is gone. */
	middle = read_int(up[0]);
	anchor = read_int(up[0]);
	assert_int_equal(waitpid(leader, &status, 0), leader);
	assert_int_equal(anchor, middle);
	assert_true(anchor != leader);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(waitpid(middle, &status, 0), middle);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(up[0]);
	close(up[1]);
	close(go[0]);
	close(go[1]);
}

static void test_anchor_of_gone_process(void **state)
{
	pid_t c, anchor = 0;
	int status;
	(void)state;

	c = fork();
	assert_true(c >= 0);
	if (c == 0)
		_exit(0);
	assert_int_equal(waitpid(c, &status, 0), c);
	assert_int_equal(session_anchor(c, &anchor), -ESRCH);
}

/* proc_find_fds (procfs.c) on this process: the two ends of a pipe by its "pipe:[INODE]" link,
 * eventfds by theirs, max honoured, a link nothing has, and a reaped process. */
static void test_find_fds(void **state)
{
	char pipe_link[64];
	int p[2], ev[2], fds[8], n;
	struct stat st;
	pid_t c;
	(void)state;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(fstat(p[0], &st), 0);
	snprintf(pipe_link, sizeof(pipe_link), "pipe:[%llu]", (unsigned long long)st.st_ino);
	n = proc_find_fds(getpid(), pipe_link, fds, 8);
	assert_int_equal(n, 2);
	assert_true((fds[0] == p[0] && fds[1] == p[1]) || (fds[0] == p[1] && fds[1] == p[0]));

	ev[0] = eventfd(0, EFD_CLOEXEC);
	ev[1] = eventfd(0, EFD_CLOEXEC);
	assert_true(ev[0] >= 0 && ev[1] >= 0);
	assert_int_equal(proc_find_fds(getpid(), "anon_inode:[eventfd]", fds, 8), 2);
	assert_int_equal(proc_find_fds(getpid(), "anon_inode:[eventfd]", fds, 1), 1);
	assert_true(fds[0] == ev[0] || fds[0] == ev[1]);
	close(ev[1]);
	assert_int_equal(proc_find_fds(getpid(), "anon_inode:[eventfd]", fds, 8), 1);
	assert_int_equal(fds[0], ev[0]);
	/* exact: a prefix of a link is not that link */
	assert_int_equal(proc_find_fds(getpid(), "anon_inode:[event", fds, 8), 0);
	assert_int_equal(proc_find_fds(getpid(), "pipe:[0]", fds, 8), 0);
	close(ev[0]);
	close(p[0]);
	close(p[1]);

	c = fork();
	assert_true(c >= 0);
	if (c == 0)
		_exit(0);
	assert_int_equal(waitpid(c, NULL, 0), c);
	assert_int_equal(proc_find_fds(c, "pipe:[0]", fds, 8), -ESRCH);
}

static const struct CMUnitTest anchor_tests[] = {
	cmocka_unit_test(test_parse_start_time),
	cmocka_unit_test(test_read_live_zombie_gone),
	cmocka_unit_test(test_anchor_is_running_leader),
	cmocka_unit_test(test_anchor_in_leaderless_session),
	cmocka_unit_test(test_anchor_of_gone_process),
	cmocka_unit_test(test_find_fds),
};

#define N_ANCHOR_TESTS (sizeof(anchor_tests) / sizeof(anchor_tests[0]))

int main(void)
{
	struct CMUnitTest tests[N_PARSE_ROWS + N_ANCHOR_TESTS];

	rows_to_tests(tests, parse_rows, sizeof(parse_rows[0]), N_PARSE_ROWS, test_parse_row, NULL,
		      NULL);
	memcpy(tests + N_PARSE_ROWS, anchor_tests, sizeof(anchor_tests));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
