/* Unit tests of fs/options.c: the pool's own mount options (docs/interface.md).
 *
 * Defaults, every option with good and bad values, the size and seconds grammars at their
 * boundaries (suffixes, overflow, signs, junk), what goes on to FUSE, and that a refused item
 * leaves the options as they were and says why. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rows.h"

#include "options.h"

static struct pool_options fresh(void)
{
	struct pool_options o;

	options_init(&o);
	return o;
}

/* Field by field: struct copies need not preserve padding, so no memcmp. */
static void assert_same_options(const struct pool_options *a, const struct pool_options *b)
{
	assert_string_equal(a->backing, b->backing);
	assert_int_equal(a->datapath, b->datapath);
	assert_int_equal(a->autohold, b->autohold);
	assert_int_equal(a->linger_ms, b->linger_ms);
	assert_int_equal(a->max_size, b->max_size);
	assert_int_equal(a->max_user_size, b->max_user_size);
	assert_int_equal(a->max_user_entries, b->max_user_entries);
	assert_int_equal(a->max_user_meta, b->max_user_meta);
	assert_int_equal(a->uring, b->uring);
	assert_int_equal(a->root_exempt, b->root_exempt);
	assert_int_equal(a->allow_other, b->allow_other);
	assert_int_equal(a->allow_root, b->allow_root);
	assert_int_equal(a->backing_given, b->backing_given);
	assert_int_equal(a->huge, b->huge);
	assert_int_equal(a->huge_given, b->huge_given);
}

/* Apply one item and check the result and, on error, that a reason naming `key` was given. */
static int apply(struct pool_options *o, const char *item)
{
	const char *why = "untouched";
	int r = options_apply(o, item, &why);

	if (r < 0) {
		assert_non_null(why);
		assert_string_not_equal(why, "untouched");
	} else {
		/* Success or "not ours" says nothing. */
		assert_string_equal(why, "untouched");
	}
	return r;
}

/* The options whose values are names: which field a row or loop reads, and each value's name. */
enum option_field { OF_DATAPATH, OF_URING, OF_AUTOHOLD, OF_HUGE };

static int option_field(const struct pool_options *o, enum option_field f)
{
	switch (f) {
	case OF_DATAPATH:
		return (int)o->datapath;
	case OF_URING:
		return (int)o->uring;
	case OF_AUTOHOLD:
		return (int)o->autohold;
	case OF_HUGE:
		return (int)o->huge;
	}
	return -1;
}

static const char *choice_name(enum option_field f, int v)
{
	switch (f) {
	case OF_DATAPATH:
		return options_datapath_name((enum datapath_choice)v);
	case OF_URING:
		return options_uring_name((enum uring_choice)v);
	case OF_AUTOHOLD:
		return options_autohold_name((enum autohold_choice)v);
	case OF_HUGE:
		return options_huge_name((enum huge_choice)v);
	}
	return NULL;
}

/* Values first..last of option f, each applied as "key=<its name>": ours, and the field holds it
 * (so every name the daemon prints is one it takes back). */
static void check_names_round_trip(struct pool_options *o, enum option_field f, const char *key,
				   int first, int last)
{
	for (int v = first; v <= last; v++) {
		char item[64];

		snprintf(item, sizeof(item), "%s=%s", key, choice_name(f, v));
		assert_int_equal(apply(o, item), 1);
		assert_int_equal(option_field(o, f), v);
	}
}

/* One text for a size or seconds parser: what it returns and, on success, the value. */
struct parse_case {
	const char *text;
	int rc;
	uint64_t want;
};

/* Each case parsed into a fresh output: the result, the value on success, and an output left
 * untouched on error (a refused limit must not half-apply). */
static void check_parses(int (*parse)(const char *text, uint64_t *out), const struct parse_case *c,
			 size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v = 77;
		int r = parse(c[i].text, &v);
		uint64_t want = c[i].rc == 0 ? c[i].want : 77;

		if (r != c[i].rc || v != want)
			fail_msg("\"%s\": got %d value %llu, want %d value %llu", c[i].text, r,
				 (unsigned long long)v, c[i].rc, (unsigned long long)want);
	}
}

#define CHECK_PARSES(parse, cases) check_parses(parse, cases, sizeof(cases) / sizeof((cases)[0]))

/* ---- defaults ------------------------------------------------------------------------------- */

