/* The .npy header as pure functions: the dtype table, the preamble, a bounded parser for the header
 * dict (a tiny subset of Python literals) and the builder. No I/O here, so every hostile input can
 * be thrown at it by unit tests; the parser never reads outside the buffer it is given, never
 * recurses deeper than NPY_MAX_DEPTH, and checks every size product for overflow.
 */
#include "npy_header.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "libpoolfs maps little-endian .npy data as native types: little-endian hosts only"
#endif

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* Nesting limit of the generic value skipper (structured descr lists): deeper is refused rather than
 * risking the stack on a hostile header. numpy's own structured dtypes nest far less. */
#define NPY_MAX_DEPTH 16

static const struct {
	const char *descr;
	size_t size;
} dtypes[POOLFS_DTYPE_COUNT] = {
	[POOLFS_DTYPE_F8] = {"<f8", 8}, [POOLFS_DTYPE_F4] = {"<f4", 4},
	[POOLFS_DTYPE_I8] = {"<i8", 8}, [POOLFS_DTYPE_I4] = {"<i4", 4},
	[POOLFS_DTYPE_I2] = {"<i2", 2}, [POOLFS_DTYPE_I1] = {"|i1", 1},
	[POOLFS_DTYPE_U8] = {"<u8", 8}, [POOLFS_DTYPE_U4] = {"<u4", 4},
	[POOLFS_DTYPE_U2] = {"<u2", 2}, [POOLFS_DTYPE_U1] = {"|u1", 1},
	[POOLFS_DTYPE_B1] = {"|b1", 1}, [POOLFS_DTYPE_C16] = {"<c16", 16},
	[POOLFS_DTYPE_C8] = {"<c8", 8},
};

static bool dtype_valid(int d)
{
	return d >= 0 && d < POOLFS_DTYPE_COUNT;
}

const char *poolfs_dtype_descr(enum poolfs_dtype dtype)
{
	return dtype_valid((int)dtype) ? dtypes[dtype].descr : NULL;
}

size_t poolfs_dtype_size(enum poolfs_dtype dtype)
{
	return dtype_valid((int)dtype) ? dtypes[dtype].size : 0;
}

int npy_dtype_from_descr(const char *s, size_t n)
{
	if (n < 3)
		return -1;
	for (int d = 0; d < POOLFS_DTYPE_COUNT; d++) {
		const char *want = dtypes[d].descr;
		if (strlen(want) != n || memcmp(want + 1, s + 1, n - 1) != 0)
			continue;
		/* Byte order only matters above one byte; numpy writes '|' there but accepts the rest. */
		if (s[0] == '<' || (dtypes[d].size == 1 && s[0] != '\0' && strchr("|=>", s[0])))
			return d;
		return -1;
	}
	return -1;
}

int npy_data_size(const struct npy_meta *m, uint64_t *nbytes)
{
	if (!dtype_valid((int)m->dtype) || m->ndim < 0 || m->ndim > POOLFS_ARRAY_MAX_DIMS)
		return -EINVAL;
	uint64_t n = dtypes[m->dtype].size;
	bool zero = false;
	/* numpy holds each dimension in a signed intp, whatever the product. */
	for (int i = 0; i < m->ndim; i++) {
		if (m->shape[i] > INT64_MAX)
			return -EOVERFLOW;
		zero |= m->shape[i] == 0;
	}
	/* A zero dimension makes the product 0 whatever the others are: settle that before any
	 * multiplication can overflow on the way. */
	if (zero) {
		*nbytes = 0;
		return 0;
	}
	for (int i = 0; i < m->ndim; i++)
		if (__builtin_mul_overflow(n, m->shape[i], &n))
			return -EOVERFLOW;
	/* numpy indexes with a signed intp: more than INT64_MAX bytes is no array it could use. */
	if (n > INT64_MAX)
		return -EOVERFLOW;
	*nbytes = n;
	return 0;
}

int npy_preamble_parse(const void *buf, size_t len, int *major, size_t *total)
{
	const unsigned char *b = buf;

	if (len < NPY_PREAMBLE_MIN || memcmp(b, npy_magic, sizeof npy_magic) != 0)
		return -EPROTO;
	size_t pre, hlen;
	switch (b[6]) {
	case 1:
		pre = 10;
		hlen = (size_t)b[8] | (size_t)b[9] << 8;
		break;
	case 2:
	case 3: /* 3.0 only allows UTF-8 in the dict; the numeric subset we accept is the same */
		if (len < NPY_PREAMBLE_MAX)
			return -EPROTO;
		pre = 12;
		hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
		break;
	default:
		return -ENOTSUP;
	}
	if (b[7] != 0)
		return -ENOTSUP;
	if (hlen > NPY_HEADER_LIMIT)
		return -EPROTO;
	*major = b[6];
	*total = pre + hlen;
	return 0;
}

