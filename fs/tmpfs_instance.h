/* tmpfs_instance: a tmpfs of the daemon's own that no path outside the daemon reaches.
 *
 * Owns the mount API calls (fsopen/fsconfig/fsmount) that build a detached tmpfs mount: it is in
 * no mount namespace, so only the daemon's descriptors reach it, and the kernel frees it when the
 * last descriptor or mapping of it goes (the daemon's exit included, SIGKILL too). Why a detached
 * mount and not a private mount namespace: docs/design.md, "Backing store". */
#ifndef POOLFS_TMPFS_INSTANCE_H
#define POOLFS_TMPFS_INSTANCE_H

#include <stdint.h>

/* Build a tmpfs instance of `size` bytes (0: the kernel's default, half of RAM), mode 0700,
 * huge=`huge` (NULL: leave the kernel's default), nosuid/nodev/noexec. Returns an O_RDONLY
 * directory descriptor of its root, or a negative errno: -EPERM without CAP_SYS_ADMIN, -ENOSYS
 * on kernels without the mount API, -EINVAL for an option this kernel refuses (`*why` names it). */
int tmpfs_instance_open(uint64_t size, const char *huge, const char **why);

#endif
