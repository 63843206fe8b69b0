/* log: one-line messages on stderr, prefixed "poolfs:". The daemon runs in the foreground under
 * a supervisor (systemd, a job script, scripts/run), which keeps stderr. */
#ifndef POOLFS_LOG_H
#define POOLFS_LOG_H

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
