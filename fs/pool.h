/* pool: the pool object — node table, names, usage counters, holds, one lock — and what the
 * request handlers may call: this header is their whole view of the pool. The pool's own files
 * share more through pool_internal.h, in layers that call only downward (docs/design.md
 * "Layout"); which file defines each function below is in pool.c's header comment.
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
 * next_ino, the opstats counters, uring_seen and releases_in_flight are atomics and need no
 * lock. */
#ifndef POOLFS_POOL_H
#define POOLFS_POOL_H

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
#include "name_table.h"
#include "opstats.h"
#include "options.h"
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
/* The node of an entry table link, NULL for none: a walk of every node goes
 * `for b < p->inos.nbuckets: for n = POOL_NODE_OF_LINK(p->inos.buckets[b]); n; n = POOL_NODE_OF_LINK(n->ino_link.next)`. */
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
	 * (release_done), as they waited for the lock when it probed under it. */
	bool releasing;
	/* Passthrough: the open handles go through the page cache (a small file opened read-only). */
	bool io_cached;
	/* Passthrough: a handle that could map the file (opened for reading: mmap needs it) was
	 * opened since the file was last known unmapped. Without one, the last RELEASE has nothing
	 * to prove (write-only handles, as `tar -x` and `cp` make). */
	bool may_map;
	/* Passthrough: the backing file has a fanotify mark of its own (it was still in use at its
	 * last RELEASE), removed once the file is proven free. */
	bool close_watched;
	/* Files: the backing file's size and times as last read. Valid only while nothing but the
	 * daemon can change the backing file (no handle, no possible mapping), so an idle file's
	 * LOOKUP or GETATTR makes no system call (docs/design.md "Caching"). */
	bool battr_valid;
	struct stat battr;
	struct node *zombie_next; /* on the free-after-unlock list */
	struct node *mark_next;	  /* on the section's list of touched nodes (pool_mark) */
	uint8_t marked;		  /* 0, or on that list: POOL_MARK_NODE or POOL_MARK_SUBTREE */
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

/* Threads answered ESTALE whose retry has not come yet (pool_stale.c): the last few, oldest
 * overwritten, since a retry follows at once and a thread may end without one. */
#define POOL_STALE_SLOTS 64
#define POOL_RETRY_GRACE_MS 500
struct stale_threads {
	pid_t tid[POOL_STALE_SLOTS];
	unsigned next;
	unsigned live; /* slots in use: opens skip the scan while none is */
};

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t release_done; /* a node's `releasing` went false (with `lock`) */
	/* Entries with no name that nothing uses, kept only while the kernel may still open them
	 * (docs/design.md "The LOOKUP/OPEN race"), and a broadcast (with `lock`) each time one of
	 * them is destroyed: their room is still counted until then. */
	size_t awaiting_forget;
	uint64_t forgotten;
	pthread_cond_t forgotten_cond;
	struct pool_options opts;
	struct access_policy policy;
	struct backing backing;
	uid_t owner_uid;
	gid_t owner_gid;
	pid_t daemon_pid; /* to ignore our own fanotify events */
	struct node *root;
	struct stale_threads stale;
	/* In pool_forget: what it destroys goes to the reaper whatever its size. No reply waits
	 * for a FORGET, and libfuse starts no new worker for one, so it must not block on a big
	 * unlink (docs/design.md "The LOOKUP/OPEN race"). Lock held. */
	bool forgetting;
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
	uint64_t entries;     /* live files and folders, root excluded */
	uint64_t bytes;	      /* sum of `reserved` */
	uint64_t meta;	      /* sum of the users' `meta` */
	struct user_usage *users;
	struct hold_source *sources;
	struct handle_link dir_handles; /* open folder handles (sentinel), freed at unmount */
	size_t lingering;		/* nodes with linger_due_ms set */
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
	atomic_int uring_seen;	  /* transport.h: a request came over io_uring (lock not needed) */
	/* RELEASEs between pool_release_enter and _leave (no lock): the last one out broadcasts
	 * release_done under `lock` if room_waiters (raised under `lock` before they test the
	 * count) says someone waits for the room they give back (pool_wait_room). */
	atomic_int releases_in_flight;
	atomic_int room_waiters;
	/* log_denied rate limit */
	long denied_window;
	int denied_count;
};

int pool_init(struct pool *p, const struct pool_options *opts);
/* Start the thread that unlinks small removed files (pool_reaper.c): after daemonizing, as
 * threads do not survive fork(2). Until it runs, they are unlinked before the reply. 0 or
 * -errno. */
int pool_reaper_start(struct pool *p);
void pool_destroy(struct pool *p); /* accepts a half-built pool */

