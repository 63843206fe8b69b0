/* Unit tests of fs/holds.c: the user.poolfs.hold scope language, the hold lists, and the scope text
 * of user.poolfs.refs.
 *
 * Parsing: every scope, the one trailing NUL or newline setfattr may add, and every malformed value
 * (a precise -EINVAL, never a crash, never a read past `len`). Lists: several nodes' holds sharing
 * sources, unlinked from the head, the middle and the tail, with both the per-node and per-source
 * lists walked and cross-checked after every step. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rows.h"

#include "holds.h"

/* ---- parsing -------------------------------------------------------------------------------- */

/* Parse a C string (without its NUL) through a heap copy of exactly `len` bytes, so a read past
 * `len` shows up under ASan/valgrind. */
static int parse_n(const char *value, size_t len, struct hold_request *out)
{
	char *copy = malloc(len ? len : 1);
	int r;

	assert_non_null(copy);
	memcpy(copy, value, len);
	r = hold_request_parse(copy, len, out);
	free(copy);
	return r;
}

static int parse(const char *s, struct hold_request *out)
{
	return parse_n(s, strlen(s), out);
}

static void expect_ok(const char *value, size_t len, enum hold_kind kind, pid_t pid)
{
	struct hold_request r = {.kind = (enum hold_kind)99, .pid = 4242};

	assert_int_equal(parse_n(value, len, &r), 0);
	assert_int_equal(r.kind, kind);
	assert_int_equal(r.pid, pid);
}

static void expect_einval(const char *value, size_t len)
{
	struct hold_request r = {.kind = HOLD_PIN, .pid = 0};
	int got = parse_n(value, len, &r);

	if (got != -EINVAL) {
		char shown[160];
		size_t n = 0;

		for (size_t i = 0; i < len && n + 5 < sizeof(shown); i++) {
			unsigned char c = (unsigned char)value[i];

			n += (size_t)snprintf(shown + n, sizeof(shown) - n,
					      c >= 0x20 && c < 0x7f ? "%c" : "\\x%02x", c);
		}
		fail_msg("\"%s\" (len %zu): got %d, want -EINVAL", shown, len, got);
	}
}

/* One value, one test case (named group/value): hold_request_parse of its `len` bytes gives rc
 * and, when it succeeds, kind and pid. */
static const struct parse_row {
	const char *group;
	const char *value;
	size_t len;
	int rc;
	enum hold_kind kind;
	pid_t pid;
} parse_rows[] = {
	{"parse_scopes", "pin", 3, 0, HOLD_PIN, 0},
	{"parse_scopes", "process", 7, 0, HOLD_PID, 0},
	{"parse_scopes", "session", 7, 0, HOLD_SESSION, 0},
	{"parse_scopes", "cgroup", 6, 0, HOLD_CGROUP, 0},
	{"parse_scopes", "pid:123", 7, 0, HOLD_PID, 123},
	/* setfattr, and sizeof("pin") in C, pass the terminating NUL. */
	{"parse_trailing_nul", "pin", 4, 0, HOLD_PIN, 0},
	{"parse_trailing_nul", "process", 8, 0, HOLD_PID, 0},
	{"parse_trailing_nul", "session", 8, 0, HOLD_SESSION, 0},
	{"parse_trailing_nul", "cgroup", 7, 0, HOLD_CGROUP, 0},
	{"parse_trailing_nul", "pid:123", 8, 0, HOLD_PID, 123},
	/* echo pin > ... style values. */
	{"parse_trailing_newline", "pin\n", 4, 0, HOLD_PIN, 0},
	{"parse_trailing_newline", "process\n", 8, 0, HOLD_PID, 0},
	{"parse_trailing_newline", "session\n", 8, 0, HOLD_SESSION, 0},
	{"parse_trailing_newline", "cgroup\n", 7, 0, HOLD_CGROUP, 0},
	{"parse_trailing_newline", "pid:123\n", 8, 0, HOLD_PID, 123},
	/* The value is `len` bytes, not a C string: what follows is not part of it. */
	{"parse_uses_len_not_nul", "pinned", 3, 0, HOLD_PIN, 0},
	{"parse_uses_len_not_nul", "sessions", 7, 0, HOLD_SESSION, 0},
	{"parse_uses_len_not_nul", "pid:12345", 6, 0, HOLD_PID, 12},
	/* And a shorter len is a different, wrong value. */
	{"parse_uses_len_not_nul", "pin", 2, -EINVAL, HOLD_PIN, 0},
	{"parse_uses_len_not_nul", "process", 4, -EINVAL, HOLD_PIN, 0},
	{"parse_only_one_terminator", "pin\n\n", 5, -EINVAL, HOLD_PIN, 0},
	{"parse_only_one_terminator", "pin\0\0", 5, -EINVAL, HOLD_PIN, 0},
	{"parse_only_one_terminator", "pin\n\0", 5, -EINVAL, HOLD_PIN, 0},
	{"parse_only_one_terminator", "pin\0\n", 5, -EINVAL, HOLD_PIN, 0},
	{"parse_only_one_terminator", "pid:1\n\n", 7, -EINVAL, HOLD_PIN, 0},
	{"parse_only_one_terminator", "pid:1\0\0", 7, -EINVAL, HOLD_PIN, 0},
	{"parse_embedded_nul", "pi\0n", 4, -EINVAL, HOLD_PIN, 0},
	{"parse_embedded_nul", "\0pin", 4, -EINVAL, HOLD_PIN, 0},
	{"parse_embedded_nul", "pin\0x", 5, -EINVAL, HOLD_PIN, 0},
	{"parse_embedded_nul", "pid:1\0002", 7, -EINVAL, HOLD_PIN, 0},
	{"parse_embedded_nul", "pid:\0001", 6, -EINVAL, HOLD_PIN, 0},
	{"parse_embedded_nul", "session\0\n", 9, -EINVAL, HOLD_PIN, 0},
};

