/* Unit tests of fs/lifetime.c: the removal rule of docs/interface.md "Lifetime" as a pure function.
 *
 * Two layers: named tests walk every transition a node goes through (a file opened and closed, a
 * mapping outliving its fd, holds, a hold above, unlink, the root, folders armed or not), then a
 * table walks every combination of the booleans and small counters (0, 1, 2 and the maximum) and
 * checks each verdict against the rule written out from the design, plus the invariants that must
 * hold whatever the rule's wording: the root is never acted on, a node in use is never removed, a
 * removed node is never acted on again, REMOVE only for linked nodes, DESTROY only for unlinked
 * ones with nothing open or mapped that the kernel can no longer open. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rows.h"

#include "array.h"
#include "lifetime.h"

/* A regular file with a name, nothing using it. */
static struct lifetime file_node(void)
{
	struct lifetime l;

	memset(&l, 0, sizeof(l));
	l.linked = true;
	return l;
}

/* A folder with a name, never used (not armed), empty. */
static struct lifetime dir_node(void)
{
	struct lifetime l = file_node();

	l.is_dir = true;
	return l;
}

static struct lifetime root_node(void)
{
	struct lifetime l = dir_node();

	l.is_root = true;
	l.armed = true;
	return l;
}

/* ---- transitions: one row per scenario, a node's states in turn and what each must give ---- */

enum field {
	F_OPENS,
	F_HOLDS,
	F_CHILDREN,
	F_IS_DIR,
	F_LINKED,
	F_ARMED,
	F_MAYBE_MAPPED,
	F_REMOVED,
	F_LOOKUPS
};

enum step_op {
	S_END,
	S_FILE,
	S_DIR,
	S_ROOT,	  /* start from file_node(), dir_node() or root_node() */
	S_SET,	  /* field = value */
	S_IN_USE, /* lifetime_in_use(held_above) must be want */
	S_DECIDE, /* lifetime_decide(held_above) must be want */
};

struct step {
	enum step_op op;
	enum field field;
	uint32_t value;
	bool held_above;
	int want;
};

/* The steps read as a table: one line each (clang-format would spread every one over four). */
/* clang-format off */
#define FILE_NODE { .op = S_FILE }
#define DIR_NODE { .op = S_DIR }
#define ROOT_NODE { .op = S_ROOT }
#define SET(f, v) { .op = S_SET, .field = (f), .value = (v) }
#define IN_USE(above, w) { .op = S_IN_USE, .held_above = (above), .want = (w) }
#define DECIDE(above, w) { .op = S_DECIDE, .held_above = (above), .want = LIFETIME_##w }
/* clang-format on */

