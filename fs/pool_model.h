/* pool_model: the pool object's data — the node table, names, usage counters, holds and one
 * lock — shared by every pool module and read (never written) by the layers above. Functions
 * are declared elsewhere: what the handlers may call in pool_api.h, what only the pool's own
 * files call in pool_internal.h, each under the file that defines it (docs/design.md "Layout").
 *
 * Every field below is protected by `lock`. Handlers in ops_*.c lock, look nodes up, call one
 * pool_* operation and end the section with pool_commit(): each change of names, handles, holds
 * or mappings marks the nodes it touched, and the commit applies the lifetime rule to them (the
 * rule's only home, pool_lifetime.c), unlocks, and hands on what must run after the lock: name
 * invalidations to the notify thread, forgotten nodes freed, backing files unlinked
 * (docs/design.md "Locking and threads"). Handlers call no step of the rule themselves.
 *
 * Threads: the request threads (one per core over io_uring, libfuse's pool over /dev/fuse), the
 * watch thread (pidfds, cgroup events, timers, fanotify), the notify thread and the reaper thread
 * (pool_reaper.c, which never takes the pool lock). The lock is held only for bookkeeping; the
 * slow system calls of the hot paths run outside it: CREATE and OPEN make, open and register the
 * backing file before locking (register_early), resizes allocate between two lock sections
 * (pool_resize), RELEASE closes, unregisters and probes after unlocking (datapath.h
 * release_begin/io/commit), close events are probed in batches between two short lock sections,
 * and an idle file's attributes come from its node. A result computed outside the lock is applied
 * only if the node did not change meanwhile (open_gen). So two requests run at once on two cores,
 * meeting only in short sections.
 *
 * Lock order (a thread holding one may take those after it, never before):
 *   1. pool.lock
 *   2. watch.c regs_lock, notify.c queue lock, reaper.lock (pool_reaper.c), log.c sink lock
 *      (leaves: nothing is taken under them, and no kernel notification is sent while
 *      pool.lock is held)
 * next_ino, the opstats and poolstats counters, uring_seen and releases_in_flight are atomics and need no
 * lock. */
#ifndef POOLFS_POOL_MODEL_H
#define POOLFS_POOL_MODEL_H

#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "access.h"
#include "array.h"
#include "backing.h"
#include "fault.h"
#include "hash_table.h"
#include "holds.h"
#include "lifetime.h"
#include "memcg.h"
#include "name_table.h"
#include "opstats.h"
#include "poolstats.h"
#include "options.h"
#include "part_set.h"
#include "timer_heap.h"
#include "xattrs.h"
#include "poolfs_names.h"

#define POOL_ROOT_INO 1
#define POOL_MARK_NODE 1
#define POOL_MARK_SUBTREE 2
#define POOL_NAME_MAX 255
/* How long the kernel may cache names and attributes (docs/design.md, "Caching"). */
#define POOL_CACHE_SECONDS 3600.0
/* A symlink's target, at most (PATH_MAX - 1, as the kernel's own limit). */
#define POOL_TARGET_MAX 4095
/* What each name beyond an entry's first costs its owner's max_user_meta: a name record and the
 * longest text, a flat price so that any name may go first (docs/interface.md "Limits"). */
#define POOL_NAME_COST 320u
/* For container_of: a node from its embedded name ends. */
#define POOL_NODE_OF_ENDS(e) ((struct node *)(void *)((char *)(e)-offsetof(struct node, ends)))
/* The node of an entry table link, NULL for none: a walk of every node goes, after
 * hash_settle(&p->inos), `for b < p->inos.nbuckets: for n = POOL_NODE_OF_LINK(p->inos.buckets[b]); n; n = POOL_NODE_OF_LINK(n->ino_link.next)`. */
#define POOL_NODE_OF_LINK(l)                                                                       \
	((l) ? (struct node *)(void *)((char *)(l)-offsetof(struct node, ino_link)) : NULL)