static void test_parse_row(void **state)
{
	const struct parse_row *r = *state;

	if (r->rc == 0)
		expect_ok(r->value, r->len, r->kind, r->pid);
	else
		expect_einval(r->value, r->len);
}

static void parse_pid_boundaries(void **state)
{
	(void)state;
	char buf[32];

	expect_ok("pid:1", 5, HOLD_PID, 1);
	expect_ok("pid:9", 5, HOLD_PID, 9);
	expect_ok("pid:10", 6, HOLD_PID, 10);
	expect_ok("pid:4194304", 11, HOLD_PID, 4194304); /* PID_MAX_LIMIT */
	snprintf(buf, sizeof(buf), "pid:%d", INT_MAX);
	expect_ok(buf, strlen(buf), HOLD_PID, INT_MAX);
	snprintf(buf, sizeof(buf), "pid:%lld", (long long)INT_MAX + 1);
	expect_einval(buf, strlen(buf));
	snprintf(buf, sizeof(buf), "pid:%llu", (unsigned long long)UINT_MAX + 1);
	expect_einval(buf, strlen(buf));
	snprintf(buf, sizeof(buf), "pid:%ld", LONG_MAX);
	expect_einval(buf, strlen(buf));
	snprintf(buf, sizeof(buf), "pid:%lu0", (unsigned long)LONG_MAX);
	expect_einval(buf, strlen(buf));
}

static void parse_process_clears_pid(void **state)
{
	(void)state;
	struct hold_request r = {.kind = HOLD_CGROUP, .pid = 999};

	/* "process" leaves pid 0 for the pool to fill in, whatever the struct held before. */
	assert_int_equal(parse("process", &r), 0);
	assert_int_equal(r.kind, HOLD_PID);
	assert_int_equal(r.pid, 0);
	r.pid = 999;
	assert_int_equal(parse("pin", &r), 0);
	assert_int_equal(r.pid, 0);
	r.pid = 999;
	assert_int_equal(parse("session", &r), 0);
	assert_int_equal(r.pid, 0);
	r.pid = 999;
	assert_int_equal(parse("cgroup", &r), 0);
	assert_int_equal(r.pid, 0);
}

