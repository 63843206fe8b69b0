/* fault: test-only fault injection, SQLite's "faultsim" habit.
 *
 * meson builds a second daemon, poolfs-faultsim (never installed), with POOLFS_FAULT_INJECTION.
 * There the pool's owner arms "make the Nth allocation (or reply) from now fail" by writing the
 * pool root's user.poolfs.debug.fault xattr, runs one operation, and reads
 * user.poolfs.debug.check to see that the pool stayed consistent (tests/faultsim). In the
 * normal daemon fault_fire() is a constant false and none of this exists. */
#ifndef POOLFS_FAULT_H
#define POOLFS_FAULT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

enum fault_site {
	FAULT_ALLOC,  /* a daemon allocation returns NULL */
	FAULT_REPLY,  /* a reply that carries a new handle or entry is lost, as when the
			  * caller was killed before it arrived */
	FAULT_MARK,   /* the kernel refuses a fanotify mark for one backing file (passthrough) */
	FAULT_STALL,  /* a resize's I/O or a new file's backing file, made outside the pool
			  * lock, waits until the faults are turned off ("off"; at most
			  * FAULT_STALL_MAX_MS) */
	FAULT_REAP,   /* the reaper thread waits likewise before it unlinks a batch */
	FAULT_UNLINK, /* a removed file's backing file, unlinked after the pool lock is
		       * released (pool_unlock), waits likewise before its unlink */
	FAULT_SITES,
};

struct fault_state {
	atomic_long countdown[FAULT_SITES]; /* fire when it drops to 0; <= 0: disarmed */
	atomic_long fired[FAULT_SITES];	    /* how many times each site fired since armed */
	atomic_bool stall_released;	    /* "off" came: a stalled resize goes on */
};

/* A stalled request gives up waiting after this long, so a test that never releases it cannot
 * leave a daemon that never unmounts. */
#define FAULT_STALL_MAX_MS 30000

#ifdef POOLFS_FAULT_INJECTION
bool fault_fire(struct fault_state *f, enum fault_site site);
/* If `site` (FAULT_STALL, FAULT_REAP or FAULT_UNLINK) fires, wait until "off" (or
 * FAULT_STALL_MAX_MS). Call without the lock. */
void fault_stall_at(struct fault_state *f, enum fault_site site);
/* "alloc N", "reply N", "mark N", "stall N", "reap N", "unlink N" (N >= 1: the Nth call from
 * now fails, or stalls, once) or "off". 0 or -EINVAL. */
int fault_arm(struct fault_state *f, const char *value, size_t len);
/* "alloc armed|fired|off\nreply ...\nmark ...\nstall ...\nreap ...\nunlink ...\n" into buf:
 * length or -ERANGE. */
int fault_report(struct fault_state *f, char *buf, size_t len);
#else
static inline bool fault_fire(struct fault_state *f, enum fault_site site)
{
	(void)f;
	(void)site;
	return false;
}

static inline void fault_stall_at(struct fault_state *f, enum fault_site site)
{
	(void)f;
	(void)site;
}
#endif

static inline void fault_stall(struct fault_state *f)
{
	fault_stall_at(f, FAULT_STALL);
}

#endif
