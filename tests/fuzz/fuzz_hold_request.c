/* Fuzz target: hold_request_parse() (fs/holds.c), the daemon's reading of a user.poolfs.hold value,
 * against scope_format() (lib/xattr_text.c), the library's writing of one.
 *
 * Oracles: only 0 or -EINVAL; the result does not depend on what *out held before (every field of
 * an accepted request is written); a second reading of the grammar in docs/interface.md ("pin",
 * "process", "session", "cgroup", or "pid:" and a decimal pid without sign, blank or leading zero up
 * to INT_MAX; then at most one NUL or newline) agrees on accept/refuse and on the request; an
 * accepted request is one the library can write, and what the
 * library writes for it (bare, with a NUL, with a newline) parses back to the same request. The
 * same input also picks a (scope, pid) pair: whatever scope_format() accepts, the daemon must accept
 * and read back unchanged. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>

#include "fuzz.h"
#include "poolfs_names.h"
#include "holds.h"
#include "xattr_text.h"

static bool span_is(const char *s, size_t n, const char *lit)
{
	return n == strlen(lit) && memcmp(s, lit, n) == 0;
}

/* The grammar by hand: 0 and *out, or -EINVAL. */
static int reference_parse(const char *s, size_t n, struct hold_request *out)
{
	if (n > 0 && (s[n - 1] == '\0' || s[n - 1] == '\n'))
		n--;
	out->pid = 0;
	if (span_is(s, n, POOLFS_SCOPE_WORD_PIN))
		out->kind = HOLD_PIN;
	else if (span_is(s, n, POOLFS_SCOPE_WORD_PROCESS))
		out->kind = HOLD_PID;
	else if (span_is(s, n, POOLFS_SCOPE_WORD_SESSION))
		out->kind = HOLD_SESSION;
	else if (span_is(s, n, POOLFS_SCOPE_WORD_CGROUP))
		out->kind = HOLD_CGROUP;
	else if (n > 4 && memcmp(s, "pid:", 4) == 0 && s[4] != '0') {
		long long v = 0;
		for (size_t i = 4; i < n; i++) {
			if (s[i] < '0' || s[i] > '9' || v > INT_MAX)
				return -EINVAL;
			v = v * 10 + (s[i] - '0');
		}
		if (v > INT_MAX)
			return -EINVAL;
		out->kind = HOLD_PID;
		out->pid = (pid_t)v;
	} else
		return -EINVAL;
	return 0;
}

static void check_parses_to(const char *text, size_t len, const struct hold_request *want)
{
	struct hold_request got;

	FUZZ_CHECK(hold_request_parse(text, len, &got) == 0);
	FUZZ_CHECK(got.kind == want->kind && got.pid == want->pid);
}

/* What the library writes for request *req parses back to it, in the three spellings setfattr and
 * friends may use. */
static void check_round_trip(const struct hold_request *req)
{
	enum poolfs_scope scope;
	char buf[64];

	switch (req->kind) {
	case HOLD_PIN:
		scope = POOLFS_SCOPE_PIN;
		break;
	case HOLD_PID:
		scope = req->pid ? POOLFS_SCOPE_PID : POOLFS_SCOPE_PROCESS;
		break;
	case HOLD_SESSION:
		scope = POOLFS_SCOPE_SESSION;
		break;
	case HOLD_CGROUP:
		scope = POOLFS_SCOPE_CGROUP;
		break;
	default:
		FUZZ_CHECK(!"hold_request_parse() gave an unknown kind");
		return;
	}
	int n = scope_format(scope, req->pid, buf, sizeof(buf) - 1);
	FUZZ_CHECK(n > 0 && (size_t)n < sizeof(buf) - 1);
	check_parses_to(buf, (size_t)n, req);
	check_parses_to(buf, (size_t)n + 1, req); /* with the NUL scope_format() wrote */
	buf[n] = '\n';
	check_parses_to(buf, (size_t)n + 1, req);
}

/* Bytes 0..4 as (scope, pid): scope_format() -> hold_request_parse() keeps them. */
static void check_library_scope(const uint8_t *data, size_t size)
{
	if (size < 5)
		return;
	/* -2..5: both ends out of range too, which scope_format() must refuse */
	enum poolfs_scope scope = (enum poolfs_scope)((int)(data[0] % 8) - 2);
	int32_t raw;
	memcpy(&raw, data + 1, sizeof(raw));
	pid_t pid = (pid_t)raw;
	char buf[64];
	int n = scope_format(scope, pid, buf, sizeof(buf));
	if (n < 0) {
		FUZZ_CHECK(n == -EINVAL);
		FUZZ_CHECK(scope < POOLFS_SCOPE_PIN || scope > POOLFS_SCOPE_CGROUP ||
			   (scope == POOLFS_SCOPE_PID && pid <= 0));
		return;
	}
	struct hold_request want = {HOLD_PIN, 0};
	switch (scope) {
	case POOLFS_SCOPE_PID:
		want.kind = HOLD_PID;
		want.pid = pid;
		break;
	case POOLFS_SCOPE_PROCESS:
		want.kind = HOLD_PID;
		break;
	case POOLFS_SCOPE_SESSION:
		want.kind = HOLD_SESSION;
		break;
	case POOLFS_SCOPE_CGROUP:
		want.kind = HOLD_CGROUP;
		break;
	default:
		break;
	}
	check_parses_to(buf, (size_t)n, &want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hold_request a, b;

	memset(&a, 0x00, sizeof(a));
	memset(&b, 0xa5, sizeof(b));
	int ra = hold_request_parse((const char *)data, size, &a);
	int rb = hold_request_parse((const char *)data, size, &b);
	FUZZ_CHECK(ra == rb);
	FUZZ_CHECK(ra == 0 || ra == -EINVAL);
	struct hold_request ref;
	FUZZ_CHECK(reference_parse((const char *)data, size, &ref) == ra);
	if (ra == 0) {
		FUZZ_CHECK(a.kind == ref.kind && a.pid == ref.pid);
		FUZZ_CHECK(a.kind == b.kind && a.pid == b.pid);
		FUZZ_CHECK(a.pid >= 0 && (a.pid == 0 || a.kind == HOLD_PID));
		check_round_trip(&a);
	}
	check_library_scope(data, size);
	return 0;
}
