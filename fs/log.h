/* log: one-line messages of the daemon. In the foreground they go to stderr, prefixed "poolfs:"
 * (a supervisor such as systemd, a job script or scripts/run keeps stderr). Once the daemon has
 * daemonized, stderr is /dev/null: log_to_syslog() sends every line to the system log instead,
 * with the identifier "poolfs" (docs/design.md, "Logs"). libfuse's own messages (its errors and, with
 * -o debug, its request trace) take the same way. */
#ifndef POOLFS_LOG_H
#define POOLFS_LOG_H

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* From now on send lines to the syslog datagram socket `socket_path` (NULL: /dev/log) instead of
 * stderr. A socket that cannot be reached loses the line (there is nowhere else to say so) and is
 * tried again for the next one. */
void log_to_syslog(const char *socket_path);

/* Route libfuse's messages through this module (call before fuse_session_new). */
void log_take_fuse_messages(void);

/* Close the syslog socket, if any (at exit). */
void log_close(void);

#endif
