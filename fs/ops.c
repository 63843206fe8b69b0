/* ops: FUSE low-level handlers (see ops.h). Every handler takes the pool lock for metadata and
 * releases it with pool_unlock() before replying; file data moves without the lock. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "datapath.h"
#include "log.h"
#include "ops.h"
#include "pool.h"

#define XATTR_HOLD "user.poolfs.hold"
#define XATTR_REFS "user.poolfs.refs"
#define XATTR_STAT "user.poolfs.stat"
#define XATTR_OPS "user.poolfs.ops"
#define XATTR_RESERVED_PREFIX "user.poolfs."

static struct pool *pool_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static uid_t caller_uid(fuse_req_t req)
{
	return fuse_req_ctx(req)->uid;
}

/* A node the request names, or an errno: unknown or removed inodes are stale. */
static int get_node(struct pool *p, fuse_ino_t ino, struct node **out)
{
	struct node *n = pool_node(p, ino);

	if (!n || n->life.removed)
		return -ESTALE;
	*out = n;
	return 0;
}

/* get_node + the owner-only rule. */
static int get_owned(struct pool *p, fuse_req_t req, fuse_ino_t ino, const char *what,
		     struct node **out)
{
	int r = get_node(p, ino, out);

	if (r < 0)
		return r;
	if (!pool_may(p, caller_uid(req), *out)) {
		pool_log_denied(p, caller_uid(req), what, *out);
		return -EACCES;
	}
	return 0;
}

static int check_name(const char *name)
{
	size_t len = strlen(name);

	if (len == 0)
		return -ENOENT;
	if (len > POOL_NAME_MAX)
		return -ENAMETOOLONG;
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	return 0;
}

/* How long the kernel may keep a name without asking (docs/design-notes.md, "Caching"). With
 * default_permissions the kernel checks every access below a user's own 0700 folder itself,
 * so those names are cached for long. Names directly in the shared root of a multi-user pool
 * are revalidated on every access: the LOOKUP is where the daemon refuses other users. */
static double entry_timeout(const struct pool *p, const struct node *n)
{
	return p->opts.allow_other && n->parent == p->root ? 0.0 : p->entry_timeout;
}

static void fill_entry(struct pool *p, struct node *n, const struct stat *st,
		       struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = n->ino;
	e->generation = 1; /* inode numbers are never reused */
	e->attr = *st;
	/* Attributes may be cached everywhere: a revalidating LOOKUP refreshes them, and only the
	 * daemon changes them (passthrough writes invalidate them in the kernel themselves). */
	e->attr_timeout = p->attr_timeout;
	e->entry_timeout = entry_timeout(p, n);
}

/* A folder where `req`'s caller may look up or create entries. */
static int get_dir(struct pool *p, fuse_req_t req, fuse_ino_t ino, struct node **out)
{
	int r = get_owned(p, req, ino, "use folder", out);

	if (r < 0)
		return r == -ESTALE ? -ENOENT : r;
	if (!(*out)->is_dir)
		return -ENOTDIR;
	return 0;
}

/* The entry `name` in `dir`, if the caller may touch it: 0, -ENOENT or -EACCES. */
static int get_child(struct pool *p, fuse_req_t req, struct node *dir, const char *name,
		     const char *what, struct node **out)
{
	struct node *n = pool_child(p, dir, name);

	if (!n)
		return -ENOENT;
	if (!pool_may(p, caller_uid(req), n)) {
		pool_log_denied(p, caller_uid(req), what, n);
		return -EACCES;
	}
	*out = n;
	return 0;
}

/* Replies that hand the kernel a new entry or handle. A real one fails when the caller was
 * killed before it arrived; the faultsim daemon (fault.h) makes them fail on purpose: the
 * request then ends with EIO, so nobody hangs, and the handler undoes what the reply would
 * have given, exactly as after a real failure. The request is gone either way. */
static bool reply_lost(struct pool *p, fuse_req_t req)
{
	if (!fault_fire(&p->fault, FAULT_REPLY))
		return false;
	fuse_reply_err(req, EIO);
	return true;
}

static int reply_entry(struct pool *p, fuse_req_t req, const struct fuse_entry_param *e)
{
	return reply_lost(p, req) ? -ENOENT : fuse_reply_entry(req, e);
}

static int reply_open(struct pool *p, fuse_req_t req, const struct fuse_file_info *fi)
{
	return reply_lost(p, req) ? -ENOENT : fuse_reply_open(req, fi);
}

static int reply_create(struct pool *p, fuse_req_t req, const struct fuse_entry_param *e,
			const struct fuse_file_info *fi)
{
	return reply_lost(p, req) ? -ENOENT : fuse_reply_create(req, e, fi);
}

/* The kernel never got the entry a failed reply carried: take back its lookup count. */
static void forget_one(struct pool *p, uint64_t ino)
{
	struct node *n;

	pool_lock(p);
	n = pool_node(p, ino);
	if (n)
		pool_forget(p, n, 1);
	pool_unlock(p);
}

/* A reply creating an entry (mkdir, mknod) was lost: the kernel keeps its negative entry for
 * the name, so invalidate it, and take back the lookup count. */
static void forget_new_entry(struct pool *p, uint64_t ino)
{
	struct node *n;

	pool_lock(p);
	n = pool_node(p, ino);
	if (n) {
		pool_forget_name(p, n);
		pool_forget(p, n, 1);
	}
	pool_unlock(p);
}

/* Folder handles are defined with the folder handlers below; unmount frees leftovers. */
struct dir_handle;
static void dir_handle_unlink(struct dir_handle *d);
static void dir_handle_free(struct dir_handle *d);

/* ---- init ---------------------------------------------------------------------------------- */

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct pool *p = userdata;

	/* We do our own permission checks; 1 MiB requests (design section 3). */
	/* Entries never carry setuid/setgid bits or capabilities (access_effective_mode): the
	 * kernel need not ask getxattr(security.capability) or clear bits around each write. */
	if (conn->capable & FUSE_CAP_HANDLE_KILLPRIV)
		conn->want |= FUSE_CAP_HANDLE_KILLPRIV;
#ifdef FUSE_CAP_HANDLE_KILLPRIV_V2
	if (conn->capable & FUSE_CAP_HANDLE_KILLPRIV_V2)
		conn->want |= FUSE_CAP_HANDLE_KILLPRIV_V2;