/* ---- the dict parser ---------------------------------------------------------------------- */

struct cursor {
	const char *p, *end;
};

static void skip_ws(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static bool eat(struct cursor *c, char ch)
{
	skip_ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

static bool peek(struct cursor *c, char ch)
{
	skip_ws(c);
	return c->p < c->end && *c->p == ch;
}

/* A quoted string, '...' or "...". *s and *n get the raw contents; *escaped says a backslash occurred
 * (such contents never match a key or a dtype, which is what we want: they are just skipped). */
static int parse_string(struct cursor *c, const char **s, size_t *n, bool *escaped)
{
	skip_ws(c);
	if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
		return -EPROTO;
	char q = *c->p++;
	const char *start = c->p;
	*escaped = false;
	while (c->p < c->end && *c->p != q) {
		if (*c->p == '\n' || *c->p == '\0')
			return -EPROTO;
		if (*c->p == '\\') {
			*escaped = true;
			if (++c->p >= c->end)
				return -EPROTO;
		}
		c->p++;
	}
	if (c->p >= c->end)
		return -EPROTO; /* unterminated */
	*s = start;
	*n = (size_t)(c->p - start);
	c->p++;
	return 0;
}

static bool is_word_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || ch == '.' || ch == '+' || ch == '-';
}

/* A bare token (number or name) into *s and *n. */
static int parse_word(struct cursor *c, const char **s, size_t *n)
{
	skip_ws(c);
	const char *start = c->p;
	while (c->p < c->end && is_word_char(*c->p))
		c->p++;
	if (c->p == start)
		return -EPROTO;
	*s = start;
	*n = (size_t)(c->p - start);
	return 0;
}

/* Skip any value: string, token, or a bracketed sequence of values separated by ',' or ':'.
 * Used only to get past a structured 'descr' list, which we then refuse as unsupported. */
static int skip_value(struct cursor *c, int depth)
{
	const char *s;
	size_t n;
	bool esc;

	if (depth > NPY_MAX_DEPTH)
		return -EPROTO;
	skip_ws(c);
	if (c->p >= c->end)
		return -EPROTO;
	char open = *c->p, close;
	switch (open) {
	case '\'':
	case '"':
		return parse_string(c, &s, &n, &esc);
	case '(':
		close = ')';
		break;
	case '[':
		close = ']';
		break;
	case '{':
		close = '}';
		break;
	default:
		return parse_word(c, &s, &n);
	}
	c->p++;
	if (eat(c, close))
		return 0;
	for (;;) {
		int r = skip_value(c, depth + 1);
		if (r < 0)
			return r;
		if (eat(c, close))
			return 0;
		if (!eat(c, ',') && !eat(c, ':'))
			return -EPROTO;
		if (eat(c, close)) /* trailing comma */
			return 0;
	}
}

/* One non-negative Python int (an 'L' suffix from Python 2 era files is accepted, as numpy does).
 * Sets *big instead of failing when it does not fit, so syntax errors later still win. */
static int parse_dim(struct cursor *c, uint64_t *v, bool *big)
{
	const char *s;
	size_t n;
	int r = parse_word(c, &s, &n);
	if (r < 0)
		return r;
	if (n > 1 && (s[n - 1] == 'L' || s[n - 1] == 'l'))
		n--;
	if (n > 1 && s[0] == '0')
		return -EPROTO; /* Python 3 rejects leading zeros */
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EPROTO; /* includes '-': a negative dimension is malformed */
		if (__builtin_mul_overflow(x, 10, &x) ||
		    __builtin_add_overflow(x, (uint64_t)(s[i] - '0'), &x))
			*big = true;
	}
	if (x > INT64_MAX)
		*big = true;
	*v = x;
	return 0;
}

