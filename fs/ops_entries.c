/* ops_entries: names and the entries they name: lookup, forget, mkdir, mknod (files, FIFOs,
 * sockets), symlink, readlink, link, unlink, rmdir, rename (see ops_internal.h). */
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
#include "name_rules.h"
#include "ops_internal.h"

/* ---- names --------------------------------------------------------------------------------- */

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct pool *p = pool_of(req);
	struct node *dir, *n;
	struct fuse_entry_param e;
	struct stat st;
	int r;

	r = name_check(NAME_LOOKUP, name);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	pool_lock(p);
	r = get_dir(p, req, parent, &dir);
	if (r < 0)
		goto out;
	r = get_child(p, req, dir, name, "look up", &n);
	/* Its last RELEASE is proving, outside the lock, that no mapping is left: answer after it,
	 * as when it held the lock, so that a close followed by a look at the name sees the
	 * outcome rather than the moment before it. */
	while (r == 0 && pool_wait_release(p, n))
		r = get_child(p, req, dir, name, "look up", &n);
	if (r < 0)
		goto out;
	r = pool_stat(p, n, &st);
	if (r < 0)
		goto out;
	fill_entry(p, dir, n, &st, &e);
	pool_lookup_add(n);
out:
	pool_stale_lookup(p, fuse_req_ctx(req)->pid, r == 0 ? n : NULL);
	pool_commit(p);
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

void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct pool *p = pool_of(req);
	struct node *n;

	fault_delay_at(&p->fault, FAULT_FORGET);
	pool_lock(p);
	n = pool_node(p, ino);
	if (n)
		pool_forget(p, n, nlookup);
	pool_commit(p);
	fuse_reply_none(req);
}

/* Forgets of a batch handled in chunks: the kernel sends thousands at once after an `rm -rf` or a
 * dropped cache, and every other request waits while the lock is held, so between chunks a
 * waiting request has its turn (docs/design.md "Work that grows with the pool"). */
#define FORGETS_PER_CHUNK 64

void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct pool *p = pool_of(req);

	fault_delay_at(&p->fault, FAULT_FORGET);
	pool_lock(p);
	for (size_t i = 0; i < count; i++) {
		struct node *n;

		if (i > 0 && i % FORGETS_PER_CHUNK == 0)
			pool_yield(p);
		n = pool_node(p, forgets[i].ino);
		if (n)
			pool_forget(p, n, forgets[i].nlookup);
	}
	pool_commit(p);
	fuse_reply_none(req);
}

void autohold_caller(struct pool *p, fuse_req_t req, struct hold_caller *who)
{
	pool_autohold_caller(p, fuse_req_ctx(req)->pid, who);
}

int new_file_make(struct pool *p, fuse_req_t req, uid_t uid, int flags, struct new_file *nf)
{
	int r;

	nf->ino = pool_new_ino(p);
	nf->uid = uid;
	nf->backing_id = 0;
	fault_stall(&p->fault);
	nf->fd = backing_create(&p->backing, uid, nf->ino);
	if (nf->fd < 0)
		return nf->fd;
	if (fstat(nf->fd, &nf->st) < 0) {
		r = -errno;
		goto fail;
	}
	if (!req) { /* mknod: no handle */
		close(nf->fd);
		nf->fd = -1;
	} else if (p->dp->register_early) {
		/* If this fails, the open under the lock tries again, after the checks. */
		r = p->dp->register_early(p, req, nf->fd, flags);
		nf->backing_id = r > 0 ? r : 0;
	}
	return 0;
fail:
	new_file_drop(p, nf, true);
	return r;
}

void new_file_drop(struct pool *p, struct new_file *nf, bool unlink_it)
{
	int r;

	if (nf->backing_id > 0 && p->dp->unregister)
		p->dp->unregister(p, nf->backing_id);
	nf->backing_id = 0;
	if (nf->fd >= 0)
		close(nf->fd);
	nf->fd = -1;
	r = unlink_it ? backing_unlink(&p->backing, nf->uid, nf->ino) : 0;
	if (r < 0)
		log_warn("removing the backing file of a refused create: %s", strerror(-r));
}

/* Common part of mkdir, mknod, symlink and create: checks and the new node. A file's backing
 * file `what->nf` then belongs to the node (the fd and the registration stay the caller's, for
 * open_handle). */
int make_entry(struct pool *p, fuse_req_t req, const struct hold_caller *who, fuse_ino_t parent,
	       const char *name, const struct new_entry *what, struct node **out)
{
	struct node *dir;
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	int r = name_check(NAME_CREATE, name);

	if (r < 0)
		return r;
	r = get_dir(p, req, parent, &dir);
	if (r < 0)
		return r;
	if (pool_child(p, dir, name))
		return -EEXIST;
	r = pool_create(p, dir, name, what->type, ctx->uid, ctx->gid, what->mode, what->target,
			what->nf ? what->nf->ino : pool_new_ino(p), out);
	if (r < 0)
		return r;
	if (what->nf)
		pool_backing_known(*out, &what->nf->st);
	pool_autohold(p, *out, caller_uid(req), who);
	pool_stale_done(p, ctx->pid);
	return 0;
}

