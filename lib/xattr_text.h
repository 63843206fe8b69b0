/* Internal to libpoolfs: the text spoken through the user.poolfs.* attributes, as pure functions
 * (hold scope values out, refs and stat answers in), unit-tested without a mount.
 */
#ifndef POOLFS_XATTR_TEXT_H
#define POOLFS_XATTR_TEXT_H

#include <stddef.h>
#include <sys/types.h>

#include "poolfs.h"

/* Write the user.poolfs.hold value for a scope ("pin", "pid:N", "process", "session", "cgroup";
 * no trailing NUL or newline counted). Returns its length, or -EINVAL (bad scope, or pid <= 0 with
 * POOLFS_SCOPE_PID), -ERANGE (len too small for the text and its NUL). */
int scope_format(enum poolfs_scope scope, pid_t pid, char *buf, size_t len);

/* Parse a user.poolfs.refs answer (text[0..len), trailing NULs ignored). Unknown keys are skipped so
 * a newer daemon can add lines; "names N" is optional (an older daemon has none: names 0). Returns
 * 0 or -EPROTO (malformed, or a required line missing). */
int refs_parse(const char *text, size_t len, struct poolfs_refs *out);

/* Parse a user.poolfs.stat answer, as refs_parse(). */
int usage_parse(const char *text, size_t len, struct poolfs_usage *out);

#endif
