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

static void check_same(const void *va, const void *vb, int exact)
{
	const struct poolfs_usage *a = va, *b = vb;

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

static void check_consistent(const void *parsed, const uint8_t *data, size_t size)
{
	const struct poolfs_usage *u = parsed;

	(void)data;
	(void)size;
	FUZZ_CHECK(u->nlisted <= POOLFS_USAGE_MAX_USERS && u->nlisted <= u->nusers);
	const char *nul = memchr(u->datapath, '\0', sizeof(u->datapath));
	FUZZ_CHECK(nul != NULL && nul != u->datapath);
	FUZZ_CHECK(strchr(u->datapath, ' ') == NULL && strchr(u->datapath, '\n') == NULL);
}

/* The answer for *u as the daemon writes it (fs/pool_holds.c). Returns its length. */
static size_t stat_format(const void *parsed, char *buf, size_t cap)
{
	const struct poolfs_usage *u = parsed;
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

static int parse(const char *text, size_t len, void *out)
{
	return usage_parse(text, len, out);
}

/* users past the listed ones are only counted, so none is left out when written back */
static void written_back(const void *parsed)
{
	const struct poolfs_usage *u = parsed;

	FUZZ_CHECK(u->nusers == u->nlisted);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct fuzz_answer usage = {
		.size = sizeof(struct poolfs_usage),
		.text_max = STAT_TEXT_MAX,
		.parse = parse,
		.same = check_same,
		.consistent = check_consistent,
		.format = stat_format,
		.written_back = written_back,
	};

	fuzz_answer(&usage, data, size);
	return 0;
}
