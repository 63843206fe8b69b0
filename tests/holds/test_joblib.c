/* The joblib check (README.md, "joblib"): unmodified joblib (Debian's python3-joblib, run by
 * /usr/bin/python3) with JOBLIB_TEMP_FOLDER on a pool mounted with the default options
 * (autohold=session) computes correctly, and the pool ends up empty once the job's session is
 * over.
 *
 * joblib_run.py (JOBLIB_SCRIPT) runs in a session of its own and pauses between two batches of
 * Parallel(n_jobs=2, max_nbytes='1M'); while it pauses the test looks at what joblib left in the
 * pool (the dump is closed by its creator: only the session hold keeps it). Then either the job
 * finishes (and the pool must empty), or every process of the session is SIGKILLed, so joblib
 * cleans nothing up itself and the pool must still empty. */
#include "holdtest.h"

#include <dirent.h>
#include <ftw.h>

#define PYTHON "/usr/bin/python3"
#define JOB_MS 180000  /* python start, loky workers, two batches: a bound, not a timing */
#define EMPTY_MS 60000 /* the job's processes wind down (loky workers, resource tracker) */

static int setup_default(void **state)
{
	return htest_setup(state, "");
}

/* Whether /usr/bin/python3 can import numpy and joblib. */
static int python_ready(void)
{
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	if (pid == -1)
		return 0;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(PYTHON, PYTHON, "-c", "import numpy, joblib", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static const char *script_or_skip(void)
{
	const char *s = getenv("JOBLIB_SCRIPT");

	if (!s || access(s, R_OK) != 0)
		fail_msg("JOBLIB_SCRIPT (%s) is not a readable file", s ? s : "unset");
	if (access(PYTHON, X_OK) != 0 || !python_ready()) {
		TU_SKIP("%s cannot import numpy and joblib: Debian packages python3-numpy, "
			"python3-joblib are not installed",
			PYTHON);
	}
	return s;
}

struct job {
	const char *script;
	char mnt[PATH_MAX];
	int up[2];   /* python -> test: "P" when paused */
	int down[2]; /* test -> python: "G" go on, "K" stop */
};

static int python_fn(void *arg)
{
	struct job *j = arg;
	char up[16], down[16];

	if (setsid() != getpid())
		return 90;
	/* Its output goes to our stderr: TAP comments, never the TAP stream. */
	dup2(2, 1);
	close(j->up[0]);
	close(j->down[1]);
	/* The pipe ends survive exec (we made them O_CLOEXEC). */
	fcntl(j->up[1], F_SETFD, 0);
	fcntl(j->down[0], F_SETFD, 0);
	snprintf(up, sizeof(up), "%d", j->up[1]);
	snprintf(down, sizeof(down), "%d", j->down[0]);
	setenv("JOBLIB_TEMP_FOLDER", j->mnt, 1);
	execl(PYTHON, PYTHON, j->script, j->mnt, up, down, (char *)NULL);
	fprintf(stderr, "# exec %s: %s\n", PYTHON, strerror(errno));
	return 127;
}

static pid_t start_job(struct pool_fixture *p, struct job *j, const char *script)
{
	pid_t py;

	memset(j, 0, sizeof(*j));
	j->script = script;
	snprintf(j->mnt, sizeof(j->mnt), "%s", p->mnt);
	if (pipe2(j->up, O_CLOEXEC) == -1 || pipe2(j->down, O_CLOEXEC) == -1)
		fail_msg("pipe: %s", errname(errno));
	py = tu_spawn(python_fn, j);
	close(j->up[1]);
	close(j->down[0]);
	return py;
}

/* Wait for the pause mark; a python that died instead is reported with its status. */
static void wait_paused(struct job *j, pid_t py)
{
	char c = 0;
	int r = fd_wait_readable(j->up[0], JOB_MS);

	if (r == 0 && read(j->up[0], &c, 1) == 1 && c == 'P')
		return;
	fail_msg("joblib_run.py did not pause (%s); it ended with %d", r ? errname(-r) : "EOF",
		 tu_reap(py, 5000));
}

/* ---- what joblib left in the pool ---- */

static struct {
	const char *mnt;
	pid_t sid;
	char want_hold[64];
	int folders, files, pkl, unheld;
	char first_file[PATH_MAX];
} seen;

static int look_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char rb[4096];
	const char *rel = path + strlen(seen.mnt);

	(void)st;
	if (ftw->level == 0)
		return 0;
	if (refs(path, rb, sizeof(rb)) < 0)
		snprintf(rb, sizeof(rb), "(refs: %s)\n", errname(errno));
	for (char *s = rb; *s; s++)
		if (*s == '\n')
			*s = s[1] ? ';' : '\0';
	fprintf(stderr, "# pool: %s%s  [%s]\n", rel, type == FTW_D ? "/" : "", rb);
	if (type == FTW_D) {
		seen.folders++;
	} else {
		size_t n = strlen(path);

		seen.files++;
		if (n > 4 && strcmp(path + n - 4, ".pkl") == 0)
			seen.pkl++;
		if (!seen.first_file[0])
			snprintf(seen.first_file, sizeof(seen.first_file), "%s", path);
	}
	if (!strstr(rb, seen.want_hold))
		seen.unheld++;
	return 0;
}

/* While the job pauses: a joblib_memmapping_folder_* holding the .pkl dump of the array, each
 * entry held for the job's session (the dump was closed by the process that made it). */
static void look_at_pool(struct pool_fixture *p, pid_t py)
{
	DIR *d;
	struct dirent *e;
	int top = 0, memfolder = 0;

	memset(&seen, 0, sizeof(seen));
	seen.mnt = p->mnt;
	seen.sid = py;
	snprintf(seen.want_hold, sizeof(seen.want_hold), "hold session:%d uid=%u", (int)py,
		 (unsigned)getuid());
	d = opendir(p->mnt);
	if (!d)
		fail_msg("opendir %s: %s", p->mnt, errname(errno));
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		top++;
		if (!strncmp(e->d_name, "joblib_memmapping_folder_", 25)) {
			char path[2 * PATH_MAX], rb[4096];

			memfolder++;
			/* Before our walk opens it: the folder's own handles and holds. */
			snprintf(path, sizeof(path), "%s/%s", p->mnt, e->d_name);
			if (refs(path, rb, sizeof(rb)) >= 0) {
				for (char *s = rb; *s; s++)
					if (*s == '\n')
						*s = s[1] ? ';' : '\0';
				fprintf(stderr, "# pool: /%s/ before the walk  [%s]\n", e->d_name,
					rb);
			}
		}
	}
	closedir(d);
	CHECK(nftw(p->mnt, look_cb, 16, FTW_PHYS));
	fprintf(stderr,
		"# pool while paused: %d top-level entries (%d memmapping folders), "
		"%d folders, %d files (%d .pkl), %d without \"%s\"\n",
		top, memfolder, seen.folders, seen.files, seen.pkl, seen.unheld, seen.want_hold);
	if (memfolder != 1 || seen.pkl < 1)
		fail_msg("want one joblib_memmapping_folder_* with a .pkl dump in the pool");
	if (seen.unheld)
		fail_msg("%d entries lack the job's session hold \"%s\"", seen.unheld,
			 seen.want_hold);
}

