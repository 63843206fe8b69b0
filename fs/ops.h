/* ops: the FUSE low-level request handlers, one table. Thin: decode, check permission, call the
 * pool, reply. */
#ifndef POOLFS_OPS_H
#define POOLFS_OPS_H

#include <fuse_lowlevel.h>

extern const struct fuse_lowlevel_ops poolfs_ops;

#endif
