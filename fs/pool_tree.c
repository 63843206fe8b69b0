/* pool_tree: the entry table (nodes by inode number) and the pool's use of the name table
 * (name_table.h): creating entries, adding, removing, moving and swapping names, with what each
 * changes besides the names themselves (a folder's child count, times), and the nodes' memory.
 * No accounting and no lifetime: pool_names.c charges for names, pool_lifetime.c removes them.
 * Calls only pool_core.c and name_table.c (docs/design.md "Layout"). Every function runs with
 * the pool lock held. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "pool_internal.h"

/* Inode numbers are sequential: spread them over the buckets. */
static size_t ino_hash(uint64_t ino)
{
	return (size_t)((ino * 0x9E3779B97F4A7C15ull) >> 17);
}

void pool_ino_insert(struct pool *p, struct node *n)
{
	hash_insert(&p->inos, &n->ino_link, ino_hash(n->ino));
}

void pool_ino_remove(struct pool *p, struct node *n)
{
	hash_remove(&p->inos, &n->ino_link);
}

struct node *pool_node(struct pool *p, uint64_t ino)
{
	size_t hash = ino_hash(ino);
	struct hash_walk w;

	for (struct hash_link *l = hash_first(&p->inos, hash, &w); l; l = hash_next(&w, l)) {
		struct node *n = POOL_NODE_OF_LINK(l);

		if (l->hash == hash && n->ino == ino)
			return n;
	}
	return NULL;
}

struct node *pool_name_entry(const struct name *nm)
{
	return POOL_NODE_OF_ENDS(nm->entry);
}

struct node *pool_name_dir(const struct name *nm)
{
	return nm->dir ? POOL_NODE_OF_ENDS(nm->dir) : NULL;
}

struct node *pool_parent(const struct node *n)
{
	return n->ends.names ? pool_name_dir(n->ends.names) : NULL;
}

bool pool_has_backing(const struct node *n)
{
	return S_ISREG(n->type);
}

struct name *pool_name_in(struct pool *p, struct node *dir, const char *text)
{
	return names_find(&p->names, &dir->ends, text);
}

struct node *pool_child(struct pool *p, struct node *dir, const char *name)
{
	struct name *nm = pool_name_in(p, dir, name);

	return nm ? pool_name_entry(nm) : NULL;
}

void pool_mark(struct pool *p, struct node *n)
{
	if (n->marked)
		return;
	n->marked = POOL_MARK_NODE;
	n->mark_next = p->marked;
	p->marked = n;
}

void pool_mark_subtree(struct pool *p, struct node *n)
{
	pool_mark(p, n);
	n->marked = POOL_MARK_SUBTREE;
}

/* A name was added to or taken from `dir`: its counts and times follow. */
static void dir_changed(struct node *dir)
{
	dir->life.children = dir->ends.nchildren;
	pool_set_now(&dir->mtime);
	dir->ctime = dir->mtime;
}

/* Put `nm` in `dir`, naming `n`. Cannot fail: everything that can is done before, so renames
 * are all or nothing. */
static void attach_name(struct pool *p, struct name *nm, struct node *dir, struct node *n)
{
	names_attach(&p->names, nm, &dir->ends, &n->ends);
	dir->life.armed = true;
	dir_changed(dir);
	n->life.linked = true;
	/* A new entry nothing uses goes unless a hold keeps it (docs/interface.md "Kinds of
	 * entry"); a name moved in may have left a held folder. */
	pool_mark_subtree(p, n);
}

void pool_detach_name(struct pool *p, struct name *nm)
{
	struct node *dir = pool_name_dir(nm), *n = pool_name_entry(nm);

	if (!dir)
		return;
	names_detach(&p->names, nm);
	dir_changed(dir);
	n->life.linked = n->ends.nnames > 0;
	pool_mark(p, n);
	pool_mark(p, dir); /* it may be empty now */
}

void pool_touch_ctime(struct node *n)
{
	pool_set_now(&n->ctime);
}

void pool_name_remove(struct pool *p, struct name *nm)
{
	struct node *n = pool_name_entry(nm);

	if (!nm->dir)
		return;
	pool_detach_name(p, nm);
	pool_touch_ctime(n);
}

int pool_name_add(struct pool *p, struct node *n, struct node *dir, const char *name)
{
	struct name *nm = name_new(name, pool_alloc_cb, p);

	if (!nm)
		return -ENOMEM;
	attach_name(p, nm, dir, n);
	pool_touch_ctime(n);
	return 0;
}

int pool_name_move(struct pool *p, struct name *nm, struct node *dir, const char *name,
		   struct name *replaced)
{
	struct node *n = pool_name_entry(nm);
	struct name *moved = name_new(name, pool_alloc_cb, p);

	if (!moved)
		return -ENOMEM;
	if (replaced)
		pool_name_remove(p, replaced);
	pool_detach_name(p, nm);
	attach_name(p, moved, dir, n);
	pool_touch_ctime(n);
	return 0;
}

int pool_exchange(struct pool *p, struct name *a, struct name *b)
{
	struct node *a_dir = pool_name_dir(a), *b_dir = pool_name_dir(b);
	struct node *a_entry = pool_name_entry(a), *b_entry = pool_name_entry(b);
	struct name *a_new = name_new(b->text, pool_alloc_cb, p);
	struct name *b_new = name_new(a->text, pool_alloc_cb, p);

	if (!a_new || !b_new) {
		free(a_new);
		free(b_new);
		return -ENOMEM;
	}
	pool_detach_name(p, a);
	pool_detach_name(p, b);
	attach_name(p, a_new, b_dir, a_entry);
	attach_name(p, b_new, a_dir, b_entry);
	pool_touch_ctime(a_entry);
	pool_touch_ctime(b_entry);
	return 0;
}

uint64_t pool_new_ino(struct pool *p)
{
	return atomic_fetch_add(&p->next_ino, 1);
}

static struct node *node_new(struct pool *p, uint64_t ino, mode_t type, uid_t uid, gid_t gid,
			     mode_t perm)
{
	struct node *n = pool_alloc(p, sizeof(*n));

	if (!n)
		return NULL;
	n->ino = ino;
	n->type = type;
	n->ends.is_dir = node_is_dir(n);
	n->uid = uid;
	n->gid = gid;
	n->perm = perm;
	n->life.is_dir = node_is_dir(n);
	pool_set_now(&n->mtime);
	n->atime = n->ctime = n->mtime;
	return n;
}

int pool_entry_new(struct pool *p, struct node *dir, const char *name, mode_t type, uid_t uid,
		   gid_t gid, mode_t mode, const char *target, uint64_t ino, struct node **out)
{
	struct node *n = node_new(p, ino, type, uid, gid, access_effective_mode(mode));
	struct name *nm = name_new(name, pool_alloc_cb, p);

	if (n && target)
		n->target = pool_strdup(p, target);
	if (!n || !nm || (target && !n->target)) {
		if (n)
			free(n->target);
		free(n);
		free(nm);
		return -ENOMEM;
	}
	attach_name(p, nm, dir, n);
	pool_ino_insert(p, n);
	*out = n;
	return 0;
}

void pool_node_free(struct node *n)
{
	xattr_clear(&n->xattrs);
	while (n->holds) {
		struct hold *h = n->holds;
		hold_unlink(&n->holds, h);
		free(h);
	}
	free(n->target);
	free(n);
}
