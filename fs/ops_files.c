/* ops_files: attributes and file data: getattr, setattr, open, create, read, write, fsync,
 * release, fallocate (see ops_internal.h). */
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

/* ---- attributes ---------------------------------------------------------------------------- */

/* Reply to GETATTR or SETATTR with `n`'s attributes, or `r` if it is an error; lock held, and
 * released. A file in use is statted outside the lock (docs/design.md "What runs outside the
 * lock"); if it went meanwhile, the answer is what the node still knows, as for any removed
 * entry. */
static void reply_attr(fuse_req_t req, struct pool *p, struct node *n, int r)
{
	struct stat st;

	if (r == 0)
		r = pool_stat_fresh(p, &n, &st);
	pool_commit(p);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_attr(req, &st, p->attr_timeout);
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
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

	r = (what & (ACCESS_ATTR_MODE | ACCESS_ATTR_OWNER))
		    ? pool_may_act(p, caller, n, ACCESS_REMODE)
		    : 0;
	if (r == 0)
		r = access_check_setattr(&p->policy, caller, n->uid, what, via_handle);
	if (r < 0) {
		pool_log_denied(p, caller, "change", n);
		return r;
	}
	if ((what & ACCESS_ATTR_SIZE) && node_is_dir(n))
		return -EISDIR;
	if ((what & ACCESS_ATTR_SIZE) && !pool_has_backing(n))
		return -EINVAL; /* a symlink, FIFO or socket has no size to set, as anywhere */
	if ((what & ACCESS_ATTR_SIZE) && attr->st_size < 0)
		return -EINVAL;
	r = access_check_chown(n->uid, n->gid, to_set & FUSE_SET_ATTR_UID, attr->st_uid,
			       to_set & FUSE_SET_ATTR_GID, attr->st_gid);
	if (r < 0)
		pool_log_denied(p, caller, "give away", n);
	return r;
}

/* SETATTR's times as utimensat(2) takes them. */
static void times_asked(const struct stat *attr, int to_set, struct timespec ts[2])
{
	ts[0].tv_nsec = ts[1].tv_nsec = UTIME_OMIT;
	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		ts[0].tv_nsec = UTIME_NOW;
	else if (to_set & FUSE_SET_ATTR_ATIME)
		ts[0] = attr->st_atim;
	if (to_set & FUSE_SET_ATTR_MTIME_NOW)
		ts[1].tv_nsec = UTIME_NOW;
	else if (to_set & FUSE_SET_ATTR_MTIME)
		ts[1] = attr->st_mtim;
}

/* pool_room's proof for a resize the pool refused: files whose last mapping ended while the
 * data path's own thread had not yet come to prove it (it runs late on a loaded machine), so that
 * a file removed and unmapped just before gives its room back as it would on tmpfs
 * (docs/design.md "Last-mapping detection"). The files proven free go, and give their room back,
 * at the commit. Lock held, dropped and taken again if any was. */
static size_t prove_and_commit(struct pool *p)
{
	size_t freed = p->dp->prove_now ? p->dp->prove_now(p) : 0;

	if (freed) {
		pool_commit(p);
		pool_lock(p);
	}
	return freed;
}

/* pool_resize for the request `req`: its caller pays (memcg.h), and a refusal may prove and wait
 * for room (pool_room_wait). Lock held, as for pool_resize; *np is looked up again. */
