/* Unit tests of lib/xattr_text.c: hold scope values, and the parsers of the user.poolfs.refs and
 * user.poolfs.stat answers (docs/interface.md), on valid, odd and hostile text. Inputs are copied
 * into exact-size heap buffers so an over-read shows up under ASan/valgrind.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poolfs_names.h"
#include "xattr_text.h"

/* NAME_exact(text, len, out): PARSE on a heap copy of exactly len bytes of text (no NUL after
 * them), so that a parser that reads past its input shows under a sanitizer; NAME_str(text, out):
 * the same for a C string, without its NUL. */
#define EXACT_PARSER(name, out_type, parse)                                                        \
	static int name##_exact(const char *text, size_t len, out_type out)                        \
	{                                                                                          \
		char *copy = malloc(len ? len : 1);                                                \
		int r;                                                                             \
                                                                                                   \
		assert_non_null(copy);                                                             \
		memcpy(copy, text, len);                                                           \
		r = parse(copy, len, out);                                                         \
		free(copy);                                                                        \
		return r;                                                                          \
	}                                                                                          \
	static int name##_str(const char *text, out_type out)                                      \
	{                                                                                          \
		return name##_exact(text, strlen(text), out);                                      \
	}

EXACT_PARSER(refs, struct poolfs_refs *, refs_parse)
EXACT_PARSER(usage, struct poolfs_usage *, usage_parse)

/* A parsed hold line: its scope, pid, owner and text. */
static void expect_hold(const struct poolfs_hold_info *h, enum poolfs_scope scope, long long pid,
			unsigned long long uid, const char *text)
{
	assert_int_equal(h->scope, scope);
	assert_int_equal(h->pid, pid);
	assert_int_equal(h->uid, uid);
	assert_string_equal(h->text, text);
}

/* Every count of a parsed refs text, so that a case states the ones it leaves at 0 too. */
static void expect_counts(const struct poolfs_refs *r, uint64_t opens, int mapped, int folder,
			  uint64_t children, uint64_t nholds, unsigned nlisted)
{
	assert_int_equal(r->opens, opens);
	assert_int_equal(r->mapped, mapped);
	assert_int_equal(r->folder, folder);
	assert_int_equal(r->children, children);
	assert_int_equal(r->nholds, nholds);
	assert_int_equal(r->nlisted, nlisted);
}

/* Each of the texts is refused with -EPROTO, and the output is left alone on failure (its
 * first and last fields still hold what was there). */
static void expect_refused(const char *const *bad, size_t n)
{
	struct poolfs_refs r;

	for (size_t k = 0; k < n; k++) {
		memset(&r, 0x5a, sizeof r);
		int got = refs_str(bad[k], &r);
		if (got != -EPROTO)
			fail_msg("case %zu: \"%s\": got %d, want -EPROTO", k, bad[k], got);
		assert_int_equal(r.opens, 0x5a5a5a5a5a5a5a5aull);
		assert_int_equal(r.names, 0x5a5a5a5au);
	}
}

static void test_scope_format(void **state)
{
	(void)state;
	char buf[32];

	assert_int_equal(scope_format(POOLFS_SCOPE_PIN, 0, buf, sizeof buf), 3);
	assert_string_equal(buf, POOLFS_SCOPE_WORD_PIN);
	assert_int_equal(scope_format(POOLFS_SCOPE_PID, 1234, buf, sizeof buf), 8);
	assert_string_equal(buf, "pid:1234");
	assert_int_equal(scope_format(POOLFS_SCOPE_PID, 2147483647, buf, sizeof buf), 14);
	assert_string_equal(buf, "pid:2147483647");
	assert_int_equal(scope_format(POOLFS_SCOPE_PROCESS, 0, buf, sizeof buf), 7);
	assert_string_equal(buf, POOLFS_SCOPE_WORD_PROCESS);
	assert_int_equal(scope_format(POOLFS_SCOPE_SESSION, 0, buf, sizeof buf), 7);
	assert_string_equal(buf, POOLFS_SCOPE_WORD_SESSION);
	assert_int_equal(scope_format(POOLFS_SCOPE_CGROUP, 0, buf, sizeof buf), 6);
	assert_string_equal(buf, POOLFS_SCOPE_WORD_CGROUP);
	/* pid is ignored by the scopes that do not take one */
	assert_int_equal(scope_format(POOLFS_SCOPE_SESSION, 77, buf, sizeof buf), 7);

	assert_int_equal(scope_format(POOLFS_SCOPE_PID, 0, buf, sizeof buf), -EINVAL);
	assert_int_equal(scope_format(POOLFS_SCOPE_PID, -5, buf, sizeof buf), -EINVAL);
	assert_int_equal(scope_format(POOLFS_SCOPE_UNKNOWN, 0, buf, sizeof buf), -EINVAL);
	assert_int_equal(scope_format((enum poolfs_scope)5, 0, buf, sizeof buf), -EINVAL);
	assert_int_equal(scope_format((enum poolfs_scope) - 7, 0, buf, sizeof buf), -EINVAL);
	/* room for the text and its NUL */
	assert_int_equal(scope_format(POOLFS_SCOPE_PIN, 0, buf, 3), -ERANGE);
	assert_int_equal(scope_format(POOLFS_SCOPE_PIN, 0, buf, 4), 3);
	assert_int_equal(scope_format(POOLFS_SCOPE_PID, 12, buf, 6), -ERANGE);
}

