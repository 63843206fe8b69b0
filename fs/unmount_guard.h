/* unmount_guard: keeps auto_unmount's helper waiting until a dead daemon's FUSE connection is
 * really gone, so that it takes the mount away (docs/design.md "Daemon crash").
 *
 * libfuse's auto_unmount runs `fusermount3 --auto-unmount`, which wakes when the daemon's end of a
 * socket closes, opens the mountpoint once, and unmounts if that open fails with ENOTCONN
 * (fusermount3 3.14 takes nothing else). Two moments fool that one look:
 * - A dying process closes its files one by one: when the socket closes before the daemon's
 *   /dev/fuse, the helper's open is queued on a live connection, and the abort that follows ends
 *   it with ECONNABORTED, which fusermount3 3.14 does not take for a dead mount.
 * - Over io_uring (Linux 6.18) the daemon's rings outlive the daemon for a moment: a request the
 *   kernel hands to a ring of the dead daemon then fails with ECANCELED.
 * In both the helper leaves the dead mount in place for good. The guard is a small child that
 * holds a second reference to that socket: when the daemon dies it opens the mountpoint until the
 * answer is final (ENOTCONN, ECONNABORTED, or an open that works because the mount went away),
 * then exits, and only then does fusermount3 wake and look, at a connection already aborted:
 * ENOTCONN. */
#ifndef POOLFS_UNMOUNT_GUARD_H
#define POOLFS_UNMOUNT_GUARD_H

/* How long a guard goes on opening a mountpoint that still answers ECANCELED before it lets
 * fusermount3 decide anyway: the rings' teardown takes milliseconds, a loaded machine's more. */
#define UNMOUNT_GUARD_GIVE_UP_MS 10000

/* The sockets a process had open before libfuse mounted: libfuse before 3.16 names its end of
 * the helper's socket nowhere, so the guard takes the one socket the mount added. */
#define UNMOUNT_GUARD_FDS 1024
#define UNMOUNT_GUARD_WORD_BITS (8 * sizeof(unsigned long))
struct unmount_guard_sockets {
	unsigned long open[UNMOUNT_GUARD_FDS / UNMOUNT_GUARD_WORD_BITS];
};

/* Just before fuse_session_mount(): which of the first UNMOUNT_GUARD_FDS descriptors are
 * sockets. */
void unmount_guard_note_sockets(struct unmount_guard_sockets *before);

/* After the mount and fuse_daemonize(), before any thread is started (the guard is a fork() of
 * the daemon). `mountpoint` is the absolute path libfuse mounted; `before` what
 * unmount_guard_note_sockets() saw. 0 when started or when there is nothing to guard (no
 * auto_unmount socket, or not one new socket to tell it by), or the negative errno of pipe2() or
 * fork(). */
int unmount_guard_start(const char *mountpoint, const struct unmount_guard_sockets *before);

#endif
