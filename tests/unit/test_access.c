/* Unit tests of fs/access.c: the owner-only rules of docs/interface.md "Entries and permissions".
 *
 * Who may touch or list an entry (owner, another user, root with and without root_exempt), the
 * mode bits an entry really gets whatever is asked, chown/chgrp, and access(2) against the
 * effective bits. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "access.h"

static const struct access_policy strict = {.root_exempt = false};
static const struct access_policy exempt = {.root_exempt = true};

/* access_is_owner (ACCESS_OWNER) or access_may_list (ACCESS_LIST) for caller on owner's entry,
 * with root_exempt or not, must be want. */
enum owner_check { ACCESS_OWNER, ACCESS_LIST };

static const struct owner_row {
	const char *group;
	uid_t caller;
	uid_t owner;
	enum owner_check check;
	bool root_exempt;
	bool want;
} owner_rows[] = {
	{"owner_may_access", 1000, 1000, ACCESS_OWNER, false, true},
	{"owner_may_access", 1000, 1000, ACCESS_OWNER, true, true},
	{"owner_may_access", 1000, 1000, ACCESS_LIST, false, true},
	{"owner_may_access", 1000, 1000, ACCESS_LIST, true, true},
	/* The largest valid uid is a uid like any other. */
	{"owner_may_access", 4294967294u, 4294967294u, ACCESS_OWNER, false, true},
	{"other_user_refused", 1001, 1000, ACCESS_OWNER, false, false},
	{"other_user_refused", 1000, 1001, ACCESS_OWNER, false, false},
	{"other_user_refused", 1001, 1000, ACCESS_LIST, false, false},
	/* root_exempt is about root only: another plain user is still refused. */
	{"other_user_refused", 1001, 1000, ACCESS_OWNER, true, false},
	{"other_user_refused", 1001, 1000, ACCESS_LIST, true, false},
	/* uids one apart and far apart. */
	{"other_user_refused", 1, 2, ACCESS_OWNER, false, false},
	{"other_user_refused", 4294967294u, 1000, ACCESS_OWNER, false, false},
	{"root_not_exempt_by_default", 0, 1000, ACCESS_OWNER, false, false},
	{"root_not_exempt_by_default", 0, 1000, ACCESS_LIST, false, false},
	/* root still owns its own entries. */
	{"root_not_exempt_by_default", 0, 0, ACCESS_OWNER, false, true},
	{"root_not_exempt_by_default", 0, 0, ACCESS_LIST, false, true},
	{"root_exempt_when_mounted_so", 0, 1000, ACCESS_OWNER, true, true},
	{"root_exempt_when_mounted_so", 0, 1000, ACCESS_LIST, true, true},
	{"root_exempt_when_mounted_so", 0, 0, ACCESS_OWNER, true, true},
	{"root_exempt_when_mounted_so", 0, 4294967294u, ACCESS_OWNER, true, true},
	/* root's entries are as private as anyone's, with or without root_exempt. */
	{"users_cannot_reach_root_entries", 1000, 0, ACCESS_OWNER, false, false},
	{"users_cannot_reach_root_entries", 1000, 0, ACCESS_OWNER, true, false},
	{"users_cannot_reach_root_entries", 1000, 0, ACCESS_LIST, false, false},
	{"users_cannot_reach_root_entries", 1000, 0, ACCESS_LIST, true, false},
};

static void test_owner_row(void **state)
{
	const struct owner_row *r = *state;
	const struct access_policy *p = r->root_exempt ? &exempt : &strict;
	bool got = r->check == ACCESS_OWNER ? access_is_owner(p, r->caller, r->owner)
					    : access_may_list(p, r->caller, r->owner);

	assert_int_equal(got, r->want);
}

static void list_matches_owner_rule(void **state)
{
	(void)state;
	static const uid_t uids[] = {0, 1, 999, 1000, 1001, 65534, 4294967294u};
	const struct access_policy *policies[] = {&strict, &exempt};

	for (size_t p = 0; p < 2; p++)
		for (size_t i = 0; i < sizeof(uids) / sizeof(uids[0]); i++)
			for (size_t j = 0; j < sizeof(uids) / sizeof(uids[0]); j++) {
				bool want = uids[i] == uids[j] ||
					    (policies[p]->root_exempt && uids[i] == 0);

				assert_int_equal(access_is_owner(policies[p], uids[i], uids[j]),
						 want);
				assert_int_equal(access_may_list(policies[p], uids[i], uids[j]),
						 want);
			}
}