/* Reply to MKDIR, MKNOD, SYMLINK or LINK with `n` under its name `name` in `dir`, or `r` if it
 * is an error; lock held, and released. */
static void reply_new_name(fuse_req_t req, struct pool *p, struct node *dir, const char *name,
			   struct node *n, int r)
{
	struct fuse_entry_param e = {0};
	struct stat st;
	uint64_t dir_ino = dir ? dir->ino : 0;

	if (r == 0 && !n)
		r = -EIO; /* cannot happen: every success names its entry */
	if (r == 0)
		r = pool_stat(p, n, &st);
	if (r == 0) {
		fill_entry(p, dir, n, &st, &e);
		pool_lookup_add(n);
	}
	/* Nothing keeps a file nobody opened, nor a symlink, FIFO or socket, but a hold: without
	 * one the commit removes it at once (docs/interface.md "Kinds of entry"). */
	pool_commit(p);
	if (r < 0)
		fuse_reply_err(req, -r);
	else if (reply_entry(p, req, &e) < 0)
		forget_new_entry(p, e.ino, dir_ino, name);
}

/* MKDIR, MKNOD and SYMLINK of an entry without a backing file made before the lock. */
static void make_and_reply(fuse_req_t req, fuse_ino_t parent, const char *name,
			   const struct new_entry *what)
{
	struct pool *p = pool_of(req);
	struct node *n = NULL;
	struct hold_caller who;
	int r;

	autohold_caller(p, req, &who);
	pool_lock(p);
	r = make_entry(p, req, &who, parent, name, what, &n);
	reply_new_name(req, p, n ? pool_parent(n) : NULL, name, n, r);
}

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	make_and_reply(req, parent, name, &(struct new_entry){.type = S_IFDIR, .mode = mode});
}

int make_file(struct pool *p, fuse_req_t req, const struct fuse_file_info *fi, fuse_ino_t parent,
	      const char *name, mode_t mode, struct new_file *nf, struct node **out)
{
	struct hold_caller who;
	int r = new_file_make(p, fi ? req : NULL, caller_uid(req), fi ? fi->flags : 0, nf);

	if (r < 0)
		return r;
	autohold_caller(p, req, &who);
	pool_lock(p);
	r = make_entry(p, req, &who, parent, name,
		       &(struct new_entry){.type = S_IFREG, .mode = mode, .nf = nf}, out);
	if (r < 0) {
		pool_commit(p);
		new_file_drop(p, nf, true);
	}
	return r;
}

/* MKNOD of a regular file: its backing file is made before the lock, as for CREATE. */
static void mknod_file(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct pool *p = pool_of(req);
	struct node *n = NULL;
	struct new_file nf;
	int r = make_file(p, req, NULL, parent, name, mode, &nf, &n);

	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_new_name(req, p, pool_parent(n), name, n, r);
}

void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	(void)rdev;
	switch (mode & S_IFMT) {
	case S_IFREG:
		mknod_file(req, parent, name, mode);
		return;
	case S_IFIFO:
	case S_IFSOCK:
		/* Their data stays in the kernel: the daemon keeps only the entry. */
		make_and_reply(req, parent, name,
			       &(struct new_entry){.type = mode & S_IFMT, .mode = mode});
		return;
	default:
		/* Device nodes would open whatever device their number names: never in a pool
		 * (which is nodev anyway). */
		fuse_reply_err(req, EPERM);
	}
}

void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	size_t len = strlen(link);

	if (len == 0 || len > POOL_TARGET_MAX) {
		fuse_reply_err(req, len ? ENAMETOOLONG : ENOENT);
		return;
	}
	/* Its mode is lrwxrwxrwx cut to the owner's bits, as every entry's (access.h). */
	make_and_reply(req, parent, name,
		       &(struct new_entry){.type = S_IFLNK, .mode = 0777, .target = link});
}

void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct pool *p = pool_of(req);
	struct node *n;
	char *target = NULL;
	int r;

	pool_lock(p);
	r = get_owned(p, req, ino, "read link", &n);
	if (r == 0 && !S_ISLNK(n->type))
		r = -EINVAL;
	if (r == 0 && !(target = fault_strdup(n->target)))
		r = -ENOMEM;
	pool_commit(p);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_readlink(req, target);
	free(target);
}