static int resize_for(struct pool *p, fuse_req_t req, struct node **np, uint64_t end, unsigned how,
		      int fd, const struct pool_fallocate *fa)
{
	struct pool_room room;

	pool_room_begin(&room, prove_and_commit, true);
	return pool_resize(p, np, end, how, fd, fa, fuse_req_ctx(req)->pid, &room);
}

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
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
	/* A truncate's I/O runs outside the lock (pool_resize); n is looked up again after it. The
	 * kernel strips O_TRUNC from OPEN and sends this, under the inode's lock. */
	if (r == 0 && (to_set & FUSE_SET_ATTR_SIZE))
		r = resize_for(p, req, &n, (uint64_t)attr->st_size,
			       POOL_RESIZE_GROWS | POOL_RESIZE_SETS_SIZE, fi ? (int)fi->fh : -1,
			       NULL);
	if (r == 0 && (to_set & times)) {
		struct timespec ts[2];

		times_asked(attr, to_set, ts);
		r = pool_set_times(p, n, ts);
	}
	if (r == 0 && (to_set & FUSE_SET_ATTR_MODE))
		pool_set_perm(n, attr->st_mode);
	/* POSIX: every successful attribute change moves ctime, chown to oneself included. */
	if (r == 0 && (to_set & (times | FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID |
				 FUSE_SET_ATTR_GID | FUSE_SET_ATTR_SIZE)))
		pool_touch_ctime(n);
	reply_attr(req, p, n, r);
}

void op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct pool *p = pool_of(req);
	struct node *n;
	int r;

	pool_lock(p);
	r = get_owned(p, req, ino, "access", &n);
	if (r == 0 && mask != F_OK)
		r = access_check_mask_as(n->perm, node_is_dir(n), caller_uid(req), mask);
	pool_commit(p);
	fuse_reply_err(req, -r);
}

/* ---- files --------------------------------------------------------------------------------- */

/* Count a new handle on `n` and prepare `fi`; lock held. On success the handle owns `fd`;
 * *spare_id as for datapath.h's open. */
static int open_handle(struct pool *p, struct node *n, fuse_req_t req, int fd, int *spare_id,
		       struct fuse_file_info *fi)
{
	int r;

	fi->fh = (uint64_t)fd;
	pool_handle_opened(p, n);
	r = p->dp->open(p, n, req, fd, spare_id, fi);
	if (r < 0) {
		pool_handle_unopened(p, n);
		return r;
	}
	/* After the data path's choice, which may read the idle file's size from the node. */
	pool_backing_changed(n);
	return 0;
}

/* Drop a registration made before the lock that no open took (no lock held). */
static void drop_spare(struct pool *p, int *spare_id)
{
	if (*spare_id > 0 && p->dp->unregister)
		p->dp->unregister(p, *spare_id);
	*spare_id = 0;
}

/* Undo a handle: the reply could not be delivered, or RELEASE. Lock held. Takes no request:
 * after a failed reply it is freed already. */
static void close_handle(struct pool *p, struct node *n, const struct fuse_file_info *fi)
{
	struct dp_release rel = {.pending = false};

	close((int)fi->fh);
	if (pool_handle_closed(p, n) && p->dp->release_begin)
		p->dp->release_begin(p, n, &rel);
	/* Rare (a lost reply): the steps RELEASE spreads over two sections run here in one. */
	if (rel.pending) {
		p->dp->release_io(p, &rel);
		p->dp->release_commit(p, n, &rel);
	}
}

/* OPEN's checks of `n` against the access mode asked, for `caller` (who may touch it). */
static int check_open(const struct node *n, int flags, uid_t caller)
{
	int want = 0;

	if (node_is_dir(n))
		return -EISDIR;
	if (!pool_has_backing(n))
		return -ENXIO; /* the kernel opens FIFOs itself and never sockets or symlinks */
	if ((flags & O_ACCMODE) != O_RDONLY)
		want |= W_OK;
	if ((flags & O_ACCMODE) != O_WRONLY)
		want |= R_OK;
	return access_check_mask_as(n->perm, false, caller, want);
}

