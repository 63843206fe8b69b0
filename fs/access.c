/* access: owner-only rules (see access.h). */
#include <errno.h>
#include <unistd.h>

#include "access.h"

bool access_is_owner(const struct access_policy *p, uid_t caller, uid_t owner)
{
	return caller == owner || (p->root_exempt && caller == 0);
}

int access_check_act(const struct access_policy *p, uid_t caller, uid_t owner, bool pool_root,
		     enum access_act act)
{
	bool owns = access_is_owner(p, caller, owner);

	switch (act) {
	case ACCESS_USE:
		return pool_root || owns ? 0 : -EACCES;
	case ACCESS_CHANGE:
		return owns ? 0 : pool_root ? -EPERM : -EACCES;
	case ACCESS_REMODE:
		return !pool_root && owns ? 0 : -EPERM;
	case ACCESS_READ_COUNTERS:
		return pool_root && owns ? 0 : -EACCES;
	}
	return -EACCES;
}

bool access_may_name_in(uid_t entry_owner, uid_t dir_owner, bool dir_is_pool_root)
{
	return dir_is_pool_root || dir_owner == entry_owner;
}

bool access_may_list(const struct access_policy *p, uid_t caller, uid_t owner)
{
	return access_is_owner(p, caller, owner);
}

mode_t access_effective_mode(mode_t requested)
{
	/* Group and other bits go, and so do setuid/setgid/sticky: a pool entry is private data. */
	return requested & 0700;
}

int access_check_chown(uid_t owner, gid_t group, bool set_uid, uid_t new_uid, bool set_gid,
		       gid_t new_gid)
{
	if (set_uid && new_uid != owner)
		return -EPERM;
	if (set_gid && new_gid != group)
		return -EPERM;
	return 0;
}

int access_check_mask(mode_t effective_mode, int mask)
{
	if ((mask & R_OK) && !(effective_mode & 0400))
		return -EACCES;
	if ((mask & W_OK) && !(effective_mode & 0200))
		return -EACCES;
	if ((mask & X_OK) && !(effective_mode & 0100))
		return -EACCES;
	return 0;
}

int access_check_mask_as(mode_t effective_mode, bool is_dir, uid_t caller, int mask)
{
	if (caller != 0)
		return access_check_mask(effective_mode, mask);
	/* The kernel's capable_wrt_inode_uidgid(CAP_DAC_OVERRIDE) rule: only execution needs a
	 * bit, so that root does not run what nobody marked runnable. */
	if ((mask & X_OK) && !is_dir && !(effective_mode & 0100))
		return -EACCES;
	return 0;
}

int access_check_setattr(const struct access_policy *p, uid_t caller, uid_t owner, unsigned what,
			 bool via_handle)
{
	if (access_is_owner(p, caller, owner))
		return 0;
	/* The order follows the kernel's for local filesystems: changes only an owner may make
	 * are EPERM; "now" needs write permission, which a 0600/0700 entry gives nobody else. */
	if (what & (ACCESS_ATTR_MODE | ACCESS_ATTR_OWNER | ACCESS_ATTR_TIMES))
		return -EPERM;
	if (what & ACCESS_ATTR_TIMES_NOW)
		return -EACCES;
	/* ftruncate on a handle opened for writing works whoever owns the file, as anywhere. */
	if ((what & ACCESS_ATTR_SIZE) && !via_handle)
		return -EACCES;
	return 0;
}

bool access_hold_keeps(const struct access_policy *p, uid_t holder, uid_t owner)
{
	return access_is_owner(p, holder, owner);
}
