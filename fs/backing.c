/* backing: the tmpfs store (see backing.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/fanotify.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "array.h"
#include "backing.h"
#include "log.h"
#include "procfs.h"
#include "tmpfs_instance.h"

#define TMPFS_MAGIC_NUMBER 0x01021994
#define SUBDIR_PREFIX "poolfs-"

static void name_of(uint64_t ino, char buf[20])
{
	snprintf(buf, 20, "%016" PRIx64, ino);
}

uint64_t backing_name_to_ino(const char *name)
{
	char *end;
	unsigned long long v;

	if (strlen(name) != 16)
		return 0;
	errno = 0;
	v = strtoull(name, &end, 16);
	return (errno || *end) ? 0 : (uint64_t)v;
}

uint64_t backing_event_ino(const char *ev, const struct fanotify_event_metadata *m)
{
	const char *rec = ev + m->metadata_len, *end = ev + m->event_len;

	while (rec + sizeof(struct fanotify_event_info_header) <= end) {
		const struct fanotify_event_info_header *h = (const void *)rec;
		const struct fanotify_event_info_fid *fid = (const void *)rec;
		const struct file_handle *fh;
		const char *name;

		if (h->len < sizeof(*h) || rec + h->len > end)
			break;
		if (h->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME &&
		    h->len > sizeof(*fid) + sizeof(*fh)) {
			fh = (const struct file_handle *)fid->handle;
			name = (const char *)(fh->f_handle + fh->handle_bytes);
			if (name < rec + h->len &&
			    memchr(name, '\0', (size_t)(rec + h->len - name)))
				return backing_name_to_ino(name);
		}
		rec += h->len;
	}
	return 0;
}

/* Empty a flat subfolder and remove it. */
static int remove_subdir(int parent_fd, const char *name, uint64_t *files)
{
	int fd, r = 0;
	DIR *d;
	struct dirent *de;

	fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			(*files)++;
		else if (errno != ENOENT && r == 0)
			r = -errno;
	}
	closedir(d);
	if (unlinkat(parent_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && r == 0)
		r = -errno;
	return r;
}

/* Is the daemon whose pid is in a subfolder name ("poolfs-PID-...") still running? */
static bool owner_alive(const char *name)
{
	long pid = strtol(name + strlen(SUBDIR_PREFIX), NULL, 10);

	if (pid <= 0 || pid > INT_MAX)
		return false;
	/* A killed daemon may linger as a zombie until its parent reaps it: that is dead too.
	 * A process we cannot read counts as alive: the sweep then leaves its folder alone. */
	return proc_running((pid_t)pid) != 0;
}

