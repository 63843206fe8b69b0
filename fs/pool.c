/* pool: the node table and the application of lifetime decisions (see pool.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "pool.h"
#include "watch.h"

static void queue_inval(struct pool *p, uint64_t parent, const char *name);

static void *xattr_alloc(void *ctx, size_t size)
{
	return pool_alloc(ctx, size);
}

uint64_t pool_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void *pool_alloc(struct pool *p, size_t size)
{
	if (fault_fire(&p->fault, FAULT_ALLOC))
		return NULL;
	return calloc(1, size);
}

char *pool_strdup(struct pool *p, const char *s)
{
	size_t len = strlen(s) + 1;
	char *copy = pool_alloc(p, len);

	if (copy)
		memcpy(copy, s, len);
	return copy;
}

/* ---- hash tables ---------------------------------------------------------------------------- */

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

static void ino_insert(struct pool *p, struct node *n)
{
	size_t b;

	table_grow(&p->ino_table, &p->ino_buckets, false, p->ino_count);
	b = ino_bucket(p, n->ino);
	n->ino_next = p->ino_table[b];
	p->ino_table[b] = n;
	p->ino_count++;
}

static void ino_remove(struct pool *p, struct node *n)
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

/* ---- usage ---------------------------------------------------------------------------------- */

static struct user_usage *user_usage(struct pool *p, uid_t uid, bool create)
{
	struct user_usage *u;

	for (u = p->users; u; u = u->next)
		if (u->uid == uid)
			return u;
	if (!create)
		return NULL;
	u = pool_alloc(p, sizeof(*u));
	if (!u)
		return NULL;
	u->uid = uid;
	u->next = p->users;
	p->users = u;
	return u;
}

/* Count `n` as `new_size` bytes, no questions asked. */
static int account(struct pool *p, struct node *n, uint64_t new_size)
{
	struct user_usage *u = user_usage(p, n->uid, true);

	if (!u)
		return -ENOMEM;
	p->bytes = p->bytes - n->reserved + new_size;
	u->bytes = u->bytes - n->reserved + new_size;
	n->reserved = new_size;
	return 0;
}

int pool_reserve(struct pool *p, struct node *n, uint64_t new_size)
{
	struct user_usage *u = user_usage(p, n->uid, true);

	if (!u)
		return -ENOMEM;
	/* The quotas cover all a user makes the pool hold: data and metadata (xattrs, holds). */
	if (new_size > n->reserved) {
		uint64_t grow = new_size - n->reserved;
		if (p->opts.max_size && p->bytes + p->meta + grow > p->opts.max_size)
			return -ENOSPC;
		if (p->opts.max_user_size && u->bytes + u->meta + grow > p->opts.max_user_size)
			return -EDQUOT;
	}
	return account(p, n, new_size);
}

/* Charge (delta > 0) or refund daemon memory to `uid`: it counts against max_user_meta and,
 * with the user's data, against max_user_size (-EDQUOT) and max_size (-ENOSPC). */
static int meta_charge(struct pool *p, uid_t uid, int64_t delta)
{
	struct user_usage *u = user_usage(p, uid, delta > 0);

	if (!u)
		return delta > 0 ? -ENOMEM : 0;
	if (delta > 0) {
		uint64_t add = (uint64_t)delta;
		if (p->opts.max_user_meta && u->meta + add > p->opts.max_user_meta)
			return -EDQUOT;
		if (p->opts.max_user_size && u->bytes + u->meta + add > p->opts.max_user_size)
			return -EDQUOT;
		if (p->opts.max_size && p->bytes + p->meta + add > p->opts.max_size)
			return -ENOSPC;
		u->meta += add;
		p->meta += add;
		return 0;
	}
	/* Refunds never fail; clamp so a bookkeeping slip cannot wrap to a huge charge. */
	u->meta = (uint64_t)-delta > u->meta ? 0 : u->meta - (uint64_t)-delta;
	p->meta = (uint64_t)-delta > p->meta ? 0 : p->meta - (uint64_t)-delta;
	return 0;
}

int pool_hold_charge(struct pool *p, uid_t uid)
{
	return meta_charge(p, uid, (int64_t)sizeof(struct hold));
}

