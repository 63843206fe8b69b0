/* fault: every allocation of the daemon, and test-only fault injection, SQLite's "faultsim" habit.
 *
 * Every allocation in fs/ goes through fault_malloc, fault_calloc, fault_realloc or fault_strdup
 * (or pool_alloc, or an allocator callback built on them), so every one can be made to fail
 * (CONTRIBUTING.md "Fault simulation"). A growth whose failure the caller handles by carrying on
 * (a hash table that stays narrower) uses the _benign form: when the fault lands there the
 * operation must still succeed, and the report says "benign".
 *
 * meson builds a second daemon, poolfs-faultsim (never installed), with POOLFS_FAULT_INJECTION.
 * There the pool's owner arms "make the Nth allocation (or reply) from now fail" by writing the
 * pool root's user.poolfs.debug.fault xattr, runs one operation, and reads
 * user.poolfs.debug.check to see that the pool stayed consistent (tests/faultsim); the
 * environment variable POOLFS_FAULT arms the same before the daemon starts, for the allocations
 * of its start. The report also names every allocation site a fault has landed on ("walked
 * FILE:LINE"), so the suite can see that it walked them all. In the normal daemon fault_fire()
 * is a constant false, the allocations are the C library's, and none of this exists. */
#ifndef POOLFS_FAULT_H
#define POOLFS_FAULT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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
		       * released (pool_commit), waits likewise before its unlink */
	FAULT_OPEN,   /* an OPEN waits likewise before it does anything, so that a test can
		       * change what it opens under it (a kernel retry's, pool_stale.c) */
	FAULT_FORGET, /* "forget MS": every FORGET waits MS milliseconds before it is handled,
		       * until "off" (a time, not a count): the kernel's FORGET late, as on a
		       * loaded machine, behind requests sent after it */
	FAULT_PROOF,  /* "proof MS": likewise the watch thread before each close event, re-probe
		       * or backstop of the mapping proof (passthrough): a proof running late */
	FAULT_SITES,
};

/* How many allocation sites the report can name as walked. */
#define FAULT_WALKED_MAX 96

struct fault_state {
	atomic_long countdown[FAULT_SITES]; /* fire when it drops to 0; <= 0: disarmed */
	atomic_long fired[FAULT_SITES];	    /* how many times each site fired since armed */
	atomic_bool stall_released;	    /* "off" came: a stalled resize goes on */
	atomic_bool benign;		    /* the last allocation fault landed on a benign site */
	/* Every allocation site ("file.c:LINE") an alloc fault has landed on since the start. */
	const char *_Atomic walked[FAULT_WALKED_MAX];
};

#define FAULT_STR_(x) #x
#define FAULT_STR(x) FAULT_STR_(x)
/* The call site of an allocation, as the report names it. */
#define FAULT_HERE __FILE__ ":" FAULT_STR(__LINE__)

/* An allocator handed to a module below the pool (the name table, xattrs), zeroed memory or
 * NULL: the daemon's goes through fault_alloc_at, a unit test's is calloc. `site` is FAULT_HERE
 * of the module's call. */
typedef void *(*fault_alloc_fn)(void *ctx, const char *site, size_t size, bool benign);

#define fault_malloc(size) fault_alloc_at(FAULT_HERE, (size), false, false)
#define fault_calloc(n, size) fault_calloc_at(FAULT_HERE, (n), (size), false)
#define fault_calloc_benign(n, size) fault_calloc_at(FAULT_HERE, (n), (size), true)
#define fault_realloc(ptr, n, size) fault_realloc_at(FAULT_HERE, (ptr), (n), (size), false)
#define fault_strdup(s) fault_strdup_at(FAULT_HERE, (s))

/* A stalled request gives up waiting after this long, so a test that never releases it cannot
 * leave a daemon that never unmounts. */
#define FAULT_STALL_MAX_MS 30000

#ifdef POOLFS_FAULT_INJECTION
/* The state the allocation functions consult (the pool's): none until set, so what the daemon
 * allocates before its pool exists fails only as POOLFS_FAULT arms it (fault_arm_env). */
void fault_use(struct fault_state *f);
/* Arm from $POOLFS_FAULT (as fault_arm), into the state fault_use names or, before it, into
 * one of the daemon's start. 0, or -EINVAL for a value fault_arm refuses. */
int fault_arm_env(void);
/* The allocation hooks (use the macros above): `site` is FAULT_HERE; `zero` clears it. */
void *fault_alloc_at(const char *site, size_t size, bool zero, bool benign);
void *fault_calloc_at(const char *site, size_t n, size_t size, bool benign);
void *fault_realloc_at(const char *site, void *ptr, size_t n, size_t size, bool benign);
char *fault_strdup_at(const char *site, const char *s);
bool fault_fire(struct fault_state *f, enum fault_site site);
/* If `site` (FAULT_STALL, FAULT_REAP or FAULT_UNLINK) fires, wait until "off" (or
 * FAULT_STALL_MAX_MS). Call without the lock. */
void fault_stall_at(struct fault_state *f, enum fault_site site);
/* If a delay is armed at `site` (FAULT_FORGET, FAULT_PROOF), wait that long. Call without the
 * lock. */
void fault_delay_at(struct fault_state *f, enum fault_site site);
/* "alloc N", "reply N", "mark N", "stall N", "reap N", "unlink N", "open N" (N >= 1: the Nth
 * call from now fails, or stalls, once), "forget MS", "proof MS" or "off". 0 or -EINVAL. */
int fault_arm(struct fault_state *f, const char *value, size_t len);
/* "alloc armed|fired|benign|off\nreply ...\nmark ...\nstall ...\nreap ...\nunlink ...\n" and
 * the same for open, forget and proof,
 * then a line "walked SITE" for each allocation site walked so far, into buf: length or
 * -ERANGE. */
int fault_report(struct fault_state *f, char *buf, size_t len);
/* Memory for the controls' own texts (the report, the check): never failed, so the state of
 * an armed fault can be read. */
void *fault_controls_alloc(size_t size);
#else
static inline void fault_use(struct fault_state *f)
{
	(void)f;
}

static inline int fault_arm_env(void)
{
	return 0;
}

static inline void *fault_alloc_at(const char *site, size_t size, bool zero, bool benign)
{
	(void)site;
	(void)benign;
	return zero ? calloc(1, size) : malloc(size);
}

static inline void *fault_calloc_at(const char *site, size_t n, size_t size, bool benign)
{
	(void)site;
	(void)benign;
	return calloc(n, size);
}

static inline void *fault_realloc_at(const char *site, void *ptr, size_t n, size_t size,
				     bool benign)
{
	(void)site;
	(void)benign;
	return reallocarray(ptr, n, size);
}

static inline char *fault_strdup_at(const char *site, const char *s)
{
	(void)site;
	return strdup(s);
}

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

static inline void fault_delay_at(struct fault_state *f, enum fault_site site)
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