/* A tuple of ints: "()", "(3,)", "(2, 3)", "(2, 3,)". "(3)" is an int in Python, not a tuple. */
static int parse_shape(struct cursor *c, struct npy_meta *m, bool *too_many, bool *big)
{
	if (!eat(c, '('))
		return -EPROTO;
	m->ndim = 0;
	if (eat(c, ')'))
		return 0;
	int count = 0;
	for (;;) {
		uint64_t v;
		int r = parse_dim(c, &v, big);
		if (r < 0)
			return r;
		if (count < POOLFS_ARRAY_MAX_DIMS)
			m->shape[count] = v;
		else
			*too_many = true;
		if (count < INT32_MAX)
			count++;
		if (eat(c, ',')) {
			if (eat(c, ')'))
				break;
			continue;
		}
		if (eat(c, ')')) {
			if (count == 1)
				return -EPROTO;
			break;
		}
		return -EPROTO;
	}
	m->ndim = count > POOLFS_ARRAY_MAX_DIMS ? POOLFS_ARRAY_MAX_DIMS : count;
	return 0;
}

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

/* What parse_dict remembers until the whole header has parsed. */
struct dict_state {
	unsigned seen; /* KEY_* bits of the keys read so far */
	bool unsupported, too_many, big;
};

/* One key and its ':' into *key (a KEY_* bit); numpy requires exactly the three keys, each once. */
static int parse_key(struct cursor *c, struct dict_state *st, unsigned *key)
{
	const char *k;
	size_t kn;
	bool esc;
	int r;

	if ((r = parse_string(c, &k, &kn, &esc)) < 0)
		return r;
	if (!esc && kn == 5 && memcmp(k, "descr", 5) == 0)
		*key = KEY_DESCR;
	else if (!esc && kn == 13 && memcmp(k, "fortran_order", 13) == 0)
		*key = KEY_FORTRAN;
	else if (!esc && kn == 5 && memcmp(k, "shape", 5) == 0)
		*key = KEY_SHAPE;
	else
		return -EPROTO;
	if (st->seen & *key)
		return -EPROTO;
	st->seen |= *key;
	return eat(c, ':') ? 0 : -EPROTO;
}

/* The 'descr' value: a dtype string we know sets m->dtype; a structured dtype (a list) or another
 * string is well-formed but unsupported. */
static int parse_descr(struct cursor *c, struct npy_meta *m, struct dict_state *st)
{
	const char *v;
	size_t vn;
	bool esc;
	int r;

	if (peek(c, '[')) {
		if ((r = skip_value(c, 0)) < 0)
			return r;
		st->unsupported = true;
		return 0;
	}
	if ((r = parse_string(c, &v, &vn, &esc)) < 0)
		return r;
	int d = esc ? -1 : npy_dtype_from_descr(v, vn);
	if (d < 0)
		st->unsupported = true;
	else
		m->dtype = (enum poolfs_dtype)d;
	return 0;
}

/* The 'fortran_order' value: True or False. */
static int parse_fortran(struct cursor *c, struct npy_meta *m)
{
	const char *v;
	size_t vn;
	int r;

	if ((r = parse_word(c, &v, &vn)) < 0)
		return r;
	if (vn == 4 && memcmp(v, "True", 4) == 0)
		m->fortran_order = 1;
	else if (vn == 5 && memcmp(v, "False", 5) == 0)
		m->fortran_order = 0;
	else
		return -EPROTO;
	return 0;
}

/* One "key: value" entry of the dict. */
static int parse_entry(struct cursor *c, struct npy_meta *m, struct dict_state *st)
{
	unsigned key;
	int r;

	if ((r = parse_key(c, st, &key)) < 0)
		return r;
	switch (key) {
	case KEY_DESCR:
		return parse_descr(c, m, st);
	case KEY_FORTRAN:
		return parse_fortran(c, m);
	default:
		return parse_shape(c, m, &st->too_many, &st->big);
	}
}

/* The dict in text[0..len). Syntax errors give -EPROTO at once; "well-formed but unsupported"
 * (-ENOTSUP) and "too large" (-EOVERFLOW) are remembered and reported only once the whole header
 * has parsed, so a broken file is always reported as broken. */
