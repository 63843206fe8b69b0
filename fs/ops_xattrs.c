/* ops_xattrs: extended attributes: user.* values, holds, and the pool's own user.poolfs.*
 * texts (see ops_internal.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "datapath.h"
#include "log.h"
#include "ops_internal.h"
#include "procfs.h"

/* ---- extended attributes ------------------------------------------------------------------- */

static bool is_reserved(const char *name)
{
	return strncmp(name, POOLFS_XATTR_PREFIX, strlen(POOLFS_XATTR_PREFIX)) == 0;
}

/* The node a setxattr/removexattr names, if the caller may change it: -EACCES for another
 * user's entry, -EPERM for the shared root (only its owner may hold it or label it, as only
 * the owner of a sticky folder may change it). */
static int get_changeable(struct pool *p, fuse_req_t req, fuse_ino_t ino, const char *what,
			  struct node **out)
{
	int r = get_owned(p, req, ino, what, out);

	if (r == 0 && (r = pool_may_act(p, caller_uid(req), *out, ACCESS_CHANGE)) < 0)
		pool_log_denied(p, caller_uid(req), what, *out);
	return r;
}

#ifdef POOLFS_FAULT_INJECTION

/* The faultsim daemon's controls, on the root and for its owner only. 1 if `name` is one,
 * with *r set; 0 otherwise. Lock held. */
static int debug_xattr(struct pool *p, fuse_req_t req, struct node *n, const char *name,
		       const char *value, size_t size, char **out, int *r)
{
	bool set = value != NULL;

	if (strcmp(name, POOLFS_XATTR_DEBUG_FAULT) != 0 &&
	    strcmp(name, POOLFS_XATTR_DEBUG_CHECK) != 0)
		return 0;
	if (n->ino != POOL_ROOT_INO || pool_may_act(p, caller_uid(req), n, ACCESS_CHANGE) < 0) {
		*r = -EPERM;
		return 1;
	}
	if (set || !out) {
		*r = set && strcmp(name, POOLFS_XATTR_DEBUG_FAULT) == 0
			     ? fault_arm(&p->fault, value, size)
			     : -EPERM;
		return 1;
	}
	*out = fault_controls_alloc(4096);
	if (!*out) {
		*r = -ENOMEM;
		return 1;
	}
	if (strcmp(name, POOLFS_XATTR_DEBUG_FAULT) == 0) {
		struct pool_unsettled why;
		size_t unsettled = pool_unsettled(p, &why);

		*r = fault_report(&p->fault, *out, 4096);
		/* What the faults' aftermath still waits for (pool_unsettled). */
		if (*r >= 0 &&
		    snprintf(*out + *r, 4096 - (size_t)*r,
			     "unsettled %zu (open %zu, maybe mapped %zu, awaiting forget %zu)\n",
			     unsettled, why.open, why.maybe_mapped,
			     why.awaiting_forget) >= 4096 - *r)
			*r = -ERANGE;
	} else {
		*r = pool_check(p, *out, 4096);
	}
	if (*r >= 0 || *r == -EUCLEAN)
		*r = (int)strlen(*out); /* a broken invariant is reported as text, not an error */
	return 1;
}
#endif

/* "reset" written to the root's user.poolfs.ops zeroes the request counters. */
static int ops_reset(struct pool *p, const char *value, size_t size)
{
	if (size > 0 && (value[size - 1] == '\0' || value[size - 1] == '\n'))
		size--;
	if (size != 5 || memcmp(value, "reset", 5) != 0)
		return -EINVAL;
	opstats_reset(&p->opstats);
	return 0;
}

/* The pool's texts that no one may set or remove. */
static bool is_read_only_text(const char *name)
{
	return strcmp(name, POOLFS_XATTR_REFS) == 0 || strcmp(name, POOLFS_XATTR_STAT) == 0 ||
	       strcmp(name, POOLFS_XATTR_COUNTERS) == 0;
}