void pool_lock(struct pool *p);
/* End a section: apply the lifetime rule to every node marked in it (and what that removes in
 * turn), unlock, then hand invalidations to the notify thread, free forgotten nodes and unlink
 * or queue removed files' backing files. */
void pool_commit(struct pool *p);
/* Only unlock: a section that goes on after a system call (what it marked waits for the commit
 * that ends it) or that changed nothing. */
void pool_unlock(struct pool *p);
/* The section changed what keeps `n` (its names, handles, holds or mappings): the commit applies
 * the rule to it; with _subtree, to everything below it too (a folder hold ended, a folder
 * moved). */
void pool_mark(struct pool *p, struct node *n);
void pool_mark_subtree(struct pool *p, struct node *n);

/* Allocations of pool state: zeroed; NULL when out of memory (or an injected fault, at the
 * caller's site: fault.h). */
void *pool_alloc_at(struct pool *p, size_t size, const char *site);
char *pool_strdup_at(struct pool *p, const char *s, const char *site);
#define pool_alloc(p, size) pool_alloc_at((p), (size), FAULT_HERE)
#define pool_strdup(p, s) pool_strdup_at((p), (s), FAULT_HERE)

struct node *pool_node(struct pool *p, uint64_t ino); /* NULL if unknown */
/* The entry named `name` in `dir`, NULL if none. */
struct node *pool_child(struct pool *p, struct node *dir, const char *name);

/* A fresh inode number, never used before and never reused. No lock needed. */
uint64_t pool_new_ino(struct pool *p);
/* The entry a name names, the folder it is in (NULL once detached). */
struct node *pool_name_entry(const struct name *nm);
/* The folder of `n`'s newest name: a folder's folder (it has one name), a new entry's; NULL for
 * the root and for an entry without a name. */
struct node *pool_parent(const struct node *n);
/* The name `text` in `dir`, NULL if none. */
struct name *pool_name_in(struct pool *p, struct node *dir, const char *text);
/* Does `n` have a backing file (a regular file)? Folders, symlinks, FIFOs and sockets do not. */
bool pool_has_backing(const struct node *n);

/* Create an entry of `type` (S_IFREG, S_IFDIR, S_IFLNK with `target`, S_IFIFO, S_IFSOCK) named
 * `name` under `dir`, with inode number `ino` (pool_new_ino); for a file its backing file exists
 * already (the caller made it before taking the lock, and removes it if this fails). Checks are
 * done by the caller. -EDQUOT past the creator's max_user_entries or (a symlink's target)
 * max_user_meta, -ENOSPC, -ENOMEM. */
int pool_create(struct pool *p, struct node *dir, const char *name, mode_t type, uid_t uid,
		gid_t gid, mode_t mode, const char *target, uint64_t ino, struct node **out);
/* Give linked, non-folder `n` one more name, `name` in `dir` (free: the caller checked). Every
 * name beyond an entry's first is charged to its owner's max_user_meta (POOL_NAME_COST).
 * -EMLINK, -EDQUOT, -ENOSPC, -ENOMEM. */
int pool_link(struct pool *p, struct node *n, struct node *dir, const char *name);

/* Remove one name (unlink/rmdir/rename-over); an entry's last name takes its holds with it. */
void pool_unlink(struct pool *p, struct name *nm);
/* rename: move name `nm` to `name` in `dir`, keeping its entry's holds; `replaced` (if not
 * NULL) is the name there now, which is removed (pool_unlink) in the same step. All or
 * nothing: 0, or -ENOMEM with nothing changed. The entries are marked. */
int pool_move(struct pool *p, struct name *nm, struct node *dir, const char *name,
	      struct name *replaced);
/* RENAME_EXCHANGE: swap two names. 0 or -ENOMEM with nothing changed. */
int pool_exchange(struct pool *p, struct name *a, struct name *b);

/* Fire lingering removals that are due. */
void pool_linger_expire(struct pool *p);

void pool_forget(struct pool *p, struct node *n, uint64_t count);
/* A quota said no while removed entries still count until the kernel lets go of them: wait
 * (lock held, released meanwhile) for the next of them to go, at most 2 s. True if one went,
 * and trying again may succeed. Nodes may have been freed meanwhile: look them up again. */
bool pool_wait_forgotten(struct pool *p);

/* The kernel's one retry (pool_stale.c; docs/design.md "The LOOKUP/OPEN race"). A request by
 * thread `tid` reached an entry that is gone (no name, nothing using it) through a reference the
 * kernel cached: -ESTALE the first time, so the kernel walks the path again from the names;
 * `fresh` (what tmpfs gives for an entry gone between two steps) when it is the retry. */