/* ---- processes of the job's session ---- */

/* Session id of pid, or -1; its state (a zombie's too) into *state. */
static pid_t sid_of(pid_t pid, char *state)
{
	struct proc_stat ps = {.state = '?'};
	pid_t sid = proc_stat_any(pid, &ps) == 0 ? ps.sid : -1;

	if (state)
		*state = ps.state;
	return sid;
}

/* Processes (not zombies) of session sid: all were started by this test (the session was made
 * by its child). sig (0: none) is sent to each; with want_state, only processes not already in
 * that state are counted. Zombies that are ours (orphans come back to us, the child subreaper)
 * are reaped, except spare. */
static int session_procs(pid_t sid, int sig, char want_state, int log, pid_t spare)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		pid_t pid = (pid_t)atoi(e->d_name);
		char st = '?';

		if (pid <= 0 || sid_of(pid, &st) != sid)
			continue;
		if (st == 'Z' || st == 'X') {
			if (pid != spare)
				waitpid(pid, NULL, WNOHANG);
			continue;
		}
		if (want_state && st == want_state)
			continue;
		n++;
		if (log) {
			char path[64], cmd[256] = "";
			FILE *f;

			snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
			f = fopen(path, "re");
			if (f) {
				size_t m = fread(cmd, 1, sizeof(cmd) - 1, f);

				for (size_t i = 0; i < m; i++)
					if (!cmd[i])
						cmd[i] = ' ';
				cmd[m] = '\0';
				fclose(f);
			}
			fprintf(stderr, "# session %d: process %d: %.120s\n", (int)sid, (int)pid,
				cmd);
		}
		if (sig)
			kill(pid, sig);
	}
	closedir(d);
	return n;
}

/* Kill every process of the session and reap what is ours, except spare. */
static void session_kill_all(pid_t sid, pid_t spare)
{
	long long deadline = pool_now_ms() + 10000;

	while (session_procs(sid, SIGKILL, 0, 0, spare) > 0 && pool_now_ms() < deadline)
		pool_sleep_ms(20);
	session_procs(sid, 0, 0, 0, spare);
}

