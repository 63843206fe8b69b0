/* Machine-wide kernel settings a test changes for a while (the fs.protected_* sysctls): each is
 * put back to the value it had before the test, by the test itself, by cmocka's teardown, at exit
 * and on SIGTERM, SIGINT or SIGHUP (meson's timeout), so a failing or killed test never leaves the
 * machine changed. While a process has settings changed it holds an flock on
 * /run/poolfs-tests-sysctl.lock, so that two test runs at once (two build dirs) never take each
 * other's temporary value for the machine's. Bodies in tu_sysctl.c (the harness library); nothing
 * here calls cmocka.
 *
 * Set them after the test's first pool is mounted: the harness installs its own signal handlers
 * at the first mount, and tu_sysctl_set puts its handler in front of whatever is there then (and
 * calls that one after restoring). */
#ifndef POOLFS_TU_SYSCTL_H
#define POOLFS_TU_SYSCTL_H

/* The value of /proc/sys/NAME (NAME like "fs/protected_symlinks"): >= 0, or -errno. */
int tu_sysctl_get(const char *name);

/* Set /proc/sys/NAME to value, remembering the value it had before the first change since the
 * last tu_sysctl_restore_all (so setting it twice restores the original): 0 or -errno
 * (-ENOSPC: more than 8 settings at once; -EBUSY: another process kept the lock for 2 minutes).
 * The value written is read back: -EIO if it did not take. */
int tu_sysctl_set(const char *name, int value);

/* Put every changed setting back: 0, or the first -errno (the others are still tried).
 * Async-signal-safe; only the process that changed them restores them. */
int tu_sysctl_restore_all(void);

#endif
