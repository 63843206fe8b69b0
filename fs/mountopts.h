/* mountopts: the `-o` items that concern how the daemon is started rather than the pool (pure).
 *
 * mount.fuse3, mount(8) and systemd's fstab generator pass along options meant for themselves
 * (`nofail`, `_netdev`, `x-*`, `defaults`, `auto`, `user`, `rw`, `dev`, `suid`, `exec` ...); the
 * daemon drops them instead of refusing the mount (docs/interface.md, "Daemon command line").
 * `debug` turns on request tracing without forcing the foreground, and `log_socket=PATH` names
 * the datagram socket the daemonized log goes to instead of /dev/log. */
#ifndef POOLFS_MOUNTOPTS_H
#define POOLFS_MOUNTOPTS_H

#include <stdbool.h>

struct mount_extras {
	bool debug; /* -o debug: trace every request (stderr, or the log when daemonized) */
	char log_socket[108]; /* -o log_socket=PATH; empty: /dev/log (sun_path's size) */
};

void mountopts_init(struct mount_extras *m);

/* One `-o` item: 1 if it was ours (applied, or dropped as a mount helper's option), 0 if not
 * ours, -EINVAL / -ENAMETOOLONG for a bad log_socket= value (`why` then says what is wrong). */
int mountopts_apply(struct mount_extras *m, const char *item, const char **why);

#endif