static int parse_dict(const char *text, size_t len, struct npy_meta *m)
{
	struct cursor c = {text, text + len};
	struct dict_state st = {0, false, false, false};
	int r;

	if (!eat(&c, '{'))
		return -EPROTO;
	if (!eat(&c, '}')) {
		for (;;) {
			if ((r = parse_entry(&c, m, &st)) < 0)
				return r;
			if (eat(&c, ',')) {
				if (eat(&c, '}'))
					break;
				continue;
			}
			if (eat(&c, '}'))
				break;
			return -EPROTO;
		}
	}
	skip_ws(&c); /* the padding: spaces and the final newline */
	if (c.p != c.end)
		return -EPROTO;
	if (st.seen != (KEY_DESCR | KEY_FORTRAN | KEY_SHAPE))
		return -EPROTO;
	if (st.unsupported || st.too_many)
		return -ENOTSUP;
	if (st.big)
		return -EOVERFLOW;
	return 0;
}

int npy_header_parse(const void *buf, size_t len, struct npy_meta *m, size_t *data_offset)
{
	int major;
	size_t total;
	int r = npy_preamble_parse(buf, len, &major, &total);
	if (r < 0)
		return r;
	if (total > len)
		return -EPROTO; /* truncated header */
	size_t pre = major == 1 ? 10 : 12;

	struct npy_meta tmp;
	memset(&tmp, 0, sizeof tmp);
	if ((r = parse_dict((const char *)buf + pre, total - pre, &tmp)) < 0)
		return r;
	uint64_t nbytes;
	if ((r = npy_data_size(&tmp, &nbytes)) < 0)
		return r;
	/* The file (header + data) must be addressable as an off_t. */
	if (nbytes > (uint64_t)INT64_MAX - total)
		return -EOVERFLOW;
	*m = tmp;
	*data_offset = total;
	return 0;
}

/* ---- the builder -------------------------------------------------------------------------- */

/* Append printf output to buf[*pos..cap); false when it does not fit. */
static bool append(char *buf, size_t cap, size_t *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static bool append(char *buf, size_t cap, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* ap is started just above: clang-tidy 14 loses sight of va_start when one run checks
	 * several files (llvm/llvm-project#40656), and then flags this call. */
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	int n = vsnprintf(buf + *pos, cap - *pos, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap - *pos)
		return false;
	*pos += (size_t)n;
	return true;
}

ssize_t npy_header_build(const struct npy_meta *m, int major, void *out, size_t cap)
{
	uint64_t nbytes;
	int r = npy_data_size(m, &nbytes);
	if (r < 0)
		return r;
	if (major != 0 && major != 1 && major != 2)
		return -EINVAL;

	/* The dict exactly as numpy writes it (keys sorted, repr of a tuple), so files compare equal. */
	char dict[NPY_HEADER_BUILD_MAX];
	size_t n = 0;
	bool ok = append(dict, sizeof dict, &n, "{'descr': '%s', 'fortran_order': %s, 'shape': (",
			 dtypes[m->dtype].descr, m->fortran_order ? "True" : "False");
	for (int i = 0; ok && i < m->ndim; i++)
		ok = append(dict, sizeof dict, &n, "%s%llu", i ? ", " : "",
			    (unsigned long long)m->shape[i]);
	if (ok)
		ok = append(dict, sizeof dict, &n, "%s), }", m->ndim == 1 ? "," : "");
	if (!ok)
		return -EOVERFLOW; /* cannot happen for ndim <= POOLFS_ARRAY_MAX_DIMS */

	/* dict + at least the final '\n', padded with spaces to the alignment; 1.0 stores the length
	 * in 16 bits, so a longer header needs 2.0 */
	size_t pre = major == 2 ? 12 : 10;
	size_t total = (pre + n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
	if (pre == 10 && total - pre > 65535) {
		if (major == 1)
			return -EOVERFLOW;
		pre = 12;
		total = (pre + n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
	}
	size_t hlen = total - pre;
	/* the same limit the parser applies: the whole file must be addressable as an off_t */
	if (nbytes > (uint64_t)INT64_MAX - total)
		return -EOVERFLOW;
	if (total > cap)
		return -ERANGE;

	unsigned char *b = out;
	memcpy(b, npy_magic, sizeof npy_magic);
	b[6] = pre == 10 ? 1 : 2;
	b[7] = 0;
	b[8] = (unsigned char)(hlen & 0xff);
	b[9] = (unsigned char)(hlen >> 8 & 0xff);
	if (pre == 12) {
		b[10] = (unsigned char)(hlen >> 16 & 0xff);
		b[11] = (unsigned char)(hlen >> 24 & 0xff);
	}
	memcpy(b + pre, dict, n);
	memset(b + pre + n, ' ', total - pre - n - 1);
	b[total - 1] = '\n';
	return (ssize_t)total;
}
