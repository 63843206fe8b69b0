/* cgroup2: where the cgroup v2 hierarchy is mounted, read from a mountinfo file. The daemon's
 * cgroup holds read their groups' cgroup.events below it (fs/pool_holds.c), and the holds tests
 * make their test groups there. Needs no FUSE. */
#ifndef POOLFS_CGROUP2_H
#define POOLFS_CGROUP2_H

#include <stddef.h>

/* The mount point of the first cgroup2 file system in `mountinfo` (a /proc/PID/mountinfo text,
 * normally "/proc/self/mountinfo") into buf. 0; -ENOENT if none is mounted; -ENAMETOOLONG if it
 * does not fit in len bytes; -errno if the file cannot be read. */
int cgroup2_find_mount(const char *mountinfo, char *buf, size_t len);

#endif