#endif
	conn->want &= ~(unsigned)FUSE_CAP_ATOMIC_O_TRUNC;
	conn->max_write = 1024 * 1024;
	conn->max_readahead = 1024 * 1024;
	if (p->dp != &datapath_pagecache && p->dp->init(p, conn) < 0) {
		if (p->opts.datapath == DATAPATH_PASSTHROUGH) {
			p->init_error = "datapath=passthrough is not supported here: the kernel did not "
					"offer FUSE passthrough (it needs Linux >= 6.9)";
			fuse_session_exit(p->session);
			return;
		}
		log_info("datapath=auto: the kernel offers no passthrough, using the page-cache path");
		p->dp = &datapath_pagecache;
	}
	if (p->dp == &datapath_pagecache)
		p->dp->init(p, conn);
	if (p->dp->start(p) < 0) {
		p->init_error = "cannot start the data path's watchers";
		fuse_session_exit(p->session);
		return;
	}
	log_info("mounted %s datapath=%s", p->mountpoint, p->dp->name);
}

static void op_destroy(void *userdata)
{
	struct pool *p = userdata;

	/* The mount went away with folders still listed: their RELEASEDIR will never come. */
	pool_lock(p);
	while (p->dir_handles.next != &p->dir_handles) {
		struct dir_handle *d = (struct dir_handle *)p->dir_handles.next;
		dir_handle_unlink(d);
		dir_handle_free(d);
	}
	pool_unlock(p);
}

/* ---- names --------------------------------------------------------------------------------- */

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct pool *p = pool_of(req);
	struct node *dir, *n;
	struct fuse_entry_param e;
	struct stat st;
	int r;

	if (strlen(name) > POOL_NAME_MAX) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	pool_lock(p);
	r = get_dir(p, req, parent, &dir);
	if (r < 0)
		goto out;
	r = get_child(p, req, dir, name, "look up", &n);
	if (r < 0)
		goto out;
	r = pool_stat(p, n, &st);
	if (r < 0)
		goto out;
	n->nlookup++;
	pool_note_lookup(p, n, fuse_req_ctx(req)->pid);
	fill_entry(p, n, &st, &e);
out:
	pool_unlock(p);
	if (r == -ENOENT) {
		/* A negative entry: names appear only through requests the kernel itself sends. */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = p->entry_timeout;
		fuse_reply_entry(req, &e);
	} else if (r < 0) {
		fuse_reply_err(req, -r);
	} else if (reply_entry(p, req, &e) < 0) {
		forget_one(p, e.ino);
	}
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct pool *p = pool_of(req);
	struct node *n;

	pool_lock(p);
	n = pool_node(p, ino);
	if (n)
		pool_forget(p, n, nlookup);
	pool_unlock(p);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct pool *p = pool_of(req);

	pool_lock(p);
	for (size_t i = 0; i < count; i++) {
		struct node *n = pool_node(p, forgets[i].ino);
		if (n)
			pool_forget(p, n, forgets[i].nlookup);
	}
	pool_unlock(p);
	fuse_reply_none(req);
}

/* The hold every creator gets (mount option autohold). Never fails the create: a hold that
 * cannot be had is logged, and the entry is created with the strict lifetime rule. */
static void autohold(struct pool *p, struct node *n, fuse_req_t req)
{
	static const enum hold_kind kinds[] = {
		[AUTOHOLD_PROCESS] = HOLD_PID,
		[AUTOHOLD_SESSION] = HOLD_SESSION,
		[AUTOHOLD_CGROUP] = HOLD_CGROUP,
	};
	struct hold_request hr = {.pid = 0};
	int r;

	if (p->opts.autohold == AUTOHOLD_NONE)
		return;
	hr.kind = kinds[p->opts.autohold];
	r = pool_hold(p, n, caller_uid(req), fuse_req_ctx(req)->pid, &hr);
	if (r < 0 && hr.kind != HOLD_PID) {
		hr.kind = HOLD_PID; /* e.g. a process in the root cgroup: its process is next best */
		r = pool_hold(p, n, caller_uid(req), fuse_req_ctx(req)->pid, &hr);
	}
	if (r < 0)
		log_warn("autohold for inode %" PRIu64 ": %s", n->ino, strerror(-r));
}

/* Common part of mkdir, mknod and create: checks and the new node. */
static int make_entry(struct pool *p, fuse_req_t req, fuse_ino_t parent, const char *name,
		      bool is_dir, mode_t mode, struct node **out, int *fd_out)
{
	struct node *dir;
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	int r = check_name(name);

	if (r < 0)
		return r == -EINVAL ? -EEXIST : r;
	r = get_dir(p, req, parent, &dir);
	if (r < 0)
		return r;
	if (pool_child(p, dir, name))
		return -EEXIST;
	r = pool_create(p, dir, name, is_dir, ctx->uid, ctx->gid, mode, out, fd_out);
	if (r < 0)
		return r;
	autohold(p, *out, req);
	return 0;
}

static void reply_new_entry(fuse_req_t req, struct pool *p, struct node *n, int r)
{
	struct fuse_entry_param e = {0};
	struct stat st;

	if (r == 0)
		r = pool_stat(p, n, &st);
	if (r == 0) {
		n->nlookup++;
		fill_entry(p, n, &st, &e);
	}
	if (r == 0 && !n->is_dir)
		pool_recheck(p, n); /* mknod: a file nobody opened or holds goes at once */
	pool_unlock(p);
	if (r < 0)
		fuse_reply_err(req, -r);
	else if (reply_entry(p, req, &e) < 0)
		forget_new_entry(p, e.ino);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct pool *p = pool_of(req);
	struct node *n = NULL;
	int r;

	pool_lock(p);
	r = make_entry(p, req, parent, name, true, mode, &n, NULL);
	reply_new_entry(req, p, n, r);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	struct pool *p = pool_of(req);
	struct node *n = NULL;
	int r;

	(void)rdev;
	if (!S_ISREG(mode)) {
		/* FIFOs, sockets and devices have no data to share and no place in a pool. */
		fuse_reply_err(req, EPERM);
		return;
	}
	pool_lock(p);
	r = make_entry(p, req, parent, name, false, mode, &n, NULL);
	reply_new_entry(req, p, n, r);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	(void)link;
	(void)parent;
	(void)name;
	/* A symlink is never opened, so it would be unused from birth; and it could point one user
	 * at another's paths. Refused. */
	fuse_reply_err(req, EPERM);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	(void)ino;
	(void)newparent;
	(void)newname;
	/* One name per entry keeps "unlinked" and folder holds well defined. */
	fuse_reply_err(req, EPERM);
}

