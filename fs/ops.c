/* ops: INIT, DESTROY and the one table of request handlers (see ops.h); each handler is
 * counted and timed (opstats.h). */
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
#include "ops_internal.h"
#include "transport.h"

/* ---- init ---------------------------------------------------------------------------------- */

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct pool *p = userdata;

	if (transport_init(p, conn) < 0) {
		fuse_session_exit(p->session);
		return;
	}
	/* Entries never carry setuid/setgid bits or capabilities (access_effective_mode): the
	 * kernel need not clear bits around each write, and with KILLPRIV_V2 it marks the mount
	 * SB_NOSEC. (It still asks getxattr(security.capability) at each new inode's first write,
	 * and at every chown: that is the kernel's.) */
	if (conn->capable & FUSE_CAP_HANDLE_KILLPRIV)
		conn->want |= FUSE_CAP_HANDLE_KILLPRIV;
#ifdef FUSE_CAP_HANDLE_KILLPRIV_V2
	if (conn->capable & FUSE_CAP_HANDLE_KILLPRIV_V2)
		conn->want |= FUSE_CAP_HANDLE_KILLPRIV_V2;
#endif
	conn->want &= ~(unsigned)FUSE_CAP_ATOMIC_O_TRUNC;
#ifdef POOLFS_HAVE_NO_INTERRUPT
	/* No handler waits on anything a signal should cut short, so no INTERRUPT is wanted: the
	 * first one gets ENOSYS and the kernel sends no more. Over io_uring it also matters for
	 * memory: libfuse 3.18 takes INTERRUPTs from /dev/fuse and parks each until a request it
	 * names is seen there, which never happens for requests that came over a ring (a leak
	 * LeakSanitizer found in stress/killstorm). On /dev/fuse it spares two list operations
	 * under libfuse's session lock per request. */
	conn->no_interrupt = 1;
#endif
	/* No splice from /dev/fuse: libfuse wants a pipe of max_write plus a header, more than the
	 * default pipe-max-size (1 MiB), so it would make and drop a pipe for every request (pipe2,
	 * a /proc read, fcntl, three closes) before falling back to read() anyway. */
	conn->want &= ~(unsigned)(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
				  FUSE_CAP_SPLICE_MOVE);
	/* 1 MiB requests (docs/design.md "Page-cache path"). */
	conn->max_write = 1024 * 1024;
	conn->max_readahead = 1024 * 1024;
	if (p->dp != &datapath_pagecache && p->dp->init(p, conn) < 0) {
		if (p->opts.datapath == DATAPATH_PASSTHROUGH) {
			p->init_error =
				"datapath=passthrough is not supported here: the kernel did not "
				"offer FUSE passthrough (it needs Linux >= 6.9)";
			fuse_session_exit(p->session);
			return;
		}
		log_info(
			"datapath=auto: the kernel offers no passthrough, using the page-cache path");
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
	ops_free_dir_handles(p);
	pool_commit(p);
}

/* ---- the table --------------------------------------------------------------------------- */

/* Every request handler is wrapped to count it and time it (opstats.h): counted before it
 * runs, so that its caller, once answered, finds it counted. The pool is taken from the request
 * before the handler runs: after its reply the request is gone. */
#define TIMED(name, id, params, args)                                                              \
	static void timed_##name(fuse_req_t req, params)                                           \
	{                                                                                          \
		struct pool *p_ = pool_of(req);                                                    \
		uint64_t t0_ = opstats_now();                                                      \
		transport_note(p_, req);                                                           \
		opstats_count(&p_->opstats, OPSTAT_##id);                                          \
		op_##name(req, args);                                                              \
		opstats_time(&p_->opstats, OPSTAT_##id, t0_);                                      \
	}
#define P(...) __VA_ARGS__

TIMED(lookup, LOOKUP, P(fuse_ino_t parent, const char *name), P(parent, name))
TIMED(forget, FORGET, P(fuse_ino_t ino, uint64_t nlookup), P(ino, nlookup))
TIMED(forget_multi, FORGET, P(size_t count, struct fuse_forget_data *forgets), P(count, forgets))
TIMED(getattr, GETATTR, P(fuse_ino_t ino, struct fuse_file_info *fi), P(ino, fi))
TIMED(setattr, SETATTR, P(fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi),
      P(ino, attr, to_set, fi))
TIMED(access, ACCESS, P(fuse_ino_t ino, int mask), P(ino, mask))
TIMED(mknod, MKNOD, P(fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev),
      P(parent, name, mode, rdev))
TIMED(mkdir, MKDIR, P(fuse_ino_t parent, const char *name, mode_t mode), P(parent, name, mode))
TIMED(readlink, OTHER, P(fuse_ino_t ino), P(ino))
TIMED(symlink, OTHER, P(const char *link, fuse_ino_t parent, const char *name),
      P(link, parent, name))
TIMED(link, OTHER, P(fuse_ino_t ino, fuse_ino_t newparent, const char *newname),
      P(ino, newparent, newname))
TIMED(unlink, UNLINK, P(fuse_ino_t parent, const char *name), P(parent, name))
TIMED(rmdir, RMDIR, P(fuse_ino_t parent, const char *name), P(parent, name))
TIMED(rename, RENAME,
      P(fuse_ino_t parent, const char *name, fuse_ino_t newparent, const char *newname,
	unsigned int flags),
      P(parent, name, newparent, newname, flags))
TIMED(create, CREATE,
      P(fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi),
      P(parent, name, mode, fi))
TIMED(open, OPEN, P(fuse_ino_t ino, struct fuse_file_info *fi), P(ino, fi))
TIMED(read, READ, P(fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi),
      P(ino, size, off, fi))
TIMED(write_buf, WRITE,
      P(fuse_ino_t ino, struct fuse_bufvec *in, off_t off, struct fuse_file_info *fi),
      P(ino, in, off, fi))
TIMED(fsync, FSYNC, P(fuse_ino_t ino, int datasync, struct fuse_file_info *fi),
      P(ino, datasync, fi))
TIMED(release, RELEASE, P(fuse_ino_t ino, struct fuse_file_info *fi), P(ino, fi))
TIMED(fallocate, FALLOCATE,
      P(fuse_ino_t ino, int mode, off_t off, off_t len, struct fuse_file_info *fi),
      P(ino, mode, off, len, fi))
TIMED(opendir, OPENDIR, P(fuse_ino_t ino, struct fuse_file_info *fi), P(ino, fi))
TIMED(readdir, READDIR, P(fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi),
      P(ino, size, off, fi))
TIMED(readdirplus, READDIRPLUS,
      P(fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi), P(ino, size, off, fi))
TIMED(releasedir, RELEASEDIR, P(fuse_ino_t ino, struct fuse_file_info *fi), P(ino, fi))
TIMED(fsyncdir, FSYNCDIR, P(fuse_ino_t ino, int datasync, struct fuse_file_info *fi),
      P(ino, datasync, fi))
TIMED(statfs, STATFS, P(fuse_ino_t ino), P(ino))
TIMED(setxattr, SETXATTR,
      P(fuse_ino_t ino, const char *name, const char *value, size_t size, int flags),
      P(ino, name, value, size, flags))
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
	.readlink = timed_readlink,
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