static void parse_bad_values(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"pid:",
		"pid:0",
		"pid:-1",
		"pid:12a",
		"pid:99999999999",
		"PIN",
		"Pin",
		"PROCESS",
		"Session",
		"CGROUP",
		"pid:+1",
		"pid: 1",
		"pid:01",
		"pid:1 ",
		"pid:1.0",
		"pid:0x10",
		"pid:1e3",
		"pid",
		"pid:1:2",
		"PID:1",
		"pid=1",
		"pin ",
		" pin",
		"pins",
		"pi",
		"p",
		"process:1",
		"session:1",
		"cgroup:/a",
		"pin\r",
		"pin\t",
		"none",
		"\n",
		"\n\n",
		"pin\n\n",
		"pin\n\r",
		"pin\r\n",
		":",
		"pid:-0",
		"pid:4294967296",
		"pid:18446744073709551617",
		"pid:\n\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_einval(bad[i], strlen(bad[i]));
}

static void parse_empty(void **state)
{
	(void)state;
	struct hold_request r;

	expect_einval("", 0);
	expect_einval("\0", 1); /* only the trailing NUL */
	expect_einval("\n", 1); /* only the trailing newline */
	assert_int_equal(hold_request_parse(NULL, 0, &r), -EINVAL);
	assert_int_equal(hold_request_parse(NULL, 3, &r), -EINVAL);
}

static void parse_long_values(void **state)
{
	(void)state;
	char buf[128];

	/* 100 bytes of junk. */
	memset(buf, 'a', 100);
	expect_einval(buf, 100);
	/* "pin" padded to 100 bytes with NULs (what strncpy does). */
	strncpy(buf, "pin", 100);
	expect_einval(buf, 100);
	/* A valid pid behind 95 leading zeros would be a very long number: refused. */
	snprintf(buf, sizeof(buf), "pid:%096d", 7);
	expect_einval(buf, 100);
	/* A long run of digits. */
	memset(buf + 4, '9', 96);
	expect_einval(buf, 100);
	/* Huge len: refused without reading it all. */
	{
		size_t big = 1u << 20;
		char *p = malloc(big);

		assert_non_null(p);
		/* "pin", then 'x' up to the end: no NUL anywhere */
		snprintf(p, big, "pin");
		memset(p + 3, 'x', big - 3);
		assert_int_equal(hold_request_parse(p, big, &(struct hold_request){0}), -EINVAL);
		free(p);
	}
}

static void parse_length_boundaries(void **state)
{
	(void)state;
	char buf[64];

	/* Lengths around any internal copy buffer (sanitizers catch an off-by-one write there):
	 * junk of every length from 8 to 40, bare and with each allowed terminator. */
	for (size_t n = 8; n <= 40; n++) {
		memset(buf, 'q', n);
		expect_einval(buf, n);
		buf[n] = '\0';
		expect_einval(buf, n + 1);
		buf[n] = '\n';
		expect_einval(buf, n + 1);
		/* A valid scope followed by blanks up to n bytes is still junk. */
		memset(buf, ' ', n);
		memcpy(buf, "session", 7);
		expect_einval(buf, n);
		/* A long pid with leading digits of a valid one. */
		memset(buf, '1', n);
		memcpy(buf, "pid:", 4);
		if (n - 4 <= 10) /* 1111111111 (ten ones) fits an int */
			continue;
		expect_einval(buf, n);
	}
}

/* The autohold rule, one row per mount option value: the kinds a creator's hold is tried as, in
 * order (hold_autohold_kinds). */
static void autohold_rule_table(void **state)
{
	static const struct {
		enum autohold_choice choice;
		size_t n;
		enum hold_kind kinds[2];
	} rows[] = {
		{AUTOHOLD_NONE, 0, {HOLD_PIN, HOLD_PIN}},
		{AUTOHOLD_PROCESS, 1, {HOLD_PID, HOLD_PIN}},
		/* a session or cgroup that cannot be held falls back to the creator's process */
		{AUTOHOLD_SESSION, 2, {HOLD_SESSION, HOLD_PID}},
		{AUTOHOLD_CGROUP, 2, {HOLD_CGROUP, HOLD_PID}},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		enum hold_kind got[2] = {HOLD_PIN, HOLD_PIN};
		size_t n = hold_autohold_kinds(rows[i].choice, got);

		assert_int_equal(n, rows[i].n);
		for (size_t k = 0; k < n; k++)
			assert_int_equal(got[k], rows[i].kinds[k]);
		/* never a pin: an autohold must end by itself */
		for (size_t k = 0; k < n; k++)
			assert_int_not_equal(got[k], HOLD_PIN);
	}
	/* a value outside the enum (a future option) gets none, not garbage */
	{
		enum hold_kind got[2];
		assert_int_equal(hold_autohold_kinds((enum autohold_choice)99, got), 0);
	}
}

