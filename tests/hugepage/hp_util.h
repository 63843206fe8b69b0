/* What the hugepage suite's binaries share: where a mapping's pages come from
 * (/proc/self/smaps), the kernel's huge-page counters (/proc/vmstat), and the private tmpfs
 * instances a daemon holds open (its stores: the pool's own, and with max_user_size one per
 * user, docs/design.md "Per-user stores"). Plain functions, no cmocka: children may call them. */
#ifndef POOLFS_HP_UTIL_H
#define POOLFS_HP_UTIL_H

#include <stdint.h>
#include <sys/types.h>

#include "harness.h"

/* kB of PMD-mapped file or shmem pages in this process's mapping that contains addr, or -1. */
long hp_pmd_kb(const void *addr);

/* The value of key in /proc/vmstat, or -1. */
long hp_vmstat(const char *key);

/* The tmpfs instances the daemon holds open: pool_daemon_stores and struct pool_store
 * (harness.h). */

/* Whether the store holds the backing file of pool inode ino (named by its number,
 * docs/design.md "Backing store"): 1, 0, or -errno. */
int hp_store_holds(const struct pool_store *s, uint64_t ino);

/* The size of the store's file system in bytes (statfs), or -errno. */
long long hp_store_size(const struct pool_store *s);

/* An inotify descriptor watching the store's root, which does not keep the instance alive, or
 * -errno. */
int hp_store_watch(const struct pool_store *s);

/* Wait on such a descriptor until the instance has shut down (IN_UNMOUNT or IN_IGNORED): 0,
 * -ETIMEDOUT or -errno. The descriptor stays open. */
int hp_store_wait_gone(int watch, int timeout_ms);

#endif
