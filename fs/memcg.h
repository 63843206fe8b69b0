/* memcg: who pays for a pool page. tmpfs charges a page to the memory cgroup of the process
 * whose write, store or fallocate allocates it; what the daemon allocates itself (a file's
 * growth, allocated at the ftruncate so that a full pool fails there and not with SIGBUS at a
 * later store; the data of a page-cache WRITE) would be the daemon's. So such an allocation runs
 * in a child of the daemon that has joined the memory cgroup of the process that asked, and the
 * pages are that job's, as on tmpfs (docs/decisions.md "Who pays for pool memory"). cgroup v1
 * (the memory controller's own hierarchy) and v2 alike.
 *
 * A child (a "charger") serves one cgroup: it takes requests over a socket, one at a time, joins
 * the cgroup for each and goes back to the daemon's before it answers, so that no job's cgroup
 * holds it between requests (Slurm's cgroup v1 plugin keeps a step's cgroup that holds a
 * process). It ends after MEMCG_IDLE_MS without a request; the daemon stops asking one idle half
 * that long, and kills and reaps it at its next call or at memcg_close. A charger saves the fork
 * and exit of a child per allocation (0.3-0.5 ms); on v1 it moves by `tasks`, which spares the
 * kernel the wait for an RCU grace period that moving by `cgroup.procs` costs (5-12 ms here).
 *
 * Needs no FUSE, no log and no pool (the unit tests run its readers on texts of their own). */
#ifndef POOLFS_MEMCG_H
#define POOLFS_MEMCG_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How long a charger waits for its next request before it ends. */
#define MEMCG_IDLE_MS 1000

struct memcg_charger; /* memcg.c */

struct memcg {
	/* Where the hierarchy with the memory controller is mounted ("" none), whether it is cgroup
	 * v1's (else v2's), and the daemon's own memory cgroup, below root. */
	char root[PATH_MAX];
	bool v1;
	char self[PATH_MAX];
	atomic_bool warned; /* backing_fallocate_charged said once that the daemon pays */
	/* The chargers not serving a request now (a leaf lock: held for list changes only). */
	pthread_mutex_t lock;
	bool lock_ready;
	struct memcg_charger *idle;
};

/* Find the memory controller's hierarchy in `mountinfo` (normally "/proc/self/mountinfo") and
 * the daemon's own cgroup in it, from `self_cgroup` (normally "/proc/self/cgroup"). 0; -ENOENT if
 * no memory controller is mounted (then every allocation is the daemon's own); -errno. */
int memcg_open(struct memcg *m, const char *mountinfo, const char *self_cgroup);
/* End every charger and wait for it (accepts a zeroed memcg that memcg_open never reached). */
void memcg_close(struct memcg *m);

/* The memory cgroup of process (or thread) `pid`, as a path below m->root ("/a/b"), into buf.
 * 0, -ESRCH (gone), -ENOENT (no memory controller), -ENAMETOOLONG or -errno. memcg_in_file reads
 * it from a file in the format of /proc/PID/cgroup. */
int memcg_of(const struct memcg *m, pid_t pid, char *buf, size_t len);
int memcg_in_file(const struct memcg *m, const char *cgroup_file, char *buf, size_t len);

/* fallocate(2) of `fd` charged to the memory cgroup `cg` (a path from memcg_of): run by a charger
 * in cg, unless cg is the daemon's own (or NULL: the daemon's). A charger is the OOM killer's
 * first pick in its cgroup (oom_score_adj 1000): if cg has no room, the allocation fails, and no
 * process of the job dies for an allocation the daemon made for it. 0 or fallocate's -errno;
 * -EDQUOT if cg had no room (the charger was killed, or the charge failed); -EPERM if the charger
 * could not join cg (not root: see backing_fallocate_charged). What the charger allocated before
 * a failure stays in the file: the caller undoes it. Safe from any thread. */
int memcg_fallocate(struct memcg *m, const char *cg, int fd, int mode, off_t off, off_t len);

#endif
