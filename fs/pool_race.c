/* pool_race: the LOOKUP/OPEN race (docs/design.md "The LOOKUP/OPEN race"). The kernel looks a
 * name up and then opens the inode, and the last user may close in between: a LOOKUP answered
 * while the entry was in use is noted, and its removal waits a grace period for that thread's
 * OPEN; a thread that looks the same entry up again was polling, not opening, and its note goes.
 * Every function runs with the pool lock held (see pool.h). */
#include "pool.h"
#include "pool_internal.h"

void pool_note_lookup(struct pool *p, struct node *n, pid_t tid, bool first_look)
{
	size_t slots = ARRAY_SIZE(n->pending_open), pick = 0;

	/* A lookup of an entry in use can race its last close; so can a first lookup of an entry
	 * already unused but not yet gone (waiting on another opener's grace), whose removal could
	 * otherwise overtake this thread's OPEN. A thread looking the same entry up again is
	 * polling (pool_drop_stale_lookup): not noted, and apply() caps every grace at
	 * POOL_OPEN_GRACE_MS after the entry fell unused, so no poller keeps it. */
	if (!pool_has_backing(n) ||
	    (!first_look && !lifetime_in_use(&n->life, pool_held_above(p, n))))
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
}

bool pool_drop_stale_lookup(struct pool *p, struct node *n, pid_t tid)
{
	for (size_t i = 0; i < ARRAY_SIZE(n->pending_open); i++) {
		if (n->pending_open[i].tid == tid) {
			n->pending_open[i].tid = 0;
			pool_recheck(p, n);
			return true;
		}
	}
	return false;
}

void pool_note_open(struct pool *p, struct node *n, pid_t tid)
{
	(void)p;
	for (size_t i = 0; i < ARRAY_SIZE(n->pending_open); i++)
		if (n->pending_open[i].tid == tid)
			n->pending_open[i].tid = 0;
}
