/* Integration-test harness: mount a real poolfs pool in a fresh temporary directory and always
 * take it down again.
 *
 * Environment:
 *   POOLFS_BIN       the daemon (meson sets it; otherwise ../../fs/poolfs next to the test binary)
 *   POOLFS_DATAPATH  datapath= for every mount (default "pagecache")
 *   POOLFS_VALGRIND  "1": run the daemon under valgrind; a leak or error makes pool_unmount fail
 *                    (such daemons get uring=off: io_uring deadlocks under valgrind)
 *   POOLFS_TEST_TMP  where the temporary directories go (default /dev/shm: the backing must be tmpfs)
 *   POOLFS_SHOW_LOG  "1": copy the daemon's stderr to ours at every unmount, not only on failure
 *   POOLFS_BACKING   "private" (the default as root): mount without backing=, so the daemon keeps
 *                    the data in a tmpfs instance of its own; the harness reaches it through
 *                    /proc/PID/fd and checks at unmount that the instance is gone with the daemon.
 *                    "dir" (the default otherwise): backing=<the test's temporary dir>/backing
 *
 * Rules for tests that use it:
 *   - mount from the main thread (the daemon gets SIGTERM through PR_SET_PDEATHSIG when the
 *     thread that forked it exits);
 *   - reap children with waitpid(pid, ...), never wait(): a bare wait() could reap the daemon;
 *   - children forked by a test end with _exit(), so they never run the parent's atexit cleanup
 *     (the cleanup checks the pid anyway).
 * Diagnostics go to stderr, prefixed with "# ", so they never disturb the TAP stream on stdout.
 */
#ifndef POOLFS_TEST_HARNESS_H
#define POOLFS_TEST_HARNESS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define POOL_FUSE_SUPER_MAGIC 0x65735546

struct pool_fixture {
	char root[PATH_MAX];	/* the temporary directory holding mnt/ and backing/ (mode 0755) */
	char mnt[PATH_MAX];	/* the mountpoint */
	char backing[PATH_MAX]; /* backing=; the daemon makes its private subfolder here */
	pid_t daemon_pid;	/* > 0 while we have a daemon to reap */
	char datapath[32];	/* the datapath= we asked for */
	char active_datapath[32]; /* what the daemon's "mounted" line reported ("" if none) */
	char log[PATH_MAX];	  /* the daemon's stderr */
	int mounted;		  /* the mount went live */
	int valgrind;		  /* the daemon runs under valgrind */
	int exit_status;	  /* the last daemon's wait status, -1 while unknown */
	pid_t owner;		  /* the process that mounted: only it may tear down */
	int private_store;	  /* POOLFS_BACKING=private: no backing=, the daemon's own tmpfs */
	char store[128];  /* "/proc/PID/fd/N/." of that tmpfs while the daemon runs, else "" */
	dev_t store_dev;  /* its device (0 if none was found) */
	int store_watch;  /* inotify descriptor watching its root (> 0); -1 once seen gone */
	bool single_user; /* mounted without allow_other (pool_mount_private) */
};

/* Mount a pool: returns 0, -EOPNOTSUPP if the daemon refused the datapath as unsupported (exit 3,
 * or a message saying so: the caller should skip), -EINVAL if it refused its options (exit 2),
 * -EPROTO if it mounted another datapath than the one asked for, or another -errno. On failure the fixture is already cleaned up and
 * pool_unmount() on it is a harmless no-op. extra_opts may be NULL or "". */
int pool_mount(struct pool_fixture *p, const char *extra_opts);

/* pool_mount without allow_other: a private pool, which FUSE itself closes to every user but the
 * one who mounted (the test's). pool_remount keeps it private. */
int pool_mount_private(struct pool_fixture *p, const char *extra_opts);

/* Unmount, reap the daemon (bounded; SIGTERM then SIGKILL of that pid only if it will not exit),
 * check it exited 0 and left the backing dir empty, remove the temporary dirs. Accepts zeroed and
 * half-built fixtures. Returns 0 or the first -errno met: -EBUSY (the mount stayed busy and was
 * detached), -ETIMEDOUT (the daemon had to be killed), -ECHILD (the daemon did not exit 0),
 * -ENOTEMPTY (the backing dir was not empty). */
int pool_unmount(struct pool_fixture *p);

/* A private tmpfs root a daemon holds open: its /proc/PID/fd/N path and device. */
struct pool_store {
	char path[64];
	dev_t dev;
};

/* The private tmpfs roots daemon `pid` holds open (tmpfs roots that are neither /dev/shm nor
 * `not_dev`; a detached instance's root reads as "/"): how many, the first `max` into out;
 * -E2BIG if more than max, or -errno. */
int pool_daemon_stores(pid_t pid, dev_t not_dev, struct pool_store *out, int max);

/* Send sig to the daemon, reap it (bounded; SIGKILL if it will not die) and wait for its mount to
 * go away (auto_unmount). p->exit_status gets its wait status. 0, -ETIMEDOUT (had to be killed),
 * -EBUSY (the mount stayed: detached), -ESRCH (no daemon). The fixture stays for pool_remount or
 * pool_unmount. */
int pool_kill_daemon(struct pool_fixture *p, int sig);

/* pool_kill_daemon, with after_death(p, arg) called once the daemon is reaped and before the wait
 * for its mount to go: what a test does while auto_unmount's helper decides. */
