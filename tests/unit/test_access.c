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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "access.h"

static const struct access_policy strict = {.root_exempt = false};
static const struct access_policy exempt = {.root_exempt = true};

/* ---- owner / listing ------------------------------------------------------------------------ */

static void owner_may_access(void **state)
{
	(void)state;
	assert_true(access_is_owner(&strict, 1000, 1000));
	assert_true(access_is_owner(&exempt, 1000, 1000));
	assert_true(access_may_list(&strict, 1000, 1000));
	assert_true(access_may_list(&exempt, 1000, 1000));
	/* The largest valid uid is a uid like any other. */
	assert_true(access_is_owner(&strict, 4294967294u, 4294967294u));
}

static void other_user_refused(void **state)
{
	(void)state;
	assert_false(access_is_owner(&strict, 1001, 1000));
	assert_false(access_is_owner(&strict, 1000, 1001));
	assert_false(access_may_list(&strict, 1001, 1000));
	/* root_exempt is about root only: another plain user is still refused. */
	assert_false(access_is_owner(&exempt, 1001, 1000));
	assert_false(access_may_list(&exempt, 1001, 1000));
	/* uids one apart and far apart. */
	assert_false(access_is_owner(&strict, 1, 2));
	assert_false(access_is_owner(&strict, 4294967294u, 1000));
}

static void root_not_exempt_by_default(void **state)
{
	(void)state;
	assert_false(access_is_owner(&strict, 0, 1000));
	assert_false(access_may_list(&strict, 0, 1000));
	/* root still owns its own entries. */
	assert_true(access_is_owner(&strict, 0, 0));
	assert_true(access_may_list(&strict, 0, 0));
}

static void root_exempt_when_mounted_so(void **state)
{
	(void)state;
	assert_true(access_is_owner(&exempt, 0, 1000));
	assert_true(access_may_list(&exempt, 0, 1000));
	assert_true(access_is_owner(&exempt, 0, 0));
	assert_true(access_is_owner(&exempt, 0, 4294967294u));
}

static void users_cannot_reach_root_entries(void **state)
{
	(void)state;
	/* root's entries are as private as anyone's, with or without root_exempt. */
	assert_false(access_is_owner(&strict, 1000, 0));
	assert_false(access_is_owner(&exempt, 1000, 0));
	assert_false(access_may_list(&strict, 1000, 0));
	assert_false(access_may_list(&exempt, 1000, 0));
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

				assert_int_equal(access_is_owner(policies[p], uids[i], uids[j]), want);
				assert_int_equal(access_may_list(policies[p], uids[i], uids[j]), want);
			}
}

/* ---- effective mode ------------------------------------------------------------------------- */

static void effective_mode_masks(void **state)
{
	(void)state;
	assert_int_equal(access_effective_mode(0777), 0700);
	assert_int_equal(access_effective_mode(0644), 0600);
	assert_int_equal(access_effective_mode(0666), 0600);
	assert_int_equal(access_effective_mode(0755), 0700);
	assert_int_equal(access_effective_mode(0600), 0600);
	assert_int_equal(access_effective_mode(0700), 0700);
	assert_int_equal(access_effective_mode(0), 0);
	assert_int_equal(access_effective_mode(0077), 0);
	assert_int_equal(access_effective_mode(0070), 0);
	assert_int_equal(access_effective_mode(0007), 0);
	assert_int_equal(access_effective_mode(0400), 0400);
	assert_int_equal(access_effective_mode(0200), 0200);
	assert_int_equal(access_effective_mode(0100), 0100);
	assert_int_equal(access_effective_mode(0444), 0400);
	assert_int_equal(access_effective_mode(0111), 0100);
}

static void effective_mode_drops_special_bits(void **state)
{
	(void)state;
	assert_int_equal(access_effective_mode(04755), 0700);
	assert_int_equal(access_effective_mode(02755), 0700);
	assert_int_equal(access_effective_mode(01777), 0700);
	assert_int_equal(access_effective_mode(07777), 0700);
	assert_int_equal(access_effective_mode(S_ISUID), 0);
	assert_int_equal(access_effective_mode(S_ISGID), 0);
	assert_int_equal(access_effective_mode(S_ISVTX), 0);
	assert_int_equal(access_effective_mode(07000), 0);
}

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

/* ---- chown ---------------------------------------------------------------------------------- */

static void chown_no_change_ok(void **state)
{
	(void)state;
	assert_int_equal(access_check_chown(1000, 100, false, 0, false, 0), 0);
	/* Values given but not asked for are ignored (chown(path, -1, -1)). */
	assert_int_equal(access_check_chown(1000, 100, false, 1234, false, 5678), 0);
}

static void chown_same_uid_ok(void **state)
{
	(void)state;
	assert_int_equal(access_check_chown(1000, 100, true, 1000, false, 0), 0);
	assert_int_equal(access_check_chown(0, 0, true, 0, false, 0), 0);
}

static void chown_same_gid_ok(void **state)
{
	(void)state;
	assert_int_equal(access_check_chown(1000, 100, false, 0, true, 100), 0);
	assert_int_equal(access_check_chown(1000, 100, true, 1000, true, 100), 0);
}