/* May `n` be removed by an operation that expects a folder (rmdir) or not (unlink)? */
static int check_removable(const struct node *n, bool want_dir)
{
	if (want_dir && !n->is_dir)
		return -ENOTDIR;
	if (!want_dir && n->is_dir)
		return -EISDIR;
	if (n->is_dir && n->life.children > 0)
		return -ENOTEMPTY;
	return 0;
}

static int remove_name(fuse_req_t req, fuse_ino_t parent, const char *name, bool want_dir)
{
	struct pool *p = pool_of(req);
	struct node *dir, *n;
	int r;

	pool_lock(p);
	r = get_dir(p, req, parent, &dir);
	if (r < 0)
		goto out;
	r = get_child(p, req, dir, name, want_dir ? "rmdir" : "unlink", &n);
	if (r < 0)
		goto out;
	r = check_removable(n, want_dir);
	if (r < 0)
		goto out;
	pool_unlink(p, n);
	pool_recheck(p, n);
	pool_recheck(p, dir);
out:
	pool_unlock(p);
	return r;
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, -remove_name(req, parent, name, false));
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, -remove_name(req, parent, name, true));
}

static bool is_ancestor(const struct node *a, const struct node *n)
{
	for (; n; n = n->parent)
		if (n == a)
			return true;
	return false;
}

/* Move `src` to `name` in `dir`, replacing `dst` if not NULL; all or nothing (pool_move). */
static int rename_over(struct pool *p, struct node *src, struct node *dst, struct node *dir,
		       const char *name)
{
	int r = pool_move(p, src, dir, name, dst);

	if (r < 0)
		return r;
	if (dst)
		pool_recheck(p, dst);
	/* It may have left a held folder; its old folder may now be empty. */
	pool_recheck_subtree(p, src);
	return 0;
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct pool *p = pool_of(req);
	struct node *src_dir, *dst_dir, *src, *dst;
	int r;

	if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	r = check_name(newname);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	pool_lock(p);
	r = get_dir(p, req, parent, &src_dir);
	if (r == 0)
		r = get_dir(p, req, newparent, &dst_dir);
	if (r < 0)
		goto out;
	r = get_child(p, req, src_dir, name, "rename", &src);
	if (r < 0)
		goto out;
	r = get_child(p, req, dst_dir, newname, "rename over", &dst);
	if (r == -ENOENT)
		dst = NULL;
	else if (r < 0)
		goto out;
	r = 0;
	if (dst == src)
		goto out; /* same entry: POSIX says do nothing */
	if (src->is_dir && is_ancestor(src, dst_dir)) {
		r = -EINVAL;
		goto out;
	}
	if (flags & RENAME_EXCHANGE) {
		if (!dst) {
			r = -ENOENT;
			goto out;
		}
		if (dst->is_dir && is_ancestor(dst, src_dir)) {
			r = -EINVAL;
			goto out;
		}
		/* Swap the two names. Neither loses a name, so no holds are dropped. */
		r = pool_exchange(p, src, dst);
		if (r == 0) {
			pool_recheck_subtree(p, src);
			pool_recheck_subtree(p, dst);
		}
		goto out;
	}
	if (dst) {
		if (flags & RENAME_NOREPLACE) {
			r = -EEXIST;
			goto out;
		}
		/* Replacing an entry is removing it: the same type rules as unlink/rmdir. */
		r = check_removable(dst, src->is_dir);
		if (r < 0)
			goto out;
	}
	r = rename_over(p, src, dst, dst_dir, newname);
	if (r == 0)
		pool_recheck(p, src_dir);
out:
	pool_unlock(p);
	fuse_reply_err(req, -r);
}

/* ---- attributes ---------------------------------------------------------------------------- */

static void reply_attr(fuse_req_t req, struct pool *p, struct node *n, int r)
{
	struct stat st;

	if (r == 0)
		r = pool_stat(p, n, &st);
	pool_unlock(p);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_attr(req, &st, p->attr_timeout);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pool *p = pool_of(req);
	struct node *n = NULL;
	int r;

	(void)fi;
	/* No owner check: the kernel sends GETATTR only for an inode the caller reached through a
	 * LOOKUP the daemon allowed, or through a handle it holds (an fd passed over a socket must
	 * keep working, as on any filesystem). Names and paths are guarded at LOOKUP. */
	pool_lock(p);
	n = pool_node(p, ino);
	r = n ? 0 : -ESTALE; /* a removed entry still answers, as an unlinked inode does */
	reply_attr(req, p, n, r);
}

/* Grow or shrink a file to `size`, reserving tmpfs space for growth so a full pool fails here
 * with ENOSPC instead of killing a mapper with SIGBUS later. */
static int resize_file(struct pool *p, struct node *n, int fd, uint64_t size)
{
	struct stat st;
	uint64_t old_reserved = n->reserved;
	int r;

	if (size > (uint64_t)INT64_MAX)
		return -EFBIG;
	if (fstat(fd, &st) < 0)
		return -errno;
	r = pool_reserve(p, n, size > (uint64_t)st.st_size ? size : n->reserved);
	if (r < 0)
		return r;
	if (size > (uint64_t)st.st_size) {
		if (fallocate(fd, 0, st.st_size, (off_t)(size - (uint64_t)st.st_size)) < 0) {
			r = -errno;
			if (r != -EOPNOTSUPP)
				goto fail;
		}
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		r = -errno;
		goto fail;
	}
	if (size < (uint64_t)st.st_size || size < n->reserved)
		pool_reserve(p, n, size);
	return 0;
fail:
	if (ftruncate(fd, st.st_size) < 0)
		log_warn("inode %" PRIu64 ": could not undo a failed resize", n->ino);
	pool_reserve(p, n, old_reserved);
	return r;
}

/* What a SETATTR asks, in access.h's terms. The kernel marks "now" with both the time bit and
 * its _NOW bit. */
static unsigned attr_changes(int to_set)
{
	unsigned what = 0;

	if (to_set & FUSE_SET_ATTR_MODE)
		what |= ACCESS_ATTR_MODE;
	if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))
		what |= ACCESS_ATTR_OWNER;
	if (((to_set & FUSE_SET_ATTR_ATIME) && !(to_set & FUSE_SET_ATTR_ATIME_NOW)) ||
	    ((to_set & FUSE_SET_ATTR_MTIME) && !(to_set & FUSE_SET_ATTR_MTIME_NOW)))
		what |= ACCESS_ATTR_TIMES;
	if (to_set & (FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW))
		what |= ACCESS_ATTR_TIMES_NOW;
	if (to_set & FUSE_SET_ATTR_SIZE)
		what |= ACCESS_ATTR_SIZE;
	return what;
}