/* May the caller give `ino` the name `name` in `newparent`? The entry must be the caller's, not
 * a folder, still named; the name free and in a folder of the entry's owner (or the shared
 * root), as a name made any other way would be. Lock held. */
static int check_link(struct pool *p, fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		      const char *name, struct node **np, struct node **dirp)
{
	int r = get_node(p, ino, np);

	if (r < 0)
		return r == -ESTALE ? -ENOENT : r;
	if (!access_is_owner(&p->policy, caller_uid(req), (*np)->uid)) {
		/* POSIX (and protected_hardlinks): linking what is not yours is EPERM. */
		pool_log_denied(p, caller_uid(req), "link", *np);
		return -EPERM;
	}
	if (node_is_dir((*np)))
		return -EPERM;
	if (!(*np)->life.linked)
		return -ENOENT; /* an open, unlinked file cannot be named again */
	r = get_dir(p, req, newparent, dirp);
	if (r < 0)
		return r;
	if (pool_child(p, *dirp, name))
		return -EEXIST;
	if (!access_may_name_in((*np)->uid, (*dirp)->uid, *dirp == p->root))
		return -EPERM;
	return 0;
}

void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct pool *p = pool_of(req);
	struct node *n = NULL, *dir = NULL;
	int r = name_check(NAME_LINK, newname);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	pool_lock(p);
	r = check_link(p, req, ino, newparent, newname, &n, &dir);
	if (r == 0)
		r = pool_link(p, n, dir, newname);
	reply_new_name(req, p, dir, newname, n, r);
}

/* May `n` be removed by an operation that expects a folder (rmdir) or not (unlink)? */
static int check_removable(const struct node *n, bool want_dir)
{
	if (want_dir && !node_is_dir(n))
		return -ENOTDIR;
	if (!want_dir && node_is_dir(n))
		return -EISDIR;
	if (node_is_dir(n) && n->life.children > 0)
		return -ENOTEMPTY;
	return 0;
}

static int remove_name(fuse_req_t req, fuse_ino_t parent, const char *name, bool want_dir)
{
	struct pool *p = pool_of(req);
	struct node *dir, *n;
	struct name *nm;
	int r;

	pool_lock(p);
	r = get_dir(p, req, parent, &dir);
	if (r < 0)
		goto out;
	r = get_name(p, req, dir, name, want_dir ? "rmdir" : "unlink", &nm);
	if (r < 0)
		goto out;
	n = pool_name_entry(nm);
	r = check_removable(n, want_dir);
	if (r < 0)
		goto out;
	pool_unlink(p, nm);
out:
	pool_commit(p);
	return r;
}

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, -remove_name(req, parent, name, false));
}

void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, -remove_name(req, parent, name, true));
}

static bool is_ancestor(const struct node *a, const struct node *n)
{
	for (; n; n = pool_parent(n))
		if (n == a)
			return true;
	return false;
}

void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
	       const char *newname, unsigned int flags)
{
	struct pool *p = pool_of(req);
	struct node *src_dir = NULL, *dst_dir = NULL, *src = NULL, *dst = NULL;
	struct name *src_nm = NULL, *dst_nm = NULL;
	int r;

	r = flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE)
		    ? -EINVAL
		    : name_check(NAME_RENAME, newname);
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
	r = get_name(p, req, src_dir, name, "rename", &src_nm);
	if (r < 0)
		goto out;
	src = pool_name_entry(src_nm);
	r = get_name(p, req, dst_dir, newname, "rename over", &dst_nm);
	if (r == -ENOENT)
		dst_nm = NULL;
	else if (r < 0)
		goto out;
	dst = dst_nm ? pool_name_entry(dst_nm) : NULL;
	r = 0;
	if (dst == src)
		goto out; /* the same name, or two names of one entry: POSIX says do nothing */
	if (node_is_dir(src) && is_ancestor(src, dst_dir)) {
		r = -EINVAL;
		goto out;
	}
	if (flags & RENAME_EXCHANGE) {
		if (!dst) {
			r = -ENOENT;
			goto out;
		}
		if (node_is_dir(dst) && is_ancestor(dst, src_dir)) {
			r = -EINVAL;
			goto out;
		}
		/* Swap the two names. Neither loses a name, so no holds are dropped. */
		r = pool_exchange(p, src_nm, dst_nm);
		goto out;
	}
	if (dst) {
		if (flags & RENAME_NOREPLACE) {
			r = -EEXIST;
			goto out;
		}
		/* Replacing an entry is removing it: the same type rules as unlink/rmdir. */
		r = check_removable(dst, node_is_dir(src));
		if (r < 0)
			goto out;
	}
	/* All or nothing; the commit decides what the move ended (docs/design.md "Lifetime"). */
	r = pool_move(p, src_nm, dst_dir, newname, dst_nm);
out:
	pool_commit(p);
	fuse_reply_err(req, -r);
}
