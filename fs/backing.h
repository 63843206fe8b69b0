/* backing: the tmpfs store behind a pool.
 *
 * Owns where file data lives: by default (CAP_SYS_ADMIN) a tmpfs instance of the daemon's own that
 * no path reaches (tmpfs_instance.h), which also enforces max_size; otherwise the daemon's private
 * 0700 subfolder of the backing directory (locked with flock while the daemon lives, so a later
 * daemon can tell it from the leftovers of a dead one), the sweep of dead daemons' subfolders and
 * removal at unmount. Either way one file per pool inode named by inode number: folders of the
 * pool exist only in the daemon's memory, the store is flat.
 *
 * With max_user_size and a private instance, each user's files go to a private instance of that
 * user's own, sized to the quota, made at the user's first file: the kernel then refuses growth
 * past the quota on every path, passthrough writes included (docs/design.md "Per-user stores").
 * A file is in its owner's store; calls that name a file by inode number take its owner as a
 * hint, tried first, and look in the other stores only if it is not there. The sweep (at mount)
 * and the removal at unmount walk whole folders: no request reaches them (docs/design.md "Work
 * that grows with the pool"). */
#ifndef POOLFS_BACKING_H
#define POOLFS_BACKING_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "memcg.h"

struct fanotify_event_metadata; /* <sys/fanotify.h> */

/* A user's own tmpfs instance (per-user stores). */
struct backing_user_store {
	uid_t uid;
	int dir_fd;
};

struct backing {
	int parent_fd; /* the backing directory (backing=DIR), -1 for a private instance */
	int dir_fd;    /* the private instance's root, or our subfolder (flock'ed while we run) */
	bool private_store; /* dir_fd is a tmpfs instance of our own (tmpfs_instance.h) */
	char path[4096];    /* absolute path of the private subfolder; "" for a private instance */
	/* Per-user stores: the size of each (0: none, every file in dir_fd), their huge= and the
	 * stores made so far, under stores_lock (a leaf: nothing is taken under it). */
	uint64_t user_limit;
	bool user_limit_is_quota; /* user_limit is max_user_size (not a smaller max_size) */
	const char *huge;
	pthread_mutex_t stores_lock;
	struct backing_user_store *stores;
	size_t nstores, stores_cap;
	/* backing_fanotify_mark_stores was called: stores made later get the same mark. */
	int stores_fan_fd;
	unsigned int stores_fan_flags;
	uint64_t stores_fan_mask;
	/* What the sweep at start removed (backing_sweep): folders and files that daemons which
	 * are gone left behind. */
	uint64_t swept_folders, swept_files;
};

/* What the pool asks for (docs/interface.md, backing= / max_size= / huge=). */
struct backing_cfg {
	const char *dir;  /* backing directory: the given one, else the default (/dev/shm) */
	bool dir_given;	  /* backing= was on the command line */
	uint64_t limit;	  /* max_size, 0 = none */
	const char *huge; /* huge= for a private instance */
	bool huge_given;  /* huge= was on the command line: failing to apply it is an error */
	uint64_t
		user_limit; /* max_user_size: per-user stores of this size, if there is a private instance */
};

/* With CAP_SYS_ADMIN and no backing= (or with max_size): a private tmpfs instance, `limit` bytes
 * (default: the size of the backing directory's tmpfs), huge pages as asked. Otherwise: sweep
 * dead daemons' subfolders in the backing directory, then create and lock our own. */
int backing_open(struct backing *b, const struct backing_cfg *cfg);
/* Remove every file and the subfolder; accepts a half-opened store. */
void backing_close(struct backing *b);

/* Remove subfolders `poolfs-PID-*` of `dir_fd` that belong to our uid, whose daemon PID is not
 * running and whose flock is free (unmounting a private tmpfs left on one).
 * Returns how many were removed, or a negative errno; *files counts the files they held. */
int backing_sweep(int dir_fd, uint64_t *files);

/* An owner hint for a file whose owner the caller does not know: every store is searched. */
#define BACKING_ANY_UID ((uid_t)-1)

/* Per-user stores: is each user's data bounded by the kernel (backing_open made them)? */
bool backing_per_user(const struct backing *b);
/* A resize's ENOSPC from a user's store, as the user should see it: EDQUOT where the store is
 * exactly the user's quota (it is full: the quota is used up, by writes the daemon never saw),
 * else ENOSPC. */
int backing_store_full_errno(const struct backing *b);

/* A new file for `ino` owned by `uid` (in its store, made now if it is the user's first): an
 * O_RDWR fd, or -errno (-ENOSPC and friends when a user's store cannot be made). */
int backing_create(struct backing *b, uid_t uid, uint64_t ino);
/* The calls below name a file by `ino` and its owner `uid` (the store tried first). */
int backing_open_file(struct backing *b, uid_t uid, uint64_t ino, int flags); /* fd */
int backing_unlink(struct backing *b, uid_t uid, uint64_t ino);
/* Set the size of the open backing file `fd` to `size`, allocating growth first (fallocate) so
 * a full tmpfs fails here with ENOSPC instead of with SIGBUS in a mapper later, every store kind
 * alike. The growth is charged to the memory cgroup `cg` (memcg.h: the caller's; NULL: the
 * daemon's). On failure the old size is put back. No lock needed: it touches only the file.
 * 0 or -errno. */
int backing_resize(int fd, uint64_t size, struct memcg *m, const char *cg);
/* fallocate(2) of the open backing file `fd`, charged to the memory cgroup `cg` (memcg.h), or,
 * if cg cannot be joined (-EPERM, -ENOENT: the daemon is not root, or the cgroup went), the
 * daemon's own, logged once: the one case where the daemon pays. 0 or -errno. */
int backing_fallocate_charged(struct memcg *m, const char *cg, int fd, int mode, off_t off,
			      off_t len);
int backing_stat(struct backing *b, uid_t uid, uint64_t ino, struct stat *st);
/* utimensat(2) on the file of `ino` (UTIME_NOW and UTIME_OMIT as there). */
int backing_utimens(struct backing *b, uid_t uid, uint64_t ino, const struct timespec ts[2]);
/* fanotify_mark(2) of the file of `ino` (FAN_MARK_ADD or FAN_MARK_REMOVE in flags): 0 or -errno. */
int backing_fanotify_mark(struct backing *b, int fan_fd, unsigned int flags, uint64_t mask,
			  uid_t uid, uint64_t ino);
/* fanotify_mark(2) of every store's root (the whole store's events): 0 or the first -errno. */
int backing_fanotify_mark_stores(struct backing *b, int fan_fd, unsigned int flags, uint64_t mask);
/* statvfs(2) of the store `uid`'s files go to (the user's own with per-user stores). */
int backing_statvfs(struct backing *b, uid_t uid, struct statvfs *sv);
/* Parse a backing file name back into an inode number; 0 if it is not one of ours. */
uint64_t backing_name_to_ino(const char *name);
/* The backing file a fanotify event `ev` (its header copied out into `m`) is about, from its
 * name record (FAN_REPORT_DFID_NAME: the folder's file handle, then the child's name); 0 if it
 * carries none or the name is not one of ours. */
uint64_t backing_event_ino(const char *ev, const struct fanotify_event_metadata *m);

#endif