/* ---- effective mode ------------------------------------------------------------------------- */

static void effective_mode_every_value(void **state)
{
	(void)state;
	/* Every permission value 0..07777: only owner bits survive, and they all survive. */
	for (mode_t m = 0; m <= 07777; m++) {
		mode_t e = access_effective_mode(m);

		assert_int_equal(e & ~(mode_t)0700, 0);
		assert_int_equal(e, m & (S_IRUSR | S_IWUSR | S_IXUSR));
		/* Idempotent: applying it to its own result changes nothing (chmod after create). */
		assert_int_equal(access_effective_mode(e), e);
	}
}

/* ---- tables: one row, one case, each its own test (named group/arguments) ----------------- */

/* access_effective_mode(mode) = want: only the owner bits survive, never set-id or sticky. */
static const struct mode_row {
	const char *group;
	mode_t mode;
	mode_t want;
} mode_rows[] = {
	{"effective_mode_masks", 0777, 0700},
	{"effective_mode_masks", 0644, 0600},
	{"effective_mode_masks", 0666, 0600},
	{"effective_mode_masks", 0755, 0700},
	{"effective_mode_masks", 0600, 0600},
	{"effective_mode_masks", 0700, 0700},
	{"effective_mode_masks", 0, 0},
	{"effective_mode_masks", 0077, 0},
	{"effective_mode_masks", 0070, 0},
	{"effective_mode_masks", 0007, 0},
	{"effective_mode_masks", 0400, 0400},
	{"effective_mode_masks", 0200, 0200},
	{"effective_mode_masks", 0100, 0100},
	{"effective_mode_masks", 0444, 0400},
	{"effective_mode_masks", 0111, 0100},
	{"effective_mode_drops_special_bits", 04755, 0700},
	{"effective_mode_drops_special_bits", 02755, 0700},
	{"effective_mode_drops_special_bits", 01777, 0700},
	{"effective_mode_drops_special_bits", 07777, 0700},
	{"effective_mode_drops_special_bits", S_ISUID, 0},
	{"effective_mode_drops_special_bits", S_ISGID, 0},
	{"effective_mode_drops_special_bits", S_ISVTX, 0},
	{"effective_mode_drops_special_bits", 07000, 0},
};

/* access_check_chown(owner uid, owner gid, set uid?, new uid, set gid?, new gid) = want. */
static const struct chown_row {
	const char *group;
	struct {
		uid_t uid;
		gid_t gid;
		bool set_uid;
		uid_t new_uid;
		bool set_gid;
		gid_t new_gid;
	} in;
	int want;
} chown_rows[] = {
	{"chown_no_change_ok", {1000, 100, false, 0, false, 0}, 0},
	/* Values given but not asked for are ignored (chown(path, -1, -1)). */
	{"chown_no_change_ok", {1000, 100, false, 1234, false, 5678}, 0},
	{"chown_same_uid_ok", {1000, 100, true, 1000, false, 0}, 0},
	{"chown_same_uid_ok", {0, 0, true, 0, false, 0}, 0},
	{"chown_same_gid_ok", {1000, 100, false, 0, true, 100}, 0},
	{"chown_same_gid_ok", {1000, 100, true, 1000, true, 100}, 0},
	{"chown_other_uid_eperm", {1000, 100, true, 1001, false, 0}, -EPERM},
	{"chown_other_uid_eperm", {1000, 100, true, 0, false, 0}, -EPERM},
	{"chown_other_uid_eperm", {1000, 100, true, 999, false, 0}, -EPERM},
	{"chown_other_uid_eperm", {0, 0, true, 1000, false, 0}, -EPERM},
	/* With the same gid alongside: still refused. */
	{"chown_other_uid_eperm", {1000, 100, true, 1001, true, 100}, -EPERM},
	{"chown_other_gid_eperm", {1000, 100, false, 0, true, 101}, -EPERM},
	{"chown_other_gid_eperm", {1000, 100, false, 0, true, 0}, -EPERM},
	{"chown_other_gid_eperm", {1000, 100, true, 1000, true, 99}, -EPERM},
	{"chown_other_gid_eperm", {1000, 100, true, 1001, true, 101}, -EPERM},
};

