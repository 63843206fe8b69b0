/* datapath: the seam between the pool and the two ways file data can flow (docs/design.md "Data paths").
 *
 * pagecache   — every read/write/mmap fault goes through the daemon; RELEASE arrives only after the
 *               last handle and the last mapping are gone, so counting opens is exact.
 * passthrough — the kernel sends reads, writes and mmap straight to the backing tmpfs file; RELEASE
 *               arrives at close() even while mappings live, so after the last release the data
 *               path reports "maybe mapped" and clears it only when it can prove no mapping is left.
 * A data path never calls request handlers; it only reports to the pool (pool_mark). */
#ifndef POOLFS_DATAPATH_H
#define POOLFS_DATAPATH_H

#include <fuse_lowlevel.h>
#include <stdbool.h>

#include "pool_api.h"

/* Work of a last release to be done outside the lock (see release_begin). */
struct dp_release {
	bool pending; /* release_io and release_commit have work */
	bool probe;   /* a mapping may exist: release_io proves whether one does */
	uint64_t ino;
	uid_t uid;	    /* its owner: the store its backing file is in (backing.h) */
	uint32_t open_gen;  /* n->open_gen when the last handle went */
	uint32_t usage_gen; /* n->usage_gen then */
	int backing_id;	    /* passthrough registration to drop, 0 if none */
	bool busy;	    /* release_io: a mapping or fd may still exist */
	bool was_watched;   /* its backing file had a close-event mark before this release */
	bool watch_added;   /* release_io: the backing file got its own close-event mark */
	bool sized;	    /* release_io: nothing can change it any more, and it is `size` bytes */
	uint64_t size;
};

struct datapath {
	const char *name;
	/* At FUSE INIT: ask for the capabilities this path needs. 0 or -EOPNOTSUPP. */
	int (*init)(struct pool *p, struct fuse_conn_info *conn);
	/* Start/stop watchers (called once the pool exists / at unmount). */
	int (*start)(struct pool *p);
	void (*stop)(struct pool *p);
	/* An open of `n` is about to be answered with backing fd `fd` (lock held). *spare_id is a
	 * registration of `fd` made before the lock (register_early), or 0: the open takes it (and
	 * sets it to 0) if it needs one and `n` has none; the caller drops what is left after
	 * unlocking (unregister). */
	int (*open)(struct pool *p, struct node *n, fuse_req_t req, int fd, int *spare_id,
		    struct fuse_file_info *fi);
	/* OPEN and CREATE, without the lock: register `fd` if a handle opened with `flags` may
	 * need it, so the ioctl does not run under the lock. A backing id > 0, 0 if none is
	 * needed, or -errno. `unregister` drops one no node took. NULL when the path registers
	 * nothing. */
	int (*register_early)(struct pool *p, fuse_req_t req, int fd, int flags);
	void (*unregister)(struct pool *p, int backing_id);
	/* The last handle on file `n` was released: what the path does then, in three steps, so
	 * that RELEASE, the hot path, makes its system calls outside the pool lock (docs/design.md
	 * "Locking and threads"). `release_begin` (lock held) records in `rel` what must be done
	 * and may set life.maybe_mapped; `release_io` (no lock needed) does it; `release_commit`
	 * (lock held; `n` NULL if the node is gone) applies the outcome unless `n` was opened again
	 * meanwhile. The caller closes its own fd before release_io. The steps take no request:
	 * they also run, back to back under the lock, when a reply failed and the request is gone.
	 * NULL when the path has nothing to do then (the page cache: RELEASE follows the last
	 * mapping). */
	void (*release_begin)(struct pool *p, struct node *n, struct dp_release *rel);
	void (*release_io)(struct pool *p, struct dp_release *rel);
	void (*release_commit)(struct pool *p, struct node *n, const struct dp_release *rel);
	/* The pool is full (lock held): prove now which files that wait for the proof of their
	 * last mapping's end are free, rather than when the path's own thread comes to them;
	 * how many were. NULL when the path has no such files (the page cache). */
	size_t (*prove_now)(struct pool *p);
};

extern const struct datapath datapath_pagecache;
#ifdef POOLFS_HAVE_PASSTHROUGH
extern const struct datapath datapath_passthrough;
#endif

#endif
