/* pool_tree: the node table and the names — the inode and name hash tables, linking and
 * unlinking names in folders, creating entries, rename and exchange (see pool.h). Every function
 * runs with the pool lock held. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "pool.h"
#include "pool_internal.h"

static size_t ino_bucket(const struct pool *p, uint64_t ino)
{
	return (size_t)((ino * 0x9E3779B97F4A7C15ull) >> 17) & (p->ino_buckets - 1);
}

static size_t name_hash(uint64_t parent, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ parent;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ull;
	return (size_t)(h ^ (h >> 29));
}

static int table_grow(struct node ***table, size_t *buckets, bool by_name, size_t count)
{
	size_t nb = *buckets * 2;
	struct node **nt;

	if (count < *buckets)
		return 0;
	nt = calloc(nb, sizeof(struct node *));
	if (!nt)
		return -ENOMEM; /* the old table still works, only slower */
	for (size_t i = 0; i < *buckets; i++) {
		struct node *n = (*table)[i], *next;
		for (; n; n = next) {
			size_t b;
			if (by_name) {
				next = n->name_next;
				b = name_hash(n->parent->ino, n->name) & (nb - 1);
				n->name_next = nt[b];
			} else {
				next = n->ino_next;
				b = (size_t)((n->ino * 0x9E3779B97F4A7C15ull) >> 17) & (nb - 1);
				n->ino_next = nt[b];
			}
			nt[b] = n;
		}
	}
	free(*table);
	*table = nt;
	*buckets = nb;
	return 0;
}

void pool_ino_insert(struct pool *p, struct node *n)
{
	size_t b;

	table_grow(&p->ino_table, &p->ino_buckets, false, p->ino_count);
	b = ino_bucket(p, n->ino);
	n->ino_next = p->ino_table[b];
	p->ino_table[b] = n;
	p->ino_count++;
}

void pool_ino_remove(struct pool *p, struct node *n)
{
	for (struct node **pp = &p->ino_table[ino_bucket(p, n->ino)]; *pp; pp = &(*pp)->ino_next) {
		if (*pp == n) {
			*pp = n->ino_next;
			p->ino_count--;
			return;
		}
	}
}

struct node *pool_node(struct pool *p, uint64_t ino)
{
	for (struct node *n = p->ino_table[ino_bucket(p, ino)]; n; n = n->ino_next)
		if (n->ino == ino)
			return n;
	return NULL;
}

struct node *pool_child(struct pool *p, struct node *dir, const char *name)
{
	size_t b = name_hash(dir->ino, name) & (p->name_buckets - 1);

	for (struct node *n = p->name_table[b]; n; n = n->name_next)
		if (n->parent == dir && strcmp(n->name, name) == 0)
			return n;
	return NULL;
}

void pool_set_now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

/* Give `n` the name `name` (allocated by the caller, now owned by `n`) in `dir`. Cannot fail:
 * everything that can is done before, so renames are all or nothing. */
static void attach_name(struct pool *p, struct node *n, struct node *dir, char *name)
{
	size_t b;

	n->name = name;
	table_grow(&p->name_table, &p->name_buckets, true, p->name_count);
	n->parent = dir;
	b = name_hash(dir->ino, name) & (p->name_buckets - 1);
	n->name_next = p->name_table[b];
	p->name_table[b] = n;
	p->name_count++;
	n->sib_prev = NULL;
	n->sib_next = dir->child_first;
	if (dir->child_first)
		dir->child_first->sib_prev = n;
	dir->child_first = n;
	dir->life.children++;
	dir->subdirs += n->is_dir;
	dir->life.armed = true;
	n->life.linked = true;
	pool_set_now(&dir->mtime);
	dir->ctime = dir->mtime;
}

void pool_detach_name(struct pool *p, struct node *n)
{
	struct node *dir = n->parent;
	size_t b;

	if (!dir)
		return;
	b = name_hash(dir->ino, n->name) & (p->name_buckets - 1);
	for (struct node **pp = &p->name_table[b]; *pp; pp = &(*pp)->name_next) {
		if (*pp == n) {
			*pp = n->name_next;
			p->name_count--;
			break;
		}
	}
	if (n->sib_prev)
		n->sib_prev->sib_next = n->sib_next;
	else
		dir->child_first = n->sib_next;
	if (n->sib_next)
		n->sib_next->sib_prev = n->sib_prev;
	n->sib_next = n->sib_prev = NULL;
	dir->life.children--;
	dir->subdirs -= n->is_dir;
	pool_set_now(&dir->mtime);
	dir->ctime = dir->mtime;
	free(n->name);
	n->name = NULL;
	n->parent = NULL;
	n->name_next = NULL;
	n->life.linked = false;
}

void pool_drop_holds(struct pool *p, struct node *n)
{
	while (n->holds)
		pool_hold_free(p, n, n->holds);
	n->life.holds = 0;
}

void pool_unlink(struct pool *p, struct node *n)
{
	pool_drop_holds(p, n);
	pool_detach_name(p, n);
}

int pool_move(struct pool *p, struct node *n, struct node *dir, const char *name,
	      struct node *replaced)
{
	char *copy = pool_strdup(p, name);

	if (!copy)
		return -ENOMEM;
	if (replaced)
		pool_unlink(p, replaced);
	pool_detach_name(p, n);
	attach_name(p, n, dir, copy);
	pool_touch_ctime(n);
	return 0;
}

int pool_exchange(struct pool *p, struct node *a, struct node *b)
{
	struct node *a_dir = a->parent, *b_dir = b->parent;
	char *a_name = pool_strdup(p, b->name), *b_name = pool_strdup(p, a->name);

	if (!a_name || !b_name) {
		free(a_name);
		free(b_name);
		return -ENOMEM;
	}
	pool_detach_name(p, a);
	pool_detach_name(p, b);
	attach_name(p, a, b_dir, a_name);
	attach_name(p, b, a_dir, b_name);
	pool_touch_ctime(a);
	pool_touch_ctime(b);
	return 0;
}

uint64_t pool_new_ino(struct pool *p)
{
	return atomic_fetch_add(&p->next_ino, 1);
}

static struct node *node_new(struct pool *p, uint64_t ino, bool is_dir, uid_t uid, gid_t gid,
			     mode_t perm)
{
	struct node *n = pool_alloc(p, sizeof(*n));

	if (!n)
		return NULL;
	n->ino = ino;
	n->is_dir = is_dir;
	n->uid = uid;
	n->gid = gid;
	n->perm = perm;
	n->life.is_dir = is_dir;
	pool_set_now(&n->mtime);
	n->atime = n->ctime = n->mtime;
	return n;
}

int pool_create(struct pool *p, struct node *dir, const char *name, bool is_dir, uid_t uid,
		gid_t gid, mode_t mode, uint64_t ino, struct node **out)
{
	struct node *n;
	struct user_usage *u;
	char *copy;

	u = pool_usage_of(p, uid, true);
	if (!u)
		return -ENOMEM;
	if (p->opts.max_user_entries && u->entries >= p->opts.max_user_entries)
		return -EDQUOT;
	n = node_new(p, ino, is_dir, uid, gid, access_effective_mode(mode));
	copy = pool_strdup(p, name);
	if (!n || !copy) {
		free(n);
		free(copy);
		return -ENOMEM;
	}
	attach_name(p, n, dir, copy);
	pool_ino_insert(p, n);
	p->entries++;
	u->entries++;
	*out = n;
	return 0;
}
