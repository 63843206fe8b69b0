/* unmount_guard: keeps auto_unmount's helper waiting until a dead daemon's FUSE connection is
 * really gone, so that it takes the mount away (docs/design.md "Daemon crash").
 *
 * libfuse's auto_unmount runs `fusermount3 --auto-unmount`, which wakes when the daemon's end of a
 * socket closes, opens the mountpoint once, and unmounts only if that open fails with ENOTCONN or
 * ECONNABORTED. Over io_uring (Linux 6.18) the daemon's rings outlive the daemon for a moment: a
 * request the kernel hands to a ring of the dead daemon in that moment fails with ECANCELED, and
 * when fusermount3's open is one of them it leaves the dead mount in place for good. The guard is
 * a small child that holds a second reference to that socket: when the daemon dies it opens the
 * mountpoint until the answer is final (ENOTCONN, ECONNABORTED, or an open that works because the
 * mount went away), then exits, and only then does fusermount3 wake and look. */
#ifndef POOLFS_UNMOUNT_GUARD_H
#define POOLFS_UNMOUNT_GUARD_H

/* How long a guard goes on opening a mountpoint that still answers ECANCELED before it lets
 * fusermount3 decide anyway: the rings' teardown takes milliseconds, a loaded machine's more. */
#define UNMOUNT_GUARD_GIVE_UP_MS 10000

/* After the mount and fuse_daemonize(), before any thread is started (the guard is a fork() of
 * the daemon). `mountpoint` is the absolute path libfuse mounted. 0 when started or when there is
 * nothing to guard (no auto_unmount socket: a libfuse that does not say which, or no
 * auto_unmount), or the negative errno of pipe2() or fork(). */
int unmount_guard_start(const char *mountpoint);

#endif
