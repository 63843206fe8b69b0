/* datapath: the seam between the pool and the two ways file data can flow (docs/design.md "Data paths").
 *
 * pagecache   — every read/write/mmap fault goes through the daemon; RELEASE arrives only after the
 *               last handle and the last mapping are gone, so counting opens is exact.
 * passthrough — the kernel sends reads, writes and mmap straight to the backing tmpfs file; RELEASE
 *               arrives at close() even while mappings live, so after the last release the data
 *               path reports "maybe mapped" and clears it only when it can prove no mapping is left.
 * A data path never calls request handlers; it only reports to the pool (pool_recheck). */
#ifndef POOLFS_DATAPATH_H
#define POOLFS_DATAPATH_H

#include <fuse_lowlevel.h>
#include <stdbool.h>

#include "pool.h"

struct datapath {
	const char *name;
	/* At FUSE INIT: ask for the capabilities this path needs. 0 or -EOPNOTSUPP. */
	int (*init)(struct pool *p, struct fuse_conn_info *conn);
	/* Start/stop watchers (called once the pool exists / at unmount). */
	int (*start)(struct pool *p);
	void (*stop)(struct pool *p);
	/* An open of `n` is about to be answered with backing fd `fd` (lock held). */
	int (*open)(struct pool *p, struct node *n, fuse_req_t req, int fd, struct fuse_file_info *fi);
	/* The last handle on file `n` was released (lock held); may set life.maybe_mapped. It
	 * takes no request: it also runs after a reply failed, when the request is gone. */
	void (*last_release)(struct pool *p, struct node *n);
};

extern const struct datapath datapath_pagecache;
#ifdef POOLFS_HAVE_PASSTHROUGH
extern const struct datapath datapath_passthrough;
#endif

#endif