static void defaults(void **state)
{
	(void)state;
	struct pool_options o;

	memset(&o, 0xa5, sizeof(o)); /* init must not rely on zeroed memory */
	options_init(&o);
	assert_string_equal(o.backing, "/dev/shm");
	assert_int_equal(o.datapath, DATAPATH_AUTO);
	assert_int_equal(o.autohold, AUTOHOLD_SESSION);
	assert_int_equal(o.linger_ms, 0);
	assert_int_equal(o.max_size, 0);
	assert_int_equal(o.max_user_size, 0);
	/* One user cannot make the daemon hold unbounded memory by default. */
	assert_int_equal(o.max_user_entries, 1ull << 20);
	assert_int_equal(o.max_user_meta, 64ull << 20);
	assert_false(o.root_exempt);
	assert_false(o.allow_other);
	assert_int_equal(o.uring, URING_AUTO);
	assert_false(o.backing_given);
	assert_int_equal(o.huge, HUGE_WITHIN_SIZE);
	assert_false(o.huge_given);
}

static void names(void **state)
{
	(void)state;
	assert_string_equal(options_datapath_name(DATAPATH_AUTO), "auto");
	assert_string_equal(options_datapath_name(DATAPATH_PASSTHROUGH), "passthrough");
	assert_string_equal(options_datapath_name(DATAPATH_PAGECACHE), "pagecache");
	assert_string_equal(options_autohold_name(AUTOHOLD_NONE), "none");
	assert_string_equal(options_autohold_name(AUTOHOLD_PROCESS), "process");
	assert_string_equal(options_autohold_name(AUTOHOLD_SESSION), "session");
	assert_string_equal(options_autohold_name(AUTOHOLD_CGROUP), "cgroup");
	assert_string_equal(options_uring_name(URING_AUTO), "auto");
	assert_string_equal(options_uring_name(URING_ON), "on");
	assert_string_equal(options_uring_name(URING_OFF), "off");
}

/* ---- backing -------------------------------------------------------------------------------- */

static void backing_absolute(void **state)
{
	(void)state;
	struct pool_options o = fresh();

	assert_int_equal(apply(&o, "backing=/tmp/x"), 1);
	assert_string_equal(o.backing, "/tmp/x");
	assert_int_equal(apply(&o, "backing=/"), 1);
	assert_string_equal(o.backing, "/");
	/* A value may itself contain '=' and ','-free text of any kind. */
	assert_int_equal(apply(&o, "backing=/run/a=b"), 1);
	assert_string_equal(o.backing, "/run/a=b");
}

static void backing_relative_refused(void **state)
{
	(void)state;
	struct pool_options o = fresh();

	assert_int_equal(apply(&o, "backing=tmp/x"), -EINVAL);
	assert_int_equal(apply(&o, "backing=./x"), -EINVAL);
	assert_int_equal(apply(&o, "backing=~/x"), -EINVAL);
	assert_int_equal(apply(&o, "backing= /x"), -EINVAL);
	assert_int_equal(apply(&o, "backing="), -EINVAL);
	assert_string_equal(o.backing, "/dev/shm");
}

static void backing_length_boundary(void **state)
{
	(void)state;
	struct pool_options o = fresh();
	char item[sizeof(o.backing) + 32];
	const size_t longest = sizeof(o.backing) - 64 - 1; /* room for the private subfolder */

	/* The longest accepted path. */
	snprintf(item, sizeof(item), "backing=/");
	memset(item + 9, 'a', longest - 1);
	item[8 + longest] = '\0';
	assert_int_equal(strlen(item + 8), longest);
	assert_int_equal(apply(&o, item), 1);
	assert_int_equal(strlen(o.backing), longest);
	assert_memory_equal(o.backing, item + 8, longest + 1);

	/* One more byte: refused, and the old value stays. */
	options_init(&o);
	item[8 + longest] = 'a';
	item[8 + longest + 1] = '\0';
	assert_int_equal(apply(&o, item), -ENAMETOOLONG);
	assert_string_equal(o.backing, "/dev/shm");

	/* Far too long (longer than the buffer itself). */
	memset(item + 9, 'b', sizeof(item) - 10);
	item[sizeof(item) - 1] = '\0';
	assert_int_equal(apply(&o, item), -ENAMETOOLONG);
	assert_string_equal(o.backing, "/dev/shm");
}

/* ---- datapath / autohold -------------------------------------------------------------------- */

/* Every name round-trips (the values one by one are rows of value_rows). */
static void datapath_values(void **state)
{
	(void)state;
	struct pool_options o = fresh();

	check_names_round_trip(&o, OF_DATAPATH, "datapath", DATAPATH_AUTO, DATAPATH_PAGECACHE);
}

/* Every name round-trips (the values one by one are rows of value_rows). */
static void autohold_values(void **state)
{
	(void)state;
	struct pool_options o = fresh();

	check_names_round_trip(&o, OF_AUTOHOLD, "autohold", AUTOHOLD_NONE, AUTOHOLD_CGROUP);
}

/* ---- huge / backing_given -------------------------------------------------------------------- */

