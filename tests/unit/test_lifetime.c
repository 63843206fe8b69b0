/* Unit tests of fs/lifetime.c: the removal rule of docs/interface.md "Lifetime" as a pure function.
 *
 * Two layers: named tests walk every transition a node goes through (a file opened and closed, a
 * mapping outliving its fd, holds, a hold above, unlink, the root, folders armed or not), then a
 * table walks every combination of the booleans and small counters (0, 1, 2 and the maximum) and
 * checks each verdict against the rule written out from the design, plus the invariants that must
 * hold whatever the rule's wording: the root is never acted on, a node in use is never removed, a
 * removed node is never acted on again, REMOVE only for linked nodes, DESTROY only for unlinked
 * ones with nothing open or mapped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

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

/* ---- files ---------------------------------------------------------------------------------- */

static void file_unused_is_removed(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	assert_false(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_REMOVE);
}

static void file_open_then_closed(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	l.opens = 1;
	assert_true(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.opens = 2; /* a second open, e.g. inherited across fork */
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.opens = 1; /* one RELEASE: still open */
	assert_true(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.opens = 0; /* last RELEASE */
	assert_false(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_REMOVE);
}

static void file_max_opens_kept(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	l.opens = UINT32_MAX;
	assert_true(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
}

static void file_mapped_but_closed_kept(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	/* Passthrough: RELEASE came at close() while the mapping lives on. */
	l.opens = 0;
	l.maybe_mapped = true;
	assert_true(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	/* The data path rules the mapping out: now it goes. */
	l.maybe_mapped = false;
	assert_false(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_REMOVE);
}

static void file_open_and_mapped_kept(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	l.opens = 1;
	l.maybe_mapped = true;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.opens = 0;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.maybe_mapped = false;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_REMOVE);
}

static void file_hold_kept_until_released(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	l.holds = 1;
	assert_true(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.holds = 3;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.holds = 1;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.holds = 0;
	assert_false(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_REMOVE);
}

static void file_hold_with_open(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	l.holds = 1;
	l.opens = 1;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.opens = 0; /* closed, hold remains */
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.holds = 0; /* hold ended */
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_REMOVE);
}

static void file_held_above_kept(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	assert_true(lifetime_in_use(&l, true));
	assert_int_equal(lifetime_decide(&l, true), LIFETIME_KEEP);
	/* The folder hold ends: the file goes. */
	assert_false(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_REMOVE);
}

static void file_children_and_armed_ignored(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	/* Counters that only mean something for folders must not keep a file alive. */
	l.children = 5;
	assert_false(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_REMOVE);
	l.children = 0;
	l.armed = false;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_REMOVE);
	l.armed = true;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_REMOVE);
}

/* ---- unlinked ------------------------------------------------------------------------------- */

static void unlinked_unused_destroyed(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	l.linked = false;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_DESTROY);
}

static void unlinked_open_kept_then_destroyed(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	l.opens = 1;
	l.linked = false; /* unlink(2) while open: data stays readable */
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.opens = 0;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_DESTROY);
}

static void unlinked_mapped_kept_then_destroyed(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	l.linked = false;
	l.maybe_mapped = true;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.opens = 2;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.opens = 0;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.maybe_mapped = false;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_DESTROY);
}

static void unlinked_holds_do_not_keep(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	/* Unlinking drops every hold (interface.md); a folder above cannot hold a nameless entry. */
	l.linked = false;
	l.holds = 2;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_DESTROY);
	assert_int_equal(lifetime_decide(&l, true), LIFETIME_DESTROY);
	l.holds = 0;
	assert_int_equal(lifetime_decide(&l, true), LIFETIME_DESTROY);
}

static void unlinked_dir_destroyed(void **state)
{
	(void)state;
	struct lifetime l = dir_node();

	/* rmdir of a folder never armed: nothing keeps its data. */
	l.linked = false;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_DESTROY);
	l.armed = true;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_DESTROY);
	/* rmdir while opendir'ed: kept until closedir. */
	l.opens = 1;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.opens = 0;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_DESTROY);
}

/* ---- removed -------------------------------------------------------------------------------- */

static void removed_is_never_acted_on(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	l.removed = true;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.linked = false;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.is_dir = true;
	l.armed = true;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.linked = true;
	assert_int_equal(lifetime_decide(&l, true), LIFETIME_KEEP);
}

static void removed_still_reports_use(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	/* An ESTALE handle still counts as an open: in_use does not look at removed. */
	l.removed = true;
	l.linked = false;
	l.opens = 1;
	assert_true(lifetime_in_use(&l, false));
	l.opens = 0;
	assert_false(lifetime_in_use(&l, false));
}

/* ---- root ----------------------------------------------------------------------------------- */

