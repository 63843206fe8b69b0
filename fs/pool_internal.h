/* pool_internal: what the pool's own files (pool*.c) share and nothing else may use.
 * All of it runs with the pool lock held. */
#ifndef POOLFS_POOL_INTERNAL_H
#define POOLFS_POOL_INTERNAL_H

#include "pool.h"

/* pool_tree.c */
void pool_ino_insert(struct pool *p, struct node *n);
void pool_ino_remove(struct pool *p, struct node *n);
/* Take `nm` out of its folder and its entry (freed after the lock is released); no
 * accounting: pool_unlink is the removal of a name, this is its bookkeeping. */
void pool_detach_name(struct pool *p, struct name *nm);
void pool_drop_holds(struct pool *p, struct node *n);
void pool_set_now(struct timespec *ts);

/* pool_usage.c */
/* `uid`'s usage record; with `create`, made if missing (NULL when out of memory). */
struct user_usage *pool_usage_of(struct pool *p, uid_t uid, bool create);
/* Count `n` as `new_size` bytes against the quotas (no check: what the store already holds). */
int pool_account(struct pool *p, struct node *n, uint64_t new_size);
void pool_free_xattrs(struct pool *p, struct node *n);
/* Charge (delta > 0) or refund daemon memory to `uid`: max_user_meta, and with the user's
 * data max_user_size (-EDQUOT) and max_size (-ENOSPC). Refunds never fail. */
int pool_meta_charge(struct pool *p, uid_t uid, int64_t delta);

/* pool.c */
/* pool_alloc for allocators that take a context (name_table.h, xattrs.h). */
void *pool_alloc_cb(void *pool, size_t size);

#endif