struct node {
	uint64_t ino;
	mode_t type; /* S_IFREG, S_IFDIR, S_IFLNK, S_IFIFO or S_IFSOCK */
	uid_t uid;
	gid_t gid;
	mode_t perm; /* effective permission bits */
	/* Its names, and for a folder the names in it (name_table.h). A folder has at most one name;
	 * a file, symlink, FIFO or socket one per hard link. */
	struct name_ends ends;
	struct hash_link ino_link; /* in the entry table, by inode number */
	char *target;		   /* symlinks: what it points to */
	struct lifetime life;
	struct timespec atime, mtime; /* all but files, which use the backing file's */
	struct timespec ctime;	      /* files: the last change the backing file did not see */
	struct xattr_list xattrs;
	struct hold *holds;
	uint64_t reserved;	 /* bytes counted against the quotas (files) */
	uint64_t linger_due_ms;	 /* monotonic ms when a lingering removal is due, 0 if none */
	uint64_t linger_base_ms; /* when linger= ends for this unused spell, 0 while in use */
	/* A thread in the kernel's retry of an open looked it up: its removal waits until then for
	 * that OPEN (pool_stale.c), 0 if none. */
	uint64_t retry_until_ms;
	bool awaiting_forget; /* counted in the pool's awaiting_forget */
	int backing_id;	      /* passthrough registration, 0 if none */
	uint32_t open_gen; /* counts opens: a probe made outside the lock is stale once it moved */
	/* RELEASE of the last handle is probing outside the lock; LOOKUPs of the node wait for it
	 * (probe_done), as they waited for the lock when it probed under it. */
	bool releasing;
	/* Passthrough: the open handles go through the page cache (a small file opened read-only). */
	bool io_cached;
	/* Passthrough: whatever the kernel's page cache holds of the file is what the backing file
	 * holds: only page-cache handles were opened since the cache was last dropped, so no
	 * passthrough write or mapped store went around it. The next cached open keeps it. */
	bool cache_fresh;
	/* Passthrough: the kernel's page cache of the inode may hold pages: a page-cache handle
	 * was opened since the kernel last forgot the inode (its eviction empties the cache). While
	 * unset a first cached open fills the cache itself (datapath_passthrough.c cache_push). */
	bool cache_used;
	/* Passthrough: a handle that could map the file (opened for reading: mmap needs it) was
	 * opened since the file was last known unmapped. Without one, the last RELEASE has nothing
	 * to prove (write-only handles, as `tar -x` and `cp` make). */
	bool may_map;
	/* Passthrough: the backing file has a fanotify mark of its own (it was still in use at its
	 * last RELEASE), removed once the file is proven free. */
	bool close_watched;
	/* Passthrough: on the mapping proof's doubt list (mapping_proof.c doubt_add). */
	bool proof_doubt;
	/* Files: the backing file's size and times as last read. Valid only while nothing but the
	 * daemon can change the backing file (no handle, no possible mapping), so an idle file's
	 * LOOKUP or GETATTR makes no system call (docs/design.md "Caching"). */
	bool battr_valid;
	/* Counts the changes of `reserved` (pool_account): a size read outside the lock is applied
	 * only if it did not move meanwhile (pool_unseen_settle). */
	uint32_t usage_gen;
	struct stat battr;
	struct node *zombie_next; /* on the free-after-unlock list */
	struct node *mark_next;	  /* on the section's list of touched nodes (pool_mark) */
	uint8_t marked;		  /* 0, or on that list: POOL_MARK_NODE or POOL_MARK_SUBTREE */
	/* What let go of it last (enum poolstats_removal): its removal is counted under it. */
	uint8_t let_go;
	uint32_t unseen_idx; /* its place in the pool's `unseen` (part_set.h), 0 if none */
};

/* A folder? (The kind is the node's `type`; the pure modules keep their own copy of the bit:
 * ends.is_dir for the name table, life.is_dir for the lifetime rule, set once at creation.) */
static inline bool node_is_dir(const struct node *n)
{
	return S_ISDIR(n->type);
}

struct user_usage {
	uid_t uid;
	uint64_t entries;
	uint64_t bytes;
	uint64_t meta; /* daemon memory for the user's xattrs and hold records */
	struct user_usage *next;
};