static void huge_values(void **state)
{
	(void)state;
	static const char *const names[] = {"never", "within_size", "always", "advise"};

	for (enum huge_choice h = HUGE_NEVER; h <= HUGE_ADVISE; h++) {
		struct pool_options o = fresh();

		assert_string_equal(options_huge_name(h), names[h]);
		check_names_round_trip(&o, OF_HUGE, "huge", (int)h, (int)h);
		assert_true(o.huge_given);
	}
}

static void backing_given_noted(void **state)
{
	(void)state;
	struct pool_options o = fresh();

	assert_int_equal(apply(&o, "backing=/"), 1);
	assert_true(o.backing_given);
	o = fresh();
	assert_int_equal(apply(&o, "backing=x"), -EINVAL);
	assert_false(o.backing_given);
}

/* ---- linger --------------------------------------------------------------------------------- */

static void linger_values(void **state)
{
	(void)state;
	static const struct {
		const char *item;
		uint64_t ms;
	} rows[] = {
		{"linger=0", 0},       {"linger=1", 1000},
		{"linger=1.5", 1500},  {"linger=0.25", 250},
		{"linger=0.001", 1},   {"linger=2.0", 2000},
		{"linger=0.0", 0},     {"linger=86400", 86400000},
		{"linger=010", 10000}, /* decimal, not octal */
	};
	struct pool_options o = fresh();

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(apply(&o, rows[i].item), 1);
		assert_int_equal(o.linger_ms, rows[i].ms);
	}
}

static void linger_rounds_to_ms(void **state)
{
	(void)state;
	/* 0.1 and 0.3 are not exact in binary: still the nearest millisecond. */
	static const struct parse_case cases[] = {
		{"0.0004", 0, 0},    {"0.0006", 0, 1}, {"1.2344", 0, 1234},
		{"1.2346", 0, 1235}, {"0.1", 0, 100},  {"0.3", 0, 300},
	};

	CHECK_PARSES(options_parse_seconds, cases);
}

static void linger_upper_bound(void **state)
{
	(void)state;
	/* At most a year. */
	static const struct parse_case cases[] = {
		{"31536000", 0, 31536000000ull},
		{"31536000.5", -ERANGE, 0},
		{"31536001", -ERANGE, 0},
		{"99999999999999999999999999", -ERANGE, 0},
	};
	uint64_t ms = 77;
	char big[420];

	CHECK_PARSES(options_parse_seconds, cases);
	/* Far beyond what a double holds: still "too long", not "not a number". */
	big[0] = '1';
	memset(big + 1, '0', 400);
	big[401] = '\0';
	assert_int_equal(options_parse_seconds(big, &ms), -ERANGE);
	assert_int_equal(ms, 77);
}

static void linger_tiny_rounds_to_zero(void **state)
{
	(void)state;
	char tiny[420];
	uint64_t ms = 77;

	/* 0.000...01 with 400 zeros: far below a millisecond (strtod underflows), so 0. */
	memcpy(tiny, "0.", 2);
	memset(tiny + 2, '0', 400);
	tiny[402] = '1';
	tiny[403] = '\0';
	assert_int_equal(options_parse_seconds(tiny, &ms), 0);
	assert_int_equal(ms, 0);
	/* Leading zeros galore are still the number they spell. */
	memset(tiny, '0', 400);
	memcpy(tiny + 400, "2.5", 4);
	assert_int_equal(options_parse_seconds(tiny, &ms), 0);
	assert_int_equal(ms, 2500);
}

static void linger_bare_point_forms(void **state)
{
	(void)state;
	static const struct parse_case cases[] = {
		{".5", 0, 500},	     {"2.", 0, 2000},	  {".", -EINVAL, 0},
		{"..5", -EINVAL, 0}, {"5..", -EINVAL, 0}, {".5.", -EINVAL, 0},
	};

	CHECK_PARSES(options_parse_seconds, cases);
}

static void linger_negative_refused(void **state)
{
	(void)state;
	struct pool_options o = fresh();
	uint64_t ms = 77;

	assert_int_equal(apply(&o, "linger=2"), 1);
	assert_int_equal(apply(&o, "linger=-1"), -EINVAL);
	assert_int_equal(apply(&o, "linger=-0.5"), -EINVAL);
	assert_int_equal(apply(&o, "linger=-0"), -EINVAL);
	assert_int_equal(apply(&o, "linger=+1"), -EINVAL);
	/* A sign hidden behind blanks is no better. */
	assert_true(options_parse_seconds(" -1", &ms) < 0);
	assert_true(options_parse_seconds("\t-1", &ms) < 0);
	assert_int_equal(ms, 77);
	assert_int_equal(o.linger_ms, 2000);
}