int pool_stale_answer(struct pool *p, pid_t tid, int fresh);
/* Thread `tid` opened or made an entry: a retry it was in is over. */
void pool_stale_done(struct pool *p, pid_t tid);
/* A LOOKUP by thread `tid` answered `n` (NULL: an error or no such name). In its retry, the
 * entry it found keeps its name until that retry's OPEN comes, POOL_RETRY_GRACE_MS at most. */
void pool_stale_lookup(struct pool *p, pid_t tid, struct node *n);
/* Is `n` gone: no name, nothing using it, only the kernel's references left (pool_lifetime.c)? */
bool pool_gone(const struct pool *p, const struct node *n);
/* The kernel got a reference to `n` (a LOOKUP, CREATE, MKDIR or READDIRPLUS reply). */
void pool_lookup_add(struct node *n);
/* May a reply naming `n` in `dir` now let the kernel cache the name? Not if it may not be cached
 * at all, nor while the entry is unused, on its way out (lingering): a poller waiting for the
 * name to vanish then sees it go from the daemon's own answer. */
bool pool_name_cached_now(const struct pool *p, const struct node *dir, const struct node *n);
/* The kernel may hold a stale (negative) entry for `name` in folder `dir_ino`: a reply that
 * created it was lost. Queue its invalidation (sent after unlock). */
void pool_forget_name(struct pool *p, uint64_t dir_ino, const char *name);

/* Fill a stat for `n` (files: from the backing file). */
int pool_stat(struct pool *p, struct node *n, struct stat *st);
/* The same for a file whose backing file's attributes the caller read itself (`backing`, with
 * fstat outside the lock: a new file in CREATE, GETATTR of a file in use). */
void pool_stat_with(struct pool *p, struct node *n, const struct stat *backing, struct stat *st);
/* The daemon changed `n`'s backing file (size, times): its cached attributes are stale. */
void pool_backing_changed(struct node *n);
/* An attribute of `n` changed (chmod, chown, times, size, xattrs): its ctime is now. */
void pool_touch_ctime(struct node *n);
/* A new file's backing attributes, `st`, known (nothing but the daemon touched it). */
void pool_backing_known(struct node *n, const struct stat *st);
/* utimensat(2)'s `ts` (UTIME_NOW, UTIME_OMIT) for `n`: a file's backing file, else the node's.
 * 0, -ESTALE or the errno. */
int pool_set_times(struct pool *p, struct node *n, const struct timespec ts[2]);
/* chmod: the permission bits of `mode` (access.h's effective mode). */
void pool_set_perm(struct node *n, mode_t mode);

/* user.* xattrs of `n`, charged to its owner's max_user_meta (-EDQUOT past it). */
int pool_xattr_set(struct pool *p, struct node *n, const char *name, const void *value, size_t size,
		   int flags);
int pool_xattr_remove(struct pool *p, struct node *n, const char *name);

/* Quotas: account for `n` growing (or shrinking) to `new_size` bytes. -ENOSPC / -EDQUOT. */
int pool_reserve(struct pool *p, struct node *n, uint64_t new_size);

#define POOL_RESIZE_GROWS 1u	 /* reserve up to `end` (not for KEEP_SIZE, PUNCH_HOLE) */
#define POOL_RESIZE_SETS_SIZE 2u /* the file's size becomes `end` (truncate) */
/* A resize by fallocate(2) rather than a truncate. */
struct pool_fallocate {
	int mode;
	off_t off, len;
};
/* Lock held (and dropped for the I/O, so *np is looked up again after it): resize file *np per
 * `how` to `end`, by truncate (`fa` NULL) or fallocate, on `fd` or, if it is -1, on the backing
 * file opened here. The growth is reserved first. 0, -EISDIR, -EFBIG, -ENOSPC, -EDQUOT, the
 * I/O's errno, or -ESTALE if the node went meanwhile (then *np is NULL). */
int pool_resize(struct pool *p, struct node **np, uint64_t end, unsigned how, int fd,
		const struct pool_fallocate *fa);

/* Per-user stores (backing.h): a file's room in its owner's tmpfs comes back only once the last
 * reference to its backing file goes, which RELEASE drops after the daemon's count already gave
 * it back. RELEASE marks that span (no lock; nothing without per-user stores), and a resize that
 * the store refuses with ENOSPC while the count says it fits waits for it (bounded: 2 s) before
 * its one retry. */
void pool_release_enter(struct pool *p);
void pool_release_leave(struct pool *p);
/* No lock: a store said ENOSPC though the daemon's count says there is room. Wait (at most 2 s
 * each) for RELEASEs in flight and for the reaper's queue (pool_reaper.c): true if there was
 * anything to wait for, and one retry may then succeed. */
