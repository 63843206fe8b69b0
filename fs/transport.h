/* transport: how requests travel between the kernel and the daemon, read(2)/write(2) on /dev/fuse
 * or FUSE over io_uring (docs/interface.md, "Transport"). It owns the uring= decision: what this
 * build's libfuse can do, what the kernel offers, and the log lines that say which one is used. */
#ifndef POOLFS_TRANSPORT_H
#define POOLFS_TRANSPORT_H

#include <fuse_lowlevel.h>
#include <stdatomic.h>

#include "options.h"
#include "pool_api.h"

/* The kernel's switch for FUSE over io_uring; the admin sets it (docs/interface.md). */
#define TRANSPORT_URING_PARAM "/sys/module/fuse/parameters/enable_uring"

/* Before fuse_session_new(): asks libfuse for io_uring (its `-o io_uring`) when uring= and the
 * kernel allow it. 0, -EOPNOTSUPP when uring=on cannot be had here (the reason is printed), or
 * -ENOMEM. */
int transport_prepare(enum uring_choice choice, struct fuse_args *args);

/* In INIT, before anything is started: drops io_uring for uring=off and logs the transport.
 * -EOPNOTSUPP (and p->init_error) when uring=on but the kernel does not offer it. */
int transport_init(struct pool *p, struct fuse_conn_info *conn);

/* Called once by transport_note() for the first request that came over io_uring. */
void transport_first_uring(struct pool *p);

/* Per request, cheap: the first request that really arrives over io_uring is logged, so the log
 * tells "asked for" from "in use" (libfuse falls back to /dev/fuse if its rings fail to start). */
static inline void transport_note(struct pool *p, fuse_req_t req)
{
#ifdef POOLFS_HAVE_URING
	if (!atomic_load_explicit(&p->uring_seen, memory_order_relaxed) && fuse_req_is_uring(req))
		transport_first_uring(p);
#else
	(void)p;
	(void)req;
#endif
}

#endif