static void linger_junk_refused(void **state)
{
	(void)state;
	struct pool_options o = fresh();

	assert_int_equal(apply(&o, "linger=3"), 1);
	assert_int_equal(options_parse_seconds(NULL, &o.linger_ms), -EINVAL);
	assert_int_equal(options_parse_seconds("", &o.linger_ms), -EINVAL);
	assert_int_equal(o.linger_ms, 3000);
}

static void linger_only_plain_decimals(void **state)
{
	(void)state;
	/* "SECONDS (decimals allowed)": no exponents, hex floats, infinities, NaN or blanks. */
	static const char *const bad[] = {
		"1e3",	    "1E3", "0x10", "0X1p3", "inf", "INF",
		"infinity", "nan", "NAN",  " 1",    "\t1", "\n1",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t ms = 77;
		int r = options_parse_seconds(bad[i], &ms);

		if (r >= 0)
			fail_msg("linger=\"%s\" accepted as %llu ms", bad[i],
				 (unsigned long long)ms);
		assert_int_equal(ms, 77);
	}
}

/* ---- sizes ---------------------------------------------------------------------------------- */

static void size_plain_and_suffixes(void **state)
{
	(void)state;
	static const struct parse_case cases[] = {
		{"0", 0, 0},	       {"1", 0, 1},	      {"4096", 0, 4096},
		{"010", 0, 10}, /* decimal, not octal */
		{"1k", 0, 1024},       {"64M", 0, 67108864},  {"1M", 0, 1ull << 20},
		{"3G", 0, 3ull << 30}, {"1T", 0, 1ull << 40}, {"0k", 0, 0},
		{"0T", 0, 0},
	};

	CHECK_PARSES(options_parse_size, cases);
}

static void size_overflow_boundaries(void **state)
{
	(void)state;
	static const struct parse_case cases[] = {
		/* The largest plain value, and one past it. */
		{"18446744073709551615", 0, UINT64_MAX},
		{"18446744073709551616", -ERANGE, 0},
		{"99999999999999999999999", -ERANGE, 0},
		{"99999999999999999999999k", -ERANGE, 0},
		/* Each suffix at its largest value and one past it. */
		{"18014398509481983k", 0, (UINT64_MAX >> 10) << 10},
		{"18014398509481984k", -ERANGE, 0},
		{"17592186044415M", 0, (UINT64_MAX >> 20) << 20},
		{"17592186044416M", -ERANGE, 0},
		{"17179869183G", 0, (UINT64_MAX >> 30) << 30},
		{"17179869184G", -ERANGE, 0},
		{"16777215T", 0, (UINT64_MAX >> 40) << 40},
		{"16777216T", -ERANGE, 0},
		{"18446744073709551615T", -ERANGE, 0},
	};

	CHECK_PARSES(options_parse_size, cases);
}

static void size_junk_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"",	"12X", "1P",   "1E",  "k",  "M",  "1kk",  "1 k",  "1k ",
		"1.5M", "1,5", "0x10", "ten", "1-", "1+", "12\n", "1KiB",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 77;
		int r = options_parse_size(bad[i], &v);

		if (r != -EINVAL)
			fail_msg("size \"%s\": got %d, want -EINVAL", bad[i], r);
		assert_int_equal(v, 77);
	}
	assert_int_equal(options_parse_size(NULL, &(uint64_t){0}), -EINVAL);
}

static void size_signs_refused(void **state)
{
	(void)state;
	/* strtoull would happily wrap "-1" to 2^64-1: a negative quota must never become "huge". */
	static const char *const bad[] = {"-1", "-0", "+1", "-1k", " -1", "\t-1", " +1", "\n-5M"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 77;
		int r = options_parse_size(bad[i], &v);

		if (r != -EINVAL)
			fail_msg("size \"%s\": got %d (value %llu), want -EINVAL", bad[i], r,
				 (unsigned long long)v);
		assert_int_equal(v, 77);
	}
}

static void size_blanks_refused(void **state)
{
	(void)state;
	static const struct parse_case cases[] = {{" 1", -EINVAL, 0}, {"\t1k", -EINVAL, 0}};

	CHECK_PARSES(options_parse_size, cases);
}

/* docs/interface.md: a B may follow a suffix ("64MB"), but a bare "64B" is refused. */
static void size_byte_suffix(void **state)
{
	(void)state;
	static const struct parse_case cases[] = {
		{"64MB", 0, 64ull << 20}, {"2kb", 0, 2048},	 {"1TB", 0, 1ull << 40},
		{"64B", -EINVAL, 0},	  {"64MBB", -EINVAL, 0}, {"64BM", -EINVAL, 0},
	};

	CHECK_PARSES(options_parse_size, cases);
}