static void parse_every_prefix_of_valid(void **state)
{
	(void)state;
	static const char *const good[] = {"pin", "process", "session", "cgroup", "pid:123"};

	/* Every proper prefix of a valid scope is invalid, except "pid:1" and "pid:12". */
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		size_t n = strlen(good[i]);

		for (size_t k = 0; k < n; k++) {
			struct hold_request r;
			int got = parse_n(good[i], k, &r);

			if (strncmp(good[i], "pid:", 4) == 0 && k > 4)
				assert_int_equal(got, 0);
			else if (got != -EINVAL)
				fail_msg("prefix %zu of \"%s\" accepted", k, good[i]);
		}
	}
}

/* ---- lists ---------------------------------------------------------------------------------- */

static struct hold_source make_src(enum hold_kind kind, pid_t pid, char *cgroup)
{
	struct hold_source s;

	memset(&s, 0, sizeof(s));
	s.kind = kind;
	s.pid = pid;
	s.cgroup = cgroup;
	s.fd = -1;
	return s;
}

static void init_hold(struct hold *h, void *node, uid_t uid, struct hold_source *src)
{
	/* Garbage in the link fields: hold_link must set them all. */
	memset(h, 0x5a, sizeof(*h));
	h->node = node;
	h->uid = uid;
	h->src = src;
}

/* The node list must be exactly `want` (in order), each entry belonging to `node`. */
static void check_node_list(const struct hold *list, void *node, struct hold *const want[],
			    size_t n)
{
	const struct hold *h = list;
	size_t i = 0;

	/* Bounded by n, so want[i] is always inside want; then: no more entries, and no fewer. */
	for (; h && i < n; h = h->node_next, i++) {
		assert_ptr_equal(h, want[i]);
		assert_ptr_equal(h->node, node);
	}
	assert_null(h);
	assert_int_equal(i, n);
	assert_int_equal(hold_count(list), n);
}

/* The source list must be exactly `want` (in order), doubly linked both ways, all ending here. */
static void check_src_list(const struct hold_source *s, struct hold *const want[], size_t n)
{
	const struct hold *prev = NULL, *h;
	size_t i = 0;

	/* Both walks are bounded by n, so want[i] is always inside want; after each: no more
	 * entries, and no fewer. */
	for (h = s->holds; h && i < n; prev = h, h = h->src_next, i++) {
		assert_ptr_equal(h, want[i]);
		assert_ptr_equal(h->src, s);
		assert_ptr_equal(h->src_prev, prev);
	}
	assert_null(h);
	assert_int_equal(i, n);
	/* Walk back from the tail: the same list reversed. */
	for (h = prev; h && i > 0; h = h->src_prev) {
		i--;
		assert_ptr_equal(h, want[i]);
	}
	assert_null(h);
	assert_int_equal(i, 0);
}

static void check_detached(const struct hold *h)
{
	assert_null(h->node_next);
	assert_null(h->src_next);
	assert_null(h->src_prev);
}

static void count_empty(void **state)
{
	(void)state;
	assert_int_equal(hold_count(NULL), 0);
}

static void link_pin_has_no_source(void **state)
{
	(void)state;
	int node;
	struct hold *list = NULL, p;

	init_hold(&p, &node, 1000, NULL);
	hold_link(&list, &p);
	assert_ptr_equal(list, &p);
	check_detached(&p);
	assert_int_equal(hold_count(list), 1);
	hold_unlink(&list, &p);
	assert_null(list);
	check_detached(&p);
	assert_int_equal(hold_count(list), 0);
}

