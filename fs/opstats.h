/* opstats: how many requests of each type the daemon served and the time it spent in their
 * handlers (wall time from the handler's start to its return, the reply included), and how long
 * threads waited to take the pool lock (docs/design.md "Work that grows with the pool").
 *
 * The counters are lock-free (atomics) so counting costs no contention. The pool's owner reads
 * them as text from the root's user.poolfs.ops xattr and resets them by writing "reset" to it;
 * scripts/bench uses them to say where a workload's time goes (docs/interface.md). */
#ifndef POOLFS_OPSTATS_H
#define POOLFS_OPSTATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum opstat {
	OPSTAT_LOOKUP,
	OPSTAT_FORGET,
	OPSTAT_GETATTR,
	OPSTAT_SETATTR,
	OPSTAT_ACCESS,
	OPSTAT_MKNOD,
	OPSTAT_MKDIR,
	OPSTAT_UNLINK,
	OPSTAT_RMDIR,
	OPSTAT_RENAME,
	OPSTAT_CREATE,
	OPSTAT_OPEN,
	OPSTAT_READ,
	OPSTAT_WRITE,
	OPSTAT_FLUSH,
	OPSTAT_FSYNC,
	OPSTAT_RELEASE,
	OPSTAT_FALLOCATE,
	OPSTAT_OPENDIR,
	OPSTAT_READDIR,
	OPSTAT_READDIRPLUS,
	OPSTAT_RELEASEDIR,
	OPSTAT_FSYNCDIR,
	OPSTAT_STATFS,
	OPSTAT_SETXATTR,
	OPSTAT_GETXATTR,
	OPSTAT_LISTXATTR,
	OPSTAT_REMOVEXATTR,
	OPSTAT_OTHER,
	OPSTAT_COUNT,
};

/* The histograms' upper bounds, in nanoseconds (10 us to 1 s), and one bucket more for what
 * takes longer. */
#define OPSTATS_BUCKETS 14
extern const uint64_t opstats_bucket_ns[OPSTATS_BUCKETS - 1];

/* Durations: how many took at most opstats_bucket_ns[i] (and more than the bound before), and
 * their total. */
struct opstats_hist {
	atomic_uint_fast64_t bucket[OPSTATS_BUCKETS];
	atomic_uint_fast64_t sum_ns;
};

struct opstats {
	atomic_uint_fast64_t count[OPSTAT_COUNT];
	atomic_uint_fast64_t ns[OPSTAT_COUNT];
	struct opstats_hist latency;   /* handler times, all types together */
	struct opstats_hist lock_wait; /* every take of the pool lock: 0 when it was free */
};

uint64_t opstats_now(void); /* monotonic nanoseconds */
/* A request of type `op` came: counted before its handler runs, so that whoever got its reply
 * reads it counted (the tests count LOOKUPs after a stat). */
void opstats_count(struct opstats *s, enum opstat op);
/* Its handler, started at start_ns, is done: its time is added, and counted in the histogram. */
void opstats_time(struct opstats *s, enum opstat op, uint64_t start_ns);
/* A thread took the pool lock after waiting `ns` for it (0: it was free). */
void opstats_lock_wait(struct opstats *s, uint64_t ns);
void opstats_reset(struct opstats *s);
/* "OP COUNT NS\n" for every type that was served, busiest first by time, then a line
 * "total COUNT NS". Returns the length, or -ERANGE if buf is too small. */
int opstats_format(const struct opstats *s, char *buf, size_t len);
/* Both histograms as "latency LE_NS COUNT" lines, cumulative as Prometheus's buckets are (LE_NS
 * "inf" for the last), then "latency_sum_ns NS"; the same for "lock_wait". Returns the length,
 * or -ERANGE. */
int opstats_format_latency(const struct opstats *s, char *buf, size_t len);

#endif