static void root_never_removed(void **state)
{
	(void)state;
	struct lifetime l = root_node();

	assert_false(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.armed = false;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.children = 1;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.children = 0; /* last child gone: re-checked up to the root, which stays */
	l.armed = true;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	/* Even a root that somehow lost its name is never destroyed. */
	l.linked = false;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
}

/* ---- folders -------------------------------------------------------------------------------- */

static void dir_never_armed_stays(void **state)
{
	(void)state;
	struct lifetime l = dir_node();

	assert_false(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
}

static void dir_armed_empty_removed(void **state)
{
	(void)state;
	struct lifetime l = dir_node();

	l.children = 1;
	l.armed = true; /* it had a child */
	assert_true(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.children = 0; /* the child went */
	assert_false(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_REMOVE);
}

static void dir_armed_by_hold_removed_when_released(void **state)
{
	(void)state;
	struct lifetime l = dir_node();

	l.holds = 1;
	l.armed = true; /* it had a hold */
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.holds = 0;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_REMOVE);
}

static void dir_with_children_kept(void **state)
{
	(void)state;
	struct lifetime l = dir_node();

	l.armed = true;
	l.children = 1;
	assert_true(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.children = UINT32_MAX;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.children = 2;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.children = 1;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.children = 0;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_REMOVE);
}

static void dir_with_open_handle_kept(void **state)
{
	(void)state;
	struct lifetime l = dir_node();

	l.armed = true;
	l.opens = 1; /* opendir */
	assert_true(lifetime_in_use(&l, false));
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.opens = 0; /* closedir */
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_REMOVE);
}

static void dir_held_above_kept(void **state)
{
	(void)state;
	struct lifetime l = dir_node();

	l.armed = true;
	assert_int_equal(lifetime_decide(&l, true), LIFETIME_KEEP);
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_REMOVE);
}

static void dir_unarmed_in_use_kept(void **state)
{
	(void)state;
	struct lifetime l = dir_node();

	l.opens = 1;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.opens = 0;
	l.holds = 1;
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
	l.holds = 0;
	assert_int_equal(lifetime_decide(&l, true), LIFETIME_KEEP);
	assert_int_equal(lifetime_decide(&l, false), LIFETIME_KEEP);
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
	(void)lifetime_can_free(&l, 9);
	assert_memory_equal(&l, &copy, sizeof(l));
}

/* ---- can_free ------------------------------------------------------------------------------- */

static void can_free_only_when_removed_forgotten_closed(void **state)
{
	(void)state;
	struct lifetime l = file_node();

	assert_false(lifetime_can_free(&l, 0)); /* not removed */
	l.linked = false;
	assert_false(lifetime_can_free(&l, 0)); /* unlinked but not yet destroyed */
	l.removed = true;
	assert_true(lifetime_can_free(&l, 0));
	assert_false(lifetime_can_free(&l, 1)); /* the kernel still knows it */
	assert_false(lifetime_can_free(&l, UINT64_MAX));
	l.opens = 1; /* an ESTALE handle still points at it */
	assert_false(lifetime_can_free(&l, 0));
	assert_false(lifetime_can_free(&l, 1));
	l.opens = UINT32_MAX;
	assert_false(lifetime_can_free(&l, 0));
	l.opens = 0;
	assert_true(lifetime_can_free(&l, 0));
	/* Holds, children, mapping flags, kind: none of them matter once removed and forgotten. */
	l.holds = 1;
	l.is_dir = true;
	l.armed = true;
	assert_true(lifetime_can_free(&l, 0));
}

/* ---- exhaustive table ----------------------------------------------------------------------- */

/* The rule written out from docs/interface.md "Lifetime", independently of lifetime.c. */
static bool model_in_use(const struct lifetime *l, bool held_above)
{
	bool use = false;

	use = use || l->opens != 0;                      /* 1. an open handle */
	use = use || l->maybe_mapped;                    /* 2. a mapping */
	use = use || l->holds != 0 || held_above;        /* 3. a hold on it or above */
	use = use || (l->is_dir && l->children != 0);    /* 4. a folder's child */
	return use;
}

