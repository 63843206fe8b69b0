/* pool_attrs: the attributes the kernel is told about a node (pool_stat), and where a file's
 * come from (folders, symlinks, FIFOs and sockets keep theirs in the node): the node's copy while
 * nothing but the daemon can change the backing file, else the backing file itself
 * (docs/design.md "Caching"); and the attributes a SETATTR changes (times, permissions). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "pool_internal.h"

void pool_backing_changed(struct node *n)
{
	n->battr_valid = false;
}

void pool_backing_known(struct node *n, const struct stat *st)
{
	n->battr = *st;
	n->battr_valid = true;
}

int pool_set_times(struct pool *p, struct node *n, const struct timespec ts[2])
{
	struct timespec now;

	if (pool_has_backing(n)) {
		int r;

		pool_backing_changed(n);
		r = backing_utimens(&p->backing, n->uid, n->ino, ts);
		return r == -ENOENT ? -ESTALE : r;
	}
	pool_set_now(&now);
	if (ts[0].tv_nsec != UTIME_OMIT)
		n->atime = ts[0].tv_nsec == UTIME_NOW ? now : ts[0];
	if (ts[1].tv_nsec != UTIME_OMIT)
		n->mtime = ts[1].tv_nsec == UTIME_NOW ? now : ts[1];
	return 0;
}

void pool_set_perm(struct node *n, mode_t mode)
{
	n->perm = access_effective_mode(mode);
}

bool pool_stat_needs_backing(const struct node *n)
{
	return pool_has_backing(n) && !n->life.removed &&
	       !(n->battr_valid && n->life.opens == 0 && !n->life.maybe_mapped);
}

/* The backing file's attributes: from the node while it is idle, else (and to refill) fstatat. */
static int file_backing_attrs(struct pool *p, struct node *n, struct stat *st)
{
	bool idle = n->life.opens == 0 && !n->life.maybe_mapped;
	int r;

	if (idle && n->battr_valid) {
		*st = n->battr;
		return 0;
	}
	r = backing_stat(&p->backing, n->uid, n->ino, st);
	if (r < 0)
		return r == -ENOENT ? -ESTALE : r;
	n->battr = *st;
	n->battr_valid = idle;
	return 0;
}

/* A file's attributes: the backing file's `st` with what only the node knows. */
static void file_attrs(struct pool *p, struct node *n, struct stat *st)
{
	/* On passthrough, writes past the end bypass us: catch up the accounting here. */
	if ((uint64_t)st->st_size > n->reserved)
		pool_account(p, n, (uint64_t)st->st_size);
	st->st_mode = S_IFREG | n->perm;
	st->st_nlink = n->ends.nnames;
	/* chmod, chown and xattrs change only the node: the later of the two ctimes. */
	if (n->ctime.tv_sec > st->st_ctim.tv_sec ||
	    (n->ctime.tv_sec == st->st_ctim.tv_sec && n->ctime.tv_nsec > st->st_ctim.tv_nsec))
		st->st_ctim = n->ctime;
	st->st_ino = n->ino;
	st->st_uid = n->uid;
	st->st_gid = n->gid;
}

void pool_stat_with(struct pool *p, struct node *n, const struct stat *backing, struct stat *st)
{
	*st = *backing;
	file_attrs(p, n, st);
}

int pool_stat(struct pool *p, struct node *n, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	if (pool_has_backing(n) && !n->life.removed) {
		int r = file_backing_attrs(p, n, st);
		if (r < 0)
			return r;
		file_attrs(p, n, st);
		return 0;
	}
	if (n->life.removed) {
		/* Reached only through the kernel's caches (a path walk racing the removal, an fd's
		 * fstat): answer like an unlinked inode, with what the node still knows, so the walk
		 * goes on to a clean ENOENT instead of failing with ESTALE. */
		st->st_mode = n->type | n->perm;
		st->st_nlink = 0;
	} else if (node_is_dir(n)) {
		st->st_mode = S_IFDIR | n->perm;
		st->st_nlink = 2 + n->ends.subdirs;
	} else {
		/* Symlinks, FIFOs and sockets: all they are is in the node. */
		st->st_mode = n->type | n->perm;
		st->st_nlink = n->ends.nnames;
		st->st_size = n->target ? (off_t)strlen(n->target) : 0;
	}
	st->st_blksize = 4096;
	st->st_atim = n->atime;
	st->st_mtim = n->mtime;
	st->st_ctim = n->ctime;
	st->st_ino = n->ino;
	st->st_uid = n->uid;
	st->st_gid = n->gid;
	return 0;
}