void pool_hold_refund(struct pool *p, uid_t uid)
{
	meta_charge(p, uid, -(int64_t)sizeof(struct hold));
}

void pool_hold_free(struct pool *p, struct node *n, struct hold *h)
{
	hold_unlink(&n->holds, h);
	if (n->life.holds > 0)
		n->life.holds--;
	pool_hold_refund(p, h->uid);
	free(h);
}

struct user_usage pool_user_usage(struct pool *p, uid_t uid)
{
	struct user_usage *u = user_usage(p, uid, false), none = {.uid = uid};

	return u ? *u : none;
}

void pool_refresh_usage(struct pool *p)
{
	/* Passthrough writes grow files without the daemon seeing them: before reporting usage,
	 * read the real sizes. Only files can hold bytes; removed ones hold none. */
	for (size_t b = 0; b < p->ino_buckets; b++) {
		for (struct node *n = p->ino_table[b]; n; n = n->ino_next) {
			struct stat st;
			if (n->is_dir || n->life.removed)
				continue;
			if (backing_stat(&p->backing, n->ino, &st) == 0 &&
			    (uint64_t)st.st_size != n->reserved)
				account(p, n, (uint64_t)st.st_size);
		}
	}
}

/* ---- tree ----------------------------------------------------------------------------------- */

static void set_now(struct timespec *ts)
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
	dir->life.armed = true;
	n->life.linked = true;
	set_now(&dir->mtime);
	dir->ctime = dir->mtime;
}

static void detach_name(struct pool *p, struct node *n)
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
	set_now(&dir->mtime);
	dir->ctime = dir->mtime;
	free(n->name);
	n->name = NULL;
	n->parent = NULL;
	n->name_next = NULL;
	n->life.linked = false;
}

static void drop_all_holds(struct pool *p, struct node *n)
{
	while (n->holds)
		pool_hold_free(p, n, n->holds);
	n->life.holds = 0;
}

void pool_unlink(struct pool *p, struct node *n)
{
	drop_all_holds(p, n);
	detach_name(p, n);
}

int pool_move(struct pool *p, struct node *n, struct node *dir, const char *name,
	      struct node *replaced)
{
	char *copy = pool_strdup(p, name);

	if (!copy)
		return -ENOMEM;
	if (replaced)
		pool_unlink(p, replaced);
	detach_name(p, n);
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
	detach_name(p, a);
	detach_name(p, b);
	attach_name(p, a, b_dir, a_name);
	attach_name(p, b, a_dir, b_name);
	pool_touch_ctime(a);
	pool_touch_ctime(b);
	return 0;
}

/* Free `n`'s xattrs and refund them to its owner. */
static void free_xattrs(struct pool *p, struct node *n)
{
	meta_charge(p, n->uid, -xattr_total_cost(&n->xattrs));
	xattr_clear(&n->xattrs);
}

int pool_xattr_set(struct pool *p, struct node *n, const char *name, const void *value,
		   size_t size, int flags)
{
	int64_t cost = xattr_set_cost(&n->xattrs, name, size), done = 0;
	int r;

	/* Charge first: a value the budget cannot pay for is refused before we hold it. */
	if (cost > 0) {
		r = meta_charge(p, n->uid, cost);
		if (r < 0)
			return r;
	}
	r = xattr_set(&n->xattrs, name, value, size, flags, ((size_t)POOLFS_XATTR_BYTES_MAX),
		      xattr_alloc, p, &done);
	/* Settle the difference between what was charged and what the change cost. */
	meta_charge(p, n->uid, done - (cost > 0 ? cost : 0));
	if (r == 0)
		pool_touch_ctime(n);
	return r;
}

int pool_xattr_remove(struct pool *p, struct node *n, const char *name)
{
	int64_t freed = 0;
	int r = xattr_remove(&n->xattrs, name, &freed);

	if (r == 0) {
		meta_charge(p, n->uid, -freed);
		pool_touch_ctime(n);
	}
	return r;
}

void pool_forget_name(struct pool *p, const struct node *n)
{
	if (n->life.linked)
		queue_inval(p, n->parent->ino, n->name);
}

