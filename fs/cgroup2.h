/* cgroup2: where the cgroup v2 hierarchy is mounted, read from a mountinfo file, and whether a
 * group is populated. The daemon's cgroup holds read their groups' cgroup.events below it
 * (fs/pool_holds.c), and the holds tests make their test groups there and read the same file
 * the same way. Needs no FUSE. */
#ifndef POOLFS_CGROUP2_H
#define POOLFS_CGROUP2_H

#include <stddef.h>

/* The mount point of the first cgroup2 file system in `mountinfo` (a /proc/PID/mountinfo text,
 * normally "/proc/self/mountinfo") into buf. 0; -ENOENT if none is mounted; -ENAMETOOLONG if it
 * does not fit in len bytes; -errno if the file cannot be read. */
int cgroup2_find_mount(const char *mountinfo, char *buf, size_t len);

/* Whether the cgroup folder `dir` (an absolute path below the mount) has a process in it or
 * below, from its cgroup.events: 1 populated, 0 empty, -errno (-EIO: no "populated" line). */
int cgroup2_populated(const char *dir);

#endif
