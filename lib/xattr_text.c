/* The text of the user.poolfs.* attributes (docs/interface.md, "Extended attributes"): formatting
 * hold scopes, and line-by-line parsers for the refs and stat answers. Pure and bounded: every read
 * stays inside the given length, numbers are overflow-checked, and anything off-format is -EPROTO
 * rather than a guess, except unknown keys, which are skipped so a newer daemon may add lines.
 */
#include "xattr_text.h"
#include "poolfs_names.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int scope_format(enum poolfs_scope scope, pid_t pid, char *buf, size_t len)
{
	int n;

	switch (scope) {
	case POOLFS_SCOPE_PIN:
		n = snprintf(buf, len, POOLFS_SCOPE_WORD_PIN);
		break;
	case POOLFS_SCOPE_PID:
		if (pid <= 0)
			return -EINVAL;
		n = snprintf(buf, len, POOLFS_SCOPE_WORD_PID ":%ld", (long)pid);
		break;
	case POOLFS_SCOPE_PROCESS:
		n = snprintf(buf, len, POOLFS_SCOPE_WORD_PROCESS);
		break;
	case POOLFS_SCOPE_SESSION:
		n = snprintf(buf, len, POOLFS_SCOPE_WORD_SESSION);
		break;
	case POOLFS_SCOPE_CGROUP:
		n = snprintf(buf, len, POOLFS_SCOPE_WORD_CGROUP);
		break;
	default:
		return -EINVAL;
	}
	if (n < 0 || (size_t)n >= len)
		return -ERANGE;
	return n;
}

/* ---- line handling ------------------------------------------------------------------------ */

struct span {
	const char *s;
	size_t n;
};

static bool span_eq(struct span a, const char *lit)
{
	size_t n = strlen(lit);
	return a.n == n && memcmp(a.s, lit, n) == 0;
}

/* Decimal digits only (no sign, no spaces), at least one, fitting in uint64_t. */
static bool parse_u64(struct span a, uint64_t *out)
{
	uint64_t v = 0;
	if (a.n == 0)
		return false;
	for (size_t i = 0; i < a.n; i++) {
		if (a.s[i] < '0' || a.s[i] > '9')
			return false;
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(a.s[i] - '0'), &v))
			return false;
	}
	*out = v;
	return true;
}

static bool parse_uid(struct span a, uid_t *out)
{
	uint64_t v;
	if (!parse_u64(a, &v) || v > UINT32_MAX)
		return false;
	*out = (uid_t)v;
	return true;
}

static bool parse_pid(struct span a, pid_t *out)
{
	uint64_t v;
	if (!parse_u64(a, &v) || v == 0 || v > INT32_MAX)
		return false;
	*out = (pid_t)v;
	return true;
}

/* Split off the first space-separated word of *rest (rest loses it and the one space after). */
static struct span next_word(struct span *rest)
{
	struct span w = {rest->s, 0};
	while (w.n < rest->n && rest->s[w.n] != ' ')
		w.n++;
	size_t skip = w.n < rest->n ? w.n + 1 : w.n;
	rest->s += skip;
	rest->n -= skip;
	return w;
}

/* Validate the text as a whole and prepare line iteration: trailing NULs are dropped (some writers
 * count the terminator), any other NUL is malformed. */
static int text_begin(const char *text, size_t len, struct span *all)
{
	while (len > 0 && text[len - 1] == '\0')
		len--;
	if (memchr(text, '\0', len))
		return -EPROTO;
	all->s = text;
	all->n = len;
	return 0;
}

/* The next line of *all without its '\n' (the last line may lack one); false at the end. */
static bool next_line(struct span *all, struct span *line)
{
	if (all->n == 0)
		return false;
	const char *nl = memchr(all->s, '\n', all->n);
	size_t n = nl ? (size_t)(nl - all->s) : all->n;
	line->s = all->s;
	line->n = n;
	size_t skip = nl ? n + 1 : n;
	all->s += skip;
	all->n -= skip;
	return true;
}

/* One line's parser: fills its part of `out` from the value v of `key` and sets *bit to the
 * key's bit (0 for a key that may repeat or is unknown); -EPROTO if the value is off-format. */
typedef int (*line_parser)(struct span key, struct span v, void *out, unsigned *bit);

/* Calls `line` for each non-empty line of the answer: -EPROTO if a key comes twice or one of the
 * `required` keys' bits is missing. */
static int parse_lines(const char *text, size_t len, line_parser line, void *out, unsigned required)
{
	struct span all, l;
	unsigned seen = 0;
	int ret;

	if ((ret = text_begin(text, len, &all)) < 0)
		return ret;
	while (next_line(&all, &l)) {
		if (l.n == 0)
			continue;
		struct span v = l, key = next_word(&v);
		unsigned bit = 0;

		if ((ret = line(key, v, out, &bit)) < 0)
			return ret;
		if (seen & bit)
			return -EPROTO;
		seen |= bit;
	}
	return (seen & required) == required ? 0 : -EPROTO;
}

