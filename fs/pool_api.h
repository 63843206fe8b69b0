/* pool_api: what the request handlers, the data paths and main may call of the pool: their whole
 * view of it, with the data model (pool_model.h, read-only above the pool). Each declaration sits
 * under the file that defines it, the files in the order of the pool's layers, bottom first
 * (docs/design.md "Layout"; scripts/layers.py checks both). What only the pool's own files share
 * is pool_internal.h. Everything here runs with the pool lock held unless it says otherwise. */
#ifndef POOLFS_POOL_API_H
#define POOLFS_POOL_API_H

#include "pool_model.h"

/* ---- pool_core.c ---- */
void pool_lock(struct pool *p);
/* Whether another thread waits in pool_lock now: for a section whose work grows with its input
 * (a folder's snapshot, a batch of FORGETs), to let go between chunks. */
bool pool_lock_wanted(struct pool *p);
/* Only unlock: a section that goes on after a system call (what it marked waits for the commit
 * that ends it) or that changed nothing. Every other section ends with pool_commit. */
void pool_unlock(struct pool *p);
/* Allocations of pool state: zeroed; NULL when out of memory (or an injected fault, at the
 * caller's site: fault.h). */
void *pool_alloc_at(struct pool *p, size_t size, const char *site);
char *pool_strdup_at(struct pool *p, const char *s, const char *site);
#define pool_alloc(p, size) pool_alloc_at((p), (size), FAULT_HERE)
#define pool_strdup(p, s) pool_strdup_at((p), (s), FAULT_HERE)
/* The kernel may hold a stale (negative) entry for `name` in folder `dir_ino`: a reply that
 * created it was lost. Queue its invalidation (sent after unlock). */
void pool_forget_name(struct pool *p, uint64_t dir_ino, const char *name);
/* access.h's rule for `caller` doing `act` to `n`: 0 or the errno. */
int pool_may_act(struct pool *p, uid_t caller, const struct node *n, enum access_act act);
/* May `caller` look at / use `n` (everyone may use the shared root)? */
bool pool_may(struct pool *p, uid_t caller, const struct node *n);
void pool_log_denied(struct pool *p, uid_t caller, const char *what, const struct node *n);

/* ---- pool_reaper.c ---- */
/* Start the thread that unlinks small removed files: after daemonizing, as threads do not
 * survive fork(2). Until it runs, they are unlinked before the reply. No lock; 0 or -errno. */
int pool_reaper_start(struct pool *p);

/* ---- pool_tree.c ---- */
/* The section changed what keeps `n` (its names, handles, holds or mappings): the commit applies
 * the rule to it; with _subtree, to everything below it too (a folder hold ended, a folder
 * moved). */
void pool_mark(struct pool *p, struct node *n);
void pool_mark_subtree(struct pool *p, struct node *n);
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
/* RENAME_EXCHANGE: swap two names. 0 or -ENOMEM with nothing changed. */
int pool_exchange(struct pool *p, struct name *a, struct name *b);
/* An attribute of `n` changed (chmod, chown, times, size, xattrs): its ctime is now. */
void pool_touch_ctime(struct node *n);

/* ---- pool_usage.c ---- */
/* user.* xattrs of `n`, charged to its owner's max_user_meta (-EDQUOT past it). */
int pool_xattr_set(struct pool *p, struct node *n, const char *name, const void *value, size_t size,
		   int flags);
int pool_xattr_remove(struct pool *p, struct node *n, const char *name);
/* Quotas: account for `n` growing (or shrinking) to `new_size` bytes. -ENOSPC / -EDQUOT. */
int pool_reserve(struct pool *p, struct node *n, uint64_t new_size);
/* A user's usage (zeroes if it has none), for statfs. */
struct user_usage pool_user_usage(struct pool *p, uid_t uid);
/* File `n` got a handle that writes or maps the backing file without the daemon seeing it
 * (passthrough): its size may move unseen until it is read again after its last handle and
 * mapping are gone. 0 or -ENOMEM. */
int pool_unseen_track(struct pool *p, struct node *n);
/* `n`'s last handle went and nothing may map it: `size`, read outside the lock, is final
 * unless its accounting (`usage_gen`) or its opens (`open_gen`) moved meanwhile. */
void pool_unseen_released(struct pool *p, struct node *n, uint64_t size, uint32_t usage_gen,
			  uint32_t open_gen);
/* No lock (takes it twice, briefly): bring the usage counters up to date with the sizes of the
 * files that may have moved unseen, read between the two sections; the ones that can no longer
 * move leave `unseen`. Costs one fstatat per such file, none per other entry. 0 or -ENOMEM. */
