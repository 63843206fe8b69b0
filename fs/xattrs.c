/* xattrs: an entry's user.* attribute list (see xattrs.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "xattrs.h"

int64_t xattr_cost(size_t namelen, size_t size)
{
	return (int64_t)(sizeof(struct xattr) + namelen + 1 + size);
}

static struct xattr *find(const struct xattr_list *l, const char *name)
{
	for (struct xattr *x = l->head; x; x = x->next)
		if (strcmp(x->name, name) == 0)
			return x;
	return NULL;
}

const struct xattr *xattr_get(const struct xattr_list *l, const char *name)
{
	return find(l, name);
}

int64_t xattr_set_cost(const struct xattr_list *l, const char *name, size_t size)
{
	const struct xattr *x = find(l, name);
	size_t namelen = strlen(name);

	/* A replaced value keeps its record and name: only the value's size changes. */
	if (x)
		return (int64_t)size - (int64_t)x->size;
	return xattr_cost(namelen, size);
}

int xattr_set(struct xattr_list *l, const char *name, const void *value, size_t size, int flags,
	      size_t max_bytes, xattr_alloc_fn alloc, void *alloc_ctx, int64_t *cost_delta)
{
	struct xattr *x = find(l, name), *fresh = NULL;
	size_t namelen = strlen(name);
	size_t old = x ? namelen + x->size : 0;
	void *copy;

	if (cost_delta)
		*cost_delta = 0;
	if ((flags & XATTR_CREATE) && x)
		return -EEXIST;
	if ((flags & XATTR_REPLACE) && !x)
		return -ENODATA;
	if (l->bytes - old + namelen + size > max_bytes)
		return -ENOSPC;
	/* Everything that can fail comes first, so a failure leaves the list as it was. */
	copy = alloc(alloc_ctx, FAULT_HERE, size ? size : 1, false);
	if (!copy)
		return -ENOMEM;
	if (size)
		memcpy(copy, value, size);
	if (!x) {
		fresh = alloc(alloc_ctx, FAULT_HERE, sizeof(*fresh), false);
		if (fresh)
			fresh->name = alloc(alloc_ctx, FAULT_HERE, namelen + 1, false);
		if (!fresh || !fresh->name) {
			free(fresh);
			free(copy);
			return -ENOMEM;
		}
		memcpy(fresh->name, name, namelen + 1);
		fresh->value = NULL;
		fresh->size = 0;
		fresh->next = l->head;
		l->head = fresh;
		x = fresh;
	}
	if (cost_delta)
		*cost_delta = fresh ? xattr_cost(namelen, size) : (int64_t)size - (int64_t)x->size;
	free(x->value);
	x->value = copy;
	x->size = size;
	l->bytes = l->bytes - old + namelen + size;
	return 0;
}

int xattr_remove(struct xattr_list *l, const char *name, int64_t *cost_freed)
{
	for (struct xattr **pp = &l->head; *pp; pp = &(*pp)->next) {
		struct xattr *x = *pp;
		size_t namelen;
		if (strcmp(x->name, name) != 0)
			continue;
		namelen = strlen(x->name);
		*pp = x->next;
		l->bytes -= namelen + x->size;
		if (cost_freed)
			*cost_freed = xattr_cost(namelen, x->size);
		free(x->name);
		free(x->value);
		free(x);
		return 0;
	}
	if (cost_freed)
		*cost_freed = 0;
	return -ENODATA;
}

size_t xattr_names(const struct xattr_list *l, char *buf, size_t len)
{
	size_t need = 0;

	for (const struct xattr *x = l->head; x; x = x->next)
		need += strlen(x->name) + 1;
	if (buf && len >= need) {
		size_t at = 0;
		for (const struct xattr *x = l->head; x; x = x->next) {
			size_t n = strlen(x->name) + 1;
			memcpy(buf + at, x->name, n);
			at += n;
		}
	}
	return need;
}

int64_t xattr_total_cost(const struct xattr_list *l)
{
	int64_t total = 0;

	for (const struct xattr *x = l->head; x; x = x->next)
		total += xattr_cost(strlen(x->name), x->size);
	return total;
}

void xattr_clear(struct xattr_list *l)
{
	while (l->head) {
		struct xattr *x = l->head;
		l->head = x->next;
		free(x->name);
		free(x->value);
		free(x);
	}
	l->bytes = 0;
}