/* Stop every process of the session (a process forked meanwhile is caught by the next scan),
 * so none of them can react to the others' deaths: 0, or -ETIMEDOUT. */
static int session_freeze(pid_t sid)
{
	long long deadline = pool_now_ms() + 10000;

	while (session_procs(sid, SIGSTOP, 'T', 0, sid) > 0) {
		if (pool_now_ms() >= deadline)
			return -ETIMEDOUT;
		pool_sleep_ms(10);
	}
	return 0;
}

/* The pool must end up empty: no names under the mount, no data in the backing store. */
static void assert_pool_empties(void **state, struct pool_fixture *p)
{
	long long start = pool_now_ms(), deadline = start + EMPTY_MS;
	struct htest *t = *state;
	int names = -1, files = -1;

	for (;;) {
		DIR *d = opendir(p->mnt);
		struct dirent *e;

		if (!d)
			fail_msg("opendir %s: %s", p->mnt, errname(errno));
		names = 0;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				names++;
		closedir(d);
		files = pool_backing_files(p);
		if (names == 0 && files == t->f.base_backing)
			break;
		if (pool_now_ms() >= deadline)
			break;
		pool_sleep_ms(20);
	}
	if (names != 0 || files != t->f.base_backing) {
		memset(&seen, 0, sizeof(seen));
		seen.mnt = p->mnt;
		nftw(p->mnt, look_cb, 16, FTW_PHYS);
		fail_msg("after %d ms the pool still has %d names and %d backing files (want 0 "
			 "and %d)",
			 EMPTY_MS, names, files, t->f.base_backing);
	}
	fprintf(stderr, "# pool empty %lld ms after the check began\n", pool_now_ms() - start);
}

/* joblib's loky creates POSIX semaphores in /dev/shm named sem.loky-<pid>-*, and nothing
 * removes them when the job is killed (the very leak a pool avoids for data). They belong to
 * the python we started, so we remove them, and only them. */
static void remove_loky_semaphores(pid_t py)
{
	char prefix[64];
	struct dirent *e;
	DIR *d = opendir("/dev/shm");
	int n = 0;

	if (!d)
		return;
	snprintf(prefix, sizeof(prefix), "sem.loky-%d-", (int)py);
	while ((e = readdir(d)))
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 &&
		    unlinkat(dirfd(d), e->d_name, 0) == 0)
			n++;
	closedir(d);
	if (n)
		fprintf(stderr, "# removed %d loky semaphore(s) of pid %d from /dev/shm\n", n,
			(int)py);
}

static void test_joblib_computes_and_pool_empties(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	const char *script = script_or_skip();
	struct job j;
	pid_t py = start_job(p, &j, script);
	int r, left;

	wait_paused(&j, py);
	look_at_pool(p, py);
	CHECK(write(j.down[1], "G", 1));
	r = tu_reap(py, JOB_MS);
	if (r != 0) {
		session_kill_all(py, 0);
		fail_msg("joblib_run.py ended with %d (1: wrong results, see its output above)", r);
	}
	left = session_procs(py, 0, 0, 1, 0);
	fprintf(stderr, "# joblib_run.py exited 0; %d processes of its session still run\n", left);
	assert_pool_empties(state, p);
	session_kill_all(py, 0);
	remove_loky_semaphores(py);
	close(j.up[0]);
	close(j.down[1]);
	tu_backing_back_to_base(state);
}

static void test_joblib_killed_job_leaves_nothing(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	const char *script = script_or_skip();
	struct job j;
	pid_t py = start_job(p, &j, script);
	int n;

	wait_paused(&j, py);
	look_at_pool(p, py);
	/* Every process of the job dies at once: joblib's main process, its loky workers and its
	 * resource tracker get no chance to delete anything. Only the pool cleans up. */
	n = session_procs(py, 0, 0, 1, 0);
	fprintf(stderr, "# SIGSTOP, then SIGKILL, to the %d processes of session %d\n", n, (int)py);
	CHECK_0(session_freeze(py));
	session_kill_all(py, py);
	assert_int_equal(tu_reap(py, CHILD_MS), 128 + SIGKILL);
	session_kill_all(py, 0); /* reap the orphans */
	assert_int_equal(session_procs(py, 0, 0, 1, 0), 0);
	remove_loky_semaphores(py);
	assert_pool_empties(state, p);
	close(j.up[0]);
	close(j.down[1]);
	tu_backing_back_to_base(state);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_default, htest_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_joblib_computes_and_pool_empties),
		T(test_joblib_killed_job_leaves_nothing),
	};

	htest_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