static void queue_inval(struct pool *p, uint64_t parent, const char *name)
{
	size_t len = strlen(name);
	struct pending_inval *pi = pool_alloc(p, sizeof(*pi) + len + 1);

	if (!pi) {
		/* Without the invalidation the kernel keeps a dead name until its timeout; opens
		 * then get ESTALE and retry a fresh lookup, so this is slower, not wrong. */
		log_warn("out of memory queueing an invalidation");
		return;
	}
	pi->next = NULL;
	pi->parent = parent;
	pi->namelen = len;
	memcpy(pi->name, name, len + 1);
	*p->inval_tail = pi;
	p->inval_tail = &pi->next;
}

/* The data of `n` is gone for good: unlink its backing file, forget its accounting. */
static void destroy(struct pool *p, struct node *n)
{
	struct user_usage *u;

	if (!n->is_dir) {
		int r = backing_unlink(&p->backing, n->ino);
		if (r < 0 && r != -ENOENT)
			log_warn("removing backing file of inode %" PRIu64 ": %s", n->ino, strerror(-r));
		pool_reserve(p, n, 0);
	}
	u = user_usage(p, n->uid, false);
	if (u && u->entries)
		u->entries--;
	if (p->entries)
		p->entries--;
	if (n->linger_due_ms) {
		n->linger_due_ms = 0;
		p->lingering--;
	}
	/* Normally an unlinked entry has no holds left (unlink drops them); drop any anyway,
	 * here under the lock, so no source keeps a pointer to a node about to be freed. */
	drop_all_holds(p, n);
	free_xattrs(p, n);
	n->life.removed = true;
	if (lifetime_can_free(&n->life, n->nlookup)) {
		ino_remove(p, n);
		n->zombie_next = p->zombies;
		p->zombies = n;
	}
}

bool pool_held_above(const struct pool *p, const struct node *n)
{
	for (const struct node *a = n->parent; a; a = a->parent) {
		if (a->life.holds == 0)
			continue;
		for (const struct hold *h = a->holds; h; h = h->node_next)
			if (access_hold_keeps(&p->policy, h->uid, n->uid))
				return true;
	}
	return false;
}

/* Arm the linger timer for `due` (or earlier). 0 or -errno: without a timer the removal would
 * never come, so the caller then removes at once. */
static int linger_arm(struct pool *p, uint64_t due)
{
	struct itimerspec its = {0};
	uint64_t now = pool_now_ms();
	uint64_t in = due > now ? due - now : 1;

	if (p->linger_timer_fd < 0)
		return -EBADF;
	/* One timer for all: re-armed to the nearest due time each time a removal lingers; the
	 * expiry handler re-arms for whatever is still pending. */
	its.it_value.tv_sec = (time_t)(in / 1000);
	its.it_value.tv_nsec = (long)(in % 1000) * 1000000;
	struct itimerspec cur;
	if (timerfd_gettime(p->linger_timer_fd, &cur) == 0 &&
	    (cur.it_value.tv_sec || cur.it_value.tv_nsec)) {
		uint64_t cur_ms = (uint64_t)cur.it_value.tv_sec * 1000 + (uint64_t)cur.it_value.tv_nsec / 1000000;
		if (cur_ms <= in)
			return 0;
	}
	if (timerfd_settime(p->linger_timer_fd, 0, &its, NULL) < 0) {
		int r = -errno;
		log_error("cannot arm the linger timer: %s; removing at once", strerror(-r));
		return r;
	}
	return 0;
}

/* Apply the verdict to one node. Returns the parent that lost a child, if any. */
static struct node *apply(struct pool *p, struct node *n)
{
	enum lifetime_verdict v = lifetime_decide(&n->life, pool_held_above(p, n));
	struct node *parent;