static void link_single_sourced(void **state)
{
	(void)state;
	int node;
	struct hold_source s = make_src(HOLD_PID, 77, NULL);
	struct hold *list = NULL, h;

	init_hold(&h, &node, 1000, &s);
	hold_link(&list, &h);
	check_node_list(list, &node, (struct hold *[]){&h}, 1);
	check_src_list(&s, (struct hold *[]){&h}, 1);
	hold_unlink(&list, &h);
	assert_null(list);
	assert_null(s.holds);
	check_detached(&h);
	/* Source fields other than the list are left alone. */
	assert_int_equal(s.kind, HOLD_PID);
	assert_int_equal(s.pid, 77);
	assert_int_equal(s.fd, -1);
	assert_false(s.ended);
}

/* Two nodes, two sources and pins:
 *   node A: a1(S) a2(pin) a3(S) a4(T) a5(S)       linked in this order
 *   node B: b1(S) b2(T) b3(pin)                   interleaved with A's
 * Link order a1 b1 a2 a3 b2 a4 b3 a5; lists grow at the head, so node A reads a5 a4 a3 a2 a1,
 * node B b3 b2 b1, source S a5 a3 b1 a1 and source T a4 b2. */
struct fixture {
	int node_a, node_b;
	struct hold_source s, t;
	struct hold *list_a, *list_b;
	struct hold a1, a2, a3, a4, a5, b1, b2, b3;
};

static int fixture_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->s = make_src(HOLD_PID, 100, NULL);
	f->t = make_src(HOLD_SESSION, 200, NULL);
	init_hold(&f->a1, &f->node_a, 1000, &f->s);
	init_hold(&f->a2, &f->node_a, 1000, NULL);
	init_hold(&f->a3, &f->node_a, 1001, &f->s);
	init_hold(&f->a4, &f->node_a, 1000, &f->t);
	init_hold(&f->a5, &f->node_a, 1000, &f->s);
	init_hold(&f->b1, &f->node_b, 1000, &f->s);
	init_hold(&f->b2, &f->node_b, 1000, &f->t);
	init_hold(&f->b3, &f->node_b, 1000, NULL);
	hold_link(&f->list_a, &f->a1);
	hold_link(&f->list_b, &f->b1);
	hold_link(&f->list_a, &f->a2);
	hold_link(&f->list_a, &f->a3);
	hold_link(&f->list_b, &f->b2);
	hold_link(&f->list_a, &f->a4);
	hold_link(&f->list_b, &f->b3);
	hold_link(&f->list_a, &f->a5);
	*state = f;
	return 0;
}

static int fixture_teardown(void **state)
{
	free(*state);
	return 0;
}

static void fixture_initial(void **state)
{
	struct fixture *f = *state;

	check_node_list(f->list_a, &f->node_a,
			(struct hold *[]){&f->a5, &f->a4, &f->a3, &f->a2, &f->a1}, 5);
	check_node_list(f->list_b, &f->node_b, (struct hold *[]){&f->b3, &f->b2, &f->b1}, 3);
	check_src_list(&f->s, (struct hold *[]){&f->a5, &f->a3, &f->b1, &f->a1}, 4);
	check_src_list(&f->t, (struct hold *[]){&f->a4, &f->b2}, 2);
	/* Pins are on no source list. */
	assert_null(f->a2.src_next);
	assert_null(f->a2.src_prev);
	assert_null(f->b3.src_next);
	assert_null(f->b3.src_prev);
}

/* One step of an unlink scenario: the hold taken off its node's list, then how each list reads
 * (names from head to tail, blank-separated, as in the fixture's comment). */
