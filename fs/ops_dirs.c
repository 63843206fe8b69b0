/* ops_dirs: folders: opendir snapshots, readdir(plus), releasedir, statfs (see
 * ops_internal.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "datapath.h"
#include "log.h"
#include "ops_internal.h"

/* ---- folders ------------------------------------------------------------------------------- */

struct dir_entry {
	uint64_t ino;
	mode_t type; /* S_IFMT bits, for d_type */
	char *name;
};

/* A snapshot's names are copied into blocks of text, not malloc'd one by one: right after a big
 * removal, the first malloc of a size that was rarely freed sorts every chunk freed since (glibc
 * does it then), which took 10-14 ms under the lock at 10^6 entries (docs/design.md "Work that
 * grows with the pool"). The first block comes with the handle, allocated before the lock; the
 * others, for big folders, are mapped (mmap) for the handle alone. */
#define TEXT_FIRST 4096
#define TEXT_BLOCK ((size_t)64 << 10)

struct text_block {
	struct text_block *next;
	size_t size, used; /* of text[] */
	char text[];
};

struct dir_handle {
	struct handle_link link; /* first: the pool's list of open folder handles */
	size_t count, cap;
	struct dir_entry *entries;
	struct text_block *texts, *fill; /* every block, first the handle's own; the one filled */
};

/* A handle with its first text block: 0 or -ENOMEM. Before the lock, as it is a malloc. */
static int dir_handle_new(struct pool *p, struct dir_handle **out)
{
	struct dir_handle *d = pool_alloc(p, sizeof(*d) + sizeof(struct text_block) + TEXT_FIRST);

	if (!d)
		return -ENOMEM;
	d->texts = d->fill = (struct text_block *)(d + 1);
	d->texts->size = TEXT_FIRST;
	*out = d;
	return 0;
}

static void dir_entries_clear(struct dir_handle *d)
{
	for (struct text_block *b = d->texts; b; b = b->next)
		b->used = 0;
	d->fill = d->texts;
	d->count = 0;
}

static void dir_handle_free(struct dir_handle *d)
{
	struct text_block *b, *next;

	if (!d)
		return;
	for (b = d->texts->next; b; b = next) {
		next = b->next;
		munmap(b, sizeof(*b) + b->size);
	}
	free(d->entries);
	free(d);
}