int pool_unseen_settle(struct pool *p);

/* ---- pool_names.c ---- */
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

/* ---- pool_attrs.c ---- */
/* Fill a stat for `n` (files: from the backing file). */
int pool_stat(struct pool *p, struct node *n, struct stat *st);
/* The same for a file whose backing file's attributes the caller read itself (`backing`, with
 * fstat outside the lock: a new file in CREATE, GETATTR of a file in use). */
void pool_stat_with(struct pool *p, struct node *n, const struct stat *backing, struct stat *st);
/* The daemon changed `n`'s backing file (size, times): its cached attributes are stale. */
void pool_backing_changed(struct node *n);
/* A new file's backing attributes, `st`, known (nothing but the daemon touched it). */
void pool_backing_known(struct node *n, const struct stat *st);
/* utimensat(2)'s `ts` (UTIME_NOW, UTIME_OMIT) for `n`: a file's backing file, else the node's.
 * 0, -ESTALE or the errno. */
int pool_set_times(struct pool *p, struct node *n, const struct timespec ts[2]);
/* chmod: the permission bits of `mode` (access.h's effective mode). */
void pool_set_perm(struct node *n, mode_t mode);

/* ---- pool_handles.c ---- */
/* A file handle opened; the data path refused it after all; closed (true if it was the last). */
void pool_handle_opened(struct pool *p, struct node *n);
void pool_handle_unopened(struct pool *p, struct node *n);
bool pool_handle_closed(struct pool *p, struct node *n);
/* The data path proved `n`'s last mapping gone after its last close: a removal that follows is
 * counted as its last unmap's (poolstats.h). */
void pool_handle_unmapped(struct node *n);
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

/* ---- pool_room.c ---- */
/* What a request that grows a file may do when the pool refuses it: `prove`, the data path's
 * proof of files whose last mapping ended unseen, and their removal (lock held, dropped and taken
 * again; how many it freed; NULL: none); wait for FORGETs (`forgets`); all before one deadline. */
struct pool_room {
	size_t (*prove)(struct pool *p);
	bool forgets;
	bool proved;	    /* prove ran */
	bool store_retried; /* a store's refusal got its one retry without a wait */
	struct timespec until;
};
void pool_room_begin(struct pool_room *room, size_t (*prove)(struct pool *p), bool forgets);
/* Lock held (released meanwhile: look nodes up again). Growth was refused with ENOSPC or EDQUOT,
 * by the daemon's count or (`store_full`) by the store though the count said it fits. Make what
 * room can come back before the request's deadline: true if something came back and one more try
 * may succeed; false: the refusal stands. */
bool pool_room_wait(struct pool *p, struct pool_room *room, bool store_full);
/* RELEASE marks its span (no lock): the room of a file it removes comes back at its close(2),
 * after the count gave it back, and pool_room_wait waits for the RELEASEs in flight. */
void pool_release_enter(struct pool *p);
void pool_release_leave(struct pool *p);

/* ---- pool_resize.c ---- */
#define POOL_RESIZE_GROWS 1u	 /* reserve up to `end` (not for KEEP_SIZE, PUNCH_HOLE) */
#define POOL_RESIZE_SETS_SIZE 2u /* the file's size becomes `end` (truncate) */
/* A resize by fallocate(2) rather than a truncate. */
struct pool_fallocate {
	int mode;
	off_t off, len;
};
/* Lock held (and dropped for the I/O, so *np is looked up again after it): resize file *np per
 * `how` to `end`, by truncate (`fa` NULL) or fallocate, on `fd` or, if it is -1, on the backing
 * file opened here. The growth is reserved first, and allocated charged to the memory cgroup of
 * process `payer` (the caller; 0: the daemon, memcg.h); a refusal asks pool_room_wait (`room`).
 * 0, -EISDIR, -EFBIG, -ENOSPC, -EDQUOT, the I/O's errno, or -ESTALE if the node went meanwhile
 * (then *np is NULL). */
int pool_resize(struct pool *p, struct node **np, uint64_t end, unsigned how, int fd,
		const struct pool_fallocate *fa, pid_t payer, struct pool_room *room);
/* No lock: allocate [off, end) of the open backing file `fd` (keeping its size), charged to the
 * memory cgroup of process `payer`, before the daemon writes there (a page-cache WRITE that grows
 * the file). Nothing when the payer is the daemon's own cgroup or unknown. 0 or -errno
 * (-ENOSPC: the store is full; -ENOMEM: the payer's cgroup is, after its OOM kill). */
