/* backing: the tmpfs store behind a pool.
 *
 * Owns the daemon's private 0700 subfolder of the backing directory (locked with flock while the
 * daemon lives, so a later daemon can tell it from the leftovers of a dead one), one file per pool
 * inode named by inode number, the sweep of dead daemons' subfolders, and removal at unmount.
 * Folders of the pool exist only in the daemon's memory: the store is flat. */
#ifndef POOLFS_BACKING_H
#define POOLFS_BACKING_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

struct backing {
	int parent_fd;        /* the backing directory (backing=DIR) */
	int dir_fd;           /* our private subfolder (or the tmpfs on it); flock'ed while we run */
	int under_fd;         /* the subfolder itself when a private tmpfs covers it, else -1 */
	bool private_mount;   /* max_size: a tmpfs of that size is mounted on the subfolder */
	char path[4096];      /* absolute path of the private subfolder */
	bool is_tmpfs;
};

/* Sweep dead daemons' subfolders in `dir`, then create and lock our own. With `limit` > 0 and
 * CAP_SYS_ADMIN, a tmpfs of `limit` bytes is mounted on it (max_size). */
int backing_open(struct backing *b, const char *dir, uint64_t limit);
/* Remove every file and the subfolder; accepts a half-opened store. */
void backing_close(struct backing *b);

/* Remove subfolders `poolfs-PID-*` of `dir_fd` that belong to our uid, whose daemon PID is not
 * running and whose flock is free (unmounting a private tmpfs left on one).
 * Returns how many were removed, or a negative errno. */
int backing_sweep(int dir_fd);

int backing_create(struct backing *b, uint64_t ino);            /* fd, O_RDWR, new file */
int backing_open_file(struct backing *b, uint64_t ino, int flags); /* fd */
int backing_unlink(struct backing *b, uint64_t ino);
int backing_stat(struct backing *b, uint64_t ino, struct stat *st);
int backing_statvfs(struct backing *b, struct statvfs *sv);
int backing_file_path(const struct backing *b, uint64_t ino, char *buf, size_t len);
/* Parse a backing file name back into an inode number; 0 if it is not one of ours. */
uint64_t backing_name_to_ino(const char *name);

#endif