static const struct transition_row {
	const char *name;
	struct step steps[14];
} transition_rows[] = {
	{"file_unused_is_removed", {FILE_NODE, IN_USE(false, false), DECIDE(false, REMOVE)}},
	{"file_open_then_closed",
	 {FILE_NODE, SET(F_OPENS, 1), IN_USE(false, true), DECIDE(false, KEEP),
	  /* a second open, e.g. inherited across fork */
	  SET(F_OPENS, 2), DECIDE(false, KEEP),
	  /* one RELEASE: still open */
	  SET(F_OPENS, 1), IN_USE(false, true), DECIDE(false, KEEP),
	  /* last RELEASE */
	  SET(F_OPENS, 0), IN_USE(false, false), DECIDE(false, REMOVE)}},
	{"file_max_opens_kept",
	 {FILE_NODE, SET(F_OPENS, UINT32_MAX), IN_USE(false, true), DECIDE(false, KEEP)}},
	{"file_mapped_but_closed_kept",
	 {FILE_NODE,
	  /* Passthrough: RELEASE came at close() while the mapping lives on. */
	  SET(F_OPENS, 0), SET(F_MAYBE_MAPPED, true), IN_USE(false, true), DECIDE(false, KEEP),
	  /* The data path rules the mapping out: now it goes. */
	  SET(F_MAYBE_MAPPED, false), IN_USE(false, false), DECIDE(false, REMOVE)}},
	{"file_open_and_mapped_kept",
	 {FILE_NODE, SET(F_OPENS, 1), SET(F_MAYBE_MAPPED, true), DECIDE(false, KEEP),
	  SET(F_OPENS, 0), DECIDE(false, KEEP), SET(F_MAYBE_MAPPED, false), DECIDE(false, REMOVE)}},
	{"file_hold_kept_until_released",
	 {FILE_NODE, SET(F_HOLDS, 1), IN_USE(false, true), DECIDE(false, KEEP), SET(F_HOLDS, 3),
	  DECIDE(false, KEEP), SET(F_HOLDS, 1), DECIDE(false, KEEP), SET(F_HOLDS, 0),
	  IN_USE(false, false), DECIDE(false, REMOVE)}},
	{"file_hold_with_open",
	 {FILE_NODE, SET(F_HOLDS, 1), SET(F_OPENS, 1), DECIDE(false, KEEP),
	  /* closed, hold remains */
	  SET(F_OPENS, 0), DECIDE(false, KEEP),
	  /* hold ended */
	  SET(F_HOLDS, 0), DECIDE(false, REMOVE)}},
	{"file_held_above_kept",
	 {FILE_NODE, IN_USE(true, true), DECIDE(true, KEEP),
	  /* The folder hold ends: the file goes. */
	  IN_USE(false, false), DECIDE(false, REMOVE)}},
	{"file_children_and_armed_ignored",
	 {FILE_NODE,
	  /* Counters that only mean something for folders must not keep a file alive. */
	  SET(F_CHILDREN, 5), IN_USE(false, false), DECIDE(false, REMOVE), SET(F_CHILDREN, 0),
	  SET(F_ARMED, false), DECIDE(false, REMOVE), SET(F_ARMED, true), DECIDE(false, REMOVE)}},
	{"unlinked_unused_destroyed", {FILE_NODE, SET(F_LINKED, false), DECIDE(false, DESTROY)}},
	{"unlinked_kept_until_the_kernel_forgets",
	 {FILE_NODE, SET(F_LOOKUPS, 2),
	  /* Named and unused: the kernel's references do not keep a name (it is removed)... */
	  IN_USE(false, false), DECIDE(false, REMOVE),
	  /* ...but a walk that reached the entry before may still OPEN it: the data stays. */
	  SET(F_LINKED, false), DECIDE(false, KEEP), SET(F_LOOKUPS, 1), DECIDE(false, KEEP),
	  /* That OPEN came: the nameless entry is open like any unlinked file. */
	  SET(F_OPENS, 1), DECIDE(false, KEEP), SET(F_OPENS, 0), DECIDE(false, KEEP),
	  /* The last FORGET. */
	  SET(F_LOOKUPS, 0), DECIDE(false, DESTROY)}},
	{"unlinked_dir_kept_until_the_kernel_forgets",
	 {DIR_NODE, SET(F_ARMED, true), SET(F_LOOKUPS, 1), DECIDE(false, REMOVE),
	  /* A process's working folder, removed: kept while the kernel holds it. */
	  SET(F_LINKED, false), DECIDE(false, KEEP), SET(F_LOOKUPS, 0), DECIDE(false, DESTROY)}},
	{"unlinked_open_kept_then_destroyed",
	 {FILE_NODE, SET(F_OPENS, 1),
	  /* unlink(2) while open: data stays readable */
	  SET(F_LINKED, false), DECIDE(false, KEEP), SET(F_OPENS, 0), DECIDE(false, DESTROY)}},
	{"unlinked_mapped_kept_then_destroyed",
	 {FILE_NODE, SET(F_LINKED, false), SET(F_MAYBE_MAPPED, true), DECIDE(false, KEEP),
	  SET(F_OPENS, 2), DECIDE(false, KEEP), SET(F_OPENS, 0), DECIDE(false, KEEP),
	  SET(F_MAYBE_MAPPED, false), DECIDE(false, DESTROY)}},
	{"unlinked_holds_do_not_keep",
	 {FILE_NODE,
	  /* Unlinking drops every hold (interface.md); a folder above cannot hold a nameless entry. */
	  SET(F_LINKED, false), SET(F_HOLDS, 2), DECIDE(false, DESTROY), DECIDE(true, DESTROY),
	  SET(F_HOLDS, 0), DECIDE(true, DESTROY)}},
	{"unlinked_dir_destroyed",
	 {DIR_NODE,
	  /* rmdir of a folder never armed: nothing keeps its data. */
	  SET(F_LINKED, false), DECIDE(false, DESTROY), SET(F_ARMED, true), DECIDE(false, DESTROY),
	  /* rmdir while opendir'ed: kept until closedir. */
	  SET(F_OPENS, 1), DECIDE(false, KEEP), SET(F_OPENS, 0), DECIDE(false, DESTROY)}},
	{"removed_is_never_acted_on",
	 {FILE_NODE, SET(F_REMOVED, true), DECIDE(false, KEEP), SET(F_LINKED, false),
	  DECIDE(false, KEEP), SET(F_IS_DIR, true), SET(F_ARMED, true), DECIDE(false, KEEP),
	  SET(F_LINKED, true), DECIDE(true, KEEP)}},
	{"removed_still_reports_use",
	 {FILE_NODE,
	  /* An ESTALE handle still counts as an open: in_use does not look at removed. */
	  SET(F_REMOVED, true), SET(F_LINKED, false), SET(F_OPENS, 1), IN_USE(false, true),
	  SET(F_OPENS, 0), IN_USE(false, false)}},
	{"root_never_removed",
	 {ROOT_NODE, IN_USE(false, false), DECIDE(false, KEEP), SET(F_ARMED, false),
	  DECIDE(false, KEEP), SET(F_CHILDREN, 1), DECIDE(false, KEEP),
	  /* last child gone: re-checked up to the root, which stays */
	  SET(F_CHILDREN, 0), SET(F_ARMED, true), DECIDE(false, KEEP),
	  /* Even a root that somehow lost its name is never destroyed. */
	  SET(F_LINKED, false), DECIDE(false, KEEP)}},
	{"dir_never_armed_stays", {DIR_NODE, IN_USE(false, false), DECIDE(false, KEEP)}},
	{"dir_armed_empty_removed",
	 {DIR_NODE, SET(F_CHILDREN, 1),
	  /* it had a child */
	  SET(F_ARMED, true), IN_USE(false, true), DECIDE(false, KEEP),
	  /* the child went */
	  SET(F_CHILDREN, 0), IN_USE(false, false), DECIDE(false, REMOVE)}},
	{"dir_armed_by_hold_removed_when_released",
	 {DIR_NODE, SET(F_HOLDS, 1),
	  /* it had a hold */
	  SET(F_ARMED, true), DECIDE(false, KEEP), SET(F_HOLDS, 0), DECIDE(false, REMOVE)}},
	{"dir_with_children_kept",
	 {DIR_NODE, SET(F_ARMED, true), SET(F_CHILDREN, 1), IN_USE(false, true),
	  DECIDE(false, KEEP), SET(F_CHILDREN, UINT32_MAX), DECIDE(false, KEEP), SET(F_CHILDREN, 2),
	  DECIDE(false, KEEP), SET(F_CHILDREN, 1), DECIDE(false, KEEP), SET(F_CHILDREN, 0),
	  DECIDE(false, REMOVE)}},
	{"dir_with_open_handle_kept",
	 {DIR_NODE, SET(F_ARMED, true),
	  /* opendir */
	  SET(F_OPENS, 1), IN_USE(false, true), DECIDE(false, KEEP),
	  /* closedir */
	  SET(F_OPENS, 0), DECIDE(false, REMOVE)}},
	{"dir_held_above_kept",
	 {DIR_NODE, SET(F_ARMED, true), DECIDE(true, KEEP), DECIDE(false, REMOVE)}},
	{"dir_unarmed_in_use_kept",
	 {DIR_NODE, SET(F_OPENS, 1), DECIDE(false, KEEP), SET(F_OPENS, 0), SET(F_HOLDS, 1),
	  DECIDE(false, KEEP), SET(F_HOLDS, 0), DECIDE(true, KEEP), DECIDE(false, KEEP)}},
};