	if (v == LIFETIME_KEEP) {
		if (n->linger_due_ms && lifetime_in_use(&n->life, pool_held_above(p, n))) {
			n->linger_due_ms = 0;
			p->lingering--;
		}
		return NULL;
	}
	if (v == LIFETIME_REMOVE) {
		uint64_t now = pool_now_ms();
		uint64_t due = n->linger_due_ms;

		if (!due && p->opts.linger_ms)
			due = now + p->opts.linger_ms;
		/* Someone looked the name up while it was in use and has not opened it yet: give
		 * that OPEN a moment, or their open(O_CREAT) would fail with ESTALE twice over
		 * under churn (the kernel retries only once). */
		for (size_t i = 0; i < sizeof(n->pending_open) / sizeof(n->pending_open[0]); i++) {
			uint64_t until = n->pending_open[i].ms + POOL_OPEN_GRACE_MS;
			if (n->pending_open[i].tid && until > now && until > due)
				due = until;
		}
		if (due > now && (due == n->linger_due_ms || linger_arm(p, due) == 0)) {
			if (!n->linger_due_ms)
				p->lingering++;
			n->linger_due_ms = due;
			return NULL;
		}
		if (n->linger_due_ms) {
			n->linger_due_ms = 0;
			p->lingering--;
		}
	}
	parent = n->parent;
	if (v == LIFETIME_REMOVE) {
		queue_inval(p, parent->ino, n->name);
		detach_name(p, n);
	}
	destroy(p, n);
	return parent;
}

void pool_recheck(struct pool *p, struct node *n)
{
	while (n)
		n = apply(p, n);
}

void pool_recheck_subtree(struct pool *p, struct node *n)
{
	/* Children first, so that a folder sees its final child count. Removing a child only
	 * detaches it from this list, so fetch the next sibling before applying. */
	if (n->is_dir) {
		struct node *c = n->child_first, *next;
		for (; c; c = next) {
			next = c->sib_next;
			pool_recheck_subtree(p, c);
		}
	}
	pool_recheck(p, n);
}

void pool_linger_expire(struct pool *p)
{
	uint64_t now = pool_now_ms(), next_due = 0;

	/* Linger is rare and short: a scan of the table is simpler than a second index. */
	for (size_t b = 0; b < p->ino_buckets && p->lingering; b++) {
		struct node *n = p->ino_table[b], *next;
		for (; n; n = next) {
			next = n->ino_next;
			if (!n->linger_due_ms)
				continue;
			if (n->linger_due_ms <= now)
				pool_recheck(p, n);
			else if (!next_due || n->linger_due_ms < next_due)
				next_due = n->linger_due_ms;
		}
	}
	if (next_due)
		linger_arm(p, next_due);
}

void pool_forget(struct pool *p, struct node *n, uint64_t count)
{
	n->nlookup = count > n->nlookup ? 0 : n->nlookup - count;
	if (n->ino != POOL_ROOT_INO && lifetime_can_free(&n->life, n->nlookup)) {
		ino_remove(p, n);
		n->zombie_next = p->zombies;
		p->zombies = n;
	}
}

void pool_note_lookup(struct pool *p, struct node *n, pid_t tid)
{
	size_t slots = sizeof(n->pending_open) / sizeof(n->pending_open[0]), pick = 0;

	/* Only lookups of an entry in use can race its last close. Lookups of an unused,
	 * lingering entry are not noted, so polling for a name to vanish cannot keep it. */
	if (n->is_dir || !lifetime_in_use(&n->life, pool_held_above(p, n)))
		return;
	for (size_t i = 0; i < slots; i++) {
		if (n->pending_open[i].tid == tid) {
			pick = i;
			break;
		}
		if (n->pending_open[i].ms < n->pending_open[pick].ms)
			pick = i;
	}
	n->pending_open[pick].tid = tid;
	n->pending_open[pick].ms = pool_now_ms();
	(void)p;
}

void pool_note_open(struct pool *p, struct node *n, pid_t tid)
{
	(void)p;
	for (size_t i = 0; i < sizeof(n->pending_open) / sizeof(n->pending_open[0]); i++)
		if (n->pending_open[i].tid == tid)
			n->pending_open[i].tid = 0;
}

static struct node *node_new(struct pool *p, bool is_dir, uid_t uid, gid_t gid, mode_t perm)
{
	struct node *n = pool_alloc(p, sizeof(*n));

	if (!n)
		return NULL;
	n->ino = p->next_ino++;
	n->is_dir = is_dir;
	n->uid = uid;
	n->gid = gid;
	n->perm = perm;
	n->life.is_dir = is_dir;
	set_now(&n->mtime);
	n->atime = n->ctime = n->mtime;
	return n;
}