int pool_kill_daemon_then(struct pool_fixture *p, int sig,
			  void (*after_death)(struct pool_fixture *p, void *arg), void *arg);

/* Start a new daemon on the same mountpoint and backing dir after the last one is gone (for
 * crash-and-restart tests). Same results as pool_mount; on failure pool_unmount still cleans. */
int pool_remount(struct pool_fixture *p, const char *extra_opts);

/* Whether the fixture's mountpoint is mounted (from /proc/self/mountinfo). */
int pool_is_mounted(const struct pool_fixture *p);

/* In a forked daemon child before exec: stdin from /dev/null, stdout and stderr to `log`
 * (emptied first with `truncate`), every other descriptor closed: an inherited descriptor of a
 * pool file would keep it alive and the mount busy. */
void pool_child_stdio(const char *log, bool truncate);

/* In a child just forked by `parent`: the kernel sends it sig when the parent dies, so that no
 * process of a test outlives it. 0, or -1 if the parent has gone already (before the request
 * took): the child should then _exit at once. */
int pool_die_with(pid_t parent, int sig);

/* The first MiB of a text file, NUL-terminated, in a new buffer (free() it); NULL if unreadable. */
char *pool_read_text(const char *path);

/* Whether path (absolute, without escaped characters) is a mount point: 1 or 0. */
int pool_path_is_mountpoint(const char *path);

/* Poll until lstat(path) gives ENOENT: 0, -ETIMEDOUT, or -errno of an unexpected lstat error
 * (EACCES, another user's entry, counts as still there). */
int pool_wait_gone(const char *path, int timeout_ms);

/* Poll until lstat(path) succeeds: 0, -ETIMEDOUT, or -errno of an error other than ENOENT. */
int pool_wait_exists(const char *path, int timeout_ms);

/* buf = mnt "/" rel (rel "" or NULL gives the mountpoint): 0 or -ENAMETOOLONG. */
int pool_path(const struct pool_fixture *p, const char *rel, char *buf, size_t len);

/* Whether the superblock of device `dev` still exists (ustat(2)): 1, 0, or -errno (-ENOSYS where
 * the architecture has no ustat). How a test tells that a private tmpfs instance is gone. */
int pool_dev_alive(dev_t dev);

/* Wait until the last private store's superblock has shut down (inotify IN_UNMOUNT on its root):
 * 0, -ETIMEDOUT, -ENOENT (none known), or -errno. */
int pool_wait_store_gone(struct pool_fixture *p, int timeout_ms);

/* Number of non-directory entries anywhere under the backing dir (the daemon's files; with a
 * private store, under it), or -errno. */
int pool_backing_files(const struct pool_fixture *p);

/* Say which files the backing dir holds (the first 8: path, size, links) into buf, for a failure
 * message; a walk that fails says so there. */
void pool_backing_describe(const struct pool_fixture *p, char *buf, size_t len);

/* Poll until pool_backing_files(p) == want: 0, -ETIMEDOUT or -errno. */
int pool_wait_backing_files(const struct pool_fixture *p, int want, int timeout_ms);

/* Whether the daemon is still running (not reaped, not a zombie we could reap now). */
int pool_daemon_alive(struct pool_fixture *p);

/* The fanotify marks the daemon holds ("fanotify ino:" lines in the fdinfo of its fanotify
 * descriptor), -1 if it has no such descriptor (the page-cache path needs no close events), or
 * another -errno. */
int pool_daemon_marks(const struct pool_fixture *p);

/* Poll until pool_daemon_marks(p) == want: 0, -ETIMEDOUT or -errno. */
int pool_wait_daemon_marks(const struct pool_fixture *p, int want, int timeout_ms);

/* Close this process's descriptors of pool files and unmap its mappings of them (from
 * /proc/self/fd and /proc/self/maps), so a test that failed half-way cannot keep the pool busy.
 * Returns how many it released, or -errno. */
int pool_release_all(const struct pool_fixture *p);

/* Copy the daemon's stderr to ours, each line prefixed with "# ". */
void pool_dump_log(const struct pool_fixture *p);

/* Fork; in the child drop to uid/gid with no supplementary groups (like setpriv --reuid --regid
 * --clear-groups) and _exit with fn(arg), which must be an errno value (0..254) or 0. Returns that
 * value, -EPERM if the credentials could not be changed (child exit 255), -EINTR if the child
 * died from a signal, or -errno if fork/waitpid failed. */
int run_as_user(uid_t uid, gid_t gid, int (*fn)(void *), void *arg);

/* A child's exit code when it could not take on the asked-for credentials. */
#define RUN_AS_CRED_FAILED 255

/* The first half of run_as_user: fork a child that takes uid/gid (real, effective and saved,
 * checked) with no supplementary groups, dies with its parent (PDEATHSIG) and _exits with
 * fn(arg) (a negative result as its magnitude, capped at 254). Returns its pid, or -errno. */
pid_t run_as_spawn(uid_t uid, gid_t gid, int (*fn)(void *), void *arg);

/* The second half: reap pid, a child of run_as_spawn: its exit code (0..254), -EPERM
 * (credentials), -EINTR (killed by a signal), or -errno of waitpid. */
int run_as_reap(pid_t pid);

/* Milliseconds on CLOCK_MONOTONIC. */
long long pool_now_ms(void);

/* Sleep ms milliseconds (restarting after signals). */
void pool_sleep_ms(int ms);

#endif