/* access_check_mask(mode, access(2) mask) = want, for the owner. */
static const struct mask_row {
	const char *group;
	mode_t mode;
	int mask;
	int want;
} mask_rows[] = {
	{"mask_f_ok_always", 0, F_OK, 0},
	{"mask_f_ok_always", 0700, F_OK, 0},
	{"mask_full_owner_bits", 0700, R_OK, 0},
	{"mask_full_owner_bits", 0700, W_OK, 0},
	{"mask_full_owner_bits", 0700, X_OK, 0},
	{"mask_full_owner_bits", 0700, R_OK | W_OK | X_OK, 0},
	{"mask_file_0600", 0600, R_OK, 0},
	{"mask_file_0600", 0600, W_OK, 0},
	{"mask_file_0600", 0600, R_OK | W_OK, 0},
	{"mask_file_0600", 0600, X_OK, -EACCES},
	{"mask_file_0600", 0600, R_OK | X_OK, -EACCES},
	{"mask_file_0600", 0600, R_OK | W_OK | X_OK, -EACCES},
	{"mask_each_bit_alone", 0400, R_OK, 0},
	{"mask_each_bit_alone", 0400, W_OK, -EACCES},
	{"mask_each_bit_alone", 0400, X_OK, -EACCES},
	{"mask_each_bit_alone", 0200, R_OK, -EACCES},
	{"mask_each_bit_alone", 0200, W_OK, 0},
	{"mask_each_bit_alone", 0200, X_OK, -EACCES},
	{"mask_each_bit_alone", 0100, R_OK, -EACCES},
	{"mask_each_bit_alone", 0100, W_OK, -EACCES},
	{"mask_each_bit_alone", 0100, X_OK, 0},
	{"mask_each_bit_alone", 0, R_OK, -EACCES},
	{"mask_each_bit_alone", 0, W_OK, -EACCES},
	{"mask_each_bit_alone", 0, X_OK, -EACCES},
	/* Only owner bits count (the caller is the owner); group/other bits grant nothing. */
	{"mask_ignores_group_other_bits", 0077, R_OK, -EACCES},
	{"mask_ignores_group_other_bits", 0077, W_OK, -EACCES},
	{"mask_ignores_group_other_bits", 0077, X_OK, -EACCES},
	{"mask_ignores_group_other_bits", 0044, R_OK, -EACCES},
	{"mask_ignores_group_other_bits", 0011, X_OK, -EACCES},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_mode_row(void **state)
{
	const struct mode_row *r = *state;

	assert_int_equal(access_effective_mode(r->mode), r->want);
}

static void test_chown_row(void **state)
{
	const struct chown_row *r = *state;

	assert_int_equal(access_check_chown(r->in.uid, r->in.gid, r->in.set_uid, r->in.new_uid,
					    r->in.set_gid, r->in.new_gid),
			 r->want);
}

static void test_mask_row(void **state)
{
	const struct mask_row *r = *state;

	assert_int_equal(access_check_mask(r->mode, r->mask), r->want);
}

static void mask_exhaustive(void **state)
{
	(void)state;
	for (mode_t owner = 0; owner <= 7; owner++)
		for (int mask = 0; mask <= 7; mask++) {
			mode_t mode = owner << 6;
			bool ok = true;

			if ((mask & R_OK) && !(owner & 4))
				ok = false;
			if ((mask & W_OK) && !(owner & 2))
				ok = false;
			if ((mask & X_OK) && !(owner & 1))
				ok = false;
			assert_int_equal(access_check_mask(mode, mask), ok ? 0 : -EACCES);
		}
}

/* access_check_mask_as: any uid but 0 is access_check_mask; uid 0 is CAP_DAC_OVERRIDE on tmpfs
 * (generic_permission): read and write always, search any folder, execute a file only if an x bit
 * is set. Every owner-bit pattern, mask and kind. */
static void mask_as_root_and_others(void **state)
{
	(void)state;
	for (mode_t owner = 0; owner <= 7; owner++)
		for (int mask = 0; mask <= 7; mask++)
			for (int is_dir = 0; is_dir <= 1; is_dir++) {
				mode_t mode = owner << 6;
				bool root_ok = !(mask & X_OK) || is_dir || (owner & 1);

				assert_int_equal(access_check_mask_as(mode, is_dir, 1000, mask),
						 access_check_mask(mode, mask));
				assert_int_equal(access_check_mask_as(mode, is_dir, 0, mask),
						 root_ok ? 0 : -EACCES);
			}
}

/* The pool-root rule and the owner-only rule in one table: who (the owner, another user, root
 * with and without root_exempt) does what to the root or to an ordinary entry. */
static void act_table(void **state)
{
	const struct access_policy plain = {.root_exempt = false}, exempt = {.root_exempt = true};
	static const struct {
		bool exempt, pool_root;
		uid_t caller, owner;
		enum access_act act;
		int want;
	} rows[] = {
		/* the shared root: everyone uses it */
		{false, true, 1000, 0, ACCESS_USE, 0},
		{false, true, 0, 0, ACCESS_USE, 0},
		/* only its owner changes it; others get a sticky folder's EPERM */
		{false, true, 0, 0, ACCESS_CHANGE, 0},
		{false, true, 1000, 0, ACCESS_CHANGE, -EPERM},
		{false, true, 1000, 1000, ACCESS_CHANGE, 0}, /* a pool mounted by a user */
		{false, true, 0, 1000, ACCESS_CHANGE, -EPERM},
		{true, true, 0, 1000, ACCESS_CHANGE, 0},
		/* nobody changes its mode or owner, not even its owner */
		{false, true, 0, 0, ACCESS_REMODE, -EPERM},
		{false, true, 1000, 1000, ACCESS_REMODE, -EPERM},
		{true, true, 0, 1000, ACCESS_REMODE, -EPERM},
		/* its counters: its owner only */
		{false, true, 0, 0, ACCESS_READ_COUNTERS, 0},
		{false, true, 1000, 0, ACCESS_READ_COUNTERS, -EACCES},
		{false, false, 0, 0, ACCESS_READ_COUNTERS, -EACCES}, /* only the root has them */
		/* an ordinary entry: its owner only */
		{false, false, 1000, 1000, ACCESS_USE, 0},
		{false, false, 1001, 1000, ACCESS_USE, -EACCES},
		{false, false, 0, 1000, ACCESS_USE, -EACCES},
		{true, false, 0, 1000, ACCESS_USE, 0},
		{true, false, 1001, 1000, ACCESS_USE, -EACCES},
		{false, false, 1000, 1000, ACCESS_CHANGE, 0},
		{false, false, 1001, 1000, ACCESS_CHANGE, -EACCES},
		{false, false, 1000, 1000, ACCESS_REMODE, 0},
		{false, false, 1001, 1000, ACCESS_REMODE, -EPERM},
		{false, false, 0, 1000, ACCESS_REMODE, -EPERM},
		{true, false, 0, 1000, ACCESS_REMODE, 0},
	};

	(void)state;
	for (size_t i = 0; i < N(rows); i++) {
		int got = access_check_act(rows[i].exempt ? &exempt : &plain, rows[i].caller,
					   rows[i].owner, rows[i].pool_root, rows[i].act);
		if (got != rows[i].want)
			fail_msg("row %zu: got %d, want %d", i, got, rows[i].want);
	}
	/* where an entry may get another name */
	assert_true(access_may_name_in(1000, 1000, false));
	assert_true(access_may_name_in(1000, 0, true));
	assert_false(access_may_name_in(1000, 0, false));
	assert_false(access_may_name_in(1000, 1001, false));
}

/* ---- setattr and holds (access_check_setattr, access_hold_keeps) ---- */

/* One row per case: who changes what of whose entry, through a handle or not, and the answer
 * a local filesystem gives. */
static void setattr_table(void **state)
{
	(void)state;
	enum { OWNER = 1000, OTHER = 2000 };
	static const struct {
		uid_t caller;
		unsigned what;
		int want;
		bool root_exempt;
		bool via_handle;
	} rows[] = {
		{OWNER, ACCESS_ATTR_MODE, 0, false, false},
		{OWNER, ACCESS_ATTR_OWNER, 0, false, false},
		{OWNER, ACCESS_ATTR_TIMES, 0, false, false},
		{OWNER, ACCESS_ATTR_TIMES_NOW, 0, false, false},
		{OWNER, ACCESS_ATTR_SIZE, 0, false, false},
		{OTHER, ACCESS_ATTR_MODE, -EPERM, false, false},
		{OTHER, ACCESS_ATTR_MODE, -EPERM, false, true},
		{OTHER, ACCESS_ATTR_OWNER, -EPERM, false, false},
		{OTHER, ACCESS_ATTR_TIMES, -EPERM, false, false},
		{OTHER, ACCESS_ATTR_TIMES | ACCESS_ATTR_TIMES_NOW, -EPERM, false, false},
		{OTHER, ACCESS_ATTR_TIMES_NOW, -EACCES, false, false},
		{OTHER, ACCESS_ATTR_TIMES_NOW, -EACCES, false, true},
		{OTHER, ACCESS_ATTR_SIZE, -EACCES, false, false},
		{OTHER, ACCESS_ATTR_SIZE, 0, false, true}, /* ftruncate on a passed fd */
		{OTHER, ACCESS_ATTR_SIZE | ACCESS_ATTR_MODE, -EPERM, false, true},
		{OTHER, 0, 0, false, false},
		{0, ACCESS_ATTR_MODE, -EPERM, false, false}, /* root: not exempt by default */
		{0, ACCESS_ATTR_TIMES_NOW, -EACCES, false, false},
		{0, ACCESS_ATTR_MODE | ACCESS_ATTR_TIMES | ACCESS_ATTR_SIZE, 0, true, false},
		{OTHER, ACCESS_ATTR_MODE, -EPERM, true, false},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct access_policy p = {.root_exempt = rows[i].root_exempt};
		int r = access_check_setattr(&p, rows[i].caller, OWNER, rows[i].what,
					     rows[i].via_handle);
		if (r != rows[i].want)
			fail_msg("row %zu: got %d, want %d", i, r, rows[i].want);
	}
}

static void hold_keeps_only_what_the_holder_may_access(void **state)
{
	(void)state;
	struct access_policy strict = {.root_exempt = false}, exempt = {.root_exempt = true};

	assert_true(access_hold_keeps(&strict, 1000, 1000));
	assert_false(access_hold_keeps(&strict, 1000, 2000));
	/* root's hold on the shared root does not keep users' entries... */
	assert_false(access_hold_keeps(&strict, 0, 1000));
	assert_true(access_hold_keeps(&strict, 0, 0));
	/* ...unless root may access them anyway. */
	assert_true(access_hold_keeps(&exempt, 0, 1000));
	assert_false(access_hold_keeps(&exempt, 1000, 0));
}

static const struct CMUnitTest scenarios[] = {
	cmocka_unit_test(list_matches_owner_rule),
	cmocka_unit_test(effective_mode_every_value),
	cmocka_unit_test(mask_as_root_and_others),
	cmocka_unit_test(act_table),
	cmocka_unit_test(mask_exhaustive),
	cmocka_unit_test(setattr_table),
	cmocka_unit_test(hold_keeps_only_what_the_holder_may_access),
};

/* The name of each table row's test: its group and its arguments. */
static char row_names[N(owner_rows) + N(mode_rows) + N(chown_rows) + N(mask_rows)][96];

static struct CMUnitTest row_test(size_t i, void (*fn)(void **), const void *row)
{
	return (struct CMUnitTest){
		.name = row_names[i], .test_func = fn, .initial_state = (void *)row};
}

int main(void)
{
	struct CMUnitTest tests[N(scenarios) + N(row_names)];
	size_t n = 0;

	memcpy(tests, scenarios, sizeof(scenarios));
	for (size_t i = 0; i < N(owner_rows); i++, n++) {
		const struct owner_row *r = &owner_rows[i];

		snprintf(row_names[n], sizeof(row_names[n]), "%s/%s_%s_%u_on_%u", r->group,
			 r->check == ACCESS_OWNER ? "owner" : "list",
			 r->root_exempt ? "exempt" : "strict", (unsigned)r->caller,
			 (unsigned)r->owner);
		tests[N(scenarios) + n] = row_test(n, test_owner_row, r);
	}
	for (size_t i = 0; i < N(mode_rows); i++, n++) {
		snprintf(row_names[n], sizeof(row_names[n]), "%s/%04o_is_%04o", mode_rows[i].group,
			 (unsigned)mode_rows[i].mode, (unsigned)mode_rows[i].want);
		tests[N(scenarios) + n] = row_test(n, test_mode_row, &mode_rows[i]);
	}
	for (size_t i = 0; i < N(chown_rows); i++, n++) {
		const struct chown_row *r = &chown_rows[i];

		snprintf(row_names[n], sizeof(row_names[n]), "%s/%u:%u_to_%d:%d", r->group,
			 (unsigned)r->in.uid, (unsigned)r->in.gid,
			 r->in.set_uid ? (int)r->in.new_uid : -1,
			 r->in.set_gid ? (int)r->in.new_gid : -1);
		tests[N(scenarios) + n] = row_test(n, test_chown_row, r);
	}
	for (size_t i = 0; i < N(mask_rows); i++, n++) {
		snprintf(row_names[n], sizeof(row_names[n]), "%s/%04o_mask_%d", mask_rows[i].group,
			 (unsigned)mask_rows[i].mode, mask_rows[i].mask);
		tests[N(scenarios) + n] = row_test(n, test_mask_row, &mask_rows[i]);
	}
	return cmocka_run_group_tests_name("access", tests, NULL, NULL);
}