/* A key whose value is one decimal number, stored at byte `off` of the struct being filled. */
struct num_key {
	const char *name;
	unsigned bit; /* its bit for parse_lines, 0 if it may repeat or be missing */
	size_t off;   /* of a uint64_t */
};

/* If `key` is in keys[0..n), its number into `out`: 1, or -EPROTO if off-format; 0 if not there. */
static int num_line(const struct num_key *keys, size_t n, struct span key, struct span v, void *out,
		    unsigned *bit)
{
	for (size_t i = 0; i < n; i++) {
		if (!span_eq(key, keys[i].name))
			continue;
		*bit = keys[i].bit;
		return parse_u64(v, (uint64_t *)((char *)out + keys[i].off)) ? 1 : -EPROTO;
	}
	return 0;
}

/* ---- refs --------------------------------------------------------------------------------- */

/* "SCOPE uid=UID", where SCOPE may itself hold spaces (a cgroup path): split at the last " uid=". */
static int parse_hold(struct span v, struct poolfs_hold_info *h)
{
	static const char tag[] = " uid=";
	const size_t tn = sizeof tag - 1;
	size_t cut = SIZE_MAX;

	for (size_t i = 0; i + tn <= v.n; i++)
		if (memcmp(v.s + i, tag, tn) == 0)
			cut = i;
	if (cut == SIZE_MAX || cut == 0)
		return -EPROTO;
	struct span scope = {v.s, cut}, uid = {v.s + cut + tn, v.n - cut - tn};
	if (!parse_uid(uid, &h->uid))
		return -EPROTO;

	h->pid = 0;
	if (span_eq(scope, POOLFS_SCOPE_WORD_PIN)) {
		h->scope = POOLFS_SCOPE_PIN;
	} else if (span_eq(scope, POOLFS_SCOPE_WORD_PROCESS)) {
		h->scope = POOLFS_SCOPE_PROCESS;
	} else if (scope.n > 4 && memcmp(scope.s, POOLFS_SCOPE_WORD_PID ":", 4) == 0) {
		h->scope = POOLFS_SCOPE_PID;
		if (!parse_pid((struct span){scope.s + 4, scope.n - 4}, &h->pid))
			return -EPROTO;
	} else if (scope.n > 8 && memcmp(scope.s, POOLFS_SCOPE_WORD_SESSION ":", 8) == 0) {
		h->scope = POOLFS_SCOPE_SESSION;
		if (!parse_pid((struct span){scope.s + 8, scope.n - 8}, &h->pid))
			return -EPROTO;
	} else if (scope.n > 7 && memcmp(scope.s, POOLFS_SCOPE_WORD_CGROUP ":", 7) == 0) {
		h->scope = POOLFS_SCOPE_CGROUP;
	} else if (span_eq(scope, POOLFS_SCOPE_WORD_PID) ||
		   span_eq(scope, POOLFS_SCOPE_WORD_SESSION) ||
		   (scope.n >= 4 && memcmp(scope.s, POOLFS_SCOPE_WORD_PID ":", 4) == 0) ||
		   (scope.n >= 8 && memcmp(scope.s, POOLFS_SCOPE_WORD_SESSION ":", 8) == 0) ||
		   (scope.n >= 7 && memcmp(scope.s, POOLFS_SCOPE_WORD_CGROUP ":", 7) == 0)) {
		return -EPROTO; /* a known kind without its argument */
	} else {
		h->scope = POOLFS_SCOPE_UNKNOWN;
	}

	size_t keep = scope.n < sizeof h->text - 1 ? scope.n : sizeof h->text - 1;
	memcpy(h->text, scope.s, keep);
	h->text[keep] = '\0';
	h->truncated = keep < scope.n;
	return 0;
}

enum { R_OPENS = 1, R_MAPPED = 2, R_CHILDREN = 4, R_HOLDS = 8, R_NAMES = 16 };

/* What refs_parse builds: the answer, how many "hold" lines it had, and the "names" count (read
 * as any number, then checked against the field's range). */
struct refs_text {
	struct poolfs_refs r;
	uint64_t hold_lines;
	uint64_t names;
};

