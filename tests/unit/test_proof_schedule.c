/* Unit tests of fs/proof_schedule.c, when the mapping proof looks again (docs/design.md
 * "Last-mapping detection"): the soon list's steps, a file added again starting over, a full
 * list; the doubt list's first round 2 ms after an entry joins, its
 * intervals four times longer each round up to 1 s, a new entry bringing the round back to 2 ms,
 * an entry's rounds capped, and the sweep a minute after the first file came to wait, never
 * pushed back by later ones. Times in microseconds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "proof_schedule.h"

#define MS 1000u

static void doubt(struct proof_schedule *s, uint64_t key, unsigned rounds, uint64_t now, bool want)
{
	if (s->ndoubt == s->doubt_cap) {
		size_t cap = s->doubt_cap ? s->doubt_cap * 2 : 2;
		struct doubt_entry *grown = realloc(s->doubt, cap * sizeof(*grown));

		assert_non_null(grown);
		s->doubt = grown;
		s->doubt_cap = cap;
	}
	assert_int_equal(proof_schedule_doubt(s, key, rounds, now), want);
}

static void nothing_scheduled_fires_never(void **state)
{
	struct proof_schedule s = {0};
	struct proof_due due = proof_schedule_take(&s, 5000 * MS);

	(void)state;
	assert_int_equal(proof_schedule_next(&s), 0);
	assert_int_equal(due.ntaken, 0);
	assert_false(due.sweep);
}

/* Each round takes the whole list; what is put back waits 8, 32, 128, 512 ms, then 1 s. */
static void rounds_back_off_to_a_second(void **state)
{
	static const uint64_t want_ms[] = {2, 8, 32, 128, 512, 1000};
	struct proof_schedule s = {0};
	uint64_t now = 100 * MS;

	(void)state;
	doubt(&s, 7, 0, now, true);
	for (unsigned round = 0; round < PROOF_DOUBT_ROUNDS; round++) {
		struct proof_due due;

		assert_int_equal(proof_schedule_next(&s), now + want_ms[round] * MS);
		due = proof_schedule_take(&s, now + want_ms[round] * MS - 1);
		assert_int_equal(due.ntaken, 0); /* not due yet */
		now += want_ms[round] * MS;
		due = proof_schedule_take(&s, now);
		assert_int_equal(due.ntaken, 1);
		assert_int_equal(due.taken[0].key, 7);
		assert_int_equal(due.taken[0].rounds, round);
		assert_int_equal(s.ndoubt, 0);
		/* still busy: back for the next round, unless it has had them all */
		doubt(&s, 7, round + 1, now, round + 1 < PROOF_DOUBT_ROUNDS);
		proof_schedule_after(&s, &due, now);
		free(due.taken);
	}
	/* its rounds are over: left to the sweep, and nothing is due */
	assert_int_equal(s.ndoubt, 0);
	assert_int_equal(proof_schedule_next(&s), 0);
	free(s.doubt);
}

/* A file that joins while the list waits a second brings the next round to 2 ms from then, for
 * every entry; one that joins during a round keeps that 2 ms against the back-off. */
static void a_new_entry_comes_first(void **state)
{
	struct proof_schedule s = {0};
	struct proof_due due;
	uint64_t now = 0;

	(void)state;
	doubt(&s, 1, 0, now, true);
	for (int r = 0; r < 5; r++) { /* on to the 1 s interval */
		now = proof_schedule_next(&s);
		due = proof_schedule_take(&s, now);
		doubt(&s, 1, due.taken[0].rounds + 1, now, true);
		proof_schedule_after(&s, &due, now);
		free(due.taken);
	}
	assert_int_equal(proof_schedule_next(&s), now + PROOF_MAX_MS * MS);
	doubt(&s, 2, 0, now + 10 * MS, true);
	assert_int_equal(proof_schedule_next(&s), now + 12 * MS);
	now += 12 * MS;
	due = proof_schedule_take(&s, now);
	assert_int_equal(due.ntaken, 2);
	/* during the round (the caller probes without its lock) a third joins */
	doubt(&s, 3, 0, now + 1 * MS, true);
	doubt(&s, 2, due.taken[1].rounds + 1, now + 2 * MS, true);
	proof_schedule_after(&s, &due, now + 2 * MS);
	assert_int_equal(proof_schedule_next(&s), now + 3 * MS);
	free(due.taken);
	free(s.doubt);
}

/* The sweep: a minute after the first file came to wait since the last sweep; later ones do not
 * push it back; the earlier of it and the doubt list's round fires first. */
static void sweep_a_minute_after_the_first(void **state)
{
	struct proof_schedule s = {0};
	struct proof_due due;

	(void)state;
	proof_schedule_sweep(&s, 10 * MS);
	proof_schedule_sweep(&s, 50000 * MS);
	assert_int_equal(proof_schedule_next(&s), (10 + PROOF_SWEEP_MS) * MS);
	doubt(&s, 4, 0, 20 * MS, true);
	assert_int_equal(proof_schedule_next(&s), 22 * MS);
	due = proof_schedule_take(&s, 22 * MS);
	assert_int_equal(due.ntaken, 1);
	assert_false(due.sweep);
	proof_schedule_after(&s, &due, 22 * MS); /* proven free: not put back */
	free(due.taken);
	assert_int_equal(proof_schedule_next(&s), (10 + PROOF_SWEEP_MS) * MS);
	due = proof_schedule_take(&s, (10 + PROOF_SWEEP_MS) * MS);
	assert_true(due.sweep);
	assert_int_equal(due.ntaken, 0);
	assert_int_equal(proof_schedule_next(&s), 0);
	proof_schedule_sweep(&s, (20 + PROOF_SWEEP_MS) * MS);
	assert_int_equal(proof_schedule_next(&s), (20 + 2 * PROOF_SWEEP_MS) * MS);
	free(s.doubt);
}