/* A copy of `name` in d's text blocks (the next one, or a new one after the last), or NULL. */
static char *dir_text(struct dir_handle *d, const char *name)
{
	size_t len = strlen(name) + 1;
	struct text_block *b = d->fill;
	char *copy;

	while (b->size - b->used < len && b->next)
		b = b->next;
	if (b->size - b->used < len) {
		size_t size = len > TEXT_BLOCK ? len : TEXT_BLOCK;
		struct text_block *nb = mmap(NULL, sizeof(*nb) + size, PROT_READ | PROT_WRITE,
					     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (nb == MAP_FAILED)
			return NULL;
		nb->next = NULL;
		nb->size = size;
		nb->used = 0;
		b->next = nb;
		b = nb;
	}
	d->fill = b;
	copy = b->text + b->used;
	memcpy(copy, name, len);
	b->used += len;
	return copy;
}

static int dir_entry_add(struct dir_handle *d, uint64_t ino, mode_t type, const char *name)
{
	if (d->count >= d->cap)
		return -EOVERFLOW;
	d->entries[d->count].name = dir_text(d, name);
	if (!d->entries[d->count].name)
		return -ENOMEM;
	d->entries[d->count].ino = ino;
	d->entries[d->count].type = type;
	d->count++;
	return 0;
}

/* Names copied per lock section of a snapshot while another request waits for the lock, and
 * how many times a snapshot starts over before it takes the rest in one section. */
#define SNAPSHOT_CHUNK 256
#define SNAPSHOT_RETRIES 3

/* Room in d for the entries of a folder of `children` names. 0 or -ENOMEM. */
static int dir_room(struct pool *p, struct dir_handle *d, size_t children)
{
	size_t cap = children + 2;
	struct dir_entry *grown;

	if (cap <= d->cap)
		return 0;
	grown = pool_alloc(p, cap * sizeof(*d->entries));
	if (!grown)
		return -ENOMEM;
	free(d->entries);
	d->entries = grown;
	d->cap = cap;
	return 0;
}

/* Room in d for folder *np's entries, made with the lock let go: a big allocation may first sort
 * every small chunk freed since the last one (glibc consolidates them), milliseconds after an
 * `rm -rf` of a big folder, and it zeroes its pages, each a fault on first touch (docs/design.md
 * "Work that grows with the pool"). Lock held, and again on return; *np is the folder found
 * again. 0 or -errno. */
static int dir_make_room(struct pool *p, fuse_ino_t ino, struct node **np, struct dir_handle *d)
{
	while ((*np)->ends.nchildren + 2 > d->cap) {
		size_t children = (*np)->ends.nchildren;
		int r;

		pool_unlock(p);
		r = dir_room(p, d, children + children / 8);
		pool_lock(p);
		*np = pool_node(p, ino);
		if (r < 0)
			return r;
		if (!*np)
			return -ENOENT;
	}
	return 0;
}

/* Folder *np's entries the caller may list, into d (after "." and ".."), lock held. The copy
 * grows with the folder, so while other requests wait for the lock it lets go every
 * SNAPSHOT_CHUNK names (docs/design.md "Work that grows with the pool"): its place stays good
 * only if no name came or went in the folder meanwhile (its gen and count), else the copy starts
 * over with the folder found again by inode, at most SNAPSHOT_RETRIES times. 0 or -errno; *np is
 * the folder as last found. */
static int dir_snapshot(struct pool *p, uid_t caller, fuse_ino_t ino, struct node **np,
			struct dir_handle *d)
{
	for (int tries = 0;; tries++) {
		int r = dir_make_room(p, ino, np, d);
		struct node *n = *np;
		uint16_t gen;
		uint32_t count;
		size_t copied = 0;
		bool moved = false;

		if (r < 0)
			return r;
		gen = n->ends.gen;
		count = n->ends.nchildren;

		dir_entries_clear(d);
		r = dir_entry_add(d, n->ino, S_IFDIR, ".");
		if (r == 0)
			r = dir_entry_add(d, pool_parent(n) ? pool_parent(n)->ino : n->ino, S_IFDIR,
					  "..");
		for (struct name *c = n->ends.children; c && r == 0; c = c->sib_next) {
			const struct node *e = pool_name_entry(c);

			if (++copied % SNAPSHOT_CHUNK == 0 && tries < SNAPSHOT_RETRIES &&
			    pool_lock_wanted(p)) {
				pool_yield(p);
				n = *np = pool_node(p, ino);
				if (!n || n->ends.gen != gen || n->ends.nchildren != count) {
					moved = true;
					break;
				}
			}
			if (access_may_list(&p->policy, caller, e->uid))
				r = dir_entry_add(d, e->ino, e->type, c->text);
		}
		if (!moved || r < 0)
			return r;
		if (!n)
			return -ENOENT;
	}
}

void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pool *p = pool_of(req);
	struct dir_handle *d = NULL;
	struct node *n;
	/* A snapshot taken at opendir: offsets stay stable whatever happens to the folder. */
	int r = dir_handle_new(p, &d);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	pool_lock(p);
	r = get_owned(p, req, ino, "list", &n);
	if (r < 0)
		goto fail;
	if (!node_is_dir(n)) {
		r = -ENOTDIR;
		goto fail;
	}
	r = dir_snapshot(p, caller_uid(req), ino, &n, d);
	if (r < 0)
		goto fail;
	fi->fh = (uint64_t)(uintptr_t)d;
	pool_dir_opened(p, n, &d->link);
	pool_commit(p);
	if (reply_open(p, req, fi) < 0) {
		pool_lock(p);
		pool_dir_closed(p, n, &d->link);
		pool_commit(p);
		dir_handle_free(d);
	}
	return;
fail:
	pool_commit(p);
	dir_handle_free(d);
	fuse_reply_err(req, -r);
}

