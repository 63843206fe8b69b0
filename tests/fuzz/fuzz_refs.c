/* Fuzz target: refs_parse() (lib/xattr_text.c), the library's reading of a user.poolfs.refs answer.
 *
 * Oracles: only 0 or -EPROTO; the result does not depend on what *out held before; an accepted
 * answer is self-consistent (nlisted <= nholds and <= POOLFS_REFS_MAX_HOLDS, flags 0 or 1, every
 * scope text NUL-terminated, pid set exactly for pid and session scopes, `truncated` only on a full
 * text); and the answer written back from the parsed structure, the way the daemon writes it
 * (docs/interface.md, "Extended attributes"), parses to the same structure. */
#include <errno.h>
#include <inttypes.h>

#include "fuzz.h"
#include "xattr_text.h"

/* One more than any text refs_format() writes: 5 counter lines, 16 hold lines of <= 280 bytes. */
#define REFS_TEXT_MAX 8192

static void check_same(const struct poolfs_refs *a, const struct poolfs_refs *b, int exact)
{
	FUZZ_CHECK(a->opens == b->opens && a->mapped == b->mapped && a->folder == b->folder);
	FUZZ_CHECK(a->children == b->children && a->nholds == b->nholds && a->nlisted == b->nlisted);
	for (unsigned i = 0; i < a->nlisted && i < POOLFS_REFS_MAX_HOLDS; i++) {
		const struct poolfs_hold_info *x = &a->holds[i], *y = &b->holds[i];
		FUZZ_CHECK(x->scope == y->scope && x->pid == y->pid && x->uid == y->uid);
		FUZZ_CHECK(strcmp(x->text, y->text) == 0);
		/* a text cut to fit is written back whole, so it is no longer cut */
		FUZZ_CHECK(!exact || x->truncated == y->truncated);
	}
}

static void check_consistent(const struct poolfs_refs *r)
{
	FUZZ_CHECK(r->nlisted <= POOLFS_REFS_MAX_HOLDS && r->nlisted <= r->nholds);
	FUZZ_CHECK((r->mapped == 0 || r->mapped == 1) && (r->folder == 0 || r->folder == 1));
	FUZZ_CHECK(r->folder || r->children == 0);
	for (unsigned i = 0; i < r->nlisted; i++) {
		const struct poolfs_hold_info *h = &r->holds[i];
		const char *nul = memchr(h->text, '\0', sizeof(h->text));
		FUZZ_CHECK(nul != NULL && nul != h->text);
		FUZZ_CHECK(h->truncated == 0 || (h->truncated == 1 && nul == h->text + sizeof(h->text) - 1));
		FUZZ_CHECK(h->scope >= POOLFS_SCOPE_UNKNOWN && h->scope <= POOLFS_SCOPE_CGROUP);
		FUZZ_CHECK(h->scope != POOLFS_SCOPE_PROCESS); /* reported as pid:N */
		int has_pid = h->scope == POOLFS_SCOPE_PID || h->scope == POOLFS_SCOPE_SESSION;
		FUZZ_CHECK(has_pid ? h->pid > 0 : h->pid == 0);
	}
}

/* The answer for *r as the daemon writes it (fs/pool_holds.c). Returns its length. */
static size_t refs_format(const struct poolfs_refs *r, char *buf, size_t cap)
{
	size_t used = 0;
	int n = snprintf(buf, cap, "opens %" PRIu64 "\nmapped %s\n", r->opens, r->mapped ? "yes" : "no");
	FUZZ_CHECK(n > 0 && (size_t)n < cap);
	used = (size_t)n;
	if (r->folder) {
		n = snprintf(buf + used, cap - used, "children %" PRIu64 "\n", r->children);
		FUZZ_CHECK(n > 0 && (size_t)n < cap - used);
		used += (size_t)n;
	}
	n = snprintf(buf + used, cap - used, "holds %" PRIu64 "\n", r->nholds);
	FUZZ_CHECK(n > 0 && (size_t)n < cap - used);
	used += (size_t)n;
	for (unsigned i = 0; i < r->nlisted; i++) {
		n = snprintf(buf + used, cap - used, "hold %s uid=%u\n", r->holds[i].text,
		             (unsigned)r->holds[i].uid);
		FUZZ_CHECK(n > 0 && (size_t)n < cap - used);
		used += (size_t)n;
	}
	return used;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t sz = sizeof(struct poolfs_refs);
	struct poolfs_refs *a = malloc(sz), *b = malloc(sz), *c = malloc(sz);
	char *text = malloc(REFS_TEXT_MAX);

	FUZZ_CHECK(a && b && c && text);
	memset(a, 0x00, sz);
	memset(b, 0xa5, sz);
	int ra = refs_parse((const char *)data, size, a);
	int rb = refs_parse((const char *)data, size, b);
	FUZZ_CHECK(ra == rb);
	FUZZ_CHECK(ra == 0 || ra == -EPROTO);
	if (ra == 0) {
		check_same(a, b, 1);
		check_consistent(a);
		size_t n = refs_format(a, text, REFS_TEXT_MAX);
		FUZZ_CHECK(refs_parse(text, n, c) == 0);
		check_same(a, c, 0);
	}
	free(a);
	free(b);
	free(c);
	free(text);
	return 0;
}
