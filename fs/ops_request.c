/* ops_request: what every handler does with a request: find the nodes it names, check the
 * caller, and reply (see ops_internal.h). */
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

int ops_reply_err(fuse_req_t req, int err)
{
	poolstats_reply(&pool_of(req)->stats, err);
	return (fuse_reply_err)(req, err); /* the parentheses: libfuse's, not the macro */
}

struct pool *pool_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

uid_t caller_uid(fuse_req_t req)
{
	return fuse_req_ctx(req)->uid;
}

/* A node the request names, or an errno: unknown or removed inodes are stale. */
int get_node(struct pool *p, fuse_ino_t ino, struct node **out)
{
	struct node *n = pool_node(p, ino);

	if (!n || n->life.removed)
		return -ESTALE;
	*out = n;
	return 0;
}

/* get_node + the owner-only rule. */
int get_owned(struct pool *p, fuse_req_t req, fuse_ino_t ino, const char *what, struct node **out)
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

/* How long the kernel may keep a name without asking (docs/design.md, "Caching"). With
 * default_permissions the kernel checks every access below a user's own 0700 folder itself,
 * so folder names there are cached for long. Names directly in the shared root of a multi-user
 * pool are revalidated on every access: the LOOKUP is where the daemon refuses other users.
 * File names are cached like folder names: when an entry goes, the pool tells the kernel so
 * (pool_lifetime.c remove_names), and an OPEN that still comes through a name cached before finds
 * the nameless entry until the kernel forgets it; a file that is unused, on its way out, is not
 * cached at all (pool_name_cached_now). */
static double entry_timeout(const struct pool *p, const struct node *dir, const struct node *n)
{
	return pool_name_cached_now(p, dir, n) ? p->entry_timeout : 0.0;
}

void fill_entry(struct pool *p, const struct node *dir, struct node *n, const struct stat *st,
		struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = n->ino;
	e->generation = 1; /* inode numbers are never reused */
	e->attr = *st;
	/* Attributes may be cached everywhere: a revalidating LOOKUP refreshes them, and only the
	 * daemon changes them (passthrough writes invalidate them in the kernel themselves). */
	e->attr_timeout = p->attr_timeout;
	e->entry_timeout = entry_timeout(p, dir, n);
}

/* A folder where `req`'s caller may look up or create entries. */
int get_dir(struct pool *p, fuse_req_t req, fuse_ino_t ino, struct node **out)
{
	int r = get_owned(p, req, ino, "use folder", out);

	if (r < 0)
		return r == -ESTALE ? -ENOENT : r;
	if (!node_is_dir((*out)))
		return -ENOTDIR;
	/* A removed folder the kernel has not forgotten yet (a cached name, a working folder):
	 * nothing is made or found in it any more, as in a removed folder on tmpfs. Not ESTALE:
	 * the kernel retries that only for some calls (open does, mkdir's final lookup does not),
	 * and ENOENT is what the folder's removal means anyway. */
	if (!(*out)->life.linked && *out != p->root)
		return -ENOENT;
	return 0;
}

/* The name `name` in `dir`, if the caller may touch its entry: 0, -ENOENT or -EACCES. */
int get_name(struct pool *p, fuse_req_t req, struct node *dir, const char *name, const char *what,
	     struct name **out)
{
	struct name *nm = pool_name_in(p, dir, name);
	struct node *n;

	if (!nm)
		return -ENOENT;
	n = pool_name_entry(nm);
	if (!pool_may(p, caller_uid(req), n)) {
		pool_log_denied(p, caller_uid(req), what, n);
		return -EACCES;
	}
	*out = nm;
	return 0;
}

/* The entry `name` in `dir`, if the caller may touch it: 0, -ENOENT or -EACCES. */
int get_child(struct pool *p, fuse_req_t req, struct node *dir, const char *name, const char *what,
	      struct node **out)
{
	struct name *nm;
	int r = get_name(p, req, dir, name, what, &nm);

	if (r == 0)
		*out = pool_name_entry(nm);
	return r;
}

/* Replies that hand the kernel a new entry or handle. A real one fails when the caller was
 * killed before it arrived; the faultsim daemon (fault.h) makes them fail on purpose: the
 * request then ends with EIO, so nobody hangs, and the handler undoes what the reply would
 * have given, exactly as after a real failure. The request is gone either way. */
bool reply_lost(struct pool *p, fuse_req_t req)
{
	if (!fault_fire(&p->fault, FAULT_REPLY))
		return false;
	fuse_reply_err(req, EIO);
	return true;
}

int reply_entry(struct pool *p, fuse_req_t req, const struct fuse_entry_param *e)
{
	return reply_lost(p, req) ? -ENOENT : fuse_reply_entry(req, e);
}

int reply_open(struct pool *p, fuse_req_t req, const struct fuse_file_info *fi)
{
	return reply_lost(p, req) ? -ENOENT : fuse_reply_open(req, fi);
}

int reply_create(struct pool *p, fuse_req_t req, const struct fuse_entry_param *e,
		 const struct fuse_file_info *fi)
{
	return reply_lost(p, req) ? -ENOENT : fuse_reply_create(req, e, fi);
}

/* The kernel never got the entry a failed reply carried: take back its lookup count. */
void forget_one(struct pool *p, uint64_t ino)
{
	struct node *n;

	pool_lock(p);
	n = pool_node(p, ino);
	if (n)
		pool_forget(p, n, 1);
	pool_commit(p);
}

/* A reply creating a name (mkdir, mknod, symlink, link) was lost: the kernel keeps its negative
 * entry for `name` in `dir_ino`, so invalidate it, and take back the lookup count. */
void forget_new_entry(struct pool *p, uint64_t ino, uint64_t dir_ino, const char *name)
{
	struct node *n;

	pool_lock(p);
	n = pool_node(p, ino);
	if (n) {
		pool_forget_name(p, dir_ino, name);
		pool_forget(p, n, 1);
	}
	pool_commit(p);
}