static const struct unlink_step {
	const char *scenario, *gone, *a, *b, *s, *t;
} unlink_steps[] = {
	/* a3: middle of node A's list and middle of S's list. */
	{"middle", "a3", "a5 a4 a2 a1", "b3 b2 b1", "a5 b1 a1", "a4 b2"},
	/* b1: middle of S, tail of node B. */
	{"middle", "b1", "a5 a4 a2 a1", "b3 b2", "a5 a1", "a4 b2"},
	/* a2: a pin in the middle of node A. */
	{"middle", "a2", "a5 a4 a1", "b3 b2", "a5 a1", "a4 b2"},
	/* a5: head of node A and head of S. */
	{"head", "a5", "a4 a3 a2 a1", "b3 b2 b1", "a3 b1 a1", "a4 b2"},
	/* a4: new head of node A, head of T. */
	{"head", "a4", "a3 a2 a1", "b3 b2 b1", "a3 b1 a1", "b2"},
	/* b3: pin at the head of node B. */
	{"head", "b3", "a3 a2 a1", "b2 b1", "a3 b1 a1", "b2"},
	/* b2: head of node B and the last hold of T. */
	{"head", "b2", "a3 a2 a1", "b1", "a3 b1 a1", ""},
	/* a1: tail of node A and tail of S. */
	{"tail", "a1", "a5 a4 a3 a2", "b3 b2 b1", "a5 a3 b1", "a4 b2"},
	/* b1: now tail of S and tail of node B. */
	{"tail", "b1", "a5 a4 a3 a2", "b3 b2", "a5 a3", "a4 b2"},
	/* a2: now the tail of node A, a pin. */
	{"tail", "a2", "a5 a4 a3", "b3 b2", "a5 a3", "a4 b2"},
};

/* The fixture's hold called name ("a1".."a5", "b1".."b3"). */
static struct hold *hold_named(struct fixture *f, const char *name)
{
	struct hold *const a[] = {&f->a1, &f->a2, &f->a3, &f->a4, &f->a5};
	struct hold *const b[] = {&f->b1, &f->b2, &f->b3};
	size_t i = (size_t)(name[1] - '1');

	if (name[0] == 'a' && i < 5)
		return a[i];
	if (name[0] == 'b' && i < 3)
		return b[i];
	fail_msg("no hold called \"%.2s\"", name);
	return NULL;
}

/* names (blank-separated) into out[0..8); returns how many. */
static size_t holds_named(struct fixture *f, const char *names, struct hold *out[8])
{
	size_t n = 0;

	for (const char *p = names; *p && n < 8; p += p[2] ? 3 : 2)
		out[n++] = hold_named(f, p);
	return n;
}

/* Every step of one scenario, in order: the hold leaves both its lists and every list of the
 * fixture reads as the step says. */
static void run_unlink_steps(struct fixture *f, const char *scenario)
{
	struct hold *want[8];

	for (size_t i = 0; i < sizeof(unlink_steps) / sizeof(unlink_steps[0]); i++) {
		const struct unlink_step *r = &unlink_steps[i];
		struct hold *h;

		if (strcmp(r->scenario, scenario) != 0)
			continue;
		h = hold_named(f, r->gone);
		hold_unlink(h->node == &f->node_a ? &f->list_a : &f->list_b, h);
		check_detached(h);
		check_node_list(f->list_a, &f->node_a, want, holds_named(f, r->a, want));
		check_node_list(f->list_b, &f->node_b, want, holds_named(f, r->b, want));
		check_src_list(&f->s, want, holds_named(f, r->s, want));
		check_src_list(&f->t, want, holds_named(f, r->t, want));
	}
}

static void unlink_middle(void **state)
{
	run_unlink_steps(*state, "middle");
}

static void unlink_head(void **state)
{
	run_unlink_steps(*state, "head");
}

static void unlink_tail(void **state)
{
	run_unlink_steps(*state, "tail");
}

