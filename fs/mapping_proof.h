/* mapping_proof: proving a passthrough file's last mapping gone (see mapping_proof.c); used by
 * datapath_passthrough.c only. "Lock held" or "no lock" as each function says. */
#ifndef POOLFS_MAPPING_PROOF_H
#define POOLFS_MAPPING_PROOF_H

#include <stdbool.h>
#include <stdint.h>

#include "pool_api.h"

/* Open the fanotify group and the timers (p->dp_state), and stop and free them (after
 * watch_stop(): no callback runs any more). */
int proof_start(struct pool *p);
void proof_stop(struct pool *p);
/* No lock: true if a mapping or fd of the backing file of `ino` may still exist anywhere. */
bool proof_probe(struct pool *p, uid_t uid, uint64_t ino);
/* No lock: have the last close of the backing file of `ino` reported. True if it got a mark of
 * its own, to be removed with proof_unwatch_file once the file is proven free. */
bool proof_watch_file(struct pool *p, uid_t uid, uint64_t ino);
/* Lock held: drop the mark of a file proven free (if it has one). */
void proof_unwatch_file(struct pool *p, struct node *n);
/* Lock held: `n` waits for the proof that its last mapping is gone. */
bool proof_waiting(const struct node *n);
/* Lock held: `n` was proven free: hand it back to the pool, which may free it. `unmapped`: it
 * outlived its last close (a mapping, or the closing process's own reference), and its removal
 * is counted as its last unmap's (poolstats.h). */
void proof_set_free(struct pool *p, struct node *n, bool unmapped);
/* Lock held: probe every node that waits for the proof now, on the caller's thread, instead of
 * when the watch thread comes to it; how many were proven free (pool_commit removes what they
 * kept). A walk of the waiting nodes, for a full pool's refused resize only. */
size_t proof_recheck_now(struct pool *p);
/* Lock held: a probe of `ino` failed right after its close event (`after_event`) or its
 * RELEASE: probe it again soon. */
void proof_soon_add(struct pool *p, uint64_t ino, bool doubtful);

#endif
