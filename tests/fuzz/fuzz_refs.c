/* Fuzz target: refs_parse() (lib/xattr_text.c), the library's reading of a user.poolfs.refs answer.
 *
 * Oracles: only 0 or -EPROTO; the result does not depend on what *out held before; an accepted
 * answer is self-consistent (nlisted <= nholds and <= POOLFS_REFS_MAX_HOLDS, flags 0 or 1, every
 * scope text NUL-terminated, pid set exactly for pid and session scopes, `truncated` only on a full
 * text, `names` 0 unless the text has a names line); and the answer written back from the parsed
 * structure, the way the daemon writes it (docs/interface.md, "Extended attributes", with the
 * entry kinds' "names N" line), parses to the same structure.
 *
 * The same input also makes a hold for the daemon's own formatter, hold_format_scope() (fs/holds.c):
 * the hold line it writes must parse back to that hold's scope, pid, uid and text. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>

#include "fuzz.h"
#include "poolfs_names.h"
#include "holds.h"
#include "xattr_text.h"

/* One more than any text refs_format() writes: 6 counter lines, 16 hold lines of <= 280 bytes. */
#define REFS_TEXT_MAX 8192

static void check_same(const void *va, const void *vb, int exact)
{
	const struct poolfs_refs *a = va, *b = vb;

	FUZZ_CHECK(a->opens == b->opens && a->mapped == b->mapped && a->folder == b->folder);
	FUZZ_CHECK(a->children == b->children && a->nholds == b->nholds &&
		   a->nlisted == b->nlisted);
	FUZZ_CHECK(a->names == b->names);
	for (unsigned i = 0; i < a->nlisted && i < POOLFS_REFS_MAX_HOLDS; i++) {
		const struct poolfs_hold_info *x = &a->holds[i], *y = &b->holds[i];
		FUZZ_CHECK(x->scope == y->scope && x->pid == y->pid && x->uid == y->uid);
		FUZZ_CHECK(strcmp(x->text, y->text) == 0);
		/* a text cut to fit is written back whole, so it is no longer cut */
		FUZZ_CHECK(!exact || x->truncated == y->truncated);
	}
}

static void check_consistent(const void *parsed, const uint8_t *data, size_t size)
{
	const struct poolfs_refs *r = parsed;

	/* a count without its line would be a guess */
	FUZZ_CHECK(r->names == 0 || (size >= 6 && memmem(data, size, "names ", 6) != NULL));
	FUZZ_CHECK(r->nlisted <= POOLFS_REFS_MAX_HOLDS && r->nlisted <= r->nholds);
	FUZZ_CHECK((r->mapped == 0 || r->mapped == 1) && (r->folder == 0 || r->folder == 1));
	FUZZ_CHECK(r->folder || r->children == 0);
	for (unsigned i = 0; i < r->nlisted; i++) {
		const struct poolfs_hold_info *h = &r->holds[i];
		const char *nul = memchr(h->text, '\0', sizeof(h->text));
		FUZZ_CHECK(nul != NULL && nul != h->text);
		FUZZ_CHECK(h->truncated == 0 ||
			   (h->truncated == 1 && nul == h->text + sizeof(h->text) - 1));
		FUZZ_CHECK(h->scope >= POOLFS_SCOPE_UNKNOWN && h->scope <= POOLFS_SCOPE_CGROUP);
		/* this daemon writes pid:N for a process hold, but the library also reads a bare
		 * "process" (lib/poolfs.h, struct poolfs_hold_info) */
		FUZZ_CHECK(h->scope != POOLFS_SCOPE_PROCESS ||
			   strcmp(h->text, POOLFS_SCOPE_WORD_PROCESS) == 0);
		int has_pid = h->scope == POOLFS_SCOPE_PID || h->scope == POOLFS_SCOPE_SESSION;
		FUZZ_CHECK(has_pid ? h->pid > 0 : h->pid == 0);
	}
}