static void test_refs_file(void **state)
{
	(void)state;
	struct poolfs_refs r;

	assert_int_equal(refs_str("opens 2\nmapped yes\nholds 0\n", &r), 0);
	expect_counts(&r, 2, 1, 0, 0, 0, 0);

	assert_int_equal(
		refs_str("opens 0\nmapped no\nholds 4\n"
			 "hold pin uid=1000\n"
			 "hold pid:4242 uid=0\n"
			 "hold session:17 uid=4294967295\n"
			 "hold cgroup:/user.slice/user-1000.slice/session-3.scope uid=1000\n",
			 &r),
		0);
	expect_counts(&r, 0, 0, 0, 0, 4, 4);
	expect_hold(&r.holds[0], POOLFS_SCOPE_PIN, 0, 1000, "pin");
	expect_hold(&r.holds[1], POOLFS_SCOPE_PID, 4242, 0, "pid:4242");
	expect_hold(&r.holds[2], POOLFS_SCOPE_SESSION, 17, 4294967295u, "session:17");
	expect_hold(&r.holds[3], POOLFS_SCOPE_CGROUP, 0, 1000,
		    "cgroup:/user.slice/user-1000.slice/session-3.scope");
	assert_int_equal(r.holds[3].truncated, 0);
}

static void test_refs_folder_and_variants(void **state)
{
	(void)state;
	struct poolfs_refs r;

	/* a folder, lines in another order, an unknown key from a newer daemon, no final newline */
	assert_int_equal(refs_str("holds 1\nweight 12 extra words\nchildren 3\nopens 1\nmapped no\n"
				  "hold cgroup:/my jobs/a uid=5 uid=7",
				  &r),
			 0);
	expect_counts(&r, 1, 0, 1, 3, 1, 1);
	/* a cgroup path may hold spaces and even " uid=": the last one is the owner */
	expect_hold(&r.holds[0], POOLFS_SCOPE_CGROUP, 0, 7, "cgroup:/my jobs/a uid=5");

	/* trailing NULs (a writer counting the terminator) and blank lines are fine */
	static const char with_nul[] = "opens 0\n\nmapped no\nholds 0\n\0\0";
	assert_int_equal(refs_exact(with_nul, sizeof with_nul, &r), 0);

	/* a scope this library does not know yet, and "process" if a daemon reports it as such */
	assert_int_equal(
		refs_str("opens 0\nmapped no\nholds 2\nhold lease:9 uid=1\nhold process uid=2\n",
			 &r),
		0);
	expect_hold(&r.holds[0], POOLFS_SCOPE_UNKNOWN, 0, 1, "lease:9");
	expect_hold(&r.holds[1], POOLFS_SCOPE_PROCESS, 0, 2, POOLFS_SCOPE_WORD_PROCESS);

	/* the largest counts */
	assert_int_equal(refs_str("opens 18446744073709551615\nmapped no\nholds 0\n", &r), 0);
	assert_int_equal(r.opens, UINT64_MAX);
}