static void chown_other_uid_eperm(void **state)
{
	(void)state;
	assert_int_equal(access_check_chown(1000, 100, true, 1001, false, 0), -EPERM);
	assert_int_equal(access_check_chown(1000, 100, true, 0, false, 0), -EPERM);
	assert_int_equal(access_check_chown(1000, 100, true, 999, false, 0), -EPERM);
	assert_int_equal(access_check_chown(0, 0, true, 1000, false, 0), -EPERM);
	/* With the same gid alongside: still refused. */
	assert_int_equal(access_check_chown(1000, 100, true, 1001, true, 100), -EPERM);
}

static void chown_other_gid_eperm(void **state)
{
	(void)state;
	assert_int_equal(access_check_chown(1000, 100, false, 0, true, 101), -EPERM);
	assert_int_equal(access_check_chown(1000, 100, false, 0, true, 0), -EPERM);
	assert_int_equal(access_check_chown(1000, 100, true, 1000, true, 99), -EPERM);
	assert_int_equal(access_check_chown(1000, 100, true, 1001, true, 101), -EPERM);
}

/* ---- access(2) mask ------------------------------------------------------------------------- */

static void mask_f_ok_always(void **state)
{
	(void)state;
	assert_int_equal(access_check_mask(0, F_OK), 0);
	assert_int_equal(access_check_mask(0700, F_OK), 0);
}

static void mask_full_owner_bits(void **state)
{
	(void)state;
	assert_int_equal(access_check_mask(0700, R_OK), 0);
	assert_int_equal(access_check_mask(0700, W_OK), 0);
	assert_int_equal(access_check_mask(0700, X_OK), 0);
	assert_int_equal(access_check_mask(0700, R_OK | W_OK | X_OK), 0);
}

static void mask_file_0600(void **state)
{
	(void)state;
	assert_int_equal(access_check_mask(0600, R_OK), 0);
	assert_int_equal(access_check_mask(0600, W_OK), 0);
	assert_int_equal(access_check_mask(0600, R_OK | W_OK), 0);
	assert_int_equal(access_check_mask(0600, X_OK), -EACCES);
	assert_int_equal(access_check_mask(0600, R_OK | X_OK), -EACCES);
	assert_int_equal(access_check_mask(0600, R_OK | W_OK | X_OK), -EACCES);
}

static void mask_each_bit_alone(void **state)
{
	(void)state;
	assert_int_equal(access_check_mask(0400, R_OK), 0);
	assert_int_equal(access_check_mask(0400, W_OK), -EACCES);
	assert_int_equal(access_check_mask(0400, X_OK), -EACCES);
	assert_int_equal(access_check_mask(0200, R_OK), -EACCES);
	assert_int_equal(access_check_mask(0200, W_OK), 0);
	assert_int_equal(access_check_mask(0200, X_OK), -EACCES);
	assert_int_equal(access_check_mask(0100, R_OK), -EACCES);
	assert_int_equal(access_check_mask(0100, W_OK), -EACCES);
	assert_int_equal(access_check_mask(0100, X_OK), 0);
	assert_int_equal(access_check_mask(0, R_OK), -EACCES);
	assert_int_equal(access_check_mask(0, W_OK), -EACCES);
	assert_int_equal(access_check_mask(0, X_OK), -EACCES);
}

static void mask_ignores_group_other_bits(void **state)
{
	(void)state;
	/* Only owner bits count (the caller is the owner); group/other bits grant nothing. */
	assert_int_equal(access_check_mask(0077, R_OK), -EACCES);
	assert_int_equal(access_check_mask(0077, W_OK), -EACCES);
	assert_int_equal(access_check_mask(0077, X_OK), -EACCES);
	assert_int_equal(access_check_mask(0044, R_OK), -EACCES);
	assert_int_equal(access_check_mask(0011, X_OK), -EACCES);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(owner_may_access),
		cmocka_unit_test(other_user_refused),
		cmocka_unit_test(root_not_exempt_by_default),
		cmocka_unit_test(root_exempt_when_mounted_so),
		cmocka_unit_test(users_cannot_reach_root_entries),
		cmocka_unit_test(list_matches_owner_rule),
		cmocka_unit_test(effective_mode_masks),
		cmocka_unit_test(effective_mode_drops_special_bits),
		cmocka_unit_test(effective_mode_every_value),
		cmocka_unit_test(chown_no_change_ok),
		cmocka_unit_test(chown_same_uid_ok),
		cmocka_unit_test(chown_same_gid_ok),
		cmocka_unit_test(chown_other_uid_eperm),
		cmocka_unit_test(chown_other_gid_eperm),
		cmocka_unit_test(mask_f_ok_always),
		cmocka_unit_test(mask_full_owner_bits),
		cmocka_unit_test(mask_file_0600),
		cmocka_unit_test(mask_each_bit_alone),
		cmocka_unit_test(mask_ignores_group_other_bits),
		cmocka_unit_test(mask_exhaustive),
		cmocka_unit_test(setattr_table),
		cmocka_unit_test(hold_keeps_only_what_the_holder_may_access),
	};

	return cmocka_run_group_tests_name("access", tests, NULL, NULL);
}
