/* backing: the tmpfs store (see backing.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/statfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "backing.h"
#include "log.h"

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

/* Empty a flat subfolder and remove it. */
static int remove_subdir(int parent_fd, const char *name)
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
		if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT && r == 0)
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
	char path[64], stat[512];
	const char *state;
	ssize_t n;
	int fd;

	if (pid <= 0 || pid > INT_MAX)
		return false;
	/* A killed daemon may linger as a zombie until its parent reaps it: that is dead too. */
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT;
	n = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	if (n <= 0)
		return false;
	stat[n] = '\0';
	state = strrchr(stat, ')');
	return !(state && (state[2] == 'Z' || state[2] == 'X'));
}

/* A dead daemon's private tmpfs (max_size) is still mounted on its subfolder: detach it. */
static int unmount_private(int parent_fd, const char *name)
{
	struct stat parent, sub;
	char path[512];

	if (fstat(parent_fd, &parent) < 0 || fstatat(parent_fd, name, &sub, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (parent.st_dev == sub.st_dev)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", parent_fd, name);
	if (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
		return -errno;
	return 0;
}

int backing_sweep(int dir_fd)
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
		if (fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
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
				r = remove_subdir(dir_fd, de->d_name);
			if (r < 0)
				log_warn("could not remove stale backing folder %s: %s", de->d_name, strerror(-r));
			else
				removed++;
		}
		close(fd);
	}
	closedir(d);
	return removed;
}

/* Put a tmpfs of exactly `limit` bytes on our subfolder, so the kernel itself refuses growth
 * past max_size on every path (write, fallocate, truncate), including passthrough writes the
 * daemon never sees. Needs CAP_SYS_ADMIN; without it the daemon's own accounting applies. */
static int mount_private(struct backing *b, uint64_t limit)
{
	char opts[96];
	int fd;

	snprintf(opts, sizeof(opts), "size=%" PRIu64 ",mode=0700,nr_inodes=0", limit);
	if (mount("poolfs-backing", b->path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
		return -errno;
	/* From now on our files live in the new tmpfs: point dir_fd at its root and lock that, so
	 * a sweep that opens the path finds it locked. */
	fd = open(b->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int r = -errno;
		if (fd >= 0)
			close(fd);
		umount2(b->path, MNT_DETACH);
		return r;
	}
	b->under_fd = b->dir_fd;
	b->dir_fd = fd;
	b->private_mount = true;
	return 0;
}

int backing_open(struct backing *b, const char *dir, uint64_t limit)
{
	struct statfs sfs;
	struct stat st;
	char tmpname[64], final[64];
	unsigned char rnd[6];
	int r, swept;

	b->parent_fd = -1;
	b->dir_fd = -1;
	b->under_fd = -1;
	b->private_mount = false;
	b->path[0] = '\0';

	b->parent_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b->parent_fd < 0) {
		r = -errno;
		log_error("backing directory %s: %s", dir, strerror(-r));
		return r;
	}
	if (fstatfs(b->parent_fd, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC_NUMBER)
		b->is_tmpfs = true;
	else
		log_warn("backing directory %s is not a tmpfs: data will not live in memory", dir);

	swept = backing_sweep(b->parent_fd);
	if (swept > 0)
		log_info("removed %d backing folder(s) left by daemons that are gone", swept);

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		r = -EIO;
		goto fail;
	}
	/* Create under a name the sweep ignores, lock it, then rename it into view: another daemon's
	 * sweep can never see our folder unlocked. */
	snprintf(tmpname, sizeof(tmpname), ".poolfs-new-%d-%02x%02x%02x%02x%02x%02x", (int)getpid(),
		 rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
	snprintf(final, sizeof(final), SUBDIR_PREFIX "%d-%02x%02x%02x%02x%02x%02x", (int)getpid(),
		 rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
	if (mkdirat(b->parent_fd, tmpname, 0700) < 0) {
		r = -errno;
		log_error("cannot create a folder in %s: %s", dir, strerror(-r));
		goto fail;
	}
	b->dir_fd = openat(b->parent_fd, tmpname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (b->dir_fd < 0 || flock(b->dir_fd, LOCK_EX | LOCK_NB) < 0 ||
	    fstat(b->dir_fd, &st) < 0 || renameat(b->parent_fd, tmpname, b->parent_fd, final) < 0) {
		r = -errno;
		unlinkat(b->parent_fd, tmpname, AT_REMOVEDIR);
		goto fail;
	}
	/* Whatever umask we run under, the store is ours alone. */
	if (fchmod(b->dir_fd, 0700) < 0) {
		r = -errno;
		goto fail;
	}
	snprintf(b->path, sizeof(b->path), "%s/%s", dir, final);
	if (limit) {
		r = mount_private(b, limit);
		if (r < 0 && r != -EPERM) {
			log_error("cannot mount a %" PRIu64 "-byte tmpfs for max_size: %s", limit, strerror(-r));
			goto fail;
		}
		if (r == -EPERM)
			log_info("max_size: no CAP_SYS_ADMIN for a private tmpfs, the daemon counts bytes itself");
	}
	return 0;
fail:
	backing_close(b);
	return r;
}

void backing_close(struct backing *b)
{
	const char *name;

	if (b->dir_fd >= 0 && b->parent_fd >= 0 && b->path[0]) {
		name = strrchr(b->path, '/');
		if (b->private_mount) {
			/* Data still mapped by someone stays theirs: a detached tmpfs lives until its
			 * last user goes. */
			close(b->dir_fd);
			b->dir_fd = b->under_fd;
			b->under_fd = -1;
			if (umount2(b->path, MNT_DETACH) < 0)
				log_warn("unmounting the private tmpfs %s: %m", b->path);
		}
		if (name) {
			int r = remove_subdir(b->parent_fd, name + 1);
			if (r < 0)
				log_warn("removing %s: %s", b->path, strerror(-r));
		}
	}
	if (b->dir_fd >= 0)
		close(b->dir_fd);
	if (b->under_fd >= 0)
		close(b->under_fd);
	b->under_fd = -1;
	if (b->parent_fd >= 0)
		close(b->parent_fd);
	b->dir_fd = b->parent_fd = -1;
	b->path[0] = '\0';
}

int backing_create(struct backing *b, uint64_t ino)
{
	char name[20];
	int fd;

	name_of(ino, name);
	fd = openat(b->dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	return fd < 0 ? -errno : fd;
}

int backing_open_file(struct backing *b, uint64_t ino, int flags)
{
	char name[20];
	int fd;

	name_of(ino, name);
	fd = openat(b->dir_fd, name, flags | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

int backing_unlink(struct backing *b, uint64_t ino)
{
	char name[20];

	name_of(ino, name);
	return unlinkat(b->dir_fd, name, 0) < 0 ? -errno : 0;
}

int backing_stat(struct backing *b, uint64_t ino, struct stat *st)
{
	char name[20];

	name_of(ino, name);
	return fstatat(b->dir_fd, name, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

int backing_statvfs(struct backing *b, struct statvfs *sv)
{
	return fstatvfs(b->dir_fd, sv) < 0 ? -errno : 0;
}

int backing_file_path(const struct backing *b, uint64_t ino, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%016" PRIx64, b->path, ino);

	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}
