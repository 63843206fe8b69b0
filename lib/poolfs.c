/* libpoolfs client calls that talk to a pool through xattrs and names: holds, refs, usage, the pool
 * root, unique files and job folders. The text formats live in xattr_text.c, the arrays in npy.c.
 */
#include "poolfs.h"
#include "xattr_text.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <uuid/uuid.h>

/* How many fresh uuids poolfs_mkunique()/poolfs_mkjob() try before giving up on EEXIST. */
#define UNIQUE_TRIES 16

/* On another filesystem user.poolfs.* either does not exist (ENODATA) or no user xattrs are
 * supported at all (ENOTSUP): both mean "not a pool" to our callers. */
static bool not_a_pool(int err)
{
	return err == ENODATA || err == ENOTSUP;
}

/* Is `path` on a pool? user.poolfs.stat exists on every entry of one and on nothing else. */
static int probe_pool(const char *path)
{
	if (getxattr(path, POOLFS_XATTR_STAT, NULL, 0) >= 0)
		return 0;
	return not_a_pool(errno) ? -ENOTSUP : -errno;
}

int poolfs_hold(const char *path, enum poolfs_scope scope, pid_t pid)
{
	char value[32];
	int n, r;

	if (!path)
		return -EINVAL;
	if ((n = scope_format(scope, pid, value, sizeof value)) < 0)
		return n == -ERANGE ? -EINVAL : n;
	/* Probe first: on tmpfs, ext4... the setxattr below would "succeed" and store a useless
	 * attribute, and the caller would believe the entry is held. */
	if ((r = probe_pool(path)) < 0)
		return r;
	if (setxattr(path, POOLFS_XATTR_HOLD, value, (size_t)n, 0) < 0)
		/* The probe says this is a pool, so its EOPNOTSUPP is about the scope, not the
		 * filesystem: give it its own code, so -ENOTSUP keeps meaning "not a pool". */
		return errno == ENOTSUP ? -ENOPROTOOPT : -errno;
	return 0;
}

int poolfs_release(const char *path)
{
	if (!path)
		return -EINVAL;
	if (removexattr(path, POOLFS_XATTR_HOLD) == 0)
		return 0;
	int err = errno;
	/* ENODATA is the daemon's "you hold nothing here" only if this is a pool at all. */
	if (not_a_pool(err)) {
		int r = probe_pool(path);
		return r < 0 ? r : -err;
	}
	return -err;
}

/* Read a user.poolfs.* text answer into a malloc'd buffer (*text, *len); the caller frees it.
 * On failure *text is NULL and *len 0: the callers test only r < 0, which needs errno != 0 after
 * a failed getxattr; that always holds, but this way nothing is left unset even if it did not. */
static int read_text(const char *path, const char *name, char **text, size_t *len)
{
	*text = NULL;
	*len = 0;
	/* No answer exceeds the kernel's XATTR_SIZE_MAX, so one buffer of that size reads any answer
	 * in one call, without the size-then-read race of a growing value. */
	char *buf = malloc(POOLFS_XATTR_VALUE_MAX);
	if (!buf)
		return -ENOMEM;
	ssize_t n = getxattr(path, name, buf, POOLFS_XATTR_VALUE_MAX);
	if (n < 0) {
		int err = errno;
		free(buf);
		return not_a_pool(err) ? -ENOTSUP : -err;
	}
	*text = buf;
	*len = (size_t)n;
	return 0;
}

/* Read the text answer `name` of `path` and parse it into `out` with `parse`. */
static int read_parsed(const char *path, const char *name,
		       int (*parse)(const char *text, size_t len, void *out), void *out)
{
	char *text;
	size_t len;
	int r = read_text(path, name, &text, &len);

	if (r < 0)
		return r;
	r = parse(text, len, out);
	free(text);
	return r;
}

static int parse_refs(const char *text, size_t len, void *out)
{
	return refs_parse(text, len, out);
}

static int parse_usage(const char *text, size_t len, void *out)
{
	return usage_parse(text, len, out);
}

int poolfs_refs(const char *path, struct poolfs_refs *out)
{
	if (!path || !out)
		return -EINVAL;
	return read_parsed(path, POOLFS_XATTR_REFS, parse_refs, out);
}

int poolfs_usage(const char *path, struct poolfs_usage *out)
{
	if (!path || !out)
		return -EINVAL;
	return read_parsed(path, POOLFS_XATTR_STAT, parse_usage, out);
}

