/* proof_schedule: when the mapping proof looks again at files it could not prove free
 * (docs/design.md "Last-mapping detection"). The soon list, on a timer of its own:
 *   - files whose probe failed right after a close event or RELEASE (the open count drops a
 *     moment later), re-probed at PROOF_SOON_STEPS steps (the caller's delays), taken out for
 *     each round so that the caller probes without its lock, and put back at their next step;
 * and two schedules on one timer:
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

#define PROOF_SOON_MAX 256
#define PROOF_SOON_STEPS 5

/* A file on the soon list: the step it is at, and whether it goes to the doubt list if still busy
 * after the last (the caller's reasons: mapping_proof.c). */
struct soon_entry {
	uint64_t key;
	unsigned step;
	bool doubtful;
};

struct soon_list {
	size_t count;
	struct soon_entry entries[PROOF_SOON_MAX];
};

/* What became of a taken entry still busy (soon_list_put_back). */
enum soon_back {
	SOON_BACK_QUEUED, /* at its next step, or the place it was added to again meanwhile */
	SOON_BACK_DONE,	  /* it had its steps: it leaves the list */
	SOON_BACK_FULL,	  /* no room: it leaves the list */
};

/* `key` failed a probe right after an event: from step 0 again (doubtful if it was or is now).
 * False, and nothing added, if the list is full and `key` not on it. */
bool soon_list_add(struct soon_list *l, uint64_t key, bool doubtful);
/* Hand every entry over to `out` (room for PROOF_SOON_MAX) and empty the list; how many. */
size_t soon_list_take(struct soon_list *l, struct soon_entry *out);
/* A taken entry whose probe failed again: back at its next step. An entry added again since it
 * was taken stays where it is (step 0), doubtful if either was. */
enum soon_back soon_list_put_back(struct soon_list *l, const struct soon_entry *taken);
/* The lowest step of an entry on the list (the next round is that step's delay away), or
 * PROOF_SOON_STEPS if it is empty. */
unsigned soon_list_first_step(const struct soon_list *l);

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