static void test_refs_many_holds(void **state)
{
	(void)state;
	struct poolfs_refs r;
	char text[8192];
	size_t n = (size_t)snprintf(text, sizeof text, "opens 0\nmapped no\nholds 40\n");

	for (int i = 0; i < 20; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "hold pid:%d uid=%d\n", 100 + i,
				      i);
	/* 20 lines for a count of 40: the daemon may elide lines, we keep the first 16 */
	assert_int_equal(refs_exact(text, n, &r), 0);
	assert_int_equal(r.nholds, 40);
	assert_int_equal(r.nlisted, POOLFS_REFS_MAX_HOLDS);
	assert_int_equal(r.holds[15].pid, 115);
	assert_int_equal(r.holds[15].uid, 15);

	/* more lines than the count contradicts it */
	n = (size_t)snprintf(text, sizeof text,
			     "opens 0\nmapped no\nholds 1\nhold pin uid=1\nhold pin uid=1\n");
	assert_int_equal(refs_exact(text, n, &r), -EPROTO);

	/* a cgroup path longer than the text field is kept shortened, and says so */
	n = (size_t)snprintf(text, sizeof text, "opens 0\nmapped no\nholds 1\nhold cgroup:/");
	for (int i = 0; i < 500; i++)
		text[n++] = 'a' + i % 26;
	n += (size_t)snprintf(text + n, sizeof text - n, " uid=3\n");
	assert_int_equal(refs_exact(text, n, &r), 0);
	assert_int_equal(r.holds[0].scope, POOLFS_SCOPE_CGROUP);
	assert_int_equal(r.holds[0].truncated, 1);
	assert_int_equal(strlen(r.holds[0].text), POOLFS_SCOPE_TEXT_MAX - 1);
	assert_int_equal(r.holds[0].uid, 3);
}

/* The daemon's "names N" line (a file's names, its hard links): optional, once, a number that fits
 * the field; the field sits where the struct had padding, so its size and layout stay. */
static void test_refs_names(void **state)
{
	(void)state;
	struct poolfs_refs r;
	/* the struct as it was before the field: what programs built then allocate */
	struct old_refs {
		uint64_t opens;
		int mapped;
		int folder;
		uint64_t children;
		uint64_t nholds;
		unsigned nlisted;
		struct poolfs_hold_info holds[POOLFS_REFS_MAX_HOLDS];
	};

	assert_int_equal(sizeof(struct poolfs_refs), sizeof(struct old_refs));
	assert_int_equal(offsetof(struct poolfs_refs, holds), offsetof(struct old_refs, holds));
	assert_true(offsetof(struct poolfs_refs, names) >=
		    sizeof(((struct old_refs *)0)->holds) + offsetof(struct old_refs, holds));

	assert_int_equal(refs_str("opens 0\nmapped no\nnames 3\nholds 0\n", &r), 0);
	assert_int_equal(r.names, 3);
	assert_int_equal(r.folder, 0);
	/* the daemon's order, with holds */
	assert_int_equal(refs_str("opens 1\nmapped no\nnames 256\nholds 1\nhold pin uid=0\n", &r),
			 0);
	assert_int_equal(r.names, 256);
	assert_int_equal(r.nholds, 1);
	assert_int_equal(r.nlisted, 1);
	/* an unlinked entry that is still open */
	memset(&r, 0x5a, sizeof r);
	assert_int_equal(refs_str("opens 1\nmapped no\nnames 0\nholds 0\n", &r), 0);
	assert_int_equal(r.names, 0);
	/* an older daemon says nothing: 0, whatever the struct held */
	memset(&r, 0x5a, sizeof r);
	assert_int_equal(refs_str("opens 0\nmapped no\nholds 0\n", &r), 0);
	assert_int_equal(r.names, 0);
	/* a folder's line is read as well */
	assert_int_equal(refs_str("opens 0\nmapped no\nchildren 2\nnames 1\nholds 0\n", &r), 0);
	assert_int_equal(r.names, 1);
	assert_int_equal(r.folder, 1);
	/* the largest count the field holds */
	assert_int_equal(refs_str("opens 0\nmapped no\nnames 4294967295\nholds 0\n", &r), 0);
	assert_int_equal(r.names, UINT32_MAX);

	static const char *const bad[] = {
		"opens 0\nmapped no\nnames 2\nnames 2\nholds 0\n", /* twice */
		"opens 0\nmapped no\nnames 4294967296\nholds 0\n", /* past the field */
		"opens 0\nmapped no\nnames 18446744073709551616\nholds 0\n",
		"opens 0\nmapped no\nnames\nholds 0\n",
		"opens 0\nmapped no\nnames -1\nholds 0\n",
		"opens 0\nmapped no\nnames 2 \nholds 0\n",
		"opens 0\nmapped no\nnames two\nholds 0\n",
		"opens 0\nmapped no\nnames 0x2\nholds 0\n",
		"names 2\nmapped no\nholds 0\n", /* still no opens */
	};
	expect_refused(bad, sizeof bad / sizeof bad[0]);
}