static int refs_line(struct span key, struct span v, void *out, unsigned *bit)
{
	static const struct num_key nums[] = {
		{"opens", R_OPENS, offsetof(struct refs_text, r.opens)},
		{"children", R_CHILDREN, offsetof(struct refs_text, r.children)},
		{"holds", R_HOLDS, offsetof(struct refs_text, r.nholds)},
		{"names", R_NAMES, offsetof(struct refs_text, names)},
	};
	struct refs_text *t = out;
	struct poolfs_refs *r = &t->r;

	if (span_eq(key, "hold")) { /* one line per hold, as many as the daemon could list */
		struct poolfs_hold_info h;
		memset(&h, 0, sizeof h);
		if (parse_hold(v, &h) < 0)
			return -EPROTO;
		if (r->nlisted < POOLFS_REFS_MAX_HOLDS)
			r->holds[r->nlisted++] = h;
		t->hold_lines++;
		return 0;
	}
	int n = num_line(nums, sizeof nums / sizeof nums[0], key, v, out, bit);
	if (n != 0) {
		r->folder |= *bit == R_CHILDREN; /* only folders have children */
		return n < 0 ? n : 0;
	}
	if (span_eq(key, "mapped")) {
		*bit = R_MAPPED;
		if (!span_eq(v, "yes") && !span_eq(v, "no"))
			return -EPROTO;
		r->mapped = span_eq(v, "yes");
	}
	return 0;
}

int refs_parse(const char *text, size_t len, struct poolfs_refs *out)
{
	struct refs_text t;
	int ret;

	memset(&t, 0, sizeof t);
	if ((ret = parse_lines(text, len, refs_line, &t, R_OPENS | R_MAPPED | R_HOLDS)) < 0)
		return ret;
	/* Fewer lines than the count is allowed (an attribute value is capped at 64 KiB, so a daemon
	 * may have to elide some); more is a contradiction. */
	if (t.hold_lines > t.r.nholds || t.names > UINT32_MAX)
		return -EPROTO;
	t.r.names = (uint32_t)t.names;
	*out = t.r;
	return 0;
}

/* ---- stat --------------------------------------------------------------------------------- */

enum { S_ENTRIES = 1, S_BYTES = 2, S_MAX = 4, S_MAXUSER = 8, S_DATAPATH = 16 };

/* "UID entries N bytes N" then, from newer daemons, more "key N" pairs ("meta N"); unknown
 * pairs are skipped so later daemons can add some. */
static int parse_user(struct span v, struct poolfs_user_usage *u)
{
	struct span uid = next_word(&v), k1 = next_word(&v), n1 = next_word(&v), k2 = next_word(&v);
	struct span n2 = next_word(&v);

	memset(u, 0, sizeof *u);
	if (!parse_uid(uid, &u->uid) || !span_eq(k1, "entries") || !parse_u64(n1, &u->entries) ||
	    !span_eq(k2, "bytes") || !parse_u64(n2, &u->bytes))
		return -EPROTO;
	while (v.n > 0) {
		struct span key = next_word(&v), num = next_word(&v);
		uint64_t n;
		if (key.n == 0 || !parse_u64(num, &n))
			return -EPROTO;
		if (span_eq(key, "meta"))
			u->meta = n;
	}
	return 0;
}

static int usage_line(struct span key, struct span v, void *out, unsigned *bit)
{
	static const struct num_key nums[] = {
		{"entries", S_ENTRIES, offsetof(struct poolfs_usage, entries)},
		{"bytes", S_BYTES, offsetof(struct poolfs_usage, bytes)},
		{"max_size", S_MAX, offsetof(struct poolfs_usage, max_size)},
		{"max_user_size", S_MAXUSER, offsetof(struct poolfs_usage, max_user_size)},
		{"meta", 0, offsetof(struct poolfs_usage, meta)},
		{"max_user_entries", 0, offsetof(struct poolfs_usage, max_user_entries)},
		{"max_user_meta", 0, offsetof(struct poolfs_usage, max_user_meta)},
	};
	struct poolfs_usage *u = out;
	int n = num_line(nums, sizeof nums / sizeof nums[0], key, v, out, bit);

	if (n != 0)
		return n < 0 ? n : 0;
	if (span_eq(key, "datapath")) {
		*bit = S_DATAPATH;
		if (v.n == 0 || v.n >= sizeof u->datapath || memchr(v.s, ' ', v.n))
			return -EPROTO;
		memcpy(u->datapath, v.s, v.n);
		u->datapath[v.n] = '\0';
	} else if (span_eq(key, "user")) {
		struct poolfs_user_usage uu;
		if (parse_user(v, &uu) < 0)
			return -EPROTO;
		if (u->nlisted < POOLFS_USAGE_MAX_USERS)
			u->users[u->nlisted++] = uu;
		if (u->nusers < UINT32_MAX)
			u->nusers++;
	}
	return 0;
}

int usage_parse(const char *text, size_t len, struct poolfs_usage *out)
{
	struct poolfs_usage u;
	int ret;

	memset(&u, 0, sizeof u);
	/* Every key with a bit is required (the bits name exactly those). */
	ret = parse_lines(text, len, usage_line, &u,
			  S_ENTRIES | S_BYTES | S_MAX | S_MAXUSER | S_DATAPATH);
	if (ret == 0)
		*out = u;
	return ret;
}
