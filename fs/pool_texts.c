/* pool_texts: the pool's read-only texts, user.poolfs.refs (what keeps an entry),
 * user.poolfs.stat (what the pool and its users hold) and user.poolfs.counters (what the daemon
 * did since the mount: docs/monitoring.md), built under the lock from the counters (the handler
 * settles the sizes that moved unseen first: pool_unseen_settle). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "poolfs_names.h"
#include "pool_internal.h"

/* Appends to a growing text; -ERANGE once it would pass `cap`. */
struct text {
	char *buf;
	size_t used, cap;
};

static int text_add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	w = vsnprintf(t->buf + t->used, t->cap - t->used, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= t->cap - t->used)
		return -ERANGE;
	t->used += (size_t)w;
	return 0;
}

int pool_refs_text(struct pool *p, struct node *n, char **out)
{
	/* Room kept for the closing "more N" line when the holds do not all fit. */
	const size_t reserve = 32;
	struct text t = {.buf = pool_alloc(p, ((size_t)POOLFS_XATTR_VALUE_MAX)),
			 .cap = ((size_t)POOLFS_XATTR_VALUE_MAX) - reserve};
	uint32_t shown = 0;
	int r;

	if (!t.buf)
		return -ENOMEM;
	r = text_add(&t, "opens %u\nmapped %s\n", n->life.opens,
		     n->life.maybe_mapped ? "yes" : "no");
	if (r == 0 && node_is_dir(n))
		r = text_add(&t, "children %u\n", n->life.children);
	else if (r == 0)
		r = text_add(&t, "names %u\n", n->ends.nnames);
	if (r == 0)
		r = text_add(&t, "holds %u\n", n->life.holds);
	for (struct hold *h = n->holds; h && r == 0; h = h->node_next) {
		char scope[4200];
		if (hold_format_scope(h, scope, sizeof(scope)) < 0)
			snprintf(scope, sizeof(scope), "?");
		if (text_add(&t, "hold %s uid=%u\n", scope, (unsigned)h->uid) < 0)
			break;
		shown++;
	}
	if (r == 0 && shown < n->life.holds) {
		t.cap += reserve;
		r = text_add(&t, POOLFS_REFS_MORE " %u\n", n->life.holds - shown);
	}
	if (r < 0) {
		free(t.buf);
		return r;
	}
	*out = t.buf;
	return (int)t.used;
}

int pool_stat_text(struct pool *p, uid_t caller, const char *datapath, char *buf, size_t len)
{
	struct text t = {.buf = buf, .cap = len};
	int r;

	r = text_add(&t,
		     "entries %" PRIu64 "\nbytes %" PRIu64 "\nmeta %" PRIu64 "\n"
		     "max_size %" PRIu64 "\nmax_user_size %" PRIu64 "\nmax_user_entries %" PRIu64
		     "\n"
		     "max_user_meta %" PRIu64 "\ndatapath %s\n",
		     p->entries, p->bytes, p->meta, p->opts.max_size, p->opts.max_user_size,
		     p->opts.max_user_entries, p->opts.max_user_meta, datapath);
	for (struct user_usage *u = p->users; u && r == 0; u = u->next) {
		if (caller != 0 && u->uid != caller)
			continue;
		if (!u->entries && !u->bytes && !u->meta)
			continue;
		r = text_add(&t, "user %u entries %" PRIu64 " bytes %" PRIu64 " meta %" PRIu64 "\n",
			     (unsigned)u->uid, u->entries, u->bytes, u->meta);
	}
	return r < 0 ? r : (int)t.used;
}

int pool_counters_text(struct pool *p, uint64_t rss_bytes, char *buf, size_t len)
{
	struct text t = {.buf = buf, .cap = len};
	int r, w;

	/* Only counters kept as things change: no walk of the table, whatever its size. */
	r = text_add(&t,
		     "rss_bytes %" PRIu64 "\nlingering %zu\nawaiting_forget %zu\nestale %" PRIu64
		     "\nswept_folders %" PRIu64 "\nswept_files %" PRIu64 "\nlock_handoffs %" PRIu64
		     "\ntransport %s\n",
		     rss_bytes, p->lingering, p->awaiting_forget, p->stale.answers,
		     p->backing.swept_folders, p->backing.swept_files, p->lock_handoffs,
		     atomic_load(&p->uring_seen) ? "io_uring" : "dev_fuse");
	if (r < 0)
		return r;
	w = poolstats_format(&p->stats, t.buf + t.used, t.cap - t.used);
	if (w < 0)
		return w;
	t.used += (size_t)w;
	w = opstats_format_latency(&p->opstats, t.buf + t.used, t.cap - t.used);
	if (w < 0)
		return w;
	t.used += (size_t)w;
	return (int)t.used;
}