static enum lifetime_verdict model_decide(const struct lifetime *l, bool held_above)
{
	if (l->removed)
		return LIFETIME_KEEP;
	if (l->is_root)
		return LIFETIME_KEEP;
	if (!l->linked) {
		/* Holds went with the name; only those who have the data keep it. */
		if (l->opens != 0 || l->maybe_mapped)
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
#define NBOOLS 7

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
	l.opens = counters[oi];
	l.holds = counters[hi];
	l.children = counters[ci];
	return l;
}

static void describe(char *buf, size_t len, const struct lifetime *l, bool held_above)
{
	snprintf(buf, len,
		 "dir=%d root=%d linked=%d armed=%d mapped=%d removed=%d held_above=%d opens=%u "
		 "holds=%u children=%u",
		 l->is_dir, l->is_root, l->linked, l->armed, l->maybe_mapped, l->removed, held_above,
		 l->opens, l->holds, l->children);
}

static void exhaustive_matches_model(void **state)
{
	(void)state;
	size_t cases = 0, mismatches = 0;
	size_t seen[3] = {0, 0, 0};

	for (unsigned bits = 0; bits < (1u << NBOOLS); bits++)
		for (size_t oi = 0; oi < NCOUNTERS; oi++)
			for (size_t hi = 0; hi < NCOUNTERS; hi++)
				for (size_t ci = 0; ci < NCOUNTERS; ci++) {
					bool ha;
					struct lifetime l = combo(bits, oi, hi, ci, &ha);
					enum lifetime_verdict got = lifetime_decide(&l, ha);
					enum lifetime_verdict want = model_decide(&l, ha);
					bool use = lifetime_in_use(&l, ha);

					cases++;
					assert_true(got == LIFETIME_KEEP || got == LIFETIME_REMOVE ||
						    got == LIFETIME_DESTROY);
					seen[got]++;
					if (got != want || use != model_in_use(&l, ha)) {
						char d[256];

						describe(d, sizeof(d), &l, ha);
						print_error("mismatch: %s: decide %d (want %d), in_use %d "
							    "(want %d)\n",
							    d, got, want, use, model_in_use(&l, ha));
						mismatches++;
					}
				}
	assert_int_equal(cases, (1u << NBOOLS) * NCOUNTERS * NCOUNTERS * NCOUNTERS);
	assert_int_equal(mismatches, 0);
	/* The table reaches every verdict, so it would notice one going missing. */
	assert_true(seen[LIFETIME_KEEP] > 0);
	assert_true(seen[LIFETIME_REMOVE] > 0);
	assert_true(seen[LIFETIME_DESTROY] > 0);
}

static void exhaustive_invariants(void **state)
{
	(void)state;

	for (unsigned bits = 0; bits < (1u << NBOOLS); bits++)
		for (size_t oi = 0; oi < NCOUNTERS; oi++)
			for (size_t hi = 0; hi < NCOUNTERS; hi++)
				for (size_t ci = 0; ci < NCOUNTERS; ci++) {
					bool ha;
					struct lifetime l = combo(bits, oi, hi, ci, &ha);
					enum lifetime_verdict v = lifetime_decide(&l, ha);
					bool use = lifetime_in_use(&l, ha);
					char d[256];

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

						m = l; m.opens = 1;
						assert_int_equal(lifetime_decide(&m, ha), LIFETIME_KEEP);
						m = l; m.maybe_mapped = true;
						assert_int_equal(lifetime_decide(&m, ha), LIFETIME_KEEP);
						m = l; m.holds = 1;
						assert_int_equal(lifetime_decide(&m, ha), LIFETIME_KEEP);
						m = l;
						assert_int_equal(lifetime_decide(&m, true), LIFETIME_KEEP);
						if (l.is_dir) {
							m = l; m.children = 1;
							assert_int_equal(lifetime_decide(&m, ha),
									 LIFETIME_KEEP);
						}
					}
					/* can_free exactly when removed, forgotten and closed. */
					assert_int_equal(lifetime_can_free(&l, 0),
							 l.removed && l.opens == 0);
					assert_false(lifetime_can_free(&l, 1));
					assert_false(lifetime_can_free(&l, UINT64_MAX));
				}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(file_unused_is_removed),
		cmocka_unit_test(file_open_then_closed),
		cmocka_unit_test(file_max_opens_kept),
		cmocka_unit_test(file_mapped_but_closed_kept),
		cmocka_unit_test(file_open_and_mapped_kept),
		cmocka_unit_test(file_hold_kept_until_released),
		cmocka_unit_test(file_hold_with_open),
		cmocka_unit_test(file_held_above_kept),
		cmocka_unit_test(file_children_and_armed_ignored),
		cmocka_unit_test(unlinked_unused_destroyed),
		cmocka_unit_test(unlinked_open_kept_then_destroyed),
		cmocka_unit_test(unlinked_mapped_kept_then_destroyed),
		cmocka_unit_test(unlinked_holds_do_not_keep),
		cmocka_unit_test(unlinked_dir_destroyed),
		cmocka_unit_test(removed_is_never_acted_on),
		cmocka_unit_test(removed_still_reports_use),
		cmocka_unit_test(root_never_removed),
		cmocka_unit_test(dir_never_armed_stays),
		cmocka_unit_test(dir_armed_empty_removed),
		cmocka_unit_test(dir_armed_by_hold_removed_when_released),
		cmocka_unit_test(dir_with_children_kept),
		cmocka_unit_test(dir_with_open_handle_kept),
		cmocka_unit_test(dir_held_above_kept),
		cmocka_unit_test(dir_unarmed_in_use_kept),
		cmocka_unit_test(decide_does_not_modify_input),
		cmocka_unit_test(can_free_only_when_removed_forgotten_closed),
		cmocka_unit_test(exhaustive_matches_model),
		cmocka_unit_test(exhaustive_invariants),
	};

	return cmocka_run_group_tests_name("lifetime", tests, NULL, NULL);
}