static void max_size_options(void **state)
{
	(void)state;
	/* Each item sets its own limit and leaves the other as it was. */
	static const struct {
		const char *item;
		uint64_t max_size, max_user_size;
	} rows[] = {
		{"max_size=1G", 1ull << 30, 0},
		{"max_user_size=64M", 1ull << 30, 64ull << 20},
		{"max_size=0", 0, 64ull << 20},
		{"max_size=2T", 2ull << 40, 64ull << 20},
		{"max_user_size=5k", 2ull << 40, 5120},
	};
	struct pool_options o = fresh();

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(apply(&o, rows[i].item), 1);
		assert_int_equal(o.max_size, rows[i].max_size);
		assert_int_equal(o.max_user_size, rows[i].max_user_size);
	}
}

static void max_size_bad_values(void **state)
{
	(void)state;
	/* Each refused item says which option it was and leaves both limits as they were. */
	static const struct {
		const char *item, *key;
		int rc;
	} rows[] = {
		{"max_size=12X", "max_size", -EINVAL},
		{"max_size=-1", "max_size", -EINVAL},
		{"max_size=", "max_size", -EINVAL},
		{"max_size=18446744073709551616", "max_size", -ERANGE},
		{"max_size=16777216T", "max_size", -ERANGE},
		{"max_user_size=12X", "max_user_size", -EINVAL},
		{"max_user_size=-1", "max_user_size", -EINVAL},
		{"max_user_size=", "max_user_size", -EINVAL},
		{"max_user_size=99999999999999999999", "max_user_size", -ERANGE},
		{"max_user_size=17179869184G", "max_user_size", -ERANGE},
	};
	struct pool_options o = fresh();

	assert_int_equal(apply(&o, "max_size=1k"), 1);
	assert_int_equal(apply(&o, "max_user_size=2k"), 1);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *why = NULL;

		assert_int_equal(options_apply(&o, rows[i].item, &why), rows[i].rc);
		if (!why || !strstr(why, rows[i].key))
			fail_msg("\"%s\": the reason does not name %s", rows[i].item, rows[i].key);
		assert_int_equal(o.max_size, 1024);
		assert_int_equal(o.max_user_size, 2048);
	}
}

/* max_user_entries and max_user_meta: one row per item, with what it must leave in the field
 * (a refused item leaves the previous value). */
static void user_limits_table(void **state)
{
	(void)state;
	static const struct {
		const char *item;
		int result;
		uint64_t entries, meta;
	} rows[] = {
		{"max_user_entries=1000", 1, 1000, 64ull << 20},
		{"max_user_entries=4k", 1, 4096, 64ull << 20},
		{"max_user_entries=0", 1, 0, 64ull << 20},
		{"max_user_meta=1M", 1, 0, 1ull << 20},
		{"max_user_meta=0", 1, 0, 0},
		{"max_user_meta=512", 1, 0, 512},
		{"max_user_entries=-1", -EINVAL, 0, 512},
		{"max_user_entries=", -EINVAL, 0, 512},
		{"max_user_entries=1.5", -EINVAL, 0, 512},
		{"max_user_meta=12X", -EINVAL, 0, 512},
		{"max_user_meta=99999999999999999999", -ERANGE, 0, 512},
		{"max_user_meta", 0, 0,
		 512}, /* no value: not ours, goes on to FUSE (which refuses) */
	};
	struct pool_options o = fresh();

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *why = NULL;
		int r = options_apply(&o, rows[i].item, &why);
		if (r != rows[i].result || o.max_user_entries != rows[i].entries ||
		    o.max_user_meta != rows[i].meta)
			fail_msg("row %zu '%s': got %d entries %llu meta %llu", i, rows[i].item, r,
				 (unsigned long long)o.max_user_entries,
				 (unsigned long long)o.max_user_meta);
		if (r < 0 && (!why || !strstr(why, "max_user_")))
			fail_msg("row %zu '%s': the reason does not name the option", i,
				 rows[i].item);
	}
}

/* ---- accepted values: one row per item, each its own test named group/item ---------------- */

/* On fresh options, item gives rc: 1 (ours) with field now want, or 0 (not ours: it goes on to
 * FUSE) with every option left as it was. */