int pool_create(struct pool *p, struct node *dir, const char *name, bool is_dir, uid_t uid,
		gid_t gid, mode_t mode, struct node **out, int *fd_out)
{
	struct node *n;
	struct user_usage *u;
	char *copy;
	int fd = -1;

	u = user_usage(p, uid, true);
	if (!u)
		return -ENOMEM;
	if (p->opts.max_user_entries && u->entries >= p->opts.max_user_entries)
		return -EDQUOT;
	n = node_new(p, is_dir, uid, gid, access_effective_mode(mode));
	copy = pool_strdup(p, name);
	if (!n || !copy) {
		free(n);
		free(copy);
		return -ENOMEM;
	}
	if (!is_dir) {
		fd = backing_create(&p->backing, n->ino);
		if (fd < 0) {
			free(copy);
			free(n);
			return fd;
		}
	}
	attach_name(p, n, dir, copy);
	ino_insert(p, n);
	p->entries++;
	u->entries++;
	if (fd_out)
		*fd_out = fd;
	else if (fd >= 0)
		close(fd);
	*out = n;
	return 0;
}

int pool_stat(struct pool *p, struct node *n, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	if (n->life.removed) {
		/* Reached only through the kernel's caches (a path walk racing the removal, an fd's
		 * fstat): answer like an unlinked inode, with what the node still knows, so the walk
		 * goes on to a clean ENOENT instead of failing with ESTALE. */
		st->st_mode = (n->is_dir ? S_IFDIR : S_IFREG) | n->perm;
		st->st_nlink = 0;
		st->st_blksize = 4096;
		st->st_atim = n->atime;
		st->st_mtim = n->mtime;
		st->st_ctim = n->ctime;
	} else if (!n->is_dir) {
		int r = backing_stat(&p->backing, n->ino, st);
		if (r < 0)
			return r == -ENOENT ? -ESTALE : r;
		/* On passthrough, writes past the end bypass us: catch up the accounting here. */
		if ((uint64_t)st->st_size > n->reserved)
			account(p, n, (uint64_t)st->st_size);
		st->st_mode = S_IFREG | n->perm;
		st->st_nlink = n->life.linked ? 1 : 0;
		/* chmod, chown and xattrs change only the node: the later of the two ctimes. */
		if (n->ctime.tv_sec > st->st_ctim.tv_sec ||
		    (n->ctime.tv_sec == st->st_ctim.tv_sec && n->ctime.tv_nsec > st->st_ctim.tv_nsec))
			st->st_ctim = n->ctime;
	} else {
		uint32_t subdirs = 0;
		for (struct node *c = n->child_first; c; c = c->sib_next)
			subdirs += c->is_dir;
		st->st_mode = S_IFDIR | n->perm;
		st->st_nlink = 2 + subdirs;
		st->st_size = 0;
		st->st_blksize = 4096;
		st->st_atim = n->atime;
		st->st_mtim = n->mtime;
		st->st_ctim = n->ctime;
	}
	st->st_ino = n->ino;
	st->st_uid = n->uid;
	st->st_gid = n->gid;
	return 0;
}

/* ---- permissions ---------------------------------------------------------------------------- */

bool pool_may(struct pool *p, uid_t caller, const struct node *n)
{
	if (n->ino == POOL_ROOT_INO)
		return true; /* the shared root: everyone may look, list (filtered) and create */
	return access_is_owner(&p->policy, caller, n->uid);
}

bool pool_may_change(struct pool *p, uid_t caller, const struct node *n)
{
	/* The root's uid is the pool's owner: only it (or root with root_exempt) may hold the
	 * root, set its xattrs or change its attributes. */
	return access_is_owner(&p->policy, caller, n->uid);
}

void pool_touch_ctime(struct node *n)
{
	set_now(&n->ctime);
}

void pool_log_denied(struct pool *p, uid_t caller, const char *what, const struct node *n)
{
	long now = (long)time(NULL);

	/* At most 20 lines a second: a hostile loop must not flood the log. */
	if (p->denied_window != now) {
		p->denied_window = now;
		p->denied_count = 0;
	}
	if (++p->denied_count > 20)
		return;
	log_info("denied: uid %u may not %s inode %" PRIu64 " (owner uid %u)", (unsigned)caller, what,
		 n->ino, (unsigned)n->uid);
}