static void test_refs_malformed(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"",
		"\n",
		"mapped no\nholds 0\n",			  /* no opens */
		"opens 1\nholds 0\n",			  /* no mapped */
		"opens 1\nmapped no\n",			  /* no holds */
		"opens 1\nopens 1\nmapped no\nholds 0\n", /* duplicate */
		"opens 1\nmapped no\nholds 0\nchildren 1\nchildren 2\n",
		"opens -1\nmapped no\nholds 0\n",
		"opens +1\nmapped no\nholds 0\n",
		"opens 1 \nmapped no\nholds 0\n",
		"opens  1\nmapped no\nholds 0\n",
		"opens\nmapped no\nholds 0\n",
		"opens 0x10\nmapped no\nholds 0\n",
		"opens 18446744073709551616\nmapped no\nholds 0\n",
		"opens 1\nmapped maybe\nholds 0\n",
		"opens 1\nmapped YES\nholds 0\n",
		"opens 1\nmapped\nholds 0\n",
		"opens 1\nmapped no\nholds x\n",
		"opens 1\nmapped no\nchildren -2\nholds 0\n",
		"opens 1\nmapped no\nholds 1\nhold pin\n",
		"opens 1\nmapped no\nholds 1\nhold pin uid=\n",
		"opens 1\nmapped no\nholds 1\nhold pin uid=x\n",
		"opens 1\nmapped no\nholds 1\nhold pin uid=4294967296\n",
		"opens 1\nmapped no\nholds 1\nhold pin uid=-1\n",
		"opens 1\nmapped no\nholds 1\nhold  uid=1\n",
		"opens 1\nmapped no\nholds 1\nhold uid=1\n",
		"opens 1\nmapped no\nholds 1\nhold pid:0 uid=1\n",
		"opens 1\nmapped no\nholds 1\nhold pid: uid=1\n",
		"opens 1\nmapped no\nholds 1\nhold pid uid=1\n",
		"opens 1\nmapped no\nholds 1\nhold pid:12x uid=1\n",
		"opens 1\nmapped no\nholds 1\nhold pid:4294967297 uid=1\n",
		"opens 1\nmapped no\nholds 1\nhold session: uid=1\n",
		"opens 1\nmapped no\nholds 1\nhold session:-3 uid=1\n",
		"opens 1\nmapped no\nholds 1\nhold cgroup: uid=1\n",
		"opens 1\nmapped no\nholds 1\nhold\n",
		"opens 1\nmapped no\nholds 0\nhold pin uid=1\n",
	};
	struct poolfs_refs r;
	expect_refused(bad, sizeof bad / sizeof bad[0]);
	/* a NUL inside the text */
	static const char nul[] = "opens 1\nmap\0ped no\nholds 0\n";
	assert_int_equal(refs_exact(nul, sizeof nul - 1, &r), -EPROTO);
}

static const char stat_text[] = "entries 12\n"
				"bytes 1610612736\n"
				"max_size 0\n"
				"max_user_size 10737418240\n"
				"datapath pagecache\n"
				"user 1000 entries 10 bytes 1073741824\n"
				"user 0 entries 2 bytes 536870912\n";

