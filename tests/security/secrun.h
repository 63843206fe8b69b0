/* The security suite's own process helper: pass open descriptors between processes over a unix
 * socket (SCM_RIGHTS). Running a function as another uid is the harness's (run_as_spawn,
 * run_as_reap, run_as_user in harness.h).
 *
 * Nothing here calls cmocka, so every function is usable in a child process too.
 */
#ifndef POOLFS_SECRUN_H
#define POOLFS_SECRUN_H

#include <sys/types.h>

/* Send n (1..8) descriptors in one message on a connected unix socket: 0 or -errno. */
int sec_send_fds(int sock, const int *fds, int n);

/* Receive exactly n (1..8) descriptors sent by sec_send_fds: 0 or -errno (-EPROTO if the
 * message carried another number of descriptors). The received fds are close-on-exec. */
int sec_recv_fds(int sock, int *fds, int n);

#endif