/* ---- init / teardown ------------------------------------------------------------------------ */

int pool_init(struct pool *p, const struct pool_options *opts)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->backing.parent_fd = p->backing.dir_fd = -1;
	p->linger_timer_fd = -1;
	p->hold_poll_fd = -1;
	p->inval_tail = &p->inval_head;
	p->dir_handles.prev = p->dir_handles.next = &p->dir_handles;
	p->opts = *opts;
	p->policy.root_exempt = opts->root_exempt;
	p->owner_uid = geteuid();
	p->owner_gid = getegid();
	p->daemon_pid = getpid();
	p->next_ino = POOL_ROOT_INO + 1;
	r = pthread_mutex_init(&p->lock, NULL);
	if (r)
		return -r;
	p->ino_buckets = 1024;
	p->name_buckets = 1024;
	p->ino_table = calloc(p->ino_buckets, sizeof(struct node *));
	p->name_table = calloc(p->name_buckets, sizeof(struct node *));
	p->root = calloc(1, sizeof(*p->root));
	if (!p->ino_table || !p->name_table || !p->root)
		return -ENOMEM;
	p->root->ino = POOL_ROOT_INO;
	p->root->is_dir = true;
	p->root->uid = p->owner_uid;
	p->root->gid = p->owner_gid;
	p->root->perm = 01777;
	p->root->life.is_dir = true;
	p->root->life.is_root = true;
	p->root->life.linked = true;
	p->root->nlookup = 1;
	set_now(&p->root->mtime);
	p->root->atime = p->root->ctime = p->root->mtime;
	ino_insert(p, p->root);
	p->linger_timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (p->linger_timer_fd < 0)
		return -errno;
	r = backing_open(&p->backing, &(struct backing_cfg){
		.dir = opts->backing, .dir_given = opts->backing_given, .limit = opts->max_size,
		.huge = options_huge_name(opts->huge), .huge_given = opts->huge_given});
	if (r < 0)
		return r;
	return 0;
}

/* Free a node's memory. Its holds are gone already (destroy() drops them under the lock),
 * except at unmount (pool_destroy), when no other thread runs. */
static void free_node(struct node *n)
{
	xattr_clear(&n->xattrs);
	while (n->holds) {
		struct hold *h = n->holds;
		hold_unlink(&n->holds, h);
		free(h);
	}
	free(n->name);
	free(n);
}

void pool_destroy(struct pool *p)
{
	if (p->ino_table) {
		for (size_t b = 0; b < p->ino_buckets; b++) {
			struct node *n = p->ino_table[b], *next;
			for (; n; n = next) {
				next = n->ino_next;
				free_node(n);
			}
		}
	}
	while (p->zombies) {
		struct node *n = p->zombies;
		p->zombies = n->zombie_next;
		free_node(n);
	}
	while (p->inval_head) {
		struct pending_inval *pi = p->inval_head;
		p->inval_head = pi->next;
		free(pi);
	}
	while (p->users) {
		struct user_usage *u = p->users;
		p->users = u->next;
		free(u);
	}
	pool_sources_free(p);
	free(p->ino_table);
	free(p->name_table);
	p->ino_table = NULL;
	p->name_table = NULL;
	backing_close(&p->backing);
	if (p->linger_timer_fd >= 0)
		close(p->linger_timer_fd);
	p->linger_timer_fd = -1;
	if (p->hold_poll_fd >= 0)
		close(p->hold_poll_fd);
	p->hold_poll_fd = -1;
	pthread_mutex_destroy(&p->lock);
}

void pool_lock(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
}

void pool_unlock(struct pool *p)
{
	struct pending_inval *inval = p->inval_head;
	struct node *zombies = p->zombies;

	p->inval_head = NULL;
	p->inval_tail = &p->inval_head;
	p->zombies = NULL;
	pthread_mutex_unlock(&p->lock);

	while (zombies) {
		struct node *n = zombies;
		zombies = n->zombie_next;
		free_node(n);
	}
	while (inval) {
		struct pending_inval *next = inval->next;
		if (p->inval)
			p->inval(p->inval_ctx, inval->parent, inval->name, inval->namelen);
		free(inval);
		inval = next;
	}
}
