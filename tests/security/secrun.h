/* The security suite's own process helpers: run a function as another uid (fork, then setgroups,
 * setresgid and setresuid in the child, like setpriv --reuid --regid --clear-groups) and pass open
 * descriptors between processes over a unix socket (SCM_RIGHTS).
 *
 * Nothing here calls cmocka, so every function is usable in a child process too. Children never
 * outlive the test: they get SIGKILL when the process that forked them exits.
 */
#ifndef POOLFS_SECRUN_H
#define POOLFS_SECRUN_H

#include <sys/types.h>

#include "harness.h"

/* A child's exit code when it could not take on the asked-for credentials: the harness's, so
 * that run_as_reap reaps these children too. */
#define SEC_CRED_FAILED RUN_AS_CRED_FAILED

/* Fork; the child takes uid/gid (real, effective and saved) with no supplementary groups and
 * _exits with fn(arg), which must be 0..254. Returns the child's pid, or -errno. The caller reaps
 * it (sec_reap). */
pid_t sec_spawn_as(uid_t uid, gid_t gid, int (*fn)(void *), void *arg);

/* Reap pid: its exit code (0..254), -EPERM if it could not change credentials, -EINTR if a signal
 * killed it, or -errno of waitpid. */
int sec_reap(pid_t pid);

/* sec_spawn_as + sec_reap: fn(arg)'s result as uid/gid, or a negative errno as above. */
int sec_as(uid_t uid, gid_t gid, int (*fn)(void *), void *arg);

/* Send n (1..8) descriptors in one message on a connected unix socket: 0 or -errno. */
int sec_send_fds(int sock, const int *fds, int n);

/* Receive exactly n (1..8) descriptors sent by sec_send_fds: 0 or -errno (-EPROTO if the
 * message carried another number of descriptors). The received fds are close-on-exec. */
int sec_recv_fds(int sock, int *fds, int n);

#endif