int pool_charge_growth(struct pool *p, pid_t payer, int fd, uint64_t off, uint64_t end);

/* ---- pool_texts.c ---- */
/* The user.poolfs.refs text of `n` in a new buffer (free() it), at most
 * ((size_t)POOLFS_XATTR_VALUE_MAX) bytes: when the hold lines would not fit, the last ones give
 * way to "more N". Returns the length or a negative errno. */
int pool_refs_text(struct pool *p, struct node *n, char **out);
/* user.poolfs.stat, naming `datapath` as the data path in use, from the counters as they are
 * (pool_unseen_settle first brings them up to date); returns length or negative errno. */
int pool_stat_text(struct pool *p, uid_t caller, const char *datapath, char *buf, size_t len);
/* user.poolfs.counters: the daemon's resident memory `rss_bytes` (read by the caller before the
 * lock), the pool's gauges and counters since the mount (poolstats.h) and the request latency
 * histogram (opstats.h), as "NAME [KEY] VALUE" lines; length or negative errno. */
int pool_counters_text(struct pool *p, uint64_t rss_bytes, char *buf, size_t len);

/* ---- pool_lifetime.c ---- */
/* End a section: apply the lifetime rule to every node marked in it (and what that removes in
 * turn), unlock, then hand invalidations to the notify thread, free forgotten nodes and unlink
 * or queue removed files' backing files. */
void pool_commit(struct pool *p);
/* Between the chunks of a section whose work grows with its input: commit, and lock again, after
 * a turn of another thread if one waits (pool_lock_wanted). Nothing found before may be used
 * after without being found again. */
void pool_yield(struct pool *p);
/* Fire lingering removals that are due. */
void pool_linger_expire(struct pool *p);
/* The kernel dropped `count` references to `n` (FORGET). */
void pool_forget(struct pool *p, struct node *n, uint64_t count);
/* Is `n` gone: no name, nothing using it, only the kernel's references left? */
bool pool_gone(const struct pool *p, const struct node *n);
/* The kernel got a reference to `n` (a LOOKUP, CREATE, MKDIR or READDIRPLUS reply). */
void pool_lookup_add(struct node *n);
/* May a reply naming `n` in `dir` now let the kernel cache the name? Not if it may not be cached
 * at all, nor while the entry is unused, on its way out (lingering): a poller waiting for the
 * name to vanish then sees it go from the daemon's own answer. */
bool pool_name_cached_now(const struct pool *p, const struct node *dir, const struct node *n);

/* ---- pool_stale.c: the kernel's one retry (docs/design.md "The LOOKUP/OPEN race") ---- */
/* An OPEN by thread `tid` reached entry `ino`, which is gone (no name, nothing using it),
 * through a reference the kernel cached: -ESTALE, so the kernel walks the path again from the
 * names; 0 (open the nameless file, as tmpfs opens one unlinked between two steps) when it is
 * that retry reaching the same entry, or what it looked up after its keep ran out. */
int pool_stale_answer(struct pool *p, pid_t tid, uint64_t ino);
/* Thread `tid` opened or made an entry: a retry it was in is over. */
void pool_stale_done(struct pool *p, pid_t tid);
/* A LOOKUP by thread `tid` answered `n` (NULL: an error or no such name). In its retry, the
 * entry it found keeps its name until that retry's OPEN comes, POOL_RETRY_GRACE_MS at most. */
void pool_stale_lookup(struct pool *p, pid_t tid, struct node *n);

/* ---- pool_holds.c ---- */
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

#ifdef POOLFS_FAULT_INJECTION
/* ---- pool_check.c (fault builds only) ---- */
/* Check every invariant of the node table, counters, names and holds: 0 and "ok\n" in buf, or
 * -EUCLEAN and a line naming the first one broken. */
int pool_check(struct pool *p, char *buf, size_t len);
/* How many entries still wait for the kernel or the mapping proof: a handle not yet released,
 * a last mapping not yet proven gone, a nameless entry not yet forgotten. A test that closed
 * everything waits for 0 before it looks at what its operation's aftermath did. */
struct pool_unsettled {
	size_t open, maybe_mapped, awaiting_forget; /* the entries in each state */
};
size_t pool_unsettled(struct pool *p, struct pool_unsettled *why);
#endif

/* ---- pool_setup.c ---- */
/* No lock (no other thread runs yet, or any more). */
int pool_init(struct pool *p, const struct pool_options *opts);
void pool_destroy(struct pool *p); /* accepts a half-built pool */

#endif