static int check_setattr(struct pool *p, fuse_req_t req, struct node *n, const struct stat *attr,
			 int to_set, bool via_handle)
{
	unsigned what = attr_changes(to_set);
	uid_t caller = caller_uid(req);
	int r;

	if (n->ino == POOL_ROOT_INO && (what & (ACCESS_ATTR_MODE | ACCESS_ATTR_OWNER)))
		return -EPERM; /* the shared root stays 01777 and the pool owner's */
	r = access_check_setattr(&p->policy, caller, n->uid, what, via_handle);
	if (r < 0) {
		pool_log_denied(p, caller, "change", n);
		return r;
	}
	if ((what & ACCESS_ATTR_SIZE) && n->is_dir)
		return -EISDIR;
	if ((what & ACCESS_ATTR_SIZE) && attr->st_size < 0)
		return -EINVAL;
	r = access_check_chown(n->uid, n->gid, to_set & FUSE_SET_ATTR_UID, attr->st_uid,
			       to_set & FUSE_SET_ATTR_GID, attr->st_gid);
	if (r < 0)
		pool_log_denied(p, caller, "give away", n);
	return r;
}

static int set_size(struct pool *p, struct node *n, off_t size, const struct fuse_file_info *fi)
{
	int fd = fi ? (int)fi->fh : backing_open_file(&p->backing, n->ino, O_RDWR);
	int r;

	if (fd < 0)
		return fd == -ENOENT ? -ESTALE : fd;
	r = resize_file(p, n, fd, (uint64_t)size);
	if (!fi)
		close(fd);
	return r;
}