static void unlink_everything_any_order(void **state)
{
	struct fixture *f = *state;
	struct hold *order[] = {&f->a3, &f->b2, &f->a5, &f->b3, &f->a1, &f->a2, &f->b1, &f->a4};
	size_t left_a = 5, left_b = 3;

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct hold *h = order[i];
		bool on_a = h->node == &f->node_a;

		hold_unlink(on_a ? &f->list_a : &f->list_b, h);
		check_detached(h);
		if (on_a)
			left_a--;
		else
			left_b--;
		assert_int_equal(hold_count(f->list_a), left_a);
		assert_int_equal(hold_count(f->list_b), left_b);
		/* No list still reaches the unlinked hold. */
		for (struct hold *p = f->list_a; p; p = p->node_next)
			assert_ptr_not_equal(p, h);
		for (struct hold *p = f->list_b; p; p = p->node_next)
			assert_ptr_not_equal(p, h);
		for (struct hold *p = f->s.holds; p; p = p->src_next) {
			assert_ptr_not_equal(p, h);
			assert_ptr_equal(p->src, &f->s);
			if (p->src_next)
				assert_ptr_equal(p->src_next->src_prev, p);
		}
		for (struct hold *p = f->t.holds; p; p = p->src_next) {
			assert_ptr_not_equal(p, h);
			if (p->src_next)
				assert_ptr_equal(p->src_next->src_prev, p);
		}
		if (f->s.holds)
			assert_null(f->s.holds->src_prev);
		if (f->t.holds)
			assert_null(f->t.holds->src_prev);
	}
	assert_null(f->list_a);
	assert_null(f->list_b);
	assert_null(f->s.holds);
	assert_null(f->t.holds);
}

static void relink_after_unlink(void **state)
{
	struct fixture *f = *state;

	/* A hold taken off and put back (e.g. reused record) lands at the heads again. */
	hold_unlink(&f->list_a, &f->a3);
	hold_link(&f->list_a, &f->a3);
	check_node_list(f->list_a, &f->node_a,
			(struct hold *[]){&f->a3, &f->a5, &f->a4, &f->a2, &f->a1}, 5);
	check_src_list(&f->s, (struct hold *[]){&f->a3, &f->a5, &f->b1, &f->a1}, 4);
}

static void unlink_from_wrong_node_list(void **state)
{
	struct fixture *f = *state;

	/* The node list given does not hold it: that list is untouched, the source list still
	 * drops it (the source side is what a watcher walks). */
	hold_unlink(&f->list_b, &f->a3);
	check_node_list(f->list_b, &f->node_b, (struct hold *[]){&f->b3, &f->b2, &f->b1}, 3);
	check_src_list(&f->s, (struct hold *[]){&f->a5, &f->b1, &f->a1}, 3);
	check_detached(&f->a3);
}

/* ---- scope text ----------------------------------------------------------------------------- */

/* A hold of each scope kind in turn (pin, pid, session, cgroup, cgroup whose path is unknown),
 * handed to check with the text it must format to. */
static void for_each_scope(const char *cgroup,
			   void (*check)(const struct hold *h, const char *want))
{
	char cg[48], want_cg[64];
	struct hold_source pid = make_src(HOLD_PID, 123, NULL);
	struct hold_source ses = make_src(HOLD_SESSION, 77, NULL);
	struct hold_source cgs = make_src(HOLD_CGROUP, 0, cg);
	struct hold_source cgnull = make_src(HOLD_CGROUP, 0, NULL);
	const struct {
		struct hold_source *src;
		const char *want;
	} cases[] = {
		{NULL, "pin"},	 {&pid, "pid:123"},	{&ses, "session:77"},
		{&cgs, want_cg}, {&cgnull, "cgroup:?"},
	};
	struct hold h;

	snprintf(cg, sizeof(cg), "%s", cgroup);
	snprintf(want_cg, sizeof(want_cg), "cgroup:%s", cgroup);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		init_hold(&h, NULL, 1000, cases[i].src);
		check(&h, cases[i].want);
	}
}