static void test_usage_valid(void **state)
{
	(void)state;
	struct poolfs_usage u;

	assert_int_equal(usage_str(stat_text, &u), 0);
	assert_int_equal(u.entries, 12);
	assert_int_equal(u.bytes, 1610612736ull);
	assert_int_equal(u.max_size, 0);
	assert_int_equal(u.max_user_size, 10737418240ull);
	assert_string_equal(u.datapath, "pagecache");
	assert_int_equal(u.nusers, 2);
	assert_int_equal(u.nlisted, 2);
	assert_int_equal(u.users[0].uid, 1000);
	assert_int_equal(u.users[0].entries, 10);
	assert_int_equal(u.users[0].bytes, 1073741824ull);
	assert_int_equal(u.users[1].uid, 0);
	assert_int_equal(u.users[1].bytes, 536870912ull);

	/* today's daemon: metadata usage and the per-user limits, a meta key on user lines, and
	 * a key a later daemon may add, which is skipped */
	static const char current[] = "entries 3\nbytes 10\nmeta 144\nmax_size 0\n"
				      "max_user_size 0\nmax_user_entries 1048576\n"
				      "max_user_meta 67108864\ndatapath pagecache\n"
				      "user 7 entries 3 bytes 10 meta 144 later 5\n";
	assert_int_equal(usage_str(current, &u), 0);
	assert_int_equal(u.meta, 144);
	assert_int_equal(u.max_user_entries, 1048576);
	assert_int_equal(u.max_user_meta, 67108864);
	assert_int_equal(u.nlisted, 1);
	assert_int_equal(u.users[0].entries, 3);
	assert_int_equal(u.users[0].bytes, 10);
	assert_int_equal(u.users[0].meta, 144);
	/* but a key without its number, or a number that is not one, is malformed */
	assert_int_equal(usage_str("entries 0\nbytes 0\nmax_size 0\nmax_user_size 0\n"
				   "datapath x\nuser 1 entries 1 bytes 1 meta\n",
				   &u),
			 -EPROTO);
	assert_int_equal(usage_str("entries 0\nbytes 0\nmax_size 0\nmax_user_size 0\n"
				   "datapath x\nuser 1 entries 1 bytes 1 meta -3\n",
				   &u),
			 -EPROTO);

	/* no users at all, an unknown key, no final newline, a trailing NUL */
	static const char minimal[] = "datapath passthrough\nentries 0\nbytes 0\nmax_size 1\n"
				      "linger 0.5\nmax_user_size 2";
	assert_int_equal(usage_exact(minimal, sizeof minimal, &u), 0);
	assert_string_equal(u.datapath, "passthrough");
	assert_int_equal(u.nusers, 0);
	assert_int_equal(u.max_user_size, 2);

	/* a newer daemon's lines and per-user keys are skipped */
	static const char newer[] =
		"entries 3\nbytes 9\nmax_size 0\nmax_user_size 0\n"
		"max_user_entries 100\nmax_user_meta 65536\ndatapath pagecache\n"
		"user 7 entries 3 bytes 9 meta 120\n";
	assert_int_equal(usage_str(newer, &u), 0);
	assert_int_equal(u.nlisted, 1);
	assert_int_equal(u.users[0].uid, 7);
	assert_int_equal(u.users[0].entries, 3);
	assert_int_equal(u.users[0].bytes, 9);

	/* more users than the array holds */
	char text[8192];
	size_t n = (size_t)snprintf(text, sizeof text,
				    "entries 0\nbytes 0\nmax_size 0\nmax_user_size 0\n"
				    "datapath pagecache\n");
	for (int i = 0; i < 100; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "user %d entries %d bytes %d\n", i,
				      i, i * 2);
	assert_int_equal(usage_exact(text, n, &u), 0);
	assert_int_equal(u.nusers, 100);
	assert_int_equal(u.nlisted, POOLFS_USAGE_MAX_USERS);
	assert_int_equal(u.users[63].uid, 63);
	assert_int_equal(u.users[63].bytes, 126);
}