static int set_times(struct pool *p, struct node *n, const struct stat *attr, int to_set)
{
	struct timespec ts[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_nsec = UTIME_OMIT}}, now;
	char name[20];

	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		ts[0].tv_nsec = UTIME_NOW;
	else if (to_set & FUSE_SET_ATTR_ATIME)
		ts[0] = attr->st_atim;
	if (to_set & FUSE_SET_ATTR_MTIME_NOW)
		ts[1].tv_nsec = UTIME_NOW;
	else if (to_set & FUSE_SET_ATTR_MTIME)
		ts[1] = attr->st_mtim;
	if (!n->is_dir) {
		snprintf(name, sizeof(name), "%016" PRIx64, n->ino);
		if (utimensat(p->backing.dir_fd, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOENT ? -ESTALE : -errno;
		return 0;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	if (ts[0].tv_nsec != UTIME_OMIT)
		n->atime = ts[0].tv_nsec == UTIME_NOW ? now : ts[0];
	if (ts[1].tv_nsec != UTIME_OMIT)
		n->mtime = ts[1].tv_nsec == UTIME_NOW ? now : ts[1];
	return 0;
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	const int times = FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
			  FUSE_SET_ATTR_MTIME_NOW;
	struct pool *p = pool_of(req);
	struct node *n = NULL;
	int r;

	pool_lock(p);
	r = get_node(p, ino, &n);
	if (r == 0)
		r = check_setattr(p, req, n, attr, to_set, fi != NULL);
	if (r == 0 && (to_set & FUSE_SET_ATTR_SIZE))
		r = set_size(p, n, attr->st_size, fi);
	if (r == 0 && (to_set & times))
		r = set_times(p, n, attr, to_set);
	if (r == 0 && (to_set & FUSE_SET_ATTR_MODE))
		n->perm = access_effective_mode(attr->st_mode);
	/* POSIX: every successful attribute change moves ctime, chown to oneself included. */
	if (r == 0 && (to_set & (times | FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID |
				 FUSE_SET_ATTR_SIZE)))
		pool_touch_ctime(n);
	reply_attr(req, p, n, r);
}

static void op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct pool *p = pool_of(req);
	struct node *n;
	int r;

	pool_lock(p);
	r = get_owned(p, req, ino, "access", &n);
	if (r == 0 && mask != F_OK && n->ino != POOL_ROOT_INO)
		r = access_check_mask(n->perm, mask);
	pool_unlock(p);
	fuse_reply_err(req, -r);
}

/* ---- files --------------------------------------------------------------------------------- */

/* Count a new handle on `n` and prepare `fi`; lock held. On success the handle owns `fd`. */
static int open_handle(struct pool *p, struct node *n, fuse_req_t req, int fd,
		       struct fuse_file_info *fi)
{
	int r;

	fi->fh = (uint64_t)fd;
	n->life.opens++;
	pool_note_open(p, n, fuse_req_ctx(req)->pid);
	r = p->dp->open(p, n, req, fd, fi);
	if (r < 0) {
		n->life.opens--;
		return r;
	}
	return 0;
}

/* Undo a handle: the reply could not be delivered, or RELEASE. Lock held. Takes no request:
 * after a failed reply it is freed already. */
static void close_handle(struct pool *p, struct node *n, const struct fuse_file_info *fi)
{
	close((int)fi->fh);
	if (n->life.opens > 0 && --n->life.opens == 0)
		p->dp->last_release(p, n);
	pool_recheck(p, n);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pool *p = pool_of(req);
	struct node *n;
	int r, fd = -1;

	if (fi->flags & O_DIRECT) {
		fuse_reply_err(req, EINVAL); /* as on tmpfs */
		return;
	}
	pool_lock(p);
	r = get_owned(p, req, ino, "open", &n);
	if (r < 0)
		goto fail;
	if (n->is_dir) {
		r = -EISDIR;
		goto fail;
	}
	if ((fi->flags & O_ACCMODE) != O_RDONLY && !(n->perm & 0200)) {
		r = -EACCES;
		goto fail;
	}
	if ((fi->flags & O_ACCMODE) != O_WRONLY && !(n->perm & 0400)) {
		r = -EACCES;
		goto fail;
	}
	/* The daemon's fd is always read-write: on the page-cache path the kernel writes dirty
	 * mmap pages back through whichever handle it picks. */
	fd = backing_open_file(&p->backing, n->ino, O_RDWR);
	if (fd < 0) {
		r = fd == -ENOENT ? -ESTALE : fd;
		goto fail;
	}
	if (fi->flags & O_TRUNC) {
		r = resize_file(p, n, fd, 0);
		if (r < 0)
			goto fail;
	}
	r = open_handle(p, n, req, fd, fi);
	if (r < 0)
		goto fail;
	pool_unlock(p);
	if (reply_open(p, req, fi) < 0) {
		pool_lock(p);
		close_handle(p, n, fi);
		pool_unlock(p);
	}
	return;
fail:
	if (fd >= 0)
		close(fd);
	pool_unlock(p);
	fuse_reply_err(req, -r);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct pool *p = pool_of(req);
	struct node *n = NULL;
	struct fuse_entry_param e;
	struct stat st;
	int r, fd = -1;

	if (fi->flags & O_DIRECT) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	pool_lock(p);
	r = make_entry(p, req, parent, name, false, mode, &n, &fd);
	if (r < 0)
		goto fail;
	r = open_handle(p, n, req, fd, fi);
	if (r < 0)
		goto fail_node;
	r = pool_stat(p, n, &st);
	if (r < 0) {
		close_handle(p, n, fi);
		fd = -1;
		goto fail;
	}
	n->nlookup++;
	fill_entry(p, n, &st, &e);
	pool_unlock(p);
	if (reply_create(p, req, &e, fi) < 0) {
		/* Nodes are freed only in pool_unlock(): n is valid until the forget below. The
		 * kernel still holds the negative entry it looked up: if the file stays (a held
		 * folder keeps it), that entry must go. */
		pool_lock(p);
		pool_forget_name(p, n);
		close_handle(p, n, fi);
		pool_forget(p, n, 1);
		pool_unlock(p);
	}
	return;
fail_node:
	close(fd);
	fd = -1;
	pool_recheck(p, n);
fail:
	if (fd >= 0)
		close(fd);
	pool_unlock(p);
	fuse_reply_err(req, -r);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);

	(void)ino;
	buf.buf[0].flags = (enum fuse_buf_flags)(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
	buf.buf[0].fd = (int)fi->fh;
	buf.buf[0].pos = off;
	fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

static void op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in, off_t off,
			 struct fuse_file_info *fi)
{
	struct pool *p = pool_of(req);
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in));
	uint64_t end = (uint64_t)off + fuse_buf_size(in);
	struct node *n;
	ssize_t res;
	int r = 0;

	/* Growth is checked against the quotas before the data lands. */
	pool_lock(p);
	n = pool_node(p, ino);
	if (n && end > n->reserved)
		r = pool_reserve(p, n, end);
	pool_unlock(p);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	out.buf[0].flags = (enum fuse_buf_flags)(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
	out.buf[0].fd = (int)fi->fh;
	out.buf[0].pos = off;
	res = fuse_buf_copy(&out, in, 0);
	if (res < 0)
		fuse_reply_err(req, (int)-res);
	else
		fuse_reply_write(req, (size_t)res);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	/* tmpfs has nowhere further to write; this only reports errors the fd has seen. */
	fuse_reply_err(req, (datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh)) < 0 ? errno : 0);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pool *p = pool_of(req);
	struct node *n;

	pool_lock(p);
	n = pool_node(p, ino);
	if (n) {
		close_handle(p, n, fi);
	} else {
		close((int)fi->fh);
		log_warn("release of unknown inode %" PRIu64, (uint64_t)ino);
	}
	pool_unlock(p);
	fuse_reply_err(req, 0);
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			 struct fuse_file_info *fi)
{
	struct pool *p = pool_of(req);
	struct node *n;
	uint64_t end = (uint64_t)off + (uint64_t)len, old;
	int r = 0;

	if (off < 0 || len <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	pool_lock(p);
	r = get_node(p, ino, &n);
	old = r == 0 ? n->reserved : 0;
	if (r == 0 && !(mode & (FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE)) && end > n->reserved)
		r = pool_reserve(p, n, end);
	if (r == 0 && fallocate((int)fi->fh, mode, off, len) < 0) {
		r = -errno;
		pool_reserve(p, n, old);
	}
	pool_unlock(p);
	fuse_reply_err(req, -r);
}

/* ---- folders ------------------------------------------------------------------------------- */

struct dir_entry {
	uint64_t ino;
	bool is_dir;
	char *name;
};

struct dir_handle {
	struct handle_link link;   /* first: the pool's list of open folder handles */
	size_t count;
	struct dir_entry *entries;
};

static void dir_handle_link(struct pool *p, struct dir_handle *d)
{
	d->link.next = p->dir_handles.next;
	d->link.prev = &p->dir_handles;
	p->dir_handles.next->prev = &d->link;
	p->dir_handles.next = &d->link;
}

static void dir_handle_unlink(struct dir_handle *d)
{
	d->link.prev->next = d->link.next;
	d->link.next->prev = d->link.prev;
	d->link.prev = d->link.next = &d->link;
}

static void dir_handle_free(struct dir_handle *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->count; i++)
		free(d->entries[i].name);
	free(d->entries);
	free(d);
}

static int dir_entry_add(struct pool *p, struct dir_handle *d, size_t cap, uint64_t ino,
			 bool is_dir, const char *name)
{
	if (d->count >= cap)
		return -EOVERFLOW;
	d->entries[d->count].name = pool_strdup(p, name);
	if (!d->entries[d->count].name)
		return -ENOMEM;
	d->entries[d->count].ino = ino;
	d->entries[d->count].is_dir = is_dir;
	d->count++;
	return 0;
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pool *p = pool_of(req);
	struct dir_handle *d = NULL;
	struct node *n;
	size_t cap;
	int r;

	pool_lock(p);
	r = get_owned(p, req, ino, "list", &n);
	if (r < 0)
		goto fail;
	if (!n->is_dir) {
		r = -ENOTDIR;
		goto fail;
	}
	/* A snapshot taken at opendir: offsets stay stable whatever happens to the folder. */
	cap = (size_t)n->life.children + 2;
	d = pool_alloc(p, sizeof(*d));
	if (!d || !(d->entries = pool_alloc(p, cap * sizeof(*d->entries)))) {
		r = -ENOMEM;
		goto fail;
	}
	r = dir_entry_add(p, d, cap, n->ino, true, ".");
	if (r == 0)
		r = dir_entry_add(p, d, cap, n->parent ? n->parent->ino : n->ino, true, "..");
	for (struct node *c = n->child_first; c && r == 0; c = c->sib_next)
		if (access_may_list(&p->policy, caller_uid(req), c->uid))
			r = dir_entry_add(p, d, cap, c->ino, c->is_dir, c->name);
	if (r < 0)
		goto fail;
	fi->fh = (uint64_t)(uintptr_t)d;
	n->life.opens++;
	dir_handle_link(p, d);
	pool_unlock(p);
	if (reply_open(p, req, fi) < 0) {
		pool_lock(p);
		n->life.opens--;
		dir_handle_unlink(d);
		pool_recheck(p, n);
		pool_unlock(p);
		dir_handle_free(d);
	}
	return;
fail:
	pool_unlock(p);
	dir_handle_free(d);
	fuse_reply_err(req, -r);
}

