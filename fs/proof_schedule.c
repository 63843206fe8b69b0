/* proof_schedule: the mapping proof's soon list, doubt list and sweep (see proof_schedule.h). */
#include "proof_schedule.h"

#define US_PER_MS 1000u

static struct soon_entry *soon_find(struct soon_list *l, uint64_t key)
{
	for (size_t i = 0; i < l->count; i++)
		if (l->entries[i].key == key)
			return &l->entries[i];
	return NULL;
}

bool soon_list_add(struct soon_list *l, uint64_t key, bool doubtful)
{
	struct soon_entry *e = soon_find(l, key);

	if (!e) {
		if (l->count == PROOF_SOON_MAX)
			return false;
		e = &l->entries[l->count++];
		*e = (struct soon_entry){.key = key};
	}
	e->step = 0;
	e->doubtful |= doubtful;
	return true;
}

size_t soon_list_take(struct soon_list *l, struct soon_entry *out)
{
	size_t count = l->count;

	for (size_t i = 0; i < count; i++)
		out[i] = l->entries[i];
	l->count = 0;
	return count;
}

enum soon_back soon_list_put_back(struct soon_list *l, const struct soon_entry *taken)
{
	struct soon_entry *e = soon_find(l, taken->key);

	if (e) {
		e->doubtful |= taken->doubtful;
		return SOON_BACK_QUEUED;
	}
	if (taken->step + 1 >= PROOF_SOON_STEPS)
		return SOON_BACK_DONE;
	if (l->count == PROOF_SOON_MAX)
		return SOON_BACK_FULL;
	l->entries[l->count] = *taken;
	l->entries[l->count++].step++;
	return SOON_BACK_QUEUED;
}

unsigned soon_list_first_step(const struct soon_list *l)
{
	unsigned first = PROOF_SOON_STEPS;

	for (size_t i = 0; i < l->count; i++)
		if (l->entries[i].step < first)
			first = l->entries[i].step;
	return first;
}

bool proof_schedule_doubt(struct proof_schedule *s, uint64_t key, unsigned rounds, uint64_t now)
{
	uint64_t first = now + PROOF_FIRST_MS * US_PER_MS;

	if (rounds >= PROOF_DOUBT_ROUNDS)
		return false;
	s->doubt[s->ndoubt++] = (struct doubt_entry){.key = key, .rounds = rounds};
	if (rounds == 0 && (!s->doubt_due || s->doubt_due > first)) {
		s->interval_ms = PROOF_FIRST_MS;
		s->doubt_due = first;
	}
	return true;
}

void proof_schedule_sweep(struct proof_schedule *s, uint64_t now)
{
	if (!s->sweep_due)
		s->sweep_due = now + PROOF_SWEEP_MS * US_PER_MS;
}

struct proof_due proof_schedule_take(struct proof_schedule *s, uint64_t now)
{
	struct proof_due due = {0};

	if (s->doubt_due && s->doubt_due <= now) {
		due.taken = s->doubt;
		due.ntaken = s->ndoubt;
		due.interval_ms = s->interval_ms ? s->interval_ms : PROOF_FIRST_MS;
		s->doubt = NULL;
		s->ndoubt = s->doubt_cap = 0;
		s->doubt_due = 0;
		s->interval_ms = 0;
	}
	if (s->sweep_due && s->sweep_due <= now) {
		due.sweep = true;
		s->sweep_due = 0;
	}
	return due;
}

void proof_schedule_after(struct proof_schedule *s, const struct proof_due *due, uint64_t now)
{
	uint64_t next;

	/* Nothing back on the list, or a new entry set the first interval meanwhile. */
	if (!s->ndoubt || s->doubt_due)
		return;
	next = due->interval_ms ? due->interval_ms * 4 : PROOF_FIRST_MS;
	s->interval_ms = next > PROOF_MAX_MS ? PROOF_MAX_MS : next;
	s->doubt_due = now + s->interval_ms * US_PER_MS;
}

uint64_t proof_schedule_next(const struct proof_schedule *s)
{
	if (!s->doubt_due)
		return s->sweep_due;
	if (!s->sweep_due)
		return s->doubt_due;
	return s->doubt_due < s->sweep_due ? s->doubt_due : s->sweep_due;
}
