/* Fuzz target: options_parse_seconds() (fs/options.c), linger=.
 *
 * The oracle is a second reading of the grammar in docs/interface.md done with integers only:
 * digits, optionally '.' and digits, at least one digit in all; at most a year. The two readings
 * must agree on the grammar (-EINVAL) and, where the value is clearly inside or outside the year,
 * on accept/-ERANGE; the milliseconds may differ by one where the double the parser goes through
 * rounds a tie (x.yyy5) the other way. An accepted value written back as "S.mmm" parses to the same
 * milliseconds. */
#include <errno.h>
#include <stdbool.h>

#include "fuzz.h"
#include "options.h"

#define YEAR_S (86400ULL * 365)

struct exact {
	uint64_t ms; /* rounded half up; meaningless when over */
	bool over;   /* more than a year */
	bool at_limit; /* within a millisecond of the year either side: the double may fall either way */
};

/* 0 and *e, or -EINVAL when the grammar does not hold. */
static int reference_seconds(const char *s, struct exact *e)
{
	size_t whole = strspn(s, "0123456789"), frac = 0;
	uint64_t w = 0, f = 0;
	bool big = false, rest_nonzero = false;

	if (s[whole] == '.')
		frac = strspn(s + whole + 1, "0123456789");
	if (whole + frac == 0 || s[whole + (s[whole] == '.' ? 1 + frac : 0)] != '\0')
		return -EINVAL;
	for (size_t i = 0; i < whole; i++) {
		w = w * 10 + (uint64_t)(s[i] - '0');
		if (w > YEAR_S + 1) {
			big = true;
			w = YEAR_S + 1;
		}
	}
	/* the first four fraction digits in 1/10000 s; the others only matter as "not zero" */
	const char *fd = s + whole + 1;
	for (size_t i = 0; i < 4; i++)
		f = f * 10 + (i < frac ? (uint64_t)(fd[i] - '0') : 0);
	for (size_t i = 4; i < frac; i++)
		rest_nonzero |= fd[i] != '0';
	e->ms = w * 1000 + f / 10 + (f % 10 >= 5);
	e->over = big || w > YEAR_S || (w == YEAR_S && (f || rest_nonzero));
	e->at_limit = !big && w * 10000 + f + 10 >= YEAR_S * 10000 &&
		      w * 10000 + f <= YEAR_S * 10000 + 10;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	uint64_t ms = 0x5a5a5a5a5a5a5a5aULL, back = 0;
	struct exact e = {0, false, false};
	int r = options_parse_seconds(text, &ms);
	int ref = reference_seconds(text, &e);

	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
	FUZZ_CHECK((r == -EINVAL) == (ref == -EINVAL));
	if (r == 0) {
		FUZZ_CHECK(!e.over || e.at_limit);
		FUZZ_CHECK(ms + 1 >= e.ms && ms <= e.ms + 1);
		FUZZ_CHECK(ms <= YEAR_S * 1000);
		char buf[48];
		snprintf(buf, sizeof(buf), "%llu.%03llu", (unsigned long long)(ms / 1000),
			 (unsigned long long)(ms % 1000));
		FUZZ_CHECK(options_parse_seconds(buf, &back) == 0 && back == ms);
	} else {
		FUZZ_CHECK(ms == 0x5a5a5a5a5a5a5a5aULL); /* a refused value leaves *out_ms alone */
		if (r == -ERANGE)
			FUZZ_CHECK(e.over || e.at_limit);
	}
	free(text);
	return 0;
}
