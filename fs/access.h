/* access: the owner-only rules of design section 2, as pure functions.
 *
 * Who may touch an entry, and which mode bits an entry really gets. The daemon enforces these
 * itself for every request; mode bits are only what `ls -l` shows. */
#ifndef POOLFS_ACCESS_H
#define POOLFS_ACCESS_H

#include <stdbool.h>
#include <sys/types.h>

struct access_policy {
	bool root_exempt;     /* mount option root_exempt: uid 0 may touch every entry */
};

/* May `caller` operate on an entry owned by `owner`? */
bool access_is_owner(const struct access_policy *p, uid_t caller, uid_t owner);

/* May `caller` see `owner`'s entry in a listing? (Same rule: other users' entries are hidden.) */
bool access_may_list(const struct access_policy *p, uid_t caller, uid_t owner);

/* The permission bits an entry gets whatever mode/umask/chmod ask: owner bits only. */
mode_t access_effective_mode(mode_t requested);

/* Is a request to change ownership allowed? Giving an entry away (another uid or gid) is not. */
int access_check_chown(uid_t owner, gid_t group, bool set_uid, uid_t new_uid, bool set_gid,
		       gid_t new_gid);

/* access(2) for the owner: R/W/X_OK (as an int mask) against the effective bits. 0 or -EACCES. */
int access_check_mask(mode_t effective_mode, int mask);

#endif