struct pending_inval {
	struct pending_inval *next;
	uint64_t parent;
	uint64_t ino; /* the entry the name named, when it went with the name: the kernel is told
		       * it was deleted (docs/design.md "Name invalidation"); 0 if unknown */
	size_t namelen;
	char name[];
};

/* Intrusive list link for handles the kernel may never release (the mount can go first). */
struct handle_link {
	struct handle_link *prev, *next;
};

/* A backing file to unlink after the lock is released: its inode and owner (its store),
 * whether the reaper may unlink it (`small`: at most POOL_REAP_MAX, or no reply waits for its
 * room), and whether it is counted in the reaper's `outside` (set by pool_backing_list_take on
 * the pool's `unlinks`). */
struct backing_file {
	uint64_t ino;
	uid_t uid;
	bool small;
	bool outside;
};
/* Removed files of at most this many bytes are unlinked by the reaper thread, after the reply;
 * bigger ones before it, so that their room is back when unlink(2) returns (pool_reaper.c). */
#define POOL_REAP_MAX (256u * 1024)

/* A growing array of backing files to unlink (pool_reaper.c: pool_backing_list_push). With
 * `outside` set (the pool's `unlinks`), taking the files counts them there. */
struct backing_list {
	struct backing_file *files;
	size_t count, cap;
	atomic_size_t *outside;
};

/* The reaper thread's queue (pool_reaper.c): backing files of small removed files. */
struct reaper {
	pthread_mutex_t lock; /* a leaf: never held with the pool lock */
	pthread_cond_t wake;  /* the queue got its first file, or stop */
	pthread_cond_t done;  /* a batch was unlinked */
	struct backing_list queue;
	size_t busy; /* taken by the thread, not yet unlinked */
	/* Taken from the pool's `unlinks` under the pool lock by pool_commit, and neither unlinked
	 * nor queued here yet: their names are gone but not their room (pool_reaper_wait). Raised
	 * without `lock` (the pool lock orders it before the removal shows); lowered under it. */
	atomic_size_t outside;
	bool stop, started;
	pthread_t thread;
};

struct datapath;
struct watch;

/* Threads answered ESTALE whose retry has not come yet (pool_stale.c): a free slot for each new
 * one, the oldest overwritten only when all are live, since a retry follows at once and a thread
 * may end without one. */
#define POOL_STALE_SLOTS 64
#ifdef POOLFS_FAULT_INJECTION
/* A test may stall a retry's OPEN (fault.h "open") for as long as any stall. */
#define POOL_RETRY_GRACE_MS FAULT_STALL_MAX_MS
#else
#define POOL_RETRY_GRACE_MS 500
#endif
struct stale_threads {
	pid_t tid[POOL_STALE_SLOTS];
	uint64_t answered[POOL_STALE_SLOTS];	/* the entry its OPEN found gone */
	uint64_t found[POOL_STALE_SLOTS];	/* the entry its retry last looked up, or 0 */
	uint64_t answered_at[POOL_STALE_SLOTS]; /* `answers` when it was taken: the oldest goes */
	uint64_t answers;			/* ESTALE answers so far */
	unsigned live; /* slots in use: opens skip the scan while none is */
};

