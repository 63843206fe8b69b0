/* ops: the FUSE low-level request handlers, one table. Thin: decode, check permission, call the
 * pool (and the data path), reply. A handler writes no node and drops the lock only to reply:
 * the I/O between two lock sections is the pool's (docs/design.md "Layout"). */
#ifndef POOLFS_OPS_H
#define POOLFS_OPS_H

#include <fuse_lowlevel.h>

extern const struct fuse_lowlevel_ops poolfs_ops;

#endif
