/* pool_internal: what the pool's own files (pool_*.c) share and nothing else may use; the
 * handlers see pool_api.h only (scripts/layers.py checks both). Each declaration sits under the
 * file that defines it, in the order of the layers, bottom first (docs/design.md "Layout"): a
 * file calls only the files listed before it. Everything here runs with the pool lock held
 * unless it says otherwise. */
#ifndef POOLFS_POOL_INTERNAL_H
#define POOLFS_POOL_INTERNAL_H

#include "pool_api.h"

/* ---- pool_core.c ---- */
/* pool_alloc for allocators that take a context (fault_alloc_fn: hash_table.h, name_table.h,
 * xattrs.h). */
void *pool_alloc_cb(void *pool, const char *site, size_t size, bool benign);
void pool_set_now(struct timespec *ts);
/* `until`: `ms` from now on CLOCK_REALTIME, the clock pthread_cond_timedwait measures. */
void pool_deadline(struct timespec *until, long ms);
/* Queue a name for the invalidation thread (sent after unlock); with `ino`, the thread reports
 * back (pool_name_invalidated). 0 or -ENOMEM (the kernel then keeps the name until its timeout:
 * slower, not wrong). */
int pool_queue_inval(struct pool *p, uint64_t parent, const char *name, uint64_t ino);
uint64_t pool_now_ms(void);

/* ---- pool_reaper.c (its own lock, never the pool's: call it without the pool lock) ---- */
/* Stop the thread (pool_destroy). For unmount: what is still queued is left to the store's own
 * removal (backing_close); it accepts a pool whose start failed or never came. */
void pool_reaper_stop(struct pool *p);
/* Queue `f` for the thread: false if it cannot take it (not running, out of memory), and then
 * the caller unlinks it (pool_unlink_backing). */
bool pool_reaper_take(struct pool *p, const struct backing_file *f);
/* Wait until the queue is empty and no file pool_commit took out of the lock is still to be
 * unlinked (big ones too), at most `timeout_ms`; true if anything was (a store that was full
 * may have room now). */
bool pool_reaper_wait(struct pool *p, int timeout_ms);
void pool_unlink_backing(struct pool *p, const struct backing_file *f);
/* Append `f`: false if the list cannot grow (out of memory), then unchanged. */
bool pool_backing_list_push(struct backing_list *l, const struct backing_file *f);
/* What `l` holds, leaving it empty (the caller frees `.files`). */
struct backing_list pool_backing_list_take(struct backing_list *l);

/* ---- pool_tree.c: the bare table changes; the accounting of names is pool_names.c's ---- */
void pool_ino_insert(struct pool *p, struct node *n);
void pool_ino_remove(struct pool *p, struct node *n);
/* Take `nm` out of its folder and its entry (freed after the lock is released). */
void pool_detach_name(struct pool *p, struct name *nm);
/* Remove name `nm` (pool_detach_name, and its entry's ctime). */
void pool_name_remove(struct pool *p, struct name *nm);
/* A new entry with its first name, in the inode table (pool_create's table part). -ENOMEM. */
int pool_entry_new(struct pool *p, struct node *dir, const char *name, mode_t type, uid_t uid,
		   gid_t gid, mode_t mode, const char *target, uint64_t ino, struct node **out);
/* One more name for `n` (pool_link's table part). -ENOMEM. */
int pool_name_add(struct pool *p, struct node *n, struct node *dir, const char *name);
/* pool_move's table part: `replaced` goes by pool_name_remove. 0 or -ENOMEM, nothing changed. */
int pool_name_move(struct pool *p, struct name *nm, struct node *dir, const char *name,
		   struct name *replaced);
/* Free a node's memory (after the lock is released, or at unmount). Its holds are gone already,
 * except at unmount, when no other thread runs. */
void pool_node_free(struct node *n);
struct node *pool_name_dir(const struct name *nm);

/* ---- pool_usage.c ---- */
/* `uid`'s usage record; with `create`, made if missing (NULL when out of memory). */
struct user_usage *pool_usage_of(struct pool *p, uid_t uid, bool create);
/* Count `n` as `new_size` bytes against the quotas (no check: what the store already holds). */
int pool_account(struct pool *p, struct node *n, uint64_t new_size);
void pool_free_xattrs(struct pool *p, struct node *n);
/* Free every hold record of `n` (its last name went, or it is removed). */
void pool_drop_holds(struct pool *p, struct node *n);
/* Charge (delta > 0) or refund daemon memory to `uid`: max_user_meta, and with the user's
 * data max_user_size (-EDQUOT) and max_size (-ENOSPC). Refunds never fail. */
int pool_meta_charge(struct pool *p, uid_t uid, int64_t delta);
/* Place `n` in `unseen` by its state now (the front while it waits for the mapping proof),
 * or take it out once removed; nothing if it is not there. pool_commit calls it for every node
 * it decides on. */
void pool_unseen_place(struct pool *p, struct node *n);
/* Charge one hold record to `uid`'s max_user_meta (-EDQUOT), and the inverse: unlink `h` from
 * `n` and its source, refund it and free it. */
int pool_hold_charge(struct pool *p, uid_t uid);
void pool_hold_refund(struct pool *p, uid_t uid);
void pool_hold_free(struct pool *p, struct node *n, struct hold *h);

/* ---- pool_attrs.c ---- */
/* Whether pool_stat(n) would ask the backing file (a file in use, or whose copy is stale). */
bool pool_stat_needs_backing(const struct node *n);

/* ---- pool_lifetime.c ---- */
/* Apply the lifetime verdict to `n`, then to each folder above it that lost a child; with
 * _subtree, to `n` and everything below it first. The rule's steps: only pool_commit and the
 * rule's own timers and FORGET call them. */
void pool_recheck(struct pool *p, struct node *n);
void pool_recheck_subtree(struct pool *p, struct node *n);
/* May the kernel cache a name in `dir`? Not directly in the shared root of a multi-user pool:
 * that LOOKUP is where other users are refused (docs/design.md "Caching"). */
bool pool_name_cacheable(const struct pool *p, const struct node *dir);
/* Is `n` kept by a hold on a folder above one of its names? Only holds whose owner may access
 * `n` count. */
bool pool_held_above(const struct pool *p, const struct node *n);

/* ---- pool_holds.c ---- */
/* A watched process exited or cgroup emptied: end its holds (called by the watch thread). */
void pool_source_ended(struct pool *p, struct hold_source *src);
/* At unmount (no other thread runs): close and free every hold source. */
void pool_sources_free(struct pool *p);

#endif