static const struct value_row {
	const char *group;
	const char *item;
	int rc;
	enum option_field field;
	int want;
} value_rows[] = {
	{"datapath_values", "datapath=passthrough", 1, OF_DATAPATH, DATAPATH_PASSTHROUGH},
	{"datapath_values", "datapath=pagecache", 1, OF_DATAPATH, DATAPATH_PAGECACHE},
	{"datapath_values", "datapath=auto", 1, OF_DATAPATH, DATAPATH_AUTO},
	{"uring_values", "uring=off", 1, OF_URING, URING_OFF},
	{"uring_values", "uring=on", 1, OF_URING, URING_ON},
	{"uring_values", "uring=auto", 1, OF_URING, URING_AUTO},
	/* libfuse's own switches are not ours: they go on to FUSE. */
	{"uring_values", "io_uring", 0, OF_URING, 0},
	{"uring_values", "io_uring_q_depth=16", 0, OF_URING, 0},
	{"autohold_values", "autohold=none", 1, OF_AUTOHOLD, AUTOHOLD_NONE},
	{"autohold_values", "autohold=process", 1, OF_AUTOHOLD, AUTOHOLD_PROCESS},
	{"autohold_values", "autohold=cgroup", 1, OF_AUTOHOLD, AUTOHOLD_CGROUP},
	{"autohold_values", "autohold=session", 1, OF_AUTOHOLD, AUTOHOLD_SESSION},
};

static void test_value_row(void **state)
{
	const struct value_row *r = *state;
	struct pool_options o = fresh();
	const struct pool_options before = o;

	assert_int_equal(apply(&o, r->item), r->rc);
	if (r->rc == 1)
		assert_int_equal(option_field(&o, r->field), r->want);
	else
		assert_same_options(&o, &before);
}

/* ---- refused values: one row per item, each its own test named group/item ---------------- */

/* After `good`, the refused item gives -EINVAL, a reason that names `key`, and leaves every
 * option as `good` left it. */
static const struct bad_row {
	const char *group;
	const char *good;
	const char *key;
	const char *item;
} bad_rows[] = {
	{"datapath_bad_names", "datapath=pagecache", "datapath", "datapath="},
	{"datapath_bad_names", "datapath=pagecache", "datapath", "datapath=AUTO"},
	{"datapath_bad_names", "datapath=pagecache", "datapath", "datapath=Passthrough"},
	{"datapath_bad_names", "datapath=pagecache", "datapath", "datapath=page"},
	{"datapath_bad_names", "datapath=pagecache", "datapath", "datapath=pagecache "},
	{"datapath_bad_names", "datapath=pagecache", "datapath", "datapath= auto"},
	{"datapath_bad_names", "datapath=pagecache", "datapath", "datapath=autox"},
	{"datapath_bad_names", "datapath=pagecache", "datapath", "datapath=none"},
	{"datapath_bad_names", "datapath=pagecache", "datapath", "datapath=passthrough,"},
	{"datapath_bad_names", "datapath=pagecache", "datapath", "datapath=pagecache\n"},
	{"uring_bad_names", "uring=off", "uring", "uring="},
	{"uring_bad_names", "uring=off", "uring", "uring=ON"},
	{"uring_bad_names", "uring=off", "uring", "uring=yes"},
	{"uring_bad_names", "uring=off", "uring", "uring=1"},
	{"uring_bad_names", "uring=off", "uring", "uring=off "},
	{"uring_bad_names", "uring=off", "uring", "uring= on"},
	{"uring_bad_names", "uring=off", "uring", "uring=auto,"},
	{"autohold_bad_names", "autohold=none", "autohold", "autohold="},
	{"autohold_bad_names", "autohold=none", "autohold", "autohold=pin"},
	{"autohold_bad_names", "autohold=none", "autohold", "autohold=NONE"},
	{"autohold_bad_names", "autohold=none", "autohold", "autohold=Session"},
	{"autohold_bad_names", "autohold=none", "autohold", "autohold=pid:1"},
	{"autohold_bad_names", "autohold=none", "autohold", "autohold=sessions"},
	{"autohold_bad_names", "autohold=none", "autohold", "autohold= none"},
	{"autohold_bad_names", "autohold=none", "autohold", "autohold=none "},
	{"autohold_bad_names", "autohold=none", "autohold", "autohold=proc"},
	{"autohold_bad_names", "autohold=none", "autohold", "autohold=cgroup\n"},
	/* "deny" and "force" are values of the global shmem_enabled knob, not of a tmpfs mount. */
	{"huge_bad_names", "huge=never", "huge", "huge="},
	{"huge_bad_names", "huge=never", "huge", "huge=deny"},
	{"huge_bad_names", "huge=never", "huge", "huge=force"},
	{"huge_bad_names", "huge=never", "huge", "huge=Always"},
	{"huge_bad_names", "huge=never", "huge", "huge=within-size"},
	{"huge_bad_names", "huge=never", "huge", "huge=yes"},
	{"huge_bad_names", "huge=never", "huge", "huge=1"},
	{"huge_bad_names", "huge=never", "huge", "huge= never"},
	{"huge_bad_names", "huge=never", "huge", "huge=never "},
	{"linger_junk_refused", "linger=3", "linger", "linger="},
	{"linger_junk_refused", "linger=3", "linger", "linger=abc"},
	{"linger_junk_refused", "linger=3", "linger", "linger=1s"},
	{"linger_junk_refused", "linger=3", "linger", "linger=1.5s"},
	{"linger_junk_refused", "linger=3", "linger", "linger=1,5"},
	{"linger_junk_refused", "linger=3", "linger", "linger=1.2.3"},
	{"linger_junk_refused", "linger=3", "linger", "linger=1 "},
	{"linger_junk_refused", "linger=3", "linger", "linger=."},
	{"linger_junk_refused", "linger=3", "linger", "linger=1e"},
	{"linger_junk_refused", "linger=3", "linger", "linger=one"},
	{"linger_junk_refused", "linger=3", "linger", "linger=0x"},
	{"linger_junk_refused", "linger=3", "linger", "linger=\n"},
};

