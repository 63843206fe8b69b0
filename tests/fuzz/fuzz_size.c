/* Fuzz target: options_parse_size() (fs/options.c), max_size= and max_user_size=.
 *
 * The oracle is a second, independent reading of the grammar in docs/interface.md: one or more
 * decimal digits, an optional k/M/G/T (either case, powers of 1024) which a B may follow; nothing
 * else (a bare "5B" is refused).
 * Both readings must agree on accept/refuse and on the value; a refusal is -EINVAL or -ERANGE
 * (-ERANGE exactly when the grammar holds but the value does not fit in 64 bits); an accepted value
 * written back in decimal, and with its largest exact suffix, parses to the same value. */
#include <errno.h>
#include <stdbool.h>

#include "fuzz.h"
#include "options.h"

/* 0 and *out, -EINVAL (grammar) or -ERANGE (too large), by hand. */
static int reference_size(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	bool big = false;
	size_t i = 0;
	unsigned shift = 0;

	for (; s[i] >= '0' && s[i] <= '9'; i++)
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(s[i] - '0'), &v))
			big = true;
	if (i == 0)
		return -EINVAL;
	const char *suffix = strchr("kKmMgGtT", s[i]);
	if (s[i] && suffix) {
		shift = (unsigned)(suffix - "kKmMgGtT") / 2 * 10 + 10;
		i++;
		if (s[i] == 'B' || s[i] == 'b')
			i++;
	}
	if (s[i])
		return -EINVAL;
	if (big || (shift && v > (UINT64_MAX >> shift)))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

static void check_value_round_trips(uint64_t v)
{
	static const char suffixes[] = "kMGT";
	char buf[32];
	uint64_t back = ~v;

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	FUZZ_CHECK(options_parse_size(buf, &back) == 0 && back == v);
	for (int k = 4; k >= 1 && v; k--) {
		if (v & ((UINT64_C(1) << (10 * k)) - 1))
			continue;
		snprintf(buf, sizeof(buf), "%llu%c", (unsigned long long)(v >> (10 * k)),
			 suffixes[k - 1]);
		back = ~v;
		FUZZ_CHECK(options_parse_size(buf, &back) == 0 && back == v);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	uint64_t got = 0x5a5a5a5a5a5a5a5aULL, want = 0;
	int r = options_parse_size(text, &got);
	int ref = reference_size(text, &want);

	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
	/* The two refusals may differ where both apply ("99999999999999999999x"): either is right. */
	FUZZ_CHECK((r == 0) == (ref == 0));
	if (r == 0) {
		FUZZ_CHECK(got == want);
		check_value_round_trips(got);
	} else {
		FUZZ_CHECK(got == 0x5a5a5a5a5a5a5a5aULL); /* a refused value leaves *out alone */
		if (ref == -EINVAL)
			FUZZ_CHECK(r == -EINVAL || strspn(text, "0123456789") > 19);
		else
			FUZZ_CHECK(r == -ERANGE);
	}
	free(text);
	return 0;
}