/* A step's field: the counters take the value, the flags its truth. */
static void set_field(struct lifetime *l, enum field f, uint32_t v)
{
	if (f == F_LOOKUPS) {
		l->lookups = v;
		return;
	}
	uint32_t *const counts[] = {
		[F_OPENS] = &l->opens, [F_HOLDS] = &l->holds, [F_CHILDREN] = &l->children};
	bool *const flags[] = {[F_IS_DIR] = &l->is_dir,
			       [F_LINKED] = &l->linked,
			       [F_ARMED] = &l->armed,
			       [F_MAYBE_MAPPED] = &l->maybe_mapped,
			       [F_REMOVED] = &l->removed};

	if ((size_t)f < ARRAY_SIZE(counts))
		*counts[f] = v;
	else
		*flags[f] = v != 0;
}

static void test_transition_row(void **state)
{
	const struct transition_row *r = *state;
	struct lifetime l = file_node();

	for (const struct step *s = r->steps; s->op != S_END; s++) {
		switch (s->op) {
		case S_END:
			break;
		case S_FILE:
			l = file_node();
			break;
		case S_DIR:
			l = dir_node();
			break;
		case S_ROOT:
			l = root_node();
			break;
		case S_SET:
			set_field(&l, s->field, s->value);
			break;
		case S_IN_USE:
			assert_int_equal(lifetime_in_use(&l, s->held_above), s->want);
			break;
		case S_DECIDE:
			assert_int_equal(lifetime_decide(&l, s->held_above), s->want);
			break;
		}
	}
}

