/* sdnotify: the service manager's readiness protocol (sd_notify(3)), without libsystemd.
 *
 * Under systemd with Type=notify, $NOTIFY_SOCKET names a datagram socket (a path, or an abstract
 * name written with a leading '@'); the daemon sends "READY=1" once its mount is in place and
 * "STOPPING=1" on its way out. Without $NOTIFY_SOCKET every call is a no-op. */
#ifndef POOLFS_SDNOTIFY_H
#define POOLFS_SDNOTIFY_H

/* Send `state` (e.g. "READY=1\nSTATUS=mounted /pool"). 0 if sent or there is no manager,
 * -EINVAL for an unusable $NOTIFY_SOCKET, or the negative errno of socket()/sendto(). */
int sdnotify_send(const char *state);

#endif
