/* tmpfs_instance: the daemon's detached tmpfs (see tmpfs_instance.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tmpfs_instance.h"

/* glibc 2.36 has wrappers, but <sys/mount.h> and <linux/mount.h> clash there: call the system
 * calls directly with the kernel's constants, which are ABI. */
#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 0x00000001
#endif
#ifndef FSMOUNT_CLOEXEC
#define FSMOUNT_CLOEXEC 0x00000001
#endif
#ifndef FSCONFIG_SET_STRING
#define FSCONFIG_SET_STRING 1
#endif
#ifndef FSCONFIG_CMD_CREATE
#define FSCONFIG_CMD_CREATE 6
#endif
#ifndef MOUNT_ATTR_NOSUID
#define MOUNT_ATTR_NOSUID 0x00000002
#endif
#ifndef MOUNT_ATTR_NODEV
#define MOUNT_ATTR_NODEV 0x00000004
#endif
#ifndef MOUNT_ATTR_NOEXEC
#define MOUNT_ATTR_NOEXEC 0x00000008
#endif

static int set_string(int fs_fd, const char *key, const char *value, const char **why,
		      const char *what)
{
	if (syscall(SYS_fsconfig, fs_fd, FSCONFIG_SET_STRING, key, value, 0) < 0) {
		*why = what;
		return -errno;
	}
	return 0;
}

int tmpfs_instance_open(uint64_t size, const char *huge, const char **why)
{
	char size_text[32];
	int fs_fd, mnt_fd = -1, dir_fd, r;

	fs_fd = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs_fd < 0) {
		*why = "fsopen(tmpfs)";
		return -errno;
	}
	snprintf(size_text, sizeof(size_text), "%" PRIu64, size);
	/* nr_inodes=0: the pool counts entries itself; tmpfs would only add a second, silent limit. */
	r = set_string(fs_fd, "mode", "0700", why, "tmpfs mode=0700");
	if (r == 0 && size)
		r = set_string(fs_fd, "size", size_text, why, "tmpfs size=");
	if (r == 0)
		r = set_string(fs_fd, "nr_inodes", "0", why, "tmpfs nr_inodes=0");
	if (r == 0 && huge)
		r = set_string(fs_fd, "huge", huge, why,
			       "tmpfs huge= (no transparent huge pages here?)");
	if (r == 0 && syscall(SYS_fsconfig, fs_fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		*why = "creating the tmpfs instance";
		r = -errno;
	}
	if (r < 0)
		goto out;
	mnt_fd = (int)syscall(SYS_fsmount, fs_fd, FSMOUNT_CLOEXEC,
			      MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	if (mnt_fd < 0) {
		*why = "fsmount";
		r = -errno;
		goto out;
	}
	/* The fsmount descriptor is an O_PATH one (no readdir, no fstatvfs on every kernel): open
	 * the root for real. Closing mnt_fd then dissolves the mount, but our descriptor keeps the
	 * instance, reachable by us alone. */
	dir_fd = openat(mnt_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0) {
		*why = "opening the tmpfs instance's root";
		r = -errno;
		goto out;
	}
	r = dir_fd;
out:
	if (mnt_fd >= 0)
		close(mnt_fd);
	close(fs_fd);
	return r;
}
