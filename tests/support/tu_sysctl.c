/* Kernel settings changed for a test and always put back (tu_sysctl.h). */
#include "tu_sysctl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 8

/* One process at a time changes them, machine-wide: two test runs at once (two build dirs)
 * would otherwise each remember the other's temporary value as "the old one" and leave it.
 * A process waits this long for another to put its settings back. */
#define LOCK_PATH "/run/poolfs-tests-sysctl.lock"
#define LOCK_WAIT_MS 120000

struct saved {
	char path[96]; /* /proc/sys/NAME */
	char old[24];  /* the value before the first change, as text with its newline */
	volatile sig_atomic_t active;
};

static struct saved saved[SLOTS];
static pid_t owner;	 /* the process that changed them */
static int lock_fd = -1; /* LOCK_PATH, flocked while any setting is changed */
static bool at_exit_set;
static struct sigaction prev[3];
static const int sigs[3] = {SIGTERM, SIGINT, SIGHUP};

static int sysctl_path(const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "/proc/sys/%s", name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The first line of path into buf (NUL-terminated, newline kept): its length or -errno. */
static int read_line(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	buf[n] = '\0';
	if (strchr(buf, '\n'))
		strchr(buf, '\n')[1] = '\0';
	return (int)strlen(buf);
}

/* Async-signal-safe: open, write, close. */
static int write_text(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int e = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n != (ssize_t)len)
		e = n < 0 ? -errno : -EIO;
	close(fd);
	return e;
}

int tu_sysctl_get(const char *name)
{
	char path[96], buf[24], *end;
	long v;
	int r = sysctl_path(name, path, sizeof(path));

	if (r == 0)
		r = read_line(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf || v < 0 || v > 1000000)
		return -EPROTO;
	return (int)v;
}

/* Take the machine-wide lock (bounded): 0 or -errno (-EBUSY: another process kept it). */
static int lock_take(void)
{
	struct timespec step = {0, 20 * 1000 * 1000};
	int waited = 0;

	if (lock_fd >= 0)
		return 0;
	lock_fd = open(LOCK_PATH, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_fd < 0)
		return -errno;
	while (flock(lock_fd, LOCK_EX | LOCK_NB) == -1) {
		int e = errno;

		if ((e != EWOULDBLOCK && e != EINTR) || waited >= LOCK_WAIT_MS) {
			close(lock_fd);
			lock_fd = -1;
			return e == EWOULDBLOCK ? -EBUSY : -e;
		}
		nanosleep(&step, NULL);
		waited += 20;
	}
	return 0;
}

/* Async-signal-safe: flock and close. */
static void lock_drop(void)
{
	if (lock_fd < 0)
		return;
	flock(lock_fd, LOCK_UN); /* children that inherited the descriptor do not keep it */
	close(lock_fd);
	lock_fd = -1;
}

int tu_sysctl_restore_all(void)
{
	int first = 0;

	if (owner != getpid())
		return 0;
	for (int i = 0; i < SLOTS; i++) {
		int r;

		if (!saved[i].active)
			continue;
		r = write_text(saved[i].path, saved[i].old, strlen(saved[i].old));
		if (r < 0 && first == 0)
			first = r;
		saved[i].active = 0;
	}
	lock_drop();
	return first;
}

static void restore_at_exit(void)
{
	tu_sysctl_restore_all();
}

static void on_signal(int sig)
{
	int k = sig == SIGTERM ? 0 : sig == SIGINT ? 1 : 2;

	tu_sysctl_restore_all();
	/* then whatever handled it before (the harness's pool cleanup), or the default action */
	if (prev[k].sa_handler != SIG_DFL && prev[k].sa_handler != SIG_IGN &&
	    !(prev[k].sa_flags & SA_SIGINFO)) {
		prev[k].sa_handler(sig);
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Our handler in front of the current one, unless it is ours already. */
static void install_handlers(void)
{
	if (!at_exit_set) {
		atexit(restore_at_exit);
		at_exit_set = true;
	}
	for (int k = 0; k < 3; k++) {
		struct sigaction cur, sa;

		if (sigaction(sigs[k], NULL, &cur) == 0 && cur.sa_handler == on_signal)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[k], &sa, &prev[k]);
	}
}

/* The remembered slot for path, a new one (its old value read), or -errno. */
static int slot_for(const char *path)
{
	for (int i = 0; i < SLOTS; i++)
		if (saved[i].active && strcmp(saved[i].path, path) == 0)
			return i;
	for (int i = 0; i < SLOTS; i++) {
		int r;

		if (saved[i].active)
			continue;
		r = read_line(path, saved[i].old, sizeof(saved[i].old));
		if (r < 0)
			return r;
		snprintf(saved[i].path, sizeof(saved[i].path), "%s", path);
		saved[i].active = 1;
		return i;
	}
	return -ENOSPC;
}

static bool any_active(void)
{
	for (int i = 0; i < SLOTS; i++)
		if (saved[i].active)
			return true;
	return false;
}

int tu_sysctl_set(const char *name, int value)
{
	char path[96], text[24];
	int r;

	r = sysctl_path(name, path, sizeof(path));
	if (r < 0)
		return r;
	if (owner != getpid()) {
		/* a child of a process that changed them: its slots and lock are not ours */
		memset(saved, 0, sizeof(saved));
		lock_fd = -1;
		owner = getpid();
	}
	r = lock_take();
	if (r < 0)
		return r;
	install_handlers();
	r = slot_for(path);
	if (r >= 0) {
		snprintf(text, sizeof(text), "%d\n", value);
		r = write_text(path, text, strlen(text));
	}
	if (r >= 0)
		r = tu_sysctl_get(name);
	if (r >= 0)
		r = r == value ? 0 : -EIO;
	if (!any_active())
		lock_drop(); /* nothing changed: nothing to hold others back for */
	return r;
}
