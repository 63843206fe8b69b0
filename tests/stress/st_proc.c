/* stress_support: processes a runner owns: forking into a process group, the group's holder, and
 * the runner itself, a child subreaper that kills and reaps all it started before it exits. */
#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stress.h"

pid_t spawn_child(pid_t grp, int pdeath, int (*fn)(void *), void *arg)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (grp > 0)
			setpgid(0, grp);
		if (pdeath && pool_die_with(parent, SIGKILL) < 0)
			_exit(120);
		_exit(fn(arg));
	}
	if (pid > 0 && grp > 0)
		setpgid(pid, grp); /* whichever of the two runs first; the other fails harmlessly */
	return pid;
}

static int group_holder(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

pid_t group_new(void)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		if (pool_die_with(parent, SIGKILL) < 0)
			_exit(120);
		_exit(group_holder(NULL));
	}
	if (pid > 0)
		setpgid(pid, pid);
	return pid;
}

void runner_kill_all(pid_t grp)
{
	int status;

	if (grp > 0)
		kill(-grp, SIGKILL);
	for (;;) {
		pid_t r = waitpid(-1, &status, 0);

		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			break; /* ECHILD: nobody left */
	}
}

/* The function the runner runs: set by runner_start in the test process before the fork, so
 * the runner child sees it; one runner at a time. */
static int (*runner_fn_)(void *);

static int runner_main_(void *arg)
{
	int r;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	r = runner_fn_(arg);
	runner_kill_all(0);
	return r;
}

pid_t runner_start(int (*fn)(void *), void *arg)
{
	pid_t pid;

	runner_fn_ = fn;
	pid = spawn_child(0, 1, runner_main_, arg);
	if (pid < 0)
		fail_msg("fork of the runner: %s", errname(errno));
	return pid;
}
