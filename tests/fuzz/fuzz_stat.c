/* Fuzz target: usage_parse() (lib/xattr_text.c), the library's reading of a user.poolfs.stat answer.
 *
 * Oracles: only 0 or -EPROTO; the result does not depend on what *out held before; an accepted
 * answer is self-consistent (nlisted <= nusers and <= POOLFS_USAGE_MAX_USERS, datapath a non-empty
 * NUL-terminated word); and the answer written back from the parsed structure, the way the daemon
 * writes it (docs/interface.md, "Extended attributes"), parses to the same structure. */
#include <errno.h>
#include <inttypes.h>

#include "fuzz.h"
#include "xattr_text.h"

/* 5 lines of <= 40 bytes and 64 user lines of <= 70 bytes fit with room to spare. */
#define STAT_TEXT_MAX 8192

static void check_same(const struct poolfs_usage *a, const struct poolfs_usage *b, int exact)
{
	FUZZ_CHECK(a->entries == b->entries && a->bytes == b->bytes);
	FUZZ_CHECK(a->max_size == b->max_size && a->max_user_size == b->max_user_size);
	FUZZ_CHECK(a->meta == b->meta && a->max_user_entries == b->max_user_entries &&
		   a->max_user_meta == b->max_user_meta);
	FUZZ_CHECK(strcmp(a->datapath, b->datapath) == 0);
	/* users past the listed ones are only counted, so they are not written back */
	FUZZ_CHECK(a->nlisted == b->nlisted && (!exact || a->nusers == b->nusers));
	for (unsigned i = 0; i < a->nlisted && i < POOLFS_USAGE_MAX_USERS; i++) {
		const struct poolfs_user_usage *x = &a->users[i], *y = &b->users[i];
		FUZZ_CHECK(x->uid == y->uid && x->entries == y->entries && x->bytes == y->bytes &&
			   x->meta == y->meta);
	}
}

static void check_consistent(const struct poolfs_usage *u)
{
	FUZZ_CHECK(u->nlisted <= POOLFS_USAGE_MAX_USERS && u->nlisted <= u->nusers);
	const char *nul = memchr(u->datapath, '\0', sizeof(u->datapath));
	FUZZ_CHECK(nul != NULL && nul != u->datapath);
	FUZZ_CHECK(strchr(u->datapath, ' ') == NULL && strchr(u->datapath, '\n') == NULL);
}

/* The answer for *u as the daemon writes it (fs/pool_holds.c). Returns its length. */
static size_t stat_format(const struct poolfs_usage *u, char *buf, size_t cap)
{
	int n = snprintf(buf, cap,
			 "entries %" PRIu64 "\nbytes %" PRIu64 "\nmeta %" PRIu64
			 "\nmax_size %" PRIu64 "\nmax_user_size %" PRIu64
			 "\nmax_user_entries %" PRIu64 "\nmax_user_meta %" PRIu64 "\ndatapath %s\n",
			 u->entries, u->bytes, u->meta, u->max_size, u->max_user_size,
			 u->max_user_entries, u->max_user_meta, u->datapath);
	FUZZ_CHECK(n > 0 && (size_t)n < cap);
	size_t used = (size_t)n;
	for (unsigned i = 0; i < u->nlisted; i++) {
		const struct poolfs_user_usage *x = &u->users[i];
		n = snprintf(buf + used, cap - used,
			     "user %u entries %" PRIu64 " bytes %" PRIu64 " meta %" PRIu64 "\n",
			     (unsigned)x->uid, x->entries, x->bytes, x->meta);
		FUZZ_CHECK(n > 0 && (size_t)n < cap - used);
		used += (size_t)n;
	}
	return used;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t sz = sizeof(struct poolfs_usage);
	struct poolfs_usage *a = malloc(sz), *b = malloc(sz), *c = malloc(sz);
	char *text = malloc(STAT_TEXT_MAX);

	FUZZ_CHECK(a && b && c && text);
	memset(a, 0x00, sz);
	memset(b, 0xa5, sz);
	int ra = usage_parse((const char *)data, size, a);
	int rb = usage_parse((const char *)data, size, b);
	FUZZ_CHECK(ra == rb);
	FUZZ_CHECK(ra == 0 || ra == -EPROTO);
	if (ra == 0) {
		check_same(a, b, 1);
		check_consistent(a);
		size_t n = stat_format(a, text, STAT_TEXT_MAX);
		FUZZ_CHECK(usage_parse(text, n, c) == 0);
		check_same(a, c, 0);
		FUZZ_CHECK(c->nusers == c->nlisted);
	}
	free(a);
	free(b);
	free(c);
	free(text);
	return 0;
}
