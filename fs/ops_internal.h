/* ops_internal: what the request handlers share (fs/ops*.c only).
 *
 * The handlers are split by concern: names (ops_entries.c), file attributes and data
 * (ops_files.c), folders (ops_dirs.c), extended attributes (ops_xattrs.c); ops.c holds INIT and
 * the one table. Every handler takes the pool lock for metadata and releases it with
 * pool_commit() before replying; file data moves without the lock. Handlers include pool_api.h,
 * never the pool's internals, and change nodes only through pool functions
 * (scripts/layers.py). After a reply the request is gone: nothing below touches it then. */
#ifndef POOLFS_OPS_INTERNAL_H
#define POOLFS_OPS_INTERNAL_H

#include <fuse_lowlevel.h>
#include <stdbool.h>

#include "pool_api.h"

/* Every error reply of a handler counts its refusals (poolstats.h: ENOSPC, EDQUOT, EACCES,
 * EPERM) on the way out: the macro reaches every fuse_reply_err of the handlers, those written
 * later too, without one being missed. ops_reply_err replies with libfuse's own. */
int ops_reply_err(fuse_req_t req, int err);
#define fuse_reply_err(req, err) ops_reply_err((req), (err))

/* ---- requests (ops_request.c) ---- */

struct pool *pool_of(fuse_req_t req);
uid_t caller_uid(fuse_req_t req);
int get_node(struct pool *p, fuse_ino_t ino, struct node **out);
int get_owned(struct pool *p, fuse_req_t req, fuse_ino_t ino, const char *what, struct node **out);
void fill_entry(struct pool *p, const struct node *dir, struct node *n, const struct stat *st,
		struct fuse_entry_param *e);
int get_dir(struct pool *p, fuse_req_t req, fuse_ino_t ino, struct node **out);
int get_name(struct pool *p, fuse_req_t req, struct node *dir, const char *name, const char *what,
	     struct name **out);
int get_child(struct pool *p, fuse_req_t req, struct node *dir, const char *name, const char *what,
	      struct node **out);
bool reply_lost(struct pool *p, fuse_req_t req);
int reply_entry(struct pool *p, fuse_req_t req, const struct fuse_entry_param *e);
int reply_open(struct pool *p, fuse_req_t req, const struct fuse_file_info *fi);
int reply_create(struct pool *p, fuse_req_t req, const struct fuse_entry_param *e,
		 const struct fuse_file_info *fi);
void forget_one(struct pool *p, uint64_t ino);
void forget_new_entry(struct pool *p, uint64_t ino, uint64_t dir_ino, const char *name);

/* ---- handlers ---- */

/* ops_entries.c: names. A new file's backing file is made before the lock is taken
 * (new_file_make: created, statted and, for a handle of open `flags`, registered for
 * passthrough; with `req` NULL no handle follows, as for mknod); new_file_drop undoes it when no
 * node took it (`unlink_it`) or closes what the node does not own. make_entry is also create's
 * (ops_files.c); `who` comes from autohold_caller(), also called before the lock. */
struct new_file {
	uint64_t ino;
	uid_t uid;	/* its owner, the creator: the store it is in */
	int fd;		/* -1 without a handle */
	int backing_id; /* passthrough registration (register_early), 0 if none */
	struct stat st;
};
int new_file_make(struct pool *p, fuse_req_t req, uid_t uid, int flags, struct new_file *nf);
void new_file_drop(struct pool *p, struct new_file *nf, bool unlink_it);
void autohold_caller(struct pool *p, fuse_req_t req, struct hold_caller *who);
/* A new file `name` in `parent` (mknod, create): its backing file (for the handle `fi` opens,
 * if any) made before the lock, then its entry under the lock. 0 with the lock held and *out
 * set; else -errno, the lock released and the backing file gone. */
int make_file(struct pool *p, fuse_req_t req, const struct fuse_file_info *fi, fuse_ino_t parent,
	      const char *name, mode_t mode, struct new_file *nf, struct node **out);
/* What make_entry makes: a folder (S_IFDIR), a file (S_IFREG, with `nf`), a symlink (S_IFLNK,
 * with `target`), a FIFO or a socket. */
struct new_entry {
	mode_t type;
	mode_t mode;
	const struct new_file *nf;
	const char *target;
};
int make_entry(struct pool *p, fuse_req_t req, const struct hold_caller *who, fuse_ino_t parent,
	       const char *name, const struct new_entry *what, struct node **out);
void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets);
void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev);
void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void op_readlink(fuse_req_t req, fuse_ino_t ino);
void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);
void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
	       const char *newname, unsigned int flags);

/* ops_files.c: attributes and file data. */
void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		struct fuse_file_info *fi);
void op_access(fuse_req_t req, fuse_ino_t ino, int mask);
void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       struct fuse_file_info *fi);
void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);
void op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in, off_t off,
		  struct fuse_file_info *fi);
void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
		  struct fuse_file_info *fi);

/* ops_dirs.c: folders; ops_free_dir_handles() frees those the kernel never released (unmount). */
void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);
void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void op_statfs(fuse_req_t req, fuse_ino_t ino);
void ops_free_dir_handles(struct pool *p);

/* ops_xattrs.c: extended attributes, holds and the pool's own texts. */
void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
		 int flags);
void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

#endif
