/* backing: the tmpfs store behind a pool.
 *
 * Owns where file data lives: by default (CAP_SYS_ADMIN) a tmpfs instance of the daemon's own that
 * no path reaches (tmpfs_instance.h), which also enforces max_size; otherwise the daemon's private
 * 0700 subfolder of the backing directory (locked with flock while the daemon lives, so a later
 * daemon can tell it from the leftovers of a dead one), the sweep of dead daemons' subfolders and
 * removal at unmount. Either way one file per pool inode named by inode number: folders of the
 * pool exist only in the daemon's memory, the store is flat. */
#ifndef POOLFS_BACKING_H
#define POOLFS_BACKING_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

struct backing {
	int parent_fd;        /* the backing directory (backing=DIR), -1 for a private instance */
	int dir_fd;           /* the private instance's root, or our subfolder (flock'ed while we run) */
	bool private_store;   /* dir_fd is a tmpfs instance of our own (tmpfs_instance.h) */
	char path[4096];      /* absolute path of the private subfolder; "" for a private instance */
};

/* What the pool asks for (docs/interface.md, backing= / max_size= / huge=). */
struct backing_cfg {
	const char *dir;      /* backing directory: the given one, else the default (/dev/shm) */
	bool dir_given;       /* backing= was on the command line */
	uint64_t limit;       /* max_size, 0 = none */
	const char *huge;     /* huge= for a private instance */
	bool huge_given;      /* huge= was on the command line: failing to apply it is an error */
};

/* With CAP_SYS_ADMIN and no backing= (or with max_size): a private tmpfs instance, `limit` bytes
 * (default: the size of the backing directory's tmpfs), huge pages as asked. Otherwise: sweep
 * dead daemons' subfolders in the backing directory, then create and lock our own. */
int backing_open(struct backing *b, const struct backing_cfg *cfg);
/* Remove every file and the subfolder; accepts a half-opened store. */
void backing_close(struct backing *b);

/* Remove subfolders `poolfs-PID-*` of `dir_fd` that belong to our uid, whose daemon PID is not
 * running and whose flock is free (unmounting a private tmpfs left on one).
 * Returns how many were removed, or a negative errno. */
int backing_sweep(int dir_fd);

int backing_create(struct backing *b, uint64_t ino);            /* fd, O_RDWR, new file */
int backing_open_file(struct backing *b, uint64_t ino, int flags); /* fd */
int backing_unlink(struct backing *b, uint64_t ino);
/* Set the size of the open backing file `fd` to `size`, allocating growth first (fallocate) so
 * a full tmpfs fails here with ENOSPC instead of with SIGBUS in a mapper later. On failure the
 * old size is put back. No lock needed: it touches only the file. 0 or -errno. */
int backing_resize(int fd, uint64_t size);
int backing_stat(struct backing *b, uint64_t ino, struct stat *st);
/* utimensat(2) on the file of `ino` (UTIME_NOW and UTIME_OMIT as there). */
int backing_utimens(struct backing *b, uint64_t ino, const struct timespec ts[2]);
/* fanotify_mark(2) of the file of `ino` (FAN_MARK_ADD or FAN_MARK_REMOVE in flags): 0 or -errno. */
int backing_fanotify_mark(struct backing *b, int fan_fd, unsigned int flags, uint64_t mask,
			  uint64_t ino);
int backing_statvfs(struct backing *b, struct statvfs *sv);
/* Parse a backing file name back into an inode number; 0 if it is not one of ours. */
uint64_t backing_name_to_ino(const char *name);

#endif