/* One READDIRPLUS entry into buf: its length (> room if it does not fit), or 0 to skip a name
 * gone since opendir. *given gets the inode whose lookup count the entry carries, 0 if none.
 * Lock held. */
static size_t plus_entry(struct pool *p, fuse_req_t req, const struct dir_entry *de, char *buf,
			 size_t room, off_t next, uint64_t *given)
{
	struct fuse_entry_param e = {0};
	struct node *n = pool_node(p, de->ino);
	bool dot = strcmp(de->name, ".") == 0 || strcmp(de->name, "..") == 0;
	size_t len;

	*given = 0;
	if (dot) {
		e.attr.st_ino = de->ino;
		e.attr.st_mode = S_IFDIR;
	} else {
		struct stat st;
		if (!n || n->life.removed || pool_stat(p, n, &st) < 0)
			return 0;
		fill_entry(p, n, &st, &e);
	}
	len = fuse_add_direntry_plus(req, buf, room, de->name, &e, next);
	if (len <= room && !dot) {
		n->nlookup++; /* the kernel instantiates what READDIRPLUS returns */
		*given = n->ino;
	}
	return len;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, bool plus)
{
	struct pool *p = pool_of(req);
	struct dir_handle *d = (struct dir_handle *)(uintptr_t)fi->fh;
	size_t left = off >= 0 && (size_t)off < d->count ? d->count - (size_t)off : 0;
	char *buf = calloc(1, size);
	uint64_t *given = plus ? calloc(left ? left : 1, sizeof(*given)) : NULL;
	size_t used = 0, ngiven = 0;

	(void)ino;
	if (!buf || (plus && !given)) {
		free(buf);
		free(given);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pool_lock(p);
	for (size_t i = (size_t)off; i < d->count; i++) {
		const struct dir_entry *de = &d->entries[i];
		struct stat st = {.st_ino = de->ino, .st_mode = de->is_dir ? S_IFDIR : S_IFREG};
		size_t len;

		if (plus)
			len = plus_entry(p, req, de, buf + used, size - used, (off_t)i + 1,
					 &given[ngiven]);
		else
			len = fuse_add_direntry(req, buf + used, size - used, de->name, &st,
						(off_t)i + 1);
		if (len > size - used)
			break;
		if (plus && given[ngiven])
			ngiven++;
		used += len;
	}
	pool_unlock(p);
	if ((plus && reply_lost(p, req)) || fuse_reply_buf(req, buf, used) < 0) {
		/* The kernel got none of these entries: take back their lookup counts. */
		for (size_t i = 0; i < ngiven; i++)
			forget_one(p, given[i]);
	}
	free(buf);
	free(given);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pool *p = pool_of(req);
	struct dir_handle *d = (struct dir_handle *)(uintptr_t)fi->fh;
	struct node *n;

	pool_lock(p);
	n = pool_node(p, ino);
	if (n && n->life.opens > 0) {
		n->life.opens--;
		pool_recheck(p, n);
	}
	dir_handle_unlink(d);
	pool_unlock(p);
	dir_handle_free(d);
	fuse_reply_err(req, 0);
}

static void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	(void)datasync;
	(void)fi;
	fuse_reply_err(req, 0);
}

/* Lower the block counts of `sv` to a limit of `limit` bytes of which `used` are used, when
 * that is tighter than what is there. */
static void statfs_limit_blocks(struct statvfs *sv, uint64_t limit, uint64_t used)
{
	fsblkcnt_t blocks = (fsblkcnt_t)(limit / sv->f_frsize);
	fsblkcnt_t taken = (fsblkcnt_t)((used + sv->f_frsize - 1) / sv->f_frsize);
	fsblkcnt_t free_blocks = taken < blocks ? blocks - taken : 0;

	if (blocks < sv->f_blocks)
		sv->f_blocks = blocks;
	if (free_blocks < sv->f_bfree)
		sv->f_bfree = free_blocks;
	if (free_blocks < sv->f_bavail)
		sv->f_bavail = free_blocks;
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct pool *p = pool_of(req);
	struct user_usage u;
	struct statvfs sv;
	int r;

	(void)ino;
	pool_lock(p);
	u = pool_user_usage(p, caller_uid(req));
	r = backing_statvfs(&p->backing, &sv);
	/* df shows the tightest limit the caller meets: the pool's, then its own quota; inodes
	 * are the caller's own entries against max_user_entries. */
	if (r == 0 && sv.f_frsize && p->opts.max_size)
		statfs_limit_blocks(&sv, p->opts.max_size, p->bytes);
	if (r == 0 && sv.f_frsize && p->opts.max_user_size)
		statfs_limit_blocks(&sv, p->opts.max_user_size, u.bytes);
	if (r == 0 && p->opts.max_user_entries) {
		sv.f_files = p->opts.max_user_entries;
		sv.f_ffree = u.entries < sv.f_files ? sv.f_files - u.entries : 0;
		sv.f_favail = sv.f_ffree;
	}
	sv.f_namemax = POOL_NAME_MAX;
	pool_unlock(p);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_statfs(req, &sv);
}

/* ---- extended attributes ------------------------------------------------------------------- */

static bool is_reserved(const char *name)
{
	return strncmp(name, XATTR_RESERVED_PREFIX, strlen(XATTR_RESERVED_PREFIX)) == 0;
}

/* The node a setxattr/removexattr names, if the caller may change it: -EACCES for another
 * user's entry, -EPERM for the shared root (only its owner may hold it or label it, as only
 * the owner of a sticky folder may change it). */
static int get_changeable(struct pool *p, fuse_req_t req, fuse_ino_t ino, const char *what,
			  struct node **out)
{
	int r = get_owned(p, req, ino, what, out);

