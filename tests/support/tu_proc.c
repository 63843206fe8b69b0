/* Children of a test (testutil.h): forking them so they never outlive the test (PDEATHSIG, and
 * teardown kills what the test did not reap), and reaping them within a bound. It owns the list
 * of processes started and not yet reaped. */
#include "testutil.h"

#define TU_MAX_CHILDREN 64
static pid_t tu_children[TU_MAX_CHILDREN];

void tu_track(pid_t pid)
{
	for (int i = 0; i < TU_MAX_CHILDREN; i++)
		if (tu_children[i] == pid)
			return;
	for (int i = 0; i < TU_MAX_CHILDREN; i++)
		if (tu_children[i] <= 0) {
			tu_children[i] = pid;
			return;
		}
}

void tu_forget(pid_t pid)
{
	for (int i = 0; i < TU_MAX_CHILDREN; i++)
		if (tu_children[i] == pid)
			tu_children[i] = 0;
}

void tu_kill_children(void)
{
	for (int i = 0; i < TU_MAX_CHILDREN; i++) {
		int status;

		if (tu_children[i] <= 0)
			continue;
		kill(tu_children[i], SIGKILL);
		waitpid(tu_children[i], &status, 0);
		tu_children[i] = 0;
	}
}

pid_t tu_fork(int pdeath_sig)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == -1)
		fail_msg("fork: %s", errname(errno));
	if (pid == 0 && pool_die_with(parent, pdeath_sig) < 0)
		_exit(120);
	return pid;
}

pid_t tu_spawn(int (*fn)(void *), void *arg)
{
	pid_t pid = tu_fork(SIGKILL);

	if (pid == 0)
		_exit(fn(arg));
	tu_track(pid);
	return pid;
}

static int exit_at_once(void *arg)
{
	(void)arg;
	return 0;
}

pid_t tu_dead_pid(void)
{
	pid_t pid = tu_spawn(exit_at_once, NULL);

	REAP_OK(pid);
	return pid;
}

int tu_reap(pid_t pid, int timeout_ms)
{
	long long deadline = pool_now_ms() + timeout_ms;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r == -1 && errno != EINTR) {
			int e = errno;

			tu_forget(pid);
			return -e;
		}
		if (pool_now_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			tu_forget(pid);
			return -ETIMEDOUT;
		}
		pool_sleep_ms(5);
	}
	tu_forget(pid);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int tu_steps_with_buffer(size_t size, int (*steps)(void *arg, char *buf), void *arg)
{
	char *buf = malloc(size);
	int r;

	USER_TRUE(1, buf != NULL);
	r = steps(arg, buf);
	free(buf);
	return r;
}