static void decide_does_not_modify_input(void **state)
{
	(void)state;
	struct lifetime l = dir_node(), copy;

	l.armed = true;
	l.opens = 7;
	l.holds = 3;
	l.children = 2;
	l.maybe_mapped = true;
	memcpy(&copy, &l, sizeof(l));
	(void)lifetime_decide(&l, true);
	(void)lifetime_in_use(&l, true);
	l.lookups = 9;
	memcpy(&copy, &l, sizeof(l));
	(void)lifetime_can_free(&l);
	assert_memory_equal(&l, &copy, sizeof(l));
}

/* ---- can_free ------------------------------------------------------------------------------- */

static void can_free_only_when_removed_forgotten_closed(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	assert_false(lifetime_can_free(&l)); /* not removed */
	l.linked = false;
	assert_false(lifetime_can_free(&l)); /* unlinked but not yet destroyed */
	l.removed = true;
	assert_true(lifetime_can_free(&l));
	l.lookups = 1; /* the kernel still knows it */
	assert_false(lifetime_can_free(&l));
	l.lookups = UINT64_MAX;
	assert_false(lifetime_can_free(&l));
	l.lookups = 0;
	l.opens = 1; /* a handle still points at it */
	assert_false(lifetime_can_free(&l));
	l.lookups = 1;
	assert_false(lifetime_can_free(&l));
	l.lookups = 0;
	l.opens = UINT32_MAX;
	assert_false(lifetime_can_free(&l));
	l.opens = 0;
	assert_true(lifetime_can_free(&l));
	/* Holds, children, mapping flags, kind: none of them matter once removed and forgotten. */
	l.holds = 1;
	l.is_dir = true;
	l.armed = true;
	assert_true(lifetime_can_free(&l));
}

/* ---- exhaustive table ----------------------------------------------------------------------- */

/* The rule written out from docs/interface.md "Lifetime", independently of lifetime.c. */
static bool model_in_use(const struct lifetime *l, bool held_above)
{
	bool use = false;

	use = use || l->opens != 0;		      /* 1. an open handle */
	use = use || l->maybe_mapped;		      /* 2. a mapping */
	use = use || l->holds != 0 || held_above;     /* 3. a hold on it or above */
	use = use || (l->is_dir && l->children != 0); /* 4. a folder's child */
	return use;
}