bool pool_wait_room(struct pool *p);

/* Handles (pool_handles.c; lock held). A file handle opened; the data path refused it after
 * all; closed (true if it was the last). */
void pool_handle_opened(struct node *n);
void pool_handle_unopened(struct pool *p, struct node *n);
bool pool_handle_closed(struct pool *p, struct node *n);
/* The last RELEASE of `n` probes outside the lock (`probing`): LOOKUPs of it wait
 * (pool_wait_release). Then, with the lock again: the probe of inode `ino` is over; returns the
 * node, NULL if it went. */
void pool_release_probing(struct node *n, bool probing);
struct node *pool_release_probed(struct pool *p, uint64_t ino, bool probed);
/* If `n`'s last RELEASE is probing, wait for a probe to end (the lock is dropped meanwhile:
 * look `n` up again) and return true; else false. */
bool pool_wait_release(struct pool *p, const struct node *n);
/* A folder handle `h` of `n` opened, closed (`n` may be NULL: the node went). The pool keeps
 * the open ones listed, to free at unmount. */
void pool_dir_opened(struct pool *p, struct node *n, struct handle_link *h);
void pool_dir_closed(struct pool *p, struct node *n, struct handle_link *h);
/* pool_stat for a reply: a file in use is statted with the lock dropped, so *np is looked up
 * again (NULL and -ESTALE if it went). */
int pool_stat_fresh(struct pool *p, struct node **np, struct stat *st);

/* The caller a hold is taken for, with what /proc says about it read before the pool lock
 * (pool_hold_caller): the lock is not held across those reads (docs/design.md "What runs
 * outside the lock"). */
struct hold_caller {
	pid_t tid;  /* the thread the kernel reported */
	pid_t tgid; /* its process; 0 if not looked up, -1 if gone */
	pid_t sid;  /* session holds: its session; 0 if not looked up, -1 if gone */
	/* Session holds in a session whose leader is gone: the source found by the /proc walk
	 * (session_anchor), anchor_kind HOLD_PIN if not looked up. */
	enum hold_kind anchor_kind;
	pid_t anchor;
	int cgroup_r; /* cgroup holds: 0 with `cgroup` found, else a negative errno */
	char cgroup[4096];
};
/* No lock: look up what a hold of `kind` taken by thread `tid` needs from /proc. */
void pool_hold_caller(const struct pool *p, enum hold_kind kind, pid_t tid, struct hold_caller *c);
/* The autohold rule (holds.h hold_autohold_kinds): what /proc says about a creator, read before
 * the lock (no lock), and the hold it gets on the entry `n` it made. Never fails the create: a
 * hold that cannot be had is logged, and the entry lives by the strict lifetime rule. */
void pool_autohold_caller(const struct pool *p, pid_t tid, struct hold_caller *who);
void pool_autohold(struct pool *p, struct node *n, uid_t uid, const struct hold_caller *who);
/* Holds: `who` as pool_hold_caller() filled it for req->kind (if it did not, the lookups are
 * made here, under the lock). -ENOENT for an entry with no name. */
int pool_hold(struct pool *p, struct node *n, uid_t uid, const struct hold_caller *who,
	      const struct hold_request *req);
int pool_release_holds(struct pool *p, struct node *n, uid_t uid); /* -ENODATA if none */

/* The user.poolfs.refs text of `n` in a new buffer (free() it), at most ((size_t)POOLFS_XATTR_VALUE_MAX)
 * bytes: when the hold lines would not fit, the last ones give way to "more N". Returns the
 * length or a negative errno. */
int pool_refs_text(struct pool *p, struct node *n, char **out);
/* user.poolfs.stat, naming `datapath` as the data path in use; returns length or negative errno. */
int pool_stat_text(struct pool *p, uid_t caller, const char *datapath, char *buf, size_t len);
/* A user's usage (zeroes if it has none), for statfs. */
struct user_usage pool_user_usage(struct pool *p, uid_t uid);

#ifdef POOLFS_FAULT_INJECTION
/* Check every invariant of the node table, counters, names and holds: 0 and "ok\n" in buf, or
 * -EUCLEAN and a line naming the first one broken (pool_check.c, fault builds only). */
int pool_check(struct pool *p, char *buf, size_t len);
#endif

/* access.h's rule for `caller` doing `act` to `n`: 0 or the errno. */
int pool_may_act(struct pool *p, uid_t caller, const struct node *n, enum access_act act);
/* May `caller` look at / use `n` (everyone may use the shared root)? */
bool pool_may(struct pool *p, uid_t caller, const struct node *n);
void pool_log_denied(struct pool *p, uid_t caller, const char *what, const struct node *n);

#endif