/* A dead daemon of an earlier version mounted its max_size tmpfs on its subfolder: detach it. */
static int unmount_private(int parent_fd, const char *name)
{
	struct stat parent, sub;
	char path[512];

	if (fstat(parent_fd, &parent) < 0 ||
	    fstatat(parent_fd, name, &sub, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (parent.st_dev == sub.st_dev)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", parent_fd, name);
	if (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
		return -errno;
	return 0;
}

int backing_sweep(int dir_fd, uint64_t *files)
{
	int dup_fd, removed = 0;
	DIR *d;
	struct dirent *de;

	dup_fd = dup(dir_fd);
	if (dup_fd < 0)
		return -errno;
	d = fdopendir(dup_fd);
	if (!d) {
		close(dup_fd);
		return -errno;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		struct stat st;
		int fd;

		if (strncmp(de->d_name, SUBDIR_PREFIX, strlen(SUBDIR_PREFIX)) != 0)
			continue;
		if (fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		/* Only our own uid's leftovers: another user's daemon is none of our business. */
		if (st.st_uid != geteuid())
			continue;
		/* The name carries the daemon's pid: a live pid is never swept, which also covers
		 * the moment between creating a folder and locking it. */
		if (owner_alive(de->d_name))
			continue;
		fd = openat(dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			/* Nobody holds it: its daemon is dead. We keep the lock while removing. */
			int r = unmount_private(dir_fd, de->d_name);
			if (r == 0)
				r = remove_subdir(dir_fd, de->d_name, files);
			if (r < 0)
				log_warn("could not remove stale backing folder %s: %s", de->d_name,
					 strerror(-r));
			else
				removed++;
		}
		close(fd);
	}
	closedir(d);
	return removed;
}

/* The private instance: as big as the tmpfs the data would otherwise go to (/dev/shm offers
 * half of RAM by default) unless max_size says otherwise, so the default pool never offers less
 * than writing into /dev/shm directly. Returns 0, -EPERM (no CAP_SYS_ADMIN: the caller falls
 * back to a subfolder) or another negative errno after logging it. */
static int open_private(struct backing *b, const struct backing_cfg *cfg)
{
	uint64_t size = cfg->limit;
	struct statvfs sv;
	const char *why = "";
	int fd;

	if (!size && statvfs(cfg->dir, &sv) == 0)
		size = (uint64_t)sv.f_blocks * sv.f_frsize;
	fd = tmpfs_instance_open(size, cfg->huge, &why);
	if (fd == -EINVAL && !cfg->huge_given && cfg->huge) {
		/* A kernel without transparent huge pages: the default huge= is a wish, not a need. */
		log_warn("%s: %s; using a tmpfs without huge pages", why, strerror(EINVAL));
		fd = tmpfs_instance_open(size, NULL, &why);
	}
	if (fd == -EPERM || fd == -ENOSYS)
		return -EPERM;
	if (fd < 0) {
		log_error("private tmpfs: %s: %s", why, strerror(-fd));
		return fd;
	}
	b->dir_fd = fd;
	b->private_store = true;
	log_info("backing: a private tmpfs instance, size %" PRIu64 " bytes, huge=%s (reachable "
		 "only through the daemon's descriptor; nothing outlives the daemon)",
		 size, cfg->huge ? cfg->huge : "default");
	return 0;
}

/* The subfolder `poolfs-PID-RANDOM` of the backing directory, created under a name the sweep
 * ignores, locked, then renamed into view: another daemon's sweep never sees it unlocked. */
static int open_subfolder(struct backing *b, const char *dir)
{
	char tmpname[64], final[64];
	unsigned char rnd[6];
	struct stat st;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -EIO;
	snprintf(tmpname, sizeof(tmpname), ".poolfs-new-%d-%02x%02x%02x%02x%02x%02x", (int)getpid(),
		 rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
	snprintf(final, sizeof(final), SUBDIR_PREFIX "%d-%02x%02x%02x%02x%02x%02x", (int)getpid(),
		 rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
	if (mkdirat(b->parent_fd, tmpname, 0700) < 0) {
		int r = -errno;
		log_error("cannot create a folder in %s: %s", dir, strerror(-r));
		return r;
	}
	b->dir_fd = openat(b->parent_fd, tmpname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (b->dir_fd < 0 || flock(b->dir_fd, LOCK_EX | LOCK_NB) < 0 || fstat(b->dir_fd, &st) < 0 ||
	    renameat(b->parent_fd, tmpname, b->parent_fd, final) < 0) {
		int r = -errno;
		unlinkat(b->parent_fd, tmpname, AT_REMOVEDIR);
		return r;
	}
	snprintf(b->path, sizeof(b->path), "%s/%s", dir, final);
	/* Whatever umask we run under, the store is ours alone. */
	return fchmod(b->dir_fd, 0700) < 0 ? -errno : 0;
}

int backing_open(struct backing *b, const struct backing_cfg *cfg)
{
	struct statfs sfs;
	int r, swept;

	b->parent_fd = -1;
	b->dir_fd = -1;
	b->private_store = false;
	b->path[0] = '\0';
	b->user_limit = 0;
	b->stores_fan_fd = -1;
	b->swept_folders = b->swept_files = 0;
	r = pthread_mutex_init(&b->stores_lock, NULL);
	if (r)
		return -r;

	/* backing=DIR alone means "put the data there"; with max_size the data always went to a
	 * tmpfs of that size, now the private instance. */
	if (!cfg->dir_given || cfg->limit) {
		r = open_private(b, cfg);
		if (r == 0 && cfg->user_limit) {
			/* A user's store is never bigger than the whole pool may be. */
			b->user_limit = cfg->limit && cfg->limit < cfg->user_limit
						? cfg->limit
						: cfg->user_limit;
			b->user_limit_is_quota = b->user_limit == cfg->user_limit;
			b->huge = cfg->huge;
			log_info(
				"backing: max_user_size: each user's files in a private tmpfs instance "
				"of %" PRIu64 " bytes of its own, made at its first file",
				b->user_limit);
		}
		if (r != -EPERM)
			return r;
		if (cfg->limit)
			log_info(
				"max_size: no CAP_SYS_ADMIN for a private tmpfs, the daemon counts bytes itself");
		else
			log_info(
				"backing: no CAP_SYS_ADMIN for a private tmpfs, using a subfolder of %s",
				cfg->dir);
	}
	if (cfg->huge_given)
		log_warn("huge= applies only to a private tmpfs instance: ignored (the backing "
			 "directory's own huge= setting applies)");
	b->parent_fd = open(cfg->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b->parent_fd < 0) {
		r = -errno;
		log_error("backing directory %s: %s", cfg->dir, strerror(-r));
		return r;
	}
	if (fstatfs(b->parent_fd, &sfs) < 0 || sfs.f_type != TMPFS_MAGIC_NUMBER)
		log_warn("backing directory %s is not a tmpfs: data will not live in memory",
			 cfg->dir);

	swept = backing_sweep(b->parent_fd, &b->swept_files);
	if (swept > 0) {
		b->swept_folders = (uint64_t)swept;
		log_info("removed %d backing folder(s) left by daemons that are gone (%" PRIu64
			 " files)",
			 swept, b->swept_files);
	}
	r = open_subfolder(b, cfg->dir);
	if (r < 0)
		backing_close(b);
	return r;
}

void backing_close(struct backing *b)
{
	const char *name;

	/* A private instance needs no clean-up: closing our descriptor lets the kernel free it, and
	 * data someone still maps or holds open stays theirs until they let go. */
	if (!b->private_store && b->dir_fd >= 0 && b->parent_fd >= 0 && b->path[0]) {
		name = strrchr(b->path, '/');
		if (name) {
			uint64_t files = 0;
			int r = remove_subdir(b->parent_fd, name + 1, &files);
			if (r < 0)
				log_warn("removing %s: %s", b->path, strerror(-r));
		}
	}
	if (b->dir_fd >= 0)
		close(b->dir_fd);
	if (b->parent_fd >= 0)
		close(b->parent_fd);
	for (size_t i = 0; i < b->nstores; i++)
		close(b->stores[i].dir_fd);
	free(b->stores);
	b->stores = NULL;
	b->nstores = b->stores_cap = 0;
	b->dir_fd = b->parent_fd = -1;
	b->private_store = false;
	b->path[0] = '\0';
}

bool backing_per_user(const struct backing *b)
{
	return b->user_limit > 0;
}

int backing_store_full_errno(const struct backing *b)
{
	return b->user_limit && b->user_limit_is_quota ? -EDQUOT : -ENOSPC;
}

/* The store of `uid`'s files: its own with per-user stores (made if `make`; -ENOENT if it has
 * none and not `make`), else the one store. A store's fd stays open until backing_close. */
static int store_of(struct backing *b, uid_t uid, bool make)
{
	const char *why = "";
	int fd = -ENOENT;

	if (!b->user_limit)
		return b->dir_fd;
	pthread_mutex_lock(&b->stores_lock);
	for (size_t i = 0; i < b->nstores; i++)
		if (b->stores[i].uid == uid)
			fd = b->stores[i].dir_fd;
	if (fd == -ENOENT && make) {
		struct backing_user_store *room = array_room(b->stores, &b->stores_cap, b->nstores,
							     8);

		if (!room) {
			fd = -ENOMEM;
			goto out;
		}
		b->stores = room;
		/* Made under the (leaf) lock: a user's first file only, a few hundred us. */
		fd = tmpfs_instance_open(b->user_limit, b->huge, &why);
		if (fd == -EINVAL && b->huge)
			fd = tmpfs_instance_open(b->user_limit, NULL, &why);
		if (fd < 0) {
			log_error("uid %u's private tmpfs: %s: %s", (unsigned)uid, why,
				  strerror(-fd));
			goto out;
		}
		if (b->stores_fan_fd >= 0 && fanotify_mark(b->stores_fan_fd, b->stores_fan_flags,
							   b->stores_fan_mask, fd, NULL) < 0)
			log_warn("fanotify_mark on uid %u's store: %m", (unsigned)uid);
		b->stores[b->nstores++] = (struct backing_user_store){.uid = uid, .dir_fd = fd};
	}
out:
	pthread_mutex_unlock(&b->stores_lock);
	return fd;
}

/* Run `at(dir_fd, name, ctx)` on the file of `ino`: in `uid`'s store first, then (per-user
 * stores) in each other store while the answer is ENOENT. The hint is the file's owner wherever
 * the caller knows it, so the search is the rare case (an opener that is not the owner). */
static int in_store_of(struct backing *b, uid_t uid, uint64_t ino,
		       int (*at)(int dir_fd, const char *name, void *ctx), void *ctx)
{
	char name[20];
	int fd = store_of(b, uid, false), r = -ENOENT;

	name_of(ino, name);
	if (fd >= 0)
		r = at(fd, name, ctx);
	for (size_t i = 0; r == -ENOENT && b->user_limit; i++) {
		pthread_mutex_lock(&b->stores_lock);
		fd = i < b->nstores ? b->stores[i].dir_fd : -1;
		pthread_mutex_unlock(&b->stores_lock);
		if (fd < 0)
			break;
		r = at(fd, name, ctx);
	}
	return r;
}

int backing_create(struct backing *b, uid_t uid, uint64_t ino)
{
	char name[20];
	int dir = store_of(b, uid, true), fd;

	if (dir < 0)
		return dir == -EPERM || dir == -ENOMEM ? -ENOSPC : dir;
	name_of(ino, name);
	fd = openat(dir, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	return fd < 0 ? -errno : fd;
}

static int open_at(int dir_fd, const char *name, void *ctx)
{
	int fd = openat(dir_fd, name, *(int *)ctx | O_CLOEXEC | O_NOFOLLOW);

	return fd < 0 ? -errno : fd;
}

int backing_open_file(struct backing *b, uid_t uid, uint64_t ino, int flags)
{
	return in_store_of(b, uid, ino, open_at, &flags);
}

static int unlink_at(int dir_fd, const char *name, void *ctx)
{
	(void)ctx;
	return unlinkat(dir_fd, name, 0) < 0 ? -errno : 0;
}

int backing_unlink(struct backing *b, uid_t uid, uint64_t ino)
{
	return in_store_of(b, uid, ino, unlink_at, NULL);
}

int backing_fallocate_charged(struct memcg *m, const char *cg, int fd, int mode, off_t off,
			      off_t len)
{
	int r = memcg_fallocate(m, cg, fd, mode, off, len);

	if (r != -EPERM && r != -ENOENT)
		return r;
	if (!atomic_exchange(&m->warned, true))
		log_warn("cannot join memory cgroup %s (%s): growth is charged to the daemon's "
			 "cgroup (docs/decisions.md \"Who pays for pool memory\")",
			 cg, strerror(-r));
	return fallocate(fd, mode, off, len) < 0 ? -errno : 0;
}

int backing_resize(int fd, uint64_t size, struct memcg *m, const char *cg)
{
	struct stat st;
	int r = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (size > (uint64_t)st.st_size)
		r = backing_fallocate_charged(m, cg, fd, 0, st.st_size,
					      (off_t)(size - (uint64_t)st.st_size));
	if (r == -EOPNOTSUPP)
		r = 0;
	if (r == 0 && ftruncate(fd, (off_t)size) < 0)
		r = -errno;
	if (r < 0 && ftruncate(fd, st.st_size) < 0)
		log_warn("backing file: could not undo a failed resize: %m");
	return r;
}

static int stat_at(int dir_fd, const char *name, void *ctx)
{
	return fstatat(dir_fd, name, ctx, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

int backing_stat(struct backing *b, uid_t uid, uint64_t ino, struct stat *st)
{
	return in_store_of(b, uid, ino, stat_at, st);
}

static int utimens_at(int dir_fd, const char *name, void *ctx)
{
	return utimensat(dir_fd, name, ctx, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

int backing_utimens(struct backing *b, uid_t uid, uint64_t ino, const struct timespec ts[2])
{
	return in_store_of(b, uid, ino, utimens_at, (void *)ts);
}

struct mark_args {
	int fan_fd;
	unsigned int flags;
	uint64_t mask;
};

static int mark_at(int dir_fd, const char *name, void *ctx)
{
	const struct mark_args *m = ctx;

	if (fanotify_mark(m->fan_fd, m->flags | FAN_MARK_DONT_FOLLOW, m->mask, dir_fd, name) < 0)
		return -errno;
	return 0;
}

int backing_fanotify_mark(struct backing *b, int fan_fd, unsigned int flags, uint64_t mask,
			  uid_t uid, uint64_t ino)
{
	struct mark_args m = {.fan_fd = fan_fd, .flags = flags, .mask = mask};

	return in_store_of(b, uid, ino, mark_at, &m);
}

int backing_fanotify_mark_stores(struct backing *b, int fan_fd, unsigned int flags, uint64_t mask)
{
	int r = 0;

	if (fanotify_mark(fan_fd, flags, mask, b->dir_fd, NULL) < 0)
		r = -errno;
	pthread_mutex_lock(&b->stores_lock);
	b->stores_fan_fd = fan_fd;
	b->stores_fan_flags = flags;
	b->stores_fan_mask = mask;
	for (size_t i = 0; i < b->nstores; i++)
		if (fanotify_mark(fan_fd, flags, mask, b->stores[i].dir_fd, NULL) < 0 && r == 0)
			r = -errno;
	pthread_mutex_unlock(&b->stores_lock);
	return r;
}

int backing_statvfs(struct backing *b, uid_t uid, struct statvfs *sv)
{
	int fd = store_of(b, uid, false);

	return fstatvfs(fd >= 0 ? fd : b->dir_fd, sv) < 0 ? -errno : 0;
}