int poolfs_pool_root(const char *path, char *buf, size_t len)
{
	struct stat st, up;
	int r = 0;

	if (!path || !buf)
		return -EINVAL;
	char *cur = realpath(path, NULL);
	if (!cur)
		return -errno;
	if (stat(cur, &st) < 0) {
		r = -errno;
		goto out;
	}
	/* Walk up by trimming the canonical path (never "..", which a mountpoint resolves on its own
	 * terms) until the parent lives on another device. */
	while (strcmp(cur, "/") != 0) {
		size_t cut = (size_t)(strrchr(cur, '/') - cur);
		size_t end = cut ? cut : 1; /* the parent of "/x" is "/" */
		char saved = cur[end];

		cur[end] = '\0';
		if (stat(cur, &up) < 0) {
			r = -errno;
			goto out;
		}
		if (up.st_dev != st.st_dev) {
			cur[end] = saved;
			break;
		}
	}
	if ((r = probe_pool(cur)) < 0)
		goto out;
	if (strlen(cur) >= len) {
		r = -ERANGE;
		goto out;
	}
	strcpy(buf, cur);
out:
	free(cur);
	return r;
}

static void new_uuid(char out[37])
{
	uuid_t u;
	uuid_generate_random(u);
	uuid_unparse_lower(u, out);
}

/* Check that "dir/name" (name up to NAME_MAX) fits where the caller wants it. */
static int check_room(const char *dir, size_t name_len, char *out_path, size_t len)
{
	size_t need = strlen(dir) + 1 + name_len + 1;
	if (need > PATH_MAX)
		return -ENAMETOOLONG;
	if (out_path && need > len)
		return -ERANGE;
	return 0;
}

int poolfs_mkunique(const char *dir, const char *prefix, const char *suffix, int flags, mode_t mode,
		    char *out_path, size_t len)
{
	char path[PATH_MAX], id[37];
	const char *pre = prefix ? prefix : "", *suf = suffix ? suffix : "";
	int r;

	if (!dir || strchr(pre, '/') || strchr(suf, '/'))
		return -EINVAL;
	if (flags & (O_DIRECTORY | O_PATH | O_TMPFILE | O_CREAT | O_EXCL))
		return -EINVAL; /* O_CREAT/O_EXCL are ours to add; the others make no new file */
	/* Every uuid has the same length, so the room is checked once, before anything is created. */
	char ids[48];
	snprintf(ids, sizeof ids, "%ld-%ld-", (long)getpid(), (long)gettid());
	size_t name_len = strlen(pre) + strlen(ids) + 36 + strlen(suf);
	if (name_len > NAME_MAX)
		return -ENAMETOOLONG;
	if ((r = check_room(dir, name_len, out_path, len)) < 0)
		return r;

	for (int i = 0; i < UNIQUE_TRIES; i++) {
		new_uuid(id);
		snprintf(path, sizeof path, "%s/%s%s%s%s", dir, pre, ids, id, suf);
		int fd = open(path, flags | O_CREAT | O_EXCL | O_CLOEXEC, mode);
		if (fd >= 0) {
			if (out_path)
				strcpy(out_path, path);
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int poolfs_mkjob(const char *pool, enum poolfs_scope scope, pid_t pid, char *out_path, size_t len)
{
	char path[PATH_MAX], id[37], probe[32];
	int r;

	if (!pool || !out_path)
		return -EINVAL;
	/* A bad scope must not leave a folder behind even briefly. */
	if ((r = scope_format(scope, pid, probe, sizeof probe)) < 0)
		return r == -ERANGE ? -EINVAL : r;
	if ((r = check_room(pool, strlen("job-") + 36, out_path, len)) < 0)
		return r;

	for (int i = 0;; i++) {
		if (i == UNIQUE_TRIES)
			return -EEXIST;
		new_uuid(id);
		snprintf(path, sizeof path, "%s/job-%s", pool, id);
		if (mkdir(path, 0700) == 0)
			break;
		if (errno != EEXIST)
			return -errno;
	}
	if ((r = poolfs_hold(path, scope, pid)) < 0) {
		/* The folder is empty and unheld: remove it so a failed call leaves nothing. */
		rmdir(path);
		return r;
	}
	strcpy(out_path, path);
	return 0;
}
