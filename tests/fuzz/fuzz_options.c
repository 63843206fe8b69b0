/* Fuzz target: options_apply() (fs/options.c) over a whole -o string, split into items the way
 * libfuse's fuse_opt does for a comma-separated option group ("\," is a literal comma, "\NNN" an
 * octal byte, "\x" the character x), each item applied in order as main.c does.
 *
 * Oracles, after every item: the answer is 1 (ours), 0 (not ours: then nothing but allow_other
 * and allow_root may change) or a negative errno with a message in *why, and then the options are
 * untouched; the options stay valid (backing absolute and NUL-terminated, enums in range, names
 * known); and an applied size or linger value is exactly what options_parse_size() /
 * options_parse_seconds() make of the value text. */
#include <errno.h>

#include "fuzz.h"
#include "options.h"

static void check_valid(const struct pool_options *o)
{
	FUZZ_CHECK(memchr(o->backing, '\0', sizeof(o->backing)) != NULL);
	FUZZ_CHECK(o->backing[0] == '/');
	FUZZ_CHECK(o->datapath >= DATAPATH_AUTO && o->datapath <= DATAPATH_PAGECACHE);
	FUZZ_CHECK(o->autohold >= AUTOHOLD_NONE && o->autohold <= AUTOHOLD_CGROUP);
	FUZZ_CHECK(options_datapath_name(o->datapath) != NULL);
	FUZZ_CHECK(options_autohold_name(o->autohold) != NULL);
	FUZZ_CHECK(o->uring >= URING_AUTO && o->uring <= URING_OFF);
	FUZZ_CHECK(options_uring_name(o->uring) != NULL);
	FUZZ_CHECK(o->root_exempt == 0 || o->root_exempt == 1);
	FUZZ_CHECK(o->allow_other == 0 || o->allow_other == 1);
	FUZZ_CHECK(o->allow_root == 0 || o->allow_root == 1);
}

/* The value of a size or linger item as applied must be what the parser alone makes of it. */
static void check_applied_value(const struct pool_options *o, const char *item)
{
	static const char *const size_keys[] = {
		"max_size=", "max_user_size=", "max_user_entries=", "max_user_meta="};
	const uint64_t fields[] = {o->max_size, o->max_user_size, o->max_user_entries,
				   o->max_user_meta};
	uint64_t v;

	for (int i = 0; i < 4; i++) {
		size_t n = strlen(size_keys[i]);
		if (strncmp(item, size_keys[i], n) == 0) {
			FUZZ_CHECK(options_parse_size(item + n, &v) == 0);
			FUZZ_CHECK(v == fields[i]);
		}
	}
	if (strncmp(item, "linger=", 7) == 0) {
		FUZZ_CHECK(options_parse_seconds(item + 7, &v) == 0);
		FUZZ_CHECK(v == o->linger_ms);
	}
}

static int same_options(const struct pool_options *a, const struct pool_options *b)
{
	return strcmp(a->backing, b->backing) == 0 && a->datapath == b->datapath &&
	       a->autohold == b->autohold && a->linger_ms == b->linger_ms &&
	       a->max_size == b->max_size && a->max_user_size == b->max_user_size &&
	       a->max_user_entries == b->max_user_entries && a->max_user_meta == b->max_user_meta &&
	       a->root_exempt == b->root_exempt && a->allow_other == b->allow_other &&
	       a->allow_root == b->allow_root && a->uring == b->uring;
}

static void apply_item(struct pool_options *o, const char *item)
{
	struct pool_options before = *o;
	const char *why = NULL;
	int r = options_apply(o, item, &why);

	FUZZ_CHECK(r == 1 || r == 0 || r == -EINVAL || r == -ENAMETOOLONG || r == -ERANGE);
	if (r < 0) {
		FUZZ_CHECK(why != NULL && why[0] != '\0');
		FUZZ_CHECK(same_options(&before, o));
	} else if (r == 0) {
		before.allow_other = o->allow_other;
		before.allow_root = o->allow_root;
		FUZZ_CHECK(same_options(&before, o));
	} else {
		check_applied_value(o, item);
	}
	/* the same item again answers the same, with or without somewhere for the message */
	struct pool_options again = before;
	FUZZ_CHECK(options_apply(&again, item, NULL) == r);
	check_valid(o);
}

/* Split src[0..size) at unescaped commas into items, as fuse_opt does, applying each. */
static void apply_group(struct pool_options *o, const uint8_t *src, size_t size)
{
	char *item = malloc(size + 1);
	size_t d = 0;

	FUZZ_CHECK(item != NULL);
	for (size_t s = 0; s <= size; s++) {
		if (s == size || src[s] == ',' || src[s] == '\0') {
			item[d] = '\0';
			apply_item(o, item);
			d = 0;
			if (s < size && src[s] == '\0')
				break; /* argv's C string would have ended here */
			continue;
		}
		if (src[s] == '\\' && s + 1 < size) {
			s++;
			if (s + 2 < size && src[s] >= '0' && src[s] <= '3' && src[s + 1] >= '0' &&
			    src[s + 1] <= '7' && src[s + 2] >= '0' && src[s + 2] <= '7') {
				item[d++] = (char)((src[s] - '0') * 64 + (src[s + 1] - '0') * 8 +
						   (src[s + 2] - '0'));
				s += 2;
				continue;
			}
		}
		item[d++] = (char)src[s];
	}
	free(item);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pool_options o;

	options_init(&o);
	check_valid(&o);
	apply_group(&o, data, size);
	return 0;
}