static enum lifetime_verdict model_decide(const struct lifetime *l, bool held_above)
{
	if (l->removed)
		return LIFETIME_KEEP;
	if (l->is_root)
		return LIFETIME_KEEP;
	if (!l->linked) {
		/* Holds went with the name; only those who have the data keep it, and the kernel
		 * while it may still open it. */
		if (l->opens != 0 || l->maybe_mapped || l->lookups != 0)
			return LIFETIME_KEEP;
		return LIFETIME_DESTROY;
	}
	if (model_in_use(l, held_above))
		return LIFETIME_KEEP;
	if (l->is_dir && !l->armed)
		return LIFETIME_KEEP;
	return LIFETIME_REMOVE;
}

static const uint32_t counters[] = {0, 1, 2, UINT32_MAX};
#define NCOUNTERS (sizeof(counters) / sizeof(counters[0]))
#define NBOOLS 8

static struct lifetime combo(unsigned bits, size_t oi, size_t hi, size_t ci, bool *held_above)
{
	struct lifetime l;

	memset(&l, 0, sizeof(l));
	l.is_dir = bits & 1;
	l.is_root = bits & 2;
	l.linked = bits & 4;
	l.armed = bits & 8;
	l.maybe_mapped = bits & 16;
	l.removed = bits & 32;
	*held_above = bits & 64;
	l.lookups = (bits & 128) ? 1 : 0;
	l.opens = counters[oi];
	l.holds = counters[hi];
	l.children = counters[ci];
	return l;
}

static void describe(char *buf, size_t len, const struct lifetime *l, bool held_above)
{
	snprintf(buf, len,
		 "dir=%d root=%d linked=%d armed=%d mapped=%d removed=%d held_above=%d opens=%u "
		 "holds=%u children=%u lookups=%llu",
		 l->is_dir, l->is_root, l->linked, l->armed, l->maybe_mapped, l->removed,
		 held_above, l->opens, l->holds, l->children, (unsigned long long)l->lookups);
}

/* Every combination of the booleans and counters, each handed to fn with held_above: how many. */
static size_t for_each_combo(void (*fn)(const struct lifetime *l, bool ha, void *ctx), void *ctx)
{
	size_t cases = 0;

	for (unsigned bits = 0; bits < (1u << NBOOLS); bits++)
		for (size_t oi = 0; oi < NCOUNTERS; oi++)
			for (size_t hi = 0; hi < NCOUNTERS; hi++)
				for (size_t ci = 0; ci < NCOUNTERS; ci++) {
					bool ha;
					struct lifetime l = combo(bits, oi, hi, ci, &ha);

					fn(&l, ha, ctx);
					cases++;
				}
	return cases;
}

struct model_tally {
	size_t mismatches;
	size_t seen[3];
};

static void check_against_model(const struct lifetime *lp, bool ha, void *ctx)
{
	struct model_tally *t = ctx;
	const struct lifetime l = *lp;
	enum lifetime_verdict got = lifetime_decide(&l, ha);
	enum lifetime_verdict want = model_decide(&l, ha);
	bool use = lifetime_in_use(&l, ha);

	assert_true(got == LIFETIME_KEEP || got == LIFETIME_REMOVE || got == LIFETIME_DESTROY);
	t->seen[got]++;
	if (got != want || use != model_in_use(&l, ha)) {
		char d[256];

		describe(d, sizeof(d), &l, ha);
		print_error("mismatch: %s: decide %d (want %d), in_use %d (want %d)\n", d, got,
			    want, use, model_in_use(&l, ha));
		t->mismatches++;
	}
}

static void exhaustive_matches_model(void **state)
{
	struct model_tally t = {0, {0, 0, 0}};
	size_t cases = for_each_combo(check_against_model, &t);

	(void)state;
	assert_int_equal(cases, (1u << NBOOLS) * NCOUNTERS * NCOUNTERS * NCOUNTERS);
	assert_int_equal(t.mismatches, 0);
	/* The table reaches every verdict, so it would notice one going missing. */
	assert_true(t.seen[LIFETIME_KEEP] > 0);
	assert_true(t.seen[LIFETIME_REMOVE] > 0);
	assert_true(t.seen[LIFETIME_DESTROY] > 0);
}

