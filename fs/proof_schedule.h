/* proof_schedule: when the mapping proof looks again at files it could not prove free
 * (docs/design.md "Last-mapping detection"). Two schedules on one timer:
 *   - the doubt list: files whose end no close event may report, re-probed PROOF_FIRST_MS after
 *     one joins, then at an interval four times longer each round up to PROOF_MAX_MS, each
 *     file for at most PROOF_DOUBT_ROUNDS rounds (2+8+32+128+512+1000 ms, about 1.7 s);
 *     after that only the sweep;
 *   - the sweep: every waiting file re-probed PROOF_SWEEP_MS after the first that came to wait
 *     since the last sweep.
 * Times are microseconds of one monotonic clock; 0 means "none". Pure: no lock, no allocation
 * (the caller makes room in `doubt` with array.h before adding), nothing of the pool. */
#ifndef POOLFS_PROOF_SCHEDULE_H
#define POOLFS_PROOF_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROOF_FIRST_MS 2
#define PROOF_MAX_MS 1000
#define PROOF_DOUBT_ROUNDS 6
#define PROOF_SWEEP_MS 60000

/* A file on the doubt list (the owner's key: an inode number) and the rounds it has had. */
struct doubt_entry {
	uint64_t key;
	unsigned rounds;
};

struct proof_schedule {
	struct doubt_entry *doubt;
	size_t ndoubt, doubt_cap;
	uint64_t interval_ms; /* the doubt list's current interval, 0 while none is due */
	uint64_t doubt_due;   /* its next round */
	uint64_t sweep_due;   /* the next sweep */
};

/* What fell due at a time: the doubt list's entries (now the caller's, to free) and the
 * interval of that round, and whether the sweep is due. */
struct proof_due {
	struct doubt_entry *taken;
	size_t ntaken;
	uint64_t interval_ms;
	bool sweep;
};

/* Add `key` at round `rounds` (room made: ndoubt < doubt_cap). False, and nothing added, if it
 * has had its rounds. A new entry (round 0) brings the next round to PROOF_FIRST_MS from now. */
bool proof_schedule_doubt(struct proof_schedule *s, uint64_t key, unsigned rounds, uint64_t now);
/* A file came to wait: the sweep PROOF_SWEEP_MS from now, unless one is scheduled already. */
void proof_schedule_sweep(struct proof_schedule *s, uint64_t now);
/* What is due at `now`, handed over and unscheduled (see struct proof_due). */
struct proof_due proof_schedule_take(struct proof_schedule *s, uint64_t now);
/* After the round taken with `due` (at `now`): the entries added back since wait four times
 * longer than that round did (up to PROOF_MAX_MS), unless a new entry asked for the first
 * interval meanwhile. */
void proof_schedule_after(struct proof_schedule *s, const struct proof_due *due, uint64_t now);
/* When the timer must fire next: the earlier of the two, 0 if neither is scheduled. */
uint64_t proof_schedule_next(const struct proof_schedule *s);

#endif