	if (r == 0 && !pool_may_change(p, caller_uid(req), *out)) {
		pool_log_denied(p, caller_uid(req), what, *out);
		r = -EPERM;
	}
	return r;
}

#ifdef POOLFS_FAULT_INJECTION
#define XATTR_DEBUG_FAULT "user.poolfs.debug.fault"
#define XATTR_DEBUG_CHECK "user.poolfs.debug.check"

/* The faultsim daemon's controls, on the root and for its owner only. 1 if `name` is one,
 * with *r set; 0 otherwise. Lock held. */
static int debug_xattr(struct pool *p, fuse_req_t req, struct node *n, const char *name,
		       const char *value, size_t size, char **out, int *r)
{
	bool set = value != NULL;

	if (strcmp(name, XATTR_DEBUG_FAULT) != 0 && strcmp(name, XATTR_DEBUG_CHECK) != 0)
		return 0;
	if (n->ino != POOL_ROOT_INO || !pool_may_change(p, caller_uid(req), n)) {
		*r = -EPERM;
		return 1;
	}
	if (set || !out) {
		*r = set && strcmp(name, XATTR_DEBUG_FAULT) == 0 ? fault_arm(&p->fault, value, size)
								  : -EPERM;
		return 1;
	}
	*out = malloc(4096);
	if (!*out) {
		*r = -ENOMEM;
		return 1;
	}
	*r = strcmp(name, XATTR_DEBUG_FAULT) == 0 ? fault_report(&p->fault, *out, 4096)
						   : pool_check(p, *out, 4096);
	if (*r == 0 || *r == -EUCLEAN)
		*r = (int)strlen(*out); /* a broken invariant is reported as text, not an error */
	return 1;
}
#endif

/* "reset" written to the root's user.poolfs.ops zeroes the request counters. */
static int ops_reset(struct pool *p, const char *value, size_t size)
{
	if (size > 0 && (value[size - 1] == '\0' || value[size - 1] == '\n'))
		size--;
	if (size != 5 || memcmp(value, "reset", 5) != 0)
		return -EINVAL;
	opstats_reset(&p->opstats);
	return 0;
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			size_t size, int flags)
{
	struct pool *p = pool_of(req);
	bool hold = strcmp(name, XATTR_HOLD) == 0;
	struct node *n;
	int r;

	if (strncmp(name, "user.", 5) != 0) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	pool_lock(p);
	r = get_changeable(p, req, ino, hold ? "hold" : "set xattr on", &n);
	if (r < 0)
		goto out;
#ifdef POOLFS_FAULT_INJECTION
	if (debug_xattr(p, req, n, name, value, size, NULL, &r))
		goto out;
#endif
	if (strcmp(name, XATTR_OPS) == 0) {
		r = n->ino != POOL_ROOT_INO ? -EINVAL : ops_reset(p, value, size);
	} else if (hold) {
		struct hold_request hr;
		r = hold_request_parse(value, size, &hr);
		if (r == 0)
			r = pool_hold(p, n, caller_uid(req), fuse_req_ctx(req)->pid, &hr);
	} else if (strcmp(name, XATTR_REFS) == 0 || strcmp(name, XATTR_STAT) == 0) {
		r = -EPERM;
	} else if (is_reserved(name)) {
		r = -EINVAL;
	} else {
		r = pool_xattr_set(p, n, name, value, size, flags);
	}
out:
	pool_unlock(p);
	fuse_reply_err(req, -r);
}

/* The value of xattr `name` of `n` in a new buffer: its length, or a negative errno. Lock held. */
static int xattr_value(struct pool *p, fuse_req_t req, struct node *n, const char *name,
		       char **out)
{
	const struct xattr *x;
	int r;

#ifdef POOLFS_FAULT_INJECTION
	if (debug_xattr(p, req, n, name, NULL, 0, out, &r))
		return r;
#endif
	if (strcmp(name, XATTR_REFS) == 0)
		return pool_refs_text(p, n, out);
	if (strcmp(name, XATTR_OPS) == 0 && n->ino == POOL_ROOT_INO) {
		if (!pool_may_change(p, caller_uid(req), n))
			return -EACCES; /* what others do is the pool owner's business only */
		*out = pool_alloc(p, 4096);
		if (!*out)
			return -ENOMEM;
		return opstats_format(&p->opstats, *out, 4096);
	}
	if (strcmp(name, XATTR_STAT) == 0) {
		*out = pool_alloc(p, POOL_XATTR_VALUE_MAX);
		if (!*out)
			return -ENOMEM;
		r = pool_stat_text(p, caller_uid(req), *out, POOL_XATTR_VALUE_MAX);
		return r;
	}
	if (is_reserved(name))
		return -ENODATA;
	x = xattr_get(&n->xattrs, name);
	if (!x)
		return -ENODATA;
	*out = pool_alloc(p, x->size ? x->size : 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, x->value, x->size);
	return (int)x->size;
}

/* Reply to getxattr/listxattr with `len` bytes of `data`: the size if the caller asked for it
 * (size 0), ERANGE if its buffer is too small. */
static void reply_xattr_data(fuse_req_t req, int r, const char *data, size_t size)
{
	if (r < 0)
		fuse_reply_err(req, -r);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)r);
	else if ((size_t)r > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, data, (size_t)r);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct pool *p = pool_of(req);
	struct node *n;
	char *data = NULL;
	int r;

	if (strncmp(name, "user.", 5) != 0) {
		/* security.capability is asked on every write by some kernels: answer fast. */
		fuse_reply_err(req, strncmp(name, "security.", 9) == 0 ? ENODATA : EOPNOTSUPP);
		return;
	}
	pool_lock(p);
	r = get_owned(p, req, ino, "read xattr of", &n);
	if (r == 0)
		r = xattr_value(p, req, n, name, &data);
	pool_unlock(p);
	reply_xattr_data(req, r, data, size);
	free(data);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct pool *p = pool_of(req);
	struct node *n;
	char *buf = NULL;
	size_t len = 0;
	int r;

	pool_lock(p);
	r = get_owned(p, req, ino, "list xattrs of", &n);
	if (r == 0) {
		len = xattr_names(&n->xattrs, NULL, 0);
		if (size > 0 && len <= size) {
			buf = pool_alloc(p, len ? len : 1);
			if (buf)
				xattr_names(&n->xattrs, buf, len);
			else
				r = -ENOMEM;
		}
	}
	pool_unlock(p);
	reply_xattr_data(req, r < 0 ? r : (int)len, buf, size);
	free(buf);
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct pool *p = pool_of(req);
	struct node *n;
	int r;

	if (strncmp(name, "user.", 5) != 0) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	pool_lock(p);
	r = get_changeable(p, req, ino, "remove xattr of", &n);
	if (r < 0)
		goto out;
	if (strcmp(name, XATTR_HOLD) == 0)
		r = pool_release_holds(p, n, caller_uid(req));
	else if (strcmp(name, XATTR_REFS) == 0 || strcmp(name, XATTR_STAT) == 0)
		r = -EPERM;
	else if (is_reserved(name))
		r = -EINVAL;
	else
		r = pool_xattr_remove(p, n, name);