static void check_invariants(const struct lifetime *lp, bool ha, void *ctx)
{
	const struct lifetime l = *lp;
	enum lifetime_verdict v = lifetime_decide(&l, ha);
	bool use = lifetime_in_use(&l, ha);
	char d[256];

	(void)ctx;
	describe(d, sizeof(d), &l, ha);
	/* The root is never removed or destroyed. */
	if (l.is_root && v != LIFETIME_KEEP)
		fail_msg("root acted on: %s", d);
	/* A removed node is never acted on again. */
	if (l.removed && v != LIFETIME_KEEP)
		fail_msg("removed node acted on: %s", d);
	/* Open or mapped data is never removed nor destroyed. */
	if ((l.opens || l.maybe_mapped) && v != LIFETIME_KEEP)
		fail_msg("open/mapped node acted on: %s", d);
	/* A node in use keeps its name. */
	if (use && v == LIFETIME_REMOVE)
		fail_msg("in-use node removed: %s", d);
	/* REMOVE only for a linked node; DESTROY only for an unlinked one. */
	if (v == LIFETIME_REMOVE && !l.linked)
		fail_msg("REMOVE of an unlinked node: %s", d);
	if (v == LIFETIME_DESTROY && l.linked)
		fail_msg("DESTROY of a linked node: %s", d);
	/* Data the kernel may still open is never destroyed. */
	if (v == LIFETIME_DESTROY && l.lookups)
		fail_msg("DESTROY of a node the kernel may open: %s", d);
	/* A folder never armed keeps its name. */
	if (l.is_dir && !l.armed && v == LIFETIME_REMOVE)
		fail_msg("unarmed folder removed: %s", d);
	/* A linked, in-use node is kept. */
	if (l.linked && use && v != LIFETIME_KEEP)
		fail_msg("linked in-use node not kept: %s", d);
	/* in_use is a function of the use counters only. */
	{
		struct lifetime m = l;

		m.linked = !m.linked;
		m.removed = !m.removed;
		m.is_root = !m.is_root;
		m.armed = !m.armed;
		if (lifetime_in_use(&m, ha) != use)
			fail_msg("in_use depends on a state flag: %s", d);
	}
	/* Adding any use to a node about to be removed keeps it. */
	if (v == LIFETIME_REMOVE) {
		struct lifetime m;

		m = l;
		m.opens = 1;
		assert_int_equal(lifetime_decide(&m, ha), LIFETIME_KEEP);
		m = l;
		m.maybe_mapped = true;
		assert_int_equal(lifetime_decide(&m, ha), LIFETIME_KEEP);
		m = l;
		m.holds = 1;
		assert_int_equal(lifetime_decide(&m, ha), LIFETIME_KEEP);
		m = l;
		assert_int_equal(lifetime_decide(&m, true), LIFETIME_KEEP);
		if (l.is_dir) {
			m = l;
			m.children = 1;
			assert_int_equal(lifetime_decide(&m, ha), LIFETIME_KEEP);
		}
	}
	/* can_free exactly when removed, forgotten and closed. */
	assert_int_equal(lifetime_can_free(&l), l.removed && l.opens == 0 && l.lookups == 0);
	{
		struct lifetime m = l;

		m.lookups = UINT64_MAX;
		assert_false(lifetime_can_free(&m));
	}
}

static void exhaustive_invariants(void **state)
{
	(void)state;
	for_each_combo(check_invariants, NULL);
}

static const struct CMUnitTest scenarios[] = {
	cmocka_unit_test(decide_does_not_modify_input),
	cmocka_unit_test(can_free_only_when_removed_forgotten_closed),
	cmocka_unit_test(exhaustive_matches_model),
	cmocka_unit_test(exhaustive_invariants),
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

int main(void)
{
	struct CMUnitTest tests[N(transition_rows) + N(scenarios)];

	rows_to_tests(tests, transition_rows, sizeof(transition_rows[0]), N(transition_rows),
		      test_transition_row, NULL, NULL);
	memcpy(tests + N(transition_rows), scenarios, sizeof(scenarios));
	return cmocka_run_group_tests_name("lifetime", tests, NULL, NULL);
}
