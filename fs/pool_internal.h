/* pool_internal: what pool.c, pool_attrs.c, pool_tree.c and pool_usage.c share and nothing else may use.
 * All of it runs with the pool lock held. */
#ifndef POOLFS_POOL_INTERNAL_H
#define POOLFS_POOL_INTERNAL_H

#include "pool.h"

/* pool_tree.c */
void pool_ino_insert(struct pool *p, struct node *n);
void pool_ino_remove(struct pool *p, struct node *n);
/* Take `n`'s name out of its folder (the name is freed). */
void pool_detach_name(struct pool *p, struct node *n);
void pool_drop_holds(struct pool *p, struct node *n);
void pool_set_now(struct timespec *ts);

/* pool_usage.c */
/* `uid`'s usage record; with `create`, made if missing (NULL when out of memory). */
struct user_usage *pool_usage_of(struct pool *p, uid_t uid, bool create);
/* Count `n` as `new_size` bytes against the quotas (no check: what the store already holds). */
int pool_account(struct pool *p, struct node *n, uint64_t new_size);
void pool_free_xattrs(struct pool *p, struct node *n);

#endif