void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pool *p = pool_of(req);
	struct node *n;
	int r, fd, spare_id = 0;

	if (fi->flags & O_DIRECT) {
		fuse_reply_err(req, EINVAL); /* as on tmpfs */
		return;
	}
	fault_stall_at(&p->fault, FAULT_OPEN); /* before anything, even the backing file's open */
	/* No O_TRUNC here: without FUSE_CAP_ATOMIC_O_TRUNC (op_init) the kernel strips it and
	 * truncates with a SETATTR after the OPEN, under the inode's lock (op_setattr).
	 * The backing file is opened, and registered where the handle may need it, before the lock
	 * (docs/design.md "What runs outside the lock"): inode numbers are never reused, so the
	 * file is this inode's or none. The daemon's fd is always read-write: on the page-cache
	 * path the kernel writes dirty mmap pages back through whichever handle it picks. */
	/* The caller is the owner but for root with root_exempt: the hint is right nearly always,
	 * and a wrong one costs only a look in the other stores (backing.h). */
	fd = backing_open_file(&p->backing, caller_uid(req), ino, O_RDWR);
	if (fd >= 0 && p->dp->register_early) {
		spare_id = p->dp->register_early(p, req, fd, fi->flags);
		if (spare_id < 0)
			/* tried again under the lock, after the checks, which answer first */
			spare_id = 0;
	}
	pool_lock(p);
	r = get_owned(p, req, ino, "open", &n);
	if (r == 0)
		r = check_open(n, fi->flags, caller_uid(req));
	/* Gone since the kernel cached its way here: it looks the name up again, once. */
	if (r == 0 && pool_gone(p, n))
		r = pool_stale_answer(p, fuse_req_ctx(req)->pid, n->ino);
	if (r == 0 && fd < 0)
		r = fd == -ENOENT ? -ESTALE : fd;
	if (r == 0)
		r = open_handle(p, n, req, fd, &spare_id, fi);
	if (r == 0)
		pool_stale_done(p, fuse_req_ctx(req)->pid);
	pool_commit(p);
	drop_spare(p, &spare_id);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		fuse_reply_err(req, -r);
		return;
	}
	if (reply_open(p, req, fi) < 0) {
		pool_lock(p);
		close_handle(p, n, fi);
		pool_commit(p);
	}
}

void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       struct fuse_file_info *fi)
{
	struct pool *p = pool_of(req);
	struct node *n = NULL;
	struct fuse_entry_param e;
	struct new_file nf;
	struct stat st;
	int r;

	if (fi->flags & O_DIRECT) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* The system calls come first, without the lock: the backing file is made, statted and
	 * registered, and what /proc says about the creator is read; the lock covers the checks
	 * and the bookkeeping (docs/design.md "What runs outside the lock"). */
	r = make_file(p, req, fi, parent, name, mode, &nf, &n);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	r = open_handle(p, n, req, nf.fd, &nf.backing_id, fi);
	if (r < 0)
		goto fail; /* the commit removes it at once unless a hold keeps it */
	pool_stat_with(p, n, &nf.st, &st);
	fill_entry(p, pool_parent(n), n, &st, &e);
	pool_lookup_add(n);
	pool_commit(p);
	drop_spare(p, &nf.backing_id);
	if (reply_create(p, req, &e, fi) < 0) {
		/* Nodes are freed only in pool_commit(): n is valid until the forget below. The
		 * kernel still holds the negative entry it looked up: if the file stays (a held
		 * folder keeps it), that entry must go. */
		pool_lock(p);
		pool_forget_name(p, parent, name);
		close_handle(p, n, fi);
		pool_forget(p, n, 1);
		pool_commit(p);
	}
	return;
fail:
	pool_commit(p);
	new_file_drop(p, &nf, n == NULL);
	fuse_reply_err(req, -r);
}