static void test_usage_malformed(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"",
		"bytes 0\nmax_size 0\nmax_user_size 0\ndatapath pagecache\n",
		"entries 0\nmax_size 0\nmax_user_size 0\ndatapath pagecache\n",
		"entries 0\nbytes 0\nmax_user_size 0\ndatapath pagecache\n",
		"entries 0\nbytes 0\nmax_size 0\ndatapath pagecache\n",
		"entries 0\nbytes 0\nmax_size 0\nmax_user_size 0\n",
		"entries 0\nentries 0\nbytes 0\nmax_size 0\nmax_user_size 0\ndatapath pagecache\n",
		"entries x\nbytes 0\nmax_size 0\nmax_user_size 0\ndatapath pagecache\n",
		"entries 0\nbytes 1.5G\nmax_size 0\nmax_user_size 0\ndatapath pagecache\n",
		"entries 0\nbytes 0\nmax_size 0\nmax_user_size 0\ndatapath \n",
		"entries 0\nbytes 0\nmax_size 0\nmax_user_size 0\ndatapath page cache\n",
		"entries 0\nbytes 0\nmax_size 0\nmax_user_size 0\ndatapath "
		"averyveryveryverylongdatapathname\n",
		"entries 0\nbytes 0\nmax_size 0\nmax_user_size 0\ndatapath pagecache\nuser 1\n",
		"entries 0\nbytes 0\nmax_size 0\nmax_user_size 0\ndatapath pagecache\nuser 1 entries 1\n",
		"entries 0\nbytes 0\nmax_size 0\nmax_user_size 0\ndatapath pagecache\n"
		"user 1 bytes 1 entries 1\n",
		"entries 0\nbytes 0\nmax_size 0\nmax_user_size 0\ndatapath pagecache\n"
		"user 1 entries 1 bytes 1x meta 2\n",
		"entries 0\nbytes 0\nmax_size 0\nmax_user_size 0\ndatapath pagecache\n"
		"user x entries 1 bytes 1\n",
		"entries 0\nbytes 0\nmax_size 0\nmax_user_size 0\ndatapath pagecache\n"
		"user 1 entries 1  bytes 1\n",
	};
	struct poolfs_usage u;
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		int got = usage_str(bad[k], &u);
		if (got != -EPROTO)
			fail_msg("case %zu: \"%s\": got %d, want -EPROTO", k, bad[k], got);
	}
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* Mutated answers: either parsed or -EPROTO, never anything else, never out of bounds. */
static void test_fuzz(void **state)
{
	(void)state;
	static const char refs_seed[] =
		"opens 3\nmapped yes\nchildren 2\nholds 2\nhold pin uid=1000\n"
		"hold cgroup:/a b/c uid=0\n";
	static const char alphabet[] = " \n\0:=0123456789-holdpinuidsessioncgroupentriesbytes";
	uint64_t s = 0xdeadbeefcafef00dull;
	char text[512];
	int ok = 0, bad = 0;

	for (int iter = 0; iter < 200000; iter++) {
		bool refs = rnd(&s) % 2;
		const char *seed = refs ? refs_seed : stat_text;
		size_t n = strlen(seed);
		/* text is counted by n and mutated below; the parsers get an exact-size copy without a
		 * NUL, so none belongs here either. */
		memcpy(text, seed, n); /* NOLINT(bugprone-not-null-terminated-result) */
		for (int k = 1 + (int)(rnd(&s) % 3); k > 0; k--) {
			size_t at = rnd(&s) % (n + 1);
			char ch = alphabet[rnd(&s) % (sizeof alphabet - 1)];
			switch (rnd(&s) % 3) {
			case 0:
				if (at < n)
					text[at] = ch;
				break;
			case 1:
				if (n + 1 < sizeof text) {
					memmove(text + at + 1, text + at, n - at);
					text[at] = ch;
					n++;
				}
				break;
			default:
				if (at < n) {
					memmove(text + at, text + at + 1, n - at - 1);
					n--;
				}
				break;
			}
		}
		int r;
		if (refs) {
			struct poolfs_refs out;
			r = refs_exact(text, n, &out);
			if (r == 0) {
				assert_true(out.nlisted <= POOLFS_REFS_MAX_HOLDS);
				assert_true(out.nlisted <= out.nholds);
				for (unsigned i = 0; i < out.nlisted; i++)
					assert_true(strlen(out.holds[i].text) <
						    POOLFS_SCOPE_TEXT_MAX);
			}
		} else {
			struct poolfs_usage out;
			r = usage_exact(text, n, &out);
			if (r == 0) {
				assert_true(out.nlisted <= POOLFS_USAGE_MAX_USERS);
				assert_true(strlen(out.datapath) < sizeof out.datapath);
			}
		}
		if (r != 0 && r != -EPROTO)
			fail_msg("unexpected %d", r);
		if (r == 0)
			ok++;
		else
			bad++;
	}
	assert_true(ok > 1000);
	assert_true(bad > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scope_format),
		cmocka_unit_test(test_refs_file),
		cmocka_unit_test(test_refs_folder_and_variants),
		cmocka_unit_test(test_refs_many_holds),
		cmocka_unit_test(test_refs_names),
		cmocka_unit_test(test_refs_malformed),
		cmocka_unit_test(test_usage_valid),
		cmocka_unit_test(test_usage_malformed),
		cmocka_unit_test(test_fuzz),
	};
	return cmocka_run_group_tests_name("xattr_text", tests, NULL, NULL);
}
