/* poolfs_names: the words of the xattr interface that the daemon (fs/), the client library and
 * poolctl (lib/) and the tests share (docs/interface.md, "Extended attributes" and "Limits").
 *
 * Defined once here so a name, a scope keyword or a limit cannot drift between the side that
 * answers and the sides that ask. Only macros: no code, no dependency. Installed with poolfs.h. */
#ifndef POOLFS_NAMES_H
#define POOLFS_NAMES_H

/* Every name under this prefix is the daemon's; users cannot store attributes there. */
#define POOLFS_XATTR_PREFIX "user.poolfs."
#define POOLFS_XATTR_HOLD "user.poolfs.hold" /* set: take a hold; remove: release yours */
#define POOLFS_XATTR_REFS "user.poolfs.refs" /* get: what keeps the entry alive */
#define POOLFS_XATTR_STAT "user.poolfs.stat" /* get on the root: usage per user and limits */
#define POOLFS_XATTR_OPS "user.poolfs.ops"   /* get/set "reset" on the root: request counters */
/* get on the root: the daemon's gauges and counters since the mount (docs/monitoring.md) */
#define POOLFS_XATTR_COUNTERS "user.poolfs.counters"
/* Only in the test build of the daemon (poolfs-faultsim). */
#define POOLFS_XATTR_DEBUG_FAULT "user.poolfs.debug.fault"
#define POOLFS_XATTR_DEBUG_CHECK "user.poolfs.debug.check"

/* Hold scopes as written to user.poolfs.hold ("pid:N") and read from user.poolfs.refs
 * ("pid:N", "session:N", "cgroup:/path"). */
#define POOLFS_SCOPE_WORD_PIN "pin"
#define POOLFS_SCOPE_WORD_PROCESS "process"
#define POOLFS_SCOPE_WORD_SESSION "session"
#define POOLFS_SCOPE_WORD_CGROUP "cgroup"
#define POOLFS_SCOPE_WORD_PID "pid"
/* The refs line that stands for the hold lines a full answer had to leave out ("more N"). */
#define POOLFS_REFS_MORE "more"

/* Holds one entry may carry: one more gives ENOSPC. */
#define POOLFS_HOLDS_PER_ENTRY_MAX 256
/* The largest attribute value Linux moves in one call (the kernel's XATTR_SIZE_MAX): any answer
 * of the daemon fits, and user.poolfs.refs is cut to it. */
#define POOLFS_XATTR_VALUE_MAX 65536
/* Bytes of user attributes one entry may carry. */
#define POOLFS_XATTR_BYTES_MAX 65536

#endif
