/* poolstats: what the daemon did since the mount, for monitoring (docs/monitoring.md): entries
 * removed by what let go of them last, requests refused by errno, access denials, and the gauges
 * a walk of the table would otherwise have to count (open handles, entries possibly mapped,
 * entries held), and the mapping proof's probes (what it costs). Each is kept as it changes, so reading them costs the same for any pool size.
 *
 * Lock-free (atomics, like opstats.h): a reply counts its refusal without the pool lock. The
 * pool's owner reads them with the rest of the pool's counters from the root's
 * user.poolfs.counters xattr (pool_texts.c). */
#ifndef POOLFS_POOLSTATS_H
#define POOLFS_POOLSTATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* What let go of an entry last: the reason its removal is counted under. A node keeps the
 * latest one (struct node's `let_go`); OTHER if nothing ever kept it (a mknod'd FIFO no one
 * opened). */
enum poolstats_removal {
	REMOVED_OTHER,
	REMOVED_LAST_CLOSE, /* its last open handle was closed */
	REMOVED_LAST_UNMAP, /* its last mapping was proven gone */
	REMOVED_HOLD_ENDED, /* its last hold was released or its process/cgroup ended */
	REMOVED_UNLINK,	    /* its last name was unlinked (or renamed over) */
	REMOVED_EMPTIED,    /* a folder whose last entry went */
	REMOVED_COUNT,
};

/* The refusals counted, by the errno of the reply. */
enum poolstats_refusal {
	REFUSED_ENOSPC,
	REFUSED_EDQUOT,
	REFUSED_EACCES,
	REFUSED_EPERM,
	REFUSED_COUNT,
};

struct poolstats {
	atomic_uint_fast64_t removed[REMOVED_COUNT];
	atomic_uint_fast64_t refused[REFUSED_COUNT];
	atomic_uint_fast64_t denied;	    /* access denials (pool_log_denied) */
	atomic_uint_fast64_t denied_logged; /* of those, logged (the rest fell to its rate limit) */
	atomic_uint_fast64_t proof_probes;  /* the mapping proof's probes (mapping_proof.c) */
	atomic_int_fast64_t open_handles;   /* file and folder handles open */
	atomic_int_fast64_t maybe_mapped;   /* entries whose mapping is not proven gone */
	atomic_int_fast64_t held;	    /* entries with at least one hold */
};

void poolstats_removed(struct poolstats *s, unsigned reason);
/* A reply with error `err` (positive errno, 0 = success): counted if it is a refusal. */
void poolstats_reply(struct poolstats *s, int err);
/* Add `delta` to one of the gauges. */
void poolstats_gauge(atomic_int_fast64_t *g, int delta);
/* "NAME VALUE" lines ("removed REASON N", "refused ERRNO N"); the reasons' and errnos' words
 * are poolstats_removal_name/poolstats_refusal_name. Returns the length, or -ERANGE. */
int poolstats_format(const struct poolstats *s, char *buf, size_t len);
const char *poolstats_removal_name(unsigned reason);

#endif