/* Only user.* is stored: every other name gets EOPNOTSUPP (replied here; true then). Not
 * ENODATA for security.* either: `ls -l` asks for security.selinux on every file unless a
 * filesystem says it has no such namespace (then once per device), and the kernel reads
 * EOPNOTSUPP for security.capability (asked on writes and chown) as "none" too. ENOSYS would
 * switch off every getxattr, user.poolfs.* included. */
static bool refuse_namespace(fuse_req_t req, const char *name)
{
	if (strncmp(name, "user.", 5) == 0)
		return false;
	fuse_reply_err(req, EOPNOTSUPP);
	return true;
}
void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
		 int flags)
{
	struct pool *p = pool_of(req);
	bool hold = strcmp(name, POOLFS_XATTR_HOLD) == 0;
	struct hold_request hr = {.kind = HOLD_PIN};
	struct hold_caller who;
	struct node *n;
	int r, parsed = 0;

	if (refuse_namespace(req, name))
		return;
	if (hold) {
		/* What /proc says about the caller is read before the lock is taken. */
		parsed = hold_request_parse(value, size, &hr);
		pool_hold_caller(p, parsed == 0 && !hr.pid ? hr.kind : HOLD_PIN,
				 fuse_req_ctx(req)->pid, &who);
	}
	pool_lock(p);
	r = get_changeable(p, req, ino, hold ? "hold" : "set xattr on", &n);
	if (r < 0)
		goto out;
#ifdef POOLFS_FAULT_INJECTION
	if (debug_xattr(p, req, n, name, value, size, NULL, &r))
		goto out;
#endif
	if (strcmp(name, POOLFS_XATTR_OPS) == 0) {
		r = n->ino != POOL_ROOT_INO ? -EINVAL : ops_reset(p, value, size);
	} else if (hold) {
		r = parsed == 0 ? pool_hold(p, n, caller_uid(req), &who, &hr) : parsed;
	} else if (is_read_only_text(name)) {
		r = -EPERM;
	} else if (is_reserved(name)) {
		r = -EINVAL;
	} else {
		r = pool_xattr_set(p, n, name, value, size, flags);
	}
out:
	pool_commit(p);
	fuse_reply_err(req, -r);
}

/* The room for the texts of user.poolfs.ops and user.poolfs.counters. */
#define COUNTERS_TEXT_MAX 4096

/* The value of xattr `name` of `n` in a new buffer: its length, or a negative errno. `rss_bytes`:
 * the daemon's resident memory, for user.poolfs.counters. Lock held. */
static int xattr_value(struct pool *p, fuse_req_t req, struct node *n, const char *name,
		       uint64_t rss_bytes, char **out)
{
	const struct xattr *x;
	int r;

#ifdef POOLFS_FAULT_INJECTION
	if (debug_xattr(p, req, n, name, NULL, 0, out, &r))
		return r;
#endif
	if (strcmp(name, POOLFS_XATTR_REFS) == 0)
		return pool_refs_text(p, n, out);
	if ((strcmp(name, POOLFS_XATTR_OPS) == 0 || strcmp(name, POOLFS_XATTR_COUNTERS) == 0) &&
	    n->ino == POOL_ROOT_INO) {
		/* what others do, and what the daemon did for everyone: the pool owner's only */
		r = pool_may_act(p, caller_uid(req), n, ACCESS_READ_COUNTERS);
		if (r < 0)
			return r;
		*out = pool_alloc(p, COUNTERS_TEXT_MAX);
		if (!*out)
			return -ENOMEM;
		return strcmp(name, POOLFS_XATTR_OPS) == 0
			       ? opstats_format(&p->opstats, *out, COUNTERS_TEXT_MAX)
			       : pool_counters_text(p, rss_bytes, *out, COUNTERS_TEXT_MAX);
	}
	if (strcmp(name, POOLFS_XATTR_STAT) == 0) {
		*out = pool_alloc(p, ((size_t)POOLFS_XATTR_VALUE_MAX));
		if (!*out)
			return -ENOMEM;
		r = pool_stat_text(p, caller_uid(req), p->dp ? p->dp->name : "none", *out,
				   ((size_t)POOLFS_XATTR_VALUE_MAX));
		return r;
	}
	if (is_reserved(name))
		return -ENODATA;
	x = xattr_get(&n->xattrs, name);
	if (!x)
		return -ENODATA;
	*out = pool_alloc(p, x->size ? x->size : 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, x->value, x->size);
	return (int)x->size;
}