void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);

	(void)ino;
	buf.buf[0].flags = (enum fuse_buf_flags)(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
	buf.buf[0].fd = (int)fi->fh;
	buf.buf[0].pos = off;
	fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

void op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in, off_t off,
		  struct fuse_file_info *fi)
{
	struct pool *p = pool_of(req);
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in));
	uint64_t end = (uint64_t)off + fuse_buf_size(in);
	struct node *n;
	ssize_t res;
	int r = 0;

	struct pool_room room;
	bool grows = false;

	/* Growth is checked against the quotas before the data lands. No wait for room that
	 * removed files still hold (no FORGETs: the kernel writes a removed file's dirty pages
	 * back while it evicts the inode, before its FORGET, and that write would wait for itself),
	 * no proof (a WRITE's growth is a page at a time): pool_room_wait says no at once. */
	pool_room_begin(&room, NULL, false);
	pool_lock(p);
	n = pool_node(p, ino);
	while (n && end > n->reserved) {
		r = pool_reserve(p, n, end);
		grows = r == 0;
		if (grows || (r != -ENOSPC && r != -EDQUOT) || !pool_room_wait(p, &room, false))
			break;
		n = pool_node(p, ino);
	}
	pool_commit(p);
	/* The pages the copy below allocates would be the daemon's: allocate them first, charged
	 * to the writer's memory cgroup (memcg.h). A write within the file's reserved size lands
	 * on pages a truncate or an earlier write allocated, charged already. */
	if (r == 0 && grows)
		r = pool_charge_growth(p, fuse_req_ctx(req)->pid, (int)fi->fh, (uint64_t)off, end);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	out.buf[0].flags = (enum fuse_buf_flags)(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
	out.buf[0].fd = (int)fi->fh;
	out.buf[0].pos = off;
	const struct fuse_bufvec in_first = *in, out_first = out; /* fuse_buf_copy moves both */
	res = fuse_buf_copy(&out, in, 0);
	/* A store that is full only until a removed file's room comes back (pool_room_wait):
	 * again. A write from one buffer only (FUSE's, without splice) can be copied again. */
	while (res == -ENOSPC && in->count == 1) {
		struct fuse_bufvec in_again = in_first, out_again = out_first;
		bool again;

		pool_lock(p);
		again = pool_room_wait(p, &room, true);
		pool_commit(p);
		if (!again)
			break;
		res = fuse_buf_copy(&out_again, &in_again, 0);
	}
	if (res < 0)
		fuse_reply_err(req, (int)-res);
	else
		fuse_reply_write(req, (size_t)res);
}

void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	/* tmpfs has nowhere further to write; this only reports errors the fd has seen. */
	fuse_reply_err(req,
		       (datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh)) < 0 ? errno : 0);
}

void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pool *p = pool_of(req);
	struct node *n;

	struct dp_release rel = {.pending = false};

	pool_release_enter(p);
	/* The lock covers only the counters: the fd's close and the data path's system calls run
	 * outside it (docs/design.md "Locking and threads"), after the reply nobody waits for. */
	pool_lock(p);
	n = pool_node(p, ino);
	if (n) {
		if (pool_handle_closed(p, n) && p->dp->release_begin)
			p->dp->release_begin(p, n, &rel);
		/* LOOKUPs wait for a probe's answer, not for a mere unregistration. */
		pool_release_probing(n, rel.pending && rel.probe);
	} else {
		log_warn("release of unknown inode %" PRIu64, (uint64_t)ino);
	}
	pool_commit(p);
	fuse_reply_err(req, 0);
	close((int)fi->fh);
	if (rel.pending) {
		p->dp->release_io(p, &rel);
		pool_lock(p);
		n = pool_release_probed(p, rel.ino, rel.probe);
		p->dp->release_commit(p, n, &rel);
		pool_commit(p);
	}
	pool_release_leave(p);
}

void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
		  struct fuse_file_info *fi)
{
	struct pool *p = pool_of(req);
	unsigned how = (mode & (FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE)) ? 0
									     : POOL_RESIZE_GROWS;
	struct node *n;
	int r;

	if (off < 0 || len <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* The allocation runs outside the lock, as a truncate does (pool_resize). */
	pool_lock(p);
	r = get_node(p, ino, &n);
	if (r == 0)
		r = resize_for(p, req, &n, (uint64_t)off + (uint64_t)len, how, (int)fi->fh,
			       &(struct pool_fallocate){.mode = mode, .off = off, .len = len});
	pool_commit(p);
	fuse_reply_err(req, -r);
}