static void test_bad_row(void **state)
{
	const struct bad_row *r = *state;
	struct pool_options o = fresh(), before;
	const char *why = NULL;

	assert_int_equal(apply(&o, r->good), 1);
	before = o;
	assert_int_equal(options_apply(&o, r->item, &why), -EINVAL);
	assert_non_null(why);
	assert_non_null(strstr(why, r->key));
	assert_same_options(&o, &before);
}

/* ---- flags and what goes on to FUSE --------------------------------------------------------- */

static void root_exempt_flag(void **state)
{
	(void)state;
	struct pool_options o = fresh();

	assert_int_equal(apply(&o, "root_exempt"), 1);
	assert_true(o.root_exempt);
	assert_int_equal(apply(&o, "root_exempt"), 1); /* twice is fine */
	assert_true(o.root_exempt);
}

static void allow_other_noted_and_passed_on(void **state)
{
	(void)state;
	struct pool_options o = fresh(), before;

	assert_int_equal(apply(&o, "allow_other"), 0);
	assert_true(o.allow_other);
	/* Nothing else changed. */
	before = fresh();
	before.allow_other = true;
	assert_same_options(&o, &before);
}

/* Either one lets a user other than the mounting one in: a multi-user pool (default_permissions,
 * uncached root names). Neither: a private pool. */
static void allow_root_noted_and_either_makes_a_multi_user_pool(void **state)
{
	(void)state;
	struct pool_options o = fresh(), before;

	assert_false(options_multi_user(&o));
	assert_int_equal(apply(&o, "allow_root"), 0);
	assert_true(o.allow_root);
	assert_true(options_multi_user(&o));
	before = fresh();
	before.allow_root = true;
	assert_same_options(&o, &before);
	o = fresh();
	assert_int_equal(apply(&o, "allow_other"), 0);
	assert_true(options_multi_user(&o));
}

static void unknown_options_passed_on(void **state)
{
	(void)state;
	static const char *const theirs[] = {
		"auto_unmount",
		"fsname=pool",
		"default_permissions",
		"ro",
		"rw",
		"max_read=4096",
		"",
		"=",
		"allow_rootx",
		"subtype=poolfs",
		/* Our keys only as a whole word followed by '=': */
		"backingx=/a",
		"backing_dir=/a",
		"datapath_x=auto",
		"lingerx=1",
		"max_sizes=1",
		"max_size_x=1",
		"max_user=1",
		"root_exempt=1",
		"root_exemptx",
		"xroot_exempt",
		"allow_other=1",
		"Backing=/a",
		"LINGER=1",
	};
	struct pool_options o = fresh(), before = fresh();

	for (size_t i = 0; i < sizeof(theirs) / sizeof(theirs[0]); i++) {
		if (apply(&o, theirs[i]) != 0)
			fail_msg("\"%s\" was taken as ours", theirs[i]);
	}
	assert_same_options(&o, &before);
}

static void why_may_be_null(void **state)
{
	(void)state;
	struct pool_options o = fresh();

	assert_int_equal(options_apply(&o, "backing=rel", NULL), -EINVAL);
	assert_int_equal(options_apply(&o, "datapath=bad", NULL), -EINVAL);
	assert_int_equal(options_apply(&o, "autohold=bad", NULL), -EINVAL);
	assert_int_equal(options_apply(&o, "linger=bad", NULL), -EINVAL);
	assert_int_equal(options_apply(&o, "max_size=bad", NULL), -EINVAL);
	assert_int_equal(options_apply(&o, "max_user_size=bad", NULL), -EINVAL);
	assert_int_equal(options_apply(&o, "linger=1", NULL), 1);
	assert_int_equal(options_apply(&o, "fsname=x", NULL), 0);
}