/* Reply to getxattr/listxattr with `len` bytes of `data`: the size if the caller asked for it
 * (size 0), ERANGE if its buffer is too small. */
static void reply_xattr_data(fuse_req_t req, int r, const char *data, size_t size)
{
	if (r < 0)
		fuse_reply_err(req, -r);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)r);
	else if ((size_t)r > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, data, (size_t)r);
}

/* The pool's own texts (refs, stat, ops) are made at each read and may grow between a caller's
 * size probe and its read (the probe itself is counted in ops): probes get room to spare, so
 * getfattr and friends never meet ERANGE; the read returns the real length. */
static bool is_live_text(const char *name)
{
	return strcmp(name, POOLFS_XATTR_REFS) == 0 || strcmp(name, POOLFS_XATTR_OPS) == 0 ||
	       strcmp(name, POOLFS_XATTR_STAT) == 0 || strcmp(name, POOLFS_XATTR_COUNTERS) == 0;
}

#define LIVE_TEXT_SLACK 256

void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct pool *p = pool_of(req);
	struct node *n;
	char *data = NULL;
	uint64_t rss_bytes = 0;
	int r;

	if (refuse_namespace(req, name))
		return;
	if (strcmp(name, POOLFS_XATTR_COUNTERS) == 0) {
		/* /proc is read before the lock: nothing waits for it */
		long kb = proc_rss_kb(getpid());
		rss_bytes = kb > 0 ? (uint64_t)kb * 1024 : 0;
	}
	/* The sizes writes may have moved unseen, read before the lock (pool_unseen_settle). */
	r = strcmp(name, POOLFS_XATTR_STAT) == 0 ? pool_unseen_settle(p) : 0;
	pool_lock(p);
	if (r == 0)
		r = get_owned(p, req, ino, "read xattr of", &n);
	if (r == 0)
		r = xattr_value(p, req, n, name, rss_bytes, &data);
	pool_commit(p);
	if (r >= 0 && size == 0 && is_live_text(name))
		r += LIVE_TEXT_SLACK;
	reply_xattr_data(req, r, data, size);
	free(data);
}

void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct pool *p = pool_of(req);
	struct node *n;
	char *buf = NULL;
	size_t len = 0;
	int r;

	pool_lock(p);
	r = get_owned(p, req, ino, "list xattrs of", &n);
	if (r == 0) {
		len = xattr_names(&n->xattrs, NULL, 0);
		if (size > 0 && len <= size) {
			buf = pool_alloc(p, len ? len : 1);
			if (buf)
				xattr_names(&n->xattrs, buf, len);
			else
				r = -ENOMEM;
		}
	}
	pool_commit(p);
	reply_xattr_data(req, r < 0 ? r : (int)len, buf, size);
	free(buf);
}

void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct pool *p = pool_of(req);
	struct node *n;
	int r;

	if (refuse_namespace(req, name))
		return;
	pool_lock(p);
	r = get_changeable(p, req, ino, "remove xattr of", &n);
	if (r < 0)
		goto out;
	if (strcmp(name, POOLFS_XATTR_HOLD) == 0)
		r = pool_release_holds(p, n, caller_uid(req));
	else if (is_read_only_text(name))
		r = -EPERM;
	else if (is_reserved(name))
		r = -EINVAL;
	else
		r = pool_xattr_remove(p, n, name);
out:
	pool_commit(p);
	fuse_reply_err(req, -r);
}
