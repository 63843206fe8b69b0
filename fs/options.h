/* options: the pool's own mount options (docs/interface.md), parsed and validated, pure.
 *
 * main.c hands every `-o` item to options_apply(); items that are not ours go on to FUSE. */
#ifndef POOLFS_OPTIONS_H
#define POOLFS_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

enum datapath_choice { DATAPATH_AUTO, DATAPATH_PASSTHROUGH, DATAPATH_PAGECACHE };
enum autohold_choice { AUTOHOLD_NONE, AUTOHOLD_PROCESS, AUTOHOLD_SESSION, AUTOHOLD_CGROUP };
enum uring_choice { URING_AUTO, URING_ON, URING_OFF }; /* FUSE over io_uring (fs/transport.h) */
/* tmpfs huge= of the private backing instance (the values tmpfs itself takes). */
enum huge_choice { HUGE_NEVER, HUGE_WITHIN_SIZE, HUGE_ALWAYS, HUGE_ADVISE };

/* Defaults that bound what one user can make the daemon hold in memory (docs/interface.md,
 * "Limits"): a million entries is far beyond any job's scratch tree, and 64 MiB of xattrs and
 * hold records is ample for labels and holds while keeping a hostile user's share small. */
#define OPTIONS_DEFAULT_MAX_USER_ENTRIES ((uint64_t)1 << 20)
#define OPTIONS_DEFAULT_MAX_USER_META ((uint64_t)64 << 20)

struct pool_options {
	char backing[4096];
	bool backing_given;    /* backing= was given: no private tmpfs instance (unless max_size) */
	enum huge_choice huge; /* default within_size */
	bool huge_given;
	enum datapath_choice datapath;
	enum autohold_choice autohold;
	uint64_t linger_ms;
	uint64_t max_size;	   /* bytes, 0 = unlimited */
	uint64_t max_user_size;	   /* bytes, 0 = unlimited */
	uint64_t max_user_entries; /* files and folders per user, 0 = unlimited */
	uint64_t max_user_meta;	   /* daemon memory per user for xattrs and holds, 0 = unlimited */
	enum uring_choice uring;
	bool root_exempt;
	bool allow_other; /* seen on its way to FUSE: decides how long the kernel may cache */
	bool allow_root;  /* likewise: root, a second user, may enter a plain user's pool */
};

void options_init(struct pool_options *o);

/* Apply one `key[=value]` item. Returns 1 if the item was ours and applied, 0 if it is not ours
 * (pass it to FUSE), or a negative errno (-EINVAL: bad value, -ENAMETOOLONG: path too long);
 * `why` (if not NULL) then gets a static message naming the problem. */
int options_apply(struct pool_options *o, const char *item, const char **why);

/* Whether users other than the one who mounted can enter the pool (allow_other or allow_root):
 * then the kernel checks modes itself (default_permissions) and the shared root's names are not
 * cached (docs/design.md, "Where the kernel checks and where the daemon checks"). */
bool options_multi_user(const struct pool_options *o);

/* "64M" -> 67108864; k/M/G/T are powers of 1024. 0 or -EINVAL / -ERANGE. */
int options_parse_size(const char *text, uint64_t *out);

/* "1.5" -> 1500 ms. 0 or -EINVAL / -ERANGE. */
int options_parse_seconds(const char *text, uint64_t *out_ms);

const char *options_datapath_name(enum datapath_choice d);
const char *options_autohold_name(enum autohold_choice a);
const char *options_uring_name(enum uring_choice u);
const char *options_huge_name(enum huge_choice h);

#endif