static void every_error_names_its_option(void **state)
{
	(void)state;
	static const struct {
		const char *item, *key;
	} cases[] = {
		{"backing=rel", "backing"}, {"datapath=x", "datapath"},
		{"autohold=x", "autohold"}, {"linger=x", "linger"},
		{"max_size=x", "max_size"}, {"max_user_size=x", "max_user_size"},
		{"uring=x", "uring"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pool_options o = fresh();
		const char *why = NULL;

		assert_true(options_apply(&o, cases[i].item, &why) < 0);
		assert_non_null(why);
		if (!strstr(why, cases[i].key))
			fail_msg("\"%s\": reason \"%s\" does not name %s", cases[i].item, why,
				 cases[i].key);
	}
}

static void full_command_line(void **state)
{
	(void)state;
	static const char *const items[] = {
		"backing=/run/pool", "datapath=pagecache", "autohold=none",
		"linger=0.5",	     "max_size=1G",	   "max_user_size=256M",
		"root_exempt",	     "allow_other",	   "auto_unmount",
	};
	static const int want[] = {1, 1, 1, 1, 1, 1, 1, 0, 0};
	struct pool_options o = fresh();

	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
		assert_int_equal(apply(&o, items[i]), want[i]);
	assert_string_equal(o.backing, "/run/pool");
	assert_int_equal(o.datapath, DATAPATH_PAGECACHE);
	assert_int_equal(o.autohold, AUTOHOLD_NONE);
	assert_int_equal(o.linger_ms, 500);
	assert_int_equal(o.max_size, 1ull << 30);
	assert_int_equal(o.max_user_size, 256ull << 20);
	assert_true(o.root_exempt);
	assert_true(o.allow_other);
	/* A later item overrides an earlier one. */
	assert_int_equal(apply(&o, "datapath=auto"), 1);
	assert_int_equal(o.datapath, DATAPATH_AUTO);
}

static const struct CMUnitTest scenarios[] = {
	cmocka_unit_test(defaults),
	cmocka_unit_test(names),
	cmocka_unit_test(backing_absolute),
	cmocka_unit_test(backing_relative_refused),
	cmocka_unit_test(backing_length_boundary),
	cmocka_unit_test(datapath_values),
	cmocka_unit_test(autohold_values),
	cmocka_unit_test(huge_values),
	cmocka_unit_test(backing_given_noted),
	cmocka_unit_test(linger_values),
	cmocka_unit_test(linger_rounds_to_ms),
	cmocka_unit_test(linger_upper_bound),
	cmocka_unit_test(linger_tiny_rounds_to_zero),
	cmocka_unit_test(linger_bare_point_forms),
	cmocka_unit_test(linger_negative_refused),
	cmocka_unit_test(linger_junk_refused),
	cmocka_unit_test(linger_only_plain_decimals),
	cmocka_unit_test(size_plain_and_suffixes),
	cmocka_unit_test(size_overflow_boundaries),
	cmocka_unit_test(size_junk_refused),
	cmocka_unit_test(size_signs_refused),
	cmocka_unit_test(size_blanks_refused),
	cmocka_unit_test(size_byte_suffix),
	cmocka_unit_test(max_size_options),
	cmocka_unit_test(max_size_bad_values),
	cmocka_unit_test(user_limits_table),
	cmocka_unit_test(root_exempt_flag),
	cmocka_unit_test(allow_other_noted_and_passed_on),
	cmocka_unit_test(allow_root_noted_and_either_makes_a_multi_user_pool),
	cmocka_unit_test(unknown_options_passed_on),
	cmocka_unit_test(why_may_be_null),
	cmocka_unit_test(every_error_names_its_option),
	cmocka_unit_test(full_command_line),
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char row_names[N(value_rows) + N(bad_rows)][96];

int main(void)
{
	struct CMUnitTest tests[N(scenarios) + N(row_names)];
	struct CMUnitTest *t = tests + N(scenarios);
	char(*name)[96] = row_names;

	memcpy(tests, scenarios, sizeof(scenarios));
	for (size_t i = 0; i < N(value_rows); i++, t++, name++) {
		rows_name(*name, sizeof(*name), value_rows[i].group, value_rows[i].item,
			  strlen(value_rows[i].item));
		*t = (struct CMUnitTest){.name = *name,
					 .test_func = test_value_row,
					 .initial_state = (void *)&value_rows[i]};
	}
	for (size_t i = 0; i < N(bad_rows); i++, t++, name++) {
		rows_name(*name, sizeof(*name), bad_rows[i].group, bad_rows[i].item,
			  strlen(bad_rows[i].item));
		*t = (struct CMUnitTest){.name = *name,
					 .test_func = test_bad_row,
					 .initial_state = (void *)&bad_rows[i]};
	}
	return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