/* The answer for *r as the daemon writes it (fs/pool_holds.c). Returns its length. */
static size_t refs_format(const void *parsed, char *buf, size_t cap)
{
	const struct poolfs_refs *r = parsed;
	size_t used = 0;
	int n = snprintf(buf, cap, "opens %" PRIu64 "\nmapped %s\nnames %" PRIu32 "\n", r->opens,
			 r->mapped ? "yes" : "no", r->names);
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

/* A hold made of the input: byte 0 the kind, bytes 1..4 the pid, 5..8 the uid, the rest a cgroup
 * path below the root ("/" + the bytes up to the first newline or NUL: the daemon reads the path
 * from one line of /proc/PID/cgroup, and the root group is refused before any hold is made). */
static void check_daemon_line(const uint8_t *data, size_t size)
{
	struct hold_source src;
	struct hold h;
	uint32_t pid, uid;
	static const size_t text_cap = 8192;

	if (size < 9)
		return;
	memset(&src, 0, sizeof(src));
	memset(&h, 0, sizeof(h));
	memcpy(&pid, data + 1, sizeof(pid));
	memcpy(&uid, data + 5, sizeof(uid));
	size_t plen = 0;
	while (9 + plen < size && data[9 + plen] != '\n' && data[9 + plen] != '\0')
		plen++;
	char *path = malloc(plen + 2), *scope = malloc(4200), *text = malloc(text_cap);
	struct poolfs_refs *r = malloc(sizeof(*r));
	FUZZ_CHECK(path && scope && text && r);
	path[0] = '/';
	memcpy(path + 1, data + 9, plen);
	path[plen + 1] = '\0';

	src.kind = data[0] % 3 == 0 ? HOLD_PID : data[0] % 3 == 1 ? HOLD_SESSION : HOLD_CGROUP;
	src.pid = (pid_t)(pid % INT_MAX + 1);
	src.cgroup = path;
	h.src = data[0] % 4 == 3 ? NULL : &src; /* NULL: a pin */
	h.uid = (uid_t)uid;
	/* the daemon's buffer (fs/pool_holds.c); a longer path is written as "?", tested elsewhere */
	if (hold_format_scope(&h, scope, 4200) == 0) {
		int n = snprintf(text, text_cap,
				 "opens 0\nmapped no\nnames 1\nholds 1\nhold %s uid=%u\n", scope,
				 (unsigned)h.uid);
		FUZZ_CHECK(n > 0 && (size_t)n < text_cap);
		FUZZ_CHECK(refs_parse(text, (size_t)n, r) == 0);
		FUZZ_CHECK(r->nholds == 1 && r->nlisted == 1 && r->holds[0].uid == h.uid);
		FUZZ_CHECK(r->names == 1);
		const struct poolfs_hold_info *got = &r->holds[0];
		enum poolfs_scope want = !h.src			    ? POOLFS_SCOPE_PIN
					 : src.kind == HOLD_PID	    ? POOLFS_SCOPE_PID
					 : src.kind == HOLD_SESSION ? POOLFS_SCOPE_SESSION
								    : POOLFS_SCOPE_CGROUP;
		FUZZ_CHECK(got->scope == want);
		FUZZ_CHECK(
			got->pid ==
			(want == POOLFS_SCOPE_PID || want == POOLFS_SCOPE_SESSION ? src.pid : 0));
		size_t slen = strlen(scope);
		FUZZ_CHECK(got->truncated == (slen >= sizeof(got->text)));
		FUZZ_CHECK(strncmp(got->text, scope, sizeof(got->text) - 1) == 0);
	}
	free(path);
	free(scope);
	free(text);
	free(r);
}

static int parse(const char *text, size_t len, void *out)
{
	return refs_parse(text, len, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct fuzz_answer refs = {
		.size = sizeof(struct poolfs_refs),
		.text_max = REFS_TEXT_MAX,
		.parse = parse,
		.same = check_same,
		.consistent = check_consistent,
		.format = refs_format,
	};

	fuzz_answer(&refs, data, size);
	check_daemon_line(data, size);
	return 0;
}
