/* watch: one epoll loop on its own thread for everything the daemon waits on besides FUSE
 * requests: pidfds and cgroup.events of hold sources, the linger timer, fanotify.
 *
 * Rule that keeps it simple and safe: a registration is removed only from inside a callback
 * (on the watch thread) or after watch_stop(), so no event can name a freed registration. */
#ifndef POOLFS_WATCH_H
#define POOLFS_WATCH_H

#include <stdint.h>

struct watch;
typedef void (*watch_fn)(void *ctx, int fd);

int watch_start(struct watch **out);
/* Call fn(ctx, fd) on the watch thread whenever fd is readable. */
int watch_add(struct watch *w, int fd, watch_fn fn, void *ctx);
/* Only from a callback, or after watch_stop(). The fd is not closed. */
void watch_del(struct watch *w, int fd);
/* Stop the thread and free every registration (fds are not closed). Accepts NULL. */
void watch_stop(struct watch *w);

#endif