/* One READDIRPLUS entry into buf: its length (> room if it does not fit), or 0 to skip a name
 * gone since opendir. *given gets the inode whose lookup count the entry carries, 0 if none.
 * Lock held.
 *
 * The kernel caches each entry as a name, so an entry goes out only under a name it has now
 * (docs/design.md "Name invalidation"): the snapshot's entry may have lost that name since
 * opendir, its removal already told to the kernel, and sent under it again it would come back
 * as a name the pool no longer has, which keeps the entry, and its data, until the kernel lets
 * go of it. A name that names a newer entry now goes out with that one. */
static size_t plus_entry(struct pool *p, fuse_req_t req, struct node *dir,
			 const struct dir_entry *de, char *buf, size_t room, off_t next,
			 uint64_t *given)
{
	struct fuse_entry_param e = {0};
	bool dot = strcmp(de->name, ".") == 0 || strcmp(de->name, "..") == 0;
	struct node *n = NULL;
	size_t len;

	*given = 0;
	if (dot) {
		e.attr.st_ino = de->ino;
		e.attr.st_mode = S_IFDIR;
	} else {
		struct stat st;

		/* Gone since opendir (the name, or its folder): skipped. */
		n = dir ? pool_child(p, dir, de->name) : NULL;
		if (!n || !access_may_list(&p->policy, caller_uid(req), n->uid) ||
		    pool_stat(p, n, &st) < 0)
			return 0;
		fill_entry(p, dir, n, &st, &e);
	}
	len = fuse_add_direntry_plus(req, buf, room, de->name, &e, next);
	if (len <= room && !dot) {
		/* the kernel instantiates what READDIRPLUS returns */
		pool_lookup_add(n);
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
	char *buf = fault_calloc(1, size);
	uint64_t *given = plus ? fault_calloc(left ? left : 1, sizeof(*given)) : NULL;
	size_t used = 0, ngiven = 0;
	struct node *dir;

	if (!buf || (plus && !given)) {
		free(buf);
		free(given);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pool_lock(p);
	dir = pool_node(p, ino);
	for (size_t i = (size_t)off; i < d->count; i++) {
		const struct dir_entry *de = &d->entries[i];
		struct stat st = {.st_ino = de->ino, .st_mode = de->type};
		size_t len;

		if (plus)
			len = plus_entry(p, req, dir, de, buf + used, size - used, (off_t)i + 1,
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
	pool_commit(p);
	if ((plus && reply_lost(p, req)) || fuse_reply_buf(req, buf, used) < 0) {
		/* The kernel got none of these entries: take back their lookup counts. */
		for (size_t i = 0; i < ngiven; i++)
			forget_one(p, given[i]);
	}
	free(buf);
	free(given);
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}

void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pool *p = pool_of(req);
	struct dir_handle *d = (struct dir_handle *)(uintptr_t)fi->fh;

	pool_lock(p);
	pool_dir_closed(p, pool_node(p, ino), &d->link);
	pool_commit(p);
	dir_handle_free(d);
	fuse_reply_err(req, 0);
}

void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
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

void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct pool *p = pool_of(req);
	struct user_usage u;
	struct statvfs sv;
	int r;

	(void)ino;
	pool_lock(p);
	u = pool_user_usage(p, caller_uid(req));
	r = backing_statvfs(&p->backing, caller_uid(req), &sv);
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
	pool_commit(p);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_statfs(req, &sv);
}

void ops_free_dir_handles(struct pool *p)
{
	struct handle_link *l = p->dir_handles.next;

	/* Take the whole list off the pool, then free it link by link. */
	p->dir_handles.next = p->dir_handles.prev = &p->dir_handles;
	while (l != &p->dir_handles) {
		struct handle_link *next = l->next;
		dir_handle_free((struct dir_handle *)l); /* the link is its first member */
		l = next;
	}
}
