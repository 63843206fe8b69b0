/* pool_names: what making an entry and adding, removing or moving a name cost and end, over the
 * bare table changes of pool_tree.c — the creator's max_user_entries and a symlink target's
 * max_user_meta, the flat price of every name beyond an entry's first (POOL_NAME_COST), and an
 * entry's holds, which end with its last name (docs/interface.md "Limits" and "Lifetime").
 * Calls pool_tree.c, pool_usage.c and pool_core.c (docs/design.md "Layout"). Every function runs
 * with the pool lock held. */
#include <errno.h>
#include <string.h>

#include "pool_internal.h"

int pool_create(struct pool *p, struct node *dir, const char *name, mode_t type, uid_t uid,
		gid_t gid, mode_t mode, const char *target, uint64_t ino, struct node **out)
{
	int64_t target_cost = target ? (int64_t)strlen(target) + 1 : 0;
	struct user_usage *u = pool_usage_of(p, uid, true);
	int r;

	if (!u)
		return -ENOMEM;
	if (p->opts.max_user_entries && u->entries >= p->opts.max_user_entries)
		return -EDQUOT;
	/* A symlink's target is daemon memory, charged like an xattr. */
	r = target_cost ? pool_meta_charge(p, uid, target_cost) : 0;
	if (r < 0)
		return r;
	r = pool_entry_new(p, dir, name, type, uid, gid, mode, target, ino, out);
	if (r < 0) {
		if (target_cost)
			pool_meta_charge(p, uid, -target_cost);
		return r;
	}
	p->entries++;
	u->entries++;
	return 0;
}

int pool_link(struct pool *p, struct node *n, struct node *dir, const char *name)
{
	int r;

	if (n->ends.nnames >= NAMES_MAX_PER_ENTRY)
		return -EMLINK;
	r = pool_meta_charge(p, n->uid, (int64_t)POOL_NAME_COST);
	if (r < 0)
		return r;
	r = pool_name_add(p, n, dir, name);
	if (r < 0)
		pool_meta_charge(p, n->uid, -(int64_t)POOL_NAME_COST);
	return r;
}

/* `n` lost a name; `was_extra`: it had others then. Any name may go first: the flat price of an
 * extra name is given back while others remain, so the last one is the free one; and an entry's
 * holds end with its last name. */
static void name_gone(struct pool *p, struct node *n, bool was_extra)
{
	if (was_extra)
		pool_meta_charge(p, n->uid, -(int64_t)POOL_NAME_COST);
	if (!n->life.linked) {
		pool_drop_holds(p, n);
		n->let_go = REMOVED_UNLINK;
	}
}

void pool_unlink(struct pool *p, struct name *nm)
{
	struct node *n = pool_name_entry(nm);
	bool was_extra = n->ends.nnames > 1;

	if (!nm->dir)
		return;
	/* If its folder goes next, it is for losing its last entry. */
	pool_name_dir(nm)->let_go = REMOVED_EMPTIED;
	pool_name_remove(p, nm);
	name_gone(p, n, was_extra);
}

int pool_move(struct pool *p, struct name *nm, struct node *dir, const char *name,
	      struct name *replaced)
{
	struct node *gone = replaced && replaced->dir ? pool_name_entry(replaced) : NULL;
	bool was_extra = gone && gone->ends.nnames > 1;
	struct node *from = pool_name_dir(nm);
	int r = pool_name_move(p, nm, dir, name, replaced);

	if (r < 0)
		return r;
	if (from && from != dir)
		from->let_go = REMOVED_EMPTIED;
	if (gone)
		name_gone(p, gone, was_extra);
	return 0;
}