/* One soon round: everything on the list taken out (the caller probes it unlocked). */
static size_t soon_round(struct soon_list *l, struct soon_entry *taken)
{
	size_t n = soon_list_take(l, taken);

	assert_int_equal(l->count, 0);
	assert_int_equal(soon_list_first_step(l), PROOF_SOON_STEPS);
	return n;
}

/* A file busy at every round goes through the steps one by one, then leaves the list. */
static void soon_steps_then_leaves(void **state)
{
	static struct soon_list l;
	struct soon_entry taken[PROOF_SOON_MAX];

	(void)state;
	assert_int_equal(soon_list_first_step(&l), PROOF_SOON_STEPS);
	assert_true(soon_list_add(&l, 9, false));
	assert_true(soon_list_add(&l, 5, true));
	for (unsigned step = 0; step < PROOF_SOON_STEPS; step++) {
		assert_int_equal(soon_list_first_step(&l), step);
		assert_int_equal(soon_round(&l, taken), 2);
		assert_int_equal(taken[0].key, 9);
		assert_int_equal(taken[0].step, step);
		assert_false(taken[0].doubtful);
		assert_int_equal(taken[1].key, 5);
		assert_true(taken[1].doubtful);
		if (step + 1 < PROOF_SOON_STEPS) {
			assert_int_equal(soon_list_put_back(&l, &taken[0]), SOON_BACK_QUEUED);
			assert_int_equal(soon_list_put_back(&l, &taken[1]), SOON_BACK_QUEUED);
		} else {
			assert_int_equal(soon_list_put_back(&l, &taken[0]), SOON_BACK_DONE);
			assert_int_equal(soon_list_put_back(&l, &taken[1]), SOON_BACK_DONE);
		}
	}
	assert_int_equal(l.count, 0);
}

/* A file added again while its round was out (a new close event) starts over at step 0, even
 * from its last step, doubtful if either was; one proven free is simply not put back. */
static void soon_added_again_starts_over(void **state)
{
	static struct soon_list l;
	struct soon_entry taken[PROOF_SOON_MAX];

	(void)state;
	assert_true(soon_list_add(&l, 1, false));
	assert_true(soon_list_add(&l, 2, true));
	assert_true(soon_list_add(&l, 3, false));
	for (unsigned step = 0; step + 1 < PROOF_SOON_STEPS; step++) {
		assert_int_equal(soon_round(&l, taken), 3);
		for (int i = 0; i < 3; i++)
			assert_int_equal(soon_list_put_back(&l, &taken[i]), SOON_BACK_QUEUED);
	}
	assert_int_equal(soon_round(&l, taken), 3);
	assert_int_equal(taken[0].step, PROOF_SOON_STEPS - 1);
	assert_true(soon_list_add(&l, 1, true));
	assert_true(soon_list_add(&l, 2, false));
	assert_int_equal(soon_list_put_back(&l, &taken[0]), SOON_BACK_QUEUED);
	assert_int_equal(soon_list_put_back(&l, &taken[1]), SOON_BACK_QUEUED);
	/* taken[2] was proven free: the caller drops it */
	assert_int_equal(l.count, 2);
	assert_int_equal(soon_list_first_step(&l), 0);
	for (size_t i = 0; i < l.count; i++) {
		assert_int_equal(l.entries[i].step, 0);
		assert_true(l.entries[i].doubtful);
	}
	/* added again while on the list: back to step 0, its doubt kept */
	assert_int_equal(soon_round(&l, taken), 2);
	assert_int_equal(soon_list_put_back(&l, &taken[0]), SOON_BACK_QUEUED);
	assert_int_equal(soon_list_first_step(&l), 1);
	assert_true(soon_list_add(&l, taken[0].key, false));
	assert_int_equal(soon_list_first_step(&l), 0);
	assert_true(l.entries[0].doubtful);
}

/* A full list takes no new file (the caller sends a doubtful one to the doubt list at once) but
 * restarts one it has; a busy file that finds the list full leaves it. */
static void soon_full(void **state)
{
	static struct soon_list l;
	struct soon_entry taken[PROOF_SOON_MAX];

	(void)state;
	for (uint64_t k = 0; k < PROOF_SOON_MAX; k++)
		assert_true(soon_list_add(&l, 100 + k, false));
	assert_false(soon_list_add(&l, 7, true));
	assert_int_equal(l.count, PROOF_SOON_MAX);
	assert_int_equal(soon_round(&l, taken), PROOF_SOON_MAX);
	assert_int_equal(soon_list_put_back(&l, &taken[0]), SOON_BACK_QUEUED);
	assert_int_equal(soon_list_first_step(&l), 1);
	for (uint64_t k = 0; k + 1 < PROOF_SOON_MAX; k++)
		assert_true(soon_list_add(&l, 1000 + k, false));
	assert_true(soon_list_add(&l, taken[0].key, false)); /* on the list: restarted */
	assert_int_equal(soon_list_first_step(&l), 0);
	assert_int_equal(soon_list_put_back(&l, &taken[1]), SOON_BACK_FULL);
	assert_int_equal(l.count, PROOF_SOON_MAX);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(nothing_scheduled_fires_never),
		cmocka_unit_test(rounds_back_off_to_a_second),
		cmocka_unit_test(a_new_entry_comes_first),
		cmocka_unit_test(sweep_a_minute_after_the_first),
		cmocka_unit_test(soon_steps_then_leaves),
		cmocka_unit_test(soon_added_again_starts_over),
		cmocka_unit_test(soon_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
