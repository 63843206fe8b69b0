/* notify: tells the kernel about names the daemon removed on its own, from a thread of its own.
 *
 * fuse_lowlevel_notify_inval_entry() takes the parent folder's lock in the kernel, so calling it
 * from a request handler (or while holding the pool lock a handler waits on) can deadlock. The
 * pool queues (parent, name) pairs here after it unlocks; this thread sends them. */
#ifndef POOLFS_NOTIFY_H
#define POOLFS_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

struct fuse_session;
struct notify;

/* `done(ctx, ino)` is called from the thread once an invalidation that carried an inode
 * (ino != 0) has reached the kernel (or failed). */
int notify_start(struct notify **out, struct fuse_session *se,
		 void (*done)(void *ctx, uint64_t ino), void *done_ctx);
/* Queue an invalidation; never blocks on the kernel. Matches the pool's `inval` hook: 0, or
 * -ENOMEM (nothing queued, `done` will not be called). */
int notify_push(void *notify, uint64_t parent, const char *name, size_t len, uint64_t ino);
/* Stop the thread; pending invalidations are dropped (the mount is going away). Accepts NULL. */
void notify_stop(struct notify *n);

#endif
