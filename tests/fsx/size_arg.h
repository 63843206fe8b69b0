/* size_arg: the size arguments of the test tools (poolfs-fsx, poolfs-bench): a number with an
 * optional k/M/G suffix (powers of 1024; 1G, 1GB and 1GiB all mean 2^30). */
#ifndef POOLFS_SIZE_ARG_H
#define POOLFS_SIZE_ARG_H

#include <stddef.h>

/* Parse s into *out: 0, or -EINVAL for anything else, zero and negative numbers included. */
int size_arg_parse(const char *s, size_t *out);

#endif
