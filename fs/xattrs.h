/* xattrs: an entry's user.* extended attributes as a plain list, pure (no pool, no locks, no
 * FUSE), so every rule and failure path is unit-tested (tests/unit/test_xattrs.c).
 *
 * The list knows the bytes it stores (names + values, what the per-entry limit counts) and what
 * each change costs in daemon memory (what the pool charges to the owner's max_user_meta). */
#ifndef POOLFS_XATTRS_H
#define POOLFS_XATTRS_H

#include <stddef.h>
#include <stdint.h>

#include "fault.h"

struct xattr {
	struct xattr *next;
	char *name;
	void *value;
	size_t size;
};

struct xattr_list {
	struct xattr *head;
	size_t bytes; /* sum of name lengths and value sizes */
};

/* Allocation hook (fault.h: the daemon's may fail on purpose in fault-injection builds). */
typedef fault_alloc_fn xattr_alloc_fn;

/* Daemon memory one attribute of this name length and value size costs. */
int64_t xattr_cost(size_t namelen, size_t size);

const struct xattr *xattr_get(const struct xattr_list *l, const char *name);

/* setxattr: flags XATTR_CREATE / XATTR_REPLACE. 0, -EEXIST, -ENODATA, -ENOSPC (the list would
 * store more than max_bytes), -ENOMEM. *cost_delta (if not NULL) gets the change in
 * xattr_cost terms; on failure the list is unchanged and *cost_delta is 0. */
int xattr_set(struct xattr_list *l, const char *name, const void *value, size_t size, int flags,
	      size_t max_bytes, xattr_alloc_fn alloc, void *alloc_ctx, int64_t *cost_delta);

/* What xattr_set would change the cost by (0 for a failing call); for checking a budget
 * before setting. */
int64_t xattr_set_cost(const struct xattr_list *l, const char *name, size_t size);

/* removexattr: 0 or -ENODATA; *cost_freed (if not NULL) gets what it freed. */
int xattr_remove(struct xattr_list *l, const char *name, int64_t *cost_freed);

/* listxattr: writes the NUL-separated names into buf if it is big enough and returns the
 * length they need (so len 0 asks for the size). */
size_t xattr_names(const struct xattr_list *l, char *buf, size_t len);

/* Total cost of the list, and freeing it (accepts an empty list). */
int64_t xattr_total_cost(const struct xattr_list *l);
void xattr_clear(struct xattr_list *l);

#endif
