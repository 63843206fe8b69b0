/* access: the owner-only rules of docs/interface.md "Entries and permissions", as pure functions.
 *
 * Who may touch an entry, and which mode bits an entry really gets. The daemon enforces these
 * itself for every request; mode bits are only what `ls -l` shows. */
#ifndef POOLFS_ACCESS_H
#define POOLFS_ACCESS_H

#include <stdbool.h>
#include <sys/types.h>

struct access_policy {
	bool root_exempt; /* mount option root_exempt: uid 0 may touch every entry */
};

/* May `caller` operate on an entry owned by `owner`? */
bool access_is_owner(const struct access_policy *p, uid_t caller, uid_t owner);

/* What the owner-only rule tells apart (access_check_act). */
enum access_act {
	ACCESS_USE,	      /* look up, list, open, access; create in a folder */
	ACCESS_CHANGE,	      /* xattrs, holds, times */
	ACCESS_REMODE,	      /* chmod, chown */
	ACCESS_READ_COUNTERS, /* the pool's request counters (user.poolfs.ops of the root) */
};

/* The one rule of who may act on an entry, the pool root included (docs/interface.md "Entries
 * and permissions"). Any entry: its owner (access_is_owner). The pool root (`pool_root`) is
 * shared like /tmp: everyone may use it; only its owner may change it (a sticky folder's rule:
 * -EPERM for others) or read its counters; nobody changes its mode or owner (it stays 01777 and
 * the pool owner's: -EPERM). Others' entries: -EACCES, and -EPERM for chmod/chown as on any
 * filesystem. 0 or the errno. */
int access_check_act(const struct access_policy *p, uid_t caller, uid_t owner, bool pool_root,
		     enum access_act act);

/* May an entry of `entry_owner` get a name (link) in a folder of `dir_owner`? Only where its
 * owner could make one: its owner's folders and the shared pool root (`dir_is_pool_root`). */
bool access_may_name_in(uid_t entry_owner, uid_t dir_owner, bool dir_is_pool_root);

/* May `caller` see `owner`'s entry in a listing? (Same rule: other users' entries are hidden.) */
bool access_may_list(const struct access_policy *p, uid_t caller, uid_t owner);

/* The permission bits an entry gets whatever mode/umask/chmod ask: owner bits only. */
mode_t access_effective_mode(mode_t requested);

/* Is a request to change ownership allowed? Giving an entry away (another uid or gid) is not. */
int access_check_chown(uid_t owner, gid_t group, bool set_uid, uid_t new_uid, bool set_gid,
		       gid_t new_gid);

/* What a SETATTR asks to change. */
enum access_attr {
	ACCESS_ATTR_MODE = 1,
	ACCESS_ATTR_OWNER = 2,	   /* chown/chgrp, even to the current owner */
	ACCESS_ATTR_TIMES = 4,	   /* explicit atime/mtime values */
	ACCESS_ATTR_TIMES_NOW = 8, /* "now" (touch without a date) */
	ACCESS_ATTR_SIZE = 16,
};

/* May `caller` make the changes `what` (a mask of enum access_attr) to an entry owned by
 * `owner`? via_handle: the request carries an open handle of the caller (ftruncate on an fd
 * it was given). 0, or the errno a local filesystem gives a non-owner: -EPERM for mode, owner
 * and explicit times, -EACCES for "now" and for a size change without a handle. */
int access_check_setattr(const struct access_policy *p, uid_t caller, uid_t owner, unsigned what,
			 bool via_handle);

/* Does a hold taken by `holder` on a folder keep `owner`'s entries below it? Only what the
 * holder may itself access: a hold on the shared root must not pin other users' data. */
bool access_hold_keeps(const struct access_policy *p, uid_t holder, uid_t owner);

/* access(2) for the owner: R/W/X_OK (as an int mask) against the effective bits. 0 or -EACCES. */
int access_check_mask(mode_t effective_mode, int mask);

/* access(2) and open(2) by `caller` on an entry it may touch at all (access_is_owner). Root
 * (uid 0) gets what CAP_DAC_OVERRIDE gives it on tmpfs: reading and writing whatever the bits
 * say, executing a file only if some x bit is set, searching any folder. Anyone else:
 * access_check_mask. 0 or -EACCES. */
int access_check_mask_as(mode_t effective_mode, bool is_dir, uid_t caller, int mask);

#endif
