/* options: parse and validate the pool's mount options (see options.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "options.h"
#include "poolfs_names.h"

void options_init(struct pool_options *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->backing, sizeof(o->backing), "%s", "/dev/shm");
	o->datapath = DATAPATH_AUTO;
	o->autohold = AUTOHOLD_SESSION;
	o->huge = HUGE_WITHIN_SIZE;
	o->max_user_entries = OPTIONS_DEFAULT_MAX_USER_ENTRIES;
	o->max_user_meta = OPTIONS_DEFAULT_MAX_USER_META;
}

int options_parse_size(const char *text, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	/* A digit first: strtoull skips blanks and then takes a sign, so " -1" would wrap to
	 * 2^64-1 (an unlimited quota) if only text[0] were checked for '-'. */
	if (!text || *text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text)
		return errno == ERANGE ? -ERANGE : -EINVAL;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	case 't':
	case 'T':
		shift = 40;
		end++;
		break;
	default:
		return -EINVAL;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

int options_parse_seconds(const char *text, uint64_t *out_ms)
{
	char *end;
	double v;
	size_t whole, frac = 0;

	/* Plain decimals only ("1", "1.5", ".5", "2."): strtod would also take blanks, signs,
	 * exponents ("1e3"), hex floats ("0x10"), "inf" and "nan". */
	if (!text)
		return -EINVAL;
	whole = strspn(text, "0123456789");
	if (text[whole] == '.')
		frac = strspn(text + whole + 1, "0123456789");
	if (whole + frac == 0 || text[whole + (text[whole] == '.' ? 1 + frac : 0)] != '\0')
		return -EINVAL;
	/* The grammar is checked: strtod's ERANGE is only overflow (HUGE_VAL, refused below as
	 * too long) or underflow (a value far below a millisecond, which rounds to 0). */
	v = strtod(text, &end);
	if (end == text || *end)
		return -EINVAL;
	if (!(v >= 0) || v > 86400.0 * 365)
		return -ERANGE;
	*out_ms = (uint64_t)(v * 1000.0 + 0.5);
	return 0;
}

static int parse_enum(const char *value, const char *const names[], int count)
{
	for (int i = 0; i < count; i++)
		if (strcmp(value, names[i]) == 0)
			return i;
	return -EINVAL;
}

static const char *const datapath_names[] = {"auto", "passthrough", "pagecache"};
static const char *const autohold_names[] = {"none", POOLFS_SCOPE_WORD_PROCESS,
					     POOLFS_SCOPE_WORD_SESSION, POOLFS_SCOPE_WORD_CGROUP};
static const char *const uring_names[] = {"auto", "on", "off"};
static const char *const huge_names[] = {"never", "within_size", "always", "advise"};

const char *options_datapath_name(enum datapath_choice d)
{
	return datapath_names[d];
}

const char *options_autohold_name(enum autohold_choice a)
{
	return autohold_names[a];
}

const char *options_uring_name(enum uring_choice u)
{
	return uring_names[u];
}

const char *options_huge_name(enum huge_choice h)
{
	return huge_names[h];
}

/* Returns the value if `item` is `key=value`, NULL otherwise. */
static const char *value_of(const char *item, const char *key)
{
	size_t n = strlen(key);

	if (strncmp(item, key, n) == 0 && item[n] == '=')
		return item + n + 1;
	return NULL;
}

/* The options that name one of a few words: 1, 0 if `item` is none of them, or -EINVAL. */
static int apply_choice(struct pool_options *o, const char *item, const char **why)
{
	enum { DATAPATH, HUGE, AUTOHOLD, URING };
	static const struct {
		const char *key;
		const char *const *names;
		int count;
		const char *why;
	} choices[] = {
		[DATAPATH] = {"datapath", datapath_names, ARRAY_SIZE(datapath_names),
			      "datapath= must be auto, passthrough or pagecache"},
		[HUGE] = {"huge", huge_names, ARRAY_SIZE(huge_names),
			  "huge= must be never, within_size, always or advise"},
		[AUTOHOLD] = {"autohold", autohold_names, ARRAY_SIZE(autohold_names),
			      "autohold= must be none, process, session or cgroup"},
		[URING] = {"uring", uring_names, ARRAY_SIZE(uring_names),
			   "uring= must be auto, on or off"},
	};
	size_t i = 0;
	const char *v = NULL;
	int r;

	while (i < ARRAY_SIZE(choices) && !(v = value_of(item, choices[i].key)))
		i++;
	if (!v)
		return 0;
	r = parse_enum(v, choices[i].names, choices[i].count);
	if (r < 0) {
		*why = choices[i].why;
		return r;
	}
	switch (i) {
	case DATAPATH:
		o->datapath = (enum datapath_choice)r;
		break;
	case HUGE:
		o->huge = (enum huge_choice)r;
		o->huge_given = true;
		break;
	case AUTOHOLD:
		o->autohold = (enum autohold_choice)r;
		break;
	default:
		o->uring = (enum uring_choice)r;
	}
	return 1;
}

/* The numeric limits: byte counts (or entry counts) with optional k/M/G/T suffixes. */
static int apply_limit(struct pool_options *o, const char *item, const char **why)
{
	const struct {
		const char *key;
		uint64_t *field;
		const char *why;
	} limits[] = {
		{"max_size", &o->max_size,
		 "max_size= must be a byte count with an optional k/M/G/T suffix"},
		{"max_user_size", &o->max_user_size,
		 "max_user_size= must be a byte count with an optional k/M/G/T suffix"},
		{"max_user_entries", &o->max_user_entries,
		 "max_user_entries= must be a count with an optional k/M/G suffix (0: no limit)"},
		{"max_user_meta", &o->max_user_meta,
		 "max_user_meta= must be a byte count with an optional k/M/G/T suffix (0: no limit)"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(limits); i++) {
		const char *v = value_of(item, limits[i].key);
		int r;
		if (!v)
			continue;
		r = options_parse_size(v, limits[i].field);
		if (r < 0)
			*why = limits[i].why;
		return r < 0 ? r : 1;
	}
	return 0;
}

int options_apply(struct pool_options *o, const char *item, const char **why)
{
	const char *v;
	const char *dummy;
	int r;

	if (!why)
		why = &dummy;
	if ((v = value_of(item, "backing"))) {
		if (!*v || v[0] != '/') {
			*why = "backing= needs an absolute directory path";
			return -EINVAL;
		}
		if (strlen(v) >= sizeof(o->backing) - 64) {
			*why = "backing= path is too long";
			return -ENAMETOOLONG;
		}
		snprintf(o->backing, sizeof(o->backing), "%s", v);
		o->backing_given = true;
		return 1;
	}
	if ((v = value_of(item, "linger"))) {
		r = options_parse_seconds(v, &o->linger_ms);
		if (r < 0)
			*why = "linger= must be a number of seconds (decimals allowed, at most a year)";
		return r < 0 ? r : 1;
	}
	r = apply_choice(o, item, why);
	if (r == 0)
		r = apply_limit(o, item, why);
	if (r != 0)
		return r;
	if (strcmp(item, "root_exempt") == 0) {
		o->root_exempt = true;
		return 1;
	}
	/* noted, and still passed on to FUSE */
	if (strcmp(item, "allow_other") == 0)
		o->allow_other = true;
	if (strcmp(item, "allow_root") == 0)
		o->allow_root = true;
	return 0;
}

bool options_multi_user(const struct pool_options *o)
{
	return o->allow_other || o->allow_root;
}