out:
	pool_unlock(p);
	fuse_reply_err(req, -r);
}

/* ---- the table --------------------------------------------------------------------------- */

/* Every request handler is wrapped to count it and time it (opstats.h). The pool is taken from
 * the request before the handler runs: after its reply the request is gone. */
#define TIMED(name, id, params, args)                                                         \
	static void timed_##name(fuse_req_t req, params)                                       \
	{                                                                                     \
		struct pool *p_ = pool_of(req);                                               \
		uint64_t t0_ = opstats_now();                                                 \
		op_##name(req, args);                                                         \
		opstats_add(&p_->opstats, OPSTAT_##id, t0_);                                  \
	}
#define P(...) __VA_ARGS__

TIMED(lookup, LOOKUP, P(fuse_ino_t parent, const char *name), P(parent, name))
TIMED(forget, FORGET, P(fuse_ino_t ino, uint64_t nlookup), P(ino, nlookup))
TIMED(forget_multi, FORGET, P(size_t count, struct fuse_forget_data *forgets), P(count, forgets))
TIMED(getattr, GETATTR, P(fuse_ino_t ino, struct fuse_file_info *fi), P(ino, fi))
TIMED(setattr, SETATTR, P(fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi), P(ino, attr, to_set, fi))
TIMED(access, ACCESS, P(fuse_ino_t ino, int mask), P(ino, mask))
TIMED(mknod, MKNOD, P(fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev), P(parent, name, mode, rdev))
TIMED(mkdir, MKDIR, P(fuse_ino_t parent, const char *name, mode_t mode), P(parent, name, mode))
TIMED(symlink, OTHER, P(const char *link, fuse_ino_t parent, const char *name), P(link, parent, name))
TIMED(link, OTHER, P(fuse_ino_t ino, fuse_ino_t newparent, const char *newname), P(ino, newparent, newname))
TIMED(unlink, UNLINK, P(fuse_ino_t parent, const char *name), P(parent, name))
TIMED(rmdir, RMDIR, P(fuse_ino_t parent, const char *name), P(parent, name))
TIMED(rename, RENAME, P(fuse_ino_t parent, const char *name, fuse_ino_t newparent, const char *newname, unsigned int flags), P(parent, name, newparent, newname, flags))
TIMED(create, CREATE, P(fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi), P(parent, name, mode, fi))
TIMED(open, OPEN, P(fuse_ino_t ino, struct fuse_file_info *fi), P(ino, fi))
TIMED(read, READ, P(fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi), P(ino, size, off, fi))
TIMED(write_buf, WRITE, P(fuse_ino_t ino, struct fuse_bufvec *in, off_t off, struct fuse_file_info *fi), P(ino, in, off, fi))
TIMED(fsync, FSYNC, P(fuse_ino_t ino, int datasync, struct fuse_file_info *fi), P(ino, datasync, fi))
TIMED(release, RELEASE, P(fuse_ino_t ino, struct fuse_file_info *fi), P(ino, fi))
TIMED(fallocate, FALLOCATE, P(fuse_ino_t ino, int mode, off_t off, off_t len, struct fuse_file_info *fi), P(ino, mode, off, len, fi))
TIMED(opendir, OPENDIR, P(fuse_ino_t ino, struct fuse_file_info *fi), P(ino, fi))
TIMED(readdir, READDIR, P(fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi), P(ino, size, off, fi))
TIMED(readdirplus, READDIRPLUS, P(fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi), P(ino, size, off, fi))
TIMED(releasedir, RELEASEDIR, P(fuse_ino_t ino, struct fuse_file_info *fi), P(ino, fi))
TIMED(fsyncdir, FSYNCDIR, P(fuse_ino_t ino, int datasync, struct fuse_file_info *fi), P(ino, datasync, fi))
TIMED(statfs, STATFS, P(fuse_ino_t ino), P(ino))
TIMED(setxattr, SETXATTR, P(fuse_ino_t ino, const char *name, const char *value, size_t size, int flags), P(ino, name, value, size, flags))
TIMED(getxattr, GETXATTR, P(fuse_ino_t ino, const char *name, size_t size), P(ino, name, size))
TIMED(listxattr, LISTXATTR, P(fuse_ino_t ino, size_t size), P(ino, size))
TIMED(removexattr, REMOVEXATTR, P(fuse_ino_t ino, const char *name), P(ino, name))
#undef P
#undef TIMED

const struct fuse_lowlevel_ops poolfs_ops = {
	.init = op_init,
	.destroy = op_destroy,
	.lookup = timed_lookup,
	.forget = timed_forget,
	.forget_multi = timed_forget_multi,
	.getattr = timed_getattr,
	.setattr = timed_setattr,
	.access = timed_access,
	.mknod = timed_mknod,
	.mkdir = timed_mkdir,
	.symlink = timed_symlink,
	.link = timed_link,
	.unlink = timed_unlink,
	.rmdir = timed_rmdir,
	.rename = timed_rename,
	.create = timed_create,
	.open = timed_open,
	.read = timed_read,
	.write_buf = timed_write_buf,
	/* No .flush: nothing happens at close() but RELEASE, and libfuse's ENOSYS answer makes
	 * the kernel stop sending FLUSH at all. */
	.fsync = timed_fsync,
	.release = timed_release,
	.fallocate = timed_fallocate,
	.opendir = timed_opendir,
	.readdir = timed_readdir,
	.readdirplus = timed_readdirplus,
	.releasedir = timed_releasedir,
	.fsyncdir = timed_fsyncdir,
	.statfs = timed_statfs,
	.setxattr = timed_setxattr,
	.getxattr = timed_getxattr,
	.listxattr = timed_listxattr,
	.removexattr = timed_removexattr,
};
