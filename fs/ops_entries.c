/* ops_entries: names: lookup, forget, mkdir, mknod, unlink, rmdir, rename; links and symlinks
 * refused (see ops_internal.h). */
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
#include "ops_internal.h"

/* ---- names --------------------------------------------------------------------------------- */

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct pool *p = pool_of(req);
	struct node *dir, *n;
	struct fuse_entry_param e;
	struct stat st;
	bool again;
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
	/* Its last RELEASE is proving, outside the lock, that no mapping is left: answer after it,
	 * as when it held the lock, or this lookup would hold the removal for an OPEN
	 * (pool_note_lookup) that a poll for the name to vanish never sends. */
	while (r == 0 && n->releasing) {
		pthread_cond_wait(&p->release_done, &p->lock);
		r = get_child(p, req, dir, name, "look up", &n);
	}
	again = r == 0 && pool_drop_stale_lookup(p, n, fuse_req_ctx(req)->pid);
	if (again)
		r = get_child(p, req, dir, name, "look up", &n);
	if (r < 0)
		goto out;
	r = pool_stat(p, n, &st);
	if (r < 0)
		goto out;
	fill_entry(p, n, &st, &e);
	pool_lookup_add(n, e.entry_timeout > 0);
	pool_note_lookup(p, n, fuse_req_ctx(req)->pid, !again);
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

void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
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

void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
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

static const enum hold_kind autohold_kinds[] = {
	[AUTOHOLD_PROCESS] = HOLD_PID,
	[AUTOHOLD_SESSION] = HOLD_SESSION,
	[AUTOHOLD_CGROUP] = HOLD_CGROUP,
};

void autohold_caller(struct pool *p, fuse_req_t req, struct hold_caller *who)
{
	enum hold_kind kind = p->opts.autohold == AUTOHOLD_NONE ? HOLD_PIN
								: autohold_kinds[p->opts.autohold];

	pool_hold_caller(p, kind, fuse_req_ctx(req)->pid, who);
}

/* The hold every creator gets (mount option autohold). Never fails the create: a hold that
 * cannot be had is logged, and the entry is created with the strict lifetime rule. */
static void autohold(struct pool *p, struct node *n, fuse_req_t req, const struct hold_caller *who)
{
	struct hold_request hr = {.pid = 0};
	int r;

	if (p->opts.autohold == AUTOHOLD_NONE)
		return;
	hr.kind = autohold_kinds[p->opts.autohold];
	r = pool_hold(p, n, caller_uid(req), who, &hr);
	if (r < 0 && hr.kind != HOLD_PID) {
		hr.kind = HOLD_PID; /* e.g. a process in the root cgroup: its process is next best */
		r = pool_hold(p, n, caller_uid(req), who, &hr);
	}
	if (r < 0)
		log_warn("autohold for inode %" PRIu64 ": %s", n->ino, strerror(-r));
}

int new_file_make(struct pool *p, fuse_req_t req, int flags, struct new_file *nf)
{
	int r;

	nf->ino = pool_new_ino(p);
	nf->backing_id = 0;
	fault_stall(&p->fault);
	nf->fd = backing_create(&p->backing, nf->ino);
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
	r = unlink_it ? backing_unlink(&p->backing, nf->ino) : 0;
	if (r < 0)
		log_warn("removing the backing file of a refused create: %s", strerror(-r));
}

/* Common part of mkdir, mknod and create: checks and the new node, a folder if `nf` is NULL,
 * else a file with the backing file `nf` (which the node then owns; the fd and the
 * registration stay the caller's, for open_handle). */
int make_entry(struct pool *p, fuse_req_t req, const struct hold_caller *who, fuse_ino_t parent,
	       const char *name, const struct new_file *nf, mode_t mode, struct node **out)
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
	r = pool_create(p, dir, name, !nf, ctx->uid, ctx->gid, mode, nf ? nf->ino : pool_new_ino(p),
			out);
	if (r < 0)
		return r;
	if (nf) {
		/* Nothing but the daemon has touched the new file: its attributes hold while idle. */
		(*out)->battr = nf->st;
		(*out)->battr_valid = true;
	}
	autohold(p, *out, req, who);
	return 0;
}

static void reply_new_entry(fuse_req_t req, struct pool *p, struct node *n, int r)
{
	struct fuse_entry_param e = {0};
	struct stat st;

	if (r == 0)
		r = pool_stat(p, n, &st);
	if (r == 0) {
		fill_entry(p, n, &st, &e);
		pool_lookup_add(n, e.entry_timeout > 0);
	}
	if (r == 0 && !n->is_dir)
		pool_recheck(p, n); /* mknod: a file nobody opened or holds goes at once */
	pool_unlock(p);
	if (r < 0)
		fuse_reply_err(req, -r);
	else if (reply_entry(p, req, &e) < 0)
		forget_new_entry(p, e.ino);
}

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct pool *p = pool_of(req);
	struct node *n = NULL;
	struct hold_caller who;
	int r;

	autohold_caller(p, req, &who);
	pool_lock(p);
	r = make_entry(p, req, &who, parent, name, NULL, mode, &n);
	reply_new_entry(req, p, n, r);
}

void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	struct pool *p = pool_of(req);
	struct node *n = NULL;
	struct hold_caller who;
	struct new_file nf;
	int r;

	(void)rdev;
	if (!S_ISREG(mode)) {
		/* FIFOs, sockets and devices have no data to share and no place in a pool. */
		fuse_reply_err(req, EPERM);
		return;
	}
	r = new_file_make(p, NULL, 0, &nf);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	autohold_caller(p, req, &who);
	pool_lock(p);
	r = make_entry(p, req, &who, parent, name, &nf, mode, &n);
	if (r < 0) {
		pool_unlock(p);
		new_file_drop(p, &nf, true);
		fuse_reply_err(req, -r);
		return;
	}
	reply_new_entry(req, p, n, r);
}

void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	(void)link;
	(void)parent;
	(void)name;
	/* A symlink is never opened, so it would be unused from birth; and it could point one user
	 * at another's paths. Refused. */
	fuse_reply_err(req, EPERM);
}

void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
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

void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct pool *p = pool_of(req);
	struct node *src_dir = NULL, *dst_dir = NULL, *src = NULL, *dst = NULL;
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