static void check_formats(const struct hold *h, const char *want)
{
	char buf[64];

	assert_int_equal(hold_format_scope(h, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
}

static void format_each_kind(void **state)
{
	(void)state;
	struct hold_source pid = make_src(HOLD_PID, INT_MAX, NULL);
	struct hold h;

	for_each_scope("/user.slice/x", check_formats);
	/* The widest pid. */
	init_hold(&h, NULL, 1000, &pid);
	check_formats(&h, "pid:2147483647");
}

static void format_roundtrips_through_parse(void **state)
{
	(void)state;
	struct hold_source pid = make_src(HOLD_PID, 4321, NULL);
	struct hold h;
	struct hold_request r;
	char buf[32];

	/* The refs text of pin and pid holds is itself a valid hold value. */
	init_hold(&h, NULL, 0, NULL);
	assert_int_equal(hold_format_scope(&h, buf, sizeof(buf)), 0);
	assert_int_equal(parse(buf, &r), 0);
	assert_int_equal(r.kind, HOLD_PIN);
	h.src = &pid;
	assert_int_equal(hold_format_scope(&h, buf, sizeof(buf)), 0);
	assert_int_equal(parse(buf, &r), 0);
	assert_int_equal(r.kind, HOLD_PID);
	assert_int_equal(r.pid, 4321);
}

/* Exactly strlen(want) + 1 bytes fit; one less is -ENAMETOOLONG, still NUL-terminated. */
static void check_fit(const struct hold *h, const char *want)
{
	size_t need = strlen(want) + 1;
	char buf[64];

	memset(buf, 'Z', sizeof(buf));
	assert_int_equal(hold_format_scope(h, buf, need), 0);
	assert_string_equal(buf, want);
	assert_int_equal(buf[need], 'Z'); /* nothing written past len */

	memset(buf, 'Z', sizeof(buf));
	assert_int_equal(hold_format_scope(h, buf, need - 1), -ENAMETOOLONG);
	assert_int_equal(buf[need - 2], '\0');
	assert_int_equal(buf[need - 1], 'Z');
	assert_memory_equal(buf, want, need - 2);

	memset(buf, 'Z', sizeof(buf));
	assert_int_equal(hold_format_scope(h, buf, 1), -ENAMETOOLONG);
	assert_int_equal(buf[0], '\0');
	assert_int_equal(buf[1], 'Z');

	memset(buf, 'Z', sizeof(buf));
	assert_int_equal(hold_format_scope(h, buf, 0), -ENAMETOOLONG);
	assert_int_equal(buf[0], 'Z');
}

static void format_too_small(void **state)
{
	(void)state;
	struct hold h;

	for_each_scope("/system.slice/job-42.scope", check_fit);
	init_hold(&h, NULL, 1000, NULL);
	assert_int_equal(hold_format_scope(&h, NULL, 0), -ENAMETOOLONG);
}

static const struct CMUnitTest scenarios[] = {
	cmocka_unit_test(autohold_rule_table),
	cmocka_unit_test(parse_pid_boundaries),
	cmocka_unit_test(parse_process_clears_pid),
	cmocka_unit_test(parse_bad_values),
	cmocka_unit_test(parse_empty),
	cmocka_unit_test(parse_long_values),
	cmocka_unit_test(parse_length_boundaries),
	cmocka_unit_test(parse_every_prefix_of_valid),
	cmocka_unit_test(count_empty),
	cmocka_unit_test(link_pin_has_no_source),
	cmocka_unit_test(link_single_sourced),
	cmocka_unit_test_setup_teardown(fixture_initial, fixture_setup, fixture_teardown),
	cmocka_unit_test_setup_teardown(unlink_middle, fixture_setup, fixture_teardown),
	cmocka_unit_test_setup_teardown(unlink_head, fixture_setup, fixture_teardown),
	cmocka_unit_test_setup_teardown(unlink_tail, fixture_setup, fixture_teardown),
	cmocka_unit_test_setup_teardown(unlink_everything_any_order, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(relink_after_unlink, fixture_setup, fixture_teardown),
	cmocka_unit_test_setup_teardown(unlink_from_wrong_node_list, fixture_setup,
					fixture_teardown),
	cmocka_unit_test(format_each_kind),
	cmocka_unit_test(format_roundtrips_through_parse),
	cmocka_unit_test(format_too_small),
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Each row's test name: its group, then its bytes (rows_name). */
static char row_names[N(parse_rows)][96];

int main(void)
{
	struct CMUnitTest tests[N(parse_rows) + N(scenarios)];

	for (size_t i = 0; i < N(parse_rows); i++) {
		rows_name(row_names[i], sizeof(row_names[i]), parse_rows[i].group,
			  parse_rows[i].value, parse_rows[i].len);
		tests[i] = (struct CMUnitTest){.name = row_names[i],
					       .test_func = test_parse_row,
					       .initial_state = (void *)&parse_rows[i]};
	}
	memcpy(tests + N(parse_rows), scenarios, sizeof(scenarios));
	return cmocka_run_group_tests_name("holds", tests, NULL, NULL);
}