struct pool {
	pthread_mutex_t lock;
	/* Threads in pool_lock now: a section that grows with its input lets go between chunks
	 * while any waits (pool_lock_wanted). */
	atomic_uint lock_waiters;
	/* Times pool_lock took the lock, and the sections in pool_yield waiting (on lock_turn, with
	 * `lock`) for another thread's turn: the mutex is not fair, so a section that lets go and
	 * locks again would take it back before the thread it woke got a CPU. */
	uint64_t lock_turns;
	unsigned lock_yielders;
	pthread_cond_t lock_turn;
	uint64_t lock_handoffs;	   /* turns pool_yield gave another thread (user.poolfs.counters) */
	pthread_cond_t probe_done; /* a node's `releasing` went false (with `lock`) */
	/* Entries with no name that nothing uses, kept only while the kernel may still open them
	 * (docs/design.md "The LOOKUP/OPEN race"), and a broadcast (with `lock`) each time one of
	 * them is destroyed: their room is still counted until then. */
	size_t awaiting_forget;
	uint64_t forgotten;
	pthread_cond_t forgotten_cond;
	struct pool_options opts;
	struct access_policy policy;
	struct backing backing;
	struct memcg memcg; /* whose memory cgroup pays for growth (memcg.h) */
	uid_t owner_uid;
	gid_t owner_gid;
	pid_t daemon_pid; /* to ignore our own fanotify events */
	struct node *root;
	struct stale_threads stale;
	/* The next inode number: taken without the lock (pool_new_ino), since CREATE makes the
	 * backing file, named by it, before taking the lock. Never reused. */
	_Atomic uint64_t next_ino;
	struct hash_table inos;	 /* every node by inode number (pool_tree.c; hash_table.h) */
	struct name_table names; /* every name, apart from the entries (name_table.h) */
	struct node *zombies;
	struct node *marked; /* touched in this section, for pool_commit (mark_next) */
	struct pending_inval *inval_head, **inval_tail;
	/* Backing files of removed nodes, unlinked by pool_commit() after the lock is released:
	 * freeing a big file's pages takes milliseconds (docs/design.md "Locking and threads"). */
	struct backing_list unlinks;
	struct reaper reaper; /* small ones go to its thread (pool_reaper.c) */
	/* The usage and state counters, kept as things change so that reading them costs the same
	 * at any size (what user.poolfs.stat and metrics read): entries, bytes, meta and `users`
	 * here, then `lingering`, `unseen` (.front: waiting for the mapping proof) and
	 * `awaiting_forget`. */
	uint64_t entries; /* live files and folders, root excluded */
	uint64_t bytes;	  /* sum of `reserved` */
	uint64_t meta;	  /* sum of the users' `meta` */
	struct user_usage *users;
	struct hold_source *sources;
	struct handle_link dir_handles; /* open folder handles (sentinel), freed at unmount */
	size_t lingering;		/* nodes with linger_due_ms set */
	/* (linger_due_ms, ino) of the lingering nodes, the next due on top: an entry whose node
	 * no longer lingers at that time is dropped when it comes up (pool_lifetime.c). */
	struct timer_heap lingers;
	/* Files whose size may have moved without the daemon seeing it (passthrough handles write
	 * and map the backing file directly): in the front part the ones waiting for the proof of
	 * their last mapping's end (proof_waiting), in the back part the others, in use or idle
	 * but not read since. Every other file's `reserved` is exact, so usage is read from the
	 * counters and re-read only for these (pool_usage.c; docs/design.md "Work that grows with
	 * the pool"). */
	struct part_set unseen;
	const struct datapath *dp;
	void *dp_state;
	struct watch *watch;
	int linger_timer_fd;
	int hold_poll_fd; /* timerfd for processes watched without a pidfd, -1 until needed */
	char cgroup2_root[4096]; /* where cgroup v2 is mounted, "" if nowhere */
	/* Hands a name to the kernel-invalidation thread (set by main.c); with `ino`, the kernel
	 * is told the name's entry was deleted. 0 or -ENOMEM. */
	int (*inval)(void *ctx, uint64_t parent, const char *name, size_t len, uint64_t ino);
	void *inval_ctx;
	double entry_timeout, attr_timeout;
	const char *mountpoint;
	void *session;		  /* struct fuse_session *, to stop the loop from INIT */
	const char *init_error;	  /* why INIT refused the requested data path */
	struct fault_state fault; /* test-only fault injection (fault.h); inert otherwise */
	struct opstats opstats;	  /* requests served, by type (lock-free) */
	struct poolstats stats;	  /* removals, refusals, denials, gauges (lock-free) */
	atomic_int uring_seen;	  /* transport.h: a request came over io_uring (lock not needed) */
	/* RELEASEs between pool_release_enter and _leave (no lock): the last one out broadcasts
	 * releases_drained under `lock` if room_waiters (raised under `lock` before they test the
	 * count) says someone waits for the room they give back (pool_room_wait). */
	atomic_int releases_in_flight;
	atomic_int room_waiters;
	pthread_cond_t releases_drained;
	/* log_denied rate limit */
	long denied_window;
	int denied_count;
};

#endif
