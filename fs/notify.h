/* notify: tells the kernel about names the daemon removed on its own, from a thread of its own.
 *
 * fuse_lowlevel_notify_delete() and _inval_entry() take the parent folder's lock in the kernel,
 * so calling them from a request handler (or while holding the pool lock a handler waits on) can
 * deadlock. The pool queues (parent, name, entry) here after it unlocks; this thread sends them
 * (docs/design.md "Name invalidation"). */
#ifndef POOLFS_NOTIFY_H
#define POOLFS_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

struct fuse_session;
struct notify;

int notify_start(struct notify **out, struct fuse_session *se);
/* Queue a name to drop; with `ino` (the entry it named, removed with it) the kernel is told the
 * entry was deleted, so it unlinks the inode too and forgets it once no walk holds it. Never
 * blocks on the kernel. Matches the pool's `inval` hook: 0, or -ENOMEM (nothing queued). */
int notify_push(void *notify, uint64_t parent, const char *name, size_t len, uint64_t ino);
/* Ask the thread to stop and wait for it, `ms` at most: 0 once it has stopped (then call
 * notify_stop to free), -ETIMEDOUT while it is still inside a notification. A notification waits
 * for its folder's lock in the kernel, and at unmount the process holding it may wait for a
 * request no worker reads any more: only the connection's end frees it (fs/main.c). */
int notify_stop_within(struct notify *n, int ms);
/* Stop the thread, however long that takes, and free; pending invalidations are dropped (the
 * mount is going away). Accepts NULL. */
void notify_stop(struct notify *n);

#endif
